"""Hinge types: one row per type, from which the schema, the checks, the kinematics and every
formulation take what they need.

The relative pose of a hinge's input marker frame with respect to its output marker frame is
``translation(x, y, z) * Rx(rx) Ry(ry) Rz(rz)`` with the coordinates the type does not have set to
zero; the hinge axis is the markers' z axis.
"""

from __future__ import annotations

from dataclasses import dataclass


#: Coordinate names and their kind. Translations are along the output marker's axes (m); rotations
#: are Bryant angles of the input marker relative to the output marker (rad).
COORDINATE_KIND = {"x": "translation", "y": "translation", "z": "translation",
                   "rx": "rotation", "ry": "rotation", "rz": "rotation"}
COORDINATE_UNIT = {"translation": "m", "rotation": "rad"}
#: Units of a hinge coordinate's stiffness and damping, by kind.
STIFFNESS_UNIT = {"translation": "N/m", "rotation": "N m/rad"}
DAMPING_UNIT = {"translation": "N s/m", "rotation": "N m s/rad"}
#: Unit of the generalised load on a hinge coordinate, by kind.
LOAD_UNIT = {"translation": "N", "rotation": "N m"}


@dataclass(frozen=True)
class HingeType:
    """What a hinge type is: its coordinates and the options it takes.

    The relative pose of the input marker frame with respect to the output marker frame is
    ``translation(x, y, z) * Rx(rx) Ry(ry) Rz(rz)`` with the coordinates the type does not have set
    to zero; the hinge axis is the markers' z axis.
    """

    name: str
    coordinates: tuple[str, ...]
    description: str
    elastic: bool = False          #: loads come from stiffness and damping only; no constraint
    options: frozenset = frozenset({"stiffness", "damping", "limits", "driver", "initial"})

    @property
    def dof(self) -> int:
        """Number of hinge coordinates."""
        return len(self.coordinates)

    @property
    def constraints(self) -> int:
        """Number of relative motions the hinge forbids (0 for elastic hinges)."""
        return 0 if self.elastic else 6 - self.dof

    def kinds(self) -> tuple[str, ...]:
        """'translation' or 'rotation' for each coordinate."""
        return tuple(COORDINATE_KIND[c] for c in self.coordinates)

    # -- what the formulations take from the coordinates ---------------------------------------
    @property
    def translations(self) -> tuple[str, ...]:
        """The translation coordinates (along the output marker's axes)."""
        return tuple(c for c in self.coordinates if COORDINATE_KIND[c] == "translation")

    @property
    def rotations(self) -> tuple[str, ...]:
        """The rotation coordinates (Bryant angles)."""
        return tuple(c for c in self.coordinates if COORDINATE_KIND[c] == "rotation")

    @property
    def quaternion(self) -> bool:
        """Any rotation (three angles): the state holds it as a unit quaternion (no singular
        angles) and its velocity coordinates are the relative angular velocity."""
        return len(self.rotations) == 3

    @property
    def nq(self) -> int:
        """Number of position coordinates in the state (a quaternion has four)."""
        return self.dof + (1 if self.quaternion else 0)

    @property
    def blocked_translations(self) -> tuple[int, int, int]:
        """1 for each axis (x, y, z of the output marker) along which the hinge forbids
        translation."""
        free = self.translations if not self.elastic else ("x", "y", "z")
        return tuple(0 if a in free else 1 for a in ("x", "y", "z"))

    @property
    def rotation_mode(self) -> str:
        """What the hinge forbids of the relative rotation: ``full`` (all of it), ``axis`` (all
        but about the z axis), ``cross`` (the universal joint's: the angle between the output
        marker's x and the input marker's y axes stays square), ``none``."""
        return {(): "full", ("rz",): "axis", ("rx", "ry"): "cross"}.get(
            self.rotations if not self.elastic else ("rx", "ry", "rz"), "none")


HINGE_TYPES: dict[str, HingeType] = {h.name: h for h in (
    HingeType("fixed", (), "welds the two markers together", options=frozenset()),
    HingeType("revolute", ("rz",), "rotation about the common z axis"),
    HingeType("prismatic", ("z",), "translation along the common z axis"),
    HingeType("cylindrical", ("z", "rz"), "translation along and rotation about the z axis"),
    HingeType("universal", ("rx", "ry"),
              "rotation about the output marker's x axis, then about the input marker's y axis"),
    HingeType("spherical", ("rx", "ry", "rz"), "any rotation about the common origin"),
    HingeType("planar", ("x", "y", "rz"), "motion in the output marker's xy plane"),
    HingeType("free", ("x", "y", "z", "rx", "ry", "rz"), "no constraint (six coordinates)"),
    HingeType("bushing", ("x", "y", "z", "rx", "ry", "rz"),
              "elastic spring-damper in all six directions", elastic=True,
              options=frozenset({"stiffness", "damping", "initial"})),
)}

#: Integer code of each type in compiled code (the table's order).
TYPE_CODES = {name: i for i, name in enumerate(HINGE_TYPES)}
#: Types whose rotation is stored as a quaternion (spherical, free, bushing).
QUATERNION_TYPES = tuple(n for n, t in HINGE_TYPES.items() if t.quaternion)
#: Types with three translations and a quaternion (free, bushing): a body's six coordinates.
SIX_DOF_TYPES = tuple(n for n, t in HINGE_TYPES.items() if t.quaternion and len(t.translations) == 3)
