"""The first Simulate after an install, in the FreeCAD GUI under Xvfb
(``tests/gui/check_simulate_compile.py``): FreeCAD's start compiles the kernels in the
background, the Simulate panel fits the default combo view with Run and Cancel in sight, and
while its run waits for the compile it shows an estimate (stage k of n, time left, the bar
moving); a run of another method has its stage compiled beside the whole warm-up; Cancel ends
every compile. Issue 32, items 8 (the Simulate panel) and 9."""

import os
import shutil
from pathlib import Path

import pytest

import freecad_env

pytestmark = pytest.mark.gui

GUI_DIR = Path(__file__).resolve().parent / "gui"


@pytest.fixture(scope="module")
def first_simulate(tmp_path_factory):
    work = tmp_path_factory.mktemp("simulate_compile")
    cache = work / "numba"                       # empty: nothing compiled, no stamp
    saved = {k: os.environ.get(k) for k in ("NUMBA_CACHE_DIR", "MBWB_COMPILE_AT_START")}
    os.environ["NUMBA_CACHE_DIR"] = str(cache)
    os.environ["MBWB_COMPILE_AT_START"] = "1"
    try:
        result = freecad_env.run_freecad_gui(GUI_DIR / "check_simulate_compile.py",
                                             timeout=500, work_dir=work)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    artifacts = os.environ.get("MBWB_ARTIFACTS_DIR")
    if artifacts:
        os.makedirs(artifacts, exist_ok=True)
        for name in ("simulate_panel_default.png", "simulate_panel_compiling.png"):
            path = Path(result["_output_dir"]) / name
            if path.is_file():
                shutil.copy(path, Path(artifacts) / name)
    assert "exception" not in result, result["exception"]
    return result


def test_freecad_start_compiles_the_kernels_before_the_workbench_is_activated(first_simulate):
    r = first_simulate
    assert r["active_workbench"] != "MultibodyWorkbench"
    assert r["at_start_running"], r["at_start_processes"]
    (whole,) = r["at_start_processes"]
    assert whole["only"] is None and "--background" in whole["args"]
    assert "MultibodyWB.solver.run.warmup" in whole["args"]


def test_run_and_cancel_are_in_sight_in_the_default_combo_view(first_simulate):
    r = first_simulate
    assert r["task_view_size"][0] <= 270, r["task_view_size"]      # the default, not grown
    assert r["run_visible"] and r["cancel_visible"], r["task_view_size"]
    # at the top of the panel, right below the dialog's Close button (not below the settings)
    assert r["run_top"] < 120, r["run_top"]
    assert r["run_visible_small"], r["task_view_size_small"]
    assert r["status_visible"] and r["progress_visible"]
    assert not r["horizontal_scroll_bar"]
    assert r["run_visible_compiling"] and r["cancel_visible_compiling"]
    assert r["shot_panel"]["saved"] and r["shot_panel"]["distinct_colors"] > 20


def test_the_panel_shows_an_estimate_while_the_run_waits_for_the_compile(first_simulate):
    r = first_simulate
    assert r["compiling_after_run"]
    assert r["estimate_shown"], r["statuses"]
    text = r["status_compiling"]
    assert "stage 1 of 4" in text and "mstmm with rk4 or euler" in text, text
    assert "left" in text and "Cancel" in text, text
    assert 0 < r["progress_compiling"] < 1000, r["statuses"]
    assert r["progress_text"].startswith("compiling"), r["progress_text"]
    # Cancel ends the compile at once, the bar back at 0
    assert not r["running_after_cancel"]
    assert "Cancelled" in r["status_after_cancel"] and r["progress_after_cancel"] == 0


def test_another_methods_stage_is_compiled_beside_the_whole_warm_up(first_simulate):
    r = first_simulate
    procs = r["processes_newton_euler"]
    assert [p["only"] for p in procs] == [None, "newton-euler"], procs
    assert all(p["running"] for p in procs), procs
    assert r["estimate_newton_euler"], r["statuses_newton_euler"]
    text = r["statuses_newton_euler"][-1][0]
    assert "stage 1 of 1" in text and "Newton-Euler" in text, text
    assert not r["running_after_second_cancel"]
