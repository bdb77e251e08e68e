"""What the implicit TR-BDF2 (methods/mstmm/implicit.py, issue 35 item 2) costs and gains.

    /usr/bin/python3 benchmarks/bench_implicit.py [--skip-vehicle] [--skip-governor]

1. Per-evaluation cost against rk4's: the double pendulum for 2 s with ``trbdf2`` at 1e-3 s
   (wall time over every evaluation: stages, Jacobians, power) against rk4 at 1e-3 s.
2. The stiff slider (tests/test_implicit.py's box sliding with friction on a 30 degree
   incline, contact stiffness 1e7): the largest step rk4 and euler survive (bisected), and
   trbdf2 at 5e-4 s: steps/s, wall time, error of x and vx against rk4 at 2e-6 s, the energy
   balance's residual.
3. The tracked_vehicle example (36 shoes, sprocket at 1.6 rad/s, 0.1 s) with rk4 at 2.5e-5 s
   (today's step) against trbdf2 at 1e-4 and 2.5e-4 s: wall time, steps/s, the hull's x and
   the energy balance.
4. The flyball governor (examples/flyball_governor.py, when it exists) with trbdf2 at 5e-4 s
   against rk4 at 1e-5 s (10 s).

Prints the machine and the load. Not a test.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))

import numpy as np  # noqa: E402

from bench_tree import load, machine  # noqa: E402

from MultibodyWB.examples import build  # noqa: E402
from MultibodyWB.solver.methods.runtime import RunError  # noqa: E402
from MultibodyWB.solver.run.simulate import simulate  # noqa: E402


def timed(model, **kw):
    t0 = time.perf_counter()
    r = simulate(model, **kw)
    return r, time.perf_counter() - t0


def per_evaluation():
    dp = build("double_pendulum")
    kw = dict(t_end=2.0, step=1e-3, output_step=0.01)
    simulate(dp, integrator="rk4", **kw)
    simulate(dp, integrator="trbdf2", **kw)
    r4, w4 = min((timed(dp, integrator="rk4", **kw) for _ in range(3)), key=lambda x: x[1])
    ri, wi = min((timed(dp, integrator="trbdf2", **kw) for _ in range(3)), key=lambda x: x[1])
    e4 = r4.meta["evaluations"]
    ei = ri.meta["evaluations"] + ri.meta.get("power_evaluations", 0)
    print(f"double pendulum 2 s at 1e-3 s: rk4 {w4 * 1e3:.1f} ms, {e4} evaluations, "
          f"{w4 / e4 * 1e6:.2f} us each; trbdf2 {wi * 1e3:.1f} ms, {ei} evaluations "
          f"({ri.meta['jacobians']} Jacobians, {ri.meta['factorisations']} LU), "
          f"{wi / ei * 1e6:.2f} us each: {wi / ei / (w4 / e4):.2f}x rk4's")


def _survives(make, integrator, step, t_end):
    try:
        simulate(make(), integrator=integrator, t_end=t_end, step=step, output_step=t_end / 10)
        return True
    except RunError:
        return False


def largest_step(make, integrator, t_end, lo, hi):
    """Bisect (in log) the largest step of ``integrator`` that does not blow up."""
    for _ in range(8):
        mid = math.sqrt(lo * hi)
        if _survives(make, integrator, mid, t_end):
            lo = mid
        else:
            hi = mid
    return lo


def slider():
    from test_implicit import box_on_incline
    t_end = 0.3
    for integrator in ("rk4", "euler"):
        h = largest_step(box_on_incline, integrator, t_end, 1e-6, 1e-3)
        print(f"stiff slider: {integrator} survives 0.3 s up to a step of about {h:.3g} s")
    ref, wr = timed(box_on_incline(), integrator="rk4", t_end=t_end, step=2e-6,
                    output_step=0.01)
    print(f"  reference rk4 at 2e-6 s: {wr:.2f} s")
    for step in (2.5e-4, 5e-4, 1e-3):
        simulate(box_on_incline(), integrator="trbdf2", t_end=0.01, step=step, output_step=0.01)
        r, w = timed(box_on_incline(), integrator="trbdf2", t_end=t_end, step=step,
                     output_step=0.01)
        ex = np.abs(r["Block.x"] - ref["Block.x"]).max() / np.abs(ref["Block.x"]).max()
        ev = np.abs(r["Block.vx"] - ref["Block.vx"]).max() / np.abs(ref["Block.vx"]).max()
        b = r.energy_balance()
        print(f"  trbdf2 at {step:g} s: {w:.3f} s, {r.meta['steps'] / w:.0f} steps/s, "
              f"{r.meta['evaluations']} evaluations, {r.meta['jacobians']} Jacobians, "
              f"x error {ex:.2e}, vx error {ev:.2e} (relative), energy residual "
              f"{b['relative']:.2e} of the scale")


def vehicle():
    from MultibodyWB.examples import tracked_vehicle
    t_end = 0.1

    def model():
        return tracked_vehicle.build(shoes=36, road_wheels=3, speed=1.6)

    simulate(model(), integrator="trbdf2", t_end=1e-3, step=2.5e-4, output_step=1e-3)
    ref, wr = timed(model(), integrator="rk4", t_end=t_end, step=2.5e-5, output_step=1e-3)
    b = ref.energy_balance()
    print(f"tracked vehicle (36 shoes, {ref.meta['ny']} states) {t_end} s: rk4 at 2.5e-5 s "
          f"{wr:.2f} s, energy residual {b['relative']:.2e}")
    for step in (1e-4, 2.5e-4):
        try:
            r, w = timed(model(), integrator="trbdf2", t_end=t_end, step=step, output_step=1e-3)
        except RunError as exc:
            print(f"  trbdf2 at {step:g} s: RunError {exc}")
            continue
        b = r.energy_balance()
        dx = np.abs(r["Hull.x"] - ref["Hull.x"]).max() if "Hull.x" in r.names else math.nan
        print(f"  trbdf2 at {step:g} s: {w:.2f} s ({wr / w:.2f}x faster), "
              f"{r.meta['steps'] / w:.0f} steps/s, {r.meta['evaluations']} evaluations, "
              f"{r.meta['jacobians']} Jacobians, {r.meta['newton_failures']} Newton failures, "
              f"hull x differs by {dx:.2e} m, energy residual {b['relative']:.2e}")


def governor():
    try:
        from MultibodyWB.examples import flyball_governor
    except ImportError:
        print("flyball governor: no example yet")
        return
    m = flyball_governor.build()
    t_end = float(m.simulation.end_time)
    ref, wr = timed(flyball_governor.build(), integrator="rk4", t_end=t_end, step=1e-5,
                    output_step=0.01)
    simulate(flyball_governor.build(), integrator="trbdf2", t_end=0.01, step=5e-4,
             output_step=0.01)
    r, w = timed(flyball_governor.build(), integrator="trbdf2", t_end=t_end, step=5e-4,
                 output_step=0.01)
    err = np.abs(r.states - ref.states).max(axis=0)
    print(f"flyball governor {t_end} s: rk4 at 1e-5 s {wr:.2f} s; trbdf2 at 5e-4 s {w:.3f} s, "
          f"largest state difference {err.max():.2e}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-vehicle", action="store_true")
    ap.add_argument("--skip-governor", action="store_true")
    ap.add_argument("--skip-slider", action="store_true")
    args = ap.parse_args(argv)
    print(machine())
    print(f"load before: {load()}")
    per_evaluation()
    if not args.skip_slider:
        slider()
    if not args.skip_vehicle:
        vehicle()
    if not args.skip_governor:
        governor()
    print(f"load after: {load()}")


if __name__ == "__main__":
    main()
