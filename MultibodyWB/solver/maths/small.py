"""Compiled 3-vector, 3x3-matrix and quaternion helpers that every compiled formulation shares.

``_mv``, ``_cr``, ``_mm``, ``_mmt`` are inlined where they are called (by LLVM: :data:`_INL`)
and work on one matrix of a stack (``A[ia]``) with scalar arithmetic: no allocation. They take
the stack and an index rather than the block itself: a view ``A[i]`` inside a loop costs a
reference count increment and decrement (an atomic operation) per iteration, which is a
measurable part of the step time.
"""

from __future__ import annotations

import llvmlite.binding
import numpy as np
from numba import njit

#: LLVM's inlining threshold for the compiled code of this process (its ``-inline-threshold``
#: option; numba's own is 275 at -O3). An evaluation is a dozen kernel calls, made from the
#: fixed-step kernel at every stage: at the default threshold none is inlined, and each call
#: passes every array argument as its pointer, shape and strides (about 4.5 ns an array; a
#: stage of a closed loop passes about 190). Inlined, those loads and stores go, and LLVM keeps
#: the arrays' pointers in registers across the stage: the crank-slider's RK4 step went from
#: 15.0 to 9.9 us, its tree's from 8.1 to 4.8 (docs/benchmarks.md, session 13). Inlining does not
#: change the arithmetic (no fast-math: LLVM neither reorders nor fuses floating-point
#: operations), so every result is the same to the bit. It is set before anything here is
#: compiled: the kernels compile lazily, at their first call. A process-wide LLVM option, as
#: numba's own (``-vector-library``, set when numba is imported).
INLINE_THRESHOLD = 100000
llvmlite.binding.set_option("MultibodyWB", f"-inline-threshold={INLINE_THRESHOLD}")

_JIT = dict(cache=True, nogil=True, error_model="numpy")


def _indices_as_given():
    """Index the arrays of this package's compiled functions without numba's wraparound.

    numba lets a signed index count from the end (``a[-1]``): at every array access it compares
    the index with zero and selects ``index + dimension`` (the dimension loaded), which LLVM
    can remove only where it can prove the index non-negative: not for an index read from an
    array (a body's parent, a coordinate's offset) nor for one computed from such a value. The
    kernels never index with a negative number (a parent of -1, the ground, is tested before it
    is used), so in the functions of this package the index is used as given. Elsewhere (numba's
    own functions, other packages in the process) numba's wraparound stays. RK4 steps 6 % faster
    on average over the loops and trees measured, from none to 14 % (three builds of each
    version: docs/benchmarks.md, session 16); the arithmetic is unchanged, so every result is
    the same to the bit.

    A negative index in a kernel would now read outside its array instead of from its end:
    ``tests/test_indexing.py`` runs the warm-up's models with numba's bounds checks on, which
    raise for such an index. Patches ``numba.np.arrayobj.fix_integer_index`` (numba 0.56 and
    0.61: the same function, called by its module name); where that function is missing, nothing
    changes. A patch of the process's numba, as the inlining threshold above is an LLVM option
    of the process: installed when the solver's compiled code is imported, before it compiles.
    """
    try:
        from numba.core import types
        from numba.np import arrayobj
        original = arrayobj.fix_integer_index
    except (ImportError, AttributeError):
        return
    top = __name__.split(".")[0]
    # numba's mangled names of this package's functions; a copy of the package imported under
    # another name (benchmarks/bench_builds.py) adds its own
    prefixes = getattr(original, "multibodywb_prefixes", None)
    if prefixes is None:
        prefixes = set()

        def fix_integer_index(context, builder, idxty, idx, size):
            if idxty.signed and any(p in builder.function.name for p in prefixes):
                return context.cast(builder, idx, idxty, types.intp)
            return original(context, builder, idxty, idx, size)
        fix_integer_index.multibodywb_prefixes = prefixes
        fix_integer_index.__doc__ = original.__doc__
        arrayobj.fix_integer_index = fix_integer_index
    prefixes.add(f"_ZN{len(top)}{top}")


_indices_as_given()
#: Small helpers (``_mv``, ``_mm``, the 9-tuple products of the mstmm kernels, the contact's hull
#: vertex test): plain compiled functions, which LLVM inlines where they are called (the
#: threshold above), after numba's reference count pruning. They were inlined by numba itself
#: (``inline="always"``: its IR, typed again at every call site) until session 14: that made
#: the first compile of the kernels twice as long (``tree_kinematics`` 20 s -> 3 s, the
#: contact's hull points 33 s -> 2 s) for no speed (docs/benchmarks.md). The same options as
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
