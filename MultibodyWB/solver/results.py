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
  RK4 scheme; the adaptive integrators: Gauss quadrature of the power over each step's dense
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

import numpy as np

from .model import COORDINATE_KIND, COORDINATE_UNIT, HINGE_TYPES, LOAD_UNIT

# --------------------------------------------------------------------------------------------------
# The documented columns
# --------------------------------------------------------------------------------------------------

#: ``time`` column.
TIME_COLUMN = ("time", "s", "output time")

#: Per rigid body: quantity -> (unit, description). Global axes, SI units.
BODY_COLUMNS: dict[str, tuple[str, str]] = {
    "x": ("m", "global x of the base-frame origin"),
    "y": ("m", "global y of the base-frame origin"),
    "z": ("m", "global z of the base-frame origin"),
    "a": ("rad", "Bryant angle a (about x) of the base frame, continuous in time"),
    "b": ("rad", "Bryant angle b (about y') of the base frame, continuous in time"),
    "c": ("rad", "Bryant angle c (about z'') of the base frame, continuous in time"),
    **{f"R{i}{j}": ("1", f"rotation matrix entry row {i}, column {j} (base frame to global)")
       for i in (1, 2, 3) for j in (1, 2, 3)},
    "vx": ("m/s", "global x velocity of the base-frame origin"),
    "vy": ("m/s", "global y velocity of the base-frame origin"),
    "vz": ("m/s", "global z velocity of the base-frame origin"),
    "wx": ("rad/s", "angular velocity, global x"),
    "wy": ("rad/s", "angular velocity, global y"),
    "wz": ("rad/s", "angular velocity, global z"),
    "ax": ("m/s^2", "global x acceleration of the base-frame origin"),
    "ay": ("m/s^2", "global y acceleration of the base-frame origin"),
    "az": ("m/s^2", "global z acceleration of the base-frame origin"),
    "alphax": ("rad/s^2", "angular acceleration, global x"),
    "alphay": ("rad/s^2", "angular acceleration, global y"),
    "alphaz": ("rad/s^2", "angular acceleration, global z"),
}


def _hinge_columns() -> dict[str, tuple[str, str]]:
    cols = {}
    rate = {"m": "m/s", "rad": "rad/s"}
    acc = {"m": "m/s^2", "rad": "rad/s^2"}
    for c, kind in COORDINATE_KIND.items():
        u = COORDINATE_UNIT[kind]
        what = ("translation along the output marker's " + c if kind == "translation" else
                "rotation " + c + " (Bryant angle; continuous for spherical, free, bushing)")
        cols[c] = (u, f"hinge coordinate: {what}")
        note = (" (spherical, free and bushing hinges have wx .. alphaz instead)"
                if kind == "rotation" else "")
        cols[f"{c}_rate"] = (rate[u], f"rate of coordinate {c}{note}")
        cols[f"{c}_acc"] = (acc[u], f"second derivative of coordinate {c}{note}")
        cols[f"{c}_drive"] = (LOAD_UNIT[kind], f"generalised load the driver of {c} applies")
    for a in "wxyz":
        cols[f"q{a}"] = ("1", f"quaternion component {a} of the relative rotation "
                              "(spherical, free, bushing)")
    for a in "xyz":
        cols[f"w{a}"] = ("rad/s", f"relative angular velocity, output-marker {a} "
                                  "(spherical, free, bushing)")
    for a in "xyz":
        cols[f"alpha{a}"] = ("rad/s^2", f"rate of the relative angular velocity w{a} "
                                        "(spherical, free, bushing)")
    for a in "xyz":
        cols[f"F{a}"] = ("N", f"reaction force on the input body, global {a}")
    for a in "xyz":
        cols[f"T{a}"] = ("N m", f"reaction torque on the input body about the input marker "
                                f"origin, global {a}")
    return cols


#: Per hinge: quantity -> (unit, description).
HINGE_COLUMNS: dict[str, tuple[str, str]] = _hinge_columns()
#: Cut hinges (closed loops, ``constrained`` method): how far the loop is from closed, as the norm
#: of the loop-closure residual over the hinge's constrained directions.
HINGE_COLUMNS.update({
    "closure_gap": ("m", "cut hinge: loop-closure error, translation"),
    "closure_angle": ("rad", "cut hinge: loop-closure error, rotation"),
    "closure_gap_rate": ("m/s", "cut hinge: loop-closure error at velocity level, translation"),
    "closure_angle_rate": ("rad/s", "cut hinge: loop-closure error at velocity level, rotation"),
})

#: System energies: ``energy.<quantity>`` -> (unit, description).
ENERGY_COLUMNS: dict[str, tuple[str, str]] = {
    "kinetic": ("J", "kinetic energy of all bodies"),
    "gravity": ("J", "potential energy of gravity, -sum m g . r_C"),
    "elastic": ("J", "energy stored in hinge springs, spring-dampers and rotational "
                     "spring-dampers"),
    "potential": ("J", "gravity + elastic"),
    "total": ("J", "kinetic + potential"),
    "work_drivers": ("J", "work done since t = 0 by the drivers (prescribed hinge coordinates, "
                          "motors)"),
    "work_forces": ("J", "work done since t = 0 by the applied forces: point forces and "
                         "torques, the time-function part of spring-dampers"),
    "dissipated": ("J", "energy dissipated since t = 0 by the dampers of hinges (bushings "
                        "included), spring-dampers and rotational spring-dampers"),
    "residual": ("J", "energy balance residual (drift): total - total(0) - work_drivers - "
                      "work_forces + dissipated"),
}
#: The energy-balance columns (:data:`ENERGY_COLUMNS`): works and dissipation since t = 0 and
#: the residual of the balance.
BALANCE_COLUMNS = ("work_drivers", "work_forces", "dissipated", "residual")

_QUAT_TYPES = ("spherical", "free", "bushing")


def hinge_quantities(hinge_type: str, driven=()) -> list[str]:
    """The quantities (column suffixes) a hinge of ``hinge_type`` has, in column order.

    ``driven`` lists the driven coordinates (each adds ``<coordinate>_drive``).
    """
    coords = list(HINGE_TYPES[hinge_type].coordinates)
    out = list(coords)
    if hinge_type in _QUAT_TYPES:
        trans = [c for c in coords if COORDINATE_KIND[c] == "translation"]
        out += ["qw", "qx", "qy", "qz"]
        out += [f"{c}_rate" for c in trans] + ["wx", "wy", "wz"]
        out += [f"{c}_acc" for c in trans] + ["alphax", "alphay", "alphaz"]
    else:
        out += [f"{c}_rate" for c in coords] + [f"{c}_acc" for c in coords]
    out += ["Fx", "Fy", "Fz", "Tx", "Ty", "Tz"]
    out += [f"{c}_drive" for c in coords if c in driven]
    return out


def unit_of(name: str) -> str:
    """The unit of a column, from its name (raises KeyError for a name that is no column)."""
    if name == "time":
        return "s"
    owner, _, qty = name.rpartition(".")
    if not owner:
        raise KeyError(f"'{name}' is not a column name")
    if owner == "energy" and qty in ENERGY_COLUMNS:
        return ENERGY_COLUMNS[qty][0]
    if qty in BODY_COLUMNS:
        return BODY_COLUMNS[qty][0]
    if qty in HINGE_COLUMNS:
        return HINGE_COLUMNS[qty][0]
    raise KeyError(f"'{name}': no quantity '{qty}' (see results.BODY_COLUMNS, HINGE_COLUMNS, "
                   "ENERGY_COLUMNS)")


def describe(name: str) -> str:
    """A one-line description of a column, with its unit."""
    if name == "time":
        return f"time [s]: {TIME_COLUMN[2]}"
    owner, _, qty = name.rpartition(".")
    for table in ((ENERGY_COLUMNS,) if owner == "energy" else ()) + (BODY_COLUMNS, HINGE_COLUMNS):
        if qty in table:
            unit, text = table[qty]
            return f"{name} [{unit}]: {text}"
    raise KeyError(f"'{name}' is not a column name")


def columns_table() -> str:
    """Every documented quantity with its unit, as text (for documentation and ``--help``)."""
    lines = [f"{'time':<24} {'s':<8} {TIME_COLUMN[2]}"]
    for title, prefix, table in (("bodies", "<Body>.", BODY_COLUMNS),
                                 ("hinges", "<Hinge>.", HINGE_COLUMNS),
                                 ("system", "energy.", ENERGY_COLUMNS)):
        lines.append(f"-- {title}")
        for q, (unit, text) in table.items():
            lines.append(f"{prefix + q:<24} {unit:<8} {text}")
    return "\n".join(lines)


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
        with open(path, "w", newline="") as fh:
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
        with open(path, "wb") as fh:
            np.savez_compressed(fh, **arrays)

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
        """Write ``.csv`` or ``.npz`` by the file's extension."""
        p = str(path).lower()
        if p.endswith(".csv"):
            self.to_csv(path)
        elif p.endswith(".npz"):
            self.to_npz(path)
        else:
            raise ValueError(f"{path}: results files end in .csv or .npz")

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


def _bryant_raw(R) -> np.ndarray:
    """Bryant angles of rotation matrices (k, 3, 3) -> (k, 3), b in [-pi/2, pi/2] (compiled,
    one matrix at a time: the same numbers however many are converted at once)."""
    from .kernels import bryant_rows
    return bryant_rows(np.ascontiguousarray(R, dtype=float), False)


def continue_bryant(raw, prev=None) -> np.ndarray:
    """Bryant angles (k, 3) on the branch nearest to ``prev`` (k, 3): continuous over time.

    A rotation has two Bryant triples, ``(a, b, c)`` and ``(a + pi, pi - b, c + pi)``, each up to
    whole turns; the one closest to the previous sample is taken. Without ``prev`` (the first
    sample) the triple with the smaller ``|a| + |c|`` is taken, a and c in [-pi, pi].
    """
    raw = np.asarray(raw, dtype=float)
    two_pi = 2.0 * np.pi
    alt = raw + np.pi
    alt[:, 1] = np.pi - raw[:, 1]
    if prev is None:
        # the start: the triple with the smaller first and third angles (a rotation about y by
        # more than pi/2 starts as (0, b, 0), not (pi, pi - b, pi))
        alt[:, 0::2] -= two_pi * np.round(alt[:, 0::2] / two_pi)
        out = raw.copy()
        pick = (np.abs(alt[:, 0]) + np.abs(alt[:, 2])) < (np.abs(raw[:, 0]) + np.abs(raw[:, 2])
                                                          - 1e-9)
        out[pick] = alt[pick]
        return out
    c1 = raw + two_pi * np.round((prev - raw) / two_pi)
    c2 = alt + two_pi * np.round((prev - alt) / two_pi)
    pick = ((c2 - prev) ** 2).sum(axis=1) < ((c1 - prev) ** 2).sum(axis=1)
    c1[pick] = c2[pick]
    return c1


def continue_bryant_rows(raw, prev=None) -> np.ndarray:
    """:func:`continue_bryant` along a sequence: ``raw`` (k, N, 3) in time order, each row
    continued from the one before (the first from ``prev`` (N, 3), or started afresh)."""
    from .kernels import continue_bryant_rows as compiled
    raw = np.ascontiguousarray(raw, dtype=float)
    if raw.shape[1] == 0:
        return raw.copy()
    start = prev is None
    return compiled(raw, raw[0] if start else np.ascontiguousarray(prev, dtype=float), start)


class Stacked:
    """Instants at k times, stacked (the fields of :class:`~.system.Instant` with a leading
    axis k); ``rank`` and ``svr`` (k,) the loops' rank and conditioning monitor."""

    def __init__(self, **fields):
        self.__dict__.update(fields)


def stack_instants(instants) -> Stacked:
    """:class:`Stacked` from a list of :class:`~.system.Instant` (any formulation's)."""
    first = instants[0]

    def st(name):
        vals = [getattr(i, name) for i in instants]
        if any(v is None for v in vals):
            return None
        return np.stack([np.asarray(v, dtype=float) for v in vals])

    out = Stacked(t=np.array([i.t for i in instants], dtype=float),
                  rank=np.array([i.loop_rank for i in instants]))
    for name in ("q", "u", "udot", "R", "pb", "pc", "hp", "w", "vh", "x", "Wh", "tau", "Wext",
                 "Wcut", "phi"):
        setattr(out, name, st(name) if hasattr(first, name) else None)
    return out


def _mat_vec(A, v) -> np.ndarray:
    """``A @ v`` over leading axes, (..., 3, 3) and (..., 3) (broadcast), summed in a fixed order:
    the rows of a run come out the same whether computed one at a time or many at once (numpy's
    matmul and einsum may sum differently for different batch sizes)."""
    return np.stack([A[..., i, 0] * v[..., 0] + A[..., i, 1] * v[..., 1] + A[..., i, 2] * v[..., 2]
                     for i in range(3)], axis=-1)


def _matT_vec(A, v) -> np.ndarray:
    """``A^T @ v`` over leading axes (as :func:`_mat_vec`)."""
    return np.stack([A[..., 0, i] * v[..., 0] + A[..., 1, i] * v[..., 1] + A[..., 2, i] * v[..., 2]
                     for i in range(3)], axis=-1)


def _mat_mat(A, B) -> np.ndarray:
    """``A @ B`` over leading axes (as :func:`_mat_vec`)."""
    return np.stack([_mat_vec(A, B[..., :, j]) for j in range(3)], axis=-1)


def _matT_mat(A, B) -> np.ndarray:
    """``A^T @ B`` over leading axes (as :func:`_mat_vec`)."""
    return np.stack([_matT_vec(A, B[..., :, j]) for j in range(3)], axis=-1)


def _cross(a, b) -> np.ndarray:
    """Cross product along the last axis of (..., 3) arrays (faster than np.cross)."""
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    out[..., 1] = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    out[..., 2] = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return out


def _quat_matrices(qs) -> np.ndarray:
    """Rotation matrices (k, 3, 3) of quaternions (k, 4) (normalised here)."""
    q = qs / np.linalg.norm(qs, axis=1)[:, None]
    w, x, y, z = q.T
    return np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                     2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                     2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
                    axis=1).reshape(-1, 3, 3)


def _rotvec(R) -> np.ndarray:
    from .rotations import rotation_vector
    return rotation_vector(R)


class Recorder:
    """Turns solver states into result rows (one :meth:`row` per output time).

    Parameters
    ----------
    system : System
        The assembled system; :meth:`row` calls ``system.instant(t, y)``. Another formulation
        passes an object with the same attributes: ``model``, ``index`` (body name -> row of the
        instant's body arrays), ``hinges`` (the hinges it reports; hinge ``i`` is row ``i`` of
        ``Wh``), ``tree`` (``qo uo nq nu sgn hk hc href hRref mass JCl`` as in
        :class:`~.system.System`), ``forces`` and ``instant(t, y)`` (see
        :class:`~.newton_euler.NewtonEuler`).
    """

    def __init__(self, system):
        self.system = system
        model, T = system.model, system.tree
        self._prev = None                       # previous Bryant angles (bodies + quat hinges)
        body_names = [b.name for b in model.bodies]
        self.body_order = np.array([system.index[b] for b in body_names], dtype=np.int64)
        names = ["time"]
        for b in body_names:
            names += [f"{b}.{q}" for q in BODY_COLUMNS]
        self.n_body_cols = len(BODY_COLUMNS)
        # tree hinges in model order
        tree_index = {h: i for i, h in enumerate(system.hinges)}
        body_set = set(body_names)
        self.hinge_specs = []
        hinge_prefixes = []
        for h in model.hinges:
            if h.name not in tree_index:
                continue                         # not in the tree (not handled by this solver)
            i = tree_index[h.name]
            prefix = f"hinge:{h.name}" if h.name in body_set else h.name
            kind = HINGE_TYPES[h.type]
            driven = [d.coordinate for d in h.drivers]
            qties = hinge_quantities(h.type, driven)
            names += [f"{prefix}.{q}" for q in qties]
            hinge_prefixes.append(prefix)
            drv = []
            for c in kind.coordinates:
                if c in driven:
                    j = kind.coordinates.index(c)
                    drv.append((int(T.uo[i] + j), int(T.qo[i] + j)))
            self.hinge_specs.append(dict(
                i=i, type=h.type, quat=h.type in _QUAT_TYPES, qo=int(T.qo[i]), uo=int(T.uo[i]),
                nq=int(T.nq[i]), nu=int(T.nu[i]), sgn=float(T.sgn[i]), drv=drv,
                ntrans=3 if h.type in ("free", "bushing") else 0, ncols=len(qties)))
        self.n_quat = sum(1 for s in self.hinge_specs if s["quat"])
        names += [f"energy.{q}" for q in ENERGY_COLUMNS]
        self.names = names
        self.bodies = body_names
        self.hinges = hinge_prefixes
        # energy data
        self._springs = [s for s in range(len(system.hinges))
                         if np.any(T.hk[T.uo[s]:T.uo[s] + T.nu[s]] != 0.0)]
        F = system.forces
        self._sd = [f for f in range(F.sd_bi.size) if F.sd_k[f] != 0.0]
        self._rs = [f for f in range(F.rs_bi.size) if F.rs_k[f] != 0.0]

    def reset(self) -> None:
        """Forget the angle history (the next row starts the continuous branches afresh)."""
        self._prev = None

    # -- rows ---------------------------------------------------------------------------------
    def row(self, t: float, y: np.ndarray, instant=None, flows=None) -> np.ndarray:
        """The result row at (t, y).

        ``instant``: the :class:`~.system.Instant` at (t, y) when the caller has it already
        (another formulation); by default ``system.instant(t, y)``. ``flows``: the work of the
        drivers and of the applied forces and the dissipated energy since t = 0 (J; None:
        zeros). ``energy.residual`` is left 0: :func:`fill_residual` computes it from the whole
        run.
        """
        inst = self.system.instant(t, y) if instant is None else instant
        return self.rows_of(stack_instants([inst]),
                            None if flows is None else np.asarray(flows, float)[None])[0]

    def rows(self, times, states, flows=None) -> np.ndarray:
        """The result rows (k, columns) at the times (k,) and states (k, ny), in time order
        (the angles continue from the previous rows): :meth:`.system.System.instants`
        evaluates them all in one compiled call. ``flows`` (k, 3) or None as in :meth:`row`."""
        return self.rows_of(self.system.instants(times, states), flows)

    def rows_of(self, b, flows=None) -> np.ndarray:
        """The result rows of the stacked instants ``b`` (:func:`stack_instants`,
        :meth:`.system.System.instants`), in time order."""
        T = self.system.tree
        k_rows = b.t.size
        out = np.empty((k_rows, len(self.names)))
        out[:, 0] = b.t
        R, pb, hp, w, vh, x = b.R, b.pb, b.hp, b.w, b.vh, b.x
        nb = R.shape[1]
        d = pb - hp
        v = vh + _cross(w, d)
        eps = x[..., :3]
        acc = x[..., 3:] + _cross(eps, d) + _cross(w, _cross(w, d))
        # Bryant angles: bodies, then the quaternion hinges
        raw = [_bryant_raw(R.reshape(-1, 3, 3)).reshape(k_rows, nb, 3)]
        qspecs = [s for s in self.hinge_specs if s["quat"]]
        if qspecs:
            quats = np.stack([b.q[:, s["qo"] + s["ntrans"]:s["qo"] + s["ntrans"] + 4]
                              for s in qspecs], axis=1)
            quats = quats / np.linalg.norm(quats, axis=2)[..., None]
            raw.append(_bryant_raw(_quat_matrices(quats.reshape(-1, 4))).reshape(k_rows, -1, 3))
        angles = continue_bryant_rows(np.concatenate(raw, axis=1), self._prev)
        self._prev = angles[-1].copy()
        block = np.concatenate([pb, angles[:, :nb], R.reshape(k_rows, nb, 9), v, w, acc, eps],
                               axis=2)
        k = 1 + self.n_body_cols * len(self.body_order)
        out[:, 1:k] = block[:, self.body_order].reshape(k_rows, -1)
        # hinges
        q, u, ud, tau, Wh = b.q, b.u, b.udot, b.tau, b.Wh
        iq = 0
        for s in self.hinge_specs:
            i, qo, uo = s["i"], s["qo"], s["uo"]
            if s["quat"]:
                nt = s["ntrans"]
                out[:, k:k + nt] = q[:, qo:qo + nt]
                out[:, k + nt:k + nt + 3] = angles[:, nb + iq]
                out[:, k + nt + 3:k + nt + 7] = quats[:, iq]
                iq += 1
                k += nt + 7
            else:
                out[:, k:k + s["nq"]] = q[:, qo:qo + s["nq"]]
                k += s["nq"]
            n = s["nu"]
            out[:, k:k + n] = u[:, uo:uo + n]
            out[:, k + n:k + 2 * n] = ud[:, uo:uo + n]
            k += 2 * n
            W = Wh[:, i] * s["sgn"]
            out[:, k:k + 3] = W[:, 3:]
            out[:, k + 3:k + 6] = W[:, :3]
            k += 6
            for j, jq in s["drv"]:
                # the hinge's total generalised load minus its own spring and damper
                out[:, k] = tau[:, j] + T.hk[j] * (q[:, jq] - T.href[j]) + T.hc[j] * u[:, j]
                k += 1
        # energies
        ek, eg, ee = self._energies(b)
        out[:, k] = ek
        out[:, k + 1] = eg
        out[:, k + 2] = ee
        out[:, k + 3] = eg + ee
        out[:, k + 4] = ek + eg + ee
        out[:, k + 5:k + 8] = 0.0 if flows is None else flows
        out[:, k + 8] = 0.0
        return out

    def _energies(self, b):
        """Kinetic, gravity and elastic energies (k,) of the stacked instants ``b``."""
        sys_ = self.system
        T, F = sys_.tree, sys_.forces
        R, w = b.R, b.w
        vc = b.vh + _cross(w, b.pc - b.hp)
        wb = _matT_vec(R, w)                                  # body axes
        Jw = _mat_vec(T.JCl, wb)
        ek = 0.5 * (np.sum(T.mass * np.sum(vc * vc, axis=2), axis=1)
                    + np.sum(np.sum(wb * Jw, axis=2), axis=1))
        g = F.gravity
        eg = -np.sum(T.mass * (b.pc[..., 0] * g[0] + b.pc[..., 1] * g[1] + b.pc[..., 2] * g[2]),
                     axis=1)
        ee = np.zeros(b.t.size)
        q = b.q
        for i in self._springs:
            o, n, qo = T.uo[i], T.nu[i], T.qo[i]
            k = T.hk[o:o + n]
            code_type = sys_.model.hinge(sys_.hinges[i]).type
            if code_type in _QUAT_TYPES:
                nt = 3 if code_type != "spherical" else 0
                dq = q[:, qo:qo + nt] - T.href[o:o + nt]
                ee += 0.5 * np.sum(k[:nt] * dq * dq, axis=1)
                Rrel = _quat_matrices(q[:, qo + nt:qo + nt + 4])
                for r in range(b.t.size):
                    phi = _rotvec(Rrel[r] @ T.hRref[i].T)
                    ee[r] += 0.5 * float(np.sum(k[nt:] * phi * phi))
            else:
                dq = q[:, qo:qo + n] - T.href[o:o + n]
                ee += 0.5 * np.sum(k * dq * dq, axis=1)

        def attach(body, Rl, pl):
            if body < 0:
                return np.broadcast_to(Rl, R.shape[:1] + (3, 3)), np.broadcast_to(pl, (R.shape[0], 3))
            return _mat_mat(R[:, body], Rl), b.pb[:, body] + _mat_vec(R[:, body], pl)

        for f in self._sd:
            _, pi_ = attach(F.sd_bi[f], F.sd_Ri[f], F.sd_pi[f])
            _, po = attach(F.sd_bo[f], F.sd_Ro[f], F.sd_po[f])
            L = np.linalg.norm(pi_ - po, axis=1)
            ee += 0.5 * F.sd_k[f] * (L - F.sd_L0[f]) ** 2
        zero = np.zeros(3)
        for f in self._rs:
            Ri, _ = attach(F.rs_bi[f], F.rs_Ri[f], zero)
            Ro, _ = attach(F.rs_bo[f], F.rs_Ro[f], zero)
            for r in range(b.t.size):
                phi = _rotvec(Ro[r].T @ Ri[r])
                ee[r] += 0.5 * F.rs_k[f] * float(phi @ phi)
        return ek, eg, ee
