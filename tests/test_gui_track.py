"""The Track command and its task panel in the FreeCAD GUI under Xvfb (``tests/gui/
check_track.py``): two wheels' rims clicked, Track pressed: the panel shows the wrapped path in
the 3D view and the count, tight count, pitch, perimeter and sag in the user's units; the count
set in its field changes the path; Cancel leaves the document as it was and takes the path
away; OK makes one box shoe, links to it, a body per shoe and the pin hinges in one undo step,
recorded in the Python console; Undo removes it all; a flat face picked is refused by name.

The screenshot ``track_panel.png`` is copied to ``$MBWB_ARTIFACTS_DIR`` when set.
"""

from pathlib import Path

import pytest

import freecad_env

pytestmark = pytest.mark.gui

GUI_DIR = Path(__file__).resolve().parent / "gui"
SHOTS = ("track_panel.png",)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    work = tmp_path_factory.mktemp("track")
    return freecad_env.run_gui_check(GUI_DIR / "check_track.py", work, timeout=600,
                                     shots=SHOTS)


def test_the_command_is_on_the_model_toolbar(run):
    assert "MultibodyWB_Track" in run["toolbar"]
    assert run["toolbar"][-2:] == ["MultibodyWB_Check", "MultibodyWB_Interference"]
    assert run["panel"] == "TrackPanel"


def test_the_panel_shows_the_path_and_its_figures_in_the_users_units(run):
    opened = run["opened"]
    assert opened["error"] == ""
    assert opened["pitch"] == "60 mm"
    assert opened["density"] == "7850 kg/m\u00b3"
    assert opened["wheels"] == "Wheels: 'Sprocket' Face1, 'Idler' Face1"
    assert opened["count"] in (opened["tight"], opened["tight"] + 1)
    assert opened["pins"] == opened["count"]
    assert opened["overlay_children"] == 6          # light, colour, style, points, line, dots
    s = run["set"]
    assert s["count"] == s["pins"] == opened["tight"] + 2
    assert s["sag_mm"] > opened["sag_mm"]
    assert s["summary"].startswith(f"{s['count']} shoes (the tight wrap takes {s['tight']}), "
                                   "pitch 60 mm, path ")
    assert s["summary"].endswith(f"sag {s['sag_mm']:.4g} mm")
    shot = run["shot"]
    assert shot["saved"] and shot["distinct_colors"] > 20


def test_cancel_leaves_the_document_as_it_was(run):
    assert run["cancelled"] and not run["dialog_after_cancel"]
    assert run["overlay_after_cancel"] is None
    assert run["after_cancel"] == run["before"]


def test_ok_makes_the_track_in_one_undo_step_and_undo_removes_it(run):
    n = run["ok_count"]
    assert run["ok"] and not run["dialog_after_ok"] and run["overlay_after_ok"] is None
    assert run["made"] == {"links": n - 1, "boxes": 1, "bodies": n,
                           "hinges": ["planar", "revolute"], "hinge_count": n + 1}
    assert run["model"] == {"bodies": n, "hinges": n + 1}        # the pins and the plane
    assert run["shoe_mass"] == [pytest.approx(7850 * 60 * 150 * 20 * 1e-9, rel=1e-9)]
    assert run["undo_after_ok"] == [1, [f"Track of {n} shoes"]]
    assert run["wheels_after_ok"]
    assert "MultibodyWB.document.track.make_track(" in run["console"]
    assert f"count={n}, density=7850.0, joint='revolute')" in run["console"]
    assert run["after_undo"]["objects"] == run["before"]["objects"]


def test_a_flat_face_is_refused_by_name(run):
    assert not run["refused_panel"]
    assert f"'Idler' {run['flat']} is not a cylindrical face" in run["report"]
