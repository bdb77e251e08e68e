"""A simulation run in a background thread: :class:`Job`.

The GUI starts a :class:`Job` and polls it (a timer reading :attr:`Job.progress` and
:attr:`Job.state`); the run itself is :func:`.simulate.simulate` on a worker thread. The worker
only writes plain attributes (a float, references to finished objects, a state string set last)
and calls nothing back, so the GUI never runs code from the worker's thread. The compiled kernels
release the GIL (``nogil``), so the GUI stays responsive during a run.

Life cycle (:attr:`Job.state`)::

    idle --start()--> running --+--> done        results set, error None
                                +--> failed      error: ModelError, SimulationError, any exception
                                +--> cancelled   error: Cancelled, results None

No FreeCAD and no Qt here (the solver package's rule).
"""

from __future__ import annotations

import threading
import time as _time
import traceback

from ..model.problems import ModelError
from .simulate import simulate, solve
from ..methods.runtime import Cancelled, SimulationError

#: The values of :attr:`Job.state`.
STATES = ("idle", "running", "done", "failed", "cancelled")


class Job:
    """``simulate(model, **settings)`` on a background thread, with progress and cancel; or,
    for a run already started (:func:`.simulate.start`: a caller that showed the start first),
    ``solve(prepared)`` (:meth:`solving`).

    Parameters
    ----------
    model : MultibodySystem
        The neutral model; the job does not change it, and the caller must not change it while
        the job runs.
    **settings
        Keyword arguments of :func:`.simulate.simulate` (``method``, ``integrator``, ``t_end``,
        ``step``, ``output_step``, method options); not ``progress`` and ``cancel``, which the
        job supplies.

    Attributes read while running (any thread)
    ------------------------------------------
    progress : float
        Fraction of the simulated time done, 0 to 1, never decreasing.
    state : str
        One of :data:`STATES`.
    done : bool
        The worker has finished (state ``done``, ``failed`` or ``cancelled``).
    results : Results or None
        Set when the state is ``done``.
    error : BaseException or None
        Why the run ended without results: :class:`.runtime.Cancelled`,
        :class:`.model.ModelError` (an expression that cannot be evaluated, a state that is not
        finite, a stiff model that makes no progress: :class:`.runtime.RunError`),
        :class:`.runtime.SimulationError` (a wall-clock budget used up) or any other exception
        (:attr:`internal_error`, its :attr:`trace` kept).
    messages : list of str
        What the run reports besides its results: ``results.meta['warnings']`` (corrected
        initial conditions, redundant constraints, singular configurations) and the assembly
        report of a mechanism with closed loops (:func:`run_messages`).
    wall_time : float or None
        Seconds since :meth:`start` while running, the run's total once done; None before.
    first_progress_time : float or None
        Seconds from :meth:`start` to the first progress report (the set-up: model check,
        assembly, compilation of the kernels on a first run); None until then.
    """

    def __init__(self, model, **settings):
        for key in ("progress", "cancel"):
            if key in settings:
                raise TypeError(f"Job supplies '{key}' itself; read Job.progress, call "
                                "Job.cancel()")
        self.model = model
        self.settings = dict(settings)
        self.prepared = None
        self._cancel = threading.Event()
        self._finished = threading.Event()
        self._thread = None
        self._state = "idle"
        self._progress = 0.0
        self._results = None
        self._error = None
        self._messages = []
        self._t0 = None
        self._t1 = None
        self._first_progress = None
        self._trace = None

    @classmethod
    def solving(cls, prepared) -> "Job":
        """A job that solves a run :func:`.simulate.start` prepared (the stages solve and
        results, :func:`.simulate.solve`): the start is not made again."""
        job = cls(prepared.model)
        job.prepared = prepared
        return job

    # -- control --------------------------------------------------------------------------------
    def start(self) -> Job:
        """Start the run on a daemon thread; return the job. A job runs once."""
        if self._thread is not None:
            raise RuntimeError("this job has been started already; make a new Job to run again")
        self._t0 = _time.perf_counter()
        self._state = "running"
        self._thread = threading.Thread(target=self._run, name="MultibodyWB simulation",
                                        daemon=True)
        self._thread.start()
        return self

    def cancel(self) -> None:
        """Ask the run to stop; it ends in state ``cancelled`` at its next look (between chunks
        of steps, about every 0.1 s of work), unless it has finished already."""
        self._cancel.set()

    @property
    def cancel_requested(self) -> bool:
        """:meth:`cancel` has been called."""
        return self._cancel.is_set()

    def wait(self, timeout=None) -> bool:
        """Wait for the run to end (at most ``timeout`` seconds); return :attr:`done`.

        A job that was never started returns False at once.
        """
        if self._thread is None:
            return False
        return self._finished.wait(timeout)

    # -- what the GUI reads ---------------------------------------------------------------------
    @property
    def state(self) -> str:
        return self._state

    @property
    def done(self) -> bool:
        return self._finished.is_set()

    @property
    def progress(self) -> float:
        return self._progress

    @property
    def results(self):
        return self._results

    @property
    def error(self):
        return self._error

    @property
    def messages(self) -> list:
        return list(self._messages)

    @property
    def wall_time(self):
        if self._t0 is None:
            return None
        end = self._t1 if self._t1 is not None else _time.perf_counter()
        return end - self._t0

    @property
    def first_progress_time(self):
        return self._first_progress

    @property
    def internal_error(self) -> bool:
        """The run failed on an error that is not the model's (not a ModelError, SimulationError
        or Cancelled): a defect to report, with :attr:`trace`."""
        return self._trace is not None

    @property
    def trace(self):
        """The traceback (text) of an :attr:`internal_error`, else None."""
        return self._trace

    def __repr__(self) -> str:
        return f"<Job {self._state} {100.0 * self._progress:.0f}%>"

    # -- the worker -----------------------------------------------------------------------------
    def _on_progress(self, fraction) -> None:
        if self._first_progress is None:
            self._first_progress = _time.perf_counter() - self._t0
        fraction = min(max(float(fraction), 0.0), 1.0)
        if fraction > self._progress:
            self._progress = fraction

    def _run(self) -> None:
        try:
            if self.prepared is not None:
                results = solve(self.prepared, progress=self._on_progress,
                                cancel=self._cancel.is_set)
            else:
                results = simulate(self.model, progress=self._on_progress,
                                   cancel=self._cancel.is_set, **self.settings)
        except Cancelled as exc:
            self._error = exc
            state = "cancelled"
        except BaseException as exc:        # noqa: BLE001 - reported to the GUI, never lost
            self._error = exc
            if not isinstance(exc, (ModelError, SimulationError)):
                self._trace = traceback.format_exc()
            state = "failed"
        else:
            self._messages = run_messages(results.meta)
            self._results = results
            self._progress = 1.0
            state = "done"
        self._t1 = _time.perf_counter()
        self._state = state                 # last: whoever sees the state sees the rest
        self._finished.set()


def run_messages(meta) -> list:
    """The messages of a run from its ``Results.meta``: the warnings, then the report of the
    assembly of the initial state (mechanisms with closed loops: residuals, what was held
    fixed, which coordinates and rates were corrected)."""
    messages = [str(w) for w in meta.get("warnings", [])]
    if meta.get("assembly"):
        messages.append(f"initial state: {meta['assembly']}")
    return messages
