"""Example mechanisms built in a FreeCAD document from Part solids with
:mod:`MultibodyWB.document.factory`.

Each module has ``setup(doc) -> mechanism``; tests, macros and the demo reuse them
(``crank_slider``, ``cam_valve``).
They rebuild the FreeCAD-free examples of :mod:`MultibodyWB.examples` (same dimensions and
constants, imported from there) so that the two can be compared.
"""
