"""View provider of the Body: its centre of mass and the lines to its markers; its markers in the
tree.

A moving body shows the centre-of-mass symbol (a ball of black and white octants) at
``BasePlacement * CenterOfMass`` and a dashed line from there to each of its markers: the body's
"skeleton", which shows at a glance which marker belongs to which body. The ground shows only the
lines, from its base frame's origin. The mechanism's ``ShowGlyphs`` switches both.

The body's markers are its children in the tree.
"""

import FreeCAD

from ..document.factory import markers_of
from . import glyphs
from .base import ViewProvider


class ViewProviderBody(ViewProvider):
    """A rigid body (or the ground)."""

    ICON = "Body.svg"
    MODE = "CenterOfMass"
    REDRAW_ON = frozenset({"BasePlacement", "CenterOfMass", "Mass"})

    def icon_name(self):
        return "Ground.svg" if self.is_ground() else self.ICON

    def is_ground(self):
        from ..objects.mechanism import mechanism_of
        obj = getattr(self, "Object", None)
        mechanism = mechanism_of(obj) if obj is not None else None
        return mechanism is not None and mechanism.Ground == obj

    def children(self):
        return markers_of(self.Object)

    def data_changed(self, obj, prop):
        if prop in ("BasePlacement", "Volume"):
            from ..objects.mechanism import mechanism_of
            mechanism = mechanism_of(obj)
            proxy = getattr(getattr(mechanism, "ViewObject", None), "Proxy", None)
            if hasattr(proxy, "update_size") and hasattr(proxy, "Object"):
                proxy.update_size()

    def build(self, settings):
        if not settings.glyphs:
            return None
        obj = self.Object
        root = glyphs.group(settings.on_top)
        ground = self.is_ground()
        base = obj.BasePlacement
        center = base.Base if ground else base.multVec(obj.CenterOfMass)
        for marker in markers_of(obj):
            origin = marker.Placement.Base
            if (origin - center).Length > 1e-6 * settings.size:
                root.addChild(glyphs.polyline([center, origin], self.color(glyphs.LINE_COLOR),
                                              1.5, pattern=0x0F0F))
        if not ground and obj.Mass.Value > 0.0:
            sep = glyphs.coin.SoSeparator()
            sep.addChild(glyphs.placement_transform(FreeCAD.Placement(center, base.Rotation)))
            sep.addChild(glyphs.center_of_mass(0.16 * settings.size))
            if self.problem():
                sep.addChild(glyphs.sphere(0.1 * settings.size, glyphs.PROBLEM_COLOR,
                                           (0.0, 0.0, 0.3 * settings.size)))
            root.addChild(sep)
        return root
