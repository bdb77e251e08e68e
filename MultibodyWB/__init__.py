"""MultibodyWB: multibody dynamics for FreeCAD.

``MultibodyWB.solver`` is a plain Python package (no FreeCAD, no Qt); the rest of the package is the
FreeCAD layer on top of it (docs/design.md).

Modules that moved when the packages were laid out by layer (issue 13) stay importable under their
old names (:data:`MOVED`), so that macros recorded before (``MultibodyWB.factory.make_body(...)``)
and scripts that import the solver's old modules (``MultibodyWB.solver.simulate``) keep running:
the old name is the same module object as the new one.
"""

import importlib
import importlib.abc
import importlib.util
import sys

__version__ = "0.1.0"

_S = "MultibodyWB.solver."
#: old module name -> where it is now
MOVED = {
    "MultibodyWB.factory": "MultibodyWB.document.factory",
    "MultibodyWB.runs": "MultibodyWB.document.runs",
    "MultibodyWB.import_model": "MultibodyWB.document.import_model",
    "MultibodyWB.animation": "MultibodyWB.document.animation",
    "MultibodyWB.preview": "MultibodyWB.document.preview",
    "MultibodyWB.export": "MultibodyWB.objects.export",
    "MultibodyWB.gui_utils": "MultibodyWB.resources",
    "MultibodyWB.plotting": "MultibodyWB.demo.plots",
    "MultibodyWB.demo_movie": "MultibodyWB.demo.movie",
    "MultibodyWB.open_demo": "MultibodyWB.demo.open_engine",
    "MultibodyWB.launch": "MultibodyWB.demo.launch",
    **{_S + old: _S + new for old, new in (
        ("rotations", "maths.rotations"), ("xmlio", "model.xmlio"),
        ("validation", "model.validation"), ("timefunction", "model.timefunction"),
        ("massprops", "model.massprops"), ("topology", "analysis.topology"),
        ("kinematics", "analysis.kinematics"), ("assembly", "analysis.assembly"),
        ("start", "analysis.start"), ("figure", "analysis.figure"),
        ("kernels", "methods.mstmm.kernels"),
        ("system", "methods.mstmm.system"), ("mstmm", "methods.mstmm.transfer"),
        ("constrained", "methods.constrained.formulation"),
        ("constrained_run", "methods.constrained.run"),
        ("partition", "methods.constrained.partition"),
        ("newton_euler", "methods.newton_euler.run"), ("simulate", "run.simulate"),
        ("job", "run.job"), ("warmup", "run.warmup"))},
}


class _Moved(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old module name (:data:`MOVED`) as the module it now is."""

    def find_spec(self, name, path=None, target=None):
        if name in MOVED:
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        return importlib.import_module(MOVED[spec.name])

    def exec_module(self, module):
        pass                             # the real module ran when it was imported


if not any(isinstance(f, _Moved) for f in sys.meta_path):
    sys.meta_path.append(_Moved())
