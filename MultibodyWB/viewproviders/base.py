"""The base class of the Multibody view providers: icon, problem overlay, symbol drawing.

:mod:`MultibodyWB.document.factory` attaches ``ViewProvider(obj.ViewObject)`` to every object it
makes (this module hands it the class when imported);
``ViewProvider(vobj)`` builds the view provider of the object's concept, found by the object's
``Proxy.Type`` in :data:`CLASSES` (one module per concept: :mod:`.mechanism`, :mod:`.body`,
:mod:`.marker`, :mod:`.hinge`, :mod:`.force`, :mod:`.contact`, :mod:`.coupler`, :mod:`.simulation`). FreeCAD saves that class's
name with the document and restores it without calling ``__init__``; a document saved while every
object had this base class is brought to the concept's class when it is attached
(:meth:`ViewProvider.attach`). FreeCAD keeps the proxy's methods it calls from the moment the proxy
is set, so those are all defined here and hand over to hooks the concepts override
(:meth:`~ViewProvider.data_changed`, :meth:`~ViewProvider.view_changed`,
:meth:`~ViewProvider.children`, :meth:`~ViewProvider.restored`, :meth:`~ViewProvider.icon_name`,
:meth:`~ViewProvider.build`): the same methods then serve after the class has changed.

What every view provider does:

- its icon: ``ICON`` in ``MultibodyWB/resources/icons`` (:meth:`ViewProvider.icon_name` may pick
  one by the object's type), with a warning badge while the object has a ``Problem``;
- its symbol: :meth:`ViewProvider.build` returns the Coin node of the object, drawn in the
  display mode ``MODE`` and rebuilt by :meth:`ViewProvider.redraw` when one of ``REDRAW_ON``
  changes (and the symbol turns red while the object has a problem); symbols are scaled and
  switched by the mechanism's view settings (:class:`Display`, see :mod:`.mechanism`);
- no state of its own in the file (``dumps`` returns None): the symbol is rebuilt from the
  object's properties;
- its task panel on double-click, for the concepts :data:`MultibodyWB.gui.task_base.PANELS`
  lists (``doubleClicked`` -> FreeCAD's edit mode -> ``setEdit`` opens it, ``unsetEdit`` closes
  it).
"""

import importlib
import os
from dataclasses import dataclass

import FreeCAD

from .. import resources
from ..document import factory
from ..objects.base import type_of

#: Object ``Type`` -> (module of this package, class) of its view provider.
CLASSES = {
    "Multibody::Mechanism": ("mechanism", "ViewProviderMechanism"),
    "Multibody::Body": ("body", "ViewProviderBody"),
    "Multibody::Marker": ("marker", "ViewProviderMarker"),
    "Multibody::Hinge": ("hinge", "ViewProviderHinge"),
    "Multibody::Force": ("force", "ViewProviderForce"),
    "Multibody::Contact": ("contact", "ViewProviderContact"),
    "Multibody::Coupler": ("coupler", "ViewProviderCoupler"),
    "Multibody::Simulation": ("simulation", "ViewProviderSimulation"),
    "Multibody::Result": ("result", "ViewProviderResult"),
    "Multibody::Study": ("study", "ViewProviderStudy"),
}

#: Size of the symbols when nothing gives the model's size (mm).
DEFAULT_SIZE = 10.0


@dataclass(frozen=True)
class Display:
    """The mechanism's view settings every member draws with (:mod:`.mechanism` sets them).

    Attributes
    ----------
    size : float
        Length of a marker's axes, the scale of every symbol (mm).
    triads, glyphs, labels, on_top : bool
        Show the markers' axes; the hinge, force and centre-of-mass symbols; the letters x, y,
        z at the axes; draw the symbols over the solids.
    """

    size: float = DEFAULT_SIZE
    triads: bool = True
    glyphs: bool = True
    labels: bool = False
    on_top: bool = True


def view_provider_class(type_name):
    """The view provider class of objects of ``Type`` ``type_name`` (this base class if none)."""
    entry = CLASSES.get(type_name)
    if entry is None:
        return ViewProvider
    module = importlib.import_module(f"{__package__}.{entry[0]}")
    return getattr(module, entry[1])


def problem_icon(path):
    """The icon ``path`` with a warning badge, as a PNG file made once in FreeCAD's cache."""
    from PySide import QtCore, QtGui
    folder = os.path.join(FreeCAD.getUserCachePath(), "MultibodyWB", "icons")
    target = os.path.join(folder, os.path.splitext(os.path.basename(path))[0] + "-problem.png")
    if os.path.isfile(target) and os.path.getmtime(target) >= os.path.getmtime(path):
        return target
    os.makedirs(folder, exist_ok=True)
    size = 64
    pixmap = QtGui.QIcon(path).pixmap(size, size)
    painter = QtGui.QPainter(pixmap)
    painter.setRenderHint(QtGui.QPainter.Antialiasing)
    triangle = QtGui.QPolygonF([QtCore.QPointF(47, 30), QtCore.QPointF(63, 62),
                                QtCore.QPointF(31, 62)])
    painter.setPen(QtGui.QPen(QtGui.QColor("#0b1521"), 2))
    painter.setBrush(QtGui.QColor("#ef2929"))
    painter.drawPolygon(triangle)
    painter.setPen(QtGui.QPen(QtGui.QColor("#ffffff"), 4))
    painter.drawLine(QtCore.QPointF(47, 40), QtCore.QPointF(47, 51))
    painter.drawPoint(QtCore.QPointF(47, 57))
    painter.end()
    pixmap.save(target, "PNG")
    return target


class ViewProvider:
    """View provider proxy shared by the Multibody objects; subclasses are mostly data.

    Attributes (class data)
    -----------------------
    ICON : str
        Icon file in ``MultibodyWB/resources/icons``.
    MODE : str or None
        Name of the display mode holding the symbol (None: the object draws nothing).
    REDRAW_ON : frozenset of str
        Properties of the object whose change rebuilds the symbol (``Problem`` always does).
    """

    ICON = "MultibodyWB.svg"
    MODE = None
    REDRAW_ON = frozenset()

    def __new__(cls, vobj=None):
        if cls is ViewProvider and vobj is not None:
            cls = view_provider_class(type_of(vobj.Object))
        return super().__new__(cls)

    def __init__(self, vobj):
        vobj.Proxy = self

    # -- FreeCAD's view provider interface ------------------------------------------------------
    def attach(self, vobj):
        """Set up the display mode holding the symbol (FreeCAD calls this once per view object)."""
        if type(self) is ViewProvider:
            cls = view_provider_class(type_of(vobj.Object))
            if cls is not ViewProvider:
                self.__class__ = cls    # a document saved when this was the only class
                self.attach(vobj)
                return
        self.ViewObject = vobj
        self.Object = vobj.Object
        self.add_view_properties(vobj)
        self.display = None
        if self.MODE:
            from pivy import coin
            self.display = coin.SoSeparator()
            vobj.addDisplayMode(self.display, self.MODE)
        self.redraw()

    def add_view_properties(self, vobj):
        """Subclasses: add their view properties when missing (safe to repeat)."""

    def getDisplayModes(self, vobj):
        return [self.MODE] if self.MODE else []

    def getDefaultDisplayMode(self):
        return self.MODE or ""

    def setDisplayMode(self, mode):
        return mode

    def updateData(self, obj, prop):
        """Rebuild the symbol (and the icon) when a property it shows changes."""
        if not hasattr(self, "Object"):
            return                      # not attached yet
        if prop == "Problem":
            self.ViewObject.signalChangeIcon()
            self.redraw()
        elif prop in self.REDRAW_ON:
            self.redraw()
        self.data_changed(obj, prop)

    def onChanged(self, vobj, prop):
        if hasattr(self, "Object"):
            self.view_changed(vobj, prop)

    def finishRestoring(self):
        if hasattr(self, "Object"):
            self.restored()

    def getIcon(self):
        path = resources.icon_path(self.icon_name())
        if not os.path.isfile(path):
            path = resources.icon_path(self.ICON)
        if self.problem():
            return problem_icon(path)
        return path

    def icon_name(self):
        """The icon file of the object (subclasses: by its type)."""
        return self.ICON

    def claimChildren(self):
        return self.children() if hasattr(self, "Object") else []

    def doubleClicked(self, vobj):
        """Open the object's task panel (FreeCAD's edit mode, :meth:`setEdit`); an object without
        one lets the tree expand or collapse."""
        from ..gui.task_base import panel_class
        if panel_class(vobj.Object) is None:
            return False
        import FreeCADGui
        FreeCADGui.getDocument(vobj.Object.Document.Name).setEdit(vobj.Object.Name, 0)
        return True

    def setEdit(self, vobj, mode=0):
        """Edit mode 0 (double-click, Edit in the context menu) opens the object's task panel
        (:mod:`MultibodyWB.gui.task_base`); other modes (Transform...) are FreeCAD's. The
        signature with ``mode`` serves FreeCAD 0.20 and 1.0."""
        from ..gui import task_base
        if mode != 0 or task_base.panel_class(vobj.Object) is None:
            return None
        return task_base.open_panel(vobj.Object) is not None

    def unsetEdit(self, vobj, mode=0):
        """Leaving edit mode closes the task panel (putting back what it changed if still open)."""
        from ..gui import task_base
        if mode != 0 or task_base.panel_class(vobj.Object) is None:
            return None
        task_base.edit_ended(vobj.Object)
        return True

    # FreeCAD 0.20 saves a proxy with __getstate__ when it has one (Python 3.11 gives every object
    # one, returning __dict__, which holds the view object), 1.0 with dumps: both keep nothing.
    def dumps(self):
        return None

    def loads(self, state):
        return None

    __getstate__ = dumps
    __setstate__ = loads

    # -- hooks of the concepts ------------------------------------------------------------------
    def data_changed(self, obj, prop):
        """Subclasses: react to a change of the object's property ``prop`` (after the redraw)."""

    def view_changed(self, vobj, prop):
        """Subclasses: react to a change of the view property ``prop``."""

    def children(self):
        """Subclasses: the objects shown under this one in the tree."""
        return []

    def restored(self):
        """Subclasses: the document has been restored (every object is there)."""

    # -- drawing --------------------------------------------------------------------------------
    def problem(self):
        """The object's problem text ("" when it has none)."""
        return getattr(getattr(self, "Object", None), "Problem", "") or ""

    def display_settings(self):
        """The :class:`Display` settings of the object's mechanism (defaults without one)."""
        from ..objects.mechanism import mechanism_of
        mechanism = mechanism_of(self.Object)
        proxy = getattr(getattr(mechanism, "ViewObject", None), "Proxy", None)
        if not hasattr(proxy, "settings") or not hasattr(proxy, "Object"):
            return Display()            # no mechanism, or its view is not set up yet
        return proxy.settings()

    def redraw(self):
        """Rebuild the symbol from the object's current properties."""
        display = getattr(self, "display", None)
        if display is None:
            return
        display.removeAllChildren()
        node = self.build(self.display_settings())
        if node is not None:
            display.addChild(node)

    def build(self, settings):
        """The Coin node of the symbol drawn with ``settings`` (a :class:`Display`), or None.

        Subclasses draw their object here; everything they need comes from the object's
        properties, so that the symbol can be rebuilt at any time.
        """
        return None

    def color(self, normal):
        """``normal``, or red while the object has a problem."""
        from .glyphs import PROBLEM_COLOR
        return PROBLEM_COLOR if self.problem() else normal


def refresh_tree(obj):
    """Make the tree view ask ``obj``'s view provider for its children again.

    The tree re-reads an object's children when one of its properties changes; a marker put on a
    body changes none of the body's, so the body's view provider is nudged (its ``ShowInTree``
    set to its own value, which the tree takes as the cue; checked on FreeCAD 0.20 and 1.0).
    Nothing is done while the document is being restored: the tree is built afterwards.
    """
    try:
        vobj = obj.ViewObject
        restoring = obj.Document.Restoring
    except (AttributeError, ReferenceError, RuntimeError):   # an object deleted meanwhile
        return
    if vobj is not None and hasattr(vobj, "ShowInTree") and not restoring:
        vobj.ShowInTree = vobj.ShowInTree


# The objects made from now on get their view provider (the factory sits below this package).
factory.use_view_provider(ViewProvider)
