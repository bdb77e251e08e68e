"""The implicit integrator compiled with the evaluation (issue 35, item 2): TR-BDF2, for stiff
models (penalty contact with friction, stiff spring-dampers and bushings, track pins), with a
fixed step (``trbdf2``) or an adaptive one (``trbdf2-adaptive``).

The method (Bank et al. 1985; Hosea and Shampine 1996, the method of MATLAB's ``ode23tb``) is a
2nd order, L-stable singly diagonally implicit Runge-Kutta method with an explicit first
stage, ``gamma = 2 - sqrt(2)`` and the diagonal ``d = gamma / 2``:

- stage 1: ``f1 = f(t, y)`` (the last stage of the step before: first same as last);
- stage 2, the trapezoidal rule to ``t + gamma h``: ``z2 = y + d h (f1 + f(t + gamma h, z2))``;
- stage 3, BDF2 to ``t + h``: ``y_new = z3 = y + h (w f1 + w f2 + d f(t + h, z3))``,
  ``w = sqrt(2) / 4``.

Both implicit stages are solved by the simplified Newton iteration with the same matrix
``M = I - d h J``: ``J = df/dy`` by forward differences of the same compiled evaluation
(``ny + 1`` evaluations, the perturbation ``sqrt(eps) max(|y_j|, JAC_TYPICAL)``), kept over the
steps and computed again only when Newton converged slowly (more than :data:`SLOW_ITERATIONS`
iterations) or failed (then the step is tried again with the fresh ``J``, and only a failure
with a fresh ``J`` halves the step); ``M`` is LU-factored (:func:`lu_factor`, partial
pivoting) once for each ``(J, h)`` and solved for every iteration (:func:`lu_solve`). The
iteration stops on the scaled increment (``atol + rtol |y|``, RMS) with Hairer and Wanner's
rate estimate (``eta ||dz|| <= kappa``, ``kappa = max(10 eps / rtol, min(0.03, sqrt(rtol)))``)
and fails on a rate ``>= 1``, on a rate that cannot reach ``kappa`` in the iterations left, or
on a derivative that is not finite. A converged stage's derivative is taken from the stage
equation, ``f = (z - c) / (d h)``, as ``ode23tb`` does (no evaluation of its own).

Error estimate (``trbdf2-adaptive``): Hosea and Shampine's, the difference to the embedded 3rd
order combination ``h ((1 - w)/3 f1 + (3 w + 1)/3 f2 + d/3 f3)``, i.e.
``h ((4 w - 1)/3 f1 - 1/3 f2 + 2 d/3 f3)``, filtered through ``M^-1`` (as Radau IIA codes
filter theirs: on the stiff components the raw estimate is of size ``h f`` and would hold
the step to the explicit limit); step factor ``0.9 err^(-1/3)`` between 0.2 and 5, no growth
right after a rejected step, and a step kept as it is (no new LU) for factors in [1, 1.2].
With the fixed step ``trbdf2`` every step whose Newton iterations converge is accepted;
a failure halves the step (down to ``Step / 1024``), which then doubles back to ``Step``.

Output and the rest as :func:`.adaptive.rk_chunk`: rows from the cubic Hermite interpolant of
each step (``y`` and ``f`` at both ends) at the output times, quaternions normalised in the
rows (and, with the fixed step, in the state after every step, as rk4 does); the work of
drivers, applied forces and dampers integrated over the same interpolant by Gauss-Legendre
quadrature cut at the output times; closed loops' stabilisation tuned to the step just taken;
their conditioning recorded at every step. The evaluation is :func:`.kernels.evaluate_into`
with the structs (dearer per call than the sequence written out in ``rk_chunk``: the figures
are in docs/benchmarks.md), called from :func:`_evaluate` only; LLVM inlines it into each of
:func:`_newton`, :func:`_jacobian` and :func:`trbdf2_chunk`, which makes this module's
compile about as long as ``rk_chunk``'s several times over (issue 36 gives the evaluation one
place).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ...maths.small import _JIT
from ...model.settings import IMPLICIT
from ...model.timeprogram import fill_time_functions
from ..shared.power import power_flows
from .kernels import evaluate_into, normalise_quaternions

#: The integrators of this module (their names in the settings): fixed step, adaptive.
NAMES = IMPLICIT
FIXED, ADAPTIVE = IMPLICIT

GAMMA = 2.0 - math.sqrt(2.0)
D = GAMMA / 2.0
WB = math.sqrt(2.0) / 4.0
#: the error estimate's weights of f1, f2, f3 (times h)
E1 = (4.0 * WB - 1.0) / 3.0
E2 = -1.0 / 3.0
E3 = 2.0 * D / 3.0

SAFETY = 0.9
MIN_FACTOR = 0.2
MAX_FACTOR = 5.0
#: most Newton iterations of a stage
MAX_ITERATIONS = 7
#: more iterations than this in a stage: a new Jacobian before the next step
SLOW_ITERATIONS = 3
#: the Jacobian's perturbation: sqrt(eps) max(|y_j|, JAC_TYPICAL)
JAC_TYPICAL = 1e-3
#: the fixed step's smallest substep after Newton failures: Step / MAX_HALVINGS
MAX_HALVINGS = 1024.0
#: Gauss-Legendre nodes of the work quadrature over a step's cubic Hermite interpolant
WORK_NODES = 3

# fpar: the run's floats, carried from chunk to chunk
(T_NOW, H_ABS, T_END, RTOL, ATOL, T_OLD, BAD_T, ERR_T, STAB, T_STOP, H_MAX, ETA,
 H_LU) = range(13)
N_FPAR = 13
# ipar: the run's integers
(NXT, NFEV, STEPS, STATUS, HAS_BAD, NPOWER, CHUNK_STEPS, NEED_F0, RESTAB, IS_ADAPTIVE, NJAC,
 NLU, NEED_J, NREJECT, NFAIL, J_FRESH) = range(16)
N_IPAR = 16
# statuses (the first five as adaptive.rk_chunk's)
RUNNING, FINISHED, TOO_SMALL, NOT_FINITE, TIME_FUNCTION, NO_CONVERGENCE = range(6)
#: scipy's message for a step smaller than the spacing of floats (as adaptive.TOO_SMALL_STEP)
TOO_SMALL_STEP = "Required step size is less than spacing between numbers."


@njit(**_JIT)
def lu_factor(A, piv):
    """``A`` (n, n) into its LU factors in place, partial pivoting (row swaps in ``piv``);
    False when a pivot is zero or not finite (``A`` singular or not finite)."""
    n = A.shape[0]
    for k in range(n):
        p = k
        big = abs(A[k, k])
        for i in range(k + 1, n):
            v = abs(A[i, k])
            if v > big:
                big = v
                p = i
        if not (big > 0.0 and math.isfinite(big)):
            return False
        piv[k] = p
        if p != k:
            for j in range(n):
                tmp = A[k, j]
                A[k, j] = A[p, j]
                A[p, j] = tmp
        inv = 1.0 / A[k, k]
        for i in range(k + 1, n):
            m = A[i, k] * inv
            A[i, k] = m
            if m != 0.0:
                for j in range(k + 1, n):
                    A[i, j] -= m * A[k, j]
    return True


@njit(**_JIT)
def lu_solve(LU, piv, b):
    """Solve ``A x = b`` in place (``b`` becomes ``x``) with :func:`lu_factor`'s factors."""
    n = LU.shape[0]
    for k in range(n):
        p = piv[k]
        if p != k:
            tmp = b[k]
            b[k] = b[p]
            b[p] = tmp
    for i in range(n):
        s = b[i]
        for j in range(i):
            s -= LU[i, j] * b[j]
        b[i] = s
    for i in range(n - 1, -1, -1):
        s = b[i]
        for j in range(i + 1, n):
            s -= LU[i, j] * b[j]
        b[i] = s / LU[i, i]


@njit(**_JIT)
def _evaluate(te, ye, kd, ops, args, consts, start, stack, nd, drv, mags, T, F, W):
    """``kd = f(te, ye)``; False when a driver or magnitude is not finite at ``te``."""
    if not fill_time_functions(ops, args, consts, start, stack, nd, te, drv, mags):
        return False
    evaluate_into(ye, drv, mags, T, F, W, kd)
    return True


@njit(**_JIT)
def _hermite(s, hd, y0, f0, y1, f1, out):
    """The cubic Hermite interpolant of a step at ``s = (t - t_old) / hd`` into ``out``."""
    s2 = s * s
    s3 = s2 * s
    h00 = 2.0 * s3 - 3.0 * s2 + 1.0
    h10 = (s3 - 2.0 * s2 + s) * hd
    h01 = -2.0 * s3 + 3.0 * s2
    h11 = (s3 - s2) * hd
    for i in range(out.size):
        out[i] = h00 * y0[i] + h10 * f0[i] + h01 * y1[i] + h11 * f1[i]


@njit(**_JIT)
def _newton(ts, c, z, dh, LU, piv, scale, kappa, eta0, ye, kd, dz,
            ops, args, consts, start, stack, nd, drv, mags, T, F, W,
            fpar, ipar, bad_y, bad_d):
    """Solve ``z = c + dh f(ts, z)`` from the guess ``z`` (in place) by the simplified Newton
    iteration with the factors of ``I - dh J``. Returns ``(code, iterations, eta)``: code 0
    converged, 1 failed (diverged, too slow, a derivative not finite: recorded in ``bad_y``,
    ``bad_d``, ``fpar[BAD_T]`` when the state was finite), 2 a time function not finite."""
    ny = z.size
    eta = eta0
    norm_prev = 0.0
    for k in range(MAX_ITERATIONS):
        for i in range(ny):
            ye[i] = z[i]
        if not _evaluate(ts, ye, kd, ops, args, consts, start, stack, nd, drv, mags, T, F, W):
            fpar[ERR_T] = ts
            return 2, k, eta
        ipar[NFEV] += 1
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
                ipar[HAS_BAD] = 1
                fpar[BAD_T] = ts
                for i in range(ny):
                    bad_y[i] = ye[i]
                    bad_d[i] = kd[i]
            return 1, k + 1, eta
        for i in range(ny):
            dz[i] = c[i] + dh * kd[i] - z[i]
        lu_solve(LU, piv, dz)
        sq = 0.0
        for i in range(ny):
            z[i] += dz[i]
            e = dz[i] / scale[i]
            sq += e * e
        norm = math.sqrt(sq / ny)
        if not math.isfinite(norm):
            return 1, k + 1, eta
        theta = 0.0
        if k > 0:
            theta = norm / norm_prev
            if not theta < 0.99:
                return 1, k + 1, eta
            eta = theta / (1.0 - theta)
        if eta * norm <= kappa or norm == 0.0:
            return 0, k + 1, eta
        # cannot reach kappa in the iterations left
        if k > 0 and theta ** (MAX_ITERATIONS - 1 - k) / (1.0 - theta) * norm > kappa:
            return 1, k + 1, eta
        norm_prev = norm
    return 1, MAX_ITERATIONS, eta


@njit(**_JIT)
def _jacobian(t, y, f0, ye, kd, Jm, ops, args, consts, start, stack, nd, drv, mags, T, F, W,
              ipar):
    """``Jm = df/dy`` at ``(t, y)`` by forward differences (``f0``: f there, evaluated here);
    False when a time function is not finite at ``t``."""
    ny = y.size
    for i in range(ny):
        ye[i] = y[i]
    if not _evaluate(t, ye, f0, ops, args, consts, start, stack, nd, drv, mags, T, F, W):
        return False
    eps = math.sqrt(np.finfo(np.float64).eps)
    for j in range(ny):
        yj = y[j]
        delta = eps * max(abs(yj), JAC_TYPICAL)
        ye[j] = yj + delta
        delta = ye[j] - yj                        # the step as represented
        _evaluate(t, ye, kd, ops, args, consts, start, stack, nd, drv, mags, T, F, W)
        for i in range(ny):
            Jm[i, j] = (kd[i] - f0[i]) / delta
        ye[j] = yj
    ipar[NFEV] += ny + 1
    ipar[NJAC] += 1
    return True


@njit(**_JIT)
def trbdf2_chunk(y, f, y_old, f_old, f2, z2, z3, c, ye, kd, dz, scale, est, Jm, LU, piv,
                 ops, args, consts, start, stack, nd, drv, mags, T, F, W,
                 times, out_y, out_flows, gx, gw, flows, pw, step_t, step_svr, quat,
                 fpar, ipar, bad_y, bad_d, max_steps):
    """TR-BDF2 steps from ``(fpar[T_NOW], y)`` (``y`` and ``f`` = its derivative, updated in
    place; ``ipar[NEED_F0]``: evaluate ``f`` first), at most ``max_steps`` of them and none
    after the first that reaches ``fpar[T_STOP]``; ``ipar[IS_ADAPTIVE]`` 1: error control at
    ``fpar[RTOL], fpar[ATOL]``, else the fixed step ``fpar[H_MAX]``. Returns the status:
    RUNNING (the steps are done), FINISHED, TOO_SMALL (the adaptive step fell below ten
    spacings of floats), NO_CONVERGENCE (Newton failed with a fresh Jacobian down to the
    smallest step; ``ipar[HAS_BAD]``: ``bad_y``, ``bad_d`` at ``fpar[BAD_T]`` hold an
    evaluation whose derivative was not finite at a finite state), NOT_FINITE (a step ended
    in a state that is not finite: ``y`` holds it, ``y_old`` the state before), TIME_FUNCTION
    (a driver or magnitude is NaN at ``fpar[ERR_T]``).

    Output as :func:`.adaptive.rk_chunk`'s: rows ``ipar[NXT]`` on of ``times`` into ``out_y``
    and ``out_flows``, the steps' end times into ``step_t`` and the loops' conditioning into
    ``step_svr`` (``ipar[CHUNK_STEPS]`` of each). Work arrays: ``f_old f2 z2 z3 c ye kd dz
    scale est`` (ny), ``Jm LU`` (ny, ny), ``piv`` (ny, int).
    """
    ny = y.size
    n_out = times.size
    track = flows.size > 0
    nodes = gx.size
    loop_stab = T.loops.stab
    svr = W.loops.svr
    t = fpar[T_NOW]
    t_end = fpar[T_END]
    h_abs = fpar[H_ABS]
    h_max = fpar[H_MAX]
    rtol = fpar[RTOL]
    atol = fpar[ATOL]
    t_old = fpar[T_OLD]
    eta = fpar[ETA]
    h_lu = fpar[H_LU]
    adaptive = ipar[IS_ADAPTIVE] != 0
    restab = ipar[RESTAB] != 0
    need_j = ipar[NEED_J] != 0
    jac_fresh = ipar[J_FRESH] != 0
    nxt = ipar[NXT]
    kappa = max(10.0 * np.finfo(np.float64).eps / rtol, min(0.03, math.sqrt(rtol)))
    status = RUNNING
    done = 0
    rejected = False
    newton_failed = False
    if ipar[NEED_F0] != 0:
        for i in range(ny):
            ye[i] = y[i]
        if not _evaluate(t, ye, f, ops, args, consts, start, stack, nd, drv, mags, T, F, W):
            fpar[ERR_T] = t
            ipar[STATUS] = TIME_FUNCTION
            return TIME_FUNCTION
        ipar[NFEV] += 1
        ipar[NEED_F0] = 0
    while True:
        if t >= t_end:
            status = FINISHED
            break
        if done >= max_steps or (done > 0 and t >= fpar[T_STOP]):
            break
        if need_j:
            if not _jacobian(t, y, est, ye, kd, Jm, ops, args, consts, start, stack, nd, drv,
                             mags, T, F, W, ipar):
                fpar[ERR_T] = t
                status = TIME_FUNCTION
                break
            need_j = False
            jac_fresh = True
            h_lu = 0.0                                # factor again
        spacing = 10.0 * abs(np.nextafter(t, np.inf) - t)
        h_min = spacing if adaptive else max(spacing, h_max / MAX_HALVINGS)
        if h_abs < h_min:
            status = NO_CONVERGENCE if newton_failed else TOO_SMALL
            break
        t_new = t + h_abs
        if t_new > t_end:
            t_new = t_end
        h = t_new - t
        if abs(h - h_lu) > 1e-9 * h:           # (not the last bits of t + h - t)
            for i in range(ny):
                for j in range(ny):
                    LU[i, j] = -D * h * Jm[i, j]
                LU[i, i] += 1.0
            ipar[NLU] += 1
            if not lu_factor(LU, piv):
                h_lu = 0.0
                newton_failed = True
                if not jac_fresh:
                    need_j = True
                else:
                    h_abs *= 0.5
                    rejected = True
                ipar[NFAIL] += 1
                continue
            h_lu = h
        dh = D * h
        for i in range(ny):
            scale[i] = atol + rtol * abs(y[i])
        eta0 = max(eta, np.finfo(np.float64).eps) ** 0.8
        # stage 2: the trapezoidal rule to t + gamma h
        for i in range(ny):
            c[i] = y[i] + dh * f[i]
            z2[i] = y[i] + GAMMA * h * f[i]
        code, it2, eta = _newton(t + GAMMA * h, c, z2, dh, LU, piv, scale, kappa, eta0, ye, kd,
                                 dz, ops, args, consts, start, stack, nd, drv, mags, T, F, W,
                                 fpar, ipar, bad_y, bad_d)
        if code == 2:
            status = TIME_FUNCTION
            break
        it3 = 0
        if code == 0:
            for i in range(ny):
                f2[i] = (z2[i] - c[i]) / dh
            # stage 3: BDF2 to t + h (guess: the line through y and z2)
            for i in range(ny):
                c[i] = y[i] + WB * h * (f[i] + f2[i])
                z3[i] = y[i] + (z2[i] - y[i]) / GAMMA
            code, it3, eta = _newton(t + h, c, z3, dh, LU, piv, scale, kappa,
                                     max(eta, np.finfo(np.float64).eps) ** 0.8, ye, kd, dz,
                                     ops, args, consts, start, stack, nd, drv, mags, T, F, W,
                                     fpar, ipar, bad_y, bad_d)
            if code == 2:
                status = TIME_FUNCTION
                break
        if code != 0:
            # Newton failed: a fresh Jacobian first, then a smaller step
            ipar[NFAIL] += 1
            newton_failed = True
            eta = 1.0
            if not jac_fresh:
                need_j = True
            else:
                h_abs *= 0.5
                rejected = True
            continue
        # est: f3, then the error estimate
        for i in range(ny):
            est[i] = (z3[i] - c[i]) / dh               # f3
        if adaptive:
            for i in range(ny):
                kd[i] = h * (E1 * f[i] + E2 * f2[i] + E3 * est[i])
            lu_solve(LU, piv, kd)                      # filtered: (I - d h J)^-1 err
            sq = 0.0
            for i in range(ny):
                e = kd[i] / (atol + rtol * max(abs(y[i]), abs(z3[i])))
                sq += e * e
            norm = math.sqrt(sq / ny)
            if not norm <= 1.0:
                if math.isfinite(norm):
                    factor = max(MIN_FACTOR, SAFETY * norm ** (-1.0 / 3.0))
                else:
                    factor = MIN_FACTOR
                h_abs = h * factor
                rejected = True
                newton_failed = False
                ipar[NREJECT] += 1
                continue
            if norm == 0.0:
                factor = MAX_FACTOR
            else:
                factor = min(MAX_FACTOR, SAFETY * norm ** (-1.0 / 3.0))
            if rejected and factor > 1.0:
                factor = 1.0
            if 1.0 <= factor <= 1.2:
                factor = 1.0                           # keep the factors
            h_abs = h * factor
        else:
            h_abs = min(2.0 * h_abs, h_max)
        # accepted
        t_old = t
        for i in range(ny):
            y_old[i] = y[i]
            f_old[i] = f[i]
            y[i] = z3[i]
            f[i] = est[i]
        t = t_new
        done += 1
        rejected = False
        newton_failed = False
        jac_fresh = False
        if it2 > SLOW_ITERATIONS or it3 > SLOW_ITERATIONS:
            need_j = True
        step_t[done - 1] = t
        if svr.size > 0:
            step_svr[done - 1] = svr[0]
        finite = True
        for i in range(ny):
            if not math.isfinite(y[i]):
                finite = False
                break
        if not finite:
            status = NOT_FINITE
            break
        if not adaptive:
            normalise_quaternions(y, quat)
        hd = t - t_old
        if restab and hd > 0.0:
            ws = fpar[STAB] / hd
            loop_stab[0] = 2.0 * ws
            loop_stab[1] = ws * ws
        # rows and work over the step's interpolant, in pieces cut at the output times
        a = t_old
        failed = False
        while True:
            row = nxt < n_out and times[nxt] <= t
            b = times[nxt] if row else t
            if track and b > a:
                acc0 = 0.0
                acc1 = 0.0
                acc2 = 0.0
                for node in range(nodes):
                    te = 0.5 * (a + b) + 0.5 * (b - a) * gx[node]
                    _hermite((te - t_old) / hd, hd, y_old, f_old, y, f, ye)
                    if not _evaluate(te, ye, kd, ops, args, consts, start, stack, nd, drv,
                                     mags, T, F, W):
                        fpar[ERR_T] = te
                        failed = True
                        break
                    power_flows(W.q, W.u, W.tau, mags, T.driven, T.drv_q, T.hk, T.hc, T.href,
                                F, W.R, W.pb, W.pc, W.hp, W.w, W.vh, pw)
                    acc0 += gw[node] * pw[0]
                    acc1 += gw[node] * pw[1]
                    acc2 += gw[node] * pw[2]
                if failed:
                    break
                half = 0.5 * (b - a)
                flows[0] += half * acc0
                flows[1] += half * acc1
                flows[2] += half * acc2
                ipar[NPOWER] += nodes
            if not row:
                break
            if b == t:
                for i in range(ny):
                    ye[i] = y[i]
            else:
                _hermite((b - t_old) / hd, hd, y_old, f_old, y, f, ye)
            normalise_quaternions(ye, quat)
            for i in range(ny):
                out_y[nxt, i] = ye[i]
            if track:
                out_flows[nxt, 0] = flows[0]
                out_flows[nxt, 1] = flows[1]
                out_flows[nxt, 2] = flows[2]
            nxt += 1
            a = b
        if failed:
            status = TIME_FUNCTION
            break
    fpar[T_NOW] = t
    fpar[H_ABS] = h_abs
    fpar[T_OLD] = t_old
    fpar[ETA] = eta
    fpar[H_LU] = h_lu
    ipar[NXT] = nxt
    ipar[STEPS] += done
    ipar[CHUNK_STEPS] = done
    ipar[STATUS] = status
    ipar[NEED_J] = 1 if need_j else 0
    ipar[J_FRESH] = 1 if jac_fresh else 0
    return status
