"""What every force law module defines (see :mod:`.` for the list of laws)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


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
