"""Benchmark of the discrete-time Newton-Euler method: real-time factor and cost per step.

    /usr/bin/python3 benchmarks/bench_newton_euler.py [--quick]

Prints the machine, then

* the 24-body mechanism (the chain example, 24 links on revolute hinges with alternating axes)
  at h = 1e-5 s: body-steps per second and the real-time factor (simulated time / wall time) of
  the compiled stepping alone and of a whole ``simulate()`` with outputs every 0.01 s
  (target: real time, 2.4e6 body-steps per second);
* the crank-slider example (the engine at 3000 rpm, driven crank, gas force) at h = 1e-5 s:
  wall time per simulated second, stepping alone and whole runs with the model's output step
  (1e-4 s: 10000 result rows per simulated second, whose columns are computed in Python) and
  with 1e-3 s;
* the cost per body-step for chains of 6, 24, 96 links (the method is O(n)).

Times are the best of a few repeats, after the kernels are compiled (numba's cache). Not a
test: the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from bench_tree import machine                          # noqa: E402
from MultibodyWB.examples import build                  # noqa: E402
from MultibodyWB.solver.methods.newton_euler import scheme as NE  # noqa: E402
from MultibodyWB.solver.run.simulate import simulate        # noqa: E402

STEP = 1e-5


def stepping(model, seconds: float, repeats: int) -> float:
    """Best wall time (s) of ``seconds`` of simulated time in compiled chunks, no output."""
    ne = NE.NewtonEuler(model, STEP)
    n = int(round(seconds / STEP))
    ne.advance(10)                                     # compile / load the cache
    best = float("inf")
    for _ in range(repeats):
        ne.reset()
        t0 = time.perf_counter()
        k = 0
        while k < n:                                   # chunks as simulate() runs them
            m = min(20000, n - k)
            ne.advance(m)
            k += m
        best = min(best, time.perf_counter() - t0)
    return best


def whole_run(model, seconds: float, output_step: float, repeats: int) -> float:
    """Best wall time (s) of ``simulate(method='newton-euler')`` over ``seconds``."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        simulate(model, method="newton-euler", t_end=seconds, step=STEP, output_step=output_step)
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="shorter runs, fewer repeats")
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    repeats = 2 if args.quick else 3
    T = 0.2 if args.quick else 1.0
    print(f"machine: {machine()}")
    print(f"step h = {STEP:g} s, joints at f = {NE.JOINT_FRACTION} of the Nyquist limit "
          f"({NE.JOINT_FRACTION / (2 * STEP):g} Hz)")

    chain = build("chain", n=24)
    simulate(chain, method="newton-euler", t_end=0.001, step=STEP, output_step=0.001)  # warm up
    print(f"\n24-body mechanism (chain of 24 links, revolute hinges), {T:g} s simulated:")
    t = stepping(chain, T, repeats)
    print(f"  stepping only : {t:7.3f} s wall, {24 * T / STEP / t:9.3g} body-steps/s, "
          f"real-time factor {T / t:5.2f}")
    t = whole_run(chain, T, 0.01, repeats)
    print(f"  simulate()    : {t:7.3f} s wall (outputs every 0.01 s), "
          f"real-time factor {T / t:5.2f}")

    engine = build("crank_slider")
    Te = 0.08                                          # the model's end time: two revolutions
    simulate(engine, method="newton-euler", t_end=0.001, step=STEP, output_step=1e-4)
    print(f"\ncrank-slider (3000 rpm, driven, gas force), {Te:g} s simulated, per simulated "
          "second:")
    t = stepping(engine, Te, repeats)
    print(f"  stepping only                  : {t / Te:7.3f} s wall per simulated s "
          f"({4 * Te / STEP / t:.3g} body-steps/s)")
    for out in (1e-4, 1e-3):
        t = whole_run(engine, Te, out, repeats)
        print(f"  simulate(), outputs every {out:g} s: {t / Te:7.3f} s wall per simulated s "
              f"({round(1 / out)} rows/s)")

    print("\ncost per body-step, chains (stepping only):")
    for n in (6, 24, 96):
        Tn = (0.05 if args.quick else 0.2) * 24 / n
        t = stepping(build("chain", n=n), Tn, repeats)
        print(f"  n = {n:>3}: {t / (n * Tn / STEP) * 1e9:7.1f} ns per body-step")
    return 0


if __name__ == "__main__":
    sys.exit(main())
