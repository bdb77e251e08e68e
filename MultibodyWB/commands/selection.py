"""What the user selected, as the commands need it, and the rules that enable each command.

:func:`current` reads FreeCAD's selection (tree or 3D view, in the order it was made) into a
:class:`Selection`: the Multibody objects picked whole, and the picks on solids (a solid and one
face, edge or vertex of it, or the solid itself) with the body each solid belongs to.

:data:`RULES` maps each rule name a command's ``NEEDS`` gives to a function ``(selection,
command) -> bool``, which is the command's ``IsActive``.
"""

from dataclasses import dataclass, field

import FreeCAD

from ..objects.base import type_of
from ..objects.body import TYPE as BODY
from ..objects.body import body_of, has_solids  # noqa: F401  (the rules use them)
from ..objects.hinge import TYPE as HINGE
from ..objects.marker import TYPE as MARKER
from ..objects.mechanism import TYPE as MECHANISM
from ..objects.mechanism import mechanism_of


@dataclass(frozen=True)
class Pick:
    """A solid picked whole (``sub`` is "") or by one face, edge or vertex (``"Face3"``).

    ``body`` is the Multibody body whose solids include ``solid`` (None if no body has it).
    """

    solid: object
    sub: str
    body: object


@dataclass
class Selection:
    """The current selection, sorted out.

    Attributes
    ----------
    document : App.Document or None
        The active document.
    objects : list
        The Multibody objects selected whole, in selection order.
    picks : list of Pick
        Picks on solids (anything with a shape that has solids), in selection order.
    others : list
        Anything else (the commands that take a selection then refuse it).
    """

    document: object = None
    objects: list = field(default_factory=list)
    picks: list = field(default_factory=list)
    others: list = field(default_factory=list)

    def of_type(self, type_name):
        """The selected Multibody objects of ``Type`` ``type_name``."""
        return [o for o in self.objects if type_of(o) == type_name]

    @property
    def empty(self):
        return not (self.objects or self.picks or self.others)

    def free_solids(self):
        """The solids picked (whole or by an element) that belong to no body, each once; None
        if anything else is selected."""
        if self.objects or self.others or not self.picks or \
                any(p.body is not None for p in self.picks):
            return None
        solids = []
        for pick in self.picks:
            if pick.solid not in solids:
                solids.append(pick.solid)
        return solids

    def ends(self):
        """The ends of a hinge or force, in selection order: markers, and picks of one element
        (or a whole solid) of a body's solid; None if anything else is selected."""
        if self.others or any(type_of(o) != MARKER for o in self.objects) or \
                any(p.body is None for p in self.picks):
            return None
        return self.objects + self.picks


def end_body(end):
    """The body of a hinge or force end (a marker or a :class:`Pick`)."""
    return end.body if isinstance(end, Pick) else end.Body


def current():
    """The current selection of the active document as a :class:`Selection`."""
    import FreeCADGui
    doc = FreeCAD.ActiveDocument
    selection = Selection(doc)
    if doc is None:
        return selection
    for item in FreeCADGui.Selection.getSelectionEx(doc.Name):
        obj = item.Object
        subs = [s for s in item.SubElementNames if s]
        if type_of(obj) is not None:
            selection.objects.append(obj)
        elif has_solids(obj):
            body = body_of(obj)
            for sub in subs or [""]:
                selection.picks.append(Pick(obj, sub, body))
        else:
            selection.others.append(obj)
    return selection


def mechanisms(doc):
    """The Mechanisms of ``doc``, in the document's order."""
    if doc is None:
        return []
    return [o for o in doc.findObjects("App::DocumentObjectGroupPython")
            if type_of(o) == MECHANISM]


def mechanism_for(selection):
    """The mechanism a command acts on: the selected one, the one of a selected member, else the
    document's first; None if the document has none."""
    for obj in selection.objects:
        if type_of(obj) == MECHANISM:
            return obj
        owner = mechanism_of(obj)
        if owner is not None:
            return owner
    for pick in selection.picks:
        owner = mechanism_of(pick.body) if pick.body is not None else None
        if owner is not None:
            return owner
    found = mechanisms(selection.document)
    return found[0] if found else None


# -- rules: is the command active? ---------------------------------------------------------------
def _document(selection, command):
    return selection.document is not None


def _mechanism(selection, command):
    return bool(mechanisms(selection.document))


def _free_solids(selection, command):
    return bool(selection.free_solids())


def _ground(selection, command):
    bodies = selection.of_type(BODY)
    if len(bodies) == 1 and len(selection.objects) == 1 and not selection.picks and \
            not selection.others:
        return mechanism_of(bodies[0]) is not None
    return _free_solids(selection, command)


def _marker_targets(selection, command):
    if selection.empty or selection.others or any(p.body is None for p in selection.picks):
        return False
    return all(type_of(o) == BODY for o in selection.objects)


def _ends(selection, command):
    ends = selection.ends()
    if ends is None or len(ends) != command.ENDS:
        return False
    bodies = [end_body(e) for e in ends]
    if any(b is None for b in bodies):
        return False
    owners = {getattr(mechanism_of(b), "Name", None) for b in bodies}
    # two ends on two bodies of one mechanism
    return len({b.Name for b in bodies}) == len(bodies) and None not in owners and \
        len(owners) == 1


def _hinges(selection, command):
    hinges = selection.of_type(HINGE)
    if len(hinges) != 2 or len(selection.objects) != 2 or selection.picks or selection.others \
            or hinges[0].Name == hinges[1].Name:
        return False
    owners = {getattr(mechanism_of(h), "Name", None) for h in hinges}
    return None not in owners and len(owners) == 1


#: Rule name (a command's ``NEEDS``) -> function(selection, command) -> bool.
RULES = {
    "always": lambda selection, command: True,
    "document": _document,                  # an open document
    "mechanism": _mechanism,                # a document with a mechanism
    "free_solids": _free_solids,            # solids that are not yet in a body
    "ground": _ground,                      # one body of a mechanism, or free solids
    "marker_targets": _marker_targets,      # picks on bodies' solids, or bodies
    "ends": _ends,                          # command.ENDS markers or picks, on as many bodies
    "hinges": _hinges,                      # two hinges of one mechanism
}


# -- why a command is not active: said in its tool tip and status-bar text ----------------------
def _name(obj):
    return f"'{getattr(obj, 'Label', '?')}'"


def _not_a_solid(obj):
    kind = getattr(obj, "TypeId", "")
    if "Sketch" in kind:
        return f"{_name(obj)} is a sketch, not a solid: pad or extrude it first"
    return f"{_name(obj)} is not a solid (it has no volume)"


def _why_document(selection, command):
    return "open or create a document first"


def _why_mechanism(selection, command):
    if selection.document is None:
        return _why_document(selection, command)
    return "the document has no mechanism yet: select solids and press Body from solids"


def _why_free_solids(selection, command):
    if selection.document is None:
        return _why_document(selection, command)
    if selection.empty:
        return "select one or more solids (in the 3D view or the tree)"
    if selection.others:
        return _not_a_solid(selection.others[0])
    if selection.objects:
        return f"{_name(selection.objects[0])} is already a Multibody object: select solids"
    taken = next((p for p in selection.picks if p.body is not None), None)
    if taken is not None:
        return f"{_name(taken.solid)} is already a solid of body {_name(taken.body)}"
    return ""


def _why_ground(selection, command):
    bodies = selection.of_type(BODY)
    if bodies and mechanism_of(bodies[0]) is None:
        return f"body {_name(bodies[0])} belongs to no mechanism"
    if len(bodies) > 1:
        return "select one body (or solids that are not yet in a body)"
    return _why_free_solids(selection, command)


def _why_marker_targets(selection, command):
    if selection.document is None:
        return _why_document(selection, command)
    if selection.empty:
        return "select a face, edge or vertex of a body's solid (or a body)"
    if selection.others:
        return _not_a_solid(selection.others[0])
    loose = next((p for p in selection.picks if p.body is None), None)
    if loose is not None:
        return f"{_name(loose.solid)} belongs to no body: make it a body first (Body from solids)"
    other = next((o for o in selection.objects if type_of(o) != BODY), None)
    if other is not None:
        return f"{_name(other)} is not a body: select a body or faces, edges, vertices of one"
    return ""


def _why_ends(selection, command):
    n = command.ENDS
    what = (f"select {n} ends: markers, or a face, edge or vertex on each of {n} different "
            "bodies") if n != 1 else \
        "select one end: a marker, or a face, edge or vertex of a body's solid"
    if selection.document is None:
        return _why_document(selection, command)
    if selection.empty:
        return what
    if selection.others:
        return f"{_not_a_solid(selection.others[0])}; {what}"
    loose = next((p for p in selection.picks if p.body is None), None)
    if loose is not None:
        return f"{_name(loose.solid)} belongs to no body: make it a body first (Body from solids)"
    other = next((o for o in selection.objects if type_of(o) != MARKER), None)
    if other is not None:
        return f"{_name(other)} is not a marker; {what}"
    ends = selection.ends()
    if len(ends) != n:
        return f"{len(ends)} selected; {what}"
    bodies = [end_body(e) for e in ends]
    if any(b is None for b in bodies):
        return "a selected marker is on no body"
    if len({b.Name for b in bodies}) < len(bodies):
        seen = {}
        for b in bodies:
            if b.Name in seen:
                return (f"two ends are on the same body {_name(b)} (e.g. two faces of one "
                        "body): it joins different bodies")
            seen[b.Name] = b
    owners = {getattr(mechanism_of(b), "Name", None) for b in bodies}
    if None in owners:
        return "a selected body belongs to no mechanism"
    if len(owners) > 1:
        return "the ends are in different mechanisms"
    return ""


def _why_hinges(selection, command):
    what = "select two hinges (in the tree or their symbols in the 3D view)"
    if selection.document is None:
        return _why_document(selection, command)
    if selection.empty:
        return what
    other = next((o for o in selection.objects if type_of(o) != HINGE), None)
    if other is None and (selection.picks or selection.others):
        other = selection.picks[0].solid if selection.picks else selection.others[0]
    if other is not None:
        return f"{_name(other)} is not a hinge; {what}"
    hinges = selection.of_type(HINGE)
    if len(hinges) != 2:
        return f"{len(hinges)} hinge{'s' if len(hinges) != 1 else ''} selected; {what}"
    owners = {getattr(mechanism_of(h), "Name", None) for h in hinges}
    if None in owners:
        return "a selected hinge belongs to no mechanism"
    if len(owners) > 1:
        return "the hinges are in different mechanisms"
    return ""


#: Rule name -> function(selection, command) -> why the command is not active ("" if it is).
WHY = {
    "always": lambda selection, command: "",
    "document": _why_document,
    "mechanism": _why_mechanism,
    "free_solids": _why_free_solids,
    "ground": _why_ground,
    "marker_targets": _why_marker_targets,
    "ends": _why_ends,
    "hinges": _why_hinges,
    "results": lambda selection, command: (
        _why_mechanism(selection, command) if not mechanisms(selection.document)
        else "the mechanism has no stored run yet: Simulate first"),
}


def why(rule, selection, command):
    """Why ``command`` (whose ``NEEDS`` is ``rule``) is not active for ``selection``, in words;
    a generic sentence for a rule without its own explanation."""
    explain = WHY.get(rule)
    text = explain(selection, command) if explain is not None else ""
    return text or "this command needs another selection"
