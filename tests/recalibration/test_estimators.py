"""Recalibrators as scikit-learn estimators: conformance, meta-estimators, pipelines, bad input.

The mathematics (exact optima, temperature recovery, Definition F.1) is tested in
``tests/recalibration/test_temperature_scaling.py``.
"""

import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn import config_context
from sklearn.base import clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import load_diabetes, make_classification
from sklearn.frozen import FrozenEstimator
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, WhiteKernel
from sklearn.linear_model import BayesianRidge, LinearRegression, LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from skcalib import calibration_error, skce
from skcalib._estimator_checks import expected_failed_checks
from skcalib.distributions import Categorical, Laplace, Mixture, MultivariateNormal, Normal
from skcalib.kernels import GaussianKernel, WassersteinKernel
from skcalib.recalibration import (DistributionTemperatureScaling, PredictionTransformer,
                                   RecalibratedClassifier, RecalibratedRegressor,
                                   TemperatureScaling)
from skcalib.scorers import get_scorer, predict_distribution

# ---------------------------------------------------------------------------------------------
# scikit-learn's estimator checks

# The reasons for the expected failures of scikit-learn's generic checks are in one table for
# every skcalib estimator: skcalib/_estimator_checks.py.


def _expected_failed(estimator):
    return expected_failed_checks(estimator)


CHECKED = [TemperatureScaling(), DistributionTemperatureScaling(), RecalibratedClassifier(cv=3),
           RecalibratedRegressor(cv=3), PredictionTransformer(LogisticRegression()),
           RecalibratedClassifier(), RecalibratedRegressor()]  # (and the default cv)


# The generic checks fit on random or degenerate data (noise, blobs that the scores separate,
# constant columns); temperature scaling reports those with a ConvergenceWarning (scores that
# carry no information, or separated fitting data), which is expected and tested on purpose in
# test_temperature_scaling_degenerate_data_warns and test_separated_fitting_data_*.
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@parametrize_with_checks(CHECKED, expected_failed_checks=_expected_failed)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _logits(n=400, C=3, seed=0, scale=3.0, T=2.0):
    """Logits and labels drawn from softmax(logits / T) (an overconfident model for T > 1)."""
    rng = np.random.default_rng(seed)
    L = scale * rng.normal(size=(n, C))
    P = np.exp(L / T - (L / T).max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    y = (rng.random((n, 1)) > P.cumsum(axis=1)).sum(axis=1).clip(max=C - 1)
    return L, y


@pytest.mark.parametrize("C", [2, 4])
def test_temperature_scaling_sklearn_properties(C):
    """The properties of the skipped generic checks, on valid scores."""
    L, y = _logits(C=C)
    labels = np.array(["a", "b", "c", "d"])[:C][y]
    ts = TemperatureScaling()
    L0, y0 = L.copy(), labels.copy()
    assert ts.fit(L, labels) is ts
    assert_array_equal(L, L0)  # inputs untouched
    assert_array_equal(labels, y0)
    assert ts.get_params() == TemperatureScaling().get_params()  # params not overwritten
    assert ts.n_features_in_ == C
    assert_array_equal(ts.classes_, np.array(["a", "b", "c", "d"])[:C])
    P = ts.predict_proba(L)
    # refit gives the same result; pickling round-trips; float32 and F-ordered input agree
    assert_allclose(clone(ts).fit(L, labels).predict_proba(L), P, rtol=0, atol=0)
    assert_allclose(pickle.loads(pickle.dumps(ts)).predict_proba(L), P)
    assert_allclose(ts.predict_proba(np.asfortranarray(L)), P)
    assert_allclose(TemperatureScaling().fit(L.astype(np.float32), labels).temperature_,
                    ts.temperature_, rtol=1e-5)
    # order and subset invariance of predictions
    perm = np.random.default_rng(1).permutation(len(L))
    assert_allclose(ts.predict_proba(L[perm]), P[perm])
    assert_allclose(ts.predict_proba(L[:7]), P[:7])
    # lists and transform
    assert_allclose(ts.transform(L.tolist()), P)
    # sample weights: integer weights equal repetition; a list is accepted
    w = np.random.default_rng(2).integers(0, 3, size=len(L))
    rep = TemperatureScaling().fit(np.repeat(L, w, axis=0), np.repeat(labels, w))
    assert_allclose(TemperatureScaling().fit(L, labels, sample_weight=w.tolist()).temperature_,
                    rep.temperature_, rtol=1e-10)
    # the number of columns is checked at prediction time
    with pytest.raises(ValueError, match="column"):
        ts.predict_proba(L[:, :-1] if C > 2 else L[:, :1].repeat(3, axis=1))


def test_temperature_scaling_binary_forms_agree():
    """1-D log-odds, two logit columns and probabilities describe the same model."""
    L, y = _logits(C=2, seed=3)
    z = L[:, 1] - L[:, 0]
    p = 1.0 / (1.0 + np.exp(-z))
    t1 = TemperatureScaling().fit(z, y)
    t2 = TemperatureScaling().fit(L, y)
    t3 = TemperatureScaling(input="proba", eps=1e-300).fit(p, y)
    assert t1.input_ == "logits" and t3.input_ == "proba"
    assert_allclose(t1.temperature_, t2.temperature_, rtol=1e-10)
    assert_allclose(t1.temperature_, t3.temperature_, rtol=1e-8)
    assert_allclose(t1.predict_proba(z), t2.predict_proba(L), rtol=1e-10)
    # decision_function of the binary case is the tempered log-odds
    assert_allclose(t1.decision_function(z), z / t1.temperature_)
    assert_allclose(t2.decision_function(L), z / t2.temperature_, rtol=1e-12)


def test_temperature_scaling_matches_sklearn_calibrated_classifier():
    """Same optimum as CalibratedClassifierCV(method="temperature") (bounded Brent) to its
    tolerance, and an NLL that is no worse."""
    L, y = _logits(n=3000, C=5, seed=4)

    class Identity(LogisticRegression):
        def decision_function(self, X):
            return np.asarray(X)

    ident = Identity().fit(L, y)
    sk = CalibratedClassifierCV(FrozenEstimator(ident), method="temperature").fit(L, y)
    ts = TemperatureScaling(input="logits").fit(L, y)
    beta_sk = sk.calibrated_classifiers_[0].calibrators[0].beta_
    assert_allclose(ts.inverse_temperature_, beta_sk, rtol=1e-6)
    from sklearn.metrics import log_loss
    ours = log_loss(y, ts.predict_proba(L))
    theirs = log_loss(y, sk.predict_proba(L))
    assert ours <= theirs + 1e-14


def test_temperature_scaling_auto_input_and_classes():
    L, y = _logits(C=3, seed=5)
    P = np.exp(L) / np.exp(L).sum(axis=1, keepdims=True)
    assert TemperatureScaling().fit(P, y).input_ == "proba"
    assert TemperatureScaling().fit(L, y).input_ == "logits"
    # a class absent from the fitting labels, declared through `classes`
    keep = y != 2
    ts = TemperatureScaling(labels=[0, 1, 2]).fit(L[keep], y[keep])
    assert_array_equal(ts.classes_, [0, 1, 2])
    assert ts.predict_proba(L).shape == (len(L), 3)


def test_temperature_scaling_preserves_argmax_and_lowers_error():
    L, y = _logits(n=4000, C=4, seed=6, T=3.0)  # the model is 3x overconfident
    cal, test = slice(0, 2000), slice(2000, None)
    ts = TemperatureScaling().fit(L[cal], y[cal])
    assert 2.5 < ts.temperature_ < 3.6
    before = np.exp(L[test]) / np.exp(L[test]).sum(axis=1, keepdims=True)
    after = ts.predict_proba(L[test])
    assert_array_equal(after.argmax(axis=1), L[test].argmax(axis=1))
    assert_array_equal(ts.predict(L[test]), L[test].argmax(axis=1))
    assert calibration_error(y[test], after) < 0.5 * calibration_error(y[test], before)
    k = GaussianKernel(0.5)
    assert skce(y[test], after, kernel=k) < 0.5 * skce(y[test], before, kernel=k)


# ---------------------------------------------------------------------------------------------
# DistributionTemperatureScaling


def _normal_data(n=500, seed=0, T=4.0):
    rng = np.random.default_rng(seed)
    mean = rng.normal(size=n)
    std = rng.uniform(0.5, 1.5, size=n)
    y = mean + np.sqrt(T) * std * rng.normal(size=n)
    return mean, std, y


def test_distribution_scaling_sklearn_properties():
    mean, std, y = _normal_data()
    X = np.column_stack([mean, std])
    X0 = X.copy()
    dts = DistributionTemperatureScaling()
    assert dts.fit(X, y) is dts
    assert_array_equal(X, X0)
    assert dts.n_features_in_ == 2
    out = dts.transform(X)
    assert out.shape == (len(X), 2)
    assert_array_equal(out[:, 0], mean)  # means never change
    assert_allclose(out[:, 1], std * np.sqrt(dts.temperature_))
    # array and distribution inputs agree; the distribution form returns a distribution
    d = dts.transform(Normal(mean, std))
    assert isinstance(d, Normal)
    assert_allclose(d.scale, out[:, 1])
    assert_allclose(DistributionTemperatureScaling().fit(Normal(mean, std), y).temperature_,
                    dts.temperature_, rtol=1e-14)
    m, s = dts.predict(X, return_std=True)
    assert_array_equal(m, mean)
    assert_allclose(s, out[:, 1])
    assert_allclose(pickle.loads(pickle.dumps(dts)).transform(X), out)
    perm = np.random.default_rng(1).permutation(len(X))
    assert_allclose(dts.transform(X[perm]), out[perm])
    # score is the mean log density, which the NLL temperature maximises
    s_fit = dts.score(X, y)
    for T in (0.8 * dts.temperature_, 1.25 * dts.temperature_):
        assert Normal(mean, std * np.sqrt(T)).log_pdf(y).mean() < s_fit
    w = np.random.default_rng(2).integers(0, 3, size=len(X))
    rep = DistributionTemperatureScaling().fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    assert_allclose(DistributionTemperatureScaling().fit(X, y, sample_weight=w).temperature_,
                    rep.temperature_, rtol=1e-12)


@pytest.mark.parametrize("family", ["laplace", "mvn_full", "mvn_diag", "mixture", "categorical"])
def test_distribution_scaling_families_keep_mean(family):
    rng = np.random.default_rng(0)
    n = 300
    if family == "laplace":
        dist = Laplace(rng.normal(size=n), rng.uniform(0.5, 1.0, n))
        y = dist.loc + 2.0 * rng.laplace(size=n)
    elif family in ("mvn_full", "mvn_diag"):
        mean = rng.normal(size=(n, 2))
        cov = np.array([[1.0, 0.3], [0.3, 0.5]])
        cov = np.broadcast_to(cov, (n, 2, 2)) if family == "mvn_full" else np.ones((n, 2))
        dist = MultivariateNormal(mean, cov)
        y = mean + 1.5 * rng.normal(size=(n, 2))
    elif family == "mixture":
        dist = Mixture([0.5, 0.5], [Normal(rng.normal(size=n), 1.0), Normal(np.zeros(n), 0.5)])
        y = rng.normal(size=n) * 2.0
    else:
        L, yy = _logits(n=n, C=3)
        P = np.exp(L) / np.exp(L).sum(axis=1, keepdims=True)
        P[0] = [0.0, 0.0, 1.0]  # an exact zero: clipped at eps by fit and transform alike
        dist, y = Categorical(P, classes=["a", "b", "c"]), np.array(["a", "b", "c"])[yy]
    dts = DistributionTemperatureScaling().fit(dist, y)
    out = dts.transform(dist)
    assert type(out) is type(dist)
    assert dts.family_ == type(dist).__name__
    if family == "categorical":
        assert_array_equal(out.probs.argmax(axis=1), dist.probs.argmax(axis=1))
        ts = TemperatureScaling(input="proba").fit(dist.probs, y)
        assert_allclose(dts.temperature_, ts.temperature_, rtol=1e-12)
        # transform applies exactly the fitted model (the same clipping of zeros as fit)
        assert_allclose(out.probs, ts.predict_proba(dist.probs), rtol=1e-12)
    else:
        assert_allclose(out.mean, dist.mean, rtol=0, atol=1e-15)
        assert dts.temperature_ > 1.5  # every family above was given under-dispersed predictions


# ---------------------------------------------------------------------------------------------
# meta-estimators


@pytest.fixture(scope="module")
def clf_data():
    X, y = make_classification(n_samples=1200, n_features=8, n_informative=5, n_classes=3,
                               random_state=0)
    return X, y


@pytest.mark.parametrize("ensemble", [True, False])
def test_recalibrated_classifier_cross_fitting(clf_data, ensemble):
    X, y = clf_data
    cv = StratifiedKFold(4)
    rc = RecalibratedClassifier(GaussianNB(), cv=cv, ensemble=ensemble).fit(X, y)
    assert len(rc.estimators_) == (4 if ensemble else 1)
    assert rc.method_ == "predict_proba"  # GaussianNB has no decision_function
    assert all(r.input == "proba" for r in rc.recalibrators_)
    if ensemble:
        # pair k = (model fitted on the k-th training fold, TS fitted on its held-out scores)
        for (train, test), est, rec in zip(cv.split(X, y), rc.estimators_, rc.recalibrators_):
            ref_est = GaussianNB().fit(X[train], y[train])
            assert_allclose(est.theta_, ref_est.theta_)
            ref = TemperatureScaling(input="proba").fit(ref_est.predict_proba(X[test]), y[test])
            assert_allclose(rec.temperature_, ref.temperature_, rtol=1e-12)
    else:
        oof = np.empty((len(y), 3))
        for train, test in cv.split(X, y):
            oof[test] = GaussianNB().fit(X[train], y[train]).predict_proba(X[test])
        ref = TemperatureScaling(input="proba").fit(oof, y)
        assert_allclose(rc.recalibrators_[0].temperature_, ref.temperature_, rtol=1e-12)
    P = rc.predict_proba(X)
    assert_allclose(P.sum(axis=1), 1.0)
    assert_array_equal(rc.predict(X), rc.classes_[P.argmax(axis=1)])


def test_recalibrated_classifier_frozen(clf_data):
    # (cv="prefit", removed from scikit-learn 1.9, is refused:
    # tests/recalibration/test_cv_and_feature_names.py)
    X, y = clf_data
    clf = LogisticRegression(C=100.0).fit(X[:600], y[:600])
    coef = clf.coef_.copy()  # the frozen model holds clf itself: compare with a copy
    frozen = RecalibratedClassifier(FrozenEstimator(clf)).fit(X[600:], y[600:])
    direct = TemperatureScaling(input="logits").fit(clf.decision_function(X[600:]), y[600:])
    assert frozen.method_ == "decision_function"
    assert_allclose(frozen.recalibrators_[0].temperature_, direct.temperature_, rtol=1e-14)
    assert_allclose(frozen.predict_proba(X[:50]),
                    direct.predict_proba(clf.decision_function(X[:50])), rtol=1e-12)
    # the model was not refitted, and accuracy is unchanged
    assert_array_equal(frozen.estimators_[0].coef_, coef)
    assert_array_equal(frozen.predict(X), clf.predict(X))
    with pytest.raises(Exception, match="not fitted"):
        RecalibratedClassifier(FrozenEstimator(LogisticRegression())).fit(X, y)


def test_recalibrated_classifier_any_recalibrator(clf_data):
    """A plain classifier on the scores works as a recalibrator (here: multinomial logistic)."""
    X, y = clf_data
    rc = RecalibratedClassifier(GaussianNB(), LogisticRegression(), cv=3).fit(X, y)
    assert rc.predict_proba(X).shape == (len(X), 3)


def test_recalibrated_classifier_sample_weight(clf_data):
    X, y = clf_data
    w = np.random.default_rng(0).integers(1, 3, size=len(y)).astype(float)
    a = RecalibratedClassifier(LogisticRegression(), cv=KFold(3)).fit(X, y, sample_weight=w)
    Xr, yr = np.repeat(X, w.astype(int), axis=0), np.repeat(y, w.astype(int))
    # with repeated rows the folds differ, so compare a single frozen-model recalibration instead
    clf = LogisticRegression().fit(X, y)
    p1 = RecalibratedClassifier(FrozenEstimator(clf)).fit(X, y, sample_weight=w)
    p2 = RecalibratedClassifier(FrozenEstimator(clf)).fit(Xr, yr)
    assert_allclose(p1.recalibrators_[0].temperature_, p2.recalibrators_[0].temperature_,
                    rtol=1e-10)
    # the weights reached the estimator's fit
    est0 = a.estimators_[0]
    train = next(iter(KFold(3).split(X)))[0]
    ref = LogisticRegression().fit(X[train], y[train], sample_weight=w[train])
    assert_allclose(est0.coef_, ref.coef_)
    with pytest.warns(UserWarning, match="does not accept sample_weight"):
        RecalibratedClassifier(_NoWeights(), cv=3).fit(X, y, sample_weight=w)


def test_frozen_model_with_sample_weight_does_not_warn(clf_data):
    import warnings
    X, y = clf_data
    clf = LogisticRegression().fit(X[:600], y[:600])
    w = np.linspace(0.5, 2.0, 600)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rc = RecalibratedClassifier(FrozenEstimator(clf)).fit(X[600:], y[600:], sample_weight=w)
        RecalibratedClassifier(FrozenEstimator(clf), ensemble=False).fit(
            X[600:], y[600:], sample_weight=w)
    ref = TemperatureScaling().fit(clf.decision_function(X[600:]), y[600:], sample_weight=w)
    assert_allclose(rc.recalibrators_[0].temperature_, ref.temperature_, rtol=1e-14)


class _NoWeights(LogisticRegression):
    def fit(self, X, y):
        return super().fit(X, y)


def test_recalibrated_classifier_metadata_routing(clf_data):
    X, y = clf_data
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=len(y))
    with config_context(enable_metadata_routing=True):
        est = LogisticRegression().set_fit_request(sample_weight=True)
        rc = RecalibratedClassifier(est, cv=KFold(3)).fit(X, y, sample_weight=w)
        train = next(iter(KFold(3).split(X)))[0]
        ref = LogisticRegression().fit(X[train], y[train], sample_weight=w[train])
        assert_allclose(rc.estimators_[0].coef_, ref.coef_)
        est = LogisticRegression().set_fit_request(sample_weight=False)
        rc2 = RecalibratedClassifier(est, cv=KFold(3)).fit(X, y, sample_weight=w)
        ref2 = LogisticRegression().fit(X[train], y[train])
        assert_allclose(rc2.estimators_[0].coef_, ref2.coef_)


def test_recalibrated_classifier_in_grid_search(clf_data):
    """Choose C of a logistic regression by the SKCE after recalibration."""
    X, y = clf_data
    search = GridSearchCV(RecalibratedClassifier(LogisticRegression(), cv=3),
                          {"estimator__C": [0.01, 1.0]}, scoring=get_scorer("neg_skce"), cv=3)
    search.fit(X, y)
    assert set(search.cv_results_["param_estimator__C"]) == {0.01, 1.0}
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))


def test_recalibrated_classifier_bad_input(clf_data):
    X, y = clf_data
    with pytest.raises(ValueError, match="at least 2 classes"):
        RecalibratedClassifier().fit(X, np.zeros(len(X)))
    with pytest.raises(ValueError, match="ensemble"):
        RecalibratedClassifier(ensemble="yes").fit(X, y)
    with pytest.raises(ValueError, match="method"):
        RecalibratedClassifier(method="predict").fit(X, y)
    with pytest.raises(ValueError, match="cv"):
        RecalibratedClassifier(cv="prefitt").fit(X, y)
    with pytest.raises(ValueError, match="sample"):
        RecalibratedClassifier(cv=5).fit(X[:8], y[:8])


@pytest.fixture(scope="module")
def reg_data():
    X, y = load_diabetes(return_X_y=True)
    return X, y


@pytest.mark.parametrize("ensemble", [True, False])
def test_recalibrated_regressor(reg_data, ensemble):
    X, y = reg_data
    cv = KFold(3)
    rr = RecalibratedRegressor(BayesianRidge(), cv=cv, ensemble=ensemble).fit(X, y)
    mean, std = rr.predict(X[:10], return_std=True)
    dist = rr.predict_distribution(X[:10])
    assert_allclose(dist.mean, mean)
    assert_allclose(np.sqrt(dist.variance), std)
    if ensemble:
        assert isinstance(dist, Mixture) and dist.n_components == 3
        # the mixture of the pairs' tempered Normals
        parts = [predict_distribution(e, X[:10]).tempered(r.temperature_)
                 for e, r in zip(rr.estimators_, rr.recalibrators_)]
        assert_allclose(mean, np.mean([p.loc for p in parts], axis=0))
    else:
        oof_mean, oof_std = np.empty(len(y)), np.empty(len(y))
        for train, test in cv.split(X):
            m, s = BayesianRidge().fit(X[train], y[train]).predict(X[test], return_std=True)
            oof_mean[test], oof_std[test] = m, s
        T = np.mean((y - oof_mean) ** 2 / oof_std ** 2)
        assert_allclose(rr.recalibrators_[0].temperature_, T, rtol=1e-10)
        m, s = BayesianRidge().fit(X, y).predict(X[:10], return_std=True)
        assert_allclose(mean, m)
        assert_allclose(std, s * np.sqrt(T))
    assert rr.score(X, y) > 0.3  # R^2 of the (unchanged) means


@pytest.mark.parametrize("ensemble", [True, False])
def test_recalibrated_regressor_in_grid_search(reg_data, ensemble):
    """Tune the model inside the recalibrator by the SKCE of the recalibrated distributions."""
    X, y = reg_data
    search = GridSearchCV(RecalibratedRegressor(BayesianRidge(), cv=3, ensemble=ensemble),
                          {"estimator__alpha_1": [1e-6, 1e2]}, scoring=get_scorer("neg_skce"),
                          cv=3).fit(X, y)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    assert search.best_estimator_.predict(X[:3]).shape == (3,)


def test_recalibrated_regressor_frozen_gpr_recovers_dispersion(reg_data):
    """A GP whose noise is fixed 3x too small in std: the recalibrated std is right on test data."""
    X, y = reg_data
    y = (y - y.mean()) / y.std()
    gpr = GaussianProcessRegressor(RBF(5.0) + WhiteKernel(0.05, "fixed"), optimizer=None,
                                   alpha=1e-6).fit(X[:200], y[:200])
    rr = RecalibratedRegressor(FrozenEstimator(gpr)).fit(X[200:320], y[200:320])
    assert rr.recalibrators_[0].temperature_ > 2.0
    m0, s0 = gpr.predict(X[320:], return_std=True)
    m1, s1 = rr.predict(X[320:], return_std=True)
    assert_allclose(m1, m0)
    z0, z1 = (y[320:] - m0) / s0, (y[320:] - m1) / s1
    assert abs(np.mean(z1 ** 2) - 1.0) < abs(np.mean(z0 ** 2) - 1.0)
    nll0 = -Normal(m0, s0).log_pdf(y[320:]).mean()
    nll1 = -Normal(m1, s1).log_pdf(y[320:]).mean()
    assert nll1 < nll0


def test_recalibrated_regressor_bad_input(reg_data):
    X, y = reg_data
    with pytest.raises(TypeError, match="no predictive distribution"):
        RecalibratedRegressor(LinearRegression(), cv=3).fit(X, y)
    with pytest.raises(ValueError, match="y is None"):
        RecalibratedRegressor().fit(X, None)


# ---------------------------------------------------------------------------------------------
# pipelines


def test_pipeline_with_temperature_scaling_step(clf_data):
    X, y = clf_data
    clf = LogisticRegression(C=100.0).fit(X[:600], y[:600])
    pipe = Pipeline([("model", PredictionTransformer(FrozenEstimator(clf))),
                     ("ts", TemperatureScaling())])
    pipe.fit(X[600:], y[600:])
    direct = TemperatureScaling().fit(clf.decision_function(X[600:]), y[600:])
    assert_allclose(pipe[-1].temperature_, direct.temperature_, rtol=1e-14)
    assert_allclose(pipe.predict_proba(X[:20]), direct.predict_proba(clf.decision_function(X[:20])))
    assert_array_equal(pipe.predict(X), clf.predict(X))
    assert_array_equal(pipe.classes_, clf.classes_)
    cloned = clone(pipe)
    assert not hasattr(cloned[-1], "temperature_")
    assert_allclose(cloned.fit(X[600:], y[600:]).predict_proba(X[:5]), pipe.predict_proba(X[:5]))
    # sample weights reach the temperature scaling step
    w = np.ones(600)
    w[:300] = 2.0
    pw = clone(pipe).fit(X[600:], y[600:], ts__sample_weight=w)
    dw = TemperatureScaling().fit(clf.decision_function(X[600:]), y[600:], sample_weight=w)
    assert_allclose(pw[-1].temperature_, dw.temperature_, rtol=1e-14)
    # a pipeline scorer works on it
    assert np.isfinite(get_scorer("neg_skce")(pipe, X[:300], y[:300]))


def test_pipeline_with_distribution_scaling_step(reg_data):
    X, y = reg_data
    br = BayesianRidge().fit(X[:200], y[:200])
    pipe = make_pipeline(PredictionTransformer(FrozenEstimator(br)),
                         DistributionTemperatureScaling())
    pipe.fit(X[200:], y[200:])
    m, s = pipe.predict(X[:10], return_std=True)
    m0, s0 = br.predict(X[:10], return_std=True)
    assert_allclose(m, m0)
    assert_allclose(s, s0 * np.sqrt(pipe[-1].temperature_))
    assert clone(pipe).fit(X[200:], y[200:])[-1].temperature_ == pipe[-1].temperature_


def test_prediction_transformer_methods(clf_data):
    X, y = clf_data
    clf = LogisticRegression().fit(X, y)
    for method, ref in [("auto", clf.decision_function(X)),
                        ("predict_proba", clf.predict_proba(X))]:
        pt = PredictionTransformer(FrozenEstimator(clf), method=method).fit(X, y)
        assert_allclose(pt.transform(X), ref)
    with pytest.raises(ValueError, match="method"):
        PredictionTransformer(clf, method="predict").fit(X, y)


# ---------------------------------------------------------------------------------------------
# bad input: clear errors, nothing mutated


@pytest.mark.parametrize("bad, match", [
    (np.array([[0.0, np.nan], [1.0, 0.0]]), "NaN"),
    (np.array([[0.0, np.inf], [1.0, 0.0]]), "infinity"),
])
def test_temperature_scaling_non_finite_scores(bad, match):
    with pytest.raises(ValueError, match=match):
        TemperatureScaling().fit(bad, [0, 1])


def test_temperature_scaling_bad_input():
    L, y = _logits(n=50, C=3)
    with pytest.raises(ValueError, match="at least 2 classes"):
        TemperatureScaling().fit(L[:, :2], np.zeros(50))
    with pytest.raises(ValueError, match="3 column"):
        TemperatureScaling().fit(L, y % 2)
    with pytest.raises(ValueError, match="entries but there are"):
        TemperatureScaling().fit(L, y[:-1])
    with pytest.raises(ValueError, match="not in labels/classes"):
        TemperatureScaling(labels=[0, 1, 5]).fit(L, y)
    with pytest.raises(ValueError, match="continuous"):
        TemperatureScaling().fit(L, np.linspace(0, 1, 50))
    with pytest.raises(ValueError, match="input"):
        TemperatureScaling(input="logit").fit(L, y)
    with pytest.raises(ValueError, match="objective"):
        TemperatureScaling(objective="ece").fit(L, y)
    with pytest.raises(ValueError, match="eps"):
        TemperatureScaling(eps=0.0).fit(L, y)
    with pytest.raises(ValueError, match="probabilities"):
        TemperatureScaling(input="proba").fit(L, y)
    with pytest.raises(ValueError, match="sample_weight"):
        TemperatureScaling().fit(L, y, sample_weight=-np.ones(50))
    with pytest.raises(ValueError, match="sample_weight"):
        TemperatureScaling(objective="skce").fit(L, y, sample_weight=np.ones(49))
    ts = TemperatureScaling().fit(L, y)
    with pytest.raises(ValueError, match="probabilities"):
        TemperatureScaling().fit(np.abs(L) / np.abs(L).sum(1, keepdims=True), y).predict_proba(L)
    with pytest.raises(Exception, match="not fitted"):
        TemperatureScaling().predict_proba(L)
    assert ts.predict_proba(L).shape == (50, 3)


def test_temperature_scaling_degenerate_data_warns():
    from sklearn.exceptions import ConvergenceWarning
    L = np.array([[2.0, 0.0], [0.0, 2.0], [3.0, 1.0]])
    with pytest.warns(ConvergenceWarning, match="largest score"):
        ts = TemperatureScaling().fit(L, [0, 1, 0])  # perfectly separated: no NLL minimiser
    # every margin is 2, so the mean confidence is sigmoid(2 / T); Laplace's (3 + 1) / (3 + 2)
    # = 4/5 gives exp(-2 / T) = 1/4, T = 2 / log 4 = 1 / log 2 (not the NLL's limit T -> 0)
    assert_allclose(ts.temperature_, 1.0 / np.log(2.0), rtol=1e-10)
    with pytest.warns(ConvergenceWarning, match="no information"):
        ts = TemperatureScaling().fit(L, [1, 0, 1])  # every label has the smaller score
    assert ts.temperature_ >= 1e9
    assert_array_equal(ts.predict(L), [0, 1, 0])  # the arg-max is still the model's


@pytest.mark.parametrize("X, y, match", [
    (np.column_stack([np.zeros(5), -np.ones(5)]), np.zeros(5), "non-negative"),
    (np.column_stack([np.zeros(5), np.zeros(5)]), np.ones(5), "scale > 0"),
    (np.zeros((5, 3)), np.zeros(5), r"shape \(n_samples, 2\)"),
    (np.column_stack([np.zeros(5), np.ones(5)]), np.zeros(4), "samples"),
    (np.column_stack([np.zeros(5), np.ones(5)]), np.array([0, 1, np.nan, 0, 1]), "finite"),
    (Normal(np.zeros(3), 1.0), np.zeros((3, 2)), "shape"),
    (MultivariateNormal(np.zeros((3, 2)), np.zeros((3, 2, 2))), np.ones((3, 2)), "definite"),
])
def test_distribution_scaling_bad_input(X, y, match):
    X0 = X.copy() if isinstance(X, np.ndarray) else None
    with pytest.raises(ValueError, match=match):
        DistributionTemperatureScaling().fit(X, y)
    if X0 is not None:
        assert_array_equal(X, X0)


def test_distribution_scaling_exact_fit_has_no_temperature():
    with pytest.raises(ValueError, match="no minimiser"):
        DistributionTemperatureScaling().fit(Normal(np.arange(4.0), 1.0), np.arange(4.0))


# ---------------------------------------------------------------------------------------------
# DistributionTemperatureScaling: one family per fitted temperature


def test_distribution_scaling_rejects_another_family():
    rng = np.random.default_rng(0)
    n = 50
    mean, y = rng.normal(size=n), rng.normal(size=n) * 2.0
    dts = DistributionTemperatureScaling().fit(Normal(mean, 1.0), y)
    others = [
        (Laplace(mean, 1.0), "Laplace"),
        (MultivariateNormal(np.zeros((n, 2)), np.ones((n, 2))), r"MultivariateNormal\(dim=2\)"),
        (Mixture([0.5, 0.5], [Laplace(mean, 1.0), Laplace(mean + 1, 1.0)]),
         r"Mixture\[Laplace, Laplace\]"),
        (Categorical(np.full((n, 2), 0.5)), "Categorical"),
    ]
    for other, name in others:
        for method in (dts.transform, dts.predict_distribution, dts.predict):
            with pytest.raises(ValueError, match=f"X holds {name} predictions but the "
                                                 "temperature was fitted on Normal"):
                method(other)
    # a mixture of the fitted component families, and Normal [mean, std] arrays, are accepted
    assert isinstance(dts.transform(np.column_stack([mean, np.ones(n)])), np.ndarray)
    mix = DistributionTemperatureScaling().fit(
        Mixture([0.5, 0.5], [Normal(mean, 1.0), Normal(mean + 1, 1.0)]), y)
    with pytest.raises(ValueError, match=r"Mixture\[Laplace, Laplace\].*Mixture\[Normal, Normal\]"):
        mix.transform(others[2][0])
    with pytest.raises(ValueError, match=r"Mixture\[Normal\].*Mixture\[Normal, Normal\]"):
        mix.transform(Mixture(np.ones((n, 1)), [Normal(mean, 1.0)]))
    mvn = DistributionTemperatureScaling().fit(
        MultivariateNormal(np.zeros((n, 2)), np.ones((n, 2))), rng.normal(size=(n, 2)))
    with pytest.raises(ValueError, match=r"dim=3.*dim=2"):
        mvn.transform(MultivariateNormal(np.zeros((n, 3)), np.ones((n, 3))))


def test_distribution_scaling_categorical_classes():
    """Unsorted classes are fitted and transformed column by column (was: columns read in sorted
    label order, here an uninformative fit with T = 1e10); other classes are rejected."""
    L, yy = _logits(n=300, C=3, seed=8)
    P = np.exp(L) / np.exp(L).sum(axis=1, keepdims=True)
    classes = np.array(["c", "a", "b"])
    y = classes[yy]
    dts = DistributionTemperatureScaling().fit(Categorical(P, classes=classes), y)
    order = np.argsort(classes)  # TemperatureScaling's columns are the sorted labels
    ts = TemperatureScaling(input="proba").fit(P[:, order], y)
    assert_allclose(dts.temperature_, ts.temperature_, rtol=1e-12)
    out = dts.transform(Categorical(P, classes=classes))
    assert_array_equal(out.classes, classes)
    assert_allclose(out.probs[:, order], ts.predict_proba(P[:, order]), rtol=1e-12)
    # the same classes in another column order give the same distributions
    perm = np.array([2, 0, 1])
    out2 = dts.transform(Categorical(P[:, perm], classes=classes[perm]))
    assert_allclose(out2.probs, out.probs[:, perm], rtol=1e-12)
    with pytest.raises(ValueError, match=r"classes \['a', 'b', 'd'\].*fitted on the classes"):
        dts.transform(Categorical(P, classes=["a", "b", "d"]))


# ---------------------------------------------------------------------------------------------
# every parameter is validated at fit, whether or not the fit uses it


def test_parameters_validated_at_every_fit(clf_data, reg_data):
    X, y = clf_data
    Xr, yr = reg_data
    L, yl = _logits(n=60, C=3)
    mean, std, yd = _normal_data(n=60)
    cases = [
        # (estimator, X, y, exception, message): the option is unused by the fit (nll objective,
        # prefit model, ...) but still checked
        (TemperatureScaling(kernel="rbf"), L, yl, TypeError, "kernel must be None or a skcalib"),
        (TemperatureScaling(kernel=WassersteinKernel()), L, yl, TypeError, "kernel"),
        (TemperatureScaling(labels=[0, 1, 1, 2]), L, yl, ValueError, "labels contains duplicate"),
        (TemperatureScaling(labels=[0, None, 2]), L, yl, ValueError, "labels contains missing"),
        (TemperatureScaling(block_size=1), L, yl, ValueError, "block_size"),
        (TemperatureScaling(eps=float("nan")), L, yl, ValueError, "eps must be finite"),
        (DistributionTemperatureScaling(random_state=-1), np.column_stack([mean, std]), yd,
         ValueError, "random_state"),
        (DistributionTemperatureScaling(random_state="0"), np.column_stack([mean, std]), yd,
         ValueError, "random_state"),
        (DistributionTemperatureScaling(kernel=GaussianKernel(1.0)), np.column_stack([mean, std]),
         yd, TypeError, "kernel"),
        (DistributionTemperatureScaling(skce_estimator="biased"), np.column_stack([mean, std]),
         yd, ValueError, "skce_estimator"),
        (RecalibratedClassifier(LogisticRegression(), cv=1), X, y, ValueError,
         "cv must be at least 2"),
        (RecalibratedClassifier(LogisticRegression(), cv=True), X, y, TypeError, "cv must be"),
        (RecalibratedClassifier(FrozenEstimator(LogisticRegression().fit(X, y)), n_jobs=0), X, y,
         ValueError, "n_jobs"),
        (RecalibratedClassifier(FrozenEstimator(LogisticRegression().fit(X, y)), n_jobs="2"), X, y,
         TypeError, "n_jobs"),
        (RecalibratedClassifier("lr"), X, y, TypeError, "estimator must be a scikit-learn"),
        (RecalibratedClassifier(recalibrator=LinearRegression()), X, y, TypeError,
         "recalibrator must provide predict_proba"),
        (RecalibratedClassifier(ensemble=1), X, y, ValueError, "ensemble"),
        (RecalibratedRegressor(n_jobs=1.5), Xr, yr, TypeError, "n_jobs"),
        (RecalibratedRegressor(recalibrator=LogisticRegression()), Xr, yr, TypeError,
         "recalibrator must provide transform"),
        (RecalibratedRegressor(cv="fold"), Xr, yr, ValueError, "cv must be"),
    ]
    for est, Xc, yc, exc, match in cases:
        with pytest.raises(exc, match=match):
            est.fit(Xc, yc)


class _CountingNB(GaussianNB):
    """Counts its fits (a class attribute: clones count too)."""
    n_fits = 0

    def fit(self, X, y, sample_weight=None):
        type(self).n_fits += 1
        return super().fit(X, y, sample_weight=sample_weight)


def test_method_checked_at_fit_before_any_fold(clf_data, reg_data):
    """A response method the estimator lacks is a ValueError naming method at fit (was an
    AttributeError from inside the first fold)."""
    X, y = clf_data
    _CountingNB.n_fits = 0
    for est in (RecalibratedClassifier(_CountingNB(), method="decision_function", cv=3),
                PredictionTransformer(_CountingNB(), method="decision_function")):
        with pytest.raises(ValueError, match="method='decision_function', but the estimator "
                                             "_CountingNB has no decision_function"):
            est.fit(X, y)
    assert _CountingNB.n_fits == 0
    with pytest.raises(ValueError, match="needs decision_function or predict_proba"):
        RecalibratedClassifier(LinearRegression(), cv=3).fit(X, y)
    Xr, yr = reg_data
    for est in (RecalibratedRegressor(LinearRegression(), cv=3),
                PredictionTransformer(LinearRegression())):
        with pytest.raises(TypeError, match="no predictive distribution"):
            est.fit(Xr, yr)
    with pytest.raises(TypeError, match="estimator must be a scikit-learn estimator"):
        PredictionTransformer(None).fit(X, y)
    for clf in (LogisticRegression(), FrozenEstimator(LogisticRegression().fit(X, y))):
        with pytest.raises(TypeError, match="estimator must be a probabilistic regressor; "
                                            r"\w+ is a classifier"):
            RecalibratedRegressor(clf, cv=3).fit(X, y)


def test_return_std_must_be_bool(reg_data):
    X, y = reg_data
    rr = RecalibratedRegressor(cv=3).fit(X, y)
    dts = DistributionTemperatureScaling().fit(Normal(y * 0, y.std()), y)
    for f, Xp in ((rr.predict, X[:3]), (dts.predict, Normal(y[:3] * 0, 1.0))):
        with pytest.raises(TypeError, match="return_std must be True or False"):
            f(Xp, return_std="yes")


# ---------------------------------------------------------------------------------------------
# X that can never be a sample matrix: the same message from fit and from every later method

_BAD_X = [None, 3.0, np.float64(2.0), "scores", {"a": [1, 2]}, {1, 2}]
_RAGGED = [[0.1, 0.9], [0.5]]


def _message(call):
    try:
        call()
    except (TypeError, ValueError) as exc:
        return type(exc), str(exc)
    raise AssertionError("no error")


@pytest.mark.parametrize("bad", _BAD_X + [_RAGGED], ids=repr)
def test_bad_X_same_message_in_every_method(bad, clf_data, reg_data):
    X, y = clf_data
    Xr, yr = reg_data
    L, yl = _logits(n=60, C=2)
    mean, std, yd = _normal_data(n=60)
    clf = LogisticRegression().fit(X, y)
    fitted = {
        "ts": (TemperatureScaling().fit(L, yl), yl[:2],
               ["transform", "predict_proba", "predict_log_proba", "predict",
                "decision_function", "score"]),
        "dts": (DistributionTemperatureScaling().fit(np.column_stack([mean, std]), yd), yd[:2],
                ["transform", "predict_distribution", "predict", "score"]),
    }
    for key, (est, y2, methods) in fitted.items():
        ref = _message(lambda: clone(est).fit(bad, y2))
        assert ref[1].startswith("X must be a rectangular array-like" if bad is _RAGGED
                                 else "X must be an array-like"), ref
        for m in methods:
            call = (lambda: getattr(est, m)(bad, y2)) if m == "score" else (
                lambda: getattr(est, m)(bad))
            assert _message(call) == ref, (key, m)
    if bad is _RAGGED:
        return  # a ragged list is the estimator's business in the meta-estimators
    metas = [
        (RecalibratedClassifier(cv=3).fit(X, y), y[:2],
         ["predict_proba", "predict", "score"]),
        (RecalibratedRegressor(cv=3).fit(Xr, yr), yr[:2],
         ["predict_distribution", "predict", "score"]),
        (PredictionTransformer(FrozenEstimator(clf)).fit(X, y), y[:2], ["transform"]),
    ]
    for est, y2, methods in metas:
        ref = _message(lambda: clone(est).fit(bad, y2))
        assert "X must be an array-like" in ref[1]
        for m in methods:
            call = (lambda: getattr(est, m)(bad, y2)) if m == "score" else (
                lambda: getattr(est, m)(bad))
            assert _message(call) == ref, (type(est).__name__, m)


# ---------------------------------------------------------------------------------------------
# set_output(transform="pandas")


def test_temperature_scaling_set_output_pandas():
    pd = pytest.importorskip("pandas")
    L, y = _logits(n=80, C=3)
    labels = np.array(["a", "b", "c"])[y]
    ts = TemperatureScaling().fit(L, labels)
    P = ts.transform(L)
    assert_array_equal(ts.get_feature_names_out(), ["proba_a", "proba_b", "proba_c"])
    ts.set_output(transform="pandas")
    frame = ts.transform(pd.DataFrame(L, index=np.arange(100, 180)))
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns) == ["proba_a", "proba_b", "proba_c"]
    assert_array_equal(frame.index, np.arange(100, 180))
    assert_allclose(frame.to_numpy(), P)
    assert isinstance(clone(ts).fit_transform(L, labels), pd.DataFrame)
    assert isinstance(ts.predict_proba(L), np.ndarray)  # only transform is wrapped
    # binary 1-D log-odds: two probability columns
    z = L[:, 1] - L[:, 0]
    tb = TemperatureScaling().set_output(transform="pandas").fit(z, y % 2)
    assert list(tb.transform(z).columns) == ["proba_0", "proba_1"]
    with pytest.raises(ValueError, match="input_features"):
        ts.get_feature_names_out(["x0", "x1"])


def test_prediction_transformer_set_output_pandas(clf_data):
    pd = pytest.importorskip("pandas")
    X, y = clf_data
    clf = LogisticRegression().fit(X[:600], y[:600])
    for method, names, ref in [
            ("auto", ["decision_0", "decision_1", "decision_2"], clf.decision_function(X)),
            ("predict_proba", ["proba_0", "proba_1", "proba_2"], clf.predict_proba(X))]:
        pt = PredictionTransformer(FrozenEstimator(clf), method=method).fit(X, y)
        out = pt.set_output(transform="pandas").transform(X)
        assert list(out.columns) == names
        assert_allclose(out.to_numpy(), ref)
    # binary: the 1-D decision function is the log-odds of classes_[1]
    yb = np.where(y == 2, "yes", "no")
    cb = LogisticRegression().fit(X, yb)
    pt = PredictionTransformer(FrozenEstimator(cb)).set_output(transform="pandas").fit(X, yb)
    out = pt.transform(X)
    assert list(out.columns) == ["decision_yes"]
    assert_allclose(out.to_numpy()[:, 0], cb.decision_function(X))
    # the whole pipeline, configured at once
    pipe = make_pipeline(PredictionTransformer(FrozenEstimator(clf)), TemperatureScaling())
    pipe.set_output(transform="pandas").fit(X[600:], y[600:])
    out = pipe.transform(pd.DataFrame(X[:5]))
    assert list(out.columns) == ["proba_0", "proba_1", "proba_2"]
    assert_allclose(out.to_numpy(), pipe.predict_proba(X[:5]))


def test_distribution_outputs_pass_set_output_unchanged(reg_data):
    pd = pytest.importorskip("pandas")
    X, y = reg_data
    mean, std, yd = _normal_data(n=100)
    A = np.column_stack([mean, std])
    dts = DistributionTemperatureScaling().set_output(transform="pandas").fit(A, yd)
    frame = dts.transform(A)
    assert list(frame.columns) == ["mean", "std"]
    assert_allclose(frame.to_numpy(), np.column_stack([mean, std * np.sqrt(dts.temperature_)]))
    assert isinstance(dts.transform(Normal(mean, std)), Normal)  # distributions: as they are
    assert isinstance(clone(dts).fit_transform(Normal(mean, std), yd), Normal)
    assert isinstance(clone(dts).fit_transform(A, yd), pd.DataFrame)
    lap = DistributionTemperatureScaling().fit(Laplace(mean, std), yd)
    with pytest.raises(ValueError, match="no column names"):
        lap.get_feature_names_out()
    # a regressor's distributions through a pandas-configured pipeline
    br = BayesianRidge().fit(X[:200], y[:200])
    pipe = make_pipeline(PredictionTransformer(FrozenEstimator(br)),
                         DistributionTemperatureScaling()).set_output(transform="pandas")
    pipe.fit(X[200:], y[200:])
    out = pipe.transform(X[:5])
    assert isinstance(out, Normal)
    assert_allclose(out.scale, br.predict(X[:5], return_std=True)[1]
                    * np.sqrt(pipe[-1].temperature_))
    assert isinstance(pipe[0].fit_transform(X[200:], y[200:]), Normal)
    with pytest.raises(ValueError, match="no column names"):
        pipe[0].get_feature_names_out()


# ---------------------------------------------------------------------------------------------
# other invalid inputs: one-line messages that name the argument


def _sweep_cases():
    rng = np.random.default_rng(0)
    L, y = rng.normal(size=(30, 3)), rng.integers(0, 3, 30)
    X = rng.normal(size=(60, 4))
    A = np.column_stack([np.zeros(3), np.ones(3)])
    return [
        ("ts_complex_X", lambda: TemperatureScaling().fit(L + 1j, y), ValueError,
         "^X: Complex data not supported$"),
        ("ts_labels_string", lambda: TemperatureScaling(labels="abc").fit(L, y), TypeError,
         "^labels must be"),
        ("dts_y_none", lambda: DistributionTemperatureScaling().fit(Normal(np.zeros(3), 1.0), None),
         ValueError, "target y is None"),
        ("dts_score_y_none", lambda: DistributionTemperatureScaling().fit(A, np.arange(3.0)).score(
            A, None), ValueError, "target y is None"),
        ("rr_y_strings", lambda: RecalibratedRegressor(cv=3).fit(X, ["a"] * 60), ValueError,
         "^y must contain numbers; got strings such as .a."),
        ("rr_y_length", lambda: RecalibratedRegressor(cv=3).fit(X, np.zeros(59)), ValueError,
         "^y has 59 entries but there are 60 samples"),
    ]


@pytest.mark.parametrize("case", _sweep_cases(), ids=lambda c: c[0])
def test_invalid_input_messages(case):
    _, call, exc, match = case
    with pytest.raises(exc, match=match) as info:
        call()
    assert "\n" not in str(info.value)


def test_skce_objective_with_sample_weight():
    """The SKCE objective is weighted: unit weights change nothing, and zero weights equal
    dropping the rows (both the weighted NLL start and the weighted U-statistic have that
    property), for classifiers and for predictive distributions."""
    from skcalib.distributions import Normal

    L, y = _logits(n=120, C=3, seed=4)
    keep = np.arange(120) % 4 != 0
    w = keep.astype(float)
    # fixed length scales: the median heuristic is resolved on all rows, unweighted
    from skcalib.kernels import GaussianKernel, WassersteinKernel, tensor

    ts = dict(objective="skce", kernel=GaussianKernel(0.5))
    plain = TemperatureScaling(**ts).fit(L, y)
    unit = TemperatureScaling(**ts).fit(L, y, sample_weight=np.ones(120))
    assert_allclose(unit.temperature_, plain.temperature_, rtol=1e-10)
    zero = TemperatureScaling(**ts).fit(L, y, sample_weight=w)
    dropped = TemperatureScaling(**ts).fit(L[keep], y[keep])
    assert_allclose(zero.temperature_, dropped.temperature_, rtol=1e-6)
    assert abs(zero.temperature_ - plain.temperature_) > 1e-3  # the weights did matter

    rng = np.random.default_rng(5)
    mu = rng.normal(size=120)
    yr = mu + 2.0 * rng.normal(size=120)
    dist = Normal(mu, np.ones(120))
    kw = dict(objective="skce", random_state=0,
              kernel=tensor(WassersteinKernel(1.0), GaussianKernel(1.0)))
    zero = DistributionTemperatureScaling(**kw).fit(dist, yr, sample_weight=w)
    dropped = DistributionTemperatureScaling(**kw).fit(dist[keep], yr[keep])
    assert_allclose(zero.temperature_, dropped.temperature_, rtol=1e-6)
