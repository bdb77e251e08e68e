"""View provider of the Mechanism: the tree below it and the view settings of its members.

The Mechanism draws nothing itself. Its view properties (group "Multibody display") set how every
member is drawn (:class:`~.base.Display`):

- ``GlyphSize``: the length of a marker's axes and the scale of every symbol; 0 (the default)
  means automatic, :data:`AUTO_FRACTION` of the diagonal of the bounding box of the bodies' solids;
- ``ShowTriads``, ``ShowGlyphs``, ``ShowLabels``: the markers' axes; the hinge, force and
  centre-of-mass symbols with their connection lines; the letters x, y, z;
- ``GlyphsOnTop``: draw the symbols over the solids (they are often inside a bore).

Each member's own ``Visibility`` hides it as usual. Changing a setting, the members or the bodies'
solids redraws the members.

In the tree the mechanism holds its bodies, hinges, forces and simulation; the markers sit under
their bodies (:mod:`.body`).

Its state (the object's ``Status``, :func:`MultibodyWB.objects.mechanism.mechanism_status`) shows
in the tree: the icon carries a badge, a red warning while something blocks a run, else a green
disc with the number of degrees of freedom, and the tree item's tool tip is the status text.
Double-click (or the Check command) opens the mechanism's task panel
(:mod:`MultibodyWB.gui.task_mechanism`): the status in full and one slider per free degree of
freedom to drag the mechanism, its loops closed.
"""

import math
import os

from ..objects.base import type_of
from ..objects.body import TYPE as BODY
from ..objects.body import solid_shape
from ..objects.marker import TYPE as MARKER
from ..gui.symbols import redraw
from .base import DEFAULT_SIZE, Display, ViewProvider, problem_icon

#: Automatic symbol size: this fraction of the diagonal of the bodies' bounding box.
AUTO_FRACTION = 0.1

#: View properties: (type, name, doc, default).
VIEW_PROPERTIES = (
    ("App::PropertyLength", "GlyphSize",
     "Length of the markers' axes and scale of the hinge and force symbols; 0: automatic "
     f"({AUTO_FRACTION:g} of the diagonal of the bodies' bounding box)", 0.0),
    ("App::PropertyBool", "ShowTriads", "Show the markers' axes (x red, y green, z blue)", True),
    ("App::PropertyBool", "ShowGlyphs",
     "Show the hinge, force and centre-of-mass symbols and the lines between markers", True),
    ("App::PropertyBool", "ShowLabels", "Label the markers' axes x, y, z", False),
    ("App::PropertyBool", "GlyphsOnTop", "Draw the symbols over the solids", True),
)
GROUP = "Multibody display"


def model_size(mechanism):
    """Diagonal of the bounding box of the solids of the mechanism's bodies (mm; 0 if none)."""
    box = None
    for member in mechanism.Group:
        if type_of(member) != BODY:
            continue
        for solid in member.Solids:
            shape = solid_shape(solid)
            if shape is None:
                continue
            bound = shape.BoundBox
            if not bound.isValid():
                continue
            if box is None:
                box = bound
            else:
                box.add(bound)
    return box.DiagonalLength if box is not None else 0.0


class ViewProviderMechanism(ViewProvider):
    """The Mechanism: its tree and the view settings of its members."""

    ICON = "Mechanism.svg"

    def add_view_properties(self, vobj):
        present = set(vobj.PropertiesList)
        for type_name, name, doc, default in VIEW_PROPERTIES:
            if name not in present:
                vobj.addProperty(type_name, name, GROUP, doc)
                setattr(vobj, name, default)
        self._auto_size = None

    def children(self):
        """Bodies, hinges, forces, the simulation; markers of a body of the mechanism go under
        their body."""
        obj = self.Object
        bodies = {m.Name for m in obj.Group if type_of(m) == BODY}
        return [m for m in obj.Group
                if not (type_of(m) == MARKER and m.Body is not None and m.Body.Name in bodies)]

    def data_changed(self, obj, prop):
        if prop == "Group":
            # members are drawn before they join (the factory adds them last): draw the new ones
            # with the mechanism's settings, or everything if the bodies' size changed
            known = getattr(self, "_members", set())
            self._members = {m.Name for m in obj.Group}
            if not self.update_size():
                for member in obj.Group:
                    if member.Name not in known:
                        redraw(member)
        elif prop == "Ground":
            self.redraw_members()
            for member in obj.Group:           # the ground's icon
                if type_of(member) == BODY and hasattr(member.ViewObject, "signalChangeIcon"):
                    member.ViewObject.signalChangeIcon()
        elif prop == "Status":
            self.ViewObject.signalChangeIcon()
            show_tooltip_later(obj)

    def view_changed(self, vobj, prop):
        if prop in {p[1] for p in VIEW_PROPERTIES}:
            self.redraw_members()

    def restored(self):
        """Draw the members once the whole document is there."""
        self._auto_size = None
        self.redraw_members()
        show_tooltip_later(self.Object)

    # -- status ---------------------------------------------------------------------------------
    def problem(self):
        """The lines of the status that block a run ("" when it can run): the icon's badge."""
        obj = getattr(self, "Object", None)
        status = getattr(obj, "Status", "") or ""
        blocking = [line for line in status.split("\n")[1:] if line.startswith("To fix")]
        return "\n".join(blocking) or (getattr(obj, "Problem", "") or "")

    def getIcon(self):
        from .. import resources
        path = resources.icon_path(self.ICON)
        if not hasattr(self, "Object"):
            return path
        if self.problem():
            return problem_icon(path)
        dof = status_dof(self.Object)
        return dof_icon(path, dof) if dof is not None else path

    def doubleClicked(self, vobj):
        """Open the mechanism's task panel (status and drag to check)."""
        from ..gui import task_mechanism
        return task_mechanism.open_panel(vobj.Object)

    def setEdit(self, vobj, mode=0):
        if mode != 0:
            return None          # transform etc.: FreeCAD's own
        from ..gui import task_mechanism
        return task_mechanism.open_panel(vobj.Object, from_set_edit=True)

    def unsetEdit(self, vobj, mode=0):
        if mode != 0:
            return None
        from ..gui import task_mechanism
        task_mechanism.edit_ended(vobj.Object)
        return True

    # -- settings -------------------------------------------------------------------------------
    def settings(self):
        """The :class:`~.base.Display` settings of the members."""
        vobj = self.ViewObject
        values = {name: getattr(vobj, name, default) for _, name, _, default in VIEW_PROPERTIES}
        size = float(getattr(values["GlyphSize"], "Value", values["GlyphSize"]))
        if size <= 0.0:
            size = self.auto_size()
        return Display(size=size, triads=bool(values["ShowTriads"]),
                       glyphs=bool(values["ShowGlyphs"]), labels=bool(values["ShowLabels"]),
                       on_top=bool(values["GlyphsOnTop"]))

    def auto_size(self):
        """The automatic symbol size (mm), from the bodies' bounding box."""
        if getattr(self, "_auto_size", None) is None:
            diagonal = model_size(self.Object)
            self._auto_size = AUTO_FRACTION * diagonal if diagonal > 0.0 else DEFAULT_SIZE
            self._auto_size = float(f"{self._auto_size:.3g}")   # steady under tiny changes
        return self._auto_size

    def update_size(self):
        """Measure the bodies again; redraw the members if the automatic size changed (and then
        return True)."""
        old = getattr(self, "_auto_size", None)
        self._auto_size = None
        new = self.auto_size()
        if old is None or not math.isclose(old, new):
            self.redraw_members()
            return True
        return False

    def redraw_members(self):
        for member in self.Object.Group:
            redraw(member)


# --------------------------------------------------------------------------------------------------
# The status in the tree
# --------------------------------------------------------------------------------------------------

def status_dof(mechanism):
    """The degrees of freedom the status reports (None while not known)."""
    status = getattr(mechanism, "Status", "") or ""
    for line in status.split("\n"):
        if line.startswith("Degrees of freedom: "):
            try:
                return int(line.split(": ", 1)[1].split(" ", 1)[0])
            except ValueError:
                return None
    return None


def dof_icon(path, dof):
    """The icon ``path`` with a green disc holding the number of degrees of freedom, as a PNG
    made once in FreeCAD's cache."""
    import FreeCAD
    from PySide import QtCore, QtGui
    folder = os.path.join(FreeCAD.getUserCachePath(), "MultibodyWB", "icons")
    name = os.path.splitext(os.path.basename(path))[0]
    target = os.path.join(folder, f"{name}-dof{dof}.png")
    if os.path.isfile(target) and os.path.getmtime(target) >= os.path.getmtime(path):
        return target
    os.makedirs(folder, exist_ok=True)
    size = 64
    pixmap = QtGui.QIcon(path).pixmap(size, size)
    painter = QtGui.QPainter(pixmap)
    painter.setRenderHint(QtGui.QPainter.Antialiasing)
    painter.setPen(QtGui.QPen(QtGui.QColor("#0b1521"), 2))
    painter.setBrush(QtGui.QColor("#4e9a06"))
    painter.drawEllipse(QtCore.QRectF(31, 31, 32, 32))
    font = painter.font()
    font.setPixelSize(24 if dof < 10 else 16)
    font.setBold(True)
    painter.setFont(font)
    painter.setPen(QtGui.QColor("#ffffff"))
    painter.drawText(QtCore.QRectF(31, 31, 32, 32), QtCore.Qt.AlignCenter, str(dof))
    painter.end()
    pixmap.save(target, "PNG")
    return target


def tree_items(obj):
    """The items of ``obj`` in FreeCAD's tree views (under its document's item)."""
    import FreeCADGui
    from ..gui.qt import QtWidgets
    found = []
    window = FreeCADGui.getMainWindow()
    if window is None:
        return found
    label, doc_label = obj.Label, obj.Document.Label
    for tree in window.findChildren(QtWidgets.QTreeWidget):
        if tree.metaObject().className() != "Gui::TreeWidget":
            continue
        stack = [(tree.topLevelItem(i), False) for i in range(tree.topLevelItemCount())]
        while stack:
            item, in_doc = stack.pop()
            if in_doc and item.text(0) == label:
                found.append(item)
            inside = in_doc or item.text(0) == doc_label
            stack += [(item.child(i), inside) for i in range(item.childCount())]
    return found


def status_tooltip(mechanism):
    """The tool tip of the mechanism's tree item: its label and status."""
    status = getattr(mechanism, "Status", "") or ""
    return f"{mechanism.Label}: {status}" if status else mechanism.Label


def show_tooltip(mechanism):
    """Put the status into the tool tip of the mechanism's tree items."""
    try:
        text = status_tooltip(mechanism)
        for item in tree_items(mechanism):
            item.setToolTip(0, text)
    except (ReferenceError, RuntimeError, AttributeError):   # deleted meanwhile
        return


def show_tooltip_later(mechanism):
    """:func:`show_tooltip` once the tree has made the item (a new object gets it later)."""
    import FreeCAD
    if not FreeCAD.GuiUp:
        return
    from ..gui.qt import QtCore
    doc, name = mechanism.Document.Name, mechanism.Name

    def update():
        d = FreeCAD.listDocuments().get(doc)
        obj = d.getObject(name) if d is not None else None
        if obj is not None:
            show_tooltip(obj)
    QtCore.QTimer.singleShot(0, update)
    QtCore.QTimer.singleShot(300, update)
