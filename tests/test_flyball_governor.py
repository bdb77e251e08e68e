"""The IFToMM A05 stiff flyball governor (MultibodyWB/examples/flyball_governor.py): the model
as the benchmark describes it, its conservation laws, and its slider's position against a
reference computed apart from the workbench's code.

Where the reference values come from (``benchmarks/bench_governor.py --reference``; the
IFToMM library's own reference solution file was not found, see the example's docstring):

* ``S_LAGRANGE``: the governor's Lagrange equations in its four coordinates, derived with sympy
  from the benchmark's data alone (not through the workbench's model, mass properties or
  kinematics) and integrated with scipy's Radau at rtol 1e-12;
* ``S_RK4``: mstmm with rk4 at 1e-4, 5e-5 and 2.5e-5 s: the three agree to 1.3e-13 m (rk4's
  truncation error is already below round-off here), Richardson's extrapolation of the last
  two moves the value by 2e-15 m.
"""

import numpy as np
import pytest

from MultibodyWB.examples import build
from MultibodyWB.examples import flyball_governor as FG
from MultibodyWB.solver.analysis.kinematics import mobility
from MultibodyWB.solver.analysis.topology import analyse
from MultibodyWB.solver.model.validation import validate
from MultibodyWB.solver.run.simulate import simulate

#: s (m) at t = 10 s: mstmm rk4 at 1e-4 s (2.5e-5 s gives 0.6196229170613641)
S_RK4 = 0.6196229170615133
#: s (m) at t = 10 s from the Lagrange equations (sympy + scipy Radau, rtol 1e-12; the spin
#: 5.548203622655356 rad/s, the rods 0.39007370184472934 rad below the horizontal, L_z kept to
#: 1.1e-14; at 1 s s = 0.5014209223795616)
S_LAGRANGE = 0.6196229170612876
assert FG.REFERENCE["s"] == S_LAGRANGE
#: s (m) and the spin rate (rad/s) at t = 1 s, mstmm rk4 at 2.5e-5 s (1e-4 s agrees to 1e-13)
S_1S, SPIN_1S = 0.5014209223795657, 6.271125741876504


def run(t_end, **settings):
    """The example to ``t_end``; tolerances go to the model's Simulation."""
    model = build("flyball_governor", **settings.pop("options", {}))
    for key in ("relative_tolerance", "absolute_tolerance"):
        if key in settings:
            setattr(model.simulation, key, settings.pop(key))
    return simulate(model, t_end=t_end, output_step=settings.pop("output_step", 0.01),
                    **settings)


@pytest.fixture(scope="module")
def ten_seconds():
    """The example at its own settings (mstmm, rk4 at 1e-4 s) over the benchmark's 10 s."""
    return run(FG.END_TIME, output_step=0.05)


def test_the_model_is_the_benchmarks():
    """Valid; four freedoms (spin, slider, two rods), a tree without loops; the masses of the
    description (0.3 kg shaft and rods, 3 kg slider, 5 kg balls); the springs relaxed and the
    rods 30 deg below the horizontal in the start."""
    m = build("flyball_governor")
    assert validate(m) == []
    topo = analyse(m)
    assert not topo.cut_hinges
    assert mobility(m, topo).dof == 4
    mass = {b.name: b.mass for b in m.bodies}
    assert mass["Shaft"] == pytest.approx(0.3) and mass["Slider"] == pytest.approx(3.0)
    assert mass["Rod1"] == mass["Rod2"] == pytest.approx(5.3)
    r = run(1e-4, output_step=1e-4)
    assert r.column("Slide.z")[0] == pytest.approx(FG.S0, abs=1e-15)
    assert r.column("Spin.rz_rate")[0] == pytest.approx(2 * np.pi, abs=1e-15)
    assert r.column("Rod1.z")[0] == pytest.approx(1.0) and r.column("Rod1.x")[0] == \
        pytest.approx(0.05)
    assert r.column("HingeA.rz")[0] == pytest.approx(np.radians(30.0), abs=1e-15)
    assert r.column("HingeB.rz")[0] + np.pi == pytest.approx(np.radians(30.0), abs=1e-15)
    assert r.column("Rod1.R31")[0] == pytest.approx(-0.5, abs=1e-15)   # x axis 30 deg down
    for f in m.forces:
        ends = [m.part(ref.body).marker_global(ref.marker)[0] for ref in (f.input, f.output)]
        assert np.linalg.norm(ends[0] - ends[1]) == pytest.approx(f.free_length, abs=1e-12)
        assert (f.stiffness, f.damping, f.free_length) == (8e5, 4e4, 0.5)
    assert r.column("energy.elastic")[0] == pytest.approx(0.0, abs=1e-18)


def angular_momentum_z(res, model):
    """L_z about the origin from the result rows: each body's mass-centre momentum and its
    inertia about the mass centre, from the poses and velocities stored."""
    L = np.zeros(res.data.shape[0])
    for b in model.bodies:
        R = np.stack([np.stack([res.column(f"{b.name}.R{i}{j}") for j in (1, 2, 3)], -1)
                      for i in (1, 2, 3)], -2)
        p = np.stack([res.column(f"{b.name}.{a}") for a in "xyz"], -1)
        v = np.stack([res.column(f"{b.name}.v{a}") for a in "xyz"], -1)
        w = np.stack([res.column(f"{b.name}.w{a}") for a in "xyz"], -1)
        c = b.mass_center.position
        xx, yy, zz, xy, xz, yz = b.inertia
        Jo = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
        Jc = Jo - b.mass * (c @ c * np.eye(3) - np.outer(c, c))
        rc = np.einsum("nij,j->ni", R, c)
        pc, vc = p + rc, v + np.cross(w, rc)
        Jg = np.einsum("nij,jk,nlk->nil", R, Jc, R)
        L += b.mass * np.cross(pc, vc)[:, 2] + np.einsum("nij,nj->ni", Jg, w)[:, 2]
    return L


def test_energy_balance_and_angular_momentum(ten_seconds):
    """Nothing does work but gravity and the springs (potentials) and the dampers (dissipation):
    total + dissipated energy stays what it was to 2e-9 of the kinetic energy (5.7e-10
    measured: rk4's work quadrature over the start's fast transient); the dampers take energy
    and never give it back. Nothing turns the governor about z: its angular momentum about the
    shaft stays constant to 1e-12 (1.7e-14 measured) while the spin changes by 12 %."""
    r = ten_seconds
    kinetic = r.column("energy.kinetic")
    residual = r.column("energy.residual")
    assert abs(residual).max() < 2e-9 * kinetic.max()
    dis = r.column("energy.dissipated")
    assert dis[-1] > 1e-3 and np.all(np.diff(dis) >= -1e-15)
    total = r.column("energy.total") + dis
    assert abs(total - total[0]).max() < 2e-9 * kinetic.max()
    L = angular_momentum_z(r, build("flyball_governor"))
    assert abs(L / L[0] - 1.0).max() < 1e-12
    spin = r.column("Spin.rz_rate")
    assert spin.min() < 0.9 * spin[0]                   # the balls went out: it slowed down


def test_rk4_agrees_with_the_lagrange_reference(ten_seconds):
    """The slider's position at 10 s, the benchmark's quantity, against the independent
    Lagrange equations' value and rk4's own converged value: 1e-11 m (2.3e-13 and 0 measured;
    the margin is for other machines' round-off), the spin and the rods' angles too."""
    r = ten_seconds
    s = r.column("Slide.z")[-1]
    assert r.data[-1, 0] == pytest.approx(10.0, abs=1e-12)
    assert s == pytest.approx(S_LAGRANGE, abs=1e-11)
    assert s == pytest.approx(S_RK4, abs=1e-11)
    assert r.column("Spin.rz_rate")[-1] == pytest.approx(5.548203622655356, abs=1e-10)
    # the rods' angles below the horizontal: HingeA's coordinate, HingeB's plus pi (its shaft
    # marker faces the other way)
    for th in (r.column("HingeA.rz")[-1], r.column("HingeB.rz")[-1] + np.pi):
        assert th == pytest.approx(0.39007370184472934, abs=1e-10)
    assert ten_seconds.column("Slide.z").max() > 0.7     # it moved: the balls swung out


def test_the_constrained_method_agrees():
    """The global formulation (absolute coordinates, Lagrange multipliers; about 7 ms an
    evaluation here, hence 10 ms) against mstmm, both rk4 at 1e-4 s: the slider, the rods'
    angles and the spin to 1e-12, their accelerations to 1e-9 of the largest (they differ by
    round-off, 5e-13)."""
    a = run(0.01, output_step=0.001)
    b = run(0.01, output_step=0.001, method="constrained")
    assert b.meta["method"] == "constrained"
    for col in ("Slide.z", "HingeA.rz", "HingeB.rz", "Spin.rz_rate"):
        np.testing.assert_allclose(b.column(col), a.column(col), rtol=0, atol=1e-12, err_msg=col)
    for col in ("Slide.z_acc", "HingeA.rz_acc", "HingeB.rz_acc", "Spin.rz_acc"):
        scale = abs(a.column(col)).max()
        np.testing.assert_allclose(b.column(col), a.column(col), rtol=0, atol=1e-9 * scale,
                                   err_msg=col)
    assert a.column("Slide.z")[-1] - FG.S0 > 1e-4                   # it has moved


def test_dop853_at_1e_10_agrees_with_the_reference():
    """The compiled DOP853 at rtol 1e-10 over the benchmark's 10 s: s(10) within 1e-9 m of the
    converged reference (1.4e-13 measured)."""
    r = run(FG.END_TIME, integrator="DOP853", relative_tolerance=1e-10,
            absolute_tolerance=1e-12, output_step=1.0)
    assert r.column("Slide.z")[-1] == pytest.approx(S_LAGRANGE, abs=1e-9)


@pytest.mark.parametrize("options", [{"stiffness": 8.8e5}, {"rod_length": 0.99},
                                     {"alpha": np.radians(29.0)}],
                         ids=["K+10%", "rod-1cm", "alpha-1deg"])
def test_a_changed_parameter_misses_the_reference(options):
    """The comparison bites: the stiffness 10 % up, the rods 1 cm shorter or the start 1 deg
    higher moves s(1 s) well beyond the tolerance the unchanged model meets."""
    good = run(1.0)
    assert good.column("Slide.z")[-1] == pytest.approx(S_1S, abs=1e-10)
    assert good.column("Spin.rz_rate")[-1] == pytest.approx(SPIN_1S, abs=1e-9)
    bad = run(1.0, options=options)
    assert abs(bad.column("Slide.z")[-1] - S_1S) > 1e-6
