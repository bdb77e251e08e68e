"""Building blocks shared by the examples: straight links made of homogeneous boxes."""

from __future__ import annotations

import numpy as np

from ..solver.model import massprops
from ..solver.model import MarkerRef, MultibodySystem, RigidBody
from ..solver.maths.rotations import bryant_to_matrix, matrix_to_bryant

STEEL = 7850.0       #: kg/m^3
ALUMINIUM = 2700.0   #: kg/m^3


def frame_along(direction, axis) -> np.ndarray:
    """Rotation matrix whose x axis points along ``direction`` and z axis along ``axis``.

    ``axis`` is made orthogonal to ``direction`` first; shape (3, 3), columns = local axes.
    """
    x = np.asarray(direction, dtype=float)
    x = x / np.linalg.norm(x)
    z = np.asarray(axis, dtype=float)
    z = z - np.dot(z, x) * x
    z = z / np.linalg.norm(z)
    return np.column_stack([x, np.cross(z, x), z])


def add_link(model: MultibodySystem, name: str, start, end, width: float, thickness: float,
             density: float = STEEL, axis=(0.0, 1.0, 0.0), overhang: float | None = None,
             label: str = "") -> tuple[RigidBody, MarkerRef, MarkerRef]:
    """Add a straight link from ``start`` to ``end`` (global, m): a box, rounded ends ignored.

    The base frame sits at ``start`` with x toward ``end`` and z along ``axis`` (the hinge axes of
    a planar linkage). The box runs ``overhang`` (default half the width) past both ends. Markers
    1 and 2 sit at the two ends with the base frame's orientation.

    Returns the body and references to its start and end markers.
    """
    start, end = np.asarray(start, dtype=float), np.asarray(end, dtype=float)
    length = float(np.linalg.norm(end - start))
    e = 0.5 * width if overhang is None else overhang
    R = frame_along(end - start, axis)
    mp = massprops.box((length + 2 * e, width, thickness), density,
                       corner=(-e, -0.5 * width, -0.5 * thickness))
    body = model.add_body(name, mp.mass, mp.ji, mass_center=mp.center, position=start,
                          orientation=matrix_to_bryant(R), density=density, label=label)
    m1 = body.add_marker((0, 0, 0), label=f"{name} start")
    m2 = body.add_marker((length, 0, 0), label=f"{name} end")
    return body, m1, m2


def orientation_in(body: RigidBody, R_global) -> np.ndarray:
    """Bryant angles, in ``body``'s base frame, of a frame with global rotation ``R_global``."""
    angles = matrix_to_bryant(bryant_to_matrix(body.orientation).T @ np.asarray(R_global))
    return np.where(np.abs(angles) < 1e-14, 0.0, angles)   # no round-off noise in the files
