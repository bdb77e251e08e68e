"""The start check weighs a contact drawn overlapping against every static load (issue 32): a
follower pressed onto its cam by its spring's preload, drawn at the depth that preload gives, is
in equilibrium and starts (it was refused for a force more than ten times the follower's
weight); a rocker pressed down by its hinge spring likewise; a real overlap is still refused,
and a load across the contact's direction excuses nothing."""

from __future__ import annotations

import math

import numpy as np
import pytest

from MultibodyWB.examples import cam_valve
from MultibodyWB.solver.model import ModelError, MultibodySystem
from MultibodyWB.solver.run.simulate import simulate

G = 9.81


def _valve(depth):
    """The cam-valve example at rest (the camshaft held), its follower drawn ``depth`` (m) into
    the cam; the contact force the start should give (N)."""
    m = cam_valve.build(rpm=1000.0)
    m.hinge("CamBearing").drivers[0].expression = "0"
    valve = m.body("Valve")
    valve.position[2] -= depth
    # the spring, drawn ``depth`` longer, pushes with its preload less k depth; two rim points
    return m, cam_valve.PRELOAD - cam_valve.SPRING_RATE * depth + valve.mass * G


def _equilibrium_depth():
    """The depth at which the cam's two rim points carry the spring and the weight."""
    k, d = cam_valve.CONTACT_STIFFNESS, 0.0
    for _ in range(50):
        d = (_valve(d)[1] / 2 / k) ** (1 / 1.5)
    return d


def test_preloaded_cam_follower_drawn_in_equilibrium_starts_at_rest():
    """At its preload's depth (some 10 um, more than the cylinder's 7 um of OVERLAP_SIZE; the
    force 13 times the follower's weight) it starts, and stays: the contact force is the
    preload plus the weight and the follower does not move."""
    d = _equilibrium_depth()
    assert d > 1e-3 * cam_valve.CAM_WIDTH / 2
    m, force = _valve(d)
    assert force > 10 * m.body("Valve").mass * G
    res = simulate(m, method="mstmm", integrator="rk4", t_end=2e-3, step=1e-5,
                   output_step=1e-4)
    np.testing.assert_allclose(res["CamContact.Fn"], force, rtol=1e-6)
    assert np.abs(res["Valve.vz"]).max() < 1e-6


@pytest.mark.parametrize("depth_mm", [0.05, 0.2])
def test_cam_follower_drawn_into_the_cam_is_refused(depth_mm):
    """Drawn 0.05 mm or 0.2 mm into the cam the contact pushes with 0.7 or 5.7 kN against the
    spring's 60 N: an overlap of the drawing, refused naming the contact and the depth."""
    m, _ = _valve(depth_mm * 1e-3)
    with pytest.raises(ModelError) as info:
        simulate(m, method="mstmm", integrator="rk4", t_end=1e-3, step=1e-5, output_step=1e-4)
    text = str(info.value)
    assert "Contact 'CamContact'" in text
    assert f"overlap by {depth_mm:g} mm" in text
    assert "more than ten times the static loads it balances" in text


def _rocker(depth, preload_torque, k=1e9, r=0.005, arm=0.1, mass=0.2):
    """A rocker on a revolute hinge about global y at the origin, a ball of radius ``r`` at its
    tip ``arm`` along x, drawn level with the ground plane ``depth`` into the ball; its hinge
    spring (100 N m/rad) turns it tip down with ``preload_torque`` (N m) as drawn."""
    m = MultibodySystem("Rocker", gravity=(0, 0, -G))
    g = m.set_ground()
    pivot = g.add_marker((0, 0, r), (-math.pi / 2, 0, 0))          # z along global y
    floor = g.add_marker((0, 0, depth))
    J = mass * arm * arm / 3
    b = m.add_body("Rocker", mass, [J / 100, J, J, 0, 0, 0], mass_center=(arm / 2, 0, 0),
                   position=(0, 0, r))
    hinge = b.add_marker((0, 0, 0), (-math.pi / 2, 0, 0))
    tip = b.add_marker((arm, 0, 0))
    kt = 100.0
    # +rz about global y turns the tip (+x) down; the spring's torque -kt (0 - ref)
    m.add_hinge("Pivot", "revolute", hinge, pivot, stiffness=[kt],
                spring_reference=[preload_torque / kt])
    m.add_contact("Tip", tip, floor, ("sphere", {"radius": r}), ("plane",), stiffness=k,
                  restitution=0.5)
    return m, k * depth ** 1.5


def test_rocker_pressed_by_its_hinge_spring_drawn_in_equilibrium_starts():
    """The hinge spring's torque and the weight's moment balance the contact's force at the
    arm (a torque, weighed on the hinge's coordinate): it starts at rest; without the spring's
    preload the same overlap (180 times the rocker's weight) is refused."""
    depth, arm, mass = 5e-5, 0.1, 0.2
    _, force = _rocker(depth, 0.0)
    torque = force * arm - mass * G * arm / 2
    m, _ = _rocker(depth, torque)
    res = simulate(m, method="mstmm", integrator="rk4", t_end=1e-3, step=1e-6,
                   output_step=1e-4)
    np.testing.assert_allclose(res["Tip.Fn"], force, rtol=1e-6)
    assert np.abs(res["Rocker.wy"]).max() < 1e-6
    m, _ = _rocker(depth, 0.0)
    with pytest.raises(ModelError) as info:
        simulate(m, method="mstmm", integrator="rk4", t_end=1e-3, step=1e-6, output_step=1e-4)
    assert "Contact 'Tip'" in str(info.value)
    assert "more than ten times the static loads it balances" in str(info.value)


def test_a_load_across_the_contact_excuses_no_overlap():
    """A free ball drawn 2 mm into the ground and pushed sideways by 10 kN: the push is no
    load the contact balances, refused; pushed down by the contact's force less its weight it
    is in equilibrium and starts at rest."""
    r, k, mass, depth = 0.05, 1e7, 1.0, 2e-3
    force = k * depth ** 1.5

    def ball(direction, push):
        m = MultibodySystem("Ball", gravity=(0, 0, -G))
        gm = m.set_ground().add_marker((0, 0, 0))
        J = 0.4 * mass * r * r
        b = m.add_body("Ball", mass, [J, J, J, 0, 0, 0], position=(0, 0, r - depth))
        bm = b.add_marker((0, 0, 0))
        m.add_hinge("Float", "free", bm, gm)
        m.add_contact("Hit", bm, gm, ("sphere", {"radius": r}), ("plane",), stiffness=k,
                      restitution=0.7)
        m.add_force("Push", "point_force", bm, direction=direction, magnitude=repr(push))
        return m

    with pytest.raises(ModelError) as info:
        simulate(ball((1, 0, 0), 1e4), method="mstmm", integrator="rk4", t_end=1e-4,
                 step=1e-6, output_step=1e-4)
    assert "Contact 'Hit'" in str(info.value) and "overlap by 2 mm" in str(info.value)
    res = simulate(ball((0, 0, -1), force - mass * G), method="mstmm", integrator="rk4",
                   t_end=1e-3, step=1e-6, output_step=1e-4)
    np.testing.assert_allclose(res["Hit.Fn"], force, rtol=1e-9)
    assert np.abs(res["Ball.vz"]).max() < 1e-9
