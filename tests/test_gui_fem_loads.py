"""The FEM loads command and its task panel in the FreeCAD GUI under Xvfb
(``tests/gui/check_fem_loads.py``): the engine's connecting rod and its run selected, FEM loads
pressed; the peak gas force previewed (table in the user's units, equilibrium, arrows); two
instants added and Create analysis clicked: two FEM analyses in one undo step, solved by
CalculiX with a small support reaction; FEM's result viewer opened on the first. The piston's
loads on markers that are not on its faces are named with the nearest faces, and nothing is
made for it.

Create analysis returns at once: Gmsh and CalculiX run in a QProcess while a timer keeps
ticking, the panel showing the stage; Cancel during meshing kills Gmsh and leaves the document
as it was (objects, undo steps).

The screenshots ``fem_loads_preview.png``, ``fem_loads_running.png`` (during meshing) and
``fem_loads_result.png`` are copied to
``$MBWB_ARTIFACTS_DIR`` when set.
"""

from pathlib import Path

import pytest

import freecad_env

pytestmark = pytest.mark.gui

GUI_DIR = Path(__file__).resolve().parent / "gui"
SHOTS = ("fem_loads_preview.png", "fem_loads_result.png", "fem_loads_running.png")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    work = tmp_path_factory.mktemp("fem_loads")
    return freecad_env.run_gui_check(GUI_DIR / "check_fem_loads.py", work, timeout=600,
                                     shots=SHOTS)


def test_the_command_opens_on_the_selected_run_and_body(run):
    assert "MultibodyWB_FemLoads" in run["toolbar"]
    assert run["panel"] == "FemLoadsPanel"
    assert run["body_choice"] == "Rod"
    assert run["result_choice"].startswith("Result")
    assert "GasForce.magnitude" in run["peaks"] and "|MainBearing.F|" in run["peaks"]


def test_an_instant_by_its_time(run):
    assert run["time_instant"] == pytest.approx(0.012, abs=1e-9)
    assert run["time_headline"].startswith("Rod at t = 0.012 s (time): 4 loads")


def test_preview_lists_the_loads_in_equilibrium_and_draws_them(run):
    assert run["preview_time"] == pytest.approx(0.0175, abs=1e-9)
    assert [r[:2] for r in run["rows"]] == [["BigEnd", "hinge"], ["WristPin", "hinge"],
                                            ["gravity", "gravity"], ["inertia", "inertia"]]
    assert run["rows"][0][2].endswith("kN") and run["rows"][0][5].startswith("Face")
    assert max(run["residual"]) < 1e-9
    assert "Rod at t = 0.0175 s (peak of GasForce.magnitude)" in run["headline"]
    assert run["arrows"] == [2, 2]
    assert run["preview_shot"]["saved"] and run["preview_shot"]["distinct_colors"] > 20
    assert run["undo_after_preview"] == 0           # a preview changes nothing


def test_two_instants_make_two_analyses_in_one_undo_step(run):
    assert len(run["instants"]) == 2
    assert len(run["analyses"]) == 2 and run["analyses"][0] != run["analyses"][1]
    assert run["forces"] == [2, 2]                  # one force constraint per bore face
    assert run["undo_names"][:1] == ["Create FEM analysis"]
    # recorded as a creation and its finish, which a replayed macro runs to the end
    assert "fem_loads.Creation(" in run["console"] and "_fem = _fem_job.finish()" in run["console"]
    assert not run["panel_after_close"]


def test_calculix_solves_and_fem_shows_the_result(run):
    if not run["solver"]:
        pytest.skip("CalculiX or Gmsh not installed")
    for chk in run["checks"]:
        assert chk is not None and chk["relative"] < 0.01 and chk["nodes"] > 1000
    assert run["fem_result_dialog"]
    assert run["result_shot"]["saved"] and run["result_shot"]["distinct_colors"] > 20


def test_loads_that_cannot_be_placed_are_named_with_the_nearest_faces(run):
    assert run["piston_body"] == "Piston"
    note = run["piston_note"]
    assert "Hinge 'Cylinder': its marker" in note and "nearest faces: Face" in note
    assert "cannot be placed on 'PistonBody'" in note
    assert "cannot be placed" in run["piston_create_note"]
    assert len(run["analyses_after_piston"]) == 2


def test_create_shows_its_stage_while_the_gui_stays_free(run):
    """The click returns before Gmsh has run; a 50 ms timer ticks many times while the status
    says Gmsh (and CalculiX) run: the GUI is not blocked by them."""
    if not run["solver"]:
        pytest.skip("CalculiX or Gmsh not installed")
    assert run["running_after_click"]
    texts = [text for _, text in run["ticks"]]
    meshing = [t for t in texts if "meshing with Gmsh" in t]
    solving = [t for t in texts if "solving with CalculiX" in t]
    assert len(meshing) >= 3 and len(solving) >= 3, sorted(set(texts))
    assert texts.index(meshing[0]) < texts.index(solving[0])
    # the document work between them is named too while it is done
    assert any("reading CalculiX's results" in t for t in texts), sorted(set(texts))
    assert any(t.startswith("Analysis 2 of 2: ") for t in texts)
    assert "support reaction" in run["create_note"]


def test_cancel_while_meshing_leaves_the_document_as_it_was(run):
    c = run["cancel"]
    if c["gmsh_pid"] is None:
        pytest.skip("Gmsh not installed")
    assert c["still_meshing"] and c["gmsh_running"], c["status"]
    assert c["cancel_visible"] and not c["create_enabled"]
    assert c["during_objects"] > 0
    assert not c["running_after_cancel"]
    assert not c["gmsh_alive_after"] and c["children_after"] == []
    assert c["same_objects"] and c["undo"][0] == c["undo"][1] and c["undo"][2]
    assert c["note"].startswith("Cancelled while meshing with Gmsh: nothing was made")
    assert not c["cancel_visible_after"] and c["create_enabled_after"]
    assert "_fem_job.cancel()" in c["console"]
    assert c["shot"]["saved"]
