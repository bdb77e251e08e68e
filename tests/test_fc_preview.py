"""The kinematic preview (MultibodyWB.document.preview) in headless FreeCAD, on the crank-slider
built from solids: setting the crank angle turns the crank solid by that angle about the main
bearing, the moved drawing satisfies every hinge (checked by exporting it again and measuring the
hinges' residuals with the solver), a position the loop cannot reach is refused in words, and
restore() gives back the exact placements with the document unchanged.
"""

import numpy as np
import pytest

pytestmark = pytest.mark.freecad


@pytest.fixture
def engine(freecad):
    from MultibodyWB.examples_fc import crank_slider
    doc = freecad.newDocument("Preview")
    mech = crank_slider.setup(doc)
    yield doc, mech
    freecad.closeDocument(doc.Name)


def _placements(doc):
    return {o.Name: o.Placement for o in doc.Objects if hasattr(o, "Placement")}


def _drawn_residuals(mech):
    """Largest residual (rad, mm) of every hinge in the document as it is now."""
    from MultibodyWB.objects import export
    from MultibodyWB.solver.analysis.kinematics import mobility
    m = mobility(export.to_model(mech))
    res = np.array(list(m.drawn_residuals.values()))
    return float(np.max(np.abs(res[:, :3]))), float(np.max(np.abs(res[:, 3:]))) * 1000.0


def test_coordinates_and_free_set(engine):
    from MultibodyWB.document.preview import KinematicPreview
    doc, mech = engine
    p = KinematicPreview(mech)
    names = [(h.Label, c) for h, c in p.hinges()]
    assert names == [("MainBearing", "rz"), ("WristPin", "rx"), ("WristPin", "ry"),
                     ("Cylinder", "z")]
    assert p.driven == ("MainBearing.rz",)
    assert [(h.Label, c) for h, c in p.driven_coordinates()] == [("MainBearing", "rz")]
    # one degree of freedom, and it is driven: nothing left to drag
    assert p.mobility.dof == 1
    assert p.free_coordinates() == []
    assert abs(p.value(doc.getObject("MainBearing"), "rz")) < 1e-9    # drawn: 0 (see example)
    p.restore()


def test_free_set_without_driver(engine):
    from MultibodyWB.document.preview import KinematicPreview
    doc, mech = engine
    doc.getObject("MainBearing").DriverRz = ""
    doc.recompute()
    p = KinematicPreview(mech)
    free = [(h.Label, c) for h, c in p.free_coordinates()]
    assert free == [("MainBearing", "rz")]         # the hinge at the ground comes first
    p.restore()


def test_set_crank_angle_closes_loop_and_restores(freecad, engine):
    from MultibodyWB.document.preview import KinematicPreview
    doc, mech = engine
    before = _placements(doc)
    undo = doc.UndoCount
    crank = doc.getObject("CrankWeb")
    rest = crank.Placement
    hinge = doc.getObject("MainBearing")
    p = KinematicPreview(mech)
    for angle in (30.0, 135.0, -70.0):
        assert p.set(hinge, "rz", angle) is None
        assert p.value(hinge, "rz") == pytest.approx(angle, abs=1e-9)
        assert p.residual() < 1e-10
        # the crank solid turned by the angle about the shaft (the marker's z), through the
        # main bearing's centre
        turn = crank.Placement.multiply(rest.inverse())
        expected = freecad.Rotation(freecad.Vector(0, 1, 0), angle)
        assert turn.Rotation.isSame(expected, 1e-9), (angle, turn.Rotation.Axis,
                                                      turn.Rotation.Angle)
        assert turn.Base.Length < 1e-6               # the shaft's centre is the origin
        # the moved drawing, exported again, satisfies every hinge (solver's measure)
        rot, mm = _drawn_residuals(mech)
        assert rot < 1e-8 and mm < 1e-6, (angle, rot, mm)
        # the piston followed: it slides along z only
        piston = doc.getObject("PistonBody").Placement
        assert abs(piston.Base.x) < 1e-6 and abs(piston.Base.y) < 1e-6
    p.restore()
    after = _placements(doc)
    assert all(after[name] == before[name] for name in before), \
        [n for n in before if after[n] != before[n]]
    assert doc.UndoCount == undo
    assert not [o.Name for o in doc.Objects if "Touched" in o.State]


def test_unreachable_refused_in_words(freecad, engine):
    from MultibodyWB.document.preview import KinematicPreview
    doc, mech = engine
    p = KinematicPreview(mech)
    before = _placements(doc)
    message = p.set(doc.getObject("Cylinder"), "z", 5000.0)
    assert message is not None
    assert "'Cylinder'" in message and "mm" in message and "'MainBearing'" in message
    assert " m;" not in message and "rad" not in message
    assert _placements(doc) == before                 # nothing moved
    with pytest.raises(KeyError, match="no tree coordinate"):
        p.set(doc.getObject("MainBearing"), "x", 1.0)
    p.restore()


def test_drawing_gaps_name_the_hinge_in_user_units(freecad, engine):
    from MultibodyWB.document.preview import KinematicPreview
    doc, mech = engine
    assert KinematicPreview(mech).drawing_gaps() == []         # the engine is drawn assembled
    marker = doc.getObject("FrameMain")                        # the main bearing, frame side
    offset = marker.AttachmentOffset
    # 10 mm off the shaft (across it: along it, the run and the preview keep the offset, as
    # for markers picked on stacked bores, tests/test_fc_stacked_layers.py)
    marker.AttachmentOffset = freecad.Placement(offset.Base + freecad.Vector(10, 0, 0),
                                                offset.Rotation)
    doc.recompute()
    gaps = KinematicPreview(mech).drawing_gaps()
    assert gaps == ["'MainBearing' is drawn 10.00 mm and 0.00 ° away from what the hinge allows"]
