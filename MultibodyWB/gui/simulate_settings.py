"""The Simulate panel's settings (:mod:`.simulate_panel`): the mechanism's Simulation object
(:func:`simulation_of`), times read from and written to the fields (:func:`parse_time`,
:func:`format_time`: ``0.08 s``, ``0.1 ms``, ``10 us``), the settings checked as the solver would
before anything is changed (:func:`check_settings`), and the panel's part that shows, reads and
stores them (:class:`SettingsMixin`: one undo step, macro-recorded through
``FreeCADGui.doCommand``)."""

from __future__ import annotations

import math
import re

import FreeCAD
import FreeCADGui

from ..objects.mechanism import members
from ..objects.simulation import MODEL_ATTRIBUTES, TYPE as SIMULATION, setting
from ..solver.api import FIXED_STEP, ModelError

_QUANTITY_SETTINGS = ("EndTime", "Step", "OutputStep")
_FLOAT_SETTINGS = ("RelativeTolerance", "AbsoluteTolerance")

#: The Integrator box's tooltip: what each integrator is for.
INTEGRATOR_TIP = (
    "rk4: fixed-step Runge-Kutta, compiled\n"
    "euler: fixed-step semi-implicit (symplectic) Euler, compiled, one evaluation a step\n"
    "RK45, DOP853: adaptive Runge-Kutta with the tolerances below, compiled with mstmm "
    "(RK45 at 1e-10 keeps an impact's energy)\n"
    "trbdf2: implicit (TR-BDF2) at the fixed Step, compiled with mstmm: for stiff models "
    "(stiff springs, friction), stable at any step\n"
    "trbdf2-adaptive: the same with its step chosen by the tolerances below\n"
    "Radau, BDF, LSODA: scipy's adaptive integrators (the constrained method's for stiff "
    "models)")


def _ref(obj):
    return f"FreeCAD.getDocument({obj.Document.Name!r}).getObject({obj.Name!r})"


def simulation_of(mechanism):
    """The Simulation settings object of ``mechanism``, or None."""
    found = members(mechanism, SIMULATION)
    return found[0] if found else None


def format_time(seconds):
    """A time for a settings field: ``0.08 s``, ``1e-05 s``."""
    return f"{float(seconds):g} s"


#: Time units a settings field takes (FreeCAD's own quantity parser knows only s, min and h, and
#: reads "10 µs" as the plain number 10).
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "\u00b5s": 1e-6, "\u03bcs": 1e-6, "ns": 1e-9,
              "min": 60.0, "h": 3600.0}
_NUMBER_UNIT = re.compile(r"^([-+]?(?:\d+(?:[.,]\d*)?|[.,]\d+)(?:[eE][-+]?\d+)?)\s*(\S*)$")


def parse_time(field, text):
    """Seconds from a field's text: a number with a time unit (``0.08 s``, ``0.1 ms``,
    ``10 us``; see :data:`TIME_UNITS`) or a bare number (seconds); else a FreeCAD quantity
    expression in s. ValueError naming the field."""
    text = text.strip()
    problem = ValueError(f"Simulation, field {field}: '{text}' is not a time "
                         "(e.g. 0.08 s, 0.1 ms, 10 us)")
    if not text:
        raise ValueError(f"Simulation, field {field}: empty; give a time (e.g. 0.08 s)")
    match = _NUMBER_UNIT.match(text)
    if match is not None:
        number, unit = match.groups()
        if unit not in TIME_UNITS and unit != "":
            raise problem
        return float(number.replace(",", ".")) * TIME_UNITS.get(unit, 1.0)
    try:                                        # an expression: 1/100 s, 2 min + 30 s
        q = FreeCAD.Units.Quantity(text)
    except (ValueError, TypeError, ArithmeticError, RuntimeError):
        raise problem from None
    if q.Unit != FreeCAD.Units.Unit("s"):
        raise problem
    return float(q.getValueAs("s"))


def check_settings(values):
    """ValueError listing what the solver would refuse in the settings ``values`` (positive,
    finite times and tolerances; an output step a whole number of fixed steps; no more steps or
    output rows than a run can take), each naming the field; nothing is changed."""
    from types import SimpleNamespace

    from ..solver.api import Simulation, check_run_settings
    sim = Simulation()
    for name, value in values.items():
        setattr(sim, MODEL_ATTRIBUTES[name][0], value)
    try:
        # no bodies: the size of the results is checked again with the model's columns
        check_run_settings(SimpleNamespace(simulation=sim, bodies=(), hinges=()), None, None,
                           None, None, None)
    except ModelError as exc:
        raise ValueError("\n".join(str(p) for p in exc.problems)) from None


class SettingsMixin:
    """The Simulate panel's settings fields: shown from the Simulation object, read back (each
    problem naming its field) and stored in it. For :class:`~.simulate_panel.SimulatePanel`,
    which makes the fields (``method``, ``integrator``, ``quantity``, ``tolerance``) and has
    ``mechanism`` and ``doc``."""

    def _enable_tolerances(self, *_):
        adaptive = (self.integrator.currentText() not in FIXED_STEP
                    and self.method.currentText() != "newton-euler")
        for edit in self.tolerance.values():
            edit.setEnabled(adaptive)
        self.integrator.setEnabled(self.method.currentText() != "newton-euler")

    # -- settings --------------------------------------------------------------------------------
    def load_settings(self):
        """Show the Simulation object's settings (defaults if the mechanism has none)."""
        from ..solver.api import Simulation
        sim = simulation_of(self.mechanism)
        defaults = Simulation()
        if sim is not None:
            self.method.setCurrentText(sim.Method)
            self.integrator.setCurrentText(sim.Integrator)
        for name in _QUANTITY_SETTINGS:
            value = (setting(sim, name) if sim is not None else
                     getattr(defaults, MODEL_ATTRIBUTES[name][0]))
            self.quantity[name].setText(format_time(value))
        for name in _FLOAT_SETTINGS:
            value = (setting(sim, name) if sim is not None else
                     getattr(defaults, MODEL_ATTRIBUTES[name][0]))
            self.tolerance[name].setText(f"{value:g}")
        self._enable_tolerances()

    def settings(self):
        """The panel's settings as {property: value} (seconds, floats); ValueError if a number
        cannot be read, naming the field."""
        values = {"Method": self.method.currentText(),
                  "Integrator": self.integrator.currentText()}
        for name in _QUANTITY_SETTINGS:
            values[name] = parse_time(name, self.quantity[name].text())
        for name in _FLOAT_SETTINGS:
            text = self.tolerance[name].text().strip()
            try:
                values[name] = float(text)
            except ValueError:
                raise ValueError(f"Simulation, field {name}: '{text}' is not a number") from None
        return values

    def set_settings(self, **values):
        """Set panel fields (tests, scripts): Method, Integrator, EndTime... (seconds)."""
        for name, value in values.items():
            if name in ("Method", "Integrator"):
                getattr(self, name.lower()).setCurrentText(value)
            elif name in self.quantity:
                self.quantity[name].setText(format_time(value))
            else:
                self.tolerance[name].setText(f"{value:g}")

    def store_settings(self, values):
        """Write changed settings to the Simulation object (one undo step, macro-recorded);
        make the Simulation object first if the mechanism has none."""
        sim = simulation_of(self.mechanism)
        changes = []
        for name, value in values.items():
            if sim is not None:
                old = setting(sim, name)
                if old == value or (isinstance(value, float) and math.isclose(
                        old, value, rel_tol=1e-12, abs_tol=0.0)):
                    continue
            text = (f"'{value!r} s'" if name in _QUANTITY_SETTINGS else
                    f"'{value!r}'" if name in _FLOAT_SETTINGS else repr(value))
            changes.append(f"sim.{name} = {text}")
        if sim is not None and not changes:
            return
        if sim is None:
            FreeCADGui.addModule("MultibodyWB.document.factory")
            first = (f"sim = MultibodyWB.document.factory.make_simulation({_ref(self.mechanism)}"
                     f".Document, {_ref(self.mechanism)})")
        else:
            first = f"sim = {_ref(sim)}"
        self.doc.openTransaction("Simulation settings")
        try:
            for statement in [first] + changes:
                FreeCADGui.doCommand(statement)
        except Exception:
            self.doc.abortTransaction()
            raise
        self.doc.commitTransaction()
