"""Every task panel of the workbench fits FreeCAD's default combo view (issue 32, item 8), and
the smaller things of item 10 a designer met in the hinge panel, driven as a user drives them
(``tests/gui/check_panel_widths.py``: each panel opened through its command with the selection
a click makes, fields typed into, keys pressed, boxes clicked).

The default combo view, measured under Xvfb on a fresh user folder: in FreeCAD 0.20.2 the Combo
View 264 px wide, the task view's viewport 258 px (244 px with its vertical scroll bar); in 1.0.0
the Tasks dock 260 px wide; see ``MultibodyWB/gui/qt.py`` ``TASK_VIEW_WIDTH``. A panel fits when
the dock keeps its width (1.0 widens it to a wider panel), its content's minimum width is no
more than the viewport's width (0.20's task view does not scroll sideways: the rest is cut off),
no button's text is cut and no one-line label is cut.

Screenshots (``panel_width_<panel>.png``, the main window at its default size, and
``panel_width_<panel>_content.png``, the panel's whole content) are copied to
``$MBWB_ARTIFACTS_DIR`` when set.
"""

import math
import os
import shutil
from pathlib import Path

import pytest

import freecad_env

pytestmark = pytest.mark.gui

GUI_DIR = Path(__file__).resolve().parent / "gui"

#: Every panel the check opens (key: what opens it).
PANELS = ("body", "hinge_revolute", "hinge_fixed", "hinge_prismatic", "hinge_cylindrical",
          "hinge_universal", "hinge_spherical", "hinge_planar", "hinge_free", "hinge_bushing",
          "force_point_force", "force_point_torque", "force_spring_damper",
          "force_rotational_spring_damper", "force_nonlinear_bushing", "marker", "contact",
          "coupler", "check", "interference", "simulate", "simulate_after_run", "study", "play",
          "fem_loads")

#: Panels that do not fit yet (key: why), marked so.
NOT_YET = {}


@pytest.fixture(scope="module")
def widths(tmp_path_factory):
    work = tmp_path_factory.mktemp("widths")
    result = freecad_env.run_freecad_gui(GUI_DIR / "check_panel_widths.py", timeout=1800,
                                         work_dir=work)
    artifacts = os.environ.get("MBWB_ARTIFACTS_DIR")
    if artifacts:
        os.makedirs(artifacts, exist_ok=True)
        for path in Path(result["_output_dir"]).glob("panel_width_*.png"):
            shutil.copy(path, Path(artifacts) / path.name)
    assert "exception" not in result, result["exception"]
    return result


def test_the_default_combo_view_is_the_one_measured(widths):
    from_qt = 244       # MultibodyWB.gui.qt.TASK_VIEW_WIDTH (no FreeCAD here to import it)
    # 0.20.2: the Combo View, 264 px; 1.0.0: the Tasks dock, 260 px
    assert widths["dock_width_before"] in (260, 264), widths["dock_width_before"]
    assert widths["dock_width_before"] == widths["dock_width_after"]
    for key in PANELS:
        panel = widths["panels"].get(key, {})
        if panel.get("open"):
            assert panel["viewport_width"] >= from_qt, key


@pytest.mark.parametrize("key", PANELS)
def test_the_panel_fits_the_default_combo_view(widths, key, request):
    if key in NOT_YET:
        request.applymarker(pytest.mark.xfail(reason=NOT_YET[key], strict=False))
    panel = widths["panels"].get(key)
    assert panel is not None and panel["open"], (key, panel)
    # FreeCAD 1.0 widens its Tasks dock to a panel's minimum width: not widened
    assert panel["dock_width"] == widths["dock_width_before"], \
        (key, panel["dock_width"], widths["dock_width_before"], panel["widest"])
    assert panel["content_min_width"] <= panel["viewport_width"], \
        (key, panel["content_min_width"], panel["viewport_width"], panel["widest"])
    assert panel["cut"] == [], (key, panel["cut"])
    assert os.path.isfile(panel["shot"]) and os.path.isfile(panel["shot_content"])


def test_a_free_hinge_shows_its_coordinates_folded(widths):
    free, revolute = widths["panels"]["hinge_free"], widths["panels"]["hinge_revolute"]
    # 54 fields of six coordinates were shown at once; folded, the six coordinates are one
    # line each and the free hinge shows fewer fields than a revolute with its one open
    assert free["visible_fields"] <= revolute["visible_fields"], \
        (free["visible_fields"], revolute["visible_fields"])
    assert free["visible_fields"] < 20


def test_an_incomplete_model_s_problems_are_all_listed_in_the_hinge_panel(widths):
    note, problems = widths["incomplete_note"], widths["incomplete_problems"]
    assert len(problems) >= 2, problems              # coupler, rocker, ball: joined to nothing
    assert note.startswith("Parts are not moved while the model is incomplete")
    for problem in problems[:4]:
        assert problem in note, (problem, note)


def test_enter_in_a_field_applies_it_and_keeps_the_panel_open(widths):
    r = widths["enter"]
    assert r["open_after_enter"], r                   # not taken as OK
    assert r["text_after_enter"] == "3 N*m/rad", r        # the field finished, with its unit
    assert r["stiffness_live"] == "3 N*m/rad", r
    assert r["stiffness_after_cancel"] == "0 N*m/rad", r


def test_unticking_initial_as_drawn_keeps_the_drawn_angle(widths):
    r = widths["as_drawn"]
    assert r["ticked_before"] and not r["as_drawn_live"]
    # the field shows the drawn value and the hinge holds it: the start is still the drawing
    assert r["property_deg"] == pytest.approx(r["drawn_deg"], abs=1e-9), r
    number = float(r["field_text"].replace("\u00b0", "").split()[0])
    assert number == pytest.approx(r["drawn_deg"], abs=1e-6), r
    assert not math.isclose(r["drawn_deg"], 0.0, abs_tol=1.0)      # 0 was shown before
    assert r["moved"] == [] and r["message"] == "", r
    assert r["property_after_cancel_deg"] == 0.0


def test_opening_and_playing_leave_the_document_unmodified(widths):
    r = widths["unmodified"]
    assert r["player_open"], r
    assert not r["after_open"] and not r["after_play_command"], r
    assert not r["while_playing"] and not r["after_step"] and not r["after_close"], r


def test_the_player_shows_the_time_to_the_output_step(widths):
    # output every 0.01 s: a time between frames with three decimals, not six digits
    assert widths["unmodified"]["time_label"].startswith("t = 0.123 s "), widths["unmodified"]
