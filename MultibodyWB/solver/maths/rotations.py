"""Rotation helpers shared by the neutral model, topology and solvers.

Conventions (fixed by the neutral model, see ``design.md``):

* Orientation triples are Bryant (Cardan) angles in radians: successive rotations about the
  body-fixed x, y', z'' axes, ``R = Rx(a) @ Ry(b) @ Rz(c)``.
* ``R`` maps coordinates in the rotated (local) frame to the reference frame:
  ``v_ref = R @ v_local``.
"""

from __future__ import annotations

import math

import numpy as np


def rot_x(a: float) -> np.ndarray:
    """Rotation matrix about x by ``a`` radians, shape (3, 3)."""
    c, s = np.cos(a), np.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rot_y(a: float) -> np.ndarray:
    """Rotation matrix about y by ``a`` radians, shape (3, 3)."""
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rot_z(a: float) -> np.ndarray:
    """Rotation matrix about z by ``a`` radians, shape (3, 3)."""
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def bryant_to_matrix(angles) -> np.ndarray:
    """Rotation matrix of Bryant angles (a, b, c) in rad: ``Rx(a) Ry(b) Rz(c)``, shape (3, 3)."""
    a, b, c = (float(x) for x in angles)
    return rot_x(a) @ rot_y(b) @ rot_z(c)


def matrix_to_bryant(R) -> np.ndarray:
    """Bryant angles (a, b, c) in rad of a rotation matrix, inverse of :func:`bryant_to_matrix`.

    ``b`` lies in [-pi/2, pi/2], ``a`` and ``c`` in (-pi, pi] (to 1e-12); at the gimbal lock (``|b| = pi/2``, the last column's y and z
    entries below 1e-15) ``a`` is set to 0. ``a`` comes from the last column, then ``b`` and
    ``c`` from ``Rx(a)^T R = Ry(b) Rz(c)``, whose entries they are read from are of order one:
    the angles give back ``R`` to round-off everywhere, also next to the lock (``arcsin`` of
    ``R[0, 2]`` alone would put ``b`` off by 1.5e-8 rad there).
    """
    R = np.asarray(R, dtype=float)
    r12, r22 = float(R[1, 2]), float(R[2, 2])
    if math.hypot(r12, r22) > 1e-15:
        a = math.atan2(-r12, r22)
    else:  # gimbal lock: only a +/- c is defined
        a = 0.0
    ca, sa = math.cos(a), math.sin(a)
    b = math.atan2(float(R[0, 2]), max(ca * r22 - sa * r12, 0.0))      # cos b >= 0
    c = math.atan2(ca * float(R[1, 0]) + sa * float(R[2, 0]),
                   ca * float(R[1, 1]) + sa * float(R[2, 1]))
    # a half turn comes out as +pi whichever sign the round-off of its sine has (the same frame
    # read twice, or through a file's decimal text, gives the same angles)
    a = a + 2.0 * math.pi if a < -math.pi + 1e-12 else a
    c = c + 2.0 * math.pi if c < -math.pi + 1e-12 else c
    return np.array([a, b, c])


def skew(v) -> np.ndarray:
    """Cross-product matrix ``~v`` with ``skew(v) @ u == cross(v, u)``, shape (3, 3)."""
    x, y, z = (float(c) for c in v)
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def rotation_vector(R) -> np.ndarray:
    """Rotation vector (axis times angle, rad) of a rotation matrix, angle in [0, pi].

    The angle is ``atan2(sin, cos)`` from the skew and trace parts (accurate everywhere); near pi
    the axis comes from the symmetric part ``(R + R^T)/2 - cos(t) I = (1 - cos(t)) a a^T``.
    """
    R = np.asarray(R, dtype=float)
    c = (np.trace(R) - 1.0) / 2.0
    w = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    s = 0.5 * np.linalg.norm(w)
    t = np.arctan2(s, c)
    if t < 1e-8:
        return 0.5 * w
    if np.pi - t > 1e-2:
        return (t / (2.0 * s)) * w
    B = 0.5 * (R + R.T) - c * np.eye(3)
    k = int(np.argmax(np.diag(B)))
    axis = B[:, k] / np.sqrt(max(B[k, k] * (1.0 - c), 1e-300))
    axis /= np.linalg.norm(axis)
    if np.dot(axis, w) < 0.0:
        axis = -axis
    return t * axis


def inertia_vector_to_tensor(ji) -> np.ndarray:
    """Inertia tensor (3, 3) from the neutral model's ``JI`` = (Ixx, Iyy, Izz, Ixy, Ixz, Iyz).

    The products are tensor entries (``Ixy = -integral of x*y dm``), so they are placed as they are.
    """
    ixx, iyy, izz, ixy, ixz, iyz = (float(x) for x in ji)
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])


def inertia_tensor_to_vector(J) -> np.ndarray:
    """``JI`` = (Ixx, Iyy, Izz, Ixy, Ixz, Iyz) of a symmetric inertia tensor (3, 3)."""
    J = np.asarray(J, dtype=float)
    return np.array([J[0, 0], J[1, 1], J[2, 2], J[0, 1], J[0, 2], J[1, 2]])


def parallel_axis(J, mass: float, r) -> np.ndarray:
    """Shift an inertia tensor by ``r`` (m) for a body of ``mass`` (kg).

    Returns ``J + m (|r|^2 I - r r^T)``: the tensor about a point at ``-r`` from the mass centre
    when ``J`` is about the mass centre (Steiner). Use ``-mass`` to go the other way.
    """
    r = np.asarray(r, dtype=float)
    return np.asarray(J, dtype=float) + mass * (np.dot(r, r) * np.eye(3) - np.outer(r, r))


def quaternion_to_matrix(qv) -> np.ndarray:
    """Rotation matrix (3, 3) of a quaternion (w, x, y, z), normalised first."""
    w, x, y, z = np.asarray(qv, dtype=float) / np.linalg.norm(qv)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def bryant_to_quaternion(angles) -> np.ndarray:
    """Unit quaternion (w, x, y, z) of Bryant angles ``Rx(a) Ry(b) Rz(c)``."""
    a, b, c = (0.5 * float(x) for x in angles)
    qx = np.array([np.cos(a), np.sin(a), 0.0, 0.0])
    qy = np.array([np.cos(b), 0.0, np.sin(b), 0.0])
    qz = np.array([np.cos(c), 0.0, 0.0, np.sin(c)])
    return quat_mul(quat_mul(qx, qy), qz)


def quat_mul(p, q) -> np.ndarray:
    """Hamilton product ``p q`` of quaternions (w, x, y, z)."""
    pw, pv = p[0], np.asarray(p[1:])
    qw, qv = q[0], np.asarray(q[1:])
    return np.concatenate([[pw * qw - pv @ qv], pw * qv + qw * pv + np.cross(pv, qv)])
