"""The overall transfer equation of a model as text: what ``multibodywb check --equation`` prints
and the GUI's Equation view shows.

The equation itself (its blocks, paths, numbers and solution) is deduced by the MSTMM product form,
:mod:`..methods.mstmm.transfer`; this module only writes it out for people, so it sits above the
methods.
"""

from __future__ import annotations

import textwrap

import numpy as np

from ..methods.mstmm.system import System
from ..methods.mstmm.transfer import solve

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


def _coupler_report(system, eq, res) -> list:
    """The couplers' part of :func:`equation_report`: their unknowns and supplementary rows."""
    L = ["", "Couplers (a u1 + b u2 = 0): each an unknown multiplier lam of U_all, which adds",
         "a lam to the first coordinate's joint condition and b lam to the second's",
         "(S^T F + tau + a lam = 0; a driven coordinate's share goes to its driver), and a",
         "supplementary row a du1 + b du2 = 0 (a driven coordinate's du: its driver's "
         "acceleration):"]
    for cu, lam in zip(eq.couplers, res.coupler_lam):
        L.append(f"  {cu.name:<12} {cu.type:<12} {cu.first} (a = {cu.a:.6g}), {cu.second} "
                 f"(b = {cu.b:.6g}): col {cu.column}, row {cu.row}, lam = {lam:.6g}")
    return L


def equation_report(model, t: float = 0.0) -> str:
    """The overall transfer equation of ``model`` at time ``t``, as text.

    The model's initial state is used (as the run reads the model: :func:`.start.resolve`;
    loops closed by :func:`.assembly.assembled_state`; drivers evaluated at ``t``). Shows the
    element numbering, the transfer paths, the cut hinges' boundary pairs and supplementary
    equations (closed loops), the hinges' eliminations, the block structure and order of
    ``U_all``, its numbers (whole up to order 24, else block by block), its condition number
    (and rank, with loops) and the solution.
    """
    from ..analysis.assembly import assembled_state
    from ..analysis.start import resolve
    model = resolve(model)[0]
    system = System(model)
    y, _ = assembled_state(system)
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
    if eq.cuts:
        L += _cut_report(system, eq)
    if model.couplers:
        L += _coupler_report(system, eq, res)
    L += ["", "Hinge eliminations (joint condition S^T F + tau = 0 replaces unknowns by du):"]
    if not eq.substitutions:
        L.append("  none")
    for s in eq.substitutions:
        pairs = ", ".join(f"{a} -> {b}" for a, b in zip(s.replaced, s.du))
        L += textwrap.wrap(f"{s.element:>3} {s.hinge}: {pairs}", width=96, initial_indent="  ",
                           subsequent_indent=" " * 8)
    n_cut = eq.order - eq.n_tree - len(eq.couplers)
    loads = (f" + {n_cut} cut-hinge loads" if eq.cuts else "") + (
        f" + {len(eq.couplers)} coupler multiplier{'s' if len(eq.couplers) > 1 else ''}"
        if eq.couplers else "")
    L += ["", f"U_all [Z; 1] = 0: {eq.order} equations, {eq.order} unknowns "
              f"(order {eq.order} = 6 x ({len(topo.tips)} tips + {len(topo.roots)} roots){loads})",
          "Row blocks (equations):"]
    for b in eq.rows:
        L.append(f"  rows {b.start:>3}-{b.stop - 1:<3} {b.text}")
    L.append("Column blocks (unknowns Z):")
    for b in eq.columns:
        L.append(f"  cols {b.start:>3}-{b.stop - 1:<3} {b.text}")
        L += textwrap.wrap(", ".join(f"{c}:{eq.unknowns[c]}" for c in range(b.start, b.stop)),
                           width=96, initial_indent=" " * 14, subsequent_indent=" " * 14)
    L.append("Block pattern (X: non-zero):")
    tags = [f"K{b.start - eq.couplers[0].column}" if b.kind == "coupler" else
            f"{b.kind[0].upper()}{b.element}" for b in eq.columns]
    L.append(" " * 14 + "".join(f"{s:>6}" for s in tags) + "   rhs")
    for rb, pat in zip(eq.rows, eq.pattern()):
        rtag = {"main": f"main {rb.element}", "supplementary": f"supp {rb.element}",
                "coupler": f"cpl {rb.name}"[:12]}.get(rb.kind, f"geo {rb.element}/{rb.input}")
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
              f"{eq.cond_scaled():.3e})"]
    if eq.cuts or eq.couplers:
        n, r = eq.order, eq.rank()
        Ut = eq.U[:eq.n_tree, :eq.n_tree]
        L.append(f"rank(U) = {r} of {n}; the tree part U_tt (rows and columns 0-{eq.n_tree - 1}) "
                 f"has cond {np.linalg.cond(Ut):.3e}")
        if r < n:
            L += textwrap.wrap(f"U is singular: {n - r} of the cut hinges' constraint directions "
                               "depend on the others (redundant constraints, or a singular "
                               "position); the loads in those directions are not determined by "
                               "the equation: the minimum-norm loads are taken, as the Riccati "
                               "kernel does.", width=96)
        L += ["Solved by blocks: Z_t = U_tt^-1 (rhs_t - U_tl lam), then the loads from",
              "  (U_sl - U_st U_tt^-1 U_tl) lam = rhs_s - U_st U_tt^-1 rhs_t (pseudo-inverse, "
              "singular values",
              "  below 1e-10 of the largest dropped)"]
    L += ["", "Solution Z:"]
    for lab, v in zip(eq.unknowns, res.unknowns):
        L.append(f"  {lab:<28} {v:>14.6e}")
    if eq.cuts:
        L += ["", "Cut hinges' loads: wrench on the input body at p (global; the output body "
                  "receives the opposite)"]
        for cb, W in zip(eq.cuts, res.Wcut):
            L.append(f"  {cb.hinge:<20} torque ({W[0]:.6e}, {W[1]:.6e}, {W[2]:.6e}) N m")
            L.append(f"  {'':<20} force  ({W[3]:.6e}, {W[4]:.6e}, {W[5]:.6e}) N")
    L.append(f"Residual after the final sweep: {res.residual:.2e}")
    return "\n".join(L)


def _vec(v, fmt=".4g") -> str:
    return "(" + ", ".join(f"{float(a):{fmt}}" for a in v) + ")"


def _cut_report(system, eq) -> list[str]:
    """The closed loops' part of :func:`equation_report`: boundary pairs, supplementary rows."""
    topo = system.topology
    w = float(np.sqrt(system.tree.loops.stab[1]))
    L = ["", "Closed loops: each cut hinge becomes a pair of boundaries with unknown constraint "
             "loads lam,",
         "a wrench N lam (torque; force) on its input body at p, the input marker origin, and "
         "-N lam on its",
         "output body at p (N: the directions the hinge blocks, global [rotation; translation]):"]
    for cb in eq.cuts:
        loop = next(lp for lp in topo.loops if lp.cut_hinge == cb.hinge)
        L.append(f"  {cb.element} {cb.hinge} ({cb.type}), cut: loop "
                 + " - ".join(loop.path))
        L.append(f"      p = {_vec(cb.point)} m")
        for sign, part, k in (("+", cb.input_body, cb.input_element),
                              ("-", cb.output_body, cb.output_element)):
            what = "the ground (the boundary: no body takes it)" if k == 0 else f"body {k} {part}"
            side = "input side" if sign == "+" else "output side"
            L.append(f"      {sign}N lam on {what}, {side}")
        L.append(f"      unknowns: cols {cb.columns[0]}-{cb.columns[1] - 1}, N^T rows:")
        for d, n in zip(cb.directions, cb.N):
            L.append(f"        lam_{d:<4} [{' '.join(f'{a:7.4f}' for a in n[:3])} | "
                     f"{' '.join(f'{a:7.4f}' for a in n[3:])}]")
    L += ["", "Supplementary equations (the cut hinges' kinematic conditions, acceleration "
              "level, Baumgarte-",
          f"stabilised as the Riccati kernel at w = {w:.6g} 1/s):",
          "  N^T (x_in(p) - x_out(p) - c) = -2 w N^T v_rel - w^2 phi,   x = [eps; a] of each "
          "body's point at p"]
    for cb in eq.cuts:
        L.append(f"  rows {cb.rows[0]}-{cb.rows[1] - 1}, cut {cb.element} {cb.hinge}: x_in of "
                 f"{cb.input_body}, x_out of {cb.output_body}")
        L.append(f"      c = {_vec(cb.c)}")
        L.append(f"      {'row':<16}{'N^T c':>12}{'v_rel':>12}{'phi':>12}{'rhs':>12}")
        Nc = cb.N @ cb.c
        for j, d in enumerate(cb.directions):
            L.append(f"      {cb.hinge + '.' + d:<16}{Nc[j]:>12.4e}{cb.v_rel[j]:>12.4e}"
                     f"{cb.phi[j]:>12.4e}{cb.rhs[j]:>12.4e}")
    return L
