"""GUI check run inside FreeCAD: the FEM loads command and its task panel, driven as a user
drives them.

The crank-slider engine built from solids, simulated for 20 ms (the gas force peaks at 17.5 ms).
The user clicks the connecting rod's web and the run in the tree, presses FEM loads: the panel
opens on that run and the rod; "Peak of GasForce.magnitude" is chosen, Preview clicked: the
table lists the loads, the arrows are drawn, a screenshot is taken. Add instant; then "Peak of
|Rod.a|", Add instant; Create analysis: two analyses, meshed and solved by CalculiX (when
installed), one undo step. The von Mises stress of the first is shown on its mesh and FEM's own
result task panel is opened on its result: a second screenshot. Then the piston: its crown and
slide markers were picked on an edge and a face of another solid: Preview names the loads that
cannot be placed and the nearest faces.

Started by tests/test_gui_fem_loads.py through ``freecad_env.run_gui_check``; writes its
findings as JSON.
"""

import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import FreeCAD  # noqa: E402
import FreeCADGui  # noqa: E402
import in_freecad  # noqa: E402

WORKBENCH = "MultibodyWorkbench"
COMMAND = "MultibodyWB_FemLoads"
W = in_freecad._widgets_module()


def panel():
    from MultibodyWB.gui import task_fem_loads
    return task_fem_loads.current


def widget(name):
    return panel().form.findChild(W.QWidget, name)


def rows(table):
    return [[table.topLevelItem(r).text(c) for c in range(table.columnCount())]
            for r in range(table.topLevelItemCount())]


def choose(combo_name, text):
    box = widget(combo_name)
    index = box.findText(text)
    if index < 0:
        raise AssertionError(f"{combo_name}: no '{text}' among "
                             f"{[box.itemText(k) for k in range(box.count())]}")
    box.setCurrentIndex(index)
    in_freecad.process_events()


def overlay_arrows(doc):
    scene = FreeCADGui.getDocument(doc.Name).ActiveView.getSceneGraph()
    for k in range(scene.getNumChildren()):
        child = scene.getChild(k)
        if child.getName().getString() == "MultibodyPlayerOverlay":
            # reactions and other loads: the two arrow switches' children
            return [child.getChild(g).getNumChildren() for g in (0, 1)]
    return None


class watch_status:
    """A QTimer ticking every 50 ms while Create analysis runs, noting the time and the
    panel's status text at each tick: ticks while Gmsh or CalculiX run show the GUI free."""

    def __init__(self):
        import time
        from MultibodyWB.gui.qt import QtCore
        self.seen = []
        self.timer = QtCore.QTimer()
        self.timer.setInterval(50)
        self.timer.timeout.connect(lambda: self.seen.append(
            (time.monotonic(), widget("Status").text() if widget("Status").isVisible()
             else "")))
        self.timer.start()

    def stop(self):
        self.timer.stop()


def wait_for_create(p, timeout=300):
    """Process events until the panel's Create analysis has ended."""
    import time
    end = time.monotonic() + timeout
    while p.run is not None and time.monotonic() < end:
        in_freecad.wait(0.05)


def alive(pid):
    """Whether process ``pid`` is still there as gmsh or ccx (running, or a zombie not reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[0].split("(")[-1] in ("gmsh", "ccx")
    except OSError:
        return False


def child_programs():
    """Names of gmsh/ccx processes whose parent is this FreeCAD."""
    me, out = str(os.getpid()), []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/stat") as fh:
                    fields = fh.read().split(")")
                name, ppid = fields[0].split("(")[-1], fields[-1].split()[1]
            except OSError:
                continue
            if ppid == me and name in ("gmsh", "ccx"):
                out.append(name)
    return out


def cancel_during_meshing(doc, p):
    """Create analysis with a fine mesh; Cancel clicked while Gmsh meshes: the document as
    before (objects, undo steps), Gmsh gone, the panel saying so."""
    import time
    out = {}
    before = (sorted(o.Name for o in doc.Objects), doc.UndoCount, list(doc.UndoNames))
    widget("MeshSize").setText("0.8 mm")
    widget("CreateAnalysis").click()
    end = time.monotonic() + 60
    while time.monotonic() < end and "meshing with Gmsh" not in widget("Status").text():
        in_freecad.wait(0.05)
    in_freecad.wait(0.6)
    out["status"] = widget("Status").text()
    out["progress"] = [widget("Progress").value(), widget("Progress").maximum()]
    out["create_enabled"] = widget("CreateAnalysis").isEnabled()
    out["cancel_visible"] = widget("CancelCreate").isVisible()
    process = p.run.process if p.run is not None else None
    out["gmsh_pid"] = int(process.processId()) if process is not None else None
    out["gmsh_running"] = out["gmsh_pid"] is not None and alive(out["gmsh_pid"])
    out["during_objects"] = len(doc.Objects)
    out["shot"] = in_freecad.shot("fem_loads_running.png")
    out["still_meshing"] = "meshing with Gmsh" in widget("Status").text()
    t = time.monotonic()
    widget("CancelCreate").click()
    out["cancel_seconds"] = time.monotonic() - t
    out["running_after_cancel"] = p.run is not None
    out["gmsh_alive_after"] = out["gmsh_pid"] is not None and alive(out["gmsh_pid"])
    out["children_after"] = child_programs()
    out["note"] = widget("Note").text()
    out["same_objects"] = sorted(o.Name for o in doc.Objects) == before[0]
    out["undo"] = [doc.UndoCount, before[1], list(doc.UndoNames) == before[2]]
    out["cancel_visible_after"] = widget("CancelCreate").isVisible()
    out["create_enabled_after"] = widget("CreateAnalysis").isEnabled()
    out["console"] = in_freecad.python_console_text()[-600:]
    widget("MeshSize").setText("4 mm")
    return out


def check():
    from MultibodyWB.document import runs
    from MultibodyWB.examples_fc import crank_slider
    result = {"freecad_version": FreeCAD.Version()[:3],
              "solver": bool(shutil.which("ccx") and shutil.which("gmsh"))}
    FreeCADGui.activateWorkbench(WORKBENCH)
    window = FreeCADGui.getMainWindow()
    result["toolbar"] = [a.objectName() for tb in window.findChildren(W.QToolBar)
                         if tb.windowTitle() == "Multibody simulation" for a in tb.actions()]
    doc = FreeCAD.newDocument("Engine")
    mech = crank_slider.setup(doc)
    run = runs.simulate_mechanism(mech, t_end=0.02)
    doc.clearUndos()
    doc.UndoMode = 1
    FreeCADGui.SendMsgToActiveView("ViewFit")
    in_freecad.wait(0.5)
    # the user clicks the rod's web in the 3D view (a face of it) and the run in the tree
    FreeCADGui.Selection.clearSelection()
    FreeCADGui.Selection.addSelection(doc.getObject("RodWeb"), "Face1")
    FreeCADGui.Selection.addSelection(run)
    FreeCADGui.runCommand(COMMAND)
    in_freecad.wait(0.5)
    p = panel()
    result["panel"] = type(p).__name__ if p is not None else None
    result["result_choice"] = widget("Result").currentText()
    result["body_choice"] = widget("Body").currentText()
    result["peaks"] = [widget("Peak").itemText(k) for k in range(widget("Peak").count())]
    # an instant by its time, typed with its unit
    widget("ByTime").click()
    edit = widget("Time")
    edit.setFocus()
    edit.setText("12 ms")
    edit.editingFinished.emit()
    widget("Preview").click()
    in_freecad.wait(0.3)
    result["time_headline"] = widget("Headline").text()
    result["time_instant"] = p.inst.loads.time
    widget("ByPeak").click()
    choose("Peak", "GasForce.magnitude")
    # the user hides the other parts to see the rod and its loads
    for o in doc.Objects:
        if o.isDerivedFrom("Part::Feature") and o.Name in ("Liner", "PistonBody",
                                                           "WristPinSolid", "Crankcase"):
            o.ViewObject.Visibility = False
    widget("Preview").click()
    in_freecad.wait(0.5)
    result["headline"] = widget("Headline").text()
    result["rows"] = rows(widget("Loads"))
    result["note"] = widget("Note").text()
    result["arrows"] = overlay_arrows(doc)
    result["preview_time"] = p.inst.loads.time
    result["residual"] = list(p.inst.loads.residual())
    result["preview_shot"] = in_freecad.shot("fem_loads_preview.png")
    result["undo_after_preview"] = doc.UndoCount
    widget("AddInstant").click()
    choose("Peak", "Rod.inertia")
    widget("AddInstant").click()
    result["instants"] = [widget("Instants").item(k).text()
                          for k in range(widget("Instants").count())]
    widget("MeshSize").setText("4 mm")
    ticks = watch_status()
    widget("CreateAnalysis").click()
    result["running_after_click"] = p.run is not None
    wait_for_create(p)
    ticks.stop()
    result["ticks"] = ticks.seen
    result["create_note"] = widget("Note").text()
    made = p.made
    result["analyses"] = [an.analysis.Label for an, _ in made]
    result["forces"] = [len(an.forces) for an, _ in made]
    result["checks"] = [None if c is None else {"relative": c.relative,
                                                "max_von_mises": c.max_von_mises,
                                                "nodes": c.nodes} for _, c in made]
    result["undo_names"] = list(doc.UndoNames)
    result["console"] = in_freecad.python_console_text()[-3000:]
    result["cancel"] = cancel_during_meshing(doc, p)
    # FEM's own result viewer on the first analysis's result
    an, chk = made[0]
    in_freecad.click("Close")
    result["panel_after_close"] = panel() is not None
    if chk is not None:
        for o in doc.Objects:
            if o.isDerivedFrom("Part::Feature") and o.ViewObject is not None:
                o.ViewObject.Visibility = False
        for o in doc.Objects:           # only this result's mesh
            if o.isDerivedFrom("Fem::FemMeshObject"):
                o.ViewObject.Visibility = o is chk.result.Mesh
        result["result_mesh"] = chk.result.Mesh.Name
        FreeCADGui.ActiveDocument.setEdit(chk.result.Name)
        in_freecad.wait(2.0)
        dialog = FreeCADGui.Control.activeDialog()
        result["fem_result_dialog"] = bool(dialog)
        # the von Mises button of FEM's result panel, as a user clicks it
        for button in window.findChildren(W.QRadioButton):
            if button.objectName() in ("rb_vm_stress",) and button.isVisible():
                button.click()
                result["clicked_von_mises"] = True
        in_freecad.wait(0.5)
        result["result_shot"] = in_freecad.shot("fem_loads_result.png")
        FreeCADGui.Control.closeDialog()
        in_freecad.wait(0.3)
    # the piston: loads on markers not picked on the piston's faces
    for o in doc.Objects:
        if o.isDerivedFrom("Part::Feature") and o.ViewObject is not None:
            o.ViewObject.Visibility = o.Name in ("PistonBody",)
    FreeCADGui.Selection.clearSelection()
    FreeCADGui.Selection.addSelection(doc.getObject("Piston"))
    FreeCADGui.runCommand(COMMAND)
    in_freecad.wait(0.5)
    widget("ByPeak").click()
    choose("Peak", "GasForce.magnitude")
    widget("Preview").click()
    in_freecad.wait(0.3)
    result["piston_body"] = widget("Body").currentText()
    result["piston_note"] = widget("Note").text()
    result["piston_rows"] = rows(widget("Loads"))
    widget("CreateAnalysis").click()
    wait_for_create(panel())
    result["piston_create_note"] = widget("Note").text()
    result["analyses_after_piston"] = sorted(o.Label for o in doc.Objects
                                             if o.TypeId == "Fem::FemAnalysisPython"
                                             or o.TypeId == "Fem::FemAnalysis")
    in_freecad.click("Close")
    return result


in_freecad.run_and_quit(check, watchdog_s=400)
