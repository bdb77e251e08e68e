"""The Simulation settings of a mechanism: times, method, integrator and tolerances.

Method and integrator are enumerations of the solver's :data:`~MultibodyWB.solver.model.METHODS`
and :data:`~MultibodyWB.solver.model.INTEGRATORS`; the defaults are those of the neutral model's
:class:`~MultibodyWB.solver.model.Simulation`. Times and tolerances are texts (``"1e-05 s"``,
``"1e-06"``) so that the property editor shows every digit (:mod:`~MultibodyWB.objects.units`);
read them with :func:`~MultibodyWB.objects.base.quantity_value` (seconds, numbers).
"""

from ..solver.api import INTEGRATORS, METHODS, Simulation
from .base import BaseProxy, Prop, quantity_prop, quantity_value

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
        Prop("Integrator", "App::PropertyEnumeration", "Simulation",
             "Time integrator: rk4, euler (fixed step); RK45, DOP853 (adaptive); trbdf2, "
             "trbdf2-adaptive (implicit, for stiff models); Radau, BDF, LSODA (scipy's)",
             default=_DEFAULTS.integrator, enum=INTEGRATORS),
        quantity_prop("RelativeTolerance", "Simulation",
                      "Relative tolerance of adaptive integrators", "",
                      default=_DEFAULTS.relative_tolerance),
        quantity_prop("AbsoluteTolerance", "Simulation",
                      "Absolute tolerance of adaptive integrators", "",
                      default=_DEFAULTS.absolute_tolerance),
    )
    FIELDS = {field: name for name, (_, field) in MODEL_ATTRIBUTES.items()}


def setting(sim, name):
    """Setting ``name`` of the Simulation ``sim``: times in s and tolerances as floats (NaN for
    a text that is no such quantity), the method and integrator as their names."""
    if SimulationProxy.prop(name).si is None:
        return getattr(sim, name)
    try:
        return quantity_value(sim, name)
    except ValueError:
        return float("nan")
