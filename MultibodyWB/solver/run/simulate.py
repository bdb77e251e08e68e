"""Running a simulation: ``simulate(model) -> Results``, and the ``run`` command of the CLI.

Methods (``Simulation/Method``)
    ``mstmm``: the tree solver of :mod:`.system` (the Riccati form of the transfer matrix method
    in :mod:`.kernels`). ``constrained``: the global formulation (absolute coordinates, Lagrange
    multipliers) for any topology, with assembly of the initial state and drift control of the
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
    :data:`COMPILED_ADAPTIVE`: scipy's method and step-size control, the same steps, chunks
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
:data:`ROW_BATCH`.

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

from ..methods.mstmm import kernels as K
from ..model.mechanism import MultibodySystem
from ..model.settings import FIXED_STEP, IMPLICIT, INTEGRATORS, METHODS
from ..model.problems import ModelError, Problem
from ..results.table import Results, fill_residual
from ..results.recorder import Recorder
from ..methods.mstmm.system import _sample
from ..methods.runtime import (BudgetExceeded, Cancelled, RunError, SimulationError, WorkQuadrature,
                               blown_up, not_finite, output_times, stiffness_advice)

ADAPTIVE = ("DOP853", "RK45", "Radau", "BDF", "LSODA")
#: Wall time aimed at per chunk of fixed steps (s): how often progress and cancel are looked at.
CHUNK_SECONDS = 0.1
#: Most steps in one chunk of fixed steps (rk4, euler).
MAX_CHUNK = 20000
#: Most memory of the evaluations a chunk of fixed steps keeps for its result rows (bytes): a
#: model of many bodies with a row at every step takes shorter chunks; the rows waiting for
#: their columns (:data:`ROW_BATCH`) are computed when their evaluations reach it too.
ROW_MEMORY = 32e6
#: The compiled run of each fixed-step integrator (its name in :mod:`.kernels`) and its
#: evaluations per step.
FIXED_RUNS = {"rk4": ("rk4_run", 4), "euler": ("euler_run", 1)}
#: The adaptive integrators that the mstmm method runs compiled with its evaluation
#: (:mod:`.adaptive`, issue 35); the others, and these when taken out of this tuple (the
#: reference in the tests), go through scipy with a Python call per evaluation.
COMPILED_ADAPTIVE = ("RK45", "DOP853")
#: Most steps of a compiled adaptive run between two looks at cancel, progress and the budget
#: (the chunk otherwise aims at :data:`CHUNK_SECONDS` of wall time).
MAX_ADAPTIVE_CHUNK = 20000
#: ... and the first chunk ends after the step that passes this fraction of the run (the next
#: ones' fractions grow, or shrink, to about CHUNK_SECONDS of wall time: a return to Python
#: costs about 0.2 ms).
PROGRESS_STEP = 0.005


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
        if method not in ("mstmm", "constrained", "newton-euler"):
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

#: No-progress detector of the adaptive integrators: steps per window ...
STALL_WINDOW = 1000
#: ... and the steps that the rest of the run would take at a window's pace, past which the run
#: makes no progress (in two windows running): its step has collapsed (a stiff model, or an
#: integrator stuck at one time).
STALL_STEPS = 1e7
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


class StallDetector:
    """The no-progress detector of an adaptive integrator: call :meth:`step` after every step.

    The steps are looked at in windows of :data:`STALL_WINDOW`; after two windows running whose
    pace would need more than :data:`STALL_STEPS` further steps to reach the end, the run makes
    no progress and :meth:`step` raises :class:`RunError` naming the likely stiffest element
    (:func:`stiffness_advice`).
    """

    def __init__(self, model, integrator, t_end, window=STALL_WINDOW, limit=STALL_STEPS):
        self.model, self.integrator, self.t_end = model, integrator, float(t_end)
        self.window, self.limit = int(window), float(limit)
        self.count = 0
        self.start = 0.0
        self.slow = 0

    def steps(self, ts) -> None:
        """:meth:`step` for each time of ``ts`` in turn (the steps of a compiled chunk),
        looking only at those that end a window."""
        i, n = 0, len(ts)
        while i < n:
            k = self.window - self.count           # the step that ends this window
            if k > n - i:
                self.count += n - i
                return
            self.count = self.window - 1
            self.step(float(ts[i + k - 1]))
            i += k

    def step(self, t: float) -> None:
        self.count += 1
        if self.count < self.window:
            return
        span = t - self.start
        rest = self.t_end - t
        steps = rest / span * self.window if span > 0 else math.inf
        self.count, self.start = 0, t
        self.slow = self.slow + 1 if steps > self.limit else 0
        if self.slow >= 2:
            element, field, advice = stiffness_advice(self.model, self.integrator, None, False)
            raise RunError(element, field, (
                f"the run makes no progress: {self.integrator}'s last {self.window} steps "
                f"advanced {span:.3g} s to t = {t:.6g} s (the rest to {self.t_end:g} s would "
                f"take {steps:.3g} more); {advice}"))


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
    model.check()
    method, integrator, t_end, step, output_step, rtol, atol = _settings(
        model, method, integrator, t_end, step, output_step)
    if wall_budget is not None:
        try:
            wall_budget = float(wall_budget)
        except (TypeError, ValueError):
            wall_budget = math.nan
        if not wall_budget > 0:
            raise ModelError([_problem("WallBudget", f"{wall_budget!r} s; must be a positive "
                                                     "number of seconds")])
    if options and method == "mstmm":
        raise TypeError(f"the method {method} takes no options ({', '.join(options)})")
    from ..analysis.start import prepare
    model, start = prepare(model, accept_corrections)
    start_meta = _start_meta(start)
    watch = Watch(t_end, wall_budget, progress, cancel, stall=(method == "constrained"
                                                               and integrator not in FIXED_STEP),
                  wall0=wall0)
    fixed = integrator in FIXED_STEP or method == "newton-euler"
    if fixed and model.contacts:
        _check_contact_steps(model, step, method, integrator)
    try:
        # (not under np.errstate: it changes the last bits of some results)
        if method == "constrained":
            results = _simulate_constrained(model, integrator, t_end, step, output_step,
                                            rtol, atol, watch.progress, watch.cancel, wall0)
        elif method == "newton-euler":
            results = _simulate_newton_euler(model, t_end, step, output_step, watch.progress,
                                             watch.cancel, wall0, options)
        else:
            results = _simulate_mstmm(model, integrator, t_end, step, output_step, rtol,
                                      atol, watch.progress, watch.cancel, wall0)
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
    return _with_start(results, start_meta)


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


def _first_line(exc) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else "(no message)"


def _simulate_mstmm(model, integrator, t_end, step, output_step, rtol, atol, progress, cancel,
                    wall0):
    """``simulate`` with the method ``mstmm`` (:class:`.system.System`)."""
    from ..methods.mstmm.system import System
    system = System(model)
    system.set_stabilisation(step)         # closed loops: tuned to the step (adaptive: the
    #                                        first; then the current one, see _run_adaptive)
    monitor = None
    if system.cuts:
        from ..analysis.assembly import assembled_state
        from ..methods.constrained.run import LoopRecorder
        from ..methods.constrained.partition import SingularityMonitor
        rec = LoopRecorder(system)
        y0, report = assembled_state(system)
        # the conditioning monitor measures the r-th eigenvalue, r the loops' rank at the start
        system.work.loops.ref_rank[0] = system.row_instants([0.0], y0[None]).rank[0]
        monitor = SingularityMonitor()
    else:
        rec, report = Recorder(system), None
        y0 = system.initial_state()
    coupled = system.couple_initial_rates(y0) if model.couplers else []
    K.normalise_quaternions(y0, system.tree.quat)
    if not np.all(np.isfinite(y0)):
        hinge, body, others = blown_up(system, 0.0, None, y0)
        raise not_finite(model, 0.0, hinge, body, others, integrator, step,
                         integrator in FIXED_STEP)
    if integrator in FIXED_STEP:
        times, states, data, info = _run_fixed(system, rec, y0, integrator, t_end, step,
                                               output_step, progress, cancel, monitor)
    elif integrator in IMPLICIT:
        times, states, data, info = _run_implicit(system, rec, y0, integrator, t_end, step,
                                                  output_step, rtol, atol, progress, cancel,
                                                  monitor)
    elif integrator in COMPILED_ADAPTIVE and system.ny > 0:      # (no state: scipy's path)
        times, states, data, info = _run_compiled(system, rec, y0, integrator, t_end, step,
                                                  output_step, rtol, atol, progress, cancel,
                                                  monitor)
    else:
        times, states, data, info = _run_adaptive(system, rec, y0, integrator, t_end, step,
                                                  output_step, rtol, atol, progress, cancel,
                                                  monitor)
    wall = _time.perf_counter() - wall0
    meta = dict(model=model.name, method="mstmm", integrator=integrator, step=step,
                output_step=output_step, end_time=t_end, wall_time=wall,
                bodies=rec.bodies, hinges=rec.hinges, ny=int(system.ny),
                **info)
    if integrator not in FIXED_STEP:
        meta.update(relative_tolerance=rtol, absolute_tolerance=atol)
    if system.cuts:
        monitor.finish()
        meta.update(_loop_report(system, report, rec, monitor, times, states))
        meta["warnings"] = list(meta.get("warnings", [])) + rec.half_turn_warnings(data)
    if coupled:
        meta["warnings"] = list(meta.get("warnings", [])) + coupled
    return _with_energy_check(Results(rec.names, data, meta, states))


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


def _loop_report(system, report, rec, monitor, times, states) -> dict:
    """What an mstmm run of a mechanism with closed loops met: the assembly, redundant
    constraints, singular configurations (the loops losing rank, from the conditioning
    monitor evaluated at every step: :class:`~.partition.SingularityMonitor`) and the closure
    (``rec``: the run's :class:`~.constrained.run.LoopRecorder`)."""
    from ..analysis.kinematics import mobility
    warnings, info = [], {}
    if report is not None:
        info["assembly"] = str(report)
        if report.inconsistent:
            warnings.append("the initial coordinates or rates violated the loop constraints and "
                            "were corrected: " + report.corrections_text()
                            + " (the assembly's whole report is the run's 'initial state' message)")
        warnings += report.warnings
    m = system.tree.m_tot
    rank0 = rec.ranks[0]
    # the loops' rank away from singular configurations: the largest met (a drawing at a
    # change point starts with less)
    rank = max(rec.ranks)
    if rank < m:
        red = mobility(system.model, system.topology).redundant_constraints
        info["redundant_constraints"] = list(red)
        where = ("" if len(red) == m - rank else
                 "; listed at the drawn configuration, which is singular")
        warnings.append(f"{m - rank} redundant constraint{'s' if m - rank > 1 else ''} "
                        f"({', '.join(red)}{where}): the motion is determinate, but the reactions "
                        "of the hinges in those loops are not unique (the loops could hold any "
                        "preload); those given are the smallest that keep the loops closed, "
                        "without preload")
    found = sorted(monitor.singularities, key=lambda s: s.time)
    if rank > rank0:
        # the run started at a change point: the monitor, referred to the rank at the start,
        # cannot see it; the first row with the full rank ends it
        from ..methods.constrained.partition import Singularity
        end = float(times[next(i for i, r in enumerate(rec.ranks) if r == rank)])
        found.insert(0, Singularity("change point", 0.0, 0.0, end, 0.0))
        warnings.append(f"the drawing is at a singular configuration (the loops have rank "
                        f"{rank0} at t = 0 and {rank} from t = {end:.6g} s: a change point); "
                        "which way the mechanism leaves it is not determined by the drawing, and "
                        "the motion from it is unreliable: draw it away from the change point")
    kinds = _singularity_kinds(system, found, times, states)
    info["singular_configurations"] = [
        dict(kind=k, time=s.time, start=s.start, end=s.end, ratio=s.ratio)
        for s, k in zip(found, kinds)]
    if found:
        what = {"change point": "the loops lose rank (change point)",
                "dead centre": "the drivers are at a dead centre (toggle position)"}
        shown = "; ".join(f"t = {s.time:.6g} s: {what[k]}" for s, k in zip(found[:10], kinds))
        warnings.append(f"{len(found)} singular configuration{'s' if len(found) > 1 else ''} "
                        f"passed ({shown}{' ...' if len(found) > 10 else ''}); accelerations "
                        "and reactions near them are ill-conditioned")
    info["loop_closure"] = dict(max_residual=rec.max_gap, cut_hinges=list(system.cuts))
    info["warnings"] = warnings
    return info


def _singularity_kinds(system, found, times, states) -> list:
    """``'change point'`` or ``'dead centre'`` for each singularity the mstmm monitor found.

    The monitor sees the loops' constraint compliance with the driven coordinates held, which
    loses rank at both. Without drivers it is a change point; with drivers the loop Jacobian
    over all coordinates (:func:`.formulation.loop_constraints`) at the output state nearest
    in time tells them apart: at a change point it loses rank too, at a dead centre it keeps
    it.
    """
    if not system.drivers or not found:
        return ["change point"] * len(found)
    from ..methods.constrained.formulation import loop_constraints
    out = []
    for s in found:
        j = int(np.argmin(np.abs(times - s.time)))
        J = loop_constraints(system, float(times[j]), states[j]).scaled()[1]
        sv = np.linalg.svd(J, compute_uv=False)
        r = int(np.sum(sv > 1e-10 * sv[0])) if sv.size else 0
        full = np.linalg.svd(loop_constraints(system, 0.0, states[0]).scaled()[1],
                             compute_uv=False)
        r0 = int(np.sum(full > 1e-10 * full[0])) if full.size else 0
        ratio = sv[r0 - 1] / sv[0] if r0 and sv[0] > 0 else 0.0
        out.append("change point" if r < r0 or ratio < 0.1 else "dead centre")
    return out


def _simulate_constrained(model, integrator, t_end, step, output_step, rtol, atol, progress,
                          cancel, wall0):
    """``simulate`` with the method ``constrained`` (:func:`.constrained.run.run`)."""
    from ..methods.constrained.run import run
    names, times, states, data, info = run(model, integrator, t_end, step, output_step, rtol,
                                           atol, progress, cancel)
    meta = dict(model=model.name, method="constrained", integrator=integrator, step=step,
                output_step=output_step, end_time=t_end, wall_time=_time.perf_counter() - wall0,
                **info)
    if integrator not in FIXED_STEP:
        meta.update(relative_tolerance=rtol, absolute_tolerance=atol)
    return _with_energy_check(Results(names, data, meta, states))


def _simulate_newton_euler(model, t_end, step, output_step, progress, cancel, wall0, options):
    """``simulate`` with the method ``newton-euler`` (:func:`.newton_euler.run.run`)."""
    from ..methods.newton_euler.run import run
    times, states, data, info, rec = run(model, t_end, step, output_step, progress, cancel,
                                         **options)
    meta = dict(model=model.name, method="newton-euler", step=step, output_step=output_step,
                end_time=t_end, wall_time=_time.perf_counter() - wall0, bodies=rec.bodies,
                hinges=rec.hinges, ny=int(states.shape[1]), **info)
    return Results(rec.names, data, meta, states)


#: Result rows of a fixed-step run evaluated together (:meth:`_Rows.add_later`): the rows of its
#: chunks are computed in batches of at least this many, not chunk by chunk, so that what the
#: recorder pays per call (a pass in Python over the force elements, as the contacts' elastic
#: energy) is paid once per batch (a chunk holds about :data:`CHUNK_SECONDS` of steps: a few
#: dozen rows for a model that steps slowly).
ROW_BATCH = 1000


class _Rows:
    """Output buffers filled row by row (in time order: the recorder continues the angles from
    the rows before)."""

    def __init__(self, n, ny, ncol):
        self.states = np.empty((n, ny))
        self.data = np.empty((n, ncol))
        self.times = np.empty(n)
        self.flows = None            # (n, 3) the rows' work columns, for add_later
        self.instants = []           # the evaluations of the rows waiting, if add_later had them
        self.instant_bytes = 0       # ... and their memory (a flush at ROW_MEMORY)
        self.n = 0
        self.ready = 0               # rows [ready, n) wait for flush

    def add(self, rec, t, y, flows=None):
        self.flush(rec)
        self.times[self.n] = t
        self.states[self.n] = y
        self.data[self.n] = rec.row(t, y, flows=flows)
        self.n += 1
        self.ready = self.n

    def add_many(self, rec, times, states, flows=None):
        """Rows at many times at once (``rec.rows``: one compiled evaluation of them all)."""
        k = len(times)
        if k == 0:
            return
        n = self.n
        self.times[n:n + k] = times
        self.states[n:n + k] = states
        self.data[n:n + k] = rec.rows(np.asarray(times, dtype=float), states, flows)
        self.n += k
        self.ready = self.n

    def add_later(self, rec, times, states, flows, instants=None):
        """Rows at many times (states (k, ny), flows (k, 3), copied) whose data are computed
        with the next ones, :data:`ROW_BATCH` or more at once, or by :meth:`flush`.
        ``instants``: their evaluations (a :class:`~.recorder.Stacked` the rows may keep),
        given for every call between two flushes or for none."""
        k = len(times)
        if k == 0:
            return
        if self.flows is None:
            self.flows = np.zeros((self.times.size, 3))
        n = self.n
        self.times[n:n + k] = times
        self.states[n:n + k] = states
        self.flows[n:n + k] = flows
        if instants is not None:
            self.instants.append(instants)
            self.instant_bytes += sum(v.nbytes for v in vars(instants).values()
                                      if isinstance(v, np.ndarray))
        self.n += k
        if self.n - self.ready >= ROW_BATCH or self.instant_bytes >= ROW_MEMORY:
            self.flush(rec)

    def flush(self, rec):
        """Compute the rows that :meth:`add_later` left waiting."""
        a, b = self.ready, self.n
        if b > a:
            inst = _joined(self.instants) if self.instants else None
            assert inst is None or inst.t.size == b - a, "instants for some rows only"
            self.data[a:b] = rec.rows(self.times[a:b], self.states[a:b], self.flows[a:b],
                                      instants=inst)
        self.instants = []
        self.instant_bytes = 0
        self.ready = b

    def done(self, names):
        assert self.ready == self.n, "rows left waiting: flush first"
        n = self.n
        fill_residual(names, self.data[:n])
        return self.times[:n], self.states[:n], self.data[:n]


def _joined(parts):
    """One :class:`~.recorder.Stacked` of several, in order (each field concatenated)."""
    if len(parts) == 1:
        return parts[0]
    fields = {}
    for name, value in vars(parts[0]).items():
        fields[name] = (None if value is None else
                        np.concatenate([getattr(p, name) for p in parts], axis=0))
    return type(parts[0])(**fields)


def _driver_functions(system):
    """Each driver's (f, f', f'') as in :meth:`System.driver_values`."""
    return [(f, f.derivative(1), f.derivative(2)) for _, _, f in system.drivers]


def _grids(system, k, h, n, fns, tail=None):
    """Drivers (2n+1, nd, 3) and magnitudes (2n+1, nm) on the half steps (k + j/2) h of the
    steps k .. k+n (or, with ``tail``, on k h + j tail/2 for the last, shorter step).

    The times are computed from the step index, not from the chunk's start, so that they do not
    depend on how the run was cut into chunks (which follows the wall time): a run gives the
    same numbers every time. The layout is that of :meth:`System.driver_values` and
    :meth:`System.magnitude_values`.
    """
    if tail is None:
        ts = (k + 0.5 * np.arange(2 * n + 1)) * h
    else:
        ts = k * h + 0.5 * tail * np.arange(3)
    drv = np.zeros((ts.size, max(len(fns), 1), 3))
    for k, triple in enumerate(fns):
        for c, f in enumerate(triple):
            drv[:, k, c] = _sample(f, ts)
    mags = np.zeros((ts.size, max(len(system.magnitudes), 1)))
    for k, f in enumerate(system.magnitudes):
        mags[:, k] = _sample(f, ts)
    return drv, mags


def _run_fixed(system, rec, y0, integrator, t_end, h, output_step, progress, cancel,
               monitor=None):
    """A fixed-step run (``integrator`` rk4 or euler: :data:`FIXED_RUNS`) in compiled chunks
    of about :data:`CHUNK_SECONDS` of wall time; returns ``(times, states, data, info)``."""
    name, evaluations = FIXED_RUNS[integrator]
    kernel = getattr(K, name)
    r = int(round(output_step / h))                       # steps per output
    n_full = int(math.floor(t_end / h * (1.0 + 1e-12) + 1e-9))
    tail = t_end - n_full * h
    if tail <= 1e-9 * max(t_end, h):
        tail = 0.0
    n_out = 1 + n_full // r + (1 if (n_full % r or tail) else 0)
    rows = _Rows(n_out, system.ny, len(rec.names))
    y = y0.copy()
    T, F, W = system.tree, system.forces, system.work
    fns = _driver_functions(system)
    # the work columns: extra states of the compiled run (none when nothing does work)
    flows = np.zeros(3 if system.does_work else 0)
    zero = np.zeros(3)
    # the rows the steps do not evaluate, as the fixed-step kernel does (nothing else compiled)
    def add_row(t, flows_now):
        rows.add_later(rec, [t], y[None], flows_now[None],
                       system.row_instants([t], y[None]))

    add_row(0.0, zero)
    progress(0.0)
    total = n_full + (1 if tail else 0)
    k = 0                                                 # steps done
    # a chunk's rows and their evaluations (made by the kernel: system.row_stack) take at
    # most ROW_MEMORY
    most = MAX_CHUNK
    if r <= MAX_CHUNK:
        most = min(MAX_CHUNK, r * max(1, int(ROW_MEMORY // system.row_bytes())))
    chunk = min(r * max(1, 64 // r), most) if r <= most else most
    buf = np.empty((max(most // r, 1) + 1, system.ny))
    buf_flows = np.zeros((buf.shape[0], 3))
    B = system.row_stack(buf.shape[0])
    no_rows = system.row_stack(0)
    # the loops' conditioning at every step (singular positions between the output rows)
    cond = np.empty(MAX_CHUNK if monitor is not None else 0)
    y_chunk = np.empty_like(y)
    while k < n_full:
        if cancel():
            raise Cancelled("the run was cancelled")
        t_chunk = _time.perf_counter()
        if r <= most:
            # whole output intervals; k is a multiple of r
            n = min(chunk, n_full - k)
            every = r
        else:
            # parts of one output interval; write only when the part ends on an output step
            n = min(chunk, n_full - k, r - k % r)
            every = n if (k + n) % r == 0 else n + 1
        drv, mags = _grids(system, k, h, n, fns)
        mon = cond[:n] if monitor is not None else cond
        y_chunk[:] = y                      # to find the element if it blows up
        written = kernel(y, 0, n, h, drv, mags, T, F, W, buf, every, 0, flows, buf_flows, mon,
                         B)
        dt = _time.perf_counter() - t_chunk          # the steps' time (not the rows')
        if not np.all(np.isfinite(y)):
            raise _blow_up(system, integrator, y_chunk, k, n, h, fns)
        if monitor is not None:
            monitor.series((k + np.arange(n)) * h, mon)
        first = k // r + 1 if r <= most else (k + n) // r
        times = (first + np.arange(written)) * r * h
        rows.add_later(rec, times, buf[:written], buf_flows[:written],
                       system.stacked(B, times, copy=True))
        k += n
        if k == n_full and n_full % r and not tail:
            add_row(k * h, flows if flows.size else zero)   # the end, off the grid
        # next chunk: about CHUNK_SECONDS of steps
        target = n * CHUNK_SECONDS / max(dt, 1e-6)
        target = int(min(max(target, 1), most))
        chunk = r * max(1, target // r) if r <= most else max(1, target)
        if k < total:
            progress(k / total)
    if tail:
        if cancel():
            raise Cancelled("the run was cancelled")
        drv, mags = _grids(system, n_full, h, 1, fns, tail=tail)
        y_tail = y.copy()
        kernel(y, 0, 1, tail, drv, mags, T, F, W, buf, 2, 0, flows, buf_flows, cond[:0],
               no_rows)
        if not np.all(np.isfinite(y)):
            hinge, body, others = blown_up(system, n_full * h, y_tail, y)
            raise not_finite(system.model, t_end, hinge, body, others, integrator, h)
        add_row(t_end, flows if flows.size else zero)
    rows.flush(rec)
    progress(1.0)
    times, states, data = rows.done(rec.names)
    info = dict(steps=total, evaluations=evaluations * total)
    return times, states, data, info


def _blow_up(system, integrator, y, k, n, h, fns) -> RunError:
    """The :class:`RunError` of a chunk of ``n`` fixed steps (``integrator``) from step ``k``
    (state ``y`` at its start) that ended with a state that is not finite: the chunk again, one
    step at a time, up to the first step whose state is not finite, naming the hinge that blew
    up first."""
    kernel = getattr(K, FIXED_RUNS[integrator][0])
    T, F, W = system.tree, system.forces, system.work
    y = y.copy()
    flows = np.zeros(3 if system.does_work else 0)
    buf = np.empty((2, system.ny))
    buf_flows = np.zeros((2, 3))
    cond = np.empty(0)
    no_rows = system.row_stack(0)
    for j in range(n):
        drv, mags = _grids(system, k + j, h, 1, fns)
        y_prev = y.copy()
        kernel(y, 0, 1, h, drv, mags, T, F, W, buf, 2, 0, flows, buf_flows, cond, no_rows)
        if not np.all(np.isfinite(y)):
            hinge, body, others = blown_up(system, (k + j) * h, y_prev, y)
            return not_finite(system.model, (k + j + 1) * h, hinge, body, others, integrator, h)
    return not_finite(system.model, (k + n) * h, integrator=integrator, step=h)


def _normalised(system, y):
    y = np.array(y, dtype=float)
    K.normalise_quaternions(y, system.tree.quat)
    return y


def _run_adaptive(system, rec, y0, integrator, t_end, step, output_step, rtol, atol,
                  progress, cancel, monitor=None):
    import scipy.integrate as si
    cls = getattr(si, integrator)
    times = output_times(t_end, output_step)
    rows = _Rows(times.size, system.ny, len(rec.names))
    work = WorkQuadrature(system.power, integrator) if system.does_work else None
    rows.add(rec, 0.0, y0, np.zeros(3))
    progress(0.0)
    first = min(step, t_end)
    bad = []            # the last evaluation at a finite state whose derivative is not finite:
    #                     (t, y, dy/dt)

    def derivative(t, y):
        d = system.derivative(t, y)
        if not np.all(np.isfinite(d)) and np.all(np.isfinite(y)):
            bad[:] = [(float(t), np.array(y, dtype=float), np.array(d, dtype=float))]
        return d

    solver = cls(derivative, 0.0, y0.copy(), t_end, rtol=rtol, atol=atol, first_step=first)
    nxt, steps, last = 1, 0, 0.0
    pending = []                  # rows waiting to be computed together (rec.rows)

    def flush():
        if pending:
            ts, ys, fs = zip(*pending)
            rows.add_many(rec, np.array(ts), np.array(ys), np.array(fs))
            pending.clear()

    svr = system.work.loops.svr
    stall = StallDetector(system.model, integrator, t_end)
    y_prev = solver.y.copy()
    while solver.status == "running":
        if cancel():
            raise Cancelled("the run was cancelled")
        t_prev = solver.t
        bad.clear()           # (trial states of rejected steps may have such derivatives)
        try:
            msg = solver.step()
        except (ArithmeticError, ValueError, SystemError, np.linalg.LinAlgError) as exc:
            if isinstance(exc, ModelError):
                raise
            # e.g. scipy's LU of a Jacobian that is not finite: a state blowing up
            if bad:
                raise _rates_not_finite(system, integrator, bad[0], exc) from exc
            raise _adaptive_breakdown(system, integrator, t_prev, y_prev, exc) from exc
        if not np.all(np.isfinite(solver.y)):
            hinge, body, others = blown_up(system, t_prev, y_prev, solver.y)
            raise not_finite(system.model, solver.t, hinge, body, others, integrator,
                             fixed=False)
        if solver.status == "failed":
            if bad:
                raise _rates_not_finite(system, integrator, bad[0], msg)
            element, field, advice = stiffness_advice(system.model, integrator, step, False)
            raise RunError(element, field, f"{integrator} failed at t = {solver.t:.6g} s: "
                                           f"{msg}; {advice}")
        y_prev = solver.y.copy()
        stall.step(solver.t)
        steps += 1
        if system.cuts and solver.t > solver.t_old:
            # the loops' stabilisation follows the step the integrator takes, not the first step
            system.set_stabilisation(solver.t - solver.t_old)
            if monitor is not None:         # the loops' conditioning at every step
                system.derivative(solver.t, solver.y)
                monitor.series([solver.t], [float(svr[0])])
        if work is not None or (nxt < times.size and times[nxt] <= solver.t):
            dense = solver.dense_output()
            a = solver.t_old
            while nxt < times.size and times[nxt] <= solver.t:
                y = solver.y if times[nxt] == solver.t else dense(times[nxt])
                flows = np.zeros(3)
                if work is not None:
                    flows = work.add(dense, a, float(times[nxt]))
                    a = float(times[nxt])
                pending.append((float(times[nxt]), _normalised(system, y), flows))
                nxt += 1
            if len(pending) >= 256:
                flush()
            if work is not None:
                work.add(dense, a, solver.t)
        frac = solver.t / t_end
        if frac >= last + 0.005 and frac < 1.0:
            progress(frac)
            last = frac
    if nxt < times.size:
        raise SimulationError(f"{integrator} stopped at t = {solver.t:g} s before the end")
    flush()
    progress(1.0)
    t, states, data = rows.done(rec.names)
    info = dict(steps=steps, evaluations=int(solver.nfev))
    if work is not None:
        info["power_evaluations"] = work.evaluations
    return t, states, data, info


def _run_compiled(system, rec, y0, integrator, t_end, step, output_step, rtol, atol,
                  progress, cancel, monitor=None):
    """``_run_adaptive`` for RK45 and DOP853 with the steps compiled (:func:`.adaptive.rk_chunk`):
    chunks of about :data:`CHUNK_SECONDS` of steps, between which cancel, the budget, the
    stall detector and progress are looked at, and the rows the chunk passed are computed.
    The same method, rows, work columns, loop stabilisation and guards as scipy's path."""
    from ..methods.mstmm import adaptive as AD
    from ..model.timeprogram import model_programs
    tab = AD.Tableau(integrator)
    times = output_times(t_end, output_step)
    rows = _Rows(times.size, system.ny, len(rec.names))
    rows.add(rec, 0.0, y0, np.zeros(3))
    progress(0.0)
    ny = system.ny
    T, F, W = system.tree, system.forces, system.work
    fns = _driver_functions(system)
    P = model_programs(fns, system.magnitudes)
    drv = np.zeros((max(len(fns), 1), 3))
    mags = np.zeros(max(len(system.magnitudes), 1))
    y = np.array(y0, dtype=float)
    f = np.zeros(ny)
    y_old, y_new, ye, kd = (np.zeros(ny) for _ in range(4))
    Kst = np.zeros((tab.rows, ny))
    Q = np.zeros((ny, 4)) if tab.kind == 0 else np.zeros((7, ny))
    out_y = np.zeros((times.size, ny))
    out_flows = np.zeros((times.size, 3))
    if system.does_work:
        from ..methods.runtime import WORK_NODES
        gx, gw = np.polynomial.legendre.leggauss(WORK_NODES.get(integrator, 4))
        flows = np.zeros(3)
    else:
        gx, gw, flows = np.zeros(0), np.zeros(0), np.zeros(0)
    pw = np.zeros(3)
    step_t = np.zeros(MAX_ADAPTIVE_CHUNK)
    step_svr = np.zeros(MAX_ADAPTIVE_CHUNK)
    bad_y, bad_d = np.zeros(ny), np.zeros(ny)
    from ..methods.mstmm.system import LOOP_STABILISATION
    fpar = np.zeros(10)
    fpar[AD.T_NOW], fpar[AD.H_ABS], fpar[AD.T_END] = 0.0, min(step, t_end), t_end
    fpar[AD.RTOL] = max(rtol, 100 * np.finfo(float).eps)     # as scipy's validate_tol
    fpar[AD.ATOL], fpar[AD.STAB] = atol, LOOP_STABILISATION
    ipar = np.zeros(9, dtype=np.int64)
    ipar[AD.NXT], ipar[AD.NEED_F0], ipar[AD.RESTAB] = 1, 1, 1 if system.cuts else 0
    stall = StallDetector(system.model, integrator, t_end)
    chunk, last, done_rows, span = 16, 0.0, 1, PROGRESS_STEP
    while True:
        if cancel():
            raise Cancelled("the run was cancelled")
        t_prev = fpar[AD.T_NOW]
        fpar[AD.T_STOP] = t_prev + span * t_end          # back for progress and cancel
        wall = _time.perf_counter()
        status = AD.rk_chunk(tab.kind, tab.stages, tab.A, tab.B, tab.C, tab.E, tab.E3, tab.P,
                             tab.exponent, y, f, y_old, y_new, ye, kd, Kst, Q,
                             P.ops, P.args, P.consts, P.start, P.stack, len(fns), drv, mags,
                             T, F, W, times, out_y, out_flows, gx, gw, flows, pw, step_t,
                             step_svr, T.quat, fpar, ipar, bad_y, bad_d, chunk)
        dt = _time.perf_counter() - wall
        n = int(ipar[AD.CHUNK_STEPS])
        t = float(fpar[AD.T_NOW])
        if status == AD.TIME_FUNCTION:
            t_err = float(fpar[AD.ERR_T])
            system.driver_values(t_err)            # raises the EvaluationError that names it
            system.magnitude_values(t_err)
            raise SimulationError(f"{integrator}: a driver or force magnitude is not finite "
                                  f"at t = {t_err:.9g} s")
        if status == AD.NOT_FINITE:
            hinge, body, others = blown_up(system, float(fpar[AD.T_OLD]), y_old, y)
            raise not_finite(system.model, t, hinge, body, others, integrator, fixed=False)
        if status == AD.TOO_SMALL:
            if ipar[AD.HAS_BAD]:
                raise _rates_not_finite(system, integrator, (float(fpar[AD.BAD_T]), bad_y.copy(),
                                                             bad_d.copy()), AD.TOO_SMALL_STEP)
            element, field, advice = stiffness_advice(system.model, integrator, step, False)
            raise RunError(element, field, f"{integrator} failed at t = {t:.6g} s: "
                                           f"{AD.TOO_SMALL_STEP}; {advice}")
        stall.steps(step_t[:n])
        if monitor is not None and n:
            monitor.series(step_t[:n].copy(), step_svr[:n].copy())
        nxt = int(ipar[AD.NXT])
        if nxt - done_rows >= 256 or (status == AD.FINISHED and nxt > done_rows):
            rows.add_many(rec, times[done_rows:nxt], out_y[done_rows:nxt],
                          out_flows[done_rows:nxt])
            done_rows = nxt
        if status == AD.FINISHED:
            break
        # the next chunk: about CHUNK_SECONDS of steps
        grow = min(max(CHUNK_SECONDS / max(dt, 1e-6), 0.1), 10.0)
        target = n * grow if n else chunk
        chunk = int(min(max(target, 1), MAX_ADAPTIVE_CHUNK))
        span = min(span * grow, 1.0)
        frac = t / t_end
        if frac >= last + PROGRESS_STEP and frac < 1.0:
            progress(frac)
            last = frac
    if done_rows < times.size:
        raise SimulationError(f"{integrator} stopped at t = {t:g} s before the end")
    progress(1.0)
    t_rows, states, data = rows.done(rec.names)
    info = dict(steps=int(ipar[AD.STEPS]), evaluations=int(ipar[AD.NFEV]), compiled=True)
    if system.does_work:
        info["power_evaluations"] = int(ipar[AD.NPOWER])
    return t_rows, states, data, info


def _run_implicit(system, rec, y0, integrator, t_end, step, output_step, rtol, atol,
                  progress, cancel, monitor=None):
    """A run with TR-BDF2 (:data:`IMPLICIT`: ``trbdf2`` at the fixed step ``step``,
    ``trbdf2-adaptive`` with error control, ``step`` the first), its steps compiled with the
    evaluation (:func:`.implicit.trbdf2_chunk`) in chunks as :func:`_run_compiled`'s: between
    them cancel, the budget, the stall detector and progress, and the rows the chunk passed.
    Newton's iteration failing down to the smallest step is a :class:`RunError` naming the
    hinge whose rates were not finite, else the stiffest element."""
    from ..methods.mstmm import implicit as IM
    from ..model.timeprogram import model_programs
    from ..methods.mstmm.system import LOOP_STABILISATION
    adaptive = integrator == IM.ADAPTIVE
    times = output_times(t_end, output_step)
    rows = _Rows(times.size, system.ny, len(rec.names))
    rows.add(rec, 0.0, y0, np.zeros(3))
    progress(0.0)
    ny = system.ny
    T, F, W = system.tree, system.forces, system.work
    fns = _driver_functions(system)
    P = model_programs(fns, system.magnitudes)
    drv = np.zeros((max(len(fns), 1), 3))
    mags = np.zeros(max(len(system.magnitudes), 1))
    y = np.array(y0, dtype=float)
    f = np.zeros(ny)
    y_old, f_old, f2, z2, z3, c, ye, kd, dz, scale, est = (np.zeros(ny) for _ in range(11))
    Jm, LU = np.zeros((ny, ny)), np.zeros((ny, ny))
    piv = np.zeros(ny, dtype=np.int64)
    out_y = np.zeros((times.size, ny))
    out_flows = np.zeros((times.size, 3))
    if system.does_work:
        gx, gw = np.polynomial.legendre.leggauss(IM.WORK_NODES)
        flows = np.zeros(3)
    else:
        gx, gw, flows = np.zeros(0), np.zeros(0), np.zeros(0)
    pw = np.zeros(3)
    step_t = np.zeros(MAX_ADAPTIVE_CHUNK)
    step_svr = np.zeros(MAX_ADAPTIVE_CHUNK)
    bad_y, bad_d = np.zeros(ny), np.zeros(ny)
    fpar = np.zeros(IM.N_FPAR)
    fpar[IM.T_NOW], fpar[IM.H_ABS], fpar[IM.T_END] = 0.0, min(step, t_end), t_end
    fpar[IM.H_MAX] = step
    fpar[IM.RTOL] = max(rtol, 100 * np.finfo(float).eps)
    fpar[IM.ATOL], fpar[IM.STAB] = atol, LOOP_STABILISATION
    fpar[IM.ETA] = 1.0
    ipar = np.zeros(IM.N_IPAR, dtype=np.int64)
    ipar[IM.NXT], ipar[IM.NEED_F0], ipar[IM.RESTAB] = 1, 1, 1 if system.cuts else 0
    ipar[IM.IS_ADAPTIVE], ipar[IM.NEED_J] = 1 if adaptive else 0, 1
    stall = StallDetector(system.model, integrator, t_end)
    chunk, last, done_rows, span = 16, 0.0, 1, PROGRESS_STEP
    t = 0.0
    while ny > 0:
        if cancel():
            raise Cancelled("the run was cancelled")
        t_prev = fpar[IM.T_NOW]
        fpar[IM.T_STOP] = t_prev + span * t_end
        wall = _time.perf_counter()
        status = IM.trbdf2_chunk(y, f, y_old, f_old, f2, z2, z3, c, ye, kd, dz, scale, est, Jm,
                                 LU, piv, P.ops, P.args, P.consts, P.start, P.stack, len(fns),
                                 drv, mags, T, F, W, times, out_y, out_flows, gx, gw, flows, pw,
                                 step_t, step_svr, T.quat, fpar, ipar, bad_y, bad_d, chunk)
        dt = _time.perf_counter() - wall
        n = int(ipar[IM.CHUNK_STEPS])
        t = float(fpar[IM.T_NOW])
        if status == IM.TIME_FUNCTION:
            t_err = float(fpar[IM.ERR_T])
            system.driver_values(t_err)            # raises the EvaluationError that names it
            system.magnitude_values(t_err)
            raise SimulationError(f"{integrator}: a driver or force magnitude is not finite "
                                  f"at t = {t_err:.9g} s")
        if status == IM.NOT_FINITE:
            hinge, body, others = blown_up(system, float(fpar[IM.T_OLD]), y_old, y)
            raise not_finite(system.model, t, hinge, body, others, integrator, step,
                             fixed=not adaptive)
        if status in (IM.TOO_SMALL, IM.NO_CONVERGENCE):
            why = (IM.TOO_SMALL_STEP if status == IM.TOO_SMALL else
                   "Newton's iteration does not converge even at the smallest step "
                   f"({fpar[IM.H_ABS]:.3g} s)")
            if ipar[IM.HAS_BAD]:
                raise _rates_not_finite(system, integrator, (float(fpar[IM.BAD_T]), bad_y.copy(),
                                                             bad_d.copy()), why)
            element, field, advice = stiffness_advice(system.model, integrator, step,
                                                      not adaptive)
            raise RunError(element, field, f"{integrator} failed at t = {t:.6g} s: {why}; "
                                           f"{advice}")
        stall.steps(step_t[:n])
        if monitor is not None and n:
            monitor.series(step_t[:n].copy(), step_svr[:n].copy())
        nxt = int(ipar[IM.NXT])
        if nxt - done_rows >= 256 or (status == IM.FINISHED and nxt > done_rows):
            rows.add_many(rec, times[done_rows:nxt], out_y[done_rows:nxt],
                          out_flows[done_rows:nxt])
            done_rows = nxt
        if status == IM.FINISHED:
            break
        grow = min(max(CHUNK_SECONDS / max(dt, 1e-6), 0.1), 10.0)
        target = n * grow if n else chunk
        chunk = int(min(max(target, 1), MAX_ADAPTIVE_CHUNK))
        span = min(span * grow, 1.0)
        frac = t / t_end
        if frac >= last + PROGRESS_STEP and frac < 1.0:
            progress(frac)
            last = frac
    if ny == 0:                     # nothing moves: the rows of the start
        for k in range(1, times.size):
            rows.add(rec, float(times[k]), y0, np.zeros(3))
        done_rows = times.size
    if done_rows < times.size:
        raise SimulationError(f"{integrator} stopped at t = {t:g} s before the end")
    progress(1.0)
    t_rows, states, data = rows.done(rec.names)
    info = dict(steps=int(ipar[IM.STEPS]), evaluations=int(ipar[IM.NFEV]), compiled=True,
                jacobians=int(ipar[IM.NJAC]), factorisations=int(ipar[IM.NLU]),
                rejected_steps=int(ipar[IM.NREJECT]), newton_failures=int(ipar[IM.NFAIL]))
    if system.does_work:
        info["power_evaluations"] = int(ipar[IM.NPOWER])
    return t_rows, states, data, info


def _rates_not_finite(system, integrator, bad, why) -> RunError:
    """The :class:`RunError` of an adaptive run that failed (``why``: the integrator's message
    or exception) after an evaluation ``bad = (t, y, dy/dt)`` whose derivative was not finite
    at a finite state: the hinge whose rates or accelerations were not finite there."""
    t, y, d = bad
    hinge, body, others = blown_up(system, t, y, np.where(np.isfinite(d), y, np.nan))
    _, _, advice = stiffness_advice(system.model, integrator, None, False)
    if isinstance(why, BaseException):
        why = f"{type(why).__name__}: {_first_line(why)}"
    more = f" ({others} other hinge{'s' if others != 1 else ''} with it)" if others else ""
    return RunError(f"Hinge '{hinge}'", "State", (
        f"the accelerations of this hinge (body '{body}') are not finite at t = {t:.6g} s, at a "
        f"finite state{more}; {integrator} could not go on ({why}); {advice}"))


def _adaptive_breakdown(system, integrator, t, y, exc) -> RunError:
    """The :class:`RunError` of an adaptive step that raised ``exc`` from the finite state
    ``y`` at ``t``: the hinge whose accelerations are not finite (or largest) there, or the
    stiffest element."""
    with np.errstate(all="ignore"):
        try:
            d = np.array(system.derivative(t, y), dtype=float)
        except Exception:          # noqa: BLE001 - only which hinge to name
            d = None
    if d is not None and not np.all(np.isfinite(d)):
        hinge, body, others = blown_up(system, t, y, np.where(np.isfinite(d), y, np.nan))
        error = not_finite(system.model, t, hinge, body, others, integrator, fixed=False)
        p = error.problems[0]
        return RunError(p.element, p.field, f"{p.message} ({type(exc).__name__} in "
                                            f"{integrator}: {_first_line(exc)})")
    element, field, advice = stiffness_advice(system.model, integrator, None, False)
    return RunError(element, field, f"{integrator} broke down at t = {t:.6g} s "
                                    f"({type(exc).__name__}: {_first_line(exc)}); {advice}")


# --------------------------------------------------------------------------------------------------
# The command line: ``python3 -m MultibodyWB.solver run MODEL.xml``
# --------------------------------------------------------------------------------------------------


