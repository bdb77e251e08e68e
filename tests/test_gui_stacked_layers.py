"""Stacked links hinged on their bores, in the FreeCAD GUI under Xvfb
(``tests/gui/check_stacked_layers.py``, issue 32.4 and 32.5): the four-bar built through the
commands with the selection a click makes; drag to check and a typed start (the hinge panel's
field, OK) keep every part on its layer to 1e-9 mm, and OK changes only what was typed (and the
parts it turns); the interference check does not excuse a layer pushed into the next as
"hinged"; the FEM loads of the coupler balance to 1e-6.

The screenshots are copied to ``$MBWB_ARTIFACTS_DIR`` when set.
"""

from pathlib import Path

import pytest

import freecad_env

pytestmark = pytest.mark.gui

GUI_DIR = Path(__file__).resolve().parent / "gui"
SHOTS = ("stacked_drag.png", "stacked_typed_start.png", "stacked_interference.png",
         "stacked_fem_loads.png")
LAYER_TOL_MM = 1e-9


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    work = tmp_path_factory.mktemp("stacked_layers")
    result = freecad_env.run_gui_check(GUI_DIR / "check_stacked_layers.py", work, timeout=600,
                                       shots=SHOTS)
    errors = {k: v for k, v in result.items() if k.endswith("_error")}
    assert not errors, errors
    return result


def test_built_on_the_bores_through_the_commands(run):
    assert all(run["hinges_made"].values()), run["hinges_made"]
    for name, gap in run["marker_axial_gaps_mm"].items():
        assert gap == pytest.approx(10.0, abs=1e-6), name
    assert run["report_errors"] == []


def test_drag_to_check_keeps_every_part_on_its_layer(run):
    assert run["drag_panel"] and run["drag_free"] == [[run["hinge_labels"]["CrankPivot"], "rz"]]
    assert run["drag_turned_deg"] == pytest.approx(30.0, abs=1e-9)
    assert run["drag_crank_turn_deg"] == pytest.approx(30.0, abs=1e-6)
    assert run["drag_off_layer_mm"] < LAYER_TOL_MM, (run["drag_off_layer_who"],
                                                    run["drag_off_layer_mm"])
    assert run["drag_tilt"] < 1e-12
    assert run["drag_restored"] == []


def test_a_typed_start_keeps_the_layers_and_ok_changes_only_what_was_typed(run):
    assert run["typed_box_found"] and run["typed_ok"]
    assert run["typed_initial_deg"] == pytest.approx(130.0, abs=1e-9)
    assert run["typed_preview_off_layer_mm"] < LAYER_TOL_MM
    assert run["typed_off_layer_mm"] < LAYER_TOL_MM, (run["typed_off_layer_who"],
                                                     run["typed_off_layer_mm"])
    assert run["typed_tilt"] < 1e-12 and run["typed_preview_tilt"] < 1e-12
    # the crank turned by what was typed, about its pin; the loop's parts followed in the plane
    assert run["typed_crank_turn_deg"] == pytest.approx(130.0 - run["typed_drawn_deg"],
                                                        abs=1e-6)
    assert run["typed_moved_solids"] == ["Coupler", "Crank", "Rocker"]
    # no property but the two the user set (placements aside, measured above)
    changed = {k.split(".", 1)[1] for k in run["typed_changed_properties"]}
    assert changed <= {"InitialRz", "InitialAsDrawn"}, run["typed_changed_properties"]
    assert run["typed_undone"] == []


def test_a_layer_overlap_is_not_excused_as_hinged(run):
    assert run["interference_panel"]
    rows = run["interference_rows"]
    assert len(rows) == 2, rows
    assert all(r[3] == "hinged, not at the pin" for r in rows), rows
    assert all(r[2] == "10 mm" for r in rows), rows
    assert run["interference_red"]
    assert "hinged)" not in run["interference_headline"]


def test_the_fem_loads_of_the_face_picked_coupler_balance(run):
    assert run["fem_motor_ok"] and run["fem_motor_deg_s"] == pytest.approx(360.0)
    assert run["fem_panel"] and run["fem_body"] == "Coupler body"
    assert run["fem_time"] == pytest.approx(0.15, abs=1e-9)
    assert max(run["fem_residual"]) < 1e-6, run["fem_residual"]
    assert max(run["fem_drawn_residual"]) < 1e-6
    assert "The loads sum to" not in run["fem_note"]       # no imbalance note
    labels = run["hinge_labels"]
    assert [r[0] for r in run["fem_rows"]][:2] == [labels["CrankPin"], labels["RockerPin"]]
