"""Convex contact shapes in headless FreeCAD (issue 14, general shapes through their
tessellation): an egg (an ellipsoid, a B-spline solid) and other solids that are no primitive
become the convex hull of their tessellation; the hull's points in the marker's frame, the
marker at the solid's centre of mass; the default stiffness; export, import and reopen; an egg
resting on a plate carries its weight.

The command and its panel are driven in the GUI by ``tests/test_gui_contact_convex.py``.
"""

import math

import numpy as np
import pytest

pytestmark = pytest.mark.freecad

A, B = 20.0, 14.0           #: the egg's semi-axes, mm: A along its axis, B across
TILT = 35.0                 #: the egg turned about its own axis (x), deg: the mesh's poles off z


@pytest.fixture
def doc(freecad):
    d = freecad.newDocument("Convex")
    name = d.Name
    yield d
    if name in freecad.listDocuments():
        freecad.closeDocument(name)


def egg_shape(freecad):
    """An ellipsoid of semi-axes A, B, B (its axis x): a sphere scaled along x (a B-spline)."""
    import Part
    matrix = freecad.Matrix()
    matrix.scale(A / B, 1.0, 1.0)
    return Part.makeSphere(B).transformGeometry(matrix)


def _solids(freecad, doc, height=B):
    """A 200 x 200 x 10 mm plate whose top face is z = 0 and the egg above it, its centre at
    ``height`` (B: the exact ellipsoid touches the plate), turned TILT about its axis."""
    plate = doc.addObject("Part::Box", "Plate")
    plate.Length, plate.Width, plate.Height = 200, 200, 10
    plate.Placement.Base = freecad.Vector(-100, -100, -10)
    egg = doc.addObject("Part::Feature", "Egg")
    egg.Shape = egg_shape(freecad)
    egg.Placement = freecad.Placement(freecad.Vector(0, 0, height),
                                      freecad.Rotation(freecad.Vector(1, 0, 0), TILT))
    doc.recompute()
    return plate, egg


def same_points(a, b, tol):
    """Whether two sets of points (n, 3) are the same to ``tol`` in any order (a hull's vertex
    order is Qhull's)."""
    from scipy.spatial import cKDTree
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and cKDTree(b).query(a)[0].max() <= tol and \
        cKDTree(a).query(b)[0].max() <= tol


def hull_gap(a, b):
    """The largest distance of points ``a`` (n, 3) outside or inside the hull of ``b``."""
    from MultibodyWB.solver.elements.hulls import hull
    planes = hull(b).planes
    return np.abs((np.asarray(a) @ planes[:, :3].T + planes[:, 3]).max(axis=1)).max()


def egg_surface_distance(egg, point):
    """Distance (mm) of a point from the egg solid's surface."""
    import Part
    return egg.Shape.Faces[0].distToShape(Part.Vertex(point))[0]


def _top_face(plate):
    for i, face in enumerate(plate.Shape.Faces, 1):
        if face.CenterOfMass.z > -1e-9 and type(face.Surface).__name__ == "Plane":
            return f"Face{i}"
    raise AssertionError("no top face")


def pick_shapes(picks):
    """What the Contact command does with two picks ``(solid, sub)``: the recognised primitives
    and the solids' hulls, the pair chosen (:func:`~MultibodyWB.objects.contact.choose_shapes`)."""
    from MultibodyWB.objects import contact
    primitives = [contact.recognise(solid, sub) for solid, sub in picks]
    hulls = [contact.convex(solid) if not sub or sub.startswith("Face") else None
             for solid, sub in picks]
    return contact.choose_shapes(primitives, hulls)


def _rest(freecad, doc, height=B):
    """The egg on a free hinge above the plate (the ground), a contact made as the Contact
    command makes it (``tests/test_gui_contact_convex.py`` runs the command itself): the egg's
    face is no primitive, so its solid's convex hull, the marker at its centre of mass."""
    from MultibodyWB.document import factory
    from MultibodyWB.objects import contact
    plate, egg = _solids(freecad, doc, height)
    top = _top_face(plate)
    mech = factory.make_mechanism(doc, "Rest")
    ground = factory.make_body(doc, mech, plate, ground=True, name="Plate body")
    body = factory.make_body(doc, mech, egg, density=1000.0, name="Egg body")
    factory.make_hinge(doc, mech, "free", factory.make_marker(doc, body, None),
                       factory.make_marker(doc, ground, None), name="Float")
    doc.recompute()
    shapes = pick_shapes([(egg, "Face1"), (plate, top)])
    assert [s.type for s in shapes] == ["convex", "plane"]
    on_egg = factory.make_marker(doc, body, (egg, ""), offset=shapes[0].offset)
    on_plate = factory.make_marker(doc, ground, (plate, top))
    k, rule = contact.default_stiffness(shapes, [body, ground], 9.81)
    hit = factory.make_contact(doc, mech, on_egg, on_plate,
                               *[(s.type, s.dimensions()) for s in shapes], k,
                               stiffness_rule=rule, name="Hit")
    doc.recompute()
    return dict(mech=mech, plate=plate, egg=egg, body=body, ground=ground, hit=hit)


def test_an_egg_face_is_its_solids_convex_hull_marker_at_its_centre_of_mass(freecad, doc):
    from MultibodyWB.objects import contact
    p = _rest(freecad, doc)
    hit, egg = p["hit"], p["egg"]
    assert (hit.InputShape, hit.OutputShape) == ("convex", "plane")
    assert hit.InputMarker.Body == p["body"] and hit.OutputMarker.Body == p["ground"]
    # the marker: on the whole solid, at its centre of mass, the solid's axes; nothing moved
    marker = hit.InputMarker
    assert (marker.Placement.Base - egg.Shape.CenterOfMass).Length < 1e-9
    assert marker.Placement.Rotation.isSame(egg.Placement.Rotation, 1e-12)
    assert egg.Placement.Base == freecad.Vector(0, 0, B)
    # the default tolerance: a hundredth of the solid's bounding-box diagonal
    tol = hit.InputTolerance.Value
    assert tol == pytest.approx(contact.TOLERANCE_FRACTION * 2 * math.sqrt(A * A + 2 * B * B),
                                rel=1e-3)
    assert "Hidden" not in hit.getEditorMode("InputTolerance")
    assert "Hidden" in hit.getEditorMode("InputRadius") and \
        "Hidden" in hit.getEditorMode("OutputTolerance")
    # three vertices of a facet carry the weight 0.01 mm deep at the exponent 1.5
    mass = 1000.0 * egg.Shape.Volume * 1e-9
    # (the B-spline is the ellipsoid to 5e-4 of its volume)
    assert mass == pytest.approx(1000.0 * 4 / 3 * math.pi * A * B * B * 1e-9, rel=1e-3)
    assert 3 * hit.Stiffness * 1e-5 ** 1.5 == pytest.approx(mass * 9.81, rel=1e-9)
    assert "static depth" in hit.StiffnessRule and "3 points" in hit.StiffnessRule


def test_the_hull_points_come_from_the_tessellation_within_its_tolerance(freecad, doc):
    """Every hull point lies on the exact ellipsoid (tessellation vertices are surface points),
    the hull is inside it, and its lowest point is within the tolerance of the ellipsoid's
    lowest point; a finer tolerance gives more points and a closer hull."""
    from MultibodyWB.objects import contact
    p = _rest(freecad, doc)
    hit = p["hit"]
    tol = hit.InputTolerance.Value
    points = contact.hull_points(hit, "Input")          # mm, marker frame (the solid's axes)
    assert 50 < len(points) < 2000
    # the marker frame is the egg's own frame: on the ellipsoid x^2/A^2 + (y^2 + z^2)/B^2 = 1
    # (to the B-spline's own approximation of it, 5e-4)
    level = points[:, 0] ** 2 / A ** 2 + (points[:, 1] ** 2 + points[:, 2] ** 2) / B ** 2
    assert np.abs(level - 1.0).max() < 1e-3
    # ... and on the solid's surface exactly: tessellation vertices
    marker = hit.InputMarker.Placement
    on = [marker.multVec(freecad.Vector(*q)) for q in points[::7]]
    assert max(egg_surface_distance(p["egg"], x) for x in on) < 1e-6
    # global: the lowest point of the hull, against the exact ellipsoid's (z = 0; the B-spline's
    # own is lower by its approximation of the ellipsoid, under 0.01 mm)
    bottom = -0.01
    z = np.array([marker.multVec(freecad.Vector(*q)).z for q in points])
    assert 0.0 <= z.min() - bottom <= tol
    assert z.min() > 1e-3                                 # the mesh's poles are not at the bottom
    finer = hit.InputTolerance.Value / 4
    hit.InputTolerance = finer
    more = contact.hull_points(hit, "Input")
    z_fine = np.array([marker.multVec(freecad.Vector(*q)).z for q in more])
    assert len(more) > len(points) and 0.0 <= z_fine.min() - bottom <= finer
    assert z_fine.min() < z.min()


def test_export_writes_the_hull_in_metres_and_import_and_reopen_keep_it(freecad, doc,
                                                                        tmp_path):
    from MultibodyWB.document import import_model
    from MultibodyWB.objects import contact, export
    from MultibodyWB.objects.base import type_of
    from MultibodyWB.solver.model import xmlio
    p = _rest(freecad, doc)
    model = export.to_model(p["mech"])
    (c,) = model.contacts
    assert (c.input_shape.type, c.output_shape.type) == ("convex", "plane")
    np.testing.assert_allclose(c.input_shape.points,
                               contact.hull_points(p["hit"], "Input") / 1000.0, rtol=0,
                               atol=1e-15)
    # through the file into a document without the solid: the points are kept
    path = tmp_path / "egg.mbs.xml"
    xmlio.write(model, str(path))
    other = freecad.newDocument("ConvexImported")
    try:
        mech = import_model.from_model(other, xmlio.read(str(path)))
        (obj,) = [o for o in mech.Group if type_of(o) == "Multibody::Contact"]
        assert obj.InputShape == "convex" and len(obj.InputPoints) == len(c.input_shape.points)
        (back,) = export.to_model(mech).contacts
        assert same_points(back.input_shape.points, c.input_shape.points, 1e-12)
    finally:
        freecad.closeDocument(other.Name)
    # save, close and reopen: the same model
    names = p["hit"].Name, p["mech"].Name
    saved = str(tmp_path / "egg.FCStd")
    doc.saveAs(saved)
    freecad.closeDocument(doc.Name)
    reopened = freecad.openDocument(saved)
    try:
        hit = reopened.getObject(names[0])
        reopened.recompute()
        assert hit.Problem == "" and hit.InputShape == "convex"
        after = export.to_model(reopened.getObject(names[1])).contacts[0]
        # meshed again from the solid read back from the file: the same shape to the tolerance
        # (OCC's mesh of the restored B-spline need not have the same vertices)
        tol = hit.InputTolerance.Value / 1000.0
        assert hull_gap(after.input_shape.points, c.input_shape.points) <= tol
        assert hull_gap(c.input_shape.points, after.input_shape.points) <= tol
        assert after.stiffness == c.stiffness
    finally:
        freecad.closeDocument(reopened.Name)


def test_a_document_saved_before_convex_shapes_gets_the_new_properties(freecad, doc, tmp_path):
    """A contact saved without the Tolerance and Points properties (an older version) gets them
    on reopening, hidden for its sphere and plane, and exports as before."""
    from MultibodyWB.document import factory
    from MultibodyWB.objects import export
    plate = doc.addObject("Part::Box", "Plate")
    plate.Placement.Base = freecad.Vector(-5, -5, -10)
    ball = doc.addObject("Part::Sphere", "Ball")
    ball.Placement.Base = freecad.Vector(0, 0, 8)
    doc.recompute()
    mech = factory.make_mechanism(doc, "Old")
    ground = factory.make_body(doc, mech, plate, ground=True)
    body = factory.make_body(doc, mech, ball)
    on_ball = factory.make_marker(doc, body, (ball, "Face1"))
    factory.make_hinge(doc, mech, "free", on_ball, factory.make_marker(doc, ground, None))
    top = _top_face(plate)
    hit = factory.make_contact(doc, mech, on_ball, factory.make_marker(doc, ground, (plate, top)),
                               ("sphere", {"radius": 5}), ("plane", {}), 1e9, name="Hit")
    doc.recompute()
    before = export.to_model(mech).contacts[0]
    mech_name = mech.Name
    for side in ("Input", "Output"):
        for suffix in ("Tolerance", "Points"):
            hit.setPropertyStatus(side + suffix, "-LockDynamic")
            hit.removeProperty(side + suffix)
    path = str(tmp_path / "old.FCStd")
    doc.saveAs(path)
    freecad.closeDocument(doc.Name)
    reopened = freecad.openDocument(path)
    try:
        hit = reopened.getObject("Hit")
        for side in ("Input", "Output"):
            assert side + "Tolerance" in hit.PropertiesList
            assert "Hidden" in hit.getEditorMode(side + "Tolerance")
        reopened.recompute()
        assert hit.Problem == ""
        assert export.to_model(reopened.getObject(mech_name)).contacts[0] == before
    finally:
        freecad.closeDocument(reopened.Name)


def test_unsupported_primitive_pairs_become_hulls_and_edges_are_refused(freecad, doc):
    """A cylinder's face against a box solid is a cylinder against the box (the solver's
    cylinder - box pair); a cone's face is a cone against a plane, its hull against a sphere (no
    cone - sphere pair); two planes: the input's hull; an edge is no shape."""
    plate, _ = _solids(freecad, doc, height=60)
    roller = doc.addObject("Part::Cylinder", "Roller")
    roller.Radius, roller.Height = 6, 30
    nose = doc.addObject("Part::Cone", "Nose")
    prism = doc.addObject("Part::Prism", "Prism")
    doc.recompute()
    top = _top_face(plate)
    side = next(f"Face{i}" for i, f in enumerate(roller.Shape.Faces, 1)
                if type(f.Surface).__name__ == "Cylinder")
    assert [s.type for s in pick_shapes([(roller, side), (plate, "")])] == ["cylinder", "box"]
    assert [s.type for s in pick_shapes([(roller, side), (plate, top)])] == \
        ["cylinder", "plane"]
    cone = next(f"Face{i}" for i, f in enumerate(nose.Shape.Faces, 1)
                if type(f.Surface).__name__ == "Cone")
    assert [s.type for s in pick_shapes([(nose, cone), (plate, top)])] == ["cone", "plane"]
    ball = doc.addObject("Part::Sphere", "Ball2")
    doc.recompute()
    assert [s.type for s in pick_shapes([(nose, cone), (ball, "Face1")])] == \
        ["convex", "sphere"]
    assert [s.type for s in pick_shapes([(prism, "Face1"), (plate, top)])] == \
        ["convex", "plane"]
    assert [s.type for s in pick_shapes([(prism, ""), (roller, "")])] == ["convex", "convex"]
    assert pick_shapes([(nose, "Edge1"), (plate, top)]) is None


def test_an_egg_resting_on_the_plate_carries_its_weight(freecad, doc):
    """Drawn touching (the exact ellipsoid on the plate: its hull a little above, within the
    tolerance), the egg drops onto its hull's lowest facet and settles: Fn = m g to 1e-3, the
    egg's centre lower than B by at most the tolerance, and still."""
    from MultibodyWB.document import runs
    from MultibodyWB.objects.result import load
    p = _rest(freecad, doc)
    hit = p["hit"]
    hit.Restitution, hit.ImpactSpeed = 0.5, "10 mm/s"
    doc.recompute()
    mass = 1000.0 * p["egg"].Shape.Volume * 1e-9
    res = load(runs.simulate_mechanism(p["mech"], t_end=0.4, output_step=1e-3,
                                       integrator="DOP853"))
    fn, z = res[f"{hit.Label}.Fn"], res["Egg body.z"]
    assert fn[0] == 0.0 and fn.max() > mass * 9.81
    late = res.time > 0.3
    np.testing.assert_allclose(fn[late], mass * 9.81, rtol=1e-3)
    tol = hit.InputTolerance.Value / 1000.0
    # the hull is inside the egg by at most the tolerance: its centre that much lower at most
    assert B / 1000.0 - tol - 2e-5 < z[-1] < B / 1000.0
    assert abs(res["Egg body.vz"][-1]) < 1e-4
