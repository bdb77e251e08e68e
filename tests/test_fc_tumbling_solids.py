"""The tumbling solids built from FreeCAD solids (``MultibodyWB/examples_fc/tumbling_solids.py``)
against the code-built example: the same bodies (mass from the solids to the B-spline egg's
approximation, drawn positions and orientations), the same nine contacts with the plate's and
the fence's faces as planes and each solid as the convex hull of its tessellation, within the
tolerance of the code example's exact points. Its run is checked in the GUI test
(``tests/test_gui_contact_convex.py``) and by the demo."""

import numpy as np
import pytest

pytestmark = pytest.mark.freecad


@pytest.fixture
def built(freecad):
    from MultibodyWB.examples_fc import tumbling_solids
    from MultibodyWB.objects import export
    doc = freecad.newDocument("Tumbling")
    try:
        mech = tumbling_solids.setup(doc)
        yield mech, export.to_model(mech)
    finally:
        freecad.closeDocument(doc.Name)


def test_the_document_has_the_code_examples_bodies_and_contacts(built):
    from MultibodyWB.examples import build
    from MultibodyWB.objects.base import type_of
    mech, model = built
    code = build("tumbling_solids")
    assert [b.name for b in model.bodies] == [f"{b.name} body" for b in code.bodies]
    for b, c in zip(model.bodies, code.bodies):
        assert b.mass == pytest.approx(c.mass, rel=1e-3)         # the egg: its B-spline
        np.testing.assert_allclose(b.position, c.position, atol=1e-12)
        np.testing.assert_allclose(b.orientation, c.orientation, atol=1e-12)
    assert [c.name for c in model.contacts] == [c.name for c in code.contacts]
    for c in model.contacts:
        assert c.input_shape.type == "convex"
        assert c.output_shape.type in ("plane", "convex")
    contacts = [o for o in mech.Group if type_of(o) == "Multibody::Contact"]
    assert all("3 points" in o.StiffnessRule for o in contacts)


def test_the_hulls_are_the_code_examples_shapes_to_the_tessellation(built):
    """Each solid's hull (its marker at the centre of mass, the solid's axes: the code
    example's body frame) against the code example's points: every point of either within the
    tessellation's tolerance (plus the egg's B-spline approximation) of the other's hull."""
    from MultibodyWB.examples import build
    from MultibodyWB.objects.base import type_of
    from test_fc_contact_convex import hull_gap
    mech, model = built
    code = {c.name: c for c in build("tumbling_solids").contacts}
    tolerances = {o.Label: o.InputTolerance.Value / 1000.0 for o in mech.Group
                  if type_of(o) == "Multibody::Contact"}
    for c in model.contacts:
        if not c.name.endswith("Plate"):
            continue
        ours, theirs = c.input_shape.points, code[c.name].input_shape.points
        slack = tolerances[c.name] + 2e-5
        assert hull_gap(theirs, ours) <= slack, c.name
        if c.name != "EggPlate":            # the code egg's grid is coarser than the tolerance
            assert hull_gap(ours, theirs) <= slack, c.name
