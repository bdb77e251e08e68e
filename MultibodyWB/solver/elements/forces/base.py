"""What every force law module defines (see :mod:`.` for the list of laws)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


@dataclass(frozen=True)
class Param:
    """A parameter a force law declares for itself (beyond the common fields of
    :class:`ForceType`): the model keeps it in ``Force.params[attr]``, the file in the element
    ``tag``; the reader and writer, the checks, the study's parameter paths, the FreeCAD
    properties, the export and the import all read this row.

    ``size`` 1: a number; 3: one number per axis (x, y, z of the axes the law names).
    ``default``: the value when the file leaves it out (every component). ``minimum``: the
    least value a component may take (None: any finite value). ``spring`` / ``rate``: the
    parameter is a linear stiffness (``rate`` "stiffness") or damping ("damping") acting on a
    translation or rotation (``spring``), which the run's step advice weighs against the
    bodies' masses or inertias; None for the others.
    """

    attr: str
    tag: str
    unit: str
    doc: str
    size: int = 1
    default: float = 0.0
    minimum: Optional[float] = 0.0
    spring: Optional[str] = None
    rate: Optional[str] = None


@dataclass(frozen=True)
class ForceType:
    """What a force type is: how many markers it connects and which fields it uses.

    One row per type, defined in its law's module; the schema check, the reader and writer, the
    GUI and the run's guards read it.
    """

    name: str
    markers: int                 #: 1: acts on the input marker; 2: between input and output
    fields: frozenset            #: subset of {"direction", "magnitude", "stiffness", "damping", "free_length"}
    description: str
    units: dict = field(default_factory=dict)  #: unit of each field
    #: "translation" or "rotation": the stiffness and damping act on the markers' distance or on
    #: their relative rotation (how fast it acts is told from a mass or an inertia); None: no
    #: stiffness
    spring: Optional[str] = None
    #: the law's own parameters (:class:`Param`), in the order the file writes them
    params: tuple = ()

    def param(self, attr: str) -> Optional[Param]:
        """The parameter ``attr`` (None: the type has none of that name)."""
        return next((p for p in self.params if p.attr == attr), None)
