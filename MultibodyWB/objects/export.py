"""Export a Mechanism to the neutral model: the one place where FreeCAD's units become SI.

:func:`to_model` reads a Mechanism and its members and returns a
:class:`~MultibodyWB.solver.model.MultibodySystem` in SI units (m, kg, s, N, rad); :func:`write`
also writes it with :func:`MultibodyWB.solver.model.xmlio.write`. Every conversion goes through
:func:`MultibodyWB.objects.units.to_si` with the SI unit each property declares.

The export refuses a mechanism with problems and lists every one of them at once
(:class:`~MultibodyWB.solver.model.ModelError`): first what only the FreeCAD objects can tell (a
body without a solid, a marker whose face is gone...; each proxy's ``check``), then everything the
solver's own validation finds in the model (references, one marker per hinge end, markers on one
body, physics, connectivity, expressions), which is not repeated here. Each problem names the
FreeCAD object and the property to fix: ``Hinge 'J1', property OutputMarker: is missing...``.

Mapping (``obj.Label`` is the model name, ``obj.Label2`` its label):

- the Mechanism's ground body -> ``Ground`` (base frame and markers; its solids' mass is not used);
- every other Body -> ``RigidBody`` numbered 1, 2... in the Mechanism's order, then the hinges;
- a Marker -> a ``Marker`` of its body with ID ``MarkerId``, its frame in the body's base frame;
- Hinge, Force and Simulation -> the model's, with only the fields their type uses;
- a Contact -> a ``Contact`` (shapes' dimensions in m, speeds in m/s, the stiffness as it is; a
  convex side's ``Points``: the vertices of the hull of its solid's tessellation, in its
  marker's frame, :func:`~.contact.hull_points`);
- a Coupler -> a ``Coupler`` between its hinges' coordinates (named by the hinges' labels; the
  pitch radius in m).
"""

from dataclasses import dataclass, field

import FreeCAD
import numpy as np

from . import units
from .base import BaseProxy, quantity_value, type_of
from .body import TYPE as BODY
from .body import body_mass_properties, rotation_matrix, solid_placement
from .contact import TYPE as CONTACT
from .contact import shape_fields
from .coupler import TYPE as COUPLER
from .coupler import si_field
from .force import TYPE as FORCE
from .force import field_properties, type_params
from .hinge import OPTION_PROPERTIES, TYPE as HINGE
from .hinge import property_name
from .marker import TYPE as MARKER
from .marker import marker_frame
from .base import members
from .simulation import MODEL_ATTRIBUTES, TYPE as SIMULATION
from ..solver.api import (COORDINATE_KIND, FORCE_TYPES, HINGE_TYPES, Driver, ModelError, Motor,
                          MultibodySystem, Problem, hinged_contacts, matrix_to_bryant, xmlio)

#: Body fields the model cannot judge when the body's solids or density are already wrong.
_DERIVED_BODY_FIELDS = {"Mass", "JI", "MassCenter", "Density"}


@dataclass(frozen=True)
class ObjectProblem(Problem):
    """A problem of a FreeCAD object: ``element`` names the object, ``field`` the property."""

    def __str__(self) -> str:
        if not self.field:
            return f"{self.element}: {self.message}"
        return f"{self.element}, property {self.field}: {self.message}"


@dataclass
class Export:
    """What :func:`collect` found: the model (even if invalid) and every problem.

    ``object_problems`` lists ``(object, property, message)``; ``problems`` the same as
    :class:`ObjectProblem` (objects it could not be attributed to under the Mechanism).
    ``object_warnings`` and ``warnings``: likewise for what looks wrong but does not block a run
    (the proxies' ``warnings``: an implausible density; the model's: a contact between bodies a
    hinge already joins, :func:`~MultibodyWB.solver.model.validation.hinged_contacts`).
    """

    model: MultibodySystem
    object_problems: list = field(default_factory=list)
    object_warnings: list = field(default_factory=list)
    objects: dict = field(default_factory=dict)   # the model's element texts -> their objects

    @property
    def warnings(self):
        return [ObjectProblem(obj.Proxy.element(obj), prop, message)
                for obj, prop, message in self.object_warnings]

    @property
    def problems(self):
        return [ObjectProblem(obj.Proxy.element(obj), prop, message)
                for obj, prop, message in self.object_problems]


def to_si_vector(vector, si):
    """A FreeCAD vector in internal units as a numpy array in the SI unit ``si``."""
    return np.array([units.to_si(x, si) for x in vector]) + 0.0     # no -0 in files


def frame_to_si(placement):
    """Position (m) and Bryant angles (rad) of a FreeCAD placement (mm)."""
    return (to_si_vector(placement.Base, "m"),
            matrix_to_bryant(rotation_matrix(placement.Rotation)) + 0.0)


class _Builder:
    def __init__(self, mechanism):
        self.mechanism = mechanism
        self.result = Export(MultibodySystem(mechanism.Label))
        self.model = self.result.model
        self.element_object = self.result.objects   # model element text -> FreeCAD object
        self.parts = {}               # body object Name -> model part
        self.marker_refs = {}         # marker object Name -> MarkerRef

    def add(self, obj, prop, message):
        self.result.object_problems.append((obj, prop, message))

    @staticmethod
    def si_vector(obj, name):
        """Vector property ``name`` of ``obj`` (an ``App::PropertyVector`` or a text with its
        unit) in its SI unit (NaNs if its text is no such vector: ``unit_problems`` name it)."""
        try:
            internal = quantity_value(obj, name)
        except ValueError:
            internal = (float("nan"),) * 3
        return to_si_vector(internal, obj.Proxy.prop(name).si)

    @staticmethod
    def si(obj, name, si):
        """Quantity property ``name`` of ``obj`` in the SI unit ``si`` (NaN if its text is no
        such quantity: the objects' ``unit_problems`` name it)."""
        try:
            return units.to_si(quantity_value(obj, name), si)
        except ValueError:
            return float("nan")

    def build(self):
        mech = self.mechanism
        for obj in [mech] + list(mech.Group):
            proxy = getattr(obj, "Proxy", None)
            if isinstance(proxy, BaseProxy):
                for prop, message in proxy.check(obj) + proxy.unit_problems(obj):
                    self.add(obj, prop, message)
                for prop, message in proxy.warnings(obj):
                    self.result.object_warnings.append((obj, prop, message))
        self.model.description = mech.Description
        self.model.gravity = self.si_vector(mech, "Gravity")
        self._parts()
        for marker in members(mech, MARKER):
            self._marker(marker)
        for hinge in members(mech, HINGE):
            self._hinge(hinge)
        for force in members(mech, FORCE):
            self._force(force)
        for contact in members(mech, CONTACT):
            self._contact(contact)
        for coupler in members(mech, COUPLER):
            self._coupler(coupler)
        self._simulation()
        self._model_problems()
        self._model_warnings()
        return self.result

    # -- parts --------------------------------------------------------------------------------
    def _parts(self):
        ground = self.mechanism.Ground
        bodies = members(self.mechanism, BODY)
        if ground is not None and ground in bodies:
            base = solid_placement(ground.Solids[0]) if ground.Solids else FreeCAD.Placement()
            position, orientation = frame_to_si(base)
            g = self.model.set_ground(ground.Label, position, orientation, label=ground.Label2)
            self.parts[ground.Name] = g
            self.element_object[f"Ground '{g.name}'"] = ground
        for body in bodies:
            if body.Name in self.parts:
                continue
            base, density, props = body_mass_properties(body)
            position, orientation = frame_to_si(base)
            velocity = self.si_vector(body, "InitialVelocity")
            omega = self.si_vector(body, "InitialAngularVelocity")
            b = self.model.add_body(
                body.Label, units.to_si(props["mass"], "kg"),
                [units.to_si(x, "kg*m^2") for x in props["ji"]],
                mass_center=[units.to_si(x, "m") for x in props["center"]],
                position=position, orientation=orientation,
                density=None if density is None else units.to_si(density, "kg/m^3"),
                label=body.Label2,
                initial_velocity=velocity if np.any(velocity) else None,
                initial_angular_velocity=omega if np.any(omega) else None)
            self.parts[body.Name] = b
            self.element_object[f"RigidBody '{b.name}'"] = body

    def _marker(self, marker):
        body = marker.Body
        part = self.parts.get(body.Name) if body is not None else None
        if part is None:
            if body is not None:
                self.add(marker, "Body", f"'{body.Label}' is not a body of mechanism "
                                         f"'{self.mechanism.Label}'")
            return
        position, orientation = frame_to_si(marker_frame(marker))
        ref = part.add_marker(position, orientation, label=marker.Label2 or marker.Label,
                              marker_id=marker.MarkerId)
        self.marker_refs[marker.Name] = ref

    def _ref(self, obj, prop):
        marker = getattr(obj, prop)
        return None if marker is None else self.marker_refs.get(marker.Name)

    # -- hinges and forces --------------------------------------------------------------------
    def _hinge(self, obj):
        kind = HINGE_TYPES.get(obj.HingeType)
        options = {}
        drivers = []
        for option in OPTION_PROPERTIES:
            if kind is None or option.option not in kind.options:
                continue
            if option.quantity is None:
                for c in kind.coordinates:
                    expression = getattr(obj, property_name(option.prefix, c)).strip()
                    if expression:
                        drivers.append(Driver(c, expression, bool(obj.DriverFromDrawing)))
                continue
            if option.attribute == "motors":
                continue
            values = np.array([
                self.si(obj, property_name(option.prefix, c),
                        units.COORDINATE_UNITS[COORDINATE_KIND[c]][option.quantity][1])
                for c in kind.coordinates])
            if option.attribute == "initial_coordinates":
                use = not obj.InitialAsDrawn
            elif option.option == "limits":     # limits and their stops
                use = obj.UseLimits
            elif option.attribute == "stiffness" and kind.elastic:
                use = True
            else:
                use = bool(np.any(values))
            if use:
                options[option.attribute] = values
        motors = []
        if kind is not None and "driver" in kind.options:
            for c in kind.coordinates:
                si = units.COORDINATE_UNITS[COORDINATE_KIND[c]]
                speed = self.si(obj, property_name("MotorSpeed", c), si["rate"][1])
                if speed != 0.0:
                    ramp = self.si(obj, property_name("MotorRampTime", c), "s")
                    motors.append(Motor(c, speed, ramp))
        if getattr(obj, "InitialIsEstimate", False):
            options["initial_coordinates_estimate"] = "initial_coordinates" in options
            options["initial_rates_estimate"] = "initial_rates" in options
        if "stiffness" in options and obj.SpringReferenceAsDrawn:
            options.pop("spring_reference", None)
            options["spring_reference_start"] = True
        h = self.model.add_hinge(obj.Label, obj.HingeType, self._ref(obj, "InputMarker"),
                                 self._ref(obj, "OutputMarker"), label=obj.Label2,
                                 drivers=drivers, motors=motors, **options)
        self.element_object[f"Hinge '{h.name}'"] = obj

    def _force(self, obj):
        kind = FORCE_TYPES.get(obj.ForceType)
        values = {}

        def quantity(field_name):
            names = field_properties(obj.ForceType, field_name)
            if not names:
                return None
            prop = obj.Proxy.prop(names[0])
            return self.si(obj, prop.name, prop.si)

        if kind is not None and "direction" in kind.fields:
            values["direction"] = np.array(tuple(obj.Direction))
            values["frame"] = obj.DirectionFrame
        if kind is not None and "magnitude" in kind.fields:
            values["magnitude"] = obj.Magnitude.strip() or "0"
        for name in ("stiffness", "damping"):
            v = quantity(name)
            if v is not None:
                values[name] = v
        if kind is not None and "free_length" in kind.fields and not obj.FreeLengthAsDrawn:
            values["free_length"] = quantity("free_length")
        params = {}
        for param, names in type_params(obj.ForceType):     # the law's own (its registry rows)
            si = []
            for name in names:
                prop = obj.Proxy.prop(name)
                si.append(self.si(obj, name, prop.si) if prop.unit is not None
                          else float(getattr(obj, name)))
            params[param.attr] = si[0] if param.size == 1 else np.array(si)
        if params:
            values["params"] = params
        output = self._ref(obj, "OutputMarker") if kind is not None and kind.markers == 2 else None
        f = self.model.add_force(obj.Label, obj.ForceType, self._ref(obj, "InputMarker"), output,
                                 label=obj.Label2, **values)
        self.element_object[f"Force '{f.name}'"] = obj

    def _contact(self, obj):
        shapes = []
        for side in ("Input", "Output"):
            try:
                kind, values = shape_fields(obj, side)
            except ValueError as exc:          # a convex shape without points
                if not obj.Proxy.check(obj):   # else the check said it already
                    self.add(obj, f"{side}Tolerance", str(exc))
                return
            shapes.append((kind, {name: (np.array([[units.to_si(x, "m") for x in p]
                                                   for p in value]) if name == "points" else
                                         np.array([units.to_si(x, "m") for x in value])
                                         if name == "size" else units.to_si(value, "m"))
                                  for name, value in values.items()}))
        c = self.model.add_contact(
            obj.Label, self._ref(obj, "InputMarker"), self._ref(obj, "OutputMarker"), *shapes,
            label=obj.Label2, stiffness=float(obj.Stiffness), exponent=float(obj.Exponent),
            restitution=float(obj.Restitution),
            impact_speed=self.si(obj, "ImpactSpeed", "m/s"),
            static_friction=float(obj.StaticFriction),
            dynamic_friction=float(obj.DynamicFriction),
            stiction_velocity=self.si(obj, "StictionVelocity", "m/s"))
        self.element_object[f"Contact '{c.name}'"] = obj

    def _coupler(self, obj):
        hinges = [obj.FirstHinge, obj.SecondHinge]
        if any(type_of(h) != HINGE for h in hinges):
            return                      # the proxy's check names the missing hinge
        k = self.model.add_coupler(
            obj.Label, obj.CouplerType, (hinges[0].Label, obj.FirstCoordinate),
            (hinges[1].Label, obj.SecondCoordinate), label=obj.Label2, **si_field(obj))
        self.element_object[f"Coupler '{k.name}'"] = obj

    def _simulation(self):
        sims = members(self.mechanism, SIMULATION)
        for extra in sims[1:]:
            self.add(extra, "Label", f"the mechanism has another Simulation ('{sims[0].Label}'); "
                                     "it uses that one")
        if not sims:
            return
        obj = sims[0]
        for name, (attribute, _) in MODEL_ATTRIBUTES.items():
            prop = obj.Proxy.prop(name)
            value = getattr(obj, name)
            if prop.si is not None:
                value = self.si(obj, name, prop.si)
            setattr(self.model.simulation, attribute, value)
        self.element_object["Simulation"] = obj

    # -- the solver's validation --------------------------------------------------------------
    def _model_problems(self):
        flagged = {}
        for obj, prop, _ in self.result.object_problems:
            flagged.setdefault(obj.Name, set()).add(prop)
        for p in self.model.validate():
            obj = self.element_object.get(p.element)
            if obj is None:
                # model-wide problems (no ground, gravity...) belong to the Mechanism
                prop = self.mechanism.Proxy.field_property(self.mechanism, p.field)
                if prop in self.mechanism.PropertiesList and p.element == "MultibodySystem":
                    self.add(self.mechanism, prop, p.message)
                else:
                    self.add(self.mechanism, "", f"{p.element}, field {p.field}: {p.message}")
                continue
            if type_of(obj) == BODY and p.field in _DERIVED_BODY_FIELDS and obj.Name in flagged:
                continue        # follows from a problem already reported on the body
            self.add(obj, *_property_and_message(obj, p.field, advice_in_document(p.message)))

    def _model_warnings(self):
        """What the model looks wrong in without a run being refused (a contact between bodies
        a hinge already joins), on the object to look at."""
        for p in hinged_contacts(self.model):
            obj = self.element_object.get(p.element)
            if obj is not None:
                prop = obj.Proxy.field_property(obj, p.field)
                self.result.object_warnings.append((obj, prop, p.message))


def collect(mechanism):
    """The model of ``mechanism`` and every problem of it (see :class:`Export`); never raises."""
    return _Builder(mechanism).build()


def _property_and_message(obj, field, message):
    """``(property, message)`` of a model problem's ``field`` on ``obj``: the property (or
    properties) that hold the field, or, where none does (a body that no hinge connects, a
    hinge's start), no property and the field named in the message."""
    prop = obj.Proxy.field_property(obj, field)
    if all(name.strip() in obj.PropertiesList for name in prop.split(",")):
        return prop, message
    return "", f"{field}: {message}"


#: What the solver's messages advise in the neutral file's words, in the document's: the
#: attributes that the properties of the hinges hold.
ADVICE_IN_DOCUMENT = (
    ('mark them Estimate="true"', "tick InitialIsEstimate on the hinge"),
    ('mark initial rates that are only estimates Estimate="true"',
     "tick InitialIsEstimate on a hinge whose initial rates are only estimates"),
    ('(From="start")', "(DriverFromDrawing)"),
    ('SpringReferenceFrom="start"', "SpringReferenceAsDrawn"),
)


#: How a hinge's prescribed values the solver refuses are dropped, by the field it names: in a
#: file the element is left out; in the document a rate of 0 is not given, and coordinates are
#: not given when the hinge starts as drawn.
DROP_IN_DOCUMENT = {
    "InitialRates": "tick InitialIsEstimate on the hinge (its initial coordinates, if given, "
                    "become estimates too), or set its initial rates to 0 (a zero rate is not "
                    "given)",
    "InitialCoordinates": "tick InitialIsEstimate on the hinge (its initial rates become "
                          "estimates too), or tick InitialAsDrawn",
}


def advice_in_document(text: str) -> str:
    """A solver message with its advice in the document's words (:data:`ADVICE_IN_DOCUMENT`)."""
    for neutral, document in ADVICE_IN_DOCUMENT:
        text = text.replace(neutral, document)
    return text


def document_problems(mechanism, problems) -> list:
    """Problems the solver found in ``mechanism``'s model (element, field and message in the
    neutral model's terms: ``Hinge 'Rocker'``, ``InitialRates``), each said of the document's
    object and property that hold it (``InitialRateRz``) as an :class:`ObjectProblem`, its
    advice in the document's words. A field no property holds (``Start``) stays in the
    message; an element no object makes (``Simulation``, a loop) is named as the solver names
    it. (One export of the mechanism for all of them: the map of its elements to objects.)"""
    objects = collect(mechanism).objects
    out = []
    for problem in problems:
        obj = objects.get(problem.element)
        message = problem.message
        if problem.field in DROP_IN_DOCUMENT:
            message = message.replace('mark them Estimate="true" or drop them',
                                      DROP_IN_DOCUMENT[problem.field])
        message = advice_in_document(message)
        if obj is None:
            out.append(ObjectProblem(problem.element, problem.field, message))
        else:
            out.append(ObjectProblem(obj.Proxy.element(obj),
                                     *_property_and_message(obj, problem.field, message)))
    return out


def to_model(mechanism):
    """The neutral model of ``mechanism`` in SI units.

    Raises
    ------
    ModelError
        Listing every problem, each naming the FreeCAD object and property.
    """
    result = collect(mechanism)
    if result.object_problems:
        raise ModelError(result.problems)
    return result.model


def write(mechanism, path):
    """Export ``mechanism`` to the neutral XML file ``path``; return the model written."""
    model = to_model(mechanism)
    xmlio.write(model, path)
    return model
