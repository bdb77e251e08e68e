"""The Coupler command and its task panel in the FreeCAD GUI under Xvfb
(``tests/gui/check_coupler.py``): two wheels on revolute hinges picked on their rims, the two
hinges selected as clicks select them, Coupler pressed; the coupler (a gear pair of ratio -r1/r2)
is one undo step, the panel opens, a ratio typed in and OK clicked is a second one; the neutral
model's coupler, and a run through the workbench's run path keeps the typed ratio; a hinge with a
body, and a hinge with a fixed hinge, are refused with a message and nothing is made.

Screenshots ``coupler_panel.png`` (the panel open) and ``coupler_after_ok.png`` are copied to
``$MBWB_ARTIFACTS_DIR`` when set.
"""

from pathlib import Path

import pytest

import freecad_env

pytestmark = pytest.mark.gui

GUI_DIR = Path(__file__).resolve().parent / "gui"
SHOTS = ("coupler_panel.png", "coupler_after_ok.png")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    work = tmp_path_factory.mktemp("coupler")
    return freecad_env.run_gui_check(GUI_DIR / "check_coupler.py", work, timeout=500,
                                     shots=SHOTS)


def test_the_command_makes_the_gear_pair_in_one_undo_step_and_opens_the_panel(run):
    assert run["toolbar"][-2:] == ["MultibodyWB_Contact", "MultibodyWB_Coupler"]
    assert run["active"]
    assert run["made"] == ["Multibody::Coupler"]
    assert run["undo_after_command"] == [1, ["Coupler"]]
    assert run["panel"] == "CouplerPanel"
    assert run["label"] == "Pinion \u2013 Wheel gear"
    first, second = run["hinges"]
    assert run["coupler"] == ["gear", first, "rz", second, "rz", pytest.approx(-0.5, rel=1e-12)]
    assert float(run["ratio_shown"]) == pytest.approx(-0.5, rel=1e-12)
    assert "'PinionAxle' rz" in run["couples_text"] and "'WheelAxle' rz" in run["couples_text"]
    # the gear's field only
    assert {"CouplerType", "FirstCoordinate", "SecondCoordinate", "Ratio"} == \
        set(run["visible_fields"])
    assert "ratio -r1/r2" in run["report"]


def test_ok_applies_the_typed_ratio_as_one_more_undo_step(run):
    assert run["live"] == -0.4
    assert run["ok"] and run["closed"]
    assert run["after_ok"] == -0.4
    assert run["undo_after_ok"] == [2, ["Edit coupler", "Coupler"]]
    assert run["problem"] == "" and run["symbol"] == "ViewProviderCoupler"
    for key in ("panel_shot", "shot"):
        assert run[key]["saved"] and run[key]["distinct_colors"] > 20
    assert run["undo_names_after_run"] == ["Store simulation results", "Edit coupler",
                                           "Coupler"]
    assert run["undo1"] == pytest.approx(-0.5, rel=1e-12)
    assert run["after_undo"] == []


def test_another_type_shows_its_field_ok_refuses_a_mismatch_and_cancel_puts_it_back(run):
    s = run["switched"]
    assert s["type"] == "rack_pinion"
    assert {"CouplerType", "FirstCoordinate", "SecondCoordinate", "PitchRadius"} == \
        set(s["visible"])
    assert "pinion's rotation" in s["meaning"]
    assert s["open_after_ok"]
    assert "Coupler 'Pinion \u2013 Wheel gear', field Second coordinate: a rack_pinion " \
           "coupler's second coordinate is a translation; rz is a rotation" in s["message"]
    assert s["closed"] and s["after_cancel"] == ["gear", -0.4]
    assert s["undo"] == ["Store simulation results", "Edit coupler", "Coupler"]


def test_the_model_and_the_run_keep_the_typed_ratio(run):
    assert run["model"] == [run["label"], "gear", "PinionAxle.rz", "WheelAxle.rz", -0.4]
    assert {f"{run['label']}.{c}" for c in ("T1", "T2", "angle_error")} == set(run["columns"])
    r1, r2 = run["r1"], run["r2"]
    assert max(abs(x) for x in r1) > 0.05
    assert max(abs(b + 0.4 * a) for a, b in zip(r1, r2)) <= 1e-9 * max(abs(x) for x in r1)


def test_the_coupler_and_its_symbol_survive_save_and_reopen(run):
    r = run["reopened"]
    assert r["coupler"] == ["gear", "rz", "rz", pytest.approx(-0.5, rel=1e-12)]
    assert r["view_provider"] == "ViewProviderCoupler" and r["symbol_nodes"] == 1
    assert r["problem"] == ""


def test_a_selection_that_is_not_two_coupleable_hinges_is_refused(run):
    body = run["hinge_and_body"]
    assert not body["active"] and body["made"] == 0 and not body["panel"]
    assert "'Block body' is not a hinge; select two hinges" in body["reason"]
    fixed = run["hinge_and_fixed"]
    assert fixed["active"] and fixed["made"] == 0 and not fixed["panel"]
    (text,) = [d for d in run["dialogs"] if "No coupler" in d]
    assert "'PinionAxle'" in text and "'Weld'" in text and "not a fixed hinge" in text
    assert any("Not available now: 'Block body' is not a hinge" in d for d in run["dialogs"])
    others = [p for p in run["_problems"] if "No coupler between" not in p
              and "Not available now" not in p]
    assert not others, others
