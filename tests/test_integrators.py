"""Every integrator on a stiff sprung slider, against the exact damped oscillation (the
first-order euler to its own, looser, bound)."""

import numpy as np
import pytest

from MultibodyWB.solver.model import massprops
from MultibodyWB.solver.model import INTEGRATORS, MultibodySystem
from MultibodyWB.solver.run.simulate import simulate

K, C, X0 = 1.0e6, 50.0, 1e-3     # N/m, N s/m, m


def slider():
    m = MultibodySystem("StiffSlider")
    g = m.set_ground()
    guide = g.add_marker()
    mp = massprops.box((0.05, 0.05, 0.05), 8000.0, corner=(-0.025, -0.025, -0.025))
    b = m.add_body("Block", mp.mass, mp.ji, mass_center=mp.center)
    m.add_hinge("Slide", "prismatic", b.add_marker(), guide, initial_coordinates=[X0],
                stiffness=[K], damping=[C])
    return m, mp.mass


def exact(t, mass):
    w0 = np.sqrt(K / mass)
    zeta = C / (2 * mass * w0)
    wd = w0 * np.sqrt(1 - zeta ** 2)
    return X0 * np.exp(-zeta * w0 * t) * (np.cos(wd * t) + zeta * w0 / wd * np.sin(wd * t))


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_stiff_slider(integrator):
    model, mass = slider()
    s = model.simulation
    s.end_time, s.output_step = 0.02, 1e-3
    # euler is first order: its error is about w h / 2 (w = 1000 rad/s); TR-BDF2 second
    # (trbdf2: 4.6e-5 at 1e-5 s, so 2e-6 s; trbdf2-adaptive at rtol 1e-9: 2.0e-6)
    s.step = {"rk4": 1e-6, "euler": 1e-7, "trbdf2": 2e-6}.get(integrator, 1e-5)
    s.relative_tolerance, s.absolute_tolerance = 1e-9, 1e-13
    r = simulate(model, integrator=integrator)
    err = np.max(np.abs(r.column("Slide.z") - exact(r.time, mass))) / X0
    bound = {"euler": 1e-4, "trbdf2": 1e-5, "trbdf2-adaptive": 1e-5}.get(integrator, 1e-6)
    assert err < bound, f"{integrator}: relative error {err:.2e}"
    assert r.meta["integrator"].lower() == integrator.lower()
