"""Planar crank-rocker four-bar linkage in the global xz plane, hinge axes along global y.

Ground pivots O (crank) and D (rocker) 0.3 m apart; crank 0.1 m, coupler 0.35 m, rocker 0.25 m
(Grashof: 0.1 + 0.35 <= 0.3 + 0.25, the crank turns fully). Built from four revolute hinges, as a
designer draws it, the linkage is overconstrained in 3D (Grubler-Kutzbach gives -2 for a mechanism
that moves with 1 degree of freedom): three constraint directions are redundant.
"""

from __future__ import annotations

import numpy as np

from ..solver.model import MultibodySystem
from ..solver.maths.rotations import matrix_to_bryant
from .parts import add_link, frame_along, orientation_in

GROUND_LINK = 0.3
CRANK = 0.1
COUPLER = 0.35
ROCKER = 0.25
AXIS = np.array([0.0, 1.0, 0.0])


def assemble(theta: float, ground=GROUND_LINK, crank=CRANK, coupler=COUPLER, rocker=ROCKER):
    """Joint positions O, A, B, D (global, m) for crank angle ``theta`` (rad, from +x toward +z).

    The coupler-rocker pin B is the upper intersection of the two circles (open configuration).
    """
    O = np.zeros(3)
    D = np.array([ground, 0.0, 0.0])
    A = crank * np.array([np.cos(theta), 0.0, np.sin(theta)])
    AD = D - A
    d = np.linalg.norm(AD)
    a = (coupler ** 2 - rocker ** 2 + d ** 2) / (2 * d)
    h = np.sqrt(coupler ** 2 - a ** 2)
    u = AD / d
    n = np.cross(AXIS, u)          # in-plane normal to AD
    if n[2] < 0:
        n = -n
    B = A + a * u + h * n
    return O, A, B, D


def build(theta_deg=60.0, crank_rate=0.0, gravity=(0.0, 0.0, -9.81), ground=GROUND_LINK,
          crank=CRANK, coupler=COUPLER, rocker=ROCKER) -> MultibodySystem:
    """The four-bar drawn at crank angle ``theta_deg`` with the crank turning at ``crank_rate``
    (rad/s), link lengths in m (``ground = coupler`` and ``crank = rocker``: a parallelogram
    linkage, which passes a change point whenever it lies flat)."""
    m = MultibodySystem("FourBar", gravity=gravity,
                        description="planar crank-rocker four-bar, four revolute hinges")
    O, A, B, D = assemble(np.radians(theta_deg), ground, crank, coupler, rocker)
    crank, c1, c2 = add_link(m, "Crank", O, A, 0.02, 0.01)
    coupler, k1, k2 = add_link(m, "Coupler", A, B, 0.02, 0.01)
    rocker, r1, r2 = add_link(m, "Rocker", D, B, 0.02, 0.01)
    g = m.set_ground()
    # ground markers aligned with the links they carry: drawn hinge coordinates are 0
    go = g.add_marker(O, matrix_to_bryant(frame_along(A - O, AXIS)), label="crank pivot")
    gd = g.add_marker(D, matrix_to_bryant(frame_along(B - D, AXIS)), label="rocker pivot")
    # the coupler's end marker aligned with the rocker's end marker at B
    coupler.marker(2).frame.orientation = orientation_in(coupler, frame_along(B - D, AXIS))
    # the coupler's start marker aligned with the crank's end marker at A
    coupler.marker(1).frame.orientation = orientation_in(coupler, frame_along(A - O, AXIS))
    m.add_hinge("CrankPivot", "revolute", c1, go, initial_rates=[crank_rate])
    m.add_hinge("CrankPin", "revolute", k1, c2)
    m.add_hinge("RockerPin", "revolute", k2, r2)
    m.add_hinge("RockerPivot", "revolute", r1, gd)
    m.simulation.end_time = 2.0
    return m
