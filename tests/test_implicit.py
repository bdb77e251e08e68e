"""The implicit integrator TR-BDF2 compiled with the mstmm evaluation (methods/mstmm/implicit.py,
issue 35 item 2): 2nd order on a smooth model against the exact solution; L-stable on a stiff
spring-damper at ten times rk4's stable step (the slow motion exact, the stiff mode damped,
where rk4 blows up); contact with friction (a box sliding, a ball resting) at steps rk4 and
euler cannot take, with a fine rk4 run's results and a closed energy balance; the adaptive
form against DOP853; and the guards (accelerations that overflow name the hinge, a driver
that fails names the driver, the constrained method refuses it)."""

import math
import re

import numpy as np
import pytest
from scipy.linalg import expm

from test_compiled_adaptive import kicked  # the block a 1e307 N force kicks
from test_contact import _block_on_incline
from MultibodyWB.examples import build
from MultibodyWB.solver.methods.mstmm import implicit as IM
from MultibodyWB.solver.methods.runtime import RunError
from MultibodyWB.solver.model import ModelError, MultibodySystem
from MultibodyWB.solver.model.timefunction import EvaluationError
from MultibodyWB.solver.run.simulate import simulate

G = 9.81


def two_masses(k_soft=100.0, k_stiff=1e6, c_stiff=50.0, x0=0.01, xr0=1e-4):
    """Block A (1 kg) on a soft spring to the ground, block B (1 kg) on a stiff spring-damper to
    A (both prismatic hinges along x): a slow mode (the blocks together, w = sqrt(k_soft / 2))
    and a stiff one (w about sqrt(2 k_stiff) = 1414 rad/s, rk4's stable step 2e-3 s)."""
    m = MultibodySystem("TwoMasses", gravity=(0.0, 0.0, 0.0))
    g = m.set_ground()
    a = m.add_body("A", 1.0, [1e-3, 1e-3, 1e-3, 0, 0, 0])
    b = m.add_body("B", 1.0, [1e-3, 1e-3, 1e-3, 0, 0, 0])
    m.add_hinge("Soft", "prismatic", a.add_marker((0, 0, 0)), g.add_marker((0, 0, 0)),
                initial_coordinates=[x0], initial_rates=[0.0], stiffness=[k_soft])
    m.add_hinge("Stiff", "prismatic", b.add_marker((0, 0, 0)), a.add_marker((0, 0, 0)),
                initial_coordinates=[xr0], initial_rates=[0.0], stiffness=[k_stiff],
                damping=[c_stiff])
    return m


def two_masses_exact(t, k_soft=100.0, k_stiff=1e6, c_stiff=50.0, x0=0.01, xr0=1e-4):
    """(x_A, x_rel) of :func:`two_masses` at the times ``t``: the linear system's exponential."""
    M = np.array([[2.0, 1.0], [1.0, 1.0]])
    Minv = np.linalg.inv(M)
    A = np.zeros((4, 4))
    A[:2, 2:] = np.eye(2)
    A[2:, :2] = -Minv @ np.diag([k_soft, k_stiff])
    A[2:, 2:] = -Minv @ np.diag([0.0, c_stiff])
    z0 = np.array([x0, xr0, 0.0, 0.0])
    return np.array([(expm(A * ti) @ z0)[:2] for ti in t])


def oscillator(k=100.0, c=2.0, x0=0.01):
    m = MultibodySystem("Oscillator", gravity=(0.0, 0.0, 0.0))
    g = m.set_ground()
    b = m.add_body("Block", 1.0, [1e-3, 1e-3, 1e-3, 0, 0, 0])
    m.add_hinge("Slide", "prismatic", b.add_marker((0, 0, 0)), g.add_marker((0, 0, 0)),
                initial_coordinates=[x0], initial_rates=[0.0], stiffness=[k], damping=[c])
    return m


def oscillator_exact(t, k=100.0, c=2.0, x0=0.01):
    wn, z = math.sqrt(k), c / (2.0 * math.sqrt(k))
    wd = wn * math.sqrt(1.0 - z * z)
    return x0 * np.exp(-z * wn * t) * (np.cos(wd * t) + z * wn / wd * np.sin(wd * t))


def test_second_order_on_a_damped_oscillator():
    """The error at fixed steps h, h/2, h/4 falls by 4 per halving (2nd order), against the
    exact solution; the rows between the steps (output every 0.01 s, steps of 4e-3 ... 1e-3 s,
    not a whole number of them) come from the step's interpolant."""
    errors = []
    for h in (4e-3, 2e-3, 1e-3):
        r = simulate(oscillator(), integrator="trbdf2", t_end=1.0, step=h, output_step=0.01)
        assert r.meta["integrator"] == "trbdf2" and r.meta["compiled"]
        errors.append(np.abs(r.states[:, 0] - oscillator_exact(r.time)).max())
    ratios = errors[0] / errors[1], errors[1] / errors[2]
    assert all(3.6 < q < 4.4 for q in ratios), (errors, ratios)
    assert errors[-1] < 2e-6


def test_stiff_spring_damper_at_ten_times_rk4s_step():
    """At 2e-2 s, ten times rk4's stable step: rk4 blows up (naming a hinge); TR-BDF2 follows
    the slow motion (x_A) of the exact solution and damps the stiff mode at once (L-stable: the
    trapezoidal rule alone would carry its 1e-4 m start on, changing sign every step)."""
    h, t_end = 2e-2, 2.0
    with pytest.raises(RunError) as info:
        simulate(two_masses(), integrator="rk4", t_end=t_end, step=h, output_step=h)
    assert info.value.problems[0].element.startswith("Hinge '")
    r = simulate(two_masses(), integrator="trbdf2", t_end=t_end, step=h, output_step=h)
    exact = two_masses_exact(r.time)
    slow = np.abs(r.states[:, 0] - exact[:, 0]).max()
    assert slow < 0.02 * 0.01, slow                       # 2 % of the amplitude, 2.25 periods
    late = r.time >= 0.1                                  # five steps on
    stiff = np.abs(r.states[late, 1] - exact[late, 1]).max()
    assert stiff < 1e-6, stiff                            # from 1e-4 m (exact: e^-100t, ~5e-7)
    assert r.meta["newton_failures"] == 0


def box_on_incline(theta=math.radians(30), mus=0.3, mud=0.2, vs=1e-4, k=1e7):
    """tests/test_contact.py's block: 1 kg box resting on its four lower corners on a plane,
    gravity tilted by theta; tan(theta) > mu_s: it slides."""
    return _block_on_incline(theta, mus, mud, vs, k)[0]


def rolling_ball(k=1e6, mass=2.0, r=0.05, v0=0.01, vs=1e-4):
    """A ball with friction on the ground plane at its static depth, thrown along x at ``v0``
    without spin: friction brakes it to rolling at 5/7 v0 within a millisecond, then holds
    its contact point still (the stiction slope mu N / v_s: the stiff part)."""
    m = MultibodySystem("Rest", gravity=(0, 0, -G))
    g = m.set_ground()
    gm = g.add_marker((0, 0, 0))
    J = 0.4 * mass * r * r
    depth = (mass * G / k) ** (1 / 1.5)
    b = m.add_body("Ball", mass, [J, J, J, 0, 0, 0], position=(0, 0, r - depth))
    bm = b.add_marker((0, 0, 0))
    m.add_hinge("Float", "free", bm, gm, initial_rates=[v0, 0, 0, 0, 0, 0])
    m.add_contact("Hit", bm, gm, ("sphere", {"radius": r}), ("plane",), stiffness=k,
                  restitution=0.2, static_friction=0.5, dynamic_friction=0.4,
                  stiction_velocity=vs)
    return m


def _energy_closes(r, tol=1e-3):
    b = r.energy_balance()
    assert abs(b["relative"]) < tol, b
    assert not r.untrusted, r.untrusted


def _same(r, ref, cols, tol=0.01):
    for col in cols:
        scale = np.abs(ref[col]).max()
        assert np.abs(r[col] - ref[col]).max() < tol * scale, col


# What the explicit integrators do on these two (measured, docs/benchmarks.md): friction's force
# is bounded (mu N), so a step past the stiction slope's limit does not blow up; the contact
# chatters and the energy balance opens. The rolling ball: rk4 closes it to 1e-10 at 5e-6 s,
# 3e-5 at 1e-5 s, and past 1e-3 (untrusted) from 1e-4 s, euler likewise; the sliding box:
# euler untrusted from 2.5e-4 s (rk4 holds to 1e-3 s: sliding, the slope is not met).


def test_box_sliding_with_friction_at_a_large_step():
    """The box slides down at g (sin - mu_d cos): TR-BDF2 at 1e-3 s (euler's energy balance
    does not close from 2.5e-4 s) gives rk4's motion at 1e-5 s within 1 % and the energy
    balance closes to 1e-3 of the energies' scale."""
    t_end = 0.3
    euler = simulate(box_on_incline(), integrator="euler", t_end=t_end, step=2.5e-4,
                     output_step=0.01)
    assert euler.untrusted
    r = simulate(box_on_incline(), integrator="trbdf2", t_end=t_end, step=1e-3,
                 output_step=0.01)
    ref = simulate(box_on_incline(), integrator="rk4", t_end=t_end, step=1e-5,
                   output_step=0.01)
    _same(r, ref, ("Block.x", "Block.vx", "Block.z"))
    theta, mud = math.radians(30), 0.2
    vx = r["Block.vx"]
    a = (vx[-1] - vx[10]) / (r.time[-1] - r.time[10])
    assert a == pytest.approx(G * (math.sin(theta) - mud * math.cos(theta)), rel=0.01)
    _energy_closes(r)
    assert r["energy.dissipated"][-1] > 0.01           # friction did work


def test_rolling_ball_held_by_stiction_at_a_large_step():
    """The ball brakes to rolling (5/7 of its speed) and friction then holds its contact
    point: TR-BDF2 at 1e-3 s, ten times the step at which rk4's and euler's energy balance
    opens past 1e-3 (the stiction slope chatters), gives rk4's motion at 2e-6 s within 1 %."""
    t_end = 0.2
    for integrator in ("rk4", "euler"):
        bad = simulate(rolling_ball(), integrator=integrator, t_end=t_end, step=1e-4,
                       output_step=0.01)
        assert bad.untrusted, integrator
    r = simulate(rolling_ball(), integrator="trbdf2", t_end=t_end, step=1e-3,
                 output_step=0.01)
    ref = simulate(rolling_ball(), integrator="rk4", t_end=t_end, step=2e-6,
                   output_step=0.01)
    _same(r, ref, ("Ball.x", "Ball.vx", "Hit.Fn", "Hit.Ft"))
    assert r["Ball.vx"][-1] == pytest.approx(5 / 7 * 0.01, rel=0.01)
    assert r["Hit.Fn"][-1] == pytest.approx(2.0 * G, rel=1e-6)
    _energy_closes(r)


def test_adaptive_agrees_with_dop853_to_its_tolerance():
    """The double pendulum (chaotic: the local errors grow) for 1 s against DOP853 at 1e-11:
    the global error follows the tolerance as a 2nd order method's, tol^(2/3) (measured: 3.8e-3
    at rtol 1e-4, 1.7e-4 at 1e-6, 7.8e-6 at 1e-8)."""
    m = build("double_pendulum")
    m.simulation.relative_tolerance, m.simulation.absolute_tolerance = 1e-11, 1e-13
    b = simulate(m, integrator="DOP853", t_end=1.0, output_step=0.05)
    scale = np.maximum(np.abs(b.states).max(axis=0), 1.0)
    errors = []
    for rtol in (1e-5, 1e-7):
        m.simulation.relative_tolerance, m.simulation.absolute_tolerance = rtol, rtol * 1e-2
        a = simulate(m, integrator="trbdf2-adaptive", t_end=1.0, output_step=0.05)
        errors.append((np.abs(a.states - b.states) / scale).max())
        assert errors[-1] < 100 * rtol ** (2 / 3), (rtol, errors)
        assert a.meta["integrator"] == "trbdf2-adaptive" and a.meta["relative_tolerance"] == rtol
    assert errors[0] / errors[1] > 10.0, errors


@pytest.mark.parametrize("integrator", IM.NAMES)
def test_accelerations_that_overflow_name_the_hinge(integrator):
    with pytest.raises(RunError) as info:
        simulate(kicked(), integrator=integrator, t_end=0.1, step=1e-3, output_step=0.01)
    (p,) = info.value.problems
    assert p.element == "Hinge 'Slide'", p
    t = float(re.search(r"at t = ([0-9.e-]+) s", p.message).group(1))
    assert 0.049 <= t < 0.06, p
    assert "nan" not in p.message.lower()


def test_a_failing_driver_is_named():
    m = build("crank_slider")
    m.hinge("MainBearing").drivers[0].expression = (
        "314.1592653589793*t + ifpos(t - 0.005, sqrt(-t), 0)")
    m.simulation.end_time = 0.004
    with pytest.raises(EvaluationError) as info:
        simulate(m, integrator="trbdf2", t_end=0.01, step=1e-4, output_step=1e-3)
    (p,) = info.value.problems
    assert (p.element, p.field) == ("Hinge 'MainBearing'", "Driver"), p


def test_constrained_method_refuses_the_implicit_integrators():
    with pytest.raises(ModelError) as info:
        simulate(build("double_pendulum"), method="constrained", integrator="trbdf2",
                 t_end=0.01)
    assert any(p.field == "Integrator" and "mstmm only" in p.message
               for p in info.value.problems)


def test_lu_with_partial_pivoting():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(7, 7))
    A[0, 0] = 0.0                                   # needs a row swap
    b = rng.normal(size=7)
    LU, piv, x = A.copy(), np.zeros(7, dtype=np.int64), b.copy()
    assert IM.lu_factor(LU, piv)
    IM.lu_solve(LU, piv, x)
    np.testing.assert_allclose(A @ x, b, atol=1e-12)
    assert not IM.lu_factor(np.zeros((3, 3)), np.zeros(3, dtype=np.int64))
