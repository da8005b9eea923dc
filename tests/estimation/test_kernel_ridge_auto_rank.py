"""``n_components="auto"`` of kernel ridge: a low rank chosen from the trace of the kernel matrix.

The rank is the smallest whose approximation drops at most ``_AUTO_TRACE_TOL`` of the trace:
Nystrom on the pivots of a greedy pivoted Cholesky factorisation, or the truncated exact
eigendecomposition when that needs more than half the training points. The default search of
:class:`CalibrationErrorCV` uses it; its estimates (plug-in and cross-fitted one-step) must agree
with the exact search's within 0.1 of the reported standard error.
"""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.model_selection import KFold

from skcalib.datasets import make_dirichlet_calibration
from skcalib.estimation import (CalibrationErrorCV, KernelRidgeCalibrationEstimator,
                                calibration_risk, cross_fit_calibration_error)
from skcalib.estimation._cv import default_candidates
from skcalib.estimation._kernel_ridge import _pivoted_cholesky


def _rbf(A, B, gamma):
    return np.exp(-gamma * ((A[:, None, :] - B[None, :, :]) ** 2).sum(axis=-1))


def test_pivoted_cholesky_meets_the_trace_tolerance():
    rng = np.random.default_rng(0)
    X = rng.dirichlet(np.ones(3), size=200)
    K = _rbf(X, X, 2.0)
    for tol in [1e-4, 1e-8]:
        piv = _pivoted_cholesky(K, tol, 100)
        assert piv is not None and len(set(piv)) == len(piv)
        Kt = K[:, piv] @ np.linalg.solve(K[np.ix_(piv, piv)], K[piv])
        resid = np.trace(K - Kt)
        assert resid <= tol * np.trace(K) * (1 + 1e-6)
        # one pivot fewer would not do: the rank is the greedy minimum
        short = piv[:-1]
        Ks = K[:, short] @ np.linalg.solve(K[np.ix_(short, short)], K[short])
        assert np.trace(K - Ks) > tol * np.trace(K)
    # a budget too small for the tolerance: None (the caller falls back to the exact route)
    assert _pivoted_cholesky(_rbf(X, X, 500.0), 1e-8, 20) is None


@pytest.mark.parametrize("mode", ["top_label", "classwise", "canonical"])
@pytest.mark.parametrize("method", ["kronecker", "two_step"])
@pytest.mark.parametrize("gamma", [0.5, 32.0])
def test_auto_rank_agrees_with_exact(mode, method, gamma):
    P, y = make_dirichlet_calibration(600, random_state=1)
    Ptr, ytr, Pte, yte = P[:300], y[:300], P[300:], y[300:]
    # the dropped eigenvalues (1e-8 of the trace) matter at ridges below them (the smallest of
    # the default Kronecker grid); at this one the functions agree to 1e-3
    kw = dict(alpha=1e-4, gamma=gamma, method=method, mode=mode)
    exact = KernelRidgeCalibrationEstimator(**kw).fit(Ptr, ytr)
    auto = KernelRidgeCalibrationEstimator(n_components="auto", **kw).fit(Ptr, ytr)
    assert auto.n_components_.shape == exact.n_components_.shape
    assert np.all(exact.n_components_ == 300)
    assert np.all(auto.n_components_ < 300)  # a real reduction (truncated or Nystrom)
    if mode != "canonical":  # scalar inputs: a handful of pivots
        assert np.all(auto.n_components_ <= 40)
        assert all(st.landmarks is not None for st in auto.problems_)
    t_e, t_a = exact.transform(Pte)[:, 0], auto.transform(Pte)[:, 0]
    assert_allclose(t_a, t_e, rtol=0, atol=1e-3 * np.abs(t_e).max())
    assert_allclose(calibration_risk(yte, Pte, auto), calibration_risk(yte, Pte, exact),
                    rtol=1e-3)
    # the debiased hook works on the low rank too
    for k, (Ba, Be) in enumerate(zip(auto._problem_inputs(Pte), exact._problem_inputs(Pte))):
        Ga, sqa = auto._residual_terms(k, Ba)
        Ge, sqe = exact._residual_terms(k, Be)
        assert_allclose(Ga, Ge, rtol=0, atol=1e-3 * np.abs(Ge).max())
        assert_allclose(sqa, sqe, rtol=0, atol=1e-3 * np.abs(sqe).max())
    # with_alpha keeps the reported rank
    assert np.array_equal(auto.with_alpha(1e-3).n_components_, auto.n_components_)


def test_auto_rank_param_checks_and_defaults():
    with pytest.raises((TypeError, ValueError), match="n_components"):
        KernelRidgeCalibrationEstimator(n_components="full").fit(np.eye(3), [0, 1, 2])
    for name, est, _ in default_candidates(400, "canonical"):
        if isinstance(est, KernelRidgeCalibrationEstimator):
            assert est.n_components == "auto"
    for name, est, _ in default_candidates(400, "canonical", grids="paper"):
        if isinstance(est, KernelRidgeCalibrationEstimator):
            assert est.n_components is None
    for name, est, _ in default_candidates(400, "canonical", n_components=50):
        if isinstance(est, KernelRidgeCalibrationEstimator):
            assert est.n_components == 50


def cross_fit_one_step(cv, P, y, seed):
    """The cross-fitted one-step estimate of ``cv``'s best kernel-ridge candidate (smallest mean
    held-out risk) on the tuning rows, each scored by the fold model not trained on it, and its
    standard error."""
    res = cv.cv_results_
    is_krr = np.isin(res["family"], ("kronecker", "two_step"))
    i = int(np.flatnonzero(is_krr)[np.argmin(res["mean_risk"][is_krr])])
    model = KernelRidgeCalibrationEstimator(
        method=res["family"][i], n_components="auto" if cv.n_components is None else
        cv.n_components, mode=cv.mode_, labels=cv.classes_, **res["params"][i])
    res = cross_fit_calibration_error(model, P[cv.tune_indices_], y[cv.tune_indices_],
                                      cv=KFold(cv.n_splits_, shuffle=True, random_state=seed))
    return res.estimate, res.standard_error


@pytest.mark.parametrize("mode,seed", [("top_label", 0), ("canonical", 0), ("canonical", 3)])
def test_default_search_auto_rank_agrees_with_exact_within_a_tenth_se(mode, seed):
    # reduced version of the benchmark's agreement lines (n = 2,000 there)
    P, y = make_dirichlet_calibration(500, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        auto = CalibrationErrorCV(mode=mode, random_state=seed).fit(P, y)
        exact = CalibrationErrorCV(mode=mode, random_state=seed, n_components=10 ** 6).fit(P, y)
    assert abs(auto.calibration_error_ - exact.calibration_error_) \
        <= 0.1 * exact.total_standard_error_
    assert np.array_equal(auto.cv_results_["rank_risk"].argsort()[:1],
                          exact.cv_results_["rank_risk"].argsort()[:1])
    a, e = cross_fit_one_step(auto, P, y, seed), cross_fit_one_step(exact, P, y, seed)
    assert abs(a[0] - e[0]) <= 0.1 * e[1]
    assert e[0] > 2 * e[1]  # a real (non-zero) estimate: the comparison can fail
    # the selected risk agrees closely (risks differ only at the ridges below the dropped
    # eigenvalues: the smallest Kronecker ridges, far from the selected one)
    assert_allclose(auto.cv_results_["mean_risk"].min(), exact.cv_results_["mean_risk"].min(),
                    rtol=1e-4)
