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
Cut hinges (closed loops)
    A cut hinge (``topology.cut_hinges``) has no coordinates in the state. It enters with the rows
    ``P^T (...)`` only, ``P = blockdiag(R_A, R_A) C`` its constrained directions in global axes
    (``C`` from :func:`~.kinematics.constrained_directions` at the coordinates fitted to its
    markers' relative pose; ``C^T S = 0``), no ``du`` columns. Its bias comes from the actual
    relative twist ``[dw; dv]`` (global, about ``p``) and the fitted coordinate rates ``uc``
    (least squares ``S uc = R_A^T [dw; dv]``)::

        P^T [alpha_B - alpha_A; a_B(p) - a_A(p)]
            = P^T [w_A x dw + R_A (dS/dt) uc;  2 w_A x dv]

    (derivation: the velocity condition is ``C^T xi = 0`` with ``xi = R_A^T [dw; dv]`` the
    relative twist in A's axes; ``d/dt xi = R_A^T ([alpha_B - alpha_A; a_B(p) - a_A(p)]
    - [w_A x dw; 2 w_A x dv])``, and ``C^T S == 0`` for every ``q`` gives ``(dC/dt)^T xi =
    -C^T (dS/dt) uc``; ``dS/dt`` is non-zero only for the universal hinge). The multipliers of
    these rows are the components, along ``P``, of the wrench the cut hinge applies on its input
    part at ``p``.
Redundant constraints
    The rows are made dimensionless (translation rows divided by a length scale ``L`` of the
    model, linear-acceleration and translation columns multiplied by it) and their rank is taken
    by QR with column pivoting of their transpose (relative tolerance :data:`RANK_RTOL`; the tree
    hinges' and drivers' rows, always independent, weighted so as to be taken first). When rows
    are dependent (a planar four-bar of revolute hinges in 3D), the accelerations are still
    unique (the mass matrix is positive definite on the constraints' null space): the
    saddle-point system is solved with the independent rows the QR picked (so the dependent ones
    named are cut-hinge rows, as :func:`~.kinematics.mobility` names them), and the multipliers
    are then replaced
    by those, among all that balance the same constraint forces ``G^T lam``, whose cut-hinge
    components have the least Euclidean norm (N and N m as they are: the definition of the
    ``mstmm`` loop solver's minimum-norm loads, so the two methods report the same reactions).
    Those reactions are not unique: :attr:`GlobalResult.indeterminate` names the hinges whose
    reactions the redundancy leaves undetermined.
Drivers
    A driven coordinate adds the row ``du_j = d2q_j/dt2`` with multiplier ``mu`` (the generalised
    force of the driver's actuator, the hinge's own spring and damper excluded). Cut hinges
    cannot be driven.

Velocity coordinates (``system``'s state layout): Bryant-angle and translation rates for the
scalar types; for spherical, free and bushing hinges the relative angular velocity of ``B``
w.r.t. ``A`` in ``A``'s axes and the rates of the translations along ``A``'s axes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from ...elements.forces import applied_loads, cut_spring
from ...elements.hinge_kinematics import state_rate
from ...elements.hinges import HINGE_TYPES, QUATERNION_TYPES
from ...maths.rotations import bryant_to_matrix, rotation_vector, skew
from ...maths.rotations import quaternion_to_matrix
from ...analysis.kinematics import length_scale
# the bodies in absolute coordinates and the loop constraints, shared with mstmm's run
from ..shared.loops import (LoopConstraints, _Bodies, _cross, _cut_frames, _scales, _State,
                            _state_rates, _static, hinge_local, loop_constraints,
                            _loop_constraints)
from ..shared.system import PreparedSystem

_E = np.eye(3)

#: Relative tolerance of the rank of the (dimensionless) constraint rows.
RANK_RTOL = 1e-8

__all__ = ["GlobalResult", "LoopConstraints", "RANK_RTOL", "accelerations", "derivative",
           "hinge_local", "length_scale", "loop_constraints", "quaternion_to_matrix", "tree_system"]


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
    cut_hinges : tuple of str
        The cut hinges (``topology.cut_hinges``); the ``cut_*`` arrays follow this order.
    cut_reaction_on_input, cut_reaction_on_output : (nc, 6)
        Wrench each cut hinge applies on its input part at the input marker's origin, and on its
        output part at the output marker's origin (global axes).
    cut_q : tuple of ndarray (k,)
        Each cut hinge's coordinates fitted to its markers' relative pose (Bryant angles, m).
    cut_u, cut_udot : tuple of ndarray (k,)
        Their rates and accelerations in the state's convention (:mod:`.system`): coordinate
        rates, or for spherical and free hinges the relative angular velocity (output-marker
        axes) and its rate. Least-squares fits of the relative twist and its rate.
    closure : (m,) loop-closure residual (:func:`~.kinematics.loop_residual`: rad, m)
    closure_rate : (m,) its velocity-level counterpart (rad/s, m/s)
    closure_rows : tuple of str
        Labels of the rows of ``closure``: ``'<cut hinge>: rotation about x'`` ...
    loop_rank : int
        Rank of the loop-closure Jacobian (:func:`loop_constraints`) at this instant.
    rank, rows : int
        Rank and number of the constraint rows (tree hinges, cut hinges, drivers).
    redundant : tuple of str
        Rows left out of the solve as dependent on the others (empty without redundancy); which
        rows of a dependent set are named is a choice (QR with column pivoting).
    indeterminate : tuple of str
        Hinges whose reactions the redundancy leaves undetermined (minimum-norm ones reported).
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
    cut_hinges: tuple = ()
    cut_reaction_on_input: np.ndarray = field(default_factory=lambda: np.zeros((0, 6)))
    cut_reaction_on_output: np.ndarray = field(default_factory=lambda: np.zeros((0, 6)))
    cut_q: tuple = ()
    cut_u: tuple = ()
    cut_udot: tuple = ()
    closure: np.ndarray = field(default_factory=lambda: np.zeros(0))
    closure_rate: np.ndarray = field(default_factory=lambda: np.zeros(0))
    closure_rows: tuple = ()
    loop_rank: int = 0
    rank: int = 0
    rows: int = 0
    redundant: tuple = ()
    indeterminate: tuple = ()
    #: (ncp,) the couplers' multipliers: loads ``a lam`` and ``b lam`` on their coordinates
    coupler_lam: np.ndarray = None


# --------------------------------------------------------------------------------------------------
# The system
# --------------------------------------------------------------------------------------------------

def tree_system(model, topology=None):
    """The prepared system of a model (:class:`..shared.system.PreparedSystem`; trees and
    closed loops): the state layout, the drivers' and forces' time functions this formulation
    uses."""
    return PreparedSystem(model, topology)


# --------------------------------------------------------------------------------------------------
# Applied loads
# --------------------------------------------------------------------------------------------------


def _applied_loads(system, t, B: _Bodies):
    """Force (n, 3) and torque about the mass centre (n, 3) on every body, gravity included: the
    force laws' compiled loads (:func:`...elements.forces.applied_loads`), the code every method
    calls, on this method's body arrays (the mass centres as the reference points)."""
    n = len(system.bodies)
    FC = np.empty((n, 3))
    TC = np.empty((n, 3))
    mags = system.magnitude_values(t)
    applied_loads(mags, system.forces, B.mass, B.R, B.pb, B.pc, B.pc, B.w, B.vc, FC, TC)
    return FC, TC


def _hinge_spring_loads(system, st: _State):
    """The hinges' own spring and damper loads ``tau`` per velocity coordinate."""
    T = system.tree
    tau = np.zeros(system.nu_tot)
    for i, h, k, c in _static(system).springs:
        o = T.uo[i]
        nu = HINGE_TYPES[h.type].dof
        q = st.q[T.qo[i]:T.qo[i] + T.nq[i]]
        u = st.u[o:o + nu]
        ref = h.spring_reference
        if h.type in QUATERNION_TYPES:
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

class _Solution:
    """What :func:`_core` computes: the state, bodies, cut hinges, accelerations, multipliers."""

    __slots__ = ("st", "B", "cuts", "FC", "TC", "tau", "z", "lam", "rank", "m", "redundant",
                 "indeterminate")


def _core(system, t, y, details=True) -> _Solution:
    """Build and solve the saddle-point system (module docstring) at ``(t, y)``."""
    st = _State(system, t, y)
    B = _Bodies(system, st)
    cuts = _cut_frames(system, B, fit=details)
    n, nu = len(system.bodies), system.nu_tot
    FC, TC = _applied_loads(system, t, B)
    tau = _hinge_spring_loads(system, st)
    L, trans_cols = _scales(system)

    nz = 6 * n + nu
    nd = len(st.driven)
    couplers = system.tree.loops
    ncp = couplers.cp_ab.shape[0]
    m = 6 * n + sum(cf.P.shape[1] for cf in cuts) + ncp + nd
    M = np.zeros((nz, nz))
    f = np.empty(nz)
    for i in range(n):
        o = 6 * i
        M[o:o + 3, o:o + 3] = B.JC[i]
        M[o + 3, o + 3] = M[o + 4, o + 4] = M[o + 5, o + 5] = B.mass[i]
        f[o:o + 3] = TC[i] - _cross(B.w[i], B.JC[i] @ B.w[i])
        f[o + 3:o + 6] = FC[i]
    f[6 * n:] = tau
    G = np.zeros((m, nz))
    b = np.empty(m)
    rot_rows = np.zeros(m, dtype=bool)

    def rows_of(hf, Gb):
        """Fill a (6, nz) block: body columns and the bias of hinge frame ``hf``. A body's
        columns map ``[alpha; a_C]`` to ``[alpha; a(p)]`` without the velocity terms
        (``[[I, 0], [-~r, I]]``, ``r = p - C``); those go to the bias."""
        bias = hf.c.copy()
        for part, sign in ((hf.part_in, 1.0), (hf.part_out, -1.0)):
            if part < 0:
                continue
            o = 6 * part
            r = hf.p - B.pc[part]
            Gb[0, o] += sign
            Gb[1, o + 1] += sign
            Gb[2, o + 2] += sign
            Gb[3:6, o + 3:o + 6] += sign * _E
            Gb[3:6, o:o + 3] -= sign * skew(r)
            bias[3:] -= sign * _cross(B.w[part], _cross(B.w[part], r))
        return bias

    for i, hf in enumerate(B.hinges):
        Gb = G[6 * i:6 * i + 6]
        b[6 * i:6 * i + 6] = rows_of(hf, Gb)
        Gb[:, 6 * n + hf.uo:6 * n + hf.uo + hf.S.shape[1]] = -hf.S
        rot_rows[6 * i:6 * i + 3] = True
    r0 = 6 * n
    for cf in cuts:
        Gb = np.zeros((6, nz))
        bias = rows_of(cf, Gb)
        r = cf.P.shape[1]
        G[r0:r0 + r] = cf.P.T @ Gb
        b[r0:r0 + r] = cf.P.T @ bias
        rot_rows[r0:r0 + r] = cf.rot_rows
        r0 += r
    # couplers: a du1 + b du2 = 0 (linear in the state: the integrators keep it exactly)
    for kc in range(ncp):
        for side in range(2):
            G[r0, 6 * n + couplers.cp_u[kc, side]] += couplers.cp_ab[kc, side]
        b[r0] = 0.0
        rot_rows[r0] = not trans_cols[couplers.cp_u[kc, 1]]
        r0 += 1
    for j, _ in st.driven:
        G[r0, 6 * n + j] = 1.0
        b[r0] = st.dd[j]
        rot_rows[r0] = not trans_cols[j]
        r0 += 1

    # rank of the dimensionless rows: QR with column pivoting of their transpose, the tree
    # hinges' and drivers' rows weighted up so that they are taken first
    Dr = np.where(rot_rows, 1.0, 1.0 / L)
    Dc = np.ones(nz)
    Dc[(6 * np.arange(n)[:, None] + np.arange(3, 6)[None, :]).ravel()] = L
    Dc[6 * n:] = np.where(trans_cols, L, 1.0)
    Gs = Dr[:, None] * G * Dc[None, :]
    weight = np.ones(m)
    weight[:6 * n] = 1e3
    if nd:
        weight[m - nd:] = 1e3
    Rq, piv = scipy.linalg.qr((weight[:, None] * Gs).T, mode="r", pivoting=True,
                              check_finite=False)
    diag = np.abs(np.diag(Rq))
    rank = int(np.sum(diag > RANK_RTOL * max(diag[0], 1e-300))) if m else 0
    keep = np.arange(m) if rank == m else np.sort(piv[:rank])
    Gk = G[keep]
    mk = keep.size
    # M z = f + G^T lam,  G z = b   ->   [[M, G^T], [G, 0]] [z; -lam] = [f; b]
    K = np.zeros((nz + mk, nz + mk))
    K[:nz, :nz] = M
    K[:nz, nz:] = Gk.T
    K[nz:, :nz] = Gk
    sol = scipy.linalg.lu_solve(scipy.linalg.lu_factor(K, check_finite=False),
                                np.concatenate([f, b[keep]]), check_finite=False)
    z = sol[:nz]
    lam = np.zeros(m)
    lam[keep] = -sol[nz:]
    redundant, indeterminate = (), ()
    if rank < m and details:
        # the minimum-norm multipliers balancing the same constraint forces G^T lam
        U, _, _ = np.linalg.svd(Gs)
        N = Dr[:, None] * U[:, rank:]             # null space of G^T
        cut_rows = slice(6 * n, m - nd)
        lam = lam - N @ np.linalg.lstsq(N[cut_rows], lam[cut_rows], rcond=None)[0]
        labels = []
        for hf in B.hinges:
            labels += [f"{hf.name}: {c}" for c in ("Tx", "Ty", "Tz", "Fx", "Fy", "Fz")]
        for cf in cuts:
            labels += list(cf.labels)
        labels += [f"{c.name}: coupler" for c in system.model.couplers]
        for j, k in st.driven:
            hname, coord, _ = system.drivers[k]
            labels.append(f"{hname}.{coord}: driver")
        redundant = tuple(labels[i] for i in sorted(set(range(m)) - set(keep.tolist())))
        loose = np.linalg.norm(N, axis=1) > 1e-6 * np.max(np.linalg.norm(N, axis=1))
        indeterminate = tuple(dict.fromkeys(
            lab.split(":")[0].rsplit(".", 1)[0] if lab.endswith(": driver")
            else lab.split(":")[0] for lab, lo in zip(labels, loose) if lo))
    out = _Solution()
    out.st, out.B, out.cuts, out.FC, out.TC, out.tau = st, B, cuts, FC, TC, tau
    out.z, out.lam, out.rank, out.m = z, lam, rank, m
    out.redundant, out.indeterminate = redundant, indeterminate
    return out


def _quaternion_rates(system, st, udot) -> np.ndarray:
    """The state derivative from the velocities and their rates (the hinges' coordinate rates:
    :func:`...elements.hinge_kinematics.state_rate`, as every method has them)."""
    ydot = np.empty(system.nq_tot + system.nu_tot)
    T = system.tree
    state_rate(np.ascontiguousarray(st.q, dtype=np.float64),
               np.ascontiguousarray(st.u, dtype=np.float64),
               np.ascontiguousarray(udot, dtype=np.float64), T.code, T.qo, T.uo, T.nq, T.nu,
               T.nq_tot, ydot)
    return ydot


def accelerations(system, t: float, y, details: bool = True) -> GlobalResult:
    """Solve the dynamics at ``(t, y)`` in absolute coordinates (see the module docstring).

    Parameters
    ----------
    system : System
        The assembled model (its layout, topology and time functions are used); the cut hinges
        of ``system.topology`` close loops.
    t : float
        Time (s).
    y : array_like (nq + nu,)
        State ``[q; u]`` in ``system``'s layout.
    details : bool
        False: skip what the state derivative does not need (the cut hinges' coordinate
        accelerations, the loop-closure residuals and rank, the indeterminate hinges).

    Returns
    -------
    GlobalResult
    """
    c = _core(system, t, y, details)
    st, B, cuts, z, lam = c.st, c.B, c.cuts, c.z, c.lam
    n, nu = len(system.bodies), system.nu_tot
    FC, TC, tau = c.FC, c.TC, c.tau
    rank, m, redundant, indeterminate = c.rank, c.m, c.redundant, c.indeterminate

    alpha = z[:6 * n].reshape(n, 6)[:, :3].copy()
    ac = z[:6 * n].reshape(n, 6)[:, 3:].copy()
    udot = z[6 * n:].copy()
    lam_h = np.zeros((n, 6))          # wrench on the input part at p: P times the multipliers
    r0 = 0
    for i, hf in enumerate(B.hinges):
        r = hf.P.shape[1]
        lam_h[i] = hf.P @ lam[r0:r0 + r]
        r0 += r
    nc = len(cuts)
    cut_in = np.zeros((nc, 6))
    cut_out = np.zeros((nc, 6))
    for i, cf in enumerate(cuts):
        r = cf.P.shape[1]
        cut_in[i] = cf.P @ lam[r0:r0 + r]
        r0 += r
    # what a cut hinge applies on its input part: its springs' and dampers' loads too (they
    # act through the applied loads, :mod:`...elements.forces.cut_spring`)
    cut_spring.add_wrenches(system.forces.cut_spring, B.R, B.pb, B.pc, B.w, B.vc, cut_in)
    for i, cf in enumerate(cuts):
        cut_out[i, :3] = -cut_in[i, :3] - _cross(cf.p - cf.pA, cut_in[i, 3:])
        cut_out[i, 3:] = -cut_in[i, 3:]
    CP = system.tree.loops
    ncp = CP.cp_ab.shape[0]
    coupler_lam = lam[r0:r0 + ncp].copy()
    r0 += ncp
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
        x[i, 3:] = ac[i] + _cross(alpha[i], r) + _cross(B.w[i], _cross(B.w[i], r))
        vh[i] = B.vc[i] + _cross(B.w[i], r)
        Wh[i] = lam_h[i] if hf.part_in == i else -lam_h[i]
        Wext[i] = np.concatenate([TC[i] - _cross(r, FC[i]), FC[i]])
        react_out[i, :3] = -lam_h[i, :3] - _cross(hf.p - hf.pA, lam_h[i, 3:])
        react_out[i, 3:] = -lam_h[i, 3:]
        k = hf.S.shape[1]
        hinge_loads[hf.uo:hf.uo + k] = hf.S.T @ lam_h[i]
    # the hinges' own loads: without the couplers' (as the mstmm method's tau)
    for kc in range(ncp):
        for side in range(2):
            hinge_loads[CP.cp_u[kc, side]] -= CP.cp_ab[kc, side] * coupler_lam[kc]

    # the cut hinges' relative accelerations
    def point_acc(b, p):
        if b < 0:
            return np.zeros(6)
        r = p - B.pc[b]
        return np.concatenate([alpha[b], ac[b] + _cross(alpha[b], r)
                               + _cross(B.w[b], _cross(B.w[b], r))])

    cut_udot = []
    for cf in (cuts if details else ()):
        dx = point_acc(cf.part_in, cf.p) - point_acc(cf.part_out, cf.p)
        dx[:3] -= _cross(cf.wA, cf.rel[:3])
        dx[3:] -= 2.0 * _cross(cf.wA, cf.rel[3:])
        xid = np.concatenate([cf.RA.T @ dx[:3], cf.RA.T @ dx[3:]])
        cut_udot.append(_state_rates(cf.type, cf.Sloc, xid - cf.Sdot_u))
    loop_rank = 0
    if cuts and details:
        lc = _loop_constraints(system, B, cuts)
        closure, closure_rate, closure_rows = lc.residual, lc.jacobian @ st.u, lc.rows
        svl = np.linalg.svd(lc.scaled()[1], compute_uv=False)
        loop_rank = int(np.sum(svl > RANK_RTOL * max(svl[0], 1e-300))) if svl.size else 0
    else:
        closure, closure_rate, closure_rows = np.zeros(0), np.zeros(0), ()

    ydot = _quaternion_rates(system, st, udot)

    return GlobalResult(t=t, q=st.q, u=st.u, udot=udot, ydot=ydot, R=B.R, pb=B.pb, pc=B.pc,
                        hp=hp, w=B.w, vc=B.vc, vh=vh, alpha=alpha, ac=ac, x=x, Wh=Wh,
                        reaction_on_input=lam_h.copy(), reaction_on_output=react_out,
                        hinge_loads=hinge_loads, tau=tau, driver_loads=driver_loads, Wext=Wext,
                        FC=FC, TC=TC, cut_hinges=tuple(cf.name for cf in cuts),
                        cut_reaction_on_input=cut_in, cut_reaction_on_output=cut_out,
                        cut_q=tuple(cf.q for cf in cuts), cut_u=tuple(cf.u for cf in cuts),
                        cut_udot=tuple(cut_udot), closure=closure, closure_rate=closure_rate,
                        closure_rows=closure_rows, loop_rank=loop_rank, rank=rank, rows=m,
                        redundant=redundant, indeterminate=indeterminate,
                        coupler_lam=coupler_lam)


def derivative(system, t: float, y) -> np.ndarray:
    """State derivative ``dy/dt`` (nq + nu,) from the global formulation."""
    c = _core(system, t, y, details=False)
    return _quaternion_rates(system, c.st, c.z[6 * len(system.bodies):])
