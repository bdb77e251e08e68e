"""Closed-form mass properties of simple homogeneous solids (SI units).

Used by the example models and as the reference the FreeCAD layer's OCC mass properties are tested
against. Every function returns a :class:`MassProperties` about the *base-frame origin* of the
neutral model (``JI`` convention: Ixx, Iyy, Izz, Ixy, Ixz, Iyz, products as tensor entries).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..maths.rotations import inertia_tensor_to_vector, parallel_axis


@dataclass(frozen=True)
class MassProperties:
    """Mass (kg), mass centre (m, base frame) and ``JI`` about the base origin (kg m^2)."""

    mass: float
    center: np.ndarray
    ji: np.ndarray
    volume: float

    @property
    def inertia_about_center(self) -> np.ndarray:
        """Inertia tensor (3, 3) about the mass centre, base-frame axes."""
        from ..maths.rotations import inertia_vector_to_tensor
        return parallel_axis(inertia_vector_to_tensor(self.ji), -self.mass, self.center)


def _about_origin(mass, center, J_c, volume) -> MassProperties:
    center = np.asarray(center, dtype=float)
    J_o = parallel_axis(J_c, mass, center)
    return MassProperties(float(mass), center, inertia_tensor_to_vector(J_o), float(volume))


def box(size, density, corner=(0.0, 0.0, 0.0)) -> MassProperties:
    """Box of edge lengths ``size`` = (a, b, c) along x, y, z with its minimum corner at ``corner``.

    The seed's box (15 x 10 x 10 mm, 7900 kg/m^3, corner at the origin) gives m = 0.01185 kg,
    Ixx = m (b^2 + c^2) / 3 and Ixy = -m a b / 4 about the corner.
    """
    a, b, c = (float(x) for x in size)
    vol = a * b * c
    m = density * vol
    J_c = m / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    return _about_origin(m, np.asarray(corner, dtype=float) + 0.5 * np.array([a, b, c]), J_c, vol)


def cylinder(radius, height, density, base=(0.0, 0.0, 0.0), inner_radius=0.0) -> MassProperties:
    """Solid (or hollow, ``inner_radius`` > 0) cylinder along z from ``base`` to ``base + h ez``."""
    r, ri, h = float(radius), float(inner_radius), float(height)
    vol = np.pi * (r * r - ri * ri) * h
    m = density * vol
    izz = 0.5 * m * (r * r + ri * ri)
    ixx = m * (3.0 * (r * r + ri * ri) + h * h) / 12.0
    J_c = np.diag([ixx, ixx, izz])
    return _about_origin(m, np.asarray(base, dtype=float) + np.array([0.0, 0.0, 0.5 * h]), J_c, vol)


def sphere(radius, density, center=(0.0, 0.0, 0.0)) -> MassProperties:
    """Solid sphere."""
    r = float(radius)
    vol = 4.0 / 3.0 * np.pi * r ** 3
    m = density * vol
    return _about_origin(m, center, 0.4 * m * r * r * np.eye(3), vol)


def combine(*parts: MassProperties) -> MassProperties:
    """Mass properties of several solids taken as one body (all about the same origin)."""
    m = sum(p.mass for p in parts)
    center = sum(p.mass * p.center for p in parts) / m
    ji = sum(p.ji for p in parts)
    return MassProperties(m, center, ji, sum(p.volume for p in parts))
