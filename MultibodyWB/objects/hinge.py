"""The Hinge: a joint from a marker on its input (tip-side) body to one on its output body.

``HingeType`` is one of the solver's :data:`~MultibodyWB.solver.model.HINGE_TYPES`; the table says
which coordinates the type has and which options it takes, and that decides which properties are
shown (:meth:`HingeProxy.update_visibility`) and exported. Every option is a property per
coordinate, named option + coordinate and grouped by coordinate (``StiffnessRz`` in the group
"Coordinate rz"), as :data:`OPTION_PROPERTIES` lists them:

- ``Initial<c>`` and ``InitialRate<c>``: initial coordinate (used unless ``InitialAsDrawn``) and
  rate;
- ``Stiffness<c>``, ``SpringReference<c>`` and ``Damping<c>``: the hinge's spring-damper;
- ``LowerLimit<c>`` and ``UpperLimit<c>``: end stops (used when ``UseLimits``);
- ``Driver<c>``: the coordinate as a function of time, an expression in ``t`` (s) whose value is in
  SI units (m for translations, rad for rotations), as the solver reads it: ``314.159*t``;
  with ``DriverFromDrawing`` (new hinges) it is the change from the start, so the parts start
  where they are drawn;
- ``MotorSpeed<c>`` and ``MotorRampTime<c>``: a motor turning (or pushing) the coordinate at a
  constant speed from where it is drawn, reached smoothly in the ramp time; speed 0: no motor.

``SpringReferenceAsDrawn`` (new hinges) relaxes the hinge's spring where the coordinates start, so
no energy is stored at t = 0; off, the ``SpringReference<c>`` values count.

Units shown: translations mm, rotations deg, rates mm/s and deg/s, stiffnesses N/m and N m/rad,
dampings N s/m and N m s/rad (:data:`~MultibodyWB.objects.units.COORDINATE_UNITS`); N m/rad and
the dampings are texts with their unit (``"2 N*m/rad"``: :mod:`~MultibodyWB.objects.units`).
"""

from dataclasses import dataclass

from ..solver.model import COORDINATE_KIND, HINGE_TYPES
from . import labels, units
from .base import EDITABLE, HIDDEN, BaseProxy, Prop, quantity_prop, type_of

TYPE = "Multibody::Hinge"
COORDINATES = tuple(COORDINATE_KIND)


@dataclass(frozen=True)
class OptionProperty:
    """A per-coordinate hinge property: which option of the type table it belongs to.

    ``quantity`` is a key of ``units.COORDINATE_UNITS[kind]`` (None: an expression); ``attribute``
    the neutral model's ``Hinge`` attribute; ``field`` the model's (XML) field name.
    """

    option: str
    prefix: str
    quantity: str
    attribute: str
    field: str
    doc: str


OPTION_PROPERTIES = (
    OptionProperty("initial", "Initial", "coordinate", "initial_coordinates", "InitialCoordinates",
                   "Initial value of coordinate {c} (used when InitialAsDrawn is false)"),
    OptionProperty("initial", "InitialRate", "rate", "initial_rates", "InitialRates",
                   "Initial rate of coordinate {c}"),
    OptionProperty("stiffness", "Stiffness", "stiffness", "stiffness", "Stiffness",
                   "Spring stiffness on coordinate {c}"),
    OptionProperty("stiffness", "SpringReference", "coordinate", "spring_reference",
                   "SpringReference", "Value of coordinate {c} at which the spring is relaxed"),
    OptionProperty("damping", "Damping", "damping", "damping", "Damping",
                   "Viscous damping on coordinate {c}"),
    OptionProperty("limits", "LowerLimit", "coordinate", "lower_limits", "LowerLimits",
                   "Lower end stop of coordinate {c} (used when UseLimits)"),
    OptionProperty("limits", "UpperLimit", "coordinate", "upper_limits", "UpperLimits",
                   "Upper end stop of coordinate {c} (used when UseLimits)"),
    OptionProperty("driver", "Driver", None, "drivers", "Driver",
                   "Coordinate {c} prescribed as a function of time: an expression in t (s) "
                   "giving m or rad (SI, the solver's units), measured from the drawing when "
                   "DriverFromDrawing (2*pi*t: one turn a second from where it is drawn); "
                   "empty: not driven"),
    OptionProperty("driver", "MotorSpeed", "rate", "motors", "Motor",
                   "Motor on coordinate {c}: constant speed from where it is drawn (360 deg/s "
                   "= 60 rpm); 0: no motor"),
    OptionProperty("driver", "MotorRampTime", "time", "motors", "Motor",
                   "Time the motor on coordinate {c} takes to reach its speed from rest "
                   "(smooth start; 0: full speed at once)"),
)

#: Per-hinge switches of an option.
OPTION_SWITCHES = (
    ("initial", Prop("InitialAsDrawn", "App::PropertyBool", "Hinge",
                     "Start from the coordinates the markers' poses have in the drawn "
                     "configuration (else from the Initial values)", default=True)),
    ("initial", Prop("InitialIsEstimate", "App::PropertyBool", "Hinge",
                     "The Initial values (coordinates and rates) are only an estimate: the "
                     "assembly of a closed loop may change them (it keeps prescribed values, "
                     "the default, or refuses to run)", default=False)),
    ("driver", Prop("DriverFromDrawing", "App::PropertyBool", "Hinge",
                    "Driver expressions give the change of the coordinate from its start (the "
                    "drawing, or the Initial value): the parts start where they are drawn. "
                    "Off: the expression is the coordinate itself, measured from the markers' "
                    "coinciding frames", default=True)),
    ("stiffness", Prop("SpringReferenceAsDrawn", "App::PropertyBool", "Hinge",
                       "The hinge's spring is relaxed where the coordinates start (the drawing): "
                       "no energy stored at t = 0. Off: relaxed at the SpringReference values",
                       default=True)),
    ("limits", Prop("UseLimits", "App::PropertyBool", "Hinge",
                    "Apply the LowerLimit and UpperLimit end stops", default=False)),
)


def property_name(prefix, coordinate):
    """``("Stiffness", "rz") -> "StiffnessRz"``."""
    return prefix + coordinate.capitalize()


def _coordinate_prop(option, c):
    kind = COORDINATE_KIND[c]
    name = property_name(option.prefix, c)
    group = f"Coordinate {c}"
    doc = option.doc.format(c=c)
    if option.quantity is None:
        return Prop(name, "App::PropertyString", group, doc, default="")
    shown, si = units.COORDINATE_UNITS[kind][option.quantity]
    return quantity_prop(name, group, doc, shown, si)


def _measured_from_zero(proxy, obj):
    """Version 1 -> 2: hinges made before version 2 measured their drivers and spring references
    from zero; they keep that meaning (the new switches off)."""
    proxy.add_properties(obj)
    obj.DriverFromDrawing = False
    obj.SpringReferenceAsDrawn = False


class HingeProxy(BaseProxy):
    """Proxy of a Hinge."""

    Type = TYPE
    KIND = "Hinge"
    VERSION = 2
    MIGRATIONS = {1: lambda proxy, obj: _measured_from_zero(proxy, obj)}
    PROPERTIES = (
        Prop("HingeType", "App::PropertyEnumeration", "Hinge",
             "Kind of joint; decides the coordinates and options", default="revolute",
             enum=tuple(HINGE_TYPES)),
        Prop("InputMarker", "App::PropertyLink", "Hinge",
             "Marker on the input (tip-side) body; the hinge axis is the markers' z axis"),
        Prop("OutputMarker", "App::PropertyLink", "Hinge",
             "Marker on the output (root-side) body, the ground's for a hinge to the ground"),
    ) + tuple(p for _, p in OPTION_SWITCHES) + tuple(
        _coordinate_prop(option, c) for c in COORDINATES for option in OPTION_PROPERTIES)
    FIELDS = {"Type": "HingeType", "Input": "InputMarker", "Output": "OutputMarker",
              "Name": "Label"}

    def onChanged(self, obj, prop):
        super().onChanged(obj, prop)
        if prop in ("HingeType", "SpringReferenceAsDrawn") and \
                "OutputMarker" in obj.PropertiesList:
            self.update_visibility(obj)
            if prop == "HingeType" and "Restore" not in obj.State:
                labels.relabel_hinge(obj)

    def update_visibility(self, obj):
        """Show the coordinates and options the type has (:data:`HINGE_TYPES`), hide the rest."""
        kind = HINGE_TYPES.get(obj.HingeType)
        options = kind.options if kind else frozenset()
        coordinates = kind.coordinates if kind else ()
        present = set(obj.PropertiesList)
        for option, prop in OPTION_SWITCHES:
            if prop.name in present:
                obj.setEditorMode(prop.name, EDITABLE if option in options else HIDDEN)
        for c in COORDINATES:
            for option in OPTION_PROPERTIES:
                name = property_name(option.prefix, c)
                if name in present:
                    used = c in coordinates and option.option in options
                    if option.prefix == "SpringReference" and used and \
                            "SpringReferenceAsDrawn" in present:
                        used = not obj.SpringReferenceAsDrawn
                    obj.setEditorMode(name, EDITABLE if used else HIDDEN)

    def field_property(self, obj, field):
        """The property (or properties) a model field of this hinge is edited in."""
        for option in OPTION_PROPERTIES:
            if option.field == field:
                kind = HINGE_TYPES.get(obj.HingeType)
                coordinates = kind.coordinates if kind else COORDINATES
                return ", ".join(property_name(option.prefix, c) for c in coordinates)
        return self.FIELDS.get(field, field)

    def check(self, obj):
        problems = []
        for prop in ("InputMarker", "OutputMarker"):
            marker = getattr(obj, prop)
            if marker is not None and type_of(marker) != "Multibody::Marker":
                problems.append((prop, f"'{marker.Label}' is not a Multibody marker"))
        return problems
