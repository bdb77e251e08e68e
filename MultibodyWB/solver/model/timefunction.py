"""Functions of time written as expressions: force magnitudes and hinge drivers.

An expression is plain arithmetic in the time ``t`` (s)::

    0.5*sin(2*pi*t) + 0.1*t**2
    step(t, 0, 0, 0.2, 1000)          # smooth cubic step from 0 at t=0 to 1000 at t=0.2
    step5(t, 0, 0, 1, 0.5)            # quintic step: also its acceleration is continuous

Allowed: numbers, ``t``, ``pi``, ``e``, ``+ - * / ** %``, unary minus, and the functions in
:data:`FUNCTIONS`. Anything else (attribute access, other names, keywords, strings, comparisons) is
rejected by :func:`parse` with a message that says what is wrong, so a model file cannot run code.

Functions
---------
``sin cos tan asin acos atan atan2(y, x) sinh cosh tanh exp log sqrt abs min(a, b) max(a, b)``
    as in Python's :mod:`math` (``log`` is the natural logarithm).
``sign(x)``
    -1, 0 or 1.
``ifpos(x, a, b)``
    ``a`` if ``x > 0`` else ``b`` (only the chosen branch is evaluated).
``step(x, x0, h0, x1, h1)``
    cubic step: ``h0`` for ``x <= x0``, ``h1`` for ``x >= x1``, ``h0 + (h1-h0)*s**2*(3-2*s)`` with
    ``s = (x-x0)/(x1-x0)`` in between. Its first derivative is continuous, its second jumps at the
    ends (by ``6*(h1-h0)/(x1-x0)**2``).
``step5(x, x0, h0, x1, h1)``
    quintic step ``h0 + (h1-h0)*s**3*(10-15*s+6*s**2)``: first and second derivatives are continuous
    (zero at both ends); use it for drivers whose acceleration matters.
``dstep d2step d3step`` and ``dstep5 d2step5 d3step5 d4step5 d5step5`` (same five arguments)
    the derivatives of ``step`` / ``step5`` with respect to ``x`` (zero outside ``x0 < x < x1``);
    :meth:`TimeFunction.derivative` writes them.
``ramp(x, x0, slope)``
    0 before ``x0``, then ``slope*(x-x0)``.

Derivatives and compiled code
-----------------------------
:meth:`TimeFunction.derivative` differentiates symbolically and returns another
:class:`TimeFunction` whose text is an ordinary expression. Non-smooth functions (``abs min max sign
ifpos ramp %`` and the ends of the steps) get their derivative almost everywhere.

:meth:`TimeFunction.numba` compiles the expression to an ``@numba.njit`` function ``f(t) -> float``
(signature ``float64(float64)``) that other njit code can call (pass it as an argument or close over
it). Errors differ there: compiled code raises ZeroDivisionError, or ArithmeticError for a value
that is not finite (``log(-1)``, a negative number to a fractional power, an overflow), without
saying where; call the Python form at that time for the message.

Limits and errors
-----------------
An expression has at most :data:`MAX_LENGTH` characters and :data:`MAX_DEPTH` levels of nesting
(each operator and call is a level: a sum of n terms takes n); numbers must be finite. Longer or
deeper text raises :class:`ExpressionError` (a ValueError), as does a derivative that would grow
past :data:`MAX_DERIVATIVE_WORK` steps of work. Numbers are evaluated as floats (never Python's
unbounded integers), so that every evaluation takes a time bounded by the expression's length.

Calling a :class:`TimeFunction` either returns a finite float or raises
:class:`EvaluationError` (a :class:`~.model.ModelError` with one
:class:`~.model.Problem`): division by zero, a value outside a function's domain, an overflow or a
non-finite result, with the time at which it happened and, when :func:`parse` was told, the model
element and field the expression belongs to.
"""

from __future__ import annotations

import ast
import functools
import math
import threading
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable, Optional

import numpy as np

from .problems import ModelError, Problem


def _step(x, x0, h0, x1, h1):
    """Cubic step: h0 for x <= x0, h1 for x >= x1, C1-smooth in between."""
    if x <= x0:
        return h0
    if x >= x1:
        return h1
    s = (x - x0) / (x1 - x0)
    return h0 + (h1 - h0) * s * s * (3.0 - 2.0 * s)


def _stepfam(deg, n, x, x0, h0, x1, h1):
    """n-th derivative with respect to x of the cubic (deg 3) or quintic (deg 5) step.

    ``_stepfam(3, 0, ...)`` is :func:`_step` (same arithmetic, same rounding).
    """
    if x <= x0:
        return h0 if n == 0 else 0.0
    if x >= x1:
        return h1 if n == 0 else 0.0
    w = x1 - x0
    s = (x - x0) / w
    if deg == 3:
        if n == 0:
            return h0 + (h1 - h0) * s * s * (3.0 - 2.0 * s)
        elif n == 1:
            p = 6.0 * s * (1.0 - s)
        elif n == 2:
            p = 6.0 - 12.0 * s
        elif n == 3:
            p = -12.0
        else:
            p = 0.0
    else:
        if n == 0:
            return h0 + (h1 - h0) * s * s * s * (10.0 + s * (6.0 * s - 15.0))
        elif n == 1:
            p = 30.0 * s * s * (1.0 - s) * (1.0 - s)
        elif n == 2:
            p = 60.0 * s * (1.0 - s) * (1.0 - 2.0 * s)
        elif n == 3:
            p = 60.0 * (1.0 + s * (6.0 * s - 6.0))
        elif n == 4:
            p = 360.0 * (2.0 * s - 1.0)
        elif n == 5:
            p = 720.0
        else:
            p = 0.0
    return (h1 - h0) * p / w ** n


def _ramp(x, x0, slope):
    """0 before x0, then slope * (x - x0)."""
    return slope * (x - x0) if x > x0 else 0.0


def _sign(x):
    """-1.0, 0.0 or 1.0."""
    return math.copysign(1.0, x) if x != 0 else 0.0


def _ifpos(x, a, b):
    """a if x > 0 else b (the compiled forms evaluate only the chosen branch)."""
    return a if x > 0 else b


# The step family: name -> (degree, derivative order). The derivative of the member of order n is
# the member of order n + 1 (none after the degree: the derivative is 0 there).
_STEPS = {"step": (3, 0), "dstep": (3, 1), "d2step": (3, 2), "d3step": (3, 3),
          "step5": (5, 0), "dstep5": (5, 1), "d2step5": (5, 2), "d3step5": (5, 3),
          "d4step5": (5, 4), "d5step5": (5, 5)}
_STEP_NAME = {v: k for k, v in _STEPS.items()}


def _step_member(deg, n):
    def f(x, x0, h0, x1, h1):
        return _stepfam(deg, n, x, x0, h0, x1, h1)
    f.__name__ = _STEP_NAME[deg, n]
    f.__doc__ = f"d^{n}/dx^{n} of the {'cubic' if deg == 3 else 'quintic'} step."
    return f


FUNCTIONS: dict[str, tuple[Callable, int]] = {
    # name: (callable, number of arguments)
    "sin": (math.sin, 1), "cos": (math.cos, 1), "tan": (math.tan, 1),
    "asin": (math.asin, 1), "acos": (math.acos, 1), "atan": (math.atan, 1),
    "atan2": (math.atan2, 2),
    "sinh": (math.sinh, 1), "cosh": (math.cosh, 1), "tanh": (math.tanh, 1),
    "exp": (math.exp, 1), "log": (math.log, 1), "sqrt": (math.sqrt, 1),
    "abs": (abs, 1), "min": (min, 2), "max": (max, 2),
    "sign": (_sign, 1),
    "step": (_step, 5), "ramp": (_ramp, 3),
    "ifpos": (_ifpos, 3),
    **{name: (_step_member(*dn), 5) for name, dn in _STEPS.items() if name != "step"},
}
CONSTANTS = {"pi": math.pi, "e": math.e}
_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.Mod)
_UNOPS = (ast.UAdd, ast.USub)


#: Most characters in an expression.
MAX_LENGTH = 10_000
#: Deepest nesting of an expression: operators, unary minus and calls each add one level.
MAX_DEPTH = 100
#: Largest amount of work (tree nodes visited and built) for one symbolic derivative.
MAX_DERIVATIVE_WORK = 200_000
#: Longest expression text repeated in a message; longer ones are cut in the middle.
ECHO_LENGTH = 80


class ExpressionError(ValueError):
    """An expression that is not a valid function of time."""


def shorten(text: str, limit: int = ECHO_LENGTH) -> str:
    """``text`` for a message: at most ``limit`` characters, the middle cut out (" ... ")."""
    text = str(text)
    if len(text) <= limit:
        return text
    keep = max(limit - 5, 2)
    return f"{text[:keep - keep // 2]} ... {text[len(text) - keep // 2:]}"


_ORDINAL = {1: "first", 2: "second", 3: "third"}


class EvaluationError(ModelError):
    """An expression that cannot be evaluated at a time: division by zero, a value outside a
    function's domain, an overflow or a result that is not finite.

    A :class:`~.model.ModelError` holding one :class:`~.model.Problem` that names the element
    and field given to :func:`parse` (``Expression``, ``Text`` when none was) and says the time.

    Attributes
    ----------
    text : str
        The expression evaluated (a derivative's own text for a derivative).
    t : float
        The time, s.
    reason : str
        What went wrong, e.g. ``"division by zero"``.
    order : int
        0 for the expression itself, n for its n-th derivative.
    """

    def __init__(self, text, t, reason, where=None, order=0):
        self.text, self.t, self.reason, self.order = text, t, reason, order
        element, field_, source = where if where else ("Expression", "Text", text)
        self.element, self.field = element, field_
        what = f"'{shorten(source)}'"
        if order:
            what = (f"the {_ORDINAL.get(order, f'{order}th')} derivative of {what} "
                    f"('{shorten(text)}')")
        super().__init__([Problem(element, field_, f"{what} cannot be evaluated at t = {t:.9g} "
                                                   f"s: {reason}")])


def _reason(exc) -> str:
    if isinstance(exc, ZeroDivisionError):
        return "division by zero"
    if isinstance(exc, OverflowError):
        return "overflow: the value is too large for a float (about 1.8e308)"
    return ("outside a function's domain (e.g. log(-1), sqrt(-1), acos(2), (-1)**0.5, "
            "0**-1)")


def _depth(node: ast.AST) -> int:
    """Nesting depth of an expression's AST, walked without recursion."""
    deepest, stack = 0, [(node, 1)]
    while stack:
        n, d = stack.pop()
        if d > deepest:
            deepest = d
        for child in ast.iter_child_nodes(n):
            if isinstance(child, (ast.expr_context, ast.operator, ast.unaryop)):
                continue
            stack.append((child, d + 1))
    return deepest


def _syntax_tree(src: str, max_depth: int) -> ast.Expression:
    """The checked AST of ``src``; ExpressionError for anything too long, deep or not allowed."""
    if len(src) > MAX_LENGTH:
        raise ExpressionError(f"the expression has {len(src):,} characters; at most "
                              f"{MAX_LENGTH:,} are allowed")
    try:
        tree = ast.parse(src, mode="eval")
    except SyntaxError as exc:
        if "too many nested parentheses" in str(exc.msg):
            raise ExpressionError(f"nested more than {MAX_DEPTH} levels deep") from None
        raise ExpressionError(f"syntax error in '{shorten(src)}': {exc.msg}") from None
    except (RecursionError, MemoryError):
        raise ExpressionError(f"nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as exc:  # e.g. a null character
        raise ExpressionError(f"'{shorten(src)}' is not an expression: {exc}") from None
    if _depth(tree) - 1 > max_depth:
        raise ExpressionError(f"nested more than {max_depth} levels deep (each operator and "
                              "function call is a level; a sum of n terms takes n)")
    _check(tree)
    return tree


def _check(node: ast.AST) -> None:
    if isinstance(node, ast.Expression):
        _check(node.body)
    elif isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise ExpressionError(f"{shorten(repr(node.value))} is not a number")
        try:
            finite = math.isfinite(float(node.value))
        except OverflowError:
            finite = False
        if not finite:
            raise ExpressionError("a number beyond about 1.8e308 is not finite: write a "
                                  "smaller one")
    elif isinstance(node, ast.Name):
        if node.id in FUNCTIONS:
            raise ExpressionError(f"'{node.id}' is a function: call it, e.g. {node.id}(t)")
        if node.id != "t" and node.id not in CONSTANTS:
            raise ExpressionError(
                f"unknown name '{node.id}' (use t, pi, e or one of {', '.join(sorted(FUNCTIONS))})")
    elif isinstance(node, ast.BinOp):
        if not isinstance(node.op, _BINOPS):
            raise ExpressionError(f"operator {type(node.op).__name__} is not allowed")
        _check(node.left)
        _check(node.right)
    elif isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, _UNOPS):
            raise ExpressionError(f"operator {type(node.op).__name__} is not allowed")
        _check(node.operand)
    elif isinstance(node, ast.Call):
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name not in FUNCTIONS:
            raise ExpressionError(f"unknown function '{ast.unparse(node.func)}'")
        if node.keywords:
            raise ExpressionError(f"{name}() takes no keyword arguments")
        nargs = FUNCTIONS[name][1]
        if len(node.args) != nargs:
            raise ExpressionError(f"{name}() takes {nargs} argument(s), got {len(node.args)}")
        for a in node.args:
            _check(a)
    elif isinstance(node, ast.Attribute):
        raise ExpressionError(f"attribute access '{ast.unparse(node)}' is not allowed")
    elif isinstance(node, (ast.Compare, ast.BoolOp, ast.IfExp)):
        raise ExpressionError(f"'{ast.unparse(node)}': comparisons and conditions are not allowed; "
                              f"use step, ramp, sign or ifpos")
    else:
        raise ExpressionError(f"'{ast.unparse(node)}' is not allowed in a function of time")


# --------------------------------------------------------------------------------------------------
# Expression trees: nested tuples, compared structurally.
#   ("num", v)  v int or float       ("t",)        ("const", "pi" | "e")
#   ("add" | "sub" | "mul" | "div" | "pow" | "mod", a, b)
#   ("neg", a)                       ("call", name, (arg, ...))
# --------------------------------------------------------------------------------------------------

_AST_OPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow",
            ast.Mod: "mod"}
_SYMBOL = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**", "mod": "%"}
_PREC = {"add": 1, "sub": 1, "mul": 2, "div": 2, "mod": 2, "pow": 4}
_PREC_UNARY, _PREC_ATOM = 3, 5
ZERO, ONE = ("num", 0), ("num", 1)
T = ("t",)


def _from_ast(node: ast.AST):
    """Tree of a validated AST, operation for operation (no simplification: same rounding)."""
    if isinstance(node, ast.Expression):
        return _from_ast(node.body)
    if isinstance(node, ast.Constant):  # exact integers up to 2**53, floats beyond
        v = node.value
        return ("num", v if not isinstance(v, int) or abs(v) <= 2 ** 53 else float(v))
    if isinstance(node, ast.Name):
        return T if node.id == "t" else ("const", node.id)
    if isinstance(node, ast.BinOp):
        return (_AST_OPS[type(node.op)], _from_ast(node.left), _from_ast(node.right))
    if isinstance(node, ast.UnaryOp):
        operand = _from_ast(node.operand)
        return ("neg", operand) if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.Call):
        return ("call", node.func.id, tuple(_from_ast(a) for a in node.args))
    raise AssertionError(f"unchecked node {ast.dump(node)}")  # pragma: no cover


def _has_t(n) -> bool:
    _spend()
    k = n[0]
    if k == "t":
        return True
    if k in ("num", "const"):
        return False
    if k == "call":
        return any(_has_t(a) for a in n[2])
    return any(_has_t(a) for a in n[1:])


def _num_text(v, as_float: bool) -> str:
    if isinstance(v, float) and math.isinf(v):  # a literal like 1e400
        return "-1e999" if v < 0 else "1e999"
    return repr(float(v)) if as_float else repr(v)


def _emit(n, mode: str = "text") -> tuple[str, int]:
    """Source text of a tree and its precedence.

    mode ``"text"``: the user-facing expression. ``"python"``: numbers as floats (bounded time:
    never Python's big integers), ``ifpos`` as a conditional expression and ``a**b`` as
    ``_pow(a, b)`` (``math.pow``: a ValueError, not a complex number, for a negative number to a
    fractional power). ``"numba"``: numbers as floats, constants as numbers, functions as
    ``math.*`` or the njit helpers of :func:`_numba_namespace`. ``"numpy"``: as ``"python"``
    but for arrays of times: functions as the ufuncs or helpers of :data:`_NUMPY_NAMESPACE`,
    ``ifpos`` as ``np.where``, ``a**b`` as ``_vpow(a, b)`` (see :meth:`TimeFunction.sample`).
    """
    k = n[0]
    if k == "num":
        s = _num_text(n[1], mode != "text")
        return s, (_PREC_UNARY if s.startswith("-") else _PREC_ATOM)
    if k == "t":
        return "t", _PREC_ATOM
    if k == "const":
        return (repr(CONSTANTS[n[1]]) if mode == "numba" else n[1]), _PREC_ATOM
    if k == "neg":
        s, p = _emit(n[1], mode)
        if p >= _PREC_UNARY:
            return "-" + s, _PREC_UNARY
        if _neg_distributes(n[1]):  # -(a*b) is (-a)*b exactly: write -a*b
            return "-" + s, p
        return f"-({s})", _PREC_UNARY
    if k == "call":
        name, args = n[1], [_emit(a, mode)[0] for a in n[2]]
        if name == "ifpos" and mode == "numpy":
            return f"np.where(({args[0]}) > 0.0, {args[1]}, {args[2]})", _PREC_ATOM
        if mode == "numpy":
            if name in _STEPS:
                deg, order = _STEPS[name]
                return f"_vstepfam({deg}, {order}, {', '.join(args)})", _PREC_ATOM
            return f"{_NUMPY_NAMES.get(name, name)}({', '.join(args)})", _PREC_ATOM
        if name == "ifpos" and mode != "text":
            zero = "0.0" if mode == "numba" else "0"
            return f"(({args[1]}) if ({args[0]}) > {zero} else ({args[2]}))", _PREC_ATOM
        if mode == "numba":
            if name in _STEPS:
                deg, order = _STEPS[name]
                return f"_stepfam({deg}, {order}, {', '.join(args)})", _PREC_ATOM
            name = _NUMBA_NAMES.get(name, name)
        return f"{name}({', '.join(args)})", _PREC_ATOM
    prec = _PREC[k]
    (ls, lp), (rs, rp) = _emit(n[1], mode), _emit(n[2], mode)
    if k == "pow" and mode in ("python", "numpy"):
        return f"{'_pow' if mode == 'python' else '_vpow'}({ls}, {rs})", _PREC_ATOM
    if k in ("div", "mod") and mode == "numpy":
        return f"{'_vdiv' if k == 'div' else '_vmod'}({ls}, {rs})", _PREC_ATOM
    if k == "pow":  # right-associative; the exponent may be a unary minus
        lpar, rpar = lp <= prec, rp < _PREC_UNARY
    else:
        lpar, rpar = lp < prec, rp <= prec
    if lpar:
        ls = f"({ls})"
    if rpar:
        rs = f"({rs})"
    sep = " " if prec == 1 or k == "mod" else ""
    return f"{ls}{sep}{_SYMBOL[k]}{sep}{rs}", prec


def _neg_distributes(n) -> bool:
    """True if ``-`` written before the product or quotient ``n`` applies to its first factor only
    and gives the same number (no ``%`` on the left spine)."""
    if n[0] not in ("mul", "div"):
        return False
    while n[0] in ("mul", "div"):
        n = n[1]
    return n[0] != "mod"


def _text(n) -> str:
    return _emit(n, "text")[0]


# ---- simplifying constructors (used by the derivative only) --------------------------------------

TWO = ("num", 2)


def _isnum(n, v=None) -> bool:
    return n[0] == "num" and (v is None or n[1] == v)


def _fold(op, a, b):
    """The number ``a op b`` if it is finite and readable, else None (keep the operation)."""
    x, y = a[1], b[1]
    try:
        if op == "pow" and (abs(y) > 64 or abs(x) > 1e15):
            return None
        v = {"add": lambda: x + y, "sub": lambda: x - y, "mul": lambda: x * y,
             "div": lambda: x / y, "pow": lambda: x ** y, "mod": lambda: x % y}[op]()
    except (ArithmeticError, ValueError):
        return None
    if isinstance(v, complex) or not math.isfinite(v):
        return None
    if isinstance(v, int):
        return ("num", v) if abs(v) < 1e15 else None
    if len(repr(v)) > max(len(repr(x)), len(repr(y)), 8):  # 0.1*3 stays 0.1*3
        return None
    return ("num", v)


def _rat(n):
    """The exact value of an integer or of ``int/int`` (possibly negated), else None."""
    if n[0] == "num":
        return Fraction(n[1]) if isinstance(n[1], int) else None
    if n[0] == "neg":
        r = _rat(n[1])
        return None if r is None else -r
    if n[0] == "div" and n[1][0] == n[2][0] == "num" and isinstance(n[1][1], int) \
            and isinstance(n[2][1], int) and n[2][1] != 0:
        return Fraction(n[1][1], n[2][1])
    return None


def _rat_fold(op, a, b):
    """``a op b`` for exact rationals a, b: an integer, a short decimal, or p/q; else None."""
    x, y = _rat(a), _rat(b)
    if x is None or y is None or (op == "div" and y == 0):
        return None
    r = {"add": x + y, "sub": x - y, "mul": x * y, "div": x / y if y else None}[op]
    if max(abs(r.numerator), r.denominator) > 10 ** 12:
        return None
    if r.denominator == 1:
        return ("num", int(r))
    f = float(r)
    if Fraction(f) == r and len(repr(f)) <= 6:  # 1/2 -> 0.5, 3/4 -> 0.75
        return ("num", f)
    q = ("div", ("num", abs(r.numerator)), ("num", r.denominator))
    return ("neg", q) if r < 0 else q


def _fold_any(op, a, b):
    """Fold two numeric constants (exactly for rationals), or None."""
    r = _rat_fold(op, a, b)
    if r is not None:
        return r
    if _isnum(a) and _isnum(b):
        return _fold(op, a, b)
    return None


def _product(factors):
    """Left-associated product of a list of factors (1 when empty)."""
    if not factors:
        return ONE
    out = factors[0]
    for f in factors[1:]:
        out = ("mul", out, f)
    return out


def _factors(n) -> list:
    return _factors(n[1]) + _factors(n[2]) if n[0] == "mul" else [n]


def _coef(n):
    """(numeric factor, rest) of a product c*rest; (1, n) when there is none."""
    fs = _factors(n)
    if len(fs) > 1 and _isnum(fs[0]):
        return fs[0], _product(fs[1:])
    if _isnum(n):
        return n, ONE
    return ONE, n


def _neg(a):
    if a[0] == "num":
        return ("num", -a[1])
    if a[0] == "neg":
        return a[1]
    if a[0] == "sub":
        return ("sub", a[2], a[1])
    return ("neg", a)


def _negative(n):
    """``m`` when ``n`` is written ``-m`` (a unary minus or a negative number), else None."""
    if n[0] == "neg":
        return n[1]
    if _isnum(n) and n[1] < 0:
        return ("num", -n[1])
    return None


def _like_terms(op, a, b):
    """c*x op d*x -> (c op d)*x, or None."""
    (ca, ra), (cb, rb) = _coef(a), _coef(b)
    if ra != rb or _isnum(ra):
        return None
    c = _fold(op, ca, cb)
    return None if c is None else _mul(c, ra)


def _add(a, b):
    if _isnum(a, 0):
        return b
    if _isnum(b, 0):
        return a
    folded = _fold_any("add", a, b)
    if folded is not None:
        return folded
    if _negative(b) is not None:
        return _sub(a, _negative(b))
    if _negative(a) is not None:
        return _sub(b, _negative(a))
    if a == b:
        return _mul(TWO, a)
    return _like_terms("add", a, b) or ("add", a, b)


def _sub(a, b):
    if _isnum(b, 0):
        return a
    if _isnum(a, 0):
        return _neg(b)
    if a == b:
        return ZERO
    folded = _fold_any("sub", a, b)
    if folded is not None:
        return folded
    if _negative(b) is not None:
        return _add(a, _negative(b))
    if a[0] == "neg":
        return _neg(_add(a[1], b))
    return _like_terms("sub", a, b) or ("sub", a, b)


def _mul(a, b):
    """Product, flattened: numbers folded and first, then constants, then the rest in order;
    equal factors become powers, quotients and signs move outwards."""
    negative, flat, dens, stack = False, [], [], [b, a]
    while stack:
        f = stack.pop()
        if f[0] == "mul":
            stack += [f[2], f[1]]
        elif f[0] == "neg":
            negative = not negative
            stack.append(f[1])
        elif f[0] == "div" and _rat(f) is None:
            dens.append(f[2])
            stack.append(f[1])
        elif _isnum(f, 0):
            return ZERO
        elif _isnum(f) and f[1] < 0:
            negative = not negative
            flat.append(("num", -f[1]))
        else:
            flat.append(f)
    coef, nums, grouped = ONE, [], []
    for f in flat:
        if _isnum(f) or _rat(f) is not None:
            c = _fold_any("mul", coef, f)
            if c is None:
                nums.append(f)
            else:
                coef = c
    if coef[0] == "neg":
        negative, coef = not negative, coef[1]
    if coef[0] == "div":  # an exact fraction p/q: p in front, q below
        dens.append(coef[2])
        coef = coef[1]
    rest = [f for f in flat if not (_isnum(f) or _rat(f) is not None)]
    for f in [f for f in rest if not _has_t(f)] + [f for f in rest if _has_t(f)]:
        base, k = (f[1], f[2]) if f[0] == "pow" and _isnum(f[2]) else (f, ONE)
        _spend(len(grouped) + 1)
        for i, (gb, gk) in enumerate(grouped):
            if gb == base and _fold("add", gk, k) is not None:
                grouped[i] = (gb, _fold("add", gk, k))
                break
        else:
            grouped.append((base, k))
    factors = [coef] + nums + [_pow(gb, gk) for gb, gk in grouped]
    out = _product([f for f in factors if not _isnum(f, 1)])
    if dens:
        out = _div(out, _mul(dens[0], _product(dens[1:])) if len(dens) > 1 else dens[0])
    return _neg(out) if negative else out


def _div(a, b):
    if _isnum(a, 0):
        return ZERO
    if _isnum(b, 1):
        return a
    if a == b:
        return ONE
    folded = _fold_any("div", a, b)
    if folded is not None:
        return folded
    if _negative(a) is not None:
        return _neg(_div(_negative(a), b))
    if _negative(b) is not None:
        return _neg(_div(a, _negative(b)))
    if a[0] == "div" and _rat(a) is None:  # (x/y)/z -> x/(y*z)
        return _div(a[1], _mul(a[2], b))
    if b[0] == "div" and _rat(b) is None:  # x/(y/z) -> x*z/y
        return _div(_mul(a, b[2]), b[1])
    (ca, ra), (cb, rb) = _coef(a), _coef(b)
    if not _isnum(cb, 1):  # (c*x)/(d*y) -> (c/d)*x/y when c/d is a readable number
        q = _rat_fold("div", ca, cb)
        q = q if q is not None and _isnum(q) else _fold("div", ca, cb)
        if q is not None:
            return _div(_mul(q, ra), rb)
    pa, pb = _powers(a), _powers(b)
    common = [x for x, _ in pa if any(x == y for y, _ in pb)]
    if common:  # x**m*u/(x**n*v) -> x**(m-n)*u/v
        num = [(x, k) for x, k in pa if x not in common]
        den = [(x, k) for x, k in pb if x not in common]
        for x in common:
            k = _fold("sub", _exponent(pa, x), _exponent(pb, x))
            if k is None:
                break
            if _isnum(k) and k[1] < 0:
                den.append((x, ("num", -k[1])))
            elif not _isnum(k, 0):
                num.append((x, k))
        else:
            return _div(_mul(ONE, _product([_pow(x, k) for x, k in num])),
                        _mul(ONE, _product([_pow(x, k) for x, k in den])))
    return ("div", a, b)


def _powers(n) -> list:
    """The factors of a product as (base, numeric exponent) pairs (exponent 1 if plain)."""
    return [(f[1], f[2]) if f[0] == "pow" and _isnum(f[2]) else (f, ONE) for f in _factors(n)]


def _exponent(powers, x):
    return next(k for b, k in powers if b == x)


def _pow(a, b):
    if _isnum(b, 0):
        return ONE
    if _isnum(b, 1):
        return a
    if _isnum(a) and _isnum(b):
        return _fold("pow", a, b) or ("pow", a, b)
    if a[0] == "pow" and _isnum(b) and float(b[1]).is_integer() and _isnum(a[2]):
        m = _fold("mul", a[2], b)  # (x**m)**n -> x**(m*n) for integer n
        if m is not None:
            return _pow(a[1], m)
    return ("pow", a, b)


def _call(name, *args):
    if name == "ifpos" and args[1] == args[2]:
        return args[1]
    return ("call", name, tuple(args))


def _sum(*terms):
    out = ZERO
    for x in terms:
        out = _add(out, x)
    return out


def _canon(n):
    """The tree rebuilt with the simplifying constructors (the derivative's starting point)."""
    _spend()
    k = n[0]
    if k in ("num", "t", "const"):
        return n
    if k == "neg":
        return _neg(_canon(n[1]))
    if k == "call":
        return _call(n[1], *(_canon(a) for a in n[2]))
    a, b = _canon(n[1]), _canon(n[2])
    if k == "mod":
        return ("mod", a, b)
    return {"add": _add, "sub": _sub, "mul": _mul, "div": _div, "pow": _pow}[k](a, b)


# ---- differentiation -----------------------------------------------------------------------------

class _Budget(threading.local):
    """Work left for the derivative being built in this thread (None: no derivative)."""

    left: Optional[int] = None


_BUDGET = _Budget()


class _TooLarge(Exception):
    """The derivative being built would exceed :data:`MAX_DERIVATIVE_WORK`."""


def _spend(n: int = 1) -> None:
    left = _BUDGET.left
    if left is not None:
        left -= n
        _BUDGET.left = left
        if left < 0:
            raise _TooLarge


def _d(n):
    """d n / dt, almost everywhere, simplified."""
    _spend()
    if not _has_t(n):
        return ZERO
    k = n[0]
    if k == "t":
        return ONE
    if k == "neg":
        return _neg(_d(n[1]))
    if k == "call":
        return _d_call(n[1], n[2])
    a, b = n[1], n[2]
    da, db = _d(a), _d(b)
    if k == "add":
        return _add(da, db)
    if k == "sub":
        return _sub(da, db)
    if k == "mul":
        return _add(_mul(da, b), _mul(a, db))
    if k == "div":
        if _isnum(db, 0):
            return _div(da, b)
        return _sub(_div(da, b), _div(_mul(a, db), _pow(b, ("num", 2))))
    if k == "mod":  # a % b = a - b*floor(a/b), floor(a/b) = (a - a % b)/b
        if _isnum(db, 0):
            return da
        return _sub(da, _mul(_div(_sub(a, n), b), db))
    if k == "pow":
        if _isnum(db, 0):  # constant exponent
            if _isnum(b, 2):
                return _mul(da, _mul(("num", 2), a))
            return _mul(da, _mul(b, _pow(a, _sub(b, ONE))))
        log_a = ONE if a == ("const", "e") else _call("log", a)
        if _isnum(da, 0):  # constant base
            return _mul(db, _mul(log_a, n))
        return _mul(n, _add(_mul(db, log_a), _div(_mul(b, da), a)))
    raise AssertionError(k)  # pragma: no cover


def _d_call(name, args):
    if name in _STEPS:
        return _d_step(name, *args)
    ds = [_d(a) for a in args]
    if name == "ifpos":
        return _call("ifpos", args[0], ds[1], ds[2])
    if name == "min":  # min(a, b) is b where a - b > 0, else a
        return _call("ifpos", _sub(args[0], args[1]), ds[1], ds[0])
    if name == "max":  # max(a, b) is b where b - a > 0, else a
        return _call("ifpos", _sub(args[1], args[0]), ds[1], ds[0])
    if name == "atan2":
        y, x = args
        dy, dx = ds
        return _div(_sub(_mul(x, dy), _mul(y, dx)),
                    _add(_pow(x, ("num", 2)), _pow(y, ("num", 2))))
    if name == "ramp":
        x, x0, slope = args
        dx, dx0, dslope = ds
        inner = _add(_mul(slope, _sub(dx, dx0)), _mul(_sub(x, x0), dslope))
        return _call("ifpos", _sub(x, x0), inner, ZERO) if not _isnum(inner, 0) else ZERO
    if name == "sign":
        return ZERO
    u, du = args[0], ds[0]
    one_minus_u2 = _sub(ONE, _pow(u, TWO))
    # d f(u) = du * g / h
    g, h = {
        "sin": (_call("cos", u), ONE),
        "cos": (_neg(_call("sin", u)), ONE),
        "tan": (ONE, _pow(_call("cos", u), TWO)),
        "asin": (ONE, _call("sqrt", one_minus_u2)),
        "acos": (("num", -1), _call("sqrt", one_minus_u2)),
        "atan": (ONE, _add(ONE, _pow(u, TWO))),
        "sinh": (_call("cosh", u), ONE),
        "cosh": (_call("sinh", u), ONE),
        "tanh": (ONE, _pow(_call("cosh", u), TWO)),
        "exp": (_call("exp", u), ONE),
        "log": (ONE, u),
        "sqrt": (ONE, _mul(TWO, _call("sqrt", u))),
        "abs": (_call("sign", u), ONE),
    }[name]
    return _div(_mul(du, g), h)


def _d_step(name, x, x0, h0, x1, h1):
    """Total derivative of the step-family member D_n(x; x0, h0, x1, h1).

    With w = x1 - x0 and D_n = (h1-h0) P^(n)(s) / w**n inside (s = (x-x0)/w), 0 outside (n >= 1):
    dD_n/dx = D_{n+1};  dD_n/dx0 = n D_n/w - D_{n+1} (x1-x)/w;
    dD_n/dx1 = -n D_n/w - D_{n+1} (x-x0)/w;
    dD_n/dh0 = D_n(x, x0, 1, x1, 0);  dD_n/dh1 = D_n(x, x0, 0, x1, 1).
    """
    deg, order = _STEPS[name]
    nxt = _STEP_NAME.get((deg, order + 1))
    dx, dx0, dh0, dx1, dh1 = (_d(a) for a in (x, x0, h0, x1, h1))
    args = (x, x0, h0, x1, h1)
    d_next = _call(nxt, *args) if nxt else ZERO
    w = _sub(x1, x0)
    moving = _div(_add(_mul(_sub(x1, x), dx0), _mul(_sub(x, x0), dx1)), w)  # ends moving with t
    terms = [_mul(_sub(dx, moving), d_next)]
    if order and not (_isnum(dx0, 0) and _isnum(dx1, 0)):
        terms.append(_div(_mul(("num", order), _mul(_sub(dx0, dx1), _call(name, *args))), w))
    if not _isnum(dh0, 0):
        terms.append(_mul(dh0, _call(name, x, x0, ONE, x1, ZERO)))
    if not _isnum(dh1, 0):
        terms.append(_mul(dh1, _call(name, x, x0, ZERO, x1, ONE)))
    return _sum(*terms)


# ---- compiled forms ------------------------------------------------------------------------------

_NUMBA_NAMES = {**{f: f"math.{f}" for f in ("sin", "cos", "tan", "asin", "acos", "atan", "atan2",
                                             "sinh", "cosh", "tanh", "exp", "log", "sqrt")},
                "sign": "_sign", "ramp": "_ramp"}


# ---- many times at once (numpy) ------------------------------------------------------------------
# Each ufunc below gives, element by element, the same number as the ``math`` function of the
# Python form on numpy 1.24 and 2.2 on x86-64 with AVX2 (checked over 4e5 arguments each; see
# VECTOR_SAMPLING for other processors); not tanh (numpy has its own), which is taken point by
# point. ``np.power`` gets fresh full arrays: numpy 2 squares for an exponent 2.0 given as a
# scalar or a stride-0 view, which rounds differently from ``math.pow`` in a few cases. ``/``
# and ``%`` raise for a zero divisor, and min and max keep Python's choice between equal values
# (0.0 and -0.0), as the Python form does.

def _vpow(a, b):
    # fresh arrays: a broadcast view of one element keeps stride 0, which numpy 2 also squares
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    return np.power(np.array(a, copy=True), np.array(b, copy=True))


def _vdiv(a, b):
    # Python's ``/`` raises for a zero divisor whatever the dividend (inf / 0 too; numpy
    # gives inf there without a floating-point exception)
    if np.any(np.asarray(b) == 0.0):
        raise ZeroDivisionError("float division by zero")
    return a / b


def _vmod(a, b):
    if np.any(np.asarray(b) == 0.0):
        raise ZeroDivisionError("float modulo")
    return a % b


def _vmin(a, b):
    return np.where(b < a, b, a)              # Python's min: the first unless the second is less


def _vmax(a, b):
    return np.where(b > a, b, a)


def _vsign(x):
    return np.where(x != 0.0, np.copysign(1.0, x), 0.0)


def _vramp(x, x0, slope):
    return np.where(x > x0, slope * (x - x0), 0.0)


def _vtanh(x):
    x = np.asarray(x, dtype=float)
    return np.fromiter(map(math.tanh, x.ravel().tolist()), dtype=float,
                       count=x.size).reshape(x.shape)


def _vstepfam(deg, n, x, x0, h0, x1, h1):
    """:func:`_stepfam` element by element (the same arithmetic on the points inside)."""
    x, x0, h0, x1, h1 = np.broadcast_arrays(*(np.asarray(v, dtype=float)
                                              for v in (x, x0, h0, x1, h1)))
    out = np.where(x <= x0, h0 if n == 0 else 0.0, np.where(x >= x1, h1 if n == 0 else 0.0, 0.0))
    inside = ~(x <= x0) & ~(x >= x1)
    if inside.any():
        out[inside] = _vstep_inside(deg, n, x[inside], x0[inside], h0[inside], x1[inside],
                                    h1[inside])
    return out


def _vstep_inside(deg, n, x, x0, h0, x1, h1):
    w = x1 - x0
    s = (x - x0) / w
    if deg == 3:
        if n == 0:
            return h0 + (h1 - h0) * s * s * (3.0 - 2.0 * s)
        p = (6.0 * s * (1.0 - s) if n == 1 else 6.0 - 12.0 * s if n == 2
             else np.full(s.shape, -12.0 if n == 3 else 0.0))
    else:
        if n == 0:
            return h0 + (h1 - h0) * s * s * s * (10.0 + s * (6.0 * s - 15.0))
        p = (30.0 * s * s * (1.0 - s) * (1.0 - s) if n == 1
             else 60.0 * s * (1.0 - s) * (1.0 - 2.0 * s) if n == 2
             else 60.0 * (1.0 + s * (6.0 * s - 6.0)) if n == 3
             else 360.0 * (2.0 * s - 1.0) if n == 4
             else np.full(s.shape, 720.0 if n == 5 else 0.0))
    return (h1 - h0) * p / _vpow(w, float(n))


_NUMPY_NAMES = {"sin": "np.sin", "cos": "np.cos", "tan": "np.tan", "asin": "np.arcsin",
                "acos": "np.arccos", "atan": "np.arctan", "atan2": "np.arctan2",
                "sinh": "np.sinh", "cosh": "np.cosh", "tanh": "_vtanh", "exp": "np.exp",
                "log": "np.log", "sqrt": "np.sqrt", "abs": "np.abs", "min": "_vmin",
                "max": "_vmax", "sign": "_vsign", "ramp": "_vramp"}
_NUMPY_NAMESPACE = {"np": np, "_vpow": _vpow, "_vdiv": _vdiv, "_vmod": _vmod, "_vmin": _vmin,
                    "_vmax": _vmax, "_vsign": _vsign, "_vramp": _vramp, "_vtanh": _vtanh,
                    "_vstepfam": _vstepfam, **CONSTANTS, "__builtins__": {}}


def _vector_sampling() -> bool:
    """Whether numpy's ufuncs give here the numbers of the ``math`` functions (checked on
    x86-64 with AVX2, numpy 1.24 and 2.2): not where numpy has vector versions of its own (AVX-512
    on x86-64: SVML and numpy's exp and log; other processors' own routines): there
    :meth:`TimeFunction.sample` goes point by point."""
    import platform
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:
        try:
            from numpy.core._multiarray_umath import __cpu_features__ as features
        except ImportError:
            return False
    return not any(on for name, on in features.items() if name.startswith("AVX512"))


#: :meth:`TimeFunction.sample` computes whole arrays at once (:func:`_vector_sampling`).
VECTOR_SAMPLING = _vector_sampling()


@functools.lru_cache(maxsize=None)
def _numba_namespace() -> dict:
    import numba
    jit = numba.njit(cache=False)
    return {"math": math, "abs": abs, "min": min, "max": max,
            "_sign": jit(_sign), "_ramp": jit(_ramp), "_stepfam": jit(_stepfam)}


@functools.lru_cache(maxsize=512)
def _numba_compile(sources: tuple[str, ...], as_tuple: bool = False):
    """njit ``t -> float`` (one source) or ``t -> (float, ...)``, compiled eagerly."""
    import numba
    from numba import types
    namespace = dict(_numba_namespace())
    lines = [f"    v{k} = float({s})\n    if not math.isfinite(v{k}):\n"
             f"        raise ArithmeticError('not finite')\n" for k, s in enumerate(sources)]
    if not as_tuple:
        body, sig = "v0", types.float64(types.float64)
    else:
        body = "(" + "".join(f"v{k}, " for k in range(len(sources))) + ")"
        sig = types.UniTuple(types.float64, len(sources))(types.float64)
    exec(compile(f"def _time_function(t):\n{''.join(lines)}    return {body}\n",
                 "<time function>", "exec"), namespace)
    return numba.njit(sig, cache=False)(namespace["_time_function"])


def _float_pow(x, y):
    """``x**y`` for floats by ``math.pow``: ValueError for a negative ``x`` to a fractional power
    (``**`` would give a complex number) and for 0 to a negative power."""
    return math.pow(x, y)


@dataclass(frozen=True)
class TimeFunction:
    """A validated function of time ``f(t)``; call it with ``t`` in s.

    Parameters
    ----------
    text : str
        The expression as the user wrote it; kept verbatim for the file.
    where : tuple of (str, str), optional
        The model element and field the expression belongs to, e.g. ``("Hinge 'J1'", "Driver")``:
        named by an :class:`EvaluationError`. Not part of the comparison.
    """

    text: str
    where: Optional[tuple] = field(default=None, compare=False)
    _fn: Callable = field(init=False, repr=False, compare=False)
    _tree: tuple = field(init=False, repr=False, compare=False)
    _order: int = field(init=False, repr=False, compare=False, default=0)
    _source: str = field(init=False, repr=False, compare=False, default="")

    def __post_init__(self, max_depth=MAX_DEPTH):
        src = self.text.strip()
        if not src:
            raise ExpressionError("empty expression")
        tree = _syntax_tree(src, max_depth)
        try:
            node = _from_ast(tree)
            namespace = {name: fn for name, (fn, _) in FUNCTIONS.items()}
            namespace.update(CONSTANTS)
            namespace["__builtins__"] = {}
            namespace["_float"] = float  # not a name an expression can use: they are checked
            namespace["_pow"] = _float_pow
            code = compile(f"lambda t: _float({_emit(node, 'python')[0]})", "<time function>",
                           "eval")
        except (RecursionError, MemoryError):
            raise ExpressionError(f"nested more than {max_depth} levels deep") from None
        object.__setattr__(self, "_tree", node)
        object.__setattr__(self, "_fn", eval(code, namespace))
        object.__setattr__(self, "_source", self.text)

    def __call__(self, t: float) -> float:
        try:
            v = self._fn(t)
        except (ArithmeticError, ValueError, TypeError) as exc:
            raise self._error(t, _reason(exc)) from None
        if not math.isfinite(v):
            raise self._error(t, f"the value is {v} (not a finite number)")
        return v

    def sample(self, ts) -> np.ndarray:
        """The values at the times ``ts`` (1-D array): the numbers a call at each time gives.

        Computed on the whole array at once (numpy); where that meets a floating-point
        exception (a division by zero, a domain error, an overflow, even in a branch of ``ifpos``
        not taken) or a value that is not finite, point by point, which raises the
        :class:`EvaluationError` a call would.
        """
        ts = np.asarray(ts, dtype=float)
        if not VECTOR_SAMPLING:
            return np.fromiter(map(self, ts.tolist()), dtype=float, count=ts.size)
        vec = self.__dict__.get("_vec")
        if vec is None:
            code = compile(f"lambda t: {_emit(self._tree, 'numpy')[0]}", "<time function>",
                           "eval")
            vec = eval(code, dict(_NUMPY_NAMESPACE))
            object.__setattr__(self, "_vec", vec)
        try:
            with np.errstate(divide="raise", over="raise", invalid="raise", under="ignore"):
                v = np.array(np.broadcast_to(vec(ts), ts.shape), dtype=float)
            if np.all(np.isfinite(v)):
                return v
        except (ArithmeticError, ValueError, TypeError):
            pass
        return np.fromiter(map(self, ts.tolist()), dtype=float, count=ts.size)

    def _error(self, t, reason) -> EvaluationError:
        where = (*(self.where or ("Expression", "Text")), self._source or self.text)
        return EvaluationError(self.text, float(t), reason, where, self._order)

    def __reduce__(self):
        if self._order:
            return (_nth_derivative, (self._source, self.where, self._order))
        return (TimeFunction, (self.text, self.where))

    def _owned(self, where, order, source) -> TimeFunction:
        """A copy of this function (a derivative of ``source``) that names ``where``."""
        g = object.__new__(TimeFunction)
        g.__dict__.update(self.__dict__)
        object.__setattr__(g, "where", where)
        object.__setattr__(g, "_order", order)
        object.__setattr__(g, "_source", source)
        return g

    @property
    def is_constant(self) -> bool:
        """True when the expression does not mention ``t``."""
        return not _has_t(self._tree)

    def value_if_constant(self) -> float | None:
        """The value when :attr:`is_constant`, else None."""
        return self(0.0) if self.is_constant else None

    def derivative(self, order: int = 1) -> TimeFunction:
        """The ``order``-th derivative d^n f / dt^n, symbolic (almost everywhere for kinks).

        ``order=0`` returns ``self``. The result's ``text`` is an ordinary expression, simplified
        (no ``0*x``, ``1*x``, ``x + 0``; numbers folded where the result stays readable).
        """
        if isinstance(order, bool) or not isinstance(order, int) or order < 0:
            raise ValueError(f"order must be an integer >= 0, got {order!r}")
        if order == 0:
            return self
        f = self
        for k in range(order):
            try:
                f = _derivative(f.text)
            except ExpressionError as exc:
                what = "its derivative" if self._order + k == 0 else \
                    f"its {_ORDINAL.get(self._order + k + 1, f'{self._order + k + 1}th')} " \
                    "derivative"
                raise ExpressionError(f"{what} is too large or too deeply nested to compute "
                                      f"({exc}); write a simpler expression") from None
        return f._owned(self.where, self._order + order, self._source)

    def numba(self):
        """This function compiled by ``numba.njit``: ``f(t) -> float``, signature float64(float64).

        Compiled once per expression (cached). Call it from other njit code by passing it as an
        argument or by closing over it.
        """
        return _numba_compile((_emit(self._tree, "numba")[0],))

    def numba_derivatives(self, order: int = 2):
        """njit ``t -> (f, f', ..., f^(order))``, a tuple of floats: e.g. a driver's q, dq, ddq."""
        fs = [self.derivative(k) for k in range(order + 1)]
        return _numba_compile(tuple(_emit(f._tree, "numba")[0] for f in fs), True)


def _derived(text: str) -> TimeFunction:
    """A derivative's text parsed with room for the nesting that differentiation adds."""
    f = object.__new__(TimeFunction)
    for name, value in (("text", text), ("where", None), ("_order", 0), ("_source", "")):
        object.__setattr__(f, name, value)
    f.__post_init__(max_depth=4 * MAX_DEPTH)
    return f


@functools.lru_cache(maxsize=1024)
def _derivative(text: str) -> TimeFunction:
    """The derivative of ``text``; ExpressionError when it takes too much work or nesting."""
    _BUDGET.left = MAX_DERIVATIVE_WORK
    try:
        out = _text(_d(_canon(_derived(text)._tree)))
    except _TooLarge:
        raise ExpressionError(f"more than {MAX_DERIVATIVE_WORK:,} steps of work") from None
    except RecursionError:
        raise ExpressionError("nested too deeply") from None
    finally:
        _BUDGET.left = None
    return _derived(out)


def _nth_derivative(source, where, order) -> TimeFunction:
    """Unpickle a derivative: ``parse(source, *where).derivative(order)``."""
    return TimeFunction(source, where).derivative(order)


def parse(text: str, element: Optional[str] = None, field: Optional[str] = None) -> TimeFunction:
    """Validate ``text`` and return the :class:`TimeFunction`; raise :class:`ExpressionError`.

    ``element`` and ``field`` (e.g. ``"Hinge 'J1'"``, ``"Driver"``) name the expression's place in
    the model: an :class:`EvaluationError` of the function or of its derivatives names them.
    """
    return TimeFunction(str(text), (element, field) if element else None)
