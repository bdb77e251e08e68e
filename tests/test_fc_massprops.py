"""Mass properties of Multibody bodies from FreeCAD solids, against closed forms (headless FreeCAD).

The reference is ``MultibodyWB/solver/massprops.py`` (closed forms about the base origin); the
bodies' properties come from OCC (Volume, CenterOfMass, MatrixOfInertia) through the Body object
and the export, so this checks the shapes, the frame change and the units together, to 1e-9.
Also: the stand-in solids the import makes for bodies without solids reproduce the bodies' mass
properties.
"""

import numpy as np
import pytest

from MultibodyWB.solver.model import massprops
from MultibodyWB.solver.maths.rotations import (bryant_to_matrix, inertia_tensor_to_vector,
                                                parallel_axis)

pytestmark = pytest.mark.freecad

RTOL = 1e-9
SEED_JI = (7.9e-07, 1.28375e-06, 1.28375e-06, -4.44375e-07, -4.44375e-07, -2.9625e-07)


@pytest.fixture
def doc(freecad):
    d = freecad.newDocument("MassProps")
    yield d
    freecad.closeDocument(d.Name)


def _placement(freecad, position_mm, axis=(0, 0, 1), angle_deg=0.0):
    return freecad.Placement(freecad.Vector(*position_mm),
                             freecad.Rotation(freecad.Vector(*axis), angle_deg))


def _feature(doc, name, shape, placement=None):
    obj = doc.addObject("Part::Feature", name)
    obj.Shape = shape
    if placement is not None:
        obj.Placement = placement
    return obj


def _exported_body(doc, solids, density, name="B"):
    """The neutral model's RigidBody of a Body made of ``solids`` (the ground is elsewhere)."""
    from MultibodyWB.document import factory
    from MultibodyWB.objects import export
    mech = factory.make_mechanism(doc, "M")
    ground_solid = doc.addObject("Part::Box", "GroundSolid")
    factory.make_body(doc, mech, [ground_solid], ground=True, name="G")
    body = factory.make_body(doc, mech, solids, density=density, name=name)
    doc.recompute()
    result = export.collect(mech)
    return body, result.model.body(name)


def assert_mass_properties(rigid, ref, rtol=RTOL):
    """Mass, JI and mass centre to ``rtol`` (relative to the largest entry for JI and centre)."""
    assert rigid.mass == pytest.approx(ref.mass, rel=rtol)
    scale = np.abs(ref.ji).max()
    np.testing.assert_allclose(rigid.inertia, ref.ji, rtol=rtol, atol=rtol * scale)
    size = max(np.abs(ref.center).max(), np.sqrt(scale / ref.mass))   # a length of the body
    np.testing.assert_allclose(rigid.mass_center.position, ref.center, rtol=rtol,
                               atol=rtol * size)


def test_seed_box_mass_properties_match_the_seed(freecad, doc):
    from MultibodyWB.objects import units
    from MultibodyWB.objects.base import quantity_value
    box = doc.addObject("Part::Box", "SeedBox")
    box.Length, box.Width, box.Height = 15, 10, 10
    box.Placement = _placement(freecad, (10, 10, 5), angle_deg=15.0)   # the seed's base frame
    doc.recompute()
    body, rigid = _exported_body(doc, [box], 7900.0)
    assert rigid.mass == pytest.approx(0.01185, rel=RTOL)
    np.testing.assert_allclose(rigid.inertia, SEED_JI, rtol=RTOL)
    np.testing.assert_allclose(rigid.mass_center.position, (0.0075, 0.005, 0.005), rtol=RTOL)
    np.testing.assert_allclose(rigid.position, (0.01, 0.01, 0.005), rtol=RTOL)
    np.testing.assert_allclose(rigid.orientation, (0, 0, np.radians(15.0)), atol=1e-15)
    assert rigid.density == pytest.approx(7900.0, rel=1e-12)
    # the properties show FreeCAD units: kg, mm, kg mm^2 (a text: six significant digits)
    assert float(body.Mass.getValueAs("kg")) == pytest.approx(0.01185, rel=RTOL)
    assert body.Ixx == "0.79 kg*mm^2"
    assert units.to_si(quantity_value(body, "Ixy"), "kg*m^2") == pytest.approx(-4.44375e-07,
                                                                              rel=1e-6)
    assert float(body.Volume.getValueAs("mm^3")) == pytest.approx(1500.0, rel=RTOL)
    assert tuple(body.CenterOfMass) == pytest.approx((7.5, 5.0, 5.0), rel=RTOL)
    ref = massprops.box((0.015, 0.01, 0.01), 7900.0)
    assert_mass_properties(rigid, ref)


def test_cylinder(freecad, doc):
    cyl = doc.addObject("Part::Cylinder", "Cyl")
    cyl.Radius, cyl.Height = 12, 40
    cyl.Placement = _placement(freecad, (100, -20, 7), (1, 0, 0), 30.0)
    doc.recompute()
    _, rigid = _exported_body(doc, [cyl], 7850.0)
    assert_mass_properties(rigid, massprops.cylinder(0.012, 0.04, 7850.0))


def test_sphere(freecad, doc):
    sphere = doc.addObject("Part::Sphere", "Ball")
    sphere.Radius = 10
    sphere.Placement = _placement(freecad, (5, 6, 7), (1, 1, 0), 20.0)
    doc.recompute()
    _, rigid = _exported_body(doc, [sphere], 2700.0)
    ref = massprops.sphere(0.01, 2700.0)
    assert rigid.mass == pytest.approx(ref.mass, rel=RTOL)
    np.testing.assert_allclose(rigid.inertia, ref.ji, rtol=RTOL, atol=RTOL * ref.ji.max())
    np.testing.assert_allclose(rigid.mass_center.position, 0.0, atol=1e-12)


def test_hollow_tube(freecad, doc):
    import Part
    tube = Part.makeCylinder(12, 40).cut(Part.makeCylinder(7, 40))
    obj = _feature(doc, "Tube", tube, _placement(freecad, (0, 50, 0), (0, 1, 0), 45.0))
    doc.recompute()
    _, rigid = _exported_body(doc, [obj], 7850.0)
    assert_mass_properties(rigid, massprops.cylinder(0.012, 0.04, 7850.0, inner_radius=0.007))


def test_two_solids_are_one_body(freecad, doc):
    """A box (the base frame) and a cylinder standing on it, placed in the box's frame."""
    import Part
    frame = _placement(freecad, (30, -10, 4), (1, 2, 3), 40.0)
    box = _feature(doc, "Plate", Part.makeBox(20, 16, 4), frame)
    local = freecad.Placement(freecad.Vector(10, 8, 4), freecad.Rotation())
    post = _feature(doc, "Post", Part.makeCylinder(3, 25), frame.multiply(local))
    doc.recompute()
    body, rigid = _exported_body(doc, [box, post], 7850.0)
    ref = massprops.combine(massprops.box((0.02, 0.016, 0.004), 7850.0),
                            massprops.cylinder(0.003, 0.025, 7850.0, base=(0.01, 0.008, 0.004)))
    assert_mass_properties(rigid, ref)
    assert float(body.Volume.getValueAs("m^3")) == pytest.approx(ref.volume, rel=RTOL)


def test_second_solid_rotated_and_translated_relative_to_the_base(freecad, doc):
    """The frame change: a box turned and moved relative to the body's base solid."""
    import Part
    base = _placement(freecad, (-40, 15, 60), (0, 0, 1), 25.0)
    first = _feature(doc, "First", Part.makeBox(10, 10, 10), base)
    rel_position, rel_angles = np.array([0.03, -0.01, 0.02]), np.array([0.3, -0.7, 1.1])
    R_rel = bryant_to_matrix(rel_angles)
    from MultibodyWB.document.import_model import rotation
    rel = freecad.Placement(freecad.Vector(*(rel_position * 1000)), rotation(R_rel))
    second = _feature(doc, "Second", Part.makeBox(30, 8, 5), base.multiply(rel))
    doc.recompute()
    _, rigid = _exported_body(doc, [first, second], 7850.0)
    a = massprops.box((0.01, 0.01, 0.01), 7850.0)
    b = massprops.box((0.03, 0.008, 0.005), 7850.0)      # about its own corner, its own axes
    # the second box in the base frame: its centre and its inertia about the centre, turned
    b_center = rel_position + R_rel @ b.center
    J_bc = R_rel @ b.inertia_about_center @ R_rel.T
    b_ji = inertia_tensor_to_vector(parallel_axis(J_bc, b.mass, b_center))
    ref = massprops.combine(a, massprops.MassProperties(b.mass, b_center, b_ji, b.volume))
    assert_mass_properties(rigid, ref)


def test_density_from_a_material_card(freecad, doc):
    box = doc.addObject("Part::Box", "Brass")
    doc.recompute()
    card = {"Name": "Brass", "Density": "8.5 g/cm^3"}
    body, rigid = _exported_body(doc, [box], card)
    assert body.DensitySource == "Material"
    assert rigid.mass == pytest.approx(8500.0 * 1e-6, rel=RTOL)    # 10 mm cube
    assert rigid.density == pytest.approx(8500.0, rel=1e-12)


def test_mass_properties_follow_the_solid(freecad, doc):
    box = doc.addObject("Part::Box", "Growing")
    doc.recompute()
    body, _ = _exported_body(doc, [box], 1000.0)
    assert float(body.Mass.getValueAs("kg")) == pytest.approx(1e-3, rel=RTOL)
    box.Length = 30
    doc.recompute()
    assert float(body.Mass.getValueAs("kg")) == pytest.approx(3e-3, rel=RTOL)
    assert body.CenterOfMass.x == pytest.approx(15.0, rel=RTOL)


@pytest.mark.parametrize("example", ["seed_box", "crank_slider", "branched_tree", "four_bar"])
def test_stand_in_solids_reproduce_the_bodies(freecad, doc, example):
    """Import a model without solids: every stand-in box has the body's OCC mass properties."""
    from MultibodyWB.document import import_model
    from MultibodyWB.objects import export
    from MultibodyWB.examples import build
    model = build(example)
    mech = import_model.from_model(doc, model)
    back = export.to_model(mech)
    for b in model.bodies:
        rigid = back.body(b.name)
        ref = massprops.MassProperties(b.mass, b.mass_center.position, b.inertia, 0.0)
        assert_mass_properties(rigid, ref)
        np.testing.assert_allclose(rigid.position, b.position, atol=1e-15)
        np.testing.assert_allclose(bryant_to_matrix(rigid.orientation),
                                   bryant_to_matrix(b.orientation), atol=1e-15)


def test_stand_in_box_is_along_the_principal_axes():
    from MultibodyWB.document.import_model import principal_box
    mass, center = 1.3, np.array([0.01, -0.02, 0.03])
    R = bryant_to_matrix((0.4, -0.2, 1.3))
    J_c = R @ np.diag([2e-4, 3e-4, 4e-4]) @ R.T
    ji = inertia_tensor_to_vector(parallel_axis(J_c, mass, center))
    edges, axes, exact = principal_box(mass, ji, center)
    assert exact
    a, b, c = edges
    moments = mass / 12 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
    np.testing.assert_allclose(axes @ np.diag(moments) @ axes.T, J_c, rtol=1e-12, atol=1e-18)
    assert np.linalg.det(axes) == pytest.approx(1.0)
