"""Stacked links hinged on their bores, in headless FreeCAD (issue 32.4 and 32.5).

The four-bar of ``tests/stacked_four_bar.py``: links 10 mm thick stacked along the pins, every
revolute hinge picked on two bores' faces (markers mid-bore, 10 mm apart along the pin).

- The kinematic preview (what drag-to-check and a typed start move) keeps every part on its
  layer, as the run does: after setting the crank anywhere every solid's and marker's height
  along the pins and its axis are as drawn to 1e-9 mm, and the hinges' drawn residuals are
  unchanged.
- The interference check finds nothing as drawn; a layer pushed into the next one is an overlap
  the hinge joining them does not excuse (a pin drawn in its bore still is), and the Simulate
  panel's list has it.
- The FEM loads of the coupler at an instant of a motor run balance in force and moment to
  1e-6 and land on the coupler's bore faces; no note of loads out of balance.
"""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import stacked_four_bar as sfb  # noqa: E402

pytestmark = pytest.mark.freecad


@pytest.fixture
def four_bar(freecad):
    doc = freecad.newDocument("Stacked")
    mech, parts, bodies, hinges = sfb.build(freecad, doc)
    yield doc, mech, parts, bodies, hinges
    freecad.closeDocument(doc.Name)


def _heights(doc):
    """Every solid's and marker's (z, axis x, axis y)."""
    return {o.Name: sfb.axial(o) for o in doc.Objects
            if o.TypeId in ("Part::Feature", "Part::FeaturePython") and hasattr(o, "Placement")}


def test_the_preview_keeps_every_part_on_its_layer(freecad, four_bar):
    from MultibodyWB.document.preview import KinematicPreview
    doc, mech, parts, bodies, hinges = four_bar
    before = _heights(doc)
    assert before["Coupler"][0] == pytest.approx(20.0) and before["Crank"][0] == 10.0
    placements = {o.Name: o.Placement for o in doc.Objects if hasattr(o, "Placement")}
    p = KinematicPreview(mech)
    assert [(h.Label, c) for h, c in p.free_coordinates()] == [("CrankPivot", "rz")]
    assert p.drawing_gaps() == []
    crank = hinges["CrankPivot"]
    drawn = p.value(crank, "rz")
    for angle in (drawn + 30.0, drawn - 75.0, drawn + 180.0):
        assert p.set(crank, "rz", angle) is None
        assert p.residual() < 1e-10
        assert parts["Crank"].Placement.Rotation.Angle != pytest.approx(0.0)
        after = _heights(doc)
        assert set(after) == set(before)
        for name, (z, ax, ay) in after.items():
            z0, ax0, ay0 = before[name]
            assert abs(z - z0) < 1e-9 and abs(ax - ax0) < 1e-12 and abs(ay - ay0) < 1e-12, \
                (name, angle, z - z0)
    p.restore()
    assert {o.Name: o.Placement for o in doc.Objects if hasattr(o, "Placement")} == placements


def test_the_preview_and_the_run_agree_on_the_start(freecad, four_bar):
    """A typed crank angle: the preview's poses are the run's start poses (the solver's start
    from the same model), parts on their layers."""
    from MultibodyWB.document.preview import KinematicPreview
    from MultibodyWB.objects import export
    from MultibodyWB.solver.analysis.start import resolve, start_report
    doc, mech, parts, bodies, hinges = four_bar
    crank = hinges["CrankPivot"]
    p = KinematicPreview(mech)
    target = p.value(crank, "rz") + 40.0
    assert p.set(crank, "rz", target) is None
    shown = p.poses()
    p.restore()
    crank.InitialAsDrawn = False
    crank.InitialRz = freecad.Units.Quantity(f"{target!r} deg")
    doc.recompute()
    report = start_report(*resolve(export.to_model(mech)))
    for body in (bodies[n].Label for n in ("Crank", "Coupler", "Rocker")):
        assert np.allclose(report.poses[body].p, shown[body].p, atol=1e-10), body
        assert np.allclose(report.poses[body].R, shown[body].R, atol=1e-10), body


def test_a_layer_pushed_into_the_next_is_no_excused_overlap(freecad, four_bar):
    from MultibodyWB.document import interference
    doc, mech, parts, bodies, hinges = four_bar
    found = interference.check(mech)
    assert found.overlaps == [] and found.failures == []
    # the coupler pulled 10 mm down the pins, into the crank's and rocker's layer
    parts["Coupler"].Placement.Base.z -= sfb.THICK
    doc.recompute()
    found = interference.check(mech)
    pairs = {frozenset((o.first.Name, o.second.Name)): o for o in found.overlaps}
    assert set(pairs) == {frozenset(("CouplerBody", "CrankBody")),
                          frozenset(("CouplerBody", "RockerBody"))}
    for o in pairs.values():
        assert o.hinged                          # a hinge joins them ...
        assert not o.excused                     # ... but the layers overlap: no excuse
        assert o.depth == pytest.approx(sfb.THICK, rel=1e-6)
        assert "layers overlap" in o.text() or "not at the pin" in o.text()
    assert "(hinged)" not in found.headline() and "hinged" not in found.headline()
    warned = {frozenset((o.first.Name, o.second.Name))
              for o in interference.unjoined_overlaps(mech).overlaps}
    assert warned == set(pairs)


@pytest.fixture(scope="module")
def motor_run(freecad):
    from MultibodyWB.document import runs
    doc = freecad.newDocument("StackedRun")
    mech, parts, bodies, hinges = sfb.build(freecad, doc, motor_rpm=60.0)
    result = runs.simulate_mechanism(mech, t_end=0.5, output_step=0.05)
    yield doc, mech, parts, bodies, result
    freecad.closeDocument(doc.Name)


@pytest.mark.parametrize("time", [0.0, 0.25, 0.5])
def test_the_fem_loads_of_the_stacked_coupler_balance(motor_run, time):
    from MultibodyWB.document import fem_loads
    doc, mech, parts, bodies, result = motor_run
    inst = fem_loads.instant(result, bodies["Coupler"], time=time)
    rf, rm = inst.loads.residual()
    assert rf < 1e-6 and rm < 1e-6, (rf, rm)
    rf, rm = inst.drawn.residual()
    assert rf < 1e-6 and rm < 1e-6, (rf, rm)
    assert not any("The loads sum to" in n for n in inst.loads.notes)      # no imbalance note
    # each pin's load at the coupler's own marker, mid-bore on its layer (z 25 mm), on its bore
    hinge = {ld.name: ld for ld in inst.drawn.of_kind("hinge")}
    assert set(hinge) == {"CrankPin", "RockerPin"}
    for ld in hinge.values():
        assert ld.point[2] * 1000.0 == pytest.approx(2.5 * sfb.THICK, abs=1e-9)
    places = fem_loads.place(inst)
    P = sfb.pins()
    assert {p.load.name: p.face for p in places} == {
        "CrankPin": sfb.bore_face(parts["Coupler"], P["A"]),
        "RockerPin": sfb.bore_face(parts["Coupler"], P["B"])}


def test_radial_extent_of_shells_and_solids(freecad):
    """What tells a pin in its bore from parts overlapping: a ring 5..5.1 mm about its axis is
    a thin shell; a solid cylinder about its axis and a solid ball about its centre reach it
    (smallest distance 0: no shell, no excuse)."""
    import Part
    from MultibodyWB.document import interference
    V = freecad.Vector
    ring = Part.makeCylinder(5.1, 10).cut(Part.makeCylinder(5, 10)).Solids[0]
    r_min, r_max = interference.radial_extent(ring, V(0, 0, 5), V(0, 0, 1))
    assert (r_min, r_max) == (pytest.approx(5.0), pytest.approx(5.1))
    rod = Part.makeCylinder(5, 10).Solids[0]
    assert interference.radial_extent(rod, V(0, 0, 5), V(0, 0, 1)) == (0.0, pytest.approx(5.0))
    ball = Part.makeSphere(5).Solids[0]
    assert interference.radial_extent(ball, V(0, 0, 0)) == (0.0, pytest.approx(5.0))
    shell = Part.makeSphere(5.1).cut(Part.makeSphere(5)).Solids[0]
    r_min, r_max = interference.radial_extent(shell, V(0, 0, 0))
    assert r_min == pytest.approx(5.0) and r_max == pytest.approx(5.1)
