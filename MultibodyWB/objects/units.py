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
import math
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


# --------------------------------------------------------------------------------------------------
# Shown values: one formatter for every view (player, plots, study, FEM loads, messages)
# --------------------------------------------------------------------------------------------------

#: Quantities FreeCAD's schemas spell from base units (``mm^2*kg/(s^2*deg)``, ``kg/s``) or as
#: another quantity (a torque as an energy: ``mJ``, ``eV``): shown in their SI unit with an SI
#: prefix instead. FreeCAD unit text -> the unit shown. A torque or moment is ``N·m`` (never J),
#: a rotational stiffness ``N·m/rad`` as the hinge fields take it.
SI_SHOWN = {"N*m": "N·m", "N*m/rad": "N·m/rad", "N*m*s/rad": "N·m·s/rad", "N*s/m": "N·s/m",
            "J": "J", "N/m": "N/m"}
#: Inertias: kg·mm² below 1e-3 kg·m² (small parts), kg·m² above.
_INERTIA = (("kg·mm²", 1e-6), ("kg·m²", 1.0))
#: SI prefixes: (factor, symbol), smallest first.
PREFIXES = ((1e-12, "p"), (1e-9, "n"), (1e-6, "µ"), (1e-3, "m"), (1.0, ""), (1e3, "k"),
            (1e6, "M"), (1e9, "G"))
#: Units FreeCAD's schemas show that take an SI prefix when FreeCAD's own ladder ends
#: (a force of 2e-15 N is ``2 fN``... not ``2e-12 mN``): their SI symbol.
_PREFIXABLE = {"N": "N", "W": "W", "Pa": "Pa"}
#: A unit FreeCAD's schema spells from its base units (US customary shows a force in
#: ``mm*kg/s^2``): the SI unit with a prefix is shown instead.
_BASE_SPELLED = re.compile(r"mm\^?\d?\*kg|kg\*mm|kg/s\b|/\(s\^\d|\*deg\)")
#: A value this small against the scale of what it is shown with (``reference``) is round-off:
#: shown as 0.
ROUND_OFF = 1e-9


def _key(si):
    """A unit text as FreeCAD spells it: ``"N m"``, ``"N·m"`` -> ``"N*m"``; ``"1"`` -> ``""``."""
    text = "*".join(str(si).replace("·", " ").replace("*", " ").split())
    return "" if text in ("", "1", "-") else text


@functools.lru_cache(maxsize=None)
def _special(si_text):
    """The :data:`SI_SHOWN` key (or ``"kg*m^2"``) of a unit of one of those dimensions, by
    dimension: ``"m^2*kg/(s^2*rad)"`` is ``"N*m/rad"``, a ``kg*m^2/s^2`` is a torque unless it
    is written ``J``; else None."""
    key = _key(si_text)
    if key in SI_SHOWN or key == "kg*m^2":
        return key
    try:
        dim = unit(key)
    except Exception:  # FreeCAD's parser raises its own errors
        return None
    for name in ("N*m", "N*m/rad", "N*m*s/rad", "N*s/m", "kg*m^2"):
        if unit(name) == dim:
            return name
    return None


def _prefixed(symbol, magnitude):
    """(factor, label) of ``symbol`` with the SI prefix that shows ``magnitude`` (SI) as 1 to
    999: shown = SI value * factor."""
    chosen = PREFIXES[4]
    if magnitude > 0.0 and math.isfinite(magnitude):
        for f, p in PREFIXES:
            if magnitude >= f * (1.0 - 1e-12):
                chosen = (f, p)
    return 1.0 / chosen[0], chosen[1] + symbol


def preferred(si, magnitude=1.0):
    """How a quantity of ``magnitude`` in the SI unit ``si`` is shown: ``(factor, label)``, shown
    value = SI value * ``factor``, in the document's unit schema (FreeCAD's
    ``getUserPreferred``: ``preferred("m", 0.08) == (1000.0, "mm")`` in the Standard schema)
    with sensible prefixes where the schema has none: torques and moments ``N·m`` (``mN·m``,
    ``kN·m``), stiffnesses ``N/m``, ``N·m/rad``, dampings ``N·s/m``, ``N·m·s/rad``, inertias
    ``kg·m²`` or ``kg·mm²``; forces below FreeCAD's ``mN`` in ``µN``, ``nN``. ``si`` ``""`` or
    ``"1"``: a number, ``(1.0, "")``."""
    magnitude = abs(float(magnitude)) if magnitude is not None else 1.0
    if not math.isfinite(magnitude) or magnitude == 0.0:
        magnitude = 1.0
    key = _key(si)
    if not key:
        return 1.0, ""
    special = _special(key)
    if special == "kg*m^2":
        label, f = _INERTIA[0] if magnitude < 1e-3 else _INERTIA[1]
        return 1.0 / f, label
    if special is not None:
        return _prefixed(SI_SHOWN[special], magnitude)
    try:
        q = FreeCAD.Units.Quantity(magnitude * factor(key), unit(key))
        _text, scale, name = q.getUserPreferred()
        scale = float(scale)
    except Exception:  # a unit FreeCAD does not know: SI
        return 1.0, si
    if not scale or not name or not math.isfinite(scale):
        return 1.0, si
    out = factor(key) / scale
    shown_size = magnitude * out
    spelled = _BASE_SPELLED.search(name) is not None     # a schema without a name for it
    if spelled or key in _PREFIXABLE and not 1e-3 <= shown_size < 1e6:
        return _prefixed(_PREFIXABLE.get(key, key.replace("*", "·")), magnitude)
    return out, name


def si_text(value, si, digits=4, reference=None):
    """A value in the SI unit ``si`` as every view shows it (:func:`preferred`), with ``digits``
    significant digits: ``si_text(0.08, "m") == "80 mm"``, ``si_text(0.0021, "N m") ==
    "2.1 mN·m"``. ``reference``: the scale of what the value is shown with (the largest load of
    the run, of a table): a value below :data:`ROUND_OFF` of it is round-off, shown as ``0`` in
    the reference's unit; so is a load, stiffness ... below a pico-unit (``2e-15 N``: ``0 N``).
    NaN and infinities as they are, in the unit."""
    value = float(value)
    size = abs(value)
    if reference is not None and math.isfinite(float(reference)) and float(reference) != 0.0:
        ref = abs(float(reference))
        if size <= ROUND_OFF * ref:
            value, size = 0.0, ref
    if 0.0 < size < PREFIXES[0][0] and (_key(si) in _PREFIXABLE or _special(_key(si))):
        value = 0.0                         # below a pico-unit: round-off, not a load
    f, label = preferred(si, size if math.isfinite(size) and size else 1.0)
    if math.isfinite(value) and value != 0.0:
        number = f"{value * f:.{digits}g}"
    else:
        number = "0" if value == 0.0 else f"{value}"
    return f"{number} {label}" if label else number


def si_vector_text(values, si, digits=4):
    """A vector in the SI unit ``si`` in the unit :func:`preferred` gives its largest component:
    ``si_vector_text((0.0085, 0.006, 0.0065), "m") == "(8.5, 6, 6.5) mm"``; components below
    :data:`ROUND_OFF` of the largest (round-off) read 0."""
    values = [float(x) for x in values]
    largest = max((abs(x) for x in values), default=0.0)
    values = [0.0 if abs(x) <= ROUND_OFF * largest else x for x in values]
    f, label = preferred(si, largest or 1.0)
    text = "(" + ", ".join("0" if x == 0.0 else f"{x * f:.{digits}g}" for x in values) + ")"
    return f"{text} {label}" if label else text


def _si_of(unit_text):
    """The SI value of one ``unit_text`` and the SI unit text of its dimension, for the
    internal-unit formatters: ``"mm"`` -> ``(0.001, "m")``."""
    special = _special(unit_text)
    if special is not None:
        return factor(unit_text) / factor(special), special
    return None


def user_text(internal, unit_text, digits=4):
    """A quantity given in FreeCAD's internal units, in the unit the user's schema prefers for it,
    with ``digits`` significant digits: ``user_text(168.0, "mm^3") == "168 mm^3"``,
    ``user_text(1000.0, "mm^3") == "1 ml"`` (Standard schema); the quantities of
    :data:`SI_SHOWN` as :func:`si_text` shows them (``user_text(1e6, "N*m") == "1 N·m"``, not
    ``1 J``). ``UserString`` has the schema's decimals instead, and a 0.001 mm^3 overlap would
    read ``0.00 mm^3``."""
    special = _si_of(unit_text)
    if special is not None:
        return si_text(float(internal) / factor(special[1]), special[1], digits)
    q = FreeCAD.Units.Quantity(float(internal), unit(unit_text))
    shown_text, scale, name = q.getUserPreferred()
    if not scale or not name:
        return shown_text
    return f"{float(internal) / scale:.{digits}g} {name}"


def user_vector_text(internal, unit_text, digits=4):
    """A vector given in FreeCAD's internal units, in the unit the user's schema prefers for its
    largest component: ``user_vector_text((8.5, 6, 6.5), "mm") == "(8.5, 6, 6.5) mm"``; a
    moment ``(0, 0, 2.5) N·m`` (:func:`si_vector_text`)."""
    values = [float(x) for x in internal]
    special = _si_of(unit_text)
    if special is not None:
        return si_vector_text([x / factor(special[1]) for x in values], special[1], digits)
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
