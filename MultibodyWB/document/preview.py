"""Kinematic preview: move a mechanism in the document by its hinge coordinates, loops closed.

:class:`KinematicPreview` exports the mechanism (:func:`MultibodyWB.objects.export.to_model`),
analyses its topology and starts from the drawn configuration (every tree coordinate as drawn,
:func:`~MultibodyWB.solver.analysis.kinematics.drawn_coordinates`). Setting a coordinate
(:meth:`KinematicPreview.set`) holds it at the new value, holds the other independent coordinates
(:meth:`~KinematicPreview.free_coordinates`) and the driven ones where they are, and closes the
loops with the solver's assembly (:func:`MultibodyWB.solver.analysis.assembly.assemble`, Newton from the
current pose, so the mechanism stays on its branch); the bodies' poses come from the solver's
forward kinematics and the solids and markers are moved by an
:class:`~MultibodyWB.document.animation.Animator`, as the player moves them: no recompute, no undo
step, and :meth:`~KinematicPreview.restore` puts every placement back and leaves the document
unmodified.

The model moved is the one a run integrates: the export resolved by the solver
(:func:`MultibodyWB.solver.analysis.start.resolve`), so a revolute hinge whose markers were picked
on the bores of stacked parts (apart along the pin) keeps that axial offset here as in the run:
the parts turn about their pins and stay on their layers. Which coordinates are driven is read
from the export as drawn (a motor's hinge stays free to drag).

Nothing here computes kinematics: the solver does. Units: the methods take and give FreeCAD's
internal units (mm for translations, deg for rotations); messages are written in the user's unit
schema.
"""

import re

import FreeCAD
import numpy as np

from ..objects import export
from .animation import Animator, PoseFrame
from ..objects.hinge import TYPE as HINGE
from ..objects.mechanism import members
from ..solver.api import (COORDINATE_KIND, ModelError, analyse, assemble, coordinate_labels,
                          drawn_coordinates, forward_kinematics, loop_jacobian, loop_residual,
                          mobility, resolve_model as resolve)

#: Relative tolerance of the rank decisions that choose the independent coordinates.
RANK_RTOL = 1e-8

#: Internal (FreeCAD) units per SI unit, by kind of coordinate.
_SCALE = {"translation": 1000.0, "rotation": 180.0 / np.pi}
_UNIT = {"translation": "mm", "rotation": "deg"}


def _kind(coordinate):
    return COORDINATE_KIND[coordinate]


def user_string(value, coordinate):
    """A coordinate value (mm or deg) as the user's unit schema writes it (``"30.00 °"``)."""
    return FreeCAD.Units.Quantity(f"{float(value)!r} {_UNIT[_kind(coordinate)]}").UserString


def _si_to_user(match):
    value, unit = float(match.group(1)), match.group(2)
    if unit == "m":
        return FreeCAD.Units.Quantity(f"{value * 1000.0!r} mm").UserString
    return FreeCAD.Units.Quantity(f"{np.degrees(value)!r} deg").UserString


def _in_user_units(text):
    """``text`` with the solver's ``0.0123 m`` and ``0.2 rad`` written in the user's units."""
    return re.sub(r"(-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?) (m|rad)\b", _si_to_user, text)


class KinematicPreview:
    """Move ``mechanism``'s solids by its hinge coordinates with its loops kept closed.

    Parameters
    ----------
    mechanism : Mechanism object
        Exported when the preview is made (raises :class:`~MultibodyWB.solver.model.ModelError`
        listing every problem when it cannot be): make the preview while the document shows the
        mechanism as drawn, and :meth:`restore` before editing it.

    Attributes
    ----------
    model : MultibodySystem
        The exported model as a run integrates it (SI; resolved by the solver, see the module
        doc).
    topology : Topology
    labels : tuple of str
        The tree coordinates, ``'<hinge label>.<coordinate>'``.
    mobility : Mobility
        Of the model at its drawn configuration (:func:`~MultibodyWB.solver.analysis.kinematics.mobility`).
    driven : tuple of str
        Labels of the coordinates that have drivers (held where they are drawn).
    q : ndarray
        The current tree coordinates (m, rad).
    """

    def __init__(self, mechanism):
        self.mechanism = mechanism
        drawn = export.to_model(mechanism)
        #: what the solver's resolve did that moves nothing (axial offsets kept), in words
        self.model, self.notes = resolve(drawn)
        self.topology = analyse(self.model)
        self.labels = coordinate_labels(self.model, self.topology)
        self._index = {lab: i for i, lab in enumerate(self.labels)}
        self.mobility = mobility(self.model, self.topology)
        self.q_drawn = drawn_coordinates(self.model, self.topology)
        self.q = self.q_drawn.copy()
        self.driven = tuple(f"{name}.{d.coordinate}" for name in self.topology.tree_hinges
                            for d in drawn.hinge(name).drivers)
        by_label = {h.Label: h for h in members(mechanism, HINGE)}
        self._hinge_objects = {lab: by_label[lab.rsplit(".", 1)[0]] for lab in self.labels}
        # the order in which coordinates are preferred as independent: hinges near the ground
        # first (breadth-first from the ground), each hinge's coordinates in order
        depth = {self.topology.parent_hinge[b]: k for k, b in enumerate(self.topology.bodies)}
        self._preference = sorted(self.labels, key=lambda lab: (
            depth.get(lab.rsplit(".", 1)[0], len(depth)), self._index[lab]))
        self._free = self._independent()
        self._bodies = [b.name for b in self.model.bodies]
        self._animator = Animator(mechanism, self._rest_results(), markers=True)
        self._quieted = []

    # -- what can be moved ----------------------------------------------------------------------
    def _label(self, hinge, coordinate):
        name = hinge if isinstance(hinge, str) else hinge.Label
        label = f"{name}.{coordinate}"
        if label not in self._index:
            raise KeyError(f"'{name}' has no tree coordinate '{coordinate}' (the coordinates "
                           f"are: {', '.join(self.labels)})")
        return label

    def _pair(self, label):
        return self._hinge_objects[label], label.rsplit(".", 1)[1]

    def hinges(self):
        """Every tree-hinge coordinate: a list of ``(hinge object, coordinate name)``."""
        return [self._pair(lab) for lab in self.labels]

    def free_coordinates(self):
        """An independent set of coordinates (``(hinge object, coordinate name)``), as many as
        the mechanism's mobility with its driven coordinates held: each can be set with the
        others of the set held and the loops closed by the remaining coordinates."""
        return [self._pair(lab) for lab in self._free]

    def driven_coordinates(self):
        """The coordinates that have drivers (``(hinge object, coordinate name)``): held where
        they are while the free ones move; they can be set too."""
        return [self._pair(lab) for lab in self.driven]

    def _scaled_jacobian(self, q):
        J, rows = loop_jacobian(self.model, self.topology, q)
        L = self.mobility.length_scale
        rs = np.array([1.0 / L if ": translation" in row else 1.0 for row in rows])
        cs = np.array([L if _kind(lab.rsplit(".", 1)[1]) == "translation" else 1.0
                       for lab in self.labels])
        return rs[:, None] * J * cs[None, :]

    def _independent(self, first=None, q=None):
        """Labels of an independent set: greedily, in order of preference (``first`` first),
        each coordinate that is not driven and whose holding leaves the rank of the loop
        Jacobian over the remaining coordinates unchanged."""
        q = self.q if q is None else q
        order = list(self._preference)
        if first is not None:
            order.remove(first)
            order.insert(0, first)
        candidates = [lab for lab in order if lab not in self.driven]
        if not self.topology.cut_hinges:
            return [lab for lab in self._preference if lab in candidates]
        Js = self._scaled_jacobian(q)

        def rank(labels):
            cols = [self._index[lab] for lab in labels]
            if not cols or Js.shape[0] == 0:
                return 0
            A = Js[:, cols]
            sv = np.linalg.svd(A, compute_uv=False)
            return int(np.sum(sv > RANK_RTOL * max(1.0, float(sv[0]))))

        full = rank(candidates)
        held = []
        for lab in candidates:
            rest = [c for c in candidates if c != lab and c not in held]
            if rank(rest) == full:
                held.append(lab)
        return [lab for lab in self._preference if lab in held]

    def drawing_gaps(self, tolerance_mm=0.01, tolerance_deg=0.01):
        """Tree hinges the drawing does not satisfy (their markers apart or turned more than
        allowed), in words with the user's units: the preview places the parts where those
        hinges put them, so they jump there at the first move. Empty when the drawing fits."""
        out = []
        for name in self.topology.tree_hinges:
            res = np.asarray(self.mobility.drawn_residuals.get(name, np.zeros(6)))
            angle = float(np.degrees(np.linalg.norm(res[:3])))
            gap = float(np.linalg.norm(res[3:]) * 1000.0)
            if gap > tolerance_mm or angle > tolerance_deg:
                out.append(f"'{name}' is drawn {user_string(gap, 'x')} and "
                           f"{user_string(angle, 'rz')} away from what the hinge allows")
        return out

    # -- values -------------------------------------------------------------------------------
    def value(self, hinge, coordinate):
        """The current value of a coordinate in FreeCAD's internal units (mm or deg)."""
        label = self._label(hinge, coordinate)
        return float(self.q[self._index[label]] * _SCALE[_kind(coordinate)])

    def drawn_value(self, hinge, coordinate):
        """The drawn value of a coordinate (mm or deg)."""
        label = self._label(hinge, coordinate)
        return float(self.q_drawn[self._index[label]] * _SCALE[_kind(coordinate)])

    def residual(self):
        """Largest loop-closure residual at the current coordinates (rad, or m over the
        model's length scale; 0 without loops)."""
        poses = forward_kinematics(self.model, self.topology, self.q)
        phi = loop_residual(self.model, self.topology, poses)
        return float(np.max(np.abs(phi), initial=0.0))

    def set(self, hinge, coordinate, value):
        """Prescribe a coordinate (mm or deg), close the loops and move the solids.

        The other independent coordinates and the driven ones are held where they are; the rest
        follow. Returns None when the loops closed, else a message in plain words (in the user's
        units, naming the hinges) and the solids stay where they were.
        """
        label = self._label(hinge, coordinate)
        target = float(value) / _SCALE[_kind(coordinate)]
        q0 = self.q.copy()
        q0[self._index[label]] = target
        if self.topology.cut_hinges:
            held = set(self.driven) | set(self._independent(first=label))
            held.add(label)
            try:
                q, _, _ = assemble(self.model, self.topology, q0, np.zeros_like(q0),
                                   driven=sorted(held), given=())
            except ModelError as exc:
                return self._message(label, value, exc)
        else:
            q = q0
        self.q = q
        self._move()
        return None

    def _message(self, label, value, exc):
        hinge, coordinate = label.rsplit(".", 1)
        lines = [f"'{hinge}' cannot be set to {coordinate} = {user_string(value, coordinate)}: "
                 "the mechanism cannot reach it with its loops closed."]
        for p in exc.problems:
            cut = p.element.partition("'")[2].rstrip("'")
            loop = next((lp for lp in self.topology.loops if lp.cut_hinge == cut), None)
            if loop is None:
                lines.append(_in_user_units(p.message))
                continue
            hinges = ", ".join(f"'{h}'" for h in list(loop.hinges) + [cut])
            gap = p.message.split("leaves ", 1)[-1].split(". Check", 1)[0]
            lines.append(f"The loop through the hinges {hinges} stays open by "
                         f"{_in_user_units(gap)}.")
        held = [lab for lab in self._independent(first=label) if lab != label]
        held += [lab for lab in self.driven if lab != label]
        if held:
            words = []
            for lab in held:
                name, c = lab.rsplit(".", 1)
                value = self.q[self._index[lab]] * _SCALE[_kind(c)]
                words.append(f"'{name}' {c} = {user_string(value, c)}")
            lines.append("Held where they are: " + ", ".join(words) + ".")
        return "\n".join(lines)

    # -- moving the solids --------------------------------------------------------------------
    def poses(self, q=None):
        """Base-frame poses of every part at coordinates ``q`` (default: the current ones),
        from the solver's forward kinematics: ``{name: Pose(R, p)}``, SI."""
        return forward_kinematics(self.model, self.topology, self.q if q is None else q)

    def _rest_results(self):
        poses = forward_kinematics(self.model, self.topology, self.q_drawn)
        return PoseFrame({b: poses[b] for b in self._bodies})

    def _quiet(self, on):
        """While the preview shows a pose, the moved objects' ``Placement`` changes do not mark
        the document modified (property status ``NoModify``; FreeCAD 0.20 cannot clear the
        mark afterwards, 1.0 can and the Animator does); off again when the drawn pose is back."""
        if on:
            for obj in self._animator.objects:
                try:
                    if "NoModify" not in obj.getPropertyStatus("Placement"):
                        obj.setPropertyStatus("Placement", "NoModify")
                        self._quieted.append(obj)
                except (AttributeError, ValueError, RuntimeError, ReferenceError):
                    continue
            return
        for obj in self._quieted:
            try:
                obj.setPropertyStatus("Placement", "-NoModify")
            except (AttributeError, ValueError, RuntimeError, ReferenceError):
                continue
        self._quieted = []

    def _move(self):
        if not self._quieted:
            self._quiet(True)
        poses = self.poses()
        moving = self._animator.bodies
        R = np.array([poses[b].R for b in moving]).reshape(-1, 3, 3)
        p = np.array([poses[b].p for b in moving]).reshape(-1, 3)
        self._animator.apply_poses(R, p)

    @property
    def moved(self):
        """True while the solids are not where they were drawn."""
        return self._animator.moved

    def reset(self):
        """Back to the drawn coordinates (the solids put back)."""
        self.q = self.q_drawn.copy()
        self._animator.restore()
        self._quiet(False)

    def restore(self):
        """Put every solid and marker back exactly where it was drawn (the document left as it
        was: no change, no undo step)."""
        self.reset()
