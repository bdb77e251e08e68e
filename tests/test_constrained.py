"""The global formulation (absolute coordinates, Lagrange multipliers) against the Riccati kernel,
hand solutions, finite differences of its own kinematics, and the energy balance.

The two formulations share only the model, the state layout and the time functions' values, so
agreement to round-off on random models with every hinge type checks both. Where they could both be
wrong the same way, the kinematics is checked against finite differences along a trajectory and the
dynamics against the energy balance ``dE/dt = 0`` of conservative models (third checks).
"""

import functools

import numpy as np
import pytest

from MultibodyWB.solver.methods.constrained import formulation as C
from MultibodyWB.solver.analysis.kinematics import (Pose, drawn_poses, hinge_residual, marker_pose,
                                            relative_pose)
from MultibodyWB.solver.model import HINGE_TYPES, Driver, MultibodySystem
from MultibodyWB.solver.maths.rotations import (bryant_to_matrix, inertia_tensor_to_vector,
                                           inertia_vector_to_tensor, parallel_axis,
                                           rotation_vector)
from MultibodyWB.solver.methods.mstmm.system import System
from MultibodyWB.solver.maths.rotations import quat_mul

from randmodels import (ALL_TYPES, QUATERNION_TYPES, random_coordinates, random_rotation,
                        random_state, random_tree)

TOL = 1e-10


def assert_close(a, b, tol=TOL, what=""):
    """``|a - b|_max <= tol * max(|a|_max, |b|_max, 1)`` (SI quantities of order one)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape, what
    scale = max(np.max(np.abs(a), initial=0.0), np.max(np.abs(b), initial=0.0), 1.0)
    err = np.max(np.abs(a - b), initial=0.0)
    assert err <= tol * scale, f"{what}: error {err:.3e} (scale {scale:.3e})"


def compare_with_riccati(system, t, y):
    """Everything the two formulations both compute, at (t, y)."""
    inst = system.instant(t, y)
    res = C.accelerations(system, t, y)
    for name in ("q", "u", "R", "pc", "hp", "w", "vh", "Wext"):
        assert_close(getattr(res, name), getattr(inst, name), what=name)
    assert_close(res.udot, inst.udot, what="udot")
    assert_close(res.x, inst.x, what="x")
    assert_close(res.Wh, inst.Wh, what="Wh")
    assert_close(res.hinge_loads, inst.tau, what="tau")
    assert_close(res.ydot, system.derivative(t, y), what="ydot")
    assert_close(C.derivative(system, t, y), res.ydot, tol=0.0, what="derivative")
    return res, inst


# --------------------------------------------------------------------------------------------------
# The random model generator
# --------------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def tree_case(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 13))
    model = random_tree(rng, n, chain=seed % 3 == 0, reverse=0.35, drivers=0.4)
    return model, System(model)


SEEDS = range(40)


@pytest.mark.parametrize("explicit", [False, True])
def test_random_tree_is_assembled(explicit):
    rng = np.random.default_rng(7)
    model = random_tree(rng, 18, explicit_coordinates=explicit, drivers=0.0)
    assert {h.type for h in model.hinges} == set(ALL_TYPES)
    for h in model.hinges:
        assert np.max(np.abs(hinge_residual(model, h))) < 1e-12, h.name
    # the initial state (coordinates given or measured as drawn) reproduces the drawn poses
    system = System(model)
    res = C.accelerations(system, 0.0, system.initial_state())
    for i, name in enumerate(system.bodies):
        body = model.body(name)
        assert_close(res.R[i], bryant_to_matrix(body.orientation), tol=1e-12)
        assert_close(res.pb[i], body.position, tol=1e-12)


def test_random_trees_cover_every_hinge_type_both_ways():
    seen, drivers = set(), 0
    for seed in SEEDS:
        model, system = tree_case(seed)
        for h in model.hinges:
            seen.add((h.type, system.topology.element(h.name).reversed))
            drivers += len(h.drivers)
        assert {f.type for f in model.forces} == {"point_force", "point_torque", "spring_damper",
                                                  "rotational_spring_damper"}
    assert seen == {(t, r) for t in ALL_TYPES for r in (False, True)}
    assert drivers >= 10


# --------------------------------------------------------------------------------------------------
# Against the Riccati kernel
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", SEEDS)
def test_random_tree_matches_riccati(seed):
    model, system = tree_case(seed)
    rng = np.random.default_rng(1000 + seed)
    for k in range(3):
        y = system.initial_state() if k == 0 else random_state(rng, system)
        compare_with_riccati(system, rng.uniform(0.0, 3.0), y)


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reversed"])
@pytest.mark.parametrize("hinge_type", ALL_TYPES)
def test_chain_of_one_type_matches_riccati(hinge_type, reverse):
    """A chain of four bodies, all hinges of one type, all forward or all reversed (the first one
    then has its Input on the ground)."""
    rng = np.random.default_rng(2 * ALL_TYPES.index(hinge_type) + int(reverse))
    model = random_tree(rng, 4, (hinge_type,), chain=True, reverse=float(reverse), drivers=0.5)
    system = System(model)
    assert len(system.topology.reversed_hinges) == (4 if reverse else 0)
    for k in range(3):
        y = system.initial_state() if k == 0 else random_state(rng, system, rates=2.0)
        compare_with_riccati(system, rng.uniform(0.0, 3.0), y)


def test_drivers_match_riccati():
    """Driver loads: the actuator's part plus the hinge's own spring and damper is what the kernel
    reports in ``tau`` for the driven coordinate."""
    rng = np.random.default_rng(3)
    model = random_tree(rng, 6, ("revolute", "prismatic", "cylindrical", "universal", "planar"),
                        drivers=1.0)
    system = System(model)
    assert len(system.drivers) == 6
    res, inst = compare_with_riccati(system, 0.7, random_state(rng, system))
    for k, (hname, coord, _) in enumerate(system.drivers):
        i = system.hinges.index(hname)
        j = system.tree.uo[i] + HINGE_TYPES[model.hinge(hname).type].coordinates.index(coord)
        assert_close(res.driver_loads[k] + res.tau[j], inst.tau[j])
        assert res.udot[j] == system.driver_values(0.7)[k, 2]


def test_reactions_are_the_multipliers():
    """reaction_on_input is Wh for a forward hinge and -Wh for a reversed one (same point), and
    reaction_on_output is its opposite moved to the output marker's origin."""
    model, system = tree_case(4)
    y = random_state(np.random.default_rng(0), system)
    res = C.accelerations(system, 0.3, y)
    inst = system.instant(0.3, y)
    poses = {name: Pose(res.R[i], res.pb[i]) for i, name in enumerate(system.bodies)}
    g = model.ground
    poses[g.name] = Pose(bryant_to_matrix(g.orientation), g.position)
    for i, hname in enumerate(system.hinges):
        h = model.hinge(hname)
        s = -1.0 if system.topology.element(hname).reversed else 1.0
        assert_close(res.reaction_on_input[i], s * inst.Wh[i])
        p_in = marker_pose(model, h.input, poses).p
        p_out = marker_pose(model, h.output, poses).p
        assert_close(res.hp[i], p_in)
        lam = res.reaction_on_input[i]
        assert_close(res.reaction_on_output[i][3:], -lam[3:])
        assert_close(res.reaction_on_output[i][:3], -lam[:3] - np.cross(p_in - p_out, lam[3:]))


# --------------------------------------------------------------------------------------------------
# Hand solutions
# --------------------------------------------------------------------------------------------------

def pendulum(theta, rate, reverse=False, driver=None, m=2.0, l=0.8, Ic=(0.05, 0.07, 0.09), g=9.81):
    """Revolute hinge about the global z axis at the origin, mass centre at (0, -l, 0) in the body
    frame (hanging down at theta = 0), gravity -g y."""
    model = MultibodySystem("pendulum")
    ground = model.set_ground()
    rc = np.array([0.0, -l, 0.0])
    body = model.add_body("Rod", m, inertia_tensor_to_vector(parallel_axis(np.diag(Ic), m, rc)), rc)
    gm, bm = ground.add_marker(), body.add_marker()
    inp, out = (gm, bm) if reverse else (bm, gm)
    h = model.add_hinge("J", "revolute", inp, out, initial_coordinates=[theta],
                        initial_rates=[rate])
    if driver:
        h.drivers.append(Driver("rz", driver))
    model.gravity = np.array([0.0, -g, 0.0])
    return System(model), m, l, Ic[2] + m * l * l, g


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("theta,rate", [(0.3, 0.0), (1.2, -2.0), (-2.5, 1.5)])
def test_pendulum(theta, rate, reverse):
    system, m, l, JO, g = pendulum(theta, rate, reverse)
    res, _ = compare_with_riccati(system, 0.0, system.initial_state())
    acc = -m * g * l * np.sin(theta) / JO
    assert res.udot[0] == pytest.approx(acc, rel=1e-12)
    # the body turns by -theta when the hinge is reversed (the ground turns relative to the body)
    phi, phid, phidd = (theta, rate, acc) if not reverse else (-theta, -rate, -acc)
    assert_close(res.alpha[0], [0.0, 0.0, phidd])
    r = np.array([l * np.sin(phi), -l * np.cos(phi), 0.0])           # O -> C
    a_c = np.cross([0.0, 0.0, phidd], r) - phid ** 2 * r
    assert_close(res.ac[0], a_c)
    force = m * a_c - m * np.array([0.0, -g, 0.0])                    # what the hinge supplies
    assert_close(res.Wh[0], np.concatenate([np.zeros(3), force]))
    lam = force if not reverse else -force                            # on the input body
    assert_close(res.reaction_on_input[0], np.concatenate([np.zeros(3), lam]))


def test_driven_pendulum_torque():
    system, m, l, JO, g = pendulum(0.0, 0.0, driver="0.5*sin(2*t)")
    for t in (0.0, 0.4, 1.3):
        res, _ = compare_with_riccati(system, t, system.initial_state())
        th, thdd = 0.5 * np.sin(2 * t), -2.0 * np.sin(2 * t)
        assert res.udot[0] == pytest.approx(thdd, abs=1e-14)
        assert res.driver_loads[0] == pytest.approx(JO * thdd + m * g * l * np.sin(th),
                                                    rel=1e-12, abs=1e-12)


def test_prismatic_spring_mass_damper_on_an_incline():
    """m s'' = m g.n - k (s - s_ref) - c s' along the slider axis n, whatever the body's shape."""
    model = MultibodySystem("slider")
    ground = model.set_ground()
    angles = np.array([0.4, -0.7, 0.2])
    n = bryant_to_matrix(angles)[:, 2]
    m, k, c, s_ref, s, sd = 1.7, 30.0, 0.8, 0.1, 0.35, -0.6
    rc = np.array([0.1, 0.2, -0.3])
    ji = inertia_tensor_to_vector(parallel_axis(np.diag([0.3, 0.4, 0.5]), m, rc))
    body = model.add_body("Block", m, ji, rc, orientation=angles)
    model.add_hinge("J", "prismatic", body.add_marker(), ground.add_marker(orientation=angles),
                    initial_coordinates=[s], initial_rates=[sd], stiffness=[k], damping=[c],
                    spring_reference=[s_ref])
    model.gravity = np.array([1.0, -9.81, 2.0])
    system = System(model)
    res, _ = compare_with_riccati(system, 0.0, system.initial_state())
    sdd = (m * model.gravity @ n - k * (s - s_ref) - c * sd) / m
    assert res.udot[0] == pytest.approx(sdd, rel=1e-12)
    assert_close(res.alpha[0], np.zeros(3))
    assert_close(res.ac[0], sdd * n)
    assert_close(res.Wh[0][3:], m * sdd * n - m * model.gravity)


def test_torque_free_body():
    """Free hinge, no gravity: a_C = 0 and J alpha = -w x J w (Euler's equations, global axes)."""
    model = MultibodySystem("spinner")
    ground = model.set_ground()
    rng = np.random.default_rng(11)
    Q = random_rotation(rng)
    J = Q @ np.diag([0.2, 0.5, 0.6]) @ Q.T
    rc = np.array([0.3, -0.1, 0.2])
    body = model.add_body("Top", 3.0, inertia_tensor_to_vector(parallel_axis(J, 3.0, rc)), rc,
                          position=[0.5, 0.2, -0.1], orientation=[0.3, 0.2, 0.1])
    body.initial_velocity = np.array([0.3, -0.2, 0.5])
    body.initial_angular_velocity = np.array([1.0, 4.0, -2.0])
    model.add_hinge("J", "free", body.add_marker([0.1, 0.2, 0.3], [0.5, 0.1, -0.4]),
                    ground.add_marker([-0.2, 0.1, 0.0], [0.2, -0.3, 0.1]))
    system = System(model)
    res, _ = compare_with_riccati(system, 0.0, system.initial_state())
    assert_close(res.w[0], body.initial_angular_velocity)
    w = res.w[0]
    JC = res.R[0] @ J @ res.R[0].T              # J: about the mass centre, body axes
    assert_close(res.ac[0], np.zeros(3))
    assert_close(JC @ res.alpha[0], -np.cross(w, JC @ w))
    assert_close(res.Wh[0], np.zeros(6))


# --------------------------------------------------------------------------------------------------
# Third checks: finite differences of the kinematics, energy balance
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("hinge_type", [t for t in ALL_TYPES if t not in QUATERNION_TYPES])
def test_hinge_local_against_finite_differences(hinge_type):
    """S gives the relative angular velocity and the offset rate, Sdot_u the rate of S u."""
    rng = np.random.default_rng(5)
    h = 1e-6
    for _ in range(5):
        q = random_coordinates(rng, hinge_type)
        u = rng.uniform(-2, 2, size=q.size)
        R, d, S, Sdot_u = C.hinge_local(hinge_type, q, u)
        Rr, dr = relative_pose(hinge_type, q)
        assert_close(R, Rr)
        assert_close(d, dr)
        Rp, dp = relative_pose(hinge_type, q + h * u)
        Rm, dm = relative_pose(hinge_type, q - h * u)
        assert_close(rotation_vector(Rp @ Rm.T) / (2 * h), S[:3] @ u, tol=1e-8)
        assert_close((dp - dm) / (2 * h), S[3:] @ u, tol=1e-8)
        Sp = C.hinge_local(hinge_type, q + h * u, u)[2]
        Sm = C.hinge_local(hinge_type, q - h * u, u)[2]
        assert_close((Sp - Sm) @ u / (2 * h), Sdot_u, tol=1e-8)


def _advance(system, y, ydot_u, h):
    """The state a time h later (to second order) when the velocity rates are ``ydot_u``:
    q + u h + udot h^2 / 2, quaternions turned by exp(w h + wdot h^2 / 2) in the output frame."""
    T = system.tree
    nq = system.nq_tot
    y2 = y.copy()
    u, ud = y[nq:], ydot_u
    y2[nq:] = u + h * ud
    for i, hname in enumerate(system.hinges):
        typ = system.model.hinge(hname).type
        qo, uo, k = T.qo[i], T.uo[i], T.nu[i]
        if typ in QUATERNION_TYPES:
            o = 0 if typ == "spherical" else 3
            y2[qo:qo + o] += h * u[uo:uo + o] + 0.5 * h * h * ud[uo:uo + o]
            phi = h * u[uo + o:uo + o + 3] + 0.5 * h * h * ud[uo + o:uo + o + 3]
            a = np.linalg.norm(phi)
            dq = np.concatenate([[np.cos(a / 2)], np.sinc(a / 2 / np.pi) * phi / 2])
            y2[qo + o:qo + o + 4] = quat_mul(dq, y[qo + o:qo + o + 4])
        else:
            y2[qo:qo + k] += h * u[uo:uo + k] + 0.5 * h * h * ud[uo:uo + k]
    return y2


@pytest.mark.parametrize("seed", range(6))
def test_kinematics_against_finite_differences(seed):
    """Along the trajectory through (t, y) with the computed udot, the body velocities are the
    derivatives of the poses and x the derivative of the velocities: checks the bias terms
    (Coriolis, moving offsets, the universal hinge's moving axis) without the kernel.
    Central differences with one Richardson step (error O(h^4))."""
    model, system = tree_case(seed)
    rng = np.random.default_rng(seed)
    y = random_state(rng, system)
    t = 0.5
    r0 = C.accelerations(system, t, y)
    r_body = np.einsum("nji,nj->ni", r0.R, r0.hp - r0.pc)     # C -> hp in body axes

    def v_pt(res):          # velocity of the material point that is at hp at time t
        return res.vc + np.cross(res.w, np.einsum("nij,nj->ni", res.R, r_body))

    def central(h):
        rp = C.accelerations(system, t + h, _advance(system, y, r0.udot, h))
        rm = C.accelerations(system, t - h, _advance(system, y, r0.udot, -h))
        return {"w": np.array([rotation_vector(a @ b.T) for a, b in zip(rp.R, rm.R)]) / (2 * h),
                "vc": (rp.pc - rm.pc) / (2 * h),
                "alpha": (rp.w - rm.w) / (2 * h),
                "ac": (rp.vc - rm.vc) / (2 * h),
                "a(hp)": (v_pt(rp) - v_pt(rm)) / (2 * h)}

    d1, d2 = central(2e-4), central(1e-4)
    exact = {"w": r0.w, "vc": r0.vc, "alpha": r0.alpha, "ac": r0.ac, "a(hp)": r0.x[:, 3:]}
    assert_close(v_pt(r0), r0.vh, what="v(hp)")
    assert_close(r0.x[:, :3], r0.alpha, tol=0.0)
    for name, value in exact.items():
        assert_close((4 * d2[name] - d1[name]) / 3, value, tol=1e-8, what=name)


def energy(system, t, y):
    """(kinetic, potential) energy of a model made by random_tree(conservative=True), J."""
    model = system.model
    res = C.accelerations(system, t, y)
    KE = E = 0.0
    for i, name in enumerate(system.bodies):
        b = model.body(name)
        JCl = parallel_axis(inertia_vector_to_tensor(b.inertia), -b.mass, b.mass_center.position)
        JC = res.R[i] @ JCl @ res.R[i].T
        KE += 0.5 * b.mass * res.vc[i] @ res.vc[i] + 0.5 * res.w[i] @ JC @ res.w[i]
        E -= b.mass * model.gravity @ res.pc[i]
    poses = {name: (res.R[i], res.pb[i]) for i, name in enumerate(system.bodies)}
    g = model.ground
    poses[g.name] = (bryant_to_matrix(g.orientation), g.position)

    def marker(ref):
        R, p = poses[ref.body]
        fr = model.part(ref.body).marker(ref.marker).frame
        return R @ fr.rotation, p + R @ fr.position

    for f in model.forces:
        if f.type == "point_force":
            assert f.frame == "global"
            E -= float(f.magnitude) * f.direction @ marker(f.input)[1]
        elif f.type == "spring_damper":
            assert f.damping == 0 and f.magnitude == "0"
            L0 = f.free_length
            if L0 is None:
                dp = drawn_poses(model)
                L0 = np.linalg.norm(marker_pose(model, f.input, dp).p
                                    - marker_pose(model, f.output, dp).p)
            L = np.linalg.norm(marker(f.input)[1] - marker(f.output)[1])
            E += 0.5 * f.stiffness * (L - L0) ** 2
        elif f.type == "rotational_spring_damper":
            assert f.damping == 0
            Ri, Ro = marker(f.input)[0], marker(f.output)[0]
            E += 0.5 * f.stiffness * np.sum(rotation_vector(Ro.T @ Ri) ** 2)
        else:
            raise AssertionError(f.type)
    T = system.tree
    for i, hname in enumerate(system.hinges):
        h = model.hinge(hname)
        if not HINGE_TYPES[h.type].dof:
            continue
        k = h.vector("stiffness")
        q = y[T.qo[i]:T.qo[i] + T.nq[i]]
        ref = h.vector("spring_reference")
        if h.type in QUATERNION_TYPES:
            o = 0 if h.type == "spherical" else 3
            E += 0.5 * np.sum(k[:o] * (q[:o] - ref[:o]) ** 2)
            assert np.all(k[o:] == k[-1])
            Rrel = C.quaternion_to_matrix(q[o:o + 4])
            Rref = bryant_to_matrix(ref[-3:]) if h.spring_reference is not None else np.eye(3)
            E += 0.5 * k[-1] * np.sum(rotation_vector(Rrel @ Rref.T) ** 2)
        else:
            E += 0.5 * np.sum(k * (q - ref) ** 2)
    return KE, E


def _rates(system, t, y, ydot, h=1e-5):
    """d(KE)/dt and d(PE)/dt along ydot (central differences)."""
    (kp, pp), (km, pm) = energy(system, t, y + h * ydot), energy(system, t, y - h * ydot)
    return (kp - km) / (2 * h), (pp - pm) / (2 * h)


@pytest.mark.parametrize("seed", range(8))
def test_energy_rate_is_zero_for_conservative_models(seed):
    """dE/dt = grad E . ydot = 0 (central difference along ydot), for both formulations: an
    independent check of the dynamics (mass matrix, gyroscopic and constraint terms)."""
    rng = np.random.default_rng(500 + seed)
    model = random_tree(rng, int(rng.integers(2, 9)), conservative=True, chain=seed % 2 == 0)
    system = System(model)
    y = random_state(rng, system)
    t = 0.0
    E = sum(energy(system, t, y))
    for ydot in (C.derivative(system, t, y), system.derivative(t, y)):
        dK, dP = _rates(system, t, y, ydot)
        assert abs(dK) > 1e-2                    # not trivially at rest
        assert abs(dK + dP) < 1e-7 * (abs(dK) + abs(dP) + abs(E)), (dK, dP)
    # a wrong acceleration would show
    bad = C.derivative(system, t, y)
    bad[system.nq_tot:] += 0.05 * rng.normal(size=system.nu_tot)
    dK, dP = _rates(system, t, y, bad)
    assert abs(dK + dP) > 1e-5 * (abs(dK) + abs(dP) + abs(E))


def test_energy_is_conserved_over_a_short_integration():
    rng = np.random.default_rng(42)
    model = random_tree(rng, 4, conservative=True)
    system = System(model)
    y = system.initial_state()
    E0 = sum(energy(system, 0.0, y))
    h = 2e-3
    quat = system.tree.quat
    for k in range(150):
        t = k * h
        k1 = C.derivative(system, t, y)
        k2 = C.derivative(system, t + h / 2, y + h / 2 * k1)
        k3 = C.derivative(system, t + h / 2, y + h / 2 * k2)
        k4 = C.derivative(system, t + h, y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        for o in quat:
            y[o:o + 4] /= np.linalg.norm(y[o:o + 4])
    E1 = sum(energy(system, 150 * h, y))
    assert abs(E1 - E0) < 1e-6 * max(abs(E0), 1.0)
