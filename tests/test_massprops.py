"""Closed-form mass properties against the seed's numbers and textbook formulas."""

import numpy as np
import pytest

from MultibodyWB.examples import seed_box
from MultibodyWB.solver.model import massprops
from MultibodyWB.solver.maths.rotations import (bryant_to_matrix, inertia_vector_to_tensor,
                                          matrix_to_bryant, parallel_axis)


def test_seed_box_about_its_corner():
    mp = massprops.box((0.015, 0.01, 0.01), 7900.0)
    assert mp.mass == pytest.approx(seed_box.MASS, rel=1e-12)
    np.testing.assert_allclose(mp.center, [0.0075, 0.005, 0.005], rtol=1e-12)
    np.testing.assert_allclose(mp.ji, seed_box.JI, rtol=1e-9)


def test_cylinder_tube_and_sphere():
    r, h, rho = 0.05, 0.2, 1000.0
    cyl = massprops.cylinder(r, h, rho, base=(0, 0, -h / 2))
    m = rho * np.pi * r * r * h
    assert cyl.mass == pytest.approx(m, rel=1e-12)
    np.testing.assert_allclose(cyl.ji[:3], [m * (3 * r * r + h * h) / 12] * 2 + [m * r * r / 2])
    tube = massprops.cylinder(r, h, rho, inner_radius=0.03, base=(0, 0, -h / 2))
    full, core = cyl, massprops.cylinder(0.03, h, rho, base=(0, 0, -h / 2))
    np.testing.assert_allclose(tube.ji, full.ji - core.ji, rtol=1e-12)
    assert tube.mass == pytest.approx(full.mass - core.mass)
    s = massprops.sphere(0.1, 2.0, center=(1, 0, 0))
    np.testing.assert_allclose(s.inertia_about_center, 0.4 * s.mass * 0.01 * np.eye(3), rtol=1e-12)
    # about the origin: Steiner adds m*d^2 to Iyy and Izz only
    np.testing.assert_allclose(s.ji[:3] - 0.4 * s.mass * 0.01, [0, s.mass, s.mass], atol=1e-15)


def test_combine_two_boxes_equals_one():
    a = massprops.box((0.1, 0.05, 0.02), 7850.0)
    b = massprops.box((0.1, 0.05, 0.02), 7850.0, corner=(0.1, 0, 0))
    whole = massprops.box((0.2, 0.05, 0.02), 7850.0)
    ab = massprops.combine(a, b)
    assert ab.mass == pytest.approx(whole.mass)
    np.testing.assert_allclose(ab.center, whole.center, rtol=1e-12)
    np.testing.assert_allclose(ab.ji, whole.ji, rtol=1e-12)


def test_bryant_angles_round_trip_and_convention():
    rng = np.random.default_rng(1)
    for _ in range(50):
        ang = rng.uniform([-np.pi, -1.5, -np.pi], [np.pi, 1.5, np.pi])
        np.testing.assert_allclose(matrix_to_bryant(bryant_to_matrix(ang)), ang, atol=1e-12)
    # body-fixed x then y' then z'': a 90 deg turn about x moves y' onto global z
    R = bryant_to_matrix([np.pi / 2, np.pi / 2, 0])
    np.testing.assert_allclose(R @ [1, 0, 0], [0, 1, 0], atol=1e-15)  # about y' = global z
    np.testing.assert_allclose(bryant_to_matrix([0, 0, 0.2617994]) @ [1, 0, 0],
                               [np.cos(0.2617994), np.sin(0.2617994), 0], atol=1e-15)


def test_parallel_axis_inverse():
    J = inertia_vector_to_tensor([2, 3, 4, -0.1, 0.2, -0.3])
    r = np.array([0.1, -0.2, 0.3])
    np.testing.assert_allclose(parallel_axis(parallel_axis(J, 5.0, r), -5.0, r), J, atol=1e-14)


def test_rotation_vector_accurate_near_zero_and_pi():
    from scipy.spatial.transform import Rotation

    from MultibodyWB.solver.maths.small import rotvec
    from MultibodyWB.solver.maths.rotations import rotation_vector
    rng = np.random.default_rng(3)
    for k in range(600):
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        t = (np.pi - 10 ** rng.uniform(-8, 0), rng.uniform(0, np.pi), 10 ** rng.uniform(-10, -1))[k % 3]
        R = Rotation.from_rotvec(t * axis).as_matrix()
        for f in (rotation_vector, rotvec):
            np.testing.assert_allclose(f(R), t * axis, atol=1e-13)
