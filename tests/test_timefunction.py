"""Functions of time: validation, values, symbolic derivatives, numba-compiled forms."""

import math
import pickle
import re
import time
import warnings

import numba
import numpy as np
import pytest

from MultibodyWB.solver.model import timefunction
from MultibodyWB.solver.model.timefunction import (CONSTANTS, FUNCTIONS, EvaluationError,
                                                   ExpressionError, TimeFunction, parse)

# --------------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, message", [
    ("x + 1", "unknown name 'x'"),
    ("sin(t) + foo", "unknown name 'foo'"),
    ("sin", "'sin' is a function"),
    ("t.real", "attribute access 't.real'"),
    ("math.sin(t)", "unknown function 'math.sin'"),
    ("__import__('os')", "unknown function '__import__'"),
    ("t(1)", "unknown function 't'"),
    ("sin(x=t)", "sin() takes no keyword arguments"),
    ("sin(t, 1)", "sin() takes 1 argument(s), got 2"),
    ("atan2(t)", "atan2() takes 2 argument(s), got 1"),
    ("step(t, 0, 1)", "step() takes 5 argument(s), got 3"),
    ("ifpos(t, 1)", "ifpos() takes 3 argument(s), got 2"),
    ("'abc'", "'abc' is not a number"),
    ("t + 'abc'", "'abc' is not a number"),
    ("True", "True is not a number"),
    ("2j*t", "2j is not a number"),
    ("lambda: t", "'lambda: t' is not allowed"),
    ("(lambda: 1)()", "unknown function"),
    ("", "empty expression"),
    ("   ", "empty expression"),
    ("sin(", "syntax error"),
    ("t // 2", "operator FloorDiv is not allowed"),
    ("~t", "operator Invert is not allowed"),
    ("t > 1", "comparisons and conditions are not allowed"),
    ("t if t else 1", "comparisons and conditions are not allowed"),
    ("[t]", "is not allowed in a function of time"),
    ("sin(*[t])", "is not allowed"),
])
def test_parse_errors(text, message):
    with pytest.raises(ExpressionError) as info:
        parse(text)
    assert message in str(info.value)
    assert isinstance(info.value, ValueError)


def test_public_tables_unchanged():
    for name, (fn, nargs) in FUNCTIONS.items():
        assert callable(fn) and isinstance(nargs, int), name
    assert CONSTANTS == {"pi": math.pi, "e": math.e}
    f = TimeFunction("2*t")
    assert f.text == "2*t" and f == parse("2*t") and hash(f) == hash(parse("2*t"))
    assert pickle.loads(pickle.dumps(f))(3.0) == 6.0


# --------------------------------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------------------------------

T0 = 0.7


@pytest.mark.parametrize("text, expected", [
    ("sin(t)", math.sin(T0)), ("cos(t)", math.cos(T0)), ("tan(t)", math.tan(T0)),
    ("asin(t)", math.asin(T0)), ("acos(t)", math.acos(T0)), ("atan(t)", math.atan(T0)),
    ("atan2(1, -t)", math.atan2(1, -T0)),
    ("sinh(t)", math.sinh(T0)), ("cosh(t)", math.cosh(T0)), ("tanh(t)", math.tanh(T0)),
    ("exp(t)", math.exp(T0)), ("log(t)", math.log(T0)), ("sqrt(t)", math.sqrt(T0)),
    ("abs(-t)", T0), ("min(t, 0.5)", 0.5), ("max(t, 0.5)", T0),
    ("sign(-t)", -1.0), ("sign(t)", 1.0), ("sign(0*t)", 0.0),
    ("ifpos(t - 1, 5, 6)", 6.0), ("ifpos(t, 5, 6)", 5.0), ("ifpos(0*t, 5, 6)", 6.0),
    ("ifpos(t - 1, log(t - 1), 6)", 6.0),  # only the chosen branch is evaluated
    ("step(t, 1, 2, 3, 7)", 2.0), ("step(t + 3, 1, 2, 3, 7)", 7.0),
    ("step(t + 1.3, 1, 2, 3, 7)", 4.5),
    ("step5(t + 1.3, 1, 2, 3, 7)", 4.5), ("step5(t - 0.2, 0, 2, 2, 7)", 2 + 5 * 0.103515625),
    ("dstep(t + 1.3, 1, 2, 3, 7)", 5 * 6 * 0.25 / 2), ("d2step(t + 0.8, 1, 2, 3, 7)", 5 * 3 / 4),
    ("d3step(t + 0.8, 1, 2, 3, 7)", -5 * 12 / 8), ("d3step(t + 3, 1, 2, 3, 7)", 0.0),
    ("dstep5(t + 1.3, 1, 2, 3, 7)", 5 * 30 / 16 / 2),
    ("d5step5(t + 1.3, 1, 2, 3, 7)", 5 * 720 / 32),
    ("d4step5(t + 1.3, 1, 2, 3, 7)", 0.0), ("d3step5(t - 1, 1, 2, 3, 7)", 0.0),
    ("ramp(t, 1, 3)", 0.0), ("ramp(t, 0.5, 3)", 3 * (T0 - 0.5)),
    ("pi*e", math.pi * math.e), ("7 % 3 + t", 1 + T0), ("-7 % 3", 2.0), ("t % -0.5", T0 % -0.5),
    ("2**-1*t", 0.5 * T0), ("1/4 - -t", 0.25 + T0), ("+t", T0), ("t**2**2", T0 ** 4),
])
def test_values(text, expected):
    f = parse(text)
    assert f(T0) == pytest.approx(expected, rel=1e-14, abs=1e-14)
    assert isinstance(f(T0), float)


def test_constant():
    assert parse("2*pi + e").is_constant
    assert parse("2*pi + e").value_if_constant() == 2 * math.pi + math.e
    assert not parse("sin(t)").is_constant
    assert parse("sin(t)").value_if_constant() is None
    assert parse("5*pi").derivative().text == "0"
    assert parse("sign(t)").derivative().is_constant


# --------------------------------------------------------------------------------------------------
# Derivatives
# --------------------------------------------------------------------------------------------------

# At the test points (TS) every one of these is smooth: the kinks (abs, min, max, sign, ifpos, %,
# ramp, step ends) lie at least 0.05 away.
TS = (0.3, 1.1, 1.7, 2.9)
EXPRESSIONS = [
    "3*t**2 - 2*t + 1", "+t - -t", "t*t*t/(1 + t)", "-t**2/(2 + t)", "1/t", "t**-2",
    "t**3", "t**0.5", "(1 + t)**(1/3)", "2**t", "e**t", "pi**t", "t**t", "(1 + t**2)**sin(t)",
    "t % 1.5", "t**2 % (1 + t)", "(2*t) % (0.5 + 0.1*t)",
    "sin(2*pi*t)", "0.5*sin(2*pi*t) + 0.1*t**2", "cos(t**2)", "tan(0.3*t)",
    "asin(0.5*sin(t))", "acos(0.3*t)", "atan(t**2)", "atan2(sin(t), 2 + cos(t))",
    "atan2(t - 1, 0.5 + t)", "sinh(0.5*t)", "cosh(t) - sinh(t)", "tanh(t - 1)",
    "exp(-t**2)", "exp(sin(t))*t", "log(t)", "log(2 + sin(t))", "sqrt(1 + t**2)", "sqrt(t)*t",
    "abs(t - 2)", "abs(sin(t))*t", "min(sin(t), cos(t))", "max(t**2, 2*t)", "min(t, 1)*t",
    "sign(t - 2)*t**2", "t*sign(cos(t))",
    "ifpos(t - 1, t**2, sin(t))", "ifpos(sin(3*t), exp(t), -t)",
    "ramp(t, 1, 3)", "ramp(t, 0.5*t, t)", "ramp(t**2, 1, sin(t))",
    "step(t, 1, 2, 2.5, 7)", "step(t, 0, 0, 3, 1000)", "step(sin(t), -0.5, 1, 0.8, 2)",
    "step(t, 0.5*t - 1, 1, 3 + sin(t), t**2)", "step(2, t - 3, t, t + 1, 2*t)",
    "step5(t, 0.5, -1, 2, 3)", "step5(t, -t, t, 2 + t, 3*t)",
    "dstep(t, 0, 0, 3, 1)", "d2step(t, -t, 1, 4, t)", "d3step(t, 0, 0, 3, 1)",
    "dstep5(t, 0, 1, 3, 2)", "d2step5(t, -t, 1, 4, t)", "d3step5(t, 0, 1, 3, 2)",
    "d4step5(t, 0, 1, 3, 2)", "d5step5(t, t - 1, 1, t + 2, 2*t)",
    "sin(cos(t)*t) + exp(sin(t)) - log(1 + t)/(2 + cos(t))",
]


def test_every_function_and_operator_is_covered():
    used = set()
    for text in EXPRESSIONS:
        used |= set(re.findall(r"([a-z_][a-z0-9_]*)\(", text))
    assert used == set(FUNCTIONS)
    joined = " ".join(EXPRESSIONS)
    for op in ("+", "-", "*", "/", "**", "%", "+t", "-t"):
        assert op in joined


def _fd(f, t, h=1e-5):
    return (f(t + h) - f(t - h)) / (2 * h)


@pytest.mark.parametrize("text", EXPRESSIONS)
def test_derivatives_match_finite_differences(text):
    f = parse(text)
    chain = [f] + [f.derivative(k) for k in (1, 2, 3)]
    for lower, higher in zip(chain, chain[1:]):
        assert parse(higher.text) == higher  # an ordinary expression
        for t in TS:
            fd = _fd(lower, t)
            assert higher(t) == pytest.approx(fd, rel=2e-6, abs=2e-6 * (1 + abs(fd))), \
                f"d/dt [{lower.text}] = {higher.text} at t={t}"
    assert f.derivative(2).text == f.derivative().derivative().text


def _random_expression(rng, depth):
    """A random smooth expression (bounded arguments keep every function in its domain)."""
    if depth == 0:
        return str(rng.choice(["t", "t", "0.5", "2", "1.3", "pi", "e"]))
    a = _random_expression(rng, depth - 1)
    b = _random_expression(rng, rng.integers(0, depth))
    forms = ["({a}) + ({b})", "({a}) - ({b})", "({a})*({b})", "-({a})", "({a})/(2 + sin({b}))",
             "({a})**2", "({a})**3", "(1 + ({a})**2)**0.5", "(2 + cos({a}))**({b})", "2**sin({a})",
             "sin({a})", "cos({a})", "tan(0.5*sin({a}))", "asin(0.5*sin({a}))",
             "acos(0.5*cos({a}))", "atan({a})", "atan2({a}, 2 + cos({b}))", "sinh(sin({a}))",
             "cosh(sin({a}))", "tanh({a})", "exp(sin({a}))", "log(2 + cos({a}))",
             "sqrt(1 + ({a})**2)", "step5(sin({a}), -2, {b}, 2, 1)",
             "step(cos({a}), -2, 1, 2, {b})"]
    return str(rng.choice(forms)).format(a=a, b=b)


def test_random_expressions():
    """Derivatives of random compositions against finite differences; values against eval."""
    rng = np.random.default_rng(20240611)
    env = {name: fn for name, (fn, _) in FUNCTIONS.items()}
    env.update(CONSTANTS)
    for _ in range(150):
        text = _random_expression(rng, 4)
        f = parse(text)
        d1, d2 = f.derivative(), f.derivative(2)
        for t in (0.3, 0.9, 1.7):
            # the compiled Python form computes exactly what the text says
            assert f(t) == float(eval(text, {"__builtins__": {}}, dict(env, t=t)))
            for lower, higher in ((f, d1), (d1, d2)):
                fd = _fd(lower, t)
                assert higher(t) == pytest.approx(fd, rel=1e-5, abs=1e-6 * (1 + abs(lower(t)))), \
                    f"d/dt [{lower.text}] = {higher.text} at t={t}"


@pytest.mark.parametrize("text, d1, d2", [
    ("sin(2*pi*t)", "2*pi*cos(2*pi*t)", "-4*pi**2*sin(2*pi*t)"),
    ("0.5*sin(2*pi*t) + 0.1*t**2", "pi*cos(2*pi*t) + 0.2*t", "0.2 - 2*pi**2*sin(2*pi*t)"),
    ("t**3", "3*t**2", "6*t"),
    ("1/t", "-1/t**2", "2/t**3"),
    ("(1 + t)**(1/3)", "(1 + t)**(-2/3)/3", "-2*(1 + t)**(-5/3)/9"),
    ("exp(-t**2)", "-2*t*exp(-t**2)", "4*t**2*exp(-t**2) - 2*exp(-t**2)"),
    ("sqrt(1 + t**2)", "t/sqrt(1 + t**2)", "1/sqrt(1 + t**2) - t**2/sqrt(1 + t**2)**3"),
    ("2**t", "log(2)*2**t", "log(2)**2*2**t"),
    ("e**t", "e**t", "e**t"),
    ("t**t", "t**t*(log(t) + 1)", None),
    ("log(t)", "1/t", "-1/t**2"),
    ("tanh(t)", "1/cosh(t)**2", "-2*sinh(t)/cosh(t)**3"),
    ("abs(sin(t))", "cos(t)*sign(sin(t))", "-sin(t)*sign(sin(t))"),
    ("min(t, 1)", "ifpos(t - 1, 0, 1)", "0"),
    ("max(sin(t), cos(t))", "ifpos(cos(t) - sin(t), -sin(t), cos(t))",
     "ifpos(cos(t) - sin(t), -cos(t), -sin(t))"),
    ("sign(t - 1)", "0", "0"),
    ("ramp(t, 1, 3)", "ifpos(t - 1, 3, 0)", "0"),
    ("t % 1.5", "1", "0"),
    ("step(t, 0, 0, 0.2, 1000)", "dstep(t, 0, 0, 0.2, 1000)", "d2step(t, 0, 0, 0.2, 1000)"),
    ("3*step5(2*t, 0, 0, 1, 1)", "6*dstep5(2*t, 0, 0, 1, 1)", "12*d2step5(2*t, 0, 0, 1, 1)"),
    ("d3step(t, 0, 0, 1, 1)", "0", "0"),
    ("ifpos(t, t**2, -t)", "ifpos(t, 2*t, -1)", "ifpos(t, 2, 0)"),
    ("-(t - 1)*3", "-3", "0"),
])
def test_exact_derivatives(text, d1, d2):
    f = parse(text)
    assert f.derivative().text == d1
    if d2 is not None:
        assert f.derivative(2).text == d2


def test_derivative_of_sin_2_pi_t_evaluates_exactly():
    d = parse("sin(2*pi*t)").derivative()
    for t in np.linspace(-1, 1, 21):
        assert d(t) == pytest.approx(2 * math.pi * math.cos(2 * math.pi * t), rel=1e-15, abs=1e-14)


def test_derivative_order():
    f = parse("t**4")
    assert f.derivative(0) is f
    assert [f.derivative(k).text for k in range(6)] == ["t**4", "4*t**3", "12*t**2", "24*t",
                                                        "24", "0"]
    for bad in (-1, 1.5, True, "1"):
        with pytest.raises(ValueError):
            f.derivative(bad)


def test_nonsmooth_derivatives_almost_everywhere():
    assert parse("abs(t - 1)").derivative()(0.5) == -1.0
    assert parse("abs(t - 1)").derivative()(1.5) == 1.0
    assert parse("min(t, 1)").derivative()(0.5) == 1.0
    assert parse("min(t, 1)").derivative()(2.0) == 0.0
    assert parse("max(t, 1)").derivative()(0.5) == 0.0
    assert parse("max(t, 1)").derivative()(2.0) == 1.0
    assert parse("ramp(t, 1, 3)").derivative()(0.5) == 0.0
    assert parse("ramp(t, 1, 3)").derivative()(1.5) == 3.0
    assert parse("sign(t)").derivative()(1.0) == 0.0
    d = parse("t % 2 + t**2 % 3").derivative()
    assert d(1.0) == pytest.approx(1 + 2 * 1.0)


@pytest.mark.parametrize("x0, x1", [(1.0, 3.0), (-0.5, 0.2)])
def test_step_derivatives_at_the_ends(x0, x1):
    eps = 1e-9
    h0, h1 = 2.0, 7.0
    w = x1 - x0
    # cubic step: C1. The first derivative tends to 0 from both sides of each end ...
    d1 = parse(f"step(t, {x0}, {h0}, {x1}, {h1})").derivative()
    d2 = d1.derivative()
    for x in (x0, x1):
        assert abs(d1(x - eps)) < 1e-6 and abs(d1(x + eps)) < 1e-6 and d1(x) == 0.0
    # ... and its second derivative jumps by 6*(h1-h0)/w**2 (documented)
    jump = 6 * (h1 - h0) / w ** 2
    assert d2(x0 - eps) == 0.0 and d2(x0 + eps) == pytest.approx(jump, rel=1e-6)
    assert d2(x1 - eps) == pytest.approx(-jump, rel=1e-6) and d2(x1 + eps) == 0.0
    # quintic step: C2. First and second derivatives tend to 0 at both ends, the third jumps
    g = parse(f"step5(t, {x0}, {h0}, {x1}, {h1})")
    g1, g2, g3 = (g.derivative(k) for k in (1, 2, 3))
    for x in (x0, x1):
        for d in (g1, g2):
            assert abs(d(x - eps)) < 1e-6 and abs(d(x + eps)) < 1e-6
        assert g(x - eps) == pytest.approx(g(x + eps), abs=1e-8)
    assert g3(x0 - eps) == 0.0 and g3(x0 + eps) == pytest.approx(60 * (h1 - h0) / w ** 3, rel=1e-6)
    # inside, the derivatives are continuous and match finite differences
    ts = np.linspace(x0 + 0.01 * w, x1 - 0.01 * w, 7)
    for t in ts:
        assert d1(t) == pytest.approx(_fd(parse(f"step(t, {x0}, {h0}, {x1}, {h1})"), t), rel=1e-6)
        assert g2(t) == pytest.approx(_fd(g1, t), rel=1e-5, abs=1e-6)


# --------------------------------------------------------------------------------------------------
# many times at once (TimeFunction.sample: the run's grids of drivers and force magnitudes)
# --------------------------------------------------------------------------------------------------

KINKS = ["t % 1.5", "-t % 1.5", "t % -1.5", "min(t, 1)", "max(t, 1)", "abs(t - 1)", "sign(t - 1)",
         "ramp(t, 1, 2)", "step(t, 1, 2, 2, 5)", "step(t, 1, 2, 1, 5)", "step(t, 2, 2, 1, 5)",
         "step5(t, 1, 2, 2, 5)", "ifpos(t - 1, t**2, 3)", "2**-1*t", "7 % 3 + t", "pi*e*t",
         "t**2", "(t - 1)**2", "sin(t)**2 + abs(cos(2*t))**2.5"]


def _pointwise(g, ts):
    return np.array([g(t) for t in ts.tolist()])


def _same_bits(a, b, msg=""):
    """Equal bit for bit (0.0 and -0.0 differ)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape, msg
    np.testing.assert_array_equal(a.view(np.int64), b.view(np.int64), err_msg=msg)


@pytest.mark.parametrize("text", EXPRESSIONS + KINKS)
def test_sample_gives_the_numbers_of_a_call_at_each_time(text):
    """Bit for bit, every function and operator and their derivatives, across the kinks."""
    f = parse(text)
    ts = np.linspace(0.05, 2.95, 581)
    for g in (f, f.derivative(), f.derivative(2)):
        if g.is_constant:
            continue
        got = g.sample(ts)
        assert got.dtype == float and got.shape == ts.shape
        _same_bits(got, _pointwise(g, ts), g.text)


def test_sample_random_expressions_bit_for_bit():
    rng = np.random.default_rng(20261127)
    ts = np.linspace(0.0, 3.0, 301)
    for _ in range(100):
        f = parse(_random_expression(rng, 4))
        if not f.is_constant:
            _same_bits(f.sample(ts), _pointwise(f, ts), f.text)


def test_sample_keeps_python_s_zeros_and_single_points():
    """min and max choose between 0.0 and -0.0 as Python's do (an atan2 of the result differs
    by 2 pi otherwise); a grid of one point raises to a power as math.pow does (numpy 2 squares
    a stride-0 view)."""
    ts = np.array([-1.0, -0.0, 0.0, 1.0])
    for text in ("min(0, -t)", "max(-t, t)", "min(-t, 0)", "max(0*t, -0*t)",
                 "atan2(min(0, -t), -1)", "atan2(max(-t, t), -1)", "sign(min(0, -t))"):
        f = parse(text)
        _same_bits(f.sample(ts), _pointwise(f, ts), text)
    for text in ("(t + 995.6287103443829)**2", "(t + 1.1)**-1", "(t + 2.3)**0.5",
                 "d2step(t, 0, 0, 995.6287103443829, 1)"):
        f = parse(text)
        for one in (np.array([1.0]), np.array([0.0]), np.array([0.123456789])):
            _same_bits(f.sample(one), _pointwise(f, one), text)


@pytest.mark.skipif(not timefunction.VECTOR_SAMPLING,
                    reason="this processor's numpy has vector maths of its own: point by point")
def test_sample_takes_the_whole_array_at_once(monkeypatch):
    """Without an exception no point is computed alone (the speed of a run's grids)."""
    f = parse("100*exp(-0.5*((0.3 + 62.8*t) % (4*pi) - 6.5)**2/0.04) + step(t, 0, 0, 1, 2)")
    ts = np.linspace(0.0, 1.0, 1001)
    expected = _pointwise(f, ts)

    def no_call(self, t):
        raise AssertionError("a point computed alone")
    monkeypatch.setattr(TimeFunction, "__call__", no_call)
    np.testing.assert_array_equal(f.sample(ts), expected)
    with pytest.raises(AssertionError, match="alone"):
        parse("1/(t - 0.5)").sample(ts)          # the point-by-point way, for its error


def test_sample_errors_are_those_of_a_call():
    """A floating-point exception anywhere (a branch ifpos does not take included) or a value
    that is not finite: the points one by one, which raise what a call raises or give what it
    gives."""
    ts = np.linspace(0.0, 1.0, 11)
    # only the chosen branch counts: sqrt of a negative number in the other is no error
    f = parse("ifpos(t - 0.5, sqrt(t - 0.5), 0)")
    _same_bits(f.sample(ts), _pointwise(f, ts))
    # an overflow on the way that a division takes back: the numbers of the Python form
    f = parse("1/(1e300*t*1e300 + 1)")
    _same_bits(f.sample(ts), _pointwise(f, ts))
    for text in ("1/(t - 0.5)", "log(t - 0.5)", "(t - 0.55)**0.5", "exp(1000*t)", "t % (t - 0.5)",
                 "1/(1e308*10/(t - 0.5))", "atan(1e308*10/(t - 0.5))",
                 "1/(1e308*10 % (t - 0.5))"):
        f = parse(text, "Hinge 'J1'", "Driver")
        with pytest.raises(EvaluationError) as by_sample:
            f.sample(ts)
        with pytest.raises(EvaluationError) as by_call:
            _pointwise(f, ts)
        assert str(by_sample.value) == str(by_call.value)
        assert "Hinge 'J1'" in str(by_sample.value)


# --------------------------------------------------------------------------------------------------
# numba
# --------------------------------------------------------------------------------------------------

TGRID = np.linspace(0.05, 2.95, 30)


@pytest.mark.parametrize("text", EXPRESSIONS)
def test_numba_matches_python(text):
    f = parse(text)
    for g in (f, f.derivative(), f.derivative(2)):
        jit = g.numba()
        for t in TGRID:
            assert jit(t) == pytest.approx(g(t), rel=1e-13, abs=1e-13), f"{g.text} at t={t}"


@pytest.mark.parametrize("text", ["t % 1.5", "-t % 1.5", "t % -1.5", "ifpos(t - 1, log(t - 1), 0)",
                                  "min(t, 1)", "max(t, 1)", "abs(t - 1)", "sign(t - 1)",
                                  "ramp(t, 1, 2)", "step(t, 1, 2, 2, 5)", "step(t, 1, 2, 1, 5)",
                                  "step(t, 2, 2, 1, 5)", "2**-1*t", "7 % 3 + t", "1e300*t",
                                  "pi*e*t"])
def test_numba_matches_python_across_kinks(text):
    f = parse(text)
    jit = f.numba()
    for t in np.linspace(-2, 3, 101):
        assert jit(t) == f(t), f"{text} at t={t}"


def test_numba_is_cached_and_typed():
    f = parse("0.25*sin(3*t) + step(t, 0, 0, 1, 2)")
    jit = f.numba()
    assert parse("0.25*sin(3*t) + step(t, 0, 0, 1, 2)").numba() is jit
    start = time.perf_counter()
    for _ in range(100):
        f.numba()
    assert time.perf_counter() - start < 0.1
    assert len(jit.signatures) == 1
    assert jit(1) == f(1.0)  # an int is converted


def test_numba_derivatives_tuple():
    f = parse("step5(t, 0, 0, 1, 0.5)*sin(t)")
    jet = f.numba_derivatives(2)
    for t in (-0.5, 0.3, 0.7, 1.4):
        q, dq, ddq = jet(t)
        assert q == pytest.approx(f(t), rel=1e-13, abs=1e-15)
        assert dq == pytest.approx(f.derivative()(t), rel=1e-13, abs=1e-15)
        assert ddq == pytest.approx(f.derivative(2)(t), rel=1e-13, abs=1e-15)
    assert parse("t").numba_derivatives(0)(2.0) == (2.0,)
    assert parse("t").numba_derivatives(1)(2.0) == (2.0, 1.0)


@numba.njit(cache=False)
def _sum_over(fn, ts):
    s = 0.0
    for i in range(ts.size):
        s += fn(ts[i])
    return s


def _make_summer(fn):
    @numba.njit(cache=False)
    def summer(n, dt):
        s = 0.0
        for i in range(n):
            s += fn(i * dt)
        return s
    return summer


def test_njit_calling_compiled_time_functions():
    ts = np.linspace(0.0, 2.0, 201)
    for text in ("0.5*sin(2*pi*t) + 0.1*t**2", "step(t, 0, 0, 0.2, 1000)", "ramp(t, 1, 3)"):
        f = parse(text)
        expected = sum(f(t) for t in ts)
        # as a first-class argument
        assert _sum_over(f.numba(), ts) == pytest.approx(expected, rel=1e-12)
        # closed over
        assert _make_summer(f.numba())(201, 0.01) == pytest.approx(expected, rel=1e-12)
        # a derivative too
        d = f.derivative()
        assert _sum_over(d.numba(), ts) == pytest.approx(sum(d(t) for t in ts), rel=1e-12)


def test_njit_iterates_over_several_time_functions():
    fs = [parse("sin(t)"), parse("step(t, 0, 0, 1, 2)"), parse("t**2")]

    @numba.njit(cache=False)
    def total(fns, t):
        s = 0.0
        for fn in fns:
            s += fn(t)
        return s

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", numba.NumbaExperimentalFeatureWarning)
        got = total(tuple(f.numba() for f in fs), 0.4)
    assert got == pytest.approx(sum(f(0.4) for f in fs), rel=1e-14)
