"""What the property editor shows in the FreeCAD GUI under Xvfb, and the player's Plot button
clicked (``tests/gui/check_property_view.py``).

Every quantity of a Hinge (revolute with a torsion spring), a Body, a Force (spring-damper), the
Simulation and the Mechanism is displayed with a unit a designer reads at a glance: no
``mm^2*kg/(s^2*deg)`` spelled from FreeCAD's base units, no ``0.00`` for a value that is not zero.
Screenshots: ``props_hinge.png``, ``props_body.png``, ``props_force.png``,
``props_simulation.png``, ``props_mechanism.png``, ``player_plot.png``.
"""

import re
from pathlib import Path

import pytest

import freecad_env

pytestmark = pytest.mark.gui

GUI_DIR = Path(__file__).resolve().parent / "gui"
SHOTS = ("props_hinge.png", "props_body.png", "props_force.png", "props_simulation.png",
         "props_mechanism.png", "player_plot.png")
#: A unit spelled from FreeCAD's base units: what a designer cannot read.
BASE_UNITS = re.compile(r"mm\^\d\*kg|kg/s\b|/\(s\^\d|\*deg\)")
ZERO = re.compile(r"^[-+]?0[.,]0+(?:\s|$)")


@pytest.fixture(scope="module")
def shown(tmp_path_factory):
    work = tmp_path_factory.mktemp("property_view")
    return freecad_env.run_gui_check(GUI_DIR / "check_property_view.py", work, timeout=500,
                                     shots=SHOTS)


def rows(shown, key):
    entry = shown["shown"][key]
    assert "error" not in entry, entry
    return entry["rows"]


@pytest.mark.parametrize("key", ["hinge", "body", "force", "simulation", "mechanism"])
def test_every_value_is_readable(shown, key):
    texts = rows(shown, key)
    assert texts, key
    unreadable = {k: v for k, v in texts.items() if BASE_UNITS.search(v)}
    assert unreadable == {}, unreadable
    assert Path(shown["shown"][key]["screenshot"]).is_file()


def _value(texts, name):
    """The displayed value of property ``name`` (the editor splits CamelCase names)."""
    for key in (name, re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name)):
        if key in texts:
            return texts[key]
    raise AssertionError(f"{name} not shown: {sorted(texts)}")


def test_hinge_spring_and_damper_read_in_newton_metres_per_radian(shown):
    texts = rows(shown, "hinge")
    assert _value(texts, "StiffnessRz") == "2 N*m/rad"
    assert _value(texts, "DampingRz") == "0.05 N*m*s/rad"


def test_force_spring_damper_reads_in_newtons_per_metre(shown):
    texts = rows(shown, "force")
    assert _value(texts, "Stiffness").replace(",", ".") in ("1 kN/m", "1.00 kN/m", "1000 N/m")
    assert _value(texts, "Damping") == "10 N*s/m"
    assert shown["labels"]["force"] == "Piston \u2013 Ground spring-damper"


def test_simulation_times_and_tolerances_show_their_digits(shown):
    texts = rows(shown, "simulation")
    assert _value(texts, "Step") == "1e-5 s"           # as typed
    assert _value(texts, "EndTime") == "0.08 s"
    for name in ("RelativeTolerance", "AbsoluteTolerance"):
        value = _value(texts, name)
        assert not ZERO.match(value) and float(value) > 0.0, (name, value)


def test_body_mass_properties_show_no_zero_for_a_value(shown):
    texts = rows(shown, "body")
    for name in ("Ixx", "Iyy", "Izz", "Mass", "Density"):
        value = _value(texts, name)
        assert not ZERO.match(value), (name, value)
    assert _value(texts, "InitialVelocity") == "0, 0, 0 mm/s"
    assert _value(rows(shown, "mechanism"), "Gravity") == "0, 0, -9810 mm/s^2"
    assert _value(texts, "InitialAngularVelocity") == "0, 0, 0 deg/s"


def test_the_players_plot_button_opens_the_plot_dock(shown):
    assert shown["player_open"] and shown["plot_button"]
    assert shown["plot_click_errors"] == [], shown["plot_click_errors"]
    assert shown["plot_panel"] and shown["plot_dock_visible"]
    assert shown["plot_curves"] >= 1 and shown["plot_columns"]
    report = shown.get("report_view", "")
    assert "Traceback" not in report and "TypeError" not in report, report[-2000:]
    assert shown["_problems"] == [], "\n\n".join(shown["_problems"])
