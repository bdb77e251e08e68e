"""Real physics against closed-form answers, with tight tolerances.

Pendulum periods (small amplitude and the complete elliptic integral), a torque-free rigid body
(energy and angular momentum, the intermediate-axis instability), a heavy symmetric top in steady
precession, the fourth order of RK4, drivers and their loads, force magnitudes, and the energy of
springs.
"""

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import ellipk

from MultibodyWB.solver.model import massprops
from MultibodyWB.solver.analysis.kinematics import local_motion_subspace
from MultibodyWB.solver.model import Driver, MultibodySystem
from MultibodyWB.solver.maths.rotations import bryant_to_matrix, inertia_vector_to_tensor
from MultibodyWB.solver.run.simulate import simulate

G = 9.81


# --------------------------------------------------------------------------------------------------
# models
# --------------------------------------------------------------------------------------------------

def pendulum(theta0=0.0, rate0=0.0, length=0.5, drive=None):
    """A rod of ``length`` hanging from a revolute hinge about global y (gravity -z).

    Returns the model, the mass m, the moment of inertia about the pivot J_O and the distance l
    from the pivot to the mass centre. The hinge coordinate is the rod's angle from the vertical.
    """
    m = MultibodySystem("Pendulum", gravity=(0, 0, -G))
    g = m.set_ground()
    pivot = g.add_marker((0, 0, 0), (-np.pi / 2, 0, 0))          # z along global +y
    mp = massprops.box((0.02, 0.02, length), 2700.0, corner=(-0.01, -0.01, -length))
    rod = m.add_body("Rod", mp.mass, mp.ji, mass_center=mp.center)
    mk = rod.add_marker((0, 0, 0), (-np.pi / 2, 0, 0))
    m.add_hinge("Pin", "revolute", mk, pivot, initial_coordinates=[theta0],
                initial_rates=[rate0], drivers=[Driver("rz", drive)] if drive else [])
    return m, mp.mass, mp.ji[1], length / 2


def free_box(w0, size=(0.3, 0.2, 0.1)):
    """A box on a free hinge, no gravity, spinning at ``w0`` (global, rad/s) about its centre.

    Principal moments Ixx < Iyy < Izz: x is the minor axis, y the intermediate, z the major.
    """
    m = MultibodySystem("FreeBox", gravity=(0, 0, 0))
    g = m.set_ground()
    o = g.add_marker((0, 0, 0))
    mp = massprops.box(size, 1000.0, corner=tuple(-0.5 * np.array(size)))
    b = m.add_body("Box", mp.mass, mp.ji, mass_center=mp.center, initial_angular_velocity=w0)
    m.add_hinge("Float", "free", b.add_marker((0, 0, 0)), o)
    return m, mp


def heavy_top(theta, omega, radius=0.05, height=0.1):
    """A solid cylinder on a spherical hinge at its base centre, in steady precession.

    The symmetry axis e3 (body z) makes the angle ``theta`` with the upward vertical and precesses
    about it at ``omega``. With I1 the transverse moment about the pivot, I3 the axial one and
    l the pivot-to-mass-centre distance, the Lagrangian
    ``I1/2 (theta'^2 + phi'^2 sin^2 theta) + I3/2 w3^2 - m g l cos theta`` (``w3 = psi' + phi'
    cos theta``, the body's angular velocity along e3) gives, for theta' = theta'' = 0,
    ``m g l = omega (I3 w3 - I1 omega cos theta)``: the spin w3 follows from omega.
    """
    m = MultibodySystem("Top", gravity=(0, 0, -G))
    g = m.set_ground()
    o = g.add_marker((0, 0, 0))
    mp = massprops.cylinder(radius, height, 7850.0)
    top = m.add_body("Top", mp.mass, mp.ji, mass_center=mp.center)
    I1, I3, l = mp.ji[0], mp.ji[2], height / 2
    w3 = (mp.mass * G * l / omega + I1 * omega * np.cos(theta)) / I3
    q0 = np.array([theta, 0.0, 0.0])                 # R = Rx(theta): e3 = (0, -sin, cos)
    e3 = np.array([0.0, -np.sin(theta), np.cos(theta)])
    w = omega * np.array([0.0, 0.0, 1.0]) + (w3 - omega * np.cos(theta)) * e3
    rates = np.linalg.solve(local_motion_subspace("spherical", q0)[:3], w)
    m.add_hinge("Ball", "spherical", top.add_marker((0, 0, 0)), o, initial_coordinates=q0,
                initial_rates=rates)
    return m, w3


def tight(model, rtol=1e-12, atol=1e-14):
    model.simulation.relative_tolerance = rtol
    model.simulation.absolute_tolerance = atol
    return model


def upward_crossings(t, q, qd):
    """Times where q crosses 0 upward, from cubic Hermite interpolation with the rates."""
    out = []
    for k in np.nonzero((q[:-1] < 0) & (q[1:] >= 0))[0]:
        t0, h = t[k], t[k + 1] - t[k]

        def f(s):
            x = (s - t0) / h
            return ((2 * x ** 3 - 3 * x ** 2 + 1) * q[k] + (x ** 3 - 2 * x ** 2 + x) * h * qd[k]
                    + (3 * x ** 2 - 2 * x ** 3) * q[k + 1] + (x ** 3 - x ** 2) * h * qd[k + 1])
        out.append(brentq(f, t0, t[k + 1], xtol=1e-15, rtol=1e-15))
    return np.array(out)


def measured_period(r):
    tc = upward_crossings(r.time, r["Pin.rz"], r["Pin.rz_rate"])
    assert len(tc) >= 4
    return (tc[-1] - tc[0]) / (len(tc) - 1)


# --------------------------------------------------------------------------------------------------
# pendulum
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("integrator", ["rk4", "DOP853"])
def test_small_amplitude_period(integrator):
    model, m, J, l = pendulum(theta0=1e-3)
    T0 = 2 * np.pi * np.sqrt(J / (m * G * l))
    r = simulate(tight(model), integrator=integrator, t_end=5.5 * T0, step=5e-3,
                 output_step=5e-3)
    assert measured_period(r) == pytest.approx(T0, rel=1e-6)


@pytest.mark.parametrize("integrator", ["rk4", "DOP853"])
def test_large_amplitude_period_is_the_elliptic_integral(integrator):
    theta0 = 2.5
    model, m, J, l = pendulum(theta0=theta0)
    T = 4 * np.sqrt(J / (m * G * l)) * ellipk(np.sin(theta0 / 2) ** 2)   # parameter m = k^2
    r = simulate(tight(model), integrator=integrator, t_end=4.5 * T, step=2e-3,
                 output_step=2e-3)
    assert measured_period(r) == pytest.approx(T, rel=1e-6)
    # the amplitude stays (no energy lost) and the rod's Bryant angle b passes +-pi/2 smoothly
    assert r["Pin.rz"].max() == pytest.approx(theta0, abs=1e-6)
    np.testing.assert_allclose(r["Rod.b"], r["Pin.rz"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(r["Rod.a"], 0.0, atol=1e-9)
    np.testing.assert_allclose(r["Rod.c"], 0.0, atol=1e-9)


def test_rk4_energy_error_is_fourth_order():
    steps = np.array([4e-3, 2e-3, 1e-3])
    drift = []
    for h in steps:
        r = simulate(pendulum(theta0=2.5)[0], integrator="rk4", t_end=2.0, step=h,
                     output_step=0.04)
        e = r["energy.total"]
        drift.append(np.abs(e - e[0]).max())
    slope = np.polyfit(np.log(steps), np.log(drift), 1)[0]
    assert 3.7 < slope < 4.3, (drift, slope)


# --------------------------------------------------------------------------------------------------
# torque-free rigid body
# --------------------------------------------------------------------------------------------------

def test_torque_free_body_keeps_energy_and_angular_momentum():
    model, mp = free_box((0.3, 3.0, 0.5))
    r = simulate(tight(model), integrator="DOP853", t_end=30.0, output_step=0.05)
    J = inertia_vector_to_tensor(mp.ji)                 # about the mass centre = base origin
    R, w = r.rotation("Box"), r.vector("Box.w")
    H = np.einsum("nij,jk,nlk,nl->ni", R, J, R, w)     # global angular momentum
    E = r["energy.kinetic"]
    assert np.abs(E / E[0] - 1).max() < 1e-9
    assert np.abs(H - H[0]).max() / np.linalg.norm(H[0]) < 1e-9
    np.testing.assert_allclose(E, r["energy.total"], rtol=0, atol=1e-15)
    assert np.abs(r.position("Box")).max() < 1e-12       # no force: the centre stays put
    # many turns: the hinge's Bryant angles run on without folding and still give R
    assert np.ptp(r["Float.rz"]) > 4 * np.pi
    angles = np.column_stack([r[f"Float.r{a}"] for a in "xyz"])
    np.testing.assert_allclose(np.array([bryant_to_matrix(a) for a in angles]), R, atol=1e-12)


@pytest.mark.parametrize("axis, stable", [(0, True), (1, False), (2, True)])
def test_rotation_about_the_intermediate_axis_is_unstable(axis, stable):
    w0 = np.full(3, 1e-4)
    w0[axis] = 3.0
    model, _ = free_box(w0)
    r = simulate(tight(model, 1e-10, 1e-12), integrator="DOP853", t_end=20.0, output_step=0.05)
    body_axis = r.rotation("Box")[:, :, axis]
    angle = np.arccos(np.clip(body_axis @ (w0 / np.linalg.norm(w0)), -1.0, 1.0))
    if stable:
        assert angle.max() < 1e-3
    else:
        assert angle.max() > 2.0                           # it tumbles over


# --------------------------------------------------------------------------------------------------
# heavy symmetric top
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("theta, omega", [(0.5, 4.0), (1.2, 3.0)])
def test_heavy_top_in_steady_precession(theta, omega):
    model, _ = heavy_top(theta, omega)
    period = 2 * np.pi / omega
    r = simulate(tight(model), integrator="DOP853", t_end=period, output_step=period / 200)
    e3 = r.rotation("Top")[:, :, 2]
    azimuth = np.unwrap(np.arctan2(e3[:, 1], e3[:, 0]))
    measured = (azimuth[-1] - azimuth[0]) / r.time[-1]
    assert measured == pytest.approx(omega, rel=1e-6)
    # uniform precession and constant nutation
    np.testing.assert_allclose(azimuth - azimuth[0], omega * r.time, rtol=0, atol=1e-8)
    np.testing.assert_allclose(np.arccos(e3[:, 2]), theta, rtol=0, atol=1e-8)
    assert abs(r.energy_drift()[1]) < 1e-10


# --------------------------------------------------------------------------------------------------
# drivers and force magnitudes
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("integrator", ["rk4", "euler", "DOP853"])
def test_driven_pendulum_follows_its_function_and_needs_the_right_torque(integrator):
    model, m, J, l = pendulum(drive="0.5*sin(3*t) + 0.2*t")
    r = simulate(model, integrator=integrator, t_end=2.0, step=1e-3, output_step=0.01)
    t, q = r.time, r["Pin.rz"]
    np.testing.assert_allclose(q, 0.5 * np.sin(3 * t) + 0.2 * t, rtol=0, atol=1e-14)
    np.testing.assert_allclose(r["Pin.rz_rate"], 1.5 * np.cos(3 * t) + 0.2, rtol=0, atol=1e-14)
    np.testing.assert_allclose(r["Pin.rz_acc"], -4.5 * np.sin(3 * t), rtol=0, atol=1e-13)
    torque = J * r["Pin.rz_acc"] + m * G * l * np.sin(q)
    assert np.abs(torque).max() > 0.3
    np.testing.assert_allclose(r["Pin.rz_drive"], torque, rtol=0, atol=1e-12)
    # the rod's own angle follows too
    np.testing.assert_allclose(r["Rod.b"], q, rtol=0, atol=1e-12)


@pytest.mark.parametrize("integrator", ["rk4", "DOP853"])
def test_time_dependent_force_on_a_slider(integrator):
    """A block on a prismatic hinge pushed by F = 3 t (N): z = t^3 / (2 m), exact for RK4."""
    model = MultibodySystem("Slider", gravity=(0, 0, 0))
    g = model.set_ground()
    mp = massprops.box((0.1, 0.1, 0.1), 1000.0)
    b = model.add_body("Block", mp.mass, mp.ji, mass_center=mp.center)
    model.add_hinge("Rail", "prismatic", b.add_marker((0, 0, 0)), g.add_marker((0, 0, 0)))
    model.add_force("Push", "point_force", b.add_marker(tuple(mp.center)), direction=(0, 0, 1),
                    magnitude="3*t")
    r = simulate(tight(model), integrator=integrator, t_end=1.0, step=0.01, output_step=0.05)
    t = r.time
    np.testing.assert_allclose(r["Rail.z"], t ** 3 / (2 * mp.mass), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(r["Rail.z_acc"], 3 * t / mp.mass, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(r["Block.az"], 3 * t / mp.mass, rtol=1e-12, atol=1e-15)


# --------------------------------------------------------------------------------------------------
# energy of springs
# --------------------------------------------------------------------------------------------------

def test_springs_store_the_energy_they_exchange():
    """Spherical hinge spring (equal stiffnesses), prismatic hinge spring, spring-damper and
    rotational spring-damper without damping, and gravity: the total energy is constant."""
    m = MultibodySystem("Springs", gravity=(0, 0, -G))
    g = m.set_ground()
    o = g.add_marker((0, 0, 0))
    anchor = g.add_marker((0.3, 0.1, 0.2))
    mp = massprops.box((0.1, 0.1, 0.4), 1000.0, corner=(-0.05, -0.05, -0.4))
    arm = m.add_body("Arm", mp.mass, mp.ji, mass_center=mp.center)
    base, tip = arm.add_marker((0, 0, 0)), arm.add_marker((0, 0, -0.4))
    m.add_hinge("Ball", "spherical", base, o, initial_coordinates=[0.3, -0.2, 0.1],
                initial_rates=[1, 2, 3], stiffness=[20, 20, 20], spring_reference=[0.1, 0, 0.2])
    mp2 = massprops.box((0.05, 0.05, 0.05), 1000.0, corner=(-0.025, -0.025, -0.025))
    blk = m.add_body("Slider", mp2.mass, mp2.ji, mass_center=mp2.center, position=(0, 0, -0.4))
    m.add_hinge("Slide", "prismatic", blk.add_marker((0, 0, 0)), tip, initial_coordinates=[0.05],
                initial_rates=[0.3], stiffness=[50.0], spring_reference=[0.02])
    m.add_force("Spring", "spring_damper", blk.add_marker((0.01, 0.02, 0)), anchor,
                stiffness=30.0, free_length=0.3)
    m.add_force("Twist", "rotational_spring_damper", base, o, stiffness=5.0)
    r = simulate(tight(m), integrator="DOP853", t_end=3.0, output_step=0.01)
    e = r["energy.total"]
    elastic = r["energy.elastic"]
    assert np.ptp(elastic) > 0.5 and np.ptp(r["energy.kinetic"]) > 0.5
    assert np.abs(e - e[0]).max() < 1e-9 * np.abs(elastic).max()
    np.testing.assert_allclose(r["energy.potential"], r["energy.gravity"] + elastic, atol=1e-14)
