"""The mstmm method's system: the prepared system (:class:`..shared.system.PreparedSystem`: the
tree in flat arrays, the state layout, drivers and forces; its docstring holds the state
layout) with the kernels' work arrays and its evaluation at an instant: the state derivative,
the instants the result rows are made from, the power.

Limits (``LowerLimits``/``UpperLimits``) are stored in the model but not enforced by this solver.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from . import kernels as K
from ...model.mechanism import MultibodySystem
from ...analysis.topology import Topology
from ..shared.instant import Instant
from ..shared.system import PreparedSystem

Work = namedtuple("Work", "q u dd R pb pc hp w vh Sg cg RA Wext tau udot x Wh IA pA "
                          "U Dinv r0 ck nfree fidx FC TC paS kd kacc ytmp scratch loops")
#: instants at k times stacked (:meth:`System.instants`, ``kernels.instants_into``)
Stack = namedtuple("Stack", "q u udot tau R pb pc hp w vh x Wh Wext Wcut phi vres rank svr lam")
#: small scratch arrays of the kernels: ``Work.scratch``
Scratch = namedtuple("Scratch", "Rrel dloc Sloc bias t6a t6b t6c t66b t66c")
#: work arrays of the loop closure: ``Work.loops``
LoopWork = namedtuple("LoopWork", "Ncol pcut vres phi ccut act Acon bcon lam dud dx dWh pB paB "
                                  "rB Wcut loop_rank F Gch Mch pv perm zv wv svr ref_rank")


def make_work(n: int, nq: int, nu: int, m: int = 0, nc: int = 0) -> Work:
    """Work arrays of the kernels: n bodies, nq/nu coordinates, m loop constraints, nc cuts.

    The kernels get only the arrays they use (see ``kernels.evaluate_into``); the loop closure's
    arrays (``Work.loops``) and small scratch arrays (``Work.scratch``) have structs of their
    own. ``kernels.rk4_run`` (and ``euler_run``) leaves Wh as it was but for the hinges with a driven coordinate
    (the integrator needs only the drivers' loads, for their work): :meth:`System.instant`
    evaluates again.
    """
    z = np.zeros
    ny = nq + nu
    loops = LoopWork(z((m, 6)), z((nc, 3)), z(m), z(m), z((nc, 6)), z(2 * m, dtype=np.int64),
                     z((m, m)), z(m), z(m), z((m, nu)), z((m, n, 6)), z((m, n, 6)), z((n, 6)),
                     z((n, 6)), z((n, 6)), z((nc, 6)), z(1, dtype=np.int64), z((4, 3, 3)),
                     z((m, m)), z((m, m)), z(m), z(m, dtype=np.int64), z(m), z(m), z(1),
                     z(1, dtype=np.int64))
    return Work(z(nq), z(nu), z(nu), z((n, 3, 3)), z((n, 3)), z((n, 3)), z((n, 3)), z((n, 3)),
                z((n, 3)), z((n, 6, 6)), z((n, 6)), z((n, 3, 3)), z((n, 6)), z(nu), z(nu),
                z((n, 6)), z((n, 6)), z((n, 6, 6)), z((n, 6)),
                z((n, 6, 6)), z((n, 6, 6)), z((n, 6)), z((n, 6)), z(n, dtype=np.int64),
                z((n, 6), dtype=np.int64), z((n, 3)), z((n, 3)), z((n, 6)), z(ny), z(ny), z(ny),
                Scratch(z((3, 3)), z(3), z((6, 6)), z(6), z(6), z(6), z(6), z((6, 6)),
                        z((6, 6))), loops)


def _sample(f, ts) -> np.ndarray:
    """A time function at many times (constants at once, others by :meth:`TimeFunction.sample`)."""
    c = f.value_if_constant()
    if c is not None:
        return np.full(ts.size, c)
    return f.sample(ts)


class System(PreparedSystem):
    """A model assembled for the mstmm kernels: :class:`..shared.system.PreparedSystem` and the
    kernels' work arrays (:func:`make_work`).

    Parameters
    ----------
    model : MultibodySystem
        A valid model (see :meth:`MultibodySystem.check`).
    topology : Topology, optional
    """

    def __init__(self, model: MultibodySystem, topology: Topology | None = None):
        super().__init__(model, topology)
        self.work = make_work(len(self.bodies), self.nq_tot, self.nu_tot, self.tree.m_tot,
                              len(self.cuts))

    def _kinematics(self, y: np.ndarray):
        """The kernel's evaluation at (0, y) (:meth:`instant`: the numbers of a run's first
        row)."""
        return self.instant(0.0, y)

    # -- evaluation ---------------------------------------------------------------------------
    def derivative(self, t: float, y: np.ndarray) -> np.ndarray:
        """State derivative dy/dt at (t, y)."""
        return K.evaluate(np.ascontiguousarray(y, dtype=float), self.driver_values(t),
                          self.magnitude_values(t), self.tree, self.forces, self.work)

    def power(self, t: float, y: np.ndarray) -> np.ndarray:
        """Power of the drivers, of the applied forces, and dissipated by the dampers at (t, y),
        shape (3,), W (:func:`.kernels.power_flows`)."""
        self.derivative(t, y)
        return self.power_of(t, self.work.q, self.work.u, self.work.tau, self.work)

    def instants(self, times, states):
        """:meth:`instant` at many times (k,) and states (k, ny) at once (one compiled call):
        a :class:`~.recorder.Stacked` with the fields of :class:`Instant` stacked on a leading
        axis k, and ``vres`` (k, m) (the loops' velocity residuals), ``rank`` and ``svr`` (k,)
        (the loops' rank and conditioning monitor, see ``kernels.close_loops``)."""
        ts, Y, drv, mags = self._instants_input(times, states)
        B = self.row_stack(ts.size)
        K.instants_into(Y, drv, mags, self.tree, self.forces, self.work, np.zeros(Y.shape[1]), B)
        return self.stacked(B, ts)

    def row_instants(self, times, states):
        """:meth:`instants` as a fixed-step run evaluates its rows (``kernels.row_evaluations``:
        the fixed-step kernel, once per state; the same numbers): for the few rows of such a run
        that its steps do not evaluate (the first, a last one off the output grid), so that the
        run compiles nothing but the fixed-step kernel."""
        ts, Y, drv, mags = self._instants_input(times, states)
        B = self.row_stack(ts.size)
        K.row_evaluations(Y, drv, mags, self.tree, self.forces, self.work, B)
        return self.stacked(B, ts)

    def _instants_input(self, times, states):
        """The times (k,), states (k, ny), drivers (k, nd, 3) and magnitudes (k, nm) of
        :meth:`instants`."""
        ts = np.ascontiguousarray(times, dtype=float).reshape(-1)
        Y = np.ascontiguousarray(states, dtype=float).reshape(ts.size, -1)
        k = ts.size
        drv = np.zeros((k, max(len(self.drivers), 1), 3))
        for j, (f, f1, f2) in enumerate(self._drv_fns):
            for c, g in enumerate((f, f1, f2)):
                drv[:, j, c] = _sample(g, ts)
        mags = np.zeros((k, max(len(self.magnitudes), 1)))
        for j, f in enumerate(self.magnitudes):
            mags[:, j] = _sample(f, ts)
        return ts, Y, drv, mags

    def row_stack(self, k: int) -> Stack:
        """Arrays for what ``k`` result rows need of their evaluations (a :data:`Stack`, each
        work array with a leading axis k): :meth:`instants`, ``kernels.rk4_run``."""
        z, n, T = np.zeros, len(self.bodies), self.tree
        m, nc = T.m_tot, len(self.cuts)
        return Stack(z((k, self.nq_tot)), z((k, self.nu_tot)), z((k, self.nu_tot)),
                     z((k, self.nu_tot)), z((k, n, 3, 3)), z((k, n, 3)), z((k, n, 3)),
                     z((k, n, 3)), z((k, n, 3)), z((k, n, 3)), z((k, n, 6)), z((k, n, 6)),
                     z((k, n, 6)), z((k, nc, 6)), z((k, m)), z((k, m)), z(k, dtype=np.int64),
                     z(k), z((k, m)))

    def row_bytes(self) -> int:
        """The memory of one row of :meth:`row_stack` (bytes)."""
        return sum(a.nbytes for a in self.row_stack(1))

    def stacked(self, B: Stack, times, copy: bool = False):
        """The first ``len(times)`` rows of a :meth:`row_stack` as :meth:`instants` returns
        them (views of B's arrays, or copies)."""
        from ...results.recorder import Stacked
        ts = np.ascontiguousarray(times, dtype=float).reshape(-1)
        k = ts.size
        fields = {name: (a[:k].copy() if copy else a[:k]) for name, a in B._asdict().items()}
        lam = fields.pop("lam")
        m = self.tree.m_tot
        return Stacked(t=ts, coupler_lam=lam[:, m - self.tree.loops.cp_ab.shape[0]:], **fields)

    def instant(self, t: float, y: np.ndarray) -> Instant:
        """Evaluate everything at (t, y) and return copies of the results.

        The evaluation is the fixed-step kernel's of a result row (``kernels.row_evaluations``,
        as :meth:`row_instants`): the same numbers as :meth:`derivative`'s, and nothing compiled
        but what a fixed-step run compiles (an initial body velocity, say, is set through it
        before such a run). The work arrays are left with it."""
        self.row_instants([t], np.asarray(y, dtype=float)[None])
        W = self.work
        return Instant(t, W.q.copy(), W.u.copy(), W.udot.copy(), W.R.copy(), W.pb.copy(),
                       W.pc.copy(), W.hp.copy(), W.w.copy(), W.vh.copy(), W.x.copy(),
                       W.Wh.copy(), W.tau.copy(), W.Wext.copy(), W.Sg.copy(), W.cg.copy(),
                       W.loops.Wcut.copy(), int(W.loops.loop_rank[0]), W.loops.phi.copy(),
                       W.loops.lam[self.tree.m_tot - self.tree.loops.cp_ab.shape[0]:
                                   self.tree.m_tot].copy())
