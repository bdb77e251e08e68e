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
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from .expression import (_BUDGET, _STEP_NAME, _STEPS, CONSTANTS,
                         _canon, _d, _emit, _from_ast, _has_t, _text, _TooLarge)
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


# ---- compiled forms ------------------------------------------------------------------------------



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
