"""Closed loops in the global constrained formulation, integrated in time (``method='constrained'``).

Cut hinges enter as constraint rows with Lagrange multipliers; redundant rows (a planar four-bar of
revolute hinges in 3D) are detected and the reactions they leave undetermined reported; the initial
state is assembled (:mod:`~MultibodyWB.solver.analysis.assembly`); the loops are kept closed by coordinate
partitioning (:mod:`~MultibodyWB.solver.methods.constrained.partition`, seed 003); singular configurations are reported.

Checks: the mstmm loop solver (Riccati sweeps, cut loads) gives the same accelerations and reactions
at consistent states of random loop models with every cut hinge type; the acceleration-level loop
condition holds along the motion (finite differences); Newton's law for single bodies from the
reported reactions; energy is conserved without dissipation and its change equals the work of the
driver and the gas force otherwise; tree models give the mstmm method's results.
"""

import functools

import numpy as np
import pytest

from MultibodyWB import examples
from MultibodyWB.examples import crank_slider
from MultibodyWB.examples.parts import add_link, frame_along, orientation_in
from MultibodyWB.solver.methods.constrained import formulation as C
from MultibodyWB.solver.analysis.assembly import (AssemblyReport, assemble, coordinates_from_state,
                                         state_from_coordinates)
from MultibodyWB.solver.methods.constrained.run import initial_state
from MultibodyWB.solver.analysis.kinematics import (coordinate_labels, drawn_poses,
                                                    forward_kinematics, loop_jacobian,
                                                    loop_residual, mobility, relative_pose)
from MultibodyWB.solver.model import Driver, ModelError, MultibodySystem
from MultibodyWB.solver.methods.constrained.partition import DriftControl
from MultibodyWB.solver.methods.mstmm.system import System
from MultibodyWB.solver.maths.rotations import bryant_to_matrix, matrix_to_bryant
from MultibodyWB.solver.run.simulate import simulate
from MultibodyWB.solver.analysis.start import StartCorrectionError
from MultibodyWB.solver.model.timefunction import parse

from randmodels import random_coordinates, random_state, random_tree

FOUR_BAR_REDUNDANT = ("RockerPivot: rotation about x", "RockerPivot: rotation about y",
                      "RockerPivot: translation along z")


def close(a, b, tol=1e-9):
    """Largest difference relative to the larger magnitude (at least 1)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    scale = max(np.max(np.abs(a), initial=0.0), np.max(np.abs(b), initial=0.0), 1.0)
    return np.max(np.abs(a - b), initial=0.0) <= tol * scale


# --------------------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------------------

AXIS = np.array([0.0, 1.0, 0.0])


def linkage(ground, crank, coupler, rocker, theta, drive=None, gravity=(0.0, 0.0, -9.81)):
    """A planar four-bar of revolute hinges (axes along global y), drawn at crank angle ``theta``
    (rad, from +x toward +z), the coupler-rocker pin B on the upper branch. ``drive``: an
    expression for the crank hinge's angle. The rocker's ground pivot is the cut hinge."""
    m = MultibodySystem("Linkage", gravity=gravity)
    O, D = np.zeros(3), np.array([ground, 0.0, 0.0])
    A = crank * np.array([np.cos(theta), 0.0, np.sin(theta)])
    AD = D - A
    d = np.linalg.norm(AD)
    a = (coupler ** 2 - rocker ** 2 + d ** 2) / (2 * d)
    u = AD / d
    n = np.cross(AXIS, u)
    n = -n if n[2] < 0 else n
    B = A + a * u + np.sqrt(max(coupler ** 2 - a ** 2, 0.0)) * n
    cr, c1, c2 = add_link(m, "Crank", O, A, 0.02, 0.01)
    co, k1, k2 = add_link(m, "Coupler", A, B, 0.02, 0.01)
    ro, r1, r2 = add_link(m, "Rocker", D, B, 0.02, 0.01)
    g = m.set_ground()
    go = g.add_marker(O, matrix_to_bryant(frame_along(A - O, AXIS)))
    gd = g.add_marker(D, matrix_to_bryant(frame_along(B - D, AXIS)))
    co.marker(2).frame.orientation = orientation_in(co, frame_along(B - D, AXIS))
    co.marker(1).frame.orientation = orientation_in(co, frame_along(A - O, AXIS))
    m.add_hinge("CrankPivot", "revolute", c1, go,
                drivers=[Driver("rz", drive)] if drive else [])
    m.add_hinge("CrankPin", "revolute", k1, c2)
    m.add_hinge("RockerPin", "revolute", k2, r2)
    m.add_hinge("RockerPivot", "revolute", r1, gd)
    return m.check()


CLOSING_TYPES = ("fixed", "revolute", "prismatic", "cylindrical", "universal", "spherical",
                 "planar")


def random_loop_model(seed):
    """A random tree (every hinge type but free and bushing, no springs on hinges, no drivers)
    closed by one more hinge of a random type between two random parts, placed so that the
    drawn configuration satisfies it: the loop is assembled as drawn, the tree's random initial
    rates are not consistent with it (estimates: the assembly makes them so, the cut hinge's
    included, whichever hinge the topology cuts)."""
    rng = np.random.default_rng(seed)
    types = ("revolute", "prismatic", "cylindrical", "universal", "spherical", "planar",
             "fixed")
    m = random_tree(rng, int(rng.integers(2, 7)), types, springs=False, dampers=False,
                    drivers=0.0)
    typ = CLOSING_TYPES[seed % len(CLOSING_TYPES)]
    poses = drawn_poses(m)
    parts = ["Ground"] + [b.name for b in m.bodies]
    a = str(rng.choice(parts[1:]))
    b = str(rng.choice([p for p in parts if p != a]))
    pa, aa = rng.uniform(-0.4, 0.4, size=3), matrix_to_bryant(bryant_to_matrix(
        rng.uniform(-3, 3, size=3)))
    out = m.part(a).add_marker(pa, aa)
    Ra, p_a = poses[a]
    Ro, po = Ra @ bryant_to_matrix(aa), p_a + Ra @ pa
    Rrel, d = relative_pose(typ, random_coordinates(rng, typ, 0.3))
    Ri, pi = Ro @ Rrel, po + Ro @ d
    Rb, p_b = poses[b]
    inp = m.part(b).add_marker(Rb.T @ (pi - p_b), matrix_to_bryant(Rb.T @ Ri))
    m.add_hinge("Closing", typ, inp, out)
    for h in m.hinges:
        h.initial_rates_estimate = h.initial_rates is not None
    return m.check()


@functools.lru_cache(maxsize=None)
def loop_case(seed):
    m = random_loop_model(seed)
    system = System(m)  # the mstmm evaluation to compare with
    y, report = initial_state(system)
    return m, system, y, report


# --------------------------------------------------------------------------------------------------
# Redundancy
# --------------------------------------------------------------------------------------------------

def test_four_bar_redundant_constraints_are_detected_and_named():
    m = examples.build("four_bar", crank_rate=3.0)
    mob = mobility(m)
    assert mob.redundant == 3 and set(mob.redundant_constraints) == set(FOUR_BAR_REDUNDANT)
    system = System(m)  # the mstmm evaluation to compare with
    y, report = initial_state(system)
    assert set(report.redundant) == set(FOUR_BAR_REDUNDANT)
    assert report.dof == 1 and report.rank == 2
    res = C.accelerations(system, 0.0, y)
    # the dynamics rows: 3 tree hinges x 6 + 5 cut rows, rank 20; the dependent ones named
    assert res.rows == 23 and res.rank == 20 and res.loop_rank == 2
    assert set(res.redundant) == set(FOUR_BAR_REDUNDANT)
    assert set(res.indeterminate) == {"CrankPivot", "CrankPin", "RockerPin", "RockerPivot"}
    # minimum norm: the cut hinge takes none of the out-of-plane (indeterminate) load
    R_A = m.part("Ground").marker_global(2)[1]
    W = res.cut_reaction_on_input[0]
    torque, force = R_A.T @ W[:3], R_A.T @ W[3:]
    assert abs(torque[0]) < 1e-9 and abs(torque[1]) < 1e-9 and abs(force[2]) < 1e-9
    assert np.linalg.norm(force[:2]) > 0.1                    # it does carry the in-plane load
    # the motion is determinate: the mstmm loop solver's accelerations and (same minimum-norm
    # definition) reactions
    inst = system.instant(0.0, y)
    assert close(res.udot, inst.udot) and close(res.Wh, inst.Wh)
    assert close(res.cut_reaction_on_input, inst.Wcut)


def test_planar_crank_slider_is_redundant_spatial_one_is_not():
    for variant, n_red in (("planar", 3), ("spatial", 0)):     # Gruebler -2 and 1 (dof 1)
        m = examples.build("crank_slider", variant=variant)
        system = C.tree_system(m)
        y, report = initial_state(system)
        res = C.accelerations(system, 0.0, y)
        assert len(res.redundant) == n_red == len(report.redundant), variant
        assert (len(res.indeterminate) > 0) == bool(n_red)


# --------------------------------------------------------------------------------------------------
# Against the mstmm loop solver and finite differences, on random loops
# --------------------------------------------------------------------------------------------------

SEEDS = range(21)          # every closing type three times


@pytest.mark.parametrize("seed", SEEDS)
def test_random_loops_agree_with_the_mstmm_loop_solver(seed):
    m, system, y, report = loop_case(seed)
    assert report.residual < 1e-12 and report.rate_residual < 1e-10
    for t in (0.0,):
        res = C.accelerations(system, t, y)
        inst = system.instant(t, y)
        assert np.max(np.abs(res.closure), initial=0.0) < 1e-12
        assert np.max(np.abs(res.closure_rate), initial=0.0) < 1e-9
        assert res.loop_rank == inst.loop_rank
        assert close(res.udot, inst.udot), "udot"
        assert close(res.x, inst.x), "x"
        assert close(res.Wh, inst.Wh), "Wh"
        assert close(res.cut_reaction_on_input, inst.Wcut), "Wcut"
        assert close(res.hinge_loads, inst.tau), "tau"
        assert close(C.derivative(system, t, y), res.ydot, tol=1e-13)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_loops_stay_closed_at_acceleration_level(seed):
    """Along ``dy/dt`` the velocity-level closure stays zero (the cut hinges' bias terms, the
    universal hinge's ``dS/dt`` among them) and the position-level closure's rate is the
    velocity-level one (the loop Jacobian is the residual's derivative)."""
    m, system, y, report = loop_case(seed)
    ydot = C.derivative(system, 0.0, y)
    eps = 1e-6
    plus = C.accelerations(system, eps, y + eps * ydot)
    minus = C.accelerations(system, -eps, y - eps * ydot)
    here = C.accelerations(system, 0.0, y)
    scale = 1.0 + np.max(np.abs(y), initial=0.0)
    rate_of_rate = (plus.closure_rate - minus.closure_rate) / (2 * eps)
    assert np.max(np.abs(rate_of_rate), initial=0.0) < 1e-5 * scale ** 2
    rate = (plus.closure - minus.closure) / (2 * eps)
    assert np.max(np.abs(rate - here.closure_rate), initial=0.0) < 1e-6 * scale


def test_state_and_coordinates_convert_both_ways():
    rng = np.random.default_rng(3)
    m = random_tree(rng, 12, drivers=0.0)
    system = C.tree_system(m)
    y = random_state(rng, system)
    q, qd = coordinates_from_state(system, y)
    back = state_from_coordinates(system, q, qd)
    T = system.tree
    for i in T.quat:                          # a quaternion and its negative are one rotation
        if back[i:i + 4] @ y[i:i + 4] < 0:
            back[i:i + 4] *= -1
    assert close(back, y, tol=1e-12)


# --------------------------------------------------------------------------------------------------
# Assembly of the initial state
# --------------------------------------------------------------------------------------------------

def test_inconsistent_crank_slider_is_assembled_and_the_corrections_reported():
    m = examples.build("crank_slider")
    m.hinge("WristPin").initial_coordinates = np.array([0.05, -0.1])
    m.hinge("Cylinder").initial_coordinates = np.array([0.17])
    m.hinge("Cylinder").initial_rates = np.array([1.0])
    topo = C.tree_system(m).topology
    q, qd, report = assemble(m)
    assert isinstance(report, AssemblyReport)
    assert set(report.corrections) == {"WristPin.rx", "WristPin.ry", "Cylinder.z"}
    assert report.driven == ("MainBearing.rz",)
    assert report.corrections["WristPin.rx"][0] == 0.05
    labels = coordinate_labels(m, topo)
    assert q[labels.index("MainBearing.rz")] == 0.0                       # held (driver at t=0)
    assert qd[labels.index("MainBearing.rz")] == pytest.approx(3000 * 2 * np.pi / 60)
    assert report.residual_given > 1e-3 and report.residual < 1e-12
    # the assembled coordinates close the loop, the rates are consistent with it
    poses = forward_kinematics(m, topo, q)
    assert np.max(np.abs(loop_residual(m, topo, poses))) < 1e-12
    J, _ = loop_jacobian(m, topo, q, poses)
    assert np.max(np.abs(J @ qd)) < 1e-10 * np.max(np.abs(qd))
    # the piston is where the crank angle puts it: the drawing's configuration
    assert q[labels.index("Cylinder.z")] == pytest.approx(
        crank_slider.positions(np.radians(60.0))[1][2], abs=1e-12)
    text = str(report)
    for what in ("WristPin.rx", "WristPin.ry", "Cylinder.z", "held fixed (driven): MainBearing.rz",
                 "'BigEnd'", "rates corrected"):
        assert what in text, what
    assert report.inconsistent
    # the run starts from the assembled state and says so
    with pytest.raises(StartCorrectionError, match="WristPin"):      # not without the user's OK
        simulate(m, method="constrained", t_end=2e-4, step=1e-5, output_step=1e-4)
    res = simulate(m, method="constrained", t_end=2e-4, step=1e-5, output_step=1e-4,
                   accept_corrections=True)
    assert "WristPin.rx" in res.meta["assembly"]
    assert any("violated the loop constraints" in w for w in res.meta["warnings"])
    assert res["WristPin.rx"][0] == pytest.approx(0.0, abs=1e-12)
    assert np.max(res["BigEnd.closure_gap"]) < 1e-12


def test_given_rates_are_kept_when_the_others_can_take_the_correction():
    m = examples.build("four_bar", crank_rate=3.0)     # only the crank's rate is given
    q, qd, report = assemble(m)
    labels = report.labels
    assert qd[labels.index("CrankPivot.rz")] == 3.0
    assert set(report.rate_corrections) == {"CrankPin.rz", "RockerPin.rz"}
    assert not report.corrections and not report.inconsistent
    # all treated alike (plain minimum norm): the crank's rate changes too
    q, qd, report = assemble(m, given=())
    assert abs(qd[labels.index("CrankPivot.rz")] - 3.0) > 0.1
    assert report.rate_residual < 1e-12


def test_a_four_bar_that_cannot_close_names_its_loop():
    m = examples.build("four_bar")
    m.body("Coupler").marker(2).frame.position[0] = 0.02   # coupler 0.02 m
    m.body("Rocker").marker(2).frame.position[0] = 0.1     # rocker 0.1 m: 0.22 m < 0.3 m ground
    with pytest.raises(ModelError) as e:
        assemble(m)
    (p,) = e.value.problems
    assert p.element == "Hinge 'RockerPivot'" and p.field == "Loop"
    for what in ("cannot be assembled", "CrankPivot", "CrankPin", "RockerPin", "RockerPivot",
                 "Coupler", "translation along"):
        assert what in p.message, what
    with pytest.raises(ModelError) as e:
        simulate(m, method="constrained", t_end=0.01)
    assert "RockerPivot" in str(e.value)


def test_a_driven_crank_out_of_reach_names_its_loop():
    # the crank held at 180 deg (its hinge angle counts from the drawing at 60 deg, about +y):
    # the coupler (0.3 m) and the rocker (0.05 m) cannot span the 0.4 m left to the rocker pivot
    m = linkage(0.3, 0.1, 0.3, 0.05, np.radians(60.0), drive="-2*pi/3")
    assemble(linkage(0.3, 0.1, 0.3, 0.05, np.radians(60.0), drive="-pi/6"))   # 90 deg: fine
    with pytest.raises(ModelError) as e:
        assemble(m)
    assert "RockerPivot" in str(e.value) and "cannot be assembled" in str(e.value)


# --------------------------------------------------------------------------------------------------
# Time integration: loops closed, energy, reactions
# --------------------------------------------------------------------------------------------------

def test_four_bar_ten_seconds_closed_and_conservative():
    res = simulate(examples.build("four_bar"), method="constrained", integrator="DOP853",
                   t_end=10.0, step=1e-3, output_step=0.1)
    assert res.time[-1] == 10.0 and len(res) == 101
    assert np.max(res["RockerPivot.closure_gap"]) < 1e-8
    assert np.max(res["RockerPivot.closure_angle"]) < 1e-8
    assert np.max(res["RockerPivot.closure_gap_rate"]) < 1e-8
    closure = res.meta["loop_closure"]
    assert closure["max_gap"] < 1e-8 and closure["max_residual"] < 1e-8
    # it swings (released at rest under gravity), without losing energy
    assert np.ptp(res["CrankPivot.rz"]) > 1.0
    e = res["energy.total"]
    assert np.max(np.abs(e - e[0])) < 1e-7 * np.max(res["energy.kinetic"])
    # the redundancy is reported, with the reactions it leaves undetermined
    assert set(res.meta["redundant_constraints"]) == set(FOUR_BAR_REDUNDANT)
    assert set(res.meta["indeterminate_reactions"]) >= {"CrankPin", "RockerPivot"}
    text = res.summary()
    assert "3 redundant constraints" in text and "not unique" in text
    assert res.meta["singular_configurations"] == []


def test_four_bar_rk4_projects_after_every_step():
    res = simulate(examples.build("four_bar", crank_rate=3.0), method="constrained",
                   t_end=0.5, step=2e-3, output_step=0.01)
    closure = res.meta["loop_closure"]
    assert closure["max_drift_per_step"] > 1e-12          # the integrator does drift ...
    assert closure["max_residual"] < 1e-12                 # ... and is put back every step
    assert closure["max_rate_residual"] < 1e-12
    e = res["energy.total"]
    assert abs(e[-1] - e[0]) < 1e-6 * np.max(res["energy.kinetic"])
    assert res["CrankPivot.rz_rate"][0] == pytest.approx(3.0, rel=1e-12)   # given: kept


def test_crank_slider_ten_seconds_closed_and_conservative():
    m = examples.build("crank_slider", driven=False, gas=False, rpm=60.0)
    res = simulate(m, method="constrained", integrator="DOP853", t_end=10.0, step=1e-3,
                   output_step=0.1)
    assert np.max(res["BigEnd.closure_gap"]) < 1e-8
    assert np.max(res["BigEnd.closure_gap_rate"]) < 1e-8
    assert "BigEnd.closure_angle" in res                    # spherical: no blocked rotation
    assert np.max(res["BigEnd.closure_angle"]) == 0.0
    # the crank swings from 60 deg past bottom dead centre and back (gravity on the piston)
    assert np.ptp(res["MainBearing.rz"]) > np.pi
    e = res["energy.total"]
    assert np.max(np.abs(e - e[0])) < 1e-7 * np.max(res["energy.kinetic"])
    assert "redundant_constraints" not in res.meta


@functools.lru_cache(maxsize=None)
def engine_run():
    """Driven at 3000 rpm from 330 deg: through the firing pulse (peak at 375 deg)."""
    m = examples.build("crank_slider", theta0_deg=330.0)
    res = simulate(m, method="constrained", t_end=4e-3, step=2e-5, output_step=4e-5)
    return m, res


def test_engine_matches_the_mstmm_loop_solver_along_its_run():
    m, res = engine_run()
    system = System(m)  # the mstmm evaluation to compare with
    # the mstmm solver's Baumgarte term (w^2 = (0.05 / step)^2 = 2.5e7 1/s^2) turns the closure
    # residual left here (1e-13 m) into 1e-6 m/s^2: agreement to 1e-8 relative, not round-off
    for k in range(0, len(res), 20):
        t, y = res.time[k], res.states[k]
        ours, theirs = C.accelerations(system, t, y), system.instant(t, y)
        assert close(ours.udot, theirs.udot, 1e-8), t
        assert close(ours.Wh, theirs.Wh, 1e-8), t
        assert close(ours.cut_reaction_on_input, theirs.Wcut, 1e-8), t
    assert np.max(res["BigEnd.closure_gap"]) < 1e-12


def gas_force(m, res):
    """The gas force on the piston crown (N, global): magnitude(t) along -z."""
    f = parse(m.forces[0].magnitude)
    out = np.zeros((len(res), 3))
    out[:, 2] = -np.array([f(t) for t in res.time])
    return out


def test_engine_reactions_satisfy_newtons_law_for_piston_and_rod():
    m, res = engine_run()
    g = np.asarray(m.gravity)
    gas = gas_force(m, res)
    assert np.max(np.abs(gas)) > 1e3                        # the pulse is in the window
    # piston: translates only, every point has the base origin's acceleration
    piston = m.body("Piston")
    lhs = piston.mass * res.vector("Piston.a")
    rhs = gas + piston.mass * g + res.vector("Cylinder.F") + res.vector("WristPin.F")
    assert np.max(np.abs(lhs - rhs)) < 1e-8 * np.max(np.abs(rhs))
    # the cylinder carries no force along its axis (no friction)
    assert np.max(np.abs(res["Cylinder.Fz"])) < 1e-8 * np.max(np.abs(rhs))
    # rod: the big end (cut hinge, input body Rod) and the wrist pin (its output body: -F)
    rod = m.body("Rod")
    R = res.rotation("Rod")
    w, alpha, a0 = res.vector("Rod.w"), res.vector("Rod.alpha"), res.vector("Rod.a")
    r = np.einsum("nij,j->ni", R, rod.mass_center.position)
    a_c = a0 + np.cross(alpha, r) + np.cross(w, np.cross(w, r))
    lhs = rod.mass * a_c
    rhs = rod.mass * g + res.vector("BigEnd.F") - res.vector("WristPin.F")
    assert np.max(np.abs(lhs - rhs)) < 1e-8 * np.max(np.abs(rhs))


def test_engine_energy_changes_by_the_work_of_driver_and_gas():
    m, res = engine_run()
    power = (res["MainBearing.rz_drive"] * res["MainBearing.rz_rate"]
             + gas_force(m, res)[:, 2] * res["Piston.vz"])   # the piston translates
    work = np.concatenate([[0.0], np.cumsum(0.5 * (power[1:] + power[:-1]) * np.diff(res.time))])
    e = res["energy.total"] - res["energy.total"][0]
    assert np.max(np.abs(e - work)) < 2e-3 * np.max(np.abs(work))


# --------------------------------------------------------------------------------------------------
# Trees: the same results as the mstmm method
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name,t_end", [("double_pendulum", 0.5), ("branched_tree", 0.1)])
def test_tree_models_give_the_mstmm_results(name, t_end):
    m = examples.build(name)
    a = simulate(m, method="mstmm", t_end=t_end, step=1e-3, output_step=1e-2)
    b = simulate(m, method="constrained", t_end=t_end, step=1e-3, output_step=1e-2)
    assert a.names == b.names
    assert close(a.data, b.data, tol=1e-9)
    assert "loop_closure" not in b.meta and b.meta["warnings"] == []


# --------------------------------------------------------------------------------------------------
# Coordinate partitioning, singular configurations
# --------------------------------------------------------------------------------------------------

def test_an_ill_conditioned_partition_is_chosen_afresh():
    """A free crank-slider started with the piston's stroke as independent coordinate: it cannot
    describe the motion near the dead centres, and the crank angle takes over before one."""
    m = examples.build("crank_slider", driven=False, gas=False, rpm=60.0)
    system = C.tree_system(m)
    y, _ = initial_state(system)
    dc = DriftControl(system, independent=["Cylinder.z"])
    y = dc.project(0.0, y)
    h, t = 5e-3, 0.0
    for _ in range(100):
        k1 = C.derivative(system, t, y)
        k2 = C.derivative(system, t + h / 2, y + h / 2 * k1)
        k3 = C.derivative(system, t + h / 2, y + h / 2 * k2)
        k4 = C.derivative(system, t + h, y + h * k3)
        y = dc.project(t + h, y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4))
        t += h
    assert dc.repartitions[0] == (0.0, ("Cylinder.z",))
    assert len(dc.repartitions) >= 2 and dc.repartitions[1][1] == ("MainBearing.rz",)
    assert dc.max_residual < 1e-12 and not dc.singularities
    with pytest.raises(ValueError):
        DriftControl(system, independent=["Cylinder.x"]).project(0.0, y)


def test_parallelogram_change_points_are_reported_with_their_time():
    """A driven parallelogram linkage passes its flat configurations (crank along the ground
    line, hinge angle 60 and 240 deg from the drawing) where the loop Jacobian loses rank; it
    stays a parallelogram through them."""
    m = linkage(0.3, 0.1, 0.3, 0.1, np.radians(60.0), drive="2*pi*t")
    res = simulate(m, method="constrained", t_end=1.0, step=5e-3, output_step=1e-2)
    found = res.meta["singular_configurations"]
    assert [s["kind"] for s in found] == ["change point", "change point"]
    assert found[0]["time"] == pytest.approx(1 / 6, abs=2e-3)
    assert found[1]["time"] == pytest.approx(2 / 3, abs=2e-3)
    assert sum("change point" in w for w in res.meta["warnings"]) == 2
    assert np.allclose(res["RockerPivot.rz"], res["CrankPivot.rz"], atol=1e-9)
    assert res.meta["loop_closure"]["max_gap"] < 1e-12


def test_steam_engine_dead_centre_is_reported_and_passed():
    """The piston drives the crank (prescribed stroke through top dead centre at t0): with the
    piston held the crank-slider's loop Jacobian loses rank there (a toggle position); the crank
    carries on through it."""
    r, l, w, t0 = crank_slider.CRANK_RADIUS, crank_slider.ROD_LENGTH, 10.0, 0.05
    k = 0.5 * r * (1 + r / l) * w ** 2
    m = examples.build("crank_slider", driven=False, gas=False, theta0_deg=-np.degrees(w * t0))
    m.hinge("MainBearing").initial_rates = None
    m.hinge("Cylinder").drivers = [Driver("z", f"{r + l!r} - {k!r}*(t - {t0!r})**2")]
    res = simulate(m, method="constrained", t_end=0.1, step=2e-3, output_step=1e-2,
                   accept_corrections=True)        # the driver starts the piston at dead centre
    (s,) = res.meta["singular_configurations"]
    assert s["kind"] == "dead centre" and s["time"] == pytest.approx(t0, abs=2e-3)
    assert any("dead centre" in x for x in res.meta["warnings"])
    crank = res["MainBearing.rz"]
    assert np.all(np.diff(crank) > 0.05) and crank[-1] == pytest.approx(2 * crank[5], rel=0.05)
    assert np.max(res["BigEnd.closure_gap"]) < 1e-12
