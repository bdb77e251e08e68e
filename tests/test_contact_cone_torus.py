"""Cones (frustums) and tori against a plane, used exactly (issue 14: "faces recognised as ...
cones and tori are used exactly"): the candidate points are the exact deepest points of the
cone's rims and of the torus's tube, against dense samples of the surfaces; a torus wheel rolls
down an incline at g sin / (1 + J / (m rho^2)); a cone stands on its base and lies on its side
with its weight carried where the moments say; file round trip and checks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from MultibodyWB.solver.elements.forces.contact import canonical, depths
from MultibodyWB.solver.maths.rotations import bryant_to_matrix
from MultibodyWB.solver.model import MultibodySystem, xmlio
from MultibodyWB.solver.model.mechanism import Contact, ContactShape, MarkerRef
from MultibodyWB.solver.model.problems import ModelError
from MultibodyWB.solver.run.simulate import simulate

G = 9.81


def _surface_samples(shape, n=400):
    """Points on the shape's surface, in its marker's frame (dense: the deepest is within
    about (2 pi r / n)^2 / r of the exact one)."""
    a = np.linspace(0, 2 * np.pi, n, endpoint=False)
    if shape.type == "cone":
        h = shape.length / 2
        zs = np.linspace(-h, h, 41)
        rs = shape.radius + (shape.radius2 - shape.radius) * (zs + h) / shape.length
        return np.vstack([np.column_stack([r * np.cos(a), r * np.sin(a), np.full(n, z)])
                          for r, z in zip(rs, zs)])
    R, r = shape.radius, shape.radius2
    u, v = np.meshgrid(a, a)
    return np.column_stack([((R + r * np.cos(v)) * np.cos(u)).ravel(),
                            ((R + r * np.cos(v)) * np.sin(u)).ravel(), (r * np.sin(v)).ravel()])


@pytest.mark.parametrize("shape", [ContactShape("cone", radius=0.05, radius2=0.02, length=0.08),
                                   ContactShape("cone", radius=0.04, radius2=0.0, length=0.1),
                                   ContactShape("torus", radius=0.06, radius2=0.015)])
def test_the_deepest_candidate_is_the_surfaces_deepest_point(shape):
    rng = np.random.default_rng(7)
    c = Contact("C", MarkerRef("B", 1), MarkerRef("Ground", 1), shape, ContactShape("plane"),
                stiffness=1.0)
    pair = canonical(c)
    pts = _surface_samples(shape)
    Ro, po = np.eye(3), np.zeros(3)
    for _ in range(25):
        Ri = bryant_to_matrix(rng.uniform(-np.pi, np.pi, 3))
        pi_ = np.array([0.01, -0.02, rng.uniform(-0.05, 0.02)])
        sampled = np.max(-(pi_[2] + pts @ Ri[2]))           # depth below z = 0
        got = depths(pair, Ri, pi_, Ro, po)
        assert got.max() >= sampled - 1e-12                  # never shallower than the samples
        assert got.max() == pytest.approx(sampled, abs=5e-5)  # and the samples' resolution


def test_torus_wheel_rolls_down_an_incline():
    """A solid torus (R, r) rolling on its tread: rho = R + r, J = m (R^2 + 3 r^2 / 4);
    a = g sin(theta) / (1 + J / (m rho^2))."""
    theta, R, r = math.radians(12), 0.08, 0.02
    m = MultibodySystem("Wheel", gravity=(G * math.sin(theta), 0, -G * math.cos(theta)))
    gm = m.set_ground().add_marker((0, 0, 0))
    mass = 1000.0 * 2 * math.pi ** 2 * R * r * r
    Jz = mass * (R * R + 0.75 * r * r)
    Jx = mass * (0.5 * R * R + 5 / 8 * r * r)
    k = 1e7
    depth = (mass * G * math.cos(theta) / k) ** (1 / 1.5)
    rho = R + r
    b = m.add_body("Wheel", mass, [Jx, Jz, Jx, 0, 0, 0], position=(0, 0, rho - depth))
    bm = b.add_marker((0, 0, 0), (-math.pi / 2, 0, 0))        # the torus's axis along global y
    m.add_hinge("Float", "free", b.add_marker((0, 0, 0)), gm)
    m.add_contact("Road", bm, gm, ("torus", {"radius": R, "radius2": r}), ("plane",),
                  stiffness=k, restitution=0.5, static_friction=0.8, dynamic_friction=0.6,
                  stiction_velocity=1e-3)
    res = simulate(m, method="mstmm", integrator="rk4", t_end=0.5, step=2e-6, output_step=1e-2)
    t, vx = res.time, res["Wheel.vx"]
    i, j = np.searchsorted(t, 0.1), np.searchsorted(t, 0.5)
    a = (vx[j] - vx[i]) / (t[j] - t[i])
    assert a == pytest.approx(G * math.sin(theta) / (1 + Jz / (mass * rho * rho)), rel=1e-3)
    assert res["Wheel.wy"][j] * rho == pytest.approx(vx[j], rel=1e-3)
    assert res["Road.z"][j] == pytest.approx(-depth / 2, abs=1e-5)     # on the tread's bottom


def _cone_on_ground(orientation, position, r1=0.04, length=0.1, k=1e8):
    """A pointed steel cone (base radius r1 at the marker's -z end) on the ground plane."""
    m = MultibodySystem("Cone", gravity=(0, 0, -G))
    gm = m.set_ground().add_marker((0, 0, 0))
    mass = 7850.0 * math.pi * r1 * r1 * length / 3
    zc = -length / 2 + length / 4                           # mass centre: a quarter up
    Ja = 0.3 * mass * r1 * r1
    Jt = mass * (3 / 20 * r1 * r1 + 3 / 80 * length * length) + mass * zc * zc
    b = m.add_body("Cone", mass, [Jt, Jt, Ja, 0, 0, 0], mass_center=(0, 0, zc),
                   position=position, orientation=orientation)
    bm = b.add_marker((0, 0, 0))
    m.add_hinge("Float", "free", bm, gm)
    m.add_contact("Floor", bm, gm, ("cone", {"radius": r1, "radius2": 0.0, "length": length}),
                  ("plane",), stiffness=k, restitution=0.3, static_friction=0.5,
                  dynamic_friction=0.4)
    return m, mass, zc


def test_cone_stands_on_its_base_on_three_rim_points():
    m, mass, _ = _cone_on_ground((0, 0, 0), (0, 0, 0.05))
    k = 1e8
    d = (mass * G / 3 / k) ** (1 / 1.5)                    # three rim points share the weight
    m.bodies[0].position[2] = 0.05 - d
    res = simulate(m, method="mstmm", integrator="rk4", t_end=0.05, step=1e-5,
                   output_step=5e-3)
    assert res["Floor.Fn"][-1] == pytest.approx(mass * G, rel=1e-4)
    assert res["Cone.z"][-1] == pytest.approx(0.05 - d, abs=1e-8)
    assert abs(res["Cone.a"][-1]) < 1e-9 and abs(res["Cone.b"][-1]) < 1e-9    # upright


def test_cone_lying_on_its_side_carries_its_weight_at_the_mass_centre():
    """On its side, a cone touches along a line from the apex to the base rim: the two
    candidate points there (apex, base rim) carry the weight, their centre under the mass
    centre (moment balance)."""
    r1, L = 0.04, 0.1
    half = math.atan(r1 / L)                                # half the apex angle
    # the axis a half apex angle below the horizontal: the lowest slant line lies flat
    orient = (0.0, math.pi / 2 + half, 0.0)          # the apex down: apex to rim level
    m, mass, zc = _cone_on_ground(orient, (0, 0, 0.0), r1, L)
    Rb = bryant_to_matrix(orient)
    low = min((Rb @ np.array([0, 0, L / 2]))[2],
              (Rb @ np.array([r1, 0, -L / 2]))[2], (Rb @ np.array([-r1, 0, -L / 2]))[2])
    m.bodies[0].position[2] = -low
    # placed touching: it sinks to its depth (the damping makes that slow: 0.06 s a decade)
    res = simulate(m, method="mstmm", integrator="rk4", t_end=0.6, step=1e-5, output_step=5e-2)
    assert res["Floor.Fn"][-1] == pytest.approx(mass * G, rel=1e-3)
    # the normal forces' centre is under the mass centre
    pc = res.position("Cone")[-1] + bryant_to_matrix(
        [res["Cone.a"][-1], res["Cone.b"][-1], res["Cone.c"][-1]]) @ np.array([0, 0, zc])
    assert res["Floor.x"][-1] == pytest.approx(pc[0], abs=2e-4)
    assert abs(res["Cone.vx"][-1]) < 1e-3 and abs(res["Cone.vz"][-1]) < 1e-3


def test_cone_and_torus_file_round_trip_and_checks(tmp_path):
    m, _, _ = _cone_on_ground((0, 0, 0), (0, 0, 0.05))
    gm = m.grounds[0].markers[0]
    w = m.add_body("Ring", 1.0, [1, 1, 1, 0, 0, 0], position=(0.5, 0, 0.1))
    wm = w.add_marker((0, 0, 0))
    m.add_hinge("Float2", "free", wm, MarkerRef("Ground", gm.id))
    m.add_contact("Tread", wm, MarkerRef("Ground", gm.id),
                  ("torus", {"radius": 0.08, "radius2": 0.02}), ("plane",), stiffness=1e6)
    xmlio.write(m, tmp_path / "m.mbs.xml")
    text = (tmp_path / "m.mbs.xml").read_text()
    assert '<InputShape Type="cone" Radius="0.04" Radius2="0" Length="0.1"/>' in text
    assert '<InputShape Type="torus" Radius="0.08" Radius2="0.02"/>' in text
    back = xmlio.read(tmp_path / "m.mbs.xml")
    assert back.contacts[1].input_shape == m.contacts[1].input_shape
    m.contacts[0].input_shape.radius = 0.0
    m.contacts[1].input_shape.radius2 = 0.09
    with pytest.raises(ModelError) as e:
        m.check()
    text = str(e.value)
    assert "Contact 'Floor', field InputShape" in text and "not both 0" in text
    assert "Contact 'Tread', field InputShape" in text and "below its Radius" in text
