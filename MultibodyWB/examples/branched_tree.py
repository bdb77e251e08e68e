"""A branched tree: a hub on a revolute hinge carrying three chains with every tree situation.

Ground -revolute(z)- Hub; Hub -revolute- A1 -revolute- A2 (a chain);
Hub -universal- B1 -spherical- B2 (spatial chain); Hub -prismatic- C1 (a slider) held by a
spring-damper to the hub. Gravity -z; the hub turns about the vertical axis.
"""

from __future__ import annotations

import numpy as np

from ..solver.model import massprops
from ..solver.model import MultibodySystem
from ..solver.maths.rotations import matrix_to_bryant
from .parts import STEEL, add_link, frame_along


def build(spin=2.0, gravity=(0.0, 0.0, -9.81)) -> MultibodySystem:
    """The tree with the hub spinning at ``spin`` rad/s about the vertical."""
    m = MultibodySystem("BranchedTree", gravity=gravity,
                        description="hub with a planar chain, a spatial chain and a sprung slider")
    g = m.set_ground()
    axis = g.add_marker((0, 0, 0.5), (0, 0, 0), label="hub axis")
    hub_mp = massprops.cylinder(0.08, 0.04, STEEL, base=(0, 0, -0.02))
    hub = m.add_body("Hub", hub_mp.mass, hub_mp.ji, mass_center=hub_mp.center,
                     position=(0, 0, 0.5), density=STEEL, label="hub")
    h_axis = hub.add_marker((0, 0, 0), label="axis")
    h_a = hub.add_marker((0.08, 0, 0), matrix_to_bryant(frame_along((0, 0, -1), (0, 1, 0))),
                         label="to chain A")
    h_b = hub.add_marker((-0.08, 0, 0), matrix_to_bryant(frame_along((0, 0, -1), (1, 0, 0))),
                         label="to chain B")
    h_c = hub.add_marker((0, 0.08, 0), matrix_to_bryant(frame_along((1, 0, 0), (0, 1, 0))),
                         label="slider guide")
    h_s = hub.add_marker((0, 0.02, 0), label="spring anchor")
    m.add_hinge("HubBearing", "revolute", h_axis, axis, initial_rates=[spin])

    # chain A: a planar double pendulum hanging from the hub's rim
    pa = np.array([0.08, 0, 0.5])
    _, a11, a12 = add_link(m, "A1", pa, pa + [0, 0, -0.2], 0.02, 0.01)
    _, a21, _ = add_link(m, "A2", pa + [0, 0, -0.2], pa + [0, 0, -0.35], 0.02, 0.01)
    m.add_hinge("A1Pin", "revolute", a11, h_a, initial_coordinates=[0.3])
    m.add_hinge("A2Pin", "revolute", a21, a12)

    # chain B: universal then spherical, hanging on the other side
    pb = np.array([-0.08, 0, 0.5])
    _, b11, b12 = add_link(m, "B1", pb, pb + [0, 0, -0.2], 0.02, 0.01, axis=(1, 0, 0))
    _, b21, _ = add_link(m, "B2", pb + [0, 0, -0.2], pb + [0, 0, -0.3], 0.02, 0.01, axis=(1, 0, 0))
    m.add_hinge("B1Cross", "universal", b11, h_b, initial_coordinates=[0.2, -0.1])
    m.add_hinge("B2Ball", "spherical", b21, b12, initial_rates=[0.0, 0.5, 0.0])

    # chain C: a slider block running radially along the hub's y axis, on a spring
    slider_mp = massprops.box((0.03, 0.03, 0.03), STEEL, corner=(-0.015, -0.015, -0.015))
    c1 = m.add_body("C1", slider_mp.mass, slider_mp.ji, mass_center=slider_mp.center,
                    position=(0, 0.08, 0.5), orientation=matrix_to_bryant(
                        frame_along((1, 0, 0), (0, 1, 0))), density=STEEL, label="slider")
    c_guide = c1.add_marker((0, 0, 0), label="guide")
    c_spring = c1.add_marker((0, 0, 0), label="spring end")
    m.add_hinge("CSlide", "prismatic", c_guide, h_c, initial_coordinates=[0.0])
    m.add_force("CSpring", "spring_damper", c_spring, h_s, stiffness=200.0, damping=0.5,
                free_length=0.06)
    m.simulation.end_time = 1.0
    return m
