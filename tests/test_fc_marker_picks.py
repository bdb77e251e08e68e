"""No silent moves of markers: a marker whose picked face or edge is, after a recompute, another
element (FreeCAD renumbered the faces of a Part::Cut, or the element moved within its solid
further than the solid's size changed) is flagged, naming the element, and the export refuses the
model; an edit that carries the element along (a longer link, a taller cylinder) passes.
"""

import pytest

from MultibodyWB.solver.model import ModelError

pytestmark = pytest.mark.freecad


@pytest.fixture
def doc(freecad):
    d = freecad.newDocument("Picks")
    yield d
    freecad.closeDocument(d.Name)


@pytest.fixture
def printed(freecad, monkeypatch):
    out = {"error": [], "warning": []}
    monkeypatch.setattr(freecad.Console, "PrintError", out["error"].append)
    monkeypatch.setattr(freecad.Console, "PrintWarning", out["warning"].append)
    return out


def _link_with_hole(freecad, doc):
    """A 200 x 40 x 10 mm plate with an 8 mm hole (Part::Cut), a body of a mechanism with a
    ground and a hinge, so that the mechanism is complete."""
    from MultibodyWB.document import factory
    box = doc.addObject("Part::Box", "Plate")
    box.Length, box.Width, box.Height = 200, 40, 10
    hole = doc.addObject("Part::Cylinder", "Hole")
    hole.Radius, hole.Height = 4, 10
    hole.Placement.Base = freecad.Vector(20, 20, 0)
    cut = doc.addObject("Part::Cut", "Link")
    cut.Base, cut.Tool = box, hole
    frame = doc.addObject("Part::Box", "Frame")
    frame.Placement.Base = freecad.Vector(0, 0, -20)
    doc.recompute()
    mech = factory.make_mechanism(doc, "M")
    ground = factory.make_body(doc, mech, frame, ground=True, name="Ground")
    body = factory.make_body(doc, mech, cut, name="LinkBody")
    return mech, box, hole, cut, ground, body


def _face(shape, test):
    return next(f"Face{i}" for i, f in enumerate(shape.Faces, 1) if test(f))


def test_renumbered_face_of_a_cut_is_flagged_and_export_refuses(freecad, doc, printed):
    from MultibodyWB.document import factory
    from MultibodyWB.objects import export
    from MultibodyWB.objects.marker import support_property
    mech, box, hole, cut, ground, body = _link_with_hole(freecad, doc)
    side = _face(cut.Shape, lambda f: abs(f.CenterOfMass.y) < 1e-9)     # the side at y = 0
    marker = factory.make_marker(doc, body, (cut, side), name="SideMarker")
    m_ground = factory.make_marker(doc, ground, None, name="GroundMarker")
    factory.make_hinge(doc, mech, "fixed", marker, m_ground, name="Weld")
    doc.recompute()
    assert marker.Problem == ""
    assert printed["error"] == []
    before = marker.Placement.Base
    # the hole moves to the plate's end: it notches it, and OCC numbers the faces anew
    hole.Placement.Base = freecad.Vector(0, 20, 0)
    doc.recompute()
    now = cut.Shape.getElement(side)
    assert abs(now.CenterOfMass.y) > 1e-6, "the face of that name must be another face now"
    support = support_property(marker)
    lines = marker.Problem.split("\n")
    assert len(lines) == 1 and lines[0].startswith(
        f"{support}: '{side}' of 'Link' is not the face that was picked: it faced -y at "), lines
    assert "it now faces +z" in lines[0] or "it now faces -z" in lines[0], lines[0]
    # said once, as a warning (the user did not touch the marker); no red error
    said = [w for w in printed["warning"] if "Marker 'SideMarker'" in w]
    assert len(said) == 1 and f"'{side}' of 'Link' is not the face that was picked" in said[0]
    assert printed["error"] == []
    doc.recompute()
    assert len([w for w in printed["warning"] if "Marker 'SideMarker'" in w]) == 1
    # export and the mechanism's check refuse it, naming the face
    with pytest.raises(ModelError) as exc:
        export.to_model(mech)
    assert f"Marker 'SideMarker', property {support}: '{side}' of 'Link' is not the face" \
        in str(exc.value)
    # FreeCAD 0.20's attacher has moved it to the new 'Face2' (1.0 keeps it where it was):
    # either way it is flagged, never moved silently
    assert marker.Placement.Base != before or marker.Problem


def test_renumbered_face_facing_the_same_way_is_flagged(freecad, doc):
    """The issue's case: still a plane facing the same way, but another face of the solid (a
    stepped block rebuilt in another order: 'Face2', the low step's top, is now the high one's)."""
    import Part
    from MultibodyWB.document import factory
    from MultibodyWB.objects.marker import accept_pick
    low = Part.makeBox(50, 20, 10)
    high = Part.makeBox(20, 20, 30, freecad.Vector(50, 0, 0))
    part = doc.addObject("Part::Feature", "Step")
    part.Shape = low.fuse(high).removeSplitter()
    doc.recompute()
    mech = factory.make_mechanism(doc, "M")
    body = factory.make_body(doc, mech, part, name="StepBody")
    top = _face(part.Shape, lambda f: abs(f.CenterOfMass.z - 10) < 1e-9 and
                abs(f.CenterOfMass.x - 25) < 1e-9)
    marker = factory.make_marker(doc, body, (part, top), name="StepMarker")
    doc.recompute()
    assert marker.Problem == ""
    part.Shape = high.fuse(low).removeSplitter()            # the same solid, faces renumbered
    doc.recompute()
    assert abs(part.Shape.getElement(top).CenterOfMass.z - 30) < 1e-9
    assert f"'{top}' of 'Step' is not the face that was picked: its centre moved 40.31 mm " \
        "within the solid (from (25, 10, 10) mm to (60, 10, 30) mm in the solid's frame) " \
        "while the solid's size changed by 0.00 mm" in marker.Problem, marker.Problem
    # the user says it is the face meant: the problem goes
    accept_pick(marker)
    assert marker.Problem == ""


def test_the_whole_shape_shifted_is_no_move_on_the_solid(freecad, doc):
    """A shape rebuilt 200 mm further within its own placement (its base feature moved): every
    element is where it was on the solid; the marker follows, unflagged."""
    import Part
    from MultibodyWB.document import factory
    part = doc.addObject("Part::Feature", "Block")
    part.Shape = Part.makeBox(20, 20, 20)
    doc.recompute()
    mech = factory.make_mechanism(doc, "M")
    body = factory.make_body(doc, mech, part, name="BlockBody")
    end = _face(part.Shape, lambda f: abs(f.CenterOfMass.x - 20) < 1e-9)
    marker = factory.make_marker(doc, body, (part, end), name="EndMarker")
    doc.recompute()
    part.Shape = Part.makeBox(20, 20, 20, freecad.Vector(200, 0, 0))
    doc.recompute()
    assert marker.Problem == ""
    assert marker.Placement.Base.x == pytest.approx(220)


def test_edits_that_carry_the_element_along_pass(freecad, doc):
    from MultibodyWB.document import factory
    mech, box, hole, cut, ground, body = _link_with_hole(freecad, doc)
    end = _face(cut.Shape, lambda f: abs(f.CenterOfMass.x - 200) < 1e-9)
    bore = _face(cut.Shape, lambda f: type(f.Surface).__name__ == "Cylinder")
    m_end = factory.make_marker(doc, body, (cut, end), name="EndMarker")
    m_bore = factory.make_marker(doc, body, (cut, bore), name="BoreMarker")
    doc.recompute()
    box.Length = 260                                   # a longer link: the end face moves 60 mm
    hole.Radius = 5                                    # a wider bore, same axis
    doc.recompute()
    assert cut.Shape.getElement(end).CenterOfMass.x == pytest.approx(260)
    assert m_end.Problem == "" and m_bore.Problem == ""
    assert m_end.Placement.Base.x == pytest.approx(260)
    cyl = doc.addObject("Part::Cylinder", "Cyl")
    cyl.Radius, cyl.Height = 5, 20
    doc.recompute()
    shaft = factory.make_body(doc, mech, cyl, name="Shaft")
    top = factory.make_marker(doc, shaft, (cyl, "Face2"), name="Top")
    rim = factory.make_marker(doc, shaft, (cyl, "Edge1"), name="Rim")
    doc.recompute()
    cyl.Height = 30
    doc.recompute()
    assert top.Problem == "" and rim.Problem == ""


def test_a_pick_put_back_without_its_signature_is_not_flagged(freecad, doc):
    """A panel's Cancel (or Undo) puts the marker's attachment and pick back while the signature
    recorded for the other pick stays: that signature is stale, not a change of the solid."""
    import json

    from MultibodyWB.document import factory
    from MultibodyWB.objects.marker import attach, support_property
    box = doc.addObject("Part::Box", "Box")
    doc.recompute()
    mech = factory.make_mechanism(doc, "M")
    body = factory.make_body(doc, mech, box, name="BoxBody")
    marker = factory.make_marker(doc, body, (box, "Face1"), name="M1")
    doc.recompute()
    kept = {p: getattr(marker, p) for p in (support_property(marker), "MapMode", "MapReversed",
                                             "MapPathParameter", "AttachmentOffset",
                                             "PickedElement", "PickedGeometry")}
    attach(marker, box, "Edge1")                        # picked again elsewhere...
    assert json.loads(marker.PickedSignature)["element"] == "Box.Edge1"
    for prop, value in kept.items():                    # ...and put back, signature left
        setattr(marker, prop, value)
    doc.recompute()
    assert marker.Problem == ""
    marker.touch()
    doc.recompute()
    assert marker.Problem == ""
    assert json.loads(marker.PickedSignature)["element"] == "Box.Face1"   # recorded again
