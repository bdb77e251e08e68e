"""The Body: existing solids taken as one rigid body, with their mass properties.

``Solids`` links the solids (``Part::Feature`` and its kin, ``PartDesign::Body``, ``App::Link``;
several solids make one body). The body's **base frame** is the global placement of its first solid; the
mass properties are given in it, as the neutral model wants them: ``CenterOfMass`` in the base frame
and ``Ixx ... Iyz`` the inertia tensor about the base-frame origin in base-frame axes (products are
tensor entries: ``Ixy = -integral of x*y dm``; the ``JI`` convention of ``design.md``).

They are computed from the OCC shapes of every solid of every linked object (``Volume``,
``CenterOfMass``, ``MatrixOfInertia``, which OCC gives for unit density about the solid's centre of
mass in global axes) each time the body recomputes, so they follow the solids when these change.

Density: ``DensitySource`` says where it comes from:

- ``Density``: the ``Density`` property (kg/m^3), typed in;
- ``Material``: the ``Material`` map, a FreeCAD material card as FreeCAD 0.20's material editor and
  FEM's material objects hold it (``{"Name": "Steel", "Density": "7900 kg/m^3", ...}``); its
  ``Density`` entry is a quantity with its unit. (FreeCAD 0.20 solids carry no material of their
  own; ``Part::Feature.ShapeMaterial`` belongs to the newer material system of FreeCAD 1.x and is
  not read yet.)

Units: lengths mm, mass kg, inertia kg mm^2 (texts such as ``"17.2134 kg*mm^2"``: FreeCAD would
show ``mm^2*kg`` with two decimals), as FreeCAD shows them; SI at export only.
"""

import FreeCAD
import numpy as np

from . import units
from .base import (READ_ONLY, BaseProxy, Prop, mechanism_of, quantity_prop, set_value, type_of,
                   vector_prop)
from ..solver.api import MAX_POSITION

TYPE = "Multibody::Body"
DENSITY_SOURCES = ("Density", "Material")
#: Densities outside this range (kg/m^3) are warned about: foams to tungsten alloys fit in it,
#: 7850 kg/mm^3 or 7.85 kg/m^3 (steel in a wrong unit) do not.
PLAUSIBLE_DENSITY = (10.0, 25000.0)
INERTIA_NAMES = ("Ixx", "Iyy", "Izz", "Ixy", "Ixz", "Iyz")


class BodyProxy(BaseProxy):
    """Proxy of a Body."""

    Type = TYPE
    KIND = "Body"
    VERSION = 1
    PROPERTIES = (
        Prop("Solids", "App::PropertyLinkList", "Body",
             "The solids that move together as this rigid body; the first one's placement is the "
             "body's base frame"),
        Prop("DensitySource", "App::PropertyEnumeration", "Body",
             "Where the density comes from: the Density property, or the Density of the "
             "Material card", default="Density", enum=DENSITY_SOURCES),
        quantity_prop("Density", "Body", "Density of the solids' material", "kg/m^3",
                      default=7850.0),
        Prop("Material", "App::PropertyMap", "Body",
             "A FreeCAD material card (Name, Density with its unit, ...), used when DensitySource "
             "is Material"),
        Prop("BasePlacement", "App::PropertyPlacement", "Mass properties",
             "The body's base frame: the global placement of its first solid", mode=READ_ONLY),
        quantity_prop("Volume", "Mass properties", "Volume of all the solids", "mm^3",
                      si="m^3", mode=READ_ONLY),
        quantity_prop("Mass", "Mass properties", "Mass of all the solids", "kg", mode=READ_ONLY),
        Prop("CenterOfMass", "App::PropertyVectorDistance", "Mass properties",
             "Centre of mass in the base frame [mm]", unit="mm", si="m", mode=READ_ONLY),
    ) + tuple(
        quantity_prop(name, "Mass properties",
                      f"Inertia tensor entry {name} about the base-frame origin, base-frame axes "
                      "(products are tensor entries: Ixy = -integral of x*y dm)",
                      "kg*mm^2", si="kg*m^2", mode=READ_ONLY)
        for name in INERTIA_NAMES
    ) + (
        vector_prop("InitialVelocity", "Initial conditions",
                    "Velocity of the base-frame origin at t = 0 in global axes (bodies on a free "
                    "or bushing hinge)", *units.VECTOR_UNITS["velocity"]),
        vector_prop("InitialAngularVelocity", "Initial conditions",
                    "Angular velocity at t = 0 in global axes (bodies on a free or bushing "
                    "hinge)", *units.VECTOR_UNITS["angular_velocity"]),
    )
    FIELDS = {"Mass": "Mass", "JI": "Ixx, Iyy, Izz, Ixy, Ixz, Iyz", "MassCenter": "CenterOfMass",
              "Density": "Density", "InitialVelocity": "InitialVelocity",
              "InitialAngularVelocity": "InitialAngularVelocity",
              "AbsolutePosition": "Solids", "AbsoluteOrientation": "Solids", "Name": "Label"}

    def execute(self, obj):
        """Recompute the base frame and the mass properties from the linked solids."""
        base, _, props = body_mass_properties(obj)
        obj.BasePlacement = base
        obj.Volume = units.quantity(props["volume"], "mm^3")
        obj.Mass = units.quantity(props["mass"], "kg")
        obj.CenterOfMass = FreeCAD.Vector(*props["center"])
        ji = np.asarray(props["ji"], dtype=float)
        noise = 1e-12 * float(np.max(np.abs(ji[:3]))) if ji.size else 0.0
        for name, value in zip(INERTIA_NAMES, ji):
            # products of inertia zero by symmetry come out of OCC as 1e-15-ish
            set_value(obj, self.prop(name), 0.0 if abs(value) <= noise else float(value))

    def check(self, obj):
        mechanism = mechanism_of(obj)
        is_ground = mechanism is not None and mechanism.Ground == obj
        problems = []
        if not obj.Solids and not is_ground:
            problems.append(("Solids",
                             "no solid is linked: link the solid(s) this body stands for"))
        for solid in obj.Solids:
            shape = solid_shape(solid)
            if "Invalid" in solid.State:
                # a failed recompute keeps the last good shape: the mass would be that one's
                problems.append(("Solids", f"'{solid.Label}' failed to recompute"
                                           f"{_bad_lengths(solid)}: its shape is the last valid "
                                           "one, not what its properties say; fix it and "
                                           "recompute"))
            if shape is None:
                problems.append(("Solids", f"'{solid.Label}' has no shape"))
            elif not shape.Solids or shape.Volume <= 0.0:
                problems.append(("Solids", f"'{solid.Label}' has no volume (it holds no solid)"))
            else:
                far = _farthest(shape)
                if not far <= MAX_DISTANCE:
                    problems.append(("Solids", f"'{solid.Label}' reaches {far:.3g} mm from the "
                                               f"origin (more than {MAX_DISTANCE:.0e} mm): its "
                                               "mass properties are lost in rounding there; "
                                               "check its Placement and units"))
            for other in solid.InList:
                if type_of(other) == TYPE and other != obj and solid in other.Solids:
                    problems.append(("Solids", f"'{solid.Label}' is also a solid of body "
                                               f"'{other.Label}'"))
        if not is_ground:
            problems.extend(density_of(obj)[1])
        return problems

    def warnings(self, obj):
        """A density outside :data:`PLAUSIBLE_DENSITY` (a unit mistake, most likely)."""
        mechanism = mechanism_of(obj)
        if mechanism is not None and mechanism.Ground == obj:
            return []
        density, _ = density_of(obj)
        if density is None:
            return []
        si = units.to_si(density, "kg/m^3")
        low, high = PLAUSIBLE_DENSITY
        if low <= si <= high:
            return []
        prop = "Material" if obj.DensitySource == "Material" else "Density"
        return [(prop, f"density {si:.6g} kg/m^3 of body '{obj.Label}' is implausible (solids "
                       f"lie between {low:g} and {high:,.0f} kg/m^3; steel is 7850 kg/m^3): "
                       "check its unit")]


#: Farthest a linked solid may reach from the origin (mm): the solver's
#: :data:`~MultibodyWB.solver.model.validation.MAX_POSITION`.
MAX_DISTANCE = MAX_POSITION * 1e3


def _farthest(shape) -> float:
    """How far the shape's bounding box reaches from the origin along an axis (mm; NaN kept)."""
    b = shape.BoundBox
    values = [b.XMin, b.XMax, b.YMin, b.YMax, b.ZMin, b.ZMax]
    if not all(np.isfinite(values)):
        return float("nan")
    return max(abs(v) for v in values)


def _bad_lengths(solid) -> str:
    """`` (Length = 0 mm)``: the solid's length properties that are not positive, or ``''``."""
    bad = []
    for name in solid.PropertiesList:
        try:
            kind = solid.getTypeIdOfProperty(name)
        except Exception:  # a property FreeCAD cannot describe
            continue
        if kind == "App::PropertyLength":
            value = getattr(solid, name).Value
            if not value > 0.0:
                bad.append(f"{name} = {value:g} mm")
    return f" ({', '.join(bad)})" if bad else ""


def body_mass_properties(body):
    """Base frame, density (kg/mm^3, None if unknown) and :func:`mass_properties` of a Body now."""
    shapes = [s for s in (solid_shape(o) for o in body.Solids) if s is not None]
    base = solid_placement(body.Solids[0]) if body.Solids else FreeCAD.Placement()
    density, _ = density_of(body)
    return base, density, mass_properties(shapes, base, density or 0.0)


def density_of(obj):
    """The body's density in FreeCAD's internal units (kg/mm^3) and its problems.

    Returns
    -------
    density : float or None
        None when it cannot be had.
    problems : list of (property, message)
    """
    if obj.DensitySource == "Material":
        card = dict(obj.Material)
        text = card.get("Density")
        if not text:
            return None, [("Material", "the material card has no Density entry "
                                       "(e.g. 'Density': '7850 kg/m^3')")]
        try:
            q = FreeCAD.Units.Quantity(text)
        except Exception as exc:  # FreeCAD raises ValueError or its own parser error
            return None, [("Material", f"Density '{text}' is not a quantity ({exc})")]
        if q.Unit != units.unit("kg/m^3"):
            return None, [("Material", f"Density '{text}' is not a density (kg/m^3)")]
        value = q.Value
        prop = "Material"
    else:
        value = obj.Density.Value
        prop = "Density"
    if not np.isfinite(value) or value <= 0.0:
        return None, [(prop, f"{units.to_si(value, 'kg/m^3'):g} kg/m^3; the density must be "
                             "positive")]
    return value, []


def solid_shape(obj):
    """The global shape of a linked solid (its placement applied), or None if it has none."""
    import Part
    try:
        shape = Part.getShape(obj)
    except Exception:  # not a geometric object
        return None
    return None if shape.isNull() else shape


def solid_placement(obj):
    """The global placement of a linked solid: the base frame when it is a body's first solid."""
    shape = solid_shape(obj)
    if shape is not None:
        return shape.Placement
    return getattr(obj, "Placement", FreeCAD.Placement())


def rotation_matrix(rotation):
    """The 3 x 3 numpy matrix of a ``FreeCAD.Rotation`` (columns: the rotated frame's axes)."""
    m = rotation.toMatrix()
    return np.array([[m.A11, m.A12, m.A13], [m.A21, m.A22, m.A23], [m.A31, m.A32, m.A33]])


def mass_properties(shapes, base, density):
    """Mass properties of shapes (global coordinates, mm) about the frame ``base``.

    Parameters
    ----------
    shapes : list of Part.Shape
        Every solid of every shape counts (compounds included).
    base : FreeCAD.Placement
        The base frame.
    density : float
        kg/mm^3 (FreeCAD's internal unit).

    Returns
    -------
    dict
        ``volume`` (mm^3), ``mass`` (kg), ``center`` (mm, base frame, shape (3,); zeros when there
        is no volume) and ``ji`` (kg mm^2, shape (6,): Ixx, Iyy, Izz, Ixy, Ixz, Iyz about the base
        origin in base axes).
    """
    R = rotation_matrix(base.Rotation)
    origin = np.array(base.Base)
    volume = 0.0
    first = np.zeros(3)          # integral of r dV, base frame
    J = np.zeros((3, 3))         # inertia about the base origin for unit density, base axes
    for shape in shapes:
        for solid in shape.Solids:
            v = solid.Volume
            if v <= 0.0:
                continue
            c = R.T @ (np.array(solid.CenterOfMass) - origin)
            m = solid.MatrixOfInertia
            Jc = np.array([[m.A11, m.A12, m.A13], [m.A21, m.A22, m.A23], [m.A31, m.A32, m.A33]])
            J += R.T @ Jc @ R + v * (np.dot(c, c) * np.eye(3) - np.outer(c, c))
            first += v * c
            volume += v
    center = first / volume if volume > 0.0 else np.zeros(3)
    J = 0.5 * (J + J.T) * density
    ji = np.array([J[0, 0], J[1, 1], J[2, 2], J[0, 1], J[0, 2], J[1, 2]])
    return {"volume": volume, "mass": density * volume, "center": center, "ji": ji}


def body_of(solid):
    """The Multibody body whose ``Solids`` include ``solid``, or None."""
    for parent in solid.InList:
        if type_of(parent) == TYPE and solid in parent.Solids:
            return parent
    return None


def has_solids(obj):
    """Whether ``obj`` has a shape with at least one solid."""
    shape = getattr(obj, "Shape", None)
    # isNull first: a null shape (an empty sketch) raises on ShapeType
    if shape is None or not hasattr(shape, "isNull") or shape.isNull():
        return False
    if shape.ShapeType == "Solid":
        return True
    return shape.ShapeType in ("CompSolid", "Compound") and bool(shape.Solids)
