"""The Track command's task panel: the shoes, their count and pins, the wrapped path live.

Opened by the Track command with the picked wheels (cylindrical faces; their axes parallel) and,
when a whole solid was picked too, that solid as the shoe. The panel shows

- the wheels picked and the shoe: a box of the typed pitch, width and thickness, or the picked
  solid (its width and thickness from its bounding box, :mod:`MultibodyWB.document.track`);
- the pitch, the density (each shoe's body), the number of shoes (default: the tight count + 1
  when that hangs clear of the wheels, else the tight count) and the pin joint (revolute, or a
  bushing with its stiffness and damping);
- the path of the pins drawn in the 3D view (a Coin line set, redrawn as the fields change, removed
  when the panel closes) and below the fields the count, the tight count, the pitch, the path's
  perimeter and the slack's sag in the user's units, or what is wrong.

Nothing in the document changes until **OK**, which runs the statement making the track
(:func:`MultibodyWB.document.track.make_track`, one transaction: one undo step) through
``FreeCADGui.doCommand`` (recorded in a macro); **Cancel** leaves the document as it was.
"""

import FreeCAD
import FreeCADGui

from ..document import track as track_module
from ..objects import units
from .qt import QtWidgets, compact
from .task_base import QuantityEdit, pretty_unit, ref
from .watch import DocumentWatch, TaskPanel, later, track

#: Object name of the panel's widget (tests find it and its fields by name).
PANEL_NAME = "MultibodyTrackPanel"
#: Name of the path's node in the 3D view's scene graph.
OVERLAY_NAME = "MultibodyTrackPath"
#: Default box shoe (mm) and density (kg/m^3).
PITCH, WIDTH, THICKNESS, DENSITY = 60.0, 150.0, 20.0, 7850.0

#: The panel being shown, for tests.
current = None
track(lambda: current)


def _quantity(unit, value, tip, name):
    w = QuantityEdit(unit)
    w.set_internal(value)
    w.setObjectName(name)
    w.setToolTip(f"{tip}\nA number in {pretty_unit(unit)}, or a quantity with its unit")
    return w


def _si(field, unit):
    """A field's value in the SI unit ``unit``, to 12 digits (no round-off tail from the
    unit's factor in a recorded statement)."""
    return float(f"{units.to_si(field.internal(), unit):.12g}")


class TrackPanel(TaskPanel):
    """The track builder's panel (see the module doc)."""

    def __init__(self, mechanism, picks, shoe_solid=None):
        global current
        self.mechanism = mechanism
        self.doc = mechanism.Document
        self.picks = list(picks)
        self.shoe_solid = shoe_solid
        self.closed = False
        self.document_gone = False
        self.plan = None
        self.root = None
        self.form = self._widget()
        self.watch = DocumentWatch(self.doc, self)
        self.form.destroyed.connect(lambda *_: self.cleanup())
        current = self
        self._default_count()
        self.refresh()

    # -- widgets -------------------------------------------------------------------------------
    def _widget(self):
        w = QtWidgets.QWidget()
        w.setObjectName(PANEL_NAME)
        w.setWindowTitle("Track")
        layout = QtWidgets.QVBoxLayout(w)
        wheels = QtWidgets.QLabel("Wheels: " + ", ".join(f"'{s.Label}' {sub}"
                                                         for s, sub in self.picks))
        wheels.setObjectName("Wheels")
        wheels.setWordWrap(True)
        layout.addWidget(wheels)
        form = QtWidgets.QFormLayout()
        layout.addLayout(form)
        shoe = "a box of the pitch, width and thickness below" if self.shoe_solid is None else \
            f"'{self.shoe_solid.Label}' (left where it is drawn; the shoes are links to it)"
        label = QtWidgets.QLabel(shoe)
        label.setWordWrap(True)
        label.setObjectName("Shoe")
        form.addRow("Shoe", label)
        self.pitch = _quantity("mm", PITCH, "The distance between a shoe's two pins", "Pitch")
        form.addRow("Pitch", self.pitch)
        self.width = _quantity("mm", WIDTH, "The box shoe's width, along the pins", "Width")
        self.thickness = _quantity("mm", THICKNESS, "The box shoe's thickness: the pins lie "
                                   "in its middle, half of it between them and the wheels",
                                   "Thickness")
        if self.shoe_solid is None:
            form.addRow("Width", self.width)
            form.addRow("Thickness", self.thickness)
        self.density = _quantity("kg/m^3", units.from_si(DENSITY, "kg/m^3"),
                                 "Each shoe body's density", "Density")
        form.addRow("Density", self.density)
        self.count = QtWidgets.QSpinBox()
        self.count.setObjectName("Count")
        self.count.setRange(2, 100000)
        self.count.setToolTip("How many shoes: at least the tight count (the fewest that go "
                              "round); the slack of more hangs from the top span")
        form.addRow("Shoes", self.count)
        self.joint = QtWidgets.QComboBox()
        self.joint.setObjectName("Joint")
        self.joint.addItems(["revolute", "bushing"])
        self.joint.setToolTip("The pins: revolute hinges, or bushings (elastic in all six "
                              "directions, free to turn about the pin)")
        compact(self.joint)
        form.addRow("Pin joint", self.joint)
        si = units.from_si
        self.stiffness = _quantity("N/m", si(1e8, "N/m"), "The bushing's stiffness along x, y, "
                                   "z", "Stiffness")
        self.damping = _quantity("N*s/m", si(1e4, "N*s/m"), "The bushing's damping along x, y, "
                                 "z", "Damping")
        self.tilt_stiffness = _quantity("N*m/rad", si(1e5, "N*m/rad"), "The bushing's "
                                        "stiffness about x and y (the pin tilting)",
                                        "TiltStiffness")
        self.tilt_damping = _quantity("N*m*s/rad", si(10.0, "N*m*s/rad"), "The bushing's "
                                      "damping about x and y", "TiltDamping")
        self.bushing_rows = []
        for text, field in (("Stiffness", self.stiffness), ("Damping", self.damping),
                            ("Tilt stiffness", self.tilt_stiffness),
                            ("Tilt damping", self.tilt_damping)):
            form.addRow(text, field)
            self.bushing_rows.append((form.labelForField(field), field))
        self.summary = QtWidgets.QLabel()
        self.summary.setObjectName("Summary")
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        self.error = QtWidgets.QLabel()
        self.error.setObjectName("Error")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #a40000;")
        layout.addWidget(self.error)
        for field in (self.pitch, self.width, self.thickness):
            field.editingFinished.connect(self._geometry_changed)
        self.count.valueChanged.connect(lambda *_: self.refresh())
        self.joint.currentIndexChanged.connect(lambda *_: self._show_joint())
        self._show_joint()
        return w

    def _show_joint(self):
        bushing = self.joint.currentText() == "bushing"
        for label, field in self.bushing_rows:
            label.setVisible(bushing)
            field.setVisible(bushing)

    # -- the path ------------------------------------------------------------------------------
    def shoe(self):
        """The :class:`~MultibodyWB.document.track.Shoe` the fields describe (ValueError)."""
        pitch = self.pitch.internal()
        if self.shoe_solid is not None:
            return track_module.picked_shoe(self.shoe_solid, pitch)
        return track_module.box_shoe(pitch, self.width.internal(), self.thickness.internal())

    def _default_count(self):
        """The tight count + 1 when that hangs clear, else the tight count."""
        try:
            shoe = self.shoe()
            tight = track_module.tight_count(self.picks, self.pitch.internal(), shoe.thickness)
        except ValueError:
            return
        self.count.blockSignals(True)
        self.count.setValue(tight)
        try:
            track_module.plan(self.picks, self.pitch.internal(), shoe, tight + 1)
            self.count.setValue(tight + 1)
        except ValueError:
            pass
        self.count.blockSignals(False)

    def _geometry_changed(self):
        self._default_count()
        self.refresh()

    def refresh(self):
        """Wrap the wheels with the fields' values: the summary, or what is wrong; the path."""
        if self.closed:
            return
        try:
            self.plan = track_module.plan(self.picks, self.pitch.internal(), self.shoe(),
                                          self.count.value())
        except ValueError as exc:
            self.plan = None
            self.error.setText(str(exc))
            self.summary.setText("")
            self._draw()
            return
        s = self.plan.summary()
        self.error.setText("")
        self.summary.setText(f"{s['count']} shoes (the tight wrap takes {s['tight']}), pitch "
                             f"{s['pitch']}, path {s['perimeter']} long (tight), sag "
                             f"{s['sag']}")
        self._draw()

    def _draw(self):
        from pivy import coin
        view = getattr(FreeCADGui.getDocument(self.doc.Name), "ActiveView", None)
        if view is None or not hasattr(view, "getSceneGraph"):
            return
        if self.root is None:
            self.root = coin.SoAnnotation()
            self.root.setName(OVERLAY_NAME)
            self.scene = view.getSceneGraph()
            self.scene.addChild(self.root)
        self.root.removeAllChildren()
        if self.plan is None:
            return
        points = [tuple(p) for p in self.plan.pins] + [tuple(self.plan.pins[0])]
        light = coin.SoLightModel()
        light.model = coin.SoLightModel.BASE_COLOR
        material = coin.SoMaterial()
        material.diffuseColor = (0.9, 0.45, 0.0)
        style = coin.SoDrawStyle()
        style.lineWidth = 3.0
        style.pointSize = 7.0
        coords = coin.SoCoordinate3()
        coords.point.setValues(0, len(points), points)
        line = coin.SoLineSet()
        line.numVertices.setValue(len(points))
        dots = coin.SoPointSet()
        dots.numPoints.setValue(len(points) - 1)
        for node in (light, material, style, coords, line, dots):
            self.root.addChild(node)

    # -- FreeCAD's task dialog -----------------------------------------------------------------
    def getStandardButtons(self):
        return int(QtWidgets.QDialogButtonBox.Ok | QtWidgets.QDialogButtonBox.Cancel)

    def statement(self):
        """The Python statement making the track as the fields say (recorded in a macro)."""
        picks = ", ".join(f"({ref(s)}, {sub!r})" for s, sub in self.picks)
        args = [f"FreeCAD.getDocument({self.doc.Name!r})", ref(self.mechanism), f"[{picks}]",
                repr(self.pitch.internal())]
        if self.shoe_solid is None:
            args += [f"width={self.width.internal()!r}",
                     f"thickness={self.thickness.internal()!r}"]
        else:
            args.append(f"shoe_solid={ref(self.shoe_solid)}")
        args += [f"count={self.count.value()!r}",
                 f"density={_si(self.density, 'kg/m^3')!r}",
                 f"joint={self.joint.currentText()!r}"]
        if self.joint.currentText() == "bushing":
            for key, field, unit in (("stiffness", self.stiffness, "N/m"),
                                     ("damping", self.damping, "N*s/m"),
                                     ("tilt_stiffness", self.tilt_stiffness, "N*m/rad"),
                                     ("tilt_damping", self.tilt_damping, "N*m*s/rad")):
                args.append(f"{key}={_si(field, unit)!r}")
        return f"MultibodyWB.document.track.make_track({', '.join(args)})"

    def accept(self):
        """OK: make the track (one undo step); on an error say it and stay open."""
        try:
            statement = self.statement()
        except ValueError as exc:
            self.error.setText(str(exc))
            return False
        if self.plan is None:
            self.refresh()
            if self.plan is None:
                return False
        try:
            FreeCADGui.addModule("MultibodyWB.document.track")
            FreeCADGui.doCommand(statement)
        except Exception as exc:  # noqa: BLE001 - make_track undid its transaction: say why
            self.error.setText(f"{type(exc).__name__}: {exc}")
            FreeCAD.Console.PrintError(f"MultibodyWB: Track: {exc}\n")
            return False
        FreeCAD.Console.PrintMessage(f"MultibodyWB: Track: {self.summary.text()}\n")
        self.cleanup()
        return True                       # FreeCAD closes the dialog

    def reject(self):
        """Cancel: nothing was made; the path goes."""
        self.cleanup()
        return True

    def is_open(self):
        return not self.closed

    def cleanup(self):
        """Remove the path from the 3D view, stop watching (however the panel goes)."""
        global current
        if self.closed:
            return
        self.closed = True
        self.watch.detach()
        if self.root is not None and not self.document_gone:
            try:
                self.scene.removeChild(self.root)
            except (ReferenceError, RuntimeError):
                pass
        self.root = None
        if current is self:
            current = None

    # -- the document (DocumentWatch) ----------------------------------------------------------
    def document_closing(self):
        self.document_gone = True
        later(self.close)

    def object_deleted(self, obj):
        try:
            ours = obj == self.mechanism or obj in [s for s, _ in self.picks]
        except (ReferenceError, RuntimeError):
            ours = True
        if ours and not self.closed:
            later(self.close)


def open_panel(mechanism, picks, shoe_solid=None):
    """Show the track builder for ``picks`` ((solid, "FaceN"), ...) in ``mechanism``."""
    from .watch import close_task_dialog
    close_task_dialog()
    panel = TrackPanel(mechanism, picks, shoe_solid)
    FreeCADGui.Control.showDialog(panel)
    return panel
