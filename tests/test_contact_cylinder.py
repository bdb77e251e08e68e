"""A cylinder against a plane (issue 32): standing on an end face it is carried by three rim
points a third of a turn apart, as a cone with equal radii is, so that its weight is carried at
its axis: the normal force is m g, it does not tilt and its energy balance closes (one rim
point per end carried it, flipping from side to side: normal force 9.6 to 10.1 N for
m g = 9.81 N, tilt rates to 5e-3 rad/s). Tilted onto its rim edge the deepest candidate is the
surface's deepest point and it lands on its face with the balance closed; lying on its side it
rolls (tests/test_contact.py: down an incline at 2/3 g sin)."""

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
R, L, RHO, K = 0.05, 0.1, 7850.0, 1e8


def _standing(shape="cylinder", z=L / 2, orientation=(0.0, 0.0, 0.0), rates=None,
              restitution=0.3):
    """A steel cylinder (or the cone of equal radii) on a free hinge, its axis along z, its
    lower end face ``L/2 - z`` into the ground plane; with friction."""
    m = MultibodySystem("Stand", gravity=(0, 0, -G))
    gm = m.set_ground().add_marker((0, 0, 0))
    mass = RHO * math.pi * R * R * L
    Ja, Jt = 0.5 * mass * R * R, mass * (3 * R * R + L * L) / 12
    b = m.add_body("Cyl", mass, [Jt, Jt, Ja, 0, 0, 0], position=(0, 0, z),
                   orientation=orientation)
    bm = b.add_marker((0, 0, 0))
    m.add_hinge("Float", "free", bm, gm, initial_rates=rates)
    dims = {"radius": R, "length": L}
    if shape == "cone":
        dims["radius2"] = R
    m.add_contact("Floor", bm, gm, (shape, dims), ("plane",), stiffness=K,
                  restitution=restitution, static_friction=0.5, dynamic_friction=0.4)
    return m, mass


def _rest_depth(mass, points=3):
    """The depth at which ``points`` equal rim points carry the weight (Hertz exponent 1.5)."""
    return (mass * G / points / K) ** (1 / 1.5)


def test_cylinder_standing_on_its_end_face_rests_on_its_axis():
    """Placed at its rest depth: the normal force is m g to round-off, no tilt starts, the
    position holds (one rim point per end: 20 to 104 N for m g = 60.5 N, tilt rates 2.5e-3
    rad/s, energy residual 1.2e-4 J)."""
    m, mass = _standing()
    d = _rest_depth(mass)
    m.bodies[0].position[2] = L / 2 - d
    res = simulate(m, method="mstmm", integrator="rk4", t_end=0.1, step=1e-5, output_step=5e-3)
    np.testing.assert_allclose(res["Floor.Fn"], mass * G, rtol=1e-9)
    for c in ("wx", "wy", "wz", "vx", "vy", "a", "b"):
        assert np.abs(res[f"Cyl.{c}"]).max() < 1e-12, c
    assert np.abs(res["Cyl.z"] - (L / 2 - d)).max() < 1e-12
    np.testing.assert_allclose(res["Floor.x"], 0.0, atol=1e-12)     # carried at the axis
    np.testing.assert_allclose(res["Floor.y"], 0.0, atol=1e-12)
    assert np.abs(res["energy.residual"]).max() < 1e-12 * mass * G * L


@pytest.mark.parametrize("c", [0.0, 0.3, 2.0])
def test_cylinder_dropped_on_its_end_face_settles_as_the_cone_of_equal_radii(c):
    """Dropped 0.1 mm onto its face, turned by ``c`` about its axis (the rim points' places
    must not matter): it bounces and settles carried at its axis, so that the normal force is
    what Newton's law asks of the vertical motion at every row (m (z'' + g)) and no tilt
    starts; the energy balance closes as other contact runs do; and it moves exactly as the cone
    with equal radii does."""
    h = 1e-4
    runs = {}
    for shape in ("cylinder", "cone"):
        m, mass = _standing(shape, z=L / 2 + h, orientation=(0.0, 0.0, c))
        runs[shape] = simulate(m, method="mstmm", integrator="rk4", t_end=0.15, step=1e-5,
                               output_step=1e-3)
    res = runs["cylinder"]
    assert res["Floor.Fn"].max() > 2 * mass * G                      # it did land
    np.testing.assert_allclose(res["Floor.Fn"], mass * (res["Cyl.az"] + G), rtol=0,
                               atol=1e-9 * mass * G)
    for q in ("Floor.Fx", "Floor.Fy", "Cyl.wx", "Cyl.wy", "Cyl.vx", "Cyl.vy"):
        assert np.abs(res[q]).max() < 1e-9, q
    assert res["energy.dissipated"][-1] > 0.5 * mass * G * h         # most of the drop is lost
    assert np.abs(res["energy.residual"]).max() < 1e-6 * mass * G * h
    for q in ("Floor.Fn", "Cyl.z", "Cyl.wx", "Cyl.wy", "energy.dissipated"):
        np.testing.assert_allclose(res[q], runs["cone"][q], rtol=1e-9, atol=1e-12)


def test_the_deepest_candidate_is_the_cylinders_deepest_point():
    """In any pose the deepest candidate is the deepest point of the solid (its rims), against
    the exact value: the lower end's centre depth plus r sin(tilt)."""
    rng = np.random.default_rng(11)
    c = Contact("C", MarkerRef("B", 1), MarkerRef("Ground", 1),
                ContactShape("cylinder", radius=R, length=L), ContactShape("plane"),
                stiffness=1.0)
    pair = canonical(c)
    for _ in range(40):
        Ri = bryant_to_matrix(rng.uniform(-np.pi, np.pi, 3))
        pi_ = np.array([0.01, -0.02, rng.uniform(-0.06, 0.02)])
        a = Ri[:, 2]
        exact = max(-(pi_[2] + s * L / 2 * a[2]) for s in (-1, 1)) + R * math.hypot(a[0], a[1])
        got = depths(pair, Ri, pi_, np.eye(3), np.zeros(3))
        assert got.max() == pytest.approx(exact, abs=1e-15)


def test_tilted_cylinder_lands_on_its_rim_edge_then_its_face():
    """Released 0.3 rad tilted with its lowest rim point touching: at first it is carried by
    that one point (the contact point is that point's place, its depth the solid's), then it tips onto its face and
    settles upright at m g; the energy balance closes throughout."""
    tilt = 0.3
    m, mass = _standing(orientation=(tilt, 0.0, 0.0))
    Rb = bryant_to_matrix((tilt, 0.0, 0.0))
    low = min((Rb @ np.array([R * math.cos(t), R * math.sin(t), -L / 2]))[2]
              for t in np.linspace(0, 2 * np.pi, 3601))
    m.bodies[0].position[2] = -low
    res = simulate(m, method="mstmm", integrator="rk4", t_end=1.0, step=5e-6, output_step=1e-3)
    first = np.nonzero(res["Floor.Fn"] > 0)[0][0]
    p = res.position("Cyl")[first] + bryant_to_matrix(
        [res[f"Cyl.{q}"][first] for q in "abc"]) @ np.array([0, -R, -L / 2])  # the rim point
    # one point carries it, the contact point midway between the rim point and the plane
    np.testing.assert_allclose([res[f"Floor.{q}"][first] for q in "xyz"],
                               [p[0], p[1], 0.5 * p[2]], rtol=0, atol=1e-12)
    assert res["Floor.depth"][first] == pytest.approx(-p[2], abs=1e-15)
    # it rocks on its face and comes to rest upright (the damping is slow at small amplitudes)
    assert res["Floor.Fn"][-1] == pytest.approx(mass * G, rel=1e-4)
    assert abs(res["Cyl.a"][-1]) < 1e-6 and abs(res["Cyl.wx"][-1]) < 1e-3
    for q in ("Cyl.wy", "Cyl.wz", "Cyl.vx"):                        # it only tips about x
        assert np.abs(res[q]).max() < 1e-12, q
    assert np.abs(res["energy.residual"]).max() < 1e-7 * res["energy.dissipated"][-1]
