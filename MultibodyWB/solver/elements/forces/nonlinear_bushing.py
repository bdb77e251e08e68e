"""Nonlinear bushings between two markers' frames: a linear and a cubic stiffness and a damping
per axis, in translation and in rotation (track pins, rubber mounts).

Measured in the output marker's axes: the input marker's origin relative to the output
marker's, ``d = Ro^T (p_i - p_o)``, and the rotation vector ``phi`` of the input marker's
frame relative to the output marker's (``Ro^T Ri = exp([phi]x)``). Potential, per axis a::

    V = sum_a 1/2 k_a d_a^2 + 1/4 k3_a d_a^4 + 1/2 kr_a phi_a^2 + 1/4 kr3_a phi_a^4

The loads are exactly ``-grad V`` (what the bodies lose in potential they gain in motion):

- force ``-G`` on the input body and ``+G`` on the output body, both at the input marker's
  origin, ``G = Ro (k d + k3 d^3 + c d')``, ``d'`` the rate of ``d`` (the input origin's
  velocity relative to the output body's point there, in the output marker's axes);
- torque ``-T`` on the input body and ``+T`` on the output body, ``T = Ro (J(phi)^-T (kr phi
  + kr3 phi^3) + cr w)``, ``w = Ro^T (w_i - w_o)`` the relative angular velocity and
  ``J(phi)^-T = I + 1/2 [phi]x + beta [phi]x^2``, ``beta = (1 - (t/2) cot(t/2)) / t^2``
  (``t = |phi|``): the transpose of the map from ``w`` to ``phi'``, so that ``T . w`` is the
  rate of the rotational potential however the three stiffnesses differ.

The dampers dissipate ``c d'^2 + cr w^2`` (per axis). The rotation vector is that of the least
rotation (``|phi| <= pi``): the rotational potential is meant for rotations well within a half
turn (rubber and pins twist by degrees). With ``k3 = kr3 = 0`` the bushing is linear.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ...maths.bodies import _add_wrench, _attach
from ...maths.rows import _rotvec
from ...maths.small import _JIT, cross, rotvec
from .base import ForceType, Param

_AXES = "per axis x, y, z of the output marker"

TYPES = (
    ForceType("nonlinear_bushing", 2, frozenset(),
              "bushing between the two markers' frames with a linear and a cubic stiffness and "
              "a damping per axis, in the output marker's axes: force -(k d + k3 d^3 + c d') on "
              "the input marker's origin, d its offset from the output marker's origin; torque "
              "from kr phi + kr3 phi^3 + cr w, phi the rotation vector of the input marker "
              "relative to the output marker, w their relative angular velocity",
              {}, params=(
                  Param("translation_stiffness", "TranslationStiffness", "N/m",
                        f"linear stiffness k of the offset d, {_AXES}", 3,
                        spring="translation", rate="stiffness"),
                  Param("translation_cubic_stiffness", "TranslationCubicStiffness", "N/m^3",
                        f"cubic stiffness k3 of the offset d (force k3 d^3), {_AXES}", 3),
                  Param("translation_damping", "TranslationDamping", "N s/m",
                        f"damping c of the offset's rate d', {_AXES}", 3,
                        spring="translation", rate="damping"),
                  Param("rotation_stiffness", "RotationStiffness", "N m/rad",
                        f"linear stiffness kr of the rotation vector phi, {_AXES}", 3,
                        spring="rotation", rate="stiffness"),
                  Param("rotation_cubic_stiffness", "RotationCubicStiffness", "N m/rad^3",
                        f"cubic stiffness kr3 of the rotation vector phi (torque kr3 phi^3), "
                        f"{_AXES}", 3),
                  Param("rotation_damping", "RotationDamping", "N m s/rad",
                        f"damping cr of the relative angular velocity w, {_AXES}", 3,
                        spring="rotation", rate="damping"),
              )),
)

#: The arrays of the compiled ``Forces`` struct: both markers (body, rotation, position; the
#: ground's in global axes), then the six per-axis parameters (3,) each.
FIELDS = (("nb_bi", "int", ()), ("nb_Ri", "float", (3, 3)), ("nb_pi", "float", (3,)),
          ("nb_bo", "int", ()), ("nb_Ro", "float", (3, 3)), ("nb_po", "float", (3,)),
          ("nb_k", "float", (3,)), ("nb_k3", "float", (3,)), ("nb_c", "float", (3,)),
          ("nb_kr", "float", (3,)), ("nb_kr3", "float", (3,)), ("nb_cr", "float", (3,)))

_PARAM_FIELDS = (("nb_k", "translation_stiffness"), ("nb_k3", "translation_cubic_stiffness"),
                 ("nb_c", "translation_damping"), ("nb_kr", "rotation_stiffness"),
                 ("nb_kr3", "rotation_cubic_stiffness"), ("nb_cr", "rotation_damping"))


def pack(forces, marker, magnitude, drawn_distance) -> dict:
    """The :data:`FIELDS` of ``forces`` (see :func:`.point.pack`)."""
    out = {name: [] for name, _, _ in FIELDS}
    for f in forces:
        for side, ref in (("i", f.input), ("o", f.output)):
            b, Rl, pl = marker(ref)
            out["nb_b" + side].append(b)
            out["nb_R" + side].append(Rl)
            out["nb_p" + side].append(pl)
        for name, attr in _PARAM_FIELDS:
            out[name].append(np.broadcast_to(np.asarray(f.value(attr), dtype=float), (3,)))
    return out


@njit(**_JIT)
def rotation_gradient_map(phi):
    """``J(phi)^-T = I + 1/2 [phi]x + beta [phi]x^2``: a potential's gradient in the rotation
    vector ``phi`` times this is the torque whose power is the potential's rate."""
    t2 = phi[0] * phi[0] + phi[1] * phi[1] + phi[2] * phi[2]
    if t2 < 1e-8:
        beta = 1.0 / 12.0 + t2 / 720.0
    else:
        t = np.sqrt(t2)
        beta = (1.0 - 0.5 * t / np.tan(0.5 * t)) / t2
    K = np.zeros((3, 3))
    K[0, 1], K[0, 2], K[1, 2] = -phi[2], phi[1], -phi[0]
    K[1, 0], K[2, 0], K[2, 1] = phi[2], -phi[1], phi[0]
    M = 0.5 * K + beta * (K @ K)
    for a in range(3):
        M[a, a] += 1.0
    return M


@njit(**_JIT)
def _state(F, f, R, pb, pc, vh, w, hp):
    """Offset d, its rate, rotation vector, relative angular velocity (output marker's axes),
    the output marker's rotation and the input marker's origin (global)."""
    Ri, pI, vI, wI = _attach(F.nb_bi[f], F.nb_Ri[f], F.nb_pi[f], R, pb, w, pc, vh, hp)
    Ro, pO, vO, wO = _attach(F.nb_bo[f], F.nb_Ro[f], F.nb_po[f], R, pb, w, pc, vh, hp)
    r = pI - pO
    d = Ro.T @ r
    dd = Ro.T @ (vI - vO - cross(wO, r))
    phi = rotvec(Ro.T @ Ri)
    wr = Ro.T @ (wI - wO)
    return d, dd, phi, wr, Ro, pI


@njit(**_JIT)
def add_loads(F, mags, R, pb, pc, hp, w, vh, FC, TC):
    """Add the loads to the bodies' forces FC and torques about the mass centres TC (n, 3)."""
    for f in range(F.nb_bi.shape[0]):
        d, dd, phi, wr, Ro, pI = _state(F, f, R, pb, pc, vh, w, hp)
        g = F.nb_k[f] * d + F.nb_k3[f] * d * d * d + F.nb_c[f] * dd
        gr = F.nb_kr[f] * phi + F.nb_kr3[f] * phi * phi * phi
        G = Ro @ g
        T = Ro @ (rotation_gradient_map(phi) @ gr + F.nb_cr[f] * wr)
        _add_wrench(F.nb_bi[f], -G, -T, pI, FC, TC, pc)
        _add_wrench(F.nb_bo[f], G, T, pI, FC, TC, pc)


@njit(**_JIT)
def add_power(F, mags, R, pb, pc, hp, w, vh, out):
    """Add the dampers' dissipation to ``out[2]`` (the springs' power is the change of their
    potential)."""
    pdis = out[2]
    for f in range(F.nb_bi.shape[0]):
        d, dd, phi, wr, Ro, pI = _state(F, f, R, pb, pc, vh, w, hp)
        for a in range(3):
            pdis += F.nb_c[f, a] * dd[a] * dd[a] + F.nb_cr[f, a] * wr[a] * wr[a]
    out[2] = pdis


def does_work(F) -> bool:
    """Whether a damper does work."""
    return bool(F.nb_bi.shape[0] and ((F.nb_c != 0.0).any() or (F.nb_cr != 0.0).any()))


def add_potential(F, attach, ee) -> None:
    """Add the bushings' potential (see the module) to the elastic energies ``ee`` (rows,)
    (see :func:`.spring_damper.add_potential`)."""
    for f in range(F.nb_bi.shape[0]):
        Ri, pI = attach(F.nb_bi[f], F.nb_Ri[f], F.nb_pi[f])
        Ro, pO = attach(F.nb_bo[f], F.nb_Ro[f], F.nb_po[f])
        d = np.einsum("rji,rj->ri", Ro, pI - pO)
        phi = np.array([_rotvec(Ro[r].T @ Ri[r]) for r in range(ee.size)]).reshape(-1, 3)
        ee += (0.5 * F.nb_k[f] * d ** 2 + 0.25 * F.nb_k3[f] * d ** 4
               + 0.5 * F.nb_kr[f] * phi ** 2 + 0.25 * F.nb_kr3[f] * phi ** 4).sum(axis=1)
