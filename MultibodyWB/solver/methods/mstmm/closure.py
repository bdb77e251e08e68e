"""The closed loops in the mstmm kernels: the cut hinges as boundaries with unknown constraint
loads (and the couplers' rows after theirs): their geometry and right-hand sides
(:func:`cut_geometry`), the tree's response to each unit load (:func:`load_sweeps`), the small
positive semi-definite system for the loads (:func:`psd_solve`), and the loads applied back
(:func:`close_loops`, :func:`apply_loop_loads`). The arrays are :class:`~.system.System`'s
(``Tree.loops``, ``Work.loops``); the tree's sweeps are :mod:`.tree`'s."""

from __future__ import annotations

import numpy as np
from numba import njit

from ...elements.hinge_kinematics import CUT_ROT, CUT_TRANS, NU, UNIVERSAL
from ...maths.small import _INL, _JIT, _cr, _mm, _mv
from .tree import COLKIND


# --------------------------------------------------------------------------------------------------
# closed loops: cut hinges as boundaries with unknown constraint loads
# --------------------------------------------------------------------------------------------------
# Each cut hinge becomes a pair of boundaries: an unknown constraint wrench N lam on its input body
# and -N lam on its output body, at the input marker origin p; N (6 x m) holds the directions the
# hinge blocks (rotations [Ra e; 0], translations [0; Ra e], e fixed in the output marker frame,
# the universal hinge's blocked rotation Rx(a) e_z). The supplementary equations are the hinge's
# kinematic condition at the acceleration level, N^T (x_in(p) - x_out(p) - c) = 0, stabilised
# (Baumgarte): = -2 w N^T t_rel - w^2 phi, with phi the blocked part of the position error. The
# tree part stays O(n): the response of the tree to each column of N is one load-only sweep that
# reuses the articulated inertias of the main sweep; the small system for lam is solved with a
# pseudo-inverse, so redundant constraints give the minimum-norm loads.

@njit(**_INL)
def _mtm(A, ia, B, ib, C, ic):
    """C[ic] = A[ia].T @ B[ib] for stacks of 3x3 blocks."""
    for a in range(3):
        for c in range(3):
            C[ic, a, c] = A[ia, 0, a] * B[ib, 0, c] + A[ia, 1, a] * B[ib, 1, c] \
                + A[ia, 2, a] * B[ib, 2, c]


@njit(**_JIT)
def _rotvec_of(M, i):
    """Rotation vector of the rotation M[i] (as :func:`rotvec`, without allocating)."""
    c = (M[i, 0, 0] + M[i, 1, 1] + M[i, 2, 2] - 1.0) / 2.0
    w0 = M[i, 2, 1] - M[i, 1, 2]
    w1 = M[i, 0, 2] - M[i, 2, 0]
    w2 = M[i, 1, 0] - M[i, 0, 1]
    ww = w0 ** 2 + w1 ** 2 + w2 ** 2
    if c > 0.0 and ww < 4e-16 * c * c:
        # s / c < 1e-8, so t = arctan(s / c) < 1e-8 below (a closed loop's blocked rotation
        # error, at every evaluation): the same result without the arctan2 and the root
        return 0.5 * w0, 0.5 * w1, 0.5 * w2
    s = 0.5 * np.sqrt(ww)
    t = np.arctan2(s, c)
    if t < 1e-8:
        return 0.5 * w0, 0.5 * w1, 0.5 * w2
    if np.pi - t > 1e-2:
        f = t / (2.0 * s)
        return f * w0, f * w1, f * w2
    k = 0
    for j in range(3):
        if M[i, j, j] > M[i, k, k]:
            k = j
    a0 = 0.5 * (M[i, 0, k] + M[i, k, 0]) - (c if k == 0 else 0.0)
    a1 = 0.5 * (M[i, 1, k] + M[i, k, 1]) - (c if k == 1 else 0.0)
    a2 = 0.5 * (M[i, 2, k] + M[i, k, 2]) - (c if k == 2 else 0.0)
    nrm = np.sqrt(a0 ** 2 + a1 ** 2 + a2 ** 2)
    if a0 * w0 + a1 * w1 + a2 * w2 < 0:
        nrm = -nrm
    return t * a0 / nrm, t * a1 / nrm, t * a2 / nrm


@njit(**_JIT)
def _frame_of(b, Rl, k, pl, R, pb, F, i):
    """F[i] = rotation of marker k (Rl[k], pl[k] on body b; b = -1: the ground, global) and its
    origin as a tuple."""
    if b < 0:
        for a in range(3):
            for c in range(3):
                F[i, a, c] = Rl[k, a, c]
        return pl[k, 0], pl[k, 1], pl[k, 2]
    _mm(R, b, Rl, k, F, i)
    p = _mv(R, b, pl[k, 0], pl[k, 1], pl[k, 2])
    return pb[b, 0] + p[0], pb[b, 1] + p[1], pb[b, 2] + p[2]


@njit(**_JIT)
def _point_of(b, k, pl, R, pb):
    """The origin of marker k (pl[k] on body b; b = -1: the ground, global) as a tuple, as
    :func:`_frame_of` gives it."""
    if b < 0:
        return pl[k, 0], pl[k, 1], pl[k, 2]
    p = _mv(R, b, pl[k, 0], pl[k, 1], pl[k, 2])
    return pb[b, 0] + p[0], pb[b, 1] + p[1], pb[b, 2] + p[2]


@njit(**_JIT)
def _velocity_at(b, p0, p1, p2, w, vh, hp):
    """Angular velocity and velocity of body b's material point at p, as a 6-tuple."""
    if b < 0:
        return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    v = _cr(w[b, 0], w[b, 1], w[b, 2], p0 - hp[b, 0], p1 - hp[b, 1], p2 - hp[b, 2])
    return (w[b, 0], w[b, 1], w[b, 2], vh[b, 0] + v[0], vh[b, 1] + v[1], vh[b, 2] + v[2])


@njit(**_JIT)
def cut_geometry(c_code, c_bi, c_Ri, c_pi, c_bo, c_Ro, c_po, c_m, c_of_row, stab, cp_u, cp_ab, F,
                 Ncol, pcut, vres, phi, ccut, rhs, R, pb, w, vh, hp, x, udot):
    """Constraint directions, points, velocity and position residuals and biases of all cuts,
    and the supplementary equations' right-hand side at the tree's solution.

    The cut hinges' arrays of system.Cuts (``c_*``, ``cp_*``); fills the arrays of
    system.LoopWork of the same names: Ncol (m, 6), pcut (nc, 3), vres (m), phi (m), ccut
    (nc, 6), and ``rhs`` (L.bcon, m): each cut's rows ``-N^T (x_in(p) - x_out(p) - c) -
    stab[0] vres - stab[1] phi`` (Baumgarte) at the tree's accelerations x (n, 6), a coupler's
    ``-(a udot1 + b udot2)`` (linear in the state: the integrators keep the rates' and the
    coordinates' combination exactly; no stabilisation). No allocation: scratch F
    (LoopWork.F, (4, 3, 3): 0 input marker, 1 output marker, 2 relative, 3 scratch; the
    input marker's and the relative rotation only where a rotation is blocked). Takes arrays,
    not the structs (see :func:`close_loops`).
    """
    row = 0
    for k in range(c_code.size):
        code = c_code[k]
        rot = CUT_ROT[code]
        turn = rot != 0 or code == UNIVERSAL            # a blocked rotation: Rrel wanted
        if turn:
            pB0, pB1, pB2 = _frame_of(c_bi[k], c_Ri, k, c_pi, R, pb, F, 0)
        else:
            pB0, pB1, pB2 = _point_of(c_bi[k], k, c_pi, R, pb)
        pA0, pA1, pA2 = _frame_of(c_bo[k], c_Ro, k, c_po, R, pb, F, 1)
        pcut[k, 0], pcut[k, 1], pcut[k, 2] = pB0, pB1, pB2
        wi0, wi1, wi2, vi0, vi1, vi2 = _velocity_at(c_bi[k], pB0, pB1, pB2, w, vh, hp)
        wo0, wo1, wo2, vo0, vo1, vo2 = _velocity_at(c_bo[k], pB0, pB1, pB2, w, vh, hp)
        wr0, wr1, wr2 = wi0 - wo0, wi1 - wo1, wi2 - wo2
        vr0, vr1, vr2 = vi0 - vo0, vi1 - vo1, vi2 - vo2
        if turn:
            _mtm(F, 1, F, 0, F, 2)                               # Rrel = Ra^T Rb
        dd = (pB0 - pA0, pB1 - pA1, pB2 - pA2)
        d0 = F[1, 0, 0] * dd[0] + F[1, 1, 0] * dd[1] + F[1, 2, 0] * dd[2]
        d1 = F[1, 0, 1] * dd[0] + F[1, 1, 1] * dd[1] + F[1, 2, 1] * dd[2]
        d2 = F[1, 0, 2] * dd[0] + F[1, 1, 2] * dd[1] + F[1, 2, 2] * dd[2]
        # rotation error in output-marker axes, after removing the allowed rotation
        ca, sa = 1.0, 0.0
        er0, er1, er2 = 0.0, 0.0, 0.0
        if code == UNIVERSAL or rot == 3:
            if code == UNIVERSAL:
                ua = np.arctan2(F[2, 2, 1], F[2, 1, 1])
                ub = np.arctan2(F[2, 0, 2], F[2, 0, 0])
                ca, sa, cb, sb = np.cos(ua), np.sin(ua), np.cos(ub), np.sin(ub)
                # F[3] = Rrel @ Rq^T, Rq = Rx(ua) Ry(ub)
                q00, q01, q02 = cb, 0.0, sb
                q10, q11, q12 = sa * sb, ca, -sa * cb
                q20, q21, q22 = -ca * sb, sa, ca * cb
            else:                                             # rotation about z allowed
                th = np.arctan2(F[2, 1, 0], F[2, 0, 0])
                c, s = np.cos(th), np.sin(th)
                q00, q01, q02 = c, -s, 0.0
                q10, q11, q12 = s, c, 0.0
                q20, q21, q22 = 0.0, 0.0, 1.0
            for a in range(3):
                r0, r1, r2 = F[2, a, 0], F[2, a, 1], F[2, a, 2]
                F[3, a, 0] = r0 * q00 + r1 * q01 + r2 * q02
                F[3, a, 1] = r0 * q10 + r1 * q11 + r2 * q12
                F[3, a, 2] = r0 * q20 + r1 * q21 + r2 * q22
            er0, er1, er2 = _rotvec_of(F, 3)
        elif turn:
            er0, er1, er2 = _rotvec_of(F, 2)
        # bias c: w_A x w_rel (+ the universal's local term), 2 w_A x v_rel
        cw = _cr(wo0, wo1, wo2, wr0, wr1, wr2)
        cv = _cr(wo0, wo1, wo2, vr0, vr1, vr2)
        cw0, cw1, cw2 = cw
        if code == UNIVERSAL:
            adot = F[1, 0, 0] * wr0 + F[1, 1, 0] * wr1 + F[1, 2, 0] * wr2
            bdot = ((F[1, 0, 1] * wr0 + F[1, 1, 1] * wr1 + F[1, 2, 1] * wr2) * ca
                    + (F[1, 0, 2] * wr0 + F[1, 1, 2] * wr1 + F[1, 2, 2] * wr2) * sa)
            g = _mv(F, 1, 0.0, -sa, ca)
            f = adot * bdot
            cw0, cw1, cw2 = cw0 + f * g[0], cw1 + f * g[1], cw2 + f * g[2]
        ccut[k, 0], ccut[k, 1], ccut[k, 2] = cw0, cw1, cw2
        ccut[k, 3], ccut[k, 4], ccut[k, 5] = 2.0 * cv[0], 2.0 * cv[1], 2.0 * cv[2]
        for b in range(4):
            if (rot >> b) & 1:
                if b < 3:
                    e0, e1, e2 = 0.0, 0.0, 0.0
                    if b == 0:
                        e0 = 1.0
                    elif b == 1:
                        e1 = 1.0
                    else:
                        e2 = 1.0
                else:
                    e0, e1, e2 = 0.0, -sa, ca
                n = _mv(F, 1, e0, e1, e2)
                for a in range(3):
                    Ncol[row, a] = n[a]
                    Ncol[row, 3 + a] = 0.0
                vres[row] = n[0] * wr0 + n[1] * wr1 + n[2] * wr2
                phi[row] = er0 * e0 + er1 * e1 + er2 * e2
                row += 1
        tr = CUT_TRANS[code]
        for b in range(3):
            if (tr >> b) & 1:
                for a in range(3):
                    Ncol[row, a] = 0.0
                    Ncol[row, 3 + a] = F[1, a, b]
                vres[row] = F[1, 0, b] * vr0 + F[1, 1, b] * vr1 + F[1, 2, b] * vr2
                phi[row] = d0 if b == 0 else (d1 if b == 1 else d2)
                row += 1
        # the cut's rows of the right-hand side: x_in(p) - x_out(p) - c, velocity terms included
        # (the input body's, then the output body's)
        x0, x1, x2 = -ccut[k, 0], -ccut[k, 1], -ccut[k, 2]
        x3, x4, x5 = -ccut[k, 3], -ccut[k, 4], -ccut[k, 5]
        for side in range(2):
            b = c_bi[k] if side == 0 else c_bo[k]
            if b < 0:
                continue
            sg = 1.0 if side == 0 else -1.0
            r0, r1, r2 = pB0 - hp[b, 0], pB1 - hp[b, 1], pB2 - hp[b, 2]
            e0, e1, e2 = x[b, 0], x[b, 1], x[b, 2]
            ea = _cr(e0, e1, e2, r0, r1, r2)
            wr = _cr(w[b, 0], w[b, 1], w[b, 2], r0, r1, r2)
            ww = _cr(w[b, 0], w[b, 1], w[b, 2], wr[0], wr[1], wr[2])
            a0 = x[b, 3] + ea[0] + ww[0]
            a1 = x[b, 4] + ea[1] + ww[1]
            a2 = x[b, 5] + ea[2] + ww[2]
            x0 += sg * e0
            x1 += sg * e1
            x2 += sg * e2
            x3 += sg * a0
            x4 += sg * a1
            x5 += sg * a2
        for r in range(row - c_m[k], row):
            s = 0.0
            s += Ncol[r, 0] * x0
            s += Ncol[r, 1] * x1
            s += Ncol[r, 2] * x2
            s += Ncol[r, 3] * x3
            s += Ncol[r, 4] * x4
            s += Ncol[r, 5] * x5
            rhs[r] = -s - stab[0] * vres[r] - stab[1] * phi[r]
    mc = c_of_row.size
    for kc in range(cp_ab.shape[0]):
        rhs[mc + kc] = -(cp_ab[kc, 0] * udot[cp_u[kc, 0]]
                         + cp_ab[kc, 1] * udot[cp_u[kc, 1]])


@njit(**_JIT)
def load_sweeps(c_bi, c_bo, c_m, c_of_row, cp_u, cp_ab, Ncol, pcut, pB, paB, rB, A, rhs, act, dud,
                dx, dWh, parent, code, uo, hp, Sg, IA, U, Dinv, nfree, fidx, wrenches, decide):
    """Response of the tree to each unit constraint load of the cut hinges, and the constraint
    compliance. For every row j of ``Ncol`` (the load N_j lam on the input body and -N_j lam on
    the output body of its cut hinge, at the cut point; a coupler's row: generalised loads on
    its two coordinates), with no other load: the tree's response and column j of the
    compliance A (the supplementary equations' response N^T (x_in(p) - x_out(p))).

    Rows the tree cannot respond to are left out: a cut row whose load does no work on any free
    coordinate between its cut's two bodies and their common ancestor (the generalised force
    ``z . N_j``, z the coordinate's unit twist carried to the cut point, below 1e-10 of
    ``|z| |N_j|`` for each) moves nothing, so its column and row of A are zero and its
    minimum-norm load is zero: the directions a planar loop's spatial cut hinge blocks out of
    its plane, say. Coupler rows are always kept. ``decide``: test the rows (and keep the
    verdict in act[m:]); else keep the rows the last test kept (the fixed-step kernels test at
    a step's first evaluation only: a row's verdict cannot change within a step but at the
    1e-10 threshold, where its load is immaterial). Returns ``(ma, big)``: the number of rows
    kept (their indices in ``act[:ma]``, increasing) and the largest diagonal entry of A (the
    scale of :func:`psd_solve`'s tolerance). Row j' < ma of the kept rows fills dud[j'] (nu),
    dx[j'] (n, 6), dWh[j'] (n, 6: every row if ``wrenches``, else the rows of hinges with a
    driven coordinate, as in :func:`riccati`); A[:ma, :ma] is the compliance of the kept
    rows, made exactly symmetric (computed in the kept rows' places), and rhs[:ma] their
    right-hand sides (from :func:`cut_geometry`, compacted in place). The arrays of system.Cuts (``c_*``,
    ``cp_*``) and of system.LoopWork, not the structs (see :func:`close_loops`).

    Reuses the articulated quantities of the last :func:`riccati` call (same configuration);
    velocity terms, hinge loads and prescribed accelerations are zero. Scratch: pB, paB, rB
    (n, 6). A body's six components are carried in local variables, not in scratch arrays: a
    store to an array may alias any other array for LLVM, which then loads everything again
    (a third of the time, measured on the crank-slider).
    """
    n = parent.size
    mc = c_of_row.size
    m = mc + cp_ab.shape[0]
    # the rows kept: act[m + j] = 1 where a free coordinate feels row j's load (N_j is a unit
    # direction: cut_geometry)
    if decide:
        for j in range(m):
            act[m + j] = 1 if j >= mc else 0
        row0 = 0
        for k in range(c_m.size):
            pk0, pk1, pk2 = pcut[k, 0], pcut[k, 1], pcut[k, 2]
            ia, ib = c_bi[k], c_bo[k]
            while ia != ib:                             # up to the common ancestor
                if ia > ib:                             # (every body after its parent)
                    i = ia
                    ia = parent[ia]
                else:
                    i = ib
                    ib = parent[ib]
                ci = code[i]
                for jf in range(nfree[i]):
                    jj = fidx[i, jf]
                    r = 3 * COLKIND[ci, jj]
                    s0, s1, s2 = Sg[i, r, jj], Sg[i, r + 1, jj], Sg[i, r + 2, jj]
                    if r == 0:                          # [s; s x (p - h)]
                        zv = _cr(s0, s1, s2, pk0 - hp[i, 0], pk1 - hp[i, 1], pk2 - hp[i, 2])
                        z0, z1, z2, z3, z4, z5 = s0, s1, s2, zv[0], zv[1], zv[2]
                    else:                               # [0; s]
                        z0, z1, z2, z3, z4, z5 = 0.0, 0.0, 0.0, s0, s1, s2
                    zz = z0 * z0 + z1 * z1 + z2 * z2 + z3 * z3 + z4 * z4 + z5 * z5
                    for jr in range(c_m[k]):
                        j = row0 + jr
                        if act[m + j] == 0:
                            g = (Ncol[j, 0] * z0 + Ncol[j, 1] * z1 + Ncol[j, 2] * z2
                                 + Ncol[j, 3] * z3 + Ncol[j, 4] * z4 + Ncol[j, 5] * z5)
                            if g * g > 1e-20 * zz:
                                act[m + j] = 1
            row0 += c_m[k]
    ma = 0
    for j in range(m):
        if act[m + j] == 0:
            continue
        jc = ma                                         # the row's place among those kept
        act[jc] = j
        ma += 1
        # the unit load as the bodies' bias wrenches (pB = -load)
        for i in range(n):
            for a in range(6):
                pB[i, a] = 0.0
        cu1, cu2, ca, cb = -1, -1, 0.0, 0.0
        if j >= mc:
            cu1, cu2 = cp_u[j - mc, 0], cp_u[j - mc, 1]
            ca, cb = cp_ab[j - mc, 0], cp_ab[j - mc, 1]
        else:
            k = c_of_row[j]
            for side in range(2):
                b = c_bi[k] if side == 0 else c_bo[k]
                if b < 0:
                    continue
                sg = 1.0 if side == 0 else -1.0
                t = _cr(pcut[k, 0] - hp[b, 0], pcut[k, 1] - hp[b, 1], pcut[k, 2] - hp[b, 2],
                        Ncol[j, 3], Ncol[j, 4], Ncol[j, 5])
                for a in range(3):
                    pB[b, a] -= sg * (Ncol[j, a] + t[a])
                    pB[b, 3 + a] -= sg * Ncol[j, 3 + a]
        # tips to root: the bias wrenches of the articulated bodies
        for i in range(n - 1, -1, -1):
            nf = nfree[i]
            ci = code[i]
            par = parent[i]
            o = uo[i]
            for jf in range(nf):
                jj = fidx[i, jf]
                r = 3 * COLKIND[ci, jj]
                g = 0.0
                if o + jj == cu1:
                    g += ca
                if o + jj == cu2:
                    g += cb
                rB[i, jf] = g - (Sg[i, r, jj] * pB[i, r] + Sg[i, r + 1, jj] * pB[i, r + 1]
                                 + Sg[i, r + 2, jj] * pB[i, r + 2])
            if par < 0:
                continue
            p0, p1, p2, p3, p4, p5 = pB[i, 0], pB[i, 1], pB[i, 2], pB[i, 3], pB[i, 4], pB[i, 5]
            if nf == 1:                                 # paB = pB + U Dinv rB
                t = Dinv[i, 0, 0] * rB[i, 0]
                p0 += U[i, 0, 0] * t
                p1 += U[i, 1, 0] * t
                p2 += U[i, 2, 0] * t
                p3 += U[i, 3, 0] * t
                p4 += U[i, 4, 0] * t
                p5 += U[i, 5, 0] * t
            elif nf > 1:
                for j1 in range(nf):
                    t = 0.0
                    for j2 in range(nf):
                        t += Dinv[i, j1, j2] * rB[i, j2]
                    p0 += U[i, 0, j1] * t
                    p1 += U[i, 1, j1] * t
                    p2 += U[i, 2, j1] * t
                    p3 += U[i, 3, j1] * t
                    p4 += U[i, 4, j1] * t
                    p5 += U[i, 5, j1] * t
            paB[i, 0], paB[i, 1], paB[i, 2] = p0, p1, p2
            paB[i, 3], paB[i, 4], paB[i, 5] = p3, p4, p5
            l0, l1, l2 = hp[i, 0] - hp[par, 0], hp[i, 1] - hp[par, 1], hp[i, 2] - hp[par, 2]
            t3 = _cr(l0, l1, l2, p3, p4, p5)
            pB[par, 0] += p0 + t3[0]
            pB[par, 1] += p1 + t3[1]
            pB[par, 2] += p2 + t3[2]
            pB[par, 3] += p3
            pB[par, 4] += p4
            pB[par, 5] += p5
        # root to tips: the accelerations (in scalars: no store a load could alias)
        for i in range(n):
            par = parent[i]
            if par >= 0:
                l0, l1, l2 = hp[i, 0] - hp[par, 0], hp[i, 1] - hp[par, 1], hp[i, 2] - hp[par, 2]
                e0, e1, e2 = dx[jc, par, 0], dx[jc, par, 1], dx[jc, par, 2]
                el = _cr(e0, e1, e2, l0, l1, l2)
                b0, b1, b2 = e0, e1, e2
                b3 = dx[jc, par, 3] + el[0]
                b4 = dx[jc, par, 4] + el[1]
                b5 = dx[jc, par, 5] + el[2]
            else:
                b0, b1, b2, b3, b4, b5 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
            x0, x1, x2, x3, x4, x5 = b0, b1, b2, b3, b4, b5
            nf = nfree[i]
            o = uo[i]
            ci = code[i]
            if nf == 1:
                s = rB[i, 0] - U[i, 0, 0] * b0
                s -= U[i, 1, 0] * b1
                s -= U[i, 2, 0] * b2
                s -= U[i, 3, 0] * b3
                s -= U[i, 4, 0] * b4
                s -= U[i, 5, 0] * b5
                sd = Dinv[i, 0, 0] * s
                jj = fidx[i, 0]
                dud[jc, o + jj] = sd
                if COLKIND[ci, jj] == 0:
                    b0 += Sg[i, 0, jj] * sd
                    b1 += Sg[i, 1, jj] * sd
                    b2 += Sg[i, 2, jj] * sd
                else:
                    b3 += Sg[i, 3, jj] * sd
                    b4 += Sg[i, 4, jj] * sd
                    b5 += Sg[i, 5, jj] * sd
            elif nf > 1:
                for jf in range(nf):                    # rB[i] <- rB - U^T b
                    s = rB[i, jf]
                    s -= U[i, 0, jf] * b0
                    s -= U[i, 1, jf] * b1
                    s -= U[i, 2, jf] * b2
                    s -= U[i, 3, jf] * b3
                    s -= U[i, 4, jf] * b4
                    s -= U[i, 5, jf] * b5
                    rB[i, jf] = s
                for j1 in range(nf):
                    s = 0.0
                    for j2 in range(nf):
                        s += Dinv[i, j1, j2] * rB[i, j2]
                    jj = fidx[i, j1]
                    dud[jc, o + jj] = s
                    if COLKIND[ci, jj] == 0:
                        b0 += Sg[i, 0, jj] * s
                        b1 += Sg[i, 1, jj] * s
                        b2 += Sg[i, 2, jj] * s
                    else:
                        b3 += Sg[i, 3, jj] * s
                        b4 += Sg[i, 4, jj] * s
                        b5 += Sg[i, 5, jj] * s
            dx[jc, i, 0], dx[jc, i, 1], dx[jc, i, 2] = b0, b1, b2
            dx[jc, i, 3], dx[jc, i, 4], dx[jc, i, 5] = b3, b4, b5
            if not (wrenches or nf != NU[ci]):
                continue                                # as in riccati: driven hinges only
            if par < 0:                                 # Wh = pB + IA x (the root: x = b)
                x0, x1, x2, x3, x4, x5 = b0, b1, b2, b3, b4, b5
            for a in range(6):
                s = paB[i, a] if par >= 0 else pB[i, a]
                s += IA[i, a, 0] * x0
                s += IA[i, a, 1] * x1
                s += IA[i, a, 2] * x2
                s += IA[i, a, 3] * x3
                s += IA[i, a, 4] * x4
                s += IA[i, a, 5] * x5
                dWh[jc, i, a] = s
        # column jc of the compliance, in the kept rows' places (act[m + r]: row r kept)
        row = 0
        rc = 0
        for k2 in range(c_m.size):
            x0, x1, x2, x3, x4, x5 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
            for side in range(2):
                b = c_bi[k2] if side == 0 else c_bo[k2]
                if b < 0:
                    continue
                sg = 1.0 if side == 0 else -1.0
                r0, r1, r2 = pcut[k2, 0] - hp[b, 0], pcut[k2, 1] - hp[b, 1], pcut[k2, 2] - hp[b, 2]
                e0, e1, e2 = dx[jc, b, 0], dx[jc, b, 1], dx[jc, b, 2]
                ea = _cr(e0, e1, e2, r0, r1, r2)
                x0 += sg * e0
                x1 += sg * e1
                x2 += sg * e2
                x3 += sg * (dx[jc, b, 3] + ea[0])
                x4 += sg * (dx[jc, b, 4] + ea[1])
                x5 += sg * (dx[jc, b, 5] + ea[2])
            for jr in range(c_m[k2]):
                r = row + jr
                if act[m + r] == 0:
                    continue
                A[rc, jc] = (Ncol[r, 0] * x0 + Ncol[r, 1] * x1 + Ncol[r, 2] * x2
                             + Ncol[r, 3] * x3 + Ncol[r, 4] * x4 + Ncol[r, 5] * x5)
                rc += 1
            row += c_m[k2]
        for kc in range(cp_ab.shape[0]):                # (couplers' rows: always kept, last)
            A[rc + kc, jc] = (cp_ab[kc, 0] * dud[jc, cp_u[kc, 0]]
                              + cp_ab[kc, 1] * dud[jc, cp_u[kc, 1]])
    # the kept rows' right-hand sides (act[r] >= r: in place, in increasing order); A symmetric
    if ma < m:
        for r in range(ma):
            rhs[r] = rhs[act[r]]
    big = 0.0
    for r in range(ma):
        for jc in range(r, ma):
            t = 0.5 * (A[r, jc] + A[jc, r])
            A[r, jc] = t
            A[jc, r] = t
        if A[r, r] > big:
            big = A[r, r]
    return ma, big


@njit(**_JIT)
def psd_solve(A, m, rhs, x, G, M, pv, perm, z, w, tol):
    """Minimum-norm least-squares solution ``x = A^+ rhs`` of a symmetric positive
    semi-definite m x m system, by Cholesky factorisation with symmetric pivoting: see
    :func:`_psd_general`, which this is, with the same arguments and result.

    Up to three rows at full rank (a planar loop: two or three), :func:`_psd_small` makes the
    same operations in the same order in scalars (the same bits). The general code's loops,
    compiled for any size (numba's loop vectoriser makes 4,400 instructions of them), cost an
    evaluation of the four-bar in the fixed-step kernel about 0.3 us, a third of its loop
    closure (docs/benchmarks.md, session 16). A pivot at or below ``tol`` (a rank lost) or more
    rows: the general code, from the start.
    """
    if 1 <= m <= 3:
        r = _psd_small(A, m, rhs, x, pv, tol)
        if r == m:
            return r
    return _psd_general(A, m, rhs, x, G, M, pv, perm, z, w, tol)


@njit(**_JIT)
def _psd_small(A, m, rhs, x, pv, tol):
    """:func:`_psd_general` for 1 <= m <= 3 at full rank, in scalars: the symmetric m x m
    matrix in ``g00`` ... ``g22`` (an entry past m stays 0 and moves only among entries past m),
    a symmetric swap of indices a and b as the permutation of the nine (the general code swaps
    rows, then columns: the same values), then the same factorisation, pivots (``pv``) and
    substitutions, operation for operation. Returns m, with ``x`` and ``pv[:m]`` filled; or
    -1 at a pivot at or below ``tol`` (``x`` untouched): the rank is below m."""
    g00 = A[0, 0]
    g01, g02, g10, g11, g12, g20, g21, g22 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    if m > 1:
        g01, g10, g11 = A[0, 1], A[1, 0], A[1, 1]
    if m > 2:
        g02, g12, g20, g21, g22 = A[0, 2], A[1, 2], A[2, 0], A[2, 1], A[2, 2]
    p0, p1, p2 = 0, 1, 2
    # stage 0: the largest diagonal entry (the first of equal ones) to the top
    p, best = 0, g00
    if m > 1 and g11 > best:
        p, best = 1, g11
    if m > 2 and g22 > best:
        p, best = 2, g22
    pv[0] = max(best, 0.0)
    if best <= tol:
        return -1
    if p == 1:
        g00, g01, g02, g10, g11, g12, g20, g21, g22 = g11, g10, g12, g01, g00, g02, g21, g20, g22
        p0, p1 = p1, p0
    elif p == 2:
        g00, g01, g02, g10, g11, g12, g20, g21, g22 = g22, g21, g20, g12, g11, g10, g02, g01, g00
        p0, p2 = p2, p0
    d = np.sqrt(g00)
    g00 = d
    if m > 1:
        g10 /= d
    if m > 2:
        g20 /= d
    if m > 1:                                   # the trailing block, column by column
        gj = g10
        g11 -= g10 * gj
        if m > 2:
            g21 -= g20 * gj
            gj = g20
            g12 -= g10 * gj
            g22 -= g20 * gj
        # stage 1
        p, best = 1, g11
        if m > 2 and g22 > best:
            p, best = 2, g22
        pv[1] = max(best, 0.0)
        if best <= tol:
            return -1
        if p == 2:
            g00, g01, g02, g10, g11, g12, g20, g21, g22 = g00, g02, g01, g20, g22, g21, g10, \
                g12, g11
            p1, p2 = p2, p1
        d = np.sqrt(g11)
        g11 = d
        if m > 2:
            g21 /= d
            gj = g21
            g22 -= g21 * gj
            # stage 2
            pv[2] = max(g22, 0.0)
            if g22 <= tol:
                return -1
            g22 = np.sqrt(g22)
    # G G^T y = z, z = rhs in pivot order: forward, then backward substitution
    z0 = rhs[p0] / g00
    if m == 1:
        x[p0] = z0 / g00
        return 1
    z1 = (rhs[p1] - g10 * z0) / g11
    if m == 2:
        z1 = z1 / g11
        x[p1] = z1
        x[p0] = (z0 - g10 * z1) / g00
        return 2
    z2 = ((rhs[p2] - g20 * z0) - g21 * z1) / g22
    z2 = z2 / g22
    z1 = (z1 - g21 * z2) / g11
    x[p2] = z2
    x[p1] = z1
    x[p0] = ((z0 - g10 * z1) - g20 * z2) / g00
    return 3


@njit(**_JIT)
def _psd_general(A, m, rhs, x, G, M, pv, perm, z, w, tol):
    """Minimum-norm least-squares solution ``x = A^+ rhs`` of a symmetric positive
    semi-definite m x m system, by Cholesky factorisation with symmetric pivoting.

    ``A[perm][:, perm] = G G^T`` with G (m x r) lower trapezoidal, r the rank: pivots below
    ``tol`` (absolute) end the factorisation. Full rank: ``x`` by two triangular solves; else
    ``x = G (G^T G)^-2 G^T rhs``. Returns r. Fills ``pv`` (m): the pivot chosen at each stage
    (the largest remaining diagonal of the Schur complement; after the rank, the largest one
    left, then 0), a measure of the conditioning: ``pv[k]`` goes to zero where A loses its
    (k+1)-th rank. Scratch: G, M (m x m), ``perm`` (int, m), ``z``, ``w`` (m). No
    allocation: O(m r^2).
    """
    for i in range(m):
        perm[i] = i
        pv[i] = 0.0
        for j in range(m):
            G[i, j] = A[i, j]
    r = 0
    for k in range(m):
        p = k
        for j in range(k + 1, m):
            if G[j, j] > G[p, p]:
                p = j
        pv[k] = max(G[p, p], 0.0)
        if G[p, p] <= tol:
            break
        if p != k:                          # symmetric swap of rows and columns k, p
            for j in range(m):
                t = G[k, j]
                G[k, j] = G[p, j]
                G[p, j] = t
            for j in range(m):
                t = G[j, k]
                G[j, k] = G[j, p]
                G[j, p] = t
            ti = perm[k]
            perm[k] = perm[p]
            perm[p] = ti
        d = np.sqrt(G[k, k])
        G[k, k] = d
        for i in range(k + 1, m):
            G[i, k] /= d
        for j in range(k + 1, m):            # the whole trailing block (kept symmetric:
            gj = G[j, k]                     # the swaps read both triangles)
            for i in range(k + 1, m):
                G[i, j] -= G[i, k] * gj
        r += 1
    for i in range(m):
        z[i] = rhs[perm[i]]
    if r == m:
        # G G^T y = z: forward, then backward substitution
        for i in range(m):
            s = z[i]
            for j in range(i):
                s -= G[i, j] * z[j]
            z[i] = s / G[i, i]
        for i in range(m - 1, -1, -1):
            s = z[i]
            for j in range(i + 1, m):
                s -= G[j, i] * z[j]
            z[i] = s / G[i, i]
        for i in range(m):
            x[perm[i]] = z[i]
        return r
    # rank deficient: w = G^T z (r), M = G^T G (r x r, SPD), M v = w twice, x = G v
    for i in range(r):
        t = 0.0
        for j in range(i, m):
            t += G[j, i] * z[j]
        w[i] = t
    for i in range(r):
        for j in range(i, r):
            t = 0.0
            for k in range(j, m):
                t += G[k, i] * G[k, j]
            M[i, j] = t
    for i in range(r):                       # M = U^T U, U upper, in M
        t = M[i, i]
        for k in range(i):
            t -= M[k, i] * M[k, i]
        M[i, i] = np.sqrt(max(t, 1e-300))
        for j in range(i + 1, r):
            t = M[i, j]
            for k in range(i):
                t -= M[k, i] * M[k, j]
            M[i, j] = t / M[i, i]
    for rep in range(2):
        for i in range(r):                   # U^T y = w
            t = w[i]
            for k in range(i):
                t -= M[k, i] * w[k]
            w[i] = t / M[i, i]
        for i in range(r - 1, -1, -1):       # U v = y
            t = w[i]
            for k in range(i + 1, r):
                t -= M[i, k] * w[k]
            w[i] = t / M[i, i]
    for i in range(m):
        t = 0.0
        for j in range(min(i + 1, r)):
            t += G[i, j] * w[j]
        x[perm[i]] = t
    return r


@njit(**_JIT)
def close_loops(C, L, parent, code, uo, nu, driven, R, pb, w, vh, hp, Sg, IA, U, Dinv, nfree,
                fidx, x, udot, Wh, tau, wrenches):
    """Add the cut hinges' constraint loads to the solution of :func:`riccati`.

    ``C``: the cut hinges (system.Cuts), ``L``: their work arrays (system.LoopWork); the other
    arrays are the tree's and the sweep's (see :func:`riccati`). Fills L.lam (m), L.Wcut (nc, 6)
    (wrench on each cut hinge's input body at its input marker origin), L.loop_rank[0] (rank of
    the constraint system), L.svr[0] (the conditioning monitor: the square root of the ratio of
    the ``r``-th to the first pivot of the constraint compliance's factorisation, ``r`` =
    L.ref_rank[0] or, when that is 0, the rank; it goes through zero linearly where the loops
    lose rank) and corrects udot, x, the drivers' loads in tau and Wh (every row if
    ``wrenches``, else the rows of hinges with a driven coordinate, as in :func:`riccati`).

    Four steps, each a kernel of its own: :func:`cut_geometry` (constraint directions,
    residuals and the supplementary equations' right-hand side), :func:`load_sweeps` (the
    tree's response to each unit constraint load: the constraint compliance A, m x m, of the
    rows the tree responds to), :func:`psd_solve` (A is symmetric positive semi-definite:
    Cholesky factorisation with symmetric pivoting, pivots below 1e-10 of the largest
    diagonal ending it, so that redundant constraints give the minimum-norm loads) and
    :func:`apply_loop_loads`. :func:`_fixed_run` calls the four itself with the arrays taken
    out of the structs once per chunk: keep the two in step. Why four leaves and not one
    kernel: a compiled function keeps the reference counts of the arrays it holds across a call
    to another compiled function that LLVM does not inline (the call's error exit releases
    them), and a call with more than 30 arguments passes them as a tuple built, with reference
    counts, at every call; a leaf with at most 30 arguments costs none.
    """
    m = C.c_of_row.size + C.cp_ab.shape[0]
    if m == 0:
        return
    cut_geometry(C.c_code, C.c_bi, C.c_Ri, C.c_pi, C.c_bo, C.c_Ro, C.c_po, C.c_m, C.c_of_row,
                 C.stab, C.cp_u, C.cp_ab, L.F, L.Ncol, L.pcut, L.vres, L.phi, L.ccut, L.bcon, R,
                 pb, w, vh, hp, x, udot)
    ma, big = load_sweeps(C.c_bi, C.c_bo, C.c_m, C.c_of_row, C.cp_u, C.cp_ab, L.Ncol, L.pcut,
                          L.pB, L.paB, L.rB, L.Acon, L.bcon, L.act, L.dud, L.dx, L.dWh, parent,
                          code, uo, hp, Sg, IA, U, Dinv, nfree, fidx, wrenches, bool(True))
    rank = psd_solve(L.Acon, ma, L.bcon, L.lam, L.Gch, L.Mch, L.pv, L.perm, L.zv, L.wv,
                     1e-10 * big)
    apply_loop_loads(ma, L.act, rank, L.ref_rank, L.pv, L.svr, L.loop_rank, L.lam, L.dud, L.dx,
                     L.dWh, L.Ncol, C.c_of_row, C.cp_ab, C.cp_u, L.Wcut, nu, uo, nfree, driven, Sg,
                     udot, x, Wh, tau, wrenches)


@njit(**_JIT)
def apply_loop_loads(ma, act, rank, ref_rank, pv, svr, loop_rank, lam, dud, dx, dWh, Ncol,
                     c_of_row, cp_ab, cp_u, Wcut, nu, uo, nfree, driven, Sg, udot, x, Wh, tau,
                     wrenches):
    """The constraint loads added to the tree's solution. ``lam[:ma]``: the loads of the rows
    :func:`load_sweeps` kept (``act[:ma]``), from :func:`psd_solve`, whose ``rank`` and pivots
    ``pv`` this records (loop_rank[0], and the conditioning monitor svr[0], see
    :func:`close_loops`); spread here over lam (m), zero on the rows left out. Corrects udot,
    x, Wh (every row if ``wrenches``, else the rows of hinges with a driven coordinate) with
    the unit responses of :func:`load_sweeps`, and fills the cut hinges' wrenches Wcut and the
    drivers' loads in tau. Without ``wrenches`` x is left as the tree's: an integrator's stage
    needs udot and the drivers' loads only, and :func:`riccati` fills x afresh at the next
    evaluation (a row's evaluation is made with the wrenches)."""
    loop_rank[0] = rank
    # conditioning monitor: the r-th pivot against the first (both variances: square root);
    # a reference rank above the rows kept: the loops have lost it
    r_ref = ref_rank[0] if ref_rank[0] > 0 else rank
    svr[0] = (np.sqrt(pv[r_ref - 1] / pv[0]) if 0 < r_ref <= ma and pv[0] > 0.0 else 0.0)
    mc = c_of_row.size
    m = mc + cp_ab.shape[0]
    n = nu.size
    # each entry plus its rows' terms in the rows' order (a loop over the rows innermost: a
    # few rows, no vectorised code for any length around it; see psd_solve)
    for a in range(udot.size):
        if driven[a] == 0:
            s = udot[a]
            for jc in range(ma):
                s += lam[jc] * dud[jc, a]
            udot[a] = s
    for i in range(n):
        if wrenches:
            for a in range(6):
                s = x[i, a]
                for jc in range(ma):
                    s += lam[jc] * dx[jc, i, a]
                x[i, a] = s
        if wrenches or nfree[i] < nu[i]:
            for a in range(6):
                s = Wh[i, a]
                for jc in range(ma):
                    s += lam[jc] * dWh[jc, i, a]
                Wh[i, a] = s
    if ma < m:                          # lam[act[jc]] = lam[jc] (act[jc] >= jc), else zero
        jc = ma - 1
        for j in range(m - 1, -1, -1):
            if jc >= 0 and act[jc] == j:
                lam[j] = lam[jc]
                jc -= 1
            else:
                lam[j] = 0.0
    for k in range(Wcut.shape[0]):
        for a in range(6):
            Wcut[k, a] = 0.0
    for j in range(mc):
        k = c_of_row[j]
        for a in range(6):
            Wcut[k, a] += Ncol[j, a] * lam[j]
    # drivers' loads with the constraint loads included
    for i in range(n):
        o = uo[i]
        for j in range(nu[i]):
            if driven[o + j]:
                s = 0.0
                for a in range(6):
                    s += Sg[i, a, j] * Wh[i, a]
                tau[o + j] = s
    # a coupler's load on a driven coordinate is not the driver's
    for kc in range(cp_ab.shape[0]):
        for side in range(2):
            jv = cp_u[kc, side]
            if driven[jv]:
                tau[jv] -= cp_ab[kc, side] * lam[mc + kc]
