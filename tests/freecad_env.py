"""Run FreeCAD (console or GUI) with this add-on installed in a throw-away user directory.

How FreeCAD finds the add-on
----------------------------
At start-up FreeCAD (FreeCADInit.py) lists ``<user data dir>/Mod/*``. For each entry with a package.xml
it puts the entry and every workbench ``<subdirectory>`` on ``sys.path`` and runs ``Init.py`` there
(with the GUI, FreeCADGuiInit.py then runs ``InitGui.py``). The Addon Manager installs this add-on as
``Mod/MultibodyWB/``; the tests do the same with a symlink ``Mod/MultibodyWB -> <repository>``, so the
package is imported from the working tree as ``import MultibodyWB``.

Where the user directory is
---------------------------
``FREECAD_USER_HOME=<dir>`` makes FreeCAD use ``<dir>/`` for its user data (``Mod/``, macros), its
configuration (``user.cfg``, ``system.cfg``) and ``<dir>/temp/`` for temporary files and its cache; checked
on Debian's FreeCAD 0.20.2 and 1.0.0 (``FreeCAD.getUserAppDataDir()``, ``getUserConfigDir()`` and
``getUserMacroDir()`` are ``<dir>/``, ``getTempPath()`` and ``getUserCachePath()`` ``<dir>/temp/``).
``HOME`` and the ``XDG_*`` directories are also pointed inside ``<dir>`` so that nothing (FreeCAD's
fallbacks, Qt, fontconfig, Mesa's shader cache, which ignores ``HOME`` but honours ``XDG_CACHE_HOME``)
writes to the real home directory: tests never touch ``~/.FreeCAD``, ``~/.local/share/FreeCAD``,
``~/.config/FreeCAD`` or ``~/.cache``.

Console messages
----------------
FreeCAD writes every console message (Log, Msg, Wrn, Err) to the file given by ``--log-file``, one
``Level: text`` record per message, in the same format in 0.20 and 1.0. The option
must come *after* the script: Debian's ``freecadcmd`` lets Python parse the options before the first file
name and rejects ``--log-file`` there.

Scripts run inside FreeCAD receive, through the environment, the path of a JSON result file to write
(``MBWB_RESULT_FILE``) and a directory for other artefacts (``MBWB_OUTPUT_DIR``). GUI scripts use the
helpers in ``tests/gui/in_freecad.py`` for that.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
ADDON_NAME = "MultibodyWB"

FREECAD_LIB_CANDIDATES = ("/usr/lib/freecad-python3/lib", "/usr/lib/freecad/lib")
"""Directories holding FreeCAD.so (Debian's layout); ``MBWB_FREECAD_LIB`` overrides them."""

RESULT_ENV = "MBWB_RESULT_FILE"
OUTPUT_DIR_ENV = "MBWB_OUTPUT_DIR"

XVFB_SCREEN = "1280x1024x24"

FORBIDDEN_GUI_MODULES = ("FreeCAD", "FreeCADGui", "Part", "PySide", "PySide2", "PySide6", "pivy",
                         "shiboken2", "shiboken6", "PyQt5", "PyQt6")
"""Top-level modules the FreeCAD-free solver package must never import."""


class FreeCADRunError(RuntimeError):
    """FreeCAD did not produce its result (crash, time-out, script never ran)."""


def freecad_lib_dir():
    """Directory to put on ``sys.path`` for ``import FreeCAD``, or None if there is none."""
    candidates = [os.environ["MBWB_FREECAD_LIB"]] if os.environ.get("MBWB_FREECAD_LIB") else []
    for path in candidates + list(FREECAD_LIB_CANDIDATES):
        if os.path.isfile(os.path.join(path, "FreeCAD.so")):
            return path
    return None


def freecad_executable(gui):
    """Path of the FreeCAD GUI (``gui=True``) or console executable, or None if not installed.

    ``MBWB_FREECAD`` and ``MBWB_FREECADCMD`` override the search on PATH.
    """
    override = os.environ.get("MBWB_FREECAD" if gui else "MBWB_FREECADCMD")
    if override:
        return override if shutil.which(override) else None
    names = ("freecad", "FreeCAD") if gui else ("freecadcmd", "FreeCADCmd")
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    return None


def make_user_home(parent, addon_dir=REPO_ROOT):
    """Create a FreeCAD user directory under ``parent`` with the add-on installed in its ``Mod/``.

    Parameters
    ----------
    parent : str or Path
        Existing directory to create ``freecad-user/`` in.
    addon_dir : str or Path
        Directory holding package.xml, Init.py and InitGui.py (default: this repository).

    Returns
    -------
    Path
        The user directory (the value for ``FREECAD_USER_HOME``).
    """
    home = Path(parent) / "freecad-user"
    mod = home / "Mod"
    mod.mkdir(parents=True, exist_ok=True)
    link = mod / ADDON_NAME
    if not link.is_symlink():
        link.symlink_to(Path(addon_dir).resolve(), target_is_directory=True)
    return home


def freecad_environ(user_home, output_dir=None, result_file=None):
    """Environment for a FreeCAD subprocess that only uses ``user_home`` (see the module docstring)."""
    home = Path(user_home)
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("PYTHON", "XDG_", "FREECAD_", "QT_"))}
    runtime = home / "xdg-runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    env.update({
        "HOME": str(home),
        "FREECAD_USER_HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "xdg-config"),
        "XDG_DATA_HOME": str(home / "xdg-data"),
        "XDG_CACHE_HOME": str(home / "xdg-cache"),
        "XDG_RUNTIME_DIR": str(runtime),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        "LANG": os.environ.get("LANG") or "C.UTF-8",
        # Qt WebEngine (Start page, help) refuses to run as root without this.
        "QTWEBENGINE_CHROMIUM_FLAGS": "--no-sandbox",
    })
    # no compile of the solver's kernels at FreeCAD's start (InitGui.py) beside the tests, unless
    # a test asks for it (tests/test_gui_simulate_compile.py)
    env.setdefault("MBWB_COMPILE_AT_START", "0")
    if output_dir is not None:
        env[OUTPUT_DIR_ENV] = str(output_dir)
    if result_file is not None:
        env[RESULT_ENV] = str(result_file)
    return env


@dataclass
class FreeCADRun:
    """What a FreeCAD subprocess left behind."""

    command: list
    returncode: int
    timed_out: bool
    stdout: str
    stderr: str
    log: str
    result: dict = None
    work_dir: Path = None
    user_home: Path = None
    problems: list = field(default_factory=list)

    def describe(self, tail=60):
        """Human-readable summary for assertion messages: command, status and the end of each output."""
        def last(text):
            return "\n".join(text.splitlines()[-tail:])
        return (f"command: {' '.join(self.command)}\nreturncode: {self.returncode}, "
                f"timed out: {self.timed_out}\nresult: {json.dumps(self.result, indent=1)[:4000]}\n"
                f"--- stdout (end) ---\n{last(self.stdout)}\n--- stderr (end) ---\n{last(self.stderr)}\n"
                f"--- log (end) ---\n{last(self.log)}")


_LOG_RECORD = re.compile(r"^\ufeff?(Log|Msg|Wrn|Err|Critical|Ntf|Notification|TCritical|TErr|TWrn|TMsg):"
                         r" ?", re.MULTILINE)
_ERRORISH = re.compile(r"error|exception|fail|traceback|not support", re.IGNORECASE)


def parse_log(text):
    """Split a FreeCAD log file into ``(level, message)`` records (messages may span several lines)."""
    records = []
    matches = list(_LOG_RECORD.finditer(text))
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        records.append((match.group(1), text[match.end():end]))
    return records


def addon_markers(*extra_paths):
    """Strings whose presence in a message means the message is about this add-on."""
    markers = [ADDON_NAME, "Multibody", str(REPO_ROOT)]
    markers.extend(str(path) for path in extra_paths if path)
    return markers


def find_problems(log="", texts=(), markers=None):
    """Error messages about the add-on, and any Python traceback, in FreeCAD's output.

    Parameters
    ----------
    log : str
        Content of FreeCAD's ``--log-file``.
    texts : iterable of str
        Other output (stdout, stderr, report view text), scanned line by line.
    markers : list of str, optional
        Strings identifying the add-on (default: :func:`addon_markers`).

    Returns
    -------
    list of str
        One entry per offending message; empty if all is well.
    """
    markers = markers if markers is not None else addon_markers()
    problems = []

    def about_us(message):
        return any(marker in message for marker in markers)

    previous = ""
    for level, message in parse_log(log):
        if "Traceback" in message:
            # FreeCAD often prints the error message just before its traceback: keep them together.
            problems.append(f"{previous}{level}: {message.strip()}")
            previous = ""
        elif about_us(message) and (level.endswith(("Err", "Critical", "Wrn"))
                                    or _ERRORISH.search(message)):
            problems.append(f"{level}: {message.strip()}")
            previous = ""
        else:
            previous = f"{level}: {message.strip()}\n" if level.endswith(("Err", "Critical")) else ""
    for text in texts:
        lines = text.splitlines()
        for i, line in enumerate(lines):
            if "Traceback" in line:
                problems.append("\n".join(lines[i:i + 12]))
            elif about_us(line) and _ERRORISH.search(line):
                problems.append(line)
    return problems


def _kill_group(proc):
    """Terminate the process group of ``proc`` (FreeCAD, xvfb-run and Xvfb), then kill it if needed."""
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def run_freecad(script_path, timeout, gui, work_dir=None, addon_dir=REPO_ROOT, extra_args=()):
    """Run ``script_path`` in FreeCAD (GUI under Xvfb if ``gui``) with the add-on installed.

    Parameters
    ----------
    script_path : str or Path
        Python file FreeCAD runs after start-up (imported as a module: ``__file__`` is set).
    timeout : float
        Seconds before FreeCAD (and Xvfb) are killed; the run is then reported as timed out.
    gui : bool
        Run ``freecad`` under ``xvfb-run`` instead of ``freecadcmd``.
    work_dir : str or Path, optional
        Directory for the user directory, the log and the artefacts; a temporary directory that is
        removed afterwards if not given (pass one, e.g. pytest's ``tmp_path``, to keep screenshots).
    addon_dir : str or Path
        Add-on to install (default: this repository).
    extra_args : sequence of str
        More FreeCAD command-line arguments, placed after the script.

    Returns
    -------
    FreeCADRun
        With ``result`` the JSON object the script wrote to ``$MBWB_RESULT_FILE`` (None if it wrote none)
        and ``problems`` as found by :func:`find_problems` in the log, stdout and stderr.
    """
    executable = freecad_executable(gui)
    if executable is None:
        raise FreeCADRunError("FreeCAD %s is not installed" % ("GUI" if gui else "console"))
    own_dir = work_dir is None
    work = Path(tempfile.mkdtemp(prefix="mbwb-freecad-")) if own_dir else Path(work_dir)
    try:
        user_home = make_user_home(work, addon_dir)
        output_dir = work / "output"
        output_dir.mkdir(exist_ok=True)
        result_file = output_dir / "result.json"
        log_file = work / "freecad.log"
        for stale in (result_file, log_file):
            if stale.exists():
                stale.unlink()
        command = [executable, str(Path(script_path).resolve()), "--log-file", str(log_file)]
        command += list(extra_args)
        if gui:
            xvfb = shutil.which("xvfb-run")
            if xvfb is None:
                raise FreeCADRunError("xvfb-run is not installed")
            # the first display number tried (-a: the next free one from there, by the lock
            # files in /tmp): the FreeCAD 1.0 root has a /tmp of its own but shares the host's
            # abstract X sockets, so its suite, run beside the host's, starts elsewhere
            first = os.environ.get("MBWB_XVFB_SERVERNUM", "99")
            command = [xvfb, "-a", "-n", first, "-s", f"-screen 0 {XVFB_SCREEN}"] + command
        env = freecad_environ(user_home, output_dir, result_file)
        proc = subprocess.Popen(command, cwd=str(work), env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                errors="replace", start_new_session=True)
        timed_out = False
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc)
            stdout, stderr = proc.communicate()
        log = log_file.read_text(encoding="utf-8", errors="replace") if log_file.exists() else ""
        result = None
        if result_file.exists():
            try:
                result = json.loads(result_file.read_text(encoding="utf-8"))
            except ValueError as exc:
                result = {"unreadable_result": str(exc)}
        markers = addon_markers(user_home / "Mod" / ADDON_NAME)
        problems = find_problems(log, (stdout, stderr), markers)
        return FreeCADRun(command=command, returncode=proc.returncode, timed_out=timed_out,
                          stdout=stdout, stderr=stderr, log=log, result=result,
                          work_dir=None if own_dir else work, user_home=user_home, problems=problems)
    finally:
        if own_dir:
            shutil.rmtree(work, ignore_errors=True)


def run_freecadcmd(script_path, timeout=120, work_dir=None, addon_dir=REPO_ROOT):
    """Run ``script_path`` in FreeCAD's console application; see :func:`run_freecad`."""
    return run_freecad(script_path, timeout, gui=False, work_dir=work_dir, addon_dir=addon_dir)


def run_freecad_gui(script_path, timeout=240, work_dir=None, addon_dir=REPO_ROOT):
    """Run a GUI test script in FreeCAD under Xvfb and return what it reported.

    The script (see ``tests/gui/in_freecad.py``) does its checks once the GUI is up, writes a JSON object
    to ``$MBWB_RESULT_FILE`` and closes FreeCAD.

    Returns
    -------
    dict
        The script's JSON object, plus ``"_problems"`` (error messages about the add-on and tracebacks
        found in FreeCAD's log and output, and in the report view text the script returned as
        ``"report_view"``), ``"_output_dir"`` (where the script's artefacts are, or None if ``work_dir``
        was not given) and ``"_run"`` (the :class:`FreeCADRun`).

    Raises
    ------
    FreeCADRunError
        If FreeCAD timed out or the script wrote no result, with FreeCAD's output in the message.
    """
    run = run_freecad(script_path, timeout, gui=True, work_dir=work_dir, addon_dir=addon_dir)
    if run.timed_out or run.result is None:
        raise FreeCADRunError("FreeCAD GUI run produced no result\n" + run.describe())
    result = dict(run.result)
    markers = addon_markers(run.user_home / "Mod" / ADDON_NAME)
    result["_problems"] = run.problems + find_problems(texts=(result.get("report_view") or "",),
                                                       markers=markers)
    result["_output_dir"] = str(run.work_dir / "output") if run.work_dir else None
    result["_run"] = run
    return result


def run_gui_check(script_path, work_dir, timeout=240, shots=()):
    """Run a GUI check script (:func:`run_freecad_gui`), copy its screenshots ``shots`` (file
    names in its output folder) to ``$MBWB_ARTIFACTS_DIR`` when that is set, fail on an
    exception the script reported, and return its result."""
    result = run_freecad_gui(script_path, timeout=timeout, work_dir=work_dir)
    artifacts = os.environ.get("MBWB_ARTIFACTS_DIR")
    if artifacts:
        os.makedirs(artifacts, exist_ok=True)
        for name in shots:
            path = Path(result["_output_dir"]) / name
            if path.is_file():
                shutil.copy(path, Path(artifacts) / name)
    assert "exception" not in result, result["exception"]
    return result

