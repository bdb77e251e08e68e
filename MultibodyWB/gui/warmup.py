"""The solver's kernels compiled in separate processes, so that FreeCAD never waits on numba.

A warm-up process is ``python3 -m MultibodyWB.solver.run.warmup`` (see
:mod:`MultibodyWB.solver.run.warmup`): it compiles the kernels stage by stage (the mstmm method's
fixed-step integrators first, the default run's) and writes its progress to a status file.

- :func:`start_at_startup`, called by InitGui.py when FreeCAD's GUI starts: the whole warm-up in
  the background (the process itself returns at once when the kernels are ready, so FreeCAD's
  start imports nothing of the solver); not in FreeCAD's console mode, where a compile beside a
  script would only slow it (scripts compile what they run, and the README's set-up command is
  there for them). The preference ``Mod/MultibodyWB/CompileAtStart`` (default on) or the
  environment variable ``MBWB_COMPILE_AT_START=0`` switches it off.
- :func:`start`: the same when the workbench is activated, if none runs and the kernels are not
  ready.
- :func:`request`: the Simulate panel's Run, for the stage its run needs (:func:`stage_of`): if
  the running warm-up is compiling another stage, a second process compiles this one alone beside
  it (at normal priority; the whole warm-up lowers its own once its first stage is done).
- :func:`progress`: the estimate the panel shows (stage k of n, seconds left), from the status
  files; :func:`stop` ends every warm-up started here at once (Cancel).

Being other processes, the compiles neither freeze FreeCAD nor hold its Python lock.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import tempfile
import time

import FreeCAD

#: FreeCAD's parameter group of the workbench's preferences.
PREFERENCES = "User parameter:BaseApp/Preferences/Mod/MultibodyWB"
#: Environment variable that switches the compile at FreeCAD's start off ("0") or on ("1").
AT_START_ENV = "MBWB_COMPILE_AT_START"


class _Warmup:
    """A warm-up process started here: what it compiles (``only`` one stage, else all, ``first``
    first), its status file, when it started."""

    def __init__(self, process, status, first=None, only=None):
        self.process = process
        self.status = status
        self.first = first
        self.only = only
        self.started = time.perf_counter()

    def running(self):
        return self.process.poll() is None

    def state(self):
        from ..solver.api import read_warmup_status as read_status
        return read_status(self.status)


#: The warm-ups started here, oldest first (the whole one, then stage-only ones).
_warmups: list = []
_count = itertools.count()


def python_executable():
    """The Python interpreter FreeCAD embeds, as a program (``/usr/bin/python3.11`` for Debian's
    FreeCAD), or None when none is found. Not the first ``python3`` on PATH: that may be
    another Python without FreeCAD's packages."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    candidates = [sys.executable, os.path.join(sys.prefix, "bin", version),
                  os.path.join(sys.prefix, "bin", "python3")]
    for path in candidates:
        if path and os.path.basename(path).startswith("python") and os.access(path, os.X_OK):
            return path
    return None


def ready(stage=None):
    """True when the kernels are compiled and cached for this FreeCAD's Python (with ``stage``:
    those of that stage of the warm-up, :func:`stage_of`)."""
    from ..solver.api import is_warm
    return is_warm(stage)


def stage_of(method, integrator):
    """The warm-up stage a run with these settings waits for (``solver.run.warmup.stage_of``)."""
    from ..solver.api import warmup_stage_of as solver_stage_of
    return solver_stage_of(method, integrator)


def running():
    """True while a warm-up process started here is running."""
    return any(w.running() for w in _warmups)


def elapsed():
    """Seconds since the oldest running (else the last) warm-up started here."""
    alive = [w for w in _warmups if w.running()] or _warmups[-1:]
    return time.perf_counter() - alive[0].started if alive else 0.0


def package_parent():
    """The folder holding the ``MultibodyWB`` package, spelt as this FreeCAD imported it (through
    a symlink if the add-on is linked into the Mod folder)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def process_environment():
    """The warm-up process's environment: FreeCAD's, with the package's folder first on
    ``PYTHONPATH``.

    The process must import the solver from the same path as FreeCAD: numba files the compiled
    code of a source file under a folder named after that file's path (``abspath``, symlinks not
    resolved) whenever the cache is not beside the sources (``NUMBA_CACHE_DIR``, or the user-wide
    cache of a read-only installation). Started with ``-m`` from the package's folder, the
    process would import it from that folder's real path (the working directory, symlinks
    resolved) and compile into another folder than the one FreeCAD's runs read: the stamp would
    say "ready" and the first run would compile again inside FreeCAD.
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([package_parent()] + [
        p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env


def _launch(first=None, only=None, background=False):
    """Start a warm-up process; return it (a :class:`_Warmup`) or None when it cannot start."""
    python = python_executable()
    if python is None:
        return None
    for w in _warmups:                                  # the status files of those that ended
        if not w.running():
            _remove(w.status)
    folder = FreeCAD.getUserAppDataDir()
    name = f"multibodywb-warmup{'-' + only if only else ''}"
    log = os.path.join(folder, name + ".log")
    status = os.path.join(tempfile.gettempdir(), f"{name}-{os.getpid()}-{next(_count)}.json")
    _remove(status)                                     # a stale one would be read as its own
    from ..solver.api import WARMUP_MODULE        # a name: imports nothing of the solver
    command = [python, "-m", WARMUP_MODULE, "--status", status]
    command += ["--only", only] if only else (["--first", first] if first else [])
    command += ["--background"] if background else []
    try:
        with open(log, "w") as out:
            process = subprocess.Popen(command, cwd=folder, env=process_environment(),
                                       stdout=out, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL)
    except OSError as exc:
        FreeCAD.Console.PrintWarning(f"MultibodyWB: the solver could not be compiled ahead "
                                     f"({exc}); the first run compiles it\n")
        return None
    warmup = _Warmup(process, status, first=first, only=only)
    _warmups.append(warmup)
    return warmup


def _whole():
    """The running whole warm-up started here, or None."""
    for w in _warmups:
        if w.only is None and w.running():
            return w
    return None


def start(first=None, check=True, background=False):
    """Start the whole warm-up (``first``: that stage first) if none runs and (with ``check``)
    the kernels are not ready; return whether one runs now. Without ``check`` nothing of the
    solver is imported here: the process finds the stamp itself and ends at once."""
    if _whole() is not None:
        return True
    if check and ready():
        return False
    return _launch(first=first, background=background) is not None


def compile_at_start_wanted():
    """Whether FreeCAD's start compiles the kernels: the environment variable
    :data:`AT_START_ENV` if set ("0" no, anything else yes), else the preference
    ``CompileAtStart`` (default yes)."""
    value = os.environ.get(AT_START_ENV)
    if value is not None:
        return value.strip() not in ("0", "", "no", "false")
    return FreeCAD.ParamGet(PREFERENCES).GetBool("CompileAtStart", True)


def start_at_startup():
    """Called when FreeCAD's GUI starts (InitGui.py): the whole warm-up in the background, the
    fixed-step stage (the default run's) first, if wanted (:func:`compile_at_start_wanted`).
    Imports nothing of the solver, never raises: FreeCAD's start must not suffer from it."""
    try:
        if not FreeCAD.GuiUp or not compile_at_start_wanted():
            return False
        return start(check=False, background=True)
    except Exception as exc:                            # noqa: BLE001 - see above
        FreeCAD.Console.PrintLog(f"MultibodyWB: no compile at start ({exc})\n")
        return False


def _will_compile(w, stage):
    """Whether warm-up ``w`` (running) is compiling ``stage`` now or takes it next."""
    if w.only is not None:
        return w.only == stage
    state = w.state()
    if state is None:                                   # not started yet: its order
        return (w.first or "fixed-step") == stage
    if stage in (state.get("done") or []) or state.get("stage") == stage:
        return True
    order = [s for s in state.get("order", []) if s not in (state.get("done") or [])]
    return (state.get("stage") is None and order[:1] == [stage])


def request(stage):
    """The Simulate panel's run needs ``stage``: make sure it is being compiled now. Returns
    whether the panel must wait (False: the stage is ready, or no process could be started and
    the run compiles what it needs itself).

    A warm-up already compiling it (or about to) is waited for; else, when a whole warm-up
    compiles another stage, a process compiles this one alone beside it; else a whole
    warm-up is started with this stage first."""
    if ready(stage):
        return False
    for w in _warmups:
        if w.running() and _will_compile(w, stage):
            return True
    if _whole() is not None:
        return _launch(only=stage) is not None
    return _launch(first=stage, background=True) is not None


def progress(stage):
    """The estimate of the wait for ``stage`` (``solver.run.warmup.Estimate``: stage k of n,
    seconds left, fraction done), from the warm-up that compiles that stage alone if one runs
    (:func:`request`), else from the whole one; None when none runs or it has not written its
    status yet."""
    from ..solver.api import warmup_estimate as estimate
    alone = [w for w in _warmups if w.running() and w.only == stage]
    best = None
    for w in alone or [w for w in _warmups if w.running() and w.only is None]:
        state = w.state()
        if state is None:
            continue
        e = estimate(state, stage)
        if best is None or e.remaining < best.remaining:
            best = e
    return best


def finished_ok():
    """True when the last warm-ups ended well (or the kernels are ready anyway)."""
    if any(w.process.poll() not in (None, 0) for w in _warmups):
        return False
    return ready()


def stop():
    """End every running warm-up started here now (what they compiled so far stays cached)."""
    for w in _warmups:
        if w.running():
            w.process.kill()
            w.process.wait(5)
        _remove(w.status)
    _warmups.clear()


def _remove(path):
    try:
        os.remove(path)
    except OSError:
        pass
