"""Every regression entry point (metrics, tests, report, scorers) works on Recalibrated predictions
and refuses empty distribution objects naming ``y_pred``."""

import numpy as np
import pytest

import skcalib
from skcalib import metrics, stats
from skcalib.distributions import Laplace, Mixture, MultivariateNormal, Normal, Recalibrated


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
