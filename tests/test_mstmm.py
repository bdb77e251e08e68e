"""MSTMM product form (``solver.mstmm``): element matrices, automatic deduction of the overall
transfer equation, agreement with the Riccati kernel, and independent checks (hand solution of a
pendulum, power balance)."""

import io

import numpy as np
import pytest

from MultibodyWB.examples import EXAMPLES, build
from MultibodyWB.examples.parts import add_link, frame_along
from MultibodyWB.solver.methods.mstmm import transfer as mstmm
from MultibodyWB.solver.model import xmlio
from MultibodyWB.solver.model import MultibodySystem
from MultibodyWB.solver.maths.rotations import matrix_to_bryant
from MultibodyWB.solver.methods.mstmm.system import System
from MultibodyWB.solver.run.equation import equation_report
from MultibodyWB.solver import cli

import randmodels  # noqa: E402  (tests/ is on sys.path: conftest)

RTOL = 1e-10


def rel_err(a, b):
    """Norm-wise relative difference (max abs difference over max abs reference)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300)) if b.size else 0.0


def load_err(a, b, system):
    """Relative difference of hinge loads, over the larger of the reference's largest load and
    the system's total weight: loads that are zero in exact arithmetic (free bodies' hinges)
    come out of the two kernels as zero and as round-off of either sign, which a bare relative
    difference reports as 1 (the CI's numpy on FreeCAD 1.0 did)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if not b.size:
        return 0.0
    weight = 9.81 * float(np.sum(system.tree.mass))
    return float(np.abs(a - b).max() / max(np.abs(b).max(), weight, 1e-300))


def assert_agrees(system, t, y, rtol=RTOL):
    """Product form against the Riccati kernel: udot, x, Wh and the driver loads."""
    inst = system.instant(t, y)
    res = mstmm.solve(system, t, y)
    assert rel_err(res.udot, inst.udot) < rtol
    assert rel_err(res.x, inst.x) < rtol
    assert load_err(res.Wh, inst.Wh, system) < rtol
    assert load_err(res.tau, inst.tau, system) < rtol   # driven entries: the driver loads
    assert res.residual < 1e-10
    return inst, res


def power_balance(system, t, y, res):
    """dT/dt from the accelerations and the power of all loads; both in W.

    dT/dt = sum m v_C . a_C + w . J_C eps;  power = sum Wext . [w; v_hp] + tau . u (hinge springs,
    dampers and drivers: the joint wrench's power is (S^T Wh) . u). Independent of the kernel's
    dynamics: it only uses its kinematics and loads.
    """
    inst = system.instant(t, y)
    T = system.tree
    dT = power = 0.0
    for i in range(len(system.bodies)):
        r = inst.pc[i] - inst.hp[i]
        w = inst.w[i]
        eps, a = res.x[i, :3], res.x[i, 3:]
        vC = inst.vh[i] + np.cross(w, r)
        aC = a + np.cross(eps, r) + np.cross(w, np.cross(w, r))
        JC = inst.R[i] @ T.JCl[i] @ inst.R[i].T
        dT += T.mass[i] * vC @ aC + w @ JC @ eps
        power += inst.Wext[i, :3] @ w + inst.Wext[i, 3:] @ inst.vh[i]
    power += res.tau @ inst.u
    return dT, power


def newton_euler_residual(system, inst, udot, x, Wh, tau):
    """Largest residuals of the equations a tree's solution must satisfy, relative.

    Kinematics of every tree hinge (x_child = x_parent(at hp) + S udot + c), Newton-Euler of every
    body about its mass centre (hinge wrenches of its own hinge and of its children's hinges,
    applied loads), and the joint conditions S^T Wh = tau. Independent of both solvers.
    """
    T = system.tree
    rk = rd = rj = 0.0
    for i in range(len(system.bodies)):
        p, nu, o = T.parent[i], T.nu[i], T.uo[i]
        xp = np.zeros(6)
        if p >= 0:
            l = inst.hp[i] - inst.hp[p]
            ep, wp = x[p, :3], inst.w[p]
            xp = np.r_[ep, x[p, 3:] + np.cross(ep, l) + np.cross(wp, np.cross(wp, l))]
        S = inst.Sg[i][:, :nu]
        rk = max(rk, np.abs(x[i] - xp - S @ udot[o:o + nu] - inst.cg[i]).max())
        if nu:
            rj = max(rj, np.abs(S.T @ Wh[i] - tau[o:o + nu]).max())
        C = inst.pc[i]
        r, w, eps = C - inst.hp[i], inst.w[i], x[i, :3]
        aC = x[i, 3:] + np.cross(eps, r) + np.cross(w, np.cross(w, r))
        JC = inst.R[i] @ T.JCl[i] @ inst.R[i].T
        F = Wh[i, 3:] + inst.Wext[i, 3:]
        M = Wh[i, :3] + inst.Wext[i, :3] + np.cross(inst.hp[i] - C, F)
        for c in np.flatnonzero(T.parent == i):
            F = F - Wh[c, 3:]
            M = M - Wh[c, :3] - np.cross(inst.hp[c] - C, Wh[c, 3:])
        rd = max(rd, np.abs(T.mass[i] * aC - F).max(),
                 np.abs(JC @ eps + np.cross(w, JC @ w) - M).max())
    return (rk / max(np.abs(x).max(), 1.0), rd / max(np.abs(Wh).max(), 1.0),
            rj / max(np.abs(Wh).max(), 1.0))


# --------------------------------------------------------------------------------------------------
# a hand-checkable case: the single pendulum
# --------------------------------------------------------------------------------------------------

def pendulum(angle=0.0, rate=0.0, length=0.4):
    m = MultibodySystem("Pendulum", gravity=(0, 0, -9.81))
    g = m.set_ground()
    pivot = g.add_marker((0, 0, 0), matrix_to_bryant(frame_along((0, 0, -1), (0, 1, 0))))
    rod, r1, _ = add_link(m, "Rod", (0, 0, 0), (0, 0, -length), 0.03, 0.01)
    m.add_hinge("Pivot", "revolute", r1, pivot, initial_coordinates=[angle], initial_rates=[rate])
    return m


def test_pendulum_at_rest_hangs_on_m_g():
    model = pendulum()
    s = System(model)
    y = s.initial_state()
    res = mstmm.solve(s, 0.0, y)
    eq = res.equation
    assert eq.paths == [("Rod", (1, 2, 0))]
    assert eq.order == 12
    assert [b.kind for b in eq.rows] == ["main"] and [b.kind for b in eq.columns] == ["tip", "root"]
    mass = model.body("Rod").mass
    assert res.udot == pytest.approx([0.0], abs=1e-14)
    # the pivot holds the rod up: force m g along the rod (up), no moment at the pivot
    np.testing.assert_allclose(res.Wh[0], [0, 0, 0, 0, 0, mass * 9.81], atol=1e-12)
    # the root boundary's unknowns are the reaction on the ground: m g down
    root = eq.columns[1]
    np.testing.assert_allclose(res.unknowns[root.start:root.stop], [0, 0, 0, 0, 0, -mass * 9.81],
                               atol=1e-12)


@pytest.mark.parametrize("angle, rate", [(0.7, 0.0), (-1.2, 2.5)])
def test_pendulum_hand_solution(angle, rate):
    model = pendulum(angle, rate)
    s = System(model)
    y = s.initial_state()
    res = mstmm.solve(s, 0.0, y)
    body = model.body("Rod")
    mass = body.mass
    T = s.tree
    inst = s.instant(0.0, y)
    r = inst.pc[0] - inst.hp[0]                  # pivot -> mass centre, in the xz plane
    n = inst.Sg[0][:3, 0]                        # the hinge axis, global (+-y)
    JC = inst.R[0] @ T.JCl[0] @ inst.R[0].T
    J_pivot = n @ JC @ n + mass * (r @ r - (n @ r) ** 2)
    g = np.array([0, 0, -9.81])
    # about the fixed pivot: J_O phi'' = n . (r x m g)
    phidd = n @ np.cross(r, mass * g) / J_pivot
    assert res.udot[0] == pytest.approx(phidd, rel=1e-12)
    eps = phidd * n
    w = rate * n
    aC = np.cross(eps, r) + np.cross(w, np.cross(w, r))
    np.testing.assert_allclose(res.Wh[0, 3:], mass * aC - mass * g, rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------------------------------
# element matrices
# --------------------------------------------------------------------------------------------------

def test_body_matrix_is_newton_euler():
    """A body's transfer matrix against the Newton-Euler equations written independently."""
    rng = np.random.default_rng(3)
    mass = 1.7
    Q = randmodels.random_rotation(rng)
    JC = Q @ np.diag([0.3, 0.4, 0.5]) @ Q.T
    pc, w, f, tq, rO = (rng.normal(size=3) for _ in range(5))
    r_in = [rng.normal(size=3) for _ in range(3)]
    B, geo = mstmm.body_transfer(mass, JC, pc, w, f, tq, rO, r_in)
    a1, eps = rng.normal(size=3), rng.normal(size=3)
    loads = [(rng.normal(size=3), rng.normal(size=3)) for _ in r_in]     # (m_k, q_k)

    def acc(p):
        l = p - r_in[0]
        return a1 + np.cross(eps, l) + np.cross(w, np.cross(w, l))

    zs = [np.concatenate([acc(p), eps, mk, qk, [1.0]]) for p, (mk, qk) in zip(r_in, loads)]
    zO = sum(Bk @ zk for Bk, zk in zip(B, zs))
    np.testing.assert_allclose(zO[:3], acc(rO), atol=1e-13)
    np.testing.assert_allclose(zO[3:6], eps, atol=1e-13)
    assert zO[12] == 1.0
    mO, qO = zO[6:9], zO[9:12]
    # m a_C = f + sum q_k - q_O
    # J eps + w x J w = tau_C + sum(m_k + (r_k - C) x q_k) - m_O - (O - C) x q_O
    np.testing.assert_allclose(mass * acc(pc), f + sum(q for _, q in loads) - qO, atol=1e-12)
    lhs = JC @ eps + np.cross(w, JC @ w)
    rhs = tq + sum(mk + np.cross(p - pc, qk) for p, (mk, qk) in zip(r_in, loads)) \
        - mO - np.cross(rO - pc, qO)
    np.testing.assert_allclose(lhs, rhs, atol=1e-12)
    for (G_own, G_first), z in zip(geo, zs[1:]):
        np.testing.assert_allclose(G_own @ z + G_first @ zs[0], 0.0, atol=1e-13)


def test_hinge_matrix_signs():
    rng = np.random.default_rng(5)
    S = rng.normal(size=(6, 3))
    c = rng.normal(size=6)
    tau = rng.normal(size=3)
    driven = np.array([False, True, False])
    dd = np.array([0.0, 0.7, 0.0])
    H, G, C = mstmm.hinge_transfer(S, c, tau, driven, dd)
    assert G.shape == (13, 2) and C.shape == (2, 13)
    zI = np.append(rng.normal(size=12), 1.0)
    du = rng.normal(size=2)
    zO = H @ zI + G @ du
    xI, xO = np.r_[zI[3:6], zI[0:3]], np.r_[zO[3:6], zO[0:3]]
    # x_child = x_parent + S du + c; the input is the child
    np.testing.assert_allclose(xI, xO + S[:, [0, 2]] @ du + S[:, 1] * 0.7 + c, atol=1e-13)
    np.testing.assert_allclose(zO[6:], zI[6:], atol=0)
    Wh = -zI[6:12]
    np.testing.assert_allclose(C @ zI, -(S[:, [0, 2]].T @ Wh) + tau[[0, 2]], atol=1e-13)


# --------------------------------------------------------------------------------------------------
# agreement with the Riccati kernel
# --------------------------------------------------------------------------------------------------

def test_double_pendulum_agrees():
    s = System(build("double_pendulum", rates=(0.4, -1.3)))
    y = s.initial_state()
    assert_agrees(s, 0.0, y)
    rng = np.random.default_rng(0)
    for _ in range(3):
        assert_agrees(s, 0.0, randmodels.random_state(rng, s, rates=3.0))


def test_branched_tree_agrees_and_structure():
    s = System(build("branched_tree"))
    y = s.initial_state()
    inst, res = assert_agrees(s, 0.0, y)
    eq = res.equation
    assert eq.order == 24 and eq.U_all.shape == (24, 25)
    assert eq.paths == [("A2", (1, 2, 3, 4, 11, 12, 0)), ("B2", (5, 6, 7, 8, 11, 12, 0)),
                        ("C1", (9, 10, 11, 12, 0))]
    assert eq.branch_paths == [("A2", (1, 2, 3, 4, 11)), ("B2", (5, 6, 7, 8, 11)),
                               ("C1", (9, 10, 11))]
    assert [(b.kind, b.element, b.start, b.stop) for b in eq.rows] == [
        ("geometric", 11, 0, 6), ("geometric", 11, 6, 12), ("main", 12, 12, 24)]
    assert [(b.kind, b.element, b.name, b.start, b.stop) for b in eq.columns] == [
        ("tip", 1, "A2", 0, 6), ("tip", 5, "B2", 6, 12), ("tip", 9, "C1", 12, 18),
        ("root", 12, "HubBearing", 18, 24)]
    # every free hinge coordinate took the place of one unknown
    assert sum(len(sub.du) for sub in eq.substitutions) == s.nu_tot
    assert [sub.element for sub in eq.substitutions] == [2, 4, 6, 8, 10, 12]
    # geometric equations do not involve the ground's reaction; the main equation does
    assert eq.pattern() == [[True, True, True, False], [True, True, True, False],
                            [True, True, True, True]]
    assert np.isfinite(eq.cond()) and eq.cond() < 1e6
    # internal states: the hub's output state is its hinge point's [a; eps; m; q; 1]
    z = res.states[11]
    i = s.index["Hub"]
    np.testing.assert_allclose(np.r_[z[3:6], z[0:3]], inst.x[i], atol=1e-12)


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_examples_order(name):
    model = build(name)
    s = System(model)
    y = s.initial_state()
    loops = s_topology_has_loops(model)
    if loops:
        # closed loops: cut hinges as boundary pairs with unknown loads (tests/test_mstmm_loops)
        from MultibodyWB.solver.analysis.assembly import assembled_state
        y, _ = assembled_state(s)
    inst, res = assert_agrees(s, 0.0, y)
    topo = s.topology
    eq = res.equation
    extra = sum(len(topo.element(b).inputs) - 1 for b in topo.branch_bodies)
    assert eq.n_tree == 6 * (len(topo.tips) + len(topo.roots)) == \
        12 * len(topo.roots) + 6 * extra
    # the cut hinges' loads and the couplers' multipliers: m_tot unknowns and rows after the tree
    assert eq.order == eq.n_tree + s.tree.m_tot
    assert len(eq.couplers) == s.tree.loops.cp_ab.shape[0] == len(model.couplers)
    assert len(eq.cuts) == len(topo.cut_hinges) and bool(eq.cuts) == bool(loops)
    # (over the weight too: the track's cut pin carries round-off, 2e-7 N, at its start)
    assert load_err(res.Wcut, inst.Wcut, s) < RTOL if loops else res.Wcut.shape == (0, 6)
    assert len(eq.paths) == len(topo.tips)
    assert all(p[-1] == 0 and list(p) == sorted(p[:-1]) + [0] for _, p in eq.paths)


def s_topology_has_loops(model):
    from MultibodyWB.solver.analysis.topology import analyse
    return bool(analyse(model).cut_hinges)


@pytest.mark.parametrize("seed", range(6))
def test_random_chains_agree(seed):
    rng = np.random.default_rng(100 + seed)
    model = randmodels.random_tree(rng, 9, chain=True, reverse=0.4, drivers=0.5)
    s = System(model)
    for t in (0.0, 0.37):
        assert_agrees(s, t, s.initial_state())
        assert_agrees(s, t, randmodels.random_state(rng, s))


@pytest.mark.parametrize("seed", range(10))
def test_random_trees_agree(seed):
    rng = np.random.default_rng(200 + seed)
    model = randmodels.random_tree(rng, 12, reverse=0.4, drivers=0.5)
    s = System(model)
    types = {h.type for h in model.hinges}
    assert types == set(randmodels.ALL_TYPES)
    for t in (0.0, 0.81):
        assert_agrees(s, t, randmodels.random_state(rng, s, rates=2.0))
    res = mstmm.solve(s, 0.0, s.initial_state())
    topo = s.topology
    assert res.equation.order == 6 * (len(topo.tips) + len(topo.roots))


def test_random_every_type_reversed_and_driven():
    """Every hinge type reversed, every drivable type driven, several roots."""
    rng = np.random.default_rng(7)
    for typ in randmodels.ALL_TYPES:
        model = randmodels.random_tree(rng, 3, (typ,), reverse=1.0, drivers=1.0)
        s = System(model)
        assert set(s.topology.reversed_hinges) == {h.name for h in model.hinges}
        if typ in randmodels.DRIVABLE_TYPES:
            assert s.drivers
        inst, res = assert_agrees(s, 0.2, randmodels.random_state(rng, s))
        assert res.driver_loads.shape == (len(s.drivers),)


# --------------------------------------------------------------------------------------------------
# independent check: power balance (does not use the kernel's dynamics)
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(4))
def test_newton_euler(seed):
    rng = np.random.default_rng(400 + seed)
    model = randmodels.random_tree(rng, 10, reverse=0.4, drivers=0.5)
    s = System(model)
    y = randmodels.random_state(rng, s, rates=2.0)
    inst = s.instant(0.4, y)
    res = mstmm.solve(s, 0.4, y)
    assert max(newton_euler_residual(s, inst, res.udot, res.x, res.Wh, res.tau)) < 1e-12


@pytest.mark.parametrize("seed", range(4))
def test_power_balance(seed):
    rng = np.random.default_rng(300 + seed)
    model = randmodels.random_tree(rng, 8, reverse=0.4, drivers=0.5)
    s = System(model)
    y = randmodels.random_state(rng, s, rates=2.0)
    res = mstmm.solve(s, 0.3, y)
    dT, power = power_balance(s, 0.3, y, res)
    assert dT == pytest.approx(power, rel=1e-10, abs=1e-10)


# --------------------------------------------------------------------------------------------------
# report and command line
# --------------------------------------------------------------------------------------------------

def test_report_branched_tree():
    text = equation_report(build("branched_tree"))
    assert "1 -> 2 -> 3 -> 4 -> 11 -> 12 -> 0" in text
    assert "order 24 = 6 x (3 tips + 1 roots)" in text
    assert "geometric equations of branch body 11 Hub" in text
    assert "main transfer equation at root 12 HubBearing" in text
    assert "cond(U)" in text
    assert max(len(line) for line in text.splitlines()) <= 120


def test_report_big_tree_in_blocks():
    rng = np.random.default_rng(11)
    model = randmodels.random_tree(rng, 14, forces=False)
    text = equation_report(model, t=0.5)
    s = System(model)
    order = mstmm.transfer_equation(s, 0.5, s.initial_state()).order
    assert order > 24
    assert f"order {order} > 24: only the non-zero blocks are shown" in text
    assert max(len(line) for line in text.splitlines()) <= 120


def _run(argv):
    import argparse
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="command", required=True)
    cli.add_equation_command(sub)
    args = p.parse_args(argv)
    out = io.StringIO()
    return args.func(args, out), out.getvalue()


def test_equation_command(tmp_path):
    path = tmp_path / "dp.mbs.xml"
    xmlio.write(build("double_pendulum"), str(path))
    code, text = _run(["equation", str(path), "--t", "0.25"])
    assert code == 0
    assert "at t = 0.25 s" in text and "1 -> 2 -> 3 -> 4 -> 0" in text


def test_equation_command_invalid_and_loop(tmp_path):
    model = build("double_pendulum")
    model.bodies[0].mass = -1.0
    bad = tmp_path / "bad.mbs.xml"
    xmlio.write(model, str(bad))
    code, text = _run(["equation", str(bad)])
    assert code == 2 and "Mass" in text
    loop = tmp_path / "four_bar.mbs.xml"
    xmlio.write(build("four_bar"), str(loop))
    code, text = _run(["equation", str(loop)])
    assert code == 0 and "supplementary equations of cut 1 RockerPivot" in text


# --------------------------------------------------------------------------------------------------
# long chains: precision of the product form, and a regression test for the Riccati kernel
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("types", [("spherical",), ("revolute", "universal", "fixed"),
                                   randmodels.ALL_TYPES])
def test_long_chain(types):
    """60-body chains: the product form satisfies Newton-Euler, and so does the kernel.

    A Riccati sweep whose articulated-inertia update is not symmetric by construction loses
    precision exponentially on such chains (about x2 per body on random spherical chains: 1e-6
    relative at 40 bodies, O(1) at 80; the kernels before commit 7bdfe46 did); the product form
    and the symmetric update stay at round-off.
    """
    model = randmodels.random_tree(np.random.default_rng(21), 60, types, chain=True,
                                   forces=False)
    s = System(model)
    y = randmodels.random_state(np.random.default_rng(1), s)
    inst = s.instant(0.0, y)
    res = mstmm.solve(s, 0.0, y)
    assert max(newton_euler_residual(s, inst, res.udot, res.x, res.Wh, res.tau)) < 1e-12
    assert max(newton_euler_residual(s, inst, inst.udot, inst.x, inst.Wh, inst.tau)) < 1e-12
    assert rel_err(res.udot, inst.udot) < RTOL and rel_err(res.x, inst.x) < RTOL
    assert rel_err(res.Wh, inst.Wh) < RTOL
    # the order of the overall equation does not grow with the chain, nor does its condition
    assert res.equation.order == 12
    assert res.equation.cond_scaled() < 1e3
