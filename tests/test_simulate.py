"""simulate() and Results: settings, output grid, progress and cancel, file formats, reactions,
rk4 against DOP853, and the ``run`` command of the command line."""

import argparse
import os
import subprocess
import sys

import numpy as np
import pytest

from MultibodyWB.examples import build
from MultibodyWB.solver.model import massprops
from MultibodyWB.solver.run import simulate as sim
from MultibodyWB.solver.methods.mstmm import run as mstmm_run
from MultibodyWB.solver.model import xmlio
from MultibodyWB.solver.model import HINGE_TYPES, ModelError, MultibodySystem
from MultibodyWB.solver.results.table import Results
from MultibodyWB.solver.results.recorder import continue_bryant
from MultibodyWB.solver.model.columns import (BODY_COLUMNS, ENERGY_COLUMNS, HINGE_COLUMNS,
                                              columns_table, describe, hinge_quantities, unit_of)
from MultibodyWB.solver.maths.rotations import bryant_to_matrix
from MultibodyWB.solver.run.simulate import simulate
from MultibodyWB.solver.methods.runtime import Cancelled, output_times

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
G = 9.81


@pytest.fixture(scope="module")
def dp_rk4():
    return simulate(build("double_pendulum"), t_end=1.0, step=1e-3, output_step=0.02)


@pytest.fixture(scope="module")
def tree_rk4():
    return simulate(build("branched_tree"), t_end=0.5, step=1e-3, output_step=0.01)


def offset_pendulum(reverse=False, theta0=1.0, rate0=0.5, corner=(0.01, 0.05, -0.4)):
    """A rod on a revolute hinge about global y whose mass centre is off the hinge plane (so the
    hinge carries a constraint torque). ``reverse``: the ground is the hinge's input."""
    m = MultibodySystem("OffsetPendulum", gravity=(0, 0, -G))
    g = m.set_ground()
    pivot = g.add_marker((0, 0, 0), (-np.pi / 2, 0, 0))          # z along global +y
    mp = massprops.box((0.03, 0.02, 0.4), 2700.0, corner=corner)
    b = m.add_body("Rod", mp.mass, mp.ji, mass_center=mp.center)
    mk = b.add_marker((0, 0, 0), (-np.pi / 2, 0, 0))
    if reverse:
        m.add_hinge("Pin", "revolute", pivot, mk, initial_coordinates=[-theta0],
                    initial_rates=[-rate0])
    else:
        m.add_hinge("Pin", "revolute", mk, pivot, initial_coordinates=[theta0],
                    initial_rates=[rate0])
    return m, mp


# --------------------------------------------------------------------------------------------------
# the results format
# --------------------------------------------------------------------------------------------------

def test_names_are_unique_documented_and_have_units(tree_rk4):
    r = tree_rk4
    assert r.names[0] == "time" and len(set(r.names)) == len(r.names)
    model = build("branched_tree")
    for b in model.bodies:
        for q in BODY_COLUMNS:
            assert f"{b.name}.{q}" in r
    for h in model.hinges:
        for q in hinge_quantities(h.type, [d.coordinate for d in h.drivers]):
            assert f"{h.name}.{q}" in r
    for q in ENERGY_COLUMNS:
        assert f"energy.{q}" in r
    units = r.units
    assert len(units) == len(r.names) and all(units)
    assert r.unit("Hub.x") == "m" and r.unit("Hub.wz") == "rad/s" and r.unit("Hub.ax") == "m/s^2"
    assert r.unit("Hub.alphaz") == "rad/s^2" and r.unit("Hub.a") == "rad"
    assert r.unit("A1Pin.rz") == "rad" and r.unit("A1Pin.rz_rate") == "rad/s"
    assert r.unit("CSlide.z") == "m" and r.unit("CSlide.z_acc") == "m/s^2"
    assert r.unit("B2Ball.wx") == "rad/s" and r.unit("B2Ball.qw") == "1"
    assert r.unit("HubBearing.Fx") == "N" and r.unit("HubBearing.Tz") == "N m"
    assert r.unit("energy.total") == "J" and r.unit("time") == "s"
    for n in r.names:
        assert describe(n).startswith(n)
    with pytest.raises(KeyError, match="did you mean"):
        r.column("Hub.xx")


def test_every_quantity_of_every_hinge_type_is_in_the_table():
    for t in HINGE_TYPES:
        kind = HINGE_TYPES[t]
        for q in hinge_quantities(t, kind.coordinates):
            assert q in HINGE_COLUMNS, (t, q)
    # a quantity that bodies and hinges share has one unit
    for q in set(BODY_COLUMNS) & set(HINGE_COLUMNS):
        assert BODY_COLUMNS[q][0] == HINGE_COLUMNS[q][0]
    text = columns_table()
    for q in list(BODY_COLUMNS) + list(HINGE_COLUMNS) + list(ENERGY_COLUMNS):
        assert q in text
    assert unit_of("X.rz_drive") == "N m" and unit_of("X.z_drive") == "N"
    with pytest.raises(KeyError):
        unit_of("X.nonsense")


def test_spherical_and_free_hinge_columns():
    assert hinge_quantities("spherical") == [
        "rx", "ry", "rz", "qw", "qx", "qy", "qz", "wx", "wy", "wz", "alphax", "alphay", "alphaz",
        "Fx", "Fy", "Fz", "Tx", "Ty", "Tz"]
    q = hinge_quantities("free")
    assert q[:10] == ["x", "y", "z", "rx", "ry", "rz", "qw", "qx", "qy", "qz"]
    assert "x_rate" in q and "wz" in q and "z_acc" in q and "alphax" in q
    assert hinge_quantities("revolute", ["rz"])[-1] == "rz_drive"
    assert hinge_quantities("fixed") == ["Fx", "Fy", "Fz", "Tx", "Ty", "Tz"]


def test_csv_and_npz_round_trip(tmp_path, dp_rk4):
    r = dp_rk4
    r.to_csv(tmp_path / "r.csv")
    c = Results.from_csv(tmp_path / "r.csv")
    assert c.names == r.names
    np.testing.assert_array_equal(c.data, r.data)
    header = (tmp_path / "r.csv").read_text().splitlines()[0]
    assert header.split(",") == r.names
    r.to_npz(tmp_path / "r.npz")
    z = Results.from_npz(tmp_path / "r.npz")
    assert z.names == r.names and z.meta == r.meta
    np.testing.assert_array_equal(z.data, r.data)
    np.testing.assert_array_equal(z.states, r.states)
    assert z.bodies == ["Upper", "Lower"] and z.hinges == ["Shoulder", "Elbow"]
    assert c.bodies == ["Upper", "Lower"] and c.hinges == ["Shoulder", "Elbow"]
    np.testing.assert_allclose(z.rotation("Lower")[0], bryant_to_matrix(
        [z["Lower.a"][0], z["Lower.b"][0], z["Lower.c"][0]]), atol=1e-15)
    with pytest.raises(ValueError):
        r.save(tmp_path / "r.txt")


def test_metadata_and_summary(dp_rk4):
    m = dp_rk4.meta
    assert m["model"] == "DoublePendulum" and m["method"] == "mstmm" and m["integrator"] == "rk4"
    assert m["step"] == 1e-3 and m["steps"] == 1000 and m["wall_time"] > 0
    text = dp_rk4.summary()
    for word in ("DoublePendulum", "rk4", "wall time", "steps/s", "Upper", "Lower", "drift"):
        assert word in text
    # energy of the undamped double pendulum: rk4 with 1 ms steps keeps it to 1e-9
    assert abs(dp_rk4.energy_drift()[1]) < 1e-9


def test_continue_bryant_takes_the_nearest_branch():
    a = np.array([[3.1, 1.5, -3.1]])
    # the same rotation further along: raw angles wrapped and b reflected through pi/2
    b_true = np.array([[3.2, 1.6, -3.2]])
    raw = np.array([[3.2 - 2 * np.pi + np.pi, np.pi - 1.6, -3.2 + np.pi]])
    raw = (raw + np.pi) % (2 * np.pi) - np.pi
    np.testing.assert_allclose(bryant_to_matrix(raw[0]), bryant_to_matrix(b_true[0]), atol=1e-12)
    np.testing.assert_allclose(continue_bryant(raw, a), b_true, atol=1e-12)


# --------------------------------------------------------------------------------------------------
# settings and the output grid
# --------------------------------------------------------------------------------------------------

def test_every_method_is_accepted():
    from MultibodyWB.solver.model import METHODS
    for method in METHODS:
        settings = sim._settings(build("double_pendulum"), method.upper(), None, 0.1, 1e-5, 1e-3)
        assert settings[0] == method


def test_bad_settings_list_every_problem():
    with pytest.raises(ModelError) as e:
        simulate(build("double_pendulum"), method="magic", integrator="leapfrog", t_end=-1.0)
    fields = sorted(p.field for p in e.value.problems)
    assert fields == ["EndTime", "Integrator", "Method"]
    assert all(p.element == "Simulation" for p in e.value.problems)
    with pytest.raises(ModelError) as e:
        simulate(build("double_pendulum"), method="Newton-Euler", integrator="DOP853", step=3e-3,
                 output_step=0.01)
    assert sorted(p.field for p in e.value.problems) == ["OutputStep"]
    assert "whole number of steps" in str(e.value) and "newton-euler" in str(e.value)


def test_output_grid_of_rk4_and_a_final_short_step():
    m = build("double_pendulum")
    r = simulate(m, t_end=0.0105, step=1e-3, output_step=2e-3)
    np.testing.assert_allclose(r.time, [0, 0.002, 0.004, 0.006, 0.008, 0.010, 0.0105],
                               rtol=0, atol=1e-15)
    assert r.meta["steps"] == 11
    # off the output grid but on the step grid
    r2 = simulate(m, t_end=0.011, step=1e-3, output_step=2e-3)
    assert r2.time[-1] == pytest.approx(0.011, abs=1e-15) and len(r2) == 7
    np.testing.assert_allclose(r2.data[:6], r.data[:6], rtol=0, atol=1e-14)


def test_chunking_does_not_change_rk4(monkeypatch):
    m = build("branched_tree")
    ref = simulate(m, t_end=0.06, step=1e-3, output_step=3e-3)
    monkeypatch.setattr(mstmm_run, "MAX_CHUNK", 2)       # outputs every 3 steps: parts of intervals
    monkeypatch.setattr(mstmm_run, "CHUNK_SECONDS", 1e-9)
    r = simulate(m, t_end=0.06, step=1e-3, output_step=3e-3)
    np.testing.assert_array_equal(r.time, ref.time)
    np.testing.assert_allclose(r.data, ref.data, rtol=0, atol=1e-13)


def test_adaptive_output_times_and_normalised_quaternions():
    assert np.allclose(output_times(1.0, 0.3), [0, 0.3, 0.6, 0.9, 1.0])
    assert np.allclose(output_times(1.0, 0.25), [0, 0.25, 0.5, 0.75, 1.0])
    r = simulate(build("branched_tree"), integrator="dop853", t_end=0.25, output_step=0.1)
    assert r.meta["integrator"] == "DOP853"
    np.testing.assert_allclose(r.time, [0, 0.1, 0.2, 0.25], atol=1e-15)
    q = np.column_stack([r[f"B2Ball.q{a}"] for a in "wxyz"])
    np.testing.assert_allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-15)


# --------------------------------------------------------------------------------------------------
# progress and cancel
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("integrator", ["rk4", "DOP853"])
def test_progress_increases_to_one(integrator):
    seen = []
    simulate(build("double_pendulum"), integrator=integrator, t_end=0.5, step=5e-4,
             output_step=0.01, progress=seen.append)
    assert len(seen) >= 3 and seen[0] == 0.0 and seen[-1] == 1.0
    assert all(b > a for a, b in zip(seen, seen[1:]))


@pytest.mark.parametrize("integrator", ["rk4", "RK45"])
def test_cancel_leaves_no_results(integrator, tmp_path):
    calls = []

    def cancel():
        calls.append(1)
        return len(calls) > 2

    got = None
    # 50 000 steps: more than two rk4 chunks (at most simulate.MAX_CHUNK steps each) however
    # fast the kernels are
    with pytest.raises(Cancelled):
        got = simulate(build("double_pendulum"), integrator=integrator, t_end=1.0, step=2e-5,
                       output_step=0.01, cancel=cancel)
    assert got is None and len(calls) == 3


# --------------------------------------------------------------------------------------------------
# reactions
# --------------------------------------------------------------------------------------------------

def test_reaction_is_newton_euler_of_the_body():
    m, mp = offset_pendulum()
    r = simulate(m, t_end=0.5, step=1e-3, output_step=0.01)
    R = r.rotation("Rod")
    rc = np.einsum("nij,j->ni", R, mp.center)                   # pivot -> mass centre
    w, al, a0 = r.vector("Rod.w"), r.vector("Rod.alpha"), r.vector("Rod.a")
    assert np.abs(r.position("Rod")).max() == 0.0                # base origin on the pivot
    assert np.abs(a0).max() < 1e-12
    ac = np.cross(al, rc) + np.cross(w, np.cross(w, rc))
    g = np.array([0, 0, -G])
    F, T = r.vector("Pin.F"), r.vector("Pin.T")
    np.testing.assert_allclose(F, mp.mass * (ac - g), rtol=0, atol=1e-12 * np.abs(F).max())
    from MultibodyWB.solver.maths.rotations import inertia_vector_to_tensor
    JO = np.einsum("nij,jk,nlk->nil", R, inertia_vector_to_tensor(mp.ji), R)
    Hdot = np.einsum("nij,nj->ni", JO, al) + np.cross(w, np.einsum("nij,nj->ni", JO, w))
    T_expected = Hdot - np.cross(rc, mp.mass * g)
    assert np.abs(T).max() > 0.1                                 # a real constraint torque
    np.testing.assert_allclose(T, T_expected, rtol=0, atol=1e-12 * np.abs(T).max())
    # no torque about the hinge axis (global y): the hinge has no spring
    assert np.abs(r["Pin.Ty"]).max() < 1e-12


def test_reversed_hinge_reports_the_wrench_on_its_input_body():
    r = simulate(offset_pendulum()[0], t_end=0.3, step=1e-3, output_step=0.01)
    rr = simulate(offset_pendulum(reverse=True)[0], t_end=0.3, step=1e-3, output_step=0.01)
    body = [n for n in r.names if n.startswith("Rod.")]
    np.testing.assert_allclose(np.column_stack([rr[n] for n in body]),
                               np.column_stack([r[n] for n in body]), rtol=0, atol=1e-12)
    np.testing.assert_allclose(rr["Pin.rz"], -r["Pin.rz"], atol=1e-12)
    # the input body is now the ground: it gets the opposite wrench at the same point
    for q in ("Fx", "Fy", "Fz", "Tx", "Ty", "Tz"):
        np.testing.assert_allclose(rr[f"Pin.{q}"], -r[f"Pin.{q}"], rtol=0, atol=1e-12)


def test_hanging_pendulum_at_rest_carries_its_weight():
    m, mp = offset_pendulum(theta0=0.0, rate0=0.0, corner=(-0.015, 0.05, -0.4))
    r = simulate(m, t_end=0.1, step=1e-3, output_step=0.05)
    np.testing.assert_allclose(r.vector("Pin.F")[-1], [0, 0, mp.mass * G], atol=1e-12)
    # the weight hangs off the plane of the hinge: a torque about global x
    T = r.vector("Pin.T")[-1]
    np.testing.assert_allclose(T, -np.cross(mp.center, [0, 0, -mp.mass * G]), atol=1e-12)


# --------------------------------------------------------------------------------------------------
# rk4 against DOP853
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, t_end", [("double_pendulum", 1.0), ("branched_tree", 0.6)])
def test_rk4_agrees_with_dop853(name, t_end):
    m = build(name)
    m.simulation.relative_tolerance, m.simulation.absolute_tolerance = 1e-11, 1e-12
    a = simulate(m, integrator="rk4", t_end=t_end, step=1e-3, output_step=0.02)
    b = simulate(m, integrator="DOP853", t_end=t_end, output_step=0.02)
    assert a.names == b.names
    np.testing.assert_allclose(a.time, b.time, rtol=0, atol=1e-12)
    scale = np.maximum(np.abs(b.data).max(axis=0), 1.0)
    err = np.abs(a.data - b.data).max(axis=0) / scale
    worst = int(np.argmax(err))
    assert err[worst] < 1e-6, (a.names[worst], err[worst])


# --------------------------------------------------------------------------------------------------
# the run command
# --------------------------------------------------------------------------------------------------

# Runs the command line with ``run`` added when cli.py does not have it yet.
_RUNNER = """
import argparse, sys
from MultibodyWB.solver import cli
from MultibodyWB.solver.cli import add_run_command
base = cli.parser
def parser():
    p = base()
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    if "run" not in sub.choices:
        add_run_command(sub)
    return p
cli.parser = parser
sys.exit(cli.main())
"""


def _wired():
    from MultibodyWB.solver import cli
    p = cli.parser()
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    return "run" in sub.choices


def run_cli(*args):
    head = ["-m", "MultibodyWB.solver"] if _wired() else ["-c", _RUNNER]
    p = subprocess.run([sys.executable, *head, *args], cwd=REPO, capture_output=True, text=True,
                       timeout=300)
    return p.returncode, p.stdout, p.stderr


def test_run_command_writes_results(tmp_path):
    path = tmp_path / "dp.mbs.xml"
    xmlio.write(build("double_pendulum"), path)
    out = tmp_path / "dp.csv"
    code, stdout, stderr = run_cli("run", str(path), "--t-end", "0.2", "--step", "0.001",
                                   "--output-step", "0.01", "--out", str(out))
    assert code == 0, stderr
    assert "DoublePendulum" in stdout and "steps/s" in stdout and "drift" in stdout
    assert "Upper" in stdout and "Lower" in stdout and "written to" in stdout
    assert "100.0%" in stderr and "Traceback" not in stderr
    r = Results.from_csv(out)
    assert len(r) == 21 and r.time[-1] == pytest.approx(0.2)
    code, stdout, stderr = run_cli("run", str(path), "--t-end", "0.05", "--integrator", "DOP853",
                                   "--out", str(tmp_path / "dp.npz"))
    assert code == 0, stderr
    z = Results.from_npz(tmp_path / "dp.npz")
    assert z.meta["integrator"] == "DOP853" and z.time[-1] == pytest.approx(0.05)


def test_run_command_lists_problems_and_exits_2(tmp_path):
    m = build("double_pendulum")
    m.bodies[0].mass = -1.0
    m.hinges[1].type = "hinge"
    bad = tmp_path / "bad.mbs.xml"
    xmlio.write(m, bad)
    code, stdout, stderr = run_cli("run", str(bad))
    assert code == 2 and "Traceback" not in stdout + stderr
    assert "2 problems" in stdout and "Mass" in stdout and "Type" in stdout
    good = tmp_path / "good.mbs.xml"
    xmlio.write(build("double_pendulum"), good)
    code, stdout, stderr = run_cli("run", str(good), "--method", "magic", "--step", "0.003",
                                   "--output-step", "0.01")
    assert code == 2 and "Traceback" not in stdout + stderr
    assert "Simulation, field Method" in stdout and "Simulation, field OutputStep" in stdout
    code, stdout, stderr = run_cli("run", str(good), "--out", str(tmp_path / "r.txt"))
    assert code == 2 and ".csv or .npz" in stderr
    code, stdout, stderr = run_cli("run", str(tmp_path / "missing.mbs.xml"))
    assert code == 2 and "no such file" in stderr
    # a model with a closed loop runs (cut hinge BigEnd)
    loop = tmp_path / "loop.mbs.xml"
    xmlio.write(build("crank_slider"), loop)
    code, stdout, stderr = run_cli("run", str(loop), "--t-end", "0.01")
    assert code == 0 and "Traceback" not in stdout + stderr


def test_a_hinge_named_like_a_body_gets_a_prefix():
    m, _ = offset_pendulum()
    m.hinges[0].name = "Rod"
    r = simulate(m, t_end=0.01, step=1e-3, output_step=0.01)
    assert "Rod.x" in r and "hinge:Rod.rz" in r and "hinge:Rod.Fx" in r
    assert r.hinges == ["hinge:Rod"] and r.bodies == ["Rod"]
    assert r.unit("hinge:Rod.rz") == "rad"


def test_driven_run_does_not_depend_on_how_it_is_chunked(monkeypatch):
    """The rk4 chunks follow the wall time; the drivers' and forces' sample times must not, so
    a run gives the same numbers every time (crank-slider: driver and gas force)."""
    from MultibodyWB.examples import build
    from MultibodyWB.solver.run import simulate as sim
    model = build("crank_slider")
    reference = sim.simulate(model, t_end=0.003)
    monkeypatch.setattr(mstmm_run, "CHUNK_SECONDS", 1e-9)        # one output row per chunk
    chunked = sim.simulate(model, t_end=0.003)
    assert np.array_equal(reference.data, chunked.data)


def test_the_summary_gives_positions_in_the_unit_asked_for():
    from MultibodyWB.examples import build
    res = simulate(build("double_pendulum"), t_end=0.01, step=1e-3, output_step=1e-2)
    si, mm = res.summary(), res.summary("mm", 1000.0)
    assert "base origins (m):" in si and "base origins (mm):" in mm
    z = res.position("Lower")[-1][2]
    assert f"z {z: .6g}" in si and f"z {z * 1000.0: .6g}" in mm


@pytest.mark.parametrize("name", ["crank_slider", "four_bar", "branched_tree", "seed004",
                                  "seed_box"])
def test_result_rows_do_not_depend_on_how_many_are_computed_at_once(name):
    """Rows are computed many at a time (Recorder.rows, LoopRecorder.rows) in chunks whose size
    follows the wall time: each row must be the same, to the last bit, whether computed alone
    or with others (no summation whose order depends on the batch: numpy's matmul and einsum
    may change theirs with the shapes)."""
    from MultibodyWB.examples import build
    from MultibodyWB.solver.methods.mstmm.loop_rows import LoopRecorder
    from MultibodyWB.solver.results.recorder import Recorder
    from MultibodyWB.solver.methods.mstmm.system import System
    model = build(name)
    r = simulate(model, t_end=300 * model.simulation.step, output_step=model.simulation.step,
                 accept_corrections=True)
    from MultibodyWB.solver.analysis.start import prepare
    system = System(prepare(model, True)[0])
    make = LoopRecorder if system.cuts else Recorder
    flows = np.zeros((len(r), 3))
    together = make(system).rows(r.time, r.states, flows)
    one = make(system)
    alone = np.vstack([one.rows(r.time[i:i + 1], r.states[i:i + 1], flows[i:i + 1])
                       for i in range(len(r))])
    assert np.array_equal(together, alone)


# --------------------------------------------------------------------------------------------------
# fixed-step result rows from the run's own evaluations
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("example, integrator, step", [
    ("double_pendulum", "rk4", 1e-3), ("double_pendulum", "euler", 1e-4),
    ("crank_slider", "rk4", 1e-5), ("four_bar", "euler", 1e-4), ("gear_train", "rk4", 1e-4),
    ("quarter_car", "rk4", 1e-4)])
def test_fixed_step_rows_are_the_run_s_evaluations_bit_for_bit(example, integrator, step,
                                                                monkeypatch):
    """The rows of an rk4 or euler run are the evaluations the run makes at the output states
    (the next step's first, with the hinges' wrenches; after a chunk's last step, one of its
    own): the same numbers as the rows evaluated afterwards from the states alone
    (``System.instants``, the way of an adaptive run's rows), whatever the chunks."""
    from MultibodyWB.solver.methods.mstmm.system import System
    calls = []
    instants = System.instants

    def counted(self, times, states):
        calls.append(len(times))
        return instants(self, times, states)
    monkeypatch.setattr(System, "instants", counted)
    settings = dict(t_end=60 * step, step=step, output_step=2 * step, integrator=integrator)
    run = simulate(build(example), **settings)
    assert len(run.data) == 31
    assert sum(calls) <= 2           # the first row (and an end off the grid) only
    # the chunks as short as can be: one row each, each row evaluated after its chunk
    monkeypatch.setattr(mstmm_run, "ROW_MEMORY", 1.0)
    short = simulate(build(example), **settings)
    np.testing.assert_array_equal(short.data, run.data)
    np.testing.assert_array_equal(short.states, run.states)
    # every row evaluated afterwards from its state
    add_later = mstmm_run._Rows.add_later
    monkeypatch.setattr(mstmm_run._Rows, "add_later",
                        lambda self, rec, times, states, flows, instants=None:
                        add_later(self, rec, times, states, flows))
    calls.clear()
    after = simulate(build(example), **settings)
    assert sum(calls) >= len(after.data) - 2
    np.testing.assert_array_equal(after.data, run.data)
    np.testing.assert_array_equal(after.states, run.states)


@pytest.mark.parametrize("integrator", ["rk4", "euler"])
def test_rows_of_output_intervals_longer_than_a_chunk_and_of_a_last_short_step(integrator,
                                                                               monkeypatch):
    """An output interval of 25,000 steps (chunks end inside it: a row only where a chunk ends
    on the output grid) and an end time off the step grid (a last, shorter step): the rows are
    those of the states evaluated afterwards, bit for bit."""
    settings = dict(t_end=0.5 + 3e-6, step=1e-5, output_step=0.25, integrator=integrator)
    run = simulate(build("four_bar"), **settings)
    assert run.data[:, 0].tolist() == [0.0, 0.25, 0.5, 0.5 + 3e-6]
    add_later = mstmm_run._Rows.add_later
    monkeypatch.setattr(mstmm_run._Rows, "add_later",
                        lambda self, rec, times, states, flows, instants=None:
                        add_later(self, rec, times, states, flows))
    after = simulate(build("four_bar"), **settings)
    np.testing.assert_array_equal(after.data, run.data)
    np.testing.assert_array_equal(after.states, run.states)
