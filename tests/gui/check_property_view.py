"""GUI check run inside FreeCAD: what the property editor shows, and the player's Plot button.

Builds the crank-slider engine from solids (``examples_fc.crank_slider``), gives its main bearing a
torsion spring (2 N*m/rad, 0.05 N*m*s/rad), adds a spring-damper between the piston and the
ground (1000 N/m, 10 N*s/m) and a small simulation step (1e-5 s), then selects a Hinge, a Body, a
Force, the Simulation and the Mechanism as a click in the tree does, and reads the texts of the
property editor's Data tab (name -> value as displayed) and grabs it (``props_<object>.png``).
Then simulates a short run, opens the player through the Play command and clicks its Plot button
(``clicked`` passes ``checked``): the plot dock must appear with curves, with nothing raised.

Started by tests/test_gui_property_view.py through ``freecad_env.run_freecad_gui``.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import FreeCAD  # noqa: E402
import FreeCADGui  # noqa: E402
import in_freecad  # noqa: E402

WORKBENCH = "MultibodyWorkbench"


def _widgets():
    return in_freecad._widgets_module()


def data_editor():
    """The property editor (a QTreeView) of the visible Data tab."""
    widgets = _widgets()
    main = FreeCADGui.getMainWindow()
    for tabs in main.findChildren(widgets.QTabWidget):
        names = [tabs.tabText(i).replace("&", "") for i in range(tabs.count())]
        if "Data" in names and "View" in names and tabs.isVisible():
            tabs.setCurrentIndex(names.index("Data"))
            page = tabs.widget(names.index("Data"))
            tree = page if isinstance(page, widgets.QTreeView) else page.findChild(
                widgets.QTreeView)
            return tabs, tree
    return None, None


def editor_rows(tree):
    """{property: displayed value} of every row (groups expanded)."""
    tree.expandAll()
    in_freecad.process_events()
    model = tree.model()
    rows = {}

    def walk(parent):
        for r in range(model.rowCount(parent)):
            name = model.index(r, 0, parent)
            value = model.index(r, 1, parent)
            if model.rowCount(name):
                walk(name)
            else:
                rows[str(name.data())] = str(value.data())
    from PySide import QtCore
    walk(QtCore.QModelIndex())
    return rows


def settle(seconds):
    """Let Qt run its timers and repaint for ``seconds``."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        in_freecad.process_events()
        time.sleep(0.02)


def show_properties(obj, file_name):
    """Select ``obj`` as a click does; the editor's rows and a grab of it (``file_name``)."""
    FreeCADGui.Selection.clearSelection()
    FreeCADGui.Selection.addSelection(obj)
    settle(0.6)             # the property view follows the selection after a timer
    tabs, tree = data_editor()
    if tree is None:
        return {"error": "no property editor found"}
    rows = editor_rows(tree)
    # tall enough for every row: the editor alone, floating
    widgets = _widgets()
    dock = tabs
    while dock is not None and not isinstance(dock, widgets.QDockWidget):
        dock = dock.parentWidget()
    height = min(60 + 24 * (len(rows) + 8), 1400)
    if dock is not None:
        dock.setFloating(True)
        dock.resize(560, height + 400)
    # the combo view's splitter: all its height to the property editor
    child, parent = tabs, tabs.parentWidget()
    while parent is not None and parent is not dock:
        if isinstance(parent, widgets.QSplitter):
            index = parent.indexOf(child)
            parent.setSizes([height if i == index else 0 for i in range(parent.count())])
        child, parent = parent, parent.parentWidget()
    settle(0.3)
    tree.expandAll()
    settle(0.2)
    path = os.path.join(in_freecad.output_dir(), file_name)
    saved = tabs.grab().save(path, "PNG")
    return {"rows": rows, "screenshot": path if saved else None}


def check():
    from MultibodyWB.document import factory, runs
    from MultibodyWB.examples_fc import crank_slider
    from MultibodyWB.gui import player as player_module
    from MultibodyWB.gui import plot_panel
    result = {"freecad_version": FreeCAD.Version()[:3]}
    FreeCADGui.activateWorkbench(WORKBENCH)
    doc = FreeCAD.newDocument("Engine")
    mechanism = crank_slider.setup(doc)
    bearing = doc.getObject("MainBearing")
    bearing.StiffnessRz = "2 N*m/rad"
    bearing.DampingRz = "0.05 N*m*s/rad"
    piston, ground = doc.getObject("PistonCrown"), doc.getObject("CylinderAxis")
    spring = factory.make_force(doc, mechanism, "spring_damper", piston, ground,
                                stiffness=1000, damping=10)
    sim = [o for o in mechanism.Group if o.Name.startswith("Simulation")][0]
    sim.Step = "1e-5 s"
    doc.recompute()
    FreeCADGui.ActiveDocument.ActiveView.viewIsometric()
    shown = {}
    for key, obj in (("hinge", bearing), ("body", doc.getObject("Crank")), ("force", spring),
                     ("simulation", sim), ("mechanism", mechanism)):
        shown[key] = show_properties(obj, f"props_{key}.png")
    result["shown"] = shown
    result["labels"] = {"force": spring.Label}

    # -- the player's Plot button, clicked ------------------------------------------------------
    sim.EndTime = "0.004 s"
    sim.OutputStep = "1e-4 s"
    runs.simulate_mechanism(mechanism)
    FreeCADGui.Selection.clearSelection()
    FreeCADGui.Selection.addSelection(mechanism)
    FreeCADGui.runCommand("MultibodyWB_Play")
    in_freecad.process_events()
    player = player_module.current
    result["player_open"] = player is not None
    widgets = _widgets()
    button = player.form.findChild(widgets.QPushButton, "PlotButton")
    result["plot_button"] = button is not None
    errors = []
    original_hook = sys.excepthook
    sys.excepthook = lambda *info: errors.append("".join(
        __import__("traceback").format_exception(*info)))
    try:
        button.click()
        for _ in range(5):
            in_freecad.process_events()
    finally:
        sys.excepthook = original_hook
    result["plot_click_errors"] = errors
    dock = FreeCADGui.getMainWindow().findChild(widgets.QDockWidget, plot_panel.DOCK_NAME)
    panel = getattr(player, "plot_panel", None)
    result["plot_panel"] = panel is not None
    result["plot_dock_visible"] = dock is not None and dock.isVisible()
    result["plot_columns"] = panel.selected() if panel is not None else []
    result["plot_curves"] = sum(len(ax.get_lines()) for ax in panel.figure.axes) \
        if panel is not None else 0
    in_freecad.grab_main_window("player_plot.png")
    player.close()
    result["report_view"] = in_freecad.report_view_text()
    return result


in_freecad.run_and_quit(check, watchdog_s=400)
