"""MultibodyWB: multibody dynamics for FreeCAD.

``MultibodyWB.solver`` is a plain Python package (no FreeCAD, no Qt); the rest of the package is the
FreeCAD layer on top of it.
"""

__version__ = "0.1.0"
