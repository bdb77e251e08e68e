"""The tracked vehicle example (issue 34's half tank): a hull on torsion-arm road wheels, a
driven sprocket, a tensioned idler and a support roller, the track of pinned shoes wrapped round
them and resting on flat ground (box - plane contacts), the wheels against the shoes (cylinder -
box contacts), all with friction.

The runs use rk4 at 2.5e-5 s: at 5e-5 s the friction's slope (mu N / v_s against a 6 kg shoe)
leaves the energy balance 1e-5 (at rest) to 2e-4 (driving) open, at 2.5e-5 s it closes to
1e-11. A 30-shoe track on two road wheels keeps the runs short."""

from __future__ import annotations

import math

import numpy as np
import pytest

from MultibodyWB.examples import build, tracked_vehicle as tv
from MultibodyWB.solver.analysis.start import prepare
from MultibodyWB.solver.elements.forces.contact import canonical, depths
from MultibodyWB.solver.maths.rotations import bryant_to_matrix
from MultibodyWB.solver.run.simulate import simulate

SHOES, ROAD_WHEELS, STEP = 30, 2, 2.5e-5
#: Sprocket speed (rad/s) reached with a time constant SPIN_UP (s).
SPEED, SPIN_UP = 1.6, 0.1


def _weight(model):
    return 9.81 * sum(b.mass for b in model.bodies)


def _depths(model):
    """Every contact's candidate points' depths (m) as drawn."""
    frames = {b.name: (bryant_to_matrix(b.orientation), np.asarray(b.position, dtype=float))
              for b in model.bodies}
    out = {}
    for c in model.contacts:
        pair = canonical(c)
        ends = []
        for ref in (pair.input, pair.output):
            R, p = frames.get(ref.body, (np.eye(3), np.zeros(3)))
            m = model.part(ref.body).marker(ref.marker).frame
            ends += [R @ bryant_to_matrix(m.orientation), p + R @ m.position]
        out[c.name] = depths(pair, *ends)
    return out


@pytest.mark.parametrize("shoes, road_wheels", [(36, 3), (SHOES, ROAD_WHEELS)])
def test_drawn_closed_and_touching_without_overlap(shoes, road_wheels):
    """Every chord is one pitch (the loop closes as drawn), no contact overlaps (depth <= 0 to
    round-off), every wheel touches the track, the shoes under the road wheels lie on the
    ground; the start check moves nothing."""
    pins = tv.track_pins(shoes, road_wheels)[0]
    chords = np.linalg.norm(np.roll(pins, -1, axis=0) - pins, axis=1)
    np.testing.assert_allclose(chords, tv.PITCH, rtol=1e-12)
    model = build("tracked_vehicle", shoes=shoes, road_wheels=road_wheels)
    d = _depths(model)
    assert max(v.max() for v in d.values()) <= 1e-12
    touching = {name.split("Shoe")[0] for name, v in d.items() if v.max() > -1e-9}
    wheels = {"Sprocket", "Idler", "Roller"} | {f"RoadWheel{i}" for i in range(road_wheels)}
    assert touching == wheels | {"Ground"}
    on_ground = [name for name, v in d.items() if name.startswith("Ground") and v.max() > -1e-9]
    assert len(on_ground) >= road_wheels + 1
    _, report = prepare(model)
    assert not report.moved


@pytest.fixture(scope="module")
def rest():
    model = build("tracked_vehicle", shoes=SHOES, road_wheels=ROAD_WHEELS)
    return model, simulate(model, t_end=0.4, step=STEP, output_step=1e-3)


@pytest.fixture(scope="module")
def drive():
    model = build("tracked_vehicle", shoes=SHOES, road_wheels=ROAD_WHEELS, speed=SPEED,
                  spin_up=SPIN_UP)
    return model, simulate(model, t_end=0.4, step=STEP, output_step=1e-3)


def _ground(res, model):
    return sum(res[f"GroundShoe{i}.Fn"] for i in range(SHOES))


def test_at_rest_the_ground_carries_the_whole_weight(rest):
    """Settled (0.4 s), the ground's normal forces on the shoes sum to the weight of every body
    (hull, wheels, arms, hub, roller and track) within 1e-3 over the last 50 ms (measured:
    2e-6), the hull held by the ground's friction (measured: 2.5 mm/s of creep at the end)."""
    model, res = rest
    last = res.time >= res.time[-1] - 0.05
    ratio = np.mean(_ground(res, model)[last]) / _weight(model)
    assert ratio == pytest.approx(1.0, abs=1e-3)
    # held: the hull creeps at a fraction of the stiction velocity
    assert math.hypot(res["Hull.vx"][-1], res["Hull.vz"][-1]) < 0.25 * tv.STICTION


def test_at_rest_the_wheels_carry_everything_but_the_track(rest):
    """The hull and what it carries touch nothing but the track (its planar hinge holds no
    vertical load): the shoes' vertical forces on the sprocket, idler, roller and road wheels
    sum to the weight of every body but the shoes (within 1e-3 over the last 50 ms; measured:
    1.4e-4); the road wheels carry more than all of it (measured: 9.04 kN of 7.62 kN), the
    track pulling the sprocket, the idler and the roller down (1.4 kN)."""
    model, res = rest
    last = res.time >= res.time[-1] - 0.05
    carried = 9.81 * sum(b.mass for b in model.bodies if not b.name.startswith("Shoe"))
    wheels = [c.name for c in model.contacts if not c.name.startswith("Ground")]
    total = np.mean(sum(res[f"{name}.Fz"] for name in wheels)[last])
    assert total == pytest.approx(carried, rel=1e-3)
    road = np.mean(sum(res[f"{name}.Fz"] for name in wheels
                       if name.startswith("RoadWheel"))[last])
    assert road > 0.5 * carried


def test_driving_the_hull_moves_with_the_track_less_the_ground_creep(drive):
    """Driven from rest, the hull moves forward at the speed the track circulates round it:
    the shoes on the ground creep by less than the stiction velocity (the regularised
    friction's bound on a held contact). The sprocket drives the track by friction alone (no
    teeth yet): it slips round the track while the vehicle speeds up. Measured over the last
    50 ms of 0.4 s: hull 0.180 m/s, track round the hull 0.179 m/s (0.7 % creep); the sprocket's
    pitch speed p w K / pi is 0.383 m/s: the track moves at 47 % of it."""
    model, res = drive
    last = res.time >= res.time[-1] - 0.05
    hull = np.mean(res["Hull.vx"][last])
    track = np.mean([np.hypot(res[f"Shoe{i}.vx"] - res["Hull.vx"],
                              res[f"Shoe{i}.vz"] - res["Hull.vz"])[last] for i in range(SHOES)])
    assert hull > 0.1
    assert abs(hull - track) < tv.STICTION


@pytest.mark.parametrize("case", ["rest", "drive"])
def test_the_energy_balance_closes(case, request):
    model, res = request.getfixturevalue(case)
    assert res.meta.get("untrusted", []) == []
    assert abs(res.energy_balance()["relative"]) < 1e-6
