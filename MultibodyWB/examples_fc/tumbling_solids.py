"""The solids tumbling down a tilted plate of ``MultibodyWB/examples/tumbling_solids.py`` built
from FreeCAD solids whose contact surfaces are no primitives.

Same slope, fence, solids' sizes, density, drawn positions and orientations, contact law and
simulation settings as the code-built example, whose constants are reused:

- the ground is the plate (a box tilted by the slope, its top face through the origin) and the
  fence (a box standing on it down the slope);
- the egg is a sphere scaled along its axis (``transformGeometry``: a B-spline solid), the cone a
  ``Part.makeCone``, the prism a hexagon extruded; each drawn at its start, turned as the code
  example turns it.

Contacts are made as the Contact command makes them from picks: the plate's top face and the
fence's face up the slope are planes (markers on their middles, z the outward normal); each
solid, picked whole, is no primitive and becomes its convex hull: the vertices of its tessellation
at the default tolerance (1 % of its size), its marker at its centre of mass, nothing moved; the
stiffness by the default rule (the weight on three points 0.01 mm deep). The hulls come from the
solids' tessellation, not from the code example's points: the two runs agree to the tessellation.

Run inside FreeCAD (``setup(FreeCAD.newDocument())``) or headless; :func:`setup` returns the
Mechanism.
"""

import itertools
import math

import FreeCAD

from ..document import factory
from ..examples import tumbling_solids as code
from ..objects import contact
from .crank_slider import _feature, _vec

M = 1000.0      #: mm per m
PLATE = dict(up=230.0, width=140.0, thickness=10.0)        #: mm: up the slope from the origin
FENCE = dict(thickness=10.0, height=40.0)                  #: mm


def _bryant(angles):
    """FreeCAD rotation of Bryant angles (rad): R = Rx(a) Ry(b) Rz(c)."""
    a, b, c = (math.degrees(x) for x in angles)
    return FreeCAD.Rotation(FreeCAD.Vector(1, 0, 0), a).multiply(
        FreeCAD.Rotation(FreeCAD.Vector(0, 1, 0), b)).multiply(
        FreeCAD.Rotation(FreeCAD.Vector(0, 0, 1), c))


def solids(doc):
    """The plate, the fence and the three solids (``Part::Feature``), drawn; by name."""
    import Part
    tilt = FreeCAD.Rotation(FreeCAD.Vector(0, 1, 0), math.degrees(code.TILT))
    on_plate = FreeCAD.Placement(FreeCAD.Vector(), tilt)
    fence_u, w = code.FENCE * M, PLATE["width"]
    found = {
        "Plate": _feature(doc, "Plate", Part.makeBox(
            PLATE["up"] + fence_u + FENCE["thickness"], w, PLATE["thickness"],
            _vec((-PLATE["up"], -w / 2, -PLATE["thickness"]))), on_plate),
        "Fence": _feature(doc, "Fence", Part.makeBox(
            FENCE["thickness"], w, FENCE["height"], _vec((fence_u, -w / 2, 0.0))), on_plate),
    }
    a, b = (x * M for x in code.EGG)
    scale = FreeCAD.Matrix()
    scale.scale(a / b, 1.0, 1.0)
    r, h = (x * M for x in code.CONE)
    s, length = (x * M for x in code.PRISM)
    hexagon = Part.makePolygon([_vec((s * math.cos(math.pi * j / 3),
                                      s * math.sin(math.pi * j / 3), -length / 2))
                                for j in range(7)])
    shapes = {"Egg": Part.makeSphere(b).transformGeometry(scale),
              "Cone": Part.makeCone(r, 0.0, h, _vec((0, 0, -h / 4))),
              "Prism": Part.Face(hexagon).extrude(_vec((0, 0, length)))}
    for name, _, angles in code.START:
        placement = FreeCAD.Placement(_vec(code.start_position(name) * M), _bryant(angles))
        found[name] = _feature(doc, name, shapes[name], placement)
    doc.recompute()
    return found


def _face(obj, normal):
    """Name of the planar face of ``obj`` whose outward normal is ``normal`` (global)."""
    want = _vec(normal)
    for i, f in enumerate(obj.Shape.Faces, 1):
        if type(f.Surface).__name__ == "Plane":
            n = f.normalAt(*f.Surface.parameter(f.CenterOfMass))
            if (n - want).Length < 1e-9:
                return f"Face{i}"
    raise ValueError(f"'{obj.Label}' has no face facing {normal}")


def setup(doc):
    """Build the plate, the fence and the tumbling solids in ``doc``; return the Mechanism."""
    parts = solids(doc)
    mech = factory.make_mechanism(doc, "TumblingSolids", gravity=(0.0, 0.0, -9810.0),
                                  description="an egg, a cone and a hexagonal prism tumbling "
                                              "down a tilted plate against a fence")
    ground = factory.make_body(doc, mech, [parts["Plate"], parts["Fence"]], ground=True,
                               name="Ground", label="tilted plate and fence")
    down, _, normal = code.plate_frame()
    plate_face = (parts["Plate"], _face(parts["Plate"], normal))
    fence_face = (parts["Fence"], _face(parts["Fence"], -down))
    planes = {"Plate": factory.make_marker(doc, ground, plate_face, name="PlateTop",
                                           label="plate top"),
              "Fence": factory.make_marker(doc, ground, fence_face, name="FenceFace",
                                           label="fence face")}
    origin = factory.make_marker(doc, ground, None, name="Origin", label="origin")
    made = []
    for name, _, _ in code.START:
        solid = parts[name]
        body = factory.make_body(doc, mech, solid, density=code.DENSITY, name=f"{name} body",
                                 label=name.lower())
        hull = contact.convex(solid)
        centre = factory.make_marker(doc, body, (solid, ""), offset=hull.offset,
                                     name=f"{name}Centre", label=f"{name} centre of mass")
        factory.make_hinge(doc, mech, "free", centre, origin, name=f"{name}Free")
        made.append((name, body, centre, hull))
    law = dict(exponent=1.5, restitution=code.RESTITUTION, impact_speed=1000.0,
               static_friction=code.FRICTION[0], dynamic_friction=code.FRICTION[1],
               stiction_velocity=10.0)
    doc.recompute()

    def add(name, ends, shapes, bodies):
        k, rule = contact.default_stiffness(shapes, bodies, 9.81)
        factory.make_contact(doc, mech, *ends, *[(s.type, s.dimensions()) for s in shapes], k,
                             name=name, stiffness_rule=rule, **law)

    for name, body, centre, hull in made:
        for wall in ("Plate", "Fence"):
            add(f"{name}{wall}", (centre, planes[wall]),
                (hull, contact.Recognised("plane")), (body, ground))
    for (n1, b1, c1, h1), (n2, b2, c2, h2) in itertools.combinations(made, 2):
        add(f"{n1}{n2}", (c1, c2), (h1, h2), (b1, b2))
    sim = [o for o in mech.Group if getattr(o.Proxy, "Type", "") == "Multibody::Simulation"][0]
    sim.EndTime = f"{code.END_TIME!r} s"
    sim.Integrator = "DOP853"
    sim.RelativeTolerance, sim.AbsoluteTolerance = "1e-8", "1e-10"
    sim.OutputStep, sim.Step = "2e-3 s", "1e-5 s"
    doc.recompute()
    return mech
