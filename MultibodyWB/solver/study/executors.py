"""Where a study's variants run: in this process, one after the other (:class:`SerialExecutor`), or
in parallel on Dask (:class:`DaskExecutor`): an embedded ``LocalCluster`` (worker processes =
cores, one thread each, started on demand and closed with the study) or an existing cluster given
by its scheduler's address (``tcp://host:8786``), which is how a study scales out.

Both have the same contract: :meth:`run` takes a batch of variants (``(index, model, paths,
values)``), calls ``on_result`` with each :class:`~.variant.VariantResult` as it arrives and
returns them in the batch's order; ``cancel()`` is looked at every :data:`POLL` seconds, and when
it says True the variants not yet finished are cancelled (on Dask: the queued tasks are cancelled
and the running ones stop at their next look at the study's cancel Event, within about
:data:`~.variant.CANCEL_POLL` plus one chunk of a run) and come back with the status
``cancelled``.

Workers import the FreeCAD-free solver only; each worker loads the compiled kernels once
(:func:`~.variant.warm_worker`, before the first variant) and reuses them for every variant. An
external ``dask worker`` needs the ``MultibodyWB`` package on its ``PYTHONPATH`` and the same
numba cache folder setting as the set-up command (or compiles the kernels once itself).
"""

from __future__ import annotations

import logging
import os
import sys
import time as _time
import uuid
import warnings
from typing import Optional

from .variant import CANCELLED, Reductions, VariantResult, run_variant, warm_worker

#: Seconds between two looks at the cancel flag and the finished variants.
POLL = 0.05
#: Seconds a new LocalCluster may take to start its workers.
START_TIMEOUT = 120.0
#: Seconds to reach a scheduler, and to wait for its first worker.
CONNECT_TIMEOUT = 10.0
WORKER_TIMEOUT = 60.0


class SerialExecutor:
    """Variants in this process, one after the other (no Dask)."""

    workers = 1
    address = "this process"

    def __init__(self):
        self.worker_start = 0.0

    def start(self, model, settings) -> None:
        self.worker_start = warm_worker(model, settings)

    def run(self, batch, reductions: Reductions, on_result=None, cancel=None,
            keep=False) -> list[VariantResult]:
        flag = (lambda: bool(cancel())) if cancel else None
        out = []
        for index, model, paths, values in batch:
            if cancel is not None and cancel():
                r = VariantResult(index, tuple(values), CANCELLED, "cancelled")
                r.objectives = (float("nan"),) * len(reductions.objectives)
                r.constraints = r.margins = (float("nan"),) * len(reductions.constraints)
            else:
                r = run_variant(index, model, paths, values, reductions, flag, keep)
            out.append(r)
            if on_result:
                on_result(r)
        return out

    def close(self) -> None:
        pass


def _python_for_workers() -> Optional[str]:
    """A Python interpreter for worker processes when this process is not one (FreeCAD's
    ``sys.executable`` is the FreeCAD program): the interpreter of this installation."""
    exe = os.path.basename(sys.executable or "")
    if exe.startswith("python"):
        return None
    v = sys.version_info
    for name in (f"python{v.major}.{v.minor}", f"python{v.major}"):
        path = os.path.join(sys.exec_prefix, "bin", name)
        if os.path.isfile(path):
            return path
    return None


def _ignore_broken_pipes() -> None:
    """Let a write to a closed pipe or socket raise BrokenPipeError, as it does in a Python
    interpreter (which ignores SIGPIPE), when this process is a program embedding Python:
    FreeCAD 1.0 leaves SIGPIPE at its default, and a worker or a connection going away (a
    cancelled study's cluster closing) would end FreeCAD. Only from the main thread (signals
    are set there)."""
    import signal
    import threading
    embedded = not os.path.basename(sys.executable or "").startswith("python")
    if not hasattr(signal, "SIGPIPE") or not embedded or \
            threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGPIPE) == signal.SIG_DFL:
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)


class DaskExecutor:
    """Variants in parallel on Dask.

    Parameters
    ----------
    scheduler : str, optional
        A running scheduler's address; None: an embedded LocalCluster.
    workers : int, optional
        LocalCluster worker processes (default: the cores this process may use).
    """

    def __init__(self, scheduler: Optional[str] = None, workers: Optional[int] = None):
        self.scheduler = scheduler
        self.n_workers = workers
        self.cluster = None
        self.client = None
        self.worker_start = 0.0
        self.event_name = f"multibodywb-cancel-{uuid.uuid4().hex}"
        self.event = None
        _ignore_broken_pipes()
        _drop_shutdown_race()

    @property
    def workers(self) -> int:
        return len(self.client.scheduler_info()["workers"]) if self.client else 0

    @property
    def address(self) -> str:
        return self.client.scheduler.address if self.client else ""

    def start(self, model, settings) -> None:
        """Connect (or start the LocalCluster) and load the kernels on every worker."""
        import dask
        from distributed import Client, Event, LocalCluster
        t0 = _time.perf_counter()
        if self.client is not None:
            pass                             # started before: the same workers again
        elif self.scheduler:
            from .parameters import StudyError, problem
            try:
                self.client = Client(self.scheduler, timeout=f"{CONNECT_TIMEOUT:g}s")
            except (OSError, TimeoutError, ValueError) as exc:
                raise StudyError([problem("Study", "Scheduler", (
                    f"cannot reach the Dask scheduler at {self.scheduler!r} within "
                    f"{CONNECT_TIMEOUT:g} s ({type(exc).__name__}: {str(exc)[:200]})"))]) from None
            try:
                self.client.wait_for_workers(1, timeout=WORKER_TIMEOUT)
            except (OSError, TimeoutError):
                self.client.close()
                self.client = None
                raise StudyError([problem("Study", "Scheduler", (
                    f"the Dask scheduler at {self.scheduler!r} has no worker after "
                    f"{WORKER_TIMEOUT:g} s: start one (dask worker {self.scheduler})"))]) from None
        else:
            n = self.n_workers or len(os.sched_getaffinity(0))
            python = _python_for_workers()
            if python:
                import multiprocessing
                multiprocessing.get_context("spawn").set_executable(python)
            # worker processes find the package where this process found it
            root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
                os.path.abspath(__file__)))))
            path = os.environ.get("PYTHONPATH", "")
            if root not in path.split(os.pathsep):
                os.environ["PYTHONPATH"] = root + (os.pathsep + path if path else "")
            with dask.config.set({"distributed.worker.daemon": False,
                                  "distributed.admin.tick.limit": "60s"}), \
                    warnings.catch_warnings():
                # the scheduler's HTTP server takes another port when 8787 is taken (another
                # cluster on this machine) and warns; FreeCAD shows that warning as an error
                warnings.filterwarnings("ignore", message=r"Port \d+ is already in use",
                                        category=UserWarning)
                self.cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                            dashboard_address=None, silence_logs=40)
            self.client = Client(self.cluster)
        if self.event is None:
            self.event = Event(self.event_name, client=self.client)
        self.event.clear()
        # one warm-up task pinned to each worker (a task: the worker's event loop stays free)
        warm = [self.client.submit(warm_worker, model, settings, workers=[w], pure=False,
                                   allow_other_workers=False)
                for w in self.client.scheduler_info()["workers"]]
        self.client.gather(warm)
        self.worker_start = _time.perf_counter() - t0

    def run(self, batch, reductions: Reductions, on_result=None, cancel=None,
            keep=False) -> list[VariantResult]:
        client = self.client
        futures = {}
        shared = {}                          # one copy on the workers of a model all share
        for index, model, paths, values in batch:
            if paths:
                if id(model) not in shared:
                    shared[id(model)] = client.scatter(model, broadcast=True, hash=False)
                model = shared[id(model)]
            f = client.submit(run_variant, index, model, list(paths), list(values), reductions,
                              self.event_name, keep, pure=False, key=f"variant-{index}-"
                                                                      f"{uuid.uuid4().hex[:8]}")
            futures[f] = (index, tuple(values))
        results = {}
        pending = set(futures)
        cancelled = False
        while pending:
            if not cancelled and cancel is not None and cancel():
                cancelled = True
                self.event.set()
                client.cancel([f for f in pending if f.status == "pending"])
            done = [f for f in pending if f.done()]
            if not done:
                _time.sleep(POLL)
                continue
            for f in done:
                pending.discard(f)
                index, values = futures[f]
                if f.status == "finished":
                    r = f.result()
                else:
                    r = VariantResult(index, values, CANCELLED if cancelled else "failed",
                                      "cancelled" if cancelled else
                                      f"the worker's task ended: {f.status} "
                                      f"({_exception_text(f)})")
                    r.objectives = (float("nan"),) * len(reductions.objectives)
                    r.constraints = r.margins = (float("nan"),) * len(reductions.constraints)
                results[index] = r
                if on_result:
                    on_result(r)
        return [results[i] for i, *_ in batch]

    def idle_after(self) -> float:
        """Seconds until every worker runs a new task (after a cancel: until the variants that
        were running have stopped at their look at the cancel Event)."""
        t0 = _time.perf_counter()
        probes = [self.client.submit(_time.perf_counter, workers=[w], pure=False,
                                     allow_other_workers=False)
                  for w in self.client.scheduler_info()["workers"]]
        self.client.gather(probes)
        return _time.perf_counter() - t0

    def close(self) -> None:
        """Close the client and the LocalCluster (an external cluster is left running)."""
        for thing in (self.client, self.cluster):
            if thing is not None:
                try:
                    thing.close()
                except Exception:
                    pass
        self.client = self.cluster = None


class _ShutdownRace(logging.Filter):
    """Drops the embedded scheduler's CRITICAL "Closed comm ... while trying to write": a write
    to a client or worker that has already gone (a cancelled study's futures released as the
    client closes), which distributed logs at CRITICAL and FreeCAD would show as an error. What
    it means for a variant (its task lost) the study reports itself."""

    def filter(self, record):
        msg = str(record.msg)
        return not (record.levelno >= logging.CRITICAL and msg.startswith("Closed comm")
                    and "while trying to write" in msg)


_RACE = _ShutdownRace()


def _drop_shutdown_race() -> None:
    """Put :class:`_ShutdownRace` on the scheduler's logger (once: the same filter object)."""
    logging.getLogger("distributed.scheduler").addFilter(_RACE)


def _exception_text(future) -> str:
    try:
        exc = future.exception(timeout=1)
        return f"{type(exc).__name__}: {exc}" if exc else "no result"
    except Exception as exc:
        return type(exc).__name__


#: Address schemes of a Dask scheduler a study connects to (tls needs certificates and ucx the
#: UCX libraries, neither of which a study sets up).
SCHEMES = ("tcp",)


def cores() -> int:
    """The cores this process may run on (a local cluster's most workers)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):         # pragma: no cover - not Linux
        return os.cpu_count() or 1


def executor_problems(scheduler: Optional[str] = None, workers=None,
                      serial: bool = False) -> list:
    """What is wrong with where a study would run, before anything starts: a scheduler address
    that is not ``tcp://host:port`` (or ``host:port``), a worker count that is not a whole number
    from 1 to the cores (0 or None: one per core), workers given with a scheduler or ``serial``.
    Each a :class:`~.model.Problem` of ``Study``, naming the field."""
    from urllib.parse import urlsplit

    from .parameters import problem
    out = []
    if scheduler is not None:
        text = str(scheduler).strip()
        scheme, sep, rest = text.partition("://")
        if not sep:
            scheme, rest = "tcp", text
        host, port = "", None
        try:
            parts = urlsplit(f"tcp://{rest}")
            host, port = parts.hostname, parts.port
        except ValueError:
            pass
        if scheme.lower() not in SCHEMES:
            out.append(problem("Study", "Scheduler", (
                f"{text!r}: the scheme {scheme}:// is not one a study can use; give a Dask "
                "scheduler's address as tcp://host:port (e.g. tcp://127.0.0.1:8786)")))
        elif not host or port is None or parts.path not in ("", "/") or parts.query:
            out.append(problem("Study", "Scheduler", (
                f"{text!r} is not an address tcp://host:port (e.g. tcp://127.0.0.1:8786)")))
        if serial:
            out.append(problem("Study", "Scheduler", "a scheduler and serial exclude each other"))
    if workers is not None:
        n = cores()
        if isinstance(workers, bool) or not isinstance(workers, int):
            out.append(problem("Study", "Workers", f"{workers!r} is not a whole number"))
        elif scheduler is not None and workers:
            out.append(problem("Study", "Workers", (
                f"{workers}: the cluster at the scheduler has its own workers; give Workers only "
                "for a local cluster")))
        elif not 0 <= workers <= n:
            out.append(problem("Study", "Workers", (
                f"{workers}: a local cluster takes 1 to {n} worker processes (the cores of this "
                "machine; 0: one per core)")))
    return out


def make_executor(scheduler: Optional[str] = None, workers: Optional[int] = None,
                  serial: bool = False):
    """:class:`SerialExecutor` when ``serial``, else a :class:`DaskExecutor`.

    Raises
    ------
    StudyError
        :func:`executor_problems` found something wrong (nothing was started).
    """
    from .parameters import StudyError
    problems = executor_problems(scheduler, workers, serial)
    if problems:
        raise StudyError(problems)
    return SerialExecutor() if serial else DaskExecutor(scheduler, workers or None)
