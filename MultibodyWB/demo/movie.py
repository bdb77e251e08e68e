"""Run inside FreeCAD's GUI by the demo: open the engine's .FCStd, play its stored run, and
render the playback to an animated GIF with FreeCAD's own 3D view; save the document again so
that it has its GUI part (a file saved without a GUI opens with every object hidden).

Inputs (environment): ``MBWB_DEMO_FCSTD`` the document, ``MBWB_DEMO_GIF`` the GIF to write,
``MBWB_DEMO_STATUS`` a JSON file for what happened, ``MBWB_DEMO_SCREENSHOT`` (optional) a PNG of
the player's first frame. Nothing is solved here: the results come from the document.
"""

import json
import os
import traceback

import time

import FreeCAD
import FreeCADGui
from PySide import QtCore


def _settle(seconds=0.5):
    """Let the GUI draw what was just opened (the view fits only what is drawn)."""
    from MultibodyWB.gui.qt import process_events
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        process_events()
        time.sleep(0.02)


def _camera(eye):
    """The camera rotation looking from direction ``eye`` at the model, z up."""
    z = FreeCAD.Vector(*eye).normalize()            # the camera's z: towards the viewer
    x = FreeCAD.Vector(0, 0, 1).cross(z).normalize()
    y = z.cross(x)
    m = FreeCAD.Matrix(x.x, y.x, z.x, 0, x.y, y.y, z.y, 0, x.z, y.z, z.z, 0)
    return FreeCAD.Rotation(m)


def _render():
    from MultibodyWB.document import runs
    from MultibodyWB.gui import player
    from MultibodyWB.objects.base import type_of
    doc = FreeCAD.openDocument(os.environ["MBWB_DEMO_FCSTD"])
    FreeCADGui.activateWorkbench("MultibodyWorkbench")
    mechanism = next(o for o in doc.Objects if type_of(o) == "Multibody::Mechanism")
    result = runs.latest_result(mechanism)
    _settle()
    view = FreeCADGui.getDocument(doc.Name).ActiveView
    panel = player.open_player(mechanism, result)
    liner = doc.getObject("Liner")
    if liner is not None:               # see the piston inside the cylinder
        liner.ViewObject.Transparency = 70
    _settle()
    view.setCameraOrientation(_camera((0.45, 1.0, 0.35)))   # from behind: crank before its case
    view.fitAll()
    panel.arrows.setChecked(True)
    panel.set_traces(["CrankPinMarker", "RodSmallEnd"])
    _settle()
    status = {"document": doc.FileName, "result": result.Label, "frames": len(panel.times)}
    shot = os.environ.get("MBWB_DEMO_SCREENSHOT")
    if shot:
        panel.set_frame(len(panel.times) // 3)
        view.saveImage(shot, 800, 600, "Current")
        status["screenshot"] = shot
    times = panel.movie_times(fps=20)
    status["gif"] = panel.export_movie(os.environ["MBWB_DEMO_GIF"], 480, 360, fps=20)
    status["gif_frames"] = len(times)
    panel.close()
    doc.save()              # now with its GUI part: the file opens with the solids shown
    status["saved_with_gui"] = True
    return status


def main():
    try:
        status = _render()
    except Exception:  # reported by the demo, which prints it
        status = {"error": traceback.format_exc()}
    with open(os.environ["MBWB_DEMO_STATUS"], "w") as f:
        json.dump(status, f)
    for name in list(FreeCAD.listDocuments()):
        FreeCAD.closeDocument(name)
    QtCore.QTimer.singleShot(20000, lambda: os._exit(3))
    FreeCADGui.getMainWindow().close()


QtCore.QTimer.singleShot(500, main)
