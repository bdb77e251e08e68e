"""GUI check run inside FreeCAD: the Hinge, Body, Force and Marker task panels, driven as a user
drives them.

On the crank-slider engine built from solids (``MultibodyWB/examples_fc/crank_slider.py``), each
panel is opened by a double-click (the view provider's ``doubleClicked``, FreeCAD's path to
``setEdit``), its fields typed into, its OK and Cancel buttons clicked; undo counts, properties and
placements are compared before and after. The main bearing's initial angle typed in its panel moves
the crank, rod and piston with the loop closed; Cancel puts them back exactly; OK keeps them and is
one undo step. A hinge command on two picked faces opens the new hinge's panel; its ends are picked
in the panel. Screenshots of the whole main window with each panel.

Started by tests/test_gui_task_panels.py through ``freecad_env.run_freecad_gui``; writes its
findings as JSON.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import FreeCAD  # noqa: E402
import FreeCADGui  # noqa: E402
import in_freecad  # noqa: E402
from in_freecad import panel, shot  # noqa: E402

WORKBENCH = "MultibodyWorkbench"
W = in_freecad._widgets_module()


def dialog_button(which):
    """The task dialog's standard button ``which`` ("Ok", "Cancel") the user would click."""
    for box in FreeCADGui.getMainWindow().findChildren(W.QDialogButtonBox):
        button = box.button(getattr(W.QDialogButtonBox, which))
        if button is not None and button.isVisible():
            return button
    return None


def click(which):
    button = dialog_button(which)
    if button is None:
        return False
    button.click()
    in_freecad.wait(0.3)
    return True


def widget(name, cls=None):
    p = panel()
    for form in p.form:
        found = form.findChild(cls or W.QWidget, name)
        if found is not None:
            return found
    return None


def type_into(name, text):
    """Type ``text`` into the field ``name`` (a text field) as a user, then leave the field."""
    w = widget(name)
    edit = w if isinstance(w, W.QLineEdit) else w.findChild(W.QLineEdit)
    edit.selectAll()
    edit.setText(text)
    edit.textEdited.emit(text)   # QLineEdit.setText does not emit textEdited (typing does)
    edit.editingFinished.emit()  # Tab or Enter
    in_freecad.process_events()


def placements(doc):
    return {o.Name: o.Placement for o in doc.Objects
            if o.TypeId.startswith("Part::") and not hasattr(getattr(o, "Proxy", None), "Type")}


def moved(before, after, tol=1e-9):
    out = []
    for name, p in before.items():
        q = after[name]
        if not same(p, q, tol):
            out.append(name)
    return sorted(out)


def residuals(mechanism):
    """Largest residual of every hinge as the document is drawn now: (rad, mm)."""
    import numpy as np
    from MultibodyWB.objects import export
    from MultibodyWB.solver.analysis.kinematics import mobility
    m = mobility(export.to_model(mechanism))
    res = np.array(list(m.drawn_residuals.values()))
    return float(np.max(np.abs(res[:, :3]))), float(np.max(np.abs(res[:, 3:]))) * 1000.0


def crank_rotation(doc):
    """Rotation of the crank web (its first solid) as drawn now."""
    return doc.getObject("Crank").Solids[0].Placement.Rotation


def turned(r0, r1):
    """Angle (deg) of the rotation taking ``r0`` to ``r1``."""
    import math
    a = math.degrees(r1.multiply(r0.inverted()).Angle) % 360.0
    return min(a, 360.0 - a)


def same(p, q, tol):
    """Placements ``p`` and ``q`` equal to ``tol`` (mm, and rotation quaternion entries)."""
    return (p.Base - q.Base).Length <= tol and \
        max(abs(a - b) for a, b in zip(p.Rotation.Q, q.Rotation.Q)) <= tol


def value_in(obj, name, unit):
    """Property ``name`` of ``obj`` (a quantity, or a text with its unit) as a number in
    ``unit``."""
    from MultibodyWB.objects import units
    from MultibodyWB.objects.base import quantity_value
    return quantity_value(obj, name) / units.factor(unit)


def grab_form(name):
    """Screenshot of the open panel's whole form (every field, also those scrolled away)."""
    path = os.path.join(in_freecad.output_dir(), name)
    return path if panel().form[0].grab().save(path) else None


def double_click(obj):
    obj.ViewObject.doubleClicked()
    in_freecad.wait(0.3)
    p = panel()
    return {"open": bool(FreeCADGui.Control.activeDialog()),
            "panel": type(p).__name__ if p is not None else None,
            "object": p.obj.Name if p is not None else None,
            "in_edit": FreeCADGui.ActiveDocument.getInEdit() is not None}


def check_hinge(doc, mechanism, result):
    hinge = doc.getObject("MainBearing")
    r = {}
    undo0 = doc.UndoCount
    drawn = placements(doc)
    r0 = crank_rotation(doc)
    r["opened"] = double_click(hinge)
    r["initial_shown"] = widget("InitialRz").text()
    r["visible_groups"] = sorted(name for name, (box, _) in panel().groups.items()
                                 if box.isVisible())
    r["driver_label"] = panel().fields["DriverRz"].label.text()
    type_into("InitialRateRz", "60 rpm")
    r["rate_from_rpm"] = hinge.InitialRateRz.Value           # deg/s
    # quantities kept as texts with their unit: shown as that text, typed in any unit of the kind
    r["text_fields_shown"] = {name: widget(name).text()
                              for name in ("StiffnessRz", "DampingRz", "MotorRampTimeRz")}
    type_into("StiffnessRz", "35 N*mm/deg")
    type_into("MotorRampTimeRz", "10 us")
    r["text_live"] = {name: [getattr(hinge, name), value_in(hinge, name, unit)]
                      for name, unit in (("StiffnessRz", "N*m/rad"), ("MotorRampTimeRz", "s"))}
    type_into("DampingRz", "abc")                             # nonsense: said, not applied
    r["nonsense_message"] = widget("message").text()
    r["nonsense_visible"] = widget("message").isVisible()
    r["damping_after_nonsense"] = hinge.DampingRz
    r["ok_refused_nonsense"] = click("Ok") and panel() is not None and \
        bool(FreeCADGui.Control.activeDialog())
    type_into("DampingRz", "0.5 N\u00b7m\u00b7s/rad")           # as the panel writes units
    r["damping_typed_pretty"] = hinge.DampingRz
    # the initial angle typed in: the parts move, the loop stays closed
    type_into("InitialRz", "30 \u00b0")
    in_freecad.wait(0.3)
    live = placements(doc)
    r["moved_live"] = moved(drawn, live)
    r["angle_live"] = turned(r0, crank_rotation(doc))
    r["residuals_live"] = residuals(mechanism)
    r["preview_text"] = widget("preview").text()
    r["message"] = widget("message").text()
    r["undo_live"] = doc.UndoCount - undo0
    r["screenshot"] = shot("panel_hinge.png")
    # Cancel: everything back exactly
    r["cancel_clicked"] = click("Cancel")
    r["after_cancel_open"] = bool(FreeCADGui.Control.activeDialog())
    r["moved_after_cancel"] = moved(drawn, placements(doc), tol=0.0)
    r["initial_after_cancel"] = hinge.InitialRz.Value
    r["texts_after_cancel"] = {name: getattr(hinge, name)
                               for name in ("StiffnessRz", "DampingRz", "MotorRampTimeRz")}
    r["undo_after_cancel"] = doc.UndoCount - undo0
    r["in_edit_after_cancel"] = FreeCADGui.ActiveDocument.getInEdit() is not None

    # OK: the angle and a stiffness, one undo step, the parts stay moved
    double_click(hinge)
    type_into("InitialRz", "30 \u00b0")
    type_into("StiffnessRz", "2")                              # a number: in N*m/rad
    type_into("DampingRz", "35 N*mm*s/deg")
    type_into("MotorRampTimeRz", "10 us")
    in_freecad.wait(0.2)
    r["texts_shown_typed"] = {name: widget(name).text()
                              for name in ("StiffnessRz", "DampingRz", "MotorRampTimeRz")}
    r["screenshot_form"] = grab_form("panel_hinge_form.png")
    r["ok_clicked"] = click("Ok")
    r["undo_after_ok"] = doc.UndoCount - undo0
    r["undo_name"] = list(doc.UndoNames[:1])
    r["stiffness_after_ok"] = value_in(hinge, "StiffnessRz", "N*m/rad")
    r["texts_after_ok"] = {name: getattr(hinge, name)
                           for name in ("StiffnessRz", "DampingRz", "MotorRampTimeRz")}
    r["damping_after_ok"] = value_in(hinge, "DampingRz", "N*m*s/rad")
    r["ramp_after_ok"] = value_in(hinge, "MotorRampTimeRz", "s")
    r["angle_after_ok"] = turned(r0, crank_rotation(doc))
    r["moved_after_ok"] = moved(drawn, placements(doc))
    r["residuals_after_ok"] = residuals(mechanism)
    doc.undo()
    doc.recompute()
    r["moved_after_undo"] = moved(drawn, placements(doc), tol=1e-9)
    r["stiffness_after_undo"] = value_in(hinge, "StiffnessRz", "N*m/rad")
    r["texts_after_undo"] = {name: getattr(hinge, name)
                             for name in ("StiffnessRz", "DampingRz", "MotorRampTimeRz")}
    doc.redo()
    doc.recompute()
    r["angle_after_redo"] = turned(r0, crank_rotation(doc))
    doc.undo()
    doc.recompute()
    # a start the loop cannot reach: said in words, nothing moves
    drawn = placements(doc)
    double_click(doc.getObject("Cylinder"))
    type_into("InitialZ", "1000 mm")
    in_freecad.wait(0.2)
    r["unreachable_message"] = widget("message").text()
    r["moved_unreachable"] = moved(drawn, placements(doc))
    r["message_visible"] = widget("message").isVisible()
    r["screenshot_unreachable"] = shot("panel_hinge_unreachable.png")
    r["limits_enabled"] = widget("LowerLimitZ").isEnabled()
    widget("UseLimits").click()
    r["limits_enabled_after_switch"] = widget("LowerLimitZ").isEnabled()
    r["ok_refused"] = click("Ok") and panel() is not None and FreeCADGui.Control.activeDialog()
    r["undo_after_refused_ok"] = doc.UndoCount
    click("Cancel")
    r["moved_after_unreachable_cancel"] = moved(drawn, placements(doc), tol=0.0)
    result["hinge"] = r


def check_body(doc, result):
    body = doc.getObject("Rod")
    r = {}
    undo0 = doc.UndoCount
    mass0 = body.Mass.Value
    r["opened"] = double_click(body)
    r["mass_text"] = widget("Mass").text()
    r["ixx_text"] = widget("Ixx").text()
    r["ixx_value"] = value_in(body, "Ixx", "kg*mm^2")              # a text with its unit
    r["mass_value"] = value_in(body, "Mass", "kg")
    r["com_text"] = widget("CenterOfMass").text()
    type_into("Density", "2700 kg/m^3")
    in_freecad.wait(0.2)
    r["mass_text_live"] = widget("Mass").text()
    r["mass_ratio_live"] = body.Mass.Value / mass0
    r["ixx_text_live"] = widget("Ixx").text()
    r["ixx_value_live"] = value_in(body, "Ixx", "kg*mm^2")
    r["screenshot"] = shot("panel_body.png")
    r["screenshot_form"] = grab_form("panel_body_form.png")
    card = widget("material_card", W.QComboBox)
    index = card.findText("Steel-Generic")
    card.setCurrentIndex(index)
    card.activated.emit(index)            # what a user's choice emits
    in_freecad.process_events()
    r["card_source"] = body.DensitySource
    r["card_material"] = dict(body.Material)
    r["mass_ratio_card"] = body.Mass.Value / mass0
    mechanism = doc.getObject("CrankSlider")
    ground0 = mechanism.Ground.Name
    widget("ground").click()
    in_freecad.process_events()
    r["ground_live"] = mechanism.Ground.Name
    solids = widget("solids")
    solids.item(2).setSelected(True)
    widget("remove_solids").click()
    in_freecad.process_events()
    r["solids_live"] = [o.Name for o in body.Solids]
    r["mass_ratio_removed"] = body.Mass.Value / mass0
    click("Cancel")
    r["ground_after_cancel"] = mechanism.Ground.Name == ground0
    r["solids_after_cancel"] = [o.Name for o in body.Solids]
    r["mass_ratio_after_cancel"] = body.Mass.Value / mass0
    r["source_after_cancel"] = body.DensitySource
    r["material_after_cancel"] = dict(body.Material)
    r["undo_after_cancel"] = doc.UndoCount - undo0
    double_click(body)
    type_into("Density", "2.7 g/cm^3")
    click("Ok")
    r["undo_after_ok"] = doc.UndoCount - undo0
    r["density_after_ok"] = body.Density.getValueAs("kg/m^3").Value if hasattr(
        body.Density.getValueAs("kg/m^3"), "Value") else float(body.Density.getValueAs("kg/m^3"))
    r["mass_ratio_after_ok"] = body.Mass.Value / mass0
    doc.undo()
    doc.recompute()
    r["mass_ratio_after_undo"] = body.Mass.Value / mass0
    result["body"] = r


def check_force(doc, result):
    force = doc.getObject("GasForce")
    r = {}
    undo0 = doc.UndoCount
    direction0 = FreeCAD.Vector(force.Direction)
    box0 = in_freecad.symbol_box(force)
    r["opened"] = double_click(force)
    r["visible_groups"] = sorted(name for name, (box, _) in panel().groups.items()
                                 if box.isVisible())
    for axis, value in zip("xyz", (1.0, 0.0, 0.0)):
        widget(f"Direction_{axis}").setValue(value)
    in_freecad.process_events()
    r["direction_live"] = list(force.Direction)
    box1 = in_freecad.symbol_box(force)
    r["arrow_moved"] = box0 != box1
    r["screenshot"] = shot("panel_force.png")
    combo = widget("ForceType", W.QComboBox)
    combo.setCurrentIndex(combo.findText("spring_damper"))
    in_freecad.process_events()
    r["spring_groups"] = sorted(name for name, (box, _) in panel().groups.items()
                                if box.isVisible())
    r["spring_second_end_shown"] = widget("pick1").isVisible()
    r["magnitude_label"] = panel().fields["Magnitude"].label.text()
    r["damping_shown"] = widget("Damping").text()               # a text with its unit
    type_into("Damping", "1.5 N*s/mm")
    r["damping_live"] = [force.Damping, value_in(force, "Damping", "N*s/m")]
    r["screenshot_form"] = grab_form("panel_force_form.png")
    click("Cancel")
    r["damping_after_cancel"] = force.Damping
    r["type_after_cancel"] = force.ForceType
    r["direction_after_cancel"] = list(force.Direction)
    r["direction_restored"] = force.Direction == direction0
    r["arrow_after_cancel"] = in_freecad.symbol_box(force) == box0
    double_click(force)
    type_into("Magnitude", "1000*t")
    click("Ok")
    r["magnitude_after_ok"] = force.Magnitude
    r["undo_after_ok"] = doc.UndoCount - undo0
    doc.undo()
    r["magnitude_after_undo"] = force.Magnitude
    result["force"] = r


def check_marker(doc, result):
    marker = doc.getObject("PistonCrown")
    r = {}
    undo0 = doc.UndoCount
    p0 = marker.Placement
    r["opened"] = double_click(marker)
    r["picked_text"] = widget("picked").text()
    type_into("offset_z", "5 mm")
    in_freecad.process_events()
    r["moved_live"] = list(marker.Placement.Base - p0.Base)
    r["z_axis"] = list(marker.Placement.Rotation.multVec(FreeCAD.Vector(0, 0, 1)))
    widget("flip").click()
    in_freecad.process_events()
    r["z_axis_flipped"] = list(marker.Placement.Rotation.multVec(FreeCAD.Vector(0, 0, 1)))
    r["screenshot"] = shot("panel_marker.png")
    click("Cancel")
    r["restored"] = same(marker.Placement, p0, 1e-12)
    r["undo_after_cancel"] = doc.UndoCount - undo0
    # pick another face, OK: one undo step
    double_click(marker)
    widget("pick").click()
    piston = doc.getObject("Piston").Solids[0]
    FreeCADGui.Selection.addSelection(doc.Name, piston.Name, "Face1")
    in_freecad.wait(0.3)
    r["picked_after"] = marker.PickedElement
    r["report_after_pick"] = in_freecad.report_view_text().count("cannot attach")
    click("Ok")
    r["report_after_ok"] = in_freecad.report_view_text().count("cannot attach")
    r["undo_after_ok"] = doc.UndoCount - undo0
    r["picked_after_ok"] = marker.PickedElement
    doc.undo()
    r["state_after_undo"] = list(marker.State)
    doc.recompute()
    r["state_after_recompute"] = list(marker.State)
    in_freecad.wait(0.3)
    r["state_after_wait"] = list(marker.State)
    r["report_after_wait"] = in_freecad.report_view_text().count("cannot attach")
    r["picked_after_undo"] = marker.PickedElement
    r["report_after_undo"] = in_freecad.report_view_text().count("cannot attach")
    r["restored_after_undo"] = same(marker.Placement, p0, 1e-9)
    result["marker"] = r


def check_create(doc, result):
    """The hinge command on two faces opens the new hinge's panel; ends picked in it."""
    r = {}
    undo0 = doc.UndoCount
    crank_web = doc.getObject("Crank").Solids[0]
    rod_web = doc.getObject("Rod").Solids[0]
    FreeCADGui.Selection.clearSelection()
    FreeCADGui.Selection.addSelection(doc.Name, rod_web.Name, "Face1")
    FreeCADGui.Selection.addSelection(doc.Name, crank_web.Name, "Face2")
    FreeCADGui.runCommand("MultibodyWB_HingeRevolute")
    in_freecad.wait(0.3)
    p = panel()
    r["panel"] = type(p).__name__ if p is not None else None
    hinge = p.obj if p is not None else None
    r["hinge"] = hinge.Name if hinge is not None else None
    r["undo_after_create"] = doc.UndoCount - undo0
    if hinge is None:
        result["create"] = r
        return
    r["type_before"] = hinge.HingeType
    combo = widget("HingeType", W.QComboBox)
    combo.setCurrentIndex(combo.findText("spherical"))
    in_freecad.process_events()
    r["type_live"] = hinge.HingeType
    r["visible_groups_spherical"] = sorted(name for name, (box, _) in p.groups.items()
                                           if box.isVisible())
    # pick the input end again: the crank's main marker
    old_input = hinge.InputMarker.Name
    symbol_before = in_freecad.symbol_box(hinge)
    widget("pick0").click()
    FreeCADGui.Selection.addSelection(doc.Name, "RodBigEnd", "")
    in_freecad.wait(0.3)
    r["input_live"] = hinge.InputMarker.Name
    r["symbol_redrawn"] = in_freecad.symbol_box(hinge) != symbol_before
    r["end_text"] = widget("end0").text()
    r["screenshot"] = shot("panel_hinge_new.png")
    # pick a face on the rod: a marker is made live
    names_before = {o.Name for o in doc.Objects}
    widget("pick0").click()
    FreeCADGui.Selection.addSelection(doc.Name, rod_web.Name, "Face3")
    in_freecad.wait(0.3)
    made = sorted({o.Name for o in doc.Objects} - names_before)
    r["made_live"] = made
    click("Cancel")
    r["type_after_cancel"] = hinge.HingeType
    r["input_after_cancel"] = hinge.InputMarker.Name == old_input
    r["made_after_cancel"] = sorted({o.Name for o in doc.Objects} - names_before)
    r["undo_after_cancel"] = doc.UndoCount - undo0
    # again, OK: the type and an end made on a face, one more undo step, recorded
    double_click(hinge)
    combo = widget("HingeType", W.QComboBox)
    combo.setCurrentIndex(combo.findText("cylindrical"))
    widget("pick0").click()
    FreeCADGui.Selection.addSelection(doc.Name, rod_web.Name, "Face3")
    in_freecad.wait(0.3)
    click("Ok")
    r["type_after_ok"] = hinge.HingeType
    r["input_after_ok"] = describe(hinge.InputMarker)
    r["undo_after_ok"] = doc.UndoCount - undo0
    doc.undo()
    r["type_after_undo"] = hinge.HingeType
    r["made_after_undo"] = sorted({o.Name for o in doc.Objects} - names_before)
    result["create"] = r


def describe(marker):
    return {"name": marker.Name, "picked": marker.PickedElement,
            "body": marker.Body.Name if marker.Body else None}


def check_apply(doc, result):
    """Apply: what was typed becomes one undo step, the panel stays open; Cancel afterwards puts
    back only what was typed after Apply."""
    hinge = doc.getObject("WristPin")
    r = {}
    undo0 = doc.UndoCount
    r["opened"] = double_click(hinge)["open"]
    damping0 = hinge.DampingRx
    type_into("StiffnessRx", "3")
    r["apply_clicked"] = click("Apply")
    in_freecad.wait(0.5)
    r["undo_after_apply"] = doc.UndoCount - undo0
    r["undo_name"] = list(doc.UndoNames[:1])
    r["open_after_apply"] = bool(FreeCADGui.Control.activeDialog()) and panel() is not None \
        and not panel().closed and panel().obj.Name == "WristPin"
    r["stiffness_after_apply"] = value_in(hinge, "StiffnessRx", "N*m/rad")
    type_into("DampingRx", "1")
    r["damping_typed"] = value_in(hinge, "DampingRx", "N*m*s/rad")
    click("Cancel")
    r["damping_after_cancel_is_back"] = hinge.DampingRx == damping0
    r["stiffness_after_cancel"] = value_in(hinge, "StiffnessRx", "N*m/rad")
    r["undo_after_cancel"] = doc.UndoCount - undo0
    result["apply"] = r


def check():
    result = {"freecad_version": FreeCAD.Version()[:3]}
    FreeCADGui.activateWorkbench(WORKBENCH)
    doc = FreeCAD.newDocument("Panels")
    from MultibodyWB.examples_fc import crank_slider
    mechanism = crank_slider.setup(doc)
    doc.recompute()
    # the main bearing is driven in the example: remove the driver so its angle is the start
    hinge = doc.getObject("MainBearing")
    hinge.DriverRz = ""
    doc.recompute()
    doc.clearUndos()
    doc.UndoMode = 1
    in_freecad.wait(0.5)
    for step in (lambda: check_hinge(doc, mechanism, result), lambda: check_body(doc, result),
                 lambda: check_force(doc, result), lambda: check_marker(doc, result),
                 lambda: check_create(doc, result), lambda: check_apply(doc, result)):
        try:
            step()
            in_freecad.wait(0.2)
            result.setdefault("attach_errors", []).append(
                in_freecad.report_view_text().count("cannot attach"))
        except Exception:   # one panel's failure: the others still run
            import traceback
            result.setdefault("errors", []).append(traceback.format_exc())
            if FreeCADGui.Control.activeDialog():
                FreeCADGui.Control.closeDialog()
    result["console"] = in_freecad.python_console_text()
    return result


in_freecad.run_and_quit(check, watchdog_s=300)
