"""GUI check run inside FreeCAD: one hinge of every type and one force of every type, side by side.

A long ground block carries a row of small blocks ("arms"); arm i is joined to the ground by a
hinge of the i-th type of the solver's HINGE_TYPES, then come the forces of FORCE_TYPES (point force
and torque at an arm's top, the spring-dampers between an arm's top and the ground). Reports what
each view provider draws (bounding box of its symbol) and takes a screenshot of the row
(``glyph_gallery.png``).

Started by tests/test_fc_gui.py through ``freecad_env.run_freecad_gui``; writes its findings as
JSON.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import FreeCAD  # noqa: E402
import FreeCADGui  # noqa: E402
import in_freecad  # noqa: E402

PITCH = 60.0     #: mm between the arms


def check():
    import Part
    from MultibodyWB.document import factory
    from MultibodyWB.solver.model import FORCE_TYPES, HINGE_TYPES
    FreeCADGui.activateWorkbench("MultibodyWorkbench")
    doc = FreeCAD.newDocument("MultibodyGallery")
    count = len(HINGE_TYPES) + len(FORCE_TYPES)
    base = doc.addObject("Part::Feature", "Base")
    base.Shape = Part.makeBox(count * PITCH, 40, 10, FreeCAD.Vector(-PITCH / 2, -20, -10))
    arms = []
    for i in range(count):
        arm = doc.addObject("Part::Feature", f"Arm{i}")
        arm.Shape = Part.makeBox(16, 16, 40, FreeCAD.Vector(i * PITCH - 8, -8, 20))
        arms.append(arm)
    doc.recompute()
    mechanism = factory.make_mechanism(doc, "Gallery")
    ground = factory.make_body(doc, mechanism, [base], ground=True, name="Ground")
    ends = []
    for i, arm in enumerate(arms):
        body = factory.make_body(doc, mechanism, [arm], name=f"Body{i}")
        low = factory.make_marker(doc, body, offset=FreeCAD.Vector(i * PITCH, 0, 20))
        top = factory.make_marker(doc, body, offset=FreeCAD.Vector(i * PITCH, 0, 60))
        fixed = factory.make_marker(doc, ground, offset=FreeCAD.Vector(i * PITCH, 0, 10))
        ends.append((low, top, fixed))
    for (low, _, fixed), name in zip(ends, HINGE_TYPES):
        factory.make_hinge(doc, mechanism, name, low, fixed, name=name.capitalize())
    for (low, top, fixed), name in zip(ends[len(HINGE_TYPES):], FORCE_TYPES):
        kind = FORCE_TYPES[name]
        # each force's arm still needs a hinge to be part of the mechanism
        factory.make_hinge(doc, mechanism, "free", low, fixed, name=f"Free_{name}")
        options = {"direction": (0, 0, -1)} if kind.markers == 1 else {}
        factory.make_force(doc, mechanism, name, top, fixed if kind.markers == 2 else None,
                           name=name, **options)
    doc.recompute()
    mechanism.ViewObject.GlyphSize = 22.0        # the long base would make the automatic size large
    in_freecad.wait(0.5)
    result = {"hinge_types": list(HINGE_TYPES), "force_types": list(FORCE_TYPES),
              "objects": in_freecad.describe(doc)}
    view = FreeCADGui.ActiveDocument.ActiveView
    view.viewFront()
    view.fitAll()
    in_freecad.wait(0.3)
    path = os.path.join(in_freecad.output_dir(), "glyph_gallery.png")
    view.saveImage(path, 1600, 500, "Current")
    view.viewIsometric()
    view.fitAll()
    in_freecad.wait(0.3)
    view.saveImage(os.path.join(in_freecad.output_dir(), "glyph_gallery_iso.png"), 1600, 900,
                   "Current")
    result["screenshot"] = path
    return result


in_freecad.run_and_quit(check)
