"""The compiled adaptive integrators (methods/mstmm/adaptive.py, issue 35) against scipy's:
the same steps (same count, same evaluations) and the same results to far below the tolerance
on a tree, a closed loop, a driven loop with work columns and a contact; and their guards
(a driver failing mid-run, accelerations that overflow, the stall detector)."""

import re

import numpy as np
import pytest

from MultibodyWB.examples import build
from MultibodyWB.solver.methods.runtime import RunError
from MultibodyWB.solver.model.mechanism import MultibodySystem
from MultibodyWB.solver.model.timefunction import EvaluationError
from MultibodyWB.solver.methods.mstmm import run as mstmm_run
from MultibodyWB.solver.run.simulate import StallDetector, simulate


def both(model_of, integrator, monkeypatch, **settings):
    """(compiled, scipy) results of the same run."""
    a = simulate(model_of(), integrator=integrator, **settings)
    with monkeypatch.context() as m:
        m.setattr(mstmm_run, "COMPILED_ADAPTIVE", ())
        b = simulate(model_of(), integrator=integrator, **settings)
    assert a.meta.get("compiled") and not b.meta.get("compiled")
    return a, b


def close(a, b, tol):
    """Every column of a and b within tol of the column's scale (1 for columns near 0)."""
    scale = np.maximum(np.abs(b.data).max(axis=0), 1.0)
    worst = (np.abs(a.data - b.data) / scale).max(axis=0)
    j = int(np.argmax(worst))
    assert worst[j] <= tol, (a.names[j], worst[j])


@pytest.mark.parametrize("name, integrator, t_end", [
    ("double_pendulum", "RK45", 0.5), ("four_bar", "RK45", 0.3),
    ("crank_slider", "RK45", 0.02), ("double_pendulum", "DOP853", 0.5),
    ("crank_slider", "DOP853", 0.02)])
def test_same_steps_and_results_as_scipy(monkeypatch, name, integrator, t_end):
    a, b = both(lambda: build(name), integrator, monkeypatch, t_end=t_end, output_step=t_end / 20)
    # the same method and step-size control: every step and evaluation as scipy's
    assert (a.meta["steps"], a.meta["evaluations"]) == (b.meta["steps"], b.meta["evaluations"])
    assert a.meta.get("power_evaluations") == b.meta.get("power_evaluations")
    np.testing.assert_array_equal(a.time, b.time)
    close(a, b, 1e-9)
    if "energy.work_drivers" in a.names and name == "crank_slider":
        assert abs(a.column("energy.work_drivers")[-1]) > 1.0          # work was integrated


def test_contact_agrees_with_scipy_to_the_tolerance(monkeypatch):
    """Impacts: the step sequences part at round-off, the results agree to the tolerance."""
    def model():
        m = build("bouncing_balls")
        m.simulation.relative_tolerance, m.simulation.absolute_tolerance = 1e-7, 1e-9
        return m

    a, b = both(model, "RK45", monkeypatch, t_end=0.2, output_step=0.01)
    scale = np.maximum(np.abs(b.states).max(axis=0), 1.0)
    assert (np.abs(a.states - b.states) / scale).max() < 1e-5        # positions and rates
    for name in ("energy.total", "energy.dissipated", "energy.residual"):
        assert abs(a.column(name)[-1] - b.column(name)[-1]) < 1e-5 * abs(
            b.column("energy.total")).max(), name
    assert a.column("energy.dissipated")[-1] > 0.0


def test_driver_failing_mid_run_names_the_driver(monkeypatch):
    """At the first stage past 5 ms, as scipy's path (the same steps: the same time)."""
    def failing():
        m = build("crank_slider")
        m.hinge("MainBearing").drivers[0].expression = (
            "314.1592653589793*t + ifpos(t - 0.005, sqrt(-t), 0)")
        m.simulation.end_time = 0.004        # the model's check samples up to here: valid
        return m

    found = []
    for compiled in (True, False):
        with monkeypatch.context() as mp:
            if not compiled:
                mp.setattr(mstmm_run, "COMPILED_ADAPTIVE", ())
            with pytest.raises(EvaluationError) as info:
                simulate(failing(), integrator="RK45", t_end=0.01)
        (p,) = info.value.problems
        assert (p.element, p.field) == ("Hinge 'MainBearing'", "Driver"), p
        found.append(float(re.search(r"at t = ([0-9.e-]+) s", p.message).group(1)))
    assert 0.005 < found[0] < 0.006 and found[0] == found[1], found


def kicked():
    """A free block on which a force of 1e307 N turns on at t = 0.05 s: its accelerations
    overflow (not finite at a finite state)."""
    m = MultibodySystem("Kicked")
    g = m.set_ground()
    b = m.add_body("Block", 1e-3, [1e-6, 1e-6, 1e-6, 0, 0, 0])
    bm = b.add_marker((0, 0, 0))
    m.add_hinge("Slide", "prismatic", bm, g.add_marker((0, 0, 0)))
    m.add_force("Kick", "point_force", bm, direction=(0, 0, 1),
                magnitude="ifpos(t - 0.05, 1e307, 0)")
    return m


@pytest.mark.parametrize("integrator", ["RK45", "DOP853"])
def test_accelerations_that_overflow_name_the_hinge(integrator):
    with pytest.raises(RunError) as info:
        simulate(kicked(), integrator=integrator, t_end=0.1, step=1e-3, output_step=0.01)
    (p,) = info.value.problems
    assert (p.element, p.field) == ("Hinge 'Slide'", "State"), p
    t = float(re.search(r"not finite at t = ([0-9.e-]+) s", p.message).group(1))
    assert 0.05 <= t < 0.06, p


def test_stall_detector_in_bulk_is_step_by_step():
    ts = np.cumsum(np.r_[np.full(35, 1e-3), np.full(40, 1e-12)])
    one = StallDetector(build("double_pendulum"), "RK45", 1.0, window=10, limit=1e6)
    bulk = StallDetector(build("double_pendulum"), "RK45", 1.0, window=10, limit=1e6)
    for k, t in enumerate(ts):
        try:
            one.step(t)
        except RunError:
            break
    with pytest.raises(RunError):
        for part in np.array_split(ts, 7):
            bulk.steps(part)
    assert k == 59 and (one.count, one.slow) == (bulk.count, bulk.slow)


@pytest.mark.parametrize("integrator", ["RK45", "DOP853"])
def test_a_model_without_state_runs_to_the_end(integrator):
    """A body welded to the ground: no state (RK45's error norm over no component is 0/0,
    which failed the run at t = 0 with 'step size less than spacing'); scipy's path ends it."""
    m = MultibodySystem("Welded")
    g = m.set_ground()
    b = m.add_body("Block", 1.0, [1e-3, 1e-3, 1e-3, 0, 0, 0])
    m.add_hinge("Weld", "fixed", b.add_marker(), g.add_marker())
    r = simulate(m, integrator=integrator, t_end=0.1, output_step=0.05)
    np.testing.assert_array_equal(r.time, [0.0, 0.05, 0.1])


def test_wall_budget_stops_a_compiled_run():
    from MultibodyWB.solver.methods.runtime import BudgetExceeded
    simulate(build("double_pendulum"), integrator="DOP853", t_end=0.01)   # loads the kernels
    with pytest.raises(BudgetExceeded) as info:
        # 2 s: the set-up before the first chunk takes longer than 0.5 s on a loaded machine
        # (stopped at t = 0), and 1e5 s of the pendulum far longer than 2 s
        simulate(build("double_pendulum"), integrator="DOP853", t_end=1e5, output_step=10.0,
                 wall_budget=2.0)
    t = float(re.search(r"stopped at t = ([0-9.e+-]+) s", str(info.value)).group(1))
    assert 0.0 < t < 1e5
