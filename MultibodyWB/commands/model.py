"""Commands that build the model: mechanism, body, ground, marker.

Each command is data (see :class:`~.base.Command`); what it makes is a builder (in
:data:`~.base.ACTIONS`) returning the factory calls to run. The helpers :func:`mechanism_script`
and :func:`end_script` are shared with the hinge and force commands.
"""

from ..objects.base import type_of
from ..gui.task_base import with_panel
from ..objects.body import TYPE as BODY
from ..objects.marker import TYPE as MARKER
from ..objects.mechanism import mechanism_of
from .base import ACTIONS, DOC, Command, ref, scripted
from .selection import Pick, mechanism_for

FACTORY = "MultibodyWB.document.factory"


def mechanism_script(selection):
    """``(statements, expression)``: the mechanism to add to, made first if there is none."""
    mechanism = mechanism_for(selection)
    if mechanism is not None:
        return [], ref(mechanism)
    return [f"mechanism = {FACTORY}.make_mechanism({DOC})"], "mechanism"


def pick_argument(pick):
    """The ``pick`` argument of ``make_marker`` for a :class:`~.selection.Pick`."""
    return f"({ref(pick.solid)}, {pick.sub!r})"


def end_script(end, variable):
    """``(statements, expression)`` naming a hinge or force end: a marker, or one made on the
    picked face, edge or vertex (assigned to ``variable``)."""
    if not isinstance(end, Pick):
        return [], ref(end)
    return [f"{variable} = {FACTORY}.make_marker({DOC}, {ref(end.body)}, "
            f"{pick_argument(end)})"], variable


def _mechanism(selection):
    return [f"{FACTORY}.make_mechanism({DOC})"]


def _body(selection, ground=False):
    statements, mechanism = mechanism_script(selection)
    solids = ", ".join(ref(s) for s in selection.free_solids())
    extra = ", ground=True, name='Ground'" if ground else ""
    return statements + [f"{FACTORY}.make_body({DOC}, {mechanism}, [{solids}]{extra})"]


def _ground(selection):
    bodies = selection.of_type(BODY)
    if bodies:
        body = bodies[0]
        return [f"{ref(mechanism_of(body))}.Ground = {ref(body)}"]
    return _body(selection, ground=True)


def _marker(selection):
    statements = []
    for obj in selection.objects:          # a body: a marker at its base frame
        if type_of(obj) == BODY:
            statements.append(f"{FACTORY}.make_marker({DOC}, {ref(obj)})")
    for pick in selection.picks:
        statements.append(f"{FACTORY}.make_marker({DOC}, {ref(pick.body)}, "
                          f"{pick_argument(pick)})")
    return statements


ACTIONS.update({"mechanism": scripted(_mechanism),
                "body": with_panel(scripted(_body), BODY),
                "ground": scripted(_ground),
                "marker": with_panel(scripted(_marker), MARKER)})


class CreateMechanism(Command):
    NAME = "Mechanism"
    ICON = "Mechanism.svg"
    MENU_TEXT = "Mechanism"
    TOOL_TIP = ("Create a mechanism: the container of a multibody model (gravity, ground, "
                "bodies, hinges, forces) with its simulation settings")
    NEEDS = "document"
    ACTION = "mechanism"


class CreateBody(Command):
    NAME = "Body"
    ICON = "Body.svg"
    MENU_TEXT = "Body from solids"
    TOOL_TIP = ("Make the selected solid(s) one rigid body of the mechanism (made if there is "
                "none); its mass properties come from the solids")
    NEEDS = "free_solids"
    ACTION = "body"


class SetGround(Command):
    NAME = "Ground"
    ICON = "Ground.svg"
    MENU_TEXT = "Set as ground"
    TOOL_TIP = ("Make the selected body the mechanism's ground (the fixed frame), or the "
                "selected solid(s) a new ground body")
    NEEDS = "ground"
    ACTION = "ground"


class CreateMarker(Command):
    NAME = "Marker"
    ICON = "Marker.svg"
    MENU_TEXT = "Marker"
    TOOL_TIP = ("Put a marker (a frame fixed on a body) on each selected face, edge or vertex "
                "of a body's solid: a bore's axis, a circle's centre, a face's middle...; on a "
                "selected body: its base frame")
    NEEDS = "marker_targets"
    ACTION = "marker"


COMMANDS = (CreateMechanism, CreateBody, SetGround, CreateMarker)
