"""The Simulate panel's Equation button on a closed loop (the crank-slider engine built from
solids), in the FreeCAD GUI under Xvfb (``tests/gui/check_equation.py``)."""

from pathlib import Path

import pytest

import freecad_env

pytestmark = pytest.mark.gui

GUI_DIR = Path(__file__).resolve().parent / "gui"


def test_equation_button_shows_the_loop_equation():
    result = freecad_env.run_freecad_gui(GUI_DIR / "check_equation.py", timeout=400)
    assert "exception" not in result, result["exception"]
    assert not result["_problems"], result["_problems"]
    assert result["buttons"] == 1 and result["visible"]
    assert result["title"] == "Multibody: overall transfer equation of 'CrankSlider'"
    text = result["text"]
    assert "No transfer equation" not in text
    assert "1 BigEnd (spherical), cut: loop Rod - WristPin - Piston" in text
    assert "+N lam on body 4 Rod, input side" in text and "-N lam on body 2 Crank" in text
    assert "supplementary equations of cut 1 BigEnd" in text
    assert "order 27 = 6 x (2 tips + 2 roots) + 3 cut-hinge loads" in text
    assert "Cut hinges' loads: wrench on the input body at p" in text
