"""Joint stops (issue 14): a hinge's limits enforced by a one-sided Hunt-Crossley stop in every
method: the rebound at the chosen restitution, the energy lost, the stop load's impulse, rest
against a stop, and agreement between the methods."""

import math

import numpy as np
import pytest

from MultibodyWB.solver.model import MultibodySystem, massprops
from MultibodyWB.solver.run.simulate import simulate

G = 9.81


def _rotor(w0=3.0, upper=0.3, restitution=0.6, k=500.0, gravity=0.0, lower=-math.inf):
    """A bar on a revolute hinge about the global z axis (or a pendulum when gravity acts along
    -y), turning at ``w0`` towards its upper limit."""
    m = MultibodySystem("Stop", gravity=(0, -gravity, 0))
    g = m.set_ground()
    gm = g.add_marker((0, 0, 0))
    mp = massprops.box((0.4, 0.04, 0.02), 2700.0, corner=(0, -0.02, -0.01))
    b = m.add_body("Bar", mp.mass, mp.ji, mass_center=mp.center)
    bm = b.add_marker((0, 0, 0))
    m.add_hinge("Pivot", "revolute", bm, gm, initial_rates=[w0], lower_limits=[lower],
                upper_limits=[upper], stop_stiffness=[k], stop_restitution=[restitution],
                stop_impact_speed=[abs(w0) or 1.0])
    J = mp.ji[2] if np.ndim(mp.ji) == 1 else mp.ji[2, 2]
    return m, J


@pytest.mark.parametrize("method", ["mstmm", "constrained", "newton-euler"])
def test_rotor_rebounds_from_its_stop_at_the_restitution(method):
    """No gravity: the bar meets its stop at w0 (the impact speed) and leaves it at -e w0; the
    energy lost is 1/2 J w0^2 (1 - e^2); the stop torque's impulse is J (w_after - w_before)."""
    w0, e = 3.0, 0.6
    m, J = _rotor(w0=w0, restitution=e)
    res = simulate(m, method=method, integrator="rk4", t_end=0.16, step=1e-5, output_step=1e-4)
    w = res["Pivot.rz_rate"]
    tau = res["Pivot.rz_stop"]
    assert w[0] == pytest.approx(w0, rel=1e-12)
    assert tau[0] == 0.0 and tau.min() < 0                 # it pushes back against rz
    assert res["Pivot.rz"][-1] < 0.3                       # off the stop again
    tol = 1e-6 if method != "newton-euler" else 2e-4
    assert w[-1] == pytest.approx(-e * w0, rel=tol)
    impulse = np.trapz(tau, res.time)
    assert impulse == pytest.approx(J * (w[-1] - w0), rel=1e-3)
    if method != "newton-euler":
        lost = 0.5 * J * w0 ** 2 * (1 - e ** 2)
        assert res["energy.dissipated"][-1] == pytest.approx(lost, rel=1e-6)
        assert abs(res["energy.residual"]).max() < 1e-7 * 0.5 * J * w0 ** 2


def test_limit_holds_the_rotor_against_a_torque():
    """A constant torque presses the bar on its stop: it rests where k d = torque, the stop
    column balancing the torque."""
    m, J = _rotor(w0=0.0, upper=0.2, k=200.0, restitution=0.3)
    m.add_force("Push", "point_torque", m.hinges[0].input, direction=(0, 0, 1), magnitude="2")
    res = simulate(m, method="mstmm", integrator="rk4", t_end=3.0, step=1e-4, output_step=1e-2)
    assert res["Pivot.rz_stop"][-1] == pytest.approx(-2.0, rel=1e-6)
    assert res["Pivot.rz"][-1] == pytest.approx(0.2 + 2.0 / 200.0, rel=1e-6)


def test_pendulum_between_two_stops_keeps_its_energy_balance_and_methods_agree():
    """A pendulum swinging under gravity between stops at +-30 deg from the bottom: several
    impacts; the energy balance closes and the constrained method follows mstmm."""
    m = MultibodySystem("Pendulum", gravity=(0, 0, -G))
    g = m.set_ground()
    gm = g.add_marker((0, 0, 0), (math.pi / 2, 0, 0))       # hinge axis along -y
    mp = massprops.box((0.02, 0.02, 0.3), 7850.0, corner=(-0.01, -0.01, -0.3))
    b = m.add_body("Arm", mp.mass, mp.ji, mass_center=mp.center)
    bm = b.add_marker((0, 0, 0), (math.pi / 2, 0, 0))
    lim = math.radians(30)
    m.add_hinge("Pivot", "revolute", bm, gm, initial_rates=[6.0], lower_limits=[-lim],
                upper_limits=[lim], stop_stiffness=[2e3], stop_restitution=[0.8],
                stop_impact_speed=[4.0])
    ref = simulate(m, method="mstmm", integrator="rk4", t_end=1.0, step=1e-5, output_step=1e-3)
    q = ref["Pivot.rz"]
    hits = np.flatnonzero(np.diff((ref["Pivot.rz_stop"] != 0).astype(int)) == 1)
    assert len(hits) >= 3                                  # both stops, several times
    assert q.max() < lim + 0.05 and q.min() > -lim - 0.05
    # (RK4 over the kink where a stop engages: 1.5e-7 seen)
    assert abs(ref["energy.residual"]).max() < 1e-6 * abs(ref["energy.kinetic"]).max()
    assert ref["energy.dissipated"][-1] > 0
    # the constrained method (dense, in Python) over the first impact only
    other = simulate(m, method="constrained", integrator="rk4", t_end=0.2, step=1e-5,
                     output_step=1e-3)
    assert other["Pivot.rz_stop"].min() < 0
    np.testing.assert_allclose(other["Pivot.rz"], q[:other.time.size], rtol=0, atol=1e-6)


def test_prismatic_stop_carries_the_weight():
    """A slider on a vertical prismatic hinge falls onto its lower limit and comes to rest on
    it; the stop force is its weight."""
    m = MultibodySystem("Drop", gravity=(0, 0, -G))
    g = m.set_ground()
    gm = g.add_marker((0, 0, 0))
    mp = massprops.box((0.05, 0.05, 0.05), 7850.0, corner=(-0.025, -0.025, -0.025))
    b = m.add_body("Slider", mp.mass, mp.ji, mass_center=mp.center, position=(0, 0, 0.02))
    bm = b.add_marker((0, 0, 0))
    m.add_hinge("Slide", "prismatic", bm, gm, lower_limits=[0.0], stop_stiffness=[1e5],
                stop_restitution=[0.2], stop_impact_speed=[0.5])
    res = simulate(m, method="mstmm", integrator="rk4", t_end=1.5, step=1e-5, output_step=1e-2)
    assert res["Slide.z_stop"][-1] == pytest.approx(mp.mass * G, rel=1e-6)
    assert res["Slide.z"][-1] == pytest.approx(-mp.mass * G / 1e5, rel=1e-6)


def test_limits_without_a_stop_stiffness_are_refused_naming_the_hinge():
    m, _ = _rotor()
    m.hinges[0].stop_stiffness = None
    msgs = [str(p) for p in m.validate()]
    assert any("Hinge 'Pivot'" in s and "StopStiffness" in s and "N m/rad" in s for s in msgs)
    m.hinges[0].stop_stiffness = np.array([10.0])
    m.hinges[0].upper_limits = np.array([4.0])
    msgs = [str(p) for p in m.validate()]
    assert any("UpperLimits" in s and "229.183 deg is beyond a half turn" in s for s in msgs)
