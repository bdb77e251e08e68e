"""One variant of a study: a model run and reduced to its objectives, where a worker runs it.

:func:`run_variant` is what a Dask worker (or the serial executor) calls. It never raises for the
variant's own failures (an invalid model, a run that blows up, an objective that cannot be
evaluated): they come back as the row's ``status`` and ``error``, so that one broken variant never
aborts a study. A run that finished but that its own checks say not to trust
(:attr:`~..results.table.Results.untrusted`: its energy balance does not close) is the status
``untrusted``, the reason in ``error``: its objectives are kept in the row, to be seen, but it
is not ``feasible``, so neither the best variant nor an optimiser uses them. It imports only the
FreeCAD-free solver.
"""

from __future__ import annotations

import math
import time as _time
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

from ..methods.runtime import Cancelled
from ..model.problems import ModelError
from .objectives import Expression, ExpressionError

#: Seconds between two looks of a running variant at the study's cancel flag (a worker asks the
#: scheduler; a run also looks only between its chunks, about 0.1 s of work apart).
CANCEL_POLL = 0.2

OK, FAILED, CANCELLED = "ok", "failed", "cancelled"
#: A run that finished but that its own checks call untrustworthy (module docstring).
UNTRUSTED = "untrusted"


@dataclass
class Reductions:
    """What a study asks of every run (picklable: sent with each variant)."""

    objectives: Sequence[str]
    constraints: Sequence[str]
    settings: dict = field(default_factory=dict)     #: simulate()'s t_end, step, method ...

    def parsed(self):
        return ([Expression(t) for t in self.objectives],
                [_constraint(t) for t in self.constraints])


def _constraint(text):
    from .objectives import parse_constraint
    return parse_constraint(text)


@dataclass
class VariantResult:
    """The outcome of one variant (SI values)."""

    index: int
    values: tuple
    status: str = OK
    error: str = ""
    objectives: tuple = ()                 #: each objective's value (NaN when failed)
    constraints: tuple = ()                #: each constraint expression's value
    margins: tuple = ()                    #: each constraint's margin (positive: met)
    wall: float = math.nan                 #: the simulation's wall time (s)
    total: float = math.nan                #: the variant's whole time in the worker (s)
    results: object = None                 #: the run's Results when asked to keep them

    @property
    def feasible(self) -> bool:
        """The run is ``ok`` (not failed, cancelled or untrusted) and meets every constraint."""
        return self.status == OK and all(m >= 0 for m in self.margins)


def _first_line(exc) -> str:
    text = str(exc).strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if isinstance(exc, ModelError) and len(lines) > 1:
        return "; ".join(lines[1:4]).lstrip("- ") + (" ..." if len(lines) > 4 else "")
    return (lines[0] if lines else type(exc).__name__)[:500]


def _cancel_check(flag) -> Optional[Callable[[], bool]]:
    """A rate-limited ``cancel()`` for simulate: ``flag`` is a callable, or the name of a Dask
    Event (looked up on the worker's scheduler), or None."""
    if flag is None:
        return None
    if isinstance(flag, str):
        try:
            from distributed import Event
            event = Event(flag)
            look = event.is_set
        except Exception:                    # not on a Dask worker
            return None
    else:
        look = flag
    last = [0.0, False]

    def cancel():
        now = _time.monotonic()
        if not last[1] and now - last[0] >= CANCEL_POLL:
            last[0] = now
            try:
                last[1] = bool(look())
            except Exception:
                last[1] = False
        return last[1]
    return cancel


def run_variant(index: int, model, paths: Sequence[str], values: Sequence[float],
                reductions: Reductions, cancel=None, keep: bool = False) -> VariantResult:
    """Run one variant and reduce it.

    Parameters
    ----------
    index : int
        The variant's number in the study.
    model : MultibodySystem
        The base model (``paths`` are written into a copy of it) or, with no ``paths``, the
        variant itself (a geometry variant exported by FreeCAD).
    paths, values
        Parameter paths (:mod:`.parameters`) and their SI values.
    reductions : Reductions
        The objectives, constraints and run settings.
    cancel : str or callable, optional
        The study's cancel flag (the name of a Dask Event on a worker).
    keep : bool
        Return the run's :class:`~..results.table.Results` too.
    """
    t0 = _time.perf_counter()
    out = VariantResult(index, tuple(float(v) for v in values))
    nobj, ncon = len(reductions.objectives), len(reductions.constraints)
    out.objectives = (math.nan,) * nobj
    out.constraints = out.margins = (math.nan,) * ncon
    check = _cancel_check(cancel)
    try:
        if check is not None and check():
            raise Cancelled()
        from ..run.simulate import simulate
        from .parameters import apply, target
        if paths:
            targets = [target(model, p) for p in paths]
            model = apply(model, targets, values)
        objectives, constraints = reductions.parsed()
        results = simulate(model, cancel=check, **reductions.settings)
        out.wall = float(results.meta.get("wall_time", math.nan))
        out.objectives = tuple(o.evaluate(results) for o in objectives)
        cvals = tuple(c.expression.evaluate(results) for c in constraints)
        out.constraints = cvals
        out.margins = tuple(c.margin(v) for c, v in zip(constraints, cvals))
        bad = [f"objective '{o.text}' is {v!r}" for o, v in zip(objectives, out.objectives)
               if not math.isfinite(v)]
        bad += [f"constraint '{c.text}' is {v!r}" for c, v in zip(constraints, cvals)
                if not math.isfinite(v)]
        if bad:                              # never an ok row with NaN or inf in it
            raise ArithmeticError("; ".join(bad) + " (not a finite number)")
        if results.untrusted:                # kept to be seen, never a valid optimum
            out.status, out.error = UNTRUSTED, "; ".join(results.untrusted)
        if keep:
            out.results = results
    except Cancelled:
        out.status, out.error = CANCELLED, "cancelled"
    except (ModelError, ExpressionError, ValueError, ArithmeticError) as exc:
        out.status, out.error = FAILED, _first_line(exc)
    except Exception as exc:                 # a variant never takes the study down
        out.status, out.error = FAILED, f"{type(exc).__name__}: {_first_line(exc)}"
    out.total = _time.perf_counter() - t0
    return out


def warm_worker(model, settings) -> float:
    """Load the compiled kernels in this process by a few steps of ``model``: the seconds it took
    (a study calls it once per worker before its variants, so no variant pays for it)."""
    t0 = _time.perf_counter()
    from ..run.simulate import simulate
    s = model.simulation
    step = settings.get("step") or s.step
    try:
        simulate(model, **{**settings, "t_end": 5 * step, "output_step": step})
    except Exception:
        pass                                 # the variants will say what is wrong
    return _time.perf_counter() - t0
