"""Issue 21, the lead's part: findings of the bad-input sweep that the issue did not list (a
ragged label list, frequency weights of absurd totals, the smooth curve of degenerate data)."""

import warnings

import numpy as np
import pytest

import skcalib
from skcalib import stats
from skcalib.metrics import _smooth
from skcalib.metrics import smooth_reliability_curve


@pytest.mark.parametrize("func", [skcalib.calibration_error, skcalib.skce, skcalib.mmce,
                                  skcalib.brier_score])
def test_ragged_labels_name_the_argument(func):
    with pytest.raises(ValueError, match=r"y_true must be one-dimensional.*ragged sequence"):
        func([[1, 2], [3]], np.array([0.2, 0.4]))


def test_ragged_sample_weight_names_the_argument():
    with pytest.raises(ValueError, match=r"sample_weight must be one-dimensional.*ragged"):
        skcalib.calibration_error([0, 1], np.array([0.2, 0.4]), sample_weight=[[1, 2], [3]])


_FREQUENCY_TESTS = [stats.spiegelhalter_test, stats.hosmer_lemeshow_test,
                    stats.logistic_calibration, stats.ecce_test]


@pytest.mark.parametrize("test", _FREQUENCY_TESTS)
@pytest.mark.parametrize("weight", [1e-300, 1e300])
def test_frequency_weights_of_absurd_total_are_refused(test, weight):
    rng = np.random.default_rng(0)
    p = rng.random(30)
    y = (rng.random(30) < p).astype(int)
    with pytest.raises(ValueError, match=r"sample_weight are frequency weights.*sum to"):
        test(y, p, sample_weight=np.full(30, weight))


@pytest.mark.parametrize("test", _FREQUENCY_TESTS)
def test_frequency_weights_that_rescale_the_sample_keep_working(test):
    rng = np.random.default_rng(0)
    p = rng.random(300)
    y = (rng.random(300) < p).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # few expected events per HL group
        res = test(y, p, sample_weight=np.full(300, 0.5))
    assert np.isfinite(res.pvalue) and 0.0 <= res.pvalue <= 1.0


@pytest.mark.parametrize("n,sigma", [(30, 1e-4), (30, 0.01), (200, 0.003), (5, 0.3)])
def test_direct_smoothing_equals_the_fft(n, sigma):
    """The direct sum over occupied cells is the same circular convolution as the FFT path."""
    rng = np.random.default_rng(n)
    p = rng.random(n)
    y = (rng.random(n) < p).astype(float)
    w = rng.random(n) + 0.5
    m = _smooth._grid_size(sigma)
    binned = _smooth._Binned(p, y - p, w, m)
    at = np.arange(0, m + 1, max(1, m // 4096))
    for which in (0, 1):
        full = binned.smooth(sigma, which)[at]
        direct = binned.smooth_at(sigma, which, at)
        assert np.max(np.abs(full - direct)) <= 1e-13 * np.max(np.abs(full))


def test_curve_paths_agree_on_ordinary_data():
    rng = np.random.default_rng(3)
    p = rng.random(500)
    y = (rng.random(500) < p).astype(int)
    dense = smooth_reliability_curve(y, p, bandwidth=0.05, n_points=101)
    binned = _smooth._Binned(p, y - p, np.ones(500), _smooth._grid_size(0.05))
    assert not binned.direct_is_cheaper(202)  # this call used the FFT
    # the same curve through the direct sums, forced
    orig = _smooth._Binned.direct_is_cheaper
    try:
        _smooth._Binned.direct_is_cheaper = lambda self, n_at: True
        direct = smooth_reliability_curve(y, p, bandwidth=0.05, n_points=101)
    finally:
        _smooth._Binned.direct_is_cheaper = orig
    np.testing.assert_allclose(direct.frequency, dense.frequency, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(direct.density, dense.density, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("make", [
    lambda: (np.arange(30) % 3, np.full((30, 3), 1 / 3)),              # constant
    lambda: (np.arange(30) % 2, (np.arange(30) % 2).astype(float)),    # exact 0/1
    lambda: (np.arange(30) % 3, np.eye(3)[np.arange(30) % 3]),         # one-hot
])
def test_degenerate_predictions_give_a_small_curve_without_a_dense_grid(make, monkeypatch):
    y, P = make()
    curve = smooth_reliability_curve(y, P)
    assert curve.bandwidth == pytest.approx(_smooth._MIN_BANDWIDTH)
    assert curve.grid.size == _smooth._MAX_DEFAULT_POINTS + 1  # was 524,289 points, 99.9% NaN
    # A bootstrap band's per-resample call at the curve's bandwidth sums over the few occupied
    # cells and never builds (or FFTs) the 2**19-point grid: it took 0.3 s a resample before.
    def no_fft(self, which):
        raise AssertionError("dense FFT path used")
    monkeypatch.setattr(_smooth._Binned, "_spectrum", no_fft)
    again = smooth_reliability_curve(y, P, bandwidth=curve.bandwidth, n_points=curve.grid.size)
    np.testing.assert_allclose(again.frequency, curve.frequency, rtol=1e-9, atol=1e-12)


def test_n_points_has_a_ceiling():
    y = np.arange(30) % 2
    with pytest.raises(ValueError, match="n_points must be <="):
        smooth_reliability_curve(y, np.full(30, 0.5), n_points=10**12)


def _float32_model():
    from sklearn.linear_model import LogisticRegression
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3)).astype(np.float32)
    y = np.arange(200) % 3
    return LogisticRegression().fit(X, y), X, y


def test_float32_rows_are_renormalised_once():
    from skcalib._validation import check_labels_and_probabilities
    model, X, y = _float32_model()
    P = model.predict_proba(X)
    assert P.dtype == np.float32
    data = check_labels_and_probabilities(y, P)
    assert np.max(np.abs(data.probs.sum(axis=1) - 1.0)) < 1e-15
    # the float64 copy passes the float64 check again: what a scorer or the report does
    check_labels_and_probabilities(y, np.asarray(data.probs))
    rng = np.random.default_rng(1)
    exact = rng.dirichlet(np.ones(3), 200)  # float64 input is never renormalised
    np.testing.assert_array_equal(check_labels_and_probabilities(y, exact).probs, exact)


@pytest.mark.parametrize("name", ["neg_ece", "neg_skce", "neg_mmce", "neg_brier_score",
                                  "neg_smooth_ece",
                                  "skce_pvalue"])
def test_scorers_accept_a_float32_classifier(name):
    model, X, y = _float32_model()
    score = skcalib.get_scorer(name)(model, X, y)
    assert np.isfinite(score)


def test_report_and_consistency_test_accept_a_float32_classifier():
    model, X, y = _float32_model()
    report = skcalib.calibration_report(model, X, y=y)
    assert len(report.to_frame()) > 0
    res = stats.consistency_test(skcalib.calibration_error, y, model.predict_proba(X),
                                 n_resamples=99, random_state=0)
    assert 0.0 < res.pvalue <= 1.0


@pytest.mark.parametrize("value", [10**30, 10**12])
def test_report_refuses_huge_n_resamples_up_front(value):
    p = np.random.default_rng(0).random(50)
    with pytest.raises(ValueError, match=r"n_resamples must be an integer in \[20, "):
        skcalib.calibration_report(p, y=(p > 0.5).astype(int), n_resamples=value)


def test_size_arguments_of_the_sweep_have_ceilings():
    from skcalib.estimation import BinnedCalibrationEstimator
    rng = np.random.default_rng(0)
    p = rng.random(100)
    y = (rng.random(100) < p).astype(int)
    with pytest.raises(ValueError, match="robust_iters must be <= 100"):
        skcalib.integrated_calibration_index(y, p, robust_iters=10**9)  # hung
    with pytest.raises(ValueError, match=r"n_bins must be .*1000000"):
        BinnedCalibrationEstimator(n_bins=10**12).fit(np.c_[1 - p, p], y)  # 7 TiB


def test_reliability_interval_of_huge_frequency_weights_is_the_limit_not_nan():
    y = np.array([0, 0, 1, 1, 1])
    curve = skcalib.reliability_curve(y, np.full(5, 0.55), sample_weight=np.full(5, 1e300))
    np.testing.assert_array_equal(curve.ci_low, curve.prob_true)  # was NaN
    np.testing.assert_array_equal(curve.ci_high, curve.prob_true)
    below = skcalib.reliability_curve(y, np.full(5, 0.55), sample_weight=np.full(5, 1e14))
    assert np.all(below.ci_low < below.prob_true) and np.all(below.prob_true < below.ci_high)
    assert np.all(below.ci_high - below.ci_low < 1e-5)


def test_report_accepts_object_labels():
    P = np.random.default_rng(0).dirichlet(np.ones(3), 60)
    y = np.arange(60) % 3
    a = skcalib.calibration_report(P, y=y.astype(object), n_resamples=50).to_frame()
    b = skcalib.calibration_report(P, y=y, n_resamples=50).to_frame()
    assert a.equals(b)  # scikit-learn's accuracy_score refused the object labels


def test_unfitted_models_raise_not_fitted_error():
    from sklearn.exceptions import NotFittedError
    from sklearn.linear_model import LogisticRegression
    from skcalib.plotting import ReliabilityDisplay
    X = np.random.default_rng(0).normal(size=(40, 2))
    y = np.arange(40) % 2
    with pytest.raises(NotFittedError, match="LogisticRegression is not fitted"):
        skcalib.calibration_report(LogisticRegression(), X, y)
    with pytest.raises(NotFittedError, match="LogisticRegression is not fitted"):
        ReliabilityDisplay.from_estimator(LogisticRegression(), X, y)


def test_the_distribution_recalibrators_share_predict_and_score():
    from skcalib.distributions import Normal
    from skcalib.recalibration import (DistributionIdentityRecalibration,
                                       DistributionTemperatureScaling, QuantileRecalibration)
    from skcalib.recalibration._distribution import DistributionRecalibratorMixin
    rng = np.random.default_rng(0)
    mu = rng.normal(size=200)
    y = mu + 2.0 * rng.normal(size=200)
    dist = Normal(mu, np.ones(200))
    for cls in (DistributionIdentityRecalibration, DistributionTemperatureScaling,
                QuantileRecalibration):
        assert cls.predict is DistributionRecalibratorMixin.predict
        assert cls.score is DistributionRecalibratorMixin.score
        est = cls().fit(dist, y)
        out = est.predict_distribution(dist)
        assert est.score(dist, y) == pytest.approx(float(np.mean(out.log_pdf(y))), rel=1e-12)
        mean, std = est.predict(dist, return_std=True)
        np.testing.assert_allclose(mean, out.mean)
        np.testing.assert_allclose(std, np.sqrt(out.variance))
    # the identity's score is the unchanged predictions' mean log density (it had no score)
    ident = DistributionIdentityRecalibration().fit(dist, y)
    assert ident.score(dist, y) == pytest.approx(float(np.mean(dist.log_pdf(y))), rel=1e-12)
