"""The issue-14 examples: the gear train's ratios and power flow, the cam-driven valve following its
eccentric at low speed and floating above the predicted speed, the balls in a box losing energy
only by what the contacts dissipate, the solids tumbling down a tilted plate (convex contacts)
coming to rest against its fence; and which methods run each of them."""

import numpy as np
import pytest

from MultibodyWB.examples import bouncing_balls, build, cam_valve, gear_train, tumbling_solids
from MultibodyWB.solver.model import ModelError
from MultibodyWB.solver.run.simulate import simulate

G = 9.81
EXAMPLES_14 = ("gear_train", "cam_valve", "bouncing_balls", "tumbling_solids")
#: methods that refuse an element of the example, with the element they name
REFUSED = {("gear_train", "newton-euler"): "Coupler 'Mesh1'"}


# --------------------------------------------------------------------------------------------------
# gear train
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["mstmm", "constrained"])
def test_gear_train_output_turns_at_the_product_of_the_ratios(method):
    """z = 12, 36, 24: the idler at -1/3 of the pinion's rate, the output at (-1/3)(-3/2) = +1/2
    (to 1e-9 of the rates and angles over the run); after the motor's ramp the brake's power
    c u3^2 is the motor's: drive torque c (1/2)^2 u1; the second mesh carries the brake torque."""
    assert gear_train.OVERALL_RATIO == pytest.approx(12 / 24, rel=1e-15)
    m = build("gear_train")
    kw = {} if method == "mstmm" else dict(t_end=0.15)
    res = simulate(m, method=method, integrator="rk4", **kw)
    u1, u2, u3 = (res[f"{n}Shaft.rz_rate"] for n in gear_train.NAMES)
    q1, q2, q3 = (res[f"{n}Shaft.rz"] for n in gear_train.NAMES)
    w = 1500.0 * 2 * np.pi / 60
    assert u1[-1] == pytest.approx(w, rel=1e-12)             # the motor is at speed
    assert np.abs(u3 - 0.5 * u1).max() <= 1e-9 * w
    assert np.abs(u2 - (-1 / 3) * u1).max() <= 1e-9 * w
    assert np.abs(q3 - 0.5 * q1).max() <= 1e-9 * np.abs(q1).max()
    assert np.abs(q1).max() > 10.0                           # turned several times
    steady = res.time > 0.1 + 1e-9                           # after the ramp
    assert steady.sum() > 10
    c = 2e-3
    np.testing.assert_allclose(res["PinionShaft.rz_drive"][steady], c * 0.25 * u1[steady],
                               rtol=1e-6)
    np.testing.assert_allclose(np.abs(res["Mesh2.T2"][steady]), c * np.abs(u3[steady]),
                               rtol=1e-6)
    e = np.abs(res["energy.residual"]).max()
    assert e < 1e-9 * np.abs(res["energy.work_drivers"]).max()


def test_gear_train_is_refused_by_newton_euler_naming_the_coupler():
    with pytest.raises(ModelError) as info:
        simulate(build("gear_train"), method="newton-euler", t_end=0.01, step=1e-5,
                 output_step=1e-3)
    assert REFUSED[("gear_train", "newton-euler")] in str(info.value)


@pytest.mark.parametrize("name", EXAMPLES_14)
@pytest.mark.parametrize("method", ["mstmm", "constrained", "newton-euler"])
def test_every_method_that_takes_the_example_runs_it(name, method):
    """A few milliseconds of each example with each method; a method that refuses one of its
    elements is skipped here (and its refusal is tested above)."""
    if (name, method) in REFUSED:
        pytest.skip(f"{method} refuses {REFUSED[(name, method)]}")
    step = 1e-6 if method == "newton-euler" else 1e-5
    res = simulate(build(name), method=method, integrator="rk4", t_end=0.004, step=step,
                   output_step=1e-3)
    assert res.time[-1] == pytest.approx(0.004)
    assert np.all(np.isfinite(res.data))


# --------------------------------------------------------------------------------------------------
# cam-driven valve
# --------------------------------------------------------------------------------------------------

def test_valve_follows_the_eccentric_at_low_speed():
    """300 rpm, two revolutions: the valve's lift is e (1 - cos theta) to the contact's depth
    (hundredths of a millimetre), the cam always pushes (Fn > 0 after the start), the full lift 2 e
    is reached and no stop is touched."""
    rpm = 300.0
    res = simulate(build("cam_valve", rpm=rpm))
    theta = rpm * 2 * np.pi / 60 * res.time
    z, fn, depth = res["Guide.z"], res["CamContact.Fn"], res["CamContact.depth"]
    e = cam_valve.ECCENTRICITY
    assert theta[-1] == pytest.approx(4 * np.pi)
    assert np.abs(z - cam_valve.lift(theta)).max() < 3e-5
    assert depth.max() < 3e-5
    assert fn[1:].min() > 0.0
    assert z.max() == pytest.approx(2 * e, abs=3e-5)
    assert np.all(res["Guide.z_stop"] == 0.0)
    # the contact force follows N = m s'' + F0 + k s + m g (to the ringing of the start)
    mass = cam_valve.follower_mass_properties().mass
    w = rpm * 2 * np.pi / 60
    s = cam_valve.lift(theta)
    expected = mass * e * w * w * np.cos(theta) + cam_valve.PRELOAD + cam_valve.SPRING_RATE * s \
        + mass * G
    later = res.time > 0.05
    np.testing.assert_allclose(fn[later], expected[later], rtol=0, atol=0.02 * expected.max())


def _float_run(factor):
    rpm = factor * cam_valve.float_speed()
    return simulate(build("cam_valve", rpm=rpm)), rpm


def test_valve_keeps_contact_just_below_its_float_speed():
    """5 % below the predicted float speed the cam still pushes at full lift, with about
    (1 - 0.95^2) of the static force there."""
    res, rpm = _float_run(0.95)
    fn = res["CamContact.Fn"][1:]
    mass = cam_valve.follower_mass_properties().mass
    static = cam_valve.PRELOAD + 2 * cam_valve.SPRING_RATE * cam_valve.ECCENTRICITY + mass * G
    assert fn.min() > 0.0
    assert fn.min() == pytest.approx((1 - 0.95 ** 2) * static, rel=0.1)


@pytest.mark.parametrize("factor", [1.05, 1.4])
def test_valve_floats_above_its_float_speed(factor):
    """Above the float speed (5 % and 40 %: about 5350 and 7130 rpm) the valve leaves the cam
    near full lift: Fn = 0 over a stretch of
    at least half a millisecond, the lift then exceeds the kinematic one (it overshoots) and the
    energy balance still closes."""
    res, rpm = _float_run(factor)
    theta = rpm * 2 * np.pi / 60 * res.time
    fn, z = res["CamContact.Fn"], res["Guide.z"]
    free = fn == 0.0
    free[0] = False                                          # drawn touching
    assert free.mean() > 0.1
    runs = np.diff(np.flatnonzero(np.diff(np.concatenate([[0], free.astype(int), [0]]))))[::2]
    assert runs.max() * (res.time[1] - res.time[0]) >= 5e-4
    assert (z - cam_valve.lift(theta)).max() > 1e-4
    assert (z - cam_valve.lift(theta)).min() > -0.01
    assert res["CamContact.depth"][free].max() < 0.0         # apart while Fn = 0
    assert np.abs(res["energy.residual"]).max() < 1e-3 * np.abs(res["energy.work_drivers"]).max()


# --------------------------------------------------------------------------------------------------
# balls in a box
# --------------------------------------------------------------------------------------------------

def test_balls_lose_energy_only_by_what_the_contacts_dissipate():
    """At the example's settings: the dissipated energy never decreases, the total energy never
    rises (beyond 1e-8 of the start energy per output step), the balance residual stays below
    1e-6 of the start energy; more than half the energy is gone after 1.5 s, many contacts
    (walls, floor and ball against ball) have acted and every ball stayed in the box."""
    m = build("bouncing_balls")
    res = simulate(m)
    assert res.meta["integrator"] == "DOP853" and res.time[-1] == pytest.approx(1.5)
    total, dissipated = res["energy.total"], res["energy.dissipated"]
    e0 = total[0]
    assert e0 > 1.0
    assert np.diff(dissipated).min() >= 0.0
    assert np.diff(total).max() < 1e-8 * e0
    assert np.abs(res["energy.residual"]).max() < 1e-6 * e0
    assert total[-1] < 0.5 * e0 and dissipated[-1] > 0.5 * e0
    acted = {c.name for c in m.contacts if res[f"{c.name}.Fn"].max() > 0.0}
    assert len(acted) >= 10
    assert any(c.output_shape.type == "sphere" for c in m.contacts if c.name in acted)
    half = bouncing_balls.BOX / 2
    for name, r, *_ in bouncing_balls.BALLS:
        assert res[f"{name}.z"].min() > 0.5 * r
        for axis in "xy":
            assert np.abs(res[f"{name}.{axis}"]).max() < half - 0.5 * r


def test_floating_valve_is_caught_by_its_upper_stop_at_high_speed():
    """At 9000 rpm the valve flies past the full lift 2 e into its upper stop (1 mm beyond),
    which throws it back (a force of kilonewtons, by its stiffness a fraction of a millimetre);
    at 1000 rpm no stop is touched."""
    e, margin = cam_valve.ECCENTRICITY, cam_valve.STOP_MARGIN
    res = simulate(build("cam_valve", rpm=9000.0))
    z, stop = res["Guide.z"], res["Guide.z_stop"]
    assert z.max() > 2 * e + margin
    assert z.max() < 2 * e + margin + 5e-4
    assert stop.min() < -1000.0 and stop.max() <= 0.0        # pushes down, off the upper stop
    hit = stop < 0
    assert np.all(z[hit] > 2 * e + margin)
    calm = simulate(build("cam_valve", rpm=1000.0))
    assert np.all(calm["Guide.z_stop"] == 0.0)


# --------------------------------------------------------------------------------------------------
# solids tumbling down a tilted plate (convex contacts)
# --------------------------------------------------------------------------------------------------

def test_tumbling_solids_come_to_rest_against_the_fence_losing_only_what_contacts_dissipate():
    """At the example's settings: the dissipated energy never decreases, the balance residual
    stays below 1e-5 of the energy dissipated; the solids hit the plate, the fence and each
    other, never sink into anything by more than half a millimetre, and end at rest on the plate
    against the fence, carrying their weight's share normal to the plate."""
    m = build("tumbling_solids")
    res = simulate(m)
    assert res.meta["integrator"] == "DOP853" and res.time[-1] == pytest.approx(3.0)
    dissipated = res["energy.dissipated"]
    assert np.diff(dissipated).min() >= 0.0 and dissipated[-1] > 0.01
    assert np.abs(res["energy.residual"]).max() < 1e-5 * dissipated[-1]
    acted = {c.name for c in m.contacts if res[f"{c.name}.Fn"].max() > 0.0}
    walls = {f"{n}{w}" for n in ("Egg", "Cone", "Prism") for w in ("Plate", "Fence")}
    assert walls <= acted
    assert acted - walls                                     # solid against solid
    for c in m.contacts:
        assert res[f"{c.name}.depth"].max() < 5e-4, c.name
    down, _, normal = tumbling_solids.plate_frame()
    props = tumbling_solids.mass_properties()
    for name in ("Egg", "Cone", "Prism"):
        p = np.array([res[f"{name}.{a}"][-1] for a in "xyz"])
        v = np.array([res[f"{name}.v{a}"][-1] for a in "xyz"])
        assert np.linalg.norm(v) < 1e-3, name
        assert tumbling_solids.FENCE - 0.04 < p @ down < tumbling_solids.FENCE, name
        assert 0.0 < p @ normal < 0.03, name                 # on the plate, not through it
        assert res[f"{name}Plate.Fn"][-1] > 0.0 and res[f"{name}Fence.Fn"][-1] > 0.0
    # at rest, the plate and the fence carry the weights (the solids lean on each other too)
    weight = 9.81 * sum(mass for mass, _, _ in props.values())
    along = sum(np.array([res[f"{c.name}.F{a}"][-1] for a in "xyz"]) for c in m.contacts
                if c.output_shape.type == "plane")
    np.testing.assert_allclose(along, [0.0, 0.0, weight], atol=2e-3 * weight)
