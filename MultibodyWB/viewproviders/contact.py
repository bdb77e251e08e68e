"""View provider of the Contact: each side's shape drawn at its marker, see-through.

The symbols (:data:`SHAPE_GLYPHS`, one per contact shape of the solver's ``CONTACT_SHAPES``) are
drawn in the marker's frame, a little larger than the shape so that they show over the solid it
was picked on: a sphere, a box, a cylinder along the marker's z, a convex shape's hull (its
triangles), and for a plane a thin square of a few ``GlyphSize`` in its xy plane with a short
arrow along its outward normal. A dashed line
joins the two markers. Green; red while the contact has a problem.
"""

import FreeCAD
from pivy import coin

from . import glyphs
from .base import ViewProvider

#: Colour of the contact symbols.
CONTACT_COLOR = (0.20, 0.70, 0.20)
#: How much larger than the shape its symbol is drawn, and how see-through.
SCALE, TRANSPARENCY = 1.03, 0.7


def _sphere(obj, side, s, color):
    r = getattr(obj, f"{side}Radius").Value
    return glyphs.sphere(SCALE * r, color, transparency=TRANSPARENCY) if r > 0 else None


def _box(obj, side, s, color):
    size = [SCALE * x for x in getattr(obj, f"{side}Size")]
    return glyphs.box(size, color, transparency=TRANSPARENCY) if min(size) > 0 else None


def _cylinder(obj, side, s, color):
    r, length = getattr(obj, f"{side}Radius").Value, getattr(obj, f"{side}Length").Value
    if r <= 0 or length <= 0:
        return None
    return glyphs.cylinder(SCALE * r, SCALE * length, color, transparency=TRANSPARENCY)


def _plane(obj, side, s, color):
    sep = coin.SoSeparator()
    sep.addChild(glyphs.box((3.0 * s, 3.0 * s, 0.02 * s), color, transparency=0.5))
    sep.addChild(glyphs.arrow((0, 0, 0), (0, 0, 1.2 * s), color, shaft=0.03 * s, head=0.25 * s))
    return sep


def _convex(obj, side, s, color):
    from ..objects.contact import hull_points
    from ..solver.elements.forces.contact import hull
    try:
        h = hull(hull_points(obj, side))
    except ValueError:                  # no points: the contact's check says why
        return None
    return glyphs.mesh(SCALE * h.vertices, h.triangles, color, transparency=TRANSPARENCY)


#: Contact shape -> function(contact, side, size, colour) returning its symbol in marker axes.
SHAPE_GLYPHS = {"sphere": _sphere, "box": _box, "cylinder": _cylinder, "plane": _plane,
                "convex": _convex}


class ViewProviderContact(ViewProvider):
    """A contact: both shapes at their markers and a dashed line between them."""

    ICON = "Contact.svg"
    MODE = "Glyph"
    REDRAW_ON = frozenset({"InputMarker", "OutputMarker", "InputShape", "OutputShape",
                           "InputRadius", "OutputRadius", "InputLength", "OutputLength",
                           "InputSize", "OutputSize", "InputTolerance", "OutputTolerance",
                           "InputPoints", "OutputPoints"})

    def build(self, settings):
        obj = self.Object
        markers = [obj.InputMarker, obj.OutputMarker]
        if not settings.glyphs or any(getattr(m, "Placement", None) is None for m in markers):
            return None
        color = self.color(CONTACT_COLOR)
        root = glyphs.group(False)
        for side, marker in zip(("Input", "Output"), markers):
            builder = SHAPE_GLYPHS.get(getattr(obj, f"{side}Shape"))
            node = builder(obj, side, settings.size, color) if builder else None
            if node is None:
                continue
            sep = coin.SoSeparator()
            sep.addChild(glyphs.placement_transform(marker.Placement))
            sep.addChild(node)
            root.addChild(sep)
        a, b = (FreeCAD.Vector(m.Placement.Base) for m in markers)
        root.addChild(glyphs.polyline([a, b], color, 1.5, pattern=0x0F0F))
        return root
