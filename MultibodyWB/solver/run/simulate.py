"""Running a simulation: ``simulate(model) -> Results``, and the ``run`` command of the CLI.

Methods (``Simulation/Method``)
    ``mstmm``: the tree solver of :mod:`.system` (the Riccati form of the transfer matrix method
    in :mod:`.kernels`; its run, with the integrators below: :mod:`..methods.mstmm.run`).
    ``constrained``: the global formulation (absolute coordinates, Lagrange multipliers) for
    any topology, with assembly of the initial state and drift control of the
    loops (:mod:`.constrained.run`; integrated in Python: the reference, not the fast path).
    ``newton-euler``: the discrete-time method of :mod:`.newton_euler` (every body integrated on
    its own with a very small step, 1e-5 to 1e-7 s; joints as stiff spring-dampers; any topology).
    It has its own scheme (a symplectic Euler step per body, as ``euler``), so ``Integrator``
    does not apply; ``OutputStep`` must be a whole number of steps. Options (keyword arguments
    of :func:`simulate`): ``joint_fraction``, ``joint_frequency``, ``joint_damping_ratio``.

Integrators (``Simulation/Integrator``)
    ``rk4``: classical fixed-step Runge-Kutta. The run goes in chunks of many steps, each done
    inside compiled code (:func:`.kernels.rk4_run`) with the drivers' values, rates and
    accelerations and the force magnitudes evaluated beforehand on the chunk's half-step grid;
    between chunks the caller's ``progress`` and ``cancel`` are called. Quaternions are
    normalised after every step. ``OutputStep`` must be a whole number of ``Step``\\ s; an
    ``EndTime`` that is not a whole number of steps ends with one shorter step.

    ``euler``: semi-implicit (symplectic) Euler with the fixed step ``Step``, one evaluation per
    step (a quarter of rk4's): ``u_{n+1} = u_n + h udot(t_n, q_n, u_n)``, then ``q_{n+1} = q_n
    + h qdot(q_n, u_{n+1})``, quaternions normalised after every step
    (:func:`.kernels.euler_run`, run in chunks as rk4). First order, but symplectic: without
    dampers the energy error stays bounded instead of drifting; an undamped oscillator is
    stable for ``h w < 2`` (:data:`..methods.runtime.EULER_LIMIT`), against rk4's 2.78 for four
    evaluations. Its results converge as ``h`` (rk4's as ``h^4``): it keeps the energy of
    contacts that rest or slide, but an impact's only at some 10^5 steps per contact period,
    so the advice for contacts is rk4 at :func:`..methods.runtime.contact_step` (issue 32).
    ``OutputStep`` and ``EndTime`` as for rk4.

    ``DOP853``, ``RK45``, ``Radau``, ``BDF``, ``LSODA``: scipy's adaptive integrators (as in
    ``scipy.integrate.solve_ivp``) with the model's ``RelativeTolerance`` and
    ``AbsoluteTolerance`` and ``Step`` as the first step; the states at the output times come from
    the integrator's dense output, quaternions normalised there. With the method mstmm,
    ``RK45`` and ``DOP853`` run compiled with the evaluation (:mod:`.adaptive`,
    :data:`..methods.mstmm.run.COMPILED_ADAPTIVE`: scipy's method and step-size control, the same steps, chunks
    of steps between which cancel, the budget, progress and the stall detector are looked
    at, as for rk4); the others call the evaluation from Python at every evaluation.

Closed loops (``mstmm``) are held closed by Baumgarte stabilisation, critically damped at
``w = LOOP_STABILISATION / h`` (:mod:`.system`): ``h`` is the fixed step for rk4 and euler; for
the adaptive integrators it is the step the integrator took last (the first step only until
then), so the stabilisation never limits the step and the run does not depend on ``Step``.

Energy balance (the ``energy.work_drivers``, ``work_forces``, ``dissipated`` and ``residual``
columns of :mod:`.results`): when the model has drivers, forces with a magnitude or dampers
(:attr:`.system.System.does_work`), ``rk4`` integrates their power (:func:`.kernels.power_flows`)
as three extra states of the same RK4 scheme inside the compiled run, ``euler`` to first order
(the power at the start of each step times ``h``), and the adaptive
integrators integrate it over the dense output of every step by Gauss-Legendre quadrature
(:data:`WORK_NODES` nodes, cut at the output times; ``meta['power_evaluations']`` counts them).
Either way the residual of the balance is the integration error. The states and the existing
columns are the same as without it, bit for bit.

Output times are ``0, OutputStep, 2 OutputStep, ...`` and ``EndTime`` (added if it is not on that
grid). Only the output rows are kept, so a run of a million steps needs memory for its output
only. A fixed-step run's rows come from the run's own evaluations: the compiled kernel copies
what a row needs from the evaluation each output state gets anyway (the next step's first, made
with every hinge's wrench; a chunk's last row one evaluation of its own), bit for bit what
evaluating the states afterwards gives; the rows' columns are then computed in batches of
:data:`..methods.mstmm.run.ROW_BATCH`.

Guards (a run never ends in a traceback or goes on without end)
    Settings, the caller's overrides included, are refused before anything is allocated when a
    run could not hold or finish them (:func:`.validation.run_size_problems`: steps, output
    rows). An expression that cannot be evaluated during the run raises
    :class:`~.timefunction.EvaluationError` naming the hinge's ``Driver`` or the force's
    ``Magnitude`` and the time. A state that is not finite stops the run with a
    :class:`RunError` naming the hinge (mstmm; rk4 and euler go through the failed chunk again
    step by step to find it) or body (newton-euler) that blew up first and the time. An adaptive
    integrator whose steps collapse (:class:`StallDetector`: two windows of
    :data:`STALL_WINDOW` steps at whose pace the rest would take more than :data:`STALL_STEPS`
    steps; the constrained method's runs by their pace in wall time, :class:`Watch`) raises a
    :class:`RunError` naming the model's stiffest spring or damper (:func:`..methods.runtime.stiff_elements`) and
    what to use instead; so do integrator failures and numerical breakdowns (a singular or
    non-finite matrix in a library's routine). ``wall_budget`` stops a run after that many
    seconds of wall time (:class:`BudgetExceeded`; the CLI's ``run --wall-budget``).
"""

from __future__ import annotations

import math
import time as _time

import numpy as np

from ..model.mechanism import MultibodySystem
from ..model.settings import FIXED_STEP, IMPLICIT, INTEGRATORS, METHODS
from ..model.problems import ModelError, Problem
from ..results.table import Results
from ..methods.base import METHODS as RUNNERS, Prepared
from ..methods.runtime import (BudgetExceeded, Cancelled, RunError, SimulationError,
                               stiffness_advice)
# the no-progress detector of the adaptive integrators, here before issue 36
from ..methods.runtime import STALL_STEPS, STALL_WINDOW, StallDetector  # noqa: F401
from ..methods.runtime import first_line as _first_line

ADAPTIVE = ("DOP853", "RK45", "Radau", "BDF", "LSODA")
def _problem(field, message):
    return Problem("Simulation", field, message)


def _settings(model, method, integrator, t_end, step, output_step):
    """Resolve the run's settings (None: the model's) and check them; raise ModelError."""
    s = model.simulation
    method = s.method if method is None else method
    integrator = s.integrator if integrator is None else integrator
    t_end = s.end_time if t_end is None else t_end
    step = s.step if step is None else step
    output_step = s.output_step if output_step is None else output_step
    problems = []
    canon = {m.lower(): m for m in METHODS}
    if str(method).lower() not in canon:
        problems.append(_problem("Method", f"'{method}' is not a method; use one of "
                                           f"{', '.join(METHODS)}"))
    else:
        method = canon[str(method).lower()]
        if method not in RUNNERS:
            problems.append(_problem("Method", f"the method '{method}' is not available yet; "
                                               "use 'mstmm' or 'constrained'"))
    canon = {i.lower(): i for i in INTEGRATORS}
    if str(integrator).lower() not in canon:
        problems.append(_problem("Integrator", f"'{integrator}' is not an integrator; use one of "
                                               f"{', '.join(INTEGRATORS)}"))
    else:
        integrator = canon[str(integrator).lower()]
    if method == "constrained" and integrator in IMPLICIT:
        problems.append(_problem("Integrator", f"the integrator {integrator} runs with the method "
                                               "mstmm only; with the method constrained use "
                                               "Radau or BDF for a stiff model"))
    values = {}
    for field, v in (("EndTime", t_end), ("Step", step), ("OutputStep", output_step),
                     ("RelativeTolerance", s.relative_tolerance),
                     ("AbsoluteTolerance", s.absolute_tolerance)):
        try:
            v = float(v)
        except (TypeError, ValueError):
            v = math.nan
        if not (math.isfinite(v) and v > 0):
            problems.append(_problem(field, f"{v!r}; must be a positive number"))
        values[field] = v
    fixed = "method newton-euler" if method == "newton-euler" else f"integrator {integrator}"
    if ((integrator in FIXED_STEP or method == "newton-euler") and math.isfinite(values["Step"])
            and values["Step"] > 0 and math.isfinite(values["OutputStep"])
            and values["OutputStep"] > 0):
        ratio = values["OutputStep"] / values["Step"]          # inf when it overflows
        if math.isfinite(ratio) and (ratio < 1.0 - 1e-9
                                     or abs(ratio - round(ratio)) > 1e-6 * ratio):
            problems.append(_problem(
                "OutputStep", f"{values['OutputStep']:g} s is not a whole number of steps "
                              f"(Step {values['Step']:g} s) for the fixed-step {fixed}"))
    if not problems:
        # sizes the run could not allocate or finish (also for overrides of the model's)
        from ..model.validation import run_size_problems
        problems += run_size_problems(model, values["EndTime"], values["Step"],
                                      values["OutputStep"], method, integrator)
    if problems:
        raise ModelError(problems)
    return (method, integrator, values["EndTime"], values["Step"], values["OutputStep"],
            s.relative_tolerance, s.absolute_tolerance)


# --------------------------------------------------------------------------------------------------
# Guards of a run: the wall-clock budget, no progress, states that are not finite
# --------------------------------------------------------------------------------------------------

#: The constrained method's runs (which report their progress every 0.1 s of wall time, not
#: every step) make no progress when, after :data:`STALL_WALL_WINDOW` s of running, the rest
#: of the run would take more than :data:`STALL_WALL` s at the pace of that window.
STALL_WALL = 86400.0
STALL_WALL_WINDOW = 10.0


class Watch:
    """The wall-clock budget of a run and what it last reported: wraps the run's ``progress``
    and ``cancel``.

    Parameters
    ----------
    t_end : float
        The run's end time (s).
    budget : float or None
        Wall-clock seconds the run may take from the start of :func:`simulate`; None: no limit.
    progress, cancel : callable or None
        The caller's.
    stall : bool
        Also stop a run whose progress (reported every 0.1 s of wall time) says that it would
        take more than :data:`STALL_WALL` s (the constrained method's runs).
    """

    def __init__(self, t_end, budget=None, progress=None, cancel=None, stall=False,
                 wall0=None):
        self.t_end = float(t_end)
        self.budget = None if budget is None else float(budget)
        self._progress = progress or (lambda f: None)
        self._cancel = cancel or (lambda: False)
        self.wall0 = _time.perf_counter() if wall0 is None else wall0
        self.fraction = 0.0
        self.stall = stall
        self._window = None          # (wall time, fraction) at the start of the stall window
        self.stalled = None          # (time, projected wall seconds) once stalled

    @property
    def t(self) -> float:
        """The simulated time last reported (s)."""
        return self.fraction * self.t_end

    def progress(self, fraction) -> None:
        self.fraction = max(self.fraction, float(fraction))
        self._progress(fraction)
        if self.stall:
            self._look_for_stall()

    def cancel(self) -> bool:
        """The caller's cancel; raise :class:`BudgetExceeded` past the budget."""
        if self._cancel():
            return True
        if self.budget is not None:
            used = _time.perf_counter() - self.wall0
            if used > self.budget:
                raise BudgetExceeded(
                    f"the run took more than its wall-clock budget of {self.budget:g} s "
                    f"(stopped at t = {self.t:.6g} s of {self.t_end:g} s); allow more time, "
                    "or shorten EndTime, or use a larger Step or another method")
        return False

    def _look_for_stall(self):
        now = _time.perf_counter()
        if self._window is None or self.fraction <= 0.0:
            self._window = (now, self.fraction)
            return
        w0, f0 = self._window
        if now - w0 < STALL_WALL_WINDOW:
            return
        done = self.fraction - f0
        rest = (1.0 - self.fraction) * (now - w0) / done if done > 0 else math.inf
        self._window = (now, self.fraction)
        if rest > STALL_WALL:
            self.stalled = (self.t, rest)
            raise _Stalled()


class _Stalled(Exception):
    """Raised by :class:`Watch` through the method's loop; :func:`simulate` says why."""


def _check_contact_steps(model, step, method, integrator) -> None:
    """A fixed step too long for a contact's stiffness is refused before the run: such a contact
    would not blow up but throw the bodies apart with energy it never had (the first step into
    it penetrates far). Its stiffness at the depth of an impact at its impact speed
    (:func:`..methods.runtime.stiff_elements`) against the step's stability limit
    (:func:`..methods.runtime.step_limit`: RK4's, or symplectic Euler's for euler and
    newton-euler). The advice is the step that keeps the energy (the contact's period resolved,
    :func:`..methods.runtime.contact_step`), not the stability limit: just below that limit a
    run goes on and its energy balance does not close (issue 32)."""
    from ..methods.runtime import contact_step, nice_step, step_limit, stiff_elements
    most = step_limit(integrator, method)
    for rate, element, field, text in stiff_elements(model):
        if not element.startswith("Contact ") or not rate * step > most:
            continue
        limit = most / rate
        advice = contact_step(model, integrator, method)
        good = nice_step(advice[0], model.simulation.output_step) if advice else limit / 20
        use = ("the method mstmm with the integrator rk4 and " if method == "newton-euler" else
               "the integrator rk4 with " if integrator == "euler" else "")
        raise RunError(element, field, (
            f"too stiff for the fixed step {step:g} s ({method}, {integrator}): {text}; it is "
            f"unstable above {limit:.2g} s. Use {use}a Step of {good:.2g} s"
            + (f" ({advice[2]})" if advice else "")
            + ", an adaptive integrator (mstmm), or a softer contact"))


def _contact_step_warning(model, results, step, method, integrator):
    """``results`` with the contacts' step advice added to an energy warning of a fixed-step run
    whose step is longer than :func:`..methods.runtime.contact_step`: what to change, not only
    that the balance does not close."""
    from ..methods.runtime import contact_step
    warnings = results.meta.get("warnings") or []
    advice = contact_step(model, integrator, method) if model.contacts else None
    if advice is None or not step > advice[0] * (1 + 1e-9):
        return results
    for i, w in enumerate(warnings):
        if w.startswith("the energy balance does not close"):
            warnings[i] = f"{w}; the Step {step:g} s is too long for the contacts: {advice[2]}"
    return results


def simulate(model: MultibodySystem, method=None, integrator=None, t_end=None, step=None,
             output_step=None, progress=None, cancel=None, accept_corrections=False,
             wall_budget=None, **options) -> Results:
    """Simulate ``model`` and return its :class:`~.table.Results`.

    Parameters
    ----------
    model : MultibodySystem
        A valid model (its problems are raised as :class:`ModelError`).
    method, integrator : str, optional
        See the module docstring; None: the model's ``Simulation`` settings (as are the others).
        Names are matched without regard to case.
    t_end, step, output_step : float, optional
        End time, integrator step (rk4, euler) or first step (adaptive), output spacing (s).
    progress : callable(fraction), optional
        Called with increasing fractions of the simulated time, from 0 to 1 (last call: 1.0).
    cancel : callable() -> bool, optional
        Looked at between chunks (rk4, euler) or steps (adaptive): True stops the run, which
        raises :class:`Cancelled`.
    accept_corrections : bool
        The run starts from the drawing (:mod:`.start`): a start that would move a body away from
        where it is drawn (markers that do not meet, a driver starting elsewhere, a loop that does
        not close as drawn) raises :class:`~.start.StartCorrectionError` unless this is True.
    wall_budget : float, optional
        Wall-clock seconds the run may take (looked at where ``cancel`` is); None: no limit.
    **options
        Options of the method: ``newton-euler`` takes ``joint_fraction``, ``joint_frequency``,
        ``joint_damping_ratio`` (see :class:`.scheme.NewtonEuler`).

    Raises
    ------
    ModelError
        The model or the settings are not valid (every problem listed; settings as
        ``Simulation``, field ``Method``, ``OutputStep``...; run sizes past what a run can
        allocate or finish, :func:`.validation.run_size_problems`). An expression that cannot
        be evaluated during the run: :class:`~.timefunction.EvaluationError`, naming the
        driver or force and the time.
    StartCorrectionError
        (a ModelError) The start is not the drawing and ``accept_corrections`` is False.
    RunError
        (a ModelError and a SimulationError) The run stopped because of the model: a state that
        is not finite (naming the hinge or body that blew up first and the time), no progress
        of an adaptive integrator (:class:`StallDetector`: a stiff model; naming its stiffest
        element), a numerical breakdown (singular matrices, overflow).
    Cancelled
    BudgetExceeded
        (a SimulationError) The run took more than ``wall_budget``.
    SimulationError
        An adaptive integrator failed.
    """
    wall0 = _time.perf_counter()
    settings = _check(model, method, integrator, t_end, step, output_step)
    wall_budget = _budget(wall_budget)
    run = _start(model, settings, accept_corrections, options, wall0)
    return _solve(run, progress, cancel, wall_budget)


# --------------------------------------------------------------------------------------------------
# The stages of a run: check -> start -> solve -> results (issue 36)
# --------------------------------------------------------------------------------------------------

def start(model: MultibodySystem, method=None, integrator=None, t_end=None, step=None,
          output_step=None, accept_corrections=False, **options) -> Prepared:
    """The stages check and start of :func:`simulate`, without solving: the
    :class:`~..methods.base.Prepared` run (``.start`` the start's report, ``.model`` the model
    as started, the settings resolved), for a caller that shows the start before it runs;
    :func:`solve` runs it. The arguments and what is raised are :func:`simulate`'s before its
    run: :class:`ModelError` (the model, the settings), :class:`~.start.StartCorrectionError`,
    TypeError (options the method does not take)."""
    wall0 = _time.perf_counter()
    settings = _check(model, method, integrator, t_end, step, output_step)
    return _start(model, settings, accept_corrections, options, wall0)


def solve(run: Prepared, progress=None, cancel=None, wall_budget=None) -> Results:
    """The stages solve and results of :func:`simulate` for a run :func:`start` prepared: its
    :class:`~.table.Results`, raising as :func:`simulate` does in its run. The wall time
    (``meta['wall_time']``, ``wall_budget``) counts from this call."""
    from dataclasses import replace
    return _solve(replace(run, wall0=_time.perf_counter()), progress, cancel,
                  _budget(wall_budget))


def _check(model, method, integrator, t_end, step, output_step) -> tuple:
    """Stage check: the model's problems and the run's settings (:func:`_settings`)."""
    model.check()
    return _settings(model, method, integrator, t_end, step, output_step)


def _budget(wall_budget):
    """The wall-clock budget as a float (None: no limit); ModelError if it is not positive."""
    if wall_budget is not None:
        try:
            wall_budget = float(wall_budget)
        except (TypeError, ValueError):
            wall_budget = math.nan
        if not wall_budget > 0:
            raise ModelError([_problem("WallBudget", f"{wall_budget!r} s; must be a positive "
                                                     "number of seconds")])
    return wall_budget


def _start(model, settings, accept_corrections, options, wall0) -> Prepared:
    """Stage start: the method's options checked, the model started from the drawing
    (:func:`~.start.prepare`); the :class:`Prepared` run."""
    method, integrator, t_end, step, output_step, rtol, atol = settings
    RUNNERS[method].check_options(options)
    from ..analysis.start import prepare
    from ..analysis.topology import analyse
    topology = analyse(model)         # once for the run: resolving changes no connection
    model, start_report = prepare(model, accept_corrections, topology)
    return Prepared(model, start_report, method, integrator, t_end, step, output_step, rtol,
                    atol, options, wall0, topology)


def _solve(run: Prepared, progress, cancel, wall_budget) -> Results:
    """Stages solve and results: the method of :data:`RUNNERS` on the prepared run, its
    failures said with the element to look at; then the results checked (values that are not
    finite, the energy balance where the method declares it, the contacts' step) and the
    start's record added."""
    runner = RUNNERS[run.method]
    model, method, integrator = run.model, run.method, run.integrator
    t_end, step = run.t_end, run.step
    watch = Watch(t_end, wall_budget, progress, cancel, stall=runner.watch_stall(integrator),
                  wall0=run.wall0)
    fixed = runner.fixed_step(integrator)
    if fixed and model.contacts:
        _check_contact_steps(model, step, method, integrator)
    try:
        # (not under np.errstate: it changes the last bits of some results)
        results = runner.solve(run, watch.progress, watch.cancel)
        if runner.energy_check:
            results = _with_energy_check(results)
    except _Stalled:
        t, rest = watch.stalled
        element, field, advice = stiffness_advice(model, integrator, step, fixed, method)
        raise RunError(element, field, (
            f"the run makes no progress: at t = {t:.6g} s of {t_end:g} s, the rest would take "
            f"{rest:.3g} s of wall time at its pace ({method}, {integrator}); {advice}")) from None
    except (Cancelled, ModelError, BudgetExceeded):
        raise
    except SimulationError as exc:
        # the constrained method's own (a state that is not finite, loops that cannot be
        # closed again): with the element to look at
        element, field, advice = stiffness_advice(model, integrator, step, fixed, method)
        raise RunError(element, field, f"{exc} ({method}, {integrator}); {advice}") from exc
    except (ArithmeticError, ValueError, SystemError, np.linalg.LinAlgError) as exc:
        # a numerical breakdown on the way (a singular matrix, an overflow, a value that is
        # not finite in a library's routine): said with the time and what to look at
        element, field, advice = stiffness_advice(model, integrator, step, fixed, method)
        raise RunError(element, field, (
            f"the run broke down near t = {watch.t:.6g} s ({method}, {integrator}): "
            f"{type(exc).__name__}: {_first_line(exc)}; {advice}")) from exc
    _check_finite(model, results)
    if fixed:
        results = _contact_step_warning(model, results, step, method, integrator)
    return _with_start(results, _start_meta(run.start))


def _element_of(model, name: str) -> str:
    """The element a result column's prefix names, as problems name it (``Hinge 'Pin'``)."""
    for kind, items in (("Body", model.bodies), ("Hinge", model.hinges),
                        ("Force", model.forces), ("Contact", model.contacts),
                        ("Coupler", model.couplers)):
        if any(getattr(e, "name", None) == name for e in items):
            return f"{kind} '{name}'"
    if name == "energy":
        return "Energy balance"
    return f"'{name}'"


def _check_finite(model, results) -> None:
    """Raise :class:`RunError` when any result column holds a value that is not finite (a load,
    an energy, a contact's or coupler's force that overflowed while the state stayed finite):
    such a run is never a success. Names the element and the quantity of the first column that
    went bad, and the time."""
    data = results.data
    if data.size == 0:
        return
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(data)
    if not bad.any():
        return
    rows = np.flatnonzero(bad.any(axis=1))
    row = int(rows[0])
    cols = np.flatnonzero(bad[row])
    name = results.names[int(cols[0])]
    element, _, quantity = name.rpartition(".")
    time = results.time
    t = float(time[row]) if row < len(time) and np.isfinite(time[row]) else math.nan
    others = [results.names[int(c)] for c in cols[1:4]]
    more = f" (also {', '.join(others)}{', ...' if len(cols) > 4 else ''})" if others else ""
    raise RunError(_element_of(model, element) if element else f"'{name}'", quantity or name, (
        f"the result {name} is {data[row, cols[0]]!r} at t = {t:.6g} s{more}: a value that "
        "overflowed (a coefficient, speed or load too large for double precision?); the run "
        "has no valid results"))


#: An energy balance whose residual exceeds this fraction of the energies' scale is warned about.
ENERGY_WARNING = 1e-3


def _with_energy_check(results):
    """``results`` with a warning when its energy balance does not close (the residual above
    :data:`ENERGY_WARNING` of the energies' scale): the run is not to be trusted, and is marked
    so (:meth:`~.table.Results.mark_untrusted`: the CLI's exit code 3, the study's ``untrusted``
    rows, the Simulate panel's message)."""
    if "energy.residual" not in results or not len(results):
        return results
    b = results.energy_balance()
    if abs(b["relative"]) > ENERGY_WARNING and abs(b["residual"]) > 1e-9:
        r = results.column("energy.residual")
        bad = np.abs(r) > ENERGY_WARNING * b["scale"]
        t0 = float(results.time[np.argmax(bad)]) if bad.any() else float(results.time[-1])
        results.meta.setdefault("warnings", []).append(
            f"the energy balance does not close: residual {b['residual']:.3g} J at the end "
            f"({b['relative']:.3g} of the energies' scale; above {ENERGY_WARNING:g} from "
            f"t = {t0:.6g} s): a step too large, a singular configuration or loops that do not "
            "hold; do not trust this run")
        results.mark_untrusted("energy balance", (
            f"it does not close: the residual is {b['residual']:.3g} J at the end, "
            f"{100 * abs(b['relative']):.3g} % of the energies' scale (at most "
            f"{100 * ENERGY_WARNING:g} % is trusted)"))
    return results


def _start_meta(start) -> dict:
    """What the results' ``meta`` records of the start (:mod:`.start`)."""
    meta = dict(start=str(start), start_corrected=[
        dict(body=m.name, distance=m.distance, angle=m.angle) for m in start.moves])
    if start.notes:
        meta["start_notes"] = list(start.notes)
    return meta


def _with_start(results, start_meta):
    """``results`` with the start's record in its ``meta``; an accepted correction is a warning."""
    results.meta.update(start_meta)
    if start_meta["start_corrected"]:
        warnings = results.meta.setdefault("warnings", [])
        warnings.insert(0, "the start was corrected away from the drawing (accepted): "
                           + start_meta["start"].split("\n", 1)[-1].strip())
    return results


# --------------------------------------------------------------------------------------------------
# The command line: ``python3 -m MultibodyWB.solver run MODEL.xml``
# --------------------------------------------------------------------------------------------------


