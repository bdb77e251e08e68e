"""Helpers for test scripts that run inside the FreeCAD GUI (started by ``freecad_env.run_freecad_gui``).

A GUI test script does its work in a function and hands it to :func:`run_and_quit`::

    import os, sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import in_freecad

    def check():
        ...                      # activate a workbench, build a model, take screenshots
        return {"some": "data"}  # JSON-serialisable

    in_freecad.run_and_quit(check)

The function runs once the GUI event loop is running. Its dict, plus the report view text
(``"report_view"``), any exception (``"exception"``) and the texts of modal dialogs that popped up and
were closed (``"dialogs"``), is written as JSON to ``$MBWB_RESULT_FILE``; then all documents are closed
without saving and FreeCAD quits. A watchdog ends FreeCAD if the function never returns.

Works with FreeCAD 0.20 and 1.0: Qt is imported through FreeCAD's ``PySide`` compatibility module.
"""

import gc
import json
import os
import traceback

import FreeCAD
import FreeCADGui
from PySide import QtCore, QtGui

RESULT_ENV = "MBWB_RESULT_FILE"
OUTPUT_DIR_ENV = "MBWB_OUTPUT_DIR"


def output_dir():
    """Directory for artefacts (screenshots, exported files) the test reads afterwards."""
    path = os.environ.get(OUTPUT_DIR_ENV) or os.path.join(FreeCAD.getUserAppDataDir(), "test-output")
    os.makedirs(path, exist_ok=True)
    return path


def _widgets_module():
    """The module holding the widget classes (QtGui in FreeCAD's PySide shim for Qt5, else QtWidgets)."""
    return QtGui if hasattr(QtGui, "QApplication") else __import__("PySide.QtWidgets").QtWidgets


def process_events():
    """Let Qt handle pending events (repaints, menu updates) before inspecting the GUI."""
    _widgets_module().QApplication.processEvents()


def report_view_text():
    """Plain text of the report view (FreeCAD's console messages shown in the GUI), or "" if absent."""
    widgets = _widgets_module()
    main_window = FreeCADGui.getMainWindow()
    dock = main_window.findChild(widgets.QDockWidget, "Report view")
    if dock is None:
        return ""
    edit = dock.findChild(widgets.QTextEdit) or dock.findChild(widgets.QPlainTextEdit)
    return edit.toPlainText() if edit is not None else ""


def menu_titles():
    """Titles of the visible menus of the main window's menu bar, without ``&`` accelerators."""
    bar = FreeCADGui.getMainWindow().menuBar()
    return [action.text().replace("&", "") for action in bar.actions()
            if action.isVisible() and action.text()]


def _gl_widgets(main_window):
    """The visible GL widgets (3D views) of ``main_window``.

    Asked of Qt by class (its C++ side filters), not by walking every widget: PySide hands back
    the wrapper of a widget C++ has deleted (a closed panel's spin box) while Python still holds
    it, and touching one raised "Internal C++ object already deleted" in a screenshot (the
    contact-ground check, session 21's CI) or, where the wrapper does not know, crashed FreeCAD
    1.0 (SIGSEGV in a QtWidgets call from the check's timer, the panel-widths check). Collected
    first; a wrapper that still fails is left out."""
    gc.collect()
    widgets = _widgets_module()
    classes = [getattr(widgets, "QOpenGLWidget", None)]
    try:
        from PySide import QtOpenGL
        classes.append(getattr(QtOpenGL, "QGLWidget", None))
    except Exception:  # noqa: BLE001 - no QtOpenGL in this PySide: QOpenGLWidget only
        pass
    found = []
    for cls in classes:
        if cls is None:
            continue
        for child in main_window.findChildren(cls):
            try:
                if child.metaObject().className() in ("QOpenGLWidget", "QGLWidget") \
                        and child.isVisible():
                    found.append(child)
            except RuntimeError:
                continue
    return found


def class_name(widget):
    """The Qt class name of ``widget``, or None when PySide hands back a stale wrapper (a widget
    C++ deleted, whose address a new object reuses: "Internal C++ object already deleted")."""
    try:
        return widget.metaObject().className()
    except RuntimeError:
        return None


def task_view():
    """FreeCAD's task view (``Gui::TaskView::TaskView``; the visible one first), or None. Stale
    wrappers are collected first and skipped."""
    gc.collect()
    widgets = _widgets_module()
    views = [w for w in FreeCADGui.getMainWindow().findChildren(widgets.QScrollArea)
             if class_name(w) == "Gui::TaskView::TaskView"]
    shown = []
    for w in views:
        try:
            if w.isVisible():
                shown.append(w)
        except RuntimeError:
            continue
    return (shown or views or [None])[0]


def _paint_3d_view(main_window, pixmap):
    """Paint the active 3D view into ``pixmap`` (a grab of ``main_window``).

    ``QWidget.grab()`` leaves the OpenGL area of a 3D view empty (Coin renders it directly), so the
    view is rendered off-screen with ``saveImage`` and painted where its GL widget is. Done only when
    exactly one GL widget is visible (the usual single-view layout). Returns True if painted.
    """
    document = FreeCADGui.ActiveDocument
    view = document.ActiveView if document is not None else None
    if view is None or not hasattr(view, "saveImage"):
        return False
    gl_widgets = _gl_widgets(main_window)
    if len(gl_widgets) != 1:
        return False
    target = gl_widgets[0]
    scale = pixmap.devicePixelRatio() or 1.0
    width, height = int(target.width() * scale), int(target.height() * scale)
    if width < 2 or height < 2:
        return False
    tmp = os.path.join(output_dir(), "_3dview.png")
    view.saveImage(tmp, width, height, "Current")
    image = QtGui.QImage(tmp)
    os.remove(tmp)
    if image.isNull():
        return False
    origin = target.mapTo(main_window, QtCore.QPoint(0, 0))
    painter = QtGui.QPainter(pixmap)
    painter.drawImage(QtCore.QRect(origin.x(), origin.y(), target.width(), target.height()), image)
    painter.end()
    return True


def grab_main_window(file_name, size=(1280, 960)):
    """Save a screenshot of the whole main window (menus, toolbars, workbench selector).

    Parameters
    ----------
    file_name : str
        PNG file name, relative to :func:`output_dir` unless absolute.
    size : tuple of int, optional
        Window size (width, height) in pixels to set before grabbing; None keeps the current size.

    Returns
    -------
    dict
        ``path``, ``width``, ``height`` and ``distinct_colors`` (number of different colours among
        up to 4096 sampled pixels: a blank or black grab has 1 or 2).
    """
    main_window = FreeCADGui.getMainWindow()
    if size is not None:
        main_window.resize(*size)
    for _ in range(3):
        process_events()
    path = file_name if os.path.isabs(file_name) else os.path.join(output_dir(), file_name)
    pixmap = main_window.grab()
    _paint_3d_view(main_window, pixmap)
    saved = pixmap.save(path, "PNG")
    image = pixmap.toImage()
    colors = set()
    width, height = image.width(), image.height()
    if width and height:
        for i in range(64):
            for j in range(64):
                colors.add(image.pixel(i * (width - 1) // 63, j * (height - 1) // 63))
    return {"path": path, "saved": bool(saved), "width": width, "height": height,
            "distinct_colors": len(colors)}


def write_result(result):
    """Write ``result`` as JSON to ``$MBWB_RESULT_FILE`` (via a temporary file, so it appears whole)."""
    path = os.environ.get(RESULT_ENV) or os.path.join(output_dir(), "result.json")
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as stream:
        json.dump(result, stream, indent=1, default=repr)
    os.replace(tmp, path)


HARD_EXIT_CODE = 3
"""Exit status of FreeCAD when :func:`quit_freecad` had to end the process without closing the GUI."""


def quit_freecad(grace_ms=20000):
    """Close all documents without saving and close the main window, which ends FreeCAD.

    If FreeCAD is still alive ``grace_ms`` later (a dialog blocked the close), end the process with
    status :data:`HARD_EXIT_CODE`.
    """
    for name in list(FreeCAD.listDocuments()):
        FreeCAD.closeDocument(name)
    QtCore.QTimer.singleShot(grace_ms, lambda: os._exit(HARD_EXIT_CODE))
    FreeCADGui.getMainWindow().close()


def _describe_dialog(widget):
    """Title and text of a dialog (message boxes: also the informative and detailed text)."""
    parts = [widget.windowTitle()]
    for getter in ("text", "informativeText", "detailedText"):
        value = getattr(widget, getter, None)
        if callable(value):
            try:
                parts.append(value())
            except TypeError:  # a widget whose text() needs arguments
                pass
    return " | ".join(part for part in parts if part)


def dismiss_modal_dialogs(log):
    """Close every open modal dialog, appending its description to ``log`` (a list).

    FreeCAD reports some failures (for example an exception in a workbench's ``Initialize``) in a modal
    message box, which would block a test script until it is killed.
    """
    application = _widgets_module().QApplication
    for _ in range(20):
        widget = application.activeModalWidget()
        if widget is None:
            return
        log.append(_describe_dialog(widget))
        if hasattr(widget, "reject"):
            widget.reject()
        else:
            widget.close()


def run_and_quit(check, delay_ms=500, dismiss_dialogs=True, watchdog_s=120):
    """Run ``check()`` once the GUI is up, write its result with the report view text, quit FreeCAD.

    Parameters
    ----------
    check : callable
        Returns a JSON-serialisable dict (or None). Exceptions are caught and reported as
        ``"exception"`` (a formatted traceback) in the result.
    delay_ms : int
        Delay after the event loop starts, in milliseconds.
    dismiss_dialogs : bool
        Close modal dialogs that open meanwhile (checked twice a second) and report them as
        ``"dialogs"`` (a list of their texts) in the result, so that none can block the script.
    watchdog_s : float
        If ``check()`` has not returned after this many seconds, write what is known (with
        ``"exception"`` saying so) and end FreeCAD with status :data:`HARD_EXIT_CODE`.
    """
    dialogs = []
    state = {"done": False}

    def finish(result):
        result["dialogs"] = list(dialogs)
        try:
            result["report_view"] = report_view_text()
        except Exception:
            result["report_view_exception"] = traceback.format_exc()
        write_result(result)

    def watchdog():
        if not state["done"]:
            finish({"exception": f"watchdog: the check did not finish within {watchdog_s} s"})
            os._exit(HARD_EXIT_CODE)

    def run():
        result = {}
        try:
            result.update(check() or {})
        except Exception:  # reported to the test, which fails with the traceback
            result["exception"] = traceback.format_exc()
        state["done"] = True
        if dismiss_dialogs:
            dismiss_modal_dialogs(dialogs)
        finish(result)
        quit_freecad()

    if dismiss_dialogs:
        timer = QtCore.QTimer(FreeCADGui.getMainWindow())
        timer.timeout.connect(lambda: dismiss_modal_dialogs(dialogs))
        timer.start(500)
    QtCore.QTimer.singleShot(int(watchdog_s * 1000), watchdog)
    QtCore.QTimer.singleShot(delay_ms, run)


# --- helpers for the Multibody GUI checks (tests/gui/check_*.py) --------------------------------

def python_console_text():
    """Plain text of FreeCAD's Python console (where ``FreeCADGui.doCommand`` echoes each statement
    it runs, as a macro would record it), or "" if there is none."""
    widgets = _widgets_module()
    for edit in FreeCADGui.getMainWindow().findChildren(widgets.QPlainTextEdit):
        if edit.metaObject().className() == "Gui::PythonConsole":
            return edit.toPlainText()
    return ""


def toolbar_actions():
    """``{toolbar title: [command name of each action, ...]}`` of the main window's toolbars
    (FreeCAD names a command's action after the command)."""
    widgets = _widgets_module()
    return {bar.windowTitle(): [action.objectName() for action in bar.actions()]
            for bar in FreeCADGui.getMainWindow().findChildren(widgets.QToolBar)}


def menu_actions(title):
    """Command names (and "Separator") in the menu-bar menu ``title``; None if there is no such
    menu."""
    for action in FreeCADGui.getMainWindow().menuBar().actions():
        if action.text().replace("&", "") == title:
            menu = action.menu()
            return ["Separator" if item.isSeparator() else item.objectName()
                    for item in menu.actions()]
    return None


def count_colors(path, colors, tolerance=40, step=2):
    """How many pixels of the image ``path`` (every ``step``-th in x and y) are near each colour.

    Parameters
    ----------
    colors : dict
        ``{name: (r, g, b)}`` in 0..255.
    tolerance : int
        Largest difference per channel.

    Returns
    -------
    dict
        ``{name: number of pixels}``.
    """
    image = QtGui.QImage(path)
    counts = {name: 0 for name in colors}
    for y in range(0, image.height(), step):
        for x in range(0, image.width(), step):
            pixel = image.pixel(x, y)
            r, g, b = (pixel >> 16) & 255, (pixel >> 8) & 255, pixel & 255
            for name, (cr, cg, cb) in colors.items():
                if max(abs(r - cr), abs(g - cg), abs(b - cb)) <= tolerance:
                    counts[name] += 1
    return counts


def tree_lines():
    """The model tree as lines of text, two spaces of indent per level (what the user sees in the
    Model tab: documents, then objects under the object that claims them)."""
    widgets = _widgets_module()
    trees = [tree for tree in FreeCADGui.getMainWindow().findChildren(widgets.QTreeWidget)
             if tree.metaObject().className() == "Gui::TreeWidget"]
    lines = []

    def walk(item, depth):
        lines.append("  " * depth + item.text(0))
        for i in range(item.childCount()):
            walk(item.child(i), depth + 1)

    for tree in trees[:1]:
        for i in range(tree.topLevelItemCount()):
            walk(tree.topLevelItem(i), 0)
    return lines


def wait(seconds):
    """Process Qt events for ``seconds`` (timers included: the tree view updates on a timer)."""
    import time
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        process_events()
        time.sleep(0.02)


def show_only_toolbars(keep):
    """Hide every toolbar of the main window whose title is not in ``keep`` (a predicate on the
    title); return a function that shows them again."""
    widgets = _widgets_module()
    hidden = []
    for bar in FreeCADGui.getMainWindow().findChildren(widgets.QToolBar):
        if bar.isVisible() and not keep(bar.windowTitle()):
            bar.setVisible(False)
            hidden.append(bar)

    def restore():
        for bar in hidden:
            bar.setVisible(True)
    return restore


# --- what the Multibody view providers draw ------------------------------------------------------

def multibody_objects(doc):
    """The Multibody objects of ``doc`` (their proxy's ``Type`` starts with ``Multibody::``)."""
    return [o for o in doc.Objects
            if getattr(getattr(o, "Proxy", None), "Type", "").startswith("Multibody::")]


def symbol_box(obj):
    """Size and centre of the bounding box of what the object's view provider draws (mm), or
    None if it draws nothing."""
    from pivy import coin
    proxy = obj.ViewObject.Proxy
    display = getattr(proxy, "display", None)
    if display is None or display.getNumChildren() == 0:
        return None
    view = FreeCADGui.ActiveDocument.ActiveView
    action = coin.SoGetBoundingBoxAction(view.getViewer().getSoRenderManager().getViewportRegion())
    action.apply(obj.ViewObject.RootNode)
    box = action.getBoundingBox()
    if box.isEmpty():
        return None
    size = box.getSize().getValue()
    center = box.getCenter().getValue()
    return {"size": [round(float(x), 3) for x in size],
            "center": [round(float(x), 3) for x in center]}


def materials(obj):
    """The diffuse colours (rounded) of the materials in the object's symbol."""
    from pivy import coin
    search = coin.SoSearchAction()
    search.setType(coin.SoMaterial.getClassTypeId())
    search.setInterest(coin.SoSearchAction.ALL)
    search.apply(obj.ViewObject.Proxy.display)
    colors = set()
    for i in range(search.getPaths().getLength()):
        node = search.getPaths()[i].getTail()
        colors.add(tuple(round(float(c), 2) for c in node.diffuseColor[0].getValue()))
    return sorted(colors)


def describe(doc):
    """What the document's Multibody objects look like in the GUI."""
    found = {}
    for obj in multibody_objects(doc):
        vobj = obj.ViewObject
        proxy = getattr(vobj, "Proxy", None)
        found[obj.Name] = {
            "type": obj.Proxy.Type,
            "view_provider": type(proxy).__name__,
            "display_mode": vobj.DisplayMode,
            "visible": bool(vobj.Visibility),
            "icon": os.path.basename(proxy.getIcon()) if proxy is not None else None,
            "box": symbol_box(obj),
            "problem": obj.Problem,
        }
    return found


def show_model_tab():
    """Bring the tree to the front: the combo view's "Model" tab (0.20), or the "Model" dock,
    tabbed with "Tasks" (1.0)."""
    widgets = _widgets_module()
    main_window = FreeCADGui.getMainWindow()
    dock = main_window.findChild(widgets.QDockWidget, "Model")
    if dock is not None:
        dock.raise_()
        return True
    for tabs in main_window.findChildren(widgets.QTabWidget):
        for i in range(tabs.count()):
            if tabs.tabText(i).replace("&", "") == "Model":
                tabs.setCurrentIndex(i)
                return True
    return False



# -- the task panels as a user drives them (shared by the check scripts) ---------------------------

def _W():
    """Qt's widgets module (QtWidgets or QtGui, by the FreeCAD version)."""
    return _widgets_module()


def panel():
    """The open task panel of the workbench (``task_base.current``)."""
    from MultibodyWB.gui import task_base
    return task_base.current


def click(which):
    """Click the task dialog's standard button ``which`` ("Ok", "Cancel") as a user would."""
    for box in FreeCADGui.getMainWindow().findChildren(_W().QDialogButtonBox):
        button = box.button(getattr(_W().QDialogButtonBox, which))
        if button is not None and button.isVisible():
            button.click()
            wait(0.3)
            return True
    return False


def widget(name):
    """The panel's widget called ``name`` (None: none)."""
    for form in panel().form:
        found = form.findChild(_W().QWidget, name)
        if found is not None:
            return found
    return None


def type_into(name, text):
    """Type ``text`` into the field ``name`` as a user, then leave the field."""
    w = widget(name)
    edit = w if isinstance(w, _W().QLineEdit) else w.findChild(_W().QLineEdit)
    edit.setFocus()
    edit.selectAll()
    edit.setText(text)
    edit.textEdited.emit(text)   # QLineEdit.setText does not emit textEdited (typing does)
    edit.editingFinished.emit()  # Tab or Enter
    process_events()


def shot(name):
    """Isometric view, fit all, then a screenshot of the main window (``name``)."""
    view = FreeCADGui.ActiveDocument.ActiveView
    view.viewIsometric()
    view.fitAll()
    wait(0.3)
    return grab_main_window(name, size=(1280, 960))
