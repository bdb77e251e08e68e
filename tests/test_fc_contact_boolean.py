"""Contact on grounds made by Part booleans, in headless FreeCAD (issue 32, item 1).

A Part Fuse or Cut gives a ``Part.Compound`` (FreeCAD 0.20 and 1.0), which has no
``CenterOfMass``: the Contact command raised on any face of such a ground. Every picked face works
now: a planar face is a plane (its solid's hull is not even computed), a compound of one solid is
that solid, and a compound of several solids is, picked whole, the hull of all its solids
together, said in the words the user sees. The GUI scenario (the command, a real selection, the
default run; the command's plan computing no hull for a planar face) is
``tests/test_gui_contact_ground.py``.
"""

import pytest

pytestmark = pytest.mark.freecad


@pytest.fixture
def doc(freecad):
    d = freecad.newDocument("BooleanGround")
    name = d.Name
    yield d
    if name in freecad.listDocuments():
        freecad.closeDocument(name)


def _ground(freecad, doc, apart=False):
    """A 100 x 100 x 10 mm plate (top face z = 0) with a bore cut through it and a rib fused
    under it (``apart``: a second block fused 50 mm away, two solids); a steel ball above."""
    plate = doc.addObject("Part::Box", "Plate")
    plate.Length, plate.Width, plate.Height = 100, 100, 10
    plate.Placement.Base = freecad.Vector(-50, -50, -10)
    bore = doc.addObject("Part::Cylinder", "Bore")
    bore.Radius, bore.Height = 5, 30
    bore.Placement.Base = freecad.Vector(30, 30, -20)
    rib = doc.addObject("Part::Box", "Rib")
    rib.Length, rib.Width, rib.Height = 10, 100, 20
    rib.Placement.Base = freecad.Vector(-50, -50, -80 if apart else -20)
    cut = doc.addObject("Part::Cut", "Cut")
    cut.Base, cut.Tool = plate, bore
    fuse = doc.addObject("Part::Fuse", "Ground")
    fuse.Base, fuse.Tool = cut, rib
    ball = doc.addObject("Part::Sphere", "Ball")
    ball.Radius = 10
    ball.Placement.Base = freecad.Vector(0, 0, 90)
    doc.recompute()
    top = next(f"Face{i}" for i, f in enumerate(fuse.Shape.Faces, 1)
               if abs(f.CenterOfMass.z) < 1e-9 and type(f.Surface).__name__ == "Plane")
    return fuse, ball, top


def test_a_boolean_is_a_compound_without_a_centre_of_mass(freecad, doc):
    """What made the traceback: the premise of this file, on the FreeCAD installed."""
    fuse, _, _ = _ground(freecad, doc)
    assert fuse.Shape.ShapeType == "Compound" and len(fuse.Shape.Solids) == 1
    assert not hasattr(fuse.Shape, "CenterOfMass")


def test_the_convex_hull_of_a_boolean_is_its_solid(freecad, doc):
    from MultibodyWB.objects import contact
    fuse, _, top = _ground(freecad, doc)
    (solid,) = fuse.Shape.Solids
    found = contact.convex(fuse)
    assert found is not None and found.type == "convex"
    # the marker's offset puts it at the solid's centre of mass
    assert (fuse.Placement.multVec(found.offset.Base) - solid.CenterOfMass).Length < 1e-9
    assert contact.contact_solid(fuse, top)[1] == ""
    assert contact.recognise(fuse, top).type == "plane"


def test_a_compound_of_several_solids_is_their_hull_together_and_says_so(freecad, doc):
    from MultibodyWB.objects import contact
    fuse, _, top = _ground(freecad, doc, apart=True)
    solids = fuse.Shape.Solids
    assert len(solids) == 2
    shape, words = contact.contact_solid(fuse, "")
    assert words == "its 2 solids together"
    assert shape.Volume == pytest.approx(sum(s.Volume for s in solids), rel=1e-12)
    centre = contact.centre_of_mass(shape)
    expected = sum((s.CenterOfMass * s.Volume for s in solids), freecad.Vector()) * \
        (1.0 / shape.Volume)
    assert (centre - expected).Length < 1e-9
    found = contact.convex(fuse)
    assert "its 2 solids together" in found.what
    # a face picks its own solid
    one, words = contact.contact_solid(fuse, top)
    assert words.startswith("solid ") and words.endswith(f"the one of {top}")
    face = fuse.Shape.getElement(top)
    assert one.distToShape(face)[0] < 1e-9 and one.Volume < 0.9 * shape.Volume
