"""A run that its own check calls untrustworthy, in the FreeCAD GUI under Xvfb (issue 34;
``tests/gui/check_untrusted_run.py``): the pendulum run with rk4 at a Step of 0.05 s does not
blow up but its energy balance does not close. Run, clicked in the Simulate panel, stores it (to
be looked at) and says in red, before anyone plays it, that it is not to be trusted and why; the
stored runs' list shows it in red, and so it does after the document is saved and reopened (the
Result's ``Untrusted``); a run at 0.01 s, typed into the Step field, is a plain success."""

import os
import shutil
from pathlib import Path

import pytest

import freecad_env

pytestmark = pytest.mark.gui

GUI_DIR = Path(__file__).resolve().parent / "gui"
RED = "#cc0000"
WHY = "energy balance: it does not close: the residual is "


@pytest.fixture(scope="module")
def untrusted(tmp_path_factory):
    work = tmp_path_factory.mktemp("untrusted")
    result = freecad_env.run_freecad_gui(GUI_DIR / "check_untrusted_run.py", timeout=1200,
                                         work_dir=work)
    artifacts = os.environ.get("MBWB_ARTIFACTS_DIR")
    if artifacts:
        os.makedirs(artifacts, exist_ok=True)
        for name in ("untrusted_run.png", "untrusted_reopened.png", "untrusted_player.png"):
            path = Path(result["_output_dir"]) / name
            if path.is_file():
                shutil.copy(path, Path(artifacts) / name)
    assert "exception" not in result, result["exception"]
    return result


def test_the_panel_says_in_red_that_the_run_is_not_to_be_trusted(untrusted):
    r = untrusted["untrusted_run"]
    assert r["started"] and r["job_state"] == "done", r["messages"]
    status = r["status"]
    assert status.startswith("Done, but do not trust this run: " + WHY), status
    assert "of the energies' scale" in status and "a smaller Step" in status, status
    assert RED in r["status_style"] and r["status_color"] == RED, r
    last = r["messages"].strip().splitlines()[-1]
    assert last.startswith("Do not trust 'Result': its own check failed: energy balance"), last
    (run,) = r["runs"]
    assert run["text"].startswith("Result (untrusted): ") and run["color"] == RED, run
    assert run["tooltip"].startswith("Do not trust this run: energy balance"), run
    (why,) = r["untrusted"]
    assert why.startswith(WHY) and r["label2"].endswith(", untrusted")
    assert r["shot"]["saved"] and r["shot"]["distinct_colors"] > 10


def test_one_run_makes_its_start_once(untrusted):
    """The Simulate panel starts the run (the solver's stages check and start, where the
    drawing is checked) and the job solves that prepared run: the start is not made twice."""
    assert untrusted["untrusted_run"]["job_state"] == "done"
    assert untrusted["starts_per_run"] == 1


def test_a_trusted_run_is_a_plain_success_and_the_colour_goes(untrusted):
    r = untrusted["trusted_run"]
    assert r["job_state"] == "done", r["messages"]
    assert r["status"].startswith("Done: 41 frames"), r["status"]
    assert r["status_style"] == "" and r["status_color"] != RED
    assert "do not trust" not in r["messages"].lower()
    assert r["untrusted"] == [] and "untrusted" not in r["label2"]
    first, second = r["runs"]
    assert first["color"] == RED and first["text"].startswith("Result (untrusted): ")
    assert second["color"] != RED and "untrusted" not in second["text"], second


def test_a_reopened_document_still_shows_the_untrusted_run(untrusted):
    reopened = untrusted["reopened"]
    assert len(reopened) == 2
    marks = sorted(bool(v["untrusted"]) for v in reopened.values())
    assert marks == [False, True], reopened
    first, second = untrusted["reopened_runs"]
    assert first["color"] == RED and first["text"].startswith("Result (untrusted): "), first
    assert second["color"] != RED, second


def test_the_player_opened_on_the_untrusted_run_says_so(untrusted):
    label = untrusted["player_label"]
    assert label.startswith("<b>Result</b>: mstmm, rk4, 41 frames"), label
    assert "<b>Do not trust this run</b>: " + WHY in label and RED in label, label


def test_a_file_from_before_the_property_gets_it_from_the_warnings(untrusted):
    old = untrusted["old_file"]
    marks = sorted(len(v) for v in old.values())
    assert marks == [0, 1], old
    (why,) = [v[0] for v in old.values() if v]
    assert why.startswith("energy balance: the energy balance does not close"), why
