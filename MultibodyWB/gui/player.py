"""The player: a task panel that moves the solids through a stored run.

Play, pause, step, a scrub slider over the output frames, the speed (simulated seconds per second
of wall time), loop; optional reaction-force arrows scaled by magnitude and traces of chosen
markers; export of the playback to GIF or MP4, rendered by FreeCAD's own 3D view; the plots of the
run, whose time cursor follows the player.

The solids' placements come from the results through
:class:`MultibodyWB.document.animation.Animator`; closing the player puts every original placement
back. Playing changes no undo history.

The player watches its document (:class:`.watch.DocumentWatch`): saving writes the placements
as drawn (the player puts them back for the save; the view keeps the time shown), and the
player closes itself when the document is closed or when the run, the mechanism or a solid it
moves is deleted (also by Undo).
"""

from __future__ import annotations

import os
import time

import FreeCAD
import FreeCADGui
import numpy as np

from ..document import runs
from ..document.animation import Animator
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
        self.t = float(self.times[0])
        self.playing = False
        self.last_tick = 0.0
        self.frames_drawn = 0
        self.plot_panel = None
        self._markers = self._trace_candidates()
        self.overlay = None
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
                               "length proportional to the magnitude (the largest over the run "
                               "is a quarter of the model's size)")
        self.arrows.toggled.connect(self._arrows_toggled)
        form.addRow("Show", self.arrows)
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
            f"{self.times[0]:g} to {self.times[-1]:g} s")
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
        size = self._model_size()
        self.arrow_scale = 0.25 * size / peak if peak > 0 else 0.0
        self.arrow_radius = 0.006 * size
        self.overlay.set_arrows(self.hinges)
        self.overlay.show_arrows(False)

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
            self._update_arrows()

    def _update_arrows(self):
        if self.overlay is None or not self.arrows.isChecked():
            return
        for name, point, force, _torque in self.animator.hinge_loads(self.t):
            if name in self.overlay.arrows:
                self.overlay.update_arrow(name, point, force, self.arrow_scale, self.arrow_radius)

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
        self.time_label.setText(f"t = {self.t:.6g} s   (frame {self.frame_of(self.t) + 1} of "
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
        from ..solver.methods.runtime import Cancelled
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
