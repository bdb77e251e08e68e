"""The interference check's task panel: which bodies overlap as drawn, by how much, where.

Opened by the Interference check command for the active mechanism. It runs
:func:`MultibodyWB.document.interference.check` and shows

- a headline: ``No overlaps between the 4 bodies of 'Engine'``, or how many pairs overlap;
- one row per overlapping pair: the two bodies, the common volume, its depth estimate, its
  centre (the user's unit schema) and whether a hinge (or a contact) joins them ("hinged": a pin
  drawn in its bore, listed after the pairs nothing excuses; "hinged, not at the pin": a hinge
  joins them but they overlap away from its pin, as links drawn into each other's layer do, a
  real overlap, listed with those nothing joins);
- the overlapping volumes drawn in red over the solids in the 3D view. Clicking a row selects
  the pair's bodies and solids (tree and 3D view) and draws its volume brighter.

**Check again** runs it again (after the user moved a part). Nothing in the document changes:
the drawing is a Coin overlay of the 3D view, removed when the panel closes (Close, another task
dialog, the document closed); no recompute, no undo step.
"""

import FreeCAD
import FreeCADGui

from ..document import interference
from .qt import QtCore, QtWidgets, compact
from .watch import DocumentWatch, TaskPanel, later, object_alive, track

#: Object name of the panel's widget (tests find it by this name).
PANEL_NAME = "MultibodyInterferencePanel"
#: Columns of the list: title, tool tip.
COLUMNS = (
    ("Bodies", "The two bodies whose solids overlap"),
    ("Volume", "Volume of the overlap (OCC's boolean common of their solids)"),
    ("Depth", "How deep the overlap is: the smallest extent of its bounding box (the mean "
              "thickness of a thin shell, such as a pin drawn too large in its bore)"),
    ("Joined", "'hinged': a hinge holds the two bodies together and they overlap at its pin "
               "(a pin in its bore); 'hinged, not at the pin': a hinge joins them but the parts "
               "themselves overlap (layers drawn into each other): a real overlap; "
               "'contact': a contact element is defined between them"),
    ("Location", "Centre of the overlapping volume, global coordinates"),
)

#: The panel being shown, for tests and the commands.
current = None
track(lambda: current)


class InterferencePanel(TaskPanel):
    """The interference check of one mechanism (see the module doc)."""

    def __init__(self, mechanism):
        global current
        self.mechanism = mechanism
        self.doc = mechanism.Document
        self.doc_name = self.doc.Name
        self.closed = False
        self.document_gone = False
        self.result = None
        self.overlay = None
        self.form = self._widget()
        self.watch = DocumentWatch(self.doc, self)
        # removed without reject() (another dialog took the task view): the overlay goes
        self.form.destroyed.connect(lambda *_: self.cleanup())
        current = self
        self.refresh()

    # -- widgets -------------------------------------------------------------------------------
    def _widget(self):
        w = QtWidgets.QWidget()
        w.setObjectName(PANEL_NAME)
        w.setWindowTitle("Interference check")
        layout = QtWidgets.QVBoxLayout(w)
        self.headline = QtWidgets.QLabel()
        self.headline.setObjectName("Headline")
        self.headline.setWordWrap(True)
        font = self.headline.font()
        font.setBold(True)
        self.headline.setFont(font)
        layout.addWidget(self.headline)
        self.table = QtWidgets.QTreeWidget()
        self.table.setObjectName("Overlaps")
        self.table.setRootIsDecorated(False)
        self.table.setAlternatingRowColors(True)
        self.table.setColumnCount(len(COLUMNS))
        self.table.setHeaderLabels([title for title, _ in COLUMNS])
        header = self.table.headerItem()
        for k, (_, tip) in enumerate(COLUMNS):
            header.setToolTip(k, tip)
        self.table.setToolTip("Click a row to select the two bodies (tree and 3D view); the "
                              "overlapping volumes are drawn in red")
        self.table.setMinimumHeight(120)
        self.table.itemSelectionChanged.connect(self._row_changed)
        layout.addWidget(self.table)
        self.details = QtWidgets.QLabel()
        self.details.setObjectName("Details")
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(QtCore.Qt.TextSelectableByMouse)
        layout.addWidget(self.details)
        self.note = QtWidgets.QLabel()
        self.note.setObjectName("Note")
        self.note.setWordWrap(True)
        layout.addWidget(self.note)
        again = QtWidgets.QPushButton("Check again")
        again.setObjectName("CheckAgain")
        again.setToolTip("Check the solids where they are drawn now")
        again.clicked.connect(self.refresh)
        compact(again)
        layout.addWidget(again)
        return w

    # -- checking ------------------------------------------------------------------------------
    def refresh(self):
        """Check the mechanism as drawn now; show the list and draw the overlaps."""
        if self.closed or not object_alive(self.mechanism):
            return
        self.result = result = interference.check(self.mechanism)
        self.headline.setText(result.headline())
        self.headline.setStyleSheet(
            "color: #a40000;" if any(not o.excused for o in result.overlaps) else "")
        self.table.blockSignals(True)
        self.table.clear()
        for overlap in result.overlaps:
            item = QtWidgets.QTreeWidgetItem([
                f"{overlap.first.Label} \u2013 {overlap.second.Label}", overlap.volume_text(),
                overlap.depth_text(),
                ("hinged" if overlap.pins else "hinged, not at the pin" if overlap.hinged
                 else "contact" if overlap.contacts else ""),
                overlap.centre_text()])
            item.setToolTip(0, overlap.text())
            item.setToolTip(3, overlap.joined_text() or "No hinge holds these bodies "
                            "together and no contact is between them")
            self.table.addTopLevelItem(item)
        for k in range(len(COLUMNS)):
            self.table.resizeColumnToContents(k)
        self.table.blockSignals(False)
        self.table.setVisible(bool(result.overlaps))
        self.show_details(None)
        lines = []
        if result.overlaps and all(o.pins for o in result.overlaps):
            lines.append("Only hinged pairs overlap: a pin drawn larger than its bore, or parts "
                         "of a hinge drawn into each other.")
        lines.append(f"{result.pairs} pair{'s' if result.pairs != 1 else ''} of bodies, "
                     f"{result.candidates} with meeting bounding boxes; overlaps below "
                     f"{interference.VOLUME_RTOL:g} of the smaller body's volume are left out.")
        lines += [f"Not checked: {f}" for f in result.failures]
        self.note.setText("\n".join(lines))
        self._draw()
        for line in [result.headline()] + [f"  {o.text()}" for o in result.overlaps] + \
                [f"  not checked: {f}" for f in result.failures]:
            FreeCAD.Console.PrintMessage(f"MultibodyWB: interference: {line}\n")

    def _draw(self):
        from .overlays import ShapesOverlay
        if self.overlay is None:
            view = FreeCADGui.getDocument(self.doc.Name).ActiveView
            if view is None or not hasattr(view, "getSceneGraph"):
                return
            self.overlay = ShapesOverlay(view, "MultibodyInterferenceOverlay")
        self.overlay.set_shapes([o.shape for o in self.result.overlaps])

    def selected_index(self):
        """Row of the overlap picked in the list, or None."""
        items = self.table.selectedItems()
        return self.table.indexOfTopLevelItem(items[0]) if items else None

    def _row_changed(self):
        index = self.selected_index()
        if self.overlay is not None:
            self.overlay.pick(index)
        self.show_details(index)
        if index is not None:
            self.select(self.result.overlaps[index])

    def show_details(self, index):
        """The whole sentence of overlap ``index`` below the list (the panel is narrow: the
        list's last columns are often out of sight); a hint when none is picked."""
        overlaps = self.result.overlaps if self.result is not None else []
        if index is not None:
            self.details.setText(overlaps[index].text())
        elif overlaps:
            self.details.setText("Click a row: its bodies are selected, its overlap drawn "
                                 "brighter.")
        else:
            self.details.setText("")
        self.details.setVisible(bool(overlaps))

    def select(self, overlap):
        """Select the two bodies of ``overlap`` and their solids (tree and 3D view)."""
        FreeCADGui.Selection.clearSelection()
        for body in (overlap.first, overlap.second):
            if not object_alive(body):
                continue
            FreeCADGui.Selection.addSelection(body)
            for solid in body.Solids:
                FreeCADGui.Selection.addSelection(solid)

    # -- FreeCAD's task dialog (TaskPanel: a Close button) -----------------------------------------
    def is_open(self):
        return not self.closed

    def cleanup(self):
        """Remove the drawing, stop watching (however the panel goes)."""
        global current
        if self.closed:
            return
        self.closed = True
        self.watch.detach()
        if self.overlay is not None and not self.document_gone:
            try:
                self.overlay.remove()
            except (ReferenceError, RuntimeError):      # the view went meanwhile
                pass
        self.overlay = None
        if current is self:
            current = None

    # -- the document (DocumentWatch) ----------------------------------------------------------
    def document_closing(self):
        self.document_gone = True
        later(self.close)

    def object_deleted(self, obj):
        try:
            ours = obj == self.mechanism or obj in getattr(self.mechanism, "Group", [])
        except (ReferenceError, RuntimeError):
            ours = True
        if ours and not self.closed:
            later(self._refresh_or_close)

    def _refresh_or_close(self):
        if object_alive(self.mechanism):
            self.refresh()
        else:
            self.close()


def open_panel(mechanism):
    """Show the interference check of ``mechanism`` (another task dialog is closed first)."""
    from .watch import close_task_dialog
    close_task_dialog()
    panel = InterferencePanel(mechanism)
    FreeCADGui.Control.showDialog(panel)
    return panel
