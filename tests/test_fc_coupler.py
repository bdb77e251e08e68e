"""The Coupler document object in headless FreeCAD (issue 14): what the Coupler command proposes
for two hinges, properties and their tool tips, export to the neutral model and import back, a
gear pair run through the workbench's run path, save and reopen.

Headless FreeCAD has no selection and no Qt, so the command itself (selection, one undo step,
panel) is driven in the GUI by ``tests/test_gui_coupler.py``; here the coupler is made as its
statement makes it, from :func:`MultibodyWB.objects.coupler.propose`.
"""

import numpy as np
import pytest

pytestmark = pytest.mark.freecad

R1, R2 = 30.0, 60.0         #: wheel radii, mm
THICK = 10.0                #: wheel thickness, mm
GAP = R1 + R2               #: distance between the axles, mm
TORQUE = 0.5                #: N m on the first wheel


@pytest.fixture
def doc(freecad):
    d = freecad.newDocument("Couplers")
    name = d.Name
    yield d
    if name in freecad.listDocuments():
        freecad.closeDocument(name)


def _lateral_face(solid):
    return next(f"Face{i}" for i, f in enumerate(solid.Shape.Faces, 1)
                if type(f.Surface).__name__ == "Cylinder")


def _gears(freecad, doc):
    """Two steel wheels (cylinders of radii R1, R2 about global z) on revolute hinges to a
    plate (the ground), each hinge's moving marker picked on its wheel's rim as the Hinge
    command picks it, a torque on the first wheel."""
    from MultibodyWB.document import factory
    plate = doc.addObject("Part::Box", "Plate")
    plate.Length, plate.Width, plate.Height = 200, 140, 10
    plate.Placement.Base = freecad.Vector(-70, -70, -10)
    wheels = []
    for name, r, x in (("Pinion", R1, 0.0), ("Wheel", R2, GAP)):
        w = doc.addObject("Part::Cylinder", name)
        w.Radius, w.Height = r, THICK
        w.Placement.Base = freecad.Vector(x, 0, 0)
        wheels.append(w)
    doc.recompute()
    mech = factory.make_mechanism(doc, "Gears")
    ground = factory.make_body(doc, mech, plate, ground=True, name="Plate body")
    hinges, markers = [], []
    for w in wheels:
        body = factory.make_body(doc, mech, w, density=7850, name=f"{w.Name} body")
        on_wheel = factory.make_marker(doc, body, (w, _lateral_face(w)))
        doc.recompute()
        offset = plate.Placement.inverse().multiply(on_wheel.Placement)
        on_plate = factory.make_marker(doc, ground, None, offset=offset)
        hinges.append(factory.make_hinge(doc, mech, "revolute", on_wheel, on_plate,
                                         name=f"{w.Name}Axle"))
        markers.append(on_wheel)
    factory.make_force(doc, mech, "point_torque", markers[0], direction=(0, 0, 1),
                       magnitude=str(TORQUE), name="Drive")
    doc.recompute()
    return dict(mech=mech, wheels=wheels, hinges=hinges, markers=markers, ground=ground)


def _command_coupler(doc, hinges):
    """The coupler the Coupler command makes for ``hinges`` selected in this order."""
    from MultibodyWB.document import factory
    from MultibodyWB.objects import coupler
    p = coupler.propose(*hinges)
    values = dict(p.values)
    if "pitch_radius" in values:
        values["pitch_radius"] = f"{values['pitch_radius']!r} mm"
    obj = factory.make_coupler(doc, coupler_mechanism(hinges[0]), p.type, p.hinges[0],
                               p.coordinates[0], p.hinges[1], p.coordinates[1], **values)
    doc.recompute()
    return obj, p


def coupler_mechanism(hinge):
    from MultibodyWB.objects.mechanism import mechanism_of
    return mechanism_of(hinge)


# --- what the command proposes ------------------------------------------------------------------

def test_two_wheels_picked_on_their_rims_are_a_gear_pair_of_the_radii_ratio(freecad, doc):
    p = _gears(freecad, doc)
    # the hinge frames coincide as built (the wheel's marker on its axis, mid-thickness)
    for hinge in p["hinges"]:
        a, b = hinge.InputMarker.Placement, hinge.OutputMarker.Placement
        assert (a.Base - b.Base).Length < 1e-9 and a.Rotation.isSame(b.Rotation, 1e-12)
    mesh, proposal = _command_coupler(doc, p["hinges"])
    assert proposal.type == "gear" and proposal.coordinates == ("rz", "rz")
    assert proposal.values["ratio"] == pytest.approx(-R1 / R2, rel=1e-12)
    assert "-r1/r2" in proposal.why
    assert (mesh.CouplerType, mesh.FirstCoordinate, mesh.SecondCoordinate) == \
        ("gear", "rz", "rz")
    assert mesh.FirstHinge == p["hinges"][0] and mesh.SecondHinge == p["hinges"][1]
    assert mesh.Ratio == pytest.approx(-0.5, rel=1e-12)
    assert mesh.Label == "Pinion \u2013 Wheel gear"
    assert mesh in p["mech"].Group and mesh.Problem == ""


def test_the_proposal_follows_the_coordinates(freecad, doc):
    from MultibodyWB.document import factory
    from MultibodyWB.objects import coupler
    p = _gears(freecad, doc)
    pinion, wheel = p["hinges"]
    # without cylinder picks: ratio -1
    wheel.InputMarker = factory.make_marker(doc, wheel.InputMarker.Body, None)
    assert coupler.propose(pinion, wheel).values == {"ratio": -1.0}
    # a slide selected first and a revolute: a rack and pinion, the pinion first
    wheel.HingeType = "prismatic"
    rack = coupler.propose(wheel, pinion)
    assert (rack.type, rack.hinges, rack.coordinates) == \
        ("rack_pinion", (pinion, wheel), ("rz", "z"))
    assert rack.values == {"pitch_radius": 10.0}
    # two slides: linear 1, -1
    pinion.HingeType = "cylindrical"
    wheel.HingeType = "free"          # its rotations cannot be coupled: x, y, z only
    assert coupler.coordinates(wheel) == ["x", "y", "z"]
    assert coupler.coordinates(pinion) == ["z", "rz"]
    lin = coupler.propose(wheel, wheel)
    assert (lin.type, lin.coordinates, lin.values) == ("linear", ("x", "x"),
                                                      {"coefficients": (1.0, -1.0)})
    wheel.HingeType = "fixed"
    assert coupler.propose(pinion, wheel) is None


# --- the object ---------------------------------------------------------------------------------

def test_properties_tool_tips_coordinates_and_the_fields_the_type_shows(freecad, doc):
    p = _gears(freecad, doc)
    mesh, _ = _command_coupler(doc, p["hinges"])
    assert mesh.Proxy.Type == "Multibody::Coupler" and mesh.Version == 1
    for prop in mesh.Proxy.properties():
        assert mesh.getDocumentationOfProperty(prop.name).strip(), prop.name
    assert mesh.getTypeIdOfProperty("PitchRadius") == "App::PropertyLength"
    assert mesh.getEnumerationsOfProperty("CouplerType") == ["gear", "belt", "rack_pinion",
                                                             "linear"]
    assert mesh.getEnumerationsOfProperty("FirstCoordinate") == ["rz"]
    mode = mesh.getEditorMode
    assert "Hidden" not in mode("Ratio")
    assert "Hidden" in mode("PitchRadius") and "Hidden" in mode("Coefficients")
    mesh.CouplerType = "rack_pinion"
    assert "Hidden" not in mode("PitchRadius") and "Hidden" in mode("Ratio")
    mesh.CouplerType = "linear"
    assert "Hidden" not in mode("Coefficients") and "Hidden" in mode("PitchRadius")
    # the coordinate choices follow the hinge's type
    p["hinges"][1].HingeType = "cylindrical"
    doc.recompute()
    assert mesh.getEnumerationsOfProperty("SecondCoordinate") == ["z", "rz"]
    assert mesh.SecondCoordinate == "rz"
    p["hinges"][1].HingeType = "spherical"
    doc.recompute()
    assert mesh.getEnumerationsOfProperty("SecondCoordinate") == ["-"]
    assert any("SecondCoordinate" in prop and "no coordinate" in text
               for prop, text in mesh.Proxy.check(mesh))


def test_export_gives_the_neutral_coupler_and_import_rebuilds_it(freecad, doc, tmp_path):
    from MultibodyWB.document import import_model
    from MultibodyWB.objects import export
    from MultibodyWB.objects.base import type_of
    from MultibodyWB.solver.model import xmlio
    p = _gears(freecad, doc)
    mesh, _ = _command_coupler(doc, p["hinges"])
    mesh.Label = "Mesh"
    model = export.to_model(p["mech"])
    (k,) = model.couplers
    assert (k.name, k.type) == ("Mesh", "gear")
    assert (str(k.first), str(k.second)) == ("PinionAxle.rz", "WheelAxle.rz")
    assert k.ratio == pytest.approx(-0.5, rel=1e-12)
    assert k.pitch_radius is None and k.coefficients is None
    # a rack and pinion's radius in m
    mesh.CouplerType = "rack_pinion"
    p["hinges"][1].HingeType = "prismatic"
    doc.recompute()
    mesh.PitchRadius = "25 mm"
    (k,) = export.to_model(p["mech"]).couplers
    assert (k.type, str(k.second), k.pitch_radius, k.ratio) == \
        ("rack_pinion", "WheelAxle.z", pytest.approx(0.025, rel=1e-12), None)
    path = tmp_path / "rack.mbs.xml"
    xmlio.write(export.to_model(p["mech"]), str(path))
    other = freecad.newDocument("CouplersImported")
    try:
        mech = import_model.from_model(other, xmlio.read(str(path)))
        (obj,) = [o for o in mech.Group if type_of(o) == "Multibody::Coupler"]
        assert (obj.Label, obj.CouplerType, obj.FirstCoordinate, obj.SecondCoordinate) == \
            ("Mesh", "rack_pinion", "rz", "z")
        assert obj.FirstHinge.Label == "PinionAxle" and obj.SecondHinge.Label == "WheelAxle"
        assert obj.PitchRadius.Value == pytest.approx(25.0)
        (back,) = export.to_model(mech).couplers
        assert back == k
    finally:
        freecad.closeDocument(other.Name)


def test_a_problem_of_the_coupler_names_it_and_the_property(freecad, doc):
    from MultibodyWB.objects import export
    from MultibodyWB.solver.model import ModelError
    p = _gears(freecad, doc)
    mesh, _ = _command_coupler(doc, p["hinges"])
    mesh.Label = "Mesh"
    mesh.Ratio = 0.0
    with pytest.raises(ModelError) as info:
        export.to_model(p["mech"])
    assert "Coupler 'Mesh', property Ratio" in str(info.value)
    mesh.Ratio = -0.5
    mesh.SecondHinge = None
    with pytest.raises(ModelError) as info:
        export.to_model(p["mech"])
    assert "Coupler 'Mesh', property SecondHinge: is not set" in str(info.value)


# --- a run --------------------------------------------------------------------------------------

def test_the_gear_pair_turns_the_wheel_at_the_ratio(freecad, doc):
    """A torque T on the pinion: the wheel turns at n = -r1/r2 times its angle (to 1e-9), the
    pinion accelerates at T / (J1 + n^2 J2) (J = m r^2 / 2 of each steel disc) and the coupler's
    load on the wheel is J2 n u1'."""
    from MultibodyWB.document import runs
    from MultibodyWB.objects import export
    from MultibodyWB.objects.result import load
    p = _gears(freecad, doc)
    mesh, _ = _command_coupler(doc, p["hinges"])
    model = export.to_model(p["mech"])
    assert model.simulation.method == "mstmm"
    masses = {b.name: b.mass for b in model.bodies}
    J1 = masses["Pinion body"] * (R1 / 1000) ** 2 / 2
    J2 = masses["Wheel body"] * (R2 / 1000) ** 2 / 2
    n = -R1 / R2
    obj = runs.simulate_mechanism(p["mech"], t_end=0.5, step=1e-3, output_step=0.05)
    res = load(obj)
    label = mesh.Label
    for column in ("T1", "T2", "angle_error"):
        assert f"{label}.{column}" in res.names
    r1, r2 = res["PinionAxle.rz"], res["WheelAxle.rz"]
    assert np.abs(r1).max() > 0.1
    assert np.abs(r2 - n * r1).max() <= 1e-9 * np.abs(r1).max()
    a1 = TORQUE / (J1 + n * n * J2)
    np.testing.assert_allclose(res["PinionAxle.rz_rate"], a1 * res.time, rtol=1e-9,
                               atol=1e-12)
    np.testing.assert_allclose(res[f"{label}.T2"], J2 * n * a1, rtol=1e-9)


# --- save and reopen ----------------------------------------------------------------------------

def test_a_coupler_survives_save_close_and_reopen(freecad, doc, tmp_path):
    import importlib
    from MultibodyWB.objects import export
    for module in ("mechanism", "body", "marker", "hinge", "force", "coupler", "simulation",
                   "result"):
        importlib.import_module(f"MultibodyWB.objects.{module}")
    p = _gears(freecad, doc)
    mesh, _ = _command_coupler(doc, p["hinges"])
    mesh.CouplerType = "belt"
    mesh.Ratio = 0.75
    before = export.to_model(p["mech"]).couplers[0]
    names = mesh.Name, p["mech"].Name
    path = str(tmp_path / "gears.FCStd")
    doc.saveAs(path)
    freecad.closeDocument(doc.Name)
    reopened = freecad.openDocument(path)
    try:
        mesh = reopened.getObject(names[0])
        assert mesh.Proxy.Type == "Multibody::Coupler"
        assert (mesh.CouplerType, mesh.Ratio, mesh.FirstCoordinate) == ("belt", 0.75, "rz")
        assert mesh.getEnumerationsOfProperty("SecondCoordinate") == ["rz"]
        assert "Hidden" in mesh.getEditorMode("PitchRadius")
        assert "Hidden" not in mesh.getEditorMode("Ratio")
        mech = reopened.getObject(names[1])
        reopened.recompute()
        assert mesh.Problem == ""
        after = export.to_model(mech).couplers[0]
        assert after == before
    finally:
        freecad.closeDocument(reopened.Name)
