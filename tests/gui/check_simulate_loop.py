"""GUI check run inside FreeCAD: the designer's whole loop on the crank-slider engine.

Builds the engine from solids (the factory functions the commands call), then through the
commands: Simulate (task panel: Run in the background, progress, the run stored), a long run
cancelled (the earlier results intact), a run of a broken model (refused, nothing stored),
Play (the solids' placements at several frames against the stored results, playing with the
timer, arrows and a trace), Plot (the dock with a quantity), a GIF exported from the 3D view;
closing the player restores the placements. Then the document is saved, closed and reopened and
played again without solving. Screenshots: the task panel, the player, the plot dock.

Also what a user can do to the panels: settings that cannot be read or that the solver would
refuse (reported naming the field, nothing changed), Undo and Redo of a run (the list follows),
Run pressed twice, the panel closed with its Close button during a run (cancelled, nothing
stored), the document saved while the player shows a frame (the file holds the solids as
drawn), the played run deleted (the player closes, the solids go back), the document closed
while the player plays or a run goes on (both panels close, nothing left running).

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


def task_close_button():
    """The Close button of the task panel (FreeCAD calls the dialog's reject())."""
    from MultibodyWB.gui.qt import QtWidgets
    for b in FreeCADGui.getMainWindow().findChildren(QtWidgets.QPushButton):
        if b.isVisible() and b.text().replace("&", "") == "Close":
            return b
    return None


def placements(objs):
    return {o.Name: (tuple(o.Placement.Base), tuple(o.Placement.Rotation.Q)) for o in objs}


def placement_difference(a, b):
    """Largest difference between two {Name: placement} maps (the same names): mm, and
    quaternion components; inf if the names differ."""
    if set(a) != set(b):
        return float("inf")
    return max(float(np.max(np.abs(np.subtract(a[n][k], b[n][k])))) for n in a for k in (0, 1))


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
    from MultibodyWB.document import runs
    from MultibodyWB.examples_fc import crank_slider
    from MultibodyWB.gui import player as player_module
    from MultibodyWB.gui import simulate_panel
    from MultibodyWB.objects.simulation import setting
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
    result["end_time_setting"] = setting(mechanism.Document.getObject(
        simulate_panel.simulation_of(mechanism).Name), "EndTime")
    result["run_list"] = [panel.run_list.item(i).text() for i in range(panel.run_list.count())]
    result["console_after_run"] = in_freecad.python_console_text()[-3000:]
    in_freecad.grab_main_window("simulate_panel.png")
    first = runs.load(stored[-1])
    first_copy = {n: first.column(n).copy() for n in ("time", "Piston.z", "MainBearing.Fx")}
    result["frames"] = len(first)

    # -- Undo removes the run (one step), Redo brings it back; the panel's list follows --------
    sim = simulate_panel.simulation_of(mechanism)
    doc.undo()
    in_freecad.process_events()
    result["results_after_undo"] = [o.Label for o in runs.result_objects(mechanism)]
    result["end_time_after_undo"] = setting(sim, "EndTime")
    result["run_list_after_undo"] = panel.run_list.count()
    doc.redo()
    in_freecad.process_events()
    result["results_after_redo"] = [o.Label for o in runs.result_objects(mechanism)]
    result["run_list_after_redo"] = panel.run_list.count()

    # -- Settings that cannot be read, or that the solver refuses: nothing changes -------------
    undo_count = doc.UndoCount
    refused = {}
    for field, text in (("EndTime", "abc"), ("EndTime", "-1 s"), ("Step", ""),
                        ("OutputStep", "2.5e-5 s"), ("EndTime", "10 kg")):
        panel.quantity[field].setText(text)
        started = panel.run()
        refused[f"{field}={text}"] = [started, panel.messages.toPlainText()]
        panel.set_settings(EndTime=0.02, Step=1e-5, OutputStep=1e-4)
    panel.tolerance["RelativeTolerance"].setText("x1")
    refused["RelativeTolerance=x1"] = [panel.run(), panel.messages.toPlainText()]
    panel.set_settings(RelativeTolerance=setting(sim, "RelativeTolerance"))
    result["refused_settings"] = refused
    result["undo_steps_of_refused"] = doc.UndoCount - undo_count
    result["settings_after_refused"] = [setting(sim, n) for n in ("EndTime", "Step", "OutputStep")]
    result["results_after_refused"] = [o.Label for o in runs.result_objects(mechanism)]
    parsed = {}
    for text in ("0.1 ms", "10 us", "10 \u00b5s", "2 min", "1,5 s", "0.25"):
        panel.quantity["Step"].setText(text)
        parsed[text] = panel.settings()["Step"]
    panel.set_settings(Step=1e-5)
    result["parsed_times"] = parsed
    # the tolerances are the adaptive integrators' only: chosen in the list as a user would
    chosen = panel.integrator.currentText()
    enabled = {}
    for name in ("euler", "DOP853", "rk4"):
        panel.integrator.setCurrentIndex(panel.integrator.findText(name))
        in_freecad.process_events()
        enabled[name] = [panel.tolerance[n].isEnabled() for n in sorted(panel.tolerance)]
    panel.integrator.setCurrentIndex(panel.integrator.findText(chosen))
    result["integrators"] = [panel.integrator.itemText(i) for i in range(panel.integrator.count())]
    result["tolerances_enabled"] = enabled

    # -- Cancel a long run: the earlier results stay -----------------------------------------
    panel.set_settings(EndTime=50.0)
    panel.run()
    # the progress is shown a few times a second, not at every poll of the job (each change
    # repaints the panel, CPU the solver's thread needs): watch the bar and the status for 3 s
    updates = []
    panel.progress.valueChanged.connect(lambda value: updates.append(value))
    texts = set()
    t_watch = time.perf_counter()
    while time.perf_counter() - t_watch < 3.0 and not panel.job.done:
        in_freecad.process_events()
        texts.add(panel.status.text())
        time.sleep(0.01)
    result["progress_watch_seconds"] = time.perf_counter() - t_watch
    # the updates of the watch only (the connection stays, and the list grew while the script
    # went on: a CI run counted 8 for a 3.0 s watch)
    result["progress_updates"] = list(updates)
    result["status_texts_while_running"] = sorted(texts)
    result["job_running_after_watch"] = not panel.job.done
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

    # -- Run twice, then the panel's Close button during the run: cancelled, nothing stored ----
    panel.set_settings(EndTime=50.0)
    result["first_of_two_runs"] = panel.run()
    result["second_of_two_runs"] = panel.run()
    job = panel.job
    wait_for(lambda: job.progress > 0.0002 or job.done)
    close = task_close_button()
    result["close_button_found"] = close is not None
    close.click()
    t_close = time.perf_counter()
    in_freecad.process_events()
    result["close_seconds"] = time.perf_counter() - t_close
    in_freecad.wait(0.5)
    result["closed_during_run"] = {
        "dialog_open": bool(FreeCADGui.Control.activeDialog()),
        "current": simulate_panel.current is not None,
        "job_state": job.state, "timer_active": panel.timer.isActive(),
        "results": [o.Label for o in runs.result_objects(mechanism)]}
    FreeCADGui.Selection.clearSelection()
    FreeCADGui.Selection.addSelection(mechanism)
    FreeCADGui.runCommand("MultibodyWB_Simulate")
    in_freecad.process_events()
    panel = simulate_panel.current
    result["settings_after_close"] = setting(simulate_panel.simulation_of(mechanism), "EndTime")

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

    # -- Save while the player shows a frame: the file gets the solids as drawn ---------------
    player.set_frame(len(first) // 3)
    in_freecad.process_events()
    path = os.path.join(out, "engine.FCStd")
    doc.saveAs(path)
    in_freecad.process_events()
    result["at_rest_after_save"] = placements(solids) == rest
    result["player_time_after_save"] = player.t
    result["touched_after_save"] = [o.Name for o in solids if "Touched" in o.State]

    # -- Close: placements back ------------------------------------------------------------------
    player.close()
    in_freecad.process_events()
    result["restored"] = placements(solids) == rest
    result["touched_after_close"] = [o.Name for o in solids if "Touched" in o.State]

    # -- Close, reopen, play without solving ----------------------------------------------------
    FreeCAD.closeDocument(doc.Name)
    from MultibodyWB.objects import result as result_module
    result_module.clear_cache()
    doc = FreeCAD.openDocument(path)
    in_freecad.process_events()
    from MultibodyWB.objects.base import type_of
    mechanism = next(o for o in doc.Objects if type_of(o) == "Multibody::Mechanism")
    reopened = runs.result_objects(mechanism)
    result["results_after_reopen"] = [o.Label for o in reopened]
    result["reopened_rest_difference"] = placement_difference(
        placements(moving_solids(mechanism)), rest)
    FreeCADGui.Selection.clearSelection()
    FreeCADGui.Selection.addSelection(reopened[0])
    from MultibodyWB.solver.run import job as job_module
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

    # -- The played run deleted while playing: the player closes, the solids go back ------------
    player.play()
    in_freecad.wait(0.2)
    doc.openTransaction("Delete")
    doc.removeObject(reopened[0].Name)
    doc.commitTransaction()
    in_freecad.wait(0.2)
    solids = moving_solids(mechanism)
    result["deleted_run"] = {"dialog_open": bool(FreeCADGui.Control.activeDialog()),
                             "current": player_module.current is not None,
                             "at_rest": placement_difference(placements(solids), rest) < 1e-9}
    doc.undo()
    in_freecad.process_events()

    # -- FreeCAD removes the dialog without reject() (another one asked for the task panel) ------
    player = player_module.open_player(mechanism)
    player.set_frame(len(first) // 3)
    FreeCADGui.Control.closeDialog()
    in_freecad.process_events()
    result["player_removed_by_freecad"] = {
        "current": player_module.current is not None,
        "at_rest": placement_difference(placements(solids), rest) < 1e-9}
    panel = simulate_panel.open_panel(mechanism)
    panel.set_settings(EndTime=50.0)
    panel.run()
    job = panel.job
    wait_for(lambda: job.progress > 0.0002 or job.done)
    FreeCADGui.Control.closeDialog()
    in_freecad.wait(0.3)
    result["panel_removed_by_freecad"] = {
        "current": simulate_panel.current is not None, "job_state": job.state,
        "timer_active": panel.timer.isActive(),
        "results": [o.Label for o in runs.result_objects(mechanism)]}

    # -- The document closed while the player plays ----------------------------------------------
    player = player_module.open_player(mechanism)
    player.play()
    in_freecad.wait(0.2)
    FreeCAD.closeDocument(doc.Name)
    in_freecad.wait(0.3)
    result["closed_doc_with_player"] = {"dialog_open": bool(FreeCADGui.Control.activeDialog()),
                                        "current": player_module.current is not None,
                                        "timer_active": player.timer.isActive()}

    # -- The document closed during a run ------------------------------------------------------
    doc = FreeCAD.openDocument(path)
    in_freecad.process_events()
    mechanism = next(o for o in doc.Objects if type_of(o) == "Multibody::Mechanism")
    panel = simulate_panel.open_panel(mechanism)
    panel.set_settings(EndTime=50.0)
    panel.run()
    job = panel.job
    wait_for(lambda: job.progress > 0.0002 or job.done)
    FreeCAD.closeDocument(doc.Name)
    in_freecad.wait(0.5)
    result["closed_doc_during_run"] = {"dialog_open": bool(FreeCADGui.Control.activeDialog()),
                                       "current": simulate_panel.current is not None,
                                       "job_state": job.state,
                                       "timer_active": panel.timer.isActive()}
    return result


in_freecad.run_and_quit(check, watchdog_s=600)
