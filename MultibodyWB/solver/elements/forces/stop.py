"""Joint stops: a hinge's ``LowerLimits``/``UpperLimits`` enforced by a one-sided compliant stop.

A coordinate ``q`` beyond its limit by ``d`` (m or rad) gets the generalised load
``-/+ k d (1 + alpha d')``, never pulling (0 when the coordinate leaves the stop faster than
``1/alpha``): the Hunt-Crossley law of :mod:`.contact` with exponent 1 on the coordinate,
``alpha`` from the restitution at the impact speed (:func:`.contact.hunt_crossley_damping`), so a
coordinate meeting its stop at ``StopImpactSpeed`` leaves it at ``StopRestitution`` times that
speed, for a one-degree-of-freedom motion.

The coordinate and its rate are measured from the hinge's two markers, as every formulation has
them (so one code serves all, cut hinges of closed loops included): translations ``x, y, z`` of
the input marker's origin along the output marker's axes, loaded by a force pair at the input
marker's origin; rotations ``rx, ry`` (universal) and ``rz`` as Bryant angles of the input marker
relative to the output marker, loaded by a torque pair about the coordinate's axis (``rx``: the
output marker's x, ``ry``: the input marker's y, ``rz``: the input marker's z). Rotations are
measured within a half turn: rotation limits lie in [-180, 180] degrees, and the three-angle
rotations of spherical, free and bushing hinges take no limits (the checks say so).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ...maths.bodies import _add_wrench3
from ...maths.small import _JIT, _cr
from .contact import _frame_into, hunt_crossley_damping

#: Stops are not Force elements: no force types.
TYPES = ()

#: The model list this law packs: the hinges (those with limits, :func:`stops_of`).
ELEMENTS = "hinges"

#: Coordinate names in the order of the compiled code's coordinate index.
COORDINATES = ("x", "y", "z", "rx", "ry", "rz")

#: Hinge types whose rotations take limits (one or two rotation coordinates).
ROTATION_STOPS = frozenset({"revolute", "cylindrical", "universal", "planar"})

#: The result quantity of a stopped coordinate ``c``: ``<hinge>.<c>_stop``.
SUFFIX = "_stop"

#: The arrays of the compiled ``Forces`` struct, one row per limited coordinate: ``st_int`` both
#: markers' bodies and the coordinate index (:data:`COORDINATES`); both markers' rotations and
#: positions; ``st_par`` lower and upper limit (-inf / inf: none), stiffness, Hunt-Crossley
#: damping alpha.
FIELDS = (("st_int", "int", (3,)), ("st_Ri", "float", (3, 3)), ("st_pi", "float", (3,)),
          ("st_Ro", "float", (3, 3)), ("st_po", "float", (3,)), ("st_par", "float", (4,)))


def stops_of(hinges) -> list:
    """The limited coordinates of ``hinges``, in the order of the packed rows: ``(hinge,
    coordinate name, index of the coordinate in the hinge)`` for every coordinate with a finite
    lower or upper limit."""
    out = []
    for h in hinges:
        kind = h.kind
        if kind is None or (h.lower_limits is None and h.upper_limits is None):
            continue
        lo, hi = h.vector("lower_limits"), h.vector("upper_limits")
        for i, c in enumerate(kind.coordinates):
            if i < lo.size and i < hi.size and (np.isfinite(lo[i]) or np.isfinite(hi[i])):
                out.append((h, c, i))
    return out


def pack(hinges, marker, magnitude, drawn_distance) -> dict:
    """The :data:`FIELDS` of the limited coordinates of ``hinges`` (a valid model's)."""
    out = {name: [] for name, _, _ in FIELDS}
    for h, c, i in stops_of(hinges):
        bodies = []
        for side, ref in (("i", h.input), ("o", h.output)):
            b, Rl, pl = marker(ref)
            bodies.append(b)
            out["st_R" + side].append(Rl)
            out["st_p" + side].append(pl)
        restitution = 0.5 if h.stop_restitution is None else h.stop_restitution[i]
        speed = 1.0 if h.stop_impact_speed is None else h.stop_impact_speed[i]
        out["st_int"].append([bodies[0], bodies[1], COORDINATES.index(c)])
        out["st_par"].append([h.vector("lower_limits")[i], h.vector("upper_limits")[i],
                              h.stop_stiffness[i], hunt_crossley_damping(restitution, speed)])
    return out


@njit(**_JIT)
def _coordinate(j, Ri, pi_, Ro, po):
    """The coordinate ``j`` (:data:`COORDINATES`) of the input marker frame relative to the
    output marker frame, and its axis in global axes."""
    if j < 3:
        d0, d1, d2 = pi_[0] - po[0], pi_[1] - po[1], pi_[2] - po[2]
        a0, a1, a2 = Ro[0, j], Ro[1, j], Ro[2, j]
        return a0 * d0 + a1 * d1 + a2 * d2, a0, a1, a2
    # relative rotation Rr = Ro^T Ri = Rx(rx) Ry(ry) Rz(rz): the entries needed
    r00 = Ro[0, 0] * Ri[0, 0] + Ro[1, 0] * Ri[1, 0] + Ro[2, 0] * Ri[2, 0]
    r01 = Ro[0, 0] * Ri[0, 1] + Ro[1, 0] * Ri[1, 1] + Ro[2, 0] * Ri[2, 1]
    r02 = Ro[0, 0] * Ri[0, 2] + Ro[1, 0] * Ri[1, 2] + Ro[2, 0] * Ri[2, 2]
    if j == 3:
        r12 = Ro[0, 1] * Ri[0, 2] + Ro[1, 1] * Ri[1, 2] + Ro[2, 1] * Ri[2, 2]
        r22 = Ro[0, 2] * Ri[0, 2] + Ro[1, 2] * Ri[1, 2] + Ro[2, 2] * Ri[2, 2]
        return math.atan2(-r12, r22), Ro[0, 0], Ro[1, 0], Ro[2, 0]
    if j == 4:
        return (math.atan2(r02, math.sqrt(r00 * r00 + r01 * r01)),
                Ri[0, 1], Ri[1, 1], Ri[2, 1])
    return math.atan2(-r01, r00), Ri[0, 2], Ri[1, 2], Ri[2, 2]


@njit(**_JIT)
def _velocity(body, p0, p1, p2, w, vh, hp):
    """Velocity of ``body``'s material point at ``p`` and its angular velocity (ground: 0)."""
    if body < 0:
        return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    v = _cr(w[body, 0], w[body, 1], w[body, 2], p0 - hp[body, 0], p1 - hp[body, 1],
            p2 - hp[body, 2])
    return (vh[body, 0] + v[0], vh[body, 1] + v[1], vh[body, 2] + v[2],
            w[body, 0], w[body, 1], w[body, 2])


@njit(**_JIT)
def _evaluate(st_int, st_Ri, st_pi, st_Ro, st_po, st_par, s, R, pb, pc, hp, w, vh, FC, TC, apply,
              acc, Ri, pi_, Ro, po):
    """Stop ``s`` at one instant: its load added to FC, TC if ``apply``; ``acc`` (4,): the
    generalised load on the coordinate (0), the dissipated power (1), the elastic energy (2),
    the coordinate (3)."""
    bi, bo, j = st_int[s, 0], st_int[s, 1], st_int[s, 2]
    lo, hi, k, alpha = st_par[s, 0], st_par[s, 1], st_par[s, 2], st_par[s, 3]
    _frame_into(bi, st_Ri, st_pi, s, R, pb, Ri, pi_)
    _frame_into(bo, st_Ro, st_po, s, R, pb, Ro, po)
    q, a0, a1, a2 = _coordinate(j, Ri, pi_, Ro, po)
    acc[0] = 0.0
    acc[1] = 0.0
    acc[2] = 0.0
    acc[3] = q
    if q > hi:
        d, side = q - hi, -1.0
    elif q < lo:
        d, side = lo - q, 1.0
    else:
        return
    vi0, vi1, vi2, wi0, wi1, wi2 = _velocity(bi, pi_[0], pi_[1], pi_[2], w, vh, hp)
    vo0, vo1, vo2, wo0, wo1, wo2 = _velocity(bo, pi_[0], pi_[1], pi_[2], w, vh, hp)
    if j < 3:
        rate = a0 * (vi0 - vo0) + a1 * (vi1 - vo1) + a2 * (vi2 - vo2)
    else:
        rate = a0 * (wi0 - wo0) + a1 * (wi1 - wo1) + a2 * (wi2 - wo2)
    dd = -side * rate                                   # d' (penetration rate)
    fk = k * d
    N = fk * (1.0 + alpha * dd)
    if N < 0.0:
        N = 0.0
    tau = side * N
    acc[0] = tau
    acc[1] = (N - fk) * dd
    acc[2] = 0.5 * fk * d
    if apply:
        if j < 3:
            _add_wrench3(bi, tau * a0, tau * a1, tau * a2, 0.0, 0.0, 0.0, pi_[0], pi_[1], pi_[2],
                         FC, TC, pc)
            _add_wrench3(bo, -tau * a0, -tau * a1, -tau * a2, 0.0, 0.0, 0.0, pi_[0], pi_[1],
                         pi_[2], FC, TC, pc)
        else:
            _add_wrench3(bi, 0.0, 0.0, 0.0, tau * a0, tau * a1, tau * a2, pi_[0], pi_[1], pi_[2],
                         FC, TC, pc)
            _add_wrench3(bo, 0.0, 0.0, 0.0, -tau * a0, -tau * a1, -tau * a2, pi_[0], pi_[1],
                         pi_[2], FC, TC, pc)


@njit(**_JIT)
def add_loads(F, mags, R, pb, pc, hp, w, vh, FC, TC):
    """Add the stops' loads to the bodies' forces FC and torques about the mass centres TC."""
    if F.st_int.shape[0] == 0:
        return
    acc = np.empty(4)
    Ri, Ro, pi_, po = np.empty((3, 3)), np.empty((3, 3)), np.empty(3), np.empty(3)
    for s in range(F.st_int.shape[0]):
        _evaluate(F.st_int, F.st_Ri, F.st_pi, F.st_Ro, F.st_po, F.st_par, s, R, pb, pc, hp, w, vh,
                  FC, TC, True, acc, Ri, pi_, Ro, po)


@njit(**_JIT)
def add_power(F, mags, R, pb, pc, hp, w, vh, out):
    """Add the stops' dissipated power to ``out[2]``."""
    if F.st_int.shape[0] == 0:
        return
    acc = np.empty(4)
    dummy = np.empty((0, 3))
    Ri, Ro, pi_, po = np.empty((3, 3)), np.empty((3, 3)), np.empty(3), np.empty(3)
    pdis = out[2]
    for s in range(F.st_int.shape[0]):
        _evaluate(F.st_int, F.st_Ri, F.st_pi, F.st_Ro, F.st_po, F.st_par, s, R, pb, pc, hp, w, vh,
                  dummy, dummy, False, acc, Ri, pi_, Ro, po)
        pdis += acc[1]
    out[2] = pdis


def does_work(F) -> bool:
    """Whether a stop dissipates (restitution below 1)."""
    return bool(F.st_int.shape[0] and (F.st_par[:, 3] != 0.0).any())


@njit(**_JIT)
def _potential_rows(F, s, Ri, pi_, Ro, po, ee):
    for r in range(ee.size):
        q = _coordinate(F.st_int[s, 2], Ri[r], pi_[r], Ro[r], po[r])[0]
        d = max(q - F.st_par[s, 1], F.st_par[s, 0] - q)
        if d > 0.0:
            ee[r] += 0.5 * F.st_par[s, 2] * d * d


def add_potential(F, attach, ee) -> None:
    """Add the stops' elastic energy ``1/2 k d^2`` to ``ee`` (rows,)."""
    for s in range(F.st_int.shape[0]):
        Ri, pi_ = attach(F.st_int[s, 0], F.st_Ri[s], F.st_pi[s])
        Ro, po = attach(F.st_int[s, 1], F.st_Ro[s], F.st_po[s])
        _potential_rows(F, s, np.ascontiguousarray(Ri), np.ascontiguousarray(pi_),
                        np.ascontiguousarray(Ro), np.ascontiguousarray(po), ee)


@njit(**_JIT)
def columns(F, R, pb, pc, hp, w, vh, out):
    """The generalised stop load of every stop in every row: ``out`` (rows, stops)."""
    acc = np.empty(4)
    dummy = np.empty((0, 3))
    Ri, Ro, pi_, po = np.empty((3, 3)), np.empty((3, 3)), np.empty(3), np.empty(3)
    for r in range(R.shape[0]):
        for s in range(F.st_int.shape[0]):
            _evaluate(F.st_int, F.st_Ri, F.st_pi, F.st_Ro, F.st_po, F.st_par, s, R[r], pb[r],
                      pc[r], hp[r], w[r], vh[r], dummy, dummy, False, acc, Ri, pi_, Ro, po)
            out[r, s] = acc[0]
