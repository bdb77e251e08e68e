"""The result rows of the mstmm method with closed loops (:class:`LoopRecorder`), many at a
time, from the kernel's stacked instants."""

from __future__ import annotations

import numpy as np

from ...analysis.kinematics import local_motion_subspace
from ...elements.hinge_kinematics import CUT_ROT, CUT_TRANS
from ...elements.hinges import HINGE_TYPES, QUATERNION_TYPES, TYPE_CODES
from ...maths.rows import _cross, _mat_mat, _mat_vec, _matT_mat, _matT_vec, cos_sin_rows
from ...results.recorder import _bryant_raw, continue_bryant_rows
from ..shared.cut_rows import (CutHingeRecorder, _continue, _quaternions_of_bryant, _rows_times,
                               _bryant_many, _wrap)

__all__ = ["LoopRecorder"]


class LoopRecorder(CutHingeRecorder):
    """Result rows of the mstmm method for closed loops, many at a time (:meth:`rows`).

    The columns are those of :class:`~..shared.cut_rows.CutHingeRecorder`; the cut hinges' are computed from
    the mstmm kernel's stacked instants (:meth:`.system.System.instants`): coordinates fitted
    to the markers' relative pose (as :func:`.kinematics.coordinates_from_pose`), rates and
    accelerations from the markers' relative twist and acceleration, reactions from the cut
    loads (``Wcut``), closure errors from the kernel's position and velocity residuals.
    Also collects, over all rows, the loops' rank (:attr:`ranks`) and largest closure residual
    (:attr:`max_gap`).
    """

    def __init__(self, system):
        super().__init__(system, system)
        self.ranks = []
        self.max_gap = 0.0
        self._cut_geometry = []
        model = system.model
        for spec in self.cut_specs:
            h = model.hinge(spec["name"])
            kind = HINGE_TYPES[h.type]
            rot = [i for i, r in enumerate(("rx", "ry", "rz")) if r in kind.coordinates]
            lacking = [i for i in range(3) if i not in rot]
            code = TYPE_CODES[h.type]
            nrot = bin(int(CUT_ROT[code])).count("1")
            ntr = bin(int(CUT_TRANS[code])).count("1")
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
