"""VectorScaling, MatrixScaling and DirichletCalibration: optimality, references, edge cases."""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import log_softmax, softmax
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from skcalib.recalibration import DirichletCalibration, MatrixScaling, VectorScaling

CLASSES = [VectorScaling, MatrixScaling, DirichletCalibration]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
# scikit-learn's estimator checks of this class run with the whole family in
# tests/recalibration/test_family.py (one place, not twice).


def _data(n=600, C=3, seed=0):
    """Miscalibrated logits: labels from softmax(L A^T + c) with a non-diagonal A."""
    rng = np.random.default_rng(seed)
    L = 2.0 * rng.normal(size=(n, C))
    A = 0.6 * np.eye(C) + 0.2 * rng.normal(size=(C, C))
    P = softmax(L @ A.T + 0.4 * rng.normal(size=C), axis=1)
    y = (rng.random((n, 1)) > P.cumsum(axis=1)).sum(axis=1).clip(max=C - 1)
    return L, y


def _features(est, L):
    return log_softmax(L, axis=1) if isinstance(est, DirichletCalibration) else L


def _objective_grad(est, X, y, w):
    """Independent gradient of the documented objective at the fitted parameters."""
    n, C = X.shape
    w = np.ones(n) if w is None else np.asarray(w, float)
    w = w / w.sum()
    W = np.diag(est.coef_) if est.coef_.ndim == 1 else est.coef_
    b = est.intercept_
    P = softmax(X @ W.T + b, axis=1)
    R = (P - np.eye(C)[y]) * w[:, None]   # d(mean NLL)/d(logits)
    gW, gb = R.T @ X, R.sum(axis=0)
    lam = est.reg_lambda
    mu = lam if est.reg_mu is None else est.reg_mu
    if est.regularization == "l2":
        gW = gW + 2 * lam * W
        gb = gb + 2 * lam * b
    else:
        off = ~np.eye(C, dtype=bool)
        gW = gW + np.where(off, 2 * lam * W / (C * (C - 1)), 0.0)
        gb = gb + 2 * mu * b / C
    if est.coef_.ndim == 1:
        gW = np.diag(gW)
    # and at the identity map (the starting point), for the relative criterion
    P0 = softmax(X, axis=1)
    R0 = (P0 - np.eye(C)[y]) * w[:, None]
    g0 = np.concatenate([np.ravel(np.diag(R0.T @ X) if est.coef_.ndim == 1 else R0.T @ X),
                         R0.sum(axis=0)])
    return np.concatenate([np.ravel(gW), gb]), g0


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("params", [
    {}, {"reg_lambda": 0.05}, {"reg_lambda": 0.05, "reg_mu": 0.5},
    {"regularization": "l2", "reg_lambda": 0.01}, {"regularization": "l2", "reg_lambda": 10.0}])
@pytest.mark.parametrize("weighted", [False, True])
def test_optimum_by_gradient(cls, params, weighted):
    """The fitted parameters zero the gradient of the documented objective (1e-6 relative)."""
    L, y = _data(C=4, seed=1)
    w = np.random.default_rng(2).random(len(y)) * 3 if weighted else None
    est = cls(**params).fit(L, y, sample_weight=w)
    g, g0 = _objective_grad(est, _features(est, L), y, w)
    assert np.linalg.norm(g) <= 1e-6 * np.linalg.norm(g0)
    assert est.n_iter_ >= 1


def test_dirichlet_is_logistic_regression_on_log_probabilities():
    """Unregularised Dirichlet calibration = multinomial LR on log P (scikit-learn, C=1e12)."""
    L, y = _data(n=800, C=3, seed=3)
    P = softmax(L, axis=1)
    dc = DirichletCalibration(input="proba").fit(P, y)
    lr = LogisticRegression(C=1e12, tol=1e-12, max_iter=100_000).fit(np.log(P), y)
    assert_allclose(dc.predict_proba(P), lr.predict_proba(np.log(P)), atol=1e-5)
    # coefficients agree up to the softmax's shift invariance (scikit-learn's are centred)
    Wc = dc.coef_ - dc.coef_.mean(axis=0)
    bc = dc.intercept_ - dc.intercept_.mean()
    assert_allclose(Wc, lr.coef_, atol=1e-4)
    assert_allclose(bc, lr.intercept_, atol=1e-4)
    # the same map from logits (log-softmax features) and MatrixScaling on probabilities
    assert_allclose(DirichletCalibration(input="logits").fit(L, y).predict_proba(L),
                    dc.predict_proba(P), atol=1e-7)
    assert_allclose(MatrixScaling(input="proba").fit(P, y).predict_proba(P),
                    dc.predict_proba(P), atol=1e-7)


def test_matrix_scaling_is_logistic_regression_on_logits():
    L, y = _data(n=800, C=4, seed=4)
    ms = MatrixScaling().fit(L, y)
    lr = LogisticRegression(C=1e12, tol=1e-12, max_iter=100_000).fit(L, y)
    assert_allclose(ms.predict_proba(L), lr.predict_proba(L), atol=1e-5)
    assert_allclose(ms.coef_ - ms.coef_.mean(axis=0), lr.coef_, atol=1e-4)


def test_binary_vector_scaling_is_platt_scaling():
    """1-D logits z: softmax((0, a1 z) + b) = sigmoid(a1 z + b1 - b0), logistic regression on z."""
    rng = np.random.default_rng(5)
    z = 3 * rng.normal(size=500)
    y = (rng.random(500) < 1 / (1 + np.exp(-(0.5 * z - 0.3)))).astype(int)
    vs = VectorScaling().fit(z, y)
    lr = LogisticRegression(C=1e12, tol=1e-12).fit(z[:, None], y)
    assert_allclose(vs.coef_[1], lr.coef_[0, 0], rtol=1e-6)
    assert_allclose(vs.intercept_[1] - vs.intercept_[0], lr.intercept_[0], atol=1e-6)
    assert_allclose(vs.predict_proba(z), lr.predict_proba(z[:, None]), atol=1e-8)
    assert_allclose(vs.decision_function(z), lr.decision_function(z[:, None]), atol=1e-6)


def test_strong_odir_reduces_dirichlet_to_vector_scaling_of_log_probabilities():
    """With huge ODIR weights the off-diagonal entries and intercepts vanish."""
    L, y = _data(n=700, C=3, seed=6)
    logP = log_softmax(L, axis=1)
    dc = DirichletCalibration(reg_lambda=1e9, reg_mu=1e9).fit(L, y)
    vs = VectorScaling(input="logits", reg_mu=1e9).fit(logP, y)
    assert np.abs(dc.coef_ - np.diag(np.diag(dc.coef_))).max() < 1e-6
    assert np.abs(dc.intercept_).max() < 1e-6
    assert_allclose(np.diag(dc.coef_), vs.coef_, rtol=1e-5)
    # L2 with a huge weight shrinks everything to 0: uniform probabilities
    l2 = MatrixScaling(regularization="l2", reg_lambda=1e9).fit(L, y)
    assert_allclose(l2.predict_proba(L), 1 / 3, atol=1e-6)


def test_identity_when_calibrated_and_regularised_towards_it():
    """Calibrated probabilities (labels drawn from P) give a map near the identity."""
    rng = np.random.default_rng(7)
    P = rng.dirichlet([0.5] * 3, size=20_000)
    y = (rng.random((20_000, 1)) > P.cumsum(axis=1)).sum(axis=1).clip(max=2)
    dc = DirichletCalibration().fit(P, y)
    assert np.abs(dc.coef_ - dc.coef_.mean(axis=0) - (np.eye(3) - 1 / 3)).max() < 0.05


@pytest.mark.parametrize("cls", CLASSES)
def test_integer_weights_are_repetitions(cls):
    L, y = _data(n=200, C=3, seed=8)
    w = np.random.default_rng(9).integers(0, 4, size=200)
    a = cls(reg_lambda=0.01).fit(L, y, sample_weight=w)
    b = cls(reg_lambda=0.01).fit(np.repeat(L, w, axis=0), np.repeat(y, w))
    assert_allclose(a.predict_proba(L), b.predict_proba(L), atol=1e-8)
    # scale of the weights does not matter
    c = cls(reg_lambda=0.01).fit(L, y, sample_weight=w * 1e300)
    assert_allclose(a.predict_proba(L), c.predict_proba(L), atol=1e-10)


@pytest.mark.parametrize("cls", CLASSES)
def test_properties(cls):
    L, y = _data(n=300, C=3, seed=10)
    labels = np.array(["a", "b", "c"])[y]
    L0, y0 = L.copy(), labels.copy()
    est = cls(reg_lambda=0.01).fit(L, labels)
    assert_array_equal(L, L0)
    assert_array_equal(labels, y0)
    assert_array_equal(est.classes_, ["a", "b", "c"])
    P = est.predict_proba(L)
    assert_allclose(P.sum(axis=1), 1.0)
    assert_allclose(np.exp(est.predict_log_proba(L)), P, rtol=1e-12)
    assert_array_equal(est.predict(L), est.classes_[P.argmax(axis=1)])
    assert_allclose(clone(est).fit(L, labels).predict_proba(L), P, rtol=0, atol=0)
    perm = np.random.default_rng(1).permutation(len(L))
    assert_allclose(est.predict_proba(L[perm]), P[perm], atol=1e-14)
    assert_allclose(est.transform(L), P)
    assert_allclose(softmax(est.decision_function(L), axis=1), P, atol=1e-14)
    # an absent class via labels
    keep = labels != "c"
    est2 = cls(reg_lambda=0.01, labels=["a", "b", "c"]).fit(L[keep], labels[keep])
    assert est2.predict_proba(L).shape == (len(L), 3)
    with pytest.raises(ValueError, match="column"):
        est.predict_proba(L[:, :2])


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("bad, exc, match", [
    ({"regularization": "l1"}, ValueError, "regularization"),
    ({"reg_lambda": -1.0}, ValueError, "reg_lambda"),
    ({"reg_lambda": "1"}, TypeError, "reg_lambda"),
    ({"reg_mu": -0.1}, ValueError, "reg_mu"),
    ({"max_iter": 0}, ValueError, "max_iter"),
    ({"tol": 0.0}, ValueError, "tol"),
    ({"input": "odds"}, ValueError, "input"),
])
def test_bad_params(cls, bad, exc, match):
    L, y = _data(n=50)
    with pytest.raises(exc, match=match):
        cls(**bad).fit(L, y)


@pytest.mark.parametrize("cls", CLASSES)
def test_separated_data(cls):
    """Separated fitting data: unregularised warns; L2 is finite, unique and silent."""
    rng = np.random.default_rng(11)
    y = np.repeat([0, 1, 2], 10)
    L = rng.normal(size=(30, 3))
    L[np.arange(30), y] += 6.0   # every label has by far the largest score
    with pytest.warns(ConvergenceWarning, match="separated"):
        est = cls().fit(L, y)
    assert np.all(np.isfinite(est.coef_)) and np.all(np.isfinite(est.intercept_))
    assert np.all(np.isfinite(est.predict_log_proba(L)))
    with pytest.warns(ConvergenceWarning, match="separated"):   # ODIR leaves the diagonal free
        cls(reg_lambda=1.0).fit(L, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        l2 = cls(regularization="l2", reg_lambda=1e-2).fit(L, y)
    g, g0 = _objective_grad(l2, _features(l2, L), y, None)
    assert np.linalg.norm(g) <= 1e-6 * np.linalg.norm(g0)
    # tiny: two samples, binary 1-D scores
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tiny = cls(regularization="l2", reg_lambda=1e-2).fit([0.2, 0.9], [0, 1])
    assert np.all(np.isfinite(tiny.predict_proba([0.2, 0.9])))
    with pytest.warns(ConvergenceWarning, match="separated"):
        cls().fit([-1.0, 2.0], [0, 1])


def test_not_separated_data_fits_without_warning():
    L, y = _data(n=300, C=3, seed=12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for cls in CLASSES:
            cls().fit(L, y)


def test_can_change_the_argmax():
    """Unlike temperature scaling, a learnt bias can move the arg-max."""
    rng = np.random.default_rng(13)
    L = rng.normal(size=(2000, 3))
    y = np.zeros(2000, dtype=int)   # class 0 always wins
    y[:50] = 1
    y[50:100] = 2
    pred = VectorScaling(reg_lambda=0.0).fit(L, y).predict(L)
    assert np.mean(pred == 0) > 0.99 and np.mean(L.argmax(axis=1) == 0) < 0.5


@pytest.mark.parametrize("cls", CLASSES)
def test_large_n_warm_start_reaches_the_full_optimum(cls):
    """Above 4 x 8192 rows Newton starts from a subsample's optimum; the result is still the
    optimum on all rows."""
    L, y = _data(n=40_000, C=4, seed=14)
    w = np.random.default_rng(15).random(len(y))
    est = cls(reg_lambda=1e-3).fit(L, y, sample_weight=w)
    g, g0 = _objective_grad(est, _features(est, L), y, w)
    assert np.linalg.norm(g) <= 1e-6 * np.linalg.norm(g0)


@pytest.mark.parametrize("diagonal", [True, False])
def test_hessian_against_finite_differences(diagonal):
    """The solver's analytic Hessian and Hessian-vector products match the gradient's changes."""
    from skcalib.recalibration._linear_maps import _LinearProblem

    rng = np.random.default_rng(16)
    n, C = 60, 4
    X = rng.normal(size=(n, C))
    y = rng.integers(0, C, n)
    w = rng.random(n)
    k = C + C if diagonal else C * C + C
    pr = _LinearProblem(X, y, w / w.sum(), diagonal, rng.random(k))
    theta = rng.normal(size=k)
    H = pr.hessian(theta)
    e = 1e-6
    fd = np.column_stack([(pr.fun_grad(theta + e * u)[1] - pr.fun_grad(theta - e * u)[1]) / (2 * e)
                          for u in np.eye(k)])
    assert_allclose(H, fd, atol=1e-7)
    v = rng.normal(size=k)
    assert_allclose(pr.hessp(theta, v), H @ v, atol=1e-12)
    # and the gradient against finite differences of the objective
    gfd = np.array([(pr.fun_grad(theta + e * u)[0] - pr.fun_grad(theta - e * u)[0]) / (2 * e)
                    for u in np.eye(k)])
    assert_allclose(pr.fun_grad(theta)[1], gfd, atol=1e-7)


@pytest.mark.parametrize("cls", CLASSES)
def test_unconverged_fit_says_why(cls):
    """A fit stopped by max_iter warns; the message tells nearly separated data (the map grows
    ever more confident: regularise) from a fit that only needs more iterations."""
    rng = np.random.default_rng(11)
    y = np.repeat([0, 1, 2], 40)
    L = rng.normal(size=(120, 3))
    L[np.arange(120), y] += 20.0
    L[40] = L[0]          # same scores as sample 0 (label 0) with label 1: not fully separable
    with pytest.warns(ConvergenceWarning, match="nearly separated"):
        cls(max_iter=15).fit(L, y)
    with pytest.warns(ConvergenceWarning, match="increase max_iter"):
        cls(max_iter=2).fit(_data(n=300, C=3, seed=12)[0] / 1e3, _data(n=300, C=3, seed=12)[1])


@pytest.mark.parametrize("cls", CLASSES)
def test_tolerance_below_rounding_stops_at_the_rounding_floor(cls):
    """A relative tol that floating point cannot reach ends the fit where exact Newton steps stop
    shrinking the gradient: converged, silent, in a few iterations (not max_iter)."""
    L, y = _data(n=3000, C=4, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = cls(tol=1e-30).fit(L, y)
    assert est.n_iter_ < 40
    g, g0 = _objective_grad(est, _features(est, L), y, None)
    assert np.linalg.norm(g) <= 1e-9 * np.linalg.norm(g0)
