"""Hinge end stops in the document: the stop properties (shown with the limits, FreeCAD units),
their default stiffness (a 50 Hz stop), export to and import from the neutral model, a pendulum
falling onto its stop run through the workbench's run path, and a document saved before the
stops existed opened and exported.
"""

import math

import numpy as np
import pytest

pytestmark = pytest.mark.freecad

#: The link: a steel bar 100 x 10 x 10 mm hinged at one end about the global y axis.
LENGTH, SIDE, DENSITY = 0.1, 0.01, 7850.0
MASS = DENSITY * LENGTH * SIDE * SIDE
#: Moment of inertia of the bar about the hinge axis (kg m^2): m (L^2 / 3 + a^2 / 12).
J_AXIS = MASS * (LENGTH ** 2 / 3.0 + SIDE ** 2 / 12.0)
UPPER = 45.0            # deg: the bar falls from horizontal onto this stop


@pytest.fixture
def doc(freecad):
    d = freecad.newDocument("Stops")
    name = d.Name
    yield d
    if name in freecad.listDocuments():
        freecad.closeDocument(name)


@pytest.fixture
def messages(freecad, monkeypatch):
    """The messages printed with FreeCAD.Console.PrintMessage during the test."""
    printed = []
    monkeypatch.setattr(freecad.Console, "PrintMessage", printed.append)
    return printed


def _pendulum(freecad, doc, **limits):
    """A bar hinged at the global origin about y, drawn horizontal (rz = 0); gravity -z turns
    it towards +rz. ``limits``: options of ``make_hinge``."""
    from MultibodyWB.document import factory
    V, P = freecad.Vector, freecad.Placement
    frame = doc.addObject("Part::Box", "FrameSolid")
    frame.Length, frame.Width, frame.Height = 40, 40, 10
    frame.Placement = P(V(-50, -20, 20), freecad.Rotation())
    link = doc.addObject("Part::Box", "LinkSolid")
    link.Length, link.Width, link.Height = 1000 * LENGTH, 1000 * SIDE, 1000 * SIDE
    link.Placement = P(V(0, -5, -5), freecad.Rotation())
    doc.recompute()
    mech = factory.make_mechanism(doc, "Pendulum")
    ground = factory.make_body(doc, mech, frame, ground=True, name="Frame")
    body = factory.make_body(doc, mech, link, density=DENSITY, name="Link")
    m_link = factory.make_marker(doc, body, None, offset=V(0, 5, 5), name="LinkEnd")
    m_frame = factory.make_marker(doc, ground, None, offset=V(50, 20, -20), name="Pivot")
    for m in (m_link, m_frame):
        factory.orient_marker(m, z=(0, 1, 0), x=(1, 0, 0))
    hinge = factory.make_hinge(doc, mech, "revolute", m_link, m_frame, name="Joint", **limits)
    doc.recompute()
    return mech, hinge


def test_stop_properties_show_with_the_limits_in_freecad_units(freecad, doc):
    from MultibodyWB.objects.base import quantity_value
    from MultibodyWB.objects.hinge import STOP_PREFIXES
    _, hinge = _pendulum(freecad, doc)
    assert hinge.UseLimits is False and hinge.StopStiffnessRz == "0 N*m/rad"
    for prefix in STOP_PREFIXES:
        assert hinge.getEditorMode(prefix + "Rz") == ["Hidden"]
    hinge.UseLimits = True
    for prefix in STOP_PREFIXES:
        assert "Hidden" not in hinge.getEditorMode(prefix + "Rz"), prefix
        assert hinge.getEditorMode(prefix + "Z") == ["Hidden"]       # not a revolute coordinate
    # the defaults: restitution 0.5 at 1 rad/s (deg/s shown), 1 m/s for translations
    assert hinge.StopRestitutionRz == "0.5"
    assert hinge.StopImpactSpeedRz.Value == pytest.approx(math.degrees(1.0))
    assert str(hinge.StopImpactSpeedRz.Unit) == str(freecad.Units.Quantity("1 deg/s").Unit)
    assert hinge.StopImpactSpeedZ.Value == pytest.approx(1000.0)        # mm/s
    assert "N/m" in hinge.getDocumentationOfProperty("StopStiffnessZ")
    assert "N*m/rad" in hinge.getDocumentationOfProperty("StopStiffnessRz")
    assert "50 Hz" in hinge.getDocumentationOfProperty("StopStiffnessRz")
    # the 50 Hz default, seen in the property: k = J (2 pi 50)^2 with the bar's J about the axis
    k = quantity_value(hinge, "StopStiffnessRz") / freecad.Units.Quantity("1 N*m/rad").Value
    assert k == pytest.approx(J_AXIS * (2 * math.pi * 50.0) ** 2, rel=1e-5)
    # a value the user gave is theirs: turning the limits off and on keeps it
    hinge.StopStiffnessRz = "30"
    assert hinge.StopStiffnessRz == "30 N*m/rad"
    hinge.UseLimits = False
    hinge.UseLimits = True
    assert hinge.StopStiffnessRz == "30 N*m/rad"


def test_stops_export_to_the_neutral_model_and_import_back(freecad, doc):
    from MultibodyWB.document import import_model
    from MultibodyWB.objects import export
    mech, hinge = _pendulum(freecad, doc, lower_limits={"rz": -10}, upper_limits={"rz": UPPER},
                            stop_stiffness={"rz": 20}, stop_restitution={"rz": 0.3},
                            stop_impact_speed={"rz": 90})
    assert hinge.UseLimits and hinge.StopStiffnessRz == "20 N*m/rad"
    h = export.to_model(mech).hinge("Joint")
    np.testing.assert_allclose(h.lower_limits, [math.radians(-10)], rtol=1e-12)
    np.testing.assert_allclose(h.upper_limits, [math.radians(UPPER)], rtol=1e-12)
    np.testing.assert_allclose(h.stop_stiffness, [20.0], rtol=1e-12)
    np.testing.assert_allclose(h.stop_restitution, [0.3], rtol=1e-12)
    np.testing.assert_allclose(h.stop_impact_speed, [math.pi / 2], rtol=1e-12)
    model = export.to_model(mech)
    again = import_model.from_model(doc, model, name="Imported")
    (h2,) = export.to_model(again).hinges          # "Joint001": labels are unique
    for name in ("lower_limits", "upper_limits", "stop_stiffness", "stop_restitution",
                 "stop_impact_speed"):
        np.testing.assert_allclose(getattr(h2, name), getattr(h, name), rtol=1e-9, err_msg=name)
    # limits off: no stop fields in the model
    hinge.UseLimits = False
    h = export.to_model(mech).hinge("Joint")
    assert h.lower_limits is None and h.stop_stiffness is None and h.stop_restitution is None


def test_a_limit_without_stop_stiffness_is_named_on_the_hinge(freecad, doc):
    from MultibodyWB.objects import export
    mech, hinge = _pendulum(freecad, doc, upper_limits={"rz": UPPER})
    hinge.StopStiffnessRz = "0"
    problems = export.collect(mech).object_problems
    assert [(o.Name, prop) for o, prop, _ in problems] == [("Joint", "StopStiffnessRz")]
    assert "N m/rad" in problems[0][2] and "rz" in problems[0][2]


def test_pendulum_falls_onto_its_stop_and_stays_within_the_limits(freecad, doc):
    """The bar falls from horizontal onto the 45 deg stop (default 50 Hz stiffness): it goes
    beyond the limit only by the stop's compression, about the impact speed over the stop's
    angular frequency, and ends resting on it, the stop carrying the weight's moment."""
    from MultibodyWB.document import runs
    from MultibodyWB.objects.base import quantity_value
    mech, hinge = _pendulum(freecad, doc, lower_limits={"rz": -10}, upper_limits={"rz": UPPER})
    k = quantity_value(hinge, "StopStiffnessRz") / freecad.Units.Quantity("1 N*m/rad").Value
    omega = math.sqrt(k / J_AXIS)
    assert omega / (2 * math.pi) == pytest.approx(50.0, rel=1e-5)
    obj = runs.simulate_mechanism(mech, t_end=0.6, step=1e-4, output_step=1e-3)
    res = runs.load(obj)
    assert "Joint.rz_stop" in res.names
    q = np.asarray(res["Joint.rz"])
    tau = np.asarray(res["Joint.rz_stop"])
    upper = math.radians(UPPER)
    # energy down to the stop: m g (L/2) sin(45 deg) = J w^2 / 2
    g = 9.81
    w_impact = math.sqrt(2 * MASS * g * LENGTH / 2 * math.sin(upper) / J_AXIS)
    penetration = q.max() - upper
    # at most an undamped stop's compression w / omega (2.6 deg); the stop's damping (0.5 at
    # 1 rad/s) takes much of the 14 rad/s impact: about 0.8 deg
    assert 0.0 < penetration < w_impact / omega
    assert penetration < math.radians(1.0)
    assert q.min() >= -1e-12                     # never near the lower stop (-10 deg)
    assert np.all(tau[q <= upper] == 0.0)        # the stop only pushes beyond its limit
    # at rest on the stop: the stop holds the weight's moment m g (L/2) cos(45 deg)
    weight = MASS * g * LENGTH / 2 * math.cos(upper)
    assert abs(tau[-1]) == pytest.approx(weight, rel=0.02)
    assert q[-1] - upper == pytest.approx(weight / k, rel=0.05)


def test_a_document_saved_before_the_stops_opens_and_exports(freecad, doc, tmp_path, messages):
    """A hinge with limits saved at version 2 (no stop properties): opened, it gets them, the
    limited coordinate a 50 Hz stop stiffness (said in the report view), and it exports."""
    from MultibodyWB.objects import export
    from MultibodyWB.objects.base import quantity_value
    from MultibodyWB.objects.hinge import COORDINATES, STOP_PREFIXES, property_name
    mech, hinge = _pendulum(freecad, doc, lower_limits={"rz": -10}, upper_limits={"rz": UPPER})
    for c in COORDINATES:                         # as version 2 saved it
        for prefix in STOP_PREFIXES:
            name = property_name(prefix, c)
            hinge.setPropertyStatus(name, "-LockDynamic")
            hinge.removeProperty(name)
    hinge.Version = 2
    path = str(tmp_path / "v2.FCStd")
    doc.saveAs(path)
    freecad.closeDocument(doc.Name)
    reopened = freecad.openDocument(path)
    try:
        hinge = reopened.getObject("Joint")
        assert hinge.Version == 3 and hinge.UseLimits
        k = quantity_value(hinge, "StopStiffnessRz") / freecad.Units.Quantity("1 N*m/rad").Value
        assert k == pytest.approx(J_AXIS * (2 * math.pi * 50.0) ** 2, rel=1e-5)
        assert hinge.StopRestitutionRz == "0.5"
        said = [m for m in messages if "StopStiffnessRz" in m]
        assert len(said) == 1 and "Hinge 'Joint'" in said[0] and "50 Hz" in said[0] and \
            "'Link'" in said[0]
        h = export.to_model(reopened.getObject("Pendulum")).hinge("Joint")
        np.testing.assert_allclose(h.stop_stiffness, [k], rtol=1e-5)
        np.testing.assert_allclose(h.upper_limits, [math.radians(UPPER)], rtol=1e-12)
        assert export.collect(reopened.getObject("Pendulum")).object_problems == []
    finally:
        freecad.closeDocument(reopened.Name)
