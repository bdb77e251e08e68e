"""The example models: drawn assembled, and the topology each one must have."""

import numpy as np
import pytest

from MultibodyWB.examples import EXAMPLES, build
from MultibodyWB.solver.analysis.kinematics import hinge_residual, mobility
from MultibodyWB.solver.analysis.topology import analyse


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_drawn_configuration_satisfies_every_hinge(name):
    model = build(name)
    for h in model.hinges:
        np.testing.assert_allclose(hinge_residual(model, h), 0.0, atol=1e-12,
                                   err_msg=f"{name}: hinge {h.name} is not assembled as drawn")


def numbering_is_tip_to_root(topo):
    for el in topo.elements:
        if el.output not in (None, 0):
            assert el.id < el.output


# name, options: tips, branch bodies, loops (cut hinges), GK, mobility, redundant
CASES = {
    "seed_box": ({}, {"Box"}, set(), [], 3, 3, 0),
    "double_pendulum": ({}, {"Lower"}, set(), [], 2, 2, 0),
    "branched_tree": ({}, {"A2", "B2", "C1"}, {"Hub"}, [], 9, 9, 0),
    "four_bar": ({}, None, set(), ["RockerPivot"], -2, 1, 3),
    "crank_slider": ({}, None, set(), ["BigEnd"], 1, 1, 0),
    "crank_slider_planar": ({"variant": "planar"}, None, set(), None, -2, 1, 3),
    "chain": ({"n": 10}, {"Link10"}, set(), [], 10, 10, 0),
    "seed004": ({}, {"Slider"}, set(), [], 3, 3, 0),
    # three shafts, two gear couplers: one degree of freedom
    "gear_train": ({}, {"Pinion", "Idler", "Output"}, set(), [], 1, 1, 0),
    "cam_valve": ({}, {"Camshaft", "Valve"}, set(), [], 2, 2, 0),
    "bouncing_balls": ({}, {"Ball1", "Ball2", "Ball3", "Ball4"}, set(), [], 24, 24, 0),
    "tumbling_solids": ({}, {"Egg", "Cone", "Prism"}, set(), [], 18, 18, 0),
    # seven bodies, ten revolute hinges in a plane: three loops closed at E, each with three
    # redundant directions (out of the plane)
    "andrews_squeezer": ({}, {"K2", "K3", "K4", "K6"}, set(), ["E3", "E4", "E6"], -8, 1, 9),
    # a closed planar chain of 20 shoes (20 freedoms: 3 + 19 pins - 2 in the plane) held in
    # its plane by shoe 0's planar hinge, so that its closing pin has 3 redundant directions;
    # plus the sprocket (driven), the tensioner and the idler
    "track": ({}, {"Sprocket", "Idler", "Shoe19"}, set(), ["Pin20"], 20, 23, 3),
    # the hull in its plane (3) carrying the driven sprocket, the idler's hub and wheel, the
    # roller and three arms with their wheels (10), and the 36-shoe track as above (tree: 3 +
    # 35 pins; 36 freedoms in its plane, its closing pin 3 redundant directions): Gruebler
    # 13 + 38 - 5 = 46, mobility 13 + 36 = 49
    "tracked_vehicle": ({}, {"Sprocket", "Idler", "Roller", "RoadWheel0", "RoadWheel1",
                             "RoadWheel2", "Shoe35"}, {"Hull"}, ["Pin36"], 46, 49, 3),
    # IFToMM A05: the shaft carries the slider and the two rods; the spring-dampers in place of
    # the couplers are forces, not hinges: no loop
    "flyball_governor": ({}, {"Slider", "Rod1", "Rod2"}, {"Shaft"}, [], 4, 4, 0),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_topology_of_each_example(case):
    options, tips, branches, cuts, gk, dof, redundant = CASES[case]
    model = build(case.replace("_planar", ""), **options)
    topo = analyse(model)
    numbering_is_tip_to_root(topo)
    assert sorted(e.id for e in topo.elements) == list(range(1, len(topo.elements) + 1))
    assert len(topo.elements) == len(model.bodies) + len(model.hinges)
    if tips is not None:
        assert set(topo.tips) == tips
    assert set(topo.branch_bodies) == branches
    if cuts is not None:
        assert list(topo.cut_hinges) == cuts
        assert [loop.cut_hinge for loop in topo.loops] == cuts
    mob = mobility(model, topo)
    assert (topo.dof_gruebler, mob.dof, mob.redundant) == (gk, dof, redundant)


def test_crank_slider_loop_goes_through_the_ground():
    topo = analyse(build("crank_slider"))
    (loop,) = topo.loops
    assert loop.through_ground
    assert set(loop.bodies) == {"Ground", "Crank", "Rod", "Piston"}
    assert set(loop.hinges) == {"MainBearing", "WristPin", "Cylinder"}   # plus the cut BigEnd


def test_gas_force_peaks_once_per_power_stroke():
    from MultibodyWB.examples import crank_slider
    from MultibodyWB.solver.model.timefunction import parse
    model = build("crank_slider", rpm=3000.0)
    f = parse(model.forces[0].magnitude)
    t = np.linspace(0.0, 0.08, 8001)            # two revolutions at 3000 rpm
    values = np.array([f(x) for x in t])
    assert values.max() == pytest.approx(crank_slider.PEAK_GAS_FORCE, rel=1e-3)
    theta = np.degrees(np.radians(60.0) + 100 * np.pi * t[values.argmax()])
    assert theta % 720 == pytest.approx(crank_slider.PEAK_ANGLE_DEG, abs=0.1)
    assert values.min() >= 0.0 and np.mean(values > 0.01 * values.max()) < 0.2


def test_seed004_energy_gain_equals_the_moments_work():
    from MultibodyWB.examples import seed004
    from MultibodyWB.solver.run.simulate import simulate
    r = simulate(build("seed004"), t_end=1.0)
    gained = r.column("energy.total") - r.column("energy.total")[0]
    work = seed004.MOMENT * (r.column("J1.rz") - r.column("J1.rz")[0])
    np.testing.assert_allclose(gained, work, atol=1e-9)
    assert work[-1] > 0.01                      # the moment did turn the arm
    assert np.ptp(r.column("J3.z")) > 0.01     # the slider moved on its spring
