"""Units of the document objects: what each quantity shows in FreeCAD and what it is in SI.

FreeCAD stores every quantity in its internal units (mm, kg, s, deg; a force in mN = kg mm/s^2) and
shows it in the user's unit schema. The neutral model is SI (m, kg, s, N, rad). The two meet in
:mod:`MultibodyWB.objects.export` (FreeCAD to SI, once, at export) and
:mod:`MultibodyWB.document.import_model` (SI to FreeCAD): both convert with the two functions here,
which use FreeCAD's own unit table.

FreeCAD 0.20 has no property types for density, mass, moment of inertia, stiffness, damping or time.
Such quantities are ``App::PropertyQuantity`` properties whose unit is set from Python
(``obj.Density = FreeCAD.Units.Unit("kg/m^3")``). FreeCAD saves the value (internal units) but not
that unit, so the objects set it again when a document is restored (``BaseProxy.add_properties``).
FreeCAD has no vector property with a unit other than mm (``App::PropertyVector`` shows
``[0.00 0.00 250.00]``): vectors with a unit (initial velocities) are texts too,
``"0, 0, 250 mm/s"`` (:func:`parse_vector`, :func:`vector_text`; units in :data:`VECTOR_UNITS`).

**Quantities as texts.** The property editor shows a quantity as FreeCAD's unit schema translates
it, with the number of decimals of the user's preferences (2 by default), in FreeCAD 0.20 and
1.0 alike. The schemas scale lengths, masses, forces, pressures, N/m... to a readable unit, but
spell the others from the base units: 2 N m/rad shows as ``34906.59 mm^2*kg/(s^2*deg)``,
10 N s/m as ``10.00 kg/s``, 0.79 kg mm^2 as ``0.79 mm^2*kg``, and a time as seconds with two
decimals (a step of 1e-5 s shows as ``0.00 s``); ``App::PropertyFloat`` has the same two
decimals (a tolerance of 1e-8 shows as ``0.00``). Quantities in :data:`TEXT_UNITS` are therefore
``App::PropertyString`` properties holding the number and its unit as the user reads them:
``"2 N*m/rad"``, ``"1e-05 s"``, ``"1e-06"``. A bare number typed in is completed with the unit
(:func:`normalize`); any unit of the same dimension is accepted (``"34.9 N*mm/deg"``, ``"10 us"``);
:func:`parse` reads the text in FreeCAD's internal units, and the objects' checks name a text
that is not such a quantity. Files saved when these were ``App::PropertyQuantity`` or
``App::PropertyFloat`` properties are converted when they are opened
(``BaseProxy.add_properties``).
"""

import functools
import re

import FreeCAD

QUANTITY = "App::PropertyQuantity"
#: A quantity kept as a text with its unit (see the module's docstring).
TEXT = "App::PropertyString"

#: Units whose quantities are texts: FreeCAD's schemas spell them from base units or show them
#: with too few digits. ``""``: a plain number (tolerances).
TEXT_UNITS = frozenset({"N*m/rad", "N*m*s/rad", "N*s/m", "kg*mm^2", "s", ""})

#: Time units FreeCAD's quantity parser does not know (it reads "10 µs" as the number 10).
TIME_UNITS = {"ms": 1e-3, "us": 1e-6, "\u00b5s": 1e-6, "\u03bcs": 1e-6, "ns": 1e-9}
_NUMBER_UNIT = re.compile(r"^\s*([-+]?(?:\d+(?:[.,]\d*)?|[.,]\d+)(?:[eE][-+]?\d+)?)\s*(.*?)\s*$")


@functools.lru_cache(maxsize=None)
def factor(unit):
    """Value in FreeCAD's internal units of one ``unit`` (``factor("m") == 1000.0``).

    Parameters
    ----------
    unit : str
        A unit FreeCAD parses: ``"m"``, ``"N*m/rad"``, ``"kg/m^3"``, ``"mm/s^2"``...; ``""``: a
        plain number.
    """
    if not unit:
        return 1.0
    return FreeCAD.Units.Quantity(f"1 {unit}").Value


def unit(text):
    """The ``FreeCAD.Units.Unit`` of a unit text (its dimension)."""
    if not text:
        return FreeCAD.Units.Unit()
    return FreeCAD.Units.Quantity(f"1 {text}").Unit


def number_text(value):
    """A number as a designer reads it: six significant digits, no trailing zeros
    (``1e-05``, ``0.08``, ``2``, ``34906.6``)."""
    value = float(value)
    return "0" if value == 0.0 else f"{value:.6g}"


def text(internal, unit_text):
    """The text of a quantity given in FreeCAD's internal units: ``"2 N*m/rad"``."""
    number = number_text(float(internal) / factor(unit_text))
    return f"{number} {unit_text}" if unit_text else number


def parse(value, unit_text):
    """A quantity text (or a number, read in ``unit_text``) in FreeCAD's internal units.

    ``"2 N*m/rad"``, ``"34.9 N*mm/deg"``, ``"2"`` (in ``unit_text``), ``"10 us"``, ``"1/100 s"``.

    Raises
    ------
    ValueError
        The text is not a quantity of the dimension of ``unit_text``; the message says what is
        expected (``'abc' is not a quantity in N*m/rad (e.g. 2 N*m/rad)``).
    """
    if isinstance(value, FreeCAD.Units.Quantity):
        if value.Unit != unit(unit_text):
            raise ValueError(f"{value.UserString} is not a quantity in {unit_text or 'a number'}")
        return float(value.Value)
    if not isinstance(value, str):
        return float(value) * factor(unit_text)
    example = f"e.g. 2 {unit_text}" if unit_text else "e.g. 1e-06"
    problem = ValueError(f"'{value}' is not a {'quantity in ' + unit_text if unit_text else 'number'}"
                         f" ({example})")
    match = _NUMBER_UNIT.match(value)
    if match is not None:
        number, written = match.groups()
        number = float(number.replace(",", "."))
        if not written:
            return number * factor(unit_text)
        if written in TIME_UNITS:
            if unit_text != "s":
                raise problem
            return number * TIME_UNITS[written]
    if not value.strip():
        raise problem
    try:
        q = FreeCAD.Units.Quantity(value)
    except Exception:  # FreeCAD's parser raises its own errors
        raise problem from None
    if q.Unit != unit(unit_text):
        raise problem
    return float(q.Value)


_VECTOR_SEPARATORS = re.compile(r"[,;\s\[\]()]+")


def _vector_parts(text):
    """``"(0, 0, 0.25) m/s"`` -> ``(["0", "0", "0.25"], "m/s")``; None if not 3 numbers first."""
    tokens = [t for t in _VECTOR_SEPARATORS.split(text.strip()) if t]
    if len(tokens) < 3:
        return None
    try:
        [float(t) for t in tokens[:3]]
    except ValueError:
        return None
    return tokens[:3], " ".join(tokens[3:])


def vector_text(internal, unit_text):
    """The text of a vector given in FreeCAD's internal units: ``"0, 0, 250 mm/s"``."""
    scale = factor(unit_text)
    return ", ".join(number_text(float(x) / scale) for x in internal) + f" {unit_text}"


def parse_vector(value, unit_text):
    """A vector text (``"0, 0, 250 mm/s"``, ``"(0 0 0.25) m/s"``; without a unit: in
    ``unit_text``) or 3 numbers in ``unit_text``, as 3 floats in FreeCAD's internal units.

    Raises ValueError saying what is expected.
    """
    if not isinstance(value, str):
        values = [float(x) for x in value]
        if len(values) != 3:
            raise ValueError(f"{len(values)} numbers given; a vector has 3")
        return tuple(x * factor(unit_text) for x in values)
    problem = ValueError(f"'{value}' is not a vector in {unit_text} (e.g. 0, 0, 250 {unit_text})")
    parts = _vector_parts(value)
    if parts is None:
        raise problem
    numbers, written = [float(x) for x in parts[0]], parts[1]
    if not written:
        scale = factor(unit_text)
    else:
        try:
            q = FreeCAD.Units.Quantity(f"1 {written}")
        except Exception:  # FreeCAD's parser raises its own errors
            raise problem from None
        if q.Unit != unit(unit_text):
            raise problem
        scale = q.Value
    return tuple(x * scale for x in numbers)


def normalize_vector(value, unit_text):
    """The text to keep for a vector typed in: with its unit (``"0 0 250"`` ->
    ``"0, 0, 250 mm/s"``), or as typed if it has one; None if it is no such vector."""
    try:
        internal = parse_vector(value, unit_text)
    except ValueError:
        return None
    if not _vector_parts(value)[1]:
        return vector_text(internal, unit_text)
    return value.strip()


def normalize(value, unit_text):
    """The text to keep for ``value`` typed into a text quantity: a bare number gets the unit
    (``"2" -> "2 N*m/rad"``), a text with a unit stays as typed; None if it is no quantity of
    that dimension (then it stays too, and the object's check names it)."""
    try:
        parse(value, unit_text)
    except ValueError:
        return None
    match = _NUMBER_UNIT.match(value)
    if match is not None and not match.group(2):
        return f"{match.group(1)} {unit_text}" if unit_text else match.group(1)
    return value.strip()


def to_si(internal, si):
    """A value in FreeCAD's internal units converted to the SI unit ``si`` (a float)."""
    return float(internal) / factor(si)


def from_si(value, si):
    """A value in the SI unit ``si`` converted to FreeCAD's internal units (a float)."""
    return float(value) * factor(si)


def shown(value, si):
    """A value in the SI unit ``si`` as FreeCAD shows it in the user's unit schema, for messages:
    ``shown(0.0101, "m") == "10.10 mm"``, ``shown(0.5, "rad") == "28.65 °"``."""
    return FreeCAD.Units.Quantity(from_si(value, si), unit(si)).UserString


def user_text(internal, unit_text, digits=4):
    """A quantity given in FreeCAD's internal units, in the unit the user's schema prefers for it,
    with ``digits`` significant digits: ``user_text(168.0, "mm^3") == "168 mm^3"``,
    ``user_text(1000.0, "mm^3") == "1 ml"`` (Standard schema). ``UserString`` has the schema's
    decimals instead, and a 0.001 mm^3 overlap would read ``0.00 mm^3``."""
    q = FreeCAD.Units.Quantity(float(internal), unit(unit_text))
    shown_text, scale, name = q.getUserPreferred()
    if not scale or not name:
        return shown_text
    return f"{float(internal) / scale:.{digits}g} {name}"


def user_vector_text(internal, unit_text, digits=4):
    """A vector given in FreeCAD's internal units, in the unit the user's schema prefers for its
    largest component: ``user_vector_text((8.5, 6, 6.5), "mm") == "(8.5, 6, 6.5) mm"``."""
    values = [float(x) for x in internal]
    largest = max(values, key=abs)
    # round-off of a computed point (4e-17 mm off a symmetry plane) reads 0
    values = [0.0 if abs(x) <= 1e-12 * abs(largest) else x for x in values]
    _, scale, name = FreeCAD.Units.Quantity(largest or 1.0, unit(unit_text)).getUserPreferred()
    if not scale or not name:
        scale, name = 1.0, unit_text
    return "(" + ", ".join(f"{x / scale:.{digits}g}" for x in values) + f") {name}"


def quantity(value, unit_text):
    """A ``FreeCAD.Units.Quantity`` from a number in ``unit_text``, a quantity or a text.

    Numbers are taken in ``unit_text`` (``quantity(7850, "kg/m^3")``); a text is parsed with its own
    unit (``"7.85 g/cm^3"``); a Quantity is returned as it is.
    """
    if isinstance(value, FreeCAD.Units.Quantity):
        return value
    if isinstance(value, str):
        return FreeCAD.Units.Quantity(value)
    return FreeCAD.Units.Quantity(float(value) * factor(unit_text), unit(unit_text))


def model_unit(text):
    """A unit as the solver's tables write it (``"N m/rad"``) in FreeCAD's (``"N*m/rad"``)."""
    return "*".join(text.split())


#: Per kind of hinge coordinate: the unit shown in FreeCAD and the SI unit of each hinge quantity.
COORDINATE_UNITS = {
    "translation": {"coordinate": ("mm", "m"), "rate": ("mm/s", "m/s"),
                    "stiffness": ("N/m", "N/m"), "damping": ("N*s/m", "N*s/m"), "time": ("s", "s"),
                    "ratio": ("", "")},
    "rotation": {"coordinate": ("deg", "rad"), "rate": ("deg/s", "rad/s"),
                 "stiffness": ("N*m/rad", "N*m/rad"), "damping": ("N*m*s/rad", "N*m*s/rad"),
                 "time": ("s", "s"), "ratio": ("", "")},
}

#: Vector properties: (unit shown, SI unit).
VECTOR_UNITS = {
    "acceleration": ("mm/s^2", "m/s^2"),
    "velocity": ("mm/s", "m/s"),
    "angular_velocity": ("deg/s", "rad/s"),
    "length": ("mm", "m"),
}
