"""The tree's compiled sweeps, the core of the mstmm method: the bodies' kinematics from the
tree coordinates (:func:`tree_kinematics`), the hinges' own loads and gravity (:func:`loads`) and
the Riccati sweep of the transfer matrix method that gives the accelerations (:func:`riccati`).

Everything here works on the flat arrays of :class:`~.system.System` (see its docstring for every
array and the state layout). Conventions:

* Global axes throughout. A body's *hinge point* ``hp[i]`` is the origin of the input marker of
  the tree hinge that joins body ``i`` to its parent: the point where the body's accelerations are
  carried (``x = [eps; a]``: angular acceleration, then the classical acceleration of the body's
  material point there) and where the hinge's wrench ``[torque; force]`` acts.
* Hinge local kinematics (in the output marker frame ``M_A``, about the input marker origin):
  the relative twist of the input marker frame is ``S_loc(q) u`` and its local time derivative is
  ``S_loc(q) du + bias_loc(q, u)``. Globally, with ``Rg`` the rotation of ``M_A`` and ``w_A`` the
  angular velocity of the hinge's output body::

      eps_in = eps_out + Rg S_w du + w_A x (Rg S_w u) + Rg bias_w
      a_in(p) = a_out(p) + Rg S_v du + 2 w_A x (Rg S_v u) + Rg bias_v

  i.e. ``x_in = x_out + S du + c``. A tree hinge used in reverse (its input is the parent) gives
  ``x_child = x_parent - S du - c``: the kernels carry ``s = +1 / -1`` for that.
* The sweep is the Riccati form of the transfer matrix method in articulated form: each body's
  relation ``W = IA x + pA`` between the wrench the parent hinge applies and the acceleration
  (``IA`` = -P, ``pA`` = -p in mstmm.md's notation) is carried from the tips to the root, then the
  accelerations from the root to the tips. O(n).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ...elements.hinge_kinematics import BUSHING, FREE, REVOLUTE, SPHERICAL, hinge_local
from ...elements.hinges import HINGE_TYPES
from ...maths.small import _INL, _JIT, _cr, quat_to_matrix, rotvec


# --------------------------------------------------------------------------------------------------
# kinematics, loads, Riccati sweep (allocation-free)
# --------------------------------------------------------------------------------------------------

#: 0 if a velocity coordinate's motion-subspace column is a rotation ([n; 0]), 1 if a translation
#: ([0; e]), by type code and coordinate: every column is one or the other
COLKIND = np.array([[1 if k == "translation" else 0 for k in t.kinds()] + [0] * (6 - t.dof)
                    for t in HINGE_TYPES.values()], dtype=np.int64)


#: the identity as a 9-tuple (row by row)
_I9 = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)


@njit(**_INL)
def _t9(A, i):
    """Block A[i] of a stack of 3x3 blocks as a 9-tuple, row by row."""
    return (A[i, 0, 0], A[i, 0, 1], A[i, 0, 2], A[i, 1, 0], A[i, 1, 1], A[i, 1, 2],
            A[i, 2, 0], A[i, 2, 1], A[i, 2, 2])


@njit(**_INL)
def _t9mm(a, b):
    """a @ b of two 9-tuples: the arithmetic of small._mm."""
    return (a[0] * b[0] + a[1] * b[3] + a[2] * b[6], a[0] * b[1] + a[1] * b[4] + a[2] * b[7],
            a[0] * b[2] + a[1] * b[5] + a[2] * b[8], a[3] * b[0] + a[4] * b[3] + a[5] * b[6],
            a[3] * b[1] + a[4] * b[4] + a[5] * b[7], a[3] * b[2] + a[4] * b[5] + a[5] * b[8],
            a[6] * b[0] + a[7] * b[3] + a[8] * b[6], a[6] * b[1] + a[7] * b[4] + a[8] * b[7],
            a[6] * b[2] + a[7] * b[5] + a[8] * b[8])


@njit(**_INL)
def _t9mmt(a, b):
    """a @ b.T of two 9-tuples: the arithmetic of small._mmt."""
    return (a[0] * b[0] + a[1] * b[1] + a[2] * b[2], a[0] * b[3] + a[1] * b[4] + a[2] * b[5],
            a[0] * b[6] + a[1] * b[7] + a[2] * b[8], a[3] * b[0] + a[4] * b[1] + a[5] * b[2],
            a[3] * b[3] + a[4] * b[4] + a[5] * b[5], a[3] * b[6] + a[4] * b[7] + a[5] * b[8],
            a[6] * b[0] + a[7] * b[1] + a[8] * b[2], a[6] * b[3] + a[7] * b[4] + a[8] * b[5],
            a[6] * b[6] + a[7] * b[7] + a[8] * b[8])


@njit(**_INL)
def _t9mv(a, v0, v1, v2):
    """a @ v of a 9-tuple: the arithmetic of small._mv."""
    return (a[0] * v0 + a[1] * v1 + a[2] * v2, a[3] * v0 + a[4] * v1 + a[5] * v2,
            a[6] * v0 + a[7] * v1 + a[8] * v2)



@njit(**_JIT)
def tree_kinematics(q, u, parent, code, sgn, qo, uo, nu, mo_R, mo_p, mi_R, mi_p, rc,
                    R, pb, pc, hp, w, vh, Sg, cg, RA, Rrel, d, S, bias):
    """Poses and velocities of all bodies, and each tree hinge's global S and c.

    Tree arrays (see System): ``parent`` ... ``rc``. Fills R (n,3,3) base rotations, pb (n,3)
    base origins, pc (n,3) mass centres, hp (n,3) hinge points, w (n,3) angular velocities, vh
    (n,3) velocity of each body's material point at its hinge point, Sg (n,6,6) ``s * S`` in
    global axes (first nu columns used), cg (n,6) ``s * c``, RA (n,3,3) rotation of each hinge's
    output marker. Scratch (system.Scratch): Rrel (3,3), d (3), S (6,6), bias (6) (the hinge's
    local kinematics, :func:`hinge_local`); the rotations are carried as 9-tuples. Marker
    frames of the ground (parent -1) are given in global axes. Revolute hinges take a fast
    path. See :func:`riccati` on speed.
    """
    for i in range(parent.size):
        k = nu[i]
        revolute = code[i] == REVOLUTE
        # the rotations as 9-tuples (row by row): values, not memory, so that no store to an
        # array makes LLVM load them again; the same arithmetic as _mm, _mmt and _mv
        if revolute:
            # fast path: Rrel = Rz(q), d = 0, S = [e_z; 0], no local bias
            cq, sq = np.cos(q[qo[i]]), np.sin(q[qo[i]])
            rl = _I9
        else:
            hinge_local(code[i], q, qo[i], u, uo[i], Rrel, d, S, bias)
            cq = sq = 0.0
            rl = (Rrel[0, 0], Rrel[0, 1], Rrel[0, 2], Rrel[1, 0], Rrel[1, 1], Rrel[1, 2],
                  Rrel[2, 0], Rrel[2, 1], Rrel[2, 2])
        par = parent[i]
        if par >= 0:
            m3 = _t9(R, par)
            pp0, pp1, pp2 = pb[par, 0], pb[par, 1], pb[par, 2]
            wp0, wp1, wp2 = w[par, 0], w[par, 1], w[par, 2]
        else:
            m3 = _I9
            pp0 = pp1 = pp2 = 0.0
            wp0 = wp1 = wp2 = 0.0
        s = sgn[i]
        if s > 0:
            ra = _t9mm(m3, _t9(mo_R, i))
            t = _t9mv(m3, mo_p[i, 0], mo_p[i, 1], mo_p[i, 2])
            pa0, pa1, pa2 = pp0 + t[0], pp1 + t[1], pp2 + t[2]
            if revolute:
                m1 = (cq * ra[0] + sq * ra[1], cq * ra[1] - sq * ra[0], ra[2],
                      cq * ra[3] + sq * ra[4], cq * ra[4] - sq * ra[3], ra[5],
                      cq * ra[6] + sq * ra[7], cq * ra[7] - sq * ra[6], ra[8])
                pm0, pm1, pm2 = pa0, pa1, pa2
            else:
                m1 = _t9mm(ra, rl)
                t = _t9mv(ra, d[0], d[1], d[2])
                pm0, pm1, pm2 = pa0 + t[0], pa1 + t[1], pa2 + t[2]
            rb = _t9mmt(m1, _t9(mi_R, i))
            t = _t9mv(rb, mi_p[i, 0], mi_p[i, 1], mi_p[i, 2])
            pb0, pb1, pb2 = pm0 - t[0], pm1 - t[1], pm2 - t[2]
        else:
            m1 = _t9mm(m3, _t9(mi_R, i))
            t = _t9mv(m3, mi_p[i, 0], mi_p[i, 1], mi_p[i, 2])
            pm0, pm1, pm2 = pp0 + t[0], pp1 + t[1], pp2 + t[2]
            if revolute:
                ra = (cq * m1[0] - sq * m1[1], cq * m1[1] + sq * m1[0], m1[2],
                      cq * m1[3] - sq * m1[4], cq * m1[4] + sq * m1[3], m1[5],
                      cq * m1[6] - sq * m1[7], cq * m1[7] + sq * m1[6], m1[8])
                pa0, pa1, pa2 = pm0, pm1, pm2
            else:
                ra = _t9mmt(m1, rl)
                t = _t9mv(ra, d[0], d[1], d[2])
                pa0, pa1, pa2 = pm0 - t[0], pm1 - t[1], pm2 - t[2]
            rb = _t9mmt(ra, _t9(mo_R, i))
            t = _t9mv(rb, mo_p[i, 0], mo_p[i, 1], mo_p[i, 2])
            pb0, pb1, pb2 = pa0 - t[0], pa1 - t[1], pa2 - t[2]
        for a in range(3):
            for c in range(3):
                RA[i, a, c] = ra[3 * a + c]
                R[i, a, c] = rb[3 * a + c]
        pb[i, 0], pb[i, 1], pb[i, 2] = pb0, pb1, pb2
        hp[i, 0], hp[i, 1], hp[i, 2] = pm0, pm1, pm2
        t = _t9mv(rb, rc[i, 0], rc[i, 1], rc[i, 2])
        pc[i, 0], pc[i, 1], pc[i, 2] = pb0 + t[0], pb1 + t[1], pb2 + t[2]
        wr0 = wr1 = wr2 = 0.0
        vr0 = vr1 = vr2 = 0.0
        uo_i = uo[i]
        if revolute:
            uj = u[uo_i]
            ra0, ra1, ra2 = ra[2], ra[5], ra[8]
            Sg[i, 0, 0], Sg[i, 1, 0], Sg[i, 2, 0] = s * ra0, s * ra1, s * ra2
            Sg[i, 3, 0] = Sg[i, 4, 0] = Sg[i, 5, 0] = 0.0
            wr0, wr1, wr2 = ra0 * uj, ra1 * uj, ra2 * uj
            k = 0
        for j in range(k):
            sw = _t9mv(ra, S[0, j], S[1, j], S[2, j])
            sv = _t9mv(ra, S[3, j], S[4, j], S[5, j])
            Sg[i, 0, j], Sg[i, 1, j], Sg[i, 2, j] = s * sw[0], s * sw[1], s * sw[2]
            Sg[i, 3, j], Sg[i, 4, j], Sg[i, 5, j] = s * sv[0], s * sv[1], s * sv[2]
            uj = u[uo_i + j]
            wr0 += sw[0] * uj
            wr1 += sw[1] * uj
            wr2 += sw[2] * uj
            vr0 += sv[0] * uj
            vr1 += sv[1] * uj
            vr2 += sv[2] * uj
        if par >= 0:
            t = _cr(wp0, wp1, wp2, pm0 - hp[par, 0], pm1 - hp[par, 1], pm2 - hp[par, 2])
            vp0, vp1, vp2 = vh[par, 0] + t[0], vh[par, 1] + t[1], vh[par, 2] + t[2]
        else:
            vp0 = vp1 = vp2 = 0.0
        wi0, wi1, wi2 = wp0 + s * wr0, wp1 + s * wr1, wp2 + s * wr2
        w[i, 0], w[i, 1], w[i, 2] = wi0, wi1, wi2
        vh[i, 0], vh[i, 1], vh[i, 2] = vp0 + s * vr0, vp1 + s * vr1, vp2 + s * vr2
        if s > 0:
            wa0, wa1, wa2 = wp0, wp1, wp2
        else:
            wa0, wa1, wa2 = wi0, wi1, wi2
        if revolute:
            bw = (0.0, 0.0, 0.0)
            bv = (0.0, 0.0, 0.0)
        else:
            bw = _t9mv(ra, bias[0], bias[1], bias[2])
            bv = _t9mv(ra, bias[3], bias[4], bias[5])
        cw = _cr(wa0, wa1, wa2, wr0, wr1, wr2)
        cv = _cr(wa0, wa1, wa2, vr0, vr1, vr2)
        for a in range(3):
            cg[i, a] = s * (cw[a] + bw[a])
            cg[i, 3 + a] = s * (2.0 * cv[a] + bv[a])


@njit(**_INL)
def _invert_spd(D, n, Dinv, i, work):
    """Dinv[i] = inverse of a small symmetric positive-definite D by Gauss-Jordan (n <= 6)."""
    for a in range(n):
        for b in range(n):
            work[a, b] = D[a, b]
            Dinv[i, a, b] = 1.0 if a == b else 0.0
    for c in range(n):
        piv = c
        for r in range(c + 1, n):
            if abs(work[r, c]) > abs(work[piv, c]):
                piv = r
        if piv != c:
            for b in range(n):
                work[c, b], work[piv, b] = work[piv, b], work[c, b]
                Dinv[i, c, b], Dinv[i, piv, b] = Dinv[i, piv, b], Dinv[i, c, b]
        inv = 1.0 / work[c, c]
        for b in range(n):
            work[c, b] *= inv
            Dinv[i, c, b] *= inv
        for r in range(n):
            if r != c:
                f = work[r, c]
                if f != 0.0:
                    for b in range(n):
                        work[r, b] -= f * work[c, b]
                        Dinv[i, r, b] -= f * Dinv[i, c, b]


@njit(**_JIT)
def riccati(parent, code, nu, uo, mass, JCl, driven, R, pc, hp, w, Sg, cg, Wext, tau, dd, udot,
            x, Wh, IA, pA, U, Dinv, r0, ck, nfree, fidx, paS, scratch, wrenches):
    """Accelerations of the tree in O(n): the Riccati sweep in articulated form.

    Uses Wext (applied wrench on each body at its hinge point, gravity included), tau
    (generalised hinge loads per velocity coordinate), driven and dd (prescribed
    accelerations). Fills udot (driven entries = dd), x (n,6) body accelerations at the hinge
    points, Wh (n,6) the wrench each tree hinge applies on its child at the hinge point and,
    for driven coordinates, tau with the generalised load along the coordinate (the driver's
    plus the hinge's own spring and damper): Wh for every hinge if ``wrenches``, otherwise only
    for the hinges with a driven coordinate (the integrator needs no wrench but the drivers'
    loads, for their work: :func:`power_flows`). IA and pA end up holding each body's
    articulated inertia and bias as seen through its hinge; U, Dinv, r0, ck, nfree, fidx and
    paS the rest of the sweep (reused by :func:`load_sweeps`). ``scratch``: system.Scratch.

    On speed (this and the other kernels of an evaluation): every array argument costs a
    reference count increment and decrement (atomic operations) per call unless numba's
    reference count pruning removes them, which it does only if the function creates no views
    (``A[i]``, slices) and no second names for arrays inside its loops; and a call with more
    than 30 arguments passes them as a tuple that numba builds, with reference counts, at every
    call. Hence the index arguments of the 3x3 helpers and the struct of scratch arrays. A body's
    3x3 blocks (its inertia R JCl R^T, the blocks of Ia carried to the parent) are read into
    scalars before anything is stored: LLVM has no aliasing information, so after a store to
    IA[par] it would load IA[i] again (this kernel alone: 830 -> 670 ns on the crank-slider,
    the same bits).
    """
    base, uv, xp = scratch.t6a, scratch.t6b, scratch.t6c
    Dw, Vt = scratch.t66b, scratch.t66c
    n = parent.size
    for i in range(n):
        m = mass[i]
        # JC = R JCl R^T, symmetric (upper triangle, mirrored), in scalars: a store to any array
        # makes LLVM load R and JCl again
        r00, r01, r02 = R[i, 0, 0], R[i, 0, 1], R[i, 0, 2]
        r10, r11, r12 = R[i, 1, 0], R[i, 1, 1], R[i, 1, 2]
        r20, r21, r22 = R[i, 2, 0], R[i, 2, 1], R[i, 2, 2]
        l00, l01, l02 = JCl[i, 0, 0], JCl[i, 0, 1], JCl[i, 0, 2]
        l10, l11, l12 = JCl[i, 1, 0], JCl[i, 1, 1], JCl[i, 1, 2]
        l20, l21, l22 = JCl[i, 2, 0], JCl[i, 2, 1], JCl[i, 2, 2]
        g00 = r00 * l00 + r01 * l10 + r02 * l20
        g01 = r00 * l01 + r01 * l11 + r02 * l21
        g02 = r00 * l02 + r01 * l12 + r02 * l22
        g10 = r10 * l00 + r11 * l10 + r12 * l20
        g11 = r10 * l01 + r11 * l11 + r12 * l21
        g12 = r10 * l02 + r11 * l12 + r12 * l22
        g20 = r20 * l00 + r21 * l10 + r22 * l20
        g21 = r20 * l01 + r21 * l11 + r22 * l21
        g22 = r20 * l02 + r21 * l12 + r22 * l22
        j00 = g00 * r00 + g01 * r01 + g02 * r02
        j01 = g00 * r10 + g01 * r11 + g02 * r12
        j02 = g00 * r20 + g01 * r21 + g02 * r22
        j11 = g10 * r10 + g11 * r11 + g12 * r12
        j12 = g10 * r20 + g11 * r21 + g12 * r22
        j22 = g20 * r20 + g21 * r21 + g22 * r22
        j10 = j01
        j20 = j02
        j21 = j12
        r0_, r1_, r2_ = pc[i, 0] - hp[i, 0], pc[i, 1] - hp[i, 1], pc[i, 2] - hp[i, 2]
        rr = r0_ * r0_ + r1_ * r1_ + r2_ * r2_
        rv = (r0_, r1_, r2_)
        IA[i, 0, 0] = j00 - m * rv[0] * rv[0] + m * rr
        IA[i, 0, 1] = j01 - m * rv[0] * rv[1] + 0.0
        IA[i, 0, 2] = j02 - m * rv[0] * rv[2] + 0.0
        IA[i, 1, 0] = j10 - m * rv[1] * rv[0] + 0.0
        IA[i, 1, 1] = j11 - m * rv[1] * rv[1] + m * rr
        IA[i, 1, 2] = j12 - m * rv[1] * rv[2] + 0.0
        IA[i, 2, 0] = j20 - m * rv[2] * rv[0] + 0.0
        IA[i, 2, 1] = j21 - m * rv[2] * rv[1] + 0.0
        IA[i, 2, 2] = j22 - m * rv[2] * rv[2] + m * rr
        for a in range(3):
            for b in range(3):
                IA[i, 3 + a, 3 + b] = m if a == b else 0.0
        # m ~r (top right) and its transpose (bottom left)
        IA[i, 0, 3], IA[i, 0, 4], IA[i, 0, 5] = 0.0, -m * r2_, m * r1_
        IA[i, 1, 3], IA[i, 1, 4], IA[i, 1, 5] = m * r2_, 0.0, -m * r0_
        IA[i, 2, 3], IA[i, 2, 4], IA[i, 2, 5] = -m * r1_, m * r0_, 0.0
        for a in range(3):
            for b in range(3):
                IA[i, 3 + a, b] = IA[i, b, 3 + a]
        w0, w1, w2 = w[i, 0], w[i, 1], w[i, 2]
        Jw = (j00 * w0 + j01 * w1 + j02 * w2, j10 * w0 + j11 * w1 + j12 * w2,
              j20 * w0 + j21 * w1 + j22 * w2)
        wr = _cr(w0, w1, w2, r0_, r1_, r2_)
        wwr = _cr(w0, w1, w2, wr[0], wr[1], wr[2])
        g1 = _cr(w0, w1, w2, Jw[0], Jw[1], Jw[2])
        g2 = _cr(r0_, r1_, r2_, wwr[0], wwr[1], wwr[2])
        for a in range(3):
            pA[i, a] = g1[a] + m * g2[a] - Wext[i, a]
            pA[i, 3 + a] = m * wwr[a] - Wext[i, 3 + a]
    for i in range(n - 1, -1, -1):
        k = nu[i]
        o = uo[i]
        for a in range(6):
            ck[i, a] = cg[i, a]
        nf = 0
        for j in range(k):
            if driven[o + j]:
                for a in range(6):
                    ck[i, a] += Sg[i, a, j] * dd[o + j]
            else:
                fidx[i, nf] = j
                nf += 1
        nfree[i] = nf
        par = parent[i]
        ci = code[i]
        if nf == 1:
            # one free coordinate (the common case): scalar articulated update
            j = fidx[i, 0]
            r = 3 * COLKIND[ci, j]
            s0, s1, s2 = Sg[i, r, j], Sg[i, r + 1, j], Sg[i, r + 2, j]
            for a in range(6):
                uv[a] = IA[i, a, r] * s0 + IA[i, a, r + 1] * s1 + IA[i, a, r + 2] * s2
                U[i, a, 0] = uv[a]
            dinv = 1.0 / (s0 * uv[r] + s1 * uv[r + 1] + s2 * uv[r + 2])
            Dinv[i, 0, 0] = dinv
            rs = tau[o + j] - (s0 * pA[i, r] + s1 * pA[i, r + 1] + s2 * pA[i, r + 2])
            r0[i, 0] = rs
            if par < 0:
                continue
            if ck[i, 3] == 0.0 and ck[i, 4] == 0.0 and ck[i, 5] == 0.0:    # rotations only
                for a in range(6):
                    paS[i, a] = (pA[i, a] + IA[i, a, 0] * ck[i, 0] + IA[i, a, 1] * ck[i, 1]
                             + IA[i, a, 2] * ck[i, 2])
            else:
                for a in range(6):
                    sa = pA[i, a]
                    for b in range(6):
                        sa += IA[i, a, b] * ck[i, b]
                    paS[i, a] = sa
            sc = rs
            for a in range(6):
                sc -= uv[a] * ck[i, a]
            sc *= dinv
            for a in range(6):
                paS[i, a] += uv[a] * sc
                ua = uv[a] * dinv
                for b in range(a, 6):
                    v = ua * uv[b]
                    IA[i, a, b] -= v
                    if b != a:
                        IA[i, b, a] -= v
        else:
            # U = IA S_free, D = S^T U, r0 = tau_f - S^T pA
            for jf in range(nf):
                j = fidx[i, jf]
                r = 3 * COLKIND[ci, j]
                s0, s1, s2 = Sg[i, r, j], Sg[i, r + 1, j], Sg[i, r + 2, j]
                for a in range(6):
                    U[i, a, jf] = IA[i, a, r] * s0 + IA[i, a, r + 1] * s1 + IA[i, a, r + 2] * s2
                r0[i, jf] = tau[o + j] - (s0 * pA[i, r] + s1 * pA[i, r + 1] + s2 * pA[i, r + 2])
            for j1 in range(nf):
                jj = fidx[i, j1]
                r = 3 * COLKIND[ci, jj]
                for j2 in range(nf):
                    Dw[j1, j2] = (Sg[i, r, jj] * U[i, r, j2] + Sg[i, r + 1, jj] * U[i, r + 1, j2]
                                  + Sg[i, r + 2, jj] * U[i, r + 2, j2])
            if nf > 1:
                _invert_spd(Dw, nf, Dinv, i, Vt)
            if par < 0:
                continue
            # articulated relation seen through the hinge, in place: IA[i] <- Ia = IA - U Dinv U^T,
            # paS[i] <- pA + IA ck + U Dinv (r0 - U^T ck)   (W_child = Ia (E x_parent + e) + paS)
            for a in range(6):
                sa = pA[i, a]
                for b in range(6):
                    sa += IA[i, a, b] * ck[i, b]
                paS[i, a] = sa
            if nf > 0:
                # V = U Dinv  (6 x nf) in Vt
                for a in range(6):
                    for j2 in range(nf):
                        sa = 0.0
                        for j1 in range(nf):
                            sa += U[i, a, j1] * Dinv[i, j1, j2]
                        Vt[a, j2] = sa
                for jf in range(nf):
                    sa = r0[i, jf]
                    for a in range(6):
                        sa -= U[i, a, jf] * ck[i, a]
                    for a in range(6):
                        paS[i, a] += Vt[a, jf] * sa
                for a in range(6):
                    for b in range(a, 6):
                        sa = 0.0
                        for jf in range(nf):
                            sa += Vt[a, jf] * U[i, b, jf]
                        IA[i, a, b] -= sa
                        if b != a:
                            IA[i, b, a] -= sa
        # carry to the parent's hinge point: P += E^T Ia E, pA_par += E^T (pa + Ia e)
        l0, l1, l2 = hp[i, 0] - hp[par, 0], hp[i, 1] - hp[par, 1], hp[i, 2] - hp[par, 2]
        wp0, wp1, wp2 = w[par, 0], w[par, 1], w[par, 2]
        wl = _cr(wp0, wp1, wp2, l0, l1, l2)
        ev = _cr(wp0, wp1, wp2, wl[0], wl[1], wl[2])
        p0 = paS[i, 0] + IA[i, 0, 3] * ev[0] + IA[i, 0, 4] * ev[1] + IA[i, 0, 5] * ev[2]
        p1 = paS[i, 1] + IA[i, 1, 3] * ev[0] + IA[i, 1, 4] * ev[1] + IA[i, 1, 5] * ev[2]
        p2 = paS[i, 2] + IA[i, 2, 3] * ev[0] + IA[i, 2, 4] * ev[1] + IA[i, 2, 5] * ev[2]
        p3 = paS[i, 3] + IA[i, 3, 3] * ev[0] + IA[i, 3, 4] * ev[1] + IA[i, 3, 5] * ev[2]
        p4 = paS[i, 4] + IA[i, 4, 3] * ev[0] + IA[i, 4, 4] * ev[1] + IA[i, 4, 5] * ev[2]
        p5 = paS[i, 5] + IA[i, 5, 3] * ev[0] + IA[i, 5, 4] * ev[1] + IA[i, 5, 5] * ev[2]
        t = _cr(l0, l1, l2, p3, p4, p5)
        pA[par, 0] += p0 + t[0]
        pA[par, 1] += p1 + t[1]
        pA[par, 2] += p2 + t[2]
        pA[par, 3] += p3
        pA[par, 4] += p4
        pA[par, 5] += p5
        # blocks of Ia: A (top left), B (top right), C (bottom right), read once into scalars
        # (LLVM must assume that a store to IA[par] changes IA[i]: it would load them again)
        a00, a01, a02 = IA[i, 0, 0], IA[i, 0, 1], IA[i, 0, 2]
        a10, a11, a12 = IA[i, 1, 0], IA[i, 1, 1], IA[i, 1, 2]
        a20, a21, a22 = IA[i, 2, 0], IA[i, 2, 1], IA[i, 2, 2]
        b00, b01, b02 = IA[i, 0, 3], IA[i, 0, 4], IA[i, 0, 5]
        b10, b11, b12 = IA[i, 1, 3], IA[i, 1, 4], IA[i, 1, 5]
        b20, b21, b22 = IA[i, 2, 3], IA[i, 2, 4], IA[i, 2, 5]
        c00, c01, c02 = IA[i, 3, 3], IA[i, 3, 4], IA[i, 3, 5]
        c10, c11, c12 = IA[i, 4, 3], IA[i, 4, 4], IA[i, 4, 5]
        c20, c21, c22 = IA[i, 5, 3], IA[i, 5, 4], IA[i, 5, 5]
        # Y = B + ~l C: column c of ~l C is l x C[:, c]
        t = _cr(l0, l1, l2, c00, c10, c20)
        y00, y10, y20 = b00 + t[0], b10 + t[1], b20 + t[2]
        t = _cr(l0, l1, l2, c01, c11, c21)
        y01, y11, y21 = b01 + t[0], b11 + t[1], b21 + t[2]
        t = _cr(l0, l1, l2, c02, c12, c22)
        y02, y12, y22 = b02 + t[0], b12 + t[1], b22 + t[2]
        # top left: A - Y ~l + ~l B^T; row a of Y ~l is Y[a] x l (yl_a), column c of ~l B^T is
        # l x B[c] (z_c); as before: (IA[par] + (A + z)) - yl
        z0 = _cr(l0, l1, l2, b00, b01, b02)
        z1 = _cr(l0, l1, l2, b10, b11, b12)
        z2 = _cr(l0, l1, l2, b20, b21, b22)
        yl0 = _cr(y00, y01, y02, l0, l1, l2)
        yl1 = _cr(y10, y11, y12, l0, l1, l2)
        yl2 = _cr(y20, y21, y22, l0, l1, l2)
        IA[par, 0, 0] = (IA[par, 0, 0] + (a00 + z0[0])) - yl0[0]
        IA[par, 1, 0] = (IA[par, 1, 0] + (a10 + z0[1])) - yl1[0]
        IA[par, 2, 0] = (IA[par, 2, 0] + (a20 + z0[2])) - yl2[0]
        IA[par, 0, 1] = (IA[par, 0, 1] + (a01 + z1[0])) - yl0[1]
        IA[par, 1, 1] = (IA[par, 1, 1] + (a11 + z1[1])) - yl1[1]
        IA[par, 2, 1] = (IA[par, 2, 1] + (a21 + z1[2])) - yl2[1]
        IA[par, 0, 2] = (IA[par, 0, 2] + (a02 + z2[0])) - yl0[2]
        IA[par, 1, 2] = (IA[par, 1, 2] + (a12 + z2[1])) - yl1[2]
        IA[par, 2, 2] = (IA[par, 2, 2] + (a22 + z2[2])) - yl2[2]
        IA[par, 0, 3] += y00
        IA[par, 3, 0] += y00
        IA[par, 3, 3] += c00
        IA[par, 0, 4] += y01
        IA[par, 4, 0] += y01
        IA[par, 3, 4] += c01
        IA[par, 0, 5] += y02
        IA[par, 5, 0] += y02
        IA[par, 3, 5] += c02
        IA[par, 1, 3] += y10
        IA[par, 3, 1] += y10
        IA[par, 4, 3] += c10
        IA[par, 1, 4] += y11
        IA[par, 4, 1] += y11
        IA[par, 4, 4] += c11
        IA[par, 1, 5] += y12
        IA[par, 5, 1] += y12
        IA[par, 4, 5] += c12
        IA[par, 2, 3] += y20
        IA[par, 3, 2] += y20
        IA[par, 5, 3] += c20
        IA[par, 2, 4] += y21
        IA[par, 4, 2] += y21
        IA[par, 5, 4] += c21
        IA[par, 2, 5] += y22
        IA[par, 5, 2] += y22
        IA[par, 5, 5] += c22
    for i in range(n):
        k = nu[i]
        o = uo[i]
        par = parent[i]
        if par >= 0:
            l0, l1, l2 = hp[i, 0] - hp[par, 0], hp[i, 1] - hp[par, 1], hp[i, 2] - hp[par, 2]
            e0, e1, e2 = x[par, 0], x[par, 1], x[par, 2]
            el = _cr(e0, e1, e2, l0, l1, l2)
            wp0, wp1, wp2 = w[par, 0], w[par, 1], w[par, 2]
            wl = _cr(wp0, wp1, wp2, l0, l1, l2)
            wwl = _cr(wp0, wp1, wp2, wl[0], wl[1], wl[2])
            base[0], base[1], base[2] = e0, e1, e2
            base[3] = x[par, 3] + el[0] + wwl[0]
            base[4] = x[par, 4] + el[1] + wwl[1]
            base[5] = x[par, 5] + el[2] + wwl[2]
        else:
            for a in range(6):
                base[a] = 0.0
        for a in range(6):
            base[a] += ck[i, a]
        nf = nfree[i]
        for j in range(k):
            if driven[o + j]:
                udot[o + j] = dd[o + j]
        if nf > 0:
            for jf in range(nf):
                s = r0[i, jf]
                for a in range(6):
                    s -= U[i, a, jf] * base[a]
                uv[jf] = s
            for j1 in range(nf):
                s = 0.0
                for j2 in range(nf):
                    s += Dinv[i, j1, j2] * uv[j2]
                udot[o + fidx[i, j1]] = s
            for jf in range(nf):
                j = fidx[i, jf]
                ud = udot[o + j]
                r = 3 * COLKIND[code[i], j]
                base[r] += Sg[i, r, j] * ud
                base[r + 1] += Sg[i, r + 1, j] * ud
                base[r + 2] += Sg[i, r + 2, j] * ud
        for a in range(6):
            x[i, a] = base[a]
        if not wrenches and nf == k:
            continue                 # the integrator needs the wrench of driven hinges only
        if par >= 0:
            # Wh = Ia (E x_parent + e) + paS = Ia (base - ck - S du) + paS
            for a in range(6):
                xp[a] = base[a] - ck[i, a]
            for jf in range(nf):
                j = fidx[i, jf]
                ud = udot[o + j]
                r = 3 * COLKIND[code[i], j]
                xp[r] -= Sg[i, r, j] * ud
                xp[r + 1] -= Sg[i, r + 1, j] * ud
                xp[r + 2] -= Sg[i, r + 2, j] * ud
            for a in range(6):
                s = paS[i, a]
                for b in range(6):
                    s += IA[i, a, b] * xp[b]
                Wh[i, a] = s
        else:
            for a in range(6):
                s = pA[i, a]
                for b in range(6):
                    s += IA[i, a, b] * base[b]
                Wh[i, a] = s
        for j in range(k):
            if driven[o + j]:
                s = 0.0
                for a in range(6):
                    s += Sg[i, a, j] * Wh[i, a]
                tau[o + j] = s


@njit(**_JIT)
def _rotation_spring(c, q, qo, u, o, hk, hc, href, hRref, i, tau):
    """Hinge loads of a spherical, free or bushing hinge (see :func:`loads`)."""
    qq = q[qo:qo + 7]
    s0 = 0
    if c != SPHERICAL:
        for a in range(3):
            tau[o + a] = -hk[o + a] * (qq[a] - href[o + a]) - hc[o + a] * u[o + a]
        s0 = 3
    Rrel = quat_to_matrix(qq[s0], qq[s0 + 1], qq[s0 + 2], qq[s0 + 3])
    phi = rotvec(Rrel @ hRref[i].T)
    for a in range(3):
        tau[o + s0 + a] = -hk[o + s0 + a] * phi[a] - hc[o + s0 + a] * u[o + s0 + a]


@njit(**_JIT)
def loads(q, u, applied, mass, gravity, code, qo, uo, nu, hk, hc, href, hRref, pc, hp, FC, TC,
          Wext, tau):
    """Applied loads: Wext (n,6) wrench on each body at its hinge point, tau hinge loads.

    With ``applied`` false, FC (n,3) and TC (n,3) are set to gravity alone; otherwise they hold
    what :func:`applied_loads` put there. Hinge springs and dampers act on every velocity
    coordinate: ``tau = -k (q - ref) - c u``; the rotations of spherical, free and bushing hinges
    use the rotation vector of the relative rotation w.r.t. the reference rotation ``hRref``.
    """
    n = mass.size
    if not applied:
        for i in range(n):
            for a in range(3):
                FC[i, a] = mass[i] * gravity[a]
                TC[i, a] = 0.0
    for i in range(n):
        t = _cr(pc[i, 0] - hp[i, 0], pc[i, 1] - hp[i, 1], pc[i, 2] - hp[i, 2],
                FC[i, 0], FC[i, 1], FC[i, 2])
        for a in range(3):
            Wext[i, a] = TC[i, a] + t[a]
            Wext[i, 3 + a] = FC[i, a]
    for i in range(n):
        o = uo[i]
        c = code[i]
        if c == SPHERICAL or c == FREE or c == BUSHING:
            _rotation_spring(c, q, qo[i], u, o, hk, hc, href, hRref, i, tau)
        else:
            for j in range(nu[i]):
                tau[o + j] = -hk[o + j] * (q[qo[i] + j] - href[o + j]) - hc[o + j] * u[o + j]
