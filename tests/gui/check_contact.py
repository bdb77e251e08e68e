"""GUI check run inside FreeCAD: the Contact command and its task panel, driven as a user drives
them.

A steel ball (radius 10 mm) floats 5 mm above a plate (the ground) on a free hinge. The user
clicks the plate's top face, then the ball, and presses Contact: the markers are made on the
faces, the contact between them, in one undo step, and its panel opens; the restitution and the
impact speed are typed in, OK clicked (a second undo step). The neutral model's contact is read,
the ball dropped through the workbench's run path, and a refused pair (a cone's edge against the
plate) is tried. Screenshots of the main window with the panel open and after OK.

Started by tests/test_gui_contact.py through ``freecad_env.run_freecad_gui``; writes its
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


def build(doc):
    from MultibodyWB.document import factory
    plate = doc.addObject("Part::Box", "Plate")
    plate.Length, plate.Width, plate.Height = 100, 100, 10
    plate.Placement.Base = FreeCAD.Vector(-50, -50, -10)
    ball = doc.addObject("Part::Sphere", "Ball")
    ball.Radius = 10
    ball.Placement.Base = FreeCAD.Vector(0, 0, 15)
    nose = doc.addObject("Part::Cone", "Nose")
    nose.Placement.Base = FreeCAD.Vector(30, 30, 5)
    doc.recompute()
    mech = factory.make_mechanism(doc, "Drop")
    ground = factory.make_body(doc, mech, plate, ground=True, name="Plate body")
    body = factory.make_body(doc, mech, ball, name="Ball body")
    factory.make_hinge(doc, mech, "free", factory.make_marker(doc, body, None),
                       factory.make_marker(doc, ground, None), name="Float")
    doc.recompute()
    top = next(f"Face{i}" for i, f in enumerate(plate.Shape.Faces, 1)
               if abs(f.CenterOfMass.z) < 1e-9)
    return mech, plate, ball, nose, top


def check():
    from MultibodyWB.objects.base import type_of
    result = {"freecad_version": FreeCAD.Version()[:3]}
    FreeCADGui.activateWorkbench(WORKBENCH)
    doc = FreeCAD.newDocument("Contact")
    mech, plate, ball, nose, top = build(doc)
    doc.clearUndos()
    doc.UndoMode = 1
    in_freecad.wait(0.5)
    result["toolbar"] = "MultibodyWB_Contact" in [
        a.objectName() for tb in FreeCADGui.getMainWindow().findChildren(W.QToolBar)
        if tb.windowTitle() == "Multibody forces" for a in tb.actions()]

    # the user clicks the plate's top face, then the ball (the ground first on purpose)
    FreeCADGui.Selection.clearSelection()
    FreeCADGui.Selection.addSelection(doc.Name, plate.Name, top)
    FreeCADGui.Selection.addSelection(doc.Name, ball.Name, "Face1")
    in_freecad.process_events()
    command = FreeCADGui.Command.get("MultibodyWB_Contact") \
        if hasattr(FreeCADGui, "Command") and hasattr(FreeCADGui.Command, "get") else None
    result["active"] = bool(command.isActive()) if command is not None else None
    before = {o.Name for o in doc.Objects}
    FreeCADGui.runCommand("MultibodyWB_Contact")
    in_freecad.wait(0.5)
    made = [o for o in doc.Objects if o.Name not in before]
    result["made"] = sorted(type_of(o) or o.TypeId for o in made)
    result["undo_after_command"] = [doc.UndoCount, list(doc.UndoNames)]
    contacts = [o for o in made if type_of(o) == "Multibody::Contact"]
    hit = contacts[0]
    result["label"] = hit.Label
    result["shapes"] = [hit.InputShape, hit.OutputShape, hit.InputRadius.Value]
    result["stiffness"] = hit.Stiffness
    result["rule"] = hit.StiffnessRule
    p = panel()
    result["panel"] = type(p).__name__ if p is not None else None
    result["pair_text"] = widget("pair").text() if p is not None else ""
    result["visible_fields"] = sorted(name for name, f in p.fields.items()
                                      if f.widget.isVisible())
    result["speed_widget"] = widget("ImpactSpeed").metaObject().className()
    result["stiffness_label"] = p.fields["Stiffness"].label.text()
    result["stiffness_shown"] = widget("Stiffness").text()
    type_into("Restitution", "0.8")
    type_into("ImpactSpeed", "0.5 m/s")
    result["live"] = [hit.Restitution, hit.ImpactSpeed.Value]
    result["panel_shot"] = shot("contact_panel.png")
    result["ok"] = click("Ok")
    result["closed"] = not FreeCADGui.Control.activeDialog()
    result["after_ok"] = [hit.Restitution, hit.ImpactSpeed.Value]
    result["undo_after_ok"] = [doc.UndoCount, list(doc.UndoNames)]
    result["problem"] = hit.Problem
    result["shot"] = shot("contact_after_ok.png")

    # the neutral model
    from MultibodyWB.objects import export
    model = export.to_model(mech)
    (c,) = model.contacts
    ball_part = next(b for b in model.bodies if b.name == c.input.body)
    centre, _ = ball_part.marker_global(c.input.marker)
    on_face, rotation = model.ground.marker_global(c.output.marker)
    result["model"] = {
        "input": [c.input.body, c.input_shape.type, c.input_shape.radius],
        "output": [c.output.body, c.output_shape.type],
        "law": [c.stiffness, c.exponent, c.restitution, c.impact_speed],
        "sphere_centre": [float(x) for x in centre],
        "plane_point": [float(x) for x in on_face],
        "plane_normal": [float(x) for x in rotation[:, 2]]}

    # a run through the workbench's run path: the ball drops and bounces
    from MultibodyWB.document import runs
    from MultibodyWB.objects.result import load
    run = runs.simulate_mechanism(mech, t_end=0.08, step=1e-6, output_step=5e-4)
    res = load(run)
    result["columns"] = [n for n in res.names if n.startswith(hit.Label + ".")]
    result["z"] = [float(x) for x in res[f"{c.input.body}.z"]]
    result["vz"] = [float(x) for x in res[f"{c.input.body}.vz"]]
    result["fn"] = [float(x) for x in res[f"{hit.Label}.Fn"]]

    # undo: the stored run, then the panel's edit, then the command's contact and markers
    result["undo_names_after_run"] = list(doc.UndoNames)
    doc.undo()
    doc.undo()
    result["undo1"] = [hit.Restitution, hit.ImpactSpeed.Value]
    doc.undo()
    doc.recompute()
    result["after_undo"] = sorted(n for n in before ^ {o.Name for o in doc.Objects}
                                  if not n.startswith("Result"))

    # a refused pair: an edge of the cone against the plate (a cone's face is its convex hull:
    # tests/gui/check_contact_convex.py)
    from MultibodyWB.document import factory
    factory.make_body(doc, mech, nose, name="Nose body")
    doc.recompute()
    FreeCADGui.Selection.clearSelection()
    FreeCADGui.Selection.addSelection(doc.Name, nose.Name, "Edge1")
    FreeCADGui.Selection.addSelection(doc.Name, plate.Name, top)
    count = len(doc.Objects)
    FreeCADGui.runCommand("MultibodyWB_Contact")
    in_freecad.wait(1.0)
    result["refused_made"] = len(doc.Objects) - count
    result["refused_panel"] = bool(FreeCADGui.Control.activeDialog())

    # a whole box solid (clicked in the tree) on the plate: a box, its marker at the centre
    block = doc.addObject("Part::Box", "Block")
    block.Length, block.Width, block.Height = 20, 30, 10
    block.Placement = FreeCAD.Placement(FreeCAD.Vector(10, -20, 40),
                                        FreeCAD.Rotation(FreeCAD.Vector(0, 0, 1), 30))
    doc.recompute()
    cube = factory.make_body(doc, mech, block, name="Block body")
    doc.recompute()
    FreeCADGui.Selection.clearSelection()
    FreeCADGui.Selection.addSelection(doc.Name, block.Name)
    FreeCADGui.Selection.addSelection(doc.Name, plate.Name, top)
    before = {o.Name for o in doc.Objects}
    FreeCADGui.runCommand("MultibodyWB_Contact")
    in_freecad.wait(0.5)
    made = [o for o in doc.Objects if o.Name not in before]
    box = next(o for o in made if type_of(o) == "Multibody::Contact")
    marker = box.InputMarker
    result["box"] = {
        "shapes": [box.InputShape, box.OutputShape, list(box.InputSize)],
        "marker_body": marker.Body.Name == cube.Name,
        "centre_error": (marker.Placement.Base - block.Shape.CenterOfMass).Length,
        "axes_same": marker.Placement.Rotation.isSame(block.Placement.Rotation, 1e-9),
        "stiffness": box.Stiffness, "rule": box.StiffnessRule,
        "mass": block.Shape.Volume * 7850e-9,
        "panel": type(panel()).__name__ if panel() is not None else None}
    click("Cancel")
    block.Placement.Base = FreeCAD.Vector(0, 0, 60)        # the marker follows the solid
    doc.recompute()
    result["box"]["centre_error_moved"] = \
        (marker.Placement.Base - block.Shape.CenterOfMass).Length
    result["report"] = in_freecad.report_view_text()
    return result


in_freecad.run_and_quit(check, watchdog_s=400)
