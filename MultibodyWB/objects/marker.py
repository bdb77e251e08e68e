"""The Marker: a frame fixed on a body, placed by FreeCAD's attachment engine.

A ``Part::FeaturePython`` with ``Part::AttachExtensionPython``: its ``Support``
(``AttachmentSupport`` in FreeCAD 1.0) is a face, edge or vertex of one of its body's solids (or the whole solid),
``MapMode`` how the frame is taken from it, ``AttachmentOffset`` a placement in the attached frame.
FreeCAD recomputes the placement from the solid each time the solid changes, so the marker follows
the solid.

How a pick is attached depends on the picked element's geometry (:data:`PICK_RULES`, checked on
FreeCAD 0.20.2's and 1.0's ``Attacher::AttachEngine3D``):

=============  ===============  ==========================================================
picked         MapMode          frame
=============  ===============  ==========================================================
circular edge  Concentric       origin at the centre, z along the circle's axis, x along the
                                circle's parametrisation (it turns with the solid)
straight edge  NormalToEdge     origin at the midpoint (MapPathParameter 0.5), z along the
or curve                        edge reversed (FreeCAD's convention)
planar face    FlatFace         z along the outward normal; origin moved to the face's centre
                                by the offset, measured when picked (FlatFace alone puts it at
                                the solid's origin projected on the plane)
cylindrical    Concentric on a  the frame of the face's first circular edge coaxial with it,
or conical     circular edge    moved along the axis, by the offset, to the face's centroid
face           of the face      (a bearing bore: its axis, halfway along); ``execute`` keeps
                                that shift (``AxialShift``) up to date when the face changes
vertex         Translate        origin at the vertex; axes those of the solid when picked, kept
                                in the marker's own Placement (Translate takes the orientation
                                from there and ignores the offset's rotation): they follow the
                                vertex, not a later rotation of the solid
torus, other   ObjectXY on the  the solid's placement with an offset, measured when picked, to
surface of     whole solid      the point of the axis nearest the face's centroid, z along the
revolution                      axis
sphere, other  ObjectXY on the  likewise, to the sphere's centre or the face's centroid, with
face           whole solid      the solid's axes
nothing        ObjectXY on the  the body's base frame; the offset places the marker
               first solid
=============  ===============  ==========================================================

Not used: ``InertialCS``, the mode FreeCAD suggests for curved faces. For a full cylinder its
inertia has an axis of symmetry: FreeCAD then warns at every recompute and picks an x axis that
does not turn with the solid.

``PickedElement`` and ``PickedGeometry`` record what was picked. When the solid is edited so that
the element (or the edge the marker is attached to) is gone or is now another kind of geometry
(FreeCAD's topological naming: ``Face7`` may be another face after an edit), the marker keeps its
last placement and every property, and its check says which property to fix
(:meth:`MarkerProxy.check`).

No silent moves: ``PickedSignature`` records, when the element is picked, what it was in its
solid's own frame (:func:`signature`: kind, centre, normal or axis, radius, and the solid's size).
After a recompute the element of that name is compared with it (:func:`signature_change`): when
it now faces another way, has its axis turned, or has moved further within the solid (from the
middle of its bounding box) than the solid's size changed (the faces were renumbered: ``Face6``
is now another face), the marker is
flagged, naming the element and saying where it was and where it is now, and the export refuses
the model; the attachment is not changed. An edit that carries the element along (a link made
longer moves its end face with it) passes. If the new element is the one meant, pick it again or
accept it (:func:`accept_pick`).
"""

import json

from dataclasses import dataclass

import FreeCAD

from .base import HIDDEN, READ_ONLY, BaseProxy, Prop, quantity_prop, type_of
from .body import TYPE as BODY_TYPE
from .body import solid_placement, solid_shape

TYPE = "Multibody::Marker"


@dataclass(frozen=True)
class PickRule:
    """How a picked kind of element is attached.

    Attributes
    ----------
    mode : str
        ``MapMode`` of ``Attacher::AttachEngine3D``.
    whole_solid : bool
        Attach to the whole solid (``ObjectXY``) and place the frame by the offset, measured at
        the pick: on the surface's axis (``on_axis``) or at the element's centre, solid's axes.
    to_center : bool
        Move the origin, through the offset, to the element's centre (the face's middle).
    via_circle : bool
        Attach to the face's first circular edge coaxial with it, then (``to_center``) move
        along the axis to the middle of the face.
    on_axis : bool
        With ``whole_solid``: the frame's z along the surface's axis.
    solid_axes : bool
        Turn the axes to the solid's axes at the pick (Translate: through the marker's Placement).
    path_parameter : float
        ``MapPathParameter`` (position along an edge, 0 to 1).
    """

    mode: str
    whole_solid: bool = False
    to_center: bool = False
    via_circle: bool = False
    on_axis: bool = False
    solid_axes: bool = False
    path_parameter: float = 0.0


_ON_EDGE = PickRule("NormalToEdge", path_parameter=0.5)
_ON_CIRCLE_OF_FACE = PickRule("Concentric", via_circle=True, to_center=True)
_ON_AXIS = PickRule("ObjectXY", whole_solid=True, on_axis=True)
_AT_CENTER = PickRule("ObjectXY", whole_solid=True, to_center=True)

#: Kind of picked element (:func:`classify`) -> how it is attached.
PICK_RULES = {
    "vertex": PickRule("Translate", solid_axes=True),
    "circle": PickRule("Concentric"),
    "line": _ON_EDGE,
    "curve": _ON_EDGE,
    "plane": PickRule("FlatFace", to_center=True),
    "cylinder": _ON_CIRCLE_OF_FACE,
    "cone": _ON_CIRCLE_OF_FACE,
    "torus": _ON_AXIS,
    "revolution": _ON_AXIS,
    "sphere": _AT_CENTER,
    "surface": _AT_CENTER,
    "object": PickRule("ObjectXY", whole_solid=True),
}

#: OCC geometry class name (``type(edge.Curve).__name__``, ``type(face.Surface).__name__``) -> kind.
GEOMETRY_KINDS = {
    "Circle": "circle", "ArcOfCircle": "circle", "Line": "line", "LineSegment": "line",
    "Plane": "plane", "Cylinder": "cylinder", "Cone": "cone", "Toroid": "torus",
    "SurfaceOfRevolution": "revolution", "Sphere": "sphere",
}


def classify(element):
    """Kind of a picked element: a key of :data:`PICK_RULES` (None: the whole solid)."""
    if element is None:
        return "object"
    if element.ShapeType == "Vertex":
        return "vertex"
    if element.ShapeType == "Edge":
        return GEOMETRY_KINDS.get(type(element.Curve).__name__, "curve")
    if element.ShapeType == "Face":
        return GEOMETRY_KINDS.get(type(element.Surface).__name__, "surface")
    return "object"


def element_center(element):
    """The point a centring rule puts the origin at: a sphere's centre, else the centroid."""
    surface = getattr(element, "Surface", None)
    if type(surface).__name__ == "Sphere":
        return FreeCAD.Vector(surface.Center)
    if element.ShapeType == "Vertex":
        return FreeCAD.Vector(element.Point)
    return FreeCAD.Vector(element.CenterOfMass)


def element_axis(element):
    """(point, direction) of the axis of a surface (or curve) of revolution, or None."""
    geometry = getattr(element, "Surface", None) or getattr(element, "Curve", None)
    direction = getattr(geometry, "Axis", None) or getattr(geometry, "Direction", None)
    point = getattr(geometry, "Center", None)
    if point is None:
        point = getattr(geometry, "Location", None)
    if isinstance(direction, FreeCAD.Vector) and isinstance(point, FreeCAD.Vector):
        return FreeCAD.Vector(point), FreeCAD.Vector(direction).normalize()
    return None


def support_property(obj):
    """Name of the attachment's references: ``Support`` (0.20), ``AttachmentSupport`` (1.0)."""
    return "AttachmentSupport" if "AttachmentSupport" in obj.PropertiesList else "Support"


def get_element(solid, sub):
    """The sub-element ``sub`` of a solid's global shape, or None if it does not exist."""
    shape = solid_shape(solid)
    if shape is None or not sub:
        return None
    try:
        return shape.getElement(sub)
    except Exception:  # Part raises ValueError/IndexError for a missing element
        return None


def coaxial_circle(solid, sub):
    """Name (``"Edge5"``) of the first circular edge of face ``sub`` coaxial with it, or None."""
    shape = solid_shape(solid)
    if shape is None:
        return None
    face = shape.getElement(sub)      # from the same shape: isSame compares its sub-shapes
    axis = element_axis(face)
    if axis is None:
        return None
    point, direction = axis
    for i, edge in enumerate(shape.Edges, 1):
        curve = edge.Curve
        if type(curve).__name__ != "Circle" or \
                curve.Axis.cross(direction).Length > 1e-9 or \
                (curve.Center - point).cross(direction).Length > 1e-7 * max(1.0, curve.Radius):
            continue
        if any(edge.isSame(e) for e in face.Edges):
            return f"Edge{i}"
    return None


def axial_shift(solid, face_sub, edge_sub, reversed_=False):
    """Distance (mm) along the circle's axis (Concentric's z) from a circular edge's centre to
    the centroid of face ``face_sub``; None if either element is gone or not what it was."""
    shape = solid_shape(solid)
    if shape is None:
        return None
    try:
        face, edge = shape.getElement(face_sub), shape.getElement(edge_sub)
    except Exception:  # a missing element: the check reports it
        return None
    if type(getattr(edge, "Curve", None)).__name__ != "Circle" or face.ShapeType != "Face":
        return None
    z = FreeCAD.Vector(edge.Curve.Axis) * (-1.0 if reversed_ else 1.0)
    return (face.CenterOfMass - edge.Curve.Center).dot(z)


def _axes(z, solid_rotation):
    """A rotation with z along ``z`` and x as close as can be to the solid's x (else its y)."""
    for e in ((1, 0, 0), (0, 1, 0)):
        x = solid_rotation.multVec(FreeCAD.Vector(*e))
        x = x - z * x.dot(z)
        if x.Length > 1e-6:
            x.normalize()
            return FreeCAD.Rotation(x, z.cross(x), z, "ZXY")
    return FreeCAD.Rotation()


class MarkerProxy(BaseProxy):
    """Proxy of a Marker."""

    Type = TYPE
    KIND = "Marker"
    VERSION = 1
    PROPERTIES = (
        Prop("Body", "App::PropertyLink", "Marker", "The body this marker is fixed on"),
        Prop("MarkerId", "App::PropertyInteger", "Marker",
             "The marker's number on its body (unique on the body; hinges and forces refer to it)"),
        Prop("PickedElement", "App::PropertyString", "Marker",
             "What was picked: solid and sub-element ('CrankWeb.Face7'), or the solid", default="",
             mode=READ_ONLY),
        Prop("PickedGeometry", "App::PropertyString", "Marker",
             "Kind of the picked element when it was picked (circle, plane, cylinder, line, "
             "vertex...); a different kind now means the solid's topology changed", default="",
             mode=READ_ONLY),
        Prop("PickedSignature", "App::PropertyString", "Marker",
             "What the picked element was when it was picked, in its solid's own frame (kind, "
             "centre, normal or axis, radius; mm): a recompute that makes it another element "
             "flags the marker", default="", mode=HIDDEN, output=True),
        quantity_prop("AxialShift", "Marker",
                      "For a cylindrical or conical face: how far the attachment offset moves the "
                      "frame along the axis, from the face's circular edge to its middle (kept "
                      "up to date when the face changes)", "mm", si="m", mode=READ_ONLY),
    )

    def __init__(self, obj):
        obj.addExtension("Part::AttachExtensionPython")
        super().__init__(obj)

    def execute(self, obj):
        """A marker on no solid sits at its offset in the body's base frame.

        Attached markers are placed by FreeCAD's attachment extension, which runs after this. When
        it fails (the picked element is gone), FreeCAD marks the marker invalid and recomputes
        none of its dependents, the mechanism's check included: the marker reports its own
        problems here, first.
        """
        if obj.MapMode == "Deactivated" and obj.Body is not None:
            obj.Placement = obj.Body.BasePlacement.multiply(obj.AttachmentOffset)
        self.follow_face_middle(obj)
        own = self.check(obj)
        if own:
            # said in the report view: what an edit of the solid did to the pick (FreeCAD speaks
            # for itself when it cannot attach, also in passing while an Undo rebuilds)
            self.report(obj, own, announce=lambda prop, message:
                        not message.startswith("FreeCAD cannot attach it"))
        elif recorded_signature(obj) is None:
            record_signature(obj)           # older documents, or a pick put back by Undo

    def follow_face_middle(self, obj):
        """Keep a marker picked on a cylindrical or conical face halfway along the face.

        It is attached to a circular edge of the face; the offset's shift along the axis is
        measured again on the current face (the attachment extension runs after this).
        """
        rule = PICK_RULES.get(obj.PickedGeometry)
        references = getattr(obj, support_property(obj))
        if rule is None or not rule.via_circle or obj.MapMode != "Concentric" or \
                len(references) != 1 or not references[0][1]:
            return
        solid, (edge_sub, *_) = references[0]
        picked_solid, _, face_sub = obj.PickedElement.partition(".")
        shift = axial_shift(solid, face_sub, edge_sub, obj.MapReversed) \
            if picked_solid == solid.Name else None
        if shift is None:
            return
        delta = shift - obj.AxialShift.Value
        if abs(delta) > 1e-12 * max(1.0, abs(shift)):
            offset = obj.AttachmentOffset
            obj.AttachmentOffset = FreeCAD.Placement(offset.Base + FreeCAD.Vector(0, 0, delta),
                                                     offset.Rotation)
            obj.AxialShift = FreeCAD.Units.Quantity(shift, FreeCAD.Units.Unit("mm"))

    def check(self, obj):
        problems = []
        body = obj.Body
        if body is None:
            problems.append(("Body", "is not set: a marker sits on a body"))
        elif type_of(body) != BODY_TYPE:
            problems.append(("Body", f"'{body.Label}' is not a Multibody body"))
        support = support_property(obj)
        references = getattr(obj, support)
        if not references and obj.MapMode != "Deactivated":
            problems.append((support, f"what it was attached to ({obj.PickedElement or '?'}) is "
                                      "gone: attach the marker again"))
        picked_solid, _, picked_sub = obj.PickedElement.partition(".")
        for solid, subs in references:
            if body is not None and type_of(body) == BODY_TYPE and solid not in body.Solids:
                problems.append((support, f"'{solid.Label}' is not one of the solids of body "
                                          f"'{body.Label}'"))
            expected = {sub: None for sub in subs if sub}          # any kind: the attacher judges
            if solid.Name == picked_solid and picked_sub:
                expected[picked_sub] = obj.PickedGeometry          # the element picked
            for sub, kind in expected.items():
                element = get_element(solid, sub)
                if element is None:
                    problems.append((support, f"'{sub}' no longer exists on '{solid.Label}' (the "
                                              "solid's topology changed): pick the face, edge or "
                                              "vertex again"))
                elif kind and kind != "object" and classify(element) != kind:
                    problems.append((support, f"'{sub}' of '{solid.Label}' is now a "
                                              f"{classify(element)}, it was a {kind} when picked "
                                              "(the solid's topology changed): pick it again"))
                elif kind and sub == picked_sub and recorded_signature(obj) is not None:
                    change = signature_change(recorded_signature(obj), signature(solid, sub))
                    if change:
                        problems.append((support, f"'{sub}' of '{solid.Label}' is not the "
                                                  f"{_NOUNS.get(kind, 'element')} that was "
                                                  f"picked: {change} (the solid's faces or "
                                                  "edges were renumbered by a change): pick it "
                                                  "again, or accept it as it is now ("
                                                  "the Mechanism's panel: Accept changed "
                                                  "picks)"))
        if not problems and "Invalid" in obj.State:
            problems.append((support, f"FreeCAD cannot attach it: {obj.getStatusString()}"))
        return problems


def marker_frame(marker):
    """The marker's placement in its body's base frame (mm), from the current solid placement."""
    body = marker.Body
    base = solid_placement(body.Solids[0]) if body.Solids else body.BasePlacement
    return base.inverse().multiply(marker.Placement)


def attach(marker, solid, sub, offset=None):
    """Attach ``marker`` to ``sub`` of ``solid`` (whole solid: ``sub`` None) by :data:`PICK_RULES`.

    ``offset`` (a ``FreeCAD.Placement`` in the attached frame) is applied after the rule's own
    offset (centring, axes). Returns the kind of the picked element.
    """
    element = get_element(solid, sub) if sub else None
    if sub and element is None:
        raise ValueError(f"'{sub}' does not exist on '{solid.Label}'")
    kind = classify(element)
    rule = PICK_RULES[kind]
    reference = sub
    if rule.via_circle:
        reference = coaxial_circle(solid, sub)
        if reference is None:           # a cylinder face without a full circular edge
            rule = _ON_AXIS
    support = support_property(marker)
    setattr(marker, support, [(solid, "")] if rule.whole_solid else [(solid, reference)])
    marker.MapMode = rule.mode
    marker.MapReversed = False
    marker.MapPathParameter = rule.path_parameter
    marker.AttachmentOffset = FreeCAD.Placement()
    marker.positionBySupport()
    attached = marker.Placement
    own = FreeCAD.Placement()
    if rule.whole_solid and element is not None:
        solid_rotation = solid_placement(solid).Rotation
        axis = element_axis(element) if rule.on_axis else None
        if axis is not None:
            point, direction = axis
            c = element_center(element)
            wanted = FreeCAD.Placement(point + direction * (c - point).dot(direction),
                                       _axes(direction, solid_rotation))
        else:
            wanted = FreeCAD.Placement(element_center(element), solid_rotation)
        own = attached.inverse().multiply(wanted)
    elif rule.to_center and element is not None:
        local = attached.inverse().multVec(element_center(element))
        if rule.mode == "FlatFace":
            local.z = 0.0                      # in the face's plane
        elif rule.via_circle:
            local = FreeCAD.Vector(0, 0, local.z)   # along the axis only
            marker.AxialShift = FreeCAD.Units.Quantity(local.z, FreeCAD.Units.Unit("mm"))
        own = FreeCAD.Placement(local, FreeCAD.Rotation())
    if rule.solid_axes:
        # Translate ignores the offset's rotation and applies its translation in global axes: the
        # marker's own Placement gives the orientation (FreeCAD's "Translate origin" mode)
        axes = solid_placement(solid).Rotation
        offset = offset or FreeCAD.Placement()
        marker.Placement = FreeCAD.Placement(attached.Base, axes.multiply(offset.Rotation))
        own = FreeCAD.Placement(axes.multVec(offset.Base), FreeCAD.Rotation())
        offset = None
    marker.AttachmentOffset = own.multiply(offset) if offset is not None else own
    marker.PickedElement = f"{solid.Name}.{sub}" if sub else solid.Name
    marker.PickedGeometry = kind
    record_signature(marker)
    marker.positionBySupport()
    return kind


# --------------------------------------------------------------------------------------------------
# What was picked: signatures
# --------------------------------------------------------------------------------------------------

#: Kind of element -> the word messages use.
_NOUNS = {"vertex": "vertex", "circle": "edge", "line": "edge", "curve": "edge"}
_NOUNS.update({k: "face" for k in ("plane", "cylinder", "cone", "torus", "revolution", "sphere",
                                   "surface")})

#: Directions closer than this (1 - cos) are the same; positions closer than this fraction of the
#: solid's size (at least 1e-6 mm) are the same.
_DIRECTION_TOL = 1e-9
_LENGTH_TOL = 1e-7


def _direction(element, kind):
    """The element's normal (planes, outward), axis (surfaces of revolution, circles) or
    direction (lines), global; None for other kinds."""
    if kind == "plane":
        u, v = element.Surface.parameter(element.CenterOfMass)
        return FreeCAD.Vector(element.normalAt(u, v))
    if kind == "line":
        return FreeCAD.Vector(element.Curve.Direction)
    axis = element_axis(element) if kind in ("cylinder", "cone", "circle", "torus",
                                               "revolution") else None
    return None if axis is None else axis[1]


def signature(solid, sub):
    """What the element ``sub`` of ``solid`` is, in the solid's own frame: a dict with ``kind``,
    ``center`` (mm), ``from_middle`` (the centre from the middle of the solid's bounding box,
    mm), ``direction`` (unit vector or None), ``radius`` (mm or None), ``size`` (the solid's
    bounding box in its own frame, mm); None if there is no such element."""
    element = get_element(solid, sub)
    shape = solid_shape(solid)
    if element is None or shape is None:
        return None
    kind = classify(element)
    frame = solid_placement(solid)
    inverse = frame.inverse()
    center = inverse.multVec(element_center(element))
    direction = _direction(element, kind)
    if direction is not None:
        direction = inverse.Rotation.multVec(direction)
    geometry = getattr(element, "Surface", None) or getattr(element, "Curve", None)
    radius = getattr(geometry, "Radius", None) if kind in ("cylinder", "circle", "sphere") \
        else None
    local = shape.copy()
    local.Placement = FreeCAD.Placement()
    box = local.BoundBox
    middle = box.Center
    return {"kind": kind, "center": [round(x, 9) for x in center],
            "from_middle": [round(x, 9) for x in center - middle],
            "direction": None if direction is None else [round(x, 12) for x in direction],
            "radius": None if radius is None else round(float(radius), 9),
            "size": [round(box.XLength, 9), round(box.YLength, 9), round(box.ZLength, 9)]}


def _words(vector):
    """A direction in words: ``+x``, ``-z``, or its components."""
    for i, axis in enumerate("xyz"):
        for sign in (1, -1):
            if abs(vector[i] - sign) < 1e-9:
                return f"{'+' if sign > 0 else '-'}{axis}"
    return "(" + ", ".join(f"{x:.3g}" for x in vector) + ")"


def _mm(value):
    return FreeCAD.Units.Quantity(f"{float(value)!r} mm").UserString


def _point(p):
    return "(" + ", ".join(f"{x:.6g}" for x in p) + ") mm"


def signature_change(recorded, now):
    """How the element now differs from the one picked (``recorded``, a signature or its JSON),
    in words; "" when it is evidently the same element (also when it was carried along by a
    change of the solid's size no larger than its own move)."""
    if isinstance(recorded, str):
        try:
            recorded = json.loads(recorded)
        except ValueError:
            return ""
    if not recorded or now is None:
        return ""
    if recorded["kind"] != now["kind"]:
        return f"it was a {recorded['kind']}, it is now a {now['kind']}"
    a, b = recorded.get("direction"), now.get("direction")
    if a is not None and b is not None:
        dot = sum(x * y for x, y in zip(a, b))
        same = 1.0 - dot <= _DIRECTION_TOL if recorded["kind"] == "plane" \
            else 1.0 - abs(dot) <= _DIRECTION_TOL
        if not same:
            what = "faced" if recorded["kind"] == "plane" else "had its axis along"
            now_what = "faces" if recorded["kind"] == "plane" else "has it along"
            return (f"it {what} {_words(a)} at {_point(recorded['center'])} in the solid's "
                    f"frame, it now {now_what} {_words(b)} at {_point(now['center'])}")
    # measured from the middle of the solid's bounding box: the whole shape shifted within its
    # own placement (its base feature moved) is no move of the element on the solid
    key = "from_middle" if "from_middle" in recorded and "from_middle" in now else "center"
    moved = sum((x - y) ** 2 for x, y in zip(recorded[key], now[key])) ** 0.5
    grown = sum((x - y) ** 2 for x, y in zip(recorded["size"], now["size"])) ** 0.5
    scale = max(1.0, max(now["size"]))
    if moved > grown + _LENGTH_TOL * scale:
        return (f"its centre moved {_mm(moved)} within the solid (from "
                f"{_point(recorded['center'])} to {_point(now['center'])} in the solid's frame) "
                f"while the solid's size changed by {_mm(grown)}")
    return ""


def recorded_signature(marker):
    """The signature recorded for the marker's current pick, or None.

    A signature recorded for another pick (``PickedElement`` and ``PickedGeometry`` put back by
    Undo or by a panel's Cancel while the signature stayed) is stale: None, and the marker
    records its pick again at its next recompute without problems.
    """
    text = getattr(marker, "PickedSignature", "")
    if not text:
        return None
    try:
        recorded = json.loads(text)
    except ValueError:
        return None
    if recorded.get("element") != marker.PickedElement or \
            recorded.get("kind") != marker.PickedGeometry:
        return None
    return recorded


def record_signature(marker):
    """Record what the marker's picked element is now (``PickedSignature``)."""
    solid_name, _, sub = marker.PickedElement.partition(".")
    solid = marker.Document.getObject(solid_name) if solid_name else None
    found = signature(solid, sub) if solid is not None and sub else None
    if found is not None:
        found["element"] = marker.PickedElement
    text = json.dumps(found) if found is not None else ""
    if marker.PickedSignature != text:
        marker.PickedSignature = text


def changed_pick(marker):
    """How the element the marker was picked on has changed since (:func:`signature_change`),
    in words; "" when it is the same, gone or of another kind (those are other problems)."""
    recorded = recorded_signature(marker) if type_of(marker) == TYPE else None
    if recorded is None:
        return ""
    solid_name, _, sub = marker.PickedElement.partition(".")
    solid = marker.Document.getObject(solid_name) if solid_name else None
    if solid is None or not sub:
        return ""
    now = signature(solid, sub)
    if now is None or now["kind"] != marker.PickedGeometry:
        return ""
    return signature_change(recorded, now)


def accept_pick(marker):
    """Take the element the marker is attached to now as the one meant: record its signature
    again and recompute the marker (its problem goes if nothing else is wrong)."""
    record_signature(marker)
    marker.touch()
    marker.Document.recompute()
