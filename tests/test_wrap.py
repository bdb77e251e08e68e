"""The wrap of a closed chain round circles (solver/model/wrap.py; issue 34 item 1): the hull
of the circles, the tight walk of equal chords round it, the slack hanging as a discrete
catenary. Every check here is computed independently of the module (distances, the pins'
equilibrium, scipy's convex hull, the stadium of examples/track.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial import ConvexHull

from MultibodyWB.examples import track
from MultibodyWB.solver.model import wrap as W

PITCH = 0.154
#: A tank-like side: sprocket, three road wheels, idler, two support rollers (x, z, r grown).
TANK = [(-1.5, 0.5, 0.3), (-1.0, 0.0, 0.23), (0.0, 0.0, 0.23), (1.0, 0.0, 0.23),
        (1.6, 0.45, 0.25), (-0.6, 0.75, 0.1), (0.6, 0.75, 0.1)]
#: Two pulleys of different radii (a belt drive) and a triangle of three sprockets (a chain).
BELT = [(0.0, 0.0, 0.3), (2.0, 0.0, 0.2)]
TRIANGLE = [(0.0, 0.0, 0.12), (0.9, 0.1, 0.08), (0.35, 0.7, 0.1)]
LAYOUTS = {"tank": (TANK, PITCH), "belt": (BELT, 0.05), "triangle": (TRIANGLE, 0.0254)}


def _chords(pins):
    return np.roll(pins, -1, axis=0) - pins


def _distance_to_segment(c, P, Q):
    d = Q - P
    t = np.clip(((c - P) @ d) / (d @ d), 0.0, 1.0)
    return float(np.hypot(*(P + t * d - c)))


def _cases():
    for name, (circles, p) in LAYOUTS.items():
        t = W.tight_count(circles, p)
        for extra in (0, 1, 3):
            yield pytest.param(circles, p, t + extra, id=f"{name}-tight+{extra}")


@pytest.mark.parametrize("circles, p, n", list(_cases()))
def test_every_chord_is_one_pitch_and_clear_of_every_wheel(circles, p, n):
    w = W.wrap(circles, p, n)
    assert w.pins.shape == (n, 2)
    np.testing.assert_allclose(np.hypot(*_chords(w.pins).T), p, rtol=0, atol=1e-12)
    for i in range(n):
        P, Q = w.pins[i], w.pins[(i + 1) % n]
        for x, z, r in circles:
            assert _distance_to_segment(np.array([x, z]), P, Q) >= r - 1e-12, (i, (x, z, r))


@pytest.mark.parametrize("circles, p, n", list(_cases()))
def test_a_chord_that_touches_a_wheel_touches_it_at_its_middle(circles, p, n):
    """Round the arcs each shoe is centred on its wheel: a chord touching a circle touches it
    at its middle, so its two pins are on the circle's pin radius sqrt(r^2 + p^2 / 4); most of
    the chain is on arcs or edges (at least the arcs' share of the shoes touch)."""
    w = W.wrap(circles, p, n)
    touching = 0
    for i in range(n):
        P, Q = w.pins[i], w.pins[(i + 1) % n]
        for x, z, r in circles:
            c = np.array([x, z])
            if abs(_distance_to_segment(c, P, Q) - r) < 1e-9:
                touching += 1
                mid = 0.5 * (P + Q)
                assert float(np.hypot(*(mid - c))) == pytest.approx(r, abs=1e-12)
                for pin in (P, Q):
                    assert float(np.hypot(*(pin - c))) == pytest.approx(
                        math.sqrt(r * r + p * p / 4), abs=1e-12)
    arcs = sum(r * s for r, (_, s) in zip(w.hull.radii[w.hull.order], w.hull.arcs))
    assert touching > 0
    assert touching >= arcs / p - 2 * len(w.hull.order)


@pytest.mark.parametrize("k, m", [(6, 4), (5, 10), (8, 3), (2, 1)])
def test_the_stadium_of_the_track_example_is_reproduced(k, m):
    """Two wheels ``m p`` apart grown to ``Rp cos(pi / 2k)``: ``2 k + 2 m`` shoes wrap them
    tight, exactly as examples/track.py draws them (rolled to start at its first pin)."""
    rho = track.pin_radius(k) * math.cos(math.pi / (2 * k))
    circles = [(0.0, 0.0, rho), (m * track.PITCH, 0.0, rho)]
    n = 2 * k + 2 * m
    assert W.tight_count(circles, track.PITCH) == n
    w = W.wrap(circles, track.PITCH, n)
    expected = track.pins(k, m)
    first = int(np.argmin(np.hypot(*(w.pins - expected[0]).T)))
    np.testing.assert_allclose(np.roll(w.pins, -first, axis=0), expected, rtol=0, atol=1e-12)
    assert w.sag == 0.0


def _span_tensions(chain):
    """Each internal pin of a hanging span (pins in order, its ends fixed) in equilibrium under
    a unit weight: its two links' tensions t_prev, t_next solved from its two equations."""
    u = _chords(np.asarray(chain))[:-1]
    u = u / np.hypot(*u.T)[:, None]
    out = []
    for j in range(1, len(chain) - 1):
        # t_next u_j - t_prev u_{j-1} + (0, -1) = 0
        M = np.column_stack([u[j], -u[j - 1]])
        t_next, t_prev = np.linalg.solve(M, [0.0, 1.0])
        out.append((t_prev, t_next))
    return out


@pytest.mark.parametrize("name", ["tank", "belt", "triangle"])
def test_the_slack_hangs_as_a_discrete_catenary_and_sags_more_with_more_shoes(name):
    """In the hanging span every link's tension, solved at each of its two pins from that pin's
    equilibrium (its two links and its weight summing to zero), is the same (1e-9) and
    positive; the sag grows with the count."""
    circles, p = LAYOUTS[name]
    t = W.tight_count(circles, p)
    sags = []
    for n in range(t, t + 4):
        w = W.wrap(circles, p, n)
        chain = w.pins[w.span]
        assert len(chain) >= 3
        tensions = _span_tensions(chain)
        for (_, after), (before, _) in zip(tensions, tensions[1:]):
            assert after == pytest.approx(before, rel=1e-9)
            assert after > 0
        # the tensions' horizontal part is one number along the span
        u = _chords(chain)[:-1]
        u = u / np.hypot(*u.T)[:, None]
        H = [tn * u[j + 1][0] for j, (_, tn) in enumerate(tensions)]
        np.testing.assert_allclose(H, H[0], rtol=1e-9)
        sags.append(w.sag)
    assert sags[0] > 0
    assert all(b > a for a, b in zip(sags, sags[1:])), sags


def test_a_straight_span_has_no_sag_and_the_catenary_solver_matches_its_equations():
    A, B = np.array([1.0, 0.3]), np.array([0.0, 0.1])
    D = float(np.hypot(*(B - A)))
    pins, (s0, b) = W.catenary(A, B, 12, 1.01 * D / 12)
    chain = np.vstack([A, pins, B])
    np.testing.assert_allclose(np.hypot(*_chords(chain)[:-1].T), 1.01 * D / 12, atol=1e-12)
    assert b > 0
    assert np.all(pins[:, 1] < A[1] + (pins[:, 0] - A[0]) * (B - A)[1] / (B - A)[0])  # below


@pytest.mark.parametrize("name", ["tank", "belt", "triangle"])
def test_too_few_shoes_are_refused_with_the_count(name):
    circles, p = LAYOUTS[name]
    t = W.tight_count(circles, p)
    W.wrap(circles, p, t)
    with pytest.raises(ValueError, match=f"{t - 1} shoes are too few.* takes {t} at the least"):
        W.wrap(circles, p, t - 1)
    # the tight count is what the path's length asks: n p is at least the hull's perimeter
    assert t * p >= W.wrap(circles, p, t).hull.perimeter * (1 - 1e-12) - p


def test_the_hull_touches_the_outer_circles_and_its_perimeter_is_scipys():
    """Equal circles: the hull's perimeter is the centres' convex polygon's plus 2 pi r
    (scipy's Qhull for the polygon); a circle inside is not on it; three in a row are all."""
    rng = np.random.default_rng(3)
    centres = rng.uniform(-1, 1, size=(9, 2))
    r = 0.05
    h = W.hull(centres, [r] * 9)
    poly = ConvexHull(centres)
    assert sorted(h.order) == sorted(poly.vertices.tolist())
    assert h.perimeter == pytest.approx(poly.area + 2 * math.pi * r, rel=1e-12)
    h = W.hull([(0, 0), (1, 0), (2, 0), (1, 0.1)], [0.3, 0.3, 0.3, 0.1])
    assert h.order == [0, 1, 2, 1]          # the middle one on the hull above and below
    assert h.perimeter == pytest.approx(4.0 + 2 * math.pi * 0.3, rel=1e-12)
    with pytest.raises(ValueError, match="two circles"):
        W.hull([(0, 0), (0.1, 0)], [1.0, 0.2])


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="radius > 0"):
        W.wrap([(0, 0, 0.2), (1, 0, -0.1)], 0.1, 40)
    with pytest.raises(ValueError, match="pitch"):
        W.wrap(BELT, 0.0, 40)
    with pytest.raises(ValueError, match="slack edge"):
        W.wrap(BELT, 0.05, 200, slack_edge=5)
