"""GUI check run inside FreeCAD: a four-bar built step by step through the commands (the selection
set as a click sets it), the mechanism's status after each step (no red error in the report view
while building; "1 degree of freedom" at the end), greyed-out commands saying why, then the
Mechanism's task panel opened by a double-click in the tree: a free-DOF slider moved through its
signal moves the solids with the loop closed; Cancel puts the drawn pose back.

Four-bar (crank-rocker, mm): ground pivots A (0, 0) and D (150, 0) in a 10 mm plate below z = 0;
crank A-B 40 drawn at 90 deg and rocker D-C 100 on the plate (z 0..10), coupler B-C 120 on top
(z 10..20). Links are boxes 16 mm wide with 8 mm bores; the hinges are picked on the bores'
circular edges where two parts touch.

Started by tests/test_fc_gui_status.py through ``freecad_env.run_freecad_gui``; writes JSON.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import FreeCAD  # noqa: E402
import FreeCADGui  # noqa: E402
import in_freecad  # noqa: E402
import numpy as np  # noqa: E402

WORKBENCH = "MultibodyWorkbench"
A, D = np.array([0.0, 0.0]), np.array([150.0, 0.0])
CRANK, COUPLER, ROCKER = 40.0, 120.0, 100.0
BORE = 4.0
WIDTH, THICK, OVERHANG = 16.0, 10.0, 10.0


def geometry():
    B = A + CRANK * np.array([0.0, 1.0])
    # C: |C - B| = COUPLER, |C - D| = ROCKER, the upper solution
    d = np.linalg.norm(D - B)
    a = (COUPLER ** 2 - ROCKER ** 2 + d ** 2) / (2 * d)
    h = np.sqrt(COUPLER ** 2 - a ** 2)
    e = (D - B) / d
    n = np.array([-e[1], e[0]])
    C = B + a * e + h * n
    if C[1] < 0:
        C = B + a * e - h * n
    return B, C


def link_shape(p, q, z0):
    """A link from p to q (2D, mm) at heights z0..z0+THICK with bores at both ends."""
    import Part
    p3, q3 = FreeCAD.Vector(p[0], p[1], z0), FreeCAD.Vector(q[0], q[1], z0)
    length = (q3 - p3).Length
    box = Part.makeBox(length + 2 * OVERHANG, WIDTH, THICK,
                       FreeCAD.Vector(-OVERHANG, -WIDTH / 2, 0))
    for x in (0.0, length):
        box = box.cut(Part.makeCylinder(BORE, THICK, FreeCAD.Vector(x, 0, 0)))
    angle = np.degrees(np.arctan2(q[1] - p[1], q[0] - p[0]))
    box.Placement = FreeCAD.Placement(p3, FreeCAD.Rotation(FreeCAD.Vector(0, 0, 1), angle))
    return box


def circle_edge(obj, center):
    """Name of the circular edge of radius BORE centred at ``center`` (3D, mm)."""
    c = FreeCAD.Vector(*center)
    for i, edge in enumerate(obj.Shape.Edges, 1):
        curve = edge.Curve
        if type(curve).__name__ == "Circle" and abs(curve.Radius - BORE) < 1e-7 and \
                (curve.Center - c).Length < 1e-6:
            return f"Edge{i}"
    raise LookupError(f"no bore edge at {center} on {obj.Label}")


def select(doc, *items):
    FreeCADGui.Selection.clearSelection()
    for name, sub in items:
        if sub:
            FreeCADGui.Selection.addSelection(doc.Name, name, sub)
        else:
            FreeCADGui.Selection.addSelection(doc.getObject(name))
    in_freecad.process_events()


def mechanisms(doc):
    return [o for o in doc.Objects
            if getattr(getattr(o, "Proxy", None), "Type", "") == "Multibody::Mechanism"]


def multibody_lines(text):
    return [line for line in text.splitlines() if "MultibodyWB" in line or "Multibody" in line]


def action_tips(name):
    from MultibodyWB.commands.base import command_actions
    return [(a.isEnabled(), a.toolTip(), a.statusTip()) for a in command_actions(name)]


def command_state(doc, name, *items):
    """Select ``items``, let FreeCAD update its commands, read the command's state and tips."""
    select(doc, *items)
    in_freecad.wait(1.2)             # FreeCAD tests the commands on a timer
    from MultibodyWB import commands
    cls = next(c for group in commands.GROUPS.values() for c in group
               if c.command_name() == name)
    active = bool(cls().IsActive())
    in_freecad.process_events()
    tips = action_tips(name)
    return {"active": active, "tool_tip": tips[0][1] if tips else None,
            "status_tip": tips[0][2] if tips else None, "actions": len(tips)}


def placements(doc):
    return {o.Name: [list(o.Placement.Base), list(o.Placement.Rotation.Q)]
            for o in doc.Objects if hasattr(o, "Placement")}


def drawn_residuals(mechanism):
    from MultibodyWB.objects import export
    from MultibodyWB.solver.analysis.kinematics import mobility
    m = mobility(export.to_model(mechanism))
    res = np.array(list(m.drawn_residuals.values()))
    return {"rotation_rad": float(np.max(np.abs(res[:, :3]))),
            "translation_mm": float(np.max(np.abs(res[:, 3:]))) * 1000.0}


def tree_double_click(mechanism):
    """Double-click the Mechanism's tree item as the mouse does: the press, release, double-click
    and release events sent to the tree's viewport at the item (what Qt's QTest would send).
    Returns what happened."""
    from PySide import QtCore, QtGui
    from MultibodyWB.viewproviders.mechanism import tree_items
    in_freecad.show_model_tab()
    in_freecad.wait(0.3)
    items = tree_items(mechanism)
    if not items:
        return "no tree item"
    item = items[0]
    tree = item.treeWidget()
    tree.scrollToItem(item)
    in_freecad.wait(0.2)
    point = tree.visualItemRect(item).center()
    viewport = tree.viewport()
    app = in_freecad._widgets_module().QApplication
    left, none = QtCore.Qt.LeftButton, QtCore.Qt.NoModifier
    for kind, buttons in ((QtCore.QEvent.MouseButtonPress, left),
                          (QtCore.QEvent.MouseButtonRelease, QtCore.Qt.NoButton),
                          (QtCore.QEvent.MouseButtonDblClick, left),
                          (QtCore.QEvent.MouseButtonRelease, QtCore.Qt.NoButton)):
        event = QtGui.QMouseEvent(kind, QtCore.QPointF(point), left, buttons, none)
        app.sendEvent(viewport, event)
        in_freecad.process_events()
    in_freecad.wait(0.5)
    return f"mouse double-click on the tree item '{item.text(0)}'"


def dialog_button(text):
    """The button of the task dialog's button box whose text is ``text`` (OK, Cancel)."""
    widgets = in_freecad._widgets_module()
    for box in FreeCADGui.getMainWindow().findChildren(widgets.QDialogButtonBox):
        for button in box.buttons():
            if button.text().replace("&", "") == text and button.isVisible():
                return button
    return None


def check():
    result = {"freecad_version": FreeCAD.Version()[:3]}
    FreeCADGui.activateWorkbench(WORKBENCH)
    doc = FreeCAD.newDocument("FourBarSteps")
    import Part
    B, C = geometry()
    plate = Part.makeBox(190, 30, 10, FreeCAD.Vector(-20, -15, -10))
    for p in (A, D):
        plate = plate.cut(Part.makeCylinder(BORE, 10, FreeCAD.Vector(p[0], p[1], -10)))
    parts = {}
    for name, shape in (("Plate", plate), ("CrankSolid", link_shape(A, B, 0.0)),
                        ("CouplerSolid", link_shape(B, C, THICK)),
                        ("RockerSolid", link_shape(D, C, 0.0))):
        obj = doc.addObject("Part::Feature", name)
        obj.Shape = shape
        parts[name] = obj
    doc.addObject("Sketcher::SketchObject", "Sketch")
    doc.recompute()
    FreeCADGui.SendMsgToActiveView("ViewFit")
    in_freecad.wait(0.3)
    before_report = in_freecad.report_view_text()

    steps = []

    def step(label, command, *items):
        select(doc, *items)
        active = bool(FreeCADGui.getCommand(command).isActive()) \
            if hasattr(FreeCADGui, "getCommand") else None
        FreeCADGui.runCommand(command)
        in_freecad.wait(0.3)
        mechs = mechanisms(doc)
        status = mechs[0].Status if mechs else ""
        report = in_freecad.report_view_text()[len(before_report):]
        steps.append({"step": label, "command": command, "active": active,
                      "status": status, "multibody_report_lines": multibody_lines(report),
                      "objects": len(doc.Objects)})

    step("ground", "MultibodyWB_Ground", ("Plate", ""))
    step("crank body", "MultibodyWB_Body", ("CrankSolid", ""))
    step("coupler body", "MultibodyWB_Body", ("CouplerSolid", ""))
    step("rocker body", "MultibodyWB_Body", ("RockerSolid", ""))
    crank, coupler, rocker, plate_obj = (parts["CrankSolid"], parts["CouplerSolid"],
                                         parts["RockerSolid"], parts["Plate"])
    step("hinge A", "MultibodyWB_HingeRevolute",
         ("CrankSolid", circle_edge(crank, (A[0], A[1], 0.0))),
         ("Plate", circle_edge(plate_obj, (A[0], A[1], 0.0))))
    step("hinge B", "MultibodyWB_HingeRevolute",
         ("CouplerSolid", circle_edge(coupler, (B[0], B[1], THICK))),
         ("CrankSolid", circle_edge(crank, (B[0], B[1], THICK))))
    step("hinge C", "MultibodyWB_HingeRevolute",
         ("CouplerSolid", circle_edge(coupler, (C[0], C[1], THICK))),
         ("RockerSolid", circle_edge(rocker, (C[0], C[1], THICK))))
    # the state before the loop is closed: a tree, 2 degrees of freedom so far
    step("hinge D", "MultibodyWB_HingeRevolute",
         ("RockerSolid", circle_edge(rocker, (D[0], D[1], 0.0))),
         ("Plate", circle_edge(plate_obj, (D[0], D[1], 0.0))))
    result["steps"] = steps
    mechanism = mechanisms(doc)[0]
    doc.recompute()
    result["status"] = mechanism.Status
    result["drawn_residuals"] = drawn_residuals(mechanism)
    in_freecad.wait(0.5)
    from MultibodyWB.viewproviders.mechanism import tree_items
    items = tree_items(mechanism)
    result["tree_tooltip"] = items[0].toolTip(0) if items else None
    result["mechanism_icon"] = os.path.basename(mechanism.ViewObject.Proxy.getIcon())

    # -- greyed-out commands say why ------------------------------------------------------------
    result["greyed"] = {
        "body_on_sketch": command_state(doc, "MultibodyWB_Body", ("Sketch", "")),
        "hinge_on_one_body": command_state(doc, "MultibodyWB_HingeRevolute",
                                           ("CrankSolid", "Face1"), ("CrankSolid", "Face2")),
        "body_on_solid": command_state(doc, "MultibodyWB_Body", ("Plate", "")),
        "hinge_on_two_bodies": command_state(doc, "MultibodyWB_HingeRevolute",
                                             ("CrankSolid", "Face1"), ("CouplerSolid", "Face2")),
    }
    FreeCADGui.Selection.clearSelection()

    # -- the panel, by double-click -------------------------------------------------------------
    path = os.path.join(in_freecad.output_dir(), "four_bar_steps.FCStd")
    doc.saveAs(path)
    gui = FreeCADGui.getDocument(doc.Name)
    FreeCADGui.runCommand("Std_Save")     # as the user saves: clears the "modified" mark
    result["modified_right_after_save"] = bool(gui.Modified)
    in_freecad.wait(0.3)
    result["modified_before_panel"] = bool(gui.Modified)
    drawn = placements(doc)
    undo_count = doc.UndoCount
    result["open_path"] = tree_double_click(mechanism)
    from MultibodyWB.gui import task_mechanism
    panel = task_mechanism.current
    result["panel_open"] = panel is not None and FreeCADGui.Control.activeDialog()
    if panel is None:
        return result
    result["in_edit"] = getattr(getattr(gui.getInEdit(), "Object", None), "Name", None)
    result["headline"] = panel.headline.text()
    result["details"] = panel.details.toPlainText()
    widgets = in_freecad._widgets_module()
    window = FreeCADGui.getMainWindow()
    drag = window.findChild(widgets.QWidget, task_mechanism.DRAG_NAME)
    sliders = drag.findChildren(widgets.QSlider) if drag is not None else []
    result["sliders"] = [s.objectName() for s in sliders]
    result["free"] = [(h.Label, c) for h, c in panel.preview.free_coordinates()]
    result["crank_hinge_label"] = [o for o in mechanism.Group if getattr(
        getattr(o, "Proxy", None), "Type", "") == "Multibody::Hinge"][0].Label   # hinge A
    hinge, coordinate = panel.preview.free_coordinates()[0]
    slider = next(s for s in sliders if s.objectName() == f"{hinge.Name}.{coordinate}")
    start = panel.preview.value(hinge, coordinate)
    result["slider_start"] = start
    moving = {"CrankSolid": crank, "CouplerSolid": coupler, "RockerSolid": rocker}
    rest = {n: o.Placement for n, o in moving.items()}
    slider.setValue(slider.value() + 300)            # +30 deg (0.1 deg per step)
    in_freecad.wait(0.5)
    result["value_after"] = panel.preview.value(hinge, coordinate)
    result["value_label"] = next(r.value.text() for r in panel.sliders if r.slider is slider)
    result["message"] = panel.message.text()
    result["preview_residual"] = panel.preview.residual()
    result["moved_residuals"] = drawn_residuals(mechanism)
    turns = {}
    for n, o in moving.items():
        delta = o.Placement.multiply(rest[n].inverse())
        turns[n] = {"angle_deg": float(np.degrees(delta.Rotation.Angle)),
                    "axis": list(delta.Rotation.Axis), "shift_mm": delta.Base.Length}
    result["turns"] = turns
    result["hinge_moved"] = hinge.Label
    # the screenshot: panel and 3D view
    view = FreeCADGui.ActiveDocument.ActiveView
    view.viewIsometric()
    view.fitAll()
    in_freecad.wait(0.3)
    result["screenshot"] = in_freecad.grab_main_window("mechanism_panel.png")
    panel_widget = window.findChild(widgets.QWidget, task_mechanism.PANEL_NAME)
    if panel_widget is not None:
        (in_freecad.task_view() or panel_widget).grab().save(
            os.path.join(in_freecad.output_dir(), "mechanism_panel_only.png"))
    result["modified_while_dragging"] = bool(gui.Modified)
    # saving while a pose is shown saves the drawing: the panel puts it back first
    FreeCADGui.runCommand("Std_Save")
    in_freecad.wait(0.3)
    saved = placements(doc)
    result["saved_drawn"] = [n for n in drawn if drawn[n] != saved[n]]
    result["value_after_save"] = panel.preview.value(hinge, coordinate)
    # -- Cancel, through the task dialog's button ---------------------------------------------
    cancel = dialog_button("Cancel")
    result["cancel_found"] = cancel is not None
    if cancel is not None:
        cancel.click()
    in_freecad.wait(0.5)
    result["closed"] = task_mechanism.current is None and not FreeCADGui.Control.activeDialog()
    result["in_edit_after"] = gui.getInEdit() is not None
    after = placements(doc)
    result["restored_exactly"] = [n for n in drawn if drawn[n] != after[n]]
    result["undo_count_same"] = doc.UndoCount == undo_count
    result["touched_after"] = [o.Name for o in doc.Objects if "Touched" in o.State]
    result["modified_after_cancel"] = bool(gui.Modified)

    report = in_freecad.report_view_text()[len(before_report):]
    result["multibody_report_lines"] = multibody_lines(report)
    # -- the Check command opens it too; OK closes it -------------------------------------------
    before_check = in_freecad.report_view_text()
    select(doc, (mechanism.Name, ""))
    FreeCADGui.runCommand("MultibodyWB_Check")
    in_freecad.wait(0.5)
    result["check_command_opens"] = task_mechanism.current is not None
    if task_mechanism.current is not None:
        row = task_mechanism.current.sliders[0]
        row.slider.setValue(row.slider.value() - 200)
        in_freecad.wait(0.3)
        ok = dialog_button("OK")
        if ok is not None:
            ok.click()
        in_freecad.wait(0.5)
    after = placements(doc)
    result["restored_after_ok"] = [n for n in drawn if drawn[n] != after[n]]
    result["closed_after_ok"] = task_mechanism.current is None
    report = in_freecad.report_view_text()[len(before_check):]
    result["check_report_lines"] = multibody_lines(report)

    # -- no silent moves: the plate gets a lightening hole, its edges are numbered anew --------
    hinges = [o for o in mechanism.Group
              if getattr(getattr(o, "Proxy", None), "Type", "") == "Multibody::Hinge"]
    hinge_d = hinges[3]                  # the fourth hinge made (D: rocker on the plate)
    marker = hinge_d.OutputMarker
    result["renumber_marker"] = {"label": marker.Label, "picked": marker.PickedElement}
    lightened = Part.makeBox(190, 30, 10, FreeCAD.Vector(-20, -15, -10))
    lightened = lightened.cut(Part.makeCylinder(5, 10, FreeCAD.Vector(75, 0, -10)))
    for p in (A, D):
        lightened = lightened.cut(Part.makeCylinder(BORE, 10, FreeCAD.Vector(p[0], p[1], -10)))
    before_edit = in_freecad.report_view_text()
    plate_obj.Shape = lightened
    doc.recompute()
    in_freecad.wait(0.5)
    result["renumbered"] = {
        "problem": marker.Problem,
        "icon": os.path.basename(marker.ViewObject.Proxy.getIcon()),
        "status": mechanism.Status.split("\n")[0],
        "mechanism_icon": os.path.basename(mechanism.ViewObject.Proxy.getIcon()),
        "report": multibody_lines(in_freecad.report_view_text()[len(before_edit):]),
    }
    from MultibodyWB.objects import export
    from MultibodyWB.solver.model import ModelError
    try:
        export.to_model(mechanism)
        result["renumbered"]["export"] = "exported"
    except ModelError as exc:
        result["renumbered"]["export"] = str(exc)

    # -- the panel offers to accept the changed pick (one undo step) ------------------------------
    tree_double_click(mechanism)
    panel = task_mechanism.current
    accept = {"opened": panel is not None}
    if panel is not None:
        button = window.findChild(widgets.QPushButton, "AcceptPicks")
        accept["button_visible"] = bool(button is not None and button.isVisible())
        accept["button_tip"] = button.toolTip() if button is not None else ""
        accept["headline_before"] = panel.headline.text()
        accept["sliders_before"] = len(panel.sliders)
        in_freecad.grab_main_window("mechanism_panel_flagged.png")
        undo_before = doc.UndoCount
        if button is not None:
            button.click()
        in_freecad.wait(0.5)
        accept["problem_after"] = marker.Problem
        accept["headline_after"] = panel.headline.text()
        accept["sliders_after"] = len(panel.sliders)
        accept["button_visible_after"] = bool(button.isVisible()) if button is not None else None
        accept["undo_steps"] = doc.UndoCount - undo_before
        accept["undo_name"] = list(doc.UndoNames[:1])
        cancel = dialog_button("Cancel")
        if cancel is not None:
            cancel.click()
        in_freecad.wait(0.5)
        doc.undo()
        doc.recompute()
        accept["problem_after_undo"] = marker.Problem
    accept["console"] = [line for line in in_freecad.python_console_text().splitlines()
                         if "accept_pick" in line]
    result["accept"] = accept

    # -- a driven crank: its slider is there, marked driven -----------------------------------
    FreeCAD.closeDocument(doc.Name)
    in_freecad.wait(0.3)
    engine = FreeCAD.newDocument("EngineDrag")
    from MultibodyWB.examples_fc import crank_slider
    engine_mech = crank_slider.setup(engine)
    in_freecad.wait(0.3)
    engine_drawn = placements(engine)
    select(engine, (engine_mech.Name, ""))
    FreeCADGui.runCommand("MultibodyWB_Check")
    in_freecad.wait(0.5)
    panel = task_mechanism.current
    drive = {"opened": panel is not None}
    if panel is not None:
        drive["headline"] = panel.headline.text()
        drive["rows"] = [(r.slider.objectName(), r.label.text()) for r in panel.sliders]
        piston = engine.getObject("PistonBody")
        z0 = piston.Placement.Base.z
        row = panel.sliders[0]
        row.slider.setValue(row.slider.value() + 900)          # +90 deg
        in_freecad.wait(0.3)
        drive["value"] = row.value.text()
        drive["piston_dz"] = piston.Placement.Base.z - z0
        drive["piston_dxy"] = [piston.Placement.Base.x, piston.Placement.Base.y]
        drive["residuals"] = drawn_residuals(engine_mech)
        view = FreeCADGui.ActiveDocument.ActiveView
        view.viewIsometric()
        view.fitAll()
        in_freecad.wait(0.3)
        in_freecad.grab_main_window("mechanism_panel_engine.png")
        ok = dialog_button("OK")
        if ok is not None:
            ok.click()
        in_freecad.wait(0.5)
    after = placements(engine)
    drive["restored"] = [n for n in engine_drawn if engine_drawn[n] != after[n]]
    result["drive"] = drive
    return result


in_freecad.run_and_quit(check, watchdog_s=200)
