"""GUI check run inside FreeCAD: the engine saved by the code of commit 21bdf10 (before the FreeCAD
layer was sorted into packages; ``tests/data/engine_21bdf10.FCStd``) opened with today's code.

Opens a copy of the file, activates the workbench and reports: each object's view provider class
(the file names them by module), which symbols are drawn, the problems after a recompute, the
Body panel opened by a double-click (FreeCAD's edit mode), a run through the Simulate command
(stored as a second Result) and the player opened on it; a screenshot of the window.

Started by tests/test_gui_reopen.py; writes its findings as JSON.
"""

import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import FreeCAD  # noqa: E402
import FreeCADGui  # noqa: E402
import in_freecad  # noqa: E402

WORKBENCH = "MultibodyWorkbench"
FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                    "engine_21bdf10.FCStd")


def wait_for(predicate, timeout=240.0):
    t0 = time.perf_counter()
    while not predicate():
        if time.perf_counter() - t0 > timeout:
            raise TimeoutError("waited too long")
        in_freecad.process_events()
        time.sleep(0.01)
    in_freecad.process_events()


def check():
    from MultibodyWB.document import runs
    from MultibodyWB.gui import player, simulate_panel, task_base
    from MultibodyWB.objects.base import type_of
    out = in_freecad.output_dir()
    result = {"freecad_version": FreeCAD.Version()[:3]}
    path = os.path.join(out, "engine_21bdf10.FCStd")
    shutil.copy(FILE, path)
    doc = FreeCAD.openDocument(path)
    FreeCADGui.activateWorkbench(WORKBENCH)
    in_freecad.process_events()
    objects = in_freecad.multibody_objects(doc)
    result["view_providers"] = {
        o.Name: f"{type(o.ViewObject.Proxy).__module__}.{type(o.ViewObject.Proxy).__name__}"
        for o in objects}
    result["visible"] = sorted(o.Name for o in objects if o.ViewObject.Visibility)
    result["drawn"] = sorted(o.Name for o in objects if in_freecad.symbol_box(o) is not None)
    result["built"] = sorted(o.Name for o in objects
                             if getattr(getattr(o.ViewObject.Proxy, "display", None),
                                        "getNumChildren", lambda: 0)())
    for obj in doc.Objects:
        obj.touch()
    doc.recompute()
    mechanism = next(o for o in doc.Objects if type_of(o) == "Multibody::Mechanism")
    result["status"] = mechanism.Status
    result["problems"] = {o.Name: o.Problem for o in objects if getattr(o, "Problem", "")}
    view = FreeCADGui.ActiveDocument.ActiveView
    view.viewIsometric()
    view.fitAll()

    # -- double-click on a body: its panel (edit mode), then Cancel ---------------------------
    crank = doc.getObject("Crank")
    result["double_click"] = bool(crank.ViewObject.Proxy.doubleClicked(crank.ViewObject))
    in_freecad.process_events()
    panel = task_base.current
    result["edit_panel"] = type(panel).__name__ if panel is not None else None
    if panel is not None:
        panel.reject()
        in_freecad.process_events()

    # -- Simulate through the command, as a click on the toolbar --------------------------------
    FreeCADGui.Selection.clearSelection()
    FreeCADGui.Selection.addSelection(mechanism)
    FreeCADGui.runCommand("MultibodyWB_Simulate")
    in_freecad.process_events()
    panel = simulate_panel.current
    result["simulate_panel"] = panel is not None
    panel.set_settings(EndTime=0.005, OutputStep=0.0005)
    result["run_started"] = bool(panel.run())
    wait_for(lambda: not panel.running and not panel.timer.isActive())
    result["status_after_run"] = panel.status.text()
    result["results"] = [o.Name for o in runs.result_objects(mechanism)]
    stored = runs.load(doc.getObject("Result"))
    again = runs.load(runs.latest_result(mechanism))
    result["frames"] = [len(stored.time), len(again.time)]
    result["largest_difference"] = float(abs(again.data - stored.data).max()) \
        if again.data.shape == stored.data.shape else None

    # -- the player on the new run, and a screenshot -----------------------------------------
    panel.close()
    in_freecad.process_events()
    played = player.open_player(mechanism, runs.latest_result(mechanism))
    result["player"] = played is not None
    played.set_frame(len(again.time) - 1)
    in_freecad.wait(0.5)
    result["screenshot"] = in_freecad.grab_main_window("reopened.png")
    played.close()
    in_freecad.process_events()
    return result


in_freecad.run_and_quit(check, watchdog_s=600)
