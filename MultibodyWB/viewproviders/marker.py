"""View provider of the Marker: its frame's axes (the triad), x red, y green, z blue.

The marker is a ``Part::FeaturePython``: FreeCAD places its view at the marker's ``Placement``, so
the triad is drawn in the marker's own axes. Its length is the mechanism's ``GlyphSize``; the
mechanism's ``ShowTriads`` and ``ShowLabels`` switch the axes and their letters. A marker with a
problem gets a red ball at its origin.

When the marker moves, the hinges, forces and the body that use it are redrawn (their symbols
sit at or point to the marker). In the tree the marker sits under its body (:mod:`.body`); when
its ``Body`` changes, the old and the new body's children are read again.
"""

from ..objects.base import type_of
from . import glyphs
from ..gui.symbols import DEPENDENT_TYPES, redraw
from .base import ViewProvider, refresh_tree


class ViewProviderMarker(ViewProvider):
    """A marker: its axes."""

    ICON = "Marker.svg"
    MODE = "Triad"
    REDRAW_ON = frozenset()

    def data_changed(self, obj, prop):
        if prop == "Body":
            previous = getattr(self, "_body", None)
            for body in (previous, obj.Body):
                if body is not None:
                    refresh_tree(body)
            self._body = obj.Body
        elif prop == "Placement":
            for user in obj.InList:
                if type_of(user) in DEPENDENT_TYPES:
                    redraw(user)

    def build(self, settings):
        if not settings.triads:
            return None
        root = glyphs.group(settings.on_top)
        root.addChild(glyphs.triad(settings.size, settings.labels, bool(self.problem())))
        return root
