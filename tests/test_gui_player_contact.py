"""The player's contact-force and gear tooth-force arrows, and the plot dock listing a contact's and
a coupler's columns, in the FreeCAD GUI under Xvfb (``tests/gui/check_player_contact.py``): a
ball dropped on a plate and a driven gear pair in one mechanism, played back through the player's
widgets.

The arrows' Coin nodes are compared with the run's columns: the contact arrow starts at
``<Contact>.x y z``, points along ``<Contact>.Fx Fy Fz``, is |F| times the legend's scale long,
and is off while ``Fn`` is 0 (the ball in flight); the tooth arrow sits at the pitch point
(30 mm from the pinion's axis towards the wheel's, for radii 30 and 60 mm) and its moments about
both axes are the coupler's two loads ``T1`` and ``T2``.

The screenshot ``player_contact.png`` is copied to ``$MBWB_ARTIFACTS_DIR`` when set.
"""

import math
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

import freecad_env

pytestmark = pytest.mark.gui

GUI_DIR = Path(__file__).resolve().parent / "gui"
CONTACT, GEAR = "Drop", "Mesh"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    work = tmp_path_factory.mktemp("player_contact")
    result = freecad_env.run_freecad_gui(GUI_DIR / "check_player_contact.py", timeout=600,
                                         work_dir=work)
    artifacts = os.environ.get("MBWB_ARTIFACTS_DIR")
    path = Path(result["_output_dir"]) / "player_contact.png"
    if artifacts and path.is_file():
        os.makedirs(artifacts, exist_ok=True)
        shutil.copy(path, Path(artifacts) / path.name)
    assert "exception" not in result, result["exception"]
    return result


def legend_mm_per_newton(text):
    """mm of arrow per N from the legend "Arrow scale: 12.5 mm = 20 N" (Standard schema)."""
    m = re.fullmatch(r"Arrow scale: ([-\d.e+]+) (mm|cm|m) = ([-\d.e+]+) (mN|N|kN)", text)
    assert m, text
    length = float(m[1]) * {"mm": 1.0, "cm": 10.0, "m": 1000.0}[m[2]]
    force = float(m[3]) * {"mN": 1e-3, "N": 1.0, "kN": 1e3}[m[4]]
    return length / force, force


def test_the_run_has_the_contact_and_coupler_columns(run):
    assert {f"{CONTACT}.{q}" for q in ("Fx", "Fy", "Fz", "x", "y", "z", "Fn", "depth")} <= \
        set(run["columns"])
    assert {f"{GEAR}.T1", f"{GEAR}.T2"} <= set(run["columns"])
    fn = run["fn"]
    assert fn[0] == 0.0 and max(fn) > 1.0


def test_the_contact_forces_box_shows_the_arrows_and_the_legend(run):
    text, tip, enabled, checked = run["checkbox"]
    assert text == "Contact forces" and enabled and not checked
    assert "contact" in tip and "tooth" in tip and "legend" in tip
    assert run["legend_before"][0] is False
    assert run["contact_labels"] == [CONTACT, GEAR]
    assert run["checked"]
    shown, text = run["legend"]
    assert shown
    mm_per_n, force = legend_mm_per_newton(text)
    # one scale for contact and tooth arrows: the longest force of the run is a quarter of the
    # model's size; the legend's force a round number at most that
    peak = max(run["peak_contact"], run["peak_tooth"])
    assert run["scale"] == pytest.approx(0.25 * run["model_size"] / peak, rel=1e-12)
    assert mm_per_n == pytest.approx(run["scale"], rel=2e-3)
    assert force == pytest.approx(run["legend_force"], rel=1e-12)
    assert peak / 10 < force <= peak
    assert float(f"{force:.0e}") == pytest.approx(force) and str(f"{force:.0e}")[0] in "125"


def test_the_contact_arrow_is_off_in_flight(run):
    frames = run["frames"]
    for key in ("start", "flight"):
        assert frames[key]["fn"] == 0.0 and frames[key]["depth"] < 0.0
        assert not frames[key]["arrow"]["shown"], key
        assert frames[key]["arrow"]["in_graph"]


def test_the_contact_arrow_is_the_force_at_the_contact_point(run):
    frames = run["frames"]
    lengths = {}
    for key in ("peak", "light"):
        f = frames[key]
        a = f["arrow"]
        assert f["fn"] > 0.0 and a["shown"] and a["in_graph"], key
        force = np.array(f["force"])
        magnitude = np.linalg.norm(force)
        assert a["point"] == pytest.approx([1000.0 * x for x in f["contact_point"]], abs=1e-3)
        assert a["direction"] == pytest.approx(force / magnitude, abs=1e-5)
        assert a["length"] == pytest.approx(magnitude * run["scale"], rel=1e-5)
        assert a["radius"] == pytest.approx(0.006 * run["model_size"], rel=1e-5)
        lengths[key] = (a["length"], magnitude)
        # the ball on the plate: under its centre, on the plate's top, pushed up
        assert abs(a["point"][0]) < 0.01 and abs(a["point"][1]) < 0.01
        assert -1000.0 * f["depth"] <= a["point"][2] <= 0.0     # within the penetration
        assert a["direction"][2] == pytest.approx(1.0, abs=1e-6)
    (l1, f1), (l2, f2) = lengths["peak"], lengths["light"]
    assert l2 / l1 == pytest.approx(f2 / f1, rel=1e-5) and f2 < 0.3 * f1
    # the peak arrow is the longest force of the run (the impact): a quarter of the model
    assert run["peak_contact"] > run["peak_tooth"]
    assert l1 == pytest.approx(0.25 * run["model_size"], rel=1e-5)


def test_the_arrow_follows_the_forward_button_and_playback(run):
    fwd = run["forward"]
    assert fwd["frame"] == run["frames"]["peak"]["frame"] + 1
    force = np.array(fwd["force"])
    assert fwd["arrow"]["shown"]
    assert fwd["arrow"]["length"] == pytest.approx(np.linalg.norm(force) * run["scale"], rel=1e-5)
    played = run["played"]
    assert not played["playing"] and played["t"] > played["t_before"]
    a = played["arrow"]
    # between output times: the forces and points interpolated linearly, as the solids
    if played["fn"] > 0.0:
        force = np.array(played["force"])
        assert a["shown"]
        assert a["length"] == pytest.approx(np.linalg.norm(force) * run["scale"], rel=1e-5)
        assert a["direction"] == pytest.approx(force / np.linalg.norm(force), abs=1e-5)
        assert a["point"] == pytest.approx(played["point"], abs=1e-3)
    else:
        assert not a["shown"]


def test_the_tooth_arrow_is_at_the_pitch_point_and_gives_both_coupler_loads(run):
    for key in ("start", "peak", "light", "flight"):
        f = run["frames"][key]
        g = f["gear"]
        o1, o2 = np.array(f["axes"][0]), np.array(f["axes"][1])
        z1, z2 = np.array(f["axis_z"][0]), np.array(f["axis_z"][1])
        T1, T2 = f["T"]
        assert g["shown"] and abs(T1) > 1e-3, key
        u = (o2 - o1) / np.linalg.norm(o2 - o1)
        assert np.linalg.norm(o2 - o1) == pytest.approx(90.0, abs=1e-6)
        assert g["point"] == pytest.approx(o1 + 30.0 * u, abs=1e-3)
        force = np.array(g["direction"]) * g["length"] / run["scale"]
        assert abs(np.dot(force, u)) < 1e-5 * np.linalg.norm(force)
        arm1 = (np.array(g["point"]) - o1) / 1000.0
        arm2 = (np.array(g["point"]) - o2) / 1000.0
        assert np.dot(np.cross(arm1, force), z1) == pytest.approx(T1, rel=1e-4)
        # the wheel gets the opposite force: its moment is the solver's T2, a separate column
        assert np.dot(np.cross(arm2, -force), z2) == pytest.approx(T2, rel=1e-4)
        assert T2 == pytest.approx(2.0 * T1, rel=1e-6)       # -T1 / ratio
        # equal thickness and density: J2 = 16 J1, (J1 + J2 / 4) a1 = drive, T1 = J1 a1 - drive
        assert T1 == pytest.approx(-0.8 * run["drive"], rel=1e-6)


def test_the_coupler_loads_are_written_under_the_time(run):
    for key, f in run["frames"].items():
        text = f["coupler_text"]
        assert f["coupler_visible"]
        T1, T2 = f["T"]
        m = re.fullmatch(r"Mesh: ([-\d.e+]+) (mN·m|N·m) on PinionAxle, ([-\d.e+]+) (mN·m|N·m) "
                         r"on WheelAxle; tooth force ([\d.e+]+) (mN|N|kN)", text)
        assert m, text
        unit = {"mN·m": 1e-3, "N·m": 1.0, "mN": 1e-3, "N": 1.0, "kN": 1e3}
        assert float(m[1]) * unit[m[2]] == pytest.approx(T1, rel=1e-3)
        assert float(m[3]) * unit[m[4]] == pytest.approx(T2, rel=1e-3)
        assert float(m[5]) * unit[m[6]] == pytest.approx(abs(T1) / 0.03, rel=1e-3)
        assert f"frame {f['frame'] + 1} of" in f["time_label"]


def test_both_kinds_share_one_scale_and_the_legend_follows(run):
    size = run["model_size"]
    both = max(run["peak_contact"], run["peak_tooth"], run["peak_reactions"])
    assert run["scale_both"] == pytest.approx(0.25 * size / both, rel=1e-12)
    assert legend_mm_per_newton(run["legend_both"])[0] == pytest.approx(run["scale_both"],
                                                                         rel=2e-3)
    assert run["arrow_both"]["length"] == pytest.approx(
        run["scale_both"] * np.linalg.norm(run["frames"]["peak"]["force"]), rel=1e-5)
    checked, contact_shown, gear_shown, legend, scale = run["contacts_off"]
    assert not checked and not contact_shown and not gear_shown
    assert scale == pytest.approx(0.25 * size / run["peak_reactions"], rel=1e-12)
    assert legend_mm_per_newton(legend)[0] == pytest.approx(scale, rel=2e-3)


def test_the_screenshot_shows_the_contact_arrow(run):
    assert run["shot"]["saved"] and run["shot"]["distinct_colors"] > 20
    assert run["arrow_pixels"] > 50


def test_the_plot_dock_lists_the_contact_and_the_coupler(run):
    assert run["dock"]
    titles = run["tree_titles"]
    assert titles.index(CONTACT) < titles.index(GEAR) < titles.index("Energy")
    contact = {name: (unit, tip) for name, unit, tip in run["tree"][CONTACT]}
    assert list(contact) == ["Fx", "Fy", "Fz", "Fn", "Ft", "depth", "slip", "x", "y", "z"]
    assert contact["Fx"][0] == "N" and contact["x"][0] == "mm" and contact["slip"][0] == "mm/s"
    assert "contact point" in contact["x"][1] and "contact force" in contact["Fx"][1]
    gear = {name: (unit, tip) for name, unit, tip in run["tree"][GEAR]}
    assert {"T1", "T2", "angle_error"} <= set(gear)
    assert gear["T1"][0] == "N·m" and "coupler" in gear["T1"][1]
    # the player's plot starts with the first body's x; the user's ticks follow
    assert run["plot_selected"] == ["Float.x", f"{CONTACT}.Fn", f"{GEAR}.T1"]
    assert run["plot_axes"] == [["mm", "m"], ["N", "N"], ["N·m", "N m"]]
    assert any("Fn" in h for h in run["table_headers"])
    assert any("T1" in h for h in run["table_headers"])
    fn_cell = next(v for h, v in zip(run["table_headers"], run["table_row"]) if "Fn" in h)
    assert float(fn_cell) == pytest.approx(run["fn_peak"], rel=1e-5)
    assert math.isfinite(run["fn_peak"])
