"""The Result: one simulation run of a mechanism, kept in the document.

An ``App::FeaturePython`` in the mechanism's group (see :mod:`MultibodyWB.document.runs`, which
makes and fills it). The run's :class:`~MultibodyWB.solver.results.table.Results` are an NPZ file
(:meth:`Results.to_npz`: column names, the table, the run's metadata, the solver states) held by
``ResultFile``, an ``App::PropertyFileIncluded``: FreeCAD keeps the file in the document's
transient folder and saves it inside the ``.FCStd``, so a reopened document has its results
without solving again. The other properties describe the run, read-only; they are set once,
when the run is stored, with status ``Output`` (setting them does not touch the object: a Result
never needs a recompute). ``Untrusted`` lists why the run's own checks say not to trust it
(:attr:`Results.untrusted`: its energy balance does not close), empty when they passed; the
Simulate panel shows such a run in red.

:func:`load` reads the results back, once: later calls for the same object and file are served
from a small cache. Units: the run's times are quantities in s; the file's columns are SI (see
:mod:`MultibodyWB.solver.results.table`).
"""

import collections
import os
import threading

from ..solver.api import Results
from .base import READ_ONLY, BaseProxy, Prop, quantity_prop

TYPE = "Multibody::Result"
GROUP = "Result"


def _time(name, doc):
    return quantity_prop(name, GROUP, doc, "s", mode=READ_ONLY, output=True)


def _info(name, type_name, doc, default=None):
    return Prop(name, type_name, GROUP, doc, default, mode=READ_ONLY, output=True)


class ResultProxy(BaseProxy):
    """Proxy of a Result (one stored run)."""

    Type = TYPE
    KIND = "Result"
    VERSION = 1
    PROPERTIES = (
        Prop("ResultFile", "App::PropertyFileIncluded", GROUP,
             "The run's results (NPZ: column names, table, metadata, solver states), saved "
             "inside the document", mode=READ_ONLY),
        _info("Model", "App::PropertyString", "Name of the model that was simulated", ""),
        _info("Method", "App::PropertyString", "Solution method of the run", ""),
        _info("Integrator", "App::PropertyString",
              "Time integrator of the run (empty for newton-euler, which has its own)", ""),
        _time("EndTime", "Simulated time"),
        _time("Step", "Integrator step (fixed-step) or first step (adaptive)"),
        _time("OutputStep", "Spacing of the stored results"),
        _time("WallTime", "Wall-clock time the run took"),
        _info("Frames", "App::PropertyInteger", "Number of output times (rows of the results)"),
        _info("Created", "App::PropertyString",
              "When the run was stored (ISO 8601 local date and time)", ""),
        _info("Warnings", "App::PropertyStringList",
              "What the run reported: corrected initial conditions, redundant constraints, "
              "singular configurations..."),
        _info("Summary", "App::PropertyString", "The run's summary (Results.summary())", ""),
        _info("Untrusted", "App::PropertyStringList",
              "Why the run's own checks say not to trust it, one line per check (the energy "
              "balance does not close: a step too large...); empty for a run that passed them"),
    )

    def onDocumentRestored(self, obj):
        """As every object's; a run stored before ``Untrusted`` existed gets it from its
        warnings (the energy balance's said "do not trust this run")."""
        had = "Untrusted" in obj.PropertiesList
        touched = "Touched" in obj.State
        super().onDocumentRestored(obj)
        if not had:
            obj.Untrusted = untrusted_from_warnings(obj.Warnings)
            if not touched:
                obj.purgeTouched()


def untrusted_from_warnings(warnings):
    """What :attr:`Results.untrusted` would say, from a stored run's ``Warnings`` (files made
    before the run kept it): the energy balance's warning, which ends "do not trust this run"."""
    return [f"energy balance: {w}" for w in warnings
            if w.startswith("the energy balance does not close") and "do not trust" in w]


class ResultFileError(RuntimeError):
    """The results file of a Result object is missing or cannot be read."""


#: How many runs :func:`load` keeps in memory.
CACHE_SIZE = 8
_cache = collections.OrderedDict()      # (document, object) -> (path, mtime_ns, size, Results)
_lock = threading.Lock()


def _where(obj):
    return f"Result '{obj.Label}', property ResultFile"


def load(obj):
    """The :class:`~MultibodyWB.solver.results.table.Results` stored in the Result object ``obj``.

    Read from ``obj.ResultFile`` the first time, then from a cache keyed on the object and the
    file (path, modification time, size): a new file for the object is read again. The arrays of
    the returned Results are read-only (they are shared by every caller).

    Raises
    ------
    ResultFileError
        The file is missing or is not a results file; the message names the object and the
        property.
    """
    key = (obj.Document.Name, obj.Name)
    path = obj.ResultFile
    if not path:
        raise ResultFileError(f"{_where(obj)}: holds no file (the run was not stored)")
    try:
        st = os.stat(path)
    except OSError as exc:
        raise ResultFileError(f"{_where(obj)}: the results file {path} is missing "
                              f"({exc.strerror})") from None
    stamp = (path, st.st_mtime_ns, st.st_size)
    with _lock:
        hit = _cache.get(key)
        if hit is not None and hit[:3] == stamp:
            _cache.move_to_end(key)
            return hit[3]
    try:
        results = Results.from_npz(path)
    except Exception as exc:  # zipfile, numpy, json and KeyError all mean "not our file"
        raise ResultFileError(f"{_where(obj)}: {os.path.basename(path)} cannot be read as "
                              f"results ({type(exc).__name__}: {exc})") from None
    results.data.flags.writeable = False
    if results.states is not None:
        results.states.flags.writeable = False
    with _lock:
        _cache[key] = stamp + (results,)
        _cache.move_to_end(key)
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return results


def clear_cache():
    """Forget every loaded run (the next :func:`load` reads its file)."""
    with _lock:
        _cache.clear()
