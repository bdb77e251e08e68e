"""A four-bar of bored Part boxes stacked along the pins, hinges picked on the bores' faces.

The geometry of ``tests/gui/check_four_bar_drawing.py``: a crank-rocker four-bar, links 10 mm
thick stacked along the pins (ground plate z 0..10, crank and rocker z 10..20, coupler z 20..30),
the crank drawn at 90 deg. Every revolute hinge's markers are picked on the two bores'
cylindrical faces, so they sit mid-bore, 10 mm apart along the pin. Shared by the headless tests
(:func:`build` makes it through :mod:`MultibodyWB.document.factory`) and the GUI checks (which
make it through the commands with :func:`solids` and :func:`bore_face`). Not a test module.
"""

import math

import numpy as np

BORE = 4.0            #: mm radius
WIDTH = 16.0          #: mm
THICK = 10.0          #: mm, a layer
O = np.array([30.0, 40.0])
GROUND, CRANK, COUPLER, ROCKER = 120.0, 40.0, 120.0, 80.0
#: hinge name -> (moving solid, its pin, fixed solid, its pin), pins named O, A, B, D
HINGES = (("CrankPivot", "Crank", "O", "Plate", "O"), ("CrankPin", "Coupler", "A", "Crank", "A"),
          ("RockerPin", "Coupler", "B", "Rocker", "B"), ("RockerPivot", "Rocker", "D", "Plate", "D"))


def pins():
    """O, A, B, D in the plane (mm): crank at 90 deg, B the upper intersection."""
    D = O + [GROUND, 0.0]
    A = O + [0.0, CRANK]
    AD = D - A
    d = np.linalg.norm(AD)
    a = (COUPLER ** 2 - ROCKER ** 2 + d ** 2) / (2 * d)
    h = math.sqrt(COUPLER ** 2 - a ** 2)
    u = AD / d
    n = np.array([-u[1], u[0]])
    if n[1] < 0:
        n = -n
    return {"O": O, "A": A, "B": A + a * u + h * n, "D": D}


def _link(FreeCAD, doc, name, p, q, z0):
    """A bar from pin p to pin q (mm, plane), THICK high from z0, a bore at each end."""
    import Part
    L = float(np.linalg.norm(q - p))
    bar = Part.makeBox(L + WIDTH, WIDTH, THICK, FreeCAD.Vector(-WIDTH / 2, -WIDTH / 2, 0))
    for x in (0.0, L):
        bar = bar.cut(Part.makeCylinder(BORE, THICK, FreeCAD.Vector(x, 0, 0)))
    angle = math.degrees(math.atan2(q[1] - p[1], q[0] - p[0]))
    obj = doc.addObject("Part::Feature", name)
    obj.Shape = bar
    obj.Placement = FreeCAD.Placement(FreeCAD.Vector(p[0], p[1], z0),
                                      FreeCAD.Rotation(FreeCAD.Vector(0, 0, 1), angle))
    return obj


def solids(FreeCAD, doc):
    """The four solids, by name: Plate (the ground), Crank, Rocker, Coupler."""
    import Part
    P = pins()
    box = Part.makeBox(GROUND + 60, 50, THICK, FreeCAD.Vector(O[0] - 30, O[1] - 25, 0))
    for p in (P["O"], P["D"]):
        box = box.cut(Part.makeCylinder(BORE, THICK, FreeCAD.Vector(p[0], p[1], 0)))
    plate = doc.addObject("Part::Feature", "Plate")
    plate.Shape = box
    out = {"Plate": plate,
           "Crank": _link(FreeCAD, doc, "Crank", P["O"], P["A"], THICK),
           "Rocker": _link(FreeCAD, doc, "Rocker", P["D"], P["B"], THICK),
           "Coupler": _link(FreeCAD, doc, "Coupler", P["A"], P["B"], 2 * THICK)}
    doc.recompute()
    return out


def bore_face(obj, pin):
    """The name of the cylindrical face of ``obj``'s bore at ``pin`` (mm, plane)."""
    for i, f in enumerate(obj.Shape.Faces, 1):
        s = f.Surface
        if type(s).__name__ == "Cylinder" and abs(s.Radius - BORE) < 1e-6:
            c = f.CenterOfMass
            if math.hypot(c.x - pin[0], c.y - pin[1]) < 1e-6:
                return f"Face{i}"
    raise LookupError(f"no bore of {obj.Name} at {pin}")


def build(FreeCAD, doc, motor_rpm=None):
    """The mechanism made with the factory; returns ``(mechanism, solids, bodies, hinges)``,
    the last three dicts by name. ``motor_rpm``: a motor on the crank pivot."""
    from MultibodyWB.document import factory
    P = pins()
    parts = solids(FreeCAD, doc)
    mech = factory.make_mechanism(doc, "FourBar")
    bodies = {"Plate": factory.make_body(doc, mech, parts["Plate"], ground=True, name="Ground")}
    for name in ("Crank", "Rocker", "Coupler"):
        bodies[name] = factory.make_body(doc, mech, parts[name], name=f"{name}Body",
                                         label=name)
    hinges = {}
    for name, moving, p, fixed, q in HINGES:
        a = factory.make_marker(doc, bodies[moving],
                                (parts[moving], bore_face(parts[moving], P[p])))
        b = factory.make_marker(doc, bodies[fixed], (parts[fixed], bore_face(parts[fixed], P[q])))
        options = {}
        if name == "CrankPivot" and motor_rpm:
            options["motor_speed"] = {"rz": 6.0 * motor_rpm}
        hinges[name] = factory.make_hinge(doc, mech, "revolute", a, b, name=name, **options)
    doc.recompute()
    return mech, parts, bodies, hinges


def axial(obj):
    """Where ``obj`` is along the pins: its placement's z (mm) and the x, y of its z axis (a
    tilt out of the plane)."""
    import FreeCAD
    z_axis = obj.Placement.Rotation.multVec(FreeCAD.Vector(0, 0, 1))
    return float(obj.Placement.Base.z), float(z_axis.x), float(z_axis.y)
