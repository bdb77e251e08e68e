"""The adaptive explicit Runge-Kutta integrators compiled with the evaluation (issue 35):
Dormand-Prince 5(4) (``RK45``) and 8(5,3) (``DOP853``), as scipy's ``solve_ivp`` steps them,
but with every evaluation inside one compiled run of many steps.

scipy's integrators call the model's derivative from Python at every evaluation (about 54 us on
the IFToMM A05 governor, against about 1 us inside the fixed-step kernel). Here one compiled
function, :func:`rk_chunk`, takes steps until a number of steps is done, the run has ended, or
something stops it, and returns to Python (which looks at cancel, the budget, progress and the
stall detector between chunks, as for the fixed-step runs). Each evaluation is the plain one,
:func:`.kernels.evaluate_into`, with the drivers and force magnitudes evaluated at the stage's
time by the compiled programs of :mod:`...model.timeprogram`.

The method is scipy's (``scipy.integrate.RK45`` and ``DOP853``, whose tableaux it takes):
the same stages, the same error norms (RK45: the RMS norm of the embedded 4th order error over
``atol + rtol max(|y|, |y_new|)``; DOP853: the 5th order error corrected by the 3rd order one),
the same step-size control (safety 0.9, factors between 0.2 and 10, no growth right after a
rejected step, the smallest step ten times the spacing of floats at t) and the same dense
outputs (RK45: Shampine's quartic; DOP853: the 7th order interpolant with its three extra
stages, evaluated only for a step that has an output time or work to integrate). The numbers
differ from scipy's in the last bits only where the sums are taken in another order (scipy's
BLAS dot products), so the runs agree to far below the tolerance.

The rest follows ``run.simulate._run_adaptive``: the output rows come from the dense output at
the output times (quaternions normalised there); with work to track, the power is integrated
over the dense output of every step by Gauss-Legendre quadrature cut at the output times
(:class:`..runtime.WorkQuadrature`'s nodes and sums); closed loops' stabilisation follows the
step just taken, and their conditioning is recorded at the end of every step (from the last
stage's evaluation, made at the new state); an evaluation whose derivative is not finite at a
finite state is kept (the last of a step) for the error message.

The evaluation is written once in :func:`rk_chunk` (LLVM inlines the kernels it calls, and
each call site would compile all of them again): the run is a loop over evaluation requests,
each phase of a step (stages, the extra stages of DOP853's dense output, quadrature nodes)
asking for the next one. It makes the calls of :func:`.kernels.evaluate_into` with the
structs' arrays taken out once per chunk and the force laws called one by one, as
:func:`.kernels._fixed_run` does (keep the three in step): passed through the structs, every
array's reference count went up and down at every evaluation (atomic operations: half of the
compiled time on a one-body model).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ...maths.small import _JIT
from ...model.timeprogram import fill_time_functions
from ...elements.forces import has_loads
# <generated: imports> written by scripts/generate_registry.py
from ...elements.forces import (contact, cut_spring, nonlinear_bushing, point,
                                rotational_spring_damper, spring_damper, stop)
# </generated: imports>
from ...elements.hinge_kinematics import state_rate as _state_rate
from ..shared.power import hinge_power
from .kernels import (_state_in, apply_loop_loads, cut_geometry, load_sweeps, loads,
                      normalise_quaternions, psd_solve, riccati, tree_kinematics)

#: The compiled integrators (their names in the settings).
COMPILED = ("RK45", "DOP853")

SAFETY = 0.9
MIN_FACTOR = 0.2
MAX_FACTOR = 10.0

# fpar: the run's floats, carried from chunk to chunk
T_NOW, H_ABS, T_END, RTOL, ATOL, T_OLD, BAD_T, ERR_T, STAB, T_STOP = range(10)
# ipar: the run's integers
NXT, NFEV, STEPS, STATUS, HAS_BAD, NPOWER, CHUNK_STEPS, NEED_F0, RESTAB = range(9)
# statuses
RUNNING, FINISHED, TOO_SMALL, NOT_FINITE, TIME_FUNCTION = range(5)
#: scipy's message for a step smaller than the spacing of floats (OdeSolver.TOO_SMALL_STEP)
TOO_SMALL_STEP = "Required step size is less than spacing between numbers."

# the phases of the run (what the evaluation asked for is used for)
_F0, _STAGE, _FNEW, _EXTRA, _QUAD = range(5)


class Tableau:
    """An embedded pair's coefficients from scipy's class (``RK45`` or ``DOP853``), as arrays
    for :func:`rk_chunk`: ``A`` (stages incl. f_new and dense extras, same) lower triangular,
    ``B`` (stages), ``C`` (all), ``E`` and ``E3`` (stages + 1), ``P`` (RK45: stages + 1 by 4;
    DOP853: ``D``, 4 by all), ``stages``, ``kind`` 0 (RK45) or 1 (DOP853), ``exponent`` of the
    error in the step-size control."""

    def __init__(self, name):
        import scipy.integrate as si
        cls = getattr(si, name)
        s = int(cls.n_stages)
        self.name, self.stages, self.kind = name, s, 0 if name == "RK45" else 1
        self.exponent = -1.0 / (cls.error_estimator_order + 1)
        if name == "RK45":
            n = s + 1
            self.A = np.zeros((n, n))
            self.A[:s, :s - 1] = cls.A
            self.C = np.zeros(n)
            self.C[:s] = cls.C
            self.E = np.asarray(cls.E, dtype=float)
            self.E3 = np.zeros(n)
            self.P = np.ascontiguousarray(cls.P, dtype=float)
        else:
            from scipy.integrate._ivp import dop853_coefficients as dc
            self.A = np.ascontiguousarray(dc.A, dtype=float)
            self.C = np.ascontiguousarray(dc.C, dtype=float)
            self.E = np.ascontiguousarray(cls.E5, dtype=float)
            self.E3 = np.ascontiguousarray(cls.E3, dtype=float)
            self.P = np.ascontiguousarray(cls.D, dtype=float)
        self.B = np.ascontiguousarray(cls.B, dtype=float)
        self.rows = self.A.shape[0]             # rows of K: stages, f_new, dense extras


@njit(**_JIT)
def _dense_at(kind, x, h, y_old, Q, i):
    """Component ``i`` of the dense output at ``x = (t - t_old) / h``: RK45's ``y_old + h Q p``
    (Q (ny, 4)), DOP853's Horner form over ``Q`` (7, ny) (scipy's Dop853DenseOutput)."""
    if kind == 0:
        p = x
        v = 0.0
        for k in range(Q.shape[1]):
            v += Q[i, k] * p
            p *= x
        return h * v + y_old[i]
    v = 0.0
    m = Q.shape[0]
    for r in range(m):
        v += Q[m - 1 - r, i]
        if r % 2 == 0:
            v *= x
        else:
            v *= 1.0 - x
    return v + y_old[i]


@njit(**_JIT)
def rk_chunk(kind, stages, A, B, C, E, E3, P, expo, y, f, y_old, y_new, ye, kd, K, Q,
             ops, args, consts, start, stack, nd, drv, mags, T, F, W,
             times, out_y, out_flows, gx, gw, flows, pw, step_t, step_svr, quat,
             fpar, ipar, bad_y, bad_d, max_steps):
    """Steps of the embedded pair (``kind`` 0: RK45, 1: DOP853; tableau of :class:`Tableau`)
    from ``(fpar[T_NOW], y)`` (``y``, ``f`` = its derivative, updated in place), at most
    ``max_steps`` of them and none after the first that reaches ``fpar[T_STOP]``; returns when
    they are done (status RUNNING), at the end (FINISHED)
    or on a failure: TOO_SMALL (the step fell below ten spacings of floats; ``ipar[HAS_BAD]``:
    ``bad_y``, ``bad_d`` at ``fpar[BAD_T]`` hold the step's last evaluation whose derivative was
    not finite at a finite state), NOT_FINITE (a step ended in a state that is not finite:
    ``y`` holds it, ``y_old`` and ``fpar[T_OLD]`` the state before), TIME_FUNCTION (a driver or
    magnitude is NaN at ``fpar[ERR_T]``: the caller evaluates the Python forms there).

    Output: rows ``ipar[NXT]`` on of ``times`` that the steps pass are written to ``out_y`` and
    ``out_flows`` (the work since t = 0 when ``flows`` has 3 entries, else left). The steps'
    end times are written to ``step_t`` and, with loops, their conditioning (``W.loops.svr``)
    to ``step_svr`` (``ipar[CHUNK_STEPS]`` of each). ``ipar[NEED_F0]``: evaluate ``f`` first.
    """
    # the structs' arrays, taken out once (as kernels._fixed_run does, and why: see there)
    parent, code, sgn, qo, uo, nq, nu = T.parent, T.code, T.sgn, T.qo, T.uo, T.nq, T.nu
    mo_R, mo_p, mi_R, mi_p, rc, mass, JCl = T.mo_R, T.mo_p, T.mi_R, T.mi_p, T.rc, T.mass, T.JCl
    hk, hc, href, hRref, driven = T.hk, T.hc, T.href, T.hRref, T.driven
    drv_idx, drv_q, nq_tot = T.drv_idx, T.drv_q, T.nq_tot
    loops, CC, L = T.m_tot > 0, T.loops, W.loops
    c_code, c_bi, c_Ri, c_pi, c_bo, c_Ro, c_po = CC.c_code, CC.c_bi, CC.c_Ri, CC.c_pi, \
        CC.c_bo, CC.c_Ro, CC.c_po
    c_m, c_of_row, stab, cp_u, cp_ab = CC.c_m, CC.c_of_row, CC.stab, CC.cp_u, CC.cp_ab
    Ncol, pcut, vres, phi, ccut, Acon, bcon, lam = L.Ncol, L.pcut, L.vres, L.phi, L.ccut, \
        L.Acon, L.bcon, L.lam
    dud, dx, dWh, pB, paB, rB, Wcut, loop_rank, Fcut = L.dud, L.dx, L.dWh, L.pB, L.paB, L.rB, \
        L.Wcut, L.loop_rank, L.F
    act = L.act
    Gch, Mch, pv, perm, zv, wv, svr, ref_rank = L.Gch, L.Mch, L.pv, L.perm, L.zv, L.wv, \
        L.svr, L.ref_rank
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
    q, u, dd, R, pb, pc, hp, w, vh = W.q, W.u, W.dd, W.R, W.pb, W.pc, W.hp, W.w, W.vh
    Sg, cg, RA, Wext, tau, udot, x, Wh = W.Sg, W.cg, W.RA, W.Wext, W.tau, W.udot, W.x, W.Wh
    IA, pA, U, Dinv, r0, ck, nfree, fidx = W.IA, W.pA, W.U, W.Dinv, W.r0, W.ck, W.nfree, W.fidx
    FC, TC, paS, scratch = W.FC, W.TC, W.paS, W.scratch
    Rrel, dloc, Sloc, bias = scratch.Rrel, scratch.dloc, scratch.Sloc, scratch.bias
    pf = np.zeros(3)
    S = stages
    ny = y.size
    n_out = times.size
    track = flows.size > 0
    nodes = gx.size
    t = fpar[T_NOW]
    t_end = fpar[T_END]
    h_abs = fpar[H_ABS]
    rtol = fpar[RTOL]
    atol = fpar[ATOL]
    t_old = fpar[T_OLD]
    nxt = ipar[NXT]
    nfev = ipar[NFEV]
    npower = ipar[NPOWER]
    restab = ipar[RESTAB] != 0
    done = 0
    status = RUNNING
    # the step in progress
    h = 0.0
    t_new = t
    s = 0
    rejected = False
    has_bad = False
    # dense output and quadrature
    hd = 0.0                  # t - t_old of the dense output
    a = 0.0                   # start of the piece being integrated
    b = 0.0                   # its end
    row = False               # the piece ends at an output time
    node = 0
    acc0 = 0.0
    acc1 = 0.0
    acc2 = 0.0
    phase = _F0
    te = t
    new_step = True
    if ipar[NEED_F0] != 0:
        for i in range(ny):
            ye[i] = y[i]
        evaluate = True
    else:
        evaluate = False
    while True:
        if evaluate:
            if not fill_time_functions(ops, args, consts, start, stack, nd, te, drv, mags):
                fpar[ERR_T] = te
                status = TIME_FUNCTION
                break
            # the evaluation: kernels.evaluate_into's calls (without the wrenches), with the
            # arrays taken out above and the force laws called one by one, as _fixed_run does;
            # at a quadrature node also the power (kernels.power_flows)
            quad = phase == _QUAD
            _state_in(ye, drv, nq_tot, drv_idx, drv_q, q, u, dd)
            tree_kinematics(q, u, parent, code, sgn, qo, uo, nu, mo_R, mo_p, mi_R, mi_p, rc,
                            R, pb, pc, hp, w, vh, Sg, cg, RA, Rrel, dloc, Sloc, bias)
            if applied:
                for i in range(mass.size):
                    for c in range(3):
                        FC[i, c] = mass[i] * gravity[c]
                        TC[i, c] = 0.0
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
                if quad:
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
                    dd, udot, x, Wh, IA, pA, U, Dinv, r0, ck, nfree, fidx, paS, scratch,
                    bool(False))
            if loops:
                cut_geometry(c_code, c_bi, c_Ri, c_pi, c_bo, c_Ro, c_po, c_m, c_of_row, stab,
                             cp_u, cp_ab, Fcut, Ncol, pcut, vres, phi, ccut, bcon, R, pb, w, vh,
                             hp, x, udot)
                ma, big = load_sweeps(c_bi, c_bo, c_m, c_of_row, cp_u, cp_ab, Ncol, pcut, pB,
                                      paB, rB, Acon, bcon, act, dud, dx, dWh, parent, code, uo,
                                      hp, Sg, IA, U, Dinv, nfree, fidx, bool(False),
                                      bool(True))
                rank = psd_solve(Acon, ma, bcon, lam, Gch, Mch, pv, perm, zv, wv, 1e-10 * big)
                apply_loop_loads(ma, act, rank, ref_rank, pv, svr, loop_rank, lam, dud, dx, dWh,
                                 Ncol, c_of_row, cp_ab, cp_u, Wcut, nu, uo, nfree, driven, Sg,
                                 udot, x, Wh, tau, bool(False))
            _state_rate(q, u, udot, code, qo, uo, nq, nu, nq_tot, kd)
            if quad:
                hinge_power(q, u, tau, driven, drv_q, hk, hc, href, pw)
                if applied:
                    pw[1] += pf[1]
                    pw[2] += pf[2]
            else:
                nfev += 1
                if phase != _F0:
                    finite = True
                    for i in range(ny):
                        if not math.isfinite(kd[i]):
                            finite = False
                            break
                    if not finite:
                        state_ok = True
                        for i in range(ny):
                            if not math.isfinite(ye[i]):
                                state_ok = False
                                break
                        if state_ok:
                            has_bad = True
                            fpar[BAD_T] = te
                            for i in range(ny):
                                bad_y[i] = ye[i]
                                bad_d[i] = kd[i]
            evaluate = False
        # ---- use the evaluation, ask for the next ---------------------------------------------
        if phase == _F0:
            if ipar[NEED_F0] != 0:
                for i in range(ny):
                    f[i] = kd[i]
                ipar[NEED_F0] = 0
            phase = _STAGE
            new_step = True
        if phase == _STAGE and new_step:
            # a new step (or a new try after a rejected one)
            if t >= t_end:
                status = FINISHED
                break
            if done >= max_steps or (done > 0 and t >= fpar[T_STOP]):
                break
            min_step = 10.0 * abs(np.nextafter(t, np.inf) - t)
            if h_abs < min_step:
                h_abs = min_step
            rejected = False
            has_bad = False
            new_step = False
            s = 0
        if phase == _STAGE and s == 0:
            # a try: its step, the first stage from f
            min_step = 10.0 * abs(np.nextafter(t, np.inf) - t)
            if h_abs < min_step:
                status = TOO_SMALL
                break
            h = h_abs
            t_new = t + h
            if t_new - t_end > 0.0:
                t_new = t_end
            h = t_new - t
            h_abs = abs(h)
            for i in range(ny):
                K[0, i] = f[i]
            s = 1
            te = t + C[1] * h
            for i in range(ny):
                dy = 0.0
                for j in range(1):
                    dy += K[j, i] * A[1, j]
                ye[i] = y[i] + dy * h
            evaluate = True
            continue
        if phase == _STAGE:
            for i in range(ny):
                K[s, i] = kd[i]
            s += 1
            if s < S:
                te = t + C[s] * h
                for i in range(ny):
                    dy = 0.0
                    for j in range(s):
                        dy += K[j, i] * A[s, j]
                    ye[i] = y[i] + dy * h
            else:
                for i in range(ny):
                    dy = 0.0
                    for j in range(S):
                        dy += K[j, i] * B[j]
                    y_new[i] = y[i] + h * dy
                    ye[i] = y_new[i]
                te = t_new
                phase = _FNEW
            evaluate = True
            continue
        if phase == _FNEW:
            for i in range(ny):
                K[S, i] = kd[i]
            # the error norm, scaled by atol + rtol max(|y|, |y_new|)
            if kind == 0:
                sq = 0.0
                for i in range(ny):
                    e = 0.0
                    for j in range(S + 1):
                        e += K[j, i] * E[j]
                    e = e * h / (atol + max(abs(y[i]), abs(y_new[i])) * rtol)
                    sq += e * e
                norm = math.sqrt(sq) / math.sqrt(ny)
            else:
                n5 = 0.0
                n3 = 0.0
                for i in range(ny):
                    sc = atol + max(abs(y[i]), abs(y_new[i])) * rtol
                    e5 = 0.0
                    e3 = 0.0
                    for j in range(S + 1):
                        e5 += K[j, i] * E[j]
                        e3 += K[j, i] * E3[j]
                    e5 /= sc
                    e3 /= sc
                    n5 += e5 * e5
                    n3 += e3 * e3
                if n5 == 0.0 and n3 == 0.0:
                    norm = 0.0
                else:
                    norm = abs(h) * n5 / math.sqrt((n5 + 0.01 * n3) * ny)
            if norm < 1.0:
                if norm == 0.0:
                    factor = MAX_FACTOR
                else:
                    factor = SAFETY * norm ** expo
                    if not factor < MAX_FACTOR:
                        factor = MAX_FACTOR
                if rejected and not factor < 1.0:
                    factor = 1.0
                h_abs *= factor
            else:
                factor = SAFETY * norm ** expo
                if not factor > MIN_FACTOR:
                    factor = MIN_FACTOR
                h_abs *= factor
                rejected = True
                phase = _STAGE
                s = 0
                continue
            # accepted
            t_old = t
            for i in range(ny):
                y_old[i] = y[i]
                y[i] = y_new[i]
                f[i] = K[S, i]
            t = t_new
            done += 1
            finite = True
            for i in range(ny):
                if not math.isfinite(y[i]):
                    finite = False
                    break
            step_t[done - 1] = t
            if svr.size > 0:
                step_svr[done - 1] = svr[0]
            if not finite:
                status = NOT_FINITE
                break
            hd = t - t_old
            if restab and hd > 0.0:
                ws = fpar[STAB] / hd
                stab[0] = 2.0 * ws
                stab[1] = ws * ws
            if not track and not (nxt < n_out and times[nxt] <= t):
                phase = _STAGE
                new_step = True
                continue
            if kind == 1:
                s = S + 1
                te = t_old + C[s] * h
                for i in range(ny):
                    dy = 0.0
                    for j in range(s):
                        dy += K[j, i] * A[s, j]
                    ye[i] = y_old[i] + dy * h
                phase = _EXTRA
                evaluate = True
                continue
            for i in range(ny):
                for k in range(Q.shape[1]):
                    v = 0.0
                    for j in range(S + 1):
                        v += K[j, i] * P[j, k]
                    Q[i, k] = v
            phase = _QUAD
            node = -1                     # pieces start: nothing evaluated yet
            a = t_old
        if phase == _EXTRA:
            for i in range(ny):
                K[s, i] = kd[i]
            s += 1
            if s < K.shape[0]:
                te = t_old + C[s] * h
                for i in range(ny):
                    dy = 0.0
                    for j in range(s):
                        dy += K[j, i] * A[s, j]
                    ye[i] = y_old[i] + dy * h
                evaluate = True
                continue
            for i in range(ny):
                dl = y[i] - y_old[i]
                Q[0, i] = dl
                Q[1, i] = h * K[0, i] - dl
                Q[2, i] = 2.0 * dl - h * (K[S, i] + K[0, i])
                for r in range(P.shape[0]):
                    v = 0.0
                    for j in range(K.shape[0]):
                        v += P[r, j] * K[j, i]
                    Q[3 + r, i] = h * v
            phase = _QUAD
            node = -1
            a = t_old
        if phase == _QUAD:
            if node >= 0:
                # a power evaluation done: weigh it
                acc0 += gw[node] * pw[0]
                acc1 += gw[node] * pw[1]
                acc2 += gw[node] * pw[2]
                node += 1
            else:
                # the next piece: to the next output time in the step, else to its end
                row = nxt < n_out and times[nxt] <= t
                b = times[nxt] if row else t
                if track and b > a:
                    node = 0
                    acc0 = 0.0
                    acc1 = 0.0
                    acc2 = 0.0
                else:
                    node = nodes + 1          # nothing to integrate
            if node < nodes:
                te = 0.5 * (a + b) + 0.5 * (b - a) * gx[node]
                xs = (te - t_old) / hd
                for i in range(ny):
                    ye[i] = _dense_at(kind, xs, hd, y_old, Q, i)
                evaluate = True
                continue
            if node == nodes:
                half = 0.5 * (b - a)
                flows[0] = flows[0] + half * acc0
                flows[1] = flows[1] + half * acc1
                flows[2] = flows[2] + half * acc2
                npower += nodes
            # the piece is done
            if row:
                if times[nxt] == t:
                    for i in range(ny):
                        out_y[nxt, i] = y[i]
                else:
                    xs = (b - t_old) / hd
                    for i in range(ny):
                        out_y[nxt, i] = _dense_at(kind, xs, hd, y_old, Q, i)
                for i in range(ny):
                    ye[i] = out_y[nxt, i]
                normalise_quaternions(ye, quat)
                for i in range(ny):
                    out_y[nxt, i] = ye[i]
                if track:
                    out_flows[nxt, 0] = flows[0]
                    out_flows[nxt, 1] = flows[1]
                    out_flows[nxt, 2] = flows[2]
                nxt += 1
                a = b
                node = -1
                continue
            phase = _STAGE
            new_step = True
            continue
    fpar[T_NOW] = t
    fpar[H_ABS] = h_abs
    fpar[T_OLD] = t_old
    ipar[NXT] = nxt
    ipar[NFEV] = nfev
    ipar[NPOWER] = npower
    ipar[STEPS] += done
    ipar[CHUNK_STEPS] = done
    ipar[STATUS] = status
    ipar[HAS_BAD] = 1 if has_bad else 0
    return status
