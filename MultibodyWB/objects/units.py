"""Units of the document objects: what each quantity shows in FreeCAD and what it is in SI.

FreeCAD stores every quantity in its internal units (mm, kg, s, deg; a force in mN = kg mm/s^2) and
shows it in the user's unit schema. The neutral model is SI (m, kg, s, N, rad). The two meet in
:mod:`MultibodyWB.export` (FreeCAD to SI, once, at export) and :mod:`MultibodyWB.import_model`
(SI to FreeCAD): both convert with the two functions here, which use FreeCAD's own unit table.

FreeCAD 0.20 has no property types for density, mass, moment of inertia, stiffness, damping or time.
Such quantities are ``App::PropertyQuantity`` properties whose unit is set from Python
(``obj.Density = FreeCAD.Units.Unit("kg/m^3")``). FreeCAD saves the value (internal units) but not
that unit, so the objects set it again when a document is restored (``BaseProxy.add_properties``).
Vectors (gravity, initial velocities) are ``App::PropertyVector`` with their unit stated in the
tool tip and in :data:`VECTOR_UNITS`: FreeCAD has no vector property with a unit other than mm.
"""

import functools

import FreeCAD

QUANTITY = "App::PropertyQuantity"


@functools.lru_cache(maxsize=None)
def factor(unit):
    """Value in FreeCAD's internal units of one ``unit`` (``factor("m") == 1000.0``).

    Parameters
    ----------
    unit : str
        A unit FreeCAD parses: ``"m"``, ``"N*m/rad"``, ``"kg/m^3"``, ``"mm/s^2"``...
    """
    return FreeCAD.Units.Quantity(f"1 {unit}").Value


def unit(text):
    """The ``FreeCAD.Units.Unit`` of a unit text (its dimension)."""
    return FreeCAD.Units.Quantity(f"1 {text}").Unit


def to_si(internal, si):
    """A value in FreeCAD's internal units converted to the SI unit ``si`` (a float)."""
    return float(internal) / factor(si)


def from_si(value, si):
    """A value in the SI unit ``si`` converted to FreeCAD's internal units (a float)."""
    return float(value) * factor(si)


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
                    "stiffness": ("N/m", "N/m"), "damping": ("N*s/m", "N*s/m"), "time": ("s", "s")},
    "rotation": {"coordinate": ("deg", "rad"), "rate": ("deg/s", "rad/s"),
                 "stiffness": ("N*m/rad", "N*m/rad"), "damping": ("N*m*s/rad", "N*m*s/rad"),
                 "time": ("s", "s")},
}

#: Vector properties: (unit shown, SI unit).
VECTOR_UNITS = {
    "acceleration": ("mm/s^2", "m/s^2"),
    "velocity": ("mm/s", "m/s"),
    "angular_velocity": ("deg/s", "rad/s"),
    "length": ("mm", "m"),
}
