"""Contact between solids (issue 14): the Hunt-Crossley normal law's exact restitution, rest under
the weight, Coulomb friction on an incline (sticking and sliding), rolling without slipping,
sphere-sphere impacts (momentum), the energy balance, agreement between the methods, the file
format and the checks."""

import math

import numpy as np
import pytest

from MultibodyWB.solver.elements.forces.contact import hunt_crossley_damping
from MultibodyWB.solver.model import MultibodySystem, massprops, xmlio
from MultibodyWB.solver.run.simulate import simulate

G = 9.81


def _ball(v0=-1.0, restitution=0.7, impact_speed=1.0, gravity=0.0, k=1e7, e=1.5, r=0.05,
          mass=1.0, z0=0.06):
    """A ball on a free hinge above the ground plane, moving at ``v0`` along z."""
    m = MultibodySystem("Bounce", gravity=(0, 0, -gravity))
    g = m.set_ground()
    gm = g.add_marker((0, 0, 0))
    J = 0.4 * mass * r * r
    b = m.add_body("Ball", mass, [J, J, J, 0, 0, 0], position=(0, 0, z0))
    bm = b.add_marker((0, 0, 0))
    m.add_hinge("Float", "free", bm, gm, initial_rates=[0, 0, v0, 0, 0, 0])
    m.add_contact("Hit", bm, gm, ("sphere", {"radius": r}), ("plane",), stiffness=k, exponent=e,
                  restitution=restitution, impact_speed=impact_speed)
    return m


def _rebound_ratio(y, restitution):
    """The rebound speed ratio of the Hunt-Crossley law for an impact at ``y = alpha v0``: the
    root x in (0, 1) of ``y - ln(1+y) = -x y - ln(1 - x y)`` (solved here by bisection)."""
    lo, hi = 0.0, min(1.0, (1.0 - 1e-15) / y)
    f = lambda x: y - math.log1p(y) + x * y + math.log1p(-x * y)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


@pytest.mark.parametrize("e", [0.2, 0.5, 0.9, 0.99])
def test_hunt_crossley_damping_solves_the_restitution_relation(e):
    alpha = hunt_crossley_damping(e, 2.0)
    assert _rebound_ratio(alpha * 2.0, e) == pytest.approx(e, rel=1e-12)
    assert hunt_crossley_damping(1.0, 2.0) == 0.0
    with pytest.raises(ValueError):
        hunt_crossley_damping(0.0, 1.0)


@pytest.mark.parametrize("v0, restitution", [(1.0, 0.7), (2.5, 0.7), (1.0, 0.3)])
def test_bouncing_sphere_rebounds_at_the_laws_restitution(v0, restitution):
    """No gravity, a ball meets the ground at v0: it leaves at the restitution the law gives
    (exactly the chosen one at the impact speed 1 m/s; the law's own value at 2.5 m/s), with
    the energy lost in the dissipated column and the balance closed."""
    m = _ball(v0=-v0, restitution=restitution)
    res = simulate(m, method="mstmm", integrator="rk4", t_end=0.01 / v0 + 0.008, step=1e-6,
                   output_step=1e-4)
    vz = res["Ball.vz"]
    assert vz[0] == -v0
    alpha = hunt_crossley_damping(restitution, 1.0)
    expected = _rebound_ratio(alpha * v0, restitution)
    if v0 == 1.0:
        assert expected == pytest.approx(restitution, rel=1e-12)
    assert res["Hit.depth"][-1] < 0                      # left the ground
    assert vz[-1] / v0 == pytest.approx(expected, rel=1e-6)
    lost = 0.5 * v0 ** 2 * (1 - expected ** 2)
    assert res["energy.dissipated"][-1] == pytest.approx(lost, rel=1e-6)
    assert np.abs(res["energy.residual"]).max() < 1e-8 * 0.5 * v0 ** 2
    # the largest force: where depth' = 0, k x^1.5 with x from the energy integral
    assert res["Hit.Fn"].max() > 0 and res["Hit.Fx"].max() == 0.0
    np.testing.assert_allclose(res["Hit.Fz"], res["Hit.Fn"], rtol=0, atol=1e-9)


def test_ball_comes_to_rest_with_its_weight_balanced():
    """Dropped with gravity, the ball settles at the static depth (m g / k)^(1/e) with the normal
    force equal to its weight."""
    k, e, mass = 1e6, 1.5, 2.0
    m = _ball(v0=0.0, restitution=0.2, gravity=G, k=k, e=e, mass=mass, z0=0.0505)
    res = simulate(m, method="mstmm", integrator="rk4", t_end=0.6, step=1e-5, output_step=1e-3)
    assert res["Hit.Fn"][-1] == pytest.approx(mass * G, rel=1e-6)
    assert res["Hit.depth"][-1] == pytest.approx((mass * G / k) ** (1 / e), rel=1e-6)
    assert abs(res["Ball.vz"][-1]) < 1e-6
    # the contact point: under the centre, midway between the ball's lowest point and the plane
    assert (res["Hit.x"][-1], res["Hit.y"][-1]) == (0.0, 0.0)
    assert res["Hit.z"][-1] == pytest.approx(-0.5 * res["Hit.depth"][-1], rel=1e-12)


def _block_on_incline(theta, mus, mud, vs=1e-3, k=1e7):
    """A 1 kg box on the ground plane with gravity tilted by theta (the incline's frame), resting
    at its static depth on its four lower corners."""
    m = MultibodySystem("Incline", gravity=(G * math.sin(theta), 0, -G * math.cos(theta)))
    g = m.set_ground()
    gm = g.add_marker((0, 0, 0))
    a = 0.1
    mp = massprops.box((a, a, a), 1000.0, corner=(-a / 2, -a / 2, -a / 2))
    depth = (mp.mass * G * math.cos(theta) / 4 / k) ** (1 / 1.5)
    b = m.add_body("Block", mp.mass, mp.ji, mass_center=mp.center,
                   position=(0, 0, a / 2 - depth))
    bm = b.add_marker((0, 0, 0))
    m.add_hinge("Float", "free", bm, gm)
    m.add_contact("Slide", bm, gm, ("box", {"size": (a, a, a)}), ("plane",), stiffness=k,
                  restitution=0.5, static_friction=mus, dynamic_friction=mud,
                  stiction_velocity=vs)
    return m, mp.mass


def test_block_slides_down_an_incline_at_g_sin_minus_mu_cos():
    theta, mus, mud = math.radians(30), 0.3, 0.2
    m, mass = _block_on_incline(theta, mus, mud)
    res = simulate(m, method="mstmm", integrator="rk4", t_end=0.6, step=2e-6, output_step=1e-4)
    t, vx = res.time, res["Block.vx"]
    i, j = np.searchsorted(t, 0.2), np.searchsorted(t, 0.6)
    a = (vx[j] - vx[i]) / (t[j] - t[i])
    expected = G * (math.sin(theta) - mud * math.cos(theta))
    assert a == pytest.approx(expected, rel=1e-4)
    # the box rings on its four corners (little damping at such small depth rates): averages
    # over many periods (sampled finely: no aliasing)
    assert res["Slide.Fn"][i:j + 1].mean() == pytest.approx(mass * G * math.cos(theta), rel=1e-3)
    assert res["Slide.Ft"][i:j + 1].mean() == pytest.approx(mud * mass * G * math.cos(theta),
                                                           rel=1e-3)
    # the contact point (normal forces' centre) runs ahead of the mass centre by mu_d h, h the
    # height of the mass centre over the points (moment balance of a block that does not turn)
    h = 0.05 - 0.5 * res["Slide.depth"][i:j + 1].mean()
    ahead = res["Slide.x"][i:j + 1] - res["Block.x"][i:j + 1]
    assert ahead.mean() == pytest.approx(mud * h, rel=1e-3)
    assert np.abs(res["Slide.y"][i:j + 1] - res["Block.y"][i:j + 1]).max() < 1e-12


def test_block_sticks_below_the_static_friction_angle():
    """tan(theta) < mu_s: friction holds the block, which creeps at less than the stiction
    velocity; the friction force equals the weight's component along the incline."""
    theta, mus, mud, vs = math.radians(20), 0.5, 0.4, 1e-3
    assert math.tan(theta) < mus
    m, mass = _block_on_incline(theta, mus, mud, vs=vs)
    res = simulate(m, method="mstmm", integrator="rk4", t_end=0.5, step=2e-6, output_step=1e-4)
    assert abs(res["Block.vx"][2000:].mean()) < vs       # it rocks a little on its corners
    assert res["Slide.Ft"][2000:].mean() == pytest.approx(mass * G * math.sin(theta), rel=1e-3)
    assert abs(res["Block.x"][-1]) < 0.5 * vs          # crept less than half a millimetre


def test_cylinder_rolls_down_an_incline_at_two_thirds_g_sin():
    theta, r, L = math.radians(15), 0.05, 0.1
    m = MultibodySystem("Roll", gravity=(G * math.sin(theta), 0, -G * math.cos(theta)))
    g = m.set_ground()
    gm = g.add_marker((0, 0, 0))
    mass = 1000.0 * math.pi * r * r * L
    Jx = mass * (3 * r * r + L * L) / 12
    Jz = 0.5 * mass * r * r
    k = 1e7
    depth = (mass * G * math.cos(theta) / 2 / k) ** (1 / 1.5)
    # axis along global y: the marker's z along y (a = -90 deg about x)
    b = m.add_body("Roller", mass, [Jx, Jz, Jx, 0, 0, 0], position=(0, 0, r - depth))
    bm = b.add_marker((0, 0, 0), (-math.pi / 2, 0, 0))
    m.add_hinge("Float", "free", b.add_marker((0, 0, 0)), gm)
    m.add_contact("Road", bm, gm, ("cylinder", {"radius": r, "length": L}), ("plane",),
                  stiffness=k, restitution=0.5, static_friction=0.8, dynamic_friction=0.6,
                  stiction_velocity=1e-3)
    res = simulate(m, method="mstmm", integrator="rk4", t_end=0.5, step=2e-6, output_step=1e-2)
    t, vx = res.time, res["Roller.vx"]
    i, j = np.searchsorted(t, 0.1), np.searchsorted(t, 0.5)
    a = (vx[j] - vx[i]) / (t[j] - t[i])
    assert a == pytest.approx(2 / 3 * G * math.sin(theta), rel=1e-3)
    # rolling: the centre's speed is r times the spin (the slip stays below the stiction speed)
    assert res["Roller.wy"][j] * r == pytest.approx(vx[j], rel=1e-3)
    assert res["Road.slip"][j] < 1e-3


def test_spheres_collide_with_momentum_kept_and_restitution():
    """Two free balls, head on, no gravity: momentum is kept and the relative speed after is the
    restitution times before (the law's relation holds for the relative motion)."""
    m = MultibodySystem("Billiards")
    g = m.set_ground()
    gm = g.add_marker((0, 0, 0))
    r = 0.03
    masses = (1.0, 3.0)
    marks = []
    for name, mass, x, v in (("A", masses[0], -0.05, 1.0), ("B", masses[1], 0.05, -0.5)):
        J = 0.4 * mass * r * r
        b = m.add_body(name, mass, [J, J, J, 0, 0, 0], position=(x, 0, 0))
        bm = b.add_marker((0, 0, 0))
        m.add_hinge(f"Free{name}", "free", bm, gm, initial_rates=[v, 0, 0, 0, 0, 0])
        marks.append(bm)
    m.add_contact("Impact", marks[0], marks[1], ("sphere", {"radius": r}),
                  ("sphere", {"radius": r}), stiffness=5e7, restitution=0.8, impact_speed=1.5)
    res = simulate(m, method="mstmm", integrator="rk4", t_end=0.04, step=1e-6, output_step=1e-3)
    va, vb = res["A.vx"], res["B.vx"]
    p = masses[0] * va + masses[1] * vb
    np.testing.assert_allclose(p, p[0], rtol=0, atol=1e-12)
    assert (vb[-1] - va[-1]) / (1.0 - (-0.5)) == pytest.approx(0.8, rel=1e-6)
    # the force on A (input) is along -x during the impact
    assert res["Impact.Fx"].min() < 0 and res["Impact.Fx"].max() <= 0


@pytest.mark.parametrize("method", ["constrained", "newton-euler"])
def test_methods_agree_on_a_bounce_with_friction(method):
    """A spinning ball hits the ground obliquely with friction: the rebound (velocity and spin)
    of every method agrees with MSTMM's."""
    m = _ball(v0=-1.0, restitution=0.6, gravity=G)
    m.hinges[0].initial_rates = np.array([0.5, 0.0, -1.0, 0.0, 0.0, 0.0])
    m.contacts[0].static_friction = 0.4
    m.contacts[0].dynamic_friction = 0.3
    m.contacts[0].stiction_velocity = 1e-2
    ref = simulate(m, method="mstmm", integrator="rk4", t_end=0.02, step=2e-6, output_step=1e-3)
    other = simulate(m, method=method, integrator="rk4", t_end=0.02, step=2e-6,
                     output_step=1e-3)
    for col in ("Ball.vx", "Ball.vz", "Ball.wy", "Ball.z"):
        scale = max(1.0, np.abs(ref[col]).max())
        # within the 3 ms impact the discretisations differ most (NE: 3e-4 at one sample)
        np.testing.assert_allclose(other[col], ref[col], rtol=0, atol=5e-4 * scale)
        assert other[col][-1] == pytest.approx(ref[col][-1], rel=0, abs=1e-5 * scale)
    assert ref["Ball.wy"][-1] != 0.0                     # friction spun it


def test_contact_file_round_trip_and_checks():
    m = _ball()
    m.add_contact("Side", m.hinges[0].input, m.hinges[0].output,
                  ("box", {"size": (0.1, 0.2, 0.3)}), ("plane",), stiffness=1e5,
                  static_friction=0.5, dynamic_friction=0.4)
    text = xmlio.to_string(m)
    back, problems = xmlio.read_with_problems(text.encode())
    assert problems == []
    assert xmlio.to_string(back) == text
    assert back.contacts[1].input_shape.size.tolist() == [0.1, 0.2, 0.3]
    bad = text.replace('Type="box"', 'Type="cone"')
    _, problems = xmlio.read_with_problems(bad.encode())
    assert any(p.element == "Contact 'Side'" and "InputShape" in p.field for p in problems)
    m.contacts[1].output_shape.type = "torus"
    msgs = [str(p) for p in m.validate()]
    assert any("Contact 'Side'" in s and "box against a torus is not supported" in s for s in msgs)


def test_too_stiff_contact_for_the_step_is_named_with_a_stable_step():
    """A contact far too stiff for rk4 at 1 ms: the run is refused before it starts (it would
    throw the ball off with energy it never had), naming the contact and a step that would be
    stable (from its stiffness at the depth of an impact); at that step the ball bounces at the
    law's restitution."""
    from MultibodyWB.solver.methods.runtime import RunError
    m = _ball(v0=-1.0, k=1e12)
    with pytest.raises(RunError) as info:
        simulate(m, method="mstmm", integrator="rk4", t_end=0.05, step=1e-3, output_step=1e-3)
    p = info.value.problems[0]
    assert p.element == "Contact 'Hit'" and p.field == "Stiffness"
    step = float(p.message.split("unstable above ")[1].split(" s")[0])
    # a step just below it runs; well below it (a twentieth), the ball bounces at the law's
    # restitution
    just_below = 1e-3 / math.ceil(1e-3 / (0.9 * step))       # whole steps per output step
    simulate(m, method="mstmm", integrator="rk4", t_end=2e-3, step=just_below, output_step=1e-3)
    res = simulate(m, method="mstmm", integrator="rk4", t_end=0.02,
                   step=1e-3 / math.ceil(20e-3 / step), output_step=1e-3)
    assert res["Ball.vz"][-1] == pytest.approx(0.7, rel=1e-3)


def test_bodies_drawn_overlapping_are_refused_with_the_pair_and_depth_in_mm():
    """A ball drawn 2 mm into the ground: the run refuses to start, naming the contact, the two
    bodies and the depth in mm; drawn touching at its resting depth, it starts."""
    from MultibodyWB.solver.model import ModelError
    m = _ball(v0=0.0, gravity=G, z0=0.048)
    with pytest.raises(ModelError) as info:
        simulate(m, method="mstmm", integrator="rk4", t_end=0.001, step=1e-5, output_step=1e-3)
    text = str(info.value)
    assert "Contact 'Hit'" in text and "'Ball' and 'Ground' overlap by 2 mm" in text
    rest = (1.0 * G / 1e7) ** (1 / 1.5)                  # the static depth under the weight
    m = _ball(v0=0.0, gravity=G, z0=0.05 - rest)
    res = simulate(m, method="mstmm", integrator="rk4", t_end=0.01, step=1e-5, output_step=1e-3)
    assert res["Hit.Fn"][0] == pytest.approx(G, rel=1e-9)


def test_a_preloaded_contact_drawn_at_its_depth_starts():
    """A ball pressed on the ground by a 1 kN force, drawn at the depth that force gives: more
    than ten times its weight, but microns: a preload, not an overlap; it starts at rest."""
    k, mass, push = 1e10, 1.0, 1000.0
    depth = ((push + mass * G) / k) ** (1 / 1.5)
    m = _ball(v0=0.0, gravity=G, k=k, mass=mass, z0=0.05 - depth)
    m.add_force("Press", "point_force", m.hinges[0].input, direction=(0, 0, -1),
                magnitude=str(push))
    res = simulate(m, method="mstmm", integrator="rk4", t_end=0.002, step=1e-6,
                   output_step=1e-3)
    assert res["Hit.Fn"][0] == pytest.approx(push + mass * G, rel=1e-9)
    assert abs(res["Ball.vz"]).max() < 1e-9


def test_contact_between_welded_bodies_is_refused():
    m = _ball()
    m.hinges[0].type = "fixed"
    m.hinges[0].initial_rates = None
    msgs = [str(p) for p in m.validate()]
    assert any("Contact 'Hit'" in s and "welded by the fixed hinge 'Float'" in s for s in msgs)
