"""The spatial system of seed 004 (vector bond graphs, a prismatic joint with a spring).

The paper's data: three rigid bodies, revolute joints J1 and J2, a prismatic joint J3 with a
spring K = 500 N/m, a moment M = 0.1 N m imposed at J1, m1 = m2 = 1 kg, Ixx = Iyy = Izz =
4.167e-4 kg m^2 (a 50 mm cube of 1 kg: m s^2 / 6), weights -9.8 N, distances a = 0.3 m,
b = 0.1 m, c = 0.15 m. Its figure is lost; this is the geometry we chose (a chain of three
moving rigid bodies, since two moving bodies joined to the ground by R, R and P joints would
be locked):

* J1: revolute between the ground and body 1 about the vertical (global z) at the origin,
  driven by the constant moment M about z.
* Body 1 ("Arm", m1): its mass centre a = 0.3 m from J1 along the arm (global x at t = 0).
* J2: revolute between body 1 and body 2 at the arm's end (at the mass centre of body 1), about
  the horizontal axis across the arm (global y at t = 0): body 2 swings in the arm's plane.
* Body 2 ("Pendulum", m2): its mass centre b = 0.1 m below J2.
* J3: prismatic between body 2 and body 3 along the pendulum (downwards), with the spring
  K = 500 N/m of free length c = 0.15 m from J2.
* Body 3 ("Slider"): a third 1 kg, 50 mm cube (the paper gives the same inertia for its bodies),
  its mass centre on the slide, starting c = 0.15 m below J2.

Gravity -9.8 m/s^2 (the weights -9.8 N of 1 kg). Started at rest with the pendulum 0.3 rad out of
the vertical, so all three joints move; the result to watch is the displacement of the bodies
along global z and the constraint force at J3.
"""

from __future__ import annotations

import numpy as np

from ..solver.model import massprops
from ..solver.model import MultibodySystem

A, B, C = 0.3, 0.1, 0.15          #: m
K = 500.0                         #: N/m
MOMENT = 0.1                      #: N m
MASS = 1.0                        #: kg
SIDE = 0.05                       #: m, cube of 1 kg: I = m s^2 / 6 = 4.1667e-4 kg m^2


def _cube(model, name, center):
    mp = massprops.box((SIDE,) * 3, MASS / SIDE ** 3, corner=(-SIDE / 2,) * 3)
    return model.add_body(name, mp.mass, mp.ji, mass_center=mp.center, position=center,
                          density=MASS / SIDE ** 3)


def build(swing=0.3, gravity=(0.0, 0.0, -9.8)) -> MultibodySystem:
    """The system, with the pendulum started ``swing`` rad out of the vertical."""
    m = MultibodySystem("Seed004", gravity=gravity,
                        description="seed 004: arm, pendulum and sprung slider (R, R, P)")
    g = m.set_ground()
    j1 = g.add_marker((0, 0, 0), label="J1")
    arm = _cube(m, "Arm", (A, 0, 0))
    arm_j1 = arm.add_marker((-A, 0, 0), label="J1")
    arm_j2 = arm.add_marker((0, 0, 0), (-np.pi / 2, 0, 0), label="J2")      # z along global y
    pend = _cube(m, "Pendulum", (A, 0, -B))
    pend_j2 = pend.add_marker((0, 0, B), (-np.pi / 2, 0, 0), label="J2")
    pend_j3 = pend.add_marker((0, 0, B - C), (np.pi, 0, 0), label="J3 guide")  # z down
    pend_k = pend.add_marker((0, 0, B), label="spring anchor")
    slider = _cube(m, "Slider", (A, 0, -C))
    sl_j3 = slider.add_marker((0, 0, 0), (np.pi, 0, 0), label="J3")
    sl_k = slider.add_marker((0, 0, 0), label="spring end")
    m.add_hinge("J1", "revolute", arm_j1, j1)
    m.add_hinge("J2", "revolute", pend_j2, arm_j2, initial_coordinates=[swing])
    m.add_hinge("J3", "prismatic", sl_j3, pend_j3, initial_coordinates=[0.0])
    m.add_force("Moment", "point_torque", arm_j1, direction=(0, 0, 1), magnitude=repr(MOMENT))
    m.add_force("Spring", "spring_damper", sl_k, pend_k, stiffness=K, free_length=C)
    m.simulation.end_time = 2.0
    m.simulation.step = 1e-4
    m.simulation.output_step = 1e-3
    return m
