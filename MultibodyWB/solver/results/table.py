"""Results of a simulation: one row per output time, named columns, SI units.

:class:`Results` holds a table (``data``, one row per output time) whose columns have stable,
documented names that users script against, plus the raw solver states and what the run was
(model, method, integrator, step, wall time).

Column names
------------
``time``
    the output time.
``<Body>.<quantity>``
    for every rigid body, the quantities of :data:`BODY_COLUMNS` (global axes).
``<Hinge>.<quantity>``
    for every hinge, the quantities of :data:`HINGE_COLUMNS`: its coordinates, rates,
    accelerations, reaction and driver loads. Which ones a hinge has depends on its type
    (:func:`hinge_quantities`).
``energy.<quantity>``
    the system's energies (:data:`ENERGY_COLUMNS`).

Every column's unit follows from the quantity alone (the part after the last ``.``):
:func:`unit_of`. When a hinge has the same name as a body, its columns are written
``hinge:<Hinge>.<quantity>`` so that no two columns share a name.

Conventions
-----------
* Body positions, velocities and accelerations are those of the base-frame origin; the
  orientation is the rotation matrix ``R`` (base-frame components to global: ``R11 .. R33``, row
  then column) and Bryant angles ``a, b, c`` (``R = Rx(a) Ry(b) Rz(c)``) that are continuous in
  time: they are not folded into (-pi, pi] and pass through ``b = +-pi/2`` on the branch that keeps
  them continuous (near ``b = +-pi/2`` only ``a -+ c`` is well defined: ``a`` and ``c`` may move
  fast there). The first sample takes the triple with the smaller ``|a| + |c|``.
* Hinge quantities are the hinge's own (input marker relative to output marker, output-marker
  axes), as in :mod:`.system`'s table of coordinates. Spherical, free and bushing hinges report
  their rotation as continuous Bryant angles ``rx, ry, rz`` and as the quaternion ``qw .. qz``;
  their rotational velocity coordinates are the relative angular velocity ``wx, wy, wz`` and its
  rate ``alphax .. alphaz`` (output-marker axes).
* The reaction ``Fx .. Tz`` is the wrench the hinge applies on its *input* body, at the input
  marker's origin, in global axes (constraint, spring, damper and driver loads together). The
  output body gets the opposite wrench at the same point.
* ``<coordinate>_drive`` is the generalised force (N or N m) the driver applies along a driven
  coordinate (the hinge's own spring and damper on that coordinate are not included).
* Energies: kinetic; potential = gravity + elastic, with elastic the sum of hinge springs
  ``1/2 k (q - ref)^2`` (rotations of spherical, free and bushing hinges: ``1/2 sum k_i phi_i^2``,
  ``phi`` the rotation vector w.r.t. the spring reference; exact potential for equal k_i),
  spring-dampers ``1/2 k (L - L0)^2`` and rotational spring-dampers ``1/2 k |phi|^2``. Dampers,
  drivers and time-dependent forces do work, so ``energy.total`` is constant only without them.
* Energy balance: ``energy.work_drivers``, ``energy.work_forces`` and ``energy.dissipated`` are
  the work done since t = 0 by the drivers and the applied forces and the energy the dampers
  dissipated, integrated with the state by the integrator (``rk4``: extra states of the same
  RK4 scheme; ``euler``: the power at each step's start times the step; the adaptive integrators: Gauss quadrature of the power over each step's dense
  output); ``energy.residual = total - total(0) - work_drivers - work_forces + dissipated`` is
  what the balance misses: the integration error (the *drift*), plus, for closed loops, the
  work of the loop stabilisation (``mstmm``: Baumgarte terms; ``constrained``: the projections
  onto the loop constraints), both of the order of the loop-closure error, and, for the
  ``newton-euler`` method, the energy stored and dissipated in its penalty joints and the
  error of its works sampled at the output times (see :mod:`.newton_euler`). Springs and gravity are in ``energy.potential``, not in the works. The
  rotation springs of spherical, free and bushing hinges with unequal stiffnesses are not
  conservative with the potential above: the difference is in the residual.
"""

from __future__ import annotations

import csv
import json
import math
import zipfile

import numpy as np

from ..model.columns import BALANCE_COLUMNS, unit_of
from ..model.files import atomic_write

# --------------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------------

class Results:
    """A table of results, one row per output time.

    Parameters
    ----------
    names : list of str
        Column names (``names[0] == "time"``).
    data : ndarray (n_times, n_columns)
    meta : dict, optional
        What the run was: ``model``, ``method``, ``integrator``, ``step``, ``output_step``,
        ``end_time``, ``wall_time`` (s), ``steps``, ``evaluations``, ``bodies``, ``hinges``...
        JSON-serialisable values only.
    states : ndarray (n_times, ny), optional
        The solver state ``y = [q; u]`` at each output time (see :mod:`.system`).
    """

    def __init__(self, names, data, meta=None, states=None):
        self.names = list(names)
        self.data = np.asarray(data, dtype=float)
        if self.data.ndim != 2 or self.data.shape[1] != len(self.names):
            raise ValueError(f"data of shape {self.data.shape} does not match "
                             f"{len(self.names)} names")
        if len(set(self.names)) != len(self.names):
            raise ValueError("column names are not unique")
        self.meta = dict(meta or {})
        self.states = None if states is None else np.asarray(states, dtype=float)
        self._index = {n: i for i, n in enumerate(self.names)}

    # -- access -------------------------------------------------------------------------------
    def __len__(self) -> int:
        return self.data.shape[0]

    def __contains__(self, name) -> bool:
        return name in self._index

    def __getitem__(self, name: str) -> np.ndarray:
        return self.column(name)

    def column(self, name: str) -> np.ndarray:
        """The column called ``name`` (a view, one value per output time)."""
        try:
            return self.data[:, self._index[name]]
        except KeyError:
            import difflib
            close = difflib.get_close_matches(name, self.names, n=5)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise KeyError(f"no column '{name}'{hint}") from None

    @property
    def time(self) -> np.ndarray:
        """Output times (s)."""
        return self.column("time")

    @property
    def units(self) -> list[str]:
        """The unit of every column, in column order."""
        return [unit_of(n) for n in self.names]

    def unit(self, name: str) -> str:
        """The unit of column ``name``."""
        self.column(name)
        return unit_of(name)

    @property
    def model_name(self) -> str:
        return self.meta.get("model", "")

    @property
    def bodies(self) -> list[str]:
        """Names of the bodies that have columns (those with ``<Body>.R11``)."""
        if "bodies" in self.meta:
            return list(self.meta["bodies"])
        return [n[:-4] for n in self.names if n.endswith(".R11")]

    @property
    def hinges(self) -> list[str]:
        """Column prefixes of the hinges (those with ``<Hinge>.Fx``, not bodies)."""
        if "hinges" in self.meta:
            return list(self.meta["hinges"])
        return [n[:-3] for n in self.names if n.endswith(".Fx")]

    def position(self, body: str) -> np.ndarray:
        """Base-origin positions of ``body``, shape (n_times, 3), m."""
        return np.column_stack([self.column(f"{body}.{a}") for a in "xyz"])

    def rotation(self, body: str) -> np.ndarray:
        """Rotation matrices of ``body``'s base frame, shape (n_times, 3, 3)."""
        cols = [self.column(f"{body}.R{i}{j}") for i in (1, 2, 3) for j in (1, 2, 3)]
        return np.stack(cols, axis=1).reshape(-1, 3, 3)

    def vector(self, prefix: str) -> np.ndarray:
        """Three columns ``<prefix>x, <prefix>y, <prefix>z`` stacked, shape (n_times, 3).

        E.g. ``vector("Upper.w")``, ``vector("Shoulder.F")``.
        """
        return np.column_stack([self.column(prefix + a) for a in "xyz"])

    # -- files --------------------------------------------------------------------------------
    def to_csv(self, path) -> None:
        """Write a CSV file: one header line of column names, then one line per output time.

        Numbers are written with 17 significant digits (exact round trip). The run's metadata is
        not in the CSV file (use NPZ to keep it). A column name that a spreadsheet would take for
        a formula (one starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return, from
        a body or hinge called ``=cmd``) is written after an apostrophe, which spreadsheets read
        as "text follows" and do not show; :meth:`from_csv` gives it with the apostrophe.
        """
        formula = ("=", "+", "-", "@", "\t", "\r")
        header = [f"'{n}" if n.startswith(formula) else n for n in self.names]
        with atomic_write(path, "w", newline="") as fh:
            csv.writer(fh).writerow(header)
            np.savetxt(fh, self.data, delimiter=",", fmt="%.17g")

    @classmethod
    def from_csv(cls, path) -> Results:
        """Read a file written by :meth:`to_csv` (no metadata, no states)."""
        with open(path, newline="") as fh:
            names = next(csv.reader(fh))
            data = np.loadtxt(fh, delimiter=",", ndmin=2)
        if data.size == 0:
            data = np.zeros((0, len(names)))
        return cls(names, data)

    def to_npz(self, path) -> None:
        """Write a compressed NumPy archive: ``names``, ``data``, ``meta`` (JSON), ``states``."""
        arrays = dict(names=np.array(self.names, dtype=str), data=self.data,
                      meta=np.array(json.dumps(self.meta)))
        if self.states is not None:
            arrays["states"] = self.states
        # what np.savez_compressed does, with the archive closed inside the file's block: on
        # a failure (a full disk, Ctrl-C) numpy's archive was closed only when collected, after
        # the file, and said "ValueError: seek of closed file"
        with atomic_write(path, "wb") as fh:
            with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_DEFLATED,
                                 allowZip64=True) as archive:
                for name, value in arrays.items():
                    with archive.open(name + ".npy", "w", force_zip64=True) as member:
                        np.lib.format.write_array(member, np.asanyarray(value),
                                                  allow_pickle=False)

    @classmethod
    def from_npz(cls, path) -> Results:
        """Read a file written by :meth:`to_npz`."""
        with np.load(path, allow_pickle=False) as z:
            names = [str(n) for n in z["names"]]
            data = z["data"]
            meta = json.loads(str(z["meta"])) if "meta" in z else {}
            states = z["states"] if "states" in z else None
        return cls(names, data, meta, states)

    def save(self, path) -> None:
        """Write ``.csv`` or ``.npz`` by the file's extension, complete or not at all: an earlier
        file of that name survives any failure (:func:`..model.files.atomic_write`)."""
        p = str(path).lower()
        if p.endswith(".csv"):
            self.to_csv(path)
        elif p.endswith(".npz"):
            self.to_npz(path)
        else:
            raise ValueError(f"{path}: results files end in .csv or .npz")

    # -- trust --------------------------------------------------------------------------------
    def mark_untrusted(self, check: str, reason: str) -> None:
        """Record that the run's own check ``check`` (``"energy balance"``) says not to trust
        it, and why (``reason``, with its numbers): ``meta["untrusted"]``, a list of
        ``{"check": ..., "reason": ...}`` kept in NPZ files and in the FreeCAD document's
        stored runs. The run itself is kept (it is useful to see what went wrong), but it is
        not reported as a success: :attr:`untrusted`."""
        self.meta.setdefault("untrusted", []).append(dict(check=str(check), reason=str(reason)))

    @property
    def untrusted(self) -> list[str]:
        """Why the run is not to be trusted, one ``"<check>: <reason>"`` per check that said
        so (:meth:`mark_untrusted`); empty when none did. What reads it: the CLI's ``run``
        (exit code 3), a study (the variant's status ``untrusted``, its objectives not used),
        the Simulate panel and the FreeCAD Result's ``Untrusted`` property."""
        out = []
        for item in self.meta.get("untrusted") or []:
            if isinstance(item, dict):
                check, reason = item.get("check", "check"), item.get("reason", "")
                out.append(f"{check}: {reason}" if reason else str(check))
            else:                        # written by hand: kept as it is
                out.append(str(item))
        return out

    # -- summary ------------------------------------------------------------------------------
    def energy_drift(self) -> tuple[float, float]:
        """The drift: the energy balance's residual at the end (J), and the same relative to a
        scale of the energies (1).

        The residual is ``energy.residual`` (the change of the total energy less the work of
        the drivers and the applied forces plus the energy the dampers dissipated); results
        without that column (files of older versions) give the change of the total energy. The
        scale is the largest of |E_total(0)|, the largest kinetic energy, the largest
        |potential energy| change and the largest |work| or dissipated energy, so that a system
        at rest or with E = 0 still gets a meaningful relative number.
        """
        if "energy.total" not in self or len(self) == 0:
            return math.nan, math.nan
        e = self.column("energy.total")
        d = (float(self.column("energy.residual")[-1]) if "energy.residual" in self
             else float(e[-1] - e[0]))
        return d, d / self._energy_scale()

    def _energy_scale(self) -> float:
        """The scale of the energies (J), see :meth:`energy_drift`."""
        e = self.column("energy.total")
        scale = max(abs(e[0]), float(np.max(np.abs(self.column("energy.kinetic")))),
                    float(np.ptp(self.column("energy.potential"))), 1e-300)
        for c in BALANCE_COLUMNS[:3]:
            if f"energy.{c}" in self:
                scale = max(scale, float(np.max(np.abs(self.column(f"energy.{c}")))))
        return scale

    def energy_balance(self) -> dict:
        """The energy balance at the end of the run (J): ``start``, ``end`` (total energy),
        ``work_drivers``, ``work_forces``, ``dissipated``, ``residual`` and ``relative`` (the
        residual relative to the energies' scale ``scale``, :meth:`energy_drift`). Without the
        balance columns (older files) the works are NaN and the residual is the change of the
        total."""
        e = self.column("energy.total")
        d, rel = self.energy_drift()
        out = dict(start=float(e[0]), end=float(e[-1]), scale=self._energy_scale())
        for c in BALANCE_COLUMNS[:3]:
            out[c] = (float(self.column(f"energy.{c}")[-1]) if f"energy.{c}" in self
                      else math.nan)
        out.update(residual=d, relative=rel)
        return out

    def summary(self, length_unit: str = "m", length_factor: float = 1.0) -> str:
        """A short text: the run, final body positions, the energy balance (works of drivers
        and forces, dissipated energy, and its residual: the drift), wall time, speed.

        Positions are given in ``length_unit``, ``length_factor`` of them to the metre (the
        FreeCAD side passes ``"mm", 1000.0``: messages in the document's units).
        """
        m = self.meta
        lines = []
        head = f"Results of '{m.get('model', '?')}'"
        bits = [f"method {m['method']}" if "method" in m else "",
                f"integrator {m['integrator']}" if "integrator" in m else "",
                f"step {m['step']:g} s" if "step" in m else ""]
        lines.append(head + (": " + ", ".join(b for b in bits if b) if any(bits) else ""))
        if len(self):
            t = self.time
            lines.append(f"  {len(self)} output times from {t[0]:g} to {t[-1]:g} s, "
                         f"{len(self.names)} columns")
        if "wall_time" in m:
            w = m["wall_time"]
            steps = m.get("steps")
            speed = f", {steps} steps, {steps / w:.4g} steps/s" if steps and w > 0 else ""
            ev = f", {m['evaluations']} evaluations" if m.get("evaluations") else ""
            lines.append(f"  wall time {w:.3g} s{speed}{ev}")
        bodies = self.bodies
        if bodies and len(self):
            lines.append(f"  final positions of the base origins ({length_unit}):")
            width = max(len(b) for b in bodies)
            for b in bodies:
                p = self.position(b)[-1] * length_factor
                lines.append(f"    {b:<{width}}  x {p[0]: .6g}  y {p[1]: .6g}  z {p[2]: .6g}")
        if "energy.total" in self and len(self):
            b = self.energy_balance()
            text = f"  energy: total {b['start']:.9g} J at start, {b['end']:.9g} J at the end; "
            if "energy.residual" in self:
                # works below round-off of the energies (a force that is ~0) read as 0
                tiny = 1e-13 * b["scale"]
                wd, wf, dis = (0.0 if abs(b[k]) < tiny else b[k] for k in BALANCE_COLUMNS[:3])
                text += (f"work of drivers {wd:.6g} J, of forces {wf:.6g} J, dissipated "
                         f"{dis:.6g} J; residual (drift) {b['residual']:.3g} J "
                         f"({b['relative']:.3g} relative)")
            else:
                text += (f"change {b['residual']:.3g} J ({b['relative']:.3g} relative; no "
                         "energy balance in these results)")
            lines.append(text)
        for w in m.get("warnings", []):
            lines.append(f"  warning: {w}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"<Results '{self.meta.get('model', '')}': {len(self)} times x "
                f"{len(self.names)} columns>")


# --------------------------------------------------------------------------------------------------
# Computing the columns from the solver
# --------------------------------------------------------------------------------------------------

def fill_residual(names, data) -> None:
    """Fill ``energy.residual`` of a run's table ``data`` (rows in time order) in place:
    ``total - total(0) - work_drivers - work_forces + dissipated`` (see the module docstring)."""
    ix = {n: i for i, n in enumerate(names)}
    if "energy.residual" not in ix or len(data) == 0:
        return
    e = data[:, ix["energy.total"]]
    data[:, ix["energy.residual"]] = (e - e[0] - data[:, ix["energy.work_drivers"]]
                                      - data[:, ix["energy.work_forces"]]
                                      + data[:, ix["energy.dissipated"]])


