"""Motion loads into FEM: a stress analysis of one body at one instant of a stored run.

The loads come from the solver (:mod:`MultibodyWB.solver.results.instant_loads`: hinge
reactions, force elements, contacts, gravity, d'Alembert inertia, in equilibrium); this module
places them on the body's solid and makes FreeCAD's own FEM objects (``ObjectsFem``), without Qt:

- :func:`instant` collects the loads of a Result for a Body at a time or at the peak of a
  quantity, carried with the body to where its solids are drawn;
- :func:`place` finds, for every load picked at a marker, the face of the analysed solid the
  marker was picked on (a bore, a pin face: a face of another solid of the body that coincides
  with one of the analysed solid's faces counts too); loads whose marker sits on a vertex, an
  edge or the base frame cannot be placed: :class:`Placement` says so and offers the nearest
  faces;
- :func:`make_analysis` makes the Analysis: the solid's material (the body's card, else steel),
  one force constraint per loaded face (the loads at that face summed; direction and magnitude
  from the run), the translational inertia and gravity as one self-weight (a uniform
  acceleration ``g - a_C``), a fixed support on one bearing face, a Gmsh mesh and the CalculiX
  solver;
- :func:`solve` meshes, runs CalculiX and reads its results (FEM's result object, shown by
  FEM's own result viewer) and the support's reaction, which is near zero because the applied
  loads are in equilibrium (:class:`Check`).

A hinge's load is given at the body's own marker of the hinge, where its face was picked, with
its torque carried there from the point of the run's reaction columns: markers picked on the
bores of stacked parts (apart along the pin) balance as exactly as coincident ones.

Approximations (said in the analysis's report and the README): a hinge's force is spread evenly
over its face's nodes (no contact pressure distribution); hinge torques are not applied (a
force constraint carries no moment); the rotational inertia load ``-(J_C alpha + omega x J_C
omega)`` is not applied as a distributed load: the support takes it (a couple, listed in the
check); the self-weight is uniform over the analysed solid, with the solid's density scaled so
that it carries the whole body's mass (bushes and pins of the body that are not analysed);
units: FreeCAD's (mm, N, MPa) in the FEM objects.
"""

import math
import os
import re
from dataclasses import dataclass, field

import FreeCAD
import numpy as np

from ..objects import export
from ..objects.base import mechanism_of, members, type_of
from ..objects.body import TYPE as BODY, solid_shape
from ..objects.contact import elastic_constants
from ..objects.marker import TYPE as MARKER, classify
from ..objects.result import load as load_results
from ..solver.api import instant_loads as il

M = 1000.0          #: mm per m

#: Loads placed on faces (force constraints), and those that act on the whole solid.
FACE_KINDS = ("hinge", "force", "stop")


class FemLoadsError(RuntimeError):
    """Loads that cannot be placed or an analysis that cannot be made; the message says which
    (object and property) and what to do."""


@dataclass
class Instant:
    """The loads on a body at one instant of a run, and where they came from.

    ``loads`` is the solver's :class:`~...instant_loads.InstantLoads` at the run's pose;
    ``drawn`` the same loads carried with the body to its drawn pose (SI units, global axes);
    ``markers`` maps ``(body name, marker id)`` of the neutral model to Marker objects.
    """

    result: object
    body: object
    model: object
    results: object
    loads: object
    drawn: object
    markers: dict
    how: str

    def marker_of(self, load):
        """The Marker object a load acts at, or None."""
        if load.marker is None:
            return None
        return self.markers.get((load.marker.body, load.marker.marker))


def instant(result, body, time=None, peak=None) -> Instant:
    """The loads on ``body`` (a Body object) in the run ``result`` (a Result object): at the
    output time nearest ``time`` (s), or where the quantity ``peak`` is largest (``|BigEnd.F|``,
    ``GasForce.magnitude``, any column; see :func:`~...instant_loads.quantity`).

    Raises FemLoadsError naming the object when the body is not in the run.
    """
    mech = mechanism_of(result)
    if mech is None:
        raise FemLoadsError(f"Result '{result.Label}' belongs to no mechanism")
    if type_of(body) != BODY or mechanism_of(body) is not mech:
        raise FemLoadsError(f"'{body.Label}' is no body of mechanism '{mech.Label}'")
    if mech.Ground is body:
        raise FemLoadsError(f"'{body.Label}' is the ground: it does not move; pick a moving body")
    collected = export.collect(mech)
    if collected.object_problems:
        raise export.ModelError(collected.problems)
    model = collected.model
    results = load_results(result)
    if f"{body.Label}.R11" not in results:
        raise FemLoadsError(f"Result '{result.Label}' has no columns of body '{body.Label}' "
                            "(it was run before the body was made or renamed): run again")
    if peak:
        row = il.peak_row(model, results, peak)
        how = f"peak of {peak}"
    else:
        row = il.row_at(results, 0.0 if time is None else time)
        how = "time"
    loads = il.loads_at(model, results, body.Label, row)
    markers = {(m.Body.Label, m.MarkerId): m for m in members(mech, MARKER)
               if m.Body is not None}
    rf, rm = loads.residual()
    if max(rf, rm) > 0.005:
        loads.notes.append(
            f"The loads sum to {rf * 100:.2g} % of the largest force and {rm * 100:.2g} % of "
            "the largest moment, not zero: the fixed support of an analysis takes the "
            "difference. Loads not collected (see the notes above) or a mechanism edited since "
            "the run (masses, markers, hinges) make it; run again after an edit.")
    return Instant(result, body, model, results, loads, loads.drawn(model), markers, how)


# --------------------------------------------------------------------------------------------------
# Faces
# --------------------------------------------------------------------------------------------------

@dataclass
class Placement:
    """Where one load goes on the analysed solid: ``face`` (``"Face3"``) or None with ``problem``
    (why not) and ``nearest`` (``[(face, distance in mm), ...]``, nearest first)."""

    load: object
    marker: object
    face: str = None
    problem: str = ""
    nearest: list = field(default_factory=list)


def analysed_solid(body):
    """The solid of ``body`` a stress analysis takes by default: its largest by volume."""
    solids = [s for s in body.Solids if solid_shape(s) is not None]
    if not solids:
        raise FemLoadsError(f"Body '{body.Label}', property Solids: no solid to analyse")
    return max(solids, key=lambda s: solid_shape(s).Volume)


def _same_face(a, b, tol):
    """Whether faces ``a`` and ``b`` (global shapes) are the same surface patch: same kind, same
    centre of mass and area (a bush's outer face and the bore it fills)."""
    if type(a.Surface).__name__ != type(b.Surface).__name__:
        return False
    if abs(a.Area - b.Area) > 1e-6 * max(a.Area, b.Area) + tol * tol:
        return False
    return (a.CenterOfMass - b.CenterOfMass).Length <= tol


def nearest_faces(solid, point_mm, count=3):
    """``[(face name, distance mm)]`` of the faces of ``solid`` nearest ``point_mm``."""
    import Part
    shape = solid_shape(solid)
    v = Part.Vertex(FreeCAD.Vector(*point_mm))
    d = [(f"Face{i}", f.distToShape(v)[0]) for i, f in enumerate(shape.Faces, 1)]
    return sorted(d, key=lambda x: x[1])[:count]


def place(inst: Instant, solid=None, faces=None) -> list:
    """A :class:`Placement` for every load of ``inst`` acting at a marker (hinges, forces,
    stops), on ``solid`` (default :func:`analysed_solid`). ``faces`` maps a load's name to a face
    of the solid chosen by hand (``{"WristPin": "Face7"}``)."""
    solid = solid or analysed_solid(inst.body)
    shape = solid_shape(solid)
    size = shape.BoundBox.DiagonalLength
    tol = 1e-7 * size + 1e-9
    faces = dict(faces or {})
    out = []
    for ld in inst.drawn.loads:
        if ld.kind not in FACE_KINDS:
            continue
        marker = inst.marker_of(ld)
        pl = Placement(ld, marker)
        out.append(pl)
        if ld.name in faces:
            pl.face = faces[ld.name]
            continue
        picked = getattr(marker, "PickedElement", "") if marker is not None else ""
        obj_name, _, sub = picked.partition(".")
        src = solid.Document.getObject(obj_name) if obj_name else None
        element = None
        if src is not None and sub:
            try:
                element = solid_shape(src).getElement(sub)
            except Exception:  # the element is gone (the solid was edited)
                element = None
        if element is not None and element.ShapeType == "Face":
            if src is solid:
                pl.face = sub
                continue
            for i, f in enumerate(shape.Faces, 1):
                if _same_face(f, element, tol):
                    pl.face = f"Face{i}"
                    break
            if pl.face:
                continue
            where = f"face {sub} of '{src.Label}', which is not a face of '{solid.Label}'"
        elif element is not None:
            where = f"{classify(element)} {sub} of '{src.Label}', not a face"
        elif src is not None and not sub:
            where = f"the whole solid '{src.Label}' (no face picked)"
        elif marker is not None:
            where = "the body's base frame (no face picked)" if not picked else \
                f"'{picked}', which is no face"
        else:
            where = "no marker"
        pl.nearest = nearest_faces(solid, ld.point * M)
        near = ", ".join(f"{n} ({d:.3g} mm)" for n, d in pl.nearest)
        pl.problem = (f"{ld.kind.capitalize()} '{ld.name}': its marker "
                      f"'{marker.Label if marker is not None else '?'}' is on {where}: its load "
                      f"cannot be placed on '{solid.Label}'; nearest faces: {near} (pick the "
                      "marker on a face, or choose one of these faces for it)")
    return out


# --------------------------------------------------------------------------------------------------
# The analysis
# --------------------------------------------------------------------------------------------------

def _fem():
    """FreeCAD's ``ObjectsFem``; when FreeCAD was imported as a module (tests, scripts), its FEM
    workbench's folder is put on ``sys.path`` first (FreeCAD's start-up does that otherwise)."""
    import sys
    try:
        import ObjectsFem
    except ImportError:
        for root in (FreeCAD.getResourceDir(), FreeCAD.getHomePath()):
            # FEM, and FreeCAD's PySide module, which its CalculiX tools import
            for folder, probe in ((os.path.join(root, "Mod", "Fem"), "ObjectsFem.py"),
                                  (os.path.join(root, "Ext"), "PySide")):
                if os.path.exists(os.path.join(folder, probe)) and folder not in sys.path:
                    sys.path.append(folder)
        try:
            import ObjectsFem
        except ImportError as exc:
            raise FemLoadsError("FreeCAD's FEM workbench is not installed (ObjectsFem: "
                                f"{exc}); see the README's set-up command") from None
    return ObjectsFem


def _material(body, solid_volume_mm3, mass_kg, scale=1.0):
    """The FEM material card: the body's elastic constants (card, else steel) and a density
    that puts the body's mass on the analysed solid (times ``scale``, see
    :func:`_set_self_weight`)."""
    e, nu, source = elastic_constants(body)
    rho = scale * mass_kg / (solid_volume_mm3 * 1e-9)
    card = {"Name": f"{body.Label} ({source})",
            "YoungsModulus": f"{e * 1e-6:.10g} MPa",
            "PoissonRatio": f"{nu:.6g}",
            "Density": f"{rho:.10g} kg/m^3"}
    return card, source


def _set_self_weight(obj, accel_mm_s2):
    """Make ``obj`` a self-weight of acceleration ``accel_mm_s2`` (3,), mm/s^2; return the
    factor the material's density must be multiplied by for it.

    FreeCAD 1.0's self-weight has a magnitude and a direction: factor 1. FreeCAD 0.20's has a
    direction only, and its CalculiX writer writes the standard gravity (CalculiX normalises the
    direction): the density is scaled by ``|a| / g`` instead (the load ``rho V a`` is the same).
    """
    a = np.asarray(accel_mm_s2, dtype=float)
    n = float(np.linalg.norm(a))
    unit = a / n if n > 0 else np.array([0.0, 0.0, -1.0])
    if "GravityDirection" in obj.PropertiesList:
        obj.GravityAcceleration = FreeCAD.Units.Quantity(n, FreeCAD.Units.Unit("mm/s^2"))
        obj.GravityDirection = FreeCAD.Vector(*unit)
        return 1.0
    obj.Gravity_x, obj.Gravity_y, obj.Gravity_z = (float(x) for x in unit)
    return n / _standard_gravity_mm()


def _standard_gravity_mm():
    """The gravity FreeCAD 0.20's CalculiX writer writes (mm/s^2)."""
    from femtools import constants
    return float(int(FreeCAD.Units.Quantity(constants.gravity()).getValueAs("mm/s^2")))


@dataclass
class Analysis:
    """What :func:`make_analysis` made: the Analysis and its members, and what was placed."""

    analysis: object
    solid: object
    directions: object    #: the group of the force constraints' direction lines
    forces: dict          #: face -> ConstraintForce
    fixed: object
    fixed_face: str
    self_weight: object
    mesh: object
    solver: object
    material: object
    instant: Instant
    placements: list
    applied: dict         #: face -> force (3,) N, global, drawn pose
    body_acceleration: np.ndarray   #: the self-weight's acceleration, m/s^2
    notes: list


def make_analysis(inst: Instant, solid=None, fixed=None, faces=None, mesh_size=None,
                  name=None) -> Analysis:
    """Make the FEM analysis of ``inst`` (:func:`instant`) with FreeCAD's FEM objects.

    Parameters
    ----------
    solid : Part feature, optional
        The solid analysed; default :func:`analysed_solid`.
    fixed : str, optional
        The load (hinge) name whose face is fixed; default the hinge with the largest force.
    faces : dict, optional
        Faces chosen by hand for loads that cannot be placed (:func:`place`).
    mesh_size : float, optional
        The mesh's largest element size (mm); default a fifth of the solid's smallest bounding
        box edge.
    name : str, optional
        The Analysis's label; default ``FEM <body> <instant>``.

    Raises FemLoadsError listing every load that cannot be placed, with the nearest faces.
    """
    fem = _fem()
    body = inst.body
    solid = solid or analysed_solid(body)
    doc = body.Document
    placements = place(inst, solid, faces)
    problems = [p.problem for p in placements if p.problem]
    if problems:
        raise FemLoadsError("\n".join(problems))
    # loads per face, summed; torques below round-off of the largest force's are none
    shape = solid_shape(solid)
    small_torque = 1e-9 * max(np.linalg.norm(p.load.force) for p in placements) * \
        shape.BoundBox.DiagonalLength / M if placements else 0.0
    applied, names, notes = {}, {}, list(inst.drawn.notes)
    for p in placements:
        applied[p.face] = applied.get(p.face, np.zeros(3)) + p.load.force
        names.setdefault(p.face, []).append(p.load.name)
        if p.load.kind == "hinge" and np.linalg.norm(p.load.torque) > small_torque:
            notes.append(f"Hinge '{p.load.name}': its torque {_vec_text(p.load.torque, 'N*m')} "
                         "is not applied (a force constraint carries no moment): the support "
                         "takes it")
    for ld in inst.drawn.loads:
        if ld.kind not in FACE_KINDS + ("gravity", "inertia"):
            notes.append(f"{ld.kind.capitalize()} '{ld.name}': its load "
                         f"{_vec_text(ld.force, 'N')} has no picked face and is not applied: "
                         "the support takes it")
    hinge_faces = [p for p in placements if p.load.kind == "hinge"]
    if not hinge_faces:
        raise FemLoadsError(f"Body '{body.Label}': no hinge face to support the analysis")
    if fixed is None:
        fixed_pl = max(hinge_faces, key=lambda p: np.linalg.norm(p.load.force))
    else:
        fixed_pl = next((p for p in hinge_faces if p.load.name == fixed), None)
        if fixed_pl is None:
            raise FemLoadsError(f"'{fixed}' is no hinge of body '{body.Label}' (its hinges: "
                                + ", ".join(p.load.name for p in hinge_faces) + ")")
    shape = solid_shape(solid)
    label = name or f"FEM {body.Label} t={inst.loads.time * 1000:.4g} ms"

    analysis = fem.makeAnalysis(doc, "Analysis")
    analysis.Label = label
    # FreeCAD 0.20: makeSolverCalculixCcxTools; 1.0: makeSolverCalculiXCcxTools
    make_solver = getattr(fem, "makeSolverCalculiXCcxTools", None) or \
        getattr(fem, "makeSolverCalculixCcxTools")
    solver = make_solver(doc)
    analysis.addObject(solver)
    # a force constraint takes its direction from an edge (its DirectionVector is recomputed
    # from the references): one hidden line per load, from the face's centre along the load
    directions = doc.addObject("App::DocumentObjectGroup", "LoadDirections")
    directions.Label = f"{label} load directions"
    forces = {}
    for face, f in applied.items():
        mag = float(np.linalg.norm(f))
        unit = f / mag if mag > 0 else np.array([0.0, 0.0, 1.0])
        start = shape.getElement(face).CenterOfMass
        line = doc.addObject("Part::Line", "LoadDirection")
        line.Label = f"Direction {' + '.join(names[face])}"
        line.X1, line.Y1, line.Z1 = start.x, start.y, start.z
        end = start + FreeCAD.Vector(*(unit * 10.0))
        line.X2, line.Y2, line.Z2 = end.x, end.y, end.z
        directions.addObject(line)
        if FreeCAD.GuiUp:
            line.ViewObject.Visibility = False
        c = fem.makeConstraintForce(doc, "ConstraintForce")
        c.Label = f"Load {' + '.join(names[face])}"
        c.References = [(solid, face)]
        set_force(c, mag)
        line.recompute()
        c.Direction = (line, ["Edge1"])
        c.Reversed = False
        analysis.addObject(c)
        forces[face] = c
    fix = fem.makeConstraintFixed(doc, "ConstraintFixed")
    fix.Label = f"Support {fixed_pl.load.name}"
    fix.References = [(solid, fixed_pl.face)]
    analysis.addObject(fix)
    # gravity and the translational inertia: one uniform acceleration field g - a_C
    g = np.asarray(inst.model.gravity, dtype=float)
    Q = inst.drawn.rotation @ inst.loads.rotation.T
    field_acc = Q @ g - inst.drawn.acceleration
    sw = fem.makeConstraintSelfWeight(doc, "ConstraintSelfWeight")
    sw.Label = "Inertia and gravity"
    scale = _set_self_weight(sw, field_acc * M)
    analysis.addObject(sw)
    card, source = _material(body, shape.Volume, inst.loads.mass, scale)
    material = fem.makeMaterialSolid(doc, "MaterialSolid")
    material.Material = card
    material.References = [(solid, "Solid1")]
    analysis.addObject(material)
    if source == "steel":
        notes.append(f"Body '{body.Label}' has no material card with YoungsModulus and "
                     "PoissonRatio: steel's are used")
    notes.append(f"The density of '{solid.Label}' is {card['Density']}: the whole body's mass "
                 f"({inst.loads.mass:.4g} kg) on the analysed solid"
                 + (f", times {scale:.4g} (FreeCAD 0.20's self-weight has the standard "
                    "gravity: the density scales the load)" if scale != 1.0 else ""))
    rot = [ld for ld in inst.drawn.loads if ld.kind == "inertia"][0]
    if np.linalg.norm(rot.torque) > small_torque:
        notes.append(f"The rotational inertia load {_vec_text(rot.torque, 'N*m')} "
                     "(-(J_C alpha + omega x J_C omega)) is not distributed: the support takes it")
    mesh = fem.makeMeshGmsh(doc, "FEMMeshGmsh")
    # the shape meshed: Part on FreeCAD 0.20, Shape on 1.0
    setattr(mesh, "Shape" if "Shape" in mesh.PropertiesList else "Part", solid)
    bb = shape.BoundBox
    size = mesh_size or min(bb.XLength, bb.YLength, bb.ZLength) / 2.0
    mesh.CharacteristicLengthMax = FreeCAD.Units.Quantity(float(size), FreeCAD.Units.Unit("mm"))
    mesh.ElementOrder = "2nd"
    analysis.addObject(mesh)
    doc.recompute()
    return Analysis(analysis, solid, directions, forces, fix, fixed_pl.face, sw, mesh, solver, material,
                    inst, placements, applied, field_acc, notes)


def set_force(constraint, newtons):
    """Set a force constraint's magnitude: a float in N on FreeCAD 0.20, a force quantity on
    1.0 (whose internal unit is the mN)."""
    if constraint.getTypeIdOfProperty("Force") == "App::PropertyFloat":
        constraint.Force = float(newtons)
    else:
        # a text with its unit: Quantity(value, Unit("N")) would take the value in mN
        constraint.Force = FreeCAD.Units.Quantity(f"{float(newtons)!r} N")


def force_of(constraint):
    """A force constraint's magnitude in N (either FreeCAD version)."""
    f = constraint.Force
    return float(f.getValueAs("N")) if hasattr(f, "getValueAs") else float(f)


def _vec_text(v, unit):
    """A vector in SI units as text, ``(0, -3.958, 0) N*m``."""
    return "(" + ", ".join(f"{x:.4g}" for x in np.asarray(v, dtype=float) + 0.0) + f") {unit}"


# --------------------------------------------------------------------------------------------------
# Solve and check
# --------------------------------------------------------------------------------------------------

@dataclass
class Check:
    """What the solved analysis says about itself.

    ``reaction`` (3,) N: the support's reaction beyond the load applied at the fixed face (the
    loads being in equilibrium, near zero); ``largest`` N the largest face load; ``relative``
    ``|reaction| / largest``; ``max_von_mises`` MPa; ``result`` FEM's result object.
    """

    reaction: np.ndarray
    support_total: np.ndarray
    largest: float
    relative: float
    max_von_mises: float
    result: object
    nodes: int
    working_dir: str


def mesh(an: Analysis) -> int:
    """Mesh the analysed solid with Gmsh; return the number of nodes."""
    from femmesh.gmshtools import GmshTools
    error = GmshTools(an.mesh).create_mesh()
    if error:
        raise FemLoadsError(f"Gmsh could not mesh '{an.solid.Label}': {error}")
    return an.mesh.FemMesh.NodeCount


def _ccx_input(an: Analysis, working_dir=None):
    """FEM's CalculiX tool for the analysis, its input file written in ``working_dir`` (FEM's
    default folder when None), ready to run; the prerequisites FEM checks refused by name."""
    from femtools import ccxtools
    fea = ccxtools.FemToolsCcx(an.analysis, an.solver)
    fea.update_objects()
    if working_dir:
        os.makedirs(working_dir, exist_ok=True)
        fea.setup_working_dir(working_dir)
    else:
        fea.setup_working_dir()
    fea.setup_ccx()
    message = fea.check_prerequisites()
    if message:
        raise FemLoadsError(f"Analysis '{an.analysis.Label}': {message}")
    fea.write_inp_file()
    return fea


def solve(an: Analysis, working_dir=None) -> Check:
    """Mesh (if not yet), run CalculiX, load its results into FEM's result object; return the
    :class:`Check` (the support's reaction from CalculiX's .dat file)."""
    if an.mesh.FemMesh.NodeCount == 0:
        mesh(an)
    fea = _ccx_input(an, working_dir)
    fea.ccx_run()
    fea.load_results()
    result = next((o for o in an.analysis.Group if o.isDerivedFrom("Fem::FemResultObject")),
                  None)
    if result is None:
        raise FemLoadsError(f"Analysis '{an.analysis.Label}': CalculiX gave no result "
                            f"(see {fea.working_dir})")
    total = support_reaction(os.path.splitext(fea.inp_file_name)[0] + ".dat", an.fixed.Name)
    # CalculiX's reaction is what the support holds: the load applied at the fixed face goes
    # straight into it, so the support's own reaction is the rest
    reaction = total - an.applied[an.fixed_face]
    largest = max(float(np.linalg.norm(f)) for f in an.applied.values())
    vm = max(result.vonMises) if result.vonMises else math.nan
    return Check(reaction, total, largest, float(np.linalg.norm(reaction)) / largest, vm,
                 result, an.mesh.FemMesh.NodeCount, fea.working_dir)


_TOTAL = re.compile(r"total force \(fx,fy,fz\) for set (\S+)", re.IGNORECASE)


def support_reaction(dat_path, set_name):
    """The total reaction force (3,) N of node set ``set_name`` in a CalculiX .dat file (the
    last step's)."""
    with open(dat_path) as fh:
        lines = fh.read().splitlines()
    found = None
    for i, line in enumerate(lines):
        m = _TOTAL.search(line)
        if m and m.group(1).upper() == set_name.upper():
            for nxt in lines[i + 1:]:
                parts = nxt.split()
                if len(parts) >= 3:
                    found = np.array([float(x) for x in parts[-3:]])
                    break
    if found is None:
        raise FemLoadsError(f"no reaction of '{set_name}' in {dat_path}")
    return found


def create(result, body, time=None, peak=None, mesh_size=None, solve_it=True, fixed=None,
           faces=None, working_dir=None):
    """:func:`instant`, :func:`make_analysis` and (``solve_it``) the mesh (Gmsh installed) and
    the solution (CalculiX installed too) in one call; returns ``(Analysis, Check or None)`` and
    prints the check to the report view. The same steps as :class:`Creation`, which the panel
    runs with the GUI free; here Gmsh and CalculiX are waited for."""
    return Creation(result, body, time=time, peak=peak, mesh_size=mesh_size,
                    solve_it=solve_it, fixed=fixed, faces=faces,
                    working_dir=working_dir).finish()


@dataclass
class Program:
    """An external program a :class:`Creation` waits for: ``what`` it does (``"meshing with
    Gmsh"``), its command line ``argv``, working folder ``cwd`` and environment ``env`` (None:
    the caller's)."""

    what: str
    argv: list
    cwd: str = None
    env: dict = None


@dataclass
class Outcome:
    """How a :class:`Program` ended: exit code, standard output and error (text)."""

    code: int
    stdout: str = ""
    stderr: str = ""


def run_program(program: Program) -> Outcome:
    """Run ``program`` to its end (scripts; the panel runs it in a QProcess)."""
    import subprocess
    p = subprocess.run(program.argv, cwd=program.cwd, env=program.env, capture_output=True)
    return Outcome(p.returncode, p.stdout.decode(errors="replace"),
                   p.stderr.decode(errors="replace"))


class Creation:
    """:func:`create` in steps, for a caller that runs Gmsh and CalculiX itself (the panel, in a
    QProcess, the GUI free and a Cancel at hand).

    Making it collects the instant and makes the analysis (document work, in the caller's
    thread); :attr:`step` is then what comes next: a :class:`Program` (an external program to
    run; :attr:`program`), a text (document work to do next, ``"reading Gmsh's mesh"``: the
    caller shows it, then calls :meth:`advance`) or None (all done). :meth:`advance` takes how
    the program ended (:class:`Outcome`; None after a text), does the work up to the next step
    and returns it; :meth:`finish` runs whatever remains (waiting for the programs) and returns
    ``(Analysis, Check or None)``. Gmsh meshes when installed, CalculiX solves when installed
    too; raises FemLoadsError when either fails.
    """

    def __init__(self, result, body, time=None, peak=None, mesh_size=None, solve_it=True,
                 fixed=None, faces=None, working_dir=None):
        import shutil
        self.body = body
        self.working_dir = working_dir
        self.check = None
        self.step = None
        inst = instant(result, body, time=time, peak=peak)
        before = {o.Name for o in body.Document.Objects}
        an = self.analysis = make_analysis(inst, fixed=fixed, faces=faces,
                                           mesh_size=mesh_size)
        self._made_names = [o.Name for o in body.Document.Objects if o.Name not in before]
        say = FreeCAD.Console.PrintMessage
        say(f"MultibodyWB: FEM analysis '{an.analysis.Label}' of '{body.Label}' at "
            f"t = {inst.loads.time * 1000:.6g} ms ({inst.how}): {len(an.forces)} force "
            f"constraint(s), support on {an.fixed_face}\n")
        for note in an.notes:
            say(f"  {note}\n")
        meshing = solve_it and bool(shutil.which("gmsh"))
        self.solving = meshing and solver_available()
        if solve_it and not self.solving:
            FreeCAD.Console.PrintWarning(
                "MultibodyWB: " + ("CalculiX (ccx) is not installed: the analysis is made "
                                   "and meshed but not solved\n" if meshing else
                                   "Gmsh is not installed: the analysis is made but neither "
                                   "meshed nor solved\n"))
        self._steps = self._run(meshing)
        self.step = next(self._steps, None)

    @property
    def program(self):
        """The external program to run next, or None."""
        return self.step if isinstance(self.step, Program) else None

    def _run(self, meshing):
        """The steps, as a generator: it yields the programs and is sent their outcomes."""
        an = self.analysis
        if not meshing:
            return
        yield "writing Gmsh's input"
        from femmesh.gmshtools import GmshTools
        gmsh = GmshTools(an.mesh)
        gmsh.update_mesh_data()
        gmsh.get_tmp_file_paths()
        gmsh.get_gmsh_command()
        gmsh.write_gmsh_input_files()
        out = yield Program("meshing with Gmsh", [gmsh.gmsh_bin, "-", gmsh.temp_file_geo],
                            gmsh.working_dir)
        if out.code != 0 or not os.path.exists(gmsh.temp_file_mesh):
            raise FemLoadsError(f"Gmsh could not mesh '{an.solid.Label}' (exit code "
                                f"{out.code}): {out.stderr.strip()[-500:]}")
        yield "reading Gmsh's mesh"
        gmsh.read_and_set_new_mesh()
        if an.mesh.FemMesh.NodeCount == 0:
            raise FemLoadsError(f"Gmsh could not mesh '{an.solid.Label}': no nodes "
                                f"({out.stderr.strip()[-500:]})")
        if not self.solving:
            return
        yield "writing CalculiX's input"
        fea = _ccx_input(an, self.working_dir)
        folder, base = os.path.split(os.path.splitext(fea.inp_file_name)[0])
        prefs = FreeCAD.ParamGet("User parameter:BaseApp/Preferences/Mod/Fem/Ccx")
        env = dict(os.environ, OMP_NUM_THREADS=str(prefs.GetInt("AnalysisNumCPUs", 1)
                                                   if prefs.GetInt("AnalysisNumCPUs", 1) > 1
                                                   else os.cpu_count() or 1))
        out = yield Program("solving with CalculiX", [fea.ccx_binary, "-i", base], folder, env)
        if out.code != 0:
            raise FemLoadsError(f"Analysis '{an.analysis.Label}': CalculiX failed (exit code "
                                f"{out.code}; see {fea.working_dir}): "
                                f"{(out.stderr or out.stdout).strip()[-500:]}")
        yield "reading CalculiX's results"
        fea.load_results()
        result = next((o for o in an.analysis.Group
                       if o.isDerivedFrom("Fem::FemResultObject")), None)
        if result is None:
            raise FemLoadsError(f"Analysis '{an.analysis.Label}': CalculiX gave no result "
                                f"(see {fea.working_dir})")
        total = support_reaction(os.path.join(folder, base + ".dat"), an.fixed.Name)
        # CalculiX's reaction is what the support holds: the load applied at the fixed face
        # goes straight into it, so the support's own reaction is the rest
        reaction = total - an.applied[an.fixed_face]
        largest = max(float(np.linalg.norm(f)) for f in an.applied.values())
        vm = max(result.vonMises) if result.vonMises else math.nan
        check = self.check = Check(reaction, total, largest,
                                   float(np.linalg.norm(reaction)) / largest, vm, result,
                                   an.mesh.FemMesh.NodeCount, fea.working_dir)
        FreeCAD.Console.PrintMessage(
            f"  CalculiX: {check.nodes} nodes; support reaction "
            f"{_vec_text(check.reaction, 'N')} = {check.relative * 100:.3g} % of the largest "
            f"load ({check.largest:.4g} N); max von Mises {check.max_von_mises:.4g} MPa\n")

    def advance(self, outcome: Outcome = None):
        """Take how :attr:`program` ended (None after a text step); do the document work up to
        the next step; return it (also :attr:`step`), None when all is done."""
        try:
            self.step = self._steps.send(outcome)
        except StopIteration:
            self.step = None
        return self.step

    def cancel(self):
        """Remove the objects this creation made, newest first (what a macro of a cancelled
        Create analysis replays; the panel aborts its transaction, so they are gone already
        there and this does nothing)."""
        doc = self.body.Document
        self.step = None
        self._steps.close()
        for name in reversed(self._made_names):
            if doc.getObject(name) is not None:
                doc.removeObject(name)

    def finish(self):
        """Run the programs that remain, waiting for each; ``(Analysis, Check or None)``."""
        while self.step is not None:
            self.advance(run_program(self.step) if self.program is not None else None)
        return self.analysis, self.check


def solver_available():
    """Whether CalculiX and Gmsh are installed (on PATH)."""
    import shutil
    return bool(shutil.which("ccx") and shutil.which("gmsh"))


def quantities(model, results):
    """Quantities whose peak can pick an instant (:func:`~...instant_loads.quantity`), for the
    panel: force magnitudes, hinge reaction forces and torques, body accelerations."""
    from ..solver.api import FORCE_TYPES
    out = [f"{f.name}.magnitude" for f in model.forces
           if "magnitude" in FORCE_TYPES[f.type].fields and (f.magnitude or "0").strip() != "0"]
    for h in model.hinges:
        prefix = il._hinge_prefix(model, h)
        out += [f"|{prefix}.F|", f"|{prefix}.T|"]
    for b in model.bodies:
        out += [f"{b.name}.inertia", f"|{b.name}.a|", f"|{b.name}.alpha|"]
    return [q for q in out if _has(model, results, q)]


def _has(model, results, spec):
    try:
        il.quantity(model, results, spec)
    except KeyError:
        return False
    return True
