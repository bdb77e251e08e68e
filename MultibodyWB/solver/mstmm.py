"""The transfer matrix method for multibody systems (MSTMM), product form, for trees.

This is the classical form of the method: element transfer matrices on 13-component state vectors,
multiplied along the transfer paths from the tips to the roots, and the *automatic deduction of the
overall transfer equation* ``U_all Z_all = 0`` from the topology alone. It shares the element
library of the Riccati form (:mod:`.kernels`): the hinges' ``S``, ``c`` and loads ``tau`` and the
bodies' poses, velocities and applied loads come from :meth:`.system.System.instant`; the mass
properties from :attr:`.system.System.tree`. Its results (``udot``, body accelerations, hinge
wrenches, driver loads) equal the Riccati kernel's to round-off; the product form exists to expose
the overall transfer equation (its paths, block structure, order and numbers), not for speed or
for long chains (see *Precision* below).

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
square. After the solve, the substitutions are undone (giving every tip's accelerations and every
hinge's ``du``) and one sweep of the element matrices from the tips to the roots recovers every
internal state vector.

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

import textwrap
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from .model import HINGE_TYPES, ModelError, Problem

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


# --------------------------------------------------------------------------------------------------
# the overall transfer equation
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Block:
    """A block of rows or columns of the overall transfer matrix.

    ``kind``: rows ``'main'`` (main transfer equation at a root hinge) or ``'geometric'``
    (geometric equations of a branch body's extra input); columns ``'tip'`` (a tip's path
    unknowns) or ``'root'`` (a root hinge's reaction ``[m; q]`` on the ground).
    ``element``: the element number (root hinge, branch body, tip body); ``name`` its name;
    ``start, stop``: the row or column range; ``labels``: one per row or column; ``text``: a
    one-line description; ``input``: for geometric rows, the number of the branch body's input
    hinge they tie to its first input (0 otherwise).
    """

    kind: str
    element: int
    name: str
    start: int
    stop: int
    labels: tuple[str, ...]
    text: str
    input: int = 0

    @property
    def size(self) -> int:
        return self.stop - self.start


@dataclass(frozen=True)
class Substitution:
    """A hinge's elimination: its free coordinates' accelerations replace the unknowns
    ``replaced`` (columns ``columns`` of the overall equation)."""

    hinge: str
    element: int
    columns: tuple[int, ...]
    replaced: tuple[str, ...]
    du: tuple[str, ...]


@dataclass
class TransferEquation:
    """The overall transfer equation ``U_all [Z; 1] = 0`` of a tree at one instant.

    Attributes
    ----------
    t : float
    paths : list of (tip name, tuple of element numbers)
        Transfer path of every tip, from the tip to the boundary (ending with 0).
    branch_paths : list of (tip name, tuple of element numbers)
        Each tip's path to the next branch body (inclusive), or to the boundary.
    rows, columns : list of Block
        Row blocks (equations) and column blocks (boundaries).
    unknowns : list of str
        The label of every component of ``Z`` (after the hinges' substitutions).
    substitutions : list of Substitution
        In element order.
    U_all : (n, n + 1)
        The overall transfer matrix; its last column multiplies the constant 1.
    """

    t: float
    paths: list
    branch_paths: list
    rows: list
    columns: list
    unknowns: list
    substitutions: list
    U_all: np.ndarray

    @property
    def order(self) -> int:
        """Number of unknowns (= number of equations)."""
        return self.U_all.shape[0]

    @property
    def U(self) -> np.ndarray:
        """The square part of ``U_all`` (the coefficients of the unknowns)."""
        return self.U_all[:, :-1]

    @property
    def rhs(self) -> np.ndarray:
        """Right-hand side: ``U Z = rhs`` (the knowns moved over)."""
        return -self.U_all[:, -1]

    def cond(self) -> float:
        """2-norm condition number of ``U``, and of ``U`` with rows and columns equilibrated."""
        return float(np.linalg.cond(self.U)) if self.order else 1.0

    def cond_scaled(self) -> float:
        """Condition number after scaling every row and column to unit max norm (units removed)."""
        if not self.order:
            return 1.0
        U = np.abs(self.U)
        r = 1.0 / np.maximum(U.max(axis=1), 1e-300)
        c = 1.0 / np.maximum((U * r[:, None]).max(axis=0), 1e-300)
        return float(np.linalg.cond(self.U * r[:, None] * c[None, :]))

    def pattern(self) -> list[list[bool]]:
        """Which (row block, column block) pairs hold non-zero entries."""
        return [[bool(np.any(self.U[rb.start:rb.stop, cb.start:cb.stop] != 0.0))
                 for cb in self.columns] for rb in self.rows]


@dataclass
class MstmmResult:
    """What :func:`solve` returns (global axes, SI units; ``System``'s layouts).

    Attributes
    ----------
    udot : (nu,) velocity-coordinate rates (driven ones = the drivers' accelerations)
    x : (n, 6) body accelerations ``[eps; a]`` at the hinge points (as ``Instant.x``)
    Wh : (n, 6) wrench ``[torque; force]`` of each tree hinge on its child at ``hp``
        (``Instant.Wh``)
    tau : (nu,) hinge loads; driven coordinates: the load the driver applies (as the kernel)
    driver_loads : (nd,) the drivers' loads, in ``System.drivers`` order
    states : dict element number -> (13,) state vector at the element's output
    tip_states : dict tip name -> (13,) state vector at the tip's free end
    equation : TransferEquation
    unknowns : (n,) the solution ``Z``
    residual : float
        Largest residual after the final sweep: ground accelerations at the roots and geometric
        equations at the branch bodies (relative to the largest acceleration).
    """

    t: float
    udot: np.ndarray
    x: np.ndarray
    Wh: np.ndarray
    tau: np.ndarray
    driver_loads: np.ndarray
    states: dict
    tip_states: dict
    equation: TransferEquation
    unknowns: np.ndarray
    residual: float


@dataclass
class _Deduction:
    equation: TransferEquation
    body_B: dict = field(default_factory=dict)       # body id -> list of B_k
    body_geo: dict = field(default_factory=dict)     # body id -> list of (G_own, G_first)
    hinge_HG: dict = field(default_factory=dict)     # hinge id -> (H, G, free mask)
    stages: list = field(default_factory=list)       # (hinge id, P, Mrows)
    tip_cols: dict = field(default_factory=dict)     # tip body id -> first column
    root_cols: dict = field(default_factory=dict)    # root hinge id -> first column


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


def _deduce(system, inst, dd) -> _Deduction:
    """Element matrices and the automatic deduction of the overall equation (see the module doc)."""
    topo, T = system.topology, system.tree
    if topo.cut_hinges:     # System refuses loops already
        raise ModelError([Problem(f"Hinge '{h}'", "Type", "closes a loop; the product form "
                                  "handles trees") for h in topo.cut_hinges])
    index = system.index
    tips = [topo.number[n] for n in topo.tips]
    roots = [topo.number[n] for n in topo.roots]
    n_y = 6 * (len(tips) + len(roots))
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
            if nf:
                K = C @ zI
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
                hname = e.name
                htype = system.model.hinge(hname).type
                names = [nm for nm, f in zip(velocity_coordinate_names(htype), ~drv) if f]
                du_labels = tuple(f"{hname}.du_{nm}" for nm in names)
                substitutions.append(Substitution(hname, k, tuple(int(p) for p in P),
                                                  tuple(labels[p] for p in P), du_labels))
                for p, lab in zip(P, du_labels):
                    labels[p] = lab
                d.stages.append((k, Ac, P, Tm))
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
    U_all = np.vstack(eq_rows) if eq_rows else np.zeros((0, 1))
    paths, branch_paths = _tip_paths(topo)
    d.equation = TransferEquation(inst.t, paths, branch_paths, rows, columns, labels,
                                  substitutions, U_all)
    return d


def transfer_equation(system, t: float, y) -> TransferEquation:
    """The overall transfer equation of ``system`` at ``(t, y)``."""
    inst = system.instant(t, np.asarray(y, dtype=float))
    return _deduce(system, inst, _driver_accelerations(system, t)).equation


def solve(system, t: float, y) -> MstmmResult:
    """Accelerations, hinge wrenches and driver loads at ``(t, y)`` by the product form.

    Parameters
    ----------
    system : System
    t : float
    y : (ny,) state ``[q; u]`` (driven coordinates are overridden by their drivers)
    """
    inst = system.instant(t, np.asarray(y, dtype=float))
    dd = _driver_accelerations(system, t)
    d = _deduce(system, inst, dd)
    eq = d.equation
    topo, T = system.topology, system.tree
    index = system.index
    Z = np.linalg.solve(eq.U, eq.rhs) if eq.order else np.zeros(0)
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
    scale = max(np.abs(x).max(), 1.0)
    driver_loads = np.zeros(len(system.drivers))
    for j, kdrv in enumerate(T.drv_idx):
        if kdrv >= 0:
            driver_loads[kdrv] = tau[j]
    return MstmmResult(t, udot, x, Wh, tau, driver_loads, states, tip_states, eq, Z,
                       residual / scale)


# --------------------------------------------------------------------------------------------------
# report and command line
# --------------------------------------------------------------------------------------------------

_FULL_MAX = 24          #: print every column block up to this order; non-zero blocks beyond
_BLOCKS_MAX = 40        #: print at most this many blocks
_CHOP = 1e-13           #: entries below this fraction of max|U| are round-off: shown as 0


def _fmt_matrix(M, row_labels, col_heads, chop, width=11) -> list[str]:
    lw = max([len(s) for s in row_labels] + [4])
    out = [" " * (lw + 2) + "".join(f"{c:>{width}}" for c in col_heads)]
    for lab, row in zip(row_labels, M):
        cells = "".join(f"{'0':>{width}}" if abs(v) <= chop else f"{v:>{width}.3e}" for v in row)
        out.append(f"  {lab:<{lw}}{cells}")
    return out


def equation_report(model, t: float = 0.0) -> str:
    """The overall transfer equation of ``model`` at time ``t``, as text.

    The model's initial state is used (drivers evaluated at ``t``). Shows the element numbering,
    the transfer paths, the hinges' eliminations, the block structure and order of ``U_all``, its
    numbers (whole up to order 24, else block by block), its condition number and the solution.
    """
    from .system import System
    system = System(model)
    y = system.initial_state()
    res = solve(system, t, y)
    eq = res.equation
    topo = system.topology
    L = [f"Overall transfer equation of '{model.name}' (MSTMM product form) at t = {t:g} s",
         "",
         "State vector at a connection point: z = [a; eps; m; q; 1] (13 x 1, global axes);",
         "m, q: moment and force the tip-side element exerts on the root-side element.",
         "",
         "Elements (uniform numbering, 0 = the ground, the boundary):"]
    L += ["  " + s for s in topo.table().splitlines()]
    L += ["", "Transfer paths (tip -> boundary 0):"]
    for name, path in eq.paths:
        L.append(f"  tip {name:<12} " + " -> ".join(str(k) for k in path))
    if topo.branch_bodies:
        L += ["Paths to the next branch body (geometric equations):"]
        for name, path in eq.branch_paths:
            L.append(f"  tip {name:<12} " + " -> ".join(str(k) for k in path))
    L += ["", "Hinge eliminations (joint condition S^T F + tau = 0 replaces unknowns by du):"]
    if not eq.substitutions:
        L.append("  none")
    for s in eq.substitutions:
        pairs = ", ".join(f"{a} -> {b}" for a, b in zip(s.replaced, s.du))
        L += textwrap.wrap(f"{s.element:>3} {s.hinge}: {pairs}", width=96, initial_indent="  ",
                           subsequent_indent=" " * 8)
    L += ["", f"U_all [Z; 1] = 0: {eq.order} equations, {eq.order} unknowns "
              f"(order {eq.order} = 6 x ({len(topo.tips)} tips + {len(topo.roots)} roots))",
          "Row blocks (equations):"]
    for b in eq.rows:
        L.append(f"  rows {b.start:>3}-{b.stop - 1:<3} {b.text}")
    L.append("Column blocks (unknowns Z):")
    for b in eq.columns:
        L.append(f"  cols {b.start:>3}-{b.stop - 1:<3} {b.text}")
        L += textwrap.wrap(", ".join(f"{c}:{eq.unknowns[c]}" for c in range(b.start, b.stop)),
                           width=96, initial_indent=" " * 14, subsequent_indent=" " * 14)
    L.append("Block pattern (X: non-zero):")
    tags = [f"{b.kind[0].upper()}{b.element}" for b in eq.columns]
    L.append(" " * 14 + "".join(f"{s:>6}" for s in tags) + "   rhs")
    for rb, pat in zip(eq.rows, eq.pattern()):
        rtag = f"main {rb.element}" if rb.kind == "main" else f"geo {rb.element}/{rb.input}"
        nz_rhs = "X" if np.any(eq.rhs[rb.start:rb.stop] != 0.0) else "."
        L.append(f"  {rtag:<12}" + "".join(f"{'X' if p else '.':>6}" for p in pat)
                 + f"{nz_rhs:>6}")
    L += ["", "Numbers: U (columns by block, headed by column index) and the right-hand side"]
    rlab = [lab for b in eq.rows for lab in b.labels]
    chop = _CHOP * (np.abs(eq.U_all).max() if eq.order else 0.0)
    L.append(f"(|entries| <= {chop:.1e}, i.e. {_CHOP:g} of the largest, are round-off and "
             "shown as 0)")
    pattern = eq.pattern()
    if eq.order > _FULL_MAX:
        L.append(f"  order {eq.order} > {_FULL_MAX}: only the non-zero blocks are shown")
    shown = 0
    for jc, cb in enumerate(eq.columns):
        heads = [str(c) for c in range(cb.start, cb.stop)]
        if eq.order <= _FULL_MAX:
            L.append(f"  cols {cb.start}-{cb.stop - 1} ({cb.kind} {cb.element} {cb.name}):")
            L += ["  " + s for s in _fmt_matrix(eq.U[:, cb.start:cb.stop], rlab, heads, chop)]
            continue
        for jr, rb in enumerate(eq.rows):
            if not pattern[jr][jc]:
                continue
            shown += 1
            if shown > _BLOCKS_MAX:
                continue
            L.append(f"  rows {rb.start}-{rb.stop - 1} ({rb.kind} {rb.element} {rb.name}) x "
                     f"cols {cb.start}-{cb.stop - 1} ({cb.kind} {cb.element} {cb.name}):")
            L += ["  " + s for s in _fmt_matrix(eq.U[rb.start:rb.stop, cb.start:cb.stop],
                                                rlab[rb.start:rb.stop], heads, chop)]
    if shown > _BLOCKS_MAX:
        L.append(f"  ... {shown - _BLOCKS_MAX} further non-zero blocks left out "
                 f"(at most {_BLOCKS_MAX} are shown)")
    L.append("  right-hand side:")
    L += ["  " + s for s in _fmt_matrix(eq.rhs[:, None], rlab, ["rhs"], chop)]
    L += ["", f"cond(U) = {eq.cond():.3e} (rows and columns equilibrated: "
              f"{eq.cond_scaled():.3e})", "", "Solution Z:"]
    for lab, v in zip(eq.unknowns, res.unknowns):
        L.append(f"  {lab:<28} {v:>14.6e}")
    L.append(f"Residual after the final sweep: {res.residual:.2e}")
    return "\n".join(L)


def cmd_equation(args, out) -> int:
    """``equation MODEL.xml [--t T]``: print :func:`equation_report`; 2 for an invalid model."""
    from .cli import EXIT_INVALID, EXIT_OK, _load, _print_problems
    model, problems = _load(args.model)
    if problems:
        _print_problems(args.model, problems, out)
        return EXIT_INVALID
    try:
        text = equation_report(model, args.t)
    except ModelError as exc:
        _print_problems(args.model, exc.problems, out)
        return EXIT_INVALID
    print(text, file=out)
    return EXIT_OK


def add_equation_command(subparsers):
    """Add ``equation MODEL.xml [--t T]`` to the command line's argparse ``subparsers``."""
    p = subparsers.add_parser("equation", help="print the overall transfer equation (MSTMM)")
    p.add_argument("model", help="neutral model file (*.mbs.xml)")
    p.add_argument("--t", type=float, default=0.0, metavar="T",
                   help="time at which the equation is formed, s (default 0)")
    p.set_defaults(func=cmd_equation)
    return p
