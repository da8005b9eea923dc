"""The Empirical family (sample-based predictions) against independent computations: numpy on
the draws, brute-force double loops, the Normal family as the number of draws grows, and
quantile-integral Wasserstein distances."""

import itertools
import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

import skcalib
from skcalib._expectations import has_closed_form
from skcalib.distributions import (Empirical, Normal, concatenate, pairwise_wasserstein,
                                   wasserstein_distance)
from skcalib.kernels import ExponentialKernel, GaussianKernel, WassersteinKernel, tensor
from skcalib.stats import skce_test


def _random(n=6, m=5, seed=0, weighted=True):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, m)) * rng.uniform(0.5, 2.0, size=(n, 1)) + rng.normal(size=(n, 1))
    w = rng.uniform(0.1, 1.0, size=(n, m)) if weighted else None
    return x, w


def _kernel(kind, ls):
    if kind == "gauss":
        return GaussianKernel(ls), lambda d: np.exp(-0.5 * (d / ls) ** 2)
    return ExponentialKernel(ls), lambda d: np.exp(-np.abs(d) / ls)


# --------------------------------------------------------------------------------------------
# validation


@pytest.mark.parametrize("kwargs, err, match", [
    (dict(samples=[1.0, 2.0]), ValueError, "samples must have 2 dimensions"),
    (dict(samples=[[1.0, np.nan]]), ValueError, "samples must be finite"),
    (dict(samples=[[1.0, np.inf]]), ValueError, "samples must be finite"),
    (dict(samples=np.zeros((2, 0))), ValueError, "samples must have at least one draw"),
    (dict(samples=[["a", "b"]]), TypeError, "samples"),
    (dict(samples=[[1.0, 2.0]], weights=[[1.0]]), ValueError, "weights must have the shape"),
    (dict(samples=[[1.0, 2.0]], weights=[[1.0, -1.0]]), ValueError, "weights must be non-neg"),
    (dict(samples=[[1.0, 2.0]], weights=[[1.0, np.nan]]), ValueError, "weights must be finite"),
    (dict(samples=[[1.0, 2.0], [0.0, 1.0]], weights=[[1.0, 1.0], [0.0, 0.0]]), ValueError,
     "row 1 sums to 0"),
    (dict(samples=[[1.0, 2.0]], weights=[[True, False]]), TypeError, "weights"),
])
def test_bad_input_messages(kwargs, err, match):
    with pytest.raises(err, match=match):
        Empirical(**kwargs)


def test_immutable_and_no_view_of_input():
    x = np.array([[0.0, 1.0]])
    d = Empirical(x)
    x[0, 0] = 5.0
    assert d.samples[0, 0] == 0.0
    with pytest.raises(AttributeError, match="immutable"):
        d.samples = x
    with pytest.raises(ValueError):
        d.samples[0, 0] = 1.0


def test_nll_refuses_clearly():
    d = Empirical([[0.0, 1.0]])
    with pytest.raises(TypeError, match="no density"):
        skcalib.nll([0.5], d)


# --------------------------------------------------------------------------------------------
# moments, cdf, ppf, sampling against numpy on the draws


def test_moments_cdf_ppf_against_numpy():
    x, w = _random(n=7, m=9, seed=1)
    d = Empirical(x, w)
    wn = w / w.sum(1, keepdims=True)
    mu = np.array([np.average(x[i], weights=wn[i]) for i in range(7)])
    var = np.array([np.average((x[i] - mu[i]) ** 2, weights=wn[i]) for i in range(7)])
    assert_allclose(d.mean, mu, rtol=1e-13)
    assert_allclose(d.variance, var, rtol=1e-12)
    for i in range(7):
        for y in list(x[i]) + [x[i].min() - 1, x[i].max() + 1, 0.1234]:
            expect = wn[i][x[i] <= y].sum()
            assert_allclose(d[i].cdf(y), [expect], atol=1e-14)
        order = np.argsort(x[i])
        cw = np.cumsum(wn[i][order])
        for q in [1e-9, 0.1, 0.25, 0.5, 0.77, 0.999, 1.0]:
            k = next(k for k in range(9) if cw[k] >= q - 1e-15)
            assert d[i].ppf(q)[0] == x[i][order][k]
            # generalised inverse: cdf(ppf(q)) >= q
            assert d[i].cdf(d[i].ppf(q))[0] >= q - 1e-12


def test_equal_weights_match_numpy_quantile_inverted_cdf():
    x, _ = _random(n=5, m=10, seed=2, weighted=False)
    d = Empirical(x)
    for q in [0.05, 0.3, 0.5, 0.9, 1.0]:
        assert_allclose(d.ppf(q), np.quantile(x, q, axis=1, method="inverted_cdf"))
    assert_allclose(d.variance, x.var(axis=1), rtol=1e-12)


def test_sampling_resamples_by_weight():
    d = Empirical([[0.0, 1.0, 2.0], [5.0, 6.0, 7.0]], [[0.2, 0.0, 0.8], [1.0, 1.0, 2.0]])
    Z = d.sample(random_state=0, size=200_000)
    assert Z.shape == (200_000, 2)
    assert set(np.unique(Z[:, 0])) == {0.0, 2.0}
    freq = [(Z[:, 1] == v).mean() for v in (5.0, 6.0, 7.0)]
    assert_allclose(freq, [0.25, 0.25, 0.5], atol=4 * math.sqrt(0.25 / 200_000))
    assert_allclose((Z[:, 0] == 2.0).mean(), 0.8, atol=4 * math.sqrt(0.16 / 200_000))


# --------------------------------------------------------------------------------------------
# CRPS


def _crps_brute(x, w, y):
    w = w / w.sum()
    return (np.sum(w * np.abs(x - y))
            - 0.5 * np.sum(w[:, None] * w[None, :] * np.abs(x[:, None] - x[None, :])))


def test_crps_against_brute_force():
    x, w = _random(n=8, m=11, seed=3)
    x[0, 3] = x[0, 4]   # ties
    y = np.random.default_rng(4).normal(size=8) * 2
    d = Empirical(x, w)
    expect = [_crps_brute(x[i], w[i], y[i]) for i in range(8)]
    assert_allclose(skcalib.crps(y, d, reduction="none"), expect, rtol=1e-12)
    # large offsets: centred computation
    assert_allclose(Empirical(x + 1e8, w)._crps(y + 1e8), expect, rtol=1e-7)


def test_crps_approaches_normal_as_m_grows():
    rng = np.random.default_rng(5)
    n = 40
    loc, scale = rng.normal(size=n), rng.uniform(0.5, 2.0, size=n)
    y = rng.normal(size=n)
    exact = skcalib.crps(y, Normal(loc, scale), reduction="none")
    for m in (100, 10_000):
        x = loc[:, None] + scale[:, None] * rng.normal(size=(n, m))
        got = skcalib.crps(y, Empirical(x), reduction="none")
        # Monte-Carlo error of E|X - y| (sd <= sqrt(E(X - y)^2)) plus the plug-in bias
        # E|X - X'| / (2 m) = scale / (sqrt(pi) m)
        sd = np.sqrt(scale ** 2 + (loc - y) ** 2) / math.sqrt(m)
        bias = scale / (math.sqrt(math.pi) * m)
        assert np.all(np.abs(got - exact - bias) < 5 * sd + 1e-12)


# --------------------------------------------------------------------------------------------
# kernel expectations


@pytest.mark.parametrize("kind", ["gauss", "exp"])
@pytest.mark.parametrize("ls", [0.3, 1.7])
def test_e1_e2_against_double_loops(kind, ls):
    x, w = _random(n=5, m=4, seed=6)
    x2, w2 = _random(n=5, m=7, seed=7)
    d, d2 = Empirical(x, w), Empirical(x2, w2)
    kernel, k = _kernel(kind, ls)
    assert has_closed_form(d, kernel)
    y = np.linspace(-1, 1, 5)
    wn, wn2 = w / w.sum(1, keepdims=True), w2 / w2.sum(1, keepdims=True)
    e1 = [sum(wn[i, a] * k(x[i, a] - y[i]) for a in range(4)) for i in range(5)]
    assert_allclose(d.expected_kernel(kernel, y), e1, rtol=1e-13)
    e2 = [sum(wn[i, a] * wn2[i, b] * k(x[i, a] - x2[i, b]) for a in range(4) for b in range(7))
          for i in range(5)]
    e2s = [sum(wn[i, a] * wn[i, b] * k(x[i, a] - x[i, b]) for a in range(4) for b in range(4))
           for i in range(5)]
    got12 = d.expected_kernel_pair(kernel, d2)
    got21 = d2.expected_kernel_pair(kernel, d)
    assert_allclose(got12, e2, rtol=1e-13)
    assert_allclose(got21, got12, rtol=1e-14)      # symmetric in the two predictions
    assert_allclose(d.expected_kernel_pair(kernel), e2s, rtol=1e-13)


def test_e2_tile_symmetric_and_bounded_blocks(monkeypatch):
    import skcalib.distributions._empirical as mod
    monkeypatch.setattr(mod, "_BLOCK_ITEMS", 7)   # force many blocks
    x, w = _random(n=6, m=5, seed=8)
    d = Empirical(x, w)
    kernel, k = _kernel("gauss", 0.8)
    ops = skcalib._expectations.target_ops(d, np.zeros(6), kernel)
    a = np.arange(6)
    E = ops.e2(ops.P(a, "row"), ops.P(a, "col"))
    assert_allclose(E, E.T, rtol=1e-14)
    wn = w / w.sum(1, keepdims=True)
    brute = np.einsum("ia,jb,ijab->ij", wn, wn, k(x[:, None, :, None] - x[None, :, None, :]))
    assert_allclose(E, brute, rtol=1e-13)


# --------------------------------------------------------------------------------------------
# Wasserstein


def _w2_quantile_integral(x1, w1, x2, w2, grid=200_001):
    u = (np.arange(grid) + 0.5) / grid

    def Q(x, w):
        o = np.argsort(x)
        cw = np.cumsum(w[o] / w.sum())
        return x[o][np.minimum(np.searchsorted(cw, u, side="left"), len(x) - 1)]

    return math.sqrt(np.mean((Q(x1, w1) - Q(x2, w2)) ** 2))


def test_w2_equal_weights_is_sorted_difference():
    x, _ = _random(n=4, m=6, seed=9, weighted=False)
    x2, _ = _random(n=4, m=6, seed=10, weighted=False)
    expect = np.sqrt(np.mean((np.sort(x, 1) - np.sort(x2, 1)) ** 2, axis=1))
    assert_allclose(wasserstein_distance(Empirical(x), Empirical(x2)), expect, rtol=1e-13)
    # the embedding path (equal weights) and the merge path agree
    assert Empirical(x)._embedding() is not None
    merged = np.sqrt(Empirical(x)._w2_squared(np.arange(4), Empirical(x2), np.arange(4)))
    assert_allclose(merged, expect, rtol=1e-12)


def test_w2_unequal_sizes_and_weights_against_quantile_integral():
    x, w = _random(n=4, m=3, seed=11)
    x2, w2 = _random(n=4, m=8, seed=12)
    got = wasserstein_distance(Empirical(x, w), Empirical(x2, w2))
    expect = [_w2_quantile_integral(x[i], w[i], x2[i], w2[i]) for i in range(4)]
    assert_allclose(got, expect, rtol=1e-4)
    D = pairwise_wasserstein(Empirical(x, w))
    assert_allclose(D, D.T, atol=1e-14)
    assert_allclose(np.diag(D), 0.0, atol=1e-7)
    assert_allclose(D[0, 2], _w2_quantile_integral(x[0], w[0], x[2], w[2]), rtol=1e-4)


# --------------------------------------------------------------------------------------------
# SKCE against a brute-force U-statistic


def _skce_brute(x, y, lsw, lsy):
    n, m = x.shape
    xs = np.sort(x, axis=1)
    k = lambda d: np.exp(-0.5 * (d / lsy) ** 2)  # noqa: E731

    def e1(i, t):
        return np.mean(k(x[i] - t))

    def e2(i, j):
        return np.mean(k(x[i][:, None] - x[j][None, :]))

    total = 0.0
    for i, j in itertools.combinations(range(n), 2):
        w2 = math.sqrt(np.mean((xs[i] - xs[j]) ** 2))
        kp = math.exp(-w2 / lsw)
        total += kp * (k(y[i] - y[j]) - e1(i, y[j]) - e1(j, y[i]) + e2(i, j))
    return total / (n * (n - 1) / 2)


def test_skce_against_brute_force_u_statistic():
    rng = np.random.default_rng(13)
    n, m = 30, 6
    mu = rng.normal(size=n)
    x = mu[:, None] + rng.normal(size=(n, m))
    y = mu + 1.3 * rng.normal(size=n)
    kernel = tensor(WassersteinKernel(1.0), GaussianKernel(1.0))
    got = skcalib.skce(y, Empirical(x), kernel=kernel)
    assert_allclose(got, _skce_brute(x, y, 1.0, 1.0), rtol=1e-10)


def test_skce_default_kernel_and_block_test_run():
    rng = np.random.default_rng(14)
    n, m = 60, 5
    mu = rng.normal(size=n)
    x, w = mu[:, None] + rng.normal(size=(n, m)), rng.uniform(0.1, 1, size=(n, m))
    y = mu + rng.normal(size=n)
    d = Empirical(x, w)   # unequal weights: W2 by the merge path
    assert np.isfinite(skcalib.skce(y, d))
    res = skce_test(y, d, method="block", random_state=0)
    assert 0.0 <= res.pvalue <= 1.0


# --------------------------------------------------------------------------------------------
# slicing, concatenation, point masses


def test_slicing_and_concatenation_with_different_m():
    x, w = _random(n=5, m=4, seed=15)
    x2, w2 = _random(n=3, m=7, seed=16)
    d, d2 = Empirical(x, w), Empirical(x2, w2)
    sub = d[1:3]
    assert len(sub) == 2 and np.array_equal(sub.samples, x[1:3])
    assert_allclose(d[[True, False, True, False, False]].mean, d.mean[[0, 2]])
    c = concatenate([d, d2])
    assert len(c) == 8 and c.n_draws == 7
    assert_allclose(c.mean, np.concatenate([d.mean, d2.mean]), rtol=1e-13)
    assert_allclose(c.variance, np.concatenate([d.variance, d2.variance]), rtol=1e-12)
    y = np.linspace(-1, 1, 8)
    assert_allclose(c.cdf(y), np.concatenate([d.cdf(y[:5]), d2.cdf(y[5:])]), atol=1e-15)
    assert_allclose(c.ppf(0.4), np.concatenate([d.ppf(0.4), d2.ppf(0.4)]))
    assert_allclose(c._crps(y), np.concatenate([d._crps(y[:5]), d2._crps(y[5:])]), rtol=1e-12)
    kernel = GaussianKernel(0.7)
    assert_allclose(c.expected_kernel(kernel, y),
                    np.concatenate([d.expected_kernel(kernel, y[:5]),
                                    d2.expected_kernel(kernel, y[5:])]), rtol=1e-13)
    assert_allclose(c[:5].wasserstein(d), 0.0, atol=1e-7)


def test_equal_draws_act_as_point_mass():
    loc = np.array([0.5, -1.0, 2.0])
    d = Empirical(np.repeat(loc[:, None], 4, axis=1))
    point = Normal(loc, 0.0)
    y = np.array([0.0, 0.0, 3.0])
    assert_allclose(d.variance, 0.0, atol=0)
    assert_allclose(d._crps(y), np.abs(y - loc))
    assert_allclose(skcalib.crps(y, d, reduction="none"),
                    skcalib.crps(y, point, reduction="none"), rtol=1e-12)
    kernel = GaussianKernel(1.0)
    assert_allclose(d.expected_kernel(kernel, y), point.expected_kernel(kernel, y), rtol=1e-13)
    assert_allclose(d.expected_kernel_pair(kernel), 1.0)
    assert_allclose(d.cdf(loc), 1.0)
    assert_allclose(d.cdf(loc - 1e-9), 0.0)
    assert_allclose(d.ppf(0.3), loc)


# --------------------------------------------------------------------------------------------
# the factorised Gaussian tile of the SKCE against the generic sums and brute force


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("items", [None, 50])
def test_factored_gauss_tile_matches_generic_sums(weighted, items, monkeypatch):
    import skcalib.distributions._empirical as mod
    from skcalib._expectations import TargetOps, target_ops
    if items is not None:
        monkeypatch.setattr(mod, "_FACTORED_ITEMS", items)    # many blocks, ragged edges
    x, w = _random(n=23, m=6, seed=17, weighted=weighted)
    if weighted:
        w[3, 2] = 0.0                                         # zero weight: contributes 0
    y = np.random.default_rng(18).normal(size=23)
    ops = target_ops(Empirical(x, w), y, GaussianKernel(0.9))
    logK = -np.random.default_rng(19).uniform(0, 2, size=(23, 23))
    for a, b in [(slice(0, 23), slice(0, 23)), (slice(2, 9), slice(5, 23)),
                 (slice(4, 20), slice(0, 11))]:
        L = logK[a, b]
        got = ops.tile(L, a, b)
        expect = TargetOps.tile(ops, L, a, b)
        assert_allclose(got, expect, rtol=1e-12, atol=1e-14)
    assert mod._gauss_tile(ops, slice(0, 23), slice(0, 23)) is not None


def test_factored_tile_falls_back_for_wide_spreads():
    import skcalib.distributions._empirical as mod
    from skcalib._expectations import TargetOps, target_ops
    x, _ = _random(n=8, m=4, seed=20, weighted=False)
    x[0, 0] = 50.0                                            # 50 length scales from the rest
    y = np.zeros(8)
    ops = target_ops(Empirical(x), y, GaussianKernel(1.0))
    a = slice(0, 8)
    assert mod._gauss_tile(ops, a, a) is None
    assert_allclose(ops.tile(np.zeros((8, 8)), a, a), TargetOps.tile(ops, np.zeros((8, 8)), a, a),
                    rtol=0, atol=0)


def test_skce_small_tiles_against_brute_force():
    rng = np.random.default_rng(21)
    n, m = 40, 5
    mu = rng.normal(size=n)
    x = mu[:, None] + rng.normal(size=(n, m))
    y = mu + 1.2 * rng.normal(size=n)
    kernel = tensor(WassersteinKernel(1.0), GaussianKernel(0.7))
    expect = _skce_brute(x, y, 1.0, 0.7)
    for chunk in (None, 7):
        assert_allclose(skcalib.skce(y, Empirical(x), kernel=kernel, chunk_size=chunk), expect,
                        rtol=1e-10)


def test_quantiles_at_k_over_m_survive_slicing_padding_and_explicit_weights():
    """ppf at the levels k / m lands on the same draw after a slice, a concatenation (zero-weight
    padding) and with explicit equal weights 1 / m: cumulative weights of equal positive weights
    are exact, not running sums of 1 / m that drift in the last bit and move the quantile."""
    rng = np.random.default_rng(3)
    d = Empirical(rng.normal(size=(30, 50)))
    rows = np.arange(30)[::-1]
    c = concatenate([d, Empirical(rng.normal(size=(3, 20)))])
    e = Empirical(d.samples, np.full((30, 50), 1 / 50))
    for k in range(51):
        ref = d.ppf(k / 50)
        np.testing.assert_array_equal(d[rows].ppf(k / 50), ref[rows])
        np.testing.assert_array_equal(c[:30].ppf(k / 50), ref)
        np.testing.assert_array_equal(e.ppf(k / 50), ref)
