"""Make a track (a chain, a belt) of shoes wrapped round picked wheels (issue 34 item 1).

The wheels are picked cylindrical faces (:func:`wheel_circles`): each gives a circle, its axis
and radius; all axes parallel. The track lies in the plane normal to them through the first
face's middle. In that plane ``x`` and ``z`` (:class:`Plane`): ``z`` the global Z projected
on the plane (up: the slack hangs along -z), ``y`` the wheels' axis, ``x = y × z``. The pins'
path is the solver's wrap (:func:`MultibodyWB.solver.model.wrap.wrap`) of the circles grown by
half the shoe's thickness.

A shoe is a solid whose local frame has ``x`` along the track (from its rear pin to its front
pin), ``y`` along the pins and ``z`` out of the loop; its pins are ``pitch / 2`` either side of
the centre of its local bounding box along ``x`` (:class:`Shoe`). Either a box that
:func:`make_track` makes (``Part::Box``, pitch x width x thickness; its pins at the middles of
its two end faces) or a solid the user picked (left where it is: every shoe is then a link to
it).

:func:`make_track` makes, in one transaction: the box shoe (or nothing, for a picked shoe),
``App::Link`` objects to it for the other shoes, placed at the shoes' poses (the document stays
light), a body per shoe (:func:`~.factory.make_body`), two markers per shoe at its pins (their z
along the wheels' axis, :func:`~.factory.make_marker`) and a pin hinge (revolute, or bushing
with its stiffness and damping) from each shoe's rear pin to the front pin of the shoe before
it (:func:`~.factory.make_hinge`), the last closing the loop, and a planar hinge holding the
first shoe in the track's plane on the mechanism's ground (the track otherwise hangs on
nothing: no contacts yet). Nothing the user drew moves.

Lengths in mm (FreeCAD's internal unit), densities in kg/m^3; the wrap is computed in metres.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import FreeCAD

from ..objects import units
from ..objects.body import solid_placement, solid_shape
from . import factory

#: Names of the objects a track makes start with the track's name and these.
SHOE, LINK, BODY = "Shoe", "ShoeLink", "ShoeBody"


def _vec(v):
    return FreeCAD.Vector(float(v[0]), float(v[1]), float(v[2]))


@dataclass
class Plane:
    """The track's plane: ``origin`` (mm) and the unit vectors ``x``, ``y`` (the wheels' axis),
    ``z`` (up, in the plane), all ``FreeCAD.Vector``."""
    origin: object
    x: object
    y: object
    z: object

    def point(self, xz_m):
        """The global point (mm) of plane coordinates (x, z) in metres."""
        return self.origin + self.x * (1000.0 * float(xz_m[0])) + self.z * (1000.0 * float(xz_m[1]))

    def coordinates(self, point):
        """Plane coordinates (x, z) in metres of a global point (mm)."""
        d = point - self.origin
        return (d.dot(self.x) / 1000.0, d.dot(self.z) / 1000.0)


@dataclass
class Wheel:
    """A picked wheel: the solid, the face's name, its circle in the plane (x, z, radius, m)."""
    solid: object
    sub: str
    circle: tuple

    def words(self):
        return f"'{self.solid.Label}' {self.sub}"


def _cylinder(solid, sub):
    """(axis point, unit axis, radius, the face's middle along the axis) of a picked
    cylindrical face, global, mm; a ValueError naming the face otherwise."""
    shape = solid_shape(solid)
    if shape is None:
        raise ValueError(f"'{solid.Label}' has no shape")
    try:
        face = shape.getElement(sub)
    except Exception:  # noqa: BLE001 - FreeCAD raises its own error for a missing element
        raise ValueError(f"'{solid.Label}' has no {sub}") from None
    surface = getattr(face, "Surface", None)
    if face.ShapeType != "Face" or type(surface).__name__ != "Cylinder":
        raise ValueError(f"'{solid.Label}' {sub} is not a cylindrical face: pick each wheel's "
                         "cylindrical face (its rim)")
    axis = FreeCAD.Vector(surface.Axis)
    axis.normalize()
    centre = FreeCAD.Vector(surface.Center)
    mid = centre + axis * (face.CenterOfMass - centre).dot(axis)
    return centre, axis, float(surface.Radius), mid


def wheel_plane(picks):
    """The track's :class:`Plane` from the picked faces ``picks`` ((solid, "FaceN"), ...) and
    their :class:`Wheel` s (circles in metres, radii as drawn). A ValueError names a face that is
    not cylindrical or whose axis is not parallel to the first one's."""
    picks = list(picks)
    if len(picks) < 2:
        raise ValueError("pick the cylindrical faces of at least two wheels")
    found = [(solid, sub, *_cylinder(solid, sub)) for solid, sub in picks]
    axis = FreeCAD.Vector(found[0][3])
    # the axis's sense as drawn is arbitrary (a face's surface may point either way): the one
    # nearest global +y (then +x, +z), so that a track along x with axes along y has x as x
    for k in (1, 0, 2):
        if abs(axis[k]) > 1e-12:
            if axis[k] < 0:
                axis = -axis
            break
    for solid, sub, _, a, _, _ in found[1:]:
        if a.cross(axis).Length > 1e-9:
            raise ValueError(f"'{solid.Label}' {sub}: its axis is not parallel to the first "
                             f"wheel's ('{found[0][0].Label}' {found[0][1]})")
    up = FreeCAD.Vector(0, 0, 1)
    z = up - axis * up.dot(axis)
    if z.Length < 1e-9:                       # wheels' axes vertical: the track lies flat
        z = FreeCAD.Vector(0, 1, 0) - axis * axis.y
    z.normalize()
    x = axis.cross(z)
    plane = Plane(found[0][5], x, FreeCAD.Vector(axis), z)
    wheels = []
    for solid, sub, centre, _, radius, _ in found:
        cx, cz = plane.coordinates(centre)
        wheels.append(Wheel(solid, sub, (cx, cz, radius / 1000.0)))
    return plane, wheels


@dataclass
class Shoe:
    """A shoe's shape: the pins in its local frame (mm, rear and front), its thickness and width
    (mm; along local z and y) and the solid (None: a box :func:`make_track` makes)."""
    rear: object
    front: object
    thickness: float
    width: float
    solid: object = None


def box_shoe(pitch, width, thickness):
    """A ``Part::Box`` shoe of ``pitch`` x ``width`` x ``thickness`` (mm): its pins at the middles
    of its two end faces."""
    return Shoe(FreeCAD.Vector(0, width / 2, thickness / 2),
                FreeCAD.Vector(pitch, width / 2, thickness / 2), float(thickness), float(width))


def picked_shoe(solid, pitch):
    """The shoe of a picked ``solid``: its pins ``pitch / 2`` (mm) either side of its local
    bounding box's centre along its local x."""
    shape = solid_shape(solid)
    if shape is None or not shape.Solids:
        raise ValueError(f"'{solid.Label}' is not a solid: pick a shoe solid")
    local = shape.copy()
    local.Placement = solid_placement(solid).inverse().multiply(shape.Placement)
    b = local.BoundBox
    c = FreeCAD.Vector(b.Center)
    half = FreeCAD.Vector(pitch / 2, 0, 0)
    return Shoe(c - half, c + half, float(b.ZLength), float(b.YLength), solid)


@dataclass
class Plan:
    """A track as it would be made: the plane, the wheels, the shoe, the wrap (metres), the
    shoes' placements and the pins (global, mm)."""
    plane: Plane
    wheels: list
    shoe: Shoe
    pitch: float
    wrap: object
    placements: list
    pins: list

    @property
    def count(self):
        return len(self.pins)

    def summary(self):
        """Count, pitch, perimeter and sag in the user's units."""
        return {"count": str(self.count), "tight": str(self.wrap.tight),
                "pitch": units.user_text(self.pitch, "mm"),
                "perimeter": units.user_text(1000.0 * self.wrap.hull.perimeter, "mm"),
                "sag": units.user_text(1000.0 * self.wrap.sag, "mm")}


def _grown(wheels, thickness):
    return [(x, z, r + thickness / 2000.0) for x, z, r in (w.circle for w in wheels)]


def tight_count(picks, pitch, thickness):
    """The fewest shoes of ``pitch`` (mm) and ``thickness`` (mm) that go round the picked
    wheels."""
    from ..solver.api import chain_tight_count
    _, wheels = wheel_plane(picks)
    return chain_tight_count(_grown(wheels, thickness), pitch / 1000.0)


def plan(picks, pitch, shoe, count=None):
    """The :class:`Plan` of ``count`` shoes (default: the tight count) of ``pitch`` (mm), shaped
    as ``shoe`` (:class:`Shoe`), round the picked wheels. ValueError: bad picks, too few shoes
    (saying how many at the least), a slack that cannot hang."""
    from ..solver.api import chain_tight_count, wrap_chain
    if not (math.isfinite(pitch) and pitch > 0):
        raise ValueError("the pitch must be > 0")
    if not (math.isfinite(shoe.thickness) and shoe.thickness > 0):
        raise ValueError("the shoe's thickness must be > 0")
    plane, wheels = wheel_plane(picks)
    circles = _grown(wheels, shoe.thickness)
    p = pitch / 1000.0
    n = chain_tight_count(circles, p) if count is None else int(count)
    w = wrap_chain(circles, p, n)
    pins = [plane.point(q) for q in w.pins]
    placements = []
    for i in range(n):
        a, b = pins[i], pins[(i + 1) % n]
        X = b - a
        X.normalize()
        Z = plane.y.cross(X)                  # out of the loop (counter-clockwise in x, z)
        Y = Z.cross(X)
        R = FreeCAD.Rotation(X, Y, Z, "ZXY")
        base = a - R.multVec(shoe.rear)
        placements.append(FreeCAD.Placement(base, R))
    return Plan(plane, wheels, shoe, float(pitch), w, placements, pins)


def make_track(doc, mechanism, picks, pitch, width=None, thickness=None, count=None,
               density=7850.0, shoe_solid=None, joint="revolute", stiffness=None, damping=None,
               tilt_stiffness=None, tilt_damping=None, in_plane=True, name="Track"):
    """Make the track (module doc) of ``count`` shoes (default: the tight count) round the
    picked wheels ``picks`` ((solid, "FaceN"), ...) in ``mechanism``, in one transaction.

    ``pitch``, ``width``, ``thickness``: mm (the box shoe's; a picked ``shoe_solid`` gives its
    own width and thickness); ``density``: kg/m^3 (each shoe body's). ``joint``: "revolute" or
    "bushing"; a bushing's ``stiffness`` and ``damping`` (N/m, N s/m: its x, y and z) and
    ``tilt_stiffness``, ``tilt_damping`` (N m/rad, N m s/rad: its rx, ry; its rz is the pin's
    free turn). ``in_plane``: shoe 0 on a planar hinge to the mechanism's ground (the track
    held in its plane; the last of ``hinges``). Returns a dict: ``shoes`` (solids and links),
    ``bodies``, ``markers`` ((rear, front) per shoe), ``hinges``, ``plan``.
    """
    if in_plane and getattr(mechanism, "Ground", None) is None:
        raise ValueError(f"mechanism '{mechanism.Label}' has no ground: the track's planar "
                         "hinge holds its first shoe on it (make a ground first)")
    if joint not in ("revolute", "bushing"):
        raise ValueError(f"the pin joint is 'revolute' or 'bushing', not '{joint}'")
    if shoe_solid is not None:
        shoe = picked_shoe(shoe_solid, pitch)
    else:
        if width is None or thickness is None or not (width > 0 and thickness > 0):
            raise ValueError("the box shoe needs a width and a thickness > 0")
        shoe = box_shoe(pitch, width, thickness)
    p = plan(picks, pitch, shoe, count)
    n = p.count
    options = {}
    if joint == "bushing":
        k, c = stiffness or 0.0, damping or 0.0
        kt, ct = tilt_stiffness or 0.0, tilt_damping or 0.0
        options = dict(stiffness=[f"{k!r} N/m"] * 3 + [f"{kt!r} N*m/rad"] * 2 + ["0 N*m/rad"],
                       damping=[f"{c!r} N*s/m"] * 3 + [f"{ct!r} N*m*s/rad"] * 2
                       + ["0 N*m*s/rad"])
    doc.openTransaction(f"Track of {n} shoes")
    try:
        if shoe_solid is None:
            prototype = doc.addObject("Part::Box", f"{name}{SHOE}")
            prototype.Length, prototype.Width, prototype.Height = pitch, shoe.width, \
                shoe.thickness
            prototype.Placement = p.placements[0]
            prototype.Label = f"{name} shoe"
            shoes, first = [prototype], 1
        else:
            prototype, shoes, first = shoe_solid, [], 0
        for i in range(first, n):
            link = doc.addObject("App::Link", f"{name}{LINK}")
            link.setLink(prototype)
            link.LinkPlacement = p.placements[i]
            link.Label = f"{name} shoe {i}"
            shoes.append(link)
        doc.recompute()
        turn = FreeCAD.Rotation(FreeCAD.Vector(1, 0, 0), -90)        # marker z = shoe's y
        bodies, markers = [], []
        for i, solid in enumerate(shoes):
            body = factory.make_body(doc, mechanism, solid, density=density,
                                     name=f"{name} shoe {i} body")
            # FreeCAD's attacher takes no App::Link for a support: the pins are markers on no
            # solid, at their offsets in the body's base frame (the shoe's placement; they
            # follow it on recompute)
            ends = tuple(factory.make_marker(doc, body, (None, None),
                                             offset=FreeCAD.Placement(pin, turn),
                                             name=f"{name} shoe {i} {which} pin")
                         for which, pin in (("rear", shoe.rear), ("front", shoe.front)))
            bodies.append(body)
            markers.append(ends)
        hinges = []
        for i in range(n):
            hinges.append(factory.make_hinge(doc, mechanism, joint, markers[i][0],
                                             markers[i - 1][1], name=f"{name} pin {i}",
                                             **options))
        if in_plane:
            # shoe 0 on a planar hinge to the ground: the track in its plane, joined to the
            # mechanism (until contacts hold it on its wheels)
            ground = mechanism.Ground
            on_shoe = factory.make_marker(doc, bodies[0], (None, None),
                                          offset=FreeCAD.Placement(shoe.rear, turn),
                                          name=f"{name} plane")
            doc.recompute()
            base = ground.BasePlacement
            on_ground = factory.make_marker(doc, ground, None,
                                            offset=base.inverse().multiply(on_shoe.Placement),
                                            name=f"{name} plane on {ground.Label}")
            hinges.append(factory.make_hinge(doc, mechanism, "planar", on_shoe, on_ground,
                                             name=f"{name} plane"))
        doc.recompute()
    except Exception:
        doc.abortTransaction()
        raise
    doc.commitTransaction()
    return {"shoes": shoes, "bodies": bodies, "markers": markers, "hinges": hinges, "plan": p}
