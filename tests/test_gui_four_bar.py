"""The drawing is the start, in the FreeCAD GUI under Xvfb (``tests/gui/check_four_bar_drawing.py``):
a four-bar of bored Part boxes stacked along the pins, built through the commands with the
selection a click makes (markers on the bores' faces), a 60 rpm motor on the crank drawn at 90 deg,
a spring on the crank pin, Simulate's Run button. The first frame is the drawing; no part moves
along a pin; the spring stores nothing at t = 0; a driver from a hidden zero is refused, shown and
explained in mm and degrees until the user accepts it."""

import os
import re
import shutil
from pathlib import Path

import pytest

import freecad_env

pytestmark = pytest.mark.gui

GUI_DIR = Path(__file__).resolve().parent / "gui"


@pytest.fixture(scope="module")
def four_bar(tmp_path_factory):
    work = tmp_path_factory.mktemp("four_bar")
    result = freecad_env.run_freecad_gui(GUI_DIR / "check_four_bar_drawing.py", timeout=700,
                                         work_dir=work)
    artifacts = os.environ.get("MBWB_ARTIFACTS_DIR")
    if artifacts:
        os.makedirs(artifacts, exist_ok=True)
        for name in ("four_bar_after_run.png", "four_bar_start_correction.png",
                     "four_bar_cut_rate_refused.png", "four_bar_cut_rates_box.png",
                     "four_bar_cut_coordinate_box.png"):
            path = Path(result["_output_dir"]) / name
            if path.is_file():
                shutil.copy(path, Path(artifacts) / name)
    assert "exception" not in result, result["exception"]
    return result


def test_the_four_bar_is_built_through_the_commands_on_the_bores(four_bar):
    assert all(four_bar["hinges_made"].values()), four_bar["hinges_made"]
    assert all(four_bar["hinge_panel_ok"].values()), four_bar["hinge_panel_ok"]
    # the motor typed in rpm into the new crank hinge's panel, the spring into its panel
    assert four_bar["motor_typed"] and four_bar["spring_typed"] and four_bar["spring_panel_ok"]
    assert four_bar["motor_speed_deg_s"] == pytest.approx(360.0)
    # markers picked mid-bore on stacked links: 10 mm apart along each pin, as drawn
    for name, gap in four_bar["marker_axial_gaps_mm"].items():
        assert gap == pytest.approx(10.0, abs=1e-6), name


def test_the_first_frame_of_a_motor_run_is_the_drawing(four_bar):
    assert four_bar["motor_run_started"], four_bar["motor_run_messages"]
    assert four_bar["motor_run_status"].startswith("Done"), four_bar["motor_run_messages"]
    errors = four_bar["first_frame_errors"]
    assert set(errors) == {"Crank", "Coupler", "Rocker"}
    for body, (mm, rotation) in errors.items():
        assert mm < 1e-3 and rotation < 1e-6, (body, mm, rotation)
    # the crank drawn at 90 deg turns at 60 rpm from there
    t, angle = four_bar["time"], four_bar["crank_angle_deg"]
    assert angle[1] - angle[0] == pytest.approx(360.0 * (t[1] - t[0]), abs=1e-6)


def test_no_part_is_pulled_along_a_pin(four_bar):
    for body, travel in four_bar["axial_travel_mm"].items():
        assert travel < 1e-6, (body, travel)


def test_a_spring_relaxed_as_drawn_stores_no_energy_at_the_start(four_bar):
    assert abs(four_bar["elastic_energy_J"][0]) < 1e-12
    assert four_bar["elastic_energy_J"][2] > 0.0       # it winds up as the rocker swings


def test_a_driver_from_a_hidden_zero_is_refused_and_shown_until_accepted(four_bar):
    assert four_bar["hidden_zero_run_started"] is False
    assert four_bar["hidden_zero_box_visible"]
    text = four_bar["hidden_zero_text"]
    crank = four_bar["body_labels"]["Crank"]
    assert f"'{crank}'" in text and "driven from 0" in text, text
    assert "90" in text and "mm" in text, text
    assert four_bar["hidden_zero_shown_moved"]                     # shown in the 3D view
    assert "Crank" in four_bar["hidden_zero_selected"]
    assert four_bar["kept_drawing_restored"] and four_bar["runs_after_keep"] == 0
    assert four_bar["runs_after_accept"] == 1
    assert four_bar["accepted_first_crank_angle_deg"] == pytest.approx(0.0, abs=1e-9)
    assert "accept_corrections=True" in four_bar["accepted_console"]
    assert four_bar["drawing_after_accepted_run"]


def test_a_rate_typed_into_the_hinge_closing_the_loop_against_the_motor(four_bar):
    """100 deg/s typed into the initial rate of the hinge that closes the loop (its task panel),
    the crank at 60 rpm: Run is refused naming the hinge's property and the rate the loop
    gives, in deg/s, with the document's words for the way out; nothing stored, nothing moved.
    That rate typed back as shown: the run starts with it on the hinge, the crank at 360 deg/s
    and every part where it is drawn."""
    r = four_bar
    assert r["cut_is_rocker_pivot"], r["cut_hinges"]
    assert r["cut_simulate_closed"] and r["cut_rate_typed"]
    assert r["cut_rate_property"] == pytest.approx(100.0)
    assert not r["cut_refused_started"] and r["cut_refused_runs"] == 0
    text = r["cut_refused_messages"]
    assert "The mechanism cannot be assembled:" in text, text
    label = r["cut_hinges"][0]
    assert f"Hinge '{label}', property InitialRateRz: the rates prescribed on this hinge, " \
           "which closes a loop, cannot be met with the loop's driven rates" in text, text
    assert "(100 deg/s), the loop gives" in text, text
    assert "(tick InitialIsEstimate on the hinge (its initial coordinates, if given, become " \
           "estimates too), or set its initial rates to 0 (a zero rate is not given))" in text, \
        text
    assert 'Estimate="true"' not in text
    assert r["cut_loop_rate_shown"], text
    shown = float(r["cut_loop_rate_shown"])
    assert shown != pytest.approx(100.0, abs=0.5)
    assert r["cut_rate_typed_back"] and r["cut_typed_back_started"], \
        r["cut_typed_back_messages"]
    assert r["cut_typed_back_status"].startswith("Done"), r["cut_typed_back_messages"]
    assert r["cut_typed_back_runs"] == 1
    assert r["cut_first_rate_deg_s"] == pytest.approx(shown, rel=1e-9)
    assert r["cut_first_crank_rate_deg_s"] == pytest.approx(360.0, rel=1e-12)
    for name, (dp, dR) in r["cut_first_frame_errors"].items():
        assert dp < 1e-3 and dR < 1e-6, (name, dp, dR)


def test_rates_typed_into_the_crank_and_the_hinge_closing_the_loop_that_disagree(four_bar):
    """No motor: 360 deg/s typed into the crank's initial rate, 100 deg/s into the cut hinge's.
    Run shows the start box, about rates (the parts start as drawn), naming both hinges with
    the rates the loop allows, in deg/s, and the document's way out; accepted, the run starts
    with rates that close the loop, and the drawing is untouched."""
    r = four_bar
    assert r["cut_crank_rate_typed"] and r["cut_rate_retyped"]
    assert not r["cut_rates_started"] and r["cut_rates_box_visible"]
    text = r["cut_rates_box_text"]
    assert text.startswith("The run would not start with the initial rates given (the parts "
                           "start as drawn):"), text
    label = r["cut_hinges"][0]
    assert f"because of hinge '{label}': the rate of coordinate rz is prescribed as 100 deg/s " \
           "on this hinge, which closes the loop, but the loop's other prescribed and driven " \
           "rates make it" in text, text
    assert "tick InitialIsEstimate on a hinge whose initial rates are only estimates" in text
    assert 'Estimate="true"' not in text
    assert r["cut_rates_status"] == "Not run yet: the start differs from the initial rates given"
    assert r["cut_rates_buttons"] == ["Run with these rates", "Keep the values given"]
    assert r["cut_rates_panel_fits"], r["cut_rates_panel_widths"]
    assert r["cut_rates_accepted_runs"] == 1
    rates = r["cut_rates_accepted_rates_deg_s"]
    # the loop closes: the rocker turns as the motor run's loop made it (175.43 deg/s when the
    # crank turns at 360 deg/s, the same drawing), the 100 deg/s given up
    ratio = float(r["cut_loop_rate_shown"]) / 360.0
    assert rates["RockerPivot"] == pytest.approx(ratio * rates["CrankPivot"], rel=1e-9), rates
    # the crank's 360 deg/s gave way, to the rate the box said
    found = re.search(r"the rate of coordinate rz is prescribed as 360 deg/s, but the loop's "
                      r"other prescribed and driven rates allow ([-0-9.e+]+) deg/s", text)
    assert found, text
    assert rates["CrankPivot"] == pytest.approx(float(found.group(1)), rel=1e-5)
    assert rates["CrankPivot"] != pytest.approx(360.0, rel=1e-3), rates
    assert r["cut_drawing_kept"]


def test_a_coordinate_typed_into_the_hinge_closing_the_loop_is_shown_before_it_moves_parts(
        four_bar):
    """InitialAsDrawn unticked on the hinge that closes the loop and its rz typed 3 deg off the
    drawing. With the crank's motor holding the crank as drawn, Run is refused (out of the
    loop's reach, naming InitialRz). Without it, Run shows the start box (the parts that would move, and the cut hinge's prescribed
    coordinate against the drawing, in degrees that read differently), the 3D view shows that
    start; Keep the drawing puts the parts back and stores nothing."""
    r = four_bar
    assert r["coord_box_found"] and r["coord_typed"] and r["coord_ok"], r
    assert r["coord_as_drawn_after"] is False
    assert r["coord_property_deg"] == pytest.approx(r["coord_drawn_deg"] + 3.0, abs=1e-5)
    # the motor holds the crank as drawn: refused, naming the property and the way out
    assert not r["coord_motor_started"]
    text = r["coord_motor_messages"]
    label = r["cut_hinges"][0]
    assert f"Hinge '{label}', property InitialRz: the coordinates prescribed on this hinge, " \
           "which closes a loop, are out of the loop's reach" in text, text
    assert "or tick InitialAsDrawn)" in text, text
    assert not r["coord_started"] and r["coord_box_visible"], r["coord_messages"]
    text = r["coord_box_text"]
    assert text.startswith("The run would not start from the drawing:"), text
    assert "moves" in text and " mm and turns " in text, text
    found = re.search(rf"because of hinge '{re.escape(label)}': coordinate rz is prescribed as "
                      r"([-0-9.e+]+) deg on this hinge, which closes the loop, but is "
                      r"([-0-9.e+]+) deg as drawn", text)
    assert found, text
    prescribed, drawn = float(found.group(1)), float(found.group(2))
    assert prescribed == pytest.approx(r["coord_drawn_deg"] + 3.0, abs=0.006)   # 4 digits
    assert drawn == pytest.approx(r["coord_drawn_deg"], abs=0.006)
    assert r["coord_buttons"] == ["Run from this start", "Keep the drawing"]
    assert r["coord_shown_moved"] and r["coord_kept_drawing"] and r["coord_runs"] == 0


def test_a_first_run_waits_for_the_compile_in_another_process_and_cancel_ends_it(four_bar):
    assert four_bar["cold_compiling"]
    assert four_bar["cold_status"].startswith("Compiling the solver"), four_bar["cold_status"]
    assert "s elapsed" in four_bar["cold_status"]
    assert four_bar["cold_cancel_seconds"] < 1.0
    assert not four_bar["cold_running_after_cancel"]
    assert "Cancelled" in four_bar["cold_status_after_cancel"]


def test_an_rk4_run_starts_once_its_kernels_are_compiled_while_the_rest_still_compiles(
        four_bar):
    # before the stage's stamp: waiting
    assert four_bar["staged_waiting"], (four_bar["staged_status_waiting"],
                                        four_bar["staged_messages"])
    assert four_bar["staged_runs"] == 1                 # then it ran and was stored,
    assert four_bar["staged_compile_still_running"]     # the compile going on beside it
    text = four_bar["staged_messages"]
    assert "for this run were compiled in" in text and "in the background" in text, text


def test_the_background_compile_fills_the_cache_folder_freecads_runs_read(four_bar):
    # the add-on is a symlink in the test's Mod folder: the compile must import the solver
    # through it, as FreeCAD does, or numba files its work under the resolved path's folder
    assert four_bar["cold_package_linked"]
    # (the compile fills one folder per package with compiled code, as it gets to them: those
    # made so far must all be folders FreeCAD's runs read)
    assert len(four_bar["cold_cache_folders_of_freecad"]) >= 3       # the solver's packages
    # (numba's folders; the warm-up's own files there, its lock and stamp, left out)
    folders = [f for f in four_bar["cold_cache_folders"] if not f.startswith("multibodywb-warm-")]
    assert folders, "the compile made no cache folder"
    assert set(folders) <= set(four_bar["cold_cache_folders_of_freecad"]), folders


def test_the_summary_of_the_motor_run_reports_the_motors_work_and_a_small_residual(four_bar):
    import re
    text = four_bar["motor_run_messages"]
    work = re.search(r"work of drivers ([-0-9.e+]+) J", text)
    assert work and float(work.group(1)) > 1.0, text[-800:]        # the motor winds the spring
    residual = re.search(r"residual \(drift\) [-0-9.e+]+ J \(([-0-9.e+]+) relative\)", text)
    assert residual and abs(float(residual.group(1))) < 1e-6, text[-800:]
