"""calibration_report's input: huge ``n_resamples`` refused up front, object labels, unfitted models."""

import numpy as np
import pytest

import skcalib


@pytest.mark.parametrize("value", [10**30, 10**12])
def test_report_refuses_huge_n_resamples_up_front(value):
    p = np.random.default_rng(0).random(50)
    with pytest.raises(ValueError, match=r"n_resamples must be an integer in \[20, "):
        skcalib.calibration_report(p, y=(p > 0.5).astype(int), n_resamples=value)


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
