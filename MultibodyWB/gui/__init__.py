"""The workbench's Qt user interface: task panels, the player, plot docks, movie export.

Imported only with FreeCAD's GUI up. Qt comes through FreeCAD's ``PySide`` compatibility module
(:mod:`.qt`), which is PySide2 in FreeCAD 0.20 and 1.0 on Debian.
"""
