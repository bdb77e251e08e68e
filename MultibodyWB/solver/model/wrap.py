"""The path of a closed chain (a track, a chain, a belt) wrapped round circles in a plane.

Everything is in the plane's (x, z) coordinates, z up (gravity along -z). A wheel is a circle
``(x, z, r)``, ``r`` already grown by half the shoe's thickness: a shoe keeps clear of the wheel
when its mid-plane (the chord between its two pins) keeps out of that disk.

The chain's pins: a shoe lying on a wheel is centred on it, its chord touching the circle at
its middle, so that its pins sit on the wheel's *pin circle* of radius ``R = sqrt(r^2 +
p^2 / 4)`` (:func:`pin_radius`; ``p`` the pitch). The tight chain runs round the convex hull of
the pin circles (:func:`hull`): its arcs, and its straight edges, the pin circles' outer common
tangents. Each pin is the next point of that boundary a chord's length ``p`` ahead of the pin
before it: the chord turned towards the hull as far as it goes without its far pin falling
inside the hull (so without entering a wheel: on an arc the chord touches its circle at its
middle, on an edge it lies along the edge; :func:`wrap` checks every chord). Where the walk
passes from an edge to an arc or back, the chord cuts the corner.

The slack: ``n`` shoes take ``n p``; the tight walk from the end of one hull edge (the *slack
edge*; by default the longest edge on the top side) round the hull back onto that edge leaves a
gap that a whole number of chords must bridge. When they are longer than the gap the chords
between hang as a discrete catenary (:func:`catenary`: each pin carries one link's weight, the
tensions' horizontal component is the same in every link, their vertical one grows by one weight
a pin), its ends moved on round the wheels' pin circles while a hanging link would enter a
wheel (a sagging span leaves its wheels further round than the tight edge does).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

#: Below this (a fraction of the pitch) a length counts as zero: a gap this close to whole
#: pitches is bridged straight.
TOLERANCE = 1e-9


def pin_radius(radius: float, pitch: float) -> float:
    """The radius of the pins' circle round a wheel of (grown) radius ``radius``: a chord of
    ``pitch`` between two pins on it touches the wheel at its middle."""
    return math.sqrt(radius * radius + 0.25 * pitch * pitch)


def tangent(c1, r1: float, c2, r2: float):
    """The outer common tangent of two circles on the right of ``c1 -> c2`` (a hull walked
    counter-clockwise has its outside on the right): its points ``(on circle 1, on circle 2)``."""
    d = c2 - c1
    L = float(np.hypot(*d))
    u = d / L
    s = (r1 - r2) / L
    right = np.array([u[1], -u[0]])
    n_ = s * u + math.sqrt(1.0 - s * s) * right
    return c1 + r1 * n_, c2 + r2 * n_


@dataclass
class Hull:
    """The convex hull of circles: ``order`` the indices of the circles it touches,
    counter-clockwise from the lowest (a circle between two others on one line, touched above
    and below, comes twice); ``edges[i]`` the straight edge (start, end) from circle
    ``order[i]`` to ``order[i + 1]``; ``arcs[i]`` the arc of circle ``order[i]`` (start angle,
    sweep >= 0, radians) from the edge before to the edge after; ``perimeter`` (in the
    centres' unit: m in :func:`wrap`)."""
    centres: np.ndarray
    radii: np.ndarray
    order: list
    edges: list
    arcs: list
    perimeter: float

    def edge_length(self, i: int) -> float:
        A, B = self.edges[i]
        return float(np.hypot(*(B - A)))


def hull(centres, radii) -> Hull:
    """The convex hull of the circles ``centres`` (x, z) of ``radii``. Circles inside another
    are not on it; of several circles on one straight edge, each is (the edge split at each,
    its arc of zero sweep). At least two distinct circles."""
    c = np.asarray(centres, dtype=float).reshape(-1, 2)
    r = np.asarray(radii, dtype=float).reshape(-1)
    n = len(c)
    scale = max(1.0, float(np.max(np.abs(c))) + float(np.max(r)))
    tol = 1e-12 * scale
    # each candidate edge i -> j: the tangent on the right with every circle on its left
    outgoing = {}
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            L = float(np.hypot(*(c[j] - c[i])))
            if L <= abs(r[i] - r[j]) + tol:
                continue                      # one inside the other (or the same circle)
            A, B = tangent(c[i], r[i], c[j], r[j])
            normal = (A - c[i]) / r[i]
            level = float(normal @ A)
            if all(float(normal @ c[k]) + r[k] <= level + tol for k in range(n)):
                outgoing.setdefault(i, []).append((j, A, B))
    if not outgoing:
        raise ValueError("the wrap needs at least two circles, neither inside the other")
    # gift wrapping from the lowest circle, heading +x: at each circle the edge that turns
    # least from the way in (of edges along one line, the shortest: each circle on it counts)
    start = min(outgoing, key=lambda i: (c[i][1] - r[i], c[i][0]))
    order, edges = [start], []
    i, heading = start, 0.0
    for _ in range(2 * n + 2):
        def turn(cand):
            A, B = cand[1], cand[2]
            a = (math.atan2(B[1] - A[1], B[0] - A[0]) - heading) % (2 * math.pi)
            a = 0.0 if a > 2 * math.pi - 1e-12 else a
            return (round(a, 12), float(np.hypot(*(B - A))))
        j, A, B = min(outgoing[i], key=turn)
        edges.append((A, B))
        heading = math.atan2(B[1] - A[1], B[0] - A[0])
        if j == start:
            break
        if j not in outgoing:
            raise ValueError("the circles' hull could not be traced")
        order.append(j)                       # (a circle between two others on a line on
        #                                       both sides of the hull comes twice)
        i = j
    else:
        raise ValueError("the circles' hull could not be traced")
    arcs = []
    for k, i in enumerate(order):
        A_in = edges[k - 1][1]
        A_out = edges[k][0]
        a0 = math.atan2(*(A_in - c[i])[::-1])
        a1 = math.atan2(*(A_out - c[i])[::-1])
        sweep = (a1 - a0) % (2 * math.pi)
        if sweep > 2 * math.pi - 1e-12:
            sweep = 0.0
        arcs.append((a0, sweep))
    perimeter = sum(float(np.hypot(*(B - A))) for A, B in edges)
    perimeter += sum(r[i] * s for i, (_, s) in zip(order, arcs))
    return Hull(c, r, order, edges, arcs, perimeter)


# -- walking the boundary ----------------------------------------------------------------------

@dataclass
class _Boundary:
    """The hull's boundary as elements, counter-clockwise from arc 0: element ``2 i`` the arc of
    circle ``order[i]`` (parameter: angle from its start), ``2 i + 1`` the edge after it
    (parameter: length from its start)."""
    hull: Hull
    lengths: list = field(default_factory=list)

    def __post_init__(self):
        h = self.hull
        for k, i in enumerate(h.order):
            self.lengths.append(h.arcs[k][1])
            self.lengths.append(h.edge_length(k))

    def __len__(self):
        return len(self.lengths)

    def point(self, e: int, s: float) -> np.ndarray:
        h = self.hull
        k = e // 2
        if e % 2 == 0:
            i = h.order[k]
            a = h.arcs[k][0] + s
            return h.centres[i] + h.radii[i] * np.array([math.cos(a), math.sin(a)])
        A, B = h.edges[k]
        return A + s * (B - A) / self.lengths[e]

    def meet(self, P, e: int, s0: float, pitch: float):
        """The parameter in element ``e``, from ``s0`` on, of the point at ``pitch`` from ``P``
        (P behind it, within ``pitch`` of the element's part before it), or None."""
        h = self.hull
        k = e // 2
        if e % 2 == 1:                        # an edge: |A + s u - P| = pitch, the far root
            A, B = h.edges[k]
            u = (B - A) / self.lengths[e]
            t0 = float((P - A) @ u)
            w = P - A - t0 * u
            h2 = float(w @ w)
            if h2 > pitch * pitch:
                return None
            s = t0 + math.sqrt(pitch * pitch - h2)
            return s if s0 - TOLERANCE * pitch <= s <= self.lengths[e] else None
        i = h.order[k]
        c, R = h.centres[i], h.radii[i]
        D = P - c
        rho = float(np.hypot(*D))
        # the angle alpha from D's direction at which |c + R e(a) - P| = pitch, written so that
        # it stays exact when P is on the circle (alpha = 2 asin(pitch / 2R))
        f1, f2 = pitch * pitch - (rho - R) ** 2, (rho + R) ** 2 - pitch * pitch
        if f1 < 0.0 or f2 < 0.0:
            return None
        kk = (rho * rho + R * R - pitch * pitch) / (2.0 * R)
        alpha = math.atan2(math.sqrt(f1 * f2) / (2.0 * R), kk)
        a = math.atan2(D[1], D[0]) + alpha - h.arcs[k][0]
        a = (a + math.pi) % (2 * math.pi) - math.pi       # nearest to the arc's start
        if a < s0 - 1e-12:
            a += 2 * math.pi
        return a if a <= self.lengths[e] + 1e-12 else None

    def next_pin(self, P, e: int, s: float, pitch: float):
        """The next pin ahead of pin ``P`` (at parameter ``s`` of element ``e``): ``(point,
        element, parameter)``."""
        for step in range(len(self) + 1):
            f = (e + step) % len(self)
            start = s if step == 0 else 0.0
            hit = self.meet(P, f, start, pitch)
            if hit is not None:
                return self.point(f, hit), f, hit
        raise ValueError("the chain is longer than the wheels' hull: one pitch goes round it")


# -- the hanging span --------------------------------------------------------------------------

def catenary(A, B, links: int, pitch: float):
    """The ``links - 1`` pins between ``A`` and ``B`` of a chain of ``links`` equal links of
    length ``pitch`` hanging under gravity (-z), each pin carrying one link's weight: the
    tensions' horizontal part ``H`` is the same in every link, their vertical part grows by
    one weight ``w`` a pin, so link ``j``'s slope is ``s0 + j w / H`` (signed along the span);
    the two unknowns (``s0``, ``w / H``) from the span's two components
    (:func:`scipy.optimize.root`). Returns ``(pins, (s0, w / H))``."""
    from scipy.optimize import root
    A, B = np.asarray(A, dtype=float), np.asarray(B, dtype=float)
    d = B - A
    D = float(np.hypot(*d))
    N = int(links)
    if N * pitch < D * (1.0 - TOLERANCE):
        raise ValueError("the hanging span is shorter than its ends' distance")
    if abs(d[0]) < 1e-9 * D:
        raise ValueError("the hanging span is vertical")
    sx = math.copysign(1.0, d[0])
    slope = d[1] / d[0]
    j = np.arange(N, dtype=float)
    # the parabola's guess: sag s from the extra length 8 s^2 / 3 D, H = (N - 1) w D / 8 s
    extra = max(N * pitch - D, 1e-15 * D)
    sag = math.sqrt(3.0 * D * extra / 8.0)
    b0 = max(8.0 * sag / (max(N - 1, 1) * D), 1e-12)

    def links_of(x):
        s = x[0] + sx * x[1] * j
        inv = 1.0 / np.sqrt(1.0 + s * s)
        return sx * inv, sx * s * inv

    def residual(x):
        cx, cz = links_of(x)
        return [(pitch * cx.sum() - d[0]) / pitch, (pitch * cz.sum() - d[1]) / pitch]

    x0 = [slope - sx * b0 * (N - 1) / 2.0, b0]
    sol = root(residual, x0, method="hybr", tol=1e-15)
    if max(abs(v) for v in residual(sol.x)) > 1e-12 or sol.x[1] <= 0.0:
        raise ValueError("the hanging span's shape could not be solved "
                         f"({N} links over {D:.6g} m)")
    cx, cz = links_of(sol.x)
    pins = A + pitch * np.cumsum(np.column_stack([cx, cz]), axis=0)[:-1]
    return pins, (float(sol.x[0]), float(sol.x[1]))


# -- the wrap ------------------------------------------------------------------------------------

@dataclass
class Wrap:
    """A wrapped chain: ``pins`` (n, 2) in order counter-clockwise round the hull, shoe ``i``
    from pin ``i`` to pin ``i + 1`` (the last to pin 0); ``tight`` the fewest shoes that go
    round; ``sag`` the hanging span's largest drop (m) below the straight line between its end
    pins (0 when it is straight); ``span`` the indices of its pins (both ends included);
    ``hull`` the pin circles' hull (its ``perimeter`` the tight path's length); ``slack_edge``
    that hull's edge the slack hangs from; ``pitch``."""
    pins: np.ndarray
    tight: int
    sag: float
    span: list
    hull: Hull
    slack_edge: int
    pitch: float


def _circles(circles):
    a = np.asarray(circles, dtype=float)
    if a.ndim != 2 or a.shape[1] != 3 or len(a) < 2:
        raise ValueError("give at least two circles as (x, z, radius)")
    if not np.all(np.isfinite(a)) or np.any(a[:, 2] <= 0.0):
        raise ValueError("every circle needs a finite centre and a radius > 0")
    return a


def default_slack_edge(h: Hull) -> int:
    """The longest edge on the hull's top side (its outward normal pointing up), else the
    longest edge."""
    best, best_len = None, -1.0
    for k, (A, B) in enumerate(h.edges):
        d = B - A
        up = -d[0] > 1e-12 * max(1.0, float(np.hypot(*d)))   # counter-clockwise: top runs -x
        L = float(np.hypot(*d))
        if up and L > best_len:
            best, best_len = k, L
    if best is None:
        best = max(range(len(h.edges)), key=h.edge_length)
    return best


def _tight_walk(h: Hull, pitch: float, edge: int):
    """The tight walk from the end of hull edge ``edge`` round the hull until it lands on that
    edge again: the pins (the first at the edge's end), the boundary element each is on, and
    the last one's distance along the edge."""
    b = _Boundary(h)
    e_slack = 2 * edge + 1
    P = h.edges[edge][1].copy()
    e, s = (e_slack + 1) % len(b), 0.0
    pins, elements = [P], [e]
    limit = int(math.ceil(h.perimeter / pitch)) + 4
    for _ in range(limit):
        P, e, s = b.next_pin(P, e, s, pitch)
        pins.append(P)
        elements.append(e)
        if e == e_slack:
            return pins, elements, s
    raise ValueError("the chain does not go round the wheels")


def _round(P, c, R: float, pitch: float, sign: float) -> np.ndarray:
    """The point of the circle (``c``, ``R``) at ``pitch`` from ``P``, counter-clockwise
    (``sign`` +1) or clockwise (-1) from ``P``'s direction: on the circle, the next pin of a
    chain wrapped round it."""
    D = P - c
    rho = float(np.hypot(*D))
    f1, f2 = pitch * pitch - (rho - R) ** 2, (rho + R) ** 2 - pitch * pitch
    kk = (rho * rho + R * R - pitch * pitch) / (2.0 * R)
    alpha = math.atan2(math.sqrt(max(f1 * f2, 0.0)) / (2.0 * R), kk)
    a = math.atan2(D[1], D[0]) + sign * alpha
    return c + R * np.array([math.cos(a), math.sin(a)])


def _enters(P, Q, circles) -> int | None:
    """The index of a circle the chord P-Q enters (deeper than round-off), or None."""
    d = Q - P
    L2 = float(d @ d)
    for i, (x, z, r) in enumerate(circles):
        c = np.array([x, z])
        t = min(1.0, max(0.0, float((c - P) @ d) / L2))
        if float(np.hypot(*(P + t * d - c))) < r * (1.0 - 1e-12) - 1e-12:
            return i
    return None


def tight_count(circles, pitch: float, slack_edge: int | None = None) -> int:
    """The fewest shoes of ``pitch`` that go round the circles (the tight wrap's count)."""
    return _plan(circles, pitch, slack_edge)[3]


def _plan(circles, pitch, slack_edge):
    a = _circles(circles)
    if not (math.isfinite(pitch) and pitch > 0.0):
        raise ValueError("the pitch must be > 0")
    h = hull(a[:, :2], [pin_radius(r, pitch) for r in a[:, 2]])
    edge = default_slack_edge(h) if slack_edge is None else int(slack_edge)
    if not 0 <= edge < len(h.edges):
        raise ValueError(f"the slack edge must be 0 to {len(h.edges) - 1}")
    walk, elements, tau = _tight_walk(h, pitch, edge)
    gap = h.edge_length(edge) - tau
    if gap <= TOLERANCE * pitch:          # the walk came back onto its first pin: one chord
        walk, elements = walk[:-1], elements[:-1]
        gap = float(np.hypot(*(walk[0] - walk[-1])))
    tight = len(walk) - 1 + max(0, int(math.ceil(gap / pitch - TOLERANCE)))
    return a, h, edge, tight, (walk, elements), gap


def wrap(circles, pitch: float, n: int, slack_edge: int | None = None) -> Wrap:
    """The ``n`` pins of a closed chain of chords ``pitch`` round ``circles`` ((x, z, r) rows,
    r grown by half the shoe's thickness), the slack hanging from hull edge ``slack_edge`` (an
    index into ``wrap(...).hull.edges``; default :func:`default_slack_edge`). A ValueError
    when ``n`` is fewer than the tight count (it says how many at the least) or the hanging span
    would pass through a wheel."""
    a, h, edge, tight, (walk, elements), gap = _plan(circles, pitch, slack_edge)
    n = int(n)
    if n < tight:
        raise ValueError(f"{n} shoes are too few to go round the wheels: the tight wrap takes "
                         f"{tight} at the least")
    links = n - (len(walk) - 1)
    if abs(links * pitch - gap) <= TOLERANCE * pitch:
        A = walk[-1]
        u = (walk[0] - A) / max(gap, 1e-300)
        between = [A + k * pitch * u for k in range(1, links)]
        pins = np.array(walk + between)
        return Wrap(pins, tight, 0.0, list(range(len(walk) - 1, n)) + [0], h, edge, pitch)
    # the hanging span from the walk's last pin to its first; while its first (last) link would
    # enter a wheel, the chain wraps further round the pin circle the span leaves (reaches):
    # a sagging span leaves its wheels further round than the tight edge does
    iA, iB = h.order[edge], h.order[(edge + 1) % len(h.order)]
    cA, RA = h.centres[iA], h.radii[iA]
    cB, RB = h.centres[iB], h.radii[iB]
    on_arc = [k for k, e in enumerate(elements) if e == 2 * edge]
    tail, head, moved = list(walk), [], False
    for _ in range(len(walk) + n):
        A, B = tail[-1], (head[0] if head else walk[0])
        span_links = n - (len(tail) - 1) - len(head)
        if span_links < 2:
            raise ValueError(f"{n} shoes: the slack cannot hang from hull edge {edge}")
        inner, _ = catenary(A, B, span_links, pitch)
        chain = [A] + list(inner) + [B]
        bad_start = _enters(chain[0], chain[1], a) is not None
        bad_end = _enters(chain[-2], chain[-1], a) is not None
        if not (bad_start or bad_end):
            break
        if bad_start:
            if not moved:            # the walk's pin on the edge gives way to the arc's next
                moved = True
                base = on_arc[-1] if on_arc else len(tail) - 2
                tail = tail[:base + 1]
            tail.append(_round(tail[-1], cA, RA, pitch, +1.0))
        if bad_end:
            head.insert(0, _round(head[0] if head else walk[0], cB, RB, pitch, -1.0))
    else:
        raise ValueError(f"{n} shoes: the slack cannot hang from hull edge {edge}")
    pins = np.array(head + tail + list(inner))
    d = B - A
    line = A[1] + (np.array(chain)[:, 0] - A[0]) * d[1] / d[0]
    sag = float(np.max(line - np.array(chain)[:, 1]))
    span = list(range(len(head) + len(tail) - 1, n)) + [0]
    for i in range(n):
        k = _enters(pins[i], pins[(i + 1) % n], a)
        if k is not None:
            raise ValueError(f"{n} shoes: the slack ({sag:.3g} m of sag) would hang through "
                             f"wheel {k} (shoe {i}): fewer shoes, or another slack edge")
    crossing = _crossing(pins)
    if crossing is not None:
        raise ValueError(f"{n} shoes: the slack ({sag:.3g} m of sag) would hang down onto the "
                         f"track (shoes {crossing[0]} and {crossing[1]} cross): fewer shoes")
    return Wrap(pins, tight, sag, span, h, edge, pitch)


def _crossing(pins):
    """Two chords of the closed chain that cross (not neighbours), or None."""
    n = len(pins)
    P, Q = pins, np.roll(pins, -1, axis=0)
    d = Q - P
    for i in range(n):
        for j in range(i + 2, n):
            if i == 0 and j == n - 1:
                continue
            r = P[j] - P[i]
            den = d[i, 0] * d[j, 1] - d[i, 1] * d[j, 0]
            if abs(den) < 1e-300:
                continue
            t = (r[0] * d[j, 1] - r[1] * d[j, 0]) / den
            u = (r[0] * d[i, 1] - r[1] * d[i, 0]) / den
            if 1e-9 < t < 1 - 1e-9 and 1e-9 < u < 1 - 1e-9:
                return i, j
    return None
