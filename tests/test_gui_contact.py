"""The Contact command and its task panel in the FreeCAD GUI under Xvfb
(``tests/gui/check_contact.py``): a ball above a plate, the plate's top face and the ball's face
selected as clicks select them, Contact pressed; the markers and the contact are one undo step,
the panel opens, values typed in and OK clicked are a second one; the neutral model's contact
has the recognised shapes and the markers on the faces; the ball dropped through the
workbench's run path bounces; a cone's edge is refused with a message and nothing is made.

Screenshots ``contact_panel.png`` (the panel open) and ``contact_after_ok.png`` are copied to
``$MBWB_ARTIFACTS_DIR`` when set.
"""

import math
from pathlib import Path

import pytest

import freecad_env

pytestmark = pytest.mark.gui

GUI_DIR = Path(__file__).resolve().parent / "gui"
SHOTS = ("contact_panel.png", "contact_after_ok.png")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    work = tmp_path_factory.mktemp("contact")
    return freecad_env.run_gui_check(GUI_DIR / "check_contact.py", work, timeout=500,
                                     shots=SHOTS)


def test_the_command_makes_markers_and_contact_in_one_undo_step_and_opens_the_panel(run):
    assert run["toolbar"]
    assert run["made"] == ["Multibody::Contact", "Multibody::Marker", "Multibody::Marker"]
    assert run["undo_after_command"] == [1, ["Contact"]]
    assert run["panel"] == "ContactPanel"
    # the ground's face was clicked first: the ball is the input
    assert run["label"] == "Ball – Plate contact"
    assert run["shapes"] == ["sphere", "plane", pytest.approx(10.0)]
    assert "sphere" in run["pair_text"] and "plane" in run["pair_text"]
    e_star = 1.0 / (2 * (1 - 0.3 ** 2) / 210e9)
    assert run["stiffness"] == pytest.approx(4 / 3 * e_star * math.sqrt(0.01), rel=1e-12)
    assert run["rule"].startswith("Hertz")
    assert run["stiffness_label"] == "Stiffness (N/m^1.5)"
    assert float(run["stiffness_shown"]) == pytest.approx(run["stiffness"], rel=1e-9)
    # the shapes' dimensions they use, and the law
    assert "InputRadius" in run["visible_fields"] and "InputSize" not in run["visible_fields"]
    assert "OutputRadius" not in run["visible_fields"]
    assert {"Stiffness", "Exponent", "Restitution", "ImpactSpeed", "StaticFriction",
            "DynamicFriction", "StictionVelocity"} <= set(run["visible_fields"])


def test_ok_applies_the_typed_values_as_one_more_undo_step(run):
    assert run["live"] == [0.8, pytest.approx(500.0)]
    assert run["ok"] and run["closed"]
    assert run["after_ok"] == [0.8, pytest.approx(500.0)]
    assert run["undo_after_ok"] == [2, ["Edit contact", "Contact"]]
    assert run["problem"] == ""
    for key in ("panel_shot", "shot"):
        assert run[key]["saved"] and run[key]["distinct_colors"] > 20
    # undo: the stored run, the panel's edit, then the contact and both markers
    assert run["undo_names_after_run"] == ["Store simulation results", "Edit contact", "Contact"]
    assert run["undo1"] == [0.5, pytest.approx(1000.0)]
    assert run["after_undo"] == []


def test_the_neutral_model_has_the_recognised_shapes_on_the_picked_faces(run):
    m = run["model"]
    assert m["input"] == ["Ball body", "sphere", pytest.approx(0.01, rel=1e-12)]
    assert m["output"] == ["Plate body", "plane"]
    assert m["law"][1:] == [1.5, 0.8, pytest.approx(0.5)]
    assert m["sphere_centre"] == pytest.approx([0, 0, 0.015], abs=1e-12)
    assert m["plane_point"] == pytest.approx([0, 0, 0], abs=1e-12)
    assert m["plane_normal"] == pytest.approx([0, 0, 1], abs=1e-12)


def test_the_dropped_ball_bounces(run):
    """It rises to the height of the rebound speed the law gives at its impact speed
    (restitution 0.8 at 0.5 m/s as typed), read from the apex: sqrt(rise / drop)."""
    from test_fc_contact import rebound_ratio
    label = run["label"]
    assert {f"{label}.{c}" for c in ("Fx", "Fy", "Fz", "Fn", "Ft", "depth", "slip", "x", "y",
                                      "z")} == \
        set(run["columns"])
    z, fn = run["z"], run["fn"]
    low = z.index(min(z))
    assert 0 < low < len(z) - 1
    assert min(z) < 0.01001 < z[0]
    assert max(fn) > 1.0 and fn[0] == 0.0
    rise = max(z[low:]) - 0.01
    expected = rebound_ratio(0.8, 0.5, math.sqrt(2 * 9.81 * 0.005))
    assert math.sqrt(rise / 0.005) == pytest.approx(expected, abs=5e-3)


def test_an_unsupported_pair_is_refused_naming_the_faces_and_the_pairs(run):
    assert run["refused_made"] == 0 and not run["refused_panel"]
    (text,) = [d for d in run["dialogs"] if "No contact" in d]
    assert "Edge1 of 'Nose' (an edge, not a face)" in text and "'Plate'" in text
    assert "sphere-plane, sphere-sphere, box-plane, cylinder-plane" in text
    assert "No contact between" in run["report"]
    others = [p for p in run["_problems"] if "No contact between" not in p]
    assert not others, others


def test_a_box_solid_clicked_whole_is_a_box_centred_on_its_marker(run):
    box = run["box"]
    assert box["shapes"] == ["box", "plane", pytest.approx([20.0, 30.0, 10.0])]
    assert box["marker_body"] and box["axes_same"] and box["panel"] == "ContactPanel"
    assert box["centre_error"] < 1e-9 and box["centre_error_moved"] < 1e-9
    # its weight on four corners presses them 0.01 mm in at the exponent 1.5
    assert 4 * box["stiffness"] * 1e-5 ** 1.5 == pytest.approx(box["mass"] * 9.81, rel=1e-9)
    assert "static depth" in box["rule"]
