"""The FreeCAD-free core: neutral model, XML I/O, topology and solvers.

Nothing in this package imports FreeCAD or Qt (a test checks it).

The model's classes named in ``__all__`` are loaded on first use (PEP 562), not when the package
is imported: ``python3 -m MultibodyWB.solver`` then reaches its own handlers of Ctrl-C and
SIGTERM before numpy and numba load (a second), so that a signal in that second ends with one
line, not a traceback.
"""

__all__ = ["FORCE_TYPES", "HINGE_TYPES", "Driver", "Force", "Frame", "Ground", "Hinge", "Marker",
           "MarkerRef", "ModelError", "Motor", "MultibodySystem", "Problem", "RigidBody", "Simulation"]


def __getattr__(name):
    if name in __all__:
        from . import model
        return getattr(model, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
