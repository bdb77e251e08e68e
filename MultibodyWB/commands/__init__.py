"""GUI commands of the Multibody workbench, registered in one place.

Commands are small, data-only classes (menu text, tool tip, icon, what they need selected, what
they do) that act through ``FreeCADGui.doCommand`` so that a user's actions are recorded as a
macro (see :mod:`.base`). The modules define them: :mod:`.model` (mechanism, body, ground,
marker), :mod:`.hinges` (one per hinge type of the solver's ``HINGE_TYPES``), :mod:`.forces` (one
per ``FORCE_TYPES``), :mod:`.contacts` (a contact between two picked faces), :mod:`.couplers` (a gear pair or other
coupling of two hinges' coordinates) and :mod:`.files`
(neutral XML export and import, topology figure) and
:mod:`.simulation` (simulate, play, plot), :mod:`.study` (design studies), :mod:`.fem` (FEM loads
of a body at an instant) and :mod:`.check` (status and drag to check, the interference check);
this package registers them all with ``FreeCADGui.addCommand`` when it is imported.

This package is imported only from ``MultibodyWorkbench.Initialize()`` (InitGui.py), i.e. with the
GUI up. ``TOOLBARS`` lists the toolbars (title -> command names), ``COMMANDS`` every command name in
menu order, with ``"Separator"`` between the groups.
"""

import FreeCADGui

from . import check, contacts, couplers, fem, files, forces, hinges, model, simulation, study, track

#: Toolbar title -> the classes of its commands, in order.
GROUPS = {
    "Multibody model": model.COMMANDS + track.COMMANDS + files.COMMANDS + check.COMMANDS,
    "Multibody hinges": hinges.COMMANDS,
    "Multibody forces": forces.COMMANDS + contacts.COMMANDS + couplers.COMMANDS,
    "Multibody simulation": simulation.COMMANDS + study.COMMANDS + fem.COMMANDS,
}

for _group in GROUPS.values():
    for _command in _group:
        FreeCADGui.addCommand(_command.command_name(), _command())

#: Toolbar title -> registered command names.
TOOLBARS = {title: [c.command_name() for c in group] for title, group in GROUPS.items()}

#: Every command name in menu order, groups separated by "Separator".
COMMANDS = []
for _names in TOOLBARS.values():
    if COMMANDS:
        COMMANDS.append("Separator")
    COMMANDS.extend(_names)
