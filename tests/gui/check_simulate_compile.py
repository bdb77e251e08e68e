"""GUI check run inside FreeCAD: the first Simulate after an install, the kernels not compiled.

Started by tests/test_gui_simulate_compile.py with a new, empty numba cache (``NUMBA_CACHE_DIR``)
and the compile at start switched on (``MBWB_COMPILE_AT_START=1``):

1. FreeCAD's start (InitGui.py) has started the whole warm-up in a separate process, the
   fixed-step stage first, before the workbench is ever activated;
2. the crank-slider engine built from solids, selected, ``MultibodyWB_Simulate``; a screenshot
   of the main window at its default size (the panel in FreeCAD's default combo view: Run and
   Cancel visible, the panel's width and height);
3. Run clicked (the engine's settings: mstmm, rk4): the panel waits for the compile and shows
   an estimate: stage k of n, time left, the progress bar moving; a screenshot;
4. Cancel clicked: every compile process ends;
5. a whole warm-up running again (as FreeCAD's start begins it), the method set to newton-euler
   in the panel's combo box and Run clicked: a second process compiles that stage alone beside
   the whole one, the panel shows its estimate (stage 1 of 1); Cancel.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import FreeCAD  # noqa: E402
import FreeCADGui  # noqa: E402
import in_freecad  # noqa: E402

W = in_freecad._widgets_module()


def wait_for(condition, timeout=60.0):
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        in_freecad.process_events()
        if condition():
            return True
        time.sleep(0.05)
    return False


def visible_in_task_view(widget):
    """Whether ``widget`` lies inside the task view's viewport as it is scrolled now (a user
    sees it without scrolling)."""
    from MultibodyWB.gui.qt import task_view
    view = task_view()
    port = view.viewport()
    top_left = widget.mapTo(port, widget.rect().topLeft())
    bottom_right = widget.mapTo(port, widget.rect().bottomRight())
    r = port.rect()
    return (widget.isVisible() and r.contains(top_left) and r.contains(bottom_right))


def processes():
    from MultibodyWB.gui import warmup
    return [{"only": w.only, "first": w.first, "running": w.running(),
             "args": list(w.process.args)} for w in warmup._warmups]


def check():
    from MultibodyWB.gui import simulate_panel, warmup
    from MultibodyWB.gui.qt import task_view
    result = {"numba_cache_dir": os.environ.get("NUMBA_CACHE_DIR")}
    # 1. FreeCAD's start began the compile (the workbench never activated)
    result["at_start_processes"] = processes()
    result["at_start_running"] = warmup.running()
    result["active_workbench"] = FreeCADGui.activeWorkbench().name()

    # 2. the engine, Simulate, the panel at the default size
    FreeCADGui.activateWorkbench("MultibodyWorkbench")
    from MultibodyWB.examples_fc import crank_slider
    doc = FreeCAD.newDocument("Engine")
    mechanism = crank_slider.setup(doc)
    doc.recompute()
    FreeCADGui.Selection.clearSelection()
    FreeCADGui.Selection.addSelection(doc.Name, mechanism.Name)
    FreeCADGui.runCommand("MultibodyWB_Simulate")
    in_freecad.process_events()
    panel = simulate_panel.current
    main = FreeCADGui.getMainWindow()
    main.resize(1280, 960)
    for _ in range(5):
        in_freecad.process_events()
    view = task_view()
    result["task_view_size"] = [view.viewport().width(), view.viewport().height()]
    result["run_visible"] = visible_in_task_view(panel.run_button)
    result["cancel_visible"] = visible_in_task_view(panel.cancel_button)
    result["status_visible"] = visible_in_task_view(panel.status)
    result["progress_visible"] = visible_in_task_view(panel.progress)
    result["horizontal_scroll_bar"] = view.horizontalScrollBar().isVisible()
    result["run_top"] = panel.run_button.mapTo(view.viewport(),
                                               panel.run_button.rect().topLeft()).y()
    main.resize(1024, 600)                                  # a small screen: still in sight
    for _ in range(5):
        in_freecad.process_events()
    result["task_view_size_small"] = [view.viewport().width(), view.viewport().height()]
    result["run_visible_small"] = (visible_in_task_view(panel.run_button)
                                   and visible_in_task_view(panel.cancel_button)
                                   and visible_in_task_view(panel.status))
    main.resize(1280, 960)
    for _ in range(5):
        in_freecad.process_events()
    result["shot_panel"] = in_freecad.grab_main_window("simulate_panel_default.png",
                                                        size=(1280, 960))

    # 3. Run: the panel waits for the compile and says how long
    panel.run_button.click()
    in_freecad.process_events()
    result["compiling_after_run"] = panel.compiling is not None
    result["processes_after_run"] = processes()
    seen = []

    def estimate_shown():
        text = panel.status.text()
        if not seen or seen[-1][0] != text:
            seen.append((text, panel.progress.value(), panel.progress.text()))
        return "stage" in text and "left" in text and panel.progress.value() > 0

    result["estimate_shown"] = wait_for(estimate_shown, timeout=90)
    result["statuses"] = seen[-6:]
    result["status_compiling"] = panel.status.text()
    result["progress_compiling"] = panel.progress.value()
    result["progress_text"] = panel.progress.text()
    result["run_visible_compiling"] = visible_in_task_view(panel.run_button)
    result["cancel_visible_compiling"] = visible_in_task_view(panel.cancel_button)
    result["shot_compiling"] = in_freecad.grab_main_window("simulate_panel_compiling.png",
                                                            size=(1280, 960))
    # 4. Cancel ends every compile
    panel.cancel_button.click()
    in_freecad.process_events()
    result["running_after_cancel"] = warmup.running()
    result["status_after_cancel"] = panel.status.text()
    result["progress_after_cancel"] = panel.progress.value()

    # 5. another method while the whole warm-up compiles the fixed-step stage
    warmup.start(check=False, background=True)           # as FreeCAD's start does
    wait_for(lambda: warmup._warmups and warmup._warmups[0].state() is not None, timeout=60)
    panel.method.setCurrentText("newton-euler")
    in_freecad.process_events()
    panel.run_button.click()
    in_freecad.process_events()
    result["processes_newton_euler"] = processes()
    seen.clear()
    result["estimate_newton_euler"] = wait_for(
        lambda: estimate_shown() and "stage 1 of 1" in panel.status.text(), timeout=90)
    result["statuses_newton_euler"] = seen[-4:]
    panel.cancel_button.click()
    in_freecad.process_events()
    result["running_after_second_cancel"] = warmup.running()
    return result


in_freecad.run_and_quit(check, watchdog_s=400)
