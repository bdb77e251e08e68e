"""GUI check run inside FreeCAD: the Coupler command and its task panel, driven as a user drives
them.

Two steel wheels (radii 30 and 60 mm) turn on revolute hinges to a plate (the ground), each
hinge's wheel marker picked on the wheel's rim; a torque drives the first. The user selects the
two hinges (as a click in the tree or on their symbols selects them) and presses Coupler: a gear
pair of ratio -r1/r2 is made in one undo step and its panel opens; a ratio is typed in and OK
clicked (a second undo step). The wheels are run through the workbench's run path. Refused
selections: a hinge and a body, a hinge and a fixed hinge. Screenshots of the main window with
the panel open and after OK.

Started by tests/test_gui_coupler.py through ``freecad_env.run_freecad_gui``; writes its
findings as JSON.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import FreeCAD  # noqa: E402
import FreeCADGui  # noqa: E402
import in_freecad  # noqa: E402
from in_freecad import click, panel, shot, type_into, widget  # noqa: E402

WORKBENCH = "MultibodyWorkbench"
W = in_freecad._widgets_module()
COMMAND = "MultibodyWB_Coupler"


def select(doc, *objects):
    """Select ``objects`` whole, in this order, as clicks in the tree select them."""
    FreeCADGui.Selection.clearSelection()
    for obj in objects:
        FreeCADGui.Selection.addSelection(doc.Name, obj.Name)
    in_freecad.process_events()


def build(doc):
    from MultibodyWB.document import factory
    plate = doc.addObject("Part::Box", "Plate")
    plate.Length, plate.Width, plate.Height = 200, 140, 10
    plate.Placement.Base = FreeCAD.Vector(-70, -70, -10)
    wheels = []
    for name, r, x in (("Pinion", 30.0, 0.0), ("Wheel", 60.0, 90.0)):
        w = doc.addObject("Part::Cylinder", name)
        w.Radius, w.Height = r, 10.0
        w.Placement.Base = FreeCAD.Vector(x, 0, 0)
        wheels.append(w)
    block = doc.addObject("Part::Box", "Block")
    block.Length = block.Width = block.Height = 10
    block.Placement.Base = FreeCAD.Vector(-60, 40, 0)
    doc.recompute()
    mech = factory.make_mechanism(doc, "Gears")
    ground = factory.make_body(doc, mech, plate, ground=True, name="Plate body")
    hinges, markers = [], []
    for w in wheels:
        body = factory.make_body(doc, mech, w, density=7850, name=f"{w.Name} body")
        rim = next(f"Face{i}" for i, f in enumerate(w.Shape.Faces, 1)
                   if type(f.Surface).__name__ == "Cylinder")
        on_wheel = factory.make_marker(doc, body, (w, rim))
        doc.recompute()
        offset = plate.Placement.inverse().multiply(on_wheel.Placement)
        on_plate = factory.make_marker(doc, ground, None, offset=offset)
        hinges.append(factory.make_hinge(doc, mech, "revolute", on_wheel, on_plate,
                                         name=f"{w.Name}Axle"))
        markers.append(on_wheel)
    factory.make_force(doc, mech, "point_torque", markers[0], direction=(0, 0, 1),
                       magnitude="0.5", name="Drive")
    cube = factory.make_body(doc, mech, block, name="Block body")
    on_cube = factory.make_marker(doc, cube, None)
    doc.recompute()
    on_plate = factory.make_marker(doc, ground, None,
                                   offset=plate.Placement.inverse().multiply(on_cube.Placement))
    weld = factory.make_hinge(doc, mech, "fixed", on_cube, on_plate, name="Weld")
    doc.recompute()
    return mech, hinges, cube, weld


def refused(doc, result, key, *objects):
    """Select ``objects`` and press Coupler: whether it is active, why not, what the press
    says and makes."""
    from MultibodyWB.commands import base, couplers
    select(doc, *objects)
    command = couplers.CreateCoupler()
    active = bool(command.IsActive())
    count = len(doc.Objects)
    FreeCADGui.runCommand(COMMAND)            # a greyed-out button: FreeCAD may ignore it
    in_freecad.wait(0.8)
    if not active:
        command.Activated()                   # what the command says if it is run anyway
        in_freecad.wait(0.8)
    result[key] = {"active": active, "reason": base._REASONS.get(COMMAND, ""),
                   "made": len(doc.Objects) - count,
                   "panel": bool(FreeCADGui.Control.activeDialog())}


def check():
    from MultibodyWB.objects.base import type_of
    result = {"freecad_version": FreeCAD.Version()[:3]}
    FreeCADGui.activateWorkbench(WORKBENCH)
    doc = FreeCAD.newDocument("Coupler")
    mech, hinges, cube, weld = build(doc)
    doc.clearUndos()
    doc.UndoMode = 1
    in_freecad.wait(0.5)
    result["toolbar"] = [
        a.objectName() for tb in FreeCADGui.getMainWindow().findChildren(W.QToolBar)
        if tb.windowTitle() == "Multibody forces" for a in tb.actions()]

    # the user selects the two hinges (tree or symbols) and presses Coupler
    select(doc, *hinges)
    from MultibodyWB.commands import couplers
    result["active"] = bool(couplers.CreateCoupler().IsActive())
    before = {o.Name for o in doc.Objects}
    FreeCADGui.runCommand(COMMAND)
    in_freecad.wait(0.5)
    made = [o for o in doc.Objects if o.Name not in before]
    result["made"] = sorted(type_of(o) or o.TypeId for o in made)
    result["undo_after_command"] = [doc.UndoCount, list(doc.UndoNames)]
    mesh = made[0]
    result["label"] = mesh.Label
    result["coupler"] = [mesh.CouplerType, mesh.FirstHinge.Name, mesh.FirstCoordinate,
                         mesh.SecondHinge.Name, mesh.SecondCoordinate, mesh.Ratio]
    result["hinges"] = [h.Name for h in hinges]
    p = panel()
    result["panel"] = type(p).__name__ if p is not None else None
    result["couples_text"] = widget("couples").text()
    result["visible_fields"] = sorted(name for name, f in p.fields.items()
                                      if f.widget.isVisible())
    result["ratio_shown"] = widget("Ratio").text()
    type_into("Ratio", "-0.4")
    result["live"] = mesh.Ratio
    result["panel_shot"] = shot("coupler_panel.png")
    result["ok"] = click("Ok")
    result["closed"] = not FreeCADGui.Control.activeDialog()
    result["after_ok"] = mesh.Ratio
    result["undo_after_ok"] = [doc.UndoCount, list(doc.UndoNames)]
    result["problem"] = mesh.Problem
    result["symbol"] = mesh.ViewObject.Proxy.__class__.__name__
    result["shot"] = shot("coupler_after_ok.png")

    # the neutral model and a run through the workbench's run path
    from MultibodyWB.objects import export
    (k,) = export.to_model(mech).couplers
    result["model"] = [k.name, k.type, str(k.first), str(k.second), k.ratio]
    from MultibodyWB.document import runs
    from MultibodyWB.objects.result import load
    run = runs.simulate_mechanism(mech, t_end=0.3, step=1e-3, output_step=0.05)
    res = load(run)
    result["columns"] = [n for n in res.names if n.startswith(mesh.Label + ".")]
    result["r1"] = [float(x) for x in res["PinionAxle.rz"]]
    result["r2"] = [float(x) for x in res["WheelAxle.rz"]]

    # the panel again (double-click): the user picks rack_pinion for two rotations; OK says
    # why not and stays open; Cancel puts the gear back
    FreeCADGui.ActiveDocument.setEdit(mesh.Name)
    in_freecad.wait(0.5)
    combo = widget("CouplerType")
    combo.setCurrentIndex(combo.findText("rack_pinion"))
    in_freecad.process_events()
    p = panel()
    result["switched"] = {
        "type": mesh.CouplerType,
        "visible": sorted(n for n, f in p.fields.items() if f.widget.isVisible()),
        "meaning": widget("meaning").text()}
    click("Ok")
    result["switched"]["open_after_ok"] = bool(FreeCADGui.Control.activeDialog())
    result["switched"]["message"] = widget("message").text()
    click("Cancel")
    result["switched"]["closed"] = not FreeCADGui.Control.activeDialog()
    result["switched"]["after_cancel"] = [mesh.CouplerType, mesh.Ratio]
    result["switched"]["undo"] = list(doc.UndoNames)

    # undo: the stored run, the panel's edit, then the coupler
    result["undo_names_after_run"] = list(doc.UndoNames)
    doc.undo()
    doc.undo()
    result["undo1"] = mesh.Ratio
    doc.undo()
    doc.recompute()
    result["after_undo"] = sorted(n for n in before ^ {o.Name for o in doc.Objects}
                                  if not n.startswith("Result"))

    # refused selections
    refused(doc, result, "hinge_and_body", hinges[0], cube)
    refused(doc, result, "hinge_and_fixed", hinges[0], weld)
    # made again and kept: saved, closed, reopened, its symbol drawn by its own view provider
    select(doc, *hinges)
    FreeCADGui.runCommand(COMMAND)
    in_freecad.wait(0.5)
    click("Ok")
    again = next(o for o in doc.Objects if type_of(o) == "Multibody::Coupler")
    name = again.Name
    path = os.path.join(in_freecad.output_dir(), "coupler.FCStd")
    doc.saveAs(path)
    FreeCAD.closeDocument(doc.Name)
    reopened = FreeCAD.openDocument(path)
    in_freecad.wait(0.5)
    kept = reopened.getObject(name)
    proxy = kept.ViewObject.Proxy
    result["reopened"] = {
        "coupler": [kept.CouplerType, kept.FirstCoordinate, kept.SecondCoordinate, kept.Ratio],
        "view_provider": type(proxy).__name__,
        "symbol_nodes": proxy.display.getNumChildren(),
        "problem": kept.Problem}
    result["report"] = in_freecad.report_view_text()
    return result


in_freecad.run_and_quit(check, watchdog_s=400)
