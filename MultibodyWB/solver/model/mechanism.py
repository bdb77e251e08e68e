"""The neutral multibody model: plain Python objects in SI units.

One :class:`MultibodySystem` describes one mechanism: a ground, rigid bodies with markers, hinges
connecting markers, forces, gravity and simulation settings. It is what the FreeCAD layer exports,
what the XML file (``xmlio``) stores, and what every solver reads.

Units: m, kg, s, N, rad throughout. Orientation triples are Bryant angles (see ``rotations``).

Which hinge types exist, how many coordinates each has and which options each takes is data:
:data:`HINGE_TYPES` and :data:`FORCE_TYPES` drive the schema check, the reader and writer, the
GUI and the solvers alike.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ..elements.couplers import COUPLER_TYPES  # noqa: F401  (the package exports it)
from ..elements.forces import FORCE_TYPES, ForceType
from ..elements.forces.contact import PAIRS as CONTACT_PAIRS  # noqa: F401  (exported)
from ..elements.forces.contact import SHAPES as CONTACT_SHAPES  # noqa: F401  (exported)
from ..elements.hinges import HINGE_TYPES, HingeType
from ..maths.rotations import bryant_to_matrix
from .problems import ModelError, Problem

FORMAT_VERSION = 1



# --------------------------------------------------------------------------------------------------
# Model objects
# --------------------------------------------------------------------------------------------------

def _vec(v, n=3) -> np.ndarray:
    a = np.array(v, dtype=float).reshape(-1)
    if a.size != n:
        raise ValueError(f"expected {n} numbers, got {a.size}")
    return a


def _bryant(a: float, b: float, c: float) -> np.ndarray:
    """``Rx(a) Ry(b) Rz(c)`` (rad), shape (3, 3): :func:`~.rotations.bryant_to_matrix` written
    out (the same entries to rounding, without three matrix products; no -0 entries)."""
    sa, ca = math.sin(a), math.cos(a)
    sb, cb = math.sin(b), math.cos(b)
    sc, cc = math.sin(c), math.cos(c)
    return np.array([[cb * cc, -cb * sc, sb],
                     [ca * sc + sa * sb * cc, ca * cc - sa * sb * sc, -sa * cb],
                     [sa * sc - ca * sb * cc, sa * cc + ca * sb * sc, ca * cb]]) + 0.0


@dataclass
class Frame:
    """A position (m) and Bryant-angle orientation (rad) relative to a parent frame."""

    position: np.ndarray = field(default_factory=lambda: np.zeros(3))
    orientation: np.ndarray = field(default_factory=lambda: np.zeros(3))

    def __post_init__(self):
        self.position = np.array(self.position, dtype=float).reshape(-1)
        self.orientation = np.array(self.orientation, dtype=float).reshape(-1)

    @property
    def rotation(self) -> np.ndarray:
        """Rotation matrix (3, 3): parent components = rotation @ local components.

        Computed once per orientation (a fresh copy each time: the caller may change it).
        """
        key = np.asarray(self.orientation, dtype=float).tobytes()
        cached = self.__dict__.get("_rotation")
        if cached is None or cached[0] != key:
            o = self.orientation
            cached = (key, _bryant(float(o[0]), float(o[1]), float(o[2])) if len(o) == 3
                      else bryant_to_matrix(o))
            self.__dict__["_rotation"] = cached
        return cached[1].copy()

    def __getstate__(self):           # copies and pickles leave the cached rotation out
        return {k: v for k, v in self.__dict__.items() if k != "_rotation"}

    def to_parent(self, p_local) -> np.ndarray:
        """A point given in this frame, in the parent frame (m)."""
        return self.position + self.rotation @ np.asarray(p_local, dtype=float)


@dataclass
class Marker:
    """A frame fixed on a body, given in the body's base frame. ``id`` is unique on its body."""

    id: int
    frame: Frame = field(default_factory=Frame)
    label: str = ""


@dataclass
class MarkerRef:
    """A reference to a marker: the body's (or ground's) name and the marker's ID on it."""

    body: str
    marker: int

    def __str__(self) -> str:
        return f"{self.body}:{self.marker}"


#: How many times a part or hinge was named (created or renamed): a name index built since
#: then (:meth:`MultibodySystem._index`) knows every name there is.
_NAMINGS = [0]
#: How many times a body or hinge was given an ``id`` (created, or its id changed): the largest
#: id a model found since then (:meth:`MultibodySystem._next_id`) is still the largest.
_NUMBERINGS = [0]


class _Named:
    """Counts the assignments of ``name`` in :data:`_NAMINGS` and of ``id`` in
    :data:`_NUMBERINGS`."""

    def __setattr__(self, key, value):
        if key == "name":
            _NAMINGS[0] += 1
        elif key == "id":
            _NUMBERINGS[0] += 1
        object.__setattr__(self, key, value)


@dataclass
class _Part(_Named):
    """What the ground and rigid bodies share: a name, a base frame and markers."""

    name: str
    position: np.ndarray = field(default_factory=lambda: np.zeros(3))
    orientation: np.ndarray = field(default_factory=lambda: np.zeros(3))
    markers: list[Marker] = field(default_factory=list)
    label: str = ""

    def __post_init__(self):
        self.position = np.array(self.position, dtype=float).reshape(-1)
        self.orientation = np.array(self.orientation, dtype=float).reshape(-1)

    @property
    def base(self) -> Frame:
        """The base frame relative to the global frame."""
        return Frame(self.position, self.orientation)

    def marker(self, marker_id: int) -> Optional[Marker]:
        """The marker with this ID, or None."""
        for m in self.markers:
            if m.id == marker_id:
                return m
        return None

    def add_marker(self, position=(0.0, 0.0, 0.0), orientation=(0.0, 0.0, 0.0), label="",
                   marker_id: Optional[int] = None) -> MarkerRef:
        """Add a marker (base-frame position in m, Bryant angles in rad); return a reference to it."""
        if marker_id is None:
            marker_id = max((m.id for m in self.markers), default=0) + 1
        self.markers.append(Marker(marker_id, Frame(position, orientation), label))
        return MarkerRef(self.name, marker_id)

    def marker_global(self, marker_id: int) -> tuple[np.ndarray, np.ndarray]:
        """Global position (m) and rotation matrix (3, 3) of a marker in the drawn configuration."""
        m = self.marker(marker_id)
        R0 = bryant_to_matrix(self.orientation)
        return self.position + R0 @ m.frame.position, R0 @ m.frame.rotation


@dataclass
class Ground(_Part):
    """The inertial body: the MSTMM boundary, numbered 0. Its markers anchor hinges and forces."""

    element = "Ground"


@dataclass
class RigidBody(_Part):
    """A rigid body.

    Attributes
    ----------
    id : int
        Number of the body in the uniform numbering of bodies and hinges.
    mass : float
        kg, > 0.
    inertia : ndarray, shape (6,)
        ``JI`` = (Ixx, Iyy, Izz, Ixy, Ixz, Iyz) in kg m^2 about the base-frame origin in base-frame
        axes; products are tensor entries (Ixy = -integral of x*y dm).
    mass_center : Frame
        The mass centre in the base frame (its orientation is informative only).
    density : float or None
        kg/m^3, informative (the mass is what counts).
    initial_velocity, initial_angular_velocity : ndarray, shape (3,) or None
        Global velocity of the base-frame origin (m/s) and angular velocity (rad/s) at t = 0, for
        bodies whose motion they determine (free hinges); None when not given.
    """

    element = "RigidBody"
    id: int = 0
    mass: float = 1.0
    inertia: np.ndarray = field(default_factory=lambda: np.array([1.0, 1.0, 1.0, 0.0, 0.0, 0.0]))
    mass_center: Frame = field(default_factory=Frame)
    density: Optional[float] = None
    initial_velocity: Optional[np.ndarray] = None
    initial_angular_velocity: Optional[np.ndarray] = None

    def __post_init__(self):
        super().__post_init__()
        self.inertia = np.array(self.inertia, dtype=float).reshape(-1)
        if self.initial_velocity is not None:
            self.initial_velocity = np.array(self.initial_velocity, dtype=float).reshape(-1)
        if self.initial_angular_velocity is not None:
            self.initial_angular_velocity = np.array(self.initial_angular_velocity,
                                                     dtype=float).reshape(-1)


@dataclass
class Driver:
    """A hinge coordinate prescribed as a function of time (expression ``f`` in ``t``).

    ``from_start`` False: the coordinate is ``f(t)`` (measured from the markers' coinciding
    frames, the "zero" of the coordinate). True: it is ``q_start + f(t)``, ``q_start`` the
    coordinate's start value (its initial coordinate, else as drawn), so that ``2*pi*t`` turns a
    crank from where it is drawn.
    """

    coordinate: str
    expression: str
    from_start: bool = False


@dataclass
class Motor:
    """A hinge coordinate driven at a constant speed from its start value (see :class:`Driver`).

    ``speed`` in m/s (translations) or rad/s (rotations); ``ramp_time`` (s) > 0 brings the speed
    up from zero smoothly (a half-cosine in the speed: the acceleration is continuous and zero at
    both ends of the ramp), 0 starts at full speed.
    """

    coordinate: str
    speed: float
    ramp_time: float = 0.0

    def expression(self) -> str:
        """The motor's displacement from the start as an expression in ``t`` (m or rad)."""
        w, T = repr(float(self.speed)), repr(float(self.ramp_time))
        if self.ramp_time <= 0.0:
            return f"{w}*t"
        tau = f"min(t, {T})"
        return f"0.5*{w}*({tau} - {T}/pi*sin(pi*{tau}/{T})) + {w}*(t - {tau})"


@dataclass
class Hinge(_Named):
    """A joint between a marker on its input (tip-side) body and one on its output (root-side) body.

    Vectors have one entry per coordinate of the type (``HINGE_TYPES[type].coordinates``), in m or
    rad for coordinates, and the units of :data:`STIFFNESS_UNIT` / :data:`DAMPING_UNIT`.

    ``initial_coordinates`` None means "as drawn": the coordinates are measured from the markers'
    poses in the bodies' drawn configuration.  ``spring_reference`` is the coordinate value at
    which the hinge's spring is relaxed (default 0: markers coincide); with
    ``spring_reference_start`` it is the coordinates' start value instead (no stored energy at
    t = 0). ``motors`` drive coordinates at constant speed from their start values.

    Given ``initial_coordinates`` and ``initial_rates`` are prescribed: a run keeps them exactly
    or refuses to start. With ``initial_coordinates_estimate`` / ``initial_rates_estimate`` they
    are estimates (seed 003's "initial estimate for closed loop systems") that the assembly of
    closed loops may change.

    ``lower_limits``/``upper_limits`` are enforced by stops (:mod:`~..elements.forces.stop`):
    ``stop_stiffness`` (N/m or N m/rad per coordinate; needed for every limited coordinate),
    ``stop_restitution`` (1, default 0.5) at ``stop_impact_speed`` (m/s or rad/s, default 1).

    ``initial_angular_velocity`` (spherical, free and bushing hinges): the input marker's angular
    velocity relative to the output marker at t = 0, in output-marker axes (rad/s), the results'
    ``wx, wy, wz``; it replaces the rotation entries of ``initial_rates`` (Bryant-angle rates).
    """

    element = "Hinge"
    name: str
    id: int
    type: str
    input: MarkerRef
    output: MarkerRef
    label: str = ""
    initial_coordinates: Optional[np.ndarray] = None
    initial_rates: Optional[np.ndarray] = None
    stiffness: Optional[np.ndarray] = None
    damping: Optional[np.ndarray] = None
    spring_reference: Optional[np.ndarray] = None
    lower_limits: Optional[np.ndarray] = None
    upper_limits: Optional[np.ndarray] = None
    drivers: list[Driver] = field(default_factory=list)
    motors: list[Motor] = field(default_factory=list)
    spring_reference_start: bool = False
    initial_coordinates_estimate: bool = False
    initial_rates_estimate: bool = False
    initial_angular_velocity: Optional[np.ndarray] = None
    stop_stiffness: Optional[np.ndarray] = None
    stop_restitution: Optional[np.ndarray] = None
    stop_impact_speed: Optional[np.ndarray] = None

    _VECTORS = ("initial_coordinates", "initial_rates", "stiffness", "damping",
                "spring_reference", "lower_limits", "upper_limits", "initial_angular_velocity",
                "stop_stiffness", "stop_restitution", "stop_impact_speed")

    def __post_init__(self):
        for name in self._VECTORS:
            v = getattr(self, name)
            if v is not None:
                setattr(self, name, np.array(v, dtype=float).reshape(-1))

    @property
    def kind(self) -> Optional[HingeType]:
        """The :class:`HingeType`, or None for an unknown type."""
        return HINGE_TYPES.get(self.type)

    def vector(self, name: str) -> np.ndarray:
        """A per-coordinate vector with its default filled in (zeros; limits -inf / +inf)."""
        v = getattr(self, name)
        if v is not None:
            return v
        n = self.kind.dof if self.kind else 0
        fill = {"lower_limits": -np.inf, "upper_limits": np.inf}.get(name, 0.0)
        return np.full(n, fill)


@dataclass
class Force:
    """An applied load. ``type`` is a key of :data:`FORCE_TYPES`, which says which fields apply.

    ``direction`` (point force and torque) is given in global axes, or in the marker's axes when
    ``frame == "marker"``; the load is ``magnitude(t) * direction``.
    """

    element = "Force"
    name: str
    type: str
    input: MarkerRef
    output: Optional[MarkerRef] = None
    label: str = ""
    direction: Optional[np.ndarray] = None
    frame: str = "global"
    magnitude: str = "0"
    stiffness: float = 0.0
    damping: float = 0.0
    free_length: Optional[float] = None   #: None: the distance between the markers as drawn
    #: the law's own parameters (``ForceType.params``): attr -> a number, or an array (3,) per
    #: axis; one left out takes its row's default
    params: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.direction is not None:
            self.direction = np.array(self.direction, dtype=float).reshape(-1)

    def value(self, attr: str):
        """The law's parameter ``attr``: as given, or its default (a float, or an array (3,)
        per axis). KeyError when the type has no such parameter."""
        kind = self.kind
        p = kind.param(attr) if kind else None
        if p is None:
            raise KeyError(f"force type {self.type!r} has no parameter {attr!r}")
        if attr in self.params:
            return self.params[attr]
        return p.default if p.size == 1 else np.full(p.size, p.default)

    @property
    def kind(self) -> Optional[ForceType]:
        """The :class:`ForceType`, or None for an unknown type."""
        return FORCE_TYPES.get(self.type)


@dataclass
class ContactShape:
    """One side's shape of a contact (:data:`CONTACT_SHAPES`), placed at its marker: ``radius``
    and ``length`` (m) for spheres and cylinders, ``size`` (3,) edge lengths (m) of a box,
    ``points`` (n, 3) (m, in the marker's frame) whose convex hull is a ``convex`` shape;
    ``radius2`` a cone's radius at its +z end (``radius`` at its -z end) or a torus's tube radius
    (``radius`` its centre circle's).

    ``file`` (a convex shape's points from a mesh file): the file's absolute path as read
    (written relative to the model file), ``unit`` its coordinates' unit; ``file_error`` why it
    could not be read (the checks report it)."""

    type: str
    radius: float = 0.0
    length: float = 0.0
    size: Optional[np.ndarray] = None
    points: Optional[np.ndarray] = None
    file: Optional[str] = None
    radius2: float = 0.0
    unit: str = "m"
    file_error: Optional[str] = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        if self.size is not None:
            self.size = np.array(self.size, dtype=float).reshape(-1)
        if self.points is not None:
            p = np.array(self.points, dtype=float).reshape(-1)
            self.points = p.reshape(-1, 3) if p.size % 3 == 0 else p


@dataclass
class Contact:
    """Contact between a shape on the input marker's body and one on the output marker's (or the
    ground's): Hunt-Crossley normal force and regularised Coulomb friction (see
    :mod:`~..elements.forces.contact` for the formulas).

    ``stiffness`` k (N/m^exponent); ``restitution`` (1) at ``impact_speed`` (m/s);
    ``static_friction`` and ``dynamic_friction`` (1; 0: frictionless); ``stiction_velocity``
    (m/s), the slip speed at which the static coefficient is reached.
    """

    element = "Contact"
    name: str
    input: MarkerRef
    output: MarkerRef
    input_shape: ContactShape
    output_shape: ContactShape
    label: str = ""
    stiffness: Optional[float] = None
    exponent: float = 1.5
    restitution: float = 0.5
    impact_speed: float = 1.0
    static_friction: float = 0.0
    dynamic_friction: float = 0.0
    stiction_velocity: float = 1e-3


@dataclass
class CoordinateRef:
    """A hinge coordinate: the hinge's name and the coordinate's name (``rz``, ``z``, ...)."""

    hinge: str
    coordinate: str

    def __str__(self) -> str:
        return f"{self.hinge}.{self.coordinate}"


@dataclass
class Coupler:
    """A linear constraint between two hinge coordinates (:data:`COUPLER_TYPES`): gear pair,
    belt, rack and pinion, or ``a u1 + b u2 = 0``. ``ratio`` (1) for gear and belt,
    ``pitch_radius`` (m/rad) for rack_pinion, ``coefficients`` (a, b) for linear; see
    :mod:`~..elements.couplers`."""

    element = "Coupler"
    name: str
    type: str
    first: CoordinateRef
    second: CoordinateRef
    label: str = ""
    ratio: Optional[float] = None
    pitch_radius: Optional[float] = None
    coefficients: Optional[np.ndarray] = None

    def __post_init__(self):
        if self.coefficients is not None:
            self.coefficients = np.array(self.coefficients, dtype=float).reshape(-1)


@dataclass
class Simulation:
    """Simulation settings (s for times)."""

    element = "Simulation"
    end_time: float = 1.0
    step: float = 1e-3            #: integrator step (fixed-step) or first step (adaptive), s
    output_step: float = 1e-2     #: spacing of the stored results, s
    method: str = "mstmm"
    integrator: str = "rk4"
    relative_tolerance: float = 1e-8
    absolute_tolerance: float = 1e-10


@dataclass
class MultibodySystem:
    """A whole mechanism.

    ``grounds`` holds the ground(s) as read; a valid model has exactly one (:attr:`ground`).
    ``gravity`` is the gravitational acceleration in global axes (m/s^2).
    """

    name: str = "Mechanism"
    grounds: list[Ground] = field(default_factory=list)
    bodies: list[RigidBody] = field(default_factory=list)
    hinges: list[Hinge] = field(default_factory=list)
    forces: list[Force] = field(default_factory=list)
    contacts: list[Contact] = field(default_factory=list)
    couplers: list[Coupler] = field(default_factory=list)
    gravity: np.ndarray = field(default_factory=lambda: np.zeros(3))
    simulation: Simulation = field(default_factory=Simulation)
    description: str = ""

    def __post_init__(self):
        self.gravity = np.array(self.gravity, dtype=float).reshape(-1)

    # -- building -----------------------------------------------------------------------------
    @property
    def ground(self) -> Optional[Ground]:
        """The ground, or None when there is not exactly one."""
        return self.grounds[0] if len(self.grounds) == 1 else None

    def set_ground(self, name="Ground", position=(0, 0, 0), orientation=(0, 0, 0),
                   label="") -> Ground:
        """Create the ground (replacing any) and return it."""
        g = Ground(name, position, orientation, label=label)
        self.grounds = [g]
        return g

    def _next_id(self) -> int:
        """One more than the largest id of the bodies and hinges (1 for none).

        The largest id is kept with what it was found in (:meth:`_largest_id`), so that adding
        n bodies and hinges one by one costs O(n), not O(n^2).
        """
        return max(self._largest_id("bodies"), self._largest_id("hinges"), 0) + 1

    def _largest_id(self, attr: str) -> int:
        """The largest ``id`` in the list ``attr`` (``bodies`` or ``hinges``), 0 for none.

        Remembered with the list, its length, its last element and :data:`_NUMBERINGS`; found
        again from scratch when the list was replaced or shortened, when its last element before
        is no longer where it was (an element inserted or removed), or when some body or hinge was
        given an id since (created, or its id changed). Elements appended since are looked at
        alone. Not seen: an element replaced by one made before the last look (its id may then be
        the largest and given again; the checks report ids used twice).
        """
        items = getattr(self, attr)
        cache = self.__dict__.setdefault("_ids", {})
        entry = cache.get(attr)
        n = len(items)
        if (entry is not None and entry[0] is items and entry[3] == _NUMBERINGS[0]
                and entry[1] <= n and (entry[1] == 0 or items[entry[1] - 1] is entry[2])):
            largest = entry[4]
            for x in items[entry[1]:]:                  # appended since: only those
                largest = max(largest, x.id)
        else:
            largest = max((x.id for x in items), default=0)
        cache[attr] = (items, n, items[-1] if n else None, _NUMBERINGS[0], largest)
        return largest

    def add_body(self, name, mass, inertia, mass_center=(0, 0, 0), position=(0, 0, 0),
                 orientation=(0, 0, 0), density=None, label="", **kw) -> RigidBody:
        """Add a rigid body; ``inertia`` is JI about the base-frame origin (see :class:`RigidBody`)."""
        b = RigidBody(name, position, orientation, label=label, id=kw.pop("id", self._next_id()),
                      mass=float(mass), inertia=inertia, mass_center=Frame(mass_center),
                      density=density, **kw)
        self._append("bodies", b)
        return b

    def add_hinge(self, name, type, input, output, label="", **kw) -> Hinge:
        """Add a hinge from marker ``input`` (tip side) to marker ``output`` (root side)."""
        h = Hinge(name, kw.pop("id", self._next_id()), type, input, output, label=label, **kw)
        self._append("hinges", h)
        return h

    def _append(self, attr: str, x) -> None:
        """Append ``x``, a body or hinge just made (after :meth:`_next_id`), to the list ``attr``
        and keep the largest ids known (:meth:`_largest_id`): when they were known right before
        ``x`` was made, its id is the only one given since."""
        items = getattr(self, attr)
        items.append(x)
        cache = self.__dict__.get("_ids")
        if not cache:
            return
        now = _NUMBERINGS[0]
        for key, (lst, n, last, seen, largest) in list(cache.items()):
            if seen != now - 1:
                continue                                # ids given since: found again later
            if key != attr:
                cache[key] = (lst, n, last, now, largest)
            elif lst is items and n == len(items) - 1 and (n == 0 or items[n - 1] is last):
                try:
                    cache[key] = (items, n + 1, x, now, max(largest, x.id))
                except TypeError:                       # not a number: as before, found later
                    del cache[key]

    def add_force(self, name, type, input, output=None, **kw) -> Force:
        """Add a force element (see :data:`FORCE_TYPES`)."""
        f = Force(name, type, input, output, **kw)
        self.forces.append(f)
        return f

    def add_contact(self, name, input, output, input_shape, output_shape, **kw) -> Contact:
        """Add a contact; the shapes are :class:`ContactShape` or ``(type, {field: value})``."""
        shapes = [s if isinstance(s, ContactShape) else ContactShape(s[0], **(s[1] if len(s) > 1
                                                                              else {}))
                  for s in (input_shape, output_shape)]
        c = Contact(name, input, output, *shapes, **kw)
        self.contacts.append(c)
        return c

    def add_coupler(self, name, type, first, second, **kw) -> Coupler:
        """Add a coupler; ``first`` and ``second`` are :class:`CoordinateRef` or ``(hinge,
        coordinate)``."""
        refs = [r if isinstance(r, CoordinateRef) else CoordinateRef(*r) for r in (first, second)]
        c = Coupler(name, type, *refs, **kw)
        self.couplers.append(c)
        return c

    def __getstate__(self):           # copies and pickles leave the indexes out
        return {k: v for k, v in self.__dict__.items() if k not in ("_lookup", "_ids")}

    # -- look-up ------------------------------------------------------------------------------
    def _index(self, attr: str, name: str):
        """The first element of the list ``attr`` called ``name``, or None, through a name index.

        Elements appended since the last look-up are added to the index; it is rebuilt when the
        list was replaced or shortened, or when an entry it gives no longer holds (an element
        renamed, moved or inserted before it); a name it does not know is looked for once more in
        a fresh index only when some part or hinge was named (created or renamed) since the index
        was built (:data:`_NAMINGS`). Look-ups cost O(1) on a model that does not change, so that
        checking a model of n bodies is linear in n.
        """
        items = getattr(self, attr)
        cache = self.__dict__.setdefault("_lookup", {})
        entry = cache.get(attr)
        if entry is not None and entry[0] is items and entry[1] == len(items):
            i = entry[2].get(name)                      # the common case: a hit, unchanged
            if i is not None and items[i].name == name:
                return items[i]
        if entry is not None and entry[0] is items and entry[1] < len(items):
            index = entry[2]                            # elements appended: index the new ones
            for i in range(entry[1], len(items)):
                index.setdefault(items[i].name, i)
            entry = cache[attr] = (items, len(items), index, entry[3])
        for fresh in (False, True):
            if fresh or entry is None or entry[0] is not items or entry[1] != len(items):
                index = {}
                generation = _NAMINGS[0]
                for i, x in enumerate(items):
                    index.setdefault(x.name, i)
                entry = cache[attr] = (items, len(items), index, generation)
                fresh = True
            i = entry[2].get(name)
            if i is not None and i < len(items) and items[i].name == name:
                return items[i]
            if i is None and entry[3] == _NAMINGS[0]:   # no element named since: a true miss
                return None
            if fresh:
                return None
        return None  # pragma: no cover

    def part(self, name: str):
        """The ground or body called ``name``, or None."""
        for p in self.grounds:
            if p.name == name:
                return p
        return self._index("bodies", name)

    def body(self, name: str) -> Optional[RigidBody]:
        """The rigid body called ``name``, or None."""
        return self._index("bodies", name)

    def hinge(self, name: str) -> Optional[Hinge]:
        """The hinge called ``name``, or None."""
        return self._index("hinges", name)

    def is_ground(self, name: str) -> bool:
        """True when ``name`` is a ground."""
        return any(g.name == name for g in self.grounds)

    def validate(self) -> list[Problem]:
        """Every semantic problem of the model (see ``validation``); empty when valid."""
        from .validation import validate
        return validate(self)

    def check(self) -> "MultibodySystem":
        """Raise :class:`ModelError` listing every problem, else return self."""
        problems = self.validate()
        if problems:
            raise ModelError(problems)
        return self

