"""Benchmark of design studies (issue 15): overhead per variant, parallel efficiency, a 1,000-run
sweep.

    /usr/bin/python3 benchmarks/bench_study.py [--quick]

Prints, with the machine and the load average:

1. the overhead per variant beyond the simulation itself: a grid of quarter-car variants (1 s
   simulated each) run serially in this process and on Dask with one worker process; overhead =
   (the study's wall time - the workers' start - the variants' own simulation wall times) / the
   number of variants (target <= 50 ms), and the part of it spent in the worker around the run
   (writing the parameters into a copy of the model, the objectives);
2. the parallel efficiency: the same variants on a LocalCluster of one worker and of one worker
   per core: efficiency = T(1) / (n T(n)), the workers' start left out (target >= 80 % on this
   2-core machine);
3. the wall time of a 1,000-variant grid sweep (40 x 25) of the quarter car (2.5 s simulated
   each) on the LocalCluster, the workers' start included.

Not a test: timings depend on the machine; figures go to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from MultibodyWB.examples import quarter_car as qc                     # noqa: E402
from MultibodyWB.solver.study import Parameter, Study, run_study       # noqa: E402
from MultibodyWB.solver.study.executors import DaskExecutor, SerialExecutor   # noqa: E402


def machine() -> str:
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import dask
    import numba
    return (f"{cpu}, {len(os.sched_getaffinity(0))} cores; Python {platform.python_version()}, "
            f"numpy {np.__version__}, numba {numba.__version__}, dask {dask.__version__}")


def study(levels, end_time=1.0):
    s = Study([Parameter("Suspension.Stiffness", 1e4, 6e4, levels[0]),
               Parameter("Suspension.Damping", 5e2, 6e3, levels[1])],
              ["rms(Hull.az)", "max(abs(Suspension.z))"],
              [f"max(abs(Suspension.z)) <= {qc.TRAVEL * 1000:g} mm"],
              settings=dict(t_end=end_time))
    return s


def run(executor, levels, end_time=1.0):
    t = run_study(qc.build(), study(levels, end_time), executor=executor)
    sims = sum(r.wall for r in t.rows)
    inside = sum(r.total - r.wall for r in t.rows)
    return t, sims, inside


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller studies")
    args = ap.parse_args()
    print(f"machine: {machine()}")
    print(f"load average at the start: {os.getloadavg()}")
    levels = (6, 5) if args.quick else (10, 8)
    n = levels[0] * levels[1]

    print(f"\n1. overhead per variant ({n} quarter-car variants, 1 s simulated each)")
    for name, make in (("serial, this process", SerialExecutor),
                       ("Dask, 1 worker process", lambda: DaskExecutor(workers=1))):
        ex = make()
        try:
            table, sims, inside = run(ex, levels)
        finally:
            ex.close()
        over = (table.wall - table.worker_start - sims) / n
        print(f"   {name:<24} wall {table.wall:7.2f} s, workers' start {table.worker_start:5.2f} s, "
              f"simulations {sims:6.2f} s ({1e3 * sims / n:5.1f} ms each): overhead "
              f"{1e3 * over:5.1f} ms per variant (in the worker around the run "
              f"{1e3 * inside / n:4.1f} ms)   target <= 50 ms")

    print(f"\n2. parallel efficiency ({n} variants, 1 s simulated each, LocalCluster)")
    cores = len(os.sched_getaffinity(0))
    times = {}
    for w in (1, cores):
        ex = DaskExecutor(workers=w)
        try:
            table, sims, _ = run(ex, levels)
        finally:
            ex.close()
        times[w] = table.wall - table.worker_start
        print(f"   {w} worker{'s' if w > 1 else ' '}: {times[w]:6.2f} s (workers' start "
              f"{table.worker_start:.2f} s left out), {n / times[w]:6.1f} variants/s")
    eff = times[1] / (cores * times[cores])
    print(f"   efficiency T(1) / ({cores} T({cores})) = {100 * eff:.0f} %   target >= 80 %")

    big = (20, 10) if args.quick else (40, 25)
    nb = big[0] * big[1]
    print(f"\n3. a {nb}-variant grid sweep ({big[0]} x {big[1]}), {qc.END_TIME} s simulated each, "
          f"LocalCluster of {cores} workers")
    ex = DaskExecutor()
    t0 = time.perf_counter()
    try:
        table, sims, _ = run(ex, big, qc.END_TIME)
    finally:
        ex.close()
    wall = time.perf_counter() - t0
    ok = sum(1 for r in table.rows if r.status == "ok")
    print(f"   wall {wall:.1f} s with the cluster's start and close ({table.worker_start:.2f} s to "
          f"ready workers), {ok} of {nb} ok, simulations {sims:.1f} s of CPU in all, "
          f"{nb / wall:.1f} variants/s; best {table.best.objectives[0]:.4g} m/s^2 at "
          f"k = {table.best.values[0]:.4g} N/m, c = {table.best.values[1]:.4g} N s/m")
    print(f"\n4. Cancel: variants of 2000 s simulated each (double pendulum) on {cores} workers, "
          "Cancel 2 s after the start")
    from MultibodyWB.examples import build
    dp = build("double_pendulum")
    dp.simulation.end_time = 2000.0
    dp.simulation.output_step = 0.1
    for attempt in range(3):
        ex = DaskExecutor()
        try:
            ex.start(dp, {})
            mark = {}

            def cancel():
                if time.perf_counter() - mark["t0"] > 2.0:
                    mark.setdefault("t1", time.perf_counter())
                    return True
                return False
            mark["t0"] = time.perf_counter()
            t = run_study(dp, Study([Parameter("Upper.Mass", 0.5, 2.0, 6)],
                                    ["rms(Shoulder.rz)"]), executor=ex, cancel=cancel)
            after = time.perf_counter() - mark["t1"]
            idle = ex.idle_after() + after
        finally:
            ex.close()
        print(f"   run {attempt + 1}: the study returned {after:.2f} s after Cancel, every "
              f"worker free for a new task {idle:.2f} s after it; "
              f"{sum(r.status == 'cancelled' for r in t.rows)} of {len(t.rows)} variants "
              "cancelled   target <= 1 s")
    print(f"\nload average at the end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
