"""A figure (an image file) shown in a dialog: the MSTMM topology figure of the Topology command
and of the Simulate panel's Topology button."""

from .qt import QtCore, QtGui, QtWidgets, main_window

#: Object name of the figure dialog (tests find it by it).
FIGURE_DIALOG = "MultibodyTopologyFigure"
_dialogs = []      # keeps the figure dialog alive while it is shown


def show_figure(title, path):
    """Show the image ``path`` in a dialog (not modal: the model stays editable)."""
    qt = QtWidgets
    for old in list(_dialogs):
        old.close()
        _dialogs.remove(old)
    dialog = qt.QDialog(main_window())
    dialog.setObjectName(FIGURE_DIALOG)
    dialog.setWindowTitle(f"Multibody: {title}")
    dialog.setAttribute(QtCore.Qt.WA_DeleteOnClose, False)
    layout = qt.QVBoxLayout(dialog)
    label = qt.QLabel()
    label.setObjectName("figure")
    pixmap = QtGui.QPixmap(path)
    label.setPixmap(pixmap)
    label.setToolTip(path)
    area = qt.QScrollArea()
    area.setWidget(label)
    area.setWidgetResizable(True)
    layout.addWidget(area)
    note = qt.QLabel("MSTMM numbering: a circle per body, an arrow per hinge from its input "
                     f"to its output body; figure file: {path}")
    note.setWordWrap(True)
    layout.addWidget(note)
    buttons = qt.QDialogButtonBox(qt.QDialogButtonBox.Close)
    buttons.rejected.connect(dialog.reject)
    layout.addWidget(buttons)
    dialog.resize(min(pixmap.width() + 60, 1200), min(pixmap.height() + 120, 900))
    _dialogs.append(dialog)
    dialog.show()
    return dialog
