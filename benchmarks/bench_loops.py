"""Benchmark of the closed-loop solvers: the crank-slider engine with each method.

    /usr/bin/python3 benchmarks/bench_loops.py [--quick]

Prints the wall time per simulated second of the crank-slider (MultibodyWB.examples
'crank_slider': driven at 3000 rpm, gas force) for each method (mstmm, constrained,
newton-euler) at its step, and the largest bearing-force difference to the mstmm run. Figures go
to docs/benchmarks.md with the machine they came from. Not a test.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from MultibodyWB.examples import build                 # noqa: E402
from MultibodyWB.solver.model import ModelError        # noqa: E402
from MultibodyWB.solver.run.simulate import simulate       # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_tree import machine                         # noqa: E402

#: method -> (integrator, step s)
RUNS = {"mstmm": ("rk4", 1e-5), "constrained": ("rk4", 1e-5), "newton-euler": ("rk4", 1e-6)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a shorter run (0.01 s)")
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    t_end = 0.01 if args.quick else 0.04
    print(f"machine: {machine()}")
    print(f"crank-slider at 3000 rpm with gas force, {t_end} s simulated:")
    reference = None
    for method, (integrator, step) in RUNS.items():
        model = build("crank_slider")
        model.simulation.output_step = 1e-4
        try:
            simulate(model, method=method, integrator=integrator, t_end=2 * step, step=step,
                     output_step=2 * step)                       # compile, warm up
            t0 = time.perf_counter()
            r = simulate(model, method=method, integrator=integrator, t_end=t_end, step=step)
            wall = time.perf_counter() - t0
        except (ModelError, NotImplementedError) as exc:
            print(f"  {method:<13} not available: {str(exc).splitlines()[-1].strip()}")
            continue
        F = np.hypot(r.column("MainBearing.Fx"), r.column("MainBearing.Fz"))
        line = (f"  {method:<13} step {step:.0e} s: {wall / t_end:9.2f} s wall per simulated s, "
                f"peak bearing force {F.max() / 1e3:7.2f} kN")
        if reference is None:
            reference = F
        else:
            line += f", max difference to mstmm {np.abs(F - reference).max():.3g} N"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
