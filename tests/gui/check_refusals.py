"""GUI check run inside FreeCAD: what the Multibody commands refuse, and how they say it.

- Export and Topology figure on a mechanism with problems: refused, every problem listed in a
  dialog and in the report view, no file written;
- Import of a file with problems: refused with every problem listed, nothing added, no undo step;
- a hinge command on a selection it cannot use (two faces of one body): inactive;
- a command whose statements fail half-way: everything it did is undone, the error shown.

Started by tests/test_fc_gui.py through ``freecad_env.run_freecad_gui``; the dialogs are closed by
``in_freecad.run_and_quit`` and reported as ``"dialogs"``.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import FreeCAD  # noqa: E402
import FreeCADGui  # noqa: E402
import in_freecad  # noqa: E402

WORKBENCH = "MultibodyWorkbench"
BROKEN_MODEL = """<?xml version="1.0" encoding="UTF-8"?>
<MultibodySystem Name="broken" FormatVersion="1">
  <RigidBody Name="Lonely" ID="1">
    <Mass>-1</Mass>
  </RigidBody>
  <Hinge Name="J1" Type="revolut"/>
</MultibodySystem>
"""


def multibody_names(doc):
    return sorted(o.Name for o in doc.Objects
                  if getattr(getattr(o, "Proxy", None), "Type", "").startswith("Multibody::"))


def check():
    result = {}
    FreeCADGui.activateWorkbench(WORKBENCH)
    doc = FreeCAD.newDocument("MultibodyRefusals")
    import Part
    from MultibodyWB.document import factory
    from MultibodyWB.commands import files
    arm = doc.addObject("Part::Feature", "Arm")
    arm.Shape = Part.makeBox(100, 20, 10)
    doc.recompute()
    mechanism = factory.make_mechanism(doc)
    body = factory.make_body(doc, mechanism, [arm])
    marker = factory.make_marker(doc, body, (arm, "Face1"))
    # no ground, and a hinge with one end only
    factory.make_hinge(doc, mechanism, "revolute", marker, None, name="HalfHinge")
    doc.recompute()
    result["mechanism_problems"] = {o.Name: o.Problem for o in doc.Objects
                                    if getattr(o, "Problem", "")}

    out = in_freecad.output_dir()
    path = os.path.join(out, "refused.mbs.xml")
    asked = []
    files.ask_save_path = lambda title, suggestion: asked.append(title) or path
    FreeCADGui.Selection.addSelection(mechanism)
    FreeCADGui.runCommand("MultibodyWB_Export")
    result["export_asked_for_a_file"] = bool(asked)
    result["export_written"] = os.path.exists(path)
    FreeCADGui.runCommand("MultibodyWB_Topology")
    widgets = in_freecad._widgets_module()
    result["figure_shown"] = FreeCADGui.getMainWindow().findChild(
        widgets.QDialog, files.FIGURE_DIALOG) is not None

    broken = os.path.join(out, "broken.mbs.xml")
    with open(broken, "w", encoding="utf-8") as stream:
        stream.write(BROKEN_MODEL)
    files.ask_open_path = lambda title: broken
    before = multibody_names(doc)
    undo_before = list(doc.UndoNames)
    FreeCADGui.runCommand("MultibodyWB_Import")
    result["import_added"] = sorted(set(multibody_names(doc)) - set(before))
    result["import_undo_steps"] = list(doc.UndoNames)[:len(doc.UndoNames) - len(undo_before)]

    from MultibodyWB.commands import hinges
    FreeCADGui.Selection.clearSelection()
    FreeCADGui.Selection.addSelection(doc.Name, "Arm", "Face1")
    FreeCADGui.Selection.addSelection(doc.Name, "Arm", "Face2")
    result["hinge_on_one_body_active"] = bool(hinges.COMMANDS[1]().IsActive())
    FreeCADGui.Selection.clearSelection()

    from MultibodyWB.commands import base
    before = multibody_names(doc)
    undo_before = len(doc.UndoNames)
    result["failed_script_ran"] = base.run_script("Half-way", [
        "MultibodyWB.document.factory.make_mechanism(FreeCAD.ActiveDocument, 'Orphan')",
        "raise ValueError('stopped on purpose')"])
    result["failed_script_left"] = sorted(set(multibody_names(doc)) - set(before))
    result["failed_script_undo_steps"] = len(doc.UndoNames) - undo_before
    return result


in_freecad.run_and_quit(check)
