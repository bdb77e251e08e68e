"""Expression trees of the functions of time: built from a validated syntax tree, written back
as text or as the source of a compiled or vectorised form, simplified, and differentiated.

The evaluation (Python, numba and numpy forms), the validation of the text and
:class:`~.timefunction.TimeFunction` are in :mod:`.timefunction`, which uses this module; the
language itself (the functions, the step family, the limits) is documented there.

A tree is nested tuples, compared structurally (see the banner below). :func:`_emit` writes one in
four modes; :func:`_d` differentiates one within the work budget :data:`_BUDGET` that
:func:`.timefunction._derivative` sets; the simplifying constructors (:func:`_add`, :func:`_mul`,
...) are used by the derivative only, so that an expression as written is evaluated operation for
operation, with the rounding the user wrote.
"""

from __future__ import annotations

import ast
import math
import threading
from fractions import Fraction
from typing import Optional

# The step family: name -> (degree, derivative order). The derivative of the member of order n is
# the member of order n + 1 (none after the degree: the derivative is 0 there).
_STEPS = {"step": (3, 0), "dstep": (3, 1), "d2step": (3, 2), "d3step": (3, 3),
          "step5": (5, 0), "dstep5": (5, 1), "d2step5": (5, 2), "d3step5": (5, 3),
          "d4step5": (5, 4), "d5step5": (5, 5)}
_STEP_NAME = {v: k for k, v in _STEPS.items()}


CONSTANTS = {"pi": math.pi, "e": math.e}


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


# ---- names in the emitted code -------------------------------------------------------------

_NUMBA_NAMES = {**{f: f"math.{f}" for f in ("sin", "cos", "tan", "asin", "acos", "atan", "atan2",
                                             "sinh", "cosh", "tanh", "exp", "log", "sqrt")},
                "sign": "_sign", "ramp": "_ramp"}

_NUMPY_NAMES = {"sin": "np.sin", "cos": "np.cos", "tan": "np.tan", "asin": "np.arcsin",
                "acos": "np.arccos", "atan": "np.arctan", "atan2": "np.arctan2",
                "sinh": "np.sinh", "cosh": "np.cosh", "tanh": "_vtanh", "exp": "np.exp",
                "log": "np.log", "sqrt": "np.sqrt", "abs": "np.abs", "min": "_vmin",
                "max": "_vmax", "sign": "_vsign", "ramp": "_vramp"}
