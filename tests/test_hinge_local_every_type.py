"""Every registered hinge type's relative kinematics in the state layout, as the compiled MSTMM
kernel computes it (``hinge_local``: pose, motion subspace, ``(dS/dt) u``; ``hinge_qdot``: the
coordinate rates), against finite differences along the motion, and against the constrained
method's own copy (issue 36 item 2: until one kinematics serves all methods, the copies are held
to each other here). The analysis package's Bryant-coordinate pose and subspace are held to
finite differences in test_kinematics.py."""

from __future__ import annotations

import numpy as np
import pytest

from MultibodyWB.solver.elements.hinges import HINGE_TYPES, QUATERNION_TYPES, TYPE_CODES
from MultibodyWB.solver.methods.constrained.formulation import hinge_local as constrained_local
from MultibodyWB.solver.methods.mstmm import kernels as K

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
def test_compiled_and_constrained_copies_agree(name):
    kind = HINGE_TYPES[name]
    code = TYPE_CODES[name]
    rng = np.random.default_rng(100 + code)
    q, u = state(kind, rng)
    R, d, S, bias = compiled_local(code, q, u)
    Rc, dc, Sc, bc = constrained_local(name, q, u)
    np.testing.assert_allclose(R, Rc, atol=1e-14)
    np.testing.assert_allclose(d, dc, atol=1e-14)
    np.testing.assert_allclose(S[:, :kind.dof], Sc, atol=1e-14)
    np.testing.assert_allclose(bias, bc, atol=1e-13)


def test_every_type_has_a_code_the_kernel_knows():
    """The type table and the kernel's named codes are the same list (a new type without its
    compiled branch would get the identity pose and a zero subspace: the finite-difference test
    above fails on that, through the rank)."""
    named = {K.FIXED, K.REVOLUTE, K.PRISMATIC, K.CYLINDRICAL, K.UNIVERSAL, K.SPHERICAL, K.PLANAR,
             K.FREE, K.BUSHING}
    assert named == set(TYPE_CODES.values())
