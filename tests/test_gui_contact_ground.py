"""A designer's first contact on a ground made with Part Fuse/Cut, run with the defaults, in the
FreeCAD GUI under Xvfb (``tests/gui/check_contact_ground.py``; issue 32, items 1 and 2).

Through the commands with a real selection and the panels' buttons (``click()``): the ground's
top face and the ball picked, Contact pressed, OK clicked, Simulate pressed, Run clicked. Before,
the Contact command raised ``'Part.Compound' object has no attribute 'CenterOfMass'`` and made
nothing; and the default contact with the default 1 ms rk4 step was refused. Now the contact is
made (sphere-plane, Hertz steel), the Simulation switched to what keeps an impact's energy (RK45
at a relative tolerance of 1e-10) in the same undo step and said, and the default run ends
clean: stored, no warning, its energy balance closed below 1e-6 of the energies' scale.

Screenshots ``contact_ground_panel.png`` (the contact's panel with the step note) and
``contact_ground_run.png`` (the Simulate panel after the run) are copied to
``$MBWB_ARTIFACTS_DIR`` when set.
"""

import math
from pathlib import Path

import pytest

import freecad_env

pytestmark = pytest.mark.gui

GUI_DIR = Path(__file__).resolve().parent / "gui"
SHOTS = ("contact_ground_panel.png", "contact_ground_run.png")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    work = tmp_path_factory.mktemp("contact_ground")
    return freecad_env.run_gui_check(GUI_DIR / "check_contact_ground.py", work, timeout=1500,
                                     shots=SHOTS)


def test_the_ground_is_a_boolean_compound(run):
    assert run["ground_shape"] == ["Compound", 1, False]
    assert run["integrator"][:2] == ["mstmm", "rk4"]


def test_contact_on_the_boolean_face_is_made_without_a_traceback_or_a_hull(run):
    assert run["made"] == ["Multibody::Contact", "Multibody::Marker", "Multibody::Marker"]
    assert run["undo_after_command"] == [1, ["Contact"]]
    assert run["shapes"] == ["sphere", "plane", pytest.approx(10.0)]
    assert run["hulls"] == []                      # a plane's solid is not hulled
    assert "Traceback" not in run["report"] and "CenterOfMass" not in run["report"]
    e_star = 1.0 / (2 * (1 - 0.3 ** 2) / 210e9)
    assert run["stiffness"] == pytest.approx(4 / 3 * e_star * math.sqrt(0.01), rel=1e-12)
    assert run["panel"] == "ContactPanel"
    others = [p for p in run["_problems"]]
    assert not others, others


def test_the_simulation_is_fitted_to_the_contact_and_said(run):
    """rk4 at the 1 ms default cannot follow a 52 us contact: the command switches to RK45 at a
    relative tolerance of 1e-10 (rk4 at the 2 us that resolves the period closed the balance
    only to 7.4e-6), keeps the Step the user had (RK45's first step), and says it."""
    assert run["step_before"] == "0.001 s"
    assert run["step_after"] == "0.001 s"
    assert run["integrator_after"] == ["RK45", "1e-10"]
    said = run["report_after_command"]
    assert ("Simulation 'Simulation': Integrator rk4 -> RK45, Relative tolerance 1e-08 -> "
            "1e-10, because the Step 1 ms is too long for the contacts: contact") in said
    assert "adapts its step to each impact" in said and "rk4 would need a Step of 2" in said
    assert run["step_note_visible"]
    assert run["step_note"].startswith(
        "Simulation: RK45 at a relative tolerance of 1e-10: contact"), run["step_note"]
    assert run["panel_shot"]["saved"] and run["panel_shot"]["distinct_colors"] > 20


def test_the_default_run_is_clean(run):
    """Stored, no warning, the energy balance closed below 1e-6 of the energies' scale over the
    1 s default (issue 32's target; rk4 at 2 us: 7.4e-6; the run warns above 1e-3), the ball
    back up."""
    assert run["stored"], run["messages"]
    assert run["status"].startswith("Done"), run["status"]
    assert run["warnings"] == []
    assert "Warning" not in run["messages"] and "trust" not in run["messages"]
    assert run["run_settings"] == ["RK45", 1e-10]
    assert abs(run["balance"]["relative"]) < 1e-6
    assert run["balance"]["dissipated"] > 0.5 * run["balance"]["start"]
    z, fn = run["z"], run["fn"]
    assert z[0] == pytest.approx(0.09, abs=1e-12) and fn[0] == 0.0
    assert max(fn) > 0.0             # an impact lasts some 60 us: the 10 ms rows miss its peak
    # it bounced (rose after the first impact) and came to rest on the plane
    # the rebound: the law's restitution at the impact speed of an 80 mm drop, read from the
    # apex (10 ms rows: within g (5 ms)^2 / 2 of it)
    from test_fc_contact import rebound_ratio
    low = next(i for i in range(1, len(z) - 1) if z[i] < z[i - 1] and z[i] <= z[i + 1])
    rise = max(z[low:low + 10]) - 0.01
    expected = rebound_ratio(0.5, 1.0, math.sqrt(2 * 9.81 * 0.08)) ** 2 * 0.08
    assert rise == pytest.approx(expected, abs=2e-4)
    assert z[-1] == pytest.approx(0.01, abs=1e-4)
    assert run["run_shot"]["saved"]
    print("energy balance", run["balance"], "run", run["run_seconds"], "s")


def test_undo_takes_the_contact_and_the_step_back(run):
    assert run["after_undo"] == {"step": "0.001 s", "integrator": "rk4",
                                 "relative_tolerance": "1e-08", "contacts": []}
