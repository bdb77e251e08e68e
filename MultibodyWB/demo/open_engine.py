"""Run by FreeCAD after it opened the demo's engine (``scripts/open-demo.sh``): switch to the
Multibody workbench, fit the view and open the player on the stored run, ready to press Play."""

import FreeCAD
import FreeCADGui
from PySide import QtCore


def _open():
    from MultibodyWB.gui import player
    from MultibodyWB.objects.base import type_of
    FreeCADGui.activateWorkbench("MultibodyWorkbench")
    doc = FreeCAD.ActiveDocument
    mechanism = next((o for o in doc.Objects if type_of(o) == "Multibody::Mechanism"), None) \
        if doc is not None else None
    if mechanism is None:
        FreeCAD.Console.PrintError("MultibodyWB: no mechanism in the active document\n")
        return
    FreeCADGui.SendMsgToActiveView("ViewFit")
    player.open_player(mechanism)
    FreeCAD.Console.PrintMessage("MultibodyWB: press Play in the player (task panel); "
                                 "Plot shows the curves\n")


QtCore.QTimer.singleShot(300, _open)
