"""The cam-driven valve of ``MultibodyWB/examples/cam_valve.py`` built from FreeCAD solids.

Same dimensions, densities, drawn position, hinges (revolute camshaft bearing driven from the
drawing, prismatic tappet guide with its stops), valve spring, cam contact and simulation settings
as the code-built example, whose constants are reused:

- the camshaft is three solids: two journals and the eccentric disc between them (the journals stop
  at the disc's faces: the same volume as the code example's);
- the follower is the tappet, the stem and the valve head;
- the ground (cylinder head) is a bearing block around the rear journal, a sleeve guiding the
  tappet (above its drawn position: clear of the cam) and the spring seat, a plate the stem passes
  through.

Markers are picked on faces and edges as a designer clicks them and then moved or turned as the
code example places them: the camshaft bearing on the journal's bore face, moved along the axis
to the disc's mid-plane; the disc's cylindrical face (its axis, halfway along: the contact's
cylinder); the tappet's flat face twice (the slide frame, z up, and the contact's plane, z down
onto the cam); the guide sleeve's lower bore edge, moved down the axis to the drawn tappet face
(the slide frames coincide as drawn: the stops' limits are the code example's); the stem's
cylindrical face (the spring's retainer, halfway along the stem) and the seat plate's hole edge.

Run inside FreeCAD (``setup(FreeCAD.newDocument())``) or headless; :func:`setup` returns the
Mechanism.
"""

import math

import FreeCAD

from ..document import factory
from ..examples import cam_valve as code
from ..examples.parts import STEEL
from .crank_slider import _circle_edge, _cylinder_face, _feature, _vec, find_element

M = 1000.0      #: mm per m
BEARING = dict(y=(-30.0, -20.0), size=40.0)                  #: mm, the rear bearing block
SLEEVE = dict(outer=22.0, z=(10.0, 25.0))                    #: mm, above the drawn tappet face
SEAT_PLATE = dict(hole=5.0, size=50.0, thickness=5.0)        #: mm


def _move_to(marker, target):
    """Move ``marker``'s origin to ``target`` (global, mm) through its attachment offset."""
    marker.positionBySupport()
    p = marker.Placement
    local = p.Rotation.inverted().multVec(_vec(target) - p.Base)
    marker.AttachmentOffset = marker.AttachmentOffset.multiply(
        FreeCAD.Placement(local, FreeCAD.Rotation()))
    marker.positionBySupport()
    return marker


def setup(doc, rpm=1000.0):
    """Build the valve train in ``doc`` with the camshaft at ``rpm``; return the Mechanism."""
    import Part
    R, e, w = code.CAM_RADIUS * M, code.ECCENTRICITY * M, code.CAM_WIDTH * M
    rs, half = code.SHAFT_RADIUS * M, code.SHAFT_LENGTH * M / 2
    face = R - e                                    # the tappet face, touching the disc's top
    y_axis, up, down, x_axis = (FreeCAD.Vector(0, 1, 0), FreeCAD.Vector(0, 0, 1),
                                FreeCAD.Vector(0, 0, -1), FreeCAD.Vector(1, 0, 0))

    # -- solids (global coordinates, mm) ------------------------------------------------------
    rear = _feature(doc, "RearJournal", Part.makeCylinder(rs, half - w / 2,
                                                          _vec((0, -half, 0)), y_axis))
    disc = _feature(doc, "Eccentric", Part.makeCylinder(R, w, _vec((0, -w / 2, -e)), y_axis))
    front = _feature(doc, "FrontJournal", Part.makeCylinder(rs, half - w / 2,
                                                            _vec((0, w / 2, 0)), y_axis))
    th, sl = code.TAPPET_HEIGHT * M, code.STEM_LENGTH * M
    tappet = _feature(doc, "Tappet", Part.makeCylinder(code.TAPPET_RADIUS * M, th,
                                                       _vec((0, 0, face))))
    stem = _feature(doc, "Stem", Part.makeCylinder(code.STEM_RADIUS * M, sl,
                                                   _vec((0, 0, face + th))))
    head = _feature(doc, "ValveHead", Part.makeCylinder(code.HEAD_RADIUS * M,
                                                        code.HEAD_HEIGHT * M,
                                                        _vec((0, 0, face + th + sl))))
    (y0, y1), s = BEARING["y"], BEARING["size"]
    block = Part.makeBox(s, y1 - y0, s, _vec((-s / 2, y0, -s / 2)))
    bearing = _feature(doc, "BearingBlock",
                       block.cut(Part.makeCylinder(rs, y1 - y0, _vec((0, y0, 0)), y_axis)))
    z0, z1 = face + SLEEVE["z"][0], face + SLEEVE["z"][1]
    rt = code.TAPPET_RADIUS * M
    sleeve = _feature(doc, "GuideSleeve",
                      Part.makeCylinder(SLEEVE["outer"], z1 - z0, _vec((0, 0, z0)))
                      .cut(Part.makeCylinder(rt, z1 - z0, _vec((0, 0, z0)))))
    seat_z = face + th + sl / 2 + code.SPRING_LENGTH * M
    ps, pt = SEAT_PLATE["size"], SEAT_PLATE["thickness"]
    plate = _feature(doc, "SpringSeat",
                     Part.makeBox(ps, ps, pt, _vec((-ps / 2, -ps / 2, seat_z)))
                     .cut(Part.makeCylinder(SEAT_PLATE["hole"], pt, _vec((0, 0, seat_z)))))
    doc.recompute()

    # -- bodies -------------------------------------------------------------------------------
    mech = factory.make_mechanism(doc, "CamValve", gravity=(0.0, 0.0, -9810.0),
                                  description="eccentric cam lifting a flat-faced valve against "
                                              "its spring")
    ground = factory.make_body(doc, mech, [bearing, sleeve, plate], ground=True, name="Ground",
                               label="cylinder head")
    camshaft = factory.make_body(doc, mech, [rear, disc, front], density=STEEL,
                                 name="Camshaft", label="camshaft with its eccentric")
    valve = factory.make_body(doc, mech, [tappet, stem, head], density=STEEL, name="Valve",
                              label="tappet and valve")

    # -- markers, picked on the solids ------------------------------------------------------------
    def pick(obj, kind, test):
        return obj, find_element(obj, kind, test)

    c_axis = factory.make_marker(doc, camshaft, pick(rear, "Face", _cylinder_face(rs, (0, 0, 0))),
                                 name="CamshaftAxis", label="camshaft axis")
    c_disc = factory.make_marker(doc, camshaft, pick(disc, "Face", _cylinder_face(R, (0, 0, -e))),
                                 name="EccentricCentre", label="eccentric disc centre")
    g_axis = factory.make_marker(doc, ground, pick(bearing, "Face", _cylinder_face(rs, (0, 0, 0))),
                                 name="CamshaftBearing", label="camshaft bearing")
    bottom = find_element(tappet, "Face", lambda f: type(f.Surface).__name__ == "Plane"
                          and abs(f.CenterOfMass.z - face) < 1e-6)
    v_slide = factory.make_marker(doc, valve, (tappet, bottom), name="TappetAxis",
                                  label="tappet axis")
    v_face = factory.make_marker(doc, valve, (tappet, bottom), name="TappetFace",
                                 label="tappet face (normal down)")
    v_spring = factory.make_marker(doc, valve, pick(stem, "Face", _cylinder_face(
        code.STEM_RADIUS * M, (0, 0, face))), name="SpringRetainer", label="spring retainer")
    g_slide = factory.make_marker(doc, ground, pick(sleeve, "Edge", _circle_edge(rt, (0, 0, z0))),
                                  name="TappetBore", label="tappet bore")
    g_spring = factory.make_marker(doc, ground, pick(plate, "Edge", _circle_edge(
        SEAT_PLATE["hole"], (0, 0, seat_z))), name="SpringSeatMarker", label="spring seat")

    # moved and turned as the code example places them
    for marker in (c_axis, g_axis):
        _move_to(marker, (0, 0, 0))
    _move_to(g_slide, (0, 0, face))
    for marker in (c_axis, c_disc, g_axis):
        factory.orient_marker(marker, z=y_axis, x=x_axis)
    for marker in (v_slide, g_slide, v_spring, g_spring):
        factory.orient_marker(marker, z=up, x=x_axis)
    factory.orient_marker(v_face, z=down, x=x_axis)

    # -- hinges, force, contact, settings ---------------------------------------------------------
    omega = rpm * 2 * math.pi / 60
    factory.make_hinge(doc, mech, "revolute", c_axis, g_axis, name="CamBearing",
                       label="camshaft bearing", drivers={"rz": f"{omega!r}*t"})
    factory.make_hinge(doc, mech, "prismatic", v_slide, g_slide, name="Guide",
                       label="tappet bore", lower_limits={"z": -code.STOP_MARGIN * M},
                       upper_limits={"z": (2 * code.ECCENTRICITY + code.STOP_MARGIN) * M},
                       stop_stiffness={"z": code.STOP_STIFFNESS}, stop_restitution={"z": 0.3},
                       stop_impact_speed={"z": 500.0})
    factory.make_force(doc, mech, "spring_damper", v_spring, g_spring, name="ValveSpring",
                       label="valve spring", stiffness=code.SPRING_RATE,
                       damping=code.SPRING_DAMPING,
                       free_length=(code.SPRING_LENGTH + code.PRELOAD / code.SPRING_RATE) * M)
    factory.make_contact(doc, mech, c_disc, v_face, ("cylinder", {"radius": R, "length": w}),
                         ("plane", {}), code.CONTACT_STIFFNESS, name="CamContact",
                         label="cam on tappet face", exponent=1.5, restitution=0.5,
                         impact_speed=500.0, static_friction=0.05, dynamic_friction=0.05,
                         stiction_velocity=1.0)
    sim = [o for o in mech.Group if getattr(o.Proxy, "Type", "") == "Multibody::Simulation"][0]
    sim.EndTime = f"{2 * 60.0 / rpm!r} s"
    sim.OutputStep, sim.Step = "1e-4 s", "1e-5 s"
    doc.recompute()
    return mech

