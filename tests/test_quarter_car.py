"""The quarter car (the design study's example): its motion against the equations integrated by
scipy, and its suspension study: the optimiser's design meets the travel constraint at its bound
and rides better than the first design and than every feasible point of a grid."""

from __future__ import annotations

import numpy as np
import pytest

from MultibodyWB.examples import quarter_car as qc
from MultibodyWB.solver.run.simulate import simulate
from MultibodyWB.solver.study import run_study
from MultibodyWB.solver.study.executors import SerialExecutor


@pytest.mark.parametrize("k, c", [(qc.SUSPENSION_STIFFNESS, qc.SUSPENSION_DAMPING), (1.5e4, 800.0)])
def test_motion_matches_the_quarter_car_equations(k, c):
    r = simulate(qc.build(k, c))
    t, zs, zu, a_s = qc.reference(k, c, times=r.time)
    scale = np.max(np.abs(zs))
    assert np.max(np.abs(r["Hull.z"] - qc.HULL_HEIGHT - zs)) < 2e-6 * scale
    travel = np.max(np.abs(zs - zu))
    assert np.max(np.abs(r["Suspension.z"] - (zs - zu))) < 5e-6 * travel     # rk4 at 1 ms
    assert np.max(np.abs(r["Hull.az"] - a_s)) < 2e-6 * np.max(np.abs(a_s))
    # the tyre's reaction is its spring: k_t (z_u - z_r), on the wheel (its input body)
    zr = r["Road.z"]
    np.testing.assert_allclose(r["Tyre.Fz"], -qc.TYRE_STIFFNESS * (r["Wheel.z"]
                                                                   - qc.WHEEL_CENTRE - zr),
                               atol=1e-6 * qc.TYRE_STIFFNESS * scale)


def test_the_suspension_study_finds_a_better_feasible_design():
    base = qc.build()
    first = simulate(base)
    rms0 = float(np.sqrt(np.mean(first["Hull.az"] ** 2)))
    opt = run_study(base, qc.design_study("nelder-mead", tolerance=1e-3),
                    executor=SerialExecutor())
    best = opt.best
    assert best is not None and best.feasible
    # the travel constraint is what stops it: active, at its bound
    assert 0 <= best.margins[0] < 1e-4 and best.objectives[1] == pytest.approx(qc.TRAVEL,
                                                                                 abs=1e-4)
    assert best.objectives[0] < 0.9 * rms0
    grid = run_study(base, qc.design_study("grid", levels=6), executor=SerialExecutor())
    feasible = [r.objectives[0] for r in grid.rows if r.feasible]
    assert feasible and best.objectives[0] <= min(feasible)
    # the optimiser's row is the objective of a plain run of that design
    k, c = best.values
    again = simulate(qc.build(k, c))
    from MultibodyWB.solver.study import Expression
    assert Expression("rms(Hull.az)").evaluate(again) == pytest.approx(best.objectives[0],
                                                                       rel=1e-12)
