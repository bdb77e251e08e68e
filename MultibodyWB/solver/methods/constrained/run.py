"""The ``constrained`` method in time: any topology, trees and closed loops.

:func:`run` integrates the global formulation of :mod:`.constrained` (absolute coordinates,
Lagrange multipliers, the loop constraints imposed at the acceleration level) over the tree
coordinates, in the state layout of :mod:`.system` (so results line up with the ``mstmm``
method's), and keeps the loops closed:

1. Consistent initial conditions: :func:`~.assembly.assemble` corrects the hinges' initial
   coordinates and rates (the driven ones held at their drivers' values); what it changed is in
   ``meta['assembly']``.
2. Integration: ``rk4`` and ``euler`` (fixed step, here in Python; ``euler`` the semi-implicit
   Euler step of :func:`_euler_step`) project the state back onto the loop constraints after
   every step (:class:`~.partition.DriftControl`: coordinate partitioning,
   Newton on the positions, least squares on the velocities, a fresh choice of independent
   coordinates when the current one becomes ill-conditioned). The adaptive scipy integrators
   integrate one output interval at a time and the state is projected at its end (the integrator
   starts afresh from the projected state, with the last step size), so multistep methods never
   see a projected history.
3. Singular configurations met on the way and redundant constraints are reported in
   ``meta['warnings']`` (text), ``meta['singular_configurations']`` and
   ``meta['redundant_constraints']``.

Result columns: those of :class:`~.recorder.Recorder` for bodies, tree hinges and energies, with
the accelerations and reactions of this formulation; every cut hinge gets the columns of a hinge
of its type (coordinates fitted to its markers, rates, accelerations, reaction on its input body)
and its loop-closure errors ``closure_gap`` (m), ``closure_angle`` (rad) and their rates.
"""

from __future__ import annotations

import math
import time as _time
from dataclasses import fields

import numpy as np

from ...analysis.assembly import assembled_state
from .formulation import accelerations, tree_system
from ...analysis.kinematics import length_scale
from ...elements.hinge_kinematics import state_rate
from ...elements.hinges import HINGE_TYPES
from .partition import DriftControl, DriftError
from ...model.settings import FIXED_STEP
from ...results.table import fill_residual
from ...results.recorder import _bryant_raw, continue_bryant
from ...maths.rotations import bryant_to_matrix
from ..shared.cut_rows import CLOSURE_QUANTITIES, CutHingeRecorder, _bryant_to_quaternion, _wrap

__all__ = ["ConstrainedRecorder", "initial_state", "run", "CLOSURE_QUANTITIES"]

# --------------------------------------------------------------------------------------------------
# Result rows
# --------------------------------------------------------------------------------------------------

class _View:
    """A system whose ``instant`` is solved by the constrained formulation (for the Recorder)."""

    def __init__(self, system):
        self._system = system
        self.last = None

    def __getattr__(self, name):
        return getattr(self._system, name)

    def instant(self, t, y):
        from ..shared.instant import Instant
        res = accelerations(self._system, t, y)
        self.last = res
        have = dict(t=t, q=res.q, u=res.u, udot=res.udot, R=res.R, pb=res.pb, pc=res.pc,
                    hp=res.hp, w=res.w, vh=res.vh, x=res.x, Wh=res.Wh, tau=res.hinge_loads,
                    Wext=res.Wext, Wcut=res.cut_reaction_on_input, loop_rank=res.loop_rank,
                    phi=res.closure, coupler_lam=res.coupler_lam)
        return Instant(**{f.name: have.get(f.name) for f in fields(Instant)})

class ConstrainedRecorder(CutHingeRecorder):
    """Result rows of the constrained method (see the module docstring), one at a time, from
    the formulation's solution at the instant (:class:`_View`).

    Parameters
    ----------
    system : System
    view : optional
        Another view of the system than :class:`_View`.
    """

    def __init__(self, system, view=None):
        super().__init__(system, view if view is not None else _View(system))

    def row(self, t: float, y, flows=None) -> np.ndarray:
        """The result row at (t, y); ``flows`` as in :meth:`.recorder.Recorder.row`."""
        base = self.base.row(t, y, flows=flows)
        res = self.view.last
        extra = np.empty(self._n_extra)
        k = 0
        for spec in self.cut_specs:
            c = spec["index"]
            q, u, ud = res.cut_q[c], res.cut_u[c], res.cut_udot[c]
            W = res.cut_reaction_on_input[c]
            prev = self._prev.get(spec["name"])
            if spec["quat"]:
                nt = spec["ntrans"]
                raw = _bryant_raw(bryant_to_matrix(q[nt:])[None])
                angles = continue_bryant(raw, None if prev is None else prev[0][None])[0]
                quat = _bryant_to_quaternion(angles)
                if prev is not None and quat @ prev[1] < 0:
                    quat = -quat
                self._prev[spec["name"]] = (angles, quat)
                vals = [q[:nt], angles, quat, u, ud]
            else:
                qq = q.copy()
                if prev is not None:
                    kind = HINGE_TYPES[spec["type"]].kinds()
                    for j, kd in enumerate(kind):
                        if kd == "rotation":
                            qq[j] = prev[j] + _wrap(qq[j] - prev[j])
                self._prev[spec["name"]] = qq
                vals = [qq, u, ud]
            r0, r1 = self._rows[spec["name"]]
            rows = res.closure_rows[r0:r1]
            trans = np.array(["translation" in r for r in rows], dtype=bool)
            cl, clr = res.closure[r0:r1], res.closure_rate[r0:r1]
            vals += [W[3:], W[:3], [np.linalg.norm(cl[trans]), np.linalg.norm(cl[~trans]),
                                    np.linalg.norm(clr[trans]), np.linalg.norm(clr[~trans])]]
            flat = np.concatenate([np.asarray(v, dtype=float).reshape(-1) for v in vals])
            extra[k:k + flat.size] = flat
            k += flat.size
        return np.concatenate([base, extra])[self._order]


# --------------------------------------------------------------------------------------------------
# Initial state
# --------------------------------------------------------------------------------------------------

def initial_state(system):
    """The consistent state at t = 0 and the :class:`~.assembly.AssemblyReport` (None for a
    tree): :func:`~.assembly.assembled_state`."""
    return assembled_state(system)


# --------------------------------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------------------------------

class _Rows:
    def __init__(self):
        self.times, self.states, self.data = [], [], []

    def add(self, rec, t, y, flows=None):
        self.times.append(float(t))
        self.states.append(np.array(y, dtype=float))
        self.data.append(rec.row(t, y, flows=flows))


def _euler_step(system, y, ydot, h) -> np.ndarray:
    """The state after one semi-implicit (symplectic) Euler step of ``h`` from ``y`` with its
    rates ``ydot``: ``u + h udot``, then ``q + h qdot(q, u + h udot)`` (the new rates move the
    positions). The position rates are linear in the velocity coordinates at fixed ``q``
    (quaternion kinematics included), so ``qdot(q, u + h udot) = qdot(q, u) + qdot(q, h udot)``:
    the first term is ``ydot``'s own (with the drivers' values where they hold a coordinate),
    the second the tree's kinematics of ``h udot``
    (:func:`...elements.hinge_kinematics.state_rate`)."""
    T, nq = system.tree, system.nq_tot
    du = np.ascontiguousarray(h * ydot[nq:])
    extra = np.empty(y.size)
    state_rate(np.ascontiguousarray(y[:nq]), du, du, T.code, T.qo, T.uo, T.nq, T.nu, T.nq_tot,
               extra)
    out = y + h * ydot
    out[:nq] += h * extra[:nq]
    return out


def run(model, integrator="rk4", t_end=1.0, step=1e-3, output_step=1e-2, rtol=1e-8, atol=1e-10,
        progress=None, cancel=None, topology=None):
    """Simulate ``model`` with the constrained method.

    Parameters
    ----------
    model : MultibodySystem
        A valid model (any topology).
    integrator : str
        ``'rk4'``, ``'euler'`` or one of scipy's ``DOP853``, ``RK45``, ``Radau``, ``BDF``,
        ``LSODA``.
    t_end, step, output_step : float
        End time, fixed step (first step of the adaptive ones), output spacing (s); checked by
        the caller (``simulate``).
    rtol, atol : float
        Tolerances of the adaptive integrators.
    progress, cancel : callable, optional
        As in :func:`~.simulate.simulate`.
    topology : Topology, optional
        The model's, when the caller has it (analysed here otherwise).

    Returns
    -------
    names : list of str
    times : ndarray (k,)
    states : ndarray (k, ny)
    data : ndarray (k, len(names))
    info : dict
        ``steps``, ``evaluations``, ``ny``, ``bodies``, ``hinges``, ``warnings``, ``assembly``,
        ``redundant_constraints``, ``indeterminate_reactions``, ``singular_configurations``,
        ``repartitions``, ``loop_closure`` (JSON-serialisable).
    """
    from ..runtime import Cancelled, SimulationError, output_times
    progress = progress or (lambda f: None)
    cancel = cancel or (lambda: False)
    system = tree_system(model, topology)
    y0, report = initial_state(system)
    coupled = system.couple_initial_rates(y0) if model.couplers else []
    dc = DriftControl(system)

    def project(t, y):
        try:
            return dc.project(t, y)
        except DriftError as exc:
            raise SimulationError(str(exc)) from None

    y0 = project(0.0, y0)
    rec = ConstrainedRecorder(system)
    rows = _Rows()
    rows.add(rec, 0.0, y0, np.zeros(3))
    first = rec.view.last
    progress(0.0)
    evals = [0]
    track = system.does_work         # the energy balance's works (see results)
    flows = np.zeros(3)

    def f(t, y):
        evals[0] += 1
        return accelerations(system, t, y, details=False).ydot

    def f_power(t, y):
        """ydot and the power of drivers, forces and dampers (system.power_of)."""
        evals[0] += 1
        res = accelerations(system, t, y, details=False)
        return res.ydot, system.power_of(t, res.q, res.u, res.hinge_loads, res)

    def power(t, y):
        return f_power(t, y)[1]

    wall = [_time.perf_counter()]

    def tick(t):
        now = _time.perf_counter()
        if now - wall[0] > 0.1:
            wall[0] = now
            if cancel():
                raise Cancelled("the run was cancelled")
            if t < t_end:
                progress(t / t_end)

    steps = 0
    if integrator in FIXED_STEP:
        h = step
        r = int(round(output_step / h))
        n_full = int(math.floor(t_end / h * (1.0 + 1e-12) + 1e-9))
        tail = t_end - n_full * h
        if tail <= 1e-9 * max(t_end, h):
            tail = 0.0
        y = y0
        if cancel():
            raise Cancelled("the run was cancelled")
        for k in range(n_full + (1 if tail else 0)):
            t = k * h
            hk = h if k < n_full else tail
            if integrator == "euler":
                # the works to first order: the power at the step's start times the step
                if track:
                    k1, p1 = f_power(t, y)
                    flows = flows + hk * p1
                else:
                    k1 = f(t, y)
                y = _euler_step(system, y, k1, hk)
            else:
                if track:
                    # the works as extra states of the same RK4 scheme
                    k1, p1 = f_power(t, y)
                    k2, p2 = f_power(t + 0.5 * hk, y + 0.5 * hk * k1)
                    k3, p3 = f_power(t + 0.5 * hk, y + 0.5 * hk * k2)
                    k4, p4 = f_power(t + hk, y + hk * k3)
                    flows = flows + (hk / 6.0) * (p1 + 2.0 * p2 + 2.0 * p3 + p4)
                else:
                    k1 = f(t, y)
                    k2 = f(t + 0.5 * hk, y + 0.5 * hk * k1)
                    k3 = f(t + 0.5 * hk, y + 0.5 * hk * k2)
                    k4 = f(t + hk, y + hk * k3)
                y = y + (hk / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
            t_new = t_end if k == n_full else (k + 1) * h
            if not np.all(np.isfinite(y)):
                raise SimulationError(f"the state is not finite after t = {t_new:g} s; "
                                      "try a smaller step")
            y = project(t_new, y)
            steps += 1
            if k == n_full or (k + 1) % r == 0 or (k + 1 == n_full and not tail):
                rows.add(rec, t_new, y, flows)
            tick(t_new)
    else:
        import scipy.integrate as si

        from ..runtime import WorkQuadrature
        cls = getattr(si, integrator)
        times = output_times(t_end, output_step)
        y = y0
        h_next = min(step, t_end)
        work = WorkQuadrature(power, integrator) if track else None
        for k in range(1, times.size):
            t0, t1 = float(times[k - 1]), float(times[k])
            solver = cls(f, t0, y, t1, rtol=rtol, atol=atol, first_step=min(h_next, t1 - t0))
            while solver.status == "running":
                msg = solver.step()
                steps += 1
                if solver.status == "failed":
                    raise SimulationError(f"{integrator} failed at t = {solver.t:g} s: {msg}")
                if work is not None:
                    flows = work.add(solver.dense_output(), solver.t_old, solver.t)
                tick(solver.t)
            size = getattr(solver, "step_size", None)
            if size is not None and np.isfinite(size) and size > 0:
                h_next = float(size) if solver.t - t0 > 0.5 * (t1 - t0) else h_next
            y = project(t1, solver.y)
            rows.add(rec, t1, y, flows)
    dc.finish()
    progress(1.0)

    # what the run met
    warnings = []
    info = dict(steps=steps, evaluations=evals[0], ny=int(system.ny), bodies=rec.bodies,
                hinges=rec.hinges)
    if report is not None:
        info["assembly"] = str(report)
        if report.inconsistent:
            warnings.append("the initial coordinates or rates violated the loop constraints and "
                            "were corrected: " + report.corrections_text()
                            + " (the assembly's whole report is the run's 'initial state' message)")
        warnings += report.warnings
    if first.redundant:
        red = report.redundant if report is not None and report.redundant else first.redundant
        info["redundant_constraints"] = list(red)
        info["indeterminate_reactions"] = list(first.indeterminate)
        warnings.append(
            f"{len(red)} redundant constraint{'s' if len(red) > 1 else ''} ({', '.join(red)}): "
            "the motion is determinate, but the reactions of "
            f"{', '.join(first.indeterminate)} are not unique (the loops could hold any preload); "
            "those given are the smallest that keep the loops closed, without preload (as the "
            "mstmm method gives them)")
    info["singular_configurations"] = [
        dict(kind=s.kind, time=s.time, start=s.start, end=s.end, ratio=s.ratio)
        for s in dc.singularities]
    warnings += [str(s) for s in dc.singularities]
    warnings += coupled
    info["repartitions"] = [dict(time=t, independent=list(ind)) for t, ind in dc.repartitions]
    warnings += rec.half_turn_warnings(np.array(rows.data))
    if system.topology.cut_hinges:
        cl = np.array(rows.data)
        gap_cols = [i for i, n in enumerate(rec.names) if n.endswith(".closure_gap")]
        ang_cols = [i for i, n in enumerate(rec.names) if n.endswith(".closure_angle")]
        info["loop_closure"] = dict(
            max_gap=float(np.max(np.abs(cl[:, gap_cols]))) if gap_cols else 0.0,
            max_angle=float(np.max(np.abs(cl[:, ang_cols]))) if ang_cols else 0.0,
            max_drift_per_step=dc.max_correction, max_residual=dc.max_residual,
            max_rate_residual=dc.max_rate_residual, length_scale=length_scale(model),
            newton_iterations=dc.iterations,
            min_singular_value_ratio=dc.min_ratio if np.isfinite(dc.min_ratio) else None,
            min_singular_value_ratio_driven_held=(dc.min_ratio_free
                                                  if np.isfinite(dc.min_ratio_free) else None),
            cut_hinges=list(system.topology.cut_hinges))
    info["warnings"] = warnings
    data = np.array(rows.data)
    fill_residual(rec.names, data)
    return (rec.names, np.array(rows.times), np.array(rows.states), data, info)

