"""The demo: the crank-slider engine from FreeCAD solids to a stored run, plots and a movie;
the cam-driven valve alike (without the movie).

``python3 -m MultibodyWB.demo [OUT_DIR]`` (``bash scripts/demo.sh``):

1. the solver on its own: simulates two tree examples with the MSTMM solver (the double
   pendulum and the branched tree), prints their summaries and writes their results as CSV;
1b. a design study (issue 15): the quarter car crossing a bump (:mod:`MultibodyWB.examples.
   quarter_car`), its suspension's stiffness and damping tuned by Nelder-Mead for the least RMS
   hull acceleration with the suspension's travel within its rattle space, the runs on Dask (an
   embedded local cluster, a worker per core); writes the study's table (CSV), the map of its
   runs and the before/after plots (PNG);
2. FreeCAD without a screen: builds the seed-003 crank-slider engine from Part solids
   (:mod:`MultibodyWB.examples_fc.crank_slider`: bodies, markers picked on faces and edges,
   hinges, gas force, driver, all through :mod:`MultibodyWB.document.factory`, the functions the GUI
   commands call), writes its neutral model, checks it and draws its MSTMM topology figure,
   simulates four revolutions at 3000 rpm (:func:`MultibodyWB.document.runs.simulate_mechanism`, the
   results stored in the document), saves the ``.FCStd`` with its results and plots the
   crankshaft bearing force and the piston's position, velocity and acceleration (PNG);
2b. the cam-driven valve (issue 14's contact, stop and spring) from FreeCAD solids alike
   (:mod:`MultibodyWB.examples_fc.cam_valve`): simulated for two camshaft revolutions at
   1000 rpm, saved as ``.FCStd`` with its run, its results as CSV and its valve lift and cam
   contact force plotted (PNG);
2c. solids that are no primitives tumbling down a tilted plate (convex contact shapes, the hulls
   of the solids' tessellations) from FreeCAD solids (:mod:`MultibodyWB.examples_fc.
   tumbling_solids`): simulated, saved as ``.FCStd`` with its run, its results as CSV and the
   solids' heights plotted (PNG);
3. FreeCAD's GUI under Xvfb: opens the saved document, plays the stored run (no solving) and
   renders the playback to an animated GIF with FreeCAD's 3D view (:mod:`.movie`).

It prints where each file is; ``freecad OUT_DIR/crank_slider.FCStd`` then opens the engine with
its results (Multibody workbench, Play results).
"""

from __future__ import annotations

import json
import os
import sys
import time


def _progress_bar(stream, label):
    state = {"shown": -1}

    def show(fraction):
        pct = int(100 * fraction)
        if pct != state["shown"]:
            state["shown"] = pct
            bar = "#" * (pct // 4)
            stream.write(f"\r  {label} [{bar:<25}] {pct:3d} %")
            if pct >= 100:
                stream.write("\n")
            stream.flush()
    return show


def solver_examples(out_dir, stream, files):
    """Part 1: the tree examples with the solver alone."""
    from ..examples import build
    from ..solver.api import simulate, xmlio
    for name in ("double_pendulum", "branched_tree"):
        model = build(name)
        files[f"{name} model"] = os.path.join(out_dir, f"{name}.mbs.xml")
        xmlio.write(model, files[f"{name} model"])
        results = simulate(model)
        print("\n" + results.summary(), file=stream)
        files[f"{name} results"] = os.path.join(out_dir, f"{name}.csv")
        results.to_csv(files[f"{name} results"])


def design_study(out_dir, stream, files):
    """Part 1b: the quarter car's suspension study on Dask, before/after plots."""
    from ..examples import quarter_car
    from ..solver.api import DaskExecutor, run_study, simulate
    from .plots import plot_study_before_after, plot_study_map
    base = quarter_car.build()
    print("\nDesign study: quarter car over a bump, suspension stiffness and damping tuned for "
          "the least rms(Hull.az)\n  with max(abs(Suspension.z)) <= "
          f"{quarter_car.TRAVEL * 1000:g} mm (Nelder-Mead, runs on a local Dask cluster)",
          file=stream)
    bar = _progress_bar(stream, "study")
    study = quarter_car.design_study("nelder-mead", tolerance=1e-3, max_evaluations=150)
    executor = DaskExecutor()
    try:
        table = run_study(base, study, executor=executor,
                          progress=lambda done, total, row: bar(min(1.0, done / total)))
    finally:
        executor.close()
    bar(1.0)
    print(table.summary(), file=stream)
    files["study table"] = os.path.join(out_dir, "quarter_car_study.csv")
    table.to_csv(files["study table"])
    best = table.best
    before, after = simulate(base), simulate(quarter_car.build(*best.values))
    files["study before/after"] = plot_study_before_after(
        before, after, os.path.join(out_dir, "quarter_car_before_after.png"),
        labels=(f"first design: k = {base.hinge('Suspension').stiffness[0] / 1e3:g} kN/m, "
                f"c = {base.hinge('Suspension').damping[0]:g} N s/m",
                f"optimised: k = {best.values[0] / 1e3:.3g} kN/m, c = {best.values[1]:.4g} N s/m"),
        title=f"quarter car over a {quarter_car.BUMP_HEIGHT * 1000:g} mm bump at "
              f"{quarter_car.SPEED * 3.6:g} km/h: rms(Hull.az) "
              f"{study_rms(before):.3g} -> {best.objectives[0]:.3g} m/s²")
    files["study map"] = plot_study_map(table, os.path.join(out_dir, "quarter_car_study.png"))
    return table


def study_rms(results) -> float:
    from ..solver.api import Expression
    return Expression("rms(Hull.az)").evaluate(results)


def engine_document(out_dir, stream, files):
    """Part 2: the engine built from FreeCAD solids, simulated and saved with its results."""
    from .launch import import_freecad
    FreeCAD = import_freecad()
    from ..document import runs
    from ..objects import export
    from ..examples_fc import crank_slider
    from .plots import plot_bearing_force, plot_motion
    from ..solver.api import model_summary as summary, write_figure, xmlio
    doc = FreeCAD.newDocument("CrankSlider")
    mechanism = crank_slider.setup(doc)
    doc.recompute()
    files["engine model"] = os.path.join(out_dir, "crank_slider.mbs.xml")
    export.write(mechanism, files["engine model"])
    model = xmlio.read(files["engine model"])          # what a user's file goes through
    print("\n" + summary(model), file=stream)
    for ext in ("svg", "png"):
        files[f"topology ({ext})"] = write_figure(
            model, os.path.join(out_dir, f"crank_slider_topology.{ext}"))
    print(f"\nSimulating '{mechanism.Label}' (from FreeCAD solids):", file=stream)
    result = runs.simulate_mechanism(mechanism, progress=_progress_bar(stream, "mstmm"))
    results = runs.load(result)
    print(results.summary(), file=stream)
    files["engine document"] = os.path.join(out_dir, "crank_slider.FCStd")
    doc.saveAs(files["engine document"])
    FreeCAD.closeDocument(doc.Name)
    files["engine results"] = os.path.join(out_dir, "crank_slider.csv")
    results.to_csv(files["engine results"])
    files["bearing force plot"] = plot_bearing_force(
        results, "MainBearing", os.path.join(out_dir, "crank_slider_bearing_force.png"),
        title="Crankshaft main bearing force, 3000 rpm, gas force on the piston")
    files["piston motion plot"] = plot_motion(
        results, "Piston", "z", os.path.join(out_dir, "crank_slider_piston.png"),
        title="Piston position, velocity and acceleration")
    return files["engine document"]


def cam_valve_document(out_dir, stream, files):
    """Part 2b: the cam-driven valve from FreeCAD solids, simulated and saved with its run."""
    from .launch import import_freecad
    FreeCAD = import_freecad()
    from ..document import runs
    from ..examples_fc import cam_valve
    from .plots import plot_columns
    doc = FreeCAD.newDocument("CamValve")
    mechanism = cam_valve.setup(doc)
    doc.recompute()
    print(f"\nSimulating '{mechanism.Label}' (from FreeCAD solids):", file=stream)
    result = runs.simulate_mechanism(mechanism, progress=_progress_bar(stream, "mstmm"))
    results = runs.load(result)
    print(results.summary(), file=stream)
    files["cam valve document"] = os.path.join(out_dir, "cam_valve.FCStd")
    doc.saveAs(files["cam valve document"])
    FreeCAD.closeDocument(doc.Name)
    files["cam valve results"] = os.path.join(out_dir, "cam_valve.csv")
    results.to_csv(files["cam valve results"])
    files["valve lift plot"] = plot_columns(
        results, ["Guide.z"], os.path.join(out_dir, "cam_valve_lift.png"), scale=1e3,
        ylabel="lift [mm]", labels=["valve lift"],
        title="Valve lift, eccentric cam at 1000 rpm")
    files["cam force plot"] = plot_columns(
        results, ["CamContact.Fn"], os.path.join(out_dir, "cam_valve_force.png"),
        ylabel="force [N]", title="Cam contact force on the tappet")
    return files["cam valve document"]


def tumbling_solids_document(out_dir, stream, files):
    """Part 2c: the egg, cone and prism tumbling down a tilted plate, from FreeCAD solids."""
    from .launch import import_freecad
    FreeCAD = import_freecad()
    from ..document import runs
    from ..examples_fc import tumbling_solids
    from .plots import plot_columns
    doc = FreeCAD.newDocument("TumblingSolids")
    mechanism = tumbling_solids.setup(doc)
    print(f"\nSimulating '{mechanism.Label}' (from FreeCAD solids):", file=stream)
    results = runs.load(runs.simulate_mechanism(mechanism,
                                                progress=_progress_bar(stream, "mstmm")))
    print(results.summary(), file=stream)
    files["tumbling solids document"] = os.path.join(out_dir, "tumbling_solids.FCStd")
    doc.saveAs(files["tumbling solids document"])
    FreeCAD.closeDocument(doc.Name)
    files["tumbling solids results"] = os.path.join(out_dir, "tumbling_solids.csv")
    results.to_csv(files["tumbling solids results"])
    names = [f"{n} body" for n in ("Egg", "Cone", "Prism")]
    files["tumbling solids plot"] = plot_columns(
        results, [f"{n}.z" for n in names], os.path.join(out_dir, "tumbling_solids_z.png"),
        scale=1e3, ylabel="height [mm]", labels=["egg", "cone", "prism"],
        title="Solids tumbling down a tilted plate: heights of their centres")
    return files["tumbling solids document"]


def engine_movie(document, out_dir, stream, files):
    """Part 3: the GIF, rendered by FreeCAD's 3D view (under Xvfb without a display)."""
    from .launch import LaunchError, run_gui_script
    gif = os.path.join(out_dir, "crank_slider.gif")
    status_file = os.path.join(out_dir, ".demo_movie.json")
    shot = os.path.join(out_dir, "crank_slider_player.png")
    print("\nRendering the playback with FreeCAD's 3D view...", file=stream)
    t0 = time.perf_counter()
    try:
        run = run_gui_script(os.path.join(os.path.dirname(__file__), "movie.py"),
                             {"MBWB_DEMO_FCSTD": os.path.abspath(document),
                              "MBWB_DEMO_GIF": os.path.abspath(gif),
                              "MBWB_DEMO_SCREENSHOT": os.path.abspath(shot),
                              "MBWB_DEMO_STATUS": os.path.abspath(status_file)})
    except (LaunchError, OSError) as exc:
        print(f"  no movie: {exc}", file=stream)
        return None
    status = {}
    if os.path.exists(status_file):
        with open(status_file) as f:
            status = json.load(f)
        os.remove(status_file)
    if "gif" not in status:
        print("  no movie: FreeCAD's GUI did not render it "
              f"(exit {run.returncode}):\n{status.get('error', '')}{run.stderr[-2000:]}",
              file=stream)
        return None
    print(f"  {status['gif_frames']} frames in {time.perf_counter() - t0:.1f} s", file=stream)
    files["animation (GIF)"] = status["gif"]
    if status.get("screenshot"):
        files["player screenshot"] = status["screenshot"]
    return status["gif"]


def run(out_dir: str = "out", stream=None, movie=True) -> dict:
    """Run the demo into ``out_dir``; return the written files by role."""
    stream = stream or sys.stdout
    os.makedirs(out_dir, exist_ok=True)
    files = {}
    solver_examples(out_dir, stream, files)
    design_study(out_dir, stream, files)
    document = engine_document(out_dir, stream, files)
    cam_valve_document(out_dir, stream, files)
    tumbling_solids_document(out_dir, stream, files)
    if movie:
        engine_movie(document, out_dir, stream, files)
    print("\nFiles written:", file=stream)
    for role, path in files.items():
        print(f"  {role:<24} {os.path.abspath(path)}", file=stream)
    print("\nWith a screen: bash scripts/open-demo.sh opens it in FreeCAD with the player "
          f"ready\n  (or, with the add-on installed: freecad {os.path.abspath(document)}, then "
          "Multibody > Play results)", file=stream)
    return files


if __name__ == "__main__":
    run(sys.argv[1] if len(sys.argv) > 1 else "out")
