"""A contact on a solid that is no primitive, in the FreeCAD GUI under Xvfb
(``tests/gui/check_contact_convex.py``): the plate's top face and an egg's face clicked, Contact
pressed; the egg's side is the convex hull of its solid's tessellation, the marker at its centre
of mass, the panel shows the convex shape, the solid and the hull's point count (more points at a
finer tolerance typed in), OK applies; the egg settles on the plate and carries its weight; the
tumbling-solids example built from FreeCAD solids runs with a small energy residual.

Screenshots ``contact_convex_panel.png``, ``tumbling_drawn.png``, ``tumbling_end.png`` and
``tumbling_end_close.png`` are copied to ``$MBWB_ARTIFACTS_DIR`` when set.
"""

import math
from pathlib import Path

import pytest

import freecad_env

pytestmark = pytest.mark.gui

GUI_DIR = Path(__file__).resolve().parent / "gui"
SHOTS = ("contact_convex_panel.png", "tumbling_drawn.png", "tumbling_end.png",
         "tumbling_end_close.png")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    work = tmp_path_factory.mktemp("contact_convex")
    return freecad_env.run_gui_check(GUI_DIR / "check_contact_convex.py", work, timeout=1000,
                                     shots=SHOTS)


def test_the_eggs_face_is_its_solids_convex_hull_on_a_marker_at_its_centre_of_mass(run):
    assert run["made"] == ["Multibody::Contact", "Multibody::Marker", "Multibody::Marker"]
    assert run["undo_after_command"] == [1, ["Contact"]]
    assert run["shapes"] == ["convex", "plane"]
    assert run["marker_at_centre_of_mass"] < 1e-9 and run["egg_not_moved"] == 0.0
    assert run["tolerance"] > 0.0
    # the default tolerance: 1 % of the egg's bounding-box diagonal (2 sqrt(A^2 + 2 B^2))
    assert run["tolerance"] == pytest.approx(0.01 * 2 * math.sqrt(20 ** 2 + 2 * 14 ** 2),
                                             rel=1e-3)
    assert 3 * run["stiffness"] * 1e-5 ** 1.5 == pytest.approx(run["mass"] * 9.81, rel=1e-3)
    assert "3 points" in run["rule"]


def test_the_panel_shows_the_convex_choice_and_its_point_count(run):
    assert run["panel"] == "ContactPanel"
    assert "convex" in run["pair_text"] and "plane" in run["pair_text"]
    assert run["shape_shown"] == "convex" and "convex" in run["shape_choices"]
    assert run["convex_tip"].startswith("Convex hull of the solid")
    assert run["hull_visible"] and not run["output_hull_visible"]
    assert run["hull_text"].startswith("Convex hull of the solid 'Egg': ")
    assert f"{run['hull_points']} points" in run["hull_text"]
    assert "InputTolerance" in run["visible_fields"] and "InputRadius" not in \
        run["visible_fields"]
    # half the tolerance typed in: more points, said at once
    tolerance, text = run["finer"]
    assert tolerance == pytest.approx(run["tolerance"] / 2, rel=1e-2)
    finer = int(text.split(": ")[1].split(" points")[0])
    assert finer > run["hull_points"]
    assert run["panel_shot"]["saved"] and run["panel_shot"]["distinct_colors"] > 20


def test_ok_applies_and_the_export_writes_the_finer_hull(run):
    assert run["ok"] and run["closed"] and run["problem"] == ""
    assert run["after_ok"] == [pytest.approx(run["tolerance"] / 2, rel=1e-2),
                               pytest.approx(10.0)]
    assert run["undo_after_ok"] == [2, ["Edit contact", "Contact"]]
    assert run["model_points"] > run["hull_points"]


def test_the_egg_settles_on_the_plate_and_carries_its_weight(run):
    weight = run["mass"] * 9.81
    for fn in run["fn_end"]:
        assert fn == pytest.approx(weight, rel=1e-3)
    # the hull is inside the egg by at most its tolerance: its centre that much lower at most
    tolerance = run["after_ok"][0] / 1000.0
    assert 0.014 - tolerance - 2e-5 < run["z_end"] < 0.014


def test_the_tumbling_solids_example_from_freecad_solids_runs(run):
    e0, e1 = run["example_energy"]
    # the balance closes to 1e-5 of the energy the contacts took (2e-8 J of 0.054 J on FreeCAD
    # 0.20's numpy and scipy, 1.8e-7 J on FreeCAD 1.0's)
    assert e0 - e1 > 0.01
    assert run["example_residual"] < 1e-5 * (e0 - e1)
    for key in ("example_drawn_shot", "example_end_shot", "example_end_front_shot"):
        assert run[key]["saved"] and run[key]["distinct_colors"] > 20
