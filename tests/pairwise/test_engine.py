"""The pairwise engine: chunked results equal a small dense computation, for every statistic."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from skcalib import _pairwise, skce
from skcalib._validation import check_labels_and_probabilities
from skcalib.kernels import ExponentialKernel, GaussianKernel, TensorProductKernel
from skcalib._problems.estimates import contributions
from skcalib._problems.terms import classification_term

KERNELS = [
    GaussianKernel(0.3),
    ExponentialKernel(0.5),
    ExponentialKernel(0.4, metric="tv"),
]


def _data(n, C, seed):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(C) * 0.5, size=n)
    y = rng.integers(0, C, size=n)
    return y, P


def _term(y, P, kernel):
    data = check_labels_and_probabilities(y, P, labels=np.arange(P.shape[1]))
    return classification_term(data, TensorProductKernel(kernel))


def _dense_h(y, P, kernel):
    """Brute force: h_ij = k(p_i, p_j) (delta_{y_i y_j} - p_i[y_j] - p_j[y_i] + <p_i, p_j>)."""
    n = len(y)
    K = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            if isinstance(kernel, GaussianKernel):
                K[i, j] = np.exp(-np.sum((P[i] - P[j]) ** 2) / (2 * kernel.length_scale ** 2))
            elif kernel.metric == "tv":
                K[i, j] = np.exp(-0.5 * np.abs(P[i] - P[j]).sum() / kernel.length_scale)
            else:
                K[i, j] = np.exp(-np.sqrt(np.sum((P[i] - P[j]) ** 2)) / kernel.length_scale)
    G = (y[:, None] == y[None, :]) - P[:, y].T - P[:, y] + P @ P.T
    return K * G


@pytest.mark.parametrize("kernel", KERNELS, ids=repr)
@pytest.mark.parametrize("chunk_size", [1, 7, 16, 1000])
def test_chunked_equals_dense(kernel, chunk_size):
    y, P = _data(53, 4, 0)
    H = _dense_h(y, P, kernel)
    n = len(y)
    term = _term(y, P, kernel)
    off = H.sum() - np.trace(H)
    scale = np.abs(H).sum()
    assert_allclose(_pairwise.pair_sum(term, chunk_size=chunk_size), off, rtol=1e-12,
                    atol=1e-14 * scale)
    assert_allclose(_pairwise.u_statistic(term, chunk_size=chunk_size), off / (n * (n - 1)),
                    rtol=1e-12, atol=1e-14 * scale / n**2)
    assert_allclose(_pairwise.v_statistic(term, chunk_size=chunk_size), H.sum() / n**2,
                    rtol=1e-12)
    assert_allclose(_pairwise.row_sums(term, chunk_size=chunk_size), H.sum(1) - np.diag(H),
                    rtol=1e-12, atol=1e-14 * scale / n)
    assert_allclose(_pairwise.dense_matrix(term), H, rtol=1e-12, atol=1e-15)
    for B in [2, 3, 5, 53, 26]:
        nb = n // B
        expected = [
            (H[b * B:(b + 1) * B, b * B:(b + 1) * B].sum()
             - np.trace(H[b * B:(b + 1) * B, b * B:(b + 1) * B])) / (B * (B - 1))
            for b in range(nb)
        ]
        got = _pairwise.block_statistics(term, B, chunk_size=chunk_size)
        assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


def test_large_block_path_matches_small_block_path():
    # B >= 64 runs tiles per block, B < 64 vectorised index pairs: both equal brute force.
    y, P = _data(300, 3, 1)
    k = GaussianKernel(0.4)
    H = _dense_h(y, P, k)
    term = _term(y, P, k)
    for B in [63, 64, 100, 150]:
        nb = 300 // B
        expected = [(H[b * B:(b + 1) * B, b * B:(b + 1) * B].sum() - np.trace(
            H[b * B:(b + 1) * B, b * B:(b + 1) * B])) / (B * (B - 1)) for b in range(nb)]
        assert_allclose(_pairwise.block_statistics(term, B, chunk_size=32), expected,
                        rtol=1e-11, atol=1e-14)


@pytest.mark.parametrize("estimator", ["unbiased", "biased", "block"])
def test_contributions_average_to_estimate(estimator):
    y, P = _data(101, 5, 2)
    term = _term(y, P, GaussianKernel(0.5))
    for B in [2, 7]:
        c = contributions(term, estimator, B, chunk_size=13)
        est = skce(y, P, kernel=GaussianKernel(0.5), estimator=estimator, block_size=B,
                   labels=np.arange(5))
        assert_allclose(c.mean(), est, rtol=1e-11, atol=1e-15)


def test_n_jobs_gives_identical_results():
    y, P = _data(700, 6, 3)
    k = GaussianKernel(0.3)
    base = skce(y, P, kernel=k, chunk_size=64)
    for n_jobs in [2, -1]:
        assert skce(y, P, kernel=k, chunk_size=64, n_jobs=n_jobs) == base
    term = _term(y, P, k)
    r1 = _pairwise.row_sums(term, chunk_size=64)
    r2 = _pairwise.row_sums(term, chunk_size=64, n_jobs=2)
    assert np.array_equal(r1, r2)


def test_block_size_n_equals_unbiased_and_incomplete_block_dropped():
    y, P = _data(41, 3, 4)
    k = GaussianKernel(0.5)
    u = skce(y, P, kernel=k, labels=[0, 1, 2])
    assert_allclose(skce(y, P, kernel=k, estimator="block", block_size=41, labels=[0, 1, 2]), u,
                    rtol=1e-12)
    # blocks of 20: the 41st sample is dropped
    b = skce(y, P, kernel=k, estimator="block", block_size=20, labels=[0, 1, 2])
    halves = [skce(y[s:s + 20], P[s:s + 20], kernel=k, labels=[0, 1, 2]) for s in (0, 20)]
    assert_allclose(b, np.mean(halves), rtol=1e-12)


def test_engine_argument_errors():
    y, P = _data(10, 3, 5)
    term = _term(y, P, GaussianKernel(1.0))
    with pytest.raises(ValueError, match="chunk_size"):
        _pairwise.pair_sum(term, chunk_size=0)
    with pytest.raises(ValueError, match="block_size"):
        _pairwise.block_statistics(term, 1)
    with pytest.raises(ValueError, match="block_size"):
        _pairwise.block_statistics(term, 11)


def test_memory_is_bounded_by_tiles():
    # n = 6000 would need a 288 MB n x n matrix; the engine's peak stays at a few tiles.
    import tracemalloc

    y, P = _data(6000, 3, 6)
    term = _term(y, P, GaussianKernel(0.5))
    tracemalloc.start()
    _pairwise.u_statistic(term, chunk_size=256)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 20e6
