"""GUI check run inside FreeCAD: a contact on a solid whose surface is no primitive (an egg),
made with the Contact command and its panel as a user makes it; then the tumbling-solids example
built from FreeCAD solids, simulated, and shown at its end.

An egg (an ellipsoid: a sphere scaled along x, a B-spline solid) floats just above a plate (the
ground) on a free hinge. The user clicks the plate's top face, then the egg's face, and presses
Contact: the egg's side is its solid's convex hull, its marker at the egg's centre of mass; the
panel shows the convex shape, which solid and how many hull points; a finer tolerance typed in
shows more points; the impact speed is typed in, OK clicked. The egg settles on the plate
(through the workbench's run path) and carries its weight. Screenshots: the panel open, the
example as drawn and at the end of its run.

Started by tests/test_gui_contact_convex.py through ``freecad_env.run_freecad_gui``; writes its
findings as JSON.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import FreeCAD  # noqa: E402
import FreeCADGui  # noqa: E402
import in_freecad  # noqa: E402
from in_freecad import click, panel, type_into, widget  # noqa: E402

WORKBENCH = "MultibodyWorkbench"
W = in_freecad._widgets_module()


A, B = 20.0, 14.0           #: the egg's semi-axes, mm


def shot(name, view_dir="isometric"):
    view = FreeCADGui.ActiveDocument.ActiveView
    getattr(view, {"isometric": "viewIsometric", "front": "viewFront"}[view_dir])()
    view.fitAll()
    in_freecad.wait(0.3)
    return in_freecad.grab_main_window(name, size=(1280, 960))


def build(doc):
    import Part
    from MultibodyWB.document import factory
    plate = doc.addObject("Part::Box", "Plate")
    plate.Length, plate.Width, plate.Height = 120, 120, 10
    plate.Placement.Base = FreeCAD.Vector(-60, -60, -10)
    egg = doc.addObject("Part::Feature", "Egg")
    scale = FreeCAD.Matrix()
    scale.scale(A / B, 1.0, 1.0)
    egg.Shape = Part.makeSphere(B).transformGeometry(scale)
    egg.Placement = FreeCAD.Placement(FreeCAD.Vector(0, 0, B),
                                      FreeCAD.Rotation(FreeCAD.Vector(1, 0, 0), 35))
    doc.recompute()
    mech = factory.make_mechanism(doc, "Rest")
    ground = factory.make_body(doc, mech, plate, ground=True, name="Plate body")
    body = factory.make_body(doc, mech, egg, density=1000.0, name="Egg body")
    factory.make_hinge(doc, mech, "free", factory.make_marker(doc, body, None),
                       factory.make_marker(doc, ground, None), name="Float")
    doc.recompute()
    top = next(f"Face{i}" for i, f in enumerate(plate.Shape.Faces, 1)
               if abs(f.CenterOfMass.z) < 1e-9)
    return mech, plate, egg, top


def _count(text):
    found = re.search(r"(\d+) points", text)
    return int(found.group(1)) if found else None


def check():
    from MultibodyWB.objects import contact
    from MultibodyWB.objects.base import type_of
    result = {"freecad_version": FreeCAD.Version()[:3]}
    FreeCADGui.activateWorkbench(WORKBENCH)
    doc = FreeCAD.newDocument("Egg")
    mech, plate, egg, top = build(doc)
    doc.clearUndos()
    doc.UndoMode = 1
    in_freecad.wait(0.5)

    # the user clicks the plate's top face, then the egg
    FreeCADGui.Selection.clearSelection()
    FreeCADGui.Selection.addSelection(doc.Name, plate.Name, top)
    FreeCADGui.Selection.addSelection(doc.Name, egg.Name, "Face1")
    in_freecad.process_events()
    before = {o.Name for o in doc.Objects}
    FreeCADGui.runCommand("MultibodyWB_Contact")
    in_freecad.wait(0.5)
    made = [o for o in doc.Objects if o.Name not in before]
    result["made"] = sorted(type_of(o) or o.TypeId for o in made)
    result["undo_after_command"] = [doc.UndoCount, list(doc.UndoNames)]
    hit = next(o for o in made if type_of(o) == "Multibody::Contact")
    marker = hit.InputMarker
    result["shapes"] = [hit.InputShape, hit.OutputShape]
    result["marker_at_centre_of_mass"] = (marker.Placement.Base -
                                          egg.Shape.CenterOfMass).Length
    result["egg_not_moved"] = (egg.Placement.Base - FreeCAD.Vector(0, 0, B)).Length
    result["tolerance"] = hit.InputTolerance.Value
    result["hull_points"] = len(contact.hull_points(hit, "Input"))
    result["stiffness"] = hit.Stiffness
    result["rule"] = hit.StiffnessRule
    result["mass"] = egg.Shape.Volume * 1e-6
    p = panel()
    result["panel"] = type(p).__name__ if p is not None else None
    result["pair_text"] = widget("pair").text()
    combo = p.fields["InputShape"].widget
    result["shape_shown"] = combo.currentText()
    result["shape_choices"] = [combo.itemText(i) for i in range(combo.count())]
    result["convex_tip"] = combo.itemData(combo.findText("convex"), 3) or ""    # ToolTipRole
    hull_label = widget("InputHull")
    result["hull_text"] = hull_label.text()
    result["hull_visible"] = hull_label.isVisible()
    result["output_hull_visible"] = widget("OutputHull").isVisible()
    result["visible_fields"] = sorted(name for name, f in p.fields.items()
                                      if f.widget.isVisible())
    # a finer tessellation: more points, said at once
    type_into("InputTolerance", f"{result['tolerance'] / 2:.3f} mm")
    result["finer"] = [hit.InputTolerance.Value, widget("InputHull").text()]
    type_into("ImpactSpeed", "10 mm/s")
    result["panel_shot"] = shot("contact_convex_panel.png")
    result["ok"] = click("Ok")
    result["closed"] = not FreeCADGui.Control.activeDialog()
    result["after_ok"] = [hit.InputTolerance.Value, hit.ImpactSpeed.Value]
    result["undo_after_ok"] = [doc.UndoCount, list(doc.UndoNames)]
    result["problem"] = hit.Problem

    # drawn touching (the exact egg on the plate), its hull a little above: it drops onto its
    # lowest facet, rolls a little about its axis (a fine hull is nearly round) and settles, its
    # weight on the contact
    from MultibodyWB.document import runs
    from MultibodyWB.objects import export
    from MultibodyWB.objects.result import load
    (c,) = export.to_model(mech).contacts
    result["model_points"] = len(c.input_shape.points)
    res = load(runs.simulate_mechanism(mech, t_end=1.0, output_step=1e-3, integrator="DOP853"))
    result["fn_end"] = [float(x) for x in res[f"{hit.Label}.Fn"][-50:]]
    result["z_end"] = float(res["Egg body.z"][-1])
    FreeCAD.closeDocument(doc.Name)

    # the example from FreeCAD solids: drawn, simulated, and at its end
    from MultibodyWB.document.animation import Animator
    from MultibodyWB.examples_fc import tumbling_solids
    example = FreeCAD.newDocument("TumblingSolids")
    mech = tumbling_solids.setup(example)
    in_freecad.wait(0.5)
    result["example_drawn_shot"] = shot("tumbling_drawn.png")
    run = runs.simulate_mechanism(mech)
    res = load(run)
    result["example_residual"] = float(abs(res["energy.residual"]).max())
    result["example_energy"] = [float(res["energy.total"][0]), float(res["energy.total"][-1])]
    animator = Animator(mech, res)
    animator.apply(float(res.time[-1]))
    for obj in mech.Group:              # the solids alone, where the run left them
        obj.ViewObject.Visibility = False
    in_freecad.wait(0.5)
    result["example_end_shot"] = shot("tumbling_end.png")
    FreeCADGui.Selection.clearSelection()
    for name in ("Egg", "Cone", "Prism", "Fence"):
        FreeCADGui.Selection.addSelection(example.getObject(name))
    view = FreeCADGui.ActiveDocument.ActiveView
    view.viewIsometric()
    FreeCADGui.SendMsgToActiveView("ViewSelection")
    FreeCADGui.Selection.clearSelection()
    in_freecad.wait(0.5)
    result["example_end_front_shot"] = in_freecad.grab_main_window("tumbling_end_close.png",
                                                                   size=(1280, 960))
    animator.restore()
    result["report"] = in_freecad.report_view_text()
    return result


in_freecad.run_and_quit(check, watchdog_s=900)
