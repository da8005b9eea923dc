"""Quantile recalibration (Kuleshov et al. 2018) and the Recalibrated distribution."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import integrate, stats
from sklearn.frozen import FrozenEstimator
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import BayesianRidge

from skcalib import (crps, interval_coverage, miscalibration_area, nll, pit,
                     quantile_calibration_error)
from skcalib.distributions import Laplace, Mixture, MultivariateNormal, Normal, Recalibrated
from skcalib.recalibration import (DistributionTemperatureScaling, QuantileRecalibration,
                                   RecalibratedRegressor)


def _miscalibrated(n, seed=0):
    """A Normal model with std 1 and no bias; the truth is shifted by 0.5 with std 2."""
    rng = np.random.default_rng(seed)
    mean = rng.normal(size=n)
    y = mean + 0.5 + 2.0 * rng.standard_normal(n)
    return mean, y


def _small_map():
    return np.array([0.0, 0.2, 0.5, 0.9, 1.0]), np.array([0.0, 0.1, 0.6, 0.7, 1.0])


# ---------------------------------------------------------------------------------------------
# the fit


# scikit-learn's estimator checks of this class run with the whole family in
# tests/recalibration/test_family.py (one place, not twice).


def test_map_is_sklearn_isotonic_fit_of_the_pit_ecdf():
    mean, y = _miscalibrated(500)
    u = Normal(mean, 1.0).cdf(y)
    ecdf = (stats.rankdata(u) - 0.5) / u.size              # mid-ranks
    iso = IsotonicRegression(out_of_bounds="clip").fit(u, ecdf)
    qr = QuantileRecalibration().fit(Normal(mean, 1.0), y)
    grid = np.linspace(u.min(), u.max(), 2001)
    assert_allclose(np.interp(grid, qr.knots_, qr.values_), iso.predict(grid), atol=1e-12)
    assert qr.knots_[0] == 0 and qr.knots_[-1] == 1
    assert qr.values_[0] == 0 and qr.values_[-1] == 1


def test_in_sample_pit_is_the_ecdf_and_calibration_error_is_at_most_1_over_n():
    n = 2000
    mean, y = _miscalibrated(n)
    X = Normal(mean, 1.0)
    qr = QuantileRecalibration().fit(X, y)
    u = X.cdf(y)
    ranks = np.argsort(np.argsort(u)) + 1
    new = pit(y, qr.transform(X))
    assert_allclose(new, (ranks - 0.5) / n, atol=1e-12)      # R(PIT) = mid-rank ECDF(PIT)
    before = quantile_calibration_error(y, X)
    after = quantile_calibration_error(y, qr.transform(X))
    assert before > 0.1 and after <= 0.5 / n + 1e-12
    assert miscalibration_area(y, qr.transform(X)) <= 0.5 / n
    assert np.isfinite(nll(y, qr.transform(X)))


def test_new_targets_beyond_the_fitted_pit_range_have_positive_density():
    """With the plain ECDF, R(max PIT) = 1 and the top piece is flat (infinite test NLL)."""
    mean, y = _miscalibrated(4000, seed=2)
    qr = QuantileRecalibration().fit(Normal(mean[:2000], 1.0), y[:2000])
    d = qr.transform(Normal(mean[2000:], 1.0))
    assert qr.values_[-2] < 1 and qr.values_[1] > 0
    assert np.all(np.isfinite(d.log_pdf(y[2000:])))
    far = Normal(mean[2000:], 1.0).ppf(1 - 1e-9)
    assert np.all(np.isfinite(d.log_pdf(far)))


def test_out_of_sample_improves_on_a_miscalibrated_model():
    mean, y = _miscalibrated(20000, seed=1)
    fit, test = slice(0, 10000), slice(10000, None)
    qr = QuantileRecalibration().fit(Normal(mean[fit], 1.0), y[fit])
    X_test = Normal(mean[test], 1.0)
    before = quantile_calibration_error(y[test], X_test)
    after = quantile_calibration_error(y[test], qr.transform(X_test))
    assert before > 0.1 and after < 0.01
    # variance scaling cannot remove the bias; quantile recalibration can
    dts = DistributionTemperatureScaling().fit(Normal(mean[fit], 1.0), y[fit])
    assert after < 0.5 * quantile_calibration_error(y[test], dts.transform(X_test))
    assert crps(y[test], qr.transform(X_test)) < crps(y[test], X_test)
    assert_allclose(interval_coverage(y[test], qr.transform(X_test)),
                    [0.5, 0.8, 0.9, 0.95], atol=0.015)


def test_pit_of_recalibrated_is_R_of_pit():
    mean, y = _miscalibrated(300)
    X = Normal(mean, 1.5)
    qr = QuantileRecalibration().fit(X[:150], y[:150])
    d = qr.transform(X[150:])
    assert_allclose(pit(y[150:], d), np.interp(X[150:].cdf(y[150:]), qr.knots_, qr.values_))


def test_array_input_equals_normal_input_and_is_not_mutated():
    mean, y = _miscalibrated(400)
    A = np.column_stack([mean, np.full(400, 1.0)])
    A0, y0 = A.copy(), y.copy()
    a = QuantileRecalibration().fit(A, y)
    b = QuantileRecalibration().fit(Normal(mean, 1.0), y)
    assert_array_equal(a.knots_, b.knots_)
    assert_array_equal(a.values_, b.values_)
    assert a.n_features_in_ == 2 and not hasattr(b, "n_features_in_")
    da, db = a.transform(A), b.transform(Normal(mean, 1.0))
    assert isinstance(da, Recalibrated)
    assert_array_equal(da.cdf(y), db.cdf(y))
    assert_array_equal(A, A0)
    assert_array_equal(y, y0)
    mu, sd = a.predict(A, return_std=True)
    assert_allclose(mu, da.mean)
    assert_allclose(sd, np.sqrt(da.variance))


def test_sample_weight_integer_weights_are_repeated_rows():
    mean, y = _miscalibrated(200)
    w = np.random.default_rng(3).integers(0, 4, size=200)
    a = QuantileRecalibration().fit(Normal(mean, 1.0), y, sample_weight=w)
    b = QuantileRecalibration().fit(Normal(np.repeat(mean, w), 1.0), np.repeat(y, w))
    grid = np.linspace(0, 1, 1001)
    assert_allclose(np.interp(grid, a.knots_, a.values_), np.interp(grid, b.knots_, b.values_),
                    atol=1e-12)
    big = QuantileRecalibration().fit(Normal(mean, 1.0), y, sample_weight=w * 1e307)
    assert_allclose(big.values_, a.values_)


def test_refit_is_idempotent():
    mean, y = _miscalibrated(300)
    qr = QuantileRecalibration()
    k1 = qr.fit(Normal(mean, 1.0), y).knots_.copy()
    k2 = qr.fit(Normal(mean, 1.0), y).knots_
    assert_array_equal(k1, k2)


def test_bad_input():
    mean, y = _miscalibrated(50)
    X = Normal(mean, 1.0)
    with pytest.raises(TypeError, match="univariate"):
        QuantileRecalibration().fit(MultivariateNormal(np.zeros((50, 2)), np.ones(50)),
                                    np.zeros((50, 2)))
    with pytest.raises(ValueError, match="sample_weight"):
        QuantileRecalibration().fit(X, y, sample_weight=np.zeros(50))
    with pytest.raises(ValueError, match="y"):
        QuantileRecalibration().fit(X, y[:10])
    qr = QuantileRecalibration().fit(X, y)
    with pytest.raises(ValueError, match="Laplace"):
        qr.transform(Laplace(mean, 1.0))
    with pytest.raises(ValueError, match="X"):
        QuantileRecalibration().fit(np.ones((50, 3)), y)


def test_recalibrated_regressor_accepts_it():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 3))
    y = X @ [1.0, 2.0, 3.0] + rng.standard_t(3, size=600)
    for recal, kw in ((QuantileRecalibration(), dict(cv=3, ensemble=False)),
                      (QuantileRecalibration(n_knots=50), dict(frozen=True)),
                      ("quantile", dict(cv=3, ensemble=False))):
        est = FrozenEstimator(BayesianRidge().fit(X, y)) if kw.pop("frozen", False) else (
            BayesianRidge())
        rr = RecalibratedRegressor(est, recal, **kw).fit(X, y)
        d = rr.predict_distribution(X)
        assert isinstance(d, Recalibrated)
        assert quantile_calibration_error(y, d) < 0.02
        assert rr.predict(X).shape == (600,)


# ---------------------------------------------------------------------------------------------
# the Recalibrated distribution


def _brute_cdf_moments(d, i):
    """Mean, variance (quadrature over the quantile level) of row ``i``."""
    pieces = np.r_[0.0, d.values, 1.0]
    q = lambda t: d[i].ppf(t)[0]
    m = sum(integrate.quad(q, a, b, limit=200)[0] for a, b in zip(pieces[:-1], pieces[1:]) if b > a)
    m2 = sum(integrate.quad(lambda t: q(t) ** 2, a, b, limit=200)[0]
             for a, b in zip(pieces[:-1], pieces[1:]) if b > a)
    return m, m2 - m * m


def _brute_crps(d, i, y):
    f = lambda x: (d[i].cdf(x)[0] - (x >= y)) ** 2
    lo, hi = d[i].ppf(1e-12)[0], d[i].ppf(1 - 1e-12)[0]
    pts = sorted(set([d[i].ppf(v)[0] for v in d.values[1:-1]] + [y]))
    return (integrate.quad(f, min(lo, y) - 1, max(hi, y) + 1, points=pts, limit=500)[0])


@pytest.mark.parametrize("base", [Normal([0.3, -1.0], [1.0, 2.5]),
                                  Laplace([0.3, -1.0], [1.0, 2.5])])
def test_moments_and_crps_against_quadrature(base):
    knots, values = _small_map()
    d = Recalibrated(base, knots, values)
    y = np.array([0.7, -4.0])
    exact = isinstance(base, Normal)
    rtol = 1e-7 if exact else 2e-3
    for i in range(2):
        m, v = _brute_cdf_moments(d, i)
        assert_allclose(d.mean[i], m, rtol=rtol, atol=1e-8)
        assert_allclose(d.variance[i], v, rtol=rtol)
        assert_allclose(crps(y, d, reduction="none")[i], _brute_crps(d, i, y[i]), rtol=rtol)


def test_identity_map_is_the_base():
    base = Normal([0.3, -1.0, 2.0], [1.0, 2.5, 0.1])
    d = Recalibrated(base, [0.0, 1.0], [0.0, 1.0])
    y = np.array([0.0, 1.0, 2.05])
    assert_allclose(crps(y, d, reduction="none"), crps(y, base, reduction="none"), rtol=1e-12)
    assert_allclose(d.mean, base.mean, atol=1e-15)
    assert_allclose(d.variance, base.variance, rtol=1e-12)
    assert_allclose(d.log_pdf(y), base.log_pdf(y), rtol=1e-12)
    assert_allclose(nll(y, d), nll(y, base))


def test_crps_with_a_fitted_map_of_100k_knots_is_stable():
    """Tiny pieces near u = 0 and 1: no cancellation (was 0 before the piece averages)."""
    mean, y = _miscalibrated(100_000)
    qr = QuantileRecalibration().fit(Normal(mean, 1.0), y)
    d = qr.transform(Normal(mean[:2000], 1.0))
    truth = crps(y[:2000], Normal(mean[:2000] + 0.5, 2.0))
    assert_allclose(crps(y[:2000], d), truth, rtol=5e-3)
    assert_allclose(d.mean, mean[:2000] + 0.5, atol=0.02)
    assert_allclose(np.sqrt(d.variance), 2.0, rtol=0.01)


def test_ppf_inverts_cdf_and_log_pdf_is_its_derivative():
    knots, values = _small_map()
    base = Mixture([0.3, 0.7], [Normal([0.0, 1.0], 1.0), Normal([2.0, -1.0], 0.5)])
    d = Recalibrated(base, knots, values)
    q = np.array([0.05, 0.65])
    assert_allclose(d.cdf(d.ppf(q)), q, atol=1e-10)
    y = np.array([0.4, -0.9])
    assert_allclose(d.ppf(d.cdf(y)), y, atol=1e-8)
    h = 1e-6
    fd = (d.cdf(y + h) - d.cdf(y - h)) / (2 * h)
    assert_allclose(np.exp(d.log_pdf(y)), fd, rtol=1e-5)
    # the density integrates to one
    total = integrate.quad(lambda x: np.exp(d[0].log_pdf(x)[0]), -np.inf, np.inf, limit=200)[0]
    assert_allclose(total, 1.0, atol=1e-6)


def test_flat_pieces_give_zero_density_and_the_generalised_inverse():
    d = Recalibrated(Normal([0.0], 1.0), [0.0, 0.5, 0.7, 1.0], [0.0, 0.5, 0.5, 1.0])
    y = stats.norm.ppf(0.6)
    assert d.log_pdf([y])[0] == -np.inf
    assert_allclose(d.ppf(0.5), [0.0], atol=1e-15)          # min{u: R(u) >= 0.5} = 0.5
    assert_allclose(d.ppf(0.50001), stats.norm.ppf([0.7 + 0.00001 * 0.6]), rtol=1e-9)
    assert d.ppf(0.0)[0] == -np.inf and d.ppf(1.0)[0] == np.inf


def test_sample_follows_the_cdf():
    knots, values = _small_map()
    d = Recalibrated(Normal([1.0], 2.0), knots, values)
    Z = d.sample(random_state=0, size=20000)[:, 0]
    assert stats.kstest(Z, lambda z: d.cdf(np.full(1, z))[0] if np.ndim(z) == 0 else
                        np.array([d.cdf([v])[0] for v in z])).pvalue > 0.01
    assert d.sample(random_state=0).shape == (1,)


def test_metrics_accept_it():
    mean, y = _miscalibrated(300)
    d = QuantileRecalibration().fit(Normal(mean, 1.0), y).transform(Normal(mean, 1.0))
    for f in (crps, nll, quantile_calibration_error, miscalibration_area):
        assert np.isfinite(f(y, d))
    assert interval_coverage(y, d).shape == (4,)
    assert len(d[:5]) == 5 and isinstance(d[:5], Recalibrated)


@pytest.mark.parametrize("knots, values", [
    ([0.0, 0.5], [0.0, 1.0]), ([0.0, 0.5, 0.5, 1.0], [0.0, 0.2, 0.3, 1.0]),
    ([0.0, 1.0], [0.1, 1.0]), ([0.0, 0.5, 1.0], [0.0, 0.6, 0.5]), ([0.0, 1.0], [0.0])])
def test_recalibrated_rejects_a_bad_map(knots, values):
    with pytest.raises(ValueError, match="knots|values"):
        Recalibrated(Normal([0.0], 1.0), knots, values)


def test_recalibrated_rejects_a_multivariate_base():
    with pytest.raises(TypeError, match="univariate"):
        Recalibrated(MultivariateNormal(np.zeros((2, 2)), np.ones(2)), [0.0, 1.0], [0.0, 1.0])
    with pytest.raises(TypeError, match="base"):
        Recalibrated(np.zeros((2, 2)), [0.0, 1.0], [0.0, 1.0])


def test_n_knots_thins_the_map_and_smooths_the_density():
    mean, y = _miscalibrated(40000, seed=4)
    fit, test = slice(0, 20000), slice(20000, None)
    full = QuantileRecalibration().fit(Normal(mean[fit], 1.0), y[fit])
    thin = QuantileRecalibration(n_knots=200).fit(Normal(mean[fit], 1.0), y[fit])
    assert thin.knots_.size <= 202
    # the kept knots are fitted points of the full map
    assert np.all(np.isin(thin.knots_, full.knots_))
    assert_allclose(np.interp(thin.knots_, full.knots_, full.values_), thin.values_)
    X_test = Normal(mean[test], 1.0)
    truth = nll(y[test], Normal(mean[test] + 0.5, 2.0))
    nll_full, nll_thin = nll(y[test], full.transform(X_test)), nll(y[test], thin.transform(X_test))
    assert nll_full > truth + 0.2 and nll_thin < truth + 0.05
    assert quantile_calibration_error(y[test], thin.transform(X_test)) < 0.01
    # fewer fitted points than n_knots: the full map
    small = QuantileRecalibration(n_knots=500).fit(Normal(mean[:100], 1.0), y[:100])
    assert small.knots_.size == 102


@pytest.mark.parametrize("n_knots", [0, -1, 2.5, "10", True])
def test_bad_n_knots(n_knots):
    mean, y = _miscalibrated(50)
    with pytest.raises((ValueError, TypeError), match="n_knots"):
        QuantileRecalibration(n_knots=n_knots).fit(Normal(mean, 1.0), y)


def test_kernel_errors_and_wasserstein_are_defined():
    """Recalibrated predictions have W2 distances and kernel calibration errors (issue 21; they
    used to raise): through the identity map they equal the base's."""
    from skcalib import skce
    from skcalib.distributions import wasserstein_distance

    base = Normal([0.0, 1.0, 2.0], [1.0, 2.0, 0.5])
    d = Recalibrated(base, [0.0, 1.0], [0.0, 1.0])
    np.testing.assert_allclose(wasserstein_distance(d, d[::-1]),
                               wasserstein_distance(base, base[::-1]), rtol=1e-12)
    assert np.isfinite(skce(np.array([0.0, 1.0, 3.0]), d, random_state=0))


def test_quadrature_path_agrees_with_the_exact_normal_path_on_a_fitted_map():
    """The quadrature (non-Normal bases) on a 100,000-knot map: its top Gauss-Legendre level
    used to invert to u = 1 by rounding, an infinite quantile and an infinite CRPS."""
    mean, y = _miscalibrated(100_000)
    qr = QuantileRecalibration().fit(Normal(mean, 1.0), y)
    exact = qr.transform(Normal(mean[:300], 1.0))
    # the same distribution behind an identity Recalibrated: not a Normal base, so quadrature
    quad = Recalibrated(Recalibrated(Normal(mean[:300], 1.0), [0.0, 1.0], [0.0, 1.0]),
                        qr.knots_, qr.values_)
    assert_allclose(quad._crps(y[:300]), exact._crps(y[:300]), rtol=1e-3)
    assert_allclose(quad.mean, exact.mean, atol=1e-3)
    assert_allclose(quad.variance, exact.variance, rtol=2e-3)
    assert np.all(np.isfinite(quad.ppf(1 - 1e-6))) and quad.ppf(1.0)[0] == np.inf


def test_mixture_of_recalibrated_components():
    """The cross-fitted ensemble of RecalibratedRegressor mixes Recalibrated distributions."""
    knots, values = _small_map()
    c1 = Recalibrated(Normal([0.0, 1.0], [1.0, 2.0]), knots, values)
    c2 = Recalibrated(Laplace([1.0, -1.0], [0.5, 1.0]), [0.0, 0.5, 1.0], [0.0, 0.3, 1.0])
    mix = Mixture([[0.3, 0.7], [0.5, 0.5]], [c1, c2])
    y = np.array([0.4, -0.2])
    assert_allclose(mix.cdf(y), np.array([0.3, 0.5]) * c1.cdf(y) + np.array([0.7, 0.5]) * c2.cdf(y))
    q = np.array([0.2, 0.9])
    assert_allclose(mix.cdf(mix.ppf(q)), q, atol=1e-9)
    assert_allclose(mix.mean, np.array([0.3, 0.5]) * c1.mean + np.array([0.7, 0.5]) * c2.mean)
    for i in range(2):
        f = lambda x: (mix[i].cdf(x)[0] - (x >= y[i])) ** 2
        brute = integrate.quad(f, -40, 40, points=[y[i]], limit=500)[0]
        assert_allclose(crps(y, mix, reduction="none")[i], brute, rtol=3e-3)
    assert np.all(np.isfinite(nll(y, mix)))
    with pytest.raises(ValueError, match="y"):
        mix.cdf([0.0, 1.0, 2.0])


def test_recalibrated_regressor_ensemble():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(900, 3))
    y = X @ [1.0, 2.0, 3.0] + 0.5 + rng.standard_t(3, size=900)
    rr = RecalibratedRegressor(BayesianRidge(), "quantile", cv=3).fit(X[:600], y[:600])
    d = rr.predict_distribution(X[600:])
    assert isinstance(d, Mixture) and isinstance(d.components[0], Recalibrated)
    base = RecalibratedRegressor(BayesianRidge(), "temperature", cv=3).fit(X[:600], y[:600])
    assert (quantile_calibration_error(y[600:], d)
            < quantile_calibration_error(y[600:], base.predict_distribution(X[600:])))
    assert rr.predict(X[600:]).shape == (300,)
    assert np.isfinite(crps(y[600:], d)) and np.isfinite(nll(y[600:], d))
    q = np.random.default_rng(2).uniform(0.001, 0.999, 300)
    assert_allclose(d.cdf(d.ppf(q)), q, atol=1e-10)
