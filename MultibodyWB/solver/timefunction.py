"""Functions of time written as expressions: force magnitudes and hinge drivers.

An expression is plain arithmetic in the time ``t`` (s)::

    0.5*sin(2*pi*t) + 0.1*t**2
    step(t, 0, 0, 0.2, 1000)          # smooth cubic step from 0 at t=0 to 1000 at t=0.2

Allowed: numbers, ``t``, ``pi``, ``e``, ``+ - * / ** %``, unary minus, and the functions in
:data:`FUNCTIONS`. Anything else (attribute access, other names, keywords, strings) is rejected by
:func:`parse` with a message that says what is wrong, so a model file cannot run code.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from typing import Callable


def _step(x, x0, h0, x1, h1):
    """Cubic step: h0 for x <= x0, h1 for x >= x1, C1-smooth in between."""
    if x <= x0:
        return h0
    if x >= x1:
        return h1
    s = (x - x0) / (x1 - x0)
    return h0 + (h1 - h0) * s * s * (3.0 - 2.0 * s)


def _ramp(x, x0, slope):
    """0 before x0, then slope * (x - x0)."""
    return slope * (x - x0) if x > x0 else 0.0


FUNCTIONS: dict[str, tuple[Callable, int]] = {
    # name: (callable, number of arguments)
    "sin": (math.sin, 1), "cos": (math.cos, 1), "tan": (math.tan, 1),
    "asin": (math.asin, 1), "acos": (math.acos, 1), "atan": (math.atan, 1),
    "atan2": (math.atan2, 2),
    "sinh": (math.sinh, 1), "cosh": (math.cosh, 1), "tanh": (math.tanh, 1),
    "exp": (math.exp, 1), "log": (math.log, 1), "sqrt": (math.sqrt, 1),
    "abs": (abs, 1), "min": (min, 2), "max": (max, 2),
    "sign": (lambda x: math.copysign(1.0, x) if x != 0 else 0.0, 1),
    "step": (_step, 5), "ramp": (_ramp, 3),
}
CONSTANTS = {"pi": math.pi, "e": math.e}
_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.Mod)
_UNOPS = (ast.UAdd, ast.USub)


class ExpressionError(ValueError):
    """An expression that is not a valid function of time."""


def _check(node: ast.AST) -> None:
    if isinstance(node, ast.Expression):
        _check(node.body)
    elif isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise ExpressionError(f"{node.value!r} is not a number")
    elif isinstance(node, ast.Name):
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
    else:
        raise ExpressionError(f"'{ast.unparse(node)}' is not allowed in a function of time")


@dataclass(frozen=True)
class TimeFunction:
    """A validated function of time ``f(t)``; call it with ``t`` in s.

    Parameters
    ----------
    text : str
        The expression as the user wrote it; kept verbatim for the file.
    """

    text: str
    _fn: Callable = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        src = self.text.strip()
        if not src:
            raise ExpressionError("empty expression")
        try:
            tree = ast.parse(src, mode="eval")
        except SyntaxError as exc:
            raise ExpressionError(f"syntax error in '{src}': {exc.msg}") from None
        _check(tree)
        namespace = {name: fn for name, (fn, _) in FUNCTIONS.items()}
        namespace.update(CONSTANTS)
        namespace["__builtins__"] = {}
        code = compile(tree, "<time function>", "eval")
        object.__setattr__(self, "_fn", lambda t: float(eval(code, namespace, {"t": t})))

    def __call__(self, t: float) -> float:
        return self._fn(t)

    @property
    def is_constant(self) -> bool:
        """True when the expression does not mention ``t``."""
        tree = ast.parse(self.text.strip(), mode="eval")
        return not any(isinstance(n, ast.Name) and n.id == "t" for n in ast.walk(tree))


def parse(text: str) -> TimeFunction:
    """Validate ``text`` and return the :class:`TimeFunction`; raise :class:`ExpressionError`."""
    return TimeFunction(str(text))
