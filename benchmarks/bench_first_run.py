"""Benchmark of the first run on a fresh installation: the double pendulum from the command line.

    /usr/bin/python3 benchmarks/bench_first_run.py

With an empty numba cache (a new ``NUMBA_CACHE_DIR``), three fresh processes, each timed from start
to exit (wall time):

1. ``run dp.mbs.xml`` with nothing compiled: what a first run cost before the set-up command
   compiled the kernels (the compile happens inside the run);
2. in a second empty cache, ``warmup`` (what the README's set-up command does once);
3. then ``run dp.mbs.xml``: the first run a user meets after the set-up command (target: 5 s).

Not a test: timings depend on the machine (see ``bench_tree.machine``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)


def timed(args, env):
    t0 = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "MultibodyWB.solver"] + args, cwd=ROOT, env=env,
                         capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if run.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({run.returncode}):\n{run.stderr[-2000:]}")
    return seconds


def main():
    from bench_tree import machine
    print(machine())
    work = tempfile.mkdtemp(prefix="mbwb-first-run-")
    model = os.path.join(work, "dp.mbs.xml")
    env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(work, "cold"))
    timed(["example", "double_pendulum", "-o", model], env)
    cold = timed(["run", model], env)
    env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(work, "warm"))
    warm_up = timed(["warmup"], env)
    first = timed(["run", model], env)
    again = timed(["run", model], env)
    print(f"first run, nothing compiled:            {cold:7.1f} s")
    print(f"set-up command's warm-up (empty cache):  {warm_up:7.1f} s")
    print(f"first run after the warm-up:             {first:7.1f} s   (target <= 5 s)")
    print(f"second run:                              {again:7.1f} s")


if __name__ == "__main__":
    main()
