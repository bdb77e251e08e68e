"""Instant loads of a four-bar whose links are stacked along the pins (issue 32.5).

The solver's four-bar (pins along global y) with the coupler drawn one layer up: the coupler
and its markers 10 mm along +y, as markers picked on the bores of stacked links sit, so the
crank pin's and the rocker pin's two markers are 10 mm apart along the pin. The run keeps that
offset (:func:`~MultibodyWB.solver.analysis.start.resolve` joins the hinge on the output marker's
plane); the loads on every link must balance in force and in moment, as they do for the same
four-bar drawn with coincident markers. Before the fix the coupler's moments summed to about a
quarter of the largest one: its hinge forces were taken at its own markers while the run's
reaction columns are at the common plane.
"""

import numpy as np
import pytest

from MultibodyWB.examples import four_bar
from MultibodyWB.solver.results import instant_loads as il
from MultibodyWB.solver.run.simulate import simulate

LAYER = 0.010       #: m, the coupler's layer above the crank and rocker


def _model(layer):
    m = four_bar.build(theta_deg=60.0, crank_rate=2 * np.pi)
    m.body("Coupler").position = m.body("Coupler").position + np.array([0.0, layer, 0.0])
    return m


@pytest.fixture(scope="module")
def runs():
    out = {}
    for layer in (0.0, LAYER):
        m = _model(layer)
        out[layer] = (m, simulate(m, t_end=0.2, output_step=0.01))
    return out


def test_the_run_keeps_the_layers(runs):
    m, r = runs[LAYER]
    y = r.position("Coupler")[:, 1]
    assert np.max(np.abs(y - LAYER)) < 1e-9
    for body in ("Crank", "Rocker"):
        assert np.max(np.abs(r.position(body)[:, 1])) < 1e-9


@pytest.mark.parametrize("body", ["Crank", "Coupler", "Rocker"])
def test_stacked_links_loads_balance(runs, body):
    m, r = runs[LAYER]
    for row in (0, len(r) // 2, len(r) - 1):
        loads = il.loads_at(m, r, body, row)
        rf, rm = loads.residual()
        assert rf < 1e-6 and rm < 1e-6, (body, row, rf, rm)


def test_stacked_and_flat_coupler_loads_agree(runs):
    """The layer changes nothing in the plane: the coupler's hinge forces are the flat
    four-bar's, each at the coupler's own marker (10 mm up the pin), its torque about that
    marker carrying the moment of the force taken at the common plane."""
    (m0, r0), (m1, r1) = runs[0.0], runs[LAYER]
    row = len(r0) // 2
    flat = {ld.name: ld for ld in il.loads_at(m0, r0, "Coupler", row).of_kind("hinge")}
    stacked = {ld.name: ld for ld in il.loads_at(m1, r1, "Coupler", row).of_kind("hinge")}
    assert set(flat) == set(stacked) == {"CrankPin", "RockerPin"}
    scale = max(np.linalg.norm(ld.force) for ld in flat.values())
    for name in flat:
        a, b = flat[name], stacked[name]
        assert np.allclose(a.force[[0, 2]], b.force[[0, 2]], atol=1e-6 * scale)
        # at the coupler's marker, on its layer
        assert b.point[1] == pytest.approx(LAYER, abs=1e-12)
        assert np.allclose(b.point[[0, 2]], a.point[[0, 2]], atol=1e-9)
