"""Convex hulls of the contact shapes, in Python: a hull of points (:func:`hull`, Qhull through
scipy, cached: a track's shoes share one), of a box (:func:`box_hull`), of a contact's shape
(:func:`shape_hull`), and the radius of the sphere round a shape (:func:`bounding_radius`, the
contacts' broad phase). The contact law (:mod:`.forces.contact`) packs and evaluates them."""

from __future__ import annotations

import functools
import math
from typing import NamedTuple, Optional

import numpy as np


class Hull(NamedTuple):
    """A convex shape: ``vertices`` (n, 3) and ``triangles`` (t, 3) (indices into the vertices,
    counter-clockwise seen from outside) of its hull, and its distinct face ``planes`` (f, 4),
    ``n . x + c <= 0`` inside, ``n`` the unit outward normal; all in the marker's frame (m)."""

    vertices: np.ndarray
    triangles: np.ndarray
    planes: np.ndarray

    @property
    def radius(self) -> float:
        """The bounding sphere's radius about the marker's origin (m)."""
        return float(np.sqrt((self.vertices ** 2).sum(axis=1)).max())


def hull(points) -> Hull:
    """The convex hull of ``points`` (n, 3) (Qhull through scipy). Raises ValueError when they
    are not finite or do not span a volume.

    The same points' hull is made once (copies of it handed out): a track's shoes share one
    shape over hundreds of contact pairs, and the set-up and the start check each asked Qhull
    for it per pair (issue 34)."""
    pts = np.ascontiguousarray(np.asarray(points, dtype=float).reshape(-1, 3))
    return Hull(*(a.copy() for a in _hull_of(pts.tobytes(), len(pts))))


@functools.lru_cache(maxsize=256)
def _hull_of(data: bytes, n: int) -> Hull:
    """:func:`hull` of the ``n`` points packed in ``data`` (float64, n x 3)."""
    from scipy.spatial import ConvexHull, QhullError
    pts = np.frombuffer(data, dtype=float).reshape(n, 3).copy()
    if len(pts) < 4 or not np.isfinite(pts).all():
        raise ValueError(f"{len(pts)} points{'' if np.isfinite(pts).all() else ' (not finite)'}"
                         "; a convex shape needs at least four finite points not in one plane")
    try:
        h = ConvexHull(pts)
    except QhullError as e:
        raise ValueError("the points do not span a volume (all in one plane or line)") from e
    used = np.unique(h.simplices)
    index = np.full(len(pts), -1)
    index[used] = np.arange(len(used))
    tris = index[h.simplices]
    verts = pts[used]
    # orient every triangle counter-clockwise seen from outside (Qhull's order is arbitrary)
    a, b, c = verts[tris[:, 0]], verts[tris[:, 1]], verts[tris[:, 2]]
    flip = np.einsum("ij,ij->i", np.cross(b - a, c - a), h.equations[:, :3]) < 0.0
    tris[flip] = tris[flip][:, ::-1]
    # one plane per facet (Qhull splits a facet into triangles with the same equation)
    scale = float(np.abs(verts).max()) or 1.0
    key = np.round(h.equations / [1.0, 1.0, 1.0, scale], 9)
    _, first = np.unique(key, axis=0, return_index=True)
    planes = h.equations[np.sort(first)]
    out = Hull(np.ascontiguousarray(verts), np.ascontiguousarray(tris, dtype=np.int64),
               np.ascontiguousarray(planes))
    for array in out:
        array.setflags(write=False)         # the cached one: :func:`hull` hands out copies
    return out


def box_hull(size) -> Hull:
    """The hull of a box of edge lengths ``size`` (3,) centred on the origin."""
    h = 0.5 * np.asarray(size, dtype=float)
    corners = [[sx * h[0], sy * h[1], sz * h[2]] for sx in (-1, 1) for sy in (-1, 1)
               for sz in (-1, 1)]
    return hull(corners)


def shape_hull(shape) -> Optional[Hull]:
    """The hull of a ``convex`` shape (of its Points), of a ``box`` (its corners); else None."""
    if shape.type == "convex":
        return hull(shape.points)
    if shape.type == "box":
        return box_hull(shape.size)
    return None


def bounding_radius(shape) -> float:
    """The radius of a shape's bounding sphere about its marker's origin (m; inf: a plane)."""
    if shape.type == "sphere":
        return float(shape.radius)
    if shape.type == "box":
        return float(0.5 * np.linalg.norm(shape.size))
    if shape.type == "cylinder":
        return float(math.hypot(shape.radius, 0.5 * shape.length))
    if shape.type == "convex":
        return float(np.sqrt((np.asarray(shape.points, dtype=float).reshape(-1, 3) ** 2)
                             .sum(axis=1)).max())
    if shape.type == "cone":
        return float(max(math.hypot(shape.radius, 0.5 * shape.length),
                         math.hypot(shape.radius2, 0.5 * shape.length)))
    if shape.type == "torus":
        return float(shape.radius + shape.radius2)
    return math.inf
