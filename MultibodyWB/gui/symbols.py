"""The symbols' drawing state: an object's symbol redrawn on demand, and the symbols drawn from
markers suspended while the player moves the markers.

The view providers (:mod:`MultibodyWB.viewproviders`) draw the symbols; this module, below them,
reaches them through the object's ``ViewObject.Proxy``: a proxy that has a ``redraw`` method and
is attached (has its ``Object``) is drawn. The panels and the player use it without importing the
view providers, which open the panels.
"""

from ..objects.base import type_of

#: Objects drawn from a marker's placement: redrawn when it moves, suspended while playing.
DEPENDENT_TYPES = ("Multibody::Hinge", "Multibody::Force", "Multibody::Contact",
                   "Multibody::Coupler", "Multibody::Body")


def _drawn(proxy):
    """Whether ``proxy`` (a view object's) is a Multibody view provider that is attached."""
    return callable(getattr(proxy, "redraw", None)) and hasattr(proxy, "Object")


#: Documents (by name) whose marker-drawn symbols are suspended (see :func:`suspend_symbols`).
_SUSPENDED = set()


def symbols_suspended(doc):
    """True while the player moves ``doc``'s markers (:func:`suspend_symbols`)."""
    return doc is not None and doc.Name in _SUSPENDED


def _marker_drawn(doc):
    """The attached Multibody view providers of ``doc`` whose symbols are drawn from markers'
    placements (hinges, forces, bodies)."""
    out = []
    for obj in doc.Objects:
        if type_of(obj) in DEPENDENT_TYPES:
            proxy = getattr(getattr(obj, "ViewObject", None), "Proxy", None)
            if _drawn(proxy):
                out.append(proxy)
    return out


def suspend_symbols(doc):
    """Hide the hinge, force and body symbols of ``doc`` and stop rebuilding them when markers
    move, until :func:`resume_symbols`.

    The player moves every marker at every frame; rebuilding each hinge's symbol from its
    markers then costs far more than the frame itself. The markers' own axes still move with
    their bodies (FreeCAD places them).
    """
    _SUSPENDED.add(doc.Name)
    for proxy in _marker_drawn(doc):
        display = getattr(proxy, "display", None)
        if display is not None:
            display.removeAllChildren()


def show_marker_axes(doc, on):
    """Draw (``on``) or hide the markers' axes of ``doc`` without changing the document (the
    player hides them while it plays: many small cones and letters are slow to render)."""
    for obj in doc.Objects:
        if type_of(obj) != "Multibody::Marker":
            continue
        proxy = getattr(getattr(obj, "ViewObject", None), "Proxy", None)
        if not _drawn(proxy):
            continue
        if on:
            proxy.redraw()
        elif getattr(proxy, "display", None) is not None:
            proxy.display.removeAllChildren()


def resume_symbols(doc):
    """Draw the symbols of ``doc`` again from the markers' current placements."""
    _SUSPENDED.discard(doc.Name)
    for proxy in _marker_drawn(doc):
        proxy.redraw()


def redraw(obj):
    """Rebuild the symbol of ``obj`` if it has a Multibody view provider that is attached (not
    while its document's symbols are suspended)."""
    proxy = getattr(getattr(obj, "ViewObject", None), "Proxy", None)
    if type_of(obj) is not None and _drawn(proxy):
        if symbols_suspended(obj.Document):
            return
        proxy.redraw()
