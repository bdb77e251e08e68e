"""What a mechanism's contacts need of its Simulation, and the Contact command's fit of it
(issue 32.2): the contact's period resolved by the solver's
:func:`~MultibodyWB.solver.methods.runtime.contact_step` (a fixed step) or kept by its
:func:`~MultibodyWB.solver.methods.runtime.contact_integrator` (RK45 at a tight tolerance), the
model read through the export (so this sits above ``objects``: ``objects.export`` imports
``objects.contact``)."""

import FreeCAD

from ..objects.contact import time_text


def exported(mechanism):
    """``(simulation, model)``: the mechanism's Simulation object and its neutral model (the
    export the advice below reads; made once by a caller that asks for both), or None when it
    has no Simulation."""
    from ..objects.base import members
    from ..objects.export import collect
    from ..objects.simulation import TYPE as SIMULATION
    sims = members(mechanism, SIMULATION)
    if not sims:
        return None
    return sims[0], collect(mechanism).model


def contact_step_advice(mechanism, found=None):
    """What the mechanism's contacts need of its Simulation's fixed step: ``(simulation,
    step, advised, text)`` (steps in s; ``advised`` the 1-2-5 step of
    :func:`~MultibodyWB.solver.methods.runtime.nice_step` at most the contacts' step,
    :func:`~MultibodyWB.solver.methods.runtime.contact_step`: their period resolved with 50 rk4
    steps), or None when it has no Simulation, no contact, or an adaptive integrator.
    ``found``: :func:`exported` of the mechanism, when the caller has it."""
    from ..solver.api import FIXED_STEP, contact_step, nice_step
    found = exported(mechanism) if found is None else found
    if found is None:
        return None
    sim, model = found
    s = model.simulation
    if not model.contacts or (s.integrator not in FIXED_STEP and s.method != "newton-euler"):
        return None
    try:
        advice = contact_step(model, s.integrator, s.method)
    except Exception:  # noqa: BLE001 - an incomplete model (a contact being made): no advice
        return None
    if advice is None:
        return None
    step, element, _ = advice
    advised = nice_step(step, float(s.output_step))
    label = element.split("'", 1)[1].rsplit("'", 1)[0]
    period = step * _steps_per_period()
    text = (f"contact '{label}' swings with a period of {time_text(period)} at its impact "
            f"speed; a Step of {time_text(advised)} resolves it with "
            f"{period / advised:.0f} rk4 steps and keeps an impact's energy")
    return sim, float(s.step), advised, text


def _steps_per_period():
    from ..solver.api import CONTACT_STEPS_PER_PERIOD
    return CONTACT_STEPS_PER_PERIOD


def contact_integrator_advice(mechanism, found=None):
    """What the mechanism's contacts need of its Simulation's integrator with the mstmm method:
    ``(simulation, integrator, rtol, text)``, the integrator and relative tolerance that keep an
    impact's energy (:func:`~MultibodyWB.solver.methods.runtime.contact_integrator`), ``text``
    why, in words; None without a Simulation, contacts, or with another method. ``found``:
    :func:`exported` of the mechanism, when the caller has it."""
    from ..solver.api import contact_integrator
    found = exported(mechanism) if found is None else found
    if found is None:
        return None
    sim, model = found
    if not model.contacts or model.simulation.method != "mstmm":
        return None
    try:
        found = contact_integrator(model)
    except Exception:  # noqa: BLE001 - an incomplete model (a contact being made): no advice
        return None
    if found is None:
        return None
    integrator, rtol, period, element, _ = found
    label = element.split("'", 1)[1].rsplit("'", 1)[0]
    rk4 = period / _steps_per_period()
    return sim, integrator, rtol, (
        f"contact '{label}' swings with a period of {time_text(period)} at its impact speed; "
        f"{integrator} at a relative tolerance of {rtol:g} adapts its step to each impact and "
        f"keeps its energy (rk4 would need a Step of {time_text(rk4)} throughout)")


def fit_simulation_step(mechanism):
    """Fit the mechanism's Simulation to its contacts when its rk4 step is too long for them
    (:func:`contact_step_advice`; the 1 ms default would be refused: a steel ball's Hertz contact
    lasts some 60 µs), so that the first run of a new contact runs clean: with the mstmm method
    the Integrator becomes RK45 at a relative tolerance of 1e-10 (:func:`contact_integrator_advice`:
    it keeps an impact's energy to about 1e-8, where rk4 at the shortened step kept 1e-5), with
    another method the Step is shortened. Said in the Report view with the old and new values and
    why. Returns that text, or "" when nothing changed (an adaptive integrator, a step already
    short enough, euler or newton-euler: their choice is the user's, the run's advice says what
    they need)."""
    model = exported(mechanism)
    found = contact_step_advice(mechanism, model) if model is not None else None
    if found is None:
        return ""
    sim, step, advised, text = found
    if sim.Integrator != "rk4" or sim.Method == "newton-euler" or \
            not step > advised * (1 + 1e-9):
        return ""
    from ..objects.base import set_value
    from ..objects.simulation import setting
    better = contact_integrator_advice(mechanism, model) if sim.Method == "mstmm" else None
    if better is not None:
        _, integrator, rtol, why = better
        old_rtol = setting(sim, "RelativeTolerance")
        set_value(sim, sim.Proxy.prop("Integrator"), integrator)
        changes = [f"Integrator rk4 -> {integrator}"]
        if not old_rtol <= rtol:
            set_value(sim, sim.Proxy.prop("RelativeTolerance"), f"{rtol:g}")
            changes.append(f"Relative tolerance {old_rtol:g} -> {rtol:g}")
        said = (f"Simulation '{sim.Label}': {', '.join(changes)}, because the Step "
                f"{time_text(step)} is too long for the contacts: {why}\n")
    else:
        typed = f"{advised * 1e6:.6g} us" if advised < 1e-3 else f"{advised:.6g} s"
        set_value(sim, sim.Proxy.prop("Step"), typed)
        said = (f"Simulation '{sim.Label}': Step {time_text(step)} -> {time_text(advised)}, "
                f"because {text}\n")
    FreeCAD.Console.PrintMessage(said)
    return said.strip()
