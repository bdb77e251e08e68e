"""One relative kinematics per hinge type, compiled, for every method.

A hinge's coordinates in the state layout (:data:`~.hinges.HINGE_TYPES`: Bryant angles and
translations; a unit quaternion (w, x, y, z) in place of the angles of spherical, free and bushing
hinges) give, in the output marker's frame and about the input marker's origin:

* the pose: ``Rrel`` (the input marker frame's rotation) and ``d`` (its origin);
* the motion subspace ``S`` (6, dof): the relative twist ``[omega; d']`` per unit velocity
  coordinate, and ``bias = (dS/dt) u``, so the relative acceleration is ``S u' + bias``;
* the coordinate rates from the velocity coordinates (:func:`hinge_qdot`: the quaternion's
  kinematics; the others' rates are their velocities).

:func:`hinge_local` and :func:`hinge_qdot` are what the MSTMM kernels compile into their runs
(allocation-free, a type by its code: its place in the table); :func:`local` is the same from
Python (arrays of its own), which the constrained method calls. The directions a hinge blocks
(cut hinges, penalty joints) come from the type's row (``rotation_mode``,
``blocked_translations``): :data:`CUT_ROT`, :data:`CUT_TRANS`, :func:`cut_count`. A code without a
branch here is an error, not the identity.
``tests/test_hinge_local_every_type.py`` holds every registered type to finite differences.

The blocked directions (:data:`CUT_ROT`, :data:`CUT_TRANS`) come from the type's row too.

Adding a hinge type: its row in :mod:`.hinges`, its branch in :func:`hinge_local` and
:func:`hinge_qdot`, its name among the codes.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..maths.small import _JIT, quat_into
from .hinges import HINGE_TYPES, TYPE_CODES

# hinge type codes (:data:`.hinges.TYPE_CODES`: the table's order); the compiled branches below
# test them by name
FIXED, REVOLUTE, PRISMATIC, CYLINDRICAL, UNIVERSAL, SPHERICAL, PLANAR, FREE, BUSHING = (
    TYPE_CODES[n] for n in ("fixed", "revolute", "prismatic", "cylindrical", "universal",
                            "spherical", "planar", "free", "bushing"))
#: the codes with a branch in :func:`hinge_local`
CODES = (FIXED, REVOLUTE, PRISMATIC, CYLINDRICAL, UNIVERSAL, SPHERICAL, PLANAR, FREE, BUSHING)
#: number of position coordinates and velocity coordinates per type code
NQ = np.array([t.nq for t in HINGE_TYPES.values()], dtype=np.int64)
NU = np.array([t.dof for t in HINGE_TYPES.values()], dtype=np.int64)


@njit(**_JIT)
def hinge_local(code, q, qo, u, uo, Rrel, d, S, bias):
    """Fill the relative pose ``Rrel`` (3,3), ``d`` (3,), ``S`` (6, nu) and ``bias`` (6,).

    The hinge's own position and velocity coordinates are ``q[qo:]`` and ``u[uo:]``. Allocates
    nothing (see :func:`~..methods.mstmm.kernels.riccati` on why). An unknown code raises.
    """
    for a in range(3):
        d[a] = 0.0
        for b in range(3):
            Rrel[a, b] = 1.0 if a == b else 0.0
    S[:, :] = 0.0
    bias[:] = 0.0
    if code == REVOLUTE:
        c, s = np.cos(q[qo]), np.sin(q[qo])
        Rrel[0, 0] = c
        Rrel[0, 1] = -s
        Rrel[1, 0] = s
        Rrel[1, 1] = c
        S[2, 0] = 1.0
    elif code == PRISMATIC:
        d[2] = q[qo]
        S[5, 0] = 1.0
    elif code == CYLINDRICAL:
        d[2] = q[qo]
        c, s = np.cos(q[qo + 1]), np.sin(q[qo + 1])
        Rrel[0, 0] = c
        Rrel[0, 1] = -s
        Rrel[1, 0] = s
        Rrel[1, 1] = c
        S[5, 0] = 1.0
        S[2, 1] = 1.0
    elif code == UNIVERSAL:
        ca, sa = np.cos(q[qo]), np.sin(q[qo])
        cb, sb = np.cos(q[qo + 1]), np.sin(q[qo + 1])
        # Rx(a) Ry(b)
        Rrel[0, 0] = cb
        Rrel[0, 1] = 0.0
        Rrel[0, 2] = sb
        Rrel[1, 0] = sa * sb
        Rrel[1, 1] = ca
        Rrel[1, 2] = -sa * cb
        Rrel[2, 0] = -ca * sb
        Rrel[2, 1] = sa
        Rrel[2, 2] = ca * cb
        S[0, 0] = 1.0
        S[1, 1] = ca          # Rx(a) e_y
        S[2, 1] = sa
        # d/dt (Rx(a) e_y) * ub = ua * e_x x (Rx(a) e_y) * ub
        bias[1] = -sa * u[uo] * u[uo + 1]
        bias[2] = ca * u[uo] * u[uo + 1]
    elif code == SPHERICAL:
        quat_into(Rrel, q[qo], q[qo + 1], q[qo + 2], q[qo + 3])
        S[0, 0] = 1.0
        S[1, 1] = 1.0
        S[2, 2] = 1.0
    elif code == PLANAR:
        d[0] = q[qo]
        d[1] = q[qo + 1]
        c, s = np.cos(q[qo + 2]), np.sin(q[qo + 2])
        Rrel[0, 0] = c
        Rrel[0, 1] = -s
        Rrel[1, 0] = s
        Rrel[1, 1] = c
        S[3, 0] = 1.0
        S[4, 1] = 1.0
        S[2, 2] = 1.0
    elif code == FREE or code == BUSHING:
        d[0] = q[qo]
        d[1] = q[qo + 1]
        d[2] = q[qo + 2]
        quat_into(Rrel, q[qo + 3], q[qo + 4], q[qo + 5], q[qo + 6])
        for a in range(3):
            S[3 + a, a] = 1.0
            S[a, 3 + a] = 1.0
    elif code != FIXED:
        raise ValueError("hinge_local: a hinge type code without kinematics")


@njit(**_JIT)
def hinge_qdot(code, q, qo, u, uo, k, qd, o):
    """Position-coordinate rates from velocity coordinates (quaternion kinematics).

    The hinge's coordinates are ``q[qo:]``, its ``k`` velocity coordinates ``u[uo:uo + k]``; the
    rates go to ``qd[o:]``.
    """
    if code == SPHERICAL or code == FREE or code == BUSHING:
        r = 0
        if code != SPHERICAL:
            qd[o] = u[uo]
            qd[o + 1] = u[uo + 1]
            qd[o + 2] = u[uo + 2]
            r = 3
        w, x, y, z = q[qo + r], q[qo + r + 1], q[qo + r + 2], q[qo + r + 3]
        wx, wy, wz = u[uo + r], u[uo + r + 1], u[uo + r + 2]
        # dq/dt = 1/2 [0, w] (x) q, w in the output marker frame (spatial for the joint)
        qd[o + r] = 0.5 * (-wx * x - wy * y - wz * z)
        qd[o + r + 1] = 0.5 * (wx * w + wy * z - wz * y)
        qd[o + r + 2] = 0.5 * (wy * w + wz * x - wx * z)
        qd[o + r + 3] = 0.5 * (wz * w + wx * y - wy * x)
    else:
        for j in range(k):
            qd[o + j] = u[uo + j]


@njit(**_JIT)
def state_rate(q, u, udot, code, qo, uo, nq, nu, nq_tot, ydot):
    """The state derivative of a tree from ``u`` (and ``q`` for quaternions) and ``udot``: each
    hinge's coordinate rates (:func:`hinge_qdot`) into ``ydot[:nq_tot]``, ``udot`` after them.
    ``code``, ``qo``, ``uo``, ``nq``, ``nu``: per tree hinge, its type code, the offsets of its
    coordinates in ``q`` and ``u`` and their counts."""
    for i in range(code.size):
        hinge_qdot(code[i], q, qo[i], u, uo[i], nq[i], ydot, qo[i])
    for j in range(u.size):
        ydot[nq_tot + j] = udot[j]


#: blocked rotation axes (bit 0: x, 1: y, 2: z; bit 3: the universal's Rx(a) e_z) and blocked
#: translations (bits 0..2) by type code: the directions a cut hinge's constraint loads act in
#: and a penalty joint's stiffness holds
CUT_ROT = np.array([{"full": 7, "axis": 3, "cross": 8, "none": 0}[t.rotation_mode]
                    for t in HINGE_TYPES.values()], dtype=np.int64)
CUT_TRANS = np.array([sum(b << a for a, b in enumerate(t.blocked_translations))
                      for t in HINGE_TYPES.values()], dtype=np.int64)


@njit(**_JIT)
def cut_count(code):
    """Number of constraint equations of a cut hinge of type ``code``."""
    n = 0
    r, t = CUT_ROT[code], CUT_TRANS[code]
    for b in range(4):
        if (r >> b) & 1:
            n += 1
    for b in range(3):
        if (t >> b) & 1:
            n += 1
    return n


def local(hinge_type: str, q, u):
    """:func:`hinge_local` from Python for one hinge (the constrained method's call).

    Parameters
    ----------
    hinge_type : str
        A key of :data:`~.hinges.HINGE_TYPES` (KeyError for another).
    q, u : array_like
        The hinge's position and velocity coordinates in the state layout (Bryant angles and
        translations; a quaternion (w, x, y, z) in place of the angles of spherical, free and
        bushing hinges).

    Returns
    -------
    R : ndarray (3, 3)
        Rotation of the input marker frame relative to the output marker frame.
    d : ndarray (3,)
        Input marker origin in output-marker axes (m).
    S : ndarray (6, dof)
        ``[omega_rel; d']`` per unit velocity coordinate (output-marker axes): the relative
        twist about the input marker's origin as seen from the output marker frame.
    bias : ndarray (6,)
        ``(dS/dt) u``.
    """
    code = TYPE_CODES[hinge_type]
    R, d, S, bias = np.empty((3, 3)), np.empty(3), np.empty((6, 6)), np.empty(6)
    hinge_local(code, np.ascontiguousarray(q, dtype=np.float64), 0,
                np.ascontiguousarray(u, dtype=np.float64), 0, R, d, S, bias)
    return R, d, S[:, :NU[code]].copy(), bias
