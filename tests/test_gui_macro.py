"""A recorded macro (``MultibodyWB.document.factory.make_...``), run in a fresh GUI session
before the Multibody workbench is ever activated (``tests/gui/check_macro_before_activation.py``):
its objects get the Multibody view providers and draw their symbols (the view providers register
with the factory when FreeCAD starts, not only when the workbench is activated)."""

import pytest

import freecad_env

from pathlib import Path

pytestmark = pytest.mark.gui

GUI_DIR = Path(__file__).resolve().parent / "gui"


@pytest.fixture(scope="module")
def macro(tmp_path_factory):
    result = freecad_env.run_freecad_gui(GUI_DIR / "check_macro_before_activation.py",
                                         timeout=300, work_dir=tmp_path_factory.mktemp("macro"))
    assert "exception" not in result, result["exception"]
    return result


def test_the_workbench_was_not_activated(macro):
    assert "Multibody" not in macro["workbench_before"]
    assert "Multibody" not in macro["workbench_after"]


def test_every_object_of_the_old_macro_has_its_view_provider(macro):
    vps = macro["view_providers"]
    assert len(vps) >= 4, vps                      # mechanism, simulation, two bodies
    assert all(v is not None and v.startswith("MultibodyWB.viewproviders.") for v in vps.values()), vps


def test_the_moving_body_draws_its_symbol(macro):
    """(The ground without markers has nothing to draw: its symbol is the lines to its
    markers.)"""
    bodies = [n for n, v in macro["view_providers"].items() if v and v.endswith("ViewProviderBody")]
    assert sorted(bodies) == ["ArmBody", "Ground"]
    assert "ArmBody" in macro["drawn"], macro["drawn"]


def test_no_problem_reported(macro):
    assert macro["_problems"] == []
