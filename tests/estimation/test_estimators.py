"""Calibration estimation functions (skcalib.estimation) against brute force from the spec.

Every value is compared with an independent computation written here from the formulas of
``seed-002-mse-risk-calibration-estimators.md`` (sections 1.6-2.8): the dense U-statistic of the
risk (Eq. 20), bins computed in the test (Eq. 23 and Kumar's debiasing), Nadaraya-Watson with
``scipy.stats.beta`` / ``scipy.stats.dirichlet`` densities (Eq. 25), the Kronecker system with
``np.kron(K, K)`` (Eq. 28) and the two-step solve (Eq. 32), and the temperature plug-in (2.8).
No private helper of the library is used for an expected value.

Conventions checked (spec 1.6, pitfalls P5/P6): scalar problems use ``(c - a)(c' - a')``; the
class-wise risk and estimate are **sums** of per-class problems, each with its own ``h_k`` and
its own pair targets.
"""

import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.optimize import minimize_scalar
from scipy.special import softmax
from scipy.stats import beta as beta_dist
from scipy.stats import dirichlet
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.utils.estimator_checks import parametrize_with_checks

from skcalib import SKCE, calibration_error, get_scorer
from skcalib.estimation import (BinnedCalibrationEstimator, KDECalibrationEstimator,
                                KernelRidgeCalibrationEstimator,
                                TemperatureCalibrationEstimator, ZeroCalibrationEstimator,
                                calibration_risk)
from skcalib._estimator_checks import expected_failed_checks
from skcalib.kernels import ExponentialKernel, GaussianKernel
from skcalib.recalibration import TemperatureScaling

MODES_C3 = ["top_label", "classwise", "canonical"]

pytestmark = pytest.mark.usefixtures("single_threaded_blas")




# ---------------------------------------------------------------------------------------------
# Data and brute-force building blocks


def _data(n, C=3, seed=0, power=2.0, conc=1.0):
    """Dirichlet predictions ``P`` and labels drawn from ``P**power`` (renormalised).

    ``power != 1`` makes the model miscalibrated, so that ``h*`` is not zero.
    """
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.full(C, conc), size=n)
    Q = P ** power
    Q /= Q.sum(axis=1, keepdims=True)
    y = (rng.random((n, 1)) > Q.cumsum(axis=1)).sum(axis=1).clip(max=C - 1)
    return P, y


def _bf_problems(P, y, mode):
    """``[(Q, T)]`` of the notion (spec 1.6); ``y`` are column indices; a tied maximum counts
    ``1/|ties|`` as correct when ``y`` is among the tied columns (label-invariant)."""
    n, C = P.shape
    E = np.eye(C)[y]
    if mode == "binary":
        return [(P[:, [1]], E[:, [1]])]
    if mode == "top_label":
        top = P == P.max(axis=1, keepdims=True)
        correct = top[np.arange(n), y] / top.sum(axis=1)
        return [(P.max(axis=1)[:, None], correct[:, None])]
    if mode == "classwise":
        return [(P[:, [k]], E[:, [k]]) for k in range(C)]
    return [(P, E)]


def _bf_risk(P, y, mode, Hs):
    """Dense U-statistic ``sum_k mean_{i != j} (T^k_ij - H^k_ij)^2`` (spec Eq. 20 and 1.6)."""
    n = P.shape[0]
    off = ~np.eye(n, dtype=bool)
    total = 0.0
    for (Q, T), H in zip(_bf_problems(P, y, mode), Hs):
        R = Q - T
        D = R @ R.T - H
        total += np.sum(D[off] ** 2) / (n * (n - 1.0))
    return total


def _rbf(A, B, gamma):
    return np.exp(-gamma * ((A[:, None, :] - B[None, :, :]) ** 2).sum(axis=-1))


def _bf_bin_h(Qtr, Ttr, Q1, Q2, n_bins, strategy, debias):
    """Binning ``h`` (spec Eq. 23; debias: spec 2.2) with bins computed here.

    Right-closed bins ``(b_{k-1}, b_k]`` (0 in the first bin, 1 in the last); quantile edges are
    ``np.quantile`` of the training inputs at ``k / n_bins``, deduplicated. Cells of vectors are
    tuples of per-coordinate bins. Cells without training samples give ``h = 0``. Same-cell pairs
    lose ``sum_c tbar_c (1 - tbar_c) / (n_b - 1)``; a one-sample cell loses ``delta_b^2`` (its
    contribution is 0, as in Kumar's estimator).
    """
    d = Qtr.shape[1]
    if strategy == "uniform":
        edges = [np.arange(1, n_bins) / n_bins] * d
    else:
        qs = np.linspace(0.0, 1.0, n_bins + 1)[1:-1]
        edges = [np.unique(np.quantile(Qtr[:, c], qs)) for c in range(d)]

    def cells(Q):
        idx = np.column_stack([np.searchsorted(edges[c], Q[:, c], side="left")
                               for c in range(d)])
        return [tuple(row) for row in idx]

    ctr = cells(Qtr)
    stats = {}
    for cell in set(ctr):
        members = np.array([i for i, c in enumerate(ctr) if c == cell])
        delta = (Qtr[members] - Ttr[members]).mean(axis=0)
        tbar = Ttr[members].mean(axis=0)
        if members.size >= 2:
            corr = float(np.sum(tbar * (1 - tbar))) / (members.size - 1)
        else:
            corr = float(delta @ delta)
        stats[cell] = (delta, corr)

    number = {cell: i for i, cell in enumerate(stats)}

    def table(Q):
        cs = cells(Q)
        D = np.array([stats[c][0] if c in stats else np.zeros(d) for c in cs])
        corr = np.array([stats[c][1] if c in stats else 0.0 for c in cs])
        ids = np.array([number.get(c, -1) for c in cs])
        return D, corr, ids

    D1, corr1, id1 = table(Q1)
    D2, _, id2 = table(Q2)
    H = D1 @ D2.T
    if debias:
        same = (id1[:, None] == id2[None, :]) & (id1[:, None] >= 0)
        H -= np.where(same, corr1[:, None], 0.0)
    return H


def _bf_kde_pihat(Qtr, Ttr, Q, b):
    """Nadaraya-Watson ``pi_hat(q)``: weights ``Beta/Dir(q; alpha_i = x_i / b + 1)`` (spec 2.3).

    Neighbour-centred (the reference code's orientation): the density with the concentration of
    training point ``i`` evaluated at the query. Computed from ``logpdf`` with a softmax over the
    training points (the densities themselves overflow for small ``b``).
    """
    if Qtr.shape[1] == 1:
        c = Qtr[:, 0]
        L = beta_dist.logpdf(Q[:, [0]], c / b + 1.0, (1.0 - c) / b + 1.0)
    else:
        L = np.column_stack([dirichlet.logpdf(Q.T, x / b + 1.0) for x in Qtr])
    W = softmax(L, axis=1)
    return W @ Ttr


def _bf_kde_h(Qtr, Ttr, Q1, Q2, b):
    R1 = Q1 - _bf_kde_pihat(Qtr, Ttr, Q1, b)
    R2 = Q2 - _bf_kde_pihat(Qtr, Ttr, Q2, b)
    return R1 @ R2.T


def _bf_kron_h(Qtr, Rtr, Q1, Q2, alpha, kern):
    """``vec(G)^T (K (x) K + alpha n^2 I)^{-1} (k(p) (x) k(p'))`` (spec Eq. 28), with np.kron."""
    n = Qtr.shape[0]
    K = kern(Qtr, Qtr)
    G = Rtr @ Rtr.T
    w = np.linalg.solve(np.kron(K, K) + alpha * n ** 2 * np.eye(n * n), G.ravel())
    return kern(Qtr, Q1).T @ w.reshape(n, n) @ kern(Qtr, Q2)


def _bf_two_step_h(Qtr, Rtr, Q1, Q2, alpha, kern):
    """``k(p)^T (K + alpha n I)^{-1} R R^T (K + alpha n I)^{-1} k(p')`` (spec Eq. 32)."""
    n = Qtr.shape[0]
    M = kern(Qtr, Qtr) + alpha * n * np.eye(n)
    A1 = np.linalg.solve(M, kern(Qtr, Q1))
    A2 = np.linalg.solve(M, kern(Qtr, Q2))
    return A1.T @ Rtr @ Rtr.T @ A2


def _bf_temperature_residuals(P, T, mode, eps=1e-12):
    """``q - g_T(p)`` per problem, ``g_T = softmax(log clip(p) / T)`` (spec 2.8)."""
    n, C = P.shape
    G = softmax(np.log(np.clip(P, eps, 1.0)) / T, axis=1)
    if mode == "binary":
        return [(P[:, 1] - G[:, 1])[:, None]]
    if mode == "top_label":
        k = np.argmax(P, axis=1)
        return [(P[np.arange(n), k] - G[np.arange(n), k])[:, None]]
    if mode == "classwise":
        return [(P[:, k] - G[:, k])[:, None] for k in range(C)]
    return [P - G]


def _P_of_mode(mode, n, seed, **kw):
    return _data(n, 2 if mode == "binary" else 3, seed, **kw)


# ---------------------------------------------------------------------------------------------
# 1. calibration_risk


@pytest.mark.parametrize("mode", ["binary", "top_label", "classwise", "canonical"])
def test_risk_of_h_matrix_equals_dense_u_statistic(mode):
    n = 600  # > 256: several row tiles
    P, y = _P_of_mode(mode, n, 1)
    rng = np.random.default_rng(2)
    probs = _bf_problems(P, y, mode)
    Hs = []
    for Q, T in probs:
        A = 0.05 * rng.normal(size=(n, n))
        Hs.append(A + A.T)
    H = Hs[0] if len(Hs) == 1 else np.stack(Hs)
    expected = _bf_risk(P, y, mode, Hs)
    assert_allclose(calibration_risk(y, P, H, mode=mode), expected, rtol=1e-12)
    # h = the pair targets themselves: risk 0 (the diagonal i = j is excluded either way)
    Ts = [(Q - T) @ (Q - T).T for Q, T in probs]
    Hd = Ts[0] if len(Ts) == 1 else np.stack(Ts)
    assert calibration_risk(y, P, Hd, mode=mode) == 0.0
    # the diagonal of H is ignored
    Hd2 = Hd.copy()
    Hd2[..., np.arange(n), np.arange(n)] = 1e3
    assert calibration_risk(y, P, Hd2, mode=mode) == 0.0
    # h = 0: the mean squared pair target
    zeros = np.zeros_like(Hd)
    assert_allclose(calibration_risk(y, P, zeros, mode=mode),
                    _bf_risk(P, y, mode, [np.zeros((n, n))] * len(probs)), rtol=1e-12)


def test_risk_default_mode_and_per_class_sum():
    P, y = _data(50, 3, 3)
    H = np.zeros((50, 50))
    assert calibration_risk(y, P, H) == calibration_risk(y, P, H, mode="top_label")
    P2, y2 = _data(50, 2, 3)
    assert calibration_risk(y2, P2, H) == calibration_risk(y2, P2, H, mode="binary")
    # classwise: the sum of the per-class risks, not the risk of the summed (canonical) target
    Z = np.zeros((3, 50, 50))
    cw = calibration_risk(y, P, Z, mode="classwise")
    per_class = [calibration_risk((y == k).astype(int), P[:, k], H, mode="binary")
                 for k in range(3)]
    assert_allclose(cw, sum(per_class), rtol=1e-12)
    assert not np.isclose(cw, calibration_risk(y, P, H, mode="canonical"), rtol=1e-3)


def test_risk_reference_value_zero_estimator():
    # reference-values.md 6.2 (data of 6.1): p = [.2, .5, .9, .4], Y = [0, 1, 1, 1]
    p = np.array([0.2, 0.5, 0.9, 0.4])
    y = np.array([0, 1, 1, 1])
    assert_allclose(calibration_risk(y, p, np.zeros((4, 4)), mode="binary"), 0.02015,
                    rtol=1e-12)
    zero = ZeroCalibrationEstimator().fit(p, y)
    assert zero.n_features_in_ == 1 and list(zero.classes_) == [0, 1]
    assert_allclose(calibration_risk(y, p, zero), 0.02015, rtol=1e-12)
    r = p - y
    assert calibration_risk(y, p, np.outer(r, r), mode="binary") == 0.0


def _estimators_for(mode):
    """Unfitted estimators of every family for the risk test (tiled and plug-in paths)."""
    return [
        BinnedCalibrationEstimator(n_bins=7, mode=mode),                       # tiled
        BinnedCalibrationEstimator(n_bins=5, strategy="quantile", debias=True, mode=mode),
        KDECalibrationEstimator(bandwidth=0.05, mode=mode),                    # plug-in
        KernelRidgeCalibrationEstimator(alpha=1e-3, mode=mode),                # kronecker: tiled
        KernelRidgeCalibrationEstimator(alpha=1e-3, method="two_step", mode=mode),  # plug-in
        TemperatureCalibrationEstimator(temperature=1.7, mode=mode),           # plug-in
        TemperatureCalibrationEstimator(mode=mode),
        ZeroCalibrationEstimator(mode=mode),
    ]


def _per_problem_h(est, Ptr, ytr, Pte, mode):
    """``[H_k]`` of a fitted estimator on ``Pte``, through the public API only.

    For one problem it is ``pairwise``. A class-wise estimator's class ``k`` is the binary
    problem ``(p_k, 1{y = k})``: the same estimator in binary mode fitted on column ``k`` has the
    same inputs, hence the same ``h_k`` (temperature scaling excepted: its binary softmax
    differs, so its residuals come from the brute force).
    """
    if mode != "classwise":
        return [est.pairwise(Pte)]
    if isinstance(est, TemperatureCalibrationEstimator):
        return [R @ R.T for R in _bf_temperature_residuals(Pte, est.temperature_, mode)]
    out = []
    for k in range(Ptr.shape[1]):
        bk = clone(est).set_params(mode="binary").fit(Ptr[:, k], (ytr == k).astype(int))
        out.append(bk.pairwise(Pte[:, k]))
    return out


@pytest.mark.parametrize("mode", ["binary", "top_label", "classwise", "canonical"])
def test_risk_of_estimators_equals_dense_u_statistic(mode):
    Ptr, ytr = _P_of_mode(mode, 150, 4)
    Pte, yte = _P_of_mode(mode, 600, 5)  # 600 > 256: three row tiles
    for est in _estimators_for(mode):
        est.fit(Ptr, ytr)
        Hs = _per_problem_h(est, Ptr, ytr, Pte, mode)
        assert_allclose(sum(Hs), est.pairwise(Pte), rtol=1e-10, atol=1e-14, err_msg=repr(est))
        expected = _bf_risk(Pte, yte, mode, Hs)
        got = calibration_risk(yte, Pte, est)
        assert_allclose(got, expected, rtol=1e-12, err_msg=repr(est))
        assert_allclose(est.score(Pte, yte), -expected, rtol=1e-12, err_msg=repr(est))
        # the estimator's mode may be repeated, labels default to classes_
        assert calibration_risk(yte, Pte, est, mode=mode, labels=[0, 1, 2][:Pte.shape[1]]) == got


def test_risk_with_several_tiles_for_string_labels_and_one_column():
    P, y = _data(700, 2, 6)
    names = np.array(["no", "yes"])[y]
    est = KernelRidgeCalibrationEstimator(alpha=1e-2).fit(P[:100], names[:100])
    H = est.pairwise(P[100:])
    expected = _bf_risk(P[100:], y[100:], "binary", [H])
    assert_allclose(calibration_risk(names[100:], P[100:], est), expected, rtol=1e-12)
    assert_allclose(calibration_risk(names[100:], P[100:, 1], est), expected, rtol=1e-12)


def test_risk_h_matrix_shape_errors():
    P, y = _data(20, 3, 7)
    with pytest.raises(ValueError, match=r"shape \(20, 20\)"):
        calibration_risk(y, P, np.zeros((20, 21)))
    with pytest.raises(ValueError, match=r"shape \(20, 20\)"):
        calibration_risk(y, P, np.zeros((19, 19)), mode="canonical")
    with pytest.raises(ValueError, match=r"\(3, 20, 20\)"):
        calibration_risk(y, P, np.zeros((20, 20)), mode="classwise")
    with pytest.raises(ValueError, match=r"\(3, 20, 20\)"):
        calibration_risk(y, P, np.zeros((2, 20, 20)), mode="classwise")
    with pytest.raises(ValueError, match="finite"):
        calibration_risk(y, P, np.full((3, 20, 20), np.nan), mode="classwise")
    with pytest.raises(ValueError, match="mode"):
        calibration_risk(y, P, np.zeros((20, 20)), mode="toplabel")
    with pytest.raises(ValueError, match="2 samples"):
        calibration_risk(y[:1], P[:1], np.zeros((1, 1)))


def test_risk_rejects_non_finite_single_h_matrix():
    p = np.array([0.2, 0.5, 0.9, 0.4])
    y = np.array([0, 1, 1, 1])
    with pytest.raises(ValueError, match="finite"):
        calibration_risk(y, p, np.full((4, 4), np.nan), mode="binary")


def test_risk_mode_and_label_mismatch_with_estimator():
    P, y = _data(40, 3, 8)
    est = BinnedCalibrationEstimator(mode="top_label").fit(P, y)
    with pytest.raises(ValueError, match="differs from the estimator's mode"):
        calibration_risk(y, P, est, mode="canonical")
    with pytest.raises(ValueError, match="mode must be one of"):
        calibration_risk(y, P, est, mode="top-label")  # a typo lists the valid modes
    assert calibration_risk(y, P, est, mode="auto") == calibration_risk(y, P, est)
    with pytest.raises(ValueError, match="labels"):
        calibration_risk(np.where(y == 2, 5, y), P, est)
    with pytest.raises(ValueError):
        calibration_risk(y, P, est, labels=[0, 1, 5])
    with pytest.raises(ValueError, match="columns"):
        calibration_risk(y, P[:, :2] / P[:, :2].sum(axis=1, keepdims=True), est)
    with pytest.raises(NotFittedError):
        calibration_risk(y, P, BinnedCalibrationEstimator())


# ---------------------------------------------------------------------------------------------
# 2. BinnedCalibrationEstimator


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@pytest.mark.parametrize("mode", ["binary", "top_label", "classwise", "canonical"])
@pytest.mark.parametrize("debias", [False, True])
def test_binning_in_sample_error_equals_calibration_error(strategy, mode, debias):
    P, y = _P_of_mode(mode, 400, 9)
    n_classes = P.shape[1]
    for n_bins in [1, 4, 15]:
        est = BinnedCalibrationEstimator(n_bins=n_bins, strategy=strategy, mode=mode,
                                         debias=debias).fit(P, y)
        expected = calibration_error(y, P, norm="l2", squared=True, n_bins=n_bins,
                                     strategy=strategy, mode=mode, debias=debias)
        # calibration_error averages the class-wise errors; the estimator sums them (spec 1.6)
        factor = n_classes if mode == "classwise" else 1
        assert_allclose(est.calibration_error(P), factor * expected, rtol=1e-12, atol=1e-17)
        # in-sample = the training array itself or a copy of it (out-of-sample code path)
        assert_allclose(est.calibration_error(P.copy()), est.calibration_error(P), rtol=1e-12,
                        atol=1e-17)
        assert_allclose(est.transform(P)[:, 0], np.diag(est.pairwise(P)), rtol=1e-12,
                        atol=1e-15)


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@pytest.mark.parametrize("mode", ["binary", "top_label", "classwise", "canonical"])
@pytest.mark.parametrize("debias", [False, True])
def test_binning_pairwise_equals_brute_force(strategy, mode, debias):
    Ptr, ytr = _P_of_mode(mode, 300, 10)
    Pa, _ = _P_of_mode(mode, 80, 11)
    Pb, _ = _P_of_mode(mode, 50, 12)
    n_bins = 4 if mode == "canonical" else 8
    est = BinnedCalibrationEstimator(n_bins=n_bins, strategy=strategy, mode=mode,
                                     debias=debias).fit(Ptr, ytr)
    for A, B in [(Pa, Pb), (Pa, Pa), (Ptr, Pa), (Ptr, Ptr)]:
        expected = sum(_bf_bin_h(Q, T, Q1, Q2, n_bins, strategy, debias)
                       for (Q, T), (Q1, _), (Q2, _) in zip(_bf_problems(Ptr, ytr, mode),
                                                           _bf_problems(A, np.zeros(len(A), int),
                                                                        mode),
                                                           _bf_problems(B, np.zeros(len(B), int),
                                                                        mode)))
        assert_allclose(est.pairwise(A, B), expected, rtol=1e-12, atol=1e-15)
        if A is B:
            assert_allclose(est.transform(A)[:, 0], np.diag(expected), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("lo, hi", [(0.5, 0.7), (0.0, 0.35)])
def test_binning_empty_training_bins_give_zero(lo, hi):
    # spec 2.1: bins without training samples have delta = 0, so h = 0 for new points in them
    # (empty bins below and above the occupied ones)
    rng = np.random.default_rng(13)
    c = rng.uniform(lo, hi, size=200)  # binary P(1) only in [lo, hi]
    y = (rng.random(200) < c ** 2).astype(int)
    empty = np.array([v for v in [0.0, 0.05, 0.33, 0.45, 0.75, 0.95, 1.0]
                      if not lo - 0.1 <= v <= hi + 0.1])
    for debias in [False, True]:
        for strategy in ["uniform", "quantile"]:
            est = BinnedCalibrationEstimator(n_bins=10, strategy=strategy, debias=debias)
            est.fit(c, y)
            if strategy == "quantile":  # quantile bins cover everything: no empty bin
                assert np.all(est.transform(empty)[:, 0] != 0.0)
                continue
            new = np.concatenate([empty, [(lo + hi) / 2]])
            H = est.pairwise(new, c)
            assert_array_equal(H[:-1], 0.0)
            assert np.any(H[-1] != 0.0)
            assert_array_equal(est.transform(new)[:-1, 0], 0.0)
    # canonical: cells of the grid with no training point, for a dense (n_bins**3 small) and
    # a sparse (n_bins**3 large, cells numbered by occupation) grid
    P, y3 = _data(200, 3, 14, conc=5.0)  # concentrated near the centre of the simplex
    corner = np.array([[0.98, 0.01, 0.01], [0.01, 0.01, 0.98], [0.0, 0.0, 1.0]])
    for n_bins in [5, 20]:
        est = BinnedCalibrationEstimator(n_bins=n_bins, mode="canonical").fit(P, y3)
        assert_array_equal(est.pairwise(corner, P), 0.0)
        assert_array_equal(est.transform(corner), 0.0)
        assert np.any(est.pairwise(P[:3], P) != 0.0)


def test_binning_edges_are_right_closed():
    # spec 2.1 / P11: (b_{k-1}, b_k], 0 in the first bin, 1.0 in the last; quantile edges found
    # with searchsorted(side="left")
    c = np.array([0.0, 0.25, 0.25, 0.5, 0.75, 1.0, 0.1, 0.6])
    y = np.array([1, 0, 1, 1, 0, 1, 0, 0])
    est = BinnedCalibrationEstimator(n_bins=4).fit(c, y)
    # bins: [0, .25] = {0, .25, .25, .1}, (.25, .5] = {.5}, (.5, .75] = {.75, .6}, (.75, 1] = {1}
    delta = {0: np.mean([0.0, 0.25, 0.25, 0.1]) - 0.5, 1: 0.5 - 1, 2: np.mean([0.75, 0.6]),
             3: 0.0}
    bins = [0, 0, 0, 1, 2, 3, 0, 2]
    assert_allclose(est.transform(c)[:, 0], [delta[b] ** 2 for b in bins], rtol=1e-12,
                    atol=1e-300)
    q = np.array([1e-300, 0.25 + 1e-12, 0.5, 0.5 + 1e-12, 0.75, 0.9])
    assert_allclose(est.transform(q)[:, 0], [delta[b] ** 2 for b in [0, 1, 1, 2, 2, 3]],
                    rtol=1e-12, atol=1e-300)


def test_binning_debias_one_sample_bins_and_negative_values():
    # spec 2.2: bins with one training sample contribute 0; debiased h can be negative
    c = np.array([0.05, 0.51, 0.52, 0.53, 0.54, 0.91])
    y = np.array([1, 1, 0, 1, 0, 1])
    est = BinnedCalibrationEstimator(n_bins=10, debias=True).fit(c, y)
    d = est.transform(c)[:, 0]
    assert d[0] == 0.0 and d[5] == 0.0
    # bin (0.5, 0.6]: delta = 0.525 - 0.5, correction 0.5 * 0.5 / 3
    assert_allclose(d[1:5], 0.025 ** 2 - 0.25 / 3, rtol=1e-12)
    assert np.all(d[1:5] < 0)
    assert_allclose(est.calibration_error(c),
                    calibration_error(y, c, norm="l2", squared=True, n_bins=10, debias=True),
                    rtol=1e-12)
    # different-bin pairs are not corrected: delta_(0.5, 0.6] * delta_(0.9, 1.0]
    assert_allclose(est.pairwise(c)[1, 5], 0.025 * (0.91 - 1.0), rtol=1e-12)
    assert_allclose(est.pairwise(np.array([0.515]), np.array([0.505]))[0, 0],
                    0.025 ** 2 - 0.25 / 3, rtol=1e-12)


def test_binning_scalar_convention():
    # spec 1.6 / P5: a scalar problem uses (c - a)(c' - a'); embedding it as 2-vectors
    # (c, 1 - c) (the canonical notion of two classes) doubles the estimate. With uniform bins
    # the cells of (p0, p1 = 1 - p0) are those of p1, so the factor is exactly 2.
    P, y = _data(300, 2, 15)
    b = BinnedCalibrationEstimator(n_bins=6, mode="binary").fit(P, y)
    vec = BinnedCalibrationEstimator(n_bins=6, mode="canonical").fit(P, y)
    assert_allclose(vec.calibration_error(P), 2 * b.calibration_error(P), rtol=1e-10)
    assert_allclose(vec.pairwise(P[:20]), 2 * b.pairwise(P[:20]), rtol=1e-10, atol=1e-17)


def test_binning_canonical_does_not_alias_training_input():
    P, y = _data(200, 3, 16)
    new, _ = _data(30, 3, 17)
    X = P.copy()
    est = BinnedCalibrationEstimator(n_bins=4, mode="canonical").fit(X, y)
    before = est.pairwise(new)
    X[:] = X[::-1]
    assert_array_equal(est.pairwise(new), before)


# ---------------------------------------------------------------------------------------------
# 3. KDECalibrationEstimator


@pytest.mark.parametrize("mode", ["binary", "top_label", "classwise", "canonical"])
@pytest.mark.parametrize("bandwidth", [0.02, 0.3])
def test_kde_equals_nadaraya_watson_brute_force(mode, bandwidth):
    Ptr, ytr = _P_of_mode(mode, 150, 18)
    Pa, _ = _P_of_mode(mode, 60, 19)
    Pb, _ = _P_of_mode(mode, 40, 20)
    est = KDECalibrationEstimator(bandwidth=bandwidth, mode=mode).fit(Ptr, ytr)
    za, zb = np.zeros(60, int), np.zeros(40, int)
    expected = sum(_bf_kde_h(Q, T, Q1, Q2, bandwidth)
                   for (Q, T), (Q1, _), (Q2, _) in zip(_bf_problems(Ptr, ytr, mode),
                                                       _bf_problems(Pa, za, mode),
                                                       _bf_problems(Pb, zb, mode)))
    assert_allclose(est.pairwise(Pa, Pb), expected, rtol=1e-9, atol=1e-13)
    diag = sum(np.einsum("ij,ij->i", R, R) for R in
               [Q1 - _bf_kde_pihat(Q, T, Q1, bandwidth)
                for (Q, T), (Q1, _) in zip(_bf_problems(Ptr, ytr, mode),
                                           _bf_problems(Pa, za, mode))])
    assert_allclose(est.transform(Pa)[:, 0], diag, rtol=1e-9, atol=1e-13)
    assert_allclose(est.calibration_error(Pa), diag.mean(), rtol=1e-9)


def test_kde_orientation_is_neighbour_centred():
    # the query-centred orientation (density of the query's Beta at the neighbour) differs
    rng = np.random.default_rng(21)
    c = rng.uniform(0, 1, 100)
    y = (rng.random(100) < c ** 2).astype(int)
    b = 0.1
    est = KDECalibrationEstimator(bandwidth=b).fit(c, y)
    q = np.array([0.1, 0.5, 0.9])
    r_est = np.sqrt(np.diag(est.pairwise(q)))
    w_n = softmax(beta_dist.logpdf(q[:, None], c / b + 1, (1 - c) / b + 1), axis=1)
    w_q = softmax(beta_dist.logpdf(c[None, :], q[:, None] / b + 1, (1 - q[:, None]) / b + 1),
                  axis=1)
    assert_allclose(r_est, np.abs(q - w_n @ y), rtol=1e-10)
    assert not np.allclose(r_est, np.abs(q - w_q @ y), rtol=1e-3)


@pytest.mark.parametrize("mode", ["binary", "top_label", "classwise", "canonical"])
@pytest.mark.parametrize("bandwidth", [1e-5, 1e-3, 1.0])
def test_kde_exact_zeros_and_ones_give_no_nan(mode, bandwidth):
    P, y = _P_of_mode(mode, 120, 22)
    C = P.shape[1]
    P = P.copy()
    P[:10] = np.eye(C)[np.arange(10) % C]          # confidence exactly 1.0
    P[10:20, 0] = 0.0                              # exact zeros
    P[10:20] /= P[10:20].sum(axis=1, keepdims=True)
    P[20] = np.full(C, 1.0 / C)                    # ties
    est = KDECalibrationEstimator(bandwidth=bandwidth, mode=mode).fit(P, y)
    Pq = np.vstack([np.eye(C), P[5:25]])
    H = est.pairwise(Pq, P)
    assert np.all(np.isfinite(H))
    d = est.transform(Pq)[:, 0]
    assert np.all(np.isfinite(d)) and np.all(d >= 0)
    assert_allclose(d, np.diag(est.pairwise(Pq)), rtol=1e-10, atol=1e-300)
    assert np.isfinite(calibration_risk(y, P, est))


def test_kde_limits_at_the_vertices_agree_with_the_densities():
    # queries at vertices: only training points on the same vertex have a positive density
    # (Beta(1; a, 1) = a); the floored logarithms must reproduce that limit, not just be finite
    P, y = _data(100, 3, 23)
    P = P.copy()
    P[:12] = np.eye(3)[np.arange(12) % 3]
    b = 0.05
    est = KDECalibrationEstimator(bandwidth=b, mode="classwise").fit(P, y)
    q = np.eye(3)
    expected = 0.0
    for k in range(3):
        c = P[:, k]
        L = beta_dist.logpdf(q[:, [k]], c / b + 1, (1 - c) / b + 1)
        assert np.all(np.isfinite(L.max(axis=1)))
        pihat = softmax(L, axis=1) @ (y == k)
        expected = expected + (q[:, k] - pihat) ** 2
    assert_allclose(est.transform(q)[:, 0], expected, rtol=1e-9, atol=1e-15)


# ---------------------------------------------------------------------------------------------
# 4. KernelRidgeCalibrationEstimator


def _krr_expected(est_kw, Ptr, ytr, A, B, mode, kern):
    method = est_kw.get("method", "kronecker")
    f = _bf_kron_h if method == "kronecker" else _bf_two_step_h
    za, zb = np.zeros(len(A), int), np.zeros(len(B), int)
    return sum(f(Q, Q - T, Q1, Q2, est_kw["alpha"], kern)
               for (Q, T), (Q1, _), (Q2, _) in zip(_bf_problems(Ptr, ytr, mode),
                                                   _bf_problems(A, za, mode),
                                                   _bf_problems(B, zb, mode)))


@pytest.mark.parametrize("mode", ["binary", "top_label", "classwise", "canonical"])
@pytest.mark.parametrize("method", ["kronecker", "two_step"])
@pytest.mark.parametrize("alpha", [1e-1, 1e-3])
def test_kernel_ridge_equals_closed_forms(mode, method, alpha):
    Ptr, ytr = _P_of_mode(mode, 20, 24)
    Pa, _ = _P_of_mode(mode, 15, 25)
    Pb, _ = _P_of_mode(mode, 9, 26)
    kw = dict(alpha=alpha, method=method)
    est = KernelRidgeCalibrationEstimator(mode=mode, **kw).fit(Ptr, ytr)
    kern = lambda A, B: _rbf(A, B, 0.5)  # noqa: E731 - the default "rbf" with gamma = 1/2
    expected = _krr_expected(kw, Ptr, ytr, Pa, Pb, mode, kern)
    scale = np.abs(expected).max()
    assert_allclose(est.pairwise(Pa, Pb), expected, rtol=0, atol=1e-9 * scale)
    diag = np.diag(_krr_expected(kw, Ptr, ytr, Pa, Pa, mode, kern))
    assert_allclose(est.transform(Pa)[:, 0], diag, rtol=0, atol=1e-9 * scale)
    # the training pairs: h fitted to G (i = j pairs included, spec P3)
    expected_tr = _krr_expected(kw, Ptr, ytr, Ptr, Ptr, mode, kern)
    assert_allclose(est.pairwise(Ptr), expected_tr, rtol=0, atol=1e-9 * scale)


@pytest.mark.parametrize("mode", ["top_label", "canonical"])
def test_kernel_ridge_methods_agree_at_vanishing_ridge(mode):
    # spec 2.5: both tend to k(p)^T K^{-1} G K^{-1} k(p') as alpha -> 0 (well-conditioned K)
    Ptr, ytr = _data(20, 3, 27)
    Pa, _ = _data(12, 3, 28)
    ls = 0.01 if mode == "top_label" else 0.15
    kernel = GaussianKernel(length_scale=ls)
    kern = lambda A, B: _rbf(A, B, 1 / (2 * ls ** 2))  # noqa: E731
    (Q, T), = _bf_problems(Ptr, ytr, mode)
    (Qa, _), = _bf_problems(Pa, np.zeros(12, int), mode)
    K = kern(Q, Q)
    assert np.linalg.cond(K) < 1e3
    Ka = kern(Q, Qa)
    R = Q - T
    limit = Ka.T @ np.linalg.solve(K, R @ R.T) @ np.linalg.solve(K, Ka)
    for method in ["kronecker", "two_step"]:
        est = KernelRidgeCalibrationEstimator(alpha=1e-16, kernel=kernel, method=method,
                                              mode=mode).fit(Ptr, ytr)
        assert_allclose(est.pairwise(Pa), limit, rtol=0, atol=1e-7 * np.abs(limit).max())
        # at the training points the interpolant reproduces the pair targets G
        assert_allclose(est.pairwise(Ptr), R @ R.T, rtol=0, atol=1e-7 * np.abs(R @ R.T).max())
        # a large ridge is far from the limit (the comparison can fail)
        far = est.with_alpha(1e-2).pairwise(Pa)
        assert np.abs(far - limit).max() > 1e-2 * np.abs(limit).max()


def test_kernel_ridge_kronecker_diagonal_can_be_negative():
    # spec 2.4 / P2: Lt is indefinite, h_kkr(p, p) < 0 happens and nothing clips it
    Ptr, ytr = _data(100, 3, 29)
    Pte, _ = _data(100, 3, 30)
    est = KernelRidgeCalibrationEstimator(alpha=1e-6, mode="canonical").fit(Ptr, ytr)
    d = est.transform(Pte)[:, 0]
    assert d.min() < 0
    assert_allclose(d, np.diag(est.pairwise(Pte)), rtol=1e-10, atol=1e-15)
    assert_allclose(est.calibration_error(Pte), d.mean(), rtol=1e-12)
    # two-step is a plug-in: never negative
    two = KernelRidgeCalibrationEstimator(alpha=1e-6, method="two_step", mode="canonical")
    assert two.fit(Ptr, ytr).transform(Pte).min() >= 0


def test_kernel_ridge_small_negative_diagonal_matches_brute_force():
    # a negative diagonal entry reproduced by the np.kron brute force (not an artefact)
    Ptr, ytr = _data(20, 3, 32)
    Pte, _ = _data(60, 3, 132)
    alpha = 1e-3
    est = KernelRidgeCalibrationEstimator(alpha=alpha, mode="canonical").fit(Ptr, ytr)
    kern = lambda A, B: _rbf(A, B, 0.5)  # noqa: E731
    bf = np.diag(_bf_kron_h(Ptr, Ptr - np.eye(3)[ytr], Pte, Pte, alpha, kern))
    assert bf.min() < 0
    assert_allclose(est.transform(Pte)[:, 0], bf, rtol=0, atol=1e-8 * np.abs(bf).max())


@pytest.mark.parametrize("method", ["kronecker", "two_step"])
@pytest.mark.parametrize("mode", ["top_label", "classwise", "canonical"])
def test_kernel_ridge_with_alpha_and_paths(method, mode):
    Ptr, ytr = _data(120, 3, 33)
    Pte, yte = _data(300, 3, 34)  # > 256: the tiled risk path of the estimator
    est = KernelRidgeCalibrationEstimator(alpha=1e-3, method=method, mode=mode).fit(Ptr, ytr)
    alphas = [1e-6, 1e-4, 1e-2, 1.0]
    risks, errors = [], []
    for a in alphas:
        fresh = KernelRidgeCalibrationEstimator(alpha=a, method=method, mode=mode).fit(Ptr, ytr)
        wa = est.with_alpha(a)
        assert wa.alpha == a and est.alpha == 1e-3
        assert_allclose(wa.pairwise(Pte[:50]), fresh.pairwise(Pte[:50]), rtol=1e-10,
                        atol=1e-14)
        risks.append(calibration_risk(yte, Pte, wa))
        errors.append(wa.calibration_error(Pte))
        assert_allclose(risks[-1], calibration_risk(yte, Pte, fresh), rtol=1e-10)
    assert_allclose(est.risk_path(Pte, yte, alphas), risks, rtol=1e-10)
    assert_allclose(est.calibration_error_path(Pte, alphas), errors, rtol=1e-10, atol=1e-15)
    # with_alpha leaves the original untouched
    assert_allclose(est.pairwise(Pte[:5]),
                    KernelRidgeCalibrationEstimator(alpha=1e-3, method=method, mode=mode)
                    .fit(Ptr, ytr).pairwise(Pte[:5]), rtol=1e-12)
    with pytest.raises(ValueError, match="alpha"):
        est.with_alpha(0.0)


@pytest.mark.parametrize("bad", [-1.0, 0.0, np.nan])
def test_kernel_ridge_paths_validate_alphas(bad):
    P, y = _data(60, 3, 35)
    est = KernelRidgeCalibrationEstimator(method="two_step").fit(P[:30], y[:30])
    with pytest.raises(ValueError, match="alpha"):
        est.risk_path(P[30:], y[30:], [1e-3, bad])
    with pytest.raises(ValueError, match="alpha"):
        est.calibration_error_path(P[30:], [1e-3, bad])


def test_kernel_ridge_risk_path_unfitted():
    P, y = _data(20, 3, 36)
    with pytest.raises(NotFittedError):
        KernelRidgeCalibrationEstimator().risk_path(P, y, [1e-3])


def test_kernel_ridge_set_params_after_fit_does_not_depend_on_call_history():
    P, y = _data(60, 3, 37)
    used = KernelRidgeCalibrationEstimator(alpha=1e-3).fit(P, y)
    unused = KernelRidgeCalibrationEstimator(alpha=1e-3).fit(P, y)
    used.pairwise(P[:5])
    used.set_params(alpha=1.0)
    unused.set_params(alpha=1.0)
    assert_allclose(used.pairwise(P[:5]), unused.pairwise(P[:5]), rtol=1e-12)


def _landmarks(seed, n, m, n_problems):
    """The documented landmark draw: ``m`` distinct training points per problem, at random.

    Reproduces ``numpy.random.default_rng(seed).choice(n, m, replace=False)`` (sorted), one draw
    per problem from the same generator.
    """
    rng = np.random.default_rng(seed)
    return [np.sort(rng.choice(n, size=m, replace=False)) for _ in range(n_problems)]


@pytest.mark.parametrize("mode", ["top_label", "classwise", "canonical"])
@pytest.mark.parametrize("method", ["kronecker", "two_step"])
def test_nystrom_equals_closed_forms_on_the_approximated_kernel(mode, method):
    Ptr, ytr = _data(24, 3, 3)
    Pa, _ = _data(10, 3, 39)
    # a length scale for which the landmark matrices are well conditioned (the comparison is
    # then not limited by the eigenvalue cut-off of K_mm)
    m, alpha, ls = 9, 1e-3, (0.3 if mode == "canonical" else 0.02)
    gamma = 1 / (2 * ls ** 2)
    est = KernelRidgeCalibrationEstimator(alpha=alpha, method=method, mode=mode, n_components=m,
                                          kernel=GaussianKernel(ls), random_state=7).fit(Ptr, ytr)
    probs = _bf_problems(Ptr, ytr, mode)
    idxs = _landmarks(7, 24, m, len(probs))
    expected = 0.0
    for (Q, T), (Qa, _), idx in zip(probs, _bf_problems(Pa, np.zeros(10, int), mode), idxs):
        Kmm = _rbf(Q[idx], Q[idx], gamma)
        assert np.linalg.cond(Kmm) < 1e3
        proj = _rbf(Q, Q[idx], gamma) @ np.linalg.pinv(Kmm, hermitian=True)  # K_nm K_mm^+

        def kern_approx(A, B, Q=Q, idx=idx, Kmm=Kmm):
            # <phi(a), phi(b)> of the Nystrom features: k_m(a)^T K_mm^+ k_m(b)
            return _rbf(A, Q[idx], gamma) @ np.linalg.pinv(Kmm, hermitian=True) @ \
                _rbf(Q[idx], B, gamma)

        Kt = kern_approx(Q, Q)
        assert_allclose(Kt, proj @ _rbf(Q[idx], Q, gamma), rtol=1e-10, atol=1e-12)
        f = _bf_kron_h if method == "kronecker" else _bf_two_step_h
        expected = expected + f(Q, Q - T, Qa, Qa, alpha, kern_approx)
    scale = np.abs(expected).max()
    assert_allclose(est.pairwise(Pa), expected, rtol=0, atol=1e-8 * scale)
    # same random_state: same landmarks; fit is reproducible
    again = clone(est).fit(Ptr, ytr)
    assert_array_equal(again.pairwise(Pa), est.pairwise(Pa))


@pytest.mark.parametrize("method", ["kronecker", "two_step"])
def test_nystrom_with_many_components_is_nearly_exact(method):
    Ptr, ytr = _data(60, 3, 40)
    Pte, yte = _data(40, 3, 41)
    for mode in ["top_label", "canonical"]:
        exact = KernelRidgeCalibrationEstimator(alpha=1e-3, method=method, mode=mode)
        exact.fit(Ptr, ytr)
        H = exact.pairwise(Pte)
        for m, tol in [(59, 1e-6), (55, 1e-4)]:
            ny = clone(exact).set_params(n_components=m, random_state=0).fit(Ptr, ytr)
            assert_allclose(ny.pairwise(Pte), H, rtol=0, atol=tol * np.abs(H).max())
            assert_allclose(calibration_risk(yte, Pte, ny), calibration_risk(yte, Pte, exact),
                            rtol=tol)
        # m >= n is the exact estimator
        full = clone(exact).set_params(n_components=60, random_state=0).fit(Ptr, ytr)
        assert_allclose(full.pairwise(Pte), H, rtol=1e-12, atol=1e-15)
    # a small m is a real approximation
    small = KernelRidgeCalibrationEstimator(alpha=1e-3, method=method, mode="canonical",
                                            n_components=2, random_state=0).fit(Ptr, ytr)
    exact = KernelRidgeCalibrationEstimator(alpha=1e-3, method=method,
                                            mode="canonical").fit(Ptr, ytr)
    assert not np.allclose(small.pairwise(Pte), exact.pairwise(Pte), rtol=1e-3)


@pytest.mark.parametrize("gamma", [0.5, 3.0, 40.0])
def test_kernel_ridge_gamma_equals_gaussian_kernel(gamma):
    Ptr, ytr = _data(50, 3, 42)
    Pte, _ = _data(30, 3, 43)
    for mode in ["top_label", "canonical"]:
        for method in ["kronecker", "two_step"]:
            a = KernelRidgeCalibrationEstimator(alpha=1e-3, gamma=gamma, method=method,
                                                mode=mode).fit(Ptr, ytr)
            b = KernelRidgeCalibrationEstimator(alpha=1e-3, method=method, mode=mode,
                                                kernel=GaussianKernel(1 / np.sqrt(2 * gamma)))
            b.fit(Ptr, ytr)
            assert_allclose(a.pairwise(Pte), b.pairwise(Pte), rtol=1e-10, atol=1e-15)
            kern = lambda A, B: _rbf(A, B, gamma)  # noqa: E731
            expected = _krr_expected(dict(alpha=1e-3, method=method), Ptr[:20], ytr[:20],
                                     Pte, Pte, mode, kern)
            small = clone(a).fit(Ptr[:20], ytr[:20]).pairwise(Pte)
            assert_allclose(small, expected, rtol=0, atol=1e-8 * np.abs(expected).max())


def test_kernel_ridge_exponential_and_median_kernels():
    Ptr, ytr = _data(20, 3, 44)
    Pte, _ = _data(10, 3, 45)
    est = KernelRidgeCalibrationEstimator(alpha=1e-2, kernel=ExponentialKernel(0.4),
                                          mode="canonical").fit(Ptr, ytr)

    def kern(A, B):
        return np.exp(-np.sqrt(((A[:, None] - B[None]) ** 2).sum(-1)) / 0.4)

    expected = _bf_kron_h(Ptr, Ptr - np.eye(3)[ytr], Pte, Pte, 1e-2, kern)
    assert_allclose(est.pairwise(Pte), expected, rtol=0, atol=1e-9 * np.abs(expected).max())
    # a "median" length scale is resolved on the training inputs; the parameter is untouched
    med = KernelRidgeCalibrationEstimator(kernel=GaussianKernel()).fit(Ptr, ytr)
    assert med.kernel.length_scale == "median"
    assert np.all(np.isfinite(med.transform(Pte)))


# ---------------------------------------------------------------------------------------------
# 5. TemperatureCalibrationEstimator and 6. ZeroCalibrationEstimator


@pytest.mark.parametrize("mode", ["binary", "top_label", "classwise", "canonical"])
@pytest.mark.parametrize("T", [0.4, 1.0, 2.5])
def test_temperature_pairwise_equals_plug_in(mode, T):
    Ptr, ytr = _P_of_mode(mode, 50, 46)
    Pa, _ = _P_of_mode(mode, 30, 47)
    Pb, _ = _P_of_mode(mode, 20, 48)
    est = TemperatureCalibrationEstimator(temperature=T, mode=mode).fit(Ptr, ytr)
    assert est.temperature_ == T
    Ra = _bf_temperature_residuals(Pa, T, mode)
    Rb = _bf_temperature_residuals(Pb, T, mode)
    expected = sum(A @ B.T for A, B in zip(Ra, Rb))
    assert_allclose(est.pairwise(Pa, Pb), expected, rtol=1e-12, atol=1e-16)
    assert_allclose(est.transform(Pa)[:, 0], sum((A * A).sum(axis=1) for A in Ra),
                    rtol=1e-12, atol=1e-16)
    if T == 1.0:
        assert np.abs(est.pairwise(Pa)).max() < 1e-28


def test_temperature_top_label_uses_the_entry_at_argmax_p():
    # g's largest entry is always the one at argmax p (softmax keeps the order and the ties, so
    # the tie rule's mean over tied columns is any one of them)
    P = np.array([[0.4, 0.4, 0.2], [0.2, 0.5, 0.3], [1 / 3, 1 / 3, 1 / 3]])
    est = TemperatureCalibrationEstimator(temperature=2.0, mode="top_label",
                                          labels=[0, 1, 2]).fit(P, [0, 1, 2])
    G = softmax(np.log(P) / 2.0, axis=1)
    r = np.array([0.4 - G[0, 0], 0.5 - G[1, 1], 1 / 3 - G[2, 0]])
    assert_allclose(est.transform(P)[:, 0], r ** 2, rtol=1e-12, atol=1e-30)


@pytest.mark.parametrize("C", [2, 4])
def test_temperature_nll_fit_equals_temperature_scaling(C):
    P, y = _data(300, C, 49, power=3.0)
    for mode in (["binary", "canonical"] if C == 2 else MODES_C3):
        est = TemperatureCalibrationEstimator(mode=mode).fit(P, y)
        ts = TemperatureScaling(input="proba").fit(P, y)
        assert_allclose(est.temperature_, ts.temperature_, rtol=1e-10)
        assert est.temperature is None  # the parameter is not overwritten
    # labels drawn from P**3: the model is underconfident, temperature scaling sharpens (T < 1)
    assert TemperatureCalibrationEstimator().fit(P, y).temperature_ < 1


@pytest.mark.parametrize("mode", ["binary", "top_label", "classwise", "canonical"])
def test_temperature_risk_fit_minimises_training_risk(mode):
    P, y = _P_of_mode(mode, 150, 50, power=2.5)

    def train_risk(log_t):
        Rh = _bf_temperature_residuals(P, np.exp(log_t), mode)
        return _bf_risk(P, y, mode, [A @ A.T for A in Rh])

    grid = np.linspace(np.log(1e-3), np.log(1e3), 601)
    vals = np.array([train_risk(u) for u in grid])
    i = int(np.argmin(vals))
    res = minimize_scalar(train_risk, bounds=(grid[max(i - 1, 0)], grid[min(i + 1, 600)]),
                          method="bounded", options={"xatol": 1e-10})
    est = TemperatureCalibrationEstimator(fit_method="risk", mode=mode).fit(P, y)
    assert calibration_risk(y, P, est) <= res.fun * (1 + 1e-9)
    assert_allclose(np.log(est.temperature_), res.x, atol=1e-4)
    assert_allclose(calibration_risk(y, P, est), train_risk(np.log(est.temperature_)),
                    rtol=1e-12)


@pytest.mark.parametrize("mode", ["binary", "top_label", "classwise", "canonical"])
def test_zero_estimator_risk_is_mean_squared_pair_target(mode):
    P, y = _P_of_mode(mode, 400, 51)
    est = ZeroCalibrationEstimator(mode=mode).fit(P[:10], y[:10] if mode != "classwise"
                                                  else np.arange(10) % 3)
    n = P.shape[0]
    off = ~np.eye(n, dtype=bool)
    expected = sum(np.mean(((Q - T) @ (Q - T).T)[off] ** 2) for Q, T in _bf_problems(P, y, mode))
    assert_allclose(calibration_risk(y, P, est), expected, rtol=1e-12)
    assert_array_equal(est.pairwise(P[:7], P[:5]), np.zeros((7, 5)))
    assert est.calibration_error(P) == 0.0


# ---------------------------------------------------------------------------------------------
# 7. scikit-learn


def _defaults():
    return [BinnedCalibrationEstimator(), KDECalibrationEstimator(),
            KernelRidgeCalibrationEstimator(), TemperatureCalibrationEstimator(),
            ZeroCalibrationEstimator()]


# The reasons for the expected failures of scikit-learn's generic checks are in one table for
# every skcalib estimator: skcalib/_estimator_checks.py.


def _expected_failed(estimator):
    return expected_failed_checks(estimator)


@parametrize_with_checks(_defaults(), expected_failed_checks=_expected_failed)
def test_sklearn_compatible(estimator, check):
    name = getattr(check, "func", check).__name__
    if name not in expected_failed_checks(estimator):
        check(estimator)
        return
    # An expected failure (marked xfail by parametrize_with_checks): re-raised without the
    # frames of sklearn's estimator_checks.py, whose source pytest would re-parse to format each
    # of the 125 expected tracebacks (~0.3 s each).
    try:
        check(estimator)
    except Exception as exc:
        raise AssertionError(f"{name}: {type(exc).__name__}: {exc}") from None


def _variants():
    return [BinnedCalibrationEstimator(n_bins=6), BinnedCalibrationEstimator(
                strategy="quantile", debias=True, mode="classwise"),
            BinnedCalibrationEstimator(n_bins=4, mode="canonical"),
            KDECalibrationEstimator(bandwidth=0.05, mode="canonical"),
            KernelRidgeCalibrationEstimator(), KernelRidgeCalibrationEstimator(
                method="two_step", mode="classwise"),
            KernelRidgeCalibrationEstimator(n_components=30, random_state=0, mode="canonical"),
            TemperatureCalibrationEstimator(), TemperatureCalibrationEstimator(fit_method="risk"),
            ZeroCalibrationEstimator()]


@pytest.mark.parametrize("est", _variants(), ids=repr)
def test_sklearn_properties_on_probabilities(est):
    P, y = _data(150, 3, 52)
    P2, y2 = _data(80, 3, 53)
    params = est.get_params()
    Pc, yc = P.copy(), y.copy()
    assert est.fit(P, y) is est
    assert_array_equal(P, Pc)
    assert_array_equal(y, yc)
    assert est.get_params() == params and clone(est).get_params() == params
    assert est.n_features_in_ == 3 and list(est.classes_) == [0, 1, 2]
    assert est.n_train_ == 150
    P2c = P2.copy()
    t = est.transform(P2)
    H = est.pairwise(P2)
    risk = calibration_risk(y2, P2, est)
    assert_array_equal(P2, P2c)  # not mutated
    assert t.shape == (80, 1) and H.shape == (80, 80)
    assert_allclose(t[:, 0], np.diag(H), rtol=1e-10, atol=1e-15)
    assert_allclose(est.fit_transform(P, y), est.transform(P), rtol=1e-12)
    # refit, clone and pickle give the same function
    for other in [est.fit(P, y), clone(est).fit(P, y), pickle.loads(pickle.dumps(est))]:
        assert_allclose(other.pairwise(P2), H, rtol=1e-12, atol=1e-16)
        assert_allclose(calibration_risk(y2, P2, other), risk, rtol=1e-12)
    # order and subset invariance
    perm = np.random.default_rng(0).permutation(80)
    assert_allclose(est.transform(P2[perm]), t[perm], rtol=1e-10, atol=1e-15)
    assert_allclose(est.transform(P2[:7]), t[:7], rtol=1e-10, atol=1e-15)
    assert_allclose(est.pairwise(P2[perm], P2[:9]), H[perm][:, :9], rtol=1e-10, atol=1e-15)
    assert_allclose(calibration_risk(y2[perm], P2[perm], est), risk, rtol=1e-10)
    # lists, F-order, read-only and float32 inputs
    assert_allclose(est.transform(P2.tolist()), t, rtol=1e-12, atol=1e-16)
    assert_allclose(est.transform(np.asfortranarray(P2)), t, rtol=1e-12, atol=1e-16)
    ro = P2.copy()
    ro.setflags(write=False)
    assert_allclose(est.transform(ro), t, rtol=1e-12, atol=1e-16)
    assert np.all(np.isfinite(est.transform(P2.astype(np.float32))))
    with pytest.raises(NotFittedError):
        clone(est).transform(P2)


def test_gridsearch_and_cross_val_score():
    P, y = _data(300, 3, 54, power=3.0)
    scorer = get_scorer("neg_calibration_risk")
    alphas = [1e-5, 1e-3, 1e-1]
    cv = KFold(3, shuffle=True, random_state=0)
    search = GridSearchCV(KernelRidgeCalibrationEstimator(), {"alpha": alphas}, scoring=scorer,
                          cv=cv).fit(P, y)
    expected = np.array([[-calibration_risk(y[te], P[te],
                                            KernelRidgeCalibrationEstimator(alpha=a)
                                            .fit(P[tr], y[tr]))
                          for tr, te in cv.split(P)] for a in alphas])
    assert_allclose(search.cv_results_["mean_test_score"], expected.mean(axis=1), rtol=1e-10)
    assert search.best_params_["alpha"] == alphas[int(np.argmax(expected.mean(axis=1)))]
    assert_allclose(search.best_estimator_.pairwise(P[:5]),
                    KernelRidgeCalibrationEstimator(alpha=search.best_params_["alpha"])
                    .fit(P, y).pairwise(P[:5]), rtol=1e-12)
    # the estimator's own score (scoring=None) is the same number; the default cv works too
    own = GridSearchCV(KernelRidgeCalibrationEstimator(), {"alpha": alphas}, cv=cv).fit(P, y)
    assert_allclose(own.cv_results_["mean_test_score"], search.cv_results_["mean_test_score"],
                    rtol=1e-12)
    default = GridSearchCV(KernelRidgeCalibrationEstimator(), {"alpha": alphas},
                           scoring=scorer).fit(P, y)
    assert default.best_params_["alpha"] in alphas
    scores = cross_val_score(BinnedCalibrationEstimator(n_bins=5), P, y, cv=cv)
    scores2 = cross_val_score(BinnedCalibrationEstimator(n_bins=5), P, y, cv=cv, scoring=scorer)
    assert_allclose(scores, scores2, rtol=1e-12)
    assert_allclose(scores, [-calibration_risk(y[te], P[te], BinnedCalibrationEstimator(
        n_bins=5).fit(P[tr], y[tr])) for tr, te in cv.split(P)], rtol=1e-12)
    assert np.all(scores < 0)
    # a grid over several families' parameters through the scorer
    GridSearchCV(KDECalibrationEstimator(), {"bandwidth": [0.01, 0.1]}, scoring=scorer,
                 cv=3).fit(P, y)


def test_scorer_passes_sample_weight_and_rejects_other_estimators():
    P, y = _data(60, 3, 55)
    scorer = get_scorer("neg_calibration_risk")
    est = ZeroCalibrationEstimator().fit(P, y)
    assert_allclose(scorer(est, P, y), -calibration_risk(y, P, est), rtol=1e-15)
    w = np.random.default_rng(0).random(60)
    assert_allclose(scorer(est, P, y, sample_weight=w),
                    -calibration_risk(y, P, est, sample_weight=w), rtol=1e-15)
    assert scorer(est, P, y, sample_weight=w) != scorer(est, P, y)
    with pytest.raises(ValueError, match="sample_weight"):
        scorer(est, P, y, sample_weight=np.ones(59))
    with pytest.raises(TypeError, match="calibration estimation"):
        scorer(SKCE().fit(P, y), P, y)


def test_class_missing_from_training_labels_needs_labels():
    P, y = _data(120, 3, 56)
    y2 = np.where(y == 2, 1, y)  # class 2 absent
    for est in _defaults():
        with pytest.raises(ValueError, match="labels"):
            clone(est).fit(P, y2)
        fitted = clone(est).set_params(labels=[0, 1, 2]).fit(P, y2)
        assert list(fitted.classes_) == [0, 1, 2]
        assert np.isfinite(calibration_risk(y, P, fitted))
    # an absent class in the classwise notion: its problem has indicator 0 everywhere
    b = BinnedCalibrationEstimator(n_bins=5, mode="classwise", labels=[0, 1, 2]).fit(P, y2)
    expected = 3 * calibration_error(y2, P, norm="l2", squared=True, n_bins=5, mode="classwise",
                                     labels=[0, 1, 2])
    assert_allclose(b.calibration_error(P), expected, rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# 8. Bad input


@pytest.mark.parametrize("est, match", [
    (BinnedCalibrationEstimator(n_bins=0), "n_bins"),
    (BinnedCalibrationEstimator(n_bins=2.5), "n_bins"),
    (BinnedCalibrationEstimator(n_bins=2**63), "n_bins"),
    (BinnedCalibrationEstimator(n_bins=1e20), "n_bins"),
    (BinnedCalibrationEstimator(debias=1), "debias"),
    (BinnedCalibrationEstimator(strategy="median_variance"), "strategy"),
    (BinnedCalibrationEstimator(debias="yes"), "debias"),
    (BinnedCalibrationEstimator(mode="toplabel"), "mode"),
    (BinnedCalibrationEstimator(mode="class-wise"), "mode"),
    (KDECalibrationEstimator(bandwidth=0), "bandwidth"),
    (KDECalibrationEstimator(bandwidth=-0.1), "bandwidth"),
    (KDECalibrationEstimator(bandwidth=np.nan), "bandwidth"),
    (KDECalibrationEstimator(mode="Canonical"), "mode"),
    (KernelRidgeCalibrationEstimator(alpha=0), "alpha"),
    (KernelRidgeCalibrationEstimator(alpha=-1e-3), "alpha"),
    (KernelRidgeCalibrationEstimator(method="kron"), "method"),
    (KernelRidgeCalibrationEstimator(kernel="linear"), "kernel"),
    (KernelRidgeCalibrationEstimator(kernel=SKCE()), "kernel"),
    (KernelRidgeCalibrationEstimator(n_components=0), "n_components"),
    (KernelRidgeCalibrationEstimator(gamma=0), "gamma"),
    (KernelRidgeCalibrationEstimator(mode="top"), "mode"),
    (TemperatureCalibrationEstimator(temperature=0), "temperature"),
    (TemperatureCalibrationEstimator(temperature=-1.0), "temperature"),
    (TemperatureCalibrationEstimator(fit_method="mse"), "fit_method"),
    (TemperatureCalibrationEstimator(eps=0), "eps"),
    (TemperatureCalibrationEstimator(mode="canonical "), "mode"),
    (ZeroCalibrationEstimator(mode="class_wise"), "mode"),
    (ZeroCalibrationEstimator(mode="binary"), "binary"),
])
def test_bad_parameters(est, match):
    P, y = _data(30, 3, 57)
    Pc = P.copy()
    with pytest.raises((ValueError, TypeError), match=match):
        est.fit(P, y)
    assert_array_equal(P, Pc)
    assert not hasattr(est, "classes_")


def test_kernel_ridge_bad_random_state_leaves_estimator_unfitted():
    P, y = _data(40, 3, 59)
    est = KernelRidgeCalibrationEstimator(n_components=3, random_state="x")
    with pytest.raises(ValueError, match="random_state"):
        est.fit(P, y)
    with pytest.raises(NotFittedError):
        est.transform(P)


@pytest.mark.parametrize("est", _defaults(), ids=repr)
def test_bad_probabilities_and_labels(est):
    P, y = _data(40, 3, 58)
    Pc, yc = P.copy(), y.copy()
    with pytest.raises(ValueError, match="sum to 1"):
        clone(est).fit(P * 0.9, y)
    with pytest.raises(ValueError, match="probabilities"):
        clone(est).fit(P * 2, y)
    with pytest.raises(ValueError):
        clone(est).fit(P, y[:-1])
    with pytest.raises(ValueError):
        clone(est).fit(np.where(np.isnan(P), 0, P) + np.where(P == P.max(), np.nan, 0), y)
    fitted = clone(est).fit(P, y)
    with pytest.raises(ValueError, match="columns"):
        fitted.transform(P[:, :2] / P[:, :2].sum(axis=1, keepdims=True))
    with pytest.raises(ValueError, match="columns"):
        fitted.pairwise(P, np.hstack([P, np.zeros((40, 1))]))
    with pytest.raises(ValueError, match="sum to 1"):
        fitted.transform(P * 0.9)
    with pytest.raises(ValueError, match="binary"):
        fitted.transform(P[:, 0])  # one column is a binary probability
    with pytest.raises(ValueError, match="labels"):
        calibration_risk(np.where(y == 0, 9, y), P, fitted)
    with pytest.raises(ValueError, match="labels"):
        clone(est).set_params(labels=[0, 1, 2]).fit(P, np.where(y == 0, 9, y))
    with pytest.raises(ValueError, match="2 samples"):
        calibration_risk(y[:1], P[:1], fitted)
    assert_array_equal(P, Pc)
    assert_array_equal(y, yc)


# ---------------------------------------------------------------------------------------------
# 9. Issue 11: sample weights, set_output, validation at the start of every call


def _bf_weighted_risk(P, y, mode, Hs, w):
    """``sum_k sum_{i != j} w_i w_j (T^k_ij - H^k_ij)^2 / sum_{i != j} w_i w_j``, by loops."""
    n = P.shape[0]
    num = 0.0
    for (Q, T), H in zip(_bf_problems(P, y, mode), Hs):
        R = Q - T
        for i in range(n):
            for j in range(n):
                if i != j:
                    num += w[i] * w[j] * (R[i] @ R[j] - H[i, j]) ** 2
    den = sum(w[i] * w[j] for i in range(n) for j in range(n) if i != j)
    return num / den


@pytest.mark.parametrize("mode", ["binary", "top_label", "classwise", "canonical"])
def test_weighted_risk_equals_brute_force_double_loop(mode):
    Ptr, ytr = _P_of_mode(mode, 80, 60)
    Pte, yte = _P_of_mode(mode, 40, 61)
    w = np.random.default_rng(62).random(40) * 3.0
    w[[3, 17]] = 0.0
    wc = w.copy()
    for est in _estimators_for(mode)[::2] + [_estimators_for(mode)[3]]:  # tiled and plug-in paths
        est.fit(Ptr, ytr)
        Hs = _per_problem_h(est, Ptr, ytr, Pte, mode)
        expected = _bf_weighted_risk(Pte, yte, mode, Hs, w)
        got = calibration_risk(yte, Pte, est, sample_weight=w)
        assert_allclose(got, expected, rtol=1e-11, err_msg=repr(est))
        assert_allclose(est.score(Pte, yte, sample_weight=w), -expected, rtol=1e-11)
        # the same through a matrix h
        H = Hs[0] if len(Hs) == 1 else np.stack(Hs)
        assert_allclose(calibration_risk(yte, Pte, H, mode=mode, sample_weight=w), expected,
                        rtol=1e-11)
    assert_array_equal(w, wc)  # not mutated


def test_weighted_risk_properties():
    P, y = _data(300, 3, 63)  # > 256 rows: several tiles
    est = KernelRidgeCalibrationEstimator(alpha=1e-3).fit(*_data(100, 3, 64))
    plug = KDECalibrationEstimator(bandwidth=0.1).fit(*_data(100, 3, 64))
    for h in (est, plug):
        base = calibration_risk(y, P, h)
        # constant weights, however large, are the unweighted statistic
        for c in (1.0, 7.5, 1e300):
            assert_allclose(calibration_risk(y, P, h, sample_weight=np.full(300, c)), base,
                            rtol=1e-12)
        # zero weights drop the samples
        w = np.ones(300)
        w[::3] = 0.0
        keep = w > 0
        assert_allclose(calibration_risk(y, P, h, sample_weight=w),
                        calibration_risk(y[keep], P[keep], h), rtol=1e-12)


@pytest.mark.parametrize("bad, match", [
    (np.ones(39), "sample_weight has 39"),
    (-np.ones(40), "non-negative"),
    (np.r_[1.0, np.zeros(39)], "at least 2 samples"),
    (np.zeros(40), "sample_weight"),
    (np.r_[np.nan, np.ones(39)], "sample_weight"),
])
def test_weighted_risk_errors(bad, match):
    P, y = _data(40, 3, 65)
    est = ZeroCalibrationEstimator().fit(P, y)
    with pytest.raises(ValueError, match=match):
        calibration_risk(y, P, est, sample_weight=bad)
    with pytest.raises(ValueError, match=match):
        est.score(P, y, sample_weight=bad)


def test_weighted_calibration_error_is_the_weighted_mean_of_transform():
    P, y = _data(120, 3, 66)
    est = KernelRidgeCalibrationEstimator(alpha=1e-3, mode="canonical").fit(P[:60], y[:60])
    w = np.random.default_rng(0).random(60)
    t = est.transform(P[60:])[:, 0]
    assert_allclose(est.calibration_error(P[60:], sample_weight=w), np.sum(w * t) / np.sum(w),
                    rtol=1e-12)
    assert_allclose(est.calibration_error(P[60:], sample_weight=np.full(60, 1e308)),
                    est.calibration_error(P[60:]), rtol=1e-12)
    with pytest.raises(ValueError, match="sample_weight"):
        est.calibration_error(P[60:], sample_weight=np.ones(3))


@pytest.mark.parametrize("est", _defaults(), ids=repr)
def test_set_output_pandas(est):
    pd = pytest.importorskip("pandas")
    P, y = _data(60, 3, 67)
    index = pd.RangeIndex(100, 160)
    df = pd.DataFrame(P, columns=["a", "b", "c"], index=index)
    expected = clone(est).fit(P, y).transform(P)
    est = clone(est).set_output(transform="pandas")
    out = est.fit_transform(df, y)
    name = type(est).__name__.lower() + "0"
    assert isinstance(out, pd.DataFrame) and list(out.columns) == [name]
    assert out.index.equals(index)
    assert_allclose(out.to_numpy(), expected, rtol=1e-12, atol=1e-15)
    out2 = est.transform(P)  # numpy in, DataFrame out
    assert isinstance(out2, pd.DataFrame)
    assert_allclose(out2.to_numpy(), expected, rtol=1e-12, atol=1e-15)
    assert list(est.get_feature_names_out()) == [name]
    assert isinstance(est.calibration_error(P), float)  # not wrapped
    with pytest.raises(ValueError, match="input_features"):
        est.get_feature_names_out(["a", "b"])
    with pytest.raises(NotFittedError):
        clone(est).get_feature_names_out()


@pytest.mark.parametrize("X", [None, 0.5, {"a": 1}, [[0.2, 0.8], [0.1, 0.2, 0.7]], "abc"],
                         ids=["None", "scalar", "dict", "ragged", "str"])
def test_methods_give_the_messages_of_fit(X):
    P, y = _data(30, 3, 68)
    fitted = KDECalibrationEstimator().fit(P, y)
    with pytest.raises((ValueError, TypeError)) as fit_exc:
        KDECalibrationEstimator().fit(X, y)
    calls = [fitted.transform, fitted.calibration_error, fitted.pairwise,
             lambda X: fitted.score(X, y),
             lambda X: get_scorer("neg_calibration_risk")(fitted, X, y)]
    for call in calls:
        with pytest.raises(type(fit_exc.value)) as exc:
            call(X)
        assert str(exc.value) == str(fit_exc.value)


@pytest.mark.parametrize("h", ["abc", None, object(), {"a": 1}, [[1.0, 2.0], [3.0]],
                               SKCE()], ids=["str", "None", "object", "dict", "ragged", "SKCE"])
def test_risk_rejects_h_of_the_wrong_type(h):
    P, y = _data(10, 3, 69)
    with pytest.raises(TypeError, match="^h must be"):
        calibration_risk(y, P, h)
    # checked first: even with invalid probabilities the message is about h
    with pytest.raises(TypeError, match="^h must be"):
        calibration_risk(y, None, h)


def test_with_alpha_unfitted_raises_not_fitted():
    with pytest.raises(NotFittedError):
        KernelRidgeCalibrationEstimator().with_alpha(1e-3)


@pytest.mark.parametrize("alphas, exc", [
    ([[1e-3, 1e-2]], ValueError), ("abc", TypeError), ({"a": 1}, TypeError), (None, TypeError),
    ([1e-3, "x"], TypeError), ([], ValueError),
])
def test_alphas_are_one_dimensional_positive_and_checked_first(alphas, exc):
    P, y = _data(40, 3, 70)
    est = KernelRidgeCalibrationEstimator().fit(P, y)
    for call in (lambda: est.risk_path(None, y, alphas), lambda: est.transform_path(None, alphas),
                 lambda: est.calibration_error_path(None, alphas)):
        with pytest.raises(exc, match="alphas"):
            call()


def test_paper_grids_validate_their_arguments():
    from skcalib.estimation import default_candidates, default_ridge_grids, paper_grids

    for bad in (0, 2.5, "100", None, True):
        with pytest.raises((ValueError, TypeError), match="n_train"):
            paper_grids(bad)
        with pytest.raises((ValueError, TypeError), match="n_train"):
            default_candidates(bad, "top_label")
        with pytest.raises((ValueError, TypeError), match="n_train"):
            default_ridge_grids(bad)
    with pytest.raises(ValueError, match="mode"):
        paper_grids(100, "toplabel")
    with pytest.raises(ValueError, match="mode"):
        default_candidates(100, "auto")  # the notion must be resolved
    with pytest.raises(ValueError, match="grids"):
        default_candidates(100, "top_label", grids="papers")
    with pytest.raises(ValueError, match="n_components"):
        default_candidates(100, "top_label", n_components=0)
    with pytest.raises(ValueError, match="random_state"):
        default_candidates(100, "top_label", random_state="0")
    assert paper_grids(100, "binary") == paper_grids(100, "top_label")


def test_extreme_ridge_and_width_give_clear_errors():
    """Issue 11 item 7: a ridge so small that the system is singular in floating point, and a
    width whose length scale underflows, raise ``ValueError`` naming the parameter (they gave
    an overflow RuntimeWarning and a message about ``length_scale``)."""
    P, y = _data(40, 3, 71)
    for method in ("kronecker", "two_step"):
        est = KernelRidgeCalibrationEstimator(alpha=1e-320, method=method)
        with pytest.raises(ValueError, match="alpha=1e-320 is too small"):
            est.fit(P, y).transform(P)
        fitted = KernelRidgeCalibrationEstimator(method=method).fit(P, y)
        with pytest.raises(ValueError, match="alpha=1e-320 is too small"):
            fitted.risk_path(P, y, [1e-3, 1e-320])
        with pytest.raises(ValueError, match="alpha=1e-320 is too small"):
            fitted.with_alpha(1e-320).calibration_error(P)
    with pytest.raises(ValueError, match=r"gamma=1e\+308 is out of range"):
        KernelRidgeCalibrationEstimator(gamma=1e308).fit(P, y)


@pytest.mark.parametrize("est, bad", [
    (BinnedCalibrationEstimator(debias=True), {"debias": "yes"}),
    (KernelRidgeCalibrationEstimator(), {"alpha": -1.0}),
    (KernelRidgeCalibrationEstimator(), {"method": "kron"}),
    (KDECalibrationEstimator(), {"bandwidth": 0.0}),
    (TemperatureCalibrationEstimator(), {"eps": 2.0}),
    (ZeroCalibrationEstimator(), {"mode": "toplabel"}),
], ids=repr)
def test_parameters_set_after_fit_are_checked_at_every_call(est, bad):
    """Issue 11 item 3: a parameter made invalid by ``set_params`` after ``fit`` is reported by
    every method, not silently used (``debias="yes"`` was read as True)."""
    P, y = _data(40, 3, 72)
    est.fit(P, y).set_params(**bad)
    (name,) = bad
    calls = [est.transform, est.calibration_error, est.pairwise, lambda X: est.score(X, y),
             lambda X: calibration_risk(y, X, est)]
    for call in calls:
        with pytest.raises((ValueError, TypeError), match=name):
            call(P)
