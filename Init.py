"""MultibodyWB start-up script for FreeCAD without GUI (also run before InitGui.py with the GUI).

FreeCAD runs this file with ``exec()`` from its own init script (FreeCADInit.py) after putting the add-on
directory on ``sys.path``, so the package is importable as ``import MultibodyWB``. Keep it minimal: no
GUI imports, nothing slow.
"""

import FreeCAD

FreeCAD.Console.PrintLog("MultibodyWB: Init.py done\n")
