"""Read and write the neutral model as an XML file (``*.mbs.xml``).

The format is the MSTMMSim style of ``design.md``, extended to the whole mechanism and described,
with every unit, by ``resources/multibody.xsd`` (:data:`SCHEMA_PATH`)::

    <MultibodySystem Name="..." FormatVersion="1">
      <Description/>? <Gravity/>? <Ground/>* <RigidBody/>* <Hinge/>* <Force/>* <Contact/>*
      <Coupler/>* <Simulation/>?
    </MultibodySystem>

Reading collects every problem of a file at once: XML syntax, then every schema violation, then a
tolerant read of whatever parses and the semantic check of ``validation``; each problem names the
element (``Hinge 'J1'``), the field (``Type``) and the line. Writing never checks: it writes any
model, so that broken files can be produced on purpose.

Numbers are written as the shortest text that reads back to the same float, with a trailing
``.0`` dropped (``7900``, ``0.01185``, ``-7.9e-07``), so write-read-write is byte-identical.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional, Union

import numpy as np
from lxml import etree

from .mechanism import (FORMAT_VERSION, Contact, ContactShape, CoordinateRef, Coupler, Driver,
                        Force, Frame, Ground, Hinge, Marker, MarkerRef, Motor, MultibodySystem,
                        RigidBody, Simulation)
from .problems import ModelError, Problem
from .files import write_bytes
from .validation import validate

SCHEMA_PATH = Path(__file__).resolve().parent.parent.parent / "resources" / "multibody.xsd"

ROOT = "MultibodySystem"
_XS = "{http://www.w3.org/2001/XMLSchema}"

#: XML element of each optional per-coordinate Hinge vector, in file order.
HINGE_VECTORS = (("initial_coordinates", "InitialCoordinates"), ("initial_rates", "InitialRates"),
                 ("initial_angular_velocity", "InitialAngularVelocity"),
                 ("stiffness", "Stiffness"), ("damping", "Damping"),
                 ("spring_reference", "SpringReference"), ("lower_limits", "LowerLimits"),
                 ("upper_limits", "UpperLimits"), ("stop_stiffness", "StopStiffness"),
                 ("stop_restitution", "StopRestitution"),
                 ("stop_impact_speed", "StopImpactSpeed"))
#: XML element of each Simulation field, in file order.
SIMULATION_FIELDS = (("end_time", "EndTime"), ("step", "Step"), ("output_step", "OutputStep"),
                     ("method", "Method"), ("integrator", "Integrator"),
                     ("relative_tolerance", "RelativeTolerance"),
                     ("absolute_tolerance", "AbsoluteTolerance"))
#: XML element of each scalar Force field, in file order (after Direction and Magnitude).
FORCE_NUMBERS = (("stiffness", "Stiffness"), ("damping", "Damping"), ("free_length", "FreeLength"))
#: XML element of each Contact law field, in file order (after the markers and shapes).
CONTACT_NUMBERS = (("stiffness", "Stiffness"), ("exponent", "Exponent"),
                   ("restitution", "Restitution"), ("impact_speed", "ImpactSpeed"),
                   ("static_friction", "StaticFriction"), ("dynamic_friction", "DynamicFriction"),
                   ("stiction_velocity", "StictionVelocity"))

Source = Union[str, bytes, Path]


@functools.lru_cache(maxsize=None)
def schema() -> etree.XMLSchema:
    """The compiled schema of :data:`SCHEMA_PATH` (cached)."""
    return etree.XMLSchema(etree.parse(str(SCHEMA_PATH)))


# --------------------------------------------------------------------------------------------------
# Numbers
# --------------------------------------------------------------------------------------------------

def format_number(x) -> str:
    """Shortest round-trip text of a float, without a trailing ``.0`` (7900.0 -> ``7900``)."""
    s = repr(float(x))
    return s[:-2] if s.endswith(".0") else s


def format_vector(values) -> str:
    """Numbers separated by ``", "``."""
    return ", ".join(format_number(v) for v in np.asarray(values, dtype=float).reshape(-1))


def _parse_numbers(text) -> Optional[list[float]]:
    """The numbers of a comma-separated list (empty text: []), or None if one is not a number."""
    if text is None or not text.strip():
        return []
    try:
        return [float(t) for t in text.split(",")]
    except ValueError:
        return None


# --------------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------------

def _sub(parent, tag, text=None, **attrib):
    el = etree.SubElement(parent, tag, {k: v for k, v in attrib.items() if v is not None})
    if text is not None:
        el.text = text
    return el


def _id_text(value) -> str:
    return str(int(value)) if isinstance(value, (int, np.integer)) else str(value)


def _label(obj) -> Optional[str]:
    return obj.label or None


def _write_marker_ref(parent, tag, ref: Optional[MarkerRef]):
    if ref is not None:
        _sub(parent, tag, Body=str(ref.body), Marker=_id_text(ref.marker))


def _write_part(el, part):
    _sub(el, "AbsolutePosition", format_vector(part.position))
    _sub(el, "AbsoluteOrientation", format_vector(part.orientation))
    for m in part.markers:
        mel = _sub(el, "Marker", ID=_id_text(m.id), Label=_label(m))
        _sub(mel, "Position", format_vector(m.frame.position))
        _sub(mel, "Orientation", format_vector(m.frame.orientation))


def _write_body(root, b: RigidBody):
    el = _sub(root, "RigidBody", Name=b.name, ID=_id_text(b.id), Label=_label(b))
    _write_part(el, b)
    mc = _sub(el, "MassCenter")
    _sub(mc, "Position", format_vector(b.mass_center.position))
    _sub(mc, "Orientation", format_vector(b.mass_center.orientation))
    if b.density is not None:
        _sub(el, "Density", format_number(b.density))
    _sub(el, "Mass", format_number(b.mass))
    _sub(el, "JI", format_vector(b.inertia))
    if b.initial_velocity is not None:
        _sub(el, "InitialVelocity", format_vector(b.initial_velocity))
    if b.initial_angular_velocity is not None:
        _sub(el, "InitialAngularVelocity", format_vector(b.initial_angular_velocity))


def _write_hinge(root, h: Hinge):
    el = _sub(root, "Hinge", Name=h.name, ID=_id_text(h.id), Type=h.type, Label=_label(h),
              SpringReferenceFrom="start" if h.spring_reference_start else None)
    _write_marker_ref(el, "Input", h.input)
    _write_marker_ref(el, "Output", h.output)
    for attr, tag in HINGE_VECTORS:
        v = getattr(h, attr)
        if v is not None:
            estimate = getattr(h, f"{attr}_estimate", False)
            _sub(el, tag, format_vector(v), Estimate="true" if estimate else None)
    for d in h.drivers:
        if d.from_start:
            _sub(el, "Driver", d.expression, Coordinate=d.coordinate, From="start")
        else:
            _sub(el, "Driver", d.expression, Coordinate=d.coordinate)
    for mo in h.motors:
        attrib = dict(Coordinate=mo.coordinate, Speed=format_number(mo.speed))
        if mo.ramp_time:
            attrib["RampTime"] = format_number(mo.ramp_time)
        _sub(el, "Motor", **attrib)


def _write_force(root, f: Force):
    """Write the fields the type uses (every non-default field for an unknown type)."""
    el = _sub(root, "Force", Name=f.name, Type=f.type, Label=_label(f))
    _write_marker_ref(el, "Input", f.input)
    _write_marker_ref(el, "Output", f.output)
    kind = f.kind
    uses = (lambda name: name in kind.fields) if kind else (lambda name: True)
    if f.direction is not None and uses("direction"):
        _sub(el, "Direction", format_vector(f.direction), Frame=f.frame)
    if f.magnitude != "0" and uses("magnitude"):
        _sub(el, "Magnitude", f.magnitude)
    for attr, tag in FORCE_NUMBERS:
        v = getattr(f, attr)
        if v is not None and (uses(attr) if kind else v != 0.0):
            _sub(el, tag, format_number(v))
    # the law's own parameters (its registry rows), those given, in the rows' order
    for p in (kind.params if kind else ()):
        if p.attr in f.params:
            v = f.params[p.attr]
            _sub(el, p.tag, format_number(v) if np.ndim(v) == 0 else format_vector(v))


def _write_shape(el, tag, shape: ContactShape, folder=None):
    attrib = dict(Type=shape.type)
    if shape.type in ("sphere", "cylinder", "cone", "torus"):
        attrib["Radius"] = format_number(shape.radius)
    if shape.type in ("cone", "torus"):
        attrib["Radius2"] = format_number(shape.radius2)
    if shape.type in ("cylinder", "cone"):
        attrib["Length"] = format_number(shape.length)
    if shape.size is not None:
        attrib["Size"] = format_vector(shape.size)
    if shape.file:
        # the mesh file, relative to the folder the model is written to (absolute without one)
        path = shape.file
        if folder is not None:
            try:
                path = os.path.relpath(shape.file, folder)
            except ValueError:
                pass
        attrib["File"] = path
        if shape.unit != "m":
            attrib["Unit"] = shape.unit
    elif shape.points is not None:
        attrib["Points"] = format_vector(shape.points)
    _sub(el, tag, **attrib)


def _write_contact(root, c: Contact, folder=None):
    el = _sub(root, "Contact", Name=c.name, Label=_label(c))
    _write_marker_ref(el, "Input", c.input)
    _write_shape(el, "InputShape", c.input_shape, folder)
    _write_marker_ref(el, "Output", c.output)
    _write_shape(el, "OutputShape", c.output_shape, folder)
    for attr, tag in CONTACT_NUMBERS:
        v = getattr(c, attr)
        if v is not None:
            _sub(el, tag, format_number(v))


def _write_coupler(root, c: Coupler):
    el = _sub(root, "Coupler", Name=c.name, Type=c.type, Label=_label(c))
    for tag, ref in (("First", c.first), ("Second", c.second)):
        if ref is not None:
            _sub(el, tag, Hinge=ref.hinge, Coordinate=ref.coordinate)
    if c.ratio is not None:
        _sub(el, "Ratio", format_number(c.ratio))
    if c.pitch_radius is not None:
        _sub(el, "PitchRadius", format_number(c.pitch_radius))
    if c.coefficients is not None:
        _sub(el, "Coefficients", format_vector(c.coefficients))


def _write_simulation(root, s: Simulation):
    el = _sub(root, "Simulation")
    for attr, tag in SIMULATION_FIELDS:
        v = getattr(s, attr)
        _sub(el, tag, v if isinstance(v, str) else format_number(v))


def to_element(model: MultibodySystem, folder=None) -> etree._Element:
    """The ``<MultibodySystem>`` element of a model (no check: any model can be written).
    ``folder``: where the file goes (mesh files are written relative to it; None: absolute)."""
    root = etree.Element(ROOT, Name=model.name, FormatVersion=str(FORMAT_VERSION))
    if model.description:
        _sub(root, "Description", model.description)
    _sub(root, "Gravity", format_vector(model.gravity))
    for g in model.grounds:
        _write_part(_sub(root, "Ground", Name=g.name, Label=_label(g)), g)
    for b in model.bodies:
        _write_body(root, b)
    for h in model.hinges:
        _write_hinge(root, h)
    for f in model.forces:
        _write_force(root, f)
    for c in model.contacts:
        _write_contact(root, c, folder)
    for c in model.couplers:
        _write_coupler(root, c)
    if model.simulation is not None:
        _write_simulation(root, model.simulation)
    return root


def to_bytes(model: MultibodySystem, folder=None) -> bytes:
    """The file contents: UTF-8, XML declaration, 2-space indentation (``folder``: see
    :func:`to_element`)."""
    return etree.tostring(to_element(model, folder), pretty_print=True, xml_declaration=True,
                          encoding="UTF-8")


def to_string(model: MultibodySystem) -> str:
    """The file contents as text."""
    return to_bytes(model).decode("utf-8")


def write(model: MultibodySystem, path) -> None:
    """Write ``model`` to ``path`` (no check; mesh files referred to relative to its folder)."""
    write_bytes(path, to_bytes(model, Path(path).resolve().parent))


# --------------------------------------------------------------------------------------------------
# Tolerant reading: whatever does not parse keeps the model's default (the schema reported it)
# --------------------------------------------------------------------------------------------------

def _first_children(el) -> dict:
    """The first child element of each tag, by tag: read once, looked up many times (a hinge
    has some twenty optional children)."""
    kids = {}
    for c in el.iterchildren(etree.Element):
        kids.setdefault(c.tag, c)
    return kids


def _child(el, tag):
    """The first child ``tag`` of an element, or of :func:`_first_children`'s dict; or None."""
    if isinstance(el, dict):
        return el.get(tag)
    for c in el.iterchildren(tag):      # twice as fast as find
        return c
    return None


def _child_text(el, tag) -> Optional[str]:
    c = _child(el, tag)
    return None if c is None else (c.text or "")


def _vector(el, tag, default=None):
    """The numbers of child ``tag``, however many, or ``default`` if absent or not numbers.

    A list of the wrong length is kept as it is: the semantic check reports it, and the model
    writes back to the same file.
    """
    text = _child_text(el, tag)
    values = None if text is None else _parse_numbers(text)
    return default if values is None else np.array(values, dtype=float)


def _float(text, default=float("nan")) -> float:
    """An attribute's number (the schema checked its form), ``default`` when absent."""
    if text is None:
        return default
    try:
        return float(text)
    except ValueError:
        return float("nan")


def _number(el, tag, default=None):
    v = _vector(el, tag)
    return default if v is None or v.size != 1 else float(v[0])


def _int(text, default: Optional[int] = 0) -> Optional[int]:
    try:
        return int(text)
    except (TypeError, ValueError):
        return default


def _read_marker_ref(el, tag) -> Optional[MarkerRef]:
    """The reference in child ``tag``; None when there is none (the check reports it)."""
    c = _child(el, tag)
    return None if c is None else MarkerRef(c.get("Body", ""), _int(c.get("Marker")))


def _read_part(el, part, kids=None):
    kids = _first_children(el) if kids is None else kids
    part.position = _vector(kids, "AbsolutePosition", np.zeros(3))
    part.orientation = _vector(kids, "AbsoluteOrientation", np.zeros(3))
    for m in el.findall("Marker"):
        frame = Frame(_vector(m, "Position", np.zeros(3)), _vector(m, "Orientation", np.zeros(3)))
        part.markers.append(Marker(_int(m.get("ID")), frame, m.get("Label", "")))
    return part


def _read_body(el) -> RigidBody:
    kids = _first_children(el)
    b = _read_part(el, RigidBody(el.get("Name", ""), label=el.get("Label", ""),
                                 id=_int(el.get("ID"))), kids)
    mc = kids.get("MassCenter")
    if mc is not None:
        b.mass_center = Frame(_vector(mc, "Position", np.zeros(3)),
                              _vector(mc, "Orientation", np.zeros(3)))
    b.density = _number(kids, "Density")
    b.mass = _number(kids, "Mass", _BODY_DEFAULTS.mass)
    b.inertia = _vector(kids, "JI", _BODY_DEFAULTS.inertia.copy())
    b.initial_velocity = _vector(kids, "InitialVelocity")
    b.initial_angular_velocity = _vector(kids, "InitialAngularVelocity")
    return b


#: A body's defaults (mass, inertia) for elements that lack them.
_BODY_DEFAULTS = RigidBody("")


def _read_hinge(el) -> Hinge:
    kids = _first_children(el)
    h = Hinge(el.get("Name", ""), _int(el.get("ID")), el.get("Type", ""),
              _read_marker_ref(kids, "Input"), _read_marker_ref(kids, "Output"),
              label=el.get("Label", ""))
    for attr, tag in HINGE_VECTORS:
        setattr(h, attr, _vector(kids, tag, None))
    for attr, tag in HINGE_VECTORS[:2]:
        child = kids.get(tag)
        setattr(h, f"{attr}_estimate",
                child is not None and child.get("Estimate") in ("true", "1"))
    h.drivers = [Driver(d.get("Coordinate", ""), d.text or "", d.get("From") == "start")
                 for d in el.findall("Driver")]
    h.motors = [Motor(m.get("Coordinate", ""), _float(m.get("Speed")), _float(m.get("RampTime"), 0.0))
                for m in el.findall("Motor")]
    h.spring_reference_start = el.get("SpringReferenceFrom") == "start"
    return h


def _read_force(el) -> Force:
    f = Force(el.get("Name", ""), el.get("Type", ""), _read_marker_ref(el, "Input"),
              _read_marker_ref(el, "Output"), label=el.get("Label", ""))
    f.direction = _vector(el, "Direction")
    d = el.find("Direction")
    if d is not None:
        f.frame = d.get("Frame", "global")
    magnitude = _child_text(el, "Magnitude")
    if magnitude is not None:
        f.magnitude = magnitude
    for attr, tag in FORCE_NUMBERS:
        setattr(f, attr, _number(el, tag, getattr(f, attr)))
    kind = f.kind
    for p in (kind.params if kind else ()):
        v = _vector(el, p.tag)          # of the wrong length: kept, for the check to report
        if v is not None:
            f.params[p.attr] = float(v[0]) if p.size == 1 and v.size == 1 else v
    return f


def _read_shape(el, tag, folder=None) -> ContactShape:
    c = _child(el, tag)
    if c is None:
        return ContactShape("")
    size, points = c.get("Size"), c.get("Points")
    values = None if size is None else _parse_numbers(size)
    coords = None if points is None else _parse_numbers(points)
    shape = ContactShape(c.get("Type", ""), _float(c.get("Radius"), 0.0),
                         _float(c.get("Length"), 0.0),
                         None if size is None else np.array(values if values is not None
                                                            else [np.nan], dtype=float),
                         None if points is None else np.array(coords if coords is not None
                                                              else [np.nan], dtype=float))
    shape.radius2 = _float(c.get("Radius2"), 0.0)
    name = c.get("File")
    if name is not None:
        from .meshfile import read_points
        shape.unit = c.get("Unit", "m")
        if not os.path.isabs(name) and folder is None:
            shape.file = name
            shape.file_error = (f"File {name!r}: a mesh file is found relative to the model "
                                "file, and this model was not read from a file")
        else:
            shape.file = os.path.normpath(os.path.join(folder or "", name))
            try:
                shape.points = read_points(shape.file, shape.unit)
            except ValueError as exc:
                shape.file_error = f"File {name!r}: {exc}"
    return shape


def _read_contact(el, folder=None) -> Contact:
    c = Contact(el.get("Name", ""), _read_marker_ref(el, "Input"), _read_marker_ref(el, "Output"),
                _read_shape(el, "InputShape", folder), _read_shape(el, "OutputShape", folder),
                label=el.get("Label", ""))
    for attr, tag in CONTACT_NUMBERS:
        setattr(c, attr, _number(el, tag, getattr(c, attr)))
    return c


def _read_coupler(el) -> Coupler:
    refs = []
    for tag in ("First", "Second"):
        r = _child(el, tag)
        refs.append(None if r is None else CoordinateRef(r.get("Hinge", ""),
                                                         r.get("Coordinate", "")))
    c = Coupler(el.get("Name", ""), el.get("Type", ""), *refs, label=el.get("Label", ""))
    c.ratio = _number(el, "Ratio")
    c.pitch_radius = _number(el, "PitchRadius")
    c.coefficients = _vector(el, "Coefficients")
    return c


def _read_simulation(el) -> Simulation:
    s = Simulation()
    for attr, tag in SIMULATION_FIELDS:
        if isinstance(getattr(s, attr), str):
            text = _child_text(el, tag)
            if text is not None:
                setattr(s, attr, text)
        else:
            setattr(s, attr, _number(el, tag, getattr(s, attr)))
    return s


def from_element(root, folder=None) -> MultibodySystem:
    """The model of a ``<MultibodySystem>`` element, reading whatever parses (no check).
    ``folder``: the model file's folder (where mesh files named relative to it are)."""
    model = MultibodySystem(root.get("Name", ""))
    model.description = _child_text(root, "Description") or ""
    model.gravity = _vector(root, "Gravity", np.zeros(3))
    model.grounds = [_read_part(g, Ground(g.get("Name", ""), label=g.get("Label", "")))
                     for g in root.findall("Ground")]
    model.bodies = [_read_body(b) for b in root.findall("RigidBody")]
    model.hinges = [_read_hinge(h) for h in root.findall("Hinge")]
    model.forces = [_read_force(f) for f in root.findall("Force")]
    model.contacts = [_read_contact(c, folder) for c in root.findall("Contact")]
    model.couplers = [_read_coupler(c) for c in root.findall("Coupler")]
    sim = root.find("Simulation")
    if sim is not None:
        model.simulation = _read_simulation(sim)
    return model


# --------------------------------------------------------------------------------------------------
# What the schema declares, for readable messages
# --------------------------------------------------------------------------------------------------

@dataclass
class _Decl:
    """An element declaration of the schema: children (tag, minOccurs, maxOccurs), attributes."""

    children: list
    attributes: dict          # name -> type
    type: Optional[str]       # simple type of the content (text), if any


#: How a simple type's values are described in messages ("'x' is not ...").
_TYPE_PHRASES = {
    "Number": "a number",
    "Vector3": "3 numbers separated by commas (e.g. 0, 0, -9.81)",
    "Vector6": "6 numbers separated by commas",
    "NumberList": "a list of numbers separated by commas",
    "LimitList": "a list of numbers (inf, -inf allowed) separated by commas",
    "xs:positiveInteger": "a positive integer (1, 2, 3, ...)",
    "HingeTypeName": "a hinge type",
    "ForceTypeName": "a force type",
    "ShapeTypeName": "a contact shape",
    "CouplerTypeName": "a coupler type",
    "CoordinateName": "a hinge coordinate",
    "DirectionFrame": "a direction frame",
    "MethodName": "a solution method",
    "IntegratorName": "an integrator",
}


@dataclass
class _SchemaInfo:
    decls: dict               # (parent tag or None, tag) -> _Decl
    enumerations: dict        # simple type name -> tuple of values

    def decl(self, el) -> Optional[_Decl]:
        parent = el.getparent()
        return self.decls.get((None if parent is None else parent.tag, el.tag))


@functools.lru_cache(maxsize=None)
def schema_info() -> _SchemaInfo:
    """The element declarations and enumerations of the schema."""
    xsd = etree.parse(str(SCHEMA_PATH)).getroot()
    named = {t.get("name"): t for t in xsd.findall(f"{_XS}complexType")}
    enums = {t.get("name"): tuple(e.get("value") for e in t.iter(f"{_XS}enumeration"))
             for t in xsd.findall(f"{_XS}simpleType")}
    decls = {}

    def walk(xs_el, parent_tag):
        tag = xs_el.get("name")
        ct = xs_el.find(f"{_XS}complexType")
        if ct is None:
            ct = named.get(xs_el.get("type"))
        if ct is None:
            decls[(parent_tag, tag)] = _Decl([], {}, xs_el.get("type"))
            return
        ext = ct.find(f"{_XS}simpleContent/{_XS}extension")
        attrs = ct.findall(f"{_XS}attribute")
        if ext is not None:
            attrs += ext.findall(f"{_XS}attribute")
        children = ct.findall(f"{_XS}sequence/{_XS}element")
        decls[(parent_tag, tag)] = _Decl(
            [(c.get("name"), int(c.get("minOccurs", "1")), c.get("maxOccurs", "1"))
             for c in children],
            {a.get("name"): a.get("type") for a in attrs},
            None if ext is None else ext.get("base"))
        for c in children:
            walk(c, tag)

    for top in xsd.findall(f"{_XS}element"):
        walk(top, None)
    return _SchemaInfo(decls, enums)


# --------------------------------------------------------------------------------------------------
# Problems: where they are, schema messages in words, merging with the semantic check
# --------------------------------------------------------------------------------------------------

_NAMED = ("Ground", "RigidBody", "Hinge", "Force", "Contact", "Coupler")


def _component(el, attr=None) -> str:
    """A path step: ``Marker 2`` names the marker by its ID (unless the ID is what is wrong)."""
    if el.tag == "Marker" and attr != "ID" and (el.get("ID") or "").isdigit():
        return f"Marker {el.get('ID')}"
    return el.tag


def _where(node, attr=None) -> tuple[str, list[str]]:
    """Problem element (``Hinge 'J1'``) and field path (``["Input"]``) of a document node."""
    chain = [node] + list(node.iterancestors())        # node ... root
    if len(chain) == 1:
        return ROOT, []
    owner = chain[-2]
    inner = [_component(e, attr if e is node else None) for e in reversed(chain[:-2])]
    if owner.tag in _NAMED:
        return f"{owner.tag} '{owner.get('Name', '')}'", inner
    if owner.tag == "Simulation":
        return "Simulation", inner
    return ROOT, [owner.tag] + inner


def _names(text: str) -> list[str]:
    m = re.search(r"Expected is (?:one of )?\( (.*?) \)", text)
    return [n.strip() for n in m.group(1).split(",")] if m else []


def _listing(names) -> str:
    return ", ".join(f"<{n}>" for n in names)


def _value_message(value, type_name, info: _SchemaInfo) -> str:
    phrase = _TYPE_PHRASES.get(type_name, f"a valid {type_name}")
    value = _echo(str(value), 60)
    if type_name in info.enumerations and info.enumerations[type_name]:
        return f"'{value}' is not {phrase}; use one of {', '.join(info.enumerations[type_name])}"
    return f"'{value}' is not {phrase}"


def _error_node(entry, doc):
    """The element a schema error is about: by its path, or (a path with namespace prefixes
    that XPath cannot resolve) the element of that name on the error's line."""
    try:
        found = doc.xpath(entry.path) if entry.path else []
    except etree.XPathError:
        last = re.sub(r"\[\d+\]$", "", (entry.path or "").rsplit("/", 1)[-1])
        prefix, _, local = last.rpartition(":")
        on_line = [e for e in doc.iter(etree.Element) if e.sourceline == entry.line]
        named = [e for e in on_line
                 if etree.QName(e).localname == local and (e.prefix or "") == prefix]
        found = named or on_line
    return found[0] if found and isinstance(found[0], etree._Element) else None


def _schema_problem(entry, doc, info: _SchemaInfo) -> Problem:
    """One lxml schema error as a Problem naming element, field and line."""
    text = entry.message
    node = _error_node(entry, doc)
    if node is not None and node.getparent() is None and node.tag != ROOT:
        return Problem(ROOT, "root element", f"the root element is <{node.tag}>; a model file "
                                             f"starts with <{ROOT}> (in no namespace)", entry.line)
    if node is None or "No matching global declaration" in text:
        tag = node.tag if node is not None else "?"
        return Problem(ROOT, "root element", f"the root element is <{tag}>; a model file starts "
                                             f"with <{ROOT}>", entry.line)
    attr_match = re.search(r"[Aa]ttribute '([^']*)'", text)
    attr = attr_match.group(1) if attr_match else None
    decl = info.decl(node)
    element, path = _where(node, attr)

    if attr and "is not allowed" in text:
        allowed = list(decl.attributes) if decl else []
        field = attr
        message = (f"attribute {attr} is not allowed here (allowed: {', '.join(allowed)})"
                   if allowed else f"attribute {attr} is not allowed: <{node.tag}> takes none")
    elif attr and "required but missing" in text:
        field, message = attr, f"required attribute {attr} is missing"
    elif attr:
        type_name = decl.attributes.get(attr) if decl else None
        field, message = attr, _value_message(node.get(attr), type_name, info)
    elif "Missing child element" in text:
        expected = _names(text)
        required = [n for n, lo, _ in (decl.children if decl else []) if lo > 0 and n in expected]
        missing = (required or expected or ["?"])[0]
        field, message = missing, f"element <{missing}> is missing"
    elif "This element is not expected" in text:
        parent = node.getparent()
        element, path = _where(parent)
        pdecl = info.decl(parent)
        allowed = [n for n, _, _ in pdecl.children] if pdecl else []
        present = [c.tag for c in parent if isinstance(c.tag, str)]
        expected = _names(text)
        missing = [n for n, lo, _ in (pdecl.children if pdecl else [])
                   if lo > 0 and n in expected and n not in present]
        maxima = {n: hi for n, _, hi in (pdecl.children if pdecl else [])}
        if node.tag not in allowed:
            field = node.tag
            message = f"<{node.tag}> is not an element of <{parent.tag}>"
            if expected:
                message += f" (expected here: {_listing(expected)})"
        elif missing:
            field, message = missing[0], f"element <{missing[0]}> is missing (found <{node.tag}>)"
        elif maxima.get(node.tag) == "1" and present.count(node.tag) > 1:
            field, message = node.tag, f"<{node.tag}> appears more than once"
        else:
            field = node.tag
            message = f"<{node.tag}> is out of order; the order is {_listing(allowed)}"
    elif "Character content" in text:
        field, message = "text", f"text is not allowed directly in <{node.tag}>"
    elif "Element content is not allowed" in text:
        field, message = None, f"<{node.tag}> holds a value, not elements"
    elif decl is not None and decl.type is not None:
        field, message = None, _value_message((node.text or "").strip(), decl.type, info)
    else:
        field, message = None, re.sub(r"^Element '[^']*'(, attribute '[^']*')?: ", "", text)
    return Problem(element, " ".join(path + ([field] if field else [])) or node.tag, message,
                   entry.line)


_NUMERIC_TYPES = ("Number", "Vector3", "Vector6", "NumberList", "LimitList")


def _value_problems(root, info: _SchemaInfo) -> list[Problem]:
    """What the schema lets through in values: a comment or processing instruction inside a
    value (``<Mass>12<!--x-->5</Mass>`` would be read as 12 while the schema sees 125), and
    numbers that are not finite (``1e309``; only a LimitList may say ``inf``)."""
    out = []
    for node in root.iter(etree.Comment, etree.ProcessingInstruction):
        parent = node.getparent()
        decl = None if parent is None else info.decl(parent)
        if decl is not None and decl.type is not None:
            element, path = _where(parent)
            kind = "comment" if isinstance(node, etree._Comment) else "processing instruction"
            out.append(Problem(element, " ".join(path) or parent.tag,
                               f"a {kind} inside a value is not allowed; write the value alone",
                               node.sourceline))
    for el in root.iter(etree.Element):
        parent = el.getparent()
        if parent is None:
            continue
        decl = info.decls.get((parent.tag, el.tag))          # info.decl(el), parent known
        if decl is None:
            continue
        values = []
        if decl.type in _NUMERIC_TYPES and el.text:
            values.append((None, decl.type, el.text))
        for attr, type_name in decl.attributes.items():
            if type_name in _NUMERIC_TYPES and el.get(attr):
                values.append((attr, type_name, el.get(attr)))
        for attr, type_name, text in values:
            if len(text) < 300 and "e" not in text and "E" not in text:
                continue                # no exponent, no 309 digits: finite if a number
            bad = [w.strip() for w in text.split(",") if not _finite_word(w, type_name)]
            if bad:
                element, path = _where(el, attr)
                out.append(Problem(element, " ".join(path + ([attr] if attr else [])),
                                   f"'{_echo(bad[0])}' is not a finite number (floats reach "
                                   "about 1.8e308)", el.sourceline))
    return out


def _finite_word(word: str, type_name: str) -> bool:
    """True unless ``word`` reads as a float that is not finite (a LimitList's ``inf`` is)."""
    try:
        v = float(word)
    except ValueError:
        return True                     # not a number at all: the schema says so
    if np.isfinite(v):
        return True
    return type_name == "LimitList" and word.strip().lstrip("+-") == "inf"


def _echo(text: str, limit: int = 40) -> str:
    """A value for a message: at most ``limit`` characters."""
    return text if len(text) <= limit else f"{text[:limit - 15]}...{text[-12:]}"


def _tokens(field: str) -> list[str]:
    """A field as comparable words (fields use the file's names: ``Marker 2 Position``)."""
    return [w.lower() for w in re.split(r"[\s./\[\]]+", field or "") if w]


def _same_place(a: Problem, b: Problem) -> bool:
    """Problems about the same element and field (one field path a prefix of the other)."""
    if a.element != b.element:
        return False
    ta, tb = _tokens(a.field), _tokens(b.field)
    n = min(len(ta), len(tb))
    return n > 0 and ta[:n] == tb[:n]


def _locate(root, problem: Problem) -> Optional[int]:
    """Line of the element (and field) a semantic problem names, or None."""
    m = re.match(r"(\w+)(?: '(.*)')?$", problem.element)
    if not m:
        return None
    tag, name = m.groups()
    if tag == ROOT:
        el = root
    else:
        el = next((c for c in root.iterchildren(tag)
                   if name is None or c.get("Name", "") == name), None)
    if el is None:
        return None
    words = _tokens(problem.field)
    while words:
        word = words.pop(0)
        nxt = None
        for c in el.iterchildren(tag=etree.Element):
            if c.tag.lower() == word:
                if c.tag == "Marker" and words and words[0].isdigit() and c.get("ID") != words[0]:
                    continue
                nxt = c
                break
        if nxt is None:
            break
        el = nxt
        if words and words[0].isdigit():
            words.pop(0)
    return el.sourceline


# --------------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------------

def _load(source: Source) -> tuple[bytes, Optional[str]]:
    """Bytes of the XML and the encoding to force (None: as the document declares)."""
    if isinstance(source, bytes):
        return source, None
    if isinstance(source, str) and source.lstrip().startswith("<") and \
            not (source.rstrip().endswith(".xml") and Path(source).is_file()):
        return source.encode("utf-8"), "utf-8"   # XML text (a file named <model>.mbs.xml is read)
    return Path(source).read_bytes(), None


def read_with_problems(source: Source) -> tuple[Optional[MultibodySystem], list[Problem]]:
    """Read a model file; return the model (None if unreadable) and every problem found.

    Parameters
    ----------
    source : str, pathlib.Path or bytes
        A file path, or the XML itself (bytes, or a str starting with ``<`` that is not the path
        of an existing ``.xml`` file).

    Never raises for bad input: a missing file, an XML syntax error, schema violations and
    semantic problems all come back as :class:`Problem` s, ordered by line.
    """
    try:
        data, encoding = _load(source)
    except OSError as exc:
        return None, [Problem(ROOT, "file", f"cannot read {source}: {exc.strerror or exc}")]
    parser = etree.XMLParser(encoding=encoding, resolve_entities=False, no_network=True,
                             load_dtd=False)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        msg = re.sub(r", line \d+, column (\d+)$", r" (column \1)", exc.msg or str(exc))
        return None, [Problem(ROOT, "XML", f"not well-formed XML: {msg}", exc.lineno)]

    entities = list(root.iter(etree.Entity))
    if entities:  # DTD entities are not expanded (safety) and would stop the schema check
        return None, [Problem(ROOT, "XML", f"entity reference {e.text} is not allowed in a model "
                                           "file", e.sourceline) for e in entities]
    doc = root.getroottree()
    info = schema_info()
    problems: list[Problem] = []
    sch = schema()
    try:
        valid = sch.validate(doc)
    except etree.XMLSchemaValidateError as exc:  # libxml2 gave up; report and read on
        valid = True
        problems.append(Problem(ROOT, "XML", f"the schema check failed: {exc}"))
    if not valid:
        for entry in sch.error_log:
            p = _schema_problem(entry, doc, info)
            if p not in problems:
                problems.append(p)
    problems += [p for p in _value_problems(root, info)
                 if not any(_same_place(p, q) for q in problems)]
    if root.tag != ROOT:
        return None, problems

    version = _int(root.get("FormatVersion"), None)
    if version is not None and version > FORMAT_VERSION:
        problems.append(Problem(ROOT, "FormatVersion",
                                f"format version {version} is newer than this reader "
                                f"({FORMAT_VERSION}); update MultibodyWB", root.sourceline))

    folder = None
    if isinstance(source, (str, Path)) and not (isinstance(source, str)
                                               and source.lstrip().startswith("<")):
        folder = str(Path(source).resolve().parent)
    model = from_element(root, folder)
    for p in validate(model):
        if any(_same_place(p, q) for q in problems):
            continue
        if p.line is None:
            p = replace(p, line=_locate(root, p))
        problems.append(p)
    problems.sort(key=lambda p: float("inf") if p.line is None else p.line)
    return model, problems


def read(source: Source) -> MultibodySystem:
    """Read a model file; raise :class:`ModelError` listing every problem if there is any."""
    model, problems = read_with_problems(source)
    if problems:
        raise ModelError(problems)
    return model
