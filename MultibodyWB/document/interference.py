"""Interference check: which bodies of a mechanism overlap as drawn, by how much, and where.

:func:`check` takes every pair of the mechanism's bodies (the ground's too) with their solids at
their placements in the document, and

1. rejects the pairs whose bounding boxes are apart (no boolean operation for them), then
2. computes OCC's boolean common (Part's ``Shape.common``) of each solid of one body with each
   solid of the other whose boxes meet.

A pair **overlaps** when the common's volume is above :data:`VOLUME_RTOL` times the smaller
body's volume: a pin drawn exactly in its bore (coincident cylinders) gives a zero or round-off
common, which is not an overlap. Each overlap has its volume, a depth estimate (the smallest
extent of the common's bounding box: exact for boxes pressed into each other along an axis; the
mean thickness of a thin shell such as a pin drawn too large in its bore) and its location (the
common's centre of mass), and says whether a hinge holds the two bodies together directly (not
a free or bushing hinge, which lets a body float) and whether a Contact is defined between them
(the solver refuses such a contact drawn overlapping by itself).

A hinge excuses an overlap only **at its pin**: when the common is a thin shell about the
hinge's axis (revolute, cylindrical) or centre (spherical, universal), its distance from the
axis varying by at most :data:`PIN_FIT` of the largest (a pin drawn a little larger than its
bore). Links stacked along a pin and drawn into each other's layer overlap away from the pin:
that is a real overlap, whatever hinge joins them (:attr:`Overlap.excused`).

Nothing in the document is changed: no recompute, no property set, no undo step.

Units: FreeCAD's internal units (mm, mm^3); texts in the user's unit schema
(:func:`MultibodyWB.objects.units.user_text`).
"""

from dataclasses import dataclass, field

from ..objects import units
from ..objects.base import members
from ..objects.body import TYPE as BODY
from ..objects.body import solid_shape
from ..objects.contact import TYPE as CONTACT
from ..objects.hinge import TYPE as HINGE
from ..solver.api import HINGE_TYPES

#: A common volume up to this fraction of the smaller body's volume is not an overlap (round-off
#: of a pin drawn in its bore, of faces drawn touching).
VOLUME_RTOL = 1e-6

#: A hinged overlap is at the hinge's pin when its distance from the hinge's axis (or centre)
#: varies by at most this fraction of its largest distance: a thin shell, a pin in its bore.
PIN_FIT = 0.1
#: Hinge types with a pin axis (the markers' z) and with a ball centre (the markers' origin).
AXIS_TYPES = ("revolute", "cylindrical")
CENTRE_TYPES = ("spherical", "universal")


@dataclass
class Overlap:
    """Two bodies whose solids overlap as drawn.

    Attributes
    ----------
    first, second : App.DocumentObject
        The two Body objects, in the mechanism's order.
    volume : float
        Volume of the common solids (mm^3).
    depth : float
        Depth estimate (mm) of the common's largest piece (:func:`depth_estimate`).
    centre : tuple of float
        Centre of mass of the common solids, global (mm), shape (3,).
    shape : Part.Shape
        The common solids (a compound, global coordinates), for drawing.
    hinges, contacts : list
        The Hinge objects holding the two bodies together directly (:func:`holds`) and the
        Contact objects between them.
    pins : list
        The hinges of ``hinges`` at whose pin the whole overlap lies (:func:`at_pin`): a pin
        drawn in its bore.
    """

    first: object
    second: object
    volume: float
    depth: float
    centre: tuple
    shape: object = None
    hinges: list = field(default_factory=list)
    contacts: list = field(default_factory=list)
    pins: list = field(default_factory=list)

    @property
    def hinged(self):
        """A hinge holds the two bodies together directly."""
        return bool(self.hinges)

    @property
    def excused(self):
        """The overlap is no problem of the drawing: a pin in its bore (the overlap lies at
        the pin of a hinge joining the two bodies), or a contact between them (judged by the
        solver's start check). A hinge does not excuse an overlap away from its pin."""
        return bool(self.pins or self.contacts)

    @property
    def pair(self):
        """``'Crank' and 'Rod'``."""
        return f"'{self.first.Label}' and '{self.second.Label}'"

    def volume_text(self):
        return units.user_text(self.volume, "mm^3")

    def depth_text(self):
        return units.user_text(self.depth, "mm")

    def centre_text(self):
        return units.user_vector_text(self.centre, "mm")

    def joined_text(self):
        """``hinged by 'J1'``, ``contact 'C1'``, or ``""``."""
        words = []
        if self.pins:
            words.append("hinged by " + ", ".join(f"'{h.Label}'" for h in self.hinges))
        elif self.hinges:
            words.append("hinged by " + ", ".join(f"'{h.Label}'" for h in self.hinges)
                         + ", but not at the pin: the parts themselves overlap")
        if self.contacts:
            words.append("contact " + ", ".join(f"'{c.Label}'" for c in self.contacts))
        return "; ".join(words)

    def text(self):
        """One line: ``'A' and 'B' overlap by 168 mm^3 (depth 3 mm) at (8.5, 6, 6.5) mm``."""
        joined = self.joined_text()
        return (f"{self.pair} overlap by {self.volume_text()} (depth {self.depth_text()}) at "
                f"{self.centre_text()}" + (f" ({joined})" if joined else ""))


@dataclass
class Interference:
    """What :func:`check` found.

    Attributes
    ----------
    mechanism : App.DocumentObject
    bodies : int
        How many bodies were checked.
    pairs : int
        How many pairs of bodies were considered.
    candidates : int
        How many of them had meeting bounding boxes (a boolean common was computed).
    overlaps : list of Overlap
        The pairs no pin or contact excuses first, then the excused ones
        (:attr:`Overlap.excused`); larger volumes first.
    failures : list of str
        Pairs whose common OCC could not compute, with OCC's reason.
    """

    mechanism: object
    bodies: int = 0
    pairs: int = 0
    candidates: int = 0
    overlaps: list = field(default_factory=list)
    failures: list = field(default_factory=list)

    def headline(self):
        """``No overlaps between the 3 bodies of 'Engine'``, or ``2 overlapping pairs of bodies
        in 'Engine' (1 hinged)``."""
        name = f"'{self.mechanism.Label}'"
        if not self.overlaps:
            if self.bodies < 2:
                return f"No overlaps: {name} has fewer than two bodies"
            return f"No overlaps between the {self.bodies} bodies of {name}"
        n = len(self.overlaps)
        hinged = sum(1 for o in self.overlaps if o.pins)
        head = f"{n} overlapping pair{'s' if n != 1 else ''} of bodies in {name}"
        if hinged:
            head += f" ({hinged} hinged)" if hinged < n else " (hinged)" if n == 1 else \
                " (all hinged)"
        return head


def body_solids(body):
    """The solids of ``body``'s linked objects, each at its global placement (a list of
    Part.Solid)."""
    out = []
    for obj in body.Solids:
        shape = solid_shape(obj)
        if shape is not None:
            out.extend(shape.Solids)
    return out


def _marker_body(obj, prop):
    marker = getattr(obj, prop, None)
    return getattr(marker, "Body", None) if marker is not None else None


def holds(hinge):
    """Whether ``hinge`` holds its bodies together: any type but those leaving all six
    coordinates free (free, bushing: a body floating, which nothing keeps out of another)."""
    kind = HINGE_TYPES.get(getattr(hinge, "HingeType", None))
    return kind is not None and len(kind.coordinates) < 6


def joints(mechanism):
    """``frozenset({body Name, body Name}) -> (hinges, contacts)``: the Hinge objects that hold
    two bodies of ``mechanism`` together directly (:func:`holds`) and the Contact objects
    between them."""
    out = {}
    for type_name, slot in ((HINGE, 0), (CONTACT, 1)):
        for obj in members(mechanism, type_name):
            if type_name == HINGE and not holds(obj):
                continue
            a, b = _marker_body(obj, "InputMarker"), _marker_body(obj, "OutputMarker")
            if a is None or b is None or a.Name == b.Name:
                continue
            out.setdefault(frozenset((a.Name, b.Name)), ([], []))[slot].append(obj)
    return out


def _axis(hinge):
    """``(origin, unit z or None)`` (mm, global) of ``hinge``'s pin: its input marker's
    origin and z axis (None for a ball's centre); None when it has no pin."""
    import FreeCAD
    kind = getattr(hinge, "HingeType", None)
    marker = getattr(hinge, "InputMarker", None)
    if marker is None or kind not in AXIS_TYPES + CENTRE_TYPES:
        return None
    pl = marker.Placement
    z = pl.Rotation.multVec(FreeCAD.Vector(0, 0, 1)) if kind in AXIS_TYPES else None
    return FreeCAD.Vector(pl.Base), z


def radial_extent(piece, origin, z=None):
    """The smallest and largest distance (mm) of a solid ``piece`` from the line through
    ``origin`` along ``z`` (from the point ``origin`` when ``z`` is None): the smallest by OCC's
    distance (0 when the line passes through it), the largest over its vertices and points
    along its edges."""
    import Part
    if z is None:
        target = Part.Vertex(origin)

        def dist(p):
            return (p - origin).Length
    else:
        box = piece.BoundBox
        reach = box.DiagonalLength + (box.Center - origin).Length + 1.0
        target = Part.LineSegment(origin - z * reach, origin + z * reach).toShape()

        def dist(p):
            d = p - origin
            return (d - z * d.dot(z)).Length
    points = [v.Point for v in piece.Vertexes]
    for edge in piece.Edges:
        if edge.Degenerated:            # a sphere's pole: a point, already a vertex
            continue
        points.extend(edge.discretize(24))
    r_max = max((dist(p) for p in points), default=0.0)
    r_min = float(piece.distToShape(target)[0])
    if r_min > 0.0 and piece.isInside(origin, 1e-9, True):
        r_min = 0.0                     # the pin's axis or the ball's centre inside the piece
    return r_min, float(r_max)


def at_pin(pieces, hinges, fit=PIN_FIT):
    """The hinges of ``hinges`` at whose pin every solid of ``pieces`` (an overlap's common)
    lies: a thin shell about the pin's axis or the ball's centre, its distance from it varying
    by at most ``fit`` of the largest (:func:`radial_extent`)."""
    out = []
    for hinge in hinges:
        axis = _axis(hinge)
        if axis is None or not pieces:
            continue
        extents = [radial_extent(piece, *axis) for piece in pieces]
        if all(r_max > 0.0 and r_max - r_min <= fit * r_max for r_min, r_max in extents):
            out.append(hinge)
    return out


def _boxes_meet(a, b):
    return a.BoundBox.intersect(b.BoundBox)


def _common(solids_a, solids_b):
    """The common solids of two lists of solids (boxes first) and how many boolean operations
    were made."""
    pieces, made = [], 0
    for a in solids_a:
        for b in solids_b:
            if not _boxes_meet(a, b):
                continue
            made += 1
            common = a.common(b)
            pieces.extend(s for s in common.Solids if s.Volume > 0.0)
    return pieces, made


#: A common whose mean thickness (2 V / A) is below this fraction of its bounding box's smallest
#: extent is a thin shell: its depth is that thickness (see :func:`depth_estimate`).
THIN_SHELL = 0.25


def depth_estimate(solid):
    """How deep an overlap ``solid`` is (mm): the smallest extent of its bounding box, exact for
    boxes pressed into each other along an axis; for a thin shell (a pin drawn too large in its
    bore, a slanted slab), whose box is much larger than its thickness, the mean thickness
    ``2 V / A`` (V its volume, A its surface area) when that is below :data:`THIN_SHELL` times
    the box's smallest extent."""
    box = solid.BoundBox
    extent = min(box.XLength, box.YLength, box.ZLength)
    area = solid.Area
    thickness = 2.0 * solid.Volume / area if area > 0.0 else extent
    return thickness if thickness < THIN_SHELL * extent else extent


def overlap_of(first, second, solids_first, solids_second, rtol=VOLUME_RTOL):
    """The :class:`Overlap` of two bodies given their solids (global), or None when they do not
    overlap (a common volume up to ``rtol`` times the smaller body's volume). OCC's errors
    propagate."""
    import Part
    pieces, _ = _common(solids_first, solids_second)
    volume = sum(s.Volume for s in pieces)
    smaller = min(sum(s.Volume for s in solids_first), sum(s.Volume for s in solids_second))
    if not pieces or volume <= rtol * smaller:
        return None
    centre = [0.0, 0.0, 0.0]
    for s in pieces:
        c = s.CenterOfMass
        for i in range(3):
            centre[i] += s.Volume * c[i] / volume
    depth = depth_estimate(max(pieces, key=lambda s: s.Volume))
    return Overlap(first, second, volume, depth, tuple(centre), Part.Compound(pieces))


def _pieces(overlap):
    return list(overlap.shape.Solids) if overlap.shape is not None else []


def check(mechanism, include=None, rtol=VOLUME_RTOL):
    """The overlaps between the bodies of ``mechanism`` as drawn (see the module's doc).

    Parameters
    ----------
    mechanism : App.DocumentObject
        A Mechanism.
    include : callable, optional
        ``include(first, second, hinges, contacts) -> bool``: which pairs of Body objects to
        check (all by default); ``hinges`` and ``contacts`` join them directly.
    rtol : float
        Volume tolerance relative to the smaller body's volume.

    Returns
    -------
    Interference
    """
    import Part
    bodies = members(mechanism, BODY)
    joined = joints(mechanism)
    result = Interference(mechanism, bodies=len(bodies))
    solids = {b.Name: body_solids(b) for b in bodies}
    boxes = {name: Part.Compound(found).BoundBox for name, found in solids.items() if found}
    for i, first in enumerate(bodies):
        for second in bodies[i + 1:]:
            hinges, contacts = joined.get(frozenset((first.Name, second.Name)), ([], []))
            if include is not None and not include(first, second, hinges, contacts):
                continue
            result.pairs += 1
            a, b = boxes.get(first.Name), boxes.get(second.Name)
            if a is None or b is None or not a.intersect(b):
                continue
            result.candidates += 1
            try:
                found = overlap_of(first, second, solids[first.Name], solids[second.Name], rtol)
            except Exception as exc:  # noqa: BLE001 - OCC's boolean failed: said, not raised
                result.failures.append(f"'{first.Label}' and '{second.Label}': the common "
                                       f"could not be computed ({type(exc).__name__}: {exc})")
                continue
            if found is not None:
                found.hinges, found.contacts = list(hinges), list(contacts)
                try:
                    found.pins = at_pin(_pieces(found), hinges)
                except Exception:  # noqa: BLE001 - OCC's distance failed: no excuse
                    found.pins = []
                result.overlaps.append(found)
    result.overlaps.sort(key=lambda o: (o.excused, -o.volume))
    return result


def unjoined_overlaps(mechanism):
    """The overlaps nothing excuses (:attr:`Overlap.excused`): bodies that no contact is
    defined between, overlapping anywhere but at the pin of a hinge joining them (a pin may sit
    in its bore; links drawn into each other's layer may not). What a run would let pass
    through each other without a word (a contact drawn overlapping is refused by the solver's
    start check)."""
    found = check(mechanism, include=lambda a, b, hinges, contacts: not contacts)
    found.overlaps = [o for o in found.overlaps if not o.excused]
    return found
