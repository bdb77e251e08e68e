"""The discrete-time Newton-Euler method (``method='newton-euler'``): against the MSTMM solver,
convergence with the step, joint drift, energy, a closed loop, drivers, the results format."""

import numpy as np
import pytest

from MultibodyWB.examples import build
from MultibodyWB.examples.crank_slider import positions
from MultibodyWB.solver.model import massprops
from MultibodyWB.solver.methods.newton_euler import run as NE_run, scheme as NE
from MultibodyWB.solver.run import simulate as sim
from MultibodyWB.solver.analysis.kinematics import Pose, drawn_poses, hinge_residual
from MultibodyWB.solver.model import Driver, MultibodySystem
from MultibodyWB.solver.maths.rotations import inertia_vector_to_tensor, parallel_axis
from MultibodyWB.solver.run.simulate import simulate
from MultibodyWB.solver.methods.runtime import Cancelled

G = 9.81
STEPS = (1e-4, 1e-5, 1e-6)
T_END = 0.2
REACTIONS = ("Fx", "Fy", "Fz", "Tx", "Ty", "Tz")


def pendulum():
    """A rod on a revolute hinge about global y whose mass centre is off the hinge plane, so that
    the hinge carries a constraint torque too; released at 1 rad with 0.5 rad/s."""
    m = MultibodySystem("Pendulum", gravity=(0, 0, -G))
    g = m.set_ground()
    pivot = g.add_marker((0, 0, 0), (-np.pi / 2, 0, 0))          # z along global +y
    mp = massprops.box((0.03, 0.02, 0.4), 2700.0, corner=(0.01, 0.05, -0.4))
    b = m.add_body("Rod", mp.mass, mp.ji, mass_center=mp.center)
    mk = b.add_marker((0, 0, 0), (-np.pi / 2, 0, 0))
    m.add_hinge("Pin", "revolute", mk, pivot, initial_coordinates=[1.0], initial_rates=[0.5])
    return m


def max_error(ref, res, columns, first=1):
    """Largest absolute difference over ``columns`` from output row ``first`` on."""
    return max(float(np.max(np.abs(res[c][first:] - ref[c][first:]))) for c in columns)


def position_columns(res):
    return [f"{b}.{a}" for b in res.bodies for a in "xyz"]


def reaction_columns(res):
    return [f"{h}.{q}" for h in res.hinges for q in REACTIONS]


def hinge_residuals(model, res):
    """Largest hinge residual (m or rad) of every output row, shape (n_times,)."""
    out = np.zeros(len(res))
    for k in range(len(res)):
        poses = drawn_poses(model)
        for b in res.bodies:
            poses[b] = Pose(res.rotation(b)[k], res.position(b)[k])
        out[k] = max(np.max(np.abs(hinge_residual(model, h.name, poses))) for h in model.hinges)
    return out


@pytest.fixture(scope="module")
def runs():
    """Per model: (model, MSTMM reference, {step: Newton-Euler results})."""
    out = {}
    for name, model in (("pendulum", pendulum()), ("double_pendulum", build("double_pendulum"))):
        ref = simulate(model, t_end=T_END, step=1e-4, output_step=0.01)   # rk4: error ~1e-12
        res = {h: simulate(model, method="newton-euler", t_end=T_END, step=h, output_step=0.01)
               for h in STEPS}
        out[name] = (model, ref, res)
    return out


# --------------------------------------------------------------------------------------------------
# against the MSTMM solver
# --------------------------------------------------------------------------------------------------

def test_same_columns_and_metadata_as_mstmm(runs):
    for model, ref, res in runs.values():
        r = res[1e-5]
        assert r.names == ref.names
        assert r.meta["method"] == "newton-euler" and r.meta["steps"] == round(T_END / 1e-5)
        assert r.meta["joint_frequency"] == pytest.approx(NE.JOINT_FRACTION / (2 * 1e-5))
        np.testing.assert_allclose(r.time, ref.time, rtol=0, atol=1e-12)
        # the first row is the same initial state (positions, velocities, hinge coordinates)
        first = [c for c in ref.names[1:] if c.rsplit(".", 1)[1] in
                 ("x", "y", "z", "a", "b", "c", "vx", "vy", "vz", "wx", "wy", "wz", "rz",
                  "rz_rate")]
        np.testing.assert_allclose(r.data[0, [r.names.index(c) for c in first]],
                                   ref.data[0, [ref.names.index(c) for c in first]], atol=1e-12)


@pytest.mark.parametrize("name", ["pendulum", "double_pendulum"])
def test_positions_converge_to_mstmm_at_first_order(runs, name):
    model, ref, res = runs[name]
    cols = position_columns(ref) + [f"{h.name}.rz" for h in model.hinges]
    err = [max_error(ref, res[h], cols) for h in STEPS]
    assert err[0] > err[1] > err[2]
    for coarse, fine in zip(err, err[1:]):
        assert 0.03 < fine / coarse < 0.3, err          # order 1 (0.5 .. 1.5) per decade
    assert err[1] < 5e-5                               # m, rad at h = 1e-5 s


@pytest.mark.parametrize("name", ["pendulum", "double_pendulum"])
def test_reactions_converge_to_mstmm(runs, name):
    """Reactions from t = 0.03 s: at t = 0 the joints are not loaded yet, and they load within
    their ring-down time, about 0.01 s at the coarsest step (1 ms at h = 1e-5 s)."""
    model, ref, res = runs[name]
    cols = reaction_columns(ref)
    scale = max(float(np.max(np.abs(ref[c]))) for c in cols)
    err = [max_error(ref, res[h], cols, first=3) for h in STEPS]
    assert err[0] > err[1] > err[2]
    for coarse, fine in zip(err, err[1:]):
        assert 0.03 < fine / coarse < 0.3, err
    assert err[1] < 1e-4 * scale
    # rates and accelerations too
    for q in ("rz_rate", "rz_acc"):
        cols = [f"{h.name}.{q}" for h in model.hinges]
        e = [max_error(ref, res[h], cols, first=3) for h in STEPS]
        assert e[0] > e[1] > e[2], (q, e)


@pytest.mark.parametrize("name", ["pendulum", "double_pendulum"])
def test_joint_drift_is_the_joint_compliance(runs, name):
    """The markers stay together to within the penalty's deflection, ~ h^2."""
    model, ref, res = runs[name]
    drift = [float(np.max(hinge_residuals(model, res[h]))) for h in STEPS]
    assert drift[1] < 1e-7                              # m, rad at h = 1e-5 s
    assert drift[2] < drift[1] / 30 and drift[1] < drift[0] / 30
    assert np.max(hinge_residuals(model, ref)) < 1e-12  # the tree solver: exact


@pytest.mark.parametrize("name", ["pendulum", "double_pendulum"])
def test_energy_is_nearly_conserved(runs, name):
    model, ref, res = runs[name]
    spread = []
    for h in STEPS:
        e = res[h]["energy.total"]
        scale = float(np.max(np.abs(res[h]["energy.kinetic"])))
        spread.append(float(np.ptp(e)) / scale)
    assert spread[1] < 1e-4 and spread[0] > spread[1] > spread[2]


# --------------------------------------------------------------------------------------------------
# closed loop, drivers, free body
# --------------------------------------------------------------------------------------------------

def test_four_bar_keeps_its_loop_closed_to_within_the_joint_compliance():
    model = build("four_bar", crank_rate=10.0)
    h = 1e-5
    r = simulate(model, method="newton-euler", t_end=0.5, step=h, output_step=0.01)
    assert "RockerPivot.Fx" in r                     # the cut hinge is a hinge like the others
    assert np.ptp(r["CrankPivot.rz"]) > 2.0          # the crank turns
    # every hinge's markers stay together to within its deflection under its load
    ne = NE.NewtonEuler(model, h)
    for hinge in model.hinges:
        K = ne.joint_stiffness(hinge.name)
        k_min = np.min(np.linalg.eigvalsh(K[3:, 3:]))
        force = np.linalg.norm(np.column_stack([r[f"{hinge.name}.F{a}"] for a in "xyz"]), axis=1)
        poses = drawn_poses(model)
        gap = np.zeros(len(r))
        for k in range(len(r)):
            for b in r.bodies:
                poses[b] = Pose(r.rotation(b)[k], r.position(b)[k])
            gap[k] = np.linalg.norm(hinge_residual(model, hinge.name, poses)[3:])
        assert np.all(gap[1:] < 3.0 * force[1:] / k_min + 1e-9), hinge.name
        assert np.max(gap) < 1e-6
    d, rel = r.energy_drift()
    assert abs(rel) < 1e-3


def test_four_bar_agrees_with_the_closed_loop_mstmm_solver():
    """Both start from the same consistent rates (the crank's given, the others made to close
    the loop), give the same columns (the cut hinge's closure errors too) and agree, better with
    a smaller step."""
    model = build("four_bar", crank_rate=10.0)
    ref = simulate(model, t_end=0.2, step=1e-5, output_step=0.02)
    runs = [simulate(model, method="newton-euler", t_end=0.2, step=h, output_step=0.02)
            for h in (1e-5, 1e-6)]
    assert runs[0].names == ref.names
    np.testing.assert_allclose(runs[0]["Rocker.wy"][0], ref["Rocker.wy"][0], rtol=1e-12)
    err = [max_error(ref, r, position_columns(ref)) for r in runs]
    assert err[1] < err[0] / 5 and err[0] < 1e-4
    gap = runs[0]["RockerPivot.closure_gap"]
    assert 0 < np.max(gap) < 1e-6 and runs[0].meta["loop_closure"]["max_residual"] < 1e-6


def test_driven_crank_slider_follows_its_driver():
    """The driven crank angle is exact; the piston follows the rigid kinematics to within the
    joints' deflection under the 19 kN gas force, which goes with h^2 (0.7 mm at 1e-5 s)."""
    model = build("crank_slider")
    omega = 3000.0 * 2 * np.pi / 60
    theta0 = np.radians(60.0)
    gap = []
    for h in (1e-5, 2e-6):
        r = simulate(model, method="newton-euler", t_end=0.02, step=h, output_step=5e-4)
        theta = r["MainBearing.rz"]
        np.testing.assert_allclose(theta, omega * r.time, rtol=0, atol=1e-9)   # driven angle
        z = np.array([positions(theta0 + th)[1][2] for th in theta])
        gap.append(np.max(np.abs(r["Piston.z"] - z)))
    assert gap[0] < 1.5e-3 and gap[1] < 5e-5 and 15 < gap[0] / gap[1] < 40
    # the crankshaft torque (h = 2e-6 s) against the closed-loop MSTMM solver, after the start
    ref = simulate(model, t_end=0.02, step=1e-5, output_step=5e-4)
    late = r.time >= 0.005
    torque = r["MainBearing.rz_drive"]
    scale = np.max(np.abs(ref["MainBearing.rz_drive"]))
    assert np.max(np.abs(torque[late] - ref["MainBearing.rz_drive"][late])) < 0.03 * scale


def test_prismatic_driver_carries_the_slider():
    """A slider driven along a vertical slide: the driver force is m (z'' + g)."""
    m = MultibodySystem("Lift", gravity=(0, 0, -G))
    g = m.set_ground()
    guide = g.add_marker((0, 0, 0))
    mp = massprops.box((0.05, 0.05, 0.05), 7850.0, corner=(-0.025, -0.025, -0.025))
    body = m.add_body("Slider", mp.mass, mp.ji, mass_center=mp.center)
    mk = body.add_marker((0, 0, 0))
    m.add_hinge("Slide", "prismatic", mk, guide, drivers=[Driver("z", "0.05*sin(20*t)")])
    r = simulate(m, method="newton-euler", t_end=0.3, step=1e-5, output_step=0.01)
    t = r.time
    np.testing.assert_allclose(r["Slide.z"], 0.05 * np.sin(20 * t), rtol=0, atol=1e-9)
    expected = mp.mass * (-0.05 * 400 * np.sin(20 * t) + G)
    np.testing.assert_allclose(r["Slide.z_drive"][1:], expected[1:], rtol=0,
                               atol=1e-3 * mp.mass * G)
    np.testing.assert_allclose(r["Slide.Fz"][1:], expected[1:], rtol=0, atol=1e-3 * mp.mass * G)


def test_free_body_keeps_its_angular_momentum():
    """A box spinning about a non-principal axis, no gravity: the momentum form of Euler's
    equations with the incremental rotation keeps the angular momentum to round-off, and the
    motion converges to the MSTMM solution."""
    m = MultibodySystem("Spinner")
    g = m.set_ground()
    gm = g.add_marker((0, 0, 0))
    mp = massprops.box((0.1, 0.05, 0.02), 2700.0, corner=(0, 0, 0))
    b = m.add_body("Box", mp.mass, mp.ji, mass_center=mp.center,
                   initial_angular_velocity=(8.0, 3.0, 5.0))
    bm = b.add_marker((0, 0, 0))
    m.add_hinge("Float", "free", bm, gm)
    ref = simulate(m, t_end=0.5, step=1e-4, output_step=0.05)
    JC = parallel_axis(inertia_vector_to_tensor(mp.ji), -mp.mass, mp.center)
    errs = []
    for h in (1e-4, 1e-5):
        r = simulate(m, method="newton-euler", t_end=0.5, step=h, output_step=0.05)
        R, w = r.rotation("Box"), r.vector("Box.w")
        L = np.einsum("nij,jk,nlk,nl->ni", R, JC, R, w)
        np.testing.assert_allclose(L, np.tile(L[0], (len(r), 1)), rtol=0,
                                   atol=1e-12 * np.linalg.norm(L[0]))
        errs.append(np.max(np.abs(r.vector("Box.w") - ref.vector("Box.w"))))
    assert errs[1] < errs[0] / 5 and errs[1] < 2e-3


# --------------------------------------------------------------------------------------------------
# running
# --------------------------------------------------------------------------------------------------

def test_chunking_does_not_change_the_results(monkeypatch):
    m = build("branched_tree")
    kw = dict(method="newton-euler", t_end=0.01, step=1e-5, output_step=1e-3)
    ref = simulate(m, **kw)
    monkeypatch.setattr(NE_run, "MAX_CHUNK", 7)
    monkeypatch.setattr(NE_run, "CHUNK_SECONDS", 1e-9)
    r = simulate(m, **kw)
    np.testing.assert_array_equal(r.time, ref.time)
    np.testing.assert_allclose(r.data, ref.data, rtol=0, atol=1e-12)


def test_chunking_does_not_change_a_run_with_time_functions(monkeypatch):
    """Drivers and force magnitudes are sampled at times computed from the step index: a run
    cut into other chunks (they follow the wall time, so the machine's load) gives the same
    numbers, bit for bit (before: the times were the chunk's start plus multiples of the step,
    which round differently, and the penalty joints amplified that to 5e-4 in accelerations)."""
    import randmodels
    m = randmodels.random_tree(np.random.default_rng(1), 9, name="Random1")
    assert any(h.drivers for h in m.hinges) and any(f.magnitude.strip() not in ("", "0")
                                                    for f in m.forces)
    kw = dict(method="newton-euler", t_end=0.01, step=1e-6, output_step=1e-3,
              accept_corrections=True)
    monkeypatch.setattr(NE_run, "CHUNK_SECONDS", 1e9)
    ref = simulate(m, **kw)
    monkeypatch.setattr(NE_run, "MAX_CHUNK", 777)
    monkeypatch.setattr(NE_run, "CHUNK_SECONDS", 1e-9)
    r = simulate(m, **kw)
    np.testing.assert_array_equal(r.data, ref.data)


def test_end_off_the_step_grid_progress_and_cancel():
    m = build("double_pendulum")
    seen = []
    r = simulate(m, method="newton-euler", t_end=0.01005, step=1e-5, output_step=1e-3,
                 progress=seen.append)
    assert r.time[-1] == pytest.approx(0.01005, abs=1e-15) and len(r) == 12
    assert seen[0] == 0.0 and seen[-1] == 1.0 and seen == sorted(seen)
    with pytest.raises(Cancelled):
        simulate(m, method="newton-euler", t_end=0.01, step=1e-5, output_step=1e-3,
                 cancel=lambda: True)


def test_joint_options_and_settings():
    m = build("double_pendulum")
    kw = dict(method="newton-euler", t_end=0.05, step=1e-5, output_step=5e-3)
    soft = simulate(m, joint_fraction=0.05, **kw)
    stiff = simulate(m, **kw)
    # the deflection goes with 1 / f^2
    ratio = np.max(hinge_residuals(m, soft)) / np.max(hinge_residuals(m, stiff))
    assert 3.0 < ratio < 5.0
    assert soft.meta["joint_frequency"] == pytest.approx(0.5 * stiff.meta["joint_frequency"])
    hz = simulate(m, joint_frequency=1000.0, **kw)
    assert hz.meta["joint_parameters"]["Shoulder"][0] == pytest.approx(1000.0 / np.sqrt(2))
    with pytest.raises(TypeError):
        simulate(m, t_end=0.01, joint_fraction=0.1)          # mstmm takes no options
    with pytest.raises(sim.ModelError) as e:
        simulate(m, method="newton-euler", t_end=0.01, step=3e-5, output_step=1e-4)
    assert [p.field for p in e.value.problems] == ["OutputStep"]
