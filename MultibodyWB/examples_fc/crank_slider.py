"""The crank-slider engine of ``MultibodyWB/examples/crank_slider.py`` built from FreeCAD solids.

Same dimensions, densities, drawn crank angle, hinges (spatial variant: revolute main bearing,
spherical big end, universal wrist pin, prismatic piston), gas force, driver and simulation settings
as the code-built example, whose constants and functions are reused. Here they are Part solids,
Multibody objects made with :mod:`MultibodyWB.document.factory`, and markers picked on the solids'
faces and edges, as a designer would click them:

- each link (crank, rod) is a web (a box) with its bearing bores, plus the bushes and pins pressed
  into them: a body of several solids. The bushes fill the bores, so each body has the volume of
  the code example's plain box and the same mass properties, to the round-off of OCC's Boolean
  operations;
- the piston is the code example's cylinder with the wrist pin bore, plus the wrist pin filling it,
  again the same volume (the bore stops inside the skirt: a pin clipped by the skirt would have
  faces bounded by intersection curves, whose OCC mass properties are only approximate, 1e-5);
- the frame (ground) is a crankcase block behind the crank with the main bearing bore, and the
  cylinder liner.

Markers: bearing bores and pins are cylindrical faces (``InertialCS``: origin on the axis, halfway
along the bore), the piston's crown edge and the liner's top edge are circles (``Concentric``), the
crown is a planar face (``FlatFace``, centred). The hinge frames are then turned about their axes
(:func:`MultibodyWB.document.factory.orient_marker`) as the code example orients them: the main
bearing's x along the crank as drawn (drawn crank coordinate 0, which the driver starts from), the
wrist pin's first axis along global x and its second along the pin, the piston's slide frames alike
on both sides. The main bearing marker of the frame is moved from the middle of the crankcase bore
to the crank's mid-plane by its attachment offset.

Run inside FreeCAD (``setup(FreeCAD.newDocument())``) or headless; :func:`setup` returns the
Mechanism.
"""

import FreeCAD
import numpy as np

from ..document import factory
from ..examples import crank_slider as code
from ..examples.parts import ALUMINIUM, STEEL, frame_along

M = 1000.0      #: mm per m
CRANK = dict(width=30.0, thickness=12.0, overhang=15.0, bores=(10.0, 8.0))   #: mm
ROD = dict(width=20.0, thickness=10.0, overhang=12.0, bores=(8.0, 6.0))      #: mm
WRIST_PIN_RADIUS = 6.0      #: mm
WRIST_PIN_LENGTH = 50.0     #: mm, inside the piston (its bore is a closed cavity: simple geometry)
CRANKCASE = dict(x=70.0, y=(-40.0, -8.0), z=70.0)   #: mm, the block behind the crank
LINER = dict(inner=code.BORE / 2 * M, outer=42.0, z=(75.0, 215.0))   #: mm


def _vec(v):
    return FreeCAD.Vector(*(float(x) for x in v))


def _rotation(R):
    m = FreeCAD.Matrix()
    for i in range(3):
        for j in range(3):
            setattr(m, f"A{i + 1}{j + 1}", float(R[i][j]))
    return FreeCAD.Rotation(m)


def _feature(doc, name, shape, placement=None):
    obj = doc.addObject("Part::Feature", name)
    obj.Shape = shape.Solids[0] if shape.Solids else shape
    if placement is not None:
        obj.Placement = placement
    return obj


def find_element(obj, kind, test):
    """Name (``"Face3"``, ``"Edge7"``) of the first face or edge of ``obj`` passing ``test``.

    ``kind`` is ``"Face"`` or ``"Edge"``; ``test`` gets the element in global coordinates.
    """
    elements = obj.Shape.Faces if kind == "Face" else obj.Shape.Edges
    for i, element in enumerate(elements, 1):
        if test(element):
            return f"{kind}{i}"
    raise LookupError(f"no such {kind.lower()} on {obj.Label}")


def _cylinder_face(radius, center):
    """Test for a cylindrical face of ``radius`` whose axis passes through ``center`` (global)."""
    def test(face):
        s = face.Surface
        if type(s).__name__ != "Cylinder" or abs(s.Radius - radius) > 1e-7:
            return False
        d = _vec(center) - s.Center
        return (d - s.Axis * d.dot(s.Axis)).Length < 1e-6
    return test


def _circle_edge(radius, center):
    def test(edge):
        c = edge.Curve
        return type(c).__name__ == "Circle" and abs(c.Radius - radius) < 1e-7 and \
            (c.Center - _vec(center)).Length < 1e-6
    return test


def _link(doc, name, start, end, width, thickness, overhang, bores):
    """Web with two bores and the two bushes filling them; local x from start to end, z along the
    shaft; return the solids and the placement (the code example's base frame)."""
    import Part
    start, end = np.asarray(start) * M, np.asarray(end) * M
    length = float(np.linalg.norm(end - start))
    placement = FreeCAD.Placement(_vec(start), _rotation(frame_along(end - start, code.SHAFT)))
    e, t = overhang, thickness
    web = Part.makeBox(length + 2 * e, width, t, FreeCAD.Vector(-e, -width / 2, -t / 2))
    bushes = [Part.makeCylinder(r, t, FreeCAD.Vector(x, 0, -t / 2))
              for r, x in zip(bores, (0.0, length))]
    for bush in bushes:
        web = web.cut(bush)
    solids = [_feature(doc, f"{name}Web", web, placement)]
    solids += [_feature(doc, f"{name}{part}", bush, placement)
               for part, bush in zip(("BigEndBush", "SmallEndBush") if name == "Rod" else
                                     ("Journal", "Pin"), bushes)]
    return solids, placement, length


def setup(doc, theta0_deg=60.0, rpm=3000.0):
    """Build the engine in ``doc`` drawn at crank angle ``theta0_deg``; return the Mechanism."""
    import Part
    theta0 = np.radians(theta0_deg)
    pin, wrist = code.positions(theta0)
    shaft, up, x_axis = _vec(code.SHAFT), _vec(code.UP), FreeCAD.Vector(1, 0, 0)
    crank_dir = _vec(pin)

    # -- solids -----------------------------------------------------------------------------
    crank_solids, _, _ = _link(doc, "Crank", np.zeros(3), pin, **CRANK)
    rod_solids, _, _ = _link(doc, "Rod", pin, wrist, **ROD)
    r_piston, h_piston = code.BORE / 2 * M, code.PISTON_HEIGHT * M
    bottom = (code.PIN_BELOW_CROWN - code.PISTON_HEIGHT) * M
    piston_shape = Part.makeCylinder(r_piston, h_piston, FreeCAD.Vector(0, 0, bottom))
    pin_shape = Part.makeCylinder(WRIST_PIN_RADIUS, WRIST_PIN_LENGTH,
                                  FreeCAD.Vector(0, -WRIST_PIN_LENGTH / 2, 0),
                                  FreeCAD.Vector(0, 1, 0))
    piston_place = FreeCAD.Placement(_vec(wrist * M), FreeCAD.Rotation())
    piston = _feature(doc, "PistonBody", piston_shape.cut(pin_shape), piston_place)
    wrist_pin = _feature(doc, "WristPinSolid", pin_shape, piston_place)
    cc = CRANKCASE
    case = Part.makeBox(cc["x"], cc["y"][1] - cc["y"][0], cc["z"],
                        FreeCAD.Vector(-cc["x"] / 2, cc["y"][0], -cc["z"] / 2))
    case = case.cut(Part.makeCylinder(CRANK["bores"][0], cc["y"][1] - cc["y"][0],
                                      FreeCAD.Vector(0, cc["y"][0], 0), shaft))
    crankcase = _feature(doc, "Crankcase", case)
    z0, z1 = LINER["z"]
    liner = _feature(doc, "Liner", Part.makeCylinder(LINER["outer"], z1 - z0, _vec((0, 0, z0)))
                     .cut(Part.makeCylinder(LINER["inner"], z1 - z0, _vec((0, 0, z0)))))
    doc.recompute()

    # -- bodies -----------------------------------------------------------------------------
    mech = factory.make_mechanism(doc, "CrankSlider", gravity=np.array(code.UP) * -9810.0,
                                  description="single-cylinder engine crank-slider "
                                              "(spatial hinges)")
    ground = factory.make_body(doc, mech, [crankcase, liner], ground=True, name="Ground",
                               label="engine frame")
    crank = factory.make_body(doc, mech, crank_solids, density=STEEL, name="Crank",
                              label="crank")
    rod = factory.make_body(doc, mech, rod_solids, density=STEEL, name="Rod",
                            label="connecting rod")
    piston_body = factory.make_body(doc, mech, [piston, wrist_pin], density=ALUMINIUM,
                                    name="Piston", label="piston")

    # -- markers, picked on the solids --------------------------------------------------------
    def bore(obj, radius, center):
        return obj, find_element(obj, "Face", _cylinder_face(radius, center))

    web, crank_pin = crank_solids[0], crank_solids[2]
    c_main = factory.make_marker(doc, crank, bore(web, CRANK["bores"][0], (0, 0, 0)),
                                 name="CrankMain", label="Crank start")
    c_pin = factory.make_marker(doc, crank, (crank_pin, "Face1"), name="CrankPinMarker",
                                label="Crank end")
    r_big = factory.make_marker(doc, rod, bore(rod_solids[0], ROD["bores"][0], pin * M),
                                name="RodBigEnd", label="Rod start")
    r_small = factory.make_marker(doc, rod, (rod_solids[2], "Face1"), name="RodSmallEnd",
                                  label="Rod end")
    p_pin = factory.make_marker(doc, piston_body,
                                bore(wrist_pin, WRIST_PIN_RADIUS, wrist * M),
                                name="PistonPin", label="wrist pin")
    crown_z = wrist[2] * M + code.PIN_BELOW_CROWN * M
    p_slide = factory.make_marker(
        doc, piston_body, (piston, find_element(piston, "Edge",
                                                _circle_edge(r_piston, (0, 0, crown_z)))),
        name="PistonSlide", label="cylinder axis")
    p_crown = factory.make_marker(
        doc, piston_body, (piston, find_element(
            piston, "Face", lambda f: type(f.Surface).__name__ == "Plane" and
            abs(f.CenterOfMass.z - crown_z) < 1e-6)), name="PistonCrown", label="crown")
    case_bore = bore(crankcase, CRANK["bores"][0], (0, 0, 0))
    mid = (cc["y"][0] + cc["y"][1]) / 2            # the bore's middle, behind the crank
    g_main = factory.make_marker(doc, ground, case_bore, offset=FreeCAD.Vector(0, 0, -mid),
                                 name="FrameMain", label="main bearing")
    g_cyl = factory.make_marker(
        doc, ground, (liner, find_element(liner, "Edge",
                                          _circle_edge(LINER["inner"], (0, 0, LINER["z"][1])))),
        name="CylinderAxis", label="cylinder axis")

    # the frames, turned about their axes as the code example orients them
    for marker in (c_main, c_pin, r_big, g_main):
        factory.orient_marker(marker, z=shaft, x=crank_dir)
    for marker in (r_small, p_pin):
        factory.orient_marker(marker, z=up, x=x_axis)
    for marker in (p_slide, g_cyl):
        factory.orient_marker(marker, z=up, x=x_axis)

    # -- hinges, force, settings --------------------------------------------------------------
    omega = rpm * 2 * np.pi / 60
    factory.make_hinge(doc, mech, "revolute", c_main, g_main, name="MainBearing",
                       drivers={"rz": f"{omega!r}*t"})
    factory.make_hinge(doc, mech, "spherical", r_big, c_pin, name="BigEnd")
    factory.make_hinge(doc, mech, "universal", p_pin, r_small, name="WristPin")
    factory.make_hinge(doc, mech, "prismatic", p_slide, g_cyl, name="Cylinder")
    factory.make_force(doc, mech, "point_force", p_crown, name="GasForce", direction=(0, 0, -1),
                       magnitude=code.gas_force_expression(rpm, theta0))
    sim = [o for o in mech.Group if getattr(o.Proxy, "Type", "") == "Multibody::Simulation"][0]
    sim.EndTime, sim.OutputStep, sim.Step = "0.08 s", "1e-4 s", "1e-5 s"
    doc.recompute()
    return mech
