"""A force law's own parameters in the document (issue 36 item 3: a new law with parameters of
its own is one module plus one registry line): the Force's properties are read from the laws'
``Param`` rows alone (a fake law put into the table gets its properties, its export, its file
and its import without a line of the FreeCAD layer naming it), shown for the types that declare
them, in FreeCAD's units; the nonlinear bushing's six per-axis parameters exported in SI to the
model and the XML file, imported back, saved and reopened, an old document gaining them, a
problem named on the properties, and a block held by a bushing run through the workbench's own
export and simulate path against the closed-form oscillation.
"""

import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from MultibodyWB.solver.elements.forces.base import ForceType, Param
from MultibodyWB.solver.model import FORCE_TYPES

pytestmark = pytest.mark.freecad

#: The bushing's values used below, SI, per axis (the solver's rows' attrs).
BUSHING = {"translation_stiffness": (2000.5, 3000.0, 4.0e4),
           "translation_cubic_stiffness": (1.0e6, 0.0, 2.5e7),
           "translation_damping": (3.0, 0.25, 12.0),
           "rotation_stiffness": (15.0, 8.0, 0.123456789),
           "rotation_cubic_stiffness": (40.0, 0.0, 1.5),
           "rotation_damping": (0.01, 0.02, 0.03)}


@pytest.fixture
def doc(freecad):
    d = freecad.newDocument("ForceParams")
    name = d.Name
    yield d
    if name in freecad.listDocuments():
        freecad.closeDocument(name)


def _fake_table():
    """A table with a law of a number and a vector of its own, one with a unit FreeCAD cannot
    parse, and a second type sharing a parameter."""
    fake = ForceType("fake_law", 2, frozenset(), "a law made up for the test", {}, params=(
        Param("preload", "Preload", "N", "force it starts with"),
        Param("gap_stiffness", "GapStiffness", "N/m^2", "stiffness per axis", 3,
              default=5.0),
        Param("weird", "Weird", "furlong/fortnight", "a unit FreeCAD cannot parse"),
    ))
    other = ForceType("other_law", 1, frozenset(), "another", {}, params=(
        Param("preload", "Preload", "N", "force it starts with"),))
    return {"point_force": FORCE_TYPES["point_force"], "fake_law": fake, "other_law": other}


def _two_blocks(freecad, doc, gap=100.0):
    """A frame (ground) and a 10 mm steel cube; a marker at the cube's centre and one on the
    frame ``gap`` mm along x from it, both with the global axes; a free hinge between them."""
    from MultibodyWB.document import factory
    V, P = freecad.Vector, freecad.Placement
    frame = doc.addObject("Part::Box", "FrameSolid")
    frame.Placement = P(V(-100, 0, 0), freecad.Rotation())
    block = doc.addObject("Part::Box", "BlockSolid")
    doc.recompute()
    mech = factory.make_mechanism(doc, "Held", gravity=(0, 0, 0))
    ground = factory.make_body(doc, mech, frame, ground=True, name="Frame")
    body = factory.make_body(doc, mech, block, density=7850, name="Block")
    m_block = factory.make_marker(doc, body, None, offset=V(5, 5, 5), name="BlockCentre")
    m_frame = factory.make_marker(doc, ground, None, offset=V(105 + gap, 5, 5),
                                  name="Anchor")
    factory.make_hinge(doc, mech, "free", m_block, m_frame, name="Float")
    doc.recompute()
    return mech, m_block, m_frame


def _force(model, name):
    return next(f for f in model.forces if f.name == name)


# --- the rows -> the properties (no document) --------------------------------------------------

def test_a_fake_laws_rows_map_to_properties_by_their_tags_units_and_docs(freecad):
    from MultibodyWB.objects import units
    from MultibodyWB.objects.force import param_properties
    props = param_properties(_fake_table())
    assert list(props) == ["Preload", "GapStiffnessX", "GapStiffnessY", "GapStiffnessZ", "Weird"]
    assert {p.group for p in props.values()} == {"Fake law"}      # the shared one: the first's
    pre = props["Preload"]
    assert (pre.type, pre.unit, pre.si, pre.default) == (units.TEXT, "N", "N", 0.0)
    assert pre.doc.startswith("Force it starts with [")
    gap = props["GapStiffnessY"]
    assert (gap.type, gap.unit, gap.si, gap.default) == (units.TEXT, "N/m^2", "N/m^2", 5.0)
    assert "(y component)" in gap.doc and "N/m^2" in gap.doc
    weird = props["Weird"]               # FreeCAD cannot say it: a number in SI, unit in the tip
    assert (weird.type, weird.unit, weird.si) == ("App::PropertyFloat", None, "furlong/fortnight")
    assert "[furlong/fortnight, SI]" in weird.doc


def test_rows_the_document_cannot_hold_are_refused_by_name(freecad):
    from MultibodyWB.objects.force import param_properties
    table = _fake_table()
    with pytest.raises(ValueError, match="fake_law.*Preload is a fixed property"):
        param_properties(table, taken={"Preload"})
    clash = ForceType("clash", 1, frozenset(), "", {},
                      params=(Param("preload", "Preload", "N m", "a torque"),))
    with pytest.raises(ValueError, match="clash.*Preload is another type's, in N"):
        param_properties({**table, "clash": clash})
    odd = ForceType("odd", 1, frozenset(), "", {}, params=(Param("pair", "Pair", "m", "", 2),))
    with pytest.raises(ValueError, match="size 2"):
        param_properties({"odd": odd})


def test_every_param_of_every_type_is_a_property_in_its_unit(freecad):
    """Every row of the solver's table, whatever law it is: its properties exist, in the row's
    unit (its dimension as FreeCAD reads it), tool tips from its doc, in its type's group."""
    from MultibodyWB.objects import units
    from MultibodyWB.objects.force import ForceProxy, param_names, type_title
    props = {p.name: p for p in ForceProxy.properties()}
    seen = 0
    for kind in FORCE_TYPES.values():
        for param in kind.params:
            names = param_names(param)
            assert len(names) == param.size
            for name in names:
                prop = props[name]
                assert prop.group == type_title(kind.name)
                assert param.doc[1:] in prop.doc
                assert units.unit(prop.unit) == units.unit(units.model_unit(param.unit))
                assert units.factor(prop.unit) == pytest.approx(
                    units.factor(units.model_unit(param.unit)))
                seen += 1
    assert seen >= 18                       # the nonlinear bushing's six per-axis rows at least


# --- a fake law through the whole FreeCAD layer ------------------------------------------------

def test_a_fake_law_goes_through_properties_export_file_and_import(freecad, doc, monkeypatch):
    """A law added to the table only (as its module and its LAWS line would): the Force gets its
    properties, shows them for its type only, exports them in SI, the file writes them, and the
    import makes them again; nothing in the FreeCAD layer names it."""
    from MultibodyWB.document import import_model
    from MultibodyWB.document import factory
    from MultibodyWB.objects import export
    from MultibodyWB.solver.api import xmlio
    fake = _fake_table()["fake_law"]
    monkeypatch.setitem(FORCE_TYPES, "fake_law", fake)
    mech, a, b = _two_blocks(freecad, doc)
    force = factory.make_force(doc, mech, "fake_law", a, b, name="Fake",
                               params={"preload": 12.5, "gap_stiffness": ("2 N/mm^2", 3, 4)})
    spring = factory.make_force(doc, mech, "spring_damper", a, b, name="Spring")
    assert "fake_law" in force.getEnumerationsOfProperty("ForceType")
    assert force.Preload == "12.5 N" and force.GapStiffnessX == "2 N/mm^2"
    assert force.GapStiffnessZ == "4 N/m^2" and force.Weird == 0.0
    for name in ("Preload", "GapStiffnessX", "GapStiffnessY", "GapStiffnessZ", "Weird"):
        assert "Hidden" not in force.getEditorMode(name), name
        assert spring.getEditorMode(name) == ["Hidden"], name
    force.Weird = 7.0
    doc.removeObject(spring.Name)
    model = export.collect(mech).model
    (f,) = model.forces
    assert f.params["preload"] == 12.5 and f.params["weird"] == 7.0
    np.testing.assert_allclose(f.params["gap_stiffness"], [2e6, 3, 4], rtol=1e-12)
    # the writer writes its rows' elements (the reader would refuse them: the file's schema is
    # generated from the registered laws)
    el = ET.fromstring(xmlio.to_string(model)).find("Force")
    assert el.find("Preload").text == "12.5"
    assert [float(x) for x in el.find("GapStiffness").text.split(",")] == \
        pytest.approx([2e6, 3, 4], rel=1e-12)
    again = import_model.from_model(doc, model, name="Again")
    (f2,) = [o for o in again.Group if getattr(o, "ForceType", "") == "fake_law"]
    assert (f2.Preload, f2.GapStiffnessY, f2.Weird) == ("12.5 N", "3 N/m^2", 7.0)
    assert float(f2.GapStiffnessX.split()[0]) == pytest.approx(2e6, rel=1e-12)


# --- the nonlinear bushing -------------------------------------------------------------------

def test_the_bushing_shows_its_parameters_only(freecad, doc):
    from MultibodyWB.document import factory
    from MultibodyWB.objects.force import FIELD_PROPERTIES, ForceProxy, type_params
    mech, a, b = _two_blocks(freecad, doc)
    force = factory.make_force(doc, mech, "nonlinear_bushing", a, b)
    own = {n for _, names in type_params("nonlinear_bushing") for n in names}
    assert len(own) == 18
    for name in ForceProxy.param_props():
        assert ("Hidden" not in force.getEditorMode(name)) == (name in own), name
    for names in FIELD_PROPERTIES.values():     # no spring-damper field
        for name in names:
            assert force.getEditorMode(name) == ["Hidden"], name
    assert force.TranslationStiffnessX == "0 N/m"
    assert force.RotationCubicStiffnessZ == "0 N*m/rad^3"
    assert "Cubic stiffness k3 of the offset" in force.getDocumentationOfProperty("TranslationCubicStiffnessY")
    assert force.getGroupOfProperty("RotationDampingZ") == "Nonlinear bushing"
    # another type: hidden again, and back
    force.ForceType = "spring_damper"
    assert all(force.getEditorMode(n) == ["Hidden"] for n in own)
    assert "Hidden" not in force.getEditorMode("Stiffness")
    force.ForceType = "nonlinear_bushing"
    assert all("Hidden" not in force.getEditorMode(n) for n in own)


def test_bushing_values_export_in_si_whatever_unit_they_are_typed_in(freecad, doc):
    from MultibodyWB.document import factory
    from MultibodyWB.objects import export
    mech, a, b = _two_blocks(freecad, doc)
    force = factory.make_force(doc, mech, "nonlinear_bushing", a, b, name="Bush")
    force.TranslationStiffnessX = "2 N/mm"
    force.TranslationCubicStiffnessY = "3 N/mm^3"
    force.TranslationDampingZ = "0.5 N*s/mm"
    force.RotationStiffnessX = "1 N*m/deg"
    force.RotationCubicStiffnessY = "2"                      # completed with its unit
    force.RotationDampingZ = "4 N*mm*s/rad"
    assert force.RotationCubicStiffnessY == "2 N*m/rad^3"
    p = _force(export.to_model(mech), "Bush").params
    np.testing.assert_allclose(p["translation_stiffness"], [2000, 0, 0], rtol=1e-12)
    np.testing.assert_allclose(p["translation_cubic_stiffness"], [0, 3e9, 0], rtol=1e-12)
    np.testing.assert_allclose(p["translation_damping"], [0, 0, 500], rtol=1e-12)
    np.testing.assert_allclose(p["rotation_stiffness"], [180 / math.pi, 0, 0], rtol=1e-12)
    np.testing.assert_allclose(p["rotation_cubic_stiffness"], [0, 2, 0], rtol=1e-12)
    np.testing.assert_allclose(p["rotation_damping"], [0, 0, 0.004], rtol=1e-12)


def test_bushing_round_trip_document_file_document(freecad, doc, tmp_path):
    """make_force's SI values -> the model -> the XML file (SI, every digit) -> a new document
    -> the same model."""
    from MultibodyWB.document import factory, import_model
    from MultibodyWB.objects import export
    from MultibodyWB.solver.api import FORCE_TYPES as API_TYPES, xmlio
    mech, a, b = _two_blocks(freecad, doc)
    factory.make_force(doc, mech, "nonlinear_bushing", a, b, name="Bush", params=BUSHING)
    model = export.to_model(mech)
    path = tmp_path / "bushing.xml"
    xmlio.write(model, str(path))
    el = ET.parse(path).getroot().find("Force")
    assert el.get("Type") == "nonlinear_bushing"
    tags = [p.tag for p in API_TYPES["nonlinear_bushing"].params]
    assert [c.tag for c in el if c.tag in tags] == tags
    for param in API_TYPES["nonlinear_bushing"].params:
        written = [float(x) for x in el.find(param.tag).text.split(",")]
        np.testing.assert_allclose(written, BUSHING[param.attr], rtol=1e-14, err_msg=param.tag)
    other = freecad.newDocument("ForceParamsImported")
    try:
        mech2 = import_model.import_file(other, str(path))
        (f2,) = [o for o in mech2.Group if getattr(o, "ForceType", "") == "nonlinear_bushing"]
        assert f2.Label == "Bush"
        again = _force(export.to_model(mech2), "Bush")
        for attr, values in BUSHING.items():
            np.testing.assert_allclose(again.params[attr], values, rtol=1e-14, err_msg=attr)
        assert f2.RotationStiffnessZ == "0.123456789 N*m/rad"           # every digit kept
    finally:
        freecad.closeDocument(other.Name)


def test_bushing_values_survive_save_and_reopen(freecad, doc, tmp_path):
    from MultibodyWB.document import factory
    from MultibodyWB.objects import export
    mech, a, b = _two_blocks(freecad, doc)
    force = factory.make_force(doc, mech, "nonlinear_bushing", a, b, name="Bush", params=BUSHING)
    force.TranslationStiffnessY = "3.5 N/mm"
    texts = {n: getattr(force, n) for n in force.Proxy.param_props()}
    path = str(tmp_path / "bushing.FCStd")
    doc.saveAs(path)
    freecad.closeDocument(doc.Name)
    reopened = freecad.openDocument(path)
    try:
        (f,) = [o for o in reopened.Objects if getattr(o, "ForceType", "") == "nonlinear_bushing"]
        assert {n: getattr(f, n) for n in texts} == texts
        assert "Hidden" not in f.getEditorMode("RotationDampingX")
        assert f.getEditorMode("Stiffness") == ["Hidden"]
        (mech2,) = [o for o in reopened.Objects if o.Label == "Held"]
        p = _force(export.to_model(mech2), "Bush").params
        np.testing.assert_allclose(p["translation_stiffness"], [2000.5, 3500, 4e4], rtol=1e-12)
    finally:
        freecad.closeDocument(reopened.Name)


def test_a_document_saved_before_the_parameters_gains_them(freecad):
    """The engine of commit 21bdf10 (tests/data): its gas force gets the laws' parameters,
    hidden, at their rows' defaults, and exports as before."""
    import importlib
    import os
    from MultibodyWB.objects import export
    from MultibodyWB.objects.base import type_of
    for module in ("mechanism", "body", "marker", "hinge", "force", "simulation", "result"):
        importlib.import_module(f"MultibodyWB.objects.{module}")
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                        "engine_21bdf10.FCStd")
    old = freecad.openDocument(path)
    try:
        (force,) = [o for o in old.Objects if type_of(o) == "Multibody::Force"]
        for name, prop in force.Proxy.param_props().items():
            assert name in force.PropertiesList, name
            assert force.getEditorMode(name) == ["Hidden"], name
            assert force.getGroupOfProperty(name) == prop.group
        assert force.TranslationStiffnessX == "0 N/m"
        assert "nonlinear_bushing" in force.getEnumerationsOfProperty("ForceType")
        (mech,) = [o for o in old.Objects if type_of(o) == "Multibody::Mechanism"]
        (f,) = export.to_model(mech).forces
        assert f.params == {}
        # it can become a bushing
        force.ForceType = "nonlinear_bushing"
        assert "Hidden" not in force.getEditorMode("RotationStiffnessZ")
    finally:
        freecad.closeDocument(old.Name)


def test_a_negative_value_is_named_on_the_parameters_properties(freecad, doc):
    from MultibodyWB.document import factory
    from MultibodyWB.objects import export
    mech, a, b = _two_blocks(freecad, doc)
    force = factory.make_force(doc, mech, "nonlinear_bushing", a, b, name="Bush")
    force.RotationDampingY = "-1"
    force.TranslationCubicStiffnessZ = "abc"
    problems = {prop: message for o, prop, message in export.collect(mech).object_problems
                if o.Name == force.Name}
    assert "RotationDampingX, RotationDampingY, RotationDampingZ" in problems
    assert "must be not negative" in problems[
        "RotationDampingX, RotationDampingY, RotationDampingZ"]
    assert "'abc' is not a quantity in N/m^3" in problems["TranslationCubicStiffnessZ"]


def test_make_force_refuses_parameters_its_type_has_not(freecad, doc):
    from MultibodyWB.document import factory
    mech, a, b = _two_blocks(freecad, doc)
    with pytest.raises(ValueError, match="a spring_damper takes no parameter 'rotation_damping'"):
        factory.make_force(doc, mech, "spring_damper", a, b, params={"rotation_damping": 1})
    with pytest.raises(ValueError, match="3 values .one per axis., not 2"):
        factory.make_force(doc, mech, "nonlinear_bushing", a, b,
                           params={"rotation_damping": (1, 2)})


def test_a_block_held_by_a_bushing_oscillates_at_its_closed_form_period(freecad, doc):
    """A 10 mm steel cube on a free hinge, no gravity, held by a bushing whose anchor is drawn
    1 mm along x from the cube's centre: only the x stiffness and its cubic term act, so the
    cube runs from the drawn position x0 = -1 mm between -1 mm and +1 mm about the anchor with
    the period of the Duffing oscillator m x'' + k x + k3 x^3 = 0 (quadrature), through the
    workbench's own export and simulate path."""
    from scipy.integrate import quad
    from MultibodyWB.document import factory, runs
    mech, a, b = _two_blocks(freecad, doc, gap=1.0)
    k, k3 = 2.0e3, 4.0e8                      # N/m, N/m^3: k3 x0^2 = 0.2 k at 1 mm
    factory.make_force(doc, mech, "nonlinear_bushing", a, b, name="Bush",
                       params={"translation_stiffness": (k, 5e3, 5e3),
                               "translation_cubic_stiffness": (k3, 0, 0),
                               "rotation_stiffness": 1.0})
    mass = 7850 * 1e-6
    x0 = 1e-3
    # period: 4 * int_0^x0 dx / sqrt(2/m (V(x0) - V(x))), V = k x^2/2 + k3 x^4/4
    V = lambda x: 0.5 * k * x * x + 0.25 * k3 * x ** 4               # noqa: E731
    t = lambda u: 1.0 / math.sqrt(2.0 / mass * (V(x0) - V(x0 * math.sin(u))))  # noqa: E731
    period = 4.0 * quad(lambda u: t(u) * x0 * math.cos(u), 0.0, math.pi / 2)[0]
    linear = 2 * math.pi * math.sqrt(mass / k)
    assert period < 0.95 * linear             # the cubic term stiffens it, seen
    obj = runs.simulate_mechanism(mech, t_end=2.2 * period, step=period / 2000,
                                  output_step=period / 400)
    res = runs.load(obj)
    x = np.asarray(res["Float.x"])
    time = np.asarray(res.time)
    assert x[0] == pytest.approx(-x0, rel=1e-9)
    assert np.max(x) == pytest.approx(x0, rel=2e-3) and np.min(x) == pytest.approx(-x0, rel=1e-9)
    for c in ("Float.y", "Float.z", "Float.rx", "Float.ry", "Float.rz"):
        assert np.max(np.abs(np.asarray(res[c]))) < 1e-9, c
    # the maxima come one period apart
    peaks = [i for i in range(1, len(x) - 1) if x[i] >= x[i - 1] and x[i] > x[i + 1]]
    assert len(peaks) == 2
    # a parabola through each peak's neighbours for its time
    def vertex(i):
        y0, y1, y2 = x[i - 1], x[i], x[i + 1]
        h = time[i + 1] - time[i]
        return time[i] + 0.5 * h * (y0 - y2) / (y0 - 2 * y1 + y2)
    assert vertex(peaks[1]) - vertex(peaks[0]) == pytest.approx(period, rel=1e-3)
