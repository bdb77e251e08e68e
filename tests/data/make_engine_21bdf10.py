"""Make ``engine_21bdf10.FCStd``: the crank-slider engine saved by the code of commit 21bdf10
(before the FreeCAD layer was sorted into packages), with its GUI part, for
``tests/test_fc_reopen.py`` and ``tests/test_gui_reopen.py``.

Run with a checkout of that commit as the current directory (``$REPO``: this repository)::

    git worktree add /tmp/fc-old 21bdf10 && cd /tmp/fc-old
    /usr/bin/python3 $REPO/tests/data/make_engine_21bdf10.py $REPO/tests/data

1. headless: the engine of ``examples_fc.crank_slider`` (bodies, markers on faces and edges,
   revolute and prismatic hinges, the gas force, the crank's driver, the Simulation), one short
   stored run (5 ms, 11 frames), saved;
2. FreeCAD's GUI (under Xvfb): the file opened, its objects given their view providers, saved
   again, so the file also names the view providers' classes (``GuiDocument.xml``).
"""

import os
import sys

sys.path.insert(0, os.getcwd())
OUT = os.environ.get("MBWB_REOPEN_GUI") or os.path.abspath(sys.argv[1])
NAME = "engine_21bdf10.FCStd"

if os.environ.get("MBWB_REOPEN_GUI"):
    # inside FreeCAD's GUI (step 2); MBWB_REOPEN_GUI is the output folder
    import FreeCAD
    import FreeCADGui
    from PySide import QtCore

    def _save():
        try:
            from MultibodyWB.gui.views import ensure_views
            doc = FreeCAD.openDocument(os.path.join(OUT, NAME))
            ensure_views(doc)
            doc.recompute()
            doc.save()
            FreeCAD.Console.PrintMessage("MBWB saved with views\n")
        finally:
            for name in list(FreeCAD.listDocuments()):
                FreeCAD.closeDocument(name)
            QtCore.QTimer.singleShot(5000, lambda: os._exit(0))
            FreeCADGui.getMainWindow().close()
    QtCore.QTimer.singleShot(500, _save)
else:
    from MultibodyWB.launch import import_freecad, run_gui_script
    FreeCAD = import_freecad()
    from MultibodyWB import runs
    from MultibodyWB.examples_fc import crank_slider
    doc = FreeCAD.newDocument("Engine")
    mechanism = crank_slider.setup(doc)
    doc.recompute()
    runs.simulate_mechanism(mechanism, t_end=0.005, output_step=5e-4)
    doc.saveAs(os.path.join(OUT, NAME))
    run = run_gui_script(os.path.abspath(__file__), {"MBWB_REOPEN_GUI": OUT}, timeout=300)
    print(run.returncode, run.log[-3000:] if getattr(run, "log", None) else "")
    if os.path.exists(os.path.join(OUT, NAME + "1")):     # FreeCAD's backup of the first save
        os.remove(os.path.join(OUT, NAME + "1"))
