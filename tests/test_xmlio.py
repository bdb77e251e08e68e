"""The neutral XML file: schema, writer, reader and the problems a bad file produces."""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
import pytest
from lxml import etree

from MultibodyWB.solver.model import xmlio
from MultibodyWB.solver.elements.couplers import COUPLER_TYPES
from MultibodyWB.solver.model.meshfile import UNITS as MESH_UNITS
from MultibodyWB.solver.model import (COORDINATE_KIND, COORDINATE_UNIT, FORCE_TYPES, HINGE_TYPES,
                                      INTEGRATORS, METHODS, Driver, MarkerRef, ModelError,
                                      MultibodySystem, Simulation)

XS = "{http://www.w3.org/2001/XMLSchema}"

# The seed rigid body of design.md, verbatim, in a minimal valid mechanism.
SEED_BODY = """\
<RigidBody Name="Box" ID="1" Label="Box">
  <AbsolutePosition>0.01, 0.01, 0.005</AbsolutePosition>       <!-- base frame origin, global, m -->
  <AbsoluteOrientation>0, 0, 0.2617994</AbsoluteOrientation>   <!-- base frame orientation, rad -->
  <Marker ID="1"><Position>0, 0, 0</Position><Orientation>0, 0, 0</Orientation></Marker>
  <Marker ID="2"><Position>0.015, 0.01, 0.01</Position><Orientation>0, 0, 0</Orientation></Marker>
  <MassCenter><Position>0.0075, 0.005, 0.005</Position><Orientation>0, 0, 0</Orientation></MassCenter>
  <Density>7900</Density>
  <Mass>0.01185</Mass>
  <JI>7.9e-07, 1.28375e-06, 1.28375e-06, -4.44375e-07, -4.44375e-07, -2.9625e-07</JI>
</RigidBody>"""

SEED = f"""<?xml version="1.0" encoding="UTF-8"?>
<MultibodySystem Name="Seed" FormatVersion="1">
<Ground Name="Ground">
  <Marker ID="1"><Position>0, 0, 0</Position><Orientation>0, 0, 0</Orientation></Marker>
</Ground>
{SEED_BODY}
<Hinge Name="Float" ID="2" Type="free">
  <Input Body="Box" Marker="1"/>
  <Output Body="Ground" Marker="1"/>
</Hinge>
</MultibodySystem>
"""


# --------------------------------------------------------------------------------------------------
# Models built in code
# --------------------------------------------------------------------------------------------------

def _values(n, start):
    """n awkward floats (thirds, tiny, huge, negative) for exact round-trip checks."""
    pool = [start / 3.0, -start * 1e-9 / 7.0, start * 12345.678, 0.1 + 0.2, -2.0 ** -30, 1e22 / 3]
    return [pool[i % len(pool)] * (1 + i) for i in range(n)]


def hinge_options(type_name, seed=1.0):
    """Every optional Hinge field the type takes, with the right lengths."""
    kind = HINGE_TYPES[type_name]
    n = kind.dof
    kw = {}
    if "initial" in kind.options:
        kw["initial_coordinates"] = _values(n, 0.1 * seed)
        kw["initial_rates"] = _values(n, -0.2 * seed)
    if "stiffness" in kind.options:
        kw["stiffness"] = [abs(v) for v in _values(n, 1000.0 * seed)]
        kw["spring_reference"] = _values(n, 0.05)
    if "damping" in kind.options:
        kw["damping"] = [abs(v) for v in _values(n, 3.0)]
    if "limits" in kind.options:
        # three-angle rotations take no limits (stops), the others within a half turn
        free = [kind.quaternion and COORDINATE_KIND[c] == "rotation" for c in kind.coordinates]
        kw["lower_limits"] = [-np.inf] + [-np.inf if f else -1.5 for f in free[1:]]
        kw["upper_limits"] = [np.inf] + [np.inf if f else 2.5e-3 for f in free[1:]]
        kw["stop_stiffness"] = [1e4 * seed] * n
        kw["stop_restitution"] = [0.25] * n
        kw["stop_impact_speed"] = [0.5 / seed] * n
    if "driver" in kind.options:
        kw["drivers"] = [Driver(kind.coordinates[-1], "0.5*sin(2*pi*t) + step(t, 0, 0, 0.2, 1)")]
    return kw


def full_model() -> MultibodySystem:
    """A valid model using every hinge type with every option, every force type, all settings."""
    m = MultibodySystem("Everything & more <test>", gravity=(0.0, -1 / 3, -9.81),
                        description="Ünïcode, <tags> & \"quotes\"\nsecond line",
                        simulation=Simulation(end_time=2.5, step=1 / 3000, output_step=0.004,
                                              method="constrained", integrator="Radau",
                                              relative_tolerance=1e-7, absolute_tolerance=3e-12))
    g = m.set_ground("Frame", position=(0.1, 0, -0.2), orientation=(0, 0, math.pi / 6),
                     label="the frame")
    for k, name in enumerate(HINGE_TYPES):
        g.add_marker((0.1 * k, 1 / 7, 0), (0, math.pi / 2, 0), label=f"anchor {k}")
        b = m.add_body(f"B_{name}", mass=0.5 + k / 3, inertia=(0.02, 0.03, 0.04, 1e-4, -2e-4, 3e-5),
                       mass_center=(0.01, -0.02, 1 / 30), position=(k, 0.5, -0.25),
                       orientation=(0.1, -0.2, 0.3), density=7850 if k % 2 else None,
                       label=f"body {k}",
                       initial_velocity=(1, 2, 3) if name == "free" else None,
                       initial_angular_velocity=(0.1, 0, -0.1) if name == "free" else None)
        b.mass_center.orientation = np.array([0.0, 0.0, 0.25])
        ref = b.add_marker((0, 0, 0), (0, 0, 0))
        b.add_marker((0.3, -0.1, 0.05), (1e-3, 0, -0.5), label="tip")
        m.add_hinge(f"J_{name}", name, ref, MarkerRef(g.name, k + 1), label=f"hinge {k}",
                    **hinge_options(name, seed=k + 1))
    b0, b1 = m.bodies[0].name, m.bodies[1].name
    m.add_force("Weight", "point_force", MarkerRef(b0, 2), direction=(0, 0, -1), magnitude="100*t",
                label="push")
    m.add_force("Twist", "point_torque", MarkerRef(b1, 2), direction=(0, 1 / 3, 1), frame="marker",
                magnitude="step(t, 0, 0, 0.5, 2)")
    m.add_force("Spring", "spring_damper", MarkerRef(b0, 2), MarkerRef(b1, 2), stiffness=1500.5,
                damping=2.25, free_length=0.125, magnitude="-3")
    # free length None: as drawn
    m.add_force("Spring2", "spring_damper", MarkerRef(b0, 1), MarkerRef(b1, 1), stiffness=10.0)
    m.add_force("Torsion", "rotational_spring_damper", MarkerRef(b1, 1),
                MarkerRef(g.name, 1), stiffness=0.0,
                damping=1e-3)
    # (b0 is welded to the frame by the fixed hinge: a contact there is refused)
    m.add_contact("Touch", MarkerRef(b1, 2), MarkerRef(g.name, 1), ("sphere", {"radius": 0.02}),
                  ("plane",), stiffness=2.5e8, exponent=1.25, restitution=0.75,
                  impact_speed=0.3, static_friction=0.6, dynamic_friction=0.45,
                  stiction_velocity=2e-3, label="touch")
    m.add_contact("Crate", MarkerRef(g.name, 2), MarkerRef(b1, 1), ("plane",),
                  ("box", {"size": (0.1, 0.2, 1 / 3)}), stiffness=1e6)
    m.add_coupler("Mesh", "gear", ("J_revolute", "rz"), ("J_cylindrical", "rz"), ratio=-1 / 3,
                  label="mesh")
    m.add_coupler("Teeth", "rack_pinion", ("J_revolute", "rz"), ("J_prismatic", "z"),
                  pitch_radius=0.025)
    m.add_coupler("Link", "linear", ("J_planar", "x"), ("J_universal", "ry"),
                  coefficients=[2.0, -0.5])
    return m


def assert_same(a, b, where="model"):
    """Recursive equality of model objects; arrays compared exactly (NaN equal to NaN)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        np.testing.assert_array_equal(np.asarray(a, float), np.asarray(b, float), err_msg=where)
    elif dataclasses.is_dataclass(a):
        assert type(a) is type(b), where
        for f in dataclasses.fields(a):
            assert_same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and isinstance(b, float):
        assert a == b or (math.isnan(a) and math.isnan(b)), where
    else:
        assert a == b, where


def test_full_model_is_valid():
    assert full_model().validate() == []


def test_round_trip_full_model(tmp_path):
    model = full_model()
    path = tmp_path / "full.mbs.xml"
    xmlio.write(model, path)
    back = xmlio.read(path)
    assert_same(model, back)
    assert xmlio.to_string(back) == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("type_name", list(HINGE_TYPES))
def test_round_trip_every_hinge_type(type_name):
    m = MultibodySystem("One hinge")
    g = m.set_ground()
    g.add_marker()
    b = m.add_body("B", 2.0, (1, 1, 1, 0, 0, 0))
    m.add_hinge("J1", type_name, b.add_marker((0, 0, 1)), MarkerRef("Ground", 1),
                **hinge_options(type_name, seed=2.0))
    text = xmlio.to_string(m)
    hinge = etree.fromstring(text.encode()).find("Hinge")
    assert hinge.get("Type") == type_name
    back = xmlio.read(text)
    assert_same(m, back)
    assert xmlio.to_string(back) == text
    if HINGE_TYPES[type_name].options:  # every option it takes is in the file
        written = {c.tag for c in hinge}
        assert {"InitialCoordinates", "InitialRates"} <= written
        assert {"Stiffness", "Damping", "SpringReference"} <= written


@pytest.mark.parametrize("type_name", list(FORCE_TYPES))
def test_round_trip_every_force_type(type_name):
    m = full_model()
    m.forces = [f for f in m.forces if f.type == type_name]
    text = xmlio.to_string(m)
    back = xmlio.read(text.encode("utf-8"))
    assert_same(m, back)
    assert xmlio.to_string(back) == text


def test_force_writes_only_the_fields_its_type_uses():
    m = MultibodySystem()
    m.set_ground().add_marker()
    m.add_force("F", "point_force", MarkerRef("Ground", 1), direction=(1, 0, 0), stiffness=5.0,
                damping=1.0, free_length=2.0)
    m.add_force("S", "spring_damper", MarkerRef("Ground", 1), MarkerRef("Ground", 1),
                direction=(1, 0, 0))
    m.add_force("R", "rotational_spring_damper", MarkerRef("Ground", 1),
                MarkerRef("Ground", 1), magnitude="7",
                free_length=1.0)
    root = etree.fromstring(xmlio.to_string(m).encode())
    tags = {f.get("Name"): [c.tag for c in f] for f in root.iter("Force")}
    assert tags["F"] == ["Input", "Direction"]              # magnitude "0" left out
    assert tags["S"] == ["Input", "Output", "Stiffness", "Damping"]  # free length None: as drawn
    assert tags["R"] == ["Input", "Output", "Stiffness", "Damping"]
    assert root.find("Force/Direction").get("Frame") == "global"


def test_write_read_write_is_identical_for_a_broken_model():
    """The writer writes any model; what it writes reads back to the same file."""
    m = MultibodySystem("Broken", gravity=(0, 0))
    m.grounds = []
    b = m.add_body("", float("nan"), (1, 2, 3), position=(1, 2, 3, 4), id=0, label="  spaced  ")
    b.density = -1.0
    m.add_hinge("J", "revolut", MarkerRef("", 0), MarkerRef("nowhere", 7),
                initial_coordinates=[1, 2, 3], lower_limits=[np.inf], upper_limits=[-np.inf],
                drivers=[Driver("q", "import os")])
    m.add_force("F", "gravity_well", MarkerRef("x", 1), MarkerRef("y", 2), direction=(1, 2, 3),
                frame="local", magnitude="", stiffness=-1.0, damping=2.0, free_length=3.0)
    m.add_force("NoMarkers", "point_force", None)
    m.simulation = Simulation(end_time=-1, method=" euler", integrator="")
    first = xmlio.to_string(m)
    model, problems = xmlio.read_with_problems(first)
    assert problems and model is not None
    second = xmlio.to_string(model)
    assert second == first
    assert xmlio.to_string(xmlio.read_with_problems(second)[0]) == first


@pytest.mark.parametrize("x, text", [
    (7900.0, "7900"), (0.0, "0"), (-0.0, "-0"), (0.01185, "0.01185"), (7.9e-07, "7.9e-07"),
    (0.1 + 0.2, "0.30000000000000004"), (1e22, "1e+22"), (-2.5, "-2.5"), (np.inf, "inf"),
    (-np.inf, "-inf"), (np.float64(1 / 3), "0.3333333333333333"), (3, "3")])
def test_number_format(x, text):
    assert xmlio.format_number(x) == text
    assert float(text) == float(x)


def test_numbers_round_trip_exactly():
    rng = np.random.default_rng(1)
    values = np.concatenate([rng.normal(size=200) * 10.0 ** rng.integers(-300, 300, 200),
                             [5e-324, 1.7976931348623157e308, 1e16, 123456789012345678.0]])
    text = xmlio.format_vector(values)
    assert np.array_equal(np.array([float(t) for t in text.split(", ")]), values)


# --------------------------------------------------------------------------------------------------
# The seed
# --------------------------------------------------------------------------------------------------

def test_seed_reads_and_writes_back_every_number_unchanged():
    model = xmlio.read(SEED)
    box = model.body("Box")
    assert box.mass == 0.01185 and box.density == 7900.0 and box.label == "Box"
    assert box.inertia[3] == -4.44375e-07
    written = etree.fromstring(xmlio.to_string(model).encode()).find("RigidBody")
    seed = etree.fromstring(SEED_BODY)
    assert dict(written.attrib) == dict(seed.attrib)
    compared = 0
    for el in seed.iter(tag=etree.Element):
        if el.text and el.text.strip():
            path = seed.getroottree().getpath(el).split("/", 2)[2]
            assert written.xpath(path)[0].text == el.text, path
            compared += 1
    assert compared == 11


def test_seed_file_passes_the_schema():
    assert xmlio.schema().validate(etree.fromstring(SEED.encode()).getroottree())


# --------------------------------------------------------------------------------------------------
# The schema itself
# --------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def xsd():
    return etree.parse(str(xmlio.SCHEMA_PATH)).getroot()


def _doc(node) -> str:
    docs = node.findall(f"{XS}annotation/{XS}documentation")
    return " ".join(" ".join(d.itertext()) for d in docs)


def test_schema_compiles():
    assert isinstance(xmlio.schema(), etree.XMLSchema)
    assert etree.XMLSchema(etree.parse(str(xmlio.SCHEMA_PATH)))


@pytest.mark.parametrize("kind", ["element", "attribute", "enumeration", "simpleType"])
def test_every_declaration_is_documented(xsd, kind):
    nodes = list(xsd.iter(f"{XS}{kind}"))
    assert nodes
    undocumented = [n.get("name") or n.get("value") for n in nodes if len(_doc(n).strip()) < 10]
    assert undocumented == []


def _enumeration(xsd, type_name):
    t = xsd.find(f"{XS}simpleType[@name='{type_name}']")
    return {e.get("value"): _doc(e) for e in t.iter(f"{XS}enumeration")}


@pytest.mark.parametrize("type_name, table", [
    ("HingeTypeName", list(HINGE_TYPES)), ("ForceTypeName", list(FORCE_TYPES)),
    ("CoordinateName", list(COORDINATE_KIND)), ("MethodName", list(METHODS)),
    ("IntegratorName", list(INTEGRATORS)), ("DirectionFrame", ["global", "marker"]),
    ("MeshUnit", list(MESH_UNITS)), ("CouplerTypeName", list(COUPLER_TYPES))])
def test_schema_enumerations_equal_the_model_tables(xsd, type_name, table):
    assert list(_enumeration(xsd, type_name)) == table


@pytest.mark.parametrize("name", list(HINGE_TYPES))
def test_hinge_type_documentation_matches_the_table(xsd, name):
    kind = HINGE_TYPES[name]
    doc = _enumeration(xsd, "HingeTypeName")[name]
    coords = ", ".join(f"{c} ({COORDINATE_UNIT[COORDINATE_KIND[c]]})" for c in kind.coordinates)
    assert doc.startswith(kind.description)
    assert f"Coordinates: {coords or 'none'}." in doc
    assert f"Options: {', '.join(sorted(kind.options)) or 'none'}." in doc


@pytest.mark.parametrize("name", list(FORCE_TYPES))
def test_force_type_documentation_matches_the_table(xsd, name):
    kind = FORCE_TYPES[name]
    doc = _enumeration(xsd, "ForceTypeName")[name]
    assert doc.startswith(kind.description)
    assert ("Output" in doc) == (kind.markers == 2)
    for field, unit in kind.units.items():
        if unit != "1":
            assert f"({unit})" in doc, (field, unit)


@pytest.mark.parametrize("element, words", [
    ("Mass", ["kg"]), ("JI", ["kg m^2", "Ixx, Iyy, Izz, Ixy, Ixz, Iyz", "-integral of x*y dm",
                             "base-frame origin"]),
    ("Density", ["kg/m^3"]), ("Gravity", ["m/s^2"]), ("AbsolutePosition", ["m"]),
    ("AbsoluteOrientation", ["rad", "Rx(a) Ry(b) Rz(c)", "x, y', z''"]),
    ("InitialVelocity", ["m/s"]), ("InitialAngularVelocity", ["rad/s"]),
    ("Input", ["tip side"]), ("Output", ["root side"]), ("Driver", ["t (s)"]),
    ("Stiffness", ["N/m", "N m/rad"]), ("Damping", ["N s/m", "N m s/rad"]),
    ("FreeLength", [" m"]), ("Magnitude", ["N", "N m"]), ("EndTime", [", s"]),
    ("Step", [", s"]), ("OutputStep", [", s"])])
def test_documentation_states_units_and_conventions(xsd, element, words):
    docs = " ".join(_doc(e) for e in xsd.iter(f"{XS}element") if e.get("name") == element)
    for w in words:
        assert w in docs, (element, w)


def test_schema_documents_the_hinge_conventions(xsd):
    doc = _doc(xsd)
    for w in ("Bryant", "R = Rx(a) Ry(b) Rz(c)", "input body (tip side", "output body (root side",
              "hinge axis is the markers' z", "translations along the output marker's axes",
              "Bryant angles of the input marker relative to the output marker"):
        assert w in doc, w


@pytest.mark.parametrize("text, ok", [
    ("0, 0, -9.81", True), ("0.01, 0.01, 0.005", True), ("1e-3,2E+4 , -.5", True),
    (" 1.,+2, 3 ", True), ("1, 2", False), ("1, 2, 3, 4", False), ("a, b, c", False),
    ("1 2 3", False), ("inf, 0, 0", False), ("nan, 0, 0", False), ("", False)])
def test_vector_pattern(text, ok):
    m = full_model()
    root = xmlio.to_element(m)
    root.find("Gravity").text = text
    model, problems = xmlio.read_with_problems(etree.tostring(root))
    assert (problems == []) == ok, problems
    if not ok:
        assert [(p.element, p.field) for p in problems] == [("MultibodySystem", "Gravity")]


@pytest.mark.parametrize("text, ok", [("-inf, 0.5", True), ("inf, -1e-3", True),
                                      ("1, 2", True), ("-inf, x", False), ("1; 2", False)])
def test_limit_pattern(text, ok):
    m = full_model()
    root = xmlio.to_element(m)
    el = root.find("Hinge[@Type='universal']/LowerLimits")
    el.text = text
    model, problems = xmlio.read_with_problems(etree.tostring(root))
    fields = {(p.element, p.field) for p in problems}
    assert (("Hinge 'J_universal'", "LowerLimits") in fields) != ok, problems


# --------------------------------------------------------------------------------------------------
# Problems
# --------------------------------------------------------------------------------------------------

def _lines(text):
    return text.splitlines()


def _line_of(text, needle, nth=0):
    hits = [i + 1 for i, line in enumerate(_lines(text)) if needle in line]
    return hits[nth]


def _broken(*edits):
    """The full model's file with textual edits (old, new[, nth]) applied, each once."""
    text = xmlio.to_string(full_model())
    for old, new, *nth in edits:
        parts = text.split(old)
        k = nth[0] if nth else 0
        assert len(parts) > k + 1, old
        text = old.join(parts[:k + 1]) + new + old.join(parts[k + 1:])
    return text


def _only(problems, element, field):
    hits = [p for p in problems if p.element == element and p.field == field]
    assert len(hits) == 1, (element, field, problems)
    return hits[0]


def test_missing_mass():
    text = _broken(("    <Mass>0.5</Mass>\n", ""))
    model, problems = xmlio.read_with_problems(text)
    p = _only(problems, "RigidBody 'B_fixed'", "Mass")
    assert "missing" in p.message
    assert p.line == _line_of(text, "<JI>")  # where the parser found JI instead of Mass
    assert len(problems) == 1


def test_non_numeric_ji():
    text = _broken(("<JI>0.02,", "<JI>0.02x,"))
    model, problems = xmlio.read_with_problems(text)
    p = _only(problems, "RigidBody 'B_fixed'", "JI")
    assert p.message.startswith("'0.02x, 0.03") and "6 numbers" in p.message
    assert p.line == _line_of(text, "<JI>0.02x")
    assert len(problems) == 1


def test_wrong_attribute():
    text = _broken(('<RigidBody Name="B_revolute"', '<RigidBody Colour="red" Name="B_revolute"'))
    model, problems = xmlio.read_with_problems(text)
    p = _only(problems, "RigidBody 'B_revolute'", "Colour")
    assert p.message == "attribute Colour is not allowed here (allowed: Name, ID, Label)"
    assert p.line == _line_of(text, 'Colour="red"')
    assert len(problems) == 1


def test_unknown_hinge_type_reported_once():
    text = _broken(('Type="revolute"', 'Type="revolut"'))
    model, problems = xmlio.read_with_problems(text)
    p = _only(problems, "Hinge 'J_revolute'", "Type")
    assert p.message == ("'revolut' is not a hinge type; use one of " + ", ".join(HINGE_TYPES))
    assert str(p).startswith(f"Hinge 'J_revolute' (line {p.line}), field Type: 'revolut' is not")
    assert p.line == _line_of(text, 'Type="revolut"')
    assert len(problems) == 1, problems


def test_unknown_force_type_reported_once():
    text = _broken(('Type="spring_damper"', 'Type="spring"'))
    model, problems = xmlio.read_with_problems(text)
    p = _only(problems, "Force 'Spring'", "Type")
    assert p.message == "'spring' is not a force type; use one of " + ", ".join(FORCE_TYPES)
    assert len(problems) == 1, problems


@pytest.mark.parametrize("edit, element, field, words", [
    (('<Output Body="Frame" Marker="1"/>', '<Output Body="Frame"/>'),
     "Hinge 'J_fixed'", "Output Marker", "required attribute Marker is missing"),
    (('<Marker ID="2" Label="tip">', '<Marker ID="0" Label="tip">', 3),
     "RigidBody 'B_cylindrical'", "Marker ID", "'0' is not a positive integer"),
    (('<Orientation>0.001, 0, -0.5</Orientation>', ''),
     "RigidBody 'B_fixed'", "Marker 2 Orientation", "element <Orientation> is missing"),
    (('<Driver Coordinate="rz">', '<Driver Coordinate="phi">'),
     "Hinge 'J_revolute'", "Driver Coordinate", "'phi' is not a hinge coordinate; use one of x,"),
    (('<Direction Frame="marker">', '<Direction Frame="body">'),
     "Force 'Twist'", "Direction Frame",
     "'body' is not a direction frame; use one of global, marker"),
    (('<Method>constrained</Method>', '<Method>fast</Method>'),
     "Simulation", "Method", "'fast' is not a solution method; use one of mstmm, constrained,"),
    (('<OutputStep>0.004</OutputStep>', '<Outputstep>0.004</Outputstep>'),
     "Simulation", "Outputstep", "<Outputstep> is not an element of <Simulation>"),
    (('<EndTime>2.5</EndTime>', ''), None, None, None),   # optional: no problem
    (('<Gravity>', '<Description>x</Description><Gravity>'),
     "MultibodySystem", "Description", "<Description> appears more than once"),
    (('<Integrator>Radau</Integrator>',
      '<Integrator>Radau</Integrator><Integrator>rk4</Integrator>'),
     "Simulation", "Integrator", "<Integrator> appears more than once"),
])
def test_schema_problem_names_element_and_field(edit, element, field, words):
    text = _broken(edit)
    model, problems = xmlio.read_with_problems(text)
    if element is None:
        assert problems == []
        return
    p = _only(problems, element, field)
    assert words in p.message
    assert isinstance(p.line, int) and p.line > 0
    assert len(problems) == 1, problems


def test_missing_input_is_reported_by_the_schema_only():
    text = _broken(('<Input Body="B_prismatic" Marker="1"/>', ''))
    model, problems = xmlio.read_with_problems(text)
    p = _only(problems, "Hinge 'J_prismatic'", "Input")  # not again by the semantic check
    assert p.message == "element <Input> is missing (found <Output>)"
    assert model.hinge("J_prismatic").input is None
    # what follows from it is still reported
    assert [(q.element, q.field) for q in problems if q is not p] == [
        ("RigidBody 'B_prismatic'", "Hinge")]


def test_many_problems_reported_at_once():
    text = _broken(("    <Mass>0.5</Mass>\n", ""),
                   ("<JI>0.02, 0.03, 0.04, 0.0001, -0.0002, 3e-05</JI>\n    <InitialVelocity>",
                    "<JI>0.02, 0.03, 0.04, 0.0001, -0.0002, three</JI>\n    <InitialVelocity>"),
                   ('<RigidBody Name="B_revolute"', '<RigidBody Colour="red" Name="B_revolute"'),
                   ('Type="revolute"', 'Type="revolut"'),
                   ('Type="spring_damper"', 'Type="spring"'),
                   ("<Mass>1.1666666666666665</Mass>", "<Mass>-1</Mass>"))  # semantic
    model, problems = xmlio.read_with_problems(text)
    assert model is not None
    expected = [("RigidBody 'B_fixed'", "Mass"), ("RigidBody 'B_revolute'", "Colour"),
                ("RigidBody 'B_prismatic'", "Mass"), ("RigidBody 'B_free'", "JI"),
                ("Hinge 'J_revolute'", "Type"), ("Force 'Spring'", "Type")]
    assert sorted((p.element, p.field) for p in problems) == sorted(expected)
    assert all(p.line for p in problems)
    assert [p.line for p in problems] == sorted(p.line for p in problems)
    semantic = _only(problems, "RigidBody 'B_prismatic'", "Mass")
    assert "positive" in semantic.message and semantic.line == _line_of(text, "<Mass>-1</Mass>")
    with pytest.raises(ModelError) as exc:
        xmlio.read(text)
    assert exc.value.problems == problems
    assert "6 problems" in str(exc.value)


def test_semantic_problems_get_line_numbers():
    m = full_model()
    m.grounds.append(dataclasses.replace(m.grounds[0], name="Other"))
    m.hinges[1].input.marker = 9
    text = xmlio.to_string(m)
    model, problems = xmlio.read_with_problems(text)
    second = _only(problems, "Ground 'Other'", "Ground")
    assert second.line == _line_of(text, '<Ground Name="Other"')
    ref = _only(problems, "Hinge 'J_revolute'", "Input")
    assert ref.line == _line_of(text, '<Input Body="B_revolute" Marker="9"/>')


@pytest.mark.parametrize("text, line", [
    ('<MultibodySystem Name="x" FormatVersion="1">\n  <Ground Name="G">\n</MultibodySystem>\n', 3),
    ('<?xml version="1.0"?>\n<MultibodySystem Name="x" <Ground/>\n', 2),
    ('<MultibodySystem Name="x" FormatVersion="1">\n\n  &undefined;\n</MultibodySystem>', 3),
    ("", 1),
    ('<MultibodySystem Name="x" FormatVersion="1"/>\n<More/>', 2),
])
def test_syntax_error_gives_one_problem(text, line):
    model, problems = xmlio.read_with_problems(text.encode())
    assert model is None
    assert len(problems) == 1
    p = problems[0]
    assert (p.element, p.field, p.line) == ("MultibodySystem", "XML", line)
    assert p.message.startswith("not well-formed XML")
    with pytest.raises(ModelError):
        xmlio.read(text.encode())


def test_wrong_root_element():
    model, problems = xmlio.read_with_problems("<Mechanism/>")
    assert model is None
    assert [(p.element, p.field) for p in problems] == [("MultibodySystem", "root element")]
    assert "<Mechanism>" in problems[0].message


def test_missing_file(tmp_path):
    model, problems = xmlio.read_with_problems(tmp_path / "nope.mbs.xml")
    assert model is None and len(problems) == 1 and problems[0].field == "file"


def test_newer_format_version_is_refused():
    text = xmlio.to_string(full_model()).replace('FormatVersion="1"', 'FormatVersion="2"')
    model, problems = xmlio.read_with_problems(text)
    p = _only(problems, "MultibodySystem", "FormatVersion")
    assert "newer" in p.message and p.line == 2


@pytest.mark.parametrize("where", ['<MultibodySystem Name="&x;" FormatVersion="1">',
                                   '<MultibodySystem Name="m" FormatVersion="1">&x;'])
@pytest.mark.parametrize("entity", ['SYSTEM "file:///etc/passwd"', '"inline text"'])
def test_entities_are_refused_not_expanded(where, entity):
    text = (f'<?xml version="1.0"?>\n<!DOCTYPE m [<!ENTITY x {entity}>]>\n'
            f'{where}<Description>&x;</Description></MultibodySystem>')
    model, problems = xmlio.read_with_problems(text)
    assert model is None and problems
    assert all(p.field == "XML" and p.line == 3 for p in problems)
    assert not any("root:" in p.message or "inline text" in p.message for p in problems)


def test_reader_accepts_path_str_and_bytes(tmp_path):
    m = full_model()
    path = tmp_path / "m.mbs.xml"
    xmlio.write(m, path)
    data = path.read_bytes()
    assert data.startswith(b"<?xml version='1.0' encoding='UTF-8'?>\n<MultibodySystem ")
    assert b"\n  <Ground " in data and b"\n    <AbsolutePosition>" in data  # 2-space indent
    for source in (path, str(path), data, data.decode("utf-8")):
        assert_same(m, xmlio.read(source))


def test_xmlio_imports_no_freecad_or_qt():
    source = xmlio.__file__
    text = open(source, encoding="utf-8").read()
    assert not re.search(r"^\s*(import|from)\s+(FreeCAD|FreeCADGui|PySide|Part)\b", text, re.M)
