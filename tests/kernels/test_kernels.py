"""Kernel conventions, the median heuristic and tensor products."""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.metrics.pairwise import laplacian_kernel, rbf_kernel

from skcalib import skce
from skcalib.distributions import Categorical, Laplace, Mixture, MultivariateNormal, Normal
from skcalib.kernels import (
    DeltaKernel,
    ExponentialKernel,
    GaussianKernel,
    KernelValidityWarning,
    TensorProductKernel,
    WassersteinKernel,
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


# ============================================================================================
# extreme length scales and magnitudes (no NaN, no overflow warnings; RuntimeWarning is an error)

STATIONARY = [
    lambda ls: GaussianKernel(ls),
    lambda ls: ExponentialKernel(ls),
    lambda ls: ExponentialKernel(ls, metric="tv"),
]
# rows 0 and 2 coincide, the others are distinct
X_DUP = np.array([[0.2, 0.8], [0.7, 0.3], [0.2, 0.8], [0.5, 0.5]])
SAME = np.all(X_DUP[:, None, :] == X_DUP[None, :, :], axis=2).astype(float)


@pytest.mark.parametrize("make", STATIONARY)
@pytest.mark.parametrize("ls", [1e-300, 5e-324, 1e-100, 1e-12])
def test_tiny_length_scales_give_the_identity_pattern(make, ls):
    # d / ls is astronomically large for distinct rows (k = 0) and 0 for equal rows (k = 1).
    assert_allclose(make(ls)(X_DUP), SAME, rtol=0, atol=0)
    assert_allclose(make(ls)(X_DUP, X_DUP[:2]), SAME[:, :2], rtol=0, atol=0)


@pytest.mark.parametrize("make", STATIONARY)
@pytest.mark.parametrize("ls", [1e300, 1.7e308, 1e100])
def test_huge_length_scales_give_a_gram_of_ones(make, ls):
    assert_allclose(make(ls)(X_DUP), np.ones((4, 4)), rtol=1e-15)


@pytest.mark.parametrize("make", STATIONARY)
@pytest.mark.parametrize("scale", [1e300, 1e-300, 1e150, 1e-150])
def test_kernels_are_invariant_to_scaling_data_and_length_scale_together(make, scale):
    rng_ = np.random.default_rng(4)
    A = rng_.normal(size=(7, 3))
    assert_allclose(make(0.9 * scale)(A * scale), make(0.9)(A), rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("ls", [1e-9, 1e-6, 1e-3])
def test_small_length_scale_far_from_the_origin_against_differences(ls):
    # Rows ~1 apart from the origin but within a few length scales of each other: the one-product
    # tile |x|^2/2 + |y|^2/2 - x.y (in length scales) would cancel catastrophically (error
    # ~eps * |x|^2 / ls^2, i.e. ~1e3 for ls = 1e-9). Reference from the differences.
    rng_ = np.random.default_rng(5)
    A = 1.0 + ls * rng_.normal(size=(9, 3))
    B = 1.0 + ls * rng_.normal(size=(5, 3))
    diff = (A[:, None, :] - B[None, :, :]) / ls
    d2 = (diff ** 2).sum(-1)
    assert_allclose(GaussianKernel(ls)(A, B), np.exp(-0.5 * d2), rtol=1e-12, atol=1e-300)
    assert_allclose(ExponentialKernel(ls)(A, B), np.exp(-np.sqrt(d2)), rtol=1e-6, atol=1e-12)
    assert_allclose(np.diag(GaussianKernel(ls)(A)), 1.0, rtol=0, atol=1e-15)


@pytest.mark.parametrize("metric", ["euclidean", "tv"])
@pytest.mark.parametrize("scale", [1e300, 1e-300, 1e-310, 2.0 ** 1020])
def test_pairwise_distances_do_not_overflow_or_underflow(metric, scale):
    rng_ = np.random.default_rng(6)
    A = rng_.uniform(-1, 1, size=(6, 4))
    B = rng_.uniform(-1, 1, size=(3, 4))
    diff = A[:, None, :] - B[None, :, :]
    ref = (np.sqrt((diff ** 2).sum(-1)) if metric == "euclidean" else 0.5 * np.abs(diff).sum(-1))
    got = pairwise_distances(A * scale, B * scale, metric=metric)
    rtol = 1e-12 if scale > 1e-305 else 1e-8  # subnormal inputs carry fewer digits
    assert_allclose(got / scale, ref, rtol=rtol)
    assert_allclose(median_heuristic(A * scale, metric=metric) / scale,
                    median_heuristic(A, metric=metric), rtol=rtol)


def test_pairwise_distances_at_the_top_of_the_float_range():
    big = np.array([[1e308], [-1e308], [1e308]])
    assert_allclose(pairwise_distances(big, metric="tv"),
                    [[0, 1e308, 0], [1e308, 0, 1e308], [0, 1e308, 0]], rtol=1e-15)
    D = pairwise_distances(big)  # 2e308 is beyond the float range: inf, not NaN
    assert D[0, 1] == np.inf and D[0, 2] == 0.0 and not np.isnan(D).any()


def _residuals(y, P):
    return np.eye(P.shape[1])[y] - P


@pytest.mark.parametrize("make", STATIONARY)
def test_skce_with_extreme_length_scales_against_identity_and_ones_grams(make):
    # The metrics use the prepared tiles (block, pairs, diag). With distinct rows, a tiny length
    # scale gives the identity Gram matrix and a huge one the Gram matrix of ones.
    rng_ = np.random.default_rng(8)
    P = rng_.dirichlet(np.ones(3), size=16)
    y = rng_.integers(0, 3, size=16)
    R = _residuals(y, P)
    H_id, H_one = np.diag((R * R).sum(1)), R @ R.T
    n = 16
    for ls, H in [(1e-300, H_id), (1e300, H_one)]:
        k = make(ls)
        u = (H.sum() - np.trace(H)) / (n * (n - 1))
        b = H.sum() / n ** 2
        blk = np.mean([H[2 * i, 2 * i + 1] for i in range(n // 2)])
        assert skce(y, P, kernel=k, labels=[0, 1, 2]) == pytest.approx(u, abs=1e-15)
        assert skce(y, P, kernel=k, estimator="biased", labels=[0, 1, 2]) == pytest.approx(
            b, rel=1e-12)
        assert skce(y, P, kernel=k, estimator="block", labels=[0, 1, 2]) == pytest.approx(
            blk, rel=1e-12, abs=1e-15)


def _wasserstein_families():
    loc, sd = np.array([0.0, 1.0, 0.0, 2.0]), np.array([1.0, 1.0, 1.0, 0.5])
    cov = np.stack([np.eye(2), [[2.0, 1.0], [1.0, 2.0]], np.eye(2), [[1.0, 0.0], [0.0, 3.0]]])
    return {
        "normal": Normal(loc, sd),
        "laplace": Laplace(loc, sd),
        "mixture3": Mixture(np.array([[0.2, 0.3, 0.5], [0.6, 0.2, 0.2], [0.2, 0.3, 0.5],
                                      [0.1, 0.1, 0.8]]),
                            [Normal(loc, sd), Normal(loc + 1, sd), Normal(loc - 2, 2 * sd)]),
        "mvn full": MultivariateNormal(np.column_stack([loc, loc]), cov),
        "categorical": Categorical([[0.2, 0.8], [0.5, 0.5], [0.2, 0.8], [0.9, 0.1]]),
    }


@pytest.mark.parametrize("family", ["normal", "laplace", "mixture3", "mvn full", "categorical"])
@pytest.mark.parametrize("exponent", [1.0, 2.0, 0.5])
def test_wasserstein_kernel_at_extreme_length_scales(family, exponent):
    p = _wasserstein_families()[family]
    same = np.array([[1, 0, 1, 0], [0, 1, 0, 0], [1, 0, 1, 0], [0, 0, 0, 1]], dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", KernelValidityWarning)
        for ls in [1e-300, 5e-324]:
            assert_allclose(WassersteinKernel(ls, exponent=exponent)(p), same, rtol=0, atol=0)
        for ls in [1e300, 1.7e308]:
            assert_allclose(WassersteinKernel(ls, exponent=exponent)(p), np.ones((4, 4)),
                            rtol=1e-15)


# ============================================================================================
# kernels never import distributions: the Wasserstein kernel works through the objects' methods


def test_wasserstein_kernel_refuses_mixed_families_and_non_distributions():
    p, q = Normal([0.0, 1.0], [1.0, 1.0]), Laplace([0.0], [1.0])
    with pytest.raises(TypeError, match="Y is a Laplace"):
        WassersteinKernel()(p, q)
    with pytest.raises(TypeError, match="Y is a Laplace"):
        WassersteinKernel("median")(p, q)
    with pytest.raises(TypeError, match="X must be a skcalib distribution"):
        WassersteinKernel()(np.zeros((3, 2)))
    with pytest.raises(TypeError, match="X must be a skcalib distribution"):
        WassersteinKernel("median").resolve([[0.0, 1.0]])
    with pytest.raises(TypeError, match="Y must be a skcalib distribution"):
        WassersteinKernel()(p, [[0.0, 1.0]])
    with pytest.raises(ValueError, match="Y has dimension 2"):
        WassersteinKernel()(MultivariateNormal([[0.0]], 1.0), MultivariateNormal([[0.0, 1.0]], 1.0))
    mix_n = Mixture([1.0], [Normal([0.0], [1.0])])
    mix_l = Mixture([1.0], [Laplace([0.0], [1.0])])
    with pytest.raises(TypeError, match="component family"):
        WassersteinKernel()(mix_n, mix_l)
    with pytest.raises(ValueError, match="different classes"):
        WassersteinKernel()(Categorical([[0.5, 0.5]]), Categorical([[0.5, 0.5]], classes=[1, 2]))


def test_wasserstein_kernel_median_and_validity_warning_by_duck_typing():
    # The median is over the pairwise W2 (computed through the distribution's own hooks) and the
    # validity warning recognises mixtures and non-commuting covariances without isinstance.
    p = Normal([0.0, 3.0, 1.0, -2.0], [1.0, 5.0, 0.5, 2.0])
    D = np.sqrt((p.loc[:, None] - p.loc[None]) ** 2 + (p.scale[:, None] - p.scale[None]) ** 2)
    med = np.median(D[np.triu_indices(4, 1)])
    assert WassersteinKernel("median").resolve(p).length_scale == pytest.approx(med, rel=1e-12)
    assert_allclose(WassersteinKernel("median")(p), np.exp(-D / med), rtol=1e-12)
    mix = Mixture([0.5, 0.5], [p, p])
    with pytest.warns(KernelValidityWarning, match="mixture"):
        WassersteinKernel(exponent=2.0)(mix)
    cov = np.stack([[[1.0, 0.0], [0.0, 3.0]], [[2.0, 1.0], [1.0, 2.0]]])
    with pytest.warns(KernelValidityWarning, match="commute"):
        WassersteinKernel()(MultivariateNormal(np.zeros((2, 2)), cov))
    with warnings.catch_warnings():
        warnings.simplefilter("error", KernelValidityWarning)
        WassersteinKernel(exponent=2.0)(p)
        WassersteinKernel(exponent=1.0)(mix)


# ============================================================================================
# invalid input raises an error naming the argument


def test_delta_kernel_validates_its_inputs():
    K = DeltaKernel()
    assert_allclose(K([[0, 1], [1, 1]], [[1, 1], [0, 1], [0, 0]]), [[0, 1, 0], [1, 0, 0]])
    assert_allclose(K(["a", "b"], ["b"]), [[0], [1]])
    with pytest.raises(ValueError, match="different numbers of features: 2 and 1"):
        K([[0, 1]], [[0]])  # used to broadcast the single column against both
    with pytest.raises(ValueError, match="different numbers of features"):
        K([[0, 1]], [[0, 1, 2]])
    with pytest.raises(ValueError, match="X contains NaN"):
        K([np.nan, 1.0])
    with pytest.raises(ValueError, match="Y contains missing"):
        K(np.array(["a"], dtype=object), np.array([None], dtype=object))
    with pytest.raises(ValueError, match="X must be 1-D or 2-D"):
        K(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="X must be 1-D or 2-D"):
        K(0)
    with pytest.raises(ValueError, match="X mixes strings"):
        K([0, "1"], [0, 1])
    with pytest.raises(TypeError, match="X must be an array-like"):
        K("ab")


@pytest.mark.parametrize("make", STATIONARY)
def test_stationary_kernel_input_errors(make):
    k = make(1.0)
    with pytest.raises(ValueError, match="X and Y have different numbers of features: 2 and 3"):
        k([[0.0, 1.0]], [[0.0, 1.0, 2.0]])
    with pytest.raises(TypeError, match="X must contain numbers; got strings"):
        k([["1", "2"]])
    with pytest.raises(TypeError, match="Y must contain real numbers"):
        k([[1.0, 2.0]], [[1 + 1j, 2.0]])
    with pytest.raises(TypeError, match="X must contain numbers; got strings"):
        k(np.array([[1.0, "2"]], dtype=object))
    with pytest.raises(ValueError, match="X"):
        k([[np.nan, 1.0]])
    with pytest.raises(ValueError, match="X"):
        k(np.zeros((0, 2)))
    bad = clone(k).set_params(max_samples=-1)
    with pytest.raises(ValueError, match="max_samples"):
        bad(X)
    with pytest.raises(TypeError, match="max_samples"):
        clone(k).set_params(max_samples=2.5)(X)


def test_median_heuristic_and_tensor_argument_errors():
    with pytest.raises(TypeError, match="include_diagonal"):
        median_heuristic(X, include_diagonal="no")
    with pytest.raises(ValueError, match="random_state"):
        median_heuristic(X, random_state="seed")
    with pytest.raises(TypeError, match="X must contain numbers; got strings"):
        median_heuristic([["0.1"], ["0.2"]])
    with pytest.raises(TypeError, match="target_kernel"):
        TensorProductKernel(GaussianKernel(1.0), "delta").resolve(X)
    with pytest.raises(TypeError, match="X must contain real numbers"):
        pairwise_distances([[1 + 1j]])
    with pytest.raises(ValueError, match="X and Y have different numbers of features"):
        pairwise_distances(X, Y[:, :3], metric="tv")


@pytest.mark.parametrize("make", STATIONARY + [lambda ls: DeltaKernel()])
def test_kernels_never_write_into_their_inputs(make):
    A, B = X.copy(), Y.copy()
    A.flags.writeable = False
    B.flags.writeable = False
    for ls in [0.5, 1e-300, 1e300]:
        make(ls)(A, B)
        make(ls)(A)
    assert_array_equal(A, X)
    assert_array_equal(B, Y)


def test_delta_kernel_class_gram_validates_n_classes():
    assert_array_equal(DeltaKernel().class_gram(np.int64(2)), np.eye(2))
    with pytest.raises(ValueError, match="n_classes"):
        DeltaKernel().class_gram(0)
    with pytest.raises(TypeError, match="n_classes"):
        DeltaKernel().class_gram(2.0)


@pytest.mark.parametrize("k", [GaussianKernel(), ExponentialKernel(0.5), WassersteinKernel()])
def test_resolve_validates_random_state(k):
    data = Normal([0.0, 1.0, 3.0], [1.0, 1.0, 2.0]) if isinstance(k, WassersteinKernel) else X
    with pytest.raises(ValueError, match="random_state"):
        k.resolve(data, random_state="seed")
    with pytest.raises(ValueError, match="random_state"):
        k.resolve(data, random_state=-1)


def test_median_heuristic_subsample_with_a_numpy_generator():
    # Documented (random_state : None, int or Generator) but scikit-learn's check_random_state
    # refused Generators: skce(..., random_state=np.random.default_rng(0)) failed for n > 1000.
    big = np.random.default_rng(1).dirichlet(np.ones(3), size=1500)
    a = median_heuristic(big, max_samples=300, random_state=np.random.default_rng(5))
    b = median_heuristic(big, max_samples=300, random_state=np.random.default_rng(5))
    assert a == b
    idx = np.sort(np.random.default_rng(5).choice(1500, 300, replace=False))
    sub = big[idx]
    D = np.sqrt(((sub[:, None, :] - sub[None, :, :]) ** 2).sum(-1))
    assert a == pytest.approx(np.median(D[np.triu_indices(300, 1)]), rel=1e-12)
    y = np.random.default_rng(2).integers(0, 3, size=1500)
    v = skce(y, big, random_state=np.random.default_rng(0), labels=[0, 1, 2])
    assert np.isfinite(v)
