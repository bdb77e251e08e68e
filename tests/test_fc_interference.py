"""The interference check in headless FreeCAD (:mod:`MultibodyWB.document.interference`): two
boxes drawn into each other by a known volume, boxes apart and touching, a pin in its bore
(exact fit: no overlap; drawn 0.1 mm too large: a hinged overlap, its thin ring's volume and
thickness), which pairs the Simulate panel warns about, and the document left as it was.

The command and its task panel are driven in the GUI by ``tests/test_gui_interference.py``.
"""

import math

import pytest

pytestmark = pytest.mark.freecad


@pytest.fixture
def doc(freecad):
    d = freecad.newDocument("Interference")
    name = d.Name
    yield d
    if name in freecad.listDocuments():
        freecad.closeDocument(name)


def _box(freecad, doc, name, size, at):
    box = doc.addObject("Part::Box", name)
    box.Length, box.Width, box.Height = size
    box.Placement.Base = freecad.Vector(*at)
    return box


def _model(freecad, doc, pin_radius=5.0):
    """A 20 mm cube (the ground) and a 10 mm cube drawn 5 mm into it along x (500 mm^3, centre
    (17.5, 10, 10)); a bored block (hole radius 5 mm, 10 mm thick) and a pin of
    ``pin_radius`` through the hole, joined by a revolute hinge, 40 mm away from the cubes."""
    from MultibodyWB.document import factory
    base = _box(freecad, doc, "Base", (20, 20, 20), (0, 0, 0))
    cube = _box(freecad, doc, "Cube", (10, 10, 10), (15, 5, 5))
    block = _box(freecad, doc, "Block", (40, 20, 10), (0, 40, 0))
    hole = doc.addObject("Part::Cylinder", "Hole")
    hole.Radius, hole.Height = 5, 10
    hole.Placement.Base = freecad.Vector(10, 50, 0)
    bored = doc.addObject("Part::Cut", "Bored")
    bored.Base, bored.Tool = block, hole
    pin = doc.addObject("Part::Cylinder", "Pin")
    pin.Radius, pin.Height = pin_radius, 30
    pin.Placement.Base = freecad.Vector(10, 50, -10)
    doc.recompute()
    mech = factory.make_mechanism(doc, "Clash")
    ground = factory.make_body(doc, mech, base, ground=True, name="Base body")
    bodies = {"ground": ground, "cube": factory.make_body(doc, mech, cube, name="Cube body"),
              "bored": factory.make_body(doc, mech, bored, name="Bored body"),
              "pin": factory.make_body(doc, mech, pin, name="Pin body")}
    factory.make_hinge(doc, mech, "revolute", factory.make_marker(doc, bodies["pin"], None),
                       factory.make_marker(doc, bodies["bored"], None), name="Axle")
    factory.make_hinge(doc, mech, "fixed", factory.make_marker(doc, bodies["bored"], None),
                       factory.make_marker(doc, ground, None), name="Weld")
    factory.make_hinge(doc, mech, "free", factory.make_marker(doc, bodies["cube"], None),
                       factory.make_marker(doc, ground, None), name="Float")
    doc.recompute()
    return mech, bodies, {"cube": cube, "pin": pin}


def _labels(overlap):
    return {overlap.first.Label, overlap.second.Label}


def test_two_boxes_overlap_by_their_exact_common_volume(freecad, doc):
    from MultibodyWB.document import interference
    mech, bodies, _ = _model(freecad, doc)
    found = interference.check(mech)
    assert found.bodies == 4 and found.pairs == 6
    (o,) = found.overlaps
    assert _labels(o) == {"Base body", "Cube body"}
    assert o.volume == pytest.approx(5 * 10 * 10, rel=1e-6)
    assert o.depth == pytest.approx(5.0, rel=1e-9)
    assert o.centre == pytest.approx((17.5, 10.0, 10.0), abs=1e-9)
    # the cube floats on a free hinge: that holds nothing, the pair is not "hinged"
    assert not o.hinged and o.hinges == [] and o.joined_text() == ""
    assert o.volume_text() == "500 mm^3" and o.depth_text() == "5 mm"
    assert o.centre_text() == "(17.5, 10, 10) mm"
    assert found.headline() == "1 overlapping pair of bodies in 'Clash'"
    # the pin fits its bore exactly: zero common volume, no overlap, although the boxes meet
    assert found.candidates >= 2
    assert found.failures == []


def test_hinges_that_hold_their_bodies_join_them_free_and_bushing_ones_do_not(freecad, doc):
    from MultibodyWB.document import interference
    mech, bodies, _ = _model(freecad, doc)
    joined = interference.joints(mech)
    pair = frozenset((bodies["pin"].Name, bodies["bored"].Name))
    assert [h.Label for h in joined[pair][0]] == ["Axle"] and joined[pair][1] == []
    pair = frozenset((bodies["bored"].Name, bodies["ground"].Name))
    assert [h.Label for h in joined[pair][0]] == ["Weld"]
    assert frozenset((bodies["cube"].Name, bodies["ground"].Name)) not in joined
    float_ = doc.getObjectsByLabel("Float")[0]
    float_.HingeType = "spherical"
    assert [h.Label for h in interference.joints(mech)[
        frozenset((bodies["cube"].Name, bodies["ground"].Name))][0]] == ["Float"]
    float_.HingeType = "bushing"
    assert frozenset((bodies["cube"].Name, bodies["ground"].Name)) not in \
        interference.joints(mech)


def test_apart_and_touching_boxes_do_not_overlap(freecad, doc):
    from MultibodyWB.document import interference
    mech, bodies, solids = _model(freecad, doc)
    solids["cube"].Placement.Base = freecad.Vector(25, 5, 5)           # 5 mm apart
    doc.recompute()
    found = interference.check(mech)
    assert found.overlaps == [] and found.failures == []
    assert found.headline() == "No overlaps between the 4 bodies of 'Clash'"
    solids["cube"].Placement.Base = freecad.Vector(20, 5, 5)           # face on face
    doc.recompute()
    found = interference.check(mech)
    assert found.overlaps == [] and found.candidates >= 1


def test_a_pin_drawn_too_large_for_its_bore_is_a_hinged_overlap_listed_last(freecad, doc):
    """Pin radius 5.1 mm in a 5 mm bore 10 mm long: the common is a ring of
    pi (5.1^2 - 5^2) 10 mm^3, 0.1 mm thick (its mean thickness 2 V / A, not its box's 10 mm)."""
    from MultibodyWB.document import interference
    mech, bodies, _ = _model(freecad, doc, pin_radius=5.1)
    found = interference.check(mech)
    assert [_labels(o) for o in found.overlaps] == [{"Base body", "Cube body"},
                                                    {"Bored body", "Pin body"}]
    ring = found.overlaps[1]
    assert ring.hinged and [h.Label for h in ring.hinges] == ["Axle"]
    assert ring.excused and [h.Label for h in ring.pins] == ["Axle"]       # at the pin
    assert ring.volume == pytest.approx(math.pi * (5.1 ** 2 - 5 ** 2) * 10, rel=1e-6)
    assert ring.depth == pytest.approx(0.1, rel=0.02)
    assert ring.centre == pytest.approx((10, 50, 5), abs=1e-6)
    assert "(hinged by 'Axle')" in ring.text()
    assert found.headline() == "2 overlapping pairs of bodies in 'Clash' (1 hinged)"
    # what the Simulate panel warns about: not the pin in its bore
    assert [_labels(o) for o in interference.unjoined_overlaps(mech).overlaps] == \
        [{"Base body", "Cube body"}]


def test_the_volume_tolerance_is_relative_to_the_smaller_body(freecad, doc):
    """The cube 1e-4 mm into the base: 0.01 mm^3, 1e-5 of the cube's 1000 mm^3: an overlap;
    with a tolerance of 1e-4 of the smaller body, none."""
    from MultibodyWB.document import interference
    mech, bodies, solids = _model(freecad, doc)
    solids["cube"].Placement.Base = freecad.Vector(20 - 1e-4, 5, 5)
    doc.recompute()
    (o,) = interference.check(mech).overlaps
    assert o.volume == pytest.approx(1e-2, rel=1e-4)
    assert o.volume_text() == "0.01 mm^3"
    assert interference.check(mech, rtol=1e-4).overlaps == []


def test_unjoined_overlaps_leave_out_pins_in_bores_and_contact_pairs(freecad, doc):
    """The floating cube's overlap with the base is one the Simulate panel warns about; a
    contact between them (the solver judges such a contact drawn overlapping) takes it out, and
    so does a spherical hinge instead of the free one."""
    from MultibodyWB.document import factory, interference
    mech, bodies, solids = _model(freecad, doc)
    (o,) = interference.unjoined_overlaps(mech).overlaps
    assert _labels(o) == {"Base body", "Cube body"} and o.joined_text() == ""
    contact = factory.make_contact(doc, mech, factory.make_marker(doc, bodies["cube"], None),
                                   factory.make_marker(doc, bodies["ground"], None),
                                   ("box", {"size": (10, 10, 10)}), ("plane", {}), 1e7,
                                   name="Rest")
    doc.recompute()
    assert interference.unjoined_overlaps(mech).overlaps == []
    (o,) = interference.check(mech).overlaps
    assert o.contacts == [contact] and o.joined_text() == "contact 'Rest'" and not o.hinged
    doc.removeObject(contact.Name)
    # a spherical hinge instead of the free one joins them, but the cubes overlap away from
    # its ball (a 5 mm slab, not a thin shell about the hinge's centre): still warned about
    # (issue 32.4: a hinge excuses only a pin in its bore)
    doc.getObjectsByLabel("Float")[0].HingeType = "spherical"
    doc.recompute()
    (o,) = interference.unjoined_overlaps(mech).overlaps
    assert _labels(o) == {"Base body", "Cube body"}
    assert o.hinged and not o.excused and o.pins == []
    assert o.joined_text() == ("hinged by 'Float', but not at the pin: the parts themselves "
                               "overlap")


def test_the_check_changes_nothing_in_the_document(freecad, doc):
    from MultibodyWB.document import interference
    mech, bodies, _ = _model(freecad, doc, pin_radius=5.1)
    doc.recompute()
    doc.clearUndos()
    doc.UndoMode = 1
    before = [(o.Name, "Touched" in o.State) for o in doc.Objects]
    placements = {o.Name: o.Placement for o in doc.Objects if hasattr(o, "Placement")}
    assert len(interference.check(mech).overlaps) == 2
    assert [(o.Name, "Touched" in o.State) for o in doc.Objects] == before
    assert {o.Name: o.Placement for o in doc.Objects if hasattr(o, "Placement")} == placements
    assert doc.UndoCount == 0 and doc.UndoNames == []


def test_a_contact_between_hinged_bodies_is_a_warning_of_the_export_and_the_status(freecad,
                                                                                    doc):
    """A contact between the pin and its bored block, which the revolute hinge 'Axle' joins:
    the export and the mechanism's status warn, naming the contact, its property and the hinge;
    the model is still valid (no problem)."""
    from MultibodyWB.document import factory
    from MultibodyWB.objects import export
    from MultibodyWB.objects.mechanism import mechanism_status
    mech, bodies, _ = _model(freecad, doc)
    factory.make_contact(doc, mech, factory.make_marker(doc, bodies["pin"], None),
                         factory.make_marker(doc, bodies["bored"], None),
                         ("sphere", {"radius": 5}), ("plane", {}), 1e7, name="Rub")
    doc.recompute()
    result = export.collect(mech)
    assert result.problems == []
    (warning,) = [str(w) for w in result.warnings]
    assert warning.startswith("Contact 'Rub', property OutputMarker: 'Pin body' and 'Bored "
                              "body' are also joined by the revolute hinge 'Axle'")
    status = mechanism_status(mech, result)
    assert status.warnings == [warning] and status.ready
    assert f"Warning: {warning}" in status.details()
