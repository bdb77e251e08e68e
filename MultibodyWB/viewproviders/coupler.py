"""View provider of the Coupler: a dashed line between its two hinges' symbols.

Each hinge's symbol sits at its output marker (:mod:`.hinge`); the coupler joins the two with a
dashed line and marks each end with a small ball, light blue; red while the coupler has a problem.
"""

import FreeCAD
from . import glyphs
from .base import ViewProvider

#: Colour of the coupler symbol.
COUPLER_COLOR = (0.10, 0.75, 0.95)


def hinge_point(hinge):
    """Where a hinge's symbol is drawn (its output marker, else its input marker), or None."""
    for prop in ("OutputMarker", "InputMarker"):
        placement = getattr(getattr(hinge, prop, None), "Placement", None)
        if placement is not None:
            return FreeCAD.Vector(placement.Base)
    return None


class ViewProviderCoupler(ViewProvider):
    """A coupler: a dashed line between its hinges' symbols, a ball at each."""

    ICON = "Coupler.svg"
    MODE = "Glyph"
    REDRAW_ON = frozenset({"FirstHinge", "SecondHinge", "CouplerType"})

    def build(self, settings):
        obj = self.Object
        points = [hinge_point(h) for h in (obj.FirstHinge, obj.SecondHinge)]
        if not settings.glyphs or any(p is None for p in points):
            return None
        color = self.color(COUPLER_COLOR)
        root = glyphs.group(settings.on_top)
        root.addChild(glyphs.polyline(points, color, 2.5, pattern=0x00FF))
        for p in points:
            root.addChild(glyphs.sphere(0.15 * settings.size, color, center=tuple(p),
                                        transparency=0.3))
        return root
