"""Compiled helpers over many rows at once (rotations and angles of a run's output rows).

Each row is computed alone with scalar functions, so that a result row does not depend on how many
rows are computed at once (numpy's vectorised sin, cos and arctan2 may round differently in a long
array than alone).
"""

import numpy as np
from numba import njit

_JIT = dict(cache=True, nogil=True, error_model="numpy")


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
