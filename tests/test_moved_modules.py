"""Modules moved by the layout of issue 13 stay importable under their old names: macros recorded
before (``MultibodyWB.factory.make_body(...)``) and scripts importing the solver's old modules keep
running, on the same module objects (not copies: a monkeypatch or a registry is shared)."""

import importlib
import subprocess
import sys

import pytest

import MultibodyWB

SOLVER_MOVES = {k: v for k, v in MultibodyWB.MOVED.items() if k.startswith("MultibodyWB.solver.")}
#: headless FreeCAD can import these (the demo movie and the demo opener need the GUI's Qt)
FREECAD_MOVES = {k: v for k, v in MultibodyWB.MOVED.items()
                 if k not in SOLVER_MOVES and k not in ("MultibodyWB.demo_movie",
                                                        "MultibodyWB.open_demo")}


@pytest.mark.parametrize("old", sorted(SOLVER_MOVES))
def test_an_old_solver_module_name_is_the_module_it_became(old):
    assert importlib.import_module(old) is importlib.import_module(SOLVER_MOVES[old])


def test_a_script_written_for_the_old_layout_runs():
    """In a fresh process, as a user's script: the old imports and calls of the README of
    before (simulate a built example, save the results)."""
    code = ("from MultibodyWB.solver.simulate import simulate\n"
            "from MultibodyWB.solver import xmlio, kernels\n"
            "from MultibodyWB.solver.results import Results\n"
            "from MultibodyWB.examples import build\n"
            "r = simulate(build('double_pendulum'), t_end=0.01, output_step=0.005)\n"
            "assert isinstance(r, Results) and len(r) == 3\n"
            "print(kernels.__name__)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=str(__import__("pathlib").Path(MultibodyWB.__file__).parent.parent))
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "MultibodyWB.solver.methods.mstmm.kernels"


def test_every_new_home_exists():
    import importlib.util
    for old, new in MultibodyWB.MOVED.items():
        assert importlib.util.find_spec(new) is not None, (old, new)
        assert old not in MultibodyWB.MOVED.values()


@pytest.mark.freecad
@pytest.mark.parametrize("old", sorted(FREECAD_MOVES))
def test_an_old_freecad_layer_module_name_is_the_module_it_became(freecad, old):
    assert importlib.import_module(old) is importlib.import_module(FREECAD_MOVES[old])
