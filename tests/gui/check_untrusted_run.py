"""GUI check run inside FreeCAD: a run whose own check calls it untrustworthy (issue 34).

A pendulum (an arm of 100 mm on a revolute hinge about a horizontal axis, drawn level, built from
two Part boxes with the factory functions the commands call) with the settings rk4, Step 0.05 s,
EndTime 2 s: the run does not blow up, but its energy balance does not close (1.4 % of the
energies' scale; 1e-3 is trusted). The mechanism is selected, the Simulate command opens its
panel, Run is clicked (``.click()``); then the Step field is typed 0.01 s and Run clicked again
(a trusted run: 5e-6). For each: the panel's status, its colour, the messages, the stored runs'
list (text, colour, tooltip), the Result's ``Untrusted`` and ``Label2``; screenshots of the main
window. The document is saved, closed and reopened, and the Simulate panel opened on it again:
the list and the Results as before. Finally a copy saved without the ``Untrusted`` property (a
file from before it) is reopened: the property comes back from the run's warnings. Before that,
the untrusted run is selected in the reopened panel and Play clicked: the player's label. The
first Run counts the solver's start stages it makes (one: the panel starts, the job solves).

Started by tests/test_gui_untrusted.py; writes its findings as JSON.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import FreeCAD  # noqa: E402
import FreeCADGui  # noqa: E402
import in_freecad  # noqa: E402

WORKBENCH = "MultibodyWorkbench"


def wait_for(predicate, timeout=120.0):
    t0 = time.perf_counter()
    while not predicate():
        if time.perf_counter() - t0 > timeout:
            raise TimeoutError("waited too long")
        in_freecad.process_events()
        time.sleep(0.002)
    in_freecad.process_events()
    return time.perf_counter() - t0


def build(doc):
    import Part
    from MultibodyWB.document import factory
    base = doc.addObject("Part::Feature", "Base")
    base.Shape = Part.makeBox(20, 20, 20, FreeCAD.Vector(-10, -30, -10))
    arm = doc.addObject("Part::Feature", "Arm")
    arm.Shape = Part.makeBox(100, 10, 10, FreeCAD.Vector(0, -5, -5))
    doc.recompute()
    mechanism = factory.make_mechanism(doc, "Pendulum")
    ground = factory.make_body(doc, mechanism, [base], ground=True)
    body = factory.make_body(doc, mechanism, [arm])
    axis = FreeCAD.Placement(FreeCAD.Vector(0, 0, 0), FreeCAD.Rotation(FreeCAD.Vector(1, 0, 0), 90))
    m_ground = factory.make_marker(doc, ground, None, axis, name="PivotG")
    m_arm = factory.make_marker(doc, body, None, axis, name="PivotA")
    factory.make_hinge(doc, mechanism, "revolute", m_arm, m_ground, name="Pivot")
    doc.recompute()
    return mechanism


def open_panel(mechanism):
    from MultibodyWB.gui import simulate_panel
    FreeCADGui.Selection.clearSelection()
    FreeCADGui.Selection.addSelection(mechanism)
    FreeCADGui.runCommand("MultibodyWB_Simulate")
    in_freecad.process_events()
    return simulate_panel.current


def run_list(panel):
    out = []
    for i in range(panel.run_list.count()):
        item = panel.run_list.item(i)
        out.append({"text": item.text(), "color": item.foreground().color().name(),
                    "tooltip": item.toolTip()[:300]})
    return out


def press_run(panel, shot_name, wait_s=900.0):
    panel.run_button.click()
    started = panel.running
    # the first run may wait for the kernels' compile (minutes on a loaded machine)
    wait_for(lambda: not panel.running and not panel.timer.isActive(), timeout=wait_s)
    result_obj = panel.result_object
    out = {"started": started,
           "job_state": panel.job.state if panel.job is not None else None,
           "status": panel.status.text(),
           "status_style": panel.status.styleSheet(),
           "status_color": panel.status.palette().color(panel.status.foregroundRole()).name(),
           "messages": panel.messages.toPlainText(),
           "runs": run_list(panel),
           "result": result_obj.Name if result_obj is not None else None,
           "untrusted": list(result_obj.Untrusted) if result_obj is not None else None,
           "label2": result_obj.Label2 if result_obj is not None else None}
    out["shot"] = in_freecad.grab_main_window(shot_name, size=(1280, 960))
    grab_panel(panel, shot_name)
    return out


def grab_panel(panel, name):
    """The panel's Run box and its stored runs, each as a picture beside ``name``."""
    base = os.path.join(in_freecad.output_dir(), name[:-4])
    panel.run_form.grab().save(base + "_run_box.png", "PNG")
    panel.runs_form.grab().save(base + "_runs.png", "PNG")


def check():
    result = {"freecad_version": FreeCAD.Version()[:3]}
    FreeCADGui.activateWorkbench(WORKBENCH)
    doc = FreeCAD.newDocument("Untrusted")
    mechanism = build(doc)
    from MultibodyWB.gui import simulate_panel
    sim = simulate_panel.simulation_of(mechanism)
    sim.EndTime = "2 s"
    sim.Step = "0.05 s"
    sim.OutputStep = "0.05 s"
    sim.Integrator = "rk4"
    doc.recompute()

    # the solver's start stage (drawing check, resolve) is made once per Run: the panel starts
    # the run and the job solves it (a spy counts the calls; it changes nothing)
    from MultibodyWB.solver.analysis import start as solver_start
    prepare, starts = solver_start.prepare, []

    def counted(*args, **kwargs):
        starts.append(1)
        return prepare(*args, **kwargs)

    solver_start.prepare = counted
    panel = open_panel(mechanism)
    try:
        result["untrusted_run"] = press_run(panel, "untrusted_run.png")
    finally:
        solver_start.prepare = prepare
    result["starts_per_run"] = len(starts)
    edit = panel.quantity["Step"]                   # typed, as the status advises
    edit.setFocus()
    edit.selectAll()
    edit.setText("0.01 s")
    edit.textEdited.emit("0.01 s")
    edit.editingFinished.emit()
    in_freecad.process_events()
    result["trusted_run"] = press_run(panel, "trusted_run.png")
    panel.close()
    in_freecad.process_events()

    from MultibodyWB.document import runs
    path = os.path.join(in_freecad.output_dir(), "untrusted.FCStd")
    name = mechanism.Name
    doc.saveAs(path)
    FreeCAD.closeDocument(doc.Name)
    in_freecad.process_events()
    doc = FreeCAD.openDocument(path)
    in_freecad.process_events()
    mechanism = doc.getObject(name)
    result["reopened"] = {o.Label: {"untrusted": list(o.Untrusted), "label2": o.Label2}
                          for o in runs.result_objects(mechanism)}
    panel = open_panel(mechanism)
    result["reopened_runs"] = run_list(panel)
    result["reopened_shot"] = in_freecad.grab_main_window("untrusted_reopened.png")
    grab_panel(panel, "untrusted_reopened.png")
    # the user selects the untrusted run and presses Play: the player says it too
    panel.run_list.clearSelection()
    panel.run_list.item(0).setSelected(True)
    panel.runs_form.findChild(type(panel.run_button), "Play").click()
    in_freecad.process_events()
    from MultibodyWB.gui import player
    result["player_label"] = player.current.run_label.text()
    result["player_shot"] = in_freecad.grab_main_window("untrusted_player.png")
    player.current.close()
    in_freecad.process_events()

    # a file from before the property: Untrusted removed, saved, reopened
    for obj in runs.result_objects(mechanism):
        obj.setPropertyStatus("Untrusted", "-LockDynamic")
        obj.removeProperty("Untrusted")
    old = os.path.join(in_freecad.output_dir(), "before_untrusted.FCStd")
    doc.saveAs(old)
    FreeCAD.closeDocument(doc.Name)
    doc = FreeCAD.openDocument(old)
    mechanism = doc.getObject(name)
    result["old_file"] = {o.Label: list(o.Untrusted) for o in runs.result_objects(mechanism)}
    return result


in_freecad.run_and_quit(check, watchdog_s=1100)
