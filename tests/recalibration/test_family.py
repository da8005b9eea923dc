"""The recalibrator family is interchangeable (issue 15, item 3).

Every method registered by name in :mod:`skcalib.recalibration._registry` drops into
``RecalibratedClassifier`` / ``RecalibratedRegressor`` as an instance or by name, after a
``PredictionTransformer`` in a ``Pipeline``, passes scikit-learn's estimator checks, and a
``GridSearchCV`` over ``recalibrator`` picks the method that can fix a constructed
miscalibration.

The parametrisations are over the methods whose classes exist (the registry resolves them
lazily); ``test_registry_names`` pins the names themselves.
"""

import numpy as np
import pytest
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.datasets import load_diabetes, make_classification
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import BayesianRidge, LinearRegression, LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

import skcalib
from skcalib.distributions import Empirical, Quantiles
from skcalib._estimator_checks import expected_failed_checks
from skcalib.recalibration import (DistributionTemperatureScaling, PredictionTransformer,
                                   RecalibratedClassifier, RecalibratedRegressor,
                                   TemperatureScaling)
from skcalib.recalibration import _registry
from skcalib.recalibration._registry import (CLASSIFIER_RECALIBRATORS, REGRESSOR_RECALIBRATORS,
                                             recalibrator_class)


def _available(registry, kind):
    out = {}
    for name in registry:
        try:
            out[name] = recalibrator_class(name, registry, kind)
        except ValueError:
            pass
    return out


#: The methods (without scikit-learn's alias "sigmoid" of "platt", and without "none", no
#: recalibration, which fits the model once instead of cross-fitting: both are tested in
#: tests/recalibration/test_identity_and_names.py).
CLASSIFIERS = {k: v for k, v in _available(CLASSIFIER_RECALIBRATORS, "classifier").items()
               if k in _registry.method_names(CLASSIFIER_RECALIBRATORS)}
#: (with the methods for one form of predictions: spread scaling of ensembles, CQR of quantiles)
REGRESSORS = {k: v for k, v in _available(REGRESSOR_RECALIBRATORS, "regressor").items()
              if any(k in _registry.method_names(REGRESSOR_RECALIBRATORS, family)
                     for family in (None, "Empirical", "Quantiles"))}


def _needs(*names):
    """Until a method's class lands, its name is a ValueError ('not available'): expected."""
    missing = [n for n in names if n not in CLASSIFIERS]
    return pytest.mark.xfail(bool(missing), reason=f"{missing} not available yet",
                             raises=ValueError, strict=True)

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def test_registry_names():
    assert set(CLASSIFIER_RECALIBRATORS) == {
        "temperature", "platt", "sigmoid", "beta", "vector", "matrix", "dirichlet", "isotonic",
        "histogram", "scaling_binning", "venn_abers", "none"}
    assert set(REGRESSOR_RECALIBRATORS) == {"temperature", "quantile", "cqr", "spread", "none"}
    assert CLASSIFIERS["temperature"] is TemperatureScaling
    assert REGRESSORS["temperature"] is DistributionTemperatureScaling


def test_unknown_name_lists_the_names():
    X, y = make_classification(n_samples=60, random_state=0)
    with pytest.raises(ValueError, match=r"recalibrator='sigmod'.*'dirichlet'.*'venn_abers'.*"
                                         r"Did you mean 'sigmoid'\?"):
        RecalibratedClassifier(recalibrator="sigmod", cv=3).fit(X, y)
    Xr, yr = load_diabetes(return_X_y=True)
    with pytest.raises(ValueError, match=r"recalibrator='platt' is not a regressor.*'quantile'"):
        RecalibratedRegressor(recalibrator="platt", cv=3).fit(Xr, yr)


def test_non_string_non_estimator_is_a_type_error():
    X, y = make_classification(n_samples=60, random_state=0)
    with pytest.raises(TypeError, match="recalibrator"):
        RecalibratedClassifier(recalibrator=3, cv=3).fit(X, y)


def _data(n_classes, n=450, seed=0):
    return make_classification(n_samples=n, n_features=6, n_informative=4,
                               n_classes=n_classes, n_clusters_per_class=1, random_state=seed)


def _cases():
    for name in CLASSIFIERS:
        for n_classes in (2, 3):
            yield pytest.param(name, n_classes, id=f"{name}-{n_classes}")


@pytest.mark.parametrize("name, n_classes", list(_cases()))
@pytest.mark.parametrize("method", ["decision_function", "predict_proba"])
def test_by_name_equals_instance_cv(name, n_classes, method):
    X, y = _data(n_classes)
    y = np.array(["a", "b", "c"])[y]  # non-integer labels pass through
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    by_name = RecalibratedClassifier(LogisticRegression(), recalibrator=name, cv=cv,
                                     method=method).fit(X, y)
    by_inst = RecalibratedClassifier(LogisticRegression(), recalibrator=CLASSIFIERS[name](),
                                     cv=cv, method=method).fit(X, y)
    assert by_name.recalibrator == name  # the parameter is not replaced by fit
    assert len(by_name.recalibrators_) == 3
    for r in by_name.recalibrators_:
        assert type(r) is CLASSIFIERS[name]
        # told the kind of scores and the classes
        assert r.input == ("logits" if method == "decision_function" else "proba")
        np.testing.assert_array_equal(r.classes_, by_name.classes_)
    P = by_name.predict_proba(X)
    seeded = "random_state" in by_inst.recalibrator.get_params()
    if not seeded:  # (a random_state=None method draws a fresh split on every fit)
        np.testing.assert_array_equal(P, by_inst.predict_proba(X))
    assert P.shape == (len(y), n_classes)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-9)
    assert np.all(P >= 0)
    assert set(by_name.predict(X)) <= set(by_name.classes_)
    # a clone keeps the name and refits to the same result
    again = clone(by_name).fit(X, y)
    assert again.recalibrator == name
    if not seeded:
        np.testing.assert_array_equal(again.predict_proba(X), P)


@pytest.mark.parametrize("name, n_classes", list(_cases()))
def test_by_name_frozen_and_pipeline(name, n_classes):
    """FrozenEstimator in the meta-estimator = the method fitted on the model's scores = the
    pipeline after a PredictionTransformer; weights reach the recalibrator."""
    X, y = _data(n_classes, n=600, seed=1)
    clf = LogisticRegression().fit(X[:300], y[:300])
    Xc, yc = X[300:], y[300:]
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=len(yc))
    inst = CLASSIFIERS[name]()
    if "random_state" in inst.get_params():  # the name's default is unseeded: use an instance
        inst.set_params(random_state=0)
    meta = RecalibratedClassifier(FrozenEstimator(clf), recalibrator=(
        clone(inst) if "random_state" in inst.get_params() else name)).fit(
        Xc, yc, sample_weight=w)
    direct = clone(inst).set_params(input="logits").fit(clf.decision_function(Xc), yc,
                                                        sample_weight=w)
    pipe = make_pipeline(PredictionTransformer(FrozenEstimator(clf)), clone(inst))
    pipe.fit(Xc, yc, **{pipe.steps[-1][0] + "__sample_weight": w})
    P = meta.predict_proba(X[:300])
    np.testing.assert_allclose(P, direct.predict_proba(clf.decision_function(X[:300])),
                               rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(pipe.predict_proba(X[:300]), P, rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(pipe.predict(X[:300]), meta.predict(X[:300]))


def _regressor_cases():
    for name in REGRESSORS:
        for ensemble in (False, True):
            yield pytest.param(name, ensemble, id=f"{name}-ensemble={ensemble}")


class _QuantileModel(RegressorMixin, BaseEstimator):
    """A linear regression whose predictive quantiles are its training residuals' quantiles
    times ``width`` (too narrow for ``width < 1``): ``predict_distribution`` gives
    :class:`~skcalib.distributions.Quantiles`."""

    def __init__(self, width=0.4, levels=(0.05, 0.25, 0.5, 0.75, 0.95)):
        self.width = width
        self.levels = levels

    def fit(self, X, y, sample_weight=None):
        self.lr_ = LinearRegression().fit(X, y)
        self.offsets_ = self.width * np.quantile(y - self.lr_.predict(X), self.levels)
        self.n_features_in_ = self.lr_.n_features_in_
        return self

    def predict(self, X):
        return self.lr_.predict(X)

    def predict_distribution(self, X):
        return Quantiles(self.predict(X)[:, None] + self.offsets_, self.levels)


class _EnsembleModel(RegressorMixin, BaseEstimator):
    """Bagged linear regressions, whose members disagree far less than the targets scatter
    (under-dispersed): ``predict_distribution`` gives the members as an
    :class:`~skcalib.distributions.Empirical`."""

    def __init__(self, n_members=10, random_state=0):
        self.n_members = n_members
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None):
        rng = np.random.default_rng(self.random_state)
        n = len(y)
        self.members_ = [LinearRegression().fit(X[i], y[i])
                         for i in (rng.integers(0, n, n) for _ in range(self.n_members))]
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        return self.predict_distribution(X).mean

    def predict_distribution(self, X):
        return Empirical(np.column_stack([m.predict(X) for m in self.members_]))


#: The model each method is tried on: its form of predictions.
_MODEL_FOR = {"cqr": _QuantileModel, "spread": _EnsembleModel}


@pytest.mark.parametrize("name, ensemble", list(_regressor_cases()))
def test_regressor_by_name_equals_instance(name, ensemble):
    X, y = load_diabetes(return_X_y=True)
    model = _MODEL_FOR.get(name, BayesianRidge)
    a = RecalibratedRegressor(model(), recalibrator=name, cv=3,
                              ensemble=ensemble).fit(X, y)
    b = RecalibratedRegressor(model(), recalibrator=REGRESSORS[name](), cv=3,
                              ensemble=ensemble).fit(X, y)
    assert a.recalibrator == name
    assert all(type(r) is REGRESSORS[name] for r in a.recalibrators_)
    ma, sa = a.predict(X[:20], return_std=True)
    mb, sb = b.predict(X[:20], return_std=True)
    np.testing.assert_array_equal(ma, mb)
    np.testing.assert_array_equal(sa, sb)


# TemperatureScaling and DistributionTemperatureScaling are checked in
# tests/recalibration/test_estimators.py.
@parametrize_with_checks([cls() for cls in CLASSIFIERS.values() if cls is not TemperatureScaling]
                         + [cls() for cls in REGRESSORS.values()
                            if cls is not DistributionTemperatureScaling]
                         + [RecalibratedClassifier(recalibrator="isotonic", cv=3),
                            RecalibratedRegressor(recalibrator="quantile", cv=3, ensemble=False)],
                         expected_failed_checks=expected_failed_checks)
def test_family_sklearn_compatible(estimator, check):
    check(estimator)


# ---------------------------------------------------------------------------------------------
# GridSearchCV over the methods picks the one that can fix a miscalibration of known form

def _biased_problem(seed=0, n=3000):
    """A frozen 3-class model whose logits miss a per-class bias: the true probabilities are
    ``softmax(logits + b)``. A temperature cannot fix a bias; vector scaling can exactly."""
    rng = np.random.default_rng(seed)
    X, y = make_classification(n_samples=4000, n_features=5, n_informative=4, n_redundant=0,
                               n_classes=3, n_clusters_per_class=1, random_state=seed)
    clf = LogisticRegression().fit(X, y)
    Xn = rng.normal(size=(n, 5)) * X.std(axis=0) + X.mean(axis=0)
    L = clf.decision_function(Xn) + np.array([1.5, -1.0, 0.0])
    P = np.exp(L - L.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    yn = (rng.uniform(size=(n, 1)) > np.cumsum(P, axis=1)).sum(axis=1)
    return clf, Xn, yn


@_needs("vector")
@pytest.mark.parametrize("scoring", ["neg_log_loss", "neg_skce"])
def test_grid_search_picks_vector_scaling_for_a_class_bias(scoring):
    clf, X, y = _biased_problem()
    grid = GridSearchCV(RecalibratedClassifier(FrozenEstimator(clf)),
                        {"recalibrator": ["temperature", "vector"]},
                        scoring=skcalib.get_scorer(scoring), cv=3, error_score="raise").fit(X, y)
    assert grid.best_params_ == {"recalibrator": "vector"}
    res = grid.cv_results_["mean_test_score"]
    assert res[1] > res[0]


def _beta_problem(seed=0, n=4000):
    """A frozen binary model whose probabilities ``p`` relate to the truth by a beta map
    ``sigmoid(a log p - b log(1 - p) + c)`` with ``a != b``, which no logistic map of the
    log-odds (Platt scaling) represents, and beta calibration does exactly."""
    rng = np.random.default_rng(seed)
    X, y = make_classification(n_samples=4000, n_features=4, n_informative=3, n_redundant=0,
                               random_state=seed)
    from sklearn.naive_bayes import GaussianNB
    clf = GaussianNB().fit(X, y)
    Xn = rng.normal(size=(n, 4)) * X.std(axis=0) + X.mean(axis=0)
    p = np.clip(clf.predict_proba(Xn)[:, 1], 1e-12, 1 - 1e-12)
    z = 0.3 * np.log(p) - 2.0 * np.log1p(-p) + 0.5
    yn = (rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-z))).astype(int)
    return clf, Xn, yn


@_needs("platt", "beta")
def test_grid_search_picks_beta_for_a_beta_distortion():
    clf, X, y = _beta_problem()
    grid = GridSearchCV(RecalibratedClassifier(FrozenEstimator(clf), method="predict_proba"),
                        {"recalibrator": ["temperature", "platt", "beta"]},
                        scoring=skcalib.get_scorer("neg_log_loss"), cv=3, error_score="raise").fit(X, y)
    assert grid.best_params_ == {"recalibrator": "beta"}


def test_grid_search_over_every_method_runs():
    """Every available method is a valid grid value."""
    X, y = _data(2, n=600, seed=3)
    names = list(CLASSIFIERS)
    grid = GridSearchCV(RecalibratedClassifier(LogisticRegression(), cv=3),
                        {"recalibrator": names},
                        scoring=skcalib.get_scorer("neg_log_loss"), cv=3, error_score="raise").fit(X, y)
    assert grid.best_params_["recalibrator"] in names
    assert np.all(np.isfinite(grid.cv_results_["mean_test_score"]))


@pytest.mark.parametrize("model, names", [
    (_EnsembleModel, ["none", "quantile", "spread"]),
    (_QuantileModel, ["none", "quantile", "cqr"]),
])
@pytest.mark.parametrize("ensemble", [False, True])
def test_grid_search_over_the_methods_of_a_form(model, names, ensemble):
    """The methods for ensembles (quantile recalibration, spread scaling) and for quantile
    predictions (quantile recalibration, CQR) are interchangeable grid values of
    ``recalibrator``; the model's under-dispersion makes every method beat no recalibration."""
    X, y = load_diabetes(return_X_y=True)
    grid = GridSearchCV(RecalibratedRegressor(model(), cv=3, ensemble=ensemble),
                        {"recalibrator": names}, scoring=skcalib.get_scorer("neg_crps"), cv=3,
                        error_score="raise").fit(X, y)
    res = dict(zip(names, grid.cv_results_["mean_test_score"]))
    assert np.all(np.isfinite(list(res.values())))
    assert grid.best_params_["recalibrator"] != "none"
    assert all(res[n] > res["none"] for n in names if n != "none"), res
    fitted = grid.best_estimator_.predict_distribution(X[:5])
    assert type(fitted) is type(model().fit(X, y).predict_distribution(X[:5]))


def test_the_methods_of_a_form_are_listed_for_it():
    assert _registry.method_names(REGRESSOR_RECALIBRATORS) == ["temperature", "quantile"]
    assert _registry.method_names(REGRESSOR_RECALIBRATORS, "Empirical") == [
        "temperature", "quantile", "spread"]
    assert _registry.method_names(REGRESSOR_RECALIBRATORS, "Quantiles") == [
        "temperature", "quantile", "cqr"]


def test_meta_estimators_read_the_registries():
    assert RecalibratedClassifier._recalibrator_registry == _registry.CLASSIFIER_RECALIBRATORS
    assert RecalibratedRegressor._recalibrator_registry == _registry.REGRESSOR_RECALIBRATORS


def test_randomised_method_by_name_is_reproducible():
    """``recalibrator="scaling_binning"`` (a random split inside) means one fitted model: it is
    seeded with 0, so two fits agree; an instance keeps its own random_state."""
    X, y = make_classification(n_samples=600, n_classes=3, n_informative=5, random_state=3)
    make = lambda r: RecalibratedClassifier(LogisticRegression(max_iter=500), recalibrator=r,
                                           cv=3)
    a = make("scaling_binning").fit(X, y)
    b = make("scaling_binning").fit(X, y)
    assert all(r.random_state == 0 for r in a.recalibrators_)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    c = make(skcalib.recalibration.ScalingBinning(random_state=5)).fit(X, y)
    assert all(r.random_state == 5 for r in c.recalibrators_)
