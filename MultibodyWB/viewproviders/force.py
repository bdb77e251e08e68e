"""View provider of the Force: an arrow, a curved arrow or a spring, by the force's type.

Which symbol a type gets is the table :data:`FORCE_GLYPHS` (force type -> builder), one entry per
type of the solver's :data:`~MultibodyWB.solver.model.FORCE_TYPES`:

========================  ================================================================
point_force               an arrow along the force's direction, its head at the marker (the
                          point of application)
point_torque              a curved arrow about the torque's direction, with the direction's
                          axis, at the marker
spring_damper             a zigzag line between the two markers' origins
rotational_spring_damper  a flat spiral in the input marker's xy plane and a dashed line to
                          the output marker
nonlinear_bushing         a translucent cube in the output marker's axes (the axes the
                          bushing's stiffnesses act along) at the input marker's origin, a
                          coil through it along each axis, and a zigzag to the output
                          marker's origin when the two are apart
========================  ================================================================

A type without an entry (a law registered before its symbol) gets :func:`_generic`: a small
sphere at the input marker and a dashed line to the output marker, never an error.

The direction is the ``Direction`` property in global axes or in the input marker's
(``DirectionFrame``). The symbols have the size of the mechanism's ``GlyphSize``, not of the
load, which is a function of time. Magenta for loads, teal for spring-dampers; red while the force
has a problem.
"""

import FreeCAD
from pivy import coin

from . import glyphs
from .base import ViewProvider


def direction(obj):
    """The force's unit direction in global axes (None if it has none)."""
    d = FreeCAD.Vector(obj.Direction)
    marker = obj.InputMarker
    if obj.DirectionFrame == "marker" and marker is not None:
        d = marker.Placement.Rotation.multVec(d)
    if d.Length <= 0.0:
        return None
    return d.normalize()


def _point_force(obj, s, color):
    d = direction(obj)
    if d is None:
        return None
    point = obj.InputMarker.Placement.Base
    return glyphs.arrow(point - d * (2.0 * s), point, color, shaft=0.045 * s, head=0.5 * s)


def _point_torque(obj, s, color):
    d = direction(obj)
    if d is None:
        return None
    point = obj.InputMarker.Placement.Base
    sep = coin.SoSeparator()
    sep.addChild(glyphs.placement_transform(
        FreeCAD.Placement(point, FreeCAD.Rotation(FreeCAD.Vector(0, 0, 1), d))))
    sep.addChild(glyphs.curved_arrow(0.6 * s, color, z=0.3 * s, width=4.0))
    sep.addChild(glyphs.arrow((0, 0, 0), (0, 0, 1.4 * s), color, shaft=0.03 * s, head=0.3 * s))
    return sep


def _spring_damper(obj, s, color):
    if obj.OutputMarker is None:
        return None
    a, b = obj.InputMarker.Placement.Base, obj.OutputMarker.Placement.Base
    return glyphs.polyline(glyphs.zigzag_points(a, b, 0.4 * s), color, 3.0)


def _rotational_spring_damper(obj, s, color):
    frame = obj.InputMarker.Placement
    sep = coin.SoSeparator()
    spiral = coin.SoSeparator()
    spiral.addChild(glyphs.placement_transform(frame))
    spiral.addChild(glyphs.polyline(glyphs.spiral_points(0.1 * s, 0.6 * s), color, 3.0))
    sep.addChild(spiral)
    if obj.OutputMarker is not None:
        sep.addChild(glyphs.polyline([frame.Base, obj.OutputMarker.Placement.Base], color, 1.5,
                                     pattern=0x0F0F))
    return sep


def _nonlinear_bushing(obj, s, color):
    a = obj.InputMarker.Placement.Base
    axes = (obj.OutputMarker or obj.InputMarker).Placement.Rotation
    sep = coin.SoSeparator()
    cube = coin.SoSeparator()
    cube.addChild(glyphs.placement_transform(FreeCAD.Placement(a, axes)))
    cube.addChild(glyphs.box((0.5 * s, 0.5 * s, 0.5 * s), color, transparency=0.6))
    for axis in ((1, 0, 0), (0, 1, 0), (0, 0, 1)):       # a coil along each axis
        end = tuple(0.45 * s * x for x in axis)
        cube.addChild(glyphs.polyline(glyphs.zigzag_points(tuple(-x for x in end), end,
                                                           0.12 * s, teeth=5), color, 2.0))
    sep.addChild(cube)
    if obj.OutputMarker is not None:
        b = obj.OutputMarker.Placement.Base
        if (b - a).Length > 0.3 * s:
            sep.addChild(glyphs.polyline(glyphs.zigzag_points(a, b, 0.3 * s), color, 2.0))
    return sep


def _generic(obj, s, color):
    """Any type without a symbol of its own: a sphere at the input marker, a dashed line to the
    output marker."""
    a = obj.InputMarker.Placement.Base
    sep = coin.SoSeparator()
    sep.addChild(glyphs.sphere(0.15 * s, color, center=tuple(a)))
    output = getattr(obj.OutputMarker, "Placement", None)
    if output is not None:
        sep.addChild(glyphs.polyline([a, output.Base], color, 1.5, pattern=0x0F0F))
    return sep


#: Force type -> (function(force, size, colour) returning its symbol in global axes, colour).
FORCE_GLYPHS = {
    "point_force": (_point_force, glyphs.FORCE_COLOR),
    "point_torque": (_point_torque, glyphs.FORCE_COLOR),
    "spring_damper": (_spring_damper, glyphs.SPRING_COLOR),
    "rotational_spring_damper": (_rotational_spring_damper, glyphs.SPRING_COLOR),
    "nonlinear_bushing": (_nonlinear_bushing, glyphs.SPRING_COLOR),
}

#: The symbol of a type :data:`FORCE_GLYPHS` has no entry for.
GENERIC_GLYPH = (_generic, glyphs.SPRING_COLOR)


def icon_file(force_type):
    """Icon of a force type: ``ForcePointForce.svg``."""
    return "Force" + "".join(part.capitalize() for part in force_type.split("_")) + ".svg"


class ViewProviderForce(ViewProvider):
    """A force, torque or spring-damper: its type's symbol."""

    ICON = "Force.svg"
    MODE = "Glyph"
    REDRAW_ON = frozenset({"ForceType", "InputMarker", "OutputMarker", "Direction",
                           "DirectionFrame"})

    def icon_name(self):
        obj = getattr(self, "Object", None)
        return icon_file(obj.ForceType) if obj is not None else self.ICON

    def data_changed(self, obj, prop):
        if prop == "ForceType":
            self.ViewObject.signalChangeIcon()

    def build(self, settings):
        obj = self.Object
        if not settings.glyphs or getattr(obj.InputMarker, "Placement", None) is None:
            return None
        builder, normal = FORCE_GLYPHS.get(obj.ForceType, GENERIC_GLYPH)
        if obj.OutputMarker is not None and getattr(obj.OutputMarker, "Placement", None) is None:
            return None
        node = builder(obj, settings.size, self.color(normal))
        if node is None:
            return None
        root = glyphs.group(settings.on_top)
        root.addChild(node)
        return root
