"""The mstmm method's run: :func:`run` integrates a model's :class:`.system.System` with the
integrator asked for and records the result rows (the contract: :mod:`..base`).

Fixed steps (``rk4``, ``euler``: :func:`_run_fixed`)
    Chunks of many steps, each inside compiled code (:func:`.kernels.rk4_run`,
    :func:`.kernels.euler_run`) with the drivers' values, rates and accelerations and the force
    magnitudes evaluated beforehand on the chunk's half-step grid (:func:`_grids`); between
    chunks ``progress`` and ``cancel`` are called. A chunk whose state is not finite is gone
    through again step by step to name the hinge that blew up first (:func:`_blow_up`).
Compiled adaptive and implicit (:func:`_run_chunks`)
    ``RK45`` and ``DOP853`` (:data:`COMPILED_ADAPTIVE`), ``trbdf2`` and ``trbdf2-adaptive``
    (:data:`~...model.settings.IMPLICIT`): one chunk driver for both, the steps compiled with
    the evaluation (:func:`.adaptive.rk_chunk`, :func:`.implicit.trbdf2_chunk`) in chunks of
    about :data:`CHUNK_SECONDS` of wall time, between which
    cancel, the budget, the stall detector (:class:`~..runtime.StallDetector`) and progress are
    looked at and the rows the chunk passed are computed.
scipy's adaptive integrators (:func:`_run_adaptive`)
    ``Radau``, ``BDF``, ``LSODA`` (and RK45, DOP853 when taken out of
    :data:`COMPILED_ADAPTIVE`): scipy's solver with a Python call per evaluation.

Closed loops: the rows come from :class:`~.loop_rows.LoopRecorder`, singular
configurations from :class:`~..shared.singularity.SingularityMonitor` fed with the kernel's
conditioning ratio at every step, and :func:`_loop_report` says what the run met (issue 36
moved this driver here from ``run/simulate.py``; what the module docstring of
:mod:`...run.simulate` says of the integrators is what this module does).
"""

from __future__ import annotations

import math
import time as _time

import numpy as np

from . import kernels as K
from ...model.settings import FIXED_STEP, IMPLICIT
from ...model.problems import ModelError
from ...results.recorder import Recorder
from ...results.table import Results, fill_residual
from ..runtime import (Cancelled, RunError, SimulationError, StallDetector, WorkQuadrature,
                       blown_up, first_line, not_finite, output_times, stiffness_advice)
from .system import _sample

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


def run(model, integrator, t_end, step, output_step, rtol, atol, progress, cancel, wall0,
        topology=None) -> Results:
    """A run of ``model`` with the method ``mstmm`` (:class:`.system.System`): its
    :class:`~...results.table.Results` (the contract of :mod:`..base`; the energy check is the
    caller's). ``wall0``: when the run started (its ``meta['wall_time']`` counts from it);
    ``topology``: the model's, when the caller has it."""
    from .system import System
    system = System(model, topology)
    system.set_stabilisation(step)         # closed loops: tuned to the step (adaptive: the
    #                                        first; then the current one, see _run_adaptive)
    monitor = None
    if system.cuts:
        from ...analysis.assembly import assembled_state
        from .loop_rows import LoopRecorder
        from ..shared.singularity import SingularityMonitor
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
    elif integrator in IMPLICIT or (integrator in COMPILED_ADAPTIVE and system.ny > 0):
        # (RK45 and DOP853 without a state go through scipy's path)
        times, states, data, info = _run_chunks(system, rec, y0, integrator, t_end, step,
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
    return Results(rec.names, data, meta, states)


def _loop_report(system, report, rec, monitor, times, states) -> dict:
    """What an mstmm run of a mechanism with closed loops met: the assembly, redundant
    constraints, singular configurations (the loops losing rank, from the conditioning
    monitor evaluated at every step: :class:`~.partition.SingularityMonitor`) and the closure
    (``rec``: the run's :class:`~.loop_rows.LoopRecorder`)."""
    from ...analysis.kinematics import mobility
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
        from ..shared.singularity import Singularity
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
    over all coordinates (:func:`..shared.loops.loop_constraints`) at the output state nearest
    in time tells them apart: at a change point it loses rank too, at a dead centre it keeps
    it.
    """
    if not system.drivers or not found:
        return ["change point"] * len(found)
    from ..shared.loops import loop_constraints
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


def _run_chunks(system, rec, y0, integrator, t_end, step, output_step, rtol, atol, progress,
                cancel, monitor=None):
    """A run whose steps are compiled with the evaluation, in chunks: the explicit adaptive
    ``RK45`` and ``DOP853`` (:data:`COMPILED_ADAPTIVE`, :func:`.adaptive.rk_chunk`: scipy's
    method and step-size control, the same steps as :func:`_run_adaptive`) and TR-BDF2
    (:data:`~...model.settings.IMPLICIT`: ``trbdf2`` at the fixed step ``step``,
    ``trbdf2-adaptive`` with error control, ``step`` the first; :func:`.implicit.trbdf2_chunk`).
    Chunks of about :data:`CHUNK_SECONDS` of steps, between which cancel, the budget, the stall
    detector and progress are looked at, and the rows the chunk passed are computed. The same
    rows, work columns, loop stabilisation and guards as scipy's path; an integrator that cannot
    go on (its step too small, or Newton's iteration failing down to the smallest step) is a
    :class:`RunError` naming the hinge whose rates were not finite, else the stiffest element.
    Returns ``(times, states, data, info)``."""
    from ...model.timeprogram import model_programs
    from ..shared.system import LOOP_STABILISATION
    implicit = integrator in IMPLICIT
    if implicit:
        from . import implicit as M
        adaptive = integrator == M.ADAPTIVE
    else:
        from . import adaptive as M
        tab = M.Tableau(integrator)
        adaptive = True
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
    out_y = np.zeros((times.size, ny))
    out_flows = np.zeros((times.size, 3))
    if system.does_work:
        if implicit:
            nodes = M.WORK_NODES
        else:
            from ..runtime import WORK_NODES
            nodes = WORK_NODES.get(integrator, 4)
        gx, gw = np.polynomial.legendre.leggauss(nodes)
        flows = np.zeros(3)
    else:
        gx, gw, flows = np.zeros(0), np.zeros(0), np.zeros(0)
    pw = np.zeros(3)
    step_t = np.zeros(MAX_ADAPTIVE_CHUNK)
    step_svr = np.zeros(MAX_ADAPTIVE_CHUNK)
    bad_y, bad_d = np.zeros(ny), np.zeros(ny)
    fpar = np.zeros(M.N_FPAR if implicit else 10)
    fpar[M.T_NOW], fpar[M.H_ABS], fpar[M.T_END] = 0.0, min(step, t_end), t_end
    fpar[M.RTOL] = max(rtol, 100 * np.finfo(float).eps)     # as scipy's validate_tol
    fpar[M.ATOL], fpar[M.STAB] = atol, LOOP_STABILISATION
    ipar = np.zeros(M.N_IPAR if implicit else 9, dtype=np.int64)
    ipar[M.NXT], ipar[M.NEED_F0], ipar[M.RESTAB] = 1, 1, 1 if system.cuts else 0
    if implicit:
        fpar[M.H_MAX] = step
        fpar[M.ETA] = 1.0
        ipar[M.IS_ADAPTIVE], ipar[M.NEED_J] = 1 if adaptive else 0, 1
        y_old, f_old, f2, z2, z3, c, ye, kd, dz, scale, est = (np.zeros(ny) for _ in range(11))
        Jm, LU = np.zeros((ny, ny)), np.zeros((ny, ny))
        piv = np.zeros(ny, dtype=np.int64)

        def advance(n):
            return M.trbdf2_chunk(y, f, y_old, f_old, f2, z2, z3, c, ye, kd, dz, scale, est, Jm,
                                  LU, piv, P.ops, P.args, P.consts, P.start, P.stack, len(fns),
                                  drv, mags, T, F, W, times, out_y, out_flows, gx, gw, flows,
                                  pw, step_t, step_svr, T.quat, fpar, ipar, bad_y, bad_d, n)
    else:
        y_old, y_new, ye, kd = (np.zeros(ny) for _ in range(4))
        Kst = np.zeros((tab.rows, ny))
        Q = np.zeros((ny, 4)) if tab.kind == 0 else np.zeros((7, ny))

        def advance(n):
            return M.rk_chunk(tab.kind, tab.stages, tab.A, tab.B, tab.C, tab.E, tab.E3, tab.P,
                              tab.exponent, y, f, y_old, y_new, ye, kd, Kst, Q,
                              P.ops, P.args, P.consts, P.start, P.stack, len(fns), drv, mags,
                              T, F, W, times, out_y, out_flows, gx, gw, flows, pw, step_t,
                              step_svr, T.quat, fpar, ipar, bad_y, bad_d, n)
    stall = StallDetector(system.model, integrator, t_end)
    chunk, last, done_rows, span = 16, 0.0, 1, PROGRESS_STEP
    t = 0.0
    while ny > 0:                   # (the explicit ones are not run without a state)
        if cancel():
            raise Cancelled("the run was cancelled")
        t_prev = fpar[M.T_NOW]
        fpar[M.T_STOP] = t_prev + span * t_end          # back for progress and cancel
        wall = _time.perf_counter()
        status = advance(chunk)
        dt = _time.perf_counter() - wall
        n = int(ipar[M.CHUNK_STEPS])
        t = float(fpar[M.T_NOW])
        if status == M.TIME_FUNCTION:
            t_err = float(fpar[M.ERR_T])
            system.driver_values(t_err)            # raises the EvaluationError that names it
            system.magnitude_values(t_err)
            raise SimulationError(f"{integrator}: a driver or force magnitude is not finite "
                                  f"at t = {t_err:.9g} s")
        if status == M.NOT_FINITE:
            hinge, body, others = blown_up(system, float(fpar[M.T_OLD]), y_old, y)
            raise not_finite(system.model, t, hinge, body, others, integrator,
                             step if implicit else None, fixed=not adaptive)
        if status == M.TOO_SMALL or (implicit and status == M.NO_CONVERGENCE):
            why = (M.TOO_SMALL_STEP if status == M.TOO_SMALL else
                   "Newton's iteration does not converge even at the smallest step "
                   f"({fpar[M.H_ABS]:.3g} s)")
            if ipar[M.HAS_BAD]:
                raise _rates_not_finite(system, integrator, (float(fpar[M.BAD_T]), bad_y.copy(),
                                                             bad_d.copy()), why)
            element, field, advice = stiffness_advice(system.model, integrator, step,
                                                      not adaptive)
            raise RunError(element, field, f"{integrator} failed at t = {t:.6g} s: {why}; "
                                           f"{advice}")
        stall.steps(step_t[:n])
        if monitor is not None and n:
            monitor.series(step_t[:n].copy(), step_svr[:n].copy())
        nxt = int(ipar[M.NXT])
        if nxt - done_rows >= 256 or (status == M.FINISHED and nxt > done_rows):
            rows.add_many(rec, times[done_rows:nxt], out_y[done_rows:nxt],
                          out_flows[done_rows:nxt])
            done_rows = nxt
        if status == M.FINISHED:
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
    if ny == 0:                     # nothing moves: the rows of the start
        for k in range(1, times.size):
            rows.add(rec, float(times[k]), y0, np.zeros(3))
        done_rows = times.size
    if done_rows < times.size:
        raise SimulationError(f"{integrator} stopped at t = {t:g} s before the end")
    progress(1.0)
    t_rows, states, data = rows.done(rec.names)
    info = dict(steps=int(ipar[M.STEPS]), evaluations=int(ipar[M.NFEV]), compiled=True)
    if implicit:
        info.update(jacobians=int(ipar[M.NJAC]), factorisations=int(ipar[M.NLU]),
                    rejected_steps=int(ipar[M.NREJECT]), newton_failures=int(ipar[M.NFAIL]))
    if system.does_work:
        info["power_evaluations"] = int(ipar[M.NPOWER])
    return t_rows, states, data, info


def _rates_not_finite(system, integrator, bad, why) -> RunError:
    """The :class:`RunError` of an adaptive run that failed (``why``: the integrator's message
    or exception) after an evaluation ``bad = (t, y, dy/dt)`` whose derivative was not finite
    at a finite state: the hinge whose rates or accelerations were not finite there."""
    t, y, d = bad
    hinge, body, others = blown_up(system, t, y, np.where(np.isfinite(d), y, np.nan))
    _, _, advice = stiffness_advice(system.model, integrator, None, False)
    if isinstance(why, BaseException):
        why = f"{type(why).__name__}: {first_line(why)}"
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
                                            f"{integrator}: {first_line(exc)})")
    element, field, advice = stiffness_advice(system.model, integrator, None, False)
    return RunError(element, field, f"{integrator} broke down at t = {t:.6g} s "
                                    f"({type(exc).__name__}: {first_line(exc)}); {advice}")
