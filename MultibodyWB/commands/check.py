"""The Check command: the mechanism's status and drag to check, in its task panel.

Opens :mod:`MultibodyWB.gui.task_mechanism` for the selected mechanism (or the mechanism of a
selected member, else the document's first), as double-clicking the Mechanism does, and, the
user having asked for a check, prints the problems that block a run to the report view as errors
(building alone prints nothing). It changes nothing in the document.
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
    task_mechanism.open_panel(mechanism)


ACTIONS["check"] = _check


class CheckMechanism(Command):
    NAME = "Check"
    ICON = "Check.svg"
    MENU_TEXT = "Check and drag..."
    TOOL_TIP = ("Show the mechanism's status (degrees of freedom, driven coordinates, redundant "
                "constraints, what blocks a run) and drag it by its free degrees of freedom with "
                "its loops closed; the drawn pose comes back when the panel closes")
    NEEDS = "mechanism"
    ACTION = "check"


COMMANDS = (CheckMechanism,)
