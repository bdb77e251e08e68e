"""Issue 33's reproducers, each a named regression test: what a fuzzing campaign found after a
model is valid (a success with NaN, study arguments not checked, a huge mesh file read whole).
The fault tests of files and signals are in test_nothing_lost.py."""

from __future__ import annotations

import os
import re
import resource
import time

import numpy as np
import pytest

from MultibodyWB.examples import build
from MultibodyWB.solver.cli import main
from MultibodyWB.solver.model import xmlio
from MultibodyWB.solver.model.meshfile import MAX_MESH_BYTES, check_size, read_points
from MultibodyWB.solver.methods.runtime import RunError
from MultibodyWB.solver.run import simulate as simulate_module

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _example_text(tmp_path, name):
    path = tmp_path / f"{name}.mbs.xml"
    assert main(["example", name, "-o", str(path)]) == 0
    return path.read_text()


def _check(tmp_path, text, capsys):
    path = tmp_path / "m.mbs.xml"
    path.write_text(text)
    code = main(["check", str(path)])
    return code, capsys.readouterr().out


# -- success with NaN: refused by check where the model can tell ------------------------------

def test_friction_coefficient_1e300_refused_by_check(tmp_path, capsys):
    text = _example_text(tmp_path, "bouncing_balls")
    text = text.replace("<DynamicFriction>0.5</DynamicFriction>",
                        "<DynamicFriction>1e300</DynamicFriction>", 1)
    code, out = _check(tmp_path, text, capsys)
    assert code == 2
    assert re.search(r"Contact '\w+'.*field DynamicFriction: 1e\+300; a friction coefficient "
                     r"is at most 1000", out), out


def test_motor_speed_1e300_refused_by_check(tmp_path, capsys):
    text = _example_text(tmp_path, "gear_train")
    text = text.replace('Speed="157.07963267948966"', 'Speed="1e300"')
    code, out = _check(tmp_path, text, capsys)
    assert code == 2
    assert "Hinge 'PinionShaft'" in out and "field Motor" in out and "1e+300 rad/s" in out, out


def test_motor_speed_within_reach_still_valid(tmp_path, capsys):
    text = _example_text(tmp_path, "gear_train")
    text = text.replace('Speed="157.07963267948966"', 'Speed="3e6"')       # 9e5 rad in 0.3 s
    code, out = _check(tmp_path, text, capsys)
    assert code == 0, out


def test_gravity_1e308_refused_by_check(tmp_path, capsys):
    text = _example_text(tmp_path, "double_pendulum")
    text = text.replace("<Gravity>0, 0, -9.81</Gravity>", "<Gravity>0, 0, -1e308</Gravity>")
    code, out = _check(tmp_path, text, capsys)
    assert code == 2
    assert "field Gravity" in out and "at most 1e+08 m/s^2" in out, out


def test_a_result_column_that_overflows_stops_the_run_naming_its_element(monkeypatch):
    """Where the check cannot tell (an energy that overflows while the state stays finite), the
    run is an error naming the element, the quantity and the time, never a success."""
    from MultibodyWB.solver.methods.mstmm import run as mstmm_run
    real = mstmm_run.run

    def overflowing(*args, **kw):
        res = real(*args, **kw)
        res.data[7:, res.names.index("Upper.vx")] = np.inf       # from the 8th row on
        res.data[9:, res.names.index("energy.kinetic")] = np.nan
        return res
    monkeypatch.setattr(mstmm_run, "run", overflowing)
    model = build("double_pendulum")
    with pytest.raises(RunError) as info:
        simulate_module.simulate(model, t_end=0.2)
    text = str(info.value)
    assert "RigidBody 'Upper'" in text or "Body 'Upper'" in text, text
    assert "field vx" in text and "t = 0.07 s" in text and "inf" in text, text


def test_finite_results_pass_the_column_check():
    res = simulate_module.simulate(build("double_pendulum"), t_end=0.05)
    assert np.all(np.isfinite(res.data))


# -- the study command's own arguments --------------------------------------------------------

STUDY = ["--param", "Suspension.Stiffness=1e4:6e4:2", "--objective", "rms(Hull.az)"]


@pytest.mark.parametrize("extra, field, words", [
    (["--scheduler", "tls://127.0.0.1:8786"], "Scheduler", "scheme tls://"),
    (["--scheduler", "ucx://127.0.0.1:8786"], "Scheduler", "scheme ucx://"),
    (["--scheduler", "tcp://nohost"], "Scheduler", "is not an address"),
    (["--workers", "-1"], "Workers", "-1: a local cluster takes 1 to"),
    (["--workers", "100000"], "Workers", "100000: a local cluster takes 1 to"),
    (["--t-end", "nan"], "EndTime", "--t-end nan"),
    (["--t-end", "-1"], "EndTime", "--t-end -1.0"),
    (["--output-step", "nan"], "OutputStep", "--output-step nan"),
    (["--output-step", "-1"], "OutputStep", "--output-step -1.0"),
    (["--step", "0"], "Step", "--step 0.0"),
    (["--max-evaluations", "0"], "MaxEvaluations", "must be 1 or more"),
    (["--tolerance", "inf"], "Tolerance", "--tolerance inf"),
])
def test_study_arguments_refused_before_anything_starts(tmp_path, capsys, extra, field, words):
    model = tmp_path / "qc.mbs.xml"
    assert main(["example", "quarter_car", "-o", str(model)]) == 0
    capsys.readouterr()
    t0 = time.perf_counter()
    code = main(["study", str(model), *STUDY, *extra, "--out", str(tmp_path / "s.csv")])
    wall = time.perf_counter() - t0
    out = capsys.readouterr()
    assert code == 2, out
    assert f"Study, field {field}: " in out.out and words in out.out, out.out
    assert not (tmp_path / "s.csv").exists()
    assert wall < 10.0                 # refused at once: no cluster started, no variant run


@pytest.mark.parametrize("bad", ["max(abs(Suspension.z)) <= 1e309", "rms(Hull.az, Hull.az, 1)"])
def test_study_expressions_refused_before_the_runs(tmp_path, capsys, bad):
    model = tmp_path / "qc.mbs.xml"
    assert main(["example", "quarter_car", "-o", str(model)]) == 0
    flag = "--constraint" if "<=" in bad else "--objective"
    code = main(["study", str(model), "--param", "Suspension.Stiffness=1e4:6e4:2",
                 "--objective", "rms(Hull.az)", flag, bad, "--serial",
                 "--out", str(tmp_path / "s.csv")])
    out = capsys.readouterr().out
    assert code == 2, out
    assert "not valid" in out and not (tmp_path / "s.csv").exists()


def test_scheduler_without_scheme_and_local_workers_accepted():
    from MultibodyWB.solver.study.executors import cores, executor_problems
    assert executor_problems("127.0.0.1:8786", None) == []
    assert executor_problems("tcp://[::1]:8786", 0) == []
    assert executor_problems(None, cores()) == []
    assert executor_problems(None, 0) == []


# -- mesh files: size and triangles before reading --------------------------------------------

def test_sparse_gigabyte_stl_refused_at_once(tmp_path):
    path = tmp_path / "huge.stl"
    with open(path, "wb") as fh:
        fh.truncate(1 << 30)               # a sparse file: 1 GB, no disk used
    import meshio  # noqa: F401  (imported before the clock: the bound is on the file, not the import)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    with pytest.raises(ValueError) as info:
        read_points(str(path), "mm")
    wall = time.perf_counter() - t0
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert "huge.stl: 1074 MB, more than the 200 MB" in str(info.value)
    assert wall < 1.0 and (rss1 - rss0) < 50_000           # kB: nothing read
    assert os.path.getsize(path) > MAX_MESH_BYTES


def test_mesh_with_too_many_triangles_refused_by_its_header(tmp_path):
    ply = tmp_path / "many.ply"
    ply.write_bytes(b"ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y"
                    b"\nproperty float z\nelement face 9000000\nproperty list uchar int "
                    b"vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n")
    with pytest.raises(ValueError, match="9000000 triangles, more than the 2000000"):
        check_size(str(ply))
    stl = tmp_path / "many.stl"                 # binary STL: the count after the header
    n = 2_100_000
    with open(stl, "wb") as fh:
        fh.write(b"\0" * 80 + n.to_bytes(4, "little"))
        fh.truncate(84 + 50 * n)
    with pytest.raises(ValueError, match="2100000 triangles"):
        check_size(str(stl))


def test_sparse_mesh_file_refused_by_check_naming_the_contact(tmp_path, capsys):
    """The model whose contact shape is a sparse 1 GB STL: check names the contact, its side
    and the file, at once and without reading it."""
    from test_contact_convex import _cube_points, _falling
    m, _ = _falling(("convex", {"points": _cube_points()}))
    text = xmlio.to_string(m)
    pts_attr = text[text.index('Points="'):text.index('"', text.index('Points="') + 8) + 1]
    with open(tmp_path / "huge.stl", "wb") as fh:
        fh.truncate(1 << 30)
    path = tmp_path / "drop.mbs.xml"
    path.write_text(text.replace(pts_attr, 'File="huge.stl" Unit="mm"'))
    t0 = time.perf_counter()
    code = main(["check", str(path)])
    out = capsys.readouterr().out
    assert code == 2
    assert time.perf_counter() - t0 < 5.0
    assert "Contact 'Hit'" in out and "InputShape" in out and "huge.stl: 1074 MB" in out, out


def test_a_study_row_with_an_infinite_objective_is_failed_not_ok(tmp_path, capsys):
    """Found by the campaign's study stage: ``rms(...) * 1e308 * 10`` was an ok row holding
    inf (exit 0). A row is ok only with finite objectives and constraints."""
    import csv
    model = tmp_path / "qc.mbs.xml"
    assert main(["example", "quarter_car", "-o", str(model)]) == 0
    out = tmp_path / "s.csv"
    code = main(["study", str(model), "--param", "Suspension.Stiffness=2e4:3e4:2",
                 "--objective", "(rms(Hull.az) + 1) * 1e308 * 10", "--objective", "rms(Hull.az)",
                 "--t-end", "0.2", "--serial", "--out", str(out)])
    capsys.readouterr()
    with open(out, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2
    for r in rows:
        assert r["status"] == "failed", r
        assert "objective '(rms(Hull.az) + 1) * 1e308 * 10' is inf" in r["error"], r
    assert code == 0          # a study whose variants failed ran: each row says why
