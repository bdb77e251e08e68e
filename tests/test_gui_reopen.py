"""A file saved before the FreeCAD layer was sorted into packages (``data/engine_21bdf10.FCStd``,
saved by the code of commit 21bdf10 with its GUI part) opened in the GUI with today's code
(``tests/gui/check_reopen_old_file.py``): the view providers come back as the concepts' classes and
draw their symbols, nothing has a problem after a recompute, a double-click opens the Body panel,
the Simulate command runs it again (the stored run reproduced) and the player plays the new run."""

import os
import shutil
from pathlib import Path

import pytest

import freecad_env

pytestmark = pytest.mark.gui

GUI_DIR = Path(__file__).resolve().parent / "gui"

CLASSES = {"Body": "body.ViewProviderBody", "Marker": "marker.ViewProviderMarker",
           "Hinge": "hinge.ViewProviderHinge", "Force": "force.ViewProviderForce"}


@pytest.fixture(scope="module")
def reopened(tmp_path_factory):
    work = tmp_path_factory.mktemp("reopen")
    result = freecad_env.run_freecad_gui(GUI_DIR / "check_reopen_old_file.py", timeout=600,
                                         work_dir=work)
    artifacts = os.environ.get("MBWB_ARTIFACTS_DIR")
    shot = Path(result["_output_dir"]) / "reopened.png"
    if artifacts and shot.is_file():
        os.makedirs(artifacts, exist_ok=True)
        shutil.copy(shot, Path(artifacts) / shot.name)
    assert "exception" not in result, result["exception"]
    return result


def test_the_view_providers_come_back_as_the_concepts_classes_and_draw(reopened):
    vps = reopened["view_providers"]
    assert len(vps) == 21
    assert vps["CrankSlider"] == "MultibodyWB.viewproviders.mechanism.ViewProviderMechanism"
    for name, cls in vps.items():
        assert cls.startswith("MultibodyWB.viewproviders."), (name, cls)
    kinds = {cls.split(".", 2)[2] for cls in vps.values()}
    assert set(CLASSES.values()) <= kinds
    # every hinge and the force draw their symbol in the 3D view, every marker builds its axes
    # (the file kept the markers' display mode "Flat Lines", so the view's box leaves them out:
    # so did the code that saved it)
    for name, cls in vps.items():
        if cls.endswith(("ViewProviderHinge", "ViewProviderForce")):
            assert name in reopened["drawn"], name
        if cls.endswith("ViewProviderMarker"):
            assert name in reopened["built"], name


def test_recompute_finds_no_problem(reopened):
    assert reopened["problems"] == {}
    assert reopened["status"].startswith("1 degree of freedom, 1 driven"), reopened["status"]


def test_double_click_opens_the_body_panel(reopened):
    assert reopened["double_click"] is True
    assert reopened["edit_panel"] == "BodyPanel"


def test_simulate_runs_the_reopened_engine_again_and_the_player_plays_it(reopened):
    assert reopened["simulate_panel"] and reopened["run_started"]
    assert reopened["results"] == ["Result", "Result001"]
    assert reopened["frames"] == [11, 11]
    # the stored run again (the in-plane accelerations reach 3e4 SI units; see test_fc_reopen)
    assert reopened["largest_difference"] < 1e-7
    assert reopened["player"] is True
    assert reopened["screenshot"]["saved"] and reopened["screenshot"]["distinct_colors"] > 20
    assert reopened["_problems"] == []
