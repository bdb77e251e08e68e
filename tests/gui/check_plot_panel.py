"""GUI check run inside FreeCAD: the plot dock with two runs of the double pendulum, and a movie.

Simulates the double pendulum twice (rk4 every 0.01 s; DOP853 every 0.02 s), opens the plot dock
with both runs and a few columns, moves the cursor, clicks in the plot, exports PNG and CSV
(displayed units, SI, one run), takes screenshots of the main window (``plot_dock.png``) and of the
panel alone (``plot_panel.png``), then records a GIF of the 3D view while a box moves 100 mm.

Started by tests/test_gui_plots.py through ``freecad_env.run_freecad_gui``; writes its findings as
JSON, and the runs' results as CSV (``run_rk4.csv``, ``run_dop853.csv``) for the test to compare.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import FreeCAD  # noqa: E402
import FreeCADGui  # noqa: E402
import in_freecad  # noqa: E402

COLUMNS = ["Lower.x", "Lower.z", "Shoulder.rz", "Elbow.rz_rate", "Shoulder.Fz", "energy.total"]
CURSOR = 0.5


def out(name):
    return os.path.join(in_freecad.output_dir(), name)


def simulate_runs():
    from MultibodyWB import examples
    from MultibodyWB.solver.run.simulate import simulate
    a = simulate(examples.build("double_pendulum"), t_end=1.0)
    b = simulate(examples.build("double_pendulum"), t_end=1.0, integrator="DOP853",
                 output_step=0.02)
    a.to_csv(out("run_rk4.csv"))
    b.to_csv(out("run_dop853.csv"))
    return [("rk4", a), ("DOP853", b)]


def click_plot(panel, t):
    """Press and release the left mouse button in the top axes at time ``t`` (Qt mouse events
    sent to the canvas, as a click would)."""
    from MultibodyWB.gui.qt import QtCore, QtGui, QtWidgets
    panel.canvas.draw()
    ax = panel.axes[0][0]
    ymid = sum(ax.get_ylim()) / 2
    x, y = ax.transData.transform((t, ymid))
    ratio = getattr(panel.canvas, "device_pixel_ratio", 1.0) or 1.0
    point = QtCore.QPointF(x / ratio, (panel.figure.bbox.height - y) / ratio)
    for kind, buttons in ((QtCore.QEvent.MouseButtonPress, QtCore.Qt.LeftButton),
                          (QtCore.QEvent.MouseButtonRelease, QtCore.Qt.NoButton)):
        event = QtGui.QMouseEvent(kind, point, QtCore.Qt.LeftButton, buttons,
                                  QtCore.Qt.NoModifier)
        QtWidgets.QApplication.sendEvent(panel.canvas, event)
    in_freecad.process_events()


def record_box_movie(result):
    """A GIF of the 3D view while a box moves 100 mm along x (and the refusals)."""
    import Part  # noqa: F401  (Part::Box)
    from MultibodyWB.gui import movie
    doc = FreeCAD.newDocument("MovieCheck")
    track = doc.addObject("Part::Box", "Track")
    track.Length, track.Width, track.Height = 130.0, 20.0, 2.0
    track.Placement.Base = FreeCAD.Vector(-10, -5, -2)
    box = doc.addObject("Part::Box", "Mover")
    doc.recompute()
    view = FreeCADGui.ActiveDocument.ActiveView
    view.viewIsometric()
    view.fitAll()
    in_freecad.wait(0.3)

    def set_time(t):
        placement = box.Placement
        placement.Base.x = 100.0 * t
        box.Placement = placement

    progress = []
    times = [i / 10 for i in range(11)]
    path = out("box.gif")
    started = time.monotonic()
    result["movie_returned"] = movie.record(view, set_time, times, path, width=320, height=240,
                                            fps=10, progress=progress.append)
    result["movie_seconds"] = round(time.monotonic() - started, 2)
    result["movie_progress"] = progress
    result["movie_path"] = path
    result["box_x_after"] = box.Placement.Base.x
    # cancelled after three frames: nothing written
    calls = []
    cancelled_path = out("cancelled.gif")
    try:
        movie.record(view, lambda t: (calls.append(t), set_time(t)), times, cancelled_path,
                     width=160, height=120, cancel=lambda: len(calls) >= 3)
        result["cancel"] = "not cancelled"
    except movie.Cancelled as exc:
        result["cancel"] = str(exc)
    result["cancelled_exists"] = os.path.exists(cancelled_path)
    import shutil
    try:
        movie.record(view, set_time, times[:2], out("box.mp4"), width=320, height=240)
        result["mp4"] = "written"
    except movie.MovieError as exc:
        result["mp4"] = str(exc)
    result["ffmpeg"] = shutil.which("ffmpeg")
    result["mp4_exists"] = os.path.exists(out("box.mp4"))


def check():
    result = {"freecad_version": FreeCAD.Version()[:3]}
    doc = FreeCAD.newDocument("PlotCheck")
    doc.addObject("Part::Box", "Box")
    doc.recompute()
    FreeCADGui.ActiveDocument.ActiveView.viewIsometric()
    FreeCADGui.ActiveDocument.ActiveView.fitAll()
    runs = simulate_runs()

    from MultibodyWB.gui import plot_panel
    import matplotlib
    from matplotlib.backends import qt_compat
    result["matplotlib"] = matplotlib.__version__
    result["qt_api"] = qt_compat.QT_API
    result["units"] = {u: list(plot_panel.display_unit(u)) for u in
                       ("s", "m", "rad", "m/s", "rad/s", "m/s^2", "rad/s^2", "N", "N m", "J",
                        "1")}
    result["schema"] = plot_panel.schema_name()

    panel = plot_panel.show_plot_dock(runs, COLUMNS)
    in_freecad.wait(0.3)
    result["selected"] = panel.selected()
    result["runs"] = panel.checked_runs()
    from matplotlib.legend import Legend
    result["axes"] = [{"unit": u, "ylabel": ax.get_ylabel(), "lines": len(ax.get_lines()),
                       "ylim": list(ax.get_ylim()),
                       "legends": [[t.get_text() for t in leg.get_texts()]
                                   for leg in ax.get_children() if isinstance(leg, Legend)]}
                      for ax, u in panel.axes]
    mins = {"panel": panel, "tree": panel.tree, "toolbar": panel.toolbar,
            "table": panel.table, "canvas": panel.canvas}
    result["minimum_widths"] = {k: w.minimumSizeHint().width() for k, w in mins.items()}
    result["xlabel"] = panel.axes[-1][0].get_xlabel()
    result["tree"] = {panel.tree.topLevelItem(i).text(0): [
        [panel.tree.topLevelItem(i).child(j).text(0), panel.tree.topLevelItem(i).child(j).text(1),
         panel.tree.topLevelItem(i).child(j).toolTip(0)]
        for j in range(panel.tree.topLevelItem(i).childCount())]
        for i in range(panel.tree.topLevelItemCount())}
    try:
        panel.select(["Upper.x", "Nowhere.z"])
        result["unknown_column"] = "no error"
    except KeyError as exc:
        result["unknown_column"] = str(exc)
    result["selected_after_error"] = panel.selected()

    panel.set_time(CURSOR)
    in_freecad.process_events()
    result["table"] = panel.table_values()
    result["table_headers"] = [panel.table.horizontalHeaderItem(c).text()
                               for c in range(panel.table.columnCount())]
    result["cursor_x"] = [list(map(float, line.get_xdata())) for line in panel._cursors]
    panel.set_time(0.505)
    result["table_between"] = panel.table_values()
    started = time.perf_counter()
    for i in range(100):
        panel.set_time(i / 100)
    result["set_time_ms"] = (time.perf_counter() - started) * 10.0
    in_freecad.process_events()

    # a click in the plot moves the cursor and tells the player
    heard = []
    panel.timeChanged.connect(heard.append)
    click_plot(panel, 0.25)
    result["clicked"] = heard
    result["time_after_click"] = panel.time()
    panel.set_time(CURSOR)
    in_freecad.wait(0.3)

    result["png"] = panel.export_png(out("plots.png"))
    result["csv"] = panel.export_csv(out("plots.csv"))
    result["csv_si"] = panel.export_csv(out("plots_si.csv"), units="si")
    result["screenshot"] = in_freecad.grab_main_window("plot_dock.png")
    panel.grab().save(out("plot_panel.png"), "PNG")
    result["panel_size"] = [panel.width(), panel.height()]

    # one run: one time column, plain names
    panel.set_checked_runs(["rk4"])
    result["csv_one_run"] = panel.export_csv(out("plots_rk4.csv"))
    result["axes_one_run"] = [ax.get_legend() is not None and len(ax.get_lines())
                              for ax, _u in panel.axes]
    # the dock is reused: the same panel, its selection kept
    again = plot_panel.show_plot_dock(runs)
    result["dock_reused"] = again is panel
    result["selected_reused"] = again.selected()
    mw = FreeCADGui.getMainWindow()
    from MultibodyWB.gui.qt import QtWidgets
    docks = [d for d in mw.findChildren(QtWidgets.QDockWidget)
             if d.objectName() == plot_panel.DOCK_NAME]
    result["docks"] = len(docks)
    result["dock_title"] = docks[0].windowTitle() if docks else None
    result["dock_visible"] = bool(docks and docks[0].isVisible())

    record_box_movie(result)
    return result


in_freecad.run_and_quit(check, watchdog_s=300)
