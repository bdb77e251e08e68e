"""Numba kernels of the tree dynamics: kinematics, loads, the Riccati sweep, RK4 and
semi-implicit Euler.

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
from ...maths.small import _INL, _JIT, _cr, _mm, _mv, quat_to_matrix, rotvec
from ...elements.forces import applied_loads, has_loads
# <generated: imports> written by scripts/generate_registry.py
from ...elements.forces import (contact, cut_spring, nonlinear_bushing, point,
                                rotational_spring_damper, spring_damper, stop)
# </generated: imports>
from ...elements.hinges import HINGE_TYPES, TYPE_CODES  # noqa: F401  (TYPE_CODES: kernels' users)
# one relative kinematics per hinge type, shared with the other methods (issue 36 item 2)
from ...elements.hinge_kinematics import (  # noqa: F401  (names the kernels' users read here)
    BUSHING, CUT_ROT, CUT_TRANS, CYLINDRICAL, FIXED, FREE, NQ, NU, PLANAR, PRISMATIC, REVOLUTE,
    SPHERICAL, UNIVERSAL, cut_count, hinge_local, hinge_qdot, state_rate as _state_rate)
# the power of drivers, forces and dampers, shared with the other methods
from ..shared.power import hinge_power, power_flows  # noqa: F401  (power_flows: System)


# --------------------------------------------------------------------------------------------------
# kinematics, loads, Riccati sweep, state derivative, RK4 (allocation-free)
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


@njit(**_JIT)
def _state_in(y, drv, nq_tot, drv_idx, drv_q, q, u, dd):
    """Coordinates q, u and prescribed accelerations dd from the state and the drivers."""
    for j in range(nq_tot):
        q[j] = y[j]
    for j in range(u.size):
        u[j] = y[nq_tot + j]
        dd[j] = 0.0
        k = drv_idx[j]
        if k >= 0:
            q[drv_q[j]] = drv[k, 0]
            u[j] = drv[k, 1]
            dd[j] = drv[k, 2]


@njit(**_JIT)
def evaluate_into(y, drv, mags, T, F, W, ydot):
    """State derivative at (y, drivers, magnitudes) into ``ydot``; fills the work arrays W.

    Each kernel gets only the arrays it uses (see :func:`riccati` on speed). :func:`_fixed_run`
    makes the same calls with the arrays taken out of the structs once per run: keep the two
    in step. ``bool(True)``: a flag of type bool rather than a literal, so that numba compiles
    riccati and close_loops once for both values.
    """
    _state_in(y, drv, T.nq_tot, T.drv_idx, T.drv_q, W.q, W.u, W.dd)
    tree_kinematics(W.q, W.u, T.parent, T.code, T.sgn, T.qo, T.uo, T.nu, T.mo_R, T.mo_p,
                    T.mi_R, T.mi_p, T.rc, W.R, W.pb, W.pc, W.hp, W.w, W.vh, W.Sg, W.cg, W.RA,
                    W.scratch.Rrel, W.scratch.dloc, W.scratch.Sloc, W.scratch.bias)
    applied = has_loads(F)
    if applied:
        applied_loads(mags, F, T.mass, W.R, W.pb, W.pc, W.hp, W.w, W.vh, W.FC, W.TC)
    loads(W.q, W.u, applied, T.mass, F.gravity, T.code, T.qo, T.uo, T.nu, T.hk, T.hc, T.href,
          T.hRref, W.pc, W.hp, W.FC, W.TC, W.Wext, W.tau)
    riccati(T.parent, T.code, T.nu, T.uo, T.mass, T.JCl, T.driven, W.R, W.pc, W.hp, W.w, W.Sg,
            W.cg, W.Wext, W.tau, W.dd, W.udot, W.x, W.Wh, W.IA, W.pA, W.U, W.Dinv, W.r0, W.ck,
            W.nfree, W.fidx, W.paS, W.scratch, bool(True))
    if T.m_tot > 0:
        close_loops(T.loops, W.loops, T.parent, T.code, T.uo, T.nu, T.driven, W.R, W.pb, W.w,
                    W.vh, W.hp, W.Sg, W.IA, W.U, W.Dinv, W.nfree, W.fidx, W.x, W.udot, W.Wh,
                    W.tau, bool(True))
        # what a cut hinge applies on its input body: its springs' and dampers' loads too
        cut_spring.add_wrenches(F.cut_spring, W.R, W.pb, W.hp, W.w, W.vh, W.loops.Wcut)
    _state_rate(W.q, W.u, W.udot, T.code, T.qo, T.uo, T.nq, T.nu, T.nq_tot, ydot)


@njit(**_JIT)
def normalise_quaternions(y, quat):
    for k in range(quat.size):
        o = quat[k]
        n = np.sqrt(y[o] ** 2 + y[o + 1] ** 2 + y[o + 2] ** 2 + y[o + 3] ** 2)
        for a in range(4):
            y[o + a] /= n


def rk4_run(y, k0, nsteps, h, drv_grid, mag_grid, T, F, W, out, out_every, out_start, flows,
            out_flows, monitor, B):
    """``nsteps`` RK4 steps from ``y`` (updated in place), starting at step index ``k0``.

    ``drv_grid`` (2K+1, nd, 3) and ``mag_grid`` (2K+1, nm) hold the time functions at the
    half steps ``t0 + j h / 2`` of the whole run. Every ``out_every``-th state (by global step
    index) is written to ``out[out_start + ...]``. Returns the number of rows written. Releases
    the GIL (``nogil``): another thread can run while a chunk of steps computes.

    ``flows`` (3,): the work of the drivers and of the applied forces and the energy the
    dampers dissipated since t = 0 (J), carried on (updated in place) as extra states of the
    same RK4 scheme: each stage's :func:`power_flows` weighted 1, 2, 2, 1. They are written to
    ``out_flows`` with the states. An empty ``flows`` (size 0): nothing does work, skip it.

    ``monitor`` (nsteps,): closed loops' conditioning at the start of every step (``L.svr``,
    see :func:`close_loops`), for the singular positions met between output rows; an empty
    array: not recorded.

    ``B`` (system.Stack, leading axis at least the rows written; or 0: none): what the result
    rows need of the evaluation at each written state, in the same places as ``out``, as
    :func:`instants_into` fills it. It is the evaluation the next step starts with (made with
    the hinges' wrenches), so a row costs no evaluation of its own but for the chunk's last
    one, evaluated after the last step.

    The steps are those of :func:`_fixed_run` (see there how an evaluation is made). This is a
    Python function, and so is :func:`euler_run`: a compiled one would compile the whole of
    :func:`_fixed_run` again, inlined into it (22 s of the first compile each, for no speed).
    """
    return _fixed_run(y, k0, nsteps, h, drv_grid, mag_grid, T, F, W, out, out_every, out_start,
                      flows, out_flows, monitor, B, False, -1)


def euler_run(y, k0, nsteps, h, drv_grid, mag_grid, T, F, W, out, out_every, out_start, flows,
              out_flows, monitor, B):
    """``nsteps`` semi-implicit (symplectic) Euler steps from ``y`` (updated in place),
    starting at step index ``k0``: one evaluation per step,

        ``u_{n+1} = u_n + h udot(t_n, q_n, u_n)``,   ``q_{n+1} = q_n + h qdot(q_n, u_{n+1})``

    (the new rates move the positions; quaternions normalised after every step). First order;
    without dampers the energy error stays bounded instead of drifting, and an undamped
    oscillator is stable for ``h w < 2`` (:data:`..runtime.EULER_LIMIT`; RK4: 2.78 with four
    evaluations).

    The arguments and the result are those of :func:`rk4_run` (the drivers and magnitudes are
    read at the steps' starts, the even entries of the same half-step grids); ``flows`` is
    carried on to first order: the power at the start of each step times ``h``.
    """
    return _fixed_run(y, k0, nsteps, h, drv_grid, mag_grid, T, F, W, out, out_every, out_start,
                      flows, out_flows, monitor, B, True, -1)


def row_evaluations(Y, drv, mags, T, F, W, B):
    """What :func:`instants_into` does, made by :func:`_fixed_run`: the states Y (k, ny) with
    drivers drv (k, nd, 3) and magnitudes mags (k, nm) evaluated as a fixed-step run evaluates
    a result row's state (with the hinges' wrenches), copied into row k of ``B``
    (system.Stack). W is left with the last one's evaluation.

    For the few rows of a fixed-step run that are not at the end of a chunk's step (the first
    row, a last row off the output grid) and for ``System.instant``: a fixed-step run then
    needs no compiled code but :func:`_fixed_run`'s, and the warm-up's fixed-step stage
    compiles neither :func:`evaluate_into` nor :func:`instants_into` (about 40 % of its
    compile). A Python loop of compiled calls (about 0.2 ms each): not for many rows
    (:func:`instants_into` is one call).
    """
    out = np.zeros((1, Y.shape[1]))
    none = np.zeros(0)
    out_flows = np.zeros((1, 3))
    for k in range(Y.shape[0]):
        _fixed_run(np.ascontiguousarray(Y[k], dtype=np.float64), 0, 0, 0.0, drv[k:k + 1],
                   mags[k:k + 1], T, F, W, out, 1, 0, none, out_flows, none, B, False, k)


@njit(**_JIT)
def _fixed_run(y, k0, nsteps, h, drv_grid, mag_grid, T, F, W, out, out_every, out_start, flows,
               out_flows, monitor, B, euler, row0):
    """The steps of :func:`rk4_run` (``euler`` False: four stages) and :func:`euler_run`
    (``euler`` True: one evaluation, then ``u += h udot`` before the position rates are taken).

    A written row's evaluation (``B``, see :func:`rk4_run`) is the next step's first: it is
    made with the hinges' wrenches (``wr``) and copied before the step goes on (before euler's
    ``u += h udot``); when the last step writes a row, one more first stage evaluates it
    (``s == nsteps``) and nothing else. ``row0`` (-1: none): a row of ``B`` to which the
    state ``y`` is written, evaluated, before the first step (:func:`row_evaluations`: with
    ``nsteps`` 0, that alone).

    Each evaluation makes the calls of :func:`evaluate_into` (see there why), with the arrays
    taken out of the structs once, here, and without the hinge wrenches: W.Wh is left as it
    was but for the hinges with a driven coordinate (see :func:`riccati`). When the run tracks
    the work, the applied loads and their power come from one pass over the force elements
    (contacts are evaluated once: ``contact.add_loads`` returns the power they dissipate).

    No struct crosses a call made at every evaluation: the force laws' kernels are called from
    here with their own struct each (a leaf: it calls nothing that takes the struct), and the
    loop closure's four steps (:func:`close_loops`) are called from here with their arrays one
    by one. A compiled function that is given a struct and passes it, or its arrays, on to
    another call keeps a reference count increment and decrement (atomic operations) per array
    of the struct at every call: numba's reference pruning leaves them. Through the forces'
    dispatcher and ``close_loops`` that was a fifth of a small model's step (perf, the
    crank-slider); through a single loop-closure kernel taking 62 arrays, an eighth of a loop's.
    """
    # tree
    parent, code, sgn, qo, uo, nq, nu = T.parent, T.code, T.sgn, T.qo, T.uo, T.nq, T.nu
    mo_R, mo_p, mi_R, mi_p, rc, mass, JCl = T.mo_R, T.mo_p, T.mi_R, T.mi_p, T.rc, T.mass, T.JCl
    hk, hc, href, hRref, driven = T.hk, T.hc, T.href, T.hRref, T.driven
    drv_idx, drv_q, nq_tot, quat = T.drv_idx, T.drv_q, T.nq_tot, T.quat
    loops, C, L = T.m_tot > 0, T.loops, W.loops
    c_code, c_bi, c_Ri, c_pi, c_bo, c_Ro, c_po = C.c_code, C.c_bi, C.c_Ri, C.c_pi, C.c_bo, \
        C.c_Ro, C.c_po
    c_m, c_of_row, stab, cp_u, cp_ab = C.c_m, C.c_of_row, C.stab, C.cp_u, C.cp_ab
    Ncol, pcut, vres, phi, ccut, Acon, bcon, lam = L.Ncol, L.pcut, L.vres, L.phi, L.ccut, \
        L.Acon, L.bcon, L.lam
    dud, dx, dWh, pB, paB, rB, Wcut, loop_rank, Fcut = L.dud, L.dx, L.dWh, L.pB, L.paB, L.rB, \
        L.Wcut, L.loop_rank, L.F
    act = L.act
    Gch, Mch, pv, perm, zv, wv, svr, ref_rank = L.Gch, L.Mch, L.pv, L.perm, L.zv, L.wv, \
        L.svr, L.ref_rank
    # forces: each law's struct and count (the laws' kernels are called from here, not through
    # forces.applied_loads and force_power: see the docstring)
    gravity = F.gravity
    applied = has_loads(F)
    # <generated: unpack> written by scripts/generate_registry.py
    f_point = F.point
    n_point = f_point.pf_body.shape[0]
    f_spring_damper = F.spring_damper
    n_spring_damper = f_spring_damper.sd_bi.shape[0]
    f_rotational_spring_damper = F.rotational_spring_damper
    n_rotational_spring_damper = f_rotational_spring_damper.rs_bi.shape[0]
    f_contact = F.contact
    n_contact = f_contact.ct_int.shape[0]
    f_stop = F.stop
    n_stop = f_stop.st_int.shape[0]
    f_cut_spring = F.cut_spring
    n_cut_spring = f_cut_spring.cs_int.shape[0]
    f_nonlinear_bushing = F.nonlinear_bushing
    n_nonlinear_bushing = f_nonlinear_bushing.nb_bi.shape[0]
    # </generated: unpack>
    # work
    q, u, dd, R, pb, pc, hp, w, vh = W.q, W.u, W.dd, W.R, W.pb, W.pc, W.hp, W.w, W.vh
    Sg, cg, RA, Wext, tau, udot, x, Wh = W.Sg, W.cg, W.RA, W.Wext, W.tau, W.udot, W.x, W.Wh
    IA, pA, U, Dinv, r0, ck, nfree, fidx = W.IA, W.pA, W.U, W.Dinv, W.r0, W.ck, W.nfree, W.fidx
    FC, TC, paS, scratch = W.FC, W.TC, W.paS, W.scratch
    Rrel, dloc, Sloc, bias = scratch.Rrel, scratch.dloc, scratch.Sloc, scratch.bias
    kd, acc, yt = W.kd, W.kacc, W.ytmp
    rows = B.q.shape[0] > 0          # the rows' evaluations (rk4_run: B)
    pending = row0             # the row (in out and B) whose evaluation is the next stage 0's
    ny = y.size
    half = 0.5 * h
    written = 0
    track = flows.size > 0
    pw = np.zeros(3)
    pf = np.zeros(3)
    pacc = np.zeros(3)
    stages = 1 if euler else 4
    for s in range(nsteps + 1):
        if s == nsteps and pending < 0:
            break                  # (else: the last row's evaluation, at the final state)
        k = k0 + s
        j = 2 * k
        for a in range(ny):
            yt[a] = y[a]
        # rk4: stages at t, t + h/2, t + h/2, t + h; acc = k1 + 2 k2 + 2 k3 + k4
        for st in range(stages):
            jj = j + (st + 1) // 2
            wr = st == 0 and pending >= 0          # a row's evaluation: with the wrenches
            _state_in(yt, drv_grid[jj], nq_tot, drv_idx, drv_q, q, u, dd)
            tree_kinematics(q, u, parent, code, sgn, qo, uo, nu, mo_R, mo_p, mi_R, mi_p, rc,
                            R, pb, pc, hp, w, vh, Sg, cg, RA, Rrel, dloc, Sloc, bias)
            if applied:
                # forces.applied_loads, and with ``track`` forces.force_power
                mags = mag_grid[jj]
                for i in range(mass.size):
                    for a in range(3):
                        FC[i, a] = mass[i] * gravity[a]
                        TC[i, a] = 0.0
                # <generated: loads> written by scripts/generate_registry.py
                dissipated = 0.0
                if n_point > 0:
                    point.add_loads(f_point, mags, R, pb, pc, hp, w, vh, FC, TC)
                if n_spring_damper > 0:
                    spring_damper.add_loads(f_spring_damper, mags, R, pb, pc, hp, w, vh, FC, TC)
                if n_rotational_spring_damper > 0:
                    rotational_spring_damper.add_loads(f_rotational_spring_damper, mags, R, pb, pc,
                                                       hp, w, vh, FC, TC)
                if n_contact > 0:
                    dissipated = contact.add_loads(f_contact, mags, R, pb, pc, hp, w, vh, FC, TC)
                if n_stop > 0:
                    stop.add_loads(f_stop, mags, R, pb, pc, hp, w, vh, FC, TC)
                if n_cut_spring > 0:
                    cut_spring.add_loads(f_cut_spring, mags, R, pb, pc, hp, w, vh, FC, TC)
                if n_nonlinear_bushing > 0:
                    nonlinear_bushing.add_loads(f_nonlinear_bushing, mags, R, pb, pc, hp, w, vh, FC,
                                                TC)
                # </generated: loads>
                if track:
                    # <generated: power> written by scripts/generate_registry.py
                    pf[1] = 0.0
                    pf[2] = 0.0
                    if n_point > 0:
                        point.add_power(f_point, mags, R, pb, pc, hp, w, vh, pf)
                    if n_spring_damper > 0:
                        spring_damper.add_power(f_spring_damper, mags, R, pb, pc, hp, w, vh, pf)
                    if n_rotational_spring_damper > 0:
                        rotational_spring_damper.add_power(f_rotational_spring_damper, mags, R, pb,
                                                           pc, hp, w, vh, pf)
                    pf[2] += dissipated
                    if n_stop > 0:
                        stop.add_power(f_stop, mags, R, pb, pc, hp, w, vh, pf)
                    if n_cut_spring > 0:
                        cut_spring.add_power(f_cut_spring, mags, R, pb, pc, hp, w, vh, pf)
                    if n_nonlinear_bushing > 0:
                        nonlinear_bushing.add_power(f_nonlinear_bushing, mags, R, pb, pc, hp, w, vh,
                                                    pf)
                    # </generated: power>
            loads(q, u, applied, mass, gravity, code, qo, uo, nu, hk, hc, href, hRref, pc, hp,
                  FC, TC, Wext, tau)
            riccati(parent, code, nu, uo, mass, JCl, driven, R, pc, hp, w, Sg, cg, Wext, tau,
                    dd, udot, x, Wh, IA, pA, U, Dinv, r0, ck, nfree, fidx, paS, scratch, wr)
            if loops:
                # close_loops, step by step (see there why)
                cut_geometry(c_code, c_bi, c_Ri, c_pi, c_bo, c_Ro, c_po, c_m, c_of_row, stab,
                             cp_u, cp_ab, Fcut, Ncol, pcut, vres, phi, ccut, bcon, R, pb, w, vh,
                             hp, x, udot)
                ma, big = load_sweeps(c_bi, c_bo, c_m, c_of_row, cp_u, cp_ab, Ncol, pcut, pB,
                                      paB, rB, Acon, bcon, act, dud, dx, dWh, parent, code, uo,
                                      hp, Sg, IA, U, Dinv, nfree, fidx, wr, st == 0)
                rank = psd_solve(Acon, ma, bcon, lam, Gch, Mch, pv, perm, zv, wv, 1e-10 * big)
                apply_loop_loads(ma, act, rank, ref_rank, pv, svr, loop_rank, lam, dud, dx, dWh,
                                 Ncol, c_of_row, cp_ab, cp_u, Wcut, nu, uo, nfree, driven, Sg,
                                 udot, x, Wh, tau, wr)
                if st == 0 and monitor.size > 0 and s < nsteps:
                    monitor[s] = svr[0]
                if wr and n_cut_spring > 0:
                    # a row's cut hinges: their springs' and dampers' loads in what they apply
                    cut_spring.add_wrenches(f_cut_spring, R, pb, hp, w, vh, Wcut)
            if wr:
                # the row's evaluation, as instants_into copies it
                _copy_row(B, pending, q, u, udot, tau, R, pb, pc, hp, w, vh, x, Wh, Wext, loops,
                          Wcut, phi, vres, lam, loop_rank, svr)
                pending = -1
                if s == nsteps:
                    break
            if track:
                hinge_power(q, u, tau, driven, drv_q, hk, hc, href, pw)
                if applied:
                    pw[1] += pf[1]
                    pw[2] += pf[2]
                wt = 1.0 if st == 0 or st == 3 else 2.0
                for c in range(3):
                    pacc[c] = wt * pw[c] if st == 0 else pacc[c] + wt * pw[c]
            if euler:
                # the new rates, from which the positions' rates are taken
                for a in range(u.size):
                    u[a] += h * udot[a]
            _state_rate(q, u, udot, code, qo, uo, nq, nu, nq_tot, kd)
            if euler:
                for a in range(ny):
                    acc[a] = kd[a]
            elif st == 0:
                for a in range(ny):
                    acc[a] = kd[a]
                    yt[a] = y[a] + half * kd[a]
            elif st == 1:
                for a in range(ny):
                    acc[a] += 2.0 * kd[a]
                    yt[a] = y[a] + half * kd[a]
            elif st == 2:
                for a in range(ny):
                    acc[a] += 2.0 * kd[a]
                    yt[a] = y[a] + h * kd[a]
            else:
                for a in range(ny):
                    acc[a] += kd[a]
        if s == nsteps:
            break
        scale = h if euler else h / 6.0
        for a in range(ny):
            y[a] += scale * acc[a]
        normalise_quaternions(y, quat)
        if track:
            for c in range(3):
                flows[c] += scale * pacc[c]
        if (k + 1) % out_every == 0:
            for a in range(ny):
                out[out_start + written, a] = y[a]
            if track:
                for c in range(3):
                    out_flows[out_start + written, c] = flows[c]
            if rows:
                pending = out_start + written
            written += 1
    return written


def evaluate(y, drv, mags, T, F, W):
    """State derivative at (y, drivers, magnitudes) as a new array; fills the work arrays W.
    (Python: compiled, it would compile :func:`evaluate_into` again, inlined into it.)"""
    ydot = np.empty(y.size)
    evaluate_into(y, drv, mags, T, F, W, ydot)
    return ydot


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


# --------------------------------------------------------------------------------------------------
# result rows: many instants at once
# --------------------------------------------------------------------------------------------------

@njit(**_JIT)
def _copy_row(B, k, q, u, udot, tau, R, pb, pc, hp, w, vh, x, Wh, Wext, loops, Wcut, phi, vres,
              lam, loop_rank, svr):
    """Copy an evaluation into row ``k`` of the stacked arrays of ``B`` (system.Stack): what a
    result row needs (:func:`instants_into`, and :func:`_fixed_run` for the rows of its own
    evaluations); ``loops``: the cut hinges' arrays too."""
    for a in range(q.size):
        B.q[k, a] = q[a]
    for a in range(u.size):
        B.u[k, a] = u[a]
        B.udot[k, a] = udot[a]
        B.tau[k, a] = tau[a]
    for i in range(R.shape[0]):
        for a in range(3):
            for c in range(3):
                B.R[k, i, a, c] = R[i, a, c]
            B.pb[k, i, a] = pb[i, a]
            B.pc[k, i, a] = pc[i, a]
            B.hp[k, i, a] = hp[i, a]
            B.w[k, i, a] = w[i, a]
            B.vh[k, i, a] = vh[i, a]
        for a in range(6):
            B.x[k, i, a] = x[i, a]
            B.Wh[k, i, a] = Wh[i, a]
            B.Wext[k, i, a] = Wext[i, a]
    if loops:
        for c in range(Wcut.shape[0]):
            for a in range(6):
                B.Wcut[k, c, a] = Wcut[c, a]
        for a in range(phi.size):
            B.phi[k, a] = phi[a]
            B.vres[k, a] = vres[a]
            B.lam[k, a] = lam[a]
        B.rank[k] = loop_rank[0]
        B.svr[k] = svr[0]


@njit(**_JIT)
def instants_into(Y, drv, mags, T, F, W, ydot, B):
    """Evaluate the states Y (k, ny) with drivers drv (k, nd, 3) and magnitudes mags (k, nm)
    and copy what the result rows need into the stacked arrays of ``B`` (system.Stack: a
    leading axis k on each of the work arrays it names, as :meth:`System.instant` copies them).
    """
    L = W.loops
    for k in range(Y.shape[0]):
        evaluate_into(Y[k], drv[k], mags[k], T, F, W, ydot)
        _copy_row(B, k, W.q, W.u, W.udot, W.tau, W.R, W.pb, W.pc, W.hp, W.w, W.vh, W.x, W.Wh,
                  W.Wext, T.m_tot > 0, L.Wcut, L.phi, L.vres, L.lam, L.loop_rank, L.svr)


