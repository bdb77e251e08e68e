"""Design studies: run a model over many values of its parameters and reduce every run to numbers.

A :class:`Study` names its parameters (:mod:`.parameters`), objectives and constraints
(:mod:`.objectives`) and a method:

``grid``
    Full factorial: every combination of the parameters' levels (or lists), the last parameter
    varying fastest.
``lhs``, ``sobol``
    ``samples`` points of a Latin hypercube or a scrambled Sobol sequence in the parameters'
    ranges (``scipy.stats.qmc``; ``seed`` makes them repeatable).
``nelder-mead``, ``powell``, ``de``
    Minimise the first objective within the ranges with ``scipy.optimize`` (Nelder-Mead,
    Powell, differential evolution), at most ``max_evaluations`` runs. The optimisers work on
    the parameters scaled to [0, 1] over their ranges and stop when the parameters are settled
    to ``tolerance`` of each range (Nelder-Mead, Powell) or at the population's convergence
    (``de``, scipy's ``tol``; its population is evaluated in parallel). Nelder-Mead and Powell
    start from the model's own values (clipped into the ranges; the middle where a value is not
    a number). To maximise, minimise the negative (``-rms(x)``).

Constraints in an optimisation are penalties: a run that does not meet one scores
``objective + PENALTY * scale * sum(violation / |bound|)`` (``scale`` the first successful
run's ``|objective|``, at least 1; a bound of 0 counts as 1); a run that failed, or that its own
checks call untrustworthy, scores +inf.
Sweeps record every constraint's margin and whether all are met (``feasible``).

Every run is a :class:`~.variant.VariantResult` row of the :class:`StudyTable`: the parameter
values, objectives, constraint values, status (``ok``, ``failed`` with its error, ``cancelled``,
``untrusted`` with the check that says so: the run finished but its energy balance does not
close; its objectives are in the row but never the best nor an optimiser's value) and wall time.
A study checks everything before its first variant (:func:`check_study`): every problem is listed
(:class:`~.parameters.StudyError`), naming the field.
"""

from __future__ import annotations

import csv
import itertools
import math
import time as _time
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

import numpy as np

from ..model.columns import unit_of
from ..model.files import atomic_write
from ..model.mechanism import MultibodySystem
from ..model.problems import ModelError
from .objectives import Expression, ExpressionError, parse_constraint
from .parameters import (MAX_VARIANTS, Parameter, StudyError, check_parameters, problem)
from .variant import CANCELLED, FAILED, OK, UNTRUSTED, Reductions, VariantResult

SWEEPS = ("grid", "lhs", "sobol")
OPTIMISERS = ("nelder-mead", "powell", "de")
METHODS = SWEEPS + OPTIMISERS
#: Weight of a constraint's relative violation in an optimiser's score (module docstring).
PENALTY = 1e3
#: Most runs of one optimisation.
MAX_EVALUATIONS = 100_000


@dataclass
class Study:
    """What to vary, what to measure and how to search (module docstring). SI values."""

    parameters: list[Parameter]
    objectives: list[str]
    constraints: list[str] = field(default_factory=list)
    method: str = "grid"
    samples: int = 0                     #: lhs, sobol: how many points
    seed: Optional[int] = None           #: lhs, sobol, de
    max_evaluations: int = 200           #: optimisers: most runs
    tolerance: float = 1e-4              #: optimisers: on the parameters, fraction of each range
    population: int = 8                  #: de: population size per parameter (scipy's popsize)
    settings: dict = field(default_factory=dict)   #: simulate()'s t_end, step, output_step ...


@dataclass
class StudyTable:
    """A study's runs and what was found.

    ``rows`` in the variants' order; ``best`` the feasible ``ok`` row with the least first
    objective (None when there is none; ``untrusted`` rows are never it); ``message`` the
    optimiser's or the sweep's last word.
    """

    study: Study
    units: list[str]
    rows: list[VariantResult] = field(default_factory=list)
    cancelled: bool = False
    message: str = ""
    wall: float = 0.0                     #: the study's wall time (s), worker start included
    worker_start: float = 0.0             #: connecting / starting workers, loading kernels (s)
    workers: int = 0
    optimum: Optional[tuple] = None       #: optimisers: the parameter values found

    @property
    def best(self) -> Optional[VariantResult]:
        ok = [r for r in self.rows if r.feasible and r.objectives and
              math.isfinite(r.objectives[0])]
        return min(ok, key=lambda r: r.objectives[0]) if ok else None

    @property
    def untrusted_rows(self) -> list[VariantResult]:
        """The rows whose runs their own checks call untrustworthy (status ``untrusted``)."""
        return [r for r in self.rows if r.status == UNTRUSTED]

    def header(self) -> list[str]:
        s = self.study
        return (["variant"] + [f"{p.path} [{u}]" for p, u in zip(s.parameters, self.units)]
                + list(s.objectives) + list(s.constraints)
                + [f"margin: {c}" for c in s.constraints]
                + ["feasible", "status", "error", "wall_s"])

    def records(self) -> list[list]:
        return [[r.index, *r.values, *r.objectives, *r.constraints, *r.margins,
                 int(r.feasible), r.status, r.error, r.wall] for r in self.rows]

    def to_csv(self, path) -> None:
        """Write the table: a header line, then one row per run (values in SI)."""
        with atomic_write(path, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(self.header())
            for rec in self.records():
                w.writerow([repr(v) if isinstance(v, float) else v for v in rec])

    def column(self, k: int) -> np.ndarray:
        """Column ``k`` of :meth:`records` as floats."""
        return np.array([float(rec[k]) for rec in self.records()], dtype=float)

    def summary(self) -> str:
        n = len(self.rows)
        counts = {s: sum(1 for r in self.rows if r.status == s)
                  for s in (OK, FAILED, CANCELLED, UNTRUSTED)}
        untrusted = f", {counts[UNTRUSTED]} untrusted" if counts[UNTRUSTED] else ""
        lines = [f"{self.study.method} study: {n} run{'s' if n != 1 else ''} "
                 f"({counts[OK]} ok, {counts[FAILED]} failed, {counts[CANCELLED]} cancelled"
                 f"{untrusted}) on "
                 f"{self.workers} worker{'s' if self.workers != 1 else ''}, "
                 f"{self.wall:.3g} s wall (workers ready after {self.worker_start:.3g} s)"]
        if self.message:
            lines.append(self.message)
        b = self.best
        if b is not None:
            vals = ", ".join(f"{p.path} = {v:.6g} {u}" for p, v, u in
                             zip(self.study.parameters, b.values, self.units))
            lines.append(f"best: variant {b.index}: {self.study.objectives[0]} = "
                         f"{b.objectives[0]:.6g} at {vals}")
        for r in self.rows:
            if r.status == FAILED:
                lines.append(f"variant {r.index} failed: {r.error}")
                break
        for r in self.untrusted_rows[:1]:
            lines.append(f"variant {r.index} untrusted (its objectives not used): {r.error}")
        return "\n".join(lines)


# --------------------------------------------------------------------------------------------------
# Checking
# --------------------------------------------------------------------------------------------------

def probe_columns(model: MultibodySystem, settings: dict) -> list[str]:
    """The result columns of ``model``'s runs, from a run of a few steps (raises
    :class:`ModelError` when the base model does not run)."""
    from ..run.simulate import simulate
    s = model.simulation
    step = settings.get("step") or s.step
    probe = {**settings, "t_end": 2 * step, "output_step": step}
    return list(simulate(model, **probe).names)


def check_study(model: MultibodySystem, study: Study, columns: Sequence[str] = None,
                paths: bool = True):
    """Every problem of ``study`` on ``model``, raised once as :class:`StudyError`.

    ``columns``: the model's result columns (None: found by :func:`probe_columns`). ``paths``
    False: the parameters are not paths of the model (a factory makes the variants) and are not
    resolved. Returns the parameters' targets (paths) and units.
    """
    problems = []
    method = (study.method or "").lower()
    if method not in METHODS:
        problems.append(problem("Study", "Method", f"{study.method!r} is not a method; there "
                                                   f"are {', '.join(METHODS)}"))
    targets, found = check_parameters(model, study.parameters, method == "grid", paths)
    problems += found
    for k, p in enumerate(study.parameters, 1):
        if method != "grid" and not p.is_range:
            problems.append(problem(f"Parameter {k} ({p.path})", "Range",
                                    f"the method {method} needs a range LOW:HIGH, not a list"))
    if method == "grid" and study.parameters:
        n = 1
        for p in study.parameters:
            n *= max(1, len(p.values) if p.values is not None else p.levels)
        if n > MAX_VARIANTS:
            problems.append(problem("Study", "Parameters", f"the grid has {n} variants "
                                                           f"(at most {MAX_VARIANTS})"))
    if method in ("lhs", "sobol") and not 1 <= study.samples <= MAX_VARIANTS:
        problems.append(problem("Study", "Samples", f"{study.samples}: the method {method} needs "
                                                    f"1 to {MAX_VARIANTS} samples"))
    if method in OPTIMISERS:
        if not 1 <= study.max_evaluations <= MAX_EVALUATIONS:
            problems.append(problem("Study", "MaxEvaluations", f"{study.max_evaluations}: 1 to "
                                                               f"{MAX_EVALUATIONS}"))
        if not (study.tolerance > 0 and study.tolerance < 1):
            problems.append(problem("Study", "Tolerance", f"{study.tolerance!r}: a fraction of "
                                                          "each range, between 0 and 1"))
    if not study.objectives:
        problems.append(problem("Objectives", "Objectives", "the study has no objective"))
    exprs = []
    for k, text in enumerate(study.objectives, 1):
        try:
            exprs.append((f"Objective {k}", "Expression", Expression(text)))
        except ExpressionError as exc:
            problems.append(problem(f"Objective {k} ({_short(text)})", "Expression", str(exc)))
    cons = []
    for k, text in enumerate(study.constraints, 1):
        try:
            c = parse_constraint(text)
            cons.append(c)
            exprs.append((f"Constraint {k}", "Expression", c.expression))
            c.check_unit(unit_of)
        except ExpressionError as exc:
            problems.append(problem(f"Constraint {k} ({_short(text)})", "Expression", str(exc)))
    if problems:
        raise StudyError(problems)
    if columns is None:
        try:
            columns = probe_columns(model, study.settings)
        except ModelError as exc:
            raise StudyError([problem("Model", "Model", "the base model does not run: "
                                      + "; ".join(str(p) for p in exc.problems)[:2000])]) from exc
    for where, fld, e in exprs:
        try:
            e.check(columns)
        except ExpressionError as exc:
            problems.append(problem(f"{where} ({_short(e.text)})", fld, str(exc)))
    if problems:
        raise StudyError(problems)
    units = [t.unit if t is not None else "" for t in targets]
    return targets, units


def _short(text, n=60) -> str:
    text = str(text)
    return text if len(text) <= n else text[:n - 4] + " ..."


# --------------------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------------------

class _Stop(Exception):
    """Raised inside an optimiser's objective to end it (cancel, or out of evaluations)."""


def sample_points(study: Study) -> np.ndarray:
    """The sweep's points, shape (n, number of parameters), SI values."""
    method = study.method.lower()
    ps = study.parameters
    if method == "grid":
        return np.array(list(itertools.product(*[p.grid() for p in ps])), dtype=float)
    from scipy.stats import qmc
    d = len(ps)
    if method == "lhs":
        u = qmc.LatinHypercube(d=d, seed=study.seed).random(study.samples)
    else:
        u = qmc.Sobol(d=d, scramble=True, seed=study.seed).random(study.samples)
    lo = np.array([p.bounds[0] for p in ps])
    hi = np.array([p.bounds[1] for p in ps])
    return lo + u * (hi - lo)


def run_study(model: MultibodySystem, study: Study, factory: Callable = None, executor=None,
              progress: Callable = None, cancel: Callable = None,
              columns: Sequence[str] = None) -> StudyTable:
    """Run ``study`` on ``model`` and return its :class:`StudyTable`.

    Parameters
    ----------
    model : MultibodySystem
        The base model: the parameters are paths of it (unless ``factory``).
    factory : callable(values) -> MultibodySystem, optional
        Makes each variant (FreeCAD: sets the document's properties, recomputes the shapes and
        exports); called in this process, one variant at a time. The parameters' paths are then
        only names.
    executor : optional
        :class:`~.executors.DaskExecutor` (default: an embedded LocalCluster) or
        :class:`~.executors.SerialExecutor`; started here, closed at the end when made here.
    progress : callable(done, total, row), optional
        After every run (``total``: the sweep's size, an optimiser's ``max_evaluations``).
    cancel : callable() -> bool, optional
        Looked at while the runs go on; True ends the study (the table keeps what finished,
        ``cancelled`` True).
    columns : sequence of str, optional
        The model's result columns if known (else a short probe run finds them).

    Raises
    ------
    StudyError
        The study is not valid (before any run; every problem listed).
    """
    from .executors import DaskExecutor
    wall0 = _time.perf_counter()
    targets, units = check_study(model, study, columns, paths=factory is None)
    study.method = study.method.lower()
    paths = [p.path for p in study.parameters]
    reductions = Reductions(list(study.objectives), list(study.constraints), dict(study.settings))
    table = StudyTable(study, units)
    own = executor is None
    if own:
        executor = DaskExecutor()
    counter = itertools.count()
    total = [0]

    def variants(points):
        for x in points:
            i = next(counter)
            if factory is None:
                yield i, model, paths, tuple(float(v) for v in x)
            else:
                yield i, factory(tuple(float(v) for v in x)), (), tuple(float(v) for v in x)

    def on_result(row):
        table.rows.append(row)
        if progress is not None:
            progress(len(table.rows), total[0], row)

    try:
        executor.start(model, reductions.settings)
        table.worker_start = executor.worker_start
        table.workers = executor.workers
        if study.method in SWEEPS:
            points = sample_points(study)
            total[0] = len(points)
            if factory is None:
                executor.run(list(variants(points)), reductions, on_result, cancel)
            else:                              # geometry: exported here, a batch at a time
                batch = max(1, 4 * max(1, executor.workers))
                for k in range(0, len(points), batch):
                    if cancel is not None and cancel():
                        break
                    executor.run(list(variants(points[k:k + batch])), reductions, on_result,
                                 cancel)
            table.cancelled = bool(cancel is not None and cancel())
            ok = sum(1 for r in table.rows if r.status == OK)
            table.message = f"{ok} of {total[0]} variants ran"
        else:
            total[0] = study.max_evaluations
            _optimise(model, study, targets, variants, executor, reductions, on_result,
                      cancel, table)
    finally:
        if own:
            executor.close()
    table.rows.sort(key=lambda r: r.index)       # arrived as they finished
    table.wall = _time.perf_counter() - wall0
    return table


def _optimise(model, study, targets, variants, executor, reductions, on_result, cancel, table):
    from scipy import optimize
    ps = study.parameters
    lo = np.array([p.bounds[0] for p in ps])
    hi = np.array([p.bounds[1] for p in ps])
    span = hi - lo
    cons = [parse_constraint(c) for c in study.constraints]
    ref = [None]
    used = [0]

    def score(row) -> float:
        if row.status != OK or not row.objectives or not math.isfinite(row.objectives[0]):
            return math.inf
        f = row.objectives[0]
        if ref[0] is None:
            ref[0] = max(1.0, abs(f))
        viol = sum(max(0.0, -m) / (abs(c.bound) or 1.0) for c, m in zip(cons, row.margins)
                   if not (isinstance(m, float) and math.isnan(m)))
        if any(isinstance(m, float) and math.isnan(m) for m in row.margins):
            return math.inf
        return f + PENALTY * ref[0] * viol if viol > 0 else f

    def evaluate_many(U) -> list[float]:
        U = np.atleast_2d(np.asarray(U, dtype=float))
        if cancel is not None and cancel():
            raise _Stop("cancelled")
        room = study.max_evaluations - used[0]
        if room <= 0:
            raise _Stop("the most evaluations were run")
        asked = len(U)
        U = U[:room]
        X = lo + np.clip(U, 0.0, 1.0) * span
        used[0] += len(X)
        rows = executor.run(list(variants(X)), reductions, on_result, cancel)
        if any(r.status == CANCELLED for r in rows):
            raise _Stop("cancelled")
        # the members past the evaluations left are not run; the optimiser (de's population)
        # still gets a score for each, the worst, and stops at its next call
        return [score(r) for r in rows] + [math.inf] * (asked - len(rows))

    def fun(u):
        return evaluate_many([u])[0]

    x0 = []
    for t, p, a, b in zip(targets, ps, lo, hi):
        v = t.current if t is not None else math.nan
        x0.append((min(max(v, a), b) - a) / (b - a) if math.isfinite(v) else 0.5)
    x0 = np.array(x0)
    message = ""
    try:
        if study.method == "nelder-mead":
            res = optimize.minimize(fun, x0, method="Nelder-Mead", bounds=[(0, 1)] * len(ps),
                                    options=dict(xatol=study.tolerance, fatol=math.inf,
                                                 maxfev=study.max_evaluations, adaptive=True))
        elif study.method == "powell":
            res = optimize.minimize(fun, x0, method="Powell", bounds=[(0, 1)] * len(ps),
                                    options=dict(xtol=study.tolerance, ftol=1e-12,
                                                 maxfev=study.max_evaluations))
        else:
            def mapper(func, iterable):
                return evaluate_many(list(iterable))
            res = optimize.differential_evolution(
                fun, [(0, 1)] * len(ps), seed=study.seed, popsize=study.population,
                maxiter=max(1, study.max_evaluations // max(1, study.population * len(ps))),
                polish=False, updating="deferred", workers=mapper, tol=study.tolerance)
        message = f"{study.method}: {res.message}"
        table.optimum = tuple(float(v) for v in lo + np.clip(res.x, 0, 1) * span)
    except _Stop as stop:
        message = f"{study.method}: stopped ({stop})"
        table.cancelled = "cancelled" in str(stop)
    table.message = message
