"""Sample weights of the kernel errors (SKCE, MMCE, UCME; functions, estimators, scorers), early
parameter checks, and the estimator classes on predictive distributions.

Every weighted number is checked against a brute-force computation written here: a dense matrix
of ``h_ij`` (or of the UCME witness values ``W_ij``) from the closed forms, and the weighted
formulas ``sum_{i != j} w_i w_j h_ij / sum_{i != j} w_i w_j`` (U),
``sum_{i, j} w_i w_j h_ij / (sum w)**2`` (V), the weight-combined block U-statistics, and the
weighted mean witness.
"""

import copy
import math
from fractions import Fraction

import numpy as np
import pytest
import sklearn
from numpy.testing import assert_allclose
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold, cross_validate

from skcalib import (
    MMCE,
    SKCE,
    UCME,
    CalibrationError,
    _pairwise,
    make_calibration_scorer,
    mmce,
    skce,
    ucme,
)
from skcalib._validation import check_labels_and_probabilities
from skcalib.distributions import Laplace, Normal
from skcalib.kernels import GaussianKernel, TensorProductKernel, WassersteinKernel, tensor
from skcalib._problems.estimates import contributions
from skcalib._problems.terms import classification_term

GK = GaussianKernel(0.5)
LS_TARGET = 0.8
KD = tensor(WassersteinKernel(1.5), GaussianKernel(LS_TARGET))


# --------------------------------------------------------------------------------------------
# data and brute force


def _cls(n=37, C=3, seed=0):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(C) * 0.7, size=n)
    y = rng.integers(0, C, size=n)
    return y, P


def _weights(n, seed=1, zeros=True):
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.1, 3.0, size=n)
    if zeros:
        w[rng.choice(n, size=max(1, n // 6), replace=False)] = 0.0
    return w


def _dense_skce(y, P, ls=0.5):
    """h_ij = exp(-|p_i - p_j|^2 / (2 ls^2)) (e_{y_i} - p_i)^T (e_{y_j} - p_j), loop by loop."""
    n, C = P.shape
    H = np.empty((n, n))
    for i in range(n):
        ri = np.eye(C)[y[i]] - P[i]
        for j in range(n):
            rj = np.eye(C)[y[j]] - P[j]
            H[i, j] = math.exp(-np.sum((P[i] - P[j]) ** 2) / (2 * ls * ls)) * float(ri @ rj)
    return H


def _dense_mmce(y, P, ls=0.4):
    """h_ij = exp(-|r_i - r_j| / ls) (c_i - r_i)(c_j - r_j) (no ties in the test data)."""
    r = P.max(axis=1)
    c = (P.argmax(axis=1) == y).astype(float)
    K = np.exp(-np.abs(r[:, None] - r[None, :]) / ls)
    return K * np.outer(c - r, c - r)


def _normal_e1(m, s, y, ls):
    v = ls * ls + s * s
    return ls / math.sqrt(v) * math.exp(-(m - y) ** 2 / (2 * v))


def _dense_normal(mu, sd, t, ls_pred=1.5, ls_target=LS_TARGET):
    """SKCE h of Normal predictions, W2 kernel exp(-W2/ls_pred), Gaussian target kernel."""
    n = len(mu)
    H = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            kp = math.exp(-math.hypot(mu[i] - mu[j], sd[i] - sd[j]) / ls_pred)
            ky = math.exp(-(t[i] - t[j]) ** 2 / (2 * ls_target ** 2))
            v2 = ls_target ** 2 + sd[i] ** 2 + sd[j] ** 2
            e2 = ls_target / math.sqrt(v2) * math.exp(-(mu[i] - mu[j]) ** 2 / (2 * v2))
            H[i, j] = kp * (ky - _normal_e1(mu[i], sd[i], t[j], ls_target)
                            - _normal_e1(mu[j], sd[j], t[i], ls_target) + e2)
    return H


def _u(H, w):
    W = np.outer(w, w)
    np.fill_diagonal(W, 0.0)
    return (W * H).sum() / W.sum()


def _v(H, w):
    return (np.outer(w, w) * H).sum() / w.sum() ** 2


def _block(H, w, B):
    num = den = 0.0
    for b in range(len(w) // B):
        s = slice(b * B, (b + 1) * B)
        W = np.outer(w[s], w[s])
        np.fill_diagonal(W, 0.0)
        num += (W * H[s, s]).sum()
        den += W.sum()
    return num / den


def _brute(H, w, estimator, B=2):
    return {"unbiased": lambda: _u(H, w), "biased": lambda: _v(H, w),
            "block": lambda: _block(H, w, B)}[estimator]()


def _witness_cls(y, P, tP, ty, ls=0.5):
    """W_ij = exp(-|p_i - t_j|^2 / (2 ls^2)) (1{y_i = ty_j} - p_i[ty_j])."""
    n, J = len(y), len(ty)
    W = np.empty((n, J))
    for i in range(n):
        for j in range(J):
            k = math.exp(-np.sum((P[i] - tP[j]) ** 2) / (2 * ls * ls))
            W[i, j] = k * (float(y[i] == ty[j]) - P[i, ty[j]])
    return W


def _ucme_brute(W, w):
    m = (w[:, None] * W).sum(axis=0) / w.sum()
    return float(m @ m / W.shape[1])


# --------------------------------------------------------------------------------------------
# the engine


def test_pair_weight_sums_are_exact_without_cancellation():
    rng = np.random.default_rng(0)
    w = rng.uniform(size=50)
    assert_allclose(_pairwise.pair_weight_sum(w), w.sum() ** 2 - (w ** 2).sum(), rtol=1e-13)
    # One dominant weight: (sum w)^2 - sum w^2 cancels to 0 in float64, the prefix form does not.
    w = np.array([1.0, 1e-9, 2e-9, 3e-9])
    exact = sum(Fraction(a) * Fraction(b) for i, a in enumerate(w) for j, b in enumerate(w)
                if i != j)
    assert_allclose(_pairwise.pair_weight_sum(w), float(exact), rtol=1e-14)
    assert _pairwise.pair_weight_sum([2.0]) == 0.0
    B = 4
    w = rng.uniform(size=23)
    expected = [w[b * B:(b + 1) * B].sum() ** 2 - (w[b * B:(b + 1) * B] ** 2).sum()
                for b in range(23 // B)]
    assert_allclose(_pairwise.block_pair_weights(w, B), expected, rtol=1e-13)


@pytest.mark.parametrize("generic", [False, True], ids=["with_weights", "generic"])
@pytest.mark.parametrize("chunk_size", [1, 7, 1000])
def test_engine_weighted_statistics_equal_brute_force(generic, chunk_size):
    y, P = _cls(53, 4, 0)
    H = _dense_skce(y, P)
    w = _weights(53)
    data = check_labels_and_probabilities(y, P, labels=np.arange(4))
    base = classification_term(data, TensorProductKernel(GK))
    term = _pairwise.WeightedTerm(base, w) if generic else _pairwise.weighted(base, w)
    assert isinstance(term, _pairwise.WeightedTerm) == generic
    assert_allclose(term.weights, _weights(53), rtol=0)  # not w itself: the term holds w
    kw = dict(chunk_size=chunk_size)
    assert_allclose(_pairwise.u_statistic(term, **kw), _u(H, w), rtol=1e-11)
    assert_allclose(_pairwise.v_statistic(term, **kw), _v(H, w), rtol=1e-11)
    WH = np.outer(w, w) * H
    assert_allclose(_pairwise.dense_matrix(term), WH, rtol=1e-11, atol=1e-16)
    assert_allclose(_pairwise.row_sums(term, **kw), WH.sum(1) - np.diag(WH), rtol=1e-10,
                    atol=1e-14)
    for B in [2, 3, 5, 26]:
        vals, bw = _pairwise.block_statistics(term, B, return_weights=True, **kw)
        for b in range(53 // B):
            s = slice(b * B, (b + 1) * B)
            Wb = np.outer(w[s], w[s])
            np.fill_diagonal(Wb, 0.0)
            assert_allclose(bw[b], Wb.sum(), rtol=1e-12)
            expected = (Wb * H[s, s]).sum() / Wb.sum() if Wb.sum() > 0 else 0.0
            assert_allclose(vals[b], expected, rtol=1e-10, atol=1e-15)


def test_engine_large_block_path_weighted():
    # B >= 64 runs pair sums per block (the third path of block_statistics).
    y, P = _cls(200, 3, 3)
    H = _dense_skce(y, P)
    w = _weights(200, seed=4)
    for B in [64, 100]:
        got = skce(y, P, kernel=GK, estimator="block", block_size=B, sample_weight=w,
                   chunk_size=32)
        assert_allclose(got, _block(H, w, B), rtol=1e-10)


def test_weighted_helper_contract():
    y, P = _cls(10, 3, 5)
    data = check_labels_and_probabilities(y, P, labels=np.arange(3))
    base = classification_term(data, TensorProductKernel(GK))
    assert _pairwise.weighted(base, None) is base
    wt = _pairwise.weighted(base, np.ones(10))
    assert not isinstance(wt, _pairwise.WeightedTerm)  # ResidualTerm.with_weights: fused path
    assert hasattr(wt, "block_sum") and not hasattr(_pairwise.WeightedTerm(base, np.ones(10)),
                                                    "block_sum")
    with pytest.raises(ValueError, match="already weighted"):
        _pairwise.weighted(wt, np.ones(10))
    with pytest.raises(ValueError, match="sample_weight"):
        _pairwise.weighted(base, np.ones(9))


def test_weighted_memory_is_bounded_by_tiles():
    import tracemalloc

    y, P = _cls(5000, 3, 6)
    w = _weights(5000, seed=7)
    data = check_labels_and_probabilities(y, P, labels=np.arange(3))
    base = classification_term(data, TensorProductKernel(GK))
    for term in (_pairwise.weighted(base, w), _pairwise.WeightedTerm(base, w)):
        tracemalloc.start()
        _pairwise.u_statistic(term, chunk_size=256)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert peak < 20e6  # n x n would be 200 MB


# --------------------------------------------------------------------------------------------
# functions against brute force


@pytest.mark.parametrize("estimator,B", [("unbiased", 2), ("biased", 2), ("block", 2),
                                         ("block", 3), ("block", 7)])
def test_weighted_skce_and_mmce_equal_brute_force(estimator, B):
    y, P = _cls(41, 3, 8)
    w = _weights(41, seed=9)
    got = skce(y, P, kernel=GK, estimator=estimator, block_size=B, sample_weight=w,
               labels=[0, 1, 2], chunk_size=8)
    assert_allclose(got, _brute(_dense_skce(y, P), w, estimator, B), rtol=1e-10)
    got = mmce(y, P, estimator=estimator, block_size=B, sample_weight=w, squared=True,
               labels=[0, 1, 2])
    assert_allclose(got, _brute(_dense_mmce(y, P), w, estimator, B), rtol=1e-10)


def test_weighted_ucme_equals_brute_force():
    y, P = _cls(45, 3, 10)
    w = _weights(45, seed=11)
    tP, ty = _cls(6, 3, 12)[1], np.array([0, 2, 1, 1, 0, 2])
    got = ucme(y, P, kernel=GK, test_predictions=tP, test_targets=ty, sample_weight=w,
               chunk_size=7)
    assert_allclose(got, _ucme_brute(_witness_cls(y, P, tP, ty), w), rtol=1e-11)


@pytest.mark.parametrize("estimator", ["unbiased", "biased", "block"])
def test_weighted_skce_of_normal_distributions_equals_brute_force(estimator):
    rng = np.random.default_rng(13)
    n = 30
    mu, sd = rng.normal(size=n), rng.uniform(0.3, 1.5, size=n)
    t = mu + sd * rng.normal(size=n) * 1.3
    w = _weights(n, seed=14)
    H = _dense_normal(mu, sd, t)
    got = skce(t, Normal(mu, sd), kernel=KD, estimator=estimator, block_size=4, sample_weight=w)
    assert_allclose(got, _brute(H, w, estimator, 4), rtol=1e-10)
    # the generic wrapper around the distribution term (no fused sums) agrees
    from skcalib._problems.estimates import estimate
    from skcalib._problems.terms import distribution_term

    term = _pairwise.WeightedTerm(distribution_term(Normal(mu, sd), t, KD), w)
    vals = {"unbiased": lambda: _pairwise.u_statistic(term, chunk_size=7),
            "biased": lambda: _pairwise.v_statistic(term, chunk_size=7),
            "block": lambda: estimate(distribution_term(Normal(mu, sd), t, KD), "block", 4,
                                      sample_weight=w)}
    assert_allclose(vals[estimator](), _brute(H, w, estimator, 4), rtol=1e-10)
    # unit weights are the unweighted estimate
    assert_allclose(skce(t, Normal(mu, sd), kernel=KD, estimator=estimator, block_size=4,
                         sample_weight=np.ones(n)),
                    skce(t, Normal(mu, sd), kernel=KD, estimator=estimator, block_size=4),
                    rtol=1e-12)


def test_weighted_ucme_of_normal_distributions_equals_brute_force():
    rng = np.random.default_rng(15)
    n = 25
    mu, sd = rng.normal(size=n), rng.uniform(0.3, 1.5, size=n)
    t = mu + sd * rng.normal(size=n)
    w = _weights(n, seed=16)
    tmu, tsd, tt = np.array([0.0, 1.0, -0.5]), np.array([1.0, 0.5, 2.0]), np.array([0.3, 1.2, 0.0])
    W = np.empty((n, 3))
    for i in range(n):
        for j in range(3):
            kp = math.exp(-math.hypot(mu[i] - tmu[j], sd[i] - tsd[j]) / 1.5)
            ky = math.exp(-(t[i] - tt[j]) ** 2 / (2 * LS_TARGET ** 2))
            W[i, j] = kp * (ky - _normal_e1(mu[i], sd[i], tt[j], LS_TARGET))
    got = ucme(t, Normal(mu, sd), kernel=KD, test_predictions=Normal(tmu, tsd), test_targets=tt,
               sample_weight=w)
    assert_allclose(got, _ucme_brute(W, w), rtol=1e-11)


# --------------------------------------------------------------------------------------------
# unit, zero, integer and huge weights


def _all_metrics():
    """(name, f(y, P, **kw)) for every weighted classification metric with fixed kernels."""
    tl = dict(test_predictions=_cls(5, 3, 20)[1], test_targets=[0, 1, 2, 2, 1])
    return [
        ("skce-u", lambda y, P, **kw: skce(y, P, kernel=GK, labels=[0, 1, 2], **kw)),
        ("skce-v", lambda y, P, **kw: skce(y, P, kernel=GK, estimator="biased", labels=[0, 1, 2],
                                           **kw)),
        ("mmce-v", lambda y, P, **kw: mmce(y, P, labels=[0, 1, 2], **kw)),
        ("mmce-u", lambda y, P, **kw: mmce(y, P, estimator="unbiased", squared=True,
                                           labels=[0, 1, 2], **kw)),
        ("ucme", lambda y, P, **kw: ucme(y, P, kernel=GK, labels=[0, 1, 2], **tl, **kw)),
    ]


@pytest.mark.parametrize("name,f", _all_metrics(), ids=[m[0] for m in _all_metrics()])
def test_unit_zero_and_huge_weights(name, f):
    y, P = _cls(40, 3, 21)
    base = f(y, P)
    assert_allclose(f(y, P, sample_weight=np.ones(40)), base, rtol=1e-12, atol=1e-16)
    assert_allclose(f(y, P, sample_weight=np.full(40, 1e308)), base, rtol=1e-12, atol=1e-16)
    assert_allclose(f(y, P, sample_weight=np.full(40, 1e-300)), base, rtol=1e-12, atol=1e-16)
    # only ratios matter: scaling by 1e300 changes nothing, and nothing overflows
    w = _weights(40, seed=22)
    assert_allclose(f(y, P, sample_weight=w * 1e300), f(y, P, sample_weight=w), rtol=1e-12)
    # a zero weight removes the row (U-statistics: the row's pairs; V and UCME: the row)
    keep = np.ones(40, bool)
    keep[[3, 17, 30]] = False
    w0 = keep.astype(float)
    assert_allclose(f(y, P, sample_weight=w0), f(y[keep], P[keep]), rtol=1e-11, atol=1e-16)


@pytest.mark.parametrize("name,f", [m for m in _all_metrics() if m[0] in ("skce-v", "mmce-v",
                                                                          "ucme")],
                         ids=["skce-v", "mmce-v", "ucme"])
def test_integer_weights_equal_repeated_rows(name, f):
    y, P = _cls(30, 3, 23)
    w = np.random.default_rng(24).integers(0, 4, size=30)
    w[0] = 2
    rep = np.repeat(np.arange(30), w)
    assert_allclose(f(y, P, sample_weight=w), f(y[rep], P[rep]), rtol=1e-11)


def test_integer_weights_are_not_repeated_rows_for_u_statistics():
    # Documented: the weighted U-statistic leaves out the pairs of a row with its own copies.
    y, P = _cls(20, 3, 25)
    w = np.full(20, 2)
    assert_allclose(skce(y, P, kernel=GK, sample_weight=w), skce(y, P, kernel=GK), rtol=1e-12)
    rep = np.repeat(np.arange(20), w)
    assert not np.isclose(skce(y[rep], P[rep], kernel=GK), skce(y, P, kernel=GK), rtol=1e-6)


@pytest.mark.parametrize("bad,match", [
    (np.ones(39), "sample_weight has 39"),
    (-np.ones(40), "sample_weight must be non-negative"),
    (np.r_[np.nan, np.ones(39)], "sample_weight contains NaN"),
    (np.r_[np.inf, np.ones(39)], "sample_weight contains NaN or infinity"),
    (np.zeros(40), "sample_weight must have a positive sum"),
    (np.ones((40, 2)), "sample_weight"),
    (["a"] * 40, "sample_weight"),
])
def test_invalid_weights_raise_naming_sample_weight(bad, match):
    y, P = _cls(40, 3, 26)
    N = Normal(P[:, 0], 1.0)
    calls = [
        lambda: skce(y, P, sample_weight=bad), lambda: mmce(y, P, sample_weight=bad),
        lambda: ucme(y, P, sample_weight=bad),
        lambda: skce(P[:, 0], N, sample_weight=bad), lambda: ucme(P[:, 0], N, sample_weight=bad),
        lambda: SKCE().fit(P, y).error(P, y, sample_weight=bad),
        lambda: MMCE().fit(P, y).score(P, y, sample_weight=bad),
        lambda: UCME(random_state=0).fit(P, y).transform(P, y, sample_weight=bad),
        lambda: SKCE().fit(P, y, sample_weight=bad),
        lambda: CalibrationError().fit(P, y, sample_weight=bad),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=match):
            call()


def test_too_few_positive_weights():
    y, P = _cls(12, 3, 27)
    w = np.zeros(12)
    w[4] = 1.0
    with pytest.raises(ValueError, match="sample_weight must have at least 2 positive"):
        skce(y, P, sample_weight=w)
    with pytest.raises(ValueError, match="sample_weight must have at least 2 positive"):
        mmce(y, P, sample_weight=w, estimator="unbiased", squared=True)
    # the biased estimator is defined with one positive weight: h_44 of that row
    H = _dense_skce(y, P)
    assert_allclose(skce(y, P, kernel=GK, estimator="biased", sample_weight=w), H[4, 4],
                    rtol=1e-12)
    # block: weights only in different blocks of size 2
    w = np.zeros(12)
    w[[1, 2, 5]] = 1.0
    with pytest.raises(ValueError, match="sample_weight must give some block"):
        skce(y, P, estimator="block", sample_weight=w)
    w[0] = 1.0  # block 0 = samples 0, 1 now has two positive weights
    assert_allclose(skce(y, P, kernel=GK, estimator="block", sample_weight=w), H[0, 1],
                    rtol=1e-12)


@pytest.mark.parametrize("estimator", ["unbiased", "biased", "block"])
def test_n_jobs_never_changes_a_weighted_result(estimator):
    y, P = _cls(400, 4, 28)
    w = _weights(400, seed=29)
    kw = dict(kernel=GK, estimator=estimator, block_size=70 if estimator == "block" else 2,
              sample_weight=w, chunk_size=32)
    base = skce(y, P, **kw)
    est = SKCE(GK, estimator=kw["estimator"], block_size=kw["block_size"], chunk_size=32)
    est.fit(P, y)
    shares = est.transform(P, y, sample_weight=w)
    for n_jobs in [2, -1]:
        assert skce(y, P, n_jobs=n_jobs, **kw) == base
        est.set_params(n_jobs=n_jobs)
        assert np.array_equal(est.transform(P, y, sample_weight=w), shares)
        assert est.error(P, y, sample_weight=w) == base


# --------------------------------------------------------------------------------------------
# contributions (transform) with weights


@pytest.mark.parametrize("estimator", ["unbiased", "biased", "block"])
def test_weighted_contributions_have_the_estimate_as_weighted_mean(estimator):
    y, P = _cls(47, 3, 30)
    w = _weights(47, seed=31)
    H = _dense_skce(y, P)
    data = check_labels_and_probabilities(y, P, labels=np.arange(3))
    term = classification_term(data, TensorProductKernel(GK))
    c = contributions(term, estimator, 5, sample_weight=w, chunk_size=6)
    est = _brute(H, w, estimator, 5)
    assert_allclose(np.dot(w, c) / w.sum(), est, rtol=1e-10)
    if estimator == "unbiased":
        # the formula, for every row (zero-weight rows included)
        D = w.sum() ** 2 - (w ** 2).sum()
        expected = w.sum() / D * ((H * w[None, :]).sum(1) - np.diag(H) * w)
        assert_allclose(c, expected, rtol=1e-10, atol=1e-15)


@pytest.mark.parametrize("est", [SKCE(GK), SKCE(GK, estimator="biased"),
                                 SKCE(GK, estimator="block", block_size=4), MMCE(),
                                 MMCE(estimator="unbiased", squared=True),
                                 UCME(GK, random_state=0), CalibrationError(n_bins=5),
                                 CalibrationError(norm="l2", squared=True, n_bins=5)], ids=repr)
def test_estimators_weighted_error_score_transform(est):
    y, P = _cls(60, 3, 32)
    y2, P2 = _cls(50, 3, 33)
    w = _weights(50, seed=34)
    est.fit(P, y, sample_weight=_weights(60, seed=35))
    err = est.error(P2, y2, sample_weight=w)
    assert est.score(P2, y2, sample_weight=w) == -err
    shares = est.transform(P2, y2, sample_weight=w)[:, 0]
    target = err ** 2 if isinstance(est, MMCE) and not est.squared else err
    assert_allclose(np.dot(w, shares) / w.sum(), target, rtol=1e-10, atol=1e-15)
    assert_allclose(est.fit_transform(P2, y2, sample_weight=w)[:, 0], shares, rtol=1e-12)
    # the function with the same fitted parts gives the same weighted number
    est.fit(P, y)
    if isinstance(est, SKCE):
        f = skce(y2, P2, kernel=est.kernel_, estimator=est.estimator, block_size=est.block_size,
                 sample_weight=w)
    elif isinstance(est, MMCE):
        f = mmce(y2, P2, kernel=est.kernel_, estimator=est.estimator, squared=est.squared,
                 sample_weight=w)
    elif isinstance(est, UCME):
        f = ucme(y2, P2, kernel=est.kernel_, test_predictions=est.test_predictions_,
                 test_targets=est.test_targets_, sample_weight=w)
    else:
        f = None
    if f is not None:
        assert_allclose(est.error(P2, y2, sample_weight=w), f, rtol=1e-12)
    # weights are not modified and may be lists or pandas Series
    wc = w.copy()
    assert_allclose(est.error(P2, y2, sample_weight=list(w)), err, rtol=1e-12)
    pd = pytest.importorskip("pandas")
    assert_allclose(est.error(P2, y2, sample_weight=pd.Series(w)), err, rtol=1e-12)
    assert np.array_equal(w, wc)


def test_estimator_integer_weights_equal_repeated_rows():
    y, P = _cls(40, 3, 36)
    w = np.random.default_rng(37).integers(0, 3, size=40)
    rep = np.repeat(np.arange(40), w)
    for est in [SKCE(GK, estimator="biased"), UCME(GK, random_state=1), MMCE()]:
        est.fit(P, y)
        assert_allclose(est.error(P, y, sample_weight=w), est.error(P[rep], y[rep]), rtol=1e-11)


def test_fit_weights_are_validated_but_learned_parts_unweighted():
    # Documented: bins, median-heuristic length scales and test locations ignore the weights.
    y, P = _cls(80, 3, 38)
    w = _weights(80, seed=39)
    for est in [SKCE(), MMCE(kernel=GaussianKernel("median")), UCME(random_state=0),
                CalibrationError(strategy="quantile", n_bins=4)]:
        a = clone(est).fit(P, y).error(P, y)
        b = clone(est).fit(P, y, sample_weight=w).error(P, y)
        assert a == b


# --------------------------------------------------------------------------------------------
# scorers


def test_scorer_forwards_sample_weight():
    rng = np.random.default_rng(40)
    X = rng.normal(size=(120, 3))
    yy = (X[:, 0] + rng.normal(size=120) > 0).astype(int)
    clf = LogisticRegression().fit(X, yy)
    w = _weights(120, seed=41)
    P = clf.predict_proba(X)
    for name, f in [("skce", skce), ("mmce", mmce), ("ucme", ucme)]:
        kw = {"random_state": 0} if name == "ucme" else {}
        scorer = make_calibration_scorer(name, **kw)
        assert_allclose(scorer(clf, X, yy, sample_weight=w),
                        -f(yy, P, sample_weight=w, labels=clf.classes_, **kw), rtol=1e-12)
        assert scorer(clf, X, yy, sample_weight=w) != scorer(clf, X, yy)


def test_cross_validate_routes_sample_weight_to_fit_and_score():
    y, P = _cls(90, 3, 42)
    w = _weights(90, seed=43)
    cv = KFold(3)
    with sklearn.config_context(enable_metadata_routing=True):
        est = SKCE(GK, estimator="biased").set_fit_request(sample_weight=True)
        est = est.set_score_request(sample_weight=True)
        res = cross_validate(est, P, y, cv=cv, params={"sample_weight": w})
    for k, (_, test) in enumerate(cv.split(P)):
        expected = -skce(y[test], P[test], kernel=GK, estimator="biased", labels=[0, 1, 2],
                         sample_weight=w[test])
        assert_allclose(res["test_score"][k], expected, rtol=1e-12)
        assert not np.isclose(res["test_score"][k],
                              -skce(y[test], P[test], kernel=GK, estimator="biased",
                                    labels=[0, 1, 2]), rtol=1e-8)


# --------------------------------------------------------------------------------------------
# early parameter checks


def _bad_params():
    return [
        (dict(n_jobs=0), ValueError, "n_jobs"), (dict(n_jobs="2"), TypeError, "n_jobs"),
        (dict(random_state=-1), ValueError, "random_state"),
        (dict(random_state="a"), ValueError, "random_state"),
        (dict(chunk_size=0), ValueError, "chunk_size"), (dict(chunk_size=1.5), TypeError,
                                                         "chunk_size"),
        (dict(block_size=1), ValueError, "block_size"), (dict(block_size="2"), TypeError,
                                                         "block_size"),
        (dict(estimator="fast"), ValueError, "estimator"),
        (dict(n_mc_samples=0), ValueError, "n_mc_samples"),
    ]


@pytest.mark.parametrize("kw,exc,match", _bad_params(), ids=lambda v: str(v))
def test_skce_checks_every_parameter_on_every_path(kw, exc, match):
    # unused on this path (classification, unbiased estimator, sequential): still checked
    y, P = _cls(10, 3, 44)
    with pytest.raises(exc, match=match):
        skce(y, P, **kw)
    with pytest.raises(exc, match=match):
        skce(P[:, 0], Normal(P[:, 1], 1.0), **kw)
    est = SKCE()
    with pytest.raises(exc, match=match):
        clone(est).set_params(**kw).fit(P, y)
    est.fit(P, y).set_params(**kw)
    for method in (est.error, est.score, est.transform):
        with pytest.raises(exc, match=match):
            method(P, y)


@pytest.mark.parametrize("kw,exc,match", [p for p in _bad_params() if "n_mc_samples" not in p[0]]
                         + [(dict(squared="False"), TypeError, "squared"),
                            (dict(squared=None), TypeError, "squared")],
                         ids=lambda v: str(v))
def test_mmce_checks_every_parameter(kw, exc, match):
    y, P = _cls(10, 3, 45)
    with pytest.raises(exc, match=match):
        mmce(y, P, **kw)
    est = MMCE()
    with pytest.raises(exc, match=match):
        clone(est).set_params(**kw).fit(P, y)
    est.fit(P, y).set_params(**kw)
    for method in (est.error, est.score, est.transform):
        with pytest.raises(exc, match=match):
            method(P, y)


def test_mmce_squared_string_is_refused_not_truthy():
    y, P = _cls(10, 3, 46)
    with pytest.raises(TypeError, match="squared must be True or False"):
        mmce(y, P, squared="False")
    assert mmce(y, P, squared=np.bool_(True)) == mmce(y, P, squared=True)


@pytest.mark.parametrize("kw,exc,match", [
    (dict(random_state=-1), ValueError, "random_state"),
    (dict(chunk_size=0), ValueError, "chunk_size"),
    (dict(n_mc_samples=0), ValueError, "n_mc_samples"),
    (dict(n_test_locations=0), ValueError, "n_test_locations"),
    (dict(n_test_locations=2.0), TypeError, "n_test_locations"),
], ids=lambda v: str(v))
def test_ucme_checks_every_parameter(kw, exc, match):
    y, P = _cls(10, 3, 47)
    given = dict(test_predictions=P[:2], test_targets=y[:2])  # n_test_locations unused
    with pytest.raises(exc, match=match):
        ucme(y, P, **given, **kw)
    with pytest.raises(exc, match=match):
        ucme(P[:, 0], Normal(P[:, 1], 1.0), **kw)
    est = UCME(**given)
    with pytest.raises(exc, match=match):
        clone(est).set_params(**kw).fit(P, y)
    est.fit(P, y).set_params(**kw)
    for method in (est.error, est.score, est.transform):
        with pytest.raises(exc, match=match):
            method(P, y)


def test_labels_and_pos_label_refused_for_distributions():
    rng = np.random.default_rng(48)
    N, t = Normal(rng.normal(size=8), 1.0), rng.normal(size=8)
    for f in (skce, ucme):
        with pytest.raises(ValueError, match="labels is only meaningful"):
            f(t, N, labels=[0, 1])
        with pytest.raises(ValueError, match="pos_label is only meaningful"):
            f(t, N, pos_label=1)
    for est in (SKCE(labels=[0, 1]), UCME(pos_label=1)):
        with pytest.raises(ValueError, match="(labels|pos_label) is only meaningful"):
            est.fit(N, t)


# --------------------------------------------------------------------------------------------
# estimators: bad X after fit, copies of test locations, distributions


@pytest.mark.parametrize("est", [SKCE(), MMCE(), UCME(random_state=0), CalibrationError()],
                         ids=repr)
@pytest.mark.parametrize("bad", [None, 3.0, {"a": 1}, [[0.2, 0.8], [0.5]], "abc"],
                         ids=["None", "scalar", "dict", "ragged", "str"])
def test_error_score_transform_give_the_messages_of_fit_for_bad_X(est, bad):
    y, P = _cls(6, 2, 49)
    y = np.array([0, 1, 0, 1, 0, 1])
    with pytest.raises(Exception) as at_fit:
        clone(est).fit(bad, y)
    est.fit(P, y)
    for method in (est.error, est.score, est.transform):
        with pytest.raises(type(at_fit.value)) as later:
            method(bad, y)
        assert str(later.value) == str(at_fit.value)
        assert not isinstance(later.value, IndexError)


def test_ucme_fitted_state_copies_test_predictions():
    y, P = _cls(40, 3, 50)
    A = P[:4].copy()
    T = [0, 1, 2, 1]
    est = UCME(GK, test_predictions=A, test_targets=T).fit(P, y)
    before = (est.error(P, y), est.test_predictions_.copy())
    A[:] = [[1.0, 0.0, 0.0]] * 4
    T[0] = 2
    assert est.error(P, y) == before[0]
    assert np.array_equal(est.test_predictions_, before[1])
    assert not np.shares_memory(est.test_predictions_, A)
    # distributions: the fitted test predictions are copies, too
    rng = np.random.default_rng(51)
    mu = rng.normal(size=20)
    loc = np.array([0.0, 1.0])
    tt = np.array([0.5, 0.5])
    est = UCME(KD, test_predictions=Normal(loc, 1.0), test_targets=tt).fit(Normal(mu, 1.0), mu)
    v = est.error(Normal(mu, 1.0), mu)
    tt[:] = 9.0
    assert not np.shares_memory(est.test_predictions_.loc, loc)
    assert est.error(Normal(mu, 1.0), mu) == v


def _normal_data(n, seed):
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=n)
    sd = rng.uniform(0.5, 1.5, size=n)
    return Normal(mu, sd), mu + 1.2 * sd * rng.normal(size=n)


@pytest.mark.parametrize("estimator", ["unbiased", "biased", "block"])
def test_skce_estimator_on_distributions_equals_the_function(estimator):
    N, t = _normal_data(60, 52)
    N2, t2 = _normal_data(40, 53)
    est = SKCE(estimator=estimator, block_size=3).fit(N, t)
    assert_allclose(est.error(N, t), skce(t, N, estimator=estimator, block_size=3), rtol=1e-12)
    assert est.target_shape_ == () and not hasattr(est, "classes_")
    # another sample: the fitted kernel
    w = _weights(40, seed=54)
    assert_allclose(est.error(N2, t2, sample_weight=w),
                    skce(t2, N2, kernel=est.kernel_, estimator=estimator, block_size=3,
                         sample_weight=w), rtol=1e-12)
    shares = est.transform(N2, t2, sample_weight=w)[:, 0]
    assert_allclose(np.dot(w, shares) / w.sum(), est.error(N2, t2, sample_weight=w), rtol=1e-10)
    # brute force with the fitted length scales
    lp = est.kernel_.pred_kernel.length_scale
    lt = est.kernel_.target_kernel.length_scale
    H = _dense_normal(N2.loc, N2.scale, t2, lp, lt)
    assert_allclose(est.error(N2, t2, sample_weight=w), _brute(H, w, estimator, 3), rtol=1e-10)


def test_ucme_estimator_on_distributions():
    N, t = _normal_data(50, 55)
    N2, t2 = _normal_data(30, 56)
    est = UCME(random_state=3, n_test_locations=4).fit(N, t)
    assert_allclose(est.error(N, t), ucme(t, N, random_state=3, n_test_locations=4), rtol=1e-12)
    assert isinstance(est.test_predictions_, Normal) and est.test_targets_.shape == (4,)
    w = _weights(30, seed=57)
    f = ucme(t2, N2, kernel=est.kernel_, test_predictions=est.test_predictions_,
             test_targets=est.test_targets_, sample_weight=w)
    assert_allclose(est.error(N2, t2, sample_weight=w), f, rtol=1e-12)
    shares = est.transform(N2, t2, sample_weight=w)[:, 0]
    assert_allclose(np.dot(w, shares) / w.sum(), f, rtol=1e-10)
    # integer weights = repeated rows
    iw = np.random.default_rng(58).integers(0, 3, size=30)
    rep = np.repeat(np.arange(30), iw)
    assert_allclose(est.error(N2, t2, sample_weight=iw), est.error(N2[rep], t2[rep]), rtol=1e-11)


def test_estimators_refuse_mixed_inputs():
    N, t = _normal_data(20, 59)
    y, P = _cls(20, 3, 60)
    with pytest.raises(TypeError, match="MMCE needs predicted class probabilities"):
        MMCE().fit(N, t)
    with pytest.raises(TypeError, match="distribution"):
        CalibrationError().fit(N, t)
    est = SKCE().fit(N, t)
    with pytest.raises(TypeError, match="fitted on predictive distributions"):
        est.error(P, y)
    with pytest.raises(TypeError, match="fitted on class probabilities"):
        SKCE().fit(P, y).error(N, t)
    with pytest.raises(TypeError, match="fitted on class probabilities"):
        UCME(random_state=0).fit(P, y).error(N, t)
    with pytest.raises(ValueError, match="shape"):
        est.error(N, np.c_[t, t])
    # refitting on the other kind replaces the fitted attributes
    est.fit(P, y)
    assert not hasattr(est, "target_shape_") and list(est.classes_) == [0, 1, 2]
    est.fit(N, t)
    assert not hasattr(est, "classes_") and not hasattr(est, "n_features_in_")


def test_estimators_on_distributions_other_families_and_clone():
    rng = np.random.default_rng(61)
    L = Laplace(rng.normal(size=30), rng.uniform(0.5, 1.0, size=30))
    t = L.sample(random_state=1)
    est = SKCE(random_state=0).fit(L, t)
    assert_allclose(est.error(L, t), skce(t, L, random_state=0), rtol=1e-12)
    est2 = copy.deepcopy(clone(est)).fit(L, t)
    assert est2.error(L, t) == est.error(L, t)
