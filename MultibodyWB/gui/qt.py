"""Qt through FreeCAD's ``PySide`` module, the same names on FreeCAD 0.20 and 1.0.

FreeCAD's ``PySide`` shim keeps the widget classes in ``QtGui`` (Qt 4 style) on some builds and in
``QtWidgets`` on others; :data:`QtWidgets` is whichever holds ``QApplication``.
"""

import gc
from PySide import QtCore, QtGui  # noqa: F401  (re-exported)

if hasattr(QtGui, "QApplication"):
    QtWidgets = QtGui
else:                                   # pragma: no cover - depends on the FreeCAD build
    from PySide import QtWidgets  # noqa: F401

Signal = getattr(QtCore, "Signal", None) or QtCore.pyqtSignal


def main_window():
    """FreeCAD's main window."""
    import FreeCADGui
    return FreeCADGui.getMainWindow()


def process_events():
    """Let Qt handle pending events."""
    QtWidgets.QApplication.processEvents()


#: Width (px) FreeCAD's task view gives a panel in its default layout: measured under Xvfb on
#: a fresh user folder (1280 x 1024 screen, Fusion style, 9 pt font). FreeCAD 0.20.2: the combo
#: view is 264 px wide, its task view's viewport 258 px, 244 px once the panel is taller than
#: the view and the vertical scroll bar shows; a task box takes 26 px of it for its margins; a
#: wider panel is cut off on the right. FreeCAD 1.0.0: the task view is a dock of its own
#: ("Tasks"), 260 px wide, which a wider panel pushes wider (the 3D view shrinks).
#: ``tests/gui/check_panel_widths.py`` measures it again and checks every panel against it.
TASK_VIEW_WIDTH = 244

#: Widest a task box's title may be (px) in :data:`TASK_VIEW_WIDTH`: its icon, margins and
#: frame take the rest.
TITLE_WIDTH = 160


def compact(*widgets):
    """Let buttons and combo boxes shrink to their text (the task panel is narrow: Qt's style
    makes every button at least 80 px wide, a combo box as wide as its longest item)."""
    for w in widgets:
        if isinstance(w, QtWidgets.QComboBox):
            w.setSizeAdjustPolicy(QtWidgets.QComboBox.AdjustToMinimumContentsLengthWithIcon)
            w.setMinimumContentsLength(6)
        elif isinstance(w, QtWidgets.QAbstractButton):
            text = w.text().replace("&&", "\0").replace("&", "").replace("\0", "&")
            need = w.fontMetrics().horizontalAdvance(text) + 16
            if not w.icon().isNull():
                need += w.iconSize().width() + 4
            w.setMinimumWidth(need)


def short_title(text, width=TITLE_WIDTH):
    """``text`` shortened at its end with an ellipsis to fit ``width`` px in a task box's bold
    title."""
    font = QtGui.QFont(QtWidgets.QApplication.font())
    font.setBold(True)
    return QtGui.QFontMetrics(font).elidedText(text, QtCore.Qt.ElideRight, width)


def task_view():
    """FreeCAD's task view (the scroll area of the combo view's Tasks tab), or None."""
    for w in main_window().findChildren(QtWidgets.QScrollArea):
        if w.metaObject().className() == "Gui::TaskView::TaskView":
            return w
    return None


def fit_task_buttons():
    """The task dialog's standard buttons (OK, Apply, Cancel...) as wide as their texts, not
    Qt's 80 px each: three of them fit the default task view (:data:`TASK_VIEW_WIDTH`)."""
    view = task_view()
    if view is None:
        return
    # PySide hands back the wrapper of a widget C++ has deleted (a closed panel's, or a tree
    # item's) for a new one at the same address while Python still holds it: a button came
    # back as a QTreeWidgetItem (a traceback on opening the bushing hinge's panel). Collected
    # first; anything still not a button is left as Qt made it (compact skips it).
    gc.collect()
    for box in view.findChildren(QtWidgets.QDialogButtonBox):
        compact(*box.buttons())
        if box.layout() is not None:
            box.layout().setSpacing(2)


def push_button(text, name, tip, slot):
    """A push button: its ``text``, object name (the tests find it by it), tool tip and the slot
    its ``clicked`` signal calls; compact (:func:`compact`)."""
    b = QtWidgets.QPushButton(text)
    b.setObjectName(name)
    b.setToolTip(tip)
    b.clicked.connect(slot)
    compact(b)
    return b


def dock(name, title, widget, area=None):
    """Put ``widget`` in the main window's dock widget ``name`` (made once, reused); show it.

    Returns the QDockWidget.
    """
    mw = main_window()
    d = mw.findChild(QtWidgets.QDockWidget, name)
    if d is None:
        d = QtWidgets.QDockWidget(title, mw)
        d.setObjectName(name)
        mw.addDockWidget(area if area is not None else QtCore.Qt.BottomDockWidgetArea, d)
    old = d.widget()
    d.setWidget(widget)
    if old is not None and old is not widget:
        old.deleteLater()
    d.show()
    d.raise_()
    return d
