"""GUI commands of the Multibody workbench, registered in one place.

Commands are small, data-only classes (menu text, tool tip, icon, what they create) that act through
``FreeCADGui.doCommand`` so that a user's actions are recorded as a macro. Each command module registers
its classes with ``FreeCADGui.addCommand`` when it is imported from here.

This package is imported only from ``MultibodyWorkbench.Initialize()`` (InitGui.py), i.e. with the GUI
up. ``COMMANDS`` lists the registered command names in menu and toolbar order; ``"Separator"`` may be
used between groups.
"""

COMMANDS = []
