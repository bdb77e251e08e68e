"""Benchmark of set-up at scale (issue 34): building and preparing a model against its size.

    /usr/bin/python3 benchmarks/bench_setup_scale.py [--quick] [--chains N ...] [--rings N ...]
                                                     [--profile KIND N] [--ring-rows [N]]

Prints, with the machine and the load average, for the chain example (MultibodyWB.examples
'chain': n revolute links, a tree) of 1000, 2000, 5000 and 10,000 bodies and the closed ring of
benchmarks/bench_loop_rows.py (n revolute links, one loop) of 41, 82, 164 and 328 links, the wall
time of each stage of what ``simulate`` does before its first step:

- ``build``: the model made with ``MultibodySystem.add_body`` / ``add_hinge`` (the example's
  builder);
- ``check``: ``model.check()`` (the validation);
- ``prepare``: ``analysis.start.prepare`` (resolving drivers, springs and coaxial markers; the
  topology; the start check; closing the loops);
- ``System``: the mstmm arrays (``methods.mstmm.system.System``, which checks and analyses the
  model once more);
- ``start``: the recorder and the start state (a loop's: ``LoopRecorder``, ``assembled_state``,
  the rank at the start; a tree's: ``Recorder``, ``initial_state``);
- ``simulate``: the whole ``simulate`` call of one RK4 step with one output row after the start
  (a fresh model; kernels compiled beforehand), i.e. the set-up as a user pays it.

Each stage's figure is its CPU time (``time.process_time``: on a shared, loaded machine the
wall time varies twice as much), the best of a few repeats; the ratio per doubling of the size
is printed beside it (linear set-up: 2; n^2: 4); the last column is the wall time of build and
simulate. ``--profile chain 10000`` prints cProfile's list of the
most expensive functions of build and prepare instead. ``--ring-rows`` (default 164 links)
measures, with gravity on (the ring then moves), the cost of a result row against an RK4 step
as ``simulate`` pays them: the run's wall time with one row per step against the same run with
one row at the end, and the recorder's share (``LoopRecorder.rows`` over the rows given the
kernel's evaluations) against the steps' (``kernels.rk4_run``).

Not a test: timings depend on the machine; figures go to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from MultibodyWB.examples import build                                  # noqa: E402
from MultibodyWB.solver.analysis.start import prepare                   # noqa: E402
from MultibodyWB.solver.methods.mstmm.system import System              # noqa: E402
from MultibodyWB.solver.run.simulate import simulate                    # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_loop_rows import ring                                        # noqa: E402
from bench_tree import load, machine                                    # noqa: E402

CHAINS = (1000, 2000, 5000, 10000)
RINGS = (41, 82, 164, 328)
STAGES = ("build", "check", "prepare", "System", "start", "simulate")


def builder(kind: str, n: int, gravity: bool = False):
    """A function making the model: the chain example of ``n`` links or the ring of ``n``
    links (with gravity -9.81 m/s^2 along z when ``gravity``)."""
    if kind == "chain":
        return lambda: build("chain", n=n)

    return lambda: ring(n, gravity=gravity)


def start_stage(system):
    """What ``simulate`` (mstmm) does between ``System`` and the first step."""
    if system.cuts:
        from MultibodyWB.solver.analysis.assembly import assembled_state
        from MultibodyWB.solver.methods.mstmm.loop_rows import LoopRecorder
        LoopRecorder(system)
        y0, _ = assembled_state(system)
        system.row_instants([0.0], y0[None])
    else:
        from MultibodyWB.solver.results.recorder import Recorder
        Recorder(system)
        system.initial_state()


class _Clock:
    """Wall and CPU time (s) of this process since it was made: on a shared machine the CPU
    time (``time.process_time``) is what the work cost, the wall time what it took."""

    def __init__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def __call__(self) -> tuple:
        return time.perf_counter() - self.wall, time.process_time() - self.cpu


def stages(make) -> dict:
    """(wall, CPU) time (s) of each stage (:data:`STAGES`) for one model."""
    out = {}
    gc.collect()
    clock = _Clock()
    model = make()
    out["build"] = clock()
    clock = _Clock()
    model.check()
    out["check"] = clock()
    clock = _Clock()
    resolved, _ = prepare(model, True)
    out["prepare"] = clock()
    clock = _Clock()
    system = System(resolved)
    out["System"] = clock()
    clock = _Clock()
    start_stage(system)
    out["start"] = clock()
    model = make()
    h = model.simulation.step
    gc.collect()
    clock = _Clock()
    simulate(model, integrator="rk4", t_end=h, step=h, output_step=h, accept_corrections=True)
    out["simulate"] = clock()
    return out


def table(kind: str, sizes, repeats: int) -> None:
    """Print the stages' best CPU times for each size and the ratio per doubling, and the
    wall time of build + simulate."""
    print(f"{kind}: CPU time (s) per stage, best of {repeats}; in brackets the ratio to the "
          "size before, per doubling of the size; last, the wall time of build + simulate")
    print(f"  {'n':>6}  " + "  ".join(f"{s:>17}" for s in STAGES)
          + f"  {'build+simulate':>17}  {'wall':>17}")
    before = None
    for n in sizes:
        make = builder(kind, n)
        best = None
        for _ in range(repeats):
            t = stages(make)
            t["total"] = tuple(a + b for a, b in zip(t["build"], t["simulate"]))
            best = t if best is None else {k: min(best[k], t[k], key=lambda x: x[1])
                                           for k in t}
        cells = []
        for k in STAGES + ("total", "wall"):
            value = best["total"][0] if k == "wall" else best[k][1]
            ratio = ""
            if before is not None:
                last = before[1]["total"][0] if k == "wall" else before[1][k][1]
                if last > 0:
                    ratio = f"({(value / last) ** (1.0 / np.log2(n / before[0])):4.2f})"
            cells.append(f"{value:9.4f} {ratio:>7}")
        print(f"  {n:>6}  " + "  ".join(cells))
        before = (n, best)


def profile(kind: str, n: int, top: int = 30) -> None:
    """cProfile of build and the whole ``simulate`` set-up (one step) of one model."""
    make = builder(kind, n)
    stages(builder(kind, 10))                       # imports and first calls out of the way
    pr = cProfile.Profile()
    pr.enable()
    model = make()
    h = model.simulation.step
    simulate(model, integrator="rk4", t_end=h, step=h, output_step=h, accept_corrections=True)
    pr.disable()
    pstats.Stats(pr).sort_stats("tottime").print_stats(top)


def ring_rows(n: int, steps: int, repeats: int) -> None:
    """The cost of a result row against an RK4 step, the ring of ``n`` links with gravity."""
    from MultibodyWB.solver.analysis.assembly import assembled_state
    from MultibodyWB.solver.methods.mstmm.loop_rows import LoopRecorder
    from MultibodyWB.solver.methods.mstmm import kernels as K
    from MultibodyWB.solver.methods.mstmm.run import _driver_functions, _grids
    make = builder("ring", n, gravity=True)
    h = make().simulation.step
    t_end = steps * h
    simulate(make(), integrator="rk4", t_end=2 * h, step=h, output_step=h)   # warm
    # 1. the whole run: one row per step, against one row at the end
    every, last = np.inf, np.inf
    for _ in range(repeats):
        for out_step, keep in ((h, "every"), (t_end, "last")):
            model = make()
            gc.collect()
            t0 = time.perf_counter()
            r = simulate(model, integrator="rk4", t_end=t_end, step=h, output_step=out_step)
            wall = time.perf_counter() - t0
            if keep == "every":
                every, rows = min(every, wall), len(r)
            else:
                last = min(last, wall)
    # 2. the parts: the steps inside compiled code, and the recorder's rows given the
    #    kernel's evaluations (as _run_fixed gives them)
    model, _ = prepare(make(), True)
    s = System(model)
    s.set_stabilisation(h)
    y0 = assembled_state(s)[0]
    drv, mags = _grids(s, 0, h, steps, _driver_functions(s))
    flows = np.zeros(3 if s.does_work else 0)
    out = np.empty((steps + 1, s.ny))
    out_flows = np.zeros((steps + 1, 3))
    mon = np.empty(steps)
    B = s.row_stack(steps + 1)
    step_best, row_best, alone_best = np.inf, np.inf, np.inf
    for _ in range(repeats):
        y = y0.copy()
        t0 = time.perf_counter()
        K.rk4_run(y, 0, steps, h, drv, mags, s.tree, s.forces, s.work, out, 10 ** 9, 0, flows,
                  out_flows, mon, s.row_stack(0))
        step_best = min(step_best, (time.perf_counter() - t0) / steps)
        y = y0.copy()
        written = K.rk4_run(y, 0, steps, h, drv, mags, s.tree, s.forces, s.work, out, 1, 0,
                            flows, out_flows, mon, B)
        times = (1 + np.arange(written)) * h
        inst = s.stacked(B, times, copy=True)
        rec = LoopRecorder(s)
        t0 = time.perf_counter()
        rec.rows(times, out[:written], out_flows[:written], instants=inst)
        row_best = min(row_best, (time.perf_counter() - t0) / written)
        rec = LoopRecorder(s)
        t0 = time.perf_counter()
        rec.rows(times, out[:written], out_flows[:written])
        alone_best = min(alone_best, (time.perf_counter() - t0) / written)
    per_row = (every - last) / max(rows - 2, 1)
    print(f"ring of {n} links with gravity, RK4 h = {h:g} s, {steps} steps:")
    print(f"  simulate, one row per step ({rows} rows): {every:.3f} s; one row at the end: "
          f"{last:.3f} s; per row {1e6 * per_row:.0f} us")
    print(f"  RK4 step (rk4_run, compiled, no rows): {1e6 * step_best:.0f} us; recorder row "
          f"(LoopRecorder.rows, the kernel's evaluations given): {1e6 * row_best:.0f} us")
    print(f"  recorder row evaluating the instants itself (as bench_loop_rows.py's row_cost): "
          f"{1e6 * alone_best:.0f} us")
    print(f"  a result row = {per_row / step_best:.2f} RK4 steps in simulate, "
          f"{row_best / step_best:.2f} in the recorder given the evaluations, "
          f"{alone_best / step_best:.2f} evaluating them (target <= 2)")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="smaller sizes, one repeat")
    p.add_argument("--chains", type=int, nargs="*", default=None)
    p.add_argument("--rings", type=int, nargs="*", default=None)
    p.add_argument("--repeats", type=int, default=None)
    p.add_argument("--profile", nargs=2, metavar=("KIND", "N"))
    p.add_argument("--ring-rows", type=int, nargs="?", const=164, default=None,
                   help="only the row-against-step figures of a ring (default 164 links)")
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    print(f"machine: {machine()}")
    print(f"load average before: {load()}")
    stages(builder("chain", 10))                 # imports, compiled kernels loaded
    stages(builder("ring", 12))
    if args.profile:
        profile(args.profile[0], int(args.profile[1]))
    elif args.ring_rows:
        ring_rows(args.ring_rows, 200 if args.quick else 1000, 1 if args.quick else 3)
    else:
        repeats = args.repeats or (1 if args.quick else 3)
        chains = args.chains if args.chains is not None else (
            CHAINS[:2] if args.quick else CHAINS)
        rings = args.rings if args.rings is not None else (RINGS[:3] if args.quick else RINGS)
        if chains:
            table("chain", chains, repeats)
        if rings:
            table("ring", rings, repeats)
    print(f"load average after: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
