"""Compiled helpers on the bodies' state arrays of an evaluation: the global point, velocity and
rotation of an attachment (a marker) and the wrench of a force about a body's mass centre.

The arrays, one row per body (global axes): ``R`` (n, 3, 3) rotations, ``pb`` (n, 3) base-frame
origins, ``pc`` (n, 3) mass centres, ``w`` (n, 3) angular velocities and ``vh`` (n, 3) the
velocity of the material point at ``hp`` (n, 3), a reference point of each body (the MSTMM
method's hinge points; a formulation may give the mass centres for both). Body -1 is the ground:
its attachments are given in global axes.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .small import _JIT, _cr, _mv, cross


@njit(**_JIT)
def _attach(body, Rl, pl, R, pb, w, pc, vh, hp):
    """Global rotation, point, and velocity of an attachment (body -1: the ground, given global)."""
    if body < 0:
        return Rl.copy(), pl.copy(), np.zeros(3), np.zeros(3)
    Rg = R[body] @ Rl
    p = pb[body] + R[body] @ pl
    v = vh[body] + cross(w[body], p - hp[body])
    return Rg, p, v, w[body].copy()


@njit(**_JIT)
def _attach_point(body, P, f, R, pb, w, vh, hp):
    """Attachment ``P[f]`` (local on ``body``; global on the ground, body -1): its global point,
    the velocity of the body's material point there and the body's angular velocity, as a
    9-tuple (no allocation)."""
    if body < 0:
        return P[f, 0], P[f, 1], P[f, 2], 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    r = _mv(R, body, P[f, 0], P[f, 1], P[f, 2])
    p0, p1, p2 = pb[body, 0] + r[0], pb[body, 1] + r[1], pb[body, 2] + r[2]
    v = _cr(w[body, 0], w[body, 1], w[body, 2], p0 - hp[body, 0], p1 - hp[body, 1],
            p2 - hp[body, 2])
    return (p0, p1, p2, vh[body, 0] + v[0], vh[body, 1] + v[1], vh[body, 2] + v[2],
            w[body, 0], w[body, 1], w[body, 2])


@njit(**_JIT)
def _direction(body, Rl, f, d0, d1, d2, R):
    """The direction (d0, d1, d2) given in the axes of marker ``Rl[f]`` on ``body``, in global
    axes."""
    d = _mv(Rl, f, d0, d1, d2)
    if body < 0:
        return d
    return _mv(R, body, d[0], d[1], d[2])


@njit(**_JIT)
def _add_wrench3(body, f0, f1, f2, t0, t1, t2, p0, p1, p2, FC, TC, pc):
    """Add force (f0, f1, f2) at point (p0, p1, p2) and torque (t0, t1, t2) to a body's totals
    about its mass centre (nothing for the ground)."""
    if body < 0:
        return
    tr = _cr(p0 - pc[body, 0], p1 - pc[body, 1], p2 - pc[body, 2], f0, f1, f2)
    FC[body, 0] += f0
    FC[body, 1] += f1
    FC[body, 2] += f2
    TC[body, 0] += t0 + tr[0]
    TC[body, 1] += t1 + tr[1]
    TC[body, 2] += t2 + tr[2]


@njit(**_JIT)
def _add_wrench(body, F, T, p, FC, TC, pc):
    """Add force F at point p and torque T to a body's totals about its mass centre."""
    if body < 0:
        return
    r = p - pc[body]
    tr = cross(r, F)
    for a in range(3):
        FC[body, a] += F[a]
        TC[body, a] += T[a] + tr[a]
