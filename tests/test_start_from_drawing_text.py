"""What the start check tells a designer who typed an initial coordinate into a loop (issue 32,
item 10): every body that the run would move, measured from the drawing (what they see move in
the 3D view), the body whose coordinate they changed among them, and that coordinate named as
the one given."""

import math

import numpy as np
import pytest

from MultibodyWB.examples import build
from MultibodyWB.examples.parts import frame_along
from MultibodyWB.solver.analysis.kinematics import drawn_poses, hinge_coordinates
from MultibodyWB.solver.analysis.start import StartCorrectionError, prepare
from MultibodyWB.solver.analysis.topology import analyse
from MultibodyWB.solver.maths.rotations import matrix_to_bryant

AXIS = np.array([0.0, 1.0, 0.0])


def four_bar(crank_deg=60.0):
    m = build("four_bar", theta_deg=crank_deg)
    m.ground.marker(1).frame.orientation = matrix_to_bryant(frame_along([1.0, 0.0, 0.0], AXIS))
    return m


def angle_between(Ra, Rb):
    return math.acos(max(-1.0, min(1.0, (np.trace(Ra @ Rb.T) - 1.0) / 2.0)))


def test_a_typed_crank_angle_is_reported_against_the_drawing():
    m = four_bar(60.0)
    cut = analyse(m).cut_hinges
    assert "CrankPivot" not in cut                       # a tree hinge: the loop follows it
    q = hinge_coordinates(m, m.hinge("CrankPivot"))
    m.hinge("CrankPivot").initial_coordinates = q + math.radians(20.0)
    with pytest.raises(StartCorrectionError) as err:
        prepare(m)
    report = err.value.report
    drawn = drawn_poses(m)
    moves = {mv.name: mv for mv in report.moves}
    # the crank the designer turned is listed, 20 deg from the drawing and not moved along
    assert "Crank" in moves
    assert math.degrees(moves["Crank"].angle) == pytest.approx(20.0, abs=1e-9)
    # every body's angle and largest point displacement are those from the drawing
    for name, mv in moves.items():
        start, was = report.poses[name], drawn[name]
        assert mv.angle == pytest.approx(angle_between(start.R, was.R), abs=1e-12), name
        body = m.body(name)
        points = [np.zeros(3)] + [mk.frame.position for mk in body.markers]
        far = max(np.linalg.norm(start.R @ x + start.p - was.R @ x - was.p) for x in points)
        assert mv.distance >= far - 1e-12, name
    # the rocker turns about its ground pivot by what the loop makes it: less than the crank
    assert 0.0 < moves["Rocker"].angle < math.radians(20.0)
    # the correction itself is still what decides (the crank is where it was typed)
    assert report.moved and "Crank" not in {mv.name for mv in report.corrected}
    # and the coordinate given is named, in degrees
    text = str(err.value)
    given, was = math.degrees(q[0]) + 20.0, math.degrees(q[0])      # -40 and -60 deg
    assert f"Hinge 'CrankPivot', field Start: coordinate rz starts at {given:.4g} deg as given " \
        f"(drawn at {was:.4g} deg)" in text, text


def test_nothing_corrected_nothing_listed():
    """A typed start the loops take as it is (the tree's only coordinate, no loop change)
    moves bodies as given without asking."""
    m = build("double_pendulum")
    h = m.hinges[0]
    q = hinge_coordinates(m, h)
    h.initial_coordinates = q + 0.3
    _, report = prepare(m)
    assert not report.moved and report.moves == [] and report.corrected == []
