"""GUI check run inside FreeCAD: every task panel of the workbench fits FreeCAD's default combo
view.

FreeCAD started on a fresh user folder (``freecad_env`` makes one) lays out its main window
with the task view docked on the left at its default width (a scroll area in 0.20's Combo View,
its own Tasks dock in 1.0). Measured under Xvfb (1280 x 1024 screen): in FreeCAD 0.20.2 the
Combo View is 264 px wide, the task view's viewport 258 px (244 px once the vertical scroll bar
shows); in 1.0.0 the Tasks dock is 260 px wide. A panel wider than that is cut off on the right
in 0.20 (pick buttons shown as "Pi", the Apply button clipped) and pushes the dock wider in 1.0.

On a four-bar of Part boxes cut by bores (ground plate, crank, coupler, rocker, as
``check_four_bar_drawing.py`` draws it) and a ball, every panel is opened through its command
with the selection a click makes (``Gui.Selection.addSelection(doc, obj, 'Face3')``): Body,
Ground, Marker, each hinge type, each force type, Contact, Coupler, Check, Interference check,
Simulate, Design study, Play, FEM loads. For each panel the findings are:

- the task view's width then (the dock must not have grown: FreeCAD 1.0 widens its Tasks dock
  to a panel's minimum width, 0.20 cuts the panel off) and the width the panel's content needs
  (its minimum size hint) against the viewport's;
- every visible button whose text does not fit its width (the text's width plus the style's
  margins: Qt's Fusion style makes every button's size hint at least 80 px wide, more than a
  short text needs, so a compact button narrower than its size hint is not cut);
- every visible one-line label whose text is wider than the label (cut off);
- a screenshot of the main window at its default size, and one of the panel's whole content.

Started by tests/test_gui_panel_widths.py; writes its findings as JSON.
"""

import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import FreeCAD  # noqa: E402
import FreeCADGui  # noqa: E402
import in_freecad  # noqa: E402

W = in_freecad._widgets_module()
WORKBENCH = "MultibodyWorkbench"
BORE, WIDTH, THICK = 4.0, 16.0, 10.0
O = (30.0, 40.0)
GROUND, CRANK, COUPLER, ROCKER = 120.0, 40.0, 120.0, 80.0


# -- the model -----------------------------------------------------------------------------------
def pins():
    """O, A, B, D in the plane (mm): the crank at 90 deg, B the upper intersection."""
    D = (O[0] + GROUND, O[1])
    A = (O[0], O[1] + CRANK)
    dx, dy = D[0] - A[0], D[1] - A[1]
    d = math.hypot(dx, dy)
    a = (COUPLER ** 2 - ROCKER ** 2 + d ** 2) / (2 * d)
    h = math.sqrt(COUPLER ** 2 - a ** 2)
    ux, uy = dx / d, dy / d
    nx, ny = -uy, ux
    if ny < 0:
        nx, ny = -nx, -ny
    return O, A, (A[0] + a * ux + h * nx, A[1] + a * uy + h * ny), D


def link(doc, name, p, q, z0):
    import Part
    L = math.hypot(q[0] - p[0], q[1] - p[1])
    bar = Part.makeBox(L + WIDTH, WIDTH, THICK, FreeCAD.Vector(-WIDTH / 2, -WIDTH / 2, 0))
    for x in (0.0, L):
        bar = bar.cut(Part.makeCylinder(BORE, THICK, FreeCAD.Vector(x, 0, 0)))
    obj = doc.addObject("Part::Feature", name)
    obj.Shape = bar
    obj.Placement = FreeCAD.Placement(
        FreeCAD.Vector(p[0], p[1], z0),
        FreeCAD.Rotation(FreeCAD.Vector(0, 0, 1), math.degrees(math.atan2(q[1] - p[1],
                                                                          q[0] - p[0]))))
    return obj


def plate(doc, O_, D):
    import Part
    box = Part.makeBox(GROUND + 60, 50, THICK, FreeCAD.Vector(O_[0] - 30, O_[1] - 25, 0))
    for p in (O_, D):
        box = box.cut(Part.makeCylinder(BORE, THICK, FreeCAD.Vector(p[0], p[1], 0)))
    obj = doc.addObject("Part::Feature", "Plate")
    obj.Shape = box
    return obj


def bore_face(obj, pin):
    for i, f in enumerate(obj.Shape.Faces, 1):
        s = f.Surface
        if type(s).__name__ == "Cylinder" and abs(s.Radius - BORE) < 1e-6:
            c = f.CenterOfMass
            if math.hypot(c.x - pin[0], c.y - pin[1]) < 1e-6:
                return f"Face{i}"
    raise LookupError(f"no bore of {obj.Name} at {pin}")


def top_face(obj):
    """The plane face of ``obj`` facing +z highest up."""
    best = None
    for i, f in enumerate(obj.Shape.Faces, 1):
        if type(f.Surface).__name__ == "Plane" and f.normalAt(0, 0).z > 0.99:
            z = f.CenterOfMass.z
            if best is None or z > best[0]:
                best = (z, f"Face{i}")
    return best[1]


def select(doc, *items):
    FreeCADGui.Selection.clearSelection()
    for obj, sub in items:
        if sub:
            FreeCADGui.Selection.addSelection(doc.Name, obj.Name, sub)
        else:
            FreeCADGui.Selection.addSelection(obj)
    in_freecad.process_events()


def multibody(doc, type_name):
    return [o for o in doc.Objects if getattr(getattr(o, "Proxy", None), "Type", "") == type_name]


def wait_for(predicate, timeout=900.0):
    t0 = time.perf_counter()
    while not predicate():
        if time.perf_counter() - t0 > timeout:
            raise TimeoutError("waited too long")
        in_freecad.process_events()
        time.sleep(0.02)
    in_freecad.process_events()


# -- the measurements ----------------------------------------------------------------------------
def task_view():
    """FreeCAD's task view (a QScrollArea in the combo view, 0.20, or in its own Tasks dock,
    1.0), or None."""
    views = [w for w in children(FreeCADGui.getMainWindow(), W.QScrollArea)
             if in_freecad.class_name(w) == "Gui::TaskView::TaskView"]
    shown = [w for w in views if w.isVisible()]
    return (shown or views or [None])[0]


def combo_dock():
    """The dock holding the task view: FreeCAD 0.20's Combo View, 1.0's Tasks."""
    w = task_view()
    while w is not None and not isinstance(w, W.QDockWidget):
        w = w.parentWidget()
    return w


def button_needs(b):
    """Width (px) the text (and icon) of button ``b`` needs to show whole: the text, the icon,
    the style's button margin and frame, as Qt's common style sizes a button, without the
    Fusion style's 80 px floor; for a check box or radio button its size hint."""
    if not isinstance(b, W.QPushButton):
        return b.sizeHint().width()
    style = b.style()
    text = b.text().replace("&&", "\0").replace("&", "").replace("\0", "&")
    need = b.fontMetrics().horizontalAdvance(text) if text else 0
    if not b.icon().isNull():
        need += b.iconSize().width() + (4 if text else 0)
    need += style.pixelMetric(W.QStyle.PM_ButtonMargin, None, b)
    need += 2 * style.pixelMetric(W.QStyle.PM_DefaultFrameWidth, None, b)
    if b.isDefault() or b.autoDefault():
        need += 2 * style.pixelMetric(W.QStyle.PM_ButtonDefaultIndicator, None, b)
    return min(need, b.sizeHint().width())


def children(widget, cls):
    """The children of ``widget`` of class ``cls`` that PySide hands back alive: a wrapper of a
    widget C++ deleted (a closed panel's, still held by Python) can come back for a new widget
    at the same address; such a stale wrapper is left out (and counted)."""
    out = []
    for w in widget.findChildren(cls):
        try:
            w.isVisible()
        except RuntimeError:
            STALE[0] += 1
            continue
        out.append(w)
    return out


#: Stale wrappers met (see :func:`children`).
STALE = [0]


def describe(w):
    name = w.objectName() or type(w).__name__
    text = w.text() if hasattr(w, "text") and callable(w.text) else ""
    return f"{name} '{text}'"


def measure(key, shots=True):
    """The findings about the panel shown now (see the module doc)."""
    for _ in range(4):
        in_freecad.process_events()
    # PySide keeps the wrappers of widgets C++ deleted (a closed panel's) while Python holds
    # them, and hands one back for a new widget at the same address: collected first
    import gc
    gc.collect()
    view = task_view()
    if view is None or not view.isVisible() or not FreeCADGui.Control.activeDialog():
        return {"open": False}
    content = view.widget()
    viewport = content.parentWidget()          # the scroll area's viewport
    r = {"open": True,
         "dock_width": combo_dock().width(),
         "viewport_width": viewport.width(),
         "content_min_width": content.minimumSizeHint().width(),
         "content_width": content.width()}
    cut = []
    right = viewport.mapToGlobal(viewport.rect().topRight()).x()
    for b in children(content, W.QAbstractButton):
        if not b.isVisible() or isinstance(b, W.QToolButton) and not b.text():
            continue
        need = button_needs(b)
        if b.width() < need:
            cut.append(f"button {describe(b)}: {b.width()} px < {need} px")
        elif b.mapToGlobal(b.rect().topRight()).x() > right + 1:
            cut.append(f"button {describe(b)}: beyond the view's right edge")
    for lab in children(content, W.QLabel):
        if not lab.isVisible() or lab.wordWrap() or not lab.text():
            continue
        if lab.pixmap() is not None and not lab.pixmap().isNull():
            continue
        need = lab.minimumSizeHint().width()
        if lab.width() + 1 < need:
            cut.append(f"label {describe(lab)}: {lab.width()} px < {need} px")
    for edit in children(content, W.QLineEdit):
        # a field's text cut (a spin box's too; an editable combo box shows its start)
        if not edit.isVisible() or isinstance(edit.parentWidget(), W.QComboBox):
            continue
        need = edit.fontMetrics().horizontalAdvance(edit.text()) + 6
        if edit.width() < need:
            spin = isinstance(edit.parentWidget(), W.QAbstractSpinBox)
            cut.append(f"field {describe(edit.parentWidget() if spin else edit)}: "
                       f"{edit.width()} px < {need} px")
    for box in children(content, W.QGroupBox):
        if box.isVisible() and box.title():
            need = box.fontMetrics().horizontalAdvance(box.title()) + 16
            if box.width() < need:
                cut.append(f"group '{box.title()}': {box.width()} px < {need} px")
    r["cut"] = cut
    r["visible_fields"] = sum(1 for w in children(content, W.QWidget) if w.isVisible() and (
        isinstance(w, (W.QAbstractSpinBox, W.QComboBox, W.QCheckBox)) or
        isinstance(w, W.QLineEdit) and not isinstance(w.parentWidget(), (W.QAbstractSpinBox,
                                                                          W.QComboBox))))
    # the widest controls (what to narrow when the panel does not fit)
    leaves = [w for w in children(content, W.QWidget) if w.isVisible() and
              not isinstance(w, (W.QGroupBox, W.QScrollArea, W.QFrame)) or
              isinstance(w, (W.QLabel, W.QAbstractScrollArea)) and w.isVisible()]
    leaves.sort(key=lambda w: -w.minimumSizeHint().width())
    r["widest"] = [f"{w.metaObject().className()} {describe(w)}: "
                   f"{w.minimumSizeHint().width()} px" for w in leaves[:6]]
    if shots:
        r["shot"] = in_freecad.grab_main_window(f"panel_width_{key}.png", size=None)["path"]
        path = os.path.join(in_freecad.output_dir(), f"panel_width_{key}_content.png")
        content.grab().save(path)
        r["shot_content"] = path
    return r


def close_dialog():
    """Cancel (or Close) the task dialog as a user does; then no dialog is open."""
    for which in ("Cancel", "Close"):
        for box in children(FreeCADGui.getMainWindow(), W.QDialogButtonBox):
            button = box.button(getattr(W.QDialogButtonBox, which))
            if button is not None and button.isVisible():
                button.click()
                in_freecad.wait(0.2)
                break
    if FreeCADGui.Control.activeDialog():
        from MultibodyWB.gui.watch import close_task_dialog
        close_task_dialog()
        in_freecad.wait(0.2)
    return not FreeCADGui.Control.activeDialog()


def run_command(name):
    FreeCADGui.runCommand(name)
    in_freecad.wait(0.3)


def opened_by(doc, key, command, *picks, undo=False, result):
    """Select ``picks``, run ``command``, measure the panel it opens, close it; with ``undo``
    undo what the command made (one undo step)."""
    select(doc, *picks)
    n = doc.UndoCount
    run_command(command)
    result[key] = measure(key)
    result[key]["command"] = command
    close_dialog()
    if undo and doc.UndoCount > n:
        doc.undo()
        doc.recompute()
        in_freecad.process_events()


def model_problems(mechanism):
    """The problems that keep the mechanism from being exported (its model), as texts."""
    from MultibodyWB.objects import export
    from MultibodyWB.solver.model import ModelError
    try:
        export.to_model(mechanism)
    except ModelError as exc:
        return [str(p) for p in exc.problems]
    return []


def panel_field(name):
    from MultibodyWB.gui import task_base
    for form in task_base.current.form:
        w = form.findChild(W.QWidget, name)
        if w is not None:
            return w
    return None


def enter_in_a_field(doc, hinge):
    """Double-click the hinge, type a stiffness into its field and press Enter (a key event
    sent as the keyboard sends it, to the focused field): the panel stays open, the value is
    applied and shown in its unit; Cancel puts it back."""
    from MultibodyWB.gui import task_base
    r = {}
    hinge.ViewObject.doubleClicked()
    in_freecad.wait(0.3)
    panel = task_base.current
    edit = panel_field("StiffnessRz")
    edit.setFocus()
    edit.selectAll()
    edit.setText("3")
    edit.textEdited.emit("3")
    in_freecad.process_events()
    W.QApplication.sendEvent(edit, key_event(True))
    in_freecad.wait(0.3)
    r["open_after_enter"] = bool(FreeCADGui.Control.activeDialog()) and \
        task_base.current is panel and not panel.closed
    try:
        W.QApplication.sendEvent(edit, key_event(False))
        r["text_after_enter"] = edit.text()
    except RuntimeError:             # the panel closed: its field is gone
        r["text_after_enter"] = None
    r["stiffness_live"] = hinge.StiffnessRz
    r["undo_count"] = doc.UndoCount
    close_dialog()
    r["stiffness_after_cancel"] = hinge.StiffnessRz
    return r


def key_event(press):
    """Return pressed (or released), as the keyboard sends it."""
    from PySide import QtCore, QtGui
    return QtGui.QKeyEvent(QtCore.QEvent.KeyPress if press else QtCore.QEvent.KeyRelease,
                           QtCore.Qt.Key_Return, QtCore.Qt.NoModifier)


def untick_initial_as_drawn(doc, mechanism, hinge, solids):
    """The crank's hinge: its panel by a double-click, InitialAsDrawn unticked by a click: the
    initial field shows the drawn angle and holds it, nothing moves; Cancel."""
    from MultibodyWB.gui import task_base
    from MultibodyWB.objects import export
    from MultibodyWB.solver.analysis.kinematics import hinge_coordinates
    r = {}
    model = export.to_model(mechanism)
    r["drawn_deg"] = math.degrees(float(hinge_coordinates(model, model.hinge(hinge.Label))[0]))
    before = {s.Name: (tuple(s.Placement.Base), tuple(s.Placement.Rotation.Q)) for s in solids}
    hinge.ViewObject.doubleClicked()
    in_freecad.wait(0.3)
    box = panel_field("InitialAsDrawn")
    r["ticked_before"] = box.isChecked()
    box.click()
    in_freecad.wait(0.3)
    r["field_text"] = panel_field("InitialRz").text()
    r["property_deg"] = float(hinge.InitialRz.getValueAs("deg"))
    r["as_drawn_live"] = bool(hinge.InitialAsDrawn)
    after = {s.Name: (tuple(s.Placement.Base), tuple(s.Placement.Rotation.Q)) for s in solids}
    r["moved"] = sorted(n for n in before if before[n] != after[n])
    r["message"] = task_base.current.message.text()
    close_dialog()
    r["property_after_cancel_deg"] = float(hinge.InitialRz.getValueAs("deg"))
    return r


def check():
    from MultibodyWB.solver.model import FORCE_TYPES, HINGE_TYPES
    from MultibodyWB.commands.forces import object_name
    result = {"freecad_version": FreeCAD.Version()[:3], "panels": {}}
    panels = result["panels"]
    mw = FreeCADGui.getMainWindow()
    result["main_window"] = [mw.width(), mw.height()]
    doc = FreeCAD.newDocument("Widths")
    O_, A, B, D = pins()
    base = plate(doc, O_, D)
    crank = link(doc, "Crank", O_, A, THICK)
    rocker = link(doc, "Rocker", D, B, THICK)
    coupler = link(doc, "Coupler", A, B, 2 * THICK)
    import Part
    ball = doc.addObject("Part::Feature", "Ball")
    ball.Shape = Part.makeSphere(6.0, FreeCAD.Vector(185.0, 25.0, 30.0))
    pad = doc.addObject("Part::Box", "Pad")        # a plain box on the ground, under the ball
    pad.Length, pad.Width, pad.Height = 30.0, 30.0, 5.0
    pad.Placement.Base = FreeCAD.Vector(170.0, 10.0, 10.0)
    doc.recompute()
    FreeCADGui.activateWorkbench(WORKBENCH)
    FreeCADGui.ActiveDocument.ActiveView.viewIsometric()
    FreeCADGui.SendMsgToActiveView("ViewFit")
    in_freecad.process_events()
    result["dock_width_before"] = combo_dock().width()

    # bodies and the ground through the commands; the Body panel opens on the new body
    for solids, command in (((crank,), "MultibodyWB_Body"), ((base, pad), "MultibodyWB_Ground"),
                            ((coupler,), "MultibodyWB_Body"), ((rocker,), "MultibodyWB_Body")):
        select(doc, *((s, "") for s in solids))
        run_command(command)
        close_dialog()
    opened_by(doc, "body", "MultibodyWB_Body", (ball, ""), result=panels)
    mechanism = multibody(doc, "Multibody::Mechanism")[0]

    # the four-bar's revolute hinges on the bores (the first one's panel measured)
    hinge_picks = (("CrankPivot", crank, O_, base, O_), ("CrankPin", coupler, A, crank, A),
                   ("RockerPin", coupler, B, rocker, B), ("RockerPivot", rocker, D, base, D))
    hinges = {}
    for name, moving, p, fixed, q in hinge_picks:
        select(doc, (moving, bore_face(moving, p)), (fixed, bore_face(fixed, q)))
        before = {o.Name for o in multibody(doc, "Multibody::Hinge")}
        run_command("MultibodyWB_HingeRevolute")
        if name == "CrankPivot":
            panels["hinge_revolute"] = measure("hinge_revolute")
            from MultibodyWB.gui import task_base
            # the model is incomplete (coupler, rocker, ball joined to nothing yet): the
            # panel says why the parts are not moved, every problem
            result["incomplete_note"] = task_base.current.preview_label.text()
            result["incomplete_problems"] = model_problems(mechanism)
            edit = task_base.current.fields["MotorSpeedRz"].widget
            edit.setText("60 rpm")
            edit.textEdited.emit("60 rpm")
            edit.editingFinished.emit()
            in_freecad.process_events()
            in_freecad.click("Ok")
        else:
            in_freecad.click("Ok")
        hinges[name] = [o for o in multibody(doc, "Multibody::Hinge") if o.Name not in before][0]
    close_dialog()
    result["enter"] = enter_in_a_field(doc, hinges["CrankPin"])

    # every other hinge type, on the ball and the pad's top (made, measured, undone; the free
    # hinge kept: the ball falls in the run)
    for kind in HINGE_TYPES:
        if kind == "revolute":
            continue
        opened_by(doc, f"hinge_{kind}", f"MultibodyWB_Hinge{kind.capitalize()}",
                  (ball, "Face1"), (pad, top_face(pad)), undo=kind != "free", result=panels)
    result["as_drawn"] = untick_initial_as_drawn(doc, mechanism, hinges["CrankPivot"],
                                                 (crank, coupler, rocker))
    # every force type
    for kind, row in FORCE_TYPES.items():
        picks = [(ball, "Face1"), (pad, top_face(pad))][:row.markers]
        opened_by(doc, f"force_{kind}", f"MultibodyWB_{object_name(kind)}", *picks, undo=True,
                  result=panels)
    opened_by(doc, "marker", "MultibodyWB_Marker", (crank, top_face(crank)), undo=True,
              result=panels)
    opened_by(doc, "contact", "MultibodyWB_Contact", (ball, "Face1"), (pad, top_face(pad)),
              undo=True, result=panels)
    opened_by(doc, "coupler", "MultibodyWB_Coupler", (hinges["CrankPivot"], ""),
              (hinges["RockerPivot"], ""), undo=True, result=panels)
    opened_by(doc, "check", "MultibodyWB_Check", (mechanism, ""), result=panels)
    opened_by(doc, "interference", "MultibodyWB_Interference", (mechanism, ""), result=panels)

    # Simulate: measured, then a short run for the player and the FEM loads
    from MultibodyWB.gui import simulate_panel
    select(doc, (mechanism, ""))
    run_command("MultibodyWB_Simulate")
    panels["simulate"] = measure("simulate")
    panel = simulate_panel.current
    panel.set_settings(EndTime=0.2, Step=1e-3, OutputStep=1e-2)
    panel.run_button.click()
    in_freecad.process_events()
    wait_for(lambda: not panel.running and not panel.timer.isActive())
    result["run_status"] = panel.status.text()
    panels["simulate_after_run"] = measure("simulate_after_run")
    close_dialog()
    opened_by(doc, "study", "MultibodyWB_Study", (mechanism, ""), undo=True, result=panels)
    opened_by(doc, "play", "MultibodyWB_Play", (mechanism, ""), result=panels)
    opened_by(doc, "fem_loads", "MultibodyWB_FemLoads", (coupler, ""), result=panels)
    result["dock_width_after"] = combo_dock().width()
    result["unmodified"] = open_and_play(doc)
    result["stale_wrappers"] = STALE[0]
    return result


def open_and_play(doc):
    """The document saved, closed and opened again: opening it, the Play command, playing a
    second and closing the player leave it unmodified (FreeCAD's mark, the star in its tab)."""
    from MultibodyWB.gui import player
    r = {}
    path = os.path.join(in_freecad.output_dir(), "widths.FCStd")
    doc.saveAs(path)
    FreeCAD.closeDocument(doc.Name)
    in_freecad.wait(0.3)
    doc = FreeCAD.openDocument(path)
    in_freecad.wait(0.5)
    gui = FreeCADGui.getDocument(doc.Name)
    r["after_open"] = bool(gui.Modified)
    mechanism = multibody(doc, "Multibody::Mechanism")[0]
    select(doc, (mechanism, ""))
    run_command("MultibodyWB_Play")
    r["after_play_command"] = bool(gui.Modified)
    panel = player.current
    r["player_open"] = panel is not None
    if panel is not None:
        panel.play()
        in_freecad.wait(1.0)
        r["played_to"] = panel.t
        r["while_playing"] = bool(gui.Modified)
        panel.step(3)
        in_freecad.wait(0.2)
        r["after_step"] = bool(gui.Modified)
        panel.set_time(0.123456789)                  # between two frames, as when playing
        r["time_label"] = panel.time_label.text()
    close_dialog()
    r["after_close"] = bool(gui.Modified)
    FreeCADGui.Selection.clearSelection()
    return r


in_freecad.run_and_quit(check, watchdog_s=1500)
