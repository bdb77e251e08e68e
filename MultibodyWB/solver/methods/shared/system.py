"""The prepared system every method starts from: a model's tree in flat arrays, its state, its
drivers' and forces' time functions.

:class:`PreparedSystem` turns a neutral model and its topology into the arrays the compiled code
works on (:data:`Tree`, the cut hinges' :data:`Cuts`, the forces'
:data:`...elements.forces.Forces`) and defines the state that integrators carry. A method adds
its evaluation (mstmm: ``mstmm.system.System``; the constrained formulation solves on this one).

State ``y = [q; u]``
    One block per tree hinge, in tree order (``topology.bodies``: every body after its parent;
    tree hinge ``i`` joins body ``i`` to its parent).

    ============ ========================= ===========================================
    type         position coordinates q    velocity coordinates u
    ============ ========================= ===========================================
    fixed        (none)                    (none)
    revolute     rz                        d rz/dt
    prismatic    z                         dz/dt
    cylindrical  z, rz                     dz/dt, d rz/dt
    universal    rx, ry                    d rx/dt, d ry/dt
    spherical    quaternion w, x, y, z     relative angular velocity wx, wy, wz
    planar       x, y, rz                  dx/dt, dy/dt, d rz/dt
    free/bushing x, y, z, quaternion       dx/dt, dy/dt, dz/dt, wx, wy, wz
    ============ ========================= ===========================================

    Every quantity is the hinge's own: the input marker relative to the output marker, in the
    output marker's axes (the quaternion is that of the relative rotation; the angular velocity
    is the input marker's relative to the output marker, in output-marker axes), whichever way
    the tree runs through the hinge. Quaternions never meet a singularity; results report them
    also as Bryant angles.

Driven coordinates stay in the state but are overridden by their time functions at every
evaluation (their rates and accelerations are exact).

Limits (``LowerLimits``/``UpperLimits``) are stored in the model but not enforced by this solver.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ...analysis.kinematics import (drawn_distance_of, drawn_poses, hinge_coordinates,
                                    local_motion_subspace)
from ...analysis.topology import Topology, analyse
from ...elements import forces
from ...elements.couplers import coefficients as coupler_coefficients
from ...elements.hinge_kinematics import NQ, NU, cut_count
from ...elements.hinges import (COORDINATE_KIND, HINGE_TYPES, QUATERNION_TYPES, SIX_DOF_TYPES,
                                TYPE_CODES)
from ...maths.rotations import (bryant_to_matrix, bryant_to_quaternion, inertia_vector_to_tensor,
                                parallel_axis)
from ...model.mechanism import MultibodySystem
from ...model.problems import ModelError, Problem
from ...model.timefunction import parse
from .instant import marker_attachment
from .power import power_flows

Tree = namedtuple("Tree", "parent code sgn qo uo nq nu mo_R mo_p mi_R mi_p rc mass JCl "
                          "hk hc href hRref driven drv_idx drv_q quat nq_tot m_tot loops")
#: the cut hinges (closed loops): ``Tree.loops``
Cuts = namedtuple("Cuts", "c_code c_bi c_Ri c_pi c_bo c_Ro c_po c_m c_of_row stab cp_u cp_ab")
#: the forces: :data:`...elements.forces.Forces` (every law's arrays)

#: Baumgarte stabilisation of closed loops: the constraint error decays at w = this / step (1/s),
#: critically damped; small enough for RK4's stability (w h << 2.8) and semi-implicit Euler's
#: (critically damped: w h < 0.83), large enough to hold the loops closed to round-off.
LOOP_STABILISATION = 0.05


class PreparedSystem:
    """A model assembled for the methods: its tree in flat arrays, the state layout, the cut
    hinges, couplers, forces, drivers and their time functions.

    Parameters
    ----------
    model : MultibodySystem
        A valid model (see :meth:`MultibodySystem.check`).
    topology : Topology, optional
        The model's (:func:`...analysis.topology.analyse` when not given).
    """

    def __init__(self, model: MultibodySystem, topology: Topology | None = None):
        model.check()
        self.model = model
        self.topology = topo = topology or analyse(model)
        if topo.elastic_closures:
            raise ModelError([Problem(f"Hinge '{h}'", "Type", "a bushing that closes a loop is "
                                      "not supported yet") for h in topo.elastic_closures])
        self.bodies = list(topo.bodies)
        self.index = {b: i for i, b in enumerate(self.bodies)}
        self.hinges = [topo.parent_hinge[b] for b in self.bodies]
        self._build_tree()
        self._build_forces()
        self._build_time_functions()

    # -- assembly -----------------------------------------------------------------------------
    def _marker(self, ref):
        """(part index or -1 for the ground, local R, local p); ground markers in global axes."""
        return marker_attachment(self.model, self.index, ref)

    def _build_tree(self):
        model, topo = self.model, self.topology
        n = len(self.bodies)
        parent = np.full(n, -1, dtype=np.int64)
        code = np.zeros(n, dtype=np.int64)
        sgn = np.ones(n)
        mo_R, mi_R = np.zeros((n, 3, 3)), np.zeros((n, 3, 3))
        mo_p, mi_p = np.zeros((n, 3)), np.zeros((n, 3))
        rc, mass, JCl = np.zeros((n, 3)), np.zeros(n), np.zeros((n, 3, 3))
        nq = np.zeros(n, dtype=np.int64)
        nu = np.zeros(n, dtype=np.int64)
        hRref = np.tile(np.eye(3), (n, 1, 1))
        for i, (bname, hname) in enumerate(zip(self.bodies, self.hinges)):
            h = model.hinge(hname)
            el = topo.element(hname)
            code[i] = TYPE_CODES[h.type]
            nq[i], nu[i] = NQ[code[i]], NU[code[i]]
            sgn[i] = -1.0 if el.reversed else 1.0
            bo, mo_R[i], mo_p[i] = self._marker(h.output)
            bi, mi_R[i], mi_p[i] = self._marker(h.input)
            other = h.output.body if not el.reversed else h.input.body
            parent[i] = -1 if model.is_ground(other) else self.index[other]
            body = model.body(bname)
            mass[i] = body.mass
            rc[i] = body.mass_center.position
            JCl[i] = parallel_axis(inertia_vector_to_tensor(body.inertia), -body.mass, rc[i])
            if h.type in QUATERNION_TYPES and h.spring_reference is not None:
                hRref[i] = bryant_to_matrix(h.spring_reference[-3:])
        qo = np.concatenate([[0], np.cumsum(nq)[:-1]]).astype(np.int64) if n else nq.copy()
        uo = np.concatenate([[0], np.cumsum(nu)[:-1]]).astype(np.int64) if n else nu.copy()
        self.nq_tot, self.nu_tot = int(nq.sum()), int(nu.sum())
        hk, hc, href = np.zeros(self.nu_tot), np.zeros(self.nu_tot), np.zeros(self.nu_tot)
        driven = np.zeros(self.nu_tot, dtype=np.int64)
        drv_idx = np.full(self.nu_tot, -1, dtype=np.int64)
        drv_q = np.zeros(self.nu_tot, dtype=np.int64)
        quat = []
        self.drivers = []          # (hinge, coordinate, TimeFunction)
        for i, hname in enumerate(self.hinges):
            h = model.hinge(hname)
            kind = HINGE_TYPES[h.type]
            o = uo[i]
            if nu[i]:
                hk[o:o + nu[i]] = h.vector("stiffness")
                hc[o:o + nu[i]] = h.vector("damping")
                ref = h.vector("spring_reference")
                if h.type not in QUATERNION_TYPES:
                    href[o:o + nu[i]] = ref
                elif h.type != "spherical":
                    href[o:o + 3] = ref[:3]
            if h.type == "spherical":
                quat.append(qo[i])
            elif h.type in SIX_DOF_TYPES:
                quat.append(qo[i] + 3)
            for d in h.drivers:
                if h.type in QUATERNION_TYPES:
                    raise ModelError([Problem(f"Hinge '{h.name}'", "Driver",
                                              f"a {h.type} hinge cannot be driven by this solver")])
                j = kind.coordinates.index(d.coordinate)
                driven[o + j] = 1
                drv_idx[o + j] = len(self.drivers)
                drv_q[o + j] = qo[i] + j
                self.drivers.append((h.name, d.coordinate,
                                     parse(d.expression, f"Hinge '{h.name}'", "Driver")))
        cuts = self._cut_arrays()
        self.tree = Tree(parent, code, sgn, qo, uo, nq, nu, mo_R, mo_p, mi_R, mi_p, rc, mass, JCl,
                         hk, hc, href, hRref, driven, drv_idx, drv_q,
                         np.array(quat, dtype=np.int64), self.nq_tot,
                         int(cuts.c_m.sum()) + cuts.cp_ab.shape[0], cuts)

    def _cut_arrays(self):
        """Arrays of the cut hinges (closed loops) and the loop stabilisation."""
        self.cuts = list(self.topology.cut_hinges)
        nc = len(self.cuts)
        c_code = np.zeros(nc, dtype=np.int64)
        c_bi, c_bo = np.zeros(nc, dtype=np.int64), np.zeros(nc, dtype=np.int64)
        c_Ri, c_Ro = np.zeros((nc, 3, 3)), np.zeros((nc, 3, 3))
        c_pi, c_po = np.zeros((nc, 3)), np.zeros((nc, 3))
        c_m = np.zeros(nc, dtype=np.int64)
        rows = []
        problems = []
        for k, name in enumerate(self.cuts):
            h = self.model.hinge(name)
            c_code[k] = TYPE_CODES[h.type]
            c_bi[k], c_Ri[k], c_pi[k] = self._marker(h.input)
            c_bo[k], c_Ro[k], c_po[k] = self._marker(h.output)
            c_m[k] = cut_count(c_code[k])
            rows += [k] * int(c_m[k])
            if h.drivers:
                problems.append(Problem(f"Hinge '{name}'", "Driver", "a hinge that closes a loop "
                                        "cannot be driven; drive a hinge of the tree instead"))
        # couplers: rows after the cut hinges' (a u1 + b u2 = 0 on two tree coordinates)
        cp_u, cp_ab = self._coupler_arrays(problems)
        if problems:
            raise ModelError(problems)
        # Baumgarte stabilisation of the loop constraints: critically damped at w = STAB / step
        w = LOOP_STABILISATION / self.model.simulation.step
        return Cuts(c_code, c_bi, c_Ri, c_pi, c_bo, c_Ro, c_po, c_m, np.array(rows, dtype=np.int64),
                    np.array([2.0 * w, w * w]), cp_u, cp_ab)

    def _coupler_arrays(self, problems):
        """The couplers' velocity indices (ncp, 2) and coefficients (ncp, 2); a coupler on a
        hinge that closes a loop is a problem (the tree's coordinates only)."""
        tree_index = {h: i for i, h in enumerate(self.hinges)}
        couplers = self.model.couplers
        cp_u = np.zeros((len(couplers), 2), dtype=np.int64)
        cp_ab = np.zeros((len(couplers), 2))
        self.coupler_velocity = []            # per coupler: the two velocity indices
        for k, c in enumerate(couplers):
            for side, (field, ref) in enumerate((("First", c.first), ("Second", c.second))):
                i = tree_index.get(ref.hinge)
                if i is None:
                    problems.append(Problem(f"Coupler '{c.name}'", field, f"hinge '{ref.hinge}' "
                                            "closes a loop: couple hinges of the tree (another "
                                            "hinge of the loop)"))
                    continue
                kind = HINGE_TYPES[self.model.hinge(ref.hinge).type]
                cp_u[k, side] = self._uo_of(i) + kind.coordinates.index(ref.coordinate)
            cp_ab[k] = coupler_coefficients(c)
        return cp_u, cp_ab

    def _uo_of(self, i: int) -> int:
        """Offset of tree hinge ``i``'s velocity coordinates (before the tree arrays exist)."""
        return int(sum(HINGE_TYPES[self.model.hinge(h).type].dof for h in self.hinges[:i]))

    def couple_initial_rates(self, y: np.ndarray) -> list[str]:
        """Make the initial rates ``y`` (state, changed in place) meet the couplers: a coupled
        coordinate whose hinge has no initial rates given (and no driver) takes the rate the
        coupler implies; given rates that contradict a coupler are a :class:`ModelError` naming
        it and the consistent value. Returns notes on the rates filled in."""
        notes, problems = [], []
        T = self.tree
        drv = self.driver_values(0.0) if self.drivers else None
        for k, c in enumerate(self.model.couplers):
            (u1, u2), (a, b) = T.loops.cp_u[k], T.loops.cp_ab[k]

            def rate(j):
                if T.driven[j]:
                    return float(drv[T.drv_idx[j], 1])
                return float(y[self.nq_tot + j])

            r1, r2 = rate(u1), rate(u2)
            scale = max(abs(a * r1), abs(b * r2), 1e-300)
            if abs(a * r1 + b * r2) <= 1e-12 * scale or (r1 == 0.0 and r2 == 0.0):
                continue
            free = [j for j, ref in ((u2, c.second), (u1, c.first))
                    if not T.driven[j] and self.model.hinge(ref.hinge).initial_rates is None]
            if free:
                j = free[0]
                ref, value = ((c.second, -a * r1 / b) if j == u2 else (c.first, -b * r2 / a))
                y[self.nq_tot + j] = value
                notes.append(f"Coupler '{c.name}': '{ref}' starts at the rate {value:.6g} the "
                             "coupler implies (no initial rate given)")
                continue
            unit = "rad/s" if COORDINATE_KIND[c.second.coordinate] == "rotation" else "m/s"
            problems.append(Problem(
                f"Coupler '{c.name}'", "Second",
                f"the initial rates contradict it: '{c.first}' at {r1:.6g} and '{c.second}' at "
                f"{r2:.6g}; with '{c.first}' at {r1:.6g}, '{c.second}' must start at "
                f"{-a * r1 / b:.6g} {unit} (or give one of the two rates only)"))
        if problems:
            raise ModelError(problems)
        return notes

    def set_stabilisation(self, step: float) -> None:
        """Tune the loops' Baumgarte stabilisation to an integrator step (s)."""
        w = LOOP_STABILISATION / step
        self.tree.loops.stab[:] = 2.0 * w, w * w

    def _build_forces(self):
        model = self.model
        self.magnitudes = []           # TimeFunction per magnitude index

        def magnitude(f):
            text = f.magnitude
            if text.strip() in ("", "0"):
                return -1
            self.magnitudes.append(parse(text, f"Force '{f.name}'", "Magnitude"))
            return len(self.magnitudes) - 1

        # the cut hinges' springs and dampers act as forces between their markers
        # (elements.forces.cut_spring), their hinges' loads on the tree's coordinates
        self.forces = forces.pack(model, self._marker, magnitude, drawn_distance_of(model),
                                  cut_hinges=self.cuts)

    def _build_time_functions(self):
        self._drv_fns = [(f, f.derivative(1), f.derivative(2)) for _, _, f in self.drivers]

    # -- state --------------------------------------------------------------------------------
    @property
    def ny(self) -> int:
        """Length of the state vector."""
        return self.nq_tot + self.nu_tot

    def initial_state(self) -> np.ndarray:
        """The state at t = 0 from the hinges' initial coordinates (or as drawn) and rates."""
        model = self.model
        poses = drawn_poses(model)
        y = np.zeros(self.ny)
        T = self.tree
        for i, hname in enumerate(self.hinges):
            h = model.hinge(hname)
            q = (h.initial_coordinates if h.initial_coordinates is not None
                 else hinge_coordinates(model, h, poses))
            rates = h.vector("initial_rates")
            qo, uo = T.qo[i], self.nq_tot + T.uo[i]
            if h.type == "spherical":
                y[qo:qo + 4] = bryant_to_quaternion(q)
                y[uo:uo + 3] = local_motion_subspace("spherical", q)[:3] @ rates
            elif h.type in SIX_DOF_TYPES:
                y[qo:qo + 3] = q[:3]
                y[qo + 3:qo + 7] = bryant_to_quaternion(q[3:])
                y[uo:uo + 3] = rates[:3]
                y[uo + 3:uo + 6] = local_motion_subspace("spherical", q[3:])[:3] @ rates[3:]
            else:
                y[qo:qo + len(q)] = q
                y[uo:uo + len(q)] = rates
        self._apply_body_velocities(y)
        return y

    def _apply_body_velocities(self, y):
        """Bodies with an initial velocity set it through their free (or bushing) tree hinge."""
        problems = []
        for i, bname in enumerate(self.bodies):
            b = self.model.body(bname)
            if b.initial_velocity is None and b.initial_angular_velocity is None:
                continue
            h = self.model.hinge(self.hinges[i])
            if h.type not in SIX_DOF_TYPES:
                problems.append(Problem(f"RigidBody '{bname}'", "InitialVelocity",
                                        f"the body's tree hinge '{h.name}' is {h.type}: set its "
                                        "InitialRates instead (a body velocity needs a free hinge)"))
                continue
            inst = self._kinematics(y)
            par = self.tree.parent[i]
            v_target = b.initial_velocity if b.initial_velocity is not None else np.zeros(3)
            w_target = (b.initial_angular_velocity if b.initial_angular_velocity is not None
                        else np.zeros(3))
            # the body's point at the hinge point
            v_hp = v_target + np.cross(w_target, inst.hp[i] - inst.pb[i])
            if par >= 0:
                wp = inst.w[par]
                vp = inst.vh[par] + np.cross(wp, inst.hp[i] - inst.hp[par])
            else:
                wp, vp = np.zeros(3), np.zeros(3)
            s = self.tree.sgn[i]
            RA = inst.R[i] @ self.tree.mo_R[i] if s < 0 else (
                (inst.R[par] if par >= 0 else np.eye(3)) @ self.tree.mo_R[i])
            uo = self.nq_tot + self.tree.uo[i]
            y[uo:uo + 3] = RA.T @ (s * (v_hp - vp))
            y[uo + 3:uo + 6] = RA.T @ (s * (w_target - wp))
        if problems:
            raise ModelError(problems)

    def _kinematics(self, y: np.ndarray):
        """The bodies' rotations ``R``, base origins ``pb``, hinge points ``hp``, angular
        velocities ``w`` and velocities ``vh`` of their points at ``hp`` at the state ``y``
        (t = 0), for :meth:`initial_state`: from the tree's coordinates in Python
        (:class:`.loops._Bodies`); a method may answer from its own evaluation."""
        from types import SimpleNamespace
        from .loops import _Bodies, _State
        B = _Bodies(self, _State(self, 0.0, y))
        hp = np.array([hf.p for hf in B.hinges]).reshape(-1, 3)
        vh = B.vc + np.cross(B.w, hp - B.pc)
        return SimpleNamespace(R=B.R, pb=B.pb, hp=hp, w=B.w, vh=vh)

    # -- time functions -----------------------------------------------------------------------
    def driver_values(self, t: float) -> np.ndarray:
        """Drivers' (q, dq/dt, d2q/dt2) at time t, shape (nd, 3)."""
        out = np.zeros((max(len(self._drv_fns), 1), 3))
        for k, (f, f1, f2) in enumerate(self._drv_fns):
            out[k] = f(t), f1(t), f2(t)
        return out

    def magnitude_values(self, t: float) -> np.ndarray:
        """Force magnitudes at time t, shape (nm,)."""
        return np.array([f(t) for f in self.magnitudes] or [0.0])

    @property
    def does_work(self) -> bool:
        """Whether anything but gravity and springs does work: drivers, forces with a
        magnitude, dampers (see :func:`.power.power_flows`). Without them the energy is
        conserved and the integrators skip the work columns (they stay 0)."""
        T, F = self.tree, self.forces
        return bool(self.drivers or np.any(T.hc != 0.0) or forces.does_work(F))

    def power_of(self, t: float, q, u, tau, kin) -> np.ndarray:
        """The power of the drivers, of the applied forces, and dissipated by the dampers
        (shape (3,), W: :func:`..shared.power.power_flows`) from an evaluation's coordinates ``q``, ``u``, hinge loads ``tau``
        (drivers' loads included) and body kinematics ``kin`` (``R pb pc hp w vh``: an
        :class:`Instant`, the work arrays, or another formulation's result)."""
        out = np.zeros(3)
        T = self.tree
        c = np.ascontiguousarray      # one compiled version whatever the caller's arrays
        power_flows(c(q), c(u), c(tau), self.magnitude_values(t), T.driven, T.drv_q, T.hk, T.hc,
                    T.href, self.forces, c(kin.R), c(kin.pb), c(kin.pc), c(kin.hp), c(kin.w),
                    c(kin.vh), out)
        return out
