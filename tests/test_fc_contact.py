"""The Contact document object in headless FreeCAD (issue 14): what a picked face is, the
default stiffness, properties and their tool tips, export to the neutral model and import back,
save and reopen, and a steel ball dropped on a plate through the workbench's run path.

The command and its task panel are driven in the GUI by ``tests/test_gui_contact.py``.
"""

import math

import numpy as np
import pytest

pytestmark = pytest.mark.freecad

R = 10.0            #: ball radius, mm
DROP = 5.0          #: gap between the ball and the plate as drawn, mm


@pytest.fixture
def doc(freecad):
    d = freecad.newDocument("Contacts")
    name = d.Name
    yield d
    if name in freecad.listDocuments():
        freecad.closeDocument(name)


def _solids(freecad, doc):
    """A 100 x 100 x 10 mm plate whose top face is z = 0 and a ball of radius R above it."""
    plate = doc.addObject("Part::Box", "Plate")
    plate.Length, plate.Width, plate.Height = 100, 100, 10
    plate.Placement.Base = freecad.Vector(-50, -50, -10)
    ball = doc.addObject("Part::Sphere", "Ball")
    ball.Radius = R
    ball.Placement.Base = freecad.Vector(0, 0, R + DROP)
    doc.recompute()
    return plate, ball


def _top_face(plate):
    """Name of the plate's face whose outward normal is +z."""
    for i, face in enumerate(plate.Shape.Faces, 1):
        if face.CenterOfMass.z > -1e-9 and type(face.Surface).__name__ == "Plane":
            return f"Face{i}"
    raise AssertionError("no top face")


def _drop(freecad, doc, restitution=0.8):
    """The ball on a free hinge above the plate (the ground), a contact made as the Contact
    command makes it (markers picked on the faces, shapes recognised, default stiffness)."""
    from MultibodyWB.document import factory
    from MultibodyWB.objects import contact
    plate, ball = _solids(freecad, doc)
    top = _top_face(plate)
    mech = factory.make_mechanism(doc, "Drop")
    ground = factory.make_body(doc, mech, plate, ground=True, name="Plate body")
    body = factory.make_body(doc, mech, ball, name="Ball body")
    on_ball = factory.make_marker(doc, body, (ball, "Face1"))
    on_plate = factory.make_marker(doc, ground, (plate, top))
    factory.make_hinge(doc, mech, "free", on_ball, factory.make_marker(doc, ground, None),
                       name="Float")
    shapes = [contact.recognise(ball, "Face1"), contact.recognise(plate, top)]
    k, rule = contact.default_stiffness(shapes, [body, ground], 9.81)
    hit = factory.make_contact(doc, mech, on_ball, on_plate,
                               *[(s.type, s.dimensions()) for s in shapes], k,
                               stiffness_rule=rule, restitution=restitution, name="Hit")
    doc.recompute()
    return dict(mech=mech, plate=plate, ball=ball, top=top, ground=ground, body=body, hit=hit,
                on_ball=on_ball, on_plate=on_plate, k=k, rule=rule)


# --- what a pick is ---------------------------------------------------------------------------

def test_faces_and_a_box_solid_are_recognised_with_their_dimensions(freecad, doc):
    from MultibodyWB.objects import contact
    plate, ball = _solids(freecad, doc)
    roller = doc.addObject("Part::Cylinder", "Roller")
    roller.Radius, roller.Height = 6, 40
    roller.Placement = freecad.Placement(freecad.Vector(0, 0, 30),
                                         freecad.Rotation(freecad.Vector(1, 0, 0), 90))
    nose = doc.addObject("Part::Cone", "Nose")
    block = doc.addObject("Part::Box", "Block")
    block.Length, block.Width, block.Height = 30, 20, 8
    block.Placement = freecad.Placement(freecad.Vector(5, 7, 40),
                                        freecad.Rotation(freecad.Vector(0, 0, 1), 30))
    doc.recompute()
    assert contact.recognise(plate, _top_face(plate)).type == "plane"
    sphere = contact.recognise(ball, "Face1")
    assert (sphere.type, sphere.radius) == ("sphere", pytest.approx(R))
    side = next(f"Face{i}" for i, f in enumerate(roller.Shape.Faces, 1)
                if type(f.Surface).__name__ == "Cylinder")
    cyl = contact.recognise(roller, side)
    assert cyl.type == "cylinder"
    assert cyl.radius == pytest.approx(6.0) and cyl.length == pytest.approx(40.0)
    box = contact.recognise(block, "")
    assert box.type == "box" and box.size == pytest.approx((30.0, 20.0, 8.0))
    # the box's frame: its centre, its edges along the solid's own axes
    frame = block.Placement.multiply(box.offset)
    assert (frame.Base - block.Shape.CenterOfMass).Length < 1e-9
    assert frame.Rotation.isSame(block.Placement.Rotation, 1e-12)
    cone = next(f"Face{i}" for i, f in enumerate(nose.Shape.Faces, 1)
                if type(f.Surface).__name__ == "Cone")
    assert contact.recognise(nose, cone).type == "cone"
    assert "a cone" in contact.surface_name(nose, cone)
    assert contact.recognise(ball, "") is None            # a whole solid that is not a box
    assert contact.recognise(plate, "Edge1") is None
    assert contact.supported("plane", "sphere") and contact.supported("box", "plane")
    assert not contact.supported("plane", "plane") and not contact.supported("cone", "sphere")
    assert contact.supported("box", "cylinder")          # a road wheel on a track shoe


def test_cones_and_tori_are_recognised_exactly_with_their_frames(freecad, doc):
    """A conical face is the frustum between its ends (radii at -z and +z of its frame, the
    frame in the middle of the axis), a toroidal face the torus (frame at its centre, z its
    axis): every vertex of the face lies on the shape described in that frame."""
    from MultibodyWB.objects import contact
    nose = doc.addObject("Part::Cone", "Nose")
    nose.Radius1, nose.Radius2, nose.Height = 10, 4, 20
    nose.Placement = freecad.Placement(freecad.Vector(5, -3, 12),
                                       freecad.Rotation(freecad.Vector(1, 1, 0), 70))
    ring = doc.addObject("Part::Torus", "Ring")
    ring.Radius1, ring.Radius2 = 30, 5
    ring.Placement = freecad.Placement(freecad.Vector(-40, 0, 8),
                                       freecad.Rotation(freecad.Vector(0, 1, 0), 90))
    doc.recompute()
    face = next(f"Face{i}" for i, f in enumerate(nose.Shape.Faces, 1)
                if type(f.Surface).__name__ == "Cone")
    cone = contact.recognise(nose, face)
    assert cone.type == "cone" and cone.length == pytest.approx(20.0)
    assert sorted([cone.radius, cone.radius2]) == pytest.approx([4.0, 10.0])
    frame = nose.Placement.multiply(cone.offset)
    assert (frame.Base - nose.Placement.multVec(freecad.Vector(0, 0, 10))).Length < 1e-9
    # in the frame: the rim of radius Radius at z = -10, Radius2 at z = +10
    for edge in nose.Shape.getElement(face).Edges:
        for t in np.linspace(edge.FirstParameter, edge.LastParameter, 7):
            p = frame.inverse().multVec(edge.valueAt(t))
            r = cone.radius + (cone.radius2 - cone.radius) * (p.z + 10.0) / 20.0
            assert math.hypot(p.x, p.y) == pytest.approx(r, abs=1e-7)
    assert cone.dimensions() == {"radius": cone.radius, "radius2": cone.radius2,
                                 "length": cone.length}
    torus = contact.recognise(ring, "Face1")
    assert (torus.type, torus.radius, torus.radius2) == ("torus", pytest.approx(30.0),
                                                         pytest.approx(5.0))
    frame = ring.Placement.multiply(torus.offset)
    for v in ring.Shape.Vertexes + [ring.Shape.getElement("Face1")]:
        point = v.Point if hasattr(v, "Point") else v.valueAt(0.3, 1.1)
        p = frame.inverse().multVec(point)
        assert math.hypot(math.hypot(p.x, p.y) - 30.0, p.z) == pytest.approx(5.0, abs=1e-7)
    assert contact.supported("cone", "plane") and contact.supported("plane", "torus")
    assert not contact.supported("cone", "sphere")


def test_a_torus_dropped_flat_rests_on_the_plate_on_its_tube(freecad, doc):
    """A steel ring (Part::Torus) lying flat on the plate, on a free hinge, with the contact the
    command would make (the torus face picked, a marker by its offset on the solid): it settles
    and rests with its weight carried (Fn = m g) by the three tube points, level."""
    from MultibodyWB.document import factory, runs
    from MultibodyWB.objects import contact
    from MultibodyWB.objects.result import load
    plate, _ = _solids(freecad, doc)
    doc.removeObject("Ball")
    ring = doc.addObject("Part::Torus", "Ring")
    ring.Radius1, ring.Radius2 = 30, 5
    ring.Placement.Base = freecad.Vector(0, 0, 5.0)           # touching the plate
    doc.recompute()
    mech = factory.make_mechanism(doc, "Ring drop")
    ground = factory.make_body(doc, mech, plate, ground=True, name="Plate body")
    body = factory.make_body(doc, mech, ring, density=7850.0, name="Ring body")
    torus = contact.recognise(ring, "Face1")
    on_ring = factory.make_marker(doc, body, (ring, ""), offset=torus.offset)
    on_plate = factory.make_marker(doc, ground, (plate, _top_face(plate)))
    factory.make_hinge(doc, mech, "free", on_ring, factory.make_marker(doc, ground, None),
                       name="Float")
    plane = contact.recognise(plate, _top_face(plate))
    k, rule = contact.default_stiffness([torus, plane], [body, ground], 9.81)
    factory.make_contact(doc, mech, on_ring, on_plate, ("torus", torus.dimensions()),
                         ("plane", plane.dimensions()), k, stiffness_rule=rule,
                         restitution=0.2, name="Seat")
    doc.recompute()
    obj = runs.simulate_mechanism(mech, t_end=0.3, step=2e-6, output_step=5e-3)
    res = load(obj)
    mass = 7850.0 * 2 * math.pi ** 2 * 0.030 * 0.005 ** 2
    assert res["Seat.Fn"][-1] == pytest.approx(mass * 9.81, rel=2e-3)
    assert res["Ring body.z"][-1] < 0.005 and abs(res["Ring body.vz"][-1]) < 2e-3
    assert abs(res["Ring body.a"][-1]) < 1e-6 and abs(res["Ring body.b"][-1]) < 1e-6   # flat


def test_default_stiffness_is_hertz_for_a_sphere_and_a_static_depth_for_a_box(freecad, doc):
    from MultibodyWB.document import factory
    from MultibodyWB.objects import contact
    plate, ball = _solids(freecad, doc)
    block = doc.addObject("Part::Box", "Block")
    block.Length, block.Width, block.Height = 20, 20, 20
    doc.recompute()
    mech = factory.make_mechanism(doc)
    ground = factory.make_body(doc, mech, plate, ground=True)
    body = factory.make_body(doc, mech, ball)
    cube = factory.make_body(doc, mech, block, density=7850)
    shapes = [contact.recognise(ball, "Face1"), contact.recognise(plate, _top_face(plate))]
    k, rule = contact.default_stiffness(shapes, [body, ground], 9.81)
    e_star = 1.0 / (2 * (1 - 0.3 ** 2) / 210e9)
    assert k == pytest.approx(4.0 / 3.0 * e_star * math.sqrt(R / 1000.0), rel=1e-12)
    assert rule.startswith("Hertz") and "steel" in rule
    # a material card with its own elastic constants (aluminium) on the ball
    body.Material = {"Density": "2700 kg/m^3", "YoungsModulus": "70000 MPa",
                     "PoissonRatio": "0.33"}
    k2, rule2 = contact.default_stiffness(shapes, [body, ground], 9.81)
    e_star2 = 1.0 / ((1 - 0.33 ** 2) / 70e9 + (1 - 0.3 ** 2) / 210e9)
    assert k2 == pytest.approx(4.0 / 3.0 * e_star2 * math.sqrt(R / 1000.0), rel=1e-12)
    assert "material" in rule2
    # two spheres: R1 R2 / (R1 + R2)
    k3, _ = contact.default_stiffness([shapes[0], shapes[0]], [ground, ground], 9.81)
    assert k3 == pytest.approx(4.0 / 3.0 * e_star * math.sqrt(R / 2000.0), rel=1e-12)
    # a box: its weight on four corners presses them 1e-5 m in at the exponent 1.5
    mass = 7850 * 0.02 ** 3
    k4, rule4 = contact.default_stiffness([contact.recognise(block, ""), shapes[1]],
                                          [cube, ground], 9.81)
    assert 4 * k4 * 1e-5 ** 1.5 == pytest.approx(mass * 9.81, rel=1e-9)
    assert "static depth" in rule4


# --- the object --------------------------------------------------------------------------------

def test_every_property_has_a_tool_tip_and_a_shape_shows_only_its_dimensions(freecad, doc):
    p = _drop(freecad, doc)
    hit = p["hit"]
    assert hit.Proxy.Type == "Multibody::Contact" and hit.Version == 1
    assert hit.Problem == ""
    for prop in hit.Proxy.properties():
        assert hit.getDocumentationOfProperty(prop.name).strip(), prop.name
    assert "N/m^Exponent" in hit.getDocumentationOfProperty("Stiffness")
    assert hit.getTypeIdOfProperty("InputRadius") == "App::PropertyLength"
    assert hit.getTypeIdOfProperty("ImpactSpeed") == "App::PropertySpeed"
    assert hit.ImpactSpeed.Value == pytest.approx(1000.0)          # 1 m/s in mm/s
    assert hit.StictionVelocity.Value == pytest.approx(1.0)        # 1e-3 m/s
    assert hit.Label == "Hit" and p["rule"] == hit.StiffnessRule
    mode = hit.getEditorMode
    assert "Hidden" not in mode("InputRadius") and "Hidden" in mode("InputSize")
    assert "Hidden" in mode("OutputRadius") and "Hidden" in mode("OutputLength")
    hit.OutputShape = "box"
    assert "Hidden" not in mode("OutputSize") and "Hidden" in mode("OutputRadius")
    hit.InputShape = "cylinder"
    assert "Hidden" not in mode("InputLength") and "Hidden" not in mode("InputRadius")


def test_export_gives_the_neutral_contact_and_import_rebuilds_it(freecad, doc, tmp_path):
    from MultibodyWB.document import import_model
    from MultibodyWB.objects import export
    from MultibodyWB.objects.base import type_of
    from MultibodyWB.solver.model import xmlio
    p = _drop(freecad, doc)
    p["hit"].StaticFriction, p["hit"].DynamicFriction = 0.4, 0.3
    p["hit"].StictionVelocity = "2 mm/s"
    model = export.to_model(p["mech"])
    (c,) = model.contacts
    assert c.name == "Hit"
    assert (c.input_shape.type, c.output_shape.type) == ("sphere", "plane")
    assert c.input_shape.radius == pytest.approx(R / 1000.0, rel=1e-12)
    assert c.stiffness == p["k"] and c.exponent == 1.5 and c.restitution == 0.8
    assert c.impact_speed == pytest.approx(1.0) and c.stiction_velocity == pytest.approx(2e-3)
    assert (c.static_friction, c.dynamic_friction) == (0.4, 0.3)
    # the markers: the sphere's at its centre, the plane's on the face, z its outward normal
    assert c.input.body == "Ball body" and c.output.body == "Plate body"
    centre, _ = model.bodies[0].marker_global(c.input.marker)
    np.testing.assert_allclose(centre, [0, 0, (R + DROP) / 1000.0], atol=1e-12)
    on_face, R_plane = model.ground.marker_global(c.output.marker)
    np.testing.assert_allclose(R_plane[:, 2], [0, 0, 1], atol=1e-12)
    np.testing.assert_allclose(on_face, [0, 0, 0], atol=1e-12)      # the face's middle
    # through the file and back into a document
    path = tmp_path / "drop.mbs.xml"
    xmlio.write(model, str(path))
    again = xmlio.read(str(path))
    other = freecad.newDocument("ContactsImported")
    try:
        mech = import_model.from_model(other, again)
        (obj,) = [o for o in mech.Group if type_of(o) == "Multibody::Contact"]
        assert (obj.Label, obj.InputShape, obj.OutputShape) == ("Hit", "sphere", "plane")
        assert obj.InputRadius.Value == pytest.approx(R)
        assert obj.Stiffness == p["k"] and obj.Restitution == 0.8
        assert obj.StictionVelocity.Value == pytest.approx(2.0)
        assert obj.StaticFriction == 0.4 and obj.DynamicFriction == 0.3
        (back,) = export.to_model(mech).contacts
        assert back.input_shape.radius == pytest.approx(c.input_shape.radius, rel=1e-12)
        assert back.stiction_velocity == pytest.approx(c.stiction_velocity, rel=1e-12)
    finally:
        freecad.closeDocument(other.Name)


def test_a_problem_of_the_contact_names_it_and_the_property(freecad, doc):
    from MultibodyWB.objects import export
    from MultibodyWB.solver.model import ModelError
    p = _drop(freecad, doc)
    p["hit"].Stiffness = 0.0
    p["hit"].OutputMarker = None
    with pytest.raises(ModelError) as info:
        export.to_model(p["mech"])
    text = str(info.value)
    assert "Contact 'Hit', property OutputMarker" in text
    assert "Contact 'Hit', property Stiffness" in text


def test_a_contact_survives_save_close_and_reopen(freecad, doc, tmp_path):
    import importlib
    from MultibodyWB.objects import export
    for module in ("mechanism", "body", "marker", "hinge", "force", "contact", "simulation",
                   "result"):
        importlib.import_module(f"MultibodyWB.objects.{module}")
    p = _drop(freecad, doc)
    p["hit"].ImpactSpeed = "2 m/s"
    p["hit"].DynamicFriction = 0.25
    before = export.to_model(p["mech"]).contacts[0]
    names = p["hit"].Name, p["mech"].Name
    path = str(tmp_path / "drop.FCStd")
    doc.saveAs(path)
    freecad.closeDocument(doc.Name)
    reopened = freecad.openDocument(path)
    try:
        hit = reopened.getObject(names[0])
        assert hit.Proxy.Type == "Multibody::Contact"
        assert hit.ImpactSpeed.Value == pytest.approx(2000.0)
        assert hit.StiffnessRule == p["rule"]
        assert "Hidden" in hit.getEditorMode("InputSize")
        mech = reopened.getObject(names[1])
        reopened.recompute()
        assert hit.Problem == ""
        after = export.to_model(mech).contacts[0]
        assert after == before
    finally:
        freecad.closeDocument(reopened.Name)


# --- a run --------------------------------------------------------------------------------------

def rebound_ratio(restitution, impact_speed, v):
    """The Hunt-Crossley law's rebound ratio of an impact at ``v`` (m/s) when it restitutes
    ``restitution`` at ``impact_speed``: the root x in (0, 1) of ``y - ln(1 + y) = -x y -
    ln(1 - x y)``, ``y = alpha v`` (bisection)."""
    from MultibodyWB.solver.elements.forces.contact import hunt_crossley_damping
    y = hunt_crossley_damping(restitution, impact_speed) * v
    lo, hi = 0.0, min(1.0, (1.0 - 1e-15) / y)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if y - math.log1p(y) + mid * y + math.log1p(-mid * y) > 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def test_a_dropped_ball_bounces_on_the_plate(freecad, doc):
    """The ball falls DROP mm, meets the plate at v = sqrt(2 g h) and rises again to the height
    of the rebound speed the law gives at that speed (restitution 0.8 at 1 m/s: 0.93 at this
    slower impact), read from the apex: sqrt(rise / drop)."""
    from MultibodyWB.document import runs
    from MultibodyWB.objects.result import load
    p = _drop(freecad, doc)
    obj = runs.simulate_mechanism(p["mech"], t_end=0.08, step=1e-6, output_step=5e-4)
    res = load(obj)
    for column in ("Fx", "Fy", "Fz", "Fn", "Ft", "depth", "slip"):
        assert f"Hit.{column}" in res.names
    z, fn = res["Ball body.z"], res["Hit.Fn"]
    low = int(np.argmin(z))
    assert 0 < low < len(z) - 1
    assert z[low] < (R + 0.01) / 1000.0 < z[0]              # it reached the plate
    assert fn.max() > 1.0 and fn[0] == 0.0
    rise = z[low:].max() - R / 1000.0                        # and went back up
    expected = rebound_ratio(0.8, 1.0, math.sqrt(2 * 9.81 * DROP / 1000.0))
    assert expected == pytest.approx(0.928, abs=1e-3)
    assert math.sqrt(rise / (DROP / 1000.0)) == pytest.approx(expected, abs=5e-3)
