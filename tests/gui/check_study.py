"""GUI check run inside FreeCAD: the Study command and its task panel, driven as a user drives
them (issue 15).

The link pendulum (:mod:`MultibodyWB.examples_fc.link_pendulum`, no Study yet): a box whose
length is the spreadsheet cell ``LinkLength``. The user selects the mechanism and presses Design
study; the Study is made (one undo step) and its panel opens. A misspelt alias and Run: a message
box names the row and the field, nothing runs. The row corrected (80 mm to 120 mm, 5 levels), the
period as objective, a speed limit as constraint, 2 workers: Run starts a Dask LocalCluster from
inside FreeCAD; the status line counts the variants; the table and the plot appear; the document
is as it was; Plots shows them in the plot dock. Apply writes the best variant (one undo step,
Undo takes it back); Keep as Result stores a variant's run. A longer grid is cancelled.
Screenshots: the panel with its results, the plot dock, and after Apply.

Started by tests/test_gui_study.py through ``freecad_env.run_freecad_gui``.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import FreeCAD  # noqa: E402
import FreeCADGui  # noqa: E402
import in_freecad  # noqa: E402

WORKBENCH = "MultibodyWorkbench"
W = in_freecad._widgets_module()
COMMAND = "MultibodyWB_Study"


def select(doc, *objects):
    FreeCADGui.Selection.clearSelection()
    for obj in objects:
        FreeCADGui.Selection.addSelection(doc.Name, obj.Name)
    in_freecad.process_events()


def click(panel, name):
    button = panel.run_form.findChild(W.QPushButton, name) or \
        panel.results_form.findChild(W.QPushButton, name) or \
        panel.study_form.findChild(W.QPushButton, name)
    button.click()
    in_freecad.process_events()


def click_expecting_box(panel, name):
    """Click ``name`` and close the message box it opens; the box's texts."""
    found = []
    QtCore = in_freecad.QtCore
    QtCore.QTimer.singleShot(50, lambda: in_freecad.dismiss_modal_dialogs(found))
    click(panel, name)
    in_freecad.wait(0.6)
    return found


def wait_done(panel, limit=240.0):
    """Wait for the panel's study to end; the status lines seen meanwhile."""
    seen = []
    end = time.monotonic() + limit
    in_freecad.wait(0.2)
    while panel.running and time.monotonic() < end:
        in_freecad.wait(0.1)
        text = panel.status.text()
        if not seen or seen[-1] != text:
            seen.append(text)
    return seen


def state(doc):
    link = doc.getObject("Link")
    return [link.Length.Value, round(link.Shape.Volume, 6),
            doc.getObject("Spreadsheet").getContents("A1")]


def type_cell(table, row, column, text):
    """Type into a cell of a table as a user (the item's text set, as the editor commits it)."""
    table.setCurrentCell(row, column)
    table.item(row, column).setText(text)
    in_freecad.process_events()


def show_tasks(width):
    """Bring the Tasks tab (0.20's combo view; 1.0's Tasks dock) to the front and widen its dock
    so that the panel's table and plot are readable."""
    mw = FreeCADGui.getMainWindow()
    for tabs in mw.findChildren(W.QTabWidget):
        for i in range(tabs.count()):
            if tabs.tabText(i).replace("&", "") == "Tasks":
                tabs.setCurrentIndex(i)
    docks = [d for d in mw.findChildren(W.QDockWidget)
             if d.objectName() in ("Combo View", "Tasks", "Model") and d.isVisible()]
    if docks:
        mw.resizeDocks(docks, [width] * len(docks), in_freecad.QtCore.Qt.Horizontal)
    in_freecad.wait(0.3)


def check():
    from MultibodyWB.document import runs
    from MultibodyWB.examples_fc import link_pendulum
    from MultibodyWB.gui import task_study
    from MultibodyWB.objects.base import type_of
    result = {"freecad_version": FreeCAD.Version()[:3]}
    FreeCADGui.activateWorkbench(WORKBENCH)
    doc = FreeCAD.newDocument("Study")
    mech = link_pendulum.setup(doc, study=False)
    doc.recompute()
    doc.clearUndos()
    doc.UndoMode = 1
    in_freecad.wait(0.5)
    FreeCADGui.SendMsgToActiveView("ViewFit")
    before = state(doc)
    result["before"] = before
    result["toolbar"] = [
        a.objectName() for tb in FreeCADGui.getMainWindow().findChildren(W.QToolBar)
        if tb.windowTitle() == "Multibody simulation" for a in tb.actions()]

    # the user selects the mechanism and presses Design study
    select(doc, mech)
    from MultibodyWB.commands import study as study_command
    result["active"] = bool(study_command.CreateStudy().IsActive())
    names = {o.Name for o in doc.Objects}
    FreeCADGui.runCommand(COMMAND)
    in_freecad.wait(0.5)
    made = [o for o in doc.Objects if o.Name not in names]
    result["made"] = [type_of(o) for o in made]
    result["undo_after_command"] = list(doc.UndoNames)
    st = made[0]
    panel = task_study.current
    result["panel"] = type(panel).__name__ if panel is not None else None
    result["in_mechanism"] = st in mech.Group
    result["console"] = "make_study" in in_freecad.python_console_text()

    # a misspelt alias: Run says which row and field, nothing runs
    table = panel.parameters
    type_cell(table, 0, 0, "Spreadsheet.LinkLenght")
    type_cell(table, 0, 1, "80 mm")
    type_cell(table, 0, 2, "120 mm")
    type_cell(table, 0, 3, "5")
    panel.objectives.setPlainText("period(Pivot.rz)")
    panel.constraints.setPlainText("max(Pivot.rz_rate) <= 400 deg/s")
    panel.workers.setValue(2)
    result["bad_box"] = click_expecting_box(panel, "Run")
    result["bad_running"] = panel.running
    result["bad_messages"] = panel.messages.toPlainText()
    result["bad_table"] = st.Table

    # corrected: Run on a local Dask cluster of two workers, port 8787 (the scheduler's HTTP
    # server's default) taken as by another cluster on this machine: no warning in red
    import socket
    taken = socket.socket()
    try:
        taken.bind(("", 8787))
        taken.listen(1)
        result["port_taken_here"] = True
    except OSError:
        result["port_taken_here"] = False            # taken already
    type_cell(table, 0, 0, "Spreadsheet.LinkLength")
    undo_before = doc.UndoCount
    t0 = time.perf_counter()
    click(panel, "Run")
    result["started"] = panel.running
    result["status_seen"] = wait_done(panel)
    result["wall"] = time.perf_counter() - t0
    result["status"] = panel.status.text()
    import signal
    result["sigpipe_ignored"] = signal.getsignal(signal.SIGPIPE) == signal.SIG_IGN
    import multiprocessing
    in_freecad.wait(0.5)
    result["children_after"] = len(multiprocessing.active_children())
    result["messages"] = panel.messages.toPlainText()
    result["run_console"] = "MultibodyWB.document.study.run(" in in_freecad.python_console_text()
    result["after"] = state(doc)
    taken.close()
    # each variant's model as the study exported it: the mass follows the recomputed box
    from MultibodyWB.document import study as dstudy
    kept = dstudy.stored_table(st)
    result["masses"] = [dstudy.variant_model(st, r.values, kept.paths).body("Link body").mass
                        for r in kept.rows]
    result["after_masses"] = state(doc)
    result["undo_after_run"] = list(doc.UndoNames)[:doc.UndoCount - undo_before]
    res = panel.results
    result["headers"] = [res.horizontalHeaderItem(c).text() for c in range(res.columnCount())]
    result["cells"] = [[res.item(r, c).text() for c in range(res.columnCount())]
                       for r in range(res.rowCount())]
    axes = panel.figure.axes
    result["plot"] = {"axes": len(axes),
                      "points": [len(line.get_xdata()) for line in axes[0].get_lines()]
                      if axes else [],
                      "xlabel": axes[0].get_xlabel() if axes else "",
                      "ylabel": axes[0].get_ylabel() if axes else ""}
    result["stored"] = {"best": st.Best, "units": list(st.Units),
                        "rows": st.Table.count("\n") - 1}
    show_tasks(560)
    for area in FreeCADGui.getMainWindow().findChildren(W.QScrollArea):
        if area.isAncestorOf(panel.canvas):           # scrolled down to the results
            area.ensureWidgetVisible(panel.canvas)
    in_freecad.wait(0.3)
    result["shot_results"] = in_freecad.grab_main_window("study_results.png", size=(1280, 1000))

    # the plots in the plot dock: objective against the parameter, parallel coordinates
    click(panel, "Plots")
    in_freecad.wait(0.5)
    dock = FreeCADGui.getMainWindow().findChild(W.QDockWidget, task_study.DOCK_NAME)
    figure = getattr(panel, "dock_figure", None)
    result["dock"] = {"visible": bool(dock is not None and dock.isVisible()),
                      "axes": [len(a.get_lines()) for a in figure.axes] if figure else []}
    result["shot_dock"] = in_freecad.grab_main_window("study_dock.png", size=(1280, 1000))

    # Apply the best (no row selected): one undo step; Undo puts the length back
    count = doc.UndoCount
    click(panel, "Apply")
    in_freecad.wait(0.3)
    result["applied"] = state(doc)
    result["undo_after_apply"] = [doc.UndoCount - count, list(doc.UndoNames)[:1]]
    result["apply_console"] = "apply_variant(" in in_freecad.python_console_text()
    FreeCADGui.SendMsgToActiveView("ViewFit")
    result["shot_applied"] = in_freecad.grab_main_window("study_applied.png", size=(1280, 1000))
    doc.undo()
    doc.recompute()
    result["after_undo"] = state(doc)

    # Keep as Result: the third row (100 mm) run again and stored
    res.selectRow(2)
    in_freecad.process_events()
    click(panel, "Keep")
    in_freecad.wait(0.3)
    kept = panel.result_object
    result["kept"] = None if kept is None else {
        "type": type_of(kept), "label2": kept.Label2, "frames": kept.Frames,
        "in_mechanism": kept in mech.Group,
        "period_column": "Pivot.rz" in runs.load(kept).names}
    result["after_keep"] = state(doc)

    # a longer grid, cancelled after a few variants: the outstanding ones stop
    type_cell(table, 0, 3, "60")
    click(panel, "Run")
    end = time.monotonic() + 120
    while panel.running and panel.state.get("done", 0) < 3 and time.monotonic() < end:
        in_freecad.wait(0.05)
    in_freecad.wait(0.6)                        # the rows shown as they arrive
    result["live"] = {"running": panel.running, "rows": panel.results.rowCount(),
                      "status": panel.status.text()}
    t1 = time.perf_counter()
    click(panel, "Cancel")
    result["cancel_answer"] = panel.status.text()      # what the click itself shows
    wait_done(panel)
    result["cancel_s"] = time.perf_counter() - t1
    result["cancel_status"] = panel.status.text()
    result["cancel_rows"] = panel.results.rowCount()
    result["after_cancel"] = state(doc)
    # closed while a study runs: cancelled, the document put back, the table as it was
    table_before = st.Table
    click(panel, "Run")
    end = time.monotonic() + 120
    while panel.running and panel.state.get("done", 0) < 2 and time.monotonic() < end:
        in_freecad.wait(0.05)
    result["close_while_running"] = {"running": panel.running}
    t2 = time.perf_counter()
    in_freecad.click("Close")
    result["close_while_running"].update(
        seconds=time.perf_counter() - t2, closed=task_study.current is None,
        state=state(doc), table_kept=st.Table == table_before)
    in_freecad.wait(2.0)
    import multiprocessing
    result["close_while_running"]["children"] = len(multiprocessing.active_children())
    result["closed"] = task_study.current is None

    # saved, closed, reopened: the Study's icon, and a double-click shows its stored table
    path = os.path.join(in_freecad.output_dir(), "study.FCStd")
    name = st.Name
    doc.saveAs(path)
    FreeCAD.closeDocument(doc.Name)
    reopened = FreeCAD.openDocument(path)
    in_freecad.wait(0.5)
    again = reopened.getObject(name)
    result["reopened"] = {
        "view_provider": type(again.ViewObject.Proxy).__name__,
        "icon": os.path.basename(again.ViewObject.Proxy.getIcon())}
    again.ViewObject.doubleClicked()
    in_freecad.wait(0.5)
    panel = task_study.current
    result["reopened"]["panel"] = panel is not None and panel.study == again
    if panel is not None:
        result["reopened"]["rows"] = panel.results.rowCount()
        result["reopened"]["parameter"] = [panel.parameters.item(0, c).text()
                                           for c in range(5)]
        in_freecad.click("Close")
    result["report"] = in_freecad.report_view_text()[-3000:]
    return result


in_freecad.run_and_quit(check, watchdog_s=600)
