"""The nonlinear bushing in the FreeCAD GUI under Xvfb (``tests/gui/check_nonlinear_bushing.py``),
driven as a user drives it: two markers clicked, the Nonlinear bushing command pressed; the
force's panel shows the bushing's own parameters (from its registry rows: a title per
parameter, x, y, z fields with their units, tool tips from the rows; no spring-damper field) and
fits the combo view; values typed in (a bare number, another unit, the panel's dot sign) are on
the force at once; OK is one undo step, recorded; undo and redo; the Export command writes them
in SI, the Import command reads them into a new document; a run through the workbench's simulate
path; saved and reopened intact; the bushing's symbol drawn, and the generic one for a type
without its own; a made-up law put into the solver's table only gets its fields in the panel.

The screenshot ``nonlinear_bushing_panel.png`` (and the panel's whole content,
``nonlinear_bushing_panel_content.png``) is copied to ``$MBWB_ARTIFACTS_DIR`` when set.
"""

import math
from pathlib import Path

import pytest

import freecad_env

pytestmark = pytest.mark.gui

GUI_DIR = Path(__file__).resolve().parent / "gui"
SHOTS = ("nonlinear_bushing_panel.png", "nonlinear_bushing_panel_content.png")

#: Field -> the value it holds after the typing, in SI (the check's TYPED).
SI = {"TranslationStiffnessX": 2000.0, "TranslationStiffnessY": 5000.0,
      "TranslationStiffnessZ": 5000.0, "TranslationCubicStiffnessX": 4e8,
      "TranslationDampingY": 0.5, "RotationStiffnessX": 0.5, "RotationStiffnessY": 1.0,
      "RotationStiffnessZ": 180.0 / math.pi, "RotationCubicStiffnessZ": 3.0,
      "RotationDampingZ": 0.001}
TAGS = ("TranslationStiffness", "TranslationCubicStiffness", "TranslationDamping",
        "RotationStiffness", "RotationCubicStiffness", "RotationDamping")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    work = tmp_path_factory.mktemp("bushing")
    return freecad_env.run_gui_check(GUI_DIR / "check_nonlinear_bushing.py", work, timeout=900,
                                     shots=SHOTS)


def _si(tag, axis):
    return SI.get(tag + "XYZ"[axis], 0.0)


def test_the_command_is_on_the_forces_toolbar_with_its_icon(run):
    assert "MultibodyWB_NonlinearBushing" in run["toolbar"]
    assert run["tooltip"].startswith("Nonlinear bushing: bushing between the two markers")
    assert run["icon_null"] is False
    assert run["panel"] == "ForcePanel"
    assert run["force"]["type"] == "nonlinear_bushing"
    assert run["force"]["label"] == "Block \u2013 Frame nonlinear bushing"
    assert run["undo_after_command"] == ["Nonlinear bushing"]


def test_the_panel_shows_the_bushings_parameters_from_its_rows(run):
    opened = run["opened"]
    fields = opened["fields"]
    own = [t + a for t in TAGS for a in "XYZ"]
    for name in own:
        assert fields[name]["shown"], name
        assert fields[name]["label"] == name[-1].lower()
    for name in ("Stiffness", "Damping", "FreeLength", "Magnitude", "Direction",
                 "RotationalStiffness"):
        assert not fields[name]["shown"], name
    assert fields["TranslationStiffnessX"]["text"] == "0 N/m"
    assert fields["TranslationCubicStiffnessY"]["text"] == "0 N/m^3"
    assert fields["RotationCubicStiffnessZ"]["text"] == "0 N*m/rad^3"
    assert fields["RotationDampingX"]["text"] == "0 N*m*s/rad"
    assert "Cubic stiffness k3 of the offset d" in fields["TranslationCubicStiffnessX"]["tip"]
    assert [t[0] for t in opened["titles"]] == [f"<b>{t}</b>" for t in (
        "Translation stiffness", "Translation cubic stiffness", "Translation damping",
        "Rotation stiffness", "Rotation cubic stiffness", "Rotation damping")]
    assert all(visible for _, visible, _, _ in opened["titles"])
    assert opened["titles"][1][2].startswith("Cubic stiffness k3 of the offset d")
    assert opened["titles"][1][2].endswith("[N/m\u00b3]")
    assert opened["titles"][4][3] == ["RotationCubicStiffnessX", "RotationCubicStiffnessY",
                                      "RotationCubicStiffnessZ"]
    assert "Nonlinear bushing" in opened["groups"] and "Spring-damper" not in opened["groups"]
    assert opened["message"] == ""


def test_typed_values_are_on_the_force_at_once_and_shown_with_their_units(run):
    from_check = {"TranslationStiffnessX": "2000 N/m", "TranslationStiffnessY": "5 N/mm",
                  "TranslationCubicStiffnessX": "4e8 N/m^3",
                  "TranslationDampingY": "0.5 N*s/m", "RotationStiffnessX": "0.5 N*m/rad",
                  "RotationStiffnessZ": "1 N*m/deg", "RotationCubicStiffnessZ": "3 N*m/rad^3"}
    for name, text in from_check.items():
        assert run["live"][name] == text, name
        assert run["field_texts"][name] == text, name
    assert run["typed"]["message"] == ""


def test_the_panel_fits_the_combo_view(run):
    fit = run["fit"]
    assert fit["content_min_width"] <= fit["viewport_width"], fit
    assert fit["cut"] == []
    assert run["shot"]["saved"] and run["shot"]["distinct_colors"] > 20


def test_ok_is_one_undo_step_recorded_and_undo_redo_follow(run):
    assert run["ok"] and not run["dialog_after_ok"]
    assert run["undo_after_ok"] == ["Edit force", "Nonlinear bushing"]
    assert run["after_ok"]["TranslationStiffnessY"] == "5 N/mm"
    assert run["after_ok"]["RotationDampingZ"] == "0.001 N*m*s/rad"
    assert run["after_ok"]["RotationDampingX"] == "0 N*m*s/rad"
    assert ">>> force.TranslationStiffnessY = '5 N/mm'" in run["console"]
    assert all(v.startswith("0 ") for v in run["after_undo"].values()), run["after_undo"]
    assert run["after_redo"] == run["after_ok"]


def test_the_symbol_is_drawn_and_a_type_without_one_gets_the_generic_symbol(run):
    assert run["symbol"] is not None and min(run["symbol"]["size"]) > 0
    assert run["materials"]                       # the cube's material
    assert run["generic_symbol"] is not None
    assert "Traceback" not in run["report"]


def test_the_export_writes_the_bushings_elements_in_si(run):
    xml = run["xml"]
    assert xml["type"] == "nonlinear_bushing"
    assert tuple(run["xml_tags"]) == TAGS
    for tag in TAGS:
        values = [float(x) for x in xml["elements"][tag].split(",")]
        assert values == pytest.approx([_si(tag, a) for a in range(3)], rel=1e-12), tag


def test_the_import_makes_the_same_values(run):
    (imported,) = run["imported"]
    from_unit = {"N/m": 1.0, "N/mm": 1e3, "N/m^3": 1.0, "N*s/m": 1.0, "N*m/rad": 1.0,
                 "N*m/deg": 180 / math.pi, "N*m/rad^3": 1.0, "N*m*s/rad": 1.0}
    for name, text in imported.items():
        number, unit = text.split(" ", 1)
        assert float(number) * from_unit[unit] == pytest.approx(
            _si(name[:-1], "XYZ".index(name[-1])), rel=1e-12), name


def test_the_run_oscillates_about_the_anchor(run):
    r = run["run"]
    assert r["rows"] == 201
    assert r["x0"] == pytest.approx(-1e-3, rel=1e-9)
    assert r["max"] == pytest.approx(1e-3, rel=5e-3) and r["min"] == pytest.approx(-1e-3, rel=1e-6)
    assert r["others"] < 1e-9


def test_saved_and_reopened_intact(run):
    reopened = run["reopened"]
    assert reopened["same"], (reopened["values"], reopened["saved"])
    assert reopened["symbol"] is not None
    assert run["reopened_panel"]["RotationStiffnessZ"] == "1 N*m/deg"
    assert run["reopened_panel"]["TranslationStiffnessX"] == "2000 N/m"


def test_a_law_in_the_table_only_gets_its_fields_in_the_panel(run):
    """Nothing in the workbench names the bushing's parameters: a made-up law put into the
    solver's table gets its fields (a number, a vector per axis) from its rows."""
    fake = run["fake"]
    assert "error" not in fake, fake.get("error")
    assert sorted(fake["fields"]) == ["GapStiffnessX", "GapStiffnessY", "GapStiffnessZ",
                                      "Preload"]
    assert fake["fields"]["Preload"]["label"] == "Preload"
    assert fake["fields"]["GapStiffnessZ"] == {"shown": True, "text": "0 N/m^2", "label": "z",
                                               "tip": fake["fields"]["GapStiffnessZ"]["tip"]}
    assert fake["fields"]["GapStiffnessZ"]["tip"].startswith("Stiffness per axis (z component)")
    assert fake["titles"] == ["<b>Gap stiffness</b>"]
    assert fake["groups"] == ["Fake law"]
    assert fake["ok"] and fake["values"] == ["12.5 N", "0 N/m^2", "2 N/mm^2"]
    assert fake["symbol"] is not None
