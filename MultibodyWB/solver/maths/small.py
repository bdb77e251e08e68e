"""Compiled 3-vector, 3x3-matrix and quaternion helpers that every compiled formulation shares.

``_mv``, ``_cr``, ``_mm``, ``_mmt`` are inlined where they are called (by LLVM: :data:`_INL`)
and work on one matrix of a stack (``A[ia]``) with scalar arithmetic: no allocation. They take
the stack and an index rather than the block itself: a view ``A[i]`` inside a loop costs a
reference count increment and decrement (an atomic operation) per iteration, which is a
measurable part of the step time. The compiler's settings (LLVM's inlining threshold, numba's
indexing) are in :mod:`.compiler`, imported here before anything compiles.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from . import compiler  # noqa: F401  (the compiler's settings, before anything here compiles)

_JIT = dict(cache=True, nogil=True, error_model="numpy")

#: Small helpers (``_mv``, ``_mm``, the 9-tuple products of the mstmm kernels, the contact's hull
#: vertex test): plain compiled functions, which LLVM inlines where they are called (the
#: threshold in :mod:`.compiler`), after numba's reference count pruning. They were inlined by
#: numba itself (``inline="always"``: its IR, typed again at every call site) until session 14:
#: that made the first compile of the kernels twice as long (``tree_kinematics`` 20 s -> 3 s,
#: the contact's hull points 33 s -> 2 s) for no speed (docs/benchmarks.md). The same options as
#: :data:`_JIT`; the name marks the helpers meant to be inlined.
_INL = _JIT


@njit(**_JIT)
def cross(a, b):
    out = np.empty(3)
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]
    return out


@njit(**_JIT)
def skew(v):
    out = np.zeros((3, 3))
    out[0, 1] = -v[2]
    out[0, 2] = v[1]
    out[1, 0] = v[2]
    out[1, 2] = -v[0]
    out[2, 0] = -v[1]
    out[2, 1] = v[0]
    return out


@njit(**_JIT)
def quat_into(R, qw, qx, qy, qz):
    """Fill R (3,3) with the rotation matrix of a quaternion (normalised here)."""
    n = np.sqrt(qw * qw + qx * qx + qy * qy + qz * qz)
    w, x, y, z = qw / n, qx / n, qy / n, qz / n
    R[0, 0] = 1 - 2 * (y * y + z * z)
    R[0, 1] = 2 * (x * y - w * z)
    R[0, 2] = 2 * (x * z + w * y)
    R[1, 0] = 2 * (x * y + w * z)
    R[1, 1] = 1 - 2 * (x * x + z * z)
    R[1, 2] = 2 * (y * z - w * x)
    R[2, 0] = 2 * (x * z - w * y)
    R[2, 1] = 2 * (y * z + w * x)
    R[2, 2] = 1 - 2 * (x * x + y * y)


@njit(**_JIT)
def quat_to_matrix(qw, qx, qy, qz):
    """Rotation matrix of a quaternion (normalised here)."""
    R = np.empty((3, 3))
    quat_into(R, qw, qx, qy, qz)
    return R


@njit(**_JIT)
def rotvec(R):
    """Rotation vector (axis * angle) of a rotation matrix; see rotations.rotation_vector."""
    c = (R[0, 0] + R[1, 1] + R[2, 2] - 1.0) / 2.0
    w = np.empty(3)
    w[0] = R[2, 1] - R[1, 2]
    w[1] = R[0, 2] - R[2, 0]
    w[2] = R[1, 0] - R[0, 1]
    s = 0.5 * np.sqrt(w[0] ** 2 + w[1] ** 2 + w[2] ** 2)
    t = np.arctan2(s, c)
    if t < 1e-8:
        return 0.5 * w
    if np.pi - t > 1e-2:
        return (t / (2.0 * s)) * w
    k = 0
    for j in range(3):
        if R[j, j] > R[k, k]:
            k = j
    ax = np.empty(3)
    for j in range(3):
        ax[j] = 0.5 * (R[j, k] + R[k, j]) - (c if j == k else 0.0)
    ax /= np.sqrt(ax[0] ** 2 + ax[1] ** 2 + ax[2] ** 2)
    if ax[0] * w[0] + ax[1] * w[1] + ax[2] * w[2] < 0:
        ax = -ax
    return t * ax


@njit(**_INL)
def _mm(A, ia, B, ib, C, ic):
    """C[ic] = A[ia] @ B[ib] for stacks of 3x3 blocks."""
    for a in range(3):
        a0, a1, a2 = A[ia, a, 0], A[ia, a, 1], A[ia, a, 2]
        C[ic, a, 0] = a0 * B[ib, 0, 0] + a1 * B[ib, 1, 0] + a2 * B[ib, 2, 0]
        C[ic, a, 1] = a0 * B[ib, 0, 1] + a1 * B[ib, 1, 1] + a2 * B[ib, 2, 1]
        C[ic, a, 2] = a0 * B[ib, 0, 2] + a1 * B[ib, 1, 2] + a2 * B[ib, 2, 2]


@njit(**_INL)
def _mmt(A, ia, B, ib, C, ic):
    """C[ic] = A[ia] @ B[ib].T for stacks of 3x3 blocks."""
    for a in range(3):
        a0, a1, a2 = A[ia, a, 0], A[ia, a, 1], A[ia, a, 2]
        C[ic, a, 0] = a0 * B[ib, 0, 0] + a1 * B[ib, 0, 1] + a2 * B[ib, 0, 2]
        C[ic, a, 1] = a0 * B[ib, 1, 0] + a1 * B[ib, 1, 1] + a2 * B[ib, 1, 2]
        C[ic, a, 2] = a0 * B[ib, 2, 0] + a1 * B[ib, 2, 1] + a2 * B[ib, 2, 2]


@njit(**_INL)
def _mv(A, ia, v0, v1, v2):
    """A[ia] @ v for a stack of 3x3 blocks, as a tuple."""
    return (A[ia, 0, 0] * v0 + A[ia, 0, 1] * v1 + A[ia, 0, 2] * v2,
            A[ia, 1, 0] * v0 + A[ia, 1, 1] * v1 + A[ia, 1, 2] * v2,
            A[ia, 2, 0] * v0 + A[ia, 2, 1] * v1 + A[ia, 2, 2] * v2)


@njit(**_INL)
def _cr(a0, a1, a2, b0, b1, b2):
    return (a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0)
