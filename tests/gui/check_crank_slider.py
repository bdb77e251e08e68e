"""GUI check run inside FreeCAD: the crank-slider engine of ``MultibodyWB/examples_fc`` in 3D.

Builds the engine from solids, takes an isometric screenshot of the 3D view
(``crank_slider_gui.png``, 1280 x 960), one of the whole main window (``main_window.png``) and one
with only the workbench's toolbars and the tree expanded (``toolbar.png``), inspects the symbols
each view provider draws, the tree, the view settings, the problem marking, then saves the
document, closes it and opens it again (also as a file saved when every object had the base view
provider class), and checks that everything is drawn again.

Started by tests/test_fc_gui.py through ``freecad_env.run_freecad_gui``; writes its findings as
JSON.
"""

import os
import sys
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import FreeCAD  # noqa: E402
import FreeCADGui  # noqa: E402
import in_freecad  # noqa: E402

WORKBENCH = "MultibodyWorkbench"
SIZE = (1280, 960)
#: Colours looked for in the screenshot (r, g, b): the symbols' and the triads' axes.
COLORS = {"hinge_amber": (255, 171, 0), "force_magenta": (217, 26, 191),
          "axis_red": (230, 26, 26), "axis_green": (26, 179, 26), "axis_blue": (26, 64, 242)}


def screenshot(name):
    view = FreeCADGui.ActiveDocument.ActiveView
    view.viewIsometric()
    view.fitAll()
    in_freecad.wait(0.3)
    path = os.path.join(in_freecad.output_dir(), name)
    view.saveImage(path, SIZE[0], SIZE[1], "Current")
    return {"path": path, "colors": in_freecad.count_colors(path, COLORS)}


def make_legacy_copy(path, legacy):
    """Copy the FCStd file ``path`` to ``legacy`` with every Multibody view provider saved as the
    base class (how documents were saved before the per-concept view providers)."""
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(legacy, "w", zipfile.ZIP_DEFLATED) as out:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "GuiDocument.xml":
                text = data.decode("utf-8")
                for concept in ("mechanism", "body", "marker", "hinge", "force", "simulation"):
                    text = text.replace(
                        f'module="MultibodyWB.viewproviders.{concept}" class="ViewProvider'
                        f'{concept.capitalize()}"',
                        'module="MultibodyWB.viewproviders.base" class="ViewProvider"')
                data = text.encode("utf-8")
            out.writestr(item, data)


def check():
    result = {"freecad_version": FreeCAD.Version()[:3]}
    FreeCADGui.activateWorkbench(WORKBENCH)
    doc = FreeCAD.newDocument("CrankSliderGui")
    from MultibodyWB.examples_fc import crank_slider
    mechanism = crank_slider.setup(doc)
    in_freecad.wait(0.5)
    settings = mechanism.ViewObject.Proxy.settings()
    result["settings"] = {"size": settings.size, "triads": settings.triads,
                          "glyphs": settings.glyphs, "labels": settings.labels,
                          "on_top": settings.on_top}
    result["view_properties"] = {name: str(getattr(mechanism.ViewObject, name))
                                 for name in ("GlyphSize", "ShowTriads", "ShowGlyphs",
                                              "ShowLabels", "GlyphsOnTop")}
    result["objects"] = in_freecad.describe(doc)
    members = in_freecad.multibody_objects(doc)
    result["marker_placements"] = {o.Name: list(o.Placement.Base) for o in members
                                   if o.Proxy.Type == "Multibody::Marker"}
    result["hinge_frames"] = {o.Name: list(o.OutputMarker.Placement.Base) for o in members
                              if o.Proxy.Type == "Multibody::Hinge"}
    result["tree"] = in_freecad.tree_lines()
    result["screenshot"] = screenshot("crank_slider_gui.png")
    result["main_window"] = in_freecad.grab_main_window("main_window.png", size=(1280, 960))

    # -- the workbench's toolbars and the tree, a hinge selected -----------------------------------
    in_freecad.show_model_tab()
    gui_doc = FreeCADGui.getDocument(doc.Name)
    for obj in [mechanism] + [o for o in mechanism.Group if o.Proxy.Type == "Multibody::Body"]:
        gui_doc.toggleTreeItem(obj, 2)           # expand
    FreeCADGui.Selection.addSelection(doc.getObject("MainBearing"))
    restore = in_freecad.show_only_toolbars(lambda title: title.startswith("Multibody") or
                                            title == "Workbench")
    result["toolbars_shown"] = {title: names
                                for title, names in in_freecad.toolbar_actions().items()
                                if title.startswith("Multibody")}
    in_freecad.wait(0.5)                          # the property view follows the selection
    result["toolbar_screenshot"] = in_freecad.grab_main_window("toolbar.png", size=(1280, 960))
    restore()
    FreeCADGui.Selection.clearSelection()

    # -- view settings: the triads off and on again, a larger size ------------------------------
    marker = doc.getObject("CrankMain")
    mechanism.ViewObject.ShowTriads = False
    off = marker.ViewObject.Proxy.display.getNumChildren()
    mechanism.ViewObject.ShowTriads = True
    on = marker.ViewObject.Proxy.display.getNumChildren()
    mechanism.ViewObject.GlyphSize = 50.0
    big = in_freecad.symbol_box(marker)
    mechanism.ViewObject.GlyphSize = 0.0
    result["switches"] = {"triad_children_off": off, "triad_children_on": on,
                          "triad_box_at_50mm": big}

    # -- a problem: red symbol, warning icon; cleared again --------------------------------------
    hinge = doc.getObject("MainBearing")
    hinge.Problem = "InputMarker: a problem put there by the test"
    result["problem_marked"] = {"icon": hinge.ViewObject.Proxy.getIcon(),
                                "colors": in_freecad.materials(hinge)}
    hinge.Problem = ""
    result["problem_cleared"] = {"icon": hinge.ViewObject.Proxy.getIcon(),
                                 "colors": in_freecad.materials(hinge)}

    # -- save, close, reopen ---------------------------------------------------------------------
    out = in_freecad.output_dir()
    path = os.path.join(out, "crank_slider_gui.FCStd")
    mechanism.ViewObject.ShowLabels = True          # a view setting that must survive
    doc.saveAs(path)
    FreeCAD.closeDocument(doc.Name)
    in_freecad.wait(0.3)
    reopened = FreeCAD.openDocument(path)
    in_freecad.wait(0.5)
    result["reopened"] = in_freecad.describe(reopened)
    result["reopened_touched"] = [o.Name for o in reopened.Objects if "Touched" in o.State]
    result["reopened_labels"] = bool(reopened.getObject("CrankSlider").ViewObject.ShowLabels)
    result["reopened_tree"] = in_freecad.tree_lines()
    result["reopened_screenshot"] = screenshot("crank_slider_reopened.png")
    FreeCAD.closeDocument(reopened.Name)

    legacy = os.path.join(out, "crank_slider_legacy.FCStd")
    make_legacy_copy(path, legacy)
    with zipfile.ZipFile(legacy) as archive:
        result["legacy_file_classes"] = sorted(
            set(part.split('"')[0] for part in
                archive.read("GuiDocument.xml").decode("utf-8").split('class="')[1:]))
    old = FreeCAD.openDocument(legacy)
    in_freecad.wait(0.5)
    result["legacy"] = in_freecad.describe(old)
    FreeCAD.closeDocument(old.Name)
    return result


in_freecad.run_and_quit(check)
