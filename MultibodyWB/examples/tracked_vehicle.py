"""A tracked vehicle on flat ground (issue 34's half tank): a hull on torsion-arm road wheels, a
driven sprocket and a tensioned idler, the track a closed chain of pinned shoes wrapped round
them all and resting on the ground.

Everything moves in the xz plane (x forward, z up, the wheels' axes along y):

- the hull (a 600 kg box, the issue's "free 600 kg chassis") on a planar hinge to the ground
  (x, z and pitch);
- the drive sprocket at the rear, high, turning at a constant speed relative to the hull (a
  driver; speed 0 holds it: parked);
- the idler at the front, high, spinning on a hub that slides along the hull's x on the
  tensioner (a spring-damper with the M113's k and c and a preload pushing it forward);
- ``road_wheels`` road wheels, each on a trailing torsion arm: a revolute hinge on the hull
  with a rotational spring-damper (the hinge's stiffness and damping) whose
  ``spring_reference`` preloads it with the wheel's share of the weight, so that the vehicle
  starts near its rest;
- the track: ``shoes`` boxes of the M113's pitch and mass (see :mod:`.track`) pinned into a
  closed chain, shoe 0 on a planar hinge to the ground (the track's plane), the loop cut at
  the last pin. Each shoe touches every wheel through a cylinder - box contact and the ground
  through a box - plane contact, all with friction.

The wrap (:func:`wrap`): the pins of a tight chain of equal chords round the convex hull of the
wheels. A shoe keeps clear of a wheel of radius ``r`` when its mid-plane (the chord between its
pins) keeps ``rho = r + thickness / 2`` from the wheel's centre (the shoe's points are within
``thickness / 2`` of its chord); so the chords walk round the hull ``K`` of the circles of radii
``rho``, each turned as far towards ``K`` as it goes without entering it (the directions a
chord from a pin may not take are closed-form arcs: those towards a circle, and those crossing
one of ``K``'s straight edges, the circles' common tangents). The chain leaves the lower edge
(the road wheels' common tangent, on the ground) at the front road wheel, wraps it, lands on
the edge towards the idler, and so on round; back on the lower edge its pins fall a whole
number of pitches from the first only for one idler position: the idler is drawn there
(solved along the tensioner by :func:`scipy.optimize.brentq`). Every shoe then clears every
wheel; those whose chord touches a circle (on the arcs) touch their wheel, those on the lower
edge lie flat on the ground.

The track's mean speed relative to the hull at sprocket speed ``w`` is ``p w / phi``, ``phi =
2 asin(p / (2 Rp))`` the angle one chord takes on the sprocket's pin circle (``Rp`` from
:func:`.track.pin_radius`): one pitch per chord angle turned. The sprocket's radius is
:func:`.track.wheel_radius` of ``sprocket_k`` chords per half turn, so that its wrapped shoes
sit on that pin circle (``phi = pi / sprocket_k``; the M113's sprocket has 10 teeth: 5).
On the ground the lower span stands still: the hull moves at the speed the track goes round it,
less the ground friction's creep (tests/test_tracked_vehicle.py: 0.7 %). The sprocket has no
teeth yet: it drives the track by friction and slips while the vehicle speeds up (spun up to
1.6 rad/s in 0.1 s, the track goes round at 47 % of the pitch speed at 0.4 s: 0.18 of 0.38 m/s).

Step: rk4 at 2.5e-5 s closes the energy balance to 1e-10 (at rest and driving, 0.4 s); at
5e-5 s the friction's slope (mu N / v_s against a 6 kg shoe) leaves it 1e-5 to 2e-4 open.
The example's own step (1e-5 s, as the track's) is on the safe side.
"""

from __future__ import annotations

import math

import numpy as np

from ..solver.maths.rotations import bryant_to_matrix, matrix_to_bryant
from ..solver.model import Driver, MultibodySystem, massprops
from ..solver.model.wrap import tangent
from . import track
from .track import (PITCH, SHOE_THICKNESS, STICTION, TENSIONER_C, TENSIONER_K,  # noqa: F401
                    WHEEL_MASS, WHEEL_WIDTH, Y_AXIS)

#: The hull: mass (kg), box size (m; its length follows the road wheels).
HULL_MASS, HULL_WIDTH, HULL_HEIGHT = 600.0, 1.0, 0.5
#: Road wheels: radius (m); trailing arms: length (m), angle above the horizontal (rad, the
#: pivot ahead of and above the wheel), mass (kg); torsion stiffness (N m/rad) and damping
#: (N m s/rad): a 3 Hz bounce of the hull, damped near critically.
ROAD_WHEEL_RADIUS, ARM_LENGTH, ARM_ANGLE, ARM_MASS = 0.2, 0.25, math.radians(30.0), 10.0
TORSION_K, TORSION_C = 6e4, 3e3
#: The track's pins: a rotational damper each (N m s/rad; a rubber bushing's losses), which
#: also damps the spans' swinging.
PIN_DAMPING = 50.0
#: The tensioner's preload (N; the M113's) and a shoe's mass (kg; the M113's 18.02 kg would make
#: the track of this light vehicle outweigh its hull). Measured: as the vehicle settles the
#: idler moves out by 19.6 of the spring's 20 mm of preload travel, leaving the track about
#: 0.4 kN of tension; without gravity too (18.6 mm in 0.1 s), so not sag. Likely (not
#: verified) the chain's polygon turning round the wheels: as drawn, chords touch the idler
#: and the sprocket at their middles; with a pin at the front of the idler (and at the back of
#: the sprocket) the loop reaches Rp - rho further, about 1.2 cm at each.
TENSIONER_PRELOAD, VEHICLE_SHOE_MASS = 2e4, 6.0
#: The support roller holding the top span up at its middle: radius (m), mass (kg).
ROLLER_RADIUS, ROLLER_MASS = 0.1, 10.0
#: The sprocket's chords per half turn (10 teeth) and its axle above the road wheels' (m); the
#: idler's radius (m) and its height above the road wheels' axles (m).
SPROCKET_K, SPROCKET_HEIGHT = 5, 0.25
IDLER_RADIUS, IDLER_HEIGHT = 0.22, 0.2
#: Gaps (m) between the sprocket's and the first road wheel's axles (along x) and between the
#: last road wheel's and the idler's (nominal: the idler is drawn where the chain closes).
REAR_GAP, FRONT_GAP = 0.55, 0.5


# -- the wrap -------------------------------------------------------------------------------------

def _hull_edges(centres, radii):
    """The straight edges of the convex hull of circles given counter-clockwise round it (each
    circle on the hull, consecutive ones joined by their outer common tangent,
    :func:`..solver.model.wrap.tangent`): a list of (start, end) points, the edge from circle i
    to circle i + 1."""
    n = len(centres)
    return [tangent(centres[i], radii[i], centres[(i + 1) % n], radii[(i + 1) % n])
            for i in range(n)]


def _blocked(P, pitch, centres, radii, edges):
    """The arcs of directions (lo, hi) in which a chord of length ``pitch`` from ``P`` would
    enter a circle's disk or cross one of the hull's edges."""
    arcs = []
    for c, r in zip(centres, radii):
        v = c - P
        d = float(np.hypot(*v))
        if d - r >= pitch:
            continue
        a = math.atan2(v[1], v[0])
        if d * d - r * r <= pitch * pitch:       # the chord reaches the tangent point
            w = math.asin(min(1.0, r / d))
        else:                                   # only its end can reach the circle
            w = math.acos(min(1.0, (d * d + pitch * pitch - r * r) / (2.0 * d * pitch)))
        arcs.append((a - w, a + w))
    for A, B in edges:
        # the part of the edge within reach, seen from P
        d = B - A
        L = float(np.hypot(*d))
        u = d / L
        t0 = float((P - A) @ u)
        h2 = float((P - A) @ (P - A)) - t0 * t0
        if h2 >= pitch * pitch:
            continue
        half = math.sqrt(pitch * pitch - h2)
        lo, hi = max(0.0, t0 - half), min(L, t0 + half)
        if lo >= hi:
            continue
        a1, a2 = A + lo * u - P, A + hi * u - P
        # P outside the hull is on the edge's right (outside): seen from P, the edge runs
        # clockwise from its start to its end, through the angle between a1 and a2
        width = math.atan2(abs(float(np.cross(a1, a2))), float(a1 @ a2))
        ang2 = math.atan2(a2[1], a2[0])
        arcs.append((ang2, ang2 + width))
    return arcs


def _next_pin(P, pitch, centres, radii, edges, inside):
    """The next pin of a chain walking counter-clockwise round the hull from pin ``P``: the
    chord turned from pointing away from ``inside`` (a point inside the hull) towards the hull
    until it touches it."""
    out = P - inside
    a0 = math.atan2(out[1], out[0])
    first = math.inf
    for lo, hi in _blocked(P, pitch, centres, radii, edges):
        lo_rel = (lo - a0) % (2 * math.pi)
        hi_rel = lo_rel + (hi - lo)
        if hi_rel >= 2 * math.pi and lo_rel > 0:      # the arc runs through a0: blocked from 0
            lo_rel = 0.0
        first = min(first, lo_rel)
    if not math.isfinite(first):
        raise ValueError("the chain is more than a pitch off the wheels")
    a = a0 + first
    return P + pitch * np.array([math.cos(a), math.sin(a)])


def _walk(centres, radii, start, edge: int, pitch: float, limit: int):
    """Pins of a tight chain walking counter-clockwise round the hull of the circles (given
    counter-clockwise round it) from the pin ``start`` on the hull's edge 0, up to the first
    that lands on edge ``edge``'s line: ``(pins, tau)``, ``tau`` that pin's distance along the
    edge from its start."""
    centres = [np.asarray(c, dtype=float) for c in centres]
    edges = _hull_edges(centres, radii)
    inside = np.mean(centres, axis=0)
    A, B = edges[edge]
    u = (B - A) / np.hypot(*(B - A))
    P = np.asarray(start, dtype=float)
    pins = [P]
    for _ in range(limit):
        P = _next_pin(P, pitch, centres, radii, edges, inside)
        pins.append(P)
        if abs(float(np.cross(u, P - A))) < 1e-9 * pitch:
            return pins, float((P - A) @ u)
    raise ValueError("the chain does not reach round the wheels")


def wrap(centres, radii, n: int, start, pitch: float = PITCH):
    """The ``n`` pins (x, z) of a closed chain of chords of length ``pitch`` round the convex
    hull of four circles (``centres``, ``radii``, counter-clockwise round it: the rear and
    front road wheels, the idler, the sprocket; the road wheels' circles at one height), from
    the pin ``start`` on the lower edge (the road wheels' common tangent: the ground): a tight
    chain walks from it forward (counter-clockwise) and backward round the wheels until each
    lands on the top edge (walking onto the lower edge from an arc would put the pin before it
    below the ground: the walks only leave it), the pins between spaced along that edge.
    Returns ``(pins, offset)``, ``offset`` the length (m) by which the gap between the two
    walks' pins on the top edge exceeds whole pitches: 0 when the chain closes."""
    centres = [np.asarray(c, dtype=float) for c in centres]
    fwd, tau_f = _walk(centres, radii, start, 2, pitch, n)
    mirror = np.array([-1.0, 1.0])
    order = [1, 0, 3, 2]                     # mirrored, counter-clockwise from the front wheel
    back, tau_b = _walk([centres[i] * mirror for i in order], [radii[i] for i in order],
                        np.asarray(start) * mirror, 2, pitch, n)
    back = [q * mirror for q in back]
    edges = _hull_edges(centres, radii)
    A, B = edges[2]
    u = (B - A) / np.hypot(*(B - A))
    tau_b = float((back[-1] - A) @ u)
    between = n - len(fwd) - (len(back) - 1)
    if between < 0:
        raise ValueError(f"{n} shoes do not reach round the wheels")
    offset = tau_b - tau_f - (between + 1) * pitch
    pins = fwd + [fwd[-1] + k * pitch * u for k in range(1, between + 1)] + back[:0:-1]
    return np.array(pins), offset


# -- the vehicle ----------------------------------------------------------------------------------

def layout(shoes: int, road_wheels: int):
    """The wheels' centres (x, z; the road wheels' axles at z = 0 and the hull's middle at
    x = 0) and radii, the road wheels spaced so that ``shoes`` chords go round with the idler
    near its nominal gap: ``(sprocket, road wheels (rear to front), idler x nominal, radii)``."""
    r_s = track.wheel_radius(SPROCKET_K)
    half_t = 0.5 * SHOE_THICKNESS
    # the hull's perimeter (rho circles) for a road-wheel spacing s: straight lines and a turn
    def perimeter(s):
        span = (road_wheels - 1) * s
        xs, xi = -0.5 * span - REAR_GAP, 0.5 * span + FRONT_GAP
        pts = [(xs, SPROCKET_HEIGHT, r_s + half_t), (-0.5 * span, 0.0, ROAD_WHEEL_RADIUS + half_t),
               (0.5 * span, 0.0, ROAD_WHEEL_RADIUS + half_t), (xi, IDLER_HEIGHT,
                                                               IDLER_RADIUS + half_t)]
        order = [1, 2, 3, 0]                                # counter-clockwise
        total = 0.0
        for a, b in zip(order, order[1:] + order[:1]):
            (x1, z1, r1), (x2, z2, r2) = pts[a], pts[b]
            L = math.hypot(x2 - x1, z2 - z1)
            total += math.sqrt(L * L - (r1 - r2) ** 2)
        # the arcs make a whole turn; their lengths by each circle's turning angle
        dirs = []
        for a, b in zip(order, order[1:] + order[:1]):
            dirs.append(math.atan2(pts[b][1] - pts[a][1], pts[b][0] - pts[a][0]))
        for k, a in enumerate(order):
            turn = (dirs[k] - dirs[k - 1]) % (2 * math.pi)
            total += pts[a][2] * turn
        return total

    target = shoes * PITCH
    lo, hi = 2 * ROAD_WHEEL_RADIUS + 0.04, 50.0
    if perimeter(lo) > target:
        raise ValueError(f"{shoes} shoes are too few to go round {road_wheels} road wheels "
                         f"(about {math.ceil(perimeter(lo) / PITCH)} at the least)")
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if perimeter(mid) < target else (lo, mid)
    s = 0.5 * (lo + hi)
    span = (road_wheels - 1) * s
    road = [(-0.5 * span + i * s, 0.0) for i in range(road_wheels)]
    return (-0.5 * span - REAR_GAP, SPROCKET_HEIGHT), road, 0.5 * span + FRONT_GAP, r_s


def track_pins(shoes: int, road_wheels: int):
    """The drawn pins (x, z relative to the road wheels' axles) and the wheels' centres and
    radii: ``(pins, sprocket centre, road wheel centres, idler centre, sprocket radius, top
    span's ends)``, the idler where the chain of ``shoes`` closes."""
    from scipy.optimize import brentq
    sprocket, road, xi0, r_s = layout(shoes, road_wheels)
    half_t = 0.5 * SHOE_THICKNESS
    rho_r = ROAD_WHEEL_RADIUS + half_t
    # the first pin half a pitch ahead of the rear road wheel's lowest point, on the lower edge:
    # shoe 0 is centred under that wheel (a wheel drawn over a pin would rest on the ends of
    # two shoes, where the cylinder - box contact pushes it out sideways through their end
    # faces: it sinks between them)
    start = np.array([road[0][0] + 0.5 * PITCH, -rho_r])

    def circles(xi):
        # counter-clockwise from the rear road wheel: the lower edge first
        centres = [road[0], road[-1], (xi, IDLER_HEIGHT), sprocket]
        radii = [rho_r, rho_r, IDLER_RADIUS + half_t, r_s + half_t]
        return centres, radii

    def offset(xi):
        return wrap(*circles(xi), shoes, start)[1]

    a, b = xi0 - 0.5 * PITCH, xi0 + 0.5 * PITCH
    fa, fb = offset(a), offset(b)
    while fa * fb > 0:                     # widen until the closure changes sign
        a, b = a - 0.5 * PITCH, b + 0.5 * PITCH
        fa, fb = offset(a), offset(b)
    xi = brentq(offset, a, b, xtol=1e-15, rtol=1e-15)
    pins = wrap(*circles(xi), shoes, start)[0]
    top = _hull_edges([np.asarray(c, dtype=float) for c in circles(xi)[0]], circles(xi)[1])[2]
    return pins, np.array(sprocket), np.array(road), np.array([xi, IDLER_HEIGHT]), r_s, top


def _spin(speed: float, spin_up: float) -> str:
    """The sprocket's angle (rad) as an expression of t: ``speed`` reached as ``1 - exp(-t /
    spin_up)``."""
    if speed == 0.0 or spin_up <= 0.0:
        return f"{speed!r}*t"
    return f"{speed!r}*(t - {spin_up!r}*(1 - exp(-t/{spin_up!r})))"


def _wheel(model, name, centre, radius, label, mass=WHEEL_MASS):
    """A wheel body (a cylinder, axis along y) at ``centre`` (x, y, z) and its centre marker."""
    Ja, Jt = 0.5 * mass * radius ** 2, mass * (3 * radius ** 2 + WHEEL_WIDTH ** 2) / 12
    b = model.add_body(name, mass, [Jt, Jt, Ja, 0, 0, 0], position=tuple(centre),
                       orientation=Y_AXIS, label=label)
    return b, b.add_marker((0, 0, 0), label=f"{label} axle")


def build(shoes: int = 36, road_wheels: int = 3, speed: float = 0.0, spin_up: float = 0.05,
          end_time: float = 0.5,
          preload: float = TENSIONER_PRELOAD, torsion_k: float = TORSION_K,
          torsion_c: float = TORSION_C, pin_damping: float = PIN_DAMPING,
          gravity=(0.0, 0.0, -9.81)) -> MultibodySystem:
    """The vehicle (module docstring) with a track of ``shoes`` shoes round ``road_wheels``
    road wheels, its sprocket turning at ``speed`` rad/s relative to the hull (positive: the
    top span moves forward, the vehicle drives forward, +x), reached as ``1 - exp(-t /
    spin_up)`` (``spin_up`` s; 0: from the start), the idler pushed forward with ``preload`` N,
    the arms' torsion springs ``torsion_k`` N m/rad and dampers ``torsion_c`` N m s/rad, the
    track's pins damped by ``pin_damping`` N m s/rad."""
    if road_wheels < 2:
        raise ValueError("a tracked vehicle needs at least two road wheels")
    shoes = int(shoes)
    pins, sprocket_c, road_c, idler_c, r_s, (a, b) = track_pins(shoes, road_wheels)
    # ground at z = 0: the road wheels' axles at their radius plus a shoe's thickness
    z0 = ROAD_WHEEL_RADIUS + SHOE_THICKNESS
    lift = np.array([0.0, z0])
    pins, sprocket_c, road_c, idler_c = pins + lift, sprocket_c + lift, road_c + lift, \
        idler_c + lift
    g_z = float(-np.asarray(gravity, dtype=float)[2])
    model = MultibodySystem(f"TrackedVehicle{shoes}", gravity=tuple(gravity),
                            description=f"a tracked vehicle: a {HULL_MASS:g} kg hull on "
                                        f"{road_wheels} road wheels, a track of {shoes} shoes")
    g = model.set_ground(label="flat ground")
    xyz = lambda p: (float(p[0]), 0.0, float(p[1]))          # noqa: E731

    # the hull on its planar hinge (x, z, pitch), its centre above the road wheels
    hull_c = np.array([0.5 * (sprocket_c[0] + idler_c[0]), z0 + 0.35])
    length = float(idler_c[0] - sprocket_c[0])
    mp = massprops.box((length, HULL_WIDTH, HULL_HEIGHT), 1.0,
                       corner=(-length / 2, -HULL_WIDTH / 2, -HULL_HEIGHT / 2))
    hull = model.add_body("Hull", HULL_MASS, np.asarray(mp.ji) * (HULL_MASS / mp.mass),
                          mass_center=(0, 0, 0), position=xyz(hull_c), label="hull")
    model.add_hinge("HullPlane", "planar",
                    hull.add_marker((0, 0, 0), Y_AXIS, label="hull, in the vehicle's plane"),
                    g.add_marker(xyz(hull_c), Y_AXIS, label="the vehicle's plane"),
                    label="the hull's plane (x, z, pitch)")
    on_hull = lambda p, orientation=Y_AXIS, label="": hull.add_marker(      # noqa: E731
        tuple(np.asarray(xyz(p)) - np.asarray(xyz(hull_c))), orientation, label=label)

    # the sprocket, driven relative to the hull
    sprocket, s_axle = _wheel(model, "Sprocket", xyz(sprocket_c), r_s, "drive sprocket")
    model.add_hinge("SprocketAxle", "revolute", s_axle,
                    on_hull(sprocket_c, label="sprocket bearing"),
                    drivers=[Driver("rz", _spin(float(speed), float(spin_up)))],
                    label="sprocket drive")
    # the idler on its tensioner: a hub sliding along the hull's x, pushed forward
    hub = model.add_body("IdlerHub", 5.0, [0.05, 0.05, 0.05, 0, 0, 0], position=xyz(idler_c),
                         label="idler hub")
    along_x = (0.0, math.pi / 2, 0.0)
    model.add_hinge("Tensioner", "prismatic", hub.add_marker((0, 0, 0), along_x,
                                                             label="tensioner"),
                    on_hull(idler_c, along_x, "tensioner guide"),
                    stiffness=[TENSIONER_K], damping=[TENSIONER_C],
                    spring_reference=[preload / TENSIONER_K], label="idler tensioner")
    idler, i_axle = _wheel(model, "Idler", xyz(idler_c), IDLER_RADIUS, "idler")
    model.add_hinge("IdlerAxle", "revolute", i_axle,
                    hub.add_marker((0, 0, 0), Y_AXIS, label="idler bearing"), label="idler")

    # the support roller under the top span's middle, touching it
    u = (b - a) / np.hypot(*(b - a))                  # the top span (pins' line), forward
    inward = np.array([-u[1], u[0]])                  # below it
    roller_c = 0.5 * (a + b) + lift + (0.5 * SHOE_THICKNESS + ROLLER_RADIUS) * inward
    roller, r_axle = _wheel(model, "Roller", xyz(roller_c), ROLLER_RADIUS, "support roller",
                            mass=ROLLER_MASS)
    model.add_hinge("RollerAxle", "revolute", r_axle, on_hull(roller_c, label="roller bearing"),
                    label="support roller")

    # road wheels on trailing torsion arms, preloaded with their share of the weight
    shoe_total = shoes * VEHICLE_SHOE_MASS
    carried = (HULL_MASS + 2 * WHEEL_MASS + 5.0 + ROLLER_MASS
               + road_wheels * (WHEEL_MASS + ARM_MASS) + 0.5 * shoe_total) * g_z
    wheels = [(sprocket, s_axle, r_s), (idler, i_axle, IDLER_RADIUS),
              (roller, r_axle, ROLLER_RADIUS)]
    for i, c in enumerate(road_c):
        pivot = c + ARM_LENGTH * np.array([math.cos(ARM_ANGLE), math.sin(ARM_ANGLE)])
        mid = 0.5 * (c + pivot)
        beta = -math.atan2(pivot[1] - c[1], pivot[0] - c[0])
        R = bryant_to_matrix((0.0, beta, 0.0))
        arm = model.add_body(f"Arm{i}", ARM_MASS,
                             [ARM_MASS * 0.05 ** 2 / 2, ARM_MASS * ARM_LENGTH ** 2 / 12,
                              ARM_MASS * ARM_LENGTH ** 2 / 12, 0, 0, 0],
                             position=xyz(mid), orientation=matrix_to_bryant(R),
                             label=f"torsion arm {i}")
        to_arm = lambda p: tuple(R.T @ (np.asarray(xyz(p)) - np.asarray(xyz(mid))))  # noqa
        Ra = R.T @ bryant_to_matrix(Y_AXIS)
        # the spring's torque about y at the drawn pose holds the wheel's share: the ground
        # pushes the wheel up with F, a torque F L cos(angle) about +y on the arm
        share = carried / road_wheels - (WHEEL_MASS + ARM_MASS) * g_z
        torque = share * ARM_LENGTH * math.cos(ARM_ANGLE)
        model.add_hinge(f"Torsion{i}", "revolute",
                        arm.add_marker(to_arm(pivot), matrix_to_bryant(Ra),
                                       label=f"arm {i} pivot"),
                        on_hull(pivot, label=f"torsion bar {i}"),
                        stiffness=[float(torsion_k)], damping=[float(torsion_c)],
                        spring_reference=[-torque / float(torsion_k)],
                        label=f"torsion arm {i}")
        wheel, axle = _wheel(model, f"RoadWheel{i}", xyz(c), ROAD_WHEEL_RADIUS,
                             f"road wheel {i}")
        model.add_hinge(f"WheelAxle{i}", "revolute", axle,
                        arm.add_marker(to_arm(c), matrix_to_bryant(Ra), label=f"arm {i} axle"),
                        label=f"road wheel {i} bearing")
        wheels.append((wheel, axle, ROAD_WHEEL_RADIUS))

    # the track, against every wheel and the ground
    floor = g.add_marker((0, 0, 0), label="ground plane (normal up)")
    track.add_shoes(model, g, pins, wheels, floor=floor, pin_damping=pin_damping,
                    shoe_mass=VEHICLE_SHOE_MASS)
    model.simulation.end_time = end_time
    model.simulation.step = 1e-5
    model.simulation.output_step = 1e-3
    return model
