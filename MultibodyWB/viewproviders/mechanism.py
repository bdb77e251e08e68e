"""View provider of the Mechanism: the tree below it and the view settings of its members.

The Mechanism draws nothing itself. Its view properties (group "Multibody display") set how every
member is drawn (:class:`~.base.Display`):

- ``GlyphSize``: the length of a marker's axes and the scale of every symbol; 0 (the default)
  means automatic, :data:`AUTO_FRACTION` of the diagonal of the bounding box of the bodies' solids;
- ``ShowTriads``, ``ShowGlyphs``, ``ShowLabels``: the markers' axes; the hinge, force and
  centre-of-mass symbols with their connection lines; the letters x, y, z;
- ``GlyphsOnTop``: draw the symbols over the solids (they are often inside a bore).

Each member's own ``Visibility`` hides it as usual. Changing a setting, the members or the bodies'
solids redraws the members.

In the tree the mechanism holds its bodies, hinges, forces and simulation; the markers sit under
their bodies (:mod:`.body`).
"""

import math

from ..objects.base import type_of
from ..objects.body import TYPE as BODY
from ..objects.body import solid_shape
from ..objects.marker import TYPE as MARKER
from .base import DEFAULT_SIZE, Display, ViewProvider, redraw

#: Automatic symbol size: this fraction of the diagonal of the bodies' bounding box.
AUTO_FRACTION = 0.1

#: View properties: (type, name, doc, default).
VIEW_PROPERTIES = (
    ("App::PropertyLength", "GlyphSize",
     "Length of the markers' axes and scale of the hinge and force symbols; 0: automatic "
     f"({AUTO_FRACTION:g} of the diagonal of the bodies' bounding box)", 0.0),
    ("App::PropertyBool", "ShowTriads", "Show the markers' axes (x red, y green, z blue)", True),
    ("App::PropertyBool", "ShowGlyphs",
     "Show the hinge, force and centre-of-mass symbols and the lines between markers", True),
    ("App::PropertyBool", "ShowLabels", "Label the markers' axes x, y, z", False),
    ("App::PropertyBool", "GlyphsOnTop", "Draw the symbols over the solids", True),
)
GROUP = "Multibody display"


def model_size(mechanism):
    """Diagonal of the bounding box of the solids of the mechanism's bodies (mm; 0 if none)."""
    box = None
    for member in mechanism.Group:
        if type_of(member) != BODY:
            continue
        for solid in member.Solids:
            shape = solid_shape(solid)
            if shape is None:
                continue
            bound = shape.BoundBox
            if not bound.isValid():
                continue
            if box is None:
                box = bound
            else:
                box.add(bound)
    return box.DiagonalLength if box is not None else 0.0


class ViewProviderMechanism(ViewProvider):
    """The Mechanism: its tree and the view settings of its members."""

    ICON = "Mechanism.svg"

    def add_view_properties(self, vobj):
        present = set(vobj.PropertiesList)
        for type_name, name, doc, default in VIEW_PROPERTIES:
            if name not in present:
                vobj.addProperty(type_name, name, GROUP, doc)
                setattr(vobj, name, default)
        self._auto_size = None

    def children(self):
        """Bodies, hinges, forces, the simulation; markers of a body of the mechanism go under
        their body."""
        obj = self.Object
        bodies = {m.Name for m in obj.Group if type_of(m) == BODY}
        return [m for m in obj.Group
                if not (type_of(m) == MARKER and m.Body is not None and m.Body.Name in bodies)]

    def data_changed(self, obj, prop):
        if prop == "Group":
            # members are drawn before they join (the factory adds them last): draw the new ones
            # with the mechanism's settings, or everything if the bodies' size changed
            known = getattr(self, "_members", set())
            self._members = {m.Name for m in obj.Group}
            if not self.update_size():
                for member in obj.Group:
                    if member.Name not in known:
                        redraw(member)
        elif prop == "Ground":
            self.redraw_members()
            for member in obj.Group:           # the ground's icon
                if type_of(member) == BODY and hasattr(member.ViewObject, "signalChangeIcon"):
                    member.ViewObject.signalChangeIcon()

    def view_changed(self, vobj, prop):
        if prop in {p[1] for p in VIEW_PROPERTIES}:
            self.redraw_members()

    def restored(self):
        """Draw the members once the whole document is there."""
        self._auto_size = None
        self.redraw_members()

    # -- settings -------------------------------------------------------------------------------
    def settings(self):
        """The :class:`~.base.Display` settings of the members."""
        vobj = self.ViewObject
        values = {name: getattr(vobj, name, default) for _, name, _, default in VIEW_PROPERTIES}
        size = float(getattr(values["GlyphSize"], "Value", values["GlyphSize"]))
        if size <= 0.0:
            size = self.auto_size()
        return Display(size=size, triads=bool(values["ShowTriads"]),
                       glyphs=bool(values["ShowGlyphs"]), labels=bool(values["ShowLabels"]),
                       on_top=bool(values["GlyphsOnTop"]))

    def auto_size(self):
        """The automatic symbol size (mm), from the bodies' bounding box."""
        if getattr(self, "_auto_size", None) is None:
            diagonal = model_size(self.Object)
            self._auto_size = AUTO_FRACTION * diagonal if diagonal > 0.0 else DEFAULT_SIZE
            self._auto_size = float(f"{self._auto_size:.3g}")   # steady under tiny changes
        return self._auto_size

    def update_size(self):
        """Measure the bodies again; redraw the members if the automatic size changed (and then
        return True)."""
        old = getattr(self, "_auto_size", None)
        self._auto_size = None
        new = self.auto_size()
        if old is None or not math.isclose(old, new):
            self.redraw_members()
            return True
        return False

    def redraw_members(self):
        for member in self.Object.Group:
            redraw(member)
