"""The solver's narrow face: everything the FreeCAD layer uses of the solver, and nothing else.

The FreeCAD layer (every package of ``MultibodyWB`` but ``solver`` and ``examples``, and the
add-on's ``Init.py`` and ``InitGui.py``) imports from the solver only this module
(``tests/test_layout.py`` checks it), so that the solver's modules can move and split behind it:
a name that moves changes one line of :data:`_TABLE` here.

Importing this module imports nothing of the solver (FreeCAD's workbench start must not load
numba or compile anything because of it): each name is looked up in its home module when it is
asked for (PEP 562), every time, and never kept here, so a test that replaces a function in its
home module (``monkeypatch.setattr(simulate_module, "simulate", ...)``) is seen by a caller that
reaches the name at call time (``api.simulate(...)``, or ``from ..solver.api import simulate``
inside the calling function).

What it offers, one line each (SI units throughout):

Model and files
    MultibodySystem, Simulation, Driver, Motor: the neutral model's classes
    HINGE_TYPES, FORCE_TYPES, COUPLER_TYPES: the element tables (type name -> its row)
    COORDINATE_KIND, COORDINATE_UNIT: a hinge coordinate's kind by its name (x...rz); its unit
    CONTACT_PAIRS, CONTACT_SHAPES: the pairs of contact shapes the law takes; the shapes
    METHODS, INTEGRATORS, FIXED_STEP: a simulation's methods, integrators, fixed-step integrators
    xmlio: the neutral XML file (module: ``read``, ``write``, ``to_string``, ...)
    atomic_write: open a file that appears under its name only when complete
    describe_column, unit_of: a result column's one-line description, its unit
    CONTACT_COLUMNS, COUPLER_COLUMNS: the result columns of a contact and of a coupler
    bryant_to_matrix, matrix_to_bryant: Bryant angles <-> rotation matrix
    inertia_vector_to_tensor, parallel_axis: the model's JI as a tensor; shift a tensor
    convex_hull: the convex hull of a contact solid's points (Qhull)
    wrap_chain, chain_tight_count: a closed chain's pins round wheels; the fewest shoes round them

Checks and problems
    ModelError, Problem: what is wrong with a model, every problem naming element and field
    MAX_POSITION: the largest distance from the origin a check accepts (m)
    hinged_contacts: warnings for contacts between bodies a hinge already connects
    model_summary: a valid model's readable summary (the ``check`` command's)

Topology, start and assembly
    analyse: a model's topology (tree, cut hinges, numbering, loops, DOF)
    mobility: a model's real mobility (tree coordinates minus the loops' constraint rank)
    write_figure: the topology figure written to a file (Graphviz; the extension picks the format)
    resolve_model: the model as every method reads it, and notes on what was done
    StartCorrectionError: a run would start away from the drawing (its report says how)
    assemble: consistent initial coordinates and rates of a mechanism with closed loops
    forward_kinematics, drawn_poses, marker_pose: the parts' and markers' global poses
    drawn_coordinates, coordinate_labels: tree coordinates as drawn, and their names
    loop_jacobian, loop_residual: the loop-closure constraints' Jacobian and residual

Runs and jobs
    simulate: run a model and return its :class:`Results`
    start_run: the stages check and start of a run, without solving: the prepared run
    check_run_settings: a run's settings resolved and checked (ModelError naming each field)
    Job: ``simulate`` on a background thread, with progress and cancel (``Job.solving``: a
        prepared run's solve)
    Cancelled: raised by a run that was cancelled

Runtime advice
    contact_step, nice_step: the fixed step a model's contacts need; a step a designer types
    contact_integrator: what a model's contacts need of the integrator
    CONTACT_STEPS_PER_PERIOD: steps over a contact's period the advice asks for

Results
    Results: a run's result table (units, CSV/NPZ)
    instant_loads: every load on one body at one output row (module)
    equation_report: the overall transfer equation of a model, as text

Studies
    Study, Parameter, StudyError: a design study, one of its parameters, what is wrong with one
    check_study, run_study: every problem of a study raised once; a study run to its table
    STUDY_METHODS, OPTIMISERS: a study's search methods, the optimisers among them
    Expression, ExpressionError: an objective's expression, and what is wrong with one
    parse_constraint, OBJECTIVE_UNITS: a constraint from its text; the units it may be written in
    rename_columns: an objective's text with its columns under their aliases' names
    probe_columns: the result columns of a model's runs (a run of a few steps)
    DaskExecutor, executor_problems: variants in parallel on Dask; what is wrong with where
    VARIANT_OK, VARIANT_FAILED: a variant's status

Warm-up (compiling the kernels ahead of the first run)
    WARMUP_MODULE: the warm-up's module, run as ``python3 -m WARMUP_MODULE`` (a constant)
    is_warm, read_warmup_status: whether the kernels are compiled; a warm-up's status file
    warmup_stage_of, WARMUP_STAGE_TEXT: the stage a run waits for; the stages' descriptions
    warmup_estimate, warmup_wait_text: the wait for a stage; what the Simulate panel says then
"""

from __future__ import annotations

import importlib

#: The warm-up's module, which the FreeCAD layer runs in a process of its own (a name, not an
#: import: the workbench's start imports nothing of the solver).
WARMUP_MODULE = "MultibodyWB.solver.run.warmup"

_M = "MultibodyWB.solver."

#: name -> (home module, attribute there; None: the module itself)
_TABLE: dict[str, tuple[str, str | None]] = {
    # model and files
    "MultibodySystem": (_M + "model.mechanism", "MultibodySystem"),
    "Simulation": (_M + "model.mechanism", "Simulation"),
    "Driver": (_M + "model.mechanism", "Driver"),
    "Motor": (_M + "model.mechanism", "Motor"),
    "HINGE_TYPES": (_M + "elements.hinges", "HINGE_TYPES"),
    "FORCE_TYPES": (_M + "elements.forces", "FORCE_TYPES"),
    "COUPLER_TYPES": (_M + "elements.couplers", "COUPLER_TYPES"),
    "COORDINATE_KIND": (_M + "elements.hinges", "COORDINATE_KIND"),
    "COORDINATE_UNIT": (_M + "elements.hinges", "COORDINATE_UNIT"),
    "CONTACT_PAIRS": (_M + "elements.forces.contact", "PAIRS"),
    "CONTACT_SHAPES": (_M + "elements.forces.contact", "SHAPES"),
    "METHODS": (_M + "model.settings", "METHODS"),
    "INTEGRATORS": (_M + "model.settings", "INTEGRATORS"),
    "FIXED_STEP": (_M + "model.settings", "FIXED_STEP"),
    "xmlio": (_M + "model.xmlio", None),
    "atomic_write": (_M + "model.files", "atomic_write"),
    "describe_column": (_M + "model.columns", "describe"),
    "unit_of": (_M + "model.columns", "unit_of"),
    "CONTACT_COLUMNS": (_M + "elements.forces.contact", "COLUMNS"),
    "COUPLER_COLUMNS": (_M + "elements.couplers", "COUPLER_COLUMNS"),
    "bryant_to_matrix": (_M + "maths.rotations", "bryant_to_matrix"),
    "matrix_to_bryant": (_M + "maths.rotations", "matrix_to_bryant"),
    "inertia_vector_to_tensor": (_M + "maths.rotations", "inertia_vector_to_tensor"),
    "parallel_axis": (_M + "maths.rotations", "parallel_axis"),
    "convex_hull": (_M + "elements.hulls", "hull"),
    "wrap_chain": (_M + "model.wrap", "wrap"),
    "chain_tight_count": (_M + "model.wrap", "tight_count"),
    # checks and problems
    "ModelError": (_M + "model.problems", "ModelError"),
    "Problem": (_M + "model.problems", "Problem"),
    "MAX_POSITION": (_M + "model.validation", "MAX_POSITION"),
    "hinged_contacts": (_M + "model.validation", "hinged_contacts"),
    "model_summary": (_M + "cli", "summary"),
    # topology, start and assembly
    "analyse": (_M + "analysis.topology", "analyse"),
    "mobility": (_M + "analysis.kinematics", "mobility"),
    "write_figure": (_M + "analysis.figure", "write_figure"),
    "resolve_model": (_M + "analysis.start", "resolve"),
    "StartCorrectionError": (_M + "analysis.start", "StartCorrectionError"),
    "assemble": (_M + "analysis.assembly", "assemble"),
    "forward_kinematics": (_M + "analysis.kinematics", "forward_kinematics"),
    "drawn_poses": (_M + "analysis.kinematics", "drawn_poses"),
    "marker_pose": (_M + "analysis.kinematics", "marker_pose"),
    "drawn_coordinates": (_M + "analysis.kinematics", "drawn_coordinates"),
    "coordinate_labels": (_M + "analysis.kinematics", "coordinate_labels"),
    "loop_jacobian": (_M + "analysis.kinematics", "loop_jacobian"),
    "loop_residual": (_M + "analysis.kinematics", "loop_residual"),
    # runs and jobs
    "simulate": (_M + "run.simulate", "simulate"),
    "start_run": (_M + "run.simulate", "start"),
    "check_run_settings": (_M + "run.simulate", "_settings"),
    "Job": (_M + "run.job", "Job"),
    "Cancelled": (_M + "methods.runtime", "Cancelled"),
    # runtime advice
    "contact_step": (_M + "methods.runtime", "contact_step"),
    "nice_step": (_M + "methods.runtime", "nice_step"),
    "contact_integrator": (_M + "methods.runtime", "contact_integrator"),
    "CONTACT_STEPS_PER_PERIOD": (_M + "methods.runtime", "CONTACT_STEPS_PER_PERIOD"),
    # results
    "Results": (_M + "results.table", "Results"),
    "instant_loads": (_M + "results.instant_loads", None),
    "equation_report": (_M + "run.equation", "equation_report"),
    # studies
    "Study": (_M + "study.study", "Study"),
    "Parameter": (_M + "study.parameters", "Parameter"),
    "StudyError": (_M + "study.parameters", "StudyError"),
    "check_study": (_M + "study.study", "check_study"),
    "run_study": (_M + "study.study", "run_study"),
    "STUDY_METHODS": (_M + "study.study", "METHODS"),
    "OPTIMISERS": (_M + "study.study", "OPTIMISERS"),
    "Expression": (_M + "study.objectives", "Expression"),
    "ExpressionError": (_M + "study.objectives", "ExpressionError"),
    "parse_constraint": (_M + "study.objectives", "parse_constraint"),
    "OBJECTIVE_UNITS": (_M + "study.objectives", "UNITS"),
    "rename_columns": (_M + "study.objectives", "rename"),
    "probe_columns": (_M + "study.study", "probe_columns"),
    "DaskExecutor": (_M + "study.executors", "DaskExecutor"),
    "executor_problems": (_M + "study.executors", "executor_problems"),
    "VARIANT_OK": (_M + "study.variant", "OK"),
    "VARIANT_FAILED": (_M + "study.variant", "FAILED"),
    # warm-up
    "is_warm": (_M + "run.warmup", "is_warm"),
    "read_warmup_status": (_M + "run.warmup", "read_status"),
    "warmup_stage_of": (_M + "run.warmup", "stage_of"),
    "WARMUP_STAGE_TEXT": (_M + "run.warmup", "STAGE_TEXT"),
    "warmup_estimate": (_M + "run.warmup", "estimate"),
    "warmup_wait_text": (_M + "run.warmup", "wait_text"),
}

__all__ = sorted([*_TABLE, "WARMUP_MODULE"])


def __getattr__(name: str):
    """The object ``name`` of :data:`_TABLE`, looked up in its home module now (not kept)."""
    try:
        module, attribute = _TABLE[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    home = importlib.import_module(module)
    return home if attribute is None else getattr(home, attribute)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_TABLE))
