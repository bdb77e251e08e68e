"""Keeping the Multibody task panels consistent with their document.

FreeCAD leaves a task dialog open when its document is closed or when an object it works on is
deleted (or removed by Undo), and ``FreeCADGui.Control.closeDialog()`` removes a dialog without
calling its ``reject``. The Simulate panel and the player therefore:

- watch their document with :class:`DocumentWatch`, a FreeCAD document observer that tells the
  panel when the document closes, when objects are deleted or made, and around a save;
- close another Multibody panel with :func:`close_task_dialog`, which lets it clean up first
  (stop a run, put the solids back) before FreeCAD removes it.

The observer's slots run inside FreeCAD's signals: they only set flags and stop timers there,
and leave the rest (closing the dialog, refreshing lists) to the event loop
(:func:`later`).
"""

import FreeCAD
import FreeCADGui

from .qt import QtCore


def later(function):
    """Call ``function()`` from the event loop, after the current signal has been handled."""
    QtCore.QTimer.singleShot(0, function)


def document_alive(doc):
    """True while ``doc`` is an open document (False once it was closed)."""
    try:
        name = doc.Name
    except (ReferenceError, RuntimeError, AttributeError):
        return False
    return name in FreeCAD.listDocuments()


def object_alive(obj):
    """True while ``obj`` is in an open document (False once deleted, undone or closed)."""
    try:
        doc = obj.Document
        name = obj.Name
    except (ReferenceError, RuntimeError, AttributeError):
        return False
    return (doc is not None and name is not None and document_alive(doc)
            and doc.getObject(name) is not None)


class DocumentWatch:
    """A FreeCAD document observer for one panel and one document.

    Calls, on ``panel``, whichever of these it has (each with the document still valid):

    - ``document_closing()``: the document is being closed;
    - ``object_deleted(obj)`` / ``object_created(obj)``: an object of the document was deleted
      (Delete, Undo of its creation) or made (also by Redo);
    - ``before_save()`` / ``after_save()``: around writing the document to its file.
    """

    def __init__(self, doc, panel):
        self.name = doc.Name
        self.panel = panel
        self.attached = False
        FreeCAD.addDocumentObserver(self)
        self.attached = True

    def detach(self):
        """Stop watching (not from inside one of the slots: use :func:`later`)."""
        if self.attached:
            self.attached = False
            FreeCAD.removeDocumentObserver(self)

    def _ours(self, doc):
        try:
            return self.attached and doc is not None and doc.Name == self.name
        except (ReferenceError, RuntimeError, AttributeError):
            return False

    def _call(self, method, *args):
        function = getattr(self.panel, method, None)
        if function is not None:
            function(*args)

    def _document_of(self, obj):
        try:
            return obj.Document
        except (ReferenceError, RuntimeError, AttributeError):
            return None

    # -- FreeCAD's observer slots ----------------------------------------------------------------
    def slotDeletedDocument(self, doc):
        if self._ours(doc):
            self._call("document_closing")

    def slotDeletedObject(self, obj):
        if self._ours(self._document_of(obj)):
            self._call("object_deleted", obj)

    def slotCreatedObject(self, obj):
        if self._ours(self._document_of(obj)):
            self._call("object_created", obj)

    def slotStartSaveDocument(self, doc, path):
        if self._ours(doc):
            self._call("before_save")

    def slotFinishSaveDocument(self, doc, path):
        if self._ours(doc):
            self._call("after_save")


#: Functions that give the open panel of one kind (the Simulate panel, the player, an edit
#: panel), or None; each panel module adds its own with :func:`track` when it is imported, so that
#: this module, below them, needs none of them.
_OPEN_PANELS = []


def track(current):
    """Let :func:`close_task_dialog` clean up the panel that ``current()`` returns (None when
    none of that kind is open)."""
    _OPEN_PANELS.append(current)


def close_task_dialog():
    """Close FreeCAD's active task dialog; a Simulate panel, player or edit panel cleans up first
    (its run is cancelled, its solids or edited properties put back), which ``Control.closeDialog()`` alone would not do."""
    for current in _OPEN_PANELS:
        panel = current()
        if panel is not None:
            panel.cleanup()
    if FreeCADGui.Control.activeDialog():
        FreeCADGui.Control.closeDialog()


class TaskPanel:
    """FreeCAD's task-dialog interface shared by the Simulate panel and the player: a Close
    button; :meth:`cleanup` (the subclass's) whenever the panel goes, however it goes.

    FreeCAD calls ``reject()`` for the Close button and then removes the dialog itself;
    :meth:`close` is for the panel's own buttons (Play in the Simulate panel...).
    """

    def is_open(self):
        """False once :meth:`cleanup` ran."""
        raise NotImplementedError

    def cleanup(self):
        raise NotImplementedError

    def getStandardButtons(self):
        from .qt import QtWidgets
        return int(QtWidgets.QDialogButtonBox.Close)

    def reject(self):
        """The Close button: clean up; FreeCAD then removes the dialog."""
        self.cleanup()
        return True

    def close(self):
        """Clean up and close the task dialog."""
        was_open = self.is_open()
        self.cleanup()
        if was_open and FreeCADGui.Control.activeDialog():
            FreeCADGui.Control.closeDialog()
