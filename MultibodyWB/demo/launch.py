"""Start FreeCAD from plain Python: ``import FreeCAD`` in this process, or the GUI under Xvfb.

Used by the demo and the benchmarks (the tests have their own, fuller harness in
``tests/freecad_env.py``, which also collects logs and results).

- :func:`import_freecad` puts FreeCAD's library directory on ``sys.path`` (Debian:
  ``/usr/lib/freecad-python3/lib``) and imports ``FreeCAD``: the document layer without a screen.
- :func:`run_gui_script` runs a Python file inside FreeCAD's GUI, under ``xvfb-run`` when there is
  no display, with this add-on installed in a throw-away user directory (``FREECAD_USER_HOME``,
  ``Mod/MultibodyWB`` a symlink to this checkout), so nothing is written to the user's own
  FreeCAD settings. The script reads its inputs from the environment.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

from ..resources import ADDON_DIR

#: Where Debian's FreeCAD keeps ``FreeCAD.so`` (0.20 and 1.0).
FREECAD_LIB_CANDIDATES = ("/usr/lib/freecad-python3/lib", "/usr/lib/freecad/lib")


class LaunchError(RuntimeError):
    """FreeCAD is not installed, or its GUI cannot be started here."""


def import_freecad():
    """Import and return the ``FreeCAD`` module (headless)."""
    try:
        import FreeCAD
        return FreeCAD
    except ImportError:
        pass
    for path in ([os.environ["MBWB_FREECAD_LIB"]] if os.environ.get("MBWB_FREECAD_LIB")
                 else []) + list(FREECAD_LIB_CANDIDATES):
        if os.path.isfile(os.path.join(path, "FreeCAD.so")):
            if path not in sys.path:
                sys.path.append(path)
            import FreeCAD
            return FreeCAD
    raise LaunchError("FreeCAD is not installed (no FreeCAD.so in "
                      f"{', '.join(FREECAD_LIB_CANDIDATES)}); scripts/install-deps.sh installs it")


def gui_command():
    """The command starting FreeCAD's GUI: ``freecad``, under ``xvfb-run`` without a display."""
    exe = os.environ.get("MBWB_FREECAD") or shutil.which("freecad") or shutil.which("FreeCAD")
    if not exe:
        raise LaunchError("FreeCAD's GUI (freecad) is not installed")
    if os.environ.get("DISPLAY"):
        return [exe]
    xvfb = shutil.which("xvfb-run")
    if xvfb is None:
        raise LaunchError("there is no display and xvfb-run is not installed")
    return [xvfb, "-a", "-s", "-screen 0 1280x1024x24", exe]


#: What :func:`run_gui_script` leaves out when it copies the add-on (a fresh clone has none).
COPY_IGNORE = shutil.ignore_patterns(".git", "__pycache__", "*.pyc", "out", ".pytest_cache")


def run_gui_script(script, env=None, timeout=600, copy_addon=False, before=None):
    """Run ``script`` in FreeCAD's GUI with this add-on; return the CompletedProcess.

    ``env`` adds variables for the script. FreeCAD's messages go to a log file whose text is
    returned as ``.log`` on the result.

    ``copy_addon``: install a copy of the add-on's files in the user directory's ``Mod`` (as a
    fresh clone there: no compiled files, paths without a symlink) instead of a symlink to this
    checkout. ``before``: called with the installed add-on's folder and the environment FreeCAD
    will get, before FreeCAD starts (e.g. to run the README's set-up command there).
    """
    home = tempfile.mkdtemp(prefix="mbwb-freecad-")
    mod = os.path.join(home, "Mod")
    os.makedirs(mod)
    addon = os.path.join(mod, "MultibodyWB")
    if copy_addon:
        shutil.copytree(ADDON_DIR, addon, ignore=COPY_IGNORE)
    else:
        os.symlink(ADDON_DIR, addon)
    runtime = os.path.join(home, "xdg-runtime")
    os.makedirs(runtime, mode=0o700)
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith(("PYTHON", "XDG_", "FREECAD_", "QT_"))}
    environ.update({"HOME": home, "FREECAD_USER_HOME": home,
                    "XDG_CONFIG_HOME": os.path.join(home, "xdg-config"),
                    "XDG_DATA_HOME": os.path.join(home, "xdg-data"),
                    "XDG_CACHE_HOME": os.path.join(home, "xdg-cache"),
                    "XDG_RUNTIME_DIR": runtime, "PYTHONDONTWRITEBYTECODE": "1",
                    "LANG": os.environ.get("LANG") or "C.UTF-8",
                    "QTWEBENGINE_CHROMIUM_FLAGS": "--no-sandbox"})
    environ.update(env or {})
    log = os.path.join(home, "freecad.log")
    command = gui_command() + [os.path.abspath(script), "--log-file", log]
    try:
        if before is not None:
            before(addon, environ)
        done = subprocess.run(command, env=environ, cwd=home, capture_output=True, text=True,
                              timeout=timeout, start_new_session=True)
    finally:
        text = open(log, errors="replace").read() if os.path.exists(log) else ""
        shutil.rmtree(home, ignore_errors=True)
    done.log = text
    return done
