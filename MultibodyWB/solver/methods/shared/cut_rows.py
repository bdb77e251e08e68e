"""Result rows with closed loops, what the methods share: the columns of every cut hinge
(:class:`CutHingeRecorder`: its coordinates fitted to its markers, rates, accelerations,
reaction on its input body, and the loop-closure errors :data:`CLOSURE_QUANTITIES`) after the
tree's (:class:`~...results.recorder.Recorder`), and the row-wise helpers that fill them. The
constrained method fills them from its own solution (``constrained.run.ConstrainedRecorder``),
mstmm from its kernel's stacked instants (``mstmm.loop_rows.LoopRecorder``)."""

from __future__ import annotations

import numpy as np

from ...elements.hinges import HINGE_TYPES, QUATERNION_TYPES, SIX_DOF_TYPES
from ...model.columns import hinge_quantities
from ...results.recorder import Recorder
from ...maths.rows import bryant_rows, quaternion_of_bryant_rows

__all__ = ["CLOSURE_QUANTITIES", "CutHingeRecorder"]

#: Loop-closure columns of every cut hinge.
CLOSURE_QUANTITIES = ("closure_gap", "closure_angle", "closure_gap_rate", "closure_angle_rate")


def _bryant_to_quaternion(angles):
    from ...maths.rotations import bryant_to_quaternion
    return bryant_to_quaternion(angles)


def _wrap(a):
    return np.pi - np.mod(np.pi - a, 2.0 * np.pi)


class CutHingeRecorder:
    """The names and order of the result columns with closed loops, and what the cut hinges'
    columns need to be filled; a method's recorder adds ``row`` (and ``rows``).

    Parameters
    ----------
    system : System
        The prepared system.
    view
        What the tree's :class:`~...results.recorder.Recorder` evaluates an instant with (the
        system itself, or the method's view of it).
    """

    def __init__(self, system, view):
        self.system = system
        self.view = view
        self.base = Recorder(self.view)
        model = system.model
        base = self.base.names
        k0 = 1 + self.base.n_body_cols * len(self.base.bodies)
        blocks, k = {}, k0
        for spec, prefix in zip(self.base.hinge_specs, self.base.hinges):
            blocks[system.hinges[spec["i"]]] = list(range(k, k + spec["ncols"]))
            k += spec["ncols"]
        energy = list(range(k, len(base)))
        bodies = {b.name for b in model.bodies}
        names = list(base)
        self.cut_specs = []
        cut_set = set(system.topology.cut_hinges)
        order = list(range(k0))
        prefixes = []
        for h in model.hinges:
            prefix = f"hinge:{h.name}" if h.name in bodies else h.name
            if h.name in blocks:
                order += blocks[h.name]
                prefixes.append(prefix)
            elif h.name in cut_set:
                qties = hinge_quantities(h.type) + list(CLOSURE_QUANTITIES)
                start = len(names)
                names += [f"{prefix}.{q}" for q in qties]
                order += list(range(start, len(names)))
                prefixes.append(prefix)
                self.cut_specs.append(dict(
                    name=h.name, type=h.type, index=system.topology.cut_hinges.index(h.name),
                    quat=h.type in QUATERNION_TYPES, ntrans=3 if h.type in SIX_DOF_TYPES
                    else 0, nrows=HINGE_TYPES[h.type].constraints))
        order += energy
        self._order = np.array(order, dtype=np.int64)
        self.names = [names[i] for i in order]
        self.bodies = self.base.bodies
        self.hinges = prefixes
        self._n_extra = len(names) - len(base)
        self._prev = {}
        # rows of each cut hinge in the closure vector
        r0, self._rows = 0, {}
        for name in system.topology.cut_hinges:
            k = HINGE_TYPES[model.hinge(name).type].constraints
            self._rows[name] = (r0, r0 + k)
            r0 += k

    def reset(self) -> None:
        """Forget the angle histories."""
        self.base.reset()
        self._prev = {}

    def half_turn_warnings(self, data) -> list:
        """Warnings for the cut hinges whose springs passed half a turn from their reference
        in the result rows ``data`` (rows, columns in :attr:`names`): a cut hinge's spring
        measures its angles within (-180, 180] degrees of the reference
        (:mod:`...elements.forces.cut_spring`), so its torque reverses there, where a tree
        hinge's spring would wind up."""
        out = []
        model = self.system.model
        bodies = {b.name for b in model.bodies}
        for spec in self.cut_specs:
            h = model.hinge(spec["name"])
            if spec["quat"]:
                continue
            k, ref = h.vector("stiffness"), h.vector("spring_reference")
            prefix = f"hinge:{h.name}" if h.name in bodies else h.name
            for j, c in enumerate(h.kind.coordinates):
                if c not in ("rx", "ry", "rz") or k[j] == 0.0:
                    continue
                beyond = np.abs(data[:, self.names.index(f"{prefix}.{c}")] - ref[j]) > np.pi
                if beyond.any():
                    t = float(data[int(np.argmax(beyond)), 0])
                    out.append(
                        f"Hinge '{h.label or h.name}' closes a loop, and its spring's {c} passed "
                        f"half a turn from its reference at t = {t:.6g} s: the spring of the hinge "
                        "that closes a loop acts within half a turn (its torque reverses there, "
                        "where a spring on another hinge winds up); put the spring on another "
                        "hinge of the loop, or have another hinge close it (of the loop's "
                        "hinges with the fewest constraints, the last in the model closes it)")
        return out


def _bryant_many(R) -> np.ndarray:
    """Bryant angles (k, 3) of rotations (k, 3, 3), as :func:`.rotations.matrix_to_bryant`
    (compiled, one at a time: see ``maths.rows.bryant_rows``)."""
    return bryant_rows(np.ascontiguousarray(R, dtype=float), True)


def _rows_times(X, P) -> np.ndarray:
    """``X @ P.T`` for rows X (k, 6) and a small matrix P (j, 6), summed in a fixed order (the
    same for one row or many, see :func:`.rows._mat_vec`)."""
    out = np.zeros((X.shape[0], P.shape[0]))
    for j in range(P.shape[0]):
        for a in range(P.shape[1]):
            out[:, j] += X[:, a] * P[j, a]
    return out


def _quaternions_of_bryant(angles) -> np.ndarray:
    """Unit quaternions (k, 4) of Bryant angles (k, 3) (:func:`.rotations.bryant_to_quaternion`,
    compiled, one row at a time: see ``maths.rows.bryant_rows``)."""
    return quaternion_of_bryant_rows(np.ascontiguousarray(angles, dtype=float))


def _continue(raw, prev) -> np.ndarray:
    """Angles (k,) continued row by row, each the nearest to the one before up to whole turns,
    the first to ``prev`` (None: the first row stays as it is). The result is ``raw + 2 pi n``
    with whole n, so no round-off accumulates along the rows."""
    two_pi = 2.0 * np.pi
    n0 = 0.0 if prev is None else np.round((prev - raw[0]) / two_pi)
    n = np.cumsum(np.concatenate([[n0], np.round((raw[:-1] - raw[1:]) / two_pi)]))
    return raw + two_pi * n
