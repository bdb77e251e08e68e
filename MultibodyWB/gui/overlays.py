"""What the player draws over the solids: force arrows scaled by magnitude, traces of points.

Coin nodes added to the 3D view's scene graph while the player is open (:class:`Overlay`), and
removed when it closes. Each arrow is one unit arrow (along Coin's y axis, length 1) under an
``SoTransform`` that the player sets every frame: translation to the point of application,
rotation onto the force's direction, scale (radius, length, radius). Updating a frame changes
three fields per arrow, nothing is rebuilt. Each arrow sits in its own ``SoSwitch`` (off: a
zero force, or a contact not touching); the arrows of a kind (:data:`GROUPS`: hinges' reactions,
contact forces) share one switch, the player's check box.
"""

from __future__ import annotations

import math

from pivy import coin

#: Colour of the reaction-force arrows (cyan: apart from the amber hinges and magenta forces),
#: and of the traces.
FORCE_COLOR = (0.0, 0.8, 0.9)
#: Colour of the contact-force arrows (contacts and gear teeth): red-orange.
CONTACT_COLOR = (1.0, 0.25, 0.05)
#: Kinds of arrows: group name -> colour.
GROUPS = {"reactions": FORCE_COLOR, "contacts": CONTACT_COLOR}
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
    """Arrows and traces in one separator of the view's scene graph.

    Attributes
    ----------
    switches : dict
        Group (:data:`GROUPS`) -> the ``SoSwitch`` of its arrows (the check box).
    arrows, contact_arrows : dict
        Name -> ``SoTransform`` of each reaction arrow (hinge labels) and contact arrow
        (contact and coupler labels).
    arrow_switches : dict
        (group, name) -> the ``SoSwitch`` of one arrow (off while its force is zero).
    """

    def __init__(self, view):
        self.view = view
        self.root = coin.SoAnnotation()        # drawn over the solids: bearings are inside
        self.root.setName("MultibodyPlayerOverlay")
        self.switches = {}
        self._arrows = {}
        self.arrow_switches = {}
        for group in GROUPS:
            switch = coin.SoSwitch()
            switch.whichChild = coin.SO_SWITCH_ALL
            self.root.addChild(switch)
            self.switches[group] = switch
            self._arrows[group] = {}
        self.trace_switch = coin.SoSwitch()
        self.trace_switch.whichChild = coin.SO_SWITCH_ALL
        self.root.addChild(self.trace_switch)
        self.scene = view.getSceneGraph()
        self.scene.addChild(self.root)

    @property
    def arrows(self):
        return self._arrows["reactions"]

    @property
    def contact_arrows(self):
        return self._arrows["contacts"]

    # -- arrows ------------------------------------------------------------------------------------
    def set_arrows(self, names, group="reactions"):
        """One arrow per name (hinges; contacts and couplers for ``group="contacts"``); the
        group's old ones go."""
        switch = self.switches[group]
        switch.removeAllChildren()
        self._arrows[group] = {}
        for key in [k for k in self.arrow_switches if k[0] == group]:
            del self.arrow_switches[key]
        for name in names:
            sep, transform = unit_arrow(GROUPS[group])
            one = coin.SoSwitch()
            one.whichChild = coin.SO_SWITCH_ALL
            one.addChild(sep)
            switch.addChild(one)
            self._arrows[group][name] = transform
            self.arrow_switches[(group, name)] = one

    def update_arrow(self, name, point, vector, length_per_unit, radius, group="reactions"):
        """Put arrow ``name`` at ``point`` (mm) along ``vector`` (any unit) with a length of
        ``length_per_unit * |vector|`` mm and a shaft of ``radius`` mm; zero hides it."""
        transform = self._arrows[group][name]
        one = self.arrow_switches[(group, name)]
        magnitude = math.sqrt(sum(float(v) * float(v) for v in vector))
        length = magnitude * length_per_unit
        transform.translation = tuple(float(p) for p in point)
        if not length > 1e-9:
            one.whichChild = coin.SO_SWITCH_NONE
            return
        one.whichChild = coin.SO_SWITCH_ALL
        transform.rotation = coin.SbRotation(coin.SbVec3f(0.0, 1.0, 0.0),
                                             coin.SbVec3f(*(float(v) / magnitude for v in vector)))
        transform.scaleFactor = (radius, length, radius)

    def hide_arrow(self, name, group="reactions"):
        """Hide one arrow (a contact not touching) until :meth:`update_arrow` shows it."""
        self.arrow_switches[(group, name)].whichChild = coin.SO_SWITCH_NONE

    def arrow_shown(self, name, group="reactions"):
        """Whether arrow ``name`` is drawn: its group's switch and its own are on."""
        return (self.switches[group].whichChild.getValue() == coin.SO_SWITCH_ALL
                and self.arrow_switches[(group, name)].whichChild.getValue()
                == coin.SO_SWITCH_ALL)

    def show_arrows(self, on, group="reactions"):
        self.switches[group].whichChild = coin.SO_SWITCH_ALL if on else coin.SO_SWITCH_NONE

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
