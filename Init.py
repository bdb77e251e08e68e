"""MultibodyWB start-up script for FreeCAD without GUI (also run before InitGui.py with the GUI).

FreeCAD runs this file with ``exec()`` from its own init script (FreeCADInit.py) after putting the add-on
directory on ``sys.path``, so the package is importable as ``import MultibodyWB``. Keep it minimal: no
GUI imports, nothing slow. In particular no compile of the solver's kernels here: FreeCAD's
console mode runs scripts, which a compile beside them would slow (they compile what they run;
the README's set-up command compiles all); the GUI starts one (InitGui.py).
"""

import FreeCAD

FreeCAD.Console.PrintLog("MultibodyWB: Init.py done\n")
