"""GUI check run inside FreeCAD: the Study and FEM loads panels at FreeCAD's default combo view
width, the study's objectives written with a hinge's label, and every number in the document's
units (issue 32 items 3, 6 and 8; issue 33 item 5).

Study: the link pendulum (:mod:`MultibodyWB.examples_fc.link_pendulum`) with its pivot relabelled
``Link – Base revolute`` (an en-dash, as FreeCAD's automatic labels have) and a spring on it. The
user selects the mechanism and presses Design study; the panel at the default width is measured
(its content's minimum width against the task view's, buttons and labels cut off) and shot; the
help on objectives is opened (its button clicked). An objective with a wrong call
(``rms(x, x, x)``) and Run: a message box names the objective, nothing runs. Then the row
``Pivot.StiffnessRz = 1 N*m/rad : 3 N*m/rad : 3``, the objective ``period(Link – Base
revolute.rz)`` (the label), the constraint ``max(Pivot.rz) <= 40 deg`` (the hinge's Name), one
worker, Run: the table's headers and cells (units), the progress
bar's place (above the fold?) and a screenshot.

FEM loads: the engine's connecting rod (:mod:`MultibodyWB.examples_fc.crank_slider`), a short
run; the rod's face and the run selected, FEM loads pressed, Preview clicked: the loads table's
texts (torques in N·m), the panel measured and shot at the default width.

Started by tests/test_gui_study_fem_panels.py; writes its findings as JSON.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import FreeCAD  # noqa: E402
import FreeCADGui  # noqa: E402
import in_freecad  # noqa: E402

W = in_freecad._widgets_module()
WORKBENCH = "MultibodyWorkbench"
LABEL = "Link – Base revolute"


def task_view():
    return in_freecad.task_view()


def show_tasks():
    """The Tasks tab in front (0.20's combo view), the dock left at its default width."""
    mw = FreeCADGui.getMainWindow()
    for tabs in mw.findChildren(W.QTabWidget):
        for i in range(tabs.count()):
            if tabs.tabText(i).replace("&", "") == "Tasks":
                tabs.setCurrentIndex(i)
    in_freecad.wait(0.3)


def button_needs(b):
    text = b.text().replace("&&", "\0").replace("&", "").replace("\0", "&")
    need = b.fontMetrics().horizontalAdvance(text) + 12
    if not b.icon().isNull():
        need += b.iconSize().width() + 4
    return need


def measure(key, forms):
    """The panel's fit in the task view: widths, cut buttons and labels, what lies below the
    fold; screenshots of the main window and of the content."""
    for _ in range(4):
        in_freecad.process_events()
    view = task_view()
    content = view.widget()
    viewport = view.viewport()
    r = {"viewport_width": viewport.width(), "viewport_height": viewport.height(),
         "content_min_width": content.minimumSizeHint().width(),
         "forms_min_width": [f.minimumSizeHint().width() for f in forms],
         "hscroll": view.horizontalScrollBar().maximum() > 0}
    cut = []
    right = viewport.mapToGlobal(viewport.rect().topRight()).x()
    for b in content.findChildren(W.QAbstractButton):
        if not b.isVisible() or isinstance(b, W.QToolButton) and not b.text():
            continue
        if b.width() < button_needs(b):
            cut.append(f"button '{b.text()}': {b.width()} px < {button_needs(b)} px")
        elif b.mapToGlobal(b.rect().topRight()).x() > right + 1:
            cut.append(f"button '{b.text()}': beyond the right edge")
    for lab in content.findChildren(W.QLabel):
        if not lab.isVisible() or lab.wordWrap() or not lab.text():
            continue
        if lab.width() + 1 < lab.minimumSizeHint().width():
            cut.append(f"label '{lab.text()[:40]}': {lab.width()} px < "
                       f"{lab.minimumSizeHint().width()} px")
    for w in content.findChildren(W.QWidget):
        if w.isVisible() and w.mapToGlobal(w.rect().topRight()).x() > right + 1 and \
                not isinstance(w, (W.QScrollBar,)) and w.parentWidget() is not None and \
                not isinstance(w.parentWidget(), W.QAbstractScrollArea) and \
                w.objectName() not in ("qt_scrollarea_viewport",):
            if not any(isinstance(a, W.QAbstractScrollArea) for a in _ancestors(w, content)):
                cut.append(f"{w.metaObject().className()} '{w.objectName()}': beyond the "
                           "right edge")
    r["cut"] = cut
    r["shot"] = in_freecad.grab_main_window(f"panel_{key}.png", size=None)["path"]
    path = os.path.join(in_freecad.output_dir(), f"panel_{key}_content.png")
    content.grab().save(path)
    r["shot_content"] = path
    return r


def _ancestors(w, stop):
    out = []
    p = w.parentWidget()
    while p is not None and p is not stop:
        out.append(p)
        p = p.parentWidget()
    return out


def below_fold(widget):
    """Whether ``widget``'s top is below the task view's visible part (scrolled to the top)."""
    view = task_view()
    view.verticalScrollBar().setValue(0)
    in_freecad.process_events()
    top = widget.mapTo(view.viewport(), in_freecad.QtCore.QPoint(0, 0)).y()
    return {"top": top, "viewport_height": view.viewport().height(),
            "below": top + 10 > view.viewport().height()}


def dismiss_box_after(found):
    in_freecad.QtCore.QTimer.singleShot(50, lambda: in_freecad.dismiss_modal_dialogs(found))


def study_part(result):
    from MultibodyWB.examples_fc import link_pendulum
    from MultibodyWB.gui import task_study
    doc = FreeCAD.newDocument("Study")
    mech = link_pendulum.setup(doc, study=False)
    pivot = doc.getObject("Pivot")
    pivot.Label = LABEL
    pivot.StiffnessRz = "2 N*m/rad"
    doc.recompute()
    doc.clearUndos()
    doc.UndoMode = 1
    FreeCADGui.SendMsgToActiveView("ViewFit")
    FreeCADGui.Selection.clearSelection()
    FreeCADGui.Selection.addSelection(doc.Name, mech.Name)
    FreeCADGui.runCommand("MultibodyWB_Study")
    in_freecad.wait(0.8)
    show_tasks()
    panel = task_study.current
    result["study_panel"] = panel is not None
    forms = panel.form
    result["study_open"] = measure("study_open", forms)
    # the help on objectives, opened by its button
    help_button = panel.study_form.findChild(W.QAbstractButton, "ObjectivesHelp")
    result["help_button"] = help_button is not None
    if help_button is not None:
        help_button.click()
        in_freecad.wait(0.3)
        help_label = panel.study_form.findChild(W.QLabel, "ObjectivesHelpText")
        result["help"] = {"visible": bool(help_label is not None and help_label.isVisible()),
                          "text": help_label.text() if help_label is not None else ""}
        result["study_help"] = measure("study_help", forms)
        help_button.click()
        in_freecad.wait(0.2)
    result["objectives_tip"] = panel.objectives.toolTip()
    # a parameter row and a wrong call: refused naming the objective, nothing runs
    table = panel.parameters
    for c, text in enumerate(("Pivot.StiffnessRz", "1 N*m/rad", "3 N*m/rad", "3")):
        table.setCurrentCell(0, c)
        table.item(0, c).setText(text)
    panel.objectives.setPlainText(f"rms({LABEL}.rz, {LABEL}.rz, {LABEL}.rz)")
    panel.workers.setValue(1)
    found = []
    dismiss_box_after(found)
    panel.run_button.click()
    in_freecad.wait(1.0)
    result["wrong_call"] = {"box": found, "running": panel.running, "table": st_table(panel),
                            "messages": panel.messages.toPlainText()}
    # the objectives with the label and the Name, a constraint in degrees: Run
    panel.objectives.setPlainText(f"period({LABEL}.rz)")
    panel.constraints.setPlainText("max(Pivot.rz) <= 40 deg")
    found = []
    dismiss_box_after(found)
    panel.run_button.click()
    in_freecad.wait(0.5)
    result["progress_fold"] = below_fold(panel.progress)
    result["started"] = panel.running
    end = time.monotonic() + 400
    while panel.running and time.monotonic() < end:
        in_freecad.wait(0.2)
    result["run_box"] = found
    result["status"] = panel.status.text()
    result["messages"] = panel.messages.toPlainText()
    res = panel.results
    result["headers"] = [res.horizontalHeaderItem(c).text() for c in range(res.columnCount())]
    result["header_tips"] = [res.horizontalHeaderItem(c).toolTip()
                             for c in range(res.columnCount())]
    result["cells"] = [[res.item(r, c).text() if res.item(r, c) else ""
                        for c in range(res.columnCount())] for r in range(res.rowCount())]
    result["table_columns_visible"] = [
        res.columnViewportPosition(c) + res.columnWidth(c) <= res.viewport().width() + 1
        for c in range(res.columnCount())]
    axes = panel.figure.axes
    result["ylabel"] = axes[0].get_ylabel() if axes else ""
    result["xlabel"] = axes[0].get_xlabel() if axes else ""
    result["study_done"] = measure("study_done", forms)
    in_freecad.click("Close")
    in_freecad.wait(0.5)


def st_table(panel):
    return panel.study.Table


def fem_part(result):
    from MultibodyWB.document import runs
    from MultibodyWB.examples_fc import crank_slider
    from MultibodyWB.gui import task_fem_loads
    doc = FreeCAD.newDocument("Engine")
    mech = crank_slider.setup(doc)
    run = runs.simulate_mechanism(mech, t_end=0.02)
    doc.clearUndos()
    doc.UndoMode = 1
    FreeCADGui.SendMsgToActiveView("ViewFit")
    in_freecad.wait(0.5)
    FreeCADGui.Selection.clearSelection()
    FreeCADGui.Selection.addSelection(doc.getObject("RodWeb"), "Face1")
    FreeCADGui.Selection.addSelection(run)
    FreeCADGui.runCommand("MultibodyWB_FemLoads")
    in_freecad.wait(0.8)
    show_tasks()
    p = task_fem_loads.current
    result["fem_panel"] = p is not None
    p.form.findChild(W.QPushButton, "Preview").click()
    in_freecad.wait(0.5)
    table = p.form.findChild(W.QTreeWidget, "Loads")
    rows = []
    for i in range(table.topLevelItemCount()):
        item = table.topLevelItem(i)
        rows.append([item.text(c) for c in range(table.columnCount())])
    result["fem_rows"] = rows
    result["fem_headers"] = [table.headerItem().text(c) for c in range(table.columnCount())]
    result["fem_table_fold"] = below_fold(table)
    result["fem"] = measure("fem_preview", [p.form])
    in_freecad.click("Close") or in_freecad.click("Cancel")
    in_freecad.wait(0.3)


def formatter_part(result):
    """The player's text of loads (the function its coupler lines and arrow legend use)."""
    from MultibodyWB.gui.player import quantity_text
    result["player_texts"] = {
        "tiny_torque": quantity_text(1.6e-19, "N m"),
        "tiny_torque_of_a_run": quantity_text(3e-13, "N m", 2.5),
        "torque": quantity_text(0.0021, "N m"),
        "tooth_force_round_off": quantity_text(2e-15, "N", 40.0),
        "force": quantity_text(12.5, "N"),
        "length": quantity_text(0.35, "m"),
    }


def check():
    result = {"freecad_version": FreeCAD.Version()[:3]}
    FreeCADGui.activateWorkbench(WORKBENCH)
    in_freecad.wait(0.5)
    formatter_part(result)
    study_part(result)
    fem_part(result)
    result["report"] = in_freecad.report_view_text()[-3000:]
    return result


in_freecad.run_and_quit(check, watchdog_s=900)
