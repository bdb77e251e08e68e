"""Issue 12: every bad model gets a clear answer: no traceback, no hang, no silent misreading.

One test per case of the issue's fuzzing campaign that this module covers; each asserts the exit
code of ``check`` and the Problem's element and field (or the error type and its message).
"""

import io
import math
import re
import time

import numpy as np
import pytest

from MultibodyWB.examples import build
from MultibodyWB.solver import cli
from MultibodyWB.solver.model import xmlio
from MultibodyWB.solver.model import MarkerRef, ModelError, MultibodySystem, Problem, RigidBody
from MultibodyWB.solver.model.timefunction import (MAX_DEPTH, MAX_LENGTH, EvaluationError,
                                             ExpressionError, parse)
from MultibodyWB.solver.model.validation import check_inertia

# --------------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------------


def check_file(path):
    """``check`` in this process: (exit code, printed text)."""
    out = io.StringIO()
    code = cli.main(["check", str(path)], out=out)
    return code, out.getvalue()


def check_text(tmp_path, text, name="model.mbs.xml"):
    path = tmp_path / name
    path.write_text(text)
    return check_file(path)


def crank_slider_text():
    return xmlio.to_string(build("crank_slider"))


def double_pendulum_text():
    return xmlio.to_string(build("double_pendulum"))


def with_driver(expression):
    """The crank-slider with its driver (hinge MainBearing, coordinate rz) replaced."""
    m = build("crank_slider")
    m.hinge("MainBearing").drivers[0].expression = expression
    return xmlio.to_string(m)


def with_magnitude(expression):
    """The crank-slider with its gas force's magnitude replaced."""
    m = build("crank_slider")
    m.forces[0].magnitude = expression
    return xmlio.to_string(m)


def problem_lines(out):
    return [line[4:] for line in out.splitlines() if line.startswith("  - ")]


def assert_problem(out, element, field, *words):
    """``out`` lists a problem of ``element``, field ``field``, whose text has every word."""
    for line in problem_lines(out):
        if line.startswith(element) and f"field {field}:" in line and \
                all(w in line for w in words):
            return line
    raise AssertionError(f"no problem of {element}, field {field} with {words} in:\n{out}")


# --------------------------------------------------------------------------------------------------
# Expressions: size and depth limits (were RecursionError or a hang in the derivative)
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "+".join(["t"] * 5000),                       # t+t+... (RecursionError)
    "(" * 300 + "t" + ")" * 300,                  # (((... (RecursionError / parser limit)
    "-" * 5000 + "t",                             # ------... (RecursionError)
    "sin(" * 150 + "t" + ")" * 150,               # 150 nested sin( (hung in the derivative)
], ids=["long sum", "deep parentheses", "5000 minus signs", "150 nested sin"])
def test_deep_driver_is_refused_by_check_naming_the_hinge(tmp_path, text):
    start = time.perf_counter()
    code, out = check_text(tmp_path, with_driver(text))
    assert time.perf_counter() - start < 20
    assert code == 2
    assert_problem(out, "Hinge 'MainBearing'", "Driver", f"nested more than {MAX_DEPTH} levels")


def test_deep_expression_is_an_expression_error_not_a_recursion_error():
    for text in ("+".join(["t"] * 5000), "-" * 5000 + "t", "(" * 300 + "t" + ")" * 300):
        with pytest.raises(ExpressionError, match="nested more than"):
            parse(text)


def test_derivative_that_grows_too_large_is_refused_in_bounded_time(tmp_path):
    text = "sin(" * 40 + "t" + ")" * 40             # within the depth limit
    start = time.perf_counter()
    with pytest.raises(ExpressionError, match="second derivative is too large"):
        parse(text).derivative(2)
    assert time.perf_counter() - start < 10
    code, out = check_text(tmp_path, with_driver(text))
    assert code == 2
    assert_problem(out, "Hinge 'MainBearing'", "Driver", "derivative is too large")


def test_50_MB_expression_is_refused_at_once():
    text = "t+" * 25_000_000 + "t"
    start = time.perf_counter()
    with pytest.raises(ExpressionError, match=f"at most {MAX_LENGTH:,}"):
        parse(text)
    assert time.perf_counter() - start < 1.0


def test_long_expression_in_a_file_is_refused_and_not_echoed_whole(tmp_path):
    text = "t+" * 100_000 + "t"
    code, out = check_text(tmp_path, with_magnitude(text))
    assert code == 2
    line = assert_problem(out, "Force 'GasForce'", "Magnitude", "characters")
    assert len(line) <= cli.MAX_LINE


# --------------------------------------------------------------------------------------------------
# Expressions: unbounded numbers (big-integer powers held the GUI; 2.0**1024 an OverflowError)
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["9**9**9", "t**(9**9**9)", "2.0**1024", "1" + "0" * 39 + "**9"],
                         ids=["9**9**9", "t**(9**9**9)", "2.0**1024", "40-digit literal**9"])
def test_huge_power_driver_is_refused_by_check_at_once(tmp_path, text):
    start = time.perf_counter()
    code, out = check_text(tmp_path, with_driver(text))
    assert time.perf_counter() - start < 20
    assert code == 2
    assert_problem(out, "Hinge 'MainBearing'", "Driver", "overflow")


def test_huge_power_evaluates_in_bounded_time_to_an_evaluation_error():
    for text in ("9**9**9", "t**(9**9**9)", "2.0**1024"):
        f = parse(text, "Hinge 'J1'", "Driver")
        start = time.perf_counter()
        with pytest.raises(EvaluationError) as info:
            f(1.5)
        assert time.perf_counter() - start < 0.1
        (p,) = info.value.problems
        assert (p.element, p.field) == ("Hinge 'J1'", "Driver")
        assert "t = 1.5 s" in p.message and "overflow" in p.message


def test_40_digit_literal_is_read_as_a_float():
    digits = "1234567890123456789012345678901234567890"
    f = parse(f"{digits}*t")
    assert f(2.0) == 2.0 * float(digits)
    assert f.derivative()(0.0) == pytest.approx(float(digits), rel=1e-15)


@pytest.mark.parametrize("text", ["1e309*t", "1" + "0" * 400, "-1e999"])
def test_non_finite_literal_is_refused(text):
    with pytest.raises(ExpressionError, match="not finite"):
        parse(text)


# --------------------------------------------------------------------------------------------------
# Expressions: evaluation errors name the driver or force and the time
# --------------------------------------------------------------------------------------------------

RUNTIME_CASES = [("1/t", "division by zero"), ("log(t)", "domain"), ("acos(2)", "domain"),
                 ("(t-1)**0.5", "domain"), ("exp(1000)", "overflow"), ("0**-1", "domain"),
                 ("abs((t-1)**0.5)", "domain"), ("t % 0", "division by zero"),
                 ("1e308*10 + t", "not a finite number")]


@pytest.mark.parametrize("text, reason", RUNTIME_CASES)
def test_evaluation_error_names_the_element_field_and_time(text, reason):
    f = parse(text, "Force 'Gas'", "Magnitude")
    with pytest.raises(EvaluationError) as info:
        f(0.0)
    err = info.value
    assert isinstance(err, ModelError) and not isinstance(err, (ZeroDivisionError, OverflowError))
    (p,) = err.problems
    assert (p.element, p.field) == ("Force 'Gas'", "Magnitude")
    assert f"'{text}' cannot be evaluated at t = 0 s" in p.message and reason in p.message
    assert err.t == 0.0 and err.text == text


@pytest.mark.parametrize("text, reason", RUNTIME_CASES[:6])
def test_driver_that_fails_at_the_start_is_refused_by_check(tmp_path, text, reason):
    code, out = check_text(tmp_path, with_driver(text))
    assert code == 2
    assert_problem(out, "Hinge 'MainBearing'", "Driver", "t = 0 s", reason)


def test_force_that_fails_during_the_run_is_refused_by_check(tmp_path):
    code, out = check_text(tmp_path, with_magnitude("sqrt(0.05 - t)"))   # EndTime 0.08
    assert code == 2
    line = assert_problem(out, "Force 'GasForce'", "Magnitude", "domain")
    t = float(re.search(r"t = ([0-9.e-]+) s", line).group(1))
    assert 0.05 < t <= 0.08


def test_derivative_evaluation_error_says_which_derivative():
    f = parse("t*log(t)", "Hinge 'J1'", "Driver")
    assert f(1.0) == 0.0
    with pytest.raises(EvaluationError) as info:
        f.derivative(2)(0.0)
    (p,) = info.value.problems
    assert (p.element, p.field) == ("Hinge 'J1'", "Driver")
    assert p.message.startswith("the second derivative of 't*log(t)'")
    assert "division by zero" in p.message


def test_owner_survives_pickling_of_a_derivative():
    import pickle
    d = parse("1/t", "Hinge 'J1'", "Driver").derivative(1)
    e = pickle.loads(pickle.dumps(d))
    assert e.text == d.text and e(2.0) == d(2.0)
    with pytest.raises(EvaluationError, match="first derivative of '1/t'"):
        e(0.0)


# --------------------------------------------------------------------------------------------------
# Numbers in the file
# --------------------------------------------------------------------------------------------------

def first_mass(text, replacement):
    return re.sub(r"<Mass>[^<]*</Mass>", f"<Mass>{replacement}</Mass>", text, count=1)


@pytest.mark.parametrize("inside", ["<!--x-->", "<?x y?>"], ids=["comment", "processing instr."])
def test_comment_or_instruction_inside_a_number_is_refused(tmp_path, inside):
    code, out = check_text(tmp_path, first_mass(double_pendulum_text(), f"12{inside}5"))
    assert code == 2
    kind = "comment" if inside.startswith("<!") else "processing instruction"
    assert_problem(out, "RigidBody 'Upper'", "Mass", f"a {kind} inside a value")


def test_comment_inside_a_driver_is_refused(tmp_path):
    text = with_driver("314*t").replace(">314*t<", ">314<!--x-->*t<")
    code, out = check_text(tmp_path, text)
    assert code == 2
    assert_problem(out, "Hinge 'MainBearing'", "Driver", "comment inside a value")


def test_comments_between_elements_are_fine(tmp_path):
    text = double_pendulum_text().replace("<Simulation>", "<!-- settings --><Simulation><?pi x?>")
    assert check_text(tmp_path, text)[0] == 0


def test_overflowing_mass_is_not_finite(tmp_path):
    code, out = check_text(tmp_path, first_mass(double_pendulum_text(), "1e309"))
    assert code == 2
    assert_problem(out, "RigidBody 'Upper'", "Mass", "'1e309' is not a finite number")


@pytest.mark.parametrize("tag, value, field", [
    ("AbsolutePosition", "1e309, 0, 0", "AbsolutePosition"),
    ("AbsoluteOrientation", "0, 12345678901234567890, 0", "AbsoluteOrientation"),
    ("AbsolutePosition", "1e308, 0, 0", "AbsolutePosition"),
])
def test_ground_frame_must_be_finite(tmp_path, tag, value, field):
    text = double_pendulum_text()
    ground = text.index("<Ground")
    text = text[:ground] + re.sub(rf"<{tag}>[^<]*</{tag}>", f"<{tag}>{value}</{tag}>",
                                  text[ground:], count=1)
    code, out = check_text(tmp_path, text)
    assert code == 2
    assert_problem(out, "Ground 'Ground'", field)


def test_mass_centre_orientation_must_be_finite(tmp_path):
    m = build("double_pendulum")
    m.bodies[0].mass_center.orientation = np.array([0.0, 1e300, 0.0])
    code, out = check_text(tmp_path, xmlio.to_string(m))
    assert code == 2
    assert_problem(out, "RigidBody 'Upper'", "MassCenter Orientation", "1e+06 rad")


def test_body_at_1e308_is_refused_without_linalg_error(tmp_path):
    m = build("double_pendulum")
    m.bodies[0].position = np.array([1e308, -1e308, 0.0])
    m.bodies[1].mass_center.position = np.array([1e308, 0.0, 0.0])
    code, out = check_text(tmp_path, xmlio.to_string(m))
    assert code == 2
    assert_problem(out, "RigidBody 'Upper'", "AbsolutePosition", "from the origin")
    assert_problem(out, "RigidBody 'Lower'", "MassCenter", "from the origin")


def test_check_inertia_with_a_huge_mass_centre_says_so():
    (msg,) = check_inertia(1.0, [1, 1, 1, 0, 0, 0], [1e200, 0, 0])
    assert "not a finite number" in msg


def test_duplicate_marker_id_on_the_ground(tmp_path):
    m = build("double_pendulum")
    g = m.ground
    g.add_marker((0, 0, 1), marker_id=g.markers[0].id)
    code, out = check_text(tmp_path, xmlio.to_string(m))
    assert code == 2
    assert_problem(out, "Ground 'Ground'", "Marker", f"marker ID {g.markers[0].id} is used twice")


# --------------------------------------------------------------------------------------------------
# Schema errors that raised XPathEvalError
# --------------------------------------------------------------------------------------------------

def test_namespaced_root_is_a_problem(tmp_path):
    text = double_pendulum_text().replace("<MultibodySystem ",
                                          '<m:MultibodySystem xmlns:m="urn:x" ')
    text = text.replace("</MultibodySystem>", "</m:MultibodySystem>")
    code, out = check_text(tmp_path, text)
    assert code == 2
    assert_problem(out, "MultibodySystem", "root element", "in no namespace")


def test_element_in_another_namespace_is_named(tmp_path):
    text = double_pendulum_text().replace("<Step>0.001</Step>",
                                          '<Step>0.001</Step><x:Step xmlns:x="urn:y">3</x:Step>')
    code, out = check_text(tmp_path, text)
    assert code == 2
    assert_problem(out, "Simulation", "{urn:y}Step", "is not an element of <Simulation>")


def test_relative_tolerance_zero(tmp_path):
    text = double_pendulum_text()
    text = re.sub(r"<RelativeTolerance>[^<]*<", "<RelativeTolerance>0<", text)
    code, out = check_text(tmp_path, text)
    assert code == 2
    assert_problem(out, "Simulation", "RelativeTolerance", "must be positive")


# --------------------------------------------------------------------------------------------------
# File names, result columns
# --------------------------------------------------------------------------------------------------

def test_file_named_like_xml_text_is_read_as_a_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "<model>.mbs.xml").write_text(double_pendulum_text())
    model, problems = xmlio.read_with_problems("<model>.mbs.xml")
    assert problems == [] and model.name == "DoublePendulum"
    assert check_file("<model>.mbs.xml")[0] == 0


def test_result_columns_that_would_clash_are_refused(tmp_path):
    # the spherical hinge BigEnd is named like a body, so its columns are hinge:BigEnd.*; a body
    # named hinge:BigEnd would have wx, wy, wz, ... too
    text = crank_slider_text()
    text = text.replace('Name="Rod"', 'Name="BigEnd"').replace('Body="Rod"', 'Body="BigEnd"')
    text = text.replace('Name="Piston"', 'Name="hinge:BigEnd"')
    text = text.replace('Body="Piston"', 'Body="hinge:BigEnd"')
    code, out = check_text(tmp_path, text)
    assert code == 2
    assert_problem(out, "Hinge 'BigEnd'", "Name", "'hinge:BigEnd.*'", "RigidBody 'hinge:BigEnd'")


def test_a_hinge_named_like_a_body_alone_is_fine(tmp_path):
    text = crank_slider_text().replace('Name="Rod"', 'Name="BigEnd"')
    assert check_text(tmp_path, text.replace('Body="Rod"', 'Body="BigEnd"'))[0] == 0


# --------------------------------------------------------------------------------------------------
# check: a bushing closing a loop (KeyError in the summary)
# --------------------------------------------------------------------------------------------------

def test_extra_bushing_closing_a_loop_is_summarised(tmp_path):
    m = build("double_pendulum")
    inp = m.bodies[-1].add_marker((0, 0, 0))
    out_ref = m.ground.add_marker((0, 0, 0))
    m.add_hinge("Bush", "bushing", inp, out_ref, stiffness=[1e3] * 6)
    code, out = check_text(tmp_path, xmlio.to_string(m))
    assert code == 0, out
    assert re.search(r"-  Bush +bushing .*\[elastic closure\]", out)
    assert "elastic closures (bushings acting as force elements): Bush" in out


# --------------------------------------------------------------------------------------------------
# Scale: look-ups by dictionary, short summaries and problem lists
# --------------------------------------------------------------------------------------------------

def flat_model(n):
    m = MultibodySystem("Flat")
    m.set_ground()
    m.bodies = [RigidBody(f"B{i}", id=i + 1) for i in range(n)]
    return m


def test_look_ups_are_by_dictionary():
    m = flat_model(20_000)
    start = time.perf_counter()
    for i in range(0, 20_000, 2):
        assert m.body(f"B{i}").id == i + 1
        assert m.part(f"B{i + 1}").id == i + 2
    assert time.perf_counter() - start < 1.0     # a linear search: about a minute
    assert m.part("Ground") is m.ground and m.body("Ground") is None
    start = time.perf_counter()
    for i in range(10_000):                       # dangling references: misses
        assert m.part(f"Missing{i}") is None
    assert time.perf_counter() - start < 1.0
    m.bodies[7].name = "Missing3"                 # a miss is not remembered past a renaming
    assert m.part("Missing3") is m.bodies[7]


def test_look_ups_follow_changes_of_the_model():
    m = flat_model(5)
    assert m.body("B2").id == 3
    m.bodies[2].name = "Renamed"                     # renamed in place
    assert m.body("B2") is None and m.body("Renamed").id == 3
    m.bodies.append(RigidBody("B2", id=9))           # appended
    assert m.body("B2").id == 9
    m.bodies.insert(0, RigidBody("B2", id=10))       # the first of two wins, as before
    assert m.body("B2").id == 10
    m.bodies = [RigidBody("X", id=1)]                # replaced
    assert m.body("B2") is None and m.body("X").id == 1
    m.bodies[0] = RigidBody("Y", id=2)               # an element replaced, same length
    assert m.body("X") is None and m.body("Y").id == 2
    m.add_hinge("H", "revolute", None, None)
    assert m.hinge("H").id == 3 and m.hinge("nothing") is None


def test_summary_of_a_big_model_is_short(tmp_path):
    m = build("chain", n=120)
    code, out = check_text(tmp_path, xmlio.to_string(m))
    assert code == 0
    assert "bodies   120" in out and "hinges   120" in out
    assert f"... and {120 - cli.SUMMARY_ROWS} more bodies" in out
    assert f"... and {120 - cli.SUMMARY_ROWS} more hinges" in out
    assert len(out.splitlines()) < 2 * cli.SUMMARY_ROWS + 30


def test_problem_list_is_capped(tmp_path):
    m = build("double_pendulum")
    for i in range(250):
        m.add_force(f"F{i}", "point_force", MarkerRef("Nowhere", 1), direction=(0, 0, 1),
                    magnitude="1")
    code, out = check_text(tmp_path, xmlio.to_string(m))
    assert code == 2
    assert len(problem_lines(out)) == cli.MAX_PROBLEMS
    assert re.search(r"\.\.\. and (\d+) more problems", out)
    n_more = int(re.search(r"\.\.\. and (\d+) more problems", out).group(1))
    assert n_more + cli.MAX_PROBLEMS == int(re.search(r"(\d+) problems", out).group(1))


def test_long_bad_value_is_not_echoed_whole(tmp_path):
    code, out = check_text(tmp_path, first_mass(double_pendulum_text(), "x" * 100_000))
    assert code == 2
    line = assert_problem(out, "RigidBody 'Upper'", "Mass", "is not a number")
    assert len(line) < 200


def test_problem_str_is_unchanged():
    assert str(Problem("Hinge 'J1'", "Driver", "m", 3)) == "Hinge 'J1' (line 3), field Driver: m"
    assert math.isfinite(parse("1e308").value_if_constant())


# --------------------------------------------------------------------------------------------------
# run: an expression that fails between the times check samples
# --------------------------------------------------------------------------------------------------

#: Outside asin's domain only for 0.0009 < t < 0.0011 s: check (samples every 2.5 ms) passes.
NARROW = "314.1592653589793*t + 0.001*asin(1.0001 - abs(t - 0.001)) - 0.001*asin(0.9991)"


@pytest.mark.parametrize("method", ["mstmm", "newton-euler", "constrained"])
def test_run_names_the_expression_and_the_time_it_failed(tmp_path, method):
    path = tmp_path / "narrow.mbs.xml"
    path.write_text(with_driver(NARROW))
    assert check_file(path)[0] in (0, 2)       # valid, or only the start is corrected
    out = io.StringIO()
    code = cli.main(["run", str(path), "--t-end", "0.002", "--accept-corrections",
                     "--method", method], out=out)
    assert code == 2, out.getvalue()
    (line,) = problem_lines(out.getvalue())
    assert f"'{NARROW}" in line or f"of '{NARROW}'" in line
    t = float(re.search(r"t = ([0-9.e-]+) s", line).group(1))
    assert 0.0009 <= t <= 0.0011


def test_compiled_form_raises_instead_of_returning_nan():
    f = parse("log(t)").numba()
    assert f(1.0) == 0.0
    with pytest.raises(ArithmeticError):
        f(-1.0)
    with pytest.raises(ArithmeticError):
        parse("exp(t)").numba()(1000.0)


# --------------------------------------------------------------------------------------------------
# Settings that would exhaust memory or overflow (MemoryError, OverflowError in the run)
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("end, step, output, field, words", [
    (1e6, 1e-9, 1e-2, "Step", ("1e+15 steps",)),
    (1e9, 1e-3, 1e-3, "OutputStep", ("1e+12 output rows", "GB of results")),
    (1.0, 5e-324, 1e-2, "Step", ("inf steps",)),
    (1e308, 1e-3, 1e-2, "OutputStep", ("inf output rows",)),
], ids=["EndTime 1e6, Step 1e-9", "EndTime 1e9, OutputStep 1e-3", "Step 5e-324",
        "EndTime 1e308"])
@pytest.mark.parametrize("integrator", ["rk4", "trbdf2"])
def test_run_sizes_are_refused_by_check(tmp_path, end, step, output, field, words, integrator):
    m = build("double_pendulum")
    m.simulation.end_time, m.simulation.step, m.simulation.output_step = end, step, output
    m.simulation.integrator = integrator
    start = time.perf_counter()
    code, out = check_text(tmp_path, xmlio.to_string(m))
    assert time.perf_counter() - start < 20
    assert code == 2
    assert_problem(out, "Simulation", field, *words)


# --------------------------------------------------------------------------------------------------
# A seeded fuzz of expressions: only ExpressionError at parse, only EvaluationError when called
# --------------------------------------------------------------------------------------------------

def random_expression(rng, depth=0):
    """A random expression of the grammar, with hostile numbers and nesting."""
    r = rng.random()
    if depth > 6 or r < 0.25:
        return str(rng.choice(["t", "pi", "e", "0", "1", "2", "9", "0.5", "-1", "1e308",
                               "1e-320", "123456789012345678901234567890", "1e309"]))
    if r < 0.55:
        op = rng.choice(["+", "-", "*", "/", "**", "%"])
        return f"({random_expression(rng, depth + 1)}){op}({random_expression(rng, depth + 1)})"
    if r < 0.65:
        return "-" * int(rng.integers(1, 4)) + random_expression(rng, depth + 1)
    from MultibodyWB.solver.model.timefunction import FUNCTIONS
    name = rng.choice(sorted(FUNCTIONS))
    args = ", ".join(random_expression(rng, depth + 1) for _ in range(FUNCTIONS[name][1]))
    return f"{name}({args})"


def test_seeded_expression_fuzz_raises_only_the_documented_errors():
    rng = np.random.default_rng(12)
    start = time.perf_counter()
    outcomes = {"refused": 0, "evaluated": 0, "evaluation error": 0}
    for _ in range(400):
        text = random_expression(rng)
        try:
            f = parse(text, "Hinge 'F'", "Driver")
            fs = [f, f.derivative(1), f.derivative(2)]
        except ExpressionError:
            outcomes["refused"] += 1
            continue
        for g in fs:
            for t in (0.0, 0.37, 1.0, 2.5):
                try:
                    v = g(t)
                except EvaluationError as exc:
                    assert exc.problems[0].element == "Hinge 'F'"
                    assert f"t = {t:g} s" in exc.problems[0].message
                    outcomes["evaluation error"] += 1
                else:
                    assert isinstance(v, float) and math.isfinite(v)
                    outcomes["evaluated"] += 1
    assert time.perf_counter() - start < 60
    assert all(n > 0 for n in outcomes.values()), outcomes


HOSTILE_VALUES = ["1e309", "-1e309", "nan", "inf", "12<!--x-->5", "1<?p?>2", "1" + "0" * 400,
                  "", "1, 2", "0x10", "1e308", "-1e308", "-0", "1_0", " 5 ", "t", "1e-400",
                  "12345678901234567890", "x" * 5000]


def test_seeded_fuzz_of_values_in_files_gives_exit_0_or_2(tmp_path, capsys):
    """Every value element and attribute of two examples, replaced by hostile text: check
    answers valid (0) or lists problems (2), never an internal error (1)."""
    rng = np.random.default_rng(12)
    texts = [double_pendulum_text(), crank_slider_text()]
    value = re.compile(r">([^<>]*)</")
    attribute = re.compile(r'(ID|Marker|Speed|RampTime)="([^"]*)"')
    codes = {0: 0, 2: 0}
    for k in range(120):
        text = texts[k % 2]
        spots = [m.span(1) for m in value.finditer(text)] + \
                [m.span(2) for m in attribute.finditer(text)]
        a, b = spots[int(rng.integers(len(spots)))]
        bad = str(rng.choice(HOSTILE_VALUES))
        if text[a - 1] == '"':
            bad = bad.replace("<", "&lt;")
        path = tmp_path / f"fuzz{k}.mbs.xml"
        path.write_text(text[:a] + bad + text[b:])
        code = cli.main(["check", str(path)], out=io.StringIO())
        err = capsys.readouterr().err
        assert code in codes and "internal error" not in err, (text[:a][-80:], bad, err)
        codes[code] += 1
    assert codes[2] > 60, codes


def test_output_step_of_1e308_is_refused_by_check(tmp_path):
    # was an OverflowError (round(inf)) in the run's settings, reported as an internal error
    m = build("double_pendulum")
    m.simulation.output_step = 1e308
    code, out = check_text(tmp_path, xmlio.to_string(m))
    assert code == 2
    assert_problem(out, "Simulation", "OutputStep", "inf steps of 0.001 s")
