"""What the solver's warm-up spends its time on: each of its runs timed, in an empty numba cache.

    /usr/bin/python3 benchmarks/bench_warmup_steps.py

Runs the warm-up's tiny models (``MultibodyWB.solver.run.warmup._models``) one after the other in this
process, with ``NUMBA_CACHE_DIR`` set to a new temporary folder (so every kernel is compiled), and
prints the wall and CPU time of each, labelled with its stage and in the warm-up's order, and
each stage's total: the first run compiles whatever it reaches, the later ones only what is new
to them. The Simulate panel waits for the stage its run needs (``MultibodyWB/gui/warmup.py``), so
this says how long that wait is for each kind of run.

Not a test: timings depend on the machine and its load (printed).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)


def main():
    os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="mbwb-warmup-steps-")
    from bench_tree import load, machine
    print(f"machine: {machine()}; load average at the start: {load()}")
    t0, c0 = time.perf_counter(), time.process_time()
    from MultibodyWB.solver.run.simulate import simulate
    from MultibodyWB.solver.run.warmup import _models, _stage_of_run, stage_order
    order = stage_order()
    runs = sorted(_models(), key=lambda run: order.index(_stage_of_run(*run)))  # as warm_up
    stages = {}
    print(f"{'import and models':42s} wall {time.perf_counter() - t0:6.1f} s  "
          f"CPU {time.process_time() - c0:6.1f} s")
    for model, settings in runs:
        t, c = time.perf_counter(), time.process_time()
        simulate(model, **settings)
        stage = _stage_of_run(model, settings)
        what = (f"[{stage}] {model.name}, {settings.get('method', 'mstmm')}, "
                f"{settings.get('integrator', 'rk4')}")
        wall, cpu = time.perf_counter() - t, time.process_time() - c
        totals = stages.setdefault(stage, [0.0, 0.0])
        totals[0] += wall
        totals[1] += cpu
        print(f"{what:56s} wall {wall:6.1f} s  CPU {cpu:6.1f} s  (load {load()})", flush=True)
    for stage, (wall, cpu) in stages.items():
        print(f"{'stage ' + stage:56s} wall {wall:6.1f} s  CPU {cpu:6.1f} s")
    print(f"{'total':42s} wall {time.perf_counter() - t0:6.1f} s  CPU "
          f"{time.process_time() - c0:6.1f} s")


if __name__ == "__main__":
    main()
