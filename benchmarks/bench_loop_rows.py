"""Benchmark of closed loops in the mstmm method: real time, cost per step against trees, rows.

    /usr/bin/python3 benchmarks/bench_loop_rows.py [--quick] [--gravity]

Prints, with the machine and the load average:

1. the crank-slider engine (MultibodyWB.examples 'crank_slider') simulated for 1 s at its own
   settings (rk4, 10 us step, 0.1 ms output: 100,000 steps and 10,001 result rows), the whole
   ``simulate`` call timed (setup, integration and result rows; kernels compiled beforehand):
   target <= 1.0 s wall, i.e. real time or faster;
2. microseconds per RK4 step (the whole run inside compiled code, best of 25 runs taken in
   turn with the trees they are compared with) of the four-bar and the crank-slider (3
   bodies, one loop each), of the same two with their cut hinge removed (the trees of the
   same bodies) and of the seed-004 system (a tree of 3 bodies): target, a loop within 2x the
   tree of its bodies;
3. a closed chain of 164 revolute links (a track-like loop, as the tank track of seed 000):
   microseconds per RK4 step, and the cost of one result row (``LoopRecorder.rows`` over many
   rows, per row) in RK4 steps: target <= 2.

Not a test: timings depend on the machine; figures go to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from MultibodyWB.examples import build                   # noqa: E402
from MultibodyWB.examples.parts import add_link, frame_along, orientation_in   # noqa: E402
from MultibodyWB.solver.methods.mstmm import kernels as K  # noqa: E402
from MultibodyWB.solver.analysis.assembly import assembled_state  # noqa: E402
from MultibodyWB.solver.model import MultibodySystem     # noqa: E402
from MultibodyWB.solver.maths.rotations import matrix_to_bryant  # noqa: E402
from MultibodyWB.solver.methods.mstmm.run import _driver_functions, _grids  # noqa: E402
from MultibodyWB.solver.run.simulate import simulate  # noqa: E402
from MultibodyWB.solver.methods.mstmm.system import System             # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_tree import load, machine                     # noqa: E402

AXIS = np.array([0.0, 1.0, 0.0])


def ring(n: int = 164, link: float = 0.1, gravity: bool = False) -> MultibodySystem:
    """A closed chain of ``n`` revolute links in the global xz plane, hinge axes along y: a
    regular polygon whose first link is pinned to the ground at its start and whose last link
    closes the loop at the same ground pivot (the cut hinge); without gravity (it sits still)
    unless ``gravity`` (-9.81 m/s^2 along z: it swings). Planar loop closed by a spatial
    revolute: 2 of its 5 constraint directions are redundant."""
    m = MultibodySystem(f"Ring{n}", description=f"closed chain of {n} revolute links",
                        gravity=(0.0, 0.0, -9.81) if gravity else (0.0, 0.0, 0.0))
    radius = link / (2.0 * np.sin(np.pi / n))
    angles = -np.pi / 2 + 2.0 * np.pi * np.arange(n + 1) / n
    pts = [radius * np.array([np.cos(a), 0.0, np.sin(a) + 1.0]) for a in angles]
    pts[-1] = pts[0]
    g = m.set_ground()
    prev_end = None
    first_start = None
    for i in range(n):
        body, start, end = add_link(m, f"Shoe{i + 1}", pts[i], pts[i + 1], 0.02, 0.01)
        R = frame_along(pts[i + 1] - pts[i], AXIS)
        if prev_end is None:
            output = g.add_marker(pts[0], matrix_to_bryant(R), label="pivot")
            first_start = output
        else:
            prev = m.body(prev_end.body)
            prev.marker(prev_end.marker).frame.orientation = orientation_in(prev, R)
            output = prev_end
        m.add_hinge(f"J{i + 1}", "revolute", start, output)
        prev_end = end
    # the last link's end back at the ground pivot, aligned with the first link's frame
    last = m.body(prev_end.body)
    last.marker(prev_end.marker).frame.orientation = orientation_in(
        last, frame_along(pts[1] - pts[0], AXIS))
    m.add_hinge("Close", "revolute", prev_end, first_start)
    m.simulation.step = 1e-4
    m.simulation.output_step = 1e-3
    return m


def without_cuts(model):
    """The same bodies with the cut hinges left out: the tree of the loop's bodies."""
    from MultibodyWB.solver.analysis.topology import analyse
    cuts = set(analyse(model).cut_hinges)
    model.hinges[:] = [h for h in model.hinges if h.name not in cuts]
    return model


def stepper(model, h=1e-5, steps=4000):
    """A function that runs ``steps`` RK4 steps of ``model`` inside compiled code
    (kernels.rk4_run, from the same start each time) and returns the time per step (s)."""
    from MultibodyWB.solver.analysis.start import prepare
    model, _ = prepare(model, True)
    s = System(model)
    s.set_stabilisation(h)
    y0 = assembled_state(s)[0] if s.cuts else s.initial_state()
    drv, mags = _grids(s, 0, h, steps, _driver_functions(s))
    out = np.zeros((1, s.ny))
    flows = np.zeros(3 if s.does_work else 0)
    out_flows = np.zeros((1, 3))
    mon = np.empty(steps if s.cuts else 0)

    def run() -> float:
        y = y0.copy()
        t0 = time.perf_counter()
        K.rk4_run(y, 0, steps, h, drv, mags, s.tree, s.forces, s.work, out, 10 ** 9, 0, flows,
                  out_flows, mon, s.row_stack(0))
        return (time.perf_counter() - t0) / steps
    return run


def per_step(model, h=1e-5, steps=4000, repeats=5) -> float:
    """Best time per RK4 step (s), the run inside compiled code (kernels.rk4_run)."""
    run = stepper(model, h, steps)
    return min(run() for _ in range(repeats))


def best_of_interleaved(models, h=1e-5, steps=4000, rounds=25):
    """Best time per RK4 step (s) of each model, their runs taken in turn ``rounds`` times:
    a ratio of two of them is not skewed by a slow spell of the machine (on the 2-core machine
    of docs/benchmarks.md the same run's time varies by a quarter from minute to minute)."""
    runs = [stepper(m, h, steps) for m in models]
    best = [np.inf] * len(runs)
    for _ in range(rounds):
        for k, run in enumerate(runs):
            best[k] = min(best[k], run())
    return best


def row_cost(model, rows=500, repeats=3) -> float:
    """Best time per result row (s) of the mstmm loop recorder over ``rows`` rows at once."""
    from MultibodyWB.solver.methods.mstmm.loop_rows import LoopRecorder
    from MultibodyWB.solver.analysis.start import prepare
    model, _ = prepare(model, True)
    s = System(model)
    y0 = assembled_state(s)[0]
    Y = np.repeat(y0[None], rows, axis=0)
    ts = np.arange(rows) * 1e-3
    best = np.inf
    for _ in range(repeats):
        rec = LoopRecorder(s)
        t0 = time.perf_counter()
        rec.rows(ts, Y, np.zeros((rows, 3)))
        best = min(best, (time.perf_counter() - t0) / rows)
    return best


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="0.1 s of the engine, fewer repeats")
    p.add_argument("--gravity", action="store_true",
                   help="the 164-link ring with gravity (it moves; bench_setup_scale.py "
                        "--ring-rows times its rows inside simulate)")
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    print(f"machine: {machine()}")
    print(f"load average before: {load()}")
    t_end = 0.1 if args.quick else 1.0
    # 1. the engine in real time
    simulate(build("crank_slider"), t_end=2e-3)                      # compiled, warm
    walls = []
    for _ in range(1 if args.quick else 3):
        t0 = time.perf_counter()
        r = simulate(build("crank_slider"), t_end=t_end)
        walls.append(time.perf_counter() - t0)
    print(f"1. crank-slider, {t_end:g} s simulated at its settings (rk4 10 us, output 0.1 ms: "
          f"{r.meta['steps']} steps, {len(r)} rows): wall {min(walls):.3f} s best of "
          f"{len(walls)} ({min(walls) / t_end:.3f} s per simulated s; target <= 1.0)")
    # 2. loops against trees, per RK4 step
    print("2. microseconds per RK4 step (h = 10 us):")
    rounds = 8 if args.quick else 25
    for name in ("four_bar", "crank_slider"):
        loop, tree, tree3 = best_of_interleaved(
            [build(name), without_cuts(build(name)), build("seed004")], rounds=rounds)
        print(f"   {name:<13} loop {1e6 * loop:7.2f}, its tree {1e6 * tree:7.2f} "
              f"(ratio {loop / tree:4.2f}); seed004 tree of 3 bodies {1e6 * tree3:7.2f} "
              f"(ratio {loop / tree3:4.2f}); target ratio <= 2 (best of {rounds} runs of "
              f"4000 steps each, the three in turn)")
    # 3. the 164-link loop: a row against a step
    n, g = 164, args.gravity
    step = per_step(ring(n, gravity=g), h=1e-4, steps=200 if args.quick else 1000, repeats=3)
    chain = per_step(without_cuts(ring(n, gravity=g)), h=1e-4,
                     steps=200 if args.quick else 1000, repeats=3)
    row = row_cost(ring(n, gravity=g), rows=100 if args.quick else 500)
    print(f"3. closed chain of {n} revolute links{' with gravity' if g else ''}: "
          f"{1e6 * step:.0f} us per RK4 step "
          f"(open chain {1e6 * chain:.0f} us, ratio {step / chain:.2f}); one result row "
          f"{1e6 * row:.0f} us = {row / step:.2f} RK4 steps (target <= 2)")
    print(f"load average after: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
