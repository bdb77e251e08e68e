"""Labels that say what an object connects: "Crank body", "Crank bore A", "Crank – Ground revolute".

New objects are labelled from what they join, so the tree reads like the mechanism:

=============  ==========================================  =================================
object         label                                       example
=============  ==========================================  =================================
Body           its first solid's label + " body"           ``Crank body``
Marker         the body's short name, what was picked, a   ``Crank bore A``, ``Crank face B``
               letter unique on the body
Hinge          input body – output body, the hinge type    ``Crank – Ground revolute``
Force          the bodies it joins (one for a load), type  ``Crank – Rocker spring-damper``
=============  ==========================================  =================================

A body is not labelled like its solid: FreeCAD keeps labels unique in a document (unless the user
allows duplicate labels), so a body "Crank" beside the solid "Crank" would become "Crank001". The
suffix " body" keeps both readable; the markers, hinges and forces use the short name ("Crank").

A hinge whose type changes is relabelled (``Crank – Ground spherical``) only if its label is one of
the defaults (any hinge type, with or without the digits FreeCAD appends to a repeated label): a
label the user typed is never changed.
"""

import re

from ..solver.api import FORCE_TYPES, HINGE_TYPES
from .base import type_of

#: Separator of the two ends in a label (an en dash, as in "Crank – Ground revolute").
DASH = " \u2013 "
BODY_SUFFIX = " body"

#: Kind of picked element (``Marker.PickedGeometry``) -> the word a designer uses for it.
PICKED_WORDS = {
    "vertex": "corner", "circle": "circle", "line": "edge", "curve": "edge", "plane": "face",
    "cylinder": "bore", "cone": "cone", "torus": "torus", "revolution": "surface",
    "sphere": "sphere", "surface": "surface", "object": "frame",
}


def body_label(solids):
    """Label of a new body made of ``solids``: the first solid's label + " body"."""
    solids = list(solids)
    if not solids:
        return "Body"
    return solids[0].Label + BODY_SUFFIX


def short_name(body):
    """How markers, hinges and forces name a body: its label without the " body" suffix."""
    if body is None:
        return "?"
    label = body.Label
    if label.endswith(BODY_SUFFIX) and len(label) > len(BODY_SUFFIX):
        return label[:-len(BODY_SUFFIX)]
    return label


def picked_word(kind, element=None):
    """The word for a picked element: a cylindrical face is a ``bore`` (material outside it) or a
    ``pin`` (material inside), a plane a ``face``..."""
    word = PICKED_WORDS.get(kind, "marker")
    if kind == "cylinder" and element is not None and _convex(element):
        word = "pin"
    if kind == "sphere" and element is not None and not _convex(element):
        word = "socket"
    return word


def _convex(face):
    """True if the face's outward normal points away from its surface's axis or centre."""
    try:
        u0, u1, v0, v1 = face.ParameterRange
        u, v = 0.5 * (u0 + u1), 0.5 * (v0 + v1)
        point, normal = face.valueAt(u, v), face.normalAt(u, v)
        surface = face.Surface
        center = surface.Center
        radial = point - center
        axis = getattr(surface, "Axis", None)
        if axis is not None and type(surface).__name__ != "Sphere":
            radial = radial - axis * radial.dot(axis)
        return normal.dot(radial) > 0.0
    except Exception:  # an unusual surface: call it a bore, as most picked cylinders are
        return False


def letter(index):
    """``0 -> "A"``, ``25 -> "Z"``, ``26 -> "AA"``."""
    text = ""
    index += 1
    while index > 0:
        index, rest = divmod(index - 1, 26)
        text = chr(ord("A") + rest) + text
    return text


def marker_label(body, word, others):
    """``"<body> <word> <letter>"`` with the first letter no label in ``others`` uses."""
    stem = f"{short_name(body)} {word}"
    used = set(others)
    i = 0
    while f"{stem} {letter(i)}" in used:
        i += 1
    return f"{stem} {letter(i)}"


def marker_body(marker):
    """The body of a marker (None for anything else)."""
    return getattr(marker, "Body", None) if type_of(marker) == "Multibody::Marker" else None


def ends_label(marker_input, marker_output):
    """``"Crank – Ground"`` (or just ``"Crank"`` without an output marker)."""
    first = short_name(marker_body(marker_input))
    if marker_output is None:
        return first
    return first + DASH + short_name(marker_body(marker_output))


def hinge_label(hinge_type, marker_input, marker_output):
    """``"Crank – Ground revolute"``."""
    return f"{ends_label(marker_input, marker_output)} {hinge_type}"


def force_word(force_type):
    """``"spring_damper" -> "spring-damper"``, ``"point_force" -> "force"``."""
    return {"point_force": "force", "point_torque": "torque"}.get(
        force_type, force_type.replace("spring_damper", "spring-damper").replace("_", " "))


def force_label(force_type, marker_input, marker_output=None):
    """``"Crank – Rocker spring-damper"``, ``"Piston force"``."""
    kind = FORCE_TYPES.get(force_type)
    two = kind is None or kind.markers == 2
    return f"{ends_label(marker_input, marker_output if two else None)} {force_word(force_type)}"


def _is_default(label, stem, words):
    """Whether ``label`` is ``stem + " " + word`` for one of ``words``, perhaps with the digits
    FreeCAD appends to a repeated label."""
    pattern = re.escape(stem) + " (" + "|".join(re.escape(w) for w in words) + r")(\d{3,})?"
    return re.fullmatch(pattern, label) is not None


def relabel_hinge(obj):
    """Give a hinge the default label of its type if its label is a default one (any type)."""
    if obj.InputMarker is None or obj.OutputMarker is None:
        return
    stem = ends_label(obj.InputMarker, obj.OutputMarker)
    if _is_default(obj.Label, stem, tuple(HINGE_TYPES)):
        wanted = hinge_label(obj.HingeType, obj.InputMarker, obj.OutputMarker)
        if not _is_default(obj.Label, stem, (obj.HingeType,)):
            obj.Label = wanted


def relabel_force(obj):
    """Give a force the default label of its type if its label is a default one (any type)."""
    if obj.InputMarker is None:
        return
    words = tuple(force_word(t) for t in FORCE_TYPES)
    for stem in {ends_label(obj.InputMarker, obj.OutputMarker),
                 ends_label(obj.InputMarker, None)}:
        if _is_default(obj.Label, stem, words):
            wanted = force_label(obj.ForceType, obj.InputMarker, obj.OutputMarker)
            if obj.Label != wanted and not _is_default(obj.Label, stem,
                                                       (force_word(obj.ForceType),)):
                obj.Label = wanted
            return
