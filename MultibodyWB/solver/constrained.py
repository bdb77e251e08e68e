"""The global reference formulation: absolute coordinates, Newton-Euler, Lagrange multipliers.

Every tree model can be solved two independent ways: the Riccati sweep of ``kernels`` (joint
coordinates, O(n)) and this dense saddle-point solve in absolute coordinates. This module shares
with :class:`~.system.System` only the model, the topology, the state layout ``y = [q; u]`` and the
time functions' values; body poses, velocities, applied loads, mass matrix, constraint equations,
velocity-product (bias) terms and the solution are all computed here, in plain numpy.

Conventions
-----------
All vectors in global axes, SI units. A wrench is ``[torque; force]``.

Unknowns
    Per body (``system.bodies`` order) ``X = [alpha; a_C]``: angular acceleration and acceleration
    of the mass centre; then the velocity-coordinate rates ``du`` of every tree hinge (the layout
    of ``system``'s ``u``).
Body equations (Newton-Euler about the mass centre)
    ``J_C alpha = T_C - w x J_C w + (constraint torques)``, ``m a_C = F + (constraint forces)``.
Hinge equations
    A hinge joins its output marker frame ``A`` (on part ``P_A``) to its input marker frame ``B``
    (on part ``P_B``); ``p`` is the origin of ``B``. The relative twist of ``B`` w.r.t. ``A``
    about ``p`` is ``S u`` (``S`` the hinge's motion subspace in global axes: the local one of
    :func:`hinge_local` turned by the rotation ``R_A`` of ``A``). With both bodies' material
    points at ``p`` (accelerations ``[alpha; a(p)]``) the acceleration-level condition is::

        [alpha_B - alpha_A; a_B(p) - a_A(p)] = S du + c
        c = [w_A x (R_A S_w u) + R_A (dS_w/dt) u;  2 w_A x (R_A S_v u)]

    (derivation: ``w_B - w_A = R_A S_w u`` and ``r_B - r_A = R_A d(q)``, ``d`` the marker offset in
    A's axes with ``d' = S_v u``; differentiate once more and take A's material point at ``p``, so
    that ``alpha_A x (R_A d) + w_A x (w_A x R_A d)`` cancel; the moving offset leaves the Coriolis
    term ``2 w_A x R_A d'``; ``dS_w/dt`` is non-zero only where a rotation axis moves with an
    earlier one, e.g. the universal hinge's second axis ``Rx(rx) e_y``). With ``a(p) = a_C +
    alpha x (p - C) + w x (w x (p - C))`` these are linear in the unknowns.
    The multiplier of the six rows is the wrench ``lam`` the hinge applies on ``P_B`` at ``p``
    (and ``-lam`` on ``P_A``, at the same point). The rows of ``du`` read ``0 = tau - S^T lam``
    (plus the driver's multiplier on a driven coordinate): the hinge's own springs and dampers
    ``tau`` (generalised, per velocity coordinate) act as the wrench pair of that component.
    Written this way, a hinge without coordinates in the state (a cut hinge) would enter with
    the rows ``C^T (...)`` only, ``C`` its constrained directions, and no ``du`` columns.
Drivers
    A driven coordinate adds the row ``du_j = d2q_j/dt2`` with multiplier ``mu`` (the generalised
    force of the driver's actuator, the hinge's own spring and damper excluded).

Velocity coordinates (``system``'s state layout): Bryant-angle and translation rates for the
scalar types; for spherical, free and bushing hinges the relative angular velocity of ``B``
w.r.t. ``A`` in ``A``'s axes and the rates of the translations along ``A``'s axes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .model import HINGE_TYPES
from .rotations import (bryant_to_matrix, inertia_vector_to_tensor, parallel_axis, rot_x, rot_y,
                        rotation_vector, skew)

_ROTATIONS = ("rx", "ry", "rz")
_TRANSLATIONS = ("x", "y", "z")
_QUATERNION_TYPES = ("spherical", "free", "bushing")
_E = np.eye(3)

__all__ = ["GlobalResult", "accelerations", "derivative", "hinge_local", "quaternion_to_matrix"]


# --------------------------------------------------------------------------------------------------
# One hinge, in its output marker frame
# --------------------------------------------------------------------------------------------------

def quaternion_to_matrix(qv) -> np.ndarray:
    """Rotation matrix (3, 3) of a quaternion (w, x, y, z), normalised first."""
    w, x, y, z = np.asarray(qv, dtype=float) / np.linalg.norm(qv)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _quaternion_rate(qv, omega) -> np.ndarray:
    """``dq/dt = 1/2 [0, omega] (x) q`` for a rotation whose angular velocity ``omega`` is given
    in the reference (here: output marker) frame."""
    w, v = qv[0], np.asarray(qv[1:])
    return 0.5 * np.concatenate([[-omega @ v], w * omega + np.cross(omega, v)])


def hinge_local(hinge_type: str, q, u):
    """Relative kinematics of a hinge in its output marker frame, from its state coordinates.

    Parameters
    ----------
    hinge_type : str
        A key of :data:`~.model.HINGE_TYPES`.
    q : array_like
        The hinge's position coordinates in the state layout (Bryant angles and translations; a
        quaternion (w, x, y, z) in place of the angles of spherical, free and bushing hinges).
    u : array_like
        The hinge's velocity coordinates in the state layout.

    Returns
    -------
    R : ndarray (3, 3)
        Rotation of the input marker frame relative to the output marker frame.
    d : ndarray (3,)
        Input marker origin in output-marker axes (m).
    S : ndarray (6, k)
        ``[omega_rel; d']`` per unit velocity coordinate (output-marker axes): the relative
        angular velocity and the rate of ``d``, i.e. the relative twist about the input marker's
        origin as seen from the output marker frame.
    Sdot_u : ndarray (6,)
        ``(dS/dt) u`` (only the rotation part can be non-zero).
    """
    kind = HINGE_TYPES[hinge_type]
    q = np.asarray(q, dtype=float).reshape(-1)
    u = np.asarray(u, dtype=float).reshape(-1)
    k = kind.dof
    S = np.zeros((6, k))
    Sdot_u = np.zeros(6)
    d = np.zeros(3)
    if hinge_type in _QUATERNION_TYPES:
        o = 0 if hinge_type == "spherical" else 3
        R = quaternion_to_matrix(q[o:o + 4])
        if o:
            d = q[:3].copy()
            S[3:, :3] = _E
        S[:3, o:o + 3] = _E
        return R, d, S, Sdot_u
    value = dict(zip(kind.coordinates, q))
    rate = dict(zip(kind.coordinates, u))
    a, b, c = (value.get(n, 0.0) for n in _ROTATIONS)
    Rx = rot_x(a)
    Rxy = Rx @ rot_y(b)
    R = bryant_to_matrix((a, b, c))
    # axes of the successive rotations and their time derivatives: the frame after Rx turns with
    # ua e_x, the frame after Rx Ry with ua e_x + ub Rx e_y (output-marker axes)
    axis = {"rx": _E[:, 0], "ry": Rx[:, 1], "rz": Rxy[:, 2]}
    w_x = rate.get("rx", 0.0) * _E[:, 0]
    w_xy = w_x + rate.get("ry", 0.0) * axis["ry"]
    axis_rate = {"rx": np.zeros(3), "ry": np.cross(w_x, axis["ry"]),
                 "rz": np.cross(w_xy, axis["rz"])}
    for j, n in enumerate(kind.coordinates):
        if n in _ROTATIONS:
            S[:3, j] = axis[n]
            Sdot_u[:3] += axis_rate[n] * u[j]
        else:
            i = _TRANSLATIONS.index(n)
            S[3 + i, j] = 1.0
            d[i] = q[j]
    return R, d, S, Sdot_u


# --------------------------------------------------------------------------------------------------
# Result
# --------------------------------------------------------------------------------------------------

@dataclass
class GlobalResult:
    """Everything the global formulation computes at one instant (global axes, SI units).

    Per body arrays follow ``system.bodies``; per hinge arrays ``system.hinges`` (hinge ``i`` is
    the tree hinge of body ``i``).

    Attributes
    ----------
    t : float
    q, u : ndarray (nq,), (nu,)
        Coordinates with the drivers applied.
    udot : ndarray (nu,)
        Velocity-coordinate rates (``system``'s ``u`` layout; driven ones prescribed).
    ydot : ndarray (nq + nu,)
        State derivative (quaternion rates from the relative angular velocities).
    R : (n, 3, 3) body rotations; pb, pc : (n, 3) base origins and mass centres (m)
    hp : (n, 3) hinge point of each body: the input marker origin of its tree hinge (m)
    w : (n, 3) angular velocities (rad/s); vc, vh : (n, 3) velocities of the mass centre and of
        the body's material point at ``hp`` (m/s)
    alpha, ac : (n, 3) angular acceleration (rad/s^2), acceleration of the mass centre (m/s^2)
    x : (n, 6) ``[alpha; a(hp)]``: angular acceleration and acceleration of the body's point at
        its hinge point (compare ``Instant.x``)
    Wh : (n, 6) wrench ``[torque (N m); force (N)]`` each tree hinge applies on its child body at
        the child's hinge point (compare ``Instant.Wh``)
    reaction_on_input : (n, 6) wrench each hinge applies on its own input body (the part holding
        its input marker) at the input marker's origin: the Lagrange multiplier
    reaction_on_output : (n, 6) wrench each hinge applies on its output part at the output
        marker's origin (``-reaction_on_input`` moved there)
    hinge_loads : (nu,) generalised load the hinge applies along each velocity coordinate,
        ``S^T reaction_on_input`` (N or N m): the springs' and dampers' ``tau``, and on a driven
        coordinate that plus the driver's (compare ``Instant.tau``)
    tau : (nu,) the hinges' own spring and damper loads (N or N m)
    driver_loads : (nd,) generalised force of each driver's actuator, ``system.drivers`` order
    Wext : (n, 6) applied wrench on each body at ``hp`` (gravity included; compare
        ``Instant.Wext``)
    FC, TC : (n, 3) applied force and torque about the mass centre
    """

    t: float
    q: np.ndarray
    u: np.ndarray
    udot: np.ndarray
    ydot: np.ndarray
    R: np.ndarray
    pb: np.ndarray
    pc: np.ndarray
    hp: np.ndarray
    w: np.ndarray
    vc: np.ndarray
    vh: np.ndarray
    alpha: np.ndarray
    ac: np.ndarray
    x: np.ndarray
    Wh: np.ndarray
    reaction_on_input: np.ndarray
    reaction_on_output: np.ndarray
    hinge_loads: np.ndarray
    tau: np.ndarray
    driver_loads: np.ndarray
    Wext: np.ndarray
    FC: np.ndarray
    TC: np.ndarray


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


def _marker_local(model, ref):
    m = model.part(ref.body).marker(ref.marker)
    return m.frame.rotation, m.frame.position


class _Bodies:
    """Poses, velocities and inertia of all bodies, computed from the tree coordinates."""

    def __init__(self, system, st: _State):
        model, T = system.model, system.tree
        n = len(system.bodies)
        self.index = {b: i for i, b in enumerate(system.bodies)}
        g = model.ground
        self.ground = (bryant_to_matrix(g.orientation), g.position.copy())
        self.R = np.zeros((n, 3, 3))
        self.pb = np.zeros((n, 3))
        self.pc = np.zeros((n, 3))
        self.w = np.zeros((n, 3))
        self.vc = np.zeros((n, 3))
        self.mass = np.zeros(n)
        self.JC = np.zeros((n, 3, 3))
        self.hinges: list[_HingeFrame] = []
        for i, (bname, hname) in enumerate(zip(system.bodies, system.hinges)):
            body = model.body(bname)
            h = model.hinge(hname)
            rev = system.topology.element(hname).reversed
            k = HINGE_TYPES[h.type].dof
            qi = st.q[T.qo[i]:T.qo[i] + T.nq[i]]
            ui = st.u[T.uo[i]:T.uo[i] + k]
            Rrel, d, S, Sdot_u = hinge_local(h.type, qi, ui)
            # parent: the part holding the output marker, or the input marker if reversed
            pref, cref = (h.input, h.output) if rev else (h.output, h.input)
            par = -1 if model.is_ground(pref.body) else self.index[pref.body]
            Rp, pp, wp, vp_of = self._part(par)
            Rml, pml = _marker_local(model, pref)
            Rpm, ppm = Rp @ Rml, pp + Rp @ pml                 # parent's marker
            if not rev:
                RA, pA = Rpm, ppm
                RB, pB = RA @ Rrel, pA + RA @ d
            else:
                RB, pB = Rpm, ppm
                RA = RB @ Rrel.T
                pA = pB - RA @ d
            Rcm, pcm = (RA, pA) if rev else (RB, pB)           # the child's marker
            Rml, pml = _marker_local(model, cref)
            self.R[i] = Rcm @ Rml.T
            self.pb[i] = pcm - self.R[i] @ pml
            rc = body.mass_center.position
            self.pc[i] = self.pb[i] + self.R[i] @ rc
            self.mass[i] = body.mass
            JCl = parallel_axis(inertia_vector_to_tensor(body.inertia), -body.mass, rc)
            self.JC[i] = self.R[i] @ JCl @ self.R[i].T
            # velocities: B relative to A about p = pB: omega_rel = RA S_w u, v_rel = RA S_v u
            Sg = np.zeros((6, k))
            Sg[:3], Sg[3:] = RA @ S[:3], RA @ S[3:]
            rel = Sg @ ui
            sgn = -1.0 if rev else 1.0
            self.w[i] = wp + sgn * rel[:3]
            v_child_p = vp_of(pB) + sgn * rel[3:]             # child's material point at pB
            self.vc[i] = v_child_p + np.cross(self.w[i], self.pc[i] - pB)
            wA = self.w[i] if rev else wp
            c = np.concatenate([np.cross(wA, rel[:3]) + RA @ Sdot_u[:3],
                                2.0 * np.cross(wA, rel[3:]) + RA @ Sdot_u[3:]])
            part_in, part_out = (par, i) if rev else (i, par)
            self.hinges.append(_HingeFrame(hname, h.type, part_in, part_out, RA, pA, pB, Sg, c,
                                           int(T.uo[i]), np.eye(6)))

    def _part(self, b):
        """(R, p, w, v(point)) of a body, or of the ground for -1."""
        if b < 0:
            R0, p0 = self.ground
            return R0, p0, np.zeros(3), lambda point: np.zeros(3)
        w, vc, pc = self.w[b].copy(), self.vc[b].copy(), self.pc[b].copy()
        return self.R[b], self.pb[b], w, lambda point: vc + np.cross(w, point - pc)

    def marker(self, model, ref):
        """(body index or -1, global R, global p, velocity of the point, angular velocity)."""
        Rl, pl = _marker_local(model, ref)
        b = -1 if model.is_ground(ref.body) else self.index[ref.body]
        R, p, w, v_of = self._part(b)
        pm = p + R @ pl
        return b, R @ Rl, pm, v_of(pm), w


# --------------------------------------------------------------------------------------------------
# Applied loads
# --------------------------------------------------------------------------------------------------

def _magnitude_slots(model):
    """Index into ``system.magnitude_values`` of each force's magnitude (None: zero)."""
    slots, k = [], 0
    for f in model.forces:
        if f.type in ("point_force", "point_torque", "spring_damper") and \
                f.magnitude.strip() not in ("", "0"):
            slots.append(k)
            k += 1
        else:
            slots.append(None)
    return slots


def _applied_loads(system, t, B: _Bodies):
    """Force (n, 3) and torque about the mass centre (n, 3) on every body, gravity included."""
    model = system.model
    n = len(system.bodies)
    FC = B.mass[:, None] * np.asarray(model.gravity, dtype=float)[None, :]
    TC = np.zeros((n, 3))

    def add(b, F, T, p):
        if b >= 0:
            FC[b] += F
            TC[b] += T + np.cross(p - B.pc[b], F)

    mags = system.magnitude_values(t)
    drawn = None
    for f, slot in zip(model.forces, _magnitude_slots(model)):
        mag = mags[slot] if slot is not None else 0.0
        if f.type in ("point_force", "point_torque"):
            b, Rm, pm, _, _ = B.marker(model, f.input)
            vec = mag * (Rm @ f.direction if f.frame == "marker" else np.asarray(f.direction))
            if f.type == "point_force":
                add(b, vec, np.zeros(3), pm)
            else:
                add(b, np.zeros(3), vec, pm)
        elif f.type == "spring_damper":
            bi, _, pi, vi, _ = B.marker(model, f.input)
            bo, _, po, vo, _ = B.marker(model, f.output)
            L0 = f.free_length
            if L0 is None:
                if drawn is None:
                    from .kinematics import drawn_poses, marker_pose
                    drawn = drawn_poses(model)
                L0 = float(np.linalg.norm(marker_pose(model, f.input, drawn).p
                                          - marker_pose(model, f.output, drawn).p))
            L = float(np.linalg.norm(pi - po))
            if L < 1e-12:
                continue
            e = (pi - po) / L
            tension = f.stiffness * (L - L0) + f.damping * float(e @ (vi - vo)) + mag
            add(bi, -tension * e, np.zeros(3), pi)
            add(bo, tension * e, np.zeros(3), po)
        elif f.type == "rotational_spring_damper":
            bi, Ri, pi, _, wi = B.marker(model, f.input)
            bo, Ro, po, _, wo = B.marker(model, f.output)
            phi = Ro @ rotation_vector(Ro.T @ Ri)
            torque = -(f.stiffness * phi + f.damping * (wi - wo))
            add(bi, np.zeros(3), torque, pi)
            add(bo, np.zeros(3), -torque, po)
    return FC, TC


def _hinge_spring_loads(system, st: _State):
    """The hinges' own spring and damper loads ``tau`` per velocity coordinate."""
    T = system.tree
    tau = np.zeros(system.nu_tot)
    for i, hname in enumerate(system.hinges):
        h = system.model.hinge(hname)
        k, c = h.vector("stiffness"), h.vector("damping")
        o = T.uo[i]
        nu = HINGE_TYPES[h.type].dof
        q = st.q[T.qo[i]:T.qo[i] + T.nq[i]]
        u = st.u[o:o + nu]
        ref = h.spring_reference
        if h.type in _QUATERNION_TYPES:
            r0 = 0 if h.type == "spherical" else 3
            if r0:
                ref_t = ref[:3] if ref is not None else np.zeros(3)
                tau[o:o + 3] = -k[:3] * (q[:3] - ref_t) - c[:3] * u[:3]
            Rref = bryant_to_matrix(ref[-3:]) if ref is not None else np.eye(3)
            phi = rotation_vector(quaternion_to_matrix(q[r0:r0 + 4]) @ Rref.T)
            tau[o + r0:o + r0 + 3] = -k[r0:] * phi - c[r0:] * u[r0:]
        else:
            ref = h.vector("spring_reference")
            tau[o:o + nu] = -k * (q - ref) - c * u
    return tau


# --------------------------------------------------------------------------------------------------
# The saddle-point system
# --------------------------------------------------------------------------------------------------

def _point_jacobian(r):
    """(6, 6) map from ``[alpha; a_C]`` to ``[alpha; a(p)]`` without the velocity terms,
    ``r = p - C``: ``a(p) = a_C + alpha x r + ...`` i.e. ``[[I, 0], [-~r, I]]``."""
    J = np.eye(6)
    J[3:, :3] = -skew(r)
    return J


def accelerations(system, t: float, y) -> GlobalResult:
    """Solve the dynamics at ``(t, y)`` in absolute coordinates (see the module docstring).

    Parameters
    ----------
    system : System
        The assembled tree model (its layout, topology and time functions are used).
    t : float
        Time (s).
    y : array_like (nq + nu,)
        State ``[q; u]`` in ``system``'s layout.

    Returns
    -------
    GlobalResult
    """
    model, T = system.model, system.tree
    st = _State(system, t, y)
    B = _Bodies(system, st)
    n, nu = len(system.bodies), system.nu_tot
    FC, TC = _applied_loads(system, t, B)
    tau = _hinge_spring_loads(system, st)

    nz = 6 * n + nu
    rows = []             # (row block (r, nz), rhs (r,))
    M = np.zeros((nz, nz))
    f = np.zeros(nz)
    for i in range(n):
        s = slice(6 * i, 6 * i + 6)
        M[s, s][:3, :3] = B.JC[i]
        M[s, s][3:, 3:] = B.mass[i] * _E
        f[s] = np.concatenate([TC[i] - np.cross(B.w[i], B.JC[i] @ B.w[i]), FC[i]])
    f[6 * n:] = tau

    def centripetal(b, p):
        if b < 0:
            return np.zeros(6)
        r = p - B.pc[b]
        return np.concatenate([np.zeros(3), np.cross(B.w[b], np.cross(B.w[b], r))])

    for hf in B.hinges:
        G = np.zeros((6, nz))
        if hf.part_in >= 0:
            G[:, 6 * hf.part_in:6 * hf.part_in + 6] += _point_jacobian(hf.p - B.pc[hf.part_in])
        if hf.part_out >= 0:
            G[:, 6 * hf.part_out:6 * hf.part_out + 6] -= _point_jacobian(
                hf.p - B.pc[hf.part_out])
        if hf.uo >= 0:
            G[:, 6 * n + hf.uo:6 * n + hf.uo + hf.S.shape[1]] = -hf.S
        b = hf.c - centripetal(hf.part_in, hf.p) + centripetal(hf.part_out, hf.p)
        rows.append((hf.P.T @ G, hf.P.T @ b))
    for j, _ in st.driven:
        G = np.zeros((1, nz))
        G[0, 6 * n + j] = 1.0
        rows.append((G, np.array([st.dd[j]])))
    G = np.vstack([g for g, _ in rows]) if rows else np.zeros((0, nz))
    b = np.concatenate([r for _, r in rows]) if rows else np.zeros(0)
    m = G.shape[0]
    # M z = f + G^T lam,  G z = b   ->   [[M, G^T], [G, 0]] [z; -lam] = [f; b]
    K = np.zeros((nz + m, nz + m))
    K[:nz, :nz] = M
    K[:nz, nz:] = G.T
    K[nz:, :nz] = G
    sol = np.linalg.solve(K, np.concatenate([f, b]))
    z, lam = sol[:nz], -sol[nz:]

    alpha = z[:6 * n].reshape(n, 6)[:, :3].copy()
    ac = z[:6 * n].reshape(n, 6)[:, 3:].copy()
    udot = z[6 * n:].copy()
    lam_h = np.zeros((n, 6))          # wrench on the input part at p: P times the multipliers
    r0 = 0
    for i, hf in enumerate(B.hinges):
        r = hf.P.shape[1]
        lam_h[i] = hf.P @ lam[r0:r0 + r]
        r0 += r
    driver_loads = np.zeros(len(system.drivers))
    for r, (_, kdrv) in enumerate(st.driven):
        driver_loads[kdrv] = lam[r0 + r]

    hp = np.array([hf.p for hf in B.hinges]).reshape(n, 3)
    x = np.zeros((n, 6))
    Wh = np.zeros((n, 6))
    vh = np.zeros((n, 3))
    react_out = np.zeros((n, 6))
    hinge_loads = np.zeros(nu)
    Wext = np.zeros((n, 6))
    for i, hf in enumerate(B.hinges):
        r = hp[i] - B.pc[i]
        x[i, :3] = alpha[i]
        x[i, 3:] = ac[i] + np.cross(alpha[i], r) + np.cross(B.w[i], np.cross(B.w[i], r))
        vh[i] = B.vc[i] + np.cross(B.w[i], r)
        Wh[i] = lam_h[i] if hf.part_in == i else -lam_h[i]
        Wext[i] = np.concatenate([TC[i] - np.cross(r, FC[i]), FC[i]])
        react_out[i, :3] = -lam_h[i, :3] - np.cross(hf.p - hf.pA, lam_h[i, 3:])
        react_out[i, 3:] = -lam_h[i, 3:]
        k = hf.S.shape[1]
        hinge_loads[hf.uo:hf.uo + k] = hf.S.T @ lam_h[i]

    ydot = np.zeros(system.nq_tot + nu)
    for i, hname in enumerate(system.hinges):
        typ = model.hinge(hname).type
        qo, uo, k = T.qo[i], T.uo[i], T.nu[i]
        ui = st.u[uo:uo + k]
        if typ in _QUATERNION_TYPES:
            o = 0 if typ == "spherical" else 3
            ydot[qo:qo + o] = ui[:o]
            ydot[qo + o:qo + o + 4] = _quaternion_rate(st.q[qo + o:qo + o + 4], ui[o:o + 3])
        else:
            ydot[qo:qo + k] = ui
    ydot[system.nq_tot:] = udot

    return GlobalResult(t=t, q=st.q, u=st.u, udot=udot, ydot=ydot, R=B.R, pb=B.pb, pc=B.pc,
                        hp=hp, w=B.w, vc=B.vc, vh=vh, alpha=alpha, ac=ac, x=x, Wh=Wh,
                        reaction_on_input=lam_h.copy(), reaction_on_output=react_out,
                        hinge_loads=hinge_loads, tau=tau, driver_loads=driver_loads, Wext=Wext,
                        FC=FC, TC=TC)


def derivative(system, t: float, y) -> np.ndarray:
    """State derivative ``dy/dt`` (nq + nu,) from the global formulation."""
    return accelerations(system, t, y).ydot
