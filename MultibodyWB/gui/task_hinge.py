"""The Hinge task panel: type, ends, hinge frame, and every option of the type's coordinates.

Opened by double-clicking a hinge and by the hinge commands after they made one. Everything is
applied live and put back on Cancel; OK makes the changes again as one undo step, recorded as
macro lines (:mod:`.task_base`).

- **Type**: the hinge's ``HingeType``; the solver's :data:`~MultibodyWB.solver.model.HINGE_TYPES`
  decides which coordinates and options it has: the panel shows the fields of the properties the
  hinge shows in the property editor (:meth:`~MultibodyWB.objects.hinge.HingeProxy.
  update_visibility`), grouped as the properties are (``Coordinate rz``...). A property added to
  the hinge's table appears here without more work. The limits' stop fields (stiffness,
  restitution, impact speed) show while ``UseLimits`` is ticked; ticking it fills a stop
  stiffness left at 0 with its 50 Hz default
  (:func:`~MultibodyWB.objects.hinge.default_stop_stiffness`), shown in its field.
- **Ends**: the input (moving, tip-side) and output markers, picked in the 3D view or the tree
  (a marker, or a face, edge or vertex of a body's solid, on which a marker is made); the hinge
  symbol is drawn on them at once.
- **Hinge frame**: flip the axis (both markers' z reversed), move both markers along the axis,
  turn both about it: the markers' attachment offsets.
- **Initial coordinates** move the parts: typing a coordinate's start value sets the hinge at it
  with the mechanism's closed loops re-assembled
  (:class:`~MultibodyWB.document.preview.KinematicPreview`), the parts moving in the 3D view at
  once. OK keeps the parts there (the drawing is the start); Cancel puts them back exactly. With
  ``InitialAsDrawn`` the fields show the drawn values.
"""

import FreeCAD

from ..objects.body import TYPE as BODY
from ..objects.hinge import (COORDINATES, OPTION_PROPERTIES, OPTION_SWITCHES, STOP_PREFIXES,
                             HingeProxy, property_name)
from ..objects.mechanism import mechanism_of, members
from ..solver.api import COORDINATE_KIND, COORDINATE_UNIT, HINGE_TYPES
from .qt import QtWidgets
from .task_base import (EditPanel, EndsBox, internal_or_zero, label_of, literal, quantity_field,
                        shown)

#: Switches of :data:`~MultibodyWB.objects.hinge.OPTION_SWITCHES` whose option's fields are
#: edited only while they are on.
ENABLING_SWITCHES = ("UseLimits",)

#: Properties with their own place in the panel (not in the generic groups).
OWN_FIELDS = ("HingeType", "InputMarker", "OutputMarker")

#: Options of a coordinate whose non-zero value opens its folded group (something set there).
SETTINGS = ("InitialRate", "Stiffness", "Damping", "MotorSpeed")

#: Problems of an incomplete model listed under the preview's note (the rest counted).
SHOWN_PROBLEMS = 4


def has_settings(obj, coordinate):
    """True when the hinge's ``coordinate`` has something set: a rate, spring, damper, motor,
    driver, an initial value used, limits on."""
    from ..objects.base import quantity_value
    for prefix in SETTINGS:
        name = property_name(prefix, coordinate)
        try:
            if name in obj.PropertiesList and quantity_value(obj, name) != 0.0:
                return True
        except ValueError:
            return True                  # a text the user typed, even a wrong one
    driver = property_name("Driver", coordinate)
    if getattr(obj, driver, ""):
        return True
    initial = property_name("Initial", coordinate)
    if not getattr(obj, "InitialAsDrawn", True) and initial in obj.PropertiesList and \
            quantity_value(obj, initial) != 0.0:
        return True
    return bool(getattr(obj, "UseLimits", False))


def expression_unit(prop):
    """`` (rad)`` for a driver expression of a rotation (``m`` of a translation): the unit its
    value is in, which the field does not show otherwise."""
    if prop.type != "App::PropertyString":
        return ""
    for c in COORDINATES:
        if prop.name.endswith(c.capitalize()) and prop.name[:-len(c)] == "Driver":
            return f" ({COORDINATE_UNIT[COORDINATE_KIND[c]]})"
    return ""


def frame_change(flip, offset, angle):
    """The placement applied after each marker's attachment offset: a turn by ``angle`` (deg)
    about the axis and a shift by ``offset`` (mm) along it, then (``flip``) half a turn about x."""
    p = FreeCAD.Placement(FreeCAD.Vector(0, 0, offset), FreeCAD.Rotation(FreeCAD.Vector(0, 0, 1),
                                                                          angle))
    if flip:
        p = p.multiply(FreeCAD.Placement(FreeCAD.Vector(), FreeCAD.Rotation(FreeCAD.Vector(1, 0, 0),
                                                                            180)))
    return p


#: A drawn coordinate measured from the markers' poses smaller than this (mm or deg) is shown
#: as 0: round-off (numpy 2 on FreeCAD 1.0 measured a drawn 0 deg as 2.5e-14 deg).
DRAWN_ROUND_OFF = 1e-9


class HingePanel(EditPanel):
    """The task panel of a Hinge."""

    TITLE = "Edit hinge"
    ICON = "Hinge.svg"

    def build(self):
        obj = self.obj
        self.preview = None
        self.preview_problem = ""
        self.unreachable = {}            # coordinate -> why its typed start cannot be reached
        self.solid_placements = {}
        self._frame_base = {}            # marker Name -> its AttachmentOffset before the frame edit
        main = QtWidgets.QWidget()
        main.setObjectName("MultibodyHingePanel")
        layout = QtWidgets.QVBoxLayout(main)
        top = QtWidgets.QFormLayout()
        self.type_box = QtWidgets.QComboBox()
        self.type_box.setObjectName("HingeType")
        for name, kind in HINGE_TYPES.items():
            self.type_box.addItem(name)
            self.type_box.setItemData(self.type_box.count() - 1,
                                      f"{kind.description} (coordinates: "
                                      f"{', '.join(kind.coordinates) or 'none'})",
                                      3)    # Qt.ToolTipRole
        self.type_box.setCurrentIndex(self.type_box.findText(obj.HingeType))
        self.type_box.setToolTip(HingeProxy.prop("HingeType").doc)
        self.type_box.currentIndexChanged.connect(self._type_changed)
        top.addRow("Type", self.type_box)
        self.type_text = QtWidgets.QLabel()
        self.type_text.setWordWrap(True)
        top.addRow("", self.type_text)
        layout.addLayout(top)

        self.ends = EndsBox(self, ("Input", "Output"),
                            ("Marker on the input (moving, tip-side) body",
                             "Marker on the output (root-side) body, the ground's for a hinge to "
                             "the ground"))
        self.ends.show([obj.InputMarker, obj.OutputMarker])
        layout.addWidget(self.ends.widget)

        frame = QtWidgets.QGroupBox("Hinge frame")
        frame.setObjectName("frame")
        form = QtWidgets.QFormLayout(frame)
        self.flip = QtWidgets.QCheckBox("Flip the axis")
        self.flip.setObjectName("flip")
        self.flip.setToolTip("Reverse the hinge axis: both markers' z axes turned over (half a "
                             "turn about their x axes)")
        self.offset = quantity_field("mm")
        self.offset.setObjectName("axial_offset")
        self.offset.setToolTip("Move both markers along the hinge axis (their attachment "
                               "offsets); other hinges on these markers move too")
        self.turn = quantity_field("deg")
        self.turn.setObjectName("axial_turn")
        self.turn.setToolTip("Turn both markers about the hinge axis: where the coordinates' "
                             "zero and the x axes lie")
        form.addRow(self.flip)
        form.addRow("Offset along axis", self.offset)
        form.addRow("Rotation about axis", self.turn)
        self.flip.toggled.connect(self._frame_changed)
        for w in (self.offset, self.turn):
            w.textEdited.connect(self._frame_changed)
        layout.addWidget(frame)

        # the hinge's own properties, by group, from its table
        options = QtWidgets.QWidget()
        options.setObjectName("options")
        options_layout = QtWidgets.QVBoxLayout(options)
        options_layout.setContentsMargins(0, 0, 0, 0)
        self.property_fields(options_layout, skip=OWN_FIELDS,
                             label=lambda prop: label_of(prop) + expression_unit(prop),
                             folding=lambda group: group.startswith("Coordinate "))
        layout.addWidget(options)
        self.preview_label = QtWidgets.QLabel()
        self.preview_label.setObjectName("preview")
        self.preview_label.setWordWrap(True)
        layout.insertWidget(1, self.preview_label)       # under the type: seen without scrolling
        self._refresh()
        self._fold()
        self._show_drawn()
        return main

    def _fold(self):
        """Open the coordinates' groups of a one-coordinate type, and those with something set;
        fold the others (a free hinge: six lines, not 54 fields)."""
        kind = HINGE_TYPES.get(self.obj.HingeType)
        coordinates = kind.coordinates if kind else ()
        for c in coordinates:
            entry = self.groups.get(f"Coordinate {c}")
            if entry is not None:
                entry[0].set_expanded(len(coordinates) == 1 or has_settings(self.obj, c))

    # -- showing ----------------------------------------------------------------------------------
    def _refresh(self):
        """Show the fields the type uses (the hinge's editor modes), the type's description."""
        obj = self.obj
        kind = HINGE_TYPES.get(obj.HingeType)
        self.type_text.setText(f"{kind.description}; coordinates: "
                               f"{', '.join(kind.coordinates) or 'none'}" if kind else "")
        visible_groups = set()
        for name, field in self.fields.items():
            shown = "Hidden" not in obj.getEditorMode(name)
            field.widget.setVisible(shown)
            field.label.setVisible(shown)
            if shown:
                visible_groups.add(field.prop.group)
        for group, (box, _) in self.groups.items():
            box.setVisible(group in visible_groups)
        # the limits are edited while UseLimits is on (the other switches change what a value
        # means, not whether it counts)
        for option, switch in OPTION_SWITCHES:
            if switch.name not in ENABLING_SWITCHES or switch.name not in obj.PropertiesList:
                continue
            on = bool(getattr(obj, switch.name))
            for o in OPTION_PROPERTIES:
                if o.option != option:
                    continue
                for c in COORDINATES:
                    field = self.fields.get(property_name(o.prefix, c))
                    if field is not None:
                        field.widget.setEnabled(on)

    def _show_drawn(self):
        """With InitialAsDrawn, the initial fields show the drawn coordinates (from the
        preview, when the mechanism can be exported)."""
        if not getattr(self.obj, "InitialAsDrawn", False):
            return
        self._fill_drawn()

    def _fill_drawn(self):
        """Show the drawn coordinates in the shown initial fields; the fields filled."""
        preview = self._preview()
        if preview is None:
            return []
        filled = []
        for c in COORDINATES:
            field = self.fields.get(property_name("Initial", c))
            if field is None or not shown(field):
                continue
            try:
                value = preview.value(self.obj, c)
            except KeyError:
                continue
            if abs(value) < DRAWN_ROUND_OFF:        # a drawn 0 measured from the poses
                value = 0.0
            field.show(FreeCAD.Units.Quantity(value, field.value().Unit))
            filled.append(field)
        return filled

    # -- the preview ------------------------------------------------------------------------------
    def _preview(self):
        """The kinematic preview of the hinge's mechanism, made when first needed; None (and
        the reason in the panel) when the mechanism cannot be exported yet."""
        if self.preview is not None:
            return self.preview
        mechanism = mechanism_of(self.obj)
        if mechanism is None:
            return None
        from ..document.preview import KinematicPreview
        from ..solver.api import ModelError
        try:
            self.preview = KinematicPreview(mechanism)
        except (ModelError, ValueError, KeyError) as exc:
            self.preview_problem = str(exc)
            problems = [str(p) for p in getattr(exc, "problems", ())] or [str(exc)]
            lines = [f"\u2022 {p}" for p in problems[:SHOWN_PROBLEMS]]
            if len(problems) > SHOWN_PROBLEMS:
                lines.append(f"and {len(problems) - SHOWN_PROBLEMS} more (Check lists them all)")
            self.preview_label.setText("Parts are not moved while the model is incomplete:\n"
                                       + "\n".join(lines))
            return None
        self.preview_label.setText("")
        self.solid_placements = {s.Name: s.Placement for b in members(mechanism, BODY)
                                 for s in b.Solids}
        return self.preview

    def _drop_preview(self):
        """The model changed (type, ends, frame): the parts go back and the preview is made
        again when next needed."""
        self.unreachable = {}
        if self.preview is not None:
            self.preview.restore()
            self.preview = None
        self.solid_placements = {}

    def restore_extra(self):
        self._drop_preview()

    def extra_statements(self):
        """The parts moved by the initial coordinates stay there on OK (the drawing is the
        start): their placements, recorded."""
        if self.preview is None or not self.preview.moved:
            return []
        out = []
        doc = self.doc
        for name, before in self.solid_placements.items():
            solid = doc.getObject(name)
            if solid is not None and solid.Placement != before:
                out.append(f"{literal(solid)}.Placement = {literal(solid.Placement)}")
        return out

    # -- changes ----------------------------------------------------------------------------------
    def _type_changed(self, *_):
        self._drop_preview()
        self.set(self.obj, "HingeType", self.type_box.currentText())
        for field in self.fields.values():
            field.show(getattr(self.obj, field.prop.name))
        self._refresh()
        self._fold()
        self._show_drawn()
        self.redraw(self.obj)

    def _field_changed(self, field):
        name = field.prop.name
        try:
            value = field.value()
        except ValueError as exc:
            self.say(f"Hinge '{self.obj.Label}', field {label_of(field.prop)}: {exc}")
            return
        self.say("")
        if name.startswith("Initial") and name[len("Initial"):].lower() in COORDINATES:
            self._initial_changed(name[len("Initial"):].lower(), value)
        stops = [property_name(prefix, c) for prefix in STOP_PREFIXES for c in COORDINATES]
        if name == "UseLimits":
            # ticking the limits fills a stop stiffness left at 0 (the hinge's onChanged):
            # Cancel puts it back, OK computes it again from the recorded UseLimits
            self.remember(self.obj, *stops)
        self.set(self.obj, name, value, field.prop.unit)
        if name == "UseLimits":
            for stop in stops:
                if stop in self.fields:
                    self.fields[stop].show(getattr(self.obj, stop))
        if name == "InitialAsDrawn":
            if value:
                self._show_drawn()
            else:
                self._keep_drawn()
        self._refresh()

    def _keep_drawn(self):
        """InitialAsDrawn unticked: the initial values become the drawn ones (shown and set),
        so the start stays the drawing until the user types another value."""
        for field in self._fill_drawn():
            self.set(self.obj, field.prop.name, field.value(), field.prop.unit)

    def _initial_changed(self, coordinate, value):
        """Move the parts: the hinge at its new initial coordinate, loops closed."""
        preview = self._preview()
        if preview is None:
            return
        try:
            problem = preview.set(self.obj, coordinate, float(value.Value))
        except KeyError:
            self.preview_label.setText(f"'{self.obj.Label}' closes a loop: its {coordinate} "
                                       "follows from the other hinges (set one of theirs)")
            return
        self.unreachable.pop(coordinate, None)
        if problem:
            self.unreachable[coordinate] = problem
            self.say(problem)
        else:
            self.preview_label.setText(
                f"Parts moved: '{self.obj.Label}' {coordinate} = {value.UserString}"
                + (", loops closed" if preview.topology.cut_hinges else "")
                + ". OK keeps them there; Cancel puts them back.")

    def set_end(self, index, marker):
        self._drop_preview()
        prop = ("InputMarker", "OutputMarker")[index]
        old = getattr(self.obj, prop)
        if old is not None and old.Name in self._frame_base:
            self._frame_base.pop(old.Name)
        self.set(self.obj, prop, marker)
        self.ends.show([self.obj.InputMarker, self.obj.OutputMarker])
        self._frame_changed()
        self.redraw(self.obj)

    def _frame_changed(self, *_):
        flip = self.flip.isChecked()
        offset = internal_or_zero(self.offset)
        angle = internal_or_zero(self.turn)
        change = frame_change(flip, offset, angle)
        if not flip and offset == 0.0 and angle == 0.0 and not self._frame_base:
            return
        self._drop_preview()
        for marker in (self.obj.InputMarker, self.obj.OutputMarker):
            if marker is None:
                continue
            base, own = self._frame_base.setdefault(marker.Name, (marker.AttachmentOffset,
                                                                  marker.Placement))
            if marker.MapMode == "Translate":
                # this mode takes the axes from the marker's own placement, the offset's
                # translation in global axes
                turned = own.Rotation.multiply(change.Rotation)
                self.set(marker, "Placement", FreeCAD.Placement(own.Base, turned))
                shift = own.Rotation.multVec(change.Base)
                self.set(marker, "AttachmentOffset",
                         FreeCAD.Placement(base.Base + shift, base.Rotation))
            else:
                self.set(marker, "AttachmentOffset", base.multiply(change))
            marker.recompute()
        self.redraw(self.obj)

    # -- OK -------------------------------------------------------------------------------------
    def validate(self):
        obj = self.obj
        problems = []
        for name, field in self.fields.items():
            if shown(field):
                try:
                    field.value()
                except ValueError as exc:
                    problems.append(f"Hinge '{obj.Label}', field {label_of(field.prop)}: {exc}")
        problems += list(self.unreachable.values())
        if obj.InputMarker is None or obj.OutputMarker is None:
            problems.append(f"Hinge '{obj.Label}': pick both ends")
        elif obj.InputMarker.Body == obj.OutputMarker.Body:
            problems.append(f"Hinge '{obj.Label}': both ends are on body "
                            f"'{obj.InputMarker.Body.Label}'; pick the ends on two bodies")
        return problems

    def stop(self):
        self.ends.stop()
