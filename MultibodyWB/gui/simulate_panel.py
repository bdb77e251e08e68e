"""The Simulate task panel: settings, Run with progress and Cancel, messages, the stored runs.

The panel edits the mechanism's Simulation settings (method, integrator, times, tolerances; shown
in FreeCAD's units), and **Run** exports the mechanism to the neutral model (in the GUI thread:
it reads the document) and hands it to a :class:`MultibodyWB.solver.run.job.Job`, which runs the
solver in a background thread while FreeCAD stays responsive. A timer in the GUI thread follows
the job: progress bar, simulated time, elapsed time. **Cancel** asks the job to stop at its next
chunk.

Only a finished run changes the document: its results are stored as a new Result object
(:func:`MultibodyWB.document.runs.store_results`, one undo step), so a cancelled or failed run
leaves the earlier results as they were. A run that its own checks call untrustworthy (the
energy balance does not close: :attr:`~MultibodyWB.solver.results.table.Results.untrusted`) is
stored all the same, to be looked at, but the status says in red that it is not to be trusted and
why, before anyone plays it; the stored runs' list shows it in red, also in a reopened document
(the Result's ``Untrusted``). The solver's messages (redundant constraints, corrections
of the initial state, singular configurations) and errors (each naming the object and the property
to fix) go to the panel's message box and to the report view. Before a run, so do warnings that
do not stop it: the export's (an implausible density, a contact between hinged bodies) and the
bodies that overlap as drawn with no contact between them and no hinge holding them together
(:func:`MultibodyWB.document.interference.unjoined_overlaps`).

Macro recording: the settings are changed with ``FreeCADGui.doCommand`` statements, and a
finished run is recorded as the synchronous call
``MultibodyWB.document.runs.simulate_mechanism(...)`` that repeats it
(:func:`MultibodyWB.document.runs.recorded_run` lets the panel record that line without running the
solver a second time).

The panel also lists the mechanism's stored runs (play, plot, delete) and shows the topology
figure and the overall transfer equation of the product form.
"""

from __future__ import annotations

import math
import time
import traceback

import FreeCAD
import FreeCADGui

from ..document import runs
from ..objects.base import type_of
from ..objects.export import advice_in_document, document_problems
from ..objects.result import TYPE as RESULT
from ..objects.simulation import MODEL_ATTRIBUTES, TYPE as SIMULATION
from ..solver.api import INTEGRATORS, METHODS, ModelError
from .qt import QtCore, QtGui, QtWidgets, compact
from . import warmup
from .simulate_settings import (  # noqa: F401 - also imported from here
    INTEGRATOR_TIP, TIME_UNITS, _QUANTITY_SETTINGS, SettingsMixin, _ref, check_settings,
    format_time, parse_time, simulation_of)
from .watch import DocumentWatch, TaskPanel, later, object_alive, track

#: How often the panel looks at a running job (ms): its end is handled this soon.
POLL_MS = 50
#: How often the panel shows a running job's progress (s). Each change of the progress bar or
#: the status repaints the task panel, CPU the solver's thread would use: 20 a second took 1.5
#: to 3 s of CPU during an 8 s run of the crank-slider (FreeCAD 0.20 under Xvfb, 2 cores).
SHOW_S = 0.5
#: Object name of the panel's main widget (tests find it by this name).
PANEL_NAME = "MultibodySimulatePanel"
#: File in FreeCAD's user folder where the traces of internal errors go.
ERROR_LOG = "multibodywb-errors.log"
#: How a run that its own checks call untrustworthy is shown: the status, the stored runs' list.
UNTRUSTED_COLOR = "#cc0000"
UNTRUSTED_STYLE = f"color: {UNTRUSTED_COLOR}; font-weight: bold"

#: The panel being shown (one at a time), for tests and the commands.
current = None
track(lambda: current)


def _length(metres):
    """A length in the document's unit system (``'10 mm'``)."""
    return FreeCAD.Units.Quantity(metres * 1000.0, FreeCAD.Units.Unit("mm")).UserString


def _angle(radians):
    """An angle in the document's unit system (``'90 \u00b0'``)."""
    return FreeCAD.Units.Quantity(math.degrees(radians), FreeCAD.Units.Unit("deg")).UserString


def _log(text, error=False):
    (FreeCAD.Console.PrintError if error else FreeCAD.Console.PrintMessage)(
        f"MultibodyWB: {text}\n")


class SimulatePanel(SettingsMixin, TaskPanel):
    """The task panel of the Simulate command for one mechanism (see the module doc)."""

    def __init__(self, mechanism):
        global current
        self.mechanism = mechanism
        self.doc = mechanism.Document
        self.job = None
        self.busy = False                 # a job started and not yet handled by poll()
        self.started = 0.0
        self.shown = 0.0                  # when a running job's progress was last shown
        self.closed = False
        self.timer = QtCore.QTimer()
        self.timer.setInterval(POLL_MS)
        self.timer.timeout.connect(self.poll)
        self.settings_form = self._settings_widget()
        self.run_form = self._run_widget()
        self.output_form = self._output_widget()
        self.runs_form = self._runs_widget()
        # Run and Cancel, the progress and the status first: in sight at the top of the task
        # view however small the combo view is (the settings below them, then the messages)
        self.form = [self.run_form, self.settings_form, self.output_form, self.runs_form]
        self.load_settings()
        self.refresh_runs()
        self.finished_callbacks = []      # called with the job when a run ends (tests)
        self.compiling = None             # (model, accept) waiting for the kernels' compile
        self.start_preview = None         # the corrected start shown in the 3D view
        self.pending_model = None         # the model waiting for the user's OK of that start
        self.accepted_corrections = False
        self._refresh_pending = False
        self.watch = DocumentWatch(self.doc, self)
        # FreeCAD may remove the dialog without calling reject() (another dialog asked for the
        # task panel): its widgets are then destroyed, and the run is cancelled
        self.run_form.destroyed.connect(lambda *_: self.cleanup())
        current = self

    # -- widgets -------------------------------------------------------------------------------
    def _settings_widget(self):
        w = QtWidgets.QWidget()
        w.setObjectName(PANEL_NAME)
        w.setWindowTitle("Simulation settings")
        form = QtWidgets.QFormLayout(w)
        self.method = QtWidgets.QComboBox()
        self.method.addItems(list(METHODS))
        self.method.setToolTip(
            "mstmm: transfer matrix method (Riccati form, O(n); loops by cut hinges)\n"
            "constrained: global formulation with Lagrange multipliers (the reference)\n"
            "newton-euler: discrete-time method, joints as stiff spring-dampers")
        form.addRow("Method", self.method)
        self.integrator = QtWidgets.QComboBox()
        self.integrator.addItems(list(INTEGRATORS))
        self.integrator.setToolTip(INTEGRATOR_TIP)
        form.addRow("Integrator", self.integrator)
        self.quantity = {}
        tips = {"EndTime": "End of the simulated time",
                "Step": "Integrator step (rk4, euler, newton-euler) or first step (adaptive)",
                "OutputStep": "Spacing of the stored results (a whole number of steps for rk4 "
                              "and euler)"}
        labels = {"EndTime": "End time", "Step": "Step", "OutputStep": "Output step"}
        for name in _QUANTITY_SETTINGS:
            edit = QtWidgets.QLineEdit()
            edit.setObjectName(name)
            edit.setToolTip(tips[name] + "; a time with its unit: 0.08 s, 0.1 ms, 10 us")
            self.quantity[name] = edit
            form.addRow(labels[name], edit)
        self.tolerance = {}
        # the labels short: "Relative tolerance" beside the combo boxes made the panel 17 px
        # wider than the default combo view (its right side cut off); the tooltip says it whole
        for name, label, whole in (("RelativeTolerance", "Rel. tolerance", "Relative tolerance"),
                                   ("AbsoluteTolerance", "Abs. tolerance", "Absolute tolerance")):
            edit = QtWidgets.QLineEdit()
            edit.setObjectName(name)
            edit.setToolTip(f"{whole} of the adaptive integrators")
            self.tolerance[name] = edit
            form.addRow(label, edit)
        self.integrator.currentTextChanged.connect(self._enable_tolerances)
        self.method.currentTextChanged.connect(self._enable_tolerances)
        compact(self.method, self.integrator)
        for edit in list(self.quantity.values()) + list(self.tolerance.values()):
            edit.setMinimumWidth(60)
        return w

    def _run_widget(self):
        w = QtWidgets.QWidget()
        w.setWindowTitle("Run")
        layout = QtWidgets.QVBoxLayout(w)
        row = QtWidgets.QHBoxLayout()
        self.run_button = QtWidgets.QPushButton("Run")
        self.run_button.setObjectName("Run")
        self.run_button.setToolTip("Export the mechanism and simulate it in the background; "
                                   "the results are stored in the document when it ends")
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QtWidgets.QPushButton("Cancel")
        self.cancel_button.setObjectName("Cancel")
        self.cancel_button.setToolTip("Stop the run; the stored results stay as they were")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        row.addWidget(self.run_button)
        row.addWidget(self.cancel_button)
        compact(self.run_button, self.cancel_button)
        layout.addLayout(row)
        self.start_box = self._start_widget()        # shown when the start is not the drawing
        layout.addWidget(self.start_box)
        self.progress = QtWidgets.QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setValue(0)
        self.progress.setFormat("%p %")
        layout.addWidget(self.progress)
        self.status = QtWidgets.QLabel("Ready")
        self.status.setWordWrap(True)
        self.status.setObjectName("Status")
        layout.addWidget(self.status)
        return w

    def _output_widget(self):
        """The solver's messages, the topology figure and the transfer equation."""
        w = QtWidgets.QWidget()
        w.setWindowTitle("Messages")
        layout = QtWidgets.QVBoxLayout(w)
        self.messages = QtWidgets.QPlainTextEdit()
        self.messages.setObjectName("Messages")
        self.messages.setReadOnly(True)
        self.messages.setMinimumHeight(110)
        self.messages.setMaximumHeight(170)     # leaves room for the stored runs below
        self.messages.setToolTip("The solver's messages; they are also in the report view")
        layout.addWidget(self.messages)
        row = QtWidgets.QHBoxLayout()
        topo = QtWidgets.QPushButton("Topology")
        topo.setToolTip("The MSTMM topology figure: bodies, hinges, loops and cut hinges")
        topo.clicked.connect(self.show_topology)
        eq = QtWidgets.QPushButton("Equation")
        eq.setToolTip("The overall transfer equation of the product form at t = 0: transfer "
                      "paths, block structure, order, numbers; closed loops: the cut hinges' "
                      "boundary pairs and supplementary equations")
        eq.clicked.connect(self.show_equation)
        row.addWidget(topo)
        row.addWidget(eq)
        compact(topo, eq)
        layout.addLayout(row)
        return w

    def _start_widget(self):
        """The question shown when the run would move parts away from the drawing."""
        box = QtWidgets.QFrame()
        box.setObjectName("StartCorrection")
        box.setFrameShape(QtWidgets.QFrame.StyledPanel)
        layout = QtWidgets.QVBoxLayout(box)
        self.start_text = QtWidgets.QLabel()
        self.start_text.setObjectName("StartCorrectionText")
        self.start_text.setWordWrap(True)
        layout.addWidget(self.start_text)
        # the two buttons one above the other: side by side their texts make the panel wider
        # than the combo view, which then cuts off its right side (the Run button, the text)
        row = QtWidgets.QVBoxLayout()
        self.accept_start_button = QtWidgets.QPushButton("Run from this start")
        self.accept_start_button.setObjectName("AcceptStart")
        self.accept_start_button.setToolTip(
            "Simulate from the corrected start shown in the 3D view (the drawing itself is not "
            "changed)")
        self.accept_start_button.clicked.connect(self.accept_start)
        self.keep_drawing_button = QtWidgets.QPushButton("Keep the drawing")
        self.keep_drawing_button.setObjectName("KeepDrawing")
        self.keep_drawing_button.setToolTip("Do not run; put the parts back where they are drawn "
                                            "so that the model can be fixed")
        self.keep_drawing_button.clicked.connect(self.dismiss_start)
        row.addWidget(self.accept_start_button)
        row.addWidget(self.keep_drawing_button)
        compact(self.accept_start_button, self.keep_drawing_button)
        layout.addLayout(row)
        box.setVisible(False)
        return box

    def _runs_widget(self):
        w = QtWidgets.QWidget()
        w.setWindowTitle("Stored runs")
        layout = QtWidgets.QVBoxLayout(w)
        self.run_list = QtWidgets.QListWidget()
        self.run_list.setObjectName("Runs")
        self.run_list.setSelectionMode(QtWidgets.QAbstractItemView.ExtendedSelection)
        self.run_list.setToolTip("Runs stored in the document (saved with it). Select one to "
                                 "play it; several to compare them in the plots")
        self.run_list.itemDoubleClicked.connect(lambda item: self.play())
        self.run_list.setMaximumHeight(120)     # a few runs; it scrolls
        layout.addWidget(self.run_list)
        row = QtWidgets.QHBoxLayout()
        for text, slot, tip in (
                ("Play", self.play, "Play the selected run in the 3D view"),
                ("Plot", self.plot, "Plot the selected runs (several: overlaid)"),
                ("Delete", self.delete, "Delete the selected runs from the document "
                                        "(undoable)")):
            b = QtWidgets.QPushButton(text)
            b.setObjectName(text)
            b.setToolTip(tip)
            b.clicked.connect(slot)
            compact(b)
            row.addWidget(b)
        layout.addLayout(row)
        return w

    # -- running ---------------------------------------------------------------------------------
    def say(self, text, error=False):
        self.messages.appendPlainText(text)
        _log(text, error)

    @property
    def running(self):
        """A run has been started and its end not yet handled (stored, or reported)."""
        return self.busy

    def _busy(self, busy):
        self.busy = busy
        self.run_button.setEnabled(not busy)
        self.cancel_button.setEnabled(busy)
        self.settings_form.setEnabled(not busy)
        self.runs_form.setEnabled(not busy)

    def run(self):
        """Check the settings, export, store the settings, start the job. Returns True if it
        started. Settings that cannot be read or that the solver would refuse, and a model
        with problems, are reported (naming the field or the object) and change nothing."""
        if self.busy or self.closed:
            return False
        self.messages.clear()
        self.status.setStyleSheet("")            # an untrusted run's red, from the last run
        try:
            values = self.settings()
            check_settings(values)
        except ValueError as exc:
            for line in str(exc).splitlines():
                self.say(line, error=True)
            self.status.setText("Not run: the settings have problems")
            return False
        self.doc.recompute()
        warnings = []
        try:
            model = runs.model_of(self.mechanism, warnings)
        except ModelError as exc:
            n = len(exc.problems)
            self.say(f"Mechanism '{self.mechanism.Label}' has {n} problem"
                     f"{'s' if n != 1 else ''}; fix {'them' if n != 1 else 'it'} first:",
                     error=True)
            for p in exc.problems:
                self.say(f"  {p}", error=True)
            self.status.setText("Not run: the model has problems")
            return False
        except Exception as exc:  # noqa: BLE001 - a defect: said in the panel, never a traceback
            self._internal_error("exporting", exc, traceback.format_exc())
            self.status.setText("Not run: internal error")
            return False
        for line in warnings:                       # in the report view already
            self.messages.appendPlainText(f"Warning: {line}")
        self.warn_overlaps()
        try:
            self.store_settings(values)
        except Exception as exc:  # a setting FreeCAD refuses: say which, change nothing
            self.say(f"The settings were not stored: {type(exc).__name__}: {exc}", error=True)
            return False
        self.doc.recompute()
        for name, value in values.items():          # the exported model had the old ones
            setattr(model.simulation, MODEL_ATTRIBUTES[name][0], value)
        self.settings_used = values
        return self._start(model)

    def warn_overlaps(self):
        """Warn (panel and report view) about the bodies that overlap as drawn with no contact
        between them and no hinge holding them together (a free hinge does not): the run lets
        them pass through each other. The run is not refused (a contact drawn overlapping is,
        by the solver's start check)."""
        from ..document import interference
        try:
            found = interference.unjoined_overlaps(self.mechanism)
        except Exception as exc:  # noqa: BLE001 - a warning only: never stops the run
            self.warn(f"The bodies could not be checked for overlaps: {type(exc).__name__}: "
                      f"{exc}")
            return
        for overlap in found.overlaps:
            if overlap.hinges:
                # a hinged pair overlapping about its pin beyond the pin's own fit (layers drawn
                # into each other, or a link's eye inside a part drawn solid, as the seed
                # engine's rod in its piston): the hinge keeps them where they are drawn, so a
                # note in the panel, not a warning on every run
                self.messages.appendPlainText(
                    f"Note: {overlap.text()} as drawn; the hinge holds them as drawn (the "
                    "Interference check shows where)")
                continue
            self.warn(f"{overlap.text()} as drawn, with no contact between them and no hinge "
                      "holding them together: the run lets them pass through each other (the "
                      "Interference check shows where)")
        for failure in found.failures:
            self.warn(f"Overlap not checked: {failure}")

    def _in_document(self, problems):
        """The solver's problems said of the document's objects and properties, with the
        properties to change (:func:`~MultibodyWB.objects.export.document_problems`)."""
        try:
            return document_problems(self.mechanism, problems)
        except Exception:  # noqa: BLE001 - the solver's own words rather than none
            return list(problems)

    def warn(self, text):
        """Show a warning in the panel's messages and the report view."""
        self.messages.appendPlainText(f"Warning: {text}")
        FreeCAD.Console.PrintWarning(f"MultibodyWB: {text}\n")

    def _start(self, model, accept_corrections=False):
        """The run's start (the solver's stages check and start: the drawing, unless accepted),
        then its solve on a job (after the compile of the kernels when a first run needs it):
        the start is made once, here, and the job solves the run it prepared."""
        from ..solver.api import StartCorrectionError, start_run
        try:
            prepared = start_run(model, accept_corrections=accept_corrections)
        except StartCorrectionError as exc:
            self._show_start_correction(model, exc.report)
            return False
        except ModelError as exc:                  # a loop that cannot be closed
            self.say("The mechanism cannot be assembled:", error=True)
            for p in self._in_document(exc.problems):
                self.say(f"  {p}", error=True)
            self.status.setText("Not run: the model has problems")
            return False
        except Exception as exc:  # noqa: BLE001 - said in the panel, never a traceback
            self.say(f"The start could not be checked: {type(exc).__name__}: {exc}",
                     error=True)
            self.status.setText("Not run: the start could not be checked")
            return False
        self.accepted_corrections = accept_corrections
        self.progress.setValue(0)
        self._busy(True)
        values = self.settings_used
        stage = warmup.stage_of(values["Method"], values["Integrator"])
        if warmup.request(stage):
            # the kernels this run needs are being compiled (FreeCAD's start began it, or this
            # Run): wait for them, not for the rest of the compile
            self.compiling = (prepared, stage)
            from ..solver.api import WARMUP_STAGE_TEXT as STAGE_TEXT
            self.say(f"Compiling the solver's kernels for this run ({STAGE_TEXT[stage]}; once "
                     "after installing or updating) in a separate process; the run starts when "
                     "they are ready")
            self.status.setText("Compiling the solver (first run after installing)...")
            self.shown = 0.0
            self.compile_started = time.perf_counter()
            self.timer.start()
            return True
        self._launch(prepared)
        return True

    def _launch(self, prepared):
        """Start the job that solves the prepared run (the kernels ready, or it compiles them)."""
        from ..solver.api import Job
        values = self.settings_used
        self.job = Job.solving(prepared)
        self.started = time.perf_counter()
        self.shown = self.started           # when the progress was last shown
        self.status.setText("Starting")
        self.say(f"Simulating '{self.mechanism.Label}' with {values['Method']} "
                 f"({values['Integrator']}) to {values['EndTime']:g} s")
        self.job.start()
        self.timer.start()

    # -- the start ----------------------------------------------------------------------------
    def _show_start_correction(self, model, report):
        """Say what the run would move and why, show it in the 3D view, ask."""
        from ..document.animation import Animator, PoseFrame
        self.pending_model = model
        rates_only = not report.moves           # the parts start as drawn; rates differ
        lines = ["The run would not start with the initial rates given (the parts start as "
                 "drawn):" if rates_only else "The run would not start from the drawing:"]
        for move in report.moves:
            lines.append(f"\u2022 '{move.label or move.name}' moves "
                         f"{_length(move.distance)} and turns {_angle(move.angle)}")
        for hinge, text in report.causes:
            lines.append(f"\u2022 because of hinge '{hinge}': {advice_in_document(text)}")
        lines.append("Run with the rates the loop gives, or keep the values given and fix "
                     "the model." if rates_only else
                     "The 3D view shows that start (the moved parts are selected). Run from "
                     "it, or keep the drawing and fix the model.")
        self.start_text.setText("\n".join(lines))
        self.accept_start_button.setText("Run with these rates" if rates_only
                                         else "Run from this start")
        self.keep_drawing_button.setText("Keep the values given" if rates_only
                                         else "Keep the drawing")
        compact(self.accept_start_button, self.keep_drawing_button)
        for line in lines:
            self.say(line, error=True)
        self.status.setText("Not run yet: the start differs from the initial rates given"
                            if rates_only else "Not run yet: the start differs from the drawing")
        frame = PoseFrame({name: pose for name, pose in report.poses.items()
                           if model.body(name) is not None})
        self.start_preview = Animator(self.mechanism, frame, markers=True)
        self.start_preview.apply_frame(0)
        FreeCADGui.Selection.clearSelection()
        moved = {m.name for m in report.moves}
        for body in self.start_preview.body_objects():
            if body.Label in moved:
                for solid in body.Solids:
                    FreeCADGui.Selection.addSelection(solid)
        self.start_box.setVisible(True)
        self.run_button.setEnabled(False)
        self.settings_form.setEnabled(False)

    def _end_start_preview(self):
        preview = getattr(self, "start_preview", None)
        self.start_preview = None
        if preview is not None:
            preview.restore()
            FreeCADGui.Selection.clearSelection()
        self.start_box.setVisible(False)
        if not self.busy:
            self.run_button.setEnabled(True)
            self.settings_form.setEnabled(True)

    def accept_start(self):
        """Run from the corrected start the panel showed (the drawing stays as it is)."""
        model = getattr(self, "pending_model", None)
        self._end_start_preview()
        self.pending_model = None
        if model is None or self.busy or self.closed:
            return False
        self.say("Running from the corrected start (accepted).")
        return self._start(model, accept_corrections=True)

    def dismiss_start(self):
        """Keep the drawing: no run, the parts back where they are drawn."""
        self._end_start_preview()
        self.pending_model = None
        self.status.setText("Not run: the drawing was kept; fix the model and run again")

    def cancel(self):
        """Ask the running job to stop (a compile of the kernels stops at once)."""
        if self.compiling is not None:
            warmup.stop()
            self.compiling = None
            self.timer.stop()
            self._busy(False)
            self.progress.setFormat("%p %")
            self.progress.setValue(0)
            self.status.setText("Cancelled while compiling the solver; nothing was run")
            self.say("Run cancelled; nothing was stored.")
            return
        if self.running:
            self.job.cancel()
            self.status.setText("Cancelling...")

    def poll(self):
        """Follow the compile of the kernels, then the job (timer slot): progress, and its
        end."""
        if self.compiling is not None and not self.closed:
            prepared, stage = self.compiling
            if warmup.running() and not warmup.ready(stage):
                now = time.perf_counter()
                if now - self.shown >= SHOW_S:
                    self.shown = now
                    self._show_compile(stage)
                return
            self.compiling = None
            self.progress.setFormat("%p %")
            self.progress.setValue(0)
            waited = time.perf_counter() - self.compile_started
            if warmup.running():             # the stage is ready, the rest still compiles
                self.say(f"The solver's kernels for this run were compiled in the "
                         f"{waited:.1f} s the run waited (not counted in its wall time); the "
                         "others (other integrators and methods) go on compiling in the "
                         "background")
            elif warmup.finished_ok():
                self.say(f"The run waited {waited:.1f} s for the compile of the solver's "
                         "kernels (not counted in its wall time)")
            else:
                self.say("Compiling the solver ahead did not finish; the run compiles it "
                         "(see multibodywb-warmup.log in FreeCAD's user folder)")
            self._launch(prepared)
            return
        job = self.job
        if job is None or self.closed:
            self.timer.stop()
            return
        now = time.perf_counter()
        elapsed = now - self.started
        fraction = job.progress
        if not job.done:
            if fraction > 0 and now - self.shown >= SHOW_S:
                self.shown = now
                self.progress.setValue(int(round(1000 * fraction)))
                t_end = self.settings_used["EndTime"]
                self.status.setText(f"t = {fraction * t_end:.6g} s of {t_end:g} s, "
                                    f"{elapsed:.1f} s elapsed")
            return
        self.progress.setValue(int(round(1000 * fraction)))
        self.timer.stop()
        try:
            self._finish(job, elapsed)
        finally:
            self._busy(False)
        for callback in list(self.finished_callbacks):
            callback(job)

    def _show_compile(self, stage):
        """The wait for the compile of ``stage``: the estimate (stage k of n, time left) in the
        status, its fraction in the progress bar (``solver.run.warmup.wait_text``)."""
        from ..solver.api import warmup_wait_text as wait_text
        text, fraction = wait_text(warmup.progress(stage), stage,
                                   time.perf_counter() - self.compile_started)
        self.status.setText(text)
        if fraction is not None:
            self.progress.setFormat("compiling %p %")
            self.progress.setValue(int(round(1000 * fraction)))

    def _finish(self, job, elapsed):
        from ..solver.api import Cancelled
        if job.state == "cancelled" or isinstance(job.error, Cancelled):
            self.status.setText("Cancelled; the stored results are unchanged")
            self.say("Run cancelled; nothing was stored.")
            return
        if job.error is not None:
            exc = job.error
            self.progress.setValue(0)
            self.status.setText("Failed; the stored results are unchanged")
            if isinstance(exc, ModelError):
                self.say("The run failed:", error=True)
                for p in self._in_document(exc.problems):
                    self.say(f"  {p}", error=True)
            elif getattr(job, "internal_error", False):
                self._internal_error("simulating", exc, job.trace)
            else:
                self.say(f"The run failed: {exc}", error=True)
            return
        results = job.results
        try:
            with runs.recorded_run(self.mechanism):
                obj = runs.store_results(self.mechanism, results)
                FreeCADGui.addModule("MultibodyWB.document.runs")
                accept = ", accept_corrections=True" if self.accepted_corrections else ""
                FreeCADGui.doCommand(f"MultibodyWB.document.runs.simulate_mechanism("
                                     f"{_ref(self.mechanism)}{accept})")
        except Exception as exc:  # writing the results failed: nothing half-stored
            self.say(f"The results could not be stored: {type(exc).__name__}: {exc}", error=True)
            return
        self.result_object = obj
        for line in job.messages:
            self.say(f"Note: {line}")
        wall = results.meta.get("wall_time", elapsed)
        self.say(results.summary("mm", 1000.0))          # the document's units
        untrusted = list(obj.Untrusted)
        if untrusted:
            # the run's own checks failed: said in red before anyone plays it, last in the
            # messages (in sight), and kept in the Result (Untrusted) and the stored runs' list
            self.status.setStyleSheet(UNTRUSTED_STYLE)
            self.status.setText(f"Done, but do not trust this run: {'; '.join(untrusted)}. "
                                f"Stored as '{obj.Label}' to look at; a smaller Step or "
                                "another integrator should pass the check")
            self.say(f"Do not trust '{obj.Label}': its own check failed: "
                     f"{'; '.join(untrusted)}", error=True)
        else:
            self.status.setText(f"Done: {len(results)} frames in {wall:.2f} s; stored as "
                                f"'{obj.Label}'")
        self.refresh_runs(select=obj)

    def _internal_error(self, doing, exc, trace):
        """Say an error that is not the model's (a defect) in the panel and the report view,
        with the mechanism's name; its traceback goes to :data:`ERROR_LOG` in FreeCAD's user
        folder."""
        path = None
        try:
            import os
            path = os.path.join(FreeCAD.getUserAppDataDir(), ERROR_LOG)
            with open(path, "a", encoding="utf-8") as stream:
                stream.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} internal error "
                             f"{doing} '{self.mechanism.Label}':\n{trace or ''}\n")
        except Exception:  # noqa: BLE001 - the log is a help, the message is what counts
            path = None
        where = f"; the trace is in {path}" if path else ""
        self.say(f"Internal error {doing} '{self.mechanism.Label}': {type(exc).__name__}: "
                 f"{exc} (please report it with the document{where})", error=True)

    # -- stored runs -----------------------------------------------------------------------------
    def refresh_runs(self, select=None):
        self.run_list.clear()
        for obj in runs.result_objects(self.mechanism):
            untrusted = list(getattr(obj, "Untrusted", []))
            # the mark next to the name: the list is narrow, and a selected row is not red
            mark = " (untrusted)" if untrusted else ""
            text = f"{obj.Label}{mark}: {obj.Method}, {obj.Integrator}, {obj.Frames} frames"
            item = QtWidgets.QListWidgetItem(text)
            item.setData(QtCore.Qt.UserRole, obj.Name)
            item.setToolTip(f"{obj.Created}\n{obj.Summary}")
            if untrusted:
                item.setForeground(QtGui.QBrush(QtGui.QColor(UNTRUSTED_COLOR)))
                item.setToolTip(f"Do not trust this run: {'; '.join(untrusted)}\n"
                                f"{obj.Created}\n{obj.Summary}")
            self.run_list.addItem(item)
            if select is not None and obj.Name == select.Name:
                item.setSelected(True)
                self.run_list.setCurrentItem(item)
        if select is None and self.run_list.count():
            last = self.run_list.item(self.run_list.count() - 1)
            last.setSelected(True)
            self.run_list.setCurrentItem(last)

    def selected_runs(self):
        names = [i.data(QtCore.Qt.UserRole) for i in self.run_list.selectedItems()]
        return [self.doc.getObject(n) for n in names if self.doc.getObject(n) is not None]

    def play(self):
        """Close the panel and open the player on the selected run."""
        chosen = self.selected_runs()
        if not chosen:
            self.say("Select a stored run to play.")
            return None
        from . import player
        try:
            runs.load(chosen[-1])             # a file that cannot be read: say so, stay open
        except Exception as exc:
            self.say(f"Cannot play '{chosen[-1].Label}': {exc}", error=True)
            return None
        mechanism = self.mechanism
        self.close()
        return player.open_player(mechanism, chosen[-1])

    def plot(self):
        from . import plot_panel
        chosen = self.selected_runs() or runs.result_objects(self.mechanism)[-1:]
        if not chosen:
            self.say("There is no stored run to plot.")
            return None
        try:
            pairs = [(o.Label, runs.load(o)) for o in reversed(chosen)]
        except Exception as exc:  # a results file that cannot be read
            self.say(f"Cannot plot: {exc}", error=True)
            return None
        return plot_panel.show_plot_dock(pairs)

    def delete(self):
        chosen = self.selected_runs()
        if not chosen:
            return
        self.doc.openTransaction("Delete results")
        for obj in chosen:
            FreeCADGui.doCommand(f"{_ref(obj)}.Document.removeObject({obj.Name!r})")
        self.doc.commitTransaction()
        self.refresh_runs()

    def show_topology(self):
        import os
        import tempfile

        from .figure import show_figure
        from ..solver.api import write_figure
        try:
            model = runs.model_of(self.mechanism)
            path = os.path.join(tempfile.mkdtemp(prefix="mbwb-topology-"),
                                self.mechanism.Name + ".png")
            write_figure(model, path)
        except ModelError as exc:
            self.say("No topology figure: the model has problems:", error=True)
            for p in exc.problems:
                self.say(f"  {p}", error=True)
            return None
        except Exception as exc:  # Graphviz missing or failing
            self.say(f"The topology figure could not be drawn: {type(exc).__name__}: {exc}",
                     error=True)
            return None
        return show_figure(f"Topology of '{self.mechanism.Label}'", path)

    def show_equation(self):
        from ..solver.api import equation_report
        try:
            text = equation_report(runs.model_of(self.mechanism))
        except ModelError as exc:
            text = "\n".join(["No transfer equation:"] + [f"  {p}" for p in exc.problems])
        except Exception as exc:  # e.g. a model the product form does not take
            text = f"No transfer equation: {type(exc).__name__}: {exc}"
        dialog = QtWidgets.QDialog(FreeCADGui.getMainWindow())
        dialog.setObjectName("MultibodyTransferEquation")
        dialog.setWindowTitle(f"Multibody: overall transfer equation of "
                              f"'{self.mechanism.Label}'")
        layout = QtWidgets.QVBoxLayout(dialog)
        edit = QtWidgets.QPlainTextEdit(text)
        edit.setReadOnly(True)
        edit.setLineWrapMode(QtWidgets.QPlainTextEdit.NoWrap)
        edit.setFont(QtGui.QFontDatabase.systemFont(QtGui.QFontDatabase.FixedFont))
        layout.addWidget(edit)
        buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.Close)
        buttons.rejected.connect(dialog.reject)
        layout.addWidget(buttons)
        dialog.resize(900, 600)
        self.equation_dialog = dialog
        dialog.show()
        return dialog

    # -- task dialog interface -------------------------------------------------------------------
    def is_open(self):
        return not self.closed

    def cleanup(self):
        """Stop a running job (nothing is stored), stop watching the document. Safe to call
        more than once, and after the document was closed."""
        global current
        if self.closed:
            return
        self.closed = True
        self.timer.stop()
        try:
            self._end_start_preview()
        except (ReferenceError, RuntimeError):    # widgets or document gone
            pass
        if self.busy and self.job is not None and not self.job.done:
            self.job.cancel()
            self.job.wait(1.0)     # a run compiling the solver stops at its first step
            _log("Run cancelled: the Simulate panel was closed; nothing was stored.")
        self.busy = False
        self.watch.detach()
        if current is self:
            current = None

    # -- the document (DocumentWatch) --------------------------------------------------------------
    def document_closing(self):
        """The document is being closed: cancel a run (nothing can be stored), close the panel
        once FreeCAD is done closing it."""
        self.timer.stop()
        if self.job is not None:
            self.job.cancel()
        later(self.close)

    def object_deleted(self, obj):
        if obj == self.mechanism:
            self.timer.stop()
            if self.job is not None:
                self.job.cancel()
            later(self.close)
        elif type_of(obj) == RESULT:
            self._refresh_later()

    def object_created(self, obj):
        self._refresh_later()        # a Result back by Redo (its type is not set yet here)

    def _refresh_later(self):
        if not self._refresh_pending:
            self._refresh_pending = True
            later(self._refresh_now)

    def _refresh_now(self):
        self._refresh_pending = False
        if not self.closed and object_alive(self.mechanism):
            selected = self.selected_runs()
            self.refresh_runs(select=selected[-1] if selected else None)


def open_panel(mechanism):
    """Show the Simulate panel of ``mechanism``: the one open already, else a new one (closing
    another task dialog first, a player or another mechanism's panel cleaning up)."""
    from .views import ensure_views
    from .watch import close_task_dialog
    if current is not None and not current.closed and current.mechanism == mechanism \
            and FreeCADGui.Control.activeDialog():
        return current
    ensure_views(mechanism.Document)
    close_task_dialog()
    panel = SimulatePanel(mechanism)
    FreeCADGui.Control.showDialog(panel)
    return panel


def is_simulation(obj):
    return type_of(obj) == SIMULATION
