"""The loads on one body at one instant (solver.results.instant_loads): complete (d'Alembert
equilibrium), named after their elements, at the instant asked for."""

import numpy as np
import pytest

from MultibodyWB.examples import cam_valve, crank_slider, double_pendulum, gear_train
from MultibodyWB.solver.results import instant_loads as il
from MultibodyWB.solver.run.simulate import simulate


@pytest.fixture(scope="module")
def engine():
    m = crank_slider.build()
    # the peak gas force is at 375 deg, drawn at 60 deg, 3000 rpm: t = 0.0175 s
    return m, simulate(m, t_end=0.02)


@pytest.fixture(scope="module")
def valve():
    m = cam_valve.build()
    return m, simulate(m, t_end=0.03)


def _check_equilibrium(loads, tol=1e-6):
    rf, rm = loads.residual()
    assert rf < tol and rm < tol, (loads.body, loads.time, rf, rm)


def test_peak_gas_force_instant(engine):
    m, r = engine
    row = il.peak_row(m, r, "GasForce.magnitude")
    # the gas force peaks at crank angle 375 deg: t = (375 - 60) / 360 / 50 s
    assert r.time[row] == pytest.approx(0.0175, abs=0.6 * 1e-4)
    values, unit = il.quantity(m, r, "GasForce.magnitude")
    assert unit == "N" and values[row] == pytest.approx(crank_slider.PEAK_GAS_FORCE, rel=1e-3)


@pytest.mark.parametrize("body", ["Crank", "Rod", "Piston"])
@pytest.mark.parametrize("spec", ["GasForce.magnitude", "|MainBearing.F|", "|Rod.alpha|"])
def test_engine_bodies_in_equilibrium(engine, body, spec):
    m, r = engine
    loads = il.loads_at_peak(m, r, body, spec)
    # well within the 0.5 % of the largest load: the reactions and the accelerations of
    # a row are consistent to round-off
    _check_equilibrium(loads)


def test_connecting_rod_loads_at_peak_gas_force(engine):
    m, r = engine
    loads = il.loads_at_peak(m, r, "Rod", "GasForce.magnitude")
    names = [(ld.name, ld.kind) for ld in loads.loads]
    assert names == [("BigEnd", "hinge"), ("WristPin", "hinge"), ("gravity", "gravity"),
                     ("inertia", "inertia")]
    big, small = loads.loads[0], loads.loads[1]
    row = loads.row
    # the rod is BigEnd's input body: the reaction as stored; WristPin's output body: opposite
    assert np.allclose(big.force, r.vector("BigEnd.F")[row])
    assert np.allclose(small.force, -r.vector("WristPin.F")[row])
    # at the pins: the rod's markers' origins, ~140 mm apart
    assert np.linalg.norm(big.point - small.point) == pytest.approx(crank_slider.ROD_LENGTH,
                                                                   rel=1e-9)
    # the rod is in compression: the big end pushes it up towards the wrist pin
    axis = (small.point - big.point) / np.linalg.norm(small.point - big.point)
    assert big.force @ axis > 10000.0 and small.force @ axis < -10000.0
    mass = m.body("Rod").mass
    assert np.allclose(loads.of_kind("gravity")[0].force, mass * np.asarray(m.gravity))
    assert loads.largest_force() == pytest.approx(max(np.linalg.norm(big.force),
                                                      np.linalg.norm(small.force)))


def test_piston_gets_the_gas_force(engine):
    m, r = engine
    loads = il.loads_at_peak(m, r, "Piston", "GasForce.magnitude")
    gas = [ld for ld in loads.loads if ld.name == "GasForce"]
    assert len(gas) == 1 and gas[0].kind == "force"
    assert np.allclose(gas[0].force, [0, 0, -crank_slider.PEAK_GAS_FORCE], rtol=1e-3)
    # at the crown marker, 30 mm above the pin
    assert gas[0].point[2] - loads.origin[2] == pytest.approx(crank_slider.PIN_BELOW_CROWN)
    _check_equilibrium(loads)


def test_spring_contact_and_stop_loads(valve):
    m, r = valve
    for body in ("Camshaft", "Valve"):
        for row in (0, len(r) // 3, 2 * len(r) // 3, len(r) - 1):
            loads = il.loads_at(m, r, body, row)
            kinds = {ld.kind for ld in loads.loads}
            if body == "Valve":
                assert {"hinge", "force", "contact"} <= kinds
            _check_equilibrium(loads, tol=1e-5)


def test_free_rotation_inertia(engine):
    m = double_pendulum.build(angles_deg=(60.0, 30.0), rates=(2.0, -1.0))
    r = simulate(m, t_end=0.2)
    for body in [b.name for b in m.bodies]:
        for row in (0, 7, len(r) - 1):
            _check_equilibrium(il.loads_at(m, r, body, row))


def test_couplers_are_named_when_not_included():
    m = gear_train.build()
    r = simulate(m, t_end=0.02)
    loads = il.loads_at(m, r, "Idler", len(r) - 1)
    assert any("Mesh1" in n for n in loads.notes) and any("Mesh2" in n for n in loads.notes)


def test_instant_by_time_and_bad_names(engine):
    m, r = engine
    assert il.row_at(r, 0.01) == int(np.argmin(np.abs(r.time - 0.01)))
    assert il.loads_at_time(m, r, "Rod", 0.01).time == pytest.approx(0.01)
    with pytest.raises(KeyError, match="Nothing.magnitude"):
        il.quantity(m, r, "Nothing.magnitude")
    with pytest.raises(KeyError, match="Rod.Q"):
        il.quantity(m, r, "|Rod.Q|")
    with pytest.raises(KeyError, match="Ground"):
        il.loads_at(m, r, m.ground.name, 0)
    with pytest.raises(KeyError, match="Conrod"):
        il.loads_at(m, r, "Conrod", 0)


def test_loads_carried_to_the_drawing(engine):
    m, r = engine
    loads = il.loads_at_peak(m, r, "Rod", "GasForce.magnitude")
    drawn = loads.drawn(m)
    b = m.body("Rod")
    assert np.allclose(drawn.origin, b.position)
    # the rod's pins as drawn: its markers' drawn positions
    for ld in drawn.of_kind("hinge"):
        p, _ = b.marker_global(ld.marker.marker)
        assert np.allclose(ld.point, p, atol=1e-12)
    assert np.allclose(drawn.residual(), loads.residual(), atol=1e-12)
    # the axial load keeps its size along the rod
    for a, d in zip(loads.loads, drawn.loads):
        assert np.linalg.norm(d.force) == pytest.approx(np.linalg.norm(a.force))


def test_peak_inertia_load(engine):
    m, r = engine
    values, unit = il.quantity(m, r, "Rod.inertia")
    assert unit == "N"
    for row in (0, 50, 175):
        inertia = il.loads_at(m, r, "Rod", row).of_kind("inertia")[0]
        assert values[row] == pytest.approx(np.linalg.norm(inertia.force), rel=1e-12)
    row = il.peak_row(m, r, "Rod.inertia")
    assert values[row] == values.max()
    with pytest.raises(KeyError, match="Ground.inertia"):
        il.quantity(m, r, f"{m.ground.name}.inertia")
