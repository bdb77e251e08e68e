"""The Mechanism: the container of one multibody model.

An ``App::DocumentObjectGroupPython`` whose ``Group`` holds the model's bodies, markers, hinges,
forces and its simulation settings. It holds the gravity and which body is the ground. Its
``execute`` (run after all its members, which it depends on) checks the whole model the way the
export does (:func:`MultibodyWB.export.collect`) and marks every member with its problems.
"""

from .base import BaseProxy, Prop, type_of, vector_prop
from . import units

TYPE = "Multibody::Mechanism"


class MechanismProxy(BaseProxy):
    """Proxy of a Mechanism."""

    Type = TYPE
    KIND = "Mechanism"
    VERSION = 1
    PROPERTIES = (
        vector_prop("Gravity", "Mechanism", "Gravitational acceleration in global axes",
                    *units.VECTOR_UNITS["acceleration"], default=(0.0, 0.0, -9810.0)),
        Prop("Ground", "App::PropertyLink", "Mechanism",
             "The body that is the ground: the fixed frame, whose markers anchor hinges and "
             "forces"),
        Prop("Description", "App::PropertyString", "Mechanism",
             "What the mechanism is (written to the model file)", default=""),
    )
    FIELDS = {"Gravity": "Gravity", "Ground": "Ground"}

    def execute(self, obj):
        """Check the whole mechanism and mark every member with its problems."""
        from .. import export
        result = export.collect(obj)
        by_object = {}
        for owner, prop, message in result.object_problems:
            by_object.setdefault(owner.Name, []).append((prop, message))
        for member in [obj] + list(obj.Group):
            proxy = getattr(member, "Proxy", None)
            if isinstance(proxy, BaseProxy):
                proxy.report(member, by_object.get(member.Name, []))

    def check(self, obj):
        problems = []
        ground = obj.Ground
        if ground is not None and (type_of(ground) != "Multibody::Body" or ground not in obj.Group):
            problems.append(("Ground", f"'{ground.Label}' is not a body of this mechanism"))
        return problems


def members(mechanism, type_name):
    """The members of ``mechanism`` whose ``Type`` is ``type_name``, in the group's order."""
    return [o for o in mechanism.Group if type_of(o) == type_name]


def mechanism_of(obj):
    """The Mechanism whose group holds ``obj``, or None."""
    for parent in obj.InList:
        if type_of(parent) == TYPE and obj in parent.Group:
            return parent
    return None
