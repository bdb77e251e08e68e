"""Closed loops in the MSTMM solver: cut hinges with constraint loads (kernels.close_loops)."""

import numpy as np
import pytest

from MultibodyWB.examples import build
from MultibodyWB.solver.analysis.kinematics import mobility
from MultibodyWB.solver.model import HINGE_TYPES
from MultibodyWB.solver.run.simulate import simulate
from MultibodyWB.solver.methods.mstmm.system import System

LOOPS = {
    "four_bar": {},
    "crank_slider": dict(driven=False, gas=False, rpm=0.0),
    "crank_slider_planar": dict(variant="planar", driven=False, gas=False, rpm=0.0),
}


def model_of(case):
    return build(case.replace("_planar", ""), **LOOPS[case])


@pytest.mark.parametrize("case", sorted(LOOPS))
def test_ten_seconds_closed_and_conservative(case):
    """From rest under gravity: the loop stays closed and energy is conserved over 10 s."""
    model = model_of(case)
    model.simulation.end_time = 10.0
    model.simulation.step = 5e-4 if case == "four_bar" else 2.5e-4
    model.simulation.output_step = 0.01
    r = simulate(model)
    s = System(model)
    closure = max(np.abs(s.instant(t, y).phi).max() for t, y in zip(r.time, r.states))
    assert closure < 1e-8, f"loop-closure error {closure:.2e}"
    E = r.column("energy.total")
    moving = np.ptp(r.column("energy.kinetic"))
    assert moving > 0.1                          # the mechanism really moved
    assert np.abs(E - E[0]).max() < 3e-7 * moving


def test_energy_error_falls_with_the_step():
    errors = []
    for h in (1e-3, 5e-4, 2.5e-4):
        r = simulate(model_of("crank_slider"), t_end=2.0, step=h, output_step=0.01)
        E = r.column("energy.total")
        errors.append(np.abs(E - E[0]).max())
    assert errors[0] > 2 * errors[1] > 4 * errors[2], errors


@pytest.mark.parametrize("case, rank, constraints", [("four_bar", 2, 5), ("crank_slider", 3, 3),
                                                      ("crank_slider_planar", 2, 5)])
def test_constraint_rank_and_redundancy(case, rank, constraints):
    model = model_of(case)
    s = System(model)
    inst = s.instant(0.0, s.initial_state())
    assert s.tree.m_tot == constraints and inst.loop_rank == rank
    assert constraints - rank == mobility(model).redundant


@pytest.mark.parametrize("case", sorted(LOOPS))
def test_accelerations_keep_the_loop_closed_to_second_order(case):
    """q + u h + du h^2/2 leaves the loop open by O(h^3) only (the accelerations satisfy the loop)."""
    model = model_of(case)
    rng = np.random.default_rng(5)
    r = simulate(model, t_end=0.3, step=1e-4, output_step=0.1)
    s = System(model)
    y = r.states[-1]                               # a consistent moving state
    T = s.tree
    errors = []
    for h in (1e-3, 5e-4, 2.5e-4):
        inst = s.instant(0.3, y)
        y2 = y.copy()
        nq = s.nq_tot
        for i in range(len(s.bodies)):
            if T.nq[i] == T.nu[i]:                   # scalar coordinates: Taylor step
                q0, u0 = T.qo[i], T.uo[i]
                for j in range(T.nu[i]):
                    y2[q0 + j] += y[nq + u0 + j] * h + 0.5 * inst.udot[u0 + j] * h * h
        assert all(T.nq[i] == T.nu[i] for i in range(len(s.bodies)))
        errors.append(np.abs(s.instant(0.3 + h, y2).phi).max())
    rates = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(rates > 2.6), f"closure errors {errors}, orders {rates}"
    del rng


def test_cut_reaction_balances_the_rod():
    """Newton-Euler on the connecting rod: hinge loads on it plus gravity give m a_C."""
    model = model_of("crank_slider")
    r = simulate(model, t_end=0.2, step=1e-4, output_step=0.1)
    s = System(model)
    inst = s.instant(0.2, r.states[-1])
    k = s.cuts.index("BigEnd")
    i_rod = s.bodies.index("Rod")
    rod = model.body("Rod")
    # the rod's acceleration at its mass centre
    hp, pc, w = inst.hp[i_rod], inst.pc[i_rod], inst.w[i_rod]
    eps, a_hp = inst.x[i_rod, :3], inst.x[i_rod, 3:]
    a_c = a_hp + np.cross(eps, pc - hp) + np.cross(w, np.cross(w, pc - hp))
    # forces on the rod: the cut hinge BigEnd (rod is its input) and the tree hinge WristPin
    # (reversed: the rod is the child, its wrench Wh acts on the rod)
    f_cut = inst.Wcut[k, 3:]
    f_wrist = inst.Wh[i_rod, 3:]
    gravity = rod.mass * model.gravity
    np.testing.assert_allclose(f_cut + f_wrist + gravity, rod.mass * a_c,
                               atol=1e-9 * np.abs(rod.mass * a_c).max() + 1e-9)


def test_inconsistent_initial_state_is_corrected_and_reported_by_mstmm():
    model = build("crank_slider")
    model.hinge("WristPin").initial_coordinates = np.array([0.05, -0.1])
    model.hinge("Cylinder").initial_coordinates = np.array([0.17])
    model.hinge("Cylinder").initial_rates = np.array([1.0])
    r = simulate(model, method="mstmm", t_end=2e-4, step=1e-5, output_step=1e-4,
                 accept_corrections=True)
    assert "WristPin.rx" in r.meta["assembly"] and "Cylinder.z" in r.meta["assembly"]
    warning = next(w for w in r.meta["warnings"] if "violated the loop constraints" in w)
    # what was corrected, in the warning itself (the GUI and the CLI show the warnings)
    assert "WristPin.rx 0.05 rad (2.86479 deg) -> 0 rad (0 deg)" in warning, warning
    assert "Cylinder.z 0.17 m -> 0.155647 m" in warning, warning
    assert "Cylinder.z 1 m/s -> " in warning, warning
    assert r["WristPin.rx"][0] == pytest.approx(0.0, abs=1e-12)
    assert np.max(r["BigEnd.closure_gap"]) < 1e-10
    assert r.meta["loop_closure"]["max_residual"] < 1e-10


def test_redundancy_reported_by_mstmm():
    r = simulate(build("four_bar", crank_rate=3.0), t_end=0.01, step=1e-3, output_step=1e-3)
    assert len(r.meta["redundant_constraints"]) == 3
    assert any("redundant" in w and "RockerPivot" in w for w in r.meta["warnings"])


def test_adaptive_loop_runs_do_not_depend_on_the_first_step():
    """DOP853 on the crank-slider: the loops' stabilisation follows the integrator's current
    step, so a first step of 1e-4 s or 1e-2 s gives about the same number of steps and the same
    accuracy (before, the small first step set a stiff stabilisation for the whole run)."""
    runs = {}
    for first in (1e-4, 1e-2):
        runs[first] = simulate(build("crank_slider"), integrator="DOP853", step=first,
                               t_end=0.08, output_step=1e-3)
    steps = [r.meta["steps"] for r in runs.values()]
    assert max(steps) < 1.2 * min(steps), steps
    a, b = runs[1e-4], runs[1e-2]
    np.testing.assert_allclose(a.column("Piston.z"), b.column("Piston.z"), atol=1e-8)
    for r in runs.values():
        assert r.meta["loop_closure"]["max_residual"] < 1e-8


def _parallelogram(theta_deg):
    """A parallelogram four-bar (ground = coupler 0.3 m, crank = rocker 0.1 m) without gravity,
    the crank turning at pi rad/s from ``theta_deg``: it lies flat (a change point: the loop
    loses rank) whenever the crank angle passes a multiple of pi, once a second."""
    return build("four_bar", theta_deg=theta_deg, crank_rate=np.pi, gravity=(0.0, 0.0, 0.0),
                 ground=0.3, crank=0.1, coupler=0.3, rocker=0.1)


@pytest.mark.parametrize("theta_deg", [80.0, 90.0])
def test_mstmm_reports_every_change_point_with_its_time(theta_deg):
    """10 s of a parallelogram four-bar pass 10 change points; the mstmm run reports all 10,
    each at its time (the crank turns uniformly: its angle reaches k pi at
    t = (theta0 + k pi) / pi: a positive rate about the hinge axis y turns the crank from +z
    toward +x), whether a passage falls on a step (90 degrees: t = 0.5, 1.5 ...) or between
    steps and output rows (80 degrees: t = 0.4444, 1.4444 ...)."""
    r = simulate(_parallelogram(theta_deg), method="mstmm", t_end=10.0, step=1e-3,
                 output_step=1e-2)
    found = r.meta["singular_configurations"]
    expected = np.radians(theta_deg) / np.pi + np.arange(10)
    assert len(found) == 10, found
    times = np.array([s["time"] for s in found])
    np.testing.assert_allclose(times, expected, atol=2e-3)
    assert all(s["kind"] == "change point" for s in found)
    assert any("10 singular configurations passed" in w for w in r.meta["warnings"])
    # it stays on the parallelogram branch through them: uniform rotation, energy kept
    np.testing.assert_allclose(r["CrankPivot.rz_rate"], np.pi, rtol=1e-6)
    e = r["energy.total"]
    assert np.abs(e - e[0]).max() < 1e-8 * e[0]


def test_no_change_point_reported_for_a_crank_rocker():
    """The ordinary four-bar (Grashof crank-rocker) never loses rank: nothing reported."""
    r = simulate(build("four_bar", crank_rate=3.0), method="mstmm", t_end=2.0, step=1e-3,
                 output_step=1e-2)
    assert r.meta["singular_configurations"] == []


def test_singularity_monitor_finds_a_v_between_samples():
    """The monitor on a sampled ratio |t - t*| (a rank drop passed between two samples)
    reports one passage at t*, and none for a smooth minimum that stays away from zero."""
    from MultibodyWB.solver.methods.constrained.partition import SingularityMonitor
    t = np.arange(0.0, 1.0, 0.01)
    mon = SingularityMonitor()
    mon.series(t[:50], np.abs(t[:50] - 0.4237))
    mon.series(t[50:], np.abs(t[50:] - 0.4237))
    mon.finish()
    assert len(mon.singularities) == 1
    assert mon.singularities[0].time == pytest.approx(0.4237, abs=1e-9)
    smooth = SingularityMonitor()
    smooth.series(t, 0.05 + (t - 0.4237) ** 2)
    smooth.finish()
    assert smooth.singularities == []


def _loop_model(case):
    from test_constrained_loops import random_loop_model
    if isinstance(case, int):
        return random_loop_model(case)
    if case == "universal_big_end":
        # the planar engine with its big end a universal hinge, first axis along the crank
        # pin: the cut hinge (4 constraints, fewer than the revolutes' 5), turning fast about rx
        from MultibodyWB.solver.maths.rotations import bryant_to_matrix, matrix_to_bryant
        m = build("crank_slider", variant="planar")
        turn = np.array([[0.0, 0.0, -1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])   # x <- old z
        h = m.hinge("BigEnd")
        for ref in (h.input, h.output):
            mk = m.part(ref.body).marker(ref.marker)
            mk.frame.orientation = matrix_to_bryant(bryant_to_matrix(mk.frame.orientation)
                                                    @ turn)
        h.type = "universal"
        return m
    if case == "cardan":
        return _cardan_loop()
    return build(case, crank_rate=3.0) if case == "four_bar" else build(case)


def _cardan_loop(beta=np.radians(30.0), rate=12.0):
    """Two shafts on revolute hinges to the ground, their axes at ``beta`` in the yz plane, joined
    at the origin by a universal hinge (a Hooke joint): one loop, one degree of freedom, and both
    of the universal's angles turn as the shafts do (the cross rocks about each arm). Every frame
    is in global axes and none has its z axis along x (Bryant angles at b = +-90 deg would store
    the bearings' axes only to 1e-8 rad)."""
    from MultibodyWB.examples.parts import frame_along
    from MultibodyWB.solver.maths.rotations import (inertia_tensor_to_vector, matrix_to_bryant,
                                                    parallel_axis)
    from MultibodyWB.solver.model import MultibodySystem
    m = MultibodySystem("Cardan")
    ground = m.set_ground("Ground")
    a1 = np.array([0.0, 0.0, 1.0])
    a2 = np.array([0.0, np.sin(beta), np.cos(beta)])
    ex = np.array([1.0, 0.0, 0.0])

    def shaft(name, axis, centre):
        J_C = 0.0075 * (np.eye(3) - np.outer(axis, axis)) + 1e-4 * np.outer(axis, axis)
        return m.add_body(name, 1.0, inertia_tensor_to_vector(parallel_axis(J_C, 1.0, centre)),
                          centre)

    shaft1 = shaft("Shaft1", a1, -0.15 * a1)
    shaft2 = shaft("Shaft2", a2, 0.15 * a2)
    R1, R2 = frame_along(ex, a1), frame_along(ex, a2)          # z along each shaft
    RU = np.column_stack([ex, np.cross(a2, ex), a2])            # x: shaft 1's arm, y: shaft 2's
    m.add_hinge("Bearing1", "revolute", shaft1.add_marker(-0.3 * a1, matrix_to_bryant(R1)),
                ground.add_marker(-0.3 * a1, matrix_to_bryant(R1)), initial_rates=[rate])
    m.add_hinge("Bearing2", "revolute", shaft2.add_marker(0.3 * a2, matrix_to_bryant(R2)),
                ground.add_marker(0.3 * a2, matrix_to_bryant(R2)))
    m.add_hinge("Cross", "universal", shaft2.add_marker((0.0, 0.0, 0.0), matrix_to_bryant(RU)),
                shaft1.add_marker((0.0, 0.0, 0.0), matrix_to_bryant(RU)))
    m.gravity = np.zeros(3)
    return m.check()


def test_the_cardan_loop_is_cut_at_its_universal_and_both_angles_turn():
    """The case below must exercise what it is there for: the universal hinge is the cut hinge
    and both its angles move (the a' b' term of its acceleration)."""
    from MultibodyWB.solver.analysis.start import prepare
    model, _ = prepare(_cardan_loop(), True)
    assert System(model).cuts == ["Cross"]
    r = simulate(model, method="mstmm", t_end=0.3, step=1e-4, output_step=0.01,
                 accept_corrections=True)
    # a Hooke joint at 30 deg: the cross rocks by about +-beta about each arm
    assert np.ptp(r["Cross.rx"]) > 0.5 and np.ptp(r["Cross.ry"]) > 0.5
    assert np.abs(r["Cross.rx_rate"]).max() > 1.0 and np.abs(r["Cross.ry_rate"]).max() > 1.0


@pytest.mark.parametrize("case", list(range(14)) + [34, "four_bar", "crank_slider",
                                                   "universal_big_end", "cardan"])
def test_loop_rows_match_the_global_formulation(case):
    """Every cut-hinge column of the mstmm rows equals what the constrained formulation
    computes at the same state (rates and loads to 1e-8 of their scale, accelerations to 1e-7;
    coordinates to 1e-9): random loops closed by each hinge type (seeds 0-13: the closing
    hinge mostly at rest, the random loops often lock), a random loop whose closing
    planar hinge moves (seed 34; seed 5's spherical one moves too), the four-bar (a moving revolute cut
    hinge), the spatial crank-slider (a moving spherical one, driven, with gas force) and the
    planar engine with a universal big end turning about its first axis (its second stays at 0:
    the a' b' term of the universal's acceleration is not exercised here)."""
    from MultibodyWB.solver.methods.constrained.formulation import accelerations
    from MultibodyWB.solver.maths.rotations import quaternion_to_matrix
    from MultibodyWB.solver.methods.mstmm.loop_rows import LoopRecorder
    from MultibodyWB.solver.maths.rotations import bryant_to_matrix
    from MultibodyWB.solver.model.columns import hinge_quantities
    from MultibodyWB.solver.analysis.start import prepare
    from MultibodyWB.solver.methods.mstmm.system import System
    model, _ = prepare(_loop_model(case), True)
    system = System(model)
    # states along a short run (rates and accelerations non-zero)
    r = simulate(model, method="mstmm", t_end=0.3, step=1e-4, output_step=0.05,
                 accept_corrections=True)
    # the global formulation imposes the loops at the acceleration level without the mstmm
    # kernel's Baumgarte terms: compare without them (a vanishing stabilisation)
    system.set_stabilisation(1e300)
    rec = LoopRecorder(system)
    rows = rec.rows(r.time, r.states, None)
    names = rec.names
    for c, name in enumerate(system.cuts):
        h = model.hinge(name)
        qties = hinge_quantities(h.type)
        for k, (t, y) in enumerate(zip(r.time, r.states)):
            g = accelerations(system, float(t), y)
            got = {q: rows[k, names.index(f"{name}.{q}")] for q in qties}
            W = g.cut_reaction_on_input[c]
            force, torque = W[3:], W[:3]
            scale_f = max(np.abs(force).max(), np.abs(torque).max(), 1.0)
            np.testing.assert_allclose([got["Fx"], got["Fy"], got["Fz"]], force,
                                       atol=1e-8 * scale_f)
            np.testing.assert_allclose([got["Tx"], got["Ty"], got["Tz"]], torque,
                                       atol=1e-8 * scale_f)
            if h.type in ("spherical", "free", "bushing"):
                u_names = ["wx", "wy", "wz"]
                acc_names = ["alphax", "alphay", "alphaz"]
                nt = 0 if h.type == "spherical" else 3
                R_ref = bryant_to_matrix(g.cut_q[c][nt:])
                np.testing.assert_allclose(bryant_to_matrix([got[q] for q in ("rx", "ry", "rz")]),
                                           R_ref, atol=1e-9)
                quat = np.array([got[q] for q in ("qw", "qx", "qy", "qz")])
                np.testing.assert_allclose(quaternion_to_matrix(quat), R_ref, atol=1e-9)
            else:
                coords = list(HINGE_TYPES[h.type].coordinates)
                u_names = [f"{q}_rate" for q in coords]
                acc_names = [f"{q}_acc" for q in coords]
                q_got = np.array([got[q] for q in coords])
                wrapped = np.array([np.angle(np.exp(1j * (a - b))) if q.startswith("r") else
                                    a - b for q, a, b in zip(coords, q_got, g.cut_q[c])])
                np.testing.assert_allclose(wrapped, 0.0, atol=1e-9)
            u_ref = g.cut_u[c][-len(u_names):] if u_names else []
            np.testing.assert_allclose([got[q] for q in u_names], u_ref,
                                       atol=1e-8 * max(np.abs(u_ref).max(initial=0.0), 1.0))
            ud_ref = g.cut_udot[c][-len(acc_names):] if acc_names else []
            np.testing.assert_allclose([got[q] for q in acc_names], ud_ref,
                                       atol=1e-7 * max(np.abs(ud_ref).max(initial=0.0), 1.0))


def test_a_drawing_at_a_change_point_is_reported_with_its_energy_gain():
    """Issue 12's flat parallelogram: drawn lying flat (a change point: the loops have less rank
    than anywhere else) and set turning, it left the change point the wrong way and gained
    energy (0.0017 J to several J in 1 s) without a word. Now the run says the drawing is at a
    singular configuration (t = 0, with the ranks), counts the redundant constraints of the
    generic configuration, and warns that the energy balance does not close."""
    m = build("four_bar", theta_deg=0.0, crank_rate=1.0, ground=0.3, crank=0.1, coupler=0.3,
              rocker=0.1)
    r = simulate(m, t_end=1.0, step=1e-3, output_step=1e-2, accept_corrections=True)
    found = r.meta["singular_configurations"]
    assert found and found[0]["time"] == 0.0 and found[0]["kind"] == "change point"
    text = "\n".join(r.meta["warnings"])
    assert "the drawing is at a singular configuration" in text
    assert "3 redundant constraints" in text
    b = r.energy_balance()
    assert abs(b["relative"]) > 1e-3                  # what the warning is about
    assert "the energy balance does not close" in text
    assert "the energy balance does not close" in r.summary()


def test_no_energy_warning_for_a_sound_run():
    """The engine, driven with gas force: its balance closes (residual ~1e-9 relative), no
    energy warning."""
    r = simulate(build("crank_slider"), t_end=0.02)
    assert abs(r.energy_balance()["relative"]) < 1e-6
    assert not any("energy balance" in w for w in r.meta.get("warnings", []))


def _rows_kept(system):
    """(ma, act[:ma]) of ``kernels.load_sweeps`` at the state of the last evaluation."""
    from MultibodyWB.solver.methods.mstmm import kernels as K
    T, W = system.tree, system.work
    C, L = T.loops, W.loops
    ma, _ = K.load_sweeps(C.c_bi, C.c_bo, C.c_m, C.c_of_row, C.cp_u, C.cp_ab, L.Ncol, L.pcut, L.pB,
                          L.paB, L.rB, L.Acon, L.bcon.copy(), L.act, L.dud, L.dx, L.dWh, T.parent,
                          T.code, T.uo, W.hp, W.Sg, W.IA, W.U, W.Dinv, W.nfree, W.fidx, True,
                          True)
    return ma, list(L.act[:ma])


def test_cut_rows_no_free_coordinate_feels_are_left_out_and_only_those():
    """The loop closure leaves out the cut rows whose load no free coordinate of the loop feels
    (kernels.load_sweeps): the four-bar's spatial revolute cut blocks five directions, of which
    only the two translations in the linkage's plane act; the three others get a load of exactly
    zero (the minimum-norm load; the full computation gave round-off there). Tilting the crank's
    pivot axis by 1 mrad makes the linkage spatial: then every row is kept."""
    from MultibodyWB.solver.maths.rotations import bryant_to_matrix, matrix_to_bryant
    model = build("four_bar")
    s = System(model)
    s.instant(0.0, s.initial_state())
    L = s.work.loops
    ma, kept = _rows_kept(s)
    assert (ma, kept) == (2, [2, 3])                 # rows: rot x, rot y, trans x, y, z
    np.testing.assert_array_equal(L.lam[[0, 1, 4]], 0.0)
    assert np.abs(L.lam[[2, 3]]).min() > 1e-3
    assert L.loop_rank[0] == 2
    # the same linkage, not planar
    tilted = build("four_bar")
    pivot = tilted.hinge("CrankPivot")
    marker = tilted.ground.marker(pivot.output.marker)
    c, s_ = np.cos(1e-3), np.sin(1e-3)
    R = bryant_to_matrix(marker.frame.orientation) @ np.array([[1, 0, 0], [0, c, -s_],
                                                                [0, s_, c]])
    marker.frame.orientation = matrix_to_bryant(R)
    s2 = System(tilted)
    s2.instant(0.0, s2.initial_state())
    assert _rows_kept(s2) == (5, [0, 1, 2, 3, 4])
