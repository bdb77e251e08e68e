"""The plot and table dock: curves of result columns of one or several runs, in FreeCAD's units.

:class:`PlotPanel` shows, on the left, a tree of the quantities of a
:class:`~..solver.results.Results` (one item per body, per hinge and "Energy", their columns
below, each with its description as tooltip and its unit) and the list of runs (check boxes: the
same quantities of every checked run are overlaid, one line style per run, one colour per
quantity); on the right a matplotlib figure with one axes per unit (quantities of the same unit
share an axes; stacked, sharing the time axis) and below it a table of the values at the cursor
time, one row per run.

Values are shown in the units FreeCAD displays (Edit > Preferences > General > Units: mm, deg, N
in the Standard schema): :func:`display_unit` converts from the SI units of the results.

The player moves the cursor with :meth:`PlotPanel.set_time` (cheap: it moves one line per axes and
refreshes the table, nothing is re-plotted); a click or a drag in the plot moves it too and emits
:attr:`PlotPanel.timeChanged`. :func:`show_plot_dock` puts a panel in the main window's dock
``MultibodyPlots``.

Qt comes from FreeCAD's ``PySide`` shim (:mod:`.qt`); matplotlib's Qt backend is imported here only,
after FreeCAD has imported PySide2, so matplotlib picks PySide2 (``qt_compat.QT_API``).
"""

from __future__ import annotations

import csv
import math
import os

import numpy as np

from ..solver.api import (CONTACT_COLUMNS, COUPLER_COLUMNS, atomic_write,
                          describe_column as describe, unit_of)
from . import qt
from .qt import QtCore, QtWidgets

# matplotlib's Qt backend, imported after FreeCAD's PySide shim: it picks the same binding (PySide2)
try:
    from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg, NavigationToolbar2QT
except ImportError:                       # pragma: no cover - matplotlib < 3.5
    from matplotlib.backends.backend_qt5agg import FigureCanvasQTAgg, NavigationToolbar2QT
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

#: Name of the main window's dock widget that holds the panel.
DOCK_NAME = "MultibodyPlots"
DOCK_TITLE = "Multibody plots"

#: SI unit (as :func:`~..solver.results.unit_of` spells it) -> what it measures (axes labels).
UNIT_KIND = {
    "s": "time", "m": "length", "rad": "angle", "m/s": "velocity", "rad/s": "angular velocity",
    "m/s^2": "acceleration", "rad/s^2": "angular acceleration", "N": "force", "N m": "torque",
    "J": "energy", "1": "dimensionless",
}

#: Line style of the i-th checked run (cycled); the colour says which quantity.
RUN_STYLES = ("-", "--", ":", "-.")

#: Label of a dimensionless quantity.
NO_UNIT = "-"

_UNIT_CACHE: dict = {}


# --------------------------------------------------------------------------------------------------
# Units
# --------------------------------------------------------------------------------------------------

def _schema():
    """FreeCAD's current unit schema (an int), or None without FreeCAD."""
    try:
        import FreeCAD
        return FreeCAD.Units.getSchema()
    except Exception:                      # no FreeCAD, or an old one without getSchema
        return None


def schema_name():
    """The name of FreeCAD's current unit schema ("Standard (mm/kg/s/degree)"), or "SI"."""
    try:
        import FreeCAD
        return FreeCAD.Units.listSchemas(FreeCAD.Units.getSchema())
    except Exception:
        return "SI"


def _freecad_unit(si):
    """(factor, label) of the unit FreeCAD shows for a quantity of one ``si`` unit: the one
    formatter of every view (:func:`MultibodyWB.objects.units.preferred`: a torque in N·m, not
    J)."""
    if si in ("1", ""):
        return 1.0, NO_UNIT
    try:
        from ..objects import units
        scale, label = units.preferred(si, 1.0)
    except Exception:                      # FreeCAD missing or the unit unknown to it: plain SI
        return 1.0, si
    if not label or not math.isfinite(scale) or scale <= 0.0:
        return 1.0, si
    return scale, label


def display_unit(si):
    """How FreeCAD shows a quantity given in the SI unit ``si`` ("m", "rad/s", "N m", ...).

    Returns
    -------
    factor : float
        Displayed value = SI value * ``factor`` (1000 for m -> mm, 180/pi for rad -> deg).
    label : str
        The displayed unit ("mm", "°", "N"); ``si`` itself for a unit FreeCAD does not know, "-"
        for a dimensionless one.

    The user's preferred unit is that of 1 SI unit in FreeCAD's current unit schema; the answer is
    cached per unit and schema.
    """
    key = (si, _schema())
    if key not in _UNIT_CACHE:
        _UNIT_CACHE[key] = _freecad_unit(si)
    return _UNIT_CACHE[key]


def column_unit(name):
    """(factor, label) of the result column ``name`` (see :func:`display_unit`)."""
    return display_unit(unit_of(name))


# --------------------------------------------------------------------------------------------------
# The panel
# --------------------------------------------------------------------------------------------------

def _unique_names(runs):
    """The runs with unique names ("a", "a (2)", ...)."""
    seen, out = {}, []
    for name, results in runs:
        name = str(name)
        if name in seen:
            seen[name] += 1
            name = f"{name} ({seen[name]})"
        else:
            seen[name] = 1
        out.append((name, results))
    return out


def _owner(name):
    return name.rpartition(".")[0]


def _short(name):
    return name.rpartition(".")[2]


def _format(value):
    return f"{value:.6g}"


def _element_kinds(names):
    """``{owner: "contact" | "coupler"}`` of the contacts (``<Contact>.Fn`` and ``.depth``) and
    couplers (``<Coupler>.angle_error`` or ``.gap_error``) among the column ``names``."""
    present = set(names)
    kinds = {}
    for name in names:
        owner, _, quantity = name.rpartition(".")
        if quantity == "Fn" and f"{owner}.depth" in present:
            kinds[owner] = "contact"
        elif quantity in ("angle_error", "gap_error"):
            kinds[owner] = "coupler"
    return kinds


def _describe(name, kind=None):
    """The tooltip of a column: its description with its unit; a contact's or coupler's
    (``kind``) from their own tables (their ``x`` is no body's ``x``)."""
    table = {"contact": CONTACT_COLUMNS, "coupler": COUPLER_COLUMNS}.get(kind, {})
    quantity = _short(name)
    if quantity in table:
        unit, text = table[quantity]
        return f"{name} [{unit}]: {text}"
    return describe(name)


class PlotPanel(QtWidgets.QWidget):
    """Curves and a table of result columns, for one run or several runs overlaid.

    Parameters
    ----------
    runs : list of (str, Results)
        Runs of one mechanism, the current one first: (name shown in the list, results). Names are
        made unique by appending " (2)", ...
    parent : QWidget, optional

    Signals
    -------
    timeChanged(float)
        The user clicked or dragged in the plot: the cursor moved to that time (s).
    """

    timeChanged = qt.Signal(float)

    def __init__(self, runs=(), parent=None):
        super().__init__(parent)
        self.setObjectName("MultibodyPlotPanel")
        self._runs = []                    # [(name, Results)]
        self._selected = []                # checked columns, in the order they were checked
        self._time = 0.0
        self._cursors = []                 # one vertical line per axes
        self._table_data = []              # [(cell, times, values in displayed units)]
        self._table_columns = []           # the table's quantities, left to right
        self._axes_units = []              # SI unit of each axes, top to bottom
        self._items = {}                   # column name -> its tree item
        self._dragging = False
        self._updating = False
        self._build()
        self.set_runs(list(runs))

    # -- layout -------------------------------------------------------------------------------
    def _build(self):
        W = QtWidgets
        split = W.QSplitter(QtCore.Qt.Horizontal, self)
        layout = W.QHBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(split)

        left = W.QWidget(split)
        left.setMinimumWidth(160)
        lay = W.QVBoxLayout(left)
        lay.setContentsMargins(0, 0, 0, 0)
        self.tree = W.QTreeWidget(left)
        self.tree.setObjectName("quantities")
        self.tree.setColumnCount(2)
        self.tree.setHeaderLabels(["Quantity", "Unit"])
        self.tree.setToolTip("Tick the quantities to plot; hover for what each one is")
        self.tree.itemChanged.connect(self._on_tree_item_changed)
        lay.addWidget(self.tree, 3)
        lay.addWidget(W.QLabel("Runs (overlaid: one line style each)", left))
        self.run_list = W.QListWidget(left)
        self.run_list.setObjectName("runs")
        self.run_list.itemChanged.connect(self._on_run_item_changed)
        lay.addWidget(self.run_list, 1)
        buttons = W.QHBoxLayout()
        self.png_button = W.QPushButton("Export PNG...", left)
        self.png_button.setToolTip("Save the figure as an image")
        self.png_button.clicked.connect(self._ask_png)
        self.csv_button = W.QPushButton("Export CSV...", left)
        self.csv_button.setToolTip("Save time and the ticked quantities of the ticked runs, "
                                   "in the units shown")
        self.csv_button.clicked.connect(self._ask_csv)
        buttons.addWidget(self.png_button)
        buttons.addWidget(self.csv_button)
        lay.addLayout(buttons)

        right = W.QSplitter(QtCore.Qt.Vertical, split)
        plot = W.QWidget(right)
        play = W.QVBoxLayout(plot)
        play.setContentsMargins(0, 0, 0, 0)
        self.figure = Figure(figsize=(8.0, 4.0), dpi=100, layout="constrained")
        self.canvas = FigureCanvasQTAgg(self.figure)
        self.canvas.setParent(plot)
        self.canvas.setMinimumSize(320, 200)
        self.canvas.setSizePolicy(W.QSizePolicy.Expanding, W.QSizePolicy.Expanding)
        self.toolbar = NavigationToolbar2QT(self.canvas, plot)
        self.toolbar.setIconSize(QtCore.QSize(18, 18))
        play.addWidget(self.toolbar)
        play.addWidget(self.canvas, 1)
        self.canvas.mpl_connect("button_press_event", self._on_press)
        self.canvas.mpl_connect("motion_notify_event", self._on_motion)
        self.canvas.mpl_connect("button_release_event", self._on_release)

        self.table = W.QTableWidget(right)
        self.table.setObjectName("values")
        self.table.setEditTriggers(W.QAbstractItemView.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.setAlternatingRowColors(True)
        self.table.setVerticalScrollMode(W.QAbstractItemView.ScrollPerPixel)
        rows = self.table.verticalHeader()
        rows.setDefaultSectionSize(self.table.fontMetrics().height() + 6)
        right.addWidget(plot)
        right.addWidget(self.table)
        right.setStretchFactor(0, 3)
        right.setStretchFactor(1, 1)

        split.addWidget(left)
        split.addWidget(right)
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        split.setSizes([280, 900])
        self._splitter = split

    # -- runs and quantities ------------------------------------------------------------------
    @property
    def runs(self):
        """The runs shown: [(name, Results)], the current one first."""
        return list(self._runs)

    def set_runs(self, runs):
        """Show ``runs`` (list of (name, Results)); keeps the ticked columns that still exist.

        Every run is ticked. The tree lists the columns of the first run.
        """
        self._runs = _unique_names(runs)
        self._updating = True
        try:
            self.run_list.clear()
            for name, results in self._runs:
                item = QtWidgets.QListWidgetItem(name, self.run_list)
                item.setFlags(item.flags() | QtCore.Qt.ItemIsUserCheckable)
                item.setCheckState(QtCore.Qt.Checked)
                meta = results.meta
                item.setToolTip(", ".join(f"{k} {meta[k]}" for k in
                                          ("method", "integrator", "step", "output_step",
                                           "end_time") if k in meta))
            known = set(self._columns())
            self._selected = [c for c in self._selected if c in known]
            self._fill_tree()
        finally:
            self._updating = False
        self._replot()

    def _columns(self):
        return self._runs[0][1].names if self._runs else []

    def _groups(self):
        """[(title, owner prefix, [column names])] for the tree: bodies, hinges, contacts,
        couplers, energy."""
        if not self._runs:
            return []
        results = self._runs[0][1]
        by_owner = {}
        for name in results.names[1:]:
            by_owner.setdefault(_owner(name), []).append(name)
        groups = [(b, b, by_owner.get(b, [])) for b in results.bodies]
        groups += [(h[len("hinge:"):] if h.startswith("hinge:") else h, h, by_owner.get(h, []))
                   for h in results.hinges]
        kinds = _element_kinds(results.names)
        listed = {g[1] for g in groups}
        for kind in ("contact", "coupler"):
            groups += [(o, o, by_owner.get(o, [])) for o, k in kinds.items()
                       if k == kind and o not in listed]
        groups.append(("Energy", "energy", by_owner.get("energy", [])))
        listed = {g[1] for g in groups}
        groups += [(o, o, cols) for o, cols in by_owner.items() if o not in listed]
        return [g for g in groups if g[2]]

    def _fill_tree(self):
        self.tree.clear()
        self._items = {}
        selected = set(self._selected)
        groups = self._groups()
        kinds = _element_kinds(self._columns())
        for title, owner, columns in groups:
            top = QtWidgets.QTreeWidgetItem(self.tree, [title, ""])
            top.setFlags(top.flags() & ~QtCore.Qt.ItemIsUserCheckable)
            top.setToolTip(0, owner)
            for name in columns:
                _factor, label = column_unit(name)
                item = QtWidgets.QTreeWidgetItem(top, [_short(name), label])
                item.setData(0, QtCore.Qt.UserRole, name)
                item.setFlags(item.flags() | QtCore.Qt.ItemIsUserCheckable)
                item.setCheckState(0, QtCore.Qt.Checked if name in selected
                                   else QtCore.Qt.Unchecked)
                text = _describe(name, kinds.get(owner))
                item.setToolTip(0, text)
                item.setToolTip(1, text)
                self._items[name] = item
            top.setExpanded(any(c in selected for c in columns))
        # wide enough for every name, also those of collapsed items (R11, closure_gap_rate)
        metrics = self.tree.fontMetrics()
        advance = getattr(metrics, "horizontalAdvance", None) or metrics.width
        names = [t for t, _o, _c in groups] + [_short(n) for n in self._items]
        widest = max((advance(n) for n in names), default=60)
        self.tree.setColumnWidth(0, widest + 2 * self.tree.indentation() + 34)

    def select(self, columns):
        """Tick exactly ``columns`` (e.g. ``["Piston.z", "MainBearing.Fx"]``) and plot them.

        Raises
        ------
        KeyError
            A name is no column of the current (first) run; nothing is changed then.
        """
        columns = list(columns)
        for name in columns:
            if name not in self._items:
                import difflib
                close = difflib.get_close_matches(name, list(self._items), n=3)
                hint = f"; did you mean {', '.join(close)}?" if close else ""
                raise KeyError(f"no column '{name}' in run '{self._runs[0][0]}'{hint}"
                               if self._runs else f"no column '{name}': there is no run")
        self._selected = list(dict.fromkeys(columns))
        self._updating = True
        try:
            chosen = set(self._selected)
            for name, item in self._items.items():
                item.setCheckState(0, QtCore.Qt.Checked if name in chosen else QtCore.Qt.Unchecked)
                if name in chosen:
                    item.parent().setExpanded(True)
        finally:
            self._updating = False
        self._replot()

    def selected(self):
        """The ticked columns, in the order they were ticked."""
        return list(self._selected)

    def checked_runs(self):
        """Names of the ticked runs."""
        return [self.run_list.item(i).text() for i in range(self.run_list.count())
                if self.run_list.item(i).checkState() == QtCore.Qt.Checked]

    def set_checked_runs(self, names):
        """Tick exactly the runs called ``names`` (KeyError for a name that is no run)."""
        names = list(names)
        known = [n for n, _ in self._runs]
        for n in names:
            if n not in known:
                raise KeyError(f"no run '{n}'; the runs are {', '.join(known)}")
        self._updating = True
        try:
            for i in range(self.run_list.count()):
                item = self.run_list.item(i)
                item.setCheckState(QtCore.Qt.Checked if item.text() in names
                                   else QtCore.Qt.Unchecked)
        finally:
            self._updating = False
        self._replot()

    def _shown_runs(self):
        checked = set(self.checked_runs())
        return [(k, name, results) for k, (name, results) in enumerate(self._runs)
                if name in checked]

    def _on_tree_item_changed(self, item, column):
        if self._updating or column != 0:
            return
        name = item.data(0, QtCore.Qt.UserRole)
        if not name:
            return
        if item.checkState(0) == QtCore.Qt.Checked:
            if name not in self._selected:
                self._selected.append(name)
        elif name in self._selected:
            self._selected.remove(name)
        self._replot()

    def _on_run_item_changed(self, _item):
        if not self._updating:
            self._replot()

    # -- the figure ---------------------------------------------------------------------------
    def _replot(self):
        """Draw the figure and rebuild the table (after a change of runs or quantities)."""
        fig = self.figure
        fig.clear()
        self._cursors = []
        self._axes_units = []
        runs = self._shown_runs()
        # one axes per SI unit, in the order of the ticked columns
        units = []
        for name in self._selected:
            u = unit_of(name)
            if u not in units:
                units.append(u)
        if not units or not runs:
            ax = fig.add_subplot(1, 1, 1)
            ax.text(0.5, 0.5, "Tick quantities (left) to plot them" if runs else
                    "No run ticked", ha="center", va="center", transform=ax.transAxes,
                    color="0.4", fontsize=10)
            ax.set_xticks([])
            ax.set_yticks([])
            self._fill_table([])
            self.canvas.draw_idle()
            return
        axes = fig.subplots(len(units), 1, sharex=True, squeeze=False)[:, 0]
        colors = [c["color"] for c in _color_cycle()]
        t_lo, t_hi = math.inf, -math.inf
        for ax, u in zip(axes, units):
            factor, label = display_unit(u)
            handles, lo, hi = [], math.inf, -math.inf
            for k, name in enumerate(self._selected):
                if unit_of(name) != u:
                    continue
                color = colors[k % len(colors)]
                for j, (_k, _run, results) in enumerate(runs):
                    if name not in results:
                        continue
                    t = results.time
                    if t.size:
                        t_lo, t_hi = min(t_lo, t[0]), max(t_hi, t[-1])
                    y = results.column(name) * factor
                    if y.size and np.isfinite(y).any():
                        lo, hi = min(lo, np.nanmin(y)), max(hi, np.nanmax(y))
                    ax.plot(t, y, color=color, linewidth=1.3,
                            linestyle=RUN_STYLES[j % len(RUN_STYLES)])
                handles.append(Line2D([], [], color=color, linewidth=1.6, label=name))
            _flat_limits(ax, lo, hi)
            # stacked axes are low: the unit alone; one or two axes have room for the kind
            ax.set_ylabel(f"{UNIT_KIND.get(u, u)} [{label}]" if len(units) <= 2 else label,
                          fontsize=9)
            ax.ticklabel_format(axis="y", useOffset=False)
            ax.tick_params(labelsize=8)
            ax.grid(True, alpha=0.35)
            legend = ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                               fontsize=8, frameon=False, borderaxespad=0.0)
            if ax is axes[0] and len(runs) > 1:
                ax.add_artist(legend)
                ax.legend(handles=[Line2D([], [], color="0.25", linewidth=1.3,
                                          linestyle=RUN_STYLES[j % len(RUN_STYLES)], label=run)
                                   for j, (_i, run, _r) in enumerate(runs)],
                          loc="lower left", bbox_to_anchor=(0.0, 1.01), ncol=len(runs),
                          fontsize=8, frameon=False, borderaxespad=0.0)
            cursor = ax.axvline(self._time, color="0.2", linewidth=0.9, zorder=5)
            self._cursors.append(cursor)
            self._axes_units.append(u)
        axes[-1].set_xlabel("time [s]", fontsize=9)
        if math.isfinite(t_lo) and t_hi > t_lo:
            axes[-1].set_xlim(t_lo, t_hi)
        self._fill_table(runs)
        self.toolbar.update()                  # the home view is the new plot
        self.canvas.draw_idle()

    @property
    def axes(self):
        """The figure's axes, top to bottom, and the SI unit each shows: [(Axes, unit)]."""
        return list(zip([c.axes for c in self._cursors], self._axes_units))

    # -- the table ----------------------------------------------------------------------------
    def _fill_table(self, runs):
        """One row per ticked run, one column per ticked quantity (compact in a bottom dock)."""
        table = self.table
        table.clear()
        columns = self._selected if runs else []
        table.setRowCount(len(runs))
        table.setColumnCount(1 + len(columns))
        self._table_columns = list(columns)
        header = QtWidgets.QTableWidgetItem("")
        header.setToolTip("The cursor time; values between output times are interpolated")
        table.setHorizontalHeaderItem(0, header)
        kinds = _element_kinds(self._columns())
        for c, name in enumerate(columns):
            _factor, label = column_unit(name)
            item = QtWidgets.QTableWidgetItem(f"{name} [{label}]")
            item.setToolTip(_describe(name, kinds.get(_owner(name))))
            table.setHorizontalHeaderItem(1 + c, item)
        self._table_data = []
        align = QtCore.Qt.AlignRight | QtCore.Qt.AlignVCenter
        for r, (_k, run, results) in enumerate(runs):
            table.setItem(r, 0, QtWidgets.QTableWidgetItem(run))
            for c, name in enumerate(columns):
                cell = QtWidgets.QTableWidgetItem("")
                cell.setTextAlignment(align)
                table.setItem(r, 1 + c, cell)
                if name in results:
                    factor, _label = column_unit(name)
                    self._table_data.append((cell, results.time, results.column(name) * factor))
        self._update_table()
        table.resizeColumnsToContents()
        # the cursor time's header changes as the cursor moves: room for the usual widest
        widest = table.horizontalHeader().fontMetrics().boundingRect("t = 0.01234 s").width() + 24
        if table.columnWidth(0) < widest:
            table.setColumnWidth(0, widest)
        # as tall as its rows (one per run), no taller: the rest is the plot's
        height = (table.horizontalHeader().sizeHint().height() + 2 * table.frameWidth()
                  + table.verticalHeader().defaultSectionSize() * max(1, len(runs))
                  + table.horizontalScrollBar().sizeHint().height())
        table.setMaximumHeight(height)
        table.setMinimumHeight(min(height, 3 * table.verticalHeader().defaultSectionSize()))

    def _update_table(self):
        t = self._time
        header = self.table.horizontalHeaderItem(0)
        if header is not None:
            header.setText(f"t = {t:.4g} s")
        for cell, times, values in self._table_data:
            if times.size and times[0] - 1e-12 <= t <= times[-1] + 1e-12:
                cell.setText(_format(float(np.interp(t, times, values))))
            else:
                cell.setText("")

    def table_values(self):
        """What the table shows: ``{column: {run: text}}`` (for tests and scripts)."""
        out = {name: {} for name in self._table_columns}
        for r in range(self.table.rowCount()):
            run = self.table.item(r, 0).text()
            for c, name in enumerate(self._table_columns):
                out[name][run] = self.table.item(r, 1 + c).text()
        return out

    # -- the cursor ---------------------------------------------------------------------------
    def time(self):
        """The cursor time (s)."""
        return self._time

    def set_time(self, t):
        """Move the cursor to time ``t`` (s) in every axes and show the values there in the table.

        Cheap (the player calls it for every frame): moves the cursor lines, refreshes the table's
        texts and asks for a redraw when Qt is idle. Values between output times are interpolated
        linearly. Does not emit :attr:`timeChanged`.
        """
        self._time = float(t)
        for line in self._cursors:
            line.set_xdata([self._time, self._time])
        self._update_table()
        if self._cursors:
            self.canvas.draw_idle()

    def _toolbar_busy(self):
        mode = getattr(self.toolbar, "mode", "")
        return bool(getattr(mode, "value", mode))      # zoom or pan is on

    def _time_from_event(self, event):
        if event.inaxes is None or event.xdata is None or self._toolbar_busy():
            return None
        return float(event.xdata)

    def _on_press(self, event):
        if getattr(event, "button", None) != 1:
            return
        t = self._time_from_event(event)
        if t is not None:
            self._dragging = True
            self._click(t)

    def _on_motion(self, event):
        if self._dragging:
            t = self._time_from_event(event)
            if t is not None:
                self._click(t)

    def _on_release(self, _event):
        self._dragging = False

    def _click(self, t):
        times = [r.time for _k, _n, r in self._shown_runs() if len(r)]
        if times:
            t = min(max(t, min(x[0] for x in times)), max(x[-1] for x in times))
        self.set_time(t)
        self.timeChanged.emit(self._time)

    # -- export -------------------------------------------------------------------------------
    def export_png(self, path, dpi=None):
        """Save the figure (with the cursor) as an image; the format follows the extension."""
        fmt = os.path.splitext(str(path))[1].lstrip(".").lower() or "png"
        with atomic_write(path, "wb") as fh:      # complete or not at all (issue 33)
            self.figure.savefig(fh, format=fmt, dpi=dpi or self.figure.dpi, facecolor="white")
        return str(path)

    def export_csv(self, path, units="display"):
        """Save time and the ticked columns of every ticked run as CSV.

        Parameters
        ----------
        path : str
        units : {"display", "si"}
            The units FreeCAD shows (default) or SI. The first line, a ``#`` comment, says which.

        The header row names each column with its unit: ``time [s]``, ``Upper.x [mm]`` (one run)
        or ``run: Upper.x [mm]`` (several runs). Runs on the same output times share the time
        column; otherwise each run has its own ``run: time [s]`` column and shorter runs leave
        their cells empty at the end. Numbers have 12 significant digits.
        """
        if units not in ("display", "si"):
            raise ValueError(f"units must be 'display' or 'si', not {units!r}")
        runs = self._shown_runs()
        columns = list(self._selected)

        def conv(name):
            if units == "si":
                return 1.0, unit_of(name).replace(" ", "*") if unit_of(name) != "1" else NO_UNIT
            return column_unit(name)

        shared = (len(runs) > 0 and all(len(r.time) == len(runs[0][2].time)
                                        and np.array_equal(r.time, runs[0][2].time)
                                        for _k, _n, r in runs))
        prefix = (lambda run: f"{run}: ") if len(runs) > 1 else (lambda run: "")
        header, series = [], []
        t_factor, t_label = conv("time")
        if shared:
            header.append(f"time [{t_label}]")
            series.append(runs[0][2].time * t_factor)
        for _k, run, results in runs:
            if not shared:
                header.append(f"{prefix(run)}time [{t_label}]")
                series.append(results.time * t_factor)
            for name in columns:
                if name not in results:
                    continue
                factor, label = conv(name)
                header.append(f"{prefix(run)}{name} [{label}]")
                series.append(results.column(name) * factor)
        if units == "si":
            note = "# MultibodyWB results: values in SI units (m, kg, s, N, rad)"
        else:
            note = (f"# MultibodyWB results: values in the units FreeCAD shows "
                    f"(unit schema: {schema_name()}), not SI")
        n = max((len(s) for s in series), default=0)
        with atomic_write(path, "w", newline="", encoding="utf-8") as fh:
            fh.write(note + "\n")
            writer = csv.writer(fh)
            writer.writerow(header)
            for i in range(n):
                writer.writerow([f"{s[i]:.12g}" if i < len(s) else "" for s in series])
        return str(path)

    def _ask(self, title, suffix, filters):
        start = os.path.join(os.path.expanduser("~"), self._default_name() + suffix)
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self, title, start, filters)
        if path and not os.path.splitext(path)[1]:
            path += suffix
        return path

    def _default_name(self):
        return (self._runs[0][1].model_name if self._runs else "") or "results"

    def _ask_png(self):
        path = self._ask("Export plot", ".png", "PNG image (*.png);;SVG (*.svg);;PDF (*.pdf)")
        if path:
            self._guarded(self.export_png, path)

    def _ask_csv(self):
        path = self._ask("Export values", ".csv", "CSV (*.csv)")
        if path:
            self._guarded(self.export_csv, path)

    def _guarded(self, action, path):
        try:
            action(path)
        except Exception as exc:           # shown to the user, not raised into Qt's event loop
            QtWidgets.QMessageBox.warning(self, "Multibody", f"Could not write {path}:\n{exc}")


def _flat_limits(ax, lo, hi):
    """Give a (nearly) constant curve a y range of its own: a variation below 1e-6 of the value
    (round-off, e.g. a conserved energy) would otherwise fill the axes as noise."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return
    size = max(abs(lo), abs(hi))
    if hi - lo <= 1e-6 * size or size == 0.0:
        pad = 0.05 * size if size > 0.0 else 1.0
        mid = 0.5 * (lo + hi)
        ax.set_ylim(mid - pad, mid + pad)


def _color_cycle():
    import matplotlib
    return list(matplotlib.rcParams["axes.prop_cycle"])


def show_plot_dock(runs, columns=None):
    """Show ``runs`` in the main window's plot dock ``MultibodyPlots`` and tick ``columns``.

    The dock and its :class:`PlotPanel` are made once and reused (its signal connections stay).
    ``columns`` None keeps the ticked columns that still exist, or ticks the first hinge's
    coordinate when none is ticked.

    Returns
    -------
    PlotPanel
    """
    mw = qt.main_window()
    dock = mw.findChild(QtWidgets.QDockWidget, DOCK_NAME)
    panel = dock.widget() if dock is not None else None
    new = not isinstance(panel, PlotPanel)
    if new:
        panel = PlotPanel(runs)
    else:
        panel.set_runs(runs)
    if columns is not None:
        panel.select(columns)
    elif not panel.selected() and runs:
        results = panel.runs[0][1]
        first = [n for n in results.names[1:] if results.hinges and
                 _owner(n) == results.hinges[0]][:1]
        if first:
            panel.select(first)
    new_dock = mw.findChild(QtWidgets.QDockWidget, DOCK_NAME) is None
    dock = qt.dock(DOCK_NAME, DOCK_TITLE, panel)
    report = mw.findChild(QtWidgets.QDockWidget, "Report view")
    if new_dock and report is not None and report.isVisible() and not report.isFloating() \
            and mw.dockWidgetArea(report) == mw.dockWidgetArea(dock):
        # beside the report view the plots would get half the width: a tab of their own
        mw.tabifyDockWidget(report, dock)
        dock.show()
        dock.raise_()
    if new and hasattr(mw, "resizeDocks"):
        mw.resizeDocks([dock], [max(320, int(mw.height() * 0.45))], QtCore.Qt.Vertical)
    return panel

