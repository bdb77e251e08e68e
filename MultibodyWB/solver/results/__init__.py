"""The results layer: :class:`.table.Results` (a run's table, its units and files) and
:class:`.recorder.Recorder` (result rows from a formulation's instants)."""

from .recorder import Recorder
from .table import Results, fill_residual

__all__ = ["Recorder", "Results", "fill_residual"]
