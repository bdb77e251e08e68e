"""View provider of the Contact: each side's shape drawn at its marker, see-through.

The symbols (:data:`SHAPE_GLYPHS`, one per contact shape of the solver's ``CONTACT_SHAPES``) are
drawn in the marker's frame, a little larger than the shape so that they show over the solid it
was picked on: a sphere, a box, a cylinder, a cone or a torus about the marker's z, a convex
shape's hull (its triangles), and for a plane a thin square of a few ``GlyphSize`` in its xy plane with a short
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
    from ..solver.api import convex_hull as hull
    try:
        h = hull(hull_points(obj, side))
    except ValueError:                  # no points: the contact's check says why
        return None
    return glyphs.mesh(SCALE * h.vertices, h.triangles, color, transparency=TRANSPARENCY)


def _revolution(rings, n=32):
    """Vertices and triangles of a closed surface of revolution about z: ``rings`` (r, z) in
    order along its outline (an end with r = 0 is a point)."""
    import numpy as np
    a = np.linspace(0.0, 2.0 * np.pi, n, endpoint=False)
    vertices = np.vstack([np.column_stack([r * np.cos(a), r * np.sin(a), np.full(n, z)])
                          for r, z in rings])
    triangles = []
    for i in range(len(rings) - 1):
        for j in range(n):
            p, q = i * n + j, i * n + (j + 1) % n
            triangles += [(p, q, q + n), (p, q + n, p + n)]
    return vertices, np.array(triangles, dtype=int)


def _cone(obj, side, s, color):
    r1, r2 = (getattr(obj, f"{side}Radius{k}").Value for k in ("", "2"))
    h = 0.5 * getattr(obj, f"{side}Length").Value
    if h <= 0 or r1 + r2 <= 0:
        return None
    v, t = _revolution([(0.0, -h), (r1, -h), (r2, h), (0.0, h)])
    return glyphs.mesh(SCALE * v, t, color, transparency=TRANSPARENCY)


def _torus(obj, side, s, color):
    import math
    big, small = (getattr(obj, f"{side}Radius{k}").Value for k in ("", "2"))
    if not 0 < small < big:
        return None
    n = 16
    rings = [(big + small * math.cos(2 * math.pi * k / n), small * math.sin(2 * math.pi * k / n))
             for k in range(n + 1)]
    v, t = _revolution(rings)
    return glyphs.mesh(SCALE * v, t, color, transparency=TRANSPARENCY)


#: Contact shape -> function(contact, side, size, colour) returning its symbol in marker axes.
SHAPE_GLYPHS = {"sphere": _sphere, "box": _box, "cylinder": _cylinder, "plane": _plane,
                "convex": _convex, "cone": _cone, "torus": _torus}


class ViewProviderContact(ViewProvider):
    """A contact: both shapes at their markers and a dashed line between them."""

    ICON = "Contact.svg"
    MODE = "Glyph"
    REDRAW_ON = frozenset({"InputMarker", "OutputMarker", "InputShape", "OutputShape",
                           "InputRadius", "OutputRadius", "InputLength", "OutputLength",
                           "InputRadius2", "OutputRadius2",
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
