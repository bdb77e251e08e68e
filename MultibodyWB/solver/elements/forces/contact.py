"""Contact between two bodies' shapes: a compliant normal force and regularised Coulomb friction.

Geometry
    Each side of a contact is a primitive shape placed at a marker (:data:`SHAPES`): a
    ``sphere`` centred on the marker's origin, a ``plane`` (the marker's xy plane, solid on the
    side of -z: the marker's z axis is the outward normal), a ``box`` centred on the marker with
    its edges along the marker's axes, a ``cylinder`` centred on the marker with its axis along
    the marker's z, a ``cone`` (a frustum: ``Radius`` at the -z end, ``Radius2`` at the +z end,
    0 for a pointed cone, ``Length`` along the marker's z, centred) and a ``torus`` (``Radius``
    of the tube's centre circle in the marker's xy plane, ``Radius2`` of the tube). The
    supported pairs are :data:`PAIRS`; for each, the contact is a fixed set of candidate points
    (a sphere's point nearest the other shape, a box's eight corners; a cylinder's and a
    cone's rim points on both ends and a torus's tube points, each the exact deepest point of
    its circle against the plane and two more on that circle a third of a turn either side,
    which carry the body when it stands on an end face: three equal points whose centre is the
    axis, so the weight is carried at the axis whatever the solid's turn about it; one rim
    point per end made a cylinder standing on an end face rock from side to side, issue 32)
    with a penetration ``depth``
    (m, > 0 when the shapes overlap) and the normal ``n`` that pushes the input shape out of the
    output shape.
    Both bodies get the load at the same point, midway between the two surfaces.

    General solids are ``convex`` shapes: the convex hull (Qhull, through scipy) of points given
    in the marker's frame (a tessellation's vertices), kept as its vertices, triangles and face
    planes. Against a plane, every hull vertex is a candidate point (exact for a convex solid);
    a sphere's centre is measured to the hull exactly (inside: the nearest face plane; outside:
    the nearest point of the triangles); two hulls touch where a vertex of one is inside the
    other, pushed out along the nearer face's normal (edge-against-edge crossings of flat faces
    are not seen: a tessellated curved surface has vertices where it touches; a non-convex solid
    is a union of convex contacts). A ``box`` against a sphere, a box, a cylinder or a hull is
    its hull of eight corners. A cylinder against a hull (a road wheel on a track shoe) touches
    where its end circles' deepest points through the hull's face planes are inside the hull
    and where the hull's vertices are inside the cylinder (:func:`_cylinder_hull_points`). These routines are compiled into the integration loop: a collision library
    called from Python at every evaluation would leave the compiled run at every step (see
    docs/benchmarks.md).

    Broad phase: each side has a bounding sphere about its marker's origin (a plane none): a
    pair whose spheres are apart (or a shape whose sphere is above the plane) is not looked at
    further; its ``depth`` is then minus the gap between the bounding spheres (or between the
    sphere and the plane), which is at most the true gap.

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
from typing import NamedTuple

import numpy as np
from numba import njit

from ...maths.bodies import _add_wrench3
from ...maths.small import _INL, _JIT, _cr
# the convex shapes' hulls (Python, with their cache): their home is ..hulls
from ..hulls import Hull, _hull_of, bounding_radius, box_hull, shape_hull  # noqa: F401

#: Contacts are not Force elements: no force types.
TYPES = ()

#: The model list this law packs (``MultibodySystem.contacts``).
ELEMENTS = "contacts"

#: ``add_loads`` returns the power the contacts dissipate (the runs take it from there).
LOADS_RETURN_DISSIPATION = True

#: Shape types: name -> (dimension fields, description).
SHAPES = {
    "sphere": (("radius",), "a sphere of Radius (m) centred on the marker's origin"),
    "plane": ((), "the marker's xy plane, the solid side towards -z (z is the outward normal); "
                  "unbounded"),
    "box": (("size",), "a box of edge lengths Size (m, along the marker's x, y, z) centred on "
                       "the marker's origin"),
    "cylinder": (("radius", "length"), "a cylinder of Radius and Length (m) centred on the "
                                       "marker's origin, its axis along the marker's z"),
    "convex": (("points",), "the convex hull of Points (m, in the marker's frame; e.g. the "
                            "vertices of a solid's tessellation)"),
    "cone": (("radius", "radius2", "length"), "a cone or frustum of Length (m) centred on the "
                                              "marker's origin, its axis along the marker's z: "
                                              "Radius (m) at the -z end, Radius2 (m, 0: "
                                              "pointed) at the +z end"),
    "torus": (("radius", "radius2"), "a torus centred on the marker's origin, its axis along "
                                     "the marker's z: Radius (m) of the tube's centre circle, "
                                     "Radius2 (m) of the tube"),
}

#: Supported pairs (input shape, output shape) -> (code, number of candidate points); the
#: reversed pair is accepted too (the sides are swapped inside, the results are the input's).
PAIRS = {("sphere", "plane"): (0, 1), ("sphere", "sphere"): (1, 1), ("box", "plane"): (2, 8),
         ("cylinder", "plane"): (3, 6), ("convex", "plane"): (4, None),
         ("sphere", "convex"): (5, 1), ("convex", "convex"): (6, None),
         ("sphere", "box"): (5, 1), ("box", "box"): (6, None), ("box", "convex"): (6, None),
         ("cone", "plane"): (7, 6), ("torus", "plane"): (8, 3),
         ("cylinder", "convex"): (9, None), ("cylinder", "box"): (9, None)}
#: Number of candidate points by pair code (None: the hulls' vertices).
PAIRS_POINTS = {code: n for code, n in PAIRS.values()}
#: Pair codes whose box sides are taken as hulls of their eight corners.
HULL_CODES = (5, 6, 9)
#: Pair codes whose candidate points come from hulls (:func:`_hull_points`).
HULL_PAIRS = (4, 5, 6, 9)

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
#: output markers' bodies (-1: ground), the pair code and each side's hull as (first vertex,
#: vertices, first triangle, triangles, first face plane, planes) in the pools below (zeros:
#: no hull); both markers' rotations and positions (on their bodies; the ground's in global
#: axes; the sides in :data:`PAIRS` order); ``ct_dim`` the dimensions (input's radius / half
#: sizes / radius, half length; output sphere's radius); ``ct_bnd`` the sides' bounding-sphere
#: radii about their markers' origins (inf: a plane); ``ct_par`` stiffness, exponent,
#: Hunt-Crossley damping alpha, static and dynamic friction, stiction velocity; ``ct_sign`` the
#: sign of the reported force (-1: the sides were swapped). The hull pools, shared by all
#: contacts: ``ct_vtx`` vertices (marker frame, m), ``ct_tri`` triangles (vertex indices into
#: ``ct_vtx``), ``ct_pln`` face planes ``(n, c)``, ``n . x + c <= 0`` inside.
FIELDS = (("ct_int", "int", (15,)), ("ct_Ri", "float", (3, 3)), ("ct_pi", "float", (3,)),
          ("ct_Ro", "float", (3, 3)), ("ct_po", "float", (3,)), ("ct_dim", "float", (4,)),
          ("ct_bnd", "float", (2,)), ("ct_par", "float", (6,)), ("ct_sign", "float", ()),
          ("ct_vtx", "float", (3,)), ("ct_tri", "int", (3,)), ("ct_pln", "float", (4,)))

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


class Pair(NamedTuple):
    """A contact's sides in :data:`PAIRS` order (:func:`canonical`)."""

    code: int
    dim: np.ndarray                 #: (4,), see :data:`FIELDS`
    input: object                   #: MarkerRef of the input side
    output: object                  #: MarkerRef of the output side
    sign: float                     #: -1: the model's sides were swapped
    hulls: tuple                    #: (input, output) :class:`Hull` or None
    bounds: tuple                   #: (input, output) bounding-sphere radii (m; inf: a plane)


def canonical(contact) -> Pair:
    """A contact's sides in :data:`PAIRS` order, with the hulls its pair code uses."""
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
    if code in (0, 5):
        dim[0] = si.radius
    elif code == 1:
        dim[0], dim[1] = si.radius, so.radius
    elif code == 2:
        dim[:3] = 0.5 * np.asarray(si.size, dtype=float)
    elif code == 3 or code == 9:
        dim[0], dim[1] = si.radius, 0.5 * si.length
    elif code == 7:
        dim[0], dim[1], dim[2] = si.radius, si.radius2, 0.5 * si.length
    elif code == 8:
        dim[0], dim[1] = si.radius, si.radius2
    hulls = (shape_hull(si) if code in (4, 6) else None,
             shape_hull(so) if code in HULL_CODES else None)
    return Pair(code, dim, sides[0][0], sides[1][0], sign, hulls,
                (bounding_radius(si), bounding_radius(so)))


def _pack_pair(pair, out, ints) -> None:
    """Append ``pair``'s hulls to the pools of ``out`` and their places to ``ints``."""
    for h in pair.hulls:
        if h is None:
            ints += [0] * 6
            continue
        v0, t0, f0 = len(out["ct_vtx"]), len(out["ct_tri"]), len(out["ct_pln"])
        ints += [v0, len(h.vertices), t0, len(h.triangles), f0, len(h.planes)]
        out["ct_vtx"].extend(h.vertices)
        out["ct_tri"].extend(h.triangles + v0)
        out["ct_pln"].extend(h.planes)


def depths(pair: Pair, Ri, pi_, Ro, po) -> np.ndarray:
    """The candidate points' depths (m) of a pair (:func:`canonical`) with the markers' global
    frames (positive: overlapping; bounding spheres apart: minus their gap, one value)."""
    Ri, pi_, Ro, po = (np.ascontiguousarray(a, dtype=float) for a in (Ri, pi_, Ro, po))
    pools = {"ct_vtx": [], "ct_tri": [], "ct_pln": []}
    ints = [0, 0, pair.code]
    _pack_pair(pair, pools, ints)
    ints = np.array(ints, dtype=np.int64)
    vtx = np.array(pools["ct_vtx"], dtype=float).reshape(-1, 3)
    tri = np.array(pools["ct_tri"], dtype=np.int64).reshape(-1, 3)
    pln = np.array(pools["ct_pln"], dtype=float).reshape(-1, 4)
    bnd = np.array(pair.bounds, dtype=float)
    gap = _bounds_gap(bnd, Ri, pi_, Ro, po, pair.code, pair.dim)
    if gap > 0.0:
        return np.array([-gap])
    if pair.code in HULL_PAIRS:
        pts = np.empty((_count(pair.code, ints), 7))
        n = _hull_points(pair.code, pair.dim, Ri, pi_, Ro, po, ints, vtx, tri, pln, bnd, pts)
        return pts[:n, 0].copy()
    return np.array([_candidate(pair.code, pair.dim, Ri, pi_, Ro, po, j)[0]
                     for j in range(_count(pair.code, ints))])


def pack(contacts, marker, magnitude, drawn_distance) -> dict:
    """The :data:`FIELDS` of ``contacts`` (:class:`~...model.mechanism.Contact`, valid pairs);
    ``marker(ref) -> (body, R, p)`` as in :func:`.point.pack`."""
    out = {name: [] for name, _, _ in FIELDS}
    for c in contacts:
        pair = canonical(c)
        code, dim, ref_i, ref_o, sign = pair[:5]
        bodies = []
        for side, ref in (("i", ref_i), ("o", ref_o)):
            b, Rl, pl = marker(ref)
            bodies.append(b)
            out["ct_R" + side].append(Rl)
            out["ct_p" + side].append(pl)
        ints = [bodies[0], bodies[1], code]
        _pack_pair(pair, out, ints)
        out["ct_int"].append(ints)
        out["ct_dim"].append(dim)
        out["ct_bnd"].append(list(pair.bounds))
        out["ct_par"].append([c.stiffness, c.exponent,
                              hunt_crossley_damping(c.restitution, c.impact_speed),
                              c.static_friction, c.dynamic_friction, c.stiction_velocity])
        out["ct_sign"].append(sign)
    return out


# --------------------------------------------------------------------------------------------------
# Compiled geometry and law
# --------------------------------------------------------------------------------------------------

@njit(**_JIT)
def _count(code, ints):
    """Number of candidate points of a pair (``ints``: its row of ``ct_int``)."""
    if code == 2:
        return 8
    if code == 4:
        return ints[4]
    if code == 6:
        return ints[4] + ints[10]
    if code == 3 or code == 7:
        return 6
    if code == 9:
        return 2 * ints[14] + ints[10]
    if code == 8:
        return 3
    return 1


@njit(**_JIT)
def _bounds_gap(bnd, Ri, pi_, Ro, po, code, dim):
    """The gap between the sides' bounding spheres (m; the input's sphere and the output plane
    for the plane pairs); > 0: they cannot touch. A cylinder against a hull (code 9): the
    larger of that and the hull's sphere's gap to the cylinder itself, off its round face or
    beyond an end (the wheel's sphere holds a track's shoes far along the spans; its cylinder
    does not)."""
    if code == 0 or code == 2 or code == 3 or code == 4 or code == 7 or code == 8:
        if bnd[0] == np.inf:
            return -np.inf
        return (Ro[0, 2] * (pi_[0] - po[0]) + Ro[1, 2] * (pi_[1] - po[1]) +
                Ro[2, 2] * (pi_[2] - po[2])) - bnd[0]
    if bnd[0] == np.inf or bnd[1] == np.inf:
        return -np.inf
    d0, d1, d2 = pi_[0] - po[0], pi_[1] - po[1], pi_[2] - po[2]
    gap = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2) - bnd[0] - bnd[1]
    if code == 9:
        a0, a1, a2 = Ri[0, 2], Ri[1, 2], Ri[2, 2]
        s = d0 * a0 + d1 * a1 + d2 * a2
        r0, r1, r2 = d0 - s * a0, d1 - s * a1, d2 - s * a2
        radial = math.sqrt(r0 * r0 + r1 * r1 + r2 * r2) - dim[0] - bnd[1]
        axial = abs(s) - dim[1] - bnd[1]
        gap = max(gap, radial, axial)
    return gap


@njit(**_INL)
def _to_local(R, o, x0, x1, x2):
    """Global point ``x`` in the frame (R, o)."""
    d0, d1, d2 = x0 - o[0], x1 - o[1], x2 - o[2]
    return (R[0, 0] * d0 + R[1, 0] * d1 + R[2, 0] * d2,
            R[0, 1] * d0 + R[1, 1] * d1 + R[2, 1] * d2,
            R[0, 2] * d0 + R[1, 2] * d1 + R[2, 2] * d2)


@njit(**_INL)
def _to_global(R, o, v0, v1, v2):
    """Point ``v`` of the frame (R, o) in global axes."""
    return (o[0] + R[0, 0] * v0 + R[0, 1] * v1 + R[0, 2] * v2,
            o[1] + R[1, 0] * v0 + R[1, 1] * v1 + R[1, 2] * v2,
            o[2] + R[2, 0] * v0 + R[2, 1] * v1 + R[2, 2] * v2)


@njit(**_INL)
def _rotate(R, v0, v1, v2):
    """Vector ``v`` of a frame of rotation R in global axes."""
    return (R[0, 0] * v0 + R[0, 1] * v1 + R[0, 2] * v2,
            R[1, 0] * v0 + R[1, 1] * v1 + R[1, 2] * v2,
            R[2, 0] * v0 + R[2, 1] * v1 + R[2, 2] * v2)


@njit(**_INL)
def _deepest_face(pln, f0, nf, x0, x1, x2):
    """``(s, f)``: the largest ``n . x + c`` over the planes ``f0 .. f0 + nf`` and its plane
    (s <= 0: x is inside the hull, -s deep)."""
    best, fb = -np.inf, f0
    for f in range(f0, f0 + nf):
        v = pln[f, 0] * x0 + pln[f, 1] * x1 + pln[f, 2] * x2 + pln[f, 3]
        if v > best:
            best, fb = v, f
    return best, fb


@njit(**_JIT)
def _closest_on_triangle(p0, p1, p2, a0, a1, a2, b0, b1, b2, c0, c1, c2):
    """The point of triangle (a, b, c) nearest to p, by the Voronoi regions of its vertices,
    edges and face (Ericson, Real-Time Collision Detection, 5.1.5)."""
    ab0, ab1, ab2 = b0 - a0, b1 - a1, b2 - a2
    ac0, ac1, ac2 = c0 - a0, c1 - a1, c2 - a2
    ap0, ap1, ap2 = p0 - a0, p1 - a1, p2 - a2
    d1 = ab0 * ap0 + ab1 * ap1 + ab2 * ap2
    d2 = ac0 * ap0 + ac1 * ap1 + ac2 * ap2
    if d1 <= 0.0 and d2 <= 0.0:
        return a0, a1, a2
    bp0, bp1, bp2 = p0 - b0, p1 - b1, p2 - b2
    d3 = ab0 * bp0 + ab1 * bp1 + ab2 * bp2
    d4 = ac0 * bp0 + ac1 * bp1 + ac2 * bp2
    if d3 >= 0.0 and d4 <= d3:
        return b0, b1, b2
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        v = d1 / (d1 - d3)
        return a0 + v * ab0, a1 + v * ab1, a2 + v * ab2
    cp0, cp1, cp2 = p0 - c0, p1 - c1, p2 - c2
    d5 = ab0 * cp0 + ab1 * cp1 + ab2 * cp2
    d6 = ac0 * cp0 + ac1 * cp1 + ac2 * cp2
    if d6 >= 0.0 and d5 <= d6:
        return c0, c1, c2
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        w = d2 / (d2 - d6)
        return a0 + w * ac0, a1 + w * ac1, a2 + w * ac2
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and d4 - d3 >= 0.0 and d5 - d6 >= 0.0:
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        return b0 + w * (c0 - b0), b1 + w * (c1 - b1), b2 + w * (c2 - b2)
    den = 1.0 / (va + vb + vc)
    v, w = vb * den, vc * den
    return a0 + ab0 * v + ac0 * w, a1 + ab1 * v + ac1 * w, a2 + ab2 * v + ac2 * w


@njit(**_INL)
def _hull_vertex_in(vtx, pln, v, f0, nf, Rv, ov, Rh, oh, bound, sgn):
    """Vertex ``v`` of one hull (frame Rv, ov) against the other hull (planes f0 .. f0 + nf,
    frame Rh, oh, bounding radius ``bound``): ``(depth, p, n)`` with ``n`` the other hull's
    face normal times ``sgn`` (+1: the vertex is the input's, pushed out along it).

    Inlined (with :func:`_deepest_face`) by LLVM (:data:`...maths.small._INL`): called for
    every vertex of a hull pair, a call of its own made the hull - hull pair a third slower
    (50 hull - box hull pairs, 2,000 rk4 steps: 5.25 s against 3.25 s, at numba's default
    inlining threshold)."""
    x0, x1, x2 = _to_global(Rv, ov, vtx[v, 0], vtx[v, 1], vtx[v, 2])
    d0, d1, d2 = x0 - oh[0], x1 - oh[1], x2 - oh[2]
    L = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
    if L > bound:                                   # outside the other's bounding sphere
        if L == 0.0:
            return bound - L, x0, x1, x2, 0.0, 0.0, 1.0
        return bound - L, x0, x1, x2, sgn * d0 / L, sgn * d1 / L, sgn * d2 / L
    l0, l1, l2 = _to_local(Rh, oh, x0, x1, x2)
    sd, f = _deepest_face(pln, f0, nf, l0, l1, l2)
    m0, m1, m2 = _rotate(Rh, pln[f, 0], pln[f, 1], pln[f, 2])
    depth = -sd
    h = 0.5 * depth
    return depth, x0 + h * m0, x1 + h * m1, x2 + h * m2, sgn * m0, sgn * m1, sgn * m2


@njit(**_JIT)
def _ground_frame_into(Rl, pl, c, Rout, pout):
    """A ground marker's frame ``Rl[c]``, ``pl[c]`` (given in global axes) into ``Rout``,
    ``pout``."""
    for a in range(3):
        pout[a] = pl[c, a]
        for b in range(3):
            Rout[a, b] = Rl[c, a, b]


@njit(**_JIT)
def _frame_into(body, Rl, pl, c, R, pb, Rout, pout):
    """Global rotation and origin of marker ``c`` of ``Rl``/``pl`` (on ``body``; body -1: the
    ground, given in global axes) into ``Rout`` (3, 3), ``pout`` (3,): written out (a numba
    ``@`` of 3x3 arrays calls BLAS and allocates: microseconds)."""
    if body < 0:
        _ground_frame_into(Rl, pl, c, Rout, pout)
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


@njit(**_JIT)
def _hull_points(code, dim, Ri, pi_, Ro, po, ints, vtx, tri, pln, bnd, pts):
    """The candidate points of a pair with a hull (codes 4 to 6 and 9) into ``pts`` (rows, 7)
    as ``(depth, p, n)`` (see :func:`_candidate`); returns their number. One call per pair (a
    call per point passing arrays cost a reference count operation per array: 170 ns a
    vertex)."""
    if code == 9:
        return _cylinder_hull_points(dim, Ri, pi_, Ro, po, ints, vtx, pln, pts)
    if code == 4:                                       # hull vertices - plane
        n0, n1, n2 = Ro[0, 2], Ro[1, 2], Ro[2, 2]
        for j in range(ints[4]):
            v = ints[3] + j
            x0, x1, x2 = _to_global(Ri, pi_, vtx[v, 0], vtx[v, 1], vtx[v, 2])
            depth = -(n0 * (x0 - po[0]) + n1 * (x1 - po[1]) + n2 * (x2 - po[2]))
            h = 0.5 * depth
            pts[j, 0], pts[j, 1], pts[j, 2], pts[j, 3] = depth, x0 + h * n0, x1 + h * n1, \
                x2 + h * n2
            pts[j, 4], pts[j, 5], pts[j, 6] = n0, n1, n2
        return ints[4]
    if code == 6:                                       # hull - hull: vertices inside the other
        ni = ints[4]
        for j in range(ni + ints[10]):
            if j < ni:
                r = _hull_vertex_in(vtx, pln, ints[3] + j, ints[13], ints[14], Ri, pi_, Ro, po,
                                    bnd[1], 1.0)
            else:
                r = _hull_vertex_in(vtx, pln, ints[9] + j - ni, ints[7], ints[8], Ro, po, Ri,
                                    pi_, bnd[0], -1.0)
            for a in range(7):
                pts[j, a] = r[a]
        return ni + ints[10]
    # code 5: sphere - hull
    r = dim[0]
    l0, l1, l2 = _to_local(Ro, po, pi_[0], pi_[1], pi_[2])
    sd, f = _deepest_face(pln, ints[13], ints[14], l0, l1, l2)
    m0, m1, m2 = pln[f, 0], pln[f, 1], pln[f, 2]
    dist = sd
    if 0.0 < sd < r:                                    # outside, near: the exact distance
        best = np.inf
        q0 = q1 = q2 = 0.0
        for t in range(ints[11], ints[11] + ints[12]):
            a, b, c = tri[t, 0], tri[t, 1], tri[t, 2]
            c0, c1, c2 = _closest_on_triangle(l0, l1, l2, vtx[a, 0], vtx[a, 1], vtx[a, 2],
                                              vtx[b, 0], vtx[b, 1], vtx[b, 2],
                                              vtx[c, 0], vtx[c, 1], vtx[c, 2])
            e0, e1, e2 = l0 - c0, l1 - c1, l2 - c2
            d2 = e0 * e0 + e1 * e1 + e2 * e2
            if d2 < best:
                best, q0, q1, q2 = d2, c0, c1, c2
        dist = math.sqrt(best)
        if dist > 0.0:
            m0, m1, m2 = (l0 - q0) / dist, (l1 - q1) / dist, (l2 - q2) / dist
    n0, n1, n2 = _rotate(Ro, m0, m1, m2)
    depth = r - dist
    a = r - 0.5 * depth
    pts[0, 0], pts[0, 1], pts[0, 2], pts[0, 3] = depth, pi_[0] - a * n0, pi_[1] - a * n1, \
        pi_[2] - a * n2
    pts[0, 4], pts[0, 5], pts[0, 6] = n0, n1, n2
    return 1


@njit(**_INL)
def _under_face(pln, f0, nf, f, q0, q1, q2, Ro, tol):
    """Whether the point ``q`` (the hull's frame), on the plane of face ``f``, is on that face:
    inside or on every other plane of the hull. On a plane (within ``tol``) counts only for a
    plane whose normal points against a fixed global direction: a point on the joint of two
    convex pieces laid side by side (their planes there of opposite normals) belongs to one of
    them, not both, nor neither."""
    for g in range(f0, f0 + nf):
        if g == f:
            continue
        v = pln[g, 0] * q0 + pln[g, 1] * q1 + pln[g, 2] * q2 + pln[g, 3]
        if v > tol:
            return False
        if v >= -tol:
            m0, m1, m2 = _rotate(Ro, pln[g, 0], pln[g, 1], pln[g, 2])
            if 0.8017837257372732 * m0 + 0.5345224838248488 * m1 + \
                    0.2672612419124244 * m2 > 0.0:
                return False
    return True


@njit(**_JIT)
def _cylinder_hull_points(dim, Ri, pi_, Ro, po, ints, vtx, pln, pts):
    """The candidate points of a cylinder (input: radius ``dim[0]``, half length ``dim[1]``,
    axis the marker's z) against a hull (output) into ``pts``; returns their number.

    - For each face plane of the hull, the point of each end circle of the cylinder that goes
      deepest through that plane (the rim point furthest along minus the face's normal): a
      wheel on a track shoe's face touches there. It is measured against the whole hull as a
      hull - hull vertex is (the largest signed distance to the hull's planes): inside, it is
      that plane's depth, pushed out along its normal.
    - Each vertex of the hull inside the cylinder, pushed out of it the shorter way: radially
      (off the axis) or through the nearer end face (a shoe narrower than the wheel, a corner
      digging into its round face).

    An end point inside the hull is kept for the face it was found for when it lies under that
    face (:func:`_under_face`: its projection on the face's plane is on the face), and pushed
    out through that face, however near another face it is: a wheel's lowest point near the end
    of a shoe goes up through the shoe's face, not out through its end (the nearest plane),
    and over the joint of two shoes laid end to end it is under the face of exactly one of them.
    Another face finding the same point (a face whose normal differs only along the axis, a
    bevel) does not have it under itself, so that no force is counted twice. At most two end points per face and the vertices: ``2 * planes + vertices``
    (:func:`_count`); returns how many were written. The end points of a plane parallel to the
    axis are the line of contact's ends, so a wheel on a flat face carries its load at its two
    rims as the cylinder - plane pair does (code 3). With the axis along a face's normal (the
    cylinder standing on an end face) every rim point of that end is as deep: its centre is
    taken, so that the load is carried at the axis; tilted, the rim point (a restoring
    moment)."""
    rc, hl = dim[0], dim[1]
    a0, a1, a2 = Ri[0, 2], Ri[1, 2], Ri[2, 2]
    f0, nf = ints[13], ints[14]
    tol = 1e-12 * (rc + hl)                         # a point on a face plane: on it
    j = 0
    for f in range(f0, f0 + nf):
        m0, m1, m2 = _rotate(Ro, pln[f, 0], pln[f, 1], pln[f, 2])
        na = m0 * a0 + m1 * a1 + m2 * a2
        u0, u1, u2 = na * a0 - m0, na * a1 - m1, na * a2 - m2   # toward -m, in the circles
        lu = math.sqrt(u0 * u0 + u1 * u1 + u2 * u2)
        if lu < 1e-12:                              # the axis along the normal: the end's centre
            u0 = u1 = u2 = 0.0
        else:
            u0, u1, u2 = rc * u0 / lu, rc * u1 / lu, rc * u2 / lu
        for end in range(2):
            s = hl if end == 1 else -hl
            x0, x1, x2 = pi_[0] + s * a0 + u0, pi_[1] + s * a1 + u1, pi_[2] + s * a2 + u2
            l0, l1, l2 = _to_local(Ro, po, x0, x1, x2)
            sd, fb = _deepest_face(pln, f0, nf, l0, l1, l2)
            if sd <= tol:                           # inside: under face f, or another's
                df = pln[f, 0] * l0 + pln[f, 1] * l1 + pln[f, 2] * l2 + pln[f, 3]
                if not _under_face(pln, f0, nf, f, l0 - df * pln[f, 0], l1 - df * pln[f, 1],
                                   l2 - df * pln[f, 2], Ro, tol):
                    continue
                sd, fb = df, f
            n0, n1, n2 = _rotate(Ro, pln[fb, 0], pln[fb, 1], pln[fb, 2])
            depth = -sd
            h = 0.5 * depth
            pts[j, 0], pts[j, 1], pts[j, 2], pts[j, 3] = depth, x0 + h * n0, x1 + h * n1, \
                x2 + h * n2
            pts[j, 4], pts[j, 5], pts[j, 6] = n0, n1, n2
            j += 1
    for v in range(ints[9], ints[9] + ints[10]):
        x0, x1, x2 = _to_global(Ro, po, vtx[v, 0], vtx[v, 1], vtx[v, 2])
        l0, l1, l2 = _to_local(Ri, pi_, x0, x1, x2)
        r = math.sqrt(l0 * l0 + l1 * l1)
        radial, axial = rc - r, hl - abs(l2)
        if radial < axial:                          # out through the round face
            if r > 0.0:
                e0, e1, e2 = _rotate(Ri, l0 / r, l1 / r, 0.0)
            else:
                e0, e1, e2 = Ri[0, 0], Ri[1, 0], Ri[2, 0]
            depth = radial
        else:                                       # out through the nearer end face
            t = 1.0 if l2 >= 0.0 else -1.0
            e0, e1, e2 = t * a0, t * a1, t * a2
            depth = axial
        h = 0.5 * depth
        # the vertex goes out along e: the cylinder (the input) is pushed along -e
        pts[j, 0], pts[j, 1], pts[j, 2], pts[j, 3] = depth, x0 + h * e0, x1 + h * e1, \
            x2 + h * e2
        pts[j, 4], pts[j, 5], pts[j, 6] = -e0, -e1, -e2
        j += 1
    return j


@njit(**_JIT)
def _scratch(ct_int):
    """Scratch for :func:`_hull_points`: as many rows as the most candidate points of a hull
    pair (at least one)."""
    rows = 1
    for c in range(ct_int.shape[0]):
        if ct_int[c, 2] >= 4:
            rows = max(rows, _count(ct_int[c, 2], ct_int[c]))
    return np.empty((rows, 7))


@njit(**_JIT)
def _candidate(code, dim, Ri, pi_, Ro, po, j):
    """Candidate point ``j`` of a pair of primitives (codes 0 to 3, 7 and 8; the hulls':
    :func:`_hull_points`) with the markers' global frames: ``(depth, p0, p1, p2, n0, n1, n2)``,
    the contact point midway between the surfaces and the normal pushing the input shape out
    (depth <= 0: not touching)."""
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
    else:                                               # cylinder, cone rims, torus tube - plane
        # the circle (centre along the axis, radius rc) whose point is candidate j; its
        # deepest point against the plane, or a third of a turn either side of it
        a0, a1, a2 = Ri[0, 2], Ri[1, 2], Ri[2, 2]
        if code == 3:
            end, k = j // 3, j % 3
            s = dim[1] if end == 1 else -dim[1]
            rc, tube = dim[0], 0.0
        elif code == 7:
            end, k = j // 3, j % 3
            s = dim[2] if end == 1 else -dim[2]
            rc = dim[1] if end == 1 else dim[0]
            tube = 0.0
        else:
            k, s, rc, tube = j, 0.0, dim[0], dim[1]
        na = n0 * a0 + n1 * a1 + n2 * a2
        u0, u1, u2 = na * a0 - n0, na * a1 - n1, na * a2 - n2    # down the slope, in the circle
        lu = math.sqrt(u0 * u0 + u1 * u1 + u2 * u2)
        if lu < 1e-12:                                  # axis along the normal: any direction
            u0, u1, u2, lu = Ri[0, 0], Ri[1, 0], Ri[2, 0], 1.0
        u0, u1, u2 = u0 / lu, u1 / lu, u2 / lu
        if k == 0:
            c_, s_ = 1.0, 0.0
        else:
            c_, s_ = -0.5, (0.8660254037844386 if k == 1 else -0.8660254037844386)
        v0, v1, v2 = _cr(a0, a1, a2, u0, u1, u2)
        e0, e1, e2 = c_ * u0 + s_ * v0, c_ * u1 + s_ * v1, c_ * u2 + s_ * v2
        # the rim point (a cone), or the tube's deepest point at that place of its circle
        x0 = pi_[0] + s * a0 + rc * e0 - tube * n0
        x1 = pi_[1] + s * a1 + rc * e1 - tube * n1
        x2 = pi_[2] + s * a2 + rc * e2 - tube * n2
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


@njit(**_JIT)
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
def _evaluate(ct_int, ct_Ri, ct_pi, ct_Ro, ct_po, ct_dim, ct_bnd, ct_par, ct_vtx, ct_tri, ct_pln,
              R, pb, pc, hp, w, vh, FC, TC, apply, acc, Ri, pi_, Ro, po, pts):
    """Every contact ``c`` at one instant: its loads added to FC, TC (n, 3) if ``apply``;
    ``acc[c]`` (``acc``: contacts x :data:`_ACC`) filled with the force on the (packed) input
    body (0:3), the normal force (3), the friction force (4:7), the largest depth (7), the slip
    at the deepest point (8), the dissipated power (9), the elastic energy (10), the number of
    points in contact (11) and the contact point (12:15: the normal forces' centre, or the
    deepest candidate point when no point pushes). ``Ri, pi_, Ro, po``: scratch for the markers' global frames, ``pts`` for
    the hull pairs' candidate points (:func:`_scratch`). All contacts in one call: a compiled
    call counts a reference for each of its array arguments, which cost as much as a sphere
    pair's evaluation when it was made per contact."""
    for c in range(ct_int.shape[0]):
        for a in range(_ACC):
            acc[c, a] = 0.0
        bi, bo, code = ct_int[c, 0], ct_int[c, 1], ct_int[c, 2]
        _frame_into(bi, ct_Ri, ct_pi, c, R, pb, Ri, pi_)
        _frame_into(bo, ct_Ro, ct_po, c, R, pb, Ro, po)
        dim = ct_dim[c]
        k, e, alpha = ct_par[c, 0], ct_par[c, 1], ct_par[c, 2]
        mus, mud, vs = ct_par[c, 3], ct_par[c, 4], ct_par[c, 5]
        acc[c, 7] = -np.inf
        d0 = d1 = d2 = 0.0
        ints, bnd = ct_int[c], ct_bnd[c]
        gap = _bounds_gap(bnd, Ri, pi_, Ro, po, code, dim)
        if gap > 0.0:                                       # broad phase: too far to touch
            acc[c, 7] = -gap
            acc[c, 12], acc[c, 13], acc[c, 14] = pi_[0], pi_[1], pi_[2]
            continue
        hull = (code >= 4 and code <= 6) or code == 9
        if hull:
            count = _hull_points(code, dim, Ri, pi_, Ro, po, ints, ct_vtx, ct_tri, ct_pln, bnd, pts)
        else:
            count = _count(code, ints)
        for j in range(count):
            if hull:
                depth, p0, p1, p2 = pts[j, 0], pts[j, 1], pts[j, 2], pts[j, 3]
                n0, n1, n2 = pts[j, 4], pts[j, 5], pts[j, 6]
            else:
                depth, p0, p1, p2, n0, n1, n2 = _candidate(code, dim, Ri, pi_, Ro, po, j)
            deepest = depth > acc[c, 7]
            if deepest:
                acc[c, 7] = depth
                d0, d1, d2 = p0, p1, p2
            if depth <= 0.0:
                if deepest:
                    acc[c, 8] = 0.0
                continue
            vi0, vi1, vi2 = _point_velocity(bi, p0, p1, p2, w, vh, hp)
            vo0, vo1, vo2 = _point_velocity(bo, p0, p1, p2, w, vh, hp)
            r0, r1, r2 = vi0 - vo0, vi1 - vo1, vi2 - vo2
            vn = r0 * n0 + r1 * n1 + r2 * n2
            t0, t1, t2 = r0 - vn * n0, r1 - vn * n1, r2 - vn * n2
            s = math.sqrt(t0 * t0 + t1 * t1 + t2 * t2)
            if deepest:
                acc[c, 8] = s
            fk = k * depth ** e
            N = fk * (1.0 - alpha * vn)                     # depth' = -vn
            if N < 0.0:
                N = 0.0
            f0, f1, f2 = N * n0, N * n1, N * n2
            mu = 0.0
            if s > 0.0 and (mus > 0.0 or mud > 0.0):
                mu = _friction_coefficient(s, mus, mud, vs)
                g = -mu * N / s
                acc[c, 4] += g * t0
                acc[c, 5] += g * t1
                acc[c, 6] += g * t2
                f0 += g * t0
                f1 += g * t1
                f2 += g * t2
            acc[c, 0] += f0
            acc[c, 1] += f1
            acc[c, 2] += f2
            acc[c, 3] += N
            acc[c, 9] += -(N - fk) * vn + mu * N * s
            acc[c, 10] += fk * depth / (e + 1.0)
            acc[c, 11] += 1.0
            acc[c, 12] += N * p0
            acc[c, 13] += N * p1
            acc[c, 14] += N * p2
            if apply:
                _add_wrench3(bi, f0, f1, f2, 0.0, 0.0, 0.0, p0, p1, p2, FC, TC, pc)
                _add_wrench3(bo, -f0, -f1, -f2, 0.0, 0.0, 0.0, p0, p1, p2, FC, TC, pc)
        if acc[c, 3] > 0.0:
            for a in range(12, 15):
                acc[c, a] /= acc[c, 3]
        else:
            acc[c, 12], acc[c, 13], acc[c, 14] = d0, d1, d2


@njit(**_JIT)
def add_loads(F, mags, R, pb, pc, hp, w, vh, FC, TC):
    """Add the contact loads to the bodies' forces FC and torques about the mass centres TC;
    return the power the contacts dissipate (W, what :func:`add_power` adds: the dispatcher's
    fixed-step kernel takes it from here instead of evaluating them again)."""
    if F.ct_int.shape[0] == 0:
        return 0.0
    acc = np.empty((F.ct_int.shape[0], _ACC))
    Ri, Ro, pi_, po = np.empty((3, 3)), np.empty((3, 3)), np.empty(3), np.empty(3)
    pts = _scratch(F.ct_int)
    _evaluate(F.ct_int, F.ct_Ri, F.ct_pi, F.ct_Ro, F.ct_po, F.ct_dim, F.ct_bnd, F.ct_par,
              F.ct_vtx, F.ct_tri, F.ct_pln, R, pb, pc, hp, w, vh, FC, TC, True, acc,
              Ri, pi_, Ro, po, pts)
    pdis = 0.0
    for c in range(F.ct_int.shape[0]):
        pdis += acc[c, 9]
    return pdis


@njit(**_JIT)
def add_power(F, mags, R, pb, pc, hp, w, vh, out):
    """Add the contacts' dissipated power (damping and friction) to ``out[2]``."""
    if F.ct_int.shape[0] == 0:
        return
    acc = np.empty((F.ct_int.shape[0], _ACC))
    dummy = np.empty((0, 3))
    Ri, Ro, pi_, po = np.empty((3, 3)), np.empty((3, 3)), np.empty(3), np.empty(3)
    pts = _scratch(F.ct_int)
    _evaluate(F.ct_int, F.ct_Ri, F.ct_pi, F.ct_Ro, F.ct_po, F.ct_dim, F.ct_bnd, F.ct_par,
              F.ct_vtx, F.ct_tri, F.ct_pln, R, pb, pc, hp, w, vh, dummy, dummy, False,
              acc, Ri, pi_, Ro, po, pts)
    pdis = out[2]
    for c in range(F.ct_int.shape[0]):
        pdis += acc[c, 9]
    out[2] = pdis


@njit(**_JIT)
def _potential_rows(F, c, Ri, pi_, Ro, po, ee):
    """Add contact ``c``'s elastic energy in every row (markers' global frames per row)."""
    pts = _scratch(F.ct_int)
    for r in range(ee.size):
        ee[r] = _potential_add(F.ct_int[c], F.ct_bnd[c], F.ct_par[c], F.ct_dim[c], F.ct_vtx,
                               F.ct_tri, F.ct_pln, Ri[r], pi_[r], Ro[r], po[r], pts, ee[r])


@njit(**_JIT)
def _potential_add(ints, bnd, par, dim, vtx, tri, pln, Ri, pi_, Ro, po, pts, e0):
    """``e0`` plus a contact's elastic energy (its rows of ``ct_int``, ``ct_bnd``, ``ct_par``,
    ``ct_dim``; the hull pools) at its markers' global frames, each point's term added in
    turn; ``pts``: :func:`_scratch`. Arrays, not the struct: called per contact and row."""
    code = ints[2]
    k, e = par[0], par[1]
    if _bounds_gap(bnd, Ri, pi_, Ro, po, code, dim) > 0.0:
        return e0
    hull = (code >= 4 and code <= 6) or code == 9
    if hull:
        count = _hull_points(code, dim, Ri, pi_, Ro, po, ints, vtx, tri, pln, bnd, pts)
    else:
        count = _count(code, ints)
    for j in range(count):
        if hull:
            depth = pts[j, 0]
        else:
            depth = _candidate(code, dim, Ri, pi_, Ro, po, j)[0]
        if depth > 0.0:
            e0 += k * depth ** (e + 1.0) / (e + 1.0)
    return e0


def does_work(F) -> bool:
    """Whether a contact dissipates: damping (restitution below 1) or friction."""
    return bool(F.ct_int.shape[0] and (F.ct_par[:, 2:5] != 0.0).any())


@njit(**_JIT)
def _attached_into(body, Rl, pl, c, R, pb, r, Rout, pout):
    """Marker ``c``'s global frame in row ``r`` of the stacked body arrays ``R`` (rows, n, 3,
    3) and ``pb`` (rows, n, 3), into ``Rout``, ``pout``: the sums in the order of
    :func:`...maths.rows._mat_mat` and ``_mat_vec`` (the recorder's attachments), so that the
    energies come out as from them, to the bit."""
    if body < 0:
        _ground_frame_into(Rl, pl, c, Rout, pout)
        return
    for a in range(3):
        pout[a] = pb[r, body, a] + (R[r, body, a, 0] * pl[c, 0] + R[r, body, a, 1] * pl[c, 1]
                                    + R[r, body, a, 2] * pl[c, 2])
        for b in range(3):
            Rout[a, b] = (R[r, body, a, 0] * Rl[c, 0, b] + R[r, body, a, 1] * Rl[c, 1, b]
                          + R[r, body, a, 2] * Rl[c, 2, b])


@njit(**_JIT)
def _potential_all(F, R, pb, ee):
    """Add every contact's elastic energy in every row to ``ee`` (rows,), the bodies' rotations
    ``R`` (rows, n, 3, 3) and origins ``pb`` (rows, n, 3) given: one compiled call for the
    whole batch (a call per contact with its attachments computed in numpy: 0.07 s of the
    50-ball benchmark's 0.44 s of rows)."""
    Ri, Ro, pi_, po = np.empty((3, 3)), np.empty((3, 3)), np.empty(3), np.empty(3)
    ct_int, ct_bnd, ct_par, ct_dim = F.ct_int, F.ct_bnd, F.ct_par, F.ct_dim
    ct_vtx, ct_tri, ct_pln = F.ct_vtx, F.ct_tri, F.ct_pln
    ct_Ri, ct_pi, ct_Ro, ct_po = F.ct_Ri, F.ct_pi, F.ct_Ro, F.ct_po
    pts = _scratch(ct_int)
    for r in range(ee.size):
        for c in range(ct_int.shape[0]):
            _attached_into(ct_int[c, 0], ct_Ri, ct_pi, c, R, pb, r, Ri, pi_)
            _attached_into(ct_int[c, 1], ct_Ro, ct_po, c, R, pb, r, Ro, po)
            ee[r] = _potential_add(ct_int[c], ct_bnd[c], ct_par[c], ct_dim[c], ct_vtx, ct_tri,
                                   ct_pln, Ri, pi_, Ro, po, pts, ee[r])


def add_potential(F, attach, ee) -> None:
    """Add the contacts' elastic energy to ``ee`` (rows,) (see
    :func:`.spring_damper.add_potential`); with the recorder's attachments
    (:class:`...results.recorder.Attachments`: the stacked body arrays at hand) in one compiled
    call."""
    if F.ct_int.shape[0] == 0:
        return
    if hasattr(attach, "R"):
        _potential_all(F, np.ascontiguousarray(attach.R), np.ascontiguousarray(attach.pb), ee)
        return
    for c in range(F.ct_int.shape[0]):
        Ri, pi_ = attach(F.ct_int[c, 0], F.ct_Ri[c], F.ct_pi[c])
        Ro, po = attach(F.ct_int[c, 1], F.ct_Ro[c], F.ct_po[c])
        _potential_rows(F, c, np.ascontiguousarray(Ri), np.ascontiguousarray(pi_),
                        np.ascontiguousarray(Ro), np.ascontiguousarray(po), ee)


@njit(**_JIT)
def columns(F, R, pb, pc, hp, w, vh, out):
    """The result columns (:data:`COLUMNS`) of every contact in every row: ``out`` (rows,
    contacts, 10); the bodies' arrays with a leading rows axis."""
    acc = np.empty((F.ct_int.shape[0], _ACC))
    dummy = np.empty((0, 3))
    Ri, Ro, pi_, po = np.empty((3, 3)), np.empty((3, 3)), np.empty(3), np.empty(3)
    pts = _scratch(F.ct_int)
    for r in range(R.shape[0]):
        _evaluate(F.ct_int, F.ct_Ri, F.ct_pi, F.ct_Ro, F.ct_po, F.ct_dim, F.ct_bnd, F.ct_par,
                  F.ct_vtx, F.ct_tri, F.ct_pln, R[r], pb[r], pc[r], hp[r], w[r], vh[r],
                  dummy, dummy, False, acc, Ri, pi_, Ro, po, pts)
        for c in range(F.ct_int.shape[0]):
            s = F.ct_sign[c]
            out[r, c, 0] = s * acc[c, 0]
            out[r, c, 1] = s * acc[c, 1]
            out[r, c, 2] = s * acc[c, 2]
            out[r, c, 3] = acc[c, 3]
            out[r, c, 4] = math.sqrt(acc[c, 4] ** 2 + acc[c, 5] ** 2 + acc[c, 6] ** 2)
            out[r, c, 5] = acc[c, 7]
            out[r, c, 6] = acc[c, 8]
            for a in range(3):
                out[r, c, 7 + a] = acc[c, 12 + a]
