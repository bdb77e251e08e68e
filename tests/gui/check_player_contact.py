"""GUI check run inside FreeCAD: the player's contact-force and gear tooth-force arrows, and the
plot dock listing the contact's and the coupler's columns, driven as a user drives them.

One mechanism: a steel ball (radius 10 mm) on a free hinge 5 mm above a plate (the ground), with
a soft sphere-plane contact, and two wheels (radii 30 and 60 mm, revolute hinges to the plate,
axes 90 mm apart) coupled as a gear pair (ratio -0.5), the first driven by 0.2 N m. The run is made
through the workbench's run path; the user selects the mechanism and presses Play; in the
player ticks "Contact forces", drags the slider to frames in flight and on the plate, steps
forward, plays slowly through the impact and pauses, ticks
"Reaction forces" too, and clicks Plot. What the arrows' Coin nodes hold (translation, direction,
length, switched on or off), the legend's and the coupler line's texts, and the plot dock's tree
are written out; a screenshot shows the contact arrow.

Started by tests/test_gui_player_contact.py through ``freecad_env.run_freecad_gui``; writes its
findings as JSON.
"""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import FreeCAD  # noqa: E402
import FreeCADGui  # noqa: E402
import in_freecad  # noqa: E402
import numpy as np  # noqa: E402

WORKBENCH = "MultibodyWorkbench"
W = in_freecad._widgets_module()
CONTACT = "Drop"
GEAR = "Mesh"
STIFFNESS = 1e7        # N/m^1.5
DRIVE = 0.2            # N m on the pinion


def build(doc):
    from MultibodyWB.document import factory
    plate = doc.addObject("Part::Box", "Plate")
    plate.Length, plate.Width, plate.Height = 100, 100, 10
    plate.Placement.Base = FreeCAD.Vector(-50, -50, -10)
    ball = doc.addObject("Part::Sphere", "Ball")
    ball.Radius = 10
    ball.Placement.Base = FreeCAD.Vector(0, 0, 15)
    wheels = []
    for name, r, x in (("Pinion", 30.0, 0.0), ("Wheel", 60.0, 90.0)):
        w = doc.addObject("Part::Cylinder", name)
        w.Radius, w.Height = r, 10.0
        w.Placement.Base = FreeCAD.Vector(x, 120, -10)
        wheels.append(w)
    doc.recompute()
    mech = factory.make_mechanism(doc, "Bench")
    ground = factory.make_body(doc, mech, plate, ground=True, name="Plate body")
    body = factory.make_body(doc, mech, ball, name="Ball body")
    centre = factory.make_marker(doc, body, None)
    factory.make_hinge(doc, mech, "free", centre, factory.make_marker(doc, ground, None),
                       name="Float")
    top = next(f"Face{i}" for i, f in enumerate(plate.Shape.Faces, 1)
               if abs(f.CenterOfMass.z) < 1e-9)
    on_plate = factory.make_marker(doc, ground, (plate, top))
    doc.recompute()
    # a soft contact (rubber-like): the impact lasts about a millisecond, over several frames
    factory.make_contact(doc, mech, centre, on_plate, ("sphere", {"radius": 10}),
                         ("plane", {}), STIFFNESS, name=CONTACT, restitution=0.8,
                         impact_speed="0.5 m/s")
    hinges, markers = [], []
    for w in wheels:
        wb = factory.make_body(doc, mech, w, density=7850, name=f"{w.Name} body")
        rim = next(f"Face{i}" for i, f in enumerate(w.Shape.Faces, 1)
                   if type(f.Surface).__name__ == "Cylinder")
        on_wheel = factory.make_marker(doc, wb, (w, rim))
        doc.recompute()
        offset = plate.Placement.inverse().multiply(on_wheel.Placement)
        fixed = factory.make_marker(doc, ground, None, offset=offset)
        hinges.append(factory.make_hinge(doc, mech, "revolute", on_wheel, fixed,
                                         name=f"{w.Name}Axle"))
        markers.append(on_wheel)
    factory.make_force(doc, mech, "point_torque", markers[0], direction=(0, 0, 1),
                       magnitude=str(DRIVE), name="Drive")
    factory.make_coupler(doc, mech, "gear", hinges[0], "rz", hinges[1], "rz", ratio=-0.5,
                         name=GEAR)
    doc.recompute()
    return mech, hinges


def widget(panel, name):
    return panel.form.findChild(W.QWidget, name)


def arrow(panel, label):
    """What the Coin nodes of the contact arrow ``label`` hold: ``shown`` (its group's switch
    and its own on), ``point`` (mm), ``direction`` (unit), ``length`` and ``radius`` (mm)."""
    from pivy import coin
    overlay = panel.overlay
    transform = overlay.contact_arrows[label]
    tip = transform.rotation.getValue().multVec(coin.SbVec3f(0.0, 1.0, 0.0)).getValue()
    scale = transform.scaleFactor.getValue()
    group = overlay.switches["contacts"]
    one = overlay.arrow_switches[("contacts", label)]
    return {"shown": (group.whichChild.getValue() == coin.SO_SWITCH_ALL
                      and one.whichChild.getValue() == coin.SO_SWITCH_ALL),
            "in_graph": group.findChild(one) >= 0 and overlay.root.findChild(group) >= 0
            and panel.view.getSceneGraph().findChild(overlay.root) >= 0,
            "point": [float(x) for x in transform.translation.getValue()],
            "direction": [float(x) for x in tip],
            "length": float(scale[1]), "radius": float(scale[0])}


def row(res, prefix, quantities, i):
    return [float(res[f"{prefix}.{q}"][i]) for q in quantities]


def check():
    result = {"freecad_version": FreeCAD.Version()[:3]}
    FreeCADGui.activateWorkbench(WORKBENCH)
    doc = FreeCAD.newDocument("PlayerContact")
    mech, hinges = build(doc)
    in_freecad.wait(0.3)
    from MultibodyWB.document import runs
    from MultibodyWB.objects.result import load
    run = runs.simulate_mechanism(mech, t_end=0.06, step=1e-5, output_step=1e-4)
    res = load(run)
    result["columns"] = [n for n in res.names if n.startswith((CONTACT + ".", GEAR + "."))]
    fn = [float(x) for x in res[f"{CONTACT}.Fn"]]
    result["fn"] = fn
    result["t"] = [float(x) for x in res.time]

    # the user selects the mechanism and presses Play
    FreeCADGui.Selection.clearSelection()
    FreeCADGui.Selection.addSelection(doc.Name, mech.Name)
    FreeCADGui.runCommand("MultibodyWB_Play")
    in_freecad.wait(0.5)
    from MultibodyWB.gui import player as player_module
    panel = player_module.current
    result["player_open"] = panel is not None
    box = widget(panel, "ContactArrows")
    result["checkbox"] = [box.text(), box.toolTip(), box.isEnabled(), box.isChecked()]
    legend = widget(panel, "ArrowScale")
    result["legend_before"] = [legend.isVisible(), legend.text()]
    result["contact_labels"] = list(panel.overlay.contact_arrows)
    box.click()
    in_freecad.process_events()
    result["checked"] = box.isChecked()
    result["legend"] = [legend.isVisible(), legend.text()]
    result["model_size"] = panel.model_size
    result["legend_force"] = panel.legend_force

    slider = widget(panel, "Slider")
    touching = [i for i, f in enumerate(fn) if f > 0.0]
    peak = max(range(len(fn)), key=lambda i: fn[i])
    # frames: the start (in flight), the peak of the first impact, a lighter touching frame,
    # one in flight after the first bounce
    later_touch = next((i for i in touching if i > peak and fn[i] < 0.3 * fn[peak]), None)
    after = next((i for i in range(peak, len(fn)) if fn[i] == 0.0), None)
    frames = {}
    for key, i in (("start", 0), ("peak", peak), ("light", later_touch), ("flight", after)):
        if i is None:
            continue
        slider.setValue(i)                       # the user drags the slider to frame i
        in_freecad.process_events()
        frames[key] = {"frame": i, "time_label": widget(panel, "Time").text(),
                       "arrow": arrow(panel, CONTACT),
                       "force": row(res, CONTACT, ("Fx", "Fy", "Fz"), i),
                       "contact_point": row(res, CONTACT, ("x", "y", "z"), i),
                       "fn": fn[i], "depth": float(res[f"{CONTACT}.depth"][i]),
                       "gear": arrow(panel, GEAR),
                       "coupler_text": widget(panel, "CouplerLoads").text(),
                       "coupler_visible": widget(panel, "CouplerLoads").isVisible(),
                       "T": row(res, GEAR, ("T1", "T2"), i),
                       "axes": [[float(v) for v in h.InputMarker.Placement.Base]
                                for h in hinges],
                       "axis_z": [[float(v) for v in h.InputMarker.Placement.Rotation.multVec(
                           FreeCAD.Vector(0, 0, 1))] for h in hinges]}
    result["frames"] = frames

    # the user steps one frame forward with the button, then plays slowly through the impact
    slider.setValue(peak)
    widget(panel, "Forward").click()
    in_freecad.process_events()
    result["forward"] = {"frame": panel.frame_of(panel.t), "arrow": arrow(panel, CONTACT),
                         "force": row(res, CONTACT, ("Fx", "Fy", "Fz"), peak + 1)}
    slider.setValue(touching[0])
    speed = widget(panel, "Speed")
    speed.setCurrentIndex(speed.findData(0.001))
    t_before = panel.t
    widget(panel, "Play").click()
    in_freecad.wait(0.4)
    widget(panel, "Play").click()                # pause
    in_freecad.process_events()
    t = panel.t
    result["played"] = {"t_before": t_before, "t": t, "playing": panel.playing,
                        "arrow": arrow(panel, CONTACT),
                        "force": [float(np.interp(t, res.time, res[f"{CONTACT}.F{a}"]))
                                  for a in "xyz"],
                        "point": [1000.0 * float(np.interp(t, res.time, res[f"{CONTACT}.{a}"]))
                                  for a in "xyz"],
                        "fn": float(np.interp(t, res.time, res[f"{CONTACT}.Fn"]))}
    result["scale"] = panel.arrow_scale
    result["peak_tooth"] = max(abs(float(t)) / 0.03 for t in res[f"{GEAR}.T1"])
    result["peak_contact"] = max(
        math.sqrt(sum(float(res[f"{CONTACT}.F{a}"][i]) ** 2 for a in "xyz"))
        for i in range(len(fn)))

    # the screenshot: the peak frame, contact arrows on (dragged there from the start: paused
    # between two output times, the slider may show the peak's frame already and not move)
    slider.setValue(0)
    slider.setValue(peak)
    in_freecad.process_events()
    view = FreeCADGui.ActiveDocument.ActiveView
    view.viewIsometric()
    view.fitAll()
    in_freecad.wait(0.3)
    result["shot"] = in_freecad.grab_main_window("player_contact.png", size=(1280, 960))
    red = in_freecad.count_colors(result["shot"]["path"], {"arrow": (255, 64, 13)},
                                  tolerance=50, step=1)
    result["arrow_pixels"] = red["arrow"]

    # the reaction forces too: one scale for both kinds, the legend follows
    widget(panel, "Arrows").click()
    in_freecad.process_events()
    result["legend_both"] = legend.text()
    result["scale_both"] = panel.arrow_scale
    result["peak_reactions"] = panel._peaks["reactions"]
    result["arrow_both"] = arrow(panel, CONTACT)
    box.click()                                  # contact arrows off
    in_freecad.process_events()
    result["contacts_off"] = [box.isChecked(), arrow(panel, CONTACT)["shown"],
                              arrow(panel, GEAR)["shown"], legend.text(), panel.arrow_scale]

    # the plot dock: the user clicks Plot in the player
    widget(panel, "PlotButton").click()
    in_freecad.wait(0.5)
    dock = FreeCADGui.getMainWindow().findChild(W.QDockWidget, "MultibodyPlots")
    result["dock"] = dock is not None and dock.isVisible()
    tree = dock.findChild(W.QTreeWidget, "quantities")
    groups = {}
    for k in range(tree.topLevelItemCount()):
        top = tree.topLevelItem(k)
        groups[top.text(0)] = [[top.child(j).text(0), top.child(j).text(1),
                                top.child(j).toolTip(0)] for j in range(top.childCount())]
    result["tree_titles"] = [tree.topLevelItem(k).text(0)
                             for k in range(tree.topLevelItemCount())]
    result["tree"] = {k: v for k, v in groups.items() if k in (CONTACT, GEAR)}
    # the user ticks the contact's Fn and the coupler's T1
    plot = panel.plot_panel
    from MultibodyWB.gui.qt import QtCore
    for title, quantity in ((CONTACT, "Fn"), (GEAR, "T1")):
        top = next(tree.topLevelItem(k) for k in range(tree.topLevelItemCount())
                   if tree.topLevelItem(k).text(0) == title)
        top.setExpanded(True)
        item = next(top.child(j) for j in range(top.childCount())
                    if top.child(j).text(0) == quantity)
        item.setCheckState(0, QtCore.Qt.Checked)     # a click on its box
        in_freecad.process_events()
    result["plot_selected"] = plot.selected()
    result["plot_axes"] = [[ax.get_ylabel(), unit] for ax, unit in plot.axes]
    table = dock.findChild(W.QTableWidget, "values")
    result["table_headers"] = [table.horizontalHeaderItem(c).text()
                               for c in range(table.columnCount())]
    slider.setValue(peak)
    in_freecad.process_events()
    result["table_row"] = [table.item(0, c).text() if table.item(0, c) else ""
                           for c in range(table.columnCount())]
    result["fn_peak"] = fn[peak]
    result["drive"] = DRIVE
    panel.close()
    in_freecad.process_events()
    return result


in_freecad.run_and_quit(check, watchdog_s=500)
