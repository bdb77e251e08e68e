"""Compare the compiled step of two or more versions of the solver over several builds of each.

    /usr/bin/python3 benchmarks/bench_builds.py OLD_REV NEW_REV [--builds 3] [--rounds 20]

A revision is a git revision of this repository (``HEAD``, ``60a6738``) or ``.``: the working
tree. Why: two builds of the same sources step at speeds up to 15 % apart (the code's layout,
which numba does not reproduce from build to build: docs/benchmarks.md, session 15), so one
build of each of two versions says little about a change of 5 or 10 %. Here each version is
built ``--builds`` times: its ``MultibodyWB`` package copied under as many names (``v0b0``,
``v0b1``, ...) into a temporary folder, each copy compiled in a process of its own into a
numba cache of the folder. Then one process imports every copy and runs their RK4 steps
(``kernels.rk4_run``, 4000 steps from the same start) in turn, ``--rounds`` times, keeping
each one's best: the four-bar and the crank-slider (loops) and their trees (the cut hinge left
out), and the seed-004 tree. Prints each build's microseconds per step and each version's
mean over its builds, with the machine and the load. About 70 s of compiling per build, on 2
cores two at a time. Not a test.
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CASES = (("four_bar", True), ("four_bar", False), ("crank_slider", True),
         ("crank_slider", False), ("seed004", True))
LABELS = ("four-bar", "its tree", "crank-slider", "its tree", "seed004")


def stepper(pkg: str, name: str, loop: bool, h: float = 1e-5, steps: int = 4000):
    """A function that runs ``steps`` RK4 steps of example ``name`` (``loop`` False: its cut
    hinges left out) with the copy ``pkg`` of the package and returns the time per step (s)."""
    build = importlib.import_module(pkg + ".examples").build
    K = importlib.import_module(pkg + ".solver.methods.mstmm.kernels")
    prepare = importlib.import_module(pkg + ".solver.analysis.start").prepare
    assembled = importlib.import_module(pkg + ".solver.analysis.assembly").assembled_state
    System = importlib.import_module(pkg + ".solver.methods.mstmm.system").System
    try:                                # the mstmm method's run (issue 36)
        sim = importlib.import_module(pkg + ".solver.methods.mstmm.run")
    except ImportError:                 # before: in run/simulate.py
        sim = importlib.import_module(pkg + ".solver.run.simulate")
    analyse = importlib.import_module(pkg + ".solver.analysis.topology").analyse
    model = build(name)
    if not loop:
        cuts = set(analyse(model).cut_hinges)
        model.hinges[:] = [hg for hg in model.hinges if hg.name not in cuts]
    model, _ = prepare(model, True)
    s = System(model)
    s.set_stabilisation(h)
    y0 = assembled(s)[0] if s.cuts else s.initial_state()
    drv, mags = sim._grids(s, 0, h, steps, sim._driver_functions(s))
    out, out_flows = np.zeros((1, s.ny)), np.zeros((1, 3))
    flows = np.zeros(3 if s.does_work else 0)
    monitor = np.empty(steps if s.cuts else 0)

    def run() -> float:
        y = y0.copy()
        t0 = time.perf_counter()
        K.rk4_run(y, 0, steps, h, drv, mags, s.tree, s.forces, s.work, out, 10 ** 9, 0, flows,
                  out_flows, monitor, s.row_stack(0))
        return (time.perf_counter() - t0) / steps
    return run


def export(rev: str, dest: str) -> None:
    """The ``MultibodyWB`` package of revision ``rev`` (``.``: the working tree) as ``dest``."""
    if rev == ".":
        shutil.copytree(os.path.join(ROOT, "MultibodyWB"), dest,
                        ignore=shutil.ignore_patterns("__pycache__"))
        return
    tmp = dest + ".tmp"
    os.makedirs(tmp)
    archive = subprocess.run(["git", "-C", ROOT, "archive", rev, "MultibodyWB"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
    shutil.move(os.path.join(tmp, "MultibodyWB"), dest)
    shutil.rmtree(tmp)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("revs", nargs="+", help="git revisions, '.' for the working tree")
    p.add_argument("--builds", type=int, default=3, help="builds of each revision (3)")
    p.add_argument("--rounds", type=int, default=20, help="runs of each, taken in turn (20)")
    p.add_argument("--keep", help="build into this folder and keep it (default: a temporary one)")
    p.add_argument("--_compile", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    if args._compile:                                   # one copy, in its own process
        for case in (("four_bar", True), ("crank_slider", False)):
            stepper(args._compile, *case)()
        return 0
    folder = args.keep or tempfile.mkdtemp(prefix="mbwb-builds-")
    os.makedirs(folder, exist_ok=True)
    # numba reads its cache folder when it is imported: before anything imports it here
    os.environ["NUMBA_CACHE_DIR"] = os.path.join(folder, "numba")
    env = dict(os.environ, PYTHONPATH=folder + os.pathsep + os.environ.get("PYTHONPATH", ""))
    sys.path.insert(0, HERE)
    from bench_tree import load, machine
    copies = {rev: [f"v{i}b{b}" for b in range(args.builds)] for i, rev in enumerate(args.revs)}
    t0 = time.perf_counter()
    pending = []
    for names in copies.values():
        for name in names:
            if not os.path.isdir(os.path.join(folder, name)):
                export(next(r for r, n in copies.items() if name in n), os.path.join(folder, name))
            pending.append(name)
    running = []
    while pending or running:                           # two compiles at a time
        while pending and len(running) < 2:
            running.append(subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), ".", "--_compile", pending.pop(0)],
                env=env))
        running[0].wait()
        if running[0].returncode:
            raise SystemExit(f"a build failed (exit {running[0].returncode})")
        running.pop(0)
    print(f"machine: {machine()}")
    print(f"built {sum(map(len, copies.values()))} copies in {time.perf_counter() - t0:.0f} s "
          f"({folder}); load average before the runs: {load()}")
    sys.path.insert(0, folder)
    names = [n for ns in copies.values() for n in ns]
    runs = {(n, c): stepper(n, *c) for n in names for c in CASES}
    best = dict.fromkeys(runs, np.inf)
    for _ in range(args.rounds):
        for key, run in runs.items():
            best[key] = min(best[key], run())
    head = " ".join(f"{label:>12}" for label in LABELS)
    print(f"microseconds per RK4 step (h = 10 us), best of {args.rounds} runs of 4000 steps, "
          f"every build's runs in turn")
    print(f"{'build':<22}{head}   loop/tree: four-bar crank-slider; four-bar/seed004")
    for rev, ns in copies.items():
        rows = np.array([[1e6 * best[(n, c)] for c in CASES] for n in ns])
        for n, row in zip(ns, rows):
            print(f"{rev[:12] + ' ' + n:<22}" + " ".join(f"{v:12.2f}" for v in row)
                  + f"   {row[0] / row[1]:.2f} {row[2] / row[3]:.2f}; {row[0] / row[4]:.2f}")
        mean = rows.mean(axis=0)
        print(f"{rev[:12] + ' mean':<22}" + " ".join(f"{v:12.2f}" for v in mean)
              + f"   {mean[0] / mean[1]:.2f} {mean[2] / mean[3]:.2f}; {mean[0] / mean[4]:.2f}")
    print(f"load average after: {load()}")
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
