"""Binned calibration errors against brute-force loops, edge cases of the binnings."""

import tracemalloc
from fractions import Fraction

import numpy as np
import pytest
from numpy.testing import assert_allclose

from skcalib import CalibrationError, calibration_error
from skcalib._problems.binning import QuantileBinning
from skcalib._problems.binning import quantiles_of_sorted as _quantiles_of_sorted


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


# --------------------------------------------------------------------------------------------
# Huge n_bins: memory grows with the occupied bins only (issue 11)

MODES_STRATEGIES = [(m, s) for m in ["binary", "top_label", "classwise", "canonical"]
                    for s in ["uniform", "quantile", "median_variance"]]


def _grouped_error(keys, Q, T, norm, w=None):
    """Binned error of one problem with bins given by hashable keys (a dict: no bin arrays)."""
    w = np.ones(len(Q)) if w is None else np.asarray(w, float)
    groups = {}
    for i, k in enumerate(keys):
        groups.setdefault(k, []).append(i)
    total = w.sum()
    gaps, weights = [], []
    for idx in groups.values():
        idx = np.array(idx)
        if w[idx].sum() == 0:
            continue
        d = np.average(T[idx], axis=0, weights=w[idx]) - np.average(Q[idx], axis=0, weights=w[idx])
        gap = {"l1": 0.5 * np.abs(d).sum() if d.size > 1 else abs(d[0]),
               "l2": float(np.sqrt(d @ d)), "max": np.abs(d).max()}[norm]
        gaps.append(gap)
        weights.append(w[idx].sum() / total)
    gaps, weights = np.array(gaps), np.array(weights)
    return {"l1": weights @ gaps, "l2": np.sqrt(weights @ gaps**2), "max": gaps.max()}[norm]


def _problems(y, P, mode):
    n, C = P.shape
    if mode == "binary":
        return [(P[:, 1:], (y == 1).astype(float)[:, None])]
    if mode == "top_label":  # continuous P: no tied maxima
        return [(P.max(1)[:, None], (P.argmax(1) == y).astype(float)[:, None])]
    if mode == "classwise":
        return [(P[:, k:k + 1], (y == k).astype(float)[:, None]) for k in range(C)]
    return [(P, np.eye(C)[y])]


def _uniform_key(row, n_bins):
    """Exact bin tuple of a row: ceil(n_bins * p) - 1 in rational arithmetic (p = 0: bin 0)."""
    out = []
    for p in row:
        f = Fraction(float(p)) * n_bins
        c = f.numerator // f.denominator + (f.numerator % f.denominator != 0)
        out.append(max(c, 1) - 1)
    return tuple(out)


def _reference(y, P, mode, norm, key):
    values = [_grouped_error([key(r) for r in Q], Q, T, norm) for Q, T in _problems(y, P, mode)]
    if len(values) == 1:
        return values[0]
    return {"l1": np.mean(values), "max": np.max(values),
            "l2": np.sqrt(np.mean(np.square(values)))}[norm]


@pytest.mark.parametrize("mode, strategy", MODES_STRATEGIES)
def test_billion_bins_memory_and_value(mode, strategy):
    """n_bins=10**9 on 60 samples: peak traced memory far below one float per bin (8 GB), and the
    value of an independent reference (exact rational bins for "uniform"; one bin per distinct
    prediction for data-dependent bins, which a billion bins resolve on continuous data)."""
    rng = np.random.default_rng(11)
    C = 2 if mode == "binary" else 3
    P = rng.dirichlet(np.ones(C), size=60)
    y = rng.integers(0, C, size=60)
    tracemalloc.start()
    try:
        got = {norm: calibration_error(y, P, n_bins=10**9, mode=mode, strategy=strategy,
                                       norm=norm, labels=np.arange(C))
               for norm in ["l1", "l2", "max"]}
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 5e6, peak  # 5 MB; a dense per-bin array would be 8e9 bytes
    if strategy == "uniform":
        def key(r):
            return _uniform_key(r, 10**9)
    else:
        def key(r):
            return tuple(r)
    for norm in ["l1", "l2", "max"]:
        assert_allclose(got[norm], _reference(y, P, mode, norm, key), rtol=1e-12)


def test_billion_bins_estimator_memory():
    rng = np.random.default_rng(12)
    P = rng.dirichlet(np.ones(3), size=40)
    y = rng.integers(0, 3, size=40)
    tracemalloc.start()
    try:
        for strategy in ["uniform", "quantile"]:
            est = CalibrationError(n_bins=10**9, strategy=strategy, mode="canonical").fit(P, y)
            v = est.error(P[::-1], y[::-1])
            assert np.isfinite(est.transform(P, y)).all()
            assert_allclose(v, calibration_error(y, P, n_bins=10**9, strategy=strategy,
                                                 mode="canonical"), rtol=1e-12)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 5e6, peak


@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
def test_sparse_bin_ids_against_loop_over_every_bin(norm):
    """n_bins (5000) far above n (25): bins are renumbered over the occupied ones; the result is
    the loop over all 5000 bins of ``_brute_scalar``."""
    rng = np.random.default_rng(13)
    p = rng.uniform(size=25)
    p[:5] = [0.0, 1.0, 0.5, 0.5, 0.0002]  # edges and a shared bin
    y = (rng.uniform(size=25) < p).astype(int)
    w = rng.uniform(0.2, 2.0, size=25)
    for weights in [None, w]:
        assert_allclose(calibration_error(y, p, norm=norm, n_bins=5000, sample_weight=weights),
                        _brute_scalar(p, y.astype(float), 5000, norm, weights), rtol=1e-12)


def _quantile_bins_brute(x, n_bins):
    edges = np.unique(np.quantile(x, np.linspace(0.0, 1.0, n_bins + 1)[1:-1]))
    return np.searchsorted(edges, x, side="left")


def _same_partition(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return (np.array_equal(a[:, None] == a[None, :], b[:, None] == b[None, :])
            and np.array_equal(a[:, None] < a[None, :], b[:, None] < b[None, :]))


@pytest.mark.parametrize("kind", ["uniform", "grid", "few_values"])
@pytest.mark.parametrize("n_bins", [2, 7, 40, 333, 5000])
def test_implicit_quantile_edges_give_the_same_bins(kind, n_bins):
    """Bisection on the edge index (no stored edges) bins training and new values exactly as the
    stored edges do, which bin as numpy's quantile edges."""
    rng = np.random.default_rng(n_bins)
    n = 30
    x = {"uniform": rng.uniform(size=n), "grid": rng.integers(0, 11, size=n) / 10,
         "few_values": rng.choice([0.0, 0.25, 1.0], size=n)}[kind]
    Q = x[:, None]
    new = np.r_[rng.uniform(size=200), x, np.nextafter(x, 2), np.nextafter(x, -1), 0.0, 1.0,
                np.linspace(0, 1, 101)]
    stored = QuantileBinning(n_bins, implicit=False).fit(Q)
    implicit = QuantileBinning(n_bins, implicit=True).fit(Q)
    assert implicit.edges_ is None and stored.sorted_ is None
    assert _same_partition(stored.assign(Q), implicit.assign(Q))
    assert _same_partition(stored.assign(new[:, None]), implicit.assign(new[:, None]))
    assert _same_partition(stored.assign(Q), _quantile_bins_brute(x, n_bins))
    # the automatic choice (implicit beyond max(4 n, 4096) edges) gives the brute-force value
    y = (rng.uniform(size=n) < x).astype(int)
    keys = _quantile_bins_brute(x, n_bins)
    for norm in ["l1", "l2", "max"]:
        assert_allclose(calibration_error(y, x, n_bins=n_bins, strategy="quantile", norm=norm),
                        _grouped_error(keys, x[:, None], y[:, None].astype(float), norm),
                        rtol=1e-12)


def test_quantiles_of_sorted_match_numpy():
    rng = np.random.default_rng(14)
    for _ in range(300):
        n = int(rng.integers(1, 50))
        x = rng.uniform(size=n) if rng.uniform() < 0.5 else rng.integers(0, 6, size=n) / 5
        levels = rng.uniform(size=40)
        levels[:3] = [0.0, 1.0, 0.5]
        assert_allclose(_quantiles_of_sorted(np.sort(x), levels), np.quantile(x, levels),
                        rtol=0, atol=1e-15)


@pytest.mark.parametrize("bad", [2**63, 10**20, 1e20, float("inf"), float("nan"), -1e30,
                                 2**53 + 1, np.uint64(2**63)])
def test_absurd_n_bins_value_error(bad):
    with pytest.raises(ValueError, match=r"^n_bins must be"):
        calibration_error([0, 1], [0.2, 0.7], n_bins=bad)
    with pytest.raises(ValueError, match=r"^n_bins must be"):
        CalibrationError(n_bins=bad).fit([[0.2], [0.7]], [0, 1])


@pytest.mark.parametrize("strategy", ["uniform", "quantile", "median_variance"])
def test_largest_n_bins_accepted(strategy):
    """2**53 bins: every distinct prediction in its own bin (here the ECE is mean |y - p|)."""
    p = np.array([0.1, 0.35, 0.35, 0.8, 0.95, 1.0])
    y = np.array([0, 1, 0, 1, 1, 1])
    v = calibration_error(y, p, n_bins=2**53, strategy=strategy)
    expected = (0.1 + 2 * 0.15 + 0.2 + 0.05 + 0.0) / 6  # the pair at 0.35 shares a bin
    assert_allclose(v, expected, rtol=1e-12)


# --------------------------------------------------------------------------------------------
# Huge but finite sample weights (issue 11)


@pytest.mark.parametrize("mode", ["binary", "top_label", "classwise", "canonical"])
@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
@pytest.mark.parametrize("scale", [1e308, 1e-300, 5e-324])
def test_extreme_uniform_weights_give_the_unweighted_answer(mode, norm, scale):
    rng = np.random.default_rng(15)
    C = 2 if mode == "binary" else 3
    P = rng.dirichlet(np.ones(C), size=80)
    y = rng.integers(0, C, size=80)
    w = np.full(80, scale)
    w_before = w.copy()
    for strategy in ["uniform", "quantile"]:
        kw = dict(mode=mode, norm=norm, n_bins=6, strategy=strategy, labels=np.arange(C))
        got = calibration_error(y, P, sample_weight=w, **kw)
        assert np.isfinite(got)
        assert got == calibration_error(y, P, **kw)
        est = CalibrationError(**kw).fit(P, y)
        assert est.error(P, y, sample_weight=w) == est.error(P, y)
    assert np.array_equal(w, w_before)


def test_huge_weight_ratios_are_kept():
    """1e308 next to 1e307: the weighted answer is that of weights 10 and 1."""
    rng = np.random.default_rng(16)
    p = rng.uniform(size=50)
    y = (rng.uniform(size=50) < p).astype(int)
    small = np.where(np.arange(50) % 2, 10.0, 1.0)
    for norm in ["l1", "l2", "max"]:
        assert_allclose(calibration_error(y, p, norm=norm, sample_weight=small * 1e307),
                        calibration_error(y, p, norm=norm, sample_weight=small), rtol=1e-12)


def test_debias_weights_are_frequencies_even_when_huge():
    """Debiasing reads weights as frequencies: weight 1e308 is a bin of 1e308 copies, whose
    variance correction vanishes (the finite limit of repetition, never NaN), while weight 3 is
    three copies."""
    rng = np.random.default_rng(17)
    p = rng.uniform(size=40)
    y = (rng.uniform(size=40) < p).astype(int)
    kw = dict(norm="l2", squared=True, n_bins=4)
    biased = calibration_error(y, p, **kw)
    huge = calibration_error(y, p, debias=True, sample_weight=np.full(40, 1e308), **kw)
    assert np.isfinite(huge)
    assert_allclose(huge, biased, rtol=1e-12)
    rep = np.repeat(np.arange(40), 3)
    assert_allclose(calibration_error(y, p, debias=True, sample_weight=np.full(40, 3.0), **kw),
                    calibration_error(y[rep], p[rep], debias=True, **kw), rtol=1e-12)


def test_quantile_edges_from_partition_equal_those_from_a_full_sort(monkeypatch):
    """The quantile edges read order statistics from a partition when the levels are few; they
    must be bit-identical to the edges of a fully sorted column (ties, duplicates, constants)."""
    from skcalib._problems import binning as _binned

    rng = np.random.default_rng(0)
    cases = []
    for trial in range(200):
        n = int(rng.integers(2, 2000))
        Q = [rng.random((n, 2)), np.round(rng.random((n, 2)), 2), rng.beta(.2, .2, (n, 2)),
             np.zeros((n, 2))][trial % 4]
        cases.append((Q, int(rng.integers(2, 300))))
    fast = [_binned.QuantileBinning(nb).fit(Q).edges_ for Q, nb in cases]
    monkeypatch.setattr(_binned, "_PARTITION_MAX_LEVELS", -1)
    for (Q, nb), edges in zip(cases, fast):
        slow = _binned.QuantileBinning(nb).fit(Q).edges_
        for a, b in zip(edges, slow):
            np.testing.assert_array_equal(a, b)
