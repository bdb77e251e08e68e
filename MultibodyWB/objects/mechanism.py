"""The Mechanism: the container of one multibody model.

An ``App::DocumentObjectGroupPython`` whose ``Group`` holds the model's bodies, markers, hinges,
forces and its simulation settings. It holds the gravity and which body is the ground. Its
``execute`` (run after all its members, which it depends on) checks the whole model the way the
export does (:func:`MultibodyWB.objects.export.collect`), marks every member with its problems and
sets its own ``Status`` (:func:`mechanism_status`): the degrees of freedom (the Grübler–Kutzbach
count and the actual mobility, from the solver's
:func:`~MultibodyWB.solver.analysis.kinematics.mobility`), the driven coordinates, the redundant
constraints with their directions in words, and the problems that block a run. A mechanism being
built (a body not yet connected, no hinge yet) has a status, not errors: nothing is printed; the
problems are listed as errors when the user exports, checks or runs.
"""

from dataclasses import dataclass, field

import numpy as np

from .base import MECHANISM, READ_ONLY, BaseProxy, Prop, type_of, vector_prop
from .base import members, mechanism_of  # noqa: F401  (defined below the objects that use them)
from . import units

TYPE = MECHANISM


class MechanismProxy(BaseProxy):
    """Proxy of a Mechanism."""

    Type = TYPE
    KIND = "Mechanism"
    VERSION = 1
    PROPERTIES = (
        vector_prop("Gravity", "Mechanism", "Gravitational acceleration in global axes",
                    *units.VECTOR_UNITS["acceleration"], default=(0.0, 0.0, -9810.0)),
        Prop("Ground", "App::PropertyLink", "Mechanism",
             "The body that is the ground: the fixed frame, whose markers anchor hinges and "
             "forces"),
        Prop("Description", "App::PropertyString", "Mechanism",
             "What the mechanism is (written to the model file)", default=""),
        Prop("Status", "App::PropertyString", "Mechanism",
             "The state of the model (set at each recompute): degrees of freedom, driven "
             "coordinates, redundant constraints, what blocks a run", default="",
             mode=READ_ONLY, output=True),
    )
    FIELDS = {"Gravity": "Gravity", "Ground": "Ground"}

    def execute(self, obj):
        """Check the whole mechanism and mark every member with its problems."""
        from . import export
        result = export.collect(obj)
        by_object = {}
        for owner, prop, message in result.object_problems:
            by_object.setdefault(owner.Name, []).append((prop, message))
        for member in [obj] + list(obj.Group):
            proxy = getattr(member, "Proxy", None)
            if isinstance(proxy, BaseProxy):
                proxy.report(member, by_object.get(member.Name, []))
        text = mechanism_status(obj, result).text()
        if "Status" in obj.PropertiesList and obj.Status != text:
            obj.Status = text

    def check(self, obj):
        problems = []
        ground = obj.Ground
        if ground is not None and (type_of(ground) != "Multibody::Body" or ground not in obj.Group):
            problems.append(("Ground", f"'{ground.Label}' is not a body of this mechanism"))
        return problems


# --------------------------------------------------------------------------------------------------
# The status
# --------------------------------------------------------------------------------------------------

def _plural(n, word, words=None):
    return f"{n} {word if n == 1 else (words or word + 's')}"


@dataclass
class Status:
    """The state of a mechanism, in words (:func:`mechanism_status`).

    Attributes
    ----------
    headline : str
        One line: ``"1 degree of freedom"`` for a complete model, else what it lacks.
    dof, dof_gruebler : int or None
        The actual mobility (tree coordinates minus the rank of the loop constraints, at the
        drawn configuration) and the Grübler–Kutzbach count; None when the model's connections
        cannot be analysed yet.
    driven : list of str
        ``"'Crank' rz = 2*pi*t"``: the coordinates with drivers.
    loops : list of str
        Each closed loop in words: the hinge that closes it (its cut hinge: its coordinates
        follow from the others', which is why a start value typed into it is refused) and the
        parts and hinges it runs through.
    redundant : list of str
        The redundant loop constraints in words, with their directions.
    problems : list of str
        What blocks a run, each naming the object and the property.
    warnings : list of str
        What looks wrong without blocking a run (an implausible density, a contact between
        bodies a hinge already joins), each naming the object and the property.
    bodies, hinges : int
        How many there are.
    """

    headline: str = ""
    dof: object = None
    dof_gruebler: object = None
    driven: list = field(default_factory=list)
    loops: list = field(default_factory=list)
    redundant: list = field(default_factory=list)
    problems: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    bodies: int = 0
    hinges: int = 0

    @property
    def ready(self):
        """True when nothing blocks a run."""
        return not self.problems

    def details(self):
        """The lines below the headline: what blocks a run first."""
        lines = [f"To fix before a run: {line}" for line in self.problems]
        lines += [f"Warning: {line}" for line in self.warnings]
        if self.dof is not None:
            gk = f"Grübler–Kutzbach count {self.dof_gruebler}"
            if self.redundant:
                gk += f"; the difference: {_plural(len(self.redundant), 'redundant constraint')}"
            lines.append(f"Degrees of freedom: {self.dof} ({gk})")
        if self.driven:
            lines.append("Driven: " + "; ".join(self.driven))
        lines += self.loops
        for line in self.redundant:
            lines.append(f"Redundant: {line}")
        return lines

    def text(self):
        """Headline and details, one per line (the Mechanism's ``Status``)."""
        return "\n".join([self.headline] + self.details())


def _axis_words(vector):
    v = np.asarray(vector, dtype=float)
    for i, axis in enumerate("xyz"):
        for sign in (1.0, -1.0):
            if abs(v[i] - sign) < 1e-6:
                return f"{'+' if sign > 0 else '-'}{axis}"
    return "(" + ", ".join(f"{x:.3g}" for x in v) + ")"


def redundant_in_words(model, rows):
    """Redundant loop-constraint rows (``'J4: rotation about x'``) in words, with the global
    direction of the output marker's axis as drawn."""
    from ..solver.api import drawn_poses, marker_pose
    poses = drawn_poses(model)
    out = []
    for row in rows:
        hinge, _, what = row.partition(": ")
        kind, _, axis = what.rpartition(" ")
        h = model.hinge(hinge)
        direction = ""
        if h is not None and axis in "xyz" and axis:
            try:
                R = marker_pose(model, h.output, poses).R
                direction = f", global {_axis_words(R[:, 'xyz'.index(axis)])}"
            except (KeyError, ValueError, AttributeError):
                direction = ""
        rotation = kind.startswith("rotation")
        motion = "rotation about" if rotation else "translation along"
        direction = f" ({direction[2:]})" if direction else ""
        out.append(f"'{hinge}': {motion} its {axis} axis{direction} is already blocked by the "
                   f"other hinges of its loop; its reaction {'torque' if rotation else 'force'} "
                   "there is not determined")
    return out


def loops_in_words(model, topology):
    """Each closed loop of ``topology`` in words: ``"Loop 1: closed by 'Rocker pivot' (through
    'Rocker', 'Coupler', 'Crank', 'Ground')"``, labels as the tree shows them."""
    def label(name):
        for items in (model.hinges, model.bodies, model.grounds):
            for e in items:
                if e.name == name:
                    return getattr(e, "label", "") or name
        return name

    many = len(topology.loops) > 1
    return [f"Loop{f' {i}' if many else ''}: closed by '{label(lp.cut_hinge)}' (through "
            + ", ".join(f"'{label(p)}'" for p in dict.fromkeys(lp.bodies)) + ")"
            for i, lp in enumerate(topology.loops, 1)]


def mechanism_status(mechanism, result=None):
    """The :class:`Status` of ``mechanism`` (``result``: its
    :func:`MultibodyWB.objects.export.collect`, made when not given). Never raises."""
    from . import export
    from ..solver.api import analyse, mobility
    if result is None:
        result = export.collect(mechanism)
    model = result.model
    status = Status(problems=[str(p) for p in result.problems],
                    warnings=[str(w) for w in result.warnings],
                    bodies=len(model.bodies), hinges=len(model.hinges))
    status.driven = [f"'{h.name}' {d.coordinate} = {d.expression}" for h in model.hinges
                     for d in h.drivers]
    if model.grounds and model.hinges:
        try:
            topology = analyse(model)
            m = mobility(model, topology)
        except Exception:  # noqa: BLE001 - a model too broken to analyse: its problems say why
            m = None
        if m is not None:
            status.dof, status.dof_gruebler = m.dof, m.dof_gruebler
            status.redundant = redundant_in_words(model, m.redundant_constraints)
            status.loops = loops_in_words(model, topology)
    if not model.bodies and not model.grounds:
        status.headline = "Empty: select solids and press Body"
    elif not model.grounds:
        status.headline = "No ground yet: make one body the ground"
    elif not model.bodies:
        status.headline = "Only the ground so far: select solids and press Body from solids"
    elif not model.hinges:
        status.headline = (f"No hinge yet: {_plural(len(model.bodies), 'body', 'bodies')} to "
                           "connect")
    elif status.dof is None:
        status.headline = _plural(len(status.problems), "problem") + " before a run"
    else:
        free = status.dof - len(status.driven)
        head = _plural(status.dof, "degree of freedom", "degrees of freedom")
        if status.driven:
            head += f", {len(status.driven)} driven"
        if status.problems:
            head = (f"{_plural(len(status.problems), 'problem')} before a run; so far "
                    f"{head}")
        elif free < 0:
            head += f" (the drivers over-constrain it by {-free})"
        status.headline = head
    return status
