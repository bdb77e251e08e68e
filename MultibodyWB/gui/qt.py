"""Qt through FreeCAD's ``PySide`` module, the same names on FreeCAD 0.20 and 1.0.

FreeCAD's ``PySide`` shim keeps the widget classes in ``QtGui`` (Qt 4 style) on some builds and in
``QtWidgets`` on others; :data:`QtWidgets` is whichever holds ``QApplication``.
"""

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


def compact(*widgets):
    """Let buttons and combo boxes shrink to their text (the task panel is narrow: Qt's style
    makes every button at least 80 px wide, a combo box as wide as its longest item)."""
    for w in widgets:
        if isinstance(w, QtWidgets.QComboBox):
            w.setSizeAdjustPolicy(QtWidgets.QComboBox.AdjustToMinimumContentsLengthWithIcon)
            w.setMinimumContentsLength(6)
        else:
            w.setMinimumWidth(w.fontMetrics().boundingRect(w.text()).width() + 20)


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
