"""GUI check run inside FreeCAD: the Interference check command and its task panel, driven as a
user drives them; the Simulate panel's overlap warning; the Check command's warning about a
contact between hinged bodies.

A 20 mm cube (the ground) with a 10 mm cube drawn 5 mm into it (500 mm^3; the small cube floats
on a free hinge), a bored block welded to the ground and a pin through its bore on a revolute
hinge 'Axle' (radius 5.1 mm in a 5 mm bore: a hinged ring of pi (5.1^2 - 5^2) 10 mm^3), and a
contact 'Rub' between the pin and the block. The user clicks a face of the small cube and
presses Interference check: the panel lists the two pairs, draws them in the 3D view; a row is
clicked (its bodies selected), a screenshot taken, Close clicked. The document (objects,
placements, undo stack) is compared before and after. Then the pin fits and the cube is moved
apart: "no overlaps". Then Simulate with the cube drawn in again: Run warns and runs. Then
Check: the report view names the contact and the hinge.

Started by tests/test_gui_interference.py through ``freecad_env.run_freecad_gui``; writes its
findings as JSON.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import FreeCAD  # noqa: E402
import FreeCADGui  # noqa: E402
import in_freecad  # noqa: E402
from in_freecad import click  # noqa: E402

WORKBENCH = "MultibodyWorkbench"
COMMAND = "MultibodyWB_Interference"
W = in_freecad._widgets_module()


def panel():
    from MultibodyWB.gui import task_interference
    return task_interference.current


def click_row(table, row):
    """Click row ``row`` of a list with the mouse (QTest), as a user would."""
    item = table.topLevelItem(row)
    rect = table.visualItemRect(item)
    try:
        from PySide import QtTest
    except ImportError:                       # a FreeCAD build without QtTest: select it
        table.setCurrentItem(item)
    else:
        from PySide import QtCore
        QtTest.QTest.mouseClick(table.viewport(), QtCore.Qt.LeftButton, QtCore.Qt.NoModifier,
                                rect.center())
    in_freecad.wait(0.3)


def overlay_nodes(doc):
    """The children of the interference overlay in the 3D view's scene graph (None: absent)."""
    scene = FreeCADGui.getDocument(doc.Name).ActiveView.getSceneGraph()
    for k in range(scene.getNumChildren()):
        child = scene.getChild(k)
        if child.getName().getString() == "MultibodyInterferenceOverlay":
            return child.getNumChildren()
    return None


def snapshot(doc):
    """What a check must not change: objects, their placements and state, the undo stack."""
    return {"objects": sorted(o.Name for o in doc.Objects),
            "placements": {o.Name: [round(x, 12) for x in o.Placement.toMatrix().A]
                           for o in doc.Objects if hasattr(o, "Placement")},
            "touched": sorted(o.Name for o in doc.Objects if "Touched" in o.State),
            "undo": [doc.UndoCount, list(doc.UndoNames)], "redo": doc.RedoCount}


def build(doc):
    from MultibodyWB.document import factory
    base = doc.addObject("Part::Box", "Base")
    base.Length = base.Width = base.Height = 20
    cube = doc.addObject("Part::Box", "Cube")
    cube.Length = cube.Width = cube.Height = 10
    cube.Placement.Base = FreeCAD.Vector(15, 5, 5)
    block = doc.addObject("Part::Box", "Block")
    block.Length, block.Width, block.Height = 40, 20, 10
    block.Placement.Base = FreeCAD.Vector(0, 40, 0)
    hole = doc.addObject("Part::Cylinder", "Hole")
    hole.Radius, hole.Height = 5, 10
    hole.Placement.Base = FreeCAD.Vector(10, 50, 0)
    bored = doc.addObject("Part::Cut", "Bored")
    bored.Base, bored.Tool = block, hole
    pin = doc.addObject("Part::Cylinder", "Pin")
    pin.Radius, pin.Height = 5.1, 30
    pin.Placement.Base = FreeCAD.Vector(10, 50, -10)
    doc.recompute()
    mech = factory.make_mechanism(doc, "Clash")
    ground = factory.make_body(doc, mech, base, ground=True, name="Base body")
    small = factory.make_body(doc, mech, cube, name="Cube body")
    holder = factory.make_body(doc, mech, bored, name="Bored body")
    shaft = factory.make_body(doc, mech, pin, name="Pin body")
    bore = next(f"Face{i}" for i, f in enumerate(bored.Shape.Faces, 1)
                if type(f.Surface).__name__ == "Cylinder")
    factory.make_hinge(doc, mech, "revolute", factory.make_marker(doc, shaft, (pin, "Face1")),
                       factory.make_marker(doc, holder, (bored, bore)), name="Axle")
    factory.make_hinge(doc, mech, "fixed", factory.make_marker(doc, holder, None),
                       factory.make_marker(doc, ground, None), name="Weld")
    factory.make_hinge(doc, mech, "free", factory.make_marker(doc, small, None),
                       factory.make_marker(doc, ground, None), name="Float")
    top = max(range(1, len(pin.Shape.Faces) + 1),
              key=lambda i: pin.Shape.Faces[i - 1].CenterOfMass.z)
    factory.make_contact(doc, mech, factory.make_marker(doc, shaft, (pin, f"Face{top}")),
                         factory.make_marker(doc, holder, None), ("sphere", {"radius": 5}),
                         ("plane", {}), 1e7, name="Rub")
    doc.recompute()
    from MultibodyWB.gui import simulate_panel
    sim = simulate_panel.simulation_of(mech)
    sim.EndTime = "0.01 s"
    sim.Step = "1e-4 s"
    sim.OutputStep = "1e-3 s"
    sim.Integrator = "rk4"
    doc.recompute()
    return mech, cube, pin


def table_rows(table):
    return [[table.topLevelItem(r).text(c) for c in range(table.columnCount())]
            for r in range(table.topLevelItemCount())]


def check():
    result = {"freecad_version": FreeCAD.Version()[:3]}
    FreeCADGui.activateWorkbench(WORKBENCH)
    window = FreeCADGui.getMainWindow()
    result["toolbar"] = [a.objectName() for tb in window.findChildren(W.QToolBar)
                         if tb.windowTitle() == "Multibody model" for a in tb.actions()]
    command = FreeCADGui.Command.get(COMMAND) \
        if hasattr(FreeCADGui, "Command") and hasattr(FreeCADGui.Command, "get") else None
    doc = FreeCAD.newDocument("Clash")
    mech, cube, pin = build(doc)
    FreeCADGui.SendMsgToActiveView("ViewFit")
    doc.clearUndos()
    doc.UndoMode = 1
    in_freecad.wait(0.5)
    before = snapshot(doc)

    # the user clicks a face of the small cube, then presses Interference check
    FreeCADGui.Selection.clearSelection()
    FreeCADGui.Selection.addSelection(doc.Name, cube.Name, "Face1")
    in_freecad.process_events()
    result["active"] = bool(command.isActive()) if command is not None else None
    FreeCADGui.runCommand(COMMAND)
    in_freecad.wait(0.5)
    p = panel()
    result["panel"] = type(p).__name__ if p is not None else None
    result["dialog"] = bool(FreeCADGui.Control.activeDialog())
    result["headline"] = p.headline.text()
    result["rows"] = table_rows(p.table)
    result["volumes"] = [o.volume for o in p.result.overlaps]
    result["depths"] = [o.depth for o in p.result.overlaps]
    result["centres"] = [list(o.centre) for o in p.result.overlaps]
    result["note"] = p.note.text()
    result["overlay_children"] = overlay_nodes(doc)
    click_row(p.table, 0)
    result["selected"] = sorted(o.Label for o in FreeCADGui.Selection.getSelection(doc.Name))
    result["picked_row"] = p.selected_index()
    result["details"] = p.details.text()
    FreeCADGui.ActiveDocument.ActiveView.viewIsometric()
    FreeCADGui.SendMsgToActiveView("ViewFit")
    in_freecad.wait(0.3)
    result["shot"] = in_freecad.grab_main_window("interference_panel.png", size=(1280, 960))
    result["closed"] = click("Close")
    result["dialog_after_close"] = bool(FreeCADGui.Control.activeDialog())
    result["overlay_after_close"] = overlay_nodes(doc)
    FreeCADGui.Selection.clearSelection()
    result["before"], result["after"] = before, snapshot(doc)

    # the pin fits its bore, the cube is moved 5 mm clear: no overlaps
    pin.Radius = 5
    cube.Placement.Base = FreeCAD.Vector(25, 5, 5)
    doc.recompute()
    doc.clearUndos()
    FreeCADGui.Selection.clearSelection()
    FreeCADGui.Selection.addSelection(mech)
    FreeCADGui.runCommand(COMMAND)
    in_freecad.wait(0.5)
    p = panel()
    result["clear"] = {"headline": p.headline.text(), "rows": p.table.topLevelItemCount(),
                       "table_visible": p.table.isVisible(),
                       "overlay_children": overlay_nodes(doc), "undo": doc.UndoCount}
    # the cube drawn back in; Check again sees it
    cube.Placement.Base = FreeCAD.Vector(15, 5, 5)
    doc.recompute()
    p.form.findChild(W.QPushButton, "CheckAgain").click()
    in_freecad.wait(0.3)
    result["again"] = {"headline": p.headline.text(), "rows": table_rows(p.table),
                       "overlay_children": overlay_nodes(doc)}
    click("Close")

    # Simulate: Run warns about the unhinged overlap and runs all the same
    from MultibodyWB.gui import simulate_panel
    FreeCADGui.Selection.clearSelection()
    FreeCADGui.Selection.addSelection(mech)
    FreeCADGui.runCommand("MultibodyWB_Simulate")
    in_freecad.wait(0.5)
    sp = simulate_panel.current
    sp.run_button.click()
    result["run_started"] = sp.running
    end = time.monotonic() + 600
    while (sp.running or sp.timer.isActive()) and time.monotonic() < end:
        in_freecad.wait(0.1)
    result["run_messages"] = sp.messages.toPlainText()
    result["run_status"] = sp.status.text()
    result["job_state"] = sp.job.state if sp.job is not None else None
    sp.close()
    in_freecad.wait(0.3)

    # Check: the contact between the hinged pin and block is warned about
    FreeCADGui.Selection.clearSelection()
    FreeCADGui.Selection.addSelection(mech)
    FreeCADGui.runCommand("MultibodyWB_Check")
    in_freecad.wait(0.5)
    from MultibodyWB.gui import task_mechanism
    mp = task_mechanism.current
    result["check_details"] = mp.details.toPlainText() if mp is not None else ""
    click("Cancel")
    result["report"] = in_freecad.report_view_text()
    return result


in_freecad.run_and_quit(check, watchdog_s=900)
