"""Issue 12's silent acceptances, and what the fuzz campaign found, one named test each.

A zero-length spring-damper with a tension, hinge markers 5.8 m apart as drawn, a body called
``=cmd`` in the CSV header, an inertia with an entry of 1e308; and the resolved copy of a big
model (made without a deep copy) leaving the model it came from unchanged.
"""

import contextlib
import csv
import io
import math

import numpy as np
import pytest

from MultibodyWB.examples import build
from MultibodyWB.solver import cli
from MultibodyWB.solver.model import xmlio
from MultibodyWB.solver.analysis.kinematics import drawn_poses, marker_pose
from MultibodyWB.solver.model import ModelError, Motor
from MultibodyWB.solver.results.table import Results
from MultibodyWB.solver.maths.rotations import bryant_to_matrix
from MultibodyWB.solver.run.simulate import simulate
from MultibodyWB.solver.analysis.start import prepare, resolve


def answer(tmp_path, model, *command):
    """``cli.main`` on the model written to a file: (exit code, stdout, stderr)."""
    path = tmp_path / "model.mbs.xml"
    xmlio.write(model, path)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = cli.main([command[0], str(path), *command[1:]], out=out)
    return code, out.getvalue(), err.getvalue()


def problem_lines(text):
    return [line for line in text.splitlines() if line.startswith("  - ")]


# --------------------------------------------------------------------------------------------------
# A zero-length spring-damper: its tension had been ignored (the solver applies none at length 0)
# --------------------------------------------------------------------------------------------------

def zero_length_spring(magnitude="10", free_length=0.0):
    """seed004 with its spring-damper's input marker moved onto its output marker (as drawn)."""
    m = build("seed004")
    sp = next(f for f in m.forces if f.type == "spring_damper")
    po = marker_pose(m, sp.output, drawn_poses(m)).p
    body = m.part(sp.input.body)
    body.marker(sp.input.marker).frame.position = (bryant_to_matrix(body.orientation).T
                                                  @ (po - body.position))
    sp.magnitude, sp.free_length = magnitude, free_length
    m.simulation.end_time = 0.01
    return m, sp


def test_zero_length_spring_damper_with_a_tension_is_refused_by_check_and_run(tmp_path):
    m, sp = zero_length_spring("10", 0.0)
    for command in (("check",), ("run", "--t-end", "0.01")):
        code, out, err = answer(tmp_path, m, *command)
        assert code == 2, (out, err)
        [line] = problem_lines(out)
        assert line.startswith(f"  - Force '{sp.name}', field Magnitude:")
        assert "Slider:2 and Pendulum:3 coincide" in line and "10 N" in line
    with pytest.raises(ModelError) as exc:
        simulate(m)
    assert exc.value.problems[0].element == "Force 'Spring'"


def test_zero_length_spring_damper_pulled_by_its_free_length_names_that_field(tmp_path):
    m, sp = zero_length_spring("0", 0.15)           # stiffness 500 N/m: -75 N at length 0
    code, out, _ = answer(tmp_path, m, "check")
    assert code == 2
    [line] = problem_lines(out)
    assert "field FreeLength:" in line and "-75 N" in line


def test_zero_length_spring_damper_without_a_tension_is_its_limit_and_runs(tmp_path):
    # free length 0 and no magnitude: the force k * (p_in - p_out) is 0 at length 0, as applied
    m, _ = zero_length_spring("0", 0.0)
    code, out, _ = answer(tmp_path, m, "check")
    assert code == 0, out
    res = simulate(m, t_end=0.01)
    assert np.all(np.isfinite(res.data))


# --------------------------------------------------------------------------------------------------
# Hinge markers 5.8 m apart as drawn: check refuses as run does, naming the hinge, in mm
# --------------------------------------------------------------------------------------------------

def test_hinge_markers_5_8_m_apart_are_refused_alike_by_check_and_run(tmp_path):
    m = build("double_pendulum")
    mk = m.part("Lower").marker(m.hinge("Elbow").input.marker)
    mk.frame.position = mk.frame.position + [5.8, 0.0, 0.0]
    check = answer(tmp_path, m, "check")
    run = answer(tmp_path, m, "run", "--t-end", "0.01")
    assert check[0] == run[0] == 2
    assert problem_lines(check[1]) == problem_lines(run[1])
    lines = problem_lines(check[1])
    assert any(line.startswith("  - Hinge 'Elbow', field Start:") and "5800 mm apart" in line
               for line in lines), lines
    # the body is measured from where it is drawn: the 5.8 m gap and the shoulder's 60 deg start
    assert any("RigidBody 'Lower'" in line and "starts 5956 mm and 60 deg" in line
               for line in lines), lines
    # accepted on purpose, the run starts with the body snapped into place
    assert answer(tmp_path, m, "check", "--accept-corrections")[0] == 0


# --------------------------------------------------------------------------------------------------
# A body called =cmd: its CSV columns are not spreadsheet formulas
# --------------------------------------------------------------------------------------------------

def test_formula_like_body_names_are_not_formulas_in_the_csv(tmp_path):
    m = build("double_pendulum")
    m.part("Lower").name = "=cmd|' /C calc'!A0"
    for h in m.hinges:
        for ref in (h.input, h.output):
            if ref.body == "Lower":
                ref.body = m.part("=cmd|' /C calc'!A0").name
    m.hinge("Elbow").name = "@SUM(A1)"
    res = simulate(m, t_end=0.01)
    path = tmp_path / "r.csv"
    res.save(path)
    with open(path, newline="") as fh:
        header = next(csv.reader(fh))
    assert len(header) == len(res.names)
    assert not [n for n in header if n[:1] in ("=", "+", "-", "@", "\t", "\r")]
    assert "'=cmd|' /C calc'!A0.x" in header and any(n.startswith("'@SUM(A1).") for n in header)
    back = Results.from_csv(path)
    assert back.names == header
    np.testing.assert_array_equal(back.data, res.data)
    # names that are not formulas are written as they are
    assert "Upper.x" in header and res.names[header.index("Upper.x")] == "Upper.x"


# --------------------------------------------------------------------------------------------------
# Found by the campaign: a JI entry of 1e308 was a LinAlgError (internal error) in check
# --------------------------------------------------------------------------------------------------

def test_inertia_entry_of_1e308_is_a_problem_not_an_internal_error(tmp_path):
    m = build("double_pendulum")
    ji = m.part("Lower").inertia.copy()
    ji[4] = 1e308
    m.part("Lower").inertia = ji
    code, out, err = answer(tmp_path, m, "check")
    assert code == 2 and "internal error" not in err
    [line] = problem_lines(out)
    assert line.startswith("  - RigidBody 'Lower' (line ")
    assert "field JI: the inertia tensor" in line


# --------------------------------------------------------------------------------------------------
# resolve copies only what it changes: the model it came from stays as it was
# --------------------------------------------------------------------------------------------------

def test_resolve_leaves_the_model_unchanged_and_shares_nothing_it_changes():
    m = build("four_bar", theta_deg=60.0)
    crank = m.body("Crank")
    mk = crank.marker(2)                                # the crank pin: 10 mm along its axis
    mk.frame.position = mk.frame.position + 0.010 * mk.frame.rotation[:, 2]
    m.hinge("CrankPivot").motors = [Motor("rz", 2 * math.pi)]
    before = xmlio.to_string(m)
    markers = len(crank.markers)
    resolved, notes = resolve(m)
    assert any("CrankPin" in n for n in notes)
    # the coupler pin's input marker was added to a copy of its body, the motor written out in
    # a copy of its hinge
    pin = resolved.hinge("CrankPin")
    added = resolved.part(pin.input.body)
    assert added is not m.part(pin.input.body)
    assert len(added.markers) == len(m.part(pin.input.body).markers) + 1
    assert len(crank.markers) == markers
    assert resolved.hinge("CrankPivot").motors == [] and m.hinge("CrankPivot").motors
    assert xmlio.to_string(m) == before
    # resolving twice gives the same model
    assert xmlio.to_string(resolve(m)[0]) == xmlio.to_string(resolved)
    # and the resolved model starts where the drawing is
    _, report = prepare(m)
    assert not report.moved
