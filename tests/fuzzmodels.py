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
EXAMPLE_OPTIONS = {"chain": {"n": 6}, "track": {"k": 3, "m": 1, "end_time": 0.005},
                   "tracked_vehicle": {"shoes": 30, "road_wheels": 2, "end_time": 0.005}}

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
        token = bad
        if el in lists and rng.random() < 0.5:
            vals = [v.strip() for v in el.text.split(",")]
            vals[int(rng.integers(len(vals)))] = bad if bad else "1,"
            bad = ", ".join(vals)
        what = f"{_path(root, el)} = {bad[:30]!r}"
        el.text = bad
        # a limit of +-inf (1e309 reads as inf) is no limit (the schema: "inf for none")
        must = not (el.tag in ("LowerLimits", "UpperLimits") and
                    token.strip().lstrip("-") in ("inf", "1e309"))
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
# The run stage of the new elements (issue 33): mutations that matter when the model runs
# --------------------------------------------------------------------------------------------------

#: Tags that make a model one "with the new elements" (contacts, couplers, stops, motors).
NEW_ELEMENT_TAGS = ("<Contact ", "<Coupler ", "<Motor ", "<StopStiffness>")
#: Coefficients at run time: huge, tiny, zero (each must be answered cleanly: refused, a one-line
#: run error, or a run whose every result is finite).
RUN_EXTREME = ["0", "1e-300", "1e-12", "1e-6", "1e3", "1e6", "1e9", "1e12", "1e15", "1e30",
               "1e100", "1e300", "1.7e308", "5e-324", "0.5", "2"]
#: Values that are never a valid coefficient, speed or dimension.
RUN_NOT_FINITE = ["nan", "inf", "-inf", "1e309", "-1e309"]
#: Fields of the new elements and their values (XML tag, or tag/attribute).
CONTACT_FIELDS = ("Stiffness", "Exponent", "Restitution", "ImpactSpeed", "StaticFriction",
                  "DynamicFriction", "StictionVelocity")
#: Fields that cannot be negative (a negative value must be refused).
NON_NEGATIVE = {"Stiffness", "StaticFriction", "DynamicFriction", "StictionVelocity",
                "ImpactSpeed", "StopStiffness", "StopImpactSpeed", "Radius", "Length", "Size",
                "RampTime"}
#: Degenerate hulls (the points of a convex shape): coincident, collinear, coplanar, tiny.
DEGENERATE_POINTS = {
    "one point": ("0, 0, 0", True),
    "coincident": ("0.01, 0, 0, 0.01, 0, 0, 0.01, 0, 0, 0.01, 0, 0", True),
    "collinear": ("0, 0, 0, 0.01, 0, 0, 0.02, 0, 0, 0.03, 0, 0", True),
    "coplanar": ("0, 0, 0, 0.01, 0, 0, 0, 0.01, 0, 0.01, 0.01, 0", True),
    "a 1e-15 tetrahedron": ("0, 0, 0, 1e-15, 0, 0, 0, 1e-15, 0, 0, 0, 1e-15", False),
    "nearly flat": ("0, 0, 0, 0.01, 0, 0, 0, 0.01, 0, 0.01, 0.01, 1e-15", False),
    "a huge tetrahedron": ("0, 0, 0, 1e6, 0, 0, 0, 1e6, 0, 0, 0, 1e6", False),
    "two values": ("0, 0", True),
}
#: Other shapes put in place of a contact's shape: (type, attributes, must be refused).
SHAPES = [("sphere", {"Radius": "0"}, True), ("sphere", {"Radius": "1e-15"}, False),
          ("sphere", {"Radius": "1e6"}, False), ("sphere", {"Radius": "-0.01"}, True),
          ("box", {"Size": "0.02, 0.02, 1e-15"}, False), ("box", {"Size": "0, 0.02, 0.02"}, True),
          ("box", {"Size": "0.02, 0.02"}, True), ("box", {"Size": "1e-15, 1e-15, 1e-15"}, False),
          ("box", {"Size": "0.02, 0.03, 0.04"}, False),
          ("cylinder", {"Radius": "0.01", "Length": "0"}, True),
          ("cylinder", {"Radius": "1e-15", "Length": "0.02"}, False),
          ("cylinder", {"Radius": "0.01", "Length": "1e-15"}, False),
          ("cone", {"Radius": "0.01", "Radius2": "0", "Length": "0.02"}, False),
          ("cone", {"Radius": "0", "Radius2": "0", "Length": "0.02"}, True),
          ("cone", {"Radius": "0.01", "Radius2": "0.01", "Length": "1e-15"}, False),
          ("torus", {"Radius": "0.02", "Radius2": "0.005"}, False),
          ("torus", {"Radius": "0.005", "Radius2": "0.02"}, False),
          ("torus", {"Radius": "0", "Radius2": "0"}, True),
          ("plane", {}, False), ("bogus", {}, True)]


def has_new_elements(text: str) -> bool:
    """The model has a contact, a coupler, a motor or a stop, or runs with the euler
    integrator."""
    return any(t in text for t in NEW_ELEMENT_TAGS) or "<Integrator>euler<" in text


def run_mutate(text: str, rng) -> Mutant:
    """One random mutation that matters when the model *runs* (issue 33): huge, tiny and zero
    coefficients of contacts, stops, motors and couplers, fast motors and initial speeds, big
    gravity, degenerate contact geometry (edges and radii down to 0, coincident, collinear and
    coplanar hulls), other shapes, the euler integrator and the other methods, and contacts,
    motors, stops and couplers added to models that had none; sometimes with one of
    :func:`mutate`'s mutations too."""
    for _ in range(20):
        try:
            m = _run_mutate(text, rng)
        except (AttributeError, IndexError, ValueError, TypeError, KeyError, ET.ParseError):
            continue
        if m is not None:
            return m
    return Mutant(text, "unchanged", False)


def _value(rng, field):
    """A run-time value for ``field`` and whether it must be refused."""
    r = rng.random()
    if r < 0.12:
        v = _pick(rng, RUN_NOT_FINITE)
        return v, True
    if r < 0.22:
        v = "-" + _pick(rng, ["1", "1e-12", "1e12", "1e300"])
        return v, field in NON_NEGATIVE
    return _pick(rng, RUN_EXTREME), False


def _run_mutate(text: str, rng):
    root = ET.fromstring(text)
    contacts = root.findall("Contact")
    couplers = root.findall("Coupler")
    hinges = root.findall("Hinge")
    motors = [(h, m) for h in hinges for m in h.findall("Motor")]
    stops = [h for h in hinges if h.find("StopStiffness") is not None]
    bodies = root.findall("RigidBody")
    kinds = ["integrator", "gravity", "speed", "add contact", "add motor", "add stop",
             "add coupler", "and a check mutation"]
    if contacts:
        kinds += ["contact coefficient"] * 4 + ["contact geometry"] * 3 + ["contact shape"] * 2
    if couplers:
        kinds += ["coupler"] * 2
    if motors:
        kinds += ["motor"] * 3
    if stops:
        kinds += ["stop"] * 3
    kind = _pick(rng, kinds)
    must = False
    sim = root.find("Simulation")
    if kind == "integrator":
        method = _pick(rng, ["mstmm", "constrained", "newton-euler", None])
        integrator = _pick(rng, ["euler", "euler", "rk4", "DOP853", "Radau", "BDF", "LSODA"])
        if method:
            sim.find("Method").text = method
        sim.find("Integrator").text = integrator
        what = f"Simulation: {sim.find('Method').text} {integrator}"
    elif kind == "gravity":
        g = _pick(rng, ["0, 0, -9.81e4", "0, 0, -9.81e7", "0, 0, -1e8", "1e8, 1e8, 1e8",
                        "0, 0, -1.1e8", "0, 0, 9.81", "0, 0, 0", "0, 0, -1e300"])
        root.find("Gravity").text = g
        what = f"Gravity = {g}"
        must = g.endswith("1e300") or "1.1e8" in g
    elif kind == "speed":
        h = _pick(rng, hinges)
        dof = len(_coordinates(h.get("Type")))
        v = _pick(rng, ["1e3", "1e6", "1e9", "1e12", "-1e6", "1e100"])
        rates = h.find("InitialRates")
        if rates is None:
            rates = ET.Element("InitialRates")
            h.insert(2, rates)
        rates.text = ", ".join([v] + ["0"] * (dof - 1))
        what = f"Hinge[{h.get('Name')}]/InitialRates = {rates.text}"
        if dof == 0:
            return None
    elif kind == "contact coefficient":
        c = _pick(rng, contacts)
        tag = _pick(rng, CONTACT_FIELDS)
        el = c.find(tag)
        if el is None:
            el = ET.SubElement(c, tag)
        el.text, must = _value(rng, tag)
        what = f"Contact[{c.get('Name')}]/{tag} = {el.text}"
    elif kind == "contact geometry":
        c = _pick(rng, contacts)
        side = c.find(_pick(rng, ["InputShape", "OutputShape"]))
        t = side.get("Type")
        if t == "convex":
            name = _pick(rng, sorted(DEGENERATE_POINTS) + ["scaled"])
            if name == "scaled":
                f = _pick(rng, ["1e-15", "1e-9", "0", "1e6"])
                side.set("Points", ", ".join(repr(float(v) * float(f))
                                             for v in side.get("Points").split(",")))
                must = f == "0"
                what = f"Contact[{c.get('Name')}]/{side.tag} points scaled by {f}"
            else:
                points, must = DEGENERATE_POINTS[name]
                side.set("Points", points)
                what = f"Contact[{c.get('Name')}]/{side.tag} points {name}"
        else:
            attrs = [a for a in ("Radius", "Radius2", "Length", "Size") if side.get(a)]
            if not attrs:
                return None
            a = _pick(rng, attrs)
            v, must = _value(rng, a)
            if a == "Size":
                vals = side.get("Size").split(",")
                vals[int(rng.integers(len(vals)))] = v
                v = ", ".join(x.strip() for x in vals)
            side.set(a, v)
            what = f"Contact[{c.get('Name')}]/{side.tag} {a}={v}"
            # a sphere, box or cylinder with a zero dimension has no volume
            must = must or (t in ("sphere", "box", "cylinder") and
                            any(float(x) == 0 for x in v.split(",")))
    elif kind == "contact shape":
        c = _pick(rng, contacts)
        side = c.find(_pick(rng, ["InputShape", "OutputShape"]))
        t, attrs, must = SHAPES[int(rng.integers(len(SHAPES)))]
        side.attrib.clear()
        side.set("Type", t)
        for k, v in attrs.items():
            side.set(k, v)
        what = f"Contact[{c.get('Name')}]/{side.tag} = {t} {attrs}"
    elif kind == "coupler":
        c = _pick(rng, couplers)
        tag = _pick(rng, ["Ratio", "PitchRadius", "Coefficients"]) if rng.random() < 0.2 else None
        tag = tag or next(t for t in ("Ratio", "PitchRadius", "Coefficients")
                          if c.find(t) is not None)
        el = c.find(tag)
        if el is None:
            el = ET.SubElement(c, tag)
        v, must = _value(rng, tag)
        el.text = v if tag != "Coefficients" else f"1, {v}"
        what = f"Coupler[{c.get('Name')}]/{tag} = {el.text}"
    elif kind == "motor":
        h, m = _pick(rng, motors)
        a = _pick(rng, ["Speed", "Speed", "RampTime"])
        v, must = _value(rng, a)
        m.set(a, v)
        what = f"Hinge[{h.get('Name')}]/Motor {a}={v}"
    elif kind == "stop":
        h = _pick(rng, stops)
        tag = _pick(rng, ["StopStiffness", "StopRestitution", "StopImpactSpeed", "LowerLimits",
                          "UpperLimits"])
        el = h.find(tag)
        v, must = _value(rng, tag)
        if tag == "StopRestitution":
            must = must or not (v not in ("0",) and _finite_in(v, 0, 1))
        el.text = v
        what = f"Hinge[{h.get('Name')}]/{tag} = {v}"
    elif kind.startswith("add"):
        added = _add_element(root, kind, rng, hinges, bodies)
        if added is None:
            return None
        what, must = added if isinstance(added, tuple) else (added, False)
    else:                            # a run-time mutation and one of check's
        first = _run_mutate(text, rng)
        if first is None:
            return None
        second = mutate(first.text, rng)
        if second.raw:
            return None
        target = first.what.split(" ")[0]
        must = second.must_refuse or (first.must_refuse and
                                      not second.what.startswith("deleted")
                                      and second.what.split(" ")[0] != target)
        return Mutant(second.text, f"{first.what}; {second.what}", must, second.settings)
    return Mutant(_serialise(root), what, must)


def _finite_in(text, low, high):
    try:
        v = float(text)
    except ValueError:
        return False
    return low <= v <= high


def _add_element(root, kind, rng, hinges, bodies):
    """A contact, a motor, limits with a stop or a coupler added to the model (the Simulation
    element kept last)."""
    revolute = [h for h in hinges if h.get("Type") == "revolute"]
    if kind == "add contact":
        if not bodies:
            return None
        b = _pick(rng, bodies)
        m = b.find("Marker")
        g = root.find("Ground")
        gm = g.find("Marker")
        shape, attrs, _must = SHAPES[int(rng.integers(len(SHAPES) - 2))]
        el = ET.Element("Contact", Name=f"Added{int(rng.integers(100))}")
        ET.SubElement(el, "Input", Body=b.get("Name"), Marker=m.get("ID"))
        ET.SubElement(el, "InputShape", Type=shape, **attrs)
        ET.SubElement(el, "Output", Body=g.get("Name"), Marker=gm.get("ID"))
        ET.SubElement(el, "OutputShape", Type="plane")
        for tag in CONTACT_FIELDS:
            if rng.random() < 0.6:
                ET.SubElement(el, tag).text = _value(rng, tag)[0] if rng.random() < 0.3 else {
                    "Stiffness": "1e6", "Exponent": "1.5", "Restitution": "0.5",
                    "ImpactSpeed": "0.5", "StaticFriction": "0.3", "DynamicFriction": "0.2",
                    "StictionVelocity": "0.01"}[tag]
        _before_simulation(root, el)
        return (f"added a contact {b.get('Name')} {shape} {attrs} on the ground plane: "
                + ", ".join(f"{e.tag}={e.text}" for e in el if e.text))
    if kind == "add motor":
        if not revolute:
            return None
        h = _pick(rng, revolute)
        if h.find("Driver") is not None or h.find("Motor") is not None:
            return None
        speed = _pick(rng, ["1", "100", "1e4", "1e6", "-50", "0"])
        ramp = _pick(rng, ["0", "0.001", "0.1", "1e-300"])
        ET.SubElement(h, "Motor", Coordinate="rz", Speed=speed, RampTime=ramp)
        return f"Hinge[{h.get('Name')}]: a motor Speed={speed} RampTime={ramp}"
    if kind == "add stop":
        cands = [h for h in hinges if _coordinates(h.get("Type"))
                 and h.find("LowerLimits") is None]
        if not cands:
            return None
        h = _pick(rng, cands)
        dof = len(_coordinates(h.get("Type")))
        lo, hi = _pick(rng, [("-0.1", "0.1"), ("0", "0"), ("-1e-12", "1e-12"), ("0.1", "-0.1"),
                             ("-1e6", "1e6"), ("0.5", "1")])
        k = _pick(rng, ["1e3", "1e6", "1e12", "0", "1e300"])
        e = _pick(rng, ["0.5", "1", "0.01"])
        for tag, v in (("LowerLimits", lo), ("UpperLimits", hi), ("StopStiffness", k),
                       ("StopRestitution", e), ("StopImpactSpeed", "0.5")):
            el = ET.Element(tag)
            el.text = ", ".join([v] * dof)
            h.append(el)
        return f"Hinge[{h.get('Name')}]: limits {lo}..{hi}, stop stiffness {k}, restitution {e}"
    # add coupler
    if len(revolute) < 2:
        return None
    a, b = _pick(rng, revolute), _pick(rng, revolute)
    t = _pick(rng, ["gear", "belt", "gear", "linear"])
    el = ET.Element("Coupler", Name=f"Added{int(rng.integers(100))}", Type=t)
    ET.SubElement(el, "First", Hinge=a.get("Name"), Coordinate="rz")
    ET.SubElement(el, "Second", Hinge=b.get("Name"), Coordinate="rz")
    v = _pick(rng, ["-2", "0.5", "1e-12", "1e12", "0", "1"])
    if t == "linear":
        ET.SubElement(el, "Coefficients").text = f"1, {v}"
    else:
        ET.SubElement(el, "Ratio").text = v
    _before_simulation(root, el)
    return f"added a {t} coupler {a.get('Name')} -> {b.get('Name')}, {v}"


def _before_simulation(root, el):
    sim = root.find("Simulation")
    if sim is None:
        root.append(el)
    else:
        root.insert(list(root).index(sim), el)


def run_mutants(seed: int, count: int, new_share: float = 0.6):
    """``count`` mutants for the run stage, from ``numpy.random.default_rng(seed)``: a share
    ``new_share`` of them from the examples with the new elements (contacts, couplers, stops,
    motors) with :func:`run_mutate`, the rest from every example in turn with
    :func:`run_mutate` (adding new elements, the euler integrator) or :func:`mutate`.
    A list of (example name, Mutant)."""
    rng = np.random.default_rng(seed)
    texts = example_texts()
    names = sorted(texts)
    new = [n for n in names if has_new_elements(texts[n])]
    out = []
    for k in range(count):
        if rng.random() < new_share:
            name = new[int(rng.integers(len(new)))]
            out.append((name, run_mutate(texts[name], rng)))
        else:
            name = names[k % len(names)]
            mutation = run_mutate if rng.random() < 0.6 else mutate
            out.append((name, mutation(texts[name], rng)))
    return out


# --------------------------------------------------------------------------------------------------
# The study command (issue 33): mutated command lines
# --------------------------------------------------------------------------------------------------

#: A valid study of each model: a parameter of two levels, an objective and a constraint.
STUDY_BASES = {
    "quarter_car": ("Suspension.Stiffness=1e4:6e4:2", "rms(Hull.az)",
                    "max(abs(Suspension.z)) <= 1"),
    "cam_valve": ("ValveSpring.Stiffness=5e3:2e4:2", "max(CamContact.Fn)",
                  "max(abs(CamContact.Ft)) <= 1e6"),
    "gear_train": ("PinionShaft.Motor.Speed=50:150:2", "max(abs(Mesh2.T2))",
                   "max(abs(Mesh1.angle_error)) <= 1"),
    "bouncing_balls": ("Ball1Floor.Restitution=0.5:0.9:2", "max(Ball1Floor.Fn)",
                       "max(Ball1.z) <= 10"),
}
#: Each run of a study: short (a study's variants are whole runs).
STUDY_RUN = ["--t-end", "0.01", "--step", "1e-4", "--output-step", "1e-3"]
#: Mutations of a study's command line: (option, values that must be refused, values that
#: need only be answered cleanly). ``None`` as an option replaces the parameter, objective or
#: constraint of the base; ``@`` in a value stands for the base's text.
STUDY_MUTATIONS = {
    "--scheduler": (["tls://127.0.0.1:8786", "ucx://127.0.0.1:8786", "garbage://x",
                     "tcp://", "tcp://nohost", "", "inproc://x", "tcp://127.0.0.1:99999",
                     "x" * 3000, "\u202etcp://a:1", "tcp://127.0.0.1:8786/path",
                     "tcp://127.0.0.1:8786"], []),
    "--workers": (["-1", "100000", str(2 ** 63), "-100000"], ["0", "1", "2", "abc", "1.5", ""]),
    "--t-end": (["nan", "-1", "inf", "-inf", "0", "-0", "1e309"], ["1e-300", "abc"]),
    "--step": (["nan", "-1", "inf", "0", "1e309"], ["1e-300", "5e-324", "1"]),
    "--output-step": (["nan", "-1", "inf", "0", "-1e-3"], ["1e-300", "1", "abc"]),
    "--samples": (["-1"], ["0", "3", "abc"]),
    "--max-evaluations": (["0", "-5"], ["1", "3"]),
    "--tolerance": (["0", "nan", "inf", "-1", "2"], ["1", "1e-300"]),
    "--seed": ([], ["-1", "0", str(2 ** 70), "abc"]),
    "--method": (["bogus", "", "GRID; rm -rf /"], ["lhs", "sobol", "nelder-mead", "powell",
                                                   "de"]),
    "--sim-method": (["bogus", ""], ["mstmm", "constrained", "newton-euler"]),
    "--integrator": (["bogus", ""], ["euler", "rk4", "DOP853", "Radau"]),
    "--out": (["{out}.txt", "/nonexistent/folder/s.csv", "", "{out}.npz"], []),
    "bound": (["1e309", "-1e309", "inf", "nan", "1e999 mm", "inf mm", "", "1 parsec", "x"],
              ["1e300", "-1", "0", "1 mm", "0.5 m"]),
    "objective": (["rms(@, @)", "rms()", "rms(Nothing.x)", "max(@, @, 1)", "rms(@",
                   "__import__('os').system('true')", "@.__class__", "lambda: 1",
                   "open('/etc/passwd')", "", "x" * 5000, "rms(@); 1", "[1, 2]",
                   "eval('1')", "rms(@) if 1 else 0", "@", "time", "'a'", "mean(@) + @"],
                  ["rms(@) * 1e308 * 10", "1/(rms(@) - rms(@))", "log(max(@) - max(@))",
                   "max(@) ** 9 ** 9", "rms(@) + 0 * max(@)", "-rms(@)", "abs(min(@))"]),
    "parameter": (["Nothing.Stiffness=1:2:2", "@=nan:1:2", "@=1:2:0", "@=1:2:100000",
                   "@=1e309:2:2", "@", "@=", "@=1:2:-1", "@=a:b:2", "=1:2:2",
                   "@=1:2:2.5", "@=inf:1", "@=1,nan"],
                  ["@=-1e6:1:2", "@=0:0:2", "@=1e300:1e301:2", "@=1,2", "@=2:1:2", "@=0,1e-300"]),
}
#: The study options that take a value of their own (``bound`` and the others are built).
STUDY_OPTION_NAMES = [k for k in STUDY_MUTATIONS if k.startswith("--")]


@dataclass
class StudyMutant:
    """A mutated study command line: its arguments (after the model file; ``{out}`` the table's
    path), what was done, whether it must be refused."""

    args: list
    what: str
    must_refuse: bool


def _study_mutation(rng, base):
    """One mutation of the study's command: (option, value, must be refused)."""
    option = _pick(rng, list(STUDY_MUTATIONS))
    refused, answered = STUDY_MUTATIONS[option]
    must = bool(refused) and (not answered or rng.random() < 0.7)
    value = _pick(rng, refused if must else answered)
    param, objective, constraint = base
    path, _, _ = param.partition("=")
    column = re.search(r"\(([\w.]+)\)", objective).group(1)
    value = value.replace("@", path if option == "parameter" else column)
    return option, value, must


def study_mutants(seed: int, count: int):
    """``count`` mutated study command lines on the models of :data:`STUDY_BASES`, from
    ``numpy.random.default_rng(seed)``: one or two mutations each (a scheduler of a scheme a
    study cannot use, workers out of range, times and steps that are not finite and positive,
    bounds that are not finite, objectives of the wrong arity, unknown columns and hostile text,
    bad parameters, methods and settings); always ``--serial`` (a real Dask cluster would be too
    slow for a campaign), except a few whose scheduler or workers must be refused before a
    cluster starts. A list of (example name, StudyMutant)."""
    rng = np.random.default_rng(seed)
    names = sorted(STUDY_BASES)
    out = []
    for k in range(count):
        name = names[k % len(names)]
        base = STUDY_BASES[name]
        param, objective, constraint = base
        opts, musts, whats = {}, {}, []
        for _ in range(1 if rng.random() < 0.7 else 2):
            option, value, m = _study_mutation(rng, base)
            if option == "parameter":
                param = value
            elif option == "objective":
                objective = value
            elif option == "bound":
                constraint = f"{constraint.split('<=')[0].strip()} <= {value}"
            else:
                opts[option] = value
            whats.append(f"{option} {value[:40]!r}" + ("..." if len(value) > 40 else ""))
            musts[option] = m                 # a second mutation of an option replaces the first
        must = any(musts.values())
        serial = True
        if must and set(opts) <= {"--scheduler", "--workers"} and opts and rng.random() < 0.3:
            # the real executor: refused before a cluster starts (a valid address would wait for
            # a scheduler that is not there, so only addresses and counts that are refused)
            if opts.get("--scheduler", "tls://") not in ("tcp://127.0.0.1:8786",) and \
                    (opts.get("--workers") in (None, "-1", "100000", str(2 ** 63), "-100000")):
                serial = False
        if opts.get("--method") in ("nelder-mead", "powell", "de", "lhs", "sobol"):
            opts.setdefault("--max-evaluations", "4")       # a few runs, not a long search
            opts.setdefault("--samples", "3")
        args = ["--param", param, "--objective", objective, "--constraint", constraint]
        run = dict(zip(STUDY_RUN[::2], STUDY_RUN[1::2]))
        for option, value in opts.items():
            run.pop(option, None)
        for option, value in run.items():
            args += [option, value]
        for option, value in opts.items():
            if option != "--out":
                args += [option, value]
        args += ["--out", opts.get("--out", "{out}")]
        if serial:
            args.append("--serial")
        what = "; ".join(whats) + ("" if serial else " (the real executor)")
        out.append((name, StudyMutant(args, what, must)))
    return out


def classify_study(mutant: StudyMutant, answer) -> str:
    """``ok``, ``traceback`` (an exception out of ``cli.main``, an internal error, an exit code
    but 0 and 2), ``hang``, ``wrong accept`` (exit 0 for a command line that must be refused)
    or ``success with NaN`` (exit 0, and a row that ran has an objective that is not finite,
    or no table)."""
    if answer is None:
        return "hang"
    code, _, err, tb = answer[:4]
    if tb or "internal error" in err or "Traceback" in err or code not in (0, 2, 3):
        return "traceback"
    if code in (0, 3) and mutant.must_refuse:      # 3: ran, some variant untrusted
        return "wrong accept"
    if code in (0, 3) and len(answer) > 4 and answer[4]:
        return "success with NaN"
    return "ok"


# --------------------------------------------------------------------------------------------------
# Running mutants in worker processes with a timeout
# --------------------------------------------------------------------------------------------------

RUN_OPTIONS = ["--t-end", "0.01", "--step", "1e-3", "--output-step", "1e-3"]
#: The run stage of the new elements: stiff contacts and stops need a finer step; a run that
#: the model's adaptive integrator makes crawl (a ball pressed into the floor at 1e4 g, rtol
#: 1e-9) is stopped by the run's own wall-clock budget (exit 1, one line), not the timeout.
WALL_BUDGET = 10.0
RUN_OPTIONS_FINE = ["--t-end", "0.01", "--step", "1e-4", "--output-step", "1e-3",
                    "--wall-budget", str(WALL_BUDGET)]


def _answer(command, path, out_dir):
    """``cli.main`` on one file in this process: (exit code, stdout, stderr, traceback text,
    what is wrong with the results file after exit 0: ``""`` when it is complete and every
    value in it is finite).

    ``command`` is ``check``, ``run`` (the short run, results to an NPZ file read back),
    ``run fine`` (the same with a step of 1e-4 s), ``run as written`` (the model's own
    settings) or ``("study", args)`` (the study command with ``args``; ``{out}`` in them is the
    table's path, the table read back after exit 0)."""
    from MultibodyWB.solver import cli
    results = os.path.join(out_dir, "r.npz")
    if isinstance(command, tuple):              # ("study", args)
        results = os.path.join(out_dir, "study.csv")
        argv = ["study", path] + [a.replace("{out}", results) for a in command[1]]
    elif command == "run":
        argv = ["run", path] + RUN_OPTIONS + ["--out", results]
    elif command == "run fine":
        argv = ["run", path] + RUN_OPTIONS_FINE + ["--out", results]
    elif command == "run as written":           # the model's own settings
        argv = ["run", path, "--out", results]
    else:
        argv = [command, path]
    with contextlib.suppress(FileNotFoundError):
        os.remove(results)
    out, err = io.StringIO(), io.StringIO()
    tb = ""
    try:
        with contextlib.redirect_stderr(err):
            code = cli.main(argv, out=out)
    except SystemExit as exc:       # argparse's usage error: a message and exit 2, not a bug
        code = exc.code if isinstance(exc.code, int) else 2
        if code != 2:
            tb = traceback.format_exc()
    except BaseException:           # noqa: BLE001 - what escapes cli.main is what we look for
        code, tb = -1, traceback.format_exc()
    wrong = ""
    if code in (0, 3) and argv[0] in ("run", "study") and "--out" in " ".join(argv):
        wrong = (_study_table_problem(results) if argv[0] == "study"
                 else _results_problem(results))
    return code, _ends(out.getvalue()), _ends(err.getvalue()), tb[-3000:], wrong


def _results_problem(path) -> str:
    """What is wrong with a run's results file: missing, unreadable, or columns (or states)
    holding a value that is not finite (named, with the first time); ``""`` if nothing."""
    from MultibodyWB.solver.results.table import Results
    if not os.path.exists(path):
        return "exit 0 and no results file"
    try:
        res = Results.from_npz(path)
    except Exception as exc:         # noqa: BLE001
        return f"the results file cannot be read back: {type(exc).__name__}: {exc}"
    data = np.asarray(res.data, dtype=float)
    bad = ~np.isfinite(data)
    if bad.any():
        cols = [res.names[j] for j in np.flatnonzero(bad.any(axis=0))]
        row = int(np.flatnonzero(bad.any(axis=1))[0])
        return (f"{len(cols)} columns not finite ({', '.join(cols[:8])}"
                f"{', ...' if len(cols) > 8 else ''}) from t = {data[row, 0]:g} s")
    if res.states is not None and not np.isfinite(np.asarray(res.states, dtype=float)).all():
        return "the states are not finite"
    if len(data) == 0:
        return "no rows"
    return ""


def _study_table_problem(path) -> str:
    """What is wrong with a study's table after exit 0: missing, or a row that ran ("ok")
    with an objective, constraint or margin that is not finite."""
    import csv
    if not os.path.exists(path):
        return "exit 0 and no study table"
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    if not rows:
        return "an empty study table"
    head = rows[0]
    if "status" not in head:
        return f"a study table without a status column: {head[:6]}"
    status = head.index("status")
    skip = {"variant", "status", "error", "feasible", "wall_s"}
    for row in rows[1:]:
        if len(row) != len(head):
            return f"a row of {len(row)} fields under a header of {len(head)}"
        if row[status] != "ok":
            continue
        for name, value in zip(head, row):
            if name in skip:
                continue
            try:
                v = float(value)
            except ValueError:
                return f"variant {row[0]}: {name} = {value!r} is not a number"
            if not np.isfinite(v):
                return f"variant {row[0]} ran ok with {name} = {value}"
    return ""


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
    """``ok``, ``traceback``, ``hang``, ``wrong accept``, ``disagree`` or ``success with NaN``
    (see the module docstring)."""
    if answer is None:
        return "hang"
    code, _, err, tb = answer[:4]
    if tb or "internal error" in err or code not in (0, 1, 2, 3):
        return "traceback"
    is_run = str(command).startswith("run")
    if code == 1:               # run: a numerical failure reported on one line ("error: ...")
        return "run error" if is_run and err.strip() else "traceback"
    if code in (0, 3) and len(answer) > 4 and answer[4]:      # 3: ran, untrusted
        return "success with NaN"
    command = "run" if is_run else command
    if code in (0, 3) and mutant.must_refuse and not (command == "run" and mutant.settings):
        return "wrong accept"
    if (command == "run" and code in (0, 3) and check_code == 2 and not mutant.settings):
        return "disagree"
    return "ok"
