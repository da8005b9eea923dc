"""Recalibrators by name: the registries map names to classes, scikit-learn's names
(``"sigmoid"``), no recalibration (``"none"``), and mistyped names get a suggestion."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.datasets import load_diabetes, make_classification
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import BayesianRidge, LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.naive_bayes import GaussianNB

import skcalib
from skcalib import get_scorer
from skcalib.recalibration import (
    DistributionIdentityRecalibration,
    IdentityRecalibration,
    IsotonicCalibration,
    PlattScaling,
    RecalibratedClassifier,
    RecalibratedRegressor,
)
from skcalib.recalibration._registry import CLASSIFIER_RECALIBRATORS, REGRESSOR_RECALIBRATORS


pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _binary(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (rng.random(n) < 1 / (1 + np.exp(-2.0 * X[:, 0]))).astype(int)
    return X, y


@pytest.mark.parametrize("meta, typed, meant", [
    (RecalibratedClassifier, "dirchlet", "dirichlet"),
    (RecalibratedClassifier, "Venn-Abers", "venn_abers"),
    (RecalibratedClassifier, "sigmoidd", "sigmoid"),
    (RecalibratedRegressor, "quantil", "quantile"),
])
def test_mistyped_recalibrator_name_gets_a_suggestion(meta, typed, meant):
    X, y = _binary(60) if meta is RecalibratedClassifier else load_diabetes(return_X_y=True)
    with pytest.raises(ValueError, match=rf"recalibrator='{typed}'.*Did you mean '{meant}'\?"):
        meta(recalibrator=typed, cv=3).fit(X, y)


# ---------------------------------------------------------------------------------------------
# 5. scikit-learn's names, and "none"


def test_registries_map_names_to_classes():
    for registry in (CLASSIFIER_RECALIBRATORS, REGRESSOR_RECALIBRATORS):
        for name, cls in registry.items():
            assert isinstance(cls, type) and cls.__name__ in skcalib.recalibration.__all__, name
    assert CLASSIFIER_RECALIBRATORS["sigmoid"] is CLASSIFIER_RECALIBRATORS["platt"] is PlattScaling
    assert CLASSIFIER_RECALIBRATORS["isotonic"] is IsotonicCalibration
    assert CLASSIFIER_RECALIBRATORS["none"] is IdentityRecalibration
    assert REGRESSOR_RECALIBRATORS["none"] is DistributionIdentityRecalibration
    # the methods (what the demo compares): each class once, without "none"
    from skcalib.recalibration._registry import method_names

    assert method_names(CLASSIFIER_RECALIBRATORS) == [
        "temperature", "platt", "beta", "vector", "matrix", "dirichlet", "isotonic",
        "histogram", "scaling_binning", "venn_abers"]
    assert method_names(REGRESSOR_RECALIBRATORS) == ["temperature", "quantile"]


def test_sigmoid_is_platt_scaling():
    X, y = make_classification(n_samples=400, random_state=0)
    a = RecalibratedClassifier(recalibrator="sigmoid", cv=3).fit(X, y)
    b = RecalibratedClassifier(recalibrator="platt", cv=3).fit(X, y)
    assert all(type(r) is PlattScaling for r in a.recalibrators_)
    assert_array_equal(a.predict_proba(X), b.predict_proba(X))


class _ProbaOnly(ClassifierMixin, BaseEstimator):
    """A classifier with predict_proba but no decision_function."""

    def fit(self, X, y):
        self.model_ = GaussianNB().fit(X, y)
        self.classes_ = self.model_.classes_
        return self

    def predict_proba(self, X):
        return self.model_.predict_proba(X)

    def predict(self, X):
        return self.model_.predict(X)


@pytest.mark.parametrize("base", [LogisticRegression(max_iter=1000), GaussianNB(), _ProbaOnly()],
                         ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_none_gives_exactly_the_models_probabilities(base, n_classes):
    X, y = make_classification(n_samples=300, n_classes=n_classes, n_informative=4,
                               random_state=0)
    y = np.array(["x", "y", "z"])[y]
    meta = RecalibratedClassifier(clone(base), recalibrator="none").fit(X, y)
    ref = clone(base).fit(X, y)
    assert_array_equal(meta.predict_proba(X), ref.predict_proba(X))
    assert_array_equal(meta.predict(X), ref.predict(X))
    assert len(meta.estimators_) == 1 and meta.method_ == "predict_proba"
    # a frozen model is not refitted, with or without cv and ensemble
    frozen = RecalibratedClassifier(FrozenEstimator(ref), recalibrator="none", cv=3,
                                    ensemble=True).fit(X[:50], y[:50])
    assert_array_equal(frozen.predict_proba(X), ref.predict_proba(X))


def test_none_on_logits_is_their_softmax():
    X, y = make_classification(n_samples=300, random_state=0)
    meta = RecalibratedClassifier(LogisticRegression(), recalibrator="none",
                                  method="decision_function").fit(X, y)
    ref = LogisticRegression().fit(X, y)
    assert_allclose(meta.predict_proba(X), ref.predict_proba(X), rtol=1e-12, atol=1e-15)


def test_identity_recalibration_returns_a_copy():
    P = np.array([[0.2, 0.8], [0.6, 0.4]])
    out = IdentityRecalibration().fit(P, [0, 1]).predict_proba(P)
    out[0, 0] = 5.0
    assert P[0, 0] == 0.2


def test_none_gives_exactly_the_regressors_distributions():
    X, y = load_diabetes(return_X_y=True)
    meta = RecalibratedRegressor(BayesianRidge(), recalibrator="none").fit(X, y)
    ref = BayesianRidge().fit(X, y)
    mean, std = meta.predict(X, return_std=True)
    rmean, rstd = ref.predict(X, return_std=True)
    assert_array_equal(mean, rmean)
    assert_array_equal(std, rstd)
    dist = meta.predict_distribution(X)
    assert_array_equal(dist.loc, rmean) and assert_array_equal(dist.scale, rstd)


def test_grid_over_recalibrators_can_include_none():
    X, y = load_diabetes(return_X_y=True)
    grid = GridSearchCV(RecalibratedRegressor(BayesianRidge(), cv=3),
                        {"recalibrator": ["none", "temperature", "quantile"]},
                        scoring=get_scorer("neg_crps"), cv=3, error_score="raise").fit(X, y)
    # the "none" candidate's score is the base model's
    for k, (train, test) in enumerate(KFold(3).split(X)):
        ref = BayesianRidge().fit(X[train], y[train])
        assert_allclose(grid.cv_results_[f"split{k}_test_score"][0],
                        get_scorer("neg_crps")(ref, X[test], y[test]), rtol=1e-12)
    Xc, yc = make_classification(n_samples=400, random_state=0)
    grid = GridSearchCV(RecalibratedClassifier(GaussianNB(), cv=3),
                        {"recalibrator": ["none", "sigmoid", "isotonic"]},
                        scoring="neg_log_loss", cv=3, error_score="raise").fit(Xc, yc)
    assert np.all(np.isfinite(grid.cv_results_["mean_test_score"]))


def test_identity_distribution_recalibrator_checks_the_family():
    from skcalib.distributions import Laplace, Normal

    d = Normal(np.zeros(3), np.ones(3))
    est = DistributionIdentityRecalibration().fit(d, np.zeros(3))
    assert est.transform(d) is d
    assert_array_equal(est.fit([[0.0, 1.0], [1.0, 2.0]], [0.0, 1.0]).transform(
        [[0.0, 1.0]]), [[0.0, 1.0]])
    with pytest.raises(ValueError, match="Laplace predictions but the recalibrator was fitted on Normal"):
        est.transform(Laplace(np.zeros(3), np.ones(3)))
    with pytest.raises(ValueError, match="y"):
        DistributionIdentityRecalibration().fit(d, None)
    with pytest.raises(ValueError, match="sample_weight must have a positive sum"):
        DistributionIdentityRecalibration().fit(d, np.zeros(3), sample_weight=np.zeros(3))
