"""One instant of a run as every method reports it (:class:`Instant`), and where a marker sits as
the methods' arrays need it (:func:`marker_attachment`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...maths.rotations import bryant_to_matrix
from ...model.mechanism import MultibodySystem


@dataclass
class Instant:
    """What the solver knows at one instant (global axes, SI units).

    Attributes
    ----------
    t : float
    q, u, udot : ndarray
        Position and velocity coordinates (drivers applied) and velocity-coordinate rates.
    R : (n, 3, 3) body rotations; pb : (n, 3) base origins; pc : (n, 3) mass centres
    hp : (n, 3) hinge points (input marker origin of each body's tree hinge)
    w : (n, 3) angular velocities; vh : (n, 3) velocity of each body's point at hp
    x : (n, 6) accelerations [eps; a] of each body's point at hp
    Wh : (n, 6) wrench [torque; force] each tree hinge applies on its child at hp
    tau : generalised hinge loads per velocity coordinate (springs, dampers, drivers)
    Wext : (n, 6) applied wrench on each body at hp (gravity included)
    Wcut : (nc, 6) wrench each cut hinge applies on its input body at its input marker origin
    loop_rank : rank of the loop constraints at this instant (less than their number when some
        are redundant or the configuration is singular)
    phi : loop-closure residuals (m): blocked rotations (rad) and translations (m)
    coupler_lam : (ncp,) the couplers' multipliers (their loads are a lam and b lam on their two
        coordinates); None without couplers
    """

    t: float
    q: np.ndarray
    u: np.ndarray
    udot: np.ndarray
    R: np.ndarray
    pb: np.ndarray
    pc: np.ndarray
    hp: np.ndarray
    w: np.ndarray
    vh: np.ndarray
    x: np.ndarray
    Wh: np.ndarray
    tau: np.ndarray
    Wext: np.ndarray
    Sg: np.ndarray
    cg: np.ndarray
    Wcut: np.ndarray
    loop_rank: int
    phi: np.ndarray
    coupler_lam: np.ndarray = None


def marker_attachment(model: MultibodySystem, index, ref):
    """Where a marker sits, as the kernels need it: ``(body index, R, p)``.

    ``index`` maps body names to indices. For a body: the marker's rotation (3, 3) and origin (3,)
    in the body's base frame; for the ground: index -1 and the marker in global axes.
    """
    part = model.part(ref.body)
    m = part.marker(ref.marker)
    Rl, pl = m.frame.rotation, m.frame.position.copy()
    if model.is_ground(ref.body):
        R0 = bryant_to_matrix(part.orientation)
        return -1, R0 @ Rl, part.position + R0 @ pl
    return index[ref.body], Rl, pl
