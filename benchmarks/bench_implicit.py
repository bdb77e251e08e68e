"""What the implicit TR-BDF2 (methods/mstmm/implicit.py, issue 35 item 2) costs and gains.

    /usr/bin/python3 benchmarks/bench_implicit.py [--skip-vehicle] [--skip-governor]

1. Per-evaluation cost against rk4's: the double pendulum for 2 s with ``trbdf2`` at 1e-3 s
   (wall time over every evaluation: stages, Jacobians, power) against rk4 at 1e-3 s.
2. Contact with friction (tests/test_implicit.py's box sliding on a 30 degree incline and
   ball braked to rolling, held by stiction): rk4's and euler's energy residual over a range
   of steps (where they open past 1e-3 or fail), and trbdf2 at 1e-4 to 1e-3 s: steps/s, wall
   time, errors against a fine rk4 run, the energy balance's residual.
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


#: fixed steps tried for the explicit integrators (OutputStep = EndTime: a whole number of each)
STEPS = (5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 2.5e-4, 5e-4, 1e-3)


def explicit_limits(name, make, t_end):
    """rk4's and euler's runs over STEPS: the energy balance's residual, untrusted or not,
    or the RunError (the contact step check is the solver's own and stays on)."""
    for integrator in ("rk4", "euler"):
        out = []
        for h in STEPS:
            try:
                r = simulate(make(), integrator=integrator, t_end=t_end, step=h,
                             output_step=t_end)
                b = r.energy_balance()
                out.append(f"{h:g}: {b['relative']:.1e}{' untrusted' if r.untrusted else ''}")
            except RunError:
                out.append(f"{h:g}: RunError")
                break
        print(f"  {name}, {integrator} (step: energy residual): " + "; ".join(out))


def contact_case(name, make, t_end, cols, ref_step):
    explicit_limits(name, make, t_end)
    ref, wr = timed(make(), integrator="rk4", t_end=t_end, step=ref_step, output_step=0.01)
    print(f"  {name}: reference rk4 at {ref_step:g} s: {wr:.2f} s")
    for step in (1e-4, 2.5e-4, 5e-4, 1e-3):
        simulate(make(), integrator="trbdf2", t_end=0.01, step=step, output_step=0.01)
        r, w = timed(make(), integrator="trbdf2", t_end=t_end, step=step, output_step=0.01)
        errs = ", ".join(f"{c} {np.abs(r[c] - ref[c]).max() / np.abs(ref[c]).max():.1e}"
                         for c in cols)
        b = r.energy_balance()
        print(f"  {name}: trbdf2 at {step:g} s: {w:.3f} s, {r.meta['steps'] / w:.0f} steps/s, "
              f"{r.meta['evaluations']} evaluations, {r.meta['jacobians']} Jacobians, "
              f"{r.meta['newton_failures']} Newton failures; errors (of the column's largest) "
              f"{errs}; energy residual {b['relative']:.1e} of the scale")


def slider():
    from test_implicit import box_on_incline, rolling_ball
    print("contact with friction (tests/test_implicit.py's models):")
    contact_case("box sliding", box_on_incline, 0.3, ("Block.x", "Block.vx"), 1e-5)
    contact_case("ball rolling", rolling_ball, 0.2, ("Ball.x", "Ball.vx", "Hit.Ft"), 2e-6)


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
