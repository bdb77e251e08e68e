"""Couplers (issue 14): gear pairs, rack and pinion, linear couplings between hinge coordinates,
held exactly by the mstmm and constrained methods: the ratio to 1e-9 over a second, the exact
accelerations and tooth loads of geared inertias, the energy balance, the initial rates, the file
format and the checks."""

import numpy as np
import pytest

from MultibodyWB.solver.model import Driver, ModelError, MultibodySystem, massprops, xmlio
from MultibodyWB.solver.run.simulate import simulate

G = 9.81


def _wheel(m, name, x, radius=0.05, thick=0.01):
    """A disc on a revolute hinge about global z at (x, 0, 0): (body, J about its axis)."""
    g = m.grounds[0]
    mp = massprops.cylinder(radius, thick, 7850.0, base=(0, 0, -thick / 2))
    b = m.add_body(name, mp.mass, mp.ji, mass_center=mp.center, position=(x, 0, 0))
    bm = b.add_marker((0, 0, 0))
    gm = g.add_marker((x, 0, 0))
    m.add_hinge(f"{name}Axle", "revolute", bm, gm)
    J = mp.ji[2] if np.ndim(mp.ji) == 1 else mp.ji[2, 2]
    return b, J


def _gear_pair(ratio=-0.5, torque="2"):
    m = MultibodySystem("Gears")
    m.set_ground()
    p, J1 = _wheel(m, "Pinion", 0.0, radius=0.03)
    w, J2 = _wheel(m, "Wheel", 0.09, radius=0.06)
    m.add_force("Motor", "point_torque", m.hinges[0].input, direction=(0, 0, 1), magnitude=torque)
    m.add_coupler("Mesh", "gear", ("PinionAxle", "rz"), ("WheelAxle", "rz"), ratio=ratio)
    return m, J1, J2


@pytest.mark.parametrize("method, integrator", [("mstmm", "rk4"), ("constrained", "rk4"),
                                                ("mstmm", "DOP853")])
def test_gear_pair_holds_its_ratio_and_accelerates_the_geared_inertia(method, integrator):
    """A torque T on the pinion: u1' = T / (J1 + n^2 J2) exactly; the wheel turns at n times the
    pinion's rate and angle (to 1e-9 over 1 s); the coupler's load on the wheel is J2 n u1'; the
    motor's work is the kinetic energy."""
    n, T = -0.5, 2.0
    m, J1, J2 = _gear_pair(n, str(T))
    res = simulate(m, method=method, integrator=integrator, t_end=1.0, step=1e-3,
                   output_step=0.05)
    t = res.time
    a1 = T / (J1 + n * n * J2)
    np.testing.assert_allclose(res["PinionAxle.rz_rate"], a1 * t, rtol=1e-9, atol=1e-12)
    r1, r2 = res["PinionAxle.rz"], res["WheelAxle.rz"]
    assert np.abs(r2 - n * r1).max() <= 1e-9 * np.abs(r1).max()
    assert np.abs(res["WheelAxle.rz_rate"] - n * res["PinionAxle.rz_rate"]).max() \
        <= 1e-9 * np.abs(res["PinionAxle.rz_rate"]).max()
    assert np.abs(res["Mesh.angle_error"]).max() <= 1e-9 * np.abs(r2).max()
    # the coupler's loads: on the wheel J2 n a1, on the pinion -(that)*n (a = n, b = -1)
    np.testing.assert_allclose(res["Mesh.T2"], J2 * n * a1, rtol=1e-9)
    np.testing.assert_allclose(res["Mesh.T1"], -n * J2 * n * a1, rtol=1e-9)
    ke = 0.5 * (J1 + n * n * J2) * (a1 * t) ** 2
    np.testing.assert_allclose(res["energy.kinetic"], ke, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(res["energy.work_forces"], ke, rtol=1e-8, atol=1e-12)


def test_newton_euler_refuses_couplers_by_name():
    m, _, _ = _gear_pair()
    with pytest.raises(ModelError) as info:
        simulate(m, method="newton-euler", t_end=0.01, step=1e-5, output_step=1e-3)
    assert "Coupler 'Mesh'" in str(info.value) and "mstmm" in str(info.value)


def test_rack_and_pinion_falls_at_the_geared_rate():
    """A rack on a vertical slide meshing with a pinion of pitch radius R: gravity pulls the rack;
    (m + J / R^2) x'' = -m g, x = R theta."""
    m = MultibodySystem("Rack", gravity=(0, 0, -G))
    g = m.set_ground()
    pin, J = _wheel(m, "Pinion", 0.0, radius=0.04)
    mp = massprops.box((0.02, 0.02, 0.3), 7850.0, corner=(-0.01, -0.01, -0.15))
    rack = m.add_body("Rack", mp.mass, mp.ji, mass_center=mp.center, position=(0.04, 0, 0))
    rm = rack.add_marker((0, 0, 0))
    m.add_hinge("Slide", "prismatic", rm, g.add_marker((0.04, 0, 0)))
    R = 0.04
    m.add_coupler("Teeth", "rack_pinion", ("PinionAxle", "rz"), ("Slide", "z"), pitch_radius=R)
    for method in ("mstmm", "constrained"):
        res = simulate(m, method=method, integrator="rk4", t_end=0.5, step=1e-3,
                       output_step=0.05)
        t = res.time
        acc = -mp.mass * G / (mp.mass + J / R ** 2)
        np.testing.assert_allclose(res["Slide.z"], 0.5 * acc * t * t, rtol=1e-9, atol=1e-14)
        np.testing.assert_allclose(res["Slide.z"], R * res["PinionAxle.rz"], rtol=1e-9,
                                   atol=1e-14)
        # the rack's tooth force holds back part of its weight: F2 = m acc + m g
        np.testing.assert_allclose(res["Teeth.F2"], mp.mass * (acc + G), rtol=1e-9)


def test_driven_pinion_turns_the_wheel_whose_rate_is_filled_in():
    """A pinion driven at 10 rad/s from t = 0: the wheel, given no initial rate, starts at the
    rate the gear implies (a note says so) and follows; the driver's load is the wheel's inertia
    torque through the mesh (here 0: constant speed)."""
    m = MultibodySystem("Driven")
    m.set_ground()
    p, J1 = _wheel(m, "Pinion", 0.0)
    w, J2 = _wheel(m, "Wheel", 0.1)
    m.hinges[0].drivers = [Driver("rz", "10*t", from_start=True)]
    m.add_coupler("Mesh", "gear", ("PinionAxle", "rz"), ("WheelAxle", "rz"), ratio=-2.0)
    res = simulate(m, method="mstmm", integrator="rk4", t_end=0.2, step=1e-3, output_step=0.05)
    np.testing.assert_allclose(res["WheelAxle.rz_rate"], -20.0, rtol=1e-12)
    np.testing.assert_allclose(res["PinionAxle.rz_drive"], 0.0, atol=1e-12)
    assert any("Coupler 'Mesh'" in w and "-20" in w for w in res.meta["warnings"])


def test_contradicting_initial_rates_are_refused_with_the_consistent_value():
    m, _, _ = _gear_pair(-0.5)
    m.hinges[0].initial_rates = np.array([4.0])
    m.hinges[1].initial_rates = np.array([1.0])
    with pytest.raises(ModelError) as info:
        simulate(m, method="mstmm", t_end=0.01, step=1e-3, output_step=1e-3)
    text = str(info.value)
    assert "Coupler 'Mesh'" in text and "must start at -2" in text


def test_coupler_file_round_trip_and_checks():
    m, _, _ = _gear_pair()
    m.add_coupler("Lin", "linear", ("PinionAxle", "rz"), ("WheelAxle", "rz"),
                  coefficients=[1.5, 0.5])
    text = xmlio.to_string(m)
    back, problems = xmlio.read_with_problems(text.encode())
    assert problems == []
    assert xmlio.to_string(back) == text
    m.add_coupler("Bad", "rack_pinion", ("PinionAxle", "rz"), ("WheelAxle", "rz"), ratio=2.0)
    msgs = [str(p) for p in m.validate()]
    assert any("Coupler 'Bad'" in s and "second coordinate is a translation" in s for s in msgs)
    assert any("Coupler 'Bad'" in s and "PitchRadius" in s and "missing" in s for s in msgs)


def test_equation_report_has_the_couplers_as_unknowns_and_gives_their_loads():
    """The overall transfer equation's text has each coupler as an unknown (its column and its
    supplementary row, its a and b) and its multiplier: for a torque T on the pinion, the
    wheel's load b lam = J2 n u1' (b = -1)."""
    import re
    from MultibodyWB.solver.run.equation import equation_report
    n, T = -0.5, 2.0
    m, J1, J2 = _gear_pair(n, str(T))
    text = equation_report(m)
    assert "Couplers (a u1 + b u2 = 0): each an unknown multiplier lam of U_all" in text
    assert "+ 1 coupler multiplier)" in text
    assert "supplementary equation of coupler Mesh: a du(PinionAxle.rz) + b du(WheelAxle.rz) = 0" \
        in text
    line = next(s for s in text.splitlines() if s.strip().startswith("Mesh "))
    assert "PinionAxle.rz (a = -0.5)" in line and "WheelAxle.rz (b = -1)" in line
    lam = float(re.search(r"lam = (\S+)", line).group(1))
    a1 = T / (J1 + n * n * J2)
    assert lam == pytest.approx(-J2 * n * a1, rel=1e-5)
    sol = float(re.search(r"^\s+Mesh\.lam\s+(\S+)$", text, re.M).group(1))   # solution Z
    assert sol == pytest.approx(-J2 * n * a1, rel=1e-6)


def _rack_model():
    m = MultibodySystem("Rack", gravity=(0, 0, -G))
    g = m.set_ground()
    _wheel(m, "Pinion", 0.0, radius=0.04)
    mp = massprops.box((0.02, 0.02, 0.3), 7850.0, corner=(-0.01, -0.01, -0.15))
    rack = m.add_body("Rack", mp.mass, mp.ji, mass_center=mp.center, position=(0.04, 0, 0))
    m.add_hinge("Slide", "prismatic", rack.add_marker((0, 0, 0)), g.add_marker((0.04, 0, 0)))
    m.add_coupler("Teeth", "rack_pinion", ("PinionAxle", "rz"), ("Slide", "z"), pitch_radius=0.04)
    return m


def _driven_pair():
    m = MultibodySystem("Driven")
    m.set_ground()
    _wheel(m, "Pinion", 0.0)
    _wheel(m, "Wheel", 0.1)
    m.hinges[0].drivers = [Driver("rz", "10*t + 30*t**2", from_start=True)]
    m.add_coupler("Mesh", "gear", ("PinionAxle", "rz"), ("WheelAxle", "rz"), ratio=-2.0)
    return m


@pytest.mark.parametrize("which", ["gear_pair", "rack", "driven", "gear_train"])
def test_product_form_with_couplers_as_unknowns_agrees_with_the_riccati_kernel(which):
    """Solving the printed overall transfer equation (couplers' multipliers as unknowns with
    their supplementary rows) gives the Riccati run's accelerations, hinge loads and coupler
    multipliers to 1e-10, at states along a run."""
    from MultibodyWB import examples
    from MultibodyWB.solver.analysis.start import resolve
    from MultibodyWB.solver.methods.mstmm.system import System
    from MultibodyWB.solver.methods.mstmm.transfer import solve
    m = {"gear_pair": lambda: _gear_pair()[0], "rack": _rack_model, "driven": _driven_pair,
         "gear_train": lambda: examples.build("gear_train")}[which]()
    res = simulate(m, method="mstmm", integrator="rk4", t_end=0.2, step=1e-3, output_step=0.05)
    system = System(resolve(m)[0])
    for t, y in zip(res.time, res.states):
        inst = system.instant(float(t), y)
        r = solve(system, float(t), y)
        assert len(r.equation.couplers) == len(m.couplers)
        scale = max(1.0, np.abs(inst.udot).max())
        np.testing.assert_allclose(r.udot, inst.udot, atol=1e-10 * scale, rtol=0)
        np.testing.assert_allclose(r.x, inst.x, atol=1e-10 * scale, rtol=0)
        wscale = max(1.0, np.abs(inst.Wh).max())
        np.testing.assert_allclose(r.Wh, inst.Wh, atol=1e-10 * wscale, rtol=0)
        np.testing.assert_allclose(r.tau, inst.tau, atol=1e-10 * wscale, rtol=0)
        np.testing.assert_allclose(r.coupler_lam, inst.coupler_lam,
                                   atol=1e-10 * max(1.0, np.abs(inst.coupler_lam).max()))
        assert r.residual < 1e-10
