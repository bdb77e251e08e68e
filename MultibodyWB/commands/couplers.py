"""The Coupler command: two selected hinges become a gear pair, a rack and pinion or a linear
coupling of one coordinate of each.

Select two Hinges (in the tree, or their symbols in the 3D view): the coupler's type and field
are proposed from their coordinates (:func:`MultibodyWB.objects.coupler.propose`: two rotations
are a gear pair of ratio -1, or -r1/r2 when both hinges were picked on cylindrical faces; a
rotation and a translation a rack and pinion of pitch radius 10 mm, the rotating hinge first;
anything else ``a u1 + b u2 = 0`` with a, b = 1, -1), the Coupler is made in one undo step and its
task panel opens to set the ratio. Two hinges without a coordinate to couple (a fixed hinge) are
refused with a message and nothing is made.
"""

import FreeCAD

from ..gui.task_base import with_panel
from ..objects import coupler as coupler_module
from ..objects.coupler import TYPE as COUPLER
from ..objects.hinge import TYPE as HINGE
from ..objects.mechanism import mechanism_of
from .base import ACTIONS, DOC, Command, message, ref, run_script
from .model import FACTORY


def plan(selection):
    """``(statements, None)`` making the coupler of the selection (two hinges, in selection
    order), or ``(None, (text, details))`` saying why it cannot be made."""
    hinges = selection.of_type(HINGE)
    proposal = coupler_module.propose(*hinges) if len(hinges) == 2 else None
    if proposal is None:
        found = [f"'{h.Label}': {h.HingeType} hinge, coordinates "
                 f"{', '.join(coupler_module.coordinates(h)) or 'none to couple'}"
                 for h in hinges]
        return None, ("No coupler between " + " and ".join(f"'{h.Label}'" for h in hinges) +
                      ": a coupler couples a coordinate of each of two hinges (not a fixed "
                      "hinge, nor the rotations of a spherical, free or bushing hinge).", found)
    values = dict(proposal.values)
    if "pitch_radius" in values:
        values["pitch_radius"] = f"{values['pitch_radius']!r} mm"
    keywords = "".join(f", {k}={v!r}" for k, v in values.items())
    first, second = proposal.hinges
    statement = (f"{FACTORY}.make_coupler({DOC}, {ref(mechanism_of(first))}, {proposal.type!r}, "
                 f"{ref(first)}, {proposal.coordinates[0]!r}, {ref(second)}, "
                 f"{proposal.coordinates[1]!r}{keywords})")
    return [statement], None


def _coupler(command, selection):
    statements, refusal = plan(selection)
    if statements is None:
        text, details = refusal
        message(command.MENU_TEXT, text, details)
        return False
    hinges = selection.of_type(HINGE)
    done = run_script(command.MENU_TEXT, statements)
    if done:
        proposal = coupler_module.propose(*hinges)
        FreeCAD.Console.PrintMessage(f"MultibodyWB: Coupler: a {proposal.type}, {proposal.why}\n")
    return done


_coupler.builder = lambda selection: plan(selection)[0]
ACTIONS["coupler"] = with_panel(_coupler, COUPLER)


class CreateCoupler(Command):
    NAME = "Coupler"
    ICON = "Coupler.svg"
    MENU_TEXT = "Coupler"
    TOOL_TIP = ("Coupler: a gear pair, belt, rack and pinion or linear coupling between one "
                "coordinate of each of two hinges (a u1 + b u2 = 0 on their rates). Select two "
                "hinges (in the tree or their symbols): two rotations make a gear pair (ratio -1, "
                "or -r1/r2 from cylindrical faces the hinges were picked on), a rotation and a "
                "translation a rack and pinion; set the ratio in the panel")
    NEEDS = "hinges"
    ACTION = "coupler"


COMMANDS = (CreateCoupler,)
