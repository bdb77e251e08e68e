"""The settings of the compiler that the solver changes in its process, all of them, in one place.

Imported by :mod:`.small` at its top, so set before any of the solver's kernels compiles: they
compile lazily, at their first call, and every module of compiled kernels imports :mod:`.small`
(directly or through the modules it imports). Both are
process-wide: they hold for every numba function compiled in the process after this module is
imported, as numba's own LLVM options (``-vector-library``, set when numba is imported) do.
Neither changes the arithmetic (no fast-math: LLVM neither reorders nor fuses floating-point
operations), so every result is the same to the bit with or without them; they make the
compiled code faster.

- :data:`INLINE_THRESHOLD`: LLVM's ``-inline-threshold`` option (through
  ``llvmlite.binding.set_option``), so that LLVM inlines the kernels' calls to each other and the
  fixed-step kernel holds a whole evaluation in one function.
- :func:`indices_as_given`: a patch of numba (``numba.np.arrayobj.fix_integer_index``) that
  drops the negative-index wraparound in the functions of this package only.

numba's cache of a compiled function is keyed on its own source file, not on this one: after a
change here, delete the solver's ``__pycache__`` and run ``python3 -m MultibodyWB.solver warmup``.
"""

from __future__ import annotations

import llvmlite.binding
import numba  # noqa: F401  (numba sets its own LLVM options when imported; ours come after)

#: LLVM's inlining threshold for the compiled code of this process (its ``-inline-threshold``
#: option; numba's own is 275 at -O3). An evaluation is a dozen kernel calls, made from the
#: fixed-step kernel at every stage: at the default threshold none is inlined, and each call
#: passes every array argument as its pointer, shape and strides (about 4.5 ns an array; a
#: stage of a closed loop passes about 190). Inlined, those loads and stores go, and LLVM keeps
#: the arrays' pointers in registers across the stage: the crank-slider's RK4 step went from
#: 15.0 to 9.9 us, its tree's from 8.1 to 4.8 (docs/benchmarks.md, session 13). Inlining does not
#: change the arithmetic, so every result is the same to the bit. It is set before anything is
#: compiled: the kernels compile lazily, at their first call.
INLINE_THRESHOLD = 100000
llvmlite.binding.set_option("MultibodyWB", f"-inline-threshold={INLINE_THRESHOLD}")


def indices_as_given():
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
    changes. Installed when this module is imported (safe to call again), before the solver's
    compiled code compiles.
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


indices_as_given()
