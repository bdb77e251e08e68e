"""GUI check run inside FreeCAD: a recorded macro (``MultibodyWB.document.factory.make_...``) run in
a fresh GUI session in which the Multibody workbench was never activated (a user starting FreeCAD
and running the macro at once).

Reports the workbench shown, the class of each object's view provider, which objects draw their
symbol and a screenshot. Started by tests/test_gui_macro.py; writes its findings as JSON.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import FreeCAD  # noqa: E402
import FreeCADGui  # noqa: E402
import in_freecad  # noqa: E402

# what a recorded macro says
MACRO = """\
import FreeCAD
import Part
doc = FreeCAD.newDocument("Macro")
base = doc.addObject("Part::Box", "Base")
arm = doc.addObject("Part::Box", "Arm")
arm.Placement.Base = FreeCAD.Vector(0, 0, 20)
doc.recompute()
import MultibodyWB.document.factory
mechanism = MultibodyWB.document.factory.make_mechanism(doc)
ground = MultibodyWB.document.factory.make_body(doc, mechanism, base, ground=True, name="Ground")
body = MultibodyWB.document.factory.make_body(doc, mechanism, arm, name="ArmBody")
doc.recompute()
"""


def check():
    result = {"workbench_before": FreeCADGui.activeWorkbench().name()}
    exec(compile(MACRO, "recorded_macro.FCMacro", "exec"), {})
    doc = FreeCAD.getDocument("Macro")
    FreeCADGui.SendMsgToActiveView("ViewFit")
    in_freecad.process_events()
    objects = in_freecad.multibody_objects(doc)
    result["objects"] = sorted(o.Name for o in objects)
    result["view_providers"] = {
        o.Name: (f"{type(o.ViewObject.Proxy).__module__}.{type(o.ViewObject.Proxy).__name__}"
                 if getattr(o.ViewObject, "Proxy", None) is not None else None)
        for o in objects}
    result["drawn"] = sorted(o.Name for o in objects if in_freecad.symbol_box(o) is not None)
    result["workbench_after"] = FreeCADGui.activeWorkbench().name()
    result["screenshot"] = in_freecad.grab_main_window("macro_before_activation.png")
    return result


in_freecad.run_and_quit(check, watchdog_s=300)
