"""mstmm and constrained agree over 1 s on the crank-slider, the four-bar and the seed-004 system.

Both methods integrate with the same fixed-step RK4 from the same assembled initial state; their
formulations (O(n) transfer sweeps with cut-hinge loads and Baumgarte stabilisation, against
absolute coordinates with Lagrange multipliers and coordinate partitioning) are independent.
"""

import numpy as np
import pytest

from MultibodyWB.examples import build
from MultibodyWB.solver.run.simulate import simulate

CASES = {
    # name: (options, step, position column, hinges whose reactions are compared)
    "crank_slider": (dict(rpm=600.0), 5e-4, "Piston.z", ("MainBearing", "BigEnd", "Cylinder")),
    "four_bar": (dict(crank_rate=3.0), 5e-4, "Coupler.x", ("CrankPivot", "CrankPin")),
    "seed004": ({}, 1e-3, "Slider.z", ("J1", "J2", "J3")),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_mstmm_and_constrained_agree_over_one_second(name):
    options, step, position, hinges = CASES[name]
    runs = {m: simulate(build(name, **options), method=m, integrator="rk4", t_end=1.0,
                        step=step, output_step=0.01) for m in ("mstmm", "constrained")}
    a, b = runs["mstmm"], runs["constrained"]
    assert np.ptp(b.column(position)) > 1e-3                  # the mechanism moved
    assert np.abs(a.column(position) - b.column(position)).max() < 1e-6
    for h in hinges:
        Fa = np.stack([a.column(f"{h}.F{c}") for c in "xyz"])
        Fb = np.stack([b.column(f"{h}.F{c}") for c in "xyz"])
        assert np.abs(Fa - Fb).max() < 1e-6 * np.abs(Fb).max(), h
    for w in ("warnings",):
        # the four-bar's redundancy is reported by both methods
        if name == "four_bar":
            assert any("redundant" in x for x in a.meta[w]) and any("redundant" in x
                                                                    for x in b.meta[w])
