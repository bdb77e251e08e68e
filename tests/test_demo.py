"""The README's main command: ``python3 -m MultibodyWB.demo OUT`` (what scripts/demo.sh runs).

It builds the crank-slider engine from FreeCAD solids headless, simulates it, saves the .FCStd
with its results, writes the neutral XML, the topology figure, the plots, and a GIF rendered by
FreeCAD's 3D view under Xvfb. Checked here: every file, the stored run against the CSV, the
reopened document, the GIF's frames (the engine turns)."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from MultibodyWB.solver.model import xmlio
from MultibodyWB.solver.results.table import Results

pytestmark = pytest.mark.gui

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "out"
    p = subprocess.run([sys.executable, "-m", "MultibodyWB.demo", str(out)], cwd=REPO,
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return out, p.stdout


def test_demo_writes_and_names_every_file(demo):
    out, stdout = demo
    for f in ("crank_slider.mbs.xml", "crank_slider_topology.svg", "crank_slider_topology.png",
              "crank_slider.FCStd", "crank_slider.csv", "crank_slider_bearing_force.png",
              "crank_slider_piston.png", "crank_slider.gif", "double_pendulum.csv",
              "branched_tree.csv", "quarter_car_study.csv", "quarter_car_study.png",
              "quarter_car_before_after.png"):
        assert (out / f).stat().st_size > 0, f
        assert str(out / f) in stdout, f
    assert xmlio.read(out / "crank_slider.mbs.xml").name == "CrankSlider"
    assert "freecad " + str(out / "crank_slider.FCStd") in stdout


def test_demo_study_found_a_better_feasible_suspension(demo):
    """Part 1b: the study's table (one row per run) has a feasible best row better than the
    first design (row 0: Nelder-Mead starts from the model's own values)."""
    import csv
    out, stdout = demo
    rows = list(csv.DictReader(open(out / "quarter_car_study.csv")))
    assert len(rows) > 10 and all(r["status"] == "ok" for r in rows)
    first = float(rows[0]["rms(Hull.az)"])
    feasible = [float(r["rms(Hull.az)"]) for r in rows if r["feasible"] == "1"]
    assert min(feasible) < 0.9 * first
    import os
    import re
    cores = len(os.sched_getaffinity(0))
    assert re.search(rf"nelder-mead study: \d+ runs .* on {cores} workers?,", stdout), stdout


def test_saved_document_holds_the_run(demo, freecad):
    out, _ = demo
    from MultibodyWB.document import runs
    from MultibodyWB.objects.base import type_of
    doc = freecad.openDocument(str(out / "crank_slider.FCStd"))
    try:
        mechanism = next(o for o in doc.Objects if type_of(o) == "Multibody::Mechanism")
        stored = runs.result_objects(mechanism)
        assert len(stored) == 1
        results = runs.load(stored[0])
        csv = Results.from_csv(out / "crank_slider.csv")
        assert len(results) == len(csv) == 801           # 0.08 s at 0.1 ms
        for name in ("Piston.z", "MainBearing.Fx", "energy.total"):
            np.testing.assert_allclose(results.column(name), csv.column(name), rtol=1e-9,
                                       atol=1e-9)
    finally:
        freecad.closeDocument(doc.Name)


def test_gif_shows_the_engine_turning(demo):
    from PIL import Image
    out, _ = demo
    gif = Image.open(out / "crank_slider.gif")
    assert gif.n_frames >= 40
    frames = []
    for k in range(gif.n_frames):
        gif.seek(k)
        frames.append(np.asarray(gif.convert("RGB"), dtype=float))
    n = len(frames)
    # four revolutions (0.08 s at 3000 rpm): half a revolution apart the engine looks
    # different, one revolution apart (a quarter of the film) the same but for the force arrows
    half = np.abs(frames[0] - frames[n // 8]).mean()
    revolution = np.abs(frames[0] - frames[n // 4]).mean()
    assert half > 0.5 and half > 3 * revolution, (half, revolution)
