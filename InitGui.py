"""MultibodyWB GUI entry point: defines and registers the Multibody workbench.

FreeCAD runs this file with ``exec()`` inside a function of its GUI init script (FreeCADGuiInit.py;
checked on FreeCAD 0.20, and 1.0 loads it the same way). Consequences:

- ``__file__`` is not defined here: resource paths come from the imported ``MultibodyWB`` package,
  which is importable because FreeCAD has put the add-on directory on ``sys.path``;
- names defined at the top level of this file are not visible inside the methods below, so every
  method imports what it needs;
- tracebacks point to ``File "<string>"`` (0.20), not to this file.
"""

import FreeCADGui


class MultibodyWorkbench(FreeCADGui.Workbench):
    """The Multibody workbench: multibody dynamics of FreeCAD solids."""

    MenuText = "Multibody"
    ToolTip = ("Multibody dynamics: turn solids into rigid bodies joined by hinges, "
               "simulate the mechanism and plot its motion and hinge forces")

    def __init__(self):
        from MultibodyWB import resources
        self.__class__.Icon = resources.WORKBENCH_ICON
        # FreeCAD makes this object at start-up: the view providers register with the factory
        # now, so that a macro run before the workbench is ever activated makes objects that are
        # drawn (the factory sits below the view providers and does not import them)
        import MultibodyWB.viewproviders.base  # noqa: F401

    def Initialize(self):
        """Import the commands (this registers them) and build the toolbars and the menu."""
        from MultibodyWB import commands
        for title, names in commands.TOOLBARS.items():
            self.appendToolbar(title, names)
        self.appendMenu("Multibody", list(commands.COMMANDS))

    def Activated(self):
        """Called when the workbench is activated: the solver's kernels are compiled in a
        separate process if they are not ready and no compile runs (FreeCAD's start began one,
        unless the preference CompileAtStart is off)."""
        from MultibodyWB.gui import warmup
        warmup.start()

    def Deactivated(self):
        """Called when another workbench is activated."""

    def GetClassName(self):
        return "Gui::PythonWorkbench"


FreeCADGui.addWorkbench(MultibodyWorkbench())

# The solver's kernels compiled now, in a separate process at low priority once the default run's
# are done, so that the first Simulate after an install finds them ready or nearly (the process
# ends at once when they are ready; nothing of the solver is imported here). The GUI only: in
# console mode a compile beside a script would slow it (MultibodyWB/gui/warmup.py).
try:
    from MultibodyWB.gui import warmup as _warmup
    _warmup.start_at_startup()
except Exception as _exc:  # noqa: BLE001 - FreeCAD's start must not fail on it
    import FreeCAD as _FreeCAD
    _FreeCAD.Console.PrintLog(f"MultibodyWB: no compile at start ({_exc})\n")
