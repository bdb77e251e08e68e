"""Benchmark of the GUI loop: playback frame rate of a 50-body model, and the time from pressing
Run to the first frame of the player for the crank-slider engine.

    /usr/bin/python3 benchmarks/bench_playback.py [--bodies 50] [--seconds 3]

Starts FreeCAD's GUI (under Xvfb without a display) with ``playback_in_freecad.py``:

- the engine built from solids, the Simulate panel's Run pressed with the engine's settings
  (0.08 s, rk4 at 10 us, 801 frames), waited for, Play pressed: the time until the player shows
  its first frame, twice (the first run loads the compiled solver from numba's cache);
- an n-link chain of boxes (``bench_animation.build_chain``: n solids, 2 n markers moving with
  them, n hinges), simulated for 1 s (101 frames) and played with the player's timer for a few
  seconds: frames drawn per second, plain and with reaction-force arrows and a trace; then every
  frame set and rendered by hand as fast as possible.

Target (issue 6): at least 30 frames per second for 50 bodies. Not a test: timings depend on the
machine. Under Xvfb the 3D view renders with Mesa's software OpenGL (llvmpipe).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bodies", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args(argv)
    from bench_tree import machine
    from MultibodyWB.demo.launch import run_gui_script
    out_dir = tempfile.mkdtemp(prefix="mbwb-bench-playback-")
    out = os.path.join(out_dir, "playback.json")
    run = run_gui_script(os.path.join(HERE, "playback_in_freecad.py"),
                         {"MBWB_BENCH_DIR": HERE, "MBWB_BENCH_OUT": out,
                          "MBWB_BENCH_BODIES": str(args.bodies),
                          "MBWB_BENCH_SECONDS": str(args.seconds)}, timeout=900)
    if not os.path.exists(out):
        print(f"FreeCAD did not report (exit {run.returncode}):\n{run.stderr[-3000:]}")
        return 1
    with open(out) as f:
        r = json.load(f)
    if "error" in r:
        print(r["error"])
        return 1
    print(f"machine: {machine()}; FreeCAD {r['freecad']} GUI under "
          f"{'X display ' + os.environ['DISPLAY'] if os.environ.get('DISPLAY') else 'Xvfb'}")
    print(f"crank-slider engine, Run pressed -> first frame of the player ({r['engine_frames']} "
          "frames):")
    for k in (1, 2):
        print(f"  run {k}: {r[f'engine_run{k}_to_first_frame']:.2f} s (solve and store "
              f"{r[f'engine_run{k}_solve_and_store']:.2f} s, solver {r[f'engine_run{k}_job_wall']:.2f}"
              f" s, first progress after {r[f'engine_run{k}_first_progress']:.2f} s)")
    print(f"chain of {r['chain_bodies']} bodies ({r['chain_frames']} frames), playback:")
    print(f"  player timer:                  {r['chain_fps']:6.1f} frames/s")
    print(f"  with force arrows and a trace: {r['chain_fps_arrows_trace']:6.1f} frames/s")
    print(f"  with the markers' axes shown:  {r['chain_fps_marker_axes']:6.1f} frames/s")
    print(f"  every frame set and rendered:  {r['chain_fps_forced']:6.1f} frames/s "
          "(no timer: as fast as it goes)")
    print(f"  (target: at least 30 frames/s; screenshot {os.path.join(out_dir, 'bench_chain.png')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
