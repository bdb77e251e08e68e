"""The code and schema written from the force laws' registry are what the registry gives today
(issue 36 item 3): ``scripts/generate_registry.py`` regenerates every region in memory and this
compares. Edit a law or ``LAWS`` and run the script; a hand edit inside a region fails here."""

from __future__ import annotations

import importlib.util
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def gen():
    spec = importlib.util.spec_from_file_location(
        "generate_registry", os.path.join(ROOT, "scripts", "generate_registry.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_checked_in_output_is_the_registry_s(gen):
    stale = [os.path.relpath(p, ROOT) for p, (old, new) in gen.outputs().items() if old != new]
    assert stale == [], f"run python3 scripts/generate_registry.py: {stale} out of date"


def test_a_hand_edit_inside_a_region_is_seen(gen):
    path = gen.FILES["kernels"]
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    edited = text.replace("if n_stop > 0:", "if n_stop > 1:", 1)
    assert edited != text
    assert gen.regenerate("kernels", edited) == text


def test_every_law_is_dispatched_everywhere(gen):
    """Each registered law's loads are called in the three compiled places, and its power in
    the dispatcher (the runs' in-place pass takes a law's dissipation from its loads when the
    law says so)."""
    from MultibodyWB.solver.elements import forces
    for key in ("forces", "kernels", "adaptive"):
        with open(gen.FILES[key], encoding="utf-8") as fh:
            text = fh.read()
        for name, law in zip(forces.NAMES, forces.LAWS):
            assert re.search(rf"\b{name}\.add_loads\(", text), (key, name)
            if key == "forces" or not getattr(law, "LOADS_RETURN_DISSIPATION", False):
                assert re.search(rf"\b{name}\.add_power\(", text), (key, name)


def test_the_schema_lists_every_force_type(gen):
    from MultibodyWB.solver.elements.forces import FORCE_TYPES
    with open(gen.FILES["xsd"], encoding="utf-8") as fh:
        xsd = fh.read()
    for name in FORCE_TYPES:
        assert f'<xs:enumeration value="{name}">' in xsd
