"""The Contact: a shape on one body's marker touching a shape on another body's (or the ground's).

Each side is one of the solver's shapes (:data:`~MultibodyWB.solver.model.CONTACT_SHAPES`) placed
at its marker: a ``sphere`` (``Radius``, centred on the marker), a ``plane`` (the marker's
xy plane, its z axis the outward normal, the solid below), a ``box`` (``Size``: edge lengths
along the marker's axes, centred), a ``cylinder`` (``Radius``, ``Length``, centred, its axis
the marker's z) or a ``convex`` shape: the convex hull of the vertices of a tessellation of the
solid the marker is attached to (``Tolerance``: the tessellation's largest distance from the
surface), computed from the drawing at each export (:func:`hull_points`), so that the shape
follows the solid; a model imported from a file keeps its points in ``Points`` instead (its
bodies' solids are stand-ins). The pairs the solver supports are
:data:`~MultibodyWB.solver.model.CONTACT_PAIRS` (either order). The law (see
:mod:`MultibodyWB.solver.elements.forces.contact`): a Hunt-Crossley normal force
``k depth^e (1 + alpha depth')`` whose damping follows from a ``Restitution`` at an
``ImpactSpeed``, and regularised Coulomb friction.

Units: radii, lengths and sizes are FreeCAD lengths (mm), the speeds FreeCAD speeds (mm/s);
``Stiffness`` is a plain number in N/m^Exponent (SI: its unit depends on the exponent, which no
FreeCAD unit can follow), ``Exponent``, ``Restitution`` and the friction coefficients are numbers.

What a picked face is (:func:`recognise`) and the stiffness a new contact gets
(:func:`default_stiffness`) are here too: the Contact command uses them, and so can macros.
"""

import math
from dataclasses import dataclass

import FreeCAD
import numpy as np

from . import units
from .base import EDITABLE, HIDDEN, READ_ONLY, BaseProxy, Prop, type_of
from .body import body_mass_properties, solid_placement, solid_shape
from ..solver.api import CONTACT_PAIRS, CONTACT_SHAPES

TYPE = "Multibody::Contact"

#: Shape field of the solver -> the property suffix holding it (``InputRadius``...); a convex
#: shape's points come from its solid's tessellation at ``Tolerance`` (or its ``Points``).
SHAPE_FIELDS = {"radius": "Radius", "radius2": "Radius2", "length": "Length", "size": "Size",
                "points": "Tolerance"}
#: Keywords of a shape's dimensions (``make_contact``) -> the property suffix they set.
DIMENSION_PROPERTIES = {"radius": "Radius", "radius2": "Radius2", "length": "Length", "size": "Size",
                        "tolerance": "Tolerance", "points": "Points"}

#: Model (message) field -> property, for the solver's problems.
FIELDS = {"Input": "InputMarker", "Output": "OutputMarker", "Name": "Label"}

#: Young's modulus (Pa) and Poisson's ratio of a body without a material card that gives them
#: (steel).
DEFAULT_YOUNGS_MODULUS = 210e9
DEFAULT_POISSON_RATIO = 0.3
#: Static depth (m) the default stiffness of a box or cylinder gives under its body's weight.
STATIC_DEPTH = 1e-5
#: Candidate points sharing the weight of a box or cylinder resting on a plane: a box's four
#: lower corners, a cylinder's two rim points.
#: A convex hull rests on a facet: three vertices (a flat face of the solid, with more vertices,
#: sinks less).
POINTS_AT_REST = {"box": 4, "cylinder": 2, "convex": 3, "cone": 2, "torus": 1}
#: Default tessellation tolerance of a convex shape: this fraction of its solid's bounding-box
#: diagonal.
TOLERANCE_FRACTION = 0.01
#: Largest angle (rad) between the normals of a tessellation's neighbouring triangles (the
#: linear tolerance decides on curved faces; this only keeps large flat-ish faces meshed).
ANGULAR_DEFLECTION = 0.5


def _side_props(side, title):
    group = f"{side} shape"
    return (
        Prop(f"{side}Shape", "App::PropertyEnumeration", group,
             f"Shape on the {title} marker: sphere (centred on it), plane (its xy plane, z the "
             "outward normal, the solid below), box (centred, edges along its axes), cylinder "
             "(centred, axis its z), convex (the convex hull of the marker's solid, from its "
             "tessellation), cone (a frustum, centred, axis its z) or torus (centred, axis its "
             "z)", default="sphere" if side == "Input" else "plane",
             enum=tuple(CONTACT_SHAPES)),
        Prop(f"{side}Radius", "App::PropertyLength", group,
             f"Radius of the {title} sphere or cylinder; a cone's radius at its -z end; a "
             "torus's centre-circle radius [mm]", default=0.0, unit="mm", si="m"),
        Prop(f"{side}Radius2", "App::PropertyLength", group,
             f"The {title} cone's radius at its +z end (0: pointed); a torus's tube radius [mm]",
             default=0.0, unit="mm", si="m"),
        Prop(f"{side}Length", "App::PropertyLength", group,
             f"Length of the {title} cylinder or cone along its axis (the marker's z) [mm]",
             default=0.0,
             unit="mm", si="m"),
        Prop(f"{side}Size", "App::PropertyVectorDistance", group,
             f"Edge lengths of the {title} box along the marker's x, y, z [mm]",
             default=(0.0, 0.0, 0.0), unit="mm", si="m"),
        Prop(f"{side}Tolerance", "App::PropertyLength", group,
             f"Tessellation tolerance of the {title} convex shape: the largest distance of the "
             "tessellation from the solid's surface; its vertices' convex hull is the shape "
             "[mm]", default=0.0, unit="mm", si="m"),
        Prop(f"{side}Points", "App::PropertyVectorList", group,
             f"Points of the {title} convex shape in its marker's frame [mm], when they are given "
             "(a model imported from a file: its bodies' solids are stand-ins); else the shape "
             "is the hull of the marker's solid", mode=READ_ONLY),
    )


class ContactProxy(BaseProxy):
    """Proxy of a Contact."""

    Type = TYPE
    KIND = "Contact"
    VERSION = 1
    PROPERTIES = (
        Prop("InputMarker", "App::PropertyLink", "Contact",
             "Marker of the input (moving) body's shape"),
        Prop("OutputMarker", "App::PropertyLink", "Contact",
             "Marker of the output body's (or the ground's) shape"),
    ) + _side_props("Input", "input") + _side_props("Output", "output") + (
        Prop("Stiffness", "App::PropertyFloat", "Normal force",
             "Contact stiffness k of N = k depth^Exponent (1 + alpha depth') [N/m^Exponent, "
             "SI: N/m^1.5 for the exponent 1.5]", default=0.0),
        Prop("StiffnessRule", "App::PropertyString", "Normal force",
             "How the stiffness was chosen when the contact was made", default="",
             mode=READ_ONLY),
        Prop("Exponent", "App::PropertyFloat", "Normal force",
             "Exponent e of the depth in the normal force (1.5: Hertz's sphere; 1 to 3)",
             default=1.5),
        Prop("Restitution", "App::PropertyFloat", "Normal force",
             "Coefficient of restitution at the impact speed (above 0, at most 1; 1: no "
             "damping)", default=0.5),
        Prop("ImpactSpeed", "App::PropertySpeed", "Normal force",
             "Impact speed at which the restitution holds (the damping is solved from it) "
             "[mm/s]", default=1000.0, unit="mm/s", si="m/s"),
        Prop("StaticFriction", "App::PropertyFloat", "Friction",
             "Static friction coefficient, reached at the stiction velocity (0: frictionless)",
             default=0.0),
        Prop("DynamicFriction", "App::PropertyFloat", "Friction",
             "Dynamic (sliding) friction coefficient, from twice the stiction velocity on",
             default=0.0),
        Prop("StictionVelocity", "App::PropertySpeed", "Friction",
             "Slip speed at which the static coefficient is reached (a body held by friction "
             "creeps below it) [mm/s]", default=1.0, unit="mm/s", si="m/s"),
    )

    def onChanged(self, obj, prop):
        super().onChanged(obj, prop)
        if prop in ("InputShape", "OutputShape") and "OutputSize" in obj.PropertiesList:
            self.update_visibility(obj)

    def update_visibility(self, obj):
        """Show the dimensions each side's shape uses (:data:`CONTACT_SHAPES`), hide the others."""
        present = set(obj.PropertiesList)
        for side in ("Input", "Output"):
            if f"{side}Shape" not in present:
                continue
            used = CONTACT_SHAPES.get(getattr(obj, f"{side}Shape"), ((), ""))[0]
            for name, suffix in SHAPE_FIELDS.items():
                prop = side + suffix
                if prop in present:
                    obj.setEditorMode(prop, EDITABLE if name in used else HIDDEN)
            if side + "Points" in present:
                obj.setEditorMode(side + "Points", READ_ONLY if "points" in used else HIDDEN)

    def field_property(self, obj, field):
        return FIELDS.get(field, field)

    def check(self, obj):
        problems = []
        for prop in ("InputMarker", "OutputMarker"):
            marker = getattr(obj, prop)
            if marker is None:
                problems.append((prop, "is not set: a contact joins the shapes of two markers"))
            elif type_of(marker) != "Multibody::Marker":
                problems.append((prop, f"'{marker.Label}' is not a Multibody marker"))
        for side in ("Input", "Output"):
            if getattr(obj, f"{side}Shape") != "convex" or \
                    type_of(getattr(obj, f"{side}Marker")) != "Multibody::Marker":
                continue
            marker = getattr(obj, f"{side}Marker")
            solid = marker_solid(marker)
            if len(getattr(obj, f"{side}Points")):
                continue
            if solid is not None and solid_shape(solid) is not None:
                tolerance = float(getattr(obj, f"{side}Tolerance").Value)
                if not tolerance > 0.0:
                    problems.append((f"{side}Tolerance", f"{tolerance:g} mm; give the "
                                     "tessellation a positive tolerance (e.g. "
                                     f"{default_tolerance(solid):.3g} mm)"))
            else:
                problems.append((f"{side}Marker", f"'{marker.Label}' is on no solid: a convex "
                                 "shape is the hull of its marker's solid; attach it to one"))
        return problems


def shape_fields(obj, side):
    """The shape of ``side`` ("Input", "Output") as ``(type, {field: value in mm})``; a convex
    shape's ``points`` (n, 3) are its hull's vertices (:func:`hull_points`).

    Raises ValueError (from :func:`hull_points`) when a convex shape has no points."""
    kind = getattr(obj, f"{side}Shape")
    used = CONTACT_SHAPES.get(kind, ((), ""))[0]
    values = {}
    for name in used:
        if name == "points":
            values[name] = hull_points(obj, side)
            continue
        value = getattr(obj, side + SHAPE_FIELDS[name])
        values[name] = tuple(value) if name == "size" else float(value.Value)
    return kind, values


# -- convex shapes: the hull of a tessellation ---------------------------------------------------
def marker_solid(marker):
    """The solid a marker is attached to (its face, edge or the whole solid), or None."""
    from .marker import support_property
    if marker is None:
        return None
    references = getattr(marker, support_property(marker), None) or []
    return references[0][0] if references else None


def marker_sub(marker):
    """The face (``"Face8"``) of :func:`marker_solid` the marker was picked on, else ""."""
    solid = marker_solid(marker)
    name, _, sub = str(getattr(marker, "PickedElement", "") or "").partition(".")
    return sub if solid is not None and name == solid.Name else ""


def contact_solid(solid, sub=""):
    """The solid whose convex hull a convex shape on ``solid`` is, picked by ``sub``: ``(shape,
    words)`` (global, mm), ``(None, "")`` when ``solid`` has no solid.

    A Part Fuse or Cut gives a compound: a compound of one solid is that solid (``words`` "");
    of several, the solid that face ``sub`` belongs to (``"solid 2 of 3, the one of Face8"``),
    or, picked whole, all of them together (``"its 3 solids together"``: their common hull,
    which fills the gaps between them; the words say so where the shape is shown).
    """
    shape = solid_shape(solid)
    solids = list(shape.Solids) if shape is not None else []
    if not solids:
        return None, ""
    if len(solids) == 1:
        return solids[0], ""
    if sub.startswith("Face"):
        try:
            face = shape.getElement(sub)
        except Exception:  # noqa: BLE001 - a missing element: the solids together
            face = None
        for i, one in enumerate(solids if face is not None else (), 1):
            if any(f.isSame(face) for f in one.Faces):
                return one, f"solid {i} of {len(solids)}, the one of {sub}"
    # the compound itself (Part.makeCompound of its solids ends the process on FreeCAD 1.0.0
    # in console mode): its solids, and whatever else it holds, are what the drawing shows
    return shape, f"its {len(solids)} solids together"


def centre_of_mass(shape):
    """The centre of mass (FreeCAD.Vector, mm) of a solid or a compound of solids (which has no
    ``CenterOfMass`` of its own in FreeCAD 0.20): the solids' centres weighted by volume."""
    solids = list(shape.Solids) if shape.ShapeType == "Compound" else [shape]
    volume = sum(s.Volume for s in solids)
    total = FreeCAD.Vector()
    for s in solids:
        total += s.CenterOfMass * (s.Volume / volume)
    return total


def default_tolerance(solid, sub=""):
    """The default tessellation tolerance (mm) of a convex shape on ``solid`` (picked by ``sub``,
    :func:`contact_solid`): :data:`TOLERANCE_FRACTION` of its bounding-box diagonal (the tight
    box: a B-spline's usual one is its control points')."""
    shape = contact_solid(solid, sub)[0]
    if shape is None:
        return 0.0
    try:
        box = shape.copy().optimalBoundingBox()     # a copy: without any mesh of the shape
    except Exception:  # noqa: BLE001 - a FreeCAD without it: the usual box
        box = shape.BoundBox
    return TOLERANCE_FRACTION * box.DiagonalLength


def tessellation(shape, tolerance):
    """The vertices (n, 3) (mm, global) of a tessellation of ``shape`` whose triangles are at most
    ``tolerance`` (mm) from its surface.

    FreeCAD's own mesher (``MeshPart.meshFromShape``, OCC's ``BRepMesh``) with the tolerance as
    its linear deflection; ``Shape.tessellate(tolerance)`` meshes curved faces to a fixed fine
    angle whatever the tolerance (some 1500 vertices on an egg at any tolerance), so it is the
    fallback only. A copy of the shape is meshed: OCC keeps a shape's finest mesh so far (the 3D
    view's, an earlier finer tolerance) and would return that one.
    """
    shape = shape.copy()
    try:
        import MeshPart
        mesh = MeshPart.meshFromShape(Shape=shape, LinearDeflection=float(tolerance),
                                      AngularDeflection=ANGULAR_DEFLECTION, Relative=False)
        points = [tuple(p.Vector) for p in mesh.Points]
    except ImportError:
        points = [tuple(p) for p in shape.tessellate(float(tolerance))[0]]
    return np.array(points, dtype=float).reshape(-1, 3)


def hull_points(obj, side):
    """The points (n, 3) (mm, in the marker's frame) of ``side``'s convex shape: the vertices of
    the convex hull of its marker's solid's tessellation at ``<side>Tolerance``
    (:func:`tessellation`), or of ``<side>Points`` when it has them (a model imported from a
    file, whose bodies' solids are stand-ins).

    Raises ValueError saying what is missing (no solid and no points, a tolerance not positive,
    points spanning no volume).
    """
    from ..solver.api import convex_hull as hull
    marker = getattr(obj, f"{side}Marker")
    solid = marker_solid(marker)
    points = np.array([tuple(p) for p in getattr(obj, f"{side}Points")],
                      dtype=float).reshape(-1, 3)
    if len(points) == 0:
        sub = marker_sub(marker)
        shape = contact_solid(solid, sub)[0] if solid is not None else None
        if shape is None:
            raise ValueError("a convex shape is the hull of its marker's solid, and marker "
                             f"'{getattr(marker, 'Label', '?')}' is on no solid: attach it to a "
                             "solid")
        tolerance = float(getattr(obj, f"{side}Tolerance").Value)
        if not tolerance > 0.0:
            raise ValueError(f"{tolerance:g} mm; give the tessellation a positive tolerance "
                             f"(e.g. {default_tolerance(solid, sub):.3g} mm)")
        inverse = marker.Placement.inverse()
        points = np.array([tuple(inverse.multVec(FreeCAD.Vector(*p)))
                           for p in tessellation(shape, tolerance)])
    try:
        return hull(points).vertices
    except ValueError as exc:
        raise ValueError(f"convex shape: {exc}") from None


def hull_summary(obj, side):
    """What ``side``'s convex shape is, in words, for the panel: ``"convex hull of 'Egg': 187
    points (tessellated to 0.55 mm)"``; the problem instead when it has none."""
    marker = getattr(obj, f"{side}Marker")
    solid = marker_solid(marker)
    try:
        points = hull_points(obj, side)
    except ValueError as exc:
        return f"no convex shape: {exc}"
    if solid is None or len(getattr(obj, f"{side}Points")):
        return f"Convex hull of {len(points)} given points"
    tolerance = FreeCAD.Units.Quantity(float(getattr(obj, f"{side}Tolerance").Value),
                                       FreeCAD.Units.Unit("mm")).UserString
    words = contact_solid(solid, marker_sub(marker))[1]
    return (f"Convex hull of the solid '{solid.Label}'{f' ({words})' if words else ''}: "
            f"{len(points)} points (tessellated to {tolerance})")


# -- what a picked face is -----------------------------------------------------------------------
@dataclass
class Recognised:
    """A contact shape recognised on a pick (lengths in mm, global axes).

    ``type`` is a contact shape; ``radius``, ``length``, ``size`` its dimensions (a ``convex``
    shape: its tessellation ``tolerance``, :func:`convex`); ``offset`` the
    marker's ``AttachmentOffset`` for a box picked whole (its centre and edge directions in the
    solid's own frame), None when the marker of the pick is the shape's frame as the marker
    command makes it.
    """

    type: str
    radius: float = 0.0
    length: float = 0.0
    size: tuple = ()
    offset: object = None
    what: str = ""
    tolerance: float = 0.0
    radius2: float = 0.0

    def dimensions(self):
        """``{keyword: value}`` (mm) of ``make_contact`` for the shape type (a convex shape: its
        tessellation ``tolerance``)."""
        if self.type == "convex":
            return {"tolerance": self.tolerance}
        used = CONTACT_SHAPES[self.type][0]
        values = {"radius": self.radius, "length": self.length, "size": tuple(self.size),
                  "radius2": self.radius2}
        return {name: values[name] for name in used}


def _surface_kind(face):
    return type(face.Surface).__name__


def _box_frame(shape, rotation):
    """(centre, axes (3 vectors), edge lengths) of a solid that is a rectangular box, else None;
    the axes are the box's edge directions nearest the axes of ``rotation`` (the solid's)."""
    if len(shape.Solids) != 1 or len(shape.Faces) != 6 or len(shape.Edges) != 12 or \
            len(shape.Vertexes) != 8 or any(_surface_kind(f) != "Plane" for f in shape.Faces):
        return None
    shape = shape.Solids[0]                  # a Part Fuse/Cut's compound of one solid: the solid
    normals = []
    for face in shape.Faces:
        n = face.normalAt(*face.Surface.parameter(face.CenterOfMass))
        n.normalize()
        if not any(abs(abs(n.dot(m)) - 1.0) < 1e-9 for m in normals):
            normals.append(n)
    if len(normals) != 3 or any(abs(normals[i].dot(normals[j])) > 1e-9
                                for i, j in ((0, 1), (0, 2), (1, 2))):
        return None
    axes = []
    for e in ((1, 0, 0), (0, 1, 0)):
        own = rotation.multVec(FreeCAD.Vector(*e))
        n = max((m for m in normals if m not in axes), key=lambda m: abs(m.dot(own)))
        axes.append(n)
    x, y = (n if n.dot(rotation.multVec(FreeCAD.Vector(*e))) >= 0.0 else n * -1.0
            for n, e in zip(axes, ((1, 0, 0), (0, 1, 0))))
    z = x.cross(y)
    points = [v.Point for v in shape.Vertexes]
    size = []
    for axis in (x, y, z):
        s = [p.dot(axis) for p in points]
        size.append(max(s) - min(s))
    if abs(size[0] * size[1] * size[2] - shape.Volume) > 1e-6 * shape.Volume:
        return None                          # six planes, but not a rectangular box
    return shape.CenterOfMass, (x, y, z), tuple(size)


def recognise(solid, sub):
    """The contact shape of a pick: face ``sub`` (``"Face3"``) of ``solid``, or the whole solid
    (``sub`` ""); None when it is none (a free-form face, a solid that is not a box, an edge or
    vertex).

    A planar face is a ``plane``, a spherical face a ``sphere`` (its surface's radius), a
    cylindrical face a ``cylinder`` (its radius, and its length along the axis); the marker the
    marker command makes on such a face is the shape's frame (the face's middle and outward
    normal; the sphere's centre; the axis halfway along the face). A whole solid that is a
    rectangular box (6 planar faces at right angles) is a ``box`` of its edge lengths, whose
    marker is attached to the solid with an offset to its centre and edge directions. A conical
    face is a ``cone`` (the frustum between its two ends along the axis, their radii), a
    toroidal face a ``torus`` (its radii); their markers are attached to the solid with an
    offset, the frustum's middle on the axis (z from its Radius end to its Radius2 end) and the
    torus's centre (z its axis).
    """
    shape = solid_shape(solid)
    if shape is None:
        return None
    if not sub:
        frame = _box_frame(shape, solid_placement(solid).Rotation)
        if frame is None:
            return None
        centre, (x, y, z), size = frame
        wanted = FreeCAD.Placement(centre, FreeCAD.Rotation(x, y, z, "ZXY"))
        offset = solid_placement(solid).inverse().multiply(wanted)
        return Recognised("box", size=size, offset=offset, what=f"'{solid.Label}' (a box)")
    try:
        element = shape.getElement(sub)
    except Exception:  # Part raises ValueError or IndexError for a missing element
        return None
    what = f"{sub} of '{solid.Label}'"
    if element.ShapeType != "Face":
        return None
    kind = _surface_kind(element)
    surface = element.Surface
    if kind == "Plane":
        return Recognised("plane", what=what)
    if kind == "Sphere":
        return Recognised("sphere", radius=float(surface.Radius), what=what)
    if kind == "Cylinder":
        axis = FreeCAD.Vector(surface.Axis)
        axis.normalize()
        s = [v.Point.dot(axis) for v in element.Vertexes]
        length = max(s) - min(s) if s else 0.0
        return Recognised("cylinder", radius=float(surface.Radius), length=length, what=what)
    if kind in ("Cone", "Toroid"):
        return _revolved(solid, element, kind, what)
    return None


def _revolved(solid, face, kind, what):
    """A conical face's ``cone`` or a toroidal face's ``torus``, its marker by an offset on the
    whole solid (:func:`recognise`); None when its geometry is not what it should be."""
    surface = face.Surface
    axis = FreeCAD.Vector(surface.Axis)
    axis.normalize()
    if kind == "Toroid":
        centre = FreeCAD.Vector(surface.Center)
        big, small = float(surface.MajorRadius), float(surface.MinorRadius)
        if not 0.0 < small < big:
            return None
        wanted = FreeCAD.Placement(centre, FreeCAD.Rotation(FreeCAD.Vector(0, 0, 1), axis))
        offset = solid_placement(solid).inverse().multiply(wanted)
        return Recognised("torus", radius=big, radius2=small, offset=offset,
                          what=f"{what} (a torus)")
    origin = FreeCAD.Vector(surface.Apex)
    ends = []
    for v in face.Vertexes:
        d = v.Point - origin
        s = d.dot(axis)
        ends.append((s, (d - axis * s).Length))
    if len(ends) < 1:
        return None
    lo, hi = min(e[0] for e in ends), max(e[0] for e in ends)
    if hi - lo <= 1e-9:
        return None
    slope = math.tan(float(surface.SemiAngle))
    r1, r2 = abs(slope * lo), abs(slope * hi)       # the radii at the ends (0 at the apex)
    middle = origin + axis * (0.5 * (lo + hi))
    wanted = FreeCAD.Placement(middle, FreeCAD.Rotation(FreeCAD.Vector(0, 0, 1), axis))
    offset = solid_placement(solid).inverse().multiply(wanted)
    return Recognised("cone", radius=r1, radius2=r2, length=hi - lo, offset=offset,
                      what=f"{what} (a cone)")


def convex(solid, what="", sub=""):
    """The ``convex`` shape of a solid picked whole or by face ``sub``: the hull of its
    tessellation at the default tolerance (:func:`default_tolerance`) of the solid
    :func:`contact_solid` takes (a Part Fuse or Cut is a compound: its one solid, the solid of
    the picked face, or all its solids together, said in ``what``), its marker at that solid's
    centre of mass with the object's axes (``offset``: the marker's ``AttachmentOffset`` on the
    object); None when ``solid`` has no shape with a volume."""
    shape, words = contact_solid(solid, sub)
    if shape is None or not shape.Volume > 0.0:
        return None
    placement = solid_placement(solid)
    wanted = FreeCAD.Placement(centre_of_mass(shape), placement.Rotation)
    what = what or f"'{solid.Label}' (its convex hull{f': {words}' if words else ''})"
    return Recognised("convex", offset=placement.inverse().multiply(wanted),
                      tolerance=default_tolerance(solid, sub), what=what)


def surface_name(solid, sub):
    """What a pick is, in words, for messages: ``"a cone (Face2 of 'Nose')"``."""
    shape = solid_shape(solid)
    if not sub:
        return f"'{solid.Label}' (a whole solid that is not a box)"
    try:
        element = shape.getElement(sub)
    except Exception:  # a missing element
        return f"{sub} of '{solid.Label}' (gone)"
    if element.ShapeType != "Face":
        kind = element.ShapeType.lower()
        article = "an" if kind[0] in "aeiou" else "a"
        return f"{sub} of '{solid.Label}' ({article} {kind}, not a face)"
    kind = {"Cone": "cone", "Toroid": "torus", "SurfaceOfRevolution": "surface of revolution",
            "BSplineSurface": "free-form surface"}.get(_surface_kind(element),
                                                       _surface_kind(element).lower())
    return f"{sub} of '{solid.Label}' (a {kind})"


def supported(first, second):
    """Whether the solver takes the pair of shape types (either order)."""
    return (first, second) in CONTACT_PAIRS or (second, first) in CONTACT_PAIRS


def choose_shapes(primitives, hulls):
    """The shapes of a contact's two ends: the recognised primitives if the solver takes the
    pair, else the first of (input convex, output convex, both convex) it takes; None if none.

    ``primitives``, ``hulls``: per end, its :class:`Recognised`
    primitive and convex hull (None where there is none).
    """
    options = [tuple(primitives), (hulls[0], primitives[1]), (primitives[0], hulls[1]),
               tuple(hulls)]
    for shapes in options:
        if None not in shapes and supported(shapes[0].type, shapes[1].type):
            return shapes
    return None


def pairs_text():
    """The supported pairs, for messages: ``sphere-plane, sphere-sphere, ...``."""
    return ", ".join(f"{a}-{b}" for a, b in CONTACT_PAIRS)


# -- the stiffness a new contact gets ------------------------------------------------------------
def elastic_constants(body):
    """(Young's modulus in Pa, Poisson's ratio, where from) of a body: its material card's
    ``YoungsModulus`` and ``PoissonRatio`` when it has both, else steel's."""
    card = dict(getattr(body, "Material", {}) or {})
    try:
        q = FreeCAD.Units.Quantity(card["YoungsModulus"])
        nu = float(str(card["PoissonRatio"]).split()[0])
        if q.Unit == units.unit("Pa") and q.Value > 0 and 0.0 <= nu < 0.5:
            return units.to_si(q.Value, "Pa"), nu, f"'{body.Label}' material"
    except (KeyError, ValueError, TypeError, IndexError):
        pass
    except Exception:  # FreeCAD's quantity parser raises its own error: steel then
        pass
    return DEFAULT_YOUNGS_MODULUS, DEFAULT_POISSON_RATIO, "steel"


def default_stiffness(shapes, bodies, gravity):
    """The stiffness (SI, N/m^1.5) a new contact gets, and the rule, in words.

    Parameters
    ----------
    shapes : sequence of 2 Recognised
        Input and output shapes.
    bodies : sequence of 2 Body objects
        Their bodies (the second may be the ground).
    gravity : float
        Size of the gravitational acceleration, m/s^2 (9.81 if 0).

    A sphere against a plane or a sphere: Hertz, ``k = 4/3 E* sqrt(R)``, ``1/E* = (1 - nu1^2)/E1
    + (1 - nu2^2)/E2`` (each body's material, else steel: 210 GPa, 0.3), ``R`` the sphere's
    radius or ``R1 R2 / (R1 + R2)``. A box, cylinder or convex shape against anything else but a
    sphere: the ``k`` for which the weight of its body (the first such side's, the input's when
    both are), shared by the points at rest (:data:`POINTS_AT_REST`: a convex hull rests on the
    three vertices of a facet), presses them :data:`STATIC_DEPTH` in at the exponent 1.5:
    ``k = m g / (n d^1.5)``.
    """
    types = [s.type for s in shapes]
    if "sphere" in types:
        radii = [units.to_si(s.radius, "m") for s in shapes if s.type == "sphere"]
        r_eff = radii[0] if len(radii) == 1 else radii[0] * radii[1] / (radii[0] + radii[1])
        constants = [elastic_constants(b) for b in bodies]
        e_star = 1.0 / sum((1.0 - nu ** 2) / e for e, nu, _ in constants)
        k = 4.0 / 3.0 * e_star * math.sqrt(r_eff)
        sources = " and ".join(sorted({c[2] for c in constants}))
        return k, (f"Hertz: 4/3 E* sqrt(R), E* = {e_star / 1e9:.4g} GPa ({sources}), "
                   f"R = {r_eff * 1000:.6g} mm")
    solid_shape_ = next(s for s in shapes if s.type in POINTS_AT_REST)
    index = shapes.index(solid_shape_)
    body = bodies[index]
    mass = units.to_si(body_mass_properties(body)[2]["mass"], "kg")
    g = gravity if gravity > 0.0 else 9.81
    n = POINTS_AT_REST[solid_shape_.type]
    k = mass * g / (n * STATIC_DEPTH ** 1.5)
    return k, (f"static depth {STATIC_DEPTH * 1000:g} mm under the weight of '{body.Label}' "
               f"({mass:.6g} kg x {g:.4g} m/s^2) on {n} points at exponent 1.5: "
               "k = m g / (n d^1.5)")


# -- the step the contacts need ------------------------------------------------------------------
def time_text(seconds):
    """A step or period in words: ``"2 µs"``, ``"0.108 ms"``, ``"1 ms"``, ``"0.5 s"``."""
    for factor, unit in ((1e6, "µs"), (1e3, "ms")):
        if abs(seconds) * factor < 1000.0:
            return f"{seconds * factor:.3g} {unit}"
    return f"{seconds:.3g} s"
