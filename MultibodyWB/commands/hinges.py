"""One command per hinge type, generated from the solver's :data:`HINGE_TYPES` table.

Each makes a hinge of its type between two selected markers, or between two faces, edges or
vertices picked on two bodies (a marker is made on each first), all in one undo step. The first
selection is the input (tip-side, moving) body, the second the output (root-side) one; a ground
end is always made the output. The hinge's task panel then opens (:mod:`MultibodyWB.gui.
task_hinge`): its settings are a second undo step, or Cancel leaves the hinge as made.
"""

from ..gui.task_base import with_panel
from ..objects.hinge import TYPE as HINGE
from ..objects.mechanism import mechanism_of
from ..solver.api import HINGE_TYPES
from ..viewproviders.hinge import icon_file
from .base import ACTIONS, DOC, Command, ref, scripted
from .model import FACTORY, end_script
from .selection import end_body


def ordered_ends(selection):
    """The two ends, input first: as selected, unless the first is on the ground."""
    ends = selection.ends()
    first = end_body(ends[0])
    mechanism = mechanism_of(first)
    if mechanism is not None and mechanism.Ground == first:
        ends = ends[::-1]
    return ends


def _hinge(selection, hinge_type):
    ends = ordered_ends(selection)
    statements = []
    names = []
    for end, variable in zip(ends, ("input_marker", "output_marker")):
        lines, name = end_script(end, variable)
        statements += lines
        names.append(name)
    mechanism = ref(mechanism_of(end_body(ends[0])))
    statements.append(f"{FACTORY}.make_hinge({DOC}, {mechanism}, {hinge_type!r}, {names[0]}, "
                      f"{names[1]})")
    return statements


ACTIONS["hinge"] = with_panel(scripted(_hinge), HINGE)


def _command(kind):
    title = kind.name.capitalize()
    coordinates = ", ".join(kind.coordinates) or "none"
    return type(f"CreateHinge{title}", (Command,), {
        "__doc__": f"Create a {kind.name} hinge.",
        "NAME": f"Hinge{title}",
        "ICON": icon_file(kind.name),
        "MENU_TEXT": f"{title} hinge",
        "TOOL_TIP": (f"{title} hinge: {kind.description} (coordinates: {coordinates}). Select "
                     "two markers, or a face, edge or vertex on each of two bodies (markers are "
                     "made on them): first on the moving body, then on the one it is attached "
                     "to"),
        "NEEDS": "ends",
        "ENDS": 2,
        "ACTION": "hinge",
        "OPTIONS": {"hinge_type": kind.name},
    })


#: The hinge commands, in the order of HINGE_TYPES.
COMMANDS = tuple(_command(kind) for kind in HINGE_TYPES.values())
