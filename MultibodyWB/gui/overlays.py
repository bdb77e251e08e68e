"""What the player draws over the solids: force arrows scaled by magnitude, traces of points.

Coin nodes added to the 3D view's scene graph while the player is open (:class:`Overlay`), and
removed when it closes. Each arrow is one unit arrow (along Coin's y axis, length 1) under an
``SoTransform`` that the player sets every frame: translation to the point of application,
rotation onto the force's direction, scale (radius, length, radius). Updating a frame changes
three fields per arrow, nothing is rebuilt.
"""

from __future__ import annotations

import math

from pivy import coin

#: Colour of the reaction-force arrows (cyan: apart from the amber hinges and magenta forces),
#: and of the traces.
FORCE_COLOR = (0.0, 0.8, 0.9)
TRACE_COLORS = ((0.1, 0.45, 0.95), (0.1, 0.7, 0.3), (0.85, 0.15, 0.6), (0.55, 0.35, 0.1))


def _material(color):
    m = coin.SoMaterial()
    m.diffuseColor = color
    m.emissiveColor = tuple(0.4 * c for c in color)
    return m


def unit_arrow(color):
    """``(separator, transform)``: an arrow from the origin to (0, 1, 0) behind a transform."""
    sep = coin.SoSeparator()
    transform = coin.SoTransform()
    sep.addChild(transform)
    sep.addChild(_material(color))
    shaft = coin.SoSeparator()
    t = coin.SoTranslation()
    t.translation = (0.0, 0.375, 0.0)
    cyl = coin.SoCylinder()
    cyl.radius = 1.0
    cyl.height = 0.75
    shaft.addChild(t)
    shaft.addChild(cyl)
    head = coin.SoSeparator()
    t = coin.SoTranslation()
    t.translation = (0.0, 0.875, 0.0)
    cone = coin.SoCone()
    cone.bottomRadius = 2.5
    cone.height = 0.25
    head.addChild(t)
    head.addChild(cone)
    sep.addChild(shaft)
    sep.addChild(head)
    return sep, transform


class Overlay:
    """Arrows and traces in one separator of the view's scene graph."""

    def __init__(self, view):
        self.view = view
        self.root = coin.SoAnnotation()        # drawn over the solids: bearings are inside
        self.root.setName("MultibodyPlayerOverlay")
        self.arrow_switch = coin.SoSwitch()
        self.arrow_switch.whichChild = coin.SO_SWITCH_ALL
        self.trace_switch = coin.SoSwitch()
        self.trace_switch.whichChild = coin.SO_SWITCH_ALL
        self.root.addChild(self.arrow_switch)
        self.root.addChild(self.trace_switch)
        self.arrows = {}
        self.scene = view.getSceneGraph()
        self.scene.addChild(self.root)

    # -- arrows ------------------------------------------------------------------------------------
    def set_arrows(self, names):
        """One arrow per name (hinges); the old ones go."""
        self.arrow_switch.removeAllChildren()
        self.arrows = {}
        for name in names:
            sep, transform = unit_arrow(FORCE_COLOR)
            self.arrow_switch.addChild(sep)
            self.arrows[name] = transform

    def update_arrow(self, name, point, vector, length_per_unit, radius):
        """Put arrow ``name`` at ``point`` (mm) along ``vector`` (any unit) with a length of
        ``length_per_unit * |vector|`` mm and a shaft of ``radius`` mm; zero hides it."""
        transform = self.arrows[name]
        magnitude = math.sqrt(sum(float(v) * float(v) for v in vector))
        length = magnitude * length_per_unit
        transform.translation = tuple(float(p) for p in point)
        if length <= 1e-9:
            transform.scaleFactor = (1e-6, 1e-6, 1e-6)
            return
        transform.rotation = coin.SbRotation(coin.SbVec3f(0.0, 1.0, 0.0),
                                             coin.SbVec3f(*(float(v) / magnitude for v in vector)))
        transform.scaleFactor = (radius, length, radius)

    def show_arrows(self, on):
        self.arrow_switch.whichChild = coin.SO_SWITCH_ALL if on else coin.SO_SWITCH_NONE

    # -- traces ------------------------------------------------------------------------------------
    def set_traces(self, paths):
        """Lines through the points of each path ((N, 3) arrays, mm)."""
        self.trace_switch.removeAllChildren()
        for k, points in enumerate(paths):
            sep = coin.SoSeparator()
            style = coin.SoDrawStyle()
            style.lineWidth = 2.0
            light = coin.SoLightModel()
            light.model = coin.SoLightModel.BASE_COLOR
            sep.addChild(light)
            sep.addChild(style)
            sep.addChild(_material(TRACE_COLORS[k % len(TRACE_COLORS)]))
            coords = coin.SoCoordinate3()
            coords.point.setValues(0, len(points), [tuple(float(x) for x in p) for p in points])
            line = coin.SoLineSet()
            line.numVertices.setValue(len(points))
            sep.addChild(coords)
            sep.addChild(line)
            self.trace_switch.addChild(sep)

    def remove(self):
        """Take everything out of the scene graph."""
        if self.root is not None:
            self.scene.removeChild(self.root)
            self.root = None
