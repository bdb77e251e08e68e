"""Coin3D (pivy) building blocks of the Multibody symbols: triads, arrows, cylinders, coils...

Every function returns a new ``coin.SoSeparator`` (or a node to put in one) in the caller's local
coordinates; lengths are in mm, the caller passes them already scaled to the model's size. The
view providers assemble these into the symbol of each object (the hinge table in
:mod:`.hinge`, the force table in :mod:`.force`).

Solid glyphs are drawn with back-face culling (``SoShapeHints`` SOLID, counter-clockwise): a
convex shape then looks right even where the depth test is off, which is how the symbols are
drawn on top of the solids they sit in (:func:`group` with ``on_top``; Coin's ``SoAnnotation``
renders its children last with the depth test disabled).

Only pivy and the standard library are used here: nothing depends on FreeCAD's document.
"""

import math

from pivy import coin

#: Colours (r, g, b in 0..1).
RED, GREEN, BLUE = (0.90, 0.10, 0.10), (0.10, 0.70, 0.10), (0.10, 0.25, 0.95)
AXIS_COLORS = (RED, GREEN, BLUE)
HINGE_COLOR = (1.00, 0.67, 0.00)      #: amber: hinges
FORCE_COLOR = (0.85, 0.10, 0.75)      #: magenta: applied forces and torques
SPRING_COLOR = (0.00, 0.60, 0.60)     #: teal: spring-dampers
BODY_COLOR = (0.25, 0.25, 0.25)       #: dark grey: centres of mass, body skeleton
PROBLEM_COLOR = (1.00, 0.00, 0.00)    #: pure red: an object with a Problem
LINE_COLOR = (0.35, 0.35, 0.35)       #: connection lines


def group(on_top=True):
    """The root of a symbol: an ``SoAnnotation`` (drawn over the solids) or an ``SoSeparator``."""
    node = coin.SoAnnotation() if on_top else coin.SoSeparator()
    hints = coin.SoShapeHints()
    hints.vertexOrdering = coin.SoShapeHints.COUNTERCLOCKWISE
    hints.shapeType = coin.SoShapeHints.SOLID
    node.addChild(hints)
    return node


def placement_transform(placement):
    """An ``SoTransform`` for a ``FreeCAD.Placement`` (mm)."""
    node = coin.SoTransform()
    set_placement(node, placement)
    return node


def set_placement(node, placement):
    """Set an ``SoTransform`` to a ``FreeCAD.Placement`` (quaternion x, y, z, w, as Coin's)."""
    base = placement.Base
    node.translation.setValue(base.x, base.y, base.z)
    q = placement.Rotation.Q
    node.rotation.setValue(q[0], q[1], q[2], q[3])


def material(color, transparency=0.0, glow=0.35):
    """An ``SoMaterial`` of ``color``; ``glow`` adds that much of it as emissive colour so the
    symbol keeps its colour on the dark side of the head light."""
    node = coin.SoMaterial()
    node.diffuseColor.setValue(*color)
    node.emissiveColor.setValue(*(glow * c for c in color))
    node.specularColor.setValue(0.2, 0.2, 0.2)
    node.transparency.setValue(transparency)
    return node


def _vec(v):
    return coin.SbVec3f(float(v[0]), float(v[1]), float(v[2]))


def _length(v):
    return math.sqrt(sum(float(x) * float(x) for x in v))


def polyline(points, color, width=2.0, pattern=None):
    """An unlit line through ``points`` (a sequence of 3-sequences).

    ``pattern`` is a 16-bit stipple pattern (``0x0F0F``: dashed), None for a solid line.
    """
    sep = coin.SoSeparator()
    light = coin.SoLightModel()
    light.model = coin.SoLightModel.BASE_COLOR
    base = coin.SoBaseColor()
    base.rgb.setValue(*color)
    style = coin.SoDrawStyle()
    style.lineWidth = width
    if pattern is not None:
        style.linePattern = pattern
    coords = coin.SoCoordinate3()
    coords.point.setValues(0, len(points), [_vec(p) for p in points])
    lines = coin.SoLineSet()
    lines.numVertices.setValue(len(points))
    for node in (light, base, style, coords, lines):
        sep.addChild(node)
    return sep


def _along(direction, child_nodes, at=(0.0, 0.0, 0.0)):
    """A separator that turns Coin's y axis (its primitives' axis) onto ``direction`` at ``at``."""
    sep = coin.SoSeparator()
    xf = coin.SoTransform()
    xf.translation.setValue(*(float(a) for a in at))
    if _length(direction) > 0.0:
        xf.rotation.setValue(coin.SbRotation(coin.SbVec3f(0, 1, 0), _vec(direction)))
    sep.addChild(xf)
    for node in child_nodes:
        sep.addChild(node)
    return sep


def _midpoint(a, b):
    return tuple((float(x) + float(y)) / 2.0 for x, y in zip(a, b))


def cylinder(radius, length, color, direction=(0, 0, 1), center=(0, 0, 0), transparency=0.0):
    """A solid cylinder of ``radius`` and ``length`` along ``direction``, centred at ``center``."""
    shape = coin.SoCylinder()
    shape.radius = radius
    shape.height = length
    return _along(direction, [material(color, transparency), shape], center)


def cone(radius, length, color, direction=(0, 0, 1), tip=(0, 0, 0), transparency=0.0):
    """A solid cone pointing along ``direction`` with its tip at ``tip``."""
    shape = coin.SoCone()
    shape.bottomRadius = radius
    shape.height = length
    d = _vec(direction)
    n = d.length() or 1.0
    center = [float(tip[i]) - d[i] / n * length / 2.0 for i in range(3)]
    return _along(direction, [material(color, transparency), shape], center)


def sphere(radius, color, center=(0, 0, 0), transparency=0.0):
    """A solid sphere."""
    sep = coin.SoSeparator()
    xf = coin.SoTranslation()
    xf.translation.setValue(*(float(c) for c in center))
    shape = coin.SoSphere()
    shape.radius = radius
    for node in (xf, material(color, transparency), shape):
        sep.addChild(node)
    return sep


def mesh(vertices, triangles, color, transparency=0.0):
    """A closed triangle mesh: ``vertices`` (n, 3), ``triangles`` (t, 3) indices into them
    (counter-clockwise seen from outside)."""
    sep = coin.SoSeparator()
    coords = coin.SoCoordinate3()
    coords.point.setValues(0, len(vertices), [[float(x) for x in v] for v in vertices])
    faces = coin.SoIndexedFaceSet()
    index = []
    for t in triangles:
        index += [int(t[0]), int(t[1]), int(t[2]), -1]
    faces.coordIndex.setValues(0, len(index), index)
    for node in (material(color, transparency), coords, faces):
        sep.addChild(node)
    return sep


def box(size, color, center=(0, 0, 0), transparency=0.0):
    """A solid box of ``size`` (dx, dy, dz) centred at ``center``, axes along the frame's."""
    sep = coin.SoSeparator()
    xf = coin.SoTranslation()
    xf.translation.setValue(*(float(c) for c in center))
    shape = coin.SoCube()
    shape.width, shape.height, shape.depth = (float(s) for s in size)
    for node in (xf, material(color, transparency), shape):
        sep.addChild(node)
    return sep


def arrow(start, end, color, shaft=None, head=None, transparency=0.0):
    """A solid arrow from ``start`` to ``end`` (the head at ``end``).

    ``shaft`` is the shaft radius and ``head`` the head length (defaults: 3 % and 25 % of the
    length).
    """
    d = [float(e) - float(s) for s, e in zip(start, end)]
    length = _length(d)
    sep = coin.SoSeparator()
    if length <= 0.0:
        return sep
    head = head if head is not None else 0.25 * length
    head = min(head, 0.6 * length)
    shaft = shaft if shaft is not None else 0.03 * length
    u = [x / length for x in d]
    shaft_end = [float(e) - u[i] * head for i, e in enumerate(end)]
    sep.addChild(cylinder(shaft, length - head, color, d, _midpoint(start, shaft_end),
                          transparency))
    sep.addChild(cone(2.6 * shaft, head, color, d, end, transparency))
    return sep


def double_arrow(center, direction, length, color, shaft=None, transparency=0.0):
    """A two-headed arrow of total ``length`` along ``direction`` centred at ``center``."""
    n = _length(direction) or 1.0
    u = [float(x) / n for x in direction]
    sep = coin.SoSeparator()
    for sign in (1.0, -1.0):
        end = [float(c) + sign * u[i] * length / 2.0 for i, c in enumerate(center)]
        sep.addChild(arrow(center, end, color, shaft=shaft, head=0.3 * length / 2.0 + 1e-9,
                           transparency=transparency))
    return sep


def arc_points(radius, start_angle, sweep, z=0.0, n=32):
    """Points of an arc in the xy plane (angles in radians)."""
    return [(radius * math.cos(start_angle + sweep * i / n),
             radius * math.sin(start_angle + sweep * i / n), z) for i in range(n + 1)]


def curved_arrow(radius, color, z=0.0, sweep=1.5 * math.pi, width=3.0, head=None,
                 transparency=0.0):
    """A curved arrow about the z axis (a rotation or a torque about z, right-handed)."""
    points = arc_points(radius, 0.0, sweep, z)
    sep = coin.SoSeparator()
    sep.addChild(polyline(points, color, width))
    tangent = (-math.sin(sweep), math.cos(sweep), 0.0)
    head = head if head is not None else 0.45 * radius
    tip = [points[-1][i] + tangent[i] * head * 0.5 for i in range(3)]
    sep.addChild(cone(0.35 * head, head, color, tangent, tip, transparency))
    return sep


def helix_points(start, end, radius, turns, n_per_turn=16):
    """Points of a coil of ``turns`` from ``start`` to ``end`` around the line joining them."""
    axis = [float(e) - float(s) for s, e in zip(start, end)]
    length = _length(axis)
    if length <= 0.0:
        return [tuple(start), tuple(end)]
    u = [a / length for a in axis]
    helper = (1.0, 0.0, 0.0) if abs(u[0]) < 0.9 else (0.0, 1.0, 0.0)
    v = _cross(u, helper)
    nv = _length(v)
    v = [x / nv for x in v]
    w = _cross(u, v)
    n = max(int(turns * n_per_turn), 2)
    points = []
    for i in range(n + 1):
        t = i / n
        phi = 2.0 * math.pi * turns * t
        # the coil starts and ends on the axis, so it meets the markers
        r = radius if 0 < i < n else 0.0
        points.append(tuple(float(start[k]) + axis[k] * t +
                            r * (math.cos(phi) * v[k] + math.sin(phi) * w[k]) for k in range(3)))
    return points


def zigzag_points(start, end, width, teeth=8, lead=0.15):
    """Points of a zigzag spring from ``start`` to ``end`` (straight leads of ``lead`` * length)."""
    axis = [float(e) - float(s) for s, e in zip(start, end)]
    length = _length(axis)
    if length <= 0.0:
        return [tuple(start), tuple(end)]
    u = [a / length for a in axis]
    helper = (0.0, 0.0, 1.0) if abs(u[2]) < 0.9 else (1.0, 0.0, 0.0)
    side = _cross(u, helper)
    ns = _length(side)
    side = [x / ns for x in side]

    def at(t, offset=0.0):
        return tuple(float(start[k]) + axis[k] * t + side[k] * offset for k in range(3))

    points = [at(0.0), at(lead)]
    for i in range(teeth):
        t = lead + (1.0 - 2.0 * lead) * (i + 0.5) / teeth
        points.append(at(t, width / 2.0 if i % 2 == 0 else -width / 2.0))
    points += [at(1.0 - lead), at(1.0)]
    return points


def spiral_points(inner, outer, turns=2.5, n_per_turn=24, z=0.0):
    """Points of a flat spiral in the xy plane (a rotational spring)."""
    n = max(int(turns * n_per_turn), 2)
    return [((inner + (outer - inner) * i / n) * math.cos(2 * math.pi * turns * i / n),
             (inner + (outer - inner) * i / n) * math.sin(2 * math.pi * turns * i / n), z)
            for i in range(n + 1)]


def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def text(label, position, color, size=12):
    """A screen-aligned text (``SoText2``) at ``position``."""
    sep = coin.SoSeparator()
    xf = coin.SoTranslation()
    xf.translation.setValue(*(float(p) for p in position))
    base = coin.SoBaseColor()
    base.rgb.setValue(*color)
    font = coin.SoFont()
    font.size = size
    node = coin.SoText2()
    node.string = label
    for child in (xf, base, font, node):
        sep.addChild(child)
    return sep


def triad(size, labels=False, problem=False):
    """A frame's axes: x red, y green, z blue, each a line with a cone at its tip.

    ``labels`` adds the letters x, y, z at the tips; ``problem`` a red ball at the origin.
    """
    sep = coin.SoSeparator()
    for axis, (name, color) in enumerate(zip("xyz", AXIS_COLORS)):
        tip = [0.0, 0.0, 0.0]
        tip[axis] = size
        sep.addChild(polyline([(0.0, 0.0, 0.0), tip], color, 4.0))
        sep.addChild(cone(0.08 * size, 0.25 * size, color, tip, tip))
        if labels:
            at = [0.0, 0.0, 0.0]
            at[axis] = 1.12 * size
            sep.addChild(text(name, at, color))
    if problem:
        sep.addChild(sphere(0.12 * size, PROBLEM_COLOR))
    return sep


def center_of_mass(radius):
    """The centre-of-mass symbol: a ball of black and white octants."""
    sep = coin.SoSeparator()
    n = 6                                      # subdivisions of an octant's two angles
    for octant in range(8):
        sx, sy, sz = (1 if octant & 1 else -1), (1 if octant & 2 else -1), (1 if octant & 4 else -1)
        color = (0.05, 0.05, 0.05) if (sx * sy * sz) > 0 else (0.95, 0.95, 0.95)
        points, faces = [], []
        for i in range(n + 1):
            theta = 0.5 * math.pi * i / n      # from the z pole
            for j in range(n + 1):
                phi = 0.5 * math.pi * j / n
                points.append((sx * radius * math.sin(theta) * math.cos(phi),
                               sy * radius * math.sin(theta) * math.sin(phi),
                               sz * radius * math.cos(theta)))
        for i in range(n):
            for j in range(n):
                a, b = i * (n + 1) + j, (i + 1) * (n + 1) + j
                quad = [a, b, b + 1, a + 1]
                if sx * sy * sz < 0:            # keep the faces' outward (counter-clockwise) side
                    quad.reverse()
                faces += quad + [-1]
        oct_sep = coin.SoSeparator()
        coords = coin.SoCoordinate3()
        coords.point.setValues(0, len(points), [_vec(p) for p in points])
        shape = coin.SoIndexedFaceSet()
        shape.coordIndex.setValues(0, len(faces), faces)
        for node in (material(color, glow=0.5), coords, shape):
            oct_sep.addChild(node)
        sep.addChild(oct_sep)
    return sep
