"""The Force task panel: type, ends, direction with its arrow, magnitude, spring-damper.

Opened by double-clicking a force and by the force commands after they made one. The fields are
the force's properties the type uses (:data:`~MultibodyWB.objects.force.FIELD_PROPERTIES`, shown
as the property editor shows them); the arrow (or spring) in the 3D view follows the typed
direction and the picked ends at once. Live edits, one undo step on OK, Cancel puts everything
back (:mod:`.task_base`).
"""

from ..objects.force import ForceProxy
from ..solver.api import FORCE_TYPES
from .qt import QtWidgets
from .task_base import EditPanel, EndsBox, label_of, pretty_unit

#: Properties with their own place in the panel.
OWN_FIELDS = ("ForceType", "InputMarker", "OutputMarker")


class ForcePanel(EditPanel):
    """The task panel of a Force."""

    TITLE = "Edit force"
    ICON = "Force.svg"

    def build(self):
        obj = self.obj
        main = QtWidgets.QWidget()
        main.setObjectName("MultibodyForcePanel")
        layout = QtWidgets.QVBoxLayout(main)
        top = QtWidgets.QFormLayout()
        self.type_box = QtWidgets.QComboBox()
        self.type_box.setObjectName("ForceType")
        self.type_box.addItems(list(FORCE_TYPES))
        self.type_box.setCurrentIndex(self.type_box.findText(obj.ForceType))
        self.type_box.setToolTip(ForceProxy.prop("ForceType").doc)
        self.type_box.currentIndexChanged.connect(self._type_changed)
        top.addRow("Type", self.type_box)
        self.type_text = QtWidgets.QLabel()
        self.type_text.setWordWrap(True)
        top.addRow("", self.type_text)
        layout.addLayout(top)
        self.ends = EndsBox(self, ("At", "To"),
                            ("Marker the load acts at (the first end of a spring-damper)",
                             "Second end of a spring-damper"))
        layout.addWidget(self.ends.widget)
        self.property_fields(layout, skip=OWN_FIELDS)
        self._refresh()
        return main

    def _refresh(self):
        obj = self.obj
        kind = FORCE_TYPES.get(obj.ForceType)
        self.type_text.setText(kind.description if kind else "")
        unit = kind.units.get("magnitude") if kind else None
        if "Magnitude" in self.fields:
            self.fields["Magnitude"].label.setText(
                f"Magnitude ({pretty_unit(unit.replace(' ', '*'))})" if unit else "Magnitude")
        self.ends.show([obj.InputMarker, obj.OutputMarker])
        self.ends.show_rows(kind.markers if kind else 2)
        visible = set()
        for name, field in self.fields.items():
            shown = "Hidden" not in obj.getEditorMode(name)
            field.widget.setVisible(shown)
            field.label.setVisible(shown)
            if shown:
                visible.add(field.prop.group)
        for group, (box, _) in self.groups.items():
            box.setVisible(group in visible)

    def _type_changed(self, *_):
        self.set(self.obj, "ForceType", self.type_box.currentText())
        kind = FORCE_TYPES[self.obj.ForceType]
        if kind.markers == 1 and self.obj.OutputMarker is not None:
            self.set(self.obj, "OutputMarker", None)
        for field in self.fields.values():
            field.show(getattr(self.obj, field.prop.name))
        self._refresh()
        self.redraw(self.obj)

    def _field_changed(self, field):
        try:
            value = field.value()
        except ValueError as exc:
            self.say(f"Force '{self.obj.Label}', field {label_of(field.prop)}: {exc}")
            return
        self.say("")
        self.set(self.obj, field.prop.name, value, field.prop.unit)
        self._refresh()
        self.redraw(self.obj)

    def set_end(self, index, marker):
        self.set(self.obj, ("InputMarker", "OutputMarker")[index], marker)
        self._refresh()
        self.redraw(self.obj)

    def validate(self):
        obj = self.obj
        problems = []
        for field in self.fields.values():
            if not field.widget.isHidden():
                try:
                    field.value()
                except ValueError as exc:
                    problems.append(f"Force '{obj.Label}', field {label_of(field.prop)}: {exc}")
        kind = FORCE_TYPES.get(obj.ForceType)
        if obj.InputMarker is None:
            problems.append(f"Force '{obj.Label}': pick the marker it acts at")
        if kind is not None and kind.markers == 2:
            if obj.OutputMarker is None:
                problems.append(f"Force '{obj.Label}': pick its second end")
            elif obj.InputMarker is not None and obj.InputMarker.Body == obj.OutputMarker.Body:
                problems.append(f"Force '{obj.Label}': both ends are on one body")
        if "Direction" in self.fields and not self.fields["Direction"].widget.isHidden() and \
                obj.Direction.Length == 0.0:
            problems.append(f"Force '{obj.Label}', field Direction: give a direction (not 0, 0, 0)")
        return problems

    def stop(self):
        self.ends.stop()
