"""The loads on one body at one instant of a run: what a stress analysis of that part needs.

At an output time of a stored run, a body is held by its hinges, pushed by the force elements
and contacts on it and pulled by gravity, and it accelerates. By d'Alembert's principle the
hinge reactions, the applied loads, gravity and the inertia loads (``-m a_C`` at the mass centre
and ``-(J_C alpha + omega x J_C omega)``) are in equilibrium: :func:`loads_at` collects them as
a list of :class:`Load` (force and torque about an application point, global axes, SI units)
and :class:`InstantLoads` sums them (:meth:`InstantLoads.residual`), the check that the
collection is complete.

Where each load comes from
--------------------------
* hinges: the result columns ``<Hinge>.Fx .. Tz`` are the wrench the hinge applies on its
  *input* body at the input marker's origin (:mod:`.table`) of the model as the run integrated
  it (:func:`~..analysis.start.resolve`: a revolute hinge whose markers were drawn apart along
  the pin, as on the bores of stacked parts, joins them on the output marker's plane, with a
  copy of the input marker moved there); the output body gets the opposite wrench at the same
  point. Each body's load is given at its own marker of the hinge (where its face was picked),
  its torque carried there: ``T + (p_column - p_marker) x F``, so the moment balance holds
  whatever the markers' axial offset. Spring, damper and driver loads of the hinge are in it.
* force elements (point forces and torques, spring-dampers, rotational spring-dampers),
  contacts and the hinges' stops: the force laws' own compiled code
  (:func:`...elements.forces.applied_loads`) evaluated on the row's body states, one element at
  a time, so that each load is named after its element.
* gravity: ``m g`` at the mass centre.
* inertia: from the body columns ``ax .. az`` (acceleration of the base-frame origin),
  ``wx .. wz`` and ``alphax .. alphaz`` and the body's mass properties.

Couplers (gear pairs, rack and pinion) act through their hinges' generalised loads, which are
not among the columns: a body on a coupled hinge is named in :attr:`InstantLoads.notes` and its
residual shows what is missing.

The instant is an output row of the run (no interpolation: the loads of one row are consistent
with each other); :func:`row_at` picks the row nearest a time, :func:`peak_row` the row where a
quantity (:func:`quantity`) peaks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np

from ..analysis.kinematics import drawn_distance_of
from ..analysis.start import resolve
from ..elements import forces as force_laws
from ..elements.forces import stop
from ..maths.rotations import bryant_to_matrix, inertia_vector_to_tensor, parallel_axis
from ..model.problems import ModelError
from ..model.timefunction import parse

#: The kinds of :class:`Load`, in the order :func:`loads_at` lists them.
KINDS = ("hinge", "force", "contact", "stop", "gravity", "inertia")


@dataclass
class Load:
    """One load on the body: a force at ``point`` and a torque, global axes.

    Attributes
    ----------
    name : str
        The element it comes from (hinge, force, contact name), ``gravity``, ``inertia``.
    kind : str
        One of :data:`KINDS`.
    force : ndarray (3,)
        N, global axes.
    torque : ndarray (3,)
        N m, global axes: the couple that goes with ``force`` applied at ``point``.
    point : ndarray (3,)
        m, global: where the force acts (a marker's origin, the mass centre).
    marker : MarkerRef or None
        The body's marker the load acts at (hinge and force markers), None for gravity, inertia
        and loads at a point of no marker (contacts).
    detail : str
        What the load is, for a table (``reaction on the input body``, ``-m a_C``...).
    """

    name: str
    kind: str
    force: np.ndarray
    torque: np.ndarray
    point: np.ndarray
    marker: object = None
    detail: str = ""

    def moment_about(self, o) -> np.ndarray:
        """The load's moment about point ``o`` (m), N m."""
        return self.torque + np.cross(self.point - np.asarray(o, dtype=float), self.force)


@dataclass
class InstantLoads:
    """The loads on ``body`` at output row ``row`` (time ``time``, s) of a run.

    ``loads`` lists every :class:`Load`; ``mass_center`` (3,) is the body's mass centre (m,
    global); ``rotation`` (3, 3) and ``origin`` (3,) its base frame at that instant (base-frame
    components to global); ``notes`` what is not included.
    """

    body: str
    row: int
    time: float
    loads: list
    mass_center: np.ndarray
    rotation: np.ndarray
    origin: np.ndarray
    mass: float
    acceleration: np.ndarray = field(default_factory=lambda: np.zeros(3))   #: of C, m/s^2
    angular_velocity: np.ndarray = field(default_factory=lambda: np.zeros(3))      #: rad/s
    angular_acceleration: np.ndarray = field(default_factory=lambda: np.zeros(3))  #: rad/s^2
    notes: list = field(default_factory=list)

    def of_kind(self, *kinds) -> list:
        """The loads of these kinds."""
        return [ld for ld in self.loads if ld.kind in kinds]

    def resultant(self, kinds=None):
        """Sum of the forces (N) and of the moments about the mass centre (N m) of the loads (of
        ``kinds``, default all): ``(F (3,), M (3,))``, both zero in equilibrium."""
        sel = self.loads if kinds is None else self.of_kind(*kinds)
        f = np.zeros(3)
        m = np.zeros(3)
        for ld in sel:
            f += ld.force
            m += ld.moment_about(self.mass_center)
        return f, m

    def scale(self):
        """The largest load's force (N) and moment about the mass centre (N m): what the residual
        is measured against."""
        fs = max((float(np.linalg.norm(ld.force)) for ld in self.loads), default=0.0)
        ms = max((float(np.linalg.norm(ld.moment_about(self.mass_center))) for ld in self.loads),
                 default=0.0)
        return fs, ms

    def residual(self):
        """Equilibrium check: ``(|sum F| / largest |F|, |sum M| / largest |M|)``, each 0 for a
        complete collection (0 when there is no load of that kind at all)."""
        f, m = self.resultant()
        fs, ms = self.scale()
        return (float(np.linalg.norm(f)) / fs if fs > 0 else 0.0,
                float(np.linalg.norm(m)) / ms if ms > 0 else 0.0)

    def largest_force(self) -> float:
        """The largest |force| of the loads other than inertia and gravity (N)."""
        return max((float(np.linalg.norm(ld.force)) for ld in self.loads
                    if ld.kind not in ("inertia", "gravity")), default=0.0)

    def to_local(self, v) -> np.ndarray:
        """A global vector in the body's base-frame axes."""
        return self.rotation.T @ np.asarray(v, dtype=float)

    def moved_to(self, rotation, origin) -> "InstantLoads":
        """The same loads carried with the body to the base pose (``rotation`` (3, 3), ``origin``
        (3,) m): the body as drawn, where its solids are, for a stress analysis. Forces and
        torques turn with the body, points move with it; the residual is unchanged."""
        Rn = np.asarray(rotation, dtype=float)
        on = np.asarray(origin, dtype=float)
        Q = Rn @ self.rotation.T

        def point(p):
            return on + Q @ (p - self.origin)

        loads = [Load(ld.name, ld.kind, Q @ ld.force, Q @ ld.torque, point(ld.point), ld.marker,
                      ld.detail) for ld in self.loads]
        return InstantLoads(self.body, self.row, self.time, loads, point(self.mass_center),
                            Rn.copy(), on.copy(), self.mass, Q @ self.acceleration,
                            Q @ self.angular_velocity, Q @ self.angular_acceleration,
                            list(self.notes))

    def drawn(self, model) -> "InstantLoads":
        """:meth:`moved_to` the body's base pose as drawn in ``model``."""
        b = model.body(self.body)
        return self.moved_to(bryant_to_matrix(b.orientation), b.position)

    def table(self) -> list:
        """Rows ``(name, kind, detail, F (3,), T (3,), point (3,))`` for a table, SI units."""
        return [(ld.name, ld.kind, ld.detail, ld.force, ld.torque, ld.point) for ld in self.loads]


# --------------------------------------------------------------------------------------------------
# Which instant
# --------------------------------------------------------------------------------------------------

def quantity(model, results, spec: str):
    """The values (n_times,) and unit of a quantity named by ``spec``, whose peak picks an instant.

    ``spec`` is
    * a result column (``Rod.ax``, ``MainBearing.Tz``): its absolute value;
    * ``|<prefix>|`` with three columns ``<prefix>x, y, z`` (``|MainBearing.F|``, ``|Rod.alpha|``):
      the vector's length;
    * ``<Force>.magnitude`` of a force element with a magnitude (``GasForce.magnitude``): the
      absolute value of its time function at the output times;
    * ``<Body>.inertia``: the size of the body's d'Alembert inertia force ``|m a_C|`` (N), the
      acceleration of its mass centre from the body columns.

    Raises KeyError naming the quantity when it is none of these.
    """
    from ..model.columns import unit_of
    s = spec.strip()
    if s.startswith("|") and s.endswith("|"):
        prefix = s[1:-1].strip()
        names = [prefix + a for a in "xyz"]
        missing = [n for n in names if n not in results]
        if missing:
            raise KeyError(f"'{spec}': no columns {', '.join(missing)} in the run")
        return np.linalg.norm(results.vector(prefix), axis=1), unit_of(names[0])
    if s in results:
        return np.abs(results.column(s)), unit_of(s)
    owner, _, qty = s.rpartition(".")
    if qty == "inertia":
        b = model.body(owner)
        if b is not None and not model.is_ground(owner) and f"{owner}.R11" in results:
            R = results.rotation(owner)
            r = R @ b.mass_center.position
            w, alpha = results.vector(f"{owner}.w"), results.vector(f"{owner}.alpha")
            a_c = (results.vector(f"{owner}.a") + np.cross(alpha, r)
                   + np.cross(w, np.cross(w, r)))
            return float(b.mass) * np.linalg.norm(a_c, axis=1), "N"
    if qty == "magnitude":
        f = next((f for f in model.forces if f.name == owner), None)
        if f is not None and "magnitude" in force_laws.FORCE_TYPES[f.type].fields:
            fn = parse(f.magnitude or "0", f"Force '{f.name}'", "Magnitude")
            unit = force_laws.FORCE_TYPES[f.type].units.get("magnitude", "")
            return np.abs(np.array([fn(t) for t in results.time], dtype=float)), unit
    raise KeyError(f"'{spec}' is no quantity of this run: give a column (Rod.ax), a vector "
                   "|prefix| (|MainBearing.F|), <Force>.magnitude or <Body>.inertia")


def peak_row(model, results, spec: str) -> int:
    """The output row where the quantity ``spec`` (:func:`quantity`) is largest (the first if
    several are equal)."""
    values, _ = quantity(model, results, spec)
    return int(np.argmax(values))


def row_at(results, time: float) -> int:
    """The output row nearest ``time`` (s)."""
    t = results.time
    if len(t) == 0:
        raise ValueError("the run has no rows")
    return int(np.argmin(np.abs(t - float(time))))


# --------------------------------------------------------------------------------------------------
# The loads
# --------------------------------------------------------------------------------------------------

def _marker_local(model, ref):
    """A marker's (rotation (3, 3), origin (3,)) in its part's base frame; for the ground in
    global axes."""
    part = model.part(ref.body)
    mk = part.marker(ref.marker)
    if model.is_ground(ref.body):
        R0 = bryant_to_matrix(part.orientation)
        return R0 @ mk.frame.rotation, part.position + R0 @ mk.frame.position
    return mk.frame.rotation, mk.frame.position.copy()


class _States:
    """The bodies' state arrays of one result row (:mod:`...maths.bodies`): ``R``, ``pb``
    (base origins), ``pc`` (mass centres), ``w``, ``v`` (base-origin velocity), ``a``, ``alpha``."""

    def __init__(self, model, results, row):
        self.names = [b.name for b in model.bodies]
        self.index = {n: i for i, n in enumerate(self.names)}
        n = len(self.names)
        d = results.data[row]
        col = results._index

        def vec(name, q):
            return np.array([d[col[f"{name}.{q}{a}"]] for a in "xyz"])

        self.R = np.zeros((n, 3, 3))
        self.pb, self.pc, self.w, self.v = (np.zeros((n, 3)) for _ in range(4))
        self.a, self.alpha = np.zeros((n, 3)), np.zeros((n, 3))
        self.mass = np.array([b.mass for b in model.bodies], dtype=float)
        for i, b in enumerate(model.bodies):
            nm = b.name
            self.R[i] = np.array([[d[col[f"{nm}.R{r}{c}"]] for c in (1, 2, 3)] for r in (1, 2, 3)])
            self.pb[i] = np.array([d[col[f"{nm}.{a}"]] for a in "xyz"])
            self.pc[i] = self.pb[i] + self.R[i] @ b.mass_center.position
            self.w[i] = vec(nm, "w")
            self.v[i] = vec(nm, "v")
            self.a[i] = vec(nm, "a")
            self.alpha[i] = vec(nm, "alpha")

    def marker(self, model, ref):
        """A marker's global origin (m)."""
        _, p = _marker_local(model, ref)
        if model.is_ground(ref.body):
            return p
        i = self.index[ref.body]
        return self.pb[i] + self.R[i] @ p


def _element_loads(model, st, elements, times_value):
    """The force (n, 3) and torque about the mass centres (n, 3) of a shim model holding only
    ``elements`` (a dict: forces, contacts, hinges lists), by the force laws' compiled code."""
    shim = SimpleNamespace(gravity=np.zeros(3), forces=elements.get("forces", []),
                           contacts=elements.get("contacts", []),
                           hinges=elements.get("hinges", []))
    fns = []

    def marker(ref):
        R, p = _marker_local(model, ref)
        return (-1 if model.is_ground(ref.body) else st.index[ref.body]), R, p

    def magnitude(f):
        text = f.magnitude
        if text is None or text.strip() in ("", "0"):
            return -1
        fns.append(parse(text, f"Force '{f.name}'", "Magnitude"))
        return len(fns) - 1

    packed = force_laws.pack(shim, marker, magnitude, drawn_distance_of(model))
    mags = np.array([fn(times_value) for fn in fns] or [0.0])
    n = len(st.names)
    FC, TC = np.zeros((n, 3)), np.zeros((n, 3))
    force_laws.applied_loads(mags, packed, np.zeros(n), st.R, st.pb, st.pc, st.pb, st.w, st.v,
                             FC, TC)
    return FC, TC


def _as_run(model):
    """``model`` as the run integrated it (:func:`~..analysis.start.resolve`); ``model`` itself
    when it cannot be resolved any more (edited since the run: the residual then says so)."""
    try:
        return resolve(model)[0]
    except ModelError:
        return model


def _hinge_prefix(model, h) -> str:
    bodies = {b.name for b in model.bodies}
    return f"hinge:{h.name}" if h.name in bodies else h.name


def loads_at(model, results, body: str, row: int) -> InstantLoads:
    """Every load on ``body`` at output row ``row`` of ``results`` (a run of ``model``).

    Parameters
    ----------
    model : MultibodySystem
        The model the run was made of (its bodies' mass properties, markers, forces).
    results : Results
        The run (its body and hinge columns).
    body : str
        The body's name (a rigid body of the model, not the ground).
    row : int
        The output row (:func:`row_at`, :func:`peak_row`).

    Returns
    -------
    InstantLoads
    """
    b = model.body(body)
    if b is None or model.is_ground(body):
        raise KeyError(f"'{body}' is no rigid body of model '{model.name}'"
                       + (" (the ground takes no stress analysis here)"
                          if model.is_ground(body) else ""))
    if not -len(results) <= row < len(results):
        raise IndexError(f"row {row}: the run has {len(results)} rows")
    row = row % len(results)
    st = _States(model, results, row)
    t = float(results.time[row])
    i = st.index[body]
    R, pc = st.R[i], st.pc[i]
    loads, notes = [], []

    # hinges: the reaction on the input body, its opposite on the output body, both at the
    # point of the columns (the input marker of the model as run), each carried to the body's
    # own marker of the hinge
    hinges = [h for h in model.hinges if body in (h.input.body, h.output.body)]
    run_model = _as_run(model) if hinges else model
    for h in hinges:
        prefix = _hinge_prefix(model, h)
        F = np.array([results.data[row, results._index[f"{prefix}.F{a}"]] for a in "xyz"])
        T = np.array([results.data[row, results._index[f"{prefix}.T{a}"]] for a in "xyz"])
        p = st.marker(run_model, run_model.hinge(h.name).input)
        for side, ref in (("input", h.input), ("output", h.output)):
            if ref.body != body:
                continue
            sign = 1.0 if side == "input" else -1.0
            other = h.output.body if side == "input" else h.input.body
            at = st.marker(model, ref)
            loads.append(Load(h.name, "hinge", sign * F, sign * T + np.cross(p - at, sign * F),
                              at, ref, f"{h.type} hinge to {other}"))
    # force elements, contacts, stops: one element at a time
    for f in model.forces:
        ends = [f.input] + ([f.output] if f.output is not None else [])
        if not any(r.body == body for r in ends):
            continue
        FC, TC = _element_loads(model, st, {"forces": [f]}, t)
        ref = next(r for r in ends if r.body == body)
        p = st.marker(model, ref)
        loads.append(Load(f.name, "force", FC[i].copy(), TC[i] + np.cross(pc - p, FC[i]), p,
                          ref, f.type.replace("_", " ")))
    for c in getattr(model, "contacts", ()):
        if body not in (c.input.body, c.output.body):
            continue
        FC, TC = _element_loads(model, st, {"contacts": [c]}, t)
        p = _contact_point(results, row, c.name, pc)
        loads.append(Load(c.name, "contact", FC[i].copy(), TC[i] + np.cross(pc - p, FC[i]), p,
                          None, "contact"))
    for h in model.hinges:
        if body not in (h.input.body, h.output.body) or not list(stop.stops_of([h])):
            continue
        FC, TC = _element_loads(model, st, {"hinges": [h]}, t)
        if not (np.any(FC[i]) or np.any(TC[i])):
            continue
        ref = h.input if h.input.body == body else h.output
        p = st.marker(model, ref)
        loads.append(Load(f"{h.name} stop", "stop", FC[i].copy(),
                          TC[i] + np.cross(pc - p, FC[i]), p, ref, "limit stop"))
    for c in getattr(model, "couplers", ()):
        coupled = [model.hinge(r.hinge) for r in (c.first, c.second)]
        if any(body in (h.input.body, h.output.body) for h in coupled if h is not None):
            notes.append(f"Coupler '{c.name}' acts on {body} through its hinges: its load is not "
                         "included")
    # gravity and inertia (d'Alembert)
    m = float(b.mass)
    g = np.asarray(model.gravity, dtype=float)
    if np.any(g):
        loads.append(Load("gravity", "gravity", m * g, np.zeros(3), pc.copy(), None, "m g"))
    r = pc - st.pb[i]
    w, alpha = st.w[i], st.alpha[i]
    a_c = st.a[i] + np.cross(alpha, r) + np.cross(w, np.cross(w, r))
    J_c_local = parallel_axis(inertia_vector_to_tensor(b.inertia), -m, b.mass_center.position)
    J_c = R @ J_c_local @ R.T
    loads.append(Load("inertia", "inertia", -m * a_c, -(J_c @ alpha + np.cross(w, J_c @ w)),
                      pc.copy(), None, "-m a_C, -(J_C alpha + w x J_C w)"))
    return InstantLoads(body, row, t, loads, pc.copy(), R.copy(), st.pb[i].copy(), m,
                        a_c, w.copy(), alpha.copy(), notes)


def _contact_point(results, row, name, default):
    """A contact's point (m, global) from its columns, ``default`` when it has none."""
    cols = [f"{name}.{a}" for a in "xyz"]
    if all(c in results for c in cols):
        return np.array([results.data[row, results._index[c]] for c in cols])
    return np.asarray(default, dtype=float).copy()


def loads_at_peak(model, results, body: str, spec: str) -> InstantLoads:
    """:func:`loads_at` the row where ``spec`` (:func:`quantity`) peaks."""
    return loads_at(model, results, body, peak_row(model, results, spec))


def loads_at_time(model, results, body: str, time: float) -> InstantLoads:
    """:func:`loads_at` the output row nearest ``time`` (s)."""
    return loads_at(model, results, body, row_at(results, time))
