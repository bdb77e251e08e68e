"""GUI check run inside FreeCAD: the Multibody commands in the toolbars and the menu, and what each
does to a selection (objects made, one undo step, the factory call echoed as a macro line).

Started by tests/test_fc_gui.py through ``freecad_env.run_freecad_gui``; writes its findings as
JSON.
Model: two boxes, "Arm" (becomes a body) and "Base" (becomes the ground).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import FreeCAD  # noqa: E402
import FreeCADGui  # noqa: E402
import in_freecad  # noqa: E402

WORKBENCH = "MultibodyWorkbench"


def types_of(doc):
    """``{object name: Multibody Type}`` of the document's Multibody objects."""
    return {o.Name: o.Proxy.Type for o in doc.Objects
            if getattr(getattr(o, "Proxy", None), "Type", "").startswith("Multibody::")}


def new_names(doc, before):
    return sorted(set(types_of(doc)) - set(before))


def select(doc, *items):
    """Select ``(object name, sub-element)`` pairs (sub-element "" for the whole object)."""
    FreeCADGui.Selection.clearSelection()
    for name, sub in items:
        if sub:
            FreeCADGui.Selection.addSelection(doc.Name, name, sub)
        else:
            FreeCADGui.Selection.addSelection(doc.getObject(name))


def run(doc, command, *items):
    """Select ``items``, check the command is active, run it; return what it made and whether a
    single undo removes it all and a redo brings it back."""
    select(doc, *items)
    before = types_of(doc)
    active = bool(_commands()[command].IsActive())
    FreeCADGui.runCommand(command)
    made = new_names(doc, before)
    record = {"active": active, "made": {n: types_of(doc)[n] for n in made}}
    doc.undo()
    record["after_undo"] = new_names(doc, before)
    doc.redo()
    record["after_redo"] = new_names(doc, before)
    record["undo_names"] = list(doc.UndoNames[:1])
    return record


def _commands():
    """Command name -> the command object registered (for IsActive)."""
    from MultibodyWB import commands
    found = {}
    for group in commands.GROUPS.values():
        for cls in group:
            found[cls.command_name()] = cls()
    return found


def command_states(doc, *items):
    """``{command name: IsActive}`` with ``items`` selected."""
    select(doc, *items)
    return {name: bool(command.IsActive()) for name, command in _commands().items()}


def check():
    result = {"freecad_version": FreeCAD.Version()[:3]}
    doc = FreeCAD.newDocument("MultibodyCommands")
    import Part
    arm = doc.addObject("Part::Feature", "Arm")
    arm.Shape = Part.makeBox(100, 20, 10)
    base = doc.addObject("Part::Feature", "Base")
    base.Shape = Part.makeBox(40, 40, 40, FreeCAD.Vector(-40, -10, -40))
    doc.recompute()
    FreeCADGui.activateWorkbench(WORKBENCH)
    in_freecad.process_events()

    from MultibodyWB import commands
    from MultibodyWB.solver.model import FORCE_TYPES, HINGE_TYPES
    result["commands"] = list(commands.COMMANDS)
    result["toolbars"] = {title: names for title, names in in_freecad.toolbar_actions().items()
                          if title.startswith("Multibody")}
    result["expected_toolbars"] = dict(commands.TOOLBARS)
    result["menu"] = in_freecad.menu_actions("Multibody")
    result["registered"] = sorted(n for n in FreeCADGui.listCommands()
                                  if n.startswith("MultibodyWB_"))
    result["hinge_types"] = list(HINGE_TYPES)
    result["force_types"] = list(FORCE_TYPES)
    resources = {}
    from PySide import QtGui
    for name, command in _commands().items():
        res = command.GetResources()
        resources[name] = {"menu_text": res["MenuText"], "tool_tip": res["ToolTip"],
                           "icon": res["Pixmap"], "icon_file": os.path.isfile(res["Pixmap"]),
                           "icon_loads": not QtGui.QIcon(res["Pixmap"]).pixmap(32, 32).isNull()}
    result["resources"] = resources

    # -- which commands a selection enables ----------------------------------------------------
    states = {"nothing": command_states(doc), "solid": command_states(doc, ("Arm", ""))}

    # -- a body from a selected solid: mechanism and body in one undo step ---------------------
    steps = {}
    steps["body"] = run(doc, "MultibodyWB_Body", ("Arm", ""))
    mechanism = [o for o in doc.Objects if types_of(doc).get(o.Name) == "Multibody::Mechanism"][0]
    body = [o for o in mechanism.Group if o.Proxy.Type == "Multibody::Body"][0]
    result["body_solids"] = [s.Name for s in body.Solids]
    # -- the ground from another solid, then marker, hinge, forces ------------------------------
    steps["ground"] = run(doc, "MultibodyWB_Ground", ("Base", ""))
    result["ground"] = mechanism.Ground.Name if mechanism.Ground else None
    states["face_on_body"] = command_states(doc, ("Arm", "Face2"))
    states["faces_on_two_bodies"] = command_states(doc, ("Base", "Face2"), ("Arm", "Face1"))
    steps["marker"] = run(doc, "MultibodyWB_Marker", ("Arm", "Face2"), ("Arm", "Vertex1"))
    # ground picked first: it must still become the output
    steps["hinge_from_faces"] = run(doc, "MultibodyWB_HingeRevolute", ("Base", "Face2"),
                                    ("Arm", "Face1"))
    hinge = doc.getObject(next(n for n, t in steps["hinge_from_faces"]["made"].items()
                               if t == "Multibody::Hinge"))
    result["hinge"] = {"type": hinge.HingeType, "input_body": hinge.InputMarker.Body.Name,
                       "output_body": hinge.OutputMarker.Body.Name,
                       "icon": hinge.ViewObject.Proxy.getIcon()}
    markers = sorted(n for n, t in steps["marker"]["made"].items() if t == "Multibody::Marker")
    steps["spring_from_markers"] = run(doc, "MultibodyWB_SpringDamper", (markers[0], ""),
                                       (hinge.OutputMarker.Name, ""))
    steps["force_on_face"] = run(doc, "MultibodyWB_PointForce", ("Arm", "Face6"))
    force = doc.getObject(next(n for n, t in steps["force_on_face"]["made"].items()
                               if t == "Multibody::Force"))
    result["force"] = {"type": force.ForceType, "frame": force.DirectionFrame,
                       "direction": list(force.Direction)}
    steps["mechanism"] = run(doc, "MultibodyWB_Mechanism")
    result["steps"] = steps
    result["states"] = states
    doc.recompute()
    result["problems"] = {o.Name: o.Problem for o in doc.Objects
                          if getattr(o, "Problem", "")}

    # -- files: export, import, topology figure ------------------------------------------------
    from MultibodyWB.commands import files
    out = in_freecad.output_dir()
    path = os.path.join(out, "arm.mbs.xml")
    files.ask_save_path = lambda title, suggestion: path
    files.ask_open_path = lambda title: path
    select(doc, (mechanism.Name, ""))
    FreeCADGui.runCommand("MultibodyWB_Export")
    result["exported"] = os.path.isfile(path)
    if result["exported"]:
        from MultibodyWB.solver.model import xmlio
        model = xmlio.read(path)
        result["exported_model"] = {"bodies": [b.name for b in model.bodies],
                                    "hinges": [(h.name, h.type) for h in model.hinges],
                                    "forces": [(f.name, f.type) for f in model.forces]}
    FreeCADGui.runCommand("MultibodyWB_Topology")
    in_freecad.process_events()
    widgets = in_freecad._widgets_module()
    dialog = FreeCADGui.getMainWindow().findChild(widgets.QDialog, files.FIGURE_DIALOG)
    result["figure"] = None
    if dialog is not None:
        label = dialog.findChild(widgets.QLabel, "figure")
        pixmap = label.pixmap() if label is not None else None
        result["figure"] = {"title": dialog.windowTitle(), "visible": dialog.isVisible(),
                            "width": pixmap.width() if pixmap is not None else 0,
                            "height": pixmap.height() if pixmap is not None else 0}
        dialog.grab().save(os.path.join(out, "topology_dialog.png"))
        dialog.close()
    imported = FreeCAD.newDocument("MultibodyImported")
    before = types_of(imported)
    FreeCADGui.runCommand("MultibodyWB_Import")
    result["imported"] = sorted(types_of(imported)[n] for n in new_names(imported, before))
    imported.undo()
    result["imported_after_undo"] = new_names(imported, before)
    result["console"] = in_freecad.python_console_text()
    FreeCAD.closeDocument(imported.Name)

    # -- the window with the toolbars --------------------------------------------------------
    FreeCAD.setActiveDocument(doc.Name)
    FreeCADGui.setActiveDocument(doc.Name)
    view = FreeCADGui.ActiveDocument.ActiveView
    view.viewIsometric()
    view.fitAll()
    result["screenshot"] = in_freecad.grab_main_window("commands_window.png")
    return result


in_freecad.run_and_quit(check)
