"""What the tracked vehicle costs to simulate (issue 34's half tank): the `tracked_vehicle`
example (hull, sprocket, idler, roller, road wheels on torsion arms, the track on flat ground;
cylinder - box and box - plane contacts with friction) driven at a constant sprocket speed,
mstmm with rk4 at the step its tests use (2.5e-5 s: the energy balance closes to 1e-10).

    /usr/bin/python3 benchmarks/bench_tracked_vehicle.py [--shoes 36 80] [--sim 0.02]

For each shoe count (road wheels: 3 for up to 40 shoes, else one per 13 shoes): bodies,
contacts, the RK4 step's wall time (best of ``--repeat`` runs of ``--sim`` simulated seconds
after a warm-up run, result rows included, one per ms) and the wall time per simulated second.
Prints the machine and the load. Not a test.
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

from MultibodyWB.examples import tracked_vehicle  # noqa: E402
from MultibodyWB.solver.run.simulate import simulate  # noqa: E402

STEP = 2.5e-5


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shoes", type=int, nargs="+", default=[36, 80])
    ap.add_argument("--sim", type=float, default=0.02, help="simulated seconds a run")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args(argv)
    print(machine())
    print(f"load before: {load()}")
    print(f"{'shoes':>6} {'wheels':>6} {'bodies':>6} {'contacts':>8} {'us/step':>9} "
          f"{'s/sim s':>9}")
    for shoes in args.shoes:
        wheels = 3 if shoes <= 40 else round(shoes / 13)
        model = tracked_vehicle.build(shoes=shoes, road_wheels=wheels, speed=1.6)
        simulate(model, t_end=10 * STEP, step=STEP, output_step=10 * STEP)
        n = round(args.sim / STEP)
        best = float("inf")
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            simulate(model, t_end=n * STEP, step=STEP, output_step=1e-3)
            best = min(best, (time.perf_counter() - t0) / n)
        print(f"{shoes:>6} {wheels:>6} {len(model.bodies):>6} {len(model.contacts):>8} "
              f"{best * 1e6:>9.1f} {best / STEP:>9.1f}", flush=True)
    print(f"load after: {load()}")


if __name__ == "__main__":
    main()
