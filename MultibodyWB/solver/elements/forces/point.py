"""Point forces and point torques: ``magnitude(t) * direction`` at a marker.

The direction is given in global axes or in the marker's axes (``Frame``); a point force acts at
the marker's origin, a point torque on the marker's body. Both do work (they are not springs): no
potential.
"""

from __future__ import annotations

from numba import njit

from ...maths.bodies import _add_wrench3, _attach_point, _direction
from ...maths.small import _JIT
from .base import ForceType

TYPES = (
    ForceType("point_force", 1, frozenset({"direction", "magnitude"}),
              "force magnitude(t) * direction applied at the marker's origin",
              {"magnitude": "N", "direction": "1"}),
    ForceType("point_torque", 1, frozenset({"direction", "magnitude"}),
              "torque magnitude(t) * direction applied to the marker's body",
              {"magnitude": "N m", "direction": "1"}),
)

#: The arrays of the compiled ``Forces`` struct (one row per element): body index (-1: ground),
#: marker rotation and position on the body (ground: global), direction, frame (1: the marker's
#: axes), torque flag, magnitude index (-1: none).
FIELDS = (("pf_body", "int", ()), ("pf_R", "float", (3, 3)), ("pf_p", "float", (3,)),
          ("pf_dir", "float", (3,)), ("pf_frame", "int", ()), ("pf_torque", "int", ()),
          ("pf_mag", "int", ()))


def pack(forces, marker, magnitude, drawn_distance) -> dict:
    """The :data:`FIELDS` of ``forces`` (this law's elements, in model order): ``marker(ref) ->
    (body, R, p)``, ``magnitude(force) -> index`` (-1: none)."""
    out = {name: [] for name, _, _ in FIELDS}
    for f in forces:
        b, Rl, pl = marker(f.input)
        out["pf_body"].append(b)
        out["pf_R"].append(Rl)
        out["pf_p"].append(pl)
        out["pf_dir"].append(f.direction)
        out["pf_frame"].append(1 if f.frame == "marker" else 0)
        out["pf_torque"].append(1 if f.type == "point_torque" else 0)
        out["pf_mag"].append(magnitude(f))
    return out


@njit(**_JIT)
def add_loads(F, mags, R, pb, pc, hp, w, vh, FC, TC):
    """Add the loads to the bodies' forces FC and torques about the mass centres TC (n, 3)."""
    for f in range(F.pf_body.size):
        b = F.pf_body[f]
        if b < 0:
            continue
        p0, p1, p2, _, _, _, _, _, _ = _attach_point(b, F.pf_p, f, R, pb, w, vh, hp)
        d0, d1, d2 = F.pf_dir[f, 0], F.pf_dir[f, 1], F.pf_dir[f, 2]
        if F.pf_frame[f] == 1:
            d0, d1, d2 = _direction(b, F.pf_R, f, d0, d1, d2, R)
        mag = mags[F.pf_mag[f]] if F.pf_mag[f] >= 0 else 0.0
        if F.pf_torque[f]:
            _add_wrench3(b, 0.0, 0.0, 0.0, mag * d0, mag * d1, mag * d2, p0, p1, p2, FC, TC, pc)
        else:
            _add_wrench3(b, mag * d0, mag * d1, mag * d2, 0.0, 0.0, 0.0, p0, p1, p2, FC, TC, pc)


@njit(**_JIT)
def add_power(F, mags, R, pb, pc, hp, w, vh, out):
    """Add the power of the loads to ``out[1]`` (they dissipate nothing: ``out[2]`` unchanged)."""
    pf = out[1]
    for f in range(F.pf_body.size):
        b = F.pf_body[f]
        if b < 0 or F.pf_mag[f] < 0:
            continue
        _, _, _, v0, v1, v2, w0, w1, w2 = _attach_point(b, F.pf_p, f, R, pb, w, vh, hp)
        d0, d1, d2 = F.pf_dir[f, 0], F.pf_dir[f, 1], F.pf_dir[f, 2]
        if F.pf_frame[f] == 1:
            d0, d1, d2 = _direction(b, F.pf_R, f, d0, d1, d2, R)
        mag = mags[F.pf_mag[f]]
        if F.pf_torque[f]:
            pf += mag * (d0 * w0 + d1 * w1 + d2 * w2)
        else:
            pf += mag * (d0 * v0 + d1 * v1 + d2 * v2)
    out[1] = pf


def does_work(F) -> bool:
    """Whether the loads do work: any with a magnitude."""
    return bool(F.pf_body.size and (F.pf_mag >= 0).any())


def add_potential(F, attach, ee) -> None:
    """No potential (the loads' work is in ``energy.work_forces``)."""
