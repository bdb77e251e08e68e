"""The designer's loop in the FreeCAD GUI under Xvfb, through the commands, on the crank-slider
engine built from solids (``tests/gui/check_simulate_loop.py``): simulate in the task panel,
cancel a long run, refuse a broken model, play and compare the solids with the stored results,
plot, export a GIF, restore the placements, save, reopen and play without solving. And what a user
can do to the panels meanwhile: bad settings, Undo/Redo of a run, Run twice, Close during a run,
save while playing, delete the played run, close the document with a panel open."""

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

import freecad_env

pytestmark = pytest.mark.gui

GUI_DIR = Path(__file__).resolve().parent / "gui"


@pytest.fixture(scope="module")
def loop(tmp_path_factory):
    work = tmp_path_factory.mktemp("loop")
    result = freecad_env.run_freecad_gui(GUI_DIR / "check_simulate_loop.py", timeout=700,
                                         work_dir=work)
    artifacts = os.environ.get("MBWB_ARTIFACTS_DIR")
    if artifacts:
        os.makedirs(artifacts, exist_ok=True)
        for name in ("simulate_panel.png", "player.png", "player_view.png", "plot_dock.png",
                     "engine.gif"):
            path = Path(result["_output_dir"]) / name
            if path.is_file():
                shutil.copy(path, Path(artifacts) / name)
    assert "exception" not in result, result["exception"]
    return result


def test_simulate_panel_runs_in_the_background_and_stores_one_run(loop):
    assert loop["panel_open"] and loop["run_started"]
    assert loop["results_after_run"] == ["Result"]
    assert loop["status_after_run"].startswith("Done: 201 frames"), loop["status_after_run"]
    assert loop["frames"] == 201                     # 0.02 s at the engine's 0.1 ms output step
    assert loop["end_time_setting"] == pytest.approx(0.02)
    assert len(loop["run_list"]) == 1 and "mstmm" in loop["run_list"][0]
    # the settings change and the stored run: two undo steps
    assert loop["undo_steps_of_run"] == 2


def test_the_run_is_recorded_as_macro_lines(loop):
    """The settings as property assignments, the run as the synchronous call that repeats it
    (recorded without solving twice)."""
    console = loop["console_after_run"]
    assert "sim.EndTime = '0.02 s'" in console, console
    assert ("MultibodyWB.document.runs.simulate_mechanism(FreeCAD.getDocument('Engine')"
            ".getObject('CrankSlider'))") in console, console


def test_the_integrator_list_has_euler_and_only_adaptive_ones_take_tolerances(loop):
    from MultibodyWB.solver.model import INTEGRATORS
    assert loop["integrators"] == list(INTEGRATORS) and "euler" in loop["integrators"]
    assert loop["tolerances_enabled"] == {"euler": [False, False], "DOP853": [True, True],
                                          "rk4": [False, False]}


def test_one_undo_removes_the_run_and_redo_brings_it_back(loop):
    assert loop["results_after_undo"] == [] and loop["run_list_after_undo"] == 0
    assert loop["end_time_after_undo"] == pytest.approx(0.02)     # the settings step stays
    assert loop["results_after_redo"] == ["Result"] and loop["run_list_after_redo"] == 1


def test_bad_settings_are_refused_naming_the_field_and_change_nothing(loop):
    refused = loop["refused_settings"]
    for key, (started, messages) in refused.items():
        field = key.split("=")[0]
        assert started is False, key
        assert f"field {field}" in messages, (key, messages)
    assert "whole number of steps" in refused["OutputStep=2.5e-5 s"][1]
    assert loop["undo_steps_of_refused"] == 0
    assert loop["settings_after_refused"] == pytest.approx([0.02, 1e-5, 1e-4])
    assert loop["results_after_refused"] == ["Result"]
    assert loop["parsed_times"] == pytest.approx(
        {"0.1 ms": 1e-4, "10 us": 1e-5, "10 \u00b5s": 1e-5, "2 min": 120.0, "1,5 s": 1.5,
         "0.25": 0.25})


def test_run_twice_and_close_during_a_run(loop):
    assert loop["first_of_two_runs"] is True and loop["second_of_two_runs"] is False
    assert loop["close_button_found"]
    closed = loop["closed_during_run"]
    assert closed == {"dialog_open": False, "current": False, "job_state": "cancelled",
                      "timer_active": False, "results": ["Result"]}, closed
    assert loop["close_seconds"] < 3.0


def test_cancel_leaves_the_earlier_results_intact(loop):
    assert loop["cancel_state"] == "cancelled"
    assert loop["cancel_seconds"] < 5.0
    assert loop["results_after_cancel"] == ["Result"]
    assert loop["earlier_results_intact"]
    assert "Cancelled" in loop["status_after_cancel"]


def test_a_running_job_s_progress_is_shown_twice_a_second_not_at_every_poll(loop):
    show_s = 0.5                       # simulate_panel.SHOW_S
    seconds = loop["progress_watch_seconds"]
    assert loop["job_running_after_watch"] and seconds >= 3.0
    running = [t for t in loop["status_texts_while_running"] if "s elapsed" in t]
    assert 2 <= len(running) <= seconds / show_s + 1, running
    updates = loop["progress_updates"]          # per mille: a 50 s run moves it a little
    assert len(updates) <= seconds / show_s + 1, updates


def test_a_model_with_a_problem_is_refused_naming_the_object(loop):
    assert loop["broken_run_started"] is False
    assert "WristPin" in loop["broken_messages"] and "InputMarker" in loop["broken_messages"]
    assert loop["results_after_broken"] == ["Result"]


def test_player_moves_the_solids_to_the_stored_poses(loop):
    assert loop["player_open"]
    for dp, dr in loop["frame_errors"]:
        assert dp < 1e-6 and dr < 1e-9, loop["frame_errors"]
    assert loop["undo_steps_of_play"] == 0
    assert loop["frames_per_second"] > 10
    assert loop["time_after_play"] > 0.0


def test_closing_the_player_restores_the_placements(loop):
    assert loop["restored"]
    assert loop["touched_after_close"] == []


def test_saving_while_playing_saves_the_solids_as_drawn(loop):
    assert loop["at_rest_after_save"]
    assert loop["player_time_after_save"] > 0.0
    assert loop["touched_after_save"] == []
    assert loop["reopened_rest_difference"] < 1e-9         # as written to the file and read


def test_plot_and_gif(loop):
    assert loop["plot_selected"] == ["Piston.z", "MainBearing.Fx"]
    from PIL import Image
    gif = Image.open(loop["gif"])
    assert gif.n_frames == loop["gif_expected_frames"]
    frames = []
    for k in (0, gif.n_frames // 3):
        gif.seek(k)
        frames.append(np.asarray(gif.convert("RGB"), dtype=float))
    assert gif.size == (320, 240)
    assert np.abs(frames[0] - frames[1]).mean() > 0.5      # the engine turned between them


def test_reopened_document_plays_without_solving(loop):
    assert loop["results_after_reopen"] == ["Result"]
    assert loop["jobs_started_on_reopen"] == 0
    assert loop["reopened_equal"]
    for dp, dr in loop["reopen_frame_errors"]:
        assert dp < 1e-6 and dr < 1e-9


def test_deleting_the_run_closing_the_document_or_the_dialog_cleans_up(loop):
    assert loop["deleted_run"] == {"dialog_open": False, "current": False, "at_rest": True}
    assert loop["player_removed_by_freecad"] == {"current": False, "at_rest": True}
    assert loop["panel_removed_by_freecad"] == {"current": False, "job_state": "cancelled",
                                                "timer_active": False, "results": ["Result"]}
    assert loop["closed_doc_with_player"] == {"dialog_open": False, "current": False,
                                              "timer_active": False}
    assert loop["closed_doc_during_run"] == {"dialog_open": False, "current": False,
                                             "job_state": "cancelled", "timer_active": False}


def test_no_python_errors_in_freecad(loop):
    bad = [p for p in loop["_problems"]
           if any(k in p for k in ("Traceback", "ReferenceError", "RuntimeError",
                                   "AttributeError", "TypeError", "NameError"))]
    assert bad == []
