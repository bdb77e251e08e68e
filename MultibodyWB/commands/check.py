"""The checks of a mechanism: its status and drag to check; the interference check.

Check opens :mod:`MultibodyWB.gui.task_mechanism` for the selected mechanism (or the mechanism of
a selected member, else the document's first), as double-clicking the Mechanism does, and, the
user having asked for a check, prints the problems that block a run to the report view as errors
(building alone prints nothing) and what looks wrong without blocking a run as warnings.

Interference check opens :mod:`MultibodyWB.gui.task_interference` for that mechanism: the pairs
of bodies whose solids overlap as drawn, with the volume, depth and place of each overlap.

Neither changes anything in the document.
"""

from .base import ACTIONS, Command
from .selection import mechanism_for


def _check(command, selection):
    """Open the panel; the user asked for a check: what blocks a run also goes to the report
    view, as errors (building prints nothing by itself)."""
    import FreeCAD
    from ..gui import task_mechanism
    from ..objects.mechanism import mechanism_status
    mechanism = mechanism_for(selection)
    if mechanism is None:
        return
    status = mechanism_status(mechanism)
    say = FreeCAD.Console.PrintError if status.problems else FreeCAD.Console.PrintMessage
    say(f"MultibodyWB: check of mechanism '{mechanism.Label}': {status.headline}\n")
    for line in status.problems:
        FreeCAD.Console.PrintError(f"  {line}\n")
    for line in status.warnings:
        FreeCAD.Console.PrintWarning(f"  warning: {line}\n")
    task_mechanism.open_panel(mechanism)


def _interference(command, selection):
    """Open the interference check of the mechanism the selection is about."""
    from ..gui import task_interference
    mechanism = mechanism_for(selection)
    if mechanism is None:
        return None
    return task_interference.open_panel(mechanism)


ACTIONS["check"] = _check
ACTIONS["interference"] = _interference


class CheckMechanism(Command):
    NAME = "Check"
    ICON = "Check.svg"
    MENU_TEXT = "Check and drag..."
    TOOL_TIP = ("Show the mechanism's status (degrees of freedom, driven coordinates, redundant "
                "constraints, what blocks a run) and drag it by its free degrees of freedom with "
                "its loops closed; the drawn pose comes back when the panel closes")
    NEEDS = "mechanism"
    ACTION = "check"


class InterferenceCheck(Command):
    NAME = "Interference"
    ICON = "Interference.svg"
    MENU_TEXT = "Interference check..."
    TOOL_TIP = ("Find the bodies whose solids overlap as drawn: each pair with the volume, "
                "depth and place of the overlap, drawn in red in the 3D view (pairs joined by a "
                "hinge marked 'hinged'); nothing in the document changes")
    NEEDS = "mechanism"
    ACTION = "interference"


COMMANDS = (CheckMechanism, InterferenceCheck)
