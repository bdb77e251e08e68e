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

import math
import weakref
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from ...analysis.kinematics import (constrained_directions, coordinates_from_pose,
                                    local_motion_subspace)
from ...elements.forces import applied_loads, cut_spring
from ...elements.hinges import HINGE_TYPES, QUATERNION_TYPES, SIX_DOF_TYPES
from ...maths.rotations import (bryant_to_matrix, inertia_vector_to_tensor, parallel_axis, rot_x,
                                rot_y, rotation_vector, skew)
from ...maths.rotations import quaternion_to_matrix
from ...analysis.kinematics import length_scale

_ROTATIONS = ("rx", "ry", "rz")
_TRANSLATIONS = ("x", "y", "z")
_E = np.eye(3)
_S_REVOLUTE = np.array([[0.0], [0.0], [1.0], [0.0], [0.0], [0.0]])
_S_PRISMATIC = np.array([[0.0], [0.0], [0.0], [0.0], [0.0], [1.0]])

#: Relative tolerance of the rank of the (dimensionless) constraint rows.
RANK_RTOL = 1e-8

__all__ = ["GlobalResult", "LoopConstraints", "RANK_RTOL", "accelerations", "derivative",
           "hinge_local", "length_scale", "loop_constraints", "quaternion_to_matrix", "tree_system"]


# --------------------------------------------------------------------------------------------------
# One hinge, in its output marker frame
# --------------------------------------------------------------------------------------------------

def _cross(a, b) -> np.ndarray:
    """Cross product of two 3-vectors (``numpy.cross`` costs far more on single vectors)."""
    a0, a1, a2 = a
    b0, b1, b2 = b
    return np.array([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])


def _quaternion_rate(qv, omega) -> np.ndarray:
    """``dq/dt = 1/2 [0, omega] (x) q`` for a rotation whose angular velocity ``omega`` is given
    in the reference (here: output marker) frame."""
    w, v = qv[0], np.asarray(qv[1:])
    return 0.5 * np.concatenate([[-omega @ v], w * omega + _cross(omega, v)])


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
    if hinge_type == "revolute":                      # the common cases, directly
        c, s = math.cos(q[0]), math.sin(q[0])
        return (np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]), np.zeros(3),
                _S_REVOLUTE.copy(), np.zeros(6))
    if hinge_type == "prismatic":
        return np.eye(3), np.array([0.0, 0.0, float(q[0])]), _S_PRISMATIC.copy(), np.zeros(6)
    kind = HINGE_TYPES[hinge_type]
    q = np.asarray(q, dtype=float).reshape(-1)
    u = np.asarray(u, dtype=float).reshape(-1)
    k = kind.dof
    S = np.zeros((6, k))
    Sdot_u = np.zeros(6)
    d = np.zeros(3)
    if hinge_type in QUATERNION_TYPES:
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
    axis_rate = {"rx": np.zeros(3), "ry": _cross(w_x, axis["ry"]),
                 "rz": _cross(w_xy, axis["rz"])}
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

def tree_system(model, topology=None):
    """The :class:`~.system.System` of a model (trees and closed loops): the state layout, the
    drivers' and forces' time functions this formulation uses."""
    from ..mstmm.system import System
    return System(model, topology)


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
    """The state derivative from the velocities and their rates."""
    ydot = np.zeros(system.nq_tot + system.nu_tot)
    S0 = _static(system)
    for hname, typ, rev, k, qo, nq, uo, *_ in S0.tree:
        ui = st.u[uo:uo + k]
        if typ in QUATERNION_TYPES:
            o = 0 if typ == "spherical" else 3
            ydot[qo:qo + o] = ui[:o]
            ydot[qo + o:qo + o + 4] = _quaternion_rate(st.q[qo + o:qo + o + 4], ui[o:o + 3])
        else:
            ydot[qo:qo + k] = ui
    ydot[system.nq_tot:] = udot
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
