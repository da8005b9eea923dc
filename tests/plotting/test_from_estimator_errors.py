"""The Displays' ``from_estimator`` names the caller's arguments (``y``, ``X``, audit features)."""

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from sklearn.linear_model import BayesianRidge, LogisticRegression  # noqa: E402

from skcalib.plotting import (  # noqa: E402
    IntervalCoverageDisplay,
    LocalCalibrationBiasDisplay,
    PITHistogramDisplay,
    QuantileCalibrationDisplay,
    ReliabilityDisplay,
    SmoothReliabilityDisplay,
)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# --------------------------------------------------------------------------------------------
# A10: from_estimator names the caller's arguments


@pytest.fixture(scope="module")
def models():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] + rng.normal(size=60) > 0).astype(int)
    return X, y, LogisticRegression().fit(X, y), BayesianRidge().fit(X, X[:, 0])


def test_local_bias_from_estimator_names_audit_features(models):
    X, y, clf, _ = models
    L = LocalCalibrationBiasDisplay
    with pytest.raises(ValueError, match=r"^audit_features has 10 rows but X has 60"):
        L.from_estimator(clf, X, y, audit_features=X[:10, :2])
    with pytest.raises(ValueError, match=r"^audit_features must contain numbers"):
        L.from_estimator(clf, X, y, audit_features=np.array(["a", "b"] * 30))
    with pytest.raises(ValueError, match=r"^y has 10 entries but X has 60 rows"):
        L.from_estimator(clf, X, y[:10], audit_features=X[:, :2])
    with pytest.raises(ValueError, match="feature=7 is out of range for audit_features"):
        L.from_estimator(clf, X, y, audit_features=X[:, :2], feature=7)


@pytest.mark.parametrize("cls", [ReliabilityDisplay, SmoothReliabilityDisplay])
def test_classification_from_estimator_names_y_and_X(models, cls):
    X, y, clf, _ = models
    with pytest.raises(ValueError, match=r"^y has 10 entries but X has 60 rows"):
        cls.from_estimator(clf, X, y[:10])
    with pytest.raises(ValueError, match=r"^y\b"):
        cls.from_estimator(clf, X, np.r_[None, y[1:]].astype(object))


@pytest.mark.parametrize("cls", [PITHistogramDisplay, QuantileCalibrationDisplay,
                                 IntervalCoverageDisplay])
def test_regression_from_estimator_names_y_and_X(models, cls):
    X, _, _, reg = models
    target = X[:, 0]
    with pytest.raises(ValueError, match=r"^y has 10 entries but X has 60 rows"):
        cls.from_estimator(reg, X, target[:10])
    with pytest.raises(ValueError, match=r"^y must be finite"):
        cls.from_estimator(reg, X, np.r_[np.nan, target[1:]])
