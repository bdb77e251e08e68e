"""The solver's kernels compiled ahead (solver/warmup.py): the stamp that says they are ready
follows the sources, Python and numba; the CLI command; a warm-up of every kernel path."""

import io

import pytest

from MultibodyWB.solver import cli
from MultibodyWB.solver.run import warmup


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    return tmp_path / "numba"


def test_the_stamp_is_written_after_a_warm_up_and_read_back(cache, monkeypatch):
    monkeypatch.setattr(warmup, "_models", lambda: [])         # nothing to compile here
    assert not warmup.is_warm()
    warmup.warm_up()
    assert warmup.is_warm()
    assert warmup.stamp_path().parent == cache
    assert warmup.warm_up() == 0.0                            # at once when ready


def test_a_changed_source_makes_the_cache_cold(cache, monkeypatch):
    monkeypatch.setattr(warmup, "_models", lambda: [])
    warmup.warm_up()
    key = warmup._key()
    real = warmup.sources()
    monkeypatch.setattr(warmup, "sources", lambda: real + [warmup.SOLVER / "model" / "xmlio.py"])
    assert warmup._key() != key and not warmup.is_warm()


def test_the_cli_says_when_the_kernels_are_ready(cache, monkeypatch):
    monkeypatch.setattr(warmup, "_models", lambda: [])
    out = io.StringIO()
    assert cli.main(["warmup"], out=out) == cli.EXIT_OK
    assert "compiling" in out.getvalue()
    out = io.StringIO()
    assert cli.main(["warmup"], out=out) == cli.EXIT_OK
    assert "ready" in out.getvalue() and "compiling" not in out.getvalue()


def test_the_warm_up_runs_every_kind_of_model():
    """The tiny runs reach trees and loops, rk4, euler and an adaptive integrator, a motor and
    the Newton-Euler method (with the kernels of this checkout, cached as every test uses
    them)."""
    from MultibodyWB.solver.run.simulate import simulate
    kinds = set()
    for model, settings in warmup._models():
        res = simulate(model, **settings)
        kinds.add((res.meta["method"], res.meta.get("integrator"), bool(model.hinges and any(
            h.motors for h in model.hinges)), "loop_closure" in res.meta))
    assert ("mstmm", "rk4", False, True) in kinds             # a loop, rk4
    assert ("mstmm", "DOP853", False, True) in kinds          # a loop, adaptive
    assert ("mstmm", "rk4", False, False) in kinds            # a tree
    assert ("mstmm", "euler", False, True) in kinds           # a loop, euler
    assert ("constrained", "euler", False, False) in kinds    # its Python step
    assert any(motor for _, _, motor, _ in kinds)
    assert any(method == "newton-euler" for method, *_ in kinds)


@pytest.mark.parametrize("cache_dir", [True, False])
def test_stamp_key_follows_the_path_as_imported(tmp_path, cache_dir):
    """With NUMBA_CACHE_DIR (or the user-wide cache) numba keys its cache on the source path as
    imported: the same files imported through a symbolic link (an add-on linked into FreeCAD's
    Mod folder) compile into another cache, so their warm-up stamp must differ too (a stamp
    written from the repository's own folder must not say "ready" to FreeCAD importing through
    the link). With the cache beside the sources (a folder numba can write), both imports share
    it, and the stamp is the same: FreeCAD does not compile again what the set-up compiled."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    if not cache_dir and not os.access(root / "MultibodyWB" / "solver", os.W_OK):
        pytest.skip("the sources' folder is read-only here: numba cannot cache beside them")
    (tmp_path / "MultibodyWB").symlink_to(root / "MultibodyWB")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    if cache_dir:
        env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba")
    code = "from MultibodyWB.solver.run import warmup; print(warmup._key())"
    keys = [subprocess.run([sys.executable, "-c", code], cwd=str(cwd),
                           env={**env, "PYTHONPATH": str(cwd)},
                           capture_output=True, text=True, check=True).stdout.strip()
            for cwd in (root, tmp_path)]
    assert all(len(k) == 20 for k in keys)
    assert (keys[0] != keys[1]) == cache_dir


def test_clear_compiled_removes_only_code_older_than_the_newest_source(tmp_path, monkeypatch):
    """Numba keys a cached function on its own file: code compiled before any solver source
    changed may hold a changed callee's old code and goes; code compiled since stays (another
    import path's, compiled into the same folder)."""
    import os
    from MultibodyWB.solver.run import warmup
    a, b = tmp_path / "kernels.py", tmp_path / "contact.py"
    a.write_text("njit")
    b.write_text("njit")
    cache = tmp_path / "__pycache__"
    cache.mkdir()
    old = cache / "kernels.evaluate-10.py311.nbi"
    new = cache / "kernels.evaluate-10.py311.1.nbc"
    other = cache / "unrelated.f-1.py311.nbi"
    for f in (old, new, other):
        f.write_text("x")
    os.utime(old, (1000, 1000))
    os.utime(a, (2000, 2000))
    os.utime(b, (3000, 3000))                  # the callee changed last
    os.utime(new, (4000, 4000))
    os.utime(other, (1000, 1000))
    monkeypatch.setattr(warmup, "sources", lambda: [a, b])
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    assert warmup.clear_compiled() == 1
    assert not old.exists() and new.exists() and other.exists()


def test_a_second_warm_up_waits_for_the_first_and_compiles_nothing(cache, monkeypatch, tmp_path):
    """Two FreeCAD sessions (or one restarted while its warm-up still runs) start two warm-up
    processes: the second waits on the first's lock, then finds the stamp and returns."""
    import subprocess
    import sys
    import textwrap
    import time
    from pathlib import Path
    root = Path(warmup.__file__).resolve().parents[3]
    script = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(root)!r})
        from MultibodyWB.solver.run import warmup
        calls = []
        def models():
            calls.append(time.time())
            time.sleep(float(sys.argv[1]))     # a compile of that long
            return []
        warmup._models = models
        seconds = warmup.warm_up()
        print(len(calls), seconds, flush=True)
        """)
    path = tmp_path / "warm.py"
    path.write_text(script)
    first = subprocess.Popen([sys.executable, str(path), "3"], stdout=subprocess.PIPE, text=True)
    time.sleep(1.0)                                   # the first holds the lock by now
    t0 = time.perf_counter()
    second = subprocess.run([sys.executable, str(path), "0"], capture_output=True, text=True,
                            timeout=60)
    waited = time.perf_counter() - t0
    out_first = first.communicate(timeout=60)[0].split()
    assert out_first[0] == "1" and float(out_first[1]) >= 3.0, out_first
    calls, seconds = second.stdout.split()
    assert calls == "0" and float(seconds) == 0.0, second.stdout + second.stderr
    assert waited > 1.0                               # it did wait for the first one
    assert warmup.is_warm()


def test_the_fixed_step_stage_is_stamped_before_the_rest_compiles(cache, monkeypatch):
    """The Simulate panel's rk4 run waits only for the warm-up's first stage: its stamp is
    written once every fixed-step mstmm run of the warm-up is done, before any other run."""
    from MultibodyWB.solver.run import simulate as sim
    seen = []

    def simulate(model, **settings):
        seen.append((warmup._stage_of_run(model, settings),
                     warmup.is_warm(warmup.FIXED_STEP_STAGE), warmup.is_warm()))

    monkeypatch.setattr(sim, "simulate", simulate)
    assert not warmup.is_warm(warmup.FIXED_STEP_STAGE)
    warmup.warm_up()
    fixed = [s for s in seen if s[0] == warmup.FIXED_STEP_STAGE]
    rest = [s for s in seen if s[0] != warmup.FIXED_STEP_STAGE]
    assert len(fixed) >= 5 and len(rest) >= 4
    assert seen == fixed + rest                                     # the stage first
    assert not any(ready for _, ready, _ in fixed)                  # stamped after its runs,
    assert all(ready and not whole for _, ready, whole in rest)     # before the others
    assert warmup.is_warm() and warmup.is_warm(warmup.FIXED_STEP_STAGE)
    assert warmup.stamp_path(warmup.FIXED_STEP_STAGE) == warmup.stamp_path()   # the whole one


@pytest.mark.parametrize("method, integrator, stage", [
    ("mstmm", "rk4", "fixed-step"), ("MSTMM", "euler", "fixed-step"),
    ("mstmm", "DOP853", "adaptive"), ("constrained", "rk4", "constrained"),
    ("newton-euler", "rk4", "newton-euler")])
def test_which_runs_wait_only_for_the_fixed_step_stage(method, integrator, stage):
    assert warmup.stage_of(method, integrator) == stage


def test_only_modules_with_cached_kernels_make_the_stamp_key():
    names = {p.relative_to(warmup.SOLVER).as_posix() for p in warmup.sources()}
    assert {"methods/mstmm/kernels.py", "maths/small.py", "elements/forces/contact.py",
            "methods/newton_euler/kernels.py"} <= names
    # (this module names the decorator; the time functions compile per expression, uncached)
    assert not names & {"run/warmup.py", "model/timefunction.py"}


STAGE_ONLY = r'''
import sys, time
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[2])
import numpy as np
from numba.core import event
from MultibodyWB.examples import EXAMPLES, build
from MultibodyWB.solver.run import warmup
from MultibodyWB.solver.run.simulate import simulate
from randmodels import random_tree
for model, settings in warmup._models():
    if warmup._stage_of_run(model, settings) == warmup.FIXED_STEP_STAGE:
        simulate(model, **settings)
compiled = []
class Compiles(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__qualname__)
    def on_end(self, ev):
        pass
event.register("numba:compile", Compiles())
models = [build(name) for name in EXAMPLES]
models += [random_tree(np.random.default_rng(seed), 9, name=f"Random{seed}") for seed in (1, 2)]
moving = build("tumbling_solids")       # a body velocity given: set through System.instant
moving.body("Egg").initial_velocity = np.array([0.1, 0.0, 0.2])
moving.body("Egg").initial_angular_velocity = np.array([0.0, 1.0, 0.5])
models.append(moving)
runs = 0
for model in models:
    for integrator in ("rk4", "euler"):
        s = model.simulation
        simulate(model, method="mstmm", integrator=integrator, t_end=4 * s.step,
                 output_step=2 * s.step, accept_corrections=True)
        runs += 1
from MultibodyWB.solver.methods.mstmm import kernels as K
print([f.__name__ for f in (K.evaluate_into, K.instants_into) if f.signatures])
print(runs, len(EXAMPLES), len(compiled), sorted(set(compiled)))
'''


def test_after_the_fixed_step_stage_a_fixed_step_run_compiles_nothing(tmp_path):
    """The stage's stamp is honest: after the warm-up's fixed-step runs alone (into an empty
    cache, in a fresh process), an mstmm run with rk4 or euler of every example, of random
    trees with every hinge type and force law and of free bodies given an initial velocity
    compiles nothing more (the Simulate panel starts such a run on that stamp alone; a compile
    would then happen inside FreeCAD). Compiles the stage: about a minute and a half.

    And the stage compiles only what a fixed-step run needs: neither the evaluation the
    adaptive integrators call (``evaluate_into``) nor its loop over many states
    (``instants_into``) is compiled in that process, by the stage or by the runs after it (a
    fixed-step run's rows that its steps do not evaluate go through the fixed-step kernel,
    ``kernels.row_evaluations``; about 40 % of the stage's compile)."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    root = Path(warmup.__file__).resolve().parents[3]
    script = tmp_path / "stage_only.py"
    script.write_text(STAGE_ONLY)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    run = subprocess.run([sys.executable, str(script), str(root), str(root / "tests")],
                         capture_output=True, text=True, env=env, timeout=1500)
    assert run.returncode == 0, run.stderr[-3000:]
    *_, loaded, last = run.stdout.strip().splitlines()
    assert loaded == "[]", loaded
    runs, examples, count, names = last.split(" ", 3)
    assert int(runs) == 2 * (int(examples) + 3) and int(examples) >= 12
    assert int(count) == 0, names
