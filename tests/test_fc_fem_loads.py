"""Motion loads into FEM, headless (document.fem_loads): the connecting rod of the crank-slider
engine built from solids, at the peak gas force: the loads collected are in equilibrium, the
analysis has one force constraint per bore face, CalculiX solves it, the support's reaction is
near zero and the shank's von Mises stress is the axial load over its section. Loads whose
markers are not on faces are refused, naming the load, the marker and the nearest faces."""

import shutil

import numpy as np
import pytest

pytestmark = pytest.mark.freecad

HAVE_SOLVER = bool(shutil.which("ccx") and shutil.which("gmsh"))


@pytest.fixture(scope="module")
def engine(freecad):
    from MultibodyWB.document import runs
    from MultibodyWB.examples_fc import crank_slider
    doc = freecad.newDocument("FemLoads")
    mech = crank_slider.setup(doc)
    # the gas force peaks at crank angle 375 deg: t = (375 - 60) / 360 / 50 = 17.5 ms
    result = runs.simulate_mechanism(mech, t_end=0.02)
    yield doc, mech, result
    freecad.closeDocument(doc.Name)


def _axis(inst):
    """Unit vector from the rod's big end to its small end (drawn, global) and the two pins."""
    hinge = {ld.name: ld for ld in inst.drawn.of_kind("hinge")}
    a, b = hinge["BigEnd"].point, hinge["WristPin"].point
    return (b - a) / np.linalg.norm(b - a), a, b


def test_rod_loads_at_peak_gas_force(engine):
    from MultibodyWB.document import fem_loads
    from MultibodyWB.examples import crank_slider as code
    doc, mech, result = engine
    rod = doc.getObject("Rod")
    inst = fem_loads.instant(result, rod, peak="GasForce.magnitude")
    assert inst.loads.time == pytest.approx(0.0175, abs=1e-9)
    assert [ld.name for ld in inst.loads.loads] == ["BigEnd", "WristPin", "gravity", "inertia"]
    # d'Alembert: the loads sum to zero force and moment, far within 0.5 % of the largest
    rf, rm = inst.loads.residual()
    assert rf < 0.005 and rm < 0.005
    assert rf < 1e-9 and rm < 1e-9
    # carried to the drawing: the pins where the rod's solids are (mm -> m)
    axis, a, b = _axis(inst)
    assert np.linalg.norm(b - a) == pytest.approx(code.ROD_LENGTH, rel=1e-9)
    big = doc.getObject("RodBigEnd").Placement.Base
    assert np.allclose(a * 1000.0, [big.x, big.y, big.z], atol=1e-6)


def test_analysis_objects(engine):
    from MultibodyWB.document import fem_loads
    doc, mech, result = engine
    rod = doc.getObject("Rod")
    inst = fem_loads.instant(result, rod, peak="GasForce.magnitude")
    places = fem_loads.place(inst)
    # the big end marker was picked on the web's bore, the small end one on the bush filling
    # the other bore: both land on the web's bores
    web = doc.getObject("RodWeb")
    assert [p.load.name for p in places] == ["BigEnd", "WristPin"]
    for p in places:
        assert not p.problem and p.face.startswith("Face")
        assert type(web.Shape.getElement(p.face).Surface).__name__ == "Cylinder"
    assert places[0].face != places[1].face
    an = fem_loads.make_analysis(inst)
    members = an.analysis.Group
    forces = [o for o in members if o.TypeId == "Fem::ConstraintForce"]
    # one force constraint per bore face, magnitude and direction from the run
    assert sorted(f.References[0][1][0] for f in forces) == sorted(p.face for p in places)
    for f in forces:
        face = f.References[0][1][0]
        load = an.applied[face]
        assert fem_loads.force_of(f) == pytest.approx(np.linalg.norm(load), rel=1e-9)
        d = f.DirectionVector
        assert np.allclose([d.x, d.y, d.z], load / np.linalg.norm(load), atol=1e-9)
    fixed = [o for o in members if o.TypeId == "Fem::ConstraintFixed"]
    assert len(fixed) == 1 and fixed[0].References[0][1][0] == an.fixed_face
    # the support on the bore with the largest load (the wrist pin: the piston's inertia too)
    assert fixed[0].Label == "Support WristPin"
    assert an.self_weight in members and an.mesh in members and an.solver in members
    # the self-weight is gravity minus the mass centre's acceleration (turned with the body to
    # its drawn pose, as every load)
    g = inst.drawn.rotation @ inst.loads.rotation.T @ np.array(inst.model.gravity)
    assert np.allclose(an.body_acceleration, g - inst.drawn.acceleration, atol=1e-9)
    assert any("rotational inertia" in n for n in an.notes)


@pytest.mark.skipif(not HAVE_SOLVER, reason="CalculiX (ccx) and Gmsh are not installed")
def test_calculix_solves_the_rod(engine, tmp_path):
    from MultibodyWB.document import fem_loads
    from MultibodyWB.examples_fc import crank_slider as fc
    doc, mech, result = engine
    rod = doc.getObject("Rod")
    inst = fem_loads.instant(result, rod, peak="GasForce.magnitude")
    an = fem_loads.make_analysis(inst, mesh_size=4.0)
    check = fem_loads.solve(an, str(tmp_path / "ccx"))
    assert check.nodes > 1000
    # the loads are in equilibrium: the support takes (almost) nothing beyond its own face's
    # load (what is left: FreeCAD spreading a face's force over the mesh's nodes)
    assert check.relative < 0.01, (check.reaction, check.largest)
    # FEM's own result object, in the analysis
    assert check.result in an.analysis.Group and len(check.result.vonMises) == check.nodes
    # the shank, away from the bores: axial load over the section
    axis, a, b = _axis(inst)
    nodes = an.mesh.FemMesh.Nodes
    vm = dict(zip(check.result.NodeNumbers, check.result.vonMises))
    length = np.linalg.norm(b - a) * 1000.0
    shank = [vm[n] for n, p in nodes.items()
             if 0.35 * length < (np.array([p.x, p.y, p.z]) - a * 1000.0) @ axis < 0.65 * length]
    assert len(shank) > 50
    area = fc.ROD["width"] * fc.ROD["thickness"]              # mm^2
    axial = abs(an.applied[an.fixed_face] @ axis)              # N, at the small end
    assert max(shank) == pytest.approx(axial / area, rel=0.2), (max(shank), axial / area)
    # the bores concentrate the stress: the peak is there, not in the shank
    assert check.max_von_mises > max(shank)


def test_several_instants_are_separate_analyses(engine):
    from MultibodyWB.document import fem_loads
    doc, mech, result = engine
    rod = doc.getObject("Rod")
    gas = fem_loads.make_analysis(fem_loads.instant(result, rod, peak="GasForce.magnitude"))
    acc = fem_loads.make_analysis(fem_loads.instant(result, rod, peak="Rod.inertia"))
    assert gas.analysis is not acc.analysis and gas.analysis.Label != acc.analysis.Label
    assert not set(gas.analysis.Group) & set(acc.analysis.Group)


def test_loads_that_cannot_be_placed(engine):
    from MultibodyWB.document import fem_loads
    from MultibodyWB.objects.marker import attach
    doc, mech, result = engine
    piston = doc.getObject("Piston")
    inst = fem_loads.instant(result, piston, peak="GasForce.magnitude")
    crown = doc.getObject("PistonCrown")
    body = doc.getObject("PistonBody")
    # the crown marker moved to a vertex, the slide marker to the base frame (nothing picked)
    saved = crown.PickedElement
    try:
        vertex = next(f"Vertex{i}" for i, v in enumerate(body.Shape.Vertexes, 1))
        attach(crown, body, vertex)
        doc.recompute()
        places = fem_loads.place(inst, body)
        gas = next(p for p in places if p.load.name == "GasForce")
        assert gas.face is None
        assert gas.problem.startswith(f"Force 'GasForce': its marker '{crown.Label}' is on ")
        assert f"vertex {vertex} of '{body.Label}'" in gas.problem
        assert len(gas.nearest) == 3 and gas.nearest[0][1] <= gas.nearest[1][1]
        assert gas.nearest[0][0] in gas.problem
        with pytest.raises(fem_loads.FemLoadsError, match="GasForce"):
            fem_loads.make_analysis(inst, solid=body)
        # the slide marker was picked on the crown's circular edge: not a face either
        slide = next(p for p in places if p.load.name == "Cylinder")
        assert f"circle {doc.getObject('PistonSlide').PickedElement.split('.')[1]}" in \
            slide.problem
        # picked on the whole solid: said so
        attach(crown, body, None)
        doc.recompute()
        gas = next(p for p in fem_loads.place(inst, body) if p.load.name == "GasForce")
        assert f"the whole solid '{body.Label}' (no face picked)" in gas.problem
        assert "nearest faces: Face" in gas.problem
        # faces chosen by hand for them: the analysis is made
        chosen = {p.load.name: p.nearest[0][0] for p in places if p.problem}
        an = fem_loads.make_analysis(inst, solid=body, faces=chosen)
        assert set(chosen.values()) <= set(an.applied)
    finally:                            # picked again where it was
        attach(crown, body, saved.partition(".")[2])
        doc.recompute()
        assert crown.PickedElement == saved


def test_ground_and_foreign_bodies_are_refused(engine):
    from MultibodyWB.document import fem_loads
    doc, mech, result = engine
    with pytest.raises(fem_loads.FemLoadsError, match="ground"):
        fem_loads.instant(result, doc.getObject("Ground"), time=0.01)
    with pytest.raises(fem_loads.FemLoadsError, match="RodWeb"):
        fem_loads.instant(result, doc.getObject("RodWeb"), time=0.01)
