"""The FreeCAD-free core: neutral model, XML I/O, topology and solvers.

Nothing in this package imports FreeCAD or Qt (a test checks it).
"""

from .model import (FORCE_TYPES, HINGE_TYPES, Driver, Force, Frame, Ground, Hinge, Marker,
                    MarkerRef, ModelError, Motor, MultibodySystem, Problem, RigidBody, Simulation)

__all__ = ["FORCE_TYPES", "HINGE_TYPES", "Driver", "Force", "Frame", "Ground", "Hinge", "Marker",
           "MarkerRef", "ModelError", "Motor", "MultibodySystem", "Problem", "RigidBody", "Simulation"]
