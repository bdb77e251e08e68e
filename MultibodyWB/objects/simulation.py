"""The Simulation settings of a mechanism: times, method, integrator and tolerances.

Method and integrator are enumerations of the solver's :data:`~MultibodyWB.solver.model.METHODS`
and :data:`~MultibodyWB.solver.model.INTEGRATORS`; the defaults are those of the neutral model's
:class:`~MultibodyWB.solver.model.Simulation`.
"""

from ..solver.model import INTEGRATORS, METHODS, Simulation
from .base import BaseProxy, Prop, quantity_prop

TYPE = "Multibody::Simulation"
_DEFAULTS = Simulation()

#: Property name -> (model attribute, model (XML) field).
MODEL_ATTRIBUTES = {
    "EndTime": ("end_time", "EndTime"), "Step": ("step", "Step"),
    "OutputStep": ("output_step", "OutputStep"), "Method": ("method", "Method"),
    "Integrator": ("integrator", "Integrator"),
    "RelativeTolerance": ("relative_tolerance", "RelativeTolerance"),
    "AbsoluteTolerance": ("absolute_tolerance", "AbsoluteTolerance"),
}


class SimulationProxy(BaseProxy):
    """Proxy of the Simulation settings."""

    Type = TYPE
    KIND = "Simulation"
    VERSION = 1
    PROPERTIES = (
        quantity_prop("EndTime", "Simulation", "End of the simulated time", "s",
                      default=_DEFAULTS.end_time),
        quantity_prop("Step", "Simulation",
                      "Integrator step (fixed-step integrators) or first step (adaptive)", "s",
                      default=_DEFAULTS.step),
        quantity_prop("OutputStep", "Simulation", "Spacing of the stored results", "s",
                      default=_DEFAULTS.output_step),
        Prop("Method", "App::PropertyEnumeration", "Simulation", "Solution method",
             default=_DEFAULTS.method, enum=METHODS),
        Prop("Integrator", "App::PropertyEnumeration", "Simulation", "Time integrator",
             default=_DEFAULTS.integrator, enum=INTEGRATORS),
        Prop("RelativeTolerance", "App::PropertyFloat", "Simulation",
             "Relative tolerance of adaptive integrators", default=_DEFAULTS.relative_tolerance),
        Prop("AbsoluteTolerance", "App::PropertyFloat", "Simulation",
             "Absolute tolerance of adaptive integrators", default=_DEFAULTS.absolute_tolerance),
    )
    FIELDS = {field: name for name, (_, field) in MODEL_ATTRIBUTES.items()}
