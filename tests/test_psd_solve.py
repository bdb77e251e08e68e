"""The loop closure's solve of its constraint compliance (mstmm kernels.psd_solve): the scalar
path for up to three rows gives the general factorisation's results to the bit, and both solve
the system (minimum-norm where the rank is lost)."""

import numpy as np
import pytest

from MultibodyWB.solver.methods.mstmm import kernels as K


def _solve(fn, A, b, tol):
    m = A.shape[0]
    big = 6
    Ap = np.zeros((big, big))
    Ap[:m, :m] = A
    bp = np.zeros(big)
    bp[:m] = b
    x = np.full(big, np.nan)
    pv = np.full(big, np.nan)
    G, M = np.zeros((big, big)), np.zeros((big, big))
    perm = np.zeros(big, dtype=np.int64)
    z, w = np.zeros(big), np.zeros(big)
    r = fn(Ap, m, bp, x, G, M, pv, perm, z, w, tol)
    return r, x[:m], pv[:m]


def _psd(rng, m, rank):
    """A symmetric positive semi-definite m x m matrix of the given rank, with diagonal
    entries of unequal size (every pivot order happens), made exactly symmetric."""
    B = rng.standard_normal((m, rank)) * rng.uniform(0.01, 100.0, (m, 1))
    A = B @ B.T
    return 0.5 * (A + A.T)


@pytest.mark.parametrize("m", [1, 2, 3])
def test_up_to_three_rows_the_same_bits_as_the_general_factorisation(m):
    rng = np.random.default_rng(7 + m)
    orders = set()
    for _ in range(300):
        A = _psd(rng, m, m)
        b = rng.standard_normal(m)
        tol = 1e-10 * A.diagonal().max()
        r, x, pv = _solve(K.psd_solve, A, b, tol)
        rg, xg, pvg = _solve(K._psd_general, A, b, tol)
        assert r == rg == m
        assert x.tobytes() == xg.tobytes() and pv.tobytes() == pvg.tobytes()
        assert np.allclose(A @ x, b, rtol=1e-8, atol=1e-8 * np.abs(b).max())
        orders.add(tuple(np.argsort(-A.diagonal(), kind="stable")))
    assert len(orders) == (1, 2, 6)[m - 1]          # every first pivot and order met


@pytest.mark.parametrize("m", [2, 3])
def test_a_lost_rank_goes_to_the_general_code_minimum_norm(m):
    rng = np.random.default_rng(11 + m)
    for _ in range(100):
        A = _psd(rng, m, m - 1)
        b = A @ rng.standard_normal(m)              # consistent: in A's range
        tol = 1e-10 * A.diagonal().max()
        r, x, pv = _solve(K.psd_solve, A, b, tol)
        rg, xg, pvg = _solve(K._psd_general, A, b, tol)
        assert r == rg == m - 1
        assert x.tobytes() == xg.tobytes() and pv.tobytes() == pvg.tobytes()
        assert np.allclose(x, np.linalg.pinv(A) @ b, rtol=1e-6, atol=1e-9 * np.abs(x).max())


def test_more_rows_and_none():
    rng = np.random.default_rng(3)
    A = _psd(rng, 5, 5)
    b = rng.standard_normal(5)
    r, x, _ = _solve(K.psd_solve, A, b, 1e-10 * A.diagonal().max())
    assert r == 5 and np.allclose(A @ x, b)
    assert _solve(K.psd_solve, np.zeros((0, 0)), np.zeros(0), 0.0)[0] == 0
