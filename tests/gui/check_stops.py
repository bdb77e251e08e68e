"""GUI check run inside FreeCAD: a hinge's end stops in its task panel, driven as a user drives it.

A steel bar (100 x 10 x 10 mm) hangs on a revolute hinge ``Joint`` to a ground frame. The user
double-clicks the hinge, ticks "Use limits" (the stop fields appear, the stop stiffness filled
with its 50 Hz default), clicks Cancel (all back); opens it again, ticks the limits, types the
limits and a stop stiffness and clicks OK (one undo step). The hinge's properties and the
neutral model's stop fields are read. Screenshots of the main window with the panel open and of
the panel's form; the hinge's symbol gains the limits' arc and ticks.

Started by tests/test_gui_stops.py through ``freecad_env.run_freecad_gui``; writes its findings
as JSON.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import FreeCAD  # noqa: E402
import FreeCADGui  # noqa: E402
import in_freecad  # noqa: E402
from in_freecad import click, panel, type_into, widget  # noqa: E402

WORKBENCH = "MultibodyWorkbench"
W = in_freecad._widgets_module()
STOPS = ("StopStiffnessRz", "StopRestitutionRz", "StopImpactSpeedRz")


def shown(names):
    """Which of the fields ``names`` the user sees, and their texts."""
    return {n: [widget(n).isVisible(), widget(n).isEnabled(), widget(n).text()] for n in names}


def line_sets(obj):
    """Number of line sets in ``obj``'s drawing (the limits add an arc and two ticks)."""
    from pivy import coin
    search = coin.SoSearchAction()
    search.setType(coin.SoLineSet.getClassTypeId())
    search.setInterest(coin.SoSearchAction.ALL)
    search.apply(obj.ViewObject.RootNode)
    return search.getPaths().getLength()


def build(doc):
    from MultibodyWB.document import factory
    V, P = FreeCAD.Vector, FreeCAD.Placement
    frame = doc.addObject("Part::Box", "FrameSolid")
    frame.Length, frame.Width, frame.Height = 40, 40, 10
    frame.Placement = P(V(-50, -20, 20), FreeCAD.Rotation())
    link = doc.addObject("Part::Box", "LinkSolid")
    link.Length, link.Width, link.Height = 100, 10, 10
    link.Placement = P(V(0, -5, -5), FreeCAD.Rotation())
    doc.recompute()
    mech = factory.make_mechanism(doc, "Pendulum")
    ground = factory.make_body(doc, mech, frame, ground=True, name="Frame")
    body = factory.make_body(doc, mech, link, density=7850, name="Link")
    m_link = factory.make_marker(doc, body, None, offset=V(0, 5, 5), name="LinkEnd")
    m_frame = factory.make_marker(doc, ground, None, offset=V(50, 20, -20), name="Pivot")
    for m in (m_link, m_frame):
        factory.orient_marker(m, z=(0, 1, 0), x=(1, 0, 0))
    factory.make_hinge(doc, mech, "revolute", m_link, m_frame, name="Joint")
    doc.recompute()
    return mech


def check():
    result = {"freecad_version": FreeCAD.Version()[:3]}
    FreeCADGui.activateWorkbench(WORKBENCH)
    doc = FreeCAD.newDocument("Stops")
    mech = build(doc)
    hinge = doc.getObject("Joint")
    doc.clearUndos()
    doc.UndoMode = 1
    FreeCADGui.ActiveDocument.ActiveView.viewFront()
    FreeCADGui.SendMsgToActiveView("ViewFit")
    in_freecad.wait(0.5)
    undo0 = doc.UndoCount
    result["lines_before"] = line_sets(hinge)

    # ticking the limits, then Cancel
    hinge.ViewObject.doubleClicked()
    in_freecad.wait(0.3)
    result["panel"] = type(panel()).__name__
    result["before_tick"] = shown(STOPS + ("LowerLimitRz",))
    widget("UseLimits").click()
    in_freecad.wait(0.2)
    result["after_tick"] = shown(STOPS + ("LowerLimitRz",))
    result["stiffness_ticked"] = hinge.StopStiffnessRz
    result["tooltip"] = panel().fields["StopStiffnessRz"].label.toolTip()
    click("Cancel")
    result["after_cancel"] = [hinge.UseLimits, hinge.StopStiffnessRz, doc.UndoCount - undo0]

    # ticking the limits, typing them and a stop stiffness, OK
    hinge.ViewObject.doubleClicked()
    in_freecad.wait(0.3)
    widget("UseLimits").click()
    in_freecad.wait(0.2)
    type_into("LowerLimitRz", "-10")
    type_into("UpperLimitRz", "45")
    type_into("StopStiffnessRz", "40")
    type_into("StopRestitutionRz", "0.3")
    result["typed"] = shown(STOPS)
    result["message"] = widget("message").text()
    result["screenshot"] = in_freecad.grab_main_window("stops_panel.png")
    path = os.path.join(in_freecad.output_dir(), "stops_panel_form.png")
    result["screenshot_form"] = path if panel().form[0].grab().save(path) else None
    click("Ok")
    result["open_after_ok"] = bool(FreeCADGui.Control.activeDialog())
    in_freecad.wait(0.3)
    result["lines_after"] = line_sets(hinge)
    result["after_ok"] = {n: str(getattr(hinge, n)) for n in
                          ("UseLimits", "LowerLimitRz", "UpperLimitRz") + STOPS}
    result["undo_after_ok"] = [doc.UndoCount - undo0, list(doc.UndoNames[:1])]
    from MultibodyWB.objects import export
    h = export.to_model(mech).hinge("Joint")
    result["model"] = {name: [float(x) for x in getattr(h, name)]
                       for name in ("lower_limits", "upper_limits", "stop_stiffness",
                                    "stop_restitution", "stop_impact_speed")}
    result["problems"] = [f"{o.Label} {p}: {m}"
                          for o, p, m in export.collect(mech).object_problems]
    result["screenshot_after"] = in_freecad.grab_main_window("stops_after_ok.png")
    result["report_view"] = in_freecad.report_view_text()
    return result


in_freecad.run_and_quit(check, watchdog_s=200)
