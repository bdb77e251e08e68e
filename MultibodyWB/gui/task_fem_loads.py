"""The FEM loads task panel: pick a run, a body and an instant; preview the loads; make the FEM
analysis (:mod:`MultibodyWB.document.fem_loads`).

- **Result** and **Body**: a stored run of the mechanism and one of its moving bodies;
- **Instant**: a time (with its unit, ``17.5 ms``) or the peak of a quantity (a force's
  magnitude, a hinge's reaction force or torque, a body's acceleration), with its curve over the
  run and the chosen instant marked;
- **Preview** lists the loads on the body at that instant (element, kind, force and torque in the
  user's units, the face each goes on) with the equilibrium check, and draws them as arrows on
  the body where it is drawn (hinges cyan, forces and the inertia load red-orange); loads that
  cannot be placed on a face are named with the nearest faces;
- **Add instant** keeps the instant in the list of analyses to make (the peak gas force and the
  peak inertia load of a connecting rod: two analyses);
- **Create analysis** makes one FEM analysis per listed instant (or the one shown), meshes it and
  solves it with CalculiX when it is installed, as one undo step recorded in the macro; the von
  Mises stress is shown on the mesh (FEM's result object; double-click it for FEM's result
  viewer). Gmsh and CalculiX run in a QProcess with the GUI free: a progress bar and the stage
  ("meshing with Gmsh... 2 s") show, and **Cancel** kills the program at once and aborts the
  transaction (nothing made stays). The document work between them (writing their input,
  reading the mesh and the results: about 1-2 s each at 6000 nodes) is done in the GUI thread,
  its stage shown first.

The arrows are a Coin overlay of the 3D view removed when the panel closes.
"""

import __main__

import FreeCAD
import FreeCADGui
import numpy as np

from ..document import fem_loads, runs
from ..objects import units
from ..objects.base import members
from ..objects.body import TYPE as BODY
from .qt import QtCore, QtWidgets, compact, push_button
from .watch import DocumentWatch, TaskPanel, later, track

#: Object name of the panel's widget (tests find it by this name).
PANEL_NAME = "MultibodyFemLoadsPanel"
#: Columns of the loads table: title, tool tip.
COLUMNS = (
    ("Load", "The element the load comes from: a hinge's reaction, a force, gravity, the "
             "d'Alembert inertia load"),
    ("Kind", "hinge, force, contact, stop, gravity, inertia"),
    ("|F|", "Size of the force"),
    ("Force", "The force on the body, global axes (the body as drawn)"),
    ("Torque", "The couple with it (hinge torques; for inertia -(J_C alpha + omega x J_C "
               "omega))"),
    ("Face", "The face of the analysed solid the load goes on"),
)

#: The panel being shown, for tests and the commands.
current = None
track(lambda: current)


def _bodies(mechanism):
    ground = mechanism.Ground
    return [b for b in members(mechanism, BODY) if b is not ground]


class FemLoadsPanel(TaskPanel):
    """The FEM loads panel of one mechanism (see the module doc)."""

    def __init__(self, mechanism, result=None, body=None):
        global current
        self.mechanism = mechanism
        self.doc = mechanism.Document
        self.closed = False
        self.document_gone = False
        self.overlay = None
        self.inst = None
        self.placements = []
        self.instants = []           # (result, body, time, peak) to analyse
        self.made = []               # (Analysis, Check or None) made by Create
        self.run = None              # the Create analysis under way (_Run), or None
        self.form = self._widget()
        self.watch = DocumentWatch(self.doc, self)
        self.form.destroyed.connect(lambda *_: self.cleanup())
        current = self
        self._fill(result, body)

    # -- widgets -------------------------------------------------------------------------------
    def _widget(self):
        w = QtWidgets.QWidget()
        w.setObjectName(PANEL_NAME)
        w.setWindowTitle("FEM loads")
        layout = QtWidgets.QVBoxLayout(w)
        form = QtWidgets.QFormLayout()
        form.setRowWrapPolicy(QtWidgets.QFormLayout.WrapLongRows)
        self.result_box = QtWidgets.QComboBox()
        self.result_box.setObjectName("Result")
        self.result_box.setToolTip("The stored run the loads are taken from")
        self.body_box = QtWidgets.QComboBox()
        self.body_box.setObjectName("Body")
        self.body_box.setToolTip("The body to analyse (its largest solid is meshed)")
        form.addRow("Result", self.result_box)
        form.addRow("Body", self.body_box)
        self.by_time = QtWidgets.QRadioButton("Time")
        self.by_time.setObjectName("ByTime")
        self.time_edit = QtWidgets.QLineEdit()
        self.time_edit.setObjectName("Time")
        self.time_edit.setToolTip("The instant, with its unit (17.5 ms); the nearest stored "
                                  "output time is taken")
        self.by_peak = QtWidgets.QRadioButton("Peak of")
        self.by_peak.setObjectName("ByPeak")
        self.peak_box = QtWidgets.QComboBox()
        self.peak_box.setObjectName("Peak")
        self.peak_box.setEditable(True)
        self.peak_box.setToolTip("A force's magnitude (GasForce.magnitude), a vector's length "
                                 "(|MainBearing.F|) or any result column (Rod.ax): the "
                                 "instant where it is largest")
        form.addRow(self.by_time, self.time_edit)
        form.addRow(self.by_peak, self.peak_box)
        self.mesh_edit = QtWidgets.QLineEdit()
        self.mesh_edit.setObjectName("MeshSize")
        self.mesh_edit.setToolTip("Largest element size of the Gmsh mesh (empty: half the "
                                  "solid's thinnest extent)")
        form.addRow("Mesh size", self.mesh_edit)
        layout.addLayout(form)
        self.by_peak.setChecked(True)
        self.by_time.toggled.connect(self._mode_changed)
        self.peak_box.currentIndexChanged.connect(lambda *_: self._draw_curve())
        # a name longer than the narrow box is shown from its start, not its end
        self.peak_box.currentIndexChanged.connect(
            lambda *_: self.peak_box.lineEdit().setCursorPosition(0))
        self.result_box.currentIndexChanged.connect(lambda *_: self._result_changed())
        self.body_box.currentIndexChanged.connect(lambda *_: self._clear_preview())
        self.curve = self._canvas()
        buttons = QtWidgets.QHBoxLayout()
        self.preview_button = push_button("Preview", "Preview",
                                          "Collect the loads on the body at the instant: table, "
                                          "equilibrium check and arrows in the 3D view",
                                          self.preview)
        self.add_button = push_button("Add instant", "AddInstant",
                                      "Keep this instant: Create analysis makes one analysis per "
                                      "instant listed",
                                      self.add_instant)
        self.create_button = push_button("Create analysis", "CreateAnalysis",
                                         "Make the FEM analysis (FreeCAD's FEM objects) of every "
                                         "listed instant, or of the one shown; mesh and solve it "
                                         "with CalculiX when installed",
                                         self.create)
        # two rows: the three buttons side by side are wider than the default combo view
        for b in (self.preview_button, self.add_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        self.cancel_button = push_button("Cancel", "CancelCreate",
                                         "Stop Gmsh or CalculiX now and undo what Create "
                                         "analysis made so far (nothing stays)",
                                         self.cancel)
        buttons = QtWidgets.QHBoxLayout()
        buttons.addWidget(self.create_button)
        buttons.addWidget(self.cancel_button)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        # while Create analysis runs: its stage and the seconds it has been at it
        self.progress = QtWidgets.QProgressBar()
        self.progress.setObjectName("Progress")
        self.progress.setTextVisible(False)
        self.progress.setMaximumHeight(12)
        self.status = QtWidgets.QLabel()
        self.status.setObjectName("Status")
        self.status.setWordWrap(True)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        for x in (self.cancel_button, self.progress, self.status):
            x.setVisible(False)
        compact(self.result_box, self.body_box, self.peak_box)
        self.headline = QtWidgets.QLabel()
        self.headline.setObjectName("Headline")
        self.headline.setWordWrap(True)
        layout.addWidget(self.headline)
        self.table = QtWidgets.QTreeWidget()
        self.table.setObjectName("Loads")
        self.table.setRootIsDecorated(False)
        self.table.setAlternatingRowColors(True)
        self.table.setColumnCount(len(COLUMNS))
        self.table.setHeaderLabels([t for t, _ in COLUMNS])
        for k, (_, tip) in enumerate(COLUMNS):
            self.table.headerItem().setToolTip(k, tip)
        self.table.setMinimumHeight(130)
        layout.addWidget(self.table)
        if self.curve is not None:        # under the table: the loads come first in view
            layout.addWidget(self.curve)
        self.instant_list = QtWidgets.QListWidget()
        self.instant_list.setObjectName("Instants")
        self.instant_list.setToolTip("Instants to analyse (Create analysis makes one each)")
        self.instant_list.setMaximumHeight(70)
        layout.addWidget(self.instant_list)
        self.note = QtWidgets.QLabel()
        self.note.setObjectName("Note")
        self.note.setWordWrap(True)
        self.note.setTextInteractionFlags(QtCore.Qt.TextSelectableByMouse)
        layout.addWidget(self.note)
        return w

    def _canvas(self):
        try:
            from .plot_panel import FigureCanvasQTAgg
            from matplotlib.figure import Figure
        except Exception:  # no matplotlib Qt backend: the panel works without the curve
            return None
        self.figure = Figure(figsize=(2.8, 1.5), dpi=80)
        self.axes = self.figure.add_subplot(111)
        canvas = FigureCanvasQTAgg(self.figure)
        canvas.setObjectName("Curve")
        canvas.setMinimumHeight(110)
        canvas.setMinimumWidth(120)
        return canvas

    # -- choices ---------------------------------------------------------------------------------
    def _fill(self, result, body):
        results = runs.result_objects(self.mechanism)
        self._results = results
        self.result_box.blockSignals(True)
        self.result_box.clear()
        for r in results:
            self.result_box.addItem(r.Label)
        if result in results:
            self.result_box.setCurrentIndex(results.index(result))
        elif results:
            self.result_box.setCurrentIndex(len(results) - 1)
        self.result_box.blockSignals(False)
        self._bodies = _bodies(self.mechanism)
        self.body_box.blockSignals(True)
        self.body_box.clear()
        for b in self._bodies:
            self.body_box.addItem(b.Label)
        if body in self._bodies:
            self.body_box.setCurrentIndex(self._bodies.index(body))
        self.body_box.blockSignals(False)
        self._result_changed()

    def result(self):
        k = self.result_box.currentIndex()
        return self._results[k] if 0 <= k < len(self._results) else None

    def body(self):
        k = self.body_box.currentIndex()
        return self._bodies[k] if 0 <= k < len(self._bodies) else None

    def _result_changed(self):
        result = self.result()
        self.peak_box.blockSignals(True)
        self.peak_box.clear()
        if result is not None:
            try:
                from ..objects import export
                model = export.collect(self.mechanism).model
                self._model, self._results_table = model, runs.load(result)
                for q in fem_loads.quantities(model, self._results_table):
                    self.peak_box.addItem(q)
            except Exception as exc:  # a run that cannot be read: said, nothing to pick
                self.note.setText(f"{type(exc).__name__}: {exc}")
                self._model = self._results_table = None
        self.peak_box.blockSignals(False)
        self.peak_box.lineEdit().setCursorPosition(0)
        if not self.time_edit.text() and getattr(self, "_results_table", None) is not None:
            t = self._results_table.time
            self.time_edit.setText(units.user_text(units.from_si(float(t[-1]) / 2, "s"), "s"))
        self._clear_preview()
        self._draw_curve()

    def _mode_changed(self):
        self._draw_curve()

    def when(self):
        """``(time in s or None, peak spec or None)`` of the instant chosen."""
        if self.by_peak.isChecked():
            return None, self.peak_box.currentText().strip() or None
        return units.to_si(units.parse(self.time_edit.text(), "s"), "s"), None

    def _draw_curve(self, row=None):
        if self.curve is None:
            return
        self.axes.clear()
        table = getattr(self, "_results_table", None)
        spec = self.peak_box.currentText().strip()
        if table is not None and spec:
            try:
                values, unit = fem_loads.il.quantity(self._model, table, spec)
                t_ms = table.time * 1000.0
                self.axes.plot(t_ms, values, lw=1.2)
                self.axes.set_xlabel("t [ms]", fontsize=8)
                self.axes.set_ylabel(f"{spec} [{unit}]", fontsize=8)
                if row is not None:
                    self.axes.axvline(t_ms[row], color="tab:red", lw=1.0)
                    self.axes.plot([t_ms[row]], [values[row]], "o", color="tab:red")
            except KeyError:
                pass
        self.axes.tick_params(labelsize=7)
        self.figure.tight_layout()
        self.curve.draw()

    # -- preview -----------------------------------------------------------------------------------
    def _clear_preview(self):
        self.inst = None
        self.placements = []
        self.table.clear()
        self.headline.setText("")
        if self.overlay is not None:
            self.overlay.set_arrows([])

    def preview(self):
        """Collect the loads at the instant chosen; fill the table, draw the arrows."""
        result, body = self.result(), self.body()
        if result is None or body is None:
            self.note.setText("Pick a stored run and a body (Simulate first if there is none).")
            return None
        try:
            time, peak = self.when()
            inst = fem_loads.instant(result, body, time=time, peak=peak)
            placements = fem_loads.place(inst)
        except Exception as exc:  # bad time text, unknown quantity, a run not matching
            self._clear_preview()
            self.note.setText(f"{type(exc).__name__}: {exc}")
            self.note.setStyleSheet("color: #a40000;")
            return None
        self.inst, self.placements = inst, placements
        faces = {id(p.load): p.face or "?" for p in placements}
        loads = inst.drawn
        self.table.clear()
        for ld in loads.loads:
            item = QtWidgets.QTreeWidgetItem([
                ld.name, ld.kind,
                units.user_text(units.from_si(float(np.linalg.norm(ld.force)), "N"), "N"),
                units.user_vector_text([units.from_si(x, "N") for x in ld.force], "N"),
                units.user_vector_text([units.from_si(x, "N*m") for x in ld.torque], "N*m")
                if np.any(np.abs(ld.torque) > 1e-9 * max(1.0, loads.scale()[1])) else "",
                faces.get(id(ld), "" if ld.kind in ("gravity", "inertia") else "-")])
            item.setToolTip(0, ld.detail)
            for k in range(1, len(COLUMNS)):       # a cut cell read whole on hover
                if item.text(k):
                    item.setToolTip(k, f"{COLUMNS[k][0]}: {item.text(k)}")
            self.table.addTopLevelItem(item)
        for k in range(len(COLUMNS)):
            self.table.resizeColumnToContents(k)
        rf, rm = loads.residual()
        self.headline.setText(
            f"{body.Label} at t = {units.user_text(units.from_si(inst.loads.time, 's'), 's')}"
            f" ({inst.how}): {len(loads.loads)} loads; equilibrium: sum of forces "
            f"{rf * 100:.2g} %, of moments {rm * 100:.2g} % of the largest")
        problems = [p.problem for p in placements if p.problem]
        notes = problems + list(loads.notes)
        self.note.setText("\n".join(notes) if notes else
                          "Every load at a marker goes on a face of "
                          f"'{fem_loads.analysed_solid(body).Label}'.")
        self.note.setStyleSheet("color: #a40000;" if problems else "")
        self._draw_arrows()
        self._draw_curve(inst.loads.row)
        return inst

    def _draw_arrows(self):
        from .overlays import Overlay
        if self.overlay is None:
            gui_doc = FreeCADGui.getDocument(self.doc.Name)
            view = gui_doc.ActiveView if gui_doc is not None else None
            if view is None or not hasattr(view, "getSceneGraph"):
                return
            self.overlay = Overlay(view)
        loads = self.inst.drawn
        hinges = [ld for ld in loads.loads if ld.kind == "hinge"]
        others = [ld for ld in loads.loads if ld.kind != "hinge"]
        self.overlay.set_arrows([ld.name for ld in hinges], "reactions")
        self.overlay.set_arrows([ld.name for ld in others], "contacts")
        solid = fem_loads.analysed_solid(self.body())
        size = solid.Shape.BoundBox.DiagonalLength
        largest = max(float(np.linalg.norm(ld.force)) for ld in loads.loads) or 1.0
        per_newton = 0.5 * size / largest
        for group, lds in (("reactions", hinges), ("contacts", others)):
            for ld in lds:
                # the arrow ends at the point of application: pushing on the body
                tail = ld.point * 1000.0 - ld.force * per_newton
                self.overlay.update_arrow(ld.name, tail, ld.force, per_newton, size / 150.0,
                                          group)

    # -- instants and analyses -------------------------------------------------------------------
    def add_instant(self):
        """Keep the instant chosen (previewed first) for Create analysis."""
        inst = self.preview()
        if inst is None:
            return
        time, peak = self.when()
        self.instants.append((self.result(), self.body(), time, peak))
        self.instant_list.addItem(
            f"{self.body().Label}: t = "
            f"{units.user_text(units.from_si(inst.loads.time, 's'), 's')} ({inst.how})")

    def create(self):
        """Make (and mesh and solve) the analyses, one undo step recorded in the macro; Gmsh and
        CalculiX run in a QProcess, the GUI free, with the stage shown and Cancel at hand (the
        analyses are in :attr:`made` when :attr:`run` is None again)."""
        if self.run is not None:
            return []
        todo = list(self.instants)
        if not todo:
            if self.preview() is None:
                return []
            time, peak = self.when()
            todo = [(self.result(), self.body(), time, peak)]
        mesh = self.mesh_edit.text().strip()
        try:
            mesh_size = units.parse(mesh, "mm") if mesh else None
        except Exception as exc:  # a text that is no length
            self.note.setText(f"Mesh size: {exc}")
            return []
        doc_ref = f"App.getDocument('{self.doc.Name}')"
        calls = []
        for result, body, time, peak in todo:
            args = [f"{doc_ref}.getObject('{result.Name}')",
                    f"{doc_ref}.getObject('{body.Name}')"]
            args.append(f"peak={peak!r}" if peak else f"time={time!r}")
            if mesh_size:
                args.append(f"mesh_size={float(mesh_size)!r}")
            calls.append(", ".join(args))
        FreeCADGui.addModule("MultibodyWB.document.fem_loads")
        self.doc.openTransaction("Create FEM analysis")
        self.run = _Run(self, calls)
        self._busy(True)
        self.run.next_analysis()
        return []

    def cancel(self):
        """The Cancel button: stop the program running, undo what was made; say so."""
        run = self.run
        if run is None:
            return
        what, job = run.what, run.job
        run.stop()
        self.doc.abortTransaction()
        if job is not None:
            FreeCADGui.doCommand("_fem_job.cancel()")     # the macro: nothing stays either
        self._busy(False)
        self.note.setText(f"Cancelled while {what}: nothing was made; the document is as it "
                          "was before Create analysis.")
        self.note.setStyleSheet("color: #a40000;")

    def _busy(self, on):
        """Show the progress and Cancel, the other controls greyed, while a Create runs."""
        for x in (self.cancel_button, self.progress, self.status):
            x.setVisible(on)
        for x in (self.preview_button, self.add_button, self.create_button, self.result_box,
                  self.body_box, self.by_time, self.by_peak, self.time_edit, self.peak_box,
                  self.mesh_edit):
            x.setEnabled(not on)
        if on:
            self.note.setText("")
            self.note.setStyleSheet("")
        else:
            self.run = None

    def _failed(self, exc):
        """A step failed (placing, meshing, solving): nothing stays."""
        self.run.stop()
        self.doc.abortTransaction()
        self._busy(False)
        self.note.setText(f"{type(exc).__name__}: {exc}")
        self.note.setStyleSheet("color: #a40000;")

    def _done(self, made):
        self.doc.commitTransaction()
        self._busy(False)
        self.made += made
        lines = []
        for an, check in made:
            self._show_result(an, check)
            line = f"{an.analysis.Label}: {len(an.forces)} force constraint(s)"
            if check is not None:
                line += (f"; support reaction {check.relative * 100:.2g} % of the largest "
                         f"load; max von Mises {check.max_von_mises:.4g} MPa")
            elif an.mesh.FemMesh.NodeCount:
                line += f"; meshed ({an.mesh.FemMesh.NodeCount} nodes), not solved"
            lines.append(line)
        self.note.setText("\n".join(lines))
        self.note.setStyleSheet("")
        self.instants.clear()
        self.instant_list.clear()

    def _show_result(self, an, check):
        """The von Mises stress on the mesh (as FEM's result viewer colours it); the solid
        hidden."""
        if check is None:
            return
        try:
            mesh = getattr(check.result, "Mesh", None) or an.mesh     # FEM's result mesh
            for m in {an.mesh, mesh}:
                m.ViewObject.Visibility = m is mesh
            mesh.ViewObject.setNodeColorByScalars(check.result.NodeNumbers,
                                                  check.result.vonMises)
            an.solid.ViewObject.Visibility = False
        except Exception as exc:  # a view provider of another FreeCAD version
            FreeCAD.Console.PrintWarning(f"MultibodyWB: FEM result colours: {exc}\n")

    # -- FreeCAD's task dialog ---------------------------------------------------------------------
    def is_open(self):
        return not self.closed

    def cleanup(self):
        global current
        if self.closed:
            return
        self.closed = True
        if self.run is not None:        # closed while Create runs: stopped, nothing stays
            self.run.stop()
            self.run = None
            if not self.document_gone:
                self.doc.abortTransaction()
        self.watch.detach()
        if self.overlay is not None and not self.document_gone:
            try:
                self.overlay.remove()
            except (ReferenceError, RuntimeError):
                pass
        self.overlay = None
        if current is self:
            current = None

    def document_closing(self):
        self.document_gone = True
        later(self.close)

    def object_deleted(self, obj):
        try:
            ours = obj == self.mechanism
        except (ReferenceError, RuntimeError):
            ours = True
        if ours and not self.closed:
            later(self.close)


class _Run:
    """One Create analysis under way: the analyses to make (argument texts of
    :class:`~MultibodyWB.document.fem_loads.Creation`), made one after the other; each made in
    the GUI thread through ``Gui.doCommand`` (recorded in the macro: ``_fem_job =
    Creation(...)``, ``_fem = _fem_job.finish()``, which replays the whole creation), its
    programs (Gmsh, CalculiX) run in a QProcess while the GUI stays free."""

    #: Steps per analysis: the objects, Gmsh's input, Gmsh, its mesh read, CalculiX's input,
    #: CalculiX, its results read
    STAGES = 7

    def __init__(self, panel, calls):
        self.panel = panel
        self.calls = calls
        self.made = []
        self.job = None
        self.process = None
        self.stopped = False
        self.steps = 0              # steps of the analysis under way done
        self.what = "making the FEM objects"
        self.started = 0.0
        self.timer = QtCore.QTimer(panel.form)
        self.timer.setInterval(250)
        self.timer.timeout.connect(self._show)
        self.timer.start()
        panel.progress.setRange(0, self.STAGES * len(calls))
        panel.progress.setValue(0)

    def _stage(self, what):
        import time
        self.what = what
        self.started = time.monotonic()
        self.panel.progress.setValue(self.STAGES * len(self.made) + min(self.steps,
                                                                         self.STAGES - 1))
        self.steps += 1
        self._show()
        self.panel.status.repaint()      # seen before the next step (no input handled here)
        self.panel.progress.repaint()

    def _show(self):
        import time
        k, n = len(self.made), len(self.calls)
        which = f"Analysis {k + 1} of {n}: " if n > 1 else ""
        self.panel.status.setText(f"{which}{self.what}... "
                                  f"{time.monotonic() - self.started:.0f} s")

    def next_analysis(self):
        if len(self.made) == len(self.calls):
            self.timer.stop()
            self.panel._done(self.made)
            return
        self.steps = 0
        self._stage("making the FEM objects")
        try:
            FreeCADGui.doCommand("_fem_job = MultibodyWB.document.fem_loads.Creation("
                                 + self.calls[len(self.made)] + ")")
        except Exception as exc:  # loads that cannot be placed...: nothing stays
            self.panel._failed(exc)
            return
        self.job = __main__.__dict__["_fem_job"]         # where doCommand runs
        self.next_step()

    def next_step(self):
        step = self.job.step
        if step is None:
            FreeCADGui.doCommand("_fem = _fem_job.finish()")
            self.made.append(__main__.__dict__["_fem"])
            self.job = None
            self.next_analysis()
            return
        if self.job.program is None:        # document work: said first, done next
            self._stage(step)
            QtCore.QTimer.singleShot(0, self._document_step)
            return
        program = step
        self._stage(program.what)
        process = self.process = QtCore.QProcess(self.panel.form)
        if program.cwd:
            process.setWorkingDirectory(program.cwd)
        if program.env is not None:
            env = QtCore.QProcessEnvironment()
            for key, value in program.env.items():
                env.insert(key, value)
            process.setProcessEnvironment(env)
        process.finished.connect(lambda *args, p=process: self._ended(p, *args))
        process.errorOccurred.connect(lambda error, p=process: self._error(p, error))
        process.start(program.argv[0], program.argv[1:])

    def _document_step(self):
        if self.stopped:
            return
        try:
            self.job.advance()
        except Exception as exc:  # the mesh or the results cannot be read: nothing stays
            self.panel._failed(exc)
            return
        self.next_step()

    def _ended(self, process, code, status=None):
        from ..document.fem_loads import Outcome
        if process is not self.process:          # stopped (Cancel): nothing more to do
            return
        self.process = None
        crashed = status is not None and status != QtCore.QProcess.NormalExit
        outcome = Outcome(-1 if crashed else int(code),
                          bytes(process.readAllStandardOutput()).decode(errors="replace"),
                          bytes(process.readAllStandardError()).decode(errors="replace"))
        process.deleteLater()
        try:
            self.job.advance(outcome)
        except Exception as exc:  # Gmsh or CalculiX failed: said, nothing stays
            self.panel._failed(exc)
            return
        self.next_step()

    def _error(self, process, error):
        if process is self.process and error == QtCore.QProcess.FailedToStart:
            self.process = None
            self.panel._failed(RuntimeError(f"{self.job.program.argv[0]} could not be started "
                                            f"({self.what})"))

    def stop(self):
        """Kill the program running (at once) and stop; the caller undoes the document."""
        self.stopped = True
        self.timer.stop()
        process, self.process = self.process, None
        if process is not None:
            process.kill()
            process.waitForFinished(3000)
            process.deleteLater()


def open_panel(mechanism, result=None, body=None):
    """Show the FEM loads panel of ``mechanism`` (another task dialog is closed first)."""
    from .watch import close_task_dialog
    close_task_dialog()
    panel = FemLoadsPanel(mechanism, result, body)
    FreeCADGui.Control.showDialog(panel)
    return panel
