"""PlattScaling and BetaCalibration (skcalib/recalibration/_binary_maps.py)."""

import pickle
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import expit, logsumexp, softmax
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.exceptions import ConvergenceWarning
from sklearn.frozen import FrozenEstimator

from skcalib.recalibration import BetaCalibration, PlattScaling
from skcalib.recalibration._binary_maps import log_odds, logistic_newton

# ---------------------------------------------------------------------------------------------
# scikit-learn's generic checks (the expected failures and their reasons are in
# skcalib/_estimator_checks.py; their properties are re-tested in
# test_sklearn_properties_on_scores)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
# scikit-learn's estimator checks of this class run with the whole family in
# tests/recalibration/test_family.py (one place, not twice).


def _multiclass(n=600, C=4, seed=0, scale=3.0, T=2.0):
    rng = np.random.default_rng(seed)
    L = scale * rng.normal(size=(n, C))
    P = softmax(L / T, axis=1)
    y = (rng.random((n, 1)) > P.cumsum(axis=1)).sum(axis=1)
    return L, np.minimum(y, C - 1)


@pytest.mark.parametrize("Est", [PlattScaling, BetaCalibration])
def test_sklearn_properties_on_scores(Est):
    L, y = _multiclass()
    labels = np.array(["a", "b", "c", "d"])[y]
    L0, y0 = L.copy(), labels.copy()
    est = Est()
    assert est.fit(L, labels) is est
    assert_array_equal(L, L0)
    assert_array_equal(labels, y0)
    assert est.get_params() == Est().get_params()
    assert est.n_features_in_ == 4
    P = est.predict_proba(L)
    assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert_allclose(clone(est).fit(L, labels).predict_proba(L), P, rtol=0, atol=0)
    assert_allclose(pickle.loads(pickle.dumps(est)).predict_proba(L), P)
    assert_allclose(est.predict_proba(np.asfortranarray(L)), P)
    perm = np.random.default_rng(1).permutation(len(L))
    assert_allclose(est.predict_proba(L[perm]), P[perm], rtol=1e-12)
    assert_allclose(est.predict_proba(L[:7]), P[:7])
    assert_allclose(est.transform(L.tolist()), P)
    assert_array_equal(est.predict(L), est.classes_[P.argmax(axis=1)])
    assert_allclose(est.predict_log_proba(L), np.log(P))
    # integer weights are repetitions
    w = np.random.default_rng(2).integers(0, 3, size=len(L))
    rep = Est().fit(np.repeat(L, w, axis=0), np.repeat(labels, w))
    wfit = Est().fit(L, labels, sample_weight=w.tolist())
    assert_allclose(wfit.predict_proba(L), rep.predict_proba(L), rtol=1e-8, atol=1e-12)
    with pytest.raises(ValueError, match="X has 3 column"):
        est.predict_proba(L[:, :3])
    with pytest.raises(Exception, match="not fitted"):
        Est().predict(L)


def test_invalid_parameters_name_the_argument():
    L, y = _multiclass()
    with pytest.raises((TypeError, ValueError), match="target_smoothing"):
        PlattScaling(target_smoothing="yes").fit(L, y)
    with pytest.raises(ValueError, match="multiclass"):
        PlattScaling(multiclass="multinomial").fit(L, y)
    with pytest.raises(ValueError, match="parameters"):
        BetaCalibration(parameters="abc").fit(L, y)
    with pytest.raises(ValueError, match="eps"):
        BetaCalibration(eps=0.0).fit(L, y)


# ---------------------------------------------------------------------------------------------
# the solver and the log-odds


def _nll_grad(X, t, w, theta):
    p = expit(X @ theta)
    return X.T @ (w * (p - t))


@pytest.mark.parametrize("smooth", [False, True])
def test_platt_gradient_is_zero_at_the_optimum(smooth):
    rng = np.random.default_rng(3)
    z = rng.normal(scale=2.0, size=2000)
    y = (rng.random(2000) < expit(0.7 * z - 0.3)).astype(int)
    w = rng.random(2000)
    ps = PlattScaling(input="logits", target_smoothing=smooth).fit(z, y, sample_weight=w)
    y1 = y == 1
    if smooth:
        npos, nneg = w[y1].sum(), w[~y1].sum()
        t = np.where(y1, (npos + 1) / (npos + 2), 1 / (nneg + 2))
    else:
        t = y1.astype(float)
    X = np.column_stack([z, np.ones_like(z)])
    g = _nll_grad(X, t, w, np.array([ps.coef_[0], ps.intercept_[0]]))
    assert np.max(np.abs(g)) < 1e-10 * w.sum()
    # and it is the minimum: the NLL rises in every direction
    theta = np.array([ps.coef_[0], ps.intercept_[0]])

    def nll(th):
        eta = X @ th
        return w @ (np.logaddexp(0, eta) - t * eta)

    for d in ([1e-4, 0], [0, 1e-4], [-1e-4, 1e-4]):
        assert nll(theta + d) > nll(theta) and nll(theta - np.array(d)) > nll(theta)


def test_platt_closed_form_on_two_score_values():
    # with two distinct scores the MLE reproduces the empirical frequency at each exactly
    z = np.repeat([-1.0, 2.0], [40, 60])
    y = np.concatenate([np.arange(40) < 10, np.arange(60) < 45]).astype(int)  # 1/4 and 3/4
    ps = PlattScaling(input="logits").fit(z, y)
    assert_allclose(ps.predict_proba(np.array([-1.0, 2.0]))[:, 1], [0.25, 0.75], rtol=1e-12)
    # slope and intercept from logit(1/4) = -a + b, logit(3/4) = 2a + b
    a = 2 * np.log(3) / 3
    assert_allclose([ps.coef_[0], ps.intercept_[0]], [a, a - np.log(3)], rtol=1e-12)


def test_beta_closed_form_on_three_score_values():
    # three parameters fit the frequencies at three distinct scores exactly
    s = np.repeat([0.1, 0.5, 0.8], 100)
    freq = np.array([0.05, 0.3, 0.9])
    y = np.concatenate([np.arange(100) < 100 * f for f in freq]).astype(int)
    bc = BetaCalibration(input="proba").fit(s, y)
    assert bc.a_[0] > 0 and bc.b_[0] > 0
    assert_allclose(bc.predict_proba(np.array([0.1, 0.5, 0.8]))[:, 1], freq, rtol=1e-10)
    # the midpoint: the map is 1/2 there
    assert_allclose(bc.predict_proba(bc.m_)[:, 1], 0.5, rtol=1e-10)


def test_log_odds_of_logits_and_probabilities_agree():
    L, _ = _multiclass(C=5)
    L[0] = [50.0, -50.0, 0.0, 1.0, 2.0]        # a dominant class: no cancellation
    P = softmax(L, axis=1)
    Z = log_odds(L, L, "logits", 1e-12)
    # brute force: l_c - logsumexp of the other logits, class by class
    brute = np.column_stack([L[:, c] - logsumexp(np.delete(L, c, axis=1), axis=1)
                             for c in range(5)])
    assert_allclose(Z, brute, rtol=1e-12, atol=1e-12)
    # the dominant class's log-odds is exact without forming 1 - p (which rounds to 0)
    assert Z[0, 0] > 40
    ok = (P > 1e-10) & (P < 1 - 1e-10)
    assert_allclose(log_odds(P, np.log(P), "proba", 1e-12)[ok], brute[ok], rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("Est", [PlattScaling, BetaCalibration])
def test_binary_input_forms_give_the_same_map(Est):
    rng = np.random.default_rng(4)
    z = rng.normal(scale=2.0, size=500)
    y = (rng.random(500) < expit(0.5 * z)).astype(int)
    p = expit(z)
    ref = Est(input="logits").fit(z, y).predict_proba(z)
    assert_allclose(Est(input="proba").fit(p, y).predict_proba(p), ref, rtol=1e-7)
    assert_allclose(Est().fit(np.column_stack([-z / 2, z / 2]), y)
                    .predict_proba(np.column_stack([-z / 2, z / 2])), ref, rtol=1e-9)
    P2 = np.column_stack([1 - p, p])
    assert_allclose(Est().fit(P2, y).predict_proba(P2), ref, rtol=1e-7)


# ---------------------------------------------------------------------------------------------
# scikit-learn's sigmoid calibration


class _Scores(ClassifierMixin, BaseEstimator):
    """A 'classifier' whose decision function is its first feature."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def decision_function(self, X):
        return np.asarray(X)[:, 0]

    def predict(self, X):
        return self.classes_[(self.decision_function(X) > 0).astype(int)]


# the FrozenEstimator ignores sample_weight, which scikit-learn points out
@pytest.mark.filterwarnings("ignore:Since FrozenEstimator:UserWarning")
@pytest.mark.parametrize("weighted", [False, True])
def test_platt_smoothed_equals_sklearn_sigmoid(weighted):
    rng = np.random.default_rng(5)
    z = rng.normal(scale=4.0, size=3000)
    y = (rng.random(3000) < expit(0.4 * z + 0.5)).astype(int)
    w = rng.random(3000) * 3 if weighted else None
    X = z[:, None]
    cal = CalibratedClassifierCV(FrozenEstimator(_Scores().fit(X, y)), method="sigmoid")
    cal.fit(X, y, sample_weight=w)
    ours = PlattScaling(input="logits", target_smoothing=True).fit(z, y, sample_weight=w)
    assert_allclose(ours.predict_proba(z), cal.predict_proba(X), rtol=1e-5, atol=1e-7)
    # without smoothing the fit differs (scikit-learn always uses Platt's targets)
    plain = PlattScaling(input="logits").fit(z, y, sample_weight=w)
    assert np.max(np.abs(plain.predict_proba(z) - cal.predict_proba(X))) > 1e-6


# ---------------------------------------------------------------------------------------------
# betacal (Kull, Silva Filho and Flach's package, version 1.1.0 with scikit-learn 1.9.1):
# map_ = [a, b, m] and predict() at S_NEW, on the inputs of _beta_data / _beta_data_negative.


S_NEW = np.array([0.01, 0.2, 0.5, 0.9])
BETACAL = {
    ("abm", False): ([1.850369340216188, 0.8488174838800924, 0.6294916775451814],
                     [2.036137576599455e-04, 5.869052460858976e-02, 3.361340748115703e-01,
                      8.548516182005141e-01]),
    ("abm", True): ([1.7824389063176798, 0.8655878756684712, 0.6248898334398693],
                    [2.7173708873390079e-04, 6.3790015669735328e-02, 3.4385056154155974e-01,
                     8.5749305531739761e-01]),
    ("ab", False): ([2.6351245288403233, 0.1539698400054564, 0.5],
                    [3.001317504611303e-05, 7.678119108750794e-02, 5.0e-01,
                     8.577462599025693e-01]),
    ("ab", True): ([2.5423709194261264, 0.18988778613207608, 0.5],
                   [4.2095598595508735e-05, 8.1750376524114793e-02, 5.0e-01,
                    8.5814702707667689e-01]),
    ("am", False): ([1.2618179943580032, 1.2618179943580032, 0.6510649500700225],
                    [0.00137870553416791, 0.0733538464022502, 0.3128076725259103,
                     0.8792632558703006]),
    ("am", True): ([1.2492697063138436, 1.2492697063138436, 0.6449533664480773],
                   [0.00152190529464868, 0.07744487731224656, 0.3217534806268587,
                    0.8807131569973256]),
}
BETACAL_NEGATIVE_A = ([0.0, 0.9891832243720501, 0.29580950088005037],
                      [0.4165452630853653, 0.4684959121965927, 0.5838834964689787,
                       0.8733340891660484])


def _beta_data(seed=0, n=300):
    rng = np.random.default_rng(seed)
    s = rng.random(n) ** 1.5
    truth = 1 / (1 + np.exp(-(1.7 * np.log(s) - 0.6 * np.log1p(-s) + 0.4)))
    y = (rng.random(n) < truth).astype(int)
    w = 0.5 + rng.random(n)
    return s, y, w


def _beta_data_negative(seed=1, n=300):
    rng = np.random.default_rng(seed)
    s = rng.random(n)
    truth = 1 / (1 + np.exp(-(-0.3 * np.log(s) - 1.5 * np.log1p(-s) - 1.0)))
    y = (rng.random(n) < truth).astype(int)
    return s, y


@pytest.mark.parametrize("parameters,weighted", list(BETACAL))
def test_beta_matches_betacal(parameters, weighted):
    s, y, w = _beta_data()
    bc = BetaCalibration(input="proba", parameters=parameters)
    bc.fit(s, y, sample_weight=w if weighted else None)
    (a, b, m), proba = BETACAL[parameters, weighted]
    # betacal's LogisticRegression(C=99999999999, lbfgs with tol=1e-4) stops short of the optimum:
    # its parameters agree to about 1e-3 ...
    assert_allclose([bc.a_[0], bc.b_[0], bc.m_[0]], [a, b, m], rtol=0, atol=1e-3)
    assert_allclose(bc.predict_proba(S_NEW)[:, 1], proba, rtol=3e-3)
    # ... and its NLL is not below the exact optimum, which is within 1e-6 of it
    wt = w if weighted else np.ones_like(s)

    def nll(a, b, c):
        eta = a * np.log(s) - b * np.log1p(-s) + c
        return wt @ (np.logaddexp(0, eta) - y * eta) / wt.sum()

    theirs = nll(a, b, b * np.log1p(-m) - a * np.log(m))
    ours = nll(bc.a_[0], bc.b_[0], bc.c_[0])
    assert ours <= theirs + 1e-15 and theirs - ours < 1e-6


def test_beta_negative_coefficient_is_dropped_as_in_betacal():
    s, y = _beta_data_negative()
    bc = BetaCalibration(input="proba").fit(s, y)
    assert bc.a_[0] == 0.0
    abm, proba = BETACAL_NEGATIVE_A
    assert_allclose([bc.b_[0], bc.m_[0]], abm[1:], rtol=2e-4)
    assert_allclose(bc.predict_proba(S_NEW)[:, 1], proba, rtol=2e-4)
    # the unconstrained optimum has a < 0 indeed, and the refit is the optimum with a = 0
    f1, f2 = np.log(s), -np.log1p(-s)
    theta, ok, _ = logistic_newton(np.column_stack([f1, f2, np.ones_like(s)]), y * 1.0,
                                   np.ones_like(s))
    assert ok and theta[0] < 0
    X = np.column_stack([f2, np.ones_like(s)])
    g = _nll_grad(X, y, np.ones_like(s), np.array([bc.b_[0], bc.c_[0]]))
    assert np.max(np.abs(g)) < 1e-9 * len(s)


def test_beta_gradient_is_zero_at_the_optimum():
    s, y, w = _beta_data(seed=7, n=2000)
    bc = BetaCalibration(input="proba").fit(s, y, sample_weight=w)
    assert bc.a_[0] > 0 and bc.b_[0] > 0
    X = np.column_stack([np.log(s), -np.log1p(-s), np.ones_like(s)])
    g = _nll_grad(X, y, w, np.array([bc.a_[0], bc.b_[0], bc.c_[0]]))
    assert np.max(np.abs(g)) < 1e-10 * w.sum()


def test_beta_am_is_platt_on_the_logit():
    s, y, _ = _beta_data()
    bc = BetaCalibration(input="proba", parameters="am").fit(s, y)
    ps = PlattScaling(input="proba").fit(s, y)
    assert_allclose(bc.predict_proba(S_NEW), ps.predict_proba(S_NEW), rtol=1e-10)
    assert_allclose(bc.a_, ps.coef_, rtol=1e-10)


# ---------------------------------------------------------------------------------------------
# separated and tiny fitting sets


def test_platt_separated_data_use_smoothed_targets_with_a_warning():
    z = np.array([-3.0, -2.0, -1.0, 1.0, 2.0, 3.0])
    y = np.array([0, 0, 0, 1, 1, 1])
    with pytest.warns(ConvergenceWarning, match="separated"):
        ps = PlattScaling(input="logits").fit(z, y)
    ref = PlattScaling(input="logits", target_smoothing=True).fit(z, y)
    assert_allclose(ps.predict_proba(z), ref.predict_proba(z), rtol=1e-12)
    assert np.all(np.isfinite(ps.coef_)) and 0 < ps.coef_[0] < 10
    # Platt's targets: 4/5 and 1/5 with three samples per class; the fit stays inside them
    p = ps.predict_proba(z)[:, 1]
    assert p.max() < 0.95 and p.min() > 0.05
    # touching classes (quasi-separation) and a single class are also detected
    with pytest.warns(ConvergenceWarning):
        PlattScaling(input="logits").fit(np.array([-1.0, 0.0, 0.0, 1.0]), [0, 0, 1, 1])
    with pytest.warns(ConvergenceWarning):
        PlattScaling(input="logits", labels=[0, 1]).fit(np.array([-1.0, 0.0, 1.0]), [1, 1, 1])
    # overlapping classes: no warning, the plain MLE
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        PlattScaling(input="logits").fit(np.array([-1.0, 0.0, 0.5, 1.0]), [0, 1, 0, 1])


def test_beta_separated_data_use_smoothed_targets_with_a_warning():
    s = np.array([0.1, 0.2, 0.3, 0.6, 0.7, 0.9])
    y = np.array([0, 0, 0, 1, 1, 1])
    with pytest.warns(ConvergenceWarning, match="separated"):
        bc = BetaCalibration(input="proba").fit(s, y)
    p = bc.predict_proba(s)[:, 1]
    assert np.all(np.isfinite(p)) and p.max() < 0.95 and p.min() > 0.05
    assert np.all(np.diff(p) > 0)
    # separated in the two features but not by a threshold on s: positives in the middle
    s2 = np.array([0.01, 0.02, 0.4, 0.5, 0.6, 0.98, 0.99])
    y2 = np.array([0, 0, 1, 1, 1, 0, 0])
    with pytest.warns(ConvergenceWarning):
        bc2 = BetaCalibration(input="proba").fit(s2, y2)
    assert np.all(np.isfinite(bc2.predict_proba(s2)))


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("Est", [PlattScaling, BetaCalibration])
def test_tiny_fitting_sets(Est):
    P = Est(input="logits").fit(np.array([0.3, -0.2]), [1, 0]).predict_proba(np.array([0.0]))
    assert np.all(np.isfinite(P)) and 0 < P[0, 1] < 1
    P = Est(input="logits").fit(np.array([0.5, 0.5, 0.5]), [1, 0, 1]).predict_proba([0.5])
    assert_allclose(P[0, 1], 2 / 3, rtol=1e-8)  # constant scores: the base rate


# ---------------------------------------------------------------------------------------------
# multiclass one-vs-rest


@pytest.mark.parametrize("Est", [PlattScaling, BetaCalibration])
def test_multiclass_is_one_vs_rest_on_log_odds_renormalised(Est):
    L, y = _multiclass(C=4, n=800)
    est = Est().fit(L, y)
    Z = log_odds(L, L, "logits", 1e-12)
    Q = np.column_stack([Est(input="logits").fit(Z[:, c], (y == c).astype(int))
                         .predict_proba(Z[:, c])[:, 1] for c in range(4)])
    assert_allclose(est.predict_proba(L), Q / Q.sum(axis=1, keepdims=True), rtol=1e-9)
    # probabilities of the same model give the same map
    P = softmax(L, axis=1)
    assert_allclose(Est().fit(P, y).predict_proba(P), est.predict_proba(L), rtol=1e-6)
    assert est.decision_function(L).shape == (800, 4)


def test_multiclass_absent_class_with_labels():
    L, y = _multiclass(C=3)
    y = np.where(y == 2, 0, y)
    with pytest.warns(ConvergenceWarning, match=r"\[2\]"):
        ps = PlattScaling(labels=[0, 1, 2]).fit(L, y)
    P = ps.predict_proba(L)
    assert P.shape == (len(L), 3) and np.all(P[:, 2] < 0.05)


def test_all_one_vs_rest_probabilities_underflowing_are_normalised_in_log_space():
    L, y = _multiclass(C=4)
    ps = PlattScaling().fit(L, y)
    ps.coef_ = np.zeros(4)
    ps.intercept_ = np.array([-800.0, -801.0, -802.0, -803.0])  # sigmoid underflows to 0
    P = ps.predict_proba(L[:3])
    assert_allclose(P, np.tile(softmax(-np.arange(4.0)), (3, 1)), rtol=1e-12)


@pytest.mark.parametrize("Est", [PlattScaling, BetaCalibration])
def test_huge_weights_give_the_unweighted_fit(Est):
    L, y = _multiclass(C=3)
    ref = Est().fit(L, y).predict_proba(L)
    assert_allclose(Est().fit(L, y, sample_weight=np.full(len(y), 1e308)).predict_proba(L), ref,
                    rtol=1e-9)
    # Platt's targets with an infinite weighted count tend to 1 and 0 (no NaN)
    ps = PlattScaling(target_smoothing=True).fit(L, y, sample_weight=np.full(len(y), 1e308))
    assert_allclose(ps.predict_proba(L), PlattScaling().fit(L, y).predict_proba(L), rtol=1e-9)


@pytest.mark.parametrize("name,Est", [("platt", PlattScaling), ("beta", BetaCalibration)])
def test_by_name_in_recalibrated_classifier(name, Est):
    from sklearn.datasets import make_classification
    from sklearn.linear_model import LogisticRegression

    from skcalib.recalibration import RecalibratedClassifier

    X, y = make_classification(n_samples=400, n_classes=3, n_informative=4, random_state=0)
    by_name = RecalibratedClassifier(LogisticRegression(), recalibrator=name, cv=3).fit(X, y)
    by_instance = RecalibratedClassifier(LogisticRegression(), recalibrator=Est(), cv=3).fit(X, y)
    assert all(isinstance(r, Est) for r in by_name.recalibrators_)
    P = by_name.predict_proba(X)
    assert_allclose(P, by_instance.predict_proba(X))
    assert_allclose(P.sum(axis=1), 1.0)
