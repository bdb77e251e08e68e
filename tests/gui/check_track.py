"""GUI check run inside FreeCAD: the Track command and its task panel, driven as a user drives
them.

A base plate (the ground body) and two wheels drawn as Part cylinders (axes along y: a 180 mm
sprocket at the origin, a 150 mm idler 900 mm ahead and 40 mm up). The user clicks the two
wheels' rims and presses Track: the panel opens with the wrapped path drawn in the 3D view and
the count, pitch, perimeter and sag below its fields; the count is set in its field (a
screenshot), Cancel leaves the document as it was and takes the path away; opened again, OK
makes the track in one undo step; Undo removes it all. A pick of a flat face is refused with a
message naming it.

Started by tests/test_gui_track.py through ``freecad_env.run_gui_check``; writes its findings
as JSON.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import FreeCAD  # noqa: E402
import FreeCADGui  # noqa: E402
import in_freecad  # noqa: E402
from in_freecad import click  # noqa: E402

WORKBENCH = "MultibodyWorkbench"
COMMAND = "MultibodyWB_Track"
W = in_freecad._widgets_module()


def panel():
    from MultibodyWB.gui import task_track
    return task_track.current


def overlay_nodes(doc):
    """The number of children of the track's path node in the 3D view (None: absent)."""
    scene = FreeCADGui.getDocument(doc.Name).ActiveView.getSceneGraph()
    for k in range(scene.getNumChildren()):
        child = scene.getChild(k)
        if child.getName().getString() == "MultibodyTrackPath":
            return child.getNumChildren()
    return None


def snapshot(doc):
    return {"objects": sorted(o.Name for o in doc.Objects),
            "placements": {o.Name: [round(x, 12) for x in o.Placement.toMatrix().A]
                           for o in doc.Objects if hasattr(o, "Placement")},
            "undo": [doc.UndoCount, list(doc.UndoNames)]}


def rim(solid):
    return next(f"Face{i}" for i, f in enumerate(solid.Shape.Faces, 1)
                if type(f.Surface).__name__ == "Cylinder")


def build(doc):
    from MultibodyWB.document import factory
    plate = doc.addObject("Part::Box", "Plate")
    plate.Length, plate.Width, plate.Height = 1400, 20, 20
    plate.Placement.Base = FreeCAD.Vector(-250, 60, -400)
    wheels = []
    for name, r, x, z in (("Sprocket", 180.0, 0.0, 0.0), ("Idler", 150.0, 900.0, 40.0)):
        c = doc.addObject("Part::Cylinder", name)
        c.Radius, c.Height = r, 100.0
        c.Placement = FreeCAD.Placement(FreeCAD.Vector(x, -50.0, z),
                                        FreeCAD.Rotation(FreeCAD.Vector(1, 0, 0), -90))
        wheels.append(c)
    doc.recompute()
    mech = factory.make_mechanism(doc, "Tracked")
    factory.make_body(doc, mech, plate, ground=True, name="Frame")
    doc.recompute()
    return mech, wheels


def select(doc, picks):
    FreeCADGui.Selection.clearSelection()
    for obj, sub in picks:
        FreeCADGui.Selection.addSelection(doc.Name, obj.Name, sub)
    in_freecad.process_events()


def read_panel(p, doc):
    return {"summary": p.summary.text(), "error": p.error.text(), "count": p.count.value(),
            "density": p.density.text(), "pitch": p.pitch.text(),
            "wheels": p.form.findChild(W.QLabel, "Wheels").text(),
            "overlay_children": overlay_nodes(doc),
            "pins": len(p.plan.pins) if p.plan is not None else None,
            "tight": p.plan.wrap.tight if p.plan is not None else None,
            "sag_mm": 1000 * p.plan.wrap.sag if p.plan is not None else None}


def check():
    result = {"freecad_version": FreeCAD.Version()[:3]}
    FreeCADGui.activateWorkbench(WORKBENCH)
    window = FreeCADGui.getMainWindow()
    result["toolbar"] = [a.objectName() for tb in window.findChildren(W.QToolBar)
                         if tb.windowTitle() == "Multibody model" for a in tb.actions()]
    doc = FreeCAD.newDocument("Tracked")
    mech, wheels = build(doc)
    FreeCADGui.SendMsgToActiveView("ViewFit")
    doc.clearUndos()
    doc.UndoMode = 1
    in_freecad.wait(0.5)
    before = snapshot(doc)
    picks = [(w, rim(w)) for w in wheels]

    # the user clicks the two rims, then Track: the panel, the path
    select(doc, picks)
    FreeCADGui.runCommand(COMMAND)
    in_freecad.wait(0.5)
    p = panel()
    result["panel"] = type(p).__name__ if p is not None else None
    result["opened"] = read_panel(p, doc)
    # the count typed in the panel's field
    p.count.setValue(result["opened"]["tight"] + 2)
    in_freecad.wait(0.3)
    result["set"] = read_panel(p, doc)
    view = FreeCADGui.ActiveDocument.ActiveView
    view.viewFront()
    view.fitAll()
    in_freecad.wait(0.3)
    result["shot"] = in_freecad.grab_main_window("track_panel.png", size=(1280, 960))
    result["cancelled"] = click("Cancel")
    result["dialog_after_cancel"] = bool(FreeCADGui.Control.activeDialog())
    result["overlay_after_cancel"] = overlay_nodes(doc)
    result["before"], result["after_cancel"] = before, snapshot(doc)

    # again, OK: the track in one undo step
    select(doc, picks)
    FreeCADGui.runCommand(COMMAND)
    in_freecad.wait(0.5)
    p = panel()
    n = p.count.value()
    result["ok_count"] = n
    result["ok"] = click("Ok")
    result["dialog_after_ok"] = bool(FreeCADGui.Control.activeDialog())
    result["overlay_after_ok"] = overlay_nodes(doc)
    made = [o for o in doc.Objects if o.Name not in before["objects"]]
    result["made"] = {"links": sum(o.TypeId == "App::Link" for o in made),
                      "boxes": sum(o.TypeId == "Part::Box" for o in made),
                      "bodies": sum(getattr(o, "Proxy", None).__class__.__name__ == "BodyProxy"
                                    for o in made),
                      "hinges": sorted({getattr(o, "HingeType", "") for o in made} - {""}),
                      "hinge_count": sum(bool(getattr(o, "HingeType", "")) for o in made)}
    result["shoe_mass"] = sorted({round(o.Mass.Value, 9) for o in made
                                  if getattr(o, "Proxy", None).__class__.__name__ == "BodyProxy"})
    result["undo_after_ok"] = [doc.UndoCount, list(doc.UndoNames)]
    result["wheels_after_ok"] = snapshot(doc)["placements"]["Idler"] == \
        before["placements"]["Idler"]
    from MultibodyWB.objects import export
    model = export.to_model(mech)
    result["model"] = {"bodies": len(model.bodies), "hinges": len(model.hinges)}
    result["console"] = in_freecad.python_console_text()
    doc.undo()
    in_freecad.process_events()
    result["after_undo"] = snapshot(doc)

    # a flat face picked: refused, named, nothing opens
    flat = next(f"Face{i}" for i, f in enumerate(wheels[1].Shape.Faces, 1)
                if type(f.Surface).__name__ == "Plane")
    select(doc, [picks[0], (wheels[1], flat)])
    FreeCADGui.runCommand(COMMAND)
    in_freecad.wait(0.5)
    result["refused_panel"] = panel() is not None and panel().is_open()
    result["report"] = in_freecad.report_view_text()
    result["flat"] = flat
    return result


in_freecad.run_and_quit(check, watchdog_s=600)
