"""Every method on every example (issue 36 item 5: one suite over METHODS x examples).

Each method either runs the example for a few steps from its start and keeps the contract of
``methods/base.py`` (one row per output time, finite values, its own name, the states, the energy
columns last), or refuses it with a :class:`ModelError` naming the element it cannot take; the
refusals are listed here, so a new one, or one that went away, fails. Where mstmm and the
constrained method both run an example, their bodies' positions and velocities agree after the
same RK4 steps from the same start (their formulations are independent: O(n) transfer sweeps
with cut-hinge loads, and absolute coordinates with multipliers). The methods' own physics is
tested elsewhere (test_method_agreement.py over a second, test_analytic.py, ...); this suite
makes a new method or a new example meet all the others.
"""

from __future__ import annotations

import numpy as np
import pytest

from MultibodyWB.examples import EXAMPLES, build
from MultibodyWB.solver.analysis.topology import analyse
from MultibodyWB.solver.methods.base import METHODS
from MultibodyWB.solver.model.problems import ModelError
from MultibodyWB.solver.run.simulate import simulate

#: (example, method) -> a text the refusal must contain: the element it names
REFUSED = {
    ("gear_train", "newton-euler"): "Coupler 'Mesh1'",
}

#: the fixed step of each method (newton-euler's penalty joints need a very small one)
STEP = {"mstmm": 1e-4, "constrained": 1e-4, "newton-euler": 1e-6}
STEPS = 10

_RUNS = {}


def run(example, method):
    """The example run by the method for STEPS steps (rows at 0, half-way and the end), or the
    ModelError it raised; each pair once per session."""
    key = (example, method)
    if key not in _RUNS:
        step = STEP[method]
        try:
            _RUNS[key] = simulate(build(example), method=method, integrator="rk4",
                                  t_end=STEPS * step, step=step, output_step=STEPS * step / 2,
                                  accept_corrections=True)
        except ModelError as exc:
            _RUNS[key] = exc
    return _RUNS[key]


def test_the_suite_covers_every_method_and_example():
    assert set(STEP) == set(METHODS)
    assert len(EXAMPLES) >= 16 and {m for _, m in REFUSED} <= set(METHODS)
    assert {e for e, _ in REFUSED} <= set(EXAMPLES)


@pytest.mark.parametrize("method", sorted(METHODS))
@pytest.mark.parametrize("example", sorted(EXAMPLES))
def test_every_method_runs_every_example_or_names_what_it_refuses(example, method):
    res = run(example, method)
    if isinstance(res, ModelError):
        assert (example, method) in REFUSED, f"{method} refused {example}: {res}"
        assert REFUSED[(example, method)] in str(res), str(res)
        return
    assert (example, method) not in REFUSED, f"{method} runs {example} now: take it off"
    t_end = STEPS * STEP[method]
    assert res.names[0] == "time" and res.meta["method"] == method
    np.testing.assert_allclose(res.time, [0.0, t_end / 2, t_end], rtol=0, atol=1e-15)
    assert np.all(np.isfinite(res.data))
    assert res.states.shape == (3, res.meta["ny"])
    model = build(example)
    for body in model.bodies:
        for c in ("x", "y", "z", "vx", "vy", "vz"):
            assert f"{body.name}.{c}" in res.names, (body.name, c)
    energy = [n for n in res.names if n.startswith("energy.")]
    assert "energy.residual" in energy and res.names[-len(energy):] == energy


#: agreement of mstmm and constrained after STEPS RK4 steps, relative to the example's largest
#: position and velocity: a tree to round-off (measured: 3e-17 and 2e-15 at most); with closed
#: loops to their stabilisation (mstmm's Baumgarte terms against the constrained method's
#: projection after each step; measured: positions 5e-9 (crank-slider), velocities 3e-7 (track))
AGREE = {"tree": (1e-12, 1e-12), "loops": (1e-7, 1e-5)}


@pytest.mark.parametrize("example", sorted(EXAMPLES))
def test_mstmm_and_constrained_agree_where_both_run(example):
    a, b = run(example, "mstmm"), run(example, "constrained")
    if isinstance(a, ModelError) or isinstance(b, ModelError):
        pytest.skip(f"{example}: one of the two refuses it (test above)")
    model = build(example)
    kind = "loops" if analyse(model).cut_hinges else "tree"

    def stacked(r, prefix):
        return np.stack([r.column(f"{body.name}.{prefix}{c}") for body in model.bodies
                         for c in "xyz"])

    rel_p, rel_v = AGREE[kind]
    for prefix, rel in (("", rel_p), ("v", rel_v)):
        ours, theirs = stacked(a, prefix), stacked(b, prefix)
        scale = np.abs(theirs).max()
        assert np.abs(ours - theirs).max() <= rel * scale + 1e-15, (kind, prefix or "position",
                                                                   np.abs(ours - theirs).max(),
                                                                   scale)
