"""The drawing is the start: what a run does with the drawn configuration at t = 0.

Every hinge coordinate starts at its drawn value (measured from the markers' poses in the drawn
configuration) unless the model gives ``InitialCoordinates`` on purpose. Three things follow, done
once by :func:`resolve` before any formulation sees the model:

Drivers and motors
    A :class:`~.model.Driver` with ``from_start`` is ``q_start + f(t)``; a :class:`~.model.Motor`
    is such a driver with a constant-speed (optionally ramped) expression. :func:`resolve` writes
    both as plain drivers ``f(t)`` whose value at t = 0 is the start value, so every formulation
    reads ordinary drivers.
Spring references
    ``spring_reference_start`` relaxes a hinge's spring at the start values (no stored energy at
    t = 0); :func:`resolve` writes those values into ``spring_reference``.
Coaxial markers
    Markers picked on the bores of stacked parts sit mid-bore, some distance apart along the
    common pin. A revolute hinge whose markers differ only along their common z axis (axes
    parallel within :data:`ANGLE_TOLERANCE`, origins off the axis by less than
    :data:`LENGTH_TOLERANCE`) keeps that drawn axial offset: :func:`resolve` gives the hinge a
    copy of its input marker moved along the axis onto the output marker's origin (the
    markers' common plane), so nothing pulls the parts together. (A cylindrical hinge has the
    axial offset as its coordinate ``z`` already.)

Whatever then still moves a body at t = 0 away from where it is drawn (markers that do not meet as
the hinge wants, a driver whose value at t = 0 is not the start value, a loop that does not
close as drawn) is a *correction* of the drawing. :func:`start_report` computes the start
configuration the run will use (loops assembled by :func:`~.assembly.assemble`), compares every
body with its intended pose (the drawing, moved by the initial coordinates the model prescribes;
coordinates given as estimates are the assembly's to change) and lists the bodies that move more
than :data:`LENGTH_TOLERANCE` or turn more than :data:`ANGLE_TOLERANCE`, and why, in mm and
degrees; likewise prescribed or driven rates a loop cannot take, with the consistent values. :func:`prepare` refuses such a start
(:class:`StartCorrectionError`) unless the caller accepts it (``simulate(...,
accept_corrections=True)``, ``run --accept-corrections``): the user sees what moves before it moves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .kinematics import (Pose, _fit, _forward, _tree_steps, coordinate_labels,
                         coordinates_from_pose, drawn_poses, hinge_coordinates,
                         hinge_relative_pose, hinge_residual)
from ..elements.hinges import COORDINATE_KIND
from ..model.mechanism import Driver, MultibodySystem
from ..model.problems import ModelError, Problem
from ..maths.rotations import bryant_to_matrix
from ..model.timefunction import parse
from .texts import pair
from .topology import analyse

__all__ = ["LENGTH_TOLERANCE", "ANGLE_TOLERANCE", "BodyMove", "StartReport",
           "StartCorrectionError", "resolve", "start_report", "prepare", "format_length",
           "format_angle"]

#: A body whose start position differs from its intended one by more than this is reported (m).
LENGTH_TOLERANCE = 1e-5                     # 0.01 mm
#: ... or whose orientation differs by more than this angle (rad).
ANGLE_TOLERANCE = math.radians(0.01)
#: A cut hinge's prescribed rate counts as kept when the rate the assembled rates give it is
#: within this fraction of it (of 1, in rad/s or m/s, when it is smaller); else the start
#: check shows the difference.
CUT_RATE_TOLERANCE = 1e-9


def format_length(metres: float) -> str:
    """A length for people: ``'10 mm'`` (the document's unit), from metres."""
    return f"{metres * 1e3:.4g} mm"


def format_angle(radians: float) -> str:
    """An angle for people: ``'90 deg'``, from radians."""
    return f"{math.degrees(radians):.4g} deg"


def _pair_in_units(c: str, a: float, b: float, rate: bool = False) -> tuple[str, str]:
    """Two values of coordinate ``c`` (or of its rate, ``rate``) compared in a message: in mm or
    deg (/s), from m or rad (/s), with four significant digits for coordinates (as
    :func:`format_length` and :func:`format_angle` write them) and six for rates, more where it
    takes them to read differently (:func:`.texts.pair`)."""
    mm = COORDINATE_KIND[c] == "translation"
    texts = pair(a, b, 1e3 if mm else 180.0 / math.pi, least=6 if rate else 4)
    unit = ("mm" if mm else "deg") + ("/s" if rate else "")
    return tuple(f"{t} {unit}" for t in texts)


# --------------------------------------------------------------------------------------------------
# resolve
# --------------------------------------------------------------------------------------------------

def _start_values(model, h, poses):
    """The start value of each of a hinge's coordinates: given, else as drawn."""
    if h.initial_coordinates is not None:
        return np.array(h.initial_coordinates, dtype=float)
    return hinge_coordinates(model, h, poses)


def _keep_axial_offset(model, h, poses, relative) -> str | None:
    """Give a revolute hinge whose markers are apart only along the axis a marker on the common
    plane; return the note, or None when there is nothing to do. The markers' relative pose is
    kept in ``relative`` (by hinge name) unless the hinge gets the new marker."""
    if h.type != "revolute":
        return None
    R, d = hinge_relative_pose(model, h, poses)
    relative[h.name] = (R, d)
    # a revolute hinge has no translation: its residual's translation part is d itself, so the
    # markers that meet (most) are told apart before the rotation is fitted
    if abs(d[2]) <= 1e-12 or np.hypot(d[0], d[1]) > LENGTH_TOLERANCE:
        return None
    residual = coordinates_from_pose(h.type, R, d)[1]
    phi, e = residual[:3], residual[3:]
    axial = float(e[2])
    if (np.linalg.norm(phi) > ANGLE_TOLERANCE or np.hypot(e[0], e[1]) > LENGTH_TOLERANCE
            or abs(axial) <= 1e-12):
        return None
    body = _own_part(model, model.part(h.input.body))
    marker = body.marker(h.input.marker)
    out_part = model.part(h.output.body)
    R_out = bryant_to_matrix(out_part.orientation) @ out_part.marker(h.output.marker).frame.rotation
    R_body = bryant_to_matrix(body.orientation)
    # move the input marker by -axial along the output marker's z axis (global), in body axes
    shift = R_body.T @ (R_out[:, 2] * axial)
    ref = body.add_marker(marker.frame.position - shift, marker.frame.orientation,
                          label=f"{marker.label or marker.id} on the common plane of "
                                f"hinge {h.name}")
    h.input = ref
    del relative[h.name]
    return (f"Hinge '{h.name}': its markers are {format_length(abs(axial))} apart along the "
            "common axis; the parts keep that offset (the hinge joins them on the output "
            "marker's plane)")


def _copy(obj):
    """A shallow copy of a model object (its attributes shared, a name index left out)."""
    new = object.__new__(type(obj))
    new.__dict__.update(obj.__dict__)
    new.__dict__.pop("_lookup", None)
    return new


def _own_part(model, part):
    """``part`` replaced in ``model`` (a :func:`_resolve` copy) by a copy with its own marker
    list, so that markers added to it leave the model resolved from unchanged."""
    for parts in (model.grounds, model.bodies):
        for i, p in enumerate(parts):
            if p is part:
                new = parts[i] = _copy(part)
                new.markers = list(part.markers)
                return new
    return part


def _resolve_copy(model: MultibodySystem) -> MultibodySystem:
    """The copy :func:`resolve` changes: new lists of parts, hinges and forces, new hinges (with
    new driver lists and drivers), the rest shared (linear in the model's size, where a deep copy
    took seconds for 10,000 bodies). What resolve changes is assigned, never changed in place,
    and a part that gets a marker is copied first (:func:`_own_part`)."""
    new = _copy(model)
    new.grounds = list(model.grounds)
    new.bodies = list(model.bodies)
    new.forces = list(model.forces)
    new.gravity = model.gravity.copy()
    new.simulation = _copy(model.simulation)
    hinges = []
    for h in model.hinges:
        c = _copy(h)
        c.drivers = [_copy(d) for d in h.drivers]
        c.motors = list(h.motors)
        hinges.append(c)
    new.hinges = hinges
    return new


def _angular_velocity_as_rates(model, h, poses):
    """Write a hinge's initial angular velocity (output-marker axes) as the Bryant-angle rates
    of its rotation at the start angles (exact where the Bryant angles are regular)."""
    from .kinematics import local_motion_subspace
    start = _start_values(model, h, poses)
    E = local_motion_subspace("spherical", start[-3:])[:3]      # Bryant rates -> w
    if abs(np.linalg.det(E)) < 1e-9:
        raise ModelError([Problem(f"Hinge '{h.name}'", "InitialAngularVelocity",
                                  "the hinge starts at a singular orientation of its Bryant "
                                  "angles (middle angle at +-90 deg), where an angular velocity "
                                  "has no angle rates; start it a little away from there")])
    rates = h.vector("initial_rates").copy()
    rates[-3:] = np.linalg.solve(E, h.initial_angular_velocity)
    h.initial_rates = rates
    h.initial_angular_velocity = None


def resolve(model: MultibodySystem) -> tuple[MultibodySystem, list[str]]:
    """The model as every formulation reads it, and notes on what was done.

    A copy of ``model`` (a valid one: :meth:`~.model.MultibodySystem.check` it first; the copy
    shares with ``model`` the parts, forces and values it does not change: read it, do not change
    it in place) with
    motors and start-relative drivers written as plain drivers, start-relative spring
    references as values, initial angular velocities as Bryant-angle rates, and coaxial revolute
    markers on their common plane (see the module docstring). A model with none of these is returned as an equal copy.
    """
    model, notes, _, _ = _resolve(model)
    return model, notes


def _resolve(model: MultibodySystem):
    """:func:`resolve`, the drawn poses of the parts (:func:`~.kinematics.drawn_poses`, which
    what it does leaves unchanged) and the relative marker poses of the revolute hinges whose
    markers it leaves (by name)."""
    model = _resolve_copy(model)
    notes = []
    poses = drawn_poses(model)
    relative = {}
    for h in model.hinges:
        note = _keep_axial_offset(model, h, poses, relative)
        if note:
            notes.append(note)
    for h in model.hinges:
        if h.initial_angular_velocity is not None:
            _angular_velocity_as_rates(model, h, poses)
    for h in model.hinges:
        if not (h.motors or h.spring_reference_start or any(d.from_start for d in h.drivers)):
            continue
        coords = h.kind.coordinates
        start = _start_values(model, h, poses)
        drivers = [Driver(m.coordinate, m.expression(), True) for m in h.motors]
        h.motors = []
        h.drivers = list(h.drivers) + drivers
        for d in h.drivers:
            if d.from_start:
                q0 = float(start[coords.index(d.coordinate)])
                d.expression = f"{q0!r} + ({d.expression})"
                d.from_start = False
        if h.spring_reference_start:
            h.spring_reference = start.copy()
            h.spring_reference_start = False
    return model, notes, poses, relative


# --------------------------------------------------------------------------------------------------
# start_report
# --------------------------------------------------------------------------------------------------

@dataclass
class BodyMove:
    """A body that starts away from where it is drawn (or where the initial coordinates put it).

    ``distance`` (m): the largest displacement of its base-frame origin, mass centre and markers;
    ``angle`` (rad): the angle of the rotation between the two orientations.
    """

    name: str
    label: str
    distance: float
    angle: float

    def __str__(self) -> str:
        return (f"'{self.label or self.name}' starts {format_length(self.distance)} and "
                f"{format_angle(self.angle)} away from where it is drawn")


@dataclass
class StartReport:
    """The start configuration of a run and how it differs from the drawing.

    Attributes
    ----------
    labels : tuple of str
        Tree coordinates (:func:`~.kinematics.coordinate_labels`).
    q_drawn, q_intended, q_start : ndarray (n,)
        Tree coordinates as drawn, as intended (given initial coordinates, else drawn), and as
        the run starts (drivers' values at t = 0, loops assembled); m and rad.
    poses : dict of str to Pose
        Start pose of every part (base frames).
    intended : dict of str to Pose
        The drawing moved by the intended coordinates.
    moves : list of BodyMove
        When the start is corrected: every body that starts away from where it is drawn
        beyond the tolerances, largest first, measured from the drawing (what the designer
        sees move; bodies moved only by the initial coordinates given are among them).
    corrected : list of BodyMove
        The bodies that start away from their intended pose (the drawing moved by the initial
        coordinates given), measured from it: the correction itself.
    causes : list of (hinge name, text)
        Why: hinges whose markers do not meet as drawn, drivers that start elsewhere, loop
        corrections; in mm and degrees.
    notes : list of str
        What :func:`resolve` did that moves nothing (axial offsets kept).
    rate_changes : list of (label, given, assembled)
        Prescribed (or driven) rates the loops cannot take (m/s, rad/s), with the consistent
        values.
    cut_rate_changes : list of (label, prescribed, implied)
        Cut hinges' prescribed rates that the loop's other prescribed and driven rates
        contradict or that the assembly changes (m/s, rad/s), with the rates those make them
        (NaN: they contradict each other too).
    """

    labels: tuple
    q_drawn: np.ndarray
    q_intended: np.ndarray
    q_start: np.ndarray
    poses: dict
    intended: dict
    moves: list = field(default_factory=list)
    causes: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    rate_changes: list = field(default_factory=list)
    cut_rate_changes: list = field(default_factory=list)
    corrected: list = None

    def __post_init__(self):
        if self.corrected is None:
            self.corrected = list(self.moves)

    @property
    def moved(self) -> bool:
        """True when some body starts away from its intended pose beyond the tolerances, or a
        prescribed rate (of a tree hinge or of a cut hinge) cannot be kept."""
        return bool(self.corrected or self.rate_changes or self.cut_rate_changes)

    def problems(self) -> list[Problem]:
        """The moves and their causes as problems (element, field ``Start``)."""
        out = [Problem(f"RigidBody '{m.name}'", "Start", str(m)) for m in self.moves]
        out += [Problem(f"Hinge '{h}'", "Start", text) for h, text in self.causes]
        return out

    def __str__(self) -> str:
        lines = []
        if self.moved:
            lines.append("the start differs from the drawing or from the initial values given:")
            lines += [f"  {m}" for m in self.moves]
            lines += [f"  because hinge '{h}': {text}" for h, text in self.causes]
        else:
            lines.append("the start is the drawing (every body within "
                         f"{format_length(LENGTH_TOLERANCE)} and "
                         f"{format_angle(ANGLE_TOLERANCE)})")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


class StartCorrectionError(ModelError):
    """The run would start away from the drawing; ``report`` says how. Accept it explicitly."""

    def __init__(self, report: StartReport):
        self.report = report
        problems = report.problems()
        problems.append(Problem("Simulation", "Start",
                                "the run would move these parts before it starts; fix the model, "
                                "or accept the corrected start (simulate(..., "
                                "accept_corrections=True); CLI: run --accept-corrections; "
                                "FreeCAD: the Simulate panel asks)"))
        super().__init__(problems)


def _points(part) -> np.ndarray:
    """Base origin, mass centre and marker origins of a part, in its base frame (k, 3)."""
    pts = [np.zeros(3)] + [m.frame.position for m in part.markers]
    mc = getattr(part, "mass_center", None)
    if mc is not None:
        pts.append(mc.position)
    return np.array(pts)


def _stack(poses, names):
    """Rotations (n, 3, 3) and positions (n, 3) of ``poses`` in the order of ``names``."""
    if not names:
        return np.zeros((0, 3, 3)), np.zeros((0, 3))
    return (np.array([poses[n].R for n in names]), np.array([poses[n].p for n in names]))


def _intended_and_moves(model, drawn, fk_drawn, fk_intended, poses):
    """Every body's intended pose (the drawing moved by the intended coordinates) and the
    bodies that start away from it, largest move first (all bodies at once)."""
    bodies = [b for b in model.bodies if b.name in poses]
    names = [b.name for b in bodies]
    Ri, pi = _stack(fk_intended, names)
    Rd, pd = _stack(fk_drawn, names)
    R0, p0 = _stack(drawn, names)
    Rs, ps = _stack(poses, names)
    # intended = fk_intended * fk_drawn^-1 * drawn
    RdT = Rd.transpose(0, 2, 1)
    Ra = Ri @ RdT
    pa = pi - np.einsum("nij,nj->ni", Ra, pd)
    Rn = Ra @ R0
    pn = pa + np.einsum("nij,nj->ni", Ra, p0)
    intended = {n: Pose(Rn[k], pn[k]) for k, n in enumerate(names)}
    # the largest displacement of a body's base origin, mass centre and markers
    pts = [_points(b) for b in bodies]
    counts = np.array([len(x) for x in pts], dtype=np.int64)
    owner = np.repeat(np.arange(len(bodies)), counts)
    P = np.concatenate(pts) if pts else np.zeros((0, 3))
    gap = (np.einsum("nij,nj->ni", Rs[owner] - Rn[owner], P) + (ps - pn)[owner])
    norms = np.linalg.norm(gap, axis=1)
    dist = (np.maximum.reduceat(norms, np.concatenate([[0], np.cumsum(counts)[:-1]]))
            if len(bodies) else np.zeros(0))
    cos = (np.einsum("nij,nij->n", Rs, Rn) - 1.0) / 2.0      # trace(Rs Rn^T)
    angle = np.arccos(np.clip(cos, -1.0, 1.0))
    moves = [BodyMove(b.name, b.label, float(dist[k]), float(angle[k]))
             for k, b in enumerate(bodies)
             if dist[k] > LENGTH_TOLERANCE or angle[k] > ANGLE_TOLERANCE]
    moves.sort(key=lambda m: (m.distance, m.angle), reverse=True)
    return intended, moves


#: A spring-damper shorter than this (m) has no line of action: the solver applies no tension.
ZERO_LENGTH = 1e-12


def _zero_length_springs(model, poses, drawn) -> list[Problem]:
    """Spring-dampers whose markers coincide at the start while they would pull: refused.

    A spring-damper's tension acts along the line between its markers' origins; at length 0 that
    line has no direction and the solver applies nothing (``kernels``: lengths below
    :data:`ZERO_LENGTH`), so a start tension ``stiffness * (0 - free length) + magnitude(0)``
    other than 0 would be ignored without a word. A tension of 0 there (free length 0, no
    magnitude) is the force's limit and is kept.
    """
    from .kinematics import marker_pose
    from ..model.timefunction import parse as expression
    out = []
    for f in model.forces:
        if f.type != "spring_damper" or f.output is None:
            continue
        pi = marker_pose(model, f.input, poses).p
        po = marker_pose(model, f.output, poses).p
        length = float(np.linalg.norm(pi - po))
        if not length < ZERO_LENGTH:
            continue
        if f.free_length is not None:
            free = f.free_length
        else:                          # None: the length as drawn
            free = float(np.linalg.norm(marker_pose(model, f.input, drawn).p
                                        - marker_pose(model, f.output, drawn).p))
        spring = f.stiffness * (0.0 - free)
        try:
            magnitude = float(expression(f.magnitude or "0")(0.0))
        except (ModelError, ValueError, ArithmeticError):
            continue                   # the run reports the expression itself
        tension = spring + magnitude
        if tension == 0.0:
            continue
        fields = [name for name, value in (("FreeLength", spring), ("Magnitude", magnitude))
                  if value != 0.0]
        out.append(Problem(
            f"Force '{f.name}'", ", ".join(fields),
            f"markers {f.input} and {f.output} coincide at the start: at length 0 a "
            f"spring-damper has no line of action, its start tension of {tension:.4g} N "
            "would be ignored; move one marker off the other, or use point forces"))
    return out


#: A contact whose shapes overlap at the start is refused when its force is more than this many
#: times the weight of the lighter body it moves and more than this many times the static
#: loads it balances (:class:`_StaticBalance`: springs' preloads, applied forces, gravity, the
#: other contacts), and its depth is more than :data:`OVERLAP_SIZE` of its smallest shape
#: dimension: a drawing that overlaps, not one that rests or is preloaded (a valve spring
#: presses its follower on a cam by microns).
OVERLAP_WEIGHTS = 10.0
#: See :data:`OVERLAP_WEIGHTS`: the depth's share of the smallest radius or half edge.
OVERLAP_SIZE = 1e-3


class _StaticBalance:
    """The static loads at the start as generalised forces on the mechanism's free motions.

    Every load is taken with the bodies at rest in the start configuration: gravity, the force
    elements (point forces and torques at their magnitudes' values at t = 0, spring-dampers'
    and rotational springs' elastic parts, the hinges' stops) and the contacts, by the force
    laws' own compiled code (:func:`...elements.forces.applied_loads`), and the tree hinges'
    springs ``-k (q - q_ref)`` (of free and bushing hinges the translations: the springs of
    their rotations and of spherical hinges act on rotation vectors and are left out). A
    body's load (force at its mass centre, torque) gives the generalised force ``J^T [T; F]``
    on the tree coordinates (:func:`.kinematics.twist_jacobian`), projected onto the motions
    the constraints leave free (the null space of the loops' and couplers' rows and of the
    driven coordinates: a driver or a loop holds what acts on the others).

    :meth:`carried` says how much of a contact's generalised force the other static loads
    oppose: a follower pressed onto its cam by a spring's preload, at the depth that preload
    gives, is carried entirely (the spring's load is the contact's, reversed); a drawing whose
    shapes overlap throws the bodies apart with a force nothing else balances.
    """

    def __init__(self, model, topology, q, poses, driven):
        from scipy.linalg import null_space
        from ..elements import forces as laws
        from ..elements.hinges import QUATERNION_TYPES
        from .kinematics import (coordinate_labels, coordinate_slices, drawn_distance_of,
                                 loop_jacobian, twist_jacobian)
        self.model = model
        names = [b.name for b in model.bodies]
        n = len(names)
        self.R = np.array([poses[b].R for b in names]).reshape(n, 3, 3)
        self.pb = np.array([poses[b].p for b in names], dtype=float).reshape(n, 3)
        self.pc = self.pb + np.einsum("nij,nj->ni", self.R, np.array(
            [b.mass_center.position for b in model.bodies], dtype=float).reshape(n, 3))
        self.mass = np.array([b.mass for b in model.bodies], dtype=float)
        self.J = [twist_jacobian(model, topology, b, q, poses, self.pc[i])
                  for i, b in enumerate(names)]
        self.poses, self.index, self.laws = poses, {b: i for i, b in enumerate(names)}, laws
        self.distance = drawn_distance_of(model)
        # the motions left free
        labels = coordinate_labels(model, topology)
        rows = [loop_jacobian(model, topology, q, poses)[0]] if (
            topology.cut_hinges or getattr(model, "couplers", ())) else []
        for lab in driven:
            e = np.zeros((1, len(labels)))
            e[0, labels.index(lab)] = 1.0
            rows.append(e)
        C = np.vstack(rows) if rows else np.zeros((0, len(labels)))
        self.free = null_space(C) if C.shape[0] else np.eye(len(labels))
        # the static loads but the contacts', and each contact's
        Q = self._generalised({"forces": list(model.forces), "hinges": list(model.hinges)},
                              np.asarray(model.gravity, dtype=float))
        slices = coordinate_slices(model, topology)
        for name in topology.tree_hinges:
            h = model.hinge(name)
            if h.stiffness is None:
                continue
            k, ref, sl = h.vector("stiffness"), h.vector("spring_reference"), slices[name]
            # rotation vectors' springs (spherical, free, bushing) left out: translations
            used = len(h.kind.translations) if h.type in QUATERNION_TYPES else len(k)
            Q[sl.start:sl.start + used] -= (k * (q[sl] - ref))[:used]
        self.contacts = {c.name: self._generalised({"contacts": [c]}, np.zeros(3))
                         for c in model.contacts}
        self.total = Q + sum(self.contacts.values(), np.zeros_like(Q))

    def _marker(self, ref):
        """A marker's attachment as the force laws' ``pack`` wants it."""
        from .kinematics import _marker_local
        Rm, pm = _marker_local(self.model, ref)
        if ref.body in self.index:
            return self.index[ref.body], Rm, pm
        base = self.poses[ref.body]                     # the ground: in global axes
        return -1, base.R @ Rm, base.p + base.R @ pm

    def _generalised(self, elements, gravity) -> np.ndarray:
        """The generalised force (tree coordinates) of ``elements`` (force laws' model lists)
        and ``gravity`` with the bodies at rest where they start."""
        from types import SimpleNamespace
        shim = SimpleNamespace(gravity=gravity, forces=elements.get("forces", []),
                               contacts=elements.get("contacts", []),
                               hinges=elements.get("hinges", []))
        functions = []

        def magnitude(f):
            functions.append(parse(f.magnitude or "0", f"Force '{f.name}'", "Magnitude"))
            return len(functions) - 1

        packed = self.laws.pack(shim, self._marker, magnitude, self.distance)
        mags = np.array([fn(0.0) for fn in functions] or [0.0], dtype=float)
        n = len(self.mass)
        FC, TC, zero = np.zeros((n, 3)), np.zeros((n, 3)), np.zeros((n, 3))
        self.laws.applied_loads(mags, packed, self.mass, self.R, self.pb, self.pc, self.pb,
                                zero, zero, FC, TC)
        Q = np.zeros(self.free.shape[0])
        for i, J in enumerate(self.J):
            Q += J.T @ np.concatenate([TC[i], FC[i]])
        return Q

    def moves(self, contact) -> bool:
        """Whether every body of ``contact`` moves with the tree (an island body has no
        coordinates: no generalised force to weigh)."""
        return all(np.any(self.J[self.index[r.body]]) for r in (contact.input, contact.output)
                   if r.body in self.index)

    def carried(self, contact) -> tuple[float, float]:
        """``(its, carried)``: the size of ``contact``'s generalised force on the free motions
        and the part of it the other static loads oppose (0 when they push the same way or
        across); in N, N m, mixed as the coordinates are (the measure is exact for a load
        balanced entirely: ``carried == its``)."""
        own = self.free.T @ self.contacts[contact.name]
        rest = self.free.T @ (self.total - self.contacts[contact.name])
        its = float(np.linalg.norm(own))
        if its == 0.0:
            return 0.0, 0.0
        return its, max(0.0, -float(rest @ own) / its)


def _start_overlaps(model, poses, topology=None, q=None, driven=()) -> list[Problem]:
    """Contacts whose shapes overlap at the start by more than a resting or preloaded contact
    would: refused, naming the pair and the depth (the run would throw them apart; nothing is
    moved). With ``topology``, the start coordinates ``q`` and the ``driven`` coordinates'
    labels, a contact that the static loads balance (:class:`_StaticBalance`) is accepted
    however far its force is above the weight."""
    from .kinematics import marker_pose
    from ..elements.forces.contact import canonical, depths
    out = []
    g = float(np.linalg.norm(model.gravity)) or 9.81
    balance = None
    for k in model.contacts:
        pair = canonical(k)
        mi, mo = marker_pose(model, pair.input, poses), marker_pose(model, pair.output, poses)
        d = depths(pair, mi.R, mi.p, mo.R, mo.p)
        d = d[d > 0.0]
        if not d.size:
            continue
        force = float(np.sum(k.stiffness * d ** k.exponent))
        moved = [model.body(r.body) for r in (k.input, k.output) if model.body(r.body)]
        if not moved:
            continue
        body = min(moved, key=lambda b: b.mass)
        weight = body.mass * g
        dims = [v for shape in (k.input_shape, k.output_shape)
                for v in ([shape.radius] if shape.type in ("sphere", "cylinder") else []) +
                ([0.5 * shape.length] if shape.type == "cylinder" else []) +
                (list(0.5 * np.asarray(shape.size)) if shape.type == "box" else []) +
                (list(0.5 * np.ptp(np.asarray(shape.points, dtype=float).reshape(-1, 3), axis=0))
                 if shape.type == "convex" else [])]
        size = min(dims) if dims else math.inf
        if force <= OVERLAP_WEIGHTS * weight or float(d.max()) <= OVERLAP_SIZE * size:
            continue
        carried = ""
        if topology is not None:
            if balance is None:
                balance = _StaticBalance(model, topology, q, poses, driven)
            if balance.moves(k):
                its, held = balance.carried(k)
                if its <= OVERLAP_WEIGHTS * held:
                    continue            # preloaded: the static loads balance it
                carried = (" and more than ten times the static loads it balances"
                           if held > 0.0 else " and no static load balances it")
        out.append(Problem(
            f"Contact '{k.name}'", "Input",
            f"'{k.input.body}' and '{k.output.body}' overlap by {format_length(float(d.max()))} "
            f"at the start: the contact would throw them apart with {force:.3g} N, "
            f"{force / weight:.3g} times the weight of '{body.name}'{carried}; draw them "
            "touching or apart (nothing is moved)"))
    return out


def start_report(model: MultibodySystem, notes=(), topology=None, drawn=None,
                 relative=None) -> StartReport:
    """Where every body starts, compared with the drawing (a resolved, valid model).

    Parameters
    ----------
    model : MultibodySystem
        From :func:`resolve`.
    notes : list of str
        :func:`resolve`'s notes, kept in the report.
    topology : Topology, optional
    drawn : dict of str to Pose, optional
        The model's drawn poses (:func:`~.kinematics.drawn_poses`) when the caller has them.
    relative : dict of str to (ndarray (3, 3), ndarray (3,)), optional
        Hinges' relative marker poses as drawn (:func:`~.kinematics.hinge_relative_pose`), by
        name, that the caller has.

    Raises
    ------
    ModelError
        A loop cannot be closed (see :func:`~.assembly.assemble`).
    """
    topology = analyse(model) if topology is None else topology
    drawn = drawn_poses(model) if drawn is None else drawn
    labels = coordinate_labels(model, topology)
    # as drawn, and as intended: the initial coordinates given, else as drawn
    as_drawn, given = [], []
    relative = relative or {}
    for name in topology.tree_hinges:
        h = model.hinge(name)
        if name in relative:
            q = np.array(_fit(h.kind, *relative[name]), dtype=float)
        else:
            q = hinge_coordinates(model, h, drawn)
        as_drawn.append(q)
        given.append(h.initial_coordinates if h.initial_coordinates is not None else q)
    q_drawn = np.concatenate(as_drawn) if as_drawn else np.zeros(0)
    q_intended = np.concatenate(given) if given else np.zeros(0)
    index = {lab: i for i, lab in enumerate(labels)}
    q_start = q_intended.copy()
    causes = []
    driven = {}
    for name in topology.tree_hinges:
        for d in model.hinge(name).drivers:
            driven[f"{name}.{d.coordinate}"] = float(
                parse(d.expression, f"Hinge '{name}'", "Driver")(0.0))
    for lab, v in driven.items():
        q_start[index[lab]] = v
    rate_changes = []
    cut_conflicts = []
    assembly = None
    if topology.cut_hinges:
        from .assembly import assemble
        q_start, _, assembly = assemble(model, topology, q_start)
        prescribed = set(assembly.given_rates) | set(assembly.driven)
        for lab, (given, assembled) in assembly.rate_corrections.items():
            if lab in prescribed:
                rate_changes.append((lab, given, assembled))
        # the cut hinges' prescribed rates that the others contradict (kept: the others
        # change), and those the assembly does not keep (it changed them to close the loops:
        # by less than its refusal's tolerance, 1e-8 of the largest rate in its balanced
        # least squares)
        cut_conflicts = [
            (lab, rate, implied) for lab, rate, implied, assembled in assembly.cut_rates
            if (rate_changes and not abs(implied - rate) <= CUT_RATE_TOLERANCE * max(
                1.0, abs(rate), abs(implied)))
            or not abs(assembled - rate) <= CUT_RATE_TOLERANCE * max(1.0, abs(rate))]
        # estimated initial coordinates are the assembly's to change: intended as assembled
        for lab, i in index.items():
            h = model.hinge(lab.rsplit(".", 1)[0])
            if h.initial_coordinates is not None and h.initial_coordinates_estimate:
                q_intended[i] = q_start[i]

    # the same coordinates give the same poses: computed once (and the tree's steps once)
    steps = _tree_steps(model, topology)
    fk_drawn = _forward(model, topology, q_drawn, drawn, steps)
    fk_intended = (fk_drawn if np.array_equal(q_intended, q_drawn)
                   else _forward(model, topology, q_intended, drawn, steps))
    poses = (dict(fk_intended) if np.array_equal(q_start, q_intended)
             else _forward(model, topology, q_start, drawn, steps))
    springs = _zero_length_springs(model, poses, drawn) + _start_overlaps(
        model, poses, topology, q_start, [lab for lab in driven if lab in index])
    if springs:
        raise ModelError(springs)
    intended, corrected = _intended_and_moves(model, drawn, fk_drawn, fk_intended, poses)
    # what the designer sees: every body against the drawing, those the given initial
    # coordinates move included (the correction alone, against the intended poses, moves a
    # body of a loop by what the given values swung its tree branch through)
    moves = (corrected if fk_intended is fk_drawn else
             _intended_and_moves(model, drawn, fk_drawn, fk_drawn, poses)[1]) if corrected else []

    for lab, given, assembled in rate_changes:
        name, c = lab.rsplit(".", 1)
        what = "driven" if lab in driven else "prescribed"
        given_text, assembled_text = _pair_in_units(c, given, assembled, rate=True)
        causes.append((name, f"the rate of coordinate {c} is {what} as {given_text}, but the "
                             f"loop's other prescribed and driven rates allow {assembled_text} "
                             "(mark initial rates that are only estimates Estimate=\"true\")"))
    for lab, rate, implied in cut_conflicts:
        name, c = lab.rsplit(".", 1)
        if math.isnan(implied):
            rate_text = _pair_in_units(c, rate, rate, rate=True)[0]
            but = "the loop's other prescribed and driven rates contradict it and each other"
        else:
            rate_text, implied_text = _pair_in_units(c, rate, implied, rate=True)
            but = f"the loop's other prescribed and driven rates make it {implied_text}"
        causes.append((name, f"the rate of coordinate {c} is prescribed as {rate_text} on this "
                             f"hinge, which closes the loop, but {but}"))
    if corrected:
        for lab, i in index.items():
            name, c = lab.rsplit(".", 1)
            h = model.hinge(name)
            tol = LENGTH_TOLERANCE if COORDINATE_KIND[c] == "translation" else ANGLE_TOLERANCE
            if h.initial_coordinates is not None and not h.initial_coordinates_estimate and \
                    lab not in driven and abs(q_intended[i] - q_drawn[i]) > tol:
                given_text, drawn_text = _pair_in_units(c, q_intended[i], q_drawn[i])
                causes.append((name, f"coordinate {c} starts at {given_text} as given (drawn at "
                                     f"{drawn_text})"))
        for h in model.hinges:
            r = hinge_residual(model, h, drawn)
            a, e = float(np.linalg.norm(r[:3])), float(np.linalg.norm(r[3:]))
            if a > ANGLE_TOLERANCE or e > LENGTH_TOLERANCE:
                what = []
                if e > LENGTH_TOLERANCE:
                    what.append(f"{format_length(e)} apart")
                if a > ANGLE_TOLERANCE:
                    what.append(f"{format_angle(a)} out of line")
                causes.append((h.name, f"as drawn, its markers on '{h.input.body}' and "
                                       f"'{h.output.body}' are {' and '.join(what)} where the "
                                       f"{h.type} hinge wants them to meet; the hinge pulls "
                                       "them together"))
        for lab, v in driven.items():
            i = index[lab]
            name, c = lab.rsplit(".", 1)
            if abs(v - q_intended[i]) > (LENGTH_TOLERANCE if COORDINATE_KIND[c] == "translation"
                                         else ANGLE_TOLERANCE):
                v_text, start_text = _pair_in_units(c, v, q_intended[i])
                causes.append((name, f"coordinate {c} is driven from {v_text} (its driver's "
                                     f"value at t = 0) but starts at {start_text}; "
                                     "measure the driver from the start (From=\"start\") to "
                                     "keep the drawing"))
        for lab, prescribed_q, as_drawn, _ in (assembly.cut_coordinates if assembly else ()):
            name, c = lab.rsplit(".", 1)
            tol = LENGTH_TOLERANCE if COORDINATE_KIND[c] == "translation" else ANGLE_TOLERANCE
            if abs(prescribed_q - as_drawn) > tol:
                prescribed_text, drawn_text = _pair_in_units(c, prescribed_q, as_drawn)
                causes.append((name, f"coordinate {c} is prescribed as {prescribed_text} on "
                                     f"this hinge, which closes the loop, but is {drawn_text} as "
                                     "drawn"))
        for lab, i in index.items():
            name, c = lab.rsplit(".", 1)
            if lab in driven:
                continue
            tol = LENGTH_TOLERANCE if COORDINATE_KIND[c] == "translation" else ANGLE_TOLERANCE
            if abs(q_start[i] - q_intended[i]) > tol:
                intended_text, start_text = _pair_in_units(c, q_intended[i], q_start[i])
                causes.append((name, f"coordinate {c} changes from {intended_text} to "
                                     f"{start_text} to close the loop"))
    return StartReport(labels, q_drawn, q_intended, q_start, poses, intended, moves, causes,
                       list(notes), rate_changes, cut_conflicts, corrected)


def prepare(model: MultibodySystem, accept_corrections: bool = False, topology=None):
    """Resolve a valid model and check its start: ``(resolved model, StartReport)``.

    ``topology``: :func:`~.topology.analyse` of ``model`` when the caller has it (resolving
    changes no connection).

    Raises
    ------
    StartCorrectionError
        Some body would start away from the drawing and ``accept_corrections`` is False.
    ModelError
        A loop cannot be closed.
    """
    resolved, notes, drawn, relative = _resolve(model)
    report = start_report(resolved, notes, topology, drawn, relative)
    if report.moved and not accept_corrections:
        raise StartCorrectionError(report)
    return resolved, report
