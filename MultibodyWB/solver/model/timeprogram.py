"""Functions of time evaluated inside compiled code: a :class:`~.timefunction.TimeFunction` as a
small postfix program that one compiled interpreter (:func:`run_program`) evaluates at any t.

The fixed-step runs evaluate the drivers and force magnitudes beforehand, in Python, on the
half-step grid of a chunk of steps. An adaptive integrator chooses its times as it goes, so its
compiled run (:mod:`..methods.mstmm.adaptive`) evaluates them itself: every expression of a
model (each driver's value and its first and second derivative, the texts
:meth:`TimeFunction.derivative` writes, and each force magnitude) is turned into a program of
``(opcode, operand)`` pairs, and all the programs of a model are packed into flat arrays with
offsets (:class:`Programs`, :func:`pack`). No code is generated or compiled per expression: the
interpreter is compiled once (cached, with the warm-up's adaptive stage).

Numbers: each operation is the one the Python form makes (same order, same rounding; the
functions of ``math`` are glibc's in both), so a program gives the Python form's value to the
bit (``tests/test_timeprogram.py``). Errors: where the Python form raises (a division or ``%``
by zero, a function outside its domain or overflowing, ``math.pow``'s domain and range errors:
a result that is NaN from arguments that are not, or infinite from finite arguments) or its
result is not finite, the program gives NaN; the caller then evaluates the Python form at that
time, which raises the :class:`~.timefunction.EvaluationError` naming the element and field.
``ifpos`` evaluates only the branch it takes, as the Python form does.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from ..maths.small import _JIT
from .timefunction import CONSTANTS, TimeFunction, _STEPS

# opcodes: a value pushed, an operation on the values on top of the stack, or a jump
NUM, TIME, ADD, SUB, MUL, DIV, POW, MOD, NEG, JUMP_NOT_POS, JUMP = range(11)
(SIN, COS, TAN, ASIN, ACOS, ATAN, ATAN2, SINH, COSH, TANH, EXP, LOG, SQRT, ABS, MIN, MAX, SIGN,
 RAMP, STEPFAM) = range(20, 39)
#: the opcode of each function of :data:`.timefunction.FUNCTIONS` but ifpos and the steps
FUNCTION_OPS = {"sin": SIN, "cos": COS, "tan": TAN, "asin": ASIN, "acos": ACOS, "atan": ATAN,
                "atan2": ATAN2, "sinh": SINH, "cosh": COSH, "tanh": TANH, "exp": EXP,
                "log": LOG, "sqrt": SQRT, "abs": ABS, "min": MIN, "max": MAX, "sign": SIGN,
                "ramp": RAMP}
_BINARY = {"add": ADD, "sub": SUB, "mul": MUL, "div": DIV, "pow": POW, "mod": MOD}

#: The programs of a model, packed: program ``k`` is ``ops[start[k]:start[k + 1]]`` with its
#: operands ``args`` (a number's index in ``consts``, a jump's target, a step's degree and
#: order ``10 deg + n``); ``stack``: room for the deepest program's values.
Programs = namedtuple("Programs", "ops args consts start stack")


class _Emitter:
    """Builds one program (postfix, jumps for ifpos) and its stack depth."""

    def __init__(self, consts):
        self.ops, self.args, self.consts = [], [], consts
        self.depth = self.deepest = 0

    def _op(self, op, arg=0, change=0):
        self.ops.append(op)
        self.args.append(arg)
        self.depth += change
        self.deepest = max(self.deepest, self.depth)

    def number(self, v):
        self.consts.append(float(v))
        self._op(NUM, len(self.consts) - 1, 1)

    def emit(self, n):
        k = n[0]
        if k == "num":
            self.number(n[1])
        elif k == "t":
            self._op(TIME, 0, 1)
        elif k == "const":
            self.number(CONSTANTS[n[1]])
        elif k == "neg":
            self.emit(n[1])
            self._op(NEG)
        elif k in _BINARY:
            self.emit(n[1])
            self.emit(n[2])
            self._op(_BINARY[k], 0, -1)
        elif k == "call":
            name, args = n[1], n[2]
            if name == "ifpos":
                self.emit(args[0])
                jump_b = len(self.ops)
                self._op(JUMP_NOT_POS, 0, -1)
                self.emit(args[1])
                jump_end = len(self.ops)
                self._op(JUMP, 0, -1)             # one of the two branches leaves its value
                self.args[jump_b] = len(self.ops)
                self.emit(args[2])
                self.args[jump_end] = len(self.ops)
                return
            for a in args:
                self.emit(a)
            if name in _STEPS:
                deg, order = _STEPS[name]
                self._op(STEPFAM, 10 * deg + order, 1 - len(args))
            else:
                self._op(FUNCTION_OPS[name], 0, 1 - len(args))
        else:
            raise ValueError(f"unknown node {k!r}")


def program(f: TimeFunction):
    """``(ops, args, consts, depth)`` of one function (lists; :func:`pack` packs many)."""
    consts = []
    e = _Emitter(consts)
    e.emit(f._tree)
    return e.ops, e.args, consts, e.deepest


def pack(functions) -> Programs:
    """The programs of ``functions`` (TimeFunction each) in one :data:`Programs`, in order."""
    ops, args, consts, start, deepest = [], [], [], [0], 1
    for f in functions:
        o, a, c, d = program(f)
        base_c, base_o = len(consts), len(ops)
        for op, arg in zip(o, a):
            ops.append(op)
            args.append(arg + (base_c if op == NUM else
                               base_o if op in (JUMP, JUMP_NOT_POS) else 0))
        consts.extend(c)
        start.append(len(ops))
        deepest = max(deepest, d)
    return Programs(np.array(ops, dtype=np.int64), np.array(args, dtype=np.int64),
                    np.array(consts or [0.0], dtype=np.float64),
                    np.array(start, dtype=np.int64), np.zeros(deepest + 1))


def model_programs(drivers, magnitudes) -> Programs:
    """The programs of a model's time functions: driver ``k``'s value, first and second
    derivative are programs ``3 k``, ``3 k + 1``, ``3 k + 2`` (``drivers``: the triples
    ``(f, f', f'')``, as :meth:`System.driver_values` takes them); magnitude ``j`` is program
    ``3 nd + j``. :func:`fill_time_functions` fills the arrays a kernel evaluation takes."""
    return pack([g for triple in drivers for g in triple] + list(magnitudes))


# -- compiled --------------------------------------------------------------------------------------

@njit(**_JIT)
def _checked1(x, r):
    """``r = f(x)`` as ``math`` gives it, or NaN where ``math`` raises: NaN from a number,
    infinite from a finite one."""
    if (r != r and x == x) or (math.isinf(r) and math.isfinite(x)):
        return math.nan
    return r


@njit(**_JIT)
def _pymod(a, b):
    """Python's float ``a % b`` (the sign of ``b``); NaN for b == 0 (Python raises)."""
    if b == 0.0:
        return math.nan
    m = np.fmod(a, b)
    if m != 0.0:
        if (b < 0.0) != (m < 0.0):
            m += b
    else:
        m = math.copysign(0.0, b)
    return m


@njit(**_JIT)
def _step_family(code, x, x0, h0, x1, h1):
    """``timefunction._stepfam(deg, n, ...)`` with ``code = 10 deg + n``: the same
    arithmetic; NaN where it divides by zero."""
    deg, n = code // 10, code % 10
    if x <= x0:
        return h0 if n == 0 else 0.0
    if x >= x1:
        return h1 if n == 0 else 0.0
    w = x1 - x0
    if w == 0.0:
        return math.nan
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
    wn = math.pow(w, float(n))          # Python's float ** int: libm's pow; it raises for an
    if wn == 0.0 or not math.isfinite(wn):  # overflow, and the division after an underflow
        return math.nan
    return (h1 - h0) * p / wn


@njit(**_JIT)
def run_program(ops, args, consts, start, end, t, stack):
    """The value at ``t`` of the program ``ops[start:end]`` (see :data:`Programs`); NaN where
    the Python form raises or its value is not finite."""
    sp = 0
    pc = start
    while pc < end:
        op = ops[pc]
        a = args[pc]
        pc += 1
        if op == NUM:
            stack[sp] = consts[a]
            sp += 1
        elif op == TIME:
            stack[sp] = t
            sp += 1
        elif op == JUMP_NOT_POS:
            sp -= 1
            if not stack[sp] > 0.0:
                pc = a
        elif op == JUMP:
            pc = a
        elif op == NEG:
            stack[sp - 1] = -stack[sp - 1]
        elif op < 20:
            sp -= 1
            x = stack[sp - 1]
            y = stack[sp]
            if op == ADD:
                r = x + y
            elif op == SUB:
                r = x - y
            elif op == MUL:
                r = x * y
            elif op == DIV:
                if y == 0.0:
                    return math.nan
                r = x / y
            elif op == MOD:
                r = _pymod(x, y)
                if y == 0.0:
                    return math.nan
            else:                                    # POW: math.pow
                r = math.pow(x, y)
                if math.isfinite(x) and math.isfinite(y) and not math.isfinite(r):
                    return math.nan
            stack[sp - 1] = r
        elif op == STEPFAM:
            sp -= 4
            r = _step_family(a, stack[sp - 1], stack[sp], stack[sp + 1], stack[sp + 2],
                             stack[sp + 3])
            if r != r:
                return math.nan
            stack[sp - 1] = r
        elif op == ATAN2 or op == MIN or op == MAX:
            sp -= 1
            x = stack[sp - 1]
            y = stack[sp]
            if op == ATAN2:
                r = math.atan2(x, y)
                if r != r and x == x and y == y:
                    return math.nan
            elif op == MIN:
                r = y if y < x else x               # Python's min: the first unless less
            else:
                r = y if y > x else x
            stack[sp - 1] = r
        elif op == RAMP:
            sp -= 2
            x = stack[sp - 1]
            stack[sp - 1] = stack[sp + 1] * (x - stack[sp]) if x > stack[sp] else 0.0
        else:
            x = stack[sp - 1]
            if op == ABS:
                r = abs(x)
            elif op == SIGN:
                r = math.copysign(1.0, x) if x != 0.0 else 0.0
            else:
                if op == SIN:
                    r = math.sin(x)
                elif op == COS:
                    r = math.cos(x)
                elif op == TAN:
                    r = math.tan(x)
                elif op == ASIN:
                    r = math.asin(x)
                elif op == ACOS:
                    r = math.acos(x)
                elif op == ATAN:
                    r = math.atan(x)
                elif op == SINH:
                    r = math.sinh(x)
                elif op == COSH:
                    r = math.cosh(x)
                elif op == TANH:
                    r = math.tanh(x)
                elif op == EXP:
                    r = math.exp(x)
                elif op == LOG:
                    r = math.log(x) if x > 0.0 else (math.nan if x == x else x)
                else:
                    r = math.sqrt(x) if x >= 0.0 else (math.nan if x == x else x)
                r = _checked1(x, r)
                if r != r and x == x:
                    return math.nan
            stack[sp - 1] = r
    r = stack[0]
    if not math.isfinite(r):
        return math.nan
    return r


@njit(**_JIT)
def fill_time_functions(ops, args, consts, start, stack, nd, t, drv, mags):
    """The drivers' (value, rate, acceleration) into ``drv`` (nd, 3) and the magnitudes into
    ``mags`` at ``t`` from the programs of :func:`model_programs`; False when one is NaN (the
    caller evaluates the Python forms at ``t`` for the error)."""
    ok = True
    for k in range(nd):
        for c in range(3):
            p = 3 * k + c
            v = run_program(ops, args, consts, start[p], start[p + 1], t, stack)
            drv[k, c] = v
            if v != v:
                ok = False
    for j in range(start.size - 1 - 3 * nd):
        p = 3 * nd + j
        v = run_program(ops, args, consts, start[p], start[p + 1], t, stack)
        mags[j] = v
        if v != v:
            ok = False
    return ok


@njit(**_JIT)
def sample_programs(ops, args, consts, start, stack, ts, out):
    """Every program at every time of ``ts`` into ``out`` (programs, times): for the tests
    and the warm-up."""
    for p in range(start.size - 1):
        for i in range(ts.size):
            out[p, i] = run_program(ops, args, consts, start[p], start[p + 1], ts[i], stack)


def evaluate(programs: Programs, ts) -> np.ndarray:
    """Every program of ``programs`` at the times ``ts``: (programs, times), NaN where the Python
    form raises."""
    ts = np.ascontiguousarray(ts, dtype=np.float64).reshape(-1)
    P = programs
    out = np.empty((P.start.size - 1, ts.size))
    sample_programs(P.ops, P.args, P.consts, P.start, P.stack, ts, out)
    return out
