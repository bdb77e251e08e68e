"""The Check command: the mechanism's status and drag to check, in its task panel.

Opens :mod:`MultibodyWB.gui.task_mechanism` for the selected mechanism (or the mechanism of a
selected member, else the document's first), as double-clicking the Mechanism does. It changes
nothing in the document.
"""

from .base import ACTIONS, Command
from .selection import mechanism_for


def _check(command, selection):
    from ..gui import task_mechanism
    mechanism = mechanism_for(selection)
    if mechanism is not None:
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
