"""What is wrong with a model: :class:`Problem` (element, field, message) and
:class:`ModelError`, which lists them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a model: the element, the field and what is wrong.

    ``element`` names the XML element kind and the object's name, e.g. ``Hinge 'J1'``.
    """

    element: str
    field: str
    message: str
    line: Optional[int] = None

    def __str__(self) -> str:
        where = f" (line {self.line})" if self.line else ""
        return f"{self.element}{where}, field {self.field}: {self.message}"


class ModelError(ValueError):
    """A model with problems. ``problems`` lists every one of them."""

    def __init__(self, problems):
        self.problems = list(problems)
        n = len(self.problems)
        head = f"{n} problem{'s' if n != 1 else ''} in the model:"
        super().__init__("\n".join([head] + [f"  - {p}" for p in self.problems]))
