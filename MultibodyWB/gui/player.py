"""The player: a task panel that moves the solids through a stored run.

Play, pause, step, a scrub slider over the output frames, the speed (simulated seconds per second
of wall time), loop; optional arrows scaled by magnitude of the hinges' reaction forces and of the
contact forces, and traces of chosen markers; export of the playback to GIF or MP4, rendered by
FreeCAD's own 3D view; the plots of the run, whose time cursor follows the player.

Force arrows start at the point of application and point along the force on the input body;
their length is proportional to the magnitude, one scale for every arrow shown (the longest
force of the run among the kinds shown is a quarter of the model's size), stated by a legend in
the panel in the user's units ("Arrow scale: 12.5 mm = 20 N"). Contact arrows: one per contact
of the run (``<Contact>.Fx Fy Fz`` at ``<Contact>.x y z``), hidden while its normal force
``Fn`` is 0 (not touching). Couplers: their loads are written under the time; a gear between two
revolute (or cylindrical) hinges on the same body, parallel axes, also gets the tooth force as an
arrow at the pitch point (on the line between the axes, where both wheels' speeds agree:
``r1 / (r1 + r2)`` of the way for an external pair), tangential (no pressure angle), on the first
hinge's input body, of size ``|T1| / r1``.

The solids' placements come from the results through
:class:`MultibodyWB.document.animation.Animator`; closing the player puts every original placement
back. Playing changes no undo history.

The player watches its document (:class:`.watch.DocumentWatch`): saving writes the placements
as drawn (the player puts them back for the save; the view keeps the time shown), and the
player closes itself when the document is closed or when the run, the mechanism or a solid it
moves is deleted (also by Undo).
"""

from __future__ import annotations

import html
import math
import os
import time
from typing import NamedTuple

import FreeCAD
import FreeCADGui
import numpy as np

from ..document import runs
from ..document.animation import Animator
from ..objects import units
from .symbols import resume_symbols, show_marker_axes, suspend_symbols
from .view_motion import ViewMotion
from .qt import QtCore, QtWidgets, compact
from .watch import DocumentWatch, TaskPanel, later, track

#: Object name of the player's widget.
PANEL_NAME = "MultibodyPlayer"
#: Playback speeds offered (simulated seconds per wall-clock second).
SPEEDS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)
#: Timer interval while playing (ms): about 60 ticks a second, each drawing one frame.
TICK_MS = 16
#: Longest playback the default speed aims at (s of wall time).
DEFAULT_PLAY_SECONDS = 4.0

current = None
track(lambda: current)


def default_speed(duration):
    """The largest offered speed at which ``duration`` plays in at least DEFAULT_PLAY_SECONDS
    (and not faster than real time)."""
    fitting = [s for s in SPEEDS if s <= 1.0 and duration / s >= DEFAULT_PLAY_SECONDS - 1e-12]
    return max(fitting) if fitting else SPEEDS[0]


def force_columns(results, hinge):
    """The names of the reaction-force columns of ``hinge`` (``hinge:`` prefixed when a body
    has the same name)."""
    for prefix in (hinge, f"hinge:{hinge}"):
        names = [f"{prefix}.F{a}" for a in "xyz"]
        if all(n in results for n in names):
            return names
    return None


#: Columns a contact of a run has for its arrow (``<Contact>.<quantity>``).
CONTACT_QUANTITIES = ("Fx", "Fy", "Fz", "x", "y", "z", "Fn", "depth")


def contact_columns(results):
    """Column prefixes of the contacts of a run (those with every column of
    :data:`CONTACT_QUANTITIES`), in column order."""
    return [name[:-3] for name in results.names if name.endswith(".Fn") and
            all(f"{name[:-3]}.{q}" in results for q in CONTACT_QUANTITIES)]


def coupler_columns(results):
    """The couplers of a run: ``{prefix: (first load column, second load column)}``
    (``<Coupler>.T1`` or ``.F1``, ``.T2`` or ``.F2``), in column order."""
    out = {}
    for name in results.names:
        prefix, _, quantity = name.rpartition(".")
        if quantity not in ("angle_error", "gap_error"):
            continue
        loads = [next((f"{prefix}.{q}{k}" for q in "TF" if f"{prefix}.{q}{k}" in results), None)
                 for k in (1, 2)]
        if None not in loads:
            out[prefix] = tuple(loads)
    return out


def quantity_text(value, si, reference=None):
    """``value`` (in the SI unit ``si``: "N", "N m", "m") as every view shows it
    (:func:`MultibodyWB.objects.units.si_text`), four significant digits: "12.5 N", "350 mm",
    "0.5 N·m" (a torque in N·m, never J or eV); a value below 1e-9 of ``reference`` (the
    largest of the run) is round-off: "0 N·m"."""
    return units.si_text(value, si, 4, reference)


def nice_below(x):
    """The largest 1, 2 or 5 times a power of ten that is at most ``x`` (> 0)."""
    power = 10.0 ** math.floor(math.log10(x))
    for m in (5.0, 2.0, 1.0):
        if m * power <= x * (1.0 + 1e-9):
            return m * power
    return power / 2.0


class GearMesh(NamedTuple):
    """A gear coupler whose pitch point the player finds: the hinges' input markers (Names, on
    the rotation axes) and the ratio (rate of the second = ratio x rate of the first)."""

    first_marker: str
    second_marker: str
    ratio: float


class CouplerShown(NamedTuple):
    """A coupler of the run: its column prefix, its two load columns, the hinges' labels
    (or "first", "second"), and its :class:`GearMesh` or None."""

    label: str
    first: str
    second: str
    hinges: tuple
    mesh: object


def gear_mesh(coupler):
    """The :class:`GearMesh` of a Coupler object, or None: it must be a gear between the ``rz``
    of two revolute or cylindrical hinges whose output markers are on the same body."""
    if coupler is None or coupler.CouplerType != "gear" or \
            (coupler.FirstCoordinate, coupler.SecondCoordinate) != ("rz", "rz"):
        return None
    hinges = (coupler.FirstHinge, coupler.SecondHinge)
    if any(h is None or getattr(h, "HingeType", None) not in ("revolute", "cylindrical")
           or h.InputMarker is None or h.OutputMarker is None for h in hinges):
        return None
    if hinges[0].OutputMarker.Body != hinges[1].OutputMarker.Body:
        return None
    return GearMesh(hinges[0].InputMarker.Name, hinges[1].InputMarker.Name,
                    float(coupler.Ratio))


class PlayerPanel(TaskPanel):
    """The player's task panel for one mechanism and one stored run."""

    def __init__(self, mechanism, result_obj, view=None):
        global current
        self.mechanism = mechanism
        self.doc = mechanism.Document
        self.doc_name = self.doc.Name
        self.document_gone = False
        self.view = view or FreeCADGui.getDocument(self.doc.Name).ActiveView
        self.result_obj = result_obj
        self.results = runs.load(result_obj)
        self.animator = Animator(mechanism, self.results)
        suspend_symbols(self.doc)       # hinge symbols are not rebuilt at every frame
        self.motion = ViewMotion(self.animator)
        self._view_ahead = False        # the view shows another time than the document
        self.times = np.asarray(self.animator.times, dtype=float)
        self.time_decimals = time_decimals(self.times)
        self.t = float(self.times[0])
        self.playing = False
        self.last_tick = 0.0
        self.frames_drawn = 0
        self.plot_panel = None
        self._markers = self._trace_candidates()
        self.overlay = None
        self._peaks = {"reactions": 0.0, "contacts": 0.0}
        self.model_size = 100.0
        self.arrow_scale = 0.0
        self.arrow_radius = 0.6
        self.legend_force = None        # the legend's force (N)
        self._setup_contacts()
        self.form = self._widget()
        self.timer = QtCore.QTimer()
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self.tick)
        self._setup_overlay()
        show_marker_axes(self.doc, False)
        self.set_time(self.t)
        #: Names of the objects whose deletion closes the player.
        self._needed = {o.Name for o in self.animator.objects} | {mechanism.Name,
                                                                   result_obj.Name}
        self.watch = DocumentWatch(self.doc, self)
        # FreeCAD may remove the dialog without calling reject() (another dialog asked for the
        # task panel): its widgets are then destroyed, and the player cleans up
        self.widgets_gone = False
        self.form.destroyed.connect(self._form_destroyed)
        current = self

    # -- widgets ---------------------------------------------------------------------------------
    def _widget(self):
        w = QtWidgets.QWidget()
        w.setObjectName(PANEL_NAME)
        w.setWindowTitle("Multibody player")
        layout = QtWidgets.QVBoxLayout(w)
        self.run_label = QtWidgets.QLabel()
        self.run_label.setWordWrap(True)
        layout.addWidget(self.run_label)
        self.time_label = QtWidgets.QLabel()
        self.time_label.setObjectName("Time")
        self.time_label.setWordWrap(True)
        layout.addWidget(self.time_label)
        self.coupler_label = QtWidgets.QLabel()
        self.coupler_label.setObjectName("CouplerLoads")
        self.coupler_label.setWordWrap(True)
        self.coupler_label.setToolTip("The couplers' loads on their coordinates at the time "
                                      "shown (gears on parallel axes: the tooth force at the "
                                      "pitch point, |T1| / r1)")
        self.coupler_label.setVisible(False)
        layout.addWidget(self.coupler_label)
        self.slider = QtWidgets.QSlider(QtCore.Qt.Horizontal)
        self.slider.setObjectName("Slider")
        self.slider.setRange(0, len(self.times) - 1)
        self.slider.setToolTip("Scrub through the output frames")
        self.slider.valueChanged.connect(self._slider_moved)
        layout.addWidget(self.slider)
        row = QtWidgets.QHBoxLayout()
        self.buttons = {}
        style = w.style()
        icon = QtWidgets.QStyle
        for name, text, tip, slot, pixmap in (
                ("Start", "|<", "First frame", lambda: self.set_frame(0),
                 icon.SP_MediaSkipBackward),
                ("Back", "<", "One frame back", lambda: self.step(-1),
                 icon.SP_MediaSeekBackward),
                ("Play", "Play", "Play / pause", self.toggle, icon.SP_MediaPlay),
                ("Forward", ">", "One frame forward", lambda: self.step(1),
                 icon.SP_MediaSeekForward),
                ("End", ">|", "Last frame", lambda: self.set_frame(len(self.times) - 1),
                 icon.SP_MediaSkipForward)):
            b = QtWidgets.QToolButton()
            b.setText(text)
            b.setIcon(style.standardIcon(pixmap))
            b.setIconSize(QtCore.QSize(20, 20))
            b.setObjectName(name)
            b.setToolTip(tip)
            b.clicked.connect(slot)
            row.addWidget(b)
            self.buttons[name] = b
        self._icons = {"play": style.standardIcon(icon.SP_MediaPlay),
                       "pause": style.standardIcon(icon.SP_MediaPause)}
        layout.addLayout(row)
        form = QtWidgets.QFormLayout()
        self.speed = QtWidgets.QComboBox()
        self.speed.setObjectName("Speed")
        for s in SPEEDS:
            self.speed.addItem(f"{s:g} x", s)
        self.speed.setToolTip("Simulated seconds per second of playback")
        duration = float(self.times[-1] - self.times[0])
        self.speed.setCurrentIndex(SPEEDS.index(default_speed(duration)))
        compact(self.speed)
        form.addRow("Speed", self.speed)
        self.loop = QtWidgets.QCheckBox("Loop")
        self.loop.setObjectName("Loop")
        self.loop.setChecked(True)
        form.addRow("", self.loop)
        self.arrows = QtWidgets.QCheckBox("Reaction forces")
        self.arrows.setObjectName("Arrows")
        self.arrows.setToolTip("Arrows of the hinges' reaction forces on their input bodies, "
                               "length proportional to the magnitude, one scale for all arrows "
                               "(see the legend)")
        self.arrows.toggled.connect(self._arrows_toggled)
        form.addRow("Show", self.arrows)
        self.contact_arrows = QtWidgets.QCheckBox("Contact forces")
        self.contact_arrows.setObjectName("ContactArrows")
        self.contact_arrows.setToolTip(
            "Arrows of the contact forces on the contacts' input bodies at the contact points "
            "(none while a contact is not touching), and of the gear couplers' tooth forces at "
            "the pitch point; length proportional to the magnitude, one scale for all arrows "
            "(see the legend)")
        self.contact_arrows.setEnabled(bool(self.contacts) or
                                       any(k.mesh is not None for k in self.couplers))
        self.contact_arrows.toggled.connect(self._contact_arrows_toggled)
        form.addRow("", self.contact_arrows)
        self.arrow_legend = QtWidgets.QLabel()
        self.arrow_legend.setObjectName("ArrowScale")
        self.arrow_legend.setToolTip("Length of an arrow for a force, in your unit schema; the "
                                     "longest force of the run among the arrows shown is a "
                                     "quarter of the model's size")
        self.arrow_legend.setVisible(False)
        form.addRow("", self.arrow_legend)
        self.marker_axes = QtWidgets.QCheckBox("Marker axes")
        self.marker_axes.setObjectName("MarkerAxes")
        self.marker_axes.setToolTip("The markers' axes moving with their bodies (off: faster "
                                    "playback; hinge symbols are hidden while the player is "
                                    "open)")
        self.marker_axes.setChecked(False)
        self.marker_axes.toggled.connect(lambda on: show_marker_axes(self.doc, on))
        form.addRow("", self.marker_axes)
        self.trace_list = QtWidgets.QListWidget()
        self.trace_list.setObjectName("Traces")
        self.trace_list.setToolTip("Draw the paths of the checked markers over the run")
        for label in self._markers:
            item = QtWidgets.QListWidgetItem(label)
            item.setFlags(item.flags() | QtCore.Qt.ItemIsUserCheckable)
            item.setCheckState(QtCore.Qt.Unchecked)
            self.trace_list.addItem(item)
        self.trace_list.setMaximumHeight(110)
        self.trace_list.itemChanged.connect(lambda *_: self.update_traces())
        form.addRow("Traces", self.trace_list)
        layout.addLayout(form)
        row = QtWidgets.QHBoxLayout()
        # lambdas: clicked passes ``checked``, which plot(columns) must not take for columns
        for name, text, tip, slot in (
                ("PlotButton", "Plot", "Plot this run's quantities; the cursor follows the "
                                          "player", lambda: self.plot()),
                ("ExportButton", "Movie...", "Render the playback with FreeCAD's 3D "
                                                    "view into a GIF or MP4", self.export_dialog)):
            b = QtWidgets.QPushButton(text)
            b.setObjectName(name)
            b.setToolTip(tip)
            b.clicked.connect(slot)
            compact(b)
            row.addWidget(b)
        layout.addLayout(row)
        meta = self.results.meta
        self.run_label.setText(
            f"<b>{self.result_obj.Label}</b>: {meta.get('method', '')}, "
            f"{meta.get('integrator', '')}, {len(self.times)} frames, "
            f"{self.times[0]:g} to {self.times[-1]:g} s"
            + "".join(f"<br><span style='color: #cc0000'><b>Do not trust this run</b>: "
                      f"{html.escape(why)}</span>"
                      for why in getattr(self.result_obj, "Untrusted", [])))
        return w

    def _trace_candidates(self):
        """Marker label -> (body label, point in the body's base frame, mm), at rest."""
        from ..objects.marker import TYPE as MARKER
        from ..objects.mechanism import members
        out = {}
        for marker in members(self.mechanism, MARKER):
            body = marker.Body
            if body is None or body.Label not in self.animator.moving_bodies():
                continue
            local = body.BasePlacement.inverse().multiply(marker.Placement).Base
            out[marker.Label] = (body.Label, (local.x, local.y, local.z))
        return out

    # -- overlays --------------------------------------------------------------------------------
    def _setup_overlay(self):
        try:
            from .overlays import Overlay
            self.overlay = Overlay(self.view)
        except Exception as exc:  # a view without a scene graph: play without overlays
            FreeCAD.Console.PrintWarning(f"MultibodyWB: no arrows or traces: {exc}\n")
            self.overlay = None
            return
        self.hinges = [h for h in self.results.hinges if force_columns(self.results, h)]
        peak = 0.0
        for h in self.hinges:
            F = np.column_stack([self.results.column(c) for c in force_columns(self.results, h)])
            peak = max(peak, float(np.max(np.linalg.norm(F, axis=1))) if len(F) else 0.0)
        self._peaks["reactions"] = peak
        self.model_size = self._model_size()
        self.arrow_radius = 0.006 * self.model_size
        self.overlay.set_arrows(self.hinges)
        self.overlay.show_arrows(False)
        meshed = [c.label for c in self.couplers if c.mesh is not None]
        self.overlay.set_arrows(self.contacts + meshed, group="contacts")
        self.overlay.show_arrows(False, group="contacts")
        self._update_scale()

    def _setup_contacts(self):
        """The contacts' forces, points and normal forces, and the couplers, of the run."""
        res = self.results
        self.contacts = contact_columns(res)
        nf, nc = len(self.times), len(self.contacts)
        if nc:
            self._contact_force = np.stack([res.vector(f"{c}.F") for c in self.contacts], axis=1)
            self._contact_point = np.stack([res.vector(f"{c}.") for c in self.contacts],
                                           axis=1) * 1000.0
            self._contact_fn = np.column_stack([res.column(f"{c}.Fn") for c in self.contacts])
        else:
            self._contact_force = self._contact_point = np.zeros((nf, 0, 3))
            self._contact_fn = np.zeros((nf, 0))
        from ..objects.base import members
        from ..objects.coupler import TYPE as COUPLER
        objects = {o.Label: o for o in members(self.mechanism, COUPLER)}
        self.couplers = []
        for prefix, (first, second) in coupler_columns(res).items():
            obj = objects.get(prefix)
            hinges = ("first", "second")
            if obj is not None and obj.FirstHinge is not None and obj.SecondHinge is not None:
                hinges = (obj.FirstHinge.Label, obj.SecondHinge.Label)
            mesh = gear_mesh(obj)
            if mesh is not None and first.endswith(".T1"):
                try:
                    mesh = mesh if self.tooth_force(mesh, first, self.times[0]) else None
                except KeyError:         # a marker the animator does not know
                    mesh = None
            else:
                mesh = None
            self.couplers.append(CouplerShown(prefix, first, second, hinges, mesh))
        self._coupler_loads = (np.column_stack([res.column(c) for k in self.couplers
                                                for c in (k.first, k.second)])
                               if self.couplers else np.zeros((nf, 0)))
        peak = float(np.max(np.linalg.norm(self._contact_force, axis=2))) if nc and nf else 0.0
        for k in self.couplers:
            if k.mesh is not None:
                for t in self.times:
                    found = self.tooth_force(k.mesh, k.first, t)
                    if found is not None:
                        peak = max(peak, float(np.linalg.norm(found[1])))
        self._peaks["contacts"] = peak

    def tooth_force(self, mesh, load_column, t):
        """``(pitch point (3,) mm, force (3,) N)``: the tooth force of a gear on its first
        hinge's input body at time ``t`` (load ``T1`` from ``load_column``), or None when the
        axes are not parallel, coincide, or turn at the same rate.

        The pitch point is where both wheels' speeds agree: at ``s = ratio d / (ratio - 1)``
        from the first axis towards the second, ``d`` the distance between the axes (``ratio``
        with the sign of the axes' senses); the force is tangential, ``T1 / s (z1 x u)``.
        """
        first = self.animator.marker_placement(mesh.first_marker, t)
        second = self.animator.marker_placement(mesh.second_marker, t)
        z = FreeCAD.Vector(0, 0, 1)
        o1, z1 = np.array(first.Base), np.array(first.Rotation.multVec(z))
        o2, z2 = np.array(second.Base), np.array(second.Rotation.multVec(z))
        sense = float(np.dot(z1, z2))
        if abs(sense) < 1.0 - 1e-6:
            return None
        r = (o2 - o1) - np.dot(o2 - o1, z1) * z1
        d = float(np.linalg.norm(r))
        ratio = mesh.ratio * math.copysign(1.0, sense)
        if d < 1e-9 or abs(ratio - 1.0) < 1e-12 or ratio == 0.0:
            return None
        u = r / d
        s = ratio * d / (ratio - 1.0)                      # mm
        load = float(self.animator.interpolate(self.results.column(load_column), t))
        return o1 + s * u, load / (s / 1000.0) * np.cross(z1, u)

    def _update_scale(self):
        """One scale for the arrows shown: the longest force among the checked kinds (all,
        when none is checked) a quarter of the model's size; the legend says it."""
        on = [g for g, box in (("reactions", self.arrows), ("contacts", self.contact_arrows))
              if box.isChecked()]
        peak = max((self._peaks[g] for g in on or self._peaks), default=0.0)
        self.arrow_scale = 0.25 * self.model_size / peak if peak > 0 else 0.0
        self.arrow_legend.setVisible(bool(on) and peak > 0)
        if peak > 0:
            force = nice_below(peak)
            self.legend_force = force
            length = quantity_text(force * self.arrow_scale / 1000.0, "m")
            self.arrow_legend.setText(f"Arrow scale: {length} = {quantity_text(force, 'N')}")
        else:
            self.legend_force = None
            self.arrow_legend.setText("")

    def _model_size(self):
        box = None
        for body in self.animator.body_objects():
            for solid in getattr(body, "Solids", []):
                shape = getattr(solid, "Shape", None)
                if shape is None or shape.isNull():
                    continue
                bb = shape.BoundBox
                box = bb if box is None else box.united(bb)
        return box.DiagonalLength if box is not None and box.isValid() else 100.0

    def _arrows_toggled(self, on):
        if self.overlay is not None:
            self.overlay.show_arrows(on)
            self._update_scale()
            self._update_arrows()

    def _contact_arrows_toggled(self, on):
        if self.overlay is not None:
            self.overlay.show_arrows(on, group="contacts")
            self._update_scale()
            self._update_arrows()

    def _update_arrows(self):
        self._update_coupler_text()
        if self.overlay is None:
            return
        if self.arrows.isChecked():
            for name, point, force, _torque in self.animator.hinge_loads(self.t):
                if name in self.overlay.arrows:
                    self.overlay.update_arrow(name, point, force, self.arrow_scale,
                                              self.arrow_radius)
        if self.contact_arrows.isChecked():
            self._update_contact_arrows()

    def contact_loads(self, t):
        """The contacts at time ``t``: ``[(label, point (3,) mm, force (3,) N, Fn N)]``, linear
        between output times."""
        F = self.animator.interpolate(self._contact_force, t)
        P = self.animator.interpolate(self._contact_point, t)
        Fn = self.animator.interpolate(self._contact_fn, t)
        return [(c, P[j], F[j], float(Fn[j])) for j, c in enumerate(self.contacts)]

    def _update_contact_arrows(self):
        for label, point, force, fn in self.contact_loads(self.t):
            if fn > 0.0:
                self.overlay.update_arrow(label, point, force, self.arrow_scale,
                                          self.arrow_radius, group="contacts")
            else:
                self.overlay.hide_arrow(label, group="contacts")
        for k in self.couplers:
            if k.mesh is None:
                continue
            found = self.tooth_force(k.mesh, k.first, self.t)
            if found is None:
                self.overlay.hide_arrow(k.label, group="contacts")
            else:
                self.overlay.update_arrow(k.label, found[0], found[1], self.arrow_scale,
                                          self.arrow_radius, group="contacts")

    def coupler_text(self, t):
        """The couplers' loads at time ``t`` as the panel writes them (one line each)."""
        if not self.couplers:
            return ""
        loads = self.animator.interpolate(self._coupler_loads, t)
        with np.errstate(all="ignore"):
            peaks = (np.nanmax(np.abs(self._coupler_loads), axis=0)
                     if len(self._coupler_loads) else np.zeros(loads.shape))
        lines = []
        for j, k in enumerate(self.couplers):
            parts = []
            for load, peak, column, hinge in zip(loads[2 * j:2 * j + 2], peaks[2 * j:2 * j + 2],
                                                 (k.first, k.second), k.hinges):
                si = "N m" if column.endswith((".T1", ".T2")) else "N"
                parts.append(f"{quantity_text(load, si, peak)} on {hinge}")
            text = f"{k.label}: {', '.join(parts)}"
            if k.mesh is not None:
                found = self.tooth_force(k.mesh, k.first, t)
                if found is not None:
                    force, load = float(np.linalg.norm(found[1])), abs(float(loads[2 * j]))
                    # the tooth force is the torque over the pitch radius: the same round-off
                    reference = force / load * peaks[2 * j] if load > 0.0 else None
                    text += f"; tooth force {quantity_text(force, 'N', reference)}"
            lines.append(text)
        return "\n".join(lines)

    def _update_coupler_text(self):
        if self.couplers:
            self.coupler_label.setText(self.coupler_text(self.t))
            self.coupler_label.setVisible(True)

    def checked_traces(self):
        out = []
        for i in range(self.trace_list.count()):
            item = self.trace_list.item(i)
            if item.checkState() == QtCore.Qt.Checked:
                out.append(item.text())
        return out

    def set_traces(self, labels):
        """Check exactly the markers ``labels`` for traces."""
        for i in range(self.trace_list.count()):
            item = self.trace_list.item(i)
            item.setCheckState(QtCore.Qt.Checked if item.text() in labels else
                               QtCore.Qt.Unchecked)
        self.update_traces()

    def update_traces(self):
        if self.overlay is None:
            return
        paths = []
        for label in self.checked_traces():
            body, point = self._markers[label]
            paths.append(self.animator.point_trace(body, point))
        self.overlay.set_traces(paths)

    # -- time ------------------------------------------------------------------------------------
    def frame_of(self, t):
        """Index of the last output frame at or before ``t``."""
        return int(np.clip(np.searchsorted(self.times, t + 1e-12, side="right") - 1, 0,
                           len(self.times) - 1))

    def set_time(self, t, fast=False):
        """Show the mechanism at time ``t`` (clamped to the run).

        ``fast``: move only the 3D view (while playing and recording, see
        :mod:`.view_motion`); otherwise the solids' and markers' placements too.
        """
        self.t = float(np.clip(t, self.times[0], self.times[-1]))
        if fast and self.motion.available:
            self.motion.show(self.t)
            self._view_ahead = True
        else:
            self.animator.apply(self.t)
            if self._view_ahead:
                self.motion.sync()
                self._view_ahead = False
        self._update_arrows()
        self.slider.blockSignals(True)
        self.slider.setValue(self.frame_of(self.t))
        self.slider.blockSignals(False)
        self.time_label.setText(f"t = {self.t:.{self.time_decimals}f} s   "
                                f"(frame {self.frame_of(self.t) + 1} of "
                                f"{len(self.times)})")
        if self.plot_panel is not None:
            try:
                self.plot_panel.set_time(self.t)
            except RuntimeError:      # the plot dock was closed: its widget is gone
                self.plot_panel = None
        self.frames_drawn += 1

    def set_frame(self, i):
        self.set_time(self.times[int(np.clip(i, 0, len(self.times) - 1))])

    def step(self, di):
        self.pause()
        self.set_frame(self.frame_of(self.t) + di)

    def _slider_moved(self, value):
        self.set_frame(value)

    def current_speed(self):
        return float(self.speed.currentData())

    def play(self):
        if self.playing:
            return
        if self.t >= self.times[-1] - 1e-12:
            self.t = float(self.times[0])
        self.playing = True
        self.buttons["Play"].setText("Pause")
        self.buttons["Play"].setIcon(self._icons["pause"])
        self.last_tick = time.perf_counter()
        self.timer.start()

    def pause(self):
        """Stop playing; the placements follow the time shown."""
        self.playing = False
        self.timer.stop()
        if self._view_ahead:
            self.set_time(self.t)
        self.buttons["Play"].setText("Play")
        self.buttons["Play"].setIcon(self._icons["play"])

    def toggle(self):
        self.pause() if self.playing else self.play()

    def tick(self):
        """Timer slot: advance by the wall time since the last tick times the speed."""
        now = time.perf_counter()
        t = self.t + (now - self.last_tick) * self.current_speed()
        self.last_tick = now
        if t > self.times[-1]:
            if self.loop.isChecked():
                span = self.times[-1] - self.times[0]
                t = self.times[0] + ((t - self.times[0]) % span if span > 0 else 0.0)
            else:
                self.set_time(self.times[-1], fast=True)
                self.pause()
                return
        self.set_time(t, fast=True)

    # -- plots and movies ------------------------------------------------------------------------
    def plot(self, columns=None):
        from . import plot_panel
        pairs = [(self.result_obj.Label, self.results)]
        for other in reversed(runs.result_objects(self.mechanism)):
            if other.Name != self.result_obj.Name:
                try:
                    pairs.append((other.Label, runs.load(other)))
                except Exception as exc:  # a file that cannot be read: plot the others
                    FreeCAD.Console.PrintWarning(f"MultibodyWB: not plotted: {exc}\n")
        self.plot_panel = plot_panel.show_plot_dock(pairs, columns)
        self.plot_panel.set_time(self.t)
        signal = getattr(self.plot_panel, "timeChanged", None)
        if signal is not None:
            signal.connect(self.set_time)
        return self.plot_panel

    def movie_times(self, fps=25, max_frames=300):
        """Frame times of an exported movie: the run at the current speed, ``fps`` frames a
        second, at most ``max_frames`` (then evenly thinned)."""
        t0, t1 = float(self.times[0]), float(self.times[-1])
        n = int(round((t1 - t0) / self.current_speed() * fps)) + 1
        n = int(np.clip(n, 2, max_frames))
        return np.linspace(t0, t1, n)

    def export_movie(self, path, width=640, height=480, fps=25, progress=None, cancel=None):
        """Render the playback into ``path`` (.gif or .mp4); returns the path."""
        from . import movie
        self.pause()
        t_before = self.t
        try:
            return movie.record(self.view, lambda t: self.set_time(t, fast=True),
                                self.movie_times(fps), path, width, height, fps,
                                progress=progress, cancel=cancel)
        finally:
            self.set_time(t_before)

    def export_dialog(self):
        folder = os.path.dirname(self.doc.FileName or "") or os.getcwd()
        path, _ = QtWidgets.QFileDialog.getSaveFileName(
            FreeCADGui.getMainWindow(), "Export the playback",
            os.path.join(folder, f"{self.mechanism.Label}.gif"),
            "Animated GIF (*.gif);;MP4 video (*.mp4)")
        if not path:
            return None
        if not path.lower().endswith((".gif", ".mp4")):
            path += ".gif"
        dialog = QtWidgets.QProgressDialog("Rendering frames...", "Cancel", 0, 1000,
                                           FreeCADGui.getMainWindow())
        dialog.setWindowTitle("Multibody: export movie")
        dialog.setWindowModality(QtCore.Qt.WindowModal)
        dialog.show()
        from ..solver.api import Cancelled
        try:
            self.export_movie(path, progress=lambda f: dialog.setValue(int(1000 * f)),
                              cancel=dialog.wasCanceled)
        except Cancelled:
            FreeCAD.Console.PrintMessage("MultibodyWB: movie export cancelled; nothing "
                                         "written\n")
            return None
        except Exception as exc:  # ffmpeg missing, disk full, cancelled: say so
            FreeCAD.Console.PrintError(f"MultibodyWB: the movie was not written: {exc}\n")
            QtWidgets.QMessageBox.warning(FreeCADGui.getMainWindow(), "Multibody: export movie",
                                          f"The movie was not written: {exc}")
            return None
        finally:
            dialog.close()
        FreeCAD.Console.PrintMessage(f"MultibodyWB: playback written to {path}\n")
        return path

    # -- task dialog interface -------------------------------------------------------------------
    def is_open(self):
        return self.animator is not None

    def cleanup(self):
        """Stop, put the solids back where they were, remove the overlays, stop watching the
        document. Safe to call more than once, and after the document was closed."""
        global current
        if self.animator is None:
            return
        self.playing = False
        self.timer.stop()
        self.watch.detach()
        if not self.widgets_gone:
            self.buttons["Play"].setText("Play")
            self.buttons["Play"].setIcon(self._icons["play"])
        if self.document_gone:
            # nothing of the document or its 3D view is left to put back; just forget it
            from types import SimpleNamespace
            resume_symbols(SimpleNamespace(Name=self.doc_name, Objects=[]))
            self.animator = None
            self.overlay = None
        else:
            self._view_ahead = False       # no placements set just to be put back
            self.animator.restore()
            self.motion.sync()
            self.animator = None
            resume_symbols(self.doc)
            show_marker_axes(self.doc, True)
            if self.overlay is not None:
                self.overlay.remove()
                self.overlay = None
        if current is self:
            current = None

    def _form_destroyed(self, *_):
        self.widgets_gone = True
        self.cleanup()

    # -- the document (DocumentWatch) --------------------------------------------------------------
    def document_closing(self):
        """The document is being closed: stop at once, close the panel afterwards."""
        self.document_gone = True
        self.playing = False
        self.timer.stop()
        later(self.close)

    def object_deleted(self, obj):
        """The run, the mechanism or a moved solid or marker deleted (or undone): close."""
        try:
            name = obj.Name
        except (ReferenceError, RuntimeError):
            return
        if name in self._needed and self.animator is not None:
            self.playing = False
            self.timer.stop()
            FreeCAD.Console.PrintMessage(f"MultibodyWB: the player closes: '{obj.Label}' "
                                         "was deleted\n")
            later(self.close)

    def before_save(self):
        """Saving: the file gets the placements as drawn (the view follows them meanwhile)."""
        if self.animator is not None:
            self.timer.stop()
            self.animator.restore()
            self._view_ahead = False

    def after_save(self):
        """Saved: the document stays as saved; the view shows the player's time again."""
        if self.animator is None:
            return
        # the document is unmodified now: closing the player must leave it so
        self.animator._gui_modified = False
        if self.motion.available:
            self.motion.show(self.t)
            self._view_ahead = True
        else:
            self.animator.apply(self.t)
        if self.playing:
            self.last_tick = time.perf_counter()
            self.timer.start()


def time_decimals(times):
    """Decimals the player shows a time with: one more than the output step needs (a step of
    0.01 s: t = 0.123 s), not six significant digits that change at every tick."""
    steps = np.diff(np.asarray(times, dtype=float))
    steps = steps[steps > 0]
    if not len(steps):
        return 3
    return int(min(9, max(0, -math.floor(math.log10(float(steps.min()) * (1 + 1e-9)))) + 1))


def open_player(mechanism, result_obj=None):
    """Show the player of ``mechanism`` on ``result_obj`` (default: its latest run)."""
    result_obj = result_obj or runs.latest_result(mechanism)
    if result_obj is None:
        raise ValueError(f"Mechanism '{mechanism.Label}' has no stored results: simulate it "
                         "first")
    from .views import ensure_views
    from .watch import close_task_dialog
    ensure_views(mechanism.Document)
    close_task_dialog()          # a Simulate panel's run cancelled, another player's solids back
    panel = PlayerPanel(mechanism, result_obj)
    FreeCADGui.Control.showDialog(panel)
    return panel
