"""An n-link chain of revolute hinges with alternating axes (global y, then x, ...), hanging.

The benchmark model of the solver: a spatial chain whose cost per step shows the method's order.
Links are steel bars 0.1 m long; every hinge starts at ``angle`` rad so the chain moves in 3D.
"""

from __future__ import annotations

from ..solver.model import MultibodySystem
from ..solver.maths.rotations import bryant_to_matrix
from .parts import add_link, orientation_in

LINK = 0.1   #: m


def build(n: int = 10, angle: float = 0.1, gravity=(0.0, 0.0, -9.81)) -> MultibodySystem:
    """The chain of ``n`` links."""
    m = MultibodySystem(f"Chain{n}", gravity=gravity,
                        description=f"{n}-link chain of revolute hinges with alternating axes")
    g = m.set_ground()
    previous_end = None
    for i in range(n):
        axis = (0.0, 1.0, 0.0) if i % 2 == 0 else (1.0, 0.0, 0.0)
        body, start, end = add_link(m, f"Link{i + 1}", (0, 0, -i * LINK), (0, 0, -(i + 1) * LINK),
                                    0.02, 0.01, axis=axis)
        R = bryant_to_matrix(body.orientation)
        if previous_end is None:      # the ground's marker aligned with the first link
            output = g.add_marker((0, 0, 0), body.orientation.copy(), label="pivot")
        else:                          # the previous link's end marker aligned with this link
            prev = m.body(previous_end.body)
            prev.marker(previous_end.marker).frame.orientation = orientation_in(prev, R)
            output = previous_end
        m.add_hinge(f"J{i + 1}", "revolute", start, output, initial_coordinates=[angle])
        previous_end = end
    m.simulation.end_time = 1.0
    m.simulation.step = 1e-4
    return m
