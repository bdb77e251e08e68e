"""GUI check run inside FreeCAD: a designer's first contact, on a ground made with Part booleans,
run with the defaults (issue 32, items 1 and 2).

The ground is a plate with a bore cut through it (Part Cut) and a rib fused under it (Part Fuse):
a ``Part.Compound`` of one solid. A 10 mm steel ball floats 80 mm above it on a free hinge. The
user clicks the ground's top face, then the ball, and presses Contact: before, the command raised
``'Part.Compound' object has no attribute 'CenterOfMass'`` and made nothing. Now it makes the
sphere-plane contact (no convex hull computed on the way) with the default (Hertz, steel)
stiffness, and in the same undo step switches the Simulation from rk4 at 1 ms (too long for the
contact) to RK45 at a relative tolerance of 1e-10, said in the Report view and in the panel; OK
is clicked. The mechanism is selected, Simulate pressed, Run clicked: the run must end clean
(stored, no warning, the energy balance closed to 1e-6) with the ball back up at the
restitution's height. Undo then takes the contact and the Simulation's settings back.

Started by tests/test_gui_contact_ground.py through ``freecad_env.run_gui_check``; writes its
findings as JSON.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import FreeCAD  # noqa: E402
import FreeCADGui  # noqa: E402
import in_freecad  # noqa: E402
from in_freecad import click, panel, shot, widget  # noqa: E402

WORKBENCH = "MultibodyWorkbench"


def wait_for(predicate, timeout=120.0):
    t0 = time.perf_counter()
    while not predicate():
        if time.perf_counter() - t0 > timeout:
            raise TimeoutError("waited too long")
        in_freecad.process_events()
        time.sleep(0.005)
    in_freecad.process_events()
    return time.perf_counter() - t0


def build(doc):
    from MultibodyWB.document import factory
    plate = doc.addObject("Part::Box", "Plate")
    plate.Length, plate.Width, plate.Height = 100, 100, 10
    plate.Placement.Base = FreeCAD.Vector(-50, -50, -10)
    bore = doc.addObject("Part::Cylinder", "Bore")
    bore.Radius, bore.Height = 5, 30
    bore.Placement.Base = FreeCAD.Vector(30, 30, -20)
    rib = doc.addObject("Part::Box", "Rib")
    rib.Length, rib.Width, rib.Height = 10, 100, 20
    rib.Placement.Base = FreeCAD.Vector(-50, -50, -20)
    cut = doc.addObject("Part::Cut", "Cut")
    cut.Base, cut.Tool = plate, bore
    ground_solid = doc.addObject("Part::Fuse", "Fuse")
    ground_solid.Base, ground_solid.Tool = cut, rib
    ball = doc.addObject("Part::Sphere", "Ball")
    ball.Radius = 10
    ball.Placement.Base = FreeCAD.Vector(0, 0, 90)
    doc.recompute()
    mech = factory.make_mechanism(doc, "Drop")
    ground = factory.make_body(doc, mech, ground_solid, ground=True, name="Ground body")
    body = factory.make_body(doc, mech, ball, name="Ball body")
    factory.make_hinge(doc, mech, "free", factory.make_marker(doc, body, None),
                       factory.make_marker(doc, ground, None), name="Float")
    doc.recompute()
    top = next(f"Face{i}" for i, f in enumerate(ground_solid.Shape.Faces, 1)
               if abs(f.CenterOfMass.z) < 1e-9 and type(f.Surface).__name__ == "Plane")
    return mech, ground_solid, ball, top


def check():
    from MultibodyWB.document import runs
    from MultibodyWB.objects import contact as contact_module
    from MultibodyWB.objects.base import members, type_of
    from MultibodyWB.objects.result import load
    from MultibodyWB.objects.simulation import TYPE as SIMULATION
    result = {"freecad_version": FreeCAD.Version()[:3]}
    FreeCADGui.activateWorkbench(WORKBENCH)
    doc = FreeCAD.newDocument("Ground")
    mech, ground_solid, ball, top = build(doc)
    result["ground_shape"] = [ground_solid.Shape.ShapeType, len(ground_solid.Shape.Solids),
                              hasattr(ground_solid.Shape, "CenterOfMass")]
    (sim,) = members(mech, SIMULATION)
    result["step_before"] = str(sim.Step)
    result["integrator"] = [sim.Method, sim.Integrator, str(sim.EndTime)]
    doc.clearUndos()
    doc.UndoMode = 1
    in_freecad.wait(0.5)

    # no hull for a planar face: count the convex hulls the command computes
    hulls = []
    real = contact_module.convex
    contact_module.convex = lambda *a, **k: hulls.append(a[0].Name) or real(*a, **k)

    # the user clicks the ground's top face, then the ball, and presses Contact
    FreeCADGui.Selection.clearSelection()
    FreeCADGui.Selection.addSelection(doc.Name, ground_solid.Name, top)
    FreeCADGui.Selection.addSelection(doc.Name, ball.Name, "Face1")
    in_freecad.process_events()
    before = {o.Name for o in doc.Objects}
    report_before = in_freecad.report_view_text()
    FreeCADGui.runCommand("MultibodyWB_Contact")
    in_freecad.wait(0.5)
    contact_module.convex = real
    result["hulls"] = hulls
    made = [o for o in doc.Objects if o.Name not in before]
    result["made"] = sorted(type_of(o) or o.TypeId for o in made)
    result["undo_after_command"] = [doc.UndoCount, list(doc.UndoNames)]
    report = in_freecad.report_view_text()[len(report_before):]
    result["report_after_command"] = report
    hit = next(o for o in made if type_of(o) == "Multibody::Contact")
    result["shapes"] = [hit.InputShape, hit.OutputShape, hit.InputRadius.Value]
    result["stiffness"] = hit.Stiffness
    result["rule"] = hit.StiffnessRule
    result["step_after"] = str(sim.Step)
    result["integrator_after"] = [sim.Integrator, str(sim.RelativeTolerance)]
    p = panel()
    result["panel"] = type(p).__name__ if p is not None else None
    result["step_note"] = widget("StepNote").text() if p is not None else ""
    result["step_note_visible"] = widget("StepNote").isVisible() if p is not None else False
    result["panel_shot"] = shot("contact_ground_panel.png")
    result["ok"] = click("Ok")
    in_freecad.wait(0.3)

    # Simulate with the defaults: select the mechanism, press Simulate, click Run
    from MultibodyWB.gui import simulate_panel
    FreeCADGui.Selection.clearSelection()
    FreeCADGui.Selection.addSelection(mech)
    FreeCADGui.runCommand("MultibodyWB_Simulate")
    in_freecad.process_events()
    sp = simulate_panel.current
    result["simulate_panel"] = sp is not None
    t0 = time.perf_counter()
    sp.run_button.click()
    result["run_seconds"] = wait_for(lambda: not sp.running and not sp.timer.isActive(),
                                     timeout=900)
    result["status"] = sp.status.text()
    result["messages"] = sp.messages.toPlainText()
    result["run_shot"] = shot("contact_ground_run.png")
    stored = runs.latest_result(mech)
    result["stored"] = stored is not None
    if stored is not None:
        res = load(stored)
        balance = res.energy_balance()
        result["warnings"] = list(stored.Warnings)
        result["step_of_run"] = float(res.meta.get("step", 0.0))
        result["run_settings"] = [res.meta.get("integrator"),
                                  float(res.meta.get("relative_tolerance", 0.0))]
        result["balance"] = {k: float(v) for k, v in balance.items()}
        z = [float(v) for v in res["Ball body.z"]]
        fn = [float(v) for v in res[f"{hit.Label}.Fn"]]
        result["z"], result["fn"] = z, fn
        result["time"] = [float(v) for v in res.time]
    sp.close()
    in_freecad.process_events()
    result["seconds_all"] = time.perf_counter() - t0

    # undo: the stored run, the panel's OK (nothing changed: may be no step), the contact
    names = list(doc.UndoNames)
    result["undo_names"] = names
    for name in names[:names.index("Contact") + 1] if "Contact" in names else []:
        doc.undo()
    doc.recompute()
    result["after_undo"] = {"step": str(sim.Step), "integrator": sim.Integrator,
                            "relative_tolerance": str(sim.RelativeTolerance),
                            "contacts": [o.Name for o in doc.Objects
                                         if type_of(o) == "Multibody::Contact"]}
    result["report"] = in_freecad.report_view_text()
    return result


in_freecad.run_and_quit(check, watchdog_s=1200)
