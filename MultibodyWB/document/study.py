"""Design studies of a mechanism in its document (issue 15), without Qt.

A Study object (:mod:`MultibodyWB.objects.study`) names document properties and spreadsheet cells
(``Spreadsheet.LinkLength = 80 mm : 120 mm : 5``); the solver varies them
(:func:`MultibodyWB.solver.study.run_study`), and this module is the factory that turns each
variant's values into a neutral model:

1. :func:`parameters` resolves every row to its object and property (or a spreadsheet's cell)
   and reads its values; every problem (an unknown object or property, a value of the wrong
   unit, a property an expression sets) names the row and the field, all at once, before any
   run (:class:`~MultibodyWB.solver.study.StudyError`);
2. :class:`Variants` sets a variant's values in the document (a property through its unit; a
   cell by ``sheet.set``), recomputes (the shapes follow, and with them the bodies' mass
   properties and the markers picked on them) and exports the mechanism
   (:func:`MultibodyWB.objects.export.collect`); the solver's workers run the FreeCAD-free model;
   :meth:`Variants.restore` puts every original value back (a cell's very contents) and
   recomputes: a study leaves the document as it found it;
3. :func:`store_table` keeps the table (one undo step), :func:`stored_table` reads it back and
   :func:`apply_variant` writes a variant's values into the document as one undo step.

Values: the solver's parameters are SI (m, kg, s, rad, and their products: FreeCAD's internal mm
and deg converted by the unit's dimension, :func:`si_factor`); the table keeps them so, with the SI
unit of each column (``Units``); :func:`shown` gives them in the user's unit schema.

Threads: the document may be changed only on FreeCAD's GUI thread. :func:`run` does everything
in the calling thread (macros, tests); the task panel runs the solver in a thread of its own and
hands :func:`execute` an ``on_gui`` function that has each variant made on the GUI thread.
"""

from __future__ import annotations

import contextlib
import csv
import io
import math
import os
import re
import tempfile
from dataclasses import dataclass, field
from typing import Callable, Optional

import FreeCAD

from ..objects import export, units
from ..objects.base import is_text_quantity, type_of
from ..objects.mechanism import mechanism_of
from ..solver.api import (FORCE_TYPES, VARIANT_FAILED as FAILED, VARIANT_OK as OK,
                          MultibodySystem, Parameter, Problem, Study, StudyError, check_study,
                          run_study)

#: FreeCAD's preferences of the workbench: ``StudyScheduler`` (a string) is the Dask scheduler of
#: the studies whose own ``Scheduler`` is empty (empty too: a local cluster).
PREFERENCES = "User parameter:BaseApp/Preferences/Mod/MultibodyWB"

#: Undo step names.
TRANSACTION_TABLE = "Design study results"
TRANSACTION_APPLY = "Apply study variant"

#: FreeCAD's internal value of one SI unit of each base dimension (FreeCAD's Unit.Signature order:
#: length, mass, time, current, temperature, amount, luminous intensity, angle).
_INTERNAL_PER_SI = (1000.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 180.0 / math.pi)
_SI_NAMES = ("m", "kg", "s", "A", "K", "mol", "cd", "rad")

#: Object Type -> (property name pattern, the switch that makes it count, the switch's value
#: then): a parameter on a property its switch makes unused would change nothing.
SWITCHES = {
    "Multibody::Hinge": ((r"Initial(?!Rate)[A-Z][a-z]?", "InitialAsDrawn", False),
                         (r"SpringReference[A-Z][a-z]?", "SpringReferenceAsDrawn", False),
                         (r"(Lower|Upper)Limit.*|Stop.*", "UseLimits", True)),
}

_NUMERIC = {"App::PropertyFloat": "float", "App::PropertyFloatConstraint": "float",
            "App::PropertyPrecision": "float", "App::PropertyPercent": "integer",
            "App::PropertyInteger": "integer", "App::PropertyIntegerConstraint": "integer"}


# --------------------------------------------------------------------------------------------------
# Units
# --------------------------------------------------------------------------------------------------

def _signature(unit):
    return tuple(int(e) for e in unit.Signature)


def si_factor(unit) -> float:
    """FreeCAD's internal value of one SI unit of the dimension of ``unit`` (a
    ``FreeCAD.Units.Unit``): 1000 for a length (mm), 1e-9 for a density (kg/mm^3), 180/pi for an
    angle (deg)."""
    f = 1.0
    for k, e in zip(_INTERNAL_PER_SI, _signature(unit)):
        f *= k ** e
    return f


def si_unit_text(unit) -> str:
    """The SI unit of the dimension of ``unit``: ``"m"``, ``"kg/m^3"``, ``"kg/s^2"``; ``"1"``
    for a number."""
    num, den = [], []
    for name, e in zip(_SI_NAMES, _signature(unit)):
        if e:
            part = name + (f"^{abs(e)}" if abs(e) != 1 else "")
            (num if e > 0 else den).append(part)
    if not num and not den:
        return "1"
    text = "*".join(num) or "1"
    if den:
        text += "/" + ("*".join(den) if len(den) == 1 else "(" + "*".join(den) + ")")
    return text


def shown(value, si_unit, digits=6):
    """``value`` in the SI unit ``si_unit`` as every view shows it
    (:func:`MultibodyWB.objects.units.si_text`): ``shown(0.08, "m") == "80 mm"``, a rotational
    stiffness ``"2 N·m/rad"`` (not ``mm^2*kg/(s^2*deg)``)."""
    if si_unit in ("", "1"):
        return f"{value:.{digits}g}"
    try:
        return units.si_text(value, si_unit, digits)
    except Exception:       # a unit FreeCAD's parser does not take: SI
        return f"{value:.{digits}g} {si_unit}"


def display_scale(si_unit, sample):
    """(factor, label) of the column of a unit: shown value = SI value * factor, in the unit
    every view shows ``sample`` (an SI value of the column) in
    (:func:`MultibodyWB.objects.units.preferred`)."""
    if si_unit in ("", "1", None):
        return 1.0, ""
    try:
        return units.preferred(si_unit, sample if sample and math.isfinite(sample) else 1.0)
    except Exception:
        return 1.0, si_unit


def objective_unit(text):
    """The SI unit of an objective's value (``"N m"``), None when it has no single one."""
    from ..solver.api import Expression, ExpressionError, unit_of
    try:
        return Expression(text).unit(unit_of)
    except ExpressionError:
        return None


def objective_scales(kept):
    """(factor, label) of each objective of the stored table ``kept``, as :func:`display_scale`
    shows its first value: ``rms(Crank.rz_drive)`` in ``N·m``, ``max(Slider.z)`` in ``mm``;
    ``(1.0, "")`` for an expression of no single unit (``max(A.z) * max(B.Fx)``)."""
    out = []
    for k, text in enumerate(kept.objectives):
        si = objective_unit(text)
        sample = next((r.objectives[k] for r in kept.rows
                       if k < len(r.objectives) and math.isfinite(r.objectives[k])
                       and r.objectives[k]), 1.0)
        out.append(display_scale(si, sample) if si else (1.0, ""))
    return out


def margin_scales(kept):
    """(factor, label) of each constraint's margin in the stored table ``kept``: in the unit its
    bound is written in (``max(Piston.z) <= 50 mm``: mm), else as its expression's unit shows."""
    from ..solver.api import OBJECTIVE_UNITS as UNITS, ExpressionError, parse_constraint, unit_of
    out = []
    for k, text in enumerate(kept.constraints):
        try:
            c = parse_constraint(text)
        except ExpressionError:
            out.append((1.0, ""))
            continue
        if c.written_unit in UNITS and c.written_unit not in ("1",):
            f = UNITS[c.written_unit][0]
            out.append((1.0 / f, c.written_unit))
            continue
        si = c.expression.unit(unit_of)
        sample = next((r.margins[k] for r in kept.rows
                       if k < len(r.margins) and math.isfinite(r.margins[k]) and r.margins[k]),
                      1.0)
        out.append(display_scale(si, sample) if si else (1.0, ""))
    return out


# --------------------------------------------------------------------------------------------------
# Parameters: a document property or a spreadsheet cell
# --------------------------------------------------------------------------------------------------

@dataclass
class Target:
    """What a parameter row names: a property of ``obj`` or a cell of the spreadsheet ``obj``.

    ``kind``: ``"cell"``, ``"quantity"`` (an ``App::PropertyQuantity`` and its kin), ``"text"`` (a
    Multibody quantity kept as a text with its unit), ``"magnitude"`` (a force's magnitude, an
    expression in t in N or N m, which a study sets to a number), ``"float"``, ``"integer"``.
    ``unit`` is its FreeCAD unit, ``bare`` the internal value of a bare number typed for it.
    """

    path: str
    obj: object
    name: str                       #: property name or cell address
    kind: str
    unit: object
    bare: float = 1.0
    text_unit: str = ""             #: a text quantity's unit
    original: object = None         #: the value (or a cell's contents) before the study

    @property
    def si_unit(self) -> str:
        return si_unit_text(self.unit)

    def internal(self) -> float:
        """The current value in FreeCAD's internal units."""
        if self.kind == "cell":
            v = self.obj.get(self.name)
        elif self.kind == "text":
            return units.parse(getattr(self.obj, self.name), self.text_unit)
        elif self.kind == "magnitude":
            try:
                return float(getattr(self.obj, self.name)) * si_factor(self.unit)
            except ValueError:
                return math.nan             # an expression in t
        else:
            v = getattr(self.obj, self.name)
        return float(getattr(v, "Value", v))

    def set_si(self, value: float) -> None:
        """Write ``value`` (SI) into the document (no recompute)."""
        internal = float(value) * si_factor(self.unit)
        if self.kind == "cell":
            text = (str(FreeCAD.Units.Quantity(internal, self.unit)) if any(_signature(self.unit))
                    else repr(internal))
            self.obj.set(self.name, text)
        elif self.kind == "quantity":
            setattr(self.obj, self.name, FreeCAD.Units.Quantity(internal, self.unit))
        elif self.kind == "magnitude":
            setattr(self.obj, self.name, repr(float(value)))
        elif self.kind == "text":
            number = repr(internal / units.factor(self.text_unit))
            setattr(self.obj, self.name, f"{number} {self.text_unit}".strip())
        elif self.kind == "integer":
            setattr(self.obj, self.name, int(round(internal)))
        else:
            setattr(self.obj, self.name, internal)

    def restore(self) -> None:
        """Put the value (a cell's contents) back as it was when the target was resolved."""
        if self.kind == "cell":
            if self.obj.getContents(self.name) != self.original:
                self.obj.set(self.name, self.original)
        elif getattr(self.obj, self.name) != self.original:
            setattr(self.obj, self.name, self.original)

    def read(self, text: str) -> float:
        """A value typed for this target (``"80 mm"``; a bare number in the unit the property
        shows) in SI; ValueError saying what is expected."""
        text = text.strip()
        if self.kind == "text":
            internal = units.parse(text, self.text_unit)
        else:
            internal = _parse_quantity(text, self.unit, self.bare)
        return internal / si_factor(self.unit)


def _parse_quantity(text, unit, bare):
    kind = f"a quantity in {si_unit_text(unit)}" if any(_signature(unit)) else "a number"
    problem = ValueError(f"'{text}' is not {kind}")
    if not text:
        raise ValueError(f"empty: give {kind}")
    match = units._NUMBER_UNIT.match(text)
    if match is not None:
        number, written = match.groups()
        if not written:
            return float(number.replace(",", ".")) * bare
        if written in units.TIME_UNITS:
            if unit != units.unit("s"):
                raise problem
            return float(number.replace(",", ".")) * units.TIME_UNITS[written]
    try:
        q = FreeCAD.Units.Quantity(text)
    except Exception:       # FreeCAD's parser raises its own errors
        raise problem from None
    if q.Unit != unit:
        raise problem
    return float(q.Value)


def _find_object(doc, ident):
    obj = doc.getObject(ident)
    if obj is None:
        found = doc.getObjectsByLabel(ident)
        obj = found[0] if found else None
    return obj


def resolve(doc, path: str) -> Target:
    """The :class:`Target` of ``OBJECT.PROPERTY`` (a Name or Label; a property, or a
    spreadsheet's alias or cell address) in ``doc``.

    Raises
    ------
    KeyError
        ``("Object" or "Property", message)``: what is wrong and with which part.
    """
    ident, dot, name = path.strip().rpartition(".")
    ident, name = ident.strip(), name.strip()
    if not dot or not ident or not name:
        raise KeyError(("Object", f"'{path}' is not OBJECT.PROPERTY (a Name or Label, a "
                                  "property or a spreadsheet alias)"))
    obj = _find_object(doc, ident)
    if obj is None:
        raise KeyError(("Object", f"the document has no object named or labelled '{ident}'"))
    if obj.TypeId == "Spreadsheet::Sheet" and name not in obj.PropertiesList:
        return _cell_target(path, obj, name)
    if name not in obj.PropertiesList:
        numeric = [p for p in obj.PropertiesList if _kind(obj, p)[0] is not None
                   and p not in ("Version",)]
        raise KeyError(("Property", f"'{obj.Label}' has no property '{name}'"
                                    + (f"; its numeric ones are {', '.join(numeric[:12])}"
                                       + (" ..." if len(numeric) > 12 else "") if numeric
                                       else "")))
    kind, unit, bare, text_unit = _kind(obj, name)
    if kind is None:
        raise KeyError(("Property", f"'{obj.Label}.{name}' is not a number "
                                    f"({obj.getTypeIdOfProperty(name)})"))
    bound = [e for p, e in getattr(obj, "ExpressionEngine", []) if p == name]
    if bound:
        raise KeyError(("Property", f"'{obj.Label}.{name}' is set by the expression "
                                    f"'{bound[0]}': vary what it is computed from"))
    if "ReadOnly" in obj.getPropertyStatus(name) or "Output" in obj.getPropertyStatus(name):
        raise KeyError(("Property", f"'{obj.Label}.{name}' is read-only (a computed value)"))
    if type_of(obj) is not None and "Hidden" in obj.getEditorMode(name):
        raise KeyError(("Property", f"'{obj.Label}.{name}' is not used by this "
                                    f"{obj.Proxy.KIND.lower()} (its type has no such field)"))
    for pattern, switch, used in SWITCHES.get(type_of(obj), ()):
        if re.fullmatch(pattern, name) and bool(getattr(obj, switch, used)) != used:
            raise KeyError(("Property", f"'{obj.Label}.{name}' counts only when {switch} is "
                                        f"{str(used).lower()}: set it first"))
    return Target(path.strip(), obj, name, kind, unit, bare, text_unit, getattr(obj, name))


def _kind(obj, name):
    """(kind, unit, bare factor, text unit) of a property; kind None when it is no number."""
    type_id = obj.getTypeIdOfProperty(name)
    proxy = getattr(obj, "Proxy", None)
    prop = None
    if type_of(obj) is not None:
        try:
            prop = proxy.prop(name)
        except (KeyError, AttributeError):
            prop = None
    if type_of(obj) == "Multibody::Force" and name == "Magnitude":
        # an expression in t, in N or N m: a study writes a number there
        kind = FORCE_TYPES.get(obj.ForceType)
        si = kind.units.get("magnitude") if kind is not None and "magnitude" in kind.fields \
            else None
        if si is None:
            return None, None, 1.0, ""
        unit = units.unit(units.model_unit(si))
        return "magnitude", unit, si_factor(unit), ""
    if prop is not None and is_text_quantity(prop) and not prop.vector:
        return "text", units.unit(prop.unit), units.factor(prop.unit), prop.unit
    value = getattr(obj, name, None)
    if isinstance(value, FreeCAD.Units.Quantity):
        bare = units.factor(prop.unit) if prop is not None and prop.unit else 1.0
        return "quantity", value.Unit, bare, ""
    if type_id in _NUMERIC and isinstance(value, (int, float)) and not isinstance(value, bool):
        return _NUMERIC[type_id], FreeCAD.Units.Unit(), 1.0, ""
    return None, None, 1.0, ""


def _cell_target(path, sheet, name):
    cell = None
    try:
        cell = sheet.getCellFromAlias(name)
    except Exception:       # not an alias
        cell = None
    if not cell:
        if re.fullmatch(r"[A-Za-z]{1,2}[0-9]{1,5}", name):
            cell = name.upper()
        else:
            raise KeyError(("Property", f"spreadsheet '{sheet.Label}' has no alias '{name}' "
                                        "(nor such a property)"))
    try:
        value = sheet.get(cell)
    except Exception:       # an empty cell
        value = None
    if isinstance(value, FreeCAD.Units.Quantity):
        unit = value.Unit
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        unit = FreeCAD.Units.Unit()
    else:
        raise KeyError(("Property", f"cell {cell} ('{name}') of spreadsheet '{sheet.Label}' holds "
                                    f"no number ({sheet.getContents(cell)!r})"))
    return Target(path.strip(), sheet, cell, "cell", unit, 1.0, "", sheet.getContents(cell))


@dataclass
class StudyParameter:
    """A resolved parameter row: its :class:`Target` and the solver's :class:`Parameter` (SI)."""

    row: int
    text: str
    target: Target
    parameter: Parameter


def parse_row(doc, k: int, text: str):
    """Row ``k`` (from 1) of ``Parameters``: a :class:`StudyParameter`, or the list of its
    problems (each naming the row and the field: Row, Object, Property, Low, High, Levels,
    Values)."""
    path, eq, spec = text.partition("=")
    path, spec = path.strip(), spec.strip()
    where = f"Parameter {k} ({path or text.strip()})"
    if not eq or not path or not spec:
        return [Problem(where, "Row", f"'{text.strip()}': expected OBJECT.PROPERTY = LOW : HIGH "
                                      ": LEVELS or OBJECT.PROPERTY = V1, V2, ...")]
    try:
        target = resolve(doc, path)
    except KeyError as exc:
        fld, message = exc.args[0]
        return [Problem(where, fld, message)]
    problems = []

    def value(fld, part):
        try:
            return target.read(part)
        except ValueError as exc:
            problems.append(Problem(where, fld, str(exc)))
            return math.nan
    if ":" in spec:
        parts = [p.strip() for p in spec.split(":")]
        if len(parts) not in (2, 3):
            return [Problem(where, "Row", f"'{spec}': a range is LOW : HIGH or LOW : HIGH : "
                                          "LEVELS")]
        low, high = value("Low", parts[0]), value("High", parts[1])
        levels = 0
        if len(parts) == 3:
            try:
                levels = int(parts[2])
            except ValueError:
                problems.append(Problem(where, "Levels", f"'{parts[2]}' is not a whole number"))
        if not problems and not low < high:
            problems.append(Problem(where, "High", f"{parts[1]} is not above {parts[0]} (the "
                                                   "low end comes first)"))
        parameter = Parameter(path, low, high, levels)
    else:
        parts = [p.strip() for p in spec.replace(";", ",").split(",") if p.strip()]
        values = tuple(value("Values", p) for p in parts)
        parameter = Parameter(path, values=values)
    if problems:
        return problems
    return StudyParameter(k, text, target, parameter)


def mechanism_of_study(study_obj):
    mechanism = mechanism_of(study_obj)
    if mechanism is None:
        raise StudyError([Problem(f"Study '{study_obj.Label}'", "Mechanism",
                                  "the study belongs to no mechanism")])
    return mechanism


def parameters(study_obj) -> list:
    """Every row of ``study_obj.Parameters`` resolved (:func:`parse_row`); StudyError listing the
    problems of all rows."""
    doc = study_obj.Document
    found, problems = [], []
    seen = {}
    rows = [r for r in study_obj.Parameters if r.strip()]
    for k, text in enumerate(rows, 1):
        got = parse_row(doc, k, text)
        if isinstance(got, list):
            problems += got
            continue
        key = (got.target.obj.Name, got.target.name)
        if key in seen:
            problems.append(Problem(f"Parameter {k} ({got.parameter.path})", "Object",
                                    f"the same value as parameter {seen[key]}"))
        seen[key] = k
        found.append(got)
    if not rows:
        problems.append(Problem("Parameters", "Parameters", "the study has no parameter"))
    if problems:
        raise StudyError(problems)
    return found


def solver_study(study_obj, params) -> Study:
    """The solver's :class:`~MultibodyWB.solver.study.Study` of ``study_obj``."""
    return Study([p.parameter for p in params],
                 [o.strip() for o in study_obj.Objectives if o.strip()],
                 [c.strip() for c in study_obj.Constraints if c.strip()],
                 method=str(study_obj.Method), samples=int(study_obj.Samples),
                 seed=int(study_obj.Seed), max_evaluations=int(study_obj.MaxEvaluations),
                 tolerance=float(study_obj.Tolerance), population=int(study_obj.Population))


# --------------------------------------------------------------------------------------------------
# Variants: values into the document, the document out as a model
# --------------------------------------------------------------------------------------------------

class Variants:
    """Make the variants of ``params`` from the mechanism's document and put it back after.

    :meth:`make` sets the values (SI), recomputes and exports; a variant the document cannot make
    (a recompute error, a model with problems) gives a model that cannot run and its error in
    :attr:`errors` (by variant number: the solver asks for the variants in order), which
    :meth:`patch` writes into the row. :meth:`restore` puts the original values back and
    recomputes.
    """

    def __init__(self, mechanism, params):
        self.mechanism = mechanism
        self.doc = mechanism.Document
        self.params = params
        self.errors = {}
        self.made = 0
        self.changed = False

    def set(self, values) -> None:
        for p, v in zip(self.params, values):
            p.target.set_si(v)
        self.changed = True
        self.doc.recompute()

    def model(self) -> MultibodySystem:
        """The mechanism exported as it is now; ModelError (with every problem) if it cannot
        be, or if an object failed to recompute."""
        broken = [o for o in self.doc.Objects if "Invalid" in o.State or "Error" in o.State]
        if broken:
            raise export.ModelError([Problem(f"'{o.Label}'", "Shape", "the recompute failed")
                                     for o in broken[:5]])
        result = export.collect(self.mechanism)
        if result.object_problems:
            raise export.ModelError(result.problems)
        return result.model

    def make(self, values) -> MultibodySystem:
        """The model of the variant with ``values`` (SI, one per parameter)."""
        index = self.made
        self.made += 1
        try:
            self.set(values)
            return self.model()
        except Exception as exc:  # noqa: BLE001 - recorded on the variant, the study goes on
            text = "; ".join(str(p) for p in getattr(exc, "problems", [])[:3]) or \
                f"{type(exc).__name__}: {exc}"
            self.errors[index] = f"the document could not make this variant: {text}"
            return MultibodySystem("unmade variant")       # fails at once on the worker

    def patch(self, row) -> None:
        """Write the export error of a variant the document could not make into its row."""
        if row.index in self.errors:
            row.status, row.error = FAILED, self.errors[row.index]

    def restore(self) -> None:
        """Every original value back, then a recompute (only when something was set)."""
        if not self.changed:
            return
        for p in self.params:
            p.target.restore()
        self.doc.recompute()
        self.changed = False


def variant_model(study_obj, values, paths=None) -> MultibodySystem:
    """The neutral model of the variant with ``values`` (SI, one per parameter of the study's
    rows, or of ``paths``: a stored table's); the document is put back afterwards. ModelError
    if the document cannot make it, ValueError if a path no longer resolves."""
    if paths is None:
        params = parameters(study_obj)
    else:
        params = [StudyParameter(k, path, _resolved(study_obj, path), None)
                  for k, path in enumerate(paths, 1)]
    variants = Variants(mechanism_of_study(study_obj), params)
    try:
        variants.set(values)
        return variants.model()
    finally:
        variants.restore()


# --------------------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------------------

@dataclass
class Prepared:
    """A study checked and ready to run (:func:`prepare`)."""

    study_obj: object
    mechanism: object
    params: list
    study: Study
    model: MultibodySystem
    columns: list
    variants: Variants
    units: list = field(default_factory=list)

    @property
    def scheduler(self) -> Optional[str]:
        """The study's scheduler, else the preferences' (None: a local cluster)."""
        return str(self.study_obj.Scheduler).strip() or preferred_scheduler()

    @property
    def workers(self) -> Optional[int]:
        return int(self.study_obj.Workers) or None


def prepare(study_obj) -> Prepared:
    """Check the study and export the base model (on the GUI thread: it reads the document).

    Raises
    ------
    StudyError
        Every problem of the rows, the objectives, the constraints and the method, each naming
        its row and field; or the base model's problems.
    """
    from ..solver.api import probe_columns
    mechanism = mechanism_of_study(study_obj)
    problems = []
    try:
        params = parameters(study_obj)
    except StudyError as exc:
        problems += exc.problems
        params = []
    study = solver_study(study_obj, params)
    result = export.collect(mechanism)
    if result.object_problems:
        raise StudyError(problems + [Problem("Model", "Model", "the mechanism has problems: "
                                             + "; ".join(str(p) for p in result.problems[:5]))])
    model = result.model
    try:
        columns = probe_columns(model, study.settings)
    except export.ModelError as exc:
        raise StudyError(problems + [Problem("Model", "Model", "the mechanism does not run: "
                                             + "; ".join(str(p) for p in exc.problems[:5]))])
    named_by_labels(study, study_obj.Document, columns)
    checked = study                 # the solver checks the ranges, levels and the rest
    if not params:                  # the rows have problems: the rest is checked all the same
        checked = solver_study(study_obj, [])
        named_by_labels(checked, study_obj.Document, columns)
        checked.parameters = [Parameter("row", 0.0, 1.0, 2)]
    try:
        check_study(model, checked, columns, paths=False)
    except StudyError as exc:
        problems += [p for p in exc.problems
                     if not (problems and p.field == "Parameters")]
    from ..solver.api import executor_problems
    scheduler = str(study_obj.Scheduler).strip() or preferred_scheduler()
    problems += [Problem(f"Study '{study_obj.Label}'", p.field, p.message)
                 for p in executor_problems(scheduler, None if scheduler
                                            else int(study_obj.Workers))]
    if problems:
        raise StudyError(problems)
    return Prepared(study_obj, mechanism, params, study, model, columns,
                    Variants(mechanism, params), [p.target.si_unit for p in params])


def named_by_labels(study: Study, doc, columns) -> None:
    """Objectives and constraints of ``study`` that name elements by their object Names
    (``rms(Hinge001.rz_drive)``) rewritten with the labels the result columns (and the plot
    dock) use (``rms(Crank – Ground revolute.rz_drive)``); the rest as written."""
    from ..solver.api import rename_columns as rename
    aliases = {o.Name: o.Label for o in doc.Objects if o.Name != o.Label}
    study.objectives = [rename(t, columns, aliases) for t in study.objectives]
    study.constraints = [rename(t, columns, aliases) for t in study.constraints]


def preferred_scheduler() -> Optional[str]:
    """The Dask scheduler address of the preferences (:data:`PREFERENCES`), or None."""
    return FreeCAD.ParamGet(PREFERENCES).GetString("StudyScheduler", "").strip() or None


def default_executor(prepared):
    """A :class:`~MultibodyWB.solver.study.executors.DaskExecutor` on the study's scheduler (else
    the preferences', :func:`preferred_scheduler`; an embedded LocalCluster when neither names
    one) with its number of workers."""
    from ..solver.api import DaskExecutor
    return DaskExecutor(prepared.scheduler, prepared.workers)


def execute(prepared: Prepared, executor=None, progress: Callable = None,
            cancel: Callable = None, on_gui: Callable = None):
    """Run the study (:func:`~MultibodyWB.solver.study.run_study`); any thread.

    ``executor``: None makes :func:`default_executor`'s and closes it at the end (a given one is
    left to its owner). ``on_gui(function)`` calls ``function()`` on the GUI thread and returns
    its result (None: here). The document is left with the last variant's values: :func:`finish`
    restores it.
    """
    variants = prepared.variants

    def factory(values):
        if on_gui is None:
            return variants.make(values)
        return on_gui(lambda: variants.make(values))

    def report(done, total, row):
        variants.patch(row)
        if progress is not None:
            progress(done, total, row)
    own = executor is None
    if own:
        executor = default_executor(prepared)
    try:
        table = run_study(prepared.model, prepared.study, factory=factory, executor=executor,
                          progress=report, cancel=cancel, columns=prepared.columns)
    finally:
        if own:
            executor.close()             # a local cluster ends with the study
    for row in table.rows:
        variants.patch(row)
    table.units = list(prepared.units)
    return table


def finish(prepared: Prepared, table=None):
    """Put the document back as it was and store ``table`` (when given) as one undo step."""
    prepared.variants.restore()
    if table is not None:
        store_table(prepared.study_obj, table)


#: (document, study) -> the table a GUI run stored inside :func:`recorded_run` (or None).
_recording = {}


@contextlib.contextmanager
def recorded_run(study_obj, table):
    """A block in which ``run(study_obj)`` returns ``table`` at once: the task panel ran the
    study in the background and stored ``table``, then records the macro line
    ``MultibodyWB.document.study.run(study)`` with ``FreeCADGui.doCommand``, which also executes
    it. Replaying the macro later runs the study."""
    key = (study_obj.Document.Name, study_obj.Name)
    _recording[key] = table
    try:
        yield
    finally:
        _recording.pop(key, None)


def run(study_obj, executor=None, progress=None, cancel=None):
    """Check, run and store the study ``study_obj`` in this thread; return its StudyTable.

    The document ends as it started, but for the study's table (one undo step,
    :data:`TRANSACTION_TABLE`). ``executor``: default the study's Dask cluster
    (:func:`default_executor`). Raises StudyError before any run if the study is not valid.
    Inside :func:`recorded_run`, the table the panel stored.
    """
    recorded = _recording.get((study_obj.Document.Name, study_obj.Name))
    if recorded is not None:
        return recorded
    prepared = prepare(study_obj)
    table = None
    try:
        table = execute(prepared, executor, progress, cancel)
    finally:
        finish(prepared, table)
    return table


# --------------------------------------------------------------------------------------------------
# The stored table
# --------------------------------------------------------------------------------------------------

def table_csv(table) -> str:
    """The CSV text of the solver's ``StudyTable.to_csv``."""
    folder = tempfile.mkdtemp(prefix="mbwb-study-")
    path = os.path.join(folder, "study.csv")
    try:
        table.to_csv(path)
        with open(path, encoding="utf-8") as f:
            return f.read()
    finally:
        try:
            os.remove(path)
            os.rmdir(folder)
        except OSError:
            pass


def store_table(study_obj, table) -> None:
    """Keep ``table`` in ``study_obj`` (Table, Units, Summary, Best) as one undo step."""
    doc = study_obj.Document
    text = table_csv(table)
    own = bool(doc.UndoMode) and not doc.HasPendingTransaction
    if own:
        doc.openTransaction(TRANSACTION_TABLE)
    try:
        study_obj.Table = text
        study_obj.Units = list(table.units)
        study_obj.Summary = table.summary()
        best = table.best
        study_obj.Best = best.index if best is not None else -1
    except BaseException:
        if own:
            doc.abortTransaction()
        raise
    if own:
        doc.commitTransaction()


@dataclass
class StoredRow:
    """One variant of a stored table (SI values)."""

    index: int
    values: tuple
    objectives: tuple
    constraints: tuple
    margins: tuple
    feasible: bool
    status: str
    error: str
    wall: float


@dataclass
class StoredTable:
    """A study's table as stored in its ``Table`` and ``Units``."""

    paths: list
    units: list
    objectives: list
    constraints: list
    rows: list
    best: int = -1

    def row(self, index: int) -> StoredRow:
        for r in self.rows:
            if r.index == index:
                return r
        raise KeyError(index)


def _float(text):
    try:
        return float(text)
    except ValueError:
        return math.nan


def stored_table(study_obj) -> Optional[StoredTable]:
    """The table stored in ``study_obj`` (None when it has none)."""
    if not study_obj.Table.strip():
        return None
    lines = list(csv.reader(io.StringIO(study_obj.Table)))
    header, records = lines[0], [r for r in lines[1:] if r]
    n_par = len(study_obj.Units)
    n_con = sum(1 for h in header if h.startswith("margin: "))
    n_obj = len(header) - 1 - n_par - 2 * n_con - 4
    paths = [h.rsplit(" [", 1)[0] for h in header[1:1 + n_par]]
    objectives = header[1 + n_par:1 + n_par + n_obj]
    constraints = header[1 + n_par + n_obj:1 + n_par + n_obj + n_con]
    rows = []
    for rec in records:
        k = 1
        values = tuple(_float(x) for x in rec[k:k + n_par])
        k += n_par
        objs = tuple(_float(x) for x in rec[k:k + n_obj])
        k += n_obj
        cons = tuple(_float(x) for x in rec[k:k + n_con])
        k += n_con
        margins = tuple(_float(x) for x in rec[k:k + n_con])
        k += n_con
        rows.append(StoredRow(int(rec[0]), values, objs, cons, margins, rec[k] == "1",
                              rec[k + 1], rec[k + 2], _float(rec[k + 3])))
    return StoredTable(paths, list(study_obj.Units), objectives, constraints, rows,
                       int(study_obj.Best))


def _resolved(study_obj, path):
    try:
        return resolve(study_obj.Document, path)
    except KeyError as exc:
        raise ValueError(f"Study '{study_obj.Label}', parameter {path}: "
                         f"{exc.args[0][1]}") from None


def apply_variant(study_obj, index: int = None) -> StoredRow:
    """Write the parameter values of the stored variant ``index`` (default: the best) into the
    document, as one undo step (:data:`TRANSACTION_APPLY`); return its row.

    Raises
    ------
    ValueError
        No table, no such variant, or a parameter that no longer resolves (naming it).
    """
    table = stored_table(study_obj)
    if table is None:
        raise ValueError(f"Study '{study_obj.Label}' has no results: run it first")
    if index is None:
        index = table.best
        if index < 0:
            raise ValueError(f"Study '{study_obj.Label}' has no best variant (none ran and met "
                             "the constraints)")
    try:
        row = table.row(int(index))
    except KeyError:
        raise ValueError(f"Study '{study_obj.Label}' has no variant {index}") from None
    doc = study_obj.Document
    targets = [_resolved(study_obj, path) for path in table.paths]
    own = bool(doc.UndoMode) and not doc.HasPendingTransaction
    if own:
        doc.openTransaction(TRANSACTION_APPLY)
    try:
        for t, v in zip(targets, row.values):
            t.set_si(v)
        doc.recompute()
    except BaseException:
        if own:
            doc.abortTransaction()
        raise
    if own:
        doc.commitTransaction()
    return row


def keep_variant(study_obj, index: int):
    """Run the stored variant ``index`` of ``study_obj`` again in this process (its values set,
    the mechanism exported, the document put back) and keep the run as a Result of the mechanism
    (:func:`MultibodyWB.document.runs.store_results`: one undo step), labelled with the variant's
    values; return the Result, which the player plays."""
    from ..solver.api import simulate
    from . import runs
    kept = stored_table(study_obj)
    if kept is None:
        raise ValueError(f"Study '{study_obj.Label}' has no results: run it first")
    try:
        row = kept.row(int(index))
    except KeyError:
        raise ValueError(f"Study '{study_obj.Label}' has no variant {index}") from None
    model = variant_model(study_obj, row.values, kept.paths)
    results = simulate(model)
    values = ", ".join(shown(v, u) for v, u in zip(row.values, kept.units))
    return runs.store_results(mechanism_of_study(study_obj), results, name="Result",
                              label=f"{study_obj.Label} variant {row.index}: {values}")


__all__ = ["Target", "resolve", "parameters", "Variants", "prepare", "execute", "finish", "run",
           "store_table", "stored_table", "apply_variant", "keep_variant", "variant_model",
           "si_factor", "si_unit_text", "shown", "preferred_scheduler", "OK", "FAILED"]
