"""Springs and dampers on the hinge that closes a loop (the cut hinge), in every method.

A cut hinge's ``Stiffness`` and ``Damping`` act through :mod:`...elements.forces.cut_spring`:
its coordinates and rates measured from its two markers, the generalised loads of a tree hinge
applied as a wrench pair at its markers. The cross-check: the same mechanism with the loop cut
at another hinge (so that the spring sits on a tree hinge, where the formulations load the
hinge's own coordinate) moves the same. The topology cuts, among the hinges of a loop with the
fewest constraints, the one latest in the model: reordering the model's hinges moves the cut.
"""

import numpy as np
import pytest

from MultibodyWB.examples import build
from MultibodyWB.solver import cli
from MultibodyWB.solver.analysis.topology import analyse
from MultibodyWB.solver.elements.forces import cut_spring
from MultibodyWB.solver.model import xmlio
from MultibodyWB.solver.results import instant_loads as il
from MultibodyWB.solver.run.simulate import simulate


def four_bar(stiffness=0.0, damping=0.0, reference=0.25, cut_at_the_spring=True):
    """The four-bar from rest under gravity, a torsion spring and damper on the rocker's ground
    pivot. ``cut_at_the_spring``: the loop is cut at that pivot (the model's order), else at
    the coupler-rocker pin (the pivot moved first in the model's list)."""
    m = build("four_bar")
    h = m.hinge("RockerPivot")
    h.stiffness = np.array([stiffness])
    h.damping = np.array([damping])
    h.spring_reference = np.array([reference])
    if not cut_at_the_spring:
        m.hinges.remove(h)
        m.hinges.insert(0, h)
    assert analyse(m).cut_hinges == (("RockerPivot",) if cut_at_the_spring else ("RockerPin",))
    return m


def crank_slider(stiffness=0.0, damping=0.0, cut_at_the_spring=True):
    """The planar crank-slider (four revolute-or-prismatic hinges) from rest under gravity, a
    spring and damper on the piston's prismatic hinge (relaxed 4 mm from where it is drawn).
    ``cut_at_the_spring``: the loop is cut there, else at the wrist pin."""
    m = build("crank_slider", variant="planar", driven=False, gas=False, rpm=0.0)
    h = m.hinge("Cylinder")
    h.stiffness = np.array([stiffness])
    h.damping = np.array([damping])
    h.spring_reference = np.array([0.16])
    if not cut_at_the_spring:
        m.hinges.remove(h)
        m.hinges.insert(0, h)
    assert analyse(m).cut_hinges == (("Cylinder",) if cut_at_the_spring else ("WristPin",))
    return m


def run(m, method="mstmm", t_end=1.0, step=2e-4, **kw):
    return simulate(m, method=method, integrator="rk4", t_end=t_end, step=step,
                    output_step=0.01, **kw)


def motion(r, bodies):
    return np.concatenate([r.column(f"{b}.{q}") for b in bodies for q in ("x", "y", "z", "a", "b", "c")])


# --------------------------------------------------------------------------------------------------
# (a) the same motion wherever the loop is cut
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["mstmm", "constrained"])
@pytest.mark.parametrize("stiffness, damping", [(4.0, 0.0), (0.0, 0.08), (4.0, 0.08)])
def test_four_bar_pivot_spring_moves_the_same_wherever_the_loop_is_cut(method, stiffness,
                                                                      damping):
    bodies = ("Crank", "Coupler", "Rocker")
    t_end = 1.0 if method == "mstmm" else 0.3      # (constrained: integrated in Python)
    cut = run(four_bar(stiffness, damping, cut_at_the_spring=True), method, t_end)
    tree = run(four_bar(stiffness, damping, cut_at_the_spring=False), method, t_end)
    free = run(four_bar(), method, t_end)
    a, b, c = motion(cut, bodies), motion(tree, bodies), motion(free, bodies)
    assert np.abs(b - c).max() > 1e-4             # the spring or damper changes the motion
    assert np.abs(a - b).max() < 1e-8, np.abs(a - b).max()   # RK4 in other coordinates
    # the pivot's angle as the results give it, cut or not
    assert np.abs(cut.column("RockerPivot.rz") - tree.column("RockerPivot.rz")).max() < 1e-8
    for q in ("elastic", "total", "dissipated"):
        ea, eb = cut.column(f"energy.{q}"), tree.column(f"energy.{q}")
        assert np.abs(ea - eb).max() < 1e-8 * max(np.abs(eb).max(), 1.0), q


@pytest.mark.parametrize("method", ["mstmm", "constrained"])
def test_crank_slider_piston_spring_moves_the_same_wherever_the_loop_is_cut(method):
    """A translation: the prismatic hinge's spring and damper along its axis."""
    bodies = ("Crank", "Rod", "Piston")
    t_end = 0.5 if method == "mstmm" else 0.2
    cut = run(crank_slider(800.0, 6.0, cut_at_the_spring=True), method, t_end)
    tree = run(crank_slider(800.0, 6.0, cut_at_the_spring=False), method, t_end)
    free = run(crank_slider(), method, t_end)
    a, b, c = motion(cut, bodies), motion(tree, bodies), motion(free, bodies)
    assert np.abs(b - c).max() > 1e-4
    assert np.abs(a - b).max() < 1e-8, np.abs(a - b).max()   # RK4 in other coordinates
    assert np.abs(cut.column("Cylinder.z") - tree.column("Cylinder.z")).max() < 1e-10
    assert np.abs(cut.column("energy.elastic") - tree.column("energy.elastic")).max() < 1e-8


def test_spherical_cut_spring_is_the_rotational_spring_damper_between_its_markers():
    """The spatial crank-slider's big end (spherical: always the cut) with an isotropic
    rotational spring and damper moves as with a rotational_spring_damper force element between
    the same markers, and the result columns' reactions balance every body (the big end's
    wrench on the rod carries the spring's torque, not twice)."""
    def model(on_hinge):
        m = build("crank_slider", driven=False, gas=False, rpm=0.0)
        h = m.hinge("BigEnd")
        if on_hinge:
            h.stiffness = np.full(3, 3.0)
            h.damping = np.full(3, 0.02)
        else:
            m.add_force("BigEndSpring", "rotational_spring_damper", h.input, h.output,
                        stiffness=3.0, damping=0.02)
        assert analyse(m).cut_hinges == ("BigEnd",)
        return m

    cut = run(model(True), t_end=0.5)
    force = run(model(False), t_end=0.5)
    bodies = ("Crank", "Rod", "Piston")
    free = build("crank_slider", driven=False, gas=False, rpm=0.0)
    assert np.abs(motion(cut, bodies) - motion(run(free, t_end=0.5), bodies)).max() > 1e-3
    assert np.abs(motion(cut, bodies) - motion(force, bodies)).max() < 1e-11
    assert (np.abs(cut.column("energy.elastic") - force.column("energy.elastic")).max()
            < 1e-12)
    def torque(r):
        return np.abs([r.column(f"BigEnd.T{c}") for c in "xyz"]).max()
    assert torque(cut) > 1e-2                     # the spring's and damper's torque is there
    assert torque(force) < 1e-9                   # (a spherical hinge holds no torque)
    m = model(True)
    for body in bodies:
        for row in (10, 30, len(cut) - 1):
            fr, mr = il.loads_at(m, cut, body, row).residual()
            assert fr < 1e-9 and mr < 1e-9, (body, row, fr, mr)


# --------------------------------------------------------------------------------------------------
# (b) every method
# --------------------------------------------------------------------------------------------------

def test_every_method_runs_a_spring_on_the_cut_hinge_and_they_agree():
    m = four_bar(4.0, 0.08)
    runs = {meth: run(m, meth, t_end=0.5, step=2e-4 if meth != "newton-euler" else 1e-5)
            for meth in ("mstmm", "constrained", "newton-euler")}
    free = run(four_bar(), "mstmm", t_end=0.5)
    ref = runs["mstmm"].column("Rocker.c")
    assert np.abs(ref - free.column("Rocker.c")).max() > 1e-2
    assert np.abs(runs["constrained"].column("Rocker.c") - ref).max() < 1e-9
    # penalty joints: the hinges give a little
    assert np.abs(runs["newton-euler"].column("Rocker.c") - ref).max() < 2e-4
    for meth, r in runs.items():
        assert r.meta["loop_closure"]["max_residual"] < 1e-5, meth


# --------------------------------------------------------------------------------------------------
# (c) the energy balance
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["mstmm", "constrained", "newton-euler"])
@pytest.mark.parametrize("stiffness, damping", [(4.0, 0.0), (4.0, 0.08)])
def test_energy_balance_of_a_cut_hinge_spring_and_damper(method, stiffness, damping):
    step = 1e-5 if method == "newton-euler" else 2e-4
    r = run(four_bar(stiffness, damping), method, t_end=0.5, step=step)
    elastic = r.column("energy.elastic")
    assert np.ptp(elastic) > 1e-3                          # the spring stores energy
    dissipated = r.column("energy.dissipated")[-1]
    if damping:
        # the damper's dissipation is counted: without it the balance would miss all of it
        assert dissipated > 1e-3
    else:
        assert dissipated == 0.0 or method == "newton-euler"
    residual = np.abs(r.column("energy.residual")).max()
    if method == "newton-euler":
        # penalty joints: as with the spring and damper on a tree hinge (the same numbers:
        # newton-euler does not tell them apart), a residual that does not fall with the step
        assert residual < 5e-3 * max(dissipated, np.ptp(elastic)), (residual, dissipated)
    else:
        assert residual < 1e-8 * max(dissipated, np.ptp(elastic)), (residual, dissipated)


# --------------------------------------------------------------------------------------------------
# (d) check and run agree; the hinge that closes the loop is named
# --------------------------------------------------------------------------------------------------

def test_check_and_run_agree_on_a_spring_on_the_cut_hinge(tmp_path, capsys):
    path = tmp_path / "four_bar_spring.xml"
    m = four_bar(4.0, 0.08)
    m.simulation.end_time = 0.05
    m.simulation.step = 1e-3
    xmlio.write(m, str(path))
    assert cli.main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "RockerPivot" in out and "closes loop 1" in out, out
    out_csv = tmp_path / "out.csv"
    assert cli.main(["run", str(path), "-o", str(out_csv)]) == 0, capsys.readouterr().err
    r = simulate(m)
    assert r.meta["loop_closure"]["cut_hinges"] == ["RockerPivot"]


# --------------------------------------------------------------------------------------------------
# every type of cut hinge: the formulations agree at an instant; the universal's energy
# --------------------------------------------------------------------------------------------------

def _cardan(stiffness=(0.0, 0.0), damping=(0.0, 0.0)):
    """Two shafts joined by a Hooke joint at 30 deg (``test_loops._cardan_loop``): the
    universal hinge 'Cross' closes the loop, both its angles rock by about +-30 deg; a spring
    on each angle, relaxed off the drawing."""
    from test_loops import _cardan_loop
    m = _cardan_loop()
    h = m.hinge("Cross")
    h.stiffness, h.damping = np.array(stiffness), np.array(damping)
    h.spring_reference = np.array([0.1, -0.2])
    assert analyse(m).cut_hinges == ("Cross",)
    return m


def _spatial_crank_slider():
    """The big end (spherical, the cut) with a spring of three stiffnesses relaxed at a
    rotation off the drawing, and dampers."""
    m = build("crank_slider", driven=False, gas=False, rpm=0.0)
    h = m.hinge("BigEnd")
    h.stiffness, h.damping = np.array([2.0, 3.0, 5.0]), np.array([0.01, 0.02, 0.03])
    h.spring_reference = np.array([0.2, -0.1, 0.3])
    return m


INSTANT_CASES = {
    "revolute": lambda: four_bar(4.0, 0.08),
    "prismatic": lambda: crank_slider(800.0, 6.0),
    "spherical": _spatial_crank_slider,
    "universal": lambda: _cardan((0.3, 0.5), (0.01, 0.02)),
}


@pytest.mark.parametrize("case", sorted(INSTANT_CASES))
def test_the_formulations_agree_on_a_cut_hinge_spring_at_moving_states(case):
    """At states of a run: the Riccati kernel with its loop closure, the product form and the
    constrained method's saddle point give the same accelerations and the same wrench of the
    cut hinge on its input body (its spring and damper included), and that wrench differs from
    the constraint loads alone (the spring is in it)."""
    from MultibodyWB.solver.analysis.start import prepare
    from MultibodyWB.solver.methods.constrained.formulation import accelerations
    from MultibodyWB.solver.methods.mstmm import transfer
    from MultibodyWB.solver.methods.mstmm.system import System
    model, _ = prepare(INSTANT_CASES[case](), True)
    r = simulate(model, method="mstmm", t_end=0.2, step=1e-4, output_step=0.1,
                 accept_corrections=True)
    system = System(model)
    system.set_stabilisation(1e300)     # the saddle point has no Baumgarte terms
    for t, y in zip(r.time[1:], r.states[1:]):
        inst = system.instant(float(t), y)
        prod = transfer.solve(system, float(t), y)
        glob = accelerations(system, float(t), y)
        acc = max(np.abs(inst.udot).max(), 1.0)
        loads = max(np.abs(inst.Wcut).max(), np.abs(inst.Wh).max())
        assert np.abs(prod.udot - inst.udot).max() < 1e-9 * acc
        assert np.abs(glob.udot - inst.udot).max() < 1e-8 * acc
        assert np.abs(prod.Wcut - inst.Wcut).max() < 1e-9 * loads
        assert np.abs(glob.cut_reaction_on_input - inst.Wcut).max() < 1e-8 * loads
        spring = np.zeros_like(inst.Wcut)
        cut_spring.add_wrenches(system.forces.cut_spring, inst.R, inst.pb, inst.hp, inst.w,
                                inst.vh, spring)
        assert np.abs(spring).max() > 1e-3 * loads


def test_universal_cut_hinge_springs_keep_the_energy():
    """The Hooke joint's two angle springs (different stiffnesses, relaxed off the drawing):
    the loads act about the axes the angles turn about (the output marker's x, then Rx(rx) e_y),
    so that their work is the springs' energy: the balance closes to the integration error,
    with the spring's energy a large part of the motion's."""
    from MultibodyWB.solver.analysis.start import prepare
    model, _ = prepare(_cardan((0.3, 0.5)), True)
    r = simulate(model, method="mstmm", integrator="rk4", t_end=0.5, step=1e-4,
                 output_step=0.01, accept_corrections=True)
    free, _ = prepare(_cardan(), True)
    f = simulate(free, method="mstmm", integrator="rk4", t_end=0.5, step=1e-4,
                 output_step=0.01, accept_corrections=True)
    assert np.abs(r.column("Cross.ry") - f.column("Cross.ry")).max() > 1e-2
    elastic = np.ptp(r.column("energy.elastic"))
    assert elastic > 1e-2 * r.column("energy.kinetic").max()
    assert np.abs(r.column("energy.residual")).max() < 1e-9 * elastic


@pytest.mark.parametrize("method", ["mstmm", "constrained"])
def test_a_cut_hinge_spring_past_half_a_turn_is_warned_about(method):
    """The crank turns whole turns: with its pivot closing the loop (moved last in the model),
    a spring on that pivot acts within half a turn of its reference, which the run says, with
    the time and what to do; the rocker's pivot (a quarter turn at most) gets no warning."""
    m = build("four_bar", crank_rate=20.0)
    h = m.hinge("CrankPivot")
    h.stiffness = np.array([0.01])
    m.hinges.remove(h)
    m.hinges.append(h)
    assert analyse(m).cut_hinges == ("CrankPivot",)
    r = run(m, method, t_end=0.3, step=1e-4)
    assert np.ptp(r.column("CrankPivot.rz")) > np.pi
    said = [w for w in r.meta["warnings"] if "half a turn" in w]
    assert len(said) == 1 and said[0].startswith(
        "Hinge 'CrankPivot' closes a loop, and its spring's rz passed half a turn from its "
        "reference at t = "), said
    calm = run(four_bar(4.0, 0.08), method, t_end=0.3)
    assert not [w for w in calm.meta.get("warnings", []) if "half a turn" in w]
