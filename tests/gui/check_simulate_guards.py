"""GUI check run inside FreeCAD: the Simulate panel fed hostile models (issue 12).

A pendulum (an arm on a revolute hinge about a horizontal axis, built from two Part boxes with
the factory functions the commands call) is selected, the Simulate command opens its panel, and
its Run button is clicked (``.click()``) with the hinge's driver ``9**9**9``, then ``1/t``, then
one that fails only mid-run, then without a driver but with a damping of 1e12 N m s/rad (a stiff
model: RK45 makes no progress). For each: the panel's messages and status, the time until the
panel is idle again, how long the GUI went without handling a QTimer (10 ms) meanwhile, the
document's object count, undo count, the hinge's property values and the stored runs before and
after. The stiff model is also run and cancelled with the panel's Cancel button.

Started by tests/test_gui_simulate_guards.py; writes its findings as JSON.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import FreeCAD  # noqa: E402
import FreeCADGui  # noqa: E402
import in_freecad  # noqa: E402

WORKBENCH = "MultibodyWorkbench"
#: Outside asin's domain only for 1.0 ms < t < 1.1 ms, between the times check samples.
NARROW = "0.001*(asin(1.0001 - 2*abs(t - 0.00105)) - asin(0.998))"


class Ticks:
    """A QTimer of 10 ms counting its ticks and the longest gap between two (the GUI frozen)."""

    def __init__(self):
        from MultibodyWB.gui.qt import QtCore
        self.timer = QtCore.QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self.tick)
        self.count, self.gap, self.last = 0, 0.0, None

    def tick(self):
        now = time.perf_counter()
        if self.last is not None:
            self.gap = max(self.gap, now - self.last)
        self.last, self.count = now, self.count + 1

    def start(self):
        self.count, self.gap, self.last = 0, 0.0, time.perf_counter()
        self.timer.start()

    def stop(self):
        self.tick()
        self.timer.stop()


def wait_for(predicate, timeout=120.0):
    t0 = time.perf_counter()
    while not predicate():
        if time.perf_counter() - t0 > timeout:
            raise TimeoutError("waited too long")
        in_freecad.process_events()
        time.sleep(0.002)
    in_freecad.process_events()
    return time.perf_counter() - t0


def build(doc):
    import Part
    from MultibodyWB.document import factory
    base = doc.addObject("Part::Feature", "Base")
    base.Shape = Part.makeBox(20, 20, 20, FreeCAD.Vector(-10, -30, -10))
    arm = doc.addObject("Part::Feature", "Arm")
    arm.Shape = Part.makeBox(100, 10, 10, FreeCAD.Vector(0, -5, -5))
    doc.recompute()
    mechanism = factory.make_mechanism(doc, "Pendulum")
    ground = factory.make_body(doc, mechanism, [base], ground=True)
    body = factory.make_body(doc, mechanism, [arm])
    # both markers at the global origin, z along global -y: a horizontal axis, the arm swings
    axis = FreeCAD.Placement(FreeCAD.Vector(0, 0, 0), FreeCAD.Rotation(FreeCAD.Vector(1, 0, 0), 90))
    m_ground = factory.make_marker(doc, ground, None, axis, name="PivotG")
    m_arm = factory.make_marker(doc, body, None, axis, name="PivotA")
    hinge = factory.make_hinge(doc, mechanism, "revolute", m_arm, m_ground, name="Pivot")
    doc.recompute()
    return mechanism, hinge


def snapshot(doc, mechanism, hinge):
    from MultibodyWB.document import runs
    return {"objects": len(doc.Objects), "undo": doc.UndoCount,
            "driver": hinge.DriverRz, "damping": str(hinge.DampingRz),
            "results": len(runs.result_objects(mechanism))}


def attempt(doc, mechanism, hinge, ticks, cancel_after=None, wait_s=120.0):
    """Select the mechanism, Simulate, click Run (and Cancel after ``cancel_after`` s); what the
    panel said and how long it took."""
    from MultibodyWB.gui import simulate_panel
    before = snapshot(doc, mechanism, hinge)
    FreeCADGui.Selection.clearSelection()
    FreeCADGui.Selection.addSelection(mechanism)
    FreeCADGui.runCommand("MultibodyWB_Simulate")
    in_freecad.process_events()
    panel = simulate_panel.current
    out = {"panel_open": panel is not None}
    ticks.start()
    t0 = time.perf_counter()
    panel.run_button.click()
    out["click_seconds"] = time.perf_counter() - t0      # Run returns at once
    out["started"] = panel.running
    if cancel_after is not None and panel.running:
        wait_for(lambda: time.perf_counter() - t0 > cancel_after or not panel.running)
        out["running_when_cancelled"] = panel.running
        panel.cancel_button.click()
        out["cancel_seconds"] = wait_for(lambda: not panel.running, timeout=30)
    # the first run may wait for the kernels' compile (the workbench starts it on activation
    # when the cache is cold: minutes on a loaded machine); the others are quick
    out["idle_seconds"] = wait_for(lambda: not panel.running and not panel.timer.isActive(),
                                   timeout=wait_s)
    ticks.stop()
    out["ticks"], out["max_gap"] = ticks.count, ticks.gap
    out["status"] = panel.status.text()
    out["messages"] = panel.messages.toPlainText()
    out["job_state"] = panel.job.state if panel.job is not None else None
    out["before"], out["after"] = before, snapshot(doc, mechanism, hinge)
    panel.close()
    in_freecad.process_events()
    return out


def check():
    result = {"freecad_version": FreeCAD.Version()[:3]}
    FreeCADGui.activateWorkbench(WORKBENCH)
    doc = FreeCAD.newDocument("Guards")
    mechanism, hinge = build(doc)
    from MultibodyWB.gui import simulate_panel
    sim = simulate_panel.simulation_of(mechanism)
    # the settings the runs use, set before the panel opens: Run stores nothing new
    sim.EndTime = "0.01 s"
    sim.Step = "1e-5 s"
    sim.OutputStep = "1e-3 s"
    sim.Integrator = "rk4"
    doc.recompute()
    ticks = Ticks()

    result["valid"] = attempt(doc, mechanism, hinge, ticks, wait_s=900)  # the plain pendulum
    from MultibodyWB.document import runs
    for obj in runs.result_objects(mechanism):                   # back to no stored run
        doc.removeObject(obj.Name)
    doc.recompute()

    for key, text in (("huge_power", "9**9**9"), ("one_over_t", "1/t"), ("mid_run", NARROW)):
        hinge.DriverRz = text
        doc.recompute()
        result[key] = attempt(doc, mechanism, hinge, ticks)
    hinge.DriverRz = ""
    hinge.DampingRz = "1e12 N*m*s/rad"
    sim.Integrator = "RK45"
    doc.recompute()
    result["stiff"] = attempt(doc, mechanism, hinge, ticks)
    # the constrained method on the stiff model: its no-progress detector waits 10 s, so the
    # run is still going when Cancel is clicked
    sim.Method = "constrained"
    doc.recompute()
    result["stiff_cancelled"] = attempt(doc, mechanism, hinge, ticks, cancel_after=1.0)
    return result


in_freecad.run_and_quit(check, watchdog_s=1100)
