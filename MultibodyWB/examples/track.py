"""A track of pinned shoes wrapped around a drive sprocket and a tensioned idler (issue 34's
first step toward the seed's tank: the track as a closed chain of rigid shoes, its wheels as
cylinders against the shoes' boxes).

Geometry (all in the xz plane, the wheels' axes along y): the pins lie on a stadium, ``k``
shoes round each wheel and ``m`` on each straight span, ``n = 2 k + 2 m`` shoes of pitch ``p``.
Round a wheel the pins sit on a circle of radius ``Rp = p / (2 sin(pi / 2k))``, so that ``k``
chords of length ``p`` cover half a turn exactly; the wheels are ``m p`` apart, and the
chain closes as drawn. Each shoe is a steel-like box (``p`` x width x thickness; the M113's
18.02 kg spread over it) whose mid-plane holds its two pins; its inner face is then
``Rp cos(pi / 2k) - thickness / 2`` from a wheel's centre on the arcs: the wheel's radius, so
that the drawing touches without overlap.

Joints: shoe 0 on a planar hinge (the track's plane), every next shoe on a revolute pin about
y; the pin from the last shoe to shoe 0 closes the loop (the topology cuts it). The sprocket
(at x = 0) turns at a constant speed (a driver from t = 0); the idler (at x = ``2 m p``) spins
freely on a hub that slides along x on a spring pushing it outward with the tensioner's
preload. Each shoe touches each wheel through a cylinder - box contact with friction (the
wheels drive the track by friction: no teeth yet).

The mean speed of the track at sprocket speed ``w`` is ``k p w / pi`` (``2 k`` pitches a turn),
the polygon's chordal action making the spans' speed vary between ``Rp cos(pi/2k) w`` and
``Rp w``.
"""

from __future__ import annotations

import math

import numpy as np

from ..solver.maths.rotations import bryant_to_matrix, matrix_to_bryant
from ..solver.model import Driver, MultibodySystem, massprops

#: Chrono's M113 shoe: pitch (m), mass (kg); the shoe's width and thickness (m) are this
#: example's.
PITCH, SHOE_MASS, SHOE_WIDTH, SHOE_THICKNESS = 0.154, 18.02, 0.38, 0.06
#: Wheels: width (m), mass (kg); the M113's idler tensioner k (N/m), c (N s/m), preload (N).
WHEEL_WIDTH, WHEEL_MASS = 0.3, 35.56
TENSIONER_K, TENSIONER_C, TENSIONER_PRELOAD = 1e6, 1.4e4, 2e4
#: Shoe - wheel contact: stiffness (N/m^1.5), restitution, friction and its stiction velocity
#: (m/s). The friction law's slope mu N / v_s sets the step: at the default 1e-3 m/s a 1e-5 s
#: rk4 step leaves the energy balance 3 % open (a 20-shoe track, 0.1 s), at 0.02 m/s it
#: closes to 4e-9 (issue 35's implicit integrator is for the stiffer law).
CONTACT_K, RESTITUTION, MU_S, MU_D, STICTION = 1e9, 0.3, 0.8, 0.7, 0.02
#: The planar and revolute markers' z along global y.
Y_AXIS = (-math.pi / 2, 0.0, 0.0)


def pin_radius(k: int, pitch: float = PITCH) -> float:
    """Radius (m) of the pins' circle round a wheel with ``k`` shoes on its half turn."""
    return pitch / (2.0 * math.sin(math.pi / (2 * k)))


def wheel_radius(k: int, pitch: float = PITCH, thickness: float = SHOE_THICKNESS) -> float:
    """The wheels' radius (m): the shoes' inner faces on the arcs."""
    return pin_radius(k, pitch) * math.cos(math.pi / (2 * k)) - 0.5 * thickness


def pins(k: int, m: int, pitch: float = PITCH) -> np.ndarray:
    """The ``2 k + 2 m`` pins (x, z) of the stadium, in the order the shoes follow: the lower
    span from the sprocket (x = 0) to the idler, round the idler, the upper span back, round
    the sprocket."""
    rp, c = pin_radius(k, pitch), m * pitch
    out = [(j * pitch, -rp) for j in range(m)]
    out += [(c + rp * math.sin(math.pi * j / k), -rp * math.cos(math.pi * j / k))
            for j in range(k)]
    out += [(c - j * pitch, rp) for j in range(m)]
    out += [(-rp * math.sin(math.pi * j / k), rp * math.cos(math.pi * j / k)) for j in range(k)]
    return np.array(out)


def _wheel(model, name, x, k, label):
    """A wheel body (a cylinder, axis along y) at (x, 0, 0) with its centre marker."""
    r = wheel_radius(k)
    mass = WHEEL_MASS
    Ja, Jt = 0.5 * mass * r * r, mass * (3 * r * r + WHEEL_WIDTH ** 2) / 12
    b = model.add_body(name, mass, [Jt, Jt, Ja, 0, 0, 0], position=(x, 0.0, 0.0),
                       orientation=Y_AXIS, label=label)
    return b, b.add_marker((0, 0, 0), label=f"{label} axle")


def add_shoes(model, ground, pins_xz, wheels, floor=None, ground_friction=(MU_S, MU_D),
              pin_damping: float = 0.0, shoe_mass: float = SHOE_MASS):
    """The closed chain of shoes through the pins ``pins_xz`` (x, z; shoe ``i`` from pin ``i``
    to pin ``i + 1``): shoe 0 on a planar hinge to ``ground`` (the track's plane), shoe ``i``
    pinned to shoe ``i - 1``, the last pin closing the loop; each shoe touches each of
    ``wheels`` (body, axle marker, radius) through a cylinder - box contact and, given a
    ``floor`` marker (a ground plane, normal up), the floor through a box - plane contact with
    ``ground_friction`` (static, dynamic). The pins (not the planar hinge) have a rotational
    damper of ``pin_damping`` N m s/rad (a rubber-bushed pin's losses). Each shoe weighs
    ``shoe_mass`` kg. Returns the shoes."""
    pin = {"damping": [float(pin_damping)]} if pin_damping else {}
    p = np.asarray(pins_xz, dtype=float)
    n = len(p)
    mp = massprops.box((PITCH, SHOE_WIDTH, SHOE_THICKNESS), 1.0,
                       corner=(-PITCH / 2, -SHOE_WIDTH / 2, -SHOE_THICKNESS / 2))
    scale = shoe_mass / mp.mass
    shoes, ends = [], []
    for i in range(n):
        a, b = p[i], p[(i + 1) % n]
        d = b - a
        beta = -math.atan2(d[1], d[0])      # about y: the shoe's x along the chord
        R = bryant_to_matrix((0.0, beta, 0.0))
        centre = 0.5 * (a + b)
        shoe = model.add_body(f"Shoe{i}", shoe_mass, np.asarray(mp.ji) * scale,
                              mass_center=(0, 0, 0), position=(centre[0], 0.0, centre[1]),
                              orientation=matrix_to_bryant(R), label=f"track shoe {i}")
        back = shoe.add_marker((-PITCH / 2, 0, 0), Y_AXIS, label=f"shoe {i} rear pin")
        front = shoe.add_marker((PITCH / 2, 0, 0), Y_AXIS, label=f"shoe {i} front pin")
        shoes.append(shoe)
        ends.append((back, front))
    model.add_hinge("Pin0", "planar",
                    ends[0][0], ground.add_marker((p[0][0], 0.0, p[0][1]), Y_AXIS,
                                                  label="track plane"),
                    label="the track's plane")
    for i in range(1, n):
        model.add_hinge(f"Pin{i}", "revolute", ends[i][0], ends[i - 1][1], label=f"pin {i}",
                        **pin)
    closing = shoes[0].add_marker((-PITCH / 2, 0, 0), Y_AXIS, label="shoe 0 rear pin, closing")
    model.add_hinge(f"Pin{n}", "revolute", closing, ends[n - 1][1], label="closing pin", **pin)
    # contacts: every shoe against every wheel (and the floor)
    box = ("box", {"size": (PITCH, SHOE_WIDTH, SHOE_THICKNESS)})
    for i, shoe in enumerate(shoes):
        centre = shoe.add_marker((0, 0, 0), label=f"shoe {i} centre")
        for w, axle, r in wheels:
            model.add_contact(f"{w.name}Shoe{i}", axle, centre,
                              ("cylinder", {"radius": r, "length": WHEEL_WIDTH}), box,
                              stiffness=CONTACT_K, restitution=RESTITUTION,
                              static_friction=MU_S, dynamic_friction=MU_D,
                              stiction_velocity=STICTION)
        if floor is not None:
            model.add_contact(f"GroundShoe{i}", centre, floor, box, ("plane",),
                              stiffness=CONTACT_K, restitution=RESTITUTION,
                              static_friction=ground_friction[0],
                              dynamic_friction=ground_friction[1], stiction_velocity=STICTION)
    return shoes


def build(k: int = 6, m: int = 4, speed: float = 2.0, end_time: float = 0.4,
          preload: float = TENSIONER_PRELOAD, idler_brake: float = 0.0,
          gravity=(0.0, 0.0, -9.81)) -> MultibodySystem:
    """The track of ``2 k + 2 m`` shoes (module docstring), its sprocket turning at ``speed``
    rad/s from the start, the idler pushed out with ``preload`` N and braked by a rotational
    damper of ``idler_brake`` N m s/rad."""
    if k < 2 or m < 1:
        raise ValueError("a track needs k >= 2 shoes round each wheel and m >= 1 on each span")
    n = 2 * k + 2 * m
    model = MultibodySystem(f"Track{n}", gravity=tuple(gravity),
                            description=f"a track of {n} shoes round a sprocket and a tensioned "
                                        "idler")
    g = model.set_ground(label="test rig")
    r_w = wheel_radius(k)
    # the sprocket, driven at a constant speed
    sprocket, s_axle = _wheel(model, "Sprocket", 0.0, k, "drive sprocket")
    model.add_hinge("SprocketAxle", "revolute", s_axle,
                    g.add_marker((0, 0, 0), Y_AXIS, label="sprocket bearing"),
                    drivers=[Driver("rz", f"{float(speed)!r}*t")], label="sprocket drive")
    # the idler on its tensioner: a hub sliding along x, the wheel spinning on it
    c = m * PITCH
    hub = model.add_body("IdlerHub", 5.0, [0.05, 0.05, 0.05, 0, 0, 0], position=(c, 0, 0),
                         label="idler hub")
    h_slide = hub.add_marker((0, 0, 0), (0.0, math.pi / 2, 0.0), label="tensioner")
    model.add_hinge("Tensioner", "prismatic", h_slide,
                    g.add_marker((c, 0, 0), (0.0, math.pi / 2, 0.0), label="tensioner guide"),
                    stiffness=[TENSIONER_K], damping=[TENSIONER_C],
                    spring_reference=[preload / TENSIONER_K], label="idler tensioner")
    idler, i_axle = _wheel(model, "Idler", c, k, "idler")
    model.add_hinge("IdlerAxle", "revolute", i_axle,
                    hub.add_marker((0, 0, 0), Y_AXIS, label="idler bearing"), label="idler",
                    damping=[float(idler_brake)])
    add_shoes(model, g, pins(k, m), [(sprocket, s_axle, r_w), (idler, i_axle, r_w)])
    model.simulation.end_time = end_time
    model.simulation.step = 1e-5
    model.simulation.output_step = 1e-3
    return model
