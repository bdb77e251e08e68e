"""The mstmm method's compiled evaluation and fixed-step runs: the state derivative
(:func:`evaluate_into`: the tree's sweeps of :mod:`.tree`, the force laws' loads, the loop
closure of :mod:`.closure`), RK4 and semi-implicit Euler runs in one compiled loop
(:func:`_fixed_run`), and many result rows' instants at once (:func:`instants_into`).

Everything here works on the flat arrays of :class:`~.system.System` (see its docstring for every
array and the state layout); the conventions (global axes, hinge points, the hinge's local
kinematics, the sweep) are :mod:`.tree`'s. The names of :mod:`.tree` and :mod:`.closure` and the
shared hinge kinematics are also reachable here, for the kernels' users.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from ...maths.small import _JIT
from ...elements.forces import applied_loads, has_loads
# <generated: imports> written by scripts/generate_registry.py
from ...elements.forces import (contact, cut_spring, nonlinear_bushing, point,
                                rotational_spring_damper, spring_damper, stop)
# </generated: imports>
from ...elements.hinges import HINGE_TYPES, TYPE_CODES  # noqa: F401  (TYPE_CODES: kernels' users)
# one relative kinematics per hinge type, shared with the other methods (issue 36 item 2)
from ...elements.hinge_kinematics import (  # noqa: F401  (names the kernels' users read here)
    BUSHING, CUT_ROT, CUT_TRANS, CYLINDRICAL, FIXED, FREE, NQ, NU, PLANAR, PRISMATIC, REVOLUTE,
    SPHERICAL, UNIVERSAL, cut_count, hinge_local, hinge_qdot, state_rate as _state_rate)
# the power of drivers, forces and dampers, shared with the other methods
from ..shared.power import hinge_power, power_flows  # noqa: F401  (power_flows: System)

# the tree's sweeps and the loop closure (issue 36 item 5: the kernels by role)
from .tree import (  # noqa: F401  (names the kernels' users read here)
    COLKIND, _invert_spd, _rotation_spring, loads, riccati, tree_kinematics)
from .closure import (  # noqa: F401  (names the kernels' users read here)
    _psd_general, _psd_small, apply_loop_loads, close_loops, cut_geometry, load_sweeps, psd_solve)


@njit(**_JIT)
def _state_in(y, drv, nq_tot, drv_idx, drv_q, q, u, dd):
    """Coordinates q, u and prescribed accelerations dd from the state and the drivers."""
    for j in range(nq_tot):
        q[j] = y[j]
    for j in range(u.size):
        u[j] = y[nq_tot + j]
        dd[j] = 0.0
        k = drv_idx[j]
        if k >= 0:
            q[drv_q[j]] = drv[k, 0]
            u[j] = drv[k, 1]
            dd[j] = drv[k, 2]


@njit(**_JIT)
def evaluate_into(y, drv, mags, T, F, W, ydot):
    """State derivative at (y, drivers, magnitudes) into ``ydot``; fills the work arrays W.

    Each kernel gets only the arrays it uses (see :func:`riccati` on speed). :func:`_fixed_run`
    makes the same calls with the arrays taken out of the structs once per run: keep the two
    in step. ``bool(True)``: a flag of type bool rather than a literal, so that numba compiles
    riccati and close_loops once for both values.
    """
    _state_in(y, drv, T.nq_tot, T.drv_idx, T.drv_q, W.q, W.u, W.dd)
    tree_kinematics(W.q, W.u, T.parent, T.code, T.sgn, T.qo, T.uo, T.nu, T.mo_R, T.mo_p,
                    T.mi_R, T.mi_p, T.rc, W.R, W.pb, W.pc, W.hp, W.w, W.vh, W.Sg, W.cg, W.RA,
                    W.scratch.Rrel, W.scratch.dloc, W.scratch.Sloc, W.scratch.bias)
    applied = has_loads(F)
    if applied:
        applied_loads(mags, F, T.mass, W.R, W.pb, W.pc, W.hp, W.w, W.vh, W.FC, W.TC)
    loads(W.q, W.u, applied, T.mass, F.gravity, T.code, T.qo, T.uo, T.nu, T.hk, T.hc, T.href,
          T.hRref, W.pc, W.hp, W.FC, W.TC, W.Wext, W.tau)
    riccati(T.parent, T.code, T.nu, T.uo, T.mass, T.JCl, T.driven, W.R, W.pc, W.hp, W.w, W.Sg,
            W.cg, W.Wext, W.tau, W.dd, W.udot, W.x, W.Wh, W.IA, W.pA, W.U, W.Dinv, W.r0, W.ck,
            W.nfree, W.fidx, W.paS, W.scratch, bool(True))
    if T.m_tot > 0:
        close_loops(T.loops, W.loops, T.parent, T.code, T.uo, T.nu, T.driven, W.R, W.pb, W.w,
                    W.vh, W.hp, W.Sg, W.IA, W.U, W.Dinv, W.nfree, W.fidx, W.x, W.udot, W.Wh,
                    W.tau, bool(True))
        # what a cut hinge applies on its input body: its springs' and dampers' loads too
        cut_spring.add_wrenches(F.cut_spring, W.R, W.pb, W.hp, W.w, W.vh, W.loops.Wcut)
    _state_rate(W.q, W.u, W.udot, T.code, T.qo, T.uo, T.nq, T.nu, T.nq_tot, ydot)


@njit(**_JIT)
def normalise_quaternions(y, quat):
    for k in range(quat.size):
        o = quat[k]
        n = np.sqrt(y[o] ** 2 + y[o + 1] ** 2 + y[o + 2] ** 2 + y[o + 3] ** 2)
        for a in range(4):
            y[o + a] /= n


def rk4_run(y, k0, nsteps, h, drv_grid, mag_grid, T, F, W, out, out_every, out_start, flows,
            out_flows, monitor, B):
    """``nsteps`` RK4 steps from ``y`` (updated in place), starting at step index ``k0``.

    ``drv_grid`` (2K+1, nd, 3) and ``mag_grid`` (2K+1, nm) hold the time functions at the
    half steps ``t0 + j h / 2`` of the whole run. Every ``out_every``-th state (by global step
    index) is written to ``out[out_start + ...]``. Returns the number of rows written. Releases
    the GIL (``nogil``): another thread can run while a chunk of steps computes.

    ``flows`` (3,): the work of the drivers and of the applied forces and the energy the
    dampers dissipated since t = 0 (J), carried on (updated in place) as extra states of the
    same RK4 scheme: each stage's :func:`power_flows` weighted 1, 2, 2, 1. They are written to
    ``out_flows`` with the states. An empty ``flows`` (size 0): nothing does work, skip it.

    ``monitor`` (nsteps,): closed loops' conditioning at the start of every step (``L.svr``,
    see :func:`close_loops`), for the singular positions met between output rows; an empty
    array: not recorded.

    ``B`` (system.Stack, leading axis at least the rows written; or 0: none): what the result
    rows need of the evaluation at each written state, in the same places as ``out``, as
    :func:`instants_into` fills it. It is the evaluation the next step starts with (made with
    the hinges' wrenches), so a row costs no evaluation of its own but for the chunk's last
    one, evaluated after the last step.

    The steps are those of :func:`_fixed_run` (see there how an evaluation is made). This is a
    Python function, and so is :func:`euler_run`: a compiled one would compile the whole of
    :func:`_fixed_run` again, inlined into it (22 s of the first compile each, for no speed).
    """
    return _fixed_run(y, k0, nsteps, h, drv_grid, mag_grid, T, F, W, out, out_every, out_start,
                      flows, out_flows, monitor, B, False, -1)


def euler_run(y, k0, nsteps, h, drv_grid, mag_grid, T, F, W, out, out_every, out_start, flows,
              out_flows, monitor, B):
    """``nsteps`` semi-implicit (symplectic) Euler steps from ``y`` (updated in place),
    starting at step index ``k0``: one evaluation per step,

        ``u_{n+1} = u_n + h udot(t_n, q_n, u_n)``,   ``q_{n+1} = q_n + h qdot(q_n, u_{n+1})``

    (the new rates move the positions; quaternions normalised after every step). First order;
    without dampers the energy error stays bounded instead of drifting, and an undamped
    oscillator is stable for ``h w < 2`` (:data:`..runtime.EULER_LIMIT`; RK4: 2.78 with four
    evaluations).

    The arguments and the result are those of :func:`rk4_run` (the drivers and magnitudes are
    read at the steps' starts, the even entries of the same half-step grids); ``flows`` is
    carried on to first order: the power at the start of each step times ``h``.
    """
    return _fixed_run(y, k0, nsteps, h, drv_grid, mag_grid, T, F, W, out, out_every, out_start,
                      flows, out_flows, monitor, B, True, -1)


def row_evaluations(Y, drv, mags, T, F, W, B):
    """What :func:`instants_into` does, made by :func:`_fixed_run`: the states Y (k, ny) with
    drivers drv (k, nd, 3) and magnitudes mags (k, nm) evaluated as a fixed-step run evaluates
    a result row's state (with the hinges' wrenches), copied into row k of ``B``
    (system.Stack). W is left with the last one's evaluation.

    For the few rows of a fixed-step run that are not at the end of a chunk's step (the first
    row, a last row off the output grid) and for ``System.instant``: a fixed-step run then
    needs no compiled code but :func:`_fixed_run`'s, and the warm-up's fixed-step stage
    compiles neither :func:`evaluate_into` nor :func:`instants_into` (about 40 % of its
    compile). A Python loop of compiled calls (about 0.2 ms each): not for many rows
    (:func:`instants_into` is one call).
    """
    out = np.zeros((1, Y.shape[1]))
    none = np.zeros(0)
    out_flows = np.zeros((1, 3))
    for k in range(Y.shape[0]):
        _fixed_run(np.ascontiguousarray(Y[k], dtype=np.float64), 0, 0, 0.0, drv[k:k + 1],
                   mags[k:k + 1], T, F, W, out, 1, 0, none, out_flows, none, B, False, k)


@njit(**_JIT)
def _fixed_run(y, k0, nsteps, h, drv_grid, mag_grid, T, F, W, out, out_every, out_start, flows,
               out_flows, monitor, B, euler, row0):
    """The steps of :func:`rk4_run` (``euler`` False: four stages) and :func:`euler_run`
    (``euler`` True: one evaluation, then ``u += h udot`` before the position rates are taken).

    A written row's evaluation (``B``, see :func:`rk4_run`) is the next step's first: it is
    made with the hinges' wrenches (``wr``) and copied before the step goes on (before euler's
    ``u += h udot``); when the last step writes a row, one more first stage evaluates it
    (``s == nsteps``) and nothing else. ``row0`` (-1: none): a row of ``B`` to which the
    state ``y`` is written, evaluated, before the first step (:func:`row_evaluations`: with
    ``nsteps`` 0, that alone).

    Each evaluation makes the calls of :func:`evaluate_into` (see there why), with the arrays
    taken out of the structs once, here, and without the hinge wrenches: W.Wh is left as it
    was but for the hinges with a driven coordinate (see :func:`riccati`). When the run tracks
    the work, the applied loads and their power come from one pass over the force elements
    (contacts are evaluated once: ``contact.add_loads`` returns the power they dissipate).

    No struct crosses a call made at every evaluation: the force laws' kernels are called from
    here with their own struct each (a leaf: it calls nothing that takes the struct), and the
    loop closure's four steps (:func:`close_loops`) are called from here with their arrays one
    by one. A compiled function that is given a struct and passes it, or its arrays, on to
    another call keeps a reference count increment and decrement (atomic operations) per array
    of the struct at every call: numba's reference pruning leaves them. Through the forces'
    dispatcher and ``close_loops`` that was a fifth of a small model's step (perf, the
    crank-slider); through a single loop-closure kernel taking 62 arrays, an eighth of a loop's.
    """
    # tree
    parent, code, sgn, qo, uo, nq, nu = T.parent, T.code, T.sgn, T.qo, T.uo, T.nq, T.nu
    mo_R, mo_p, mi_R, mi_p, rc, mass, JCl = T.mo_R, T.mo_p, T.mi_R, T.mi_p, T.rc, T.mass, T.JCl
    hk, hc, href, hRref, driven = T.hk, T.hc, T.href, T.hRref, T.driven
    drv_idx, drv_q, nq_tot, quat = T.drv_idx, T.drv_q, T.nq_tot, T.quat
    loops, C, L = T.m_tot > 0, T.loops, W.loops
    c_code, c_bi, c_Ri, c_pi, c_bo, c_Ro, c_po = C.c_code, C.c_bi, C.c_Ri, C.c_pi, C.c_bo, \
        C.c_Ro, C.c_po
    c_m, c_of_row, stab, cp_u, cp_ab = C.c_m, C.c_of_row, C.stab, C.cp_u, C.cp_ab
    Ncol, pcut, vres, phi, ccut, Acon, bcon, lam = L.Ncol, L.pcut, L.vres, L.phi, L.ccut, \
        L.Acon, L.bcon, L.lam
    dud, dx, dWh, pB, paB, rB, Wcut, loop_rank, Fcut = L.dud, L.dx, L.dWh, L.pB, L.paB, L.rB, \
        L.Wcut, L.loop_rank, L.F
    act = L.act
    Gch, Mch, pv, perm, zv, wv, svr, ref_rank = L.Gch, L.Mch, L.pv, L.perm, L.zv, L.wv, \
        L.svr, L.ref_rank
    # forces: each law's struct and count (the laws' kernels are called from here, not through
    # forces.applied_loads and force_power: see the docstring)
    gravity = F.gravity
    applied = has_loads(F)
    # <generated: unpack> written by scripts/generate_registry.py
    f_point = F.point
    n_point = f_point.pf_body.shape[0]
    f_spring_damper = F.spring_damper
    n_spring_damper = f_spring_damper.sd_bi.shape[0]
    f_rotational_spring_damper = F.rotational_spring_damper
    n_rotational_spring_damper = f_rotational_spring_damper.rs_bi.shape[0]
    f_contact = F.contact
    n_contact = f_contact.ct_int.shape[0]
    f_stop = F.stop
    n_stop = f_stop.st_int.shape[0]
    f_cut_spring = F.cut_spring
    n_cut_spring = f_cut_spring.cs_int.shape[0]
    f_nonlinear_bushing = F.nonlinear_bushing
    n_nonlinear_bushing = f_nonlinear_bushing.nb_bi.shape[0]
    # </generated: unpack>
    # work
    q, u, dd, R, pb, pc, hp, w, vh = W.q, W.u, W.dd, W.R, W.pb, W.pc, W.hp, W.w, W.vh
    Sg, cg, RA, Wext, tau, udot, x, Wh = W.Sg, W.cg, W.RA, W.Wext, W.tau, W.udot, W.x, W.Wh
    IA, pA, U, Dinv, r0, ck, nfree, fidx = W.IA, W.pA, W.U, W.Dinv, W.r0, W.ck, W.nfree, W.fidx
    FC, TC, paS, scratch = W.FC, W.TC, W.paS, W.scratch
    Rrel, dloc, Sloc, bias = scratch.Rrel, scratch.dloc, scratch.Sloc, scratch.bias
    kd, acc, yt = W.kd, W.kacc, W.ytmp
    rows = B.q.shape[0] > 0          # the rows' evaluations (rk4_run: B)
    pending = row0             # the row (in out and B) whose evaluation is the next stage 0's
    ny = y.size
    half = 0.5 * h
    written = 0
    track = flows.size > 0
    pw = np.zeros(3)
    pf = np.zeros(3)
    pacc = np.zeros(3)
    stages = 1 if euler else 4
    for s in range(nsteps + 1):
        if s == nsteps and pending < 0:
            break                  # (else: the last row's evaluation, at the final state)
        k = k0 + s
        j = 2 * k
        for a in range(ny):
            yt[a] = y[a]
        # rk4: stages at t, t + h/2, t + h/2, t + h; acc = k1 + 2 k2 + 2 k3 + k4
        for st in range(stages):
            jj = j + (st + 1) // 2
            wr = st == 0 and pending >= 0          # a row's evaluation: with the wrenches
            _state_in(yt, drv_grid[jj], nq_tot, drv_idx, drv_q, q, u, dd)
            tree_kinematics(q, u, parent, code, sgn, qo, uo, nu, mo_R, mo_p, mi_R, mi_p, rc,
                            R, pb, pc, hp, w, vh, Sg, cg, RA, Rrel, dloc, Sloc, bias)
            if applied:
                # forces.applied_loads, and with ``track`` forces.force_power
                mags = mag_grid[jj]
                for i in range(mass.size):
                    for a in range(3):
                        FC[i, a] = mass[i] * gravity[a]
                        TC[i, a] = 0.0
                # <generated: loads> written by scripts/generate_registry.py
                dissipated = 0.0
                if n_point > 0:
                    point.add_loads(f_point, mags, R, pb, pc, hp, w, vh, FC, TC)
                if n_spring_damper > 0:
                    spring_damper.add_loads(f_spring_damper, mags, R, pb, pc, hp, w, vh, FC, TC)
                if n_rotational_spring_damper > 0:
                    rotational_spring_damper.add_loads(f_rotational_spring_damper, mags, R, pb, pc,
                                                       hp, w, vh, FC, TC)
                if n_contact > 0:
                    dissipated = contact.add_loads(f_contact, mags, R, pb, pc, hp, w, vh, FC, TC)
                if n_stop > 0:
                    stop.add_loads(f_stop, mags, R, pb, pc, hp, w, vh, FC, TC)
                if n_cut_spring > 0:
                    cut_spring.add_loads(f_cut_spring, mags, R, pb, pc, hp, w, vh, FC, TC)
                if n_nonlinear_bushing > 0:
                    nonlinear_bushing.add_loads(f_nonlinear_bushing, mags, R, pb, pc, hp, w, vh, FC,
                                                TC)
                # </generated: loads>
                if track:
                    # <generated: power> written by scripts/generate_registry.py
                    pf[1] = 0.0
                    pf[2] = 0.0
                    if n_point > 0:
                        point.add_power(f_point, mags, R, pb, pc, hp, w, vh, pf)
                    if n_spring_damper > 0:
                        spring_damper.add_power(f_spring_damper, mags, R, pb, pc, hp, w, vh, pf)
                    if n_rotational_spring_damper > 0:
                        rotational_spring_damper.add_power(f_rotational_spring_damper, mags, R, pb,
                                                           pc, hp, w, vh, pf)
                    pf[2] += dissipated
                    if n_stop > 0:
                        stop.add_power(f_stop, mags, R, pb, pc, hp, w, vh, pf)
                    if n_cut_spring > 0:
                        cut_spring.add_power(f_cut_spring, mags, R, pb, pc, hp, w, vh, pf)
                    if n_nonlinear_bushing > 0:
                        nonlinear_bushing.add_power(f_nonlinear_bushing, mags, R, pb, pc, hp, w, vh,
                                                    pf)
                    # </generated: power>
            loads(q, u, applied, mass, gravity, code, qo, uo, nu, hk, hc, href, hRref, pc, hp,
                  FC, TC, Wext, tau)
            riccati(parent, code, nu, uo, mass, JCl, driven, R, pc, hp, w, Sg, cg, Wext, tau,
                    dd, udot, x, Wh, IA, pA, U, Dinv, r0, ck, nfree, fidx, paS, scratch, wr)
            if loops:
                # close_loops, step by step (see there why)
                cut_geometry(c_code, c_bi, c_Ri, c_pi, c_bo, c_Ro, c_po, c_m, c_of_row, stab,
                             cp_u, cp_ab, Fcut, Ncol, pcut, vres, phi, ccut, bcon, R, pb, w, vh,
                             hp, x, udot)
                ma, big = load_sweeps(c_bi, c_bo, c_m, c_of_row, cp_u, cp_ab, Ncol, pcut, pB,
                                      paB, rB, Acon, bcon, act, dud, dx, dWh, parent, code, uo,
                                      hp, Sg, IA, U, Dinv, nfree, fidx, wr, st == 0)
                rank = psd_solve(Acon, ma, bcon, lam, Gch, Mch, pv, perm, zv, wv, 1e-10 * big)
                apply_loop_loads(ma, act, rank, ref_rank, pv, svr, loop_rank, lam, dud, dx, dWh,
                                 Ncol, c_of_row, cp_ab, cp_u, Wcut, nu, uo, nfree, driven, Sg,
                                 udot, x, Wh, tau, wr)
                if st == 0 and monitor.size > 0 and s < nsteps:
                    monitor[s] = svr[0]
                if wr and n_cut_spring > 0:
                    # a row's cut hinges: their springs' and dampers' loads in what they apply
                    cut_spring.add_wrenches(f_cut_spring, R, pb, hp, w, vh, Wcut)
            if wr:
                # the row's evaluation, as instants_into copies it
                _copy_row(B, pending, q, u, udot, tau, R, pb, pc, hp, w, vh, x, Wh, Wext, loops,
                          Wcut, phi, vres, lam, loop_rank, svr)
                pending = -1
                if s == nsteps:
                    break
            if track:
                hinge_power(q, u, tau, driven, drv_q, hk, hc, href, pw)
                if applied:
                    pw[1] += pf[1]
                    pw[2] += pf[2]
                wt = 1.0 if st == 0 or st == 3 else 2.0
                for c in range(3):
                    pacc[c] = wt * pw[c] if st == 0 else pacc[c] + wt * pw[c]
            if euler:
                # the new rates, from which the positions' rates are taken
                for a in range(u.size):
                    u[a] += h * udot[a]
            _state_rate(q, u, udot, code, qo, uo, nq, nu, nq_tot, kd)
            if euler:
                for a in range(ny):
                    acc[a] = kd[a]
            elif st == 0:
                for a in range(ny):
                    acc[a] = kd[a]
                    yt[a] = y[a] + half * kd[a]
            elif st == 1:
                for a in range(ny):
                    acc[a] += 2.0 * kd[a]
                    yt[a] = y[a] + half * kd[a]
            elif st == 2:
                for a in range(ny):
                    acc[a] += 2.0 * kd[a]
                    yt[a] = y[a] + h * kd[a]
            else:
                for a in range(ny):
                    acc[a] += kd[a]
        if s == nsteps:
            break
        scale = h if euler else h / 6.0
        for a in range(ny):
            y[a] += scale * acc[a]
        normalise_quaternions(y, quat)
        if track:
            for c in range(3):
                flows[c] += scale * pacc[c]
        if (k + 1) % out_every == 0:
            for a in range(ny):
                out[out_start + written, a] = y[a]
            if track:
                for c in range(3):
                    out_flows[out_start + written, c] = flows[c]
            if rows:
                pending = out_start + written
            written += 1
    return written


def evaluate(y, drv, mags, T, F, W):
    """State derivative at (y, drivers, magnitudes) as a new array; fills the work arrays W.
    (Python: compiled, it would compile :func:`evaluate_into` again, inlined into it.)"""
    ydot = np.empty(y.size)
    evaluate_into(y, drv, mags, T, F, W, ydot)
    return ydot


# --------------------------------------------------------------------------------------------------
# result rows: many instants at once
# --------------------------------------------------------------------------------------------------

@njit(**_JIT)
def _copy_row(B, k, q, u, udot, tau, R, pb, pc, hp, w, vh, x, Wh, Wext, loops, Wcut, phi, vres,
              lam, loop_rank, svr):
    """Copy an evaluation into row ``k`` of the stacked arrays of ``B`` (system.Stack): what a
    result row needs (:func:`instants_into`, and :func:`_fixed_run` for the rows of its own
    evaluations); ``loops``: the cut hinges' arrays too."""
    for a in range(q.size):
        B.q[k, a] = q[a]
    for a in range(u.size):
        B.u[k, a] = u[a]
        B.udot[k, a] = udot[a]
        B.tau[k, a] = tau[a]
    for i in range(R.shape[0]):
        for a in range(3):
            for c in range(3):
                B.R[k, i, a, c] = R[i, a, c]
            B.pb[k, i, a] = pb[i, a]
            B.pc[k, i, a] = pc[i, a]
            B.hp[k, i, a] = hp[i, a]
            B.w[k, i, a] = w[i, a]
            B.vh[k, i, a] = vh[i, a]
        for a in range(6):
            B.x[k, i, a] = x[i, a]
            B.Wh[k, i, a] = Wh[i, a]
            B.Wext[k, i, a] = Wext[i, a]
    if loops:
        for c in range(Wcut.shape[0]):
            for a in range(6):
                B.Wcut[k, c, a] = Wcut[c, a]
        for a in range(phi.size):
            B.phi[k, a] = phi[a]
            B.vres[k, a] = vres[a]
            B.lam[k, a] = lam[a]
        B.rank[k] = loop_rank[0]
        B.svr[k] = svr[0]


@njit(**_JIT)
def instants_into(Y, drv, mags, T, F, W, ydot, B):
    """Evaluate the states Y (k, ny) with drivers drv (k, nd, 3) and magnitudes mags (k, nm)
    and copy what the result rows need into the stacked arrays of ``B`` (system.Stack: a
    leading axis k on each of the work arrays it names, as :meth:`System.instant` copies them).
    """
    L = W.loops
    for k in range(Y.shape[0]):
        evaluate_into(Y[k], drv[k], mags[k], T, F, W, ydot)
        _copy_row(B, k, W.q, W.u, W.udot, W.tau, W.R, W.pb, W.pc, W.hp, W.w, W.vh, W.x, W.Wh,
                  W.Wext, T.m_tot > 0, L.Wcut, L.phi, L.vres, L.lam, L.loop_rank, L.svr)
