"""Contact between two bodies' shapes: a compliant normal force and regularised Coulomb friction.

Geometry
    Each side of a contact is a primitive shape placed at a marker (:data:`SHAPES`): a
    ``sphere`` centred on the marker's origin, a ``plane`` (the marker's xy plane, solid on the
    side of -z: the marker's z axis is the outward normal), a ``box`` centred on the marker with
    its edges along the marker's axes, a ``cylinder`` centred on the marker with its axis along
    the marker's z. The supported pairs are :data:`PAIRS`; for each, the contact is a fixed set of
    candidate points (a sphere's point nearest the other shape, a box's eight corners, a
    cylinder's two rim points nearest the plane) with a penetration ``depth`` (m, > 0 when the
    shapes overlap) and the normal ``n`` that pushes the input shape out of the output shape.
    Both bodies get the load at the same point, midway between the two surfaces.

Normal force (Hunt and Crossley 1975)
    ``N = k depth^e (1 + alpha depth')``, never negative (0 when the shapes separate faster than
    ``1/alpha``). ``k`` (N/m^e) and the exponent ``e`` (1.5: Hertz's sphere) are given;
    ``alpha`` (s/m) follows from the coefficient of restitution ``r`` at the impact speed ``v*``
    (:func:`hunt_crossley_damping`): a body meeting the contact at ``v*`` leaves it at ``r v*``,
    exactly for a one-degree-of-freedom impact, whatever the mass, ``k`` and ``e``. Slower
    impacts restitute a little more, faster ones less (the law's own speed dependence).

Friction (regularised Coulomb)
    ``-mu(s) N t``, ``t`` the unit vector of the tangential relative velocity at the contact point
    and ``s`` its size: ``mu`` rises from 0 as ``mu_s (s/v_s)(2 - s/v_s)`` to the static coefficient
    ``mu_s`` at the stiction velocity ``v_s``, goes over to the dynamic coefficient ``mu_d`` by the
    smooth step ``x^2 (3 - 2x)``, ``x = s/v_s - 1``, and is ``mu_d`` from ``2 v_s`` on. A body
    held by friction therefore creeps at a speed below ``v_s`` (the regularisation's price).

Energy
    Elastic energy ``k depth^(e+1) / (e+1)`` per candidate point in contact; dissipated power
    ``(N - k depth^e) depth' + mu N s`` (the damping part and the friction), so that the contact's
    work balances exactly.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ...maths.bodies import _add_wrench3
from ...maths.small import _INL, _JIT, _cr

#: Contacts are not Force elements: no force types.
TYPES = ()

#: The model list this law packs (``MultibodySystem.contacts``).
ELEMENTS = "contacts"

#: Shape types: name -> (dimension fields, description).
SHAPES = {
    "sphere": (("radius",), "a sphere of Radius (m) centred on the marker's origin"),
    "plane": ((), "the marker's xy plane, the solid side towards -z (z is the outward normal); "
                  "unbounded"),
    "box": (("size",), "a box of edge lengths Size (m, along the marker's x, y, z) centred on "
                       "the marker's origin"),
    "cylinder": (("radius", "length"), "a cylinder of Radius and Length (m) centred on the "
                                       "marker's origin, its axis along the marker's z"),
}

#: Supported pairs (input shape, output shape) -> (code, number of candidate points); the
#: reversed pair is accepted too (the sides are swapped inside, the results are the input's).
PAIRS = {("sphere", "plane"): (0, 1), ("sphere", "sphere"): (1, 1), ("box", "plane"): (2, 8),
         ("cylinder", "plane"): (3, 2)}
#: Number of candidate points by pair code.
PAIRS_POINTS = {code: n for code, n in PAIRS.values()}

#: Result quantities of a contact, in column order: name -> (unit, description).
COLUMNS = {
    "Fx": ("N", "contact force on the input body, global x (normal and friction)"),
    "Fy": ("N", "contact force on the input body, global y"),
    "Fz": ("N", "contact force on the input body, global z"),
    "Fn": ("N", "normal force (sum over the contact points)"),
    "Ft": ("N", "friction force (size of the sum over the contact points)"),
    "depth": ("m", "largest penetration of the shapes (negative: the smallest gap between "
                   "candidate points, i.e. not touching)"),
    "slip": ("m/s", "tangential relative speed at the deepest point"),
    "x": ("m", "contact point, global x: the normal forces' centre over the points in contact "
               "(the deepest candidate point when not touching)"),
    "y": ("m", "contact point, global y"),
    "z": ("m", "contact point, global z"),
}

#: The arrays of the compiled ``Forces`` struct, one row per contact: ``ct_int`` the input and
#: output markers' bodies (-1: ground) and the pair code; both markers' rotations and positions
#: (on their bodies; the ground's in global axes; the sides in :data:`PAIRS` order); ``ct_dim``
#: the dimensions (input's radius / half sizes / radius, half length; output sphere's radius);
#: ``ct_par`` stiffness, exponent, Hunt-Crossley damping alpha, static and dynamic friction,
#: stiction velocity; ``ct_sign`` the sign of the reported force (-1: the sides were swapped).
FIELDS = (("ct_int", "int", (3,)), ("ct_Ri", "float", (3, 3)), ("ct_pi", "float", (3,)),
          ("ct_Ro", "float", (3, 3)), ("ct_po", "float", (3,)), ("ct_dim", "float", (4,)),
          ("ct_par", "float", (6,)), ("ct_sign", "float", ()))

#: Entries of :func:`_evaluate`'s accumulator.
_ACC = 15


def hunt_crossley_damping(restitution: float, impact_speed: float) -> float:
    """The damping ``alpha`` (s/m, or s/rad) of ``N = k x^e (1 + alpha x')`` for which an impact at
    ``impact_speed`` rebounds at ``restitution`` times it.

    From ``m x'' = -k x^e (1 + alpha x')``: ``m v dv / (1 + alpha v) = -k x^e dx`` integrates to
    ``alpha v - ln(1 + alpha v) + alpha^2 k x^(e+1) / ((e+1) m) = const``, so the speeds in and
    out (``v0``, ``-r v0`` at ``x = 0``) satisfy ``g(y) = y - ln(1 + y) + r y + ln(1 - r y) = 0``
    with ``y = alpha v0``: one root in ``(0, 1/r)``, found by bisection.
    """
    r = float(restitution)
    if not 0.0 < r <= 1.0:
        raise ValueError(f"restitution {r!r} is not in (0, 1]")
    if r == 1.0:
        return 0.0

    def g(y):
        return y - math.log1p(y) + r * y + math.log1p(-r * y)

    lo, hi = 0.5 / r, 1.0 / r
    while g(lo) <= 0.0:                   # g > 0 below the root, < 0 above it
        hi, lo = lo, lo / 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if g(mid) > 0.0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi) / float(impact_speed)


def canonical(contact):
    """A contact's sides in :data:`PAIRS` order: ``(code, dim (4,), input ref, output ref,
    sign)``, ``sign`` -1 when the model's sides were swapped (see :data:`FIELDS` for ``dim``)."""
    pair = (contact.input_shape.type, contact.output_shape.type)
    sides = ((contact.input, contact.input_shape), (contact.output, contact.output_shape))
    sign = 1.0
    if pair not in PAIRS:
        pair = pair[::-1]
        sides = sides[::-1]
        sign = -1.0
    code, _ = PAIRS[pair]
    si, so = sides[0][1], sides[1][1]
    dim = np.zeros(4)
    if code == 0:
        dim[0] = si.radius
    elif code == 1:
        dim[0], dim[1] = si.radius, so.radius
    elif code == 2:
        dim[:3] = 0.5 * np.asarray(si.size, dtype=float)
    else:
        dim[0], dim[1] = si.radius, 0.5 * si.length
    return code, dim, sides[0][0], sides[1][0], sign


def depths(code, dim, Ri, pi_, Ro, po) -> np.ndarray:
    """The candidate points' depths (m) of a pair (:func:`canonical`) with the markers' global
    frames (positive: overlapping)."""
    Ri, pi_, Ro, po = (np.ascontiguousarray(a, dtype=float) for a in (Ri, pi_, Ro, po))
    return np.array([_candidate(code, dim, Ri, pi_, Ro, po, j)[0]
                     for j in range(PAIRS_POINTS[code])])


def pack(contacts, marker, magnitude, drawn_distance) -> dict:
    """The :data:`FIELDS` of ``contacts`` (:class:`~...model.mechanism.Contact`, valid pairs);
    ``marker(ref) -> (body, R, p)`` as in :func:`.point.pack`."""
    out = {name: [] for name, _, _ in FIELDS}
    for c in contacts:
        code, dim, ref_i, ref_o, sign = canonical(c)
        bodies = []
        for side, ref in (("i", ref_i), ("o", ref_o)):
            b, Rl, pl = marker(ref)
            bodies.append(b)
            out["ct_R" + side].append(Rl)
            out["ct_p" + side].append(pl)
        out["ct_int"].append([bodies[0], bodies[1], code])
        out["ct_dim"].append(dim)
        out["ct_par"].append([c.stiffness, c.exponent,
                              hunt_crossley_damping(c.restitution, c.impact_speed),
                              c.static_friction, c.dynamic_friction, c.stiction_velocity])
        out["ct_sign"].append(sign)
    return out


# --------------------------------------------------------------------------------------------------
# Compiled geometry and law
# --------------------------------------------------------------------------------------------------

@njit(**_INL)
def _count(code):
    """Number of candidate points of a pair."""
    if code == 2:
        return 8
    if code == 3:
        return 2
    return 1


@njit(**_INL)
def _frame_into(body, Rl, pl, c, R, pb, Rout, pout):
    """Global rotation and origin of marker ``c`` of ``Rl``/``pl`` (on ``body``; body -1: the
    ground, given in global axes) into ``Rout`` (3, 3), ``pout`` (3,): written out (a numba
    ``@`` of 3x3 arrays calls BLAS and allocates: microseconds)."""
    if body < 0:
        for a in range(3):
            pout[a] = pl[c, a]
            for b in range(3):
                Rout[a, b] = Rl[c, a, b]
        return
    for a in range(3):
        s = pb[body, a]
        for k in range(3):
            s += R[body, a, k] * pl[c, k]
        pout[a] = s
        for b in range(3):
            t = 0.0
            for k in range(3):
                t += R[body, a, k] * Rl[c, k, b]
            Rout[a, b] = t


@njit(**_INL)
def _candidate(code, dim, Ri, pi_, Ro, po, j):
    """Candidate point ``j`` of a pair with the markers' global frames: ``(depth, p0, p1, p2,
    n0, n1, n2)``, the contact point midway between the surfaces and the normal pushing the
    input shape out (depth <= 0: not touching)."""
    if code == 1:                                       # sphere - sphere
        d0, d1, d2 = pi_[0] - po[0], pi_[1] - po[1], pi_[2] - po[2]
        L = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        if L == 0.0:
            n0, n1, n2 = 0.0, 0.0, 1.0
        else:
            n0, n1, n2 = d0 / L, d1 / L, d2 / L
        depth = dim[0] + dim[1] - L
        a = dim[1] - 0.5 * depth
        return depth, po[0] + a * n0, po[1] + a * n1, po[2] + a * n2, n0, n1, n2
    # the output is a plane: normal = the output marker's z axis
    n0, n1, n2 = Ro[0, 2], Ro[1, 2], Ro[2, 2]
    if code == 0:                                       # sphere - plane
        x0, x1, x2 = pi_[0] - dim[0] * n0, pi_[1] - dim[0] * n1, pi_[2] - dim[0] * n2
    elif code == 2:                                     # box corner j - plane
        a = dim[0] if (j & 1) else -dim[0]
        b = dim[1] if (j & 2) else -dim[1]
        c = dim[2] if (j & 4) else -dim[2]
        x0 = pi_[0] + Ri[0, 0] * a + Ri[0, 1] * b + Ri[0, 2] * c
        x1 = pi_[1] + Ri[1, 0] * a + Ri[1, 1] * b + Ri[1, 2] * c
        x2 = pi_[2] + Ri[2, 0] * a + Ri[2, 1] * b + Ri[2, 2] * c
    else:                                               # cylinder end j's rim - plane
        s = dim[1] if j == 1 else -dim[1]
        a0, a1, a2 = Ri[0, 2], Ri[1, 2], Ri[2, 2]
        na = n0 * a0 + n1 * a1 + n2 * a2
        u0, u1, u2 = n0 - na * a0, n1 - na * a1, n2 - na * a2
        lu = math.sqrt(u0 * u0 + u1 * u1 + u2 * u2)
        if lu < 1e-12:                                  # axis along the normal: any rim point
            u0, u1, u2, lu = Ri[0, 0], Ri[1, 0], Ri[2, 0], 1.0
        r = dim[0] / lu
        x0 = pi_[0] + s * a0 - r * u0
        x1 = pi_[1] + s * a1 - r * u1
        x2 = pi_[2] + s * a2 - r * u2
    depth = -(n0 * (x0 - po[0]) + n1 * (x1 - po[1]) + n2 * (x2 - po[2]))
    h = 0.5 * depth
    return depth, x0 + h * n0, x1 + h * n1, x2 + h * n2, n0, n1, n2


@njit(**_INL)
def _friction_coefficient(s, mus, mud, vs):
    """``mu(s)`` of the regularised Coulomb law (module docstring)."""
    if s >= 2.0 * vs:
        return mud
    x = s / vs
    if x <= 1.0:
        return mus * x * (2.0 - x)
    x -= 1.0
    return mus + (mud - mus) * x * x * (3.0 - 2.0 * x)


@njit(**_INL)
def _point_velocity(body, p0, p1, p2, w, vh, hp):
    """Velocity of ``body``'s material point at ``p`` (0 for the ground)."""
    if body < 0:
        return 0.0, 0.0, 0.0
    v = _cr(w[body, 0], w[body, 1], w[body, 2], p0 - hp[body, 0], p1 - hp[body, 1],
            p2 - hp[body, 2])
    return vh[body, 0] + v[0], vh[body, 1] + v[1], vh[body, 2] + v[2]


# the arrays it uses, not the Forces struct: a call passing a struct costs a reference count
# operation per array of it (inlining instead multiplies the compile time)
@njit(**_JIT)
def _evaluate(ct_int, ct_Ri, ct_pi, ct_Ro, ct_po, ct_dim, ct_par, c, R, pb, pc, hp, w, vh, FC,
              TC, apply, acc, Ri, pi_, Ro, po):
    """Contact ``c`` at one instant: its loads added to FC, TC (n, 3) if ``apply``; ``acc``
    (:data:`_ACC`,) filled with the force on the (packed) input body (0:3), the normal force (3),
    the friction force (4:7), the largest depth (7), the slip at the deepest point (8), the
    dissipated power (9), the elastic energy (10), the number of points in contact (11) and the
    contact point (12:15: the normal forces' centre, or the deepest candidate point when no
    point pushes). ``Ri, pi_, Ro, po``: scratch for the markers' global frames."""
    for a in range(_ACC):
        acc[a] = 0.0
    bi, bo, code = ct_int[c, 0], ct_int[c, 1], ct_int[c, 2]
    _frame_into(bi, ct_Ri, ct_pi, c, R, pb, Ri, pi_)
    _frame_into(bo, ct_Ro, ct_po, c, R, pb, Ro, po)
    dim = ct_dim[c]
    k, e, alpha = ct_par[c, 0], ct_par[c, 1], ct_par[c, 2]
    mus, mud, vs = ct_par[c, 3], ct_par[c, 4], ct_par[c, 5]
    acc[7] = -np.inf
    d0 = d1 = d2 = 0.0
    for j in range(_count(code)):
        depth, p0, p1, p2, n0, n1, n2 = _candidate(code, dim, Ri, pi_, Ro, po, j)
        deepest = depth > acc[7]
        if deepest:
            acc[7] = depth
            d0, d1, d2 = p0, p1, p2
        if depth <= 0.0:
            if deepest:
                acc[8] = 0.0
            continue
        vi0, vi1, vi2 = _point_velocity(bi, p0, p1, p2, w, vh, hp)
        vo0, vo1, vo2 = _point_velocity(bo, p0, p1, p2, w, vh, hp)
        r0, r1, r2 = vi0 - vo0, vi1 - vo1, vi2 - vo2
        vn = r0 * n0 + r1 * n1 + r2 * n2
        t0, t1, t2 = r0 - vn * n0, r1 - vn * n1, r2 - vn * n2
        s = math.sqrt(t0 * t0 + t1 * t1 + t2 * t2)
        if deepest:
            acc[8] = s
        fk = k * depth ** e
        N = fk * (1.0 - alpha * vn)                     # depth' = -vn
        if N < 0.0:
            N = 0.0
        f0, f1, f2 = N * n0, N * n1, N * n2
        mu = 0.0
        if s > 0.0 and (mus > 0.0 or mud > 0.0):
            mu = _friction_coefficient(s, mus, mud, vs)
            g = -mu * N / s
            acc[4] += g * t0
            acc[5] += g * t1
            acc[6] += g * t2
            f0 += g * t0
            f1 += g * t1
            f2 += g * t2
        acc[0] += f0
        acc[1] += f1
        acc[2] += f2
        acc[3] += N
        acc[9] += -(N - fk) * vn + mu * N * s
        acc[10] += fk * depth / (e + 1.0)
        acc[11] += 1.0
        acc[12] += N * p0
        acc[13] += N * p1
        acc[14] += N * p2
        if apply:
            _add_wrench3(bi, f0, f1, f2, 0.0, 0.0, 0.0, p0, p1, p2, FC, TC, pc)
            _add_wrench3(bo, -f0, -f1, -f2, 0.0, 0.0, 0.0, p0, p1, p2, FC, TC, pc)
    if acc[3] > 0.0:
        for a in range(12, 15):
            acc[a] /= acc[3]
    else:
        acc[12], acc[13], acc[14] = d0, d1, d2


@njit(**_JIT)
def add_loads(F, mags, R, pb, pc, hp, w, vh, FC, TC):
    """Add the contact loads to the bodies' forces FC and torques about the mass centres TC;
    return the power the contacts dissipate (W, what :func:`add_power` adds: the dispatcher's
    :func:`~.applied_loads_power` takes it from here instead of evaluating them again)."""
    if F.ct_int.shape[0] == 0:
        return 0.0
    acc = np.empty(_ACC)
    Ri, Ro, pi_, po = np.empty((3, 3)), np.empty((3, 3)), np.empty(3), np.empty(3)
    pdis = 0.0
    for c in range(F.ct_int.shape[0]):
        _evaluate(F.ct_int, F.ct_Ri, F.ct_pi, F.ct_Ro, F.ct_po, F.ct_dim, F.ct_par, c, R, pb, pc,
                  hp, w, vh, FC, TC, True, acc, Ri, pi_, Ro, po)
        pdis += acc[9]
    return pdis


@njit(**_JIT)
def add_power(F, mags, R, pb, pc, hp, w, vh, out):
    """Add the contacts' dissipated power (damping and friction) to ``out[2]``."""
    if F.ct_int.shape[0] == 0:
        return
    acc = np.empty(_ACC)
    dummy = np.empty((0, 3))
    Ri, Ro, pi_, po = np.empty((3, 3)), np.empty((3, 3)), np.empty(3), np.empty(3)
    pdis = out[2]
    for c in range(F.ct_int.shape[0]):
        _evaluate(F.ct_int, F.ct_Ri, F.ct_pi, F.ct_Ro, F.ct_po, F.ct_dim, F.ct_par, c, R, pb, pc,
                  hp, w, vh, dummy, dummy, False, acc, Ri, pi_, Ro, po)
        pdis += acc[9]
    out[2] = pdis


@njit(**_JIT)
def _potential_rows(F, c, Ri, pi_, Ro, po, ee):
    """Add contact ``c``'s elastic energy in every row (markers' global frames per row)."""
    code = F.ct_int[c, 2]
    k, e = F.ct_par[c, 0], F.ct_par[c, 1]
    for r in range(ee.size):
        for j in range(_count(code)):
            depth = _candidate(code, F.ct_dim[c], Ri[r], pi_[r], Ro[r], po[r], j)[0]
            if depth > 0.0:
                ee[r] += k * depth ** (e + 1.0) / (e + 1.0)


def does_work(F) -> bool:
    """Whether a contact dissipates: damping (restitution below 1) or friction."""
    return bool(F.ct_int.shape[0] and (F.ct_par[:, 2:5] != 0.0).any())


def add_potential(F, attach, ee) -> None:
    """Add the contacts' elastic energy to ``ee`` (rows,) (see
    :func:`.spring_damper.add_potential`)."""
    for c in range(F.ct_int.shape[0]):
        Ri, pi_ = attach(F.ct_int[c, 0], F.ct_Ri[c], F.ct_pi[c])
        Ro, po = attach(F.ct_int[c, 1], F.ct_Ro[c], F.ct_po[c])
        _potential_rows(F, c, np.ascontiguousarray(Ri), np.ascontiguousarray(pi_),
                        np.ascontiguousarray(Ro), np.ascontiguousarray(po), ee)


@njit(**_JIT)
def columns(F, R, pb, pc, hp, w, vh, out):
    """The result columns (:data:`COLUMNS`) of every contact in every row: ``out`` (rows,
    contacts, 10); the bodies' arrays with a leading rows axis."""
    acc = np.empty(_ACC)
    dummy = np.empty((0, 3))
    Ri, Ro, pi_, po = np.empty((3, 3)), np.empty((3, 3)), np.empty(3), np.empty(3)
    for r in range(R.shape[0]):
        for c in range(F.ct_int.shape[0]):
            _evaluate(F.ct_int, F.ct_Ri, F.ct_pi, F.ct_Ro, F.ct_po, F.ct_dim, F.ct_par, c, R[r],
                      pb[r], pc[r], hp[r], w[r], vh[r], dummy, dummy, False, acc, Ri, pi_, Ro, po)
            s = F.ct_sign[c]
            out[r, c, 0] = s * acc[0]
            out[r, c, 1] = s * acc[1]
            out[r, c, 2] = s * acc[2]
            out[r, c, 3] = acc[3]
            out[r, c, 4] = math.sqrt(acc[4] ** 2 + acc[5] ** 2 + acc[6] ** 2)
            out[r, c, 5] = acc[7]
            out[r, c, 6] = acc[8]
            for a in range(3):
                out[r, c, 7 + a] = acc[12 + a]
