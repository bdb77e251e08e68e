"""What the panels draw over the solids: the player's force arrows scaled by magnitude and
traces of points (:class:`Overlay`), the interference check's overlapping volumes
(:class:`ShapesOverlay`).

Coin nodes added to the 3D view's scene graph while the player (or a panel) is open
(:class:`Overlay`), and removed when it closes: nothing of the document changes. Each arrow is one
unit arrow (along Coin's y axis, length 1) under an ``SoTransform`` that the player sets every
frame: translation to the point of application, rotation onto the force's direction, scale
(radius, length, radius). Updating a frame changes three fields per arrow, nothing is rebuilt.
Each arrow sits in its own ``SoSwitch`` (off: a zero force, or a contact not touching); the
arrows of a kind (:data:`GROUPS`: hinges' reactions, contact forces) share one switch, the
player's check box.
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


#: Colours of the overlapping volumes (red) and of the one picked in the list (bright red).
OVERLAP_COLOR = (0.85, 0.1, 0.1)
PICKED_COLOR = (1.0, 0.0, 0.0)


class ShapesOverlay:
    """Shapes (OCC solids, global mm) drawn over the solids: translucent faces, opaque edges.

    Drawn in an ``SoAnnotation`` (after the scene, not hidden by the solids they sit in). One
    shape can be :meth:`pick`-ed: drawn opaque with thicker edges, the others fainter.
    """

    def __init__(self, view, name="MultibodyShapesOverlay"):
        self.view = view
        self.root = coin.SoAnnotation()
        self.root.setName(name)
        self.items = []          # (material, line style) per shape
        self.scene = view.getSceneGraph()
        self.scene.addChild(self.root)

    def set_shapes(self, shapes):
        """Draw ``shapes`` (the old ones go)."""
        self.root.removeAllChildren()
        self.items = []
        for shape in shapes:
            self.root.addChild(self._node(shape))
        self.pick(None)

    def _node(self, shape):
        box = shape.BoundBox
        size = max(box.DiagonalLength, 1e-6)
        points, triangles = shape.tessellate(max(1e-3 * size, 1e-4))
        sep = coin.SoSeparator()
        material = coin.SoMaterial()
        sep.addChild(material)
        hints = coin.SoShapeHints()
        hints.vertexOrdering = coin.SoShapeHints.COUNTERCLOCKWISE
        hints.shapeType = coin.SoShapeHints.UNKNOWN_SHAPE_TYPE
        sep.addChild(hints)
        coords = coin.SoCoordinate3()
        coords.point.setValues(0, len(points), [(p.x, p.y, p.z) for p in points])
        sep.addChild(coords)
        faces = coin.SoIndexedFaceSet()
        index = []
        for a, b, c in triangles:
            index.extend((a, b, c, -1))
        faces.coordIndex.setValues(0, len(index), index)
        sep.addChild(faces)
        edges = coin.SoSeparator()
        light = coin.SoLightModel()
        light.model = coin.SoLightModel.BASE_COLOR
        style = coin.SoDrawStyle()
        edge_material = coin.SoMaterial()
        edge_material.diffuseColor = (0.35, 0.0, 0.0)
        edges.addChild(light)
        edges.addChild(style)
        edges.addChild(edge_material)
        for edge in shape.Edges:
            line = [tuple(p) for p in edge.discretize(Deflection=max(1e-3 * size, 1e-4))]
            if len(line) < 2:
                continue
            c = coin.SoCoordinate3()
            c.point.setValues(0, len(line), line)
            strip = coin.SoLineSet()
            strip.numVertices.setValue(len(line))
            edges.addChild(c)
            edges.addChild(strip)
        sep.addChild(edges)
        self.items.append((material, style))
        return sep

    def pick(self, index):
        """Show shape ``index`` (None: none) as the picked one."""
        for k, (material, style) in enumerate(self.items):
            picked = k == index
            color = PICKED_COLOR if picked else OVERLAP_COLOR
            material.diffuseColor = color
            material.emissiveColor = tuple(0.5 * c for c in color)
            material.transparency = 0.1 if picked else (0.4 if index is None else 0.7)
            style.lineWidth = 3.0 if picked else 1.5

    def remove(self):
        """Take everything out of the scene graph."""
        if self.root is not None:
            self.scene.removeChild(self.root)
            self.root = None
