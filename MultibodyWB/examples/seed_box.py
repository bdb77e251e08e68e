"""The seed's box (MSTMMSim paper): a 15 x 10 x 10 mm steel box, base frame at a corner.

Numbers exactly as the paper's XML: base frame at (0.01, 0.01, 0.005) m turned 15 deg about z,
markers at the corner and the opposite corner, mass 0.01185 kg, JI about the corner. Here it hangs
from the ground by a spherical hinge at marker 1 (a heavy top in the making).
"""

from __future__ import annotations

from ..solver.model import MultibodySystem

POSITION = (0.01, 0.01, 0.005)
ORIENTATION = (0.0, 0.0, 0.2617994)
MASS = 0.01185
JI = (7.9e-07, 1.28375e-06, 1.28375e-06, -4.44375e-07, -4.44375e-07, -2.9625e-07)


def build(gravity=(0.0, 0.0, -9.81)) -> MultibodySystem:
    """The seed box on a spherical hinge at its corner marker."""
    m = MultibodySystem("SeedBox", gravity=gravity,
                        description="MSTMMSim seed box (15 x 10 x 10 mm, 7900 kg/m^3)")
    g = m.set_ground()
    pivot = g.add_marker(POSITION, ORIENTATION, label="pivot")
    box = m.add_body("Box", MASS, JI, mass_center=(0.0075, 0.005, 0.005), position=POSITION,
                     orientation=ORIENTATION, density=7900.0, label="Box")
    corner = box.add_marker((0, 0, 0))
    box.add_marker((0.015, 0.01, 0.01))
    m.add_hinge("Pivot", "spherical", corner, pivot)
    return m
