"""The compiled form of the functions of time (model/timeprogram.py) against the Python form
(model/timefunction.py): the same numbers to the bit at many times, for every function of
FUNCTIONS and the derivatives the drivers take; NaN where the Python form raises."""

import math

import numpy as np
import pytest

from MultibodyWB.solver.model import timeprogram as TP
from MultibodyWB.solver.model.timefunction import FUNCTIONS, EvaluationError, parse

# every function of FUNCTIONS at least once, with t inside and outside the steps and ramps
TEXTS = [
    "0.5*sin(2*pi*t) + 0.1*t**2", "cos(3*t) - tan(0.4*t)", "asin(0.3*t) + acos(0.2*t)",
    "atan(5*t) + atan2(t - 0.5, 0.3)", "sinh(t) * cosh(0.5*t) / (1 + tanh(2*t - 1))",
    "exp(-t) * log(1 + t) + sqrt(t + 1)", "abs(t - 1.2) + min(t, 0.7) - max(0.3, t**3)",
    "sign(t - 1) * 3 + sign(t) - sign(t - 10)", "step(t, 0.2, -1, 1.3, 4)",
    "step5(t, 0.1, 0, 1.7, 0.5)", "ramp(t, 0.4, -2.5)", "ifpos(t - 1, sin(t), cos(t))",
    "t % 0.3 + (-t) % 0.7 + 5 % (t + 0.1)", "-(t*3)**2 + 2**-t - (0.5*t)**1.5",
    "dstep(t, 0.2, 1, 1.3, 4) + d2step(t, 0.2, 1, 1.3, 4) + d3step(t, 0.2, 1, 1.3, 4)",
    "dstep5(t, 0, 0, 2, 1) + d2step5(t, 0, 0, 2, 1) + d3step5(t, 0, 0, 2, 1)",
    "d4step5(t, 0.5, 1, 1, 3) + d5step5(t, 0.5, 1, 1, 3)", "e**t - pi", "7", "2.5e-3 * t",
    "step(t, 0, 0, 0.5*t + 0.1, t**2)",                            # ends that move with t
    "step5(sin(t), -0.5, cos(t), 0.5, 2)", "ifpos(sin(7*t), ramp(t, 0.2, 3), -t)",
    "min(0*t, -0*t)", "max(-0*t, 0*t)",                           # Python's choice of zero
]

T = np.concatenate([np.linspace(-0.5, 2.5, 601), [0.0, 0.2, 1.3, 1.0, 0.5, 1e-9, 1e3]])


def python_values(f, ts):
    out = []
    for t in ts:
        try:
            out.append(f(float(t)))
        except EvaluationError:
            out.append(math.nan)
    return np.array(out)


def test_every_function_is_covered():
    used = set()
    for text in TEXTS:
        used |= {name for name in FUNCTIONS if f"{name}(" in text}
    assert used == set(FUNCTIONS)


@pytest.mark.parametrize("order", [0, 1, 2])
def test_programs_give_the_python_numbers(order):
    fs = [parse(text).derivative(order) for text in TEXTS]
    got = TP.evaluate(TP.pack(fs), T)
    for f, row in zip(fs, got):
        want = python_values(f, T)
        same = ((row == want) & (np.signbit(row) == np.signbit(want))) | (
            np.isnan(row) & np.isnan(want))
        assert same.all(), (f.text, T[~same][:5], row[~same][:5], want[~same][:5])


@pytest.mark.parametrize("text, t", [
    ("1/(t - 1)", 1.0), ("log(t - 2)", 1.0), ("log(t - 1)", 1.0), ("sqrt(-t)", 2.0),
    ("(t - 2)**0.5", 1.0), ("0**(-t)", 1.0), ("exp(1000*t)", 1.0), ("t % (t - 1)", 1.0),
    ("atan(exp(1000*t))", 1.0), ("acos(2*t)", 1.0), ("cosh(800*t)", 1.0),
    ("1/(1/(t - 1))", 1.0), ("ifpos(-t, 1, 1/(t - 1))", 1.0), ("sin(1e308*t*10)", 1.0),
    ("10**(400*t)", 1.0), ("1e300*t*1e300", 1.0), ("d5step5(t, 0, 0, 1e100, 1)", 1.0),
    ("d5step5(t, 0, 0, 1e-80, 1)", 5e-81),
])
def test_errors_are_nan_where_python_raises(text, t):
    f = parse(text, "Hinge 'J'", "Driver")
    with pytest.raises(EvaluationError, match="Hinge 'J'"):
        f(t)
    assert math.isnan(TP.evaluate(TP.pack([f]), [t])[0, 0])


@pytest.mark.parametrize("text, t", [
    ("ifpos(t - 2, 1/(t - 1), 3)", 1.0),           # the branch not taken is not evaluated
    ("atan(1e308*t*10)", 1.0),                     # an infinity from + - * is no error in Python
    ("min(t, 1/t)", 1e-300), ("d2step5(t, 0, 0, 1e-100, 1)", 5e-101),
])
def test_no_error_where_python_gives_a_number(text, t):
    f = parse(text)
    assert TP.evaluate(TP.pack([f]), [t])[0, 0] == f(t)


def test_model_programs_fill_drivers_and_magnitudes():
    d = parse("step5(t, 0, 0, 1, 2)")
    m1, m2 = parse("100*sin(t)"), parse("3")
    P = TP.model_programs([(d, d.derivative(1), d.derivative(2))], [m1, m2])
    drv, mags = np.zeros((1, 3)), np.zeros(2)
    for t in (0.0, 0.3, 0.77, 1.5):
        assert TP.fill_time_functions(P.ops, P.args, P.consts, P.start, P.stack, 1, t, drv, mags)
        assert list(drv[0]) == [d(t), d.derivative(1)(t), d.derivative(2)(t)]
        assert list(mags) == [m1(t), 3.0]
    bad = TP.model_programs([], [parse("1/(t - 1)")])
    assert not TP.fill_time_functions(bad.ops, bad.args, bad.consts, bad.start, bad.stack, 0,
                                      1.0, drv, mags)
