"""View provider of the Hinge: a symbol per hinge type at the hinge frame, a line between its
markers.

The symbol sits at the output marker's frame (the frame the hinge's coordinates are measured in;
the input marker's when there is no output marker), its axis the markers' z axis. Which symbol a
type gets is the table :data:`HINGE_GLYPHS` (hinge type -> builder), one entry per type of the
solver's :data:`~MultibodyWB.solver.model.HINGE_TYPES`:

===========  =====================================================================
fixed        a square frame with a block at its centre (welded)
revolute     a pin (cylinder) along z with a curved arrow about it
prismatic    a block along z with a two-headed arrow along z
cylindrical  a thinner pin along z, a two-headed arrow along and a curved arrow about z
universal    a cross of two pins along x and y (the two axes of rotation)
spherical    a ball
planar       a thin plate in the xy plane with two-headed arrows along x and y
free         three thin two-headed arrows along x, y and z around a small ball
bushing      a coil along z between two washers (elastic in every direction)
===========  =====================================================================

A revolute or cylindrical hinge with ``UseLimits`` also shows its rz limits: an arc about the
axis from the lower to the upper limit, measured from the output marker's x axis as the
coordinate is, with a tick at each end (:func:`limits_arc`).

A dashed line joins the two markers' origins when they are apart. Amber, a little transparent so
that the markers' axes show through, red while the hinge has a problem. The mechanism's
``ShowGlyphs`` switches it, ``GlyphSize`` scales it (the symbols stay within about half the axes'
length of the frame, so the axes stick out).
"""

import math

from pivy import coin

from . import glyphs
from .base import ViewProvider


#: Transparency of the hinge symbols: the markers' axes show through them.
T = 0.25


def _revolute(s, color):
    sep = coin.SoSeparator()
    sep.addChild(glyphs.cylinder(0.13 * s, 0.7 * s, color, transparency=T))
    sep.addChild(glyphs.curved_arrow(0.3 * s, color, z=0.0, transparency=T))
    return sep


def _prismatic(s, color):
    sep = coin.SoSeparator()
    sep.addChild(glyphs.box((0.22 * s, 0.22 * s, 0.55 * s), color, transparency=T))
    sep.addChild(glyphs.double_arrow((0, 0, 0), (0, 0, 1), 1.3 * s, color, shaft=0.03 * s,
                                     transparency=T))
    return sep


def _cylindrical(s, color):
    sep = coin.SoSeparator()
    sep.addChild(glyphs.cylinder(0.09 * s, 0.6 * s, color, transparency=T))
    sep.addChild(glyphs.double_arrow((0, 0, 0), (0, 0, 1), 1.3 * s, color, shaft=0.03 * s,
                                     transparency=T))
    sep.addChild(glyphs.curved_arrow(0.3 * s, color, z=0.0, transparency=T))
    return sep


def _universal(s, color):
    sep = coin.SoSeparator()
    sep.addChild(glyphs.cylinder(0.06 * s, 0.75 * s, color, direction=(1, 0, 0), transparency=T))
    sep.addChild(glyphs.cylinder(0.06 * s, 0.75 * s, color, direction=(0, 1, 0), transparency=T))
    sep.addChild(glyphs.sphere(0.11 * s, color, transparency=T))
    return sep


def _spherical(s, color):
    return glyphs.sphere(0.22 * s, color, transparency=T)


def _planar(s, color):
    sep = coin.SoSeparator()
    sep.addChild(glyphs.box((0.9 * s, 0.9 * s, 0.04 * s), color, transparency=0.5))
    for axis in ((1, 0, 0), (0, 1, 0)):
        sep.addChild(glyphs.double_arrow((0, 0, 0), axis, 0.8 * s, color, shaft=0.02 * s,
                                         transparency=T))
    return sep


def _fixed(s, color):
    sep = coin.SoSeparator()
    half, bar = 0.3 * s, 0.06 * s
    for center, size in (((0, half, 0), (2 * half + bar, bar, bar)),
                         ((0, -half, 0), (2 * half + bar, bar, bar)),
                         ((half, 0, 0), (bar, 2 * half, bar)),
                         ((-half, 0, 0), (bar, 2 * half, bar))):
        sep.addChild(glyphs.box(size, color, center, transparency=T))
    sep.addChild(glyphs.box((0.18 * s, 0.18 * s, 0.18 * s), color, transparency=T))
    return sep


def _free(s, color):
    sep = coin.SoSeparator()
    for axis in ((1, 0, 0), (0, 1, 0), (0, 0, 1)):
        sep.addChild(glyphs.double_arrow((0, 0, 0), axis, 0.8 * s, color, shaft=0.018 * s,
                                         transparency=T))
    sep.addChild(glyphs.sphere(0.07 * s, color, transparency=T))
    return sep


def _bushing(s, color):
    sep = coin.SoSeparator()
    sep.addChild(glyphs.polyline(glyphs.helix_points((0, 0, -0.4 * s), (0, 0, 0.4 * s),
                                                     0.18 * s, 5), color, 3.0))
    for z in (-0.4 * s, 0.4 * s):
        sep.addChild(glyphs.cylinder(0.24 * s, 0.04 * s, color, center=(0, 0, z),
                                     transparency=T))
    return sep


def _unknown(s, color):
    return glyphs.sphere(0.15 * s, glyphs.PROBLEM_COLOR)


#: Hinge type -> function(size, colour) returning its symbol in the hinge frame.
HINGE_GLYPHS = {
    "fixed": _fixed,
    "revolute": _revolute,
    "prismatic": _prismatic,
    "cylindrical": _cylindrical,
    "universal": _universal,
    "spherical": _spherical,
    "planar": _planar,
    "free": _free,
    "bushing": _bushing,
}


#: Hinge types whose rz limits are drawn.
LIMIT_ARC_TYPES = ("revolute", "cylindrical")


def limits_points(lower, upper, s, segments=32):
    """The arc (radius 0.45 ``s``) from angle ``lower`` to ``upper`` (deg) in the xy plane, and
    a tick (0.32 to 0.58 ``s``) at each end: three point lists."""
    radius, inner, outer = 0.45 * s, 0.32 * s, 0.58 * s
    lo, hi = math.radians(min(lower, upper)), math.radians(max(lower, upper))
    arc = [(radius * math.cos(a), radius * math.sin(a), 0.0)
           for a in (lo + (hi - lo) * i / segments for i in range(segments + 1))]
    ticks = [[(r * math.cos(a), r * math.sin(a), 0.0) for r in (inner, outer)] for a in (lo, hi)]
    return [arc] + ticks


def limits_arc(obj, s, color):
    """The rz limits of hinge ``obj`` (see the module doc), or None when it shows none."""
    if obj.HingeType not in LIMIT_ARC_TYPES or not getattr(obj, "UseLimits", False):
        return None
    try:
        lower, upper = (float(getattr(obj, name).Value) for name in ("LowerLimitRz",
                                                                     "UpperLimitRz"))
    except AttributeError:
        return None
    sep = coin.SoSeparator()
    for points in limits_points(lower, upper, s):
        sep.addChild(glyphs.polyline(points, color, 3.0))
    return sep


def icon_file(hinge_type):
    """Icon of a hinge type: ``HingeRevolute.svg``."""
    return f"Hinge{hinge_type.capitalize()}.svg"


class ViewProviderHinge(ViewProvider):
    """A hinge: its type's symbol at the hinge frame."""

    ICON = "Hinge.svg"
    MODE = "Glyph"
    REDRAW_ON = frozenset({"HingeType", "InputMarker", "OutputMarker", "UseLimits",
                           "LowerLimitRz", "UpperLimitRz"})

    def icon_name(self):
        obj = getattr(self, "Object", None)
        return icon_file(obj.HingeType) if obj is not None else self.ICON

    def data_changed(self, obj, prop):
        if prop == "HingeType":
            self.ViewObject.signalChangeIcon()

    def build(self, settings):
        if not settings.glyphs:
            return None
        obj = self.Object
        ends = [getattr(m, "Placement", None) for m in (obj.InputMarker, obj.OutputMarker)]
        frames = [p for p in ends if p is not None]
        if not frames:
            return None
        color = self.color(glyphs.HINGE_COLOR)
        root = glyphs.group(settings.on_top)
        if len(frames) == 2 and \
                (frames[0].Base - frames[1].Base).Length > 1e-3 * settings.size:
            root.addChild(glyphs.polyline([frames[0].Base, frames[1].Base], color, 2.0,
                                          pattern=0x0F0F))
        symbol = coin.SoSeparator()
        symbol.addChild(glyphs.placement_transform(frames[-1]))
        symbol.addChild(HINGE_GLYPHS.get(obj.HingeType, _unknown)(settings.size, color))
        limits = limits_arc(obj, settings.size, color)
        if limits is not None:
            symbol.addChild(limits)
        root.addChild(symbol)
        return root
