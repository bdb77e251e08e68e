"""Compile the solver's kernels before anyone waits for them: ``python3 -m MultibodyWB.solver
warmup``.

The kernels (:mod:`.kernels`, :mod:`.newton_euler`) are compiled by numba on their first call and
cached on disk (``cache=True``: next to the sources when that folder is writable, else in numba's
user-wide cache folder, or ``NUMBA_CACHE_DIR``). A cold compile takes a minute or more; a process
that finds the cache loads them in about a second. :func:`warm_up` runs a few tiny models that
call every kernel with the argument types real runs use (a tree and closed loops, rk4, euler and
an adaptive integrator, drivers and every force type, contacts, stops and couplers, the
constrained and Newton-Euler methods), so that the cache holds them, then writes a stamp file
(:func:`stamp_path`) whose name stands for the sources (their contents, size and time, as
numba's cache index), Python and numba it was made for.

The runs are grouped in stages (:data:`STAGES`), one per kind of run: the mstmm method with its
fixed-step integrators (rk4, euler; the default, compiled first), with the adaptive ones, the
constrained and the Newton-Euler methods. Each stage gets a stamp of its own when its runs are
done, and a run waits only for its own stage (:func:`stage_of`, :func:`is_warm`). FreeCAD starts a
warm-up in a separate process when its GUI starts (``python3 -m MultibodyWB.solver.run.warmup``,
:func:`main`: the stage of the run asked for first, a status file for its progress) and the
Simulate panel waits for the stage its run needs, with an estimate of the time left
(:func:`estimate`, from the CPU time each stage took in this user's last compile,
:func:`durations`, and the share of a core the compile gets).

The README's set-up command runs the whole warm-up once after installing (it returns at once
when the stamp is there).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import platform
import re
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..model.settings import FIXED_STEP

try:
    import fcntl
except ImportError:                     # not on Windows: warm-ups there are not serialised
    fcntl = None

#: The solver package's folder: the sources of the compiled code are found below it.
SOLVER = Path(os.path.abspath(__file__)).parent.parent


#: A line that starts with this decorator marks a module whose compiled code numba caches.
_COMPILED = re.compile(r"^@njit", re.MULTILINE)


def sources() -> list[Path]:
    """The source files whose compiled code the cache holds (every module of the solver with a
    function decorated ``@njit``): a change of any makes the cache cold. Not this module, nor
    the time functions' (compiled per expression, not cached)."""
    found = []
    for folder, dirs, files in os.walk(SOLVER):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py"):
                path = Path(folder) / f
                if _COMPILED.search(path.read_text(encoding="utf-8")):
                    found.append(path)
    return found


def cache_beside_sources() -> bool:
    """Whether numba caches the solver's compiled code in ``__pycache__`` beside its sources:
    no ``NUMBA_CACHE_DIR`` and a source folder it can write (numba's in-tree cache; else it
    uses ``NUMBA_CACHE_DIR`` or the user-wide cache folder)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return False
    cache = SOLVER / "__pycache__"
    return os.access(cache if cache.is_dir() else SOLVER, os.W_OK)


def _key() -> str:
    import numba
    h = hashlib.sha256()
    # The source paths numba keys its cache on. Beside the sources, the cache is the folder's
    # own: the same files imported through a symbolic link (an add-on linked into FreeCAD's Mod
    # folder) share it, so the stamp takes the real paths. Elsewhere (NUMBA_CACHE_DIR, the
    # user-wide folder) numba files it under the path as imported, symbolic links kept: files
    # imported through a link compile apart, and so the stamp takes that path.
    real = cache_beside_sources()
    for path in sources():
        st = path.stat()                 # numba's cache index is keyed on these too
        h.update(f"{path.resolve() if real else path} {st.st_mtime} {st.st_size}".encode())
        h.update(path.read_bytes())
    h.update(f"{platform.python_version()} {numba.__version__}".encode())
    h.update(os.environ.get("NUMBA_CACHE_DIR", "").encode())
    return h.hexdigest()[:20]


def stamp_folders() -> list[Path]:
    """Where a stamp may be, in the order tried: beside numba's cache (``NUMBA_CACHE_DIR``, else
    this package's ``__pycache__``, where numba caches when it can write there), then the user's
    cache folder (``$XDG_CACHE_HOME/multibodywb``) for a read-only installation."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return [Path(os.environ["NUMBA_CACHE_DIR"])]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return [Path(__file__).resolve().parent / "__pycache__", Path(base) / "multibodywb"]


#: The stages of a warm-up, each a set of the runs of :func:`_models` with its own stamp, written
#: as soon as its runs are done: a run waits only for the stage of its method and integrator
#: (:func:`stage_of`). In the order a warm-up takes them by default: the kernels of the mstmm
#: method's fixed-step integrators (rk4 and euler: the default settings, and nearly every run)
#: first, then mstmm with the adaptive integrators, the constrained and the Newton-Euler methods.
FIXED_STEP_STAGE = "fixed-step"
ADAPTIVE_STAGE = "adaptive"
CONSTRAINED_STAGE = "constrained"
NEWTON_EULER_STAGE = "newton-euler"
STAGES = (FIXED_STEP_STAGE, ADAPTIVE_STAGE, CONSTRAINED_STAGE, NEWTON_EULER_STAGE)
#: What each stage compiles, for people.
STAGE_TEXT = {FIXED_STEP_STAGE: "mstmm with rk4 or euler",
              ADAPTIVE_STAGE: "mstmm with the adaptive and implicit integrators",
              CONSTRAINED_STAGE: "the constrained method",
              NEWTON_EULER_STAGE: "the Newton-Euler method"}
#: CPU seconds each stage takes into an empty cache, for the estimate when no compile of this
#: user's has been recorded yet (:func:`durations`): the project's 2-core test machines (AMD
#: EPYC, Python 3.11, numba 0.56) took 37 to 150 s for the fixed-step stage and 90 to 100 s for
#: the rest (docs/benchmarks.md: "The first Simulate after an install"). The wall time follows
#: the share of a core the compile gets (:func:`estimate`).
DEFAULT_CPU = {FIXED_STEP_STAGE: 120.0, ADAPTIVE_STAGE: 80.0, CONSTRAINED_STAGE: 5.0,
               NEWTON_EULER_STAGE: 25.0}


def stage_of(method: str, integrator: str) -> str:
    """The warm-up stage whose kernels a run with ``method`` and ``integrator`` needs (names as
    the settings spell them, any case; one of :data:`STAGES`): a run starts as soon as that
    stage's stamp is there."""
    method = str(method).lower()
    if method == "mstmm":
        return FIXED_STEP_STAGE if str(integrator).lower() in FIXED_STEP else ADAPTIVE_STAGE
    return NEWTON_EULER_STAGE if method == "newton-euler" else CONSTRAINED_STAGE


def stage_order(first: str | None = None) -> list:
    """The stages in the order a warm-up compiles them: ``first`` (the stage of the run a user
    asked for), then the others in the order of :data:`STAGES`."""
    if first is not None and first not in STAGES:
        raise ValueError(f"'{first}' is not a warm-up stage ({', '.join(STAGES)})")
    return ([first] if first else []) + [s for s in STAGES if s != first]


def _stamp_name(stage: str | None = None) -> str:
    return f"multibodywb-warm-{_key()}" + (f".{stage}" if stage else "")


def stamp_path(stage: str | None = None) -> Path | None:
    """The stamp file of the current sources, Python and numba, if there is one: of the whole
    warm-up, or with ``stage`` of that stage (the whole warm-up's stamp counts too)."""
    names = [_stamp_name()] + ([_stamp_name(stage)] if stage else [])
    for name in names:
        for folder in stamp_folders():
            if (folder / name).is_file():
                return folder / name
    return None


def is_warm(stage: str | None = None) -> bool:
    """True when a warm-up for the current sources, Python and numba has finished (with
    ``stage``: has compiled that stage's kernels, :func:`stage_of`)."""
    try:
        return stamp_path(stage) is not None
    except OSError:
        return False


def _write_stamp(text: str, stage: str | None = None) -> Path:
    name = _stamp_name(stage)
    error = None
    for folder in stamp_folders():
        try:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text)
            return folder / name
        except OSError as exc:
            error = exc
    raise error


@contextlib.contextmanager
def _one_at_a_time(stage: str | None = None):
    """Hold the warm-up lock of the current stamp (``multibodywb-warm-<key>.lock`` in the first
    stamp folder that can be written; with ``stage``, that stage's own lock,
    ``multibodywb-warm-<key>.<stage>.lock``): a warm-up started while another one of the same
    sources, Python and import path runs, in any process (a second FreeCAD, or a FreeCAD started
    again while the first one's warm-up still compiles), waits for it without using the
    processor, then finds the stamp and returns. A whole warm-up holds the stage lock of each
    stage while it compiles it; a warm-up of one stage (``warm_up(only=...)``) holds only that
    stage's, and so runs beside a whole one compiling another stage. The lock goes with its
    process, so a cancelled (killed) warm-up releases it."""
    handle = None
    if fcntl is not None:
        name = f"multibodywb-warm-{_key()}" + (f".{stage}" if stage else "") + ".lock"
        for folder in stamp_folders():
            try:
                folder.mkdir(parents=True, exist_ok=True)
                handle = open(folder / name, "a+")
                break
            except OSError:
                continue
    try:
        if handle is not None:
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        if handle is not None:
            handle.close()                  # releases the lock


def _models():
    """Tiny runs that reach every kernel: (model, simulate keyword arguments). :func:`warm_up`
    runs those of the fixed-step stage (:func:`stage_of`) first."""
    from ...examples import build
    from ..model.mechanism import Motor
    runs = []
    for name in ("double_pendulum", "branched_tree", "seed_box", "seed004"):
        m = build(name)
        runs.append((m, dict(t_end=2e-3, step=1e-3, output_step=1e-3)))
    cs = build("crank_slider")                      # a loop, a driver, a gas force
    runs.append((cs, dict(t_end=2e-4, step=1e-4, output_step=1e-4)))
    runs.append((cs, dict(t_end=2e-4, step=1e-4, output_step=1e-4, integrator="DOP853")))
    # scipy's integrators (a Python call of kernels.evaluate_into per evaluation; DOP853 and
    # RK45 run compiled, methods.mstmm.adaptive)
    runs.append((build("double_pendulum"), dict(t_end=2e-3, step=1e-3, output_step=1e-3,
                                               integrator="Radau")))
    runs.append((cs, dict(t_end=2e-4, step=1e-4, output_step=1e-4, integrator="euler")))
    fb = build("four_bar")
    fb.hinge("CrankPivot").motors = [Motor("rz", 1.0)]
    runs.append((fb, dict(t_end=2e-3, step=1e-3, output_step=1e-3)))
    dp = build("double_pendulum")
    runs.append((dp, dict(t_end=2e-3, step=1e-3, output_step=1e-3, integrator="DOP853")))
    runs.append((dp, dict(method="newton-euler", t_end=1e-4, step=1e-5, output_step=1e-4)))
    runs.append((dp, dict(method="constrained", integrator="euler", t_end=2e-3, step=1e-3,
                          output_step=1e-3)))
    ec = _elements_model()                          # contacts, a stop, a coupler
    runs.append((ec, dict(t_end=2e-3, step=1e-3, output_step=1e-3)))
    runs.append((ec, dict(t_end=2e-3, step=1e-3, output_step=1e-3, integrator="DOP853")))
    runs.append((ec, dict(t_end=2e-3, step=1e-3, output_step=1e-3, integrator="euler")))
    # the implicit TR-BDF2 (methods.mstmm.implicit), fixed step and adaptive, with contacts
    # and a loop (the adaptive stage: stage_of)
    runs.append((ec, dict(t_end=2e-3, step=1e-3, output_step=1e-3, integrator="trbdf2")))
    runs.append((cs, dict(t_end=2e-4, step=1e-4, output_step=1e-4,
                          integrator="trbdf2-adaptive")))
    ne = _elements_model()
    ne.couplers = []                                # (newton-euler takes none)
    runs.append((ne, dict(method="newton-euler", t_end=1e-4, step=1e-5, output_step=1e-4)))
    return runs


def _time_programs():
    """The compiled functions of time sampled from Python (:func:`.timeprogram.evaluate`: the
    tests'; a run evaluates them inside the adaptive kernel)."""
    from ..model.timefunction import parse
    from ..model.timeprogram import evaluate, pack
    evaluate(pack([parse("step5(t, 0, 0, 1, 2) + sin(t)")]), [0.5])


def _elements_model():
    """A ball resting on the ground (sphere - plane contact with friction), two discs on
    revolute hinges, geared, one with limits (a stop): every contact, stop and coupler kernel."""
    from ..model.mechanism import MultibodySystem
    m = MultibodySystem("Elements", gravity=(0.0, 0.0, -9.81))
    g = m.set_ground()
    ball = m.add_body("Ball", 1.0, [4e-4, 4e-4, 4e-4, 0, 0, 0], position=(0, 0, 0.1))
    bm = ball.add_marker((0, 0, 0))
    m.add_hinge("Float", "free", bm, g.add_marker((0, 0, 0)))
    m.add_contact("Touch", bm, g.add_marker((0, 0, 0)), ("sphere", {"radius": 0.1}), ("plane",),
                  stiffness=1e6, static_friction=0.5, dynamic_friction=0.4)
    for k, x in enumerate((0.5, 0.7)):
        disc = m.add_body(f"Disc{k}", 1.0, [1e-3, 1e-3, 2e-3, 0, 0, 0], position=(x, 0, 0))
        m.add_hinge(f"Axle{k}", "revolute", disc.add_marker((0, 0, 0)), g.add_marker((x, 0, 0)),
                    lower_limits=[-1.0] if k == 0 else None,
                    upper_limits=[1.0] if k == 0 else None,
                    stop_stiffness=[100.0] if k == 0 else None, initial_rates=[1.0 - 4.0 * k])
    m.add_coupler("Mesh", "gear", ("Axle0", "rz"), ("Axle1", "rz"), ratio=-3.0)
    return m


def clear_compiled() -> int:
    """Remove the solver's compiled code that is older than its newest source file from numba's
    cache (beside the sources and under ``NUMBA_CACHE_DIR``); return how many files went.

    Numba keys a cached function on its own file only: a function that calls a compiled function
    of another file (the force laws' dispatcher calling a law, the kernels calling the
    dispatcher) keeps the callee's old machine code when only the callee's file changed. Code
    compiled after the last change of any source stays (the same files imported through another
    path, as FreeCAD's Mod folder link, compile into the same folder: neither wipes the other's).
    """
    found = sources()
    names = {p.stem for p in found}
    newest = max(p.stat().st_mtime for p in found)
    folders = [p.parent / "__pycache__" for p in found]
    if os.environ.get("NUMBA_CACHE_DIR"):
        root = Path(os.environ["NUMBA_CACHE_DIR"])
        folders += [d for d in root.rglob("*") if d.is_dir() and "MultibodyWB" in str(d)]
    gone = 0
    for folder in dict.fromkeys(folders):
        if not folder.is_dir():
            continue
        for f in folder.iterdir():
            if f.suffix in (".nbi", ".nbc") and f.name.split(".", 1)[0] in names:
                try:
                    if f.stat().st_mtime < newest:
                        f.unlink()
                        gone += 1
                except OSError:
                    pass
    return gone


def _stage_of_run(model, settings) -> str:
    """The stage of one of :func:`_models`'s runs (its settings, else the model's)."""
    s = model.simulation
    return stage_of(settings.get("method") or s.method,
                    settings.get("integrator") or s.integrator)


# -- what a running warm-up has done, and how long the rest will take ---------------------------

def durations_path() -> Path:
    """Where the CPU time of each stage of this user's last compile is kept (the user's cache
    folder, ``$XDG_CACHE_HOME/multibodywb/warmup-durations.json``: across installations, so
    that the compile after an update is estimated from the one before)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "multibodywb" / "warmup-durations.json"


#: A stage that took less CPU than this loaded its kernels from the cache: not a compile's time.
_LOADED_CPU = 3.0


def durations() -> dict:
    """CPU seconds per stage of a compile: those recorded by this user's last compile of each
    stage (:func:`durations_path`), else :data:`DEFAULT_CPU`."""
    found = dict(DEFAULT_CPU)
    try:
        recorded = json.loads(durations_path().read_text())
    except (OSError, ValueError):
        return found
    if isinstance(recorded, dict):
        for stage, seconds in recorded.items():
            if stage in found and isinstance(seconds, (int, float)) and seconds >= _LOADED_CPU:
                found[stage] = float(seconds)
    return found


def _record_duration(stage: str, cpu: float) -> None:
    """Keep ``cpu`` as the stage's compile time for the next estimate (not a cache load)."""
    if cpu < _LOADED_CPU:
        return
    path = durations_path()
    try:
        recorded = json.loads(path.read_text())
        recorded = recorded if isinstance(recorded, dict) else {}
    except (OSError, ValueError):
        recorded = {}
    recorded[stage] = round(cpu, 1)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(path, json.dumps(recorded, indent=1, sort_keys=True))
    except OSError:
        pass                                    # an estimate, never a reason to fail


def _write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a reader never sees half of it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


class _Status:
    """The status file of a running warm-up (``--status PATH``): its stages in order, those
    done, the one compiling and the CPU time spent in it, rewritten at each stage's start and
    end and every :attr:`EVERY` seconds by a thread (a stage is one long compile). The GUI
    reads it for the Simulate panel's estimate (:func:`estimate`)."""

    EVERY = 0.5

    def __init__(self, path, order):
        self.path = Path(path) if path else None
        self.state = {"pid": os.getpid(), "order": list(order), "done": [], "stage": None,
                      "stage_cpu": 0.0, "cpu": 0.0, "wall": 0.0, "finished": False}
        self._t0 = time.perf_counter()
        self._c0 = time.process_time()
        self._stage_c0 = self._c0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None
        if self.path is not None:
            self.write()
            self._thread = threading.Thread(target=self._beat, daemon=True,
                                            name="MultibodyWB warm-up status")
            self._thread.start()

    def _beat(self):
        while not self._stop.wait(self.EVERY):
            self.write()

    def write(self):
        if self.path is None:
            return
        with self._lock:
            c = time.process_time()
            self.state.update(cpu=c - self._c0, wall=time.perf_counter() - self._t0,
                              stage_cpu=c - self._stage_c0 if self.state["stage"] else 0.0)
            try:
                _write_atomic(self.path, json.dumps(self.state))
            except OSError:
                pass

    def begin(self, stage):
        with self._lock:
            self.state["stage"] = stage
            self._stage_c0 = time.process_time()
        self.write()

    def end(self, stage) -> float:
        """Mark ``stage`` done; return the CPU seconds it took."""
        with self._lock:
            cpu = time.process_time() - self._stage_c0
            self.state["done"].append(stage)
            self.state["stage"] = None
        self.write()
        return cpu

    def finish(self):
        self._stop.set()
        self.state["finished"] = True
        self.write()


def read_status(path) -> dict | None:
    """A warm-up's status file (:class:`_Status`) as a dict, None when there is none (yet) or
    it cannot be read."""
    try:
        state = json.loads(Path(path).read_text())
    except (OSError, ValueError, TypeError):
        return None
    return state if isinstance(state, dict) and "order" in state else None


@dataclass
class Estimate:
    """How far a warm-up is on the way to a stage (:func:`estimate`).

    ``stage`` and ``stages``: the stage compiling now, counted from 1, of how many (the
    warm-up's); ``name``: its name; ``remaining``: wall seconds expected until the stage waited
    for is ready; ``fraction``: the part of that wait done (0 to 1, below 1 until it is
    ready); ``late``: the compile has taken longer than expected (``remaining`` is then a
    guess of a few seconds more)."""
    stage: int
    stages: int
    name: str | None
    remaining: float
    fraction: float
    late: bool = False


def estimate(status: dict, wanted: str | None, expected: dict | None = None) -> Estimate:
    """The wait for stage ``wanted`` (None: the whole warm-up) of the warm-up whose status is
    ``status`` (:func:`read_status`), from the CPU time each stage is expected to take
    (``expected``, default :func:`durations`) and the share of a core the warm-up has had so
    far (its CPU time over its wall time: on a loaded machine it compiles slower).

    The stages before ``wanted`` in the warm-up's order count in full (a stage is one compile
    that cannot be skipped); those done count as done; the one compiling counts what its CPU
    time has not yet used of its expected time. A stage that has used more than expected is
    given a tenth of its expected time more, and the estimate says it is late."""
    expected = durations() if expected is None else expected
    order = list(status.get("order") or [])
    done = set(status.get("done") or [])
    current = status.get("stage")
    path = order[:order.index(wanted) + 1] if wanted in order else order
    cost = {s: max(float(expected.get(s, DEFAULT_CPU.get(s, 30.0))), 1.0) for s in path}
    total = sum(cost.values()) or 1.0
    spent = sum(cost[s] for s in path if s in done)
    left = sum(cost[s] for s in path if s not in done)
    late = False
    if current in cost and current not in done:
        used = max(float(status.get("stage_cpu") or 0.0), 0.0)
        if used > cost[current]:
            late = True
            used = cost[current] * 0.9        # a tenth more
        spent += used
        left -= used
    cpu, wall = float(status.get("cpu") or 0.0), float(status.get("wall") or 0.0)
    share = min(max(cpu / wall, 0.1), 1.0) if wall >= 3.0 else 1.0
    fraction = 0.0 if not path else min(spent / total, 0.99)
    if path and all(s in done for s in path):
        fraction, left = 1.0, 0.0
    position = (order.index(current) + 1 if current in order
                else min(len([s for s in order if s in done]) + 1, len(order)))
    return Estimate(stage=position, stages=len(order), name=current, remaining=left / share,
                    fraction=fraction, late=late)


def _seconds(seconds: float) -> str:
    """A wait for people: ``40 s``, ``2 min 10 s``."""
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, rest = divmod(seconds, 60)
    return f"{minutes} min {rest} s" if rest else f"{minutes} min"


def wait_text(e: Estimate | None, stage: str, elapsed: float):
    """What the Simulate panel says while its run waits for the compile of ``stage``, and the
    progress bar's fraction (None: unknown): ``(text, fraction)``, from the estimate ``e``
    (:func:`estimate`; None when the warm-up has not said anything yet) and the seconds
    ``elapsed`` since the run began to wait. The time left is rounded up to 5 s."""
    what = STAGE_TEXT.get(stage, stage)
    if e is None:
        return (f"Compiling the solver for this run ({what}; once after installing): "
                f"{_seconds(elapsed)} elapsed; Cancel stops it", None)
    if e.late:
        left = "taking longer than expected, a little more"
    elif e.remaining < 5:
        left = "a few seconds more"
    else:
        left = f"about {_seconds(5 * math.ceil(e.remaining / 5))} left"
    return (f"Compiling the solver (once after installing): stage {e.stage} of {e.stages}, "
            f"this run needs {what}; {left} ({_seconds(elapsed)} elapsed). Cancel stops it",
            e.fraction)


# -- the warm-up ----------------------------------------------------------------------------------

def _lower_priority() -> None:
    """Let other work go first (the rest of a warm-up once the stage a user waits for is done)."""
    try:
        os.nice(10)
    except (AttributeError, OSError):           # not on Windows
        pass


def warm_up(force: bool = False, out=None, first: str | None = None, only: str | None = None,
            status=None, background: bool = False) -> float:
    """Compile (or load) every kernel, then write the stamp; return the seconds it took.

    The stages (:data:`STAGES`) are compiled one after the other, ``first`` first (default: the
    fixed-step stage), each stamped when its runs are done, the whole warm-up at the end;
    a stage whose stamp is there (compiled by another process) is skipped. ``only``: that
    stage alone (a run that needs it, asked for while a whole warm-up compiles another one):
    no whole stamp. ``status``: a file where the progress is written (:class:`_Status`, for the
    GUI's estimate). ``background``: once the first stage is done, the process lowers its
    priority (the rest is compiled for later runs, not for one someone waits for).

    Returns at once (0.0) when the stamp (``only``: that stage's) is there, unless ``force``.
    When the sources changed since the last warm-up (no stamp for them), the old compiled code
    is removed first (:func:`clear_compiled`). One warm-up at a time (:func:`_one_at_a_time`):
    one that had to wait for another process's returns 0.0 when that one wrote the stamp. The
    CPU time of each stage compiled is recorded for the next estimate (:func:`durations`).
    """
    from .simulate import simulate
    order = [only] if only else stage_order(first)
    if only and only not in STAGES:
        raise ValueError(f"'{only}' is not a warm-up stage ({', '.join(STAGES)})")
    if is_warm(only) and not force:
        return 0.0
    progress = _Status(status, order)
    try:
        with contextlib.nullcontext() if only else _one_at_a_time():
            if is_warm(only) and not force:        # another process's warm-up, waited for
                return 0.0
            if not is_warm():
                clear_compiled()
            t0 = time.perf_counter()
            runs = _models()
            for k, stage in enumerate(order):
                with _one_at_a_time(stage):
                    progress.begin(stage)
                    if force or not is_warm(stage):
                        c0 = time.process_time()
                        for model, settings in runs:
                            if _stage_of_run(model, settings) == stage:
                                simulate(model, **settings)
                        if stage == ADAPTIVE_STAGE:
                            _time_programs()
                        _record_duration(stage, time.process_time() - c0)
                        _write_stamp(f"{stage} kernels compiled in "
                                     f"{time.perf_counter() - t0:.1f} s\n", stage)
                    progress.end(stage)
                if background and k == 0:
                    _lower_priority()
            seconds = time.perf_counter() - t0
            stamp = None
            if not only:
                stamp = _write_stamp(f"warmed up in {seconds:.1f} s by Python "
                                     f"{platform.python_version()} ({sys.executable})\n")
    finally:
        progress.finish()
    if out is not None:
        print(f"solver kernels ready ({seconds:.1f} s); stamp {stamp or stamp_path(only)}",
              file=out)
    return seconds


def main(argv=None) -> int:
    """``python3 -m MultibodyWB.solver.run.warmup [--first STAGE | --only STAGE] [--status
    FILE] [--background]``: what FreeCAD starts in a separate process (the set-up command is
    ``python3 -m MultibodyWB.solver warmup``, the whole warm-up in the default order)."""
    import argparse
    p = argparse.ArgumentParser(prog="python3 -m MultibodyWB.solver.run.warmup",
                                description="compile the solver's kernels, by stages")
    p.add_argument("--first", choices=STAGES, help="the stage to compile first")
    p.add_argument("--only", choices=STAGES, help="compile this stage alone")
    p.add_argument("--status", help="file where the progress is written (JSON)")
    p.add_argument("--background", action="store_true",
                   help="lower the priority once the first stage is compiled")
    args = p.parse_args(argv)
    order = [args.only] if args.only else stage_order(args.first)
    print(f"compiling the solver's kernels: {', '.join(order)}", flush=True)
    warm_up(out=sys.stdout, first=args.first, only=args.only, status=args.status,
            background=args.background)
    return 0


if __name__ == "__main__":
    sys.exit(main())
