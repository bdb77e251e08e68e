"""Result rows from a formulation's instants: :class:`Recorder` turns the states of a run's output
times into the columns of :class:`.table.Results` (names in :mod:`..model.columns`), many rows at
once, vectorised; helpers for continuous Bryant angles and batched 3x3 algebra.
"""

from __future__ import annotations

import numpy as np

from ..elements import forces
from ..elements.couplers import coefficients as coupler_coefficients
from ..elements.couplers import quantities as coupler_quantities
from ..elements.forces import contact, stop
from ..elements.hinges import COORDINATE_KIND, HINGE_TYPES, QUATERNION_TYPES, SIX_DOF_TYPES
from ..model.columns import BODY_COLUMNS, CONTACT_COLUMNS, ENERGY_COLUMNS, hinge_quantities
from ..maths.rows import _mat_vec, _matT_vec, _mat_mat, _cross, _quat_matrices, _rotvec


def _bryant_raw(R) -> np.ndarray:
    """Bryant angles of rotation matrices (k, 3, 3) -> (k, 3), b in [-pi/2, pi/2] (compiled,
    one matrix at a time: the same numbers however many are converted at once)."""
    from ..maths.rows import bryant_rows
    return bryant_rows(np.ascontiguousarray(R, dtype=float), False)


def continue_bryant(raw, prev=None) -> np.ndarray:
    """Bryant angles (k, 3) on the branch nearest to ``prev`` (k, 3): continuous over time.

    A rotation has two Bryant triples, ``(a, b, c)`` and ``(a + pi, pi - b, c + pi)``, each up to
    whole turns; the one closest to the previous sample is taken. Without ``prev`` (the first
    sample) the triple with the smaller ``|a| + |c|`` is taken, a and c in [-pi, pi].
    """
    raw = np.asarray(raw, dtype=float)
    two_pi = 2.0 * np.pi
    alt = raw + np.pi
    alt[:, 1] = np.pi - raw[:, 1]
    if prev is None:
        # the start: the triple with the smaller first and third angles (a rotation about y by
        # more than pi/2 starts as (0, b, 0), not (pi, pi - b, pi))
        alt[:, 0::2] -= two_pi * np.round(alt[:, 0::2] / two_pi)
        out = raw.copy()
        pick = (np.abs(alt[:, 0]) + np.abs(alt[:, 2])) < (np.abs(raw[:, 0]) + np.abs(raw[:, 2])
                                                          - 1e-9)
        out[pick] = alt[pick]
        return out
    c1 = raw + two_pi * np.round((prev - raw) / two_pi)
    c2 = alt + two_pi * np.round((prev - alt) / two_pi)
    pick = ((c2 - prev) ** 2).sum(axis=1) < ((c1 - prev) ** 2).sum(axis=1)
    c1[pick] = c2[pick]
    return c1


def continue_bryant_rows(raw, prev=None) -> np.ndarray:
    """:func:`continue_bryant` along a sequence: ``raw`` (k, N, 3) in time order, each row
    continued from the one before (the first from ``prev`` (N, 3), or started afresh)."""
    from ..maths.rows import continue_bryant_rows as compiled
    raw = np.ascontiguousarray(raw, dtype=float)
    if raw.shape[1] == 0:
        return raw.copy()
    start = prev is None
    return compiled(raw, raw[0] if start else np.ascontiguousarray(prev, dtype=float), start)


class Stacked:
    """Instants at k times, stacked (the fields of :class:`~.system.Instant` with a leading
    axis k); ``rank`` and ``svr`` (k,) the loops' rank and conditioning monitor."""

    def __init__(self, **fields):
        self.__dict__.update(fields)


def stack_instants(instants) -> Stacked:
    """:class:`Stacked` from a list of :class:`~.system.Instant` (any formulation's)."""
    first = instants[0]

    def st(name):
        vals = [getattr(i, name) for i in instants]
        if any(v is None for v in vals):
            return None
        return np.stack([np.asarray(v, dtype=float) for v in vals])

    out = Stacked(t=np.array([i.t for i in instants], dtype=float),
                  rank=np.array([i.loop_rank for i in instants]))
    for name in ("q", "u", "udot", "R", "pb", "pc", "hp", "w", "vh", "x", "Wh", "tau", "Wext",
                 "Wcut", "phi", "coupler_lam"):
        setattr(out, name, st(name) if hasattr(first, name) else None)
    return out


class Recorder:
    """Turns solver states into result rows (one :meth:`row` per output time).

    Parameters
    ----------
    system : System
        The assembled system; :meth:`row` calls ``system.instant(t, y)``. Another formulation
        passes an object with the same attributes: ``model``, ``index`` (body name -> row of the
        instant's body arrays), ``hinges`` (the hinges it reports; hinge ``i`` is row ``i`` of
        ``Wh``), ``tree`` (``qo uo nq nu sgn hk hc href hRref mass JCl`` as in
        :class:`~.system.System`), ``forces`` and ``instant(t, y)`` (see
        :class:`~.scheme.NewtonEuler`).
    """

    def __init__(self, system):
        self.system = system
        model, T = system.model, system.tree
        self._prev = None                       # previous Bryant angles (bodies + quat hinges)
        body_names = [b.name for b in model.bodies]
        self.body_order = np.array([system.index[b] for b in body_names], dtype=np.int64)
        self._in_order = bool(np.array_equal(self.body_order, np.arange(len(body_names))))
        names = ["time"]
        for b in body_names:
            names += [f"{b}.{q}" for q in BODY_COLUMNS]
        self.n_body_cols = len(BODY_COLUMNS)
        # tree hinges in model order
        tree_index = {h: i for i, h in enumerate(system.hinges)}
        body_set = set(body_names)
        self.hinge_specs = []
        hinge_prefixes = []
        for h in model.hinges:
            if h.name not in tree_index:
                continue                         # not in the tree (not handled by this solver)
            i = tree_index[h.name]
            prefix = f"hinge:{h.name}" if h.name in body_set else h.name
            kind = HINGE_TYPES[h.type]
            driven = [d.coordinate for d in h.drivers]
            qties = hinge_quantities(h.type, driven)
            names += [f"{prefix}.{q}" for q in qties]
            hinge_prefixes.append(prefix)
            drv = []
            for c in kind.coordinates:
                if c in driven:
                    j = kind.coordinates.index(c)
                    drv.append((int(T.uo[i] + j), int(T.qo[i] + j)))
            self.hinge_specs.append(dict(
                i=i, type=h.type, quat=h.type in QUATERNION_TYPES, qo=int(T.qo[i]), uo=int(T.uo[i]),
                nq=int(T.nq[i]), nu=int(T.nu[i]), sgn=float(T.sgn[i]), drv=drv,
                ntrans=3 if h.type in SIX_DOF_TYPES else 0, ncols=len(qties)))
        self.n_quat = sum(1 for s in self.hinge_specs if s["quat"])
        self._hinge_gather(1 + self.n_body_cols * len(body_names), len(system.hinges))
        self.stops = [(f"hinge:{h.name}" if h.name in body_set else h.name) + f".{c}{stop.SUFFIX}"
                      for h, c, _ in stop.stops_of(model.hinges)]
        names += self.stops
        # couplers: their loads on both coordinates and the position residual (from t = 0)
        self.couplers = []
        for c in getattr(model, "couplers", ()):
            a, bb = coupler_coefficients(c)
            qidx = []
            for ref in (c.first, c.second):
                i = tree_index[ref.hinge]
                qidx.append(int(T.qo[i]) + HINGE_TYPES[model.hinge(ref.hinge).type]
                            .coordinates.index(ref.coordinate))
            names += [f"{c.name}.{q}" for q in coupler_quantities(
                COORDINATE_KIND[c.first.coordinate], COORDINATE_KIND[c.second.coordinate])]
            self.couplers.append((qidx[0], qidx[1], a, bb))
        self._q0 = None
        self.contacts = [c.name for c in getattr(model, "contacts", ())]
        for c in self.contacts:
            names += [f"{c}.{q}" for q in CONTACT_COLUMNS]
        names += [f"energy.{q}" for q in ENERGY_COLUMNS]
        self.names = names
        self.bodies = body_names
        self.hinges = hinge_prefixes
        # energy data
        # (the hinges with a spring: a count of nonzero stiffnesses per hinge, at once)
        nonzero = np.concatenate([[0], np.cumsum(np.asarray(T.hk) != 0.0)])
        uo, nu = np.asarray(T.uo[:len(system.hinges)]), np.asarray(T.nu[:len(system.hinges)])
        self._springs = np.flatnonzero(nonzero[uo + nu] - nonzero[uo] > 0).tolist()

    def _hinge_gather(self, k, n_tree) -> None:
        """Where each hinge column comes from, as index arrays (from column ``k`` of a row on,
        the hinges' columns in :meth:`rows_of`'s order): the coordinates of hinges without a
        quaternion (``_q_to``, ``_q_from``), the rates, their derivatives and the reactions of
        every hinge (``_u_to``, ``_ud_to``, ``_u_from``; ``_W_to``, ``_W_from`` into the
        (n_tree * 6) reactions of a row, ``_W_sign``): :meth:`rows_of` copies them with one
        indexed copy each, row by row, not one column at a time (a column of a long row is a
        stride of a page or more per row)."""
        q_to, q_from, u_to, ud_to, u_from, W_to, W_from, W_sign = ([] for _ in range(8))
        for s in self.hinge_specs:
            s["k"] = k                                  # the hinge's first column
            if s["quat"]:
                k += s["ntrans"] + 7
            else:
                q_to += range(k, k + s["nq"])
                q_from += range(s["qo"], s["qo"] + s["nq"])
                k += s["nq"]
            n = s["nu"]
            u_to += range(k, k + n)
            ud_to += range(k + n, k + 2 * n)
            u_from += range(s["uo"], s["uo"] + n)
            k += 2 * n
            W_to += range(k, k + 6)                     # force (W[3:]) first, then moment
            W_from += [6 * s["i"] + j for j in (3, 4, 5, 0, 1, 2)]
            W_sign += [s["sgn"]] * 6
            k += 6
            s["k_drv"] = k
            k += len(s["drv"])
        as_index = lambda v: np.array(v, dtype=np.int64)      # noqa: E731
        self._q_to, self._q_from = as_index(q_to), as_index(q_from)
        self._u_to, self._ud_to, self._u_from = as_index(u_to), as_index(ud_to), as_index(u_from)
        self._W_to, self._W_from = as_index(W_to), as_index(W_from)
        self._W_sign = np.array(W_sign, dtype=float)
        self._n_tree = n_tree
        self._hinges_end = k

    def reset(self) -> None:
        """Forget the angle history (the next row starts the continuous branches afresh)."""
        self._prev = None

    # -- rows ---------------------------------------------------------------------------------
    def row(self, t: float, y: np.ndarray, instant=None, flows=None) -> np.ndarray:
        """The result row at (t, y).

        ``instant``: the :class:`~.system.Instant` at (t, y) when the caller has it already
        (another formulation); by default ``system.instant(t, y)``. ``flows``: the work of the
        drivers and of the applied forces and the dissipated energy since t = 0 (J; None:
        zeros). ``energy.residual`` is left 0: :func:`fill_residual` computes it from the whole
        run.
        """
        inst = self.system.instant(t, y) if instant is None else instant
        return self.rows_of(stack_instants([inst]),
                            None if flows is None else np.asarray(flows, float)[None])[0]

    def rows(self, times, states, flows=None, instants=None) -> np.ndarray:
        """The result rows (k, columns) at the times (k,) and states (k, ny), in time order
        (the angles continue from the previous rows): :meth:`.system.System.instants`
        evaluates them all in one compiled call, unless the caller has them (``instants``: a
        run's, ``kernels.rk4_run``). ``flows`` (k, 3) or None as in :meth:`row`."""
        b = self.system.instants(times, states) if instants is None else instants
        return self.rows_of(b, flows)

    def rows_of(self, b, flows=None) -> np.ndarray:
        """The result rows of the stacked instants ``b`` (:func:`stack_instants`,
        :meth:`.system.System.instants`), in time order."""
        T = self.system.tree
        k_rows = b.t.size
        out = np.empty((k_rows, len(self.names)))
        out[:, 0] = b.t
        R, pb, hp, w, vh, x = b.R, b.pb, b.hp, b.w, b.vh, b.x
        nb = R.shape[1]
        d = pb - hp
        v = vh + _cross(w, d)
        eps = x[..., :3]
        acc = x[..., 3:] + _cross(eps, d) + _cross(w, _cross(w, d))
        # Bryant angles: bodies, then the quaternion hinges
        raw = [_bryant_raw(R.reshape(-1, 3, 3)).reshape(k_rows, nb, 3)]
        qspecs = [s for s in self.hinge_specs if s["quat"]]
        if qspecs:
            quats = np.stack([b.q[:, s["qo"] + s["ntrans"]:s["qo"] + s["ntrans"] + 4]
                              for s in qspecs], axis=1)
            quats = quats / np.linalg.norm(quats, axis=2)[..., None]
            raw.append(_bryant_raw(_quat_matrices(quats.reshape(-1, 4))).reshape(k_rows, -1, 3))
        angles = continue_bryant_rows(np.concatenate(raw, axis=1), self._prev)
        self._prev = angles[-1].copy()
        # the bodies' columns, in model order, written into out (not made and copied: for many
        # bodies and rows the copies were most of a row's cost)
        nbm = len(self.body_order)
        k = 1 + self.n_body_cols * nbm
        cols = out[:, 1:k].reshape(k_rows, nbm, self.n_body_cols)     # a view into out
        parts = (pb, angles[:, :nb], R.reshape(k_rows, nb, 9), v, w, acc, eps)
        if self._in_order:
            np.concatenate(parts, axis=2, out=cols)
        else:
            np.take(np.concatenate(parts, axis=2), self.body_order, axis=1, out=cols)
        # hinges: the columns gathered by index arrays (_hinge_gather), then the quaternion
        # hinges' coordinates and the driven coordinates' loads one hinge at a time
        q, u, ud, tau, Wh = b.q, b.u, b.udot, b.tau, b.Wh
        if self.hinge_specs:
            out[:, self._q_to] = q[:, self._q_from]
            out[:, self._u_to] = u[:, self._u_from]
            out[:, self._ud_to] = ud[:, self._u_from]
            out[:, self._W_to] = (Wh.reshape(k_rows, self._n_tree * 6)[:, self._W_from]
                                  * self._W_sign)
        iq = 0
        for s in self.hinge_specs:
            if s["quat"]:
                k, qo, nt = s["k"], s["qo"], s["ntrans"]
                out[:, k:k + nt] = q[:, qo:qo + nt]
                out[:, k + nt:k + nt + 3] = angles[:, nb + iq]
                out[:, k + nt + 3:k + nt + 7] = quats[:, iq]
                iq += 1
            k = s["k_drv"]
            for j, jq in s["drv"]:
                # the hinge's total generalised load minus its own spring and damper
                out[:, k] = tau[:, j] + T.hk[j] * (q[:, jq] - T.href[j]) + T.hc[j] * u[:, j]
                k += 1
        k = self._hinges_end
        # stops, contacts
        if self.stops:
            ns = len(self.stops)
            stop.columns(self.system.forces.stop, np.ascontiguousarray(R), np.ascontiguousarray(pb),
                         np.ascontiguousarray(b.pc), np.ascontiguousarray(hp),
                         np.ascontiguousarray(w), np.ascontiguousarray(vh), out[:, k:k + ns])
            k += ns
        if self.couplers:
            if self._q0 is None:
                self._q0 = b.q[0].copy()            # the first row: t = 0
            for j, (i1, i2, a, bb) in enumerate(self.couplers):
                lam = b.coupler_lam[:, j]
                out[:, k] = a * lam
                out[:, k + 1] = bb * lam
                out[:, k + 2] = (a * (b.q[:, i1] - self._q0[i1])
                                 + bb * (b.q[:, i2] - self._q0[i2])) / bb
                k += 3
        if self.contacts:
            nc, ncol = len(self.contacts), len(CONTACT_COLUMNS)
            block = np.empty((k_rows, nc, ncol))
            contact.columns(self.system.forces.contact, np.ascontiguousarray(R), np.ascontiguousarray(pb),
                            np.ascontiguousarray(b.pc), np.ascontiguousarray(hp),
                            np.ascontiguousarray(w), np.ascontiguousarray(vh), block)
            out[:, k:k + nc * ncol] = block.reshape(k_rows, -1)
            k += nc * ncol
        # energies
        ek, eg, ee = self._energies(b)
        out[:, k] = ek
        out[:, k + 1] = eg
        out[:, k + 2] = ee
        out[:, k + 3] = eg + ee
        out[:, k + 4] = ek + eg + ee
        out[:, k + 5:k + 8] = 0.0 if flows is None else flows
        out[:, k + 8] = 0.0
        return out

    def _energies(self, b):
        """Kinetic, gravity and elastic energies (k,) of the stacked instants ``b``."""
        sys_ = self.system
        T, F = sys_.tree, sys_.forces
        R, w = b.R, b.w
        vc = b.vh + _cross(w, b.pc - b.hp)
        wb = _matT_vec(R, w)                                  # body axes
        Jw = _mat_vec(T.JCl, wb)
        ek = 0.5 * (np.sum(T.mass * np.sum(vc * vc, axis=2), axis=1)
                    + np.sum(np.sum(wb * Jw, axis=2), axis=1))
        g = F.gravity
        eg = -np.sum(T.mass * (b.pc[..., 0] * g[0] + b.pc[..., 1] * g[1] + b.pc[..., 2] * g[2]),
                     axis=1)
        ee = np.zeros(b.t.size)
        q = b.q
        for i in self._springs:
            o, n, qo = T.uo[i], T.nu[i], T.qo[i]
            k = T.hk[o:o + n]
            code_type = sys_.model.hinge(sys_.hinges[i]).type
            if code_type in QUATERNION_TYPES:
                nt = 3 if code_type != "spherical" else 0
                dq = q[:, qo:qo + nt] - T.href[o:o + nt]
                ee += 0.5 * np.sum(k[:nt] * dq * dq, axis=1)
                Rrel = _quat_matrices(q[:, qo + nt:qo + nt + 4])
                for r in range(b.t.size):
                    phi = _rotvec(Rrel[r] @ T.hRref[i].T)
                    ee[r] += 0.5 * float(np.sum(k[nt:] * phi * phi))
            else:
                dq = q[:, qo:qo + n] - T.href[o:o + n]
                ee += 0.5 * np.sum(k * dq * dq, axis=1)

        forces.add_potential(F, Attachments(R, b.pb), ee)
        return ek, eg, ee


class Attachments:
    """The global frame of a marker in every row: ``attachments(body, Rl, pl) -> (rotations
    (rows, 3, 3), origins (rows, 3))`` (body -1: the ground, ``Rl``, ``pl`` global), what the
    force laws' ``add_potential`` take; ``R`` (rows, n, 3, 3) and ``pb`` (rows, n, 3) are the
    stacked body arrays, for a law that computes many attachments in compiled code."""

    def __init__(self, R, pb):
        self.R, self.pb = R, pb

    def __call__(self, body, Rl, pl):
        R = self.R
        if body < 0:
            return np.broadcast_to(Rl, R.shape[:1] + (3, 3)), np.broadcast_to(pl, (R.shape[0], 3))
        return _mat_mat(R[:, body], Rl), self.pb[:, body] + _mat_vec(R[:, body], pl)
