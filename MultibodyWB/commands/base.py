"""The base class of the Multibody commands and how they change the document.

A command is a class holding data (``NAME``, ``ICON``, ``MENU_TEXT``, ``TOOL_TIP``, ``NEEDS``:
the rule of :data:`~.selection.RULES` that enables it, ``ACTION``: what it does, a key of
:data:`ACTIONS`, ``OPTIONS``: keywords for it). :class:`Command` turns that data into FreeCAD's
command interface.

A command that creates objects does it the way a macro would: a builder turns the selection
into Python statements calling :mod:`MultibodyWB.document.factory` (objects referred to by name),
and
:func:`run_script` runs them with ``FreeCADGui.doCommand``, inside one undo transaction, so that
they are echoed in the Python console and recorded in a macro being recorded, and one Undo
removes everything the command made (:func:`scripted` makes such an action of a builder).
"""

import FreeCAD

from .. import resources
from . import selection as selection_module

#: Prefix of the registered command names.
PREFIX = "MultibodyWB_"
#: The active document, as statements spell it.
DOC = "FreeCAD.ActiveDocument"

#: What a command does (its ``ACTION``) -> function(command, selection); each command module
#: adds its actions.
ACTIONS = {}


def ref(obj):
    """How a statement names a document object: ``FreeCAD.ActiveDocument.getObject('Box')``."""
    return f"{DOC}.getObject({obj.Name!r})"


def main_window():
    from ..gui.qt import main_window as window
    return window()


def widgets():
    """The Qt module holding the widget classes (see :mod:`MultibodyWB.gui.qt`)."""
    from ..gui.qt import QtWidgets
    return QtWidgets


def message(title, text, details=(), error=True):
    """Tell the user: a message box, and the report view (every line of ``details`` too)."""
    qt = widgets()
    print_ = FreeCAD.Console.PrintError if error else FreeCAD.Console.PrintMessage
    print_(f"MultibodyWB: {title}: {text}\n")
    for line in details:
        print_(f"  {line}\n")
    box = qt.QMessageBox(main_window())
    box.setIcon(qt.QMessageBox.Warning if error else qt.QMessageBox.Information)
    box.setWindowTitle(f"Multibody: {title}")
    box.setText(text)
    if details:
        box.setInformativeText("\n".join(details))
    box.exec_()


def run_script(title, statements, modules=("MultibodyWB.document.factory",)):
    """Run ``statements`` through ``FreeCADGui.doCommand`` in one undo transaction ``title``.

    The document is recomputed at the end, in the transaction. If a statement raises, the
    transaction is aborted (nothing the command did stays) and the error is shown. Returns True
    when everything ran.
    """
    import FreeCADGui
    doc = FreeCAD.ActiveDocument
    doc.openTransaction(title)
    try:
        for module in modules:
            FreeCADGui.addModule(module)
        for statement in statements:
            FreeCADGui.doCommand(statement)
        FreeCADGui.doCommand(f"{DOC}.recompute()")
    except Exception as exc:  # any error of the statements: undo it all and say why
        doc.abortTransaction()
        message(title, f"{type(exc).__name__}: {exc}")
        return False
    doc.commitTransaction()
    FreeCADGui.Selection.clearSelection()
    return True


def scripted(builder):
    """The action running ``builder(selection, **command.OPTIONS)``'s statements (a list of
    str) with :func:`run_script`, titled by the command's menu text."""
    def action(command, selection):
        return run_script(command.MENU_TEXT, builder(selection, **command.OPTIONS))
    action.builder = builder
    return action


class Command:
    """A Multibody command; subclasses are data.

    Attributes (class data)
    -----------------------
    NAME : str
        Registered as ``"MultibodyWB_" + NAME``.
    ICON : str
        Icon file in ``MultibodyWB/resources/icons``.
    MENU_TEXT, TOOL_TIP : str
    NEEDS : str
        Key of :data:`~.selection.RULES`: what must be selected for the command to be active.
    ACTION : str
        Key of :data:`ACTIONS`: what the command does with the selection.
    OPTIONS : dict
        Keywords for the action's builder (see :func:`scripted`).
    ENDS : int
        For the rule ``"ends"``: how many markers or picks the command takes.
    """

    NAME = ""
    ICON = "MultibodyWB.svg"
    MENU_TEXT = ""
    TOOL_TIP = ""
    NEEDS = "document"
    ACTION = ""
    OPTIONS = {}
    ENDS = 0

    @classmethod
    def command_name(cls):
        return PREFIX + cls.NAME

    def GetResources(self):
        return {"Pixmap": resources.icon_path(self.ICON), "MenuText": self.MENU_TEXT,
                "ToolTip": self.TOOL_TIP}

    def IsActive(self):
        selection = selection_module.current()
        active = bool(selection_module.RULES[self.NEEDS](selection, self))
        explain(self, "" if active else selection_module.why(self.NEEDS, selection, self))
        return active

    def Activated(self):
        sel = selection_module.current()
        if not selection_module.RULES[self.NEEDS](sel, self):
            reason = selection_module.why(self.NEEDS, sel, self)
            message(self.MENU_TEXT, f"Not available now: {reason}.", [self.TOOL_TIP])
            return
        ACTIONS[self.ACTION](self, sel)


# -- why a greyed-out command is greyed out ---------------------------------------------------
#: Command name -> the reason its tool tip shows now ("" when active).
_REASONS = {}


def command_actions(name):
    """The Qt actions (toolbar buttons, menu entries) of the registered command ``name``."""
    import FreeCADGui
    getter = getattr(getattr(FreeCADGui, "Command", None), "get", None)
    if getter is not None:
        try:
            command = getter(name)
            actions = command.getAction() if command is not None else []
            if actions:
                return list(actions)
        except Exception:  # noqa: BLE001 - older FreeCAD: look the actions up by name
            pass
    window = main_window()
    if window is None:
        return []
    return [a for a in window.findChildren(widgets().QAction) if a.objectName() == name]


def tool_tip(command, reason):
    """The tool tip of ``command``: its own, and while it is greyed out, why."""
    if not reason:
        return command.TOOL_TIP
    return f"{command.TOOL_TIP}\n\nNot available now: {reason}."


def explain(command, reason):
    """Show ``reason`` (why ``command`` is greyed out; "" when it is active) in its tool tip
    and in the status bar text of its buttons and menu entries (changed only when it changes)."""
    name = command.command_name()
    if _REASONS.get(name) == reason:
        return
    try:
        actions = command_actions(name)
    except Exception:  # noqa: BLE001 - no GUI (a test calling IsActive): nothing to show
        return
    if not actions:
        return
    _REASONS[name] = reason
    text = tool_tip(command, reason)
    status = f"{command.MENU_TEXT}: not available now: {reason}" if reason else command.TOOL_TIP
    for action in actions:
        action.setToolTip(text)
        action.setStatusTip(status)
