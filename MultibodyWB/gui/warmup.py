"""The solver's kernels compiled in a separate process, so that FreeCAD never waits on numba.

:func:`start` launches ``python3 -m MultibodyWB.solver warmup`` (see
:mod:`MultibodyWB.solver.run.warmup`) unless the kernels are ready or a warm-up is running already:
the workbench starts one when it is activated, and the Simulate panel waits for it before its first
run, showing the elapsed time (a fixed-step mstmm run only for the warm-up's first stage, its
kernels: :func:`ready`); :func:`stop` ends it at once (Cancel). Being another process, the
compile neither freezes FreeCAD nor holds its Python lock.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import FreeCAD

_process = None
_started = 0.0


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
    from ..solver.run.warmup import is_warm
    return is_warm(stage)


def stage_of(method, integrator):
    """The warm-up stage a run with these settings waits for (``solver.run.warmup.stage_of``):
    a fixed-step mstmm run starts as soon as those kernels are compiled."""
    from ..solver.run.warmup import stage_of as solver_stage_of
    return solver_stage_of(method, integrator)


def running():
    """True while a warm-up process started here is running."""
    return _process is not None and _process.poll() is None


def elapsed():
    """Seconds since the running (or last) warm-up started."""
    return time.perf_counter() - _started if _process is not None else 0.0


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


def start():
    """Start the warm-up process if the kernels are not ready and none runs; return whether one
    runs now."""
    global _process, _started
    if running():
        return True
    if ready():
        return False
    python = python_executable()
    if python is None:
        return False
    folder = FreeCAD.getUserAppDataDir()
    log = os.path.join(folder, "multibodywb-warmup.log")
    try:
        with open(log, "w") as out:
            _process = subprocess.Popen([python, "-m", "MultibodyWB.solver", "warmup"],
                                        cwd=folder, env=process_environment(), stdout=out,
                                        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    except OSError as exc:
        FreeCAD.Console.PrintWarning(f"MultibodyWB: the solver could not be compiled ahead "
                                     f"({exc}); the first run compiles it\n")
        _process = None
        return False
    _started = time.perf_counter()
    return True


def finished_ok():
    """True when the last warm-up ended well (or the kernels are ready anyway)."""
    if _process is not None and _process.poll() not in (None, 0):
        return False
    return ready()


def stop():
    """End a running warm-up now (what it compiled so far stays cached)."""
    global _process
    if running():
        _process.kill()
        _process.wait(5)
    _process = None
