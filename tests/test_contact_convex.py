"""Convex contact shapes (hulls of points) and the broad phase (``elements.forces.contact``):
the hull, exact distances of a sphere to a hull, hull-plane agreeing with the box's corners,
resting hulls carrying their weight, energy kept by an elastic tumbling polyhedron, the three
methods agreeing, the file format and the check."""

import math

import numpy as np
import pytest

from MultibodyWB.solver.elements.forces.contact import canonical, depths
from MultibodyWB.solver.elements.hulls import hull
from MultibodyWB.solver.model import MultibodySystem, massprops, xmlio
from MultibodyWB.solver.model.problems import ModelError
from MultibodyWB.solver.run.simulate import simulate

G = 9.81
A = 0.1                    # cube edge, m


def _cube_points(a=A, inner=0):
    """A cube's corners (edge a, centred) and ``inner`` random points inside it."""
    h = a / 2
    pts = [[sx * h, sy * h, sz * h] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]
    rng = np.random.default_rng(3)
    return np.vstack([pts, rng.uniform(-0.9 * h, 0.9 * h, (inner, 3))])


def test_hull_of_a_cube_with_inner_points():
    h = hull(_cube_points(inner=50))
    assert len(h.vertices) == 8 and len(h.triangles) == 12 and len(h.planes) == 6
    assert h.radius == pytest.approx(A * math.sqrt(3) / 2, rel=1e-12)
    # every plane is a unit outward normal at distance a/2; every vertex is on three of them
    np.testing.assert_allclose(np.linalg.norm(h.planes[:, :3], axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(h.planes[:, 3], -A / 2, rtol=1e-12)
    on = np.abs(h.vertices @ h.planes[:, :3].T + h.planes[:, 3]) < 1e-12
    assert (on.sum(axis=1) == 3).all()
    # triangles counter-clockwise from outside: their normals point away from the centre
    v = h.vertices[h.triangles]
    normal = np.cross(v[:, 1] - v[:, 0], v[:, 2] - v[:, 0])
    assert (np.einsum("ij,ij->i", normal, v.mean(axis=1)) > 0).all()


@pytest.mark.parametrize("points, why", [
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], "one plane"),
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0]], "at least four"),
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, np.nan]], "finite"),
])
def test_hull_refuses_points_without_a_volume(points, why):
    with pytest.raises(ValueError, match=why):
        hull(points)


def _pair_depth(input_shape, output_shape, p_in, p_out=(0, 0, 0)):
    """The depths of a contact between two shapes at markers with global axes at ``p_in`` and
    ``p_out`` (the pair code's candidate points)."""
    m = MultibodySystem("Probe")
    g = m.set_ground()
    b = m.add_body("B", 1.0, [1, 1, 1, 0, 0, 0])
    k = m.add_contact("K", b.add_marker((0, 0, 0)), g.add_marker((0, 0, 0)), input_shape,
                      output_shape, stiffness=1e6)
    pair = canonical(k)
    ps = {id(k.input): np.asarray(p_in, float), id(k.output): np.asarray(p_out, float)}
    return depths(pair, np.eye(3), ps[id(pair.input)], np.eye(3), ps[id(pair.output)])


@pytest.mark.parametrize("where, distance", [
    ((0.0, 0.0, A / 2 + 0.01), 0.01),                                   # above a face
    ((A / 2 + 0.006, 0.0, A / 2 + 0.008), 0.01),                        # beyond an edge
    ((A / 2 + 0.004, A / 2 + 0.004, A / 2 + 0.002), 0.006),             # beyond a corner
    ((0.0, 0.01, A / 2 - 0.003), -0.003),                               # inside, under a face
])
def test_sphere_to_hull_distance_is_exact(where, distance):
    """A sphere of radius 12 mm against a cube's hull: depth = r - the exact distance of its
    centre to the cube, near faces, edges and corners alike (and inside)."""
    r = 0.012
    for cube in (("convex", {"points": _cube_points(inner=20)}), ("box", {"size": (A, A, A)})):
        d = _pair_depth(("sphere", {"radius": r}), cube, where)
        assert d.shape == (1,) and d[0] == pytest.approx(r - distance, abs=1e-14)


def test_broad_phase_reports_the_bounding_spheres_gap():
    """Far apart, the pair is not looked at: its depth is minus the gap between the bounding
    spheres, which is at most the true gap."""
    r = 0.012
    far = (0.0, 0.0, 1.0)
    d = _pair_depth(("sphere", {"radius": r}), ("convex", {"points": _cube_points()}), far)
    bound = A * math.sqrt(3) / 2
    assert d[0] == pytest.approx(-(1.0 - r - bound), rel=1e-12)
    assert -d[0] <= 1.0 - A / 2 - r                       # the true gap
    # a hull above a plane: its bounding sphere's height
    d = _pair_depth(("convex", {"points": _cube_points()}), ("plane",), far)
    assert d[0] == pytest.approx(-(1.0 - bound), rel=1e-12)
    # near, every vertex is a candidate point: the cube's eight corners
    d = _pair_depth(("convex", {"points": _cube_points(inner=30)}), ("plane",), (0, 0, A / 2))
    assert len(d) == 8 and sorted(d)[-4:] == pytest.approx([0.0] * 4, abs=1e-15)


def _falling(shape, tilt=(0.3, 0.2, 0.0), z0=0.2, k=1e6, restitution=0.7, friction=0.3,
             on=("plane",), spin=(0.0, 0.0, 0.0)):
    """A cube of steel (as ``shape``) dropped tilted on the ground (or on ``on``)."""
    m = MultibodySystem("Drop", gravity=(0, 0, -G))
    g = m.set_ground()
    mp = massprops.box((A, A, A), 7850.0, corner=(-A / 2, -A / 2, -A / 2))
    b = m.add_body("Cube", mp.mass, mp.ji, mass_center=mp.center, position=(0, 0, z0),
                   orientation=tilt)
    bm = b.add_marker((0, 0, 0))
    m.add_hinge("Float", "free", bm, g.add_marker((0, 0, 0)),
                initial_rates=[0.1, 0.0, 0.0] + list(spin))
    m.add_contact("Hit", bm, g.add_marker((0, 0, 0)), shape, on, stiffness=k,
                  restitution=restitution, static_friction=friction,
                  dynamic_friction=0.8 * friction)
    return m, mp.mass


def test_hull_on_a_plane_is_the_box_on_a_plane():
    """A cube as the hull of its corners (and inner points) falls, bounces and slides exactly as
    the box shape (the same eight candidate points; the inner points are no vertices)."""
    kw = dict(method="mstmm", integrator="rk4", t_end=0.3, step=2e-5, output_step=1e-3)
    box = simulate(_falling(("box", {"size": (A, A, A)}))[0], **kw)
    hull_run = simulate(_falling(("convex", {"points": _cube_points(inner=40)}))[0], **kw)
    assert box["Hit.Fn"].max() > 10.0                      # it hit
    for col in ("Cube.x", "Cube.z", "Cube.vz", "Hit.Fn", "Hit.Ft", "Hit.depth", "Hit.x"):
        np.testing.assert_allclose(hull_run[col], box[col], rtol=0,
                                   atol=1e-9 * max(1.0, np.abs(box[col]).max()))


def test_cube_rests_on_a_cube_with_its_weight_carried():
    """A small cube hull sits on a big one fixed to the ground (hull against hull): at rest the
    normal force is its weight, shared by its four lower corners, each (m g / 4 k)^(1/e) deep."""
    k, e = 1e7, 1.5
    m = MultibodySystem("Stack", gravity=(0, 0, -G))
    g = m.set_ground()
    big = g.add_marker((0, 0, -0.1))                         # a 0.2 m cube under the origin
    mp = massprops.box((A, A, A), 1000.0, corner=(-A / 2, -A / 2, -A / 2))
    depth = (mp.mass * G / 4 / k) ** (1 / e)
    b = m.add_body("Top", mp.mass, mp.ji, mass_center=mp.center, position=(0.02, -0.01, A / 2 - depth))
    bm = b.add_marker((0, 0, 0))
    m.add_hinge("Float", "free", bm, g.add_marker((0, 0, 0)))
    m.add_contact("Sit", bm, big, ("convex", {"points": _cube_points()}),
                  ("convex", {"points": _cube_points(0.2)}), stiffness=k, exponent=e,
                  restitution=0.3, static_friction=0.5, dynamic_friction=0.4)
    res = simulate(m, method="mstmm", integrator="rk4", t_end=0.1, step=1e-5, output_step=1e-3)
    assert res["Sit.Fn"][-1] == pytest.approx(mp.mass * G, rel=1e-6)
    assert res["Sit.depth"][-1] == pytest.approx(depth, rel=1e-6)
    assert abs(res["Top.vz"][-1]) < 1e-6
    # the point under the mass centre, midway in the overlap
    assert res["Sit.x"][-1] == pytest.approx(0.02, abs=1e-9)
    assert res["Sit.y"][-1] == pytest.approx(-0.01, abs=1e-9)
    assert res["Sit.z"][-1] == pytest.approx(-depth / 2, rel=1e-6)


def test_ball_rests_on_a_hull_edge_region_with_its_weight_carried():
    """A ball on top of a fixed box shape (sphere against a box's hull): Fn = m g, depth
    (m g / k)^(1/e); the same as the ball on a plane at the box's top face."""
    k, e, r, mass = 1e6, 1.5, 0.02, 0.5
    m = MultibodySystem("Perch", gravity=(0, 0, -G))
    g = m.set_ground()
    J = 0.4 * mass * r * r
    depth = (mass * G / k) ** (1 / e)
    b = m.add_body("Ball", mass, [J, J, J, 0, 0, 0], position=(0.03, 0.01, A / 2 + r - depth))
    bm = b.add_marker((0, 0, 0))
    m.add_hinge("Float", "free", bm, g.add_marker((0, 0, 0)))
    m.add_contact("Perch", bm, g.add_marker((0, 0, 0)), ("sphere", {"radius": r}),
                  ("box", {"size": (A, A, A)}), stiffness=k, exponent=e, restitution=0.2)
    res = simulate(m, method="mstmm", integrator="rk4", t_end=0.3, step=1e-5, output_step=1e-3)
    assert res["Perch.Fn"][-1] == pytest.approx(mass * G, rel=1e-6)
    assert res["Perch.depth"][-1] == pytest.approx(depth, rel=1e-6)


def test_elastic_polyhedron_keeps_its_energy():
    """A frictionless hull of 60 random points on a sphere (many vertices, tilted faces),
    restitution 1, dropped spinning on the ground: mechanical energy (kinetic + potential +
    the contact's elastic energy) is kept through the bounces."""
    rng = np.random.default_rng(7)
    pts = rng.normal(size=(60, 3))
    pts = 0.05 * pts / np.linalg.norm(pts, axis=1)[:, None]
    m = MultibodySystem("Tumble", gravity=(0, 0, -G))
    g = m.set_ground()
    mp = massprops.box((A, A, A), 2000.0, corner=(-A / 2, -A / 2, -A / 2))
    b = m.add_body("Rock", mp.mass, mp.ji, mass_center=mp.center, position=(0, 0, 0.08),
                   orientation=(0.4, 0.1, 0.2))
    bm = b.add_marker((0, 0, 0))
    m.add_hinge("Float", "free", bm, g.add_marker((0, 0, 0)), initial_rates=[0.2, 0, 0, 3, -2, 1])
    m.add_contact("Hit", bm, g.add_marker((0, 0, 0)), ("convex", {"points": pts}), ("plane",),
                  stiffness=1e6, restitution=1.0)
    res = simulate(m, method="mstmm", integrator="rk4", t_end=0.5, step=1e-5, output_step=1e-3)
    assert (res["Hit.Fn"] > 0).sum() > 20                  # it was in contact
    assert res["energy.elastic"].max() > 1e-3 * res["energy.kinetic"][0]
    assert np.ptp(res["energy.total"]) < 1e-6 * res["energy.kinetic"][0]


def test_three_methods_agree_on_a_tumbling_hull():
    pts = _cube_points(inner=10) * [1.0, 0.7, 0.5]
    model = _falling(("convex", {"points": pts}), tilt=(0.5, 0.3, 0.1), z0=0.12, k=1e6,
                     spin=(2.0, -1.0, 0.5))[0]
    kw = dict(t_end=0.15, step=1e-5, output_step=1e-3)
    ref = simulate(model, method="mstmm", integrator="rk4", **kw)
    assert ref["Hit.Fn"].max() > 0
    for method in ("constrained", "newton-euler"):
        other = simulate(model, method=method, **kw)
        for col in ("Cube.x", "Cube.y", "Cube.z"):
            np.testing.assert_allclose(other[col], ref[col], rtol=0,
                                       atol=1e-4 if method == "newton-euler" else 1e-7)


def test_convex_points_go_through_the_file(tmp_path):
    m, _ = _falling(("convex", {"points": _cube_points(inner=5)}), on=("box", {"size": (1, 1, .1)}))
    path = tmp_path / "hull.mbs.xml"
    xmlio.write(m, path)
    back = xmlio.read(path)
    np.testing.assert_array_equal(back.contacts[0].input_shape.points, _cube_points(inner=5))
    assert back.contacts[0].output_shape.type == "box"
    xmlio.write(back, tmp_path / "again.mbs.xml")
    assert (tmp_path / "again.mbs.xml").read_bytes() == path.read_bytes()


@pytest.mark.parametrize("points, words", [
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], "one plane"),
    (None, "needs the points"),
    ([0.0, 1.0, 2.0, 3.0], "x, y, z"),
])
def test_check_names_the_contact_and_the_shape_of_bad_points(points, words):
    m, _ = _falling(("sphere", {"radius": 0.05}))
    m.contacts[0].input_shape.type = "convex"
    m.contacts[0].input_shape.points = None if points is None else np.asarray(points, float)
    with pytest.raises(ModelError) as err:
        m.check()
    text = str(err.value)
    assert "Contact 'Hit'" in text and "InputShape" in text and words in text


def test_elastic_energy_of_a_batch_of_rows_is_each_contacts_own_sum():
    """The recorder's compiled energy of all contacts over a batch of rows
    (``contact._potential_all`` through :class:`~.recorder.Attachments`) equals, to the bit, the
    per-contact path of any other caller of ``add_potential`` (a plain attachment function):
    the tumbling solids (hull and primitive contacts) while they hit the plate."""
    from MultibodyWB.examples import build
    from MultibodyWB.solver.analysis.start import prepare
    from MultibodyWB.solver.elements.forces import contact
    from MultibodyWB.solver.methods.mstmm.system import System
    from MultibodyWB.solver.results.recorder import Attachments

    model = build("tumbling_solids")
    res = simulate(model, t_end=0.3, step=1e-4, output_step=2e-3)
    prepared, _ = prepare(model, True)
    system = System(prepared)
    times = res["time"]
    b = system.instants(times, res.states)
    batch = np.zeros(times.size)
    contact.add_potential(system.forces.contact, Attachments(b.R, b.pb), batch)
    attachments = Attachments(b.R, b.pb)
    one_by_one = np.zeros(times.size)
    contact.add_potential(system.forces.contact, lambda *a: attachments(*a), one_by_one)
    touching = int(np.count_nonzero(one_by_one > 0.0))
    assert touching > 10, touching               # the solids do touch in these rows
    assert np.array_equal(batch, one_by_one)
