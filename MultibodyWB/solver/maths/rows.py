"""Helpers over many rows at once (rotations, angles and 3x3 algebra of a run's output rows).

The compiled ones compute each row alone with scalar functions, so that a result row does not depend on how many
rows are computed at once (numpy's vectorised sin, cos and arctan2 may round differently in a long
array than alone).
"""

import numpy as np
from numba import njit

from .small import _JIT     # (and small's LLVM options, set before anything compiles)


@njit(**_JIT)
def continue_bryant_rows(raw, prev, start):
    """Bryant angles (k, N, 3) on the branches nearest to the row before (results.continue_bryant
    along a sequence): of ``(a, b, c)`` and ``(a + pi, pi - b, c + pi)``, each up to whole turns,
    the one nearest the previous row's (``prev`` (N, 3) before the first row); with ``start``
    the first row takes the triple with the smaller ``|a| + |c|``, a and c in [-pi, pi]."""
    k_rows, N = raw.shape[0], raw.shape[1]
    out = np.empty_like(raw)
    two_pi = 2.0 * np.pi
    p = prev.copy()
    c1 = np.empty(3)
    c2 = np.empty(3)
    for k in range(k_rows):
        for j in range(N):
            r0, r1, r2 = raw[k, j, 0], raw[k, j, 1], raw[k, j, 2]
            al0, al1, al2 = r0 + np.pi, np.pi - r1, r2 + np.pi
            if start and k == 0:
                al0 -= two_pi * np.round(al0 / two_pi)
                al2 -= two_pi * np.round(al2 / two_pi)
                if abs(al0) + abs(al2) < abs(r0) + abs(r2) - 1e-9:
                    out[k, j, 0], out[k, j, 1], out[k, j, 2] = al0, al1, al2
                else:
                    out[k, j, 0], out[k, j, 1], out[k, j, 2] = r0, r1, r2
            else:
                c1[0] = r0 + two_pi * np.round((p[j, 0] - r0) / two_pi)
                c1[1] = r1 + two_pi * np.round((p[j, 1] - r1) / two_pi)
                c1[2] = r2 + two_pi * np.round((p[j, 2] - r2) / two_pi)
                c2[0] = al0 + two_pi * np.round((p[j, 0] - al0) / two_pi)
                c2[1] = al1 + two_pi * np.round((p[j, 1] - al1) / two_pi)
                c2[2] = al2 + two_pi * np.round((p[j, 2] - al2) / two_pi)
                d1 = (c1[0] - p[j, 0]) ** 2 + (c1[1] - p[j, 1]) ** 2 + (c1[2] - p[j, 2]) ** 2
                d2 = (c2[0] - p[j, 0]) ** 2 + (c2[1] - p[j, 1]) ** 2 + (c2[2] - p[j, 2]) ** 2
                c = c2 if d2 < d1 else c1
                out[k, j, 0], out[k, j, 1], out[k, j, 2] = c[0], c[1], c[2]
            p[j, 0], p[j, 1], p[j, 2] = out[k, j, 0], out[k, j, 1], out[k, j, 2]
    return out


@njit(**_JIT)
def bryant_rows(R, gimbal):
    """Bryant angles (N, 3) of rotation matrices (N, 3, 3), b in [-pi/2, pi/2], one matrix at a
    time with the scalar functions (numpy's vectorised sin, cos, arctan2 may round differently
    in a long array than alone: result rows must not depend on how many are computed at once).
    ``gimbal``: at the gimbal lock (|sin b| >= 1 - 1e-12) a = 0 and c = atan2(R10, R11), as
    rotations.matrix_to_bryant; else the plain formulas throughout (results._bryant_raw)."""
    N = R.shape[0]
    out = np.empty((N, 3))
    for k in range(N):
        sb = min(max(R[k, 0, 2], -1.0), 1.0)
        out[k, 1] = np.arcsin(sb)
        if gimbal and abs(sb) >= 1.0 - 1e-12:
            out[k, 0] = 0.0
            out[k, 2] = np.arctan2(R[k, 1, 0], R[k, 1, 1])
        else:
            out[k, 0] = np.arctan2(-R[k, 1, 2], R[k, 2, 2])
            out[k, 2] = np.arctan2(-R[k, 0, 1], R[k, 0, 0])
    return out


@njit(**_JIT)
def quaternion_of_bryant_rows(A):
    """Unit quaternions (N, 4) (w, x, y, z) of Bryant angles (N, 3), Rx(a) Ry(b) Rz(c), one
    row at a time (see :func:`bryant_rows` on why)."""
    N = A.shape[0]
    out = np.empty((N, 4))
    for k in range(N):
        ca, sa = np.cos(0.5 * A[k, 0]), np.sin(0.5 * A[k, 0])
        cb, sb = np.cos(0.5 * A[k, 1]), np.sin(0.5 * A[k, 1])
        cc, sc = np.cos(0.5 * A[k, 2]), np.sin(0.5 * A[k, 2])
        w, x, y, z = ca * cb, sa * cb, ca * sb, sa * sb
        out[k, 0] = w * cc - z * sc
        out[k, 1] = x * cc + y * sc
        out[k, 2] = y * cc - x * sc
        out[k, 3] = z * cc + w * sc
    return out


@njit(**_JIT)
def cos_sin_rows(x):
    """cos and sin (N,) each of angles (N,), one at a time (see :func:`bryant_rows`)."""
    c = np.empty(x.size)
    s = np.empty(x.size)
    for k in range(x.size):
        c[k] = np.cos(x[k])
        s[k] = np.sin(x[k])
    return c, s


def _mat_vec(A, v) -> np.ndarray:
    """``A @ v`` over leading axes, (..., 3, 3) and (..., 3) (broadcast), summed in a fixed order:
    the rows of a run come out the same whether computed one at a time or many at once (numpy's
    matmul and einsum may sum differently for different batch sizes)."""
    return np.stack([A[..., i, 0] * v[..., 0] + A[..., i, 1] * v[..., 1] + A[..., i, 2] * v[..., 2]
                     for i in range(3)], axis=-1)


def _matT_vec(A, v) -> np.ndarray:
    """``A^T @ v`` over leading axes (as :func:`_mat_vec`)."""
    return np.stack([A[..., 0, i] * v[..., 0] + A[..., 1, i] * v[..., 1] + A[..., 2, i] * v[..., 2]
                     for i in range(3)], axis=-1)


def _mat_mat(A, B) -> np.ndarray:
    """``A @ B`` over leading axes (as :func:`_mat_vec`)."""
    return np.stack([_mat_vec(A, B[..., :, j]) for j in range(3)], axis=-1)


def _matT_mat(A, B) -> np.ndarray:
    """``A^T @ B`` over leading axes (as :func:`_mat_vec`)."""
    return np.stack([_matT_vec(A, B[..., :, j]) for j in range(3)], axis=-1)


def _cross(a, b) -> np.ndarray:
    """Cross product along the last axis of (..., 3) arrays (faster than np.cross)."""
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    out[..., 1] = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    out[..., 2] = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return out


def _quat_matrices(qs) -> np.ndarray:
    """Rotation matrices (k, 3, 3) of quaternions (k, 4) (normalised here)."""
    q = qs / np.linalg.norm(qs, axis=1)[:, None]
    w, x, y, z = q.T
    return np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                     2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                     2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
                    axis=1).reshape(-1, 3, 3)


def _rotvec(R) -> np.ndarray:
    from .rotations import rotation_vector
    return rotation_vector(R)
