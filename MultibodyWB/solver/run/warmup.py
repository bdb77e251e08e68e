"""Compile the solver's kernels before anyone waits for them: ``python3 -m MultibodyWB.solver warmup``.

The kernels (:mod:`.kernels`, :mod:`.newton_euler`) are compiled by numba on their first call and
cached on disk (``cache=True``: next to the sources when that folder is writable, else in numba's
user-wide cache folder, or ``NUMBA_CACHE_DIR``). A cold compile takes a minute or more; a process
that finds the cache loads them in about a second. :func:`warm_up` runs a few tiny models that call
every kernel with the argument types real runs use (a tree and closed loops, rk4, euler and an
adaptive integrator, drivers and every force type, contacts, stops and couplers, the Newton-Euler method),
so that the cache holds them,
then writes a stamp file (:func:`stamp_path`) whose name stands for the sources (their contents,
size and time, as numba's cache index), Python and numba it was made for. The runs of the mstmm
method's fixed-step integrators (rk4, euler) come first and get a stamp of their own
(:data:`FIXED_STEP_STAGE`): a run with those settings waits only for them. :func:`is_warm`
reads the stamps: the FreeCAD side starts a warm-up in a separate process when the workbench is
activated and the cache is cold, and the Simulate panel waits for it (with its elapsed time
shown, and a Cancel that ends the process at once) instead of compiling inside FreeCAD.

The README's set-up command runs the warm-up once after installing (it returns at once when the
stamp is there).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import platform
import re
import sys
import time
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


#: The first stage of a warm-up: the kernels of the mstmm method's fixed-step integrators (rk4
#: and euler), the settings of nearly every run and the default. Its own stamp is written as soon
#: as they are cached, so that such a run (the Simulate panel's) need not wait for the rest:
#: the adaptive integrators, the constrained and the Newton-Euler methods.
FIXED_STEP_STAGE = "fixed-step"


def stage_of(method: str, integrator: str) -> str | None:
    """The warm-up stage whose kernels a run with ``method`` and ``integrator`` needs (names as
    the settings spell them, any case): :data:`FIXED_STEP_STAGE` for mstmm with rk4 or euler,
    else None (the whole warm-up)."""
    if str(method).lower() == "mstmm" and str(integrator).lower() in FIXED_STEP:
        return FIXED_STEP_STAGE
    return None


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
def _one_at_a_time():
    """Hold the warm-up lock of the current stamp (``multibodywb-warm-<key>.lock`` in the first
    stamp folder that can be written): a warm-up started while another one of the same sources,
    Python and import path runs, in any process (a second FreeCAD, or a FreeCAD started again
    while the first one's warm-up still compiles), waits for it without using the processor,
    then finds the stamp and returns. The lock goes with its process, so a cancelled (killed)
    warm-up releases it."""
    handle = None
    if fcntl is not None:
        name = f"multibodywb-warm-{_key()}.lock"
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
    ne = _elements_model()
    ne.couplers = []                                # (newton-euler takes none)
    runs.append((ne, dict(method="newton-euler", t_end=1e-4, step=1e-5, output_step=1e-4)))
    return runs


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


def _stage_of_run(model, settings) -> str | None:
    """The stage of one of :func:`_models`'s runs (its settings, else the model's)."""
    s = model.simulation
    return stage_of(settings.get("method") or s.method,
                    settings.get("integrator") or s.integrator)


def warm_up(force: bool = False, out=None) -> float:
    """Compile (or load) every kernel, then write the stamp; return the seconds it took.

    The runs of the fixed-step stage come first, and that stage's stamp is written when they
    are done (:data:`FIXED_STEP_STAGE`), the whole warm-up's at the end.

    Returns at once (0.0) when the stamp is there, unless ``force``. When the sources changed
    since the last warm-up (no stamp for them), the old compiled code is removed first
    (:func:`clear_compiled`). One warm-up at a time (:func:`_one_at_a_time`): one that had to
    wait for another process's returns 0.0 when that one wrote the stamp.
    """
    from .simulate import simulate
    if is_warm() and not force:
        return 0.0
    with _one_at_a_time():
        if is_warm() and not force:             # another process's warm-up, waited for
            return 0.0
        if not is_warm():
            clear_compiled()
        t0 = time.perf_counter()
        first, rest = [], []
        for run in _models():
            (first if _stage_of_run(*run) == FIXED_STEP_STAGE else rest).append(run)
        for model, settings in first:
            simulate(model, **settings)
        if first:
            _write_stamp(f"fixed-step kernels compiled in {time.perf_counter() - t0:.1f} s\n",
                         FIXED_STEP_STAGE)
        for model, settings in rest:
            simulate(model, **settings)
        seconds = time.perf_counter() - t0
        stamp = _write_stamp(f"warmed up in {seconds:.1f} s by Python "
                             f"{platform.python_version()} ({sys.executable})\n")
    if out is not None:
        print(f"solver kernels ready ({seconds:.1f} s); stamp {stamp}", file=out)
    return seconds
