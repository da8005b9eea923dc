"""Optimal transport between mixture weights (the mixture Wasserstein distance MW2).

The reference for every number is scipy's linear program (HiGHS) on the full set of marginal
constraints, one problem per pair, written here independently of the library.
"""

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import optimize

import skcalib.distributions._transport as dist_mod
from skcalib import skce
from skcalib.distributions import Mixture, MultivariateNormal, Normal, pairwise_wasserstein
from skcalib.kernels import GaussianKernel, WassersteinKernel, tensor


def lp_transport(a, b, C):
    """min sum_kl w_kl C_kl subject to the row sums a and the column sums b (all of them)."""
    M, K = C.shape
    A_eq = np.zeros((M + K, M * K))
    for k in range(M):
        A_eq[k, k * K:(k + 1) * K] = 1.0
    for l in range(K):
        A_eq[M + l, l::K] = 1.0
    res = optimize.linprog(C.ravel(), A_eq=A_eq, b_eq=np.concatenate([a, b]), bounds=(0, None),
                           method="highs", options={"primal_feasibility_tolerance": 1e-10,
                                                    "dual_feasibility_tolerance": 1e-10})
    assert res.status == 0
    return res.fun


def hard_batch(rng, M, K, n=120):
    """Random marginals and costs with the degenerate cases mixed in: zero weights, identical
    marginals with a zero-cost diagonal, weights on a coarse grid (ties of partial sums), integer
    costs (ties of reduced costs), and all-equal costs."""
    a = rng.dirichlet(np.ones(M), n)
    b = rng.dirichlet(np.ones(K), n)
    C = rng.uniform(0, 4, (n, M, K)) ** 2
    a[:10, 0] = 0.0
    b[10:20, -1] = 0.0
    if M == K:
        b[20:30] = a[20:30]
        C[20:30, np.arange(M), np.arange(M)] = 0.0
    a[30:45] = np.round(a[30:45], 1) + 1e-3
    b[30:45] = np.round(b[30:45], 1) + 1e-3
    C[45:60] = np.round(C[45:60])
    C[60:65] = 2.5
    a /= a.sum(1, keepdims=True)
    b /= b.sum(1, keepdims=True)
    return a, b, C


SHAPES = [(2, 2), (2, 3), (3, 2), (2, 6), (3, 3), (3, 4), (4, 3), (4, 4), (5, 3), (5, 5), (7, 6)]


@pytest.mark.parametrize("M, K", SHAPES)
def test_transport_cost_matches_linprog(M, K):
    rng = np.random.default_rng(100 * M + K)
    a, b, C = hard_batch(rng, M, K)
    ref = np.array([lp_transport(a[i], b[i], C[i]) for i in range(a.shape[0])])
    got = dist_mod._transport_cost(a, b, C)
    assert_allclose(got, ref, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("rule", ["bland", "lp_guard"])
def test_transport_simplex_pivoting_rules_and_guard(monkeypatch, rule):
    # Bland's rule from the first pivot (the anti-cycling rule) and the linear-program guard must
    # give the same optimum as the reference.
    if rule == "bland":
        monkeypatch.setattr(dist_mod, "_SIMPLEX_DANTZIG_ITERATIONS", 0)
    else:
        monkeypatch.setattr(dist_mod, "_SIMPLEX_MAX_ITERATIONS", 0)
    rng = np.random.default_rng(7)
    a, b, C = hard_batch(rng, 4, 4, n=80)
    ref = np.array([lp_transport(a[i], b[i], C[i]) for i in range(80)])
    assert_allclose(dist_mod._transport_cost(a, b, C), ref, rtol=1e-9, atol=1e-9)


def test_two_by_two_closed_form_is_the_end_point_of_the_segment():
    # 2 x 2: w_11 = t in [max(0, a1 + b1 - 1), min(a1, b1)], cost linear in t.
    rng = np.random.default_rng(3)
    a1, b1 = rng.uniform(size=50), rng.uniform(size=50)
    C = rng.normal(size=(50, 2, 2)) ** 2
    lo, hi = np.maximum(0.0, a1 + b1 - 1), np.minimum(a1, b1)

    def cost(t):
        return (C[:, 0, 0] * t + C[:, 0, 1] * (a1 - t) + C[:, 1, 0] * (b1 - t)
                + C[:, 1, 1] * (1 - a1 - b1 + t))

    ref = np.minimum(cost(lo), cost(hi))
    got = dist_mod._transport_cost(np.column_stack([a1, 1 - a1]), np.column_stack([b1, 1 - b1]), C)
    assert_allclose(got, ref, rtol=1e-12, atol=1e-14)


def test_rows_summing_to_one_within_tolerance_are_accepted():
    # Mixture weights may sum to 1 +- 1e-9 (within sqrt(eps)); the transport must still find a
    # plan (a linear program on unequal masses is infeasible).
    a = np.array([[0.5, 0.5 - 1e-9, 0.0]])
    b = np.array([[1.0, 0.0, 0.0]])
    C = np.arange(9.0).reshape(1, 3, 3)
    assert_allclose(dist_mod._transport_cost(a, b, C), [0.5 * 0 + 0.5 * 3], rtol=1e-8)


def _mixture(rng, n, M, loc_scale=2.0):
    W = rng.dirichlet(np.ones(M), size=n)
    comps = [Normal(rng.normal(size=n) * loc_scale, rng.uniform(0.2, 2.0, n)) for _ in range(M)]
    return W, comps, Mixture(W, comps)


def _reference_mw2(W1, c1, W2, c2, i, j):
    C = np.array([[(p.loc[i] - q.loc[j]) ** 2 + (p.scale[i] - q.scale[j]) ** 2 for q in c2]
                  for p in c1])
    return math.sqrt(max(lp_transport(W1[i], W2[j], C), 0.0))


@pytest.mark.parametrize("M, K", [(2, 2), (3, 3), (2, 4), (4, 3)])
def test_pairwise_mixture_w2_matches_linprog(M, K):
    rng = np.random.default_rng(M * 10 + K)
    W1, c1, p = _mixture(rng, 7, M)
    W2, c2, q = _mixture(rng, 6, K)
    D = pairwise_wasserstein(p, q)
    ref = np.array([[_reference_mw2(W1, c1, W2, c2, i, j) for j in range(6)] for i in range(7)])
    assert_allclose(D, ref, rtol=1e-8, atol=1e-8)


def test_wasserstein_kernel_gram_and_skce_on_unequal_mixtures_match_linprog():
    # The kernel matrix used by the SKCE, built from the reference transport values, gives the
    # same unbiased estimate.
    rng = np.random.default_rng(11)
    n = 12
    W, comps, mix = _mixture(rng, n, 3)
    D = np.array([[_reference_mw2(W, comps, W, comps, i, j) for j in range(n)] for i in range(n)])
    assert_allclose(WassersteinKernel(1.0)(mix), np.exp(-D), rtol=1e-8, atol=1e-12)
    y = mix.sample(random_state=2)
    # Reference SKCE: h_ij = k(p_i, p_j) (k_y(y_i, y_j) - e1(p_i, y_j) - e1(p_j, y_i) + e2(p_i, p_j))
    # with the Gaussian target kernel, from 1-D normal convolutions (all component pairs).
    g = 1.0 / 2.0

    def e_normal(m, v):  # E exp(-g (Z)^2), Z ~ N(m, v)
        return np.exp(-g * m * m / (1 + 2 * g * v)) / np.sqrt(1 + 2 * g * v)

    loc = np.stack([c.loc for c in comps], 1)
    var = np.stack([c.scale ** 2 for c in comps], 1)
    e1 = np.einsum("ik,ijk->ij", W, e_normal(loc[:, None, :] - y[None, :, None], var[:, None, :]))
    e2 = np.einsum("ik,jl,ijkl->ij", W, W,
                   e_normal(loc[:, None, :, None] - loc[None, :, None, :],
                            var[:, None, :, None] + var[None, :, None, :]))
    ky = np.exp(-g * (y[:, None] - y[None, :]) ** 2)
    H = np.exp(-D) * (ky - e1 - e1.T + e2)
    ref = (H.sum() - np.trace(H)) / (n * (n - 1))
    got = skce(y, mix, kernel=tensor(WassersteinKernel(1.0), GaussianKernel(1.0)))
    assert got == pytest.approx(ref, rel=1e-8, abs=1e-12)


def test_unequal_mixture_transport_solves_no_linear_program(monkeypatch):
    # The batched paths replace the per-pair linear programs that made n = 150 take > 30 s.
    def forbidden(*args, **kwargs):
        raise AssertionError("linprog called")

    monkeypatch.setattr(dist_mod.optimize, "linprog", forbidden)
    rng = np.random.default_rng(5)
    for M in (2, 3, 5):
        _, _, mix = _mixture(rng, 30, M)
        D = pairwise_wasserstein(mix)
        assert D.shape == (30, 30) and np.all(np.isfinite(D))
        assert_allclose(np.diag(D), 0.0, atol=1e-7)
        assert_allclose(D, D.T, rtol=1e-9, atol=1e-9)


def test_mvn_mixture_transport_matches_linprog():
    rng = np.random.default_rng(9)
    n, M = 5, 3
    W = rng.dirichlet(np.ones(M), n)
    comps = [MultivariateNormal(rng.normal(size=(n, 2)), rng.uniform(0.1, 1.0, (n, 2)))
             for _ in range(M)]
    mix = Mixture(W, comps)
    D = pairwise_wasserstein(mix)
    for i in range(n):
        for j in range(n):
            C = np.array([[np.sum((p.mean[i] - q.mean[j]) ** 2)
                           + np.sum((np.sqrt(p.cov[i]) - np.sqrt(q.cov[j])) ** 2)
                           for q in comps] for p in comps])
            assert D[i, j] == pytest.approx(math.sqrt(max(lp_transport(W[i], W[j], C), 0)),
                                            rel=1e-8, abs=1e-8)


@pytest.mark.parametrize("M, K", [(2, 3), (3, 3), (2, 2), (5, 3)])
def test_transport_never_writes_into_its_inputs(M, K):
    rng = np.random.default_rng(M + 7 * K)
    a, b, C = hard_batch(rng, M, K, n=70)
    copies = [x.copy() for x in (a, b, C)]
    for x in (a, b, C):
        x.flags.writeable = False
    dist_mod._transport_cost(a, b, C)
    dist_mod._transport_cost(a[:1], b[:1], C[:1])  # single pair: contiguous views
    for x, ref in zip((a, b, C), copies):
        np.testing.assert_array_equal(x, ref)
