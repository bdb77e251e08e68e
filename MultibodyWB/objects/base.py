"""The base class of every MultibodyWB document object proxy.

Every object (``Mechanism``, ``Body``, ``Marker``, ``Hinge``, ``Force``, ``Simulation``) is a
FreeCAD ``*Python`` feature whose ``Proxy`` is a subclass of :class:`BaseProxy`:

- ``Type``: a string naming the concept (``"Multibody::Body"``); :func:`type_of` reads it;
- ``PROPERTIES``: the object's properties as data (:class:`Prop`), added by :meth:`add_properties`,
  which is safe to repeat: it adds what is missing, sets the units FreeCAD does not save again,
  refreshes enumerations from the solver's tables and turns a quantity or float saved by an older
  version into the text quantity it now is (same value; see :mod:`.units`);
- quantities are ``App::PropertyQuantity`` or texts with their unit (:func:`quantity_prop`);
  :func:`quantity_value` reads either in FreeCAD's internal units, :func:`set_value` writes
  either from a number, a text or a ``Quantity``;
- ``check`` (problems that block a run) and ``warnings`` (what looks like a mistake: an
  implausible density), both lists of (property, message);
- ``VERSION`` and ``MIGRATIONS``: the object's ``Version`` property records the version it was made
  with; :meth:`onDocumentRestored` runs ``MIGRATIONS[v]`` for each older version ``v``, in order,
  then :meth:`add_properties`;
- ``dumps``/``loads``: the proxy keeps no state of its own (everything is in properties);
- ``Problem``: a read-only text the view provider shows, set by the mechanism's check
  (:meth:`report`); changing it does not touch the object (property status ``Output``), so marking
  an object never triggers a recompute.

Problems are reported, never raised from ``execute``: a raising ``execute`` marks the object invalid
in FreeCAD and stops its dependents, while a problem here only marks it and names the property.
"""

from dataclasses import dataclass

import FreeCAD

from . import units

#: Editor modes of ``obj.setEditorMode``.
EDITABLE, READ_ONLY, HIDDEN = 0, 1, 2


@dataclass(frozen=True)
class Prop:
    """One property of a document object, as data.

    Attributes
    ----------
    name, type, group, doc : str
        As for ``obj.addProperty(type, name, group, doc)``.
    default : object
        Value set when the property is added (None: FreeCAD's default). Quantities take a number in
        ``unit``, a text with its unit or a ``Quantity``.
    unit : str or None
        For ``App::PropertyQuantity`` and vectors: the unit shown (numbers are read in it).
    si : str or None
        The SI unit of the neutral model the value is exported in.
    mode : int
        ``EDITABLE``, ``READ_ONLY`` or ``HIDDEN``.
    output : bool
        Status ``Output``: setting the property does not touch the object.
    enum : tuple of str
        Items of an ``App::PropertyEnumeration``.
    vector : bool
        A text quantity holding a vector (``"0, 0, 250 mm/s"``).
    """

    name: str
    type: str
    group: str
    doc: str
    default: object = None
    unit: str = None
    si: str = None
    mode: int = EDITABLE
    output: bool = False
    enum: tuple = ()
    vector: bool = False


def quantity_prop(name, group, doc, unit, si=None, default=0.0, mode=EDITABLE, output=False):
    """A :class:`Prop` for a quantity in ``unit`` (``si`` default: ``unit``).

    An ``App::PropertyQuantity``, or a text with its unit (``App::PropertyString``) for the
    units FreeCAD cannot show readably (:data:`~MultibodyWB.objects.units.TEXT_UNITS`).
    """
    if unit in units.TEXT_UNITS:
        shown = f"a number in {unit}, or a quantity with its unit" if unit else "a number"
        return Prop(name, units.TEXT, group, f"{doc} [{shown}]", default, unit,
                    si if si is not None else unit, mode, output)
    return Prop(name, units.QUANTITY, group, f"{doc} [{unit}]", default, unit, si or unit, mode,
                output)


def vector_prop(name, group, doc, unit, si, default=(0.0, 0.0, 0.0), mode=EDITABLE):
    """A :class:`Prop` for a vector in ``unit``, a text with its unit (``"0, 0, 250 mm/s"``):
    FreeCAD's vector properties have no unit but mm."""
    return Prop(name, units.TEXT, group, f"{doc} [3 numbers in {unit}, or with their unit]",
                default, unit, si, mode, vector=True)


def _parse(prop, value):
    """A text quantity's value in internal units (a float, or 3 for a vector); ValueError."""
    return (units.parse_vector if prop.vector else units.parse)(value, prop.unit)


def _normalize(prop, value):
    """The text to keep for ``value`` typed into a text quantity (None: not such a quantity)."""
    return (units.normalize_vector if prop.vector else units.normalize)(value, prop.unit)


def is_text_quantity(prop):
    """Whether ``prop`` is a quantity kept as a text with its unit."""
    return prop.type == units.TEXT and prop.unit is not None


def quantity_text(prop, value):
    """The text the text quantity ``prop`` keeps for ``value`` typed in (a task panel's field):
    a bare number completed with the unit (``"2"`` -> ``"2 N*m/rad"``), a text with its unit as
    typed (``"35 N*mm/deg"``, ``"10 us"``).

    Raises ValueError saying what is expected (``'abc' is not a quantity in N*m/rad (e.g. 2
    N*m/rad)``).
    """
    _parse(prop, value)
    return _normalize(prop, value)


def quantity_value(obj, name):
    """The value of quantity property ``name`` of ``obj`` in FreeCAD's internal units (a float),
    whether it is an ``App::PropertyQuantity`` or a text with its unit.

    Raises ValueError naming the object and the property if the text is no such quantity.
    """
    value = getattr(obj, name)
    if isinstance(value, str):
        prop = obj.Proxy.prop(name)
        try:
            return _parse(prop, value)
        except ValueError as exc:
            raise ValueError(f"{obj.Proxy.element(obj)}, property {name}: {exc}") from None
    if isinstance(value, FreeCAD.Vector):
        return tuple(value)
    return float(getattr(value, "Value", value))


COMMON_PROPERTIES = (
    Prop("Version", "App::PropertyInteger", "Base",
         "Version of the MultibodyWB object this was made with (for migrations)", mode=READ_ONLY),
    Prop("Problem", "App::PropertyString", "Base",
         "What is wrong with this object, if anything (set by the mechanism's check)",
         default="", mode=READ_ONLY, output=True),
)


def type_of(obj):
    """The ``Type`` string of a MultibodyWB object, or None for any other object."""
    return getattr(getattr(obj, "Proxy", None), "Type", None)


#: ``Type`` of the Mechanism (:mod:`.mechanism`), the group every other object sits in.
MECHANISM = "Multibody::Mechanism"


def members(mechanism, type_name):
    """The members of ``mechanism`` whose ``Type`` is ``type_name``, in the group's order."""
    return [o for o in mechanism.Group if type_of(o) == type_name]


def mechanism_of(obj):
    """The Mechanism whose group holds ``obj``, or None."""
    for parent in obj.InList:
        if type_of(parent) == MECHANISM and obj in parent.Group:
            return parent
    return None


def set_value(obj, prop, value):
    """Set ``obj.<prop.name>``; quantities read numbers in ``prop.unit``, vectors take 3 numbers."""
    if prop.type == units.QUANTITY:
        value = units.quantity(value, prop.unit)
    elif is_text_quantity(prop):
        try:
            internal = _parse(prop, value)       # ValueError if it is no such quantity
        except ValueError as exc:
            raise ValueError(f"{obj.Proxy.element(obj)}, property {prop.name}: {exc}") from None
        # a text keeps the unit it was written in; numbers and quantities are written in prop.unit
        value = (_normalize(prop, value) if isinstance(value, str) else
                 units.vector_text(internal, prop.unit) if prop.vector else
                 units.text(internal, prop.unit))
    elif prop.type in ("App::PropertyVector", "App::PropertyVectorDistance") and \
            not isinstance(value, FreeCAD.Vector):
        value = FreeCAD.Vector(*(float(x) for x in value))
    setattr(obj, prop.name, value)


class BaseProxy:
    """Shared behaviour of the MultibodyWB proxies; subclasses are mostly data."""

    Type = "Multibody::Base"
    #: Kind of object in messages: ``Body 'Crank', property Solids: ...``.
    KIND = "Object"
    VERSION = 1
    PROPERTIES = ()
    #: ``{old_version: function(proxy, obj)}`` bringing an object from ``old_version`` to the next.
    MIGRATIONS = {}
    #: Field names of the neutral model's messages -> property names (for the solver's problems).
    FIELDS = {}

    def __init__(self, obj):
        obj.Proxy = self
        self.add_properties(obj)
        obj.Version = self.VERSION

    # -- properties -----------------------------------------------------------------------------
    @classmethod
    def properties(cls):
        """Every :class:`Prop` of the object: the common ones, then the class's."""
        return COMMON_PROPERTIES + tuple(cls.PROPERTIES)

    @classmethod
    def prop(cls, name):
        """The :class:`Prop` called ``name``."""
        for p in cls.properties():
            if p.name == name:
                return p
        raise KeyError(name)

    def add_properties(self, obj):
        """Add the missing properties and bring the others up to date (safe to repeat)."""
        present = set(obj.PropertiesList)
        for p in self.properties():
            old_text = None
            if p.name in present and is_text_quantity(p) and \
                    obj.getTypeIdOfProperty(p.name) != p.type:
                old_text = self._remove_old_quantity(obj, p)
                present.discard(p.name)
            if p.name not in present:
                obj.addProperty(p.type, p.name, p.group, p.doc)
                obj.setPropertyStatus(p.name, "LockDynamic")
                if p.enum:
                    setattr(obj, p.name, list(p.enum))
                if p.type == units.QUANTITY:
                    setattr(obj, p.name, units.unit(p.unit))
                if p.default is not None:
                    set_value(obj, p, p.default)
                if old_text is not None:
                    setattr(obj, p.name, old_text)
                if p.output:
                    obj.setPropertyStatus(p.name, "Output")
            else:
                if p.type == units.QUANTITY and \
                        obj.getPropertyByName(p.name).Unit != units.unit(p.unit):
                    setattr(obj, p.name, units.unit(p.unit))   # FreeCAD does not save it
                if p.enum and list(obj.getEnumerationsOfProperty(p.name)) != list(p.enum):
                    value = getattr(obj, p.name)
                    setattr(obj, p.name, list(p.enum))
                    if value in p.enum:
                        setattr(obj, p.name, value)
            obj.setEditorMode(p.name, p.mode)
        self.update_visibility(obj)

    @staticmethod
    def _remove_old_quantity(obj, prop):
        """Remove a quantity or float an older version saved where a text quantity is now; its
        value as that text (FreeCAD saved the value in its internal units)."""
        old = getattr(obj, prop.name)
        if prop.vector:       # an App::PropertyVector: its numbers were in the unit shown
            text = units.vector_text(units.parse_vector(tuple(old), prop.unit), prop.unit)
        else:
            text = units.text(float(getattr(old, "Value", old)), prop.unit)
        obj.setPropertyStatus(prop.name, "-LockDynamic")
        obj.removeProperty(prop.name)
        return text

    def update_visibility(self, obj):
        """Show the properties that apply (subclasses: from the solver's tables)."""

    # -- life cycle -----------------------------------------------------------------------------
    def onDocumentRestored(self, obj):
        """Run the migrations from the saved ``Version``, then :meth:`add_properties`."""
        touched = "Touched" in obj.State
        version = obj.Version if "Version" in obj.PropertiesList else 0
        for old in range(version, self.VERSION):
            migrate = self.MIGRATIONS.get(old)
            if migrate is not None:
                migrate(self, obj)
        self.add_properties(obj)
        if obj.Version != self.VERSION:
            obj.Version = self.VERSION
        if not touched:
            # setting the units again is no change of the document
            obj.purgeTouched()

    def onChanged(self, obj, prop):
        """Complete a bare number typed into a text quantity with its unit (``"2"`` ->
        ``"2 N*m/rad"``); subclasses call this, then react to the change."""
        if "Restore" in obj.State:
            return
        try:
            p = self.prop(prop)
        except KeyError:
            return
        if is_text_quantity(p) and prop in obj.PropertiesList:
            value = getattr(obj, prop)
            text = _normalize(p, value)
            if text is not None and text != value:
                setattr(obj, prop, text)

    def unit_problems(self, obj):
        """The text quantities that are no quantity of their unit: a list of (property,
        message)."""
        problems = []
        present = set(obj.PropertiesList)
        for p in self.properties():
            if is_text_quantity(p) and p.name in present and \
                    obj.getEditorMode(p.name) != ["Hidden"]:
                try:
                    _parse(p, getattr(obj, p.name))
                except ValueError as exc:
                    problems.append((p.name, str(exc)))
        return problems

    def execute(self, obj):
        """Subclasses: recompute."""

    def dumps(self):
        """The proxy keeps no state of its own: everything is in the object's properties."""
        return None

    def loads(self, state):
        """See :meth:`dumps`."""
        return None

    # FreeCAD 0.20 prefers __getstate__ (which Python 3.11 gives every object), 1.0 dumps
    __getstate__ = dumps
    __setstate__ = loads

    # -- problems -------------------------------------------------------------------------------
    def element(self, obj):
        """How messages name the object: ``Body 'Crank'``."""
        return f"{self.KIND} '{obj.Label}'"

    def field_property(self, obj, field):
        """The property (or properties) a field of the neutral model's messages is edited in."""
        return self.FIELDS.get(field, field)

    def check(self, obj):
        """What is wrong with the object as a FreeCAD object: a list of (property, message).

        Model-level checks (references, physics, connectivity) are the solver's, run on the
        exported model by the mechanism; this only covers what the model cannot see.
        """
        return []

    def warnings(self, obj):
        """What looks like a mistake but does not block a run: a list of (property, message).

        Plausibility checks (a density of 7850 kg/mm^3); the mechanism's check collects them
        apart from the problems (:attr:`MultibodyWB.objects.export.Export.object_warnings`).
        """
        return []

    def report(self, obj, problems, announce=False):
        """Mark the object with ``problems`` (list of (property, message)).

        ``property`` is empty for a problem no single property can fix.

        The ``Problem`` property gets one line per problem: the object's state, shown in the tree
        (icon badge) and in the mechanism's status. Nothing is printed while a model is being
        built (a body not yet connected is a state, not an error): the problems are listed as
        errors when the user exports, checks or runs. ``announce`` (True, or a function of
        ``(property, message)`` choosing which) prints each new problem as a warning in the
        report view, for a change the user did not make on this object (a marker whose picked
        face became another face after an edit of its solid).
        """
        lines = [f"{prop}: {message}" if prop else message for prop, message in problems]
        text = "\n".join(lines)
        if announce:
            old = set(obj.Problem.split("\n")) if obj.Problem else set()
            for (prop, message), line in zip(problems, lines):
                if line not in old and (announce is True or announce(prop, message)):
                    where = f", property {prop}" if prop else ""
                    FreeCAD.Console.PrintWarning(
                        f"MultibodyWB: {self.element(obj)}{where}: {message}\n")
        if obj.Problem != text:
            obj.Problem = text
