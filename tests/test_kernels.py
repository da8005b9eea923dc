"""Kernel conventions, the median heuristic and tensor products."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.base import clone
from sklearn.metrics.pairwise import laplacian_kernel, rbf_kernel

from skcalib import skce
from skcalib.kernels import (
    DeltaKernel,
    ExponentialKernel,
    GaussianKernel,
    TensorProductKernel,
    median_heuristic,
    pairwise_distances,
    tensor,
)

rng = np.random.default_rng(0)
X = rng.dirichlet(np.ones(4), size=30)
Y = rng.dirichlet(np.ones(4), size=20)


def test_gaussian_matches_sklearn_rbf_gamma():
    for ls in [0.1, 0.7, 3.0]:
        assert_allclose(GaussianKernel(ls)(X, Y), rbf_kernel(X, Y, gamma=1 / (2 * ls**2)),
                        rtol=1e-12)


def test_exponential_tv_matches_sklearn_laplacian():
    # laplacian_kernel = exp(-gamma ||x - y||_1) = exp(-TV / (1 / (2 gamma)))
    for gamma in [0.5, 2.0]:
        assert_allclose(ExponentialKernel(1 / (2 * gamma), metric="tv")(X, Y),
                        laplacian_kernel(X, Y, gamma=gamma), rtol=1e-12)


def test_exponential_euclidean_brute_force():
    D = np.sqrt(((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1))
    assert_allclose(ExponentialKernel(0.3)(X, Y), np.exp(-D / 0.3), rtol=1e-12, atol=1e-15)
    assert_allclose(pairwise_distances(X, Y), D, rtol=1e-10, atol=1e-12)
    assert_allclose(pairwise_distances(X, Y, metric="tv"),
                    0.5 * np.abs(X[:, None, :] - Y[None, :, :]).sum(-1), rtol=1e-12)


def test_diagonal_is_one_and_symmetric_psd():
    for k in [GaussianKernel(0.5), ExponentialKernel(0.5), ExponentialKernel(0.5, metric="tv")]:
        K = k(X)
        assert_allclose(np.diag(K), 1.0, rtol=1e-12)
        assert_allclose(K, K.T, rtol=1e-12)
        assert np.linalg.eigvalsh(K).min() > -1e-10


def test_delta_kernel():
    assert_allclose(DeltaKernel()(np.array([0, 1, 1]), np.array([1, 0])),
                    [[0, 1], [1, 0], [1, 0]])
    assert_allclose(DeltaKernel().class_gram(3), np.eye(3))


def test_median_heuristic_conventions():
    D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    iu = np.triu_indices(30, 1)
    assert median_heuristic(X) == pytest.approx(np.median(D[iu]), rel=1e-12)
    assert median_heuristic(X, include_diagonal=True) == pytest.approx(np.median(D), rel=1e-12)
    # subsample: deterministic without random_state, reproducible with it
    big = rng.dirichlet(np.ones(3), size=5000)
    a = median_heuristic(big, max_samples=200)
    assert a == median_heuristic(big, max_samples=200)
    b1 = median_heuristic(big, max_samples=200, random_state=1)
    assert b1 == median_heuristic(big, max_samples=200, random_state=1)
    assert b1 != median_heuristic(big, max_samples=200, random_state=2)
    full = median_heuristic(big[:2000], max_samples=2000)
    assert abs(b1 - full) / full < 0.1
    # degenerate inputs never give a zero length scale
    same = np.tile([[0.2, 0.8]], (10, 1))
    assert median_heuristic(same) == 1.0
    mostly = np.vstack([same, [[0.5, 0.5]]])
    assert median_heuristic(mostly) > 0


def test_resolve_median_and_clone():
    k = GaussianKernel("median")
    r = k.resolve(X)
    assert k.length_scale == "median" and r.length_scale == pytest.approx(median_heuristic(X))
    t = tensor(ExponentialKernel(metric="tv"))
    assert isinstance(t, TensorProductKernel)
    rt = t.resolve(X)
    assert rt.pred_kernel.length_scale == pytest.approx(median_heuristic(X, metric="tv"))
    assert clone(t).get_params()["pred_kernel__metric"] == "tv"
    assert "GaussianKernel" in repr(GaussianKernel(0.5))


def test_tensor_kernel_equivalences_in_skce():
    y = rng.integers(0, 4, size=30)
    for k in [GaussianKernel(0.4), ExponentialKernel(0.4, metric="tv")]:
        v = skce(y, X, kernel=k, labels=np.arange(4))
        assert skce(y, X, kernel=tensor(k), labels=np.arange(4)) == v
        assert skce(y, X, kernel=TensorProductKernel(k, DeltaKernel()), labels=np.arange(4)) == v


def test_kernel_parameter_errors():
    with pytest.raises(ValueError, match="length_scale"):
        GaussianKernel(-1.0).resolve(X)
    with pytest.raises(ValueError, match="length_scale"):
        GaussianKernel("mean").resolve(X)
    with pytest.raises(TypeError, match="length_scale"):
        ExponentialKernel(True).resolve(X)
    with pytest.raises(ValueError, match="metric"):
        ExponentialKernel(1.0, metric="cosine").resolve(X)
    with pytest.raises(ValueError, match="metric"):
        median_heuristic(X, metric="l3")
    with pytest.raises(ValueError, match="max_samples"):
        median_heuristic(X, max_samples=1)
    with pytest.raises(TypeError, match="kernel"):
        skce([0, 1], [0.2, 0.9], kernel="rbf")
    with pytest.raises(TypeError, match="pred_kernel"):
        skce([0, 1], [0.2, 0.9], kernel=TensorProductKernel("rbf"))
    with pytest.raises(TypeError, match="tensor"):
        GaussianKernel(1.0) * DeltaKernel()
    with pytest.raises(TypeError):
        TensorProductKernel(GaussianKernel(1.0))(X)
    with pytest.raises(ValueError, match="features"):
        pairwise_distances(X, Y[:, :3])
