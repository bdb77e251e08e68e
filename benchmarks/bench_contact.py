"""Benchmark of contacts: cost per contact pair per evaluation, and a 50-body model with about
100 active contact pairs at a 1e-4 s step.

    /usr/bin/python3 benchmarks/bench_contact.py [--quick] [--integrator euler] [--part 2]

1. Cost per pair: n bodies on free hinges, each resting on the ground with one contact (sphere -
   plane, box - plane, cylinder - plane, a tessellated cylinder (convex hull of 200 points)
   standing on the plane or on a slab (hull against a box's hull)) or in a row of touching balls
   (sphere - sphere); the whole fixed-step run in compiled code, timed with and without the
   contacts: (with - without) / (e n) per evaluation (e evaluations per step: 4 for rk4, 1 for
   euler).
2. 50 balls on the ground in a row, each touching its neighbours (50 sphere-plane and 49
   sphere-sphere pairs, all active, with friction): mstmm, rk4 (or ``--integrator euler``: the
   semi-implicit Euler step, one evaluation per step), step 1e-4 s, output every 1 ms, 1 s
   simulated, whole ``simulate()`` including the result rows: wall time against real time.

The load average is printed before and after. Not a test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench_tree import load, machine                       # noqa: E402
from MultibodyWB.solver.model import MultibodySystem, massprops  # noqa: E402
from MultibodyWB.solver.methods.mstmm.run import FIXED_RUNS  # noqa: E402
from MultibodyWB.solver.run.simulate import simulate  # noqa: E402

G = 9.81
R = 0.02
K_SPHERE = 1e8


#: Overlap of neighbouring balls (and of the end balls with two walls) in the compressed row, m.
SQUEEZE = 1e-5


def resting(n, shape, contacts=True, neighbours=False, stiction=1e-3):
    """n bodies in a row on the ground, each at its static depth; ``neighbours``: balls pressed
    against their neighbours (sphere-sphere contacts, each overlapping by :data:`SQUEEZE`) between
    two walls, in equilibrium. ``stiction``: every contact's stiction velocity (m/s)."""
    m = MultibodySystem("Rest", gravity=(0, 0, -G))
    g = m.set_ground()
    gm = g.add_marker((0, 0, 0))
    marks = []
    for i in range(n):
        if shape == "sphere":
            mp = massprops.sphere(R, 7850.0)
            size = {"radius": R}
            half = R
            k, points = K_SPHERE, 1
        elif shape == "box":
            mp = massprops.box((2 * R, 2 * R, 2 * R), 7850.0, corner=(-R, -R, -R))
            size = {"size": (2 * R, 2 * R, 2 * R)}
            half = R
            k, points = 1e9, 4
        elif shape in ("prism", "prism-slab"):
            # a tessellated cylinder standing on its end: the hull of two 100-gons
            mp = massprops.cylinder(R, 2 * R, 7850.0, base=(0, 0, -R))
            size = {"points": prism_points(PRISM_SIDES)}
            half = R
            k, points = 1e9, PRISM_SIDES
        else:
            mp = massprops.cylinder(R, 2 * R, 7850.0, base=(0, 0, -R))
            size = {"radius": R, "length": 2 * R}
            half = R
            k, points = 1e9, 2
        depth = (mp.mass * G / points / k) ** (1 / 1.5)
        b = m.add_body(f"B{i}", mp.mass, mp.ji, mass_center=mp.center,
                       position=(i * ((2 * R - SQUEEZE) if neighbours else 3 * R), 0,
                                 half - depth))
        orient = (np.pi / 2, 0, 0) if shape == "cylinder" else (0, 0, 0)
        bm = b.add_marker((0, 0, 0), orient)
        m.add_hinge(f"F{i}", "free", b.add_marker((0, 0, 0)), gm)
        marks.append(bm)
        if contacts:
            kind = "convex" if shape.startswith("prism") else shape
            other = ("plane",)
            om = gm
            if shape == "prism-slab":            # on a slab: the hull of a box, hull - hull
                other = ("box", {"size": (4 * R, 4 * R, 2 * R)})
                om = g.add_marker((i * 3 * R, 0, -R))
            m.add_contact(f"C{i}", bm, om, (kind, size), other, stiffness=k,
                          restitution=0.5, static_friction=0.5, dynamic_friction=0.4,
                          stiction_velocity=stiction)
    if contacts and neighbours:
        x_end = (n - 1) * (2 * R - SQUEEZE)
        walls = ((marks[0], g.add_marker((-R + SQUEEZE, 0, R), (0, np.pi / 2, 0))),
                 (marks[-1], g.add_marker((x_end + R - SQUEEZE, 0, R), (0, -np.pi / 2, 0))))
        for j, (bm, wm) in enumerate(walls):
            m.add_contact(f"W{j}", bm, wm, ("sphere", {"radius": R}), ("plane",),
                          stiffness=K_SPHERE, restitution=0.5, static_friction=0.3,
                          dynamic_friction=0.2, stiction_velocity=stiction)
        for i in range(n - 1):
            m.add_contact(f"S{i}", marks[i + 1], marks[i], ("sphere", {"radius": R}),
                          ("sphere", {"radius": R}), stiffness=K_SPHERE, restitution=0.5,
                          static_friction=0.3, dynamic_friction=0.2, stiction_velocity=stiction)
    return m


#: Sides of the tessellated cylinder (``prism`` shapes): 2 x 100 hull vertices.
PRISM_SIDES = 100


def prism_points(sides):
    """The vertices of a prism of ``sides`` sides, radius R, height 2 R, centred, axis z."""
    a = 2 * np.pi * np.arange(sides) / sides
    ring = np.column_stack([R * np.cos(a), R * np.sin(a)])
    return np.vstack([np.column_stack([ring, np.full(sides, z)]) for z in (-R, R)])


def run_time(model, steps, h=1e-4, integrator="rk4"):
    """Wall time of a fixed-step run of ``steps`` steps with one output row at the end (best
    of 3)."""
    best = np.inf
    for _ in range(3):
        t0 = time.perf_counter()
        simulate(model, method="mstmm", integrator=integrator, t_end=steps * h, step=h,
                 output_step=steps * h)
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer steps")
    ap.add_argument("--integrator", choices=tuple(FIXED_RUNS), default="rk4",
                    help="the fixed-step integrator (default rk4)")
    ap.add_argument("--part", type=int, choices=(1, 2), help="run only this part")
    args = ap.parse_args()
    integrator = args.integrator
    evaluations = FIXED_RUNS[integrator][1]
    print(f"machine: {machine()}")
    print(f"load average before: {load()}")
    steps = 2000 if args.quick else 10000
    n = 50
    # warm up the compiled code (the first run compiles what the cache lacks)
    simulate(resting(2, "sphere", neighbours=True), t_end=1e-3, step=1e-4, output_step=1e-3,
             integrator=integrator)
    if args.part in (None, 1):
        print(f"\n1. cost per contact pair per evaluation ({n} bodies, {steps} {integrator} "
              "steps)")
        base = run_time(resting(n, "sphere", contacts=False), steps, integrator=integrator)
        names = {"prism": f"convex-plane ({2 * PRISM_SIDES} vertices)",
                 "prism-slab": f"convex-box hull ({2 * PRISM_SIDES}+8)"}
        for shape, neighbours in (("sphere", False), ("box", False), ("cylinder", False),
                                  ("sphere", True), ("prism", False), ("prism-slab", False)):
            m = resting(n, shape, neighbours=neighbours)
            pairs = len(m.contacts)
            t = run_time(m, steps, integrator=integrator)
            per = (t - base) / (evaluations * steps * pairs) * 1e9
            what = names.get(shape, f"{shape}-plane" if not neighbours
                             else "sphere-plane + sphere-sphere")
            print(f"   {what:<30} {pairs:4d} pairs: {per:7.1f} ns per pair per evaluation "
                  f"(run {t:.3f} s, without contacts {base:.3f} s)")
    if args.part in (None, 2):
        print("\n2. 50 balls pressed together in a row on the ground between two walls: 101 "
              f"pairs, {integrator} 1e-4 s, 1 ms rows")
        t_end = 0.2 if args.quick else 1.0
        # stiction velocity 1 mm/s: the friction's slope at rest is a damper too fast for the
        # step (the balls creep and the energy balance does not close); 10 mm/s: they rest
        for stiction in (1e-3, 1e-2):
            m = resting(50, "sphere", neighbours=True, stiction=stiction)
            best = None
            for _ in range(3):
                t0, c0 = time.perf_counter(), time.process_time()
                res = simulate(m, method="mstmm", integrator=integrator, t_end=t_end, step=1e-4,
                               output_step=1e-3)
                wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                best = (wall, cpu) if best is None or wall < best[0] else best
            wall, cpu = best
            active = sum(int(res[f"{c.name}.Fn"][-1] > 0) for c in m.contacts)
            half = int(t_end * 500)
            creep = max(float(np.max(np.linalg.norm(res.vector(f"B{i}.v")[half:], axis=1)))
                        for i in range(50))
            print(f"   stiction velocity {stiction * 1e3:g} mm/s: {t_end:g} s simulated in "
                  f"{wall:.3f} s wall, best of 3 ({wall / t_end:.3f} s per simulated s; the "
                  f"process's CPU time {cpu:.3f} s: on a loaded machine the wall time also "
                  f"counts the waits), {active} pairs active at the end; {res.meta['steps']} "
                  f"steps, {res.meta['evaluations']} evaluations; the balls' largest speed in "
                  f"the second half {creep * 1e3:.3g} mm/s")
            b = res.energy_balance()
            print(f"   energy balance: dissipated {b['dissipated']:.3g} J, residual "
                  f"{b['residual']:.3g} J ({b['relative']:.2g} of the energies' scale)")
            for w in res.meta.get("warnings", []):
                print(f"   warning: {w}")
    print(f"\nload average after: {load()}")


if __name__ == "__main__":
    main()
