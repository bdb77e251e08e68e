"""Gear train of three spur gears on parallel shafts: a motor-driven pinion, an idler, an output.

Tooth counts ``z = 12, 36, 24`` at module 2 mm (pitch radii 12, 36 and 24 mm, centre distances
48 and 60 mm along global x), every shaft turning about global z. Each gear is a steel disc of its
pitch radius, 12 mm wide. Two external gear pairs (couplers of type ``gear``):

- pinion -> idler: ratio ``-z1/z2 = -1/3``;
- idler -> output: ratio ``-z2/z3 = -3/2``;

so the output turns at ``(-1/3) (-3/2) = +1/2`` times the pinion's rate: the idler reverses the
sense twice and its own tooth count drops out (``z1/z3``).

Loads: the pinion is a motor (constant speed ``rpm`` reached by a smooth ramp of ``ramp_time``);
the output shaft drives a viscous brake (its bearing's damping ``brake``, N m s/rad). In the steady
state the brake absorbs ``brake (rpm/2)^2``, which the motor's torque ``brake / 4 x rate`` (N m)
delivers through the teeth. The newton-euler method takes no couplers: run with mstmm (default)
or constrained.
"""

from __future__ import annotations

import numpy as np

from ..solver.model import massprops
from ..solver.model import Motor, MultibodySystem
from .parts import STEEL

MODULE = 0.002          #: m, gear module (pitch diameter / tooth count)
TEETH = (12, 36, 24)    #: pinion, idler, output
FACE_WIDTH = 0.012      #: m
NAMES = ("Pinion", "Idler", "Output")
#: rate of the output / rate of the pinion (idler: -z1/z2, output: -z2/z3)
RATIOS = (-TEETH[0] / TEETH[1], -TEETH[1] / TEETH[2])
OVERALL_RATIO = RATIOS[0] * RATIOS[1]     #: = z1/z3 = 1/2


def pitch_radius(z: int) -> float:
    """Pitch radius (m) of a gear of ``z`` teeth at :data:`MODULE`."""
    return 0.5 * MODULE * z


def build(rpm=1500.0, ramp_time=0.1, brake=2e-3) -> MultibodySystem:
    """The train with the pinion's motor at ``rpm`` after ``ramp_time`` (s) and the output's
    brake ``brake`` (N m s/rad)."""
    m = MultibodySystem("GearTrain", gravity=(0.0, 0.0, -9.81),
                        description="three-gear train z = 12, 36, 24 (output = +1/2 pinion)")
    g = m.set_ground(label="gearbox housing")
    x = 0.0
    for k, (name, z) in enumerate(zip(NAMES, TEETH)):
        r = pitch_radius(z)
        if k:
            x += pitch_radius(TEETH[k - 1]) + r
        mp = massprops.cylinder(r, FACE_WIDTH, STEEL, base=(0, 0, -FACE_WIDTH / 2))
        body = m.add_body(name, mp.mass, mp.ji, mass_center=mp.center, position=(x, 0, 0),
                          density=STEEL, label=f"{name.lower()} (z = {z})")
        bm = body.add_marker((0, 0, 0), label=f"{name} axis")
        gm = g.add_marker((x, 0, 0), label=f"{name} bearing")
        kw = {}
        if k == 0:
            kw["motors"] = [Motor("rz", float(rpm) * 2 * np.pi / 60, ramp_time=float(ramp_time))]
        if k == 2:
            kw["damping"] = [float(brake)]
        m.add_hinge(f"{name}Shaft", "revolute", bm, gm, label=f"{name.lower()} bearing", **kw)
    m.add_coupler("Mesh1", "gear", ("PinionShaft", "rz"), ("IdlerShaft", "rz"), ratio=RATIOS[0],
                  label="pinion - idler mesh")
    m.add_coupler("Mesh2", "gear", ("IdlerShaft", "rz"), ("OutputShaft", "rz"), ratio=RATIOS[1],
                  label="idler - output mesh")
    m.simulation.end_time = 0.3
    m.simulation.step = 1e-4
    m.simulation.output_step = 1e-3
    return m
