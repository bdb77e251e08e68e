"""Control of the loop-closure drift by coordinate partitioning, and the singularity monitor.

The constrained formulation (:mod:`.constrained`) integrates all tree coordinates with the loop
constraints imposed at the acceleration level only; positions and velocities then drift off the
constraint manifold by the integrator's error. :class:`DriftControl` puts the state back after
every step (or output interval), in the manner of the coordinate partitioning of Wehage and Haug
(seed 003):

Partition
    The velocity coordinates that are not driven are split into ``r`` dependent and ``f``
    independent ones, ``r`` the rank of the loop Jacobian ``J`` (:func:`.formulation.loop_constraints`,
    made dimensionless with the model's length scale) over those columns. The dependent ones are
    the first ``r`` pivots of a QR decomposition with column pivoting of ``J``: the best
    conditioned choice at that instant.
Positions
    Newton iterations on the loop-closure residual ``Phi(q) = 0`` changing the dependent
    coordinates only (least squares ``J_d dq_d = -Phi``, so redundant rows are harmless); the
    independent and the driven coordinates keep the integrator's (the drivers') values. A
    rotation held as a quaternion is changed by the small rotation ``dq_d`` (its velocity
    coordinates are the relative angular velocity): ``q <- exp(dphi) q``.
Velocities
    The dependent rates from ``J_d u_d = -J_i u_i`` (least squares), the independent and driven
    rates kept.
Fresh choice
    A choice of independent coordinates that suits one configuration becomes ill-conditioned
    further on (a four-bar's rocker angle cannot describe its motion at the rocker's extreme
    positions). Whenever the smallest singular value of ``J_d`` falls below
    :data:`PARTITION_RATIO` times the ``r``-th singular value of the whole ``J`` over the free
    columns, a new partition is chosen by QR with column pivoting; the switches are recorded
    (:attr:`DriftControl.repartitions`).
Singular configurations
    The rank of ``J`` is fixed at the start. When its ``r``-th singular value falls below
    :data:`~.assembly.SINGULAR_RATIO` times its largest, or the sampled ratio has a V-shaped
    minimum that reaches zero between two projections (a rank drop passed within one step: the
    singular value goes through zero linearly), the mechanism passes a change point (the
    loop Jacobian loses rank, e.g. a parallelogram linkage flat); when only the Jacobian over the
    columns that are not driven does, the drivers are at a dead centre (a toggle position: the
    driven coordinate cannot move the loop). Each passage is recorded once, at the time of the
    smallest ratio (:attr:`DriftControl.singularities`).

The driven coordinates are set to their time functions' values and rates, and quaternions are
normalised, at every projection.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from ..shared.loops import _cross, loop_constraints
from ...elements.hinges import HINGE_TYPES, QUATERNION_TYPES
from ..shared.singularity import Singularity, SingularityMonitor

__all__ = ["DriftControl", "DriftError", "PARTITION_RATIO", "Singularity", "SingularityMonitor"]

#: A partition is chosen afresh when ``sigma_min(J_d)`` falls below this fraction of the ``r``-th
#: singular value of the loop Jacobian over all free columns.
PARTITION_RATIO = 0.1

#: Largest change of a coordinate in one Newton iteration (rad; m over the length scale).
MAX_NEWTON_STEP = 0.1



def _quat_mul(p, q):
    pw, pv = p[0], p[1:]
    qw, qv = q[0], q[1:]
    return np.concatenate([[pw * qw - pv @ qv], pw * qv + qw * pv + _cross(pv, qv)])


def _rotation_quaternion(phi):
    a = float(np.linalg.norm(phi))
    if a < 1e-300:
        return np.array([1.0, 0.0, 0.0, 0.0])
    return np.concatenate([[np.cos(0.5 * a)], np.sin(0.5 * a) * phi / a])


class DriftError(RuntimeError):
    """The loops could not be closed again after a step (the residual stays above
    :data:`LOST`)."""


#: A dimensionless loop-closure residual that Newton's iterations leave above this means the
#: mechanism has left its constraints (a step too large, or a branch lost at a singular point).
LOST = 1e-6


class DriftControl:
    """Projection of a state onto the loop constraints by coordinate partitioning.

    Parameters
    ----------
    system : System
    tol : float
        Dimensionless tolerance of the loop-closure residual (rad; m over the length scale).
    max_iterations : int
        Newton iterations per projection.
    independent : sequence of str, optional
        A first choice of independent coordinates (velocity-coordinate labels such as
        ``'Cylinder.z'``, see :attr:`labels`), e.g. the ones a user would pick; kept while it is
        well-conditioned. None: the best choice at the first projection (QR with column
        pivoting).

    Attributes
    ----------
    labels : list of str
        The velocity coordinates, ``'<hinge>.<coordinate>'`` (``'<hinge>.wx'`` ... for the
        relative angular velocity of spherical, free and bushing hinges).
    dependent : ndarray of int
        Velocity-coordinate indices of the current dependent coordinates.
    repartitions : list of (float, tuple of str)
        Time and independent coordinates of every choice of the partition (the first at the
        first projection).
    singularities : list of Singularity
    max_correction : float
        Largest dimensionless position residual found before a projection (the drift of one
        step or interval).
    max_residual, max_rate_residual : float
        Largest dimensionless residuals left after a projection (positions: rad, m over the
        length scale; velocities: rad/s, m/s over the length scale).
    iterations : int
        Newton iterations done in all.
    min_ratio, min_ratio_free : float
        Smallest singular value ratio met (the loop Jacobian's, and over the columns that are
        not driven): how close the run came to a singular configuration.
    """

    def __init__(self, system, tol: float = 1e-12, max_iterations: int = 12, independent=None):
        self.system = system
        self._first = None if independent is None else tuple(independent)
        self.tol = tol
        self.max_iterations = max_iterations
        T = system.tree
        self.labels = []
        self._blocks = []        # ('scalar', q index, u index) or ('quat', q offset, u offset)
        for i, hname in enumerate(system.hinges):
            typ = system.model.hinge(hname).type
            qo, uo = int(T.qo[i]), int(T.uo[i])
            if typ in QUATERNION_TYPES:
                o = 0 if typ == "spherical" else 3
                for j in range(o):
                    self._blocks.append(("scalar", qo + j, uo + j))
                    self.labels.append(f"{hname}.{'xyz'[j]}")
                self._blocks.append(("quat", qo + o, uo + o))
                self.labels += [f"{hname}.w{a}" for a in "xyz"]
            else:
                for j, c in enumerate(HINGE_TYPES[typ].coordinates):
                    self._blocks.append(("scalar", qo + j, uo + j))
                    self.labels.append(f"{hname}.{c}")
        self._driven_q, self._driven_u = [], []
        where = {h: i for i, h in enumerate(system.hinges)}
        for hname, coord, _ in system.drivers:
            i = where[hname]
            j = HINGE_TYPES[system.model.hinge(hname).type].coordinates.index(coord)
            self._driven_q.append(int(T.qo[i] + j))
            self._driven_u.append(int(T.uo[i] + j))
        free = np.ones(system.nu_tot, dtype=bool)
        free[self._driven_u] = False
        self.free = np.flatnonzero(free)
        self.active = bool(system.topology.cut_hinges)
        self.dependent = np.zeros(0, dtype=np.int64)
        self.rank = None
        self.rank_free = None
        self.repartitions = []
        self.monitor = SingularityMonitor()
        self.max_correction = 0.0
        self.max_residual = 0.0
        self.max_rate_residual = 0.0
        self.iterations = 0
        self.projections = 0
        self.min_ratio = np.inf
        self.min_ratio_free = np.inf

    # -- pieces ---------------------------------------------------------------------------------
    def _apply_drivers(self, t, y):
        if not self._driven_q:
            return
        drv = self.system.driver_values(t)
        nq = self.system.nq_tot
        for k, (jq, ju) in enumerate(zip(self._driven_q, self._driven_u)):
            y[jq] = drv[k, 0]
            y[nq + ju] = drv[k, 1]

    def _normalise(self, y):
        for kind, qo, _ in self._blocks:
            if kind == "quat":
                y[qo:qo + 4] /= np.linalg.norm(y[qo:qo + 4])

    def _move(self, y, du):
        """Change the positions by the coordinate increments ``du`` (velocity layout)."""
        for kind, qo, uo in self._blocks:
            if kind == "scalar":
                y[qo] += du[uo]
            elif np.any(du[uo:uo + 3]):
                y[qo:qo + 4] = _quat_mul(_rotation_quaternion(du[uo:uo + 3]), y[qo:qo + 4])

    def _choose(self, Js, t):
        """A fresh partition: the first ``r`` pivots of QR with column pivoting."""
        _, _, piv = scipy.linalg.qr(Js[:, self.free], mode="economic", pivoting=True)
        dep = np.sort(self.free[piv[:self.rank_free]])
        if not np.array_equal(dep, self.dependent):
            self.dependent = dep
            indep = tuple(self.labels[j] for j in self.free if j not in set(dep.tolist()))
            self.repartitions.append((float(t), indep))

    def _monitor(self, t, sv, svf):
        ratios = {}
        if self.rank and sv[0] > 0:
            ratios["change point"] = float(sv[self.rank - 1] / sv[0])
            self.min_ratio = min(self.min_ratio, ratios["change point"])
        if self.rank_free and svf.size and svf[0] > 0:
            ratios["dead centre"] = float(svf[self.rank_free - 1] / svf[0])
            self.min_ratio_free = min(self.min_ratio_free, ratios["dead centre"])
        self.monitor.sample(t, ratios)

    @property
    def singularities(self):
        """The passages near singular configurations (:attr:`SingularityMonitor.singularities`)."""
        return self.monitor.singularities

    def finish(self):
        """Close a singularity passage still open at the end of a run."""
        self.monitor.finish()

    # -- projection -------------------------------------------------------------------------------
    def project(self, t: float, y) -> np.ndarray:
        """The state ``y`` put back onto the loop constraints (a new array).

        Drivers are applied and quaternions normalised also for trees (no loops).
        """
        y = np.array(y, dtype=float)
        self._apply_drivers(t, y)
        self._normalise(y)
        if not self.active:
            return y
        self.projections += 1
        nq = self.system.nq_tot
        lc = loop_constraints(self.system, t, y)
        cs = np.where(lc.translation_columns, lc.length_scale, 1.0)
        phi, Js = lc.scaled()
        sv = np.linalg.svd(Js, compute_uv=False)
        svf = np.linalg.svd(Js[:, self.free], compute_uv=False) if self.free.size else sv[:0]
        if self.rank is None:
            tol_rank = 1e-8 * max(float(sv[0]), 1e-300)
            self.rank = int(np.sum(sv > tol_rank))
            self.rank_free = int(np.sum(svf > tol_rank))
        if self._first is not None:
            unknown = [lab for lab in self._first if lab not in self.labels]
            if unknown:
                raise ValueError(f"not velocity coordinates: {', '.join(unknown)} "
                                 f"(these are: {', '.join(self.labels)})")
            chosen = {self.labels.index(lab) for lab in self._first}
            dep = np.array([j for j in self.free if j not in chosen], dtype=np.int64)
            if dep.size == self.rank_free:
                self.dependent = dep
                self.repartitions.append((float(t), tuple(self.labels[j] for j in self.free
                                                          if j in chosen)))
            self._first = None
        if self.rank_free:
            smin = (np.linalg.svd(Js[:, self.dependent], compute_uv=False)[-1]
                    if self.dependent.size == self.rank_free else 0.0)
            if smin < PARTITION_RATIO * svf[self.rank_free - 1]:
                self._choose(Js, t)
        dep = self.dependent
        err = float(np.max(np.abs(phi), initial=0.0))
        self.max_correction = max(self.max_correction, err)
        it = 0
        while err > self.tol and it < self.max_iterations and dep.size:
            it += 1
            dx = np.linalg.lstsq(Js[:, dep], -phi, rcond=1e-10)[0]
            big = float(np.max(np.abs(dx), initial=0.0))
            if big > MAX_NEWTON_STEP:             # near a singular configuration: stay near
                dx *= MAX_NEWTON_STEP / big
            du = np.zeros(self.system.nu_tot)
            du[dep] = cs[dep] * dx
            self._move(y, du)
            self._normalise(y)
            lc = loop_constraints(self.system, t, y)
            phi, Js = lc.scaled()
            err = float(np.max(np.abs(phi), initial=0.0))
        self.iterations += it
        if err > LOST:
            raise DriftError(f"the loops cannot be closed again at t = {t:g} s (residual {err:.3g} "
                             "after Newton's iterations); try a smaller step")
        self.max_residual = max(self.max_residual, err)
        if it:
            sv = np.linalg.svd(Js, compute_uv=False)
            svf = (np.linalg.svd(Js[:, self.free], compute_uv=False) if self.free.size
                   else sv[:0])
        self._monitor(t, sv, svf)
        # velocities: the dependent rates from the others
        u = y[nq:]
        us = u / cs
        if dep.size:
            others = np.ones(self.system.nu_tot, dtype=bool)
            others[dep] = False
            rhs = -(Js[:, others] @ us[others])
            us[dep] = np.linalg.lstsq(Js[:, dep], rhs, rcond=1e-10)[0]
            y[nq:] = us * cs
        self.max_rate_residual = max(self.max_rate_residual,
                                     float(np.max(np.abs(Js @ us), initial=0.0)))
        return y
