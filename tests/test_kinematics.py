"""Kinematics of the tree: hinge poses and coordinates, forward kinematics, motion subspaces,
the loop-closure Jacobian (against finite differences) and the mobility."""

import numpy as np
import pytest

from MultibodyWB.solver.analysis import kinematics as kin
from MultibodyWB.solver.model import HINGE_TYPES, MultibodySystem
from MultibodyWB.solver.maths.rotations import (bryant_to_matrix, matrix_to_bryant, rotation_vector,
                                           rot_x, rot_y, rot_z)
from MultibodyWB.solver.analysis.topology import analyse

from test_topology import (CRANK, add_body, branched_tree, bushing_loop, connect, crank_slider,
                           double_pendulum, four_bar, free_body, inner_loop, pendulum)

TYPES = sorted(HINGE_TYPES)


def random_q(kind, rng):
    """Coordinates in the range where the Bryant decomposition is unique (|ry| < pi/2)."""
    q = []
    for c in kind.coordinates:
        if c == "ry":
            q.append(rng.uniform(-1.4, 1.4))
        elif c in ("rx", "rz"):
            q.append(rng.uniform(-3.0, 3.0))
        else:
            q.append(rng.uniform(-2.0, 2.0))
    return np.array(q)


def same_coordinates(kind, q1, q2, tol=1e-10):
    diff = np.asarray(q1) - np.asarray(q2)
    for j, c in enumerate(kind.coordinates):
        if c.startswith("r"):
            diff[j] = (diff[j] + np.pi) % (2 * np.pi) - np.pi
    return np.max(np.abs(diff), initial=0.0) < tol


# --------------------------------------------------------------------------------------------------
# One hinge in its marker frames
# --------------------------------------------------------------------------------------------------

def test_relative_pose_definition():
    R, d = kin.relative_pose("free", [1, 2, 3, 0.1, 0.2, 0.3])
    assert np.allclose(R, rot_x(0.1) @ rot_y(0.2) @ rot_z(0.3)) and np.allclose(d, [1, 2, 3])
    R, d = kin.relative_pose("prismatic", [0.7])
    assert np.allclose(R, np.eye(3)) and np.allclose(d, [0, 0, 0.7])
    R, d = kin.relative_pose("planar", [1, 2, 0.5])
    assert np.allclose(R, rot_z(0.5)) and np.allclose(d, [1, 2, 0])
    R, d = kin.relative_pose("fixed", [])
    assert np.allclose(R, np.eye(3)) and np.allclose(d, 0)
    with pytest.raises(ValueError):
        kin.relative_pose("revolute", [1, 2])


@pytest.mark.parametrize("type_name", TYPES)
def test_coordinates_round_trip(type_name):
    kind = HINGE_TYPES[type_name]
    rng = np.random.default_rng(abs(hash(type_name)) % 2 ** 32)
    for _ in range(50):
        q = random_q(kind, rng)
        R, d = kin.relative_pose(kind, q)
        q2, residual = kin.coordinates_from_pose(kind, R, d)
        assert same_coordinates(kind, q, q2), (q, q2)
        assert np.max(np.abs(residual)) < 1e-12


def test_coordinates_other_bryant_branch_and_reference():
    q = np.array([0.3, 2.0])                          # universal past ry = pi/2
    q2, res = kin.coordinates_from_pose("universal", *kin.relative_pose("universal", q))
    assert np.allclose(q2, q) and np.allclose(res, 0)
    q = np.array([0.3, 2.0, -0.5])        # spherical: both branches fit; follow the reference
    R, d = kin.relative_pose("spherical", q)
    q_principal, _ = kin.coordinates_from_pose("spherical", R, d)
    assert abs(q_principal[1]) <= np.pi / 2
    q2, _ = kin.coordinates_from_pose("spherical", R, d, reference=q + 0.01)
    assert np.allclose(q2, q)
    q2, _ = kin.coordinates_from_pose("revolute", rot_z(3.0), np.zeros(3), reference=[3.1 + 4 * np.pi])
    assert np.allclose(q2, 3.0 + 4 * np.pi)           # unwrapped near the reference


def test_residual_measures_the_violation():
    R = rot_x(0.01) @ rot_z(0.4)
    q, res = kin.coordinates_from_pose("revolute", R, [0.002, 0.0, 0.0])
    assert np.allclose(q, 0.4, atol=1e-12)
    assert np.allclose(res[:3], [0.01, 0, 0], atol=1e-12)     # in output-marker axes
    assert np.allclose(res[3:], [0.002, 0, 0])


@pytest.mark.parametrize("type_name", TYPES)
def test_constrained_directions_complement_motion_subspace(type_name):
    kind = HINGE_TYPES[type_name]
    q = random_q(kind, np.random.default_rng(3))
    S = kin.local_motion_subspace(kind, q)
    C, labels = kin.constrained_directions(kind, q)
    assert S.shape == (6, kind.dof)
    assert C.shape == (6, kind.constraints) and len(labels) == kind.constraints
    assert np.allclose(C.T @ S, 0, atol=1e-12)
    assert np.allclose(C.T @ C, np.eye(kind.constraints))
    if kind.constraints + kind.dof == 6:
        assert np.linalg.matrix_rank(np.hstack([S, C])) == 6
    lacking = [c for c in ("rx", "ry", "rz", "x", "y", "z") if c not in kind.coordinates]
    assert [lab.split()[-1] for lab in labels] == [c[-1] for c in lacking] or kind.elastic


def test_universal_constrained_rotation():
    C, labels = kin.constrained_directions("universal", [0.3, -0.2])
    assert labels == ("rotation about z", "translation along x", "translation along y",
                      "translation along z")
    assert np.allclose(C[:3, 0], rot_x(0.3)[:, 2])


@pytest.mark.parametrize("type_name", TYPES)
def test_local_motion_subspace_is_the_derivative_of_the_relative_pose(type_name):
    kind = HINGE_TYPES[type_name]
    q = random_q(kind, np.random.default_rng(5))
    S = kin.local_motion_subspace(kind, q)
    R, d = kin.relative_pose(kind, q)
    h = 1e-6
    for j in range(kind.dof):
        e = np.zeros(kind.dof)
        e[j] = h
        Rp, dp = kin.relative_pose(kind, q + e)
        Rm, dm = kin.relative_pose(kind, q - e)
        omega = rotation_vector(Rp @ Rm.T) / (2 * h)      # output-marker axes
        v = (dp - dm) / (2 * h)
        assert np.allclose(S[:, j], np.concatenate([omega, v]), atol=1e-8)


# --------------------------------------------------------------------------------------------------
# Hinges in a model: forward kinematics and measured coordinates
# --------------------------------------------------------------------------------------------------

def random_frame(rng):
    return rng.uniform(-1, 1, 3), rng.uniform(-1.2, 1.2, 3)


@pytest.mark.parametrize("reverse", [False, True], ids=["direct", "reversed"])
@pytest.mark.parametrize("type_name", TYPES)
def test_forward_kinematics_then_hinge_coordinates(type_name, reverse):
    """Random q -> pose of the body (through FK) -> coordinates measured from the markers == q."""
    kind = HINGE_TYPES[type_name]
    rng = np.random.default_rng(11 + TYPES.index(type_name) + 100 * reverse)
    m = MultibodySystem("One hinge")
    g = m.set_ground("Ground", position=(0.1, -0.2, 0.3), orientation=(0.2, 0.1, -0.3))
    b = m.add_body("Body", 1.0, [1, 1, 1, 0, 0, 0], position=(1, 1, 1), orientation=(0.5, -0.4, 0.3))
    mb = b.add_marker(*random_frame(rng))
    mg = g.add_marker(*random_frame(rng))
    h = m.add_hinge("H", type_name, mg, mb) if reverse else m.add_hinge("H", type_name, mb, mg)
    t = analyse(m)
    assert t.reversed_hinges == (("H",) if reverse else ())
    for _ in range(10):
        q = random_q(kind, rng)
        poses = kin.forward_kinematics(m, t, q)
        assert np.allclose(poses["Ground"].R, bryant_to_matrix(g.orientation))
        assert np.allclose(poses["Body"].R.T @ poses["Body"].R, np.eye(3))
        assert same_coordinates(kind, kin.hinge_coordinates(m, h, poses), q, 1e-9)
        assert np.max(np.abs(kin.hinge_residual(m, "H", poses))) < 1e-10


def all_types_chain():
    """A chain of every hinge type with random marker frames, every other hinge defined reversed."""
    rng = np.random.default_rng(2024)
    m = MultibodySystem("All types")
    prev = m.set_ground("Ground")
    for i, type_name in enumerate(TYPES):
        b = m.add_body(f"B{i}", 1.0, [1, 1, 1, 0, 0, 0], position=rng.uniform(-1, 1, 3),
                       orientation=rng.uniform(-1, 1, 3))
        mb, mp = b.add_marker(*random_frame(rng)), prev.add_marker(*random_frame(rng))
        if i % 2:
            m.add_hinge(f"J{i}", type_name, mp, mb)
        else:
            m.add_hinge(f"J{i}", type_name, mb, mp)
        prev = b
    # a side branch on the third body
    c = m.add_body("C", 1.0, [1, 1, 1, 0, 0, 0], position=(0.3, 0.2, 0.1))
    m.add_hinge("JC", "universal", c.add_marker(*random_frame(rng)),
                m.body("B2").add_marker(*random_frame(rng)))
    return m


def universal_cut():
    """Two revolute links; the second also held by a universal hinge to the ground (the cut),
    drawn at non-zero universal angles."""
    m = MultibodySystem("Universal cut")
    g = m.set_ground("Ground")
    a = add_body(m, "A", position=(0.5, 0, 0))
    b = add_body(m, "B", position=(1.5, 0.5, 0.2), orientation=(0.3, 0.2, 0.1))
    connect(m, "J1", "revolute", a, g, (0, 0, 0), R_in=rot_x(0.1) @ rot_z(0.2), R_out=rot_x(0.1))
    connect(m, "J2", "revolute", b, a, (1, 0, 0), R_in=rot_y(0.5), R_out=rot_y(0.5) @ rot_z(-0.3))
    Ru = bryant_to_matrix((0.4, -0.3, 0.8))
    connect(m, "U", "universal", b, g, (2, 1, 0.3), R_in=Ru @ rot_x(0.6) @ rot_y(-0.4), R_out=Ru)
    return m


def test_coordinate_layout():
    m = crank_slider()
    t = analyse(m)
    assert kin.coordinate_labels(m, t) == ("J1.rz", "J3.rx", "J3.ry", "J4.z")
    assert kin.coordinate_slices(m, t) == {"J1": slice(0, 1), "J3": slice(1, 3), "J4": slice(3, 4)}
    q0 = kin.drawn_coordinates(m, t)
    assert np.allclose(q0, [CRANK["th"], 0.2, -0.1, crank_slider().body("Piston").position[0]])
    split = kin.split_coordinates(m, t, q0)
    assert np.allclose(kin.split_coordinates(m, t, split)["J3"], [0.2, -0.1])
    with pytest.raises(ValueError):
        kin.split_coordinates(m, t, np.zeros(3))


@pytest.mark.parametrize("build", [pendulum, double_pendulum, branched_tree, four_bar,
                                   crank_slider, free_body, bushing_loop, inner_loop,
                                   universal_cut], ids=lambda f: f.__name__)
def test_forward_kinematics_reproduces_the_drawing(build):
    m = build()
    t = analyse(m)
    poses = kin.forward_kinematics(m, t, kin.drawn_coordinates(m, t))
    for b in m.bodies:
        assert np.allclose(poses[b.name].p, b.position, atol=1e-12)
        assert np.allclose(poses[b.name].R, bryant_to_matrix(b.orientation), atol=1e-12)
    for name in t.tree_hinges + t.cut_hinges:
        assert np.max(np.abs(kin.hinge_residual(m, name))) < 1e-12, name
    assert np.allclose(kin.loop_residual(m, t, poses), 0, atol=1e-12)


def fd_twists(m, t, q, body, h=1e-6):
    """Finite-difference twist Jacobian of a body about its base-frame origin."""
    J = np.zeros((6, q.size))
    for j in range(q.size):
        e = np.zeros(q.size)
        e[j] = h
        P = kin.forward_kinematics(m, t, q + e)[body]
        M = kin.forward_kinematics(m, t, q - e)[body]
        J[:3, j] = rotation_vector(P.R @ M.R.T) / (2 * h)
        J[3:, j] = (P.p - M.p) / (2 * h)
    return J


@pytest.mark.parametrize("build", [all_types_chain, branched_tree, crank_slider],
                         ids=lambda f: f.__name__)
def test_twist_jacobian_against_finite_differences(build):
    m = build()
    t = analyse(m)
    rng = np.random.default_rng(7)
    n = t.tree_coordinates
    q = kin.drawn_coordinates(m, t) + rng.uniform(-0.3, 0.3, n)
    poses = kin.forward_kinematics(m, t, q)
    for body in t.bodies:
        J = kin.twist_jacobian(m, t, body, q, poses)
        assert np.allclose(J, fd_twists(m, t, q, body), atol=1e-7), body
        # the same about another point: v(b) = v(a) + omega x (b - a)
        point = np.array([0.3, -0.7, 1.1])
        Jp = kin.twist_jacobian(m, t, body, q, poses, point)
        shift = np.cross(J[:3].T, point - poses[body].p).T
        assert np.allclose(Jp[3:], J[3:] + shift, atol=1e-12)
    assert np.allclose(kin.twist_jacobian(m, t, "Ground" if m.is_ground("Ground") else "Frame",
                                          q, poses), 0)


def test_motion_subspace_default_point_and_reversal():
    m = crank_slider()
    t = analyse(m)
    q = kin.drawn_coordinates(m, t)
    poses = kin.forward_kinematics(m, t, q)
    # J3 is defined piston (input) -> rod (output) and used reversed: tip side is the rod
    S = kin.motion_subspace(m, t, "J3", q, poses)
    rod_marker = kin.marker_pose(m, m.hinge("J3").output, poses)
    S_at_marker = kin.motion_subspace(m, t, "J3", q, poses, point=rod_marker.p)
    assert np.allclose(S, S_at_marker)
    # twist of rod relative to piston = - twist of piston relative to rod
    Rrod = rod_marker.R
    B = np.block([[Rrod, np.zeros((3, 3))], [np.zeros((3, 3)), Rrod]])
    assert np.allclose(S, -B @ kin.local_motion_subspace("universal", q[1:3]))


@pytest.mark.parametrize("build", [four_bar, crank_slider, inner_loop],
                         ids=lambda f: f.__name__)
def test_loop_jacobian_against_finite_differences(build):
    m = build()
    t = analyse(m)
    q0 = kin.drawn_coordinates(m, t)
    J, rows = kin.loop_jacobian(m, t, q0)
    assert J.shape == (t.loop_constraints, t.tree_coordinates) and len(rows) == J.shape[0]
    h = 1e-6
    Jfd = np.zeros_like(J)
    for j in range(q0.size):
        e = np.zeros(q0.size)
        e[j] = h
        Jfd[:, j] = (kin.loop_residual(m, t, kin.forward_kinematics(m, t, q0 + e))
                     - kin.loop_residual(m, t, kin.forward_kinematics(m, t, q0 - e))) / (2 * h)
    assert np.allclose(J, Jfd, atol=1e-7)
    assert np.abs(J).max() > 0.1


def test_loop_jacobian_universal_cut():
    m = universal_cut()
    t = analyse(m)
    assert t.cut_hinges == ("U",)
    q0 = kin.drawn_coordinates(m, t)
    J, rows = kin.loop_jacobian(m, t, q0)
    assert rows[0] == "U: rotation about z"
    h = 1e-6
    Jfd = np.column_stack([
        (kin.loop_residual(m, t, kin.forward_kinematics(m, t, q0 + h * e))
         - kin.loop_residual(m, t, kin.forward_kinematics(m, t, q0 - h * e))) / (2 * h)
        for e in np.eye(q0.size)])
    assert np.allclose(J, Jfd, atol=1e-7)


# --------------------------------------------------------------------------------------------------
# Mobility
# --------------------------------------------------------------------------------------------------

def test_mobility_four_bar():
    mob = kin.mobility(four_bar())
    assert (mob.dof_gruebler, mob.dof, mob.redundant, mob.rank) == (-2, 1, 3, 2)
    assert mob.redundant_constraints == ("J4: rotation about x", "J4: rotation about y",
                                         "J4: translation along z")
    assert mob.columns == ("J3.rz", "J2.rz", "J1.rz")
    assert "3 redundant" in str(mob)


def test_mobility_crank_slider():
    mob = kin.mobility(crank_slider())
    assert (mob.dof_gruebler, mob.dof, mob.redundant, mob.rank) == (1, 1, 0, 3)
    assert mob.redundant_constraints == ()
    assert all(np.max(np.abs(r)) < 1e-12 for r in mob.drawn_residuals.values())


@pytest.mark.parametrize("build, dof", [(pendulum, 1), (double_pendulum, 2), (branched_tree, 8),
                                        (free_body, 6), (bushing_loop, 2), (inner_loop, 2),
                                        (universal_cut, 0)],
                         ids=lambda x: getattr(x, "__name__", str(x)))
def test_mobility_of_other_mechanisms(build, dof):
    mob = kin.mobility(build())
    assert mob.dof == dof
    assert mob.dof - mob.redundant == mob.dof_gruebler


def test_mobility_inner_loop_names_planar_redundancies():
    mob = kin.mobility(inner_loop())
    assert mob.redundant == 3
    assert mob.redundant_constraints == ("J5: rotation about x", "J5: rotation about y",
                                         "J5: translation along z")


def moved(m, Q, t):
    """The model m moved rigidly: global x -> Q x + t."""
    for p in m.grounds + m.bodies:
        p.position = Q @ p.position + t
        p.orientation = matrix_to_bryant(Q @ bryant_to_matrix(p.orientation))
    return m


def test_mobility_four_bar_in_a_general_position():
    """Dependent rows that are not exactly zero: the same four-bar turned in space."""
    Q = bryant_to_matrix((0.7, -0.4, 1.9))
    m = moved(four_bar(), Q, np.array([0.3, -2.0, 5.0]))
    mob = kin.mobility(m)
    assert (mob.dof, mob.redundant) == (1, 3)
    assert mob.redundant_constraints == ("J4: rotation about x", "J4: rotation about y",
                                         "J4: translation along z")
    assert mob.singular_values[2] < 1e-12 < 0.1 < mob.singular_values[1]


def test_mobility_scale_invariant():
    """Millimetre-sized and kilometre-sized copies of the crank-slider have the same mobility."""
    for s in (1e-3, 1e3):
        m = crank_slider()
        for p in m.grounds + m.bodies:
            p.position = p.position * s
            for mk in p.markers:
                mk.frame.position = mk.frame.position * s
        mob = kin.mobility(m)
        assert (mob.dof, mob.redundant) == (1, 0)


def test_mobility_no_hinges_and_islands():
    m = MultibodySystem("Loose")
    m.set_ground("Ground")
    add_body(m, "A")
    mob = kin.mobility(m)
    assert (mob.dof, mob.redundant, mob.rank) == (0, 0, 0)
    assert mob.jacobian.shape == (0, 0)


@pytest.mark.parametrize("delta", [0.0, 1e-16, 1e-13, 1e-10, 1e-8, 1e-6, 1e-4])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_bryant_angles_round_trip_at_and_near_the_gimbal_lock(delta, sign):
    """A frame whose z axis lies (nearly) along its parent's x axis (b = +-90 deg): a bearing
    along a body's x axis. Its Bryant angles must give back the rotation to round-off (before:
    arcsin of an entry 1 - 1e-16 put b off by 1.5e-8 rad, and in the band within 1.4e-6 rad of
    the lock a was set to 0 and the rotation came back off by up to that much)."""
    rng = np.random.default_rng(7)
    for _ in range(50):
        a, c = rng.uniform(-np.pi, np.pi, size=2)
        R = bryant_to_matrix([a, sign * (np.pi / 2 - delta), c])
        # the same frame as a product with round-off, as built from a picked face on a turned body
        Q = bryant_to_matrix(rng.uniform(-np.pi, np.pi, size=3))
        R = Q.T @ (Q @ R)
        back = bryant_to_matrix(matrix_to_bryant(R))
        assert np.abs(back - R).max() < 1e-14, (a, c, np.abs(back - R).max())
        b = matrix_to_bryant(R)[1]
        assert -np.pi / 2 <= b <= np.pi / 2


def test_bryant_angles_at_the_lock_put_the_turn_in_c():
    R = bryant_to_matrix([0.0, np.pi / 2, 0.7])
    a, b, c = matrix_to_bryant(R)
    assert a == 0.0 and b == pytest.approx(np.pi / 2, abs=1e-15) and c == pytest.approx(0.7, abs=1e-15)
