"""Run inside FreeCAD's GUI by bench_playback.py: playback frame rate and Run-to-first-frame.

Reads MBWB_BENCH_DIR (this folder), MBWB_BENCH_OUT (JSON to write), MBWB_BENCH_BODIES,
MBWB_BENCH_SECONDS.
"""

import json
import os
import sys
import time
import traceback

import FreeCAD
import FreeCADGui
from PySide import QtCore

sys.path.insert(0, os.environ["MBWB_BENCH_DIR"])


def pump(seconds):
    from MultibodyWB.gui.qt import process_events
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        process_events()
        time.sleep(0.002)


def wait_for(predicate, timeout=600):
    from MultibodyWB.gui.qt import process_events
    t0 = time.perf_counter()
    while not predicate():
        if time.perf_counter() - t0 > timeout:
            raise TimeoutError
        process_events()
        time.sleep(0.01)            # an idle GUI: the event loop waits for events


def playback_rate(player, seconds):
    """Frames the player draws per second of wall time, playing with its own timer."""
    player.set_frame(0)
    n0 = player.frames_drawn
    player.play()
    t0 = time.perf_counter()
    pump(seconds)
    player.pause()
    return (player.frames_drawn - n0) / (time.perf_counter() - t0)


def chain(out, bodies, seconds):
    from bench_animation import build_chain
    from MultibodyWB.document import runs
    from MultibodyWB.gui import player as player_module
    doc = FreeCAD.newDocument("Chain")
    mech = build_chain(FreeCAD, doc, bodies)
    view = FreeCADGui.getDocument(doc.Name).ActiveView
    view.viewIsometric()
    view.fitAll()
    result = runs.simulate_mechanism(mech, t_end=1.0, step=1e-3, output_step=1e-2)
    pump(0.5)
    player = player_module.open_player(mech, result)
    player.speed.setCurrentIndex(player.speed.findData(0.2))
    pump(0.5)
    out["chain_bodies"] = bodies
    out["chain_frames"] = len(player.times)
    out["chain_fps"] = playback_rate(player, seconds)
    player.arrows.setChecked(True)
    player.set_traces(list(player._markers)[-1:])
    out["chain_fps_arrows_trace"] = playback_rate(player, seconds)
    player.arrows.setChecked(False)
    player.set_traces([])
    # every frame drawn by hand: set the time and render the view now
    from MultibodyWB.gui.qt import process_events
    t0 = time.perf_counter()
    n = 0
    while time.perf_counter() - t0 < seconds:
        player.set_time(player.times[n % len(player.times)], fast=True)
        process_events()            # the view renders the changed scene here
        n += 1
    out["chain_fps_forced"] = n / (time.perf_counter() - t0)
    player.marker_axes.setChecked(True)
    out["chain_fps_marker_axes"] = playback_rate(player, seconds)
    player.marker_axes.setChecked(False)
    view.saveImage(os.path.join(os.path.dirname(os.environ["MBWB_BENCH_OUT"]),
                                "bench_chain.png"), 800, 600, "Current")
    player.close()
    FreeCAD.closeDocument(doc.Name)


def run_to_first_frame(out):
    """Press Run in the Simulate panel (engine, its own settings: 0.08 s), wait, press Play."""
    from MultibodyWB.examples_fc import crank_slider
    from MultibodyWB.gui import simulate_panel
    doc = FreeCAD.newDocument("Engine")
    mech = crank_slider.setup(doc)
    doc.recompute()
    FreeCADGui.getDocument(doc.Name).ActiveView.fitAll()
    for k in range(2):          # the first: numba's cache loaded; the second: warm
        panel = simulate_panel.open_panel(mech)
        pump(0.2)
        t0 = time.perf_counter()
        panel.run()
        wait_for(lambda: not panel.running and not panel.timer.isActive())
        t_solved = time.perf_counter()
        player = panel.play()
        pump(0.0)
        t1 = time.perf_counter()
        out[f"engine_run{k + 1}_to_first_frame"] = t1 - t0
        out[f"engine_run{k + 1}_solve_and_store"] = t_solved - t0
        out[f"engine_run{k + 1}_job_wall"] = panel.job.wall_time
        out[f"engine_run{k + 1}_first_progress"] = panel.job.first_progress_time
        out["engine_frames"] = len(player.times)
        player.close()
    FreeCAD.closeDocument(doc.Name)


def main():
    out = {"freecad": ".".join(FreeCAD.Version()[:3])}
    try:
        FreeCADGui.activateWorkbench("MultibodyWorkbench")
        pump(0.5)
        run_to_first_frame(out)
        chain(out, int(os.environ.get("MBWB_BENCH_BODIES", "50")),
              float(os.environ.get("MBWB_BENCH_SECONDS", "3")))
    except Exception:
        out["error"] = traceback.format_exc()
    with open(os.environ["MBWB_BENCH_OUT"], "w") as f:
        json.dump(out, f, indent=1)
    for name in list(FreeCAD.listDocuments()):
        FreeCAD.closeDocument(name)
    QtCore.QTimer.singleShot(20000, lambda: os._exit(3))
    FreeCADGui.getMainWindow().close()


QtCore.QTimer.singleShot(500, main)
