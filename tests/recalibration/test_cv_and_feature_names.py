"""The recalibration meta-estimators pass scikit-learn's checks with their default ``cv``, refuse
``cv="prefit"`` with the ``FrozenEstimator`` advice, and every estimator fitted on a DataFrame
sets ``feature_names_in_``."""

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal
from sklearn.base import clone
from sklearn.datasets import load_diabetes, make_classification
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import BayesianRidge, LogisticRegression
from sklearn.utils.estimator_checks import check_fit2d_1feature, parametrize_with_checks

from skcalib._estimator_checks import expected_failed_checks
from skcalib.metrics import MMCE, SKCE, UCME, CalibrationError
from skcalib.recalibration import (BetaCalibration, DirichletCalibration,
                                   DistributionIdentityRecalibration,
                                   DistributionTemperatureScaling, HistogramBinning,
                                   IdentityRecalibration, IsotonicCalibration, MatrixScaling,
                                   PlattScaling, PredictionTransformer, QuantileRecalibration,
                                   RecalibratedClassifier, RecalibratedRegressor, ScalingBinning,
                                   TemperatureScaling, VectorScaling, VennAbers)


pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _binary(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (rng.random(n) < 1 / (1 + np.exp(-2.0 * X[:, 0]))).astype(int)
    return X, y


# ---------------------------------------------------------------------------------------------
# 3. Default cv, cv="prefit", feature names


def test_default_cv_passes_check_fit2d_1feature():
    # 10 samples in 3 classes: the default 5 folds become as many as the smallest class has
    check_fit2d_1feature("RecalibratedClassifier", RecalibratedClassifier())


def test_default_cv_uses_fewer_folds_for_a_small_class_but_an_explicit_cv_does_not():
    X, y = make_classification(n_samples=40, n_classes=2, weights=[0.9, 0.1], flip_y=0,
                               random_state=0)
    assert np.bincount(y).min() == 4
    clf = RecalibratedClassifier().fit(X, y)
    assert len(clf.recalibrators_) == 4
    with pytest.raises(ValueError, match="cv has 5 folds but a class of y has only 4"):
        RecalibratedClassifier(cv=5).fit(X, y)
    assert len(RecalibratedClassifier().fit(*make_classification(random_state=0))
               .recalibrators_) == 5


@pytest.mark.parametrize("meta, est", [(RecalibratedClassifier, LogisticRegression()),
                                       (RecalibratedRegressor, BayesianRidge())])
def test_cv_prefit_is_refused_with_the_frozen_estimator_advice(meta, est):
    X, y = _binary() if meta is RecalibratedClassifier else load_diabetes(return_X_y=True)
    est.fit(X, y)
    with pytest.raises(ValueError, match=r"cv='prefit'.*FrozenEstimator"):
        meta(est, cv="prefit").fit(X, y)
    frozen = meta(FrozenEstimator(est)).fit(X, y)  # the advice works
    assert frozen.estimators_[0].estimator is est


def _score_frame(n=300, C=3, seed=0):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(C), size=n)
    y = (rng.random((n, 1)) > P.cumsum(axis=1)).sum(axis=1).clip(max=C - 1)
    return pd.DataFrame(P, columns=[f"p{k}" for k in range(C)]), y


def _normal_frame(n=300, seed=0):
    rng = np.random.default_rng(seed)
    mean = rng.normal(size=n)
    return pd.DataFrame({"mean": mean, "std": np.full(n, 1.5)}), mean + rng.normal(size=n)


SCORE_ESTIMATORS = [TemperatureScaling(), PlattScaling(), BetaCalibration(), VectorScaling(),
                    MatrixScaling(), DirichletCalibration(), IsotonicCalibration(),
                    HistogramBinning(), ScalingBinning(random_state=0), VennAbers(),
                    IdentityRecalibration(), CalibrationError(), SKCE(), MMCE(),
                    UCME(random_state=0)]
DISTRIBUTION_ESTIMATORS = [DistributionTemperatureScaling(), QuantileRecalibration(),
                           DistributionIdentityRecalibration()]


def _predict(est, X, y):
    if hasattr(est, "error"):  # the calibration errors
        return est.error(X, y)
    for method in ("predict_proba", "predict_distribution"):
        if hasattr(est, method):
            return getattr(est, method)(X)


@pytest.mark.parametrize("est", SCORE_ESTIMATORS + DISTRIBUTION_ESTIMATORS,
                         ids=lambda e: type(e).__name__)
def test_fitted_on_a_dataframe_sets_feature_names_in(est):
    est = clone(est)
    X, y = _normal_frame() if est in DISTRIBUTION_ESTIMATORS or isinstance(
        est, tuple(type(e) for e in DISTRIBUTION_ESTIMATORS)) else _score_frame()
    est.fit(X, y)
    assert_array_equal(est.feature_names_in_, np.asarray(X.columns, dtype=object))
    assert est.n_features_in_ == X.shape[1]
    _predict(est, X, y)  # the same columns: fine
    renamed = X.rename(columns={X.columns[0]: "other"})
    with pytest.raises(ValueError, match="feature names"):
        _predict(est, renamed, y)
    # refitted on an array: no names any more
    est.fit(X.to_numpy(), y)
    assert not hasattr(est, "feature_names_in_")


@pytest.mark.parametrize("meta", [RecalibratedClassifier(cv=3),
                                  RecalibratedClassifier(recalibrator="none"),
                                  RecalibratedRegressor(cv=3), PredictionTransformer(
                                      LogisticRegression())], ids=lambda e: type(e).__name__)
def test_meta_estimators_fitted_on_a_dataframe_set_feature_names_in(meta):
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(200, 3)), columns=["age", "dose", "weight"])
    y = (X["age"] > 0).astype(int) if not isinstance(meta, RecalibratedRegressor) else X["age"]
    meta = clone(meta).fit(X, y)
    assert list(meta.feature_names_in_) == ["age", "dose", "weight"]
    assert meta.n_features_in_ == 3


@parametrize_with_checks([IdentityRecalibration(), DistributionIdentityRecalibration(),
                          RecalibratedClassifier(recalibrator="none"),
                          RecalibratedRegressor(recalibrator="none")],
                         expected_failed_checks=expected_failed_checks)
def test_identity_sklearn_compatible(estimator, check):
    check(estimator)
