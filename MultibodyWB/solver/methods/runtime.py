"""What every method's run shares: its exceptions, the output times, the guards that name what blew
up and what to do about it, and the work quadrature of the adaptive integrators.

The methods raise these; :mod:`..run.simulate`, which calls them, passes them on.
"""

from __future__ import annotations

import math

import numpy as np

from ..elements.forces import FORCE_TYPES
from ..model.mechanism import MultibodySystem
from ..model.problems import ModelError, Problem


class Cancelled(Exception):
    """The run was cancelled (``cancel()`` returned True); there are no results."""


class SimulationError(RuntimeError):
    """The integration failed (e.g. the adaptive step size fell below what is representable)."""


class RunError(SimulationError, ModelError):
    """A run stopped by the model: a state that is not finite, no progress (a stiff model), a
    numerical breakdown. Both a :class:`SimulationError` and a :class:`~.model.ModelError` whose
    one :class:`~.model.Problem` names the element to look at (the hinge or body that blew up
    first, the stiffest element, or ``Simulation``), the field and the time."""

    def __init__(self, element, field, message):
        ModelError.__init__(self, [Problem(element, field, message)])


class BudgetExceeded(SimulationError):
    """The run used up its wall-clock budget (``simulate(..., wall_budget=...)``)."""


def output_times(t_end: float, output_step: float) -> np.ndarray:
    """0, output_step, ... up to ``t_end``, and ``t_end`` itself."""
    m = int(math.floor(t_end / output_step * (1.0 + 1e-12) + 1e-9))
    t = np.arange(m + 1) * output_step
    if t_end - t[-1] > 1e-9 * max(t_end, output_step):
        t = np.append(t, t_end)
    else:
        t[-1] = t_end
    return t


#: Rate (1/s) of an element's dynamics times the fixed step past which rk4 is unstable (the
#: stability limit of the classical Runge-Kutta method on the real axis, 2.79).
RK4_LIMIT = 2.78

#: The same for the semi-implicit (symplectic) Euler step (the integrator ``euler``, and the
#: newton-euler method's own scheme): an undamped oscillator ``x'' = -w^2 x`` is stable for
#: ``w h < 2`` (one step's matrix has the trace ``2 - (w h)^2`` and the determinant 1); a damper
#: alone, ``u' = -(c / m) u``, for ``(c / m) h < 2``.
EULER_LIMIT = 2.0


def step_limit(integrator, method="mstmm") -> float:
    """The fixed step's stability limit, rate times step (:data:`RK4_LIMIT`,
    :data:`EULER_LIMIT`), of a run with ``integrator`` by ``method``."""
    return EULER_LIMIT if integrator == "euler" or method == "newton-euler" else RK4_LIMIT


def stiff_elements(model: MultibodySystem) -> list:
    """The model's springs and dampers by how fast they act: a list of
    ``(rate, element, field, text)``, fastest first.

    ``rate`` (1/s) is ``sqrt(k / m)`` for a stiffness and ``c / m`` for a damping, ``m`` the mass
    (translations) or the moment of inertia about the hinge's axis at its marker (rotations) of
    the lighter body the element moves (the other bodies of the mechanism are left out: an upper
    bound of the rate). ``text`` says the values and the time scale ``1 / rate``. Hinges'
    stiffness, damping and stop stiffness per coordinate, spring-dampers, rotational
    spring-dampers and contacts (their stiffness at the depth of an impact at their impact
    speed).
    """
    from ..elements.hinges import DAMPING_UNIT, STIFFNESS_UNIT
    from ..maths.rotations import inertia_vector_to_tensor, parallel_axis
    out = []

    def bodies_of(*refs):
        return [model.body(r.body) for r in refs
                if r is not None and not model.is_ground(r.body) and model.body(r.body)]

    def centre_inertia(b):
        J = inertia_vector_to_tensor(b.inertia)
        return parallel_axis(J, -b.mass, b.mass_center.position)

    def add(value, inertia, what, element, field, unit, per):
        if not (np.isfinite(value) and value > 0 and np.isfinite(inertia) and inertia > 0):
            return
        rate = math.sqrt(value / inertia) if field.endswith("Stiffness") else value / inertia
        if not math.isfinite(rate):
            rate = math.inf
        scale = (f"a time scale of {1.0 / rate:.2g} s" if 1.0 / rate >= 1e-300 else
                 "a time scale too small to represent")
        out.append((rate, element, field,
                    f"{element} ({field.lower()} {value:.3g} {unit} on {what} of {inertia:.3g} "
                    f"{per}: {scale})"))

    for h in model.hinges:
        kind = h.kind
        if kind is None or not kind.dof:
            continue
        refs = [r for r in (h.input, h.output) if r is not None]
        moved = bodies_of(*refs)
        if not moved:
            continue
        body = min(moved, key=lambda b: b.mass)
        ref = next(r for r in refs if r.body == body.name)
        marker = body.marker(ref.marker)
        J = parallel_axis(centre_inertia(body), body.mass,
                          marker.frame.position - body.mass_center.position)
        for field, attr, units in (("Stiffness", "stiffness", STIFFNESS_UNIT),
                                   ("Damping", "damping", DAMPING_UNIT),
                                   ("StopStiffness", "stop_stiffness", STIFFNESS_UNIT)):
            values = getattr(h, attr)
            if values is None:
                continue
            for c, k, v in zip(kind.coordinates, kind.kinds(), np.ravel(values)):
                if k == "translation":
                    m, what, per = body.mass, f"'{body.name}', a mass", "kg"
                else:
                    a = marker.frame.rotation[:, "xyz".index(c[-1])]
                    m, what, per = float(a @ J @ a), f"'{body.name}', an inertia", "kg m^2"
                add(float(v), m, what, f"Hinge '{h.name}'", field, units[k] + f" ({c})", per)
    for f in model.forces:
        kind = FORCE_TYPES[f.type]
        # (spring kind, value, field, unit): the common fields, then the law's own rates
        rates = []
        if kind.spring is not None:
            rates += [(kind.spring, float(f.stiffness), "Stiffness",
                       STIFFNESS_UNIT[kind.spring]),
                      (kind.spring, float(f.damping), "Damping", DAMPING_UNIT[kind.spring])]
        rates += [(p.spring, float(np.max(f.value(p.attr))), p.tag, p.unit)
                  for p in kind.params if p.spring is not None and p.rate is not None]
        moved = bodies_of(f.input, f.output) if rates else None
        if not moved:
            continue
        body = min(moved, key=lambda b: b.mass)
        for spring, value, field, unit in rates:
            if spring == "translation":
                m, what, per = body.mass, f"'{body.name}', a mass", "kg"
            else:
                m = float(np.min(np.linalg.eigvalsh(centre_inertia(body))))
                what, per = f"'{body.name}', a least inertia", "kg m^2"
            add(value, m, what, f"Force '{f.name}'", field, unit, per)
    for k in model.contacts:
        moved = bodies_of(k.input, k.output)
        if not moved or k.stiffness is None:
            continue
        body = min(moved, key=lambda b: b.mass)
        e, v = float(k.exponent), float(k.impact_speed)
        # the contact's stiffness at the depth of an impact at ImpactSpeed (nonlinear law)
        depth = ((e + 1.0) * body.mass * v * v / (2.0 * float(k.stiffness))) ** (1.0 / (e + 1.0))
        k_eff = e * float(k.stiffness) * depth ** (e - 1.0)
        add(k_eff, body.mass, f"'{body.name}', a mass", f"Contact '{k.name}'", "Stiffness",
            f"N/m (k d^{e:g} at the depth d = {depth:.2g} m of an impact at {v:g} m/s)", "kg")
    out.sort(key=lambda e: -e[0])
    return out


#: The integrator advised for a stiff model with the mstmm method (issue 35): the compiled
#: implicit TR-BDF2 with its error control (:mod:`.mstmm.implicit`), stable at any step, where
#: scipy's Radau and BDF cost a Python call per evaluation (the constrained method keeps those).
IMPLICIT_ADVICE = "trbdf2-adaptive"


def stiffness_advice(model, integrator, step, fixed, method="mstmm") -> tuple:
    """What to do about a run that failed or stalled: ``(element, field, text)``, the element
    and field the stiffest spring or damper of the model (:func:`stiff_elements`), or
    ``Simulation`` and the step or integrator when there is none. ``fixed``: the run had a fixed
    step (rk4, euler, newton-euler)."""
    try:
        found = stiff_elements(model)
    except Exception:          # noqa: BLE001 - advice only; never hide the run's own error
        found = []
    if found:
        rate, element, field, text = found[0]
        limit = step_limit(integrator, method) / rate if np.isfinite(rate) and rate > 0 else 0.0
        # no step to suggest when it would be absurdly small (a mass or inertia of 1e-308)
        what = (f"a Step below {limit:.2g} s, " if fixed and step is not None and step > limit
                and limit > 1e-12 else "")
        implicit = ("the integrator Radau or BDF (for stiff models)" if method == "constrained"
                    else f"{'the method mstmm with ' if method != 'mstmm' else ''}the integrator "
                    f"{IMPLICIT_ADVICE} (implicit: its step follows the accuracy asked, not this "
                    f"element; or trbdf2 with a Step of the motion's own time scale)")
        return element, field, (f"the model is stiff, its stiffest element {text}: use "
                                f"{what}{implicit}, or soften that element")
    if fixed:
        other = ("the method mstmm with an adaptive integrator" if method == "newton-euler"
                 else "an adaptive integrator (DOP853, Radau)" if method == "constrained"
                 else f"an adaptive integrator (DOP853, or {IMPLICIT_ADVICE} for a stiff model)")
        return "Simulation", "Step", (f"the motion is faster than the step {step:g} s "
                                      f"resolves: use a smaller Step or {other}")
    tried = ("Radau", "DOP853", "BDF") if method == "constrained" else \
        (IMPLICIT_ADVICE, "DOP853", "Radau")
    others = ", ".join(i for i in tried if i != integrator)
    return "Simulation", "Integrator", (f"try another integrator ({others}) or check the "
                                        "model's loads, masses and initial rates")


#: Fixed steps per period of a contact's oscillation, ``2 pi / sqrt(k_eff / m)`` at its impact
#: speed, that keep an impact's energy: rk4 loses the order it has on smooth motion where a
#: contact starts (the Hertz force grows as depth^1.5), so its error per impact is erratic with
#: the phase of the first step in contact. Measured on a 10 mm steel ball dropped 80 mm on a
#: plane (Hertz, restitution 0.5; relative energy residual after the first impact): 20 steps
#: 1.7e-4, 40 steps 3.2e-5, 67 steps 2.2e-5, 86 steps 1.7e-6; 50 keeps it near 1e-5, a hundredth
#: of the run's warning (:data:`..run.simulate.ENERGY_WARNING`).
CONTACT_STEPS_PER_PERIOD = 50

#: The semi-implicit Euler step (``euler``, and the newton-euler method) is first order: at 20
#: steps per period an impact's energy is 8 % off (the same ball), and it would take some 10^5
#: steps per period to match rk4 at 50. It keeps the energy of contacts that rest or slide, not
#: of impacts: the advice for a contact is rk4.
EULER_CONTACT_NOTE = ("euler is first order and keeps an impact's energy only at some 10^5 "
                      "steps per contact period; use rk4")


#: The integrator that keeps an impact's energy with the mstmm method (issue 32.2): the compiled
#: RK45 at this relative tolerance closes a 10 mm steel ball's bounces to about 1e-8 of the
#: energies' scale per impact (1e-7 over a second of bouncing and rest) in well under a second,
#: where rk4 loses its order at the contact's onset (depth^1.5) and needs some 400 steps a
#: period for 1e-6 (docs/benchmarks.md, "An impact's energy").
CONTACT_INTEGRATOR = "RK45"
CONTACT_RTOL = 1e-10


def contact_periods(model: MultibodySystem) -> list:
    """The period of each contact's oscillation at its impact speed: a list of ``(period,
    element, text)``, shortest first.

    ``period = 2 pi / w``, ``w = sqrt(k_eff / m)``, ``m`` the lighter body's mass,
    ``k_eff = e k d^(e-1)`` the stiffness of the law ``k d^e`` at the depth ``d`` an impact at
    ``ImpactSpeed`` reaches (:func:`stiff_elements`' rate). ``text`` says it in words.
    """
    out = []
    for rate, element, _, _ in stiff_elements(model):
        if not element.startswith("Contact ") or not (math.isfinite(rate) and rate > 0):
            continue
        k = next(c for c in model.contacts if f"Contact '{c.name}'" == element)
        period = 2.0 * math.pi / rate
        out.append((period, element,
                    f"{element} oscillates with a period of {period:.3g} s at its impact speed "
                    f"{float(k.impact_speed):g} m/s"))
    out.sort(key=lambda e: e[0])
    return out


def contact_step(model: MultibodySystem, integrator="rk4", method="mstmm"):
    """The longest fixed step that resolves every contact's period with
    :data:`CONTACT_STEPS_PER_PERIOD` rk4 steps: ``(step, element, text)`` for the contact with
    the shortest period (``text`` the advice in words), or None without contacts. The step is
    rk4's whatever ``integrator`` (:data:`EULER_CONTACT_NOTE`)."""
    periods = contact_periods(model)
    if not periods:
        return None
    period, element, text = periods[0]
    step = period / CONTACT_STEPS_PER_PERIOD
    euler = integrator == "euler" or method == "newton-euler"
    adaptive = (f"; or the integrator {CONTACT_INTEGRATOR} at a relative tolerance of "
                f"{CONTACT_RTOL:g}, which adapts its step to each impact" if method == "mstmm"
                else "")
    return step, element, (f"{text}: a Step of at most {step:.2g} s with rk4 resolves it with "
                           f"{CONTACT_STEPS_PER_PERIOD} steps and keeps an impact's energy"
                           + (f" ({EULER_CONTACT_NOTE})" if euler else "") + adaptive)


def contact_integrator(model: MultibodySystem):
    """What a model's contacts need of its integrator with the mstmm method: ``(integrator,
    rtol, period, element, text)`` (:data:`CONTACT_INTEGRATOR` at :data:`CONTACT_RTOL`; the
    shortest contact period and its element; ``text`` the reason in words), or None without
    contacts."""
    periods = contact_periods(model)
    if not periods:
        return None
    period, element, text = periods[0]
    rk4 = period / CONTACT_STEPS_PER_PERIOD
    return CONTACT_INTEGRATOR, CONTACT_RTOL, period, element, (
        f"{text}: {CONTACT_INTEGRATOR} at a relative tolerance of {CONTACT_RTOL:g} adapts its "
        f"step to each impact and keeps its energy (rk4 would need a Step of at most "
        f"{rk4:.2g} s throughout)")


def nice_step(limit: float, output_step: float) -> float:
    """The step a designer would type: the largest 1, 2 or 5 times a power of ten at most
    ``limit`` (s), down to a hundredth of it, that divides ``output_step`` into whole steps;
    ``output_step / n`` (n the fewest whole steps) when none of those does."""
    if not (limit > 0 and math.isfinite(limit)):
        return limit
    exponent = math.floor(math.log10(limit))
    for e in range(exponent, exponent - 2, -1):
        for m in (5.0, 2.0, 1.0):
            step = float(f"{m:g}e{e}")
            if step > limit * (1 + 1e-12):
                continue
            n = output_step / step
            if output_step > 0 and abs(n - round(n)) <= 1e-6:
                return step
    n = math.ceil(output_step / limit * (1 - 1e-12)) if output_step > 0 else 1
    return output_step / n if output_step > 0 else limit


def _state_blocks(system) -> list:
    """``(hinge, body, indices in y)`` of every tree hinge of a :class:`.system.System`."""
    T, nq = system.tree, system.nq_tot
    out = []
    for i, (body, hinge) in enumerate(zip(system.bodies, system.hinges)):
        q = np.arange(T.qo[i], T.qo[i] + T.nq[i])
        u = nq + np.arange(T.uo[i], T.uo[i] + T.nu[i])
        out.append((hinge, body, q, u))
    return out


def blown_up(system, t_prev, y_prev, y_bad) -> tuple:
    """The tree hinge whose coordinates went non-finite first between a finite state ``y_prev``
    (at ``t_prev``) and ``y_bad``: ``(hinge, body, others)``, ``others`` the count of the other
    hinges not finite in ``y_bad``. Of several, the one with the largest accelerations at
    ``y_prev``."""
    blocks = _state_blocks(system)
    bad = [b for b in blocks if not np.all(np.isfinite(y_bad[np.r_[b[2], b[3]]]))]
    if not bad:
        bad = blocks
    if len(bad) > 1 and y_prev is not None:
        with np.errstate(all="ignore"):
            try:
                d = np.array(system.derivative(t_prev, y_prev), dtype=float)
            except Exception:          # noqa: BLE001 - only which hinge to name
                d = None
        if d is not None:
            def size(b):
                a = np.abs(d[b[3]])
                return math.inf if not np.all(np.isfinite(a)) else float(np.max(a, initial=0.0))
            bad.sort(key=size, reverse=True)
    hinge, body = bad[0][0], bad[0][1]
    return hinge, body, len(bad) - 1


def not_finite(model, t, hinge=None, body=None, others=0, integrator="rk4", step=None,
               fixed=True, method="mstmm") -> RunError:
    """The :class:`RunError` of a state that became non-finite at ``t``: the hinge (or body)
    that blew up first, and what to do (:func:`stiffness_advice`)."""
    _, _, advice = stiffness_advice(model, integrator, step, fixed, method)
    kind = "hinge" if hinge is not None else "body"
    more = f" ({others} other {kind}{'s' if others != 1 else ''} with it)" if others else ""
    if hinge is not None:
        element, what = f"Hinge '{hinge}'", (f"the state of this hinge (body '{body}') is not "
                                             f"finite at t = {t:.6g} s, the first to blow up"
                                             f"{more}")
    elif body is not None:
        element, what = f"RigidBody '{body}'", (f"the state of this body is not finite at "
                                                f"t = {t:.6g} s, the first to blow up{more}")
    else:
        element, what = "Simulation", f"the state is not finite at t = {t:.6g} s"
    return RunError(element, "State", f"{what} ({method}, {integrator}); {advice}")


#: Gauss-Legendre nodes per step (or part of a step) for the work of the adaptive integrators:
#: exact for polynomials of degree 2 n - 1, beyond the order of each one's dense output.
WORK_NODES = {"DOP853": 4, "RK45": 3, "Radau": 3, "BDF": 3, "LSODA": 3}


class WorkQuadrature:
    """The work columns of an adaptive run: the power (``power(t, y) -> (3,)``) integrated over
    the dense output of every step by Gauss-Legendre quadrature, cut at the output times.

    The states at the output times come from the same dense output, so the energy balance's
    residual measures the integration error.
    """

    def __init__(self, power, integrator):
        self.power = power
        self.x, self.w = np.polynomial.legendre.leggauss(WORK_NODES.get(integrator, 4))
        self.flows = np.zeros(3)
        self.evaluations = 0

    def add(self, dense, t0, t1):
        """Add the integral over [t0, t1] of the power along ``dense`` (the step's dense
        output); returns the flows since t = 0."""
        if t1 > t0:
            mid, half = 0.5 * (t0 + t1), 0.5 * (t1 - t0)
            s = np.zeros(3)
            for x, w in zip(self.x, self.w):
                t = mid + half * x
                s += w * self.power(t, dense(t))
            self.evaluations += self.x.size
            self.flows = self.flows + half * s
        return self.flows


# --------------------------------------------------------------------------------------------------
# The no-progress detector of the adaptive integrators (moved from run/simulate.py, issue 36)
# --------------------------------------------------------------------------------------------------

#: No-progress detector of the adaptive integrators: steps per window ...
STALL_WINDOW = 1000
#: ... and the steps that the rest of the run would take at a window's pace, past which the run
#: makes no progress (in two windows running): its step has collapsed (a stiff model, or an
#: integrator stuck at one time).
STALL_STEPS = 1e7


class StallDetector:
    """The no-progress detector of an adaptive integrator: call :meth:`step` after every step.

    The steps are looked at in windows of :data:`STALL_WINDOW`; after two windows running whose
    pace would need more than :data:`STALL_STEPS` further steps to reach the end, the run makes
    no progress and :meth:`step` raises :class:`RunError` naming the likely stiffest element
    (:func:`stiffness_advice`).
    """

    def __init__(self, model, integrator, t_end, window=STALL_WINDOW, limit=STALL_STEPS):
        self.model, self.integrator, self.t_end = model, integrator, float(t_end)
        self.window, self.limit = int(window), float(limit)
        self.count = 0
        self.start = 0.0
        self.slow = 0

    def steps(self, ts) -> None:
        """:meth:`step` for each time of ``ts`` in turn (the steps of a compiled chunk),
        looking only at those that end a window."""
        i, n = 0, len(ts)
        while i < n:
            k = self.window - self.count           # the step that ends this window
            if k > n - i:
                self.count += n - i
                return
            self.count = self.window - 1
            self.step(float(ts[i + k - 1]))
            i += k

    def step(self, t: float) -> None:
        self.count += 1
        if self.count < self.window:
            return
        span = t - self.start
        rest = self.t_end - t
        steps = rest / span * self.window if span > 0 else math.inf
        self.count, self.start = 0, t
        self.slow = self.slow + 1 if steps > self.limit else 0
        if self.slow >= 2:
            element, field, advice = stiffness_advice(self.model, self.integrator, None, False)
            raise RunError(element, field, (
                f"the run makes no progress: {self.integrator}'s last {self.window} steps "
                f"advanced {span:.3g} s to t = {t:.6g} s (the rest to {self.t_end:g} s would "
                f"take {steps:.3g} more); {advice}"))


def first_line(exc) -> str:
    """The first line of an exception's message (at most 200 characters), for a message of ours."""
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else "(no message)"
