"""MultibodyWB: multibody dynamics for FreeCAD.

``MultibodyWB.solver`` is a plain Python package (no FreeCAD, no Qt); the rest of the package is the
FreeCAD layer on top of it, which reaches the solver only through ``MultibodyWB.solver.api``
(docs/design.md).
"""

__version__ = "0.1.0"
