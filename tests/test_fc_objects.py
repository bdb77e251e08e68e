"""The Multibody document objects in headless FreeCAD: properties, units, attachment, the
crank-slider built from solids (export, solver check, comparison with the code-built engine, import, save and
reopen) and bad input (every problem named, marked and listed at export, nothing lost).
"""

import numpy as np
import pytest

from MultibodyWB.solver.model import FORCE_TYPES, HINGE_TYPES, INTEGRATORS, METHODS, ModelError

pytestmark = pytest.mark.freecad


@pytest.fixture
def doc(freecad):
    d = freecad.newDocument("Objects")
    name = d.Name
    yield d
    if name in freecad.listDocuments():
        freecad.closeDocument(name)


@pytest.fixture
def errors(freecad, monkeypatch):
    """The messages printed with FreeCAD.Console.PrintError during the test."""
    printed = []
    monkeypatch.setattr(freecad.Console, "PrintError", printed.append)
    return printed


@pytest.fixture
def warnings(freecad, monkeypatch):
    """The messages printed with FreeCAD.Console.PrintWarning during the test."""
    printed = []
    monkeypatch.setattr(freecad.Console, "PrintWarning", printed.append)
    return printed


def _box(doc, name, size=(10, 10, 10), placement=None):
    obj = doc.addObject("Part::Box", name)
    obj.Length, obj.Width, obj.Height = size
    if placement is not None:
        obj.Placement = placement
    return obj


def _pendulum(freecad, doc):
    """Frame (ground) and a link on a revolute hinge: the smallest valid mechanism."""
    from MultibodyWB.document import factory
    frame = _box(doc, "FrameSolid", (40, 40, 10))
    link = _box(doc, "LinkSolid", (100, 10, 10),
                freecad.Placement(freecad.Vector(0, 0, 20), freecad.Rotation()))
    doc.recompute()
    mech = factory.make_mechanism(doc, "Pendulum")
    ground = factory.make_body(doc, mech, frame, ground=True, name="Frame")
    body = factory.make_body(doc, mech, link, name="Link")
    m_link = factory.make_marker(doc, body, (link, "Face1"), name="LinkEnd")
    m_frame = factory.make_marker(doc, ground, None, offset=freecad.Vector(0, 5, 25),
                                  name="Pivot")
    factory.orient_marker(m_frame, z=(1, 0, 0))
    hinge = factory.make_hinge(doc, mech, "revolute", m_link, m_frame, name="Joint")
    doc.recompute()
    return dict(mech=mech, frame=frame, link=link, ground=ground, body=body, m_link=m_link,
                m_frame=m_frame, hinge=hinge)


# --- objects and properties ------------------------------------------------------------------

def test_every_object_has_its_type_version_and_no_problem(freecad, doc):
    from MultibodyWB.document import factory
    from MultibodyWB.objects import export
    from MultibodyWB.objects.base import type_of
    p = _pendulum(freecad, doc)
    force = factory.make_force(doc, p["mech"], "point_force", p["m_link"], magnitude="2*t",
                               direction=(0, 0, -1), name="Push")
    doc.recompute()
    sim = [o for o in p["mech"].Group if type_of(o) == "Multibody::Simulation"]
    objects = {"Multibody::Mechanism": p["mech"], "Multibody::Body": p["body"],
               "Multibody::Marker": p["m_link"], "Multibody::Hinge": p["hinge"],
               "Multibody::Force": force, "Multibody::Simulation": sim[0]}
    for type_name, obj in objects.items():
        assert type_of(obj) == type_name
        assert obj.Version == obj.Proxy.VERSION
        assert obj.Problem == ""
        assert obj.getEditorMode("Problem") == ["ReadOnly"]
        assert obj.Proxy.dumps() is None
    assert p["mech"].Ground == p["ground"]
    assert set(p["mech"].Group) >= {p["ground"], p["body"], p["m_link"], p["hinge"], force}
    export.to_model(p["mech"])          # valid: no exception


def test_adding_properties_is_safe_to_repeat(freecad, doc):
    p = _pendulum(freecad, doc)
    for obj in (p["mech"], p["body"], p["m_link"], p["hinge"]):
        before = {name: str(getattr(obj, name)) for name in obj.PropertiesList}
        obj.Proxy.add_properties(obj)
        obj.Proxy.add_properties(obj)
        assert {name: str(getattr(obj, name)) for name in obj.PropertiesList} == before


def test_hinges_of_version_1_keep_drivers_and_springs_measured_from_zero(freecad, doc, tmp_path):
    """Before version 2 a driver gave the coordinate itself and a spring was relaxed at zero;
    a reopened old hinge keeps that meaning, a new one measures both from the drawing."""
    from MultibodyWB.objects import export
    from MultibodyWB.objects.hinge import HingeProxy
    p = _pendulum(freecad, doc)
    hinge = p["hinge"]
    hinge.DriverRz = "2*pi*t"
    hinge.StiffnessRz = "2 N*m/rad"
    assert hinge.DriverFromDrawing and hinge.SpringReferenceAsDrawn         # new hinges
    h = export.to_model(p["mech"]).hinge("Joint")
    assert h.drivers[0].from_start and h.spring_reference_start
    for name in ("DriverFromDrawing", "SpringReferenceAsDrawn"):             # as version 1 saved it
        hinge.setPropertyStatus(name, "-LockDynamic")
        hinge.removeProperty(name)
    hinge.Version = 1
    path = str(tmp_path / "v1.FCStd")
    doc.saveAs(path)
    freecad.closeDocument(doc.Name)
    reopened = freecad.openDocument(path)
    try:
        hinge = reopened.getObject("Joint")
        assert hinge.Version == HingeProxy.VERSION
        assert hinge.DriverFromDrawing is False and hinge.SpringReferenceAsDrawn is False
        h = export.to_model(reopened.getObject("Pendulum")).hinge("Joint")
        assert not h.drivers[0].from_start and not h.spring_reference_start
        assert h.spring_reference is None                     # relaxed at zero, as before
    finally:
        freecad.closeDocument(reopened.Name)


def test_a_motor_exports_in_si_and_round_trips_through_the_neutral_file(freecad, doc):
    from MultibodyWB.document import import_model
    from MultibodyWB.objects import export
    from MultibodyWB.solver.model import Motor
    p = _pendulum(freecad, doc)
    hinge = p["hinge"]
    hinge.MotorSpeedRz = "360 deg/s"                       # 60 rpm
    hinge.MotorRampTimeRz = "0.2 s"
    doc.recompute()
    model = export.to_model(p["mech"])
    (motor,) = model.hinge("Joint").motors
    assert motor.coordinate == "rz"
    assert motor.speed == pytest.approx(2 * np.pi, rel=1e-12)
    assert motor.ramp_time == pytest.approx(0.2, rel=1e-12)
    assert model.hinge("Joint").drivers == []
    mech2 = import_model.from_model(doc, model, name="Again")
    hinge2 = [o for o in mech2.Group if o.Proxy.Type == "Multibody::Hinge"][0]
    assert float(hinge2.MotorSpeedRz.getValueAs("deg/s")) == pytest.approx(360.0)
    assert hinge2.MotorRampTimeRz == "0.2 s"                # a time: a text with its unit
    assert export.to_model(mech2).hinge(hinge2.Label).motors == [Motor("rz", motor.speed, 0.2)]


def test_initial_values_marked_as_estimates_export_as_estimates(freecad, doc):
    from MultibodyWB.document import import_model
    from MultibodyWB.objects import export
    p = _pendulum(freecad, doc)
    hinge = p["hinge"]
    hinge.InitialAsDrawn = False
    hinge.InitialRz = "30 deg"
    hinge.InitialRateRz = "90 deg/s"
    h = export.to_model(p["mech"]).hinge("Joint")
    assert not h.initial_coordinates_estimate and not h.initial_rates_estimate   # prescribed
    hinge.InitialIsEstimate = True
    model = export.to_model(p["mech"])
    h = model.hinge("Joint")
    assert h.initial_coordinates_estimate and h.initial_rates_estimate
    mech2 = import_model.from_model(doc, model, name="Again")
    hinge2 = [o for o in mech2.Group if o.Proxy.Type == "Multibody::Hinge"][0]
    assert hinge2.InitialIsEstimate


def test_migrations_run_when_an_old_document_is_opened(freecad, doc, tmp_path, monkeypatch):
    """A version-1 hinge stored its stiffness in 'OldStiffness'; version 2 moves it."""
    from MultibodyWB.objects.hinge import HingeProxy
    p = _pendulum(freecad, doc)
    hinge = p["hinge"]
    hinge.setPropertyStatus("StiffnessRz", "-LockDynamic")
    hinge.removeProperty("StiffnessRz")
    hinge.addProperty("App::PropertyFloat", "OldStiffness", "Hinge", "old")
    hinge.OldStiffness = 12.5
    path = str(tmp_path / "old.FCStd")
    doc.saveAs(path)
    freecad.closeDocument(doc.Name)

    calls = []

    def to_next(proxy, obj):
        calls.append(obj.Name)
        proxy.add_properties(obj)
        obj.StiffnessRz = f"{obj.OldStiffness} N*m/rad"
        obj.removeProperty("OldStiffness")

    current = HingeProxy.VERSION
    monkeypatch.setattr(HingeProxy, "VERSION", current + 1)
    monkeypatch.setattr(HingeProxy, "MIGRATIONS", {current: to_next})
    reopened = freecad.openDocument(path)
    try:
        hinge = reopened.getObject("Joint")
        assert calls == ["Joint"]
        assert hinge.Version == current + 1
        assert "OldStiffness" not in hinge.PropertiesList
        assert hinge.StiffnessRz == "12.5 N*m/rad"
    finally:
        freecad.closeDocument(reopened.Name)


def test_enumerations_are_the_solver_tables(freecad, doc):
    from MultibodyWB.document import factory
    p = _pendulum(freecad, doc)
    force = factory.make_force(doc, p["mech"], "point_force", p["m_link"])
    sim = [o for o in p["mech"].Group if o.Proxy.Type == "Multibody::Simulation"][0]
    assert p["hinge"].getEnumerationsOfProperty("HingeType") == list(HINGE_TYPES)
    assert force.getEnumerationsOfProperty("ForceType") == list(FORCE_TYPES)
    assert sim.getEnumerationsOfProperty("Method") == list(METHODS)
    assert sim.getEnumerationsOfProperty("Integrator") == list(INTEGRATORS)


@pytest.mark.parametrize("hinge_type", sorted(HINGE_TYPES))
def test_hinge_shows_the_coordinates_and_options_of_its_type(freecad, doc, hinge_type):
    from MultibodyWB.objects.hinge import (COORDINATES, OPTION_PROPERTIES, STOP_PREFIXES,
                                           property_name)
    p = _pendulum(freecad, doc)
    hinge = p["hinge"]
    hinge.HingeType = hinge_type
    kind = HINGE_TYPES[hinge_type]
    for use_limits in (False, True):
        hinge.UseLimits = use_limits
        for c in COORDINATES:
            for option in OPTION_PROPERTIES:
                shown = c in kind.coordinates and option.option in kind.options
                if option.prefix == "SpringReference":    # relaxed as drawn: no values to show
                    shown = shown and not hinge.SpringReferenceAsDrawn
                if option.prefix in STOP_PREFIXES:        # the stops, with the limits on
                    shown = shown and use_limits
                mode = hinge.getEditorMode(property_name(option.prefix, c))
                assert ("Hidden" not in mode) == shown, (hinge_type, c, option.prefix)
    assert ("Hidden" not in hinge.getEditorMode("UseLimits")) == ("limits" in kind.options)
    assert ("Hidden" not in hinge.getEditorMode("DriverFromDrawing")) == \
        ("driver" in kind.options)
    hinge.SpringReferenceAsDrawn = False
    for c in kind.coordinates:
        mode = hinge.getEditorMode(property_name("SpringReference", c))
        assert ("Hidden" not in mode) == ("stiffness" in kind.options)
    assert ("Hidden" not in hinge.getEditorMode("InitialAsDrawn")) == ("initial" in kind.options)


@pytest.mark.parametrize("force_type", sorted(FORCE_TYPES))
def test_force_shows_the_fields_of_its_type(freecad, doc, force_type):
    from MultibodyWB.document import factory
    from MultibodyWB.objects.force import FIELD_PROPERTIES, field_properties
    p = _pendulum(freecad, doc)
    force = factory.make_force(doc, p["mech"], force_type, p["m_link"], p["m_frame"])
    kind = FORCE_TYPES[force_type]
    used = {name for f in kind.fields for name in field_properties(force_type, f)}
    for names in FIELD_PROPERTIES.values():
        for name in names:
            assert ("Hidden" not in force.getEditorMode(name)) == (name in used), name
    assert ("Hidden" not in force.getEditorMode("OutputMarker")) == (kind.markers == 2)


def test_force_properties_have_the_units_of_the_solver_table(freecad):
    from MultibodyWB.objects import units
    from MultibodyWB.objects.force import FIELD_PROPERTIES, ForceProxy
    for kind in FORCE_TYPES.values():
        for field in kind.fields:
            unit = kind.units.get(field, "1")
            prop = ForceProxy.prop(FIELD_PROPERTIES[(field, unit)][0])
            if prop.type == units.QUANTITY:
                assert prop.si == units.model_unit(unit), (kind.name, field)
                assert units.unit(prop.si) == units.unit(prop.unit)


# --- units ------------------------------------------------------------------------------------

def test_properties_show_freecad_units_and_export_in_si(freecad, doc):
    from MultibodyWB.document import factory
    from MultibodyWB.objects import export
    p = _pendulum(freecad, doc)
    mech, hinge = p["mech"], p["hinge"]
    hinge.StiffnessRz = "12 N*m/rad"
    hinge.DampingRz = "0.5 N*m*s/rad"
    hinge.SpringReferenceAsDrawn = False
    hinge.SpringReferenceRz = "10 deg"
    hinge.InitialAsDrawn = False
    hinge.InitialRz = "30 deg"
    hinge.InitialRateRz = "360 deg/s"
    hinge.UseLimits = True
    hinge.LowerLimitRz, hinge.UpperLimitRz = "-90 deg", "2 rad"
    # N m/rad is a text with its unit (FreeCAD would spell it mm^2*kg/(s^2*deg)), degrees a
    # quantity
    assert hinge.StiffnessRz == "12 N*m/rad"
    assert hinge.InitialRz.Unit == freecad.Units.Unit("deg")
    p["body"].InitialVelocity = "0 0 250"                            # mm/s
    p["body"].InitialAngularVelocity = "0, 90, 0 deg/s"
    assert p["body"].InitialVelocity == "0, 0, 250 mm/s"            # completed with its unit
    spring = factory.make_force(doc, mech, "spring_damper", p["m_link"], p["m_frame"],
                                stiffness="3 N/mm", damping=40, free_length=25,
                                name="Spring")
    torsion = factory.make_force(doc, mech, "rotational_spring_damper", p["m_link"],
                                 p["m_frame"], stiffness=7, damping="2 N*mm*s/rad",
                                 name="Torsion")
    sim = [o for o in mech.Group if o.Proxy.Type == "Multibody::Simulation"][0]
    sim.EndTime, sim.Step = "0.5 s", "0.2 ms"
    doc.recompute()
    model = export.to_model(mech)
    h = model.hinge("Joint")
    assert h.stiffness == pytest.approx([12.0])
    assert h.damping == pytest.approx([0.5])
    assert h.spring_reference == pytest.approx([np.radians(10)])
    assert h.initial_coordinates == pytest.approx([np.radians(30)])
    assert h.initial_rates == pytest.approx([2 * np.pi])
    assert h.lower_limits == pytest.approx([-np.pi / 2])
    assert h.upper_limits == pytest.approx([2.0])
    s = next(f for f in model.forces if f.name == "Spring")
    assert (s.stiffness, s.damping, s.free_length) == pytest.approx((3000.0, 40.0, 0.025))
    t = next(f for f in model.forces if f.name == "Torsion")
    assert (t.stiffness, t.damping) == pytest.approx((7.0, 0.002))
    assert spring.Stiffness.Unit == freecad.Units.Unit("N/m")
    assert "Hidden" in torsion.getEditorMode("Stiffness")
    b = model.body("Link")
    assert b.initial_velocity == pytest.approx([0, 0, 0.25])
    assert b.initial_angular_velocity == pytest.approx([0, np.pi / 2, 0])
    assert model.gravity == pytest.approx([0, 0, -9.81])
    assert mech.Gravity == "0, 0, -9810 mm/s^2"
    assert (model.simulation.end_time, model.simulation.step) == pytest.approx((0.5, 2e-4))
    # lengths: mm to m
    assert b.position == pytest.approx([0, 0, 0.02])
    assert model.body("Link").markers[0].frame.position == pytest.approx([0, 0.005, 0.005])


# --- markers ----------------------------------------------------------------------------------

def _frame(marker):
    z = marker.Placement.Rotation.multVec(marker.Placement.Base.__class__(0, 0, 1))
    return marker.Placement.Base, z


PICKS = {
    # kind: (solid, sub-element, MapMode, origin (mm, global), z axis or None)
    "circle": ("Cyl", "Edge2", "Concentric", (10, 0, 0), (0, -1, 0)),         # base circle
    "cylinder": ("Cyl", "Face1", "Concentric", (10, -10, 0), (0, -1, 0)),     # its circles' axis
    "cone": ("Cone", "Face1", "Concentric", (0, 0, -50 + 40 / 9), (0, 0, 1)),  # the centroid
    "torus": ("Ring", "Face1", "ObjectXY", (60, 0, 0), (-1, 0, 0)),       # the surface's axis
    "plane": ("Cyl", "Face3", "FlatFace", (10, -20, 0), (0, -1, 0)),          # top, outward
    "line": ("Blk", "Edge1", "NormalToEdge", (-50, 0, 5), (0, 0, -1)),
    "vertex": ("Blk", "Vertex1", "Translate", (-50, 0, 10), (0, 0, 1)),
    "sphere": ("Ball", "Face1", "ObjectXY", (0, 50, 0), (0, 0, 1)),
    "object": ("Blk", None, "ObjectXY", (-50, 0, 0), (0, 0, 1)),
}


@pytest.fixture
def pick_solids(freecad, doc):
    from MultibodyWB.document import factory
    cyl = doc.addObject("Part::Cylinder", "Cyl")         # axis along -y, base at (10, 0, 0)
    cyl.Radius, cyl.Height = 5, 20
    cyl.Placement = freecad.Placement(freecad.Vector(10, 0, 0),
                                      freecad.Rotation(freecad.Vector(1, 0, 0), 90))
    blk = _box(doc, "Blk", placement=freecad.Placement(freecad.Vector(-50, 0, 0),
                                                       freecad.Rotation()))
    ball = doc.addObject("Part::Sphere", "Ball")
    ball.Radius = 8
    ball.Placement.Base = freecad.Vector(0, 50, 0)
    cone = doc.addObject("Part::Cone", "Cone")         # axis along z from z = -50 to -40
    cone.Radius1, cone.Radius2, cone.Height = 6, 3, 10
    cone.Placement.Base = freecad.Vector(0, 0, -50)
    ring = doc.addObject("Part::Torus", "Ring")        # axis along x through (60, 0, 0)
    ring.Radius1, ring.Radius2 = 10, 2
    ring.Placement = freecad.Placement(freecad.Vector(60, 0, 0),
                                       freecad.Rotation(freecad.Vector(0, 1, 0), 90))
    doc.recompute()
    mech = factory.make_mechanism(doc, "Picks")
    body = factory.make_body(doc, mech, [blk, cyl, ball, cone, ring], name="Picked")
    return {"Cyl": cyl, "Blk": blk, "Ball": ball, "Cone": cone, "Ring": ring, "body": body}


@pytest.mark.parametrize("kind", sorted(PICKS))
def test_marker_attachment_mode_follows_the_picked_geometry(freecad, doc, pick_solids, kind):
    from MultibodyWB.document import factory
    solid_name, sub, mode, origin, z = PICKS[kind]
    solid = pick_solids[solid_name]
    marker = factory.make_marker(doc, pick_solids["body"], (solid, sub) if sub else (solid, None))
    doc.recompute()
    assert marker.MapMode == mode
    assert marker.PickedGeometry == kind
    base, axis = _frame(marker)
    assert tuple(base) == pytest.approx(origin, abs=1e-9)
    assert tuple(axis) == pytest.approx(z, abs=1e-9)
    assert marker.Problem == ""


def test_marker_follows_the_solid(freecad, doc, pick_solids):
    """Edited or moved, the solid carries its markers, whole frames."""
    from MultibodyWB.document import factory
    from MultibodyWB.objects.marker import marker_frame
    cyl = pick_solids["Cyl"]
    bore = factory.make_marker(doc, pick_solids["body"], (cyl, "Face1"))
    rim = factory.make_marker(doc, pick_solids["body"], (cyl, "Edge3"))      # top circle
    top = factory.make_marker(doc, pick_solids["body"], (cyl, "Face3"))      # top face
    doc.recompute()
    cyl.Height = 30                                            # the solid changes
    doc.recompute()
    assert tuple(bore.Placement.Base) == pytest.approx((10, -15, 0), abs=1e-9)
    assert tuple(rim.Placement.Base) == pytest.approx((10, -30, 0), abs=1e-9)
    assert tuple(top.Placement.Base) == pytest.approx((10, -30, 0), abs=1e-9)
    # moved and turned with the body: the same frames in the body's base frame
    before = {m.Name: marker_frame(m) for m in (bore, rim, top)}
    for solid in pick_solids["body"].Solids:
        solid.Placement = freecad.Placement(freecad.Vector(3, 4, 5),
                                            freecad.Rotation(freecad.Vector(1, 1, 1), 50)) \
            .multiply(solid.Placement)
    doc.recompute()
    for m in (bore, rim, top):
        after = marker_frame(m)
        assert tuple(after.Base) == pytest.approx(tuple(before[m.Name].Base), abs=1e-9)
        assert after.Rotation.isSame(before[m.Name].Rotation, 1e-12), m.Label


def test_orient_marker_keeps_the_origin_and_follows_the_solid(freecad, doc, pick_solids):
    from MultibodyWB.document import factory
    cyl = pick_solids["Cyl"]
    marker = factory.make_marker(doc, pick_solids["body"], (cyl, "Face1"))
    factory.orient_marker(marker, z=(0, -1, 0), x=(0, 0, 1))
    doc.recompute()
    rot = marker.Placement.Rotation
    assert tuple(marker.Placement.Base) == pytest.approx((10, -10, 0), abs=1e-9)
    assert tuple(rot.multVec(freecad.Vector(0, 0, 1))) == pytest.approx((0, -1, 0), abs=1e-12)
    assert tuple(rot.multVec(freecad.Vector(1, 0, 0))) == pytest.approx((0, 0, 1), abs=1e-12)
    cyl.Placement.Base = freecad.Vector(0, 0, 0)
    doc.recompute()
    assert tuple(marker.Placement.Base) == pytest.approx((0, -10, 0), abs=1e-9)


# --- the crank-slider engine built from FreeCAD solids ------------------------------------------

@pytest.fixture
def engine(freecad, doc):
    from MultibodyWB.examples_fc import crank_slider
    return crank_slider.setup(doc)


def test_crank_slider_has_no_problem_and_passes_the_solver_check(freecad, doc, engine, tmp_path,
                                                                 capsys):
    from MultibodyWB.objects import export
    from MultibodyWB.solver import cli
    assert [(o.Label, o.Problem) for o in [engine] + engine.Group if o.Problem] == []
    path = tmp_path / "crank_slider_fc.mbs.xml"
    export.write(engine, path)
    assert cli.main(["check", str(path)]) == 0
    assert f"{path}: valid" in capsys.readouterr().out


def test_crank_slider_matches_the_code_built_engine(freecad, doc, engine):
    """Same topology, mass properties, base frames, hinge points, loads and settings.

    The bushes and pins fill the links' bores exactly, so the masses agree to the round-off of
    OCC's Boolean operations (1e-12 here), far inside the 1e-6 asked for.
    """
    from MultibodyWB.objects import export
    from MultibodyWB.examples import build
    from MultibodyWB.solver.analysis.kinematics import hinge_coordinates, hinge_residual, mobility
    from MultibodyWB.solver.maths.rotations import bryant_to_matrix
    from MultibodyWB.solver.analysis.topology import analyse
    model, code = export.to_model(engine), build("crank_slider")
    topo, code_topo = analyse(model), analyse(code)
    assert topo.number == code_topo.number
    assert topo.cut_hinges == code_topo.cut_hinges == ("BigEnd",)
    assert [loop.path for loop in topo.loops] == [loop.path for loop in code_topo.loops]
    mob, code_mob = mobility(model, topo), mobility(code, code_topo)
    assert (topo.dof_gruebler, mob.dof, mob.redundant) == \
        (code_topo.dof_gruebler, code_mob.dof, code_mob.redundant) == (1, 1, 0)
    assert [(h.name, h.type, str(h.input), str(h.output)) for h in model.hinges] == \
        [(h.name, h.type, str(h.input), str(h.output)) for h in code.hinges]
    for b in code.bodies:
        fb = model.body(b.name)
        assert fb.mass == pytest.approx(b.mass, rel=1e-9)
        np.testing.assert_allclose(fb.inertia, b.inertia, rtol=1e-9,
                                   atol=1e-9 * np.abs(b.inertia).max())
        np.testing.assert_allclose(fb.mass_center.position, b.mass_center.position, atol=1e-12)
        np.testing.assert_allclose(fb.position, b.position, atol=1e-12)
        np.testing.assert_allclose(bryant_to_matrix(fb.orientation),
                                   bryant_to_matrix(b.orientation), atol=1e-12)
        assert fb.density == pytest.approx(b.density, rel=1e-12)
    for h in model.hinges:
        # assembled as drawn: every hinge's constraint holds in the drawn configuration
        np.testing.assert_allclose(hinge_residual(model, h), 0.0, atol=1e-12, err_msg=h.name)
        code_h = code.hinge(h.name)
        for end in ("input", "output"):
            ref, code_ref = getattr(h, end), getattr(code_h, end)
            if h.name == "Cylinder":
                continue     # the slide frames sit elsewhere on the cylinder axis (crown, liner)
            p, _ = model.part(ref.body).marker_global(ref.marker)
            q, _ = code.part(code_ref.body).marker_global(code_ref.marker)
            np.testing.assert_allclose(p, q, atol=1e-12, err_msg=f"{h.name} {end}")
    # the same driver, measured from the drawing in FreeCAD; the crank is drawn at 0 in both
    (drv,), (code_drv,) = model.hinge("MainBearing").drivers, code.hinge("MainBearing").drivers
    assert (drv.coordinate, drv.expression) == (code_drv.coordinate, code_drv.expression)
    assert drv.from_start and not code_drv.from_start
    assert hinge_coordinates(model, "MainBearing") == pytest.approx([0.0], abs=1e-12)
    (gas,), (code_gas,) = model.forces, code.forces
    assert (gas.name, gas.type, gas.magnitude, gas.frame) == \
        (code_gas.name, code_gas.type, code_gas.magnitude, code_gas.frame)
    np.testing.assert_allclose(gas.direction, code_gas.direction)
    p, _ = model.part("Piston").marker_global(gas.input.marker)
    q, _ = code.part("Piston").marker_global(code_gas.input.marker)
    np.testing.assert_allclose(p, q, atol=1e-12)
    assert model.simulation == code.simulation
    np.testing.assert_allclose(model.gravity, code.gravity)
    assert model.description == code.description


def _assert_same_model(a, b, tol=1e-12):
    """Two neutral models equal up to round-off (names, structure and every number)."""
    from MultibodyWB.solver.maths.rotations import bryant_to_matrix
    assert [g.name for g in a.grounds] == [g.name for g in b.grounds]
    assert [x.name for x in a.bodies] == [x.name for x in b.bodies]
    for pa, pb in zip(list(a.grounds) + list(a.bodies), list(b.grounds) + list(b.bodies)):
        assert pa.label == pb.label
        np.testing.assert_allclose(pa.position, pb.position, atol=tol)
        np.testing.assert_allclose(bryant_to_matrix(pa.orientation),
                                   bryant_to_matrix(pb.orientation), atol=tol)
        assert [(m.id, m.label) for m in pa.markers] == [(m.id, m.label) for m in pb.markers]
        for ma, mb in zip(pa.markers, pb.markers):
            np.testing.assert_allclose(ma.frame.position, mb.frame.position, atol=tol)
            np.testing.assert_allclose(ma.frame.rotation, mb.frame.rotation, atol=tol)
        if hasattr(pa, "mass"):
            assert pa.mass == pytest.approx(pb.mass, rel=1e-9)
            np.testing.assert_allclose(pa.inertia, pb.inertia, rtol=1e-9,
                                       atol=1e-9 * np.abs(pb.inertia).max())
            np.testing.assert_allclose(pa.mass_center.position, pb.mass_center.position,
                                       atol=tol)
    assert [(h.name, h.type, str(h.input), str(h.output), h.label) for h in a.hinges] == \
        [(h.name, h.type, str(h.input), str(h.output), h.label) for h in b.hinges]
    for ha, hb in zip(a.hinges, b.hinges):
        assert ha.drivers == hb.drivers
        for attr in ha._VECTORS:
            va, vb = getattr(ha, attr), getattr(hb, attr)
            assert (va is None) == (vb is None), (ha.name, attr)
            if va is not None:
                np.testing.assert_allclose(va, vb, rtol=1e-12)
    assert [(f.name, f.type, str(f.input), str(f.output), f.magnitude, f.frame) for f in
            a.forces] == [(f.name, f.type, str(f.input), str(f.output), f.magnitude, f.frame)
                          for f in b.forces]
    assert a.simulation == b.simulation
    np.testing.assert_allclose(a.gravity, b.gravity)
    assert (a.name, a.description) == (b.name, b.description)


def test_crank_slider_import_rebuilds_the_same_objects(freecad, doc, engine, tmp_path):
    from MultibodyWB.document import import_model
    from MultibodyWB.objects import export
    from MultibodyWB.objects.base import type_of
    path = tmp_path / "engine.mbs.xml"
    first = export.write(engine, path)
    other = freecad.newDocument("Imported")
    try:
        mech = import_model.import_file(other, str(path))
        assert [(o.Label, o.Problem) for o in [mech] + mech.Group if o.Problem] == []

        def inventory(mechanism):
            return sorted((type_of(o), o.Label2 or o.Label) for o in mechanism.Group
                          if type_of(o) != "Multibody::Marker") + \
                sorted((o.Body.Label, o.MarkerId, o.Label2) for o in mechanism.Group
                       if type_of(o) == "Multibody::Marker")

        assert inventory(mech) == inventory(engine)
        assert mech.Ground.Label == engine.Ground.Label == "Ground"
        hinge = other.getObject("MainBearing")
        assert (hinge.HingeType, hinge.DriverRz, hinge.InputMarker.Body.Label,
                hinge.OutputMarker.Body.Label) == ("revolute", engine.Document.getObject(
                    "MainBearing").DriverRz, "Crank", "Ground")
        _assert_same_model(export.to_model(mech), first)
    finally:
        freecad.closeDocument(other.Name)


def _snapshot(doc):
    """Every Multibody object's properties (and attachment), as comparable plain values."""
    from MultibodyWB.objects.base import type_of
    from MultibodyWB.objects.marker import support_property
    import FreeCAD

    def plain(v):
        if isinstance(v, FreeCAD.Units.Quantity):
            return ("Q", v.Value, str(v.Unit))
        if isinstance(v, FreeCAD.Vector):
            return ("V",) + tuple(v)
        if isinstance(v, FreeCAD.Placement):
            return ("P",) + tuple(v.Base) + tuple(v.Rotation.Q)
        if isinstance(v, (list, tuple)):
            return tuple(plain(x) for x in v)
        if isinstance(v, dict):
            return tuple(sorted((k, plain(x)) for k, x in v.items()))
        if hasattr(v, "TypeId") and hasattr(v, "Name"):
            return ("O", v.Name)
        return v

    out = {}
    for obj in doc.Objects:
        if type_of(obj) is None:
            continue
        names = [p.name for p in obj.Proxy.properties()] + ["Label", "Label2"]
        if type_of(obj) == "Multibody::Marker":
            names += [support_property(obj), "MapMode", "MapReversed", "MapPathParameter",
                      "AttachmentOffset", "Placement"]
        out[obj.Name] = (type_of(obj), {n: plain(getattr(obj, n)) for n in names})
    return out


def _assert_same_values(a, b, path=""):
    if isinstance(a, float) or isinstance(b, float):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-12), path
    elif isinstance(a, tuple) and isinstance(b, tuple):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_same_values(x, y, f"{path}[{i}]")
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for k in a:
            _assert_same_values(a[k], b[k], f"{path}.{k}")
    else:
        assert a == b, path


def test_crank_slider_survives_save_close_and_reopen(freecad, doc, engine, tmp_path):
    from MultibodyWB.objects import export
    from MultibodyWB.objects.base import type_of
    before, model, name = _snapshot(doc), export.to_model(engine), engine.Name
    path = str(tmp_path / "engine.FCStd")
    doc.saveAs(path)
    freecad.closeDocument(doc.Name)
    reopened = freecad.openDocument(path)
    try:
        after = _snapshot(reopened)
        assert sorted(after) == sorted(before)
        for obj_name in before:
            assert after[obj_name][0] == before[obj_name][0]
            _assert_same_values(after[obj_name][1], before[obj_name][1], obj_name)
        assert not [o.Name for o in reopened.Objects if type_of(o) and "Touched" in o.State]
        mech = reopened.getObject(name)
        _assert_same_model(export.to_model(mech), model)
        reopened.recompute()
        _assert_same_model(export.to_model(mech), model)
        assert [(o.Label, o.Problem) for o in [mech] + mech.Group if o.Problem] == []
    finally:
        freecad.closeDocument(reopened.Name)


# --- bad input ---------------------------------------------------------------------------------

def _problems_of(obj):
    return obj.Problem.split("\n") if obj.Problem else []


def test_body_without_a_solid(freecad, doc, errors):
    from MultibodyWB.document import factory
    from MultibodyWB.objects import export
    p = _pendulum(freecad, doc)
    empty = factory.make_body(doc, p["mech"], [], name="Empty")
    doc.recompute()
    assert any(line.startswith("Solids: no solid is linked") for line in _problems_of(empty))
    assert errors == []           # a state while building, not an error (listed at export)
    with pytest.raises(ModelError) as exc:
        export.to_model(p["mech"])
    assert "Body 'Empty', property Solids: no solid is linked" in str(exc.value)


def test_body_of_zero_volume_and_bad_density(freecad, doc, errors):
    import Part
    from MultibodyWB.document import factory
    from MultibodyWB.objects import export
    p = _pendulum(freecad, doc)
    sheet = doc.addObject("Part::Feature", "Sheet")
    sheet.Shape = Part.makePlane(10, 10)
    flat = factory.make_body(doc, p["mech"], sheet, name="Flat")
    p["body"].Density = 0
    doc.recompute()
    assert "Solids: 'Sheet' has no volume (it holds no solid)" in _problems_of(flat)
    assert any(line.startswith("Density: 0 kg/m^3; the density must be positive")
               for line in _problems_of(p["body"]))
    messages = [str(x) for x in export.collect(p["mech"]).problems]
    assert "Body 'Flat', property Solids: 'Sheet' has no volume (it holds no solid)" in messages
    assert any(m.startswith("Body 'Link', property Density:") for m in messages)
    p["body"].DensitySource = "Material"
    p["body"].Material = {"Name": "Unobtainium"}
    twice = factory.make_body(doc, p["mech"], p["link"], name="Twice")     # Link's solid again
    doc.recompute()
    assert any(line.startswith("Material: the material card has no Density")
               for line in _problems_of(p["body"]))
    assert "Solids: 'LinkSolid' is also a solid of body 'Link'" in _problems_of(twice)


def test_marker_whose_face_no_longer_exists(freecad, doc, errors, warnings):
    """Topological naming: the solid is rebuilt with fewer faces; the marker says so and keeps
    everything (its support still names the face, its last placement stays)."""
    import Part
    from MultibodyWB.document import factory
    from MultibodyWB.objects import export
    from MultibodyWB.objects.marker import support_property
    p = _pendulum(freecad, doc)
    part = doc.addObject("Part::Feature", "Bracket")
    part.Shape = Part.makeBox(10, 10, 10)
    body = factory.make_body(doc, p["mech"], part, name="BracketBody")
    marker = factory.make_marker(doc, body, (part, "Face6"), name="OnFace6")
    factory.make_hinge(doc, p["mech"], "fixed", marker, p["m_link"], name="Weld")
    doc.recompute()
    assert marker.Problem == ""
    placement = marker.Placement
    part.Shape = Part.makeCylinder(5, 10)             # three faces: Face6 is gone
    doc.recompute()
    assert "Invalid" in marker.State                    # FreeCAD's own mark
    support = support_property(marker)      # Support (0.20), AttachmentSupport (1.0)
    assert _problems_of(marker) == [f"{support}: 'Face6' no longer exists on 'Bracket' (the "
                                    "solid's topology changed): pick the face, edge or vertex "
                                    "again"]
    # a change the user did not make on the marker: said once, as a warning
    assert [w for w in warnings if "Marker 'OnFace6'" in w] == [
        f"MultibodyWB: Marker 'OnFace6', property {support}: 'Face6' no longer exists on "
        "'Bracket' (the solid's topology changed): pick the face, edge or vertex again\n"]
    assert errors == []
    assert getattr(marker, support_property(marker)) == [(part, ("Face6",))]
    assert marker.PickedElement == "Bracket.Face6"
    assert marker.Placement.Base == placement.Base
    assert marker.Placement.Rotation.isSame(placement.Rotation, 1e-15)
    with pytest.raises(ModelError, match=f"Marker 'OnFace6', property {support}"):
        export.to_model(p["mech"])


def test_marker_whose_edge_became_another_kind(freecad, doc, errors):
    import Part
    from MultibodyWB.document import factory
    from MultibodyWB.objects.marker import support_property
    p = _pendulum(freecad, doc)
    part = doc.addObject("Part::Feature", "Shaft")
    part.Shape = Part.makeCylinder(5, 10)
    body = factory.make_body(doc, p["mech"], part, name="ShaftBody")
    n = 1 + next(i for i, e in enumerate(part.Shape.Edges) if type(e.Curve).__name__ == "Circle")
    marker = factory.make_marker(doc, body, (part, f"Edge{n}"), name="Rim")
    assert marker.PickedGeometry == "circle"
    part.Shape = Part.makeBox(10, 10, 10)                                # every edge: a line
    doc.recompute()
    assert _problems_of(marker) == [f"{support_property(marker)}: 'Edge{n}' of 'Shaft' is now a "
                                    "line, it was a circle when picked (the solid's topology "
                                    "changed): pick it again"]


def test_hinge_with_one_marker_and_hinge_on_one_body(freecad, doc, errors):
    from MultibodyWB.document import factory
    from MultibodyWB.objects import export
    p = _pendulum(freecad, doc)
    other = factory.make_marker(doc, p["body"], (p["link"], "Face2"), name="OtherEnd")
    lonely = factory.make_hinge(doc, p["mech"], "revolute", p["m_link"], None, name="Lonely")
    same = factory.make_hinge(doc, p["mech"], "revolute", p["m_link"], other, name="SameBody")
    doc.recompute()
    assert _problems_of(lonely) == ["OutputMarker: is missing: name a body and a marker on it"]
    assert _problems_of(same) == ["OutputMarker: both markers are on 'Link'; a hinge joins two "
                                  "different bodies"]
    assert errors == []           # states while building; the export lists them
    assert p["hinge"].Problem == ""
    with pytest.raises(ModelError) as exc:
        export.to_model(p["mech"])
    text = str(exc.value)
    assert "Hinge 'Lonely', property OutputMarker: is missing" in text
    assert "Hinge 'SameBody', property OutputMarker: both markers are on 'Link'" in text


def test_export_lists_every_problem_at_once_and_loses_nothing(freecad, doc, errors):
    import Part
    from MultibodyWB.document import factory
    from MultibodyWB.objects import export
    from MultibodyWB.objects.marker import support_property
    p = _pendulum(freecad, doc)
    mech = p["mech"]
    empty = factory.make_body(doc, mech, [], name="Empty")
    part = doc.addObject("Part::Feature", "Bracket")
    part.Shape = Part.makeBox(10, 10, 10)
    bracket = factory.make_body(doc, mech, part, name="BracketBody")
    on_face = factory.make_marker(doc, bracket, (part, "Face6"), name="OnFace6")
    factory.make_hinge(doc, mech, "fixed", on_face, p["m_link"], name="Weld")
    factory.make_hinge(doc, mech, "revolute", p["m_link"], None, name="Lonely")
    factory.make_hinge(doc, mech, "spherical", None, p["m_frame"], name="NoInput")
    p["hinge"].DriverRz = "sin(("                     # the solver's expression check
    doc.recompute()
    part.Shape = Part.makeCylinder(5, 10)
    doc.recompute()
    before = _snapshot(doc)
    with pytest.raises(ModelError) as exc:
        export.to_model(mech)
    listed = [str(x) for x in exc.value.problems]
    expected = ["Body 'Empty', property Solids",
                f"Marker 'OnFace6', property {support_property(on_face)}",
                "Hinge 'Lonely', property OutputMarker", "Hinge 'NoInput', property InputMarker",
                "Hinge 'Joint', property DriverRz", "Body 'Empty': Hinge"]
    for start in expected:
        assert any(m.startswith(start) for m in listed), (start, listed)
    assert str(exc.value).startswith(f"{len(listed)} problems in the model:")
    _assert_same_values(_snapshot(doc), before)       # refusing to export changes nothing
    assert empty in mech.Group
    assert getattr(on_face, support_property(on_face)) == [(part, ("Face6",))]
