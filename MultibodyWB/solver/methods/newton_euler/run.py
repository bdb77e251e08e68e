"""A Newton-Euler run: :func:`run` integrates a model in chunks with progress and cancel, records
the result rows (:class:`NewtonEulerRecorder`) and names the body that blew up first (the method:
:mod:`.`)."""

from __future__ import annotations

import math
import time as _time

import numpy as np

from ...model.mechanism import MultibodySystem
from ...results.table import fill_residual
from ..shared.cut_rows import CLOSURE_QUANTITIES
from ..shared.instant import Instant
from .scheme import COMPILE_SAMPLES, NewtonEuler

#: Wall time aimed at per compiled chunk (s): how often progress and cancel are looked at.
CHUNK_SECONDS = 0.1
#: Most steps in one compiled chunk.
MAX_CHUNK = 200000

# --------------------------------------------------------------------------------------------------
# result rows
# --------------------------------------------------------------------------------------------------

class NewtonEulerRecorder:
    """Result rows of the Newton-Euler method: :class:`~.recorder.Recorder`'s columns for every
    hinge (cut hinges too), and after each cut hinge's columns its loop-closure errors
    ``closure_gap`` (m), ``closure_angle`` (rad) and their rates, as the other methods give them
    (the norms of the hinge's residual on its constrained directions, translations and rotations
    apart, and of the relative twist of its markers on the same directions): here the deflection
    of the cut hinge's penalty joint, from the kernel (rotations as the sines of the
    misalignment angles: the same to second order in the residual).
    """

    def __init__(self, ne: NewtonEuler):
        from ...results.recorder import Recorder
        self.ne = ne
        self.base = base = Recorder(ne)
        cut = set(ne.topology.cut_hinges)
        k = 1 + base.n_body_cols * len(base.bodies)
        order = list(range(k))
        names = list(base.names)
        self.cuts = []                   # rows of the cut hinges in ne.hinges
        for spec, prefix in zip(base.hinge_specs, base.hinges):
            order += list(range(k, k + spec["ncols"]))
            k += spec["ncols"]
            name = ne.hinges[spec["i"]]
            if name in cut:
                order += list(range(len(names), len(names) + len(CLOSURE_QUANTITIES)))
                names += [f"{prefix}.{q}" for q in CLOSURE_QUANTITIES]
                self.cuts.append(spec["i"])
        order += list(range(k, len(base.names)))
        self._order = np.array(order, dtype=np.int64)
        self.names = [names[i] for i in order]
        self.bodies, self.hinges = base.bodies, base.hinges
        self.max_closure = 0.0

    def reset(self) -> None:
        self.base.reset()

    def row(self, t: float, y: np.ndarray, instant: Instant, closure=None,
            flows=None) -> np.ndarray:
        """The result row of an instant of the method; ``closure`` (nh, 4) from
        :meth:`NewtonEuler.closure_of_row`, ``flows`` as in :meth:`.recorder.Recorder.row`."""
        out = self.base.row(t, y, instant, flows=flows)
        if not self.cuts:
            return out
        extra = closure[self.cuts].ravel()
        self.max_closure = max(self.max_closure, float(np.max(extra[0::4])),
                               float(np.max(extra[1::4])))
        return np.concatenate([out, extra])[self._order]


# --------------------------------------------------------------------------------------------------
# a whole run
# --------------------------------------------------------------------------------------------------

def _blow_up(ne, before, n, h):
    """The :class:`~.runtime.RunError` of ``n`` steps of ``h`` from the snapshot ``before``
    (:meth:`NewtonEuler.snapshot`) that ended with a state that is not finite: the steps again,
    one at a time, up to the first whose state is not finite, naming the body that blew up
    first (of several, the one whose velocity changed most in the step before)."""
    from ..runtime import not_finite
    ne.restore(before)
    v_prev = ne.S.v.copy()
    dv = np.zeros(ne.S.v.shape[0])
    for _ in range(n):
        ne.advance(1, h=None if h == ne.step else h)
        if not ne.finite():
            bad = [i for i in range(ne.S.x.shape[0]) if not (
                np.all(np.isfinite(ne.S.x[i])) and np.all(np.isfinite(ne.S.v[i]))
                and np.all(np.isfinite(ne.S.L[i])) and np.all(np.isfinite(ne.S.R[i])))]
            bad = bad or list(range(ne.S.x.shape[0]))
            bad.sort(key=lambda i: -dv[i] if np.isfinite(dv[i]) else -np.inf)
            return not_finite(ne.model, ne.t, body=ne.bodies[bad[0]] if bad else None,
                              others=len(bad) - 1, integrator="symplectic-euler", step=h,
                              method="newton-euler")
        with np.errstate(all="ignore"):
            dv = np.linalg.norm(ne.S.v - v_prev, axis=1)
        v_prev = ne.S.v.copy()
    return not_finite(ne.model, ne.t, integrator="symplectic-euler", step=h,
                      method="newton-euler")


def run(model: MultibodySystem, t_end: float, step: float, output_step: float, progress=None,
        cancel=None, topology=None, **options):
    """Simulate with the Newton-Euler method; returns ``(times, states, data, info, recorder)``,
    the recorder a :class:`NewtonEulerRecorder` (its ``names`` are the columns).

    ``options``: ``joint_fraction``, ``joint_frequency``, ``joint_damping_ratio`` (see
    :class:`NewtonEuler`); ``topology``: the model's, when the caller has it. Output every
    ``output_step`` (a whole number of steps) and at
    ``t_end`` (after a shorter last step when it is not on the step grid).
    """
    from ..runtime import Cancelled
    progress = progress or (lambda f: None)
    cancel = cancel or (lambda: False)
    ne = NewtonEuler(model, step, topology=topology, **options)
    rec = NewtonEulerRecorder(ne)
    h = float(step)
    r = max(1, int(round(output_step / h)))
    n_full = int(math.floor(t_end / h * (1.0 + 1e-12) + 1e-9))
    tail = t_end - n_full * h
    if tail <= 1e-9 * max(t_end, h):
        tail = 0.0
    times, states, data = [], [], []
    # the energy balance: the power of drivers, forces and dampers at the output times,
    # integrated by the trapezoidal rule (see the module docstring)
    track = ne.does_work
    flows, last_power = np.zeros(3), None

    def add(t, row):
        nonlocal flows, last_power
        inst = ne.instant_of_row(t, row)
        if track:
            p = ne.power(inst)
            if last_power is not None:
                flows = flows + 0.5 * (t - times[-1]) * (p + last_power)
            last_power = p
        times.append(t)
        states.append(ne.state_vector(inst))
        data.append(rec.row(t, states[-1], inst, ne.closure_of_row(row), flows=flows))

    progress(0.0)
    total = n_full + (1 if tail else 0)
    ne.compile_time_functions = total > COMPILE_SAMPLES
    if n_full == 0:
        add(0.0, ne.advance(0, record_last=True)[0])
    chunk = r * max(1, 256 // r) if r <= MAX_CHUNK else MAX_CHUNK
    while ne.k < n_full:
        if cancel():
            raise Cancelled("the run was cancelled")
        t_chunk = _time.perf_counter()
        k0 = ne.k
        n = min(chunk, n_full - k0)
        before = ne.snapshot()
        rows = ne.advance(n, every=r)
        if not ne.finite():
            raise _blow_up(ne, before, n, h)
        first = -(-k0 // r)
        for i, row in enumerate(rows):
            add((first + i) * r * h, row)
        dt = _time.perf_counter() - t_chunk
        target = int(min(max(n * CHUNK_SECONDS / max(dt, 1e-6), 1), MAX_CHUNK))
        chunk = r * max(1, target // r) if r <= target else max(1, target)
        if ne.k < total:
            progress(ne.k / total)
    if tail:
        if cancel():
            raise Cancelled("the run was cancelled")
        before = ne.snapshot()
        ne.advance(1, h=tail)
        if not ne.finite():
            raise _blow_up(ne, before, 1, tail)
    add(t_end, ne.advance(0, record_last=True)[0])
    progress(1.0)
    info = dict(steps=total, evaluations=total, integrator="symplectic-euler",
                joint_frequency=ne.joint_omega / (2 * np.pi), joint_damping_ratio=ne.joint_zeta,
                joint_parameters={k: list(v) for k, v in ne.joint_parameters.items()})
    if rec.cuts:
        info["loop_closure"] = dict(max_residual=rec.max_closure,
                                    cut_hinges=list(ne.topology.cut_hinges))
    data = np.array(data)
    fill_residual(rec.names, data)
    return (np.array(times), np.array(states).reshape(len(times), ne.ny), data, info, rec)
