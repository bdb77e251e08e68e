"""Translational spring-dampers between two markers' origins.

Tension ``T = stiffness (L - free_length) + damping dL/dt + magnitude(t)`` along the line from
the output marker's origin to the input marker's: ``-T e`` on the input body, ``+T e`` on the
output body (``e`` the unit vector from output to input). Below :data:`ZERO_LENGTH` the line has
no direction and nothing is applied (the start refuses a model that would begin there with a
tension). Free length left out: the markers' distance as drawn. Potential ``1/2 k (L - L0)^2``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ...maths.bodies import _add_wrench3, _attach_point
from ...maths.small import _JIT
from .base import ForceType

#: Lengths (m) below which the line between the markers has no direction: no load.
ZERO_LENGTH = 1e-12

TYPES = (
    ForceType("spring_damper", 2, frozenset({"stiffness", "damping", "free_length", "magnitude"}),
              "translational spring-damper along the line between the two markers' origins; "
              "tension = stiffness*(length - free_length) + damping*d(length)/dt + magnitude(t)",
              {"stiffness": "N/m", "damping": "N s/m", "free_length": "m", "magnitude": "N"},
              spring="translation"),
)

#: The arrays of the compiled ``Forces`` struct: both markers (body, rotation, position; the
#: ground's in global axes), stiffness, damping, free length, magnitude index (-1: none).
FIELDS = (("sd_bi", "int", ()), ("sd_Ri", "float", (3, 3)), ("sd_pi", "float", (3,)),
          ("sd_bo", "int", ()), ("sd_Ro", "float", (3, 3)), ("sd_po", "float", (3,)),
          ("sd_k", "float", ()), ("sd_c", "float", ()), ("sd_L0", "float", ()),
          ("sd_mag", "int", ()))


def pack(forces, marker, magnitude, drawn_distance) -> dict:
    """The :data:`FIELDS` of ``forces`` (see :func:`.point.pack`); ``drawn_distance(force)``: the
    distance of its markers' origins as drawn (m), the free length when none is given."""
    out = {name: [] for name, _, _ in FIELDS}
    for f in forces:
        for side, ref in (("i", f.input), ("o", f.output)):
            b, Rl, pl = marker(ref)
            out["sd_b" + side].append(b)
            out["sd_R" + side].append(Rl)
            out["sd_p" + side].append(pl)
        out["sd_k"].append(f.stiffness)
        out["sd_c"].append(f.damping)
        out["sd_L0"].append(drawn_distance(f) if f.free_length is None else f.free_length)
        out["sd_mag"].append(magnitude(f))
    return out


@njit(**_JIT)
def add_loads(F, mags, R, pb, pc, hp, w, vh, FC, TC):
    """Add the loads to the bodies' forces FC and torques about the mass centres TC (n, 3)."""
    for f in range(F.sd_bi.size):
        bi, bo = F.sd_bi[f], F.sd_bo[f]
        pi0, pi1, pi2, vi0, vi1, vi2, _, _, _ = _attach_point(bi, F.sd_pi, f, R, pb, w, vh, hp)
        po0, po1, po2, vo0, vo1, vo2, _, _, _ = _attach_point(bo, F.sd_po, f, R, pb, w, vh, hp)
        e0, e1, e2 = pi0 - po0, pi1 - po1, pi2 - po2
        L = np.sqrt(e0 ** 2 + e1 ** 2 + e2 ** 2)
        if L < ZERO_LENGTH:
            continue
        e0, e1, e2 = e0 / L, e1 / L, e2 / L
        Ld = (vi0 - vo0) * e0 + (vi1 - vo1) * e1 + (vi2 - vo2) * e2
        Tn = F.sd_k[f] * (L - F.sd_L0[f]) + F.sd_c[f] * Ld
        if F.sd_mag[f] >= 0:
            Tn += mags[F.sd_mag[f]]
        _add_wrench3(bi, -Tn * e0, -Tn * e1, -Tn * e2, 0.0, 0.0, 0.0, pi0, pi1, pi2, FC, TC, pc)
        _add_wrench3(bo, Tn * e0, Tn * e1, Tn * e2, 0.0, 0.0, 0.0, po0, po1, po2, FC, TC, pc)


@njit(**_JIT)
def add_power(F, mags, R, pb, pc, hp, w, vh, out):
    """Add the magnitude's power to ``out[1]`` and the damper's dissipation to ``out[2]`` (the
    spring's power is the change of its potential)."""
    pf = out[1]
    pdis = out[2]
    for f in range(F.sd_bi.size):
        if F.sd_c[f] == 0.0 and F.sd_mag[f] < 0:
            continue
        pi0, pi1, pi2, vi0, vi1, vi2, _, _, _ = _attach_point(F.sd_bi[f], F.sd_pi, f, R, pb, w,
                                                              vh, hp)
        po0, po1, po2, vo0, vo1, vo2, _, _, _ = _attach_point(F.sd_bo[f], F.sd_po, f, R, pb, w,
                                                              vh, hp)
        d0, d1, d2 = pi0 - po0, pi1 - po1, pi2 - po2
        L = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        if L < ZERO_LENGTH:
            continue                  # as in add_loads: no load without a direction
        Ld = ((vi0 - vo0) * d0 + (vi1 - vo1) * d1 + (vi2 - vo2) * d2) / L
        pdis += F.sd_c[f] * Ld * Ld
        if F.sd_mag[f] >= 0:
            pf -= mags[F.sd_mag[f]] * Ld
    out[1] = pf
    out[2] = pdis


def does_work(F) -> bool:
    """Whether anything but the springs does work: a magnitude or a damper."""
    return bool(F.sd_bi.size and ((F.sd_mag >= 0).any() or (F.sd_c != 0.0).any()))


def add_potential(F, attach, ee) -> None:
    """Add ``1/2 k (L - L0)^2`` of every spring to the elastic energies ``ee`` (rows,);
    ``attach(body, R, p) -> (rotations, points)`` (rows, 3, 3), (rows, 3) of an attachment."""
    for f in range(F.sd_bi.size):
        if F.sd_k[f] == 0.0:
            continue
        _, pi_ = attach(F.sd_bi[f], F.sd_Ri[f], F.sd_pi[f])
        _, po = attach(F.sd_bo[f], F.sd_Ro[f], F.sd_po[f])
        L = np.linalg.norm(pi_ - po, axis=1)
        ee += 0.5 * F.sd_k[f] * (L - F.sd_L0[f]) ** 2
