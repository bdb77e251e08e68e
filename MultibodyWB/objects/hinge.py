"""The Hinge: a joint from a marker on its input (tip-side) body to one on its output body.

``HingeType`` is one of the solver's :data:`~MultibodyWB.solver.model.HINGE_TYPES`; the table says
which coordinates the type has and which options it takes, and that decides which properties are
shown (:meth:`HingeProxy.update_visibility`) and exported. Every option is a property per
coordinate, named option + coordinate and grouped by coordinate (``StiffnessRz`` in the group
"Coordinate rz"), as :data:`OPTION_PROPERTIES` lists them:

- ``Initial<c>`` and ``InitialRate<c>``: initial coordinate (used unless ``InitialAsDrawn``) and
  rate;
- ``Stiffness<c>``, ``SpringReference<c>`` and ``Damping<c>``: the hinge's spring-damper;
- ``LowerLimit<c>`` and ``UpperLimit<c>``: end stops (used when ``UseLimits``), enforced by a
  compliant stop (:mod:`~MultibodyWB.solver.elements.forces.stop`) of stiffness
  ``StopStiffness<c>`` whose restitution is ``StopRestitution<c>`` (default 0.5) at
  ``StopImpactSpeed<c>`` (default 1 m/s or 1 rad/s); these show only while ``UseLimits`` is on.
  A limited coordinate whose stop stiffness is 0 gets a default when the limits are turned on
  (:func:`default_stop_stiffness`: a 50 Hz stop) and when a document saved before the stops
  existed is opened; the value is in the property, where the user sees and changes it;
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
the dampings are texts with their unit (``"2 N*m/rad"``: :mod:`~MultibodyWB.objects.units`), the
restitution a plain number text (``"0.5"``).
"""

import math
from dataclasses import dataclass

import FreeCAD
import numpy as np

from ..solver.api import COORDINATE_KIND, HINGE_TYPES
from . import labels, units
from .base import (EDITABLE, HIDDEN, BaseProxy, Prop, mechanism_of, quantity_prop, quantity_value,
                   set_value, type_of)

TYPE = "Multibody::Hinge"
COORDINATES = tuple(COORDINATE_KIND)


@dataclass(frozen=True)
class OptionProperty:
    """A per-coordinate hinge property: which option of the type table it belongs to.

    ``quantity`` is a key of ``units.COORDINATE_UNITS[kind]`` (None: an expression); ``attribute``
    the neutral model's ``Hinge`` attribute; ``field`` the model's (XML) field name; ``default``
    the value of a new property in the SI unit of the quantity (None: 0).
    """

    option: str
    prefix: str
    quantity: str
    attribute: str
    field: str
    doc: str
    default: float = None


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
    OptionProperty("limits", "StopStiffness", "stiffness", "stop_stiffness", "StopStiffness",
                   "Stiffness of the end stops of coordinate {c}: the load grows by this much per "
                   "unit of the coordinate beyond a limit. Needed (positive) for every limited "
                   "coordinate. A 0 gets a default when the limits are turned on: the stiffness "
                   "giving the stop a natural frequency of 50 Hz, k = J (2 pi 50 Hz)^2 with J the "
                   "moment of inertia about the hinge axis at the marker of the lighter of the two "
                   "bodies (for a translation its mass m; the ground does not count)"),
    OptionProperty("limits", "StopRestitution", "ratio", "stop_restitution", "StopRestitution",
                   "Coefficient of restitution of the end stops of coordinate {c}, 0 to 1: "
                   "meeting a stop at StopImpactSpeed, the coordinate leaves it at this fraction "
                   "of that speed", default=0.5),
    OptionProperty("limits", "StopImpactSpeed", "rate", "stop_impact_speed", "StopImpactSpeed",
                   "Speed of coordinate {c} at which its end stops give StopRestitution (the "
                   "stop's damping is set from the two)", default=1.0),
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
                    "Apply the LowerLimit and UpperLimit end stops (compliant stops: "
                    "StopStiffness, StopRestitution, StopImpactSpeed; a stiffness left at 0 gets "
                    "a 50 Hz default when this is turned on)", default=False)),
)

#: Prefixes of the stop properties: shown only while ``UseLimits`` is on.
STOP_PREFIXES = ("StopStiffness", "StopRestitution", "StopImpactSpeed")
#: Natural frequency (Hz) the default stop stiffness gives the lighter body on the stop.
STOP_FREQUENCY = 50.0


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
    if option.default is None:
        return quantity_prop(name, group, doc, shown, si)
    default = f"{option.default:g} {si}" if si else option.default
    return quantity_prop(name, group, doc, shown, si, default=default)


def _measured_from_zero(proxy, obj):
    """Version 1 -> 2: hinges made before version 2 measured their drivers and spring references
    from zero; they keep that meaning (the new switches off)."""
    proxy.add_properties(obj)
    obj.DriverFromDrawing = False
    obj.SpringReferenceAsDrawn = False


def _stops_default(proxy, obj):
    """Version 2 -> 3: hinges made before the stops existed get the stop properties; a limited
    coordinate gets the default stop stiffness (:func:`default_stop_stiffness`), announced in the
    report view."""
    proxy.add_properties(obj)
    if getattr(obj, "UseLimits", False):
        fill_stop_stiffness(obj, announce=True)


def _axis_inertia(body, marker, axis):
    """Moment of inertia (kg mm^2) of ``body`` about the line through ``marker``'s origin along
    its ``axis`` (0, 1, 2: x, y, z), and its mass (kg); None if the body has no mass."""
    from .body import body_mass_properties, rotation_matrix
    from .marker import marker_frame
    _, _, props = body_mass_properties(body)
    m = props["mass"]
    if not m > 0.0:
        return None
    xx, yy, zz, xy, xz, yz = props["ji"]
    J_o = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])      # about the base origin
    c = np.asarray(props["center"], dtype=float)
    frame = marker_frame(marker)                                    # in the base frame
    p = np.array(frame.Base)
    n = rotation_matrix(frame.Rotation)[:, axis]

    def shift(r):
        return m * (np.dot(r, r) * np.eye(3) - np.outer(r, r))

    J_p = J_o - shift(c) + shift(c - p)
    return float(n @ J_p @ n), m


#: Axis of the marker each rotation coordinate turns about (as the stops measure it).
_ROTATION_AXIS = {"rx": 0, "ry": 1, "rz": 2}


def default_stop_stiffness(obj, c):
    """The default stop stiffness of coordinate ``c`` of hinge ``obj``, in FreeCAD's internal
    units, and what it came from (a text for messages); (None, reason) when it cannot be had.

    The stiffness gives the stop a natural frequency of :data:`STOP_FREQUENCY`:
    ``k = J (2 pi f)^2`` with ``J`` the moment of inertia about the hinge axis at its marker of
    the lighter of the hinge's two bodies (the ground, which does not move, does not count), or
    ``k = m (2 pi f)^2`` with its mass for a translation.
    """
    rotation = COORDINATE_KIND[c] == "rotation"
    candidates = []
    for marker in (obj.InputMarker, obj.OutputMarker):
        body = getattr(marker, "Body", None) if marker is not None else None
        if body is None:
            continue
        mech = mechanism_of(body)
        if mech is not None and mech.Ground == body:
            continue
        try:
            found = _axis_inertia(body, marker, _ROTATION_AXIS.get(c, 2))
        except Exception:  # a body still incomplete (no solid, no density): no default
            found = None
        if found is not None:
            candidates.append((found[0] if rotation else found[1], body.Label))
    if not candidates:
        return None, "neither body has a mass yet"
    value, label = min(candidates)
    if not value > 0.0:
        return None, f"'{label}' has no inertia about the axis"
    omega = 2.0 * math.pi * STOP_FREQUENCY
    if rotation:      # kg mm^2 -> N m/rad in internal units
        k = units.to_si(value, "kg*m^2") * omega ** 2
        internal = units.from_si(k, "N*m/rad")
        why = (f"{STOP_FREQUENCY:g} Hz with '{label}' ({units.to_si(value, 'kg*m^2'):.4g} "
               f"kg m^2 about the axis)")
    else:
        k = value * omega ** 2
        internal = units.from_si(k, "N/m")
        why = f"{STOP_FREQUENCY:g} Hz with '{label}' ({value:.4g} kg)"
    return internal, why


def fill_stop_stiffness(obj, announce=False):
    """Give each coordinate of hinge ``obj``'s type whose ``StopStiffness`` is 0 the default
    (:func:`default_stop_stiffness`); return the names of the properties set. ``announce``:
    say each in the report view (the user did not ask for it: an old document opened)."""
    kind = HINGE_TYPES.get(obj.HingeType)
    if kind is None or "limits" not in kind.options:
        return []
    done = []
    for c in kind.coordinates:
        name = property_name("StopStiffness", c)
        if name not in obj.PropertiesList:
            continue
        try:
            current = quantity_value(obj, name)
        except ValueError:
            continue              # a text the user typed: theirs to fix
        if current != 0.0:
            continue
        internal, why = default_stop_stiffness(obj, c)
        if internal is None:
            continue
        prop = obj.Proxy.prop(name)
        set_value(obj, prop, float(units.number_text(internal / units.factor(prop.unit))))
        done.append(name)
        if announce:
            FreeCAD.Console.PrintMessage(
                f"MultibodyWB: Hinge '{obj.Label}', property {name}: the limits of {c} are now "
                f"enforced by a stop; its stiffness is set to {units.text(internal, prop.unit)} "
                f"({why}); change it in the hinge's properties\n")
    return done


class HingeProxy(BaseProxy):
    """Proxy of a Hinge."""

    Type = TYPE
    KIND = "Hinge"
    VERSION = 3
    MIGRATIONS = {1: lambda proxy, obj: _measured_from_zero(proxy, obj),
                  2: lambda proxy, obj: _stops_default(proxy, obj)}
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
        if prop in ("HingeType", "SpringReferenceAsDrawn", "UseLimits") and \
                "OutputMarker" in obj.PropertiesList:
            self.update_visibility(obj)
            if prop == "HingeType" and "Restore" not in obj.State:
                labels.relabel_hinge(obj)
            if prop in ("HingeType", "UseLimits") and "Restore" not in obj.State and \
                    getattr(obj, "UseLimits", False):
                fill_stop_stiffness(obj)

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
                    if option.prefix in STOP_PREFIXES and used:
                        used = bool(getattr(obj, "UseLimits", False))
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
