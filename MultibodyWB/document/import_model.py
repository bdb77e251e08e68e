"""Import a neutral model (or ``*.mbs.xml`` file) into a document as Multibody objects.

:func:`from_model` rebuilds the Mechanism, its Bodies, Markers, Hinges, Forces, Contacts,
Couplers and Simulation with
the factory functions, converting SI to FreeCAD's units with
:func:`MultibodyWB.objects.units.from_si`. Names become labels (FreeCAD keeps labels unique: a name
already used in the document gets a number appended), the model's labels become ``Label2``.

Solids: a body may be given existing solids (``solids={"Crank": [obj, ...]}``); its markers are
then placed relative to them and its mass properties come from them. A body without solids gets a
**stand-in**: a box of the body's mass and principal moments of inertia, centred at the mass
centre and aligned with the principal axes (:func:`stand_in_shape`), in a ``Part::Feature`` placed
at the body's base frame. A homogeneous box has three free sizes, fixed by the three principal
moments (``a^2 = 6 (I2 + I3 - I1) / m`` ...), so its OCC mass properties equal the body's (to
round-off) once its density is ``m / (a b c)``: the Body gets that density, not the file's (which
is informative in the neutral model). A flat body (``I1 = I2 + I3``) would need a box of no
thickness; it gets a thin one (1e-3 of its size, :data:`MIN_THICKNESS`) and a warning. The ground
gets a small cube at its base frame, to carry its markers. Markers on a stand-in are attached to
the whole stand-in solid (``ObjectXY``) with their frame as the attachment offset.
"""

import FreeCAD
import numpy as np

from . import factory
from ..objects import units
from ..objects.base import set_value
from ..objects.force import ForceProxy, field_properties, type_params
from ..objects.hinge import OPTION_PROPERTIES
from ..objects.mechanism import members
from ..objects.simulation import MODEL_ATTRIBUTES, TYPE as SIMULATION
from ..solver.api import (CONTACT_SHAPES, COORDINATE_KIND, FORCE_TYPES, bryant_to_matrix,
                          inertia_vector_to_tensor, parallel_axis, xmlio)

#: Thinnest stand-in box edge, relative to its longest edge.
MIN_THICKNESS = 1e-3
#: Edge of the ground's stand-in cube relative to the model's size, and its least size (mm).
GROUND_CUBE = 0.1
GROUND_CUBE_MIN = 10.0


def rotation(R):
    """A ``FreeCAD.Rotation`` from a 3 x 3 rotation matrix."""
    m = FreeCAD.Matrix()
    for i in range(3):
        for j in range(3):
            setattr(m, f"A{i + 1}{j + 1}", float(R[i][j]))
    return FreeCAD.Rotation(m)


def placement_from_si(position, orientation):
    """A FreeCAD placement (mm) from a position (m) and Bryant angles (rad)."""
    base = FreeCAD.Vector(*(units.from_si(x, "m") for x in position))
    return FreeCAD.Placement(base, rotation(bryant_to_matrix(orientation)))


def principal_box(mass, ji, center):
    """Edges (m, along the principal axes) and principal axes (3, 3) of the equivalent box.

    Parameters
    ----------
    mass : float
        kg.
    ji : array_like, shape (6,)
        ``JI`` about the base origin, kg m^2.
    center : array_like, shape (3,)
        Mass centre in the base frame, m.

    Returns
    -------
    edges : ndarray, shape (3,)
    axes : ndarray, shape (3, 3)
        Columns: the principal axes in the base frame (a right-handed frame).
    exact : bool
        False when an edge had to be thickened to :data:`MIN_THICKNESS`.
    """
    J_C = parallel_axis(inertia_vector_to_tensor(ji), -mass, center)
    moments, axes = np.linalg.eigh(0.5 * (J_C + J_C.T))
    if np.linalg.det(axes) < 0.0:
        axes[:, 2] = -axes[:, 2]
    total = moments.sum()
    squares = 6.0 * (total - 2.0 * moments) / mass       # a^2 = 6 (I2 + I3 - I1) / m
    floor = (MIN_THICKNESS ** 2) * squares.max()
    exact = bool(np.all(squares >= floor))
    return np.sqrt(np.maximum(squares, floor)), axes, exact


def stand_in_shape(mass, ji, center):
    """The stand-in solid of a body (mm, base frame) and the density (kg/mm^3) it needs.

    Returns
    -------
    shape : Part.Shape
        The box, at the mass centre along the principal axes (in its geometry, not a placement).
    density : float
        ``mass / volume`` in FreeCAD's internal unit.
    exact : bool
        See :func:`principal_box`.
    """
    import Part
    edges, axes, exact = principal_box(mass, ji, center)
    a, b, c = (units.from_si(e, "m") for e in edges)
    box = Part.makeBox(a, b, c, FreeCAD.Vector(-a / 2, -b / 2, -c / 2))
    center_mm = FreeCAD.Vector(*(units.from_si(x, "m") for x in center))
    # moved into the geometry (planes stay planes): the feature's Placement is the base frame
    box.transformShape(FreeCAD.Placement(center_mm, rotation(axes)).toMatrix(), True)
    return box, mass / box.Volume, exact


def _stand_in(doc, name, shape, base):
    obj = doc.addObject("Part::Feature", f"{name}_StandIn")
    obj.Label = f"{name} stand-in"
    obj.Shape = shape
    obj.Placement = base
    return obj


def _ground_size(model):
    points = [p.position for p in model.bodies] + [model.ground.position if model.ground else
                                                   np.zeros(3)]
    extent = np.ptp(np.array(points), axis=0).max() if len(points) > 1 else 0.0
    return max(GROUND_CUBE * units.from_si(extent, "m"), GROUND_CUBE_MIN)


def _quantity(value, si):
    return FreeCAD.Units.Quantity(units.from_si(value, si), units.unit(si))


def from_model(doc, model, solids=None, name=None):
    """Rebuild ``model`` in ``doc`` as a Mechanism and its members; return the Mechanism.

    Parameters
    ----------
    doc : FreeCAD document
    model : MultibodySystem
        SI units.
    solids : dict, optional
        Body (or ground) name -> document objects to use as its solids instead of a stand-in.
    name : str, optional
        Label of the Mechanism (default: the model's name).
    """
    import Part
    solids = dict(solids or {})
    mechanism = factory.make_mechanism(
        doc, name or model.name or "Mechanism", description=model.description,
        gravity=[units.from_si(x, "m/s^2") for x in model.gravity])
    parts = {}   # model part name -> (Body object, base placement of the file, solid frame)
    if model.ground is not None:
        gp = model.ground
        base = placement_from_si(gp.position, gp.orientation)
        body = factory.make_body(doc, mechanism, [], ground=True, name=gp.name, label=gp.label)
        own = solids.get(gp.name)
        if not own:
            size = _ground_size(model)
            cube = Part.makeBox(size, size, size, FreeCAD.Vector(-size / 2, -size / 2, -size / 2))
            own = [_stand_in(doc, body.Name, cube, base)]
        body.Solids = list(own)
        body.recompute()
        parts[gp.name] = (body, base)
    for b in model.bodies:
        base = placement_from_si(b.position, b.orientation)
        body = factory.make_body(doc, mechanism, [], name=b.name, label=b.label)
        own = solids.get(b.name)
        if own:
            if b.density is not None:
                set_value(body, body.Proxy.prop("Density"), b.density)
        else:
            shape, density, exact = stand_in_shape(b.mass, b.inertia, b.mass_center.position)
            if not exact:
                FreeCAD.Console.PrintWarning(
                    f"MultibodyWB: RigidBody '{b.name}' is flat (its largest principal moment "
                    "is the sum of the other two): its stand-in box is thickened, its inertia "
                    "is approximate\n")
            own = [_stand_in(doc, body.Name, shape, base)]
            body.Density = FreeCAD.Units.Quantity(density, units.unit("kg/m^3"))
        body.Solids = list(own)
        for prop, value in (("InitialVelocity", b.initial_velocity),
                            ("InitialAngularVelocity", b.initial_angular_velocity)):
            if value is not None:       # vectors hold FreeCAD's internal units
                si = body.Proxy.prop(prop).si
                setattr(body, prop, FreeCAD.Vector(*(units.from_si(x, si) for x in value)))
        body.recompute()
        parts[b.name] = (body, base)
    markers = {}
    for part in list(model.grounds[:1]) + list(model.bodies):
        if part.name not in parts:
            continue
        body, base = parts[part.name]
        solid_frame = body.Solids[0].Placement if body.Solids else FreeCAD.Placement()
        for m in part.markers:
            frame = placement_from_si(m.frame.position, m.frame.orientation)
            offset = solid_frame.inverse().multiply(base).multiply(frame)
            marker = factory.make_marker(doc, body, None, offset=offset,
                                         name=f"{body.Name}_M{m.id}",
                                         label=m.label, marker_id=m.id)
            if m.label:
                marker.Label = m.label
            markers[(part.name, m.id)] = marker
    hinges = {}
    for h in model.hinges:
        hinges[h.name] = _hinge(doc, mechanism, h, markers)
    for f in model.forces:
        _force(doc, mechanism, f, markers)
    for c in model.contacts:
        _contact(doc, mechanism, c, markers)
    for k in model.couplers:
        _coupler(doc, mechanism, k, hinges)
    sim = members(mechanism, SIMULATION)
    if sim:
        _simulation(sim[0], model.simulation)
    doc.recompute()
    return mechanism


def _marker(markers, ref):
    return None if ref is None else markers.get((ref.body, ref.marker))


def _hinge(doc, mechanism, h, markers):
    kind = h.kind
    options = {}
    for option in OPTION_PROPERTIES:
        if option.quantity is None or kind is None or option.attribute == "motors":
            continue
        values = getattr(h, option.attribute)
        if values is None:
            continue
        options[option.attribute] = {
            c: _quantity(v, units.COORDINATE_UNITS[COORDINATE_KIND[c]][option.quantity][1])
            for c, v in zip(kind.coordinates, values) if np.isfinite(v)}
    if h.drivers:
        options["drivers"] = {d.coordinate: d.expression for d in h.drivers}
        options["driver_from_drawing"] = all(d.from_start for d in h.drivers)
    if h.motors:
        rate = {c: units.COORDINATE_UNITS[COORDINATE_KIND[c]]["rate"][1] for c in kind.coordinates}
        options["motor_speed"] = {m.coordinate: _quantity(m.speed, rate[m.coordinate])
                                  for m in h.motors}
        options["motor_ramp_time"] = {m.coordinate: _quantity(m.ramp_time, "s") for m in h.motors}
    options["spring_reference_as_drawn"] = bool(h.spring_reference_start)
    options["initial_is_estimate"] = bool(h.initial_coordinates_estimate
                                          or h.initial_rates_estimate)
    obj = factory.make_hinge(doc, mechanism, h.type, _marker(markers, h.input),
                             _marker(markers, h.output), name=h.name, label=h.label, **options)
    return obj


def _force(doc, mechanism, f, markers):
    kind = FORCE_TYPES.get(f.type)
    values = {}
    fields = kind.fields if kind else frozenset()
    if "direction" in fields and f.direction is not None:
        values["direction"] = [float(x) for x in f.direction]
        values["frame"] = f.frame
    if "magnitude" in fields:
        values["magnitude"] = f.magnitude
    for name in ("stiffness", "damping", "free_length"):
        value = getattr(f, name)
        names = field_properties(f.type, name)
        if value is None or not names:
            continue
        proxy_prop = ForceProxy.prop(names[0])
        values[name] = _quantity(value, proxy_prop.si)
    params = {}
    for param, names in type_params(f.type):   # the law's own, those the file gives
        if param.attr not in f.params:
            continue
        given = [float(v) for v in np.ravel(f.params[param.attr])]
        props = [ForceProxy.prop(n) for n in names]
        if len(given) == len(props):        # SI -> the properties' units (a float: SI)
            given = [units.to_si(units.from_si(v, p.si), p.unit) if p.unit else v
                     for v, p in zip(given, props)]
        params[param.attr] = given          # else make_force refuses it, naming it
    if params:
        values["params"] = params
    return factory.make_force(doc, mechanism, f.type, _marker(markers, f.input),
                              _marker(markers, f.output), name=f.name, label=f.label, **values)


def _contact(doc, mechanism, c, markers):
    shapes = []
    for shape in (c.input_shape, c.output_shape):
        used = CONTACT_SHAPES.get(shape.type, ((), ""))[0]
        dimensions = {}
        for name in used:
            if name == "size":
                if shape.size is not None:
                    dimensions["size"] = tuple(units.from_si(x, "m") for x in shape.size)
            elif name == "points":
                if shape.points is not None:
                    dimensions["points"] = [[units.from_si(float(x), "m") for x in p]
                                            for p in shape.points]
            else:
                dimensions[name] = units.from_si(getattr(shape, name), "m")
        shapes.append((shape.type, dimensions))
    return factory.make_contact(
        doc, mechanism, _marker(markers, c.input), _marker(markers, c.output), *shapes,
        c.stiffness if c.stiffness is not None else 0.0, name=c.name, label=c.label,
        exponent=c.exponent, restitution=c.restitution,
        impact_speed=_quantity(c.impact_speed, "m/s"), static_friction=c.static_friction,
        dynamic_friction=c.dynamic_friction,
        stiction_velocity=_quantity(c.stiction_velocity, "m/s"))


def _coupler(doc, mechanism, k, hinges):
    values = {}
    if k.ratio is not None:
        values["ratio"] = k.ratio
    if k.pitch_radius is not None:
        values["pitch_radius"] = _quantity(k.pitch_radius, "m")
    if k.coefficients is not None:
        values["coefficients"] = [float(x) for x in k.coefficients]
    return factory.make_coupler(
        doc, mechanism, k.type, hinges.get(k.first.hinge), k.first.coordinate,
        hinges.get(k.second.hinge), k.second.coordinate, name=k.name, label=k.label, **values)


def _simulation(obj, s):
    for name, (attribute, _) in MODEL_ATTRIBUTES.items():
        prop = obj.Proxy.prop(name)
        value = getattr(s, attribute)
        if prop.si:
            value = _quantity(value, prop.si)
        set_value(obj, prop, value)


def import_file(doc, path, solids=None):
    """Read the neutral file ``path`` (every problem reported at once) and rebuild it in ``doc``."""
    return from_model(doc, xmlio.read(path), solids=solids)
