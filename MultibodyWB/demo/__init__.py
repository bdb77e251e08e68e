"""The demo and the launchers: running the workbench from plain Python and from scripts.

``python3 -m MultibodyWB.demo [OUT_DIR]`` runs the demo (:mod:`.__main__`). :mod:`.launch` starts
FreeCAD from plain Python (the demo and the benchmarks use it); :mod:`.movie` is run inside
FreeCAD's GUI by the demo to render the GIF, :mod:`.open_engine` by ``scripts/open-demo.sh``
after FreeCAD opened the demo's engine; :mod:`.plots` draws the demo's curves (matplotlib).
Nothing else in the package imports this one.
"""
