"""The fixed-step semi-implicit (symplectic) Euler integrator ``euler`` (issue 14: one evaluation
per step for contact-rich models): its exact discrete solutions (free fall, the harmonic
oscillator), first-order convergence, bounded energy without drift, agreement with rk4 and
between the methods, the drivers' loads and their work, a contact at rest, and the checks of its
step (symplectic Euler's stability limit h w < 2, not rk4's 2.78).

The scheme, for rates ``u`` and positions ``q``: ``u_{n+1} = u_n + h udot(t_n, q_n, u_n)``, then
``q_{n+1} = q_n + h qdot(q_n, u_{n+1})``.
"""

import math

import numpy as np
import pytest

from MultibodyWB.solver.methods.runtime import EULER_LIMIT, RK4_LIMIT, RunError, stiff_elements
from MultibodyWB.solver.model import Driver, ModelError, MultibodySystem, massprops
from MultibodyWB.solver.run.simulate import simulate

G = 9.81


def slider(stiffness=None, gravity=0.0, x0=0.0, v0=0.0):
    """A 1 kg block on a prismatic hinge along global z (gravity along -z), optionally on a
    spring of ``stiffness`` (N/m) about z = 0. Returns the model and the block's mass."""
    m = MultibodySystem("Slider", gravity=(0, 0, -gravity))
    g = m.set_ground()
    mp = massprops.box((0.1, 0.1, 0.1), 1000.0, corner=(-0.05, -0.05, -0.05))
    b = m.add_body("Block", mp.mass, mp.ji, mass_center=mp.center)
    m.add_hinge("Slide", "prismatic", b.add_marker(), g.add_marker(), initial_coordinates=[x0],
                initial_rates=[v0], stiffness=[stiffness] if stiffness else None)
    return m, mp.mass


def pendulum(theta0=0.0, drive=None, length=0.5):
    """A rod hanging from a revolute hinge about global y; returns the model, its mass m, its
    moment of inertia about the pivot J and the distance l of its mass centre from the pivot."""
    m = MultibodySystem("Pendulum", gravity=(0, 0, -G))
    g = m.set_ground()
    pivot = g.add_marker((0, 0, 0), (-np.pi / 2, 0, 0))
    mp = massprops.box((0.02, 0.02, length), 2700.0, corner=(-0.01, -0.01, -length))
    rod = m.add_body("Rod", mp.mass, mp.ji, mass_center=mp.center)
    m.add_hinge("Pin", "revolute", rod.add_marker((0, 0, 0), (-np.pi / 2, 0, 0)), pivot,
                initial_coordinates=[theta0], drivers=[Driver("rz", drive)] if drive else [])
    return m, mp.mass, mp.ji[1], length / 2


def run(model, method="mstmm", **settings):
    return simulate(model, method=method, integrator="euler", **settings)


# --------------------------------------------------------------------------------------------------
# exact discrete solutions
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["mstmm", "constrained"])
def test_free_fall_is_the_schemes_exact_discrete_solution(method):
    """v_n = v0 - g n h; x_n = x0 + h (v_1 + ... + v_n) = x0 + v0 t_n - g h^2 n (n + 1) / 2, that
    is the exact parabola lowered by g h t_n / 2 (first order), to round-off."""
    h, x0, v0 = 1e-3, 0.3, 2.0
    model, _ = slider(gravity=G, x0=x0, v0=v0)
    r = run(model, method, t_end=0.5, step=h, output_step=0.01)
    t = r.time
    n = np.rint(t / h)
    np.testing.assert_allclose(r["Slide.z_rate"], v0 - G * n * h, rtol=0, atol=1e-12)
    np.testing.assert_allclose(r["Slide.z"], x0 + v0 * t - G * h * h * n * (n + 1) / 2,
                               rtol=0, atol=1e-12)
    # against the parabola: behind by g h t / 2 exactly
    lag = x0 + v0 * t - 0.5 * G * t * t - r["Slide.z"]
    np.testing.assert_allclose(lag, 0.5 * G * h * t, rtol=0, atol=1e-12)
    assert r.meta["integrator"] == "euler" and r.meta["steps"] == 500
    if method == "mstmm":                          # one evaluation a step
        assert r.meta["evaluations"] == 500


def test_spinning_ball_in_free_fall_keeps_the_discrete_parabola_and_a_unit_quaternion():
    """A ball on a free hinge (quaternion), thrown sideways and up while spinning: its centre
    follows the scheme's discrete parabola exactly (a sphere's spin does not couple), its spin
    is kept, and its quaternion stays a unit one."""
    h, vx, vz, w = 1e-3, 1.5, 3.0, 20.0
    m = MultibodySystem("Throw", gravity=(0, 0, -G))
    g = m.set_ground()
    ball = m.add_body("Ball", 2.0, [4e-3, 4e-3, 4e-3, 0, 0, 0])
    m.add_hinge("Float", "free", ball.add_marker((0, 0, 0)), g.add_marker((0, 0, 0)),
                initial_rates=[vx, 0, vz, 0.3 * w, 0, w])
    r = run(m, t_end=0.4, step=h, output_step=0.02)
    t = r.time
    n = np.rint(t / h)
    np.testing.assert_allclose(r["Ball.x"], vx * t, rtol=0, atol=1e-12)
    np.testing.assert_allclose(r["Ball.z"], vz * t - G * h * h * n * (n + 1) / 2, rtol=0,
                               atol=1e-12)
    np.testing.assert_allclose(r["Float.wz"], w, rtol=1e-12)
    q = np.stack([r[f"Float.q{c}"] for c in "wxyz"], axis=1)
    np.testing.assert_allclose(np.linalg.norm(q, axis=1), 1.0, rtol=0, atol=1e-14)
    # the spin turned the ball by w t about its axis (the angle of the quaternion)
    turned = 2 * np.arccos(np.clip(np.abs(q[:, 0]), 0, 1))
    np.testing.assert_allclose(turned[t < 0.15], (math.hypot(0.3 * w, w) * t)[t < 0.15],
                               rtol=1e-3, atol=1e-9)


def test_oscillator_is_the_symplectic_map_and_keeps_its_modified_energy_over_10000_steps():
    """x'' = -w^2 x. One step is (x, v) <- A (x, v), A = [[1 - (w h)^2, h], [-w^2 h, 1]]
    (determinant 1): the run reproduces A^n to round-off over 10,000 steps. The quadratic
    invariant of A, E - k h x v / 2 (E the energy), stays constant to round-off (no drift);
    the energy itself stays in a band of relative width about w h around its start (bounded,
    not growing or decaying)."""
    k, x0, wh, n = 400.0, 0.01, 0.05, 10000
    model, mass = slider(stiffness=k, x0=x0)
    w = math.sqrt(k / mass)
    h = wh / w
    r = run(model, t_end=n * h, step=h, output_step=h)
    assert len(r) == n + 1
    x, v = np.empty(n + 1), np.empty(n + 1)
    x[0], v[0] = x0, 0.0
    for j in range(n):
        v[j + 1] = v[j] - h * w * w * x[j]
        x[j + 1] = x[j] + h * v[j + 1]
    np.testing.assert_allclose(r["Slide.z"], x, rtol=0, atol=1e-11 * x0)
    np.testing.assert_allclose(r["Slide.z_rate"], v, rtol=0, atol=1e-11 * w * x0)
    E = r["energy.total"]
    E0 = 0.5 * k * x0 * x0
    assert E[0] == pytest.approx(E0, rel=1e-14)
    modified = E - 0.5 * k * h * r["Slide.z"] * r["Slide.z_rate"]
    np.testing.assert_allclose(modified, E0, rtol=1e-11)
    # on the invariant's ellipse the energy swings between E0 (1 - w h / (2 + w h)) and
    # E0 (1 + w h / (2 - w h)) (at w x = -v and w x = v); the steps sample near both
    assert E.max() / E0 - 1 == pytest.approx(wh / (2 - wh), rel=2e-3)
    assert 1 - E.min() / E0 == pytest.approx(wh / (2 + wh), rel=2e-3)
    assert E.max() / E0 - 1 <= wh / (2 - wh) * (1 + 1e-9)
    # no drift: the energy's band in the last 1000 steps is the first 1000 steps'
    assert E[-1000:].max() == pytest.approx(E[:1000].max(), rel=1e-4)
    assert E[-1000:].min() == pytest.approx(E[:1000].min(), rel=1e-4)


def test_oscillator_converges_at_first_order():
    """The error at t = 1 s against the exact x0 cos(w t) halves with the step."""
    k, x0 = 400.0, 0.01
    model, mass = slider(stiffness=k, x0=x0)
    w = math.sqrt(k / mass)
    errors = []
    for h in (1e-3, 5e-4, 2.5e-4, 1.25e-4):
        r = run(model, t_end=1.0, step=h, output_step=0.1)
        errors.append(np.abs(r["Slide.z"] - x0 * np.cos(w * r.time)).max() / x0)
    ratios = np.array(errors[:-1]) / np.array(errors[1:])
    assert np.all((ratios > 1.9) & (ratios < 2.1)), (errors, ratios)
    # about w h / 2 (the invariant ellipse's tilt): 1.01e-2 at w h = 0.02
    assert errors[0] == pytest.approx(w * 1e-3 / 2, rel=0.05)


# --------------------------------------------------------------------------------------------------
# against rk4 and between methods
# --------------------------------------------------------------------------------------------------

def test_pendulum_agrees_with_rk4_to_first_order():
    """A pendulum swinging from 1 rad: euler's angle against rk4's (h = 1e-4 s, far more
    accurate) differs by O(h), the difference halving with the step."""
    model, *_ = pendulum(theta0=1.0)
    ref = simulate(model, integrator="rk4", t_end=1.0, step=1e-4, output_step=0.01)["Pin.rz"]
    errors = []
    for h in (1e-3, 5e-4, 2.5e-4):
        r = run(model, t_end=1.0, step=h, output_step=0.01)
        errors.append(np.abs(r["Pin.rz"] - ref).max())
    assert errors[0] < 5e-3                 # 2.6e-3 rad at h = 1 ms
    ratios = np.array(errors[:-1]) / np.array(errors[1:])
    assert np.all((ratios > 1.8) & (ratios < 2.2)), (errors, ratios)


def test_methods_agree_on_a_spinning_box():
    """A box spinning near its intermediate axis (a free hinge: quaternion kinematics), euler
    with the mstmm and the constrained method: the same scheme on the same state, so the same
    numbers to round-off (the constrained method's position rates at the new rates come from
    qdot's linearity in u)."""
    m = MultibodySystem("Spin", gravity=(0, 0, 0))
    g = m.set_ground()
    size = (0.3, 0.2, 0.1)
    mp = massprops.box(size, 1000.0, corner=tuple(-0.5 * np.array(size)))
    b = m.add_body("Box", mp.mass, mp.ji, mass_center=mp.center,
                   initial_angular_velocity=(0.1, 5.0, 0.1))
    m.add_hinge("Float", "free", b.add_marker((0, 0, 0)), g.add_marker((0, 0, 0)))
    a = run(m, "mstmm", t_end=0.5, step=1e-3, output_step=0.05)
    c = run(m, "constrained", t_end=0.5, step=1e-3, output_step=0.05)
    for col in ("Float.qw", "Float.qx", "Float.qy", "Float.qz", "Float.wx", "Float.wy",
                "Float.wz"):
        np.testing.assert_allclose(c[col], a[col], rtol=0, atol=1e-9, err_msg=col)
    # and the motion is not trivial: the box tumbled
    assert np.ptp(a["Float.wx"]) > 0.05


# --------------------------------------------------------------------------------------------------
# drivers
# --------------------------------------------------------------------------------------------------

def test_driven_pendulum_load_and_first_order_work():
    """Driven at 2 pi t from hanging: the angle, rate and the driver's torque m g l sin(q) are
    exact functions of time whatever the step; the driver's work is the power at the steps'
    starts times h (first order: a left Riemann sum), to round-off."""
    model, mass, J, l = pendulum(drive="2*pi*t")
    h = 1e-3
    r = run(model, t_end=0.6, step=h, output_step=0.01)
    t = r.time
    np.testing.assert_allclose(r["Pin.rz"], 2 * np.pi * t, rtol=0, atol=1e-12)
    torque = mass * G * l * np.sin(2 * np.pi * t)
    assert np.abs(torque).max() > 1.0
    np.testing.assert_allclose(r["Pin.rz_drive"], torque, rtol=0, atol=1e-12)
    tk = np.arange(600) * h
    power = mass * G * l * np.sin(2 * np.pi * tk) * 2 * np.pi
    left = np.concatenate([[0.0], np.cumsum(h * power)])[np.rint(t / h).astype(int)]
    scale = mass * G * l
    np.testing.assert_allclose(r["energy.work_drivers"], left, rtol=0, atol=1e-12 * scale)
    # against the exact m g l (1 - cos 2 pi t): O(h)
    exact = scale * (1 - np.cos(2 * np.pi * t))
    err = np.abs(r["energy.work_drivers"] - exact).max()
    assert 0.1 * scale * 2 * np.pi * h < err < 2 * scale * 2 * np.pi * h


# --------------------------------------------------------------------------------------------------
# contacts
# --------------------------------------------------------------------------------------------------

def _ball(k=1e6, e=1.5, mass=2.0, r=0.05, z0=0.0505, v0=0.0, restitution=0.2, gravity=G):
    m = MultibodySystem("Ball", gravity=(0, 0, -gravity))
    g = m.set_ground()
    gm = g.add_marker((0, 0, 0))
    J = 0.4 * mass * r * r
    b = m.add_body("Ball", mass, [J, J, J, 0, 0, 0], position=(0, 0, z0))
    bm = b.add_marker((0, 0, 0))
    m.add_hinge("Float", "free", bm, gm, initial_rates=[0, 0, v0, 0, 0, 0])
    m.add_contact("Hit", bm, gm, ("sphere", {"radius": r}), ("plane",), stiffness=k, exponent=e,
                  restitution=restitution)
    return m


@pytest.mark.parametrize("h", [1e-5, 1e-4])
def test_dropped_ball_comes_to_rest_on_its_weight(h):
    """Dropped from 0.5 mm, the ball settles at the static depth (m g / k)^(1/e) with the normal
    force its weight, at the benchmark's step too."""
    k, e, mass = 1e6, 1.5, 2.0
    res = run(_ball(k, e, mass), t_end=0.6, step=h, output_step=1e-3)
    assert res["Hit.Fn"].max() > 1.5 * mass * G                # it did bounce
    assert res["Hit.Fn"][-1] == pytest.approx(mass * G, rel=1e-6)
    assert res["Hit.depth"][-1] == pytest.approx((mass * G / k) ** (1 / e), rel=1e-6)
    assert abs(res["Ball.vz"][-1]) < 1e-6


def test_contact_step_limit_is_symplectic_eulers():
    """A contact whose rate w makes w h fall between symplectic Euler's limit 2 and rk4's 2.78:
    rk4 takes the step, euler refuses it before the run, naming the contact and a step below
    2 / w."""
    m = _ball(k=1e9, v0=-1.0, z0=0.06, gravity=0.0, restitution=0.7)
    rate = next(r for r, element, *_ in stiff_elements(m) if element == "Contact 'Hit'")
    assert (EULER_LIMIT, RK4_LIMIT) == (2.0, 2.78)
    h = 2.4 / rate
    simulate(m, integrator="rk4", t_end=2 * h, step=h, output_step=h)
    with pytest.raises(RunError) as info:
        run(m, t_end=2 * h, step=h, output_step=h)
    p = info.value.problems[0]
    assert p.element == "Contact 'Hit'" and p.field == "Stiffness"
    assert "euler" in p.message
    step = float(p.message.split("unstable above ")[1].split(" s")[0])
    assert step == pytest.approx(EULER_LIMIT / rate, rel=0.05)
    # below that limit it runs, and the ball bounces off at about the law's restitution
    h = 0.1 / rate
    res = run(m, t_end=0.02, step=0.02 / math.ceil(0.02 / h), output_step=0.02)
    assert res["Ball.vz"][-1] == pytest.approx(0.7, rel=2e-2)


# --------------------------------------------------------------------------------------------------
# settings
# --------------------------------------------------------------------------------------------------

def test_output_step_must_be_whole_steps_named_with_the_integrator():
    model, _ = slider(gravity=G)
    with pytest.raises(ModelError) as info:
        run(model, t_end=0.1, step=3e-3, output_step=0.01)
    p = info.value.problems[0]
    assert (p.element, p.field) == ("Simulation", "OutputStep")
    assert "integrator euler" in p.message
    # and the name is matched without regard to case
    r = simulate(model, integrator="Euler", t_end=0.01, step=1e-3, output_step=0.01)
    assert r.meta["integrator"] == "euler"
