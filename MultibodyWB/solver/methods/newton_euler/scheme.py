"""The Newton-Euler method's scheme: :class:`NewtonEuler` builds the compiled arrays of a model
(bodies in their central principal frames, joints, drivers, loads), assembles the start and steps
in chunks of :func:`.kernels.ne_run` (the method: :mod:`.`)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from numba import njit

from ...analysis.kinematics import (Pose, coordinate_slices, drawn_distance_of, drawn_poses,
                                    forward_kinematics, hinge_coordinates, initial_coordinates,
                                    loop_jacobian, loop_residual, motion_subspace, twist_jacobian)
from ...analysis.topology import Topology, analyse
from ...elements import forces
from ...elements.hinges import HINGE_TYPES, QUATERNION_TYPES, SIX_DOF_TYPES
from ...maths.rotations import (bryant_to_matrix, bryant_to_quaternion, inertia_vector_to_tensor,
                                parallel_axis)
from ...model.mechanism import MultibodySystem
from ...model.problems import ModelError, Problem
from ...model.timefunction import parse
from ..shared.instant import Instant, marker_attachment
from .kernels import (_BLOCKED, _KIND_OF, L_A, L_AL, L_CL, L_FA, L_LEN, L_Q, L_R,
                      L_TA, L_TAU, L_U, L_UD, L_V, L_W, L_WH, L_X, R_AXIS, R_CROSS, R_FULL,
                      R_NONE, U_ROTV, U_TRANS, Bodies, Joints, Layout, State, Work, ne_run)

#: Default natural frequency of the joints as a fraction of the step's Nyquist limit pi/h.
JOINT_FRACTION = 0.1
#: Default damping ratio of the joints (critical).
JOINT_DAMPING_RATIO = 1.0
#: Steps between re-orthonormalisations of the rotation matrices.
ORTHO_EVERY = 64
#: Steps between unwrappings of the angles of hinges without spring or driver (their angles may
#: turn by less than pi in that many steps: 78000 rad/s at h = 1e-5 s).
TRACK_EVERY = 4
#: Steps between refreshes of the joints' effective masses (they change with the bodies'
#: orientations only, by about |w| h per step).
REFRESH_EVERY = 16


# --------------------------------------------------------------------------------------------------
# assembly
# --------------------------------------------------------------------------------------------------

def _ints(v):
    return np.array(v, dtype=np.int64)


def _floats(v, shape):
    return np.array(v, dtype=float).reshape((len(v),) + shape)


class NewtonEuler:
    """A model assembled for the discrete-time Newton-Euler method.

    Parameters
    ----------
    model : MultibodySystem
        A valid model: any topology (trees, closed loops, bodies not connected to the ground).
    step : float
        The step h (s) the joints' default stiffness is made for (1e-5 to 1e-7 s).
    joint_fraction : float, optional
        Natural frequency of the joints as a fraction of the Nyquist limit pi/h
        (default :data:`JOINT_FRACTION`).
    joint_frequency : float, optional
        The joints' natural frequency in Hz instead (independent of the step).
    joint_damping_ratio : float, optional
        Damping ratio of the joints (default 1, critical).
    topology : Topology, optional

    The attributes ``model``, ``index``, ``hinges``, ``tree`` (a :data:`Layout`), ``forces`` and
    :meth:`instant` are what :class:`~.recorder.Recorder` reads: results come out in the same
    columns as the other methods'. ``hinges`` lists every hinge (tree, cut, elastic closures and
    hinges among bodies not connected to the ground), the state ``y = [q; u]`` the hinge
    coordinates and rates in the layout of :mod:`.system` (quaternions for spherical, free,
    bushing), measured from the bodies. In the :class:`~.system.Instant` of this method the
    point ``hp`` of a body is its mass centre (``vh`` its velocity, ``x = [alpha; a]`` there) and
    ``Wh`` has one row per hinge of ``hinges``: the wrench ``[torque; force]`` the hinge applies
    on its input body at its input marker's origin (``Wcut`` is empty: cut hinges are in ``Wh``).

    Use :func:`run` (or ``simulate(model, method="newton-euler")``) for a whole run; by hand::

        ne = NewtonEuler(model, 1e-5)
        rows = ne.advance(1000, every=100)       # compiled steps; rows of the states on the way
        inst = ne.instant(ne.t)                   # the Instant of the current state
    """

    def __init__(self, model: MultibodySystem, step: float = 1e-5, joint_fraction=None,
                 joint_frequency=None, joint_damping_ratio=None,
                 topology: Topology | None = None):
        model.check()
        if model.couplers:
            raise ModelError([Problem(f"Coupler '{c.name}'", "Type", "the newton-euler method "
                                      "takes no couplers (its joints are penalty springs, a "
                                      "coupler must hold exactly): use the method mstmm or "
                                      "constrained") for c in model.couplers])
        self.model = model
        self.topology = topo = topology or analyse(model)
        self.step = float(step)
        if not (math.isfinite(self.step) and self.step > 0):
            raise ValueError(f"step {step!r}: must be a positive number")
        self.bodies = list(topo.bodies) + list(topo.islands)
        self.index = {b: i for i, b in enumerate(self.bodies)}
        unused = [h for h in topo.unused_hinges
                  if model.hinge(h).input.body != model.hinge(h).output.body]
        self.hinges = ([topo.parent_hinge[b] for b in topo.bodies] + list(topo.cut_hinges)
                       + list(topo.elastic_closures) + unused)
        self._build_bodies()
        self._build_joints()
        self._build_loads()
        self.set_joint_parameters(joint_fraction, joint_frequency, joint_damping_ratio)
        self._build_work()
        self.compile_time_functions = False      # see COMPILE_SAMPLES
        self._compiled = {}
        self.reset()

    # -- assembly -----------------------------------------------------------------------------
    def _build_bodies(self):
        n = len(self.bodies)
        self.mass = np.zeros(n)
        self.rc = np.zeros((n, 3))
        self.JCl = np.zeros((n, 3, 3))
        self.P = np.zeros((n, 3, 3))
        Jd = np.zeros((n, 3))
        for i, name in enumerate(self.bodies):
            b = self.model.body(name)
            self.mass[i] = b.mass
            self.rc[i] = b.mass_center.position
            J = parallel_axis(inertia_vector_to_tensor(b.inertia), -b.mass, self.rc[i])
            self.JCl[i] = J
            vals, vecs = np.linalg.eigh(0.5 * (J + J.T))
            if np.linalg.det(vecs) < 0:
                vecs[:, 2] = -vecs[:, 2]
            if vals[0] <= 0:
                raise ModelError([Problem(f"RigidBody '{name}'", "JI",
                                          "the inertia about the mass centre is not positive "
                                          "definite")])
            Jd[i] = vals
            self.P[i] = vecs
        self.Bd = Bodies(self.mass.copy(), Jd, 1.0 / Jd if n else Jd.copy())

    def _kmarker(self, ref):
        """(body index or -1, R, p): the marker in its body's central principal frame (the
        ground's in global axes)."""
        i, Rl, pl = self._bmarker(ref)
        if i < 0:
            return i, Rl, pl
        return i, self.P[i].T @ Rl, self.P[i].T @ (pl - self.rc[i])

    def _bmarker(self, ref):
        """(body index or -1, R, p): the marker in its body's base frame (ground: global)."""
        return marker_attachment(self.model, self.index, ref)

    def _build_joints(self):
        model = self.model
        cols = {k: [] for k in ("bi", "bo", "Ri", "pi", "Ro", "po", "tmask", "rmode", "qo", "uo",
                                "nq", "nu", "hspring", "quat", "hRref")}
        per_u = {k: [] for k in ("ukind", "uaxis", "uq", "uj", "hk", "hc", "href")}
        self.drivers = []              # (hinge, coordinate, TimeFunction)
        drv_u, drv_j = [], []
        problems = []
        qo = uo = 0
        for j, name in enumerate(self.hinges):
            h = model.hinge(name)
            kind = HINGE_TYPES[h.type]
            bi, Ri, pi = self._kmarker(h.input)
            bo, Ro, po = self._kmarker(h.output)
            tmask, rmode = _BLOCKED[h.type]
            quat = h.type in QUATERNION_TYPES
            if h.type == "spherical":
                nq, nu = 4, 3
            elif quat:
                nq, nu = 7, 6
            else:
                nq = nu = kind.dof
            for key, val in (("bi", bi), ("bo", bo), ("Ri", Ri), ("pi", pi), ("Ro", Ro),
                             ("po", po), ("tmask", tmask), ("rmode", rmode), ("qo", qo),
                             ("uo", uo), ("nq", nq), ("nu", nu), ("quat", int(quat))):
                cols[key].append(val)
            hk, hc = h.vector("stiffness"), h.vector("damping")
            ref = h.vector("spring_reference")
            cols["hRref"].append(bryant_to_matrix(ref[-3:]) if quat and h.spring_reference
                                 is not None else np.eye(3))
            cols["hspring"].append(int(np.any(hk != 0.0) or np.any(hc != 0.0)))
            if h.type == "spherical":
                kinds = [(U_ROTV, a, -1) for a in range(3)]
            elif quat:
                kinds = [(U_TRANS, a, qo + a) for a in range(3)] + [(U_ROTV, a, -1)
                                                                    for a in range(3)]
            else:
                kinds = [_KIND_OF[c] + (qo + c_i,) for c_i, c in enumerate(kind.coordinates)]
            for c_i, (kd, ax, iq) in enumerate(kinds):
                per_u["ukind"].append(kd)
                per_u["uaxis"].append(ax)
                per_u["uq"].append(iq)
                per_u["uj"].append(j)
                per_u["hk"].append(hk[c_i] if c_i < hk.size else 0.0)
                per_u["hc"].append(hc[c_i] if c_i < hc.size else 0.0)
                per_u["href"].append(ref[c_i] if (kd == U_TRANS or not quat) and c_i < ref.size
                                     else 0.0)
            for d in h.drivers:
                if quat:
                    problems.append(Problem(f"Hinge '{h.name}'", "Driver",
                                            f"a {h.type} hinge cannot be driven"))
                    continue
                c_i = kind.coordinates.index(d.coordinate)
                drv_u.append(uo + c_i)
                drv_j.append(j)
                self.drivers.append((h.name, d.coordinate,
                                     parse(d.expression, f"Hinge '{h.name}'", "Driver")))
            qo += nq
            uo += nu
        if problems:
            raise ModelError(problems)
        self.nq_tot, self.nu_tot = qo, uo
        nh = len(self.hinges)
        ukind = _ints(per_u["ukind"])
        # bit 1: the hinge has a spring or damper; bit 2: its angles are tracked every step
        hflag = _ints(cols["hspring"])
        hflag = hflag | (2 * (hflag | np.isin(np.arange(nh), drv_j))).astype(np.int64)
        self.Jt = Joints(
            _ints(cols["bi"]), _ints(cols["bo"]), _floats(cols["Ri"], (3, 3)),
            _floats(cols["pi"], (3,)), _floats(cols["Ro"], (3, 3)), _floats(cols["po"], (3,)),
            np.zeros(nh), np.zeros(nh),
            _ints(cols["tmask"]).reshape(nh, 3), _ints(cols["rmode"]), _ints(cols["qo"]),
            _ints(cols["uo"]), _ints(cols["nu"]), _ints(cols["hspring"]), ukind,
            _ints(per_u["uaxis"]), _ints(per_u["uq"]), _ints(per_u["uj"]),
            _floats(per_u["hk"], ()), _floats(per_u["hc"], ()), _floats(per_u["href"], ()),
            _floats(cols["hRref"], (3, 3)), _ints(cols["quat"]), _ints(drv_u), _ints(drv_j),
            np.arange(len(drv_u), dtype=np.int64), hflag)
        self.tree = Layout(self.Jt.qo, self.Jt.uo, _ints(cols["nq"]), self.Jt.nu, np.ones(nh),
                           self.Jt.hk, self.Jt.hc, self.Jt.href, self.Jt.hRref, self.mass,
                           self.JCl)

    def _build_loads(self):
        model = self.model
        self.magnitudes = []

        def magnitude(f):
            text = f.magnitude
            if text.strip() in ("", "0"):
                return -1
            self.magnitudes.append(parse(text, f"Force '{f.name}'", "Magnitude"))
            return len(self.magnitudes) - 1

        index = {}

        def once(f):                   # one magnitude index for both structs
            if id(f) not in index:
                index[id(f)] = magnitude(f)
            return index[id(f)]

        distance = drawn_distance_of(model)
        # the kernel's markers in the bodies' central principal frames, the Recorder's in their
        # base frames
        self.Ld = forces.pack(model, self._kmarker, once, distance)
        self.forces = forces.pack(model, self._bmarker, once, distance)

    def set_joint_parameters(self, fraction=None, frequency=None, damping_ratio=None):
        """The joints' natural frequency and damping (see the module docstring).

        ``fraction`` of the Nyquist limit pi/h (default :data:`JOINT_FRACTION`), or
        ``frequency`` in Hz; ``damping_ratio`` (default 1). A hinge on bodies held by at most
        ``n`` penalty groups gets ``w_J / sqrt(n)``. Fills ``self.joint_parameters``: hinge name
        -> (natural frequency Hz, damping ratio).
        """
        fraction = JOINT_FRACTION if fraction is None else float(fraction)
        zeta = JOINT_DAMPING_RATIO if damping_ratio is None else float(damping_ratio)
        if frequency is not None:
            omega = 2.0 * np.pi * float(frequency)
        else:
            omega = fraction * np.pi / self.step
        if not (math.isfinite(omega) and omega > 0 and zeta >= 0):
            raise ValueError("the joint frequency must be positive and the damping ratio >= 0")
        self.joint_omega, self.joint_zeta = omega, zeta
        Jt = self.Jt
        n, nh = self.mass.size, Jt.bi.size
        groups = np.zeros(n)
        for j in range(nh):
            if Jt.tmask[j].any() or Jt.rmode[j] != R_NONE:
                for b in (Jt.bi[j], Jt.bo[j]):
                    if b >= 0:
                        groups[b] += 1
        self.joint_parameters = {}
        for j in range(nh):
            nj = max([groups[b] for b in (Jt.bi[j], Jt.bo[j]) if b >= 0] + [1.0])
            Jt.om[j] = omega / np.sqrt(nj)
            Jt.zc[j] = 2.0 * zeta * Jt.om[j] * Jt.om[j] / omega
            self.joint_parameters[self.hinges[j]] = (float(Jt.om[j] / (2 * np.pi)),
                                                     float(zeta * Jt.om[j] / omega))

    def joint_stiffness(self, hinge: str) -> np.ndarray:
        """The penalty stiffness of a hinge at the current state, (6, 6).

        Rows and columns ``[rx, ry, rz, x, y, z]``: rotations (N m/rad) and translations (N/m)
        of the input marker relative to the output marker about and along the output marker's
        axes (a universal hinge's blocked rotation about ``n = xA x yB`` is put on rz); zero for
        the free directions. The damping is ``2 zeta w_j / w_J`` times it, w_j the hinge's
        frequency. As the compiled kernel computes it (see the module docstring).
        """
        j = self.hinges.index(hinge)
        Jt, S = self.Jt, self.S
        A, _ = self._frame(j, "o")
        B, pB = self._frame(j, "i")
        rows, trans = [], []
        mode = Jt.rmode[j]
        if mode in (R_AXIS, R_FULL):
            rows += [A[:, a] for a in range(2 if mode == R_AXIS else 3)]
            trans += [False] * (2 if mode == R_AXIS else 3)
        elif mode == R_CROSS:
            n = np.cross(A[:, 0], B[:, 1])
            rows.append(n / np.linalg.norm(n))
            trans.append(False)
        idx = list(range(len(rows)))
        if mode == R_CROSS:
            idx = [2]
        for a in range(3):
            if Jt.tmask[j, a]:
                rows.append(A[:, a])
                trans.append(True)
                idx.append(3 + a)
        K = np.zeros((6, 6))
        if not rows:
            return K
        G = np.zeros((len(rows), len(rows)))
        for b in (Jt.bi[j], Jt.bo[j]):
            if b < 0:
                continue
            Jg = S.R[b] @ np.diag(self.Bd.Jinv[b]) @ S.R[b].T
            arm = pB - S.x[b]
            ang = np.array([np.cross(arm, e) if t else e for e, t in zip(rows, trans)])
            lin = np.array([e if t else np.zeros(3) for e, t in zip(rows, trans)])
            G += ang @ Jg @ ang.T + lin @ lin.T / self.mass[b]
        K[np.ix_(idx, idx)] = Jt.om[j] ** 2 * np.linalg.inv(G)
        return K

    def _frame(self, j, side):
        """(R, p) of hinge j's output ('o') or input ('i') marker at the current state."""
        Jt, S = self.Jt, self.S
        b, Rl, pl = ((Jt.bo[j], Jt.Ro[j], Jt.po[j]) if side == "o"
                     else (Jt.bi[j], Jt.Ri[j], Jt.pi[j]))
        if b < 0:
            return Rl, pl
        return S.R[b] @ Rl, S.x[b] + S.R[b] @ pl

    def _build_work(self):
        n, nh = self.mass.size, self.Jt.bi.size
        z = np.zeros
        lay = np.zeros(15, dtype=np.int64)
        sizes = [3 * n, 9 * n, 3 * n, 3 * n, 3 * n, 3 * n, self.nq_tot, self.nu_tot,
                 self.nu_tot, self.nu_tot, 6 * nh, 3 * n, 3 * n, 4 * nh]
        lay[1:15] = np.cumsum(sizes)
        self.row_length = int(lay[L_LEN])
        self.W = Work(z((n, 3)), z((n, 3)), z((n, 3)), z((n, 3)), z((n, 3)), z((nh, 6)),
                      z(self.nu_tot), z((n, 3)), z((n, 3)), z((n, 3)), z((n, 3)), z((3, 3)),
                      z((3, 3)), z((3, 3)), z((6, 3)), z((6, 3)), z((6, 6)), z((nh, 6, 6)),
                      z((nh, 6, 6)), np.full(nh, -1, dtype=np.int64),
                      np.zeros(nh, dtype=np.int64), z((6, 4)), z((nh, 4)), z((10, 3)), lay)

    # -- the initial state --------------------------------------------------------------------
    def initial_body_states(self):
        """Base-frame poses and twists at t = 0: dict body -> (R, p, w, v of the base origin)."""
        model, topo = self.model, self.topology
        slices = coordinate_slices(model, topo)
        q0 = initial_coordinates(model, topo)
        qd0 = np.zeros_like(q0)
        fixed_q = np.zeros(q0.size, dtype=bool)
        fixed_u = np.zeros(q0.size, dtype=bool)
        for name in topo.tree_hinges:
            h = model.hinge(name)
            s = slices[name]
            if h.initial_rates is not None:
                qd0[s] = h.initial_rates
                fixed_u[s] = True
            if h.initial_coordinates is not None:
                fixed_q[s] = True
            coords = HINGE_TYPES[h.type].coordinates
            for d in h.drivers:
                f = parse(d.expression, f"Hinge '{name}'", "Driver")
                c = s.start + coords.index(d.coordinate)
                q0[c], qd0[c] = f(0.0), f.derivative(1)(0.0)
                fixed_q[c] = fixed_u[c] = True
        if topo.cut_hinges:
            q0 = self._close_loops(q0, fixed_q)
        poses = forward_kinematics(model, topo, q0)
        if topo.cut_hinges:
            J, _ = loop_jacobian(model, topo, q0, poses)
            free = ~fixed_u
            if J.size and free.any():
                res = J @ qd0
                qd0[free] -= _least_squares(self, J[:, free], res, "InitialRates")
        self._apply_body_velocities(q0, qd0, poses, slices)
        out = {}
        for b in topo.bodies:
            R, p = poses[b]
            tw = twist_jacobian(model, topo, b, q0, poses, p) @ qd0
            out[b] = (R, p, tw[:3], tw[3:])
        for b in topo.islands:
            body = model.body(b)
            R, p = poses[b]
            w = (body.initial_angular_velocity if body.initial_angular_velocity is not None
                 else np.zeros(3))
            v = body.initial_velocity if body.initial_velocity is not None else np.zeros(3)
            out[b] = (R, p, np.array(w, dtype=float), np.array(v, dtype=float))
        self._q0 = q0
        return out

    def _close_loops(self, q, fixed):
        """The coordinates ``q`` with the free ones (not ``fixed``) moved to close the loops
        (Newton's iterations); ModelError naming the cut hinges when the iterations meet values
        that are not finite."""
        model, topo = self.model, self.topology
        free = ~fixed if (~fixed).any() else np.ones(q.size, dtype=bool)
        q = q.copy()
        for _ in range(30):
            poses = forward_kinematics(model, topo, q)
            r = loop_residual(model, topo, poses)
            if r.size == 0 or np.max(np.abs(r)) < 1e-13:
                break
            J, _ = loop_jacobian(model, topo, q, poses)
            q[free] -= _least_squares(self, J[:, free], r, "InitialCoordinates")
        return q

    def _apply_body_velocities(self, q0, qd0, poses, slices):
        """Bodies with an initial velocity set it through their free (or bushing) tree hinge."""
        model, topo = self.model, self.topology
        problems = []
        for b in topo.bodies:
            body = model.body(b)
            if body.initial_velocity is None and body.initial_angular_velocity is None:
                continue
            h = model.hinge(topo.parent_hinge[b])
            if h.type not in SIX_DOF_TYPES:
                problems.append(Problem(f"RigidBody '{b}'", "InitialVelocity",
                                        f"the body's tree hinge '{h.name}' is {h.type}: set its "
                                        "InitialRates instead (a body velocity needs a free "
                                        "hinge)"))
                continue
            p = poses[b].p
            tw = twist_jacobian(model, topo, b, q0, poses, p) @ qd0
            target = np.concatenate([
                body.initial_angular_velocity if body.initial_angular_velocity is not None
                else tw[:3],
                body.initial_velocity if body.initial_velocity is not None else tw[3:]])
            S = motion_subspace(model, topo, h.name, q0, poses, p)
            qd0[slices[h.name]] += np.linalg.lstsq(S, target - tw, rcond=None)[0]
        if problems:
            raise ModelError(problems)

    def reset(self):
        """Put the state back to t = 0."""
        states = self.initial_body_states()
        n = self.mass.size
        x, R, v, L = np.zeros((n, 3)), np.zeros((n, 3, 3)), np.zeros((n, 3)), np.zeros((n, 3))
        for i, b in enumerate(self.bodies):
            Rb, pb, w, vb = states[b]
            x[i] = pb + Rb @ self.rc[i]
            v[i] = vb + np.cross(w, x[i] - pb)
            R[i] = Rb @ self.P[i]
            L[i] = R[i] @ (self.Bd.Jd[i] * (R[i].T @ w))
        qt = np.zeros(self.nq_tot)
        poses = drawn_poses(self.model)
        poses.update({b: Pose(states[b][0], states[b][1]) for b in self.bodies})
        slices = coordinate_slices(self.model, self.topology)
        for j, name in enumerate(self.hinges):
            h = self.model.hinge(name)
            o = self.Jt.qo[j]
            if name in slices:
                qh = self._q0[slices[name]]
            else:
                qh = hinge_coordinates(self.model, h, poses)
            if h.type == "spherical":
                qt[o:o + 4] = bryant_to_quaternion(qh)
            elif h.type in SIX_DOF_TYPES:
                qt[o:o + 3] = qh[:3]
                qt[o + 3:o + 7] = bryant_to_quaternion(qh[3:])
            else:
                qt[o:o + len(qh)] = qh
        self.S = State(x, R, v, L, qt)
        self.t = 0.0
        self.k = 0
        self._off_grid = False

    # -- stepping -----------------------------------------------------------------------------
    def finite(self) -> bool:
        """Whether the state (positions, rotations, velocities, momenta) is finite."""
        S = self.S
        return bool(np.all(np.isfinite(S.x)) and np.all(np.isfinite(S.v))
                    and np.all(np.isfinite(S.L)) and np.all(np.isfinite(S.R)))

    def snapshot(self):
        """A copy of everything :meth:`advance` changes, for :meth:`restore`."""
        return _copied(self.S), _copied(self.W), self.k, self.t, self._off_grid

    def restore(self, snapshot) -> None:
        """Go back to a :meth:`snapshot` (the steps after it are taken again bit for bit)."""
        S, W, self.k, self.t, self._off_grid = snapshot
        self.S, self.W = _copied(S), _copied(W)

    def _grids(self, ts, ts_next):
        """Force magnitudes at ``ts`` and driven coordinates at ``ts_next``."""
        compiled = self._compiled if self.compile_time_functions else None
        mags = np.zeros((ts.size, max(len(self.magnitudes), 1)))
        for c, f in enumerate(self.magnitudes):
            mags[:, c] = _sample(f, ts, compiled)
        drv = np.zeros((ts.size, max(len(self.drivers), 1)))
        for c, (_, _, f) in enumerate(self.drivers):
            drv[:, c] = _sample(f, ts_next, compiled)
        return mags, drv

    def advance(self, nsteps: int, h=None, every: int = 0, record_last: bool = False,
                k0=None) -> np.ndarray:
        """Take ``nsteps`` steps (of ``h``, default the step) in compiled code.

        Returns the recorded rows (see :meth:`instant_of_row`): the state before every step
        whose index is a multiple of ``every`` (0: none), and with ``record_last`` the state
        after the last step.
        """
        nominal = h is None
        h = self.step if nominal else float(h)
        k0 = self.k if k0 is None else k0
        if nominal and not self._off_grid:
            # from the step index, not the chunk's start: the times (and so the run) do not
            # depend on how the run was cut into chunks, which follows the wall time
            ts = (k0 + np.arange(nsteps + 1)) * h
        else:
            ts = self.t + h * np.arange(nsteps + 1)
        mags, drv = self._grids(ts, ts + self.step if nsteps == 0 else ts + h)
        if every > 0:
            nrec = len(range(-(-k0 // every) * every, k0 + nsteps, every))
        else:
            nrec = 0
        out = np.empty((nrec + (1 if record_last else 0), self.row_length))
        written = ne_run(self.S, self.Bd, self.Jt, self.Ld, self.W, k0, nsteps, h, mags, drv,
                         out, every, record_last, ORTHO_EVERY, TRACK_EVERY, REFRESH_EVERY)
        self.k = k0 + nsteps
        self.t = float(ts[-1])
        self._off_grid = self._off_grid or (not nominal and nsteps > 0)
        return out[:written]

    def instant_of_row(self, t: float, row: np.ndarray) -> Instant:
        """The :class:`~.system.Instant` of a recorded row (global axes, base frames)."""
        lay, n, nh = self.W.lay, self.mass.size, self.Jt.bi.size

        def blk(k, shape):
            return row[lay[k]:lay[k + 1]].reshape(shape)

        Rp = blk(L_R, (n, 3, 3))
        R = np.einsum("nij,nkj->nik", Rp, self.P)            # base frame = principal P^T
        pc = blk(L_X, (n, 3)).copy()
        pb = pc - np.einsum("nij,nj->ni", R, self.rc)
        x = np.concatenate([blk(L_AL, (n, 3)), blk(L_A, (n, 3))], axis=1)
        Wext = np.concatenate([blk(L_TA, (n, 3)), blk(L_FA, (n, 3))], axis=1)
        vals = dict(t=t, q=blk(L_Q, (-1,)).copy(), u=blk(L_U, (-1,)).copy(),
                    udot=blk(L_UD, (-1,)).copy(), R=R, pb=pb, pc=pc, hp=pc.copy(),
                    w=blk(L_W, (n, 3)).copy(), vh=blk(L_V, (n, 3)).copy(), x=x,
                    Wh=blk(L_WH, (nh, 6)).copy(), tau=blk(L_TAU, (-1,)).copy(), Wext=Wext,
                    Sg=np.zeros((n, 6, 6)), cg=np.zeros((n, 6)),
                    # cut hinges are hinges like the others here (their wrench is in Wh)
                    Wcut=np.zeros((0, 6)), loop_rank=0, phi=np.zeros(0))
        names = [f.name for f in dataclasses.fields(Instant)]
        return Instant(**{k: vals.get(k, np.zeros(0)) for k in names})

    def closure_of_row(self, row: np.ndarray) -> np.ndarray:
        """Per hinge (``hinges`` order): the norms of its blocked translations (m) and rotations
        (rad) and of their rates, shape (nh, 4), from a recorded row."""
        lay = self.W.lay
        return row[lay[L_CL]:lay[L_CL + 1]].reshape(-1, 4)

    @property
    def ny(self) -> int:
        """Length of the hinge-coordinate state ``[q; u]`` stored with the results."""
        return self.nq_tot + self.nu_tot

    def instant(self, t: float, y=None) -> Instant:
        """The instant of the current state (``t`` must be the current time; ``y`` is ignored:
        the method's state is the bodies', not the hinge coordinates)."""
        if abs(t - self.t) > 1e-9 * max(1.0, abs(t)):
            raise ValueError(f"the Newton-Euler state is at t = {self.t:g} s, not {t:g} s")
        row = self.advance(0, record_last=True)[0]
        return self.instant_of_row(self.t, row)

    @property
    def does_work(self) -> bool:
        """Whether drivers, forces with a magnitude or dampers do work (as
        :attr:`.system.System.does_work`; the penalty joints are not counted)."""
        Jt, F = self.Jt, self.forces
        return bool(self.drivers or np.any(Jt.hc != 0.0) or forces.does_work(F))

    def power(self, inst: Instant) -> np.ndarray:
        """Power of the drivers, of the applied forces, and dissipated by the hinges' own and
        the force elements' dampers at an instant, (3,) W (:func:`..shared.power.power_flows`; the
        penalty joints' dampers are not counted)."""
        from ..shared.power import power_flows
        Jt = self.Jt
        driven = np.zeros(Jt.hk.size, dtype=np.int64)
        driven[Jt.drv_u] = 1
        mags = np.array([f(inst.t) for f in self.magnitudes] or [0.0])
        out = np.zeros(3)
        c = np.ascontiguousarray      # the compiled version of the other methods
        power_flows(c(inst.q), c(inst.u), c(inst.tau), mags, driven, Jt.uq, Jt.hk, Jt.hc,
                    Jt.href, self.forces, c(inst.R), c(inst.pb), c(inst.pc), c(inst.hp),
                    c(inst.w), c(inst.vh), out)
        return out

    def state_vector(self, inst: Instant) -> np.ndarray:
        """``[q; u]`` of an instant."""
        return np.concatenate([inst.q, inst.u])


#: Runs with more samples of a time function than this evaluate it compiled (numba: about
#: 0.25 s to compile, then 15 ns instead of 0.4 us a sample).
COMPILE_SAMPLES = 2_000_000


def _least_squares(ne, A, b, field) -> np.ndarray:
    """``lstsq(A, b)`` of the loops' start (:meth:`NewtonEuler._close_loops`); ModelError naming
    the cut hinges and ``field`` when ``A`` or ``b`` is not finite (numpy's lstsq raises a bare
    SystemError for them) or the solve fails."""
    problem = None
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(b))):
        problem = "the loop equations at the start are not finite (coordinates too large?)"
    else:
        try:
            x = np.linalg.lstsq(A, b, rcond=None)[0]
        except (np.linalg.LinAlgError, SystemError, ValueError) as exc:
            problem = f"the loop equations at the start cannot be solved ({exc})"
        else:
            if np.all(np.isfinite(x)):
                return x
            problem = "the loops' closure at the start gives values that are not finite"
    raise ModelError([Problem(f"Hinge '{h}'", field, f"{problem}; the loop this hinge closes "
                              "cannot be closed from the given initial state")
                      for h in ne.topology.cut_hinges])


def _copied(arrays):
    """A namedtuple of arrays with every array copied."""
    return type(arrays)(*[a.copy() if isinstance(a, np.ndarray) else a for a in arrays])


@njit(cache=False)
def _fill(fn, ts, out):
    for i in range(ts.size):
        out[i] = fn(ts[i])


def _sample(f, ts, compiled=None):
    """A time function at many times (constants at once, others by ``sample``; compiled when
    ``compiled`` is a dict, the cache of compiled functions)."""
    c = f.value_if_constant()
    if c is not None:
        return np.full(ts.size, c)
    if compiled is not None:
        try:
            fn = compiled.get(f.text)
            if fn is None:
                fn = compiled[f.text] = f.numba()
            out = np.empty(ts.size)
            _fill(fn, ts, out)
            return out
        except Exception:             # pragma: no cover - numba cannot compile it: Python
            compiled[f.text] = None
    return f.sample(ts)
