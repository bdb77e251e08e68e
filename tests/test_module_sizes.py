"""No module over 1,000 lines (issue 36 item 5): the MSTMM kernels, the contact law, the
transfer equation, the Study, Simulate and edit panels were split by role to get there; a module
that grows past the limit fails, naming its size."""

from __future__ import annotations

import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMIT = 1000


def sizes():
    out = {}
    for top in ("MultibodyWB", "scripts", "benchmarks"):
        for folder, _, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                if name.endswith(".py"):
                    path = os.path.join(folder, name)
                    with open(path, encoding="utf-8") as fh:
                        out[os.path.relpath(path, ROOT)] = sum(1 for _ in fh)
    return out


def test_no_module_over_the_limit():
    over = {p: n for p, n in sizes().items() if n > LIMIT}
    assert over == {}, f"modules over {LIMIT} lines: split them by role ({over})"


def test_the_count_sees_the_largest_modules():
    """The walk reads the package (a count that found nothing would pass the test above)."""
    found = sizes()
    assert "MultibodyWB/solver/methods/mstmm/kernels.py" in found
    assert max(found.values()) > 900
