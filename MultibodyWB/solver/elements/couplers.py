"""Couplers: a linear constraint between two hinge coordinates, ``a u1 + b u2 = 0`` on their
rates, so ``a (q1 - q1(0)) + b (q2 - q2(0)) = 0`` (measured from the start: the drawing is where
the teeth mesh).

Every type is that one constraint with ``(a, b)`` from its field (:data:`COUPLER_TYPES`):

- ``gear``: two rotations, ``u2 = Ratio u1`` (an external pair turns the other way: a negative
  ratio, ``-z1/z2``; an internal pair a positive one);
- ``belt``: two rotations, ``u2 = Ratio u1`` (an open belt or a chain: positive, ``r1/r2``; a
  crossed belt: negative);
- ``rack_pinion``: the pinion's rotation (first) and the rack's translation (second),
  ``u2 = PitchRadius u1`` (m per rad);
- ``linear``: any two coordinates, ``Coefficients a, b``.

The constraint's load acts on both coordinates: ``a lam`` on the first, ``b lam`` on the second
(generalised loads, N m or N); for a gear pair the tooth force is the first load divided by the
first wheel's pitch radius. Result columns ``<coupler>.T1`` (or ``F1`` for a translation),
``T2`` (``F2``) and ``angle_error`` (``gap_error``): the constraint's position residual divided by
``b``, in the second coordinate's unit.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CouplerType:
    """What a coupler type is: the kinds of its two coordinates (None: any) and its field."""

    name: str
    kinds: tuple                 #: ("rotation" | "translation" | None, same for the second)
    field: str                   #: "ratio", "pitch_radius" or "coefficients"
    description: str


COUPLER_TYPES = {t.name: t for t in (
    CouplerType("gear", ("rotation", "rotation"), "ratio",
                "two rotations, rate of the second = Ratio x rate of the first (external pair: "
                "negative, -z1/z2)"),
    CouplerType("belt", ("rotation", "rotation"), "ratio",
                "two rotations, rate of the second = Ratio x rate of the first (open belt or "
                "chain: positive, r1/r2; crossed belt: negative)"),
    CouplerType("rack_pinion", ("rotation", "translation"), "pitch_radius",
                "the pinion's rotation (first) and the rack's translation (second): rate of the "
                "second = PitchRadius x rate of the first"),
    CouplerType("linear", (None, None), "coefficients",
                "any two coordinates: a x rate of the first + b x rate of the second = 0 "
                "(Coefficients a, b)"),
)}

#: Result quantities of a coupler: name -> (unit, description). Which ones a coupler has follows
#: from its coordinates' kinds (:func:`quantities`).
COUPLER_COLUMNS = {
    "T1": ("N m", "the coupler's generalised load on its first coordinate (a rotation)"),
    "F1": ("N", "the coupler's generalised load on its first coordinate (a translation)"),
    "T2": ("N m", "the coupler's generalised load on its second coordinate (a rotation)"),
    "F2": ("N", "the coupler's generalised load on its second coordinate (a translation)"),
    "angle_error": ("rad", "position residual a (q1 - q1(0)) + b (q2 - q2(0)) divided by b "
                           "(second coordinate a rotation)"),
    "gap_error": ("m", "position residual a (q1 - q1(0)) + b (q2 - q2(0)) divided by b "
                       "(second coordinate a translation)"),
}


def quantities(kind1: str, kind2: str) -> list[str]:
    """The result quantities of a coupler between coordinates of these kinds."""
    return [("T1" if kind1 == "rotation" else "F1"), ("T2" if kind2 == "rotation" else "F2"),
            ("angle_error" if kind2 == "rotation" else "gap_error")]


def coefficients(coupler) -> tuple[float, float]:
    """``(a, b)`` of a coupler's constraint ``a u1 + b u2 = 0``."""
    t = COUPLER_TYPES[coupler.type]
    if t.field == "ratio":
        return float(coupler.ratio), -1.0
    if t.field == "pitch_radius":
        return float(coupler.pitch_radius), -1.0
    a, b = coupler.coefficients
    return float(a), float(b)
