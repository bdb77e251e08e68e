"""The Force: an applied load on one marker, or a spring-damper between two.

``ForceType`` is one of the solver's :data:`~MultibodyWB.solver.model.FORCE_TYPES`; the table says
how many markers the type connects and which fields it uses, with their units, and
:data:`FIELD_PROPERTIES` maps each (field, unit) to the properties that hold it, so a translational
stiffness (N/m) and a rotational one (N m/rad) are different properties with their own units.

``Magnitude`` is an expression in ``t`` (s) whose value is in N (torques: N m), the solver's
time-function syntax: ``19000*exp(-0.5*((t - 0.01)/0.002)**2)``. ``Direction`` is a unit-free
vector, in global axes or the input marker's (``DirectionFrame``).

**A law's own parameters.** A force type's :class:`~MultibodyWB.solver.elements.forces.base.Param`
rows (``ForceType.params``) become properties read from the rows alone, so that a new law with
parameters of its own needs nothing here: a row of size 1 is one property named after its file
element (``tag``), a row of size 3 (one number per axis) three, ``<tag>X``, ``<tag>Y``, ``<tag>Z``
(``TranslationStiffnessX``), in a group named after the type (``Nonlinear bushing``), shown only
for the types that declare them, their tool tips the rows' ``doc``. They are quantities kept as
texts with their unit (``"2000 N/m"``, ``"1e+06 N/m^3"``, ``"5 N*m/rad"``: see
:mod:`.units`), in the row's SI unit written as FreeCAD writes units: FreeCAD's unit schemas
name only some of the units laws use, and differently by version (1 N/m^3 shows as
``0.00 kg/(mm^2*s^2)`` in 0.20 and as ``1.00 Pa/m`` in 1.0; N m/rad^3 as
``5.32 mm^2*kg/(s^2*deg^3)`` in both), while a text shows the unit the law is written in, with
six digits, on both. A unit FreeCAD cannot parse would be a plain ``App::PropertyFloat`` in SI,
the unit in its tool tip. :func:`param_properties` maps the rows to the properties;
:func:`type_params` gives a type's rows with their properties (export, import, the task panel).
"""

import dataclasses

from ..solver.api import FORCE_TYPES
from . import labels, units
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


#: Suffixes of the three properties of a parameter given per axis (``size`` 3).
AXES = ("X", "Y", "Z")


def param_names(param):
    """The properties holding a :class:`Param` row: ``(tag,)`` for a number, ``(tagX, tagY,
    tagZ)`` for one number per axis."""
    if param.size == 1:
        return (param.tag,)
    if param.size == len(AXES):
        return tuple(param.tag + axis for axis in AXES)
    raise ValueError(f"parameter {param.attr!r}: size {param.size}; the FreeCAD layer takes 1 "
                     f"or {len(AXES)} (per axis)")


def type_title(force_type):
    """The group of a type's own parameters: ``"nonlinear_bushing"`` -> ``"Nonlinear bushing"``."""
    return force_type.replace("_", " ").capitalize()


def _param_prop(param, name, axis, group):
    """The :class:`Prop` of one property of ``param`` (``axis``: "X", "Y", "Z" or None)."""
    which = f" ({axis.lower()} component)" if axis else ""
    doc = f"{param.doc[:1].upper()}{param.doc[1:]}{which}"
    unit = units.model_unit(param.unit)
    try:
        units.factor(unit)
    except Exception:  # noqa: BLE001 - a unit FreeCAD cannot parse: a plain number in SI
        return Prop(name, "App::PropertyFloat", group, f"{doc} [{param.unit}, SI]",
                    default=float(param.default), si=param.unit)
    return Prop(name, units.TEXT, group,
                f"{doc} [a number in {unit}, or a quantity with its unit]",
                default=float(param.default), unit=unit, si=unit)


def param_properties(force_types, taken=()):
    """The properties of every :class:`Param` row of ``force_types`` (name -> ForceType), in
    the table's order: a dict property name -> :class:`Prop`. A parameter two types declare
    alike (same tag, size and unit) is one property, in the group of the first.

    Raises ValueError for a row the FreeCAD layer cannot hold: a size other than 1 or 3, a
    property name in ``taken`` (the fixed properties) or declared by two types unlike.
    """
    props, rows = {}, {}
    for kind in force_types.values():
        for param in kind.params:
            names = param_names(param)
            axes = AXES if param.size == len(AXES) else (None,)
            for name, axis in zip(names, axes):
                if name in taken:
                    raise ValueError(f"force type {kind.name!r}, parameter {param.attr!r}: "
                                     f"property {name} is a fixed property of the Force")
                if name in props:
                    first = rows[name]
                    if (first.size, units.model_unit(first.unit)) != \
                            (param.size, units.model_unit(param.unit)):
                        raise ValueError(f"force type {kind.name!r}, parameter {param.attr!r}: "
                                         f"property {name} is another type's, in "
                                         f"{first.unit} (size {first.size})")
                    continue
                props[name] = _param_prop(param, name, axis, type_title(kind.name))
                rows[name] = param
    return props


def type_params(force_type):
    """A type's own parameters: a list of (:class:`Param`, its property names), in the rows'
    order (empty for a type without any, or an unknown type)."""
    kind = FORCE_TYPES.get(force_type)
    return [(p, param_names(p)) for p in (kind.params if kind else ())]


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
    #: (the table's types and rows they were made from, every property, the laws' own):
    #: see :meth:`properties`
    _cache = (None, (), {})

    @classmethod
    def _tables(cls):
        key = tuple((name, id(kind)) for name, kind in FORCE_TYPES.items())
        if cls._cache[0] != key:
            fixed = tuple(dataclasses.replace(p, enum=tuple(FORCE_TYPES))
                          if p.name == "ForceType" else p for p in super().properties())
            params = param_properties(FORCE_TYPES, taken={p.name for p in fixed})
            cls._cache = (key, fixed + tuple(params.values()), params)
        return cls._cache

    @classmethod
    def properties(cls):
        """The common and fixed properties, with ``ForceType``'s items the types of
        :data:`FORCE_TYPES` now, then the laws' own parameters (:func:`param_properties`):
        read from the table again when it changed (a law registered after this module was
        imported, a test's), else kept."""
        return cls._tables()[1]

    @classmethod
    def param_props(cls):
        """The laws' own parameters' properties: name -> :class:`Prop`."""
        return cls._tables()[2]

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
        own = {name for _, names in type_params(obj.ForceType) for name in names}
        for name in self.param_props():
            if name in present:
                obj.setEditorMode(name, EDITABLE if name in own else HIDDEN)

    def field_property(self, obj, field):
        for param, names in type_params(obj.ForceType):
            if field == param.tag:          # the solver names a law's own parameter by its tag
                return ", ".join(names)
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
