"""The Mechanism's task panel: its status, and drag to check.

Opened by double-clicking the Mechanism in the tree (its view provider's ``doubleClicked`` puts it
in edit mode, ``setEdit`` shows this panel) and by the Check command. Two parts:

Status
    The headline of :func:`MultibodyWB.objects.mechanism.mechanism_status` ("1 degree of
    freedom"), then the degrees of freedom (actual mobility and Grübler–Kutzbach count), the
    driven coordinates, the redundant constraints with their directions, and the problems that
    block a run, each naming the object and the property.
Drag to check
    One slider per free degree of freedom (:meth:`MultibodyWB.document.preview.KinematicPreview.
    free_coordinates`), and one per driven coordinate (marked so: a designer checks a driven
    crank's range too). Moving a slider sets that coordinate, holds the others of the set, closes
    the loops with the solver's assembly and moves the solids and markers in the 3D view; the
    value is shown in the document's units. A position the loops cannot reach is refused with the
    solver's reason in words, and the slider goes back. "Drawn pose" puts everything back.

Nothing is changed in the document: no undo step, and OK, Cancel, closing the document's edit
mode or another task dialog taking the panel's place all put the solids back where they were
drawn (:meth:`KinematicPreview.restore`). Saving while a pose is shown saves the drawn one.
"""

import FreeCADGui

from ..objects.base import type_of
from ..objects.mechanism import mechanism_status
from ..solver.api import ModelError
from .qt import QtCore, QtWidgets
from .watch import DocumentWatch, TaskPanel, later, object_alive

#: Object name of the panel's status widget (tests find the panel by it).
PANEL_NAME = "MultibodyMechanismPanel"
#: Object name of the drag widget.
DRAG_NAME = "MultibodyMechanismDrag"
#: Slider steps per mm or per degree.
STEPS = 10
#: Half range of a rotation slider around its drawn value (deg).
ROTATION_RANGE = 180.0

#: The panel being shown, for tests and the view provider.
current = None


def _label(hinge, coordinate):
    return f"{hinge.Label}  {coordinate}"


class CoordinateSlider:
    """A slider row for one coordinate: label, slider, value in the document's units."""

    def __init__(self, panel, hinge, coordinate, driven):
        from ..document.preview import user_string
        from ..solver.api import COORDINATE_KIND
        self.panel, self.hinge, self.coordinate = panel, hinge, coordinate
        self.user_string = user_string
        preview = panel.preview
        self.drawn = preview.drawn_value(hinge, coordinate)
        rotation = COORDINATE_KIND[coordinate] == "rotation"
        if rotation:
            half = ROTATION_RANGE
        else:
            half = max(10.0, 1000.0 * preview.mobility.length_scale)
        self.label = QtWidgets.QLabel(_label(hinge, coordinate) + ("  (driven)" if driven else ""))
        self.label.setToolTip(
            f"Hinge '{hinge.Label}', coordinate {coordinate}"
            + (": driven by its driver in a run; drag to check its range" if driven else
               ": a free degree of freedom of the mechanism"))
        self.slider = QtWidgets.QSlider(QtCore.Qt.Horizontal)
        self.slider.setObjectName(f"{hinge.Name}.{coordinate}")
        self.slider.setRange(int(round((self.drawn - half) * STEPS)),
                             int(round((self.drawn + half) * STEPS)))
        self.slider.setToolTip(f"Drag to move the mechanism by '{hinge.Label}' {coordinate} "
                               "(loops kept closed); the drawn pose comes back on close")
        self.value = QtWidgets.QLabel()
        self.value.setMinimumWidth(self.value.fontMetrics().boundingRect("-000.00 °").width() + 6)
        self.value.setAlignment(QtCore.Qt.AlignRight | QtCore.Qt.AlignVCenter)
        self.show(preview.value(hinge, coordinate))
        self.slider.valueChanged.connect(self.moved)

    def show(self, value):
        """Put the slider and the value label at ``value`` (mm or deg), without moving anything."""
        self.slider.blockSignals(True)
        self.slider.setValue(int(round(value * STEPS)))
        self.slider.blockSignals(False)
        self.value.setText(self.user_string(value, self.coordinate))

    def moved(self, position):
        self.panel.set_coordinate(self, position / STEPS)


class MechanismPanel(TaskPanel):
    """The task panel of one mechanism (see the module doc)."""

    def __init__(self, mechanism):
        global current
        self.mechanism = mechanism
        self.doc = mechanism.Document
        self.closed = False
        self.preview = None
        self.preview_problem = ""
        try:
            from ..document.preview import KinematicPreview
            self.preview = KinematicPreview(mechanism)
        except ModelError as exc:
            self.preview_problem = str(exc)
        except Exception as exc:  # noqa: BLE001 - any failure: the status still shows
            self.preview_problem = f"{type(exc).__name__}: {exc}"
        self.sliders = []
        self.status_form = self._status_widget()
        self.drag_form = self._drag_widget()
        self.form = [self.status_form, self.drag_form]
        self.watch = DocumentWatch(self.doc, self)
        # removed without reject() (another dialog took the task view): put the solids back
        self.status_form.destroyed.connect(lambda *_: self.cleanup())
        current = self

    # -- widgets -------------------------------------------------------------------------------
    def _status_widget(self):
        w = QtWidgets.QWidget()
        w.setObjectName(PANEL_NAME)
        w.setWindowTitle("Mechanism status")
        layout = QtWidgets.QVBoxLayout(w)
        self.headline = QtWidgets.QLabel()
        self.headline.setObjectName("Headline")
        self.headline.setWordWrap(True)
        font = self.headline.font()
        font.setBold(True)
        self.headline.setFont(font)
        layout.addWidget(self.headline)
        self.details = QtWidgets.QPlainTextEdit()
        self.details.setObjectName("Details")
        self.details.setReadOnly(True)
        self.details.setMinimumHeight(90)
        self.details.setMaximumHeight(200)
        self.details.setToolTip("Degrees of freedom, driven coordinates, redundant constraints "
                                "and what blocks a run")
        layout.addWidget(self.details)
        self.accept_button = QtWidgets.QPushButton("Accept changed picks")
        self.accept_button.setObjectName("AcceptPicks")
        self.accept_button.clicked.connect(self.accept_picks)
        layout.addWidget(self.accept_button)
        self.refresh_status()
        return w

    def changed_markers(self):
        """The mechanism's markers whose picked element changed (renumbered, moved within its
        solid) since it was picked."""
        from ..objects.marker import TYPE as MARKER, changed_pick
        return [m for m in self.mechanism.Group
                if type_of(m) == MARKER and changed_pick(m)]

    def accept_picks(self):
        """Take the elements the changed markers sit on now as the ones meant (one undo step,
        recorded as a macro)."""
        markers = self.changed_markers()
        if not markers:
            return
        self.drawn_pose()
        doc = self.doc
        doc.openTransaction("Accept changed picks")
        try:
            FreeCADGui.addModule("MultibodyWB.objects.marker")
            for m in markers:
                FreeCADGui.doCommand(
                    f"MultibodyWB.objects.marker.accept_pick(FreeCAD.getDocument("
                    f"{doc.Name!r}).getObject({m.Name!r}))")
        except Exception:  # noqa: BLE001 - undo what was done, then say it
            doc.abortTransaction()
            raise
        doc.commitTransaction()
        self.refresh_status()
        self.rebuild_drag()

    def refresh_status(self):
        """Show the mechanism's status as it is now."""
        status = mechanism_status(self.mechanism)
        self.status = status
        self.headline.setText(status.headline)
        self.headline.setStyleSheet("" if status.ready else "color: #a40000;")
        lines = status.details() or ["Nothing else to say."]
        self.details.setPlainText("\n".join(f"• {line}" for line in lines))
        self.headline.setToolTip("The mechanism's status: it is also the tool tip of the "
                                 "Mechanism in the tree")
        changed = self.changed_markers()
        self.accept_button.setVisible(bool(changed))
        self.accept_button.setToolTip(
            "Take the faces or edges these markers sit on now as the ones meant (their picked "
            "element was renumbered or moved by an edit of its solid): "
            + ", ".join(f"'{m.Label}'" for m in changed))

    def _drag_widget(self):
        w = QtWidgets.QWidget()
        w.setObjectName(DRAG_NAME)
        w.setWindowTitle("Drag to check")
        self.drag_layout = QtWidgets.QVBoxLayout(w)
        self.drag_layout.setContentsMargins(0, 0, 0, 0)
        self.drag_inner = self._drag_content()
        self.drag_layout.addWidget(self.drag_inner)
        return w

    def rebuild_drag(self):
        """Make the preview and the sliders again (the model changed: e.g. picks accepted)."""
        if self.preview is not None:
            self.preview.restore()
        self.preview, self.preview_problem = None, ""
        try:
            from ..document.preview import KinematicPreview
            self.preview = KinematicPreview(self.mechanism)
        except ModelError as exc:
            self.preview_problem = str(exc)
        except Exception as exc:  # noqa: BLE001 - any failure: the status still shows
            self.preview_problem = f"{type(exc).__name__}: {exc}"
        self.sliders = []
        old = self.drag_inner
        self.drag_inner = self._drag_content()
        self.drag_layout.replaceWidget(old, self.drag_inner)
        old.hide()
        old.deleteLater()

    def _drag_content(self):
        w = QtWidgets.QWidget()
        layout = QtWidgets.QVBoxLayout(w)
        if self.preview is None:
            note = QtWidgets.QLabel("The mechanism cannot be moved until the problems above "
                                    "are fixed.")
            note.setWordWrap(True)
            note.setObjectName("DragNote")
            note.setToolTip(self.preview_problem)
            layout.addWidget(note)
            self.message = None
            return w
        free = self.preview.free_coordinates()
        driven = self.preview.driven_coordinates()
        grid = QtWidgets.QGridLayout()
        rows = [(h, c, False) for h, c in free] + [(h, c, True) for h, c in driven]
        for i, (hinge, coordinate, is_driven) in enumerate(rows):
            row = CoordinateSlider(self, hinge, coordinate, is_driven)
            self.sliders.append(row)
            grid.addWidget(row.label, 2 * i, 0, 1, 2)
            grid.addWidget(row.slider, 2 * i + 1, 0)
            grid.addWidget(row.value, 2 * i + 1, 1)
        layout.addLayout(grid)
        if not rows:
            note = QtWidgets.QLabel("No free degree of freedom: the mechanism is a structure "
                                    "(or every coordinate is driven).")
            note.setWordWrap(True)
            note.setObjectName("DragNote")
            layout.addWidget(note)
        gaps = self.preview.drawing_gaps()
        if gaps:
            note = QtWidgets.QLabel("As drawn, " + "; ".join(gaps) + ": the parts move to where "
                                    "the hinges put them at the first move.")
            note.setWordWrap(True)
            note.setObjectName("DrawingGaps")
            note.setStyleSheet("color: #8f5902;")
            layout.addWidget(note)
        self.message = QtWidgets.QLabel("")
        self.message.setObjectName("DragMessage")
        self.message.setWordWrap(True)
        layout.addWidget(self.message)
        back = QtWidgets.QPushButton("Drawn pose")
        back.setObjectName("DrawnPose")
        back.setToolTip("Put every part back where it is drawn")
        back.clicked.connect(self.drawn_pose)
        layout.addWidget(back)
        return w

    # -- dragging ------------------------------------------------------------------------------
    def set_coordinate(self, row, value):
        """A slider moved: set its coordinate (mm or deg); refused in words if the loops cannot
        be closed there (the slider goes back)."""
        if self.closed or self.preview is None:
            return
        problem = self.preview.set(row.hinge, row.coordinate, value)
        if problem:
            self.message.setStyleSheet("color: #a40000;")
            self.message.setText(problem)
        else:
            self.message.setStyleSheet("")
            self.message.setText("")
        self.show_values()

    def show_values(self):
        for row in self.sliders:
            row.show(self.preview.value(row.hinge, row.coordinate))

    def drawn_pose(self):
        """Every part back where it is drawn."""
        if self.preview is not None and not self.closed:
            self.preview.reset()
            self.show_values()
            if self.message is not None:
                self.message.setText("")

    # -- FreeCAD's task dialog -----------------------------------------------------------------
    def getStandardButtons(self):
        return int(QtWidgets.QDialogButtonBox.Ok | QtWidgets.QDialogButtonBox.Cancel)

    def accept(self):
        """OK: nothing to store; the drawn pose comes back."""
        self.finish()
        return True

    def reject(self):
        """Cancel: the drawn pose comes back."""
        self.finish()
        return True

    def is_open(self):
        return not self.closed

    def finish(self):
        self.cleanup()
        leave_edit(self.doc, self.mechanism)

    def cleanup(self):
        """Put the solids back; stop watching (however the panel goes)."""
        global current
        if self.closed:
            return
        self.closed = True
        if self.preview is not None:
            try:
                self.preview.restore()
            except (ReferenceError, RuntimeError):     # the document went meanwhile
                pass
        self.watch.detach()
        if current is self:
            current = None

    # -- the document (DocumentWatch) ----------------------------------------------------------
    def document_closing(self):
        later(self.close)

    def object_deleted(self, obj):
        if obj == self.mechanism or obj in getattr(self.mechanism, "Group", []):
            later(self.close)

    def before_save(self):
        """The file gets the drawn pose."""
        self.drawn_pose()


def leave_edit(doc, mechanism):
    """End the edit mode of ``mechanism`` if the panel put it there."""
    try:
        gui = FreeCADGui.getDocument(doc.Name)
    except (ReferenceError, RuntimeError, AttributeError, NameError):
        return
    if gui is None:
        return
    editing = gui.getInEdit()
    if editing is not None and getattr(editing, "Object", None) == mechanism:
        gui.resetEdit()


def open_panel(mechanism, from_set_edit=False):
    """Show the panel of ``mechanism`` (the one open already, else a new one).

    From a double-click or a command (``from_set_edit`` False): through FreeCAD's edit mode, as
    FreeCAD's own double-click does (``Gui.Document.setEdit``, which calls the view provider's
    ``setEdit``, which calls this with ``from_set_edit`` True and shows the dialog).
    Returns True (the double-click is handled).
    """
    from .watch import close_task_dialog
    if current is not None and not current.closed and current.mechanism == mechanism \
            and FreeCADGui.Control.activeDialog():
        return True
    if not from_set_edit:
        gui = FreeCADGui.getDocument(mechanism.Document.Name)
        gui.setEdit(mechanism.Name, 0)
        return True
    close_task_dialog()
    panel = MechanismPanel(mechanism)
    FreeCADGui.Control.showDialog(panel)
    return True


def edit_ended(mechanism):
    """The view provider's ``unsetEdit``: close the panel if it is still showing."""
    panel = current
    if panel is not None and not panel.closed and panel.mechanism == mechanism:
        panel.cleanup()
        if FreeCADGui.Control.activeDialog():
            FreeCADGui.Control.closeDialog()


def is_alive(panel):
    return panel is not None and not panel.closed and object_alive(panel.mechanism)
