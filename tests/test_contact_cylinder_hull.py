"""A cylinder against a box or a convex hull (issue 34: a road wheel on a track shoe; the
cylinder - box pair was refused, so an independent track model had to make its wheels spheres).

The pair's candidate points (``contact._cylinder_hull_points``): the end circles' deepest points
through each face plane of the hull, kept when inside the hull for the face they were found
for, and the hull's vertices inside the cylinder, pushed out radially or through an end face.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from MultibodyWB.solver.elements.forces.contact import canonical, depths
from MultibodyWB.solver.maths.rotations import bryant_to_matrix
from MultibodyWB.solver.model import MultibodySystem
from MultibodyWB.solver.model.mechanism import Contact, ContactShape, MarkerRef
from MultibodyWB.solver.run.simulate import simulate

G = 9.81
R, W, RHO, K = 0.3, 0.1, 7850.0, 1e9
#: The wheel's axis along global y: Rx(90 deg) turns the marker's z onto -y.
AXIS_Y = (math.pi / 2, 0.0, 0.0)


def _wheel_on(floor, drop=1e-3, v=1.0, swap=False):
    """A steel wheel (radius R, width W, axis along y) on a free hinge, ``drop`` above z = 0,
    rolling forward at ``v`` (spin v / R), against ``floor``: "plane" (the ground's xy plane at
    z = 0) or "box" (a 2 x 2 x 0.2 m box whose top face is z = 0). ``swap``: the contact's
    sides given the other way round."""
    m = MultibodySystem("Wheel", gravity=(0, 0, -G))
    g = m.set_ground()
    gm = g.add_marker((0, 0, 0) if floor == "plane" else (0, 0, -0.1))
    mass = RHO * math.pi * R * R * W
    Ja, Jt = 0.5 * mass * R * R, mass * (3 * R * R + W * W) / 12
    b = m.add_body("Wheel", mass, [Jt, Jt, Ja, 0, 0, 0], position=(0, 0, R + drop),
                   orientation=AXIS_Y)
    bm = b.add_marker((0, 0, 0))
    # rates of the free hinge in the ground's axes: forward v, spin about -y... the marker's z
    # is -y, so rolling forward (+x) turns it about +y: w_y = v / R
    m.add_hinge("Float", "free", bm, gm if floor == "plane" else g.add_marker((0, 0, 0)),
                initial_rates=[v, 0, 0, 0, v / R, 0])
    wheel = ("cylinder", {"radius": R, "length": W})
    ground = ("plane",) if floor == "plane" else ("box", {"size": (2.0, 2.0, 0.2)})
    sides = (bm, gm, wheel, ground) if not swap else (gm, bm, ground, wheel)
    m.add_contact("Tread", *sides, stiffness=K, restitution=0.5, static_friction=0.6,
                  dynamic_friction=0.5)
    return m, mass


def test_the_pair_is_accepted_both_ways_and_finds_the_rims_on_the_face():
    """A wheel 1 mm into the top face of a box: the two rim points over the face are 1 mm deep,
    no other candidate is (no face counts the same point twice), from either side."""
    Ri = bryant_to_matrix(AXIS_Y)
    for a, b in (("cylinder", "box"), ("box", "cylinder")):
        shapes = {"cylinder": ContactShape("cylinder", radius=R, length=W),
                  "box": ContactShape("box", size=(2.0, 2.0, 0.2))}
        c = Contact("C", MarkerRef("A", 1), MarkerRef("B", 1), shapes[a], shapes[b])
        pair = canonical(c)
        assert pair.code == 9 and pair.sign == (1.0 if a == "cylinder" else -1.0)
        d = depths(pair, Ri, np.array([0.0, 0.0, R - 1e-3]), np.eye(3),
                   np.array([0.0, 0.0, -0.1]))
        touching = np.sort(d[d > 0])
        np.testing.assert_allclose(touching, [1e-3, 1e-3], rtol=1e-12)


def test_a_point_two_faces_find_counts_once():
    """A roof whose two faces slope across the wheel (normals differing only along its axis)
    both find the wheel's lowest rim points: each end's point is kept once, for the face it is
    pushed out through, so that two points touch, not four."""
    half, slope = 0.2, 0.05            # the roof: ridge along x at z = 0, faces down to +-y
    pts = [(x, y, z) for x in (-1.0, 1.0) for y, z in ((0.0, 0.0), (half, -slope * half),
                                                       (-half, -slope * half))]
    pts += [(x, y, -0.2) for x in (-1.0, 1.0) for y in (-half, half)]
    c = Contact("C", MarkerRef("A", 1), MarkerRef("B", 1),
                ContactShape("cylinder", radius=R, length=W), ContactShape("convex", points=pts))
    pair = canonical(c)
    Ri = bryant_to_matrix(AXIS_Y)
    # the rims at y = +-W/2 are under the faces at z = -slope W/2: 1 mm below them
    centre = R - slope * W / 2 - 1e-3
    d = depths(pair, Ri, np.array([0.0, 0.0, centre]), np.eye(3), np.zeros(3))
    touching = np.sort(d[d > 0])
    n = 1 / math.sqrt(1 + slope * slope)          # depth normal to the sloped face
    np.testing.assert_allclose(touching, [1e-3 * n, 1e-3 * n], rtol=1e-9)


@pytest.mark.parametrize("swap", [False, True])
def test_a_wheel_rolling_on_a_box_moves_as_on_the_plane_of_its_face(swap):
    """Dropped 1 mm onto the face while rolling at 1 m/s: it bounces, rolls and slips exactly as
    on the plane pair (its two rim points, the cylinder - plane pair's candidates that touch),
    and its energy balance closes."""
    runs = {}
    for floor in ("plane", "box"):
        m, mass = _wheel_on(floor, swap=swap and floor == "box")
        runs[floor] = simulate(m, method="mstmm", integrator="rk4", t_end=0.04, step=2e-6,
                               output_step=1e-3)
    p, b = runs["plane"], runs["box"]
    sign = -1.0 if swap else 1.0                   # the force on the contact's input body
    assert p["Tread.Fn"].max() > 0.5 * p["Tread.Fn"].mean() > 0      # it touched, it bounced
    for col in ("Wheel.x", "Wheel.z", "Wheel.vx", "Wheel.vz", "Wheel.wy"):
        np.testing.assert_allclose(b[col], p[col], rtol=0, atol=1e-9 * max(1, abs(p[col]).max()),
                                   err_msg=col)
    for col in ("Fx", "Fz", "Fn", "Ft"):
        s = sign if col in ("Fx", "Fz") else 1.0
        np.testing.assert_allclose(s * b[f"Tread.{col}"], p[f"Tread.{col}"], rtol=0,
                                   atol=1e-7 * abs(p["Tread.Fn"]).max(), err_msg=col)
    bal = b.energy_balance()
    assert abs(bal["relative"]) < 1e-4, bal


def _cube_on_drum(depth_offset=0.0):
    """A small steel cube (a = 20 mm) resting on top of a fixed drum (radius 0.5 m, 1 m long,
    axis along y): its four lower corners are inside the drum's round face, each pushed out
    radially. Placed where the corners' radial depths carry its weight exactly (plus
    ``depth_offset`` m lower)."""
    a, Rd = 0.02, 0.5
    mass = RHO * a ** 3
    J = mass * a * a / 6
    x = a / 2                                 # the corners' distance from the drum's top line
    k = 1e8
    d = 0.0
    for _ in range(50):                       # the depth d and the normal's vertical share at it
        cos_t = math.sqrt((Rd - d) ** 2 - x * x) / (Rd - d)
        d = (mass * G / (4 * k * cos_t)) ** (1 / 1.5)
    z = math.sqrt((Rd - d) ** 2 - x * x) + a / 2 - depth_offset
    m = MultibodySystem("Drum", gravity=(0, 0, -G))
    g = m.set_ground()
    gm = g.add_marker((0, 0, 0), orientation=AXIS_Y)
    b = m.add_body("Cube", mass, [J, J, J, 0, 0, 0], position=(0, 0, z))
    bm = b.add_marker((0, 0, 0))
    m.add_hinge("Float", "free", bm, g.add_marker((0, 0, 0)))
    m.add_contact("Seat", gm, bm, ("cylinder", {"radius": Rd, "length": 1.0}),
                  ("box", {"size": (a, a, a)}), stiffness=k, restitution=0.5)
    return m, mass, cos_t


def test_a_cube_rests_on_a_drum_on_its_corners_pushed_out_radially():
    """At the depth where four radial corner forces N carry the weight (4 N cos = m g), the cube
    stays: the force on it is m g up to round-off, the normal forces sum to m g / cos (they
    lean out from the drum's axis, their sideways parts cancel), nothing moves."""
    m, mass, cos_t = _cube_on_drum()
    res = simulate(m, method="mstmm", integrator="rk4", t_end=0.02, step=1e-5,
                   output_step=1e-3)
    # the contact's input is the drum (the ground): the force on the cube is minus it
    np.testing.assert_allclose(-res["Seat.Fz"], mass * G, rtol=1e-9)
    np.testing.assert_allclose(res["Seat.Fn"], mass * G / cos_t, rtol=1e-9)
    np.testing.assert_allclose(res["Seat.Fx"], 0.0, atol=1e-12 * mass * G)
    # (measured: vz 2.8e-12 m/s after 20 ms, the round-off of the rest depth; falling it
    # would be at 0.2 m/s)
    for c in ("vx", "vy", "vz", "wx", "wy", "wz"):
        assert np.abs(res[f"Cube.{c}"]).max() < 1e-10, c


def test_a_cube_pressed_into_a_drum_bounces_with_its_energy_balanced():
    """Placed 1 um deeper than at rest (its rest depth: 1.3 um): pushed up, it bounces on its
    corners, staying upright over the drum's top line, the work of the contact balancing the
    energy."""
    m, mass, _ = _cube_on_drum(depth_offset=1e-6)
    res = simulate(m, method="mstmm", integrator="rk4", t_end=0.02, step=1e-6,
                   output_step=1e-3)
    assert res["Cube.vz"].max() > 1e-5                # pushed up
    assert np.abs(res["Cube.x"]).max() < 1e-12 and np.abs(res["Cube.b"]).max() < 1e-12
    assert abs(res.energy_balance()["relative"]) < 1e-5


def test_one_shape_over_many_pairs_is_made_once():
    """A track's shoes share one box over hundreds of contact pairs: the hull of the same
    points is made once (Qhull asked once), each caller given its own copy."""
    from MultibodyWB.solver.elements.forces import contact
    size = (0.1234567, 0.38, 0.06)
    before = contact._hull_of.cache_info()
    first = contact.box_hull(size)
    again = contact.box_hull(size)
    after = contact._hull_of.cache_info()
    assert after.misses - before.misses == 1 and after.hits - before.hits == 1
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
        assert a is not b and a.flags.writeable


def test_the_broad_phase_sees_the_cylinder_not_its_sphere():
    """A shoe beside a wheel, off its end face: the bounding spheres overlap (0.3 m apart,
    radii 0.304 and 0.207 m) but the shoe's sphere is 43 mm beyond the end plane: no candidate
    point is looked at, the depth is minus that gap (the wheel's sphere let a track's shoes
    far along the spans through to the narrow phase)."""
    c = Contact("C", MarkerRef("A", 1), MarkerRef("B", 1),
                ContactShape("cylinder", radius=R, length=W),
                ContactShape("box", size=(0.154, 0.38, 0.06)))
    pair = canonical(c)
    bound = 0.5 * math.sqrt(0.154 ** 2 + 0.38 ** 2 + 0.06 ** 2)
    d = depths(pair, np.eye(3), np.zeros(3), np.eye(3), np.array([0.0, 0.0, 0.3]))
    np.testing.assert_allclose(d, [-(0.3 - W / 2 - bound)], rtol=1e-12)
    # off the round face: 0.6 m from the axis
    d = depths(pair, np.eye(3), np.zeros(3), np.eye(3), np.array([0.6, 0.0, 0.0]))
    np.testing.assert_allclose(d, [-(0.6 - R - bound)], rtol=1e-12)


@pytest.mark.parametrize("x0", [0.0, 0.03])
def test_a_wheel_over_the_joint_of_two_shoes_is_carried(x0):
    """Two shoes laid end to end on the ground, wider than the wheel is long, the wheel drawn
    touching over their joint (x0 = 0) or beside it: it is carried, sinking no more than its
    static depth's order, the two shoes' forces summing to its weight on average. (Over the
    joint its lowest rim points lay on both shoes' end planes: both took them as pushed out
    sideways by 0 and the wheel fell through, 49 mm in 0.1 s; off the joint the nearer end
    plane pushed the wheel sideways, not up.)"""
    P, Wd, T, Rw, mass = 0.154, 0.38, 0.06, 0.2, 35.0
    m = MultibodySystem("Joint", gravity=(0, 0, -G))
    g = m.set_ground()
    w = m.add_body("Wheel", mass, [0.6, 0.6, 0.7, 0, 0, 0], position=(x0, 0, T + Rw),
                   orientation=(-math.pi / 2, 0, 0))
    wm = w.add_marker((0, 0, 0))
    m.add_hinge("Plane", "planar", wm, g.add_marker((x0, 0, T + Rw), (-math.pi / 2, 0, 0)))
    for i, x in enumerate((-P / 2, P / 2)):
        m.add_contact(f"Box{i}", wm, g.add_marker((x, 0, T / 2)),
                      ("cylinder", {"radius": Rw, "length": 0.3}), ("box", {"size": (P, Wd, T)}),
                      stiffness=1e9, restitution=0.3)
    res = simulate(m, method="mstmm", integrator="rk4", t_end=0.1, step=1e-5, output_step=1e-3)
    sink = T + Rw - res["Wheel.z"]
    static = (mass * G / 2 / 1e9) ** (1 / 1.5)          # two rim points on one shoe
    assert sink.max() < 3 * static
    late = res.time > 0.05
    total = res["Box0.Fn"] + res["Box1.Fn"]
    assert np.mean(total[late]) == pytest.approx(mass * G, rel=0.05)
    np.testing.assert_allclose(res["Box0.Fx"] + res["Box1.Fx"], 0.0, atol=1e-9 * mass * G)
    if x0 == 0.0:               # the points on the joint belong to one shoe, not to both
        assert min(res["Box0.Fn"].max(), res["Box1.Fn"].max()) == 0.0
