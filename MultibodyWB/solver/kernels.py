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

_JIT = dict(cache=True, nogil=True, fastmath=False)


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
    """Rotation vector (axis * angle) of a rotation matrix."""
    c = (R[0, 0] + R[1, 1] + R[2, 2] - 1.0) / 2.0
    c = min(1.0, max(-1.0, c))
    t = np.arccos(c)
    w = np.empty(3)
    w[0] = R[2, 1] - R[1, 2]
    w[1] = R[0, 2] - R[2, 0]
    w[2] = R[1, 0] - R[0, 1]
    if t < 1e-7:
        return 0.5 * w
    if np.pi - t < 1e-6:
        k = 0
        for j in range(3):
            if R[j, j] > R[k, k]:
                k = j
        ax = np.empty(3)
        for j in range(3):
            ax[j] = (R[j, k] + (1.0 if j == k else 0.0)) / 2.0
        ax /= np.sqrt(ax[0] ** 2 + ax[1] ** 2 + ax[2] ** 2)
        if ax[0] * w[0] + ax[1] * w[1] + ax[2] * w[2] < 0:
            ax = -ax
        return t * ax
    return t / (2.0 * np.sin(t)) * w


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
# kinematics of the tree
# --------------------------------------------------------------------------------------------------

@njit(**_JIT)
def tree_kinematics(q, u, parent, code, sgn, qo, uo, nu, mo_R, mo_p, mi_R, mi_p, rc,
                    R, pb, pc, hp, w, vh, Sg, cg, RA):
    """Poses and velocities of all bodies, and each tree hinge's global S and c.

    Outputs (filled): R (n,3,3) base rotations, pb (n,3) base origins, pc (n,3) mass centres,
    hp (n,3) hinge points, w (n,3) angular velocities, vh (n,3) velocity of the body's material
    point at its hinge point, Sg (n,6,6) ``s * S`` in global axes (first nu columns used),
    cg (n,6) ``s * c``, RA (n,3,3) rotation of each hinge's output marker.
    Marker frames of a part that is the ground (parent -1) are given in global axes.
    """
    n = parent.size
    Rrel = np.empty((3, 3))
    d = np.empty(3)
    S = np.empty((6, 6))
    bias = np.empty(6)
    for i in range(n):
        k = nu[i]
        qi = q[qo[i]:qo[i] + 7]
        ui = u[uo[i]:uo[i] + k]
        hinge_local(code[i], qi, ui, Rrel, d, S, bias)
        par = parent[i]
        if par >= 0:
            Rp = R[par]
            pp = pb[par]
            wp = w[par]
        else:
            Rp = np.eye(3)
            pp = np.zeros(3)
            wp = np.zeros(3)
        if sgn[i] > 0:
            # parent holds the output marker (A), child the input marker (B)
            Ra = Rp @ mo_R[i]
            pa = pp + Rp @ mo_p[i]
            Rb = Ra @ Rrel
            pbm = pa + Ra @ d
            R[i] = Rb @ mi_R[i].T
            pb[i] = pbm - R[i] @ mi_p[i]
        else:
            # parent holds the input marker (B), child the output marker (A)
            Rb = Rp @ mi_R[i]
            pbm = pp + Rp @ mi_p[i]
            Ra = Rb @ Rrel.T
            pa = pbm - Ra @ d
            R[i] = Ra @ mo_R[i].T
            pb[i] = pa - R[i] @ mo_p[i]
        RA[i] = Ra
        hp[i] = pbm
        pc[i] = pb[i] + R[i] @ rc[i]
        # relative twist of B w.r.t. A at B's origin, global axes
        wrel = np.zeros(3)
        vrel = np.zeros(3)
        for j in range(k):
            for a in range(3):
                sw = 0.0
                sv = 0.0
                for b in range(3):
                    sw += Ra[a, b] * S[b, j]
                    sv += Ra[a, b] * S[3 + b, j]
                Sg[i, a, j] = sgn[i] * sw
                Sg[i, 3 + a, j] = sgn[i] * sv
                wrel[a] += sw * ui[j]
                vrel[a] += sv * ui[j]
        # parent's velocity at the hinge point
        if par >= 0:
            vpar = vh[par] + cross(wp, pbm - hp[par])
        else:
            vpar = np.zeros(3)
        w[i] = wp + sgn[i] * wrel
        vh[i] = vpar + sgn[i] * vrel
        # bias c uses the angular velocity of the hinge's output body
        wA = wp if sgn[i] > 0 else w[i]
        bw = Ra @ bias[:3]
        bv = Ra @ bias[3:]
        cw = cross(wA, wrel) + bw
        cv = 2.0 * cross(wA, vrel) + bv
        for a in range(3):
            cg[i, a] = sgn[i] * cw[a]
            cg[i, 3 + a] = sgn[i] * cv[a]


# --------------------------------------------------------------------------------------------------
# Riccati sweep (articulated form)
# --------------------------------------------------------------------------------------------------

@njit(**_JIT)
def _spatial_inertia(m, JC, r, IA):
    """6x6 inertia about a point at -r from the mass centre (r = C - p), twist [w; v]."""
    rx = skew(r)
    IA[:3, :3] = JC - m * (rx @ rx)
    IA[:3, 3:] = m * rx
    IA[3:, :3] = -m * rx
    IA[3:, 3:] = 0.0
    IA[3, 3] = m
    IA[4, 4] = m
    IA[5, 5] = m


@njit(**_JIT)
def riccati(parent, nu, uo, mass, JCl, R, pc, hp, w, Sg, cg, Wext, tau, driven, dd,
            udot, x, Wh, IA, pA):
    """Accelerations of the tree in O(n).

    Inputs: ``Wext`` (n,6) applied wrench on each body at its hinge point (gravity included),
    ``tau`` generalised hinge loads (per velocity coordinate), ``driven`` (per velocity
    coordinate, 1 if prescribed), ``dd`` prescribed accelerations (per velocity coordinate).
    Outputs: ``udot`` (all velocity coordinates; driven ones = dd), ``x`` (n,6) body accelerations
    at the hinge points, ``Wh`` (n,6) wrench each tree hinge applies on its child at the hinge
    point (global). Work arrays ``IA`` (n,6,6), ``pA`` (n,6).
    For driven coordinates, ``tau`` is overwritten with the generalised force the driver applies.
    """
    n = parent.size
    # body inertia and bias about the hinge point
    for i in range(n):
        r = pc[i] - hp[i]
        JC = R[i] @ JCl[i] @ R[i].T
        _spatial_inertia(mass[i], JC, r, IA[i])
        wi = w[i]
        Jw = JC @ wi
        wwr = cross(wi, cross(wi, r))
        g = cross(wi, Jw) + mass[i] * cross(r, wwr)
        for a in range(3):
            pA[i, a] = g[a] - Wext[i, a]
            pA[i, 3 + a] = mass[i] * wwr[a] - Wext[i, 3 + a]
    # tips to root
    Sf = np.empty((6, 6))
    for i in range(n - 1, -1, -1):
        k = nu[i]
        o = uo[i]
        # known part of the child's acceleration: c + driven S du
        ck = cg[i].copy()
        nf = 0
        for j in range(k):
            if driven[o + j]:
                for a in range(6):
                    ck[a] += Sg[i, a, j] * dd[o + j]
            else:
                for a in range(6):
                    Sf[a, nf] = Sg[i, a, j]
                nf += 1
        par = parent[i]
        if par < 0:
            continue
        Ia = IA[i].copy()
        pa = pA[i] + IA[i] @ ck
        if nf > 0:
            Sfree = Sf[:, :nf].copy()
            U = IA[i] @ Sfree
            D = Sfree.T @ U
            Dinv = np.linalg.inv(D)
            tf = np.empty(nf)
            jf = 0
            for j in range(k):
                if not driven[o + j]:
                    tf[jf] = tau[o + j]
                    jf += 1
            Ia = Ia - U @ Dinv @ U.T
            pa = pa - U @ (Dinv @ (Sfree.T @ pa - tf))
        # shift from the child's hinge point to the parent's: E = [[I,0],[-~l,I]], e
        l = hp[i] - hp[par]
        lx = skew(l)
        wp = w[par]
        e_v = cross(wp, cross(wp, l))
        # E^T Ia E and E^T (Ia e + pa)
        pa2 = pa + Ia[:, 3:] @ e_v
        A = Ia[:3, :3]
        B = Ia[:3, 3:]
        C = Ia[3:, 3:]
        # Ia E = [[A - B lx, B], [B^T - C lx, C]]
        A1 = A - B @ lx
        C1 = Ia[3:, :3] - C @ lx
        # E^T M = [[M_top + lx M_bottom], [M_bottom]]  (E^T = [[I, lx], [0, I]])
        IA[par, :3, :3] += A1 + lx @ C1
        IA[par, :3, 3:] += B + lx @ C
        IA[par, 3:, :3] += C1
        IA[par, 3:, 3:] += C
        for a in range(3):
            pA[par, a] += pa2[a] + lx[a, 0] * pa2[3] + lx[a, 1] * pa2[4] + lx[a, 2] * pa2[5]
            pA[par, 3 + a] += pa2[3 + a]
    # root to tips
    for i in range(n):
        k = nu[i]
        o = uo[i]
        par = parent[i]
        xp = np.zeros(6)
        if par >= 0:
            l = hp[i] - hp[par]
            wp = w[par]
            xpar = x[par]
            ep = xpar[:3]
            xp[:3] = ep
            xp[3:] = xpar[3:] + cross(ep, l) + cross(wp, cross(wp, l))
        base = xp + cg[i]
        nf = 0
        for j in range(k):
            if driven[o + j]:
                for a in range(6):
                    base[a] += Sg[i, a, j] * dd[o + j]
                udot[o + j] = dd[o + j]
            else:
                for a in range(6):
                    Sf[a, nf] = Sg[i, a, j]
                nf += 1
        if nf > 0:
            Sfree = Sf[:, :nf].copy()
            D = Sfree.T @ IA[i] @ Sfree
            rhs = np.empty(nf)
            r0 = Sfree.T @ (IA[i] @ base + pA[i])
            jf = 0
            for j in range(k):
                if not driven[o + j]:
                    rhs[jf] = tau[o + j] - r0[jf]
                    jf += 1
            ud = np.linalg.solve(D, rhs)
            jf = 0
            for j in range(k):
                if not driven[o + j]:
                    udot[o + j] = ud[jf]
                    jf += 1
            base = base + Sfree @ ud
        x[i] = base
        Wh[i] = IA[i] @ base + pA[i]
        for j in range(k):
            if driven[o + j]:
                s = 0.0
                for a in range(6):
                    s += Sg[i, a, j] * Wh[i, a]
                tau[o + j] = s


# --------------------------------------------------------------------------------------------------
# loads
# --------------------------------------------------------------------------------------------------

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
def loads(q, u, mags, gravity, mass, code, qo, uo, nu, hk, hc, href, hRref,
          pf_body, pf_R, pf_p, pf_dir, pf_frame, pf_torque, pf_mag,
          sd_bi, sd_Ri, sd_pi, sd_bo, sd_Ro, sd_po, sd_k, sd_c, sd_L0, sd_mag,
          rs_bi, rs_Ri, rs_bo, rs_Ro, rs_k, rs_c,
          R, pb, pc, hp, w, vh, RA, Wext, tau):
    """Applied loads: ``Wext`` (n,6) wrench on each body at its hinge point, ``tau`` hinge loads.

    ``mags`` holds the current values of the force magnitudes (time functions), indexed by
    ``pf_mag`` and ``sd_mag`` (-1: none). Hinge springs and dampers act on every velocity
    coordinate: ``tau = -k (q - ref) - c u`` (rotations of spherical, free and bushing hinges use
    the rotation vector of the relative rotation w.r.t. the reference rotation ``hRref``).
    """
    n = mass.size
    FC = np.zeros((n, 3))
    TC = np.zeros((n, 3))
    for i in range(n):
        for a in range(3):
            FC[i, a] = mass[i] * gravity[a]
    # point forces and torques
    for f in range(pf_body.size):
        b = pf_body[f]
        if b < 0:
            continue
        Rg, p, v, wb = _attach(b, pf_R[f], pf_p[f], R, pb, w, pc, vh, hp)
        dirn = pf_dir[f].copy()
        if pf_frame[f] == 1:
            dirn = Rg @ dirn
        mag = mags[pf_mag[f]] if pf_mag[f] >= 0 else 0.0
        vec = mag * dirn
        if pf_torque[f]:
            _add_wrench(b, np.zeros(3), vec, p, FC, TC, pc)
        else:
            _add_wrench(b, vec, np.zeros(3), p, FC, TC, pc)
    # translational spring-dampers: tension pulls the two points together
    for f in range(sd_bi.size):
        Ri, pi_, vi, wi = _attach(sd_bi[f], sd_Ri[f], sd_pi[f], R, pb, w, pc, vh, hp)
        Ro, po, vo, wo = _attach(sd_bo[f], sd_Ro[f], sd_po[f], R, pb, w, pc, vh, hp)
        dv = pi_ - po
        L = np.sqrt(dv[0] ** 2 + dv[1] ** 2 + dv[2] ** 2)
        if L < 1e-12:
            continue
        e = dv / L
        Ld = (vi[0] - vo[0]) * e[0] + (vi[1] - vo[1]) * e[1] + (vi[2] - vo[2]) * e[2]
        T = sd_k[f] * (L - sd_L0[f]) + sd_c[f] * Ld
        if sd_mag[f] >= 0:
            T += mags[sd_mag[f]]
        _add_wrench(sd_bi[f], -T * e, np.zeros(3), pi_, FC, TC, pc)
        _add_wrench(sd_bo[f], T * e, np.zeros(3), po, FC, TC, pc)
    # rotational spring-dampers
    for f in range(rs_bi.size):
        Ri, pi_, vi, wi = _attach(rs_bi[f], rs_Ri[f], np.zeros(3), R, pb, w, pc, vh, hp)
        Ro, po, vo, wo = _attach(rs_bo[f], rs_Ro[f], np.zeros(3), R, pb, w, pc, vh, hp)
        phi = Ro @ rotvec(Ro.T @ Ri)
        T = -(rs_k[f] * phi + rs_c[f] * (wi - wo))
        _add_wrench(rs_bi[f], np.zeros(3), T, pc[rs_bi[f]] if rs_bi[f] >= 0 else pi_,
                    FC, TC, pc)
        _add_wrench(rs_bo[f], np.zeros(3), -T, pc[rs_bo[f]] if rs_bo[f] >= 0 else po,
                    FC, TC, pc)
    # body wrench at the hinge point
    for i in range(n):
        r = pc[i] - hp[i]
        tr = cross(r, FC[i])
        for a in range(3):
            Wext[i, a] = TC[i, a] + tr[a]
            Wext[i, 3 + a] = FC[i, a]
    # hinge springs and dampers
    for i in range(n):
        o = uo[i]
        c = code[i]
        if c == SPHERICAL or c == FREE or c == BUSHING:
            qq = q[qo[i]:qo[i] + 7]
            r0 = 0
            if c != SPHERICAL:
                for a in range(3):
                    tau[o + a] = -hk[o + a] * (qq[a] - href[o + a]) - hc[o + a] * u[o + a]
                r0 = 3
            Rrel = quat_to_matrix(qq[r0], qq[r0 + 1], qq[r0 + 2], qq[r0 + 3])
            phi = rotvec(Rrel @ hRref[i].T)
            for a in range(3):
                tau[o + r0 + a] = -hk[o + r0 + a] * phi[a] - hc[o + r0 + a] * u[o + r0 + a]
        else:
            for j in range(nu[i]):
                tau[o + j] = -hk[o + j] * (q[qo[i] + j] - href[o + j]) - hc[o + j] * u[o + j]


# --------------------------------------------------------------------------------------------------
# state derivative and fixed-step RK4
# --------------------------------------------------------------------------------------------------

@njit(**_JIT)
def apply_drivers(y, drv, nq_tot, T, q, u, dd):
    """Split the state into q and u with driven coordinates taken from ``drv`` (nd, 3)."""
    q[:] = y[:nq_tot]
    u[:] = y[nq_tot:]
    for j in range(u.size):
        dd[j] = 0.0
        k = T.drv_idx[j]
        if k >= 0:
            q[T.drv_q[j]] = drv[k, 0]
            u[j] = drv[k, 1]
            dd[j] = drv[k, 2]


@njit(**_JIT)
def evaluate(y, drv, mags, T, F, W):
    """Everything at one instant: kinematics, loads, accelerations (into the work arrays W).

    Returns the state derivative (ny,).
    """
    nq_tot = T.nq_tot
    q = W.q
    u = W.u
    apply_drivers(y, drv, nq_tot, T, q, u, W.dd)
    tree_kinematics(q, u, T.parent, T.code, T.sgn, T.qo, T.uo, T.nu, T.mo_R, T.mo_p, T.mi_R,
                    T.mi_p, T.rc, W.R, W.pb, W.pc, W.hp, W.w, W.vh, W.Sg, W.cg, W.RA)
    loads(q, u, mags, F.gravity, T.mass, T.code, T.qo, T.uo, T.nu, T.hk, T.hc, T.href,
          T.hRref, F.pf_body, F.pf_R, F.pf_p, F.pf_dir, F.pf_frame, F.pf_torque, F.pf_mag,
          F.sd_bi, F.sd_Ri, F.sd_pi, F.sd_bo, F.sd_Ro, F.sd_po, F.sd_k, F.sd_c, F.sd_L0,
          F.sd_mag, F.rs_bi, F.rs_Ri, F.rs_bo, F.rs_Ro, F.rs_k, F.rs_c,
          W.R, W.pb, W.pc, W.hp, W.w, W.vh, W.RA, W.Wext, W.tau)
    riccati(T.parent, T.nu, T.uo, T.mass, T.JCl, W.R, W.pc, W.hp, W.w, W.Sg, W.cg, W.Wext,
            W.tau, T.driven, W.dd, W.udot, W.x, W.Wh, W.IA, W.pA)
    ydot = np.empty(y.size)
    qd = np.empty(7)
    for i in range(T.parent.size):
        o = T.qo[i]
        hinge_qdot(T.code[i], q[o:o + 7], W.u[T.uo[i]:T.uo[i] + T.nu[i]], qd)
        for j in range(T.nq[i]):
            ydot[o + j] = qd[j]
    ydot[nq_tot:] = W.udot
    return ydot


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
    written = 0
    for s in range(nsteps):
        k = k0 + s
        j = 2 * k
        k1 = evaluate(y, drv_grid[j], mag_grid[j], T, F, W)
        k2 = evaluate(y + 0.5 * h * k1, drv_grid[j + 1], mag_grid[j + 1], T, F, W)
        k3 = evaluate(y + 0.5 * h * k2, drv_grid[j + 1], mag_grid[j + 1], T, F, W)
        k4 = evaluate(y + h * k3, drv_grid[j + 2], mag_grid[j + 2], T, F, W)
        y += h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        normalise_quaternions(y, T.quat)
        if (k + 1) % out_every == 0:
            out[out_start + written] = y
            written += 1
    return written
