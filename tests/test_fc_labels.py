"""Labels that say what objects connect, and the density plausibility warning (headless FreeCAD).

A crank on a ground plate, both cut by an 8 mm bore, and a pin standing on the plate: bodies,
markers, hinges and forces made without names are labelled from what they join; a hinge whose
type changes is relabelled only while its label is a default one.
"""

import pytest

pytestmark = pytest.mark.freecad


@pytest.fixture
def doc(freecad):
    d = freecad.newDocument("Labels")
    name = d.Name
    yield d
    if name in freecad.listDocuments():
        freecad.closeDocument(name)


def _bored_plate(freecad, doc, label, length, z):
    """A 10 mm thick plate with an 8 mm bore through it at x = 10 (a Part::Cut)."""
    box = doc.addObject("Part::Box", label + "Box")
    box.Length, box.Width, box.Height = length, 20, 10
    hole = doc.addObject("Part::Cylinder", label + "Hole")
    hole.Radius, hole.Height = 4, 10
    hole.Placement.Base = freecad.Vector(10, 10, 0)
    cut = doc.addObject("Part::Cut", label)
    cut.Base, cut.Tool = box, hole
    cut.Label = label
    box.Placement.Base.z = hole.Placement.Base.z = z
    doc.recompute()
    return cut


def _face(solid, kind):
    """Name of the first face of ``solid`` whose surface is a ``kind`` (Cylinder, Plane)."""
    for i, f in enumerate(solid.Shape.Faces, 1):
        if type(f.Surface).__name__ == kind:
            return f"Face{i}"
    raise AssertionError(f"no {kind} face on {solid.Label}")


@pytest.fixture
def crank(freecad, doc):
    from MultibodyWB.document import factory
    plate = _bored_plate(freecad, doc, "Plate", 60, 0)
    crank = _bored_plate(freecad, doc, "Crank", 40, 10)
    pin = doc.addObject("Part::Cylinder", "Pin")
    pin.Radius, pin.Height = 4, 30
    pin.Placement.Base = freecad.Vector(40, 10, 0)
    doc.recompute()
    mech = factory.make_mechanism(doc)
    ground = factory.make_body(doc, mech, plate, ground=True, name="Ground")
    body = factory.make_body(doc, mech, crank)
    pin_body = factory.make_body(doc, mech, pin)
    return dict(mech=mech, plate=plate, crank=crank, pin=pin, ground=ground, body=body,
                pin_body=pin_body)


def test_a_body_is_labelled_from_its_solid_without_clashing_with_it(crank):
    assert crank["body"].Label == "Crank body"
    assert crank["crank"].Label == "Crank"          # the solid keeps its label
    assert crank["pin_body"].Label == "Pin body"
    assert crank["ground"].Label == "Ground"        # a name given is the label


def test_markers_say_what_was_picked_with_a_letter_per_body(freecad, doc, crank):
    from MultibodyWB.document import factory
    c = crank["crank"]
    bore = _face(c, "Cylinder")
    a = factory.make_marker(doc, crank["body"], (c, bore))
    b = factory.make_marker(doc, crank["body"], (c, bore))
    face = factory.make_marker(doc, crank["body"], (c, _face(c, "Plane")))
    frame = factory.make_marker(doc, crank["body"])
    pin = factory.make_marker(doc, crank["pin_body"], (crank["pin"], _face(crank["pin"],
                                                                           "Cylinder")))
    ground = factory.make_marker(doc, crank["ground"], (crank["plate"],
                                                        _face(crank["plate"], "Cylinder")))
    assert [m.Label for m in (a, b, face, frame, pin, ground)] == [
        "Crank bore A", "Crank bore B", "Crank face A", "Crank frame A", "Pin pin A",
        "Ground bore A"]
    assert a.Name.startswith("Marker")


def test_hinges_and_forces_say_what_they_join(freecad, doc, crank):
    from MultibodyWB.document import factory
    c, p = crank["crank"], crank["plate"]
    m_crank = factory.make_marker(doc, crank["body"], (c, _face(c, "Cylinder")))
    m_ground = factory.make_marker(doc, crank["ground"], (p, _face(p, "Cylinder")))
    m_pin = factory.make_marker(doc, crank["pin_body"])
    hinge = factory.make_hinge(doc, crank["mech"], "revolute", m_crank, m_ground)
    spring = factory.make_force(doc, crank["mech"], "spring_damper", m_crank, m_pin,
                                stiffness=100)
    push = factory.make_force(doc, crank["mech"], "point_force", m_pin, magnitude="1")
    assert hinge.Label == "Crank \u2013 Ground revolute"
    assert hinge.Name.startswith("Revolute")
    assert spring.Label == "Crank \u2013 Pin spring-damper"
    assert push.Label == "Pin force"
    # a second hinge between the same bodies: FreeCAD's digits keep labels unique
    again = factory.make_hinge(doc, crank["mech"], "revolute", m_crank, m_ground)
    assert again.Label.startswith("Crank \u2013 Ground revolute") and again.Label != hinge.Label


def test_a_type_change_relabels_a_default_label_never_a_typed_one(freecad, doc, crank):
    from MultibodyWB.document import factory
    c, p = crank["crank"], crank["plate"]
    m_crank = factory.make_marker(doc, crank["body"], (c, _face(c, "Cylinder")))
    m_ground = factory.make_marker(doc, crank["ground"], (p, _face(p, "Cylinder")))
    hinge = factory.make_hinge(doc, crank["mech"], "revolute", m_crank, m_ground)
    hinge.HingeType = "spherical"
    assert hinge.Label == "Crank \u2013 Ground spherical"
    again = factory.make_hinge(doc, crank["mech"], "revolute", m_crank, m_ground)
    assert again.Label == "Crank \u2013 Ground revolute"  # free again
    again.HingeType = "spherical"                         # clashes: FreeCAD adds digits
    assert again.Label.startswith("Crank \u2013 Ground spherical")
    again.HingeType = "cylindrical"                       # still a default: relabelled
    assert again.Label == "Crank \u2013 Ground cylindrical"
    hinge.Label = "Main bearing"
    hinge.HingeType = "revolute"
    assert hinge.Label == "Main bearing"
    force = factory.make_force(doc, crank["mech"], "point_force", m_crank, magnitude="1")
    force.ForceType = "point_torque"
    assert force.Label == "Crank torque"
    # a named object keeps its name whatever its type
    named = factory.make_hinge(doc, crank["mech"], "revolute", m_crank, m_ground, name="Pivot")
    named.HingeType = "spherical"
    assert named.Label == "Pivot"


def test_an_implausible_density_is_a_warning_naming_the_body(freecad, doc, crank):
    from MultibodyWB.document import runs
    from MultibodyWB.objects import export
    from MultibodyWB.solver.model import ModelError
    body = crank["body"]
    body.Density = "7850 kg/mm^3"           # typed in the wrong unit
    doc.recompute()
    result = export.collect(crank["mech"])
    warnings = [str(w) for w in result.warnings]
    assert len(warnings) == 1, warnings
    assert "Body 'Crank body'" in warnings[0] and "Density" in warnings[0]
    assert "7.85e+12 kg/m^3" in warnings[0] and "implausible" in warnings[0]
    # a warning, not a problem: it blocks nothing
    assert not any("density" in str(p) for p in result.problems)
    body.Density = "7.85 kg/m^3"            # g/cm^3 read as kg/m^3
    assert len(export.collect(crank["mech"]).warnings) == 1
    for good in ("7850 kg/m^3", "7.85 g/cm^3", "30 kg/m^3", "19300 kg/m^3"):
        body.Density = good
        assert export.collect(crank["mech"]).warnings == [], good
    # the material card's density is checked the same way, the ground's not at all
    body.Material = {"Name": "Steel?", "Density": "7850 g/cm^3"}
    body.DensitySource = "Material"
    warnings = [str(w) for w in export.collect(crank["mech"]).warnings]
    assert len(warnings) == 1 and "Material" in warnings[0]
    crank["ground"].Density = "1 kg/m^3"
    assert len(export.collect(crank["mech"]).warnings) == 1
    # before a run the warning goes to the report view, even when problems stop the run
    printed = []
    original = freecad.Console.PrintWarning
    freecad.Console.PrintWarning = printed.append
    try:
        with pytest.raises(ModelError):     # the mechanism is incomplete
            runs.model_of(crank["mech"])
    finally:
        freecad.Console.PrintWarning = original
    assert len(printed) == 1 and printed[0].startswith("MultibodyWB: Body 'Crank body', "
                                                       "property Material: density"), printed
