"""Objectives and constraints name results as the plot dock shows them (issue 32 item 3), and are
evaluated on a made-up table before any run (issue 33 item 5): labels with any character, a quoted
name as the check suggests it, FreeCAD Names through aliases, a wrong call refused naming the
objective (exit 2 from the ``study`` command)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from MultibodyWB.solver.model import MultibodySystem, xmlio
from MultibodyWB.solver.model.columns import unit_of
from MultibodyWB.solver.study import (Expression, ExpressionError, Study, StudyError,
                                      parse_constraint, parse_parameter, run_study)
from MultibodyWB.solver.study.executors import SerialExecutor
from MultibodyWB.solver.study.objectives import resolve

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HINGE = "Slider – Ground prismatic (1)"          # a label as FreeCAD makes them: en-dash, spaces


def oscillator(zeta=0.2, m=1.0, w=2 * math.pi, x0=0.01, t_end=4.0, step=1e-3):
    """A mass on a prismatic hinge called :data:`HINGE` with a spring m w^2 and a damper
    2 zeta m w, released from x0: int_0^inf x^2 dt = x0^2 / w (zeta + 1 / (4 zeta))."""
    M = MultibodySystem("Oscillator")
    gm = M.set_ground().add_marker()
    b = M.add_body("Mass", m, [1e-3, 1e-3, 1e-3, 0, 0, 0], density=1000.0)
    M.add_hinge(HINGE, "prismatic", b.add_marker(), gm, initial_coordinates=[x0],
                stiffness=[m * w * w], damping=[2 * zeta * m * w])
    M.simulation.end_time = t_end
    M.simulation.step = M.simulation.output_step = step
    return M


COLUMNS = ["time", f"{HINGE}.z", f"{HINGE}.z_rate", f"{HINGE}.Fz", "Hull.az", "A-B.x", "A.x"]


def test_labels_are_read_as_the_plot_dock_writes_them():
    assert resolve(f"rms({HINGE}.z)", COLUMNS) == f"rms(col({HINGE + '.z'!r}))"
    # the longest name that stands there; plain Python names stay as written
    assert resolve("max(A.x - A-B.x) + rms(Hull.az)", COLUMNS) == \
        "max(A.x - col('A-B.x')) + rms(Hull.az)"
    # not inside a longer word, not inside quotes
    assert resolve("rms(xA.x)", COLUMNS) == "rms(xA.x)"
    assert resolve("rms(col('A-B.x'))", COLUMNS) == "rms(col('A-B.x'))"
    # a quoted name (as the check suggests it) is the column
    assert resolve(f"rms('{HINGE}.z')", COLUMNS) == f"rms(col({HINGE + '.z'!r}))"
    # FreeCAD's object Names stand for their labels
    assert resolve("rms(Hinge001.Fz)", COLUMNS, {"Hinge001": HINGE}) == \
        f"rms(col({HINGE + '.Fz'!r}))"
    t = np.linspace(0.0, 1.0, 1001)
    table = {"time": t, f"{HINGE}.z": 0.3 * np.sin(2 * math.pi * t), "A-B.x": 2 * t,
             "A.x": t, "Hull.az": t}
    for text, exact in ((f"rms({HINGE}.z)", 0.3 / math.sqrt(2)),
                        (f"rms('{HINGE}.z')", 0.3 / math.sqrt(2)),
                        ("final(A.x - A-B.x)", -1.0), ("final(A-B.x)", 2.0)):
        e = Expression(text)
        e.check(COLUMNS)
        assert e.evaluate(table) == pytest.approx(exact, rel=1e-6), text
    assert Expression(f"max(abs({HINGE}.Fz))").unit(unit_of, COLUMNS) == "N"
    assert Expression(f"max(abs({HINGE}.Fz))").unit(unit_of) == "N"     # guessed from the text
    assert Expression(f"argmax({HINGE}.z)").unit(unit_of, COLUMNS) == "s"


def test_a_misspelt_label_is_named_with_the_columns_meant():
    with pytest.raises(ExpressionError) as e:
        Expression(f"rms({HINGE}.zz)").check(COLUMNS)
    text = str(e.value)
    assert f"'{HINGE}.zz' is not a result column of the model (did you mean '{HINGE}.z'" in text
    # and what it suggests is taken as written
    suggested = text.split("did you mean ")[1].split(",")[0].rstrip("?)")
    Expression(f"rms({suggested})").check(COLUMNS)
    Expression(f"rms({suggested.strip(chr(39))})").check(COLUMNS)


def test_a_constraint_on_a_label_checks_its_unit():
    c = parse_constraint(f"max({HINGE}.z) <= 50 N")
    with pytest.raises(ExpressionError, match="the bound is a force .N. but .* is a length"):
        c.expression.check(COLUMNS)
    parse_constraint(f"max({HINGE}.z) <= 50 mm").expression.check(COLUMNS)
    with pytest.raises(ExpressionError, match="not a finite number"):
        parse_constraint("max(Hull.az) <= 1e309")


@pytest.mark.parametrize("text, words", [
    ("rms(Hull.az, A.x, A-B.x)", "rms(): argument 2 (t0, s) is a column"),
    ("at(Hull.az, A.x)", "at(): argument 2 (the time t, s) is a column"),
    ("Hull.az", "is a column, not a number"),
    ("max(Hull.az) + Hull.az", "is a column, not a number"),
    ("mean(Hull.az, 0, A.x)", "argument 3 (t1, s) is a column"),
])
def test_calls_a_run_would_refuse_are_refused_by_the_check(text, words):
    e = Expression(text)                      # the syntax and the counts of arguments pass
    with pytest.raises(ExpressionError, match=".*".join(map(__import__("re").escape,
                                                             words.split(" is ")))):
        e.check(COLUMNS)


def test_a_study_over_a_labelled_hinge_runs_and_a_wrong_call_is_refused_before_any_run():
    base, x0, w, m = oscillator(), 0.01, 2 * math.pi, 1.0
    table = run_study(base, Study([parse_parameter(f"{HINGE}.Damping=3.7699:6.2832:2")],
                                  [f"integral({HINGE}.z**2)"],
                                  [f"max(abs({HINGE}.z)) <= 10 mm"]),
                      executor=SerialExecutor())
    for r in table.rows:
        zeta = r.values[0] / (2 * m * w)
        exact = x0 * x0 / w * (zeta + 1 / (4 * zeta))      # to t = inf: the tail past 4 s is below 1e-6
        assert r.status == "ok" and r.objectives[0] == pytest.approx(exact, rel=1e-4)
        assert r.margins[0] == pytest.approx(0.0, abs=1e-9)   # |z| peaks at x0 = 10 mm
    runs = []
    ex = SerialExecutor()
    ex.run = lambda *a, **k: runs.append(a) or []          # noqa: E731
    with pytest.raises(StudyError) as e:
        run_study(base, Study([parse_parameter(f"{HINGE}.Damping=1:2:2")],
                              [f"rms({HINGE}.z)", f"rms({HINGE}.z, {HINGE}.z, {HINGE}.z)"]),
                  executor=ex)
    assert f"Objective 2 (rms({HINGE}.z, Slider" in str(e.value)      # cut at 60 characters
    assert "field Expression: rms(): argument 2 (t0, s) is a column" in str(e.value)
    assert not runs


def test_cli_refuses_a_wrong_call_with_exit_2_naming_the_objective():
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "osc.mbs.xml")
        xmlio.write(oscillator(t_end=0.2), model)
        out = os.path.join(tmp, "s.csv")
        r = subprocess.run([sys.executable, "-m", "MultibodyWB.solver", "study", model,
                            "--param", f"{HINGE}.Damping=1:2:2", "--objective",
                            f"rms({HINGE}.z, {HINGE}.z, {HINGE}.z)", "--serial", "--out", out],
                           cwd=REPO, capture_output=True, text=True, timeout=300)
        assert r.returncode == 2, r.stdout + r.stderr
        assert "Objective 1 (rms(" in r.stdout and "argument 2 (t0, s) is a column" in r.stdout
        assert "Traceback" not in r.stdout + r.stderr and "TypeError" not in r.stdout
        assert not os.path.exists(out)
        # the label as written runs
        r = subprocess.run([sys.executable, "-m", "MultibodyWB.solver", "study", model,
                            "--param", f"{HINGE}.Damping=1:2:2", "--objective",
                            f"max({HINGE}.z)", "--serial", "--out", out],
                           cwd=REPO, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        assert os.path.exists(out)
