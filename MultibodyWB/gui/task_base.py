"""What the Hinge, Body, Force and Marker task panels share: live edits, one undo step on OK.

A panel (:class:`EditPanel`) edits its object **live**: every change of a field is applied to the
document at once, outside any undo transaction, so that the 3D view shows it (the hinge symbol on
the picked ends, the force arrow along the typed direction, the body's mass properties, the parts
moved by a hinge's initial coordinate). The panel keeps, for each property it changed, the value
the property had when the panel opened, and the Python statement that makes the change:

- **OK** puts everything back as it was, then runs the statements with ``FreeCADGui.doCommand``
  inside one undo transaction: the edit is one undo step, and it is recorded in the Python console
  and in a macro being recorded (``hinge.StiffnessRz = '2 N*m/rad'``);
- **Cancel** (or closing the panel any other way: another object's panel opened, the document
  closed) puts everything back.

Objects a panel makes while it is open (a marker on a face picked as a hinge end) are removed on
Cancel and made again by their statement on OK.

Fields are made from the objects' property tables (:class:`~MultibodyWB.objects.base.Prop`):
:func:`property_field` gives the widget of a property by its type (quantities as a text field
showing the property's unit, ``2 N·m/rad``, ``30°``, and taking a number in it or any quantity of
the same kind with its unit, ``2000 mm``; FreeCAD's ``Gui::QuantitySpinBox`` would show a
stiffness as ``mm^2*kg/(s^2*deg)``; quantities kept as texts with their unit, ``2 N*m/rad``,
``10 us``, as that text: a bare number typed in is completed with the unit, a text with a unit
is kept as typed, as in the property editor, see :mod:`MultibodyWB.objects.units`), and the
panels show the fields of the properties the object shows in the property editor (its
``update_visibility`` hides the others), so a property added to a table appears in the panel.

The panels are opened by double-click (:meth:`MultibodyWB.viewproviders.base.ViewProvider.setEdit`)
and by the commands that make the objects (:func:`edit`).
"""

import FreeCAD
import FreeCADGui

from ..objects import units
from ..objects.base import type_of
from .qt import QtCore, QtGui, QtWidgets
from .task_fields import (  # noqa: F401 - the panels import them from here too
    UNIT_PROPERTIES, Field, QuantityEdit, format_number, internal_or_zero, plain_units,
    pretty_unit, property_field, quantity_field, quantity_spin_box, set_spin_value)
from .watch import DocumentWatch, TaskPanel, later, object_alive, track

#: The edit panel being shown (one at a time), for tests and :func:`~.watch.close_task_dialog`.
current = None
track(lambda: current)

#: Object ``Type`` -> (module of this package, panel class).
PANELS = {
    "Multibody::Hinge": ("task_hinge", "HingePanel"),
    "Multibody::Body": ("task_body", "BodyPanel"),
    "Multibody::Force": ("task_force", "ForcePanel"),
    "Multibody::Contact": ("task_contact", "ContactPanel"),
    "Multibody::Coupler": ("task_coupler", "CouplerPanel"),
    "Multibody::Marker": ("task_marker", "MarkerPanel"),
}


def ref(obj):
    """How a recorded statement names a document object."""
    return f"FreeCAD.getDocument({obj.Document.Name!r}).getObject({obj.Name!r})"


def _is_object(value):
    return hasattr(value, "TypeId") and hasattr(value, "Document") and hasattr(value, "Name")


def literal_doc(doc):
    """How a recorded statement names a document."""
    return f"FreeCAD.getDocument({doc.Name!r})"


def literal(value, unit=None):
    """Python source of a property value for a recorded statement.

    Quantities are written in ``unit`` (the property's unit) as a text FreeCAD parses:
    ``'2.0 N*m/rad'``.
    """
    if isinstance(value, FreeCAD.Units.Quantity):
        number = value.Value / units.factor(unit) if unit else value.Value
        return repr(f"{number!r} {unit}") if unit else repr(value.UserString)
    if isinstance(value, FreeCAD.Vector):
        return f"FreeCAD.Vector({value.x!r}, {value.y!r}, {value.z!r})"
    if isinstance(value, FreeCAD.Rotation):
        return "FreeCAD.Rotation({!r}, {!r}, {!r}, {!r})".format(*value.Q)
    if isinstance(value, FreeCAD.Placement):
        return f"FreeCAD.Placement({literal(value.Base)}, {literal(value.Rotation)})"
    if _is_object(value):
        return ref(value)
    if isinstance(value, (list, tuple)):
        items = ", ".join(literal(v) for v in value)
        return f"[{items}]"
    return repr(value)


def fit_narrow(widget):
    """Let a panel fit FreeCAD's narrow task view (about 250 px in the default layout): long form
    rows put the field under its label, fields and buttons shrink to a small minimum."""
    from .qt import compact
    for form in widget.findChildren(QtWidgets.QFormLayout):
        form.setRowWrapPolicy(QtWidgets.QFormLayout.WrapLongRows)
        form.setFieldGrowthPolicy(QtWidgets.QFormLayout.AllNonFixedFieldsGrow)
    for w in widget.findChildren(QtWidgets.QLineEdit):
        example = w.property("unit_example")
        # a text quantity keeps room for a number and its unit, a number for the one it
        # shows (a contact's 1.191687144e+10): the row wraps, the field under its label
        example = example or (w.text() if not isinstance(w.parentWidget(),
                                                         QtWidgets.QAbstractSpinBox) else "")
        w.setMinimumWidth(min(180, max(50, w.fontMetrics().horizontalAdvance(example) + 12)))
    for w in widget.findChildren(QtWidgets.QDoubleSpinBox):
        w.setMinimumWidth(40)
        w.setButtonSymbols(QtWidgets.QAbstractSpinBox.NoButtons)
    for w in widget.findChildren(QtWidgets.QAbstractSpinBox):
        if not isinstance(w, QtWidgets.QDoubleSpinBox):
            # FreeCAD's quantity spin box asks for room for its whole range (174 px): room for
            # the value it shows and its arrows instead (the row wraps if need be)
            w.setMinimumWidth(min(180, w.fontMetrics().horizontalAdvance(w.text()) + 40))
    for w in widget.findChildren(QtWidgets.QListWidget):
        w.setMinimumWidth(60)
    combos = widget.findChildren(QtWidgets.QComboBox)
    buttons = widget.findChildren(QtWidgets.QPushButton)
    if combos or buttons:
        compact(*combos, *buttons)


class Section(QtWidgets.QWidget):
    """A group of fields under a header that folds it away: a click on the header (an arrow and
    the group's title) shows or hides the fields, so that a hinge with six coordinates shows six
    lines until the user opens the one they want. ``form`` is the fields' QFormLayout; the
    header's tool tip says what is in it."""

    def __init__(self, title, expanded=True, tip=""):
        super().__init__()
        self.setObjectName(title)
        outer = QtWidgets.QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(0)
        self.header = QtWidgets.QToolButton()
        self.header.setObjectName(f"{title} header")
        self.header.setText(title)
        self.header.setCheckable(True)
        self.header.setAutoRaise(True)
        self.header.setToolButtonStyle(QtCore.Qt.ToolButtonTextBesideIcon)
        self.header.setSizePolicy(QtWidgets.QSizePolicy.Expanding, QtWidgets.QSizePolicy.Fixed)
        self.header.setToolTip(tip or f"Show or hide the fields of {title.lower()}")
        font = self.header.font()
        font.setBold(True)
        self.header.setFont(font)
        outer.addWidget(self.header)
        self.body = QtWidgets.QFrame()
        self.body.setObjectName(f"{title} fields")
        self.body.setFrameShape(QtWidgets.QFrame.StyledPanel)
        self.form = QtWidgets.QFormLayout(self.body)
        outer.addWidget(self.body)
        self.header.toggled.connect(self.set_expanded)
        self.header.setChecked(expanded)
        self.set_expanded(expanded)

    def title(self):
        return self.header.text()

    def expanded(self):
        return self.header.isChecked()

    def set_expanded(self, on):
        """Show (``on``) or fold away the fields."""
        if self.header.isChecked() != bool(on):
            self.header.setChecked(bool(on))       # calls this again through toggled
            return
        self.header.setArrowType(QtCore.Qt.DownArrow if on else QtCore.Qt.RightArrow)
        self.body.setVisible(bool(on))


def shown(field):
    """True when ``field`` is one of the fields its object uses now (not hidden by its type);
    a field in a folded :class:`Section` counts as shown."""
    return not field.widget.isHidden()


class EnterKeepsPanel(QtCore.QObject):
    """Enter (or Return) in a text field or spin box finishes that field, its value applied
    and shown in its unit, and the panel stays open: FreeCAD's task view would otherwise take
    the key, which the field passes on, as OK. An event filter on the fields."""

    KEYS = (QtCore.Qt.Key_Return, QtCore.Qt.Key_Enter)

    def eventFilter(self, obj, event):
        if event.type() == QtCore.QEvent.KeyPress and event.key() in self.KEYS:
            obj.event(event)             # the field's own handling: editingFinished
            event.accept()               # and no further: not the dialog's OK
            return True
        return False

    def watch(self, widget):
        """Filter every text field and spin box of ``widget``."""
        for w in widget.findChildren(QtWidgets.QAbstractSpinBox):
            w.installEventFilter(self)
        for w in widget.findChildren(QtWidgets.QLineEdit):
            if not isinstance(w.parentWidget(), QtWidgets.QAbstractSpinBox):
                w.installEventFilter(self)


def label_of(prop):
    """A field's label: ``"StiffnessRz"`` -> ``"Stiffness rz"`` (the coordinate is the group)."""
    name = prop.name
    words = []
    word = ""
    for ch in name:
        if ch.isupper() and word:
            words.append(word)
            word = ch
        else:
            word += ch
    words.append(word)
    text = " ".join([words[0]] + [w.lower() for w in words[1:]])
    return text


class EditPanel(TaskPanel):
    """A task panel editing one Multibody object live (see the module doc).

    Subclasses build ``self.form`` in :meth:`build` and change the document only through
    :meth:`set` (a property), :meth:`run` (a statement with its live effect) and :meth:`make` (an
    object made while the panel is open).
    """

    #: Title of the undo step (``"Edit hinge"``) and of the panel.
    TITLE = "Edit"
    ICON = "MultibodyWB.svg"

    def __init__(self, obj):
        global current
        self.obj = obj
        self.doc = obj.Document
        self.closed = False
        self._originals = []          # (object, property, value before the panel changed it)
        self._changed = set()
        self._statements = {}         # key -> statement, in the order they are to be run
        self._made = []               # objects made while the panel is open
        self._undo = []               # functions putting back what a statement's effect did
        self.variables = {obj.Name: self.variable_name()}
        self.watch = DocumentWatch(self.doc, self)
        self.message = QtWidgets.QLabel()
        self.message.setObjectName("message")
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #b00000")
        self.message.hide()
        forms = self.build()
        self.form = forms if isinstance(forms, list) else [forms]
        from .. import resources
        self.form[0].setWindowIcon(QtGui.QIcon(resources.icon_path(self.ICON)))
        from .qt import short_title
        # the object's label (the icon says what it is), shortened to fit the narrow view
        self.form[0].setWindowTitle(short_title(obj.Label))
        self.form[0].layout().insertWidget(0, self.message)   # seen without scrolling
        self._enter = EnterKeepsPanel(self.form[0])
        for form in self.form:
            fit_narrow(form)
            self._enter.watch(form)
        current = self

    # -- to be given by the subclasses -----------------------------------------------------------
    def build(self):
        """The panel's widget(s)."""
        raise NotImplementedError

    def variable_name(self):
        """Name of the object in the recorded statements (``hinge``)."""
        return self.obj.Proxy.KIND.lower()

    def validate(self):
        """Problems that keep OK from applying (a list of texts naming the field)."""
        return []

    def restore_extra(self):
        """Subclasses: put back what they changed beyond properties (parts moved by a preview)."""

    def extra_statements(self):
        """Subclasses: statements run on OK after the recorded ones (computed before restoring)."""
        return []

    def property_fields(self, layout, skip=(), label=label_of, folding=None):
        """A field for each of the object's own properties (not the common ones, not ``skip``),
        in a group box per property group added to ``layout``; they fill ``self.fields``
        (name -> field) and ``self.groups`` (group -> (box, form)) and call
        ``self._field_changed(field)`` when edited. ``folding(group)``, when given, says which
        groups are a :class:`Section` that folds away (True) rather than a group box."""
        from ..objects.base import COMMON_PROPERTIES
        self.fields, self.groups = {}, {}
        skip = set(skip) | {p.name for p in COMMON_PROPERTIES}
        for prop in type(self.obj.Proxy).properties():
            if prop.name in skip or prop.name not in self.obj.PropertiesList:
                continue
            field = property_field(self.obj, prop)
            if field is None:
                continue
            if prop.group not in self.groups:
                if folding is not None and folding(prop.group):
                    box = Section(prop.group)
                    self.groups[prop.group] = (box, box.form)
                else:
                    box = QtWidgets.QGroupBox(prop.group)
                    box.setObjectName(prop.group)
                    self.groups[prop.group] = (box, QtWidgets.QFormLayout(box))
                # narrow margins: the task view is narrow (see .qt.TASK_VIEW_WIDTH)
                self.groups[prop.group][1].setContentsMargins(4, 4, 4, 4)
                layout.addWidget(box)
            if isinstance(field.widget, QtWidgets.QCheckBox):
                # a switch carries its own text: one row, the box never squeezed by the label
                field.widget.setText(label(prop))
                self.groups[prop.group][1].addRow(field.widget)
                field.label = field.widget
            else:
                text = QtWidgets.QLabel(label(prop))
                text.setToolTip(prop.doc)
                self.groups[prop.group][1].addRow(text, field.widget)
                field.label = text
            field.connect(self._field_changed)
            self.fields[prop.name] = field

    # -- live changes -----------------------------------------------------------------------------
    def name_of(self, obj):
        """How the statements name ``obj``: a variable for the panel's object and made objects."""
        return self.variables.get(obj.Name) or ref(obj)

    def _remember(self, obj, prop):
        key = (obj.Name, prop)
        if key not in self._changed:
            self._changed.add(key)
            self._originals.append((obj, prop, getattr(obj, prop)))

    def set(self, obj, prop, value, unit=None):
        """Set ``obj.<prop>`` now and record the statement that sets it on OK."""
        self._remember(obj, prop)
        setattr(obj, prop, value)
        key = ("set", obj.Name, prop)
        self._statements.pop(key, None)
        text = self.name_of(value) if _is_object(value) else literal(value, unit)
        self._statements[key] = f"{self.name_of(obj)}.{prop} = {text}"

    def remember(self, obj, *props):
        """Keep the current values of ``props`` to put back on Cancel (changed by a function)."""
        for prop in props:
            if prop in obj.PropertiesList:
                self._remember(obj, prop)

    def record(self, key, statement):
        """Record ``statement`` for OK under ``key`` (a later one with the same key replaces it and
        runs in its place in the order)."""
        self._statements.pop(key, None)
        self._statements[key] = statement

    def forget(self, key):
        self._statements.pop(key, None)

    def make(self, obj, variable):
        """An object made while the panel is open: removed on Cancel; its statement (recorded with
        :meth:`record` as ``variable = ...``) makes it on OK."""
        self._made.append(obj)
        self.variables[obj.Name] = variable

    def make_marker(self, body, solid, sub, variable):
        """A marker made now on ``sub`` of ``solid`` (a body's), as the create commands make one;
        removed on Cancel, made again by its recorded factory call on OK."""
        from ..document import factory
        marker = factory.make_marker(self.doc, body, (solid, sub or None))
        self.doc.recompute()
        self.make(marker, variable)
        self.record(("make", marker.Name),
                    f"{variable} = MultibodyWB.document.factory.make_marker("
                    f"{literal_doc(self.doc)}, {ref(body)}, ({ref(solid)}, {sub!r}))")
        return marker

    def redraw(self, *objects):
        from .symbols import redraw
        for obj in objects:
            if obj is not None:
                redraw(obj)

    def say(self, text):
        """Show ``text`` (a problem) in the panel, or hide the message for an empty text."""
        self.message.setText(text)
        self.message.setVisible(bool(text))

    # -- putting back -----------------------------------------------------------------------------
    def restore(self):
        """Put every property the panel changed back, remove what it made (nothing is recorded)."""
        self.restore_extra()
        # an attachment is put back whole: off while its references and mode change
        attached = {obj.Name: obj for obj, prop, _ in self._originals if prop == "MapMode"}
        for obj in attached.values():
            if object_alive(obj):
                obj.MapMode = "Deactivated"
        ordered = [o for o in self._originals if o[1] != "MapMode"] + \
            [o for o in self._originals if o[1] == "MapMode"]
        for obj, prop, value in ordered:
            if object_alive(obj):
                try:
                    setattr(obj, prop, value)
                except Exception as exc:  # a property FreeCAD refuses back: say which
                    FreeCAD.Console.PrintWarning(
                        f"MultibodyWB: {obj.Label}.{prop} could not be put back: {exc}\n")
        for obj in reversed(self._made):
            if object_alive(obj):
                self.doc.removeObject(obj.Name)
        self._originals, self._changed, self._made = [], set(), []
        if object_alive(self.obj):
            self.doc.recompute()

    def statements(self):
        """The statements OK runs: the object named once, then the recorded changes."""
        body = list(self._statements.values()) + self.extra_statements()
        if not body:
            return []
        return [f"{self.variable_name()} = {ref(self.obj)}"] + body

    # -- FreeCAD's task dialog --------------------------------------------------------------------
    def getStandardButtons(self):
        return int(QtWidgets.QDialogButtonBox.Ok | QtWidgets.QDialogButtonBox.Apply
                   | QtWidgets.QDialogButtonBox.Cancel)

    def clicked(self, button):
        """Apply: the changes so far become one recorded undo step (as OK), and the panel stays
        open on the object for more (a fresh panel, so Cancel then puts back only what follows)."""
        if button != int(QtWidgets.QDialogButtonBox.Apply) or self.closed:
            return
        obj = self.obj
        if self.accept():
            later(lambda: edit(obj) if object_alive(obj) else None)

    def accept(self):
        """OK (and Apply): put everything back, then make the changes again as one recorded undo
        step."""
        problems = self.validate()
        if problems:
            self.say("\n".join(problems))
            return False
        statements = self.statements()
        self.restore()
        ok = True
        if statements:
            ok = run_statements(self.doc, self.TITLE, statements)
        self.finish()
        return ok

    def reject(self):
        """Cancel: put everything back."""
        self.cleanup()
        self.finish()
        return True

    def is_open(self):
        return not self.closed

    def cleanup(self):
        """Put back what the panel changed (unless OK applied it) and stop watching; safe to call
        more than once and after the document was closed. FreeCAD's edit mode is left from the
        event loop (another panel may be taking the task dialog)."""
        global current
        if self.closed:
            return
        self.closed = True
        try:
            self.stop()
            if object_alive(self.obj):
                self.restore()
        finally:
            self.watch.detach()
            if current is self:
                current = None
            later(self._leave_edit)

    def stop(self):
        """Subclasses: stop picking (selection observers)."""

    def _editing(self):
        """FreeCAD's Gui document when it is editing this panel's object, else None."""
        if not object_alive(self.obj):
            return None
        gui_doc = FreeCADGui.getDocument(self.doc.Name)
        vp = gui_doc.getInEdit() if gui_doc is not None else None
        try:
            return gui_doc if vp is not None and vp.Object.Name == self.obj.Name else None
        except (AttributeError, ReferenceError, RuntimeError):
            return None

    def _leave_edit(self):
        gui_doc = self._editing()
        if gui_doc is not None:
            gui_doc.resetEdit()

    def finish(self):
        """Leave FreeCAD's edit mode (which closes the dialog) after OK or Cancel."""
        global current
        self.closed = True
        self.stop()
        self.watch.detach()
        gui_doc = self._editing()
        if gui_doc is not None:
            gui_doc.resetEdit()
        if current is self:
            current = None

    # -- the document (DocumentWatch) -------------------------------------------------------------
    def document_closing(self):
        self._gone()

    def object_deleted(self, obj):
        try:
            gone = obj.Name == self.obj.Name
        except (ReferenceError, RuntimeError, AttributeError):
            gone = True
        if gone:
            self._gone()

    def _gone(self):
        """The object or its document is going (Delete, Undo of its creation, closing): nothing to
        put back; the dialog is closed from the event loop unless another panel took it."""
        if self.closed:
            return
        self.closed = True
        self.stop()
        self.watch.detach()
        later(self._close_gone)

    def _close_gone(self):
        global current
        if current is not self:
            return                      # another panel has the task dialog now
        current = None
        if FreeCADGui.Control.activeDialog():
            FreeCADGui.Control.closeDialog()


def run_statements(doc, title, statements):
    """Run ``statements`` with ``FreeCADGui.doCommand`` in one undo transaction ``title``, then
    recompute; on an error abort the transaction and say why. True when all ran."""
    doc.openTransaction(title)
    try:
        FreeCADGui.addModule("MultibodyWB.document.factory")
        FreeCADGui.addModule("MultibodyWB.objects.marker")
        for statement in statements:
            FreeCADGui.doCommand(statement)
        FreeCADGui.doCommand(f"FreeCAD.getDocument({doc.Name!r}).recompute()")
    except Exception as exc:  # any error of the statements: undo it all and say why
        doc.abortTransaction()
        FreeCAD.Console.PrintError(f"MultibodyWB: {title}: {type(exc).__name__}: {exc}\n")
        return False
    doc.commitTransaction()
    return True


def panel_class(obj):
    """The edit panel class of ``obj``'s type, or None."""
    entry = PANELS.get(type_of(obj))
    if entry is None:
        return None
    import importlib
    module = importlib.import_module(f"{__package__}.{entry[0]}")
    return getattr(module, entry[1])


def open_panel(obj):
    """Show the edit panel of ``obj`` (called by its view provider's ``setEdit``); another task
    dialog is closed first (a Multibody panel putting back what it changed). Returns the panel,
    or None when ``obj`` has none."""
    from .watch import close_task_dialog
    cls = panel_class(obj)
    if cls is None:
        return None
    if current is not None and not current.closed:
        current.cleanup()
    if FreeCADGui.Control.activeDialog():
        close_task_dialog()
    panel = cls(obj)
    FreeCADGui.Control.showDialog(panel)
    from .qt import fit_task_buttons
    fit_task_buttons()
    return panel


def edit_ended(obj):
    """FreeCAD left the edit mode of ``obj`` (``unsetEdit``): its panel, if it is the one shown,
    is cancelled (when still open) and its dialog closed."""
    global current
    panel = current
    if panel is None or not object_alive(panel.obj) or panel.obj.Name != obj.Name:
        return
    if not panel.closed:
        panel.cleanup()
    current = None
    if FreeCADGui.Control.activeDialog():
        FreeCADGui.Control.closeDialog()


def edit(obj):
    """Open ``obj``'s panel as a double-click does (FreeCAD's edit mode): for the commands."""
    if obj is None or panel_class(obj) is None:
        return None
    gui_doc = FreeCADGui.getDocument(obj.Document.Name)
    if gui_doc.getInEdit() is not None:
        gui_doc.resetEdit()
    gui_doc.setEdit(obj.Name, 0)
    return current


def describe_marker(marker):
    """``Marker003 on 'Crank' (CrankWeb.Face7)``: how a panel names an end."""
    if marker is None:
        return "(not set)"
    body = getattr(marker, "Body", None)
    where = f" on '{body.Label}'" if body is not None else ""
    picked = getattr(marker, "PickedElement", "")
    return f"{marker.Label}{where}" + (f" ({picked})" if picked else "")


class PickObserver:
    """A selection observer handing each new selection (object, sub-element) to ``callback``
    from the event loop (objects are made there, not inside FreeCAD's selection signal)."""

    def __init__(self, doc, callback):
        self.doc_name = doc.Name
        self.callback = callback
        self.attached = False

    def start(self):
        if not self.attached:
            FreeCADGui.Selection.addObserver(self)
            self.attached = True

    def stop(self):
        if self.attached:
            FreeCADGui.Selection.removeObserver(self)
            self.attached = False

    def addSelection(self, doc, obj, sub, pnt):
        if doc == self.doc_name:
            later(lambda: self.callback(obj, sub))


class EndsBox:
    """The ends of a hinge or force: one row per end (what it is, a **Pick** button).

    Pressing Pick, then clicking a marker (3D view or tree) or a face, edge or vertex of a body's
    solid, makes that the end: a marker is made on a picked element (as the create commands
    make it). ``panel.set_end(index, marker)`` is called with the marker.
    """

    def __init__(self, panel, titles, tips):
        self.panel = panel
        self.widget = QtWidgets.QGroupBox("Ends")
        self.widget.setObjectName("ends")
        layout = QtWidgets.QGridLayout(self.widget)
        self.labels, self.buttons, self.rows = [], [], []
        self.picking = None
        for i, (title, tip) in enumerate(zip(titles, tips)):
            caption = QtWidgets.QLabel(f"<b>{title}</b>")
            label = QtWidgets.QLabel()
            label.setObjectName(f"end{i}")
            label.setWordWrap(True)
            label.setToolTip(tip)
            button = QtWidgets.QPushButton("Pick")
            button.setObjectName(f"pick{i}")
            button.setCheckable(True)
            button.setToolTip(f"{tip}.\nPress, then click a marker, or a face, edge or vertex of "
                              "a body's solid (a marker is made on it), in the 3D view or the tree")
            button.toggled.connect(lambda on, i=i: self._toggled(i, on))
            layout.addWidget(caption, 2 * i, 0, 1, 2)
            layout.addWidget(label, 2 * i + 1, 0)
            layout.addWidget(button, 2 * i + 1, 1)
            layout.setColumnStretch(0, 1)
            self.labels.append(label)
            self.buttons.append(button)
            self.rows.append((caption, label, button))
        self.observer = PickObserver(panel.doc, self._picked)

    def show(self, markers):
        for label, marker in zip(self.labels, markers):
            label.setText(describe_marker(marker))

    def show_rows(self, count):
        """Show the first ``count`` ends (a point force has one)."""
        for i, row in enumerate(self.rows):
            for w in row:
                w.setVisible(i < count)

    def _toggled(self, i, on):
        if on:
            for j, b in enumerate(self.buttons):
                if j != i and b.isChecked():
                    b.blockSignals(True)
                    b.setChecked(False)
                    b.blockSignals(False)
            self.picking = i
            FreeCADGui.Selection.clearSelection()
            self.observer.start()
        elif self.picking == i:
            self.picking = None
            self.observer.stop()

    def stop(self):
        self.observer.stop()
        self.picking = None
        for b in self.buttons:
            try:
                b.blockSignals(True)
                b.setChecked(False)
                b.blockSignals(False)
            except RuntimeError:        # the dialog's widgets are gone already
                return

    def _picked(self, name, sub):
        from ..objects.body import body_of, has_solids
        from ..objects.marker import TYPE as MARKER
        i = self.picking
        panel = self.panel
        if i is None or panel.closed:
            return
        obj = panel.doc.getObject(name)
        if obj is None:
            return
        if type_of(obj) == MARKER:
            marker = obj
        elif has_solids(obj) and body_of(obj) is not None:
            marker = panel.make_marker(body_of(obj), obj, sub, f"end{i}_marker")
        else:
            panel.say(f"'{obj.Label}' is neither a marker nor a solid of a body: pick a marker, "
                      "or a face, edge or vertex of a body's solid")
            return
        panel.say("")
        self.stop()
        FreeCADGui.Selection.clearSelection()
        panel.set_end(i, marker)


def with_panel(action, type_name):
    """A command action (see :func:`MultibodyWB.commands.base.scripted`) that, once it made its
    objects in their own undo step, opens the panel of the one object of ``Type`` ``type_name``
    it made (none when it made several), so that nothing is made blind."""
    def run(command, selection):
        doc = FreeCAD.ActiveDocument
        before = {o.Name for o in doc.Objects} if doc is not None else set()
        done = action(command, selection)
        if done and doc is not None:
            made = [o for o in doc.Objects if o.Name not in before and type_of(o) == type_name]
            if len(made) == 1:
                edit(made[0])
        return done
    run.builder = getattr(action, "builder", None)
    return run
