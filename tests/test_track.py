"""The track example (issue 34's first step): 20 pinned shoes wrapped round a driven sprocket
and a braked idler on its tensioner, the shoes touching the wheels through cylinder - box
contacts with friction. Gravity off, so that the balances are exact: the idler's tensioner
holds both spans, the brake's torque is what the tension difference carries, and the track
moves at the sprocket's pitch speed."""

from __future__ import annotations

import math

import numpy as np
import pytest

from MultibodyWB.examples import build, track
from MultibodyWB.solver.elements.forces.contact import canonical, depths
from MultibodyWB.solver.maths.rotations import bryant_to_matrix
from MultibodyWB.solver.run.simulate import simulate

K, M, SPEED, BRAKE = 6, 4, 2.0, 50.0
#: One pitch's time at the sprocket: 2 K pitches a turn.
PITCH_TIME = math.pi / (K * SPEED)
SETTLE = 0.1


def test_the_drawn_track_closes_and_touches_its_wheels_without_overlap():
    """Every chord is one pitch; the shoes on the arcs touch their wheel (depth 0 to
    round-off), none overlaps it."""
    p = track.pins(K, M)
    chords = np.linalg.norm(np.roll(p, -1, axis=0) - p, axis=1)
    np.testing.assert_allclose(chords, track.PITCH, rtol=1e-12)
    model = build("track")
    frames = {}
    for b in model.bodies:
        frames[b.name] = (bryant_to_matrix(b.orientation), np.asarray(b.position, dtype=float))
    touching = 0
    for c in model.contacts:
        pair = canonical(c)
        Rw, pw = frames[c.input.body]
        Rs, ps = frames[c.output.body]
        mi = model.part(c.input.body).marker(c.input.marker).frame
        mo = model.part(c.output.body).marker(c.output.marker).frame
        Ri, Ro = Rw @ bryant_to_matrix(mi.orientation), Rs @ bryant_to_matrix(mo.orientation)
        d = depths(pair, Ri, pw + Rw @ mi.position, Ro, ps + Rs @ mo.position)
        assert d.max() <= 1e-12, c.name
        touching += d.max() > -1e-9
    assert touching == 2 * K          # the shoes on the two arcs


@pytest.fixture(scope="module")
def run():
    model = build("track", k=K, m=M, speed=SPEED, idler_brake=BRAKE, gravity=(0, 0, 0))
    res = simulate(model, t_end=SETTLE + PITCH_TIME, step=1e-5, output_step=1e-3)
    last = res.time >= SETTLE - 1e-9
    last[-1] = False                   # one pitch period: the chordal action averages out
    return res, last


def test_the_track_moves_at_the_sprockets_pitch_speed(run):
    """``2 K`` pitches a turn: the shoes' mean speed is ``K p w / pi`` (0.29 % measured: the
    friction drive's creep)."""
    res, last = run
    speed = np.mean([np.hypot(res[f"Shoe{i}.vx"], res[f"Shoe{i}.vz"])[last]
                     for i in range(2 * K + 2 * M)])
    assert speed == pytest.approx(K * track.PITCH * SPEED / math.pi, rel=1e-2)


def test_the_tensioner_holds_both_spans_and_the_brake_is_the_tension_difference(run):
    """Along the tensioner, the idler and its arc balance the spring against both spans'
    tensions (their sum within 2 %: 0.4 % measured); round each wheel the tension difference
    times the pins' radius is the torque: the drive's, less the sprocket's contact losses, is
    it; it is the brake's plus the idler's contact losses (measured: drive 113.7, tension
    difference 106.6, brake 100.4 N m)."""
    res, last = run
    lower = -np.mean(res["Pin2.Fx"][last])          # the pins' reactions along the spans
    upper = np.mean(res["Pin12.Fx"][last])
    assert lower > upper > 0.4 * track.TENSIONER_PRELOAD
    z, rate = res["Tensioner.z"][last], res["Tensioner.z_rate"][last]
    spring = np.mean(track.TENSIONER_PRELOAD - track.TENSIONER_K * z - track.TENSIONER_C * rate)
    assert lower + upper == pytest.approx(spring, rel=2e-2)
    carried = (lower - upper) * track.pin_radius(K)
    drive = np.mean(res["SprocketAxle.rz_drive"][last])
    brake = BRAKE * np.mean(np.abs(res["IdlerAxle.rz_rate"][last]))
    assert drive > carried > brake > 0.0
    assert carried == pytest.approx(brake, rel=0.1)


def test_the_energy_balance_closes(run):
    res, _ = run
    assert res.meta.get("untrusted", []) == []
    assert abs(res.energy_balance()["relative"]) < 1e-6
