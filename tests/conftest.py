"""pytest plumbing shared by all tests.

Solver tests need nothing from here. Tests that need FreeCAD declare it with a marker and are skipped,
with the reason, where it is missing:

``@pytest.mark.freecad``
    imports FreeCAD in the test process: use the ``freecad`` fixture, which imports and returns the
    module (skipping the test if the import fails) rather than a module-level ``import FreeCAD``.
    FreeCAD's library directory (Debian: /usr/lib/freecad-python3/lib, or ``$MBWB_FREECAD_LIB``) is
    appended to ``sys.path`` for this; FreeCAD then adds its own module directories to ``sys.path``.
``@pytest.mark.freecadcmd``
    runs FreeCAD's console application in a subprocess (``freecad_env.run_freecadcmd``).
``@pytest.mark.gui``
    runs the FreeCAD GUI under Xvfb in a subprocess (``freecad_env.run_freecad_gui``).

FreeCAD never sees the real user directory: ``FREECAD_USER_HOME`` points to a temporary directory for the
whole session (in-process FreeCAD), and each subprocess gets its own (see ``freecad_env``).
"""

import importlib.util
import os
import shutil
import signal
import sys
import tempfile

import pytest

# Ctrl-C as a user's terminal delivers it: a shell starting a command in the background without
# job control (as scripts/test.sh starts the FreeCAD 1.0 suite beside the host's) leaves SIGINT
# ignored, which every process it starts inherits; a Python started so never turns SIGINT into
# KeyboardInterrupt, and the tests that send the solver's command line a Ctrl-C saw it ignored.
# A handled signal is reset to its default in the programs the tests start.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import freecad_env  # noqa: E402

# Before anything can import FreeCAD: its user data and configuration go to a throw-away directory.
_SESSION_USER_HOME = tempfile.mkdtemp(prefix="mbwb-pytest-freecad-")
os.environ["FREECAD_USER_HOME"] = _SESSION_USER_HOME

_FREECAD_LIB = freecad_env.freecad_lib_dir()
if _FREECAD_LIB and _FREECAD_LIB not in sys.path:
    sys.path.append(_FREECAD_LIB)

_MARKERS = {
    "freecad": "imports FreeCAD in the test process (skipped if FreeCAD is not importable)",
    "freecadcmd": "runs FreeCAD's console application (skipped if freecadcmd is missing)",
    "gui": "runs the FreeCAD GUI under Xvfb (skipped if freecad or xvfb-run is missing)",
}

_freecad_import = {}


def freecad_import_error():
    """None if ``import FreeCAD`` works in this process, else why not (the import is tried once)."""
    if "error" not in _freecad_import:
        try:
            import FreeCAD  # noqa: F401
        except Exception as exc:  # ImportError, or a crash of FreeCAD's own init scripts
            _freecad_import["error"] = (
                f"FreeCAD is not importable from {sys.executable} "
                f"(library directory: {_FREECAD_LIB or 'not found'}): {exc!r}")
        else:
            _freecad_import["error"] = None
    return _freecad_import["error"]


def _skip_reason(marker):
    if marker == "freecad":
        # Cheap check at collection; the ``freecad`` fixture does the import (and skips if it fails).
        if importlib.util.find_spec("FreeCAD") is None:
            return (f"FreeCAD is not importable from {sys.executable} "
                    f"(library directory: {_FREECAD_LIB or 'not found'})")
    if marker == "freecadcmd":
        if freecad_env.freecad_executable(gui=False) is None:
            return "freecadcmd not found (install FreeCAD or set MBWB_FREECADCMD)"
    if marker == "gui":
        missing = [name for name, ok in (("freecad", freecad_env.freecad_executable(gui=True)),
                                         ("xvfb-run", shutil.which("xvfb-run"))) if not ok]
        if missing:
            return "GUI test needs " + " and ".join(missing) + ", not found"
    return None


def pytest_configure(config):
    for name, description in _MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {description}")


def pytest_collection_modifyitems(config, items):
    reasons = {}
    for item in items:
        for marker in _MARKERS:
            if item.get_closest_marker(marker) is None:
                continue
            if marker not in reasons:
                reasons[marker] = _skip_reason(marker)
            if reasons[marker]:
                item.add_marker(pytest.mark.skip(reason=reasons[marker]))


def pytest_unconfigure(config):
    shutil.rmtree(_SESSION_USER_HOME, ignore_errors=True)


@pytest.fixture(scope="session")
def freecad():
    """The FreeCAD module, imported in the test process (the test is skipped if it cannot be)."""
    error = freecad_import_error()
    if error:
        pytest.skip(error)
    import FreeCAD
    return FreeCAD
