"""The methods as peers behind one contract (:mod:`MultibodyWB.solver.methods.base`, issue 36).

Every entry of ``METHODS`` runs one small example through the public ``simulate`` and keeps the
contract's rules: the result's shapes, the meta keys, progress and cancel, the energy check; the
double pendulum's energy is conserved and the methods agree on its motion. And the method
packages are peers: none imports another (an AST scan of ``methods/<method>/*.py``), the shared
module imports none of them.
"""

from __future__ import annotations

import ast
import os
import sys

import numpy as np
import pytest

from MultibodyWB.examples import build
from MultibodyWB.solver.methods.base import META_KEYS, METHODS, Method, Prepared
from MultibodyWB.solver.methods.runtime import Cancelled, output_times
from MultibodyWB.solver.model.problems import ModelError
from MultibodyWB.solver.model.settings import METHODS as SETTING_NAMES
from MultibodyWB.solver.run import simulate as simulate_module
from MultibodyWB.solver.run.simulate import simulate

METHODS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                           "MultibodyWB", "solver", "methods")
PREFIX = "MultibodyWB.solver.methods"

#: One small run per method: the double pendulum (undamped, no drivers) for 0.05 s.
T_END, OUTPUT = 0.05, 5e-3
STEPS = {"mstmm": 1e-3, "constrained": 1e-3, "newton-euler": 1e-5}


def _run(name, **kw):
    return simulate(build("double_pendulum"), method=name, t_end=T_END, step=STEPS[name],
                    output_step=OUTPUT, **kw)


@pytest.fixture(scope="module")
def runs():
    """The example through each method, with the progress it reported."""
    out = {}
    for name in METHODS:
        seen = []
        res = _run(name, progress=seen.append)
        out[name] = (res, seen)
    return out


def test_the_table_holds_every_method_a_model_may_name():
    assert set(METHODS) == set(SETTING_NAMES)
    for name, method in METHODS.items():
        assert isinstance(method, Method) and method.name == name


@pytest.mark.parametrize("name", list(METHODS))
def test_results_keep_the_contract(runs, name):
    res, seen = runs[name]
    times = output_times(T_END, OUTPUT)
    # rule 3: one row per output time, the states one row per data row, meta['ny'] columns
    assert res.names[0] == "time"
    assert res.data.shape == (times.size, len(res.names))
    np.testing.assert_allclose(res.time, times, rtol=0, atol=1e-12)
    assert res.states.shape == (times.size, res.meta["ny"])
    assert set(META_KEYS) <= set(res.meta), set(META_KEYS) - set(res.meta)
    assert res.meta["method"] == name
    assert "start" in res.meta                    # the caller's record of the start
    assert np.all(np.isfinite(res.data))
    # rule 5: progress from 0 to 1, never back
    assert seen[0] == 0.0 and seen[-1] == 1.0
    assert all(b >= a for a, b in zip(seen, seen[1:])), seen
    # rule 6: the energy columns, last
    energy = [n for n in res.names if n.startswith("energy.")]
    assert "energy.residual" in energy and res.names[-len(energy):] == energy


@pytest.mark.parametrize("name", list(METHODS))
def test_cancel_stops_every_method(name):
    with pytest.raises(Cancelled):
        _run(name, cancel=lambda: True)


@pytest.mark.parametrize("name", list(METHODS))
def test_the_energy_check_is_made_for_the_methods_that_declare_it(name, monkeypatch):
    """Rule 6: with the threshold at nothing, a method whose residual is its integration error
    gets the warning and is marked untrusted; newton-euler (its penalty joints' energy in the
    residual) is not checked."""
    monkeypatch.setattr(simulate_module, "ENERGY_WARNING", 1e-300)
    coarse = {"mstmm": 1e-2, "constrained": 1e-2, "newton-euler": 1e-4}[name]
    res = simulate(build("double_pendulum"), method=name, t_end=0.1, step=coarse,
                   output_step=1e-2)
    b = res.energy_balance()
    assert abs(b["residual"]) > 1e-9, b            # something for the check to see
    assert bool(res.untrusted) == METHODS[name].energy_check, (name, b, res.untrusted)
    assert any("energy balance does not close" in w for w in res.meta.get("warnings", [])) \
        == METHODS[name].energy_check
    assert METHODS[name].energy_check == (name != "newton-euler")


def test_a_method_without_options_refuses_them():
    with pytest.raises(TypeError, match="takes no options"):
        _run("mstmm", joint_fraction=0.1)


#: The energy balance's residual at the end, as a fraction of the energies' scale, that each
#: method keeps on the double pendulum (measured: mstmm and constrained 7e-13, newton-euler 1e-5
#: at these steps; newton-euler's holds its penalty joints' energy and its O(h) error).
ENERGY_BOUND = {"mstmm": 1e-10, "constrained": 1e-10, "newton-euler": 1e-4}
#: The largest difference from mstmm of the hinges' angles over the run (rad; measured:
#: constrained 1.4e-17, newton-euler 1.1e-5, of a swing of 0.054 rad).
AGREEMENT = {"mstmm": 0.0, "constrained": 1e-12, "newton-euler": 1e-4}


@pytest.mark.parametrize("name", list(METHODS))
def test_the_pendulum_keeps_its_energy_and_the_methods_agree(runs, name):
    res, _ = runs[name]
    b = res.energy_balance()
    assert abs(b["relative"]) < ENERGY_BOUND[name], (name, b)
    ref, _ = runs["mstmm"]
    angles = [n for n in ref.names if n.endswith(".rz") and n in res.names]
    assert angles, ref.names
    worst = max(np.max(np.abs(res.column(n) - ref.column(n))) for n in angles)
    assert worst <= AGREEMENT[name], (name, worst)
    # and the pendulum moved: a figure that could not fail otherwise
    assert max(np.ptp(ref.column(n)) for n in angles) > 1e-3


# -- the method packages are peers ------------------------------------------------------------

def _method_packages():
    return sorted(d for d in os.listdir(METHODS_DIR)
                  if os.path.isfile(os.path.join(METHODS_DIR, d, "__init__.py"))
                  and d != "shared")


def _imports(path, module):
    """The modules of the package ``path`` (dotted ``module``) imports, anywhere in its code,
    relative imports resolved."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    is_package = path.endswith("__init__.py")
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                if not is_package:
                    base = base[:-1]
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            out.add(target)
            out.update(f"{target}.{a.name}" for a in node.names)
    return out


def cross_imports(packages=None) -> set[str]:
    """``'<method>/<file> -> <other method>'`` for every import of one method package from
    another."""
    packages = packages or _method_packages()
    found = set()
    for pkg in packages:
        folder = os.path.join(METHODS_DIR, pkg)
        for f in sorted(os.listdir(folder)):
            if not f.endswith(".py"):
                continue
            module = f"{PREFIX}.{pkg}" + ("" if f == "__init__.py" else f".{f[:-3]}")
            for target in _imports(os.path.join(folder, f), module):
                parts = target.split(".")
                if parts[:3] == PREFIX.split(".") and len(parts) > 3 and parts[3] != pkg \
                        and parts[3] in packages:
                    found.add(f"{pkg}/{f} -> {parts[3]}")
    return found


def test_the_scan_sees_method_packages_and_their_imports():
    assert {"mstmm", "constrained", "newton_euler"} <= set(_method_packages())
    # a relative import inside a function is seen
    found = _imports(os.path.join(METHODS_DIR, "newton_euler", "run.py"),
                     f"{PREFIX}.newton_euler.run")
    assert f"{PREFIX}.runtime" in found


def test_no_method_package_imports_another():
    """What methods share lives in ``methods/shared`` (the prepared system, the instant, the
    power, the loops' absolute kinematics and rows, the singularity monitor)."""
    assert not cross_imports()


def test_the_scan_finds_a_cross_import(tmp_path, monkeypatch):
    """The scan is not blind: a method file importing another method is found."""
    for pkg in ("alpha", "beta"):
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "__init__.py").write_text("")
    (tmp_path / "alpha" / "run.py").write_text("def f():\n    from ..beta.core import g\n")
    monkeypatch.setattr(sys.modules[__name__], "METHODS_DIR", str(tmp_path))
    assert cross_imports(["alpha", "beta"]) == {"alpha/run.py -> beta"}


def test_the_shared_module_imports_no_method():
    folder = os.path.join(METHODS_DIR, "shared")
    bad = []
    for f in sorted(os.listdir(folder)):
        if f.endswith(".py"):
            module = f"{PREFIX}.shared" + ("" if f == "__init__.py" else f".{f[:-3]}")
            bad += [f"{f} -> {t}" for t in _imports(os.path.join(folder, f), module)
                    if t.split(".")[3:4] and t.split(".")[3] in _method_packages()
                    and t.startswith(PREFIX + ".")]
    assert not bad, bad


# -- the stages: check -> start -> solve -> results ----------------------------------------------

def test_start_stops_before_solving_and_solve_finishes_as_simulate(monkeypatch):
    settings = dict(t_end=0.02, step=1e-3, output_step=1e-2)
    whole = simulate(build("double_pendulum"), **settings)
    with monkeypatch.context() as m:
        def boom(*args):
            raise AssertionError("solved in the start stage")
        m.setattr(METHODS["mstmm"], "solve", boom)
        run = simulate_module.start(build("double_pendulum"), **settings)
    assert isinstance(run, Prepared)
    assert (run.method, run.integrator, run.t_end) == ("mstmm", "rk4", 0.02)
    assert str(run.start) == whole.meta["start"]
    staged = simulate_module.solve(run)
    assert staged.names == whole.names
    np.testing.assert_array_equal(staged.data, whole.data)
    np.testing.assert_array_equal(staged.states, whole.states)
    # the check stage refuses what simulate refuses, before starting
    with pytest.raises(ModelError, match="OutputStep"):
        simulate_module.start(build("double_pendulum"), t_end=0.02, step=1e-3,
                              output_step=1.5e-3)


@pytest.mark.parametrize("name", sorted(METHODS))
def test_a_run_analyses_the_topology_once(name, monkeypatch):
    """The start analyses the model's topology and hands it to the method (the prepared run's
    ``topology``): one analysis per run, with a closed loop too."""
    from MultibodyWB.solver.analysis import topology
    made = []
    init = topology.Topology.__init__

    def counted(self, *args, **kwargs):
        made.append(1)
        init(self, *args, **kwargs)

    monkeypatch.setattr(topology.Topology, "__init__", counted)
    step = 1e-6 if name == "newton-euler" else 1e-4
    res = simulate(build("four_bar"), method=name, t_end=0.002, step=step, output_step=1e-3,
                   accept_corrections=True)
    assert len(res) == 3
    assert len(made) == 1
