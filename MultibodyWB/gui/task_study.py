"""The Study task panel: parameters, objectives, method; Run on Dask with progress and Cancel; the
table, a plot, Apply.

**Study**: a table of parameters (a row each: ``OBJECT.PROPERTY``, then Low, High and Levels for a
range, or a List ``v1, v2, ...``; quantities with their unit, ``80 mm``), the objectives and the
constraints (one per line, the solver's expressions), the method and its options, the Dask
scheduler (empty: a local cluster of Workers processes, 0 = one per core).

**Run** writes the fields into the Study object (one undo step, through ``FreeCADGui.doCommand``
so a macro records it), checks the study (every problem in a message box naming the row and the
field, nothing run) and runs it with :mod:`MultibodyWB.document.study` in a thread of its own:
the solver's :func:`~MultibodyWB.solver.study.run_study` asks for each variant, which is made on
the GUI thread (the document may be changed only there: a queue the panel's timer serves), and
runs it on the Dask workers. The progress bar and the status line follow the variants
(``variant 7 of 20, 2 workers``), and the rows appear as they arrive; **Cancel** stops the
outstanding ones. At the end the document is put back as it was and the table is stored in the
Study (one undo step); a study that ran to its end is recorded in a macro as
``MultibodyWB.document.study.run(study)``. Closing the panel while a study runs cancels it, puts
the document back and stores nothing.

**Results**: one row per variant (parameters in the document's units, objectives, constraint
margins, status, wall time; a failed variant shows its error, in red; a variant that misses a
constraint is grey), the best in bold; a plot of the
first objective against each parameter; **Apply** writes the selected variant (else the best)
into the document as one undo step; **Keep as Result** runs the selected variant again here and
stores its run as a Result the player plays; **Plots** shows, in the plot dock, the first
objective against each parameter and the parallel coordinates of every variant.
"""

from __future__ import annotations

import math
import queue
import threading
import time
import traceback

import FreeCAD
import FreeCADGui

from ..document import study as dstudy
from ..solver.api import STUDY_METHODS as METHODS, OPTIMISERS, StudyError
from . import qt
from .qt import QtCore, QtGui, QtWidgets, Signal, compact, push_button
from .study_figure import _number, _scales, _titled, draw_dock_figure, draw_panel_figure
from .watch import DocumentWatch, TaskPanel, later, object_alive, track

#: Object name of the panel's main widget (tests find it by this name).
PANEL_NAME = "MultibodyStudyPanel"
#: How often the panel serves the study's thread and shows its progress (ms).
POLL_MS = 50
#: Name of the main window's dock widget of the study plots.
DOCK_NAME = "MultibodyStudyPlots"
#: Columns of the parameters table.
PARAMETER_COLUMNS = ("Parameter", "Low", "High", "Levels", "List")
#: Their titles (the panel is narrow: the default combo view) and tool tips.
PARAMETER_HEADERS = ("Parameter", "Low", "High", "N", "List")
PARAMETER_TIPS = ("OBJECT.PROPERTY: a Name or Label and a property, or Spreadsheet.alias",
                  "A range's low end, with its unit (80 mm)",
                  "A range's high end, with its unit (120 mm)",
                  "Levels: how many values a grid takes in the range",
                  "Or a list of values: 80 mm, 100 mm")
#: Widths (px) of the columns after the first (which takes the rest).
PARAMETER_WIDTHS = {1: 40, 2: 40, 3: 22, 4: 32}
#: Objectives and constraints: the tool tip and the Help (rich text).
OBJECTIVES_TIP = ("One per line, e.g. period(Pivot.rz), rms(Hull.az), max(abs(Pin.Fx)); "
                  "optimisers minimise the first. Name a result as the plot dock lists it, "
                  "the element by its label as it is (any characters: "
                  "rms(Crank – Ground revolute.rz_drive)) or its Name (Hinge001.rz_drive). "
                  "Help lists the functions and units")
OBJECTIVES_HELP = (
    "<b>Results</b> are named as the plot dock lists them: the element's label, a dot, the "
    "quantity: <tt>Crank – Ground revolute.rz_drive</tt>, <tt>Rod.az</tt>, "
    "<tt>energy.total</tt>, <tt>time</tt>. A label is written as it is, with any characters; "
    "the object's Name works too (<tt>Hinge001.rz_drive</tt>), and so does "
    "<tt>col('any name')</tt>. A misspelt name is refused before any run, with the nearest "
    "names.<br><b>Reductions</b> (a column to a number, optionally over a window t0, t1 in s): "
    "<tt>rms mean std max min ptp integral argmax argmin period</tt>, <tt>initial final</tt>, "
    "<tt>at(x, t)</tt>. <b>Element by element</b>: <tt>abs sqrt exp log sin cos tan "
    "hypot(a, b) norm(a, b, c) maximum(a, b) minimum(a, b)</tt>, with + - * / ** and numbers."
    "<br><b>Units</b>: results are SI inside an expression (m, rad, N, N m, s); the table shows "
    "each objective in the document's units when it has one unit (<tt>max(abs(Pin.Fx))</tt>: "
    "N). A <b>constraint</b> is an expression, &lt;= &gt;= &lt; or &gt;, and a bound with its "
    "unit: <tt>max(Piston.z) &lt;= 180 mm</tt>, <tt>max(abs(Crank.rz_rate)) &lt; 3000 "
    "rpm</tt>; its margin (positive when met) is shown in the bound's unit."
    "<br>Optimisers minimise the first objective.")

#: The panel being shown (one at a time), for tests and the commands.
current = None
track(lambda: current)


def message(title, text, details=()):
    """Tell the user in a message box (and the report view, every line of ``details`` too)."""
    FreeCAD.Console.PrintError(f"MultibodyWB: {title}: {text}\n")
    for line in details:
        FreeCAD.Console.PrintError(f"  {line}\n")
    box = QtWidgets.QMessageBox(FreeCADGui.getMainWindow())
    box.setIcon(QtWidgets.QMessageBox.Warning)
    box.setWindowTitle(f"Multibody: {title}")
    box.setText(text)
    if details:
        box.setInformativeText("\n".join(details))
    box.exec_()


def _ref(obj):
    return f"FreeCAD.getDocument({obj.Document.Name!r}).getObject({obj.Name!r})"


def split_row(text):
    """A Parameters row (``P = 80 mm : 120 mm : 5`` or ``P = 1 N/mm, 2 N/mm``) as the table's
    five cells."""
    path, _, spec = text.partition("=")
    cells = [path.strip(), "", "", "", ""]
    if ":" in spec:
        parts = [p.strip() for p in spec.split(":")]
        for i, part in enumerate(parts[:3]):
            cells[1 + i] = part
    else:
        cells[4] = spec.strip()
    return cells


def join_row(k, cells):
    """The Parameters row of the table's cells; ValueError naming the row and the field."""
    path, low, high, levels, values = (c.strip() for c in cells)
    if not path:
        raise ValueError(f"Parameter {k}, field Parameter: empty; give OBJECT.PROPERTY "
                         "(Spreadsheet.LinkLength)")
    if values:
        if low or high or levels:
            raise ValueError(f"Parameter {k} ({path}), field List: give a list or a range "
                             "(Low, High, Levels), not both")
        return f"{path} = {values}"
    if not low or not high:
        fld = "Low" if not low else "High"
        raise ValueError(f"Parameter {k} ({path}), field {fld}: empty; give a range Low, High "
                         "(and Levels for a grid) or a List")
    return f"{path} = {low} : {high}" + (f" : {levels}" if levels else "")


class _Relay(QtCore.QObject):
    """Made on the GUI thread: a signal emitted from the study's thread runs its slot there at
    once (a queued connection), without waiting for the panel's timer."""

    requested = Signal()


class StudyPanel(TaskPanel):
    """The task panel of a Study (see the module doc)."""

    def __init__(self, study_obj):
        global current
        self.study = study_obj
        self.doc = study_obj.Document
        self.closed = False
        self.thread = None
        self.prepared = None
        self.requests = queue.Queue()
        self.state = {}
        self.cancelled = threading.Event()
        self.closing = False                 # cleanup has begun: the end of a run is not stored
        self.finished_callbacks = []
        self.result_object = None
        self.timer = QtCore.QTimer()
        self.timer.setInterval(POLL_MS)
        self.timer.timeout.connect(self.poll)
        self.relay = _Relay()
        self.relay.requested.connect(self._serve)
        self.shown_rows = 0
        self.shown_at = 0.0
        self.study_form = self._study_widget()
        self.run_form = self._run_widget()
        self.results_form = self._results_widget()
        self.form = [self.study_form, self.run_form, self.results_form]
        self.load()
        self.show_table()
        self.watch = DocumentWatch(self.doc, self)
        self.run_form.destroyed.connect(lambda *_: self.cleanup())
        current = self

    # -- widgets -------------------------------------------------------------------------------
    def _study_widget(self):
        w = QtWidgets.QWidget()
        w.setObjectName(PANEL_NAME)
        w.setWindowTitle("Design study")
        layout = QtWidgets.QVBoxLayout(w)
        layout.addWidget(QtWidgets.QLabel("Parameters, with units:"))
        self.parameters = QtWidgets.QTableWidget(0, len(PARAMETER_COLUMNS))
        self.parameters.setObjectName("Parameters")
        self.parameters.setHorizontalHeaderLabels(list(PARAMETER_HEADERS))
        for c, tip in enumerate(PARAMETER_TIPS):
            self.parameters.horizontalHeaderItem(c).setToolTip(tip)
        self.parameters.setToolTip(
            "One row per parameter: OBJECT.PROPERTY (a Name or Label, a property or a "
            "spreadsheet alias: Spreadsheet.LinkLength), then a range Low, High (N: the levels "
            "of a grid) or a List of values (80 mm, 100 mm)")
        self.parameters.verticalHeader().setVisible(False)
        header = self.parameters.horizontalHeader()
        header.setMinimumSectionSize(22)
        header.setSectionResizeMode(0, QtWidgets.QHeaderView.Stretch)
        for c, width in PARAMETER_WIDTHS.items():
            header.setSectionResizeMode(c, QtWidgets.QHeaderView.Interactive)
            self.parameters.setColumnWidth(c, width)
        self.parameters.itemChanged.connect(lambda item: item.setToolTip(item.text()))
        self.parameters.setMinimumHeight(70)
        self.parameters.setMaximumHeight(90)
        layout.addWidget(self.parameters)
        row = QtWidgets.QHBoxLayout()
        for text, slot, name in (("Add", self.add_row, "AddParameter"),
                                 ("Remove", self.remove_row, "RemoveParameter")):
            b = QtWidgets.QPushButton(text)
            b.setObjectName(name)
            b.clicked.connect(slot)
            compact(b)
            row.addWidget(b)
        row.addStretch(1)
        self.help_button = QtWidgets.QPushButton("Help")
        self.help_button.setObjectName("ObjectivesHelp")
        self.help_button.setCheckable(True)
        self.help_button.setToolTip("How objectives and constraints name the results, the "
                                    "functions and the units")
        compact(self.help_button)
        row.addWidget(self.help_button)
        layout.addLayout(row)
        form = QtWidgets.QFormLayout()
        form.setRowWrapPolicy(QtWidgets.QFormLayout.WrapLongRows)
        self.help_text = _wrapped(OBJECTIVES_HELP)
        self.help_text.setObjectName("ObjectivesHelpText")
        self.help_text.setTextFormat(QtCore.Qt.RichText)
        self.help_text.setTextInteractionFlags(QtCore.Qt.TextSelectableByMouse)
        self.help_text.setFrameShape(QtWidgets.QFrame.StyledPanel)
        self.help_text.setVisible(False)
        self.help_button.toggled.connect(self.help_text.setVisible)
        self.objectives = QtWidgets.QPlainTextEdit()
        self.objectives.setObjectName("Objectives")
        self.objectives.setToolTip(OBJECTIVES_TIP)
        self.objectives.setPlaceholderText("one per line")
        self.constraints = QtWidgets.QPlainTextEdit()
        self.constraints.setObjectName("Constraints")
        self.constraints.setToolTip("One per line, a bound with its unit: max(Piston.z) <= "
                                    "180 mm, min(Cam.Fn) > 0 N; the margin is shown in the "
                                    "bound's unit. Names as for the objectives (Help)")
        self.constraints.setPlaceholderText("one per line, a bound with its unit")
        for edit in (self.objectives, self.constraints):
            edit.setMaximumHeight(46)
            edit.setMinimumWidth(60)
            edit.setLineWrapMode(QtWidgets.QPlainTextEdit.WidgetWidth)
        form.addRow("Objectives", self.objectives)
        form.addRow(self.help_text)
        form.addRow("Constraints", self.constraints)
        self.method = QtWidgets.QComboBox()
        self.method.setObjectName("Method")
        self.method.addItems(list(METHODS))
        self.method.setToolTip("grid: every combination of the levels; lhs, sobol: samples in "
                               "the ranges; nelder-mead, powell, de: minimise the first "
                               "objective")
        self.method.currentTextChanged.connect(self._enable_options)
        form.addRow("Method", self.method)
        self.samples = self._spin("Samples", 1, 1_000_000, "lhs, sobol: how many points")
        self.seed = self._spin("Seed", 0, 2 ** 31 - 1, "lhs, sobol, de: the random seed")
        self.max_evaluations = self._spin("MaxEvaluations", 1, 100_000,
                                          "nelder-mead, powell, de: the most runs")
        self.tolerance = QtWidgets.QLineEdit()
        self.tolerance.setObjectName("Tolerance")
        self.tolerance.setToolTip("nelder-mead, powell, de: a fraction of each range")
        self.options_form = form
        for label, widget in (("Samples", self.samples), ("Seed", self.seed),
                              ("Runs", self.max_evaluations), ("Tolerance", self.tolerance)):
            form.addRow(label, widget)
        layout.addLayout(form)
        # the Dask cluster: advanced, shown on demand
        self.cluster_button = QtWidgets.QPushButton("Cluster...")
        self.cluster_button.setObjectName("Cluster")
        self.cluster_button.setCheckable(True)
        self.cluster_button.setToolTip("Where the variants run: a Dask scheduler or a local "
                                       "cluster, its workers")
        compact(self.cluster_button)
        row = QtWidgets.QHBoxLayout()
        row.addWidget(self.cluster_button)
        row.addStretch(1)
        layout.addLayout(row)
        self.cluster = QtWidgets.QWidget()
        self.cluster.setObjectName("ClusterFields")
        cluster = QtWidgets.QFormLayout(self.cluster)
        cluster.setContentsMargins(0, 0, 0, 0)
        cluster.setRowWrapPolicy(QtWidgets.QFormLayout.WrapLongRows)
        self.scheduler = QtWidgets.QLineEdit()
        self.scheduler.setObjectName("Scheduler")
        self.scheduler.setPlaceholderText("local cluster")
        self.scheduler.setToolTip("A Dask scheduler's address (tcp://host:8786); empty: a local "
                                  "cluster started for the study")
        self.workers = self._spin("Workers", 0, 1024, "Local cluster worker processes (0: one "
                                                      "per core)")
        cluster.addRow("Scheduler", self.scheduler)
        cluster.addRow("Workers", self.workers)
        self.cluster.setVisible(False)
        self.cluster_button.toggled.connect(self.cluster.setVisible)
        layout.addWidget(self.cluster)
        compact(self.method)
        return w

    def _spin(self, name, low, high, tip):
        spin = QtWidgets.QSpinBox()
        spin.setObjectName(name)
        spin.setRange(low, high)
        spin.setToolTip(tip)
        spin.setMaximumWidth(110)
        return spin

    def _run_widget(self):
        w = QtWidgets.QWidget()
        w.setWindowTitle("Run")
        layout = QtWidgets.QVBoxLayout(w)
        row = QtWidgets.QHBoxLayout()
        self.run_button = push_button("Run", "Run",
                                      "Check the study and run every variant on Dask; the table is "
                                      "stored in the document at the end",
                                      self.run)
        self.cancel_button = push_button("Cancel", "Cancel",
                                         "Stop the outstanding variants; the table keeps "
                                         "those that finished",
                                         self.cancel)
        self.cancel_button.setEnabled(False)
        row.addWidget(self.run_button)
        row.addWidget(self.cancel_button)
        layout.addLayout(row)
        self.progress = QtWidgets.QProgressBar()
        self.progress.setObjectName("Progress")
        self.progress.setRange(0, 1000)
        self.progress.setValue(0)
        layout.addWidget(self.progress)
        self.status = QtWidgets.QLabel("Ready")
        self.status.setObjectName("Status")
        self.status.setWordWrap(True)
        layout.addWidget(self.status)
        self.messages = QtWidgets.QPlainTextEdit()
        self.messages.setObjectName("Messages")
        self.messages.setReadOnly(True)
        self.messages.setMaximumHeight(90)
        layout.addWidget(self.messages)
        return w

    def _results_widget(self):
        from .plot_panel import FigureCanvasQTAgg, Figure
        w = QtWidgets.QWidget()
        w.setWindowTitle("Results")
        layout = QtWidgets.QVBoxLayout(w)
        self.results = QtWidgets.QTableWidget(0, 0)
        self.results.setObjectName("Results")
        self.results.setEditTriggers(QtWidgets.QAbstractItemView.NoEditTriggers)
        self.results.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectRows)
        self.results.setSelectionMode(QtWidgets.QAbstractItemView.SingleSelection)
        self.results.setMinimumHeight(120)
        self.results.verticalHeader().setVisible(False)
        self.results.horizontalHeader().setMinimumSectionSize(18)
        # a title cut to the column's width shows its start (the whole title on hover)
        self.results.horizontalHeader().setDefaultAlignment(QtCore.Qt.AlignLeft |
                                                            QtCore.Qt.AlignVCenter)
        layout.addWidget(self.results)
        row = QtWidgets.QHBoxLayout()
        self.apply_button = push_button("Apply", "Apply",
                                        "Write the selected variant's values (else the "
                                        "best's) into the document: one undo step",
                                        self.apply)
        self.keep_button = push_button("Keep as Result", "Keep",
                                       "Run the selected variant (else the best) again and store "
                                       "its run as a Result to play and plot",
                                       self.keep)
        self.dock_button = push_button("Plots", "Plots",
                                       "The plots in the plot dock: the first objective against "
                                       "each parameter, and every variant across the parameters "
                                       "and objectives (parallel coordinates)",
                                       self.show_dock)
        row.addWidget(self.apply_button)
        row.addWidget(self.dock_button)
        row.addStretch(1)
        layout.addLayout(row)
        row = QtWidgets.QHBoxLayout()
        row.addWidget(self.keep_button)
        row.addStretch(1)
        layout.addLayout(row)
        self.figure = Figure(figsize=(2.8, 2.4), dpi=80)
        self.canvas = FigureCanvasQTAgg(self.figure)
        self.canvas.setObjectName("Plot")
        self.canvas.setMinimumHeight(200)
        layout.addWidget(self.canvas)
        return w

    def _enable_options(self, *_):
        """Show the options of the method chosen only (the others are hidden, not greyed: the
        panel stays short)."""
        method = self.method.currentText()
        for widget, used in ((self.samples, method in ("lhs", "sobol")),
                             (self.seed, method in ("lhs", "sobol", "de")),
                             (self.max_evaluations, method in OPTIMISERS),
                             (self.tolerance, method in OPTIMISERS)):
            widget.setEnabled(used)
            widget.setVisible(used)
            label = self.options_form.labelForField(widget)
            if label is not None:
                label.setVisible(used)
        if self.scheduler.text().strip() or int(self.workers.value()):
            self.cluster_button.setChecked(True)      # set: shown

    # -- the fields and the Study object ---------------------------------------------------------
    def load(self):
        """Show the Study object's properties."""
        st = self.study
        self.parameters.setRowCount(0)
        for text in st.Parameters:
            if text.strip():
                self.add_row(split_row(text))
        if not self.parameters.rowCount():
            self.add_row()
        self.objectives.setPlainText("\n".join(st.Objectives))
        self.constraints.setPlainText("\n".join(st.Constraints))
        self.method.setCurrentText(st.Method)
        self.samples.setValue(int(st.Samples))
        self.seed.setValue(int(st.Seed))
        self.max_evaluations.setValue(int(st.MaxEvaluations))
        self.tolerance.setText(f"{float(st.Tolerance):g}")
        self.scheduler.setText(st.Scheduler)
        self.workers.setValue(int(st.Workers))
        self._enable_options()

    def add_row(self, cells=None):
        r = self.parameters.rowCount()
        self.parameters.insertRow(r)
        for c, text in enumerate(cells or [""] * len(PARAMETER_COLUMNS)):
            self.parameters.setItem(r, c, QtWidgets.QTableWidgetItem(text))

    def remove_row(self):
        r = self.parameters.currentRow()
        if r < 0:
            r = self.parameters.rowCount() - 1
        if r >= 0:
            self.parameters.removeRow(r)

    def set_parameter(self, row, *cells):
        """Type a row of the parameters table (tests, scripts): the cells from the first."""
        while self.parameters.rowCount() <= row:
            self.add_row()
        for c, text in enumerate(cells):
            self.parameters.item(row, c).setText(str(text))

    def fields(self):
        """The panel's fields as the Study's property values; ValueError naming the field."""
        rows = []
        for r in range(self.parameters.rowCount()):
            cells = [(self.parameters.item(r, c).text() if self.parameters.item(r, c) else "")
                     for c in range(len(PARAMETER_COLUMNS))]
            if any(c.strip() for c in cells):
                rows.append(join_row(len(rows) + 1, cells))
        text = self.tolerance.text().strip()
        try:
            tolerance = float(text)
        except ValueError:
            raise ValueError(f"Study, field Tolerance: '{text}' is not a number "
                             "(a fraction of each range, 1e-3)") from None
        return {"Parameters": rows,
                "Objectives": [x.strip() for x in self.objectives.toPlainText().splitlines()
                               if x.strip()],
                "Constraints": [x.strip() for x in self.constraints.toPlainText().splitlines()
                                if x.strip()],
                "Method": self.method.currentText(), "Samples": self.samples.value(),
                "Seed": self.seed.value(), "MaxEvaluations": self.max_evaluations.value(),
                "Tolerance": tolerance, "Scheduler": self.scheduler.text().strip(),
                "Workers": self.workers.value()}

    def store(self, values):
        """Write the changed fields into the Study (one undo step, recorded as a macro)."""
        st = self.study
        changes = []
        for name, value in values.items():
            old = getattr(st, name)
            if isinstance(value, list):
                if list(old) == value:
                    continue
            elif old == value:
                continue
            changes.append(f"study.{name} = {value!r}")
        if not changes:
            return
        self.doc.openTransaction("Study settings")
        try:
            for statement in [f"study = {_ref(st)}"] + changes:
                FreeCADGui.doCommand(statement)
        except Exception:
            self.doc.abortTransaction()
            raise
        self.doc.commitTransaction()

    # -- running ---------------------------------------------------------------------------------
    def say(self, text, error=False):
        self.messages.appendPlainText(text)
        (FreeCAD.Console.PrintError if error else FreeCAD.Console.PrintMessage)(
            f"MultibodyWB: {text}\n")

    def refuse(self, title, lines):
        """Say why the study does not run: the messages, the report view and a message box."""
        for line in lines:
            self.messages.appendPlainText(line)
        self.status.setText("Not run: the study has problems")
        message(title, f"Study '{self.study.Label}' was not run:", list(lines))

    @property
    def running(self):
        return self.thread is not None

    def _busy(self, busy):
        self.run_button.setEnabled(not busy)
        self.cancel_button.setEnabled(busy)
        self.study_form.setEnabled(not busy)
        self.apply_button.setEnabled(not busy)
        self.keep_button.setEnabled(not busy)
        self.dock_button.setEnabled(not busy)

    def run(self):
        """Store the fields, check the study, start it in a thread. True if it started."""
        if self.running or self.closed:
            return False
        self.messages.clear()
        try:
            values = self.fields()
        except ValueError as exc:
            self.refuse("Study", [str(exc)])
            return False
        try:
            self.store(values)
        except Exception as exc:  # a value FreeCAD refuses: say which, change nothing
            self.refuse("Study", [f"The settings were not stored: {type(exc).__name__}: {exc}"])
            return False
        try:
            self.prepared = dstudy.prepare(self.study)
        except StudyError as exc:
            self.refuse("Study", [str(p) for p in exc.problems])
            return False
        except Exception as exc:  # noqa: BLE001 - a defect: said, never a traceback
            FreeCAD.Console.PrintLog(traceback.format_exc())
            self.refuse("Study", [f"Internal error checking the study: {type(exc).__name__}: "
                                  f"{exc}"])
            return False
        self.cancelled.clear()
        self.state = {"done": 0, "total": 0, "workers": 0, "rows": []}
        self.started = time.perf_counter()
        executor = dstudy.default_executor(self.prepared)
        self.executor = executor
        n = executor.n_workers
        where = self.prepared.scheduler or (f"a local cluster of {n} workers" if n else
                                            "a local cluster, a worker per core")
        self.status.setText(f"Starting the workers: {where}...")
        self.say(f"Study '{self.study.Label}': {self.prepared.study.method}, "
                 f"{len(self.prepared.params)} parameter(s), on {where}")
        self.progress.setValue(0)
        self._busy(True)
        self.thread = threading.Thread(target=self._work, name="MultibodyWB study", daemon=True)
        self.thread.start()
        self.timer.start()
        return True

    def _work(self):
        """The study's thread: run_study, variants made on the GUI thread."""
        def progress(done, total, row):
            self.state["done"], self.state["total"] = done, total
            if not self.state["workers"]:
                try:
                    self.state["workers"] = self.executor.workers
                except Exception:  # noqa: BLE001 - only shown
                    pass
            self.state["rows"].append(row)
        try:
            self.state["table"] = dstudy.execute(self.prepared, self.executor, progress,
                                                 self.cancelled.is_set, self.on_gui)
        except BaseException as exc:  # noqa: BLE001 - handed to the GUI thread
            self.state["error"] = exc
            self.state["trace"] = traceback.format_exc()
        finally:
            try:
                self.executor.close()            # the local cluster ends with the study
            except Exception:  # noqa: BLE001 - nothing more to do with it
                pass
            self.state["finished"] = True

    def on_gui(self, function):
        """Call ``function()`` on the GUI thread (from the study's thread) and return its
        result; raises RuntimeError if the panel closes meanwhile."""
        box = {"event": threading.Event()}
        self.requests.put((function, box))
        self.relay.requested.emit()
        while not box["event"].wait(0.05):
            if self.closed:
                raise RuntimeError("the Study panel was closed")
        if "error" in box:
            raise box["error"]
        return box["value"]

    def _serve(self):
        """Run the study thread's requests (on the GUI thread); once the panel is closed (the
        document put back), refuse them."""
        while True:
            try:
                function, box = self.requests.get_nowait()
            except queue.Empty:
                return
            try:
                if self.closed:
                    raise RuntimeError("the Study panel was closed")
                box["value"] = function()
            except BaseException as exc:  # noqa: BLE001 - raised in the study's thread
                box["error"] = exc
            box["event"].set()

    def cancel(self):
        """Stop the outstanding variants (the table keeps those that finished)."""
        if self.running:
            self.cancelled.set()
            self.status.setText("Cancelling...")

    def poll(self):
        """Serve the study's thread, show its progress, handle its end (timer slot)."""
        if self.closed or self.closing:
            # closing: cleanup waits for the thread and stores nothing (a recompute there may
            # turn the event loop, and this slot with it: FreeCAD 1.0's progress indicator)
            if self.closed:
                self.timer.stop()
            return
        self._serve()
        state = self.state
        done, total = state.get("done", 0), state.get("total", 0)
        if total:
            self.progress.setValue(int(round(1000 * min(done, total) / total)))
            workers, elapsed = state.get("workers") or 0, time.perf_counter() - self.started
            what = ("Cancelling: " if self.cancelled.is_set() else "") + \
                ("run" if self.prepared.study.method in OPTIMISERS else "variant")
            self.status.setText(f"{what} {done} of {total}, {workers} worker"
                                f"{'s' if workers != 1 else ''}, {elapsed:.1f} s")
        rows = state.get("rows", [])
        now = time.perf_counter()
        if len(rows) != self.shown_rows and now - self.shown_at >= 0.5:
            self.shown_rows, self.shown_at = len(rows), now
            self.fill(self.live_table(list(rows)))
        if not state.get("finished"):
            return
        self._serve()
        self.timer.stop()
        self.thread = None
        try:
            self._finish()
        finally:
            self._busy(False)
        for callback in list(self.finished_callbacks):
            callback(self)

    def _finish(self):
        state = self.state
        table = state.get("table")
        try:
            dstudy.finish(self.prepared, table)
        except Exception as exc:  # noqa: BLE001 - said, the document was put back first
            self.say(f"The table could not be stored: {type(exc).__name__}: {exc}", error=True)
        else:
            if table is not None and not table.cancelled:    # the macro line repeating it
                with dstudy.recorded_run(self.study, table):
                    FreeCADGui.addModule("MultibodyWB.document.study")
                    FreeCADGui.doCommand(f"MultibodyWB.document.study.run({_ref(self.study)})")
        if table is None:
            exc = state.get("error")
            self.progress.setValue(0)
            if isinstance(exc, StudyError):
                self.refuse("Study", [str(p) for p in exc.problems])
            else:
                FreeCAD.Console.PrintLog(state.get("trace", ""))
                self.status.setText("Failed; the document is as it was")
                self.say(f"The study failed: {type(exc).__name__}: {exc}", error=True)
            return
        ok = sum(1 for r in table.rows if r.status == dstudy.OK)
        self.status.setText(f"{'Cancelled' if table.cancelled else 'Done'}: {ok} of "
                            f"{len(table.rows)} variants ran on {table.workers} worker"
                            f"{'s' if table.workers != 1 else ''} in {table.wall:.1f} s; the "
                            "table is stored in the Study")
        best = table.best
        for line in table.summary().splitlines():
            if line.startswith("best:") and best is not None:    # in the document's units
                at = ", ".join(f"{p.path} = {dstudy.shown(v, u)}" for p, v, u in
                               zip(table.study.parameters, best.values, table.units))
                si = dstudy.objective_unit(table.study.objectives[0])
                value = (dstudy.shown(best.objectives[0], si) if si else
                         f"{best.objectives[0]:.6g}")
                line = (f"best: variant {best.index}: {table.study.objectives[0]} = "
                        f"{value} at {at}")
            self.say(line)
        self.show_table()

    # -- results ---------------------------------------------------------------------------------
    def live_table(self, rows):
        """The variants run so far (the study's thread's rows) as a stored table."""
        p = self.prepared
        found = [dstudy.StoredRow(r.index, tuple(r.values), tuple(r.objectives),
                                  tuple(r.constraints), tuple(r.margins), r.feasible, r.status,
                                  r.error, r.wall) for r in sorted(rows, key=lambda r: r.index)]
        return dstudy.StoredTable([q.parameter.path for q in p.params], list(p.units),
                                  list(p.study.objectives), list(p.study.constraints), found)

    def show_table(self):
        """Fill the results table and the plot from the Study's stored table."""
        self.shown_rows = 0
        self.fill(dstudy.stored_table(self.study))

    def fill(self, kept):
        """Fill the results table and the plot from ``kept`` (a StoredTable or None)."""
        self.kept = kept
        self.results.clear()
        self.results.setRowCount(0)
        if kept is None:
            self.results.setColumnCount(0)
            self.figure.clear()
            self.canvas.draw_idle()
            return
        scales = _scales(kept)
        objs, margins = dstudy.objective_scales(kept), dstudy.margin_scales(kept)
        headers = ["#"] + [_titled(p, label) for p, (_, label) in zip(kept.paths, scales)]
        headers += [_titled(o, label) for o, (_, label) in zip(kept.objectives, objs)]
        headers += [_titled(f"margin: {c}", label)
                    for c, (_, label) in zip(kept.constraints, margins)]
        headers += ["status"]
        self.results.setColumnCount(len(headers))
        self.results.setHorizontalHeaderLabels(headers)
        self.results.setRowCount(len(kept.rows))
        bold = QtGui.QFont()
        bold.setBold(True)
        for i, r in enumerate(kept.rows):
            cells = [str(r.index)]
            cells += [f"{v * f:.6g}" for v, (f, _) in zip(r.values, scales)]
            cells += [_number(v * f) for v, (f, _) in zip(r.objectives, objs)]
            cells += [_number(v * f) for v, (f, _) in zip(r.margins, margins)]
            status = r.status if r.status != dstudy.OK or r.feasible else "ok (infeasible)"
            cells += [status if not r.error else f"{r.status}: {r.error}"]
            for c, text in enumerate(cells):
                item = QtWidgets.QTableWidgetItem(text)
                item.setData(QtCore.Qt.UserRole, r.index)
                tip = f"{headers[c]}: {text}"
                if c == len(cells) - 1 and math.isfinite(r.wall):
                    tip += f" (the run took {r.wall:.3g} s)"
                item.setToolTip(r.error or tip)
                if r.index == kept.best:
                    item.setFont(bold)
                elif r.status != dstudy.OK:
                    item.setForeground(QtGui.QBrush(QtGui.QColor("#cc0000")))
                elif not r.feasible:
                    item.setForeground(QtGui.QBrush(QtGui.QColor("#888a85")))
                self.results.setItem(i, c, item)
        for c, text in enumerate(headers):        # the whole expression on hover
            self.results.horizontalHeaderItem(c).setToolTip(text)
        self._fit_columns()
        self.plot(kept, scales)

    def _fit_columns(self):
        """Every column in the panel's width: as wide as its values, the titles cut (the whole
        title on hover) when the values' widths leave too little for them."""
        table = self.results
        table.resizeColumnsToContents()
        n = table.columnCount()
        if not n:
            return
        # the default task view's width until the table is shown (then its own)
        # room for a vertical scroll bar either way (more rows come as the study runs)
        scroll = table.style().pixelMetric(QtWidgets.QStyle.PM_ScrollBarExtent)
        available = (table.width() - 2 * table.frameWidth() if table.isVisible() else
                     getattr(qt, "TASK_VIEW_WIDTH", 244) - 30) - scroll - 2
        available = max(100, available)
        metrics = table.fontMetrics()
        values = []
        for c in range(n):
            widest = max((metrics.horizontalAdvance(table.item(r, c).text())
                          for r in range(table.rowCount()) if table.item(r, c)), default=0)
            values.append(min(widest, 90) + 10)
        total = sum(table.columnWidth(c) for c in range(n))
        if total <= available:
            return
        spare = max(0, available - sum(values))
        wants = [max(0, table.columnWidth(c) - values[c]) for c in range(n)]
        share = sum(wants) or 1
        for c in range(n):
            table.setColumnWidth(c, values[c] + int(spare * wants[c] / share))

    def plot(self, kept, scales):
        """The first objective against each parameter (ok runs; the best one marked)."""
        draw_panel_figure(self.figure, kept, scales)
        self.canvas.draw_idle()

    def show_dock(self):
        """The study's plots in the main window's dock :data:`DOCK_NAME` (made once, reused):
        the first objective against each parameter and the parallel coordinates of every
        variant. Returns the dock's figure (None: no table)."""
        from .plot_panel import Figure, FigureCanvasQTAgg, NavigationToolbar2QT
        from .qt import dock
        kept = dstudy.stored_table(self.study)
        if kept is None or not kept.rows:
            message("Study", "There is nothing to plot: run the study first.")
            return None
        widget = QtWidgets.QWidget()
        widget.setObjectName("MultibodyStudyPlotsWidget")
        layout = QtWidgets.QVBoxLayout(widget)
        figure = Figure(figsize=(9.0, 3.2), dpi=90)
        canvas = FigureCanvasQTAgg(figure)
        layout.addWidget(NavigationToolbar2QT(canvas, widget))
        layout.addWidget(canvas)
        draw_dock_figure(figure, kept)
        canvas.draw_idle()
        self.dock_figure = figure
        mw = FreeCADGui.getMainWindow()
        new_dock = mw.findChild(QtWidgets.QDockWidget, DOCK_NAME) is None
        d = dock(DOCK_NAME, f"Multibody study: {self.study.Label}", widget)
        d.setWindowTitle(f"Multibody study: {self.study.Label}")
        if new_dock:
            # as the run plots: a tab of its own beside the report view, 45 % of the height
            report = mw.findChild(QtWidgets.QDockWidget, "Report view")
            if report is not None and report.isVisible() and not report.isFloating() \
                    and mw.dockWidgetArea(report) == mw.dockWidgetArea(d):
                mw.tabifyDockWidget(report, d)
                d.show()
                d.raise_()
            mw.resizeDocks([d], [max(320, int(mw.height() * 0.45))], QtCore.Qt.Vertical)
        return figure

    def selected_index(self):
        """The variant of the selected row, else the best (None: neither)."""
        items = self.results.selectedItems()
        if items:
            return int(items[0].data(QtCore.Qt.UserRole))
        kept = dstudy.stored_table(self.study)
        return kept.best if kept is not None and kept.best >= 0 else None

    def apply(self):
        """Write the selected (else the best) variant into the document: one undo step."""
        index = self.selected_index()
        if index is None:
            message("Study", "There is no variant to apply: run the study first.")
            return False
        FreeCADGui.addModule("MultibodyWB.document.study")
        try:
            FreeCADGui.doCommand(f"MultibodyWB.document.study.apply_variant({_ref(self.study)}, "
                                 f"{index})")
        except Exception as exc:  # a parameter that no longer resolves
            message("Study", f"Variant {index} was not applied: {exc}")
            return False
        self.status.setText(f"Variant {index} applied to the document (Undo takes it back)")
        self.say(f"Variant {index} of Study '{self.study.Label}' applied")
        return True

    def keep(self):
        """Run the selected (else the best) variant here and store it as a Result."""
        index = self.selected_index()
        if index is None:
            message("Study", "There is no variant to keep: run the study first.")
            return None
        QtWidgets.QApplication.setOverrideCursor(QtCore.Qt.WaitCursor)
        try:
            self.result_object = dstudy.keep_variant(self.study, index)
        except Exception as exc:  # noqa: BLE001 - a variant that does not run: said
            QtWidgets.QApplication.restoreOverrideCursor()
            message("Study", f"Variant {index} was not kept: {type(exc).__name__}: {exc}")
            return None
        QtWidgets.QApplication.restoreOverrideCursor()
        self.say(f"Variant {index} kept as '{self.result_object.Label}' (Play results plays it)")
        return self.result_object

    # -- task dialog interface -------------------------------------------------------------------
    def is_open(self):
        return not self.closed

    def cleanup(self):
        """Cancel a running study (the document is put back), stop watching the document."""
        global current
        if self.closed:
            return
        self.closing = True
        if self.thread is not None:
            self.cancelled.set()
            deadline = time.monotonic() + 5.0
            while self.thread.is_alive() and time.monotonic() < deadline:
                self._serve()
                time.sleep(0.02)
            try:
                if self.prepared is not None and object_alive(self.study):
                    self.prepared.variants.restore()
            except Exception:  # noqa: BLE001 - the document may be closing
                pass
        self.closed = True
        self.timer.stop()
        self.thread = None
        self.watch.detach()
        if current is self:
            current = None

    def document_closing(self):
        self.cancelled.set()
        self.timer.stop()
        later(self.close)

    def object_deleted(self, obj):
        if obj == self.study:
            self.cancelled.set()
            later(self.close)


def _wrapped(text):
    """A label that wraps its text to the panel's width."""
    label = QtWidgets.QLabel(text)
    label.setWordWrap(True)
    return label


def open_panel(study_obj):
    """Show the panel of ``study_obj`` (the one open already, else a new one)."""
    from .views import ensure_views
    from .watch import close_task_dialog
    if current is not None and not current.closed and current.study == study_obj \
            and FreeCADGui.Control.activeDialog():
        return current
    ensure_views(study_obj.Document)
    close_task_dialog()
    panel = StudyPanel(study_obj)
    FreeCADGui.Control.showDialog(panel)
    return panel
