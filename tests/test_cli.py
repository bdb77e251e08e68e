"""The command line: exit codes, summaries, every problem listed, never a traceback."""

import os
import subprocess
import sys

import pytest

from MultibodyWB.examples import EXAMPLES, build
from MultibodyWB.solver.model import xmlio
from MultibodyWB.solver.cli import main

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_cli(*args):
    """Run ``python -m MultibodyWB.solver`` in a subprocess: (exit code, stdout, stderr)."""
    p = subprocess.run([sys.executable, "-m", "MultibodyWB.solver", *args], cwd=REPO,
                       capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_check_every_example(tmp_path, name, capsys):
    path = str(tmp_path / f"{name}.mbs.xml")
    assert main(["example", name, "-o", path]) == 0
    assert main(["check", path]) == 0
    out = capsys.readouterr().out
    assert f"{path}: valid" in out and "DOF" in out and "Grubler-Kutzbach" in out


def test_check_summary_of_the_crank_slider(tmp_path):
    path = tmp_path / "cs.mbs.xml"
    xmlio.write(build("crank_slider"), path)
    code, out, err = run_cli("check", str(path))
    assert code == 0, err
    assert "bodies   3" in out and "hinges   4" in out and "forces   1" in out
    assert "mobility 1" in out and "loops    1" in out and "cut hinge BigEnd" in out
    assert err == ""


def test_check_reports_redundancy_of_the_planar_four_bar(tmp_path):
    path = tmp_path / "fb.mbs.xml"
    xmlio.write(build("four_bar"), path)
    code, out, _ = run_cli("check", str(path))
    assert code == 0
    assert "Grubler-Kutzbach -2" in out and "mobility 1" in out
    assert "redundant constraints: 3" in out


def test_check_lists_every_problem_and_exits_2(tmp_path):
    m = build("double_pendulum")
    m.bodies[0].mass = -1.0
    m.hinges[1].type = "hinge"
    m.bodies[1].inertia[2] = 100.0                      # breaks the triangle inequality
    path = tmp_path / "bad.mbs.xml"
    xmlio.write(m, path)
    text = path.read_text().replace("<Density>7850</Density>", "<Density>dense</Density>", 1)
    path.write_text(text)
    code, out, err = run_cli("check", str(path))
    assert code == 2
    assert "4 problems" in out
    assert "RigidBody 'Upper' (line" in out and "field Mass" in out
    assert "Hinge 'Elbow'" in out and "field Type" in out
    assert "RigidBody 'Lower'" in out and "triangle inequality" in out
    assert "field Density" in out
    assert "Traceback" not in out + err


@pytest.mark.parametrize("content", ["", "<MultibodySystem", "not xml at all", "<Other/>"])
def test_garbage_gives_problems_not_tracebacks(tmp_path, content):
    path = tmp_path / "junk.xml"
    path.write_text(content)
    code, out, err = run_cli("check", str(path))
    assert code == 2 and "problem" in out
    assert "Traceback" not in out + err


def test_missing_file_and_bad_arguments():
    code, out, err = run_cli("check", "/nonexistent/model.mbs.xml")
    assert code == 2 and "no such file" in err and "Traceback" not in err
    code, _, err = run_cli("topology", "x.xml")            # -o missing: argparse usage error
    assert code == 2 and "Traceback" not in err
    code, _, err = run_cli("example", "nothing", "-o", "/tmp/x.xml")
    assert code == 2 and "crank_slider" in err


def test_topology_figure(tmp_path):
    path = tmp_path / "cs.mbs.xml"
    xmlio.write(build("crank_slider"), path)
    for ext in ("svg", "png", "dot"):
        fig = tmp_path / f"cs.{ext}"
        code, out, err = run_cli("topology", str(path), "-o", str(fig))
        assert code == 0, err
        assert fig.stat().st_size > 200
    assert (tmp_path / "cs.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<svg" in (tmp_path / "cs.svg").read_text()
    code, _, err = run_cli("topology", str(path), "-o", str(tmp_path / "cs.jpg"))
    assert code == 2 and ".svg" in err


def test_examples_listing():
    code, out, _ = run_cli("examples")
    assert code == 0
    for name in EXAMPLES:
        assert name in out
