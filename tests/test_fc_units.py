"""Readable units (headless FreeCAD): every quantity property of a Hinge, Body, Force, Marker,
Mechanism and Simulation is shown with a unit a designer reads; quantities FreeCAD's unit schemas
cannot show readably are texts with their unit; files of the previous version are converted when
opened, and the export in SI is unchanged.
"""

import math
import re

import numpy as np
import pytest

pytestmark = pytest.mark.freecad

#: A unit spelled from FreeCAD's base units, which a designer cannot read.
BASE_UNITS = re.compile(r"mm\^\d\*kg|kg/s\b|/\(s\^\d|\*deg\)")
ZERO = re.compile(r"^[-+]?0[.,]0+(?:\s|$)")


@pytest.fixture
def doc(freecad):
    d = freecad.newDocument("Units")
    name = d.Name
    yield d
    if name in freecad.listDocuments():
        freecad.closeDocument(name)


@pytest.fixture
def model(freecad, doc):
    """A link on a revolute hinge with a torsion spring, a spring-damper, a small step."""
    from MultibodyWB.document import factory
    frame = doc.addObject("Part::Box", "FrameSolid")
    link = doc.addObject("Part::Box", "LinkSolid")
    link.Length, link.Width, link.Height = 100, 10, 10
    link.Placement.Base = freecad.Vector(0, 0, 20)
    doc.recompute()
    mech = factory.make_mechanism(doc)
    ground = factory.make_body(doc, mech, frame, ground=True, name="Ground")
    body = factory.make_body(doc, mech, link)
    m_link = factory.make_marker(doc, body, (link, "Face1"))
    m_frame = factory.make_marker(doc, ground, None, offset=freecad.Vector(0, 5, 25))
    factory.orient_marker(m_frame, z=(1, 0, 0))
    hinge = factory.make_hinge(doc, mech, "revolute", m_link, m_frame, stiffness=[2],
                               damping=[0.05])
    spring = factory.make_force(doc, mech, "spring_damper", m_link, m_frame, stiffness=1000,
                                damping=10)
    torsion = factory.make_force(doc, mech, "rotational_spring_damper", m_link, m_frame,
                                 stiffness=3, damping=0.2)
    sim = [o for o in mech.Group if o.Proxy.Type == "Multibody::Simulation"][0]
    sim.Step = "1e-5 s"
    doc.recompute()
    return dict(mech=mech, ground=ground, body=body, m_link=m_link, m_frame=m_frame,
                hinge=hinge, spring=spring, torsion=torsion, sim=sim)


def displayed(obj):
    """{property: text as the property editor shows it} of the visible quantity properties."""
    shown = {}
    for name in obj.PropertiesList:
        if "Hidden" in obj.getEditorMode(name):
            continue
        value = getattr(obj, name)
        if hasattr(value, "UserString"):
            shown[name] = value.UserString
        elif obj.getTypeIdOfProperty(name) == "App::PropertyString":
            shown[name] = value
        elif isinstance(value, float):
            shown[name] = f"{value:.2f}"
    return shown


def test_every_quantity_reads_at_a_glance(model):
    for key in ("hinge", "body", "spring", "torsion", "sim", "m_link", "mech"):
        texts = displayed(model[key])
        unreadable = {k: v for k, v in texts.items() if BASE_UNITS.search(v)}
        assert unreadable == {}, (key, unreadable)
    hinge, spring, torsion, sim = model["hinge"], model["spring"], model["torsion"], model["sim"]
    assert (hinge.StiffnessRz, hinge.DampingRz) == ("2 N*m/rad", "0.05 N*m*s/rad")
    assert spring.Stiffness.UserString.replace(",", ".") in ("1.00 kN/m", "1 kN/m")
    assert spring.Damping == "10 N*s/m"
    assert (torsion.RotationalStiffness, torsion.RotationalDamping) == ("3 N*m/rad",
                                                                          "0.2 N*m*s/rad")
    assert sim.Step == "1e-5 s" and sim.EndTime.endswith(" s")
    for name in ("RelativeTolerance", "AbsoluteTolerance", "Step", "OutputStep"):
        assert not ZERO.match(getattr(sim, name)), name
    body = model["body"]
    assert body.Ixx.endswith(" kg*mm^2") and float(body.Ixx.split()[0]) > 0.0
    assert not ZERO.match(body.Mass.UserString)


def test_a_bare_number_gets_its_unit_and_any_unit_of_the_dimension_is_kept(model):
    from MultibodyWB.objects.base import quantity_value
    from MultibodyWB.objects import units
    hinge, sim = model["hinge"], model["sim"]
    hinge.StiffnessRz = "5"
    assert hinge.StiffnessRz == "5 N*m/rad"
    hinge.StiffnessRz = "34.9066 N*mm/deg"          # = 2 N m/rad, as typed
    assert hinge.StiffnessRz == "34.9066 N*mm/deg"
    assert units.to_si(quantity_value(hinge, "StiffnessRz"), "N*m/rad") == \
        pytest.approx(2.0, rel=1e-5)
    sim.Step = "10 us"
    assert quantity_value(sim, "Step") == pytest.approx(1e-5)
    sim.OutputStep = "0.1 ms"
    assert quantity_value(sim, "OutputStep") == pytest.approx(1e-4)
    sim.RelativeTolerance = "1e-9"
    assert quantity_value(sim, "RelativeTolerance") == pytest.approx(1e-9)


def test_a_text_that_is_no_such_quantity_is_a_problem_naming_the_property(model):
    from MultibodyWB.document import factory
    from MultibodyWB.objects import export
    from MultibodyWB.solver.model import ModelError
    model["hinge"].StiffnessRz = "2 kg"
    model["sim"].EndTime = "abc"
    with pytest.raises(ModelError) as e:
        export.to_model(model["mech"])
    text = str(e.value)
    assert "property StiffnessRz: '2 kg' is not a quantity in N*m/rad (e.g. 2 N*m/rad)" in text
    assert "property EndTime: 'abc' is not a quantity in s" in text
    with pytest.raises(ValueError, match="property Damping: '1 mm' is not a quantity in N.s/m"):
        factory.make_force(model["mech"].Document, model["mech"], "spring_damper",
                           model["m_link"], model["m_frame"], damping="1 mm")


def test_export_in_si_is_unchanged(model):
    from MultibodyWB.objects import export
    model["hinge"].SpringReferenceRz = "10 deg"
    model["hinge"].SpringReferenceAsDrawn = False          # the reference typed, not the drawing
    m = export.to_model(model["mech"])
    h = m.hinges[0]
    assert h.stiffness == pytest.approx([2.0]) and h.damping == pytest.approx([0.05])
    assert h.spring_reference == pytest.approx([math.radians(10)])
    forces = {f.type: f for f in m.forces}
    assert forces["spring_damper"].stiffness == pytest.approx(1000.0)
    assert forces["spring_damper"].damping == pytest.approx(10.0)
    assert forces["rotational_spring_damper"].stiffness == pytest.approx(3.0)
    assert forces["rotational_spring_damper"].damping == pytest.approx(0.2)
    assert m.simulation.step == pytest.approx(1e-5)
    assert m.simulation.relative_tolerance == pytest.approx(1e-8)
    body = m.bodies[0]
    # a 100 x 10 x 10 mm steel box about its corner, in kg m^2
    mass = 7850 * 1e-5
    assert body.mass == pytest.approx(mass)
    assert body.inertia[0] == pytest.approx(mass * (0.01 ** 2 + 0.01 ** 2) / 3, rel=1e-9)
    assert body.inertia[3] == pytest.approx(-mass * 0.1 * 0.01 / 4, rel=1e-9)


def _as_saved_by_version_1(obj, name, type_name, value):
    """Make ``obj.<name>`` what version 1 saved: an App::PropertyQuantity or App::PropertyFloat."""
    obj.setPropertyStatus(name, "-LockDynamic")
    obj.removeProperty(name)
    obj.addProperty(type_name, name, "Old", "old")
    if hasattr(value, "Unit"):
        setattr(obj, name, value.Unit)
    setattr(obj, name, value)


def test_files_of_the_previous_version_open_with_the_same_values(freecad, doc, model, tmp_path):
    from MultibodyWB.objects import export
    before = export.to_model(model["mech"])
    Q = freecad.Units.Quantity
    _as_saved_by_version_1(model["hinge"], "StiffnessRz", "App::PropertyQuantity",
                           Q("2 N*m/rad"))
    _as_saved_by_version_1(model["hinge"], "DampingRz", "App::PropertyQuantity",
                           Q("0.05 N*m*s/rad"))
    _as_saved_by_version_1(model["spring"], "Damping", "App::PropertyQuantity", Q("10 N*s/m"))
    _as_saved_by_version_1(model["sim"], "Step", "App::PropertyQuantity", Q("1e-5 s"))
    _as_saved_by_version_1(model["sim"], "RelativeTolerance", "App::PropertyFloat", 1e-8)
    _as_saved_by_version_1(model["body"], "Ixy", "App::PropertyQuantity", Q("0 kg*mm^2"))
    doc.recompute()
    names = {key: model[key].Name for key in ("hinge", "sim", "spring", "mech")}
    path = str(tmp_path / "version1.FCStd")
    doc.saveAs(path)
    freecad.closeDocument(doc.Name)
    reopened = freecad.openDocument(path)
    try:
        hinge = reopened.getObject(names["hinge"])
        sim = reopened.getObject(names["sim"])
        spring = reopened.getObject(names["spring"])
        assert hinge.getTypeIdOfProperty("StiffnessRz") == "App::PropertyString"
        assert (hinge.StiffnessRz, hinge.DampingRz) == ("2 N*m/rad", "0.05 N*m*s/rad")
        assert spring.Damping == "10 N*s/m"
        assert (sim.Step, sim.RelativeTolerance) == ("1e-05 s", "1e-08")
        assert hinge.getGroupOfProperty("StiffnessRz") == "Coordinate rz"
        assert "Touched" not in hinge.State and "Touched" not in sim.State
        mech = reopened.getObject(names["mech"])
        reopened.recompute()
        after = export.to_model(mech)
        assert after.hinges[0].stiffness == pytest.approx(before.hinges[0].stiffness)
        assert after.hinges[0].damping == pytest.approx(before.hinges[0].damping)
        assert after.simulation.step == pytest.approx(before.simulation.step)
        assert after.simulation.relative_tolerance == pytest.approx(1e-8)
        assert np.allclose(after.bodies[0].inertia, before.bodies[0].inertia)
    finally:
        freecad.closeDocument(reopened.Name)


def test_messages_show_si_values_in_the_documents_units(freecad):
    from MultibodyWB.objects import units
    assert units.shown(0.0101, "m") == "10.10 mm"
    assert units.shown(0.5, "rad").replace("\u00b0", "deg") in ("28.65 deg", "28.65 \u00b0")
    assert units.text(units.parse("2 N*m/rad", "N*m/rad"), "N*m/rad") == "2 N*m/rad"
    assert units.normalize(" 3 ", "N*s/m") == "3 N*s/m"
    assert units.normalize("x", "s") is None
    assert units.parse("1,5 s", "s") == pytest.approx(1.5)
    assert units.parse("2 min", "s") == pytest.approx(120.0)
    with pytest.raises(ValueError, match="'10 ms' is not a quantity in N.m/rad"):
        units.parse("10 ms", "N*m/rad")


def test_vectors_show_their_unit_and_export_in_si(freecad, doc, model):
    from MultibodyWB.objects import export
    body = model["body"]
    assert body.InitialVelocity == "0, 0, 0 mm/s"
    assert body.InitialAngularVelocity == "0, 0, 0 deg/s"
    body.InitialVelocity = "(0, 0, 0.25) m/s"
    body.InitialAngularVelocity = "0 90 0"
    assert body.InitialAngularVelocity == "0, 90, 0 deg/s"
    m = export.to_model(model["mech"])
    assert m.bodies[0].initial_velocity == pytest.approx([0, 0, 0.25])
    assert m.bodies[0].initial_angular_velocity == pytest.approx([0, math.pi / 2, 0])
    assert m.gravity == pytest.approx([0, 0, -9.81])
    body.InitialVelocity = "0, 0, 1 kg"
    with pytest.raises(Exception, match="property InitialVelocity: '0, 0, 1 kg' is not a "
                                        "vector in mm/s"):
        export.to_model(model["mech"])


def test_vectors_saved_by_the_previous_version_keep_their_values(freecad, doc, model, tmp_path):
    body = model["body"]
    _as_saved_by_version_1(body, "InitialVelocity", "App::PropertyVector",
                           freecad.Vector(0, 0, 250))
    doc.recompute()
    name = body.Name
    path = str(tmp_path / "vectors.FCStd")
    doc.saveAs(path)
    freecad.closeDocument(doc.Name)
    reopened = freecad.openDocument(path)
    try:
        body = reopened.getObject(name)
        assert body.InitialVelocity == "0, 0, 250 mm/s"
        assert body.getGroupOfProperty("InitialVelocity") == "Initial conditions"
    finally:
        freecad.closeDocument(reopened.Name)


def test_gravity_shows_its_unit_and_old_files_keep_it(freecad, doc, model, tmp_path):
    mech = model["mech"]
    assert mech.Gravity == "0, 0, -9810 mm/s^2"
    _as_saved_by_version_1(mech, "Gravity", "App::PropertyVector", freecad.Vector(0, -9810, 0))
    doc.recompute()
    name = mech.Name
    path = str(tmp_path / "gravity.FCStd")
    doc.saveAs(path)
    freecad.closeDocument(doc.Name)
    reopened = freecad.openDocument(path)
    try:
        assert reopened.getObject(name).Gravity == "0, -9810, 0 mm/s^2"
    finally:
        freecad.closeDocument(reopened.Name)
