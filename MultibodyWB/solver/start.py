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

import copy
import math
from dataclasses import dataclass, field

import numpy as np

from .kinematics import (Pose, coordinate_labels, drawn_coordinates, drawn_poses,
                         forward_kinematics, hinge_coordinates, hinge_residual,
                         initial_coordinates)
from .model import COORDINATE_KIND, Driver, ModelError, MultibodySystem, Problem
from .rotations import bryant_to_matrix
from .timefunction import parse
from .topology import analyse

__all__ = ["LENGTH_TOLERANCE", "ANGLE_TOLERANCE", "BodyMove", "StartReport",
           "StartCorrectionError", "resolve", "start_report", "prepare", "format_length",
           "format_angle"]

#: A body whose start position differs from its intended one by more than this is reported (m).
LENGTH_TOLERANCE = 1e-5                     # 0.01 mm
#: ... or whose orientation differs by more than this angle (rad).
ANGLE_TOLERANCE = math.radians(0.01)


def format_length(metres: float) -> str:
    """A length for people: ``'10 mm'`` (the document's unit), from metres."""
    return f"{metres * 1e3:.4g} mm"


def format_angle(radians: float) -> str:
    """An angle for people: ``'90 deg'``, from radians."""
    return f"{math.degrees(radians):.4g} deg"


def _format_coordinate(c: str, value: float) -> str:
    return (format_length(value) if COORDINATE_KIND[c] == "translation"
            else format_angle(value))


# --------------------------------------------------------------------------------------------------
# resolve
# --------------------------------------------------------------------------------------------------

def _start_values(model, h, poses):
    """The start value of each of a hinge's coordinates: given, else as drawn."""
    if h.initial_coordinates is not None:
        return np.array(h.initial_coordinates, dtype=float)
    return hinge_coordinates(model, h, poses)


def _keep_axial_offset(model, h, poses) -> str | None:
    """Give a revolute hinge whose markers are apart only along the axis a marker on the common
    plane; return the note, or None when there is nothing to do."""
    if h.type != "revolute":
        return None
    residual = hinge_residual(model, h, poses)
    phi, e = residual[:3], residual[3:]
    axial = float(e[2])
    if (np.linalg.norm(phi) > ANGLE_TOLERANCE or np.hypot(e[0], e[1]) > LENGTH_TOLERANCE
            or abs(axial) <= 1e-12):
        return None
    body = model.part(h.input.body)
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
    return (f"Hinge '{h.name}': its markers are {format_length(abs(axial))} apart along the "
            "common axis; the parts keep that offset (the hinge joins them on the output "
            "marker's plane)")


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

    A copy of ``model`` (a valid one: :meth:`~.model.MultibodySystem.check` it first) with
    motors and start-relative drivers written as plain drivers, start-relative spring
    references as values, initial angular velocities as Bryant-angle rates, and coaxial revolute
    markers on their common plane (see the module docstring). A model with none of these is returned as an equal copy.
    """
    model = copy.deepcopy(model)
    notes = []
    poses = drawn_poses(model)
    for h in model.hinges:
        note = _keep_axial_offset(model, h, poses)
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
    return model, notes


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
        Bodies beyond the tolerances, largest first.
    causes : list of (hinge name, text)
        Why: hinges whose markers do not meet as drawn, drivers that start elsewhere, loop
        corrections; in mm and degrees.
    notes : list of str
        What :func:`resolve` did that moves nothing (axial offsets kept).
    rate_changes : list of (label, given, assembled)
        Prescribed (or driven) rates the loops cannot take (m/s, rad/s), with the consistent
        values.
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

    @property
    def moved(self) -> bool:
        """True when some body starts away from its intended pose beyond the tolerances, or a
        prescribed rate cannot be kept."""
        return bool(self.moves or self.rate_changes)

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


def _compose(a: Pose, b: Pose) -> Pose:
    return Pose(a.R @ b.R, a.p + a.R @ b.p)


def _inverse(a: Pose) -> Pose:
    return Pose(a.R.T, -a.R.T @ a.p)


def _rotation_angle(R) -> float:
    return float(np.arccos(np.clip((np.trace(R) - 1.0) / 2.0, -1.0, 1.0)))


def start_report(model: MultibodySystem, notes=(), topology=None) -> StartReport:
    """Where every body starts, compared with the drawing (a resolved, valid model).

    Parameters
    ----------
    model : MultibodySystem
        From :func:`resolve`.
    notes : list of str
        :func:`resolve`'s notes, kept in the report.
    topology : Topology, optional

    Raises
    ------
    ModelError
        A loop cannot be closed (see :func:`~.assembly.assemble`).
    """
    topology = analyse(model) if topology is None else topology
    labels = coordinate_labels(model, topology)
    q_drawn = drawn_coordinates(model, topology)
    q_intended = initial_coordinates(model, topology)
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
    if topology.cut_hinges:
        from .assembly import assemble
        q_start, _, assembly = assemble(model, topology, q_start)
        prescribed = set(assembly.given_rates) | set(assembly.driven)
        for lab, (given, assembled) in assembly.rate_corrections.items():
            if lab in prescribed:
                rate_changes.append((lab, given, assembled))
        # estimated initial coordinates are the assembly's to change: intended as assembled
        for lab, i in index.items():
            h = model.hinge(lab.rsplit(".", 1)[0])
            if h.initial_coordinates is not None and h.initial_coordinates_estimate:
                q_intended[i] = q_start[i]

    drawn = drawn_poses(model)
    fk_drawn = forward_kinematics(model, topology, q_drawn)
    fk_intended = forward_kinematics(model, topology, q_intended)
    poses = forward_kinematics(model, topology, q_start)
    intended = {}
    moves = []
    for b in model.bodies:
        if b.name not in poses:
            continue
        intended[b.name] = _compose(_compose(fk_intended[b.name], _inverse(fk_drawn[b.name])),
                                    drawn[b.name])
        s, i = poses[b.name], intended[b.name]
        pts = _points(b)
        dist = float(np.max(np.linalg.norm((pts @ s.R.T + s.p) - (pts @ i.R.T + i.p), axis=1)))
        angle = _rotation_angle(s.R @ i.R.T)
        if dist > LENGTH_TOLERANCE or angle > ANGLE_TOLERANCE:
            moves.append(BodyMove(b.name, b.label, dist, angle))
    moves.sort(key=lambda m: (m.distance, m.angle), reverse=True)

    for lab, given, assembled in rate_changes:
        name, c = lab.rsplit(".", 1)
        unit = "mm/s" if COORDINATE_KIND[c] == "translation" else "deg/s"
        scale = 1e3 if unit == "mm/s" else math.degrees(1.0)
        what = "driven" if lab in driven else "prescribed"
        causes.append((name, f"the rate of coordinate {c} is {what} as {given * scale:.6g} "
                             f"{unit}, but the loop's other prescribed and driven rates allow "
                             f"{assembled * scale:.6g} {unit} (mark initial rates that are only "
                             "estimates Estimate=\"true\")"))
    if moves:
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
                causes.append((name, f"coordinate {c} is driven from "
                                     f"{_format_coordinate(c, v)} (its driver's value at t = 0) "
                                     f"but starts at {_format_coordinate(c, q_intended[i])}; "
                                     "measure the driver from the start (From=\"start\") to "
                                     "keep the drawing"))
        for lab, i in index.items():
            name, c = lab.rsplit(".", 1)
            if lab in driven:
                continue
            tol = LENGTH_TOLERANCE if COORDINATE_KIND[c] == "translation" else ANGLE_TOLERANCE
            if abs(q_start[i] - q_intended[i]) > tol:
                causes.append((name, f"coordinate {c} changes from "
                                     f"{_format_coordinate(c, q_intended[i])} to "
                                     f"{_format_coordinate(c, q_start[i])} to close the loop"))
    return StartReport(labels, q_drawn, q_intended, q_start, poses, intended, moves, causes,
                       list(notes), rate_changes)


def prepare(model: MultibodySystem, accept_corrections: bool = False):
    """Resolve a valid model and check its start: ``(resolved model, StartReport)``.

    Raises
    ------
    StartCorrectionError
        Some body would start away from the drawing and ``accept_corrections`` is False.
    ModelError
        A loop cannot be closed.
    """
    resolved, notes = resolve(model)
    report = start_report(resolved, notes)
    if report.moved and not accept_corrections:
        raise StartCorrectionError(report)
    return resolved, report
