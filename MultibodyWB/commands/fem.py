"""The FEM loads command: a stress analysis of one body at one instant of a stored run.

It opens :mod:`MultibodyWB.gui.task_fem_loads` for the mechanism the selection is about, with the
selected Result (else the latest) and the selected Body (or the body of a selected solid)
chosen: pick the instant, preview the loads, Create analysis (FreeCAD's FEM objects, meshed and
solved with CalculiX; :mod:`MultibodyWB.document.fem_loads`).
"""

from ..objects.base import type_of
from ..objects.body import TYPE as BODY
from .base import ACTIONS, Command
from .simulation import _runs


def _fem_loads(command, selection):
    from ..gui import task_fem_loads
    mechanism, chosen = _runs(selection)
    if mechanism is None:
        return None
    body = next((o for o in selection.objects if type_of(o) == BODY), None)
    if body is None:                    # a face or a solid of a body clicked in the 3D view
        body = next((p.body for p in selection.picks if p.body is not None), None)
    return task_fem_loads.open_panel(mechanism, chosen[-1] if chosen else None, body)


ACTIONS.update({"fem_loads": _fem_loads})


class FemLoads(Command):
    NAME = "FemLoads"
    ICON = "FemLoads.svg"
    MENU_TEXT = "FEM loads..."
    TOOL_TIP = ("Stress analysis of a body at an instant of a run: its hinge reactions, forces, "
                "gravity and inertia loads at a time or at the peak of a quantity, previewed, "
                "then a FEM analysis (FreeCAD FEM, Gmsh, CalculiX) of its solid")
    NEEDS = "results"
    ACTION = "fem_loads"


COMMANDS = (FemLoads,)
