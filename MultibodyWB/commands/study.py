"""The Study command: a design study of the selected mechanism (issue 15).

Select the mechanism (or anything of it) and press Study: a selected Study opens in its task
panel (:mod:`MultibodyWB.gui.task_study`); otherwise a new Study is made in the mechanism, through
``FreeCADGui.doCommand`` in one undo step (recorded in a macro), and its panel opens: parameters,
objectives and constraints, the method, Run on Dask with progress and Cancel, the table, a plot
and Apply.
"""

import FreeCAD

from ..objects.base import type_of
from ..objects.study import TYPE as STUDY
from .base import ACTIONS, DOC, Command, ref, run_script
from .model import FACTORY
from .selection import mechanism_for


def plan(selection):
    """The statements making a Study in the selection's mechanism."""
    mechanism = mechanism_for(selection)
    return [f"{FACTORY}.make_study({DOC}, {ref(mechanism)})"]


def _study(command, selection):
    from ..gui import task_study
    chosen = selection.of_type(STUDY)
    if chosen:
        return task_study.open_panel(chosen[0])
    doc = FreeCAD.ActiveDocument
    before = {o.Name for o in doc.Objects}
    if not run_script(command.MENU_TEXT, plan(selection)):
        return None
    made = [o for o in doc.Objects if o.Name not in before and type_of(o) == STUDY]
    return task_study.open_panel(made[0]) if made else None


_study.builder = plan
ACTIONS["study"] = _study


class CreateStudy(Command):
    NAME = "Study"
    ICON = "Study.svg"
    MENU_TEXT = "Design study..."
    TOOL_TIP = ("Design study: vary properties and spreadsheet cells of the mechanism (a link "
                "length, a stiffness, a density) over ranges or lists, run every variant on Dask "
                "and measure it (rms, max, period of result columns); grid, LHS, Sobol or "
                "optimisation; a table, a plot, Apply the best")
    NEEDS = "mechanism"
    ACTION = "study"


COMMANDS = (CreateStudy,)
