"""Set-up that scales (issue 34): building and preparing a model is linear in its size.

The numbers given to bodies and hinges stay those of the whole scan they replaced (one more than
the largest id of the bodies and hinges) whatever was done to the lists in between; the work
done per added element, and per hinge of a loop's Jacobian, does not grow with the model
(counted, not timed)."""

from __future__ import annotations

import numpy as np
import pytest

from MultibodyWB.examples import build
from MultibodyWB.solver.analysis import kinematics
from MultibodyWB.solver.analysis.topology import analyse
from MultibodyWB.solver.model import MultibodySystem
from MultibodyWB.solver.model.mechanism import Hinge, MarkerRef, RigidBody


def scanned(m) -> int:
    """The id the old whole scan gave: one more than the largest of bodies and hinges."""
    return max([b.id for b in m.bodies] + [h.id for h in m.hinges], default=0) + 1


def body(m, name, **kw):
    return m.add_body(name, 1.0, [1, 1, 1, 0, 0, 0], **kw)


def hinge(m, name, **kw):
    return m.add_hinge(name, "revolute", MarkerRef("Ground", 1), MarkerRef(name, 1), **kw)


def test_ids_mixed_explicit_and_implicit():
    m = MultibodySystem()
    m.set_ground()
    assert body(m, "A").id == 1
    assert hinge(m, "H1").id == 2
    assert body(m, "B", id=10).id == 10            # given: kept
    assert body(m, "C").id == 11                   # after the largest
    assert hinge(m, "H2", id=5).id == 5            # given, below the largest
    assert hinge(m, "H3").id == 12
    assert body(m, "D", id=3).id == 3              # given again, lower
    assert body(m, "E").id == 13
    ids = [x.id for x in m.bodies + m.hinges]
    assert sorted(ids) == [1, 2, 3, 5, 10, 11, 12, 13]


@pytest.mark.parametrize("edit", [
    "append", "insert", "remove_largest", "pop_last", "replace_list", "slice_assign",
    "id_changed", "element_replaced_new", "permute", "clear", "other_list_new_hinge",
    "insert_made_before"])
def test_ids_after_direct_list_edits(edit):
    """Every edit of the lists done directly, then ids given as the whole scan would give."""
    m = MultibodySystem()
    m.set_ground()
    for i in range(6):
        body(m, f"B{i}")
        hinge(m, f"H{i}")
    assert [b.id for b in m.bodies] == [1, 3, 5, 7, 9, 11]
    if edit == "append":
        m.bodies.append(RigidBody("X", id=40))
    elif edit == "insert":
        m.hinges.insert(0, Hinge("X", 50, "revolute", MarkerRef("Ground", 1),
                                 MarkerRef("B0", 1)))
    elif edit == "remove_largest":
        m.hinges.remove(m.hinges[-1])              # id 12: the largest goes
    elif edit == "pop_last":
        m.bodies.pop()
        m.hinges.pop()
    elif edit == "replace_list":
        m.bodies = [RigidBody("Y", id=2)]
        m.hinges = []
    elif edit == "slice_assign":
        m.hinges[:] = [h for h in m.hinges if h.id < 6]
        m.bodies[:] = m.bodies[:2]
    elif edit == "id_changed":
        m.bodies[2].id = 77
    elif edit == "element_replaced_new":
        m.bodies[1] = RigidBody("Z", id=60)
    elif edit == "permute":
        h = m.hinges.pop(0)
        m.hinges.append(h)
        m.bodies.reverse()
    elif edit == "clear":
        m.bodies.clear()
        m.hinges.clear()
    elif edit == "insert_made_before":
        early = Hinge("E", 70, "revolute", MarkerRef("Ground", 1), MarkerRef("B0", 1))
        body(m, "after")
        m.hinges.insert(0, early)                  # not at the end: found all the same
    elif edit == "other_list_new_hinge":
        lone = Hinge("L", 99, "revolute", MarkerRef("Ground", 1), MarkerRef("B0", 1))
        body(m, "after")                           # a body added after the hinge was made
        m.hinges.append(lone)
    expected = scanned(m)
    assert body(m, "new").id == expected
    expected = scanned(m)
    assert hinge(m, "newh").id == expected
    ids = [x.id for x in m.bodies + m.hinges]
    assert len(set(ids)) == len(ids) or edit == "replace_list"


def test_ids_of_a_copy_and_a_read_model():
    """Copies and models whose lists were built elsewhere (the XML reader) number on."""
    import copy
    import pickle
    m = build("four_bar")
    for twin in (copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        expected = scanned(twin)
        assert body(twin, "extra").id == expected
        assert body(m, "extra").id == expected     # the original unaffected by the copy
        m.bodies.pop()


def test_adding_looks_at_each_id_once(monkeypatch):
    """Adding n bodies and hinges reads the bodies' ids O(n) times, not O(n^2) (the chain of
    400 links: 400 reads; the whole scan on every add read 160,000)."""
    reads = [0]

    original = RigidBody.__getattribute__

    def counting(self, key):
        if key == "id":
            reads[0] += 1
        return original(self, key)

    monkeypatch.setattr(RigidBody, "__getattribute__", counting)
    m = build("chain", n=400)
    assert [b.id for b in m.bodies[:3]] == [1, 3, 5] and m.hinges[-1].id == 800
    assert reads[0] < 10 * 400, reads[0]


def test_loop_jacobian_makes_the_coordinate_table_once_per_body(monkeypatch):
    """The loop's Jacobian of a ring of n links: the table of the hinges' coordinates is made a
    few times, not once per hinge on the loop (n times)."""
    import sys
    import os
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "benchmarks"))
    from bench_loop_rows import ring
    m = ring(41)
    topo = analyse(m)
    calls = [0]
    original = kinematics.coordinate_slices

    def counted(*a):
        calls[0] += 1
        return original(*a)

    monkeypatch.setattr(kinematics, "coordinate_slices", counted)
    q = kinematics.drawn_coordinates(m, topo)
    J, _ = kinematics.loop_jacobian(m, topo, q)
    assert J.shape == (5, 41)
    assert calls[0] <= 4, calls[0]
    # the same Jacobian as the twists of the hinges one by one (motion_subspace)
    monkeypatch.setattr(kinematics, "coordinate_slices", original)
    poses = kinematics.forward_kinematics(m, topo, q)
    h = m.hinge(topo.cut_hinges[0])
    p = kinematics.marker_pose(m, h.input, poses).p
    body_J = kinematics.twist_jacobian(m, topo, h.input.body, q, poses, p)
    slices = kinematics.coordinate_slices(m, topo)
    for name in topo.tree_hinges[:5]:
        S = kinematics.motion_subspace(m, topo, name, q, poses, p)
        np.testing.assert_array_equal(body_J[:, slices[name]], S)
    # a mapping of coordinates gives the same
    split = kinematics.split_coordinates(m, topo, q)
    np.testing.assert_array_equal(
        kinematics.twist_jacobian(m, topo, h.input.body, split, poses, p), body_J)


@pytest.mark.parametrize("wrong_size", [False, True])
def test_frames_checked_at_once_report_what_one_by_one_does(monkeypatch, wrong_size):
    """The frames of all bodies are looked at together (validation._fine_frames); a body with
    a frame that is not three finite numbers within the limits is reported as before."""
    from MultibodyWB.solver.model import validation
    m = build("chain", n=30)
    m.bodies[3].markers[1].frame.position = np.array([np.nan, 0.0, 0.0])
    m.bodies[7].orientation = np.array([0.0, 2e6, 0.0])              # beyond MAX_ANGLE
    m.bodies[9].mass_center.position = np.array([0.0, 0.0, -2e6])    # beyond MAX_POSITION
    bad = ["RigidBody 'Link4'", "RigidBody 'Link8'", "RigidBody 'Link10'"]
    if wrong_size:                    # no array of them all: each body looked at alone
        m.bodies[12].markers[0].frame.orientation = np.array([0.0, 1.0])
        bad.append("RigidBody 'Link13'")
    found = [str(p) for p in m.validate()]
    monkeypatch.setattr(validation, "_fine_frames", lambda parts: set())
    one_by_one = [str(p) for p in m.validate()]
    assert found == one_by_one
    assert [p.split(",")[0] for p in found] == bad


def test_result_column_clash_of_a_contact_and_a_hinge():
    """The hinges' result columns are listed only when a name is shared (lazily): a contact
    called like a hinge is still refused."""
    m = build("bouncing_balls")
    m.contacts[0].name = m.hinges[0].name
    problems = [str(p) for p in m.validate()]
    assert len(problems) == 1 and "would have the names of those of Hinge" in problems[0]
