"""Benchmark of the tree solver: cost per RK4 step of an n-link revolute chain.

    /usr/bin/python3 benchmarks/bench_tree.py [--quick] [--sizes N ...] [--no-global] [--driven]

Prints, for the chain example (alternating hinge axes): microseconds per fixed RK4 step for
n = 10, 100, 1000 (the whole run inside compiled code), the ratio t(1000)/t(100), and the cost of
one evaluation of the accelerations by the MSTMM Riccati form against the global constrained
formulation (dense, absolute coordinates) for n = 10, 50, 100, 200. ``--sizes`` times other
chain lengths, ``--no-global`` leaves out the comparison, ``--driven`` adds the chain with a
driver and dampers (the energy balance's works integrated in the run). The load average is
printed before and after: figures go to docs/benchmarks.md with the machine and the load they
came from. Not a test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from MultibodyWB.examples import build            # noqa: E402
from MultibodyWB.solver.methods.mstmm import kernels as K  # noqa: E402
from MultibodyWB.solver.methods.mstmm.system import System     # noqa: E402


def machine() -> str:
    """CPU model (with its family and model numbers), cores, and the versions that matter."""
    import numba
    cpu = platform.processor() or "?"
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
                if not line.strip():
                    break                   # the first processor's fields only
    except OSError:
        pass
    cpu = fields.get("model name", cpu)
    if "cpu family" in fields:
        # "AMD EPYC" names several generations (family 25: Zen 3 and 4, 26: Zen 5); the
        # family and model tell the machines apart
        cpu += f" (family {fields['cpu family']}, model {fields.get('model', '?')})"
    return (f"{cpu}, {os.cpu_count()} cores; Python {platform.python_version()}, numpy "
            f"{np.__version__}, numba {numba.__version__}")


def load() -> str:
    """The load average: other processes slow the figures down."""
    try:
        return ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def driven_chain(n: int):
    """The chain with its first hinge driven at 2 pi t and a damper (0.01 N m s/rad) on every
    hinge: the energy balance's works are integrated (``System.does_work``)."""
    from MultibodyWB.solver.model import Driver
    m = build("chain", n=n)
    for h in m.hinges:
        h.damping = np.array([0.01])
    m.hinges[0].drivers = [Driver("rz", "2*pi*t")]
    return m


def rk4_step_time(n: int, steps: int, repeats: int = 3, driven: bool = False) -> float:
    """Best wall time (s) per RK4 step over ``repeats`` runs of ``steps`` steps, n-link chain
    (``driven``: :func:`driven_chain`)."""
    s = System(driven_chain(n) if driven else build("chain", n=n))
    h = 1e-4
    drv = np.zeros((2 * steps + 1, 1, 3))
    if driven:                                    # 2 pi t on the half-step grid
        drv[:, 0, 0] = 2 * np.pi * 0.5 * h * np.arange(2 * steps + 1)
        drv[:, 0, 1] = 2 * np.pi
    mag = np.zeros((2 * steps + 1, 1))
    out = np.zeros((1, s.ny))
    # the energy balance's works (kernels.rk4_run): none for this model, as simulate() does
    flows = np.zeros(3 if s.does_work else 0)
    out_flows = np.zeros((1, 3))
    K.rk4_run(s.initial_state(), 0, 2, h, drv, mag, s.tree, s.forces, s.work, out, 10 ** 9, 0,
              flows, out_flows, np.empty(0), s.row_stack(0))
    best = np.inf
    for _ in range(repeats):
        y = s.initial_state()
        t0 = time.perf_counter()
        K.rk4_run(y, 0, steps, h, drv, mag, s.tree, s.forces, s.work, out, 10 ** 9, 0, flows,
                  out_flows, np.empty(0), s.row_stack(0))
        best = min(best, (time.perf_counter() - t0) / steps)
    return best


def evaluation_times(n: int, repeats: int) -> tuple[float, float | None]:
    """Seconds per evaluation of the accelerations: (MSTMM Riccati form, global formulation)."""
    s = System(build("chain", n=n))
    y = s.initial_state()
    steps = max(20, 20000 // n)
    t_mstmm = rk4_step_time(n, steps) / 4.0
    try:
        from MultibodyWB.solver.methods.constrained import formulation as constrained
    except ImportError:
        return t_mstmm, None
    constrained.accelerations(s, 0.0, y)
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        constrained.accelerations(s, 0.0, y)
        best = min(best, time.perf_counter() - t0)
    return t_mstmm, best


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer steps and repeats")
    p.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000], metavar="N",
                   help="chain lengths of the RK4 timing (default: 10 100 1000)")
    p.add_argument("--no-global", action="store_true",
                   help="leave out the comparison with the global formulation")
    p.add_argument("--driven", action="store_true",
                   help="also time the chain with a driver and dampers (energy balance's works)")
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    print(f"machine: {machine()}")
    print(f"load average (1, 5, 15 min): {load()}")
    print("\nRK4 step of the n-link revolute chain (alternating axes), compiled run:")
    times = {}
    for n in args.sizes:
        steps = max(50, (2000 if args.quick else 20000) // n * 10 // 10)
        times[n] = rk4_step_time(n, steps, repeats=2 if args.quick else 5)
        print(f"  n = {n:>5}: {times[n] * 1e6:9.1f} us per RK4 step")
    if 100 in times and 1000 in times:
        print(f"  t(1000)/t(100) = {times[1000] / times[100]:.2f}  (linear: 10)")
    if args.driven:
        print("\nThe same, first hinge driven at 2 pi t, a damper on every hinge (the works of "
              "the energy balance integrated):")
        for n in args.sizes:
            steps = max(50, (2000 if args.quick else 20000) // n * 10 // 10)
            td = rk4_step_time(n, steps, repeats=2 if args.quick else 5, driven=True)
            print(f"  n = {n:>5}: {td * 1e6:9.1f} us per RK4 step")
    if args.no_global:
        print(f"\nload average (1, 5, 15 min): {load()}")
        return 0
    print("\nOne evaluation of the accelerations, MSTMM Riccati form vs global formulation:")
    for n in (10, 50, 100, 200):
        tm, tg = evaluation_times(n, repeats=1 if args.quick else 3)
        if tg is None:
            print(f"  n = {n:>5}: mstmm {tm * 1e6:9.1f} us; global formulation not available")
        else:
            print(f"  n = {n:>5}: mstmm {tm * 1e6:9.1f} us, global {tg * 1e6:11.1f} us, "
                  f"ratio {tg / tm:8.1f}")
    print(f"\nload average (1, 5, 15 min): {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
