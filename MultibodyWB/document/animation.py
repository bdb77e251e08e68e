"""Play a run back on the solids: :class:`Animator` moves the bodies' solids and markers.

The results give, per output time, each body's base frame (position of its origin and rotation
matrix ``R11 .. R33``, global, SI). A solid of a body keeps its placement relative to the body's
base frame as drawn (the base frame is the placement of the body's first solid,
:func:`MultibodyWB.objects.body.solid_placement`, as at export), so at time ``t``::

    solid frame (t) = body pose (t) * (base frame at rest)^-1 * solid frame at rest

and likewise for the body's markers, whose triads then follow. Between output times positions
are interpolated linearly and orientations by normalised linear interpolation of quaternions
(``nlerp``, the quaternions made continuous over time); at output times the poses are the
results' own.

Placements are set on the objects directly: no recompute, no undo transaction (nothing is
recorded while no transaction is open, which is the case during playback), and :meth:`restore`
puts every original placement back and clears the touched state of what was not touched before
(so the document does not recompute mass properties at an animated position). Objects
setting their placement:

- ``Part::Feature`` and its kin, top level or inside a container (``App::Part``): the frame is
  ``container * Placement``; the container's part is measured once and kept;
- ``PartDesign::Body``: its ``Placement`` (its features follow);
- ``App::Link``: its ``Placement``, times the linked object's when ``LinkTransform`` is on.

Per-frame poses are numpy arrays made once in ``__init__``; :meth:`apply` composes every
object's placement in a few vector operations and then only sets the ``Placement`` properties.

Units: FreeCAD's (mm) for positions and placements; forces in N and torques in N m.
"""

from typing import NamedTuple

import FreeCAD
import numpy as np

from ..objects.body import TYPE as BODY
from ..objects.body import solid_placement
from ..objects.hinge import TYPE as HINGE
from ..objects.marker import TYPE as MARKER
from ..objects.marker import marker_frame
from ..objects.mechanism import members

MM = 1000.0     #: mm per m
_IDENTITY_TOL = 1e-12


# --------------------------------------------------------------------------------------------------
# Quaternions (x, y, z, w), as FreeCAD.Rotation.Q, on arrays
# --------------------------------------------------------------------------------------------------

def matrix_quaternions(R):
    """Unit quaternions (n, 4), (x, y, z, w), of rotation matrices R (n, 3, 3)."""
    R = np.asarray(R, dtype=float).reshape(-1, 3, 3)
    n = R.shape[0]
    m00, m11, m22 = R[:, 0, 0], R[:, 1, 1], R[:, 2, 2]
    trace = m00 + m11 + m22
    q = np.empty((n, 4))
    case = np.argmax(np.stack([trace, m00, m11, m22], axis=1), axis=1)
    for k in range(4):
        i = case == k
        if not np.any(i):
            continue
        r = R[i]
        if k == 0:
            s = 2.0 * np.sqrt(1.0 + trace[i])
            q[i] = np.stack([(r[:, 2, 1] - r[:, 1, 2]) / s, (r[:, 0, 2] - r[:, 2, 0]) / s,
                             (r[:, 1, 0] - r[:, 0, 1]) / s, 0.25 * s], axis=1)
        elif k == 1:
            s = 2.0 * np.sqrt(1.0 + m00[i] - m11[i] - m22[i])
            q[i] = np.stack([0.25 * s, (r[:, 0, 1] + r[:, 1, 0]) / s,
                             (r[:, 0, 2] + r[:, 2, 0]) / s, (r[:, 2, 1] - r[:, 1, 2]) / s], axis=1)
        elif k == 2:
            s = 2.0 * np.sqrt(1.0 + m11[i] - m00[i] - m22[i])
            q[i] = np.stack([(r[:, 0, 1] + r[:, 1, 0]) / s, 0.25 * s,
                             (r[:, 1, 2] + r[:, 2, 1]) / s, (r[:, 0, 2] - r[:, 2, 0]) / s], axis=1)
        else:
            s = 2.0 * np.sqrt(1.0 + m22[i] - m00[i] - m11[i])
            q[i] = np.stack([(r[:, 0, 2] + r[:, 2, 0]) / s, (r[:, 1, 2] + r[:, 2, 1]) / s,
                             0.25 * s, (r[:, 1, 0] - r[:, 0, 1]) / s], axis=1)
    return q / np.linalg.norm(q, axis=1)[:, None]


def quaternion_product(a, b):
    """Row-wise products ``a b`` of quaternions (n, 4), (x, y, z, w)."""
    av, aw = a[..., :3], a[..., 3:]
    bv, bw = b[..., :3], b[..., 3:]
    return np.concatenate([aw * bv + bw * av + np.cross(av, bv),
                           aw * bw - np.sum(av * bv, axis=-1, keepdims=True)], axis=-1)


def quaternion_rotate(q, v):
    """Vectors v (n, 3) rotated by unit quaternions q (n, 4)."""
    u, w = q[..., :3], q[..., 3:]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def continuous(q):
    """Quaternions (n_times, ..., 4) with signs flipped so that neighbours in time agree."""
    q = np.array(q, dtype=float)
    for i in range(1, q.shape[0]):
        flip = np.sum(q[i] * q[i - 1], axis=-1) < 0.0
        q[i][flip] *= -1.0
    return q


def _arrays(placement):
    """(quaternion (4,), position (3,)) of a FreeCAD.Placement."""
    return np.array(placement.Rotation.Q, dtype=float), np.array(placement.Base, dtype=float)


def _is_identity(placement):
    q = placement.Rotation.Q
    return (placement.Base.Length <= _IDENTITY_TOL
            and max(abs(q[0]), abs(q[1]), abs(q[2])) <= _IDENTITY_TOL)


# --------------------------------------------------------------------------------------------------
# The animator
# --------------------------------------------------------------------------------------------------

class HingeLoad(NamedTuple):
    """The reaction of a hinge on its input body at one time (:meth:`Animator.hinge_loads`).

    ``point``: the input marker's origin, global, mm, shape (3,); ``force`` (N) and ``torque``
    (N m, about ``point``): global components, shape (3,).
    """

    hinge: str
    point: np.ndarray
    force: np.ndarray
    torque: np.ndarray


def _frame_parts(obj, frame):
    """(left, right) placements with ``frame == left * obj.Placement * right`` for ``obj``.

    ``right`` is the linked object's placement for an ``App::Link`` that applies it
    (``LinkTransform``), else identity; ``left`` (a container's placement, identity for a
    top-level object) is what remains. Identities within round-off are exact identities.
    """
    right = FreeCAD.Placement()
    if obj.TypeId == "App::Link" and getattr(obj, "LinkTransform", False):
        linked = obj.getLinkedObject(True)
        if linked is not None and linked != obj and hasattr(linked, "Placement"):
            right = linked.Placement
    left = frame.multiply(right.inverse()).multiply(obj.Placement.inverse())
    if _is_identity(left):
        left = FreeCAD.Placement()
    if _is_identity(right):
        right = FreeCAD.Placement()
    return left, right


class PoseFrame:
    """One frame of body poses in the form :class:`Animator` reads results: shows a computed
    configuration (the corrected start of a run) in the 3D view.

    Parameters
    ----------
    poses : dict
        Body name (the Body's Label) -> ``(R (3, 3), p (3,) in m)``, base frames, global.
    """

    def __init__(self, poses):
        self._poses = {name: (np.asarray(R, dtype=float), np.asarray(p, dtype=float))
                       for name, (R, p) in poses.items()}
        self.bodies = list(self._poses)
        self.hinges = []
        self.time = np.zeros(1)

    def position(self, body):
        return self._poses[body][1].reshape(1, 3)

    def rotation(self, body):
        return self._poses[body][0].reshape(1, 3, 3)


class Animator:
    """Move the solids and markers of ``mechanism`` to the poses of ``results``.

    Parameters
    ----------
    mechanism : Mechanism object
        Its Body objects are matched to the results' bodies by Label (the model's names, see
        :mod:`MultibodyWB.objects.export`); the ground does not move.
    results : Results
        A run of the mechanism (e.g. :func:`MultibodyWB.objects.result.load`).
    markers : bool
        Move the bodies' markers too (their triads, and in the GUI the hinge and force symbols
        drawn from them, follow); False moves the solids only (cheaper in the GUI, where every
        marker move redraws the symbols that use it).

    Attributes
    ----------
    times : ndarray (n_frames,)
        Output times (s).
    frame_count : int
    bodies : list of str
        Labels of the bodies that move (in the results and in the mechanism).
    unmatched : list of str
        Bodies of the results that the mechanism has no longer (renamed or deleted): not moved.
    objects : list
        The document objects :meth:`apply` sets (solids, then markers, body by body).

    The rest frames are taken when the Animator is made: make it while the document shows the
    mechanism as drawn (not while another Animator has moved it), and :meth:`restore` before
    editing the model or recomputing. Also a context manager (``with Animator(...) as a:``
    restores at the end).
    """

    def __init__(self, mechanism, results, markers=True):
        self.mechanism = mechanism
        self.results = results
        self.document = mechanism.Document
        self.times = np.array(results.time, dtype=float)
        self.frame_count = int(self.times.size)
        if self.frame_count == 0:
            raise ValueError("the results have no output times")
        bodies = members(mechanism, BODY)
        ground = mechanism.Ground
        by_label = {b.Label: b for b in bodies}
        self.unmatched = [n for n in results.bodies if n not in by_label]
        moving = [by_label[n] for n in results.bodies if n in by_label and by_label[n] != ground]
        self.bodies = [b.Label for b in moving]
        self._moving = moving
        self._index = {label: k for k, label in enumerate(self.bodies)}
        #: fixed bodies (the ground, and bodies the results do not move): label -> base frame
        self._fixed = {b.Label: self._rest_base(b) for b in bodies if b.Label not in self._index}

        # -- base-frame poses per frame: positions (mm) and quaternions, (n_frames, n_bodies, .)
        nf, nb = self.frame_count, len(moving)
        self._rot = np.empty((nf, nb, 3, 3))
        self._pos = np.empty((nf, nb, 3))
        for k, label in enumerate(self.bodies):
            self._rot[:, k] = results.rotation(label)
            self._pos[:, k] = results.position(label) * MM
        self._quat = continuous(matrix_quaternions(self._rot.reshape(-1, 3, 3))
                                .reshape(nf, nb, 4)) if nb else np.zeros((nf, 0, 4))

        # -- the objects that move, each as  Placement = left^-1 * pose(body) * right
        objects, seen, body_of, left_q, left_p, right_q, right_p = [], set(), [], [], [], [], []
        self._markers = {}                      # marker Name -> (body key, frame in base frame)
        marker_objs = [m for m in members(mechanism, MARKER) if m.Body is not None]
        for k, body in enumerate(moving):
            base = self._rest_base(body)
            inverse = base.inverse()
            entries = []
            for solid in body.Solids:
                frame = solid_placement(solid)
                left, right = _frame_parts(solid, frame)
                # Placement = left^-1 * [pose * base^-1 * frame] * right^-1
                entries.append((solid, left.inverse(),
                                inverse.multiply(frame).multiply(right.inverse())))
            for marker in marker_objs if markers else ():
                if marker.Body == body:
                    entries.append((marker, FreeCAD.Placement(),
                                    inverse.multiply(marker.Placement)))
            for obj, lft, rgt in entries:
                if obj.Name in seen:
                    continue
                seen.add(obj.Name)
                objects.append(obj)
                body_of.append(k)
                q, p = _arrays(lft)
                left_q.append(q)
                left_p.append(p)
                q, p = _arrays(rgt)
                right_q.append(q)
                right_p.append(p)
        for marker in marker_objs:
            key = marker.Body.Label
            if key in self._index or key in self._fixed:
                self._markers[marker.Name] = (key, marker_frame(marker))
        self.objects = objects
        self._body_of = np.array(body_of, dtype=np.int64)
        self._left_q = np.array(left_q).reshape(-1, 4)
        self._left_p = np.array(left_p).reshape(-1, 3)
        self._right_q = np.array(right_q).reshape(-1, 4)
        self._right_p = np.array(right_p).reshape(-1, 3)
        self._original = [obj.Placement for obj in objects]
        self._touched = ["Touched" in obj.State for obj in objects]
        self._gui_modified = self._gui_document_modified()
        self._quieted = []                      # (object, property) marked NoModify by _set
        self._hinges = self._hinge_table()
        self._last = None                       # what apply set last (frame or time)
        self.moved = False

    def moving_bodies(self):
        """Labels of the bodies the run moves (as :attr:`bodies`)."""
        return list(self.bodies)

    def body_objects(self):
        """The Body objects the run moves, in the results' order."""
        return list(self._moving)

    @staticmethod
    def _rest_base(body):
        return solid_placement(body.Solids[0]) if body.Solids else body.BasePlacement

    # -- time ---------------------------------------------------------------------------------
    def frame_index(self, t):
        """Index of the last output time at or before ``t`` (clamped to the run)."""
        i = int(np.searchsorted(self.times, t, side="right")) - 1
        return min(max(i, 0), self.frame_count - 1)

    def _weights(self, t):
        """(i, w): the pose at t is (1 - w) frame i + w frame i + 1 (w = 0 at output times)."""
        t = float(t)
        i = self.frame_index(t)
        if i >= self.frame_count - 1 or t <= self.times[i]:
            return i, 0.0
        w = (t - self.times[i]) / (self.times[i + 1] - self.times[i])
        return i, min(max(w, 0.0), 1.0)

    def _poses(self, t):
        """Base-frame quaternions (n_bodies, 4) and positions (n_bodies, 3, mm) at time t."""
        i, w = self._weights(t)
        if w == 0.0:
            return self._quat[i], self._pos[i]
        q = (1.0 - w) * self._quat[i] + w * self._quat[i + 1]
        q /= np.linalg.norm(q, axis=1)[:, None]
        return q, (1.0 - w) * self._pos[i] + w * self._pos[i + 1]

    def interpolate(self, values, t):
        """A result's ``values`` (n_frames, ...) at time ``t``: linear between output times, the
        frame's own values at an output time."""
        i, w = self._weights(t)
        if w == 0.0:
            return values[i]
        return (1.0 - w) * values[i] + w * values[i + 1]

    # -- poses --------------------------------------------------------------------------------
    def pose(self, body_label, t):
        """The base frame of body ``body_label`` at time ``t`` (a FreeCAD.Placement, mm).

        The ground (and any body the run does not move) gives its base frame at rest.
        """
        if body_label in self._fixed:
            return FreeCAD.Placement(self._fixed[body_label])
        k = self._body_key(body_label)
        q, p = self._poses(t)
        return FreeCAD.Placement(FreeCAD.Vector(*p[k].tolist()), FreeCAD.Rotation(*q[k].tolist()))

    def _body_key(self, body_label):
        try:
            return self._index[body_label]
        except KeyError:
            raise KeyError(f"no body '{body_label}' in the run; bodies: "
                           f"{', '.join(self.bodies + list(self._fixed))}") from None

    def point_trace(self, body_label, local_point_mm):
        """Global positions (n_frames, 3), mm, of a point fixed in a body over every frame.

        ``local_point_mm``: its coordinates in the body's base frame (mm), shape (3,).
        """
        p = np.asarray(local_point_mm, dtype=float).reshape(3)
        if body_label in self._fixed:
            g = self._fixed[body_label].multVec(FreeCAD.Vector(*p.tolist()))
            return np.tile(np.array(g), (self.frame_count, 1))
        k = self._body_key(body_label)
        return self._pos[:, k] + self._rot[:, k] @ p

    # -- moving the objects -------------------------------------------------------------------
    def apply(self, t):
        """Put every moving solid and marker where the run has it at time ``t`` (s)."""
        i, w = self._weights(t)
        key = (i, w)
        if key == self._last:
            return
        q, p = self._poses(t)
        self._set(q, p)
        self._last = key

    def apply_frame(self, i):
        """Put every moving solid and marker where the run has it at output time ``i``."""
        i = int(i)
        if not -self.frame_count <= i < self.frame_count:
            raise IndexError(f"frame {i} of {self.frame_count}")
        i %= self.frame_count
        key = (i, 0.0)
        if key == self._last:
            return
        self._set(self._quat[i], self._pos[i])
        self._last = key

    def apply_poses(self, rotations, positions):
        """Put the moving bodies' base frames at the given poses (not from the results).

        ``rotations`` (n_bodies, 3, 3) and ``positions`` (n_bodies, 3, m, global), in the order
        of :attr:`bodies`: e.g. a kinematic preview (:mod:`MultibodyWB.document.preview`) moves the
        solids and markers this way, and :meth:`restore` puts them back as for a run.
        """
        R = np.asarray(rotations, dtype=float).reshape(-1, 3, 3)
        p = np.asarray(positions, dtype=float).reshape(-1, 3) * MM
        if R.shape[0] != len(self.bodies) or p.shape[0] != len(self.bodies):
            raise ValueError(f"expected poses of {len(self.bodies)} bodies")
        self._set(matrix_quaternions(R) if len(self.bodies) else np.zeros((0, 4)), p)
        self._last = None

    def object_poses(self, t):
        """``(quaternions (n, 4) x y z w, positions (n, 3) mm)``: the ``Placement`` each of
        :attr:`objects` has at time ``t``, without setting anything (the player moves the 3D
        view with them while playing)."""
        q, p = self._poses(t)
        return self._compose(q, p)

    def _compose(self, q, p):
        b = self._body_of
        qb, pb = q[b], p[b]
        # pose * right, then left * (...)
        qa = quaternion_product(qb, self._right_q)
        pa = pb + quaternion_rotate(qb, self._right_p)
        qo = quaternion_product(self._left_q, qa)
        po = self._left_p + quaternion_rotate(self._left_q, pa)
        return qo, po

    def _set(self, q, p):
        if not self.objects:
            return
        if not self.moved:
            self._quiet()
        qo, po = self._compose(q, p)
        Placement, Vector, Rotation = FreeCAD.Placement, FreeCAD.Vector, FreeCAD.Rotation
        for obj, (x, y, z), (qx, qy, qz, qw) in zip(self.objects, po.tolist(), qo.tolist()):
            obj.Placement = Placement(Vector(x, y, z), Rotation(qx, qy, qz, qw))
        self.moved = True

    def restore(self):
        """Put every original placement back; leave untouched what was untouched before."""
        for obj, placement, touched in zip(self.objects, self._original, self._touched):
            try:
                if obj.Placement != placement:
                    obj.Placement = placement
                if not touched:
                    obj.purgeTouched()
            except (ReferenceError, RuntimeError):   # deleted meanwhile
                continue
        self._last = None
        self.moved = False
        self._unquiet()
        if self._gui_modified is False:
            self._set_gui_document_modified(False)

    #: Properties a played frame changes (a solid's shape follows its placement).
    MOVED_PROPERTIES = ("Placement", "Shape")

    def _quiet(self):
        """Played frames do not mark the document modified: the moved objects' placements
        (and shapes) get FreeCAD's ``NoModify`` status until :meth:`restore` (FreeCAD 0.20 has
        no way to clear the mark afterwards)."""
        for obj in self.objects:
            for prop in self.MOVED_PROPERTIES:
                try:
                    if prop in obj.PropertiesList and \
                            "NoModify" not in obj.getPropertyStatus(prop):
                        obj.setPropertyStatus(prop, "NoModify")
                        self._quieted.append((obj, prop))
                except (AttributeError, ValueError, ReferenceError, RuntimeError):
                    continue                 # no such status in this FreeCAD, or object gone

    def _unquiet(self):
        for obj, prop in self._quieted:
            try:
                obj.setPropertyStatus(prop, "-NoModify")
            except (AttributeError, ValueError, ReferenceError, RuntimeError):
                continue
        self._quieted = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.restore()
        return False

    # -- the document's "modified" mark in the GUI --------------------------------------------
    def _gui_document(self):
        if not FreeCAD.GuiUp:
            return None
        import FreeCADGui
        return FreeCADGui.getDocument(self.document.Name)

    def _gui_document_modified(self):
        gui = self._gui_document()
        return None if gui is None else bool(gui.Modified)

    def _set_gui_document_modified(self, value):
        gui = self._gui_document()
        if gui is None:
            return
        try:
            gui.Modified = value
        except AttributeError:      # FreeCAD 0.20: read-only; the mark stays as it is
            pass

    # -- hinge loads --------------------------------------------------------------------------
    def _hinge_table(self):
        """Hinges with reaction columns whose input marker is known: label, marker Name,
        forces and torques (n_frames, n_hinges, 3)."""
        res = self.results
        hinge_objects = {h.Label: h for h in members(self.mechanism, HINGE)}
        rows = []
        for prefix in res.hinges:
            label = prefix[len("hinge:"):] if prefix.startswith("hinge:") else prefix
            hinge = hinge_objects.get(label)
            if hinge is None or hinge.InputMarker is None or \
                    hinge.InputMarker.Name not in self._markers or f"{prefix}.Fx" not in res:
                continue
            rows.append((label, hinge.InputMarker.Name, res.vector(f"{prefix}.F"),
                         res.vector(f"{prefix}.T")))
        labels = [r[0] for r in rows]
        markers = [r[1] for r in rows]
        nf = self.frame_count
        forces = np.stack([r[2] for r in rows], axis=1) if rows else np.zeros((nf, 0, 3))
        torques = np.stack([r[3] for r in rows], axis=1) if rows else np.zeros((nf, 0, 3))
        return labels, markers, forces, torques

    @property
    def hinge_labels(self):
        """Labels of the hinges :meth:`hinge_loads` reports, in the results' order."""
        return list(self._hinges[0])

    def marker_placement(self, marker, t):
        """The global placement (mm) of a marker of the mechanism at time ``t``."""
        name = marker if isinstance(marker, str) else marker.Name
        key, local = self._markers[name]
        return self.pose(key, t).multiply(local)

    def hinge_loads(self, t):
        """The hinges' reactions on their input bodies at time ``t``: a list of
        :class:`HingeLoad` ``(hinge, point, force, torque)``; ``point`` the input marker's origin
        (global, mm), ``force`` N and ``torque`` N m (about ``point``), global components.

        Loads are interpolated linearly between output times.
        """
        labels, markers, forces, torques = self._hinges
        i, w = self._weights(t)
        if w == 0.0:
            f, m = forces[i], torques[i]
        else:
            f = (1.0 - w) * forces[i] + w * forces[i + 1]
            m = (1.0 - w) * torques[i] + w * torques[i + 1]
        out = []
        for j, (label, marker) in enumerate(zip(labels, markers)):
            point = np.array(self.marker_placement(marker, t).Base)
            out.append(HingeLoad(label, point, f[j].copy(), m[j].copy()))
        return out
