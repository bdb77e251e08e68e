"""The Marker task panel: what it is attached to (pick again), offset, flip.

Opened by double-clicking a marker and by the Marker command after it made one. **Pick** and a
click on a face, edge or vertex of a body's solid (3D view or tree) attaches the marker there by
the rules of :mod:`MultibodyWB.objects.marker` (a bore's axis, a circle's centre, a face's
middle...). The offset moves the frame in its own axes (x, y, z in mm) and turns it about its z
axis; **Flip** turns its z axis over. The axes in the 3D view follow at once. Live edits, one
undo step on OK (the attachment recorded as ``MultibodyWB.objects.marker.attach(...)``, the
offset as ``marker.AttachmentOffset = ...``), Cancel puts everything back (:mod:`.task_base`).
"""

import FreeCAD

from ..objects.marker import attach, support_property
from .qt import QtWidgets
from .task_base import EditPanel, PickObserver, quantity_field, internal_or_zero, ref

#: Marker properties an attachment changes (kept to be put back on Cancel).
ATTACHMENT_PROPERTIES = ("MapMode", "MapReversed", "MapPathParameter", "AttachmentOffset",
                         "PickedElement", "PickedGeometry", "AxialShift", "Placement", "Body")


class MarkerPanel(EditPanel):
    """The task panel of a Marker."""

    TITLE = "Edit marker"
    ICON = "Marker.svg"

    def build(self):
        obj = self.obj
        self.base = obj.AttachmentOffset       # the offset the fields are applied after
        main = QtWidgets.QWidget()
        main.setObjectName("MultibodyMarkerPanel")
        layout = QtWidgets.QVBoxLayout(main)
        where = QtWidgets.QGroupBox("Attached to")
        form = QtWidgets.QFormLayout(where)
        self.body_label = QtWidgets.QLabel()
        self.body_label.setObjectName("body")
        self.picked_label = QtWidgets.QLabel()
        self.picked_label.setObjectName("picked")
        self.picked_label.setWordWrap(True)
        self.pick_button = QtWidgets.QPushButton("Pick")
        self.pick_button.setObjectName("pick")
        self.pick_button.setCheckable(True)
        self.pick_button.setToolTip("Press, then click a face, edge or vertex of a body's solid "
                                    "(3D view or tree): the marker is attached there (a bore: "
                                    "its axis; a circle: its centre; a face: its middle)")
        self.pick_button.toggled.connect(self._pick_toggled)
        form.addRow("Body", self.body_label)
        form.addRow("Element", self.picked_label)
        form.addRow(self.pick_button)
        layout.addWidget(where)
        offset = QtWidgets.QGroupBox("Offset in the marker's axes")
        grid = QtWidgets.QFormLayout(offset)
        self.spins = {}
        for name, unit, tip in (("x", "mm", "Move the origin along the marker's x axis"),
                                ("y", "mm", "Move the origin along the marker's y axis"),
                                ("z", "mm", "Move the origin along the marker's z axis"),
                                ("angle", "deg", "Turn the axes about the marker's z axis")):
            w = quantity_field(unit)
            w.setObjectName(f"offset_{name}")
            w.setToolTip(tip)
            w.textEdited.connect(self._offset_changed)
            grid.addRow({"angle": "Rotation about z"}.get(name, name), w)
            self.spins[name] = w
        self.flip = QtWidgets.QCheckBox("Flip (z axis turned over)")
        self.flip.setObjectName("flip")
        self.flip.setToolTip("Half a turn about the marker's x axis: its z axis (a hinge's axis) "
                             "reversed")
        self.flip.toggled.connect(self._offset_changed)
        grid.addRow(self.flip)
        layout.addWidget(offset)
        self.observer = PickObserver(self.doc, self._picked)
        self._show()
        return main

    def _show(self):
        obj = self.obj
        self.body_label.setText(f"'{obj.Body.Label}'" if obj.Body is not None else "(none)")
        self.picked_label.setText(f"{obj.PickedElement or '(the body frame)'}"
                                  + (f": {obj.PickedGeometry}" if obj.PickedGeometry else ""))

    def user_offset(self):
        """The placement the fields give, applied after the attachment's own offset."""
        v = {k: internal_or_zero(w) for k, w in self.spins.items()}
        p = FreeCAD.Placement(FreeCAD.Vector(v["x"], v["y"], v["z"]),
                              FreeCAD.Rotation(FreeCAD.Vector(0, 0, 1), v["angle"]))
        if self.flip.isChecked():
            p = p.multiply(FreeCAD.Placement(FreeCAD.Vector(),
                                             FreeCAD.Rotation(FreeCAD.Vector(1, 0, 0), 180)))
        return p

    def _offset_changed(self, *_):
        self.set(self.obj, "AttachmentOffset", self.base.multiply(self.user_offset()))
        self.obj.recompute()

    # -- picking --------------------------------------------------------------------------------
    def _pick_toggled(self, on):
        import FreeCADGui
        if on:
            FreeCADGui.Selection.clearSelection()
            self.observer.start()
        else:
            self.observer.stop()

    def _picked(self, name, sub):
        from ..objects.body import body_of, has_solids
        if self.closed or not self.pick_button.isChecked():
            return
        solid = self.doc.getObject(name)
        body = body_of(solid) if solid is not None and has_solids(solid) else None
        if body is None:
            self.say(f"'{getattr(solid, 'Label', name)}' is not a solid of a body: pick a face, "
                     "edge or vertex of a body's solid")
            return
        self.say("")
        self.pick_button.setChecked(False)
        import FreeCADGui
        FreeCADGui.Selection.clearSelection()
        self.attach_to(body, solid, sub)

    def attach_to(self, body, solid, sub):
        """Attach the marker to ``sub`` of ``solid`` (of ``body``) now; recorded for OK."""
        obj = self.obj
        self.remember(obj, support_property(obj), *ATTACHMENT_PROPERTIES)
        if obj.Body != body:
            self.set(obj, "Body", body)
        # off while the references change (the old mode on the new element would fail)
        self.set(obj, "MapMode", "Deactivated")
        try:
            attach(obj, solid, sub or None)
        except ValueError as exc:
            self.say(f"Marker '{obj.Label}': {exc}")
            return
        obj.recompute()
        self.record(("attach",), f"MultibodyWB.objects.marker.attach({self.name_of(obj)}, "
                                 f"{ref(solid)}, {(sub or None)!r})")
        self.forget(("set", obj.Name, "AttachmentOffset"))
        self.base = obj.AttachmentOffset
        for w in self.spins.values():
            w.set_internal(0.0)
        self.flip.blockSignals(True)
        self.flip.setChecked(False)
        self.flip.blockSignals(False)
        self._show()

    def stop(self):
        self.observer.stop()
        try:
            self.pick_button.blockSignals(True)
            self.pick_button.setChecked(False)
            self.pick_button.blockSignals(False)
        except RuntimeError:            # the dialog's widgets are gone already
            pass

