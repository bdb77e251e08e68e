"""The Study: a design study of a mechanism, kept in the document (issue 15).

An ``App::FeaturePython`` in the mechanism's group (made by
:func:`MultibodyWB.document.factory.make_study`). Its properties say what to vary, what to measure
and how to search; :mod:`MultibodyWB.document.study` runs it with the solver's
:func:`~MultibodyWB.solver.study.run_study` and stores the runs' table here.

``Parameters``: one row per parameter, ``OBJECT.PROPERTY = LOW : HIGH : LEVELS`` (a range; the
levels are for a grid, ``LOW : HIGH`` is enough for the other methods) or ``OBJECT.PROPERTY = V1,
V2, ...`` (a list, grid only). ``OBJECT`` is a document object's Name or Label, ``PROPERTY`` one of
its numeric properties or, for a spreadsheet, a cell's alias (or address). Values are FreeCAD
quantities in any unit of the property's kind (``80 mm``, ``1 N/mm``, ``30 deg``); a bare number is
read in the unit the property shows (a Multibody quantity's unit; FreeCAD's mm, kg, s, deg for the
others). For example::

    Spreadsheet.LinkLength = 80 mm : 120 mm : 5
    Spring.Stiffness = 1 N/mm, 2 N/mm
    Crank body.Density = 2700 kg/m^3 : 7850 kg/m^3

``Objectives`` and ``Constraints``: the solver's expressions over the run's result columns
(``period(Pivot.rz)``, ``rms(Hull.az)``; ``max(Piston.z) <= 180 mm``; see
:mod:`MultibodyWB.solver.study.objectives`). The methods and their options are the solver's
(:mod:`MultibodyWB.solver.study.study`).

The results: ``Table`` holds the CSV the solver's ``StudyTable.to_csv`` writes (one row per variant:
parameter values in SI, objectives, constraint values and margins, feasible, status, error, wall
time), ``Units`` the SI unit of each parameter column, ``Summary`` the study's summary and ``Best``
the best variant's number (-1: none). They are ``Output`` properties: storing a table does not
touch the mechanism (no recompute).
"""

from ..solver.api import STUDY_METHODS as METHODS, Study as _SolverStudy
from .base import READ_ONLY, BaseProxy, Prop

TYPE = "Multibody::Study"
_DEFAULTS = _SolverStudy([], [])
GROUP = "Study"
RESULTS = "Study results"


def _results(name, type_name, doc, default=None):
    return Prop(name, type_name, RESULTS, doc, default, mode=READ_ONLY, output=True)


class StudyProxy(BaseProxy):
    """Proxy of a Study (see the module doc)."""

    Type = TYPE
    KIND = "Study"
    VERSION = 1
    PROPERTIES = (
        Prop("Parameters", "App::PropertyStringList", GROUP,
             "What to vary, one row each: OBJECT.PROPERTY = LOW : HIGH : LEVELS, or "
             "OBJECT.PROPERTY = V1, V2, ... (quantities with their unit; OBJECT a Name or "
             "Label, PROPERTY a property or a spreadsheet alias)"),
        Prop("Objectives", "App::PropertyStringList", GROUP,
             "What to measure of each run: expressions over result columns (rms(Hull.az), "
             "period(Pivot.rz)); optimisers minimise the first"),
        Prop("Constraints", "App::PropertyStringList", GROUP,
             "Conditions a run must meet: EXPRESSION <= BOUND (max(Piston.z) <= 180 mm)"),
        Prop("Method", "App::PropertyEnumeration", GROUP,
             "grid: every combination of the levels; lhs, sobol: samples in the ranges; "
             "nelder-mead, powell, de: minimise the first objective",
             default=_DEFAULTS.method, enum=METHODS),
        Prop("Samples", "App::PropertyInteger", GROUP, "lhs, sobol: how many points",
             default=16),
        Prop("Seed", "App::PropertyInteger", GROUP,
             "lhs, sobol, de: the random seed (the same seed, the same points)", default=0),
        Prop("MaxEvaluations", "App::PropertyInteger", GROUP,
             "nelder-mead, powell, de: the most runs", default=_DEFAULTS.max_evaluations),
        Prop("Tolerance", "App::PropertyFloat", GROUP,
             "nelder-mead, powell, de: stop when the parameters are settled to this fraction of "
             "their ranges", default=_DEFAULTS.tolerance),
        Prop("Population", "App::PropertyInteger", GROUP,
             "de: population size per parameter", default=_DEFAULTS.population),
        Prop("Scheduler", "App::PropertyString", GROUP,
             "Address of a Dask scheduler (tcp://host:8786) whose workers run the variants; "
             "empty: the preferences' StudyScheduler, else a local cluster started for the "
             "study", default=""),
        Prop("Workers", "App::PropertyInteger", GROUP,
             "Worker processes of the local cluster (0: one per core)", default=0),
        _results("Table", "App::PropertyString",
                 "The runs (CSV: one row per variant; parameter values in SI)", ""),
        _results("Units", "App::PropertyStringList",
                 "SI unit of each parameter column of the Table"),
        _results("Summary", "App::PropertyString", "The study's summary", ""),
        _results("Best", "App::PropertyInteger",
                 "The best variant (least first objective, constraints met); -1: none", -1),
    )
    FIELDS = {"Method": "Method", "Samples": "Samples", "MaxEvaluations": "MaxEvaluations",
              "Tolerance": "Tolerance", "Parameters": "Parameters", "Objectives": "Objectives",
              "Constraints": "Constraints"}
