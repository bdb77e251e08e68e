"""Running a simulation: ``simulate(model) -> Results``, and the ``run`` command of the CLI.

Methods (``Simulation/Method``)
    ``mstmm``: the tree solver of :mod:`.system` (the Riccati form of the transfer matrix method
    in :mod:`.kernels`). ``constrained``: the global formulation (absolute coordinates, Lagrange
    multipliers) for any topology, with assembly of the initial state and drift control of the
    loops (:mod:`.constrained_run`; integrated in Python: the reference, not the fast path).
    ``newton-euler``: the discrete-time method of :mod:`.newton_euler` (every body integrated on
    its own with a very small step, 1e-5 to 1e-7 s; joints as stiff spring-dampers; any topology).
    It has its own scheme, so ``Integrator`` does not apply; ``OutputStep`` must be a whole number
    of steps. Options (keyword arguments of :func:`simulate`): ``joint_fraction``,
    ``joint_frequency``, ``joint_damping_ratio``.

Integrators (``Simulation/Integrator``)
    ``rk4``: classical fixed-step Runge-Kutta. The run goes in chunks of many steps, each done
    inside compiled code (:func:`.kernels.rk4_run`) with the drivers' values, rates and
    accelerations and the force magnitudes evaluated beforehand on the chunk's half-step grid;
    between chunks the caller's ``progress`` and ``cancel`` are called. Quaternions are
    normalised after every step. ``OutputStep`` must be a whole number of ``Step``\\ s; an
    ``EndTime`` that is not a whole number of steps ends with one shorter step.

    ``DOP853``, ``RK45``, ``Radau``, ``BDF``, ``LSODA``: scipy's adaptive integrators (as in
    ``scipy.integrate.solve_ivp``) with the model's ``RelativeTolerance`` and
    ``AbsoluteTolerance`` and ``Step`` as the first step; the states at the output times come from
    the integrator's dense output, quaternions normalised there.

Closed loops (``mstmm``) are held closed by Baumgarte stabilisation, critically damped at
``w = LOOP_STABILISATION / h`` (:mod:`.system`): ``h`` is the fixed step for rk4; for the adaptive
integrators it is the step the integrator took last (the first step only until then), so the
stabilisation never limits the step and the run does not depend on ``Step``.

Energy balance (the ``energy.work_drivers``, ``work_forces``, ``dissipated`` and ``residual``
columns of :mod:`.results`): when the model has drivers, forces with a magnitude or dampers
(:attr:`.system.System.does_work`), ``rk4`` integrates their power (:func:`.kernels.power_flows`)
as three extra states of the same RK4 scheme inside the compiled run, and the adaptive
integrators integrate it over the dense output of every step by Gauss-Legendre quadrature
(:data:`WORK_NODES` nodes, cut at the output times; ``meta['power_evaluations']`` counts them).
Either way the residual of the balance is the integration error. The states and the existing
columns are the same as without it, bit for bit.

Output times are ``0, OutputStep, 2 OutputStep, ...`` and ``EndTime`` (added if it is not on that
grid). Only the output rows are kept, so a run of a million steps needs memory for its output
only.
"""

from __future__ import annotations

import math
import sys
import time as _time

import numpy as np

from . import kernels as K
from .model import INTEGRATORS, METHODS, ModelError, MultibodySystem, Problem
from .results import Recorder, Results, fill_residual
from .system import _sample

ADAPTIVE = ("DOP853", "RK45", "Radau", "BDF", "LSODA")
#: Wall time aimed at per rk4 chunk (s): how often progress and cancel are looked at.
CHUNK_SECONDS = 0.1
#: Most steps in one rk4 chunk.
MAX_CHUNK = 20000


class Cancelled(Exception):
    """The run was cancelled (``cancel()`` returned True); there are no results."""


class SimulationError(RuntimeError):
    """The integration failed (e.g. the adaptive step size fell below what is representable)."""


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
    fixed = "method newton-euler" if method == "newton-euler" else "integrator rk4"
    if ((integrator == "rk4" or method == "newton-euler") and math.isfinite(values["Step"])
            and values["Step"] > 0 and math.isfinite(values["OutputStep"])
            and values["OutputStep"] > 0):
        ratio = values["OutputStep"] / values["Step"]
        if ratio < 1.0 - 1e-9 or abs(ratio - round(ratio)) > 1e-6 * ratio:
            problems.append(_problem(
                "OutputStep", f"{values['OutputStep']:g} s is not a whole number of steps "
                              f"(Step {values['Step']:g} s) for the fixed-step {fixed}"))
    if problems:
        raise ModelError(problems)
    return (method, integrator, values["EndTime"], values["Step"], values["OutputStep"],
            s.relative_tolerance, s.absolute_tolerance)


def output_times(t_end: float, output_step: float) -> np.ndarray:
    """0, output_step, ... up to ``t_end``, and ``t_end`` itself."""
    m = int(math.floor(t_end / output_step * (1.0 + 1e-12) + 1e-9))
    t = np.arange(m + 1) * output_step
    if t_end - t[-1] > 1e-9 * max(t_end, output_step):
        t = np.append(t, t_end)
    else:
        t[-1] = t_end
    return t


def simulate(model: MultibodySystem, method=None, integrator=None, t_end=None, step=None,
             output_step=None, progress=None, cancel=None, accept_corrections=False,
             **options) -> Results:
    """Simulate ``model`` and return its :class:`~.results.Results`.

    Parameters
    ----------
    model : MultibodySystem
        A valid model (its problems are raised as :class:`ModelError`).
    method, integrator : str, optional
        See the module docstring; None: the model's ``Simulation`` settings (as are the others).
        Names are matched without regard to case.
    t_end, step, output_step : float, optional
        End time, integrator step (rk4) or first step (adaptive), output spacing (s).
    progress : callable(fraction), optional
        Called with increasing fractions of the simulated time, from 0 to 1 (last call: 1.0).
    cancel : callable() -> bool, optional
        Looked at between chunks (rk4) or steps (adaptive): True stops the run, which raises
        :class:`Cancelled`.
    accept_corrections : bool
        The run starts from the drawing (:mod:`.start`): a start that would move a body away from
        where it is drawn (markers that do not meet, a driver starting elsewhere, a loop that does
        not close as drawn) raises :class:`~.start.StartCorrectionError` unless this is True.
    **options
        Options of the method: ``newton-euler`` takes ``joint_fraction``, ``joint_frequency``,
        ``joint_damping_ratio`` (see :class:`.newton_euler.NewtonEuler`).

    Raises
    ------
    ModelError
        The model or the settings are not valid (every problem listed; settings as
        ``Simulation``, field ``Method``, ``OutputStep``...).
    StartCorrectionError
        (a ModelError) The start is not the drawing and ``accept_corrections`` is False.
    Cancelled
    SimulationError
        An adaptive integrator failed.
    """
    from .system import System
    wall0 = _time.perf_counter()
    model.check()
    method, integrator, t_end, step, output_step, rtol, atol = _settings(
        model, method, integrator, t_end, step, output_step)
    from .start import prepare
    model, start = prepare(model, accept_corrections)
    start_meta = _start_meta(start)
    if method == "constrained":
        return _with_start(_simulate_constrained(model, integrator, t_end, step, output_step,
                                                 rtol, atol, progress, cancel, wall0),
                           start_meta)
    if method == "newton-euler":
        return _with_start(_simulate_newton_euler(model, t_end, step, output_step, progress,
                                                  cancel, wall0, options), start_meta)
    if options:
        raise TypeError(f"the method {method} takes no options ({', '.join(options)})")
    system = System(model)
    system.set_stabilisation(step)         # closed loops: tuned to the step (adaptive: the
    #                                        first; then the current one, see _run_adaptive)
    monitor = None
    if system.cuts:
        from .assembly import assembled_state
        from .constrained_run import LoopRecorder
        from .partition import SingularityMonitor
        rec = LoopRecorder(system)
        y0, report = assembled_state(system)
        # the conditioning monitor measures the r-th eigenvalue, r the loops' rank at the start
        system.work.loops.ref_rank[0] = system.instant(0.0, y0).loop_rank
        monitor = SingularityMonitor()
    else:
        rec, report = Recorder(system), None
        y0 = system.initial_state()
    K.normalise_quaternions(y0, system.tree.quat)
    progress = progress or (lambda f: None)
    cancel = cancel or (lambda: False)
    if integrator == "rk4":
        times, states, data, info = _run_rk4(system, rec, y0, t_end, step, output_step,
                                             progress, cancel, monitor)
    else:
        times, states, data, info = _run_adaptive(system, rec, y0, integrator, t_end, step,
                                                  output_step, rtol, atol, progress, cancel,
                                                  monitor)
    wall = _time.perf_counter() - wall0
    meta = dict(model=model.name, method=method, integrator=integrator, step=step,
                output_step=output_step, end_time=t_end, wall_time=wall,
                bodies=rec.bodies, hinges=rec.hinges, ny=int(system.ny),
                **info)
    if integrator != "rk4":
        meta.update(relative_tolerance=rtol, absolute_tolerance=atol)
    if system.cuts:
        monitor.finish()
        meta.update(_loop_report(system, report, rec, monitor, times, states))
    return _with_start(Results(rec.names, data, meta, states), start_meta)


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
    (``rec``: the run's :class:`~.constrained_run.LoopRecorder`)."""
    from .kinematics import mobility
    warnings, info = [], {}
    if report is not None:
        info["assembly"] = str(report)
        if report.inconsistent:
            warnings.append("the initial coordinates or rates violated the loop constraints and "
                            "were corrected (see meta['assembly'])")
        warnings += report.warnings
    m = system.tree.m_tot
    rank0 = rec.ranks[0]
    if rank0 < m:
        red = mobility(system.model, system.topology).redundant_constraints
        info["redundant_constraints"] = list(red)
        warnings.append(f"{m - rank0} redundant constraint{'s' if m - rank0 > 1 else ''} "
                        f"({', '.join(red)}): the motion is determinate, but the reactions of the "
                        "hinges in those loops are not unique; the minimum-norm cut-hinge loads "
                        "are given")
    found = sorted(monitor.singularities, key=lambda s: s.time)
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
    info["loop_closure"] = dict(max_residual=rec.max_gap)
    info["warnings"] = warnings
    return info


def _singularity_kinds(system, found, times, states) -> list:
    """``'change point'`` or ``'dead centre'`` for each singularity the mstmm monitor found.

    The monitor sees the loops' constraint compliance with the driven coordinates held, which
    loses rank at both. Without drivers it is a change point; with drivers the loop Jacobian
    over all coordinates (:func:`.constrained.loop_constraints`) at the output state nearest
    in time tells them apart: at a change point it loses rank too, at a dead centre it keeps
    it.
    """
    if not system.drivers or not found:
        return ["change point"] * len(found)
    from .constrained import loop_constraints
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
    """``simulate`` with the method ``constrained`` (:func:`.constrained_run.run`)."""
    from .constrained_run import run
    names, times, states, data, info = run(model, integrator, t_end, step, output_step, rtol,
                                           atol, progress, cancel)
    meta = dict(model=model.name, method="constrained", integrator=integrator, step=step,
                output_step=output_step, end_time=t_end, wall_time=_time.perf_counter() - wall0,
                **info)
    if integrator != "rk4":
        meta.update(relative_tolerance=rtol, absolute_tolerance=atol)
    return Results(names, data, meta, states)


def _simulate_newton_euler(model, t_end, step, output_step, progress, cancel, wall0, options):
    """``simulate`` with the method ``newton-euler`` (:func:`.newton_euler.run`)."""
    from .newton_euler import run
    times, states, data, info, rec = run(model, t_end, step, output_step, progress, cancel,
                                         **options)
    meta = dict(model=model.name, method="newton-euler", step=step, output_step=output_step,
                end_time=t_end, wall_time=_time.perf_counter() - wall0, bodies=rec.bodies,
                hinges=rec.hinges, ny=int(states.shape[1]), **info)
    return Results(rec.names, data, meta, states)


class _Rows:
    """Output buffers filled row by row."""

    def __init__(self, n, ny, ncol):
        self.states = np.empty((n, ny))
        self.data = np.empty((n, ncol))
        self.times = np.empty(n)
        self.n = 0

    def add(self, rec, t, y, flows=None):
        self.times[self.n] = t
        self.states[self.n] = y
        self.data[self.n] = rec.row(t, y, flows=flows)
        self.n += 1

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

    def done(self, names):
        n = self.n
        fill_residual(names, self.data[:n])
        return self.times[:n], self.states[:n], self.data[:n]


#: Gauss-Legendre nodes per step (or part of a step) for the work of the adaptive integrators:
#: exact for polynomials of degree 2 n - 1, beyond the order of each one's dense output.
WORK_NODES = {"DOP853": 4, "RK45": 3, "Radau": 3, "BDF": 3, "LSODA": 3}


class WorkQuadrature:
    """The work columns of an adaptive run: the power (``power(t, y) -> (3,)``) integrated over
    the dense output of every step by Gauss-Legendre quadrature, cut at the output times.

    The states at the output times come from the same dense output, so the energy balance's
    residual measures the integration error.
    """

    def __init__(self, power, integrator):
        self.power = power
        self.x, self.w = np.polynomial.legendre.leggauss(WORK_NODES.get(integrator, 4))
        self.flows = np.zeros(3)
        self.evaluations = 0

    def add(self, dense, t0, t1):
        """Add the integral over [t0, t1] of the power along ``dense`` (the step's dense
        output); returns the flows since t = 0."""
        if t1 > t0:
            mid, half = 0.5 * (t0 + t1), 0.5 * (t1 - t0)
            s = np.zeros(3)
            for x, w in zip(self.x, self.w):
                t = mid + half * x
                s += w * self.power(t, dense(t))
            self.evaluations += self.x.size
            self.flows = self.flows + half * s
        return self.flows


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


def _run_rk4(system, rec, y0, t_end, h, output_step, progress, cancel, monitor=None):
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
    # the work columns: extra states of the compiled RK4 (none when nothing does work)
    flows = np.zeros(3 if system.does_work else 0)
    zero = np.zeros(3)
    rows.add(rec, 0.0, y, zero)
    progress(0.0)
    total = n_full + (1 if tail else 0)
    k = 0                                                 # steps done
    chunk = min(r * max(1, 64 // r), MAX_CHUNK) if r <= MAX_CHUNK else MAX_CHUNK
    buf = np.empty((max(MAX_CHUNK // r, 1) + 1, system.ny))
    buf_flows = np.zeros((buf.shape[0], 3))
    # the loops' conditioning at every step (singular positions between the output rows)
    cond = np.empty(MAX_CHUNK if monitor is not None else 0)
    while k < n_full:
        if cancel():
            raise Cancelled("the run was cancelled")
        t_chunk = _time.perf_counter()
        if r <= MAX_CHUNK:
            # whole output intervals; k is a multiple of r
            n = min(chunk, n_full - k)
            every = r
        else:
            # parts of one output interval; write only when the part ends on an output step
            n = min(chunk, n_full - k, r - k % r)
            every = n if (k + n) % r == 0 else n + 1
        drv, mags = _grids(system, k, h, n, fns)
        mon = cond[:n] if monitor is not None else cond
        written = K.rk4_run(y, 0, n, h, drv, mags, T, F, W, buf, every, 0, flows, buf_flows, mon)
        if not np.all(np.isfinite(y)):
            raise SimulationError(f"the state is not finite after t = {(k + n) * h:g} s; "
                                  "try a smaller step")
        if monitor is not None:
            monitor.series((k + np.arange(n)) * h, mon)
        first = k // r + 1 if r <= MAX_CHUNK else (k + n) // r
        rows.add_many(rec, (first + np.arange(written)) * r * h, buf[:written],
                      buf_flows[:written])
        k += n
        if k == n_full and n_full % r and not tail:
            rows.add(rec, k * h, y, flows if flows.size else zero)   # the end, off the grid
        # next chunk: about CHUNK_SECONDS of work
        dt = _time.perf_counter() - t_chunk
        target = n * CHUNK_SECONDS / max(dt, 1e-6)
        target = int(min(max(target, 1), MAX_CHUNK))
        chunk = r * max(1, target // r) if r <= MAX_CHUNK else max(1, target)
        if k < total:
            progress(k / total)
    if tail:
        if cancel():
            raise Cancelled("the run was cancelled")
        drv, mags = _grids(system, n_full, h, 1, fns, tail=tail)
        K.rk4_run(y, 0, 1, tail, drv, mags, T, F, W, buf, 2, 0, flows, buf_flows, cond[:0])
        rows.add(rec, t_end, y, flows if flows.size else zero)
    progress(1.0)
    times, states, data = rows.done(rec.names)
    info = dict(steps=total, evaluations=4 * total)
    return times, states, data, info


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
    solver = cls(system.derivative, 0.0, y0.copy(), t_end, rtol=rtol, atol=atol,
                 first_step=first)
    nxt, steps, last = 1, 0, 0.0
    pending = []                  # rows waiting to be computed together (rec.rows)

    def flush():
        if pending:
            ts, ys, fs = zip(*pending)
            rows.add_many(rec, np.array(ts), np.array(ys), np.array(fs))
            pending.clear()

    svr = system.work.loops.svr
    while solver.status == "running":
        if cancel():
            raise Cancelled("the run was cancelled")
        msg = solver.step()
        if solver.status == "failed":
            raise SimulationError(f"{integrator} failed at t = {solver.t:g} s: {msg}")
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


# --------------------------------------------------------------------------------------------------
# The command line: ``python3 -m MultibodyWB.solver run MODEL.xml``
# --------------------------------------------------------------------------------------------------

class ProgressBar:
    """A text bar on a stream (stderr), updated in place when the stream is a terminal.

    On a terminal it is redrawn at most ten times a second; elsewhere only the final line is
    written.
    """

    def __init__(self, stream=None, width=30, label="simulating"):
        self.stream = stream or sys.stderr
        self.width = width
        self.label = label
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.t0 = _time.perf_counter()
        self._last = -1.0

    def _line(self, fraction):
        n = int(round(fraction * self.width))
        el = _time.perf_counter() - self.t0
        return (f"{self.label} [{'#' * n}{'.' * (self.width - n)}] {100 * fraction:5.1f}% "
                f"{el:6.1f} s")

    def __call__(self, fraction):
        now = _time.perf_counter()
        if self.tty and (now - self._last >= 0.1 or fraction >= 1.0):
            self._last = now
            self.stream.write("\r" + self._line(fraction))
            self.stream.flush()

    def finish(self, fraction=1.0, note=""):
        """Write the final line (always) and end it."""
        self.stream.write(("\r" if self.tty else "") + self._line(fraction) + note + "\n")
        self.stream.flush()


def add_run_command(subparsers):
    """Add the ``run`` command to the CLI's sub-parsers (``cli.parser()``)."""
    r = subparsers.add_parser(
        "run", help="simulate a model and write its results",
        description="Simulate a neutral model (the settings of its <Simulation> element unless "
                    "given here), print a summary, and write the results (.csv or .npz).")
    r.add_argument("model", help="neutral model file (*.mbs.xml)")
    r.add_argument("--method", help=f"solution method: {', '.join(METHODS)} "
                                    "(default: the model's)")
    r.add_argument("--integrator", help=f"integrator: {', '.join(INTEGRATORS)} "
                                        "(default: the model's)")
    r.add_argument("--t-end", type=float, help="end time, s")
    r.add_argument("--step", type=float, help="integrator step (rk4) or first step, s")
    r.add_argument("--output-step", type=float, help="spacing of the results, s")
    r.add_argument("--out", "-o", help="results file, .csv or .npz")
    r.add_argument("--accept-corrections", action="store_true",
                   help="run even when the start moves parts away from the drawing (markers that "
                        "do not meet, drivers that start elsewhere, loops that do not close as "
                        "drawn); without it such a run is refused, listing what would move")
    r.set_defaults(func=cmd_run)
    return r


def cmd_run(args, out) -> int:
    """``run``: simulate, show progress on stderr, print a summary; exit 0, 1 or 2."""
    from .cli import EXIT_INVALID, EXIT_OK, CliError, _load, _print_problems
    if args.out and not args.out.lower().endswith((".csv", ".npz")):
        raise CliError(f"{args.out}: the results file must end in .csv or .npz")
    model, problems = _load(args.model)
    if problems:
        _print_problems(args.model, problems, out)
        return EXIT_INVALID
    bar = ProgressBar(sys.stderr)
    try:
        res = simulate(model, method=args.method, integrator=args.integrator, t_end=args.t_end,
                       step=args.step, output_step=args.output_step, progress=bar,
                       accept_corrections=args.accept_corrections)
    except ModelError as exc:
        _print_problems(args.model, exc.problems, out)
        return EXIT_INVALID
    except KeyboardInterrupt:
        bar.finish(0.0, "  interrupted")
        print("interrupted: no results", file=sys.stderr)
        return 130
    except SimulationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    bar.finish(1.0)
    print(res.summary(), file=out)
    if args.out:
        res.save(args.out)
        print(f"results written to {args.out} ({len(res)} rows x {len(res.names)} columns)",
              file=out)
    return EXIT_OK
