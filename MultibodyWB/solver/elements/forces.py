"""Force laws: what each applied load is, the fields it takes and their units.

:data:`FORCE_TYPES` drives the schema check, the reader and writer and the GUI.
"""

from __future__ import annotations

from dataclasses import dataclass, field

@dataclass(frozen=True)
class ForceType:
    """What a force type is: how many markers it connects and which fields it uses."""

    name: str
    markers: int                 #: 1: acts on the input marker; 2: between input and output
    fields: frozenset            #: subset of {"direction", "magnitude", "stiffness", "damping", "free_length"}
    description: str
    units: dict = field(default_factory=dict)  #: unit of each field


FORCE_TYPES: dict[str, ForceType] = {f.name: f for f in (
    ForceType("point_force", 1, frozenset({"direction", "magnitude"}),
              "force magnitude(t) * direction applied at the marker's origin",
              {"magnitude": "N", "direction": "1"}),
    ForceType("point_torque", 1, frozenset({"direction", "magnitude"}),
              "torque magnitude(t) * direction applied to the marker's body",
              {"magnitude": "N m", "direction": "1"}),
    ForceType("spring_damper", 2, frozenset({"stiffness", "damping", "free_length", "magnitude"}),
              "translational spring-damper along the line between the two markers' origins; "
              "tension = stiffness*(length - free_length) + damping*d(length)/dt + magnitude(t)",
              {"stiffness": "N/m", "damping": "N s/m", "free_length": "m", "magnitude": "N"}),
    ForceType("rotational_spring_damper", 2, frozenset({"stiffness", "damping"}),
              "torque -(stiffness*phi + damping*w_rel) on the input marker's body, phi the "
              "rotation vector of the input marker relative to the output marker",
              {"stiffness": "N m/rad", "damping": "N m s/rad"}),
)}
