"""as_distribution on frozen scipy.stats laws, and the ScipyDistribution family it builds.

Every number is checked against scipy itself (its cdf, ppf, logpdf, moments) or against an
independent quadrature (CRPS, W2 with scipy.integrate.quad), or against skcalib's exact
families (Normal) where the law is the same.
"""

import pickle

import numpy as np
import pytest
from scipy import integrate, stats

import skcalib
from skcalib.distributions import (Laplace, Normal, ScipyDistribution, as_distribution,
                                   concatenate, pairwise_wasserstein, wasserstein_distance)
from skcalib.kernels import GaussianKernel

A = np.array([0.8, 1.5, 3.0])
SCALE = np.array([2.0, 1.0, 0.5])


@pytest.fixture
def gamma():
    return as_distribution(stats.gamma(A, loc=1.0, scale=SCALE))[0]


def test_norm_and_laplace_become_the_exact_families():
    d, from_array = as_distribution(stats.norm(loc=[0.0, 2.0], scale=[1.0, 3.0]))
    assert type(d) is Normal and not from_array
    assert np.array_equal(d.loc, [0.0, 2.0]) and np.array_equal(d.scale, [1.0, 3.0])
    d = as_distribution(stats.laplace([1.0, -1.0], 0.5))[0]       # positional, scalar scale
    assert type(d) is Laplace
    assert np.array_equal(d.loc, [1.0, -1.0]) and np.array_equal(d.scale, [0.5, 0.5])
    d = as_distribution(stats.norm(scale=np.ones(4)))[0]           # default loc broadcast
    assert type(d) is Normal and np.array_equal(d.loc, np.zeros(4))


def test_other_families_delegate_to_scipy(gamma):
    assert type(gamma) is ScipyDistribution and len(gamma) == 3
    frozen = stats.gamma(A, loc=1.0, scale=SCALE)
    y = np.array([1.5, 2.0, 3.0])
    np.testing.assert_allclose(gamma.cdf(y), frozen.cdf(y), rtol=1e-14)
    np.testing.assert_allclose(gamma.ppf(0.3), frozen.ppf(0.3), rtol=1e-14)
    np.testing.assert_allclose(gamma.log_pdf(y), frozen.logpdf(y), rtol=1e-14)
    np.testing.assert_allclose(gamma.mean, frozen.mean(), rtol=1e-14)
    np.testing.assert_allclose(gamma.variance, frozen.var(), rtol=1e-14)
    np.testing.assert_allclose(gamma.frozen().mean(), frozen.mean(), rtol=1e-14)
    assert repr(gamma) == "ScipyDistribution(gamma, n_samples=3)"
    with pytest.raises(AttributeError, match="immutable"):
        gamma.rv = stats.norm
    with pytest.raises(ValueError):
        gamma.params["a"][0] = 5.0                                  # read-only


def test_sampling_follows_scipy(gamma):
    Z = gamma.sample(random_state=0, size=4000)
    assert Z.shape == (4000, 3)
    for i in range(3):
        frozen = stats.gamma(A[i], loc=1.0, scale=SCALE[i])
        assert stats.kstest(Z[:, i], frozen.cdf).pvalue > 1e-3
    assert np.array_equal(gamma.sample(random_state=1), gamma.sample(random_state=1))


def _crps_by_quad(cdf, y, low, high):
    f = lambda x: (cdf(x) - (x >= y)) ** 2  # noqa: E731
    return integrate.quad(f, low, y, limit=200)[0] + integrate.quad(f, y, high, limit=200)[0]


def test_crps_against_scipy_quad(gamma):
    y = np.array([1.5, 4.0, 2.2])
    got = skcalib.crps(y, gamma, reduction="none")
    for i in range(3):
        frozen = stats.gamma(A[i], loc=1.0, scale=SCALE[i])
        want = _crps_by_quad(frozen.cdf, y[i], 1.0, np.inf)
        assert got[i] == pytest.approx(want, rel=2e-4, abs=2e-5)
    t = as_distribution(stats.t(5.0, loc=np.array([0.0, 1.0]), scale=2.0))[0]
    got = skcalib.crps(np.array([0.5, -3.0]), t, reduction="none")
    for i, (loc, yi) in enumerate([(0.0, 0.5), (1.0, -3.0)]):
        want = _crps_by_quad(stats.t(5.0, loc=loc, scale=2.0).cdf, yi, -np.inf, np.inf)
        assert got[i] == pytest.approx(want, rel=5e-4)


def test_pit_nll_and_skce_run_on_a_frozen_law():
    rng = np.random.default_rng(0)
    n = 150
    a = rng.uniform(1.0, 3.0, n)
    y = stats.gamma.rvs(a, random_state=rng)
    frozen = stats.gamma(a)
    np.testing.assert_allclose(skcalib.pit(y, frozen), stats.gamma.cdf(y, a), rtol=1e-14)
    assert skcalib.nll(y, frozen) == pytest.approx(-np.mean(stats.gamma.logpdf(y, a)))
    value = skcalib.skce(y, frozen, random_state=0)
    assert np.isfinite(value) and abs(value) < 0.01           # calibrated: about 0
    shifted = skcalib.skce(y, stats.gamma(a, loc=3.0), random_state=0)
    assert shifted > 10 * abs(value)                          # miscalibrated: clearly positive
    from skcalib.stats import skce_test
    assert skce_test(y, frozen, random_state=0).pvalue > 0.01


def test_kernel_expectations_are_monte_carlo_within_their_stated_error():
    # a normal law through the generic family, against the Normal closed forms
    loc, scale = np.array([0.0, 1.0, -2.0]), np.array([1.0, 0.5, 2.0])
    generic = ScipyDistribution(stats.norm(loc, scale))
    exact = Normal(loc, scale)
    k, y, m = GaussianKernel(1.0), np.array([0.3, 1.0, 0.0]), 4000
    got = generic.expected_kernel(k, y, n_mc_samples=m, random_state=0)
    assert np.all(np.abs(got - exact.expected_kernel(k, y)) < 4.0 / np.sqrt(m))
    got = generic.expected_kernel_pair(k, n_mc_samples=m, random_state=0)
    assert np.all(np.abs(got - exact.expected_kernel_pair(k)) < 4.0 / np.sqrt(m))


def test_wasserstein_by_quantile_quadrature():
    loc, scale = np.array([0.0, 1.0]), np.array([1.0, 3.0])
    generic = ScipyDistribution(stats.norm(loc, scale))
    want = pairwise_wasserstein(Normal(loc, scale))
    np.testing.assert_allclose(pairwise_wasserstein(generic), want, rtol=1e-4, atol=1e-12)
    p = ScipyDistribution(stats.gamma([2.0], scale=1.0))
    q = ScipyDistribution(stats.lognorm([0.5], scale=2.0))        # two scipy families: fine
    f = lambda t: (stats.gamma.ppf(t, 2.0) - stats.lognorm.ppf(t, 0.5, scale=2.0)) ** 2  # noqa
    want = np.sqrt(integrate.quad(f, 0.0, 1.0, limit=200)[0])
    assert wasserstein_distance(p, q)[0] == pytest.approx(want, rel=1e-3)


def test_slicing_and_concatenation_slice_the_parameters(gamma):
    part = gamma[[2, 0]]
    assert type(part) is ScipyDistribution
    np.testing.assert_array_equal(part.params["a"], A[[2, 0]])
    np.testing.assert_array_equal(part.cdf(2.0), gamma.cdf(2.0)[[2, 0]])
    np.testing.assert_array_equal(gamma[np.array([True, False, True])].scale, SCALE[[0, 2]])
    both = concatenate([gamma, gamma[1:]])
    np.testing.assert_array_equal(both.params["a"], np.r_[A, A[1:]])
    np.testing.assert_array_equal(both.ppf(0.7), np.r_[gamma.ppf(0.7), gamma[1:].ppf(0.7)])
    other = ScipyDistribution(stats.lognorm([0.5], scale=2.0))
    with pytest.raises(TypeError, match="one scipy family; got gamma and lognorm"):
        concatenate([gamma, other])


def test_pickles_round_trip(gamma):
    back = pickle.loads(pickle.dumps(gamma))
    assert type(back) is ScipyDistribution and back.rv.name == "gamma"
    np.testing.assert_array_equal(back.cdf(2.0), gamma.cdf(2.0))
    assert len(concatenate([back, gamma])) == 6             # one family after a round trip


@pytest.mark.parametrize("obj, exc, match", [
    (stats.poisson(np.ones(3)), TypeError, "poisson is a discrete distribution"),
    (stats.multivariate_normal([0.0, 0.0]), TypeError, "not a frozen univariate continuous"),
    (stats.gamma, TypeError, "scipy.stats.gamma is not frozen"),
    (stats.norm(0.0, 1.0), ValueError, "every parameter .* is a scalar"),
    (stats.gamma(np.array([1.0, -1.0])), ValueError, r"row 1 \(a=-1.0.*outside the domain"),
    (stats.norm(np.zeros(2), [1.0, 0.0]), ValueError, "scale of scipy.stats.norm must be "
                                                      "positive"),
    (stats.norm([0.0, np.nan], 1.0), ValueError, "'loc' must be finite"),
    (stats.norm(np.zeros((2, 2))), ValueError, "'loc' must have 0 or 1 dimensions"),
    (stats.norm(np.zeros(2), np.ones(3)), ValueError, "incompatible shapes"),
    (stats.norm(np.zeros(0)), ValueError, "length 0"),
])
def test_refusals_name_the_argument(obj, exc, match):
    with pytest.raises(exc, match=match) as info:
        as_distribution(obj, "y_pred")
    assert str(info.value).startswith("y_pred")


def test_refusals_of_the_new_scipy_distribution_classes():
    if not hasattr(stats, "Normal"):          # scipy < 1.15
        pytest.skip("no scipy.stats.Normal")
    with pytest.raises(TypeError, match="new distribution classes"):
        as_distribution(stats.Normal(mu=np.zeros(3), sigma=1.0), "y_pred")
    with pytest.raises(TypeError, match="frozen: .*not frozen"):
        ScipyDistribution(stats.norm)


def test_metrics_refuse_frozen_laws_by_their_argument_name():
    y = np.zeros(3)
    with pytest.raises(TypeError, match="^y_pred: scipy.stats.poisson is a discrete"):
        skcalib.crps(y, stats.poisson(np.ones(3)))
    with pytest.raises(TypeError, match="^y_pred: scipy.stats.poisson is a discrete"):
        skcalib.skce(y, stats.poisson(np.ones(3)))


def test_laws_without_finite_moments_refuse_moment_based_metrics():
    cauchy = stats.cauchy(np.zeros(20), 1.0)
    y = np.linspace(-1.0, 1.0, 20)
    assert np.all(np.isfinite(skcalib.pit(y, cauchy)))         # the CDF is fine
    with pytest.raises(ValueError, match="no finite mean or variance"):
        skcalib.ence(y, cauchy)
    with pytest.raises(ValueError, match="no finite mean or variance"):
        skcalib.skce(y, cauchy)


def test_univariate_metrics_and_tests_agree_with_the_exact_family():
    # the same normal laws as a ScipyDistribution (scipy's functions) and as a Normal
    rng = np.random.default_rng(1)
    loc, scale = rng.normal(size=80), rng.uniform(0.5, 2.0, 80)
    y = loc + scale * rng.normal(size=80)
    generic, exact = ScipyDistribution(stats.norm(loc, scale)), Normal(loc, scale)
    from skcalib.stats import pit_test
    for metric in (skcalib.pit, skcalib.ence, skcalib.uce, skcalib.quantile_calibration_error,
                   skcalib.miscalibration_area, skcalib.nll):
        np.testing.assert_allclose(metric(y, generic), metric(y, exact), rtol=1e-9, atol=1e-12,
                                   err_msg=metric.__name__)
    assert pit_test(y, generic).pvalue == pytest.approx(pit_test(y, exact).pvalue, rel=1e-9)
    assert skcalib.crps(y, generic) == pytest.approx(skcalib.crps(y, exact), abs=2e-5)


def test_nll_names_the_support_of_a_bounded_scipy_law():
    """The support test reads ppf(0) and ppf(1), so any bounded law (a beta here, Quantiles'
    linear tails elsewhere) gets the 'outside the support' message, not 'misscaled'."""
    law = stats.beta(np.full(3, 2.0), np.full(3, 3.0))
    with pytest.raises(ValueError, match="row 2 y_true = 1.5 lies outside the support"):
        skcalib.nll(np.array([0.2, 0.5, 1.5]), law)
    assert np.isfinite(skcalib.nll(np.array([0.2, 0.5, 0.7]), law))
