"""The energy balance of the results: the work of drivers and applied forces, the energy the
dampers dissipate, and the residual (the drift) of every method and integrator.

``energy.residual = total - total(0) - work_drivers - work_forces + dissipated`` is at the level
of the integration error for a correct run; the works are checked against closed forms.
"""

import numpy as np
import pytest

from MultibodyWB.examples import build
from MultibodyWB.solver.model import massprops
from MultibodyWB.solver.model import Driver, MultibodySystem
from MultibodyWB.solver.results.table import Results
from MultibodyWB.solver.model.columns import ENERGY_COLUMNS, unit_of
from MultibodyWB.solver.run.simulate import simulate

G = 9.81
BALANCE = ("work_drivers", "work_forces", "dissipated", "residual")


# --------------------------------------------------------------------------------------------------
# models
# --------------------------------------------------------------------------------------------------

def pendulum(drive=None, damping=0.0, theta0=0.0, length=0.5, stiffness=0.0):
    """A rod hanging from a revolute hinge about global y (gravity -z); the hinge coordinate is
    the rod's angle from the vertical. Returns the model, m, J_O (about the pivot), l (pivot to
    mass centre)."""
    m = MultibodySystem("Pendulum", gravity=(0, 0, -G))
    g = m.set_ground()
    pivot = g.add_marker((0, 0, 0), (-np.pi / 2, 0, 0))          # z along global +y
    mp = massprops.box((0.02, 0.02, length), 2700.0, corner=(-0.01, -0.01, -length))
    rod = m.add_body("Rod", mp.mass, mp.ji, mass_center=mp.center)
    mk = rod.add_marker((0, 0, 0), (-np.pi / 2, 0, 0))
    m.add_hinge("Pin", "revolute", mk, pivot, initial_coordinates=[theta0], initial_rates=[0.0],
                damping=[damping] if damping else None,
                stiffness=[stiffness] if stiffness else None,
                drivers=[Driver("rz", drive)] if drive else [])
    return m, mp.mass, mp.ji[1], length / 2


def slider(force="3.0", frame="global", gas=None):
    """A 2 kg block on a prismatic hinge along global z, no gravity, pushed along the slide by a
    point force of magnitude ``force`` (N), and, with ``gas``, pulled towards the ground by a
    spring-damper of zero stiffness whose magnitude is ``gas`` (N, a time function)."""
    m = MultibodySystem("Slider", gravity=(0, 0, 0))
    g = m.set_ground()
    o = g.add_marker((0, 0, 0))
    far = g.add_marker((0, 0, -1.0))
    mp = massprops.box((0.1, 0.1, 0.1), 2000.0, corner=(-0.05, -0.05, -0.05))
    b = m.add_body("Block", mp.mass, mp.ji, mass_center=mp.center)
    mk = b.add_marker((0, 0, 0))
    m.add_hinge("Slide", "prismatic", mk, o, initial_coordinates=[0.0], initial_rates=[0.5])
    m.add_force("Push", "point_force", b.add_marker((0, 0.05, 0)), direction=(0, 0, 1),
                frame=frame, magnitude=force)
    if gas is not None:
        m.add_force("Gas", "spring_damper", b.add_marker((0, 0, 0)), far, magnitude=gas)
    return m, mp.mass


def settings(method, integrator, t_end, step, output_step):
    return dict(method=method, integrator=integrator, t_end=t_end, step=step,
                output_step=output_step)


RUNS = [("mstmm", "rk4"), ("mstmm", "DOP853"), ("constrained", "rk4"), ("constrained", "DOP853")]


# --------------------------------------------------------------------------------------------------
# the columns
# --------------------------------------------------------------------------------------------------

def test_balance_columns_are_documented_in_joules():
    for q in BALANCE:
        assert q in ENERGY_COLUMNS
        assert unit_of(f"energy.{q}") == "J"


# --------------------------------------------------------------------------------------------------
# drivers
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("method,integrator", RUNS)
def test_driven_pendulum_work_is_the_potential_energy_it_gains(method, integrator):
    """Driven at 2 pi t from hanging: the rate is constant, so the driver's work is the change
    of the potential energy, m g l (1 - cos 2 pi t)."""
    model, mass, J, l = pendulum(drive="2*pi*t")
    t_end = 0.6 if method == "mstmm" else 0.3
    r = simulate(model, **settings(method, integrator, t_end, 1e-3, 1e-2))
    t = r.time
    expected = mass * G * l * (1.0 - np.cos(2.0 * np.pi * t))
    scale = mass * G * l
    np.testing.assert_allclose(r["energy.work_drivers"], expected, rtol=0, atol=1e-7 * scale)
    np.testing.assert_allclose(r["energy.kinetic"], 0.5 * J * (2 * np.pi) ** 2, rtol=1e-9)
    assert np.all(r["energy.work_forces"] == 0.0) and np.all(r["energy.dissipated"] == 0.0)
    res = r["energy.residual"]
    assert np.max(np.abs(res)) < 1e-6 * scale
    d, rel = r.energy_drift()
    assert d == res[-1] and abs(rel) < 1e-6
    # the driver's load times the rate is the power: the sampled work agrees to quadrature error
    power = r["Pin.rz_drive"] * r["Pin.rz_rate"]
    trapz = np.concatenate([[0.0], np.cumsum(0.5 * np.diff(t) * (power[1:] + power[:-1]))])
    np.testing.assert_allclose(r["energy.work_drivers"], trapz, atol=2e-3 * scale)


@pytest.mark.parametrize("method,integrator", [("mstmm", "rk4"), ("mstmm", "RK45"),
                                               ("constrained", "rk4")])
def test_driver_against_a_hinge_damper_supplies_what_it_dissipates(method, integrator):
    """Driven at 2 pi t with a hinge damper c: the driver also supplies c (2 pi)^2 t, which the
    damper dissipates."""
    c = 0.05
    model, mass, J, l = pendulum(drive="2*pi*t", damping=c)
    r = simulate(model, **settings(method, integrator, 0.4, 1e-3, 1e-2))
    t = r.time
    lost = c * (2 * np.pi) ** 2 * t
    np.testing.assert_allclose(r["energy.dissipated"], lost, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(r["energy.work_drivers"],
                               mass * G * l * (1.0 - np.cos(2 * np.pi * t)) + lost,
                               rtol=0, atol=1e-7 * mass * G * l)
    assert np.max(np.abs(r["energy.residual"])) < 1e-6 * mass * G * l


@pytest.mark.parametrize("method,integrator", [("mstmm", "rk4"), ("mstmm", "DOP853"),
                                               ("constrained", "rk4")])
def test_driver_against_a_hinge_spring_supplies_its_energy(method, integrator):
    """Driven at 2 pi t against the hinge's own spring k: the driver also supplies the
    spring's energy 1/2 k (2 pi t)^2 (the driver's load excludes the spring's)."""
    k = 0.3
    model, mass, J, l = pendulum(drive="2*pi*t", stiffness=k)
    r = simulate(model, **settings(method, integrator, 0.4, 1e-3, 1e-2))
    t = r.time
    stored = 0.5 * k * (2 * np.pi * t) ** 2
    np.testing.assert_allclose(r["energy.elastic"], stored, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(r["energy.work_drivers"],
                               mass * G * l * (1.0 - np.cos(2 * np.pi * t)) + stored,
                               rtol=0, atol=1e-7 * mass * G * l)
    assert abs(r.energy_drift()[1]) < 1e-7


@pytest.mark.parametrize("integrator", ["rk4", "DOP853"])
def test_a_motor_is_a_driver(integrator):
    """A motor (constant speed after a ramp) on the four-bar's crank, a closed loop: its work
    is the drivers' and the balance closes."""
    from MultibodyWB.solver import model as M
    if not hasattr(M, "Motor"):
        pytest.skip("no motors in this version of the model")
    fb = build("four_bar")
    fb.hinge("CrankPivot").motors = [M.Motor("rz", 3.0, 0.2)]
    r = simulate(fb, **settings("mstmm", integrator, 1.0, 1e-3, 1e-2))
    wd = r["energy.work_drivers"]
    assert np.max(np.abs(wd)) > 0.05
    e = r["energy.total"]
    np.testing.assert_allclose(wd, e - e[0], rtol=0, atol=1e-7 * np.max(np.abs(wd)))
    assert abs(r.energy_drift()[1]) < 1e-7


def test_the_residual_is_the_integration_error_fourth_order():
    """rk4 on a swinging damped pendulum: the residual falls with the step like h^4 (a
    dissipation computed from the output samples, or a wrong power, would not)."""
    model, *_ = pendulum(damping=0.05, theta0=1.5)
    res = []
    steps = (1e-2, 5e-3, 2.5e-3)
    for h in steps:
        r = simulate(model, **settings("mstmm", "rk4", 1.0, h, 2e-2))
        res.append(np.max(np.abs(r["energy.residual"])))
    slope = np.polyfit(np.log(steps), np.log(res), 1)[0]
    assert 3.5 < slope < 4.5, (res, slope)


# --------------------------------------------------------------------------------------------------
# dampers
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("method,integrator", RUNS)
def test_damped_pendulum_dissipates_the_energy_it_loses(method, integrator):
    model, mass, J, l = pendulum(damping=0.02, theta0=1.0)
    t_end = 2.0 if method == "mstmm" else 0.5
    r = simulate(model, **settings(method, integrator, t_end, 1e-3, 1e-2))
    e = r["energy.total"]
    lost = e[0] - e
    assert lost[-1] > 0.01 * abs(mass * G * l)             # it does lose energy
    np.testing.assert_allclose(r["energy.dissipated"], lost, rtol=0, atol=1e-6 * mass * G * l)
    assert np.all(np.diff(r["energy.dissipated"]) >= 0.0)
    assert np.all(r["energy.work_drivers"] == 0.0) and np.all(r["energy.work_forces"] == 0.0)
    assert abs(r.energy_drift()[1]) < 1e-6


def test_spring_damper_and_rotational_damper_dissipation():
    """The branched tree's spring-damper (c = 0.5): dissipated > 0 and the residual closes."""
    r = simulate(build("branched_tree"), **settings("mstmm", "rk4", 0.5, 1e-3, 1e-2))
    assert r["energy.dissipated"][-1] > 1e-7
    assert abs(r.energy_drift()[1]) < 1e-9


def damped_springs():
    """A spherical-hinge arm, a prismatic slider and a bushing-mounted puck, each with springs
    (equal rotational stiffnesses) and dampers, plus a spring-damper and a rotational
    spring-damper with damping, under gravity."""
    m = MultibodySystem("DampedSprings", gravity=(0, 0, -G))
    g = m.set_ground()
    o = g.add_marker((0, 0, 0))
    anchor = g.add_marker((0.3, 0.1, 0.2))
    mp = massprops.box((0.1, 0.1, 0.4), 1000.0, corner=(-0.05, -0.05, -0.4))
    arm = m.add_body("Arm", mp.mass, mp.ji, mass_center=mp.center)
    base, tip = arm.add_marker((0, 0, 0)), arm.add_marker((0, 0, -0.4))
    m.add_hinge("Ball", "spherical", base, o, initial_coordinates=[0.3, -0.2, 0.1],
                initial_rates=[1, 2, 3], stiffness=[20, 20, 20], damping=[0.1, 0.2, 0.3],
                spring_reference=[0.1, 0, 0.2])
    mp2 = massprops.box((0.05, 0.05, 0.05), 1000.0, corner=(-0.025, -0.025, -0.025))
    blk = m.add_body("Slider", mp2.mass, mp2.ji, mass_center=mp2.center, position=(0, 0, -0.4))
    m.add_hinge("Slide", "prismatic", blk.add_marker((0, 0, 0)), tip, initial_coordinates=[0.05],
                initial_rates=[0.3], stiffness=[50.0], damping=[0.4], spring_reference=[0.02])
    m.add_force("Spring", "spring_damper", blk.add_marker((0.01, 0.02, 0)), anchor,
                stiffness=30.0, damping=0.5, free_length=0.3)
    m.add_force("Twist", "rotational_spring_damper", base, o, stiffness=5.0, damping=0.05)
    puck = m.add_body("Puck", mp2.mass, mp2.ji, mass_center=mp2.center, position=(0.1, 0, -0.2))
    m.add_hinge("Mount", "bushing", puck.add_marker((0, 0, 0)), arm.add_marker((0.1, 0, -0.2)),
                initial_coordinates=[0.01, 0, 0, 0, 0.1, 0], initial_rates=[0, 0.2, 0, 1, 0, 0],
                stiffness=[400, 400, 400, 2, 2, 2], damping=[0.5, 0.5, 0.5, 0.001, 0.001, 0.001])
    return m


@pytest.mark.parametrize("method,integrator", [("mstmm", "rk4"), ("mstmm", "DOP853"),
                                               ("constrained", "rk4")])
def test_every_damper_dissipates_what_the_system_loses(method, integrator):
    """Hinge dampers on a spherical, a prismatic and a bushing hinge, a spring-damper and a
    rotational spring-damper: the energy lost is the energy dissipated."""
    t_end = 1.0 if method == "mstmm" else 0.1
    r = simulate(damped_springs(), **settings(method, integrator, t_end, 2e-4, 1e-2))
    e = r["energy.total"]
    lost = e[0] - e
    assert lost[-1] > 0.02 * np.max(r["energy.kinetic"])
    assert np.all(np.diff(r["energy.dissipated"]) > 0.0)
    np.testing.assert_allclose(r["energy.dissipated"], lost, rtol=0,
                               atol=1e-6 * np.max(np.abs(lost)))
    assert abs(r.energy_drift()[1]) < 1e-7


# --------------------------------------------------------------------------------------------------
# forces
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("method,integrator", RUNS)
def test_point_force_work_is_force_times_displacement(method, integrator):
    F = 3.0
    model, mass = slider(force=repr(F))
    r = simulate(model, **settings(method, integrator, 0.5, 1e-3, 1e-2))
    z = r["Slide.z"]
    np.testing.assert_allclose(r["energy.work_forces"], F * (z - z[0]), rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(r["energy.work_forces"], r["energy.kinetic"]
                               - r["energy.kinetic"][0], rtol=1e-9, atol=1e-12)
    assert np.max(np.abs(r["energy.residual"])) < 1e-9


@pytest.mark.parametrize("method,integrator", [("mstmm", "rk4"), ("mstmm", "Radau"),
                                               ("constrained", "rk4")])
def test_point_torque_work_is_torque_times_angle(method, integrator):
    """A rod on a revolute hinge about global y, no gravity, turned by a point torque of
    0.2 N m about global y: work_forces = T (theta - theta0) = the kinetic energy gained."""
    model, mass, J, l = pendulum(theta0=0.2)
    model.gravity = np.zeros(3)
    rod = model.body("Rod")
    model.add_force("Turn", "point_torque", rod.add_marker((0, 0, -0.1)), direction=(0, 1, 0),
                    magnitude="0.2")
    r = simulate(model, **settings(method, integrator, 0.5, 1e-3, 1e-2))
    q = r["Pin.rz"]
    assert q[-1] - q[0] > 0.1
    np.testing.assert_allclose(r["energy.work_forces"], 0.2 * (q - q[0]), rtol=1e-9,
                               atol=1e-12)
    np.testing.assert_allclose(r["energy.work_forces"], r["energy.kinetic"], rtol=1e-6,
                               atol=1e-12)
    assert abs(r.energy_drift()[1]) < 1e-8


@pytest.mark.parametrize("method,integrator", [("mstmm", "rk4"), ("mstmm", "LSODA"),
                                               ("constrained", "rk4")])
def test_time_functions_of_forces_do_work(method, integrator):
    """A point force 3 sin(4 t) in the marker's axes and a gas force 2 + t on a spring-damper
    (it pulls the block towards the far ground point, 1 m below): work_forces is the integral
    of F(t) dz."""
    model, mass = slider(force="3*sin(4*t)", frame="marker", gas="2 + t")
    r = simulate(model, **settings(method, integrator, 1.0, 1e-3, 1e-3))
    t, v = r.time, r["Slide.z_rate"]
    power = (3 * np.sin(4 * t) - (2 + t)) * v
    trapz = np.concatenate([[0.0], np.cumsum(np.diff(t) / 2 * (power[1:] + power[:-1]))])
    np.testing.assert_allclose(r["energy.work_forces"], trapz, atol=1e-6)
    scale = np.max(np.abs(r["energy.kinetic"]))
    np.testing.assert_allclose(r["energy.work_forces"],
                               r["energy.kinetic"] - r["energy.kinetic"][0], atol=1e-7 * scale)
    assert np.max(np.abs(r["energy.residual"])) < 1e-7 * scale


# --------------------------------------------------------------------------------------------------
# conservative models, summary, files
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("integrator", ["rk4", "RK45"])
def test_conservative_model_works_are_zero_and_residual_is_the_old_drift(integrator):
    r = simulate(build("double_pendulum"), **settings("mstmm", integrator, 0.5, 1e-3, 1e-2))
    for q in ("work_drivers", "work_forces", "dissipated"):
        assert np.all(r[f"energy.{q}"] == 0.0)
    e = r["energy.total"]
    assert np.array_equal(r["energy.residual"], e - e[0])
    d, rel = r.energy_drift()
    assert d == e[-1] - e[0]


def test_summary_calls_only_the_residual_drift():
    model, *_ = pendulum(drive="2*pi*t")
    r = simulate(model, **settings("mstmm", "rk4", 0.25, 1e-3, 1e-2))
    text = r.summary()
    line = next(s for s in text.splitlines() if "energy" in s)
    wd = r["energy.work_drivers"][-1]
    assert wd > 0.1
    assert f"work of drivers {wd:.6g} J" in line
    assert "of forces 0 J" in line and "dissipated 0 J" in line
    assert "residual (drift)" in line and line.count("drift") == 1
    d, rel = r.energy_drift()
    assert abs(rel) < 1e-9 and f"{d:.3g} J" in line


def test_results_without_balance_columns_still_summarise(tmp_path):
    """A results file of an older version (no balance columns): the change of the total energy."""
    r = simulate(build("double_pendulum"), **settings("mstmm", "rk4", 0.1, 1e-3, 1e-2))
    keep = [i for i, n in enumerate(r.names) if n.rpartition(".")[2] not in BALANCE]
    old = Results([r.names[i] for i in keep], r.data[:, keep], r.meta)
    e = old["energy.total"]
    assert old.energy_drift()[0] == e[-1] - e[0]
    assert "no energy balance" in old.summary()
    r.save(tmp_path / "r.npz")
    back = Results.from_npz(tmp_path / "r.npz")
    assert np.array_equal(back["energy.residual"], r["energy.residual"])


# --------------------------------------------------------------------------------------------------
# the examples end to end
# --------------------------------------------------------------------------------------------------

def test_crank_slider_at_its_settings_balances():
    """The engine (driven crank, gas force on the piston) at its own settings (rk4, 10 us,
    0.1 ms output, four revolutions): the driver's and the gas force's works are large, the
    residual is not."""
    model = build("crank_slider")
    r = simulate(model)
    assert r.meta["integrator"] == "rk4" and r.meta["method"] == "mstmm"
    assert r.time[-1] == model.simulation.end_time
    wd, wf = r["energy.work_drivers"], r["energy.work_forces"]
    assert np.max(np.abs(wd)) > 10.0 and np.max(np.abs(wf)) > 10.0
    d, rel = r.energy_drift()
    assert abs(rel) < 1e-6
    assert np.max(np.abs(r["energy.residual"])) < 1e-6 * np.max(np.abs(wd))
    assert "work of drivers" in r.summary()


def test_crank_slider_methods_agree_on_the_works():
    model = build("crank_slider")
    kw = dict(t_end=0.002, step=1e-5, output_step=1e-4)
    a = simulate(model, method="mstmm", **kw)
    b = simulate(model, method="constrained", **kw)
    for q in ("work_drivers", "work_forces"):
        np.testing.assert_allclose(b[f"energy.{q}"], a[f"energy.{q}"], rtol=0, atol=1e-6)
    assert abs(b.energy_drift()[1]) < 1e-6
    ne = simulate(model, method="newton-euler", t_end=0.002, step=1e-6, output_step=1e-5)
    # newton-euler: the works sampled at the output times, its penalty joints in the residual
    assert abs(ne["energy.work_drivers"][-1] - a["energy.work_drivers"][-1]) < 0.01 * abs(
        a["energy.work_drivers"][-1])
    assert abs(ne.energy_drift()[1]) < 1e-3
