"""The Coupler task panel: what it couples, its type, the coordinates and the type's field.

Opened by double-clicking a coupler and by the Coupler command after it made one. The fields are
the coupler's properties (:class:`~MultibodyWB.objects.coupler.CouplerProxy`, shown as the
property editor shows them: only the field the type uses, the ratio a number, the pitch radius in
FreeCAD's length unit, the coefficients "a, b"). Live edits, one undo step on OK, Cancel puts
everything back (:mod:`.task_base`).
"""

from ..objects.coupler import CouplerProxy
from ..solver.api import COORDINATE_KIND, COUPLER_TYPES
from .qt import QtWidgets
from .task_base import EditPanel, Field, format_number, label_of

#: Properties with their own place in the panel.
OWN_FIELDS = ("FirstHinge", "SecondHinge", "Coefficients")


def _coefficients_field(obj):
    """A field "a, b" for the Coefficients float list."""
    prop = CouplerProxy.prop("Coefficients")
    w = QtWidgets.QLineEdit()
    w.setObjectName("Coefficients")
    w.setToolTip(prop.doc)

    def read():
        parts = [p for p in w.text().replace(";", ",").split(",") if p.strip()]
        try:
            values = [float(p) for p in parts]
        except ValueError:
            raise ValueError(f"'{w.text()}' is not two numbers a, b") from None
        if len(values) != 2:
            raise ValueError(f"'{w.text()}' is not two numbers a, b")
        return values

    def write(v):
        w.setText(", ".join(format_number(x) for x in v))

    field = Field(prop, w, read, write, lambda f: w.textEdited.connect(f))
    field.show(list(obj.Coefficients))
    return field


class CouplerPanel(EditPanel):
    """The task panel of a Coupler."""

    TITLE = "Edit coupler"
    ICON = "Coupler.svg"

    def build(self):
        main = QtWidgets.QWidget()
        main.setObjectName("MultibodyCouplerPanel")
        layout = QtWidgets.QVBoxLayout(main)
        self.couples = QtWidgets.QLabel()
        self.couples.setObjectName("couples")
        self.couples.setWordWrap(True)
        layout.addWidget(self.couples)
        self.property_fields(layout, skip=OWN_FIELDS)
        field = _coefficients_field(self.obj)
        text = QtWidgets.QLabel(label_of(field.prop))
        text.setToolTip(field.prop.doc)
        field.label = text
        self.groups["Coupler"][1].addRow(text, field.widget)
        field.connect(self._field_changed)
        self.fields["Coefficients"] = field
        self.meaning = QtWidgets.QLabel()
        self.meaning.setObjectName("meaning")
        self.meaning.setWordWrap(True)
        self.groups["Coupler"][1].addRow(self.meaning)
        self._refresh()
        return main

    def _refresh(self):
        obj = self.obj
        ends = [f"'{getattr(h, 'Label', '?')}' {c}" for h, c in
                ((obj.FirstHinge, obj.FirstCoordinate), (obj.SecondHinge, obj.SecondCoordinate))]
        self.couples.setText(f"Couples {ends[0]} (first) with {ends[1]} (second)")
        kind = COUPLER_TYPES.get(obj.CouplerType)
        self.meaning.setText(kind.description if kind else "")
        for name, field in self.fields.items():
            shown = "Hidden" not in obj.getEditorMode(name)
            field.widget.setVisible(shown)
            field.label.setVisible(shown)

    def _field_changed(self, field):
        try:
            value = field.value()
        except ValueError as exc:
            self.say(f"Coupler '{self.obj.Label}', field {label_of(field.prop)}: {exc}")
            return
        self.say("")
        self.set(self.obj, field.prop.name, value, field.prop.unit)
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
                    problems.append(f"Coupler '{obj.Label}', field {label_of(field.prop)}: {exc}")
        kind = COUPLER_TYPES.get(obj.CouplerType)
        if kind is None:
            return problems
        for i, (side, coordinate) in enumerate((("first", obj.FirstCoordinate),
                                                ("second", obj.SecondCoordinate))):
            wanted = kind.kinds[i]
            have = COORDINATE_KIND.get(coordinate)
            if have is None:
                problems.append(f"Coupler '{obj.Label}': the {side} hinge has no coordinate to "
                                "couple")
            elif wanted is not None and have != wanted:
                problems.append(f"Coupler '{obj.Label}', field {side.capitalize()} coordinate: "
                                f"a {kind.name} coupler's {side} coordinate is a {wanted}; "
                                f"{coordinate} is a {have}")
        if kind.field == "ratio" and not obj.Ratio != 0.0:
            problems.append(f"Coupler '{obj.Label}', field Ratio: give a ratio other than 0")
        if kind.field == "pitch_radius" and not obj.PitchRadius.Value > 0.0:
            problems.append(f"Coupler '{obj.Label}', field Pitch radius: give a positive radius")
        if kind.field == "coefficients" and \
                (len(obj.Coefficients) != 2 or obj.Coefficients[1] == 0.0):
            problems.append(f"Coupler '{obj.Label}', field Coefficients: give two numbers a, b "
                            "with b not 0")
        return problems
