"""The Force: an applied load on one marker, or a spring-damper between two.

``ForceType`` is one of the solver's :data:`~MultibodyWB.solver.model.FORCE_TYPES`; the table says
how many markers the type connects and which fields it uses, with their units, and
:data:`FIELD_PROPERTIES` maps each (field, unit) to the properties that hold it, so a translational
stiffness (N/m) and a rotational one (N m/rad) are different properties with their own units.

``Magnitude`` is an expression in ``t`` (s) whose value is in N (torques: N m), the solver's
time-function syntax: ``19000*exp(-0.5*((t - 0.01)/0.002)**2)``. ``Direction`` is a unit-free
vector, in global axes or the input marker's (``DirectionFrame``).
"""

from ..solver.api import FORCE_TYPES
from . import labels
from .base import EDITABLE, HIDDEN, BaseProxy, Prop, quantity_prop, type_of

TYPE = "Multibody::Force"

#: (field of FORCE_TYPES, its unit there) -> properties holding it; the first holds the value.
FIELD_PROPERTIES = {
    ("direction", "1"): ("Direction", "DirectionFrame"),
    ("magnitude", "N"): ("Magnitude",),
    ("magnitude", "N m"): ("Magnitude",),
    ("stiffness", "N/m"): ("Stiffness",),
    ("stiffness", "N m/rad"): ("RotationalStiffness",),
    ("damping", "N s/m"): ("Damping",),
    ("damping", "N m s/rad"): ("RotationalDamping",),
    ("free_length", "m"): ("FreeLength", "FreeLengthAsDrawn"),
}

#: Model (XML) field name -> model attribute of FORCE_TYPES' fields.
MODEL_FIELDS = {"Direction": "direction", "Magnitude": "magnitude", "Stiffness": "stiffness",
                "Damping": "damping", "FreeLength": "free_length"}


def field_properties(force_type, field):
    """The properties holding ``field`` for ``force_type`` (empty if the type does not use it)."""
    kind = FORCE_TYPES.get(force_type)
    if kind is None or field not in kind.fields:
        return ()
    return FIELD_PROPERTIES[(field, kind.units.get(field, "1"))]


class ForceProxy(BaseProxy):
    """Proxy of a Force."""

    Type = TYPE
    KIND = "Force"
    VERSION = 1
    PROPERTIES = (
        Prop("ForceType", "App::PropertyEnumeration", "Force", "Kind of load",
             default="point_force", enum=tuple(FORCE_TYPES)),
        Prop("InputMarker", "App::PropertyLink", "Force",
             "Marker the load acts at (the first end of a spring-damper)"),
        Prop("OutputMarker", "App::PropertyLink", "Force",
             "Second end of a spring-damper (types connecting two markers)"),
        Prop("Magnitude", "App::PropertyString", "Force",
             "Magnitude as an expression in t (s), in N (torque: N m), the solver's syntax",
             default="0"),
        Prop("Direction", "App::PropertyVector", "Force",
             "Direction of the force or torque (normalised by the solver)",
             default=(0.0, 0.0, 1.0)),
        Prop("DirectionFrame", "App::PropertyEnumeration", "Force",
             "Axes the direction is given in: global, or the input marker's",
             default="global", enum=("global", "marker")),
        quantity_prop("Stiffness", "Spring-damper", "Translational stiffness", "N/m"),
        quantity_prop("Damping", "Spring-damper", "Translational damping", "N*s/m"),
        quantity_prop("FreeLength", "Spring-damper",
                      "Length of the relaxed spring (used unless FreeLengthAsDrawn)", "mm", si="m"),
        Prop("FreeLengthAsDrawn", "App::PropertyBool", "Spring-damper",
             "The spring is relaxed at the distance between the markers as drawn", default=True),
        quantity_prop("RotationalStiffness", "Spring-damper", "Rotational stiffness", "N*m/rad"),
        quantity_prop("RotationalDamping", "Spring-damper", "Rotational damping", "N*m*s/rad"),
    )
    FIELDS = {"Type": "ForceType", "Input": "InputMarker", "Output": "OutputMarker",
              "Name": "Label"}

    def onChanged(self, obj, prop):
        super().onChanged(obj, prop)
        if prop == "ForceType" and "RotationalDamping" in obj.PropertiesList:
            self.update_visibility(obj)
            if "Restore" not in obj.State:
                labels.relabel_force(obj)

    def update_visibility(self, obj):
        """Show the fields the type uses (:data:`FORCE_TYPES`), hide the others."""
        kind = FORCE_TYPES.get(obj.ForceType)
        present = set(obj.PropertiesList)
        used = set()
        for field in (kind.fields if kind else ()):
            used.update(field_properties(obj.ForceType, field))
        for names in FIELD_PROPERTIES.values():
            for name in names:
                if name in present:
                    obj.setEditorMode(name, EDITABLE if name in used else HIDDEN)
        if "OutputMarker" in present:
            obj.setEditorMode("OutputMarker", EDITABLE if kind and kind.markers == 2 else HIDDEN)

    def field_property(self, obj, field):
        if field in MODEL_FIELDS:
            names = field_properties(obj.ForceType, MODEL_FIELDS[field])
            if names:
                return names[0]
        return self.FIELDS.get(field, field)

    def check(self, obj):
        problems = []
        for prop in ("InputMarker", "OutputMarker"):
            marker = getattr(obj, prop)
            if marker is not None and type_of(marker) != "Multibody::Marker":
                problems.append((prop, f"'{marker.Label}' is not a Multibody marker"))
        return problems
