"""The drawing is the start (solver/start.py): drivers and motors from the drawing, spring
references at the start, coaxial markers keep their axial offset, and any correction of the
drawing is refused unless accepted, naming the bodies and hinges in mm and degrees."""

import io
import math

import numpy as np
import pytest

from MultibodyWB.examples import build
from MultibodyWB.solver import cli
from MultibodyWB.solver.model import xmlio
from MultibodyWB.solver.analysis.kinematics import drawn_poses, hinge_coordinates
from MultibodyWB.solver.analysis.topology import analyse
from MultibodyWB.solver.model import Driver, Motor
from MultibodyWB.solver.maths.rotations import matrix_to_bryant
from MultibodyWB.examples.parts import frame_along
from MultibodyWB.solver.run.simulate import simulate
from MultibodyWB.solver.analysis.start import (StartCorrectionError, prepare, resolve, start_report)

AXIS = np.array([0.0, 1.0, 0.0])


def four_bar(crank_deg=60.0):
    """The example four-bar with its ground pivot marker along global x: the crank is drawn at
    ``crank_deg`` (the hinge coordinate as drawn is not zero)."""
    m = build("four_bar", theta_deg=crank_deg)
    g = m.ground
    g.marker(1).frame.orientation = matrix_to_bryant(frame_along([1.0, 0.0, 0.0], AXIS))
    m.simulation.end_time = 0.05
    m.simulation.step = 1e-4
    m.simulation.output_step = 1e-2
    return m


def body_poses(res, model, row=0):
    """Base-frame pose (R, p) of every body at a result row."""
    out = {}
    for b in model.bodies:
        p = np.array([res.column(f"{b.name}.{c}")[row] for c in ("x", "y", "z")])
        R = np.array([[res.column(f"{b.name}.R{i}{j}")[row] for j in (1, 2, 3)]
                      for i in (1, 2, 3)])
        out[b.name] = (R, p)
    return out


def assert_first_frame_is_drawing(res, model, length=1e-6, angle=1e-9):
    drawn = drawn_poses(model)
    for name, (R, p) in body_poses(res, model).items():
        assert np.linalg.norm(p - drawn[name].p) < length, name
        assert np.linalg.norm(R - drawn[name].R) < angle, name


def test_drawn_crank_angle_is_not_zero():
    m = four_bar(60.0)
    q = hinge_coordinates(m, "CrankPivot")[0]
    assert abs(abs(math.degrees(q)) - 60.0) < 1e-9


def test_motor_starts_from_the_drawing_and_turns_at_its_speed():
    m = four_bar(60.0)
    q0 = hinge_coordinates(m, "CrankPivot")[0]
    m.hinge("CrankPivot").motors = [Motor("rz", 2 * math.pi)]        # 60 rpm
    res = simulate(m, method="mstmm", integrator="rk4")
    assert_first_frame_is_drawing(res, m)
    rz = res.column("CrankPivot.rz")
    t = res.time
    np.testing.assert_allclose(rz, q0 + 2 * math.pi * t, atol=1e-9)


def test_motor_ramp_follows_the_half_cosine_speed():
    m = four_bar(60.0)
    q0 = hinge_coordinates(m, "CrankPivot")[0]
    T, w = 0.03, 4.0
    m.hinge("CrankPivot").motors = [Motor("rz", w, T)]
    m.simulation.output_step = 1e-3
    res = simulate(m)
    t, rz, wz = res.time, res.column("CrankPivot.rz"), res.column("CrankPivot.rz_rate")
    tau = np.minimum(t, T)
    expected = q0 + 0.5 * w * (tau - T / math.pi * np.sin(math.pi * tau / T)) + w * (t - tau)
    np.testing.assert_allclose(rz, expected, atol=1e-9)
    rate = np.where(t < T, 0.5 * w * (1 - np.cos(math.pi * t / T)), w)
    np.testing.assert_allclose(wz, rate, atol=1e-8)
    assert wz[0] == pytest.approx(0.0, abs=1e-12)


def test_driver_from_start_equals_the_absolute_driver_written_out():
    m = four_bar(60.0)
    q0 = hinge_coordinates(m, "CrankPivot")[0]
    m.hinge("CrankPivot").drivers = [Driver("rz", "3*t", from_start=True)]
    a = simulate(m)
    m2 = four_bar(60.0)
    m2.hinge("CrankPivot").drivers = [Driver("rz", f"{float(q0)!r} + (3*t)")]
    b = simulate(m2)
    assert_first_frame_is_drawing(a, m)
    np.testing.assert_array_equal(a.data, b.data)


def test_a_driver_from_a_hidden_zero_is_refused_naming_the_hinge_and_the_angle():
    m = four_bar(60.0)
    m.hinge("CrankPivot").drivers = [Driver("rz", "2*pi*t")]          # starts at 0, drawn at 60
    with pytest.raises(StartCorrectionError) as err:
        simulate(m)
    text = str(err.value)
    assert "Hinge 'CrankPivot'" in text and "driven from 0 deg" in text
    assert "60 deg" in text
    assert "RigidBody 'Crank'" in text and "accept" in text
    moved = {mv.name for mv in err.value.report.moves}
    assert {"Crank", "Coupler", "Rocker"} <= moved
    res = simulate(m, accept_corrections=True)                       # accepted: runs, and says so
    assert abs(res.column("CrankPivot.rz")[0]) < 1e-12
    assert any("corrected away from the drawing" in w for w in res.meta["warnings"])
    assert res.meta["start_corrected"]


def test_coaxial_markers_of_stacked_links_keep_their_axial_offset():
    m = four_bar(60.0)
    crank = m.body("Crank")
    mk = crank.marker(2)                                # the crank pin, at A
    mk.frame.position = mk.frame.position + 0.010 * mk.frame.rotation[:, 2]
    resolved, notes = resolve(m)
    assert any("CrankPin" in n and "10 mm apart along the common axis" in n for n in notes)
    report = start_report(resolved, notes)
    assert not report.moved, str(report)
    m.hinge("CrankPivot").motors = [Motor("rz", 2 * math.pi)]
    res = simulate(m)
    assert_first_frame_is_drawing(res, m)
    # the coupler stays 10 mm off the crank along the pin all the run: its y does not move
    y = res.column("Coupler.y")
    np.testing.assert_allclose(y, drawn_poses(m)["Coupler"].p[1], atol=1e-9)


def test_markers_apart_across_the_axis_are_a_correction_shown_in_mm():
    m = four_bar(60.0)
    mk = m.body("Crank").marker(2)
    mk.frame.position = mk.frame.position + 0.002 * mk.frame.rotation[:, 0]   # 2 mm off the pin
    with pytest.raises(StartCorrectionError) as err:
        prepare(m)
    text = str(err.value)
    assert "Hinge 'CrankPin'" in text and "2 mm apart" in text
    assert " m " not in text.replace(" mm", "")


def test_given_initial_coordinates_are_a_start_set_on_purpose():
    m = build("double_pendulum")          # drawn hanging, started at 60 deg on purpose
    _, report = prepare(m)
    assert not report.moved
    res = simulate(m, t_end=0.01, step=1e-3, output_step=1e-2)
    assert res.column("Shoulder.rz")[0] == pytest.approx(math.radians(60.0), abs=1e-12)


def test_spring_reference_at_the_start_stores_no_energy():
    m = four_bar(60.0)
    h = m.hinge("CrankPivot")
    h.stiffness = np.array([2.0])
    m.gravity = np.zeros(3)
    res0 = simulate(m)
    assert res0.column("energy.elastic")[0] > 1.0               # relaxed at 0 deg: 3.8 J stored
    h.spring_reference_start = True
    res = simulate(m)
    assert res.column("energy.elastic")[0] == pytest.approx(0.0, abs=1e-15)
    # nothing moves: no stored energy, no gravity, no rates
    np.testing.assert_allclose(res.column("CrankPivot.rz"), res.column("CrankPivot.rz")[0],
                               atol=1e-12)
    resolved, _ = resolve(m)
    q0 = hinge_coordinates(m, "CrankPivot")
    np.testing.assert_array_equal(resolved.hinge("CrankPivot").spring_reference, q0)


def test_every_method_starts_from_the_drawing_with_a_motor():
    m = four_bar(60.0)
    m.hinge("CrankPivot").motors = [Motor("rz", 2 * math.pi)]
    m.simulation.end_time = 0.01
    for method in ("mstmm", "constrained"):
        res = simulate(m, method=method)
        assert_first_frame_is_drawing(res, m, length=1e-7, angle=1e-7)


def test_motor_and_start_references_round_trip_the_file_and_validate():
    m = four_bar(60.0)
    h = m.hinge("CrankPivot")
    h.motors = [Motor("rz", 6.283185307179586, 0.5)]
    h.stiffness = np.array([1.0])
    h.spring_reference_start = True
    m.hinge("RockerPin").drivers = []
    m2 = xmlio.read(xmlio.to_bytes(m))
    h2 = m2.hinge("CrankPivot")
    assert h2.motors == h.motors and h2.spring_reference_start
    h.drivers = [Driver("rz", "t", from_start=True)]
    problems = m.validate()
    assert any(p.field == "Motor" and "driver or motor already" in p.message for p in problems)
    h.drivers = []
    h.motors = [Motor("rz", float("nan"), -1.0)]
    fields = [p.message for p in m.validate() if p.field == "Motor"]
    assert len(fields) == 2
    h.motors = []
    h.spring_reference = np.array([0.1])
    assert any(p.field == "SpringReference" for p in m.validate())


def test_cli_refuses_a_moving_start_and_runs_when_accepted(tmp_path):
    m = four_bar(60.0)
    m.hinge("CrankPivot").drivers = [Driver("rz", "2*pi*t")]
    path = tmp_path / "fb.mbs.xml"
    xmlio.write(m, path)
    out = io.StringIO()
    assert cli.main(["run", str(path)], out=out) == cli.EXIT_INVALID
    assert "Hinge 'CrankPivot'" in out.getvalue() and "--accept-corrections" in out.getvalue()
    out = io.StringIO()
    assert cli.main(["check", str(path)], out=out) == cli.EXIT_INVALID
    assert "RigidBody 'Crank'" in out.getvalue()
    out = io.StringIO()
    assert cli.main(["run", str(path), "--accept-corrections"], out=out) == cli.EXIT_OK


# --- initial rates: prescribed or estimates ---------------------------------------------------

def _four_bar_rates():
    """Every hinge's rate of the four-bar (60 deg) whose crank turns at 6 rad/s, as a run
    reports them at t = 0 (the cut hinge's too: RockerPivot)."""
    m = four_bar(60.0)
    m.hinge("CrankPivot").initial_rates = np.array([6.0])
    res = simulate(m, t_end=0.01, output_step=0.01)
    return {h.name: float(res.column(f"{h.name}.rz_rate")[0]) for h in m.hinges}


def _run_file(path):
    """(exit status, output) of the CLI's ``run`` on a file."""
    out = io.StringIO()
    return cli.main(["run", str(path)], out=out), out.getvalue()


def _refused(m, tmp_path):
    """The model written to a file and ``run``: refused (exit 2); (the hinges named, output)."""
    path = tmp_path / "rates.mbs.xml"
    xmlio.write(m, path)
    status, out = _run_file(path)
    assert status == cli.EXIT_INVALID
    return {h.name for h in m.hinges if f"Hinge '{h.name}'" in out}, out


def _assert_started_with(res, rates, cut_rel):
    """The run's first rates are ``rates``: the tree hinges' to the bit, the cut hinge's
    (RockerPivot, which the results compute from the others) to ``cut_rel``."""
    for name, v in rates.items():
        got = res.column(f"{name}.rz_rate")[0]
        if name == "RockerPivot":
            assert got == pytest.approx(v, rel=cut_rel)
        else:
            assert got == v, name


def test_consistent_prescribed_rates_of_every_hinge_are_kept_exactly(tmp_path):
    """A four-bar file listing all four hinges' rates, the cut hinge's included, consistent:
    the run starts with them as written (the tree hinges' to the bit, the cut hinge's, which
    the results compute from the others, to round-off)."""
    rates = _four_bar_rates()
    assert analyse(four_bar(60.0)).cut_hinges == ("RockerPivot",)
    assert len(set(rates.values())) == 4 and all(abs(v) > 1.0 for v in rates.values())
    m = four_bar(60.0)
    for h in m.hinges:
        h.initial_rates = np.array([rates[h.name]])
    path = tmp_path / "rates.mbs.xml"
    xmlio.write(m, path)
    m2 = xmlio.read(path)
    assert {h.name: float(h.initial_rates[0]) for h in m2.hinges} == rates
    _assert_started_with(simulate(m2, t_end=0.01, output_step=0.01), rates, cut_rel=1e-12)
    assert _run_file(path)[0] == cli.EXIT_OK


def test_a_cut_hinge_rate_alone_sets_the_loop_going(tmp_path):
    """Only the cut hinge's rate given: the tree's rates are solved for, the cut hinge's kept."""
    rates = _four_bar_rates()
    m = four_bar(60.0)
    for h in m.hinges:
        h.initial_rates = None
    m.hinge("RockerPivot").initial_rates = np.array([rates["RockerPivot"]])
    res = simulate(m, t_end=0.01, output_step=0.01)
    for name, v in rates.items():
        assert res.column(f"{name}.rz_rate")[0] == pytest.approx(v, rel=1e-12)


def test_contradicting_prescribed_rates_are_refused_naming_the_hinges_and_the_values(tmp_path):
    """All four hinges' rates given (the crank's 6 rad/s, the others 0), in a file: exit 2,
    naming the two hinges whose prescribed rates the assembly would change or cannot keep, the
    crank (with the rate the others allow) and the cut hinge; not the two whose zeros stay."""
    m = four_bar(60.0)
    for h in m.hinges:
        h.initial_rates = np.array([6.0 if h.name == "CrankPivot" else 0.0])
    with pytest.raises(StartCorrectionError) as err:
        simulate(m)
    text = str(err.value)
    assert "prescribed as" in text and "deg/s" in text
    assert err.value.report.rate_changes
    named, out = _refused(m, tmp_path)
    assert named == {"CrankPivot", "RockerPivot"}
    assert "prescribed as 343.775 deg/s, but the loop's other prescribed and driven rates " \
           "allow 0 deg/s" in out
    assert "prescribed as 0 deg/s on this hinge, which closes the loop, but the loop's other " \
           "prescribed and driven rates contradict it and each other" in out


def test_a_cut_hinge_rate_against_the_crank_rate_shows_the_rate_the_crank_gives(tmp_path):
    """The crank's rate and the cut hinge's given, contradicting each other (the two others
    not given): exit 2 naming both, the cut hinge's line with the rate the crank's makes it."""
    rates = _four_bar_rates()
    m = four_bar(60.0)
    m.hinge("CrankPivot").initial_rates = np.array([6.0])
    m.hinge("RockerPivot").initial_rates = np.array([0.0])
    named, out = _refused(m, tmp_path)
    assert named == {"CrankPivot", "RockerPivot"}
    rocker = math.degrees(rates["RockerPivot"])
    assert f"prescribed as 0 deg/s on this hinge, which closes the loop, but the loop's other " \
           f"prescribed and driven rates make it {rocker:.6g} deg/s" in out


def test_a_cut_hinge_rate_against_the_drivers_is_refused_with_the_rate_they_give(tmp_path):
    """The crank driven, the cut hinge's rate prescribed otherwise: ``check`` and ``run`` refuse
    the file naming the cut hinge's InitialRates and the rate the driven loop gives it."""
    rates = _four_bar_rates()
    m = four_bar(60.0)
    m.hinge("CrankPivot").drivers = [Driver("rz", "6*t", from_start=True)]
    m.hinge("RockerPivot").initial_rates = np.array([0.0])
    path = tmp_path / "driven.mbs.xml"
    xmlio.write(m, path)
    texts = []
    for command in ("check", "run"):
        out = io.StringIO()
        assert cli.main([command, str(path)], out=out) == cli.EXIT_INVALID
        texts.append(out.getvalue())
    loop = rates["RockerPivot"]
    for text in texts:
        assert "Hinge 'RockerPivot', field InitialRates" in text
        assert f"the loop gives {loop:.10g} rad/s ({math.degrees(loop):.10g} deg/s)" in text
        assert "field Loop" not in text
    m.hinge("RockerPivot").initial_rates = np.array([rates["RockerPivot"]])
    res = simulate(m, t_end=0.01, output_step=0.01)
    assert res.column("CrankPivot.rz_rate")[0] == 6.0


def _loop_gives_deg_s(text):
    """The rate (deg/s) a refusal says the loop gives, as shown."""
    import re
    found = re.search(r"the loop gives [-0-9.e+]+ rad/s \(([-0-9.e+]+) deg/s\)", text)
    assert found, text
    return float(found.group(1))


def test_a_cut_hinge_rate_typed_as_a_refusal_shows_it_is_kept(tmp_path):
    """What a user does with the refusal above: types the loop's rate as it is shown into the
    cut hinge (deg/s, as the GUI's field takes it). Six digits of it (what a message used to
    give) are still refused, the two values shown different; the ten digits shown are kept and
    the run goes."""
    rates = _four_bar_rates()
    m = four_bar(60.0)
    m.hinge("CrankPivot").drivers = [Driver("rz", "6*t", from_start=True)]
    six = float(f"{math.degrees(rates['RockerPivot']):.6g}")
    m.hinge("RockerPivot").initial_rates = np.array([math.radians(six)])
    named, out = _refused(m, tmp_path)
    assert named == {"RockerPivot"}
    shown = _loop_gives_deg_s(out)
    assert f"prescribed as {math.radians(six):.10g} rad/s ({six:.10g} deg/s)" in out
    assert shown != six and shown == pytest.approx(six, rel=1e-5)
    m.hinge("RockerPivot").initial_rates = np.array([math.radians(shown)])
    path = tmp_path / "typed.mbs.xml"
    xmlio.write(m, path)
    assert _run_file(path)[0] == cli.EXIT_OK
    res = simulate(xmlio.read(path), t_end=0.01, output_step=0.01)
    assert res.column("RockerPivot.rz_rate")[0] == pytest.approx(math.radians(shown), rel=1e-9)


def test_a_cut_hinge_rate_a_little_off_the_drivers_is_shown_not_changed_silently(tmp_path):
    """A cut hinge's rate nine digits close to what the driven loop gives (3e-9 off: below the
    refusal's tolerance, beyond the 1e-9 within which it counts as kept) used to be changed
    without a word. Now the start check shows it, both rates written so that they read
    differently; accepted, the run starts with the loop's rate."""
    rates = _four_bar_rates()
    m = four_bar(60.0)
    m.hinge("CrankPivot").drivers = [Driver("rz", "6*t", from_start=True)]
    nine = float(f"{math.degrees(rates['RockerPivot']):.9g}")
    assert 1e-9 < abs(math.radians(nine) / rates["RockerPivot"] - 1) < 1e-8
    m.hinge("RockerPivot").initial_rates = np.array([math.radians(nine)])
    with pytest.raises(StartCorrectionError) as err:
        simulate(m, t_end=0.01, output_step=0.01)
    causes = dict(err.value.report.causes)
    assert set(causes) == {"RockerPivot"}
    assert causes["RockerPivot"] == (
        f"the rate of coordinate rz is prescribed as {nine:.9g} deg/s on this hinge, which "
        f"closes the loop, but the loop's other prescribed and driven rates make it "
        f"{math.degrees(rates['RockerPivot']):.10g} deg/s")
    res = simulate(m, t_end=0.01, output_step=0.01, accept_corrections=True)
    assert res.column("RockerPivot.rz_rate")[0] == pytest.approx(rates["RockerPivot"],
                                                                 rel=1e-12)


def test_compared_values_read_differently_when_they_differ():
    """The messages' pairs of values: more digits where six (four for lengths and angles) read
    the same; a value that is zero but for round-off is 0; equal values as few digits as
    asked."""
    from MultibodyWB.solver.analysis.texts import pair
    assert pair(1.0, 1.0 + 3e-9) == ("1", "1.000000003")
    assert pair(101.191, 101.1913256) == ("101.191", "101.1913")
    assert pair(0.1, 0.10002, 1e3, least=4) == ("100", "100.02")
    assert pair(2.0, 2.0) == ("2", "2")
    assert pair(3e-13, 2.0) == ("0", "2")
    assert pair(3e-13, 4e-13) == ("0", "0")
    assert pair(-1e-3, 1e-3, least=4) == ("-0.001", "0.001")
    assert pair(1.0, 1.0 + 2.0 ** -52) == ("1", "1.0000000000000002")
    assert pair(100.0, 100.0 + 2e-10, least=4) == ("100", "100.0000000002")


def test_prescribed_tree_rates_stay_exact_beside_a_cut_hinge_rate(tmp_path):
    """All four hinges' rates given with ten digits (as a user copies them): consistent to the
    assembly's tolerance, so the tree hinges' rates are kept to the bit, and the cut hinge's
    within 1e-9 (the start check accepts the file)."""
    rates = {k: float(f"{v:.10g}") for k, v in _four_bar_rates().items()}
    m = four_bar(60.0)
    for h in m.hinges:
        h.initial_rates = np.array([rates[h.name]])
    _assert_started_with(simulate(m, t_end=0.01, output_step=0.01), rates, cut_rel=1e-9)


def test_coordinates_prescribed_on_the_cut_hinge_are_kept_or_refused(tmp_path):
    """InitialCoordinates on the hinge that closes the loop: as drawn, the run starts there; a
    little off (0.05 rad), the start check shows what would move and why (the cut hinge's
    prescribed value against the drawing) and, accepted, the run starts with the cut hinge
    there; out of the loop's reach (0.3 rad), ``check`` and ``run`` refuse the file naming the
    cut hinge's InitialCoordinates."""
    m = four_bar(60.0)
    h = m.hinge("RockerPivot")
    assert analyse(m).cut_hinges == ("RockerPivot",)
    drawn = hinge_coordinates(m, h)
    h.initial_coordinates = drawn.copy()
    res = simulate(m, t_end=0.01, output_step=0.01)
    assert res.column("RockerPivot.rz")[0] == pytest.approx(drawn[0], abs=1e-12)
    h.initial_coordinates = drawn + 0.05
    with pytest.raises(StartCorrectionError) as err:
        simulate(m, t_end=0.01, output_step=0.01)
    text = str(err.value)
    assert "Hinge 'RockerPivot', field Start: coordinate rz is prescribed as 2.865 deg on this " \
           "hinge, which closes the loop, but is 0 deg as drawn" in text
    assert "Hinge 'CrankPivot', field Start: coordinate rz changes from -60 deg" in text
    res = simulate(m, t_end=0.01, output_step=0.01, accept_corrections=True)
    assert res.column("RockerPivot.rz")[0] == pytest.approx(drawn[0] + 0.05, abs=1e-12)
    h.initial_coordinates = drawn + 0.3
    path = tmp_path / "reach.mbs.xml"
    xmlio.write(m, path)
    for command in ("check", "run"):
        out = io.StringIO()
        assert cli.main([command, str(path)], out=out) == cli.EXIT_INVALID
        assert "Hinge 'RockerPivot', field InitialCoordinates: the coordinates prescribed on " \
               "this hinge, which closes a loop, are out of the loop's reach" in out.getvalue()
        assert "rz prescribed as 0.3 rad (17.1887 deg)" in out.getvalue()
    h.initial_coordinates_estimate = True               # an estimate: the loop as drawn
    res = simulate(m, t_end=0.01, output_step=0.01)
    assert res.column("RockerPivot.rz")[0] == pytest.approx(drawn[0], abs=1e-9)


def test_rates_marked_as_estimates_give_way_to_the_prescribed_one(tmp_path):
    m = four_bar(60.0)
    for h in m.hinges:
        if h.name != "CrankPivot":
            h.initial_rates = np.array([0.0])
            h.initial_rates_estimate = True
    m.hinge("CrankPivot").initial_rates = np.array([6.0])
    path = tmp_path / "estimates.mbs.xml"
    xmlio.write(m, path)
    assert 'Estimate="true"' in path.read_text()
    m2 = xmlio.read(path)
    assert m2.hinge("RockerPin").initial_rates_estimate
    assert not m2.hinge("CrankPivot").initial_rates_estimate
    res = simulate(m2, t_end=0.01, output_step=0.01)
    assert res.column("CrankPivot.rz_rate")[0] == 6.0


def test_estimated_initial_coordinates_may_be_changed_by_the_assembly():
    m = four_bar(60.0)
    h = m.hinge("CrankPin")
    h.initial_coordinates = hinge_coordinates(m, h) + 0.05      # off the closed loop
    with pytest.raises(StartCorrectionError):
        prepare(m)
    h.initial_coordinates_estimate = True
    _, report = prepare(m)
    assert not report.moved


def _bad_output_step(m):
    m.simulation.step, m.simulation.output_step = 1e-3, 2.5e-3


def _hidden_zero(m):
    m.hinge("CrankPivot").drivers = [Driver("rz", "2*pi*t")]


def _contradicting_rates(m):
    for h in m.hinges:
        h.initial_rates = np.array([6.0 if h.name == "CrankPivot" else 0.0])


@pytest.mark.parametrize("spoil", [_bad_output_step, _hidden_zero, _contradicting_rates])
def test_check_refuses_what_run_refuses_with_the_same_problems(tmp_path, spoil):
    m = four_bar(60.0)
    spoil(m)
    path = tmp_path / "bad.mbs.xml"
    xmlio.write(m, path)
    outs = {}
    for command in ("check", "run"):
        out = io.StringIO()
        assert cli.main([command, str(path)], out=out) == cli.EXIT_INVALID, command
        outs[command] = sorted(line.strip() for line in out.getvalue().splitlines()
                               if line.strip().startswith("- "))
    assert outs["check"] and outs["check"] == outs["run"]


# --- initial angular velocity of spherical and free hinges ---------------------------------------

@pytest.mark.parametrize("method", ["mstmm", "constrained"])
def test_a_spherical_hinge_starts_with_the_angular_velocity_given(method):
    """Given at non-zero angles in output-marker axes, the results' wx, wy, wz at t = 0 are
    that angular velocity (Bryant rates are what InitialRates means, not this)."""
    m = build("seed_box")
    h = m.hinge("Pivot")
    h.initial_coordinates = np.array([0.4, -0.7, 1.1])
    w = np.array([3.0, -2.0, 5.0])
    h.initial_angular_velocity = w
    res = simulate(m, method=method, t_end=1e-3, step=1e-4, output_step=1e-3)
    got = np.array([res.column(f"Pivot.w{a}")[0] for a in "xyz"])
    np.testing.assert_allclose(got, w, rtol=0, atol=1e-12)
    # the same numbers as InitialRates are Bryant rates: another motion
    m2 = build("seed_box")
    m2.hinge("Pivot").initial_coordinates = h.initial_coordinates
    m2.hinge("Pivot").initial_rates = w
    res2 = simulate(m2, method=method, t_end=1e-3, step=1e-4, output_step=1e-3)
    got2 = np.array([res2.column(f"Pivot.w{a}")[0] for a in "xyz"])
    assert np.max(np.abs(got2 - w)) > 0.1


def test_an_angular_velocity_round_trips_and_is_checked():
    m = build("seed_box")
    h = m.hinge("Pivot")
    h.initial_angular_velocity = np.array([1.0, 2.0, 3.0])
    m2 = xmlio.read(xmlio.to_bytes(m))
    np.testing.assert_array_equal(m2.hinge("Pivot").initial_angular_velocity, [1.0, 2.0, 3.0])
    h.initial_rates = np.array([0.0, 0.0, 1.0])
    assert any(p.field == "InitialAngularVelocity" for p in m.validate())
    h.initial_rates = None
    h.initial_angular_velocity = np.array([1.0, 2.0])
    assert any(p.field == "InitialAngularVelocity" for p in m.validate())
    fb = four_bar()
    fb.hinge("CrankPivot").initial_angular_velocity = np.array([0.0, 0.0, 1.0])
    assert any(p.field == "InitialAngularVelocity" and "revolute" in p.message
               for p in fb.validate())
