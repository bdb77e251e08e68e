"""GUI check run inside FreeCAD: activate the Multibody workbench, inspect it, take a screenshot.

Started by tests/test_workbench.py through ``freecad_env.run_freecad_gui``; writes its findings as JSON.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import FreeCAD  # noqa: E402
import FreeCADGui  # noqa: E402
import in_freecad  # noqa: E402
from PySide import QtGui  # noqa: E402

WORKBENCH = "MultibodyWorkbench"


def check():
    result = {"freecad_version": FreeCAD.Version()[:3],
              "workbenches": sorted(FreeCADGui.listWorkbenches())}
    document = FreeCAD.newDocument("MultibodyCheck")
    document.addObject("Part::Box", "Box")  # something for the 3D view of the screenshot
    document.recompute()
    FreeCADGui.activateWorkbench(WORKBENCH)
    in_freecad.process_events()
    active = FreeCADGui.activeWorkbench()
    result["active_workbench"] = type(active).__name__
    result["active_workbench_name"] = active.name() if hasattr(active, "name") else None
    workbench = FreeCADGui.getWorkbench(WORKBENCH)
    result["menu_text"] = workbench.MenuText
    result["icon"] = workbench.Icon
    result["icon_loads"] = bool(workbench.Icon) and not QtGui.QIcon(workbench.Icon).isNull() \
        and not QtGui.QImage(workbench.Icon).isNull()
    result["workbench_menus"] = workbench.listMenus()
    result["menu_bar"] = in_freecad.menu_titles()
    import MultibodyWB
    import MultibodyWB.commands
    result["package_file"] = MultibodyWB.__file__
    result["commands"] = list(MultibodyWB.commands.COMMANDS)
    known = set(FreeCADGui.listCommands())
    result["unregistered_commands"] = [name for name in result["commands"]
                                       if name != "Separator" and name not in known]
    view = FreeCADGui.ActiveDocument.ActiveView
    view.viewIsometric()
    view.fitAll()
    result["screenshot"] = in_freecad.grab_main_window("workbench.png")
    return result


in_freecad.run_and_quit(check)
