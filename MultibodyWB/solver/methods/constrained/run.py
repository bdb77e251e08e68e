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
from ...elements.hinges import HINGE_TYPES, QUATERNION_TYPES, SIX_DOF_TYPES
from .partition import DriftControl, DriftError
from ...model.settings import FIXED_STEP
from ..mstmm import kernels as K
from ...analysis.kinematics import local_motion_subspace
from ...results.table import fill_residual
from ...results.recorder import Recorder, _bryant_raw, continue_bryant, continue_bryant_rows
from ...maths.rows import _cross, _mat_mat, _mat_vec, _matT_mat, _matT_vec
from ...model.columns import hinge_quantities
from ...maths.rotations import bryant_to_matrix
from ...maths.rows import bryant_rows, cos_sin_rows, quaternion_of_bryant_rows

__all__ = ["ConstrainedRecorder", "LoopRecorder", "initial_state", "run", "CLOSURE_QUANTITIES"]

#: Loop-closure columns of every cut hinge.
CLOSURE_QUANTITIES = ("closure_gap", "closure_angle", "closure_gap_rate", "closure_angle_rate")



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


def _bryant_to_quaternion(angles):
    from ...maths.rotations import bryant_to_quaternion
    return bryant_to_quaternion(angles)


def _wrap(a):
    return np.pi - np.mod(np.pi - a, 2.0 * np.pi)


class ConstrainedRecorder:
    """Result rows of the constrained method (see the module docstring).

    Parameters
    ----------
    system : System
    """

    def __init__(self, system, view=None):
        self.system = system
        self.view = view if view is not None else _View(system)
        self.base = Recorder(self.view)
        model = system.model
        base = self.base.names
        k0 = 1 + self.base.n_body_cols * len(self.base.bodies)
        blocks, k = {}, k0
        for spec, prefix in zip(self.base.hinge_specs, self.base.hinges):
            blocks[system.hinges[spec["i"]]] = list(range(k, k + spec["ncols"]))
            k += spec["ncols"]
        energy = list(range(k, len(base)))
        bodies = {b.name for b in model.bodies}
        names = list(base)
        self.cut_specs = []
        cut_set = set(system.topology.cut_hinges)
        order = list(range(k0))
        prefixes = []
        for h in model.hinges:
            prefix = f"hinge:{h.name}" if h.name in bodies else h.name
            if h.name in blocks:
                order += blocks[h.name]
                prefixes.append(prefix)
            elif h.name in cut_set:
                qties = hinge_quantities(h.type) + list(CLOSURE_QUANTITIES)
                start = len(names)
                names += [f"{prefix}.{q}" for q in qties]
                order += list(range(start, len(names)))
                prefixes.append(prefix)
                self.cut_specs.append(dict(
                    name=h.name, type=h.type, index=system.topology.cut_hinges.index(h.name),
                    quat=h.type in QUATERNION_TYPES, ntrans=3 if h.type in SIX_DOF_TYPES
                    else 0, nrows=HINGE_TYPES[h.type].constraints))
        order += energy
        self._order = np.array(order, dtype=np.int64)
        self.names = [names[i] for i in order]
        self.bodies = self.base.bodies
        self.hinges = prefixes
        self._n_extra = len(names) - len(base)
        self._prev = {}
        # rows of each cut hinge in the closure vector
        r0, self._rows = 0, {}
        for name in system.topology.cut_hinges:
            k = HINGE_TYPES[model.hinge(name).type].constraints
            self._rows[name] = (r0, r0 + k)
            r0 += k

    def reset(self) -> None:
        """Forget the angle histories."""
        self.base.reset()
        self._prev = {}

    def half_turn_warnings(self, data) -> list:
        """Warnings for the cut hinges whose springs passed half a turn from their reference
        in the result rows ``data`` (rows, columns in :attr:`names`): a cut hinge's spring
        measures its angles within (-180, 180] degrees of the reference
        (:mod:`...elements.forces.cut_spring`), so its torque reverses there, where a tree
        hinge's spring would wind up."""
        out = []
        model = self.system.model
        bodies = {b.name for b in model.bodies}
        for spec in self.cut_specs:
            h = model.hinge(spec["name"])
            if spec["quat"]:
                continue
            k, ref = h.vector("stiffness"), h.vector("spring_reference")
            prefix = f"hinge:{h.name}" if h.name in bodies else h.name
            for j, c in enumerate(h.kind.coordinates):
                if c not in ("rx", "ry", "rz") or k[j] == 0.0:
                    continue
                beyond = np.abs(data[:, self.names.index(f"{prefix}.{c}")] - ref[j]) > np.pi
                if beyond.any():
                    t = float(data[int(np.argmax(beyond)), 0])
                    out.append(
                        f"Hinge '{h.label or h.name}' closes a loop, and its spring's {c} passed "
                        f"half a turn from its reference at t = {t:.6g} s: the spring of the hinge "
                        "that closes a loop acts within half a turn (its torque reverses there, "
                        "where a spring on another hinge winds up); put the spring on another "
                        "hinge of the loop, or have another hinge close it (of the loop's "
                        "hinges with the fewest constraints, the last in the model closes it)")
        return out

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


def _bryant_many(R) -> np.ndarray:
    """Bryant angles (k, 3) of rotations (k, 3, 3), as :func:`.rotations.matrix_to_bryant`
    (compiled, one at a time: see ``maths.rows.bryant_rows``)."""
    return bryant_rows(np.ascontiguousarray(R, dtype=float), True)


def _rows_times(X, P) -> np.ndarray:
    """``X @ P.T`` for rows X (k, 6) and a small matrix P (j, 6), summed in a fixed order (the
    same for one row or many, see :func:`.rows._mat_vec`)."""
    out = np.zeros((X.shape[0], P.shape[0]))
    for j in range(P.shape[0]):
        for a in range(P.shape[1]):
            out[:, j] += X[:, a] * P[j, a]
    return out


def _quaternions_of_bryant(angles) -> np.ndarray:
    """Unit quaternions (k, 4) of Bryant angles (k, 3) (:func:`.rotations.bryant_to_quaternion`,
    compiled, one row at a time: see ``maths.rows.bryant_rows``)."""
    return quaternion_of_bryant_rows(np.ascontiguousarray(angles, dtype=float))


def _continue(raw, prev) -> np.ndarray:
    """Angles (k,) continued row by row, each the nearest to the one before up to whole turns,
    the first to ``prev`` (None: the first row stays as it is). The result is ``raw + 2 pi n``
    with whole n, so no round-off accumulates along the rows."""
    two_pi = 2.0 * np.pi
    n0 = 0.0 if prev is None else np.round((prev - raw[0]) / two_pi)
    n = np.cumsum(np.concatenate([[n0], np.round((raw[:-1] - raw[1:]) / two_pi)]))
    return raw + two_pi * n


class LoopRecorder(ConstrainedRecorder):
    """Result rows of the mstmm method for closed loops, many at a time (:meth:`rows`).

    The columns are those of :class:`ConstrainedRecorder`; the cut hinges' are computed from
    the mstmm kernel's stacked instants (:meth:`.system.System.instants`): coordinates fitted
    to the markers' relative pose (as :func:`.kinematics.coordinates_from_pose`), rates and
    accelerations from the markers' relative twist and acceleration, reactions from the cut
    loads (``Wcut``), closure errors from the kernel's position and velocity residuals.
    Also collects, over all rows, the loops' rank (:attr:`ranks`) and largest closure residual
    (:attr:`max_gap`).
    """

    def __init__(self, system):
        super().__init__(system, view=system)
        self.ranks = []
        self.max_gap = 0.0
        self._cut_geometry = []
        model = system.model
        for spec in self.cut_specs:
            h = model.hinge(spec["name"])
            kind = HINGE_TYPES[h.type]
            rot = [i for i, r in enumerate(("rx", "ry", "rz")) if r in kind.coordinates]
            lacking = [i for i in range(3) if i not in rot]
            code = K.TYPE_CODES[h.type]
            nrot = bin(int(K.CUT_ROT[code])).count("1")
            ntr = bin(int(K.CUT_TRANS[code])).count("1")
            S = (local_motion_subspace(h.type, np.zeros(kind.dof))
                 if h.type not in QUATERNION_TYPES else None)
            self._cut_geometry.append(dict(
                marker_in=system._marker(h.input), marker_out=system._marker(h.output),
                coords=kind.coordinates, rot=rot, lacking=lacking, nrot=nrot, ntrans=ntr,
                Spinv=None if S is None or h.type == "universal" else np.linalg.pinv(S)))

    def row(self, t: float, y, flows=None) -> np.ndarray:
        """The result row at (t, y) (:meth:`rows` of one)."""
        return self.rows(np.array([t]), np.asarray(y, float)[None],
                         None if flows is None else np.asarray(flows, float)[None])[0]

    def rows(self, times, states, flows=None, instants=None) -> np.ndarray:
        """The result rows at the times (k,) and states (k, ny), in time order (``instants``:
        their evaluations when the caller has them, see ``Recorder.rows``)."""
        b = self.system.instants(times, states) if instants is None else instants
        base = self.base.rows_of(b, flows)
        self.ranks += b.rank.tolist()
        if b.phi.size:
            self.max_gap = max(self.max_gap, float(np.abs(b.phi).max()))
        k_rows = b.t.size
        extra = np.empty((k_rows, self._n_extra))
        col = 0
        r0 = 0
        for spec, geo in zip(self.cut_specs, self._cut_geometry):
            vals = self._cut_columns(b, spec, geo, r0)
            r0 += geo["nrot"] + geo["ntrans"]
            for v in vals:
                v = v.reshape(k_rows, -1)
                extra[:, col:col + v.shape[1]] = v
                col += v.shape[1]
        return np.concatenate([base, extra], axis=1)[:, self._order]

    def _cut_columns(self, b, spec, geo, r0):
        """The columns of one cut hinge over the stacked instants ``b``: a list of (k, j)
        blocks in column order."""
        c = spec["index"]
        k_rows = b.t.size

        def frame(marker):
            body, Rl, pl = marker
            if body < 0:
                z = np.zeros((k_rows, 3))
                return (np.broadcast_to(Rl, (k_rows, 3, 3)), np.broadcast_to(pl, (k_rows, 3)),
                        z, z, z, body)
            R = b.R[:, body]
            return (_mat_mat(R, Rl), b.pb[:, body] + _mat_vec(R, pl), b.w[:, body], None, None,
                    body)

        RB, pB, wi, _, _, bi = frame(geo["marker_in"])
        RA, pA, wo, _, _, bo = frame(geo["marker_out"])

        def velocity(body, w):
            if body < 0:
                return np.zeros((k_rows, 3))
            return b.vh[:, body] + _cross(w, pB - b.hp[:, body])

        def acceleration(body):
            if body < 0:
                return np.zeros((k_rows, 6))
            r = pB - b.hp[:, body]
            w, x = b.w[:, body], b.x[:, body]
            return np.concatenate([x[:, :3], x[:, 3:] + _cross(x[:, :3], r)
                                   + _cross(w, _cross(w, r))], axis=1)

        def local(v):                    # global -> output-marker axes
            return _matT_vec(RA, v)

        Rrel = _matT_mat(RA, RB)
        d = local(pB - pA)
        rel_w = wi - wo
        rel_v = velocity(bi, wi) - velocity(bo, wo)
        xi = np.concatenate([local(rel_w), local(rel_v)], axis=1)
        dx = acceleration(bi) - acceleration(bo)
        dx[:, :3] -= _cross(wo, rel_w)
        dx[:, 3:] -= 2.0 * _cross(wo, rel_v)
        xid = np.concatenate([local(dx[:, :3]), local(dx[:, 3:])], axis=1)
        typ = spec["type"]
        name = spec["name"]
        prev = self._prev.get(name)
        if spec["quat"]:
            nt = spec["ntrans"]
            angles = continue_bryant_rows(_bryant_raw(Rrel)[:, None, :],
                                          None if prev is None else prev[0][None])[:, 0]
            quat = _quaternions_of_bryant(angles)
            ref = quat[0] if prev is None else prev[1]
            before = np.vstack([ref[None], quat[:-1]])
            sign = np.sign(quat[:, 0] * before[:, 0] + quat[:, 1] * before[:, 1]
                           + quat[:, 2] * before[:, 2] + quat[:, 3] * before[:, 3])
            sign[sign == 0] = 1.0
            quat = quat * np.cumprod(sign)[:, None]
            self._prev[name] = (angles[-1].copy(), quat[-1].copy())
            if typ == "spherical":
                u, ud = xi[:, :3], xid[:, :3]
            else:
                u = np.concatenate([xi[:, 3:], xi[:, :3]], axis=1)
                ud = np.concatenate([xid[:, 3:], xid[:, :3]], axis=1)
            vals = [d[:, :nt], angles, quat, u, ud]
        else:
            q = self._coordinates(Rrel, d, geo, prev)
            self._prev[name] = q[-1].copy()
            if typ == "universal":
                ca, sa = cos_sin_rows(np.ascontiguousarray(q[:, 0]))
                u = np.stack([xi[:, 0], xi[:, 1] * ca + xi[:, 2] * sa], axis=1)
                ab = u[:, 0] * u[:, 1]           # (dS/dt) u = a' b' (0, -sin a, cos a)
                ud = np.stack([xid[:, 0], (xid[:, 1] + sa * ab) * ca
                               + (xid[:, 2] - ca * ab) * sa], axis=1)
            else:
                u, ud = _rows_times(xi, geo["Spinv"]), _rows_times(xid, geo["Spinv"])
            vals = [q, u, ud]
        W = b.Wcut[:, c]
        phi = b.phi[:, r0:r0 + geo["nrot"] + geo["ntrans"]]
        vres = b.vres[:, r0:r0 + geo["nrot"] + geo["ntrans"]]
        nr = geo["nrot"]
        closure = np.stack([np.linalg.norm(phi[:, nr:], axis=1), np.linalg.norm(phi[:, :nr], axis=1),
                            np.linalg.norm(vres[:, nr:], axis=1),
                            np.linalg.norm(vres[:, :nr], axis=1)], axis=1)
        return vals + [W[:, 3:], W[:, :3], closure]

    @staticmethod
    def _coordinates(Rrel, d, geo, prev):
        """Coordinates (k, dof) of a hinge without a quaternion from the relative poses, as
        :func:`.kinematics.coordinates_from_pose` without a reference, then each angle
        continued from the row before (``prev``: the last row's coordinates, or None)."""
        best = _bryant_many(Rrel)
        other = _wrap(np.stack([best[:, 0] + np.pi, np.pi - best[:, 1], best[:, 2] + np.pi],
                               axis=1))
        lack = geo["lacking"]
        if lack:
            lb = np.linalg.norm(_wrap(best[:, lack]), axis=1)
            lo = np.linalg.norm(_wrap(other[:, lack]), axis=1)
            pick = lo < lb - 1e-9
            best = np.where(pick[:, None], other, best)
        q = np.empty((Rrel.shape[0], len(geo["coords"])))
        for j, name in enumerate(geo["coords"]):
            if name in ("rx", "ry", "rz"):
                q[:, j] = _continue(_wrap(best[:, "xyz".index(name[1])]),
                                    None if prev is None else prev[j])
            else:
                q[:, j] = d[:, "xyz".index(name)]
        return q


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
    the second the tree's kinematics (:func:`.kernels._state_rate`) of ``h udot``."""
    T, nq = system.tree, system.nq_tot
    du = np.ascontiguousarray(h * ydot[nq:])
    extra = np.empty(y.size)
    K._state_rate(np.ascontiguousarray(y[:nq]), du, du, T.code, T.qo, T.uo, T.nq, T.nu,
                  T.nq_tot, extra)
    out = y + h * ydot
    out[:nq] += h * extra[:nq]
    return out


def run(model, integrator="rk4", t_end=1.0, step=1e-3, output_step=1e-2, rtol=1e-8, atol=1e-10,
        progress=None, cancel=None):
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
    system = tree_system(model)
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

