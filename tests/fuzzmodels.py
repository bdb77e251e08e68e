"""Mutated models for the fuzz campaign (issue 12): every example, broken on purpose.

:func:`mutate` takes the XML text of a valid model and a ``numpy.random.Generator`` and returns a
:class:`Mutant`: the mutated text, a short description of what was done and whether the result
*must* be refused by ``check`` (a dangling reference, a non-finite or malformed number, a list of
the wrong length, a duplicate name or ID, an unknown type, method or integrator, a hostile
expression). Mutations that may or may not leave a valid model (a deleted element, an extreme
value, a renamed element, a hinge turned round, ...) only have to be answered cleanly.

:func:`run_models` puts mutants through ``check`` (and, for some, a short ``run``) in worker
processes with a per-model timeout, killing and replacing a worker that hangs, and classifies each
answer: ``ok`` (exit 0 or 2, no internal error), ``traceback`` (an internal error, an exception
out of ``cli.main``, exit 1 from ``check``), ``run error`` (``run`` exits 1 with a one-line
message: the simulation failed, e.g. a state that is not finite), ``hang`` (timeout),
``wrong accept`` (exit 0 for a mutant that must be refused),
``disagree`` (``run`` accepts a model ``check`` refused for a reason the run's options do not
override). The test suite (tests/test_fuzz.py) and the long campaign
(benchmarks/fuzz_campaign.py) share them.
"""

from __future__ import annotations

import contextlib
import io
import multiprocessing as mp
import os
import re
import tempfile
import time
import traceback
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np

#: Examples and the options they are built with (the chain kept short).
EXAMPLE_OPTIONS = {"chain": {"n": 6}}

NUMBER = re.compile(r"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$")
NUMBER_LIST = re.compile(r"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?"
                         r"(\s*,\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?)*\s*$")
#: Elements holding expressions of t.
EXPRESSIONS = ("Driver", "Magnitude", "Expression")
#: Text that is not one finite number: a number element holding it must be refused.
NOT_A_NUMBER = ["1e309", "-1e309", "nan", "inf", "-inf", "NaN", "12@C5", "1@P2", "", "abc",
                "0x10", "1_0", "1e-", "--1", "1..2", "12345678901234567890e300", "x" * 3000,
                "1" + "0" * 400]
#: Placeholders replaced after serialising (comments, processing instructions inside numbers).
RAW = {"@C": "<!--x-->", "@P": "<?p x?>"}
EXTREME = ["0", "-0", "1e308", "-1e308", "1e-308", "5e-324", "-1", "1e15", "-1e15", "1e-15",
           "3.4e38", "123456789.123456789", "1e300", "-5"]
HOSTILE_EXPRESSIONS = ["9**9**9", "t**(9**9**9)", "2.0**1024", "0**-1", "1/t", "log(t)",
                       "acos(2)", "(t-1)**0.5", "exp(1000)", "1" + "0" * 40, "t+" * 3000 + "t",
                       "(" * 300 + "t" + ")" * 300, "-" * 5000 + "t",
                       "sin(" * 150 + "t" + ")" * 150,
                       "1/(t-t)", "t%0", "sqrt(-1-t)", "1e308*10", "t**-1", "tan(pi/2)",
                       "atan2(0, 0)", "2*t", "sin(t)", "0", "1e-300*t", "floor(t)"]
#: Expressions that must be refused at check (not expressions of t at all).
REFUSED_EXPRESSIONS = ["__import__('os').system('true')", "t.__class__", "lambda: 1", "x+1",
                       "open('f')", "[1,2]", "t if t else 1", "", "sin()", "sin(t, t)",
                       "1 +", "'a'", "t;t", "eval('1')"]
NAMES = ["=cmd", "+1", "@SUM(A1)", "-x", "hinge:Arm", "a,b", 'q"uote', "x" * 500, "",
         "Ground", " ", "Crank", "Link1", "J1", "n\u00e9", "a\tb", "1"]
HINGE_TYPES = ["revolute", "prismatic", "cylindrical", "universal", "spherical", "planar",
               "free", "bushing", "rigid", "fixed"]
SETTINGS = {"EndTime": ["0", "-1", "1e-12", "1e6", "1e308"],
            "Step": ["0", "-1e-3", "1", "1e-12", "5e-324", "1e308"],
            "OutputStep": ["0", "1e-9", "3e-4", "1e308", "-1"],
            "Method": ["bogus", "MSTMM", "", "mstmm", "constrained", "newton-euler"],
            "Integrator": ["bogus", "RK4", "", "rk4", "euler", "DOP853", "RK45", "Radau", "BDF",
                           "LSODA"],
            "RelativeTolerance": ["0", "-1", "1", "1e-300"],
            "AbsoluteTolerance": ["0", "-1", "1e300"]}
#: Simulation fields the short run's options replace (a refusal there is not the run's).
OVERRIDDEN = ("EndTime", "Step", "OutputStep")


@dataclass
class Mutant:
    """A mutated model: its text, what was done, and whether check must refuse it."""

    text: str
    what: str
    must_refuse: bool
    settings: bool = False          # a Simulation field changed
    raw: bool = False               # the text itself changed: not to be parsed and written again


def example_texts() -> dict:
    """The XML text of every example (``MultibodyWB.examples``), by name."""
    from MultibodyWB.examples import EXAMPLES, build
    from MultibodyWB.solver.model import xmlio
    return {name: xmlio.to_string(build(name, **EXAMPLE_OPTIONS.get(name, {})))
            for name in EXAMPLES}


def _path(root, el):
    """A readable path of an element (``RigidBody[Crank]/Mass``)."""
    parents = {c: p for p in root.iter() for c in p}
    parts = []
    while el is not root:
        key = el.get("Name") or el.get("ID")
        parts.append(el.tag + (f"[{key}]" if key else ""))
        el = parents[el]
    return "/".join(reversed(parts))


def _serialise(root) -> str:
    text = ET.tostring(root, encoding="unicode")
    for k, v in RAW.items():
        text = text.replace(k, v)
    return "<?xml version='1.0' encoding='UTF-8'?>\n" + text


def _pick(rng, items):
    return items[int(rng.integers(len(items)))]


def mutate(text: str, rng) -> Mutant:
    """One random mutation of a model's XML text (see the module docstring)."""
    for _ in range(20):
        try:
            return _mutate(text, rng)
        except (AttributeError, IndexError, ValueError, TypeError, ET.ParseError):
            continue         # the element this mutation needs is gone: draw another
    return Mutant(text, "unchanged", False)


def _mutate(text: str, rng) -> Mutant:
    root = ET.fromstring(text)
    parents = {c: p for p in root.iter() for c in p}
    elements = [e for e in root.iter() if e is not root]
    numbers = [e for e in elements if e.text and NUMBER_LIST.match(e.text) and len(e) == 0
               and e.tag not in EXPRESSIONS]
    scalars = [e for e in numbers if NUMBER.match(e.text)]
    lists = [e for e in numbers if "," in e.text]
    expressions = [e for e in elements if e.tag in EXPRESSIONS]
    refs = [e for e in elements if e.tag in ("Input", "Output")]
    named = [e for e in elements if e.tag in ("RigidBody", "Hinge", "Force", "Ground")]
    hinges = [e for e in elements if e.tag == "Hinge"]
    kind = _pick(rng, ["delete", "duplicate", "rename", "dangling", "not a number", "extreme",
                       "list length", "expression", "refused expression", "settings",
                       "hinge type", "swap", "marker moved", "two mutations", "not a number",
                       "extreme", "expression", "add hinge", "add force", "stiff",
                       "name collision", "settings", "raw", "raw", "unknown element"])
    must = False
    settings = False
    if kind == "raw":
        return _raw(text, rng)
    if kind == "unknown element":
        el = _pick(rng, elements)
        what = f"{_path(root, el)} renamed <{el.tag}x>"
        el.tag = el.tag + "x"
        return Mutant(_serialise(root), what, True)
    if kind == "delete":
        el = _pick(rng, elements)
        what = f"deleted {_path(root, el)}"
        parents[el].remove(el)
    elif kind == "duplicate":
        el = _pick(rng, elements)
        what = f"duplicated {_path(root, el)}"
        parent = parents[el]
        parent.insert(list(parent).index(el), ET.fromstring(ET.tostring(el)))
        # two bodies, hinges, forces or markers of one name or ID; two values of one field
        must = el.tag in ("RigidBody", "Hinge", "Force", "Marker", "Ground", "Mass", "JI",
                          "Gravity", "Simulation", "Input", "Output", "AbsolutePosition",
                          "Position", "Orientation", "Density", "MassCenter", "EndTime")
    elif kind == "rename":
        el = _pick(rng, named)
        new = _pick(rng, NAMES)
        what = f"renamed {_path(root, el)} to {new[:20]!r}"
        el.set("Name", new)
    elif kind == "dangling":
        el = _pick(rng, refs)
        if rng.random() < 0.5:
            what = f"{_path(root, el)} Body='Nowhere'"
            el.set("Body", "Nowhere")
        else:
            what = f"{_path(root, el)} Marker='99'"
            el.set("Marker", "99")
        must = True
    elif kind == "not a number":
        el = _pick(rng, numbers)
        bad = _pick(rng, NOT_A_NUMBER)
        if el in lists and rng.random() < 0.5:
            vals = [v.strip() for v in el.text.split(",")]
            vals[int(rng.integers(len(vals)))] = bad if bad else "1,"
            bad = ", ".join(vals)
        what = f"{_path(root, el)} = {bad[:30]!r}"
        el.text = bad
        must = True
        settings = parents[el].tag == "Simulation"
    elif kind == "extreme":
        el = _pick(rng, numbers)
        val = _pick(rng, EXTREME)
        if el in lists:
            vals = [v.strip() for v in el.text.split(",")]
            vals[int(rng.integers(len(vals)))] = val
            val = ", ".join(vals)
        what = f"{_path(root, el)} = {val}"
        el.text = val
        settings = parents[el].tag == "Simulation"
    elif kind == "list length":
        el = _pick(rng, lists or numbers)
        vals = [v.strip() for v in el.text.split(",")]
        vals = vals[:-1] if rng.random() < 0.5 and len(vals) > 1 else vals + ["0"]
        what = f"{_path(root, el)} with {len(vals)} values"
        el.text = ", ".join(vals)
        must = True
    elif kind in ("expression", "refused expression"):
        pool = HOSTILE_EXPRESSIONS if kind == "expression" else REFUSED_EXPRESSIONS
        expr = _pick(rng, pool)
        if expressions:
            el = _pick(rng, expressions)
            el.text = expr
        else:                    # a driver added to a hinge with a coordinate of its type
            el = _pick(rng, hinges)
            d = ET.SubElement(el, "Driver", Coordinate=_first_coordinate(el.get("Type")))
            d.text = expr
        what = f"{_path(root, el)} = {expr[:30]!r}" + ("..." if len(expr) > 30 else "")
        must = kind == "refused expression"
    elif kind == "settings":
        sim = root.find("Simulation")
        name = _pick(rng, sorted(SETTINGS))
        val = _pick(rng, SETTINGS[name])
        el = sim.find(name)
        if el is None:
            el = ET.SubElement(sim, name)
        el.text = val
        what = f"Simulation/{name} = {val!r}"
        must = (name in ("Method", "Integrator") and val not in ("mstmm", "constrained",
                                                                 "newton-euler", "rk4", "euler",
                                                                 "DOP853", "RK45", "Radau", "BDF",
                                                                 "LSODA")
                ) or val.startswith("-") \
            or (val == "0" and name in ("Step", "OutputStep"))
        settings = True
    elif kind == "hinge type":
        el = _pick(rng, hinges)
        t = _pick(rng, HINGE_TYPES + ["bogus"])
        what = f"{_path(root, el)} Type={t}"
        el.set("Type", t)
        must = t == "bogus"
    elif kind == "swap":
        el = _pick(rng, hinges)
        a, b = el.find("Input"), el.find("Output")
        a.attrib, b.attrib = dict(b.attrib), dict(a.attrib)
        what = f"{_path(root, el)} turned round"
    elif kind in ("add hinge", "add force"):
        # a new element between two markers of the model (a loop closed, a bushing, a spring)
        markers = [(p.get("Name"), m.get("ID")) for p in named if p.tag in ("RigidBody", "Ground")
                   for m in p.findall("Marker")]
        (b1, m1), (b2, m2) = _pick(rng, markers), _pick(rng, markers)
        if kind == "add hinge":
            t = _pick(rng, HINGE_TYPES)
            el = ET.SubElement(root, "Hinge", Name=f"Extra{int(rng.integers(100))}",
                               ID=str(900 + int(rng.integers(99))), Type=t)
            what = f"added a {t} hinge {b1}:{m1} -> {b2}:{m2}"
        else:
            t = _pick(rng, ["spring_damper", "rotational_spring_damper", "point_force",
                            "point_torque"])
            el = ET.SubElement(root, "Force", Name=f"Extra{int(rng.integers(100))}", Type=t)
            what = f"added a {t} {b1}:{m1} -> {b2}:{m2}"
        ET.SubElement(el, "Input", Body=b1, Marker=m1)
        if el.tag == "Hinge" or t in ("spring_damper", "rotational_spring_damper"):
            ET.SubElement(el, "Output", Body=b2, Marker=m2)
        if el.tag == "Force":
            if t.startswith("point"):
                ET.SubElement(el, "Direction", Frame="global").text = "0, 0, 1"
                ET.SubElement(el, "Magnitude").text = _pick(rng, ["10", "1e12", "sin(t)", "0"])
            else:
                ET.SubElement(el, "Stiffness").text = _pick(rng, ["0", "1e3", "1e12"])
                ET.SubElement(el, "Damping").text = _pick(rng, ["0", "10", "1e12"])
                if t == "spring_damper":
                    ET.SubElement(el, "FreeLength").text = _pick(rng, ["0", "0.1"])
                    ET.SubElement(el, "Magnitude").text = _pick(rng, ["0", "10"])
        # the Simulation element stays last
        sim = root.find("Simulation")
        if sim is not None:
            root.remove(sim)
            root.append(sim)
    elif kind == "stiff":
        # huge gravity, hinge damping and stiffness, and a method and integrator to meet them
        root.find("Gravity").text = _pick(rng, ["0, 0, -9.81e6", "0, 0, -9.81e12", "1e300, 0, 0"])
        el = _pick(rng, hinges)
        dof = len(_coordinates(el.get("Type")))
        for tag in ("Stiffness", "Damping"):
            child = el.find(tag)
            if child is None:
                child = ET.Element(tag)
                el.insert(2, child)
            child.text = ", ".join([_pick(rng, ["1e12", "1e6", "0"])] * dof)
        sim = root.find("Simulation")
        sim.find("Method").text = _pick(rng, ["mstmm", "constrained", "newton-euler"])
        sim.find("Integrator").text = _pick(rng, ["rk4", "euler", "DOP853", "Radau", "BDF",
                                                  "LSODA"])
        what = (f"stiff: gravity {root.find('Gravity').text}, {_path(root, el)} spring and "
                f"damping, {sim.find('Method').text} {sim.find('Integrator').text}")
        settings = True
    elif kind == "name collision":
        # names whose result columns meet: a body called hinge:<hinge>, <hinge>.x, or a hinge
        # called like a body
        h = _pick(rng, hinges)
        body = _pick(rng, [e for e in named if e.tag == "RigidBody"])
        new = _pick(rng, [f"hinge:{h.get('Name')}", f"{h.get('Name')}.x", "time", "energy",
                          body.get("Name")])
        target = body if not new == body.get("Name") else h
        old = target.get("Name")
        target.set("Name", new)
        if target is body:
            for ref in root.iter():
                if ref.tag in ("Input", "Output") and ref.get("Body") == old:
                    ref.set("Body", new)
        what = f"renamed {target.tag} {old} to {new!r} (references too)"
    elif kind == "marker moved":
        markers = [e for e in elements if e.tag == "Marker" and e.find("Position") is not None]
        el = _pick(rng, markers)
        pos = el.find("Position")
        vals = [float(v) for v in pos.text.split(",")]
        vals[int(rng.integers(3))] += float(_pick(rng, [5.8, -0.5, 1e-3, 1e6]))
        pos.text = ", ".join(repr(v) for v in vals)
        what = f"{_path(root, el)} moved to {pos.text}"
    else:                        # two mutations in a row
        first = mutate(text, rng)
        if first.raw:            # parsing would undo it (an entity expanded, junk dropped)
            return first
        second = mutate(first.text, rng)
        # a deletion may take the first mutation away: then only the second counts
        target = first.what.split(" ")[0]
        must = second.must_refuse or (first.must_refuse and
                                      not second.what.startswith("deleted")
                                      and second.what.split(" ")[0] != target)
        return Mutant(second.text, f"{first.what}; {second.what}", must,
                      first.settings or second.settings)
    return Mutant(_serialise(root), what, must, settings)


def _coordinates(hinge_type):
    from MultibodyWB.solver.model import HINGE_TYPES as TYPES
    kind = TYPES.get(hinge_type)
    return kind.coordinates if kind is not None else ()


def _raw(text: str, rng) -> Mutant:
    """A mutation of the file's text itself: cut short, junk inserted, a namespace, a document
    type with an entity, another root."""
    end = text.rindex("</MultibodySystem>")
    how = _pick(rng, ["cut", "junk", "namespace", "entity", "root", "bom", "encoding"])
    if how == "cut":
        k = int(rng.integers(1, end))
        return _raw_mutant(text[:k], f"file cut after {k} characters", True)
    if how == "junk":
        k = int(rng.integers(0, len(text)))
        junk = _pick(rng, ["<", "&", "]]>", "\x00", "\x1b[2J", "&#0;", "&#x110000;", "<!--",
                           "<?xml version='1.0'?>", "\ufeff", "\ud800", "<![CDATA[1]]>",
                           "&amp;", "\u202e"])
        return _raw_mutant(text[:k] + junk + text[k:], f"{junk!r} inserted at {k}", False)
    if how == "namespace":
        return _raw_mutant(text.replace("<MultibodySystem ", '<MultibodySystem xmlns="urn:x" ', 1),
                      "root in a namespace", True)
    if how == "entity":
        head, body = text.split("\n", 1)
        body = body.replace("<Mass>", "<Mass>&e;", 1) if "<Mass>" in body else body
        return _raw_mutant(head + '\n<!DOCTYPE MultibodySystem [<!ENTITY e "1">]>\n' + body,
                      "a document type with an entity used in a Mass", "<Mass>&e;" in body)
    if how == "root":
        return _raw_mutant(text.replace("MultibodySystem", "Mechanism"), "root <Mechanism>", True)
    if how == "bom":
        return _raw_mutant("\ufeff" + text, "a byte-order mark first", False)
    return _raw_mutant(text.replace("encoding='UTF-8'", _pick(rng, ["encoding='latin-1'",
                                                              "encoding='UTF-16'",
                                                              "encoding='nonsense'"])),
                  "another encoding declared", False)


def _raw_mutant(text, what, must) -> Mutant:
    return Mutant(text, what, must, raw=True)


def _first_coordinate(hinge_type):
    coordinates = _coordinates(hinge_type)
    return coordinates[0] if coordinates else "rz"


def mutants(seed: int, count: int):
    """``count`` mutants of the examples in turn, from ``numpy.random.default_rng(seed)``:
    a list of (example name, Mutant)."""
    rng = np.random.default_rng(seed)
    texts = example_texts()
    names = sorted(texts)
    out = []
    for k in range(count):
        name = names[k % len(names)]
        out.append((name, mutate(texts[name], rng)))
    return out


# --------------------------------------------------------------------------------------------------
# Running mutants in worker processes with a timeout
# --------------------------------------------------------------------------------------------------

RUN_OPTIONS = ["--t-end", "0.01", "--step", "1e-3", "--output-step", "1e-3"]


def _answer(command, path, out_dir):
    """``cli.main`` on one file in this process: (exit code, stdout, stderr, traceback text)."""
    from MultibodyWB.solver import cli
    argv = [command, path]
    if command == "run":
        argv += RUN_OPTIONS + ["--out", os.path.join(out_dir, "r.csv")]
    elif command == "run as written":           # the model's own settings
        argv = ["run", path, "--out", os.path.join(out_dir, "r.csv")]
    out, err = io.StringIO(), io.StringIO()
    tb = ""
    try:
        with contextlib.redirect_stderr(err):
            code = cli.main(argv, out=out)
    except BaseException:           # noqa: BLE001 - what escapes cli.main is what we look for
        code, tb = -1, traceback.format_exc()
    return code, _ends(out.getvalue()), _ends(err.getvalue()), tb[-3000:]


def _ends(text, head=500, tail=2000):
    """The start and the end of a long output (a refusal's heading and its last problems: a
    model of many contacts lists more than the tail holds)."""
    return text if len(text) <= head + tail else f"{text[:head]}\n...\n{text[-tail:]}"


def _worker(conn):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.mbs.xml")
        while True:
            job = conn.recv()
            if job is None:
                return
            command, text = job
            with open(path, "wb") as f:            # lone surrogates as they are: bad UTF-8
                f.write(text.encode("utf-8", "surrogatepass"))
            conn.send(_answer(command, path, tmp))


class Pool:
    """Worker processes answering ``(command, text)`` with a per-job timeout (s); a worker past
    its timeout is killed and replaced."""

    def __init__(self, processes=1, timeout=30.0):
        self.timeout = timeout
        self.ctx = mp.get_context("fork")
        self.workers = [self._start() for _ in range(processes)]

    def _start(self):
        a, b = self.ctx.Pipe()
        p = self.ctx.Process(target=_worker, args=(b,), daemon=True)
        p.start()
        return [p, a, None, 0.0]         # process, connection, job key, start time

    def map(self, jobs, on_result):
        """Run ``jobs`` (key, command, text); call ``on_result(key, answer, seconds)`` with the
        answer tuple of :func:`_answer` (``None`` for a hang) and the time the job took."""
        jobs = list(jobs)
        jobs.reverse()
        busy = 0
        while jobs or busy:
            for w in self.workers:
                if w[2] is None and jobs:
                    key, command, text = jobs.pop()
                    w[1].send((command, text))
                    w[2], w[3] = key, time.monotonic()
                    busy += 1
            ready = mp.connection.wait([w[1] for w in self.workers if w[2] is not None],
                                       timeout=0.2)
            for w in self.workers:
                if w[2] is None:
                    continue
                if w[1] in ready:
                    key, took = w[2], time.monotonic() - w[3]
                    try:
                        answer = w[1].recv()
                    except EOFError:     # the worker died (a crash of the interpreter)
                        answer = (-2, "", "", "worker process died")
                        self._replace(w)
                    w[2] = None
                    busy -= 1
                    on_result(key, answer, took)
                elif time.monotonic() - w[3] > self.timeout:
                    key, took = w[2], time.monotonic() - w[3]
                    self._replace(w)
                    busy -= 1
                    on_result(key, None, took)

    def _replace(self, w):
        w[0].kill()
        w[0].join()
        w[:] = self._start()

    def close(self):
        for w in self.workers:
            try:
                w[1].send(None)
            except OSError:
                pass
            w[0].join(5)
            if w[0].is_alive():
                w[0].kill()


def problem_lines(text: str) -> list:
    """The problem lines (``- Element 'name', field F: ...``) of a refusal's output, sorted;
    of an output :func:`_ends` shortened, those it kept whole."""
    head, cut, tail = text.partition("\n...\n")
    lines = head.splitlines()
    if cut:
        lines = lines[:-1] + tail.splitlines()[1:]
    return sorted(line.strip() for line in lines if line.strip().startswith("- "))


def classify(mutant: Mutant, command: str, answer, check_code=None) -> str:
    """``ok``, ``traceback``, ``hang``, ``wrong accept`` or ``disagree`` (see the module
    docstring)."""
    if answer is None:
        return "hang"
    code, _, err, tb = answer
    if tb or "internal error" in err or code not in (0, 1, 2):
        return "traceback"
    if code == 1:               # run: a numerical failure reported on one line ("error: ...")
        return "run error" if command == "run" and err.strip() else "traceback"
    if code == 0 and mutant.must_refuse and not (command == "run" and mutant.settings):
        return "wrong accept"
    if (command == "run" and code == 0 and check_code == 2 and not mutant.settings):
        return "disagree"
    return "ok"
