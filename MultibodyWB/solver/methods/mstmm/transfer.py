"""The transfer matrix method for multibody systems (MSTMM), product form: trees and closed loops.

This is the classical form of the method: element transfer matrices on 13-component state vectors,
multiplied along the transfer paths from the tips to the roots, and the *automatic deduction of the
overall transfer equation* ``U_all Z_all = 0`` from the topology alone, closed loops included (cut
hinges as pairs of boundaries, see *Closed loops* below). It shares the element library of the
Riccati form (:mod:`.kernels`): the hinges' ``S``, ``c`` and loads ``tau``, the bodies' poses,
velocities and applied loads and the cut hinges' constraint directions come from
:meth:`.system.System.instant`; the mass properties from :attr:`.system.System.tree`. Its results
(``udot``, body accelerations, hinge wrenches, driver loads, cut-hinge loads) equal the Riccati
kernel's to round-off; the product form exists to expose the overall transfer equation (its
paths, block structure, order and numbers), not for speed or for long chains (see *Precision*
below).

State vector
------------
At every connection point, all vectors in global axes::

    z = [a; eps; m; q; 1]                                    (13 x 1)

``a``: classical acceleration of the material point of the element on the *tip side* of the
point (for a hinge's output on the parent side: the parent body's point), ``eps``: that element's
angular acceleration; ``m``, ``q``: internal moment (about the point) and force. Sign convention
(that of ``docs/mstmm.md``): **q and m are the force and moment the tip-side element exerts on the
root-side element**; an element receives ``+m, +q`` at its input (tip-side) points and ``-m, -q``
at its output. So an ideal connection passes ``m, q`` through unchanged, and at a body's output
point (its hinge point ``hp``) the tree hinge's wrench on the body is ``Wh = -[m; q]``
(``kernels`` order: torque, then force).

Connection points. Body ``i`` has its output at its hinge point ``hp[i]`` (the input marker origin
of its tree hinge, as in ``kernels``). A tree hinge has its input *and* its output at the same
geometric point, the child's ``hp``: its input state is the child's material point there, its
output state the parent's material point there (the ground's for a root hinge). So no moment of
``q`` over a marker offset ever appears in a hinge: prismatic, cylindrical, planar and free hinges
carry their offset in ``S`` and ``c``. A tip body's input is a free end at its own ``hp``
(``m = q = 0``, ``a, eps`` unknown).

Element transfer matrices
-------------------------
Body (mass ``mb``, mass centre ``C``, ``J_C`` in global axes, angular velocity ``w``, applied force
``f_C`` and torque ``tau_C`` reduced to ``C`` from ``Instant.Wext``), inputs ``I_1..I_k``, output
``O``; ``l_XY = r_Y - r_X``, ``~v`` the cross-product matrix::

    a_O = a_I1 - ~l_I1O eps + ~w ~w l_I1O,     eps_O = eps_I1
    q_O = sum_k q_k - mb a_C + f_C,            a_C = a_I1 - ~l_I1C eps + ~w ~w l_I1C
    m_O = sum_k (m_k - ~l_IkO q_k) + mb ~l_CO a_C - J_C eps - ~w J_C w - ~l_CO f_C + tau_C

i.e. ``z_O = sum_k B_k z_Ik`` (:func:`body_transfer`); each extra input ``k >= 2`` brings the six
geometric equations ``eps_Ik = eps_I1``, ``a_Ik = a_I1 - ~l_I1Ik eps + ~w ~w l_I1Ik``.

Hinge, ``x = [eps; a]`` and ``F = [m; q]``: with ``S`` and ``c`` of ``Instant.Sg``/``Instant.cg``
(``x_child = x_parent + S du + c``, already signed for reversed hinges), the input being the child::

    x_O = x_I - S_f du_f - S_d dd - c,     F_O = F_I
    joint condition (free coordinates):   S_f^T F_I + tau_f = 0      (S^T Wh = tau, Wh = -F)
    driver load (driven coordinates):     tau_d = -S_d^T F_I

``du_f`` are the unknown accelerations of the free coordinates (``System`` u layout), ``dd`` the
drivers' known accelerations; ``tau`` the hinge's spring/damper loads. Written as
``z_O = H z_I + G du_f`` with ``C z_I = 0`` (:func:`hinge_transfer`).

Elimination of the hinge accelerations (Rui's treatment of smooth hinges)
------------------------------------------------------------------------
The joint condition fixes ``nf`` combinations of the state at the hinge's input; the hinge's
output has ``nf`` new unknowns ``du_f``. With the input state written through the accumulated
product ``z_I = A Z`` in terms of the unknowns ``Z`` of the paths that reach it, the condition
``C A Z = 0`` is solved for ``nf`` components of ``Z`` (chosen by QR with column pivoting on
``C A``), and those components' places in ``Z`` are taken by ``du_f``. So each hinge acts as a
linear map of state vectors (it depends on the product accumulated from the tips, as Rui's
classical smooth-hinge matrix does), ``du`` never adds to the order of the overall equation, and
every tip block of ``Z`` keeps six unknowns: at the start a tip's accelerations ``[a; eps]``, some
of which the hinges on its paths replace by their ``du``. :attr:`TransferEquation.substitutions`
lists these replacements. Fully driven and fixed hinges (``nf = 0``) are plain 13 x 13 matrices;
the driver load of a driven coordinate is recovered after the solve.

Overall transfer equation
-------------------------
Unknowns ``Z`` (blocks of 6): one block per tip (its path unknowns, see above) and one per root
hinge (``[m; q]`` at the ground: the reaction of the ground side is unknown, its ``a = eps = 0``
known). Equations: per root hinge the 12 rows of the main transfer equation
``z_root = (product along the paths) Z``; per extra input of every branch body the 6 geometric
equations (the path products premultiplied by the geometric coefficient matrices). Free ends'
``m = q = 0`` and the ground's ``a = eps = 0`` are known and dropped; the constant column (the
``1`` of the state vectors) goes to the right-hand side. The order is ``12 * roots + 6 *
extra inputs = 6 * (tips + roots)`` whatever the number of bodies in the chains, and the matrix is
square (closed loops add their loads and equations: below). After the solve, the substitutions
are undone (giving every tip's accelerations and every hinge's ``du``) and one sweep of the
element matrices from the tips to the roots recovers every internal state vector.

Closed loops
------------
The topology cuts one hinge per loop (:attr:`.topology.Topology.cut_hinges`, the hinge with the
fewest constraints; ``System.cuts``); the other hinges form the tree above. Each cut hinge becomes
a **pair of boundaries** at ``p``, its input marker origin: a wrench ``N lam`` (torque; force) on
its input body at ``p`` and ``-N lam`` on its output body at ``p`` (nothing where that side is
the ground). ``N`` (6 x m) holds the directions the hinge blocks, in global axes, as the kernel
forms them (``kernels.cut_geometry``, read from the loop work arrays at the same state): blocked
rotations ``[Ra e; 0]``, blocked translations ``[0; Ra e]``, ``e`` the output marker's axes
(the universal hinge's blocked rotation about ``Rx(a) e_z``). The ``m`` loads ``lam`` are
unknowns of the overall equation: a block of columns per cut hinge, after the tips' and roots'.
They enter the two bodies as applied loads in the body transfer: with the body's output at
``hp``, a wrench ``[T; f]`` at ``p`` adds ``f`` to ``q_O`` and ``T + (p - hp) x f`` to ``m_O``,
i.e. columns ``lam`` in the body's output state; the hinges' eliminations and the products carry
them along like any other column (they are never eliminated).

Each cut hinge brings ``m`` **supplementary equations**, its kinematic condition at the
acceleration level (rows after the main and geometric equations)::

    N^T (x_in(p) - x_out(p) - c) = -2 w N^T v_rel - w^2 phi

``x = [eps; a]`` of each body's material point at ``p`` (``a_hp + eps x r + w x (w x r)``,
``r = p - hp``, from the body's output state: linear in ``Z``), ``c`` the velocity terms
``[w_out x w_rel; 2 w_out x v_rel]`` (+ the universal hinge's own term), ``v_rel`` the relative
velocity and ``phi`` the position error in the blocked directions; the right-hand side is the
kernel's Baumgarte stabilisation at its ``w`` (``System.set_stabilisation``), so that the
equation gives the kernel's numbers at any state, consistent or not. The order becomes
``6 * (tips + roots) + m``.

Solution by blocks (:meth:`TransferEquation.solution`): the tree unknowns in terms of the loads
(``U_tt``, the tree's own overall matrix, is regular), then the ``m x m`` equation of the loads
(the supplementary rows with the tree eliminated: the same matrix as the kernel's
``close_loops``), solved with a pseudo-inverse: redundant constraints (a planar loop of revolute
hinges in 3D: the four-bar, 3 of 5) or a singular position make ``U`` singular, the
accelerations stay determined, and the loads in the dependent directions are the minimum-norm
ones, as in the kernel. :attr:`MstmmResult.Wcut` are the cut hinges' wrenches on their input
bodies (``Instant.Wcut``).

Precision
---------
Products of transfer matrices lose precision on long chains when the unknowns stay those of the
tips (the entries grow with the lever arms and inertias accumulated along the path: welded chains,
whose hinges eliminate nothing, reach cond(U) ~ 1e6 at 100 bodies and 7e7 at 200). Here every
hinge's elimination re-bases the path unknowns on the latest hinge accelerations, which keeps the
product well scaled: on random chains of 10 to 400 bodies with spherical, revolute and mixed
hinges cond(U) stays between 1e1 and 3e3 (1e1 to 4e1 with rows and columns equilibrated,
:meth:`TransferEquation.cond_scaled`) and the results agree with the Riccati kernel to 1e-13.
The Riccati form (:mod:`.kernels`) remains the solver's working form: O(n) with no dense
``(6 tips) x (6 tips)`` algebra in branched trees.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from . import kernels as K
from ...elements.forces import cut_spring
from ...elements.hinges import HINGE_TYPES
from ...model.problems import ModelError, Problem

# the overall equation's blocks, unknowns and the result (their module: .overall)
from .overall import (  # noqa: F401  (their home before issue 36)
    Block, CouplerUnknown, CutBoundary, MstmmResult, Substitution, TransferEquation)

NZ = 13                                  #: length of a state vector
_A, _E, _M, _Q, _ONE = slice(0, 3), slice(3, 6), slice(6, 9), slice(9, 12), 12
STATE_LABELS = ("a_x", "a_y", "a_z", "eps_x", "eps_y", "eps_z",
                "m_x", "m_y", "m_z", "q_x", "q_y", "q_z", "1")
_I3 = np.eye(3)
_QUAT_U = {"spherical": ("wx", "wy", "wz"), "free": ("x", "y", "z", "wx", "wy", "wz"),
           "bushing": ("x", "y", "z", "wx", "wy", "wz")}


def skew(v) -> np.ndarray:
    """Cross-product matrix ``~v`` (``~v b = v x b``)."""
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def velocity_coordinate_names(hinge_type: str) -> tuple[str, ...]:
    """Names of a hinge type's velocity coordinates (``System``'s u layout)."""
    return _QUAT_U.get(hinge_type, HINGE_TYPES[hinge_type].coordinates)


# --------------------------------------------------------------------------------------------------
# element transfer matrices
# --------------------------------------------------------------------------------------------------

def body_transfer(mass, JC, pc, w, f_C, tau_C, r_out, r_inputs):
    """Transfer matrices of a rigid body with inputs at ``r_inputs`` and its output at ``r_out``.

    Parameters
    ----------
    mass : float
    JC : (3, 3) inertia about the mass centre, global axes
    pc : (3,) mass centre; w : (3,) angular velocity
    f_C, tau_C : (3,) applied force and torque reduced to the mass centre (gravity included)
    r_out : (3,) output point; r_inputs : list of (3,) input points (first: the kinematic one)

    Returns
    -------
    B : list of (13, 13)
        ``z_O = sum_k B[k] @ z_Ik``; the constants sit in ``B[0]``'s last column.
    geometric : list of ((6, 13), (6, 13))
        For inputs 2..k: ``(G_own, G_first)`` with ``G_own @ z_Ik + G_first @ z_I1 = 0`` (rows:
        acceleration, then angular acceleration).
    """
    rI = np.asarray(r_inputs[0], dtype=float)
    lIO, lIC, lCO = r_out - rI, pc - rI, r_out - pc
    W = skew(w)
    WW = W @ W
    XIO, XIC, XCO = skew(lIO), skew(lIC), skew(lCO)
    B1 = np.zeros((NZ, NZ))
    B1[_A, _A] = _I3
    B1[_A, _E] = -XIO
    B1[_A, _ONE] = WW @ lIO
    B1[_E, _E] = _I3
    B1[_Q, _Q] = _I3
    B1[_Q, _A] = -mass * _I3
    B1[_Q, _E] = mass * XIC
    B1[_Q, _ONE] = -mass * WW @ lIC + f_C
    B1[_M, _M] = _I3
    B1[_M, _Q] = -XIO
    B1[_M, _A] = mass * XCO
    B1[_M, _E] = -(JC + mass * XCO @ XIC)
    B1[_M, _ONE] = mass * XCO @ WW @ lIC - W @ JC @ w - XCO @ f_C + tau_C
    B1[_ONE, _ONE] = 1.0
    B = [B1]
    geometric = []
    for rk in r_inputs[1:]:
        Bk = np.zeros((NZ, NZ))
        Bk[_Q, _Q] = _I3
        Bk[_M, _M] = _I3
        Bk[_M, _Q] = -skew(r_out - rk)
        B.append(Bk)
        l = rk - rI
        G_own = np.zeros((6, NZ))
        G_own[0:3, _A] = _I3
        G_own[3:6, _E] = _I3
        G_first = np.zeros((6, NZ))
        G_first[0:3, _A] = -_I3
        G_first[0:3, _E] = skew(l)
        G_first[0:3, _ONE] = -WW @ l
        G_first[3:6, _E] = -_I3
        geometric.append((G_own, G_first))
    return B, geometric


def hinge_transfer(S, c, tau, driven, dd):
    """Transfer relation of a tree hinge, input = child side, output = parent side.

    Parameters
    ----------
    S : (6, nu) global motion subspace (``Instant.Sg[i][:, :nu]``, rows ``[eps; a]``)
    c : (6,) velocity terms (``Instant.cg[i]``)
    tau : (nu,) hinge loads of the free coordinates (springs, dampers); driven entries ignored
    driven : (nu,) bool; dd : (nu,) driver accelerations (used where driven)

    Returns
    -------
    H : (13, 13), G : (13, nf), C : (nf, 13)
        ``z_O = H z_I + G du_f`` and the joint condition ``C z_I = 0`` (``S_f^T F_I + tau_f = 0``).
    """
    S = np.asarray(S, dtype=float).reshape(6, -1)
    driven = np.asarray(driven, dtype=bool)
    free = ~driven
    known = c + S[:, driven] @ np.asarray(dd, dtype=float)[driven]
    H = np.eye(NZ)
    H[_A, _ONE] = -known[3:]
    H[_E, _ONE] = -known[:3]
    Sf = S[:, free]
    nf = Sf.shape[1]
    G = np.zeros((NZ, nf))
    G[_A] = -Sf[3:]
    G[_E] = -Sf[:3]
    C = np.zeros((nf, NZ))
    C[:, _M] = Sf[:3].T
    C[:, _Q] = Sf[3:].T
    C[:, _ONE] = np.asarray(tau, dtype=float)[free]
    return H, G, C


@dataclass
class _Deduction:
    equation: TransferEquation
    body_B: dict = field(default_factory=dict)       # body id -> list of B_k
    body_geo: dict = field(default_factory=dict)     # body id -> list of (G_own, G_first)
    hinge_HG: dict = field(default_factory=dict)     # hinge id -> (H, G, free mask)
    stages: list = field(default_factory=list)       # (hinge id, P, Mrows)
    tip_cols: dict = field(default_factory=dict)     # tip body id -> first column
    root_cols: dict = field(default_factory=dict)    # root hinge id -> first column
    body_L: dict = field(default_factory=dict)       # body id -> (13, m): cut loads at its output
    cut_Gp: list = field(default_factory=list)       # per cut: (bi, Gp_in, bo, Gp_out)


def _driver_accelerations(system, t) -> np.ndarray:
    dd = np.zeros(system.nu_tot)
    if system.drivers:
        vals = system.driver_values(t)
        for j, k in enumerate(system.tree.drv_idx):
            if k >= 0:
                dd[j] = vals[k, 2]
    return dd


def _tip_paths(topo):
    paths, branch_paths = [], []
    branch = {topo.number[b] for b in topo.branch_bodies}
    for name in topo.tips:
        k = topo.number[name]
        path, to_branch, stopped = [k], [k], False
        while k != 0:
            k = topo.element(k).output
            path.append(k)
            if not stopped:
                to_branch.append(k)
                stopped = k in branch or k == 0
        paths.append((name, tuple(path)))
        branch_paths.append((name, tuple(to_branch)))
    return paths, branch_paths


def _upstream_tips(topo, k) -> list[str]:
    """Tips whose paths pass through element k."""
    out, stack = [], [k]
    while stack:
        e = topo.element(stack.pop())
        if e.kind == "body" and not e.inputs:
            out.append(e.name)
        stack.extend(e.inputs)
    return sorted(out, key=lambda n: topo.number[n])


def _eliminate(K, n_cols, hinge):
    """Solve the joint condition ``K [Y; 1] = 0`` for a change of the path unknowns.

    The ``nf`` unknowns to eliminate are chosen among the tip blocks' columns by QR with column
    pivoting on ``K``. Returns ``(Ac, P, Tm)``: ``Y_old[Ac] = Tm @ [Y_new; 1]``, the hinge's du
    taking the slots ``P`` (here ``Ac = P`` and ``Tm[:, P] = 0``).
    """
    nf = K.shape[0]
    Kc = K[:, :n_cols]
    _, R, piv = scipy.linalg.qr(Kc, mode="economic", pivoting=True)
    scale = max(np.abs(Kc).max(), 1e-300)
    if abs(R[nf - 1, nf - 1]) <= 1e-13 * scale:
        raise ModelError([Problem(f"Hinge '{hinge}'", "Type", "its joint condition is singular "
                                  "(no inertia beyond the hinge in the directions it frees)")])
    P = np.sort(piv[:nf])
    Tm = -np.linalg.solve(K[:, P], K)
    Tm[:, P] = 0.0
    return P, P, Tm


_CUT_DIRECTIONS = ("m_x", "m_y", "m_z", "m_n"), ("q_x", "q_y", "q_z")


def _cut_data(system):
    """The cut hinges' constraint geometry at the state of the last ``system.instant`` call.

    Reads the loop work arrays ``kernels.close_loops`` filled (``kernels.cut_geometry``: the
    blocked directions ``Ncol``, the points, the velocity terms, velocity and position errors),
    so that the supplementary equations use the kernel's numbers. Returns a list of dicts, one
    per cut hinge in ``System.cuts`` order.
    """
    C, L = system.tree.loops, system.work.loops
    stab0, stab1 = float(C.stab[0]), float(C.stab[1])
    out, row = [], 0
    for k, name in enumerate(system.cuts):
        m = int(C.c_m[k])
        code = int(C.c_code[k])
        dirs = tuple(lab for b, lab in enumerate(_CUT_DIRECTIONS[0]) if (K.CUT_ROT[code] >> b) & 1)
        dirs += tuple(lab for b, lab in enumerate(_CUT_DIRECTIONS[1])
                      if (K.CUT_TRANS[code] >> b) & 1)
        rs = slice(row, row + m)
        out.append(dict(name=name, bi=int(C.c_bi[k]), bo=int(C.c_bo[k]), p=L.pcut[k].copy(),
                        N=L.Ncol[rs].copy(), c=L.ccut[k].copy(), v_rel=L.vres[rs].copy(),
                        phi=L.phi[rs].copy(), rhs=-stab0 * L.vres[rs] - stab1 * L.phi[rs],
                        directions=dirs))
        row += m
    return out


def _point_map(r, w) -> np.ndarray:
    """(6, 13): ``[eps; a]`` of a body's material point at ``hp + r`` from the body's state
    ``z`` at ``hp`` (``a + eps x r + w x (w x r)``)."""
    G = np.zeros((6, NZ))
    G[0:3, _E] = _I3
    G[3:6, _A] = _I3
    G[3:6, _E] = -skew(r)
    G[3:6, _ONE] = np.cross(w, np.cross(w, r))
    return G


def _deduce(system, inst, dd, cuts=()) -> _Deduction:
    """Element matrices and the automatic deduction of the overall equation (see the module doc).

    ``cuts``: :func:`_cut_data` at the same state (closed loops).
    """
    topo, T = system.topology, system.tree
    index = system.index
    tips = [topo.number[n] for n in topo.tips]
    roots = [topo.number[n] for n in topo.roots]
    n_t = 6 * (len(tips) + len(roots))
    n_lam = sum(c["N"].shape[0] for c in cuts)
    couplers = system.model.couplers
    n_cp = len(couplers)
    n_y = n_t + n_lam + n_cp
    labels = []
    columns, rows = [], []
    d = _Deduction(equation=None)
    for k in tips:
        e = topo.element(k)
        d.tip_cols[k] = len(labels)
        lab = tuple(f"{e.name}.{s}" for s in STATE_LABELS[:6])
        columns.append(Block("tip", k, e.name, len(labels), len(labels) + 6, lab,
                             f"tip {k} {e.name}: free end [a; eps] at its hinge point, hinge du in "
                             "the places they took"))
        labels.extend(lab)
    for k in roots:
        e = topo.element(k)
        d.root_cols[k] = len(labels)
        lab = tuple(f"{e.name}.{s}" for s in STATE_LABELS[6:12])
        columns.append(Block("root", k, e.name, len(labels), len(labels) + 6, lab,
                             f"root {k} {e.name}: reaction [m; q] on the ground"))
        labels.extend(lab)
    # closed loops: the cut hinges' loads (unknowns), the loads' entry into their bodies and
    # the supplementary equations, filled in as the two bodies of each cut are reached
    body_loads: dict[int, list] = {}        # body index -> [(sign, first column, cut)]
    pending = []                            # per cut: its supplementary rows so far
    model = system.model
    for kc, cd in enumerate(cuts):
        name, m = cd["name"], cd["N"].shape[0]
        h = model.hinge(name)
        k = topo.number[name]
        c0 = len(labels)
        lab = tuple(f"{name}.lam_{s}" for s in cd["directions"])
        ends = []
        for side, ref, b in ((+1, h.input, cd["bi"]), (-1, h.output, cd["bo"])):
            ends.append((ref.body, topo.number.get(ref.body, 0)))
            if b >= 0:
                body_loads.setdefault(b, []).append((side, c0, kc))
        columns.append(Block("cut", k, name, c0, c0 + m, lab,
                             f"cut {k} {name}: constraint loads N lam, on {ends[0][1]} "
                             f"{ends[0][0]} (+) and {ends[1][1]} {ends[1][0]} (-) at p"))
        labels.extend(lab)
        row = np.zeros((m, n_y + 1))
        row[:, -1] = -cd["N"] @ cd["c"] - cd["rhs"]
        pending.append(row)
        d.cut_Gp.append([None, None])
    # couplers: a multiplier each (a column) and the supplementary row a du1 + b du2 = 0,
    # filled in as their hinges are reached
    C_loops = system.tree.loops
    cp_ab, cp_u = C_loops.cp_ab, C_loops.cp_u
    cp_col0 = len(labels)
    for kc, c in enumerate(couplers):
        col = cp_col0 + kc
        columns.append(Block("coupler", 0, c.name, col, col + 1, (f"{c.name}.lam",),
                             f"coupler {c.name} ({c.type}): multiplier lam, a lam on "
                             f"{c.first} and b lam on {c.second}"))
        labels.append(f"{c.name}.lam")
        pending.append(np.zeros((1, n_y + 1)))
    n_tip_cols = 6 * len(tips)
    live: dict[int, np.ndarray] = {}        # element id -> expression of its output state
    eq_rows: list[np.ndarray] = []          # equation rows, (r, n_y + 1) each
    substitutions = []

    def hp_of_hinge(hid):
        return inst.hp[index[topo.element(topo.element(hid).inputs[0]).name]]

    for e in topo.elements:
        if e.cut:
            continue
        k = e.id
        if e.kind == "body":
            i = index[e.name]
            if e.inputs:
                r_in = [hp_of_hinge(h) for h in e.inputs]
                z_in = [live.pop(h) for h in e.inputs]
            else:
                r_in = [inst.hp[i]]
                A = np.zeros((NZ, n_y + 1))
                c0 = d.tip_cols[k]
                A[0:6, c0:c0 + 6] = np.eye(6)
                A[_ONE, -1] = 1.0
                z_in = [A]
            JC = inst.R[i] @ T.JCl[i] @ inst.R[i].T
            f_C = inst.Wext[i, 3:]
            tau_C = inst.Wext[i, :3] - np.cross(inst.pc[i] - inst.hp[i], f_C)
            B, geo = body_transfer(T.mass[i], JC, inst.pc[i], inst.w[i], f_C, tau_C, inst.hp[i],
                                   r_in)
            d.body_B[k], d.body_geo[k] = B, geo
            live[k] = sum(Bk @ zk for Bk, zk in zip(B, z_in))
            if i in body_loads:
                # the cut loads on the body, sign * N_j lam_j at p: applied loads moved to hp
                Lb = np.zeros((NZ, n_lam))
                for side, c0, kc in body_loads[i]:
                    N, r = cuts[kc]["N"], cuts[kc]["p"] - inst.hp[i]
                    for j in range(N.shape[0]):
                        Lb[_Q, c0 - n_t + j] += side * N[j, 3:]
                        Lb[_M, c0 - n_t + j] += side * (N[j, :3] + np.cross(r, N[j, 3:]))
                d.body_L[k] = Lb
                live[k][:, n_t:n_t + n_lam] += Lb
                # the body's side of the supplementary equations: sign * N^T x_body(p)
                for side, c0, kc in body_loads[i]:
                    Gp = _point_map(cuts[kc]["p"] - inst.hp[i], inst.w[i])
                    d.cut_Gp[kc][0 if side > 0 else 1] = (k, Gp)
                    pending[kc] += side * (cuts[kc]["N"] @ Gp @ live[k])
            for j, (G_own, G_first) in enumerate(geo, start=1):
                r0 = sum(len(r) for r in eq_rows)
                eq_rows.append(G_own @ z_in[j] + G_first @ z_in[0])
                h1, hj = e.inputs[0], e.inputs[j]
                rows.append(Block("geometric", k, e.name, r0, r0 + 6,
                                  tuple(f"{e.name}[{hj}].{s}" for s in ("a_x", "a_y", "a_z",
                                                                        "eps_x", "eps_y",
                                                                        "eps_z")),
                                  f"geometric equations of branch body {k} {e.name}: input "
                                  f"{hj} {topo.element(hj).name} against input {h1} "
                                  f"{topo.element(h1).name}", input=hj))
        else:
            child = topo.element(e.inputs[0])
            i = index[child.name]
            nu, o = int(T.nu[i]), int(T.uo[i])
            drv = T.driven[o:o + nu].astype(bool)
            H, G, C = hinge_transfer(inst.Sg[i][:, :nu], inst.cg[i], inst.tau[o:o + nu], drv,
                                     dd[o:o + nu])
            d.hinge_HG[k] = (H, G, ~drv)
            zI = live.pop(child.id)
            nf = G.shape[1]
            # this hinge's coordinates in the couplers: (coupler, coefficient, coordinate)
            coupled = [(kc, float(cp_ab[kc, side]), int(cp_u[kc, side]) - o)
                       for kc in range(n_cp) for side in range(2)
                       if o <= int(cp_u[kc, side]) < o + nu]
            free_row = np.cumsum(~drv) - 1            # coordinate -> row of the free ones
            for kc, ab, j in coupled:
                if drv[j]:                             # a known: the driver's acceleration
                    pending[len(cuts) + kc][0, -1] += ab * dd[o + j]
            if nf:
                K = C @ zI
                for kc, ab, j in coupled:
                    if not drv[j]:                     # a lam on its joint condition
                        K[free_row[j], cp_col0 + kc] += ab
                Ac, P, Tm = _eliminate(K, n_tip_cols, e.name)
                # substitute Y_old[Ac] = Tm @ Y_new everywhere; the du take the slots P

                def sub(A):
                    if not np.any(A[:, Ac]):
                        return A
                    A2 = A.copy()
                    A2[:, Ac] = 0.0
                    A2 += A[:, Ac] @ Tm
                    return A2
                zI = sub(zI)
                for key in list(live):
                    live[key] = sub(live[key])
                eq_rows[:] = [sub(r) for r in eq_rows]
                pending[:] = [sub(r) for r in pending]
                hname = e.name
                htype = system.model.hinge(hname).type
                names = [nm for nm, f in zip(velocity_coordinate_names(htype), ~drv) if f]
                du_labels = tuple(f"{hname}.du_{nm}" for nm in names)
                substitutions.append(Substitution(hname, k, tuple(int(p) for p in P),
                                                  tuple(labels[p] for p in P), du_labels))
                for p, lab in zip(P, du_labels):
                    labels[p] = lab
                d.stages.append((k, Ac, P, Tm))
                for kc, ab, j in coupled:
                    if not drv[j]:                     # the coupler's row: b du of this one
                        pending[len(cuts) + kc][0, P[free_row[j]]] += ab
                zO = H @ zI
                zO[:, P] += G
            else:
                zO = H @ zI
            if e.output == 0:
                r0 = sum(len(r) for r in eq_rows)
                row = zO[:12].copy()
                c0 = d.root_cols[k]
                row[6:12, c0:c0 + 6] -= np.eye(6)
                eq_rows.append(row)
                rows.append(Block("main", k, e.name, r0, r0 + 12,
                                  tuple(f"{e.name}.{s}" for s in STATE_LABELS[:12]),
                                  f"main transfer equation at root {k} {e.name}: "
                                  f"z_root = U z (a = eps = 0 on the ground)"))
            else:
                live[k] = zO
    boundaries = []
    for kc, cd in enumerate(cuts):
        name, m = cd["name"], cd["N"].shape[0]
        k = topo.number[name]
        h = model.hinge(name)
        r0 = sum(len(r) for r in eq_rows)
        eq_rows.append(pending[kc])
        b_in, b_out = h.input.body, h.output.body
        rows.append(Block("supplementary", k, name, r0, r0 + m,
                          tuple(f"{name}.{s}" for s in cd["directions"]),
                          f"supplementary equations of cut {k} {name}: "
                          f"N^T (x_{b_in}(p) - x_{b_out}(p) - c) = rhs"))
        cb = next(b for b in columns if b.kind == "cut" and b.name == name)
        boundaries.append(CutBoundary(name, k, h.type, b_in, b_out, topo.number.get(b_in, 0),
                                      topo.number.get(b_out, 0), cd["p"], cd["N"],
                                      cd["directions"], cd["c"], cd["v_rel"], cd["phi"],
                                      cd["rhs"], (cb.start, cb.stop), (r0, r0 + m)))
    unknowns = []
    for kc, c in enumerate(couplers):
        r0 = sum(len(r) for r in eq_rows)
        eq_rows.append(pending[len(cuts) + kc])
        first, second = f"{c.first.hinge}.{c.first.coordinate}", \
            f"{c.second.hinge}.{c.second.coordinate}"
        rows.append(Block("coupler", 0, c.name, r0, r0 + 1, (f"{c.name}.a_du1+b_du2",),
                          f"supplementary equation of coupler {c.name}: a du({first}) + "
                          f"b du({second}) = 0"))
        unknowns.append(CouplerUnknown(c.name, c.type, first, second, float(cp_ab[kc, 0]),
                                       float(cp_ab[kc, 1]), cp_col0 + kc, r0))
    U_all = np.vstack(eq_rows) if eq_rows else np.zeros((0, 1))
    paths, branch_paths = _tip_paths(topo)
    d.equation = TransferEquation(inst.t, paths, branch_paths, rows, columns, labels,
                                  substitutions, U_all, boundaries, unknowns)
    return d


def transfer_equation(system, t: float, y) -> TransferEquation:
    """The overall transfer equation of ``system`` at ``(t, y)``."""
    inst = system.instant(t, np.asarray(y, dtype=float))
    return _deduce(system, inst, _driver_accelerations(system, t), _cut_data(system)).equation


def solve(system, t: float, y) -> MstmmResult:
    """Accelerations, hinge wrenches and driver loads at ``(t, y)`` by the product form.

    Parameters
    ----------
    system : System
    t : float
    y : (ny,) state ``[q; u]`` (driven coordinates are overridden by their drivers)

    Closed loops: the cut hinges' loads are unknowns of the overall equation
    (:meth:`TransferEquation.solution`); a state that does not satisfy the loops exactly is
    driven back by the supplementary equations' Baumgarte terms, as in the Riccati kernel.
    """
    inst = system.instant(t, np.asarray(y, dtype=float))
    dd = _driver_accelerations(system, t)
    d = _deduce(system, inst, dd, _cut_data(system))
    eq = d.equation
    topo, T = system.topology, system.tree
    index = system.index
    Z = eq.solution()
    n_t = eq.n_tree
    n_lam = sum(c.N.shape[0] for c in eq.cuts)
    lam = Z[n_t:n_t + n_lam]
    lam_cp = Z[n_t + n_lam:]
    # undo the substitutions: every hinge's du, then the tips' accelerations
    Yh = np.append(Z, 1.0)
    du = {}
    for k, Ac, P, Tm in reversed(d.stages):
        du[k] = Yh[P].copy()
        Yh[Ac] = Tm @ Yh
    # sweep the elements once more, tips to roots
    n = len(system.bodies)
    states, tip_states = {}, {}
    udot = dd.copy()
    x, Wh = np.zeros((n, 6)), np.zeros((n, 6))
    tau = inst.tau.copy()
    residual = 0.0
    for e in topo.elements:
        if e.cut:
            continue
        k = e.id
        if e.kind == "body":
            if e.inputs:
                z_in = [states[h] for h in e.inputs]
            else:
                c0 = d.tip_cols[k]
                z = np.zeros(NZ)
                z[0:6] = Yh[c0:c0 + 6]
                z[_ONE] = 1.0
                tip_states[e.name] = z
                z_in = [z]
            states[k] = sum(Bk @ zk for Bk, zk in zip(d.body_B[k], z_in))
            if k in d.body_L:
                states[k] = states[k] + d.body_L[k] @ lam
            for j, (G_own, G_first) in enumerate(d.body_geo[k], start=1):
                residual = max(residual, np.abs(G_own @ z_in[j] + G_first @ z_in[0]).max())
            i = index[e.name]
            z = states[k]
            x[i, :3], x[i, 3:] = z[_E], z[_A]
            Wh[i, :3], Wh[i, 3:] = -z[_M], -z[_Q]
        else:
            H, G, free = d.hinge_HG[k]
            child = topo.element(e.inputs[0])
            zO = H @ states[child.id]
            i = index[child.name]
            nu, o = int(T.nu[i]), int(T.uo[i])
            if G.shape[1]:
                zO += G @ du[k]
                udot[o:o + nu][free] = du[k]
            S = inst.Sg[i][:, :nu]
            for j in range(nu):
                if not free[j]:
                    tau[o + j] = S[:, j] @ Wh[i]
            states[k] = zO
            if e.output == 0:
                residual = max(residual, np.abs(zO[0:6]).max())
    # the cut hinges: their loads as wrenches, and the supplementary equations' residuals
    Wcut = np.zeros((len(eq.cuts), 6))
    for kc, cb in enumerate(eq.cuts):
        lam_k = Z[cb.columns[0]:cb.columns[1]]
        Wcut[kc] = cb.N.T @ lam_k
        rel = -cb.c
        for side, end in zip((1.0, -1.0), d.cut_Gp[kc]):
            if end is not None:
                k, Gp = end
                rel = rel + side * (Gp @ states[k])
        residual = max(residual, np.abs(cb.N @ rel - cb.rhs).max(initial=0.0))
    # what the cut hinges apply on their input bodies: their springs' and dampers' loads too
    # (applied loads of the instant, elements.forces.cut_spring)
    cut_spring.add_wrenches(system.forces.cut_spring, inst.R, inst.pb, inst.hp, inst.w, inst.vh,
                            Wcut)
    # the couplers: a driven coordinate's share is not the driver's; their rows' residuals
    for kc, (cu, lc) in enumerate(zip(eq.couplers, lam_cp)):
        j1, j2 = int(T.loops.cp_u[kc, 0]), int(T.loops.cp_u[kc, 1])
        for jv, ab in ((j1, cu.a), (j2, cu.b)):
            if T.driven[jv]:
                tau[jv] -= ab * lc
        residual = max(residual, abs(cu.a * udot[j1] + cu.b * udot[j2]))
    scale = max(np.abs(x).max(), 1.0)
    driver_loads = np.zeros(len(system.drivers))
    for j, kdrv in enumerate(T.drv_idx):
        if kdrv >= 0:
            driver_loads[kdrv] = tau[j]
    return MstmmResult(t, udot, x, Wh, tau, driver_loads, states, tip_states, eq, Z,
                       residual / scale, lam, Wcut, lam_cp)
