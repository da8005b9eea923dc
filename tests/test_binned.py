"""Binned calibration errors against brute-force loops, edge cases of the binnings."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from skcalib import calibration_error


def _brute_scalar(q, t, n_bins, norm, w=None):
    w = np.ones_like(q) if w is None else w
    idx = np.array([max(int(np.ceil(n_bins * v)), 1) - 1 for v in q])
    gaps, weights = [], []
    for b in range(n_bins):
        m = idx == b
        if w[m].sum() > 0:
            gaps.append(abs(np.average(t[m], weights=w[m]) - np.average(q[m], weights=w[m])))
            weights.append(w[m].sum())
    gaps, weights = np.array(gaps), np.array(weights) / np.sum(weights)
    if norm == "l1":
        return float(weights @ gaps)
    if norm == "l2":
        return float(np.sqrt(weights @ gaps**2))
    return float(gaps.max())


@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
@pytest.mark.parametrize("weighted", [False, True])
def test_modes_against_brute_force(norm, weighted):
    rng = np.random.default_rng(0)
    n, C = 400, 4
    P = rng.dirichlet(np.ones(C) * 0.7, size=n)
    y = rng.integers(0, C, size=n)
    w = rng.uniform(0.1, 3, size=n) if weighted else None
    conf, pred = P.max(1), P.argmax(1)  # continuous P: no tied maxima
    expected = _brute_scalar(conf, (pred == y).astype(float), 10, norm, w)
    got = calibration_error(y, P, norm=norm, n_bins=10, mode="top_label", sample_weight=w)
    assert_allclose(got, expected, rtol=1e-12)
    per_class = [_brute_scalar(P[:, k], (y == k).astype(float), 10, norm, w) for k in range(C)]
    expected = {"l1": np.mean(per_class), "max": np.max(per_class),
                "l2": np.sqrt(np.mean(np.square(per_class)))}[norm]
    got = calibration_error(y, P, norm=norm, n_bins=10, mode="classwise", sample_weight=w)
    assert_allclose(got, expected, rtol=1e-12)
    yb = (y == 0).astype(int)
    pb = P[:, 0]
    assert_allclose(calibration_error(yb, pb, norm=norm, n_bins=10, sample_weight=w),
                    _brute_scalar(pb, yb.astype(float), 10, norm, w), rtol=1e-12)


def test_integer_weights_equal_repetition():
    rng = np.random.default_rng(1)
    P = rng.dirichlet(np.ones(3), size=100)
    y = rng.integers(0, 3, size=100)
    w = rng.integers(0, 4, size=100)
    rep = np.repeat(np.arange(100), w)
    for mode in ["top_label", "classwise", "canonical"]:
        for norm in ["l1", "l2", "max"]:
            a = calibration_error(y, P, mode=mode, norm=norm, sample_weight=w, labels=[0, 1, 2])
            b = calibration_error(y[rep], P[rep], mode=mode, norm=norm, labels=[0, 1, 2])
            assert_allclose(a, b, rtol=1e-12)
    a = calibration_error(y, P, norm="l2", squared=True, debias=True, sample_weight=w)
    b = calibration_error(y[rep], P[rep], norm="l2", squared=True, debias=True)
    assert_allclose(a, b, rtol=1e-10)


def test_canonical_many_classes_sparse_grid():
    # 10 classes x 15 bins: 15**10 possible cells; only occupied ones are stored.
    rng = np.random.default_rng(2)
    P = rng.dirichlet(np.ones(10) * 0.1, size=300)
    y = rng.integers(0, 10, size=300)
    v = calibration_error(y, P, mode="canonical", labels=np.arange(10))
    # almost every sample is alone in its cell: ECE ~ mean(1 - p[y]) (TV distance of singletons)
    assert 0 < v <= np.mean(1 - P[np.arange(300), y]) + 1e-12
    many = rng.dirichlet(np.ones(40), size=50)
    assert calibration_error(rng.integers(0, 40, 50), many, mode="canonical",
                             labels=np.arange(40)) > 0


def test_phantom_bins_at_zero_and_one():
    # p = 1.0 must be in the last bin (with 0.95), p = 0 in the first (with 0.05).
    y = [1, 1, 0, 0]
    p = [1.0, 0.95, 0.0, 0.05]
    # bins (0.9, 1] -> mean p 0.975, freq 1; [0, 0.1] -> mean p 0.025, freq 0
    assert_allclose(calibration_error(y, p, n_bins=10), 0.025, rtol=1e-12)
    assert_allclose(calibration_error(y, p, n_bins=10, norm="max"), 0.025, rtol=1e-12)


def test_quantile_edges_with_ties():
    y = np.r_[np.ones(60, int), np.zeros(40, int)]
    p = np.r_[np.ones(60), np.linspace(0.1, 0.5, 40)]
    v = calibration_error(y, p, n_bins=10, strategy="quantile")
    # the 60 exact ones form one bin with zero gap; only the others contribute
    assert np.isfinite(v) and v > 0
    # the tied ones share one bin: the error is the ECE of the other 40 samples, scaled by 40/100
    rest = calibration_error(y[60:], p[60:], n_bins=10, strategy="quantile", labels=[0, 1])
    assert v <= rest


def test_debias_and_squared():
    rng = np.random.default_rng(3)
    p = rng.uniform(size=50)
    y = (rng.uniform(size=50) < p).astype(int)
    sq = calibration_error(y, p, norm="l2", squared=True)
    assert_allclose(calibration_error(y, p, norm="l2") ** 2, sq, rtol=1e-12)
    d = calibration_error(y, p, norm="l2", squared=True, debias=True)
    assert d < sq
    # hand computation for one bin
    one = calibration_error(y, p, norm="l2", squared=True, debias=True, n_bins=1)
    ybar = y.mean()
    assert_allclose(one, (ybar - p.mean()) ** 2 - ybar * (1 - ybar) / 49, rtol=1e-12)
    neg_y, neg_p = [0, 1, 0, 1], [0.5, 0.5, 0.5, 0.5]
    with pytest.warns(UserWarning, match="negative"):
        assert calibration_error(neg_y, neg_p, norm="l2", debias=True) == 0.0
    assert calibration_error(neg_y, neg_p, norm="l2", debias=True, squared=True) < 0


@pytest.mark.parametrize("metric", ["ece", "mmce"])
def test_tied_maxima_are_label_invariant(metric):
    """A tied row's top-label prediction is a uniform draw among the tied classes: renaming
    (permuting) the labels never changes the result, which 'the first column wins' would."""
    from skcalib import mmce

    P = np.array([[0.4, 0.4, 0.2], [0.5, 0.25, 0.25], [0.3, 0.3, 0.4], [0.45, 0.1, 0.45],
                  [0.2, 0.6, 0.2], [0.4, 0.4, 0.2]])
    y = np.array([1, 0, 2, 0, 1, 0])
    perm = np.array([2, 0, 1])  # column k becomes label perm[k]

    def f(yy, PP):
        if metric == "ece":
            return calibration_error(yy, PP, mode="top_label", n_bins=5, labels=[0, 1, 2])
        return mmce(yy, PP, squared=True, labels=[0, 1, 2])

    Pp = np.empty_like(P)
    Pp[:, perm] = P
    assert_allclose(f(perm[y], Pp), f(y, P), rtol=1e-12)
    # Rows 0 and 5 tie columns 0 and 1, row 3 ties 0 and 2: each is half correct.
    if metric == "ece":
        c = np.array([0.5, 1.0, 1.0, 0.5, 1.0, 0.5])
        r = P.max(axis=1)
        one_bin = calibration_error(y, P, mode="top_label", n_bins=1, labels=[0, 1, 2])
        assert_allclose(one_bin, abs(c.mean() - r.mean()), rtol=1e-12)
