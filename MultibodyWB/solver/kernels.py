"""Numba kernels of the tree dynamics: kinematics, loads, the Riccati sweep, RK4.

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

# hinge type codes: order of model.HINGE_TYPES
FIXED, REVOLUTE, PRISMATIC, CYLINDRICAL, UNIVERSAL, SPHERICAL, PLANAR, FREE, BUSHING = range(9)
TYPE_CODES = {"fixed": FIXED, "revolute": REVOLUTE, "prismatic": PRISMATIC,
              "cylindrical": CYLINDRICAL, "universal": UNIVERSAL, "spherical": SPHERICAL,
              "planar": PLANAR, "free": FREE, "bushing": BUSHING}
#: number of position coordinates and velocity coordinates per type code
NQ = np.array([0, 1, 1, 2, 2, 4, 3, 7, 7], dtype=np.int64)
NU = np.array([0, 1, 1, 2, 2, 3, 3, 6, 6], dtype=np.int64)

_JIT = dict(cache=True, nogil=True, error_model="numpy")


# --------------------------------------------------------------------------------------------------
# small 3-vector and quaternion helpers
# --------------------------------------------------------------------------------------------------

@njit(**_JIT)
def cross(a, b):
    out = np.empty(3)
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]
    return out


@njit(**_JIT)
def skew(v):
    out = np.zeros((3, 3))
    out[0, 1] = -v[2]
    out[0, 2] = v[1]
    out[1, 0] = v[2]
    out[1, 2] = -v[0]
    out[2, 0] = -v[1]
    out[2, 1] = v[0]
    return out


@njit(**_JIT)
def quat_to_matrix(qw, qx, qy, qz):
    """Rotation matrix of a quaternion (normalised here)."""
    n = np.sqrt(qw * qw + qx * qx + qy * qy + qz * qz)
    w, x, y, z = qw / n, qx / n, qy / n, qz / n
    R = np.empty((3, 3))
    R[0, 0] = 1 - 2 * (y * y + z * z)
    R[0, 1] = 2 * (x * y - w * z)
    R[0, 2] = 2 * (x * z + w * y)
    R[1, 0] = 2 * (x * y + w * z)
    R[1, 1] = 1 - 2 * (x * x + z * z)
    R[1, 2] = 2 * (y * z - w * x)
    R[2, 0] = 2 * (x * z - w * y)
    R[2, 1] = 2 * (y * z + w * x)
    R[2, 2] = 1 - 2 * (x * x + y * y)
    return R


@njit(**_JIT)
def rotvec(R):
    """Rotation vector (axis * angle) of a rotation matrix; see rotations.rotation_vector."""
    c = (R[0, 0] + R[1, 1] + R[2, 2] - 1.0) / 2.0
    w = np.empty(3)
    w[0] = R[2, 1] - R[1, 2]
    w[1] = R[0, 2] - R[2, 0]
    w[2] = R[1, 0] - R[0, 1]
    s = 0.5 * np.sqrt(w[0] ** 2 + w[1] ** 2 + w[2] ** 2)
    t = np.arctan2(s, c)
    if t < 1e-8:
        return 0.5 * w
    if np.pi - t > 1e-2:
        return (t / (2.0 * s)) * w
    k = 0
    for j in range(3):
        if R[j, j] > R[k, k]:
            k = j
    ax = np.empty(3)
    for j in range(3):
        ax[j] = 0.5 * (R[j, k] + R[k, j]) - (c if j == k else 0.0)
    ax /= np.sqrt(ax[0] ** 2 + ax[1] ** 2 + ax[2] ** 2)
    if ax[0] * w[0] + ax[1] * w[1] + ax[2] * w[2] < 0:
        ax = -ax
    return t * ax


# --------------------------------------------------------------------------------------------------
# hinge local kinematics
# --------------------------------------------------------------------------------------------------

@njit(**_JIT)
def hinge_local(code, q, u, Rrel, d, S, bias):
    """Fill the relative pose ``Rrel`` (3,3), ``d`` (3,), ``S`` (6, nu) and ``bias`` (6,).

    ``q`` and ``u`` are the hinge's own position and velocity coordinates (see System).
    """
    for a in range(3):
        d[a] = 0.0
        for b in range(3):
            Rrel[a, b] = 1.0 if a == b else 0.0
    S[:, :] = 0.0
    bias[:] = 0.0
    if code == REVOLUTE:
        c, s = np.cos(q[0]), np.sin(q[0])
        Rrel[0, 0] = c
        Rrel[0, 1] = -s
        Rrel[1, 0] = s
        Rrel[1, 1] = c
        S[2, 0] = 1.0
    elif code == PRISMATIC:
        d[2] = q[0]
        S[5, 0] = 1.0
    elif code == CYLINDRICAL:
        d[2] = q[0]
        c, s = np.cos(q[1]), np.sin(q[1])
        Rrel[0, 0] = c
        Rrel[0, 1] = -s
        Rrel[1, 0] = s
        Rrel[1, 1] = c
        S[5, 0] = 1.0
        S[2, 1] = 1.0
    elif code == UNIVERSAL:
        ca, sa = np.cos(q[0]), np.sin(q[0])
        cb, sb = np.cos(q[1]), np.sin(q[1])
        # Rx(a) Ry(b)
        Rrel[0, 0] = cb
        Rrel[0, 1] = 0.0
        Rrel[0, 2] = sb
        Rrel[1, 0] = sa * sb
        Rrel[1, 1] = ca
        Rrel[1, 2] = -sa * cb
        Rrel[2, 0] = -ca * sb
        Rrel[2, 1] = sa
        Rrel[2, 2] = ca * cb
        S[0, 0] = 1.0
        S[1, 1] = ca          # Rx(a) e_y
        S[2, 1] = sa
        # d/dt (Rx(a) e_y) * ub = ua * e_x x (Rx(a) e_y) * ub
        bias[1] = -sa * u[0] * u[1]
        bias[2] = ca * u[0] * u[1]
    elif code == SPHERICAL:
        Rrel[:, :] = quat_to_matrix(q[0], q[1], q[2], q[3])
        S[0, 0] = 1.0
        S[1, 1] = 1.0
        S[2, 2] = 1.0
    elif code == PLANAR:
        d[0] = q[0]
        d[1] = q[1]
        c, s = np.cos(q[2]), np.sin(q[2])
        Rrel[0, 0] = c
        Rrel[0, 1] = -s
        Rrel[1, 0] = s
        Rrel[1, 1] = c
        S[3, 0] = 1.0
        S[4, 1] = 1.0
        S[2, 2] = 1.0
    elif code == FREE or code == BUSHING:
        d[0] = q[0]
        d[1] = q[1]
        d[2] = q[2]
        Rrel[:, :] = quat_to_matrix(q[3], q[4], q[5], q[6])
        for a in range(3):
            S[3 + a, a] = 1.0
            S[a, 3 + a] = 1.0


@njit(**_JIT)
def hinge_qdot(code, q, u, qd):
    """Position-coordinate rates from velocity coordinates (quaternion kinematics)."""
    if code == SPHERICAL or code == FREE or code == BUSHING:
        o = 0
        if code != SPHERICAL:
            qd[0] = u[0]
            qd[1] = u[1]
            qd[2] = u[2]
            o = 3
        w, x, y, z = q[o], q[o + 1], q[o + 2], q[o + 3]
        wx, wy, wz = u[o], u[o + 1], u[o + 2]
        # dq/dt = 1/2 [0, w] (x) q, w in the output marker frame (spatial for the joint)
        qd[o] = 0.5 * (-wx * x - wy * y - wz * z)
        qd[o + 1] = 0.5 * (wx * w + wy * z - wz * y)
        qd[o + 2] = 0.5 * (wy * w + wz * x - wx * z)
        qd[o + 3] = 0.5 * (wz * w + wx * y - wy * x)
    else:
        for j in range(u.size):
            qd[j] = u[j]


# --------------------------------------------------------------------------------------------------
# kinematics, loads, Riccati sweep, state derivative, RK4 (allocation-free)
# --------------------------------------------------------------------------------------------------

#: 0 if a velocity coordinate's motion-subspace column is a rotation ([n; 0]), 1 if a translation
#: ([0; e]), by type code and coordinate: every column is one or the other
COLKIND = np.array([[0, 0, 0, 0, 0, 0],      # fixed
                    [0, 0, 0, 0, 0, 0],      # revolute
                    [1, 0, 0, 0, 0, 0],      # prismatic
                    [1, 0, 0, 0, 0, 0],      # cylindrical: z, rz
                    [0, 0, 0, 0, 0, 0],      # universal
                    [0, 0, 0, 0, 0, 0],      # spherical
                    [1, 1, 0, 0, 0, 0],      # planar: x, y, rz
                    [1, 1, 1, 0, 0, 0],      # free
                    [1, 1, 1, 0, 0, 0]], dtype=np.int64)   # bushing

_INL = dict(cache=True, nogil=True, inline="always", error_model="numpy")


@njit(**_INL)
def _m33(A, B, C):
    """C = A @ B for 3x3."""
    for a in range(3):
        a0, a1, a2 = A[a, 0], A[a, 1], A[a, 2]
        C[a, 0] = a0 * B[0, 0] + a1 * B[1, 0] + a2 * B[2, 0]
        C[a, 1] = a0 * B[0, 1] + a1 * B[1, 1] + a2 * B[2, 1]
        C[a, 2] = a0 * B[0, 2] + a1 * B[1, 2] + a2 * B[2, 2]


@njit(**_INL)
def _m33t(A, B, C):
    """C = A @ B.T for 3x3."""
    for a in range(3):
        a0, a1, a2 = A[a, 0], A[a, 1], A[a, 2]
        C[a, 0] = a0 * B[0, 0] + a1 * B[0, 1] + a2 * B[0, 2]
        C[a, 1] = a0 * B[1, 0] + a1 * B[1, 1] + a2 * B[1, 2]
        C[a, 2] = a0 * B[2, 0] + a1 * B[2, 1] + a2 * B[2, 2]


@njit(**_INL)
def _mv(A, v0, v1, v2):
    """A @ v for 3x3 A, as a tuple."""
    return (A[0, 0] * v0 + A[0, 1] * v1 + A[0, 2] * v2,
            A[1, 0] * v0 + A[1, 1] * v1 + A[1, 2] * v2,
            A[2, 0] * v0 + A[2, 1] * v1 + A[2, 2] * v2)


@njit(**_INL)
def _cr(a0, a1, a2, b0, b1, b2):
    return (a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0)


@njit(**_JIT)
def _attach(body, Rl, pl, R, pb, w, pc, vh, hp):
    """Global rotation, point, and velocity of an attachment (body -1: the ground, given global)."""
    if body < 0:
        return Rl.copy(), pl.copy(), np.zeros(3), np.zeros(3)
    Rg = R[body] @ Rl
    p = pb[body] + R[body] @ pl
    v = vh[body] + cross(w[body], p - hp[body])
    return Rg, p, v, w[body].copy()


@njit(**_JIT)
def _add_wrench(body, F, T, p, FC, TC, pc):
    """Add force F at point p and torque T to a body's totals about its mass centre."""
    if body < 0:
        return
    r = p - pc[body]
    tr = cross(r, F)
    for a in range(3):
        FC[body, a] += F[a]
        TC[body, a] += T[a] + tr[a]


@njit(**_JIT)
def tree_kinematics(q, u, T, W):
    """Poses and velocities of all bodies, and each tree hinge's global S and c.

    Fills W.R (n,3,3) base rotations, W.pb (n,3) base origins, W.pc (n,3) mass centres, W.hp
    (n,3) hinge points, W.w (n,3) angular velocities, W.vh (n,3) velocity of each body's material
    point at its hinge point, W.Sg (n,6,6) ``s * S`` in global axes (first nu columns used),
    W.cg (n,6) ``s * c``, W.RA (n,3,3) rotation of each hinge's output marker. Marker frames of
    the ground (parent -1) are given in global axes. Revolute hinges take a fast path.
    """
    parent, code, sgn, qo, uo, nu = T.parent, T.code, T.sgn, T.qo, T.uo, T.nu
    R, pb, pc, hp, w, vh, Sg, cg, RA = W.R, W.pb, W.pc, W.hp, W.w, W.vh, W.Sg, W.cg, W.RA
    Rrel, d, S, bias, Ra, Rb, Rc = W.Rrel, W.dloc, W.Sloc, W.bias, W.t33a, W.t33b, W.t33c
    for i in range(parent.size):
        k = nu[i]
        revolute = code[i] == REVOLUTE
        if revolute:
            # fast path: Rrel = Rz(q), d = 0, S = [e_z; 0], no local bias
            cq, sq = np.cos(q[qo[i]]), np.sin(q[qo[i]])
        else:
            hinge_local(code[i], q[qo[i]:qo[i] + 7], u[uo[i]:uo[i] + k], Rrel, d, S, bias)
        par = parent[i]
        if par >= 0:
            Rp = R[par]
            pp0, pp1, pp2 = pb[par, 0], pb[par, 1], pb[par, 2]
            wp0, wp1, wp2 = w[par, 0], w[par, 1], w[par, 2]
        else:
            Rp = W.eye3
            pp0 = pp1 = pp2 = 0.0
            wp0 = wp1 = wp2 = 0.0
        s = sgn[i]
        if s > 0:
            _m33(Rp, T.mo_R[i], Ra)
            t = _mv(Rp, T.mo_p[i, 0], T.mo_p[i, 1], T.mo_p[i, 2])
            pa0, pa1, pa2 = pp0 + t[0], pp1 + t[1], pp2 + t[2]
            if revolute:
                for a in range(3):
                    Rb[a, 0] = cq * Ra[a, 0] + sq * Ra[a, 1]
                    Rb[a, 1] = cq * Ra[a, 1] - sq * Ra[a, 0]
                    Rb[a, 2] = Ra[a, 2]
                pm0, pm1, pm2 = pa0, pa1, pa2
            else:
                _m33(Ra, Rrel, Rb)
                t = _mv(Ra, d[0], d[1], d[2])
                pm0, pm1, pm2 = pa0 + t[0], pa1 + t[1], pa2 + t[2]
            _m33t(Rb, T.mi_R[i], R[i])
            t = _mv(R[i], T.mi_p[i, 0], T.mi_p[i, 1], T.mi_p[i, 2])
            pb[i, 0], pb[i, 1], pb[i, 2] = pm0 - t[0], pm1 - t[1], pm2 - t[2]
        else:
            _m33(Rp, T.mi_R[i], Rb)
            t = _mv(Rp, T.mi_p[i, 0], T.mi_p[i, 1], T.mi_p[i, 2])
            pm0, pm1, pm2 = pp0 + t[0], pp1 + t[1], pp2 + t[2]
            if revolute:
                for a in range(3):
                    Ra[a, 0] = cq * Rb[a, 0] - sq * Rb[a, 1]
                    Ra[a, 1] = cq * Rb[a, 1] + sq * Rb[a, 0]
                    Ra[a, 2] = Rb[a, 2]
                pa0, pa1, pa2 = pm0, pm1, pm2
            else:
                _m33t(Rb, Rrel, Ra)
                t = _mv(Ra, d[0], d[1], d[2])
                pa0, pa1, pa2 = pm0 - t[0], pm1 - t[1], pm2 - t[2]
            _m33t(Ra, T.mo_R[i], R[i])
            t = _mv(R[i], T.mo_p[i, 0], T.mo_p[i, 1], T.mo_p[i, 2])
            pb[i, 0], pb[i, 1], pb[i, 2] = pa0 - t[0], pa1 - t[1], pa2 - t[2]
        for a in range(3):
            for b in range(3):
                RA[i, a, b] = Ra[a, b]
        hp[i, 0], hp[i, 1], hp[i, 2] = pm0, pm1, pm2
        t = _mv(R[i], T.rc[i, 0], T.rc[i, 1], T.rc[i, 2])
        pc[i, 0], pc[i, 1], pc[i, 2] = pb[i, 0] + t[0], pb[i, 1] + t[1], pb[i, 2] + t[2]
        wr0 = wr1 = wr2 = 0.0
        vr0 = vr1 = vr2 = 0.0
        uo_i = uo[i]
        if revolute:
            uj = u[uo_i]
            Sg[i, 0, 0], Sg[i, 1, 0], Sg[i, 2, 0] = s * Ra[0, 2], s * Ra[1, 2], s * Ra[2, 2]
            Sg[i, 3, 0] = Sg[i, 4, 0] = Sg[i, 5, 0] = 0.0
            wr0, wr1, wr2 = Ra[0, 2] * uj, Ra[1, 2] * uj, Ra[2, 2] * uj
            k = 0
        for j in range(k):
            sw = _mv(Ra, S[0, j], S[1, j], S[2, j])
            sv = _mv(Ra, S[3, j], S[4, j], S[5, j])
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
        w[i, 0], w[i, 1], w[i, 2] = wp0 + s * wr0, wp1 + s * wr1, wp2 + s * wr2
        vh[i, 0], vh[i, 1], vh[i, 2] = vp0 + s * vr0, vp1 + s * vr1, vp2 + s * vr2
        if s > 0:
            wa0, wa1, wa2 = wp0, wp1, wp2
        else:
            wa0, wa1, wa2 = w[i, 0], w[i, 1], w[i, 2]
        if revolute:
            bw = (0.0, 0.0, 0.0)
            bv = (0.0, 0.0, 0.0)
        else:
            bw = _mv(Ra, bias[0], bias[1], bias[2])
            bv = _mv(Ra, bias[3], bias[4], bias[5])
        cw = _cr(wa0, wa1, wa2, wr0, wr1, wr2)
        cv = _cr(wa0, wa1, wa2, vr0, vr1, vr2)
        for a in range(3):
            cg[i, a] = s * (cw[a] + bw[a])
            cg[i, 3 + a] = s * (2.0 * cv[a] + bv[a])


@njit(**_JIT)
def _invert_spd(D, n, Dinv, work):
    """Inverse of a small symmetric positive-definite matrix by Gauss-Jordan (n <= 6)."""
    for a in range(n):
        for b in range(n):
            work[a, b] = D[a, b]
            Dinv[a, b] = 1.0 if a == b else 0.0
    for c in range(n):
        piv = c
        for r in range(c + 1, n):
            if abs(work[r, c]) > abs(work[piv, c]):
                piv = r
        if piv != c:
            for b in range(n):
                work[c, b], work[piv, b] = work[piv, b], work[c, b]
                Dinv[c, b], Dinv[piv, b] = Dinv[piv, b], Dinv[c, b]
        inv = 1.0 / work[c, c]
        for b in range(n):
            work[c, b] *= inv
            Dinv[c, b] *= inv
        for r in range(n):
            if r != c:
                f = work[r, c]
                if f != 0.0:
                    for b in range(n):
                        work[r, b] -= f * work[c, b]
                        Dinv[r, b] -= f * Dinv[c, b]


@njit(**_JIT)
def riccati(T, W):
    """Accelerations of the tree in O(n): the Riccati sweep in articulated form.

    Uses W.Wext (applied wrench on each body at its hinge point, gravity included), W.tau
    (generalised hinge loads per velocity coordinate), T.driven and W.dd (prescribed
    accelerations). Fills W.udot (driven entries = W.dd), W.x (n,6) body accelerations at the
    hinge points, W.Wh (n,6) the wrench each tree hinge applies on its child at the hinge point,
    and, for driven coordinates, W.tau with the generalised force the driver applies. IA and pA
    end up holding each body's articulated inertia and bias as seen through its hinge.
    """
    parent, nu, uo, mass, JCl = T.parent, T.nu, T.uo, T.mass, T.JCl
    R, pc, hp, w, Sg, cg, Wext, tau = W.R, W.pc, W.hp, W.w, W.Sg, W.cg, W.Wext, W.tau
    driven, dd, udot, x, Wh, IA, pA = T.driven, W.dd, W.udot, W.x, W.Wh, W.IA, W.pA
    U, Dinv, r0, ck, nfree, fidx, paS = W.U, W.Dinv, W.r0, W.ck, W.nfree, W.fidx, W.paS
    JC, t33 = W.t33a, W.t33b
    n = parent.size
    for i in range(n):
        m = mass[i]
        _m33(R[i], JCl[i], t33)
        for a in range(3):          # JC = t33 R^T, symmetric: upper triangle, then mirror
            for b in range(a, 3):
                JC[a, b] = t33[a, 0] * R[i, b, 0] + t33[a, 1] * R[i, b, 1] + t33[a, 2] * R[i, b, 2]
                JC[b, a] = JC[a, b]
        r0_, r1_, r2_ = pc[i, 0] - hp[i, 0], pc[i, 1] - hp[i, 1], pc[i, 2] - hp[i, 2]
        rr = r0_ * r0_ + r1_ * r1_ + r2_ * r2_
        rv = (r0_, r1_, r2_)
        Ii = IA[i]
        for a in range(3):
            for b in range(3):
                Ii[a, b] = JC[a, b] - m * rv[a] * rv[b] + (m * rr if a == b else 0.0)
                Ii[3 + a, 3 + b] = m if a == b else 0.0
        # m ~r (top right) and its transpose (bottom left)
        Ii[0, 3], Ii[0, 4], Ii[0, 5] = 0.0, -m * r2_, m * r1_
        Ii[1, 3], Ii[1, 4], Ii[1, 5] = m * r2_, 0.0, -m * r0_
        Ii[2, 3], Ii[2, 4], Ii[2, 5] = -m * r1_, m * r0_, 0.0
        for a in range(3):
            for b in range(3):
                Ii[3 + a, b] = Ii[b, 3 + a]
        w0, w1, w2 = w[i, 0], w[i, 1], w[i, 2]
        Jw = _mv(JC, w0, w1, w2)
        wr = _cr(w0, w1, w2, r0_, r1_, r2_)
        wwr = _cr(w0, w1, w2, wr[0], wr[1], wr[2])
        g1 = _cr(w0, w1, w2, Jw[0], Jw[1], Jw[2])
        g2 = _cr(r0_, r1_, r2_, wwr[0], wwr[1], wwr[2])
        for a in range(3):
            pA[i, a] = g1[a] + m * g2[a] - Wext[i, a]
            pA[i, 3 + a] = m * wwr[a] - Wext[i, 3 + a]
    Dw = W.t66b
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
        Ii = IA[i]
        par = parent[i]
        ci = T.code[i]
        if nf == 1:
            # one free coordinate (the common case): scalar articulated update
            j = fidx[i, 0]
            r = 3 * COLKIND[ci, j]
            s0, s1, s2 = Sg[i, r, j], Sg[i, r + 1, j], Sg[i, r + 2, j]
            uv = W.t6b
            for a in range(6):
                uv[a] = Ii[a, r] * s0 + Ii[a, r + 1] * s1 + Ii[a, r + 2] * s2
                U[i, a, 0] = uv[a]
            dinv = 1.0 / (s0 * uv[r] + s1 * uv[r + 1] + s2 * uv[r + 2])
            Dinv[i, 0, 0] = dinv
            rs = tau[o + j] - (s0 * pA[i, r] + s1 * pA[i, r + 1] + s2 * pA[i, r + 2])
            r0[i, 0] = rs
            if par < 0:
                continue
            pa = paS[i]
            if ck[i, 3] == 0.0 and ck[i, 4] == 0.0 and ck[i, 5] == 0.0:    # rotations only
                for a in range(6):
                    pa[a] = (pA[i, a] + Ii[a, 0] * ck[i, 0] + Ii[a, 1] * ck[i, 1]
                             + Ii[a, 2] * ck[i, 2])
            else:
                for a in range(6):
                    sa = pA[i, a]
                    for b in range(6):
                        sa += Ii[a, b] * ck[i, b]
                    pa[a] = sa
            sc = rs
            for a in range(6):
                sc -= uv[a] * ck[i, a]
            sc *= dinv
            for a in range(6):
                pa[a] += uv[a] * sc
                ua = uv[a] * dinv
                for b in range(a, 6):
                    v = ua * uv[b]
                    Ii[a, b] -= v
                    if b != a:
                        Ii[b, a] -= v
        else:
            # U = IA S_free, D = S^T U, r0 = tau_f - S^T pA
            for jf in range(nf):
                j = fidx[i, jf]
                r = 3 * COLKIND[ci, j]
                s0, s1, s2 = Sg[i, r, j], Sg[i, r + 1, j], Sg[i, r + 2, j]
                for a in range(6):
                    U[i, a, jf] = Ii[a, r] * s0 + Ii[a, r + 1] * s1 + Ii[a, r + 2] * s2
                r0[i, jf] = tau[o + j] - (s0 * pA[i, r] + s1 * pA[i, r + 1] + s2 * pA[i, r + 2])
            for j1 in range(nf):
                jj = fidx[i, j1]
                r = 3 * COLKIND[ci, jj]
                for j2 in range(nf):
                    Dw[j1, j2] = (Sg[i, r, jj] * U[i, r, j2] + Sg[i, r + 1, jj] * U[i, r + 1, j2]
                                  + Sg[i, r + 2, jj] * U[i, r + 2, j2])
            if nf > 1:
                _invert_spd(Dw, nf, Dinv[i], W.t66c)
            if par < 0:
                continue
            # articulated relation seen through the hinge, in place: IA[i] <- Ia = IA - U Dinv U^T,
            # paS[i] <- pA + IA ck + U Dinv (r0 - U^T ck)   (W_child = Ia (E x_parent + e) + paS)
            pa = paS[i]
            for a in range(6):
                sa = pA[i, a]
                for b in range(6):
                    sa += Ii[a, b] * ck[i, b]
                pa[a] = sa
            if nf > 0:
                Vt = W.t66c          # V = U Dinv  (6 x nf)
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
                        pa[a] += Vt[a, jf] * sa
                for a in range(6):
                    for b in range(a, 6):
                        sa = 0.0
                        for jf in range(nf):
                            sa += Vt[a, jf] * U[i, b, jf]
                        Ii[a, b] -= sa
                        if b != a:
                            Ii[b, a] -= sa
        # carry to the parent's hinge point: P += E^T Ia E, pA_par += E^T (pa + Ia e)
        l0, l1, l2 = hp[i, 0] - hp[par, 0], hp[i, 1] - hp[par, 1], hp[i, 2] - hp[par, 2]
        wp0, wp1, wp2 = w[par, 0], w[par, 1], w[par, 2]
        wl = _cr(wp0, wp1, wp2, l0, l1, l2)
        ev = _cr(wp0, wp1, wp2, wl[0], wl[1], wl[2])
        p0 = pa[0] + Ii[0, 3] * ev[0] + Ii[0, 4] * ev[1] + Ii[0, 5] * ev[2]
        p1 = pa[1] + Ii[1, 3] * ev[0] + Ii[1, 4] * ev[1] + Ii[1, 5] * ev[2]
        p2 = pa[2] + Ii[2, 3] * ev[0] + Ii[2, 4] * ev[1] + Ii[2, 5] * ev[2]
        p3 = pa[3] + Ii[3, 3] * ev[0] + Ii[3, 4] * ev[1] + Ii[3, 5] * ev[2]
        p4 = pa[4] + Ii[4, 3] * ev[0] + Ii[4, 4] * ev[1] + Ii[4, 5] * ev[2]
        p5 = pa[5] + Ii[5, 3] * ev[0] + Ii[5, 4] * ev[1] + Ii[5, 5] * ev[2]
        t = _cr(l0, l1, l2, p3, p4, p5)
        pA[par, 0] += p0 + t[0]
        pA[par, 1] += p1 + t[1]
        pA[par, 2] += p2 + t[2]
        pA[par, 3] += p3
        pA[par, 4] += p4
        pA[par, 5] += p5
        # blocks of Ia: A (top left), B (top right), C (bottom right); Y = B + ~l C
        Y = W.t33a
        for c in range(3):
            t = _cr(l0, l1, l2, Ii[3, 3 + c], Ii[4, 3 + c], Ii[5, 3 + c])
            Y[0, c] = Ii[0, 3 + c] + t[0]
            Y[1, c] = Ii[1, 3 + c] + t[1]
            Y[2, c] = Ii[2, 3 + c] + t[2]
        P = IA[par]
        # top left: A - Y ~l + ~l B^T ; row a of Y ~l is (Y[a] x l); column c of ~l B^T is l x B[c]
        for c in range(3):
            z = _cr(l0, l1, l2, Ii[c, 3], Ii[c, 4], Ii[c, 5])
            for a in range(3):
                P[a, c] += Ii[a, c] + z[a]
        for a in range(3):
            yl = _cr(Y[a, 0], Y[a, 1], Y[a, 2], l0, l1, l2)
            for c in range(3):
                P[a, c] -= yl[c]
                P[a, 3 + c] += Y[a, c]
                P[3 + c, a] += Y[a, c]
                P[3 + a, 3 + c] += Ii[3 + a, 3 + c]
    base = W.t6a
    xp = W.t6c
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
            rr6 = W.t6b
            for jf in range(nf):
                s = r0[i, jf]
                for a in range(6):
                    s -= U[i, a, jf] * base[a]
                rr6[jf] = s
            for j1 in range(nf):
                s = 0.0
                for j2 in range(nf):
                    s += Dinv[i, j1, j2] * rr6[j2]
                udot[o + fidx[i, j1]] = s
            for jf in range(nf):
                j = fidx[i, jf]
                ud = udot[o + j]
                r = 3 * COLKIND[T.code[i], j]
                base[r] += Sg[i, r, j] * ud
                base[r + 1] += Sg[i, r + 1, j] * ud
                base[r + 2] += Sg[i, r + 2, j] * ud
        Ii = IA[i]
        if par >= 0:
            # Wh = Ia (E x_parent + e) + paS = Ia (base - ck - S du) + paS
            for a in range(6):
                x[i, a] = base[a]
                xp[a] = base[a] - ck[i, a]
            for jf in range(nf):
                j = fidx[i, jf]
                ud = udot[o + j]
                r = 3 * COLKIND[T.code[i], j]
                xp[r] -= Sg[i, r, j] * ud
                xp[r + 1] -= Sg[i, r + 1, j] * ud
                xp[r + 2] -= Sg[i, r + 2, j] * ud
            for a in range(6):
                s = paS[i, a]
                for b in range(6):
                    s += Ii[a, b] * xp[b]
                Wh[i, a] = s
        else:
            for a in range(6):
                x[i, a] = base[a]
                s = pA[i, a]
                for b in range(6):
                    s += Ii[a, b] * base[b]
                Wh[i, a] = s
        for j in range(k):
            if driven[o + j]:
                s = 0.0
                for a in range(6):
                    s += Sg[i, a, j] * Wh[i, a]
                tau[o + j] = s


@njit(**_JIT)
def loads(q, u, mags, T, F, W):
    """Applied loads: W.Wext (n,6) wrench on each body at its hinge point, W.tau hinge loads.

    ``mags`` holds the current values of the force magnitudes (time functions), indexed by
    ``F.pf_mag`` and ``F.sd_mag`` (-1: none). Hinge springs and dampers act on every velocity
    coordinate: ``tau = -k (q - ref) - c u``; the rotations of spherical, free and bushing hinges
    use the rotation vector of the relative rotation w.r.t. the reference rotation ``T.hRref``.
    """
    mass, code, qo, uo, nu = T.mass, T.code, T.qo, T.uo, T.nu
    R, pb, pc, hp, w, vh, Wext, tau = W.R, W.pb, W.pc, W.hp, W.w, W.vh, W.Wext, W.tau
    FC, TC = W.FC, W.TC
    n = mass.size
    g = F.gravity
    for i in range(n):
        for a in range(3):
            FC[i, a] = mass[i] * g[a]
            TC[i, a] = 0.0
    zero = W.zero3
    for f in range(F.pf_body.size):
        b = F.pf_body[f]
        if b < 0:
            continue
        Rg, p, v, wb = _attach(b, F.pf_R[f], F.pf_p[f], R, pb, w, pc, vh, hp)
        dirn = F.pf_dir[f].copy()
        if F.pf_frame[f] == 1:
            dirn = Rg @ dirn
        mag = mags[F.pf_mag[f]] if F.pf_mag[f] >= 0 else 0.0
        vec = mag * dirn
        if F.pf_torque[f]:
            _add_wrench(b, zero, vec, p, FC, TC, pc)
        else:
            _add_wrench(b, vec, zero, p, FC, TC, pc)
    for f in range(F.sd_bi.size):
        Ri, pi_, vi, wi = _attach(F.sd_bi[f], F.sd_Ri[f], F.sd_pi[f], R, pb, w, pc, vh, hp)
        Ro, po, vo, wo = _attach(F.sd_bo[f], F.sd_Ro[f], F.sd_po[f], R, pb, w, pc, vh, hp)
        dv = pi_ - po
        L = np.sqrt(dv[0] ** 2 + dv[1] ** 2 + dv[2] ** 2)
        if L < 1e-12:
            continue
        e = dv / L
        Ld = (vi[0] - vo[0]) * e[0] + (vi[1] - vo[1]) * e[1] + (vi[2] - vo[2]) * e[2]
        Tn = F.sd_k[f] * (L - F.sd_L0[f]) + F.sd_c[f] * Ld
        if F.sd_mag[f] >= 0:
            Tn += mags[F.sd_mag[f]]
        _add_wrench(F.sd_bi[f], -Tn * e, zero, pi_, FC, TC, pc)
        _add_wrench(F.sd_bo[f], Tn * e, zero, po, FC, TC, pc)
    for f in range(F.rs_bi.size):
        Ri, pi_, vi, wi = _attach(F.rs_bi[f], F.rs_Ri[f], zero, R, pb, w, pc, vh, hp)
        Ro, po, vo, wo = _attach(F.rs_bo[f], F.rs_Ro[f], zero, R, pb, w, pc, vh, hp)
        phi = Ro @ rotvec(Ro.T @ Ri)
        Tq = -(F.rs_k[f] * phi + F.rs_c[f] * (wi - wo))
        _add_wrench(F.rs_bi[f], zero, Tq, pi_, FC, TC, pc)
        _add_wrench(F.rs_bo[f], zero, -Tq, po, FC, TC, pc)
    for i in range(n):
        t = _cr(pc[i, 0] - hp[i, 0], pc[i, 1] - hp[i, 1], pc[i, 2] - hp[i, 2],
                FC[i, 0], FC[i, 1], FC[i, 2])
        for a in range(3):
            Wext[i, a] = TC[i, a] + t[a]
            Wext[i, 3 + a] = FC[i, a]
    hk, hc, href = T.hk, T.hc, T.href
    for i in range(n):
        o = uo[i]
        c = code[i]
        if c == SPHERICAL or c == FREE or c == BUSHING:
            qq = q[qo[i]:qo[i] + 7]
            s0 = 0
            if c != SPHERICAL:
                for a in range(3):
                    tau[o + a] = -hk[o + a] * (qq[a] - href[o + a]) - hc[o + a] * u[o + a]
                s0 = 3
            Rrel = quat_to_matrix(qq[s0], qq[s0 + 1], qq[s0 + 2], qq[s0 + 3])
            phi = rotvec(Rrel @ T.hRref[i].T)
            for a in range(3):
                tau[o + s0 + a] = -hk[o + s0 + a] * phi[a] - hc[o + s0 + a] * u[o + s0 + a]
        else:
            for j in range(nu[i]):
                tau[o + j] = -hk[o + j] * (q[qo[i] + j] - href[o + j]) - hc[o + j] * u[o + j]


@njit(**_JIT)
def evaluate_into(y, drv, mags, T, F, W, ydot):
    """State derivative at (y, drivers, magnitudes) into ``ydot``; fills the work arrays W."""
    nq_tot = T.nq_tot
    q, u, dd = W.q, W.u, W.dd
    for j in range(nq_tot):
        q[j] = y[j]
    for j in range(u.size):
        u[j] = y[nq_tot + j]
        dd[j] = 0.0
        k = T.drv_idx[j]
        if k >= 0:
            q[T.drv_q[j]] = drv[k, 0]
            u[j] = drv[k, 1]
            dd[j] = drv[k, 2]
    tree_kinematics(q, u, T, W)
    loads(q, u, mags, T, F, W)
    riccati(T, W)
    if T.m_tot > 0:          # (a call copies the argument structs: none for trees)
        close_loops(T, W)
    for i in range(T.parent.size):
        o = T.qo[i]
        c = T.code[i]
        if c == SPHERICAL or c == FREE or c == BUSHING:
            hinge_qdot(c, q[o:o + 7], u[T.uo[i]:T.uo[i] + T.nu[i]], W.qd7)
            for j in range(T.nq[i]):
                ydot[o + j] = W.qd7[j]
        else:
            uo = T.uo[i]
            for j in range(T.nq[i]):
                ydot[o + j] = u[uo + j]
    for j in range(u.size):
        ydot[nq_tot + j] = W.udot[j]


@njit(**_JIT)
def normalise_quaternions(y, quat):
    for k in range(quat.size):
        o = quat[k]
        n = np.sqrt(y[o] ** 2 + y[o + 1] ** 2 + y[o + 2] ** 2 + y[o + 3] ** 2)
        for a in range(4):
            y[o + a] /= n


@njit(**_JIT)
def rk4_run(y, k0, nsteps, h, drv_grid, mag_grid, T, F, W, out, out_every, out_start):
    """``nsteps`` RK4 steps from ``y`` (updated in place), starting at step index ``k0``.

    ``drv_grid`` (2K+1, nd, 3) and ``mag_grid`` (2K+1, nm) hold the time functions at the
    half steps ``t0 + j h / 2`` of the whole run. Every ``out_every``-th state (by global step
    index) is written to ``out[out_start + ...]``. Returns the number of rows written.
    """
    ny = y.size
    k1, k2, k3, k4, yt = W.k1, W.k2, W.k3, W.k4, W.ytmp
    written = 0
    for s in range(nsteps):
        k = k0 + s
        j = 2 * k
        evaluate_into(y, drv_grid[j], mag_grid[j], T, F, W, k1)
        for a in range(ny):
            yt[a] = y[a] + 0.5 * h * k1[a]
        evaluate_into(yt, drv_grid[j + 1], mag_grid[j + 1], T, F, W, k2)
        for a in range(ny):
            yt[a] = y[a] + 0.5 * h * k2[a]
        evaluate_into(yt, drv_grid[j + 1], mag_grid[j + 1], T, F, W, k3)
        for a in range(ny):
            yt[a] = y[a] + h * k3[a]
        evaluate_into(yt, drv_grid[j + 2], mag_grid[j + 2], T, F, W, k4)
        for a in range(ny):
            y[a] += h / 6.0 * (k1[a] + 2.0 * k2[a] + 2.0 * k3[a] + k4[a])
        normalise_quaternions(y, T.quat)
        if (k + 1) % out_every == 0:
            for a in range(ny):
                out[out_start + written, a] = y[a]
            written += 1
    return written


@njit(**_JIT)
def evaluate(y, drv, mags, T, F, W):
    """State derivative at (y, drivers, magnitudes) as a new array; fills the work arrays W."""
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

#: blocked rotation axes (bit 0: x, 1: y, 2: z; bit 3: the universal's Rx(a) e_z) and blocked
#: translations (bits 0..2) by type code
CUT_ROT = np.array([7, 3, 7, 3, 8, 0, 3, 0, 0], dtype=np.int64)
CUT_TRANS = np.array([7, 7, 3, 3, 7, 7, 4, 0, 0], dtype=np.int64)


@njit(**_JIT)
def cut_count(code):
    """Number of constraint equations of a cut hinge of type ``code``."""
    n = 0
    r, t = CUT_ROT[code], CUT_TRANS[code]
    for b in range(4):
        if (r >> b) & 1:
            n += 1
    for b in range(3):
        if (t >> b) & 1:
            n += 1
    return n


@njit(**_JIT)
def _attach_frame(b, Rl, pl, W):
    """Global rotation and origin of a marker on body b (-1: ground, marker given globally)."""
    if b < 0:
        return Rl.copy(), pl.copy()
    return W.R[b] @ Rl, W.pb[b] + W.R[b] @ pl


@njit(**_JIT)
def _point_velocity(b, p, W):
    """Angular velocity and velocity of body b's material point at p (zeros for the ground)."""
    if b < 0:
        return np.zeros(3), np.zeros(3)
    return W.w[b].copy(), W.vh[b] + cross(W.w[b], p - W.hp[b])


@njit(**_JIT)
def _point_acceleration(b, p, x, W, with_velocity):
    """[eps; a] of body b's material point at p from its accelerations x (n,6) at hp."""
    out = np.zeros(6)
    if b < 0:
        return out
    r = p - W.hp[b]
    e = x[b, :3]
    a = x[b, 3:] + cross(e, r)
    if with_velocity:
        a = a + cross(W.w[b], cross(W.w[b], r))
    out[:3] = e
    out[3:] = a
    return out


@njit(**_JIT)
def cut_geometry(T, W):
    """Constraint directions, points, velocity and position residuals and biases of all cuts.

    Fills W.Ncol (m, 6), W.pcut (nc, 3), W.vres (m), W.phi (m), W.ccut (nc, 6).
    """
    row = 0
    for k in range(T.c_code.size):
        code = T.c_code[k]
        Rb, pB = _attach_frame(T.c_bi[k], T.c_Ri[k], T.c_pi[k], W)
        Ra, pA = _attach_frame(T.c_bo[k], T.c_Ro[k], T.c_po[k], W)
        W.pcut[k] = pB
        wi, vi = _point_velocity(T.c_bi[k], pB, W)
        wo, vo = _point_velocity(T.c_bo[k], pB, W)
        wrel = wi - wo
        vrel = vi - vo
        Rrel = Ra.T @ Rb
        d = Ra.T @ (pB - pA)
        # rotation error in output-marker axes, after removing the allowed rotation
        rot = CUT_ROT[code]
        ua = 0.0
        if code == UNIVERSAL:
            ua = np.arctan2(Rrel[2, 1], Rrel[1, 1])
            ub = np.arctan2(Rrel[0, 2], Rrel[0, 0])
            ca, sa, cb, sb = np.cos(ua), np.sin(ua), np.cos(ub), np.sin(ub)
            Rq = np.array([[cb, 0.0, sb], [sa * sb, ca, -sa * cb], [-ca * sb, sa, ca * cb]])
            err = rotvec(Rrel @ Rq.T)
        elif rot == 3:           # rotation about z allowed
            th = np.arctan2(Rrel[1, 0], Rrel[0, 0])
            c, s = np.cos(th), np.sin(th)
            Rz = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
            err = rotvec(Rrel @ Rz.T)
        else:
            err = rotvec(Rrel)
        # bias c: w_A x w_rel (+ the universal's local term), 2 w_A x v_rel
        cw = cross(wo, wrel)
        cv = 2.0 * cross(wo, vrel)
        if code == UNIVERSAL:
            wl = Ra.T @ wrel
            ca, sa = np.cos(ua), np.sin(ua)
            adot = wl[0]
            bdot = wl[1] * ca + wl[2] * sa
            cw = cw + adot * bdot * (Ra @ np.array([0.0, -sa, ca]))
        for a in range(3):
            W.ccut[k, a] = cw[a]
            W.ccut[k, 3 + a] = cv[a]
        for b in range(4):
            if (rot >> b) & 1:
                if b < 3:
                    e = np.zeros(3)
                    e[b] = 1.0
                else:
                    ca, sa = np.cos(ua), np.sin(ua)
                    e = np.array([0.0, -sa, ca])
                n = Ra @ e
                for a in range(3):
                    W.Ncol[row, a] = n[a]
                    W.Ncol[row, 3 + a] = 0.0
                W.vres[row] = n[0] * wrel[0] + n[1] * wrel[1] + n[2] * wrel[2]
                W.phi[row] = err[0] * e[0] + err[1] * e[1] + err[2] * e[2]
                row += 1
        tr = CUT_TRANS[code]
        for b in range(3):
            if (tr >> b) & 1:
                n = Ra[:, b].copy()
                for a in range(3):
                    W.Ncol[row, a] = 0.0
                    W.Ncol[row, 3 + a] = n[a]
                W.vres[row] = n[0] * vrel[0] + n[1] * vrel[1] + n[2] * vrel[2]
                W.phi[row] = d[b]
                row += 1


@njit(**_JIT)
def load_sweep(T, W, load, dud, dx, dWh):
    """Response of the tree to the wrenches ``load`` (n,6) at the hinge points, no other load.

    Reuses the articulated quantities of the last :func:`riccati` call (same configuration);
    velocity terms, hinge loads and prescribed accelerations are zero. Fills dud (nu), dx (n,6),
    dWh (n,6).
    """
    parent, nu, uo = T.parent, T.nu, T.uo
    hp, Sg, IA, U, Dinv, nfree, fidx = W.hp, W.Sg, W.IA, W.U, W.Dinv, W.nfree, W.fidx
    pB, paB, rB = W.pB, W.paB, W.rB
    n = parent.size
    for i in range(n):
        for a in range(6):
            pB[i, a] = -load[i, a]
    for j in range(dud.size):
        dud[j] = 0.0
    for i in range(n - 1, -1, -1):
        nf = nfree[i]
        ci = T.code[i]
        for jf in range(nf):
            j = fidx[i, jf]
            r = 3 * COLKIND[ci, j]
            rB[i, jf] = -(Sg[i, r, j] * pB[i, r] + Sg[i, r + 1, j] * pB[i, r + 1]
                          + Sg[i, r + 2, j] * pB[i, r + 2])
        par = parent[i]
        if par < 0:
            continue
        for a in range(6):
            s = pB[i, a]
            for j1 in range(nf):
                t = 0.0
                for j2 in range(nf):
                    t += Dinv[i, j1, j2] * rB[i, j2]
                s += U[i, a, j1] * t
            paB[i, a] = s
        l0, l1, l2 = hp[i, 0] - hp[par, 0], hp[i, 1] - hp[par, 1], hp[i, 2] - hp[par, 2]
        t3 = _cr(l0, l1, l2, paB[i, 3], paB[i, 4], paB[i, 5])
        pB[par, 0] += paB[i, 0] + t3[0]
        pB[par, 1] += paB[i, 1] + t3[1]
        pB[par, 2] += paB[i, 2] + t3[2]
        pB[par, 3] += paB[i, 3]
        pB[par, 4] += paB[i, 4]
        pB[par, 5] += paB[i, 5]
    base = W.t6a
    for i in range(n):
        par = parent[i]
        if par >= 0:
            l0, l1, l2 = hp[i, 0] - hp[par, 0], hp[i, 1] - hp[par, 1], hp[i, 2] - hp[par, 2]
            el = _cr(dx[par, 0], dx[par, 1], dx[par, 2], l0, l1, l2)
            base[0], base[1], base[2] = dx[par, 0], dx[par, 1], dx[par, 2]
            base[3] = dx[par, 3] + el[0]
            base[4] = dx[par, 4] + el[1]
            base[5] = dx[par, 5] + el[2]
        else:
            for a in range(6):
                base[a] = 0.0
        nf = nfree[i]
        o = uo[i]
        ci = T.code[i]
        xp = W.t6c
        for a in range(6):
            xp[a] = base[a]
        rr = W.t6b
        for jf in range(nf):
            s = rB[i, jf]
            for a in range(6):
                s -= U[i, a, jf] * base[a]
            rr[jf] = s
        for j1 in range(nf):
            s = 0.0
            for j2 in range(nf):
                s += Dinv[i, j1, j2] * rr[j2]
            j = fidx[i, j1]
            dud[o + j] = s
            r = 3 * COLKIND[ci, j]
            base[r] += Sg[i, r, j] * s
            base[r + 1] += Sg[i, r + 1, j] * s
            base[r + 2] += Sg[i, r + 2, j] * s
        Ii = IA[i]
        for a in range(6):
            dx[i, a] = base[a]
        if par >= 0:
            for a in range(6):
                s = paB[i, a]
                for b in range(6):
                    s += Ii[a, b] * xp[b]
                dWh[i, a] = s
        else:
            for a in range(6):
                s = pB[i, a]
                for b in range(6):
                    s += Ii[a, b] * base[b]
                dWh[i, a] = s


@njit(**_JIT)
def close_loops(T, W):
    """Add the cut hinges' constraint loads to the solution of :func:`riccati`.

    Fills W.lam (m), W.Wcut (nc, 6) (wrench on each cut hinge's input body at its input marker
    origin), W.loop_rank[0] (rank of the constraint system) and corrects W.udot, W.x, W.Wh and
    the drivers' loads in W.tau.
    """
    m = T.m_tot
    if m == 0:
        return
    n = T.parent.size
    cut_geometry(T, W)
    load = W.loadm
    A = W.Acon
    rhs = W.bcon
    # base residual of the supplementary equations
    row = 0
    for k in range(T.c_code.size):
        p = W.pcut[k]
        xi = _point_acceleration(T.c_bi[k], p, W.x, W, True)
        xo = _point_acceleration(T.c_bo[k], p, W.x, W, True)
        for jr in range(T.c_m[k]):
            r = row + jr
            s = 0.0
            for a in range(6):
                s += W.Ncol[r, a] * (xi[a] - xo[a] - W.ccut[k, a])
            rhs[r] = -s - T.stab[0] * W.vres[r] - T.stab[1] * W.phi[r]
        row += T.c_m[k]
    # response to each unit constraint load
    for j in range(m):
        k = T.c_of_row[j]
        p = W.pcut[k]
        for i in range(n):
            for a in range(6):
                load[i, a] = 0.0
        for side in range(2):
            b = T.c_bi[k] if side == 0 else T.c_bo[k]
            if b < 0:
                continue
            sg = 1.0 if side == 0 else -1.0
            r = p - W.hp[b]
            f = W.Ncol[j, 3:]
            t = cross(r, f)
            for a in range(3):
                load[b, a] += sg * (W.Ncol[j, a] + t[a])
                load[b, 3 + a] += sg * f[a]
        load_sweep(T, W, load, W.dud[j], W.dx[j], W.dWh[j])
        row = 0
        for k2 in range(T.c_code.size):
            p2 = W.pcut[k2]
            xi = _point_acceleration(T.c_bi[k2], p2, W.dx[j], W, False)
            xo = _point_acceleration(T.c_bo[k2], p2, W.dx[j], W, False)
            for jr in range(T.c_m[k2]):
                r = row + jr
                s = 0.0
                for a in range(6):
                    s += W.Ncol[r, a] * (xi[a] - xo[a])
                A[r, j] = s
            row += T.c_m[k2]
    # minimum-norm solution (redundant constraints give a singular A)
    Uu, sv, Vt = np.linalg.svd(A)
    tol = sv[0] * 1e-10 if sv.size > 0 else 0.0
    rank = 0
    lam = W.lam
    for j in range(m):
        lam[j] = 0.0
    for s_i in range(sv.size):
        if sv[s_i] > tol:
            rank += 1
            c = 0.0
            for r in range(m):
                c += Uu[r, s_i] * rhs[r]
            c /= sv[s_i]
            for j in range(m):
                lam[j] += c * Vt[s_i, j]
    W.loop_rank[0] = rank
    for j in range(m):
        lj = lam[j]
        for a in range(W.udot.size):
            if T.driven[a] == 0:
                W.udot[a] += lj * W.dud[j, a]
        for i in range(n):
            for a in range(6):
                W.x[i, a] += lj * W.dx[j, i, a]
                W.Wh[i, a] += lj * W.dWh[j, i, a]
    for k in range(T.c_code.size):
        for a in range(6):
            W.Wcut[k, a] = 0.0
    for j in range(m):
        k = T.c_of_row[j]
        for a in range(6):
            W.Wcut[k, a] += W.Ncol[j, a] * lam[j]
    # drivers' loads with the constraint loads included
    for i in range(n):
        o = T.uo[i]
        for j in range(T.nu[i]):
            if T.driven[o + j]:
                s = 0.0
                for a in range(6):
                    s += W.Sg[i, a, j] * W.Wh[i, a]
                W.tau[o + j] = s
