"""The Coupler: a gear pair, a belt, a rack and pinion or a linear coupling of two hinge
coordinates, ``a u1 + b u2 = 0`` on their rates (see :mod:`MultibodyWB.solver.elements.couplers`).

``FirstHinge`` and ``SecondHinge`` link two Hinges; ``FirstCoordinate`` and ``SecondCoordinate``
pick one coordinate of each (an enumeration of that hinge type's coordinates, refreshed when the
hinge or its type changes; the rotations of spherical, free and bushing hinges are three angles
the solver cannot couple, so they are left out). ``CouplerType`` is one of the solver's
:data:`~MultibodyWB.solver.elements.couplers.COUPLER_TYPES` and decides which field is shown and
exported:

- ``gear`` and ``belt``: ``Ratio``, rate of the second = Ratio x rate of the first (an external
  gear pair turns the other way: ``-z1/z2``);
- ``rack_pinion``: ``PitchRadius`` (a FreeCAD length, mm; m per rad in the model), the pinion's
  rotation first, the rack's translation second;
- ``linear``: ``Coefficients`` a, b (numbers in the solver's SI units: per rad for a rotation,
  per m for a translation).

What the Coupler command proposes for two hinges (:func:`propose`) is here too, so macros can use
it.
"""

from dataclasses import dataclass, field

from . import labels
from .base import EDITABLE, HIDDEN, BaseProxy, Prop, mechanism_of, type_of
from ..solver.api import COORDINATE_KIND, COUPLER_TYPES, HINGE_TYPES

TYPE = "Multibody::Coupler"
HINGE = "Multibody::Hinge"

#: Field of the solver's coupler type -> the property holding it.
FIELD_PROPERTIES = {"ratio": "Ratio", "pitch_radius": "PitchRadius",
                    "coefficients": "Coefficients"}
#: Model (message) field -> property, for the solver's problems.
FIELDS = {"Name": "Label", "Type": "CouplerType", "First": "FirstCoordinate",
          "Second": "SecondCoordinate"}
#: Pitch radius (mm) a proposed rack and pinion gets.
DEFAULT_PITCH_RADIUS = 10.0
#: Enumeration item of a hinge without a coordinate to couple (a fixed hinge, or none linked).
NO_COORDINATE = "-"


def coordinates(hinge):
    """The coordinates of ``hinge`` a coupler can couple, in the type's order: its rotations
    left out when they are three angles (spherical, free, bushing)."""
    kind = HINGE_TYPES.get(getattr(hinge, "HingeType", None)) if hinge is not None else None
    if kind is None:
        return []
    return [c for c in kind.coordinates
            if not (kind.quaternion and COORDINATE_KIND[c] == "rotation")]


def _type_text():
    return "; ".join(f"{t.name}: {t.description}" for t in COUPLER_TYPES.values())


class CouplerProxy(BaseProxy):
    """Proxy of a Coupler."""

    Type = TYPE
    KIND = "Coupler"
    VERSION = 1
    PROPERTIES = (
        Prop("CouplerType", "App::PropertyEnumeration", "Coupler",
             f"What the coupler is. {_type_text()}", default="gear",
             enum=tuple(COUPLER_TYPES)),
        Prop("FirstHinge", "App::PropertyLink", "Coupler",
             "Hinge of the first coupled coordinate (a gear's or belt's first wheel, a rack and "
             "pinion's pinion)"),
        Prop("FirstCoordinate", "App::PropertyEnumeration", "Coupler",
             "Coordinate of the first hinge that is coupled (rz: rotation about the hinge's z "
             "axis; z: translation along it)"),
        Prop("SecondHinge", "App::PropertyLink", "Coupler",
             "Hinge of the second coupled coordinate (a gear's or belt's second wheel, a rack and "
             "pinion's rack)"),
        Prop("SecondCoordinate", "App::PropertyEnumeration", "Coupler",
             "Coordinate of the second hinge that is coupled"),
        Prop("Ratio", "App::PropertyFloat", "Coupler",
             "Gear or belt: rate of the second coordinate = Ratio x rate of the first (external "
             "gear pair: negative, -z1/z2 = -r1/r2; internal pair, open belt or chain: positive, "
             "r1/r2)", default=-1.0),
        Prop("PitchRadius", "App::PropertyLength", "Coupler",
             "Rack and pinion: the pinion's pitch radius; the rack moves PitchRadius per radian "
             "the pinion turns [mm]", default=DEFAULT_PITCH_RADIUS, unit="mm", si="m"),
        Prop("Coefficients", "App::PropertyFloatList", "Coupler",
             "Linear: a, b of a x rate of the first + b x rate of the second = 0, in the "
             "solver's SI units (rad/s for a rotation's rate, m/s for a translation's); b not 0",
             default=[1.0, -1.0]),
    )

    def onChanged(self, obj, prop):
        super().onChanged(obj, prop)
        if "Restore" in obj.State or "Coefficients" not in obj.PropertiesList:
            return
        if prop in ("FirstHinge", "SecondHinge"):
            update_coordinates(obj)
        if prop == "CouplerType":
            self.update_visibility(obj)

    def onDocumentRestored(self, obj):
        super().onDocumentRestored(obj)
        touched = "Touched" in obj.State
        update_coordinates(obj)
        if not touched:
            obj.purgeTouched()

    def execute(self, obj):
        update_coordinates(obj)        # a hinge's type may have changed

    def update_visibility(self, obj):
        """Show the field the type uses (:data:`FIELD_PROPERTIES`), hide the others."""
        present = set(obj.PropertiesList)
        kind = COUPLER_TYPES.get(obj.CouplerType) if "CouplerType" in present else None
        for name, prop in FIELD_PROPERTIES.items():
            if prop in present:
                obj.setEditorMode(prop, EDITABLE if kind is not None and kind.field == name
                                  else HIDDEN)

    def field_property(self, obj, field):
        return FIELDS.get(field, field)

    def check(self, obj):
        problems = []
        mechanism = mechanism_of(obj)
        for side in ("First", "Second"):
            hinge = getattr(obj, f"{side}Hinge")
            prop = f"{side}Hinge"
            if hinge is None:
                problems.append((prop, "is not set: a coupler couples a coordinate of each of "
                                       "two hinges"))
            elif type_of(hinge) != HINGE:
                problems.append((prop, f"'{hinge.Label}' is not a Multibody hinge"))
            elif mechanism is not None and mechanism_of(hinge) != mechanism:
                problems.append((prop, f"hinge '{hinge.Label}' is not in mechanism "
                                       f"'{mechanism.Label}'"))
            elif not coordinates(hinge):
                problems.append((f"{side}Coordinate", f"the {hinge.HingeType} hinge "
                                 f"'{hinge.Label}' has no coordinate a coupler can couple"))
        return problems


def update_coordinates(obj):
    """Make each coordinate enumeration the coupleable coordinates of its hinge (keeping the
    choice when the hinge still has it)."""
    for side in ("First", "Second"):
        prop = f"{side}Coordinate"
        if prop not in obj.PropertiesList:
            continue
        items = coordinates(getattr(obj, f"{side}Hinge")) or [NO_COORDINATE]
        if list(obj.getEnumerationsOfProperty(prop) or []) != items:
            value = getattr(obj, prop)
            setattr(obj, prop, items)
            setattr(obj, prop, value if value in items else items[0])


def coupler_label(coupler_type, first, second):
    """``"Pinion – Wheel gear"``: the hinges' moving bodies and the type."""
    def body(hinge):
        return labels.short_name(labels.marker_body(getattr(hinge, "InputMarker", None)))
    word = coupler_type.replace("_", "-") if coupler_type != "linear" else "coupler"
    return f"{body(first)}{labels.DASH}{body(second)} {word}"


# -- what the command proposes ------------------------------------------------------------------
@dataclass
class Proposal:
    """A coupler proposed for two hinges: its type, the hinges in the order the type wants
    them (a rack and pinion's pinion first), their coordinates, and its field's value (Ratio as a
    number, PitchRadius in mm, Coefficients a, b); ``why`` says how the value was chosen."""

    type: str
    hinges: tuple
    coordinates: tuple
    values: dict = field(default_factory=dict)
    why: str = ""


def _pick(names, kind, preferred):
    matching = [c for c in names if COORDINATE_KIND[c] == kind]
    if preferred in matching:
        return preferred
    return matching[0] if matching else None


def picked_radius(hinge):
    """Radius (mm) of the cylindrical face the hinge's input (moving-side) marker was picked on,
    None if it was picked on anything else."""
    from .contact import recognise
    marker = getattr(hinge, "InputMarker", None)
    picked = getattr(marker, "PickedElement", "") or ""
    solid_name, _, sub = picked.partition(".")
    solid = marker.Document.getObject(solid_name) if solid_name and sub else None
    if solid is None:
        return None
    found = recognise(solid, sub)
    return found.radius if found is not None and found.type == "cylinder" else None


def propose(first, second):
    """The coupler the Coupler command makes for hinges ``first`` and ``second`` (selection
    order); None when either has no coordinate to couple.

    Two rotations: a ``gear`` of ratio -1, or -r1/r2 when both hinges' moving markers were
    picked on cylindrical faces (the wheels' rims: an external pair); a rotation and a
    translation only: a ``rack_pinion`` of pitch radius :data:`DEFAULT_PITCH_RADIUS`, the
    rotating hinge first; otherwise ``linear`` with a, b = 1, -1. Rotations are ``rz`` when the
    hinge has it, translations ``z``.
    """
    names = [coordinates(h) for h in (first, second)]
    if not all(names):
        return None
    rotations = [_pick(n, "rotation", "rz") for n in names]
    translations = [_pick(n, "translation", "z") for n in names]
    if all(rotations):
        radii = [picked_radius(h) for h in (first, second)]
        if all(r is not None and r > 0.0 for r in radii):
            ratio = -radii[0] / radii[1]
            why = (f"ratio -r1/r2 = -{radii[0]:g}/{radii[1]:g} mm from the cylindrical faces "
                   "the hinges were picked on (an external pair)")
        else:
            ratio, why = -1.0, "ratio -1 (an external pair of equal wheels): set yours"
        return Proposal("gear", (first, second), tuple(rotations), {"ratio": ratio}, why)
    for pinion, rack in ((0, 1), (1, 0)):
        if rotations[pinion] and translations[rack] and not rotations[rack]:
            return Proposal("rack_pinion", ((first, second)[pinion], (first, second)[rack]),
                            (rotations[pinion], translations[rack]),
                            {"pitch_radius": DEFAULT_PITCH_RADIUS},
                            f"pitch radius {DEFAULT_PITCH_RADIUS:g} mm: set the pinion's")
    return Proposal("linear", (first, second), (names[0][0], names[1][0]),
                    {"coefficients": (1.0, -1.0)}, "a, b = 1, -1 (equal rates): set yours")


def si_field(obj):
    """``{model attribute: value}`` of the field the coupler's type uses, in SI units."""
    from . import units
    kind = COUPLER_TYPES.get(obj.CouplerType)
    if kind is None:
        return {}
    if kind.field == "ratio":
        return {"ratio": float(obj.Ratio)}
    if kind.field == "pitch_radius":
        return {"pitch_radius": units.to_si(float(obj.PitchRadius.Value), "m")}
    return {"coefficients": [float(x) for x in obj.Coefficients]}

