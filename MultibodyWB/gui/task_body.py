"""The Body task panel: solids, density or material, ground; the mass properties it gives.

Opened by double-clicking a body and by the Body command after it made one. The solids are
listed (add the solids selected in the 3D view or the tree, remove the selected rows); the
density is typed in (``kg/m^3``, or any density with its unit) or taken from a material card
(name and density); **Ground** makes the body its mechanism's ground. The mass, the centre of
mass (base frame) and the inertia tensor about the base-frame origin are shown with their units
and recomputed at every change. Live edits, one undo step on OK, Cancel puts everything back
(:mod:`.task_base`).
"""

import functools
import glob
import os
import re

import FreeCAD
import FreeCADGui

from ..objects import units
from ..objects.base import quantity_value
from ..objects.body import INERTIA_NAMES, BodyProxy
from ..objects.mechanism import mechanism_of
from .qt import QtWidgets
from .task_base import EditPanel, pretty_unit, property_field

_NAME = re.compile(r'^\s*Name\s*[=:]\s*"?([^"\n]+?)"?\s*$', re.M)
_DENSITY = re.compile(r'^\s*Density\s*[=:]\s*"?([-+0-9.eE]+\s*[^"\n]+?)"?\s*$', re.M)


@functools.lru_cache(maxsize=1)
def material_cards():
    """FreeCAD's standard material cards that give a density: ``{name: density text}``, read
    from the ``.FCMat`` files of FreeCAD's Material module (the INI-like cards of FreeCAD 0.20's
    ``StandardMaterial`` folder and the YAML cards of 1.0's ``Materials/Standard``)."""
    root = os.path.join(FreeCAD.getResourceDir(), "Mod", "Material")
    cards = {}
    for path in sorted(glob.glob(os.path.join(root, "**", "*.FCMat"), recursive=True)):
        if "Standard" not in os.path.relpath(path, root):
            continue
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        name, density = _NAME.search(text), _DENSITY.search(text)
        if name and density:
            cards[name.group(1).strip()] = density.group(1).strip()
    return cards


#: Mass properties shown: property -> (label, unit).
SHOWN = {"Volume": ("Volume", "mm^3"), "Mass": ("Mass", "kg")}


def short(value, size=None):
    """A computed value with 6 significant digits; 0 when it is round-off against ``size`` (the
    largest entry of its vector or tensor)."""
    if size is not None and abs(value) < 1e-9 * size:
        value = 0.0
    return f"{value:.6g}"


class BodyPanel(EditPanel):
    """The task panel of a Body."""

    TITLE = "Edit body"
    ICON = "Body.svg"

    def build(self):
        obj = self.obj
        main = QtWidgets.QWidget()
        main.setObjectName("MultibodyBodyPanel")
        layout = QtWidgets.QVBoxLayout(main)

        solids = QtWidgets.QGroupBox("Solids")
        box = QtWidgets.QVBoxLayout(solids)
        self.solid_list = QtWidgets.QListWidget()
        self.solid_list.setObjectName("solids")
        self.solid_list.setToolTip(BodyProxy.prop("Solids").doc)
        self.solid_list.setSelectionMode(QtWidgets.QAbstractItemView.ExtendedSelection)
        self.solid_list.setMaximumHeight(110)
        box.addWidget(self.solid_list)
        row = QtWidgets.QHBoxLayout()
        self.add_button = QtWidgets.QPushButton("Add selected")
        self.add_button.setObjectName("add_solids")
        self.add_button.setToolTip("Add the solids selected in the 3D view or the tree")
        self.remove_button = QtWidgets.QPushButton("Remove")
        self.remove_button.setObjectName("remove_solids")
        self.remove_button.setToolTip("Remove the solids selected in the list")
        row.addWidget(self.add_button)
        row.addWidget(self.remove_button)
        box.addLayout(row)
        self.add_button.clicked.connect(self.add_selected)
        self.remove_button.clicked.connect(self.remove_selected)
        layout.addWidget(solids)

        material = QtWidgets.QGroupBox("Material")
        form = QtWidgets.QFormLayout(material)
        self.fields = {}
        for name in ("DensitySource", "Density"):
            field = property_field(obj, BodyProxy.prop(name))
            field.connect(self._field_changed)
            self.fields[name] = field
        form.addRow("Density from", self.fields["DensitySource"].widget)
        form.addRow("Density", self.fields["Density"].widget)
        card = dict(obj.Material)
        self.material_name = QtWidgets.QLineEdit(card.get("Name", ""))
        self.material_name.setObjectName("material_name")
        self.material_name.setToolTip("Name of the material card")
        self.material_density = QtWidgets.QLineEdit(card.get("Density", ""))
        self.material_density.setObjectName("material_density")
        self.material_density.setToolTip("Density entry of the material card, with its unit "
                                         "(7850 kg/m^3, 2.7 g/cm^3)")
        self.card = QtWidgets.QComboBox()
        self.card.setObjectName("material_card")
        self.card.setToolTip("A standard material card of FreeCAD: its name and density are "
                             "taken, and the density comes from the material")
        self.card.addItem("(choose a card)")
        self.card.addItems(sorted(material_cards()))
        self.card.activated.connect(self._card_chosen)
        form.addRow("Card", self.card)
        form.addRow("Material", self.material_name)
        form.addRow("Material density", self.material_density)
        for w in (self.material_name, self.material_density):
            w.textEdited.connect(self._material_changed)
        self.ground = QtWidgets.QCheckBox("Ground (the fixed frame)")
        self.ground.setObjectName("ground")
        self.ground.setToolTip("Make this body its mechanism's ground")
        mechanism = mechanism_of(obj)
        self.ground.setChecked(mechanism is not None and mechanism.Ground == obj)
        self.ground.setEnabled(mechanism is not None)
        self.ground.toggled.connect(self._ground_changed)
        form.addRow(self.ground)
        layout.addWidget(material)

        props = QtWidgets.QGroupBox("Mass properties")
        props.setToolTip("Computed from the solids and the density: centre of mass in the base "
                         "frame (the first solid's placement), inertia about the base-frame "
                         "origin in base-frame axes (products: Ixy = -integral of x*y dm)")
        grid = QtWidgets.QGridLayout(props)      # read-only rows: never wrapped
        self.shown = {}
        for row, name in enumerate(list(SHOWN) + ["CenterOfMass"] + list(INERTIA_NAMES)):
            label = QtWidgets.QLabel()
            label.setObjectName(name)
            label.setWordWrap(True)
            title = SHOWN[name][0] if name in SHOWN else \
                ("Centre of mass" if name == "CenterOfMass" else name)
            grid.addWidget(QtWidgets.QLabel(title), row, 0)
            grid.addWidget(label, row, 1)
            self.shown[name] = label
        grid.setColumnStretch(1, 1)
        layout.addWidget(props)
        self._show_solids()
        self._show_mass()
        return main

    # -- showing --------------------------------------------------------------------------------
    def _show_solids(self):
        self.solid_list.clear()
        for solid in self.obj.Solids:
            self.solid_list.addItem(solid.Label if solid.Label == solid.Name
                                    else f"{solid.Label} ({solid.Name})")
        self._enable_material()

    def _enable_material(self):
        material = self.obj.DensitySource == "Material"
        self.fields["Density"].widget.setEnabled(not material)
        self.material_name.setEnabled(material)
        self.material_density.setEnabled(material)

    def _show_mass(self):
        obj = self.obj
        for name, (_, unit) in SHOWN.items():
            value = quantity_value(obj, name) / units.factor(unit)
            self.shown[name].setText(f"{short(value)} {pretty_unit(unit)}")
        c = obj.CenterOfMass
        size = max(1.0, abs(c.x), abs(c.y), abs(c.z))
        self.shown["CenterOfMass"].setText(
            "(" + ", ".join(short(x, size) for x in (c.x, c.y, c.z)) + ") mm")
        # the inertia properties are texts with their unit (kg*mm^2), computed by the body
        inertia = [quantity_value(obj, name) / units.factor("kg*mm^2") for name in INERTIA_NAMES]
        size = max(abs(x) for x in inertia[:3]) if any(inertia[:3]) else 1.0
        for name, value in zip(INERTIA_NAMES, inertia):
            self.shown[name].setText(f"{short(value, size)} {pretty_unit('kg*mm^2')}")

    def _recompute(self):
        self.obj.recompute()
        self._show_mass()

    # -- changes --------------------------------------------------------------------------------
    def _field_changed(self, field):
        try:
            value = field.value()
        except ValueError as exc:
            self.say(f"Body '{self.obj.Label}', field {field.prop.name}: {exc}")
            return
        self.say("")
        self.set(self.obj, field.prop.name, value, field.prop.unit)
        self._enable_material()
        self._recompute()

    def _material_changed(self, *_):
        card = dict(self.obj.Material)
        card["Name"] = self.material_name.text().strip()
        card["Density"] = self.material_density.text().strip()
        self.set(self.obj, "Material", {k: v for k, v in card.items() if v})
        self._recompute()
        from ..objects.body import density_of
        problems = density_of(self.obj)[1] if self.obj.DensitySource == "Material" else []
        self.say("; ".join(f"Body '{self.obj.Label}', {p}: {m}" for p, m in problems))

    def _card_chosen(self, index):
        name = self.card.itemText(index)
        density = material_cards().get(name)
        if density is None:
            return
        self.material_name.setText(name)
        self.material_density.setText(density)
        if self.obj.DensitySource != "Material":
            self.set(self.obj, "DensitySource", "Material")
            self.fields["DensitySource"].show("Material")
            self._enable_material()
        self._material_changed()

    def _ground_changed(self, on):
        mechanism = mechanism_of(self.obj)
        if mechanism is None:
            return
        if on:
            self.set(mechanism, "Ground", self.obj)
        elif mechanism.Ground == self.obj:
            self.set(mechanism, "Ground", None)
        self.redraw(self.obj)
        self.obj.ViewObject.signalChangeIcon()

    def add_selected(self):
        from ..objects.body import has_solids
        solids = list(self.obj.Solids)
        for item in FreeCADGui.Selection.getSelectionEx(self.doc.Name):
            if has_solids(item.Object) and item.Object not in solids:
                solids.append(item.Object)
        if solids != list(self.obj.Solids):
            self.set(self.obj, "Solids", solids)
            self._show_solids()
            self._recompute()

    def remove_selected(self):
        rows = {self.solid_list.row(i) for i in self.solid_list.selectedItems()}
        solids = [s for k, s in enumerate(self.obj.Solids) if k not in rows]
        if len(solids) != len(self.obj.Solids):
            self.set(self.obj, "Solids", solids)
            self._show_solids()
            self._recompute()

    def validate(self):
        from ..objects.body import density_of
        problems = []
        try:
            self.fields["Density"].value()
        except ValueError as exc:
            problems.append(f"Body '{self.obj.Label}', field Density: {exc}")
        mechanism = mechanism_of(self.obj)
        ground = mechanism is not None and mechanism.Ground == self.obj
        if not self.obj.Solids and not ground:
            problems.append(f"Body '{self.obj.Label}': no solid; add the solid(s) it stands for")
        if not ground:
            problems += [f"Body '{self.obj.Label}', {p}: {m}" for p, m in density_of(self.obj)[1]]
        return problems
