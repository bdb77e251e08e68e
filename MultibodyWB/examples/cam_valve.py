"""Cam-driven valve: an eccentric disc cam on a camshaft lifting a flat-faced tappet and its valve.

The camshaft turns about global y at the origin, driven at constant speed ``rpm`` (a driver from
the start: the cam angle is ``theta = omega t``). Its cam is a steel disc of radius
:data:`CAM_RADIUS`, :data:`CAM_WIDTH` wide, whose centre is :data:`ECCENTRICITY` ``e`` off the
shaft axis, drawn pointing down (``theta = 0``: the valve at its lowest). The top of the disc is at
``R - e cos theta``: a follower kept on it rises by the eccentric's kinematic lift

    ``s(theta) = e (1 - cos theta)``,    ``s'' = e omega^2 cos theta``.

The follower (tappet, stem and valve head, steel, one body) slides along global z on a prismatic
hinge; its flat face meets the disc in a contact ``cylinder`` (the disc) against ``plane`` (the
face, its normal pointing down onto the cam), lubricated steel (friction 0.05). A valve spring
(``spring_damper`` to the cylinder head above) presses it down with ``PRELOAD`` at the drawn
position plus ``SPRING_RATE`` per metre of lift. The tappet's travel is limited by stops in its
bore (the prismatic hinge's lower and upper limits, 1 mm beyond the kinematic travel).

Valve float: the contact force is ``N = m s'' + F0 + k s + m g``, least at full lift
(``cos theta = -1``): ``N = F0 + 2 k e + m g - m e omega^2``, zero at :func:`float_speed`
(about 5300 rpm here). Below it the valve follows the cam (to the contact's depth, some
hundredths of a millimetre); above it the valve leaves the cam near full lift (``Fn = 0``),
overshoots and lands on the cam again later; from about 9000 rpm it flies into its upper stop.

The follower is drawn touching the cam (depth 0), so it settles to the depth its preload gives
(about 0.01 mm) in the first milliseconds (the start would also accept it drawn at that depth:
the spring's preload balances the contact's force, :data:`...analysis.start.OVERLAP_WEIGHTS`).
"""

from __future__ import annotations

import math

import numpy as np

from ..solver.model import massprops
from ..solver.model import Driver, MultibodySystem
from .parts import STEEL

CAM_RADIUS = 0.02        #: m, disc radius R
CAM_WIDTH = 0.014        #: m, disc width (along the shaft)
ECCENTRICITY = 0.004     #: m, e: the lift is 2 e = 8 mm
SHAFT_RADIUS = 0.012     #: m, camshaft journal
SHAFT_LENGTH = 0.06      #: m, journal to journal
TAPPET_RADIUS = 0.015    #: m, the flat face's radius (covers the contact's +-e sideways travel)
TAPPET_HEIGHT = 0.015    #: m
STEM_RADIUS = 0.0035     #: m
STEM_LENGTH = 0.08       #: m
HEAD_RADIUS = 0.015      #: m, valve head
HEAD_HEIGHT = 0.003      #: m
SPRING_RATE = 1.0e4      #: N/m, valve spring k
PRELOAD = 60.0           #: N, valve spring force F0 at the drawn (lowest) position
SPRING_LENGTH = 0.03     #: m, the spring's drawn length
SPRING_DAMPING = 2.0     #: N s/m
CONTACT_STIFFNESS = 1e9  #: N/m^1.5 per contact point (the disc's two rim points)
STOP_STIFFNESS = 2e6     #: N/m, the tappet's stops in its bore
STOP_MARGIN = 0.001      #: m, travel beyond the kinematic lift before a stop


def follower_mass_properties():
    """The follower as one body (base frame at the centre of its face, z up): tappet, stem and
    valve head above it (the valve drawn upside down: the cam at the bottom)."""
    tappet = massprops.cylinder(TAPPET_RADIUS, TAPPET_HEIGHT, STEEL)
    stem = massprops.cylinder(STEM_RADIUS, STEM_LENGTH, STEEL, base=(0, 0, TAPPET_HEIGHT))
    head = massprops.cylinder(HEAD_RADIUS, HEAD_HEIGHT, STEEL,
                              base=(0, 0, TAPPET_HEIGHT + STEM_LENGTH))
    return massprops.combine(tappet, stem, head)


def camshaft_mass_properties():
    """The camshaft's solids in its base frame (z along the shaft): the two journals either side
    of the disc (the disc covers the shaft's section: the journals stop at its faces) and the
    eccentric disc."""
    half, w = SHAFT_LENGTH / 2, CAM_WIDTH / 2
    return (massprops.cylinder(SHAFT_RADIUS, half - w, STEEL, base=(0, 0, -half)),
            massprops.cylinder(CAM_RADIUS, CAM_WIDTH, STEEL, base=(0, ECCENTRICITY, -w)),
            massprops.cylinder(SHAFT_RADIUS, half - w, STEEL, base=(0, 0, w)))


def lift(theta, e=ECCENTRICITY):
    """The eccentric's kinematic lift (m) at cam angle ``theta`` (rad from the lowest point)."""
    return e * (1.0 - np.cos(theta))


def float_speed(e=ECCENTRICITY, k=SPRING_RATE, preload=PRELOAD, g=9.81) -> float:
    """The camshaft speed (rpm) above which the follower leaves the cam at full lift."""
    mass = follower_mass_properties().mass
    omega = math.sqrt((preload + 2 * k * e + mass * g) / (mass * e))
    return omega * 60 / (2 * math.pi)


def build(rpm=1000.0, friction=0.05, gravity=(0.0, 0.0, -9.81)) -> MultibodySystem:
    """The valve train with the camshaft at ``rpm`` from the start."""
    R, e, w = CAM_RADIUS, ECCENTRICITY, CAM_WIDTH
    m = MultibodySystem("CamValve", gravity=gravity,
                        description="eccentric cam lifting a flat-faced valve against its spring")
    g = m.set_ground(label="cylinder head")
    # camshaft: base frame on the shaft axis with z along global y (x along x, y along -z): the
    # disc's centre, drawn below the axis, is at local +y
    axis = (-math.pi / 2, 0.0, 0.0)
    mp = massprops.combine(*camshaft_mass_properties())
    cam = m.add_body("Camshaft", mp.mass, mp.ji, mass_center=mp.center, orientation=axis,
                     density=STEEL, label="camshaft with its eccentric")
    c_axis = cam.add_marker((0, 0, 0), label="camshaft axis")
    c_disc = cam.add_marker((0, e, 0), label="eccentric disc centre")
    g_axis = g.add_marker((0, 0, 0), axis, label="camshaft bearing")
    omega = float(rpm) * 2 * math.pi / 60
    m.add_hinge("CamBearing", "revolute", c_axis, g_axis, label="camshaft bearing",
                drivers=[Driver("rz", f"{omega!r}*t", from_start=True)])

    # follower: base frame at its face, drawn touching the top of the disc
    face = R - e
    fp = follower_mass_properties()
    valve = m.add_body("Valve", fp.mass, fp.ji, mass_center=fp.center, position=(0, 0, face),
                       density=STEEL, label="tappet and valve")
    v_slide = valve.add_marker((0, 0, 0), label="tappet axis")
    v_face = valve.add_marker((0, 0, 0), (math.pi, 0, 0), label="tappet face (normal down)")
    seat = TAPPET_HEIGHT + 0.5 * STEM_LENGTH
    v_spring = valve.add_marker((0, 0, seat), label="spring retainer")
    g_slide = g.add_marker((0, 0, face), label="tappet bore")
    g_spring = g.add_marker((0, 0, face + seat + SPRING_LENGTH), label="spring seat")
    m.add_hinge("Guide", "prismatic", v_slide, g_slide, label="tappet bore",
                lower_limits=[-STOP_MARGIN], upper_limits=[2 * e + STOP_MARGIN],
                stop_stiffness=[STOP_STIFFNESS], stop_restitution=[0.3],
                stop_impact_speed=[0.5])
    m.add_force("ValveSpring", "spring_damper", v_spring, g_spring, stiffness=SPRING_RATE,
                damping=SPRING_DAMPING, free_length=SPRING_LENGTH + PRELOAD / SPRING_RATE,
                label="valve spring")
    m.add_contact("CamContact", c_disc, v_face, ("cylinder", {"radius": R, "length": w}),
                  ("plane",), stiffness=CONTACT_STIFFNESS, exponent=1.5, restitution=0.5,
                  impact_speed=0.5, static_friction=friction, dynamic_friction=friction,
                  stiction_velocity=1e-3, label="cam on tappet face")
    m.simulation.end_time = 2 * 60.0 / float(rpm)      # two camshaft revolutions
    m.simulation.step = 1e-5
    m.simulation.output_step = 1e-4
    return m
