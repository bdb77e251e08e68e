"""The task panels' fields: a property's widget by its type (:func:`property_field`, a
:class:`Field` reading, showing and signalling its value), the text field of a quantity in a fixed
unit (:class:`QuantityEdit`, :func:`quantity_field`), FreeCAD's quantity spin box
(:func:`quantity_spin_box`), and how units and numbers are shown and read back
(:func:`pretty_unit`, :func:`plain_units`, :func:`format_number`). The panels that use them and
their live edits are :mod:`.task_base`'s."""

import re

import FreeCAD
import FreeCADGui

from ..objects import units
from ..objects.base import is_text_quantity, quantity_text
from .qt import QtCore, QtWidgets


def pretty_unit(unit):
    """A unit as a designer reads it: ``N*m/rad`` -> ``N·m/rad``, ``kg/m^3`` -> ``kg/m³``."""
    if unit == "deg":
        return "\u00b0"
    return unit.replace("*", "\u00b7").replace("^2", "\u00b2").replace("^3", "\u00b3") \
        .replace("deg", "\u00b0")


def format_number(value):
    """A number with enough digits and no noise: ``7850``, ``0.001``, ``2.5e-07``."""
    return f"{value:.10g}"


def plain_units(text):
    """A quantity text as FreeCAD parses it: the units as :func:`pretty_unit` shows them written
    plainly (``2 N·m/rad`` -> ``2 N*m/rad``, ``kg·mm²`` -> ``kg*mm^2``, ``N·mm/°`` -> ``N*mm/deg``);
    a text without such signs is returned as it is."""
    return text.replace("\u00b7", "*").replace("\u00b2", "^2").replace("\u00b3", "^3") \
        .replace("\u00b0", "deg")


class QuantityEdit(QtWidgets.QLineEdit):
    """A text field for a quantity in a fixed unit: shows ``2 N·m/rad``, takes ``2``, ``2 N*m/rad``
    or any quantity FreeCAD converts to that unit (``2000 N*mm/rad``); an angular speed also in
    ``rpm``."""

    def __init__(self, unit, parent=None):
        super().__init__(parent)
        self.unit = unit
        self.editingFinished.connect(self._tidy)

    def _tidy(self):
        """Left after typing: the value shown in the field's unit, its number first."""
        try:
            self.set_internal(self.internal())
        except ValueError:
            pass                               # the panel says what is wrong

    def set_internal(self, value):
        """Show a value given in FreeCAD's internal units."""
        unit = pretty_unit(self.unit)
        number = format_number(value / units.factor(self.unit))
        self.setText(f"{number}{unit}" if unit == "\u00b0" else f"{number} {unit}")
        self.setCursorPosition(0)             # the number shows first in a narrow field

    def internal(self):
        """The value in FreeCAD's internal units; ValueError when the text is no such quantity."""
        text = self.text().strip().replace("\u00b7", "*").replace("\u00b2", "^2") \
            .replace("\u00b3", "^3")
        text = text.replace("\u00b0", " deg")
        rpm = re.match(r"^([-+0-9.eE]+)\s*(rpm|1/min)$", text)
        if rpm and units.unit(self.unit) == units.unit("deg/s"):
            return float(rpm.group(1)) * 360.0 / 60.0 * units.factor("deg/s")
        try:
            return float(text.replace(",", ".")) * units.factor(self.unit)
        except ValueError:
            pass
        try:
            q = FreeCAD.Units.Quantity(text)
        except Exception:  # FreeCAD's parser raises its own errors
            raise ValueError(f"'{self.text()}' is not a number or a quantity") from None
        if q.Unit != units.unit(self.unit):
            raise ValueError(f"'{self.text()}' is not in {self.unit} (or a unit of the same kind)")
        return q.Value


class Field:
    """One property's widget: ``widget``, ``value()`` (what to set), ``show(value)``, and
    ``changed`` connected to a callback."""

    def __init__(self, prop, widget, read, write, signal):
        self.prop = prop
        self.widget = widget
        self._read = read
        self._write = write
        self._signal = signal
        self.quiet = False

    def value(self):
        return self._read()

    def show(self, value):
        self.quiet = True
        try:
            self._write(value)
        finally:
            self.quiet = False

    def connect(self, callback):
        def slot(*_):
            if not self.quiet:
                callback(self)
        self._signal(slot)


def quantity_field(unit, tip=""):
    """A field for a value in ``unit`` with its own signal ``textEdited`` (see
    :class:`QuantityEdit`), starting at 0."""
    w = QuantityEdit(unit)
    w.set_internal(0.0)
    if tip:
        w.setToolTip(f"{tip}\nA number in {pretty_unit(unit)}, or a quantity with its unit")
    return w


def internal_or_zero(w):
    """The value of a :class:`QuantityEdit` in internal units, 0 while it is no quantity."""
    try:
        return w.internal()
    except ValueError:
        return 0.0


#: Property types whose unit FreeCAD has (its own quantity spin box shows them).
UNIT_PROPERTIES = ("App::PropertyLength", "App::PropertyDistance", "App::PropertySpeed",
                   "App::PropertyAcceleration", "App::PropertyForce", "App::PropertyAngle")


#: FreeCAD's UiLoader that makes the quantity spin boxes (:func:`quantity_spin_box`).
_ui_loader = None


def quantity_spin_box(unit):
    """FreeCAD's ``Gui::QuantitySpinBox`` showing a quantity in ``unit`` (typed in any unit of
    the kind, shown in the user's unit schema); a :class:`QuantityEdit` if FreeCAD makes none."""
    global _ui_loader
    w = None
    try:
        if _ui_loader is None:
            _ui_loader = FreeCADGui.UiLoader()
        for _ in range(2):
            w = _ui_loader.createWidget("Gui::QuantitySpinBox")
            try:
                w.objectName()
                break
            except RuntimeError:
                # PySide handed back the wrapper of a widget deleted in C++ (a closed
                # panel's) that had the same address: collected, the next one is fresh
                import gc
                gc.collect()
                w = None
    except Exception:  # noqa: BLE001 - no UiLoader: the workbench's own field
        w = None
    if w is None:
        return QuantityEdit(unit)
    w.setProperty("unit", unit)
    w.setProperty("minimum", -1e12)
    w.setProperty("maximum", 1e12)
    return w


def set_spin_value(w, value):
    """Show ``value`` (a number in the field's unit) in a :func:`quantity_spin_box`."""
    if isinstance(w, QuantityEdit):
        w.set_internal(value * units.factor(w.unit))
    else:
        w.setProperty("rawValue", value)


def property_field(obj, prop):
    """The :class:`Field` editing ``prop`` (a :class:`~MultibodyWB.objects.base.Prop`) of
    ``obj``, showing its current value; None for a property type without a field."""
    tip = prop.doc
    if prop.type == "App::PropertyEnumeration":
        w = QtWidgets.QComboBox()
        w.addItems(list(obj.getEnumerationsOfProperty(prop.name)))
        field = Field(prop, w, w.currentText,
                      lambda v: w.setCurrentIndex(max(0, w.findText(str(v)))),
                      lambda f: w.currentIndexChanged.connect(f))
    elif prop.type == "App::PropertyBool":
        w = QtWidgets.QCheckBox()
        field = Field(prop, w, w.isChecked, lambda v: w.setChecked(bool(v)),
                      lambda f: w.toggled.connect(f))
    elif is_text_quantity(prop):
        # a text with its unit, shown and recorded as the property keeps it
        w = QtWidgets.QLineEdit()
        example = "0, 0, -9810" if prop.vector else "-0.000"
        w.setProperty("unit_example", f"{example} {prop.unit}")    # the width it needs (fit_narrow)

        def read(w=w, prop=prop):
            return quantity_text(prop, plain_units(w.text()))

        def write(v, w=w):
            w.setText(str(v))
            w.setCursorPosition(0)             # the number shows first in a narrow field

        def finished(w=w, read=read, write=write):
            try:
                write(read())                  # a bare number typed in: shown with its unit
            except ValueError:
                pass                           # the panel says what is wrong
        w.editingFinished.connect(finished)
        field = Field(prop, w, read, write, lambda f, w=w: w.textEdited.connect(f))
    elif prop.type == "App::PropertyString":
        w = QtWidgets.QLineEdit()

        def write(v, w=w):
            w.setText(str(v))
            w.setCursorPosition(0)             # an expression shows from its start
        field = Field(prop, w, w.text, write, lambda f: w.textEdited.connect(f))
    elif prop.type in ("App::PropertyFloat", "App::PropertyInteger"):
        w = QtWidgets.QLineEdit()
        kind = float if prop.type == "App::PropertyFloat" else int

        def read(w=w, kind=kind, name=prop.name):
            try:
                return kind(w.text().strip().replace(",", ".") if kind is float else w.text())
            except ValueError:
                raise ValueError(f"'{w.text()}' is not a number") from None
        def write(v, w=w):
            w.setText(format_number(v))
            w.setCursorPosition(0)             # a long number shows from its start
        field = Field(prop, w, read, write, lambda f, w=w: w.textEdited.connect(f))
    elif prop.type == units.QUANTITY:
        w = QuantityEdit(prop.unit)
        tip = f"{prop.doc}\nA number in {pretty_unit(prop.unit)}, or a quantity with its unit"
        field = Field(prop, w, lambda w=w, unit=prop.unit: units.quantity(w.internal()
                                                                           / units.factor(unit),
                                                                           unit),
                      lambda v, w=w: w.set_internal(float(getattr(v, "Value", v))),
                      lambda f, w=w: w.textEdited.connect(f))
    elif prop.type in UNIT_PROPERTIES and prop.unit:
        w = quantity_spin_box(prop.unit)
        if isinstance(w, QuantityEdit):
            read = (lambda w=w, unit=prop.unit:
                    units.quantity(w.internal() / units.factor(unit), unit))
            signal = (lambda f, w=w: w.textEdited.connect(f))
        else:
            def read(w=w, unit=prop.unit):
                return units.quantity(float(w.property("rawValue")), unit)

            def signal(f, w=w):
                QtCore.QObject.connect(w, QtCore.SIGNAL("valueChanged(double)"), f)
        field = Field(prop, w, read,
                      lambda v, w=w, unit=prop.unit: set_spin_value(
                          w, float(getattr(v, "Value", v)) / units.factor(unit)),
                      signal)
    elif prop.type in ("App::PropertyVector", "App::PropertyVectorDistance"):
        w = QtWidgets.QWidget()
        row = QtWidgets.QHBoxLayout(w)
        row.setContentsMargins(0, 0, 0, 0)
        boxes = []
        for axis in "xyz":
            box = QtWidgets.QDoubleSpinBox()
            box.setRange(-1e9, 1e9)
            box.setDecimals(3)
            box.setObjectName(f"{prop.name}_{axis}")
            box.setToolTip(f"{axis} component")
            row.addWidget(box)
            boxes.append(box)

        def write(v, boxes=boxes):
            for box, x in zip(boxes, v):
                box.setValue(float(x))

        def signal(f, boxes=boxes):
            for box in boxes:
                box.valueChanged.connect(f)
        field = Field(prop, w, lambda boxes=boxes: FreeCAD.Vector(*(b.value() for b in boxes)),
                      write, signal)
    else:
        return None
    w.setObjectName(prop.name)
    w.setToolTip(tip)
    field.show(getattr(obj, prop.name))
    return field
