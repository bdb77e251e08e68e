"""MSTMM product form on closed loops (``solver.mstmm``): the overall transfer equation with the
cut hinges as boundary pairs (unknown constraint loads) and their supplementary equations, solved
numerically and checked against the Riccati kernel's loop closure (``kernels.close_loops``) at
moving states of a run: accelerations, hinge wrenches, driver loads and cut-hinge loads."""

import io

import numpy as np
import pytest

from MultibodyWB.examples import build
from MultibodyWB.solver.methods.mstmm import transfer as mstmm
from MultibodyWB.solver.model import xmlio
from MultibodyWB.solver.analysis.assembly import assembled_state
from MultibodyWB.solver.analysis.kinematics import drawn_poses, relative_pose
from MultibodyWB.solver.maths.rotations import bryant_to_matrix, matrix_to_bryant
from MultibodyWB.solver.run.simulate import simulate
from MultibodyWB.solver.analysis.start import resolve
from MultibodyWB.solver.methods.mstmm.system import System
from MultibodyWB.solver import cli

import randmodels  # noqa: E402  (tests/ is on sys.path: conftest)
from test_constrained_loops import CLOSING_TYPES, random_loop_model  # noqa: E402

RTOL = 1e-10

#: the example loops: (example, build options, run step s, run length s)
CASES = {
    "crank_slider": ("crank_slider", {}, 1e-5, 2e-3),     # spatial: R, S (cut), U, P; driven
    "crank_slider_planar": ("crank_slider", dict(variant="planar", driven=False, gas=False,
                                                 rpm=600.0), 1e-4, 0.05),   # redundant
    "four_bar": ("four_bar", dict(crank_rate=3.0), 1e-4, 0.05),            # redundant
}


def rel_err(a, b, scale=None):
    """Largest difference over ``scale`` (default: the reference's largest magnitude)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    scale = np.abs(b).max(initial=0.0) if scale is None else scale
    return float(np.abs(a - b).max(initial=0.0) / max(scale, 1e-300))


def assert_agrees(system, t, y, rtol=RTOL):
    """Product form with cut-hinge boundaries against the Riccati kernel with close_loops.

    Accelerations on the scale of the largest of them and gravity (a locked mechanism's are
    round-off); every load (hinge wrenches, cut loads, driver loads) on the scale of the largest
    hinge or cut load (a cut load that is 0 by symmetry has no scale of its own)."""
    inst = system.instant(t, y)
    res = mstmm.solve(system, t, y)
    acc = max(np.abs(inst.udot).max(), np.abs(inst.x).max(),
              np.linalg.norm(system.model.gravity))
    loads = max(np.abs(inst.Wh).max(), np.abs(inst.Wcut).max(), 1e-300)
    assert rel_err(res.udot, inst.udot, acc) < rtol
    assert rel_err(res.x, inst.x, acc) < rtol
    assert rel_err(res.Wh, inst.Wh, loads) < rtol
    assert rel_err(res.Wcut, inst.Wcut, loads) < rtol
    assert rel_err(res.tau, inst.tau, max(np.abs(inst.tau).max(), loads)) < rtol
    return inst, res


@pytest.fixture(scope="module", params=sorted(CASES))
def run_state(request):
    """A moving state of a run of the example: (case, system, t, y)."""
    name, options, step, t_end = CASES[request.param]
    model = build(name, **options)
    r = simulate(model, t_end=t_end, step=step, output_step=t_end / 2)
    system = System(resolve(model)[0])
    system.set_stabilisation(step)              # as the run
    t, y = float(r.time[-1]), r.states[-1]
    return request.param, system, t, y


def test_examples_agree_with_the_riccati_run(run_state):
    case, system, t, y = run_state
    assert np.abs(y[system.nq_tot:]).max() > 1.0             # moving: rates of rad/s, m/s
    inst, res = assert_agrees(system, t, y)
    assert np.abs(inst.Wcut).max() > 1.0                     # the cut carries a load
    eq = res.equation
    topo = system.topology
    m = system.tree.m_tot
    assert eq.order == 6 * (len(topo.tips) + len(topo.roots)) + m and eq.n_tree == eq.order - m
    assert [c.hinge for c in eq.cuts] == list(system.cuts)
    # the equation holds at the solution
    assert rel_err(eq.U @ res.unknowns, eq.rhs) < 1e-12
    assert res.residual < 1e-12
    # its rank: full for the spatial crank-slider, short by the redundant constraints otherwise
    assert eq.order - eq.rank() == m - inst.loop_rank == (0 if case == "crank_slider" else 3)


def test_equation_solved_directly(run_state):
    """Solve U Z = rhs with a plain dense solver, not ``solve``'s blocks, and read the
    accelerations and cut loads from Z: the hinges' du among the unknowns and N^T lam (a
    redundant loop's: the least-norm loads of the solutions, as the kernel's)."""
    case, system, t, y = run_state
    inst = system.instant(t, y)
    eq = mstmm.transfer_equation(system, t, y)
    if eq.rank() == eq.order:
        Z = np.linalg.solve(eq.U, eq.rhs)
    else:
        # redundant: any solution gives the same accelerations; the loads in the redundant
        # directions are then the minimum-norm ones of the loads alone (as the kernel)
        Z = np.linalg.lstsq(eq.U, eq.rhs, rcond=1e-12)[0]
    assert rel_err(eq.U @ Z, eq.rhs) < 1e-12
    checked = 0
    for k, name in enumerate(system.bodies):
        hinge = system.hinges[k]
        nu, o = int(system.tree.nu[k]), int(system.tree.uo[k])
        coords = mstmm.velocity_coordinate_names(system.model.hinge(hinge).type)
        for j in range(nu):
            label = f"{hinge}.du_{coords[j]}"
            if label in eq.unknowns:
                v = Z[eq.unknowns.index(label)]
                assert abs(v - inst.udot[o + j]) <= RTOL * np.abs(inst.udot).max()
                checked += 1
    # the du still in Z (a later hinge's elimination may take a du's place: recovered by
    # undoing the substitutions, not checked here)
    assert checked == sum(".du_" in label for label in eq.unknowns) >= 2
    if eq.rank() < eq.order:
        # redundant: the loads of the solutions differ along U's null space; the kernel's are
        # those of least norm (its pivoted Cholesky), so move Z along the null space to the
        # least-norm loads (U Z = rhs still holds)
        _, _, vt = np.linalg.svd(eq.U)
        null = vt[eq.rank():].T
        lam = np.concatenate([np.arange(*cb.columns) for cb in eq.cuts])
        assert np.abs(null[lam]).max() > 0.1          # the loads are what is not unique
        Z = Z + null @ np.linalg.lstsq(null[lam], -Z[lam], rcond=None)[0]
        assert rel_err(eq.U @ Z, eq.rhs) < 1e-12
    loads = max(np.abs(inst.Wh).max(), np.abs(inst.Wcut).max())
    for kc, cb in enumerate(eq.cuts):
        W = cb.N.T @ Z[cb.columns[0]:cb.columns[1]]
        assert rel_err(W, inst.Wcut[kc], loads) < RTOL


@pytest.mark.parametrize("seed", range(len(CLOSING_TYPES)))
def test_random_loops_every_cut_type(seed):
    """Random trees closed by a hinge of every type: at the assembled state (random rates made
    consistent) and at a random state that violates the loop (the supplementary equations'
    Baumgarte terms then act)."""
    model = random_loop_model(seed)
    system = System(model)
    assert system.model.hinge(system.cuts[0]).type == CLOSING_TYPES[seed] \
        or system.cuts[0] != "Closing"
    y, _ = assembled_state(system)
    rng = np.random.default_rng(seed)
    for t, yy in ((0.0, y), (0.7, randmodels.random_state(rng, system, rates=2.0))):
        inst, res = assert_agrees(system, t, yy)
        cb = res.equation.cuts[0]
        assert cb.N.shape == (system.tree.m_tot, 6) and len(cb.directions) == cb.N.shape[0]


def close_again(model, rng, typ, name):
    """Close one more loop: a ``typ`` hinge between two random parts, placed so that the drawn
    configuration satisfies it (as ``random_loop_model`` places its closing hinge)."""
    poses = drawn_poses(model)
    parts = ["Ground"] + [b.name for b in model.bodies]
    a = str(rng.choice(parts[1:]))
    b = str(rng.choice([p for p in parts if p != a]))
    pa, aa = rng.uniform(-0.4, 0.4, size=3), rng.uniform(-3, 3, size=3)
    out = model.part(a).add_marker(pa, aa)
    Ra, p_a = poses[a]
    Ro, po = Ra @ bryant_to_matrix(aa), p_a + Ra @ pa
    Rrel, d = relative_pose(typ, randmodels.random_coordinates(rng, typ, 0.3))
    Ri, pi = Ro @ Rrel, po + Ro @ d
    Rb, p_b = poses[b]
    inp = model.part(b).add_marker(Rb.T @ (pi - p_b), matrix_to_bryant(Rb.T @ Ri))
    model.add_hinge(name, typ, inp, out)
    return model.check()


@pytest.mark.parametrize("seed", range(4))
def test_random_systems_with_several_loops(seed):
    """Two and three cut hinges: a block of loads and of supplementary rows per cut hinge."""
    rng = np.random.default_rng(50 + seed)
    model = random_loop_model(seed + 1)
    for j in range(1 + seed % 2):
        close_again(model, rng, CLOSING_TYPES[(3 * seed + j + 2) % len(CLOSING_TYPES)],
                    f"Closing{j + 2}")
    system = System(model)
    assert len(system.cuts) == 2 + seed % 2
    y, _ = assembled_state(system)
    for t, yy in ((0.0, y), (0.4, randmodels.random_state(rng, system, rates=2.0))):
        inst, res = assert_agrees(system, t, yy)
    eq = res.equation
    assert [b.kind for b in eq.rows][-len(system.cuts):] == ["supplementary"] * len(system.cuts)
    assert [c.rows[1] - c.rows[0] for c in eq.cuts] == list(system.tree.loops.c_m)
    assert eq.order == eq.n_tree + system.tree.m_tot


def test_loads_enter_their_bodies():
    """The crank-slider's cut (big end, spherical): three force directions; the loads appear in
    the main equations of both roots (the rod's path and the crank's) and in the supplementary
    rows, nowhere else; the output side (the crank) receives the opposite of the input side."""
    system = System(build("crank_slider"))
    y, _ = assembled_state(system)
    res = mstmm.solve(system, 0.0, y)
    eq = res.equation
    (cb,) = eq.cuts
    assert (cb.hinge, cb.type, cb.input_body, cb.output_body) == ("BigEnd", "spherical", "Rod",
                                                                  "Crank")
    assert cb.directions == ("q_x", "q_y", "q_z")
    np.testing.assert_allclose(cb.N[:, :3], 0.0)
    np.testing.assert_allclose(cb.N[:, 3:] @ cb.N[:, 3:].T, np.eye(3), atol=1e-14)
    kinds = [b.kind for b in eq.rows]
    assert kinds == ["main", "main", "supplementary"]
    assert [b.kind for b in eq.columns] == ["tip", "tip", "root", "root", "cut"]
    assert all(row[-1] for row in eq.pattern())
    # Newton-Euler on the crank: the main bearing's reaction, the big end's load (opposite of
    # the rod's) and gravity give the crank's mass times the acceleration of its mass centre
    inst = system.instant(0.0, y)
    i = system.index["Crank"]
    crank = system.model.body("Crank")
    r = inst.pc[i] - inst.hp[i]
    a_c = res.x[i, 3:] + np.cross(res.x[i, :3], r) + np.cross(inst.w[i], np.cross(inst.w[i], r))
    f = res.Wh[i, 3:] - res.Wcut[0, 3:] + crank.mass * system.model.gravity
    np.testing.assert_allclose(f, crank.mass * a_c, atol=1e-9 * np.abs(res.Wh).max())


# --------------------------------------------------------------------------------------------------
# report and command line
# --------------------------------------------------------------------------------------------------

def _run(argv):
    import argparse
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="command", required=True)
    cli.add_equation_command(sub)
    args = p.parse_args(argv)
    out = io.StringIO()
    return args.func(args, out), out.getvalue()


def test_report_crank_slider(tmp_path):
    path = tmp_path / "cs.mbs.xml"
    xmlio.write(build("crank_slider"), str(path))
    code, text = _run(["equation", str(path)])
    assert code == 0
    assert "1 BigEnd (spherical), cut: loop Rod - WristPin - Piston - Cylinder - Ground - " \
           "MainBearing - Crank" in text
    assert "+N lam on body 4 Rod, input side" in text
    assert "-N lam on body 2 Crank, output side" in text
    assert "order 27 = 6 x (2 tips + 2 roots) + 3 cut-hinge loads" in text
    assert "rows  24-26  supplementary equations of cut 1 BigEnd" in text
    assert "cols  24-26  cut 1 BigEnd" in text
    assert "24:BigEnd.lam_q_x, 25:BigEnd.lam_q_y, 26:BigEnd.lam_q_z" in text
    assert "rank(U) = 27 of 27" in text
    assert "supp 1" in text and "rows 24-26 (supplementary 1 BigEnd) x cols 24-26" in text
    assert max(len(line) for line in text.splitlines()) <= 120
    # the printed loads are the kernel's at the assembled initial state
    system = System(build("crank_slider"))
    y, _ = assembled_state(system)
    W = system.instant(0.0, y).Wcut[0]
    assert f"force  ({W[3]:.6e}, {W[4]:.6e}, {W[5]:.6e}) N" in text


def test_report_four_bar_redundant(tmp_path):
    path = tmp_path / "fb.mbs.xml"
    xmlio.write(build("four_bar"), str(path))
    code, text = _run(["equation", str(path)])
    assert code == 0
    assert "1 RockerPivot (revolute), cut" in text
    assert "-N lam on the ground (the boundary: no body takes it), output side" in text
    assert "rank(U) = 14 of 17" in text
    assert "U is singular: 3 of the cut hinges' constraint directions depend on the others" in text
    assert max(len(line) for line in text.splitlines()) <= 120
