"""The mechanism's status while it is built, greyed-out commands that say why, and the
Mechanism's task panel (status, drag to check) in the FreeCAD GUI under Xvfb.

``tests/gui/check_mechanism_panel.py`` builds a crank-rocker four-bar step by step through the
workbench's commands with the selection set as a click sets it, then double-clicks the Mechanism
in the tree, moves the free-DOF slider through its signal and presses Cancel (then opens the
panel again with the Check command and presses OK). Screenshots: ``mechanism_panel.png`` (panel
and 3D view) and ``mechanism_panel_only.png``; copied to ``$MBWB_ARTIFACTS_DIR`` when it is set.
"""

import os
import shutil
from pathlib import Path

import pytest

import freecad_env

GUI_DIR = Path(__file__).resolve().parent / "gui"

pytestmark = pytest.mark.gui


@pytest.fixture(scope="module")
def panel_run(tmp_path_factory):
    work = tmp_path_factory.mktemp("mechanism_panel")
    result = freecad_env.run_freecad_gui(GUI_DIR / "check_mechanism_panel.py", timeout=400,
                                         work_dir=work)
    artifacts = os.environ.get("MBWB_ARTIFACTS_DIR")
    if artifacts:
        os.makedirs(artifacts, exist_ok=True)
        for name in ("mechanism_panel.png", "mechanism_panel_only.png",
                     "mechanism_panel_flagged.png", "mechanism_panel_engine.png"):
            path = Path(result["_output_dir"]) / name
            if path.is_file():
                shutil.copy(path, Path(artifacts) / name)
    return result


def test_building_prints_no_error_and_ends_at_one_degree_of_freedom(panel_run):
    r = panel_run
    assert "exception" not in r, r["exception"]
    # no Err/Wrn about Multibody, but the one warning of the renumbered edge at the end
    unexpected = [p for p in r["_problems"] if "is not the edge that was picked" not in p]
    assert unexpected == [], "\n\n".join(unexpected)
    steps = r["steps"]
    assert [s["step"] for s in steps] == ["ground", "crank body", "coupler body", "rocker body",
                                          "hinge A", "hinge B", "hinge C", "hinge D"]
    for s in steps:
        assert s["multibody_report_lines"] == [], s        # nothing printed while building
    headlines = [s["status"].split("\n")[0] for s in steps]
    assert headlines[0].startswith("Only the ground so far")
    assert headlines[1] == "No hinge yet: 1 body to connect"
    assert headlines[3] == "No hinge yet: 3 bodies to connect"
    assert headlines[4] == "2 problems before a run; so far 1 degree of freedom"
    assert headlines[6] == "3 degrees of freedom"           # an open chain before the loop
    assert headlines[7] == "1 degree of freedom"
    assert "is connected to nothing" in steps[3]["status"]   # the status says what is missing
    status = r["status"].split("\n")
    assert status[0] == "1 degree of freedom"
    assert "Degrees of freedom: 1 (Grübler–Kutzbach count -2; the difference: 3 redundant " \
           "constraints)" in status
    redundant = [line for line in status if line.startswith("Redundant: ")]
    assert len(redundant) == 3 and all("(global " in line for line in redundant), redundant
    assert r["drawn_residuals"]["rotation_rad"] < 1e-9
    assert r["drawn_residuals"]["translation_mm"] < 1e-9
    # the tree: a green badge with the degrees of freedom, the status as tool tip
    assert r["mechanism_icon"] == "Mechanism-dof1.png"
    assert r["tree_tooltip"].startswith("Mechanism: 1 degree of freedom")
    assert r["multibody_report_lines"] == []


def test_greyed_out_commands_say_why(panel_run):
    g = panel_run["greyed"]
    sketch = g["body_on_sketch"]
    assert not sketch["active"] and sketch["actions"] >= 1
    assert sketch["tool_tip"].endswith(
        "Not available now: 'Sketch' is a sketch, not a solid: pad or extrude it first.")
    assert "not available now: 'Sketch' is a sketch" in sketch["status_tip"]
    one = g["hinge_on_one_body"]
    assert not one["active"]
    assert "Not available now: two ends are on the same body" in one["tool_tip"]
    taken = g["body_on_solid"]
    assert not taken["active"] and "'Plate' is already a solid of body 'Ground'" \
        in taken["tool_tip"]
    ok = g["hinge_on_two_bodies"]
    assert ok["active"] and "Not available" not in ok["tool_tip"]     # the reason goes again


def test_double_click_opens_the_panel_and_the_slider_drags_the_loop(panel_run):
    r = panel_run
    assert r["open_path"].startswith("mouse double-click on the tree item")
    assert r["panel_open"] and r["in_edit"] == "Mechanism"
    assert r["headline"] == "1 degree of freedom"
    assert "Grübler–Kutzbach count -2" in r["details"]
    crank = r["crank_hinge_label"]                          # the crank, at the ground
    assert crank.endswith("Ground revolute")
    assert r["free"] == [[crank, "rz"]]
    assert r["sliders"] == ["Revolute.rz"]                   # by the hinge's internal name
    assert r["slider_start"] == pytest.approx(90.0, abs=1e-9)    # drawn at 90 deg
    assert r["value_after"] == pytest.approx(120.0, abs=1e-9)
    assert r["value_label"] == "120.00 °"
    assert r["message"] == ""
    assert r["preview_residual"] < 1e-10
    # the moved drawing satisfies every hinge (the solver's measure on the exported document)
    assert r["moved_residuals"]["rotation_rad"] < 1e-9
    assert r["moved_residuals"]["translation_mm"] < 1e-9
    turns = r["turns"]
    assert turns["CrankSolid"]["angle_deg"] == pytest.approx(30.0, abs=1e-9)
    assert turns["CrankSolid"]["axis"] == pytest.approx([0.0, 0.0, 1.0], abs=1e-9)
    assert turns["CrankSolid"]["shift_mm"] < 1e-9             # about its pivot at the origin
    assert turns["CouplerSolid"]["shift_mm"] > 1.0 and turns["RockerSolid"]["angle_deg"] > 1.0
    assert r["screenshot"]["saved"] and r["screenshot"]["distinct_colors"] > 20


def test_closing_the_panel_puts_the_drawing_back_unchanged(panel_run):
    r = panel_run
    assert r["modified_before_panel"] is False
    if r["freecad_version"][:2] == ["0", "20"]:
        # 0.20 cannot clear the mark: the preview's moves do not set it (NoModify)
        assert r["modified_while_dragging"] is False
    assert r["saved_drawn"] == [] and r["value_after_save"] == pytest.approx(90.0, abs=1e-9)
    assert r["cancel_found"] and r["closed"] and not r["in_edit_after"]
    assert r["restored_exactly"] == []
    assert r["undo_count_same"] and r["touched_after"] == []
    assert r["modified_after_cancel"] is False
    assert r["check_command_opens"] and r["closed_after_ok"]
    assert r["restored_after_ok"] == []
    # asked for explicitly, the check says its result in the report view (a message: no problem)
    said = [line[line.index("MultibodyWB:"):] for line in r["check_report_lines"]]
    assert said == ["MultibodyWB: check of mechanism 'Mechanism': 1 degree of freedom"], said


def test_a_renumbered_edge_flags_its_marker_and_the_mechanism(panel_run):
    """The plate gets a lightening hole: OCC numbers its edges anew, the edge the ground-side
    marker of hinge D was picked on is now the new hole's: flagged, never moved silently."""
    r = panel_run["renumbered"]
    picked = panel_run["renumber_marker"]["picked"]
    edge = picked.split(".", 1)[1]
    assert f"'{edge}' of 'Plate' is not the edge that was picked: its centre moved 75" \
        in r["problem"], r["problem"]
    assert r["icon"].endswith("-problem.png")             # the marker's badge in the tree
    assert r["mechanism_icon"] == "Mechanism-problem.png"
    assert r["status"].startswith("1 problem before a run")
    said = [line for line in r["report"] if "is not the edge that was picked" in line]
    assert len(said) == 1, r["report"]                     # said once, as a warning
    assert "is not the edge that was picked" in r["export"]      # the export refuses


def test_the_panel_accepts_a_changed_pick_in_one_undo_step(panel_run):
    a = panel_run["accept"]
    assert a["opened"] and a["button_visible"]
    marker = panel_run["renumber_marker"]["label"]
    assert f"'{marker}'" in a["button_tip"]
    assert a["headline_before"].startswith("1 problem before a run")
    assert a["sliders_before"] == 0                     # nothing to drag while it is flagged
    assert a["problem_after"] == ""
    assert a["headline_after"] == "1 degree of freedom"
    assert a["sliders_after"] == 1 and a["button_visible_after"] is False
    assert a["undo_steps"] == 1 and a["undo_name"] == ["Accept changed picks"]
    assert "is not the edge that was picked" in a["problem_after_undo"]
    assert any(line.startswith(">>> MultibodyWB.objects.marker.accept_pick(") for line in
               a["console"]), a["console"]


def test_a_driven_crank_is_dragged_by_its_own_slider(panel_run):
    d = panel_run["drive"]
    assert d["opened"] and d["headline"] == "1 degree of freedom, 1 driven"
    assert d["rows"] == [["MainBearing.rz", "MainBearing  rz  (driven)"]]
    assert d["value"] == "90.00 °"                        # drawn at 0 (the driver's start)
    assert abs(d["piston_dz"]) > 1.0                        # the piston slid
    assert d["piston_dxy"] == pytest.approx([0.0, 0.0], abs=1e-6)
    assert d["residuals"]["rotation_rad"] < 1e-9 and d["residuals"]["translation_mm"] < 1e-9
    assert d["restored"] == []
