"""The bodies in absolute coordinates from the tree's coordinates, and the loop-closure
constraints at an instant, in Python: what the constrained formulation solves with
(:mod:`..constrained.formulation`) and what mstmm's run reads the loops' rank from at a singular
configuration (:func:`loop_constraints`).

:class:`_Bodies` walks the tree (:func:`hinge_local`: the compiled kinematics of every hinge
type, :mod:`...elements.hinge_kinematics`) and gives every body's pose, velocities and inertia
and every tree hinge's global motion subspace and bias; :func:`_cut_frames` the cut hinges at
the instant (their constrained directions, fitted coordinates, closure residual);
:func:`loop_constraints` the residual and its Jacobian in the state's velocity coordinates.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from ...analysis.kinematics import (constrained_directions, coordinates_from_pose, length_scale,
                                    local_motion_subspace)
from ...elements.hinge_kinematics import local
from ...elements.hinges import HINGE_TYPES, QUATERNION_TYPES, SIX_DOF_TYPES
from ...maths.rotations import bryant_to_matrix, inertia_vector_to_tensor, parallel_axis, skew

_TRANSLATIONS = ("x", "y", "z")

__all__ = ["LoopConstraints", "hinge_local", "loop_constraints"]


# --------------------------------------------------------------------------------------------------
# One hinge, in its output marker frame
# --------------------------------------------------------------------------------------------------

def _cross(a, b) -> np.ndarray:
    """Cross product of two 3-vectors (``numpy.cross`` costs far more on single vectors)."""
    a0, a1, a2 = a
    b0, b1, b2 = b
    return np.array([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])


#: Relative kinematics of a hinge in its output marker frame from its state coordinates: the
#: compiled kinematics every method uses (``(R, d, S, (dS/dt) u)``, see its docstring).
hinge_local = local


# --------------------------------------------------------------------------------------------------
# Kinematics in absolute coordinates
# --------------------------------------------------------------------------------------------------

@dataclass
class _HingeFrame:
    """A hinge's markers at the instant: what the constraint rows need."""

    name: str
    type: str
    part_in: int          # body index of the input part, -1 for the ground
    part_out: int         # body index of the output part, -1 for the ground
    RA: np.ndarray        # rotation of the output marker frame
    pA: np.ndarray        # output marker origin
    p: np.ndarray         # input marker origin: the point of the constraint
    S: np.ndarray         # (6, k) global motion subspace about p
    c: np.ndarray         # (6,) bias: velocity-product terms of the relative acceleration
    uo: int               # offset of its velocity coordinates, -1: none (cut hinge)
    P: np.ndarray = None  # (6, r) directions of its rows: I6 for a tree hinge (du unknowns);
    #                       a cut hinge would take its constrained directions, C^T S = 0


class _State:
    """Coordinates with drivers applied, and the driven rows."""

    def __init__(self, system, t, y):
        T = system.tree
        y = np.asarray(y, dtype=float).reshape(-1)
        if y.size != system.nq_tot + system.nu_tot:
            raise ValueError(f"expected a state of {system.nq_tot + system.nu_tot}, got {y.size}")
        self.q = y[:system.nq_tot].copy()
        self.u = y[system.nq_tot:].copy()
        self.driven = []                 # (velocity index, driver index)
        self.dd = np.zeros(system.nu_tot)
        drv = system.driver_values(t)
        where = {h: i for i, h in enumerate(system.hinges)}
        for k, (hname, coord, _) in enumerate(system.drivers):
            i = where[hname]
            j = HINGE_TYPES[system.model.hinge(hname).type].coordinates.index(coord)
            self.q[T.qo[i] + j] = drv[k, 0]
            self.u[T.uo[i] + j] = drv[k, 1]
            self.dd[T.uo[i] + j] = drv[k, 2]
            self.driven.append((int(T.uo[i] + j), k))


_STATIC = weakref.WeakKeyDictionary()


class _Static:
    """What does not change with the state: marker frames, body inertia, the tree's and the cut
    hinges' parts and markers, hinge springs. Built once per system (whose own arrays are fixed
    when it is built, too)."""

    def __init__(self, system):
        model, T = system.model, system.tree
        self.index = {b: i for i, b in enumerate(system.bodies)}
        g = model.ground
        self.ground = (bryant_to_matrix(g.orientation), g.position.copy())
        self.markers = {}
        for part in list(model.grounds) + list(model.bodies):
            for m in part.markers:
                self.markers[(part.name, m.id)] = (m.frame.rotation, m.frame.position.copy())
        self.grounds = {gr.name for gr in model.grounds}
        self.tree = []
        for i, (bname, hname) in enumerate(zip(system.bodies, system.hinges)):
            body = model.body(bname)
            h = model.hinge(hname)
            rev = system.topology.element(hname).reversed
            pref, cref = (h.input, h.output) if rev else (h.output, h.input)
            par = -1 if pref.body in self.grounds else self.index[pref.body]
            rc = body.mass_center.position.copy()
            JCl = parallel_axis(inertia_vector_to_tensor(body.inertia), -body.mass, rc)
            self.tree.append((hname, h.type, rev, HINGE_TYPES[h.type].dof, int(T.qo[i]),
                              int(T.nq[i]), int(T.uo[i]), par,
                              *self.markers[(pref.body, pref.marker)],
                              *self.markers[(cref.body, cref.marker)],
                              float(body.mass), rc, JCl))
        self.cuts = []
        self.cut_constants = []      # (C, labels, S, pinv(S)) for types where they are constant
        for name in system.topology.cut_hinges:
            h = model.hinge(name)
            bi = -1 if h.input.body in self.grounds else self.index[h.input.body]
            bo = -1 if h.output.body in self.grounds else self.index[h.output.body]
            self.cuts.append((name, h.type, bi, bo, *self.markers[(h.output.body, h.output.marker)],
                              *self.markers[(h.input.body, h.input.marker)]))
            if h.type == "universal":
                self.cut_constants.append(None)
            else:
                q0 = np.zeros(HINGE_TYPES[h.type].dof)
                C, labels = constrained_directions(h.type, q0)
                S = local_motion_subspace(h.type, q0)
                self.cut_constants.append((C, labels, S, np.linalg.pinv(S) if S.size else S.T))
        self.springs = []
        for i, hname in enumerate(system.hinges):
            h = model.hinge(hname)
            k, c = h.vector("stiffness"), h.vector("damping")
            if np.any(k != 0) or np.any(c != 0):
                self.springs.append((i, h, k.copy(), c.copy()))


def _static(system) -> _Static:
    try:
        return _STATIC[system]
    except (KeyError, TypeError):
        pass
    out = _Static(system)
    try:
        _STATIC[system] = out
    except TypeError:
        pass
    return out


class _Bodies:
    """Poses, velocities and inertia of all bodies, computed from the tree coordinates."""

    def __init__(self, system, st: _State):
        S0 = self.static = _static(system)
        n = len(system.bodies)
        self.index = S0.index
        self.ground = S0.ground
        self.markers = S0.markers
        self.R = np.zeros((n, 3, 3))
        self.pb = np.zeros((n, 3))
        self.pc = np.zeros((n, 3))
        self.w = np.zeros((n, 3))
        self.vc = np.zeros((n, 3))
        self.mass = np.zeros(n)
        self.JC = np.zeros((n, 3, 3))
        self.hinges: list[_HingeFrame] = []
        eye6 = np.eye(6)
        for i, (hname, typ, rev, k, qo, nq, uo, par, Rml_p, pml_p, Rml_c, pml_c, mass, rc,
                JCl) in enumerate(S0.tree):
            qi = st.q[qo:qo + nq]
            ui = st.u[uo:uo + k]
            Rrel, d, S, Sdot_u = hinge_local(typ, qi, ui)
            # parent: the part holding the output marker, or the input marker if reversed
            Rp, pp, wp, vp_of = self._part(par)
            Rpm, ppm = Rp @ Rml_p, pp + Rp @ pml_p             # parent's marker
            if not rev:
                RA, pA = Rpm, ppm
                RB, pB = RA @ Rrel, pA + RA @ d
            else:
                RB, pB = Rpm, ppm
                RA = RB @ Rrel.T
                pA = pB - RA @ d
            Rcm, pcm = (RA, pA) if rev else (RB, pB)           # the child's marker
            R = self.R[i] = Rcm @ Rml_c.T
            self.pb[i] = pcm - R @ pml_c
            self.pc[i] = self.pb[i] + R @ rc
            self.mass[i] = mass
            self.JC[i] = R @ JCl @ R.T
            # velocities: B relative to A about p = pB: omega_rel = RA S_w u, v_rel = RA S_v u
            Sg = np.empty((6, k))
            Sg[:3], Sg[3:] = RA @ S[:3], RA @ S[3:]
            rel = Sg @ ui
            if rev:
                self.w[i] = wp - rel[:3]
                v_child_p = vp_of(pB) - rel[3:]               # child's material point at pB
            else:
                self.w[i] = wp + rel[:3]
                v_child_p = vp_of(pB) + rel[3:]
            self.vc[i] = v_child_p + _cross(self.w[i], self.pc[i] - pB)
            wA = self.w[i] if rev else wp
            c = np.empty(6)
            c[:3] = _cross(wA, rel[:3]) + RA @ Sdot_u[:3]
            c[3:] = 2.0 * _cross(wA, rel[3:]) + RA @ Sdot_u[3:]
            part_in, part_out = (par, i) if rev else (i, par)
            self.hinges.append(_HingeFrame(hname, typ, part_in, part_out, RA, pA, pB, Sg, c,
                                           uo, eye6))

    def _part(self, b):
        """(R, p, w, v(point)) of a body, or of the ground for -1."""
        if b < 0:
            R0, p0 = self.ground
            return R0, p0, np.zeros(3), lambda point: np.zeros(3)
        w, vc, pc = self.w[b].copy(), self.vc[b].copy(), self.pc[b].copy()
        return self.R[b], self.pb[b], w, lambda point: vc + _cross(w, point - pc)

    def marker(self, model, ref):
        """(body index or -1, global R, global p, velocity of the point, angular velocity)."""
        Rl, pl = self.markers[(ref.body, ref.marker)]
        b = -1 if ref.body in self.static.grounds else self.index[ref.body]
        R, p, w, v_of = self._part(b)
        pm = p + R @ pl
        return b, R @ Rl, pm, v_of(pm), w


# --------------------------------------------------------------------------------------------------
# Cut hinges (closed loops)
# --------------------------------------------------------------------------------------------------

@dataclass
class _CutFrame(_HingeFrame):
    """A cut hinge at the instant: its rows, closure residual and fitted coordinates."""

    labels: tuple = ()
    rot_rows: np.ndarray = None   # (r,) True where the row is a rotation (torque multiplier)
    q: np.ndarray = None          # fitted coordinates (Bryant angles, m)
    Sloc: np.ndarray = None       # (6, k) local motion subspace at q
    Sdot_u: np.ndarray = None     # (6,) (dS/dt) uc
    rel: np.ndarray = None        # (6,) relative twist [dw; dv], global, about p
    wA: np.ndarray = None         # angular velocity of the output part
    residual: np.ndarray = None   # (r,) closure residual C^T res (rad, m)
    u: np.ndarray = None          # rates, state convention


def _state_rates(hinge_type, Sloc, xi):
    """Rates in the state's convention from a relative twist ``xi`` (output-marker axes)."""
    if hinge_type == "spherical":
        return xi[:3].copy()
    if hinge_type in SIX_DOF_TYPES:
        return np.concatenate([xi[3:], xi[:3]])
    if Sloc.shape[1] == 0:
        return np.zeros(0)
    return np.linalg.lstsq(Sloc, xi, rcond=None)[0]


def _cut_frames(system, B: "_Bodies", fit: bool = True) -> list:
    """The cut hinges of ``system.topology`` at the instant.

    ``fit=False``: the fitted coordinates and the closure residual are left out (None) where
    the constrained directions do not depend on them (all types but the universal hinge).
    """
    out = []
    for (name, typ, bi, bo, RlO, plO, RlI, plI), const in zip(B.static.cuts,
                                                              B.static.cut_constants):
        Ri, pi, wi, vi_of = B._part(bi)
        Ro, po, wo, vo_of = B._part(bo)
        RA, pA = Ro @ RlO, po + Ro @ plO
        RB, p = Ri @ RlI, pi + Ri @ plI
        rel = np.concatenate([wi - wo, vi_of(p) - vo_of(p)])
        xi = np.concatenate([RA.T @ rel[:3], RA.T @ rel[3:]])
        if fit or const is None:
            qc, res = coordinates_from_pose(typ, RA.T @ RB, RA.T @ (p - pA))
        else:
            qc = res = None
        if const is None:
            C, labels = constrained_directions(typ, qc)
            Sloc = local_motion_subspace(typ, qc)
            uc = _state_rates(typ, Sloc, xi)
        else:
            C, labels, Sloc, Spinv = const
            uc = _state_rates(typ, Sloc, xi) if typ in QUATERNION_TYPES else Spinv @ xi
        if typ in QUATERNION_TYPES or typ != "universal":
            Sdot_u = np.zeros(6)          # constant constrained directions (C^T dS/dt = 0)
        else:
            Sdot_u = hinge_local(typ, qc, uc)[3]
        c = np.concatenate([_cross(wo, rel[:3]) + RA @ Sdot_u[:3],
                            2.0 * _cross(wo, rel[3:]) + RA @ Sdot_u[3:]])
        P = np.vstack([RA @ C[:3], RA @ C[3:]])
        Sg = np.vstack([RA @ Sloc[:3], RA @ Sloc[3:]])
        out.append(_CutFrame(name, typ, bi, bo, RA, pA, p, Sg, c, -1, P,
                             labels=tuple(f"{name}: {lab}" for lab in labels),
                             rot_rows=np.array([lab.startswith("rotation") for lab in labels],
                                               dtype=bool),
                             q=qc, Sloc=Sloc, Sdot_u=Sdot_u, rel=rel, wA=wo,
                             residual=None if res is None else C.T @ res, u=uc))
    return out


_SCALES = weakref.WeakKeyDictionary()


def _scales(system):
    """(L, translation flag per velocity coordinate (nu,)) of a system, computed once."""
    try:
        return _SCALES[system]
    except (KeyError, TypeError):
        pass
    trans = np.zeros(system.nu_tot, dtype=bool)
    for i, hname in enumerate(system.hinges):
        typ = system.model.hinge(hname).type
        o = system.tree.uo[i]
        if typ in SIX_DOF_TYPES:
            trans[o:o + 3] = True
        elif typ != "spherical":
            for j, c in enumerate(HINGE_TYPES[typ].coordinates):
                trans[o + j] = c in _TRANSLATIONS
    out = (length_scale(system.model), trans)
    try:
        _SCALES[system] = out
    except TypeError:
        pass
    return out


def _body_jacobians(system, B: "_Bodies"):
    """Angular velocity (n, 3, nu) and mass-centre velocity (n, 3, nu) Jacobians w.r.t. ``u``."""
    T = system.tree
    n, nu = len(system.bodies), system.nu_tot
    Jw = np.zeros((n, 3, nu))
    Jc = np.zeros((n, 3, nu))
    for i, hf in enumerate(B.hinges):
        par = T.parent[i]
        k = hf.S.shape[1]
        sgn = T.sgn[i]
        if par >= 0:
            Jw[i] = Jw[par]
            Jv = Jc[par] - skew(hf.p - B.pc[par]) @ Jw[par]
        else:
            Jv = np.zeros((3, nu))
        Jw[i][:, hf.uo:hf.uo + k] += sgn * hf.S[:3]
        Jv[:, hf.uo:hf.uo + k] += sgn * hf.S[3:]
        Jc[i] = Jv - skew(B.pc[i] - hf.p) @ Jw[i]
    return Jw, Jc


@dataclass
class LoopConstraints:
    """The loop-closure constraints at an instant, in the state's velocity coordinates.

    Attributes
    ----------
    residual : ndarray (m,)
        Position-level residual (:func:`~.kinematics.loop_residual`; rad and m).
    jacobian : ndarray (m, nu)
        ``jacobian @ u`` is the velocity-level residual (rad/s, m/s); columns: the state's
        velocity coordinates (for spherical, free and bushing hinges the relative angular
        velocity in output-marker axes). It is the derivative of ``residual`` along a change
        ``du dt`` of the coordinates where the residual is zero.
    rows : tuple of str
        ``'<cut hinge>: rotation about x'`` ...
    translation : ndarray (m,) of bool
        True for a translation row.
    length_scale : float
        The model's length scale (m), for making rows and columns dimensionless.
    translation_columns : ndarray (nu,) of bool
        True for a velocity coordinate that is a translation rate.
    """

    residual: np.ndarray
    jacobian: np.ndarray
    rows: tuple
    translation: np.ndarray
    length_scale: float
    translation_columns: np.ndarray

    def scaled(self):
        """(residual, jacobian) made dimensionless: translation rows divided by the length
        scale, translation columns multiplied by it."""
        L = self.length_scale
        rs = np.where(self.translation, 1.0 / L, 1.0)
        cs = np.where(self.translation_columns, L, 1.0)
        return rs * self.residual, rs[:, None] * self.jacobian * cs[None, :]


def loop_constraints(system, t: float, y) -> LoopConstraints:
    """The loop-closure residual and its Jacobian w.r.t. the state's velocity coordinates.

    Parameters
    ----------
    system : System
    t : float
        Time (s): the drivers' values are applied to the coordinates first.
    y : array_like (nq + nu,)

    Returns
    -------
    LoopConstraints
    """
    st = _State(system, t, y)
    B = _Bodies(system, st)
    return _loop_constraints(system, B, _cut_frames(system, B))


def _loop_constraints(system, B, cuts) -> LoopConstraints:
    L, trans_cols = _scales(system)
    nu = system.nu_tot
    if not cuts:
        return LoopConstraints(np.zeros(0), np.zeros((0, nu)), (), np.zeros(0, dtype=bool), L,
                               trans_cols)
    Jw, Jc = _body_jacobians(system, B)

    def twist(b, p):
        if b < 0:
            return np.zeros((6, nu))
        return np.vstack([Jw[b], Jc[b] - skew(p - B.pc[b]) @ Jw[b]])

    blocks, rows, trans = [], [], []
    for cf in cuts:
        blocks.append(cf.P.T @ (twist(cf.part_in, cf.p) - twist(cf.part_out, cf.p)))
        rows += list(cf.labels)
        trans += list(~cf.rot_rows)
    return LoopConstraints(np.concatenate([cf.residual for cf in cuts]), np.vstack(blocks),
                           tuple(rows), np.array(trans, dtype=bool), L, trans_cols)
