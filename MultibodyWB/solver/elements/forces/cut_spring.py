"""The springs and dampers of the hinges that close loops (cut hinges).

A hinge of the tree carries its ``Stiffness`` and ``Damping`` as generalised loads on its own
coordinates, ``tau = -k (q - ref) - c u`` (the formulations' hinge loads). A cut hinge has no
coordinates in the state: its coordinates and rates are measured here from its two markers, as
the hinge defines them (translations ``x, y, z`` of the input marker's origin along the output
marker's axes; rotations as Bryant angles of the input marker relative to the output marker, or,
for spherical, free and bushing hinges, the rotation vector of the relative rotation with respect
to the reference rotation and the relative angular velocity in output-marker axes), and the same
``tau`` acts as a wrench pair at the input marker's origin ``p``: on the input marker's body the
force ``tau_j e_j`` along each translation's axis and the torque ``tau_j a_j`` about each
rotation's axis (``a_rx`` the output marker's x, ``a_ry = R_o Rx(rx) e_y``, ``a_rz`` the input
marker's z), the opposite on the output marker's body. Those axes are the ones along which the
coordinates move (``q_j' = e_j . v_rel(p)``, ``a_j . w_rel``: exact for every type's own
coordinates), so the pair's power is ``sum tau_j q_j'``: the same generalised load as on a tree
hinge, whichever hinge of a loop is cut. Elastic energy ``1/2 k (q - ref)^2``, dissipation
``c u^2`` (the energy balance's ``energy.elastic`` and dissipated work).

Bryant angles are measured within a half turn of the spring's reference (``q - ref`` taken in
(-180, 180] degrees): a tree hinge's spring winds up over whole turns, a cut hinge's does not.

This law packs the cut hinges a formulation gives :func:`..pack` (``cut_hinges``): the mstmm
and constrained methods, whose loops are closed by constraint loads. The newton-euler method
(penalty joints) loads every hinge, cut or not, itself.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ...maths.bodies import _add_wrench3
from ...maths.small import _JIT
from ...maths.rotations import bryant_to_matrix
from ..hinges import QUATERNION_TYPES, SIX_DOF_TYPES
from .contact import _frame_into

#: Cut-hinge springs are not Force elements: no force types.
TYPES = ()

#: The elements this law packs: the cut hinges the formulation names (:func:`..pack`).
ELEMENTS = "cut_hinges"

#: The coordinates of the compiled rows, in order.
COORDINATES = ("x", "y", "z", "rx", "ry", "rz")

#: How a row measures its rotation: Bryant angles (0), the rotation vector with respect to the
#: reference rotation of a spherical hinge (1) and of a free or bushing hinge (2, with its
#: translations).
ANGLES, SPHERICAL, SIX_DOF = 0, 1, 2

#: The arrays of the compiled ``Forces`` struct, one row per cut hinge with a spring or damper:
#: ``cs_int`` both markers' bodies, the mode (:data:`ANGLES` ...) and the hinge's index among
#: the cut hinges; both markers' rotations and positions; stiffness, damping and reference per
#: coordinate of :data:`COORDINATES` (0 where the hinge has none; rotation vector components for
#: the three rotations of the other modes); the reference rotation (modes 1 and 2).
FIELDS = (("cs_int", "int", (4,)), ("cs_Ri", "float", (3, 3)), ("cs_pi", "float", (3,)),
          ("cs_Ro", "float", (3, 3)), ("cs_po", "float", (3,)), ("cs_k", "float", (6,)),
          ("cs_c", "float", (6,)), ("cs_ref", "float", (6,)), ("cs_Rref", "float", (3, 3)))


def has_spring(h) -> bool:
    """Whether hinge ``h`` has a spring or damper (a non-zero stiffness or damping)."""
    return bool(np.any(h.vector("stiffness") != 0.0) or np.any(h.vector("damping") != 0.0))


def pack(hinges, marker, magnitude, drawn_distance) -> dict:
    """The :data:`FIELDS` of the cut hinges ``hinges`` (in the formulation's order of its cut
    hinges) that have a spring or damper."""
    out = {name: [] for name, _, _ in FIELDS}
    for index, h in enumerate(hinges):
        if h.kind is None or not h.kind.coordinates or not has_spring(h):
            continue
        bodies = []
        for side, ref in (("i", h.input), ("o", h.output)):
            b, Rl, pl = marker(ref)
            bodies.append(b)
            out["cs_R" + side].append(Rl)
            out["cs_p" + side].append(pl)
        k6, c6, r6 = np.zeros(6), np.zeros(6), np.zeros(6)
        k, c, ref = h.vector("stiffness"), h.vector("damping"), h.vector("spring_reference")
        Rref = np.eye(3)
        if h.type in QUATERNION_TYPES:
            mode = SIX_DOF if h.type in SIX_DOF_TYPES else SPHERICAL
            slots = list(range(6)) if mode == SIX_DOF else [3, 4, 5]
            if h.spring_reference is not None:
                Rref = bryant_to_matrix(ref[-3:])
                if mode == SIX_DOF:
                    r6[:3] = ref[:3]
        else:
            mode = ANGLES
            slots = [COORDINATES.index(name) for name in h.kind.coordinates]
            r6[slots] = ref
        k6[slots], c6[slots] = k, c
        out["cs_int"].append([bodies[0], bodies[1], mode, index])
        out["cs_k"].append(k6)
        out["cs_c"].append(c6)
        out["cs_ref"].append(r6)
        out["cs_Rref"].append(Rref)
    return out


@njit(**_JIT)
def _wrap(a):
    """``a`` (rad) in (-pi, pi]."""
    return a - 2.0 * math.pi * math.floor((a + math.pi) / (2.0 * math.pi))


@njit(**_JIT)
def _rotvec3(M):
    """Rotation vector of the rotation M (3, 3), as :func:`...maths.small.rotvec`, no
    allocation."""
    c = (M[0, 0] + M[1, 1] + M[2, 2] - 1.0) / 2.0
    w0, w1, w2 = M[2, 1] - M[1, 2], M[0, 2] - M[2, 0], M[1, 0] - M[0, 1]
    s = 0.5 * math.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
    t = math.atan2(s, c)
    if t < 1e-8:
        return 0.5 * w0, 0.5 * w1, 0.5 * w2
    if math.pi - t > 1e-2:
        f = t / (2.0 * s)
        return f * w0, f * w1, f * w2
    k = 0
    for j in range(3):
        if M[j, j] > M[k, k]:
            k = j
    a0 = 0.5 * (M[0, k] + M[k, 0]) - (c if k == 0 else 0.0)
    a1 = 0.5 * (M[1, k] + M[k, 1]) - (c if k == 1 else 0.0)
    a2 = 0.5 * (M[2, k] + M[k, 2]) - (c if k == 2 else 0.0)
    n = math.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
    a0, a1, a2 = a0 / n, a1 / n, a2 / n
    if a0 * w0 + a1 * w1 + a2 * w2 < 0.0:
        a0, a1, a2 = -a0, -a1, -a2
    return t * a0, t * a1, t * a2


@njit(**_JIT)
def _velocity(body, p0, p1, p2, w, vh, hp):
    """Velocity of ``body``'s material point at ``p`` and its angular velocity (ground: 0)."""
    if body < 0:
        return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    r0, r1, r2 = p0 - hp[body, 0], p1 - hp[body, 1], p2 - hp[body, 2]
    w0, w1, w2 = w[body, 0], w[body, 1], w[body, 2]
    return (vh[body, 0] + w1 * r2 - w2 * r1, vh[body, 1] + w2 * r0 - w0 * r2,
            vh[body, 2] + w0 * r1 - w1 * r0, w0, w1, w2)


@njit(**_JIT)
def _evaluate(F, s, R, pb, hp, w, vh, rates, acc, wr, Ri, pi_, Ro, po, M):
    """Row ``s`` at one instant: its wrench on the input marker's body at the input marker's
    origin into ``wr`` (6,) ``[torque; force]`` (global axes); ``acc`` (3,): the dissipated
    power (0), the elastic energy (1); with ``rates`` False the bodies' velocities are not
    read (the elastic part only: ``w``, ``vh``, ``hp`` may be empty). ``Ri ... M``: scratch."""
    bi, bo, mode = F.cs_int[s, 0], F.cs_int[s, 1], F.cs_int[s, 2]
    _frame_into(bi, F.cs_Ri, F.cs_pi, s, R, pb, Ri, pi_)
    _frame_into(bo, F.cs_Ro, F.cs_po, s, R, pb, Ro, po)
    k, c, ref = F.cs_k, F.cs_c, F.cs_ref
    if rates:
        vi0, vi1, vi2, wi0, wi1, wi2 = _velocity(bi, pi_[0], pi_[1], pi_[2], w, vh, hp)
        vo0, vo1, vo2, wo0, wo1, wo2 = _velocity(bo, pi_[0], pi_[1], pi_[2], w, vh, hp)
        dv0, dv1, dv2 = vi0 - vo0, vi1 - vo1, vi2 - vo2
        dw0, dw1, dw2 = wi0 - wo0, wi1 - wo1, wi2 - wo2
    else:
        dv0 = dv1 = dv2 = dw0 = dw1 = dw2 = 0.0
    pdis = 0.0
    energy = 0.0
    for a in range(6):
        wr[a] = 0.0
    # translations along the output marker's axes (modes 0 and 2)
    if mode != SPHERICAL:
        e0, e1, e2 = pi_[0] - po[0], pi_[1] - po[1], pi_[2] - po[2]
        for j in range(3):
            if k[s, j] == 0.0 and c[s, j] == 0.0:
                continue
            a0, a1, a2 = Ro[0, j], Ro[1, j], Ro[2, j]
            dq = a0 * e0 + a1 * e1 + a2 * e2 - ref[s, j]
            rate = a0 * dv0 + a1 * dv1 + a2 * dv2
            tau = -k[s, j] * dq - c[s, j] * rate
            wr[3] += tau * a0
            wr[4] += tau * a1
            wr[5] += tau * a2
            energy += 0.5 * k[s, j] * dq * dq
            pdis += c[s, j] * rate * rate
    if mode == ANGLES:
        # Bryant angles of Rr = Ro^T Ri = Rx(rx) Ry(ry) Rz(rz)
        for a in range(3):
            for b in range(3):
                M[a, b] = Ro[0, a] * Ri[0, b] + Ro[1, a] * Ri[1, b] + Ro[2, a] * Ri[2, b]
        rx = math.atan2(-M[1, 2], M[2, 2])
        for j in range(3, 6):
            if k[s, j] == 0.0 and c[s, j] == 0.0:
                continue
            if j == 3:
                q = rx
                a0, a1, a2 = Ro[0, 0], Ro[1, 0], Ro[2, 0]
            elif j == 4:
                q = math.atan2(M[0, 2], math.sqrt(M[0, 0] * M[0, 0] + M[0, 1] * M[0, 1]))
                cx, sx = math.cos(rx), math.sin(rx)
                a0 = Ro[0, 1] * cx + Ro[0, 2] * sx
                a1 = Ro[1, 1] * cx + Ro[1, 2] * sx
                a2 = Ro[2, 1] * cx + Ro[2, 2] * sx
            else:
                q = math.atan2(-M[0, 1], M[0, 0])
                a0, a1, a2 = Ri[0, 2], Ri[1, 2], Ri[2, 2]
            dq = _wrap(q - ref[s, j])
            rate = a0 * dw0 + a1 * dw1 + a2 * dw2
            tau = -k[s, j] * dq - c[s, j] * rate
            wr[0] += tau * a0
            wr[1] += tau * a1
            wr[2] += tau * a2
            energy += 0.5 * k[s, j] * dq * dq
            pdis += c[s, j] * rate * rate
    else:
        # the rotation vector of Rr Rref^T, the relative angular velocity in output axes
        Rf = F.cs_Rref
        for a in range(3):
            for b in range(3):
                t = 0.0
                for m in range(3):
                    rr = Ro[0, a] * Ri[0, m] + Ro[1, a] * Ri[1, m] + Ro[2, a] * Ri[2, m]
                    t += rr * Rf[s, b, m]
                M[a, b] = t
        ph0, ph1, ph2 = _rotvec3(M)
        w_loc0 = Ro[0, 0] * dw0 + Ro[1, 0] * dw1 + Ro[2, 0] * dw2
        w_loc1 = Ro[0, 1] * dw0 + Ro[1, 1] * dw1 + Ro[2, 1] * dw2
        w_loc2 = Ro[0, 2] * dw0 + Ro[1, 2] * dw1 + Ro[2, 2] * dw2
        t0 = -k[s, 3] * ph0 - c[s, 3] * w_loc0
        t1 = -k[s, 4] * ph1 - c[s, 4] * w_loc1
        t2 = -k[s, 5] * ph2 - c[s, 5] * w_loc2
        for a in range(3):
            wr[a] += Ro[a, 0] * t0 + Ro[a, 1] * t1 + Ro[a, 2] * t2
        energy += 0.5 * (k[s, 3] * ph0 * ph0 + k[s, 4] * ph1 * ph1 + k[s, 5] * ph2 * ph2)
        pdis += c[s, 3] * w_loc0 * w_loc0 + c[s, 4] * w_loc1 * w_loc1 + c[s, 5] * w_loc2 * w_loc2
    acc[0] = pdis
    acc[1] = energy


@njit(**_JIT)
def add_loads(F, mags, R, pb, pc, hp, w, vh, FC, TC):
    """Add the cut hinges' spring and damper loads to the bodies' forces FC and torques about
    the mass centres TC."""
    if F.cs_int.shape[0] == 0:
        return
    acc, wr = np.empty(3), np.empty(6)
    Ri, Ro, M, pi_, po = np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3)), np.empty(3), \
        np.empty(3)
    for s in range(F.cs_int.shape[0]):
        _evaluate(F, s, R, pb, hp, w, vh, True, acc, wr, Ri, pi_, Ro, po, M)
        _add_wrench3(F.cs_int[s, 0], wr[3], wr[4], wr[5], wr[0], wr[1], wr[2], pi_[0], pi_[1],
                     pi_[2], FC, TC, pc)
        _add_wrench3(F.cs_int[s, 1], -wr[3], -wr[4], -wr[5], -wr[0], -wr[1], -wr[2], pi_[0],
                     pi_[1], pi_[2], FC, TC, pc)


@njit(**_JIT)
def add_power(F, mags, R, pb, pc, hp, w, vh, out):
    """Add the cut hinges' dampers' dissipated power to ``out[2]``."""
    if F.cs_int.shape[0] == 0:
        return
    acc, wr = np.empty(3), np.empty(6)
    Ri, Ro, M, pi_, po = np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3)), np.empty(3), \
        np.empty(3)
    pdis = out[2]
    for s in range(F.cs_int.shape[0]):
        _evaluate(F, s, R, pb, hp, w, vh, True, acc, wr, Ri, pi_, Ro, po, M)
        pdis += acc[0]
    out[2] = pdis


@njit(**_JIT)
def add_wrenches(F, R, pb, hp, w, vh, Wcut):
    """Add each row's wrench ``[torque; force]`` on the input marker's body at the input
    marker's origin to its cut hinge's row of ``Wcut`` (cut hinges, 6): with the constraint
    loads, what the hinge applies on its input body."""
    if F.cs_int.shape[0] == 0:
        return
    acc, wr = np.empty(3), np.empty(6)
    Ri, Ro, M, pi_, po = np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3)), np.empty(3), \
        np.empty(3)
    for s in range(F.cs_int.shape[0]):
        _evaluate(F, s, R, pb, hp, w, vh, True, acc, wr, Ri, pi_, Ro, po, M)
        c = F.cs_int[s, 3]
        for a in range(6):
            Wcut[c, a] += wr[a]


def does_work(F) -> bool:
    """Whether a cut hinge has a damper."""
    return bool(F.cs_int.shape[0] and (F.cs_c != 0.0).any())


@njit(**_JIT)
def _potential_rows(F, s, R, pb, ee):
    acc, wr = np.empty(3), np.empty(6)
    Ri, Ro, M, pi_, po = np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3)), np.empty(3), \
        np.empty(3)
    none = np.zeros((0, 3))
    for r in range(ee.size):
        _evaluate(F, s, R[r], pb[r], none, none, none, False, acc, wr, Ri, pi_, Ro, po, M)
        ee[r] += acc[1]


def add_potential(F, attach, ee) -> None:
    """Add the cut hinges' springs' elastic energy ``1/2 k (q - ref)^2`` to ``ee`` (rows,);
    ``attach.R`` (rows, n, 3, 3) and ``attach.pb`` (rows, n, 3) are the stacked body arrays
    (:class:`...results.recorder.Attachments`)."""
    if F.cs_int.shape[0] == 0 or not (F.cs_k != 0.0).any():
        return
    R = np.ascontiguousarray(attach.R, dtype=float)
    pb = np.ascontiguousarray(attach.pb, dtype=float)
    for s in range(F.cs_int.shape[0]):
        _potential_rows(F, s, R, pb, ee)
