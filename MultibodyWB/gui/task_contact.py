"""The Contact task panel: both shapes and their markers, the normal force's law, friction.

Opened by double-clicking a contact and by the Contact command after it made one. The fields are
the contact's properties (:class:`~MultibodyWB.objects.contact.ContactProxy`, shown as the
property editor shows them: a shape's dimensions only when its type uses them): lengths and
speeds in FreeCAD's quantity spin boxes, the stiffness a number in N/m^exponent with the rule
that chose it. A convex side (the shape ``convex``: "Convex hull of the solid") says which
solid's hull it is and how many points the hull has at its tessellation tolerance, counted
again when the tolerance changes. Live edits, one undo step on OK, Cancel puts everything back
(:mod:`.task_base`).
"""

from ..document.contact_step import contact_integrator_advice, contact_step_advice, exported
from ..objects.contact import (ContactProxy, default_tolerance,
                               hull_summary, marker_solid, pairs_text, supported, time_text)
from .qt import QtCore, QtWidgets
from .task_base import EditPanel, EndsBox, describe_marker, label_of

#: Properties with their own place in the panel.
OWN_FIELDS = ("InputMarker", "OutputMarker", "StiffnessRule")


def _label(prop):
    """``"InputRadius"`` -> ``"Radius"`` (the side is the group), others as usual."""
    for side in ("Input", "Output"):
        if prop.name.startswith(side):
            return label_of(prop)[len(side):].strip().capitalize()
    return label_of(prop)


def _step_note(obj):
    """The mechanism's Simulation against what its contacts need, in words: its fixed step, or
    its adaptive integrator and tolerance ("" when the model cannot say)."""
    from ..objects.base import mechanism_of
    from ..objects.simulation import setting
    try:
        mechanism = mechanism_of(obj)
        model = exported(mechanism)
        if model is None:
            return ""
        found = contact_step_advice(mechanism, model)
        better = None if found is not None else contact_integrator_advice(mechanism, model)
    except Exception:  # noqa: BLE001 - a model being edited: no note rather than an error
        return ""
    if found is not None:
        sim, step, advised, text = found
        if step <= advised * (1 + 1e-9):
            return f"Simulation step {time_text(step)}: {text}"
        return (f"Simulation step {time_text(step)} is too long for the contacts: {text} (set "
                f"it in '{sim.Label}')")
    if better is None:
        return ""
    sim, integrator, rtol, text = better
    now = f"Simulation: {sim.Integrator} at a relative tolerance of " \
          f"{setting(sim, 'RelativeTolerance'):g}"
    if sim.Integrator in ("RK45", "DOP853") and setting(sim, "RelativeTolerance") <= rtol:
        return f"{now}: {text}"
    return f"{now}; advised: {text} (set it in '{sim.Label}')"


class ContactPanel(EditPanel):
    """The task panel of a Contact."""

    TITLE = "Edit contact"
    ICON = "Contact.svg"

    def build(self):
        main = QtWidgets.QWidget()
        main.setObjectName("MultibodyContactPanel")
        layout = QtWidgets.QVBoxLayout(main)
        self.pair_text = QtWidgets.QLabel()
        self.pair_text.setObjectName("pair")
        self.pair_text.setWordWrap(True)
        layout.addWidget(self.pair_text)
        self.ends = EndsBox(self, ("Input shape at", "Output shape at"),
                            (ContactProxy.prop("InputMarker").doc,
                             ContactProxy.prop("OutputMarker").doc))
        layout.addWidget(self.ends.widget)
        self.property_fields(layout, skip=OWN_FIELDS, label=_label)
        self.hulls = {}
        for side in ("Input", "Output"):
            box = self.fields[f"{side}Shape"].widget
            box.setItemData(box.findText("convex"), "Convex hull of the solid (its "
                            "tessellation's vertices)", QtCore.Qt.ToolTipRole)
            hull = QtWidgets.QLabel()
            hull.setObjectName(f"{side}Hull")
            hull.setWordWrap(True)
            self.groups[f"{side} shape"][1].addRow(hull)
            self.hulls[side] = hull
        self.rule = QtWidgets.QLabel()
        self.rule.setObjectName("StiffnessRule")
        self.rule.setWordWrap(True)
        self.rule.setToolTip(ContactProxy.prop("StiffnessRule").doc)
        self.groups["Normal force"][1].addRow(self.rule)
        # the Simulation's step against what the contacts need (fit_simulation_step)
        self.step_note = QtWidgets.QLabel()
        self.step_note.setObjectName("StepNote")
        self.step_note.setWordWrap(True)
        self.groups["Normal force"][1].addRow(self.step_note)
        self._refresh()
        return main

    def _refresh(self):
        obj = self.obj
        self.pair_text.setText(
            f"A {obj.InputShape} on {describe_marker(obj.InputMarker)} against a "
            f"{obj.OutputShape} on {describe_marker(obj.OutputMarker)}")
        self.ends.show([obj.InputMarker, obj.OutputMarker])
        self.rule.setText(f"Default rule: {obj.StiffnessRule}" if obj.StiffnessRule else "")
        self.step_note.setText(_step_note(obj))
        for side, hull in self.hulls.items():
            convex = getattr(obj, f"{side}Shape") == "convex"
            hull.setText(hull_summary(obj, side) if convex else "")
            hull.setVisible(convex)
        self.fields["Stiffness"].label.setText(f"Stiffness (N/m^{obj.Exponent:g})")
        for name, field in self.fields.items():
            shown = "Hidden" not in obj.getEditorMode(name)
            field.widget.setVisible(shown)
            field.label.setVisible(shown)

    def _field_changed(self, field):
        try:
            value = field.value()
        except ValueError as exc:
            self.say(f"Contact '{self.obj.Label}', field {label_of(field.prop)}: {exc}")
            return
        self.say("")
        self.set(self.obj, field.prop.name, value, field.prop.unit)
        side = field.prop.name[:-len("Shape")]
        if field.prop.name.endswith("Shape") and value == "convex" and \
                not getattr(self.obj, f"{side}Tolerance").Value > 0.0:
            solid = marker_solid(getattr(self.obj, f"{side}Marker"))
            if solid is not None:        # a side made convex here: the default tolerance
                self.set(self.obj, f"{side}Tolerance", default_tolerance(solid), "mm")
        if field.prop.name.endswith("Shape"):
            for other in self.fields.values():
                if other is not field:
                    other.show(getattr(self.obj, other.prop.name))
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
                    problems.append(f"Contact '{obj.Label}', field {label_of(field.prop)}: {exc}")
        for prop, what in (("InputMarker", "input"), ("OutputMarker", "output")):
            if getattr(obj, prop) is None:
                problems.append(f"Contact '{obj.Label}': pick the {what} shape's marker")
        if obj.InputMarker is not None and obj.OutputMarker is not None and \
                obj.InputMarker.Body == obj.OutputMarker.Body:
            problems.append(f"Contact '{obj.Label}': both shapes are on one body")
        if not supported(obj.InputShape, obj.OutputShape):
            problems.append(f"Contact '{obj.Label}', field Input shape: a {obj.InputShape} "
                            f"against a {obj.OutputShape} is not supported; the supported pairs "
                            f"are {pairs_text()}")
        if not obj.Stiffness > 0.0:
            problems.append(f"Contact '{obj.Label}', field Stiffness: {obj.Stiffness:g}; give a "
                            "positive stiffness (N/m^exponent)")
        return problems

    def stop(self):
        self.ends.stop()
