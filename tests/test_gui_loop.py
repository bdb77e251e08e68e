"""The designer's loop in the FreeCAD GUI under Xvfb, through the commands, on the crank-slider
engine built from solids (``tests/gui/check_simulate_loop.py``): simulate in the task panel,
cancel a long run, refuse a broken model, play and compare the solids with the stored results,
plot, export a GIF, restore the placements, save, reopen and play without solving."""

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


def test_cancel_leaves_the_earlier_results_intact(loop):
    assert loop["cancel_state"] == "cancelled"
    assert loop["cancel_seconds"] < 5.0
    assert loop["results_after_cancel"] == ["Result"]
    assert loop["earlier_results_intact"]
    assert "Cancelled" in loop["status_after_cancel"]


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
