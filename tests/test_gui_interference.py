"""The Interference check command and its task panel in the FreeCAD GUI under Xvfb
(``tests/gui/check_interference.py``): a cube drawn 5 mm into the ground cube (500 mm^3) and a
pin drawn 0.1 mm too large for its bore on a revolute hinge; a face of the cube clicked,
Interference check pressed: the panel lists both pairs (the hinged one marked and last) in the
user's units, draws them in the 3D view, a clicked row selects its two bodies, Close removes
the drawing, and the document (objects, placements, undo and redo stacks) is as it was. With
the pin fitting and the cube apart it says "No overlaps". Simulate's Run warns about the
cube's overlap (no hinge or contact holds it) and runs; Check warns about the contact between
the hinged pin and block.

The screenshot ``interference_panel.png`` is copied to ``$MBWB_ARTIFACTS_DIR`` when set.
"""

import math
from pathlib import Path

import pytest

import freecad_env

pytestmark = pytest.mark.gui

GUI_DIR = Path(__file__).resolve().parent / "gui"
SHOTS = ("interference_panel.png",)
RING = math.pi * (5.1 ** 2 - 5 ** 2) * 10          #: the pin's overlap with its bore, mm^3


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    work = tmp_path_factory.mktemp("interference")
    return freecad_env.run_gui_check(GUI_DIR / "check_interference.py", work, timeout=1000,
                                     shots=SHOTS)


def test_the_command_is_on_the_model_toolbar_after_check(run):
    assert run["toolbar"][-2:] == ["MultibodyWB_Check", "MultibodyWB_Interference"]
    assert run["active"] in (True, None)
    assert run["panel"] == "InterferencePanel" and run["dialog"]


def test_the_panel_lists_the_overlaps_with_exact_volumes_in_the_users_units(run):
    assert run["headline"] == "2 overlapping pairs of bodies in 'Clash' (1 hinged)"
    assert run["volumes"][0] == pytest.approx(500.0, rel=1e-6)
    assert run["volumes"][1] == pytest.approx(RING, rel=1e-6)
    assert run["depths"][0] == pytest.approx(5.0, rel=1e-9)
    assert run["depths"][1] == pytest.approx(0.1, rel=0.02)
    assert run["centres"][0] == pytest.approx([17.5, 10, 10], abs=1e-9)
    assert run["rows"] == [
        ["Base body \u2013 Cube body", "500 mm^3", "5 mm", "", "(17.5, 10, 10) mm"],
        ["Bored body \u2013 Pin body", f"{RING:.4g} mm^3", run["rows"][1][2], "hinged",
         "(10, 50, 5) mm"]]
    assert run["rows"][1][2].endswith("\u00b5m")             # about 99 um, in micrometres
    assert "6 pairs of bodies" in run["note"]


def test_the_overlaps_are_drawn_and_a_clicked_row_selects_its_two_bodies(run):
    assert run["overlay_children"] == 2
    assert run["picked_row"] == 0
    assert run["selected"] == ["Base", "Base body", "Cube", "Cube body"]
    assert run["details"] == ("'Base body' and 'Cube body' overlap by 500 mm^3 (depth 5 mm) at "
                              "(17.5, 10, 10) mm")
    shot = run["shot"]
    assert shot["saved"] and shot["distinct_colors"] > 20


def test_closing_removes_the_drawing_and_the_document_is_unchanged(run):
    assert run["closed"] and not run["dialog_after_close"]
    assert run["overlay_after_close"] is None
    assert run["after"] == run["before"]
    assert run["before"]["undo"] == [0, []] and run["before"]["redo"] == 0


def test_no_overlaps_is_said_clearly_and_check_again_finds_a_new_one(run):
    clear = run["clear"]
    assert clear["headline"] == "No overlaps between the 4 bodies of 'Clash'"
    assert clear["rows"] == 0 and not clear["table_visible"]
    assert clear["overlay_children"] == 0 and clear["undo"] == 0
    again = run["again"]
    assert again["headline"] == "1 overlapping pair of bodies in 'Clash'"
    assert [r[:2] for r in again["rows"]] == [["Base body \u2013 Cube body", "500 mm^3"]]
    assert again["overlay_children"] == 1


def test_simulate_warns_about_the_unhinged_overlap_and_runs(run):
    text = run["run_messages"]
    warning = ("Warning: 'Base body' and 'Cube body' overlap by 500 mm^3 (depth 5 mm) at "
               "(17.5, 10, 10) mm as drawn, with no contact between them and no hinge holding "
               "them together")
    assert warning in text, text
    assert text.count("overlap by") == 1               # the pin's is the hinge's
    assert run["run_started"] and run["job_state"] == "done", run["run_status"]
    assert run["run_status"].startswith("Done")
    assert "MultibodyWB: 'Base body' and 'Cube body' overlap by 500 mm^3" in run["report"]


def test_check_warns_about_the_contact_between_the_hinged_bodies(run):
    expected = ("Contact 'Rub', property OutputMarker: 'Pin body' and 'Bored body' are also "
                "joined by the revolute hinge 'Axle'")
    assert f"warning: {expected}" in run["report"]
    assert f"Warning: {expected}" in run["check_details"]
    # the warnings expected here are the only messages of the add-on that are not plain
    others = [p for p in run["_problems"] if "overlap by" not in p and expected not in p]
    assert not others, others
