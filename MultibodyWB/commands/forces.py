"""One command per force type, generated from the solver's :data:`FORCE_TYPES` table.

A point force or torque acts at one selected marker (or a marker made on the picked face, edge or
vertex); a spring-damper or a nonlinear bushing joins two, on two bodies. New loads point along
the marker's z axis (:data:`DEFAULTS`: a force pushes into the picked face, whose marker's z is
the outward normal); their magnitude (an expression in t) and the rest, a law's own parameters
too (a bushing's stiffnesses and dampings per axis, from its registry rows), are set in the
force's task panel, which opens once the force is made (:mod:`MultibodyWB.gui.task_force`). A
law registered in the solver gets its command here with nothing to add; its icon is
``Force<TypeName>.svg`` (:func:`~MultibodyWB.viewproviders.force.icon_file`).
"""

from ..gui.task_base import with_panel
from ..objects.force import TYPE as FORCE
from ..objects.mechanism import mechanism_of
from ..solver.api import FORCE_TYPES
from ..viewproviders.force import icon_file
from .base import ACTIONS, DOC, Command, ref, scripted
from .hinges import ordered_ends
from .model import FACTORY, end_script
from .selection import end_body

#: Force type -> keywords of ``make_force`` the command gives a new force.
DEFAULTS = {
    "point_force": {"direction": (0, 0, -1), "frame": "marker"},
    "point_torque": {"direction": (0, 0, 1), "frame": "marker"},
}


#: Menu titles that are not the type's name with spaces.
TITLES = {"spring_damper": "Spring-damper", "rotational_spring_damper": "Rotational spring-damper"}


def object_name(force_type):
    """``"spring_damper"`` -> ``"SpringDamper"``."""
    return "".join(part.capitalize() for part in force_type.split("_"))


def _force(selection, force_type):
    ends = ordered_ends(selection) if FORCE_TYPES[force_type].markers == 2 else selection.ends()
    statements = []
    names = []
    for end, variable in zip(ends, ("input_marker", "output_marker")):
        lines, name = end_script(end, variable)
        statements += lines
        names.append(name)
    mechanism = ref(mechanism_of(end_body(ends[0])))
    options = "".join(f", {key}={value!r}" for key, value in DEFAULTS.get(force_type, {}).items())
    statements.append(f"{FACTORY}.make_force({DOC}, {mechanism}, {force_type!r}, "
                      f"{', '.join(names)}{options})")
    return statements


ACTIONS["force"] = with_panel(scripted(_force), FORCE)


def _command(kind):
    title = TITLES.get(kind.name, kind.name.replace("_", " ").capitalize())
    where = ("Select a marker, or a face, edge or vertex of a body (a marker is made on it)"
             if kind.markers == 1 else
             "Select two markers, or a face, edge or vertex on each of two bodies (markers are "
             "made on them)")
    return type(f"Create{object_name(kind.name)}", (Command,), {
        "__doc__": f"Create a {kind.name}.",
        "NAME": object_name(kind.name),
        "ICON": icon_file(kind.name),
        "MENU_TEXT": title,
        "TOOL_TIP": f"{title}: {kind.description}. {where}",
        "NEEDS": "ends",
        "ENDS": kind.markers,
        "ACTION": "force",
        "OPTIONS": {"force_type": kind.name},
    })


#: The force commands, in the order of FORCE_TYPES.
COMMANDS = tuple(_command(kind) for kind in FORCE_TYPES.values())
