"""GUI check run inside FreeCAD: parts stacked along the pins stay on their layers (issue 32.4,
32.5), driven as a user drives the workbench.

The four-bar of ``tests/stacked_four_bar.py`` (links 10 mm thick stacked along the pins), built
through the commands with the selection a click makes: Body and Ground on the solids, each
revolute hinge on two bores' cylindrical faces (markers mid-bore, 10 mm apart along the pin).
Then:

- drag to check: the mechanism selected, Check; the crank's slider moved 30 deg; every solid's
  and marker's height along the pins and axis measured; OK (the drawing back);
- a typed start: the crank pivot's panel opened by a double-click, "Initial as drawn" unticked
  (a click), 130 deg typed into Initial rz, OK; every solid's and marker's height measured, and
  every property of every object compared with before;
- interference: the coupler pulled 10 mm down into the crank's layer (its Placement, as the
  property editor sets it), Interference check: the rows; then put back;
- FEM loads: a 60 rpm motor typed into the crank pivot's panel, a run, the coupler's face and
  the run selected, FEM loads, an instant by its time, Preview: the loads' force and moment
  sums.

Started by tests/test_gui_stacked_layers.py; writes its findings as JSON.
"""

import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import FreeCAD  # noqa: E402
import FreeCADGui  # noqa: E402
import in_freecad  # noqa: E402
import stacked_four_bar as sfb  # noqa: E402

WORKBENCH = "MultibodyWorkbench"
W = in_freecad._widgets_module()


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


def heights(doc):
    """Every solid's and marker's (z mm, axis x, axis y)."""
    out = {}
    for o in doc.Objects:
        if o.TypeId in ("Part::Feature", "Part::FeaturePython") and hasattr(o, "Placement"):
            out[o.Name] = sfb.axial(o)
    return out


def off_layer(before, after):
    """Largest change of height (mm) and of axis tilt over every object, and who moved most."""
    worst, who, tilt = 0.0, None, 0.0
    for name, (z0, ax0, ay0) in before.items():
        z, ax, ay = after[name]
        if abs(z - z0) > worst:
            worst, who = abs(z - z0), name
        tilt = max(tilt, abs(ax - ax0), abs(ay - ay0))
    return worst, who, tilt


def properties(doc):
    """Every object's properties other than placements and the computed ones, as text."""
    out = {}
    skip = {"Placement", "Shape", "Proxy", "ExpressionEngine", "Label2", "Visibility",
            "AttacherType", "AttachmentOffset", "MapPathParameter", "BasePlacement"}
    for o in doc.Objects:
        for p in o.PropertiesList:
            if p in skip or "Output" in o.getPropertyStatus(p):
                continue
            try:
                value = getattr(o, p)
            except Exception:  # noqa: BLE001 - an unreadable property: left out
                continue
            if hasattr(value, "Value") and hasattr(value, "Unit"):       # a quantity
                value = (float(value.Value),)
            elif isinstance(value, FreeCAD.Vector):
                value = tuple(value)
            elif isinstance(value, float):
                value = (value,)
            else:
                value = repr(value)
                if " at 0x" in value:       # an object shown by its address (1.0's materials)
                    continue
            out[f"{o.Name}.{p}"] = value
    return out


def same(a, b):
    """Equal texts; numbers equal to round-off (1e-9 relative: mass properties computed again
    from the moved solids)."""
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        return all(abs(x - y) <= 1e-9 * max(1.0, abs(x), abs(y)) for x, y in zip(a, b))
    return a == b


def dialog_button(which):
    for box in FreeCADGui.getMainWindow().findChildren(W.QDialogButtonBox):
        button = box.button(getattr(W.QDialogButtonBox, which))
        if button is not None and button.isVisible():
            return button
    return None


def build(doc, result):
    parts = sfb.solids(FreeCAD, doc)
    P = sfb.pins()
    for name, command in (("Crank", "MultibodyWB_Body"), ("Plate", "MultibodyWB_Ground"),
                          ("Coupler", "MultibodyWB_Body"), ("Rocker", "MultibodyWB_Body")):
        select(doc, (parts[name], ""))
        FreeCADGui.runCommand(command)
        in_freecad.process_events()
    mechanism = multibody(doc, "Multibody::Mechanism")[0]
    hinges = {}
    for name, moving, p, fixed, q in sfb.HINGES:
        select(doc, (parts[moving], sfb.bore_face(parts[moving], P[p])),
               (parts[fixed], sfb.bore_face(parts[fixed], P[q])))
        before = {o.Name for o in multibody(doc, "Multibody::Hinge")}
        FreeCADGui.runCommand("MultibodyWB_HingeRevolute")
        in_freecad.process_events()
        made = [o for o in multibody(doc, "Multibody::Hinge") if o.Name not in before]
        in_freecad.click("Ok")
        hinges[name] = made[0] if made else None
    doc.recompute()
    result["hinges_made"] = {k: v is not None for k, v in hinges.items()}
    result["hinge_labels"] = {k: v.Label for k, v in hinges.items() if v is not None}
    result["marker_axial_gaps_mm"] = {
        name: abs(h.InputMarker.Placement.Base.z - h.OutputMarker.Placement.Base.z)
        for name, h in hinges.items() if h is not None}
    return mechanism, parts, hinges


def drag_to_check(doc, mechanism, parts, result):
    from MultibodyWB.gui import task_mechanism
    before = heights(doc)
    rest = {n: o.Placement for n, o in parts.items()}
    select(doc, (mechanism, ""))
    FreeCADGui.runCommand("MultibodyWB_Check")
    in_freecad.wait(0.5)
    panel = task_mechanism.current
    result["drag_panel"] = panel is not None
    if panel is None:
        return
    result["drag_free"] = [(h.Label, c) for h, c in panel.preview.free_coordinates()]
    row = panel.sliders[0]
    result["drag_row"] = row.slider.objectName()
    start = panel.preview.value(*panel.preview.free_coordinates()[0])
    row.slider.setValue(row.slider.value() + 300)            # +30 deg (0.1 deg per step)
    in_freecad.wait(0.5)
    result["drag_turned_deg"] = panel.preview.value(*panel.preview.free_coordinates()[0]) - start
    result["drag_crank_turn_deg"] = math.degrees(
        parts["Crank"].Placement.multiply(rest["Crank"].inverse()).Rotation.Angle)
    result["drag_message"] = panel.message.text()
    worst, who, tilt = off_layer(before, heights(doc))
    result["drag_off_layer_mm"], result["drag_off_layer_who"] = worst, who
    result["drag_tilt"] = tilt
    result["drag_shot"] = in_freecad.shot("stacked_drag.png")
    ok = dialog_button("Ok")
    if ok is not None:
        ok.click()
    in_freecad.wait(0.5)
    result["drag_restored"] = [n for n, o in parts.items() if o.Placement != rest[n]]


def typed_start(doc, mechanism, parts, hinges, result):
    from MultibodyWB.gui import task_base
    crank = hinges["CrankPivot"]
    before = heights(doc)
    props = properties(doc)
    rest = {n: o.Placement for n, o in parts.items()}
    crank.ViewObject.doubleClicked()
    in_freecad.wait(0.3)
    box = None
    for form in task_base.current.form:
        box = box or form.findChild(W.QCheckBox, "InitialAsDrawn")
    result["typed_box_found"] = box is not None
    if box is not None and box.isChecked():
        box.click()
        in_freecad.process_events()
    drawn = float(crank.InitialRz.getValueAs("deg"))
    result["typed_drawn_deg"] = drawn
    in_freecad.type_into("InitialRz", "130 deg")
    in_freecad.wait(0.3)
    result["typed_preview_label"] = in_freecad.widget("preview").text() \
        if in_freecad.widget("preview") is not None else None
    worst, who, tilt = off_layer(before, heights(doc))
    result["typed_preview_off_layer_mm"], result["typed_preview_tilt"] = worst, tilt
    result["typed_shot"] = in_freecad.shot("stacked_typed_start.png")
    result["typed_ok"] = in_freecad.click("Ok")
    doc.recompute()
    in_freecad.wait(0.3)
    worst, who, tilt = off_layer(before, heights(doc))
    result["typed_off_layer_mm"], result["typed_off_layer_who"] = worst, who
    result["typed_tilt"] = tilt
    after = properties(doc)
    changed = sorted(k for k in set(props) | set(after) if not same(props.get(k), after.get(k)))
    result["typed_changed_properties"] = changed
    result["typed_changed_values"] = {k: [str(props.get(k)), str(after.get(k))] for k in changed}
    result["typed_initial_deg"] = float(crank.InitialRz.getValueAs("deg"))
    result["typed_moved_solids"] = sorted(n for n, o in parts.items() if o.Placement != rest[n])
    result["typed_crank_turn_deg"] = math.degrees(
        parts["Crank"].Placement.multiply(rest["Crank"].inverse()).Rotation.Angle)
    # back to the drawing for what follows: undo the OK (one step)
    result["typed_undo_names"] = list(doc.UndoNames[:1])
    doc.undo()
    doc.recompute()
    result["typed_undone"] = [n for n, o in parts.items() if o.Placement != rest[n]]


def interference_rows(doc, mechanism, parts, result):
    from MultibodyWB.gui import task_interference
    coupler = parts["Coupler"]
    rest = coupler.Placement
    coupler.Placement = FreeCAD.Placement(rest.Base - FreeCAD.Vector(0, 0, sfb.THICK),
                                          rest.Rotation)
    doc.recompute()
    select(doc, (mechanism, ""))
    FreeCADGui.runCommand("MultibodyWB_Interference")
    in_freecad.wait(0.5)
    panel = task_interference.current
    result["interference_panel"] = panel is not None
    if panel is not None:
        table = panel.table
        result["interference_rows"] = [[table.topLevelItem(r).text(c)
                                        for c in range(table.columnCount())]
                                       for r in range(table.topLevelItemCount())]
        result["interference_headline"] = panel.headline.text()
        result["interference_red"] = "a40000" in panel.headline.styleSheet()
        result["interference_shot"] = in_freecad.shot("stacked_interference.png")
        button = dialog_button("Close")
        if button is not None:
            button.click()
        in_freecad.wait(0.3)
    coupler.Placement = rest
    doc.recompute()


def fem_loads(doc, mechanism, parts, hinges, result):
    from MultibodyWB.document import runs
    from MultibodyWB.gui import task_fem_loads
    # a 60 rpm motor typed into the crank pivot's panel: the links accelerate in their plane
    # (gravity is along the pins)
    hinges["CrankPivot"].ViewObject.doubleClicked()
    in_freecad.wait(0.3)
    in_freecad.type_into("MotorSpeedRz", "60 rpm")
    result["fem_motor_ok"] = in_freecad.click("Ok")
    result["fem_motor_deg_s"] = float(hinges["CrankPivot"].MotorSpeedRz.getValueAs("deg/s"))
    run = runs.simulate_mechanism(mechanism, t_end=0.3, output_step=0.01)
    select(doc, (parts["Coupler"], "Face1"), (run, ""))
    FreeCADGui.runCommand("MultibodyWB_FemLoads")
    in_freecad.wait(0.5)
    panel = task_fem_loads.current
    result["fem_panel"] = panel is not None
    if panel is None:
        return

    def widget(name):
        return panel.form.findChild(W.QWidget, name)

    result["fem_body"] = widget("Body").currentText()
    widget("ByTime").click()
    edit = widget("Time")
    edit.setFocus()
    edit.setText("150 ms")
    edit.editingFinished.emit()
    widget("Preview").click()
    in_freecad.wait(0.5)
    result["fem_time"] = panel.inst.loads.time
    result["fem_residual"] = list(panel.inst.loads.residual())
    result["fem_drawn_residual"] = list(panel.inst.drawn.residual())
    result["fem_note"] = widget("Note").text()
    table = widget("Loads")
    result["fem_rows"] = [[table.topLevelItem(r).text(c) for c in range(table.columnCount())]
                          for r in range(table.topLevelItemCount())]
    result["fem_shot"] = in_freecad.shot("stacked_fem_loads.png")
    button = dialog_button("Close") or dialog_button("Cancel")
    if button is not None:
        button.click()
    in_freecad.wait(0.3)


def check():
    result = {"freecad_version": FreeCAD.Version()[:3]}
    FreeCADGui.activateWorkbench(WORKBENCH)
    doc = FreeCAD.newDocument("Stacked")
    FreeCADGui.ActiveDocument.ActiveView.viewIsometric()
    mechanism, parts, hinges = build(doc, result)
    doc.recompute()
    doc.clearUndos()
    doc.UndoMode = 1
    result["drawn_heights"] = {n: sfb.axial(o)[0] for n, o in parts.items()}
    for step in (drag_to_check, typed_start, interference_rows, fem_loads):
        try:
            if step in (typed_start, fem_loads):
                step(doc, mechanism, parts, hinges, result)
            else:
                step(doc, mechanism, parts, result)
        except Exception as exc:  # noqa: BLE001 - recorded per step, the others still run
            import traceback
            result[f"{step.__name__}_error"] = traceback.format_exc()
            FreeCAD.Console.PrintError(f"{step.__name__}: {exc}\n")
    result["report_errors"] = [line for line in in_freecad.report_view_text().splitlines()
                               if "MultibodyWB" in line and line.startswith("Err")]
    return result


in_freecad.run_and_quit(check, watchdog_s=500)
