"""Consistent initial conditions of mechanisms with closed loops: :func:`assemble`.

A user gives every tree hinge an initial coordinate and rate (or leaves them as drawn). In a closed
loop these rarely close it exactly: a rounded angle, a perturbed length, a rate given for one hinge
only. :func:`assemble` finds the nearest consistent configuration and motion and says what it
changed:

Positions
    Newton (Gauss-Newton) iterations on the loop-closure residual
    (:func:`~.kinematics.loop_residual`) with minimum-norm corrections of the coordinates that are
    not driven (:func:`numpy.linalg.lstsq` on the dimensionless Jacobian: translation rows divided
    by the model's length scale ``L``, translation columns multiplied by it, so a metre counts as
    ``1/L`` radian), a step halved until the residual decreases. The driven coordinates are held
    at their values. Estimated initial coordinates are corrected first, then those as drawn,
    and the prescribed ones only when the loops cannot be closed otherwise.
Velocities
    The least-squares (minimum-norm, same scaling) correction of the rates that are not driven
    that makes ``J u = 0``, ``J`` the loop Jacobian (:func:`~.kinematics.loop_jacobian`).

Coordinates are those of :mod:`.kinematics`: the tree coordinates in ``topology.tree_hinges`` order,
each hinge's in ``HINGE_TYPES[type].coordinates`` order, Bryant angles for rotations (also for
spherical and free hinges), and their time derivatives as rates. :func:`coordinates_from_state` and
:func:`state_from_coordinates` convert to and from a :class:`~.system.System`'s state (quaternions,
relative angular velocities).

A loop that cannot be closed (a coupler too short to reach, drivers that contradict each other)
raises :class:`~.model.ModelError` naming the loop by its cut hinge and listing its hinges.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import scipy.linalg

from .kinematics import (coordinate_labels, coordinate_slices, coordinates_from_pose,
                         forward_kinematics, initial_coordinates, local_motion_subspace,
                         loop_jacobian, loop_residual, marker_pose,
                         relative_twist_jacobian)
from ..elements.hinges import COORDINATE_KIND, HINGE_TYPES, QUATERNION_TYPES
from ..model.problems import ModelError, Problem
from .texts import pair
from .topology import analyse

__all__ = ["AssemblyReport", "assemble", "assembled_state", "coordinates_from_state",
           "initial_rates", "state_from_coordinates", "SINGULAR_RATIO"]

#: A loop Jacobian whose smallest kept singular value is below this fraction of its largest
#: (dimensionless) is reported as (near) singular.
SINGULAR_RATIO = 1e-3



# --------------------------------------------------------------------------------------------------
# Conversions between the kinematics coordinates and a System's state
# --------------------------------------------------------------------------------------------------

def _quaternion_to_matrix(qv):
    from ..maths.rotations import quaternion_to_matrix
    return quaternion_to_matrix(qv)


def coordinates_from_state(system, y, reference=None) -> tuple[np.ndarray, np.ndarray]:
    """Tree coordinates and rates (:mod:`.kinematics` layout, Bryant angles) of a state.

    Parameters
    ----------
    system : System
        Gives the state layout (``hinges``, ``tree.qo``, ``tree.uo``, ``nq_tot``), the model and
        the topology.
    y : array_like (nq + nu,)
    reference : array_like (n,), optional
        Coordinates to stay near when a rotation has two Bryant decompositions (spherical, free).

    Returns
    -------
    q, qd : ndarray (n,)
        Coordinates (m, rad) and their rates (m/s, rad/s), columns of
        :func:`~.kinematics.coordinate_labels`.
    """
    model, topo, T = system.model, system.topology, system.tree
    y = np.asarray(y, dtype=float).reshape(-1)
    slices = coordinate_slices(model, topo)
    n = topo.tree_coordinates
    q, qd = np.zeros(n), np.zeros(n)
    ref = None if reference is None else np.asarray(reference, dtype=float)
    for i, hname in enumerate(system.hinges):
        typ = model.hinge(hname).type
        s = slices[hname]
        qs = y[T.qo[i]:T.qo[i] + T.nq[i]]
        us = y[system.nq_tot + T.uo[i]:system.nq_tot + T.uo[i] + T.nu[i]]
        if typ in QUATERNION_TYPES:
            o = 0 if typ == "spherical" else 3
            R = _quaternion_to_matrix(qs[o:o + 4])
            angles, _ = coordinates_from_pose("spherical", R, np.zeros(3),
                                              None if ref is None else ref[s][o:])
            Sw = local_motion_subspace("spherical", angles)[:3]
            q[s] = np.concatenate([qs[:o], angles])
            qd[s] = np.concatenate([us[:o], np.linalg.solve(Sw, us[o:o + 3])])
        else:
            q[s] = qs
            qd[s] = us
    return q, qd


def state_from_coordinates(system, q, qd) -> np.ndarray:
    """The state ``y = [q; u]`` of ``system`` from tree coordinates and rates (inverse of
    :func:`coordinates_from_state`)."""
    from ..maths.rotations import bryant_to_quaternion
    model, topo, T = system.model, system.topology, system.tree
    slices = coordinate_slices(model, topo)
    q = np.asarray(q, dtype=float).reshape(-1)
    qd = np.asarray(qd, dtype=float).reshape(-1)
    y = np.zeros(system.nq_tot + system.nu_tot)
    for i, hname in enumerate(system.hinges):
        typ = model.hinge(hname).type
        s = slices[hname]
        qo, uo = T.qo[i], system.nq_tot + T.uo[i]
        qh, rh = q[s], qd[s]
        if typ in QUATERNION_TYPES:
            o = 0 if typ == "spherical" else 3
            y[qo:qo + o] = qh[:o]
            y[qo + o:qo + o + 4] = bryant_to_quaternion(qh[o:])
            y[uo:uo + o] = rh[:o]
            y[uo + o:uo + o + 3] = local_motion_subspace("spherical", qh[o:])[:3] @ rh[o:]
        else:
            y[qo:qo + qh.size] = qh
            y[uo:uo + rh.size] = rh
    return y


def assembled_state(system):
    """A :class:`~.system.System`'s state at t = 0 with its loops closed.

    The hinges' initial coordinates (or as drawn) and rates, and the bodies' initial velocities
    (:meth:`~.system.System.initial_state`), corrected by :func:`assemble` (the driven
    coordinates at their drivers' values at t = 0; coordinates and rates the model gives kept
    where the others can take the correction).

    Returns
    -------
    y : ndarray (nq + nu,)
    report : AssemblyReport or None
        None for a tree (nothing to assemble).
    """
    y = system.initial_state()
    model, topo = system.model, system.topology
    if not topo.cut_hinges:
        return y, None
    q0, u0 = coordinates_from_state(system, y)
    q, u, report = assemble(model, topo, q0, u0)
    return state_from_coordinates(system, q, u), report


def initial_rates(model, topology) -> np.ndarray:
    """Tree coordinate rates (n,) at t = 0: each hinge's ``initial_rates`` (zeros if not given)."""
    parts = [model.hinge(name).vector("initial_rates") for name in topology.tree_hinges]
    return np.concatenate(parts) if parts else np.zeros(0)


# --------------------------------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------------------------------

def _unit(label, rate=False):
    kind = COORDINATE_KIND[label.rsplit(".", 1)[1]]
    base = "m" if kind == "translation" else "rad"
    return base + ("/s" if rate else "")


def _fmt(label, value, rate=False):
    """A coordinate's value (or rate) with its unit (and in degrees, for an angle)."""
    return _fmt_pair(label, value, value, rate)[0]


def _fmt_pair(label, a, b, rate=False, least=6):
    """Two values of a coordinate (or of its rate) compared in a message, with their units:
    ``least`` significant digits, more where it takes them to read differently
    (:func:`.texts.pair`)."""
    unit = _unit(label, rate)
    texts = [f"{x} {unit}" for x in pair(a, b, least=least)]
    if unit.startswith("rad"):
        deg = pair(a, b, 180.0 / np.pi, least=least)
        texts = [f"{t} ({d} deg{'/s' if rate else ''})" for t, d in zip(texts, deg)]
    return tuple(texts)


@dataclass
class AssemblyReport:
    """What :func:`assemble` did.

    Attributes
    ----------
    labels : tuple of str
        The tree coordinates, ``'<hinge>.<coordinate>'`` (:func:`~.kinematics.coordinate_labels`).
    q_given, q, qd_given, qd : ndarray (n,)
        Coordinates and rates as given (driven ones at their drivers' values) and as assembled.
    driven : tuple of str
        The coordinates held fixed.
    loops : tuple of str
        The cut hinges (one per loop).
    iterations : int
        Newton iterations on the positions.
    residual_given, residual : float
        Largest dimensionless loop-closure residual (rad; m divided by the length scale) before
        and after.
    rate_residual_given, rate_residual : float
        The same for the velocity-level residual (rad/s; m/s divided by the length scale).
    rank, dof : int
        Rank of the loop Jacobian at the assembled configuration, and the degrees of freedom
        left: the coordinates that are not driven minus the rank of the loop Jacobian over them.
    redundant : tuple of str
        Dependent loop constraints at the assembled configuration (as
        :attr:`~.kinematics.Mobility.redundant_constraints`).
    singular_values : ndarray
        Of the dimensionless loop Jacobian, descending.
    length_scale : float
        m.
    tolerance : float
        Corrections smaller than this (dimensionless) are not listed.
    warnings : list of str
        A (nearly) singular assembled configuration: a change point of the loops, or the driven
        coordinates at a dead centre.
    given_rates : tuple of str
        The rates the model (or ``given``) set on purpose; see :attr:`inconsistent`.
    cut_coordinates : tuple
        ``(label, prescribed, at the start, assembled)`` for each coordinate of a cut hinge
        whose initial coordinates are prescribed (not estimates): the value given, the value
        its markers' poses give at the tree's coordinates as given (or as drawn), and at the
        assembled ones.
    cut_rates : tuple
        ``(label, prescribed, implied, assembled)`` for each coordinate of a cut hinge whose
        initial rates are prescribed (not estimates): the rate it was given; the rate the
        tree's prescribed and driven rates make it, the loops closed by the other rates (NaN
        when those cannot close them); and the rate the assembled rates make it (the
        prescribed one to round-off when the loops allow it; else the loops' rate, the start
        check then showing the difference, or a refusal when it is beyond 1e-8 of the
        largest rate).
    """

    labels: tuple
    q_given: np.ndarray
    q: np.ndarray
    qd_given: np.ndarray
    qd: np.ndarray
    driven: tuple
    loops: tuple
    iterations: int
    residual_given: float
    residual: float
    rate_residual_given: float
    rate_residual: float
    rank: int
    dof: int
    redundant: tuple
    singular_values: np.ndarray
    length_scale: float
    tolerance: float = 1e-10
    warnings: list = field(default_factory=list)
    given_rates: tuple = ()
    cut_coordinates: tuple = ()
    cut_rates: tuple = ()

    def _scaled(self, label):
        return self.length_scale if _unit(label) == "m" else 1.0

    @property
    def corrections(self) -> dict:
        """``{label: (given, assembled)}`` of the coordinates that changed."""
        return {lab: (float(a), float(b)) for lab, a, b in zip(self.labels, self.q_given, self.q)
                if abs(b - a) > self.tolerance * self._scaled(lab)}

    @property
    def rate_corrections(self) -> dict:
        """``{label: (given, assembled)}`` of the rates that changed."""
        scale = max(1.0, float(np.max(np.abs(self.qd_given / np.array(
            [self._scaled(lab) for lab in self.labels]))))) if self.labels else 1.0
        return {lab: (float(a), float(b)) for lab, a, b in zip(self.labels, self.qd_given,
                                                                self.qd)
                if abs(b - a) > self.tolerance * scale * self._scaled(lab)}

    def corrections_text(self, limit: int = 3) -> str:
        """The corrected coordinates and rates in a line (the first ``limit`` of each, then how
        many more): ``'CrankPivot.rz 1.5708 rad (90 deg) -> 0 rad (0 deg)'``."""
        parts = []
        for corr, rate in ((self.corrections, False), (self.rate_corrections, True)):
            items = list(corr.items())
            parts += ["{} {} -> {}".format(lab, *_fmt_pair(lab, a, b, rate))
                      for lab, (a, b) in items[:limit]]
            if len(items) > limit:
                parts.append(f"{len(items) - limit} more {'rates' if rate else 'coordinates'}")
        return "; ".join(parts)

    @property
    def changed(self) -> bool:
        """True when any coordinate or rate was corrected."""
        return bool(self.corrections or self.rate_corrections)

    @property
    def inconsistent(self) -> bool:
        """True when the input was inconsistent: a coordinate (given or as drawn) or a rate the
        user gave (``given_rates``, the driven ones included) had to be corrected. Rates left
        unspecified (zero) and filled in by the assembly do not count."""
        given = set(self.given_rates) | set(self.driven)
        return bool(self.corrections) or any(lab in given for lab in self.rate_corrections)

    def __str__(self) -> str:
        lines = []
        if not self.loops:
            return "assembly: no closed loops, nothing to do"
        loops = ", ".join(f"'{c}'" for c in self.loops)
        lines.append(f"assembly of the loop{'s' if len(self.loops) > 1 else ''} closed by {loops}: "
                     f"closure residual {self.residual_given:.3g} -> {self.residual:.3g} in "
                     f"{self.iterations} Newton iteration{'s' if self.iterations != 1 else ''}; "
                     f"rate residual {self.rate_residual_given:.3g} -> {self.rate_residual:.3g}")
        if self.driven:
            lines.append("  held fixed (driven): " + ", ".join(self.driven))
        corr = self.corrections
        if corr:
            lines.append("  coordinates corrected:")
            w = max(len(k) for k in corr)
            for lab, (a, b) in corr.items():
                ta, tb = _fmt_pair(lab, a, b)
                lines.append(f"    {lab:<{w}}  {ta} -> {tb}  (change {_fmt(lab, b - a)})")
        else:
            lines.append("  coordinates: consistent as given")
        corr = self.rate_corrections
        if corr:
            lines.append("  rates corrected:")
            w = max(len(k) for k in corr)
            for lab, (a, b) in corr.items():
                ta, tb = _fmt_pair(lab, a, b, True)
                lines.append(f"    {lab:<{w}}  {ta} -> {tb}  (change {_fmt(lab, b - a, True)})")
        else:
            lines.append("  rates: consistent as given")
        if self.redundant:
            lines.append(f"  {len(self.redundant)} redundant constraint"
                         f"{'s' if len(self.redundant) > 1 else ''}: " + ", ".join(self.redundant))
        lines += [f"  warning: {w}" for w in self.warnings]
        return "\n".join(lines)


# --------------------------------------------------------------------------------------------------
# assemble
# --------------------------------------------------------------------------------------------------

def _flat(model, topology, v, what):
    if isinstance(v, Mapping):
        parts = []
        for name in topology.tree_hinges:
            k = HINGE_TYPES[model.hinge(name).type].dof
            parts.append(np.asarray(v[name], dtype=float).reshape(-1) if name in v
                         else np.full(k, np.nan))
        v = np.concatenate(parts) if parts else np.zeros(0)
    v = np.array(v, dtype=float).reshape(-1)
    if v.size != topology.tree_coordinates:
        raise ValueError(f"{what}: expected {topology.tree_coordinates} tree coordinates, "
                         f"got {v.size}")
    return v


def _driven(model, topology, labels, driven, t):
    """{label: (value or None, rate or None)} of the coordinates held fixed."""
    if driven is None:
        from ..model.timefunction import parse
        out = {}
        for name in topology.tree_hinges:
            for d in model.hinge(name).drivers:
                f = parse(d.expression, f"Hinge '{name}'", "Driver")
                out[f"{name}.{d.coordinate}"] = (float(f(t)), float(f.derivative(1)(t)))
        return out
    if isinstance(driven, Mapping):
        out = {}
        for lab, v in driven.items():
            if np.ndim(v) == 0:
                out[lab] = (None if v is None else float(v), None)
            else:
                a, b = v
                out[lab] = (None if a is None else float(a), None if b is None else float(b))
    else:
        out = {lab: (None, None) for lab in driven}
    unknown = [lab for lab in out if lab not in labels]
    if unknown:
        raise ValueError(f"not tree coordinates: {', '.join(unknown)} (these are: "
                         f"{', '.join(labels)})")
    return out


def _loop_problem(model, topology, cut, gap_rows):
    loop = next(lp for lp in topology.loops if lp.cut_hinge == cut)
    hinges = ", ".join(list(loop.hinges) + [cut])
    bodies = ", ".join(b for b in loop.bodies if not model.is_ground(b))
    gaps = "; ".join(f"{row.split(': ', 1)[1]} {val:.4g} {'m' if 'translation' in row else 'rad'}"
                     for row, val in gap_rows)
    return Problem(
        f"Hinge '{cut}'", "Loop",
        f"the loop closed by the cut hinge '{cut}' (hinges {hinges}; bodies {bodies}) cannot be "
        f"assembled: the nearest configuration leaves {gaps}. Check the lengths (marker positions) "
        "of its bodies, the hinge axes, the initial coordinates and the drivers")


def _prescribed(h, what):
    """True when a hinge's ``what`` (``initial_rates``, ``initial_coordinates``) is given and
    not marked an estimate."""
    return getattr(h, what) is not None and not getattr(h, what + "_estimate")


class CutRows(NamedTuple):
    """The cut hinges' prescribed values as equations on the tree's coordinates
    (:func:`_cut_rows`): ``G (k, n)``, ``given (k,)``, ``fitted (k,)``, ``labels`` (k
    coordinate labels) and ``translation (k,)`` (bool)."""
    G: np.ndarray
    given: np.ndarray
    fitted: np.ndarray
    labels: tuple
    translation: np.ndarray


def _cut_rows(model, topology, q, what, poses=None) -> CutRows:
    """The cut hinges whose ``what`` (``initial_rates`` or ``initial_coordinates``) is
    prescribed, as equations on the tree's coordinates ``q`` (:class:`CutRows`), one row per
    coordinate of each such hinge.

    ``fitted``: the hinge's coordinates from its markers' poses at ``q`` (angles nearest to its
    initial coordinates, when given). A row of G times the tree's rates is the rate of that
    coordinate: the hinge's relative twist about its input marker's origin, in output-marker
    axes, through its motion subspace at ``fitted`` (Bryant-angle rates for the rotations, as
    ``initial_rates``): the Jacobian of ``fitted`` too.
    """
    hinges = [model.hinge(c) for c in topology.cut_hinges]
    hinges = [h for h in hinges if what and _prescribed(h, what)]
    if not hinges:
        return CutRows(np.zeros((0, q.size)), np.zeros(0), np.zeros(0), (),
                       np.zeros(0, dtype=bool))
    poses = forward_kinematics(model, topology, q) if poses is None else poses
    rows, given, fitted, labels = [], [], [], []
    for h in hinges:
        mo, mi = marker_pose(model, h.output, poses), marker_pose(model, h.input, poses)
        qc, _ = coordinates_from_pose(h.type, mo.R.T @ mi.R, mo.R.T @ (mi.p - mo.p),
                                      reference=h.initial_coordinates)
        rel = relative_twist_jacobian(model, topology, h, q, poses, mi.p)
        local = np.vstack([mo.R.T @ rel[:3], mo.R.T @ rel[3:]])
        rows.append(np.linalg.pinv(local_motion_subspace(h.type, qc)) @ local)
        given.append(h.vector(what))
        fitted.append(qc)
        labels += [f"{h.name}.{c}" for c in HINGE_TYPES[h.type].coordinates]
    translation = np.array([COORDINATE_KIND[lab.rsplit(".", 1)[1]] == "translation"
                            for lab in labels], dtype=bool)
    return CutRows(np.vstack(rows), np.concatenate(given), np.concatenate(fitted),
                   tuple(labels), translation)


def _scalings(model, topology, labels, rows):
    from .kinematics import length_scale
    L = length_scale(model)
    cs = np.array([L if COORDINATE_KIND[lab.rsplit(".", 1)[1]] == "translation" else 1.0
                   for lab in labels])
    rs = np.array([1.0 / L if ": translation" in row else 1.0 for row in rows])
    return L, cs, rs


def assemble(model, topology=None, q0=None, u0=None, driven=None, *, given=None,
             t: float = 0.0, tol: float = 1e-12, max_iterations: int = 50):
    """Consistent initial coordinates and rates of a mechanism with closed loops.

    Parameters
    ----------
    model : MultibodySystem
    topology : Topology, optional
        ``analyse(model)`` when not given.
    q0 : array_like (n,) or mapping {hinge: coordinates}, optional
        The tree coordinates as given (m, rad; Bryant angles, :mod:`.kinematics` layout).
        Default: the hinges' initial coordinates, else as drawn
        (:func:`~.kinematics.initial_coordinates`).
    u0 : array_like (n,) or mapping, optional
        Their rates (m/s, rad/s). Default: the hinges' initial rates (zero if not given).
    driven : None, iterable of str, or mapping, optional
        The coordinates held fixed, by label (``'MainBearing.rz'``). None: the model's drivers,
        with their time functions' values and rates at ``t``. An iterable of labels: held at
        their values in ``q0`` and ``u0``. A mapping ``{label: value}`` or ``{label: (value,
        rate)}``: held at those (None: as in ``q0``/``u0``).
    given : iterable of str, optional
        Coordinates (and rates) the user set on purpose: the others are corrected first, these
        only when correcting the others cannot close the loops. None: those of the hinges whose
        ``initial_coordinates`` (for positions) or ``initial_rates`` (for rates) are given in
        the model as prescribed (not estimates). ``()``: all are corrected alike (plain minimum
        norm).
    t : float
        Time of the drivers' values (s).
    tol : float
        Dimensionless tolerance on the loop-closure residual (rad; m over the length scale).
    max_iterations : int

    Returns
    -------
    q, qd : ndarray (n,)
        The assembled coordinates and rates, :func:`~.kinematics.coordinate_labels` order.
    report : AssemblyReport
        What was corrected (``str(report)`` is readable).

    Raises
    ------
    ModelError
        A loop cannot be closed: one problem per such loop, element ``Hinge '<cut hinge>'``,
        field ``Loop``, naming its hinges and bodies and the gap left.
    ValueError
        Wrong sizes or unknown labels.
    """
    topology = analyse(model) if topology is None else topology
    labels = coordinate_labels(model, topology)
    q = initial_coordinates(model, topology) if q0 is None else _flat(model, topology, q0, "q0")
    qd = (initial_rates(model, topology) if u0 is None
          else _flat(model, topology, u0, "u0"))
    fixed = _driven(model, topology, labels, driven, t)
    index = {lab: i for i, lab in enumerate(labels)}
    for lab, (v, r) in fixed.items():
        if v is not None:
            q[index[lab]] = v
        if r is not None:
            qd[index[lab]] = r
    if np.any(~np.isfinite(q)) or np.any(~np.isfinite(qd)):
        raise ValueError("q0 and u0 must give every tree coordinate")
    q_given, qd_given = q.copy(), qd.copy()
    free = np.array([lab not in fixed for lab in labels], dtype=bool)
    driven_labels = tuple(lab for lab in labels if lab in fixed)
    hinges = [model.hinge(lab.rsplit(".", 1)[0]) for lab in labels]
    estimate_q = np.array([h.initial_coordinates is not None and h.initial_coordinates_estimate
                           for h in hinges], dtype=bool)
    if given is None:
        given_q = np.array([h.initial_coordinates is not None
                            and not h.initial_coordinates_estimate for h in hinges], dtype=bool)
        given_u = np.array([h.initial_rates is not None and not h.initial_rates_estimate
                            for h in hinges], dtype=bool)
    else:
        given = set(given)
        given_q = given_u = np.array([lab in given for lab in labels], dtype=bool)

    from .kinematics import length_scale
    if not topology.cut_hinges:
        rep = AssemblyReport(labels, q_given, q, qd_given, qd, driven_labels, (), 0, 0.0, 0.0,
                             0.0, 0.0, 0, int(np.sum(free)), (), np.zeros(0),
                             length_scale(model))
        return q, qd, rep

    _, rows = loop_jacobian(model, topology, q)
    L, cs, rs = _scalings(model, topology, labels, rows)

    # positions: first correct the estimates, then what was not given (as drawn), then
    # everything that is not driven; each stage a larger set, tried while the loops stay open
    stages = []
    for movable in (free & estimate_q, free & ~given_q, free):
        if np.any(movable) and not any(np.array_equal(movable, st) for st in stages):
            stages.append(movable)
    stages = stages or [free]
    for movable in stages:
        qa, phi, J, err, err_given, iterations, cut = _close_positions(
            model, topology, q, movable, rs, cs, tol, max_iterations, L)
        if err <= tol:
            break
    if err > tol:
        problems, r0 = [], 0
        if cut.labels:
            # the loops alone: can they close? then the cut hinges' coordinates are the cause
            q_loop, phi, _, _, _, _, _ = _close_positions(
                model, topology, q, free, rs, cs, tol, max_iterations, L, cut_rows=False)
            cut = cut._replace(
                fitted=_cut_rows(model, topology, q_loop, "initial_coordinates").fitted)
        for lp in topology.loops:
            k = HINGE_TYPES[model.hinge(lp.cut_hinge).type].constraints
            gap = [(rows[j], float(phi[j])) for j in range(r0, r0 + k)
                   if abs(rs[j] * phi[j]) > tol]
            if gap:
                problems.append(_loop_problem(model, topology, lp.cut_hinge, gap))
            r0 += k
        missed = {}
        for lab, a, b, tr in zip(cut.labels, cut.given, cut.fitted, cut.translation):
            if abs(b - a) > tol * (L if tr else 1.0):
                missed.setdefault(lab.rsplit(".", 1)[0], []).append((lab, a, b))
        for name, items in missed.items():
            values = "; ".join("{} prescribed as {}, closed without it {}".format(
                lab.rsplit(".", 1)[1], *_fmt_pair(lab, a, b)) for lab, a, b in items)
            problems.append(Problem(
                f"Hinge '{name}'", "InitialCoordinates",
                f"the coordinates prescribed on this hinge, which closes a loop, are out of the "
                f"loop's reach with its driven and prescribed coordinates: {values} (mark them "
                "Estimate=\"true\" or drop them)"))
        raise ModelError(problems)
    q = qa
    cut_coordinates = ()
    if cut.labels:
        at_start = _cut_rows(model, topology, q_given, "initial_coordinates").fitted
        cut_coordinates = tuple((lab, float(a), float(b), float(c)) for lab, a, b, c in
                                zip(cut.labels, cut.given, at_start, cut.fitted))

    # rates: least squares, first on what was not given; the loops' rows (J qd = 0) and the
    # cut hinges' prescribed rates (G qd = g) together
    G, g, _, g_labels, g_trans = _cut_rows(model, topology, q, "initial_rates")
    gs = np.where(g_trans, 1.0 / L, 1.0)

    def rate_residual(v):
        return np.concatenate([rs * (J @ v), gs * (G @ v - g)])

    verr_given = float(np.max(np.abs(rate_residual(qd)), initial=0.0))
    scale = max(1.0, float(np.max(np.abs(qd / cs), initial=0.0)),
                float(np.max(np.abs(gs * g), initial=0.0)))
    stages = [free & ~given_u, free] if np.any(free & ~given_u) and np.any(free & given_u) \
        else [free]
    def closed(v, movable):
        """``v`` with the loops' rows (J v = 0) closed by the minimum-norm change of the
        ``movable`` rates, and the largest (scaled) row left."""
        v = v.copy()
        if np.any(movable):
            A = rs[:, None] * J[:, movable] * cs[None, movable]
            v[movable] += cs[movable] * np.linalg.lstsq(A, -rs * (J @ v), rcond=None)[0]
        return v, float(np.max(np.abs(rs * (J @ v)), initial=0.0))

    qd_try, verr = qd, verr_given
    if verr_given > 1e-10 * scale:          # consistent as given: kept exactly, not re-solved
        for movable in stages:
            A = np.vstack([rs[:, None] * J[:, movable],
                           gs[:, None] * G[:, movable]]) * cs[None, movable]
            dx = np.linalg.lstsq(A, -rate_residual(qd), rcond=None)[0]
            qd_try = qd.copy()
            qd_try[movable] += cs[movable] * dx
            verr = float(np.max(np.abs(rate_residual(qd_try)), initial=0.0))
            if verr <= 1e-10 * scale:
                break
        if g_labels:
            # the loops' rows hold to round-off: a cut hinge's prescribed rate, solved for with
            # them in the least squares above, gives way where it contradicts them (by less
            # than the refusal's tolerance below; the start check shows that it did), the
            # rates not given moved first
            if np.max(np.abs(rs * (J @ qd_try)), initial=0.0) > 1e-13 * scale:
                for movable in stages:
                    v, gap = closed(qd_try, movable)
                    if gap <= 1e-12 * scale:
                        break
                qd_try = v
    qd = qd_try
    verr_after = float(np.max(np.abs(rate_residual(qd)), initial=0.0))

    def closed_by(movable):
        """The given rates with the loops closed (J qd = 0) by the ``movable`` ones; None if
        they cannot close them."""
        v, gap = closed(qd_given, movable)
        return v if gap <= 1e-10 * scale else None

    cut_rates = ()
    if g_labels:
        # what the tree's prescribed and driven rates make the cut hinges' rates (NaN: they
        # do not close the loops by themselves, so they make them nothing)
        implied = closed_by(free & ~given_u)
        implied = np.full(len(g_labels), np.nan) if implied is None else G @ implied
        cut_rates = tuple((lab, float(a), float(b), float(c)) for lab, a, b, c in
                          zip(g_labels, g, implied, G @ qd))
    # the rates the drivers alone allow (every rate not driven free): for the refusals below
    qd_loop = closed_by(free) if verr > 1e-8 * scale else None
    if verr > 1e-8 * scale:
        problems, r0 = [], 0
        for lp in topology.loops:       # the loops that the drivers leave open by themselves
            k = HINGE_TYPES[model.hinge(lp.cut_hinge).type].constraints
            res = rs[r0:r0 + k] * (J[r0:r0 + k] @ (qd if qd_loop is None else qd_loop))
            if np.max(np.abs(res), initial=0.0) > 1e-8 * scale:
                problems.append(Problem(
                    f"Hinge '{lp.cut_hinge}'", "Loop",
                    f"the rates of the loop closed by the cut hinge '{lp.cut_hinge}' (hinges "
                    f"{', '.join(list(lp.hinges) + [lp.cut_hinge])}) cannot be made consistent "
                    f"with the driven rates ({', '.join(driven_labels) or 'none'}): the drivers "
                    "contradict each other or the loop"))
            r0 += k
        missed = {}
        for (lab, given_rate, _, got), sc in zip(cut_rates, gs):
            if abs(sc * (got - given_rate)) > 1e-8 * scale:
                missed.setdefault(lab.rsplit(".", 1)[0], []).append((lab, given_rate, got))
        by_loop = dict(zip(g_labels, G @ (qd if qd_loop is None else qd_loop)))
        for name, items in missed.items():
            # (ten digits: the loop's value typed back as shown is kept)
            values = "; ".join("{} prescribed as {}, the loop gives {}".format(
                lab.rsplit(".", 1)[1], *_fmt_pair(lab, a, by_loop[lab], True, least=10))
                for lab, a, _ in items)
            problems.append(Problem(
                f"Hinge '{name}'", "InitialRates",
                f"the rates prescribed on this hinge, which closes a loop, cannot be met with "
                f"the loop's driven rates ({', '.join(driven_labels) or 'none'}): {values} "
                "(mark them Estimate=\"true\" or drop them)"))
        if not problems:                # (neither alone: together)
            problems = [Problem(f"Hinge '{lp.cut_hinge}'", "Loop",
                                f"the rates of the loop closed by the cut hinge "
                                f"'{lp.cut_hinge}' cannot be made consistent with the driven "
                                f"rates ({', '.join(driven_labels) or 'none'}) and the cut "
                                "hinges' prescribed rates") for lp in topology.loops]
        raise ModelError(problems)

    # rank, redundancy, conditioning at the assembled configuration
    Js = rs[:, None] * J * cs[None, :]
    sv = np.linalg.svd(Js, compute_uv=False) if Js.size else np.zeros(0)
    tol_rank = 1e-8 * max(1.0, float(sv[0]) if sv.size else 0.0)
    rank = int(np.sum(sv > tol_rank))
    redundant = ()
    if J.shape[0] > rank:
        if rank == 0:
            redundant = tuple(rows)
        else:
            _, _, perm = scipy.linalg.qr(Js.T, mode="economic", pivoting=True)
            redundant = tuple(rows[i] for i in sorted(perm[rank:]))
    Af = Js[:, free]
    svf = np.linalg.svd(Af, compute_uv=False) if Af.size else np.zeros(0)
    rank_free = int(np.sum(svf > tol_rank))
    warnings = []
    if rank and sv[rank - 1] < SINGULAR_RATIO * sv[0]:
        warnings.append(f"the loop Jacobian is nearly singular at the assembled configuration "
                        f"(singular value ratio {sv[rank - 1] / sv[0]:.3g}): a change point")
    if rank_free < rank:
        warnings.append("the driven coordinates are at a dead centre: with them held, the loop "
                        f"Jacobian has rank {rank_free} instead of {rank}")
    elif rank_free and svf[rank_free - 1] < SINGULAR_RATIO * svf[0] and driven_labels:
        warnings.append("the driven coordinates are near a dead centre (singular value ratio "
                        f"{svf[rank_free - 1] / svf[0]:.3g} with them held)")
    rep = AssemblyReport(labels, q_given, q, qd_given, qd, driven_labels,
                         tuple(topology.cut_hinges), iterations, err_given, err, verr_given,
                         verr_after, rank, int(np.sum(free)) - rank_free, redundant, sv, L,
                         warnings=warnings,
                         given_rates=tuple(lab for lab, gv in zip(labels, given_u) if gv),
                         cut_coordinates=cut_coordinates, cut_rates=cut_rates)
    return q, qd, rep


def _close_positions(model, topology, q, movable, rs, cs, tol, max_iterations, L,
                     cut_rows=True):
    """Gauss-Newton with minimum-norm steps on the ``movable`` coordinates: the loops closed
    and the cut hinges' prescribed coordinates met (:func:`_cut_rows`; not with ``cut_rows``
    False).

    Returns (q, loop residual, loop Jacobian, dimensionless error, error at start, iterations,
    the cut hinges' prescribed coordinates' rows as :func:`_cut_rows` at q).
    """
    def evaluate(qq):
        poses = forward_kinematics(model, topology, qq)
        cut = _cut_rows(model, topology, qq, "initial_coordinates" if cut_rows else "", poses)
        gs = np.where(cut.translation, 1.0 / L, 1.0)
        return (loop_residual(model, topology, poses), poses, cut,
                gs * (cut.fitted - cut.given))

    def error(phi, res):
        return float(np.max(np.abs(np.concatenate([rs * phi, res])), initial=0.0))

    q = q.copy()
    phi, poses, cut, res = evaluate(q)
    J, _ = loop_jacobian(model, topology, q, poses)
    err = err_given = error(phi, res)
    iterations = 0
    slow = 0
    while err > tol and iterations < max_iterations:
        iterations += 1
        gs = np.where(cut.translation, 1.0 / L, 1.0)
        A = np.vstack([rs[:, None] * J[:, movable],
                       gs[:, None] * cut.G[:, movable]]) * cs[None, movable]
        dx = np.linalg.lstsq(A, -np.concatenate([rs * phi, res]), rcond=None)[0]
        dq = np.zeros_like(q)
        dq[movable] = cs[movable] * dx
        merit = float(np.linalg.norm(np.concatenate([rs * phi, res])))
        step, accepted = 1.0, None
        while step >= 1e-4:
            q_try = q + step * dq
            trial = evaluate(q_try)
            m_try = float(np.linalg.norm(np.concatenate([rs * trial[0], trial[3]])))
            if m_try < merit:
                accepted = (q_try, trial, m_try)
                break
            step *= 0.5
        if accepted is None:
            break                                  # no descent: a least-squares point
        q, (phi, poses, cut, res), m_new = accepted
        err = error(phi, res)
        J, _ = loop_jacobian(model, topology, q, poses)
        slow = slow + 1 if m_new > 0.9 * merit else 0
        if slow >= 5:
            break                                  # creeping towards a gap that stays
    return q, phi, J, err, err_given, iterations, cut
