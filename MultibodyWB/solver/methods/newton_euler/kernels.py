"""The Newton-Euler method's compiled kernels: the joints' penalty loads, the drivers, the bodies'
update and the recording of rows, and :func:`ne_run`, a chunk of steps in compiled code (the
method: :mod:`.`)."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from ...elements.forces import applied_loads, has_loads
from ...elements.hinges import HINGE_TYPES

# rotation modes of the penalty
R_NONE, R_FULL, R_AXIS, R_CROSS = 0, 1, 2, 3
# kinds of velocity coordinates
U_TRANS, U_RZ, U_RX, U_RY, U_ROTV = 0, 1, 2, 3, 4

#: blocked translations along the output marker's x, y, z and the rotation mode, per hinge type
_BLOCKED = {n: (t.blocked_translations, {"full": R_FULL, "axis": R_AXIS, "cross": R_CROSS,
                                         "none": R_NONE}[t.rotation_mode])
            for n, t in HINGE_TYPES.items()}
_KIND_OF = {"x": (U_TRANS, 0), "y": (U_TRANS, 1), "z": (U_TRANS, 2),
            "rx": (U_RX, 0), "ry": (U_RY, 1), "rz": (U_RZ, 2)}

Bodies = namedtuple("Bodies", "mass Jd Jinv")
Joints = namedtuple("Joints", "bi bo Ri pi Ro po om zc tmask rmode qo uo nu hspring "
                              "ukind uaxis uq uj hk hc href hRref quat drv_u drv_j drv_col hflag")
State = namedtuple("State", "x R v L qt")
Work = namedtuple("Work", "wg F T Fa Ta Wh tau v0 L0 acc alpha tA tB tC kE kP kG Meff dMeff nkj "
                         "age ky clos js lay")
#: What :class:`~.recorder.Recorder` reads from a formulation besides ``instant``.
Layout = namedtuple("Layout", "qo uo nq nu sgn hk hc href hRref mass JCl")

_JIT = dict(cache=True, nogil=True, error_model="numpy")
#: small helpers: LLVM inlines them (numba's IR inlining, inline="always", made the first
#: compilation five times slower for no speed)
_INL = dict(cache=True, nogil=True, error_model="numpy")


# --------------------------------------------------------------------------------------------------
# small helpers (scalars and tuples: no allocation)
# --------------------------------------------------------------------------------------------------

@njit(**_INL)
def _cr(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(**_INL)
def _mv(A, v0, v1, v2):
    return (A[0, 0] * v0 + A[0, 1] * v1 + A[0, 2] * v2,
            A[1, 0] * v0 + A[1, 1] * v1 + A[1, 2] * v2,
            A[2, 0] * v0 + A[2, 1] * v1 + A[2, 2] * v2)


@njit(**_INL)
def _mtv(A, v0, v1, v2):
    return (A[0, 0] * v0 + A[1, 0] * v1 + A[2, 0] * v2,
            A[0, 1] * v0 + A[1, 1] * v1 + A[2, 1] * v2,
            A[0, 2] * v0 + A[1, 2] * v1 + A[2, 2] * v2)


@njit(**_INL)
def _m33(A, B, C):
    """C = A @ B (3x3)."""
    for a in range(3):
        a0, a1, a2 = A[a, 0], A[a, 1], A[a, 2]
        C[a, 0] = a0 * B[0, 0] + a1 * B[1, 0] + a2 * B[2, 0]
        C[a, 1] = a0 * B[0, 1] + a1 * B[1, 1] + a2 * B[2, 1]
        C[a, 2] = a0 * B[0, 2] + a1 * B[1, 2] + a2 * B[2, 2]


@njit(**_INL)
def _wrap(a):
    """Angle wrapped to (-pi, pi]."""
    return a - 2.0 * np.pi * np.floor((a + np.pi) / (2.0 * np.pi))


@njit(**_JIT)
def _rotvec(R):
    """Rotation vector of a rotation matrix as a tuple (see rotations.rotation_vector)."""
    c = (R[0, 0] + R[1, 1] + R[2, 2] - 1.0) / 2.0
    w0, w1, w2 = R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]
    s = 0.5 * np.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
    t = np.arctan2(s, c)
    if t < 1e-8:
        return 0.5 * w0, 0.5 * w1, 0.5 * w2
    if np.pi - t > 1e-2:
        f = t / (2.0 * s)
        return f * w0, f * w1, f * w2
    k = 0
    for j in range(3):
        if R[j, j] > R[k, k]:
            k = j
    a0 = 0.5 * (R[0, k] + R[k, 0]) - (c if k == 0 else 0.0)
    a1 = 0.5 * (R[1, k] + R[k, 1]) - (c if k == 1 else 0.0)
    a2 = 0.5 * (R[2, k] + R[k, 2]) - (c if k == 2 else 0.0)
    n = np.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
    if a0 * w0 + a1 * w1 + a2 * w2 < 0:
        n = -n
    return t * a0 / n, t * a1 / n, t * a2 / n


@njit(**_JIT)
def _quaternion(R):
    """Unit quaternion (w, x, y, z) of a rotation matrix (Shepperd's method)."""
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    if tr >= R[0, 0] and tr >= R[1, 1] and tr >= R[2, 2]:
        s = 2.0 * np.sqrt(max(1.0 + tr, 0.0))
        return 0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s
    if R[0, 0] >= R[1, 1] and R[0, 0] >= R[2, 2]:
        s = 2.0 * np.sqrt(max(1.0 + R[0, 0] - R[1, 1] - R[2, 2], 0.0))
        return (R[2, 1] - R[1, 2]) / s, 0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s
    if R[1, 1] >= R[2, 2]:
        s = 2.0 * np.sqrt(max(1.0 + R[1, 1] - R[0, 0] - R[2, 2], 0.0))
        return (R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s
    s = 2.0 * np.sqrt(max(1.0 + R[2, 2] - R[0, 0] - R[1, 1], 0.0))
    return (R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s


# --------------------------------------------------------------------------------------------------
# the kernels
#
# Performance note: a call that passes many arrays (a namedtuple of them above all) costs a few
# ns per array, inlined or not; so the hot loops take the arrays they need as arguments, once per
# step, and do the per-joint work without helper calls that take arrays (only _m33/_mv/_mtv).
# --------------------------------------------------------------------------------------------------

@njit(**_JIT)
def _omegas(R, L, Jinv, wg):
    """Global angular velocities of all bodies from their angular momenta."""
    for i in range(R.shape[0]):
        Ri = R[i]
        b = _mtv(Ri, L[i, 0], L[i, 1], L[i, 2])
        w = _mv(Ri, b[0] * Jinv[i, 0], b[1] * Jinv[i, 1], b[2] * Jinv[i, 2])
        wg[i, 0], wg[i, 1], wg[i, 2] = w


@njit(**_INL)
def _inv_inertia(R, Jinv, i, e0, e1, e2):
    """e^T J_global^-1 e of body i."""
    b = _mtv(R[i], e0, e1, e2)
    return b[0] * b[0] * Jinv[i, 0] + b[1] * b[1] * Jinv[i, 1] + b[2] * b[2] * Jinv[i, 2]


@njit(**_JIT)
def _frame_pos(j, x, R, bi_, bo_, Ri_, pi_, Ro_, po_, A, B, js):
    """Marker frames of hinge j into A (output) and B (input); into js the rows 0 pA, 1 pB,
    2 arm pB - x_i (0 for the ground), 3 arm pB - x_o (0 for the ground), 4 r = pB - pA."""
    bi, bo = bi_[j], bo_[j]
    if bo >= 0:
        _m33(R[bo], Ro_[j], A)
        t = _mv(R[bo], po_[j, 0], po_[j, 1], po_[j, 2])
        for a in range(3):
            js[0, a] = x[bo, a] + t[a]
    else:
        for a in range(3):
            js[0, a] = po_[j, a]
            for b in range(3):
                A[a, b] = Ro_[j, a, b]
    if bi >= 0:
        _m33(R[bi], Ri_[j], B)
        t = _mv(R[bi], pi_[j, 0], pi_[j, 1], pi_[j, 2])
        for a in range(3):
            js[1, a] = x[bi, a] + t[a]
            js[2, a] = t[a]
    else:
        for a in range(3):
            js[1, a] = pi_[j, a]
            js[2, a] = 0.0
            for b in range(3):
                B[a, b] = Ri_[j, a, b]
    for a in range(3):
        js[3, a] = js[1, a] - x[bo, a] if bo >= 0 else 0.0
        js[4, a] = js[1, a] - js[0, a]


@njit(**_INL)
def _axis(kind, ax, A, B):
    """Global direction of a velocity coordinate (translation or rotation axis)."""
    if kind == U_RY:
        return B[0, 1], B[1, 1], B[2, 1]
    return A[0, ax], A[1, ax], A[2, ax]


@njit(**_INL)
def _raw_angle(kind, A, B):
    """The angle of a tracked coordinate from the marker frames, in (-pi, pi]."""
    if kind == U_RZ:      # Rrel = A^T B: atan2(R10, R00)
        y = A[0, 1] * B[0, 0] + A[1, 1] * B[1, 0] + A[2, 1] * B[2, 0]
        x = A[0, 0] * B[0, 0] + A[1, 0] * B[1, 0] + A[2, 0] * B[2, 0]
    elif kind == U_RX:    # Rx(a) Ry(b): atan2(R21, R11)
        y = A[0, 2] * B[0, 1] + A[1, 2] * B[1, 1] + A[2, 2] * B[2, 1]
        x = A[0, 1] * B[0, 1] + A[1, 1] * B[1, 1] + A[2, 1] * B[2, 1]
    else:                 # ry: atan2(R02, R00)
        y = A[0, 0] * B[0, 2] + A[1, 0] * B[1, 2] + A[2, 0] * B[2, 2]
        x = A[0, 0] * B[0, 0] + A[1, 0] * B[1, 0] + A[2, 0] * B[2, 0]
    return np.arctan2(y, x)


@njit(**_INL)
def _wrench(x, F, T, b, f0, f1, f2, t0, t1, t2, p0, p1, p2):
    """Force f at global point p and torque t on body b (nothing for the ground)."""
    if b >= 0:
        c = _cr(p0 - x[b, 0], p1 - x[b, 1], p2 - x[b, 2], f0, f1, f2)
        F[b, 0] += f0
        F[b, 1] += f1
        F[b, 2] += f2
        T[b, 0] += t0 + c[0]
        T[b, 1] += t1 + c[1]
        T[b, 2] += t2 + c[2]


@njit(**_JIT)
def _joints(x, R, v, wg, F, T, qt, mass, Jinv, bi_, bo_, Ri_, pi_, Ro_, po_, om_, zc_, tmask,
            rmode, uo_, nu_, hflag, quat_, ukind, uaxis, uq, hk, hc, href, hRref, Wh, tau,
            A, B, C, kE, kP, kG, Meff, dMeff, nkj, age, ky, clos, refresh, track_all, store):
    """Penalty wrench, springs and dampers of every hinge: added to F, T; into Wh and tau.

    The penalty of hinge j in its blocked directions (output-marker axes for translations and
    for the rotations of revolute-like and fixed hinges) is ``-M (om^2 d + zc d')``, ``M`` the
    current effective mass (inertia) of the two bodies in those directions at the joint, ``d``
    the displacement (misalignment) and ``d'`` its rate; ``om = om_[j]``, ``zc = zc_[j]``.

    Tracked angles (qt) are unwrapped at the current poses for hinges with a spring or driver
    (``hflag & 2``) and, with ``track_all``, for all. With ``store``, ``clos[j]`` gets the norms
    of hinge j's blocked translations (m) and rotations (rad, the sines of the misalignments)
    and of their rates."""
    for j in range(bi_.size):
        bi, bo = bi_[j], bo_[j]
        # frames, points and relative motion (as _frame_pos, written out: no array calls)
        if bo >= 0:
            Rm = R[bo]
            _m33(Rm, Ro_[j], A)
            t = _mv(Rm, po_[j, 0], po_[j, 1], po_[j, 2])
            pa0, pa1, pa2 = x[bo, 0] + t[0], x[bo, 1] + t[1], x[bo, 2] + t[2]
            wo0, wo1, wo2 = wg[bo, 0], wg[bo, 1], wg[bo, 2]
            vo0, vo1, vo2 = v[bo, 0], v[bo, 1], v[bo, 2]
        else:
            for a in range(3):
                for b in range(3):
                    A[a, b] = Ro_[j, a, b]
            pa0, pa1, pa2 = po_[j, 0], po_[j, 1], po_[j, 2]
            wo0 = wo1 = wo2 = vo0 = vo1 = vo2 = 0.0
        if bi >= 0:
            Rm = R[bi]
            _m33(Rm, Ri_[j], B)
            rb0, rb1, rb2 = _mv(Rm, pi_[j, 0], pi_[j, 1], pi_[j, 2])
            pb0, pb1, pb2 = x[bi, 0] + rb0, x[bi, 1] + rb1, x[bi, 2] + rb2
            wi0, wi1, wi2 = wg[bi, 0], wg[bi, 1], wg[bi, 2]
            c = _cr(wi0, wi1, wi2, rb0, rb1, rb2)
            vb0, vb1, vb2 = v[bi, 0] + c[0], v[bi, 1] + c[1], v[bi, 2] + c[2]
        else:
            for a in range(3):
                for b in range(3):
                    B[a, b] = Ri_[j, a, b]
            pb0, pb1, pb2 = pi_[j, 0], pi_[j, 1], pi_[j, 2]
            rb0 = rb1 = rb2 = wi0 = wi1 = wi2 = vb0 = vb1 = vb2 = 0.0
        if bo >= 0:
            sa0, sa1, sa2 = pb0 - x[bo, 0], pb1 - x[bo, 1], pb2 - x[bo, 2]
            c = _cr(wo0, wo1, wo2, sa0, sa1, sa2)
            va0, va1, va2 = vo0 + c[0], vo1 + c[1], vo2 + c[2]
        else:
            sa0 = sa1 = sa2 = va0 = va1 = va2 = 0.0
        r0, r1, r2 = pb0 - pa0, pb1 - pa1, pb2 - pa2
        v0, v1, v2 = vb0 - va0, vb1 - va1, vb2 - va2
        dw0, dw1, dw2 = wi0 - wo0, wi1 - wo1, wi2 - wo2
        o, nu, flag = uo_[j], nu_[j], hflag[j]
        if track_all or flag & 2:
            for c_i in range(nu):
                u = o + c_i
                kind = ukind[u]
                if kind == U_RZ or kind == U_RX or kind == U_RY:
                    iq = uq[u]
                    qt[iq] += _wrap(_raw_angle(kind, A, B) - qt[iq])
        # the blocked rows: direction (global), translation or rotation, displacement, rate
        nk = 0
        mode = rmode[j]
        if mode == R_AXIS or mode == R_FULL:
            if mode == R_AXIS:
                # misalignment of the axes: zA x zB, on xA and yA
                c = _cr(A[0, 2], A[1, 2], A[2, 2], B[0, 2], B[1, 2], B[2, 2])
                ph0, ph1, ph2 = c[0], c[1], c[2]
                nax = 2
            else:
                # 1/2 vee(B A^T - A B^T), (B A^T)[a, b] = sum_k B[a, k] A[b, k]
                m21 = B[2, 0] * A[1, 0] + B[2, 1] * A[1, 1] + B[2, 2] * A[1, 2]
                m12 = B[1, 0] * A[2, 0] + B[1, 1] * A[2, 1] + B[1, 2] * A[2, 2]
                m02 = B[0, 0] * A[2, 0] + B[0, 1] * A[2, 1] + B[0, 2] * A[2, 2]
                m20 = B[2, 0] * A[0, 0] + B[2, 1] * A[0, 1] + B[2, 2] * A[0, 2]
                m10 = B[1, 0] * A[0, 0] + B[1, 1] * A[0, 1] + B[1, 2] * A[0, 2]
                m01 = B[0, 0] * A[1, 0] + B[0, 1] * A[1, 1] + B[0, 2] * A[1, 2]
                ph0, ph1, ph2 = 0.5 * (m21 - m12), 0.5 * (m02 - m20), 0.5 * (m10 - m01)
                nax = 3
            for a in range(nax):
                e0, e1, e2 = A[0, a], A[1, a], A[2, a]
                kE[nk, 0], kE[nk, 1], kE[nk, 2] = e0, e1, e2
                ky[nk, 0] = 0.0
                ky[nk, 1] = e0 * ph0 + e1 * ph1 + e2 * ph2
                ky[nk, 2] = e0 * dw0 + e1 * dw1 + e2 * dw2
                nk += 1
        elif mode == R_CROSS:
            # universal: xA . yB = 0; the blocked rotation is about n = xA x yB, by -xA . yB
            xa0, xa1, xa2 = A[0, 0], A[1, 0], A[2, 0]
            yb0, yb1, yb2 = B[0, 1], B[1, 1], B[2, 1]
            n = _cr(xa0, xa1, xa2, yb0, yb1, yb2)
            nl = np.sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2])
            if nl > 1e-9:
                e0, e1, e2 = n[0] / nl, n[1] / nl, n[2] / nl
                kE[nk, 0], kE[nk, 1], kE[nk, 2] = e0, e1, e2
                ky[nk, 0] = 0.0
                ky[nk, 1] = -(xa0 * yb0 + xa1 * yb1 + xa2 * yb2) * nl
                ky[nk, 2] = e0 * dw0 + e1 * dw1 + e2 * dw2
                nk += 1
        nr = nk
        for a in range(3):
            if tmask[j, a]:
                e0, e1, e2 = A[0, a], A[1, a], A[2, a]
                kE[nk, 0], kE[nk, 1], kE[nk, 2] = e0, e1, e2
                ky[nk, 0] = 1.0
                ky[nk, 1] = e0 * r0 + e1 * r1 + e2 * r2
                ky[nk, 2] = e0 * v0 + e1 * v1 + e2 * v2
                nk += 1
        if store:
            g0 = g1 = g2 = g3 = 0.0
            for k in range(nk):
                if k >= nr:
                    g0 += ky[k, 1] * ky[k, 1]
                    g2 += ky[k, 2] * ky[k, 2]
                else:
                    g1 += ky[k, 1] * ky[k, 1]
                    g3 += ky[k, 2] * ky[k, 2]
            clos[j, 0], clos[j, 1] = np.sqrt(g0), np.sqrt(g1)
            clos[j, 2], clos[j, 3] = np.sqrt(g2), np.sqrt(g3)
        f0 = f1 = f2 = 0.0
        t0 = t1 = t2 = 0.0
        Mj, dMj = Meff[j], dMeff[j]
        if nk > 0 and (refresh or nkj[j] != nk):
            # G = sum over the two bodies of J_b M_b^-1 J_b^T: row k of J_b is [e_k; 0] for a
            # rotation, [s_b x e_k; e_k] for a translation at pB (s_b the arm from the mass
            # centre), M_b = diag(J_b, m_b I); in principal axes J_b^-1 is diagonal.
            for k in range(nk):
                for l in range(k + 1):
                    kG[k, l] = 0.0
            for side in range(2):
                b = bi if side == 0 else bo
                if b < 0:
                    continue
                Rm = R[b]
                if side == 0:
                    s = _mtv(Rm, rb0, rb1, rb2)
                else:
                    s = _mtv(Rm, sa0, sa1, sa2)
                # rows' angular parts in the body's principal axes, times sqrt(J^-1)
                q0, q1, q2 = np.sqrt(Jinv[b, 0]), np.sqrt(Jinv[b, 1]), np.sqrt(Jinv[b, 2])
                for k in range(nk):
                    e = _mtv(Rm, kE[k, 0], kE[k, 1], kE[k, 2])
                    if k >= nr:
                        e = _cr(s[0], s[1], s[2], e[0], e[1], e[2])
                    kP[k, 0], kP[k, 1], kP[k, 2] = e[0] * q0, e[1] * q1, e[2] * q2
                im = 1.0 / mass[b]
                for k in range(nk):
                    p0_, p1_, p2_ = kP[k, 0], kP[k, 1], kP[k, 2]
                    for l in range(k + 1):
                        kG[k, l] += p0_ * kP[l, 0] + p1_ * kP[l, 1] + p2_ * kP[l, 2]
                    if k >= nr:
                        # translation rows are orthonormal axes of A: e_k . e_l / m
                        kG[k, k] += im
            # M = G^-1 by Cholesky (lower triangle of kG), kept with its trend: between
            # refreshes M is extrapolated linearly (a smooth stiffness: no jumps to ring)
            ok = True
            for k in range(nk):
                d = kG[k, k]
                for m_ in range(k):
                    d -= kG[k, m_] * kG[k, m_]
                if d <= 0.0:
                    ok = False
                    break
                d = np.sqrt(d)
                kG[k, k] = d
                for l in range(k + 1, nk):
                    g = kG[l, k]
                    for m_ in range(k):
                        g -= kG[l, m_] * kG[k, m_]
                    kG[l, k] = g / d
            if not ok:
                nkj[j] = 0                # no mass on either side: no penalty
            else:
                steps = age[j] if nkj[j] == nk and age[j] > 0 else 0
                for c_ in range(nk):      # column c_ of G^-1: solve L L^T x = e_c
                    for k in range(nk):
                        g = 1.0 if k == c_ else 0.0
                        for m_ in range(k):
                            g -= kG[k, m_] * kP[m_, 0]
                        kP[k, 0] = g / kG[k, k]
                    for k in range(nk - 1, -1, -1):
                        g = kP[k, 0]
                        for m_ in range(k + 1, nk):
                            g -= kG[m_, k] * kP[m_, 0]
                        kP[k, 0] = g / kG[k, k]
                    for k in range(nk):
                        x_ = kP[k, 0]
                        dMj[k, c_] = (x_ - Mj[k, c_]) / steps if steps > 0 else 0.0
                        Mj[k, c_] = x_
                nkj[j] = nk
                age[j] = 0
        if nk > 0 and nkj[j] == nk:
            # lambda = M (om^2 d + zc d'), M extrapolated by its trend
            om, zc = om_[j], zc_[j]
            om2 = om * om
            ag = float(age[j])
            for k in range(nk):
                ky[k, 2] = om2 * ky[k, 1] + zc * ky[k, 2]
            for k in range(nk):
                g = 0.0
                for l in range(nk):
                    g += (Mj[k, l] + ag * dMj[k, l]) * ky[l, 2]
                if k >= nr:
                    f0 -= g * kE[k, 0]
                    f1 -= g * kE[k, 1]
                    f2 -= g * kE[k, 2]
                else:
                    t0 -= g * kE[k, 0]
                    t1 -= g * kE[k, 1]
                    t2 -= g * kE[k, 2]
            age[j] += 1
        if flag & 1:
            p0 = p1 = p2 = 0.0
            if quat_[j]:
                # rotation vector of the relative rotation A^T B w.r.t. the spring reference Hr
                Hr = hRref[j]
                for a in range(3):
                    m0 = A[0, a] * B[0, 0] + A[1, a] * B[1, 0] + A[2, a] * B[2, 0]
                    m1 = A[0, a] * B[0, 1] + A[1, a] * B[1, 1] + A[2, a] * B[2, 1]
                    m2 = A[0, a] * B[0, 2] + A[1, a] * B[1, 2] + A[2, a] * B[2, 2]
                    for b in range(3):
                        C[a, b] = m0 * Hr[b, 0] + m1 * Hr[b, 1] + m2 * Hr[b, 2]
                p0, p1, p2 = _rotvec(C)
            for c_i in range(nu):
                u = o + c_i
                kind, ax = ukind[u], uaxis[u]
                e0, e1, e2 = _axis(kind, ax, A, B)
                if kind == U_TRANS:
                    q = e0 * r0 + e1 * r1 + e2 * r2 - href[u]
                    rate = e0 * v0 + e1 * v1 + e2 * v2
                else:
                    if kind == U_ROTV:
                        q = p0 if ax == 0 else (p1 if ax == 1 else p2)
                    else:
                        q = qt[uq[u]] - href[u]
                    rate = e0 * dw0 + e1 * dw1 + e2 * dw2
                tq = -hk[u] * q - hc[u] * rate
                tau[u] = tq
                if kind == U_TRANS:
                    f0 += tq * e0
                    f1 += tq * e1
                    f2 += tq * e2
                else:
                    t0 += tq * e0
                    t1 += tq * e1
                    t2 += tq * e2
        else:
            for c_i in range(nu):
                tau[o + c_i] = 0.0
        Wh[j, 0], Wh[j, 1], Wh[j, 2] = t0, t1, t2
        Wh[j, 3], Wh[j, 4], Wh[j, 5] = f0, f1, f2
        if bi >= 0:
            c = _cr(rb0, rb1, rb2, f0, f1, f2)
            F[bi, 0] += f0
            F[bi, 1] += f1
            F[bi, 2] += f2
            T[bi, 0] += t0 + c[0]
            T[bi, 1] += t1 + c[1]
            T[bi, 2] += t2 + c[2]
        if bo >= 0:
            c = _cr(sa0, sa1, sa2, f0, f1, f2)
            F[bo, 0] -= f0
            F[bo, 1] -= f1
            F[bo, 2] -= f2
            T[bo, 0] -= t0 + c[0]
            T[bo, 1] -= t1 + c[1]
            T[bo, 2] -= t2 + c[2]


@njit(**_JIT)
def _drivers(x, R, v, L, mass, Jinv, qt, bi_, bo_, Ri_, pi_, Ro_, po_, ukind, uaxis, uq, drv_u,
             drv_j, drv_col, drvn, Wh, tau, A, B, js, h):
    """Velocity-level projection of every driven coordinate onto ``drvn`` at the step's end."""
    for d in range(drv_u.size):
        u, j = drv_u[d], drv_j[d]
        bi, bo = bi_[j], bo_[j]
        _frame_pos(j, x, R, bi_, bo_, Ri_, pi_, Ro_, po_, A, B, js)
        kind, ax = ukind[u], uaxis[u]
        e0, e1, e2 = _axis(kind, ax, A, B)
        # angular velocities from the updated momenta
        if bi >= 0:
            b = _mtv(R[bi], L[bi, 0], L[bi, 1], L[bi, 2])
            wi = _mv(R[bi], b[0] * Jinv[bi, 0], b[1] * Jinv[bi, 1], b[2] * Jinv[bi, 2])
        else:
            wi = (0.0, 0.0, 0.0)
        if bo >= 0:
            b = _mtv(R[bo], L[bo, 0], L[bo, 1], L[bo, 2])
            wo = _mv(R[bo], b[0] * Jinv[bo, 0], b[1] * Jinv[bo, 1], b[2] * Jinv[bo, 2])
        else:
            wo = (0.0, 0.0, 0.0)
        lam = 0.0
        rate = 0.0
        if kind == U_TRANS:
            q = e0 * js[4, 0] + e1 * js[4, 1] + e2 * js[4, 2]
            if bi >= 0:
                c = _cr(wi[0], wi[1], wi[2], js[2, 0], js[2, 1], js[2, 2])
                rate += e0 * (v[bi, 0] + c[0]) + e1 * (v[bi, 1] + c[1]) + e2 * (v[bi, 2] + c[2])
                c = _cr(js[2, 0], js[2, 1], js[2, 2], e0, e1, e2)
                lam += 1.0 / mass[bi] + _inv_inertia(R, Jinv, bi, c[0], c[1], c[2])
            if bo >= 0:
                c = _cr(wo[0], wo[1], wo[2], js[3, 0], js[3, 1], js[3, 2])
                rate -= e0 * (v[bo, 0] + c[0]) + e1 * (v[bo, 1] + c[1]) + e2 * (v[bo, 2] + c[2])
                c = _cr(js[3, 0], js[3, 1], js[3, 2], e0, e1, e2)
                lam += 1.0 / mass[bo] + _inv_inertia(R, Jinv, bo, c[0], c[1], c[2])
        else:
            q = qt[uq[u]]
            rate = e0 * (wi[0] - wo[0]) + e1 * (wi[1] - wo[1]) + e2 * (wi[2] - wo[2])
            if bi >= 0:
                lam += _inv_inertia(R, Jinv, bi, e0, e1, e2)
            if bo >= 0:
                lam += _inv_inertia(R, Jinv, bo, e0, e1, e2)
        if lam <= 0.0:
            continue
        P = ((drvn[drv_col[d]] - q) / h - rate) / lam
        p0, p1, p2 = P * e0, P * e1, P * e2
        if kind == U_TRANS:
            if bi >= 0:
                c = _cr(js[2, 0], js[2, 1], js[2, 2], p0, p1, p2)
                mi = 1.0 / mass[bi]
                v[bi, 0] += p0 * mi
                v[bi, 1] += p1 * mi
                v[bi, 2] += p2 * mi
                L[bi, 0] += c[0]
                L[bi, 1] += c[1]
                L[bi, 2] += c[2]
            if bo >= 0:
                c = _cr(js[3, 0], js[3, 1], js[3, 2], p0, p1, p2)
                mo = 1.0 / mass[bo]
                v[bo, 0] -= p0 * mo
                v[bo, 1] -= p1 * mo
                v[bo, 2] -= p2 * mo
                L[bo, 0] -= c[0]
                L[bo, 1] -= c[1]
                L[bo, 2] -= c[2]
            Wh[j, 3] += p0 / h
            Wh[j, 4] += p1 / h
            Wh[j, 5] += p2 / h
        else:
            if bi >= 0:
                L[bi, 0] += p0
                L[bi, 1] += p1
                L[bi, 2] += p2
            if bo >= 0:
                L[bo, 0] -= p0
                L[bo, 1] -= p1
                L[bo, 2] -= p2
            Wh[j, 0] += p0 / h
            Wh[j, 1] += p1 / h
            Wh[j, 2] += p2 / h
        tau[u] += P / h


@njit(**_JIT)
def _positions(x, R, v, L, Jinv, h, ortho):
    """x += h v; R <- R exp(~w_b h) with w_b from the (new) angular momentum."""
    for i in range(x.shape[0]):
        for a in range(3):
            x[i, a] += h * v[i, a]
        Ri = R[i]
        b = _mtv(Ri, L[i, 0], L[i, 1], L[i, 2])
        x0, x1, x2 = b[0] * Jinv[i, 0] * h, b[1] * Jinv[i, 1] * h, b[2] * Jinv[i, 2] * h
        th2 = x0 * x0 + x1 * x1 + x2 * x2
        if th2 < 1e-4:
            # sin(t)/t and (1 - cos(t))/t^2 by their series (exact to round-off for t < 1e-2)
            sa = 1.0 - th2 / 6.0 * (1.0 - th2 / 20.0)
            ca = 0.5 - th2 / 24.0 * (1.0 - th2 / 30.0)
        else:
            th = np.sqrt(th2)
            sa = np.sin(th) / th
            ca = (1.0 - np.cos(th)) / th2
        # E = I + sa ~x + ca ~x^2
        e00 = 1.0 - ca * (x1 * x1 + x2 * x2)
        e11 = 1.0 - ca * (x0 * x0 + x2 * x2)
        e22 = 1.0 - ca * (x0 * x0 + x1 * x1)
        e01 = -sa * x2 + ca * x0 * x1
        e10 = sa * x2 + ca * x0 * x1
        e02 = sa * x1 + ca * x0 * x2
        e20 = -sa * x1 + ca * x0 * x2
        e12 = -sa * x0 + ca * x1 * x2
        e21 = sa * x0 + ca * x1 * x2
        for a in range(3):
            r0, r1, r2 = Ri[a, 0], Ri[a, 1], Ri[a, 2]
            Ri[a, 0] = r0 * e00 + r1 * e10 + r2 * e20
            Ri[a, 1] = r0 * e01 + r1 * e11 + r2 * e21
            Ri[a, 2] = r0 * e02 + r1 * e12 + r2 * e22
        if ortho:
            # Gram-Schmidt on the columns
            n = np.sqrt(Ri[0, 0] ** 2 + Ri[1, 0] ** 2 + Ri[2, 0] ** 2)
            for a in range(3):
                Ri[a, 0] /= n
            d = Ri[0, 0] * Ri[0, 1] + Ri[1, 0] * Ri[1, 1] + Ri[2, 0] * Ri[2, 1]
            for a in range(3):
                Ri[a, 1] -= d * Ri[a, 0]
            n = np.sqrt(Ri[0, 1] ** 2 + Ri[1, 1] ** 2 + Ri[2, 1] ** 2)
            for a in range(3):
                Ri[a, 1] /= n
            c = _cr(Ri[0, 0], Ri[1, 0], Ri[2, 0], Ri[0, 1], Ri[1, 1], Ri[2, 1])
            Ri[0, 2], Ri[1, 2], Ri[2, 2] = c


# row layout of a recorded instant: offsets in W.lay
L_X, L_R, L_V, L_W, L_A, L_AL, L_Q, L_U, L_UD, L_TAU, L_WH, L_FA, L_TA, L_CL, L_LEN = range(15)


@njit(**_JIT)
def _record(S, Bd, Jt, W, row, h):
    """Write the instant of the state before this step into ``row`` (see :data:`L_X` ...).

    Called after the velocity update and the drivers of the step: the accelerations are those
    of the step, ``(v_new - v) / h`` and ``J^-1 (T - w x L)`` with ``T = (L_new - L) / h``.
    W.v0, W.L0 hold the velocities before the step, W.wg its angular velocities, W.Fa, W.Ta the
    applied loads, W.Wh and W.tau the hinges' loads.
    """
    lay = W.lay
    n = Bd.mass.size
    x, R, v, L, qt = S.x, S.R, S.v, S.L, S.qt
    wg, v0, L0 = W.wg, W.v0, W.L0
    for i in range(n):
        Ri = R[i]
        t0 = (L[i, 0] - L0[i, 0]) / h
        t1 = (L[i, 1] - L0[i, 1]) / h
        t2 = (L[i, 2] - L0[i, 2]) / h
        c = _cr(wg[i, 0], wg[i, 1], wg[i, 2], L0[i, 0], L0[i, 1], L0[i, 2])
        b = _mtv(Ri, t0 - c[0], t1 - c[1], t2 - c[2])
        al = _mv(Ri, b[0] * Bd.Jinv[i, 0], b[1] * Bd.Jinv[i, 1], b[2] * Bd.Jinv[i, 2])
        for a in range(3):
            W.acc[i, a] = (v[i, a] - v0[i, a]) / h
            W.alpha[i, a] = al[a]
            row[lay[L_X] + 3 * i + a] = x[i, a]
            row[lay[L_V] + 3 * i + a] = v0[i, a]
            row[lay[L_W] + 3 * i + a] = wg[i, a]
            row[lay[L_A] + 3 * i + a] = W.acc[i, a]
            row[lay[L_AL] + 3 * i + a] = al[a]
            row[lay[L_FA] + 3 * i + a] = W.Fa[i, a]
            row[lay[L_TA] + 3 * i + a] = W.Ta[i, a]
            for b2 in range(3):
                row[lay[L_R] + 9 * i + 3 * a + b2] = Ri[a, b2]
    acc, alpha = W.acc, W.alpha
    A, B, js = W.tA, W.tB, W.js
    for j in range(Jt.bi.size):
        _frame_pos(j, x, R, Jt.bi, Jt.bo, Jt.Ri, Jt.pi, Jt.Ro, Jt.po, A, B, js)
        bi, bo = Jt.bi[j], Jt.bo[j]
        # velocities before the step; accelerations of the step:
        # aB(pB) = a_i + al_i x rB + w_i x (w_i x rB);
        # d/dt vA(pB) = a_o + al_o x sA + w_o x (vB(pB) - v_o)
        if bi >= 0:
            wi0, wi1, wi2 = wg[bi, 0], wg[bi, 1], wg[bi, 2]
            c2 = _cr(wi0, wi1, wi2, js[2, 0], js[2, 1], js[2, 2])
            vb = (v0[bi, 0] + c2[0], v0[bi, 1] + c2[1], v0[bi, 2] + c2[2])
            c1 = _cr(alpha[bi, 0], alpha[bi, 1], alpha[bi, 2], js[2, 0], js[2, 1], js[2, 2])
            c3 = _cr(wi0, wi1, wi2, c2[0], c2[1], c2[2])
            ab = (acc[bi, 0] + c1[0] + c3[0], acc[bi, 1] + c1[1] + c3[1],
                  acc[bi, 2] + c1[2] + c3[2])
            ali = (alpha[bi, 0], alpha[bi, 1], alpha[bi, 2])
        else:
            wi0 = wi1 = wi2 = 0.0
            vb = ab = ali = (0.0, 0.0, 0.0)
        if bo >= 0:
            wo0, wo1, wo2 = wg[bo, 0], wg[bo, 1], wg[bo, 2]
            c2 = _cr(wo0, wo1, wo2, js[3, 0], js[3, 1], js[3, 2])
            va = (v0[bo, 0] + c2[0], v0[bo, 1] + c2[1], v0[bo, 2] + c2[2])
            c1 = _cr(alpha[bo, 0], alpha[bo, 1], alpha[bo, 2], js[3, 0], js[3, 1], js[3, 2])
            c2 = _cr(wo0, wo1, wo2, vb[0] - v0[bo, 0], vb[1] - v0[bo, 1], vb[2] - v0[bo, 2])
            aa = (acc[bo, 0] + c1[0] + c2[0], acc[bo, 1] + c1[1] + c2[1],
                  acc[bo, 2] + c1[2] + c2[2])
            alo = (alpha[bo, 0], alpha[bo, 1], alpha[bo, 2])
        else:
            wo0 = wo1 = wo2 = 0.0
            va = aa = alo = (0.0, 0.0, 0.0)
        dv0, dv1, dv2 = vb[0] - va[0], vb[1] - va[1], vb[2] - va[2]
        dw0, dw1, dw2 = wi0 - wo0, wi1 - wo1, wi2 - wo2
        dd0, dd1, dd2 = ab[0] - aa[0], ab[1] - aa[1], ab[2] - aa[2]
        ar0, ar1, ar2 = ali[0] - alo[0], ali[1] - alo[1], ali[2] - alo[2]
        o = Jt.uo[j]
        for c_i in range(Jt.nu[j]):
            u = o + c_i
            kind, ax = Jt.ukind[u], Jt.uaxis[u]
            e0, e1, e2 = _axis(kind, ax, A, B)
            if kind == U_TRANS:
                q = e0 * js[4, 0] + e1 * js[4, 1] + e2 * js[4, 2]
                rate = e0 * dv0 + e1 * dv1 + e2 * dv2
                k = _cr(wo0, wo1, wo2, e0, e1, e2)
                ud = k[0] * dv0 + k[1] * dv1 + k[2] * dv2 + e0 * dd0 + e1 * dd1 + e2 * dd2
            else:
                q = qt[Jt.uq[u]] if kind != U_ROTV else 0.0
                rate = e0 * dw0 + e1 * dw1 + e2 * dw2
                if kind == U_RY:
                    k = _cr(wi0, wi1, wi2, e0, e1, e2)
                else:
                    k = _cr(wo0, wo1, wo2, e0, e1, e2)
                ud = k[0] * dw0 + k[1] * dw1 + k[2] * dw2 + e0 * ar0 + e1 * ar1 + e2 * ar2
            if kind != U_ROTV:
                row[lay[L_Q] + Jt.uq[u]] = q
            row[lay[L_U] + u] = rate
            row[lay[L_UD] + u] = ud
            row[lay[L_TAU] + u] = W.tau[u]
        if Jt.quat[j]:
            C = W.tC
            for a in range(3):
                for b in range(3):
                    C[a, b] = A[0, a] * B[0, b] + A[1, a] * B[1, b] + A[2, a] * B[2, b]
            qw, qx, qy, qz = _quaternion(C)
            iq = Jt.qo[j] + (0 if Jt.nu[j] == 3 else 3)
            if qw * qt[iq] + qx * qt[iq + 1] + qy * qt[iq + 2] + qz * qt[iq + 3] < 0.0:
                qw, qx, qy, qz = -qw, -qx, -qy, -qz
            qt[iq], qt[iq + 1], qt[iq + 2], qt[iq + 3] = qw, qx, qy, qz
            for a in range(4):
                row[lay[L_Q] + iq + a] = qt[iq + a]
        for a in range(6):
            row[lay[L_WH] + 6 * j + a] = W.Wh[j, a]
        for a in range(4):
            row[lay[L_CL] + 4 * j + a] = W.clos[j, a]


@njit(**_JIT)
def ne_run(S, Bd, Jt, Ld, W, k0, nsteps, h, mags, drvn, out, every, record_last, ortho_every,
           track_every, refresh_every):
    """``nsteps`` steps of length ``h`` from the state S (updated in place), step index ``k0``.

    ``mags[s]`` holds the force magnitudes at the time of step ``k0 + s`` and ``drvn[s]`` the
    driven coordinates one step later (s = 0 .. nsteps). The state before every step whose index
    is a multiple of ``every`` (0: never) is written to the next row of ``out``; with
    ``record_last`` the state after the last step is written too (evaluated, not advanced).
    Angles of hinges without spring or driver are unwrapped every ``track_every`` steps (and at
    every record), the joints' effective masses refreshed every ``refresh_every`` steps (and at
    the first). Returns the number of rows written.
    """
    x, R, v, L, qt = S.x, S.R, S.v, S.L, S.qt
    mass, Jinv = Bd.mass, Bd.Jinv
    wg, F, T, Wh, tau, v0, L0 = W.wg, W.F, W.T, W.Wh, W.tau, W.v0, W.L0
    A, B, C, js = W.tA, W.tB, W.tC, W.js
    g0, g1, g2 = Ld.gravity[0], Ld.gravity[1], Ld.gravity[2]
    forces = has_loads(Ld)
    n = mass.size
    written = 0
    for s in range(nsteps + 1):
        k = k0 + s
        last = s == nsteps
        if last:
            rec = record_last
        else:
            rec = every > 0 and k % every == 0
        if last and not rec:
            break
        _omegas(R, L, Jinv, wg)
        if forces:
            # the bodies' frames are their central frames: origin, mass centre and reference
            # point are all x
            applied_loads(mags[s], Ld, mass, R, x, x, x, wg, v, F, T)
        else:
            for i in range(n):
                m = mass[i]
                F[i, 0], F[i, 1], F[i, 2] = m * g0, m * g1, m * g2
                T[i, 0] = T[i, 1] = T[i, 2] = 0.0
        if rec:
            for i in range(n):
                for a in range(3):
                    W.Fa[i, a] = F[i, a]
                    W.Ta[i, a] = T[i, a]
        track = rec or k % track_every == 0
        refresh = k % refresh_every == 0
        _joints(x, R, v, wg, F, T, qt, mass, Jinv, Jt.bi, Jt.bo, Jt.Ri, Jt.pi, Jt.Ro, Jt.po,
                Jt.om, Jt.zc, Jt.tmask, Jt.rmode, Jt.uo, Jt.nu, Jt.hflag, Jt.quat, Jt.ukind,
                Jt.uaxis, Jt.uq, Jt.hk, Jt.hc, Jt.href, Jt.hRref, Wh, tau, A, B, C, W.kE, W.kP,
                W.kG, W.Meff, W.dMeff, W.nkj, W.age, W.ky, W.clos, refresh, track, rec)
        for i in range(n):
            mi = h / mass[i]
            for a in range(3):
                v0[i, a] = v[i, a]
                L0[i, a] = L[i, a]
                v[i, a] += mi * F[i, a]
                L[i, a] += h * T[i, a]
        if Jt.drv_u.size:
            _drivers(x, R, v, L, mass, Jinv, qt, Jt.bi, Jt.bo, Jt.Ri, Jt.pi, Jt.Ro, Jt.po,
                     Jt.ukind, Jt.uaxis, Jt.uq, Jt.drv_u, Jt.drv_j, Jt.drv_col, drvn[s], Wh, tau,
                     A, B, js, h)
        if rec:
            _record(S, Bd, Jt, W, out[written], h)
            written += 1
        if last:
            for i in range(n):
                for a in range(3):
                    v[i, a] = v0[i, a]
                    L[i, a] = L0[i, a]
            break
        _positions(x, R, v, L, Jinv, h, (k + 1) % ortho_every == 0)
    return written
