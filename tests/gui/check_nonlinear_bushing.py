"""GUI check run inside FreeCAD: a nonlinear bushing made and edited as a user does.

A frame (the ground) and a 10 mm steel cube on a free hinge, no gravity; a marker at the cube's
centre and one on the frame 1 mm along x from it. The user clicks the two markers and presses
the Nonlinear bushing command: the force's panel opens with the bushing's parameters (a title per
parameter, x, y, z fields with their units; no spring-damper field); values are typed into
the fields (a bare number, another unit, the panel's own dot sign), seen on the force at once; a
screenshot; OK (its button clicked) makes them one undo step, recorded in the Python console;
undo and redo; the mechanism exported with the Export command to an XML file (its
``<TranslationStiffness>``... elements, in SI) and imported with the Import command into a new
document (the same values); a run through the workbench's simulate path (the cube oscillates
about the anchor); the document saved and reopened (the values intact); the symbol drawn, and
a type without a symbol of its own drawn by the generic one without an error; a made-up law
put into the solver's table only: its panel shows its parameters, typed values are kept.

Started by tests/test_gui_nonlinear_bushing.py through ``freecad_env.run_gui_check``; writes its
findings as JSON.
"""

import os
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import FreeCAD  # noqa: E402
import FreeCADGui  # noqa: E402
import in_freecad  # noqa: E402
from in_freecad import click, panel, type_into, widget  # noqa: E402

WORKBENCH = "MultibodyWorkbench"
COMMAND = "MultibodyWB_NonlinearBushing"
W = in_freecad._widgets_module()

#: What the user types (field -> text) and what the property then holds.
TYPED = {
    "TranslationStiffnessX": ("2000", "2000 N/m"),
    "TranslationStiffnessY": ("5 N/mm", "5 N/mm"),
    "TranslationStiffnessZ": ("5000", "5000 N/m"),
    "TranslationCubicStiffnessX": ("4e8", "4e8 N/m^3"),
    "TranslationDampingY": ("0.5 N\u00b7s/m", "0.5 N*s/m"),
    "RotationStiffnessX": ("0.5 N\u00b7m/rad", "0.5 N*m/rad"),
    "RotationStiffnessY": ("1", "1 N*m/rad"),
    "RotationStiffnessZ": ("1 N*m/deg", "1 N*m/deg"),
    "RotationCubicStiffnessZ": ("3", "3 N*m/rad^3"),
    "RotationDampingZ": ("0.001", "0.001 N*m*s/rad"),
}


def build(doc):
    from MultibodyWB.document import factory
    V, P = FreeCAD.Vector, FreeCAD.Placement
    frame = doc.addObject("Part::Box", "FrameSolid")
    frame.Length, frame.Width, frame.Height = 40, 40, 10
    frame.Placement = P(V(-60, -15, -30), FreeCAD.Rotation())
    block = doc.addObject("Part::Box", "BlockSolid")
    doc.recompute()
    mech = factory.make_mechanism(doc, "Held", gravity=(0, 0, 0))
    ground = factory.make_body(doc, mech, frame, ground=True, name="Frame")
    body = factory.make_body(doc, mech, block, density=7850, name="Block")
    m_block = factory.make_marker(doc, body, None, offset=V(5, 5, 5), name="BlockCentre")
    m_frame = factory.make_marker(doc, ground, None, offset=V(66, 20, 35), name="Anchor")
    factory.make_hinge(doc, mech, "free", m_block, m_frame, name="Float")
    doc.recompute()
    return mech, m_block, m_frame


def select(doc, objects):
    """Click each object (a marker in the tree or the 3D view): the selection a click sets."""
    FreeCADGui.Selection.clearSelection()
    for obj in objects:
        FreeCADGui.Selection.addSelection(doc.Name, obj.Name)
    in_freecad.process_events()


def params_of(force):
    return {n: getattr(force, n) for n in force.Proxy.param_props()}


def read_panel(p, force):
    """What the panel shows: each field's text and whether it is shown, the sections' titles,
    the groups shown."""
    fields = {}
    for name, field in p.fields.items():
        shown = not field.widget.isHidden()
        fields[name] = {"shown": shown, "text": field.widget.text() if shown and
                        hasattr(field.widget, "text") else None,
                        "label": field.label.text(), "tip": field.widget.toolTip()}
    return {"fields": fields,
            "titles": [(h.text(), h.isVisibleTo(p.form[0]), h.toolTip(), names)
                       for h, names in p.param_sections],
            "groups": sorted(g for g, (box, _) in p.groups.items()
                             if box.isVisibleTo(p.form[0])),
            "type": p.type_box.currentText(), "message": p.message.text()}


def fits(p):
    """The panel's width against the task view's (its content's least width within the
    viewport; no label or field text cut)."""
    in_freecad.process_events()
    view = in_freecad.task_view()
    content = view.widget()
    viewport = content.parentWidget()
    cut = []
    for lab in content.findChildren(W.QLabel):
        if lab.isVisible() and not lab.wordWrap() and lab.text() and \
                lab.width() + 1 < lab.minimumSizeHint().width():
            cut.append(f"label '{lab.text()}': {lab.width()} < {lab.minimumSizeHint().width()}")
    for edit in content.findChildren(W.QLineEdit):
        if edit.isVisible() and not isinstance(edit.parentWidget(), (W.QComboBox,
                                                                     W.QAbstractSpinBox)):
            need = edit.fontMetrics().horizontalAdvance(edit.text()) + 6
            if edit.width() < need:
                cut.append(f"field {edit.objectName()} '{edit.text()}': {edit.width()} < {need}")
    return {"viewport_width": viewport.width(),
            "content_min_width": content.minimumSizeHint().width(), "cut": cut}


def check():
    from MultibodyWB.commands import files
    from MultibodyWB.document import runs
    from MultibodyWB.solver.api import FORCE_TYPES
    result = {"freecad_version": FreeCAD.Version()[:3]}
    out = in_freecad.output_dir()
    FreeCADGui.activateWorkbench(WORKBENCH)
    result["toolbar"] = in_freecad.toolbar_actions().get("Multibody forces", [])
    action = [a for a in FreeCADGui.getMainWindow().findChildren(W.QAction)
              if a.objectName() == COMMAND]
    result["tooltip"] = action[0].toolTip() if action else None
    result["icon_null"] = action[0].icon().isNull() if action else None
    doc = FreeCAD.newDocument("Bushing")
    mech, m_block, m_frame = build(doc)
    FreeCADGui.SendMsgToActiveView("ViewFit")
    doc.clearUndos()
    doc.UndoMode = 1
    in_freecad.wait(0.3)

    # the user clicks the two markers, then the command: the force, its panel
    select(doc, [m_block, m_frame])
    FreeCADGui.runCommand(COMMAND)
    in_freecad.wait(0.5)
    p = panel()
    result["panel"] = type(p).__name__ if p is not None else None
    force = p.obj
    result["force"] = {"type": force.ForceType, "label": force.Label,
                       "ends": [force.InputMarker.Name, force.OutputMarker.Name]}
    result["opened"] = read_panel(p, force)
    result["undo_after_command"] = list(doc.UndoNames)

    # values typed in, seen on the force at once (live)
    live = {}
    for name, (text, _) in TYPED.items():
        type_into(name, text)
        live[name] = getattr(force, name)
    result["live"] = live
    result["typed"] = read_panel(p, force)
    result["field_texts"] = {n: widget(n).text() for n in TYPED}
    result["fit"] = fits(p)
    # the panel, folded open, on the screen
    view = FreeCADGui.ActiveDocument.ActiveView
    view.viewIsometric()
    view.fitAll()
    in_freecad.wait(0.3)
    result["shot"] = in_freecad.grab_main_window("nonlinear_bushing_panel.png", size=(1280, 960))
    content = in_freecad.task_view().widget()
    content.grab().save(os.path.join(out, "nonlinear_bushing_panel_content.png"))

    # OK: one undo step, recorded
    result["ok"] = click("Ok")
    result["dialog_after_ok"] = bool(FreeCADGui.Control.activeDialog())
    result["after_ok"] = params_of(force)
    result["undo_after_ok"] = list(doc.UndoNames)
    result["console"] = [line for line in in_freecad.python_console_text().splitlines()
                         if "Stiffness" in line or "Damping" in line]
    doc.undo()
    doc.recompute()
    in_freecad.process_events()
    result["after_undo"] = params_of(force)
    doc.redo()
    doc.recompute()
    in_freecad.process_events()
    result["after_redo"] = params_of(force)
    result["symbol"] = in_freecad.symbol_box(force)
    result["materials"] = in_freecad.materials(force)

    # a type without a symbol of its own: the generic one, no error
    from MultibodyWB.gui.symbols import redraw
    from MultibodyWB.viewproviders import force as vp_force
    own = vp_force.FORCE_GLYPHS.pop("nonlinear_bushing")
    try:
        redraw(force)
        in_freecad.process_events()
        result["generic_symbol"] = in_freecad.symbol_box(force)
    finally:
        vp_force.FORCE_GLYPHS["nonlinear_bushing"] = own
    redraw(force)

    # the Export command writes the file (the path a user would pick in the dialog)
    path = os.path.join(out, "held.mbs.xml")
    files.ask_save_path = lambda title, suggestion: path
    select(doc, [mech])
    FreeCADGui.runCommand("MultibodyWB_Export")
    in_freecad.wait(0.3)
    result["exported"] = os.path.isfile(path)
    el = ET.parse(path).getroot().find("Force")
    result["xml"] = {"type": el.get("Type"),
                     "elements": {c.tag: c.text for c in el
                                  if c.tag not in ("Input", "Output")}}
    result["xml_tags"] = [p.tag for p in FORCE_TYPES["nonlinear_bushing"].params]

    # the Import command reads it into a new document
    other = FreeCAD.newDocument("BushingImported")
    FreeCADGui.setActiveDocument(other.Name)
    files.ask_open_path = lambda title: path
    FreeCADGui.runCommand("MultibodyWB_Import")
    in_freecad.wait(0.3)
    imported = [o for o in other.Objects if getattr(o, "ForceType", "") == "nonlinear_bushing"]
    result["imported"] = [params_of(f) for f in imported]
    FreeCADGui.setActiveDocument(doc.Name)

    # a run through the workbench's simulate path: the cube oscillates about the anchor
    run = runs.simulate_mechanism(mech, t_end=0.02, step=2e-6, output_step=1e-4)
    res = runs.load(run)
    x = [float(v) for v in res["Float.x"]]
    result["run"] = {"rows": len(x), "x0": x[0], "min": min(x), "max": max(x),
                     "others": max(abs(float(v)) for c in ("Float.y", "Float.z", "Float.rx",
                                                          "Float.ry", "Float.rz")
                                   for v in res[c])}

    # saved and reopened: the values intact
    saved = params_of(force)
    file_path = os.path.join(out, "bushing.FCStd")
    doc.saveAs(file_path)
    FreeCAD.closeDocument(doc.Name)
    again = FreeCAD.openDocument(file_path)
    in_freecad.wait(0.3)
    f2 = [o for o in again.Objects if getattr(o, "ForceType", "") == "nonlinear_bushing"][0]
    result["reopened"] = {"same": params_of(f2) == saved, "values": params_of(f2),
                          "saved": saved, "symbol": in_freecad.symbol_box(f2)}
    # double-click: the panel shows the values again
    FreeCADGui.getDocument(again.Name).setEdit(f2.Name, 0)
    in_freecad.wait(0.5)
    result["reopened_panel"] = {n: widget(n).text() for n in TYPED} if panel() else None
    click("Cancel")
    result["fake"] = fake_law(again)
    result["report"] = in_freecad.report_view_text()
    return result


def fake_law(doc):
    """A law put into the solver's table only (as its module and LAWS line would): a force of
    it made, its panel opened by a double-click shows its parameters (a number and a vector)
    with no line of the workbench naming them; values typed in, OK; its generic symbol."""
    from MultibodyWB.document import factory
    from MultibodyWB.solver.api import FORCE_TYPES
    from MultibodyWB.solver.elements.forces.base import ForceType, Param
    FORCE_TYPES["fake_law"] = ForceType(
        "fake_law", 2, frozenset(), "a law made up for the test", {}, params=(
            Param("preload", "Preload", "N", "force it starts with"),
            Param("gap_stiffness", "GapStiffness", "N/m^2", "stiffness per axis", 3)))
    try:
        mech = [o for o in doc.Objects if o.Label == "Held"][0]
        a, b = doc.getObject("BlockCentre"), doc.getObject("Anchor")
        force = factory.make_force(doc, mech, "fake_law", a, b, name="Fake")
        doc.recompute()
        FreeCADGui.getDocument(doc.Name).setEdit(force.Name, 0)
        in_freecad.wait(0.5)
        p = panel()
        shown = read_panel(p, force)
        type_into("Preload", "12.5")
        type_into("GapStiffnessY", "2 N/mm^2")
        ok = click("Ok")
        return {"fields": {n: f for n, f in shown["fields"].items() if f["shown"]},
                "titles": [t[0] for t in shown["titles"] if t[1]], "groups": shown["groups"],
                "ok": ok, "values": [force.Preload, force.GapStiffnessX, force.GapStiffnessY],
                "symbol": in_freecad.symbol_box(force)}
    except Exception:  # noqa: BLE001 - this part's failure is its test's, not the others'
        import traceback
        return {"error": traceback.format_exc()}
    finally:
        del FORCE_TYPES["fake_law"]


in_freecad.run_and_quit(check, watchdog_s=600)
