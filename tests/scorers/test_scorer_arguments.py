"""The scorers check their arguments when built; mistyped scorer and metric names get a
"Did you mean ...?"."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from skcalib import get_scorer, make_calibration_scorer
from skcalib.metrics import calibration_error
from skcalib.scorers import CalibrationScorer, KLCEScorer


pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _binary(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (rng.random(n) < 1 / (1 + np.exp(-2.0 * X[:, 0]))).astype(int)
    return X, y


# ---------------------------------------------------------------------------------------------
# 1. Arguments checked when a scorer is built; "Did you mean" for mistyped names


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(metric=123), TypeError, r"metric must be a callable.*got 123"),
    (dict(metric="calibration_error"), TypeError, r"metric must be a callable.*"
                                                   r"make_calibration_scorer takes metric names"),
    (dict(metric=calibration_error, sign="x"), ValueError, r"sign must be 1 .* or -1.*got 'x'"),
    (dict(metric=calibration_error, sign=0), ValueError, r"sign must be 1 .* or -1.*got 0"),
    (dict(metric=calibration_error, sign=True), ValueError, r"sign must be.*got True"),
    (dict(metric=calibration_error, sign=2), ValueError, r"sign must be.*got 2"),
    (dict(metric=calibration_error, kwargs="abc"), TypeError,
     r"kwargs must be a dict of keyword arguments.*'abc'"),
    (dict(metric=calibration_error, kwargs=[("norm", "l2")]), TypeError, r"kwargs must be a dict"),
    (dict(metric=calibration_error, kwargs={1: 2}), TypeError, r"kwargs must have argument names"),
    (dict(metric=calibration_error, name=3), TypeError, r"name must be a string"),
])
def test_calibration_scorer_checks_its_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        CalibrationScorer(**kwargs)


def test_calibration_scorer_sign_is_never_a_silent_zero():
    # (sign=0 used to give -0.0 for every model)
    X, y = _binary()
    model = LogisticRegression().fit(X, y)
    value = CalibrationScorer(calibration_error, sign=1)(model, X, y)
    assert value == calibration_error(y, model.predict_proba(X)) > 0


@pytest.mark.parametrize("kwargs, exc", [(dict(sign=0), ValueError),
                                         (dict(sign="x"), ValueError),
                                         (dict(kwargs="abc"), TypeError)])
def test_klce_scorer_checks_its_arguments(kwargs, exc):
    with pytest.raises(exc, match="sign|kwargs"):
        KLCEScorer(**kwargs)


@pytest.mark.parametrize("typed, meant", [("neg_ec", "neg_ece"), ("neg_skce_zscor", "neg_skce_zscore"),
                                          ("skce_pvalu", "skce_pvalue"), ("neg_brier", None),
                                          ("acuracy", "accuracy")])
def test_mistyped_scorer_name_gets_a_suggestion(typed, meant):
    with pytest.raises(ValueError, match=rf"scoring='{typed}'") as info:
        get_scorer(typed)
    if meant is not None:
        assert f"Did you mean '{meant}'?" in str(info.value)


def test_mistyped_metric_name_gets_a_suggestion():
    with pytest.raises(ValueError, match=r"metric must be one of.*Did you mean 'calibration_error'"):
        make_calibration_scorer("calibraton_error")
