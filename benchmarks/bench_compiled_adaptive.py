"""The compiled adaptive integrators (issue 35) against scipy's and against rk4: wall time and
cost per evaluation (``python3 benchmarks/bench_compiled_adaptive.py [--quick]``).

Each run is made once to load the compiled code, then timed (best of ``--repeat``), with few
output rows (a tenth of the run apart). An evaluation is one derivative (for the adaptive
runs, with the power evaluations of the work columns counted too). The cost per evaluation of
the compiled runs is the CPU time spent inside the compiled call (rk4_run, adaptive.rk_chunk)
over the evaluations; scipy's is its whole run's CPU time over its evaluations.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_tree import load, machine  # noqa: E402
from MultibodyWB.examples import build  # noqa: E402
from MultibodyWB.solver.model import massprops  # noqa: E402
from MultibodyWB.solver.model.mechanism import MultibodySystem  # noqa: E402
from MultibodyWB.solver.methods.mstmm import adaptive as AD  # noqa: E402
from MultibodyWB.solver.methods.mstmm import kernels as K  # noqa: E402
from MultibodyWB.solver.run import simulate as sim  # noqa: E402
from MultibodyWB.solver.methods.mstmm import run as mstmm_run  # noqa: E402


def stiff_slider():
    """tests/test_integrators.py's block on a prismatic spring, K = 1e6 N/m, C = 50 N s/m."""
    m = MultibodySystem("StiffSlider")
    g = m.set_ground()
    mp = massprops.box((0.05, 0.05, 0.05), 8000.0, corner=(-0.025, -0.025, -0.025))
    b = m.add_body("Block", mp.mass, mp.ji, mass_center=mp.center)
    m.add_hinge("Slide", "prismatic", b.add_marker(), g.add_marker(), initial_coordinates=[1e-3],
                stiffness=[1e6], damping=[50.0])
    return m


#: (name, model, end time, rk4 step, rtol, atol)
CASES = [
    ("double_pendulum", lambda: build("double_pendulum"), 40.0, 1e-3, 1e-8, 1e-10),
    ("crank_slider (loop, driver, gas force)", lambda: build("crank_slider"), 0.4, 1e-5, 1e-8,
     1e-10),
    ("stiff slider (K 1e6 N/m)", stiff_slider, 2.0, 1e-5, 1e-9, 1e-13),
    ("bouncing_balls (contacts)", lambda: build("bouncing_balls"), 0.5, 1e-5, 1e-8, 1e-10),
]


class KernelClock:
    """CPU time spent inside the compiled runs (kernels.rk4_run, adaptive.rk_chunk): the cost of
    the steps alone, without the set-up, the rows and the chunks' returns to Python."""

    def __init__(self):
        self.cpu = 0.0
        for module, name in ((K, "rk4_run"), (AD, "rk_chunk")):
            real = getattr(module, name)

            def wrapped(*args, real=real):
                c0 = time.process_time()
                try:
                    return real(*args)
                finally:
                    self.cpu += time.process_time() - c0
            setattr(module, name, wrapped)


CLOCK = None


def timed(model_of, repeat, compiled=True, **settings):
    """(wall s, CPU s, CPU s in the compiled run, evaluations) of a run, the best of
    ``repeat``."""
    saved = mstmm_run.COMPILED_ADAPTIVE
    mstmm_run.COMPILED_ADAPTIVE = saved if compiled else ()
    try:
        best, cpu, kernel, res = np.inf, np.inf, np.inf, None
        for _ in range(repeat):
            m = model_of()
            t0, c0, k0 = time.perf_counter(), time.process_time(), CLOCK.cpu
            res = sim.simulate(m, **settings)
            best = min(best, time.perf_counter() - t0)
            cpu = min(cpu, time.process_time() - c0)
            kernel = min(kernel, CLOCK.cpu - k0)
    finally:
        mstmm_run.COMPILED_ADAPTIVE = saved
    n = res.meta["evaluations"] + res.meta.get("power_evaluations", 0)
    return best, cpu, kernel, n


def main(argv=None):
    global CLOCK
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--quick", action="store_true", help="shorter runs")
    args = p.parse_args(argv)
    CLOCK = KernelClock()
    print(f"machine: {machine()}")
    print(f"load before: {load()}")
    print("| model | integrator | end (s) | evaluations | wall (s) | CPU (s) | us per "
          "evaluation (CPU in the compiled run / evaluations; scipy: all CPU) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, model_of, t_end, h, rtol, atol in CASES:
        if args.quick:
            t_end /= 5

        def model(model_of=model_of, rtol=rtol, atol=atol):
            m = model_of()
            m.simulation.relative_tolerance, m.simulation.absolute_tolerance = rtol, atol
            return m

        timed(model, 1, integrator="rk4", t_end=100 * h, step=h, output_step=10 * h)
        w, cpu, kern, n = timed(model, args.repeat, integrator="rk4", step=h, t_end=t_end,
                                output_step=t_end / 10)
        print(f"| {name} | rk4, h = {h:g} s | {t_end:g} | {n} | {w:.3f} | {cpu:.3f} | "
              f"{1e6 * kern / n:.2f} |")
        for integ in ("RK45", "DOP853"):
            timed(model, 1, integrator=integ, t_end=t_end / 100, output_step=t_end / 1000)
            w, cpu, kern, n = timed(model, args.repeat, integrator=integ, t_end=t_end,
                                    output_step=t_end / 10)
            print(f"| {name} | {integ} compiled, rtol {rtol:g} | {t_end:g} | {n} | {w:.3f} | "
                  f"{cpu:.3f} | {1e6 * kern / n:.2f} |")
            ts = t_end / 10
            w, cpu, kern, n = timed(model, 1, compiled=False, integrator=integ, t_end=ts,
                                    output_step=ts / 10)
            print(f"| {name} | {integ} scipy | {ts:g} | {n} | {w:.3f} | {cpu:.3f} | "
                  f"{1e6 * cpu / n:.2f} |")
    print(f"load after: {load()}")


if __name__ == "__main__":
    main()
