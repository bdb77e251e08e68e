"""Singular configurations a run with closed loops passes (:class:`SingularityMonitor`), from a
conditioning ratio sampled in time: the mstmm method's (the kernel's ``svr`` at every step) and
the constrained method's (:class:`~..constrained.partition.DriftControl`, at every projection)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...analysis.assembly import SINGULAR_RATIO


@dataclass
class Singularity:
    """One passage near a singular configuration.

    Attributes
    ----------
    kind : str
        ``'change point'`` (the loop Jacobian loses rank) or ``'dead centre'`` (it does with the
        driven coordinates held: a toggle position of the drivers).
    time : float
        When the singular value ratio was smallest (s).
    start, end : float
        First and last time it was below the threshold (s).
    ratio : float
        The smallest ratio of the ``r``-th to the largest singular value (dimensionless); 0 when
        the passage fell between two samples (a V-shaped minimum of the sampled ratios that
        reaches zero in between: ``time`` is then where it does, ``start`` and ``end`` the
        samples around it).
    """

    kind: str
    time: float
    start: float
    end: float
    ratio: float

    def __str__(self) -> str:
        what = ("the loop Jacobian loses rank (change point)" if self.kind == "change point" else
                "the driven coordinates are at a dead centre (toggle position): the loop "
                "Jacobian loses rank with them held")
        if self.ratio > 0:
            span = (f"between {self.start:.6g} s and {self.end:.6g} s"
                    if self.end > self.start else f"at {self.start:.6g} s")
            how = f"singular value ratio {self.ratio:.3g}, below {SINGULAR_RATIO:g} {span}"
        else:
            how = (f"passed between the samples at {self.start:.6g} s and {self.end:.6g} s, "
                   "where the singular value ratio goes through zero")
        return (f"singular configuration at t = {self.time:.6g} s: {what} ({how}); "
                "accelerations and reactions near it are ill-conditioned")


class SingularityMonitor:
    """Singular configurations met during a run, from a conditioning ratio sampled in time.

    Fed with samples ``(t, {kind: ratio})`` in time order (:meth:`sample`, or :meth:`series`
    for many samples at once), ``ratio`` a dimensionless measure that goes through zero
    linearly where the loops lose rank (the ``r``-th to the largest singular value of the loop
    Jacobian; the mstmm kernel's ``svr``). A passage is recorded once
    (:attr:`singularities`): an episode below :data:`~.assembly.SINGULAR_RATIO`, at the time of
    its smallest ratio, or a V-shaped minimum of three successive samples that reaches zero
    between them (a rank drop passed within one sample interval), at the zero of the V.
    """

    #: Samples above this ratio can neither start an episode nor be the bottom of a V.
    GATE = 0.1

    def __init__(self):
        self.singularities = []
        self._episode = None
        self._history = {}

    def sample(self, t, ratios) -> None:
        """One sample: ``ratios`` maps a kind (``'change point'``, ``'dead centre'``) to the
        ratio at time ``t`` (kinds missing: no ratio)."""
        # below the threshold: one episode per passage (a change point makes the Jacobian over
        # the free columns singular too: reported as a change point only)
        kind = next((k for k in ("change point", "dead centre")
                     if ratios.get(k, np.inf) < SINGULAR_RATIO), None)
        ep = self._episode
        if kind is None:
            if ep is not None:
                self.singularities.append(ep)
                self._episode = None
        elif ep is None or ep.kind != kind:
            if ep is not None:
                self.singularities.append(ep)
            self._episode = Singularity(kind, float(t), float(t), float(t), ratios[kind])
        else:
            ep.end = float(t)
            if ratios[kind] < ep.ratio:
                ep.ratio, ep.time = ratios[kind], float(t)
        # passed between two samples: a V-shaped local minimum of the ratio that reaches zero
        # (a rank drop makes the singular value go through zero linearly)
        for k in ("change point", "dead centre"):
            hist = self._history.setdefault(k, [])
            hist.append((float(t), ratios.get(k, np.inf)))
            if len(hist) > 3:
                del hist[0]
            if len(hist) < 3:
                continue
            (t0, r0), (t1, r1), (t2, r2) = hist
            if not (r1 < r0 and r1 <= r2 and r1 < self.GATE and np.isfinite(r0 + r2)):
                continue
            if k == "dead centre" and ratios.get("change point", np.inf) < self.GATE:
                continue
            d_left, d_right = (r0 - r1) / (t1 - t0), (r2 - r1) / (t2 - t1)
            slope = max(d_left, d_right)
            if r1 > 0.55 * slope * min(t1 - t0, t2 - t1) or r1 < SINGULAR_RATIO:
                continue                  # a smooth minimum, or caught by the threshold
            # zero of the V: on the side of the smaller neighbour
            t_star = t1 - r1 / slope if d_left < d_right else t1 + r1 / slope
            self.singularities.append(Singularity(k, float(t_star), float(t0), float(t2), 0.0))

    def series(self, times, ratios, kind: str = "change point") -> None:
        """Many samples of one kind at once (times and ratios (k,), in time order, after the
        samples already given). Only the samples below :attr:`GATE` and their neighbours can
        matter; the others are skipped in bulk (an open episode ends there, as it would)."""
        times = np.asarray(times, dtype=float)
        ratios = np.asarray(ratios, dtype=float)
        low = ratios < self.GATE
        if not low.any():
            if times.size:
                self._gap(float(times[-1]), float(ratios[-1]), kind)
            return
        keep = low.copy()
        keep[1:] |= low[:-1]
        keep[:-1] |= low[1:]
        idx = np.flatnonzero(keep)
        prev = -1
        for i in idx.tolist():
            if i != prev + 1 and i > 0:
                self._gap(float(times[i - 1]), float(ratios[i - 1]), kind)
            self.sample(times[i], {kind: float(ratios[i])})
            prev = i
        if prev != times.size - 1:
            self._gap(float(times[-1]), float(ratios[-1]), kind)

    def _gap(self, t, ratio, kind) -> None:
        """Samples skipped up to the one at t (ratio above GATE): close an open episode and
        start the V detection afresh from that sample."""
        if self._episode is not None:
            self.singularities.append(self._episode)
            self._episode = None
        self._history = {kind: [(t, ratio)]}

    def finish(self):
        """Close a singularity passage still open at the end of a run."""
        if self._episode is not None:
            self.singularities.append(self._episode)
            self._episode = None
