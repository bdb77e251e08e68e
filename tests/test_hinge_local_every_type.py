"""Every registered hinge type's relative kinematics in the state layout, as the one compiled
kinematics every method uses computes it (:mod:`...elements.hinge_kinematics`: ``hinge_local``:
pose, motion subspace, ``(dS/dt) u``; ``hinge_qdot``: the coordinate rates), against finite
differences along the motion; the methods call that one (issue 36 item 2); an unknown type is an
error. The analysis package's Bryant-coordinate pose and subspace are held to finite differences
in test_kinematics.py."""

from __future__ import annotations

import numpy as np
import pytest

from MultibodyWB.solver.elements.hinges import HINGE_TYPES, QUATERNION_TYPES, TYPE_CODES
from MultibodyWB.solver.elements import hinge_kinematics as K
from MultibodyWB.solver.methods.constrained import formulation, run as constrained_run
from MultibodyWB.solver.methods.mstmm import adaptive, kernels
from MultibodyWB.solver.methods.shared import loops

TYPES = list(HINGE_TYPES)


def state(kind, rng):
    """Position and velocity coordinates of one hinge in the state layout (a unit quaternion in
    place of the angles of spherical, free and bushing hinges)."""
    if kind.name in QUATERNION_TYPES:
        quat = rng.normal(size=4)
        quat /= np.linalg.norm(quat)
        q = np.concatenate([rng.uniform(-1, 1, kind.nq - 4), quat])
    else:
        q = rng.uniform(-1.3, 1.3, kind.nq)
    return q, rng.uniform(-2, 2, kind.dof)


def compiled_local(code, q, u):
    R, d, S, bias = np.zeros((3, 3)), np.zeros(3), np.zeros((6, 6)), np.zeros(6)
    K.hinge_local(code, q, 0, u, 0, R, d, S, bias)
    return R, d, S, bias


def qdot(code, q, u):
    out = np.zeros(q.size)
    K.hinge_qdot(code, q, 0, u, 0, u.size, out, 0)
    return out


@pytest.mark.parametrize("name", TYPES)
def test_compiled_kinematics_against_finite_differences(name):
    kind = HINGE_TYPES[name]
    code = TYPE_CODES[name]
    rng = np.random.default_rng(7 + code)
    for _ in range(3):
        q, u = state(kind, rng)
        R, d, S, bias = compiled_local(code, q, u)
        assert np.allclose(R @ R.T, np.eye(3), atol=1e-13)
        assert not S[:, kind.dof:].any()                   # only its own columns
        qd = qdot(code, q, u)
        h = 1e-6
        Rp, dp, Sp, _ = compiled_local(code, q + h * qd, u)
        Rm, dm, Sm, _ = compiled_local(code, q - h * qd, u)
        Rdot = (Rp - Rm) / (2 * h)
        W = Rdot @ R.T                                     # [omega]x, output marker axes
        omega = np.array([W[2, 1], W[0, 2], W[1, 0]])
        twist = S[:, :kind.dof] @ u
        np.testing.assert_allclose(twist[:3], omega, atol=1e-7)
        np.testing.assert_allclose(twist[3:], (dp - dm) / (2 * h), atol=1e-7)
        np.testing.assert_allclose(bias, (Sp - Sm)[:, :kind.dof] @ u / (2 * h), atol=1e-7)
        # the motion subspace has full column rank: each coordinate moves something
        assert kind.dof == 0 or np.linalg.matrix_rank(S[:, :kind.dof]) == kind.dof


@pytest.mark.parametrize("name", TYPES)
def test_the_python_entry_gives_the_compiled_numbers(name):
    """``local`` (what the constrained method calls, through ``shared.loops.hinge_local``) is
    the compiled function's numbers, bit for bit."""
    kind = HINGE_TYPES[name]
    code = TYPE_CODES[name]
    rng = np.random.default_rng(100 + code)
    q, u = state(kind, rng)
    R, d, S, bias = compiled_local(code, q, u)
    for Rc, dc, Sc, bc in (K.local(name, q, u), loops.hinge_local(name, list(q), list(u)),
                           formulation.hinge_local(name, q, u)):
        assert np.array_equal(R, Rc) and np.array_equal(d, dc) and np.array_equal(bias, bc)
        assert np.array_equal(S[:, :kind.dof], Sc) and Sc.shape == (6, kind.dof)


def test_every_method_uses_the_one_kinematics():
    """The mstmm kernels (fixed-step and adaptive), the constrained method's formulation and
    run, and the shared absolute-coordinate kinematics hold the functions of
    ``elements.hinge_kinematics`` themselves, not copies."""
    assert kernels.hinge_local is K.hinge_local and kernels.hinge_qdot is K.hinge_qdot
    assert kernels._state_rate is K.state_rate and adaptive._state_rate is K.state_rate
    assert kernels.CUT_ROT is K.CUT_ROT and kernels.cut_count is K.cut_count
    assert formulation.state_rate is K.state_rate and constrained_run.state_rate is K.state_rate
    assert loops.local is K.local
    for module in (kernels, formulation, loops, constrained_run):
        src = open(module.__file__, encoding="utf-8").read()
        assert "def hinge_qdot" not in src and "def _quaternion_rate(" not in src
        assert "def hinge_local(code" not in src


def test_an_unknown_type_is_an_error():
    q, u = np.zeros(7), np.zeros(6)
    with pytest.raises(ValueError, match="without kinematics"):
        K.hinge_local(len(TYPE_CODES) + 3, q, 0, u, 0, np.zeros((3, 3)), np.zeros(3),
                      np.zeros((6, 6)), np.zeros(6))
    with pytest.raises(KeyError):
        K.local("ball_and_socket", q, u)


def test_every_type_has_a_code_the_kernel_knows():
    """The type table and the compiled kinematics' named codes are the same list (a new type
    without its compiled branch is an error: the test above)."""
    named = {K.FIXED, K.REVOLUTE, K.PRISMATIC, K.CYLINDRICAL, K.UNIVERSAL, K.SPHERICAL, K.PLANAR,
             K.FREE, K.BUSHING}
    assert named == set(TYPE_CODES.values())
