"""The base class of every MultibodyWB document object proxy.

Every object (``Mechanism``, ``Body``, ``Marker``, ``Hinge``, ``Force``, ``Simulation``) is a
FreeCAD ``*Python`` feature whose ``Proxy`` is a subclass of :class:`BaseProxy`:

- ``Type``: a string naming the concept (``"Multibody::Body"``); :func:`type_of` reads it;
- ``PROPERTIES``: the object's properties as data (:class:`Prop`), added by :meth:`add_properties`,
  which is safe to repeat: it adds what is missing, sets the units FreeCAD does not save again
  and refreshes enumerations from the solver's tables;
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


def quantity_prop(name, group, doc, unit, si=None, default=0.0, mode=EDITABLE):
    """A :class:`Prop` for an ``App::PropertyQuantity`` with a unit (``si`` default: ``unit``)."""
    return Prop(name, units.QUANTITY, group, f"{doc} [{unit}]", default, unit, si or unit, mode)


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


def set_value(obj, prop, value):
    """Set ``obj.<prop.name>``; quantities read numbers in ``prop.unit``, vectors take 3 numbers."""
    if prop.type == units.QUANTITY:
        value = units.quantity(value, prop.unit)
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
            if p.name not in present:
                obj.addProperty(p.type, p.name, p.group, p.doc)
                obj.setPropertyStatus(p.name, "LockDynamic")
                if p.enum:
                    setattr(obj, p.name, list(p.enum))
                if p.type == units.QUANTITY:
                    setattr(obj, p.name, units.unit(p.unit))
                if p.default is not None:
                    set_value(obj, p, p.default)
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
        """Subclasses: react to a property change."""

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
