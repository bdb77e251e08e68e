"""Points of a contact shape read from a mesh file next to the model (``File`` of a convex
contact shape): the file's vertices, in the marker's frame, scaled to metres.

Formats: what meshio reads (STL, OBJ, PLY, OFF, VTK, VTU, Gmsh's MSH, ...; chosen by the file's
extension). Only the vertices count: the shape is their convex hull.
"""

from __future__ import annotations

import os

import numpy as np

#: Units a mesh file's coordinates may be in: name -> metres per unit (STL has none: say it).
UNITS = {"m": 1.0, "mm": 1e-3, "cm": 1e-2, "in": 0.0254}


def read_points(path: str, unit: str = "m") -> np.ndarray:
    """The distinct vertices (n, 3) of the mesh file ``path``, in metres.

    Raises
    ------
    ValueError
        The file is missing, unreadable, of an unknown format or has fewer than four vertices;
        or the unit is unknown (the message says which).
    """
    if unit not in UNITS:
        raise ValueError(f"unit {unit!r} is not one of {', '.join(UNITS)}")
    if not os.path.isfile(path):
        raise ValueError(f"{path}: no such file")
    try:
        import meshio
    except ImportError:                      # pragma: no cover - a dependency of the set-up
        raise ValueError("reading mesh files needs meshio (python3-meshio; the README's set-up "
                         "command installs it)") from None
    try:
        mesh = meshio.read(path)
    except Exception as exc:                 # meshio raises many kinds for a bad file
        text = str(exc).strip().splitlines()
        raise ValueError(f"{os.path.basename(path)}: cannot read it as a mesh "
                         f"({type(exc).__name__}: {text[0][:200] if text else ''})") from None
    pts = np.asarray(mesh.points, dtype=float)
    if pts.ndim != 2 or pts.shape[1] < 3:
        raise ValueError(f"{os.path.basename(path)}: its points are not 3D")
    pts = np.unique(pts[:, :3], axis=0) * UNITS[unit]
    if len(pts) < 4 or not np.all(np.isfinite(pts)):
        raise ValueError(f"{os.path.basename(path)}: {len(pts)} distinct finite vertices; a "
                         "convex shape needs at least four")
    return pts
