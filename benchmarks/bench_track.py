"""What a track costs to simulate today (issue 34): the `track` example (pinned shoes round a
driven sprocket and a tensioned idler, cylinder - box contacts with friction) at several shoe
counts, mstmm with rk4 at the example's step.

    /usr/bin/python3 benchmarks/bench_track.py [--shoes 20 40 82 164] [--sim 0.02] [--repeat 3]

For each count: the RK4 step's wall time (best of ``--repeat`` runs of ``--sim`` simulated
seconds after a warm-up run; result rows included, one per ms), the wall time per simulated
second at that step, and the step's parts measured the same way on copies of the model without
the contacts and without the loop (its closing pin removed). Prints the machine and the load.
Not a test: the issue's target is at most 1 s of wall time per simulated second for a 164-shoe
tank on one core.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from bench_tree import load, machine  # noqa: E402

from MultibodyWB.examples import track  # noqa: E402
from MultibodyWB.solver.run.simulate import simulate  # noqa: E402


def shape(shoes: int):
    """``(k, m)`` of a stadium of about ``shoes`` shoes: a third of them round the wheels."""
    k = max(2, round(shoes / 6))
    m = max(1, (shoes - 2 * k) // 2)
    return k, m


def per_step(model, step, sim, repeat) -> float:
    """The best wall time of one rk4 step (s) over ``repeat`` runs of ``sim`` s."""
    simulate(model, t_end=10 * step, step=step, output_step=10 * step)      # compiled, started
    best = float("inf")
    n = round(sim / step)
    for _ in range(repeat):
        t0 = time.perf_counter()
        simulate(model, t_end=n * step, step=step, output_step=1e-3)
        best = min(best, (time.perf_counter() - t0) / n)
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shoes", type=int, nargs="+", default=[20, 40, 82, 164])
    ap.add_argument("--sim", type=float, default=0.02, help="simulated seconds a run")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    print(machine())
    print(f"load before: {load()}")
    print(f"{'shoes':>6} {'step':>8} {'us/step':>9} {'s/sim s':>9} {'no contact':>11} "
          f"{'no loop':>9}")
    for shoes in args.shoes:
        k, m = shape(shoes)
        model = track.build(k=k, m=m)
        step = model.simulation.step
        full = per_step(model, step, args.sim, args.repeat)
        bare = track.build(k=k, m=m)
        bare.contacts.clear()
        tree_only = per_step(bare, step, args.sim, args.repeat)
        bare.hinges = [h for h in bare.hinges if h.name != f"Pin{2 * k + 2 * m}"]
        no_loop = per_step(bare, step, args.sim, args.repeat)
        print(f"{2 * k + 2 * m:>6} {step:>8.0e} {full * 1e6:>9.1f} {full / step:>9.1f} "
              f"{tree_only * 1e6:>11.1f} {no_loop * 1e6:>9.1f}", flush=True)
    print(f"load after: {load()}")


if __name__ == "__main__":
    main()
