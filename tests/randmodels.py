"""Random multibody models for tests: assembled trees with every hinge type, loads and drivers.

:func:`random_tree` draws a tree (or a chain) of bodies joined by hinges of the given types, places
every child so that its hinge is satisfied at randomly drawn coordinates (the drawn configuration is
assembled: every :func:`~MultibodyWB.solver.analysis.kinematics.hinge_residual` is zero), and adds random
marker offsets and orientations, reversed hinges, mass properties, initial rates, hinge springs and
dampers, drivers, gravity and force elements. :func:`random_state` draws a state for a
:class:`~MultibodyWB.solver.methods.mstmm.system.System` of such a model. All drawing goes through the ``rng``
given (``numpy.random.Generator``), so a seed fixes the model.
"""

from __future__ import annotations

import numpy as np

from MultibodyWB.solver.analysis.kinematics import relative_pose
from MultibodyWB.solver.model import HINGE_TYPES, Driver, MultibodySystem
from MultibodyWB.solver.maths.rotations import (bryant_to_matrix, inertia_tensor_to_vector,
                                           matrix_to_bryant, parallel_axis)

ALL_TYPES = tuple(HINGE_TYPES)
QUATERNION_TYPES = ("spherical", "free", "bushing")
DRIVABLE_TYPES = tuple(t for t, k in HINGE_TYPES.items()
                       if "driver" in k.options and k.dof and t not in QUATERNION_TYPES)


def random_rotation(rng) -> np.ndarray:
    """A uniformly distributed rotation matrix."""
    q = rng.normal(size=4)
    w, x, y, z = q / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def random_angles(rng) -> np.ndarray:
    """Bryant angles of a random rotation."""
    return matrix_to_bryant(random_rotation(rng))


def random_coordinates(rng, hinge_type, scale=0.5) -> np.ndarray:
    """Hinge coordinates (m, rad): translations in (-scale, scale), ry in (-1.4, 1.4) (unique
    Bryant decomposition), other angles in (-pi, pi)."""
    q = []
    for c in HINGE_TYPES[hinge_type].coordinates:
        if c == "ry":
            q.append(rng.uniform(-1.4, 1.4))
        elif c.startswith("r"):
            q.append(rng.uniform(-3.0, 3.0))
        else:
            q.append(rng.uniform(-scale, scale))
    return np.array(q)


def random_inertia(rng, mass, center):
    """``JI`` about the base origin for a body whose mass centre is at ``center``."""
    a, b = rng.uniform(0.05, 0.3, size=2) * mass
    c = rng.uniform(abs(a - b) + 0.01 * mass, a + b - 0.01 * mass)
    Q = random_rotation(rng)
    J_C = Q @ np.diag([a, b, c]) @ Q.T
    return inertia_tensor_to_vector(parallel_axis(J_C, mass, center))


def _frame(rng, spread):
    return rng.uniform(-spread, spread, size=3), random_angles(rng)


def random_tree(rng, n_bodies, hinge_types=ALL_TYPES, *, chain=False, reverse=0.3,
                offsets=0.4, springs=True, dampers=True, drivers=0.3, rates=1.0, gravity=True,
                forces=True, ground_pose=True, explicit_coordinates=False, conservative=False,
                name="Random") -> MultibodySystem:
    """A random, assembled tree model.

    Parameters
    ----------
    rng : numpy.random.Generator
    n_bodies : int
    hinge_types : sequence of str
        Types to draw from; when ``n_bodies >= len(hinge_types)`` every one of them occurs.
    chain : bool
        Each body hangs from the one before (else from a random earlier body or the ground).
    reverse : float
        Probability that a hinge is reversed: its Input marker on the root-side part (e.g. the
        ground) and its Output marker on the new body.
    offsets : float
        Marker positions are drawn in (-offsets, offsets) m on each axis, orientations uniform.
    springs, dampers : bool
        Random hinge stiffness (with a random spring reference) and damping. Bushings always get
        stiffness.
    drivers : float
        Probability that a drivable hinge (scalar coordinates) gets one coordinate driven by
        ``A*sin(w*t + phi) + B``.
    rates : float
        Initial rates are drawn in (-rates, rates) (rad/s, m/s).
    gravity, forces : bool
        Random gravity; point forces and torques (global and marker frames, time-varying
        magnitudes), spring-dampers and rotational spring-dampers (some to the ground).
    ground_pose : bool
        Give the ground a random pose.
    explicit_coordinates : bool
        Store the drawn coordinates as the hinges' ``initial_coordinates`` (else "as drawn": the
        solver measures them from the assembled configuration).
    conservative : bool
        Only loads with a potential: no dampers, no drivers, the same stiffness about the three
        rotation axes of spherical, free and bushing hinges (their spring torque ``-k phi`` then
        has the potential ``k |phi|^2 / 2``), constant point forces in global axes, undamped
        spring-dampers without magnitude and undamped rotational springs (no point torques).

    Returns
    -------
    MultibodySystem
        Valid (``check()`` passes); bodies ``B1..Bn``, hinges ``J1..Jn`` (``Jk`` carries ``Bk``).
    """
    if conservative:
        dampers, drivers = False, 0.0
    m = MultibodySystem(name)
    g_pos, g_ang = _frame(rng, 0.5) if ground_pose else (np.zeros(3), np.zeros(3))
    ground = m.set_ground("Ground", g_pos, g_ang)
    if gravity:
        m.gravity = rng.normal(size=3) * 4.0
    types = []
    while len(types) < n_bodies:
        types += list(rng.permutation(list(hinge_types)))
    types = types[:n_bodies]
    parts = [ground]                     # index 0: ground
    poses = [(bryant_to_matrix(g_ang), g_pos)]
    for k in range(1, n_bodies + 1):
        typ = str(types[k - 1])
        kind = HINGE_TYPES[typ]
        par = k - 1 if chain else int(rng.integers(0, k))
        mass = rng.uniform(0.5, 2.0)
        center = rng.uniform(-0.3, 0.3, size=3)
        body = m.add_body(f"B{k}", mass, random_inertia(rng, mass, center), center)
        parts.append(body)
        # marker on the parent and on the child, random local frames
        pp, pa = _frame(rng, offsets)
        cp, ca = _frame(rng, offsets)
        ref_par = parts[par].add_marker(pp, pa)
        ref_child = body.add_marker(cp, ca)
        q = random_coordinates(rng, typ)
        Rrel, d = relative_pose(typ, q)
        Rp, p0 = poses[par]
        Rpm, ppm = Rp @ bryant_to_matrix(pa), p0 + Rp @ pp       # parent's marker, global
        rev = rng.uniform() < reverse
        if not rev:                      # parent's marker is the output marker A
            Rcm, pcm = Rpm @ Rrel, ppm + Rpm @ d
        else:                            # parent's marker is the input marker B
            Rcm = Rpm @ Rrel.T
            pcm = ppm - Rcm @ d
        Rb = Rcm @ bryant_to_matrix(ca).T
        pb = pcm - Rb @ cp
        body.position, body.orientation = pb, matrix_to_bryant(Rb)
        poses.append((bryant_to_matrix(body.orientation), pb))
        inp, out = (ref_par, ref_child) if rev else (ref_child, ref_par)
        kw = {}
        if kind.dof:
            kw["initial_rates"] = rng.uniform(-rates, rates, size=kind.dof)
            if explicit_coordinates:
                kw["initial_coordinates"] = q
            if springs or kind.elastic:
                lo = 5.0 if kind.elastic else 0.0
                kw["stiffness"] = rng.uniform(lo, lo + 5.0, size=kind.dof)
                if conservative and typ in QUATERNION_TYPES:
                    kw["stiffness"][-3:] = kw["stiffness"][-1]
                kw["spring_reference"] = random_coordinates(rng, typ, 0.2)
            if dampers:
                kw["damping"] = rng.uniform(0.0, 0.5, size=kind.dof)
        h = m.add_hinge(f"J{k}", typ, inp, out, **kw)
        if typ in DRIVABLE_TYPES and rng.uniform() < drivers:
            coord = str(rng.choice(kind.coordinates))
            A, w, phi, B = rng.uniform(0.1, 0.5), rng.uniform(0.5, 3), rng.uniform(0, 6), \
                rng.uniform(-0.3, 0.3)
            h.drivers.append(Driver(coord, f"{A:.6g}*sin({w:.6g}*t + {phi:.6g}) + {B:.6g}"))
    if forces:
        _add_forces(rng, m, parts, offsets, conservative)
    return m.check()


def _add_forces(rng, m, parts, offsets, conservative):
    bodies = parts[1:]
    n = len(bodies)

    def marker(part):
        return part.add_marker(*_frame(rng, offsets))

    for j in range(max(1, n // 2)):
        b = bodies[int(rng.integers(0, n))]
        if conservative:
            m.add_force(f"F{j}", "point_force", marker(b), direction=rng.normal(size=3),
                        magnitude=f"{rng.uniform(0.5, 3):.6g}")
            continue
        frame = "marker" if j % 2 else "global"
        m.add_force(f"F{j}", "point_force", marker(b), direction=rng.normal(size=3), frame=frame,
                    magnitude=f"{rng.uniform(0.5, 3):.6g}*cos({rng.uniform(0.5, 2):.6g}*t)")
        b = bodies[int(rng.integers(0, n))]
        m.add_force(f"T{j}", "point_torque", marker(b), direction=rng.normal(size=3),
                    frame="global" if j % 2 else "marker", magnitude=f"{rng.uniform(0.2, 1):.6g}")
    for j in range(max(1, n // 2)):
        i1 = int(rng.integers(1, len(parts)))
        i2 = int(rng.integers(0, len(parts) - 1))
        if i2 >= i1:
            i2 += 1
        free_length = None if j % 2 else rng.uniform(0.1, 1.0)
        m.add_force(f"S{j}", "spring_damper", marker(parts[i1]), marker(parts[i2]),
                    stiffness=rng.uniform(1, 20),
                    damping=0.0 if conservative else rng.uniform(0, 1),
                    free_length=free_length,
                    magnitude="0" if j % 2 or conservative else f"{rng.uniform(0.1, 1):.6g}*t")
        i1 = int(rng.integers(1, len(parts)))
        i2 = int(rng.integers(0, len(parts) - 1))
        if i2 >= i1:
            i2 += 1
        m.add_force(f"R{j}", "rotational_spring_damper", marker(parts[i1]), marker(parts[i2]),
                    stiffness=rng.uniform(0.5, 5),
                    damping=0.0 if conservative else rng.uniform(0, 0.5))


def random_state(rng, system, rates=1.0, translations=0.5) -> np.ndarray:
    """A random state ``y = [q; u]`` for a System: random coordinates (unit quaternions for the
    rotations of spherical, free and bushing hinges) and random rates in (-rates, rates)."""
    from MultibodyWB.solver.maths.rotations import bryant_to_quaternion
    T = system.tree
    y = np.zeros(system.ny)
    for i, hname in enumerate(system.hinges):
        typ = system.model.hinge(hname).type
        qo = T.qo[i]
        if typ == "spherical":
            y[qo:qo + 4] = bryant_to_quaternion(random_angles(rng))
        elif typ in ("free", "bushing"):
            y[qo:qo + 3] = rng.uniform(-translations, translations, size=3)
            y[qo + 3:qo + 7] = bryant_to_quaternion(random_angles(rng))
        else:
            y[qo:qo + T.nq[i]] = random_coordinates(rng, typ, translations)
    y[system.nq_tot:] = rng.uniform(-rates, rates, size=system.nu_tot)
    return y
