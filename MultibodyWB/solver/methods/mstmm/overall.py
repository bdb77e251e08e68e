"""The overall transfer equation of the MSTMM product form (:mod:`.transfer`) as data: its row
and column blocks (:class:`Block`), the substitutions and cut boundaries the deduction made, the
couplers' unknowns, the equation itself with its numbers (:class:`TransferEquation`: ``U``, the
right-hand side, order, rank, conditioning, solution, pattern) and what solving it gives
(:class:`MstmmResult`). :mod:`.transfer` deduces it; ``run/equation.py`` writes it out."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.linalg


# --------------------------------------------------------------------------------------------------
# the overall transfer equation
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Block:
    """A block of rows or columns of the overall transfer matrix.

    ``kind``: rows ``'main'`` (main transfer equation at a root hinge), ``'geometric'``
    (geometric equations of a branch body's extra input) or ``'supplementary'`` (the kinematic
    condition of a cut hinge); columns ``'tip'`` (a tip's path unknowns), ``'root'`` (a root
    hinge's reaction ``[m; q]`` on the ground) or ``'cut'`` (a cut hinge's constraint loads).
    ``element``: the element number (root hinge, branch body, tip body, cut hinge); ``name`` its
    name;
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


@dataclass(frozen=True)
class CutBoundary:
    """A cut hinge as a pair of boundaries (closed loops), at one instant.

    Attributes
    ----------
    hinge : str
        The cut hinge's name; ``element`` its number, ``type`` its type.
    input_body, output_body : str
        The parts of its input and output markers (the ground's name for the ground);
        ``input_element``, ``output_element`` their numbers (0: the ground).
    point : (3,)
        The input marker's origin ``p`` (global, m): both boundaries of the pair sit there, one
        on each body.
    N : (m, 6)
        ``N^T``: the directions the hinge blocks, one per row, ``[rotation; translation]`` in
        global axes (``kernels.cut_geometry``'s ``Ncol``): the load ``lam_j`` is a wrench
        ``N_j lam_j`` (torque; force) on the input body at ``p`` and ``-N_j lam_j`` on the output
        body, ``N_j`` the row ``j``.
    directions : tuple of str
        The blocked directions in the output marker's axes (``m_x`` ... rotations, ``m_n`` the
        universal hinge's blocked rotation about ``Rx(a) e_z``, ``q_x`` ... translations).
    c : (6,)
        Velocity terms of the condition ``[w_out x w_rel; 2 w_out x v_rel]`` (+ the universal's
        own term), rad/s^2 and m/s^2.
    v_rel : (m,)
        ``N^T`` (relative velocity of the input body's point to the output body's at ``p``).
    phi : (m,)
        Position error in the blocked directions (rad, m).
    rhs : (m,)
        Right-hand side of the supplementary equations, ``-2 w v_rel - w^2 phi`` (Baumgarte).
    columns, rows : (int, int)
        Its load columns and its supplementary rows in the overall equation (start, stop).
    """

    hinge: str
    element: int
    type: str
    input_body: str
    output_body: str
    input_element: int
    output_element: int
    point: np.ndarray
    N: np.ndarray
    directions: tuple[str, ...]
    c: np.ndarray
    v_rel: np.ndarray
    phi: np.ndarray
    rhs: np.ndarray
    columns: tuple[int, int]
    rows: tuple[int, int]


@dataclass(frozen=True)
class CouplerUnknown:
    """A coupler as an unknown of the overall equation: its multiplier ``lam`` (one column),
    which adds ``a lam`` to the first coordinate's joint condition and ``b lam`` to the
    second's (``S^T F + tau + a lam = 0``; on a driven coordinate the driver takes it), and its
    supplementary equation ``a du_1 + b du_2 = 0`` (one row; a driven coordinate's ``du`` is
    its driver's acceleration, a known).

    Attributes
    ----------
    name, type : str
    first, second : str
        ``hinge.coordinate`` of its two coordinates; ``a``, ``b`` their coefficients.
    column, row : int
        Its column (the unknown ``lam``) and its supplementary row in the overall equation.
    """

    name: str
    type: str
    first: str
    second: str
    a: float
    b: float
    column: int
    row: int


@dataclass
class TransferEquation:
    """The overall transfer equation ``U_all [Z; 1] = 0`` of a system at one instant.

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
    cuts : list of CutBoundary
        The cut hinges (closed loops), in ``System.cuts`` order; empty for a tree. Their load
        columns and supplementary rows come after the tree's ``n_tree``.
    couplers : list of CouplerUnknown
        The couplers, in the model's order: their multipliers' columns and supplementary rows
        come last, after the cut hinges'.
    """

    t: float
    paths: list
    branch_paths: list
    rows: list
    columns: list
    unknowns: list
    substitutions: list
    U_all: np.ndarray
    cuts: list = field(default_factory=list)
    couplers: list = field(default_factory=list)

    @property
    def n_tree(self) -> int:
        """Order of the tree part: the unknowns (and equations) before the cut hinges' loads
        and the couplers' multipliers."""
        return self.order - sum(c.N.shape[0] for c in self.cuts) - len(self.couplers)

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
        return float(np.linalg.cond(self._scaled()))

    def rank(self) -> int:
        """Numerical rank of ``U`` (singular values above 1e-10 of the largest, with rows and
        columns equilibrated); less than the order when cut hinges' constraints are redundant."""
        if not self.order:
            return 0
        sv = np.linalg.svd(self._scaled(), compute_uv=False)
        return int(np.sum(sv > 1e-10 * sv[0]))

    def _scaled(self) -> np.ndarray:
        U = np.abs(self.U)
        r = 1.0 / np.maximum(U.max(axis=1), 1e-300)
        c = 1.0 / np.maximum((U * r[:, None]).max(axis=0), 1e-300)
        return self.U * r[:, None] * c[None, :]

    def solution(self) -> np.ndarray:
        """The solution ``Z`` of ``U Z = rhs``.

        A tree: ``U`` is regular, one LU solve. With cut hinges, by blocks: the tree unknowns
        ``Z_t`` in terms of the loads ``lam`` (``U_tt``, the tree's own overall matrix, is
        regular), then the ``m x m`` equation of the loads (and the couplers' multipliers) from
        the supplementary rows,
        ``(U_sl - U_st U_tt^-1 U_tl) lam = rhs_s - U_st U_tt^-1 rhs_t``, solved with a
        pseudo-inverse (singular values below 1e-10 of the largest dropped, as the Riccati
        kernel's ``close_loops``; and all of them when the largest is round-off of the terms
        forming the matrix: loads that move nothing): redundant constraints (a planar loop of
        revolute hinges in 3D) make ``U`` singular, and the loads they leave undetermined are
        the minimum-norm ones.
        """
        if not self.order:
            return np.zeros(0)
        if not self.cuts and not self.couplers:
            return np.linalg.solve(self.U, self.rhs)
        n = self.n_tree
        U, b = self.U, self.rhs
        lu = scipy.linalg.lu_factor(U[:n, :n])
        Xt = scipy.linalg.lu_solve(lu, np.column_stack([b[:n], U[:n, n:]]))
        A = U[n:, n:] - U[n:, :n] @ Xt[:, 1:]
        r = b[n:] - U[n:, :n] @ Xt[:, 0]
        Us, sv, Vt = np.linalg.svd(A)
        # A = 0 (loads that move nothing: a cut between welded bodies) comes out as round-off
        # here, an exact 0 in the kernel: no load then. Its scale: the largest entries of its
        # factors
        Ui = scipy.linalg.lu_solve(lu, np.eye(n))
        terms = max(np.abs(U[n:, n:]).max(),
                    np.abs(U[n:, :n]).max() * np.abs(Ui).max() * np.abs(U[:n, n:]).max())
        keep = sv > max(1e-10 * sv[0], 1e-13 * terms)
        lam = Vt[keep].T @ ((Us[:, keep].T @ r) / sv[keep])
        return np.concatenate([Xt[:, 0] - Xt[:, 1:] @ lam, lam])

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
        Largest residual after the final sweep: ground accelerations at the roots, geometric
        equations at the branch bodies and the cut hinges' supplementary equations (relative to
        the largest acceleration).
    lam : (m,) the cut hinges' constraint loads (N m, N), in the order of their columns
    coupler_lam : (ncp,) the couplers' multipliers (their loads: a lam, b lam), model order
    Wcut : (nc, 6) wrench ``[torque; force]`` each cut hinge applies on its input body at its
        input marker origin (``Instant.Wcut``); the output body receives the opposite
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
    lam: np.ndarray = field(default_factory=lambda: np.zeros(0))
    Wcut: np.ndarray = field(default_factory=lambda: np.zeros((0, 6)))
    coupler_lam: np.ndarray = field(default_factory=lambda: np.zeros(0))
