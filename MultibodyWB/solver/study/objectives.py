"""Objectives and constraints of a design study: short expressions over a run's result columns.

An expression is Python-like arithmetic (``+ - * / ** %``, numbers, ``pi``) over **columns**,
written as the plot dock names them, ``Element.quantity`` (``Hull.az``, ``MainBearing.Fx``,
``energy.total``, ``time`` for the time), with the functions

- reductions of a column to a number, over the whole run or a window ``f(x, t0, t1)`` (s):
  ``rms mean std`` (averages over time, Simpson's rule), ``max min ptp`` (peak to peak, of the
  output samples), ``integral`` (over time, Simpson's rule),
  ``initial final``, ``argmax argmin`` (the time of the largest / least value), and
  ``at(x, t)`` (linear interpolation at time ``t``), ``period(x)`` (the mean time between the
  upward crossings of the middle of the range, linearly interpolated; NaN with fewer than two);
- element by element: ``abs sqrt exp log sin cos tan hypot norm(a, b, c)``,
  ``maximum(a, b) minimum(a, b)``.

For example ``rms(Hull.az)``, ``max(abs(MainBearing.Fx))``, ``max(norm(Pin.Fx, Pin.Fy,
Pin.Fz))``, ``integral(Slider.z**2)``. Values are SI (the columns' units).

**Names.** An element is named by its label, whatever characters it has: ``rms(Crank – Ground
revolute.rz_drive)`` reads the column ``Crank – Ground revolute.rz_drive`` as the plot dock lists
it. Such a name is found among the run's columns (:func:`resolve`: the longest column name that
stands there, not inside a longer word, is taken), so the check (:meth:`Expression.check`) and
every evaluation read the same columns; ``col('name')`` names a column explicitly. A FreeCAD
document also lets the objects' Names stand for their labels (``Hinge001.rz_drive``): the
document layer rewrites those (:func:`resolve` with ``aliases``).

A **constraint** is an expression, a comparison and a bound with an optional unit:
``max(Piston.z) <= 180 mm``, ``min(Cam.Fn) > 0``. The bound is converted to SI (:data:`UNITS`);
when the expression is a reduction of one column the unit must be of the column's kind. A
constraint's **value** is its margin in SI, positive when met: ``bound - expression`` for ``<=``
and ``<``, ``expression - bound`` for ``>=`` and ``>``.

Expressions are checked before a study runs (:meth:`Expression.check`: the syntax, the functions
and their arguments, every column against the model's columns, with the nearest names offered,
a constraint's bound against its column's unit, and an evaluation on a made-up result table of
those columns, which finds what the syntax allows but a run would not, ``rms(a, b, c)`` with
columns as the window or an objective that is a column and not a number) and are limited in
length and nesting like the model's expressions.
"""

from __future__ import annotations

import ast
import difflib
import math
import re
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from ..model.timefunction import MAX_DEPTH, MAX_LENGTH

#: Reductions: name -> (least, most) arguments (the column, then a window t0, t1 or a time).
REDUCTIONS = {"rms": (1, 3), "max": (1, 3), "min": (1, 3), "mean": (1, 3), "std": (1, 3),
              "ptp": (1, 3), "integral": (1, 3), "initial": (1, 1), "final": (1, 1),
              "argmax": (1, 3), "argmin": (1, 3), "at": (2, 2), "period": (1, 3)}
#: Element-by-element functions: name -> (least, most) arguments.
ELEMENTWISE = {"abs": (1, 1), "sqrt": (1, 1), "exp": (1, 1), "log": (1, 1), "sin": (1, 1),
               "cos": (1, 1), "tan": (1, 1), "hypot": (2, 2), "norm": (1, 6),
               "maximum": (2, 2), "minimum": (2, 2)}
#: Reductions whose result has the unit of their column (a constraint's bound is checked
#: against it); ``at`` and ``initial``/``final`` too.
SAME_UNIT = {"rms", "max", "min", "mean", "std", "ptp", "initial", "final", "at", "abs", "norm",
             "hypot", "maximum", "minimum"}
#: Reductions whose result is a time (s).
TIME_VALUED = {"argmax", "argmin", "period"}
CONSTANTS = {"pi": math.pi, "e": math.e}

#: Units a constraint's bound may carry: name -> (factor to SI, the SI unit).
UNITS = {
    "m": (1.0, "m"), "mm": (1e-3, "m"), "cm": (1e-2, "m"), "um": (1e-6, "m"), "km": (1e3, "m"),
    "in": (0.0254, "m"),
    "kg": (1.0, "kg"), "g": (1e-3, "kg"), "t": (1e3, "kg"),
    "s": (1.0, "s"), "ms": (1e-3, "s"), "min": (60.0, "s"),
    "rad": (1.0, "rad"), "deg": (math.pi / 180, "rad"), "°": (math.pi / 180, "rad"),
    "m/s": (1.0, "m/s"), "mm/s": (1e-3, "m/s"), "km/h": (1 / 3.6, "m/s"),
    "rad/s": (1.0, "rad/s"), "deg/s": (math.pi / 180, "rad/s"), "rpm": (math.pi / 30, "rad/s"),
    "m/s^2": (1.0, "m/s^2"), "mm/s^2": (1e-3, "m/s^2"), "rad/s^2": (1.0, "rad/s^2"),
    "deg/s^2": (math.pi / 180, "rad/s^2"),
    "N": (1.0, "N"), "kN": (1e3, "N"), "MN": (1e6, "N"), "mN": (1e-3, "N"),
    "N m": (1.0, "N m"), "N*m": (1.0, "N m"), "Nm": (1.0, "N m"), "N·m": (1.0, "N m"),
    "kN m": (1e3, "N m"), "kN*m": (1e3, "N m"), "N mm": (1e-3, "N m"), "N*mm": (1e-3, "N m"),
    "J": (1.0, "J"), "kJ": (1e3, "J"), "W": (1.0, "W"), "kW": (1e3, "W"),
    "Pa": (1.0, "Pa"), "kPa": (1e3, "Pa"), "MPa": (1e6, "Pa"), "bar": (1e5, "Pa"),
    "1": (1.0, "1"), "%": (0.01, "1"),
}
_UNIT_KINDS = {"m": "a length", "kg": "a mass", "s": "a time", "rad": "an angle",
               "m/s": "a speed", "rad/s": "an angular speed", "m/s^2": "an acceleration",
               "rad/s^2": "an angular acceleration", "N": "a force", "N m": "a moment",
               "J": "an energy", "W": "a power", "Pa": "a pressure", "1": "a ratio"}
#: Column units as :func:`..model.columns.unit_of` writes them -> the SI unit above.
_COLUMN_UNIT = {"m": "m", "rad": "rad", "m/s": "m/s", "rad/s": "rad/s", "m/s^2": "m/s^2",
                "rad/s^2": "rad/s^2", "N": "N", "N m": "N m", "J": "J", "W": "W", "1": "1",
                "s": "s", "kg": "kg"}
COMPARISONS = ("<=", ">=", "<", ">")


class ExpressionError(ValueError):
    """An objective or constraint that cannot be used; the message says why."""


class _NameError(ExpressionError):
    """A parse failure that a label read as a column could explain (``Crank – Ground
    revolute.rz_drive`` is no Python): decided once the columns are known."""


#: A column reference as Python reads it: ``Element.quantity`` (no other name needed).
_PLAIN = re.compile(r"[^\W\d]\w*\.[^\W\d]\w*")
#: A quoted string (a ``col('...')`` argument): names are not looked for inside.
_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")


def rename(text: str, columns: Sequence[str], aliases: dict) -> str:
    """``text`` with the columns named through ``aliases`` (:func:`resolve`) written by their
    own names, as the plot dock shows them: ``rms(Hinge001.rz)`` -> ``rms(Crank – Ground
    revolute.rz)``; the rest as written."""
    return resolve(text, columns, aliases, _aliases_only=True)


def resolve(text: str, columns: Sequence[str], aliases: Optional[dict] = None,
            _aliases_only: bool = False) -> str:
    """``text`` with every column named as the plot dock names it that is no plain Python
    ``Element.quantity`` written ``col('...')``: ``rms(Crank – Ground revolute.rz_drive)`` ->
    ``rms(col('Crank – Ground revolute.rz_drive'))``; the rest as written.

    At each place the longest name that stands there is taken (a name inside a longer word is
    not: ``xHull.az`` is not ``Hull.az``); quoted text is left alone. ``aliases``: other names of
    the elements (FreeCAD's object Names) -> the element's name in the columns: ``Hinge001.rz``
    is read as ``<its label>.rz``.
    """
    names = {}
    for c in columns:                       # only those written in the text (a big model has
        if "." in c and c in text:          # many thousands of columns)
            names[c] = c
    for alias, element in (aliases or {}).items():
        if alias == element or f"{alias}." not in text:
            continue
        prefix = f"{element}."
        for c in columns:
            if c.startswith(prefix) and f"{alias}.{c[len(prefix):]}" in text:
                names.setdefault(f"{alias}.{c[len(prefix):]}", c)
    if not names:
        return text
    pattern = re.compile(r"(?<![\w.'\"])(?:"
                         + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
                         + r")(?![\w'\"])")

    def swap(m):
        name = m.group(0)
        column = names[name]
        if _aliases_only or (column == name and _PLAIN.fullmatch(name)):
            return column
        return f"col({column!r})"

    out, at = [], 0
    for q in _QUOTED.finditer(text):
        out.append(pattern.sub(swap, text[at:q.start()]))
        literal = q.group(0)
        try:
            value = ast.literal_eval(literal)
        except (ValueError, SyntaxError):
            value = None
        if not _aliases_only and value in names and not re.search(r"col\s*\(\s*$", text[:q.start()]):
            literal = f"col({names[value]!r})"      # a name quoted as the check suggests it
        out.append(literal)
        at = q.end()
    out.append(pattern.sub(swap, text[at:]))
    return "".join(out)


def _names_of(results) -> Optional[Sequence[str]]:
    names = getattr(results, "names", None)
    if names is None and hasattr(results, "keys"):
        names = list(results.keys())
    return list(names) if names is not None else None


def _dummy_table(columns: Sequence[str], n: int = 41) -> dict:
    """A made-up result table of ``columns``: 1 s of smooth, different, oscillating values (no
    column constant, none zero throughout), to evaluate an expression on before any run."""
    t = np.linspace(0.0, 1.0, n)
    table = {"time": t}
    for k, name in enumerate(columns):
        if name != "time":
            table[name] = 1.0 + 0.5 * np.sin(2 * math.pi * (k + 2) * t + 0.3 * k)
    return table


@dataclass
class Expression:
    """An objective's expression (module docstring), parsed once for each set of columns."""

    text: str
    tree: ast.Expression = field(repr=False, default=None)
    #: A constraint's bound's SI unit (:func:`parse_constraint`): :meth:`check` compares it
    #: with the column's.
    bound_unit: Optional[str] = field(repr=False, default=None)

    def __post_init__(self):
        self._resolved = {}
        if self.tree is None:
            try:
                self.tree = _parse(self.text)
            except _NameError:
                if not re.search(r"\.\s*[^\W\d]", self.text):
                    raise
                self.tree = None            # a label, perhaps: seen once the columns are known

    def _tree_for(self, names: Optional[Sequence[str]]) -> ast.Expression:
        """The expression parsed with the column names ``names`` found in it (None: as
        written)."""
        if names is None:
            if self.tree is None:
                self.tree = _parse(self.text)     # raises the error postponed at construction
            return self.tree
        key = tuple(names)
        tree = self._resolved.get(key)
        if tree is None:
            source = resolve(self.text, names)
            try:
                tree = (self.tree if source == self.text and self.tree is not None
                        else _parse(source))
            except _NameError as exc:
                raise _unknown_name(source, names) or exc from None
            self._resolved = {key: tree}
        return tree

    def columns(self, names: Optional[Sequence[str]] = None) -> list[str]:
        """The columns the expression reads, in order of appearance (``names``: the columns
        there are, to find labels written as they are)."""
        found = []
        tree = self._tree_for(names) if names is not None else self.tree
        for node in ast.walk(tree) if tree is not None else ():
            name = _column_name(node)
            if name is not None and name not in found:
                found.append(name)
        return found

    def check(self, columns: Sequence[str]) -> None:
        """Raise :class:`ExpressionError` when the expression cannot be evaluated on a run with
        the result columns ``columns``: a column it reads is not among them (the nearest names
        offered, as the plot dock writes them), a constraint's bound is of another unit than its
        column, or an evaluation on a made-up table of those columns fails (``rms(a, b, c)``:
        a window that is a column; an objective that is a column, not a number)."""
        columns = list(columns)
        known = set(columns)
        tree = self._tree_for(columns)
        for name in self.columns(columns):
            if name not in known:
                near = difflib.get_close_matches(name, list(known), n=3, cutoff=0.6)
                raise ExpressionError(
                    f"{name!r} is not a result column of the model"
                    + (f" (did you mean {', '.join(_as_written(n) for n in near)}?)"
                       if near else ""))
        if self.bound_unit is not None:
            from ..model.columns import unit_of
            have = self.unit(unit_of, columns)
            if have is not None and have != self.bound_unit:
                raise ExpressionError(_unit_mismatch(self.bound_unit, self.text, have))
        try:
            with np.errstate(all="ignore"):
                value = _Evaluator(_dummy_table(self.columns(columns))).eval(tree.body)
        except ExpressionError:
            raise
        except Exception as exc:  # noqa: BLE001 - whatever a run would raise, said here once
            raise ExpressionError(f"{_echo(self.text)} cannot be evaluated: {exc}") from None
        if np.ndim(value) != 0:
            raise ExpressionError(_not_a_number(self.text))

    def evaluate(self, results) -> float:
        """The expression's value (float; NaN when it is not defined, e.g. a period of a run
        that does not oscillate) on ``results`` (:class:`~..results.table.Results` or a
        mapping name -> column with a ``time`` column)."""
        tree = self._tree_for(_names_of(results))
        with np.errstate(all="ignore"):
            value = _Evaluator(results).eval(tree.body)
        value = np.asarray(value, dtype=float)
        if value.ndim != 0:
            raise ExpressionError(_not_a_number(self.text))
        return float(value)

    def unit(self, unit_of, columns: Optional[Sequence[str]] = None) -> Optional[str]:
        """The expression's SI unit when it is a unit-keeping reduction of one column (``rms(x)``,
        ``max(abs(x))``, ``max(norm(Pin.Fx, Pin.Fy))``) or a time (``argmax(x)``,
        ``period(x)``), else None; ``unit_of(column)`` gives a column's unit. ``columns``: the
        columns there are, to read labels as written (without, a name that is no Python is
        guessed: the reduced argument read as one column)."""
        try:
            tree = self._tree_for(columns) if columns is not None else self.tree
        except ExpressionError:
            return None
        if tree is None:
            return self._guessed_unit(unit_of)
        node = tree.body
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in TIME_VALUED:
            return "s"
        while isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in SAME_UNIT and node.args:
            node = node.args[0]
        name = _column_name(node)
        if name is None or node is tree.body:
            return None
        try:
            return _COLUMN_UNIT.get(unit_of(name))
        except KeyError:
            return None

    def _guessed_unit(self, unit_of) -> Optional[str]:
        """:meth:`unit` of a text with labels no Python reads, without the columns: the
        argument of the outer reductions taken as one column's name."""
        text = self.text.strip()
        m = re.fullmatch(r"(\w+)\s*\((.*)\)", text, re.S)
        if m and m.group(1) in TIME_VALUED:
            return "s"
        while m and m.group(1) in SAME_UNIT:
            text = m.group(2).strip()
            inner = re.fullmatch(r"(\w+)\s*\((.*)\)", text, re.S)
            if inner and inner.group(1) in SAME_UNIT:
                m = inner
                continue
            text = re.split(r",(?![^()]*\))", text)[0].strip()
            try:
                return _COLUMN_UNIT.get(unit_of(text))
            except KeyError:
                return None
        return None


def _unknown_name(source: str, names: Sequence[str]) -> Optional[ExpressionError]:
    """The error of a text that does not parse once the known names are found in it: the
    first ``something.quantity`` in it that is no column (the stretch before the dot that is
    nearest to a column's name), with the nearest columns."""
    every = [n for n in names if "." in n]
    text = _QUOTED.sub(lambda q: " " * len(q.group(0)), source)
    for m in re.finditer(r"\.\s*([^\W\d]\w*)", text):
        # the columns of that quantity (of all when none has it): few to compare with
        known = [n for n in every if n.endswith("." + m.group(1))] or every
        best = (0.0, None)
        for start in range(max(0, m.start() - 80), m.start()):
            if start and (text[start - 1].isalnum() or text[start - 1] == "_"):
                continue                          # a name starts at a word's start
            name = text[start:m.end()].strip()
            if not name or not (name[0].isalpha() or name[0] == "_"):
                continue
            if name in known:
                best = (2.0, None)
                break
            near = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
            if near:
                score = difflib.SequenceMatcher(None, name, near[0]).ratio()
                if score > best[0]:
                    best = (score, name)
        if best[1] is None or _PLAIN.fullmatch(best[1]):
            continue
        near = difflib.get_close_matches(best[1], known, n=3, cutoff=0.6)
        return ExpressionError(f"{best[1]!r} is not a result column of the model (did you "
                               f"mean {', '.join(_as_written(n) for n in near)}?)")
    return None


def _as_written(name: str) -> str:
    """A column's name as an expression may write it."""
    return repr(name) if name == "time" or "." in name else f"col({name!r})"


def _not_a_number(text) -> str:
    return (f"{_echo(text)} is a column, not a number: reduce it (rms, max, mean, "
            "final ...)")


def _unit_mismatch(bound_unit, text, have) -> str:
    return (f"the bound is {_UNIT_KINDS.get(bound_unit, bound_unit)} ({bound_unit}) but "
            f"{_echo(text)} is {_UNIT_KINDS.get(have, have)} ({have})")


@dataclass
class Constraint:
    """``expression op bound`` (module docstring); ``bound`` in SI."""

    text: str
    expression: Expression
    op: str
    bound: float
    bound_unit: Optional[str]
    #: The bound's unit as written (``"mm"``): margins are shown in it.
    written_unit: Optional[str] = None

    def margin(self, value: float) -> float:
        """The margin (SI) of an expression's value: positive when met."""
        return self.bound - value if self.op in ("<=", "<") else value - self.bound

    def met(self, value: float) -> bool:
        m = self.margin(value)
        return m > 0 if self.op in ("<", ">") else m >= 0

    def check_unit(self, unit_of) -> None:
        """Raise :class:`ExpressionError` when the bound's unit is not of the column's kind."""
        if self.bound_unit is None:
            return
        have = self.expression.unit(unit_of)
        if have is not None and have != self.bound_unit:
            raise ExpressionError(_unit_mismatch(self.bound_unit, self.expression.text, have))


def parse_constraint(text: str) -> Constraint:
    """``'EXPRESSION <= NUMBER [UNIT]'`` (or ``>=``, ``<``, ``>``) -> :class:`Constraint`."""
    m = re.fullmatch(r"\s*(.+?)\s*(<=|>=|<|>)\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"
                     r"\s*(.*?)\s*", text or "")
    if not m:
        raise ExpressionError(f"{_echo(text)}: expected EXPRESSION <= NUMBER [UNIT] (or >=, <, >),"
                              " e.g. 'max(Piston.z) <= 180 mm'")
    expr, op, number, unit = m.groups()
    factor, si = 1.0, None
    if unit:
        if unit not in UNITS:
            raise ExpressionError(f"{unit!r} is not a unit known here; known: "
                                  + " ".join(UNITS))
        factor, si = UNITS[unit]
    bound = float(number) * factor
    if not math.isfinite(bound):
        raise ExpressionError(f"{_echo(text)}: the bound {number} is not a finite number")
    return Constraint(text.strip(), Expression(expr, bound_unit=si), op, bound, si, unit or None)


# --------------------------------------------------------------------------------------------------
# Parsing and checking
# --------------------------------------------------------------------------------------------------

def _echo(text, limit=60) -> str:
    text = repr(text)
    return text if len(text) <= limit else text[:limit - 5] + " ...'"


def _depth(node) -> int:
    kids = list(ast.iter_child_nodes(node))
    return 1 + (max(_depth(k) for k in kids) if kids else 0)


def _column_name(node) -> Optional[str]:
    """The column an ``Element.quantity`` or ``col('name')`` node reads, else None."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "col"
            and len(node.args) == 1 and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)):
        return node.args[0].value
    if isinstance(node, ast.Name) and node.id == "time":
        return "time"
    return None


def _parse(text: str) -> ast.Expression:
    if not isinstance(text, str) or not text.strip():
        raise ExpressionError("the expression is empty")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"the expression is {len(text)} characters long (at most "
                              f"{MAX_LENGTH})")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        kind = ExpressionError if "nest" in str(exc.msg) else _NameError
        raise kind(f"{_echo(text)} is not an expression ({exc.msg})") from None
    except (RecursionError, MemoryError, ValueError):
        raise ExpressionError(f"{_echo(text)} is nested too deeply") from None
    if _depth(tree) > MAX_DEPTH:
        raise ExpressionError(f"{_echo(text)} is nested more than {MAX_DEPTH} deep")
    _check(tree.body, text)
    return tree


def _check(node, text) -> None:
    if _column_name(node) is not None:
        return
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):       # a column's name quoted, perhaps
            raise _NameError(f"{node.value!r} in {_echo(text)}: only numbers are allowed "
                             "(a column's name quoted is read as the column)")
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise ExpressionError(f"{node.value!r} in {_echo(text)}: only numbers are allowed")
        return
    if isinstance(node, ast.Name):
        if node.id in CONSTANTS:
            return
        if node.id in REDUCTIONS or node.id in ELEMENTWISE:
            raise ExpressionError(f"{node.id} is a function: {node.id}(...)")
        raise _NameError(f"{node.id!r} in {_echo(text)} is neither a column (Element.quantity, "
                         "as the plot dock names it) nor a constant (pi, e)")
    if isinstance(node, ast.BinOp) and isinstance(
            node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.Mod)):
        _check(node.left, text)
        _check(node.right, text)
        return
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        _check(node.operand, text)
        return
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        name = node.func.id
        arity = REDUCTIONS.get(name) or ELEMENTWISE.get(name)
        if arity is None:
            known = sorted(REDUCTIONS) + sorted(ELEMENTWISE)
            raise ExpressionError(f"{name}() is not a function here; there are "
                                  + ", ".join(known))
        if node.keywords:
            raise ExpressionError(f"{name}() takes no keyword arguments")
        lo, hi = arity
        if not lo <= len(node.args) <= hi:
            want = str(lo) if lo == hi else f"{lo} to {hi}"
            raise ExpressionError(f"{name}() takes {want} argument{'s' if hi > 1 else ''}, "
                                  f"got {len(node.args)}")
        for a in node.args:
            _check(a, text)
        return
    if isinstance(node, ast.Compare):
        raise ExpressionError(f"{_echo(text)}: a comparison is a constraint, not an objective")
    raise ExpressionError(f"{_echo(text)}: {type(node).__name__} is not allowed (numbers, "
                          "columns, + - * / ** %, functions)")


# --------------------------------------------------------------------------------------------------
# Evaluation
# --------------------------------------------------------------------------------------------------

def _window(t, x, args) -> tuple[np.ndarray, np.ndarray]:
    if not args:
        return t, x
    t0 = float(args[0])
    t1 = float(args[1]) if len(args) > 1 else math.inf
    keep = (t >= t0) & (t <= t1)
    return t[keep], x[keep]


def _period(t, x) -> float:
    if x.size < 3:
        return math.nan
    level = 0.5 * (np.max(x) + np.min(x))
    d = x - level
    up = np.nonzero((d[:-1] < 0) & (d[1:] >= 0))[0]
    if up.size < 2:
        return math.nan
    tc = t[up] + (t[up + 1] - t[up]) * (-d[up]) / (d[up + 1] - d[up])
    return float((tc[-1] - tc[0]) / (tc.size - 1))


def _integral(t, x) -> float:
    if x.size < 2:
        return 0.0
    from scipy.integrate import simpson
    return float(simpson(x, x=t))


def _time_average(fn, t, x) -> float:
    """``mean``, ``rms`` or ``std`` of ``x`` over time (Simpson's rule: outputs need not be
    evenly spaced); a single sample is its own average."""
    span = float(t[-1] - t[0]) if t.size > 1 else 0.0
    if span <= 0.0:
        v = float(x[0])
        return abs(v) if fn == "rms" else (0.0 if fn == "std" else v)
    mean = _integral(t, x) / span
    if fn == "mean":
        return mean
    if fn == "rms":
        return math.sqrt(max(0.0, _integral(t, x * x) / span))
    return math.sqrt(max(0.0, _integral(t, (x - mean) ** 2) / span))


class _Evaluator:
    def __init__(self, results):
        self.results = results
        self.t = np.asarray(self._column("time"), dtype=float)

    def _column(self, name):
        try:
            return np.asarray(self.results[name], dtype=float)
        except KeyError:
            raise ExpressionError(f"{name!r} is not a result column of this run") from None

    def eval(self, node):
        name = _column_name(node)
        if name is not None:
            return self._column(name)
        if isinstance(node, ast.Constant):
            return float(node.value)
        if isinstance(node, ast.Name):
            return CONSTANTS[node.id]
        if isinstance(node, ast.UnaryOp):
            v = self.eval(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp):
            a, b = self.eval(node.left), self.eval(node.right)
            op = type(node.op)
            if op is ast.Pow and np.any(np.abs(b) > 1e3):
                raise ExpressionError("an exponent above 1000 is not allowed")
            return {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply,
                    ast.Div: np.divide, ast.Pow: np.power, ast.Mod: np.mod}[op](a, b)
        fn = node.func.id
        args = [self.eval(a) for a in node.args]
        if fn in ELEMENTWISE:
            if fn == "norm":
                return np.sqrt(sum(np.square(a) for a in args))
            return {"abs": np.abs, "sqrt": np.sqrt, "exp": np.exp, "log": np.log,
                    "sin": np.sin, "cos": np.cos, "tan": np.tan, "hypot": np.hypot,
                    "maximum": np.maximum, "minimum": np.minimum}[fn](*args)
        for k, a in enumerate(args[1:], 2):
            if np.ndim(a) != 0:
                what = "the time t" if fn == "at" else ("t0", "t1")[min(k - 2, 1)]
                raise ExpressionError(f"{fn}(): argument {k} ({what}, s) is a column; it must "
                                      f"be a number: {fn}(x{', t' if fn == 'at' else ', t0, t1'})")
        x = np.asarray(args[0], dtype=float)
        if x.ndim == 0:
            x = np.full(self.t.shape, float(x))
        if fn == "at":
            return float(np.interp(float(args[1]), self.t, x))
        if fn == "initial":
            return float(x[0])
        if fn == "final":
            return float(x[-1])
        t, x = _window(self.t, x, args[1:])
        if x.size == 0:
            return math.nan
        if fn == "integral":
            return _integral(t, x)
        if fn == "period":
            return _period(t, x)
        if fn in ("argmax", "argmin"):
            return float(t[np.argmax(x) if fn == "argmax" else np.argmin(x)])
        if fn in ("rms", "mean", "std"):
            return _time_average(fn, t, x)
        return float({"max": np.max, "min": np.min, "ptp": np.ptp}[fn](x))
