"""Rotational spring-dampers between two markers' frames.

Torque ``-(stiffness phi + damping (w_i - w_o))`` on the input marker's body and its opposite on
the output marker's, ``phi`` the rotation vector of the input marker's frame relative to the
output marker's (global axes). Potential ``1/2 k |phi|^2``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ...maths.bodies import _add_wrench, _attach
from ...maths.rows import _rotvec
from ...maths.small import _JIT, rotvec
from .base import ForceType

TYPES = (
    ForceType("rotational_spring_damper", 2, frozenset({"stiffness", "damping"}),
              "torque -(stiffness*phi + damping*w_rel) on the input marker's body, phi the "
              "rotation vector of the input marker relative to the output marker",
              {"stiffness": "N m/rad", "damping": "N m s/rad"}, spring="rotation"),
)

#: The arrays of the compiled ``Forces`` struct: both markers' bodies and rotations, stiffness,
#: damping.
FIELDS = (("rs_bi", "int", ()), ("rs_Ri", "float", (3, 3)), ("rs_bo", "int", ()),
          ("rs_Ro", "float", (3, 3)), ("rs_k", "float", ()), ("rs_c", "float", ()))


def pack(forces, marker, magnitude, drawn_distance) -> dict:
    """The :data:`FIELDS` of ``forces`` (see :func:`.point.pack`)."""
    out = {name: [] for name, _, _ in FIELDS}
    for f in forces:
        for side, ref in (("i", f.input), ("o", f.output)):
            b, Rl, _ = marker(ref)
            out["rs_b" + side].append(b)
            out["rs_R" + side].append(Rl)
        out["rs_k"].append(f.stiffness)
        out["rs_c"].append(f.damping)
    return out


@njit(**_JIT)
def add_loads(F, mags, R, pb, pc, hp, w, vh, FC, TC):
    """Add the torques to the bodies' torques TC (n, 3)."""
    if F.rs_bi.size == 0:
        return
    zero = np.zeros(3)
    for f in range(F.rs_bi.size):
        Ri, pi_, vi, wi = _attach(F.rs_bi[f], F.rs_Ri[f], zero, R, pb, w, pc, vh, hp)
        Ro, po, vo, wo = _attach(F.rs_bo[f], F.rs_Ro[f], zero, R, pb, w, pc, vh, hp)
        phi = Ro @ rotvec(Ro.T @ Ri)
        Tq = -(F.rs_k[f] * phi + F.rs_c[f] * (wi - wo))
        _add_wrench(F.rs_bi[f], zero, Tq, pi_, FC, TC, pc)
        _add_wrench(F.rs_bo[f], zero, -Tq, po, FC, TC, pc)


@njit(**_JIT)
def add_power(F, mags, R, pb, pc, hp, w, vh, out):
    """Add the dampers' dissipation to ``out[2]`` (the springs' power is the change of their
    potential)."""
    if F.rs_bi.size == 0:
        return
    pdis = out[2]
    zero = np.zeros(3)
    for f in range(F.rs_bi.size):
        if F.rs_c[f] == 0.0:
            continue
        Ri, pi_, vi, wi = _attach(F.rs_bi[f], F.rs_Ri[f], zero, R, pb, w, pc, vh, hp)
        Ro, po, vo, wo = _attach(F.rs_bo[f], F.rs_Ro[f], zero, R, pb, w, pc, vh, hp)
        d0, d1, d2 = wi[0] - wo[0], wi[1] - wo[1], wi[2] - wo[2]
        pdis += F.rs_c[f] * (d0 * d0 + d1 * d1 + d2 * d2)
    out[2] = pdis


def does_work(F) -> bool:
    """Whether a damper does work."""
    return bool(F.rs_bi.size and (F.rs_c != 0.0).any())


def add_potential(F, attach, ee) -> None:
    """Add ``1/2 k |phi|^2`` of every spring to the elastic energies ``ee`` (rows,) (see
    :func:`.spring_damper.add_potential`)."""
    zero = np.zeros(3)
    for f in range(F.rs_bi.size):
        if F.rs_k[f] == 0.0:
            continue
        Ri, _ = attach(F.rs_bi[f], F.rs_Ri[f], zero)
        Ro, _ = attach(F.rs_bo[f], F.rs_Ro[f], zero)
        for r in range(ee.size):
            phi = _rotvec(Ro[r].T @ Ri[r])
            ee[r] += 0.5 * F.rs_k[f] * float(phi @ phi)
