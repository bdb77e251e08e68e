"""Array indexing in the solver's compiled code: used as given, without numba's wraparound of
negative indices (solver/maths/small.py), so no kernel may index with a negative number."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from numba import njit

import MultibodyWB.solver.maths.small  # noqa: F401  (installs the indexing of the package)
from MultibodyWB.solver.run import warmup

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROBE = "def probe(a, i):\n    return a[i]\n"


def _probe(module: str):
    """``a[i]`` compiled with bounds checks, as a function of ``module``."""
    namespace = {"__name__": module}
    exec(compile(PROBE, f"<{module}>", "exec"), namespace)
    return njit(boundscheck=True, cache=False)(namespace["probe"])


def test_the_package_indexes_as_given_and_other_code_as_numba_does():
    a = np.arange(5.0)
    inside = _probe("MultibodyWB.solver.maths.probe")
    outside = _probe("someone_else.probe")
    assert inside(a, 4) == 4.0 and outside(a, 4) == 4.0
    assert outside(a, -1) == 4.0                    # numba's wraparound, kept outside
    with pytest.raises(IndexError):
        inside(a, -1)                               # -1 itself: out of bounds


@pytest.mark.skipif(os.environ.get("MBWB_SUITE") == "freecad1",
                    reason="a property of the sources, compiled from scratch (5 minutes of CPU): "
                           "checked once a CI run, by the host's suite")
def test_no_kernel_indexes_with_a_negative_number(tmp_path):
    """Every run of the warm-up (every kernel: trees, loops, contacts, stops, couplers, drivers,
    rk4, euler, DOP853, Newton-Euler, constrained) compiled with numba's bounds checks, which
    raise for a negative index now that the package's is used as given (a wrapped one would
    pass). In a process of its own: its own cache, compiled from scratch (about 3 minutes)."""
    script = textwrap.dedent("""
        import sys, warnings
        sys.path.insert(0, sys.argv[1])
        warnings.simplefilter("ignore")
        from MultibodyWB.solver.run import warmup
        from MultibodyWB.solver.run.simulate import simulate
        runs = warmup._models()
        for model, settings in runs:
            simulate(model, **settings)
        print("runs", len(runs))
    """)
    env = dict(os.environ, NUMBA_BOUNDSCHECK="1", NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    done = subprocess.run([sys.executable, "-c", script, ROOT], env=env, capture_output=True,
                          text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"runs {len(warmup._models())}" in done.stdout
