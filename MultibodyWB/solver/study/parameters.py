"""Parameters of a design study: a named field of the neutral model and the values it takes.

A parameter's **path** names an element of the model (by its ``Name``) and one of its fields (the
XML element or attribute of the neutral file), with an index for vectors::

    ValveSpring.Stiffness            a force's stiffness (N/m)
    Suspension.Damping[z]            a hinge's damping of coordinate z (an index 0, 1, ... too)
    Crank.Motor.Speed                a hinge's motor speed (Motor[rz].Speed when it has several)
    Hull.Mass                        a body's mass; its inertia scales with it (the same solid,
                                     another density); Hull.Density alike
    CamContact.InputShape.Radius     a contact shape's field
    Gear.Ratio                       a coupler's
    Gravity[z]                       the model's gravity; Simulation.EndTime, .Step, ...

Values are SI (m, kg, s, N, rad), as in the neutral file. A parameter is written
``PATH=LOW:HIGH:LEVELS`` (a range: ``LEVELS`` values from ``LOW`` to ``HIGH`` for a grid; ``LOW:HIGH``
bounds for sampling and optimisation) or ``PATH=V1,V2,...`` (a list).

:func:`target` resolves a path against a model once (an unknown element or field is a
:class:`StudyError` naming the path and what there is); :meth:`Target.set` writes a value into a
copy of the model.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np

from ..elements.hinges import (COORDINATE_KIND, COORDINATE_UNIT, DAMPING_UNIT, HINGE_TYPES,
                               STIFFNESS_UNIT)
from ..model.mechanism import MultibodySystem
from ..model.problems import ModelError, Problem
from ..model.xmlio import CONTACT_NUMBERS, FORCE_NUMBERS, HINGE_VECTORS, SIMULATION_FIELDS

#: Most levels of one parameter's grid, and most variants of a whole study.
MAX_LEVELS = 10_000
MAX_VARIANTS = 1_000_000


class StudyError(ModelError):
    """A study's definition is not valid: every problem, each naming its field (``Parameter 1``,
    ``Objective``, ``Method`` ...)."""

    def __init__(self, problems):
        super().__init__(problems)
        n = len(self.problems)
        self.args = ("\n".join([f"{n} problem{'s' if n != 1 else ''} in the study:"]
                               + [f"  - {p}" for p in self.problems]),)

    def __str__(self) -> str:
        return self.args[0]


def problem(where: str, field: str, message: str) -> Problem:
    """A study problem: ``where`` the study's element (``Parameter 'Spring.Stiffness'``), ``field``
    its field (``Path``, ``Range``, ``Expression`` ...)."""
    return Problem(where, field, message)


# --------------------------------------------------------------------------------------------------
# The fields a path can name
# --------------------------------------------------------------------------------------------------

_HINGE_VECTOR_UNITS = {"InitialCoordinates": COORDINATE_UNIT, "InitialRates":
                       {"translation": "m/s", "rotation": "rad/s"},
                       "Stiffness": STIFFNESS_UNIT, "Damping": DAMPING_UNIT,
                       "SpringReference": COORDINATE_UNIT, "LowerLimits": COORDINATE_UNIT,
                       "UpperLimits": COORDINATE_UNIT, "StopStiffness": STIFFNESS_UNIT,
                       "StopRestitution": {"translation": "1", "rotation": "1"},
                       "StopImpactSpeed": {"translation": "m/s", "rotation": "rad/s"}}
_CONTACT_UNITS = {"Stiffness": "N/m^e", "Exponent": "1", "Restitution": "1",
                  "ImpactSpeed": "m/s", "StaticFriction": "1", "DynamicFriction": "1",
                  "StictionVelocity": "m/s"}
_FORCE_UNITS = {"Stiffness": "N/m", "Damping": "N s/m", "FreeLength": "m"}
_SIMULATION_UNITS = {"EndTime": "s", "Step": "s", "OutputStep": "s", "RelativeTolerance": "1",
                     "AbsoluteTolerance": "1"}
_XYZ = {"x": 0, "y": 1, "z": 2}


@dataclass
class Target:
    """A resolved path: ``set(model, value)`` writes the value into ``model`` (in place)."""

    path: str
    unit: str
    current: float                   #: the value in the model the path was resolved against
    set: Callable[[MultibodySystem, float], None]


def _split(path: str) -> list[tuple[str, Optional[str]]]:
    """``'A.B[z].C'`` -> ``[('A', None), ('B', 'z'), ('C', None)]``; ValueError when malformed."""
    parts = []
    for token in path.split("."):
        m = re.fullmatch(r"\s*([^\[\]\s][^\[\]]*?)\s*(?:\[\s*([^\[\]\s]+)\s*\])?\s*", token)
        if not m:
            raise ValueError(f"{path!r} is not a path (Element.Field or Element.Field[index])")
        parts.append((m.group(1), m.group(2)))
    return parts


def _index(key: Optional[str], size: int, names: Sequence[str], what: str) -> int:
    """The entry ``key`` names: an integer, or one of ``names`` (coordinates, x y z)."""
    if key is None:
        if size == 1:
            return 0
        raise ValueError(f"{what} has {size} entries: give one as [0] .. [{size - 1}]"
                         + (f" or [{'], ['.join(names)}]" if names else ""))
    if key in names:
        return list(names).index(key)
    try:
        i = int(key)
    except ValueError:
        raise ValueError(f"[{key}]: {what} has the entries "
                         + ", ".join(f"[{n}]" for n in (names or range(size)))) from None
    if not 0 <= i < size:
        raise ValueError(f"[{key}]: {what} has {size} entries (0 .. {size - 1})")
    return i


def _scalar(field: str, key: Optional[str]) -> None:
    if key is not None:
        raise ValueError(f"{field} is a number, not a vector: no [{key}]")


def _vector_target(path, key, getv, setv, size, names, unit_of, what) -> Target:
    i = _index(key, size, names, what)
    v = getv()
    current = float(v[i]) if v is not None and i < len(v) else math.nan

    def set_(model, value, i=i):
        old = getv(model)
        vec = np.zeros(size) if old is None else np.array(old, dtype=float).copy()
        vec[i] = value
        setv(model, vec)
    return Target(path, unit_of(i), current, set_)


def _body_target(model, body, rest, path) -> Target:
    (field, key), tail = rest[0], rest[1:]
    name = body.name
    if tail:
        raise ValueError(f"a body's field has no parts ({field}.{tail[0][0]})")
    if field in ("Mass", "Density"):
        if key is not None:
            raise ValueError(f"{field} is a number, not a vector")
        attr = field.lower()
        if field == "Density" and body.density is None:
            raise ValueError(f"body {name!r} has no Density (give its Mass instead)")

        def set_(m, value, attr=attr):
            b = m.body(name)
            old = getattr(b, attr)
            scale = value / old
            b.mass *= scale                      # the same solid: mass and inertia scale alike
            b.inertia = b.inertia * scale
            if b.density is not None:
                b.density *= scale
            if attr == "mass":
                b.mass = value
            else:
                b.density = value
        return Target(path, "kg" if field == "Mass" else "kg/m^3", float(getattr(body, attr)),
                      set_)
    vectors = {"JI": ("inertia", 6, ("Ixx", "Iyy", "Izz", "Ixy", "Ixz", "Iyz"), "kg m^2"),
               "InitialVelocity": ("initial_velocity", 3, tuple(_XYZ), "m/s"),
               "InitialAngularVelocity": ("initial_angular_velocity", 3, tuple(_XYZ), "rad/s")}
    if field not in vectors:
        raise KeyError(("Mass", "Density", *vectors))
    attr, size, names, unit = vectors[field]
    return _vector_target(
        path, key, lambda m=model: getattr(m.body(name), attr),
        lambda m, v: setattr(m.body(name), attr, v), size, names, lambda i: unit,
        f"{name}.{field}")


def _hinge_target(model, hinge, rest, path) -> Target:
    name, kind = hinge.name, HINGE_TYPES[hinge.type]
    (field, key), tail = rest[0], rest[1:]
    coords = kind.coordinates
    if field == "Motor":
        motors = hinge.motors
        if not motors:
            raise ValueError(f"hinge {name!r} has no motor")
        if key is None and len(motors) > 1:
            raise ValueError(f"hinge {name!r} has {len(motors)} motors: name one as Motor["
                             + "] or Motor[".join(mo.coordinate for mo in motors) + "]")
        picks = [j for j, mo in enumerate(motors) if key is None or mo.coordinate == key]
        if not picks:
            raise ValueError(f"hinge {name!r} has no motor of {key!r}")
        j = picks[0]
        sub = tail[0][0] if len(tail) == 1 and tail[0][1] is None else None
        if sub not in ("Speed", "RampTime"):
            raise ValueError("a motor's fields are Motor.Speed and Motor.RampTime")
        attr = "speed" if sub == "Speed" else "ramp_time"
        unit = ("s" if sub == "RampTime" else
                {"translation": "m/s", "rotation": "rad/s"}[COORDINATE_KIND[motors[j].coordinate]])

        def set_(m, value, j=j, attr=attr):
            setattr(m.hinge(name).motors[j], attr, value)
        return Target(path, unit, float(getattr(motors[j], attr)), set_)
    if tail:
        raise ValueError(f"a hinge's field has no parts ({field}.{tail[0][0]})")
    tags = dict((tag, attr) for attr, tag in HINGE_VECTORS)
    if field not in tags or field == "InitialAngularVelocity":
        raise KeyError(tuple(t for t in tags if t != "InitialAngularVelocity") + ("Motor",))
    attr = tags[field]
    units = _HINGE_VECTOR_UNITS[field]
    return _vector_target(
        path, key, lambda m=model: m.hinge(name).vector(attr),
        lambda m, v: setattr(m.hinge(name), attr, v), kind.dof, coords,
        lambda i: units[COORDINATE_KIND[coords[i]]], f"{name}.{field}")


def _force_target(model, force, rest, path) -> Target:
    name = force.name
    (field, key), tail = rest[0], rest[1:]
    if tail:
        raise ValueError(f"a force's field has no parts ({field}.{tail[0][0]})")
    kind = force.kind
    fields = [tag for attr, tag in FORCE_NUMBERS if attr in kind.fields]
    if "magnitude" in kind.fields:
        fields.append("Magnitude")
    if "direction" in kind.fields:
        fields.append("Direction")
    fields += [p.tag for p in kind.params]
    if field not in fields:
        raise KeyError(tuple(fields))
    param = next((p for p in kind.params if p.tag == field), None)
    if param is not None:                       # the law's own (its registry row)
        def getp(m=model, attr=param.attr):
            return np.broadcast_to(next(f for f in m.forces if f.name == name).value(attr),
                                   (param.size,))

        def setp(m, v, attr=param.attr):
            next(f for f in m.forces if f.name == name).params[attr] = v
        if param.size == 1:
            _scalar(field, key)
            return Target(path, param.unit, float(getp()[0]),
                          lambda m, value: setp(m, float(value)))
        return _vector_target(path, key, getp, setp, 3, tuple(_XYZ), lambda i: param.unit,
                              f"{name}.{field}")
    if field == "Magnitude":
        _scalar(field, key)

        def set_(m, value):
            m_force = next(f for f in m.forces if f.name == name)
            m_force.magnitude = repr(float(value))
        try:
            current = float(force.magnitude)
        except ValueError:
            current = math.nan               # an expression in t: the study replaces it
        return Target(path, "N or N m", current, set_)
    if field == "Direction":
        def getd(m=model):
            return next(f for f in m.forces if f.name == name).direction

        def setd(m, v):
            next(f for f in m.forces if f.name == name).direction = v
        return _vector_target(path, key, getd, setd, 3, tuple(_XYZ), lambda i: "1",
                              f"{name}.Direction")
    _scalar(field, key)
    attr = dict((tag, a) for a, tag in FORCE_NUMBERS)[field]

    def set_(m, value, attr=attr):
        setattr(next(f for f in m.forces if f.name == name), attr, value)
    v = getattr(force, attr)
    return Target(path, _FORCE_UNITS[field], math.nan if v is None else float(v), set_)


def _contact_target(model, contact, rest, path) -> Target:
    name = contact.name
    (field, key), tail = rest[0], rest[1:]

    def get_c(m):
        return next(c for c in m.contacts if c.name == name)
    if field in ("InputShape", "OutputShape"):
        attr = "input_shape" if field == "InputShape" else "output_shape"
        shape = getattr(contact, attr)
        sub, skey = (tail[0] if len(tail) == 1 else (None, None))
        fields = {"sphere": ("Radius",), "cylinder": ("Radius", "Length"), "box": ("Size",)}
        allowed = fields.get(shape.type, ())
        if sub not in allowed:
            raise ValueError(f"the {shape.type} shape of {field} has "
                             + (", ".join(f"{field}.{f}" for f in allowed) or "no number fields"))
        if sub == "Size":
            return _vector_target(path, skey, lambda m=model: getattr(get_c(m), attr).size,
                                  lambda m, v: setattr(getattr(get_c(m), attr), "size", v),
                                  3, tuple(_XYZ), lambda i: "m", f"{name}.{field}.Size")
        sattr = sub.lower()

        def set_(m, value):
            setattr(getattr(get_c(m), attr), sattr, value)
        return Target(path, "m", float(getattr(shape, sattr)), set_)
    if tail:
        raise ValueError(f"a contact's field has no parts ({field}.{tail[0][0]})")
    tags = dict((tag, a) for a, tag in CONTACT_NUMBERS)
    if field not in tags:
        raise KeyError(tuple(tags) + ("InputShape", "OutputShape"))
    _scalar(field, key)
    attr = tags[field]

    def set_(m, value):
        setattr(get_c(m), attr, value)
    v = getattr(contact, attr)
    return Target(path, _CONTACT_UNITS[field], math.nan if v is None else float(v), set_)


def _coupler_target(model, coupler, rest, path) -> Target:
    name = coupler.name
    (field, key), tail = rest[0], rest[1:]

    def get_c(m):
        return next(c for c in m.couplers if c.name == name)
    if tail:
        raise ValueError(f"a coupler's field has no parts ({field}.{tail[0][0]})")
    if field == "Coefficients":
        return _vector_target(path, key, lambda m=model: get_c(m).coefficients,
                              lambda m, v: setattr(get_c(m), "coefficients", v), 2, (),
                              lambda i: "1", f"{name}.Coefficients")
    attrs = {"Ratio": ("ratio", "1"), "PitchRadius": ("pitch_radius", "m")}
    if field not in attrs:
        raise KeyError(tuple(attrs) + ("Coefficients",))
    _scalar(field, key)
    attr, unit = attrs[field]

    def set_(m, value):
        setattr(get_c(m), attr, value)
    v = getattr(coupler, attr)
    return Target(path, unit, math.nan if v is None else float(v), set_)


def _named(model: MultibodySystem, name: str):
    """The element called ``name`` and its resolver, or (None, None)."""
    for items, resolve in ((model.bodies, _body_target), (model.hinges, _hinge_target),
                           (model.forces, _force_target), (model.contacts, _contact_target),
                           (model.couplers, _coupler_target)):
        for e in items:
            if e.name == name:
                return e, resolve
    return None, None


def target(model: MultibodySystem, path: str) -> Target:
    """Resolve ``path`` (module docstring) against ``model``.

    Raises
    ------
    ValueError
        The path is malformed, names no element, or a field the element does not have (the
        message says what there is).
    """
    parts = _split(path)
    (head, hkey), rest = parts[0], parts[1:]
    if head == "Gravity" and not rest:
        return _vector_target(path, hkey, lambda m=model: m.gravity,
                              lambda m, v: setattr(m, "gravity", v), 3, tuple(_XYZ),
                              lambda i: "m/s^2", "Gravity")
    if head == "Simulation":
        fields = {tag: attr for attr, tag in SIMULATION_FIELDS if tag in _SIMULATION_UNITS}
        if len(rest) != 1 or rest[0][0] not in fields or rest[0][1] is not None or hkey:
            raise ValueError("the simulation's number fields are "
                             + ", ".join(f"Simulation.{t}" for t in fields))
        attr = fields[rest[0][0]]

        def set_(m, value):
            setattr(m.simulation, attr, value)
        return Target(path, _SIMULATION_UNITS[rest[0][0]],
                      float(getattr(model.simulation, attr)), set_)
    if hkey is not None:
        raise ValueError(f"{head}[{hkey}]: an element's name takes no index")
    element, resolve = _named(model, head)
    if element is None:
        if model.part(head) is not None:
            raise ValueError(f"{head!r} is the ground: it has no parameters")
        raise ValueError(f"no element of the model is called {head!r} (a body, hinge, force, "
                         "contact or coupler; or Gravity, Simulation)")
    if not rest:
        raise ValueError(f"{path!r} names the {element.element.lower()} but no field "
                         f"({head}.Field)")
    try:
        return resolve(model, element, rest, path)
    except KeyError as exc:
        fields = exc.args[0]
        raise ValueError(f"{rest[0][0]!r} is not a field of the {element.element.lower()} "
                         f"{head!r}; it has {', '.join(fields)}") from None


# --------------------------------------------------------------------------------------------------
# Parameters: a path and its values
# --------------------------------------------------------------------------------------------------

@dataclass
class Parameter:
    """A study parameter: ``path`` and either a range (``low``, ``high``, ``levels`` for a grid)
    or a list of ``values``. Values in SI units."""

    path: str
    low: float = math.nan
    high: float = math.nan
    levels: int = 0
    values: Optional[tuple] = None

    @property
    def is_range(self) -> bool:
        return self.values is None

    def grid(self) -> np.ndarray:
        """The values of a grid: the list, or ``levels`` values from ``low`` to ``high``."""
        if self.values is not None:
            return np.array(self.values, dtype=float)
        return np.linspace(self.low, self.high, self.levels)

    @property
    def bounds(self) -> tuple[float, float]:
        """(low, high): the range, or the list's least and largest values."""
        if self.values is not None:
            return float(min(self.values)), float(max(self.values))
        return self.low, self.high

    def text(self) -> str:
        """The parameter as written on the command line."""
        if self.values is not None:
            return f"{self.path}=" + ",".join(repr(float(v)) for v in self.values)
        return f"{self.path}={self.low!r}:{self.high!r}" + (f":{self.levels}" if self.levels
                                                              else "")


def parse_parameter(text: str) -> Parameter:
    """``'PATH=LOW:HIGH[:LEVELS]'`` or ``'PATH=V1,V2,...'`` (module docstring).

    Raises
    ------
    ValueError
        Malformed text (what is expected is said).
    """
    if "=" not in text:
        raise ValueError(f"{text!r}: expected PATH=LOW:HIGH:LEVELS or PATH=V1,V2,...")
    path, _, spec = text.partition("=")
    path, spec = path.strip(), spec.strip()
    if not path:
        raise ValueError(f"{text!r}: no path before '='")
    try:
        if ":" in spec:
            parts = [p.strip() for p in spec.split(":")]
            if len(parts) not in (2, 3):
                raise ValueError
            low, high = float(parts[0]), float(parts[1])
            levels = int(parts[2]) if len(parts) == 3 else 0
            return Parameter(path, low, high, levels)
        values = tuple(float(v) for v in spec.split(",") if v.strip())
        return Parameter(path, values=values)
    except ValueError:
        raise ValueError(f"{text!r}: expected PATH=LOW:HIGH:LEVELS (numbers, LEVELS a whole "
                         "number) or PATH=V1,V2,...") from None


def check_parameters(model: MultibodySystem, parameters: Sequence[Parameter],
                     need_levels: bool, resolve: bool = True) -> tuple[list[Target], list[Problem]]:
    """Resolve every parameter against ``model`` and check its values: (targets, problems).

    ``need_levels``: the method is a grid (a range must say how many levels). ``resolve``
    False: the paths are only names (a factory makes the variants); their targets are None.
    """
    targets, problems = [], []
    seen = set()
    if not parameters:
        problems.append(problem("Parameters", "Parameters", "the study has no parameter"))
    for k, p in enumerate(parameters, 1):
        where = f"Parameter {k} ({p.path})"
        if not resolve:
            targets.append(None)
        else:
            try:
                targets.append(target(model, p.path))
            except ValueError as exc:
                problems.append(problem(where, "Path", str(exc)))
                targets.append(None)
        if p.path in seen:
            problems.append(problem(where, "Path", "the same path is given twice"))
        seen.add(p.path)
        if p.values is not None:
            if not p.values:
                problems.append(problem(where, "Values", "the list of values is empty"))
            elif not all(math.isfinite(v) for v in p.values):
                problems.append(problem(where, "Values", "every value must be a finite number"))
            continue
        if not (math.isfinite(p.low) and math.isfinite(p.high)):
            problems.append(problem(where, "Range", f"{p.low!r} : {p.high!r}: the range's ends "
                                                    "must be finite numbers"))
        elif not p.low < p.high:
            problems.append(problem(where, "Range", f"{p.low!r} : {p.high!r} is an empty range "
                                                    "(the low end must be below the high one)"))
        if need_levels and not 2 <= p.levels <= MAX_LEVELS:
            problems.append(problem(where, "Levels", f"{p.levels}: a grid needs 2 to "
                                                     f"{MAX_LEVELS} levels (PATH=LOW:HIGH:LEVELS)"))
        elif p.levels and not 2 <= p.levels <= MAX_LEVELS:
            problems.append(problem(where, "Levels", f"{p.levels}: 2 to {MAX_LEVELS} levels"))
    return targets, problems


def apply(model: MultibodySystem, targets: Sequence[Target], values) -> MultibodySystem:
    """A copy of ``model`` with ``values[i]`` written through ``targets[i]``."""
    import copy
    variant = copy.deepcopy(model)
    for t, v in zip(targets, values):
        t.set(variant, float(v))
    return variant
