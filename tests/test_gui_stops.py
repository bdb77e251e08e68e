"""A hinge's end stops in its task panel in the FreeCAD GUI under Xvfb
(``tests/gui/check_stops.py``): "Use limits" ticked shows the stop fields in FreeCAD units with
the 50 Hz default stiffness (Cancel puts it all back); the limits and a stop stiffness typed and
OK clicked are one undo step, in the hinge and in the neutral model in SI.

Screenshots ``stops_panel.png`` (main window, panel open), ``stops_panel_form.png`` (the panel's
form) and ``stops_after_ok.png`` are copied to ``$MBWB_ARTIFACTS_DIR`` when set.
"""

import math
import os
from pathlib import Path

import pytest

import freecad_env

pytestmark = pytest.mark.gui

GUI_DIR = Path(__file__).resolve().parent / "gui"
SHOTS = ("stops_panel.png", "stops_panel_form.png", "stops_after_ok.png")
#: The bar's moment of inertia about the hinge axis (kg m^2): m (L^2 / 3 + a^2 / 12).
J_AXIS = 7850 * 0.1 * 0.01 * 0.01 * (0.1 ** 2 / 3 + 0.01 ** 2 / 12)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    work = tmp_path_factory.mktemp("stops")
    return freecad_env.run_gui_check(GUI_DIR / "check_stops.py", work, timeout=300,
                                     shots=SHOTS)


def test_ticking_the_limits_shows_the_stop_fields_with_the_default(run):
    assert run["panel"] == "HingePanel"
    # limits off: the limits shown but not editable, the stop fields not shown
    for name in ("StopStiffnessRz", "StopRestitutionRz", "StopImpactSpeedRz"):
        assert run["before_tick"][name][0] is False, name
    assert run["before_tick"]["LowerLimitRz"][:2] == [True, False]
    after = run["after_tick"]
    assert after["LowerLimitRz"][:2] == [True, True]
    for name in ("StopStiffnessRz", "StopRestitutionRz", "StopImpactSpeedRz"):
        assert after[name][:2] == [True, True], name
    # the 50 Hz default, in the field and the property: k = J (2 pi 50 Hz)^2
    text = after["StopStiffnessRz"][2]
    assert text == run["stiffness_ticked"] and text.endswith(" N*m/rad")
    assert float(text.split()[0]) == pytest.approx(J_AXIS * (2 * math.pi * 50) ** 2, rel=1e-5)
    assert after["StopRestitutionRz"][2] == "0.5"
    assert after["StopImpactSpeedRz"][2] == "57.29577951 \u00b0/s"   # 1 rad/s
    assert "50 Hz" in run["tooltip"]
    # Cancel: limits off, stiffness back to 0, nothing to undo
    assert run["after_cancel"] == [False, "0 N*m/rad", 0]


def test_limits_and_stop_typed_then_ok_are_in_the_hinge_and_the_model(run):
    assert run["message"] == ""
    assert run["typed"]["StopStiffnessRz"][2] == "40 N*m/rad"    # the number completed
    assert run["open_after_ok"] is False
    a = run["after_ok"]
    assert a["UseLimits"] == "True"
    assert a["StopStiffnessRz"] == "40 N*m/rad" and a["StopRestitutionRz"] == "0.3"
    assert run["undo_after_ok"] == [1, ["Edit hinge"]]
    m = run["model"]
    assert m["lower_limits"] == [pytest.approx(math.radians(-10), rel=1e-12)]
    assert m["upper_limits"] == [pytest.approx(math.radians(45), rel=1e-12)]
    assert m["stop_stiffness"] == [pytest.approx(40.0, rel=1e-12)]
    assert m["stop_restitution"] == [pytest.approx(0.3, rel=1e-12)]
    assert m["stop_impact_speed"] == [pytest.approx(1.0, rel=1e-9)]
    assert run["problems"] == []
    assert run["lines_after"] == run["lines_before"] + 3         # the limits' arc and 2 ticks
    for key in ("screenshot", "screenshot_after"):
        assert run[key]["saved"] and run[key]["distinct_colors"] > 10, key
    assert os.path.isfile(run["screenshot_form"])


def test_nothing_unexpected_is_reported(run):
    assert not run["_problems"], run["_problems"]
