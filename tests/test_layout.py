"""The package's layers: no import circles anywhere, the solver's packages in their order.

The graph is read with ``ast`` from every module of ``MultibodyWB`` (imports inside functions
count: a lazy import that closes a circle is still a circle). An import of ``a.b.c`` also reaches
the packages ``a.b`` and ``a`` (their ``__init__`` runs first) unless the importing module is
inside them already.
"""

from __future__ import annotations

import ast
import os

import pytest

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "MultibodyWB")
PACKAGE = "MultibodyWB"


def _modules() -> dict[str, str]:
    """Dotted module name -> file, for every .py file of the package."""
    found = {}
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        rel = os.path.relpath(folder, os.path.dirname(ROOT)).split(os.sep)
        for f in files:
            if f.endswith(".py"):
                name = rel + ([] if f == "__init__.py" else [f[:-3]])
                found[".".join(name)] = os.path.join(folder, f)
    return found


def _resolve(module: str, is_package: bool, level: int, name: str | None) -> str:
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    if level > 1:
        base = base[:len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def import_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports (anywhere in its code)."""
    modules = _modules()
    graph = {m: set() for m in modules}
    for mod, path in modules.items():
        is_package = path.endswith("__init__.py")
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        targets = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = (_resolve(mod, is_package, node.level, node.module) if node.level
                        else node.module)
                for a in node.names:
                    sub = f"{base}.{a.name}"
                    targets.add(sub if sub in modules else base)
        own_ancestors = {".".join(mod.split(".")[:k]) for k in range(1, mod.count(".") + 1)}
        for t in targets:
            if not t or not t.startswith(PACKAGE):
                continue
            parts = t.split(".")
            for k in range(1, len(parts) + 1):
                reached = ".".join(parts[:k])
                if reached in modules and reached != mod and (
                        k == len(parts) or reached not in own_ancestors):
                    graph[mod].add(reached)
    return graph


def circles(graph) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_graph_sees_imports_inside_functions_and_relative_ones():
    graph = import_graph()
    # simulate imports the method modules inside functions, relatively
    assert any(t.startswith("MultibodyWB.solver.methods") for t in
               graph["MultibodyWB.solver.run.simulate"])
    # a circle made up here is found
    fake = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(fake) == [["a", "b", "c"]]


def test_no_import_circles_in_the_solver():
    graph = import_graph()
    solver = {m: {t for t in ts if t.startswith("MultibodyWB.solver")}
              for m, ts in graph.items() if m.startswith("MultibodyWB.solver")}
    found = circles(solver)
    assert not found, "import circles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_no_import_circles():
    found = circles(import_graph())
    assert not found, "import circles:\n" + "\n".join(" <-> ".join(c) for c in found)


#: the solver's layers, lowest first: a module may import from its own layer and the ones below
#: (``api``, the face the FreeCAD layer sees, is the top: nothing of the solver imports it)
SOLVER_LAYERS = ["maths", "elements", "model", "analysis", "results", "methods", "run", "study",
                 "cli", "api"]


def _layer(mod: str):
    parts = mod.split(".")
    if parts[:2] != ["MultibodyWB", "solver"] or len(parts) < 3:
        return None
    return SOLVER_LAYERS.index(parts[2]) if parts[2] in SOLVER_LAYERS else None


def upward_imports(graph, layer_of) -> list[str]:
    """``module -> target`` for every import from a layer to one above it (``layer_of(module)``:
    the layer's index, None outside the layers)."""
    upward = []
    for mod, targets in graph.items():
        lm = layer_of(mod)
        if lm is None:
            continue
        upward += [f"{mod} -> {t}" for t in targets
                   if layer_of(t) is not None and layer_of(t) > lm]
    return sorted(upward)


def test_solver_layers_import_only_downwards():
    upward = upward_imports(import_graph(), _layer)
    assert not upward, "imports upward through the solver's layers:\n" + "\n".join(upward)


@pytest.mark.parametrize("layer", SOLVER_LAYERS)
def test_every_solver_layer_exists(layer):
    path = os.path.join(ROOT, "solver", layer)
    assert os.path.isdir(path) or os.path.isfile(path + ".py")


def test_solver_top_level_is_packages_and_the_cli():
    """Only the packages of the layers, the command line and the package's own files."""
    top = sorted(f for f in os.listdir(os.path.join(ROOT, "solver"))
                 if f.endswith(".py") or (os.path.isdir(os.path.join(ROOT, "solver", f))
                                          and f != "__pycache__"))
    allowed = {"__init__.py", "__main__.py", "cli.py", "api.py"} | set(SOLVER_LAYERS)
    assert set(top) <= allowed, sorted(set(top) - allowed)


# --- the FreeCAD layer ----------------------------------------------------------------------------

#: The FreeCAD layer's packages, lowest first: a module may import from its own package, the ones
#: before it, the solver and the code examples. The view providers sit above the GUI because a
#: double-click opens an object's task panel; the panels reach the symbols through
#: ``gui.symbols`` and the factory gets the view provider class from ``viewproviders.base``.
FREECAD_LAYERS = ["resources", "objects", "document", "gui", "viewproviders", "commands",
                  "examples_fc", "demo"]

#: What the FreeCAD layer imports from freely: FreeCAD-free, below all of it.
FREECAD_FREE = ["solver", "examples"]


def _freecad_layer(mod: str):
    parts = mod.split(".")
    if len(parts) < 2 or parts[1] not in FREECAD_LAYERS:
        return None
    return FREECAD_LAYERS.index(parts[1])


def test_package_top_level_is_the_layers_packages():
    """Only the solver, the code examples and the FreeCAD layer's packages: no loose modules."""
    top = sorted(f for f in os.listdir(ROOT)
                 if f.endswith(".py") or (os.path.isdir(os.path.join(ROOT, f))
                                          and f != "__pycache__"))
    allowed = {"__init__.py"} | set(FREECAD_FREE) | set(FREECAD_LAYERS)
    assert set(top) <= allowed, sorted(set(top) - allowed)
    assert set(FREECAD_LAYERS) <= set(top), sorted(set(FREECAD_LAYERS) - set(top))
    for layer in FREECAD_LAYERS:
        assert os.path.isfile(os.path.join(ROOT, layer, "__init__.py")), layer


def test_freecad_layers_import_only_downwards():
    upward = upward_imports(import_graph(), _freecad_layer)
    assert not upward, ("imports upward through the FreeCAD layer's packages:\n"
                        + "\n".join(upward))


def test_the_freecad_free_parts_import_nothing_of_the_freecad_layer():
    graph = import_graph()
    found = sorted(f"{mod} -> {t}" for mod, targets in graph.items() for t in targets
                   if mod.split(".")[1:2] in ([p] for p in FREECAD_FREE)
                   and _freecad_layer(t) is not None)
    assert not found, found


def test_the_layer_check_sees_an_upward_import():
    """The check above can fail: an import of the GUI from the objects is upward."""
    objects, gui = "MultibodyWB.objects.mechanism", "MultibodyWB.gui.player"
    assert _freecad_layer(objects) < _freecad_layer(gui)
    assert _freecad_layer("MultibodyWB.solver.cli") is None


# --- the solver's narrow face ---------------------------------------------------------------------

REPO = os.path.dirname(ROOT)
SOLVER = PACKAGE + ".solver"
API = SOLVER + ".api"


def _freecad_layer_files() -> dict[str, str]:
    """Module -> file of the FreeCAD layer: every module of the package outside the FreeCAD-free
    parts (the solver, the code examples), and the add-on's entry points ``Init.py`` and
    ``InitGui.py``."""
    found = {m: p for m, p in _modules().items()
             if m.split(".")[1:2] not in ([p] for p in FREECAD_FREE)}
    for entry in ("Init", "InitGui"):
        found[entry] = os.path.join(REPO, entry + ".py")
    return found


def solver_imports_besides_the_api(mod: str, path: str) -> list[str]:
    """``file:line: what`` for every import in ``path`` (module ``mod``) that reaches the solver
    other than through :mod:`MultibodyWB.solver.api`: ``import MultibodyWB.solver.x``,
    ``from ..solver.x import y``, ``from ..solver import model`` (anything but ``api``),
    ``from .. import solver``; inside functions too."""
    is_package = path.endswith("__init__.py")
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    found = []

    def solver(name):
        return name == SOLVER or name.startswith(SOLVER + ".")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            bad = [a.name for a in node.names if solver(a.name) and a.name != API]
        elif isinstance(node, ast.ImportFrom):
            base = (_resolve(mod, is_package, node.level, node.module) if node.level
                    else node.module) or ""
            names = [f"{base}.{a.name}" for a in node.names]
            if base == API:
                bad = []
            elif base == SOLVER:
                bad = [n for n in names if n != API]
            elif solver(base):
                bad = names
            else:
                bad = [n for n in names if n == SOLVER]
        else:
            continue
        found += [f"{os.path.relpath(path, REPO)}:{node.lineno}: {b}" for b in bad]
    return found


def test_the_freecad_layer_imports_only_the_solver_api():
    found = [f for mod, path in sorted(_freecad_layer_files().items())
             for f in solver_imports_besides_the_api(mod, path)]
    assert not found, ("the FreeCAD layer imports the solver other than through "
                       f"{API}:\n" + "\n".join(found))


def test_the_api_offers_what_the_freecad_layer_uses_and_no_more():
    """Every name of the api is used by the FreeCAD layer (``from ..solver.api import name`` or
    ``api.name``): a name nobody uses any more leaves the api with its last user."""
    from MultibodyWB.solver import api
    used = set()
    for mod, path in _freecad_layer_files().items():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("solver.api"):
                used.update(a.name for a in node.names)
            elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                  and node.value.id == "api"):
                used.add(node.attr)
    assert set(api.__all__) - used == set(), "offered, not used"
    assert used - set(api.__all__) == set(), "used, not offered"


def test_the_api_check_sees_every_form_of_import(tmp_path):
    """The check above can fail: each way of reaching the solver around the api is seen."""
    path = tmp_path / "panel.py"
    path.write_text("import MultibodyWB.solver.model\n"
                    "from MultibodyWB.solver.run.simulate import simulate\n"
                    "from ..solver import model, api\n"
                    "from ..solver import HINGE_TYPES\n"
                    "from .. import solver\n"
                    "def later():\n"
                    "    from ..solver.run import (job,\n"
                    "                              warmup)\n"
                    "from ..solver.api import simulate\n"
                    "from ..solver import api\n"
                    "import MultibodyWB.solver.api\n")
    found = solver_imports_besides_the_api("MultibodyWB.gui.panel", str(path))
    assert [f.split(": ", 1)[1] for f in found] == [
        "MultibodyWB.solver.model", "MultibodyWB.solver.run.simulate.simulate",
        "MultibodyWB.solver.model", "MultibodyWB.solver.HINGE_TYPES", "MultibodyWB.solver",
        "MultibodyWB.solver.run.job", "MultibodyWB.solver.run.warmup"]
    assert "Init" in _freecad_layer_files() and "InitGui" in _freecad_layer_files()


def test_every_name_of_the_api_resolves():
    import importlib
    import importlib.util
    import types

    from MultibodyWB.solver import api
    assert sorted(api.__all__) == sorted([*api._TABLE, "WARMUP_MODULE"])
    assert set(api.__all__) <= set(dir(api))
    for name, (module, attribute) in sorted(api._TABLE.items()):
        found = getattr(api, name)
        home = importlib.import_module(module)
        if attribute is None:
            assert isinstance(found, types.ModuleType) and found is home, name
        else:
            assert found is getattr(home, attribute), name
        assert name not in vars(api), f"{name} kept in the api's globals"
    assert importlib.util.find_spec(api.WARMUP_MODULE) is not None
    with pytest.raises(AttributeError, match="no_such_name"):
        api.no_such_name


def test_the_api_reaches_a_name_where_it_is_now(monkeypatch):
    """A function replaced in its home module (as tests do) is what the api gives after."""
    from MultibodyWB.solver import api
    from MultibodyWB.solver.run import simulate as simulate_module

    def replaced(*args, **kwargs):
        return "replaced"

    monkeypatch.setattr(simulate_module, "simulate", replaced)
    assert api.simulate is replaced
    from MultibodyWB.solver.api import simulate
    assert simulate is replaced


def test_importing_the_api_imports_nothing_of_the_solver():
    """FreeCAD's workbench start may import the api: that loads neither numba nor numpy nor
    any module of the solver (a fresh process)."""
    import subprocess
    import sys
    code = ("import sys, MultibodyWB.solver.api; "
            "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('numba', 'numpy', 'llvmlite', 'scipy', 'MultibodyWB'))))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": REPO}, check=True).stdout.split()
    assert "numba" not in out
    assert out == ["MultibodyWB", SOLVER, API]
