"""GUI check run inside FreeCAD: the designer's whole loop on the crank-slider engine.

Builds the engine from solids (the factory functions the commands call), then through the
commands: Simulate (task panel: Run in the background, progress, the run stored), a long run
cancelled (the earlier results intact), a run of a broken model (refused, nothing stored),
Play (the solids' placements at several frames against the stored results, playing with the
timer, arrows and a trace), Plot (the dock with a quantity), a GIF exported from the 3D view;
closing the player restores the placements. Then the document is saved, closed and reopened and
played again without solving. Screenshots: the task panel, the player, the plot dock.

Started by tests/test_gui_loop.py; writes its findings as JSON.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import FreeCAD  # noqa: E402
import FreeCADGui  # noqa: E402
import in_freecad  # noqa: E402
import numpy as np  # noqa: E402

WORKBENCH = "MultibodyWorkbench"


def wait_for(predicate, timeout=240.0):
    t0 = time.perf_counter()
    while not predicate():
        if time.perf_counter() - t0 > timeout:
            raise TimeoutError("waited too long")
        in_freecad.process_events()
        time.sleep(0.01)
    in_freecad.process_events()


def placements(objs):
    return {o.Name: (tuple(o.Placement.Base), tuple(o.Placement.Rotation.Q)) for o in objs}


def moving_solids(mechanism):
    from MultibodyWB.objects.base import type_of
    out = []
    for body in mechanism.Group:
        if type_of(body) == "Multibody::Body" and body != mechanism.Ground:
            out.extend(body.Solids)
    return out


def compare_frame(player, mechanism, results, frame):
    """Largest difference (mm, and rotation matrix entries) between each body's first solid
    and the stored pose at ``frame``."""
    from MultibodyWB.objects.base import type_of
    player.set_frame(frame)
    in_freecad.process_events()
    dp, dr = 0.0, 0.0
    for body in mechanism.Group:
        if type_of(body) != "Multibody::Body" or body == mechanism.Ground:
            continue
        name = body.Label
        pos = np.array([results.column(f"{name}.{a}")[frame] for a in "xyz"]) * 1000.0
        R = np.array([[results.column(f"{name}.R{i}{j}")[frame] for j in (1, 2, 3)]
                      for i in (1, 2, 3)])
        pl = body.Solids[0].Placement      # the first solid's placement is the base frame
        m = pl.Rotation.toMatrix()
        Rs = np.array([[m.A11, m.A12, m.A13], [m.A21, m.A22, m.A23], [m.A31, m.A32, m.A33]])
        dp = max(dp, float(np.max(np.abs(np.array(tuple(pl.Base)) - pos))))
        dr = max(dr, float(np.max(np.abs(Rs - R))))
    return dp, dr


def check():
    from MultibodyWB import runs
    from MultibodyWB.examples_fc import crank_slider
    from MultibodyWB.gui import player as player_module
    from MultibodyWB.gui import simulate_panel
    out = in_freecad.output_dir()
    result = {"freecad_version": FreeCAD.Version()[:3]}
    FreeCADGui.activateWorkbench(WORKBENCH)
    doc = FreeCAD.newDocument("Engine")
    mechanism = crank_slider.setup(doc)
    doc.recompute()
    view = FreeCADGui.ActiveDocument.ActiveView
    view.viewIsometric()
    view.fitAll()
    solids = moving_solids(mechanism)
    rest = placements(solids)
    FreeCADGui.Selection.clearSelection()
    FreeCADGui.Selection.addSelection(mechanism)

    # -- Simulate: the task panel, a short run -----------------------------------------------
    FreeCADGui.runCommand("MultibodyWB_Simulate")
    in_freecad.process_events()
    panel = simulate_panel.current
    result["panel_open"] = panel is not None and FreeCADGui.Control.activeDialog()
    panel.set_settings(EndTime=0.02)
    undo_before = doc.UndoCount
    t_run = time.perf_counter()
    progress_seen = []
    started = panel.run()
    result["run_started"] = started
    wait_for(lambda: not panel.running and not panel.timer.isActive())
    result["run_seconds"] = time.perf_counter() - t_run
    result["status_after_run"] = panel.status.text()
    result["messages_after_run"] = panel.messages.toPlainText()[:3000]
    stored = runs.result_objects(mechanism)
    result["results_after_run"] = [o.Label for o in stored]
    result["undo_steps_of_run"] = doc.UndoCount - undo_before
    result["end_time_setting"] = mechanism.Document.getObject(
        simulate_panel.simulation_of(mechanism).Name).EndTime.Value
    result["run_list"] = [panel.run_list.item(i).text() for i in range(panel.run_list.count())]
    in_freecad.grab_main_window("simulate_panel.png")
    first = runs.load(stored[-1])
    first_copy = {n: first.column(n).copy() for n in ("time", "Piston.z", "MainBearing.Fx")}
    result["frames"] = len(first)

    # -- Cancel a long run: the earlier results stay -----------------------------------------
    panel.set_settings(EndTime=50.0)
    panel.run()
    wait_for(lambda: panel.job.progress > 0.0005 or panel.job.done)
    progress_seen.append(panel.progress.value())
    panel.cancel_button.click()
    t_cancel = time.perf_counter()
    wait_for(lambda: not panel.running and not panel.timer.isActive(), timeout=60)
    result["cancel_seconds"] = time.perf_counter() - t_cancel
    result["cancel_state"] = panel.job.state
    result["status_after_cancel"] = panel.status.text()
    result["progress_seen"] = progress_seen
    after = runs.result_objects(mechanism)
    result["results_after_cancel"] = [o.Label for o in after]
    again = runs.load(after[-1])
    result["earlier_results_intact"] = all(
        np.array_equal(again.column(n), v) for n, v in first_copy.items())

    # -- A model with a problem: refused, nothing stored --------------------------------------
    hinge = doc.getObject("WristPin") or next(
        o for o in mechanism.Group if getattr(o, "HingeType", "") == "universal")
    saved_marker = hinge.InputMarker
    hinge.InputMarker = None
    doc.recompute()
    panel.set_settings(EndTime=0.02)
    result["broken_run_started"] = panel.run()
    result["broken_messages"] = panel.messages.toPlainText()[:2000]
    hinge.InputMarker = saved_marker
    doc.recompute()
    result["results_after_broken"] = [o.Label for o in runs.result_objects(mechanism)]

    # -- Play --------------------------------------------------------------------------------
    panel.run_list.clearSelection()
    panel.run_list.item(panel.run_list.count() - 1).setSelected(True)
    player = panel.play()
    in_freecad.process_events()
    result["player_open"] = player is not None and player_module.current is player
    undo_before_play = doc.UndoCount
    frames = [0, len(first) // 3, len(first) - 1]
    result["frame_errors"] = [compare_frame(player, mechanism, first, f) for f in frames]
    player.arrows.setChecked(True)
    labels = list(player._markers)
    player.set_traces(labels[:1])
    result["trace_markers"] = labels[:1]
    player.set_frame(len(first) // 3)
    in_freecad.process_events()
    view.fitAll()
    in_freecad.grab_main_window("player.png")
    view.saveImage(os.path.join(out, "player_view.png"), 1000, 750, "Current")
    # playing with the timer: frames drawn in one second of wall time
    player.set_frame(0)
    n0 = player.frames_drawn
    player.play()
    t0 = time.perf_counter()
    wait_for(lambda: time.perf_counter() - t0 > 1.0)
    player.pause()
    result["frames_per_second"] = (player.frames_drawn - n0) / (time.perf_counter() - t0)
    result["time_after_play"] = player.t
    result["undo_steps_of_play"] = doc.UndoCount - undo_before_play

    # -- Plot ----------------------------------------------------------------------------------
    plot = player.plot(["Piston.z", "MainBearing.Fx"])
    player.set_frame(len(first) // 2)
    in_freecad.process_events()
    result["plot_selected"] = list(plot.selected())
    in_freecad.grab_main_window("plot_dock.png")
    plot.export_png(os.path.join(out, "plot_export.png"))

    # -- GIF -----------------------------------------------------------------------------------
    gif = os.path.join(out, "engine.gif")
    t_gif = time.perf_counter()
    player.export_movie(gif, 320, 240, fps=10)
    result["gif_seconds"] = time.perf_counter() - t_gif
    result["gif"] = gif
    result["gif_expected_frames"] = len(player.movie_times(fps=10))

    # -- Close: placements back ------------------------------------------------------------------
    player.close()
    in_freecad.process_events()
    result["restored"] = placements(solids) == rest
    result["touched_after_close"] = [o.Name for o in solids if "Touched" in o.State]

    # -- Save, close, reopen, play without solving --------------------------------------------
    path = os.path.join(out, "engine.FCStd")
    doc.saveAs(path)
    FreeCAD.closeDocument(doc.Name)
    from MultibodyWB.objects import result as result_module
    result_module.clear_cache()
    doc = FreeCAD.openDocument(path)
    in_freecad.process_events()
    from MultibodyWB.objects.base import type_of
    mechanism = next(o for o in doc.Objects if type_of(o) == "Multibody::Mechanism")
    reopened = runs.result_objects(mechanism)
    result["results_after_reopen"] = [o.Label for o in reopened]
    FreeCADGui.Selection.clearSelection()
    FreeCADGui.Selection.addSelection(reopened[0])
    from MultibodyWB.solver import job as job_module
    jobs_started = []
    original_start = job_module.Job.start

    def spy(self):
        jobs_started.append(self)
        return original_start(self)
    job_module.Job.start = spy
    t_play = time.perf_counter()
    FreeCADGui.runCommand("MultibodyWB_Play")
    in_freecad.process_events()
    player = player_module.current
    result["reopen_play_seconds"] = time.perf_counter() - t_play
    job_module.Job.start = original_start
    result["jobs_started_on_reopen"] = len(jobs_started)
    reloaded = runs.load(reopened[0])
    result["reopened_equal"] = all(np.array_equal(reloaded.column(n), v)
                                   for n, v in first_copy.items())
    result["reopen_frame_errors"] = [compare_frame(player, mechanism, reloaded, f)
                                     for f in frames]
    player.close()
    return result


in_freecad.run_and_quit(check, watchdog_s=600)
