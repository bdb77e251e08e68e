"""The discrete-time Newton-Euler method: every body on its own, joints as stiff spring-dampers.

After Zhanal and Portes, *Calculation of mechanism motion using discrete time approach* (Vibroeng.
Procedia 18, 2018): each rigid body is integrated by the Newton-Euler equations with a very small
step (1e-5 to 1e-7 s); its orientation is updated by the incremental rotation matrix about the axis
of its angular velocity; every joint is a very stiff spring-damper on the relative motions it
forbids. No system matrix, no solve: the cost per step is linear in the number of bodies and
joints, and the loops are tight compiled code. Closed loops need no special treatment: tree and
cut hinges are the same kind of element here.

State (absolute coordinates, global axes, SI)
    Per body: the mass centre ``x``, the rotation ``R`` of the body's *central principal frame*
    (the base frame turned by the principal axes of the inertia tensor about the mass centre, so
    that the inertia is diagonal, ``J = diag(J1, J2, J3)``), the velocity ``v`` of the mass centre
    and the angular momentum ``L`` about the mass centre. Markers and force points are stored in
    that frame once, at assembly; results are turned back to the base frame.

One step of length h (the paper's scheme: loads, then velocities, then positions)
    1. Loads at (t, state): gravity, point forces and torques, spring-dampers, rotational
       spring-dampers, and for every hinge its penalty wrench (below) plus its own springs and
       dampers on its free coordinates. Force ``F`` and torque ``T`` about the mass centre.
    2. Velocities: ``v += h F / m``, ``L += h T`` (Newton; Euler's equations in their momentum
       form ``dL/dt = T``, which is ``J dw_b/dt + w_b x J w_b = T_b`` in body axes).
    3. Drivers (see below): velocity-level projection of each driven coordinate.
    4. Positions: ``x += h v`` (semi-implicit, symplectic Euler: the new velocity moves the body),
       ``R <- R exp(~w_b h)`` with ``w_b = J^-1 R^T L`` the new body-axes angular velocity: the
       incremental rotation by the angle ``|w| h`` about the axis of ``w`` (Rodrigues' formula, the
       paper's Eq. (1) and (11); a series in ``|w| h`` below 1e-2, exact to round-off). Working with
       ``L`` instead of ``w`` makes the free gyroscopic motion exact in magnitude (``|L|`` is kept
       by the rotation; an explicit ``w x J w`` term would make a fast spinning body gain energy
       by a factor ``1 + (|w| h)^2`` per step). ``R`` is re-orthonormalised every 64 steps.
    The scheme is first order (global error O(h)) and symplectic: without dampers the energy error
    stays bounded (O(h)) instead of drifting.

Joints: penalty spring-dampers on the forbidden relative motions
    For hinge j with output marker frame ``A`` (origin ``pA``) on body ``o`` and input marker frame
    ``B`` (origin ``pB``) on body ``i``, ``r = pB - pA``, ``dv`` the velocity of B's material point
    at ``pB`` relative to A's material point there, ``dw = w_i - w_o``, the displacement ``d`` in
    the blocked directions is

    * translations: ``d_a = e_a . r`` along the blocked axes ``e_a`` of ``A`` (all three for
      revolute, universal, spherical, fixed; x and y for prismatic and cylindrical; z for planar);
    * rotations: the misalignment of the axes, ``zA x zB`` on ``xA, yA`` for revolute, cylindrical
      and planar hinges; ``1/2 vee(B A^T - A B^T)`` (the rotation vector for small angles) on
      ``xA, yA, zA`` for fixed and prismatic hinges; ``xA . yB`` about ``n = xA x yB`` for
      universal hinges (the cross stays square). Spherical, free and bushing hinges block no
      rotation; free and bushing hinges no translation.

    The penalty is a spring-damper *weighted by the joint's effective mass*: with ``d`` the
    blocked displacements (rotations and translations together, up to six rows) and ``d'`` their
    rates,

        ``lambda = M (w_j^2 d + c_j d')``,    ``M = G^-1``,    ``G = sum_b J_b M_b^-1 J_b^T``

    where row k of ``J_b`` is body b's velocity along row k per unit twist of the body (``[e_k;
    0]`` for a rotation row, ``[s_b x e_k; e_k]`` for a translation row at ``pB``, ``s_b`` the
    arm from the body's mass centre to ``pB``) and ``M_b = diag(J_b, m_b I)`` its inertia at the
    mass centre (the ground contributes nothing). ``G`` is the mobility of the joint: the
    relative acceleration of its blocked rows per unit of their loads ``lambda``. Body i gets the
    forces ``-lambda_k e_k`` at ``pB`` and the torques ``-lambda_k e_k``, body o the opposite
    (forces also at ``pB``: then the translational part is the exact gradient of
    ``1/2 d^T K d`` for constant ``K = w_j^2 M``, turning of ``A`` included). So the joint
    alone, between its two bodies, is an oscillator of the same natural frequency ``w_j`` in every
    blocked direction, whatever the masses, inertias and lever arms. (A scalar stiffness per
    direction is limited by the most mobile direction, e.g. the spin of a slender link about its
    axis, and leaves the others soft; separate translation and rotation blocks miss that a
    rotation about the joint point moves the mass centre: on seed 004's arm, whose joint is 0.3 m
    from a 50 mm cube, that mode is 15 times slower than the block estimate, nearly undamped, and
    rang at 10 rad/s^2 through the run.)

    ``G`` changes only with the bodies' orientations (by about ``|w| h`` per step): it is built
    and inverted (Cholesky) every :data:`REFRESH_EVERY` = 16 steps, and between refreshes ``M``
    is extrapolated linearly from the last two (holding it constant instead makes the stiffness
    jump at every refresh, and the joints ring: 10 times the reaction error of a refresh every
    step; with the extrapolation the error is that of a refresh every step, at 1.8 times the
    speed).

Default joint frequency and damping (derived from the step)
    For symplectic Euler the oscillator ``x'' + 2 z w x' + w^2 x = 0`` is stable for
    ``4 - 4 z w h - (w h)^2 > 0`` (amplification matrix of one step: trace ``2 - 2 z w h -
    (w h)^2``, determinant ``1 - 2 z w h``, Jury's conditions): ``w h < 0.83`` when critically
    damped, ``w h < 2`` undamped. The step's Nyquist limit is ``pi / h``; the top of the penalty
    spectrum is placed at

        ``w_J = f pi / h``,  f = :data:`JOINT_FRACTION` = 0.1  (``w_J h = 0.31``, 20 steps a period)

    a stability margin of 2.6 (f may go to 0.26). Joints share the bodies: a body held by ``n``
    penalty joints would see its modes add up to ``sqrt(n)`` times one joint's frequency
    (Gershgorin), so a hinge whose bodies carry at most ``n_j`` hinges with blocked directions
    gets

        ``w_j = w_J / sqrt(n_j)``      (``w_J / sqrt 2`` for a link with a hinge at each end)

    Measured on the examples (the penalty system linearised at rest by finite differences), the
    highest penalty mode is then 0.93 to 1.0 ``w_J``. The damping is proportional to the
    stiffness and critical at ``w_J``: ``c_j = 2 z w_j^2 / w_J`` (z = 1), so that every penalty
    mode ``w_i <= w_J`` has the damping ratio ``z w_i / w_J <= 1``. (Critical damping at each
    joint's own ``w_j`` instead over-damps the coupled modes above it, up to 1.7 times critical on
    the examples, and the explicit damper turns them unstable at f = 0.2.) A joint alone rings
    down at the rate ``z w_j^2 / w_J = z w_J / n_j``, in 0.06 ms for ``n_j = 2`` at h = 1e-5 s.
    The joint deflects by about ``(load / effective mass) / w_j^2 = n_j a h^2 / (f pi)^2``: 2e-8 m
    for an acceleration of 10 m/s^2 and n_j = 2 at h = 1e-5 s; the method converges to rigid
    joints as ``h -> 0``. Overrides: ``joint_fraction`` (f), ``joint_frequency`` (``w_J / 2 pi``
    in Hz, absolute), ``joint_damping_ratio`` (z); :meth:`NewtonEuler.joint_stiffness` gives a
    hinge's current stiffness matrix.

Drivers: velocity-level projection instead of a servo spring
    A stiff servo spring on a driven coordinate lags under load by ``load / k``: on the engine's
    crank, whose own inertia is small compared to the loads it carries, that is degrees. Instead
    each driven coordinate is made to follow its prescribed value exactly: after the velocity
    update of step n, an impulse ``P`` along the coordinate (torque about the hinge axis, or force
    along the slide at ``pB``, equal and opposite on the two bodies) sets the coordinate's rate to
    ``(q_d(t_{n+1}) - q_n) / h``, so that the position update lands the coordinate on
    ``q_d(t_{n+1})`` (to first order in the step; the next step corrects what is left). ``P``
    follows from the coordinate's effective inverse inertia of the two bodies (``e^T J^-1 e``,
    or ``1/m + (r x e)^T J^-1 (r x e)``); the driver load is ``P / h``. This is the exact
    rheonomic constraint for that one coordinate, stable for any load, with no parameter; it is
    not a stiff spring, so it adds no fast mode. Several drivers are projected one after another.

Results (the same columns as every method, see :mod:`.results`)
    At each output time the state at that time is evaluated (loads, joint wrenches, drivers) as
    the step from that time does: the reaction of a hinge is its penalty wrench plus its springs,
    dampers and driver, on its input body at the input marker's origin; body accelerations are
    those of the Newton-Euler equations of that step (``a = F/m``, ``alpha = J^-1 (T - w x L)``,
    driver impulses included); hinge coordinates are measured from the bodies' poses (angles
    tracked every step so that they are continuous over any number of turns), rates and
    accelerations are projections of the bodies' relative motion on the hinge's axes.
    Cut hinges have the columns of every hinge plus their loop-closure errors (``closure_gap``
    ...), here the deflection of their penalty joint (:class:`NewtonEulerRecorder`).
    The energy balance (``energy.work_drivers``, ``work_forces``, ``dissipated``): the power of
    the drivers (their loads times the coordinates' rates), of the applied forces and of the
    hinges' own and the force elements' dampers, evaluated at the output times and integrated by
    the trapezoidal rule, so it is as accurate as the output step resolves the motion. The
    penalty joints are not in it: the energy they store (deflection ``1/2 d^T K d``) and
    dissipate (their damping), the method's O(h) energy error, and the sampling error of the
    works are in ``energy.residual``; use a fine output step (or ``mstmm``) for a tight balance.
    At t = 0 the joints are not yet deflected: the first row has zero reactions and the
    accelerations of the bodies without their joints. The joints load within their ring-down time
    (about ``n_j / w_J``, some ten steps), after which the reactions follow the rigid ones to
    O(h). Where constraints are redundant (a planar four-bar of revolute hinges in 3D) the rigid
    reactions are not unique: the penalty joints share those loads by their stiffness (an elastic
    solution), the MSTMM solver gives the minimum-norm cut-hinge loads; the motion agrees.

Initial state
    From the hinges' initial coordinates and rates (drivers at t = 0), placed by the spanning
    tree (:func:`.kinematics.forward_kinematics`) with body initial velocities on free hinges
    as in :class:`.system.System`. For closed loops the position coordinates not given are
    adjusted by Newton iterations to close the loops (when the drawing does not), and the rates
    not given are made consistent with the loops (least-norm correction, the given and driven
    ones kept: the same rates as the assembly of the other methods on the examples), so that the
    stiff joints do not start with a jolt. Bodies not connected to the ground keep their drawn
    pose and their initial velocities.
"""

from __future__ import annotations

import dataclasses
import math
import time as _time
from collections import namedtuple

import numpy as np
from numba import njit

from ...analysis.kinematics import (Pose, coordinate_slices, drawn_distance_of, drawn_poses,
                                    forward_kinematics, hinge_coordinates, initial_coordinates,
                                    loop_jacobian, loop_residual, motion_subspace, twist_jacobian)
from ...elements import forces
from ...elements.forces import applied_loads
from ...elements.hinges import HINGE_TYPES
from ...model.mechanism import MultibodySystem
from ...model.problems import ModelError, Problem
from ...results.table import fill_residual
from ...maths.rotations import bryant_to_matrix, inertia_vector_to_tensor, parallel_axis
from ..mstmm.system import Instant, marker_attachment
from ...maths.rotations import bryant_to_quaternion
from ...model.timefunction import parse
from ...analysis.topology import Topology, analyse

#: Default natural frequency of the joints as a fraction of the step's Nyquist limit pi/h.
JOINT_FRACTION = 0.1
#: Default damping ratio of the joints (critical).
JOINT_DAMPING_RATIO = 1.0
#: Wall time aimed at per compiled chunk (s): how often progress and cancel are looked at.
CHUNK_SECONDS = 0.1
#: Most steps in one compiled chunk.
MAX_CHUNK = 200000
#: Steps between re-orthonormalisations of the rotation matrices.
ORTHO_EVERY = 64
#: Steps between unwrappings of the angles of hinges without spring or driver (their angles may
#: turn by less than pi in that many steps: 78000 rad/s at h = 1e-5 s).
TRACK_EVERY = 4
#: Steps between refreshes of the joints' effective masses (they change with the bodies'
#: orientations only, by about |w| h per step).
REFRESH_EVERY = 16

# rotation modes of the penalty
R_NONE, R_FULL, R_AXIS, R_CROSS = 0, 1, 2, 3
# kinds of velocity coordinates
U_TRANS, U_RZ, U_RX, U_RY, U_ROTV = 0, 1, 2, 3, 4

_QUAT_TYPES = ("spherical", "free", "bushing")
#: blocked translations along the output marker's x, y, z and the rotation mode, per hinge type
_BLOCKED = {
    "fixed": ((1, 1, 1), R_FULL),
    "revolute": ((1, 1, 1), R_AXIS),
    "prismatic": ((1, 1, 0), R_FULL),
    "cylindrical": ((1, 1, 0), R_AXIS),
    "universal": ((1, 1, 1), R_CROSS),
    "spherical": ((1, 1, 1), R_NONE),
    "planar": ((0, 0, 1), R_AXIS),
    "free": ((0, 0, 0), R_NONE),
    "bushing": ((0, 0, 0), R_NONE),
}
_KIND_OF = {"x": (U_TRANS, 0), "y": (U_TRANS, 1), "z": (U_TRANS, 2),
            "rx": (U_RX, 0), "ry": (U_RY, 1), "rz": (U_RZ, 2)}

Bodies = namedtuple("Bodies", "mass Jd Jinv")
Joints = namedtuple("Joints", "bi bo Ri pi Ro po om zc tmask rmode qo uo nu hspring "
                              "ukind uaxis uq uj hk hc href hRref quat drv_u drv_j drv_col hflag")
State = namedtuple("State", "x R v L qt")
Work = namedtuple("Work", "wg F T Fa Ta Wh tau v0 L0 acc alpha tA tB tC kE kP kG Meff dMeff nkj "
                         "age ky clos js lay")
#: What :class:`~.results.Recorder` reads from a formulation besides ``instant``.
Layout = namedtuple("Layout", "qo uo nq nu sgn hk hc href hRref mass JCl")

_JIT = dict(cache=True, nogil=True, error_model="numpy")
#: small helpers: LLVM inlines them (numba's IR inlining, inline="always", made the first
#: compilation five times slower for no speed)
_INL = dict(cache=True, nogil=True, error_model="numpy")


# --------------------------------------------------------------------------------------------------
# small helpers (scalars and tuples: no allocation)
# --------------------------------------------------------------------------------------------------

@njit(**_INL)
def _cr(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(**_INL)
def _mv(A, v0, v1, v2):
    return (A[0, 0] * v0 + A[0, 1] * v1 + A[0, 2] * v2,
            A[1, 0] * v0 + A[1, 1] * v1 + A[1, 2] * v2,
            A[2, 0] * v0 + A[2, 1] * v1 + A[2, 2] * v2)


@njit(**_INL)
def _mtv(A, v0, v1, v2):
    return (A[0, 0] * v0 + A[1, 0] * v1 + A[2, 0] * v2,
            A[0, 1] * v0 + A[1, 1] * v1 + A[2, 1] * v2,
            A[0, 2] * v0 + A[1, 2] * v1 + A[2, 2] * v2)


@njit(**_INL)
def _m33(A, B, C):
    """C = A @ B (3x3)."""
    for a in range(3):
        a0, a1, a2 = A[a, 0], A[a, 1], A[a, 2]
        C[a, 0] = a0 * B[0, 0] + a1 * B[1, 0] + a2 * B[2, 0]
        C[a, 1] = a0 * B[0, 1] + a1 * B[1, 1] + a2 * B[2, 1]
        C[a, 2] = a0 * B[0, 2] + a1 * B[1, 2] + a2 * B[2, 2]


@njit(**_INL)
def _wrap(a):
    """Angle wrapped to (-pi, pi]."""
    return a - 2.0 * np.pi * np.floor((a + np.pi) / (2.0 * np.pi))


@njit(**_JIT)
def _rotvec(R):
    """Rotation vector of a rotation matrix as a tuple (see rotations.rotation_vector)."""
    c = (R[0, 0] + R[1, 1] + R[2, 2] - 1.0) / 2.0
    w0, w1, w2 = R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]
    s = 0.5 * np.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
    t = np.arctan2(s, c)
    if t < 1e-8:
        return 0.5 * w0, 0.5 * w1, 0.5 * w2
    if np.pi - t > 1e-2:
        f = t / (2.0 * s)
        return f * w0, f * w1, f * w2
    k = 0
    for j in range(3):
        if R[j, j] > R[k, k]:
            k = j
    a0 = 0.5 * (R[0, k] + R[k, 0]) - (c if k == 0 else 0.0)
    a1 = 0.5 * (R[1, k] + R[k, 1]) - (c if k == 1 else 0.0)
    a2 = 0.5 * (R[2, k] + R[k, 2]) - (c if k == 2 else 0.0)
    n = np.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
    if a0 * w0 + a1 * w1 + a2 * w2 < 0:
        n = -n
    return t * a0 / n, t * a1 / n, t * a2 / n


@njit(**_JIT)
def _quaternion(R):
    """Unit quaternion (w, x, y, z) of a rotation matrix (Shepperd's method)."""
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    if tr >= R[0, 0] and tr >= R[1, 1] and tr >= R[2, 2]:
        s = 2.0 * np.sqrt(max(1.0 + tr, 0.0))
        return 0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s
    if R[0, 0] >= R[1, 1] and R[0, 0] >= R[2, 2]:
        s = 2.0 * np.sqrt(max(1.0 + R[0, 0] - R[1, 1] - R[2, 2], 0.0))
        return (R[2, 1] - R[1, 2]) / s, 0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s
    if R[1, 1] >= R[2, 2]:
        s = 2.0 * np.sqrt(max(1.0 + R[1, 1] - R[0, 0] - R[2, 2], 0.0))
        return (R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s
    s = 2.0 * np.sqrt(max(1.0 + R[2, 2] - R[0, 0] - R[1, 1], 0.0))
    return (R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s


# --------------------------------------------------------------------------------------------------
# the kernels
#
# Performance note: a call that passes many arrays (a namedtuple of them above all) costs a few
# ns per array, inlined or not; so the hot loops take the arrays they need as arguments, once per
# step, and do the per-joint work without helper calls that take arrays (only _m33/_mv/_mtv).
# --------------------------------------------------------------------------------------------------

@njit(**_JIT)
def _omegas(R, L, Jinv, wg):
    """Global angular velocities of all bodies from their angular momenta."""
    for i in range(R.shape[0]):
        Ri = R[i]
        b = _mtv(Ri, L[i, 0], L[i, 1], L[i, 2])
        w = _mv(Ri, b[0] * Jinv[i, 0], b[1] * Jinv[i, 1], b[2] * Jinv[i, 2])
        wg[i, 0], wg[i, 1], wg[i, 2] = w


@njit(**_INL)
def _inv_inertia(R, Jinv, i, e0, e1, e2):
    """e^T J_global^-1 e of body i."""
    b = _mtv(R[i], e0, e1, e2)
    return b[0] * b[0] * Jinv[i, 0] + b[1] * b[1] * Jinv[i, 1] + b[2] * b[2] * Jinv[i, 2]


@njit(**_JIT)
def _frame_pos(j, x, R, bi_, bo_, Ri_, pi_, Ro_, po_, A, B, js):
    """Marker frames of hinge j into A (output) and B (input); into js the rows 0 pA, 1 pB,
    2 arm pB - x_i (0 for the ground), 3 arm pB - x_o (0 for the ground), 4 r = pB - pA."""
    bi, bo = bi_[j], bo_[j]
    if bo >= 0:
        _m33(R[bo], Ro_[j], A)
        t = _mv(R[bo], po_[j, 0], po_[j, 1], po_[j, 2])
        for a in range(3):
            js[0, a] = x[bo, a] + t[a]
    else:
        for a in range(3):
            js[0, a] = po_[j, a]
            for b in range(3):
                A[a, b] = Ro_[j, a, b]
    if bi >= 0:
        _m33(R[bi], Ri_[j], B)
        t = _mv(R[bi], pi_[j, 0], pi_[j, 1], pi_[j, 2])
        for a in range(3):
            js[1, a] = x[bi, a] + t[a]
            js[2, a] = t[a]
    else:
        for a in range(3):
            js[1, a] = pi_[j, a]
            js[2, a] = 0.0
            for b in range(3):
                B[a, b] = Ri_[j, a, b]
    for a in range(3):
        js[3, a] = js[1, a] - x[bo, a] if bo >= 0 else 0.0
        js[4, a] = js[1, a] - js[0, a]


@njit(**_INL)
def _axis(kind, ax, A, B):
    """Global direction of a velocity coordinate (translation or rotation axis)."""
    if kind == U_RY:
        return B[0, 1], B[1, 1], B[2, 1]
    return A[0, ax], A[1, ax], A[2, ax]


@njit(**_INL)
def _raw_angle(kind, A, B):
    """The angle of a tracked coordinate from the marker frames, in (-pi, pi]."""
    if kind == U_RZ:      # Rrel = A^T B: atan2(R10, R00)
        y = A[0, 1] * B[0, 0] + A[1, 1] * B[1, 0] + A[2, 1] * B[2, 0]
        x = A[0, 0] * B[0, 0] + A[1, 0] * B[1, 0] + A[2, 0] * B[2, 0]
    elif kind == U_RX:    # Rx(a) Ry(b): atan2(R21, R11)
        y = A[0, 2] * B[0, 1] + A[1, 2] * B[1, 1] + A[2, 2] * B[2, 1]
        x = A[0, 1] * B[0, 1] + A[1, 1] * B[1, 1] + A[2, 1] * B[2, 1]
    else:                 # ry: atan2(R02, R00)
        y = A[0, 0] * B[0, 2] + A[1, 0] * B[1, 2] + A[2, 0] * B[2, 2]
        x = A[0, 0] * B[0, 0] + A[1, 0] * B[1, 0] + A[2, 0] * B[2, 0]
    return np.arctan2(y, x)


@njit(**_INL)
def _wrench(x, F, T, b, f0, f1, f2, t0, t1, t2, p0, p1, p2):
    """Force f at global point p and torque t on body b (nothing for the ground)."""
    if b >= 0:
        c = _cr(p0 - x[b, 0], p1 - x[b, 1], p2 - x[b, 2], f0, f1, f2)
        F[b, 0] += f0
        F[b, 1] += f1
        F[b, 2] += f2
        T[b, 0] += t0 + c[0]
        T[b, 1] += t1 + c[1]
        T[b, 2] += t2 + c[2]


@njit(**_JIT)
def _joints(x, R, v, wg, F, T, qt, mass, Jinv, bi_, bo_, Ri_, pi_, Ro_, po_, om_, zc_, tmask,
            rmode, uo_, nu_, hflag, quat_, ukind, uaxis, uq, hk, hc, href, hRref, Wh, tau,
            A, B, C, kE, kP, kG, Meff, dMeff, nkj, age, ky, clos, refresh, track_all, store):
    """Penalty wrench, springs and dampers of every hinge: added to F, T; into Wh and tau.

    The penalty of hinge j in its blocked directions (output-marker axes for translations and
    for the rotations of revolute-like and fixed hinges) is ``-M (om^2 d + zc d')``, ``M`` the
    current effective mass (inertia) of the two bodies in those directions at the joint, ``d``
    the displacement (misalignment) and ``d'`` its rate; ``om = om_[j]``, ``zc = zc_[j]``.

    Tracked angles (qt) are unwrapped at the current poses for hinges with a spring or driver
    (``hflag & 2``) and, with ``track_all``, for all. With ``store``, ``clos[j]`` gets the norms
    of hinge j's blocked translations (m) and rotations (rad, the sines of the misalignments)
    and of their rates."""
    for j in range(bi_.size):
        bi, bo = bi_[j], bo_[j]
        # frames, points and relative motion (as _frame_pos, written out: no array calls)
        if bo >= 0:
            Rm = R[bo]
            _m33(Rm, Ro_[j], A)
            t = _mv(Rm, po_[j, 0], po_[j, 1], po_[j, 2])
            pa0, pa1, pa2 = x[bo, 0] + t[0], x[bo, 1] + t[1], x[bo, 2] + t[2]
            wo0, wo1, wo2 = wg[bo, 0], wg[bo, 1], wg[bo, 2]
            vo0, vo1, vo2 = v[bo, 0], v[bo, 1], v[bo, 2]
        else:
            for a in range(3):
                for b in range(3):
                    A[a, b] = Ro_[j, a, b]
            pa0, pa1, pa2 = po_[j, 0], po_[j, 1], po_[j, 2]
            wo0 = wo1 = wo2 = vo0 = vo1 = vo2 = 0.0
        if bi >= 0:
            Rm = R[bi]
            _m33(Rm, Ri_[j], B)
            rb0, rb1, rb2 = _mv(Rm, pi_[j, 0], pi_[j, 1], pi_[j, 2])
            pb0, pb1, pb2 = x[bi, 0] + rb0, x[bi, 1] + rb1, x[bi, 2] + rb2
            wi0, wi1, wi2 = wg[bi, 0], wg[bi, 1], wg[bi, 2]
            c = _cr(wi0, wi1, wi2, rb0, rb1, rb2)
            vb0, vb1, vb2 = v[bi, 0] + c[0], v[bi, 1] + c[1], v[bi, 2] + c[2]
        else:
            for a in range(3):
                for b in range(3):
                    B[a, b] = Ri_[j, a, b]
            pb0, pb1, pb2 = pi_[j, 0], pi_[j, 1], pi_[j, 2]
            rb0 = rb1 = rb2 = wi0 = wi1 = wi2 = vb0 = vb1 = vb2 = 0.0
        if bo >= 0:
            sa0, sa1, sa2 = pb0 - x[bo, 0], pb1 - x[bo, 1], pb2 - x[bo, 2]
            c = _cr(wo0, wo1, wo2, sa0, sa1, sa2)
            va0, va1, va2 = vo0 + c[0], vo1 + c[1], vo2 + c[2]
        else:
            sa0 = sa1 = sa2 = va0 = va1 = va2 = 0.0
        r0, r1, r2 = pb0 - pa0, pb1 - pa1, pb2 - pa2
        v0, v1, v2 = vb0 - va0, vb1 - va1, vb2 - va2
        dw0, dw1, dw2 = wi0 - wo0, wi1 - wo1, wi2 - wo2
        o, nu, flag = uo_[j], nu_[j], hflag[j]
        if track_all or flag & 2:
            for c_i in range(nu):
                u = o + c_i
                kind = ukind[u]
                if kind == U_RZ or kind == U_RX or kind == U_RY:
                    iq = uq[u]
                    qt[iq] += _wrap(_raw_angle(kind, A, B) - qt[iq])
        # the blocked rows: direction (global), translation or rotation, displacement, rate
        nk = 0
        mode = rmode[j]
        if mode == R_AXIS or mode == R_FULL:
            if mode == R_AXIS:
                # misalignment of the axes: zA x zB, on xA and yA
                c = _cr(A[0, 2], A[1, 2], A[2, 2], B[0, 2], B[1, 2], B[2, 2])
                ph0, ph1, ph2 = c[0], c[1], c[2]
                nax = 2
            else:
                # 1/2 vee(B A^T - A B^T), (B A^T)[a, b] = sum_k B[a, k] A[b, k]
                m21 = B[2, 0] * A[1, 0] + B[2, 1] * A[1, 1] + B[2, 2] * A[1, 2]
                m12 = B[1, 0] * A[2, 0] + B[1, 1] * A[2, 1] + B[1, 2] * A[2, 2]
                m02 = B[0, 0] * A[2, 0] + B[0, 1] * A[2, 1] + B[0, 2] * A[2, 2]
                m20 = B[2, 0] * A[0, 0] + B[2, 1] * A[0, 1] + B[2, 2] * A[0, 2]
                m10 = B[1, 0] * A[0, 0] + B[1, 1] * A[0, 1] + B[1, 2] * A[0, 2]
                m01 = B[0, 0] * A[1, 0] + B[0, 1] * A[1, 1] + B[0, 2] * A[1, 2]
                ph0, ph1, ph2 = 0.5 * (m21 - m12), 0.5 * (m02 - m20), 0.5 * (m10 - m01)
                nax = 3
            for a in range(nax):
                e0, e1, e2 = A[0, a], A[1, a], A[2, a]
                kE[nk, 0], kE[nk, 1], kE[nk, 2] = e0, e1, e2
                ky[nk, 0] = 0.0
                ky[nk, 1] = e0 * ph0 + e1 * ph1 + e2 * ph2
                ky[nk, 2] = e0 * dw0 + e1 * dw1 + e2 * dw2
                nk += 1
        elif mode == R_CROSS:
            # universal: xA . yB = 0; the blocked rotation is about n = xA x yB, by -xA . yB
            xa0, xa1, xa2 = A[0, 0], A[1, 0], A[2, 0]
            yb0, yb1, yb2 = B[0, 1], B[1, 1], B[2, 1]
            n = _cr(xa0, xa1, xa2, yb0, yb1, yb2)
            nl = np.sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2])
            if nl > 1e-9:
                e0, e1, e2 = n[0] / nl, n[1] / nl, n[2] / nl
                kE[nk, 0], kE[nk, 1], kE[nk, 2] = e0, e1, e2
                ky[nk, 0] = 0.0
                ky[nk, 1] = -(xa0 * yb0 + xa1 * yb1 + xa2 * yb2) * nl
                ky[nk, 2] = e0 * dw0 + e1 * dw1 + e2 * dw2
                nk += 1
        nr = nk
        for a in range(3):
            if tmask[j, a]:
                e0, e1, e2 = A[0, a], A[1, a], A[2, a]
                kE[nk, 0], kE[nk, 1], kE[nk, 2] = e0, e1, e2
                ky[nk, 0] = 1.0
                ky[nk, 1] = e0 * r0 + e1 * r1 + e2 * r2
                ky[nk, 2] = e0 * v0 + e1 * v1 + e2 * v2
                nk += 1
        if store:
            g0 = g1 = g2 = g3 = 0.0
            for k in range(nk):
                if k >= nr:
                    g0 += ky[k, 1] * ky[k, 1]
                    g2 += ky[k, 2] * ky[k, 2]
                else:
                    g1 += ky[k, 1] * ky[k, 1]
                    g3 += ky[k, 2] * ky[k, 2]
            clos[j, 0], clos[j, 1] = np.sqrt(g0), np.sqrt(g1)
            clos[j, 2], clos[j, 3] = np.sqrt(g2), np.sqrt(g3)
        f0 = f1 = f2 = 0.0
        t0 = t1 = t2 = 0.0
        Mj, dMj = Meff[j], dMeff[j]
        if nk > 0 and (refresh or nkj[j] != nk):
            # G = sum over the two bodies of J_b M_b^-1 J_b^T: row k of J_b is [e_k; 0] for a
            # rotation, [s_b x e_k; e_k] for a translation at pB (s_b the arm from the mass
            # centre), M_b = diag(J_b, m_b I); in principal axes J_b^-1 is diagonal.
            for k in range(nk):
                for l in range(k + 1):
                    kG[k, l] = 0.0
            for side in range(2):
                b = bi if side == 0 else bo
                if b < 0:
                    continue
                Rm = R[b]
                if side == 0:
                    s = _mtv(Rm, rb0, rb1, rb2)
                else:
                    s = _mtv(Rm, sa0, sa1, sa2)
                # rows' angular parts in the body's principal axes, times sqrt(J^-1)
                q0, q1, q2 = np.sqrt(Jinv[b, 0]), np.sqrt(Jinv[b, 1]), np.sqrt(Jinv[b, 2])
                for k in range(nk):
                    e = _mtv(Rm, kE[k, 0], kE[k, 1], kE[k, 2])
                    if k >= nr:
                        e = _cr(s[0], s[1], s[2], e[0], e[1], e[2])
                    kP[k, 0], kP[k, 1], kP[k, 2] = e[0] * q0, e[1] * q1, e[2] * q2
                im = 1.0 / mass[b]
                for k in range(nk):
                    p0_, p1_, p2_ = kP[k, 0], kP[k, 1], kP[k, 2]
                    for l in range(k + 1):
                        kG[k, l] += p0_ * kP[l, 0] + p1_ * kP[l, 1] + p2_ * kP[l, 2]
                    if k >= nr:
                        # translation rows are orthonormal axes of A: e_k . e_l / m
                        kG[k, k] += im
            # M = G^-1 by Cholesky (lower triangle of kG), kept with its trend: between
            # refreshes M is extrapolated linearly (a smooth stiffness: no jumps to ring)
            ok = True
            for k in range(nk):
                d = kG[k, k]
                for m_ in range(k):
                    d -= kG[k, m_] * kG[k, m_]
                if d <= 0.0:
                    ok = False
                    break
                d = np.sqrt(d)
                kG[k, k] = d
                for l in range(k + 1, nk):
                    g = kG[l, k]
                    for m_ in range(k):
                        g -= kG[l, m_] * kG[k, m_]
                    kG[l, k] = g / d
            if not ok:
                nkj[j] = 0                # no mass on either side: no penalty
            else:
                steps = age[j] if nkj[j] == nk and age[j] > 0 else 0
                for c_ in range(nk):      # column c_ of G^-1: solve L L^T x = e_c
                    for k in range(nk):
                        g = 1.0 if k == c_ else 0.0
                        for m_ in range(k):
                            g -= kG[k, m_] * kP[m_, 0]
                        kP[k, 0] = g / kG[k, k]
                    for k in range(nk - 1, -1, -1):
                        g = kP[k, 0]
                        for m_ in range(k + 1, nk):
                            g -= kG[m_, k] * kP[m_, 0]
                        kP[k, 0] = g / kG[k, k]
                    for k in range(nk):
                        x_ = kP[k, 0]
                        dMj[k, c_] = (x_ - Mj[k, c_]) / steps if steps > 0 else 0.0
                        Mj[k, c_] = x_
                nkj[j] = nk
                age[j] = 0
        if nk > 0 and nkj[j] == nk:
            # lambda = M (om^2 d + zc d'), M extrapolated by its trend
            om, zc = om_[j], zc_[j]
            om2 = om * om
            ag = float(age[j])
            for k in range(nk):
                ky[k, 2] = om2 * ky[k, 1] + zc * ky[k, 2]
            for k in range(nk):
                g = 0.0
                for l in range(nk):
                    g += (Mj[k, l] + ag * dMj[k, l]) * ky[l, 2]
                if k >= nr:
                    f0 -= g * kE[k, 0]
                    f1 -= g * kE[k, 1]
                    f2 -= g * kE[k, 2]
                else:
                    t0 -= g * kE[k, 0]
                    t1 -= g * kE[k, 1]
                    t2 -= g * kE[k, 2]
            age[j] += 1
        if flag & 1:
            p0 = p1 = p2 = 0.0
            if quat_[j]:
                # rotation vector of the relative rotation A^T B w.r.t. the spring reference Hr
                Hr = hRref[j]
                for a in range(3):
                    m0 = A[0, a] * B[0, 0] + A[1, a] * B[1, 0] + A[2, a] * B[2, 0]
                    m1 = A[0, a] * B[0, 1] + A[1, a] * B[1, 1] + A[2, a] * B[2, 1]
                    m2 = A[0, a] * B[0, 2] + A[1, a] * B[1, 2] + A[2, a] * B[2, 2]
                    for b in range(3):
                        C[a, b] = m0 * Hr[b, 0] + m1 * Hr[b, 1] + m2 * Hr[b, 2]
                p0, p1, p2 = _rotvec(C)
            for c_i in range(nu):
                u = o + c_i
                kind, ax = ukind[u], uaxis[u]
                e0, e1, e2 = _axis(kind, ax, A, B)
                if kind == U_TRANS:
                    q = e0 * r0 + e1 * r1 + e2 * r2 - href[u]
                    rate = e0 * v0 + e1 * v1 + e2 * v2
                else:
                    if kind == U_ROTV:
                        q = p0 if ax == 0 else (p1 if ax == 1 else p2)
                    else:
                        q = qt[uq[u]] - href[u]
                    rate = e0 * dw0 + e1 * dw1 + e2 * dw2
                tq = -hk[u] * q - hc[u] * rate
                tau[u] = tq
                if kind == U_TRANS:
                    f0 += tq * e0
                    f1 += tq * e1
                    f2 += tq * e2
                else:
                    t0 += tq * e0
                    t1 += tq * e1
                    t2 += tq * e2
        else:
            for c_i in range(nu):
                tau[o + c_i] = 0.0
        Wh[j, 0], Wh[j, 1], Wh[j, 2] = t0, t1, t2
        Wh[j, 3], Wh[j, 4], Wh[j, 5] = f0, f1, f2
        if bi >= 0:
            c = _cr(rb0, rb1, rb2, f0, f1, f2)
            F[bi, 0] += f0
            F[bi, 1] += f1
            F[bi, 2] += f2
            T[bi, 0] += t0 + c[0]
            T[bi, 1] += t1 + c[1]
            T[bi, 2] += t2 + c[2]
        if bo >= 0:
            c = _cr(sa0, sa1, sa2, f0, f1, f2)
            F[bo, 0] -= f0
            F[bo, 1] -= f1
            F[bo, 2] -= f2
            T[bo, 0] -= t0 + c[0]
            T[bo, 1] -= t1 + c[1]
            T[bo, 2] -= t2 + c[2]


@njit(**_JIT)
def _drivers(x, R, v, L, mass, Jinv, qt, bi_, bo_, Ri_, pi_, Ro_, po_, ukind, uaxis, uq, drv_u,
             drv_j, drv_col, drvn, Wh, tau, A, B, js, h):
    """Velocity-level projection of every driven coordinate onto ``drvn`` at the step's end."""
    for d in range(drv_u.size):
        u, j = drv_u[d], drv_j[d]
        bi, bo = bi_[j], bo_[j]
        _frame_pos(j, x, R, bi_, bo_, Ri_, pi_, Ro_, po_, A, B, js)
        kind, ax = ukind[u], uaxis[u]
        e0, e1, e2 = _axis(kind, ax, A, B)
        # angular velocities from the updated momenta
        if bi >= 0:
            b = _mtv(R[bi], L[bi, 0], L[bi, 1], L[bi, 2])
            wi = _mv(R[bi], b[0] * Jinv[bi, 0], b[1] * Jinv[bi, 1], b[2] * Jinv[bi, 2])
        else:
            wi = (0.0, 0.0, 0.0)
        if bo >= 0:
            b = _mtv(R[bo], L[bo, 0], L[bo, 1], L[bo, 2])
            wo = _mv(R[bo], b[0] * Jinv[bo, 0], b[1] * Jinv[bo, 1], b[2] * Jinv[bo, 2])
        else:
            wo = (0.0, 0.0, 0.0)
        lam = 0.0
        rate = 0.0
        if kind == U_TRANS:
            q = e0 * js[4, 0] + e1 * js[4, 1] + e2 * js[4, 2]
            if bi >= 0:
                c = _cr(wi[0], wi[1], wi[2], js[2, 0], js[2, 1], js[2, 2])
                rate += e0 * (v[bi, 0] + c[0]) + e1 * (v[bi, 1] + c[1]) + e2 * (v[bi, 2] + c[2])
                c = _cr(js[2, 0], js[2, 1], js[2, 2], e0, e1, e2)
                lam += 1.0 / mass[bi] + _inv_inertia(R, Jinv, bi, c[0], c[1], c[2])
            if bo >= 0:
                c = _cr(wo[0], wo[1], wo[2], js[3, 0], js[3, 1], js[3, 2])
                rate -= e0 * (v[bo, 0] + c[0]) + e1 * (v[bo, 1] + c[1]) + e2 * (v[bo, 2] + c[2])
                c = _cr(js[3, 0], js[3, 1], js[3, 2], e0, e1, e2)
                lam += 1.0 / mass[bo] + _inv_inertia(R, Jinv, bo, c[0], c[1], c[2])
        else:
            q = qt[uq[u]]
            rate = e0 * (wi[0] - wo[0]) + e1 * (wi[1] - wo[1]) + e2 * (wi[2] - wo[2])
            if bi >= 0:
                lam += _inv_inertia(R, Jinv, bi, e0, e1, e2)
            if bo >= 0:
                lam += _inv_inertia(R, Jinv, bo, e0, e1, e2)
        if lam <= 0.0:
            continue
        P = ((drvn[drv_col[d]] - q) / h - rate) / lam
        p0, p1, p2 = P * e0, P * e1, P * e2
        if kind == U_TRANS:
            if bi >= 0:
                c = _cr(js[2, 0], js[2, 1], js[2, 2], p0, p1, p2)
                mi = 1.0 / mass[bi]
                v[bi, 0] += p0 * mi
                v[bi, 1] += p1 * mi
                v[bi, 2] += p2 * mi
                L[bi, 0] += c[0]
                L[bi, 1] += c[1]
                L[bi, 2] += c[2]
            if bo >= 0:
                c = _cr(js[3, 0], js[3, 1], js[3, 2], p0, p1, p2)
                mo = 1.0 / mass[bo]
                v[bo, 0] -= p0 * mo
                v[bo, 1] -= p1 * mo
                v[bo, 2] -= p2 * mo
                L[bo, 0] -= c[0]
                L[bo, 1] -= c[1]
                L[bo, 2] -= c[2]
            Wh[j, 3] += p0 / h
            Wh[j, 4] += p1 / h
            Wh[j, 5] += p2 / h
        else:
            if bi >= 0:
                L[bi, 0] += p0
                L[bi, 1] += p1
                L[bi, 2] += p2
            if bo >= 0:
                L[bo, 0] -= p0
                L[bo, 1] -= p1
                L[bo, 2] -= p2
            Wh[j, 0] += p0 / h
            Wh[j, 1] += p1 / h
            Wh[j, 2] += p2 / h
        tau[u] += P / h


@njit(**_JIT)
def _positions(x, R, v, L, Jinv, h, ortho):
    """x += h v; R <- R exp(~w_b h) with w_b from the (new) angular momentum."""
    for i in range(x.shape[0]):
        for a in range(3):
            x[i, a] += h * v[i, a]
        Ri = R[i]
        b = _mtv(Ri, L[i, 0], L[i, 1], L[i, 2])
        x0, x1, x2 = b[0] * Jinv[i, 0] * h, b[1] * Jinv[i, 1] * h, b[2] * Jinv[i, 2] * h
        th2 = x0 * x0 + x1 * x1 + x2 * x2
        if th2 < 1e-4:
            # sin(t)/t and (1 - cos(t))/t^2 by their series (exact to round-off for t < 1e-2)
            sa = 1.0 - th2 / 6.0 * (1.0 - th2 / 20.0)
            ca = 0.5 - th2 / 24.0 * (1.0 - th2 / 30.0)
        else:
            th = np.sqrt(th2)
            sa = np.sin(th) / th
            ca = (1.0 - np.cos(th)) / th2
        # E = I + sa ~x + ca ~x^2
        e00 = 1.0 - ca * (x1 * x1 + x2 * x2)
        e11 = 1.0 - ca * (x0 * x0 + x2 * x2)
        e22 = 1.0 - ca * (x0 * x0 + x1 * x1)
        e01 = -sa * x2 + ca * x0 * x1
        e10 = sa * x2 + ca * x0 * x1
        e02 = sa * x1 + ca * x0 * x2
        e20 = -sa * x1 + ca * x0 * x2
        e12 = -sa * x0 + ca * x1 * x2
        e21 = sa * x0 + ca * x1 * x2
        for a in range(3):
            r0, r1, r2 = Ri[a, 0], Ri[a, 1], Ri[a, 2]
            Ri[a, 0] = r0 * e00 + r1 * e10 + r2 * e20
            Ri[a, 1] = r0 * e01 + r1 * e11 + r2 * e21
            Ri[a, 2] = r0 * e02 + r1 * e12 + r2 * e22
        if ortho:
            # Gram-Schmidt on the columns
            n = np.sqrt(Ri[0, 0] ** 2 + Ri[1, 0] ** 2 + Ri[2, 0] ** 2)
            for a in range(3):
                Ri[a, 0] /= n
            d = Ri[0, 0] * Ri[0, 1] + Ri[1, 0] * Ri[1, 1] + Ri[2, 0] * Ri[2, 1]
            for a in range(3):
                Ri[a, 1] -= d * Ri[a, 0]
            n = np.sqrt(Ri[0, 1] ** 2 + Ri[1, 1] ** 2 + Ri[2, 1] ** 2)
            for a in range(3):
                Ri[a, 1] /= n
            c = _cr(Ri[0, 0], Ri[1, 0], Ri[2, 0], Ri[0, 1], Ri[1, 1], Ri[2, 1])
            Ri[0, 2], Ri[1, 2], Ri[2, 2] = c


# row layout of a recorded instant: offsets in W.lay
L_X, L_R, L_V, L_W, L_A, L_AL, L_Q, L_U, L_UD, L_TAU, L_WH, L_FA, L_TA, L_CL, L_LEN = range(15)


@njit(**_JIT)
def _record(S, Bd, Jt, W, row, h):
    """Write the instant of the state before this step into ``row`` (see :data:`L_X` ...).

    Called after the velocity update and the drivers of the step: the accelerations are those
    of the step, ``(v_new - v) / h`` and ``J^-1 (T - w x L)`` with ``T = (L_new - L) / h``.
    W.v0, W.L0 hold the velocities before the step, W.wg its angular velocities, W.Fa, W.Ta the
    applied loads, W.Wh and W.tau the hinges' loads.
    """
    lay = W.lay
    n = Bd.mass.size
    x, R, v, L, qt = S.x, S.R, S.v, S.L, S.qt
    wg, v0, L0 = W.wg, W.v0, W.L0
    for i in range(n):
        Ri = R[i]
        t0 = (L[i, 0] - L0[i, 0]) / h
        t1 = (L[i, 1] - L0[i, 1]) / h
        t2 = (L[i, 2] - L0[i, 2]) / h
        c = _cr(wg[i, 0], wg[i, 1], wg[i, 2], L0[i, 0], L0[i, 1], L0[i, 2])
        b = _mtv(Ri, t0 - c[0], t1 - c[1], t2 - c[2])
        al = _mv(Ri, b[0] * Bd.Jinv[i, 0], b[1] * Bd.Jinv[i, 1], b[2] * Bd.Jinv[i, 2])
        for a in range(3):
            W.acc[i, a] = (v[i, a] - v0[i, a]) / h
            W.alpha[i, a] = al[a]
            row[lay[L_X] + 3 * i + a] = x[i, a]
            row[lay[L_V] + 3 * i + a] = v0[i, a]
            row[lay[L_W] + 3 * i + a] = wg[i, a]
            row[lay[L_A] + 3 * i + a] = W.acc[i, a]
            row[lay[L_AL] + 3 * i + a] = al[a]
            row[lay[L_FA] + 3 * i + a] = W.Fa[i, a]
            row[lay[L_TA] + 3 * i + a] = W.Ta[i, a]
            for b2 in range(3):
                row[lay[L_R] + 9 * i + 3 * a + b2] = Ri[a, b2]
    acc, alpha = W.acc, W.alpha
    A, B, js = W.tA, W.tB, W.js
    for j in range(Jt.bi.size):
        _frame_pos(j, x, R, Jt.bi, Jt.bo, Jt.Ri, Jt.pi, Jt.Ro, Jt.po, A, B, js)
        bi, bo = Jt.bi[j], Jt.bo[j]
        # velocities before the step; accelerations of the step:
        # aB(pB) = a_i + al_i x rB + w_i x (w_i x rB);
        # d/dt vA(pB) = a_o + al_o x sA + w_o x (vB(pB) - v_o)
        if bi >= 0:
            wi0, wi1, wi2 = wg[bi, 0], wg[bi, 1], wg[bi, 2]
            c2 = _cr(wi0, wi1, wi2, js[2, 0], js[2, 1], js[2, 2])
            vb = (v0[bi, 0] + c2[0], v0[bi, 1] + c2[1], v0[bi, 2] + c2[2])
            c1 = _cr(alpha[bi, 0], alpha[bi, 1], alpha[bi, 2], js[2, 0], js[2, 1], js[2, 2])
            c3 = _cr(wi0, wi1, wi2, c2[0], c2[1], c2[2])
            ab = (acc[bi, 0] + c1[0] + c3[0], acc[bi, 1] + c1[1] + c3[1],
                  acc[bi, 2] + c1[2] + c3[2])
            ali = (alpha[bi, 0], alpha[bi, 1], alpha[bi, 2])
        else:
            wi0 = wi1 = wi2 = 0.0
            vb = ab = ali = (0.0, 0.0, 0.0)
        if bo >= 0:
            wo0, wo1, wo2 = wg[bo, 0], wg[bo, 1], wg[bo, 2]
            c2 = _cr(wo0, wo1, wo2, js[3, 0], js[3, 1], js[3, 2])
            va = (v0[bo, 0] + c2[0], v0[bo, 1] + c2[1], v0[bo, 2] + c2[2])
            c1 = _cr(alpha[bo, 0], alpha[bo, 1], alpha[bo, 2], js[3, 0], js[3, 1], js[3, 2])
            c2 = _cr(wo0, wo1, wo2, vb[0] - v0[bo, 0], vb[1] - v0[bo, 1], vb[2] - v0[bo, 2])
            aa = (acc[bo, 0] + c1[0] + c2[0], acc[bo, 1] + c1[1] + c2[1],
                  acc[bo, 2] + c1[2] + c2[2])
            alo = (alpha[bo, 0], alpha[bo, 1], alpha[bo, 2])
        else:
            wo0 = wo1 = wo2 = 0.0
            va = aa = alo = (0.0, 0.0, 0.0)
        dv0, dv1, dv2 = vb[0] - va[0], vb[1] - va[1], vb[2] - va[2]
        dw0, dw1, dw2 = wi0 - wo0, wi1 - wo1, wi2 - wo2
        dd0, dd1, dd2 = ab[0] - aa[0], ab[1] - aa[1], ab[2] - aa[2]
        ar0, ar1, ar2 = ali[0] - alo[0], ali[1] - alo[1], ali[2] - alo[2]
        o = Jt.uo[j]
        for c_i in range(Jt.nu[j]):
            u = o + c_i
            kind, ax = Jt.ukind[u], Jt.uaxis[u]
            e0, e1, e2 = _axis(kind, ax, A, B)
            if kind == U_TRANS:
                q = e0 * js[4, 0] + e1 * js[4, 1] + e2 * js[4, 2]
                rate = e0 * dv0 + e1 * dv1 + e2 * dv2
                k = _cr(wo0, wo1, wo2, e0, e1, e2)
                ud = k[0] * dv0 + k[1] * dv1 + k[2] * dv2 + e0 * dd0 + e1 * dd1 + e2 * dd2
            else:
                q = qt[Jt.uq[u]] if kind != U_ROTV else 0.0
                rate = e0 * dw0 + e1 * dw1 + e2 * dw2
                if kind == U_RY:
                    k = _cr(wi0, wi1, wi2, e0, e1, e2)
                else:
                    k = _cr(wo0, wo1, wo2, e0, e1, e2)
                ud = k[0] * dw0 + k[1] * dw1 + k[2] * dw2 + e0 * ar0 + e1 * ar1 + e2 * ar2
            if kind != U_ROTV:
                row[lay[L_Q] + Jt.uq[u]] = q
            row[lay[L_U] + u] = rate
            row[lay[L_UD] + u] = ud
            row[lay[L_TAU] + u] = W.tau[u]
        if Jt.quat[j]:
            C = W.tC
            for a in range(3):
                for b in range(3):
                    C[a, b] = A[0, a] * B[0, b] + A[1, a] * B[1, b] + A[2, a] * B[2, b]
            qw, qx, qy, qz = _quaternion(C)
            iq = Jt.qo[j] + (0 if Jt.nu[j] == 3 else 3)
            if qw * qt[iq] + qx * qt[iq + 1] + qy * qt[iq + 2] + qz * qt[iq + 3] < 0.0:
                qw, qx, qy, qz = -qw, -qx, -qy, -qz
            qt[iq], qt[iq + 1], qt[iq + 2], qt[iq + 3] = qw, qx, qy, qz
            for a in range(4):
                row[lay[L_Q] + iq + a] = qt[iq + a]
        for a in range(6):
            row[lay[L_WH] + 6 * j + a] = W.Wh[j, a]
        for a in range(4):
            row[lay[L_CL] + 4 * j + a] = W.clos[j, a]


@njit(**_JIT)
def ne_run(S, Bd, Jt, Ld, W, k0, nsteps, h, mags, drvn, out, every, record_last, ortho_every,
           track_every, refresh_every):
    """``nsteps`` steps of length ``h`` from the state S (updated in place), step index ``k0``.

    ``mags[s]`` holds the force magnitudes at the time of step ``k0 + s`` and ``drvn[s]`` the
    driven coordinates one step later (s = 0 .. nsteps). The state before every step whose index
    is a multiple of ``every`` (0: never) is written to the next row of ``out``; with
    ``record_last`` the state after the last step is written too (evaluated, not advanced).
    Angles of hinges without spring or driver are unwrapped every ``track_every`` steps (and at
    every record), the joints' effective masses refreshed every ``refresh_every`` steps (and at
    the first). Returns the number of rows written.
    """
    x, R, v, L, qt = S.x, S.R, S.v, S.L, S.qt
    mass, Jinv = Bd.mass, Bd.Jinv
    wg, F, T, Wh, tau, v0, L0 = W.wg, W.F, W.T, W.Wh, W.tau, W.v0, W.L0
    A, B, C, js = W.tA, W.tB, W.tC, W.js
    g0, g1, g2 = Ld.gravity[0], Ld.gravity[1], Ld.gravity[2]
    forces = Ld.pf_body.size + Ld.sd_bi.size + Ld.rs_bi.size > 0
    n = mass.size
    written = 0
    for s in range(nsteps + 1):
        k = k0 + s
        last = s == nsteps
        if last:
            rec = record_last
        else:
            rec = every > 0 and k % every == 0
        if last and not rec:
            break
        _omegas(R, L, Jinv, wg)
        if forces:
            # the bodies' frames are their central frames: origin, mass centre and reference
            # point are all x
            applied_loads(mags[s], Ld, mass, R, x, x, x, wg, v, F, T)
        else:
            for i in range(n):
                m = mass[i]
                F[i, 0], F[i, 1], F[i, 2] = m * g0, m * g1, m * g2
                T[i, 0] = T[i, 1] = T[i, 2] = 0.0
        if rec:
            for i in range(n):
                for a in range(3):
                    W.Fa[i, a] = F[i, a]
                    W.Ta[i, a] = T[i, a]
        track = rec or k % track_every == 0
        refresh = k % refresh_every == 0
        _joints(x, R, v, wg, F, T, qt, mass, Jinv, Jt.bi, Jt.bo, Jt.Ri, Jt.pi, Jt.Ro, Jt.po,
                Jt.om, Jt.zc, Jt.tmask, Jt.rmode, Jt.uo, Jt.nu, Jt.hflag, Jt.quat, Jt.ukind,
                Jt.uaxis, Jt.uq, Jt.hk, Jt.hc, Jt.href, Jt.hRref, Wh, tau, A, B, C, W.kE, W.kP,
                W.kG, W.Meff, W.dMeff, W.nkj, W.age, W.ky, W.clos, refresh, track, rec)
        for i in range(n):
            mi = h / mass[i]
            for a in range(3):
                v0[i, a] = v[i, a]
                L0[i, a] = L[i, a]
                v[i, a] += mi * F[i, a]
                L[i, a] += h * T[i, a]
        if Jt.drv_u.size:
            _drivers(x, R, v, L, mass, Jinv, qt, Jt.bi, Jt.bo, Jt.Ri, Jt.pi, Jt.Ro, Jt.po,
                     Jt.ukind, Jt.uaxis, Jt.uq, Jt.drv_u, Jt.drv_j, Jt.drv_col, drvn[s], Wh, tau,
                     A, B, js, h)
        if rec:
            _record(S, Bd, Jt, W, out[written], h)
            written += 1
        if last:
            for i in range(n):
                for a in range(3):
                    v[i, a] = v0[i, a]
                    L[i, a] = L0[i, a]
            break
        _positions(x, R, v, L, Jinv, h, (k + 1) % ortho_every == 0)
    return written


# --------------------------------------------------------------------------------------------------
# assembly
# --------------------------------------------------------------------------------------------------

def _ints(v):
    return np.array(v, dtype=np.int64)


def _floats(v, shape):
    return np.array(v, dtype=float).reshape((len(v),) + shape)


class NewtonEuler:
    """A model assembled for the discrete-time Newton-Euler method.

    Parameters
    ----------
    model : MultibodySystem
        A valid model: any topology (trees, closed loops, bodies not connected to the ground).
    step : float
        The step h (s) the joints' default stiffness is made for (1e-5 to 1e-7 s).
    joint_fraction : float, optional
        Natural frequency of the joints as a fraction of the Nyquist limit pi/h
        (default :data:`JOINT_FRACTION`).
    joint_frequency : float, optional
        The joints' natural frequency in Hz instead (independent of the step).
    joint_damping_ratio : float, optional
        Damping ratio of the joints (default 1, critical).
    topology : Topology, optional

    The attributes ``model``, ``index``, ``hinges``, ``tree`` (a :data:`Layout`), ``forces`` and
    :meth:`instant` are what :class:`~.results.Recorder` reads: results come out in the same
    columns as the other methods'. ``hinges`` lists every hinge (tree, cut, elastic closures and
    hinges among bodies not connected to the ground), the state ``y = [q; u]`` the hinge
    coordinates and rates in the layout of :mod:`.system` (quaternions for spherical, free,
    bushing), measured from the bodies. In the :class:`~.system.Instant` of this method the
    point ``hp`` of a body is its mass centre (``vh`` its velocity, ``x = [alpha; a]`` there) and
    ``Wh`` has one row per hinge of ``hinges``: the wrench ``[torque; force]`` the hinge applies
    on its input body at its input marker's origin (``Wcut`` is empty: cut hinges are in ``Wh``).

    Use :func:`run` (or ``simulate(model, method="newton-euler")``) for a whole run; by hand::

        ne = NewtonEuler(model, 1e-5)
        rows = ne.advance(1000, every=100)       # compiled steps; rows of the states on the way
        inst = ne.instant(ne.t)                   # the Instant of the current state
    """

    def __init__(self, model: MultibodySystem, step: float = 1e-5, joint_fraction=None,
                 joint_frequency=None, joint_damping_ratio=None,
                 topology: Topology | None = None):
        model.check()
        self.model = model
        self.topology = topo = topology or analyse(model)
        self.step = float(step)
        if not (math.isfinite(self.step) and self.step > 0):
            raise ValueError(f"step {step!r}: must be a positive number")
        self.bodies = list(topo.bodies) + list(topo.islands)
        self.index = {b: i for i, b in enumerate(self.bodies)}
        unused = [h for h in topo.unused_hinges
                  if model.hinge(h).input.body != model.hinge(h).output.body]
        self.hinges = ([topo.parent_hinge[b] for b in topo.bodies] + list(topo.cut_hinges)
                       + list(topo.elastic_closures) + unused)
        self._build_bodies()
        self._build_joints()
        self._build_loads()
        self.set_joint_parameters(joint_fraction, joint_frequency, joint_damping_ratio)
        self._build_work()
        self.compile_time_functions = False      # see COMPILE_SAMPLES
        self._compiled = {}
        self.reset()

    # -- assembly -----------------------------------------------------------------------------
    def _build_bodies(self):
        n = len(self.bodies)
        self.mass = np.zeros(n)
        self.rc = np.zeros((n, 3))
        self.JCl = np.zeros((n, 3, 3))
        self.P = np.zeros((n, 3, 3))
        Jd = np.zeros((n, 3))
        for i, name in enumerate(self.bodies):
            b = self.model.body(name)
            self.mass[i] = b.mass
            self.rc[i] = b.mass_center.position
            J = parallel_axis(inertia_vector_to_tensor(b.inertia), -b.mass, self.rc[i])
            self.JCl[i] = J
            vals, vecs = np.linalg.eigh(0.5 * (J + J.T))
            if np.linalg.det(vecs) < 0:
                vecs[:, 2] = -vecs[:, 2]
            if vals[0] <= 0:
                raise ModelError([Problem(f"RigidBody '{name}'", "JI",
                                          "the inertia about the mass centre is not positive "
                                          "definite")])
            Jd[i] = vals
            self.P[i] = vecs
        self.Bd = Bodies(self.mass.copy(), Jd, 1.0 / Jd if n else Jd.copy())

    def _kmarker(self, ref):
        """(body index or -1, R, p): the marker in its body's central principal frame (the
        ground's in global axes)."""
        i, Rl, pl = self._bmarker(ref)
        if i < 0:
            return i, Rl, pl
        return i, self.P[i].T @ Rl, self.P[i].T @ (pl - self.rc[i])

    def _bmarker(self, ref):
        """(body index or -1, R, p): the marker in its body's base frame (ground: global)."""
        return marker_attachment(self.model, self.index, ref)

    def _build_joints(self):
        model = self.model
        cols = {k: [] for k in ("bi", "bo", "Ri", "pi", "Ro", "po", "tmask", "rmode", "qo", "uo",
                                "nq", "nu", "hspring", "quat", "hRref")}
        per_u = {k: [] for k in ("ukind", "uaxis", "uq", "uj", "hk", "hc", "href")}
        self.drivers = []              # (hinge, coordinate, TimeFunction)
        drv_u, drv_j = [], []
        problems = []
        qo = uo = 0
        for j, name in enumerate(self.hinges):
            h = model.hinge(name)
            kind = HINGE_TYPES[h.type]
            bi, Ri, pi = self._kmarker(h.input)
            bo, Ro, po = self._kmarker(h.output)
            tmask, rmode = _BLOCKED[h.type]
            quat = h.type in _QUAT_TYPES
            if h.type == "spherical":
                nq, nu = 4, 3
            elif quat:
                nq, nu = 7, 6
            else:
                nq = nu = kind.dof
            for key, val in (("bi", bi), ("bo", bo), ("Ri", Ri), ("pi", pi), ("Ro", Ro),
                             ("po", po), ("tmask", tmask), ("rmode", rmode), ("qo", qo),
                             ("uo", uo), ("nq", nq), ("nu", nu), ("quat", int(quat))):
                cols[key].append(val)
            hk, hc = h.vector("stiffness"), h.vector("damping")
            ref = h.vector("spring_reference")
            cols["hRref"].append(bryant_to_matrix(ref[-3:]) if quat and h.spring_reference
                                 is not None else np.eye(3))
            cols["hspring"].append(int(np.any(hk != 0.0) or np.any(hc != 0.0)))
            if h.type == "spherical":
                kinds = [(U_ROTV, a, -1) for a in range(3)]
            elif quat:
                kinds = [(U_TRANS, a, qo + a) for a in range(3)] + [(U_ROTV, a, -1)
                                                                    for a in range(3)]
            else:
                kinds = [_KIND_OF[c] + (qo + c_i,) for c_i, c in enumerate(kind.coordinates)]
            for c_i, (kd, ax, iq) in enumerate(kinds):
                per_u["ukind"].append(kd)
                per_u["uaxis"].append(ax)
                per_u["uq"].append(iq)
                per_u["uj"].append(j)
                per_u["hk"].append(hk[c_i] if c_i < hk.size else 0.0)
                per_u["hc"].append(hc[c_i] if c_i < hc.size else 0.0)
                per_u["href"].append(ref[c_i] if (kd == U_TRANS or not quat) and c_i < ref.size
                                     else 0.0)
            for d in h.drivers:
                if quat:
                    problems.append(Problem(f"Hinge '{h.name}'", "Driver",
                                            f"a {h.type} hinge cannot be driven"))
                    continue
                c_i = kind.coordinates.index(d.coordinate)
                drv_u.append(uo + c_i)
                drv_j.append(j)
                self.drivers.append((h.name, d.coordinate,
                                     parse(d.expression, f"Hinge '{h.name}'", "Driver")))
            qo += nq
            uo += nu
        if problems:
            raise ModelError(problems)
        self.nq_tot, self.nu_tot = qo, uo
        nh = len(self.hinges)
        ukind = _ints(per_u["ukind"])
        # bit 1: the hinge has a spring or damper; bit 2: its angles are tracked every step
        hflag = _ints(cols["hspring"])
        hflag = hflag | (2 * (hflag | np.isin(np.arange(nh), drv_j))).astype(np.int64)
        self.Jt = Joints(
            _ints(cols["bi"]), _ints(cols["bo"]), _floats(cols["Ri"], (3, 3)),
            _floats(cols["pi"], (3,)), _floats(cols["Ro"], (3, 3)), _floats(cols["po"], (3,)),
            np.zeros(nh), np.zeros(nh),
            _ints(cols["tmask"]).reshape(nh, 3), _ints(cols["rmode"]), _ints(cols["qo"]),
            _ints(cols["uo"]), _ints(cols["nu"]), _ints(cols["hspring"]), ukind,
            _ints(per_u["uaxis"]), _ints(per_u["uq"]), _ints(per_u["uj"]),
            _floats(per_u["hk"], ()), _floats(per_u["hc"], ()), _floats(per_u["href"], ()),
            _floats(cols["hRref"], (3, 3)), _ints(cols["quat"]), _ints(drv_u), _ints(drv_j),
            np.arange(len(drv_u), dtype=np.int64), hflag)
        self.tree = Layout(self.Jt.qo, self.Jt.uo, _ints(cols["nq"]), self.Jt.nu, np.ones(nh),
                           self.Jt.hk, self.Jt.hc, self.Jt.href, self.Jt.hRref, self.mass,
                           self.JCl)

    def _build_loads(self):
        model = self.model
        self.magnitudes = []

        def magnitude(f):
            text = f.magnitude
            if text.strip() in ("", "0"):
                return -1
            self.magnitudes.append(parse(text, f"Force '{f.name}'", "Magnitude"))
            return len(self.magnitudes) - 1

        index = {}

        def once(f):                   # one magnitude index for both structs
            if id(f) not in index:
                index[id(f)] = magnitude(f)
            return index[id(f)]

        distance = drawn_distance_of(model)
        # the kernel's markers in the bodies' central principal frames, the Recorder's in their
        # base frames
        self.Ld = forces.pack(model, self._kmarker, once, distance)
        self.forces = forces.pack(model, self._bmarker, once, distance)

    def set_joint_parameters(self, fraction=None, frequency=None, damping_ratio=None):
        """The joints' natural frequency and damping (see the module docstring).

        ``fraction`` of the Nyquist limit pi/h (default :data:`JOINT_FRACTION`), or
        ``frequency`` in Hz; ``damping_ratio`` (default 1). A hinge on bodies held by at most
        ``n`` penalty groups gets ``w_J / sqrt(n)``. Fills ``self.joint_parameters``: hinge name
        -> (natural frequency Hz, damping ratio).
        """
        fraction = JOINT_FRACTION if fraction is None else float(fraction)
        zeta = JOINT_DAMPING_RATIO if damping_ratio is None else float(damping_ratio)
        if frequency is not None:
            omega = 2.0 * np.pi * float(frequency)
        else:
            omega = fraction * np.pi / self.step
        if not (math.isfinite(omega) and omega > 0 and zeta >= 0):
            raise ValueError("the joint frequency must be positive and the damping ratio >= 0")
        self.joint_omega, self.joint_zeta = omega, zeta
        Jt = self.Jt
        n, nh = self.mass.size, Jt.bi.size
        groups = np.zeros(n)
        for j in range(nh):
            if Jt.tmask[j].any() or Jt.rmode[j] != R_NONE:
                for b in (Jt.bi[j], Jt.bo[j]):
                    if b >= 0:
                        groups[b] += 1
        self.joint_parameters = {}
        for j in range(nh):
            nj = max([groups[b] for b in (Jt.bi[j], Jt.bo[j]) if b >= 0] + [1.0])
            Jt.om[j] = omega / np.sqrt(nj)
            Jt.zc[j] = 2.0 * zeta * Jt.om[j] * Jt.om[j] / omega
            self.joint_parameters[self.hinges[j]] = (float(Jt.om[j] / (2 * np.pi)),
                                                     float(zeta * Jt.om[j] / omega))

    def joint_stiffness(self, hinge: str) -> np.ndarray:
        """The penalty stiffness of a hinge at the current state, (6, 6).

        Rows and columns ``[rx, ry, rz, x, y, z]``: rotations (N m/rad) and translations (N/m)
        of the input marker relative to the output marker about and along the output marker's
        axes (a universal hinge's blocked rotation about ``n = xA x yB`` is put on rz); zero for
        the free directions. The damping is ``2 zeta w_j / w_J`` times it, w_j the hinge's
        frequency. As the compiled kernel computes it (see the module docstring).
        """
        j = self.hinges.index(hinge)
        Jt, S = self.Jt, self.S
        A, _ = self._frame(j, "o")
        B, pB = self._frame(j, "i")
        rows, trans = [], []
        mode = Jt.rmode[j]
        if mode in (R_AXIS, R_FULL):
            rows += [A[:, a] for a in range(2 if mode == R_AXIS else 3)]
            trans += [False] * (2 if mode == R_AXIS else 3)
        elif mode == R_CROSS:
            n = np.cross(A[:, 0], B[:, 1])
            rows.append(n / np.linalg.norm(n))
            trans.append(False)
        idx = list(range(len(rows)))
        if mode == R_CROSS:
            idx = [2]
        for a in range(3):
            if Jt.tmask[j, a]:
                rows.append(A[:, a])
                trans.append(True)
                idx.append(3 + a)
        K = np.zeros((6, 6))
        if not rows:
            return K
        G = np.zeros((len(rows), len(rows)))
        for b in (Jt.bi[j], Jt.bo[j]):
            if b < 0:
                continue
            Jg = S.R[b] @ np.diag(self.Bd.Jinv[b]) @ S.R[b].T
            arm = pB - S.x[b]
            ang = np.array([np.cross(arm, e) if t else e for e, t in zip(rows, trans)])
            lin = np.array([e if t else np.zeros(3) for e, t in zip(rows, trans)])
            G += ang @ Jg @ ang.T + lin @ lin.T / self.mass[b]
        K[np.ix_(idx, idx)] = Jt.om[j] ** 2 * np.linalg.inv(G)
        return K

    def _frame(self, j, side):
        """(R, p) of hinge j's output ('o') or input ('i') marker at the current state."""
        Jt, S = self.Jt, self.S
        b, Rl, pl = ((Jt.bo[j], Jt.Ro[j], Jt.po[j]) if side == "o"
                     else (Jt.bi[j], Jt.Ri[j], Jt.pi[j]))
        if b < 0:
            return Rl, pl
        return S.R[b] @ Rl, S.x[b] + S.R[b] @ pl

    def _build_work(self):
        n, nh = self.mass.size, self.Jt.bi.size
        z = np.zeros
        lay = np.zeros(15, dtype=np.int64)
        sizes = [3 * n, 9 * n, 3 * n, 3 * n, 3 * n, 3 * n, self.nq_tot, self.nu_tot,
                 self.nu_tot, self.nu_tot, 6 * nh, 3 * n, 3 * n, 4 * nh]
        lay[1:15] = np.cumsum(sizes)
        self.row_length = int(lay[L_LEN])
        self.W = Work(z((n, 3)), z((n, 3)), z((n, 3)), z((n, 3)), z((n, 3)), z((nh, 6)),
                      z(self.nu_tot), z((n, 3)), z((n, 3)), z((n, 3)), z((n, 3)), z((3, 3)),
                      z((3, 3)), z((3, 3)), z((6, 3)), z((6, 3)), z((6, 6)), z((nh, 6, 6)),
                      z((nh, 6, 6)), np.full(nh, -1, dtype=np.int64),
                      np.zeros(nh, dtype=np.int64), z((6, 4)), z((nh, 4)), z((10, 3)), lay)

    # -- the initial state --------------------------------------------------------------------
    def initial_body_states(self):
        """Base-frame poses and twists at t = 0: dict body -> (R, p, w, v of the base origin)."""
        model, topo = self.model, self.topology
        slices = coordinate_slices(model, topo)
        q0 = initial_coordinates(model, topo)
        qd0 = np.zeros_like(q0)
        fixed_q = np.zeros(q0.size, dtype=bool)
        fixed_u = np.zeros(q0.size, dtype=bool)
        for name in topo.tree_hinges:
            h = model.hinge(name)
            s = slices[name]
            if h.initial_rates is not None:
                qd0[s] = h.initial_rates
                fixed_u[s] = True
            if h.initial_coordinates is not None:
                fixed_q[s] = True
            coords = HINGE_TYPES[h.type].coordinates
            for d in h.drivers:
                f = parse(d.expression, f"Hinge '{name}'", "Driver")
                c = s.start + coords.index(d.coordinate)
                q0[c], qd0[c] = f(0.0), f.derivative(1)(0.0)
                fixed_q[c] = fixed_u[c] = True
        if topo.cut_hinges:
            q0 = self._close_loops(q0, fixed_q)
        poses = forward_kinematics(model, topo, q0)
        if topo.cut_hinges:
            J, _ = loop_jacobian(model, topo, q0, poses)
            free = ~fixed_u
            if J.size and free.any():
                res = J @ qd0
                qd0[free] -= _least_squares(self, J[:, free], res, "InitialRates")
        self._apply_body_velocities(q0, qd0, poses, slices)
        out = {}
        for b in topo.bodies:
            R, p = poses[b]
            tw = twist_jacobian(model, topo, b, q0, poses, p) @ qd0
            out[b] = (R, p, tw[:3], tw[3:])
        for b in topo.islands:
            body = model.body(b)
            R, p = poses[b]
            w = (body.initial_angular_velocity if body.initial_angular_velocity is not None
                 else np.zeros(3))
            v = body.initial_velocity if body.initial_velocity is not None else np.zeros(3)
            out[b] = (R, p, np.array(w, dtype=float), np.array(v, dtype=float))
        self._q0 = q0
        return out

    def _close_loops(self, q, fixed):
        """The coordinates ``q`` with the free ones (not ``fixed``) moved to close the loops
        (Newton's iterations); ModelError naming the cut hinges when the iterations meet values
        that are not finite."""
        model, topo = self.model, self.topology
        free = ~fixed if (~fixed).any() else np.ones(q.size, dtype=bool)
        q = q.copy()
        for _ in range(30):
            poses = forward_kinematics(model, topo, q)
            r = loop_residual(model, topo, poses)
            if r.size == 0 or np.max(np.abs(r)) < 1e-13:
                break
            J, _ = loop_jacobian(model, topo, q, poses)
            q[free] -= _least_squares(self, J[:, free], r, "InitialCoordinates")
        return q

    def _apply_body_velocities(self, q0, qd0, poses, slices):
        """Bodies with an initial velocity set it through their free (or bushing) tree hinge."""
        model, topo = self.model, self.topology
        problems = []
        for b in topo.bodies:
            body = model.body(b)
            if body.initial_velocity is None and body.initial_angular_velocity is None:
                continue
            h = model.hinge(topo.parent_hinge[b])
            if h.type not in ("free", "bushing"):
                problems.append(Problem(f"RigidBody '{b}'", "InitialVelocity",
                                        f"the body's tree hinge '{h.name}' is {h.type}: set its "
                                        "InitialRates instead (a body velocity needs a free "
                                        "hinge)"))
                continue
            p = poses[b].p
            tw = twist_jacobian(model, topo, b, q0, poses, p) @ qd0
            target = np.concatenate([
                body.initial_angular_velocity if body.initial_angular_velocity is not None
                else tw[:3],
                body.initial_velocity if body.initial_velocity is not None else tw[3:]])
            S = motion_subspace(model, topo, h.name, q0, poses, p)
            qd0[slices[h.name]] += np.linalg.lstsq(S, target - tw, rcond=None)[0]
        if problems:
            raise ModelError(problems)

    def reset(self):
        """Put the state back to t = 0."""
        states = self.initial_body_states()
        n = self.mass.size
        x, R, v, L = np.zeros((n, 3)), np.zeros((n, 3, 3)), np.zeros((n, 3)), np.zeros((n, 3))
        for i, b in enumerate(self.bodies):
            Rb, pb, w, vb = states[b]
            x[i] = pb + Rb @ self.rc[i]
            v[i] = vb + np.cross(w, x[i] - pb)
            R[i] = Rb @ self.P[i]
            L[i] = R[i] @ (self.Bd.Jd[i] * (R[i].T @ w))
        qt = np.zeros(self.nq_tot)
        poses = drawn_poses(self.model)
        poses.update({b: Pose(states[b][0], states[b][1]) for b in self.bodies})
        slices = coordinate_slices(self.model, self.topology)
        for j, name in enumerate(self.hinges):
            h = self.model.hinge(name)
            o = self.Jt.qo[j]
            if name in slices:
                qh = self._q0[slices[name]]
            else:
                qh = hinge_coordinates(self.model, h, poses)
            if h.type == "spherical":
                qt[o:o + 4] = bryant_to_quaternion(qh)
            elif h.type in ("free", "bushing"):
                qt[o:o + 3] = qh[:3]
                qt[o + 3:o + 7] = bryant_to_quaternion(qh[3:])
            else:
                qt[o:o + len(qh)] = qh
        self.S = State(x, R, v, L, qt)
        self.t = 0.0
        self.k = 0
        self._off_grid = False

    # -- stepping -----------------------------------------------------------------------------
    def finite(self) -> bool:
        """Whether the state (positions, rotations, velocities, momenta) is finite."""
        S = self.S
        return bool(np.all(np.isfinite(S.x)) and np.all(np.isfinite(S.v))
                    and np.all(np.isfinite(S.L)) and np.all(np.isfinite(S.R)))

    def snapshot(self):
        """A copy of everything :meth:`advance` changes, for :meth:`restore`."""
        return _copied(self.S), _copied(self.W), self.k, self.t, self._off_grid

    def restore(self, snapshot) -> None:
        """Go back to a :meth:`snapshot` (the steps after it are taken again bit for bit)."""
        S, W, self.k, self.t, self._off_grid = snapshot
        self.S, self.W = _copied(S), _copied(W)

    def _grids(self, ts, ts_next):
        """Force magnitudes at ``ts`` and driven coordinates at ``ts_next``."""
        compiled = self._compiled if self.compile_time_functions else None
        mags = np.zeros((ts.size, max(len(self.magnitudes), 1)))
        for c, f in enumerate(self.magnitudes):
            mags[:, c] = _sample(f, ts, compiled)
        drv = np.zeros((ts.size, max(len(self.drivers), 1)))
        for c, (_, _, f) in enumerate(self.drivers):
            drv[:, c] = _sample(f, ts_next, compiled)
        return mags, drv

    def advance(self, nsteps: int, h=None, every: int = 0, record_last: bool = False,
                k0=None) -> np.ndarray:
        """Take ``nsteps`` steps (of ``h``, default the step) in compiled code.

        Returns the recorded rows (see :meth:`instant_of_row`): the state before every step
        whose index is a multiple of ``every`` (0: none), and with ``record_last`` the state
        after the last step.
        """
        nominal = h is None
        h = self.step if nominal else float(h)
        k0 = self.k if k0 is None else k0
        t0 = k0 * h if nominal and not self._off_grid else self.t
        ts = t0 + h * np.arange(nsteps + 1)
        mags, drv = self._grids(ts, ts + self.step if nsteps == 0 else ts + h)
        if every > 0:
            nrec = len(range(-(-k0 // every) * every, k0 + nsteps, every))
        else:
            nrec = 0
        out = np.empty((nrec + (1 if record_last else 0), self.row_length))
        written = ne_run(self.S, self.Bd, self.Jt, self.Ld, self.W, k0, nsteps, h, mags, drv,
                         out, every, record_last, ORTHO_EVERY, TRACK_EVERY, REFRESH_EVERY)
        self.k = k0 + nsteps
        self.t = float(ts[-1])
        self._off_grid = self._off_grid or (not nominal and nsteps > 0)
        return out[:written]

    def instant_of_row(self, t: float, row: np.ndarray) -> Instant:
        """The :class:`~.system.Instant` of a recorded row (global axes, base frames)."""
        lay, n, nh = self.W.lay, self.mass.size, self.Jt.bi.size

        def blk(k, shape):
            return row[lay[k]:lay[k + 1]].reshape(shape)

        Rp = blk(L_R, (n, 3, 3))
        R = np.einsum("nij,nkj->nik", Rp, self.P)            # base frame = principal P^T
        pc = blk(L_X, (n, 3)).copy()
        pb = pc - np.einsum("nij,nj->ni", R, self.rc)
        x = np.concatenate([blk(L_AL, (n, 3)), blk(L_A, (n, 3))], axis=1)
        Wext = np.concatenate([blk(L_TA, (n, 3)), blk(L_FA, (n, 3))], axis=1)
        vals = dict(t=t, q=blk(L_Q, (-1,)).copy(), u=blk(L_U, (-1,)).copy(),
                    udot=blk(L_UD, (-1,)).copy(), R=R, pb=pb, pc=pc, hp=pc.copy(),
                    w=blk(L_W, (n, 3)).copy(), vh=blk(L_V, (n, 3)).copy(), x=x,
                    Wh=blk(L_WH, (nh, 6)).copy(), tau=blk(L_TAU, (-1,)).copy(), Wext=Wext,
                    Sg=np.zeros((n, 6, 6)), cg=np.zeros((n, 6)),
                    # cut hinges are hinges like the others here (their wrench is in Wh)
                    Wcut=np.zeros((0, 6)), loop_rank=0, phi=np.zeros(0))
        names = [f.name for f in dataclasses.fields(Instant)]
        return Instant(**{k: vals.get(k, np.zeros(0)) for k in names})

    def closure_of_row(self, row: np.ndarray) -> np.ndarray:
        """Per hinge (``hinges`` order): the norms of its blocked translations (m) and rotations
        (rad) and of their rates, shape (nh, 4), from a recorded row."""
        lay = self.W.lay
        return row[lay[L_CL]:lay[L_CL + 1]].reshape(-1, 4)

    @property
    def ny(self) -> int:
        """Length of the hinge-coordinate state ``[q; u]`` stored with the results."""
        return self.nq_tot + self.nu_tot

    def instant(self, t: float, y=None) -> Instant:
        """The instant of the current state (``t`` must be the current time; ``y`` is ignored:
        the method's state is the bodies', not the hinge coordinates)."""
        if abs(t - self.t) > 1e-9 * max(1.0, abs(t)):
            raise ValueError(f"the Newton-Euler state is at t = {self.t:g} s, not {t:g} s")
        row = self.advance(0, record_last=True)[0]
        return self.instant_of_row(self.t, row)

    @property
    def does_work(self) -> bool:
        """Whether drivers, forces with a magnitude or dampers do work (as
        :attr:`.system.System.does_work`; the penalty joints are not counted)."""
        Jt, F = self.Jt, self.forces
        return bool(self.drivers or np.any(Jt.hc != 0.0) or np.any(F.pf_mag >= 0)
                    or np.any(F.sd_mag >= 0) or np.any(F.sd_c != 0.0) or np.any(F.rs_c != 0.0))

    def power(self, inst: Instant) -> np.ndarray:
        """Power of the drivers, of the applied forces, and dissipated by the hinges' own and
        the force elements' dampers at an instant, (3,) W (:func:`.kernels.power_flows`; the
        penalty joints' dampers are not counted)."""
        from ..mstmm.kernels import power_flows
        Jt = self.Jt
        driven = np.zeros(Jt.hk.size, dtype=np.int64)
        driven[Jt.drv_u] = 1
        mags = np.array([f(inst.t) for f in self.magnitudes] or [0.0])
        out = np.zeros(3)
        c = np.ascontiguousarray      # the compiled version of the other methods
        power_flows(c(inst.q), c(inst.u), c(inst.tau), mags, driven, Jt.uq, Jt.hk, Jt.hc,
                    Jt.href, self.forces, c(inst.R), c(inst.pb), c(inst.pc), c(inst.hp),
                    c(inst.w), c(inst.vh), out)
        return out

    def state_vector(self, inst: Instant) -> np.ndarray:
        """``[q; u]`` of an instant."""
        return np.concatenate([inst.q, inst.u])


#: Runs with more samples of a time function than this evaluate it compiled (numba: about
#: 0.25 s to compile, then 15 ns instead of 0.4 us a sample).
COMPILE_SAMPLES = 2_000_000


def _least_squares(ne, A, b, field) -> np.ndarray:
    """``lstsq(A, b)`` of the loops' start (:meth:`NewtonEuler._close_loops`); ModelError naming
    the cut hinges and ``field`` when ``A`` or ``b`` is not finite (numpy's lstsq raises a bare
    SystemError for them) or the solve fails."""
    problem = None
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(b))):
        problem = "the loop equations at the start are not finite (coordinates too large?)"
    else:
        try:
            x = np.linalg.lstsq(A, b, rcond=None)[0]
        except (np.linalg.LinAlgError, SystemError, ValueError) as exc:
            problem = f"the loop equations at the start cannot be solved ({exc})"
        else:
            if np.all(np.isfinite(x)):
                return x
            problem = "the loops' closure at the start gives values that are not finite"
    raise ModelError([Problem(f"Hinge '{h}'", field, f"{problem}; the loop this hinge closes "
                              "cannot be closed from the given initial state")
                      for h in ne.topology.cut_hinges])


def _copied(arrays):
    """A namedtuple of arrays with every array copied."""
    return type(arrays)(*[a.copy() if isinstance(a, np.ndarray) else a for a in arrays])


@njit(cache=False)
def _fill(fn, ts, out):
    for i in range(ts.size):
        out[i] = fn(ts[i])


def _sample(f, ts, compiled=None):
    """A time function at many times (constants at once, others point by point; compiled when
    ``compiled`` is a dict, the cache of compiled functions)."""
    c = f.value_if_constant()
    if c is not None:
        return np.full(ts.size, c)
    if compiled is not None:
        try:
            fn = compiled.get(f.text)
            if fn is None:
                fn = compiled[f.text] = f.numba()
            out = np.empty(ts.size)
            _fill(fn, ts, out)
            return out
        except Exception:             # pragma: no cover - numba cannot compile it: Python
            compiled[f.text] = None
    return np.fromiter(map(f, ts.tolist()), dtype=float, count=ts.size)


# --------------------------------------------------------------------------------------------------
# result rows
# --------------------------------------------------------------------------------------------------

#: Loop-closure columns of every cut hinge (as the other methods report them).
CLOSURE_QUANTITIES = ("closure_gap", "closure_angle", "closure_gap_rate", "closure_angle_rate")


class NewtonEulerRecorder:
    """Result rows of the Newton-Euler method: :class:`~.results.Recorder`'s columns for every
    hinge (cut hinges too), and after each cut hinge's columns its loop-closure errors
    ``closure_gap`` (m), ``closure_angle`` (rad) and their rates, as the other methods give them
    (the norms of the hinge's residual on its constrained directions, translations and rotations
    apart, and of the relative twist of its markers on the same directions): here the deflection
    of the cut hinge's penalty joint, from the kernel (rotations as the sines of the
    misalignment angles: the same to second order in the residual).
    """

    def __init__(self, ne: NewtonEuler):
        from ...results.recorder import Recorder
        self.ne = ne
        self.base = base = Recorder(ne)
        cut = set(ne.topology.cut_hinges)
        k = 1 + base.n_body_cols * len(base.bodies)
        order = list(range(k))
        names = list(base.names)
        self.cuts = []                   # rows of the cut hinges in ne.hinges
        for spec, prefix in zip(base.hinge_specs, base.hinges):
            order += list(range(k, k + spec["ncols"]))
            k += spec["ncols"]
            name = ne.hinges[spec["i"]]
            if name in cut:
                order += list(range(len(names), len(names) + len(CLOSURE_QUANTITIES)))
                names += [f"{prefix}.{q}" for q in CLOSURE_QUANTITIES]
                self.cuts.append(spec["i"])
        order += list(range(k, len(base.names)))
        self._order = np.array(order, dtype=np.int64)
        self.names = [names[i] for i in order]
        self.bodies, self.hinges = base.bodies, base.hinges
        self.max_closure = 0.0

    def reset(self) -> None:
        self.base.reset()

    def row(self, t: float, y: np.ndarray, instant: Instant, closure=None,
            flows=None) -> np.ndarray:
        """The result row of an instant of the method; ``closure`` (nh, 4) from
        :meth:`NewtonEuler.closure_of_row`, ``flows`` as in :meth:`.results.Recorder.row`."""
        out = self.base.row(t, y, instant, flows=flows)
        if not self.cuts:
            return out
        extra = closure[self.cuts].ravel()
        self.max_closure = max(self.max_closure, float(np.max(extra[0::4])),
                               float(np.max(extra[1::4])))
        return np.concatenate([out, extra])[self._order]


# --------------------------------------------------------------------------------------------------
# a whole run
# --------------------------------------------------------------------------------------------------

def _blow_up(ne, before, n, h):
    """The :class:`~.simulate.RunError` of ``n`` steps of ``h`` from the snapshot ``before``
    (:meth:`NewtonEuler.snapshot`) that ended with a state that is not finite: the steps again,
    one at a time, up to the first whose state is not finite, naming the body that blew up
    first (of several, the one whose velocity changed most in the step before)."""
    from ..runtime import not_finite
    ne.restore(before)
    v_prev = ne.S.v.copy()
    dv = np.zeros(ne.S.v.shape[0])
    for _ in range(n):
        ne.advance(1, h=None if h == ne.step else h)
        if not ne.finite():
            bad = [i for i in range(ne.S.x.shape[0]) if not (
                np.all(np.isfinite(ne.S.x[i])) and np.all(np.isfinite(ne.S.v[i]))
                and np.all(np.isfinite(ne.S.L[i])) and np.all(np.isfinite(ne.S.R[i])))]
            bad = bad or list(range(ne.S.x.shape[0]))
            bad.sort(key=lambda i: -dv[i] if np.isfinite(dv[i]) else -np.inf)
            return not_finite(ne.model, ne.t, body=ne.bodies[bad[0]] if bad else None,
                              others=len(bad) - 1, integrator="symplectic-euler", step=h,
                              method="newton-euler")
        with np.errstate(all="ignore"):
            dv = np.linalg.norm(ne.S.v - v_prev, axis=1)
        v_prev = ne.S.v.copy()
    return not_finite(ne.model, ne.t, integrator="symplectic-euler", step=h,
                      method="newton-euler")


def run(model: MultibodySystem, t_end: float, step: float, output_step: float, progress=None,
        cancel=None, **options):
    """Simulate with the Newton-Euler method; returns ``(times, states, data, info, recorder)``,
    the recorder a :class:`NewtonEulerRecorder` (its ``names`` are the columns).

    ``options``: ``joint_fraction``, ``joint_frequency``, ``joint_damping_ratio`` (see
    :class:`NewtonEuler`). Output every ``output_step`` (a whole number of steps) and at
    ``t_end`` (after a shorter last step when it is not on the step grid).
    """
    from ..runtime import Cancelled
    progress = progress or (lambda f: None)
    cancel = cancel or (lambda: False)
    ne = NewtonEuler(model, step, **options)
    rec = NewtonEulerRecorder(ne)
    h = float(step)
    r = max(1, int(round(output_step / h)))
    n_full = int(math.floor(t_end / h * (1.0 + 1e-12) + 1e-9))
    tail = t_end - n_full * h
    if tail <= 1e-9 * max(t_end, h):
        tail = 0.0
    times, states, data = [], [], []
    # the energy balance: the power of drivers, forces and dampers at the output times,
    # integrated by the trapezoidal rule (see the module docstring)
    track = ne.does_work
    flows, last_power = np.zeros(3), None

    def add(t, row):
        nonlocal flows, last_power
        inst = ne.instant_of_row(t, row)
        if track:
            p = ne.power(inst)
            if last_power is not None:
                flows = flows + 0.5 * (t - times[-1]) * (p + last_power)
            last_power = p
        times.append(t)
        states.append(ne.state_vector(inst))
        data.append(rec.row(t, states[-1], inst, ne.closure_of_row(row), flows=flows))

    progress(0.0)
    total = n_full + (1 if tail else 0)
    ne.compile_time_functions = total > COMPILE_SAMPLES
    if n_full == 0:
        add(0.0, ne.advance(0, record_last=True)[0])
    chunk = r * max(1, 256 // r) if r <= MAX_CHUNK else MAX_CHUNK
    while ne.k < n_full:
        if cancel():
            raise Cancelled("the run was cancelled")
        t_chunk = _time.perf_counter()
        k0 = ne.k
        n = min(chunk, n_full - k0)
        before = ne.snapshot()
        rows = ne.advance(n, every=r)
        if not ne.finite():
            raise _blow_up(ne, before, n, h)
        first = -(-k0 // r)
        for i, row in enumerate(rows):
            add((first + i) * r * h, row)
        dt = _time.perf_counter() - t_chunk
        target = int(min(max(n * CHUNK_SECONDS / max(dt, 1e-6), 1), MAX_CHUNK))
        chunk = r * max(1, target // r) if r <= target else max(1, target)
        if ne.k < total:
            progress(ne.k / total)
    if tail:
        if cancel():
            raise Cancelled("the run was cancelled")
        before = ne.snapshot()
        ne.advance(1, h=tail)
        if not ne.finite():
            raise _blow_up(ne, before, 1, tail)
    add(t_end, ne.advance(0, record_last=True)[0])
    progress(1.0)
    info = dict(steps=total, evaluations=total, integrator="symplectic-euler",
                joint_frequency=ne.joint_omega / (2 * np.pi), joint_damping_ratio=ne.joint_zeta,
                joint_parameters={k: list(v) for k, v in ne.joint_parameters.items()})
    if rec.cuts:
        info["loop_closure"] = dict(max_residual=rec.max_closure)
    data = np.array(data)
    fill_residual(rec.names, data)
    return (np.array(times), np.array(states).reshape(len(times), ne.ny), data, info, rec)
