"""Benchmark of the playback core: Animator.apply() calls per second, headless FreeCAD.

    /usr/bin/python3 benchmarks/bench_animation.py [--bodies 50] [--seconds 2]

Builds an n-link chain of boxes (revolute hinges, axes alternating between global y and z, two
markers per link) through MultibodyWB.document.factory as the tests do, simulates it briefly through
runs.simulate_mechanism, then times Animator.apply(t) at times between output rows (the
player's case: interpolation, then every solid and marker placement set) and apply_frame(i).
Each call sets n solids and 2 n markers. Headless: no 3D view is redrawn, so this is the cost of
the document side only (the GUI frame rate is measured separately). Not a test: timings depend
on the machine.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

def import_freecad():
    """Import FreeCAD headless with a throw-away user directory."""
    os.environ.setdefault("FREECAD_USER_HOME", tempfile.mkdtemp(prefix="mbwb-bench-"))
    from MultibodyWB.demo.launch import import_freecad as imported
    return imported()


def build_chain(App, doc, n, length=20.0, width=4.0):
    """An n-link chain of boxes along global x, hinged end to end (mm); return the Mechanism."""
    from MultibodyWB.document import factory
    V, P, R = App.Vector, App.Placement, App.Rotation
    axes = (R(V(1, 0, 0), -90), R())            # marker z along global y, then global z
    frame = doc.addObject("Part::Box", "FrameSolid")
    frame.Length = frame.Width = frame.Height = 10.0
    frame.Placement = P(V(-10, -5 + width / 2, -5 + width / 2), R())
    boxes = []
    for i in range(n):
        box = doc.addObject("Part::Box", f"LinkSolid{i + 1}")
        box.Length, box.Width, box.Height = length, width, width
        box.Placement = P(V(i * length, 0, 0), R())
        boxes.append(box)
    doc.recompute()
    mech = factory.make_mechanism(doc, f"Chain{n}")
    ground = factory.make_body(doc, mech, frame, ground=True, name="Frame")
    pivot = factory.make_marker(doc, ground, None, name="Pivot",
                                offset=P(V(10, 5, 5), axes[0]))
    previous = pivot
    for i, box in enumerate(boxes):
        body = factory.make_body(doc, mech, box, name=f"Link{i + 1}")
        start = factory.make_marker(doc, body, None, name=f"Start{i + 1}",
                                    offset=P(V(0, width / 2, width / 2), axes[i % 2]))
        end = factory.make_marker(doc, body, None, name=f"End{i + 1}",
                                  offset=P(V(length, width / 2, width / 2), axes[(i + 1) % 2]))
        factory.make_hinge(doc, mech, "revolute", start, previous, name=f"J{i + 1}")
        previous = end
    doc.recompute()
    return mech


def rate(call, arguments, seconds):
    """Calls per second of ``call(a)`` cycling through ``arguments`` for about ``seconds``."""
    count, t0 = 0, time.perf_counter()
    end = t0 + seconds
    while True:
        for a in arguments:
            call(a)
        count += len(arguments)
        now = time.perf_counter()
        if now >= end:
            return count / (now - t0)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bodies", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    args = parser.parse_args(argv)
    App = import_freecad()
    import numpy as np
    from bench_tree import machine
    from MultibodyWB.document import runs
    from MultibodyWB.document.animation import Animator
    from MultibodyWB.objects.result import load

    doc = App.newDocument("BenchAnimation")
    t0 = time.perf_counter()
    mech = build_chain(App, doc, args.bodies)
    t_build = time.perf_counter() - t0
    t0 = time.perf_counter()
    result = runs.simulate_mechanism(mech, t_end=0.1, step=1e-4, output_step=1e-3)
    t_run = time.perf_counter() - t0
    results = load(result)
    t0 = time.perf_counter()
    animator = Animator(mech, results)
    t_init = time.perf_counter() - t0
    times = results.time
    between = list(0.5 * (times[:-1] + times[1:]))          # interpolated: the player's case
    frames = list(range(animator.frame_count))
    undo = doc.UndoCount
    apply_rate = rate(animator.apply, between, args.seconds)
    frame_rate = rate(animator.apply_frame, frames, args.seconds)
    t0 = time.perf_counter()
    animator.restore()
    t_restore = time.perf_counter() - t0
    touched = [o.Name for o in doc.Objects if "Touched" in o.State]
    assert doc.UndoCount == undo and not touched, (doc.UndoCount, undo, touched)
    print(f"machine: {machine()}; FreeCAD {'.'.join(App.Version()[:3])}, headless")
    print(f"chain of {args.bodies} boxes: built in {t_build:.2f} s, simulated "
          f"{results.time[-1]:g} s ({animator.frame_count} frames) and stored in {t_run:.2f} s")
    print(f"Animator: {len(animator.objects)} objects per call "
          f"({args.bodies} solids, {len(animator.objects) - args.bodies} markers); "
          f"set up in {1e3 * t_init:.1f} ms, restore {1e3 * t_restore:.1f} ms")
    print(f"apply(t) between output times: {apply_rate:8.1f} calls/s "
          f"({1e3 / apply_rate:.2f} ms per call)")
    print(f"apply_frame(i):                {frame_rate:8.1f} calls/s "
          f"({1e3 / frame_rate:.2f} ms per call)")
    App.closeDocument(doc.Name)
    return 0 if np.isfinite(apply_rate) else 1


if __name__ == "__main__":
    sys.exit(main())
