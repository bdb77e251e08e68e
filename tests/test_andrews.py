"""Andrews' squeezing mechanism (MultibodyWB/examples/andrews_squeezer.py) against the published
reference solution at t = 0.03 s, and the energy balance, the first-step independence and the
agreement of the formulations on its three closed loops."""

import io

import numpy as np
import pytest

from MultibodyWB.examples import build
from MultibodyWB.examples.andrews_squeezer import MOM, REFERENCE, REFERENCE_TIME, START
from MultibodyWB.solver import cli
from MultibodyWB.solver.model import xmlio
from MultibodyWB.solver.run.simulate import simulate


@pytest.fixture(scope="module")
def run():
    """The example at its own settings (mstmm, DOP853 at tolerances of 1e-10, to 0.03 s)."""
    return simulate(build("andrews_squeezer"))


def test_the_angles_and_rates_of_the_reference_solution(run):
    """All seven angles to 1e-8 rad (the crank's has turned 15.9 rad) and their rates to 1e-6
    relative; the start as drawn (no correction)."""
    assert run.data[-1, 0] == pytest.approx(REFERENCE_TIME, abs=1e-15)
    for hinge, (angle, rate) in REFERENCE.items():
        assert run.column(f"{hinge}.rz")[-1] == pytest.approx(angle, abs=1e-8), hinge
        assert run.column(f"{hinge}.rz_rate")[-1] == pytest.approx(rate, rel=1e-6, abs=1e-6), hinge
    assert run.column("O.rz")[0] == pytest.approx(START[0], abs=1e-15)
    assert run.column("E3.rz").size == run.data.shape[0]      # the cut hinges' columns too


def test_the_motor_work_is_work_and_the_drift_is_the_residual(run, tmp_path):
    """The torque's work is MOM times the crank's turn (to round-off), nothing else does work,
    the balance closes to 1e-9 of it; the summary of ``run`` calls only the residual drift."""
    turn = run.column("O.rz")[-1] - run.column("O.rz")[0]
    work = run.column("energy.work_forces")[-1]
    assert work == pytest.approx(MOM * turn, rel=1e-12)
    assert work == pytest.approx(0.5238, abs=1e-4)
    assert run.column("energy.work_drivers")[-1] == 0.0
    assert run.column("energy.dissipated")[-1] == 0.0
    assert abs(run.column("energy.residual")).max() < 1e-9 * work
    total = run.column("energy.total")
    assert total[-1] - total[0] == pytest.approx(work, rel=1e-9)
    path = tmp_path / "andrews.mbs.xml"
    xmlio.write(build("andrews_squeezer"), path)
    out = io.StringIO()
    assert cli.main(["run", str(path), "--out", str(tmp_path / "r.csv")], out=out) == cli.EXIT_OK
    line = next(ln for ln in out.getvalue().splitlines() if ln.strip().startswith("energy:"))
    assert "of forces 0.523792 J" in line
    assert line.count("drift") == 1 and "residual (drift)" in line


def test_dop853_steps_do_not_depend_on_the_first_step(run):
    """Issue 11's squeezer: Step 1e-6 and 1e-4 (the first step of DOP853) take about the same
    steps and give the same motion."""
    other = simulate(build("andrews_squeezer"), step=1e-4)
    steps = (run.meta["steps"], other.meta["steps"])
    assert max(steps) < 1.2 * min(steps), steps
    for hinge in REFERENCE:
        assert other.column(f"{hinge}.rz")[-1] == pytest.approx(REFERENCE[hinge][0], abs=1e-8)


def test_the_constrained_formulation_agrees():
    """The global formulation (absolute coordinates, Lagrange multipliers) over the first 5 ms,
    against the mstmm run at the same tolerances: the angles to 1e-9 rad."""
    settings = dict(t_end=5e-3, output_step=5e-4)
    a = simulate(build("andrews_squeezer"), **settings)
    b = simulate(build("andrews_squeezer"), method="constrained", **settings)
    for hinge in REFERENCE:
        np.testing.assert_allclose(b.column(f"{hinge}.rz"), a.column(f"{hinge}.rz"), rtol=0,
                                   atol=1e-9, err_msg=hinge)
    assert abs(a.column("O.rz")[-1] - START[0]) > 0.1           # it has moved
