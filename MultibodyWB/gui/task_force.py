"""The Force task panel: type, ends, direction with its arrow, magnitude, spring-damper, and
the law's own parameters.

Opened by double-clicking a force and by the force commands after they made one. The fields are
the force's properties the type uses (:data:`~MultibodyWB.objects.force.FIELD_PROPERTIES`, shown
as the property editor shows them); the arrow (or spring) in the 3D view follows the typed
direction and the picked ends at once. A law's own parameters (its ``Param`` rows: the
properties of :func:`~MultibodyWB.objects.force.type_params`) are read from the rows alone: in a
group named after the type, each parameter under its title (its tool tip the row's doc) with a
field per axis, ``x``, ``y``, ``z`` (one field for a number), each showing its unit. Live edits,
one undo step on OK, Cancel puts everything back (:mod:`.task_base`).
"""

from types import SimpleNamespace

from ..objects.force import ForceProxy, param_names
from ..solver.api import FORCE_TYPES
from .qt import QtWidgets
from .task_base import EditPanel, EndsBox, label_of, pretty_unit, property_field

#: Properties with their own place in the panel.
OWN_FIELDS = ("ForceType", "InputMarker", "OutputMarker")


def param_title(param):
    """A parameter's title: ``"TranslationCubicStiffness"`` -> ``"Translation cubic stiffness"``."""
    return label_of(SimpleNamespace(name=param.tag))


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
        own = ForceProxy.param_props()
        self.property_fields(layout, skip=OWN_FIELDS + tuple(own))
        self._param_fields(layout, own)
        self._refresh()
        return main

    def _param_fields(self, layout, own):
        """The laws' own parameters (see the module): their fields join ``self.fields``, their
        groups ``self.groups``; ``self.param_sections``: (a parameter's title, its properties)."""
        obj = self.obj
        self.param_sections = []
        done = set()
        for kind in FORCE_TYPES.values():
            for param in kind.params:
                names = [n for n in param_names(param) if n in own and n not in done
                         and n in obj.PropertiesList]
                if not names:
                    continue
                done.update(names)
                group = own[names[0]].group
                if group not in self.groups:
                    box = QtWidgets.QGroupBox(group)
                    box.setObjectName(group)
                    form = QtWidgets.QFormLayout(box)
                    form.setContentsMargins(4, 4, 4, 4)
                    self.groups[group] = (box, form)
                    layout.addWidget(box)
                form = self.groups[group][1]
                title = param_title(param)
                unit = pretty_unit(own[names[0]].unit or param.unit)
                tip = f"{param.doc[:1].upper()}{param.doc[1:]} [{unit}]"
                if param.size != 1:
                    # its title on a row of its own (wrapped: the view is narrow), then x, y, z
                    heading = QtWidgets.QLabel(f"<b>{title}</b>")
                    heading.setObjectName(param.tag)
                    heading.setWordWrap(True)
                    heading.setToolTip(tip)
                    form.addRow(heading)
                    self.param_sections.append((heading, names))
                for name in names:
                    field = property_field(obj, own[name])
                    if field is None:
                        continue
                    text = QtWidgets.QLabel(title if param.size == 1 else name[-1].lower())
                    text.setToolTip(own[name].doc)
                    form.addRow(text, field.widget)
                    field.label = text
                    field.connect(self._field_changed)
                    self.fields[name] = field

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
        for heading, names in self.param_sections:
            heading.setVisible(any("Hidden" not in obj.getEditorMode(n) for n in names))

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
