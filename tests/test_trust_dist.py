"""Issue 21, predictive-distribution objects and kernels: Recalibrated predictions work with every
metric, test, scorer and the report (their 2-Wasserstein distance); empty distributions are
refused everywhere; a mixture's distance to itself is exactly 0; huge-but-finite parameters give
finite answers or clear errors; errors name the problem."""

import math
import warnings

import numpy as np
import pytest
from scipy import integrate

import skcalib
from skcalib import metrics, stats
from skcalib.distributions import (
    Laplace,
    Mixture,
    MultivariateNormal,
    Normal,
    Recalibrated,
    concatenate,
    pairwise_wasserstein,
    wasserstein_distance,
)
from skcalib.kernels import DeltaKernel, GaussianKernel, WassersteinKernel, tensor


def _map(rng, k):
    a = np.r_[0.0, np.sort(rng.uniform(size=k)), 1.0]
    r = np.r_[0.0, np.sort(rng.uniform(size=k)), 1.0]
    return a, r


def _brute_w2(p, q):
    """``sqrt(int_0^1 (G_p^{-1} - G_q^{-1})^2)`` of two one-row distributions by adaptive
    quadrature, with the kinks of the maps as break points."""
    pts = []
    for d in (p, q):
        maps = []
        while isinstance(d, Recalibrated):
            maps.append((d.knots, d.values))
            d = d.base
        levels = np.array([0.5])     # kinks in tau: the values of the composed map
        for a, r in maps[::-1]:
            levels = np.r_[np.interp(levels, a, r), r]
        pts.append(levels)
    pts = np.unique(np.concatenate(pts))

    def f(t):
        return (p.ppf(t)[0] - q.ppf(t)[0]) ** 2

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        val = integrate.quad(f, 0.0, 1.0, points=pts[(pts > 0) & (pts < 1)], limit=5000,
                             epsabs=1e-14, epsrel=1e-12)[0]
    return math.sqrt(val)


# --------------------------------------------------------------------------------------------
# 1. Recalibrated: Wasserstein distances, and every metric / test / scorer / report


@pytest.mark.parametrize("family", [Normal, Laplace])
def test_recalibrated_identity_map_has_the_base_w2(family):
    base = family([0.0, 1.0, 3.0, -2.0], [1.0, 2.0, 0.5, 4.0])
    d = Recalibrated(base, [0.0, 1.0], [0.0, 1.0])
    np.testing.assert_allclose(pairwise_wasserstein(d), pairwise_wasserstein(base),
                               rtol=1e-12, atol=1e-12)


def test_recalibrated_normal_rows_are_location_scale_w2_of_their_exact_moments():
    """One map: rows are m + s Q, so W2^2 = (mean - mean')^2 + (sd - sd')^2 with the exact
    (closed-form) mean and variance of the Normal-base Recalibrated."""
    rng = np.random.default_rng(0)
    a, r = _map(rng, 60)
    d = Recalibrated(Normal(rng.normal(size=6), rng.uniform(0.2, 3.0, size=6)), a, r)
    m, sd = d.mean, np.sqrt(d.variance)
    expected = np.hypot(m[:, None] - m[None, :], sd[:, None] - sd[None, :])
    np.testing.assert_allclose(pairwise_wasserstein(d), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("family", [Normal, Laplace])
def test_recalibrated_w2_between_different_maps_matches_quadrature(family):
    rng = np.random.default_rng(1)
    a1, r1 = _map(rng, 40)
    a2, r2 = _map(rng, 30)
    p = Recalibrated(family([0.0, 1.0], [1.0, 2.0]), a1, r1)
    q = Recalibrated(family([0.5, 2.0], [1.5, 0.3]), a2, r2)
    got = wasserstein_distance(p, q)
    ref = [_brute_w2(p[k], q[k]) for k in range(2)]
    np.testing.assert_allclose(got, ref, rtol=1e-9)
    # symmetric, and the kernel between the two batches uses the same distances
    np.testing.assert_allclose(wasserstein_distance(q, p), got, rtol=1e-13)
    np.testing.assert_allclose(WassersteinKernel(1.0)(p, q), np.exp(-pairwise_wasserstein(p, q)),
                               rtol=1e-13)
    np.testing.assert_allclose(np.diag(pairwise_wasserstein(p, q)), got, rtol=1e-13)


def test_nested_and_mixture_bases_match_quadrature():
    rng = np.random.default_rng(2)
    a1, r1 = _map(rng, 20)
    a2, r2 = _map(rng, 25)
    base = Normal([0.0, 1.0, 3.0], [1.0, 2.0, 0.5])
    nested = Recalibrated(Recalibrated(base, a1, r1), a2, r2)
    D = pairwise_wasserstein(nested)
    np.testing.assert_allclose(D[0, 1:], [_brute_w2(nested[0], nested[k]) for k in (1, 2)],
                               rtol=1e-9)
    mix = Mixture([0.3, 0.7], [Normal([0.0, 1.0], [1.0, 0.5]), Normal([2.0, -1.0], [0.5, 2.0])])
    p, q = Recalibrated(mix, a1, r1), Recalibrated(mix, a2, r2)
    np.testing.assert_allclose(wasserstein_distance(p, q),
                               [_brute_w2(p[k], q[k]) for k in range(2)], rtol=1e-6)
    np.testing.assert_allclose(pairwise_wasserstein(p)[0, 1], _brute_w2(p[0], p[1]), rtol=1e-6)


def test_recalibrated_mixture_w2_agrees_with_monte_carlo():
    """The comonotone coupling by sorting large samples (Monte Carlo) agrees with the rule."""
    rng = np.random.default_rng(3)
    a, r = _map(rng, 200)   # more pieces than the mixture rule's panels
    mix = Mixture([0.5, 0.5], [Laplace([0.0, 2.0], [1.0, 0.5]), Laplace([3.0, -1.0], 1.0)])
    d = Recalibrated(mix, a, r)
    x = np.sort(d[[0] * 400_000].sample(random_state=0))
    y = np.sort(d[[1] * 400_000].sample(random_state=1))
    mc = math.sqrt(np.mean((x - y) ** 2))
    assert pairwise_wasserstein(d)[0, 1] == pytest.approx(mc, rel=5e-3)


@pytest.mark.parametrize("family", [Normal, Laplace])
def test_recalibrated_pairwise_is_symmetric_nonnegative_zero_diagonal(family):
    rng = np.random.default_rng(4)
    a, r = _map(rng, 50)
    d = Recalibrated(family(rng.normal(size=7), rng.uniform(0.5, 2.0, size=7)), a, r)
    ens = Mixture([0.4, 0.6], [d, Recalibrated(d.base, *_map(rng, 10))])
    for D in (pairwise_wasserstein(d), pairwise_wasserstein(ens)):
        assert np.all(np.diag(D) == 0.0)
        assert np.array_equal(D, D.T)
        assert np.all(D >= 0.0)


def _quantile_recalibrated(n=120, seed=0):
    from skcalib.recalibration import QuantileRecalibration

    rng = np.random.default_rng(seed)
    mu = rng.normal(size=n)
    y = mu + 1.7 * rng.standard_t(4, size=n)
    base = Normal(mu, np.ones(n))
    return QuantileRecalibration().fit(base, y).transform(base), y


_EVERY_REGRESSION_CALL = {
    "skce": lambda y, d: metrics.skce(y, d, random_state=0),
    "ucme": lambda y, d: metrics.ucme(y, d, random_state=0),
    "skce_test": lambda y, d: stats.skce_test(y, d, n_resamples=20, random_state=0).pvalue,
    "skce_ci": lambda y, d: stats.skce_ci(y, d, random_state=0).estimate,
    "ucme_test": lambda y, d: stats.ucme_test(y, d, random_state=0).pvalue,
    "consistency_test": lambda y, d: stats.consistency_test("skce", y, d, n_resamples=20,
                                                            random_state=0).pvalue,
    "pit_test": lambda y, d: stats.pit_test(y, d).pvalue,
    "crps": metrics.crps, "nll": metrics.nll, "pit": metrics.pit,
    "interval_coverage": metrics.interval_coverage, "ence": metrics.ence, "uce": metrics.uce,
    "quantile_calibration_error": metrics.quantile_calibration_error,
    "miscalibration_area": metrics.miscalibration_area,
}


@pytest.mark.parametrize("name", sorted(_EVERY_REGRESSION_CALL))
def test_every_metric_and_test_works_on_quantile_recalibrated_predictions(name):
    d, y = _quantile_recalibrated()
    assert isinstance(d, Recalibrated)
    assert np.all(np.isfinite(_EVERY_REGRESSION_CALL[name](y, d)))


def test_report_and_scorers_on_a_quantile_recalibrated_regressor():
    """The issue's case: a RecalibratedRegressor with QuantileRecalibration (a Mixture of
    Recalibrated components when ensembling) in calibration_report and the kernel scorers."""
    from sklearn.linear_model import BayesianRidge

    from skcalib.recalibration import QuantileRecalibration, RecalibratedRegressor
    from skcalib.scorers import get_scorer

    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 2))
    y = X @ [1.0, 2.0] + rng.standard_t(3, size=90)
    for ensemble in (False, True):
        reg = RecalibratedRegressor(BayesianRidge(), recalibrator=QuantileRecalibration(), cv=2,
                                    ensemble=ensemble).fit(X, y)
        for name in ("neg_skce", "neg_ucme", "neg_crps", "skce_pvalue"):
            assert np.isfinite(get_scorer(name)(reg, X, y))
        text = str(skcalib.calibration_report(reg, X, y, n_resamples=20))
        assert "SKCE" in text and "n/a" not in text


# --------------------------------------------------------------------------------------------
# 2. Empty distribution objects


_E = np.array([])
_EMPTY = {
    "Normal": lambda: Normal(_E, _E),
    "Laplace": lambda: Laplace(_E, _E),
    "Mixture": lambda: Mixture(np.zeros((0, 2)), [Normal(_E, _E), Normal(_E, _E)]),
    "Recalibrated": lambda: Recalibrated(Normal(_E, _E), [0.0, 1.0], [0.0, 1.0]),
    "MultivariateNormal": lambda: MultivariateNormal(np.zeros((0, 2)), np.zeros((0, 2))),
}


def _displays():
    import matplotlib

    matplotlib.use("Agg")
    from skcalib.plotting import (IntervalCoverageDisplay, PITHistogramDisplay,
                                  QuantileCalibrationDisplay)

    return {
        "PITHistogramDisplay": PITHistogramDisplay.from_predictions,
        "QuantileCalibrationDisplay": QuantileCalibrationDisplay.from_predictions,
        "IntervalCoverageDisplay": IntervalCoverageDisplay.from_predictions,
    }


_ENTRY_POINTS = sorted(list(_EVERY_REGRESSION_CALL) + [
    "quantile_calibration_curve", "interval_coverage_error", "calibration_report",
    "PITHistogramDisplay", "QuantileCalibrationDisplay", "IntervalCoverageDisplay", "scorer"])


def _entry_point(name):
    if name in _EVERY_REGRESSION_CALL:
        return _EVERY_REGRESSION_CALL[name]
    if name == "calibration_report":
        return lambda y, d: skcalib.calibration_report(d, y=y)
    if name == "scorer":
        from skcalib.scorers import get_scorer

        class Model:
            def fit(self, X, y):
                return self

            def predict_distribution(self, X):
                return _EMPTY[self.family]()

        def call(y, d):
            model = Model()
            model.family = type(d).__name__
            return get_scorer("neg_crps")(model, np.zeros((0, 1)), y)
        return call
    if name in ("quantile_calibration_curve", "interval_coverage_error"):
        return getattr(metrics, name)
    return _displays()[name]


@pytest.mark.parametrize("family", sorted(_EMPTY))
@pytest.mark.parametrize("name", _ENTRY_POINTS)
def test_empty_distributions_are_refused_by_every_entry_point(name, family):
    d = _EMPTY[family]()
    y = np.zeros((0, 2)) if family == "MultivariateNormal" else _E
    with pytest.raises((ValueError, TypeError)) as info:
        _entry_point(name)(y, d)
    msg = str(info.value)
    if family != "MultivariateNormal" or name in ("skce", "ucme", "skce_test", "skce_ci",
                                                   "ucme_test", "consistency_test", "nll"):
        assert isinstance(info.value, ValueError)
        assert "is empty" in msg or "at least" in msg, msg


def test_the_empty_message_names_y_pred_and_the_array_form_agrees():
    with pytest.raises(ValueError, match=r"y_pred is empty: found a Normal with 0 sample"):
        metrics.crps(_E, Normal(_E, _E))
    with pytest.raises(ValueError, match=r"y_pred.*0 sample"):
        metrics.crps(_E, np.zeros((0, 2)))


# --------------------------------------------------------------------------------------------
# 3. Mixture distance to itself


@pytest.mark.parametrize("n_components", [2, 3, 4])
@pytest.mark.parametrize("uniform", [False, True])
def test_mixture_distance_to_itself_is_exactly_zero_and_symmetric(n_components, uniform):
    rng = np.random.default_rng(n_components)
    n = 9
    W = (np.full((n, n_components), 1.0 / n_components) if uniform
         else rng.dirichlet(np.ones(n_components), size=n))
    mix = Mixture(W, [Normal(rng.normal(size=n), rng.uniform(0.5, 2.0, size=n))
                      for _ in range(n_components)])
    D = pairwise_wasserstein(mix)
    assert np.all(np.diag(D) == 0.0)
    assert np.array_equal(D, D.T)
    assert np.all(D >= 0.0)
    np.testing.assert_array_equal(np.diag(WassersteinKernel(1e-9)(mix)), 1.0)
    copy = Mixture(np.array(W), [Normal(c.loc.copy(), c.scale.copy()) for c in mix.components])
    assert np.all(wasserstein_distance(mix, copy) == 0.0)


# --------------------------------------------------------------------------------------------
# 4. Huge-but-finite parameters


def test_ence_is_finite_and_scale_invariant_for_huge_standard_deviations():
    rng = np.random.default_rng(0)
    n = 40
    loc, s, y = rng.normal(size=n), rng.uniform(1.0, 3.0, size=n), rng.normal(size=n) * 2.0
    c = 1e300
    for family in (Normal, Laplace):
        huge = metrics.ence(y * c, family(loc * c, s * c))
        assert math.isfinite(huge)
        assert huge == pytest.approx(metrics.ence(y, family(loc, s)), rel=1e-12)
    with pytest.raises(ValueError, match="y_pred"):
        metrics.uce(y * c, Normal(loc * c, s * c))


@pytest.mark.parametrize("cov", ["diag", "full", "ones", "non-commuting", "1e308"])
def test_skce_and_ucme_are_finite_for_huge_covariances(cov):
    rng = np.random.default_rng(0)
    n = 16
    covs = {"diag": np.full((n, 2), 1e300),
            "full": np.tile([[1e300, 0.0], [0.0, 1e300]], (n, 1, 1)),
            "ones": np.full((n, 2, 2), 1e300),
            "non-commuting": np.stack([[[1e300, 3e299 * (i % 3)], [3e299 * (i % 3), 1e300]]
                                       for i in range(n)]),
            "1e308": np.full((n, 2), 1e308)}
    d = MultivariateNormal(rng.normal(size=(n, 2)), covs[cov])
    y = rng.normal(size=(n, 2))
    assert math.isfinite(metrics.skce(y, d, random_state=0))
    assert math.isfinite(metrics.ucme(y, d, random_state=0))


@pytest.mark.parametrize("family", [Normal, Laplace])
def test_huge_scales_in_every_family_method(family):
    n = 6
    rng = np.random.default_rng(1)
    s = np.full(n, 1e300)
    base = family(rng.normal(size=n), s)
    dists = [base, Mixture([0.5, 0.5], [base, family(np.ones(n), s)]),
             Recalibrated(base, [0.0, 0.5, 1.0], [0.0, 0.3, 1.0])]
    y = rng.normal(size=n)
    for d in dists:
        for value in (d.ppf(0.3), d.mean, d.sample(random_state=0), metrics.crps(y, d),
                      metrics.ence(y, d), metrics.skce(y, d, random_state=0)):
            assert np.all(np.isfinite(value))
        assert np.all(d.variance == np.inf)   # the true value, beyond the float range


def test_laplace_difference_in_relative_scales_matches_the_old_formula():
    from skcalib.distributions._laplace import _abs_laplace, _abs_laplace_difference

    c = np.array([0.3, -1.0, 4.0, 0.0])
    b1 = np.array([1.0, 2.0, 0.5, 3.0])
    b2 = np.array([2.0, 0.7, 0.5000001, 1.0])
    s1, s2 = b1 * b1, b2 * b2
    old = (s1 * _abs_laplace(c, b1) - s2 * _abs_laplace(c, b2)) / np.where(s1 == s2, 1, s1 - s2)
    far = np.abs(s1 - s2) > 1e-3 * (s1 + s2)
    np.testing.assert_allclose(_abs_laplace_difference(c, b1, b2)[far], old[far], rtol=1e-13)


# --------------------------------------------------------------------------------------------
# 5. Errors that name the problem


@pytest.mark.parametrize("value", [0, 2.5, "10", None, True])
@pytest.mark.parametrize("call", ["skce", "ucme", "expected_kernel", "expected_kernel_pair"])
def test_n_mc_samples_is_named(call, value):
    y, d = np.zeros(4), Laplace(np.zeros(4), np.ones(4))
    calls = {
        "skce": lambda: metrics.skce(y, d, n_mc_samples=value),
        "ucme": lambda: metrics.ucme(y, d, n_mc_samples=value),
        "expected_kernel": lambda: d.expected_kernel(GaussianKernel(1.0), y, n_mc_samples=value),
        "expected_kernel_pair": lambda: d.expected_kernel_pair(GaussianKernel(1.0),
                                                               n_mc_samples=value),
    }
    with pytest.raises((TypeError, ValueError), match="n_mc_samples"):
        calls[call]()


@pytest.mark.parametrize("kernel", [WassersteinKernel(), tensor(WassersteinKernel(), DeltaKernel())])
@pytest.mark.parametrize("func", [metrics.skce, metrics.ucme, stats.skce_test])
def test_wasserstein_kernel_on_class_probabilities_names_kernel_and_y_pred(func, kernel):
    P, y = np.array([[0.2, 0.8], [0.6, 0.4], [0.5, 0.5]]), np.array([1, 0, 1])
    with pytest.raises(TypeError, match=r"^kernel: a WassersteinKernel .*y_pred"):
        func(y, P, kernel=kernel)


def test_concatenate_of_multivariate_normals_of_different_dimensions():
    with pytest.raises(ValueError, match="dimension"):
        concatenate([MultivariateNormal(np.zeros((2, 2)), 1.0),
                     MultivariateNormal(np.zeros((2, 3)), 1.0)])
    with pytest.raises(ValueError, match="same map"):
        concatenate([Recalibrated(Normal([0.0], 1.0), [0, 1], [0, 1]),
                     Recalibrated(Normal([0.0], 1.0), [0, 0.5, 1], [0, 0.2, 1])])
    d = Recalibrated(Normal([0.0, 1.0], 1.0), [0, 0.5, 1], [0, 0.2, 1])
    both = concatenate([d[:1], d[1:]])
    np.testing.assert_array_equal(both.cdf([0.3, 0.4]), d.cdf([0.3, 0.4]))


def test_an_overflowing_median_heuristic_says_so_and_names_y_pred():
    d = Normal([1e308, -1e308, 1e308, -1e308], 1.0)
    with pytest.raises(ValueError, match=r"median heuristic.*overflows.*y_pred"):
        metrics.skce(np.zeros(4), d)


@pytest.mark.parametrize("func", [
    metrics.skce, metrics.ucme, stats.skce_test, stats.ucme_test, metrics.mmce,
    lambda y, p: stats.consistency_test("skce", y, p, n_resamples=20)])
def test_mean_std_array_with_real_targets_points_to_normal(func):
    rng = np.random.default_rng(0)
    y = rng.normal(size=30)
    A = np.column_stack([rng.normal(size=30), rng.uniform(1.0, 2.0, size=30)])
    with pytest.raises(ValueError, match=r"Normal\(mean, std\)"):
        func(y, A)


def test_no_normal_hint_for_class_labels():
    P = np.array([[0.2, 1.8], [0.6, 0.4]])
    with pytest.raises(ValueError) as info:
        metrics.skce(np.array([0, 1]), P)
    assert "Normal(" not in str(info.value)
