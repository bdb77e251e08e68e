"""Semantic validation of a neutral model: every problem at once, each naming element and field.

Field names are those of the XML file (``Mass``, ``JI``, ``Type``, ``Input``...), so a message
points at the place to edit. The schema checks the file's structure; this module checks what a
schema cannot: references, physics (mass, inertia), connectivity, uniqueness, expressions.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from ..elements.couplers import COUPLER_TYPES
from ..elements.forces import FORCE_TYPES
from ..elements.forces.contact import PAIRS as CONTACT_PAIRS
from ..elements.forces.contact import SHAPES as CONTACT_SHAPES
from ..elements.forces.stop import ROTATION_STOPS, stops_of
from ..elements.hinges import COORDINATE_KIND, HINGE_TYPES, QUATERNION_TYPES, STIFFNESS_UNIT
from .settings import FIXED_STEP, INTEGRATORS, METHODS
from .problems import Problem
from .timefunction import EvaluationError, ExpressionError, parse, shorten

#: Relative tolerance for the inertia checks (round-off of CAD mass properties).
INERTIA_RTOL = 1e-9
#: Largest distance from the origin of a position (m): beyond it the millimetres of a mechanism
#: are lost in the rounding of the coordinates (and squares of lengths overflow near 1e154).
MAX_POSITION = 1e6
#: Largest Bryant angle (rad): beyond it the angle's sine has lost its precision.
MAX_ANGLE = 1e6
#: Times at which the expressions are evaluated by the check (besides t = 0): evenly spaced
#: over (0, EndTime], so that one that cannot be evaluated is reported before a run.
EXPRESSION_SAMPLES = 32
#: Largest component of gravity (m/s^2; ten million g): beyond it weights and potential
#: energies run out of double precision.
MAX_GRAVITY = 1e8
#: Largest friction coefficient (static or dynamic): no surface pair comes near it, and a
#: coefficient of 1e300 overflows the friction force.
MAX_FRICTION = 1e3
#: Most integration steps of a fixed-step run (rk4, euler, newton-euler): EndTime / Step.
MAX_STEPS = 1e10
#: Largest table of results a run may allocate (output rows x columns x 8 bytes), bytes.
MAX_RESULT_BYTES = 4e9

_HINGE_VECTOR_FIELDS = {
    "initial_coordinates": ("InitialCoordinates", "initial"),
    "initial_rates": ("InitialRates", "initial"),
    "stiffness": ("Stiffness", "stiffness"),
    "damping": ("Damping", "damping"),
    "spring_reference": ("SpringReference", "stiffness"),
    "lower_limits": ("LowerLimits", "limits"),
    "upper_limits": ("UpperLimits", "limits"),
    "stop_stiffness": ("StopStiffness", "limits"),
    "stop_restitution": ("StopRestitution", "limits"),
    "stop_impact_speed": ("StopImpactSpeed", "limits"),
}


def element_name(obj) -> str:
    """How a message names a model object: ``RigidBody 'Crank'``, ``Hinge 'J1'``, ``Simulation``."""
    kind = getattr(obj, "element", type(obj).__name__)
    name = getattr(obj, "name", None)
    return f"{kind} '{name}'" if name is not None else kind


def _finite(v, n=None) -> bool:
    a = np.asarray(v, dtype=float).reshape(-1)
    if n is not None and a.size != n:
        return False
    return all(map(math.isfinite, a.tolist())) if a.size <= 16 else bool(np.all(np.isfinite(a)))


def _largest(v) -> float:
    """The largest absolute value of a short finite vector."""
    return max(map(abs, np.asarray(v, dtype=float).reshape(-1).tolist()), default=0.0)


class _Collector:
    def __init__(self):
        self.problems: list[Problem] = []

    def add(self, obj, field, message):
        el = obj if isinstance(obj, str) else element_name(obj)
        self.problems.append(Problem(el, field, message))


def check_inertia(mass: float, ji, mass_center) -> list[str]:
    """What is wrong with an inertia ``JI`` (about the base-frame origin) of a body, as messages.

    The tensor is moved to the mass centre; it must be positive definite and its principal moments
    must satisfy the triangle inequality (each at most the sum of the other two).
    """
    return _check_inertias([float(mass)], [ji], [mass_center])[0]


#: ``JI`` = (Ixx, Iyy, Izz, Ixy, Ixz, Iyz) entries of the inertia tensor, row by row.
_TENSOR = [[0, 3, 4], [3, 1, 5], [4, 5, 2]]


def _check_inertias(masses, jis, centers) -> list[list[str]]:
    """:func:`check_inertia` of many bodies at once (lists of masses, JI and mass centres):
    one eigenvalue call for all, so that checking n bodies costs little more than n reads."""
    m = np.asarray(masses, dtype=float)
    J_O = np.asarray(jis, dtype=float).reshape(-1, 6)[:, _TENSOR]
    r = np.asarray(centers, dtype=float).reshape(-1, 3)
    out = []
    with np.errstate(all="ignore"):
        shift = (np.einsum("ni,ni->n", r, r)[:, None, None] * np.eye(3)
                 - r[:, :, None] * r[:, None, :])
        J_C = J_O + (-m)[:, None, None] * shift
        scale = np.maximum(np.maximum(np.trace(J_O, axis1=1, axis2=2),
                                      np.abs(J_O).max(axis=(1, 2))), 1e-300)
        finite = np.isfinite(J_C).all(axis=(1, 2)) & np.isfinite(scale)
        # scaled to its largest entry: entries near 1e308 neither overflow nor stop LAPACK
        S = 0.5 * J_C + 0.5 * J_C.transpose(0, 2, 1)
        big = np.abs(S).max(axis=(1, 2)) if len(m) else np.zeros(0)
        moments = np.zeros((len(m), 3))
        some = finite & (big > 0)
        if some.any():
            try:
                moments[some] = (np.linalg.eigvalsh(S[some] / big[some, None, None])
                                 * big[some, None])
            except np.linalg.LinAlgError:          # one by one: which ones LAPACK gives up on
                for k in np.flatnonzero(some):
                    try:
                        moments[k] = np.linalg.eigvalsh(S[k] / big[k]) * big[k]
                    except np.linalg.LinAlgError:
                        moments[k] = np.nan
    for k in range(len(m)):
        if not finite[k]:
            out.append(["the inertia about the mass centre is not a finite number (the mass, "
                        "the mass centre or JI is too large)"])
            continue
        if not np.all(np.isfinite(moments[k])):
            out.append([f"the inertia about the mass centre (entries up to {big[k]:.3g} kg m^2) "
                        "is too large to have finite principal moments"])
            continue
        messages = []
        a, b, c = (float(x) for x in moments[k])
        tol = INERTIA_RTOL * float(scale[k])
        if a <= tol:
            messages.append("the inertia tensor about the mass centre is not positive definite "
                            f"(principal moments {a:.6g}, {b:.6g}, {c:.6g} kg m^2)")
        elif c > a + b + tol:
            messages.append("the principal moments about the mass centre break the triangle "
                            f"inequality ({c:.6g} > {a:.6g} + {b:.6g} kg m^2)")
        out.append(messages)
    return out


def validate(model: MultibodySystem) -> list[Problem]:  # noqa: F821  (mechanism's class)
    """Every semantic problem of ``model``; an empty list when it is valid."""
    c = _Collector()
    _check_grounds(model, c)
    _check_names(model, c)
    for ground in model.grounds:
        _check_part_frames(ground, c)
    fine = _fine_frames(model.bodies)
    inertia = _body_inertias(model.bodies, fine)
    for body in model.bodies:
        _check_body(body, c, inertia, id(body) in fine)
    for hinge in model.hinges:
        _check_hinge(model, hinge, c)
    for force in model.forces:
        _check_force(model, force, c)
    for contact in model.contacts:
        _check_contact(model, contact, c)
    for coupler in model.couplers:
        _check_coupler(model, coupler, c)
    _check_connectivity(model, c)
    _check_simulation(model, c)
    _check_columns(model, c)
    if not _finite(model.gravity, 3):
        c.add("MultibodySystem", "Gravity", "needs three finite numbers (m/s^2)")
    elif float(np.max(np.abs(model.gravity))) > MAX_GRAVITY:
        c.add("MultibodySystem", "Gravity", (
            f"{np.asarray(model.gravity).tolist()} m/s^2: at most {MAX_GRAVITY:g} m/s^2 a "
            "component (beyond it the energies overflow)"))
    return c.problems


def _check_grounds(model, c):
    if not model.grounds:
        c.add("MultibodySystem", "Ground",
              "the model has no ground; mark one part as the ground (the fixed frame)")
    for extra in model.grounds[1:]:
        c.add(extra, "Ground",
              f"a second ground; the model has one already ('{model.grounds[0].name}')")


def _check_names(model, c):
    parts = defaultdict(list)
    for p in list(model.grounds) + list(model.bodies):
        parts[p.name].append(p)
    for name, objs in parts.items():
        if not name:
            c.add(objs[0], "Name", "is empty")
        elif len(objs) > 1:
            c.add(objs[1], "Name", f"'{name}' is used by {len(objs)} parts; names must be unique")
    for kind, objs in (("hinge", model.hinges), ("force", model.forces),
                       ("contact", model.contacts), ("coupler", model.couplers)):
        seen = set()
        for o in objs:
            if not o.name:
                c.add(o, "Name", "is empty")
            elif o.name in seen:
                c.add(o, "Name", f"'{o.name}' is used by another {kind}; names must be unique")
            seen.add(o.name)
    ids = defaultdict(list)
    for o in list(model.bodies) + list(model.hinges):
        ids[o.id].append(o)
    for i, objs in ids.items():
        if not isinstance(i, (int, np.integer)) or i < 1:
            for o in objs:
                c.add(o, "ID", f"{i!r} is not a positive whole number")
        elif len(objs) > 1:
            others = ", ".join(element_name(o) for o in objs[:-1])
            c.add(objs[-1], "ID", f"{i} is already used by {others}; "
                                  "bodies and hinges are numbered in one sequence")


def _position_problem(v) -> str | None:
    """What is wrong with a position vector (m), or None."""
    if not _finite(v, 3):
        return "needs three finite numbers (m)"
    if _largest(v) > MAX_POSITION:
        return f"lies more than {MAX_POSITION:g} m from the origin; check the units"
    return None


def _angles_problem(v) -> str | None:
    """What is wrong with Bryant angles (rad), or None."""
    if not _finite(v, 3):
        return "needs three finite numbers (rad)"
    if _largest(v) > MAX_ANGLE:
        return f"has an angle beyond {MAX_ANGLE:g} rad (its sine has no precision left)"
    return None


def _fine_frames(parts) -> set:
    """``id`` of the parts whose frames (position and orientation; the markers'; the mass
    centre's) are all three finite numbers within :data:`MAX_POSITION` and :data:`MAX_ANGLE`,
    looked at all at once (the others, or all when some vector is no three numbers, are looked
    at one by one: :func:`_check_part_frames` says what is wrong)."""
    vecs, owner = [], []
    for i, p in enumerate(parts):
        n = len(vecs)
        vecs += (p.position, p.orientation)
        for m in p.markers:
            vecs += (m.frame.position, m.frame.orientation)
        mc = getattr(p, "mass_center", None)
        if mc is not None:
            vecs += (mc.position, mc.orientation)
        owner += [i] * (len(vecs) - n)
    if not vecs:
        return {id(p) for p in parts}
    try:
        a = np.array(vecs, dtype=float)
    except (TypeError, ValueError):
        return set()
    if a.shape != (len(vecs), 3):
        return set()
    limit = np.where(np.arange(len(vecs)) % 2 == 0, MAX_POSITION, MAX_ANGLE)   # (position,
    with np.errstate(invalid="ignore"):                                           # angles) pairs
        ok = np.isfinite(a).all(axis=1) & (np.abs(a).max(axis=1) <= limit)
    bad = set(np.asarray(owner)[~ok].tolist())
    return {id(p) for i, p in enumerate(parts) if i not in bad}


def _check_part_frames(part, c, fine=False):
    """The part's frames (``fine``: known to be fine, :func:`_fine_frames`: the markers' ids
    alone)."""
    if not fine:
        for field, problem in (("AbsolutePosition", _position_problem(part.position)),
                               ("AbsoluteOrientation", _angles_problem(part.orientation))):
            if problem:
                c.add(part, field, problem)
    seen = set()
    for m in part.markers:
        if m.id in seen:
            c.add(part, "Marker", f"marker ID {m.id} is used twice on this part")
        seen.add(m.id)
        if fine:
            continue
        for field, problem in ((f"Marker {m.id} Position", _position_problem(m.frame.position)),
                               (f"Marker {m.id} Orientation",
                                _angles_problem(m.frame.orientation))):
            if problem:
                c.add(part, field, problem)


def _inertia_checked(body, fine=False) -> bool:
    """True when a body's mass, JI and mass centre allow the inertia check (``fine``: its
    frames are, :func:`_fine_frames`)."""
    return (np.isfinite(body.mass) and body.mass > 0 and _finite(body.inertia, 6)
            and (fine or _position_problem(body.mass_center.position) is None))


def _body_inertias(bodies, fine=frozenset()) -> dict:
    """:func:`check_inertia` of every body that allows it, by ``id(body)`` (all at once);
    ``fine``: ids of bodies whose frames are fine (:func:`_fine_frames`)."""
    ok = [b for b in bodies if _inertia_checked(b, id(b) in fine)]
    messages = _check_inertias([b.mass for b in ok], [b.inertia for b in ok],
                               [b.mass_center.position for b in ok]) if ok else []
    return {id(b): m for b, m in zip(ok, messages)}


def _check_body(body, c, inertia=None, fine=False):
    """The body's fields (``fine``: its frames are, :func:`_fine_frames`)."""
    _check_part_frames(body, c, fine)
    mass_ok = np.isfinite(body.mass) and body.mass > 0
    if not mass_ok:
        c.add(body, "Mass", f"{body.mass!r} kg; the mass must be positive")
    if body.density is not None and not (np.isfinite(body.density) and body.density > 0):
        c.add(body, "Density", f"{body.density!r} kg/m^3; the density must be positive")
    center_ok = fine
    if not fine:
        problem = _position_problem(body.mass_center.position)
        center_ok = problem is None
        if problem:
            c.add(body, "MassCenter", problem)
        problem = _angles_problem(body.mass_center.orientation)
        if problem:
            c.add(body, "MassCenter Orientation", problem)
    ji_ok = _finite(body.inertia, 6)
    if not ji_ok:
        c.add(body, "JI", "needs six finite numbers: Ixx, Iyy, Izz, Ixy, Ixz, Iyz (kg m^2)")
    if mass_ok and ji_ok and center_ok:
        messages = (inertia[id(body)] if inertia is not None and id(body) in inertia
                    else check_inertia(body.mass, body.inertia, body.mass_center.position))
        for msg in messages:
            c.add(body, "JI", msg)
    for name, xml in (("initial_velocity", "InitialVelocity"),
                      ("initial_angular_velocity", "InitialAngularVelocity")):
        v = getattr(body, name)
        if v is not None and not _finite(v, 3):
            c.add(body, xml, "needs three finite numbers")


def _check_ref(model, obj, field, ref, c) -> bool:
    if ref is None:
        c.add(obj, field, "is missing: name a body and a marker on it")
        return False
    part = model.part(ref.body)
    if part is None:
        c.add(obj, field, f"refers to '{ref.body}', which is no body or ground of the model")
        return False
    if part.marker(ref.marker) is None:
        c.add(obj, field, f"refers to marker {ref.marker} of '{ref.body}', which has no such marker")
        return False
    return True


def _check_hinge(model, h: Hinge, c):  # noqa: F821  (mechanism's class)
    kind = HINGE_TYPES.get(h.type)
    if kind is None:
        c.add(h, "Type", f"'{h.type}' is not a hinge type; use one of {', '.join(HINGE_TYPES)}")
    ok_in = _check_ref(model, h, "Input", h.input, c)
    ok_out = _check_ref(model, h, "Output", h.output, c)
    if ok_in and ok_out and h.input.body == h.output.body:
        c.add(h, "Output", f"both markers are on '{h.input.body}'; a hinge joins two different bodies")
    if kind is None:
        return
    for attr, (xml, option) in _HINGE_VECTOR_FIELDS.items():
        v = getattr(h, attr)
        if v is None:
            continue
        if option not in kind.options:
            c.add(h, xml, f"a {kind.name} hinge takes no {xml}")
            continue
        if v.size != kind.dof:
            c.add(h, xml, f"has {v.size} value(s); a {kind.name} hinge has {kind.dof} "
                          f"coordinate(s) ({', '.join(kind.coordinates)})")
            continue
        if attr in ("lower_limits", "upper_limits"):
            if np.any(np.isnan(v)):
                c.add(h, xml, "contains NaN")
        elif not _finite(v):
            c.add(h, xml, "needs finite numbers")
        elif attr in ("stiffness", "damping") and np.any(v < 0):
            c.add(h, xml, "must not be negative")
        elif attr == "stop_restitution" and np.any((v <= 0) | (v > 1)):
            c.add(h, xml, "must be above 0 and at most 1")
        elif attr == "stop_impact_speed" and np.any(v <= 0):
            c.add(h, xml, "must be positive (m/s or rad/s)")
    lo, hi = h.lower_limits, h.upper_limits
    if lo is not None and hi is not None and lo.size == hi.size and np.any(lo > hi):
        c.add(h, "UpperLimits", "is below LowerLimits")
    _check_stops(h, kind, c)
    if kind.elastic and h.stiffness is None:
        c.add(h, "Stiffness", f"a {kind.name} hinge needs its six stiffnesses")
    seen = set()
    for field, actuator in [("Driver", d) for d in h.drivers] + [("Motor", m) for m in h.motors]:
        if "driver" not in kind.options:
            c.add(h, field, f"a {kind.name} hinge cannot be driven")
            break
        coordinate = actuator.coordinate
        if coordinate not in kind.coordinates:
            c.add(h, field, f"coordinate '{coordinate}' is not one of the {kind.name} hinge's "
                            f"({', '.join(kind.coordinates)})")
        elif coordinate in seen:
            c.add(h, field, f"coordinate '{coordinate}' has a driver or motor already")
        seen.add(coordinate)
        if field == "Driver":
            _check_expression(model, h, field, actuator.expression, 2, c)
            continue
        if not np.isfinite(actuator.speed):
            c.add(h, field, f"the speed of coordinate '{coordinate}' must be a finite number")
        elif coordinate in COORDINATE_KIND:
            _check_motor_reach(model, h, field, coordinate, actuator.speed, c)
        if not np.isfinite(actuator.ramp_time) or actuator.ramp_time < 0.0:
            c.add(h, field, f"the ramp time of coordinate '{coordinate}' must be zero or "
                            "positive (s)")
    w = h.initial_angular_velocity
    if w is not None:
        if kind.name not in QUATERNION_TYPES:
            c.add(h, "InitialAngularVelocity", f"a {kind.name} hinge takes no angular velocity; "
                                               "give its InitialRates")
        elif w.size != 3 or not _finite(w):
            c.add(h, "InitialAngularVelocity", "needs three finite numbers (wx, wy, wz in rad/s, "
                                               "output-marker axes)")
        elif h.initial_rates is not None and h.initial_rates.size == kind.dof and \
                np.any(h.initial_rates[-3:] != 0.0):
            c.add(h, "InitialAngularVelocity", "give the rotation's initial motion once: either "
                                               "InitialAngularVelocity or the rotation entries "
                                               "of InitialRates")
    if h.spring_reference_start and h.spring_reference is not None:
        c.add(h, "SpringReference", "give either SpringReference values or "
                                    "SpringReferenceFrom=\"start\", not both")


def _check_stops(h, kind, c):
    """Limits are enforced by stops: each limited coordinate needs a stop stiffness; rotations
    are limited within a half turn, and not at all for three-angle rotations."""
    limited = [(i, name) for h_, name, i in stops_of([h])]
    if not limited:
        return
    k = h.stop_stiffness
    need = [name for i, name in limited
            if k is None or k.size != kind.dof or not (np.isfinite(k[i]) and k[i] > 0)]
    if need:
        units = ", ".join(f"{n} in {STIFFNESS_UNIT[COORDINATE_KIND[n]]}" for n in need)
        c.add(h, "StopStiffness", f"the limits of {', '.join(need)} are enforced by a stop: give "
                                  f"its positive stiffness ({units})")
    for i, name in limited:
        if COORDINATE_KIND[name] != "rotation":
            continue
        if kind.name not in ROTATION_STOPS:
            c.add(h, "LowerLimits", f"a {kind.name} hinge's rotation ({name}) cannot be limited "
                                    "(three angles); limit a revolute or universal hinge instead")
            break
        for field, v in (("LowerLimits", h.lower_limits), ("UpperLimits", h.upper_limits)):
            if v is not None and v.size == kind.dof and np.isfinite(v[i]) and \
                    abs(v[i]) > math.pi:
                c.add(h, field, f"the {name} limit {math.degrees(v[i]):.6g} deg is beyond a "
                                "half turn; rotation limits lie within -180 .. 180 deg")


def _check_force(model, f, c):
    kind = FORCE_TYPES.get(f.type)
    if kind is None:
        c.add(f, "Type", f"'{f.type}' is not a force type; use one of {', '.join(FORCE_TYPES)}")
    _check_ref(model, f, "Input", f.input, c)
    if kind is None:
        return
    if kind.markers == 2:
        if _check_ref(model, f, "Output", f.output, c) and f.input and \
                f.input.body == f.output.body:
            c.add(f, "Output", f"both markers are on '{f.input.body}'; the force would be internal")
    elif f.output is not None:
        c.add(f, "Output", f"a {kind.name} acts on one marker only")
    if "direction" in kind.fields:
        if f.direction is None:
            c.add(f, "Direction", "is missing")
        elif not _finite(f.direction, 3) or np.linalg.norm(f.direction) == 0.0:
            c.add(f, "Direction", "needs three finite numbers, not all zero")
        if f.frame not in ("global", "marker"):
            c.add(f, "Direction", f"Frame '{f.frame}' is neither 'global' nor 'marker'")
    if "magnitude" in kind.fields or f.magnitude.strip() not in ("", "0"):
        if "magnitude" not in kind.fields:
            c.add(f, "Magnitude", f"a {kind.name} takes no Magnitude")
        else:
            _check_expression(model, f, "Magnitude", f.magnitude, 0, c)
    for attr, xml in (("stiffness", "Stiffness"), ("damping", "Damping")):
        v = getattr(f, attr)
        if not np.isfinite(v) or v < 0:
            c.add(f, xml, f"{v!r}; must be a finite number, not negative")
    if f.free_length is not None and not (np.isfinite(f.free_length) and f.free_length >= 0):
        c.add(f, "FreeLength", f"{f.free_length!r} m; must not be negative")
    for name in f.params:
        if kind.param(name) is None:
            c.add(f, "Type", f"a {kind.name} has no parameter '{name}'; its parameters: "
                             f"{', '.join(p.attr for p in kind.params) or 'none'}")
    for p in kind.params:
        if p.attr not in f.params:
            continue
        v = np.asarray(f.params[p.attr], dtype=float).reshape(-1)
        per = ", one per axis" if p.size == 3 else ""
        if v.size != p.size:
            c.add(f, p.tag, f"needs {p.size} number{'s' if p.size > 1 else ''} ({p.unit}{per}), "
                            f"not {v.size}")
        elif not np.all(np.isfinite(v)):
            c.add(f, p.tag, f"{' '.join(f'{x:g}' for x in v)} {p.unit}; must be finite")
        elif p.minimum is not None and np.any(v < p.minimum):
            least = "not negative" if p.minimum == 0 else f"at least {p.minimum:g} {p.unit}"
            c.add(f, p.tag, f"{' '.join(f'{x:g}' for x in v)} {p.unit}; must be {least}")


def _check_points(k, field, points, c):
    """A convex shape's Points: triples of finite numbers whose hull has a volume."""
    from ..elements.hulls import hull
    if points is None or np.asarray(points).size == 0:
        c.add(k, field, "Points: a convex shape needs the points of its hull (m), or a mesh "
                        "File")
        return
    p = np.asarray(points, dtype=float)
    if p.ndim != 2 or p.shape[1] != 3:
        c.add(k, field, f"Points: {p.size} numbers; give x, y, z (m) for every point")
        return
    try:
        h = hull(p)
    except ValueError as e:
        c.add(k, field, f"Points: {e}")
        return
    width, size = _hull_width(h)
    if not width >= MIN_THICKNESS * size:
        c.add(k, field, f"Points: their hull is {width:.3g} m thick across {size:.3g} m (flat "
                        f"or on a line: under {MIN_THICKNESS:g} of its size, its faces' "
                        "normals are round-off); give points that span a volume")


#: A contact shape's thinnest extent must be at least this fraction of its largest (a box's
#: shortest edge, a convex hull's width): below it, the corners of a box do not span a volume
#: in double precision (Qhull refuses a 1 m box 1e-15 m thick) and the faces' normals of a
#: hull are made of round-off (issue 33).
MIN_THICKNESS = 1e-9


def _hull_width(h):
    """(width, size) (m) of a :class:`~..elements.hulls.Hull`: its smallest extent
    across its faces (the largest distance of a vertex below each face's plane, least over
    the faces) and the largest distance between two of its vertices' coordinates."""
    v = h.vertices
    depth = -(v @ h.planes[:, :3].T + h.planes[:, 3])          # (n, f): >= 0 inside
    width = float(depth.max(axis=0).min()) if depth.size else 0.0
    size = float(np.ptp(v, axis=0).max()) if len(v) else 0.0
    return width, size


def _check_contact(model, k, c):
    """A contact: its markers, shapes and pair, and its law's numbers."""
    ok_in = _check_ref(model, k, "Input", k.input, c)
    ok_out = _check_ref(model, k, "Output", k.output, c)
    if ok_in and ok_out and k.input.body == k.output.body:
        c.add(k, "Output", f"both markers are on '{k.input.body}'; a body cannot touch itself")
    if ok_in and ok_out and model.is_ground(k.input.body) and model.is_ground(k.output.body):
        c.add(k, "Output", "both shapes are on the ground")
    if ok_in and ok_out:
        pair = {k.input.body, k.output.body}
        for h in model.hinges:
            if h.type == "fixed" and h.input is not None and h.output is not None and \
                    {h.input.body, h.output.body} == pair:
                c.add(k, "Output", f"'{k.input.body}' and '{k.output.body}' are welded by the "
                                   f"fixed hinge '{h.name}': they cannot touch; delete the "
                                   "contact or the hinge")
    types = []
    for field, shape in (("InputShape", k.input_shape), ("OutputShape", k.output_shape)):
        if shape.type not in CONTACT_SHAPES:
            c.add(k, field, f"'{shape.type}' is not a contact shape; use one of "
                            f"{', '.join(CONTACT_SHAPES)}")
            continue
        types.append(shape.type)
        if shape.type == "cone":
            r1, r2 = shape.radius, shape.radius2
            if not (np.isfinite(r1) and np.isfinite(r2) and r1 >= 0 and r2 >= 0
                    and r1 + r2 > 0):
                c.add(k, field, f"Radius {r1!r} m, Radius2 {r2!r} m; a cone needs radii of 0 or "
                                "more at its ends, not both 0")
        elif shape.type == "torus":
            if not (np.isfinite(shape.radius2) and 0 < shape.radius2 < shape.radius):
                c.add(k, field, f"Radius2 {shape.radius2!r} m; a torus's tube radius must be "
                                f"positive and below its Radius ({shape.radius!r} m)")
        if "radius" in CONTACT_SHAPES[shape.type][0] and shape.type != "cone" and not (
                np.isfinite(shape.radius) and shape.radius > 0):
            c.add(k, field, f"Radius {shape.radius!r} m; a {shape.type} needs a positive radius")
        if "length" in CONTACT_SHAPES[shape.type][0] and not (
                np.isfinite(shape.length) and shape.length > 0):
            c.add(k, field, f"Length {shape.length!r} m; a {shape.type} needs a positive length")
        if "size" in CONTACT_SHAPES[shape.type][0] and not (
                shape.size is not None and _finite(shape.size, 3) and np.all(shape.size > 0)):
            c.add(k, field, "Size: a box needs three positive edge lengths (m)")
        elif "size" in CONTACT_SHAPES[shape.type][0] and \
                not shape.size.min() >= MIN_THICKNESS * shape.size.max():
            c.add(k, field, f"Size: edges {', '.join(f'{e:.3g}' for e in shape.size)} m; the "
                            f"shortest is under {MIN_THICKNESS:g} of the longest (its corners "
                            "do not span a volume in double precision): give it a thickness")
        if "points" in CONTACT_SHAPES[shape.type][0]:
            if shape.file_error:
                c.add(k, field, shape.file_error)
            else:
                _check_points(k, field, shape.points, c)
    if len(types) == 2 and tuple(types) not in CONTACT_PAIRS and \
            tuple(types[::-1]) not in CONTACT_PAIRS:
        pairs = ", ".join(f"{a}-{b}" for a, b in CONTACT_PAIRS)
        c.add(k, "InputShape", f"a {types[0]} against a {types[1]} is not supported yet; the "
                               f"supported pairs are {pairs}")
    if k.stiffness is None:
        c.add(k, "Stiffness", "is missing (N/m^Exponent)")
    elif not (np.isfinite(k.stiffness) and k.stiffness > 0):
        c.add(k, "Stiffness", f"{k.stiffness!r}; must be a positive number (N/m^Exponent)")
    if not (np.isfinite(k.exponent) and 1.0 <= k.exponent <= 3.0):
        c.add(k, "Exponent", f"{k.exponent!r}; must be between 1 and 3 (1.5: Hertz)")
    if not (np.isfinite(k.restitution) and 0.0 < k.restitution <= 1.0):
        c.add(k, "Restitution", f"{k.restitution!r}; must be above 0 and at most 1")
    if not (np.isfinite(k.impact_speed) and k.impact_speed > 0):
        c.add(k, "ImpactSpeed", f"{k.impact_speed!r} m/s; must be positive")
    for attr, field in (("static_friction", "StaticFriction"),
                        ("dynamic_friction", "DynamicFriction")):
        v = getattr(k, attr)
        if not (np.isfinite(v) and v >= 0):
            c.add(k, field, f"{v!r}; must be a finite number, not negative")
        elif v > MAX_FRICTION:
            c.add(k, field, f"{v!r}; a friction coefficient is at most {MAX_FRICTION:g}")
    if not (np.isfinite(k.stiction_velocity) and k.stiction_velocity > 0):
        c.add(k, "StictionVelocity", f"{k.stiction_velocity!r} m/s; must be positive")


def _check_motor_reach(model, h, field, coordinate, speed, c):
    """A motor's coordinate must stay within :data:`MAX_POSITION` (m) or :data:`MAX_ANGLE`
    (rad) over the run: at 1e300 rad/s its angle, loads and work overflow."""
    rotation = COORDINATE_KIND[coordinate] == "rotation"
    limit, unit = (MAX_ANGLE, "rad") if rotation else (MAX_POSITION, "m")
    end = getattr(model.simulation, "end_time", None)
    if not (isinstance(end, (int, float)) and np.isfinite(end) and end > 0):
        return
    if abs(speed) * end > limit:
        c.add(h, field, (
            f"the speed of coordinate '{coordinate}', {speed:g} {unit}/s, takes it "
            f"{abs(speed) * end:.3g} {unit} in EndTime {end:g} s, beyond the {limit:g} {unit} "
            "a coordinate may reach"))


def hinged_contacts(model: MultibodySystem) -> list[Problem]:  # noqa: F821  (mechanism's class)
    """Warnings, not problems (a run is not refused): the contacts between two bodies that a
    hinge already joins directly, each naming the contact and the hinge.

    Such a contact acts on top of the hinge (a pin's shape against its own bore pushes the bodies
    apart where the hinge holds them together): it is meant only when the hinge lets the shapes
    meet (a stop face on a prismatic guide). Only hinges that hold something and leave something
    free count: a fixed hinge's contact is refused by :func:`validate`, and a hinge with all six
    coordinates (free, bushing) is how a body floats, its contacts being what stops it. A
    contact whose markers are missing is left to :func:`validate` too.
    """
    out = []
    for k in model.contacts:
        if k.input is None or k.output is None or k.input.body == k.output.body:
            continue
        pair = {k.input.body, k.output.body}
        for h in model.hinges:
            kind = HINGE_TYPES.get(h.type)
            if kind is not None and 0 < len(kind.coordinates) < 6 and h.input is not None \
                    and h.output is not None and {h.input.body, h.output.body} == pair:
                out.append(Problem(
                    element_name(k), "Output",
                    f"'{k.input.body}' and '{k.output.body}' are also joined by the {h.type} "
                    f"hinge '{h.name}': the contact acts on top of the hinge; keep it only if "
                    "the hinge lets these shapes meet (a pin in its bore is the hinge's, not a "
                    "contact's)"))
    return out


def _check_coupler(model, k, c):
    """A coupler: its type, its two coordinates (of the kinds the type couples) and its field."""
    t = COUPLER_TYPES.get(k.type)
    if t is None:
        c.add(k, "Type", f"'{k.type}' is not a coupler type; use one of "
                         f"{', '.join(COUPLER_TYPES)}")
    kinds = []
    for field, ref, i in (("First", k.first, 0), ("Second", k.second, 1)):
        if ref is None:
            c.add(k, field, "is missing: name a hinge and one of its coordinates")
            continue
        h = model.hinge(ref.hinge)
        if h is None:
            c.add(k, field, f"refers to '{ref.hinge}', which is no hinge of the model")
            continue
        if h.kind is None:
            continue
        if ref.coordinate not in h.kind.coordinates:
            c.add(k, field, f"coordinate '{ref.coordinate}' is not one of the {h.type} hinge "
                            f"'{h.name}''s ({', '.join(h.kind.coordinates)})")
            continue
        kind = COORDINATE_KIND[ref.coordinate]
        if h.kind.quaternion and kind == "rotation":
            c.add(k, field, f"the {h.type} hinge '{h.name}''s rotations are three angles; couple "
                            "a revolute, cylindrical, universal or planar hinge's rotation")
            continue
        if t is not None and t.kinds[i] is not None and t.kinds[i] != kind:
            c.add(k, field, f"a {t.name} coupler's {field.lower()} coordinate is a "
                            f"{t.kinds[i]}; '{ref}' is a {kind}")
        kinds.append(kind)
    if k.first is not None and k.second is not None and \
            (k.first.hinge, k.first.coordinate) == (k.second.hinge, k.second.coordinate):
        c.add(k, "Second", f"couples '{k.first}' with itself")
    if t is None:
        return
    for attr, field in (("ratio", "Ratio"), ("pitch_radius", "PitchRadius"),
                        ("coefficients", "Coefficients")):
        v = getattr(k, attr)
        if attr != t.field:
            if v is not None:
                c.add(k, field, f"a {t.name} coupler takes no {field}")
            continue
        if v is None:
            c.add(k, field, f"is missing (a {t.name} coupler needs it)")
        elif attr == "coefficients":
            if v.size != 2 or not _finite(v) or v[1] == 0.0:
                c.add(k, field, "needs two finite numbers a, b with b not 0")
        elif not (np.isfinite(v) and v != 0.0):
            c.add(k, field, f"{v!r}; must be a finite number, not 0")


def _check_expression(model, obj, field, text, order, c) -> None:
    """Parse a function of time and its derivatives up to ``order`` (a driver's velocity and
    acceleration) and evaluate them at t = 0 and at :data:`EXPRESSION_SAMPLES` times up to the
    end time: what a run would fail on is said here."""
    try:
        f = parse(text, element_name(obj), field)
        fs = [f.derivative(k) for k in range(order + 1)]
    except ExpressionError as exc:
        c.add(obj, field, f"'{shorten(text)}': {exc}")
        return
    end = model.simulation.end_time
    times = [0.0]
    if isinstance(end, (int, float)) and np.isfinite(end) and end > 0:
        times += [float(x) for x in np.linspace(0.0, end, EXPRESSION_SAMPLES + 1)[1:]]
    for g in fs:
        try:
            for t in (times[:1] if g.is_constant else times):
                g(t)
        except EvaluationError as exc:
            c.problems.extend(exc.problems)
            return


def _check_columns(model, c):
    """Elements whose result columns would share names (``<prefix>.<quantity>``): a hinge
    called like a body is written ``hinge:<name>``, which a body may be called too."""
    from .columns import (BODY_COLUMNS, CONTACT_COLUMNS, COUPLER_COLUMNS, ENERGY_COLUMNS,
                          hinge_quantities)
    from ..elements.forces.stop import SUFFIX as STOP_SUFFIX
    closure = {"closure_gap", "closure_angle", "closure_gap_rate", "closure_angle_rate"}
    taken = {"energy": ("the energy columns", set(ENERGY_COLUMNS), None)}
    bodies = {b.name for b in model.bodies}
    columns = frozenset(BODY_COLUMNS)                 # one set for all bodies
    owners = [(b, b.name, columns) for b in model.bodies]

    def hinge_columns(h):
        q = set(hinge_quantities(h.type, [d.coordinate for d in h.drivers])) | closure
        return q | {f"{c}{STOP_SUFFIX}" for h_, c, i in stops_of([h])}

    # a hinge's quantities are listed only when another element has its prefix (rarely)
    owners += [(h, f"hinge:{h.name}" if h.name in bodies else h.name, None)
               for h in model.hinges if h.type in HINGE_TYPES]
    contact_columns = frozenset(CONTACT_COLUMNS)
    owners += [(k, k.name, contact_columns) for k in model.contacts]
    owners += [(k, k.name, frozenset(COUPLER_COLUMNS)) for k in model.couplers]

    def listed(obj, qties):
        return hinge_columns(obj) if qties is None else qties

    for obj, prefix, qties in owners:
        other = taken.get(prefix)
        if other is None:
            taken[prefix] = (element_name(obj), qties, obj)
        elif other[0] != element_name(obj) and listed(other[2], other[1]) & listed(obj, qties):
            c.add(obj, "Name", f"its result columns '{shorten(prefix, 40)}.*' would have the "
                               f"names of those of {other[0]}; rename one of them")


def _check_connectivity(model, c):
    """Bodies that no chain of hinges joins to the ground."""
    if model.ground is None:
        return
    adj = defaultdict(set)
    for h in model.hinges:
        if h.input is not None and h.output is not None:
            adj[h.input.body].add(h.output.body)
            adj[h.output.body].add(h.input.body)
    reached = {model.ground.name}
    stack = [model.ground.name]
    while stack:
        for nb in adj[stack.pop()]:
            if nb not in reached:
                reached.add(nb)
                stack.append(nb)
    for body in model.bodies:
        if body.name in reached:
            continue
        if not adj[body.name]:
            c.add(body, "Hinge", "the body is connected to nothing; join it to the mechanism with "
                                 "a hinge (a free hinge to the ground for a floating body)")
        else:
            group = sorted(_component(adj, body.name))
            c.add(body, "Hinge", "no chain of hinges joins the body to the ground (it hangs together "
                                 f"with {', '.join(n for n in group if n != body.name)} only)")


def _component(adj, start):
    seen, stack = {start}, [start]
    while stack:
        for nb in adj[stack.pop()]:
            if nb not in seen:
                seen.add(nb)
                stack.append(nb)
    return seen


def _check_simulation(model, c):
    s = model.simulation
    for attr, xml, unit in (("end_time", "EndTime", "s"), ("step", "Step", "s"),
                            ("output_step", "OutputStep", "s"),
                            ("relative_tolerance", "RelativeTolerance", ""),
                            ("absolute_tolerance", "AbsoluteTolerance", "")):
        v = getattr(s, attr)
        if not (np.isfinite(v) and v > 0):
            c.add(s, xml, f"{v!r} {unit}".rstrip() + "; must be positive")
    if s.method not in METHODS:
        c.add(s, "Method", f"'{s.method}' is not a method; use one of {', '.join(METHODS)}")
    c.problems.extend(run_size_problems(model, s.end_time, s.step, s.output_step, s.method,
                                        s.integrator))
    if s.integrator not in INTEGRATORS:
        c.add(s, "Integrator",
              f"'{s.integrator}' is not an integrator; use one of {', '.join(INTEGRATORS)}")


def _columns(model) -> int:
    """About how many result columns a run of ``model`` has (time, bodies, hinges, energies)."""
    from .columns import BODY_COLUMNS, ENERGY_COLUMNS, hinge_quantities
    return 1 + len(BODY_COLUMNS) * len(model.bodies) + len(ENERGY_COLUMNS) + sum(
        len(hinge_quantities(h.type)) for h in model.hinges if h.type in HINGE_TYPES)


def result_size(model, end_time, output_step) -> tuple:
    """(rows, columns) of a run's results table, about; (0, columns) when the times are not
    positive finite numbers (the other checks say so)."""
    columns = _columns(model)
    try:
        t, dt = float(end_time), float(output_step)
    except (TypeError, ValueError):
        return 0, columns
    if not (np.isfinite(t) and np.isfinite(dt) and t > 0 and dt > 0):
        return 0, columns
    with np.errstate(all="ignore"):
        rows = t / dt + 2.0
    return (int(rows) if rows < 1e15 else 0), columns


def run_size_problems(model, end_time, step, output_step, method, integrator) -> list[Problem]:
    """What a run of these settings could not do in bounded memory and time: more than
    :data:`MAX_STEPS` fixed steps, or a results table over :data:`MAX_RESULT_BYTES`. Each
    Problem says the sizes. Settings that are not positive finite numbers are left to the
    other checks (nothing is said about them here).

    Parameters
    ----------
    end_time, step, output_step : float
        s, as in ``<Simulation>`` (a run's overrides included).
    method, integrator : str
        The method and integrator: the step count limits fixed-step runs only.
    """
    out = []
    try:
        t, h, dt = float(end_time), float(step), float(output_step)
    except (TypeError, ValueError):
        return out
    if not all(np.isfinite(x) and x > 0 for x in (t, h, dt)):
        return out
    # the fixed-step implicit integrator takes EndTime / Step steps too (halved only where
    # Newton's iteration fails)
    fixed = integrator in FIXED_STEP + ("trbdf2",) or method == "newton-euler"
    with np.errstate(all="ignore"):
        steps, rows = t / h, t / dt + 2.0
    if fixed and not steps <= MAX_STEPS:
        out.append(Problem("Simulation", "Step",
                           f"EndTime {t:g} s / Step {h:g} s is {steps:.3g} steps; at most "
                           f"{MAX_STEPS:.3g} are allowed: use a larger Step or a shorter EndTime"))
    with np.errstate(all="ignore"):
        per_output = dt / h
    if fixed and not per_output <= MAX_STEPS:
        out.append(Problem("Simulation", "OutputStep",
                           f"OutputStep {dt:g} s is {per_output:.3g} steps of {h:g} s; at most "
                           f"{MAX_STEPS:.3g} are allowed: use an OutputStep of at most EndTime"))
    columns = _columns(model)
    size = rows * columns * 8.0
    if not size <= MAX_RESULT_BYTES:
        out.append(Problem("Simulation", "OutputStep",
                           f"EndTime {t:g} s / OutputStep {dt:g} s gives {rows:.3g} output rows "
                           f"of {columns} columns: {size / 1e9:.3g} GB of results, more than "
                           f"{MAX_RESULT_BYTES / 1e9:g} GB; use a larger OutputStep or a "
                           "shorter EndTime"))
    return out
