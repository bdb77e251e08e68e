"""The plot dock and the movie export in the FreeCAD GUI, under Xvfb.

``tests/gui/check_plot_panel.py`` simulates the double pendulum twice (rk4 every 0.01 s, DOP853
every 0.02 s), shows both runs in the plot dock, moves the cursor, clicks in the plot, exports PNG
and CSV, takes screenshots, and films a moving box as a GIF; the tests compare what it reported
and wrote with the runs' results (saved by the script as CSV).

Screenshots and the GIF are copied to ``$MBWB_ARTIFACTS_DIR`` when it is set.
"""

import csv
import math
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

import freecad_env
from MultibodyWB.solver.results.table import Results
from MultibodyWB.solver.model.columns import describe

GUI_DIR = Path(__file__).resolve().parent / "gui"
COLUMNS = ["Lower.x", "Lower.z", "Shoulder.rz", "Elbow.rz_rate", "Shoulder.Fz", "energy.total"]
#: FreeCAD's Standard unit schema (a fresh user directory): SI unit -> (factor, label).
STANDARD = {"s": (1.0, "s"), "m": (1000.0, "mm"), "rad": (180.0 / math.pi, "°"),
            "m/s": (1000.0, "mm/s"), "rad/s": (180.0 / math.pi, "deg/s"),
            "m/s^2": (1000.0, "mm/s^2"), "rad/s^2": (180.0 / math.pi, "deg/s^2"),
            "N": (1.0, "N"), "N m": (1.0, "N·m"), "J": (1.0, "J"), "1": (1.0, "-")}
UNIT = {"Lower.x": "m", "Lower.z": "m", "Shoulder.rz": "rad", "Elbow.rz_rate": "rad/s",
        "Shoulder.Fz": "N", "energy.total": "J"}
CURSOR = 0.5


@pytest.fixture(scope="module")
def plots_run(tmp_path_factory):
    work = tmp_path_factory.mktemp("check_plot_panel")
    result = freecad_env.run_freecad_gui(GUI_DIR / "check_plot_panel.py", timeout=400,
                                         work_dir=work)
    artifacts = os.environ.get("MBWB_ARTIFACTS_DIR")
    if artifacts:
        os.makedirs(artifacts, exist_ok=True)
        for name in ("plot_dock.png", "plot_panel.png", "plots.png", "box.gif"):
            path = Path(result["_output_dir"]) / name
            if path.is_file():
                shutil.copy(path, Path(artifacts) / name)
    return result


@pytest.fixture(scope="module")
def runs(plots_run):
    out = Path(plots_run["_output_dir"])
    return {"rk4": Results.from_csv(out / "run_rk4.csv"),
            "DOP853": Results.from_csv(out / "run_dop853.csv")}


def _ok(result):
    assert "exception" not in result, result["exception"]


def read_csv(path):
    """(comment line, header, columns as float arrays with NaN for empty cells)."""
    with open(path, encoding="utf-8", newline="") as fh:
        note = fh.readline().rstrip("\n")
        rows = list(csv.reader(fh))
    header, body = rows[0], rows[1:]
    data = {h: np.array([float(r[i]) if r[i] != "" else np.nan for r in body])
            for i, h in enumerate(header)}
    return note, header, data


@pytest.mark.gui
def test_plot_dock_runs_without_problems(plots_run):
    _ok(plots_run)
    assert plots_run["_problems"] == [], "\n\n".join(plots_run["_problems"])
    assert plots_run["dialogs"] == []
    # matplotlib's Qt backend uses FreeCAD's binding
    assert plots_run["qt_api"].lower() == "pyside2"


@pytest.mark.gui
def test_units_are_those_freecad_shows(plots_run):
    _ok(plots_run)
    assert plots_run["schema"].startswith("Standard")
    for si, (factor, label) in STANDARD.items():
        got = plots_run["units"][si]
        assert got[1] == label and got[0] == pytest.approx(factor, rel=1e-12), (si, got)


@pytest.mark.gui
def test_one_axes_per_unit_with_the_unit_as_label(plots_run):
    r = plots_run
    _ok(r)
    assert r["selected"] == COLUMNS and r["runs"] == ["rk4", "DOP853"]
    axes = r["axes"]
    assert [a["unit"] for a in axes] == ["m", "rad", "rad/s", "N", "J"]
    assert [a["ylabel"] for a in axes] == ["mm", "°", "deg/s", "N", "J"]
    assert r["xlabel"] == "time [s]"
    # two runs per quantity, plus the cursor
    assert [a["lines"] for a in axes] == [5, 3, 3, 3, 3]
    assert axes[0]["legends"] == [["Lower.x", "Lower.z"], ["rk4", "DOP853"]]
    assert [a["legends"] for a in axes[1:]] == [[["Shoulder.rz"]], [["Elbow.rz_rate"]],
                                                [["Shoulder.Fz"]], [["energy.total"]]]
    # the conserved energy is a flat line in a range of its own, not round-off noise
    lo, hi = axes[-1]["ylim"]
    assert lo < -2.2871 < hi and hi - lo > 0.1


@pytest.mark.gui
def test_tree_lists_bodies_hinges_energy_with_units_and_descriptions(plots_run):
    tree = plots_run["tree"]
    assert list(tree) == ["Upper", "Lower", "Shoulder", "Elbow", "Energy"]
    shoulder = {q: (unit, tip) for q, unit, tip in tree["Shoulder"]}
    assert list(shoulder) == ["rz", "rz_rate", "rz_acc", "Fx", "Fy", "Fz", "Tx", "Ty", "Tz"]
    assert shoulder["rz"] == ("°", describe("Shoulder.rz"))
    assert shoulder["Fx"][0] == "N" and shoulder["Tz"][0] == "N·m"
    lower = {q: unit for q, unit, _tip in tree["Lower"]}
    assert lower["x"] == "mm" and lower["vx"] == "mm/s" and lower["R11"] == "-"
    assert len(lower) == 27
    assert [q for q, _u, _t in tree["Energy"]] == ["kinetic", "gravity", "elastic", "potential",
                                                   "total", "work_drivers", "work_forces",
                                                   "dissipated", "residual"]


@pytest.mark.gui
def test_unknown_column_names_the_column(plots_run):
    assert "Nowhere.z" in plots_run["unknown_column"]
    assert "no column" in plots_run["unknown_column"]
    assert plots_run["selected_after_error"] == COLUMNS


@pytest.mark.gui
def test_table_shows_the_values_at_the_cursor(plots_run, runs):
    _ok(plots_run)
    assert plots_run["table_headers"][0] == "t = 0.5 s"
    assert plots_run["table_headers"][1:] == [
        "Lower.x [mm]", "Lower.z [mm]", "Shoulder.rz [°]", "Elbow.rz_rate [deg/s]",
        "Shoulder.Fz [N]", "energy.total [J]"]
    for table, t in ((plots_run["table"], CURSOR), (plots_run["table_between"], 0.505)):
        assert list(table) == COLUMNS
        for name in COLUMNS:
            factor = STANDARD[UNIT[name]][0]
            for run, results in runs.items():
                expected = np.interp(t, results.time, results[name]) * factor
                shown = float(table[name][run])
                assert shown == pytest.approx(expected, rel=1e-5, abs=1e-9), (name, run, t)
    # between output times the two runs' interpolations differ (0.01 s and 0.02 s grids)
    assert plots_run["table_between"]["Lower.z"]["rk4"] != \
        plots_run["table_between"]["Lower.z"]["DOP853"]


@pytest.mark.gui
def test_cursor_moves_cheaply_and_follows_a_click(plots_run):
    r = plots_run
    _ok(r)
    assert r["cursor_x"] == [[CURSOR, CURSOR]] * 5
    assert r["set_time_ms"] < 5.0, r["set_time_ms"]
    assert len(r["clicked"]) == 1 and r["clicked"][0] == pytest.approx(0.25, abs=0.01)
    assert r["time_after_click"] == r["clicked"][0]


@pytest.mark.gui
def test_png_export(plots_run):
    _ok(plots_run)
    from PIL import Image
    path = Path(plots_run["png"])
    assert path.is_file() and path.stat().st_size > 20_000
    with Image.open(path) as image:
        assert image.width > 600 and image.height > 200
        colors = image.convert("RGB").getcolors(maxcolors=1 << 20)
    assert len(colors) > 100


@pytest.mark.gui
def test_csv_export_in_displayed_units(plots_run, runs):
    _ok(plots_run)
    note, header, data = read_csv(plots_run["csv"])
    assert note.startswith("# ") and "units FreeCAD shows" in note and "Standard" in note
    expected_header = []
    for run in ("rk4", "DOP853"):
        expected_header.append(f"{run}: time [s]")       # the runs have different output times
        expected_header += [f"{run}: {c} [{STANDARD[UNIT[c]][1]}]" for c in COLUMNS]
    assert header == expected_header
    for run, results in runs.items():
        n = len(results)
        assert n == {"rk4": 101, "DOP853": 51}[run]
        np.testing.assert_allclose(data[f"{run}: time [s]"][:n], results.time, rtol=1e-11)
        assert np.isnan(data[f"{run}: time [s]"][n:]).all()
        for name in COLUMNS:
            factor, label = STANDARD[UNIT[name]]
            column = data[f"{run}: {name} [{label}]"]
            np.testing.assert_allclose(column[:n], results[name] * factor, rtol=1e-11,
                                       atol=1e-9, err_msg=f"{run}: {name}")
    # a length in mm is 1000 times the SI value
    rk4 = runs["rk4"]
    np.testing.assert_allclose(data["rk4: Lower.z [mm]"], 1000.0 * rk4["Lower.z"], rtol=1e-11)


@pytest.mark.gui
def test_csv_export_in_si_and_of_one_run(plots_run, runs):
    _ok(plots_run)
    note, header, data = read_csv(plots_run["csv_si"])
    assert "SI units" in note
    assert "rk4: Lower.z [m]" in header and "DOP853: Shoulder.rz [rad]" in header
    np.testing.assert_allclose(data["DOP853: Shoulder.rz [rad]"][:51],
                               runs["DOP853"]["Shoulder.rz"], rtol=1e-11)
    note, header, data = read_csv(plots_run["csv_one_run"])
    assert header == ["time [s]"] + [f"{c} [{STANDARD[UNIT[c]][1]}]" for c in COLUMNS]
    np.testing.assert_allclose(data["Elbow.rz_rate [deg/s]"],
                               np.degrees(runs["rk4"]["Elbow.rz_rate"]), rtol=1e-11, atol=1e-9)
    assert plots_run["axes_one_run"] == [3, 2, 2, 2, 2]


@pytest.mark.gui
def test_dock_is_made_once_and_reused(plots_run):
    r = plots_run
    assert r["dock_reused"] and r["docks"] == 1
    assert r["dock_title"] == "Multibody plots" and r["dock_visible"]
    assert r["selected_reused"] == COLUMNS


@pytest.mark.gui
def test_screenshot_of_the_plot_dock(plots_run):
    shot = plots_run["screenshot"]
    assert shot["saved"] and shot["distinct_colors"] > 50
    assert Path(shot["path"]).stat().st_size > 50_000
    assert Path(plots_run["_output_dir"], "plot_panel.png").stat().st_size > 30_000


@pytest.mark.gui
def test_gif_of_the_3d_view_while_a_box_moves(plots_run):
    r = plots_run
    _ok(r)
    from PIL import Image, ImageChops
    assert r["movie_returned"] == r["movie_path"]
    frames, durations = [], []
    with Image.open(r["movie_path"]) as gif:
        assert gif.size == (320, 240)
        for i in range(gif.n_frames):
            gif.seek(i)
            durations.append(gif.info["duration"])
            frames.append(gif.convert("RGB"))
    assert len(frames) == 11 and durations == [100] * 11
    for a, b in zip(frames, frames[1:]):
        assert ImageChops.difference(a, b).getbbox() is not None      # the box moved
    moved = ImageChops.difference(frames[0], frames[-1]).getbbox()
    assert moved[2] - moved[0] > 60                                     # across the picture
    assert r["box_x_after"] == 100.0
    progress = r["movie_progress"]
    assert progress == sorted(progress) and progress[-1] == 1.0 and len(progress) == 12
    assert r["cancel"].startswith("movie cancelled after 3 of 11 frames")
    assert not r["cancelled_exists"]
    if r["ffmpeg"]:
        assert r["mp4"] == "written" and r["mp4_exists"]
    else:
        assert r["mp4"] == ("MP4 export needs ffmpeg (apt install ffmpeg); "
                            "GIF export works without it")
        assert not r["mp4_exists"]
