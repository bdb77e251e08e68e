"""The benchmarks and scripts import only names that exist: they are not run by the suite, so a
name that moves in the solver (issue 36's moves) would break them unseen (bench_loop_rows did:
the ring the set-up test borrows from it)."""

import ast
import importlib
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDERS = ("benchmarks", "scripts")


def _imports():
    """(file, line, module, name) of every ``from MultibodyWB... import name`` in the folders."""
    out = []
    for folder in FOLDERS:
        for entry in sorted(os.listdir(os.path.join(ROOT, folder))):
            if not entry.endswith(".py"):
                continue
            path = os.path.join(ROOT, folder, entry)
            with open(path, encoding="utf-8") as fh:
                tree = ast.parse(fh.read(), path)
            guarded = set()               # imports under ``try: ... except ImportError``: the
            for node in ast.walk(tree):   # fallbacks for older layouts (example_fingerprints)
                if isinstance(node, ast.Try) and any(
                        isinstance(h.type, ast.Name) and h.type.id == "ImportError"
                        for h in node.handlers):
                    guarded.update(id(n) for part in (node.body, *[h.body for h in node.handlers])
                                   for stmt in part for n in ast.walk(stmt))
            for node in ast.walk(tree):
                if id(node) in guarded:
                    continue
                if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                        and node.module.split(".")[0] == "MultibodyWB":
                    for alias in node.names:
                        out.append((f"{folder}/{entry}", node.lineno, node.module, alias.name))
    return out


IMPORTS = _imports()


def test_there_are_imports_to_check():
    assert len(IMPORTS) > 50
    assert any(f == "benchmarks/bench_loop_rows.py" for f, _, _, _ in IMPORTS)


@pytest.mark.parametrize("module", sorted({m for _, _, m, _ in IMPORTS}))
def test_every_imported_name_exists(module):
    if module.startswith("MultibodyWB.gui") or module.startswith("MultibodyWB.commands"):
        pytest.skip("needs FreeCAD's GUI")
    mod = importlib.import_module(module)
    missing = [f"{f}:{line}: {name}" for f, line, m, name in IMPORTS
               if m == module and name != "*" and not hasattr(mod, name)
               and importlib.util.find_spec(f"{module}.{name}") is None]
    assert not missing, f"not in {module}: " + "; ".join(missing)
