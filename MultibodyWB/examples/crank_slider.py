"""Crank-slider of a single-cylinder four-stroke engine (seed 003): frame, crank, rod, piston.

The seed's figure is lost; these dimensions are ours (a 300 cm^3 class engine):
crank radius 40 mm (stroke 80 mm), connecting rod 140 mm between centres, piston 70 mm bore,
50 mm tall, aluminium; crank and rod steel. Vertical cylinder: the piston slides along global z,
the crankshaft turns about global y, the crank angle theta is measured from top dead centre.

Variants:
- ``"spatial"`` (default): main bearing revolute, big end spherical, wrist pin universal, piston
  prismatic. Grubler-Kutzbach 18 - (5 + 3 + 4 + 5) = 1, no redundant constraint: every reaction
  force is determinate.
- ``"planar"``: revolute, revolute, revolute, prismatic, as a designer draws it: overconstrained in
  3D (Grubler-Kutzbach -2 for one real degree of freedom).

Loads: gravity; a gas force on the piston crown, a pulse near top dead centre of every power stroke
(every second revolution), written as a function of time for the engine turning at ``rpm``; the
crank is driven at constant speed by default (its driver torque is the crankshaft torque).
"""

from __future__ import annotations

import numpy as np

from ..solver.model import massprops
from ..solver.model import Driver, MultibodySystem
from ..solver.maths.rotations import matrix_to_bryant
from .parts import ALUMINIUM, add_link, frame_along, orientation_in

CRANK_RADIUS = 0.04    #: m
ROD_LENGTH = 0.14      #: m
BORE = 0.07            #: m, piston diameter
PISTON_HEIGHT = 0.05   #: m
PIN_BELOW_CROWN = 0.03  #: m, wrist pin to piston crown
SHAFT = np.array([0.0, 1.0, 0.0])
UP = np.array([0.0, 0.0, 1.0])
PEAK_GAS_FORCE = 19000.0   #: N (about 50 bar on the 70 mm bore)
PEAK_ANGLE_DEG = 375.0     #: crank angle of the peak pressure, 15 deg after firing TDC
PULSE_WIDTH_DEG = 12.0     #: standard deviation of the pressure pulse, crank deg


def positions(theta: float, r=CRANK_RADIUS, l=ROD_LENGTH):
    """Crank pin and wrist pin positions (global, m) at crank angle ``theta`` (rad from TDC)."""
    pin = r * np.array([np.sin(theta), 0.0, np.cos(theta)])
    z_piston = r * np.cos(theta) + np.sqrt(l * l - (r * np.sin(theta)) ** 2)
    return pin, np.array([0.0, 0.0, z_piston])


def gas_force_expression(rpm: float, theta0: float) -> str:
    """Gas force (N) on the piston as an expression in t for the engine at ``rpm`` from ``theta0``."""
    omega = float(rpm) * 2 * np.pi / 60
    # plain floats: numpy 2 would write np.float64(...) into the expression
    peak, width = float(np.radians(PEAK_ANGLE_DEG)), float(np.radians(PULSE_WIDTH_DEG))
    return (f"{PEAK_GAS_FORCE:g}*exp(-0.5*((({float(theta0)!r} + {omega!r}*t) % (4*pi)) - "
            f"{peak!r})**2/{width!r}**2)")


def build(variant="spatial", theta0_deg=60.0, rpm=3000.0, driven=True, gas=True,
          gravity=(0.0, 0.0, -9.81)) -> MultibodySystem:
    """The engine drawn at crank angle ``theta0_deg`` (from TDC)."""
    if variant not in ("spatial", "planar"):
        raise ValueError(f"variant must be 'spatial' or 'planar', not {variant!r}")
    theta0 = np.radians(theta0_deg)
    m = MultibodySystem("CrankSlider", gravity=gravity,
                        description=f"single-cylinder engine crank-slider ({variant} hinges)")
    pin, wrist = positions(theta0)
    crank, c_main, c_pin = add_link(m, "Crank", np.zeros(3), pin, 0.03, 0.012, axis=SHAFT,
                                    overhang=0.015, label="crank")
    rod, r_big, r_small = add_link(m, "Rod", pin, wrist, 0.02, 0.01, axis=SHAFT,
                                   overhang=0.012, label="connecting rod")
    pm = massprops.cylinder(BORE / 2, PISTON_HEIGHT, ALUMINIUM,
                            base=(0, 0, PIN_BELOW_CROWN - PISTON_HEIGHT))
    piston = m.add_body("Piston", pm.mass, pm.ji, mass_center=pm.center, position=wrist,
                        density=ALUMINIUM, label="piston")
    up = frame_along((1, 0, 0), UP)                 # x along global x, z up
    pin_frame = frame_along((1, 0, 0), SHAFT)       # x along global x, z along the shaft
    p_pin = piston.add_marker((0, 0, 0), matrix_to_bryant(pin_frame), label="wrist pin")
    p_slide = piston.add_marker((0, 0, 0), matrix_to_bryant(up), label="cylinder axis")
    p_crown = piston.add_marker((0, 0, PIN_BELOW_CROWN), label="crown")

    g = m.set_ground(label="engine frame")
    # main bearing marker aligned with the crank (drawn crank coordinate 0), z along the shaft
    g_main = g.add_marker((0, 0, 0), matrix_to_bryant(frame_along(pin, SHAFT)),
                          label="main bearing")
    g_cyl = g.add_marker((0, 0, 0), matrix_to_bryant(up), label="cylinder axis")

    m.add_hinge("MainBearing", "revolute", c_main, g_main,
                drivers=[Driver("rz", f"{float(rpm) * 2 * np.pi / 60!r}*t")] if driven else [],
                initial_rates=None if driven else [float(rpm) * 2 * np.pi / 60])
    if variant == "spatial":
        # big end: the rod's start marker aligned with the crank pin marker (drawn angles 0)
        rod.marker(1).frame.orientation = orientation_in(rod, frame_along(pin, SHAFT))
        m.add_hinge("BigEnd", "spherical", r_big, c_pin)
        # wrist pin: universal, first axis (rod side, x) along global x, second (piston side, y)
        # along the pin: the rod tilts about the pin and cannot spin about its own length
        rod.marker(2).frame.orientation = orientation_in(rod, np.eye(3))
        piston.marker(p_pin.marker).frame.orientation = np.zeros(3)
        m.add_hinge("WristPin", "universal", p_pin, r_small)
    else:
        rod.marker(1).frame.orientation = orientation_in(rod, frame_along(pin, SHAFT))
        rod.marker(2).frame.orientation = orientation_in(rod, pin_frame)
        m.add_hinge("BigEnd", "revolute", r_big, c_pin)
        m.add_hinge("WristPin", "revolute", p_pin, r_small)
    m.add_hinge("Cylinder", "prismatic", p_slide, g_cyl)
    if gas:
        m.add_force("GasForce", "point_force", p_crown, direction=(0, 0, -1),
                    magnitude=gas_force_expression(rpm, theta0))
    m.simulation.end_time = 0.08       # four revolutions at 3000 rpm: two working cycles
    m.simulation.output_step = 1e-4
    m.simulation.step = 1e-5
    return m
