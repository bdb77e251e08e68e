"""Simulation runs of a Mechanism, stored in the document: export, simulate, store, find.

The FreeCAD side of the designer's loop, without Qt (the task panels sit on top of it):

- :func:`model_of` exports the mechanism (:func:`MultibodyWB.objects.export.to_model`);
- :func:`make_job` wraps the model in a :class:`~MultibodyWB.solver.run.job.Job` for a run in the
  background (the GUI starts it, polls it, and calls :func:`store_results` when it is done);
- :func:`store_results` keeps a run as a new Result object (:mod:`MultibodyWB.objects.result`);
- :func:`simulate_mechanism` does all three synchronously (macros, the demo, headless tests);
- :func:`result_objects` and :func:`latest_result` find the stored runs.
- :func:`recorded_run` lets the GUI record a finished background run as the macro line
  ``simulate_mechanism(mechanism)`` without solving it a second time.

Where runs live: each run is a new Result object directly in the mechanism's group, next to its
Simulation settings (``Result``, ``Result001``, ...; FreeCAD's unique names), so that
``mechanism_of(result)`` finds its mechanism and the tree shows the runs under it. Label2 says
what the run was (``mstmm rk4, 0.08 s, 801 frames``) unless a label is given. The results file of
``Result001`` is ``Result001.npz`` inside the ``.FCStd``. Several runs are kept (a parameter study
compares them); ``keep`` removes the oldest ones beyond a count.

Storing is one undo step ("Store simulation results"): Undo removes the Result. A failure while
storing leaves nothing behind, and a failed or cancelled run stores nothing: the earlier Results
are untouched.
"""

import contextlib
import datetime
import os
import shutil
import tempfile

import FreeCAD

from ..objects import export
from . import factory
from ..objects.mechanism import members
from ..objects.result import TYPE as RESULT
from ..objects.result import load  # noqa: F401  (runs.load(obj): the Results of a stored run)
from ..solver.api import Job, simulate

#: Name of the undo step of :func:`store_results`.
TRANSACTION = "Store simulation results"


def model_of(mechanism, warnings=None):
    """The neutral model of ``mechanism`` (SI units). What looks wrong without blocking a run
    (:attr:`MultibodyWB.objects.export.Export.warnings`) is printed to the report view as
    warnings, and appended (as texts) to the list ``warnings`` when one is given.

    Raises
    ------
    ModelError
        Listing every problem, each naming the FreeCAD object and property.
    """
    result = export.collect(mechanism)
    for warning in result.warnings:        # plausibility: shown, never blocking
        FreeCAD.Console.PrintWarning(f"MultibodyWB: {warning}\n")
        if warnings is not None:
            warnings.append(str(warning))
    if result.object_problems:
        raise export.ModelError(result.problems)
    return result.model


def make_job(mechanism, **overrides):
    """A :class:`~MultibodyWB.solver.run.job.Job` (not started) simulating ``mechanism``.

    The export happens here, on the caller's (GUI) thread; ``overrides`` are keyword arguments
    of :func:`~MultibodyWB.solver.run.simulate.simulate` (``t_end``, ``method``...) that replace the
    mechanism's Simulation settings for this run. Raises ModelError as :func:`model_of`.
    """
    return Job(model_of(mechanism), **overrides)


#: (document, mechanism) -> Name of the Result stored inside :func:`recorded_run` (or None).
_recording = {}


def _key(mechanism):
    return (mechanism.Document.Name, mechanism.Name)


@contextlib.contextmanager
def recorded_run(mechanism):
    """A block in which ``simulate_mechanism(mechanism, ...)`` returns the run already stored.

    The GUI runs the solver in the background, stores the run with :func:`store_results`, then
    records the run in the macro as ``simulate_mechanism(mechanism)`` with
    ``FreeCADGui.doCommand``, which also executes the line: inside this block that call returns
    the Result :func:`store_results` made in the block instead of solving again (before one is
    stored, it runs as usual). Replaying the macro later runs the solver.
    """
    key = _key(mechanism)
    _recording[key] = None
    try:
        yield
    finally:
        _recording.pop(key, None)


def simulate_mechanism(mechanism, progress=None, cancel=None, name="Result", label="",
                       keep=None, **overrides):
    """Export, simulate and store a run of ``mechanism``; return the new Result object.

    Parameters
    ----------
    progress, cancel : callable, optional
        As for :func:`~MultibodyWB.solver.run.simulate.simulate`.
    name, label, keep
        As for :func:`store_results`.
    **overrides
        Settings of :func:`~MultibodyWB.solver.run.simulate.simulate` replacing the mechanism's
        Simulation settings for this run (``t_end``, ``step``, ``output_step``, ``method``,
        ``integrator``, method options).

    Raises
    ------
    ModelError, Cancelled, SimulationError
        Nothing is stored and the document is not changed.
    """
    stored = _recording.get(_key(mechanism))
    if stored is not None and mechanism.Document.getObject(stored) is not None:
        return mechanism.Document.getObject(stored)          # inside recorded_run
    results = simulate(model_of(mechanism), progress=progress, cancel=cancel, **overrides)
    return store_results(mechanism, results, name=name, label=label, keep=keep)


def store_results(mechanism, results, name="Result", label="", keep=None):
    """Keep ``results`` as a new Result object in ``mechanism``'s group; return it.

    The run is written as NPZ to a temporary file that ``ResultFile`` takes into the document;
    the descriptive properties come from ``results.meta``. All in one undo transaction (joined
    to the caller's when one is open): a failure removes what was made and re-raises.

    Parameters
    ----------
    results : Results
    name : str
        Object name (FreeCAD makes it unique: ``Result001``...) and Label.
    label : str
        Label2; empty: a description of the run (method, integrator, end time, frames).
    keep : int, optional
        Keep at most this many Results in the mechanism (the new one included): the oldest
        others are removed, in the same undo step.
    """
    if keep is not None and int(keep) < 1:
        raise ValueError(f"keep={keep!r}: at least the new run is kept (keep >= 1)")
    doc = mechanism.Document
    mechanism_touched = "Touched" in mechanism.State
    folder = tempfile.mkdtemp(prefix="mbwb-result-")
    try:
        staged = os.path.join(folder, "results.npz")
        results.to_npz(staged)                     # the slow part, before the transaction
        # no transaction of our own in a document without undo (a headless one): FreeCAD would
        # keep it as the application's active transaction, and the next document's first undo
        # step would join it
        own = bool(doc.UndoMode) and not doc.HasPendingTransaction
        if own:
            doc.openTransaction(TRANSACTION)
        made = []
        try:
            obj = factory.make_result(doc, mechanism, name, label)
            made.append(obj.Name)
            path = os.path.join(folder, f"{obj.Name}.npz")
            os.replace(staged, path)
            obj.ResultFile = path                  # FreeCAD copies it into the document
            describe(obj, results, label)
            if keep is not None:
                old = [o for o in result_objects(mechanism) if o.Name != obj.Name]
                for extra in old[:max(len(old) - (int(keep) - 1), 0)]:
                    doc.removeObject(extra.Name)
            obj.purgeTouched()                     # nothing to recompute in a Result
            if not mechanism_touched:
                mechanism.purgeTouched()           # a new run changes nothing of the model
        except BaseException:
            if own:
                doc.abortTransaction()
            for obj_name in made:                  # without undo (UndoMode 0) abort keeps them
                if doc.getObject(obj_name) is not None:
                    doc.removeObject(obj_name)
            raise
        if own:
            doc.commitTransaction()
        if _key(mechanism) in _recording:
            _recording[_key(mechanism)] = obj.Name
        return obj
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def describe(obj, results, label=""):
    """Fill the descriptive properties of the Result ``obj`` from ``results``."""
    from ..objects.base import set_value
    meta = results.meta
    obj.Model = str(meta.get("model", ""))
    obj.Method = str(meta.get("method", ""))
    obj.Integrator = str(meta.get("integrator", ""))
    end = meta.get("end_time", results.time[-1] if len(results) else 0.0)
    for prop, value in (("EndTime", end), ("Step", meta.get("step", 0.0)),
                        ("OutputStep", meta.get("output_step", 0.0)),
                        ("WallTime", meta.get("wall_time", 0.0))):
        set_value(obj, obj.Proxy.prop(prop), float(value))
    obj.Frames = len(results)
    obj.Created = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    obj.Warnings = [str(w) for w in meta.get("warnings", [])]
    obj.Summary = results.summary("mm", 1000.0)
    obj.Untrusted = results.untrusted
    if not label:
        what = " ".join(x for x in (obj.Method, obj.Integrator) if x)
        obj.Label2 = (f"{what}, {float(end):g} s, {len(results)} frames"
                      + (", untrusted" if obj.Untrusted else ""))


def result_objects(mechanism):
    """The Result objects of ``mechanism``, oldest first (by ``Created``, then group order)."""
    found = members(mechanism, RESULT)
    order = {o.Name: i for i, o in enumerate(found)}
    return sorted(found, key=lambda o: (o.Created, order[o.Name]))


def latest_result(mechanism):
    """The newest Result object of ``mechanism``, or None."""
    found = result_objects(mechanism)
    return found[-1] if found else None
