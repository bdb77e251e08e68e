"""Issue 12, the run side: no traceback, no hang, a clear answer naming the element.

Expressions that fail during a run name the driver or force and the time; settings given to
``run`` that a run could not allocate are refused before it starts; states that are not finite
stop the run naming the hinge (or body) that blew up first and the time; numerical breakdowns
of the integrators (scipy's LU of a Jacobian that is not finite, numpy's lstsq of the loops'
start) become a :class:`RunError`; a stiff model ends in bounded time with a message naming its
stiffest element; a wall-clock budget stops a run.
"""

import io
import re
import time

import numpy as np
import pytest

from MultibodyWB.examples import build
from MultibodyWB.solver import cli
from MultibodyWB.solver.methods.newton_euler import scheme as newton_euler
from MultibodyWB.solver.model import xmlio
from MultibodyWB.solver.model import ModelError
from MultibodyWB.solver.run.simulate import StallDetector, _settings, simulate
from MultibodyWB.solver.methods.runtime import (BudgetExceeded, RunError, SimulationError,
                                                stiff_elements)

METHODS = ["mstmm", "newton-euler", "constrained"]


def run_cli(path, *args):
    """``run`` in this process: (exit code, printed text, problem lines)."""
    out = io.StringIO()
    code = cli.main(["run", str(path), *args], out=out)
    text = out.getvalue()
    return code, text, [line[4:] for line in text.splitlines() if line.startswith("  - ")]


def write(tmp_path, model, name="model.mbs.xml"):
    path = tmp_path / name
    xmlio.write(model, str(path))
    return path


def heavy(name="double_pendulum", g=-9.81e6, end=0.01):
    """An example under gravity ``g`` (m/s^2), ending at ``end`` s."""
    m = build(name)
    m.gravity = np.array([0.0, 0.0, g])
    m.simulation.end_time = end
    return m


def stiff(damping=1e12, integrator="RK45"):
    """The issue's stiff model: the double pendulum, gravity -9.81e6, hinge damping 1e12."""
    m = heavy()
    for h in m.hinges:
        h.damping = np.array([damping])
    m.simulation.integrator = integrator
    return m


# --------------------------------------------------------------------------------------------------
# Expressions that fail during the run name the driver or the force and the time
# --------------------------------------------------------------------------------------------------

#: The crank's driver (3000 rpm) plus a term outside sqrt's domain after t = 5 ms.
LATE = "314.1592653589793*t + 0.001*(sqrt(0.005 - t) - sqrt(0.005))"


@pytest.mark.parametrize("method", METHODS)
def test_driver_failing_mid_run_names_hinge_field_and_time(tmp_path, method):
    m = build("crank_slider")
    m.hinge("MainBearing").drivers[0].expression = LATE
    m.simulation.end_time = 0.004                     # check samples up to here: valid
    path = write(tmp_path, m)
    assert cli.main(["check", str(path)], out=io.StringIO()) == 0
    code, text, lines = run_cli(path, "--t-end", "0.01", "--method", method)
    assert code == 2, text
    (line,) = lines
    assert line.startswith("Hinge 'MainBearing', field Driver: "), line
    t = float(re.search(r"cannot be evaluated at t = ([0-9.e-]+) s", line).group(1))
    assert 0.005 <= t < 0.0052, line
    assert "outside a function's domain" in line or "division by zero" in line   # 1/sqrt(0)


def test_force_failing_mid_run_names_the_force(tmp_path):
    m = build("crank_slider")
    gas = m.forces[0]
    gas.magnitude = "1/(0.005 - t)**0.5"
    m.simulation.end_time = 0.004
    path = write(tmp_path, m)
    code, text, lines = run_cli(path, "--t-end", "0.01")
    assert code == 2, text
    (line,) = lines
    assert line.startswith(f"Force '{gas.name}', field Magnitude: "), line
    t = float(re.search(r"at t = ([0-9.e-]+) s", line).group(1))
    assert 0.005 <= t < 0.0052, line


# --------------------------------------------------------------------------------------------------
# Settings given to run: refused before allocating, naming the sizes
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("args, field, words", [
    (("--t-end", "1e308"), "Step", ("inf steps",)),
    (("--step", "5e-324"), "Step", ("inf steps",)),
    (("--t-end", "1e6", "--step", "1e-9"), "Step", ("1e+15 steps",)),
    (("--t-end", "1e9", "--output-step", "1e-3", "--integrator", "RK45"), "OutputStep",
     ("1e+12 output rows", "GB of results")),
    (("--output-step", "1e300"), "OutputStep", ("1e+303 steps",)),
], ids=["t-end 1e308", "step 5e-324", "EndTime 1e6 Step 1e-9", "1e12 rows", "output 1e300"])
def test_run_overrides_are_refused_before_allocating(tmp_path, args, field, words):
    path = write(tmp_path, build("double_pendulum"))
    start = time.perf_counter()
    code, text, lines = run_cli(path, *args)
    assert time.perf_counter() - start < 10
    assert code == 2, text
    assert any(line.startswith(f"Simulation, field {field}: ") and all(w in line for w in words)
               for line in lines), text


def test_output_step_over_a_tiny_step_does_not_overflow():
    m = build("double_pendulum")
    with pytest.raises(ModelError) as info:
        _settings(m, None, "rk4", 1.0, 1e-300, 1e300)
    fields = {p.field for p in info.value.problems}
    assert "OutputStep" in fields, info.value


# --------------------------------------------------------------------------------------------------
# States that are not finite: the time and the element that blew up first
# --------------------------------------------------------------------------------------------------

def test_rk4_blow_up_names_the_hinge_and_the_time():
    with pytest.raises(RunError) as info:
        simulate(heavy(), integrator="rk4")
    (p,) = info.value.problems
    assert p.element in ("Hinge 'Shoulder'", "Hinge 'Elbow'") and p.field == "State", p
    t = float(re.search(r"not finite at t = ([0-9.e-]+) s", p.message).group(1))
    assert 0.0 < t <= 0.01 and t == pytest.approx(round(t / 1e-3) * 1e-3)  # a step's end
    assert "use a smaller Step" in p.message
    assert isinstance(info.value, SimulationError) and isinstance(info.value, ModelError)


def test_newton_euler_blow_up_names_the_body():
    with pytest.raises(RunError) as info:
        simulate(heavy(), method="newton-euler")
    (p,) = info.value.problems
    assert p.element in ("RigidBody 'Upper'", "RigidBody 'Lower'") and p.field == "State", p
    assert "newton-euler" in p.message and re.search(r"at t = [0-9.e-]+ s", p.message)


def test_constrained_blow_up_is_a_run_error_with_advice():
    with pytest.raises(RunError) as info:
        simulate(stiff(integrator="rk4"), method="constrained")
    (p,) = info.value.problems
    assert p.element == "Hinge 'Shoulder'" and p.field == "Damping", p
    assert "not finite" in p.message and "Radau" in p.message


def test_cli_exit_2_for_a_blow_up(tmp_path):
    m = heavy()
    m.simulation.integrator = "rk4"
    code, text, lines = run_cli(write(tmp_path, m))
    assert code == 2 and len(lines) == 1 and ", field State: " in lines[0], text


# --------------------------------------------------------------------------------------------------
# Numerical breakdowns: clean errors, not tracebacks
# --------------------------------------------------------------------------------------------------

def fast_chain():
    """The chain with every hinge turning at 1e12 rad/s."""
    m = build("chain")
    for h in m.hinges:
        h.initial_rates = np.full(h.kind.dof, 1e12)
    m.simulation.end_time = 0.01
    return m


def test_radau_on_rates_of_1e12_ends_in_a_run_error_not_a_value_error():
    """Was ``ValueError: array must not contain infs or NaNs`` (scipy's LU) from _run_adaptive,
    or a run that never ended."""
    start = time.perf_counter()
    with pytest.raises(RunError) as info:
        simulate(fast_chain(), integrator="Radau")
    assert time.perf_counter() - start < 60
    (p,) = info.value.problems
    assert p.element.startswith(("Hinge '", "Simulation")), p
    assert re.search(r"t = [0-9.e-]+ s", p.message), p


def test_newton_euler_loop_start_that_is_not_finite_names_the_cut_hinge(monkeypatch):
    """numpy's lstsq raises a bare SystemError for a matrix with NaN (was the traceback of
    ``newton_euler._close_loops``)."""
    m = build("four_bar")
    m.hinge("CrankPivot").initial_coordinates = np.array([0.3])
    real = newton_euler.loop_residual
    monkeypatch.setattr(newton_euler, "loop_residual",
                        lambda *a: np.full_like(real(*a), np.nan))
    with pytest.raises(ModelError) as info:
        newton_euler.NewtonEuler(m, 1e-5)
    cut = newton_euler.analyse(m).cut_hinges
    assert [p.element for p in info.value.problems] == [f"Hinge '{h}'" for h in cut]
    assert all(p.field == "InitialCoordinates" and "not finite" in p.message
               for p in info.value.problems)


def test_lstsq_of_nan_is_a_system_error_in_this_numpy():
    """Why :func:`newton_euler._least_squares` looks before it solves."""
    with pytest.raises((SystemError, np.linalg.LinAlgError)):
        np.linalg.lstsq(np.array([[np.nan, 1.0], [1.0, 2.0]]), np.ones(2), rcond=None)


# --------------------------------------------------------------------------------------------------
# Stiff models: no progress is detected, the stiffest element named
# --------------------------------------------------------------------------------------------------

def test_stiffest_element_is_the_damped_hinge_with_its_time_scale():
    m = build("double_pendulum")
    m.hinge("Elbow").damping = np.array([1e12])
    m.hinge("Shoulder").stiffness = np.array([100.0])
    found = stiff_elements(m)
    rate, element, field, text = found[0]
    assert (element, field) == ("Hinge 'Elbow'", "Damping")
    # a link is a steel box 0.33 m x 0.03 m x 0.01 m (0.3 m pivot to pivot, 15 mm past each
    # end); about the hinge axis through its end marker: m ((a^2 + b^2) / 12 + d^2), d = 0.15 m
    def J(body):
        return body.mass * ((0.33 ** 2 + 0.03 ** 2) / 12.0 + 0.15 ** 2)

    assert m.body("Lower").mass == pytest.approx(0.33 * 0.03 * 0.01 * 7850.0, rel=1e-3)
    assert rate == pytest.approx(1e12 / J(m.body("Lower")), rel=1e-9)
    assert f"a time scale of {J(m.body('Lower')) / 1e12:.2g} s" in text
    (k_rate, *_), = [e for e in found if e[1:3] == ("Hinge 'Shoulder'", "Stiffness")]
    assert k_rate == pytest.approx(np.sqrt(100.0 / J(m.body("Upper"))), rel=1e-9)


@pytest.mark.parametrize("method", ["mstmm", "constrained"])
def test_stiff_model_ends_in_bounded_time_naming_the_stiffest_element(method):
    start = time.perf_counter()
    with pytest.raises(RunError) as info:
        simulate(stiff(), method=method)
    took = time.perf_counter() - start
    assert took < 45, took
    (p,) = info.value.problems
    assert p.element in ("Hinge 'Shoulder'", "Hinge 'Elbow'") and p.field == "Damping", p
    assert "makes no progress" in p.message and "stiff" in p.message
    # mstmm: its compiled implicit integrator (issue 35); constrained: scipy's
    advised = "trbdf2-adaptive" if method == "mstmm" else "Radau or BDF"
    assert f"the integrator {advised}" in p.message


@pytest.mark.parametrize("method, integrator", [("mstmm", "trbdf2-adaptive"),
                                                ("constrained", "Radau")])
def test_stiff_model_runs_with_the_advised_integrator(method, integrator):
    """The integrator the advice names runs the model RK45 could not advance (mstmm: 0.01 s in
    1.4 s at load 3, the energy balance closed to 4e-15)."""
    from MultibodyWB.solver.methods.runtime import stiffness_advice
    assert f"the integrator {integrator}" in stiffness_advice(stiff(), "RK45", None, False,
                                                              method)[2]
    res = simulate(stiff(integrator=integrator), method=method)
    assert np.all(np.isfinite(res.column("Lower.x")))
    assert not res.meta.get("warnings")


def test_lsoda_stuck_at_one_time_is_stopped():
    """LSODA on the four-bar under -9.81e6 m/s^2 took steps of 0 s forever (killed after 60 s)."""
    start = time.perf_counter()
    with pytest.raises(RunError) as info:
        simulate(heavy("four_bar"), integrator="LSODA", accept_corrections=True)
    assert time.perf_counter() - start < 45
    assert "makes no progress" in info.value.problems[0].message


def test_stall_detector_needs_two_slow_windows():
    d = StallDetector(build("double_pendulum"), "RK45", 1.0, window=10, limit=1e6)
    t = 0.0
    for _ in range(100):                  # 1e-3 s per step: 1000 steps, no stall
        t += 1e-3
        d.step(t)
    for _ in range(19):                   # 1e-12 s per step: the first slow window passes
        t += 1e-12
        d.step(t)
    with pytest.raises(RunError) as info:
        t += 1e-12
        d.step(t)
    assert info.value.problems[0].element == "Simulation"


# --------------------------------------------------------------------------------------------------
# The wall-clock budget
# --------------------------------------------------------------------------------------------------

def test_wall_budget_stops_a_long_run():
    m = build("double_pendulum")
    start = time.perf_counter()
    with pytest.raises(BudgetExceeded) as info:
        simulate(m, t_end=1e4, step=1e-4, output_step=1.0, wall_budget=1.0)
    took = time.perf_counter() - start
    assert took < 5, took
    assert "wall-clock budget of 1 s" in str(info.value)
    assert re.search(r"stopped at t = [0-9.e+-]+ s of 10000 s", str(info.value))


def test_wall_budget_must_be_positive():
    with pytest.raises(ModelError) as info:
        simulate(build("double_pendulum"), wall_budget=-1)
    assert info.value.problems[0].field == "WallBudget"


def test_cli_wall_budget(tmp_path, capsys):
    path = write(tmp_path, build("double_pendulum"))
    code, text, _ = run_cli(path, "--t-end", "1e4", "--step", "1e-4", "--output-step", "1",
                            "--wall-budget", "0.5")
    assert code == 1
    assert "wall-clock budget of 0.5 s" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------------
# Accelerations that are not finite at a finite state; the numerical safety net
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("integrator", ["RK45", "DOP853", "Radau", "BDF", "LSODA"])
def test_accelerations_that_are_not_finite_name_the_hinge(monkeypatch, integrator):
    """The elbow's acceleration made NaN after t = 0.05 s: the explicit integrators shrink their
    step until they fail, BDF's LU raised ValueError; each names the elbow and the time."""
    from MultibodyWB.solver.methods.mstmm import system as system_module
    real = system_module.System.derivative

    def derivative(self, t, y):
        d = np.array(real(self, t, y))
        if t > 0.05:
            i = self.hinges.index("Elbow")
            d[self.nq_tot + self.tree.uo[i]] = np.nan
        return d

    monkeypatch.setattr(system_module.System, "derivative", derivative)
    # scipy's path, which calls System.derivative (the compiled RK45 and DOP853 do not: their
    # test, with a model whose accelerations overflow, is in test_compiled_adaptive.py)
    from MultibodyWB.solver.methods.mstmm import run as mstmm_run
    monkeypatch.setattr(mstmm_run, "COMPILED_ADAPTIVE", ())
    with pytest.raises(RunError) as info:
        simulate(build("double_pendulum"), integrator=integrator, t_end=0.1)
    (p,) = info.value.problems
    assert (p.element, p.field) == ("Hinge 'Elbow'", "State"), p
    t = float(re.search(r"not finite at t = ([0-9.e-]+) s", p.message).group(1))
    assert 0.05 <= t < 0.06, p


def test_a_linear_algebra_error_in_a_run_is_a_run_error(monkeypatch):
    """What remains possible inside the kernels (was LinAlgError from _run_rk4): said with the
    time it happened near, never a traceback."""
    from MultibodyWB.solver.methods.mstmm import run as mstmm_run
    calls = []
    real = mstmm_run.K.rk4_run

    def rk4_run(*args):
        calls.append(1)
        if len(calls) > 3:
            raise np.linalg.LinAlgError("Singular matrix")
        return real(*args)

    monkeypatch.setattr(mstmm_run, "CHUNK_SECONDS", 1e-9)     # many chunks
    monkeypatch.setattr(mstmm_run.K, "rk4_run", rk4_run)
    with pytest.raises(RunError) as info:
        simulate(build("double_pendulum"), t_end=0.1, step=1e-3, output_step=1e-3)
    (p,) = info.value.problems
    assert "broke down near t = " in p.message and "LinAlgError: Singular matrix" in p.message
    assert float(re.search(r"near t = ([0-9.e-]+) s", p.message).group(1)) > 0.0


# --------------------------------------------------------------------------------------------------
# The Job (what the Simulate panel runs)
# --------------------------------------------------------------------------------------------------

def test_job_of_a_stiff_model_fails_with_the_run_error():
    from MultibodyWB.solver.run.job import Job
    job = Job(stiff()).start()
    assert job.wait(60)
    assert job.state == "failed" and isinstance(job.error, RunError), job.error
    assert not job.internal_error and job.trace is None and job.results is None
    assert job.error.problems[0].field == "Damping"


def test_job_keeps_the_trace_of_an_internal_error(monkeypatch):
    from MultibodyWB.solver.run import job as job_module

    def broken(model, **settings):
        return {}["no such key"]

    monkeypatch.setattr(job_module, "simulate", broken)
    job = job_module.Job(build("double_pendulum")).start()
    assert job.wait(10)
    assert job.state == "failed" and isinstance(job.error, KeyError)
    assert job.internal_error and "KeyError" in job.trace and "broken" in job.trace


def test_advice_for_a_vanishing_mass_suggests_no_absurd_step():
    """A mass of 1e-308 kg on a damped hinge: the advice must not read "use a Step below 0 s"
    (issue 12's fuzz finding): no step is suggested, the element and Radau/BDF are."""
    from MultibodyWB.solver.methods.runtime import stiffness_advice
    m = build("double_pendulum")
    m.body("Lower").mass = 1e-308
    m.body("Lower").inertia = m.body("Lower").inertia * 1e-308
    m.hinge("Elbow").damping = np.array([1.0])
    element, field, text = stiffness_advice(m, "rk4", 1e-3, True)
    assert "Step below" not in text and "0 s" not in text
    assert "the integrator trbdf2-adaptive" in text
    assert "Radau or BDF" in stiffness_advice(m, "rk4", 1e-3, True, "constrained")[2]
