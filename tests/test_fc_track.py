"""The track builder's document side (issue 34 item 1) in headless FreeCAD: two wheels drawn as
Part cylinders, their rims picked, :func:`MultibodyWB.document.track.make_track` makes the
shoes (one box and links to it), a body and two pin markers per shoe and the pin hinges; the
mechanism exported to the neutral model (objects/export.py ``to_model``) has n bodies, n
hinges, one loop, every shoe's pins at the wrap's points, the shoes' mass from the density.
The GUI side (selection, command, panel, one undo step) is tests/test_gui_track.py."""

import math

import numpy as np
import pytest

pytestmark = pytest.mark.freecad

PITCH, WIDTH, THICK = 60.0, 150.0, 20.0     #: mm
R_SPROCKET, R_IDLER, GAP = 180.0, 150.0, 900.0
DENSITY = 7850.0


@pytest.fixture
def doc(freecad):
    d = freecad.newDocument("Track")
    name = d.Name
    yield d
    if name in freecad.listDocuments():
        freecad.closeDocument(name)


def _wheels(freecad, doc, tilt=0.0):
    """Two wheels with axes along global y (the second tilted by ``tilt`` deg about x), the
    idler higher up: Part cylinders whose rims are the picks."""
    out = []
    for name, r, x, z, t in (("Sprocket", R_SPROCKET, 0.0, 0.0, 0.0),
                             ("Idler", R_IDLER, GAP, 40.0, tilt)):
        c = doc.addObject("Part::Cylinder", name)
        c.Radius, c.Height = r, 100.0
        # the cylinder's axis is its local z: turned onto global y, its middle at y = 0
        rot = freecad.Rotation(freecad.Vector(1, 0, 0), -90 + t)
        c.Placement = freecad.Placement(freecad.Vector(x, -50.0, z), rot)
        out.append(c)
    doc.recompute()
    return out


def _rim(solid):
    return next(f"Face{i}" for i, f in enumerate(solid.Shape.Faces, 1)
                if type(f.Surface).__name__ == "Cylinder")


def test_the_track_exports_as_a_closed_chain_of_shoes_at_the_wraps_pins(freecad, doc):
    from MultibodyWB.document import factory, track
    from MultibodyWB.objects import export
    from MultibodyWB.solver.api import analyse
    from MultibodyWB.solver.model import wrap as W
    wheels = _wheels(freecad, doc)
    picks = [(w, _rim(w)) for w in wheels]
    mech = factory.make_mechanism(doc, "Tracked")
    factory.make_body(doc, mech, wheels[0], ground=True, name="Frame")
    drawn = [freecad.Placement(w.Placement) for w in wheels]
    circles = [(0.0, 0.0, (R_SPROCKET + THICK / 2) / 1000),
               (GAP / 1000, 0.04, (R_IDLER + THICK / 2) / 1000)]
    tight = W.tight_count(circles, PITCH / 1000)
    assert track.tight_count(picks, PITCH, THICK) == tight
    n = tight + 1
    made = track.make_track(doc, mech, picks, PITCH, WIDTH, THICK, count=n, density=DENSITY)
    doc.recompute()
    # nothing the user drew moved; one solid, n - 1 links
    assert [w.Placement == d for w, d in zip(wheels, drawn)] == [True, True]
    assert [s.TypeId for s in made["shoes"]].count("Part::Box") == 1
    assert [s.TypeId for s in made["shoes"]].count("App::Link") == n - 1
    model = export.to_model(mech)
    shoes = [b for b in model.bodies]
    assert len(shoes) == n
    assert [h.type for h in model.hinges].count("revolute") == n
    assert [h.type for h in model.hinges].count("planar") == 1 == len(model.hinges) - n
    topology = analyse(model)
    assert len(topology.loops) == 1
    # every shoe's pins at the wrap's points: the pins in metres, the track's plane y = 0
    expected = W.wrap(circles, PITCH / 1000, n).pins
    from MultibodyWB.solver.maths.rotations import bryant_to_matrix
    index = {b.Label: i for i, b in enumerate(made["bodies"])}        # model names: labels
    for body in model.bodies:
        i = index[body.name]
        R = bryant_to_matrix(body.orientation)
        pos = np.asarray(body.position, dtype=float)
        got = []
        for m in body.markers[:2]:
            got.append(pos + R @ np.asarray(m.frame.position, dtype=float))
            # the pin markers' z along the wheels' axis (global y)
            z = R @ bryant_to_matrix(m.frame.orientation)[:, 2]
            assert abs(abs(z[1]) - 1.0) < 1e-12
        want = [expected[i], expected[(i + 1) % n]]
        for g, w in zip(sorted(got, key=lambda v: v[0]), sorted(want, key=lambda v: v[0])):
            np.testing.assert_allclose(g, [w[0], 0.0, w[1]], atol=1e-9)
        mass = DENSITY * PITCH * WIDTH * THICK * 1e-9
        assert body.mass == pytest.approx(mass, rel=1e-9)
    # hinge i joins shoe i's rear pin to shoe i-1's front pin, at one point as drawn
    for h in model.hinges:
        if h.type != "revolute":
            continue
        a = model.part(h.input.body)
        b = model.part(h.output.body)
        pa = np.asarray(a.position) + bryant_to_matrix(a.orientation) @ np.asarray(
            a.marker(h.input.marker).frame.position)
        pb = np.asarray(b.position) + bryant_to_matrix(b.orientation) @ np.asarray(
            b.marker(h.output.marker).frame.position)
        np.testing.assert_allclose(pa, pb, atol=1e-9)
    assert made["plan"].wrap.sag > 0


def test_a_bushing_track_and_its_undo(freecad, doc):
    from MultibodyWB.document import factory, track
    from MultibodyWB.objects import export
    wheels = _wheels(freecad, doc)
    picks = [(w, _rim(w)) for w in wheels]
    mech = factory.make_mechanism(doc, "Tracked")
    factory.make_body(doc, mech, wheels[0], ground=True, name="Frame")
    doc.UndoMode = 1
    before = {o.Name for o in doc.Objects}
    made = track.make_track(doc, mech, picks, PITCH, WIDTH, THICK, joint="bushing",
                            stiffness=2e8, damping=1e4, tilt_stiffness=5e4, tilt_damping=10.0)
    model = export.to_model(mech)
    h = model.hinges[0]
    assert h.type == "bushing"
    np.testing.assert_allclose(h.stiffness, [2e8] * 3 + [5e4] * 2 + [0.0])
    np.testing.assert_allclose(h.damping, [1e4] * 3 + [10.0] * 2 + [0.0])
    assert len(made["bodies"]) == made["plan"].wrap.tight
    doc.undo()
    assert {o.Name for o in doc.Objects} == before


def test_bad_picks_are_named(freecad, doc):
    from MultibodyWB.document import track
    wheels = _wheels(freecad, doc, tilt=5.0)
    with pytest.raises(ValueError, match="'Idler' Face1: its axis is not parallel"):
        track.wheel_plane([(w, _rim(w)) for w in wheels])
    flat = next(f"Face{i}" for i, f in enumerate(wheels[0].Shape.Faces, 1)
                if type(f.Surface).__name__ == "Plane")
    with pytest.raises(ValueError, match=f"'Sprocket' {flat} is not a cylindrical face"):
        track.wheel_plane([(wheels[0], flat), (wheels[1], _rim(wheels[1]))])
    wheels = _wheels(freecad, doc)
    picks = [(w, _rim(w)) for w in wheels[-2:]]
    n = track.tight_count(picks, PITCH, THICK)
    with pytest.raises(ValueError, match=f"{n - 1} shoes are too few.*{n} at the least"):
        track.plan(picks, PITCH, track.box_shoe(PITCH, WIDTH, THICK), n - 1)
    assert math.isfinite(n)


def test_a_picked_shoe_stays_where_it_is_drawn_and_every_shoe_links_to_it(freecad, doc):
    """A shoe solid drawn anywhere (turned, off the plane): it does not move, the n shoes are
    links to it, each shoe's pins (its local bounding box's centre +- pitch / 2 along its x)
    at the wrap's points, its width and thickness from its bounding box."""
    from MultibodyWB.document import factory, track
    from MultibodyWB.objects import export
    from MultibodyWB.solver.maths.rotations import bryant_to_matrix
    from MultibodyWB.solver.model import wrap as W
    wheels = _wheels(freecad, doc)
    shoe = doc.addObject("Part::Box", "Pad")
    shoe.Length, shoe.Width, shoe.Height = PITCH, WIDTH, 30.0
    drawn = freecad.Placement(freecad.Vector(300, 400, 500),
                              freecad.Rotation(freecad.Vector(1, 2, 3), 40))
    shoe.Placement = drawn
    doc.recompute()
    mech = factory.make_mechanism(doc, "Tracked")
    factory.make_body(doc, mech, wheels[0], ground=True, name="Frame")
    made = track.make_track(doc, mech, [(w, _rim(w)) for w in wheels], PITCH,
                            shoe_solid=shoe, density=DENSITY)
    doc.recompute()
    assert shoe.Placement == drawn
    n = len(made["bodies"])
    assert [s.TypeId for s in made["shoes"]] == ["App::Link"] * n
    assert all(s.LinkedObject == shoe for s in made["shoes"])
    circles = [(0.0, 0.0, (R_SPROCKET + 15.0) / 1000), (GAP / 1000, 0.04, (R_IDLER + 15.0) / 1000)]
    expected = W.wrap(circles, PITCH / 1000, n).pins
    model = export.to_model(mech)
    index = {b.Label: i for i, b in enumerate(made["bodies"])}
    for body in model.bodies:
        i = index[body.name]
        R = bryant_to_matrix(body.orientation)
        got = sorted((np.asarray(body.position) + R @ np.asarray(m.frame.position)
                      for m in body.markers[:2]), key=lambda v: v[0])
        want = sorted([expected[i], expected[(i + 1) % n]], key=lambda v: v[0])
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, [w[0], 0.0, w[1]], atol=1e-9)
        assert body.mass == pytest.approx(DENSITY * PITCH * WIDTH * 30.0 * 1e-9, rel=1e-9)
