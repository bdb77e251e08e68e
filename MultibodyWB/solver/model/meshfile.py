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


#: Largest mesh file read (bytes): a contact shape is the convex hull of its vertices, which a
#: few hundred thousand triangles describe to well below a micrometre.
MAX_MESH_BYTES = 200_000_000
#: Most triangles (faces) of a mesh file whose header says how many it has (binary STL, PLY).
MAX_MESH_TRIANGLES = 2_000_000


def _declared_faces(path: str, size: int):
    """The faces a mesh file says it has in its header, read without reading the file (binary
    STL: the count after the 80-byte header, when the size agrees with it; PLY: its
    ``element face`` line); None when the format does not say."""
    ext = os.path.splitext(path)[1].lower()
    with open(path, "rb") as fh:
        head = fh.read(4096)
    if ext == ".stl" and len(head) >= 84 and not head[:5].lower() == b"solid":
        n = int.from_bytes(head[80:84], "little")
        return n if 84 + 50 * n == size else None
    if ext == ".ply" and head.startswith(b"ply"):
        for line in head.split(b"\n"):
            words = line.split()
            if len(words) == 3 and words[:2] == [b"element", b"face"] and words[2].isdigit():
                return int(words[2])
            if words[:1] == [b"end_header"]:
                break
    return None


def check_size(path: str) -> None:
    """Refuse a mesh file past :data:`MAX_MESH_BYTES` or :data:`MAX_MESH_TRIANGLES` before
    anything is read of it (a sparse file of a gigabyte is refused at once).

    Raises
    ------
    ValueError
        Saying the file's size or triangle count and the limit.
    """
    name = os.path.basename(path)
    size = os.path.getsize(path)
    if size > MAX_MESH_BYTES:
        raise ValueError(f"{name}: {size / 1e6:.4g} MB, more than the {MAX_MESH_BYTES / 1e6:g} MB "
                         "a contact mesh may have (MAX_MESH_BYTES): simplify or decimate it")
    faces = _declared_faces(path, size)
    if faces is not None and faces > MAX_MESH_TRIANGLES:
        raise ValueError(f"{name}: {faces} triangles, more than the {MAX_MESH_TRIANGLES} a contact "
                         "mesh may have (MAX_MESH_TRIANGLES): simplify or decimate it")


def read_points(path: str, unit: str = "m") -> np.ndarray:
    """The distinct vertices (n, 3) of the mesh file ``path``, in metres.

    Raises
    ------
    ValueError
        The file is missing, unreadable, of an unknown format, larger than the limits
        (:func:`check_size`) or has fewer than four vertices;
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
        check_size(path)
    except OSError as exc:
        raise ValueError(f"{os.path.basename(path)}: cannot read it ({exc.strerror or exc})") \
            from None
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
