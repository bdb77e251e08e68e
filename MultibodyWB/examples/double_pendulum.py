"""Double pendulum: two steel links on revolute hinges about the global y axis, gravity -z.

Drawn hanging straight down; the initial hinge coordinates (60 and 0 deg by default) swing it out.
"""

from __future__ import annotations

import numpy as np

from ..solver.model import MultibodySystem
from ..solver.maths.rotations import matrix_to_bryant
from .parts import add_link, frame_along

LENGTH = 0.3        #: m, pivot to pivot
WIDTH = 0.03        #: m
THICKNESS = 0.01    #: m


def build(angles_deg=(60.0, 0.0), rates=(0.0, 0.0), length=LENGTH,
          gravity=(0.0, 0.0, -9.81)) -> MultibodySystem:
    """Two links of ``length`` m released at ``angles_deg`` with ``rates`` rad/s."""
    m = MultibodySystem("DoublePendulum", gravity=gravity,
                        description="double pendulum of two steel links, revolute hinges about y")
    g = m.set_ground()
    # pivot marker: z along global +y (the hinge axis), x pointing down like the hanging links,
    # so the drawn configuration is hinge coordinate 0
    pivot = g.add_marker((0, 0, 0), matrix_to_bryant(frame_along((0, 0, -1), (0, 1, 0))),
                         label="pivot")
    p0, p1, p2 = np.zeros(3), np.array([0, 0, -length]), np.array([0, 0, -2 * length])
    upper, u1, u2 = add_link(m, "Upper", p0, p1, WIDTH, THICKNESS)
    lower, l1, _ = add_link(m, "Lower", p1, p2, WIDTH, THICKNESS)
    # link base frames have z along +y: their markers align with the pivot marker
    m.add_hinge("Shoulder", "revolute", u1, pivot, initial_coordinates=[np.radians(angles_deg[0])],
                initial_rates=[rates[0]])
    m.add_hinge("Elbow", "revolute", l1, u2, initial_coordinates=[np.radians(angles_deg[1])],
                initial_rates=[rates[1]])
    m.simulation.end_time = 2.0
    return m
