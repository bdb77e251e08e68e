"""The Study and FEM loads panels in the FreeCAD GUI under Xvfb
(``tests/gui/check_study_fem_panels.py``), at FreeCAD's default combo view width: they fit it
(no control cut off, the study's progress and the FEM loads table in view), the study's
objectives name a hinge by its label (an en-dash in it) or its Name and are documented in the
panel's help, a wrong call is refused before any run naming the objective, and every number is
in the document's units: a rotational stiffness in N·m/rad, objectives with their units, a
constraint's margin in the unit its bound is written in, the FEM moments in N·m, the player's
loads without eV or round-off in mN (issue 32 items 3, 6, 8; issue 33 item 5).

Screenshots ``panel_study_open.png``, ``panel_study_help.png``, ``panel_study_done.png`` and
``panel_fem_preview.png`` (with ``*_content.png``: the panel's whole content) are copied to
``$MBWB_ARTIFACTS_DIR`` when set.
"""

from pathlib import Path

import pytest

import freecad_env

pytestmark = pytest.mark.gui

GUI_DIR = Path(__file__).resolve().parent / "gui"
SHOTS = tuple(f"panel_{k}{s}.png" for k in ("study_open", "study_help", "study_done",
                                             "fem_preview") for s in ("", "_content"))
LABEL = "Link – Base revolute"
THETA0_DEG = 30.0                 # the link pendulum's release angle (examples_fc.link_pendulum)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    work = tmp_path_factory.mktemp("study_fem_panels")
    return freecad_env.run_gui_check(GUI_DIR / "check_study_fem_panels.py", work, timeout=900,
                                     shots=SHOTS)


def _fits(m):
    return (m["content_min_width"] <= m["viewport_width"] and not m["hscroll"]
            and not m["cut"])


def test_the_study_panel_fits_the_default_combo_view(run):
    for key in ("study_open", "study_help", "study_done"):
        m = run[key]
        assert m["viewport_width"] < 300, m           # the default width, not a widened dock
        assert _fits(m), (key, m)


def test_the_studys_progress_is_in_view_and_every_result_column_shows(run):
    assert not run["progress_fold"]["below"], run["progress_fold"]
    assert all(run["table_columns_visible"]), (run["headers"], run["table_columns_visible"])


def test_the_help_documents_names_as_the_plot_dock_shows_them(run):
    assert run["help_button"] and run["help"]["visible"]
    text = run["help"]["text"]
    for words in ("label", "plot dock", "Name", "col(", "unit", "rms", "period"):
        assert words in text, words
    assert "label" in run["objectives_tip"]


def test_a_wrong_call_is_refused_naming_the_objective(run):
    box = " ".join(run["wrong_call"]["box"]) + run["wrong_call"]["messages"]
    assert "Objective 1" in box and "argument 2 (t0, s) is a column" in box, box
    assert "TypeError" not in box and "Traceback" not in box
    assert not run["wrong_call"]["running"] and run["wrong_call"]["table"] == ""


def test_objectives_with_the_label_and_the_name_run_with_units(run):
    assert run["run_box"] == [], run["run_box"]
    assert run["status"].startswith("Done: 3 of 3 variants"), (run["status"], run["messages"])
    headers, tips = run["headers"], run["header_tips"]
    assert any(h.startswith("Pivot.StiffnessRz") and h.endswith("[N·m/rad]") for h in headers), \
        headers
    assert any(t.startswith(f"period({LABEL}.rz)") and t.endswith("[s]") for t in tips), tips
    # the Name read as the label; the margin in the bound's unit
    assert f"margin: max({LABEL}.rz) <= 40 deg [deg]" in tips, tips
    assert not any("kg" in h or "^" in h for h in headers + tips), headers + tips
    cells = run["cells"]
    assert [c[1] for c in cells] == ["1", "2", "3"], cells
    margin_col = next(i for i, t in enumerate(tips) if t.startswith("margin:"))
    for row in cells:
        # released at rest from 30 deg, undamped: the largest angle is the release angle
        assert float(row[margin_col]) == pytest.approx(40.0 - THETA0_DEG, abs=0.05), row
    period_col = next(i for i, t in enumerate(tips) if t.startswith("period("))
    periods = [float(row[period_col]) for row in cells]
    assert periods[0] > periods[1] > periods[2] > 0        # a stiffer spring, a shorter period
    assert run["ylabel"].endswith("[s]") and run["xlabel"].endswith("[N·m/rad]")


def test_the_fem_loads_panel_fits_and_shows_moments_in_newton_metres(run):
    assert _fits(run["fem"]), run["fem"]
    assert not run["fem_table_fold"]["below"], run["fem_table_fold"]
    torques = [r[4] for r in run["fem_rows"] if r[4]]
    assert torques, run["fem_rows"]
    for t in torques:
        assert t.endswith("N·m") and "J" not in t, t
    assert any(r[2].endswith("kN") for r in run["fem_rows"]), run["fem_rows"]


def test_the_players_loads_are_in_newton_metres_and_round_off_reads_0(run):
    t = run["player_texts"]
    assert t["tiny_torque"] == "0 N·m"                       # 1.6e-19 N m: not "1 eV"
    assert t["tiny_torque_of_a_run"] == "0 N·m"              # 1e-13 of the run's largest
    assert t["torque"] == "2.1 mN·m"
    assert t["tooth_force_round_off"] == "0 N"               # not "2e-12 mN"
    assert t["force"] == "12.5 N" and t["length"] == "350 mm"
