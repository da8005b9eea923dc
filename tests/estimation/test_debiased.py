"""The debiased estimates of the estimation functions (issue 24, items 1 and 4).

* with the true residual function plugged in, the one-step estimate is exactly unbiased: its
  conditional expectation given the predictions (a sum over the possible labels) is
  ``||g(q)||^2`` for every sample, and over seeds its mean is the population truth;
* cross-fitting never scores a sample with a model fitted on it (a fold-tracking estimation
  function), in :func:`cross_fit_calibration_error` and in :class:`CalibrationErrorCV`;
* the leave-own-pair-out squares of binning and KDE against brute force, the identity
  ``one_step = 2 product - U-plug-in``, and the error paths.
"""

import numpy as np
import pytest
from joblib import parallel_backend
from numpy.testing import assert_allclose

from skcalib.datasets import (BINARY_SQUARED_CALIBRATION_ERROR, DIRICHLET_CALIBRATION_ERRORS,
                              make_binary_squared_calibration, make_dirichlet_calibration)
from skcalib.estimation import (BinnedCalibrationEstimator, CalibrationErrorCV,
                                KDECalibrationEstimator, KernelRidgeCalibrationEstimator,
                                TemperatureCalibrationEstimator, ZeroCalibrationEstimator,
                                cross_fit_calibration_error)
from skcalib.estimation._base import _CalibrationEstimatorBase, problems_of


class _BinaryOracle(_CalibrationEstimatorBase):
    """``g_hat(c) = c - c^2``: the true residual of :func:`make_binary_squared_calibration`."""

    def __init__(self, *, mode="binary", labels=None):
        self.mode = mode
        self.labels = labels

    def _fit_problems(self, problems):
        self.problems_ = [None] * len(problems)

    def _residual_problem(self, k, Q):
        return Q - Q ** 2


#: The Dirichlet simulation's predictions are softmax(0.3 log P): temperature 0.3 recovers P.
_DIRICHLET_ORACLE = TemperatureCalibrationEstimator(temperature=0.3, mode="canonical",
                                                    labels=np.arange(5))


def _expected_terms(est, P, n_classes):
    """``E[term | p]`` of the one-step terms: the sum over labels weighted by the truth."""
    out = []
    for c in range(n_classes):
        y = np.full(P.shape[0], c)
        out.append(est.calibration_error_terms(P, y, estimate="one_step"))
    return np.column_stack(out)


def test_one_step_with_the_true_residual_is_exactly_unbiased_given_the_predictions():
    P, y, truth = make_dirichlet_calibration(300, random_state=0, return_truth=True)
    est = _DIRICHLET_ORACLE.fit(P, y)
    g2 = np.einsum("ij,ij->i", P - truth, P - truth)
    expected = (_expected_terms(est, P, 5) * truth).sum(axis=1)
    assert_allclose(expected, g2, rtol=1e-10, atol=1e-14)
    c, yb, pi = make_binary_squared_calibration(300, random_state=0, return_truth=True)
    est = _BinaryOracle().fit(c, yb)
    terms = _expected_terms(est, c, 2)
    assert_allclose(terms[:, 1] * pi + terms[:, 0] * (1 - pi), (c - pi) ** 2, rtol=1e-10,
                    atol=1e-14)


@pytest.mark.parametrize("case", ["dirichlet", "binary"])
def test_one_step_with_the_true_residual_is_unbiased_over_seeds(case):
    estimates = []
    for seed in range(60):
        if case == "dirichlet":
            P, y = make_dirichlet_calibration(400, random_state=seed)
            est, truth = _DIRICHLET_ORACLE.fit(P[:10], y[:10]), DIRICHLET_CALIBRATION_ERRORS[
                "canonical"]
        else:
            P, y = make_binary_squared_calibration(400, random_state=seed)
            est, truth = _BinaryOracle().fit(P[:10], y[:10]), BINARY_SQUARED_CALIBRATION_ERROR
        estimates.append(est.calibration_error(P, y=y, estimate="one_step"))
    estimates = np.array(estimates)
    se = estimates.std(ddof=1) / np.sqrt(estimates.size)
    assert abs(estimates.mean() - truth) < 3.5 * se
    # and the plug-in with a noisy estimate of g is not (a test that can fail)
    assert se < 0.1 * truth


class _Tracking(_CalibrationEstimatorBase):
    """Binning that records the training rows of each fit and the rows each model scores."""

    log = []

    def __init__(self, n_bins=5, *, mode="auto", labels=None):
        self.n_bins = n_bins
        self.mode = mode
        self.labels = labels

    def _fit(self, P, y_idx, problems):
        self._inner = BinnedCalibrationEstimator(self.n_bins, mode=self.mode_,
                                                 labels=self.labels)
        self._inner.classes_, self._inner.mode_ = self.classes_, self.mode_
        self._inner._fit_problems(problems)
        self.problems_ = self._inner.problems_
        self._rows = {r.tobytes() for r in P}

    def _diag_problem(self, k, Q):
        return self._inner._diag_problem(k, Q)

    def _pairwise_problem(self, k, Q1, Q2):
        return self._inner._pairwise_problem(k, Q1, Q2)

    def _estimate_parts(self, P, y_idx, inputs=None):
        _Tracking.log.append((self._rows, [r.tobytes() for r in P]))
        return self._inner._estimate_parts(P, y_idx, self._inner._problem_inputs(P))


def _unique_data(n=240, seed=0):
    P, y = make_dirichlet_calibration(n, n_classes=3, random_state=seed)
    assert len({r.tobytes() for r in P}) == n
    return P, y


def test_cross_fitting_never_scores_a_sample_with_a_model_fitted_on_it():
    P, y = _unique_data()
    _Tracking.log = []
    res = cross_fit_calibration_error(_Tracking(mode="top_label"), P, y, cv=4, random_state=0)
    assert len(_Tracking.log) == 4
    scored = []
    for train, evaluated in _Tracking.log:
        assert not train & set(evaluated)
        scored += evaluated
    assert sorted(scored) == sorted(r.tobytes() for r in P)  # every sample exactly once
    assert res.n_samples == 240 and res.fold_estimates.shape == (4,)


def test_calibration_error_cv_never_scores_a_sample_with_a_model_fitted_on_it():
    P, y = _unique_data(seed=1)
    _Tracking.log = []
    cv = CalibrationErrorCV([(_Tracking(), {"n_bins": [3, 6]})], mode="top_label", cv=3,
                            random_state=0).fit(P, y)
    # the debiased estimate: 3 refits, each scoring its held-out fold and the test part
    assert len(_Tracking.log) == 6
    counts = {}
    for train, evaluated in _Tracking.log:
        assert not train & set(evaluated)
        for r in evaluated:
            counts[r] = counts.get(r, 0) + 1
    test = {P[i].tobytes() for i in cv.test_indices_}
    assert len(counts) == 240
    assert all(counts[r] == (3 if r in test else 1) for r in counts)


def test_binning_square_is_the_u_statistic_of_each_bin():
    rng = np.random.default_rng(0)
    c = rng.random(200)
    y = (rng.random(200) < c ** 2).astype(int)
    est = BinnedCalibrationEstimator(4, mode="binary").fit(c, y)
    q = np.array([0.1, 0.4, 0.6, 0.9])
    G, sq = est._residual_terms(0, q[:, None])
    R = c - y
    bins = np.minimum((c * 4).astype(int), 3)
    for i, b in enumerate(np.minimum((q * 4).astype(int), 3)):
        r = R[bins == b]
        pairs = np.outer(r, r)
        assert_allclose(G[i, 0], r.mean())
        assert_allclose(sq[i], (pairs.sum() - np.trace(pairs)) / (r.size * (r.size - 1)))


def test_kde_square_is_the_weighted_u_statistic():
    P, y = make_dirichlet_calibration(60, n_classes=3, random_state=2)
    est = KDECalibrationEstimator(0.3, mode="canonical").fit(P, y)
    Q = make_dirichlet_calibration(5, n_classes=3, random_state=3)[0]
    G, sq = est._residual_terms(0, Q)
    T = np.eye(3)[y]
    from scipy.stats import dirichlet
    for i, q in enumerate(Q):
        w = np.array([dirichlet.pdf(q, p / 0.3 + 1.0) for p in P])
        w /= w.sum()
        x = q - T
        M = (w[:, None] * x) @ (w[:, None] * x).T
        assert_allclose(G[i], w @ x, rtol=1e-9)
        assert_allclose(sq[i], (M.sum() - np.trace(M)) / (1 - (w ** 2).sum()), rtol=1e-8)


@pytest.mark.parametrize("est", [BinnedCalibrationEstimator(8, mode="top_label"),
                                 KDECalibrationEstimator(0.2, mode="classwise"),
                                 KernelRidgeCalibrationEstimator(1e-4, method="two_step",
                                                                 mode="canonical"),
                                 KernelRidgeCalibrationEstimator(1e-6, mode="top_label"),
                                 TemperatureCalibrationEstimator(mode="canonical"),
                                 ZeroCalibrationEstimator(mode="classwise")],
                         ids=lambda e: type(e).__name__ + "-" + e.mode)
def test_estimates_identity_and_terms(est):
    P, y = make_dirichlet_calibration(300, n_classes=3, random_state=4)
    est.fit(P[:200], y[:200])
    Pt, yt = P[200:], y[200:]
    one = est.calibration_error_terms(Pt, yt, estimate="one_step")
    prod = est.calibration_error_terms(Pt, yt, estimate="product")
    # one_step = 2 product - sq, and sq is the U-statistic plug-in (h(p, p) for a plug-in with
    # no training noise)
    inputs = est._problem_inputs(Pt)
    sq = sum(est._residual_terms(k, inputs[k])[1] for k in range(len(inputs)))
    assert_allclose(one, 2 * prod - sq, atol=1e-14)
    assert est.calibration_error(Pt, y=yt, estimate="one_step") == pytest.approx(one.mean())
    w = np.arange(1, 101, dtype=float)
    assert est.calibration_error(Pt, w, y=yt, estimate="product") == pytest.approx(
        (w @ prod) / w.sum())
    assert est.calibration_error(Pt) == pytest.approx(est.transform(Pt).mean())
    if isinstance(est, ZeroCalibrationEstimator):
        assert not np.any(one) and not np.any(prod)


def test_errors_name_the_argument():
    P, y = make_dirichlet_calibration(100, n_classes=3, random_state=0)
    est = KDECalibrationEstimator(mode="top_label").fit(P, y)
    with pytest.raises(ValueError, match="pass y="):
        est.calibration_error(P, estimate="one_step")
    with pytest.raises(ValueError, match="estimate"):
        est.calibration_error(P, y=y, estimate="onestep")
    with pytest.raises(ValueError, match="estimate"):
        CalibrationErrorCV(estimate="debiased").fit(P, y)
    with pytest.raises(TypeError, match="estimator must be"):
        cross_fit_calibration_error("kde", P, y)
    with pytest.raises(ValueError, match="estimate"):
        cross_fit_calibration_error(est, P, y, estimate="u")
    y_bad = y.copy()
    y_bad[0] = 7
    with pytest.raises(ValueError):
        est.calibration_error(P, y=y_bad, estimate="product")
    P0, y0 = P.copy(), y.copy()
    cross_fit_calibration_error(KDECalibrationEstimator(mode="top_label"), P, y, random_state=0)
    assert np.array_equal(P, P0) and np.array_equal(y, y0)


def test_cross_fit_result_and_interval():
    c, y = make_binary_squared_calibration(3000, random_state=1)
    res = cross_fit_calibration_error(KDECalibrationEstimator(0.05, mode="binary"), c, y,
                                      random_state=0)
    low, high = res.confidence_interval(0.9)
    assert low < res.estimate < high
    assert high - low == pytest.approx(2 * 1.6448536 * res.standard_error, rel=1e-6)
    assert res.terms.mean() == pytest.approx(res.estimate)
    assert "one_step" in repr(res)
    small = cross_fit_calibration_error(KDECalibrationEstimator(0.05, mode="binary"), c[:400],
                                        y[:400], random_state=0)
    with parallel_backend("threading"):  # n_jobs=2 without the cost of starting processes
        again = cross_fit_calibration_error(KDECalibrationEstimator(0.05, mode="binary"),
                                            c[:400], y[:400], random_state=0, n_jobs=2)
    assert again.estimate == small.estimate
