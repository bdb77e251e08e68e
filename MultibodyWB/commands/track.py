"""The Track command: a track (a chain, a belt) of shoes wrapped round picked wheels.

Select the cylindrical faces of the wheels (the drive sprocket, the idler, road wheels, support
rollers; their axes parallel) and, optionally, one whole solid as the shoe; the Track panel
(:mod:`MultibodyWB.gui.task_track`) opens in the mechanism of the picks (else the document's
first): it shows the wrapped path live and, on OK, makes the shoes, their bodies, pin markers
and pin hinges in one undo step (:func:`MultibodyWB.document.track.make_track`). A selection
with anything else (an edge, a marker, a second whole solid) is refused with a message naming
it, and nothing opens.
"""

from .base import ACTIONS, Command, message
from .selection import mechanism_for


def sort_picks(selection):
    """``(faces, shoe, refused)`` of the selection: the picked faces (solid, "FaceN"), the one
    solid picked whole (or None), and what cannot be used, in words."""
    faces, shoes, refused = [], [], []
    for pick in selection.picks:
        if pick.sub.startswith("Face"):
            faces.append((pick.solid, pick.sub))
        elif not pick.sub:
            shoes.append(pick.solid)
        else:
            refused.append(f"'{pick.solid.Label}' {pick.sub} (pick the wheels' cylindrical "
                           "faces)")
    if len(shoes) > 1:
        refused.append("more than one whole solid (pick one shoe solid, or none for a box "
                       "shoe): " + ", ".join(f"'{s.Label}'" for s in shoes))
    refused += [f"'{o.Label}' (not a face of a solid)" for o in selection.others]
    return faces, (shoes[0] if len(shoes) == 1 else None), refused


def _track(command, selection):
    from ..document import track
    from ..gui import task_track
    mechanism = mechanism_for(selection)
    faces, shoe, refused = sort_picks(selection)
    if refused or len(faces) < 2:
        message(command.MENU_TEXT, "Select the cylindrical faces of at least two wheels (and "
                "optionally one shoe solid).", refused)
        return None
    try:
        track.wheel_plane(faces)
    except ValueError as exc:
        message(command.MENU_TEXT, str(exc))
        return None
    return task_track.open_panel(mechanism, faces, shoe)


ACTIONS["track"] = _track


class Track(Command):
    NAME = "Track"
    ICON = "Track.svg"
    MENU_TEXT = "Track"
    TOOL_TIP = ("Wrap a track (a chain, a belt) of pinned shoes round the picked wheels: select "
                "their cylindrical faces (axes parallel) and optionally a shoe solid; the panel "
                "shows the path, the count of shoes and the sag, and makes the shoes (one solid "
                "and links to it), their bodies and pin hinges in one undo step")
    NEEDS = "mechanism"
    ACTION = "track"


COMMANDS = (Track,)
