"""The solver's kernels compiled ahead (solver/warmup.py): the stamp that says they are ready
follows the sources, Python and numba; the CLI command; a warm-up of every kernel path."""

import io

import pytest

from MultibodyWB.solver import cli, warmup


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
    monkeypatch.setattr(warmup, "SOURCES", warmup.SOURCES + ("xmlio.py",))
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
    """The tiny runs reach trees and loops, rk4 and an adaptive integrator, a motor and the
    Newton-Euler method (with the kernels of this checkout, cached as every test uses them)."""
    from MultibodyWB.solver.simulate import simulate
    kinds = set()
    for model, settings in warmup._models():
        res = simulate(model, **settings)
        kinds.add((res.meta["method"], res.meta.get("integrator"), bool(model.hinges and any(
            h.motors for h in model.hinges)), "loop_closure" in res.meta))
    assert ("mstmm", "rk4", False, True) in kinds             # a loop, rk4
    assert ("mstmm", "DOP853", False, True) in kinds          # a loop, adaptive
    assert ("mstmm", "rk4", False, False) in kinds            # a tree
    assert any(motor for _, _, motor, _ in kinds)
    assert any(method == "newton-euler" for method, *_ in kinds)
