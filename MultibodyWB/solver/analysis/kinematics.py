"""Kinematics of the spanning tree: hinge poses, forward kinematics, motion subspaces, mobility.

Conventions
-----------
Pose
    A part's pose is ``(R, p)``: ``R`` (3, 3) the rotation of its base frame (global components
    = ``R @`` local components), ``p`` (3,) the global position of its base-frame origin (m).
Hinge coordinates
    The relative pose of a hinge's input marker frame with respect to its output marker frame is
    ``translation(x, y, z) * Rx(rx) Ry(ry) Rz(rz)`` (see :class:`~.model.HingeType`), the
    coordinates the type lacks set to zero: translations in m along the output marker's axes,
    Bryant angles in rad. A hinge's coordinates always follow its own input/output markers, also
    when the tree uses it reversed.
Tree coordinates
    The flat vector ``q`` of the tree: the tree hinges in ``topology.tree_hinges`` order
    (element-number order), each with its coordinates in ``HINGE_TYPES[type].coordinates`` order
    (:func:`coordinate_slices`, :func:`coordinate_labels`). Functions that take ``q`` also take a
    mapping ``{hinge name: coordinates}``.
Twist
    A 6-vector ``[omega; v]``: angular velocity (rad/s) first, then the velocity (m/s) of the
    body's material point at a stated point, both in global axes. A motion subspace ``S`` (6, k)
    maps coordinate rates to a relative twist: ``twist = S @ qd``. Moving the point from ``a`` to
    ``b`` changes the linear part to ``v + omega x (b - a)``.
Tree motion subspace
    :func:`motion_subspace` gives the twist of a tree hinge's tip-side (input) body relative to
    its root-side (output) part, about the origin of the hinge's marker on the tip-side body
    unless another point is given.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping, NamedTuple, Optional, Union

import numpy as np
import scipy.linalg

from ..elements.couplers import coefficients as coupler_coefficients
from ..elements.hinges import HINGE_TYPES, HingeType
from ..model.mechanism import Hinge, MarkerRef, MultibodySystem, _bryant
from ..model.problems import ModelError, Problem
from ..maths.rotations import (bryant_to_matrix, matrix_to_bryant, rotation_vector, rot_x, rot_y,
                               skew)
from .topology import Topology, analyse

_ROTATIONS = ("rx", "ry", "rz")
_TRANSLATIONS = ("x", "y", "z")
_E = np.eye(3)


class Pose(NamedTuple):
    """A frame's pose: rotation matrix ``R`` (3, 3) and origin ``p`` (3,) in m, global."""

    R: np.ndarray
    p: np.ndarray


Coordinates = Union[np.ndarray, Mapping[str, np.ndarray]]


def _kind(hinge_type: Union[str, HingeType]) -> HingeType:
    if isinstance(hinge_type, HingeType):
        return hinge_type
    try:
        return HINGE_TYPES[hinge_type]
    except KeyError:
        raise ValueError(f"unknown hinge type {hinge_type!r}") from None


def _wrapf(a: float) -> float:
    """An angle wrapped to (-pi, pi] (a float; :func:`_wrap` of one angle)."""
    return math.pi - (math.pi - a) % (2.0 * math.pi)


class _PresentLacking(dict):
    """Indices of the Bryant angles a type's coordinates have and lack, by coordinates."""

    def __missing__(self, coordinates):
        value = self[coordinates] = (
            [i for i, r in enumerate(_ROTATIONS) if r in coordinates],
            [i for i, r in enumerate(_ROTATIONS) if r not in coordinates])
        return value


_PRESENT_LACKING = _PresentLacking()


def _wrap(a):
    """Angles wrapped to (-pi, pi]."""
    return np.pi - np.mod(np.pi - np.asarray(a, dtype=float), 2.0 * np.pi)


# --------------------------------------------------------------------------------------------------
# One hinge, in its marker frames
# --------------------------------------------------------------------------------------------------

def relative_pose(hinge_type: Union[str, HingeType], q) -> tuple[np.ndarray, np.ndarray]:
    """Pose of a hinge's input marker frame relative to its output marker frame.

    Parameters
    ----------
    hinge_type : str or HingeType
        A key of :data:`~.model.HINGE_TYPES` or the type itself.
    q : array_like, shape (k,)
        The hinge's coordinates in the type's order (m, rad).

    Returns
    -------
    R : ndarray, shape (3, 3)
        Rotation of the input marker frame: output-marker components = ``R @`` input-marker
        components; ``Rx(rx) Ry(ry) Rz(rz)``.
    d : ndarray, shape (3,)
        Position of the input marker's origin in output-marker axes (m): ``(x, y, z)``.
    """
    kind = _kind(hinge_type)
    q = np.asarray(q, dtype=float).reshape(-1)
    if q.size != kind.dof:
        raise ValueError(f"hinge type {kind.name!r} has {kind.dof} coordinates, got {q.size}")
    return _relative_pose(kind, q.tolist())


def _relative_pose(kind: HingeType, q: list) -> tuple[np.ndarray, np.ndarray]:
    """:func:`relative_pose` of a type and a list of its coordinates (floats, checked)."""
    value = dict(zip(kind.coordinates, q))
    d = np.array([value.get("x", 0.0), value.get("y", 0.0), value.get("z", 0.0)])
    R = _bryant(value.get("rx", 0.0), value.get("ry", 0.0), value.get("rz", 0.0))
    return R, d


def local_motion_subspace(hinge_type: Union[str, HingeType], q) -> np.ndarray:
    """Motion subspace of a hinge in its output marker frame.

    Parameters
    ----------
    hinge_type : str or HingeType
    q : array_like, shape (k,)
        The hinge's coordinates (m, rad).

    Returns
    -------
    S : ndarray, shape (6, k)
        Twist ``[omega; v]`` of the input marker frame relative to the output marker frame, about
        the input marker's origin, in output-marker axes, per unit rate of each coordinate
        (columns in the type's coordinate order): ``rx`` -> ``[e_x; 0]``, ``ry`` ->
        ``[Rx(rx) e_y; 0]``, ``rz`` -> ``[Rx(rx) Ry(ry) e_z; 0]``, ``x`` -> ``[0; e_x]`` etc.
    """
    kind = _kind(hinge_type)
    q = np.asarray(q, dtype=float).reshape(-1)
    value = dict(zip(kind.coordinates, q))
    Rx = rot_x(value.get("rx", 0.0))
    Rxy = Rx @ rot_y(value.get("ry", 0.0))
    axis = {"rx": _E[:, 0], "ry": Rx[:, 1], "rz": Rxy[:, 2]}
    S = np.zeros((6, kind.dof))
    for j, c in enumerate(kind.coordinates):
        if c in _ROTATIONS:
            S[:3, j] = axis[c]
        else:
            S[3 + _TRANSLATIONS.index(c), j] = 1.0
    return S


def constrained_directions(hinge_type: Union[str, HingeType], q) -> tuple[np.ndarray, tuple]:
    """The relative motions a hinge forbids, in its output marker frame.

    Parameters
    ----------
    hinge_type : str or HingeType
    q : array_like, shape (k,)
        The hinge's coordinates (m, rad).

    Returns
    -------
    C : ndarray, shape (6, 6 - k)
        Orthonormal columns spanning the orthogonal complement of
        :func:`local_motion_subspace` (``C.T @ S == 0``), block-diagonal: first the forbidden
        rotation directions (``[n; 0]``), then the forbidden translations (``[0; e]``). Each
        column is a coordinate the type lacks, in the order rx, ry, rz, x, y, z; a forbidden
        rotation is the lacking axis made orthogonal to the allowed rotation axes (for a universal
        hinge, the z axis becomes ``Rx(rx) e_z``). Empty (6, 0) for elastic hinges and free hinges.
    labels : tuple of str
        ``'rotation about x'``, ``'translation along z'`` ..., one per column.
    """
    kind = _kind(hinge_type)
    if kind.elastic:
        return np.zeros((6, 0)), ()
    S = local_motion_subspace(kind, q)
    basis = []                       # orthonormal basis of the allowed rotation axes
    for j, c in enumerate(kind.coordinates):
        if c in _ROTATIONS:
            v = S[:3, j].copy()
            for b in basis:
                v -= np.dot(b, v) * b
            if np.linalg.norm(v) > 1e-9:
                basis.append(v / np.linalg.norm(v))
    columns, labels = [], []
    lacking_rot = [c for c in _ROTATIONS if c not in kind.coordinates]
    rot_dirs = []
    for c in lacking_rot:
        v = _E[:, _ROTATIONS.index(c)].copy()
        for b in basis + rot_dirs:
            v -= np.dot(b, v) * b
        n = np.linalg.norm(v)
        if n < 1e-6:   # the lacking axis lies in the allowed span: take any missing direction
            u, s, vt = np.linalg.svd(np.array(basis + rot_dirs).reshape(-1, 3))
            v = vt[-1]
            n = 1.0
        rot_dirs.append(v / n)
    for c, v in zip(lacking_rot, rot_dirs):
        columns.append(np.concatenate([v, np.zeros(3)]))
        labels.append(f"rotation about {c[1]}")
    for c in _TRANSLATIONS:
        if c not in kind.coordinates:
            columns.append(np.concatenate([np.zeros(3), _E[:, _TRANSLATIONS.index(c)]]))
            labels.append(f"translation along {c}")
    C = np.array(columns).T if columns else np.zeros((6, 0))
    return C, tuple(labels)


def coordinates_from_pose(hinge_type: Union[str, HingeType], R, d,
                          reference=None) -> tuple[np.ndarray, np.ndarray]:
    """A hinge's coordinates from its markers' relative pose: inverse of :func:`relative_pose`.

    The rotation is decomposed with :func:`~.rotations.matrix_to_bryant`; of its two Bryant
    solutions ``(a, b, c)`` and ``(a + pi, pi - b, c + pi)`` the one whose angles the type lacks
    are closest to zero is kept (so a universal hinge past ``ry = pi/2`` is recovered), then, when
    both fit equally (spherical, free), the one closest to ``reference``. Angles are then shifted
    by multiples of 2 pi to be nearest to ``reference`` (or wrapped to (-pi, pi]); the type's
    translations are read from ``d``.

    Parameters
    ----------
    hinge_type : str or HingeType
    R : array_like, shape (3, 3)
        Rotation of the input marker frame relative to the output marker frame.
    d : array_like, shape (3,)
        The input marker's origin in output-marker axes (m).
    reference : array_like, shape (k,), optional
        Coordinates to stay near (e.g. the previous step's), to follow angles past +-pi.

    Returns
    -------
    q : ndarray, shape (k,)
        The coordinates (m, rad).
    residual : ndarray, shape (6,)
        How far the pose is from satisfying the hinge: ``[phi; e]`` in output-marker axes, ``phi``
        (rad) the rotation vector of ``R @ R_q.T`` and ``e = d - d_q`` (m), with ``(R_q, d_q) =
        relative_pose(hinge_type, q)``. Zero when the markers' relative pose is one the hinge
        allows.
    """
    kind = _kind(hinge_type)
    R = np.asarray(R, dtype=float)
    d = np.asarray(d, dtype=float).reshape(3)
    q = _fit(kind, R, d, reference)
    Rq, dq = _relative_pose(kind, q)
    residual = np.concatenate([rotation_vector(R @ Rq.T), d - dq])
    return np.array(q, dtype=float), residual


def _fit(kind: HingeType, R: np.ndarray, d: np.ndarray, reference=None) -> list:
    """The coordinates of :func:`coordinates_from_pose` (a list of floats), without the
    residual."""
    ref = None if reference is None else dict(zip(kind.coordinates,
                                                  np.asarray(reference, dtype=float).reshape(-1)
                                                  .tolist()))
    a, b, c = matrix_to_bryant(R).tolist()
    best = (a, b, c)
    other = (_wrapf(a + math.pi), _wrapf(math.pi - b), _wrapf(c + math.pi))
    present, lacking = _PRESENT_LACKING[kind.coordinates]

    def lack(angles):
        return math.sqrt(sum(_wrapf(angles[i]) ** 2 for i in lacking))

    def distance(angles):
        if ref is None or not present:
            return 0.0
        return math.sqrt(sum(_wrapf(angles[i] - ref[_ROTATIONS[i]]) ** 2 for i in present))

    if lack(other) < lack(best) - 1e-9 or (abs(lack(other) - lack(best)) <= 1e-9
                                            and distance(other) < distance(best) - 1e-9):
        best = other
    dl = d.tolist()
    q = []
    for name in kind.coordinates:
        if name in _ROTATIONS:
            angle = _wrapf(best[_ROTATIONS.index(name)])
            if ref is not None:
                angle = ref[name] + _wrapf(angle - ref[name])
            q.append(angle)
        else:
            q.append(dl[_TRANSLATIONS.index(name)])
    return q


# --------------------------------------------------------------------------------------------------
# Markers and hinges in a model
# --------------------------------------------------------------------------------------------------

def drawn_poses(model: MultibodySystem) -> dict[str, Pose]:
    """Poses of the ground(s) and all bodies as modelled (drawn), by part name."""
    return {p.name: Pose(_bryant(*(float(x) for x in p.orientation)), p.position.copy())
            for p in list(model.grounds) + list(model.bodies)}


def _marker_local(model, ref: MarkerRef, parts=None):
    part = (parts or {}).get(ref.body) or model.part(ref.body)
    if part is None:
        raise ValueError(f"no part called {ref.body!r}")
    m = part.marker(ref.marker)
    if m is None:
        raise ValueError(f"part {ref.body!r} has no marker {ref.marker}")
    return m.frame.rotation, m.frame.position


def marker_pose(model: MultibodySystem, ref: MarkerRef, poses: Mapping[str, Pose]) -> Pose:
    """Global pose of a marker when its part has ``poses[ref.body]``."""
    Rm, pm = _marker_local(model, ref)
    base = poses[ref.body]
    return Pose(base.R @ Rm, base.p + base.R @ pm)


def _hinge(model, hinge) -> Hinge:
    if isinstance(hinge, Hinge):
        return hinge
    h = model.hinge(hinge)
    if h is None:
        raise ValueError(f"no hinge called {hinge!r}")
    return h


def hinge_relative_pose(model: MultibodySystem, hinge: Union[str, Hinge],
                        poses: Optional[Mapping[str, Pose]] = None
                        ) -> tuple[np.ndarray, np.ndarray]:
    """Relative pose ``(R, d)`` of a hinge's input marker w.r.t. its output marker at ``poses``.

    Same meaning as :func:`relative_pose`; ``poses`` defaults to the drawn configuration.
    """
    h = _hinge(model, hinge)
    poses = drawn_poses(model) if poses is None else poses
    mi, mo = marker_pose(model, h.input, poses), marker_pose(model, h.output, poses)
    return mo.R.T @ mi.R, mo.R.T @ (mi.p - mo.p)


def hinge_coordinates(model: MultibodySystem, hinge: Union[str, Hinge],
                      poses: Optional[Mapping[str, Pose]] = None, reference=None) -> np.ndarray:
    """A hinge's coordinates measured from its markers' poses.

    Parameters
    ----------
    model : MultibodySystem
    hinge : str or Hinge
    poses : mapping of part name to Pose, optional
        Defaults to the drawn configuration (so this gives the "as drawn" coordinates).
    reference : array_like, shape (k,), optional
        See :func:`coordinates_from_pose`.

    Returns
    -------
    ndarray, shape (k,)
        Coordinates in m and rad. How far the poses are from what the hinge allows is
        :func:`hinge_residual`.
    """
    h = _hinge(model, hinge)
    R, d = hinge_relative_pose(model, h, poses)
    return np.array(_fit(_kind(h.type), np.asarray(R, dtype=float),
                         np.asarray(d, dtype=float).reshape(3), reference), dtype=float)


def hinge_residual(model: MultibodySystem, hinge: Union[str, Hinge],
                   poses: Optional[Mapping[str, Pose]] = None) -> np.ndarray:
    """How far the markers' poses are from satisfying the hinge, shape (6,).

    ``[phi; e]`` in the output marker's axes: ``phi`` (rad) the rotation and ``e`` (m) the
    translation left after fitting the hinge's coordinates (see :func:`coordinates_from_pose`);
    zero for a drawn configuration the hinge allows. ``poses`` defaults to the drawn one.
    """
    h = _hinge(model, hinge)
    return coordinates_from_pose(h.type, *hinge_relative_pose(model, h, poses))[1]


# --------------------------------------------------------------------------------------------------
# The tree
# --------------------------------------------------------------------------------------------------

def coordinate_slices(model: MultibodySystem, topology: Topology) -> dict[str, slice]:
    """Slice of each tree hinge's coordinates in the flat tree-coordinate vector."""
    out, k = {}, 0
    for name in topology.tree_hinges:
        n = _kind(model.hinge(name).type).dof
        out[name] = slice(k, k + n)
        k += n
    return out


def coordinate_labels(model: MultibodySystem, topology: Topology) -> tuple[str, ...]:
    """Names of the tree coordinates, ``'<hinge>.<coordinate>'``, in flat-vector order."""
    return tuple(f"{name}.{c}" for name in topology.tree_hinges
                 for c in _kind(model.hinge(name).type).coordinates)


def split_coordinates(model: MultibodySystem, topology: Topology, q: Coordinates) -> dict:
    """Tree coordinates by hinge name, from a flat vector (n,) or a mapping (returned as is)."""
    if isinstance(q, Mapping):
        return {name: np.asarray(q[name], dtype=float).reshape(-1) for name in topology.tree_hinges}
    q = np.asarray(q, dtype=float).reshape(-1)
    slices = coordinate_slices(model, topology)
    if q.size != topology.tree_coordinates:
        raise ValueError(f"expected {topology.tree_coordinates} tree coordinates, got {q.size}")
    return {name: q[s] for name, s in slices.items()}


def drawn_coordinates(model: MultibodySystem, topology: Topology) -> np.ndarray:
    """Tree coordinates (n,) measured from the drawn configuration (m, rad)."""
    poses = drawn_poses(model)
    parts = [hinge_coordinates(model, name, poses) for name in topology.tree_hinges]
    return np.concatenate(parts) if parts else np.zeros(0)


def initial_coordinates(model: MultibodySystem, topology: Topology) -> np.ndarray:
    """Tree coordinates (n,) at t = 0: each hinge's ``initial_coordinates``, else as drawn."""
    poses = drawn_poses(model)
    parts = []
    for name in topology.tree_hinges:
        h = model.hinge(name)
        parts.append(h.initial_coordinates if h.initial_coordinates is not None
                     else hinge_coordinates(model, h, poses))
    return np.concatenate(parts) if parts else np.zeros(0)


def forward_kinematics(model: MultibodySystem, topology: Topology,
                       q: Coordinates, drawn: Optional[Mapping[str, Pose]] = None
                       ) -> dict[str, Pose]:
    """Global pose of every part from the tree coordinates.

    Parameters
    ----------
    model : MultibodySystem
    topology : Topology
        From :func:`~.topology.analyse` of the same model.
    q : ndarray, shape (n,), or mapping of hinge name to ndarray (k,)
        Tree coordinates (m, rad), see the module docstring.
    drawn : mapping of part name to Pose, optional
        ``drawn_poses(model)`` when the caller has it already (not changed).

    Returns
    -------
    dict of str to Pose
        Pose of the base frame of the ground(s) (as modelled) and of every body. Bodies
        connected to the ground are placed by the tree hinges from the ground outwards; island
        bodies keep their drawn pose.
    """
    return _forward(model, topology, q, drawn, _tree_steps(model, topology))


def _tree_steps(model: MultibodySystem, topology: Topology) -> list:
    """What :func:`forward_kinematics` needs of each tree body, from the root outwards: (body,
    hinge name, hinge type, reversed, parent part, parent marker's and child marker's local
    rotation and position). The same for every ``q``: computed once for several calls."""
    parts = {p.name: p for p in list(model.grounds) + list(model.bodies)}
    steps = []
    for body in topology.bodies:
        h = model.hinge(topology.parent_hinge[body])
        rev = topology.element(h.name).reversed
        near, far = (h.input, h.output) if rev else (h.output, h.input)   # parent side first
        steps.append((body, h.name, _kind(h.type), rev, near.body,
                      _marker_local(model, near, parts), _marker_local(model, far, parts)))
    return steps


def _forward(model, topology, q, drawn, steps) -> dict[str, Pose]:
    """:func:`forward_kinematics` with the tree's steps given (:func:`_tree_steps`)."""
    qh = split_coordinates(model, topology, q)
    poses = drawn_poses(model) if drawn is None else dict(drawn)
    for body, name, kind, rev, parent, (Rn, pn), (Rm, pm) in steps:
        qk = qh[name]
        if qk.size != kind.dof:
            raise ValueError(f"hinge type {kind.name!r} has {kind.dof} coordinates, "
                             f"got {qk.size}")
        R_rel, d = _relative_pose(kind, qk.tolist())
        base = poses[parent]
        if not rev:                                     # parent holds the output marker
            Ro, po = base.R @ Rn, base.p + base.R @ pn
            Rc, pc = Ro @ R_rel, po + Ro @ d                # the child's (input) marker
        else:                                           # parent holds the input marker
            Ri, pi = base.R @ Rn, base.p + base.R @ pn
            Rc = Ri @ R_rel.T                               # the child's (output) marker
            pc = pi - Rc @ d
        R = Rc @ Rm.T
        poses[body] = Pose(R, pc - R @ pm)
    return poses


def motion_subspace(model: MultibodySystem, topology: Topology, hinge: str, q: Coordinates,
                    poses: Optional[Mapping[str, Pose]] = None, point=None) -> np.ndarray:
    """Motion subspace of a tree hinge in global axes, in the transfer direction.

    Parameters
    ----------
    model, topology
    hinge : str
        Name of a tree hinge.
    q : ndarray, shape (n,), or mapping
        Tree coordinates (m, rad); the hinge's own are used for its axes.
    poses : mapping of part name to Pose, optional
        ``forward_kinematics(model, topology, q)``, computed when not given.
    point : array_like, shape (3,), optional
        Global point (m) the linear part refers to. Default: the origin of the hinge's marker on
        its tip-side body (the input marker, or the output marker of a reversed hinge).

    Returns
    -------
    S : ndarray, shape (6, k)
        Twist ``[omega; v(point)]`` of the tip-side body relative to the root-side part, in global
        axes, per unit rate of each of the hinge's own coordinates (columns in the type's order):
        ``twist_tip - twist_root = S @ qd``. For a reversed hinge this is minus the hinge's own
        input-relative-to-output twist.
    """
    h = _hinge(model, hinge)
    qh = split_coordinates(model, topology, q)[h.name]
    poses = forward_kinematics(model, topology, q) if poses is None else poses
    return _motion_subspace(model, topology, h, qh, poses, point)


def _motion_subspace(model, topology, h, qh, poses, point):
    """:func:`motion_subspace` of the hinge ``h`` at its own coordinates ``qh``."""
    mo = marker_pose(model, h.output, poses)
    _, d = relative_pose(h.type, qh)
    p_in = mo.p + mo.R @ d
    B = np.zeros((6, 6))
    B[:3, :3] = B[3:, 3:] = mo.R
    S = B @ local_motion_subspace(h.type, qh)          # input w.r.t. output, about p_in
    if topology.element(h.name).reversed:
        S = -S                                          # output w.r.t. input, about p_in
        if point is None:
            point = mo.p
    return S if point is None else _shift(S, p_in, point)


def _shift(S, a, b):
    """Twists (6, k) about point a, moved to point b: v_b = v_a + omega x (b - a)."""
    S = S.copy()
    S[3:] -= skew(np.asarray(b, dtype=float) - np.asarray(a, dtype=float)) @ S[:3]
    return S


def twist_jacobian(model: MultibodySystem, topology: Topology, body: str, q: Coordinates,
                   poses: Optional[Mapping[str, Pose]] = None, point=None) -> np.ndarray:
    """Jacobian of a body's absolute twist with respect to the tree coordinate rates.

    Parameters
    ----------
    body : str
        A body (or the ground: all zeros).
    q : ndarray, shape (n,), or mapping
        Tree coordinates (m, rad).
    poses : mapping, optional
        ``forward_kinematics(model, topology, q)``, computed when not given.
    point : array_like, shape (3,), optional
        Global point (m) of the linear part; default the body's base-frame origin.

    Returns
    -------
    ndarray, shape (6, n)
        ``[omega; v(point)] = J @ qd`` in global axes (columns: :func:`coordinate_labels`).
        Zero for island bodies, which the tree does not move.
    """
    poses = forward_kinematics(model, topology, q) if poses is None else poses
    point = poses[body].p if point is None else np.asarray(point, dtype=float)
    slices = coordinate_slices(model, topology)
    own = split_coordinates(model, topology, q) if isinstance(q, Mapping) else None
    if own is None:             # the hinges' own coordinates sliced, not the table made again
        q = np.asarray(q, dtype=float).reshape(-1)
        if q.size != topology.tree_coordinates:
            raise ValueError(f"expected {topology.tree_coordinates} tree coordinates, "
                             f"got {q.size}")
    J = np.zeros((6, topology.tree_coordinates))
    while body in topology.parent_hinge:
        h = topology.parent_hinge[body]
        J[:, slices[h]] = _motion_subspace(model, topology, model.hinge(h),
                                           q[slices[h]] if own is None else own[h], poses,
                                           point)
        body = topology.element(h).output_part
    return J


def _cut_frames(model, topology, poses):
    """Per cut hinge: (hinge, output marker pose, input marker origin, fitted q, residual)."""
    out = []
    for name in topology.cut_hinges:
        h = model.hinge(name)
        mo = marker_pose(model, h.output, poses)
        mi = marker_pose(model, h.input, poses)
        qc, res = coordinates_from_pose(h.type, mo.R.T @ mi.R, mo.R.T @ (mi.p - mo.p))
        out.append((h, mo, mi.p, qc, res))
    return out


def loop_jacobian(model: MultibodySystem, topology: Topology, q: Coordinates,
                  poses: Optional[Mapping[str, Pose]] = None) -> tuple[np.ndarray, tuple]:
    """The loop-closure constraint Jacobian.

    Rows: for every cut hinge (``topology.cut_hinges`` order) its forbidden relative motions
    (:func:`constrained_directions` at its fitted coordinates, turned to global axes by its
    output marker); columns: the tree coordinate rates. A row times ``qd`` is the component of
    the twist of the cut hinge's input body relative to its output part, about the input
    marker's origin, along a forbidden direction: zero when the loop stays closed. It is the
    derivative of :func:`loop_residual`, exactly where that residual is zero.

    Returns
    -------
    J : ndarray, shape (m, n)
        m = ``topology.loop_constraints``, n = ``topology.tree_coordinates``; rad/rad, m/rad,
        m/m (translation rows times rotation columns in m, rotation rows times translation
        columns in rad/m).
    rows : tuple of str
        ``'<cut hinge>: rotation about x'`` ... one per row.
    """
    J, rows, _ = _loop_jacobian(model, topology, q, poses)
    return J, rows


def relative_twist_jacobian(model, topology, h, q, poses, point) -> np.ndarray:
    """(6, n): hinge ``h``'s relative twist (its input body's twist minus its output body's)
    about the global ``point``, in global axes, per tree coordinate rate (see
    :func:`twist_jacobian`; ``poses`` at ``q``)."""
    return (twist_jacobian(model, topology, h.input.body, q, poses, point)
            - twist_jacobian(model, topology, h.output.body, q, poses, point))


def _loop_jacobian(model, topology, q, poses):
    """:func:`loop_jacobian` and, per row, whether it is a translation."""
    poses = forward_kinematics(model, topology, q) if poses is None else poses
    blocks, rows, translation = [], [], []
    for h, mo, p, qc, _ in _cut_frames(model, topology, poses):
        C, labels = constrained_directions(h.type, qc)
        B = np.zeros((6, 6))
        B[:3, :3] = B[3:, 3:] = mo.R
        blocks.append((B @ C).T @ relative_twist_jacobian(model, topology, h, q, poses, p))
        rows += [f"{h.name}: {label}" for label in labels]
        translation += [label.startswith("translation") for label in labels]
    # couplers: a u1 + b u2 = 0 on two tree coordinates
    columns = {lab: i for i, lab in enumerate(coordinate_labels(model, topology))}
    for c in getattr(model, "couplers", ()):
        row = np.zeros((1, topology.tree_coordinates))
        for ref, v in zip((c.first, c.second), coupler_coefficients(c)):
            i = columns.get(f"{ref.hinge}.{ref.coordinate}")
            if i is not None:
                row[0, i] += v
        blocks.append(row)
        rows.append(f"{c.name}: coupler")
        translation.append(c.second.coordinate in _TRANSLATIONS)
    J = np.vstack(blocks) if blocks else np.zeros((0, topology.tree_coordinates))
    return J, tuple(rows), np.array(translation, dtype=bool)


def loop_residual(model: MultibodySystem, topology: Topology,
                  poses: Mapping[str, Pose]) -> np.ndarray:
    """Position-level loop-closure residual, shape (m,), rows as in :func:`loop_jacobian`.

    For every cut hinge, its residual (:func:`coordinates_from_pose`) projected on its forbidden
    directions (rad for rotations, m for translations); zero when all loops are closed. The
    couplers' rows are zero: they are measured from the start.
    """
    parts = []
    for h, _, _, qc, res in _cut_frames(model, topology, poses):
        C, _ = constrained_directions(h.type, qc)
        parts.append(C.T @ res)
    # couplers hold from the start (their rows are linear: a change a dq1 + b dq2 = 0)
    parts.append(np.zeros(len(getattr(model, "couplers", ()))))
    return np.concatenate(parts)


# --------------------------------------------------------------------------------------------------
# Mobility
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Mobility:
    """The mobility of a model at its drawn configuration.

    Attributes
    ----------
    dof : int
        Degrees of freedom: ``tree_coordinates - rank``.
    redundant : int
        Number of redundant (dependent) loop constraints: ``loop_constraints - rank``.
    rank : int
        Rank of the loop-closure Jacobian.
    redundant_constraints : tuple of str
        The dependent rows, e.g. ``'J4: rotation about x'``: removing these leaves the mobility
        unchanged (chosen by QR with column pivoting on the scaled ``jacobian.T``).
    dof_gruebler, tree_coordinates, loop_constraints : int
        The counts of the :class:`~.topology.Topology`.
    jacobian : ndarray, shape (m, n)
        The loop-closure Jacobian (SI units, see :func:`loop_jacobian`).
    rows : tuple of str
        Labels of its rows (cut hinge and direction).
    columns : tuple of str
        Labels of its columns (tree coordinates).
    singular_values : ndarray
        Of the Jacobian made dimensionless by ``length_scale`` (translation rows divided by it,
        translation columns multiplied by it), descending.
    length_scale : float
        Characteristic length of the model (m): the largest distance of a marker from the
        markers' centroid (1 when all coincide).
    drawn_residuals : Mapping[str, ndarray]
        For every tree and cut hinge, its :func:`hinge_residual` (6,) in the drawn configuration:
        how far the drawing is from satisfying it. The Jacobian is evaluated at the tree's
        configuration for the drawn coordinates, which equals the drawing when these are zero.
    """

    dof: int
    redundant: int
    rank: int
    redundant_constraints: tuple[str, ...]
    dof_gruebler: int
    tree_coordinates: int
    loop_constraints: int
    jacobian: np.ndarray
    rows: tuple[str, ...]
    columns: tuple[str, ...]
    singular_values: np.ndarray
    length_scale: float
    drawn_residuals: Mapping[str, np.ndarray]

    def __str__(self) -> str:
        s = (f"DOF {self.dof} (Gruebler-Kutzbach {self.dof_gruebler}); {self.tree_coordinates} "
             f"tree coordinates, {self.loop_constraints} loop constraints of rank {self.rank}")
        if self.redundant:
            s += f"; {self.redundant} redundant: " + ", ".join(self.redundant_constraints)
        return s


def _length_scale(model, poses):
    points = []
    for part in list(model.grounds) + list(model.bodies):
        base = poses[part.name]
        points.append(base.p)
        points += [base.p + base.R @ m.frame.position for m in part.markers]
    if not points:
        return 1.0
    P = np.array(points)
    L = float(np.max(np.linalg.norm(P - P.mean(axis=0), axis=1)))
    return L if L > 1e-12 else 1.0


def mobility(model: MultibodySystem, topology: Optional[Topology] = None,
             rtol: float = 1e-8) -> Mobility:
    """The real mobility of ``model``: tree coordinates minus the rank of the loop constraints.

    The loop-closure Jacobian (:func:`loop_jacobian`) is evaluated at the drawn configuration
    (the tree placed by the drawn coordinates), made dimensionless with the model's length
    scale, and its rank taken by SVD with the tolerance ``rtol * max(1, largest singular
    value)``. Bodies in islands are not counted.

    Parameters
    ----------
    model : MultibodySystem
    topology : Topology, optional
        ``analyse(model)`` when not given.
    rtol : float
        Relative rank tolerance.

    Returns
    -------
    Mobility
    """
    topology = analyse(model) if topology is None else topology
    q0 = drawn_coordinates(model, topology)
    poses = forward_kinematics(model, topology, q0)
    J, rows, translation = _loop_jacobian(model, topology, q0, poses)
    columns = coordinate_labels(model, topology)
    L = _length_scale(model, poses)
    row_scale = np.where(translation, 1.0 / L, 1.0)
    col_scale = np.array([L if c.rsplit(".", 1)[1] in _TRANSLATIONS else 1.0 for c in columns])
    with np.errstate(all="ignore"):
        Js = row_scale[:, None] * J * col_scale[None, :]
    if not np.all(np.isfinite(Js)):   # positions near 1e308: the SVD would not converge
        raise ModelError([Problem("MultibodySystem", "AbsolutePosition",
                                  "the loop-closure Jacobian at the drawn configuration is not "
                                  "finite: a position or angle of the model is too large")])
    sv = np.linalg.svd(Js, compute_uv=False) if Js.size else np.zeros(0)
    tol = rtol * max(1.0, float(sv[0]) if sv.size else 0.0)
    rank = int(np.sum(sv > tol))
    dependent: tuple[str, ...] = ()
    if J.shape[0] > rank:
        if rank == 0:
            dependent = rows
        else:
            _, perm = scipy.linalg.qr(Js.T, mode="r", pivoting=True)
            dependent = tuple(rows[i] for i in sorted(perm[rank:]))
    drawn = drawn_poses(model)
    residuals = {name: hinge_residual(model, name, drawn)
                 for name in topology.tree_hinges + topology.cut_hinges}
    return Mobility(
        dof=topology.tree_coordinates - rank,
        redundant=topology.loop_constraints - rank,
        rank=rank,
        redundant_constraints=dependent,
        dof_gruebler=topology.dof_gruebler,
        tree_coordinates=topology.tree_coordinates,
        loop_constraints=topology.loop_constraints,
        jacobian=J,
        rows=rows,
        columns=columns,
        singular_values=sv,
        length_scale=L,
        drawn_residuals=MappingProxyType(residuals),
    )


def length_scale(model) -> float:
    """Characteristic length of a model (m): the largest distance of a part origin or marker
    from their centroid in the drawn configuration (1 when they all coincide)."""
    points = []
    for part in list(model.grounds) + list(model.bodies):
        R = bryant_to_matrix(part.orientation)
        points.append(part.position)
        points += [part.position + R @ m.frame.position for m in part.markers]
    if not points:
        return 1.0
    P = np.array(points)
    L = float(np.max(np.linalg.norm(P - P.mean(axis=0), axis=1)))
    return L if L > 1e-12 else 1.0


def drawn_distance_of(model):
    """``f(force) -> float``: the distance (m) of a two-marker force's origins as drawn (the
    default free length of a spring-damper); the drawn poses are computed once, when first
    needed."""
    poses = []

    def distance(f) -> float:
        if not poses:
            poses.append(drawn_poses(model))
        return float(np.linalg.norm(marker_pose(model, f.input, poses[0]).p
                                    - marker_pose(model, f.output, poses[0]).p))
    return distance
