"""cdf and ppf of the univariate families against scipy.stats; as_distribution."""

import numpy as np
import pytest
from scipy import optimize, stats

from skcalib.distributions import (
    Categorical,
    Laplace,
    Mixture,
    MultivariateNormal,
    Normal,
    as_distribution,
)

RNG = np.random.default_rng(12)
N = 40
LOC = RNG.normal(size=N) * 3
SCALE = RNG.uniform(0.1, 3.0, size=N)
Y = LOC + RNG.normal(size=N) * 4
Q = RNG.uniform(size=N)


def test_normal_cdf_ppf_match_scipy():
    d = Normal(LOC, SCALE)
    np.testing.assert_allclose(d.cdf(Y), stats.norm.cdf(Y, LOC, SCALE), rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(d.ppf(Q), stats.norm.ppf(Q, LOC, SCALE), rtol=1e-12)
    np.testing.assert_allclose(d.cdf(d.ppf(Q)), Q, rtol=1e-12)


def test_laplace_cdf_ppf_match_scipy():
    d = Laplace(LOC, SCALE)
    np.testing.assert_allclose(d.cdf(Y), stats.laplace.cdf(Y, LOC, SCALE), rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(d.ppf(Q), stats.laplace.ppf(Q, LOC, SCALE), rtol=1e-12, atol=1e-12)
    # tails: cdf far below the location keeps relative precision
    far = Laplace([0.0], [1.0])
    assert far.cdf(-700.0)[0] == pytest.approx(0.5 * np.exp(-700.0), rel=1e-12)


def test_scalar_target_and_probability_are_broadcast():
    d = Normal(LOC, SCALE)
    np.testing.assert_allclose(d.cdf(0.0), stats.norm.cdf(0.0, LOC, SCALE), rtol=1e-13)
    np.testing.assert_allclose(d.ppf(0.3), stats.norm.ppf(0.3, LOC, SCALE), rtol=1e-12)


def test_ends_of_the_support():
    np.testing.assert_array_equal(Normal([0.0, 1.0], [1.0, 2.0]).ppf([0.0, 1.0]), [-np.inf, np.inf])
    np.testing.assert_array_equal(Laplace([0.0, 1.0], [1.0, 2.0]).ppf([0.0, 1.0]), [-np.inf, np.inf])
    # a point prediction: step cdf, every quantile is its value
    p = Normal([2.0, 2.0, 2.0], 0.0)
    np.testing.assert_array_equal(p.cdf([1.9, 2.0, 2.1]), [0.0, 1.0, 1.0])
    np.testing.assert_array_equal(p.ppf([0.0, 0.5, 1.0]), [2.0, 2.0, 2.0])


def _mixture(family, K=3, n=N, seed=3):
    rng = np.random.default_rng(seed)
    W = rng.dirichlet(np.ones(K), size=n)
    locs = rng.normal(size=(K, n)) * 3
    scales = rng.uniform(0.05, 2.0, size=(K, n))
    comps = [family(locs[k], scales[k]) for k in range(K)]
    return Mixture(W, comps), W, locs, scales


@pytest.mark.parametrize("family, ref", [(Normal, stats.norm), (Laplace, stats.laplace)])
def test_mixture_cdf_matches_weighted_scipy(family, ref):
    m, W, locs, scales = _mixture(family)
    expected = sum(W[:, k] * ref.cdf(Y, locs[k], scales[k]) for k in range(W.shape[1]))
    np.testing.assert_allclose(m.cdf(Y), expected, rtol=1e-13, atol=1e-300)


@pytest.mark.parametrize("family, ref", [(Normal, stats.norm), (Laplace, stats.laplace)])
def test_mixture_ppf_matches_root_finding(family, ref):
    m, W, locs, scales = _mixture(family)
    got = m.ppf(Q)
    for i in range(N):
        f = lambda x: sum(W[i, k] * ref.cdf(x, locs[k, i], scales[k, i])  # noqa: E731
                          for k in range(W.shape[1])) - Q[i]
        x = optimize.brentq(f, -100, 100, xtol=1e-14, rtol=1e-14)
        assert got[i] == pytest.approx(x, rel=1e-9, abs=1e-9)


def test_mixture_ppf_extreme_and_degenerate_rows():
    # a point-mass component (normal scale 0), a zero weight, extreme probabilities
    comps = [Normal([0.0, 0.0, 0.0, 5.0], [0.0, 1.0, 1.0, 1.0]),
             Normal([3.0, 100.0, 0.0, 5.0], [1.0, 1.0, 1.0, 1.0])]
    m = Mixture([[0.5, 0.5], [1.0, 0.0], [0.5, 0.5], [0.3, 0.7]], comps)
    q = np.array([0.25, 0.975, 1e-12, 1 - 1e-12])
    x = m.ppf(q)
    # row 0: half the mass at 0, so the 0.25-quantile is the atom
    assert x[0] == pytest.approx(0.0, abs=1e-11)
    # row 1: the zero-weight component is ignored
    assert x[1] == pytest.approx(stats.norm.ppf(0.975), rel=1e-10)
    # rows 2 and 3: both components equal -> the component's quantile
    assert x[2] == pytest.approx(stats.norm.ppf(1e-12), rel=1e-10)
    assert x[3] == pytest.approx(5.0 + stats.norm.ppf(1 - 1e-12), rel=1e-9)
    np.testing.assert_array_equal(m.ppf(0.0), -np.inf)
    np.testing.assert_array_equal(m.ppf(1.0), np.inf)


def test_mixture_ppf_speed_and_convergence_at_scale():
    m, *_ = _mixture(Normal, K=3, n=20000, seed=5)
    q = np.random.default_rng(1).uniform(size=20000)
    np.testing.assert_allclose(m.cdf(m.ppf(q)), q, atol=1e-12)


@pytest.mark.parametrize("dist", [
    MultivariateNormal(np.zeros((2, 2)), 1.0),
    Categorical([[0.5, 0.5], [0.2, 0.8]]),
    Mixture([0.5, 0.5], [MultivariateNormal(np.zeros((2, 2)), 1.0)] * 2),
])
def test_non_univariate_families_raise(dist):
    with pytest.raises(TypeError, match="univariate"):
        dist.cdf(np.zeros(2))
    with pytest.raises(TypeError, match="univariate"):
        dist.ppf(0.5)


@pytest.mark.parametrize("dist", [Normal(LOC, SCALE), Laplace(LOC, SCALE), _mixture(Normal)[0]])
def test_invalid_arguments(dist):
    with pytest.raises(ValueError, match="q must"):
        dist.ppf(1.5)
    with pytest.raises(ValueError, match="q must"):
        dist.ppf(-0.1)
    with pytest.raises(ValueError, match="q must"):
        dist.ppf(np.full(N + 1, 0.5))
    with pytest.raises(ValueError, match="q must be finite"):
        dist.ppf(np.nan)
    with pytest.raises(ValueError, match="y must"):
        dist.cdf(np.zeros(N + 1))
    with pytest.raises(TypeError, match="y must"):
        dist.cdf("1.0")


def test_inputs_are_not_mutated():
    y, q = Y.copy(), Q.copy()
    m = _mixture(Laplace)[0]
    m.cdf(y)
    m.ppf(q)
    np.testing.assert_array_equal(y, Y)
    np.testing.assert_array_equal(q, Q)


def test_as_distribution():
    d = Normal([0.0], [1.0])
    assert as_distribution(d) == (d, False)
    got, from_array = as_distribution([[1.0, 2.0], [3.0, 0.0]])
    assert from_array and isinstance(got, Normal)
    np.testing.assert_array_equal(got.loc, [1.0, 3.0])
    np.testing.assert_array_equal(got.scale, [2.0, 0.0])
    with pytest.raises(ValueError, match="y_pred.*shape"):
        as_distribution(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="y_pred: the standard deviations"):
        as_distribution([[0.0, -1.0]])
    with pytest.raises(ValueError, match="X must"):
        as_distribution(None, "X")
    with pytest.raises(TypeError, match="y_pred must"):
        as_distribution("abc")
    with pytest.raises(ValueError, match="y_pred must be a rectangular"):
        as_distribution([[0.0, 1.0], [1.0]])
    with pytest.raises(ValueError, match="y_pred"):
        as_distribution([[0.0, np.nan]])


def test_recalibration_uses_the_same_as_distribution():
    from skcalib.recalibration import _checks, _distribution

    # through check_distribution_predictions, which adds the advice for a model passed as X
    assert _checks.as_distribution is as_distribution
    assert _distribution.check_distribution_predictions is _checks.check_distribution_predictions
