"""GUI check run inside FreeCAD: the Simulate panel's Equation button on a closed loop.

Builds the crank-slider engine from solids (``MultibodyWB/examples_fc``), opens the Simulate task
panel through its command with the Mechanism selected, clicks Equation and reads the dialog: the
overall transfer equation with the cut hinge's boundary pair and supplementary equations.

Started by tests/test_gui_equation.py; writes its findings as JSON.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import FreeCAD  # noqa: E402
import FreeCADGui  # noqa: E402
import in_freecad  # noqa: E402


def check():
    from MultibodyWB.examples_fc import crank_slider
    from MultibodyWB.gui import simulate_panel
    from MultibodyWB.gui.qt import QtWidgets
    result = {}
    FreeCADGui.activateWorkbench("MultibodyWorkbench")
    doc = FreeCAD.newDocument("Engine")
    mechanism = crank_slider.setup(doc)
    doc.recompute()
    FreeCADGui.Selection.clearSelection()
    FreeCADGui.Selection.addSelection(mechanism)
    FreeCADGui.runCommand("MultibodyWB_Simulate")
    in_freecad.process_events()
    panel = simulate_panel.current
    buttons = [b for b in FreeCADGui.getMainWindow().findChildren(QtWidgets.QPushButton)
               if b.isVisible() and b.text().replace("&", "") == "Equation"]
    result["buttons"] = len(buttons)
    buttons[0].click()
    in_freecad.process_events()
    dialog = panel.equation_dialog
    result["visible"] = dialog.isVisible()
    result["title"] = dialog.windowTitle()
    result["text"] = dialog.findChild(QtWidgets.QPlainTextEdit).toPlainText()
    dialog.reject()
    return result


in_freecad.run_and_quit(check, watchdog_s=300)
