"""Commands that exchange the model with the solver: neutral XML export and import, and the
MSTMM topology figure.

- Export writes the mechanism with :func:`MultibodyWB.objects.export.write` (recorded as a macro
  line). A mechanism with problems is refused, with every problem listed in a dialog and in the
  report view, each naming the object and the property to fix.
- Import reads a neutral file with :func:`MultibodyWB.document.import_model.import_file` into the
  active document (a new one if none is open), in one undo step; an invalid file is refused with
  every problem listed.
- Topology figure: the exported model's topology drawn by the solver's figure module (Graphviz)
  and shown in a dialog.

The file dialogs are :func:`ask_save_path` and :func:`ask_open_path` (tests replace them).
"""

import os
import tempfile

import FreeCAD

from .base import ACTIONS, DOC, Command, main_window, message, ref, widgets
from .selection import mechanism_for
from ..gui.figure import FIGURE_DIALOG, show_figure  # noqa: F401  (tests find the dialog by name)

FILE_FILTER = "Multibody model (*.mbs.xml);;XML files (*.xml);;All files (*)"
SUFFIX = ".mbs.xml"
#: Object name of the topology figure dialog (one at a time).


def ask_save_path(title, suggestion):
    """The file to write (None if cancelled), asked with Qt's file dialog."""
    path, _ = widgets().QFileDialog.getSaveFileName(main_window(), title, suggestion, FILE_FILTER)
    return path or None


def ask_open_path(title):
    """The file to read (None if cancelled), asked with Qt's file dialog."""
    path, _ = widgets().QFileDialog.getOpenFileName(main_window(), title, "", FILE_FILTER)
    return path or None


def checked_model(title, mechanism):
    """The mechanism's neutral model, or None after listing its problems (dialog and report)."""
    from ..objects import export
    result = export.collect(mechanism)
    problems = result.problems
    if problems:
        n = len(problems)
        message(title, f"Mechanism '{mechanism.Label}' has {n} problem{'s' if n != 1 else ''}; "
                       "fix them first:", [str(p) for p in problems])
        return None
    return result.model


def _export(command, selection):
    import FreeCADGui
    from ..solver.api import ModelError
    mechanism = mechanism_for(selection)
    if checked_model(command.MENU_TEXT, mechanism) is None:
        return False
    folder = os.path.dirname(selection.document.FileName or "") or os.getcwd()
    path = ask_save_path(command.MENU_TEXT, os.path.join(folder, mechanism.Label + SUFFIX))
    if not path:
        return False
    if not path.lower().endswith(".xml"):
        path += SUFFIX
    FreeCADGui.addModule("MultibodyWB.objects.export")
    try:
        FreeCADGui.doCommand(f"MultibodyWB.objects.export.write({ref(mechanism)}, {path!r})")
    except ModelError as exc:
        message(command.MENU_TEXT, "The model was not written:", [str(p) for p in exc.problems])
        return False
    except OSError as exc:
        message(command.MENU_TEXT, f"Cannot write {path}: {exc}")
        return False
    FreeCAD.Console.PrintMessage(f"MultibodyWB: mechanism '{mechanism.Label}' written to "
                                 f"{path}\n")
    return True


def _import(command, selection):
    import FreeCADGui
    from ..solver.api import ModelError
    path = ask_open_path(command.MENU_TEXT)
    if not path:
        return False
    if FreeCAD.ActiveDocument is None:
        FreeCADGui.doCommand("FreeCAD.newDocument()")
    doc = FreeCAD.ActiveDocument
    doc.openTransaction(command.MENU_TEXT)
    FreeCADGui.addModule("MultibodyWB.document.import_model")
    try:
        FreeCADGui.doCommand(f"MultibodyWB.document.import_model.import_file({DOC}, {path!r})")
        FreeCADGui.doCommand(f"{DOC}.recompute()")
    except ModelError as exc:
        doc.abortTransaction()
        n = len(exc.problems)
        message(command.MENU_TEXT, f"{path} has {n} problem{'s' if n != 1 else ''}; nothing "
                                   "was imported:", [str(p) for p in exc.problems])
        return False
    except Exception as exc:  # unreadable file, I/O: undo everything and say why
        doc.abortTransaction()
        message(command.MENU_TEXT, f"Cannot import {path}: {type(exc).__name__}: {exc}")
        return False
    doc.commitTransaction()
    FreeCADGui.SendMsgToActiveView("ViewFit")
    return True


def _topology(command, selection):
    from ..solver.api import write_figure
    mechanism = mechanism_for(selection)
    model = checked_model(command.MENU_TEXT, mechanism)
    if model is None:
        return False
    folder = tempfile.mkdtemp(prefix="mbwb-topology-")
    path = os.path.join(folder, mechanism.Name + ".png")
    try:
        write_figure(model, path)
    except Exception as exc:  # Graphviz missing or failing: say so, there is nothing to show
        message(command.MENU_TEXT, f"The topology figure could not be drawn (Graphviz): "
                                   f"{type(exc).__name__}: {exc}")
        return False
    show_figure(f"Topology of '{mechanism.Label}'", path)
    return True


ACTIONS.update({"export": _export, "import": _import, "topology": _topology})


class ExportModel(Command):
    NAME = "Export"
    ICON = "Export.svg"
    MENU_TEXT = "Export neutral XML..."
    TOOL_TIP = ("Write the mechanism to a neutral model file (*.mbs.xml, SI units) for the "
                "solver; a mechanism with problems is refused with every problem listed")
    NEEDS = "mechanism"
    ACTION = "export"


class ImportModel(Command):
    NAME = "Import"
    ICON = "Import.svg"
    MENU_TEXT = "Import neutral XML..."
    TOOL_TIP = ("Read a neutral model file (*.mbs.xml) into the active document: a mechanism "
                "with stand-in solids of the bodies' mass properties")
    NEEDS = "always"
    ACTION = "import"


class ShowTopology(Command):
    NAME = "Topology"
    ICON = "Topology.svg"
    MENU_TEXT = "Topology figure"
    TOOL_TIP = ("Show the mechanism's topology figure (MSTMM numbering of bodies and hinges, "
                "loops and cut hinges, degrees of freedom), drawn with Graphviz")
    NEEDS = "mechanism"
    ACTION = "topology"


COMMANDS = (ExportModel, ImportModel, ShowTopology)
