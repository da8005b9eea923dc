"""The binned floor (``skcalib._problems.binning``, ``.modes``, ``.binned``, ``.reliability``)
against independent brute-force computations on small inputs."""

from fractions import Fraction

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats

from skcalib import calibration_error
from skcalib._problems.binned import (FixedPredictionErrors, binned_errors, cell_error,
                                      check_binned_params, combine, finalize, problem_error)
from skcalib._problems.binning import (MedianVarianceBinning, QuantileBinning, UniformBinning,
                                       edge_levels, make_binning, occupied_cells,
                                       quantiles_of_sorted)
from skcalib._problems.modes import binary_problem, make_problems, resolve_mode
from skcalib._problems.reliability import bin_cells, binomial_interval, curve_setup
from skcalib._validation import check_labels_and_probabilities


def _same_partition(a, b):
    """True if the integer labellings ``a`` and ``b`` group the samples alike."""
    a, b = np.asarray(a), np.asarray(b)
    pairs = set(zip(a.tolist(), b.tolist()))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


def _uniform_bin(p, n_bins):
    """0-based bin of ``p`` in the right-closed bins ``(k / n_bins, (k + 1) / n_bins]`` (``p = 0``
    in the first), by exact comparison with every edge (the float ``k / n_bins``)."""
    x = Fraction(float(p))
    for k in range(n_bins):
        if x <= Fraction((k + 1) / n_bins):
            return k
    return n_bins - 1


# --------------------------------------------------------------------------------------------
# binnings


@pytest.mark.parametrize("n_bins", [1, 2, 3, 7, 10, 25])
def test_uniform_bins_are_the_right_closed_bins_of_exact_edges(n_bins):
    rng = np.random.default_rng(n_bins)
    edges = np.arange(n_bins + 1) / n_bins
    p = np.concatenate([rng.random(60), edges, np.nextafter(edges, 2.0), np.nextafter(edges, -1.0),
                        [0.28, 0.3, 1 - 0.7, 0.0, 1.0]])
    p = np.clip(p, 0.0, 1.0)
    got = UniformBinning(n_bins).fit(p[:, None]).assign(p[:, None])
    assert_array_equal(got, [_uniform_bin(v, n_bins) for v in p])


def test_uniform_cells_of_several_coordinates_are_tuples_of_bins():
    rng = np.random.default_rng(1)
    Q = rng.random((80, 3))
    binning = UniformBinning(4)
    tuples = [tuple(_uniform_bin(v, 4) for v in row) for row in Q]
    assert_array_equal(binning.bin_indices(Q), np.array(tuples))
    assert _same_partition(binning.assign(Q), [hash(t) for t in tuples])


def _quantile_bin(x, edges):
    """Number of edges strictly below ``x`` (right-closed bins), by a loop."""
    return sum(1 for e in edges if e < x)


@pytest.mark.parametrize("n_bins", [2, 3, 5, 9])
@pytest.mark.parametrize("rounding", [None, 1])
def test_quantile_bins_count_the_numpy_quantile_edges_below(n_bins, rounding):
    rng = np.random.default_rng(n_bins)
    x = rng.random(37)
    if rounding is not None:
        x = np.round(x, rounding)  # ties and repeated edges
    edges = np.unique(np.quantile(x, np.arange(1, n_bins) * (1.0 / n_bins)))
    expected = [_quantile_bin(v, edges) for v in x]
    stored = QuantileBinning(n_bins).fit(x[:, None])
    assert_array_equal(stored.edges_[0], edges)
    assert_array_equal(stored.assign(x[:, None]), expected)
    implicit = QuantileBinning(n_bins, implicit=True).fit(x[:, None])
    assert implicit.edges_ is None
    assert _same_partition(implicit.assign(x[:, None]), expected)


def test_quantiles_of_sorted_and_edge_levels():
    rng = np.random.default_rng(2)
    s = np.sort(rng.random(23))
    levels = edge_levels(np.arange(1, 7), 7)
    assert_array_equal(levels, np.arange(1, 7) * (1.0 / 7))
    assert_allclose(quantiles_of_sorted(s, levels), np.quantile(s, levels), rtol=0, atol=1e-15)


def test_median_variance_splits_at_the_median_of_the_widest_coordinate():
    # coordinate 1 has the larger variance: the first split is on it, at its median (0.5),
    # values tied with the median going up; each half is then split on its own widest coordinate.
    Q = np.array([[0.1, 0.0], [0.2, 0.9], [0.15, 0.1], [0.3, 0.5], [0.12, 0.8], [0.25, 0.2]])
    b = MedianVarianceBinning(2).fit(Q)
    assert b.n_cells_ == 2
    cells = b.assign(Q)
    assert _same_partition(cells, (Q[:, 1] >= 0.5).astype(int))
    assert_array_equal(cells, b.train_cells_)


@pytest.mark.parametrize("min_bin_size", [1, 3, 7])
def test_median_variance_bins_respect_their_size_and_number(min_bin_size):
    rng = np.random.default_rng(min_bin_size)
    Q = rng.random((50, 2))
    b = MedianVarianceBinning(6, min_bin_size).fit(Q)
    counts = np.bincount(b.assign(Q))
    assert counts.size <= 6 and counts.min() >= min_bin_size
    assert_array_equal(b.assign(Q), b.train_cells_)
    with pytest.raises(ValueError, match="min_bin_size=7"):
        MedianVarianceBinning(2, 7).fit(Q[:6])


def test_make_binning_and_occupied_cells():
    assert type(make_binning("uniform", 3)) is UniformBinning
    assert type(make_binning("quantile", 3)) is QuantileBinning
    mv = make_binning("median_variance", 3, 2)
    assert type(mv) is MedianVarianceBinning and mv.min_bin_size == 2
    dense = np.array([0, 2, 1, 2])
    assert occupied_cells(dense) is dense
    sparse = np.array([10**9, 5, 10**9, 7 * 10**8])
    assert_array_equal(occupied_cells(sparse), [2, 0, 2, 1])


# --------------------------------------------------------------------------------------------
# the problems of each mode

P3 = np.array([[.5, .3, .2], [.1, .45, .45], [.2, .2, .6], [.4, .4, .2], [1 / 3, 1 / 3, 1 / 3]])
Y3 = np.array([0, 2, 1, 1, 2])


def test_problems_of_every_mode_are_the_hand_built_arrays():
    data = check_labels_and_probabilities(Y3, P3)
    ((Q, T),) = make_problems(data, "top_label")
    assert_array_equal(Q[:, 0], P3.max(axis=1))
    # ties are uniform draws among the tied classes
    assert_allclose(T[:, 0], [1.0, 0.5, 0.0, 0.5, 1 / 3])
    classwise = make_problems(data, "classwise")
    assert len(classwise) == 3
    for k, (Qk, Tk) in enumerate(classwise):
        assert_array_equal(Qk[:, 0], P3[:, k])
        assert_array_equal(Tk[:, 0], (Y3 == k).astype(float))
    ((Q, T),) = make_problems(data, "canonical")
    assert_array_equal(Q, P3)
    assert_array_equal(T, np.eye(3)[Y3])
    p = np.array([.2, .7, .9, .4])
    data = check_labels_and_probabilities(["a", "b", "b", "a"], p)
    ((Q, T),) = make_problems(data, "binary")
    assert_array_equal(Q[:, 0], p)
    assert_array_equal(T[:, 0], [0.0, 1.0, 1.0, 0.0])
    ((Q, T),) = make_problems(data, "binary", pos_label="a")
    assert_allclose(Q[:, 0], 1 - p)
    assert_array_equal(T[:, 0], [1.0, 0.0, 0.0, 1.0])


def test_resolve_mode():
    assert resolve_mode("auto", 2) == "binary"
    assert resolve_mode("auto", 3) == "top_label"
    assert resolve_mode("classwise", 2) == "classwise"
    with pytest.raises(ValueError, match="mode='binary' needs 2 classes"):
        resolve_mode("binary", 3)


def test_binary_problem_is_the_binary_or_top_label_problem_with_rescaled_weights():
    p, y, w = binary_problem(Y3, P3, sample_weight=[1, 2, 4, 2, 1])
    assert_array_equal(p, P3.max(axis=1))
    assert_allclose(y, [1.0, 0.5, 0.0, 0.5, 1 / 3])
    assert_array_equal(w, [.25, .5, 1, .5, .25])
    p, y, w = binary_problem([0, 1, 1], [.2, .6, .9], rescale=False, sample_weight=[2, 2, 4])
    assert_array_equal(p, [.2, .6, .9])
    assert_array_equal(y, [0.0, 1.0, 1.0])
    assert_array_equal(w, [2.0, 2.0, 4.0])
    _, _, w = binary_problem([0, 1, 1], [.2, .6, .9])
    assert_array_equal(w, np.ones(3))
    with pytest.raises(ValueError, match="mode"):
        binary_problem(Y3, P3, mode="classwise")


# --------------------------------------------------------------------------------------------
# the binned errors


def _brute_error(Q, T, cells, w, norm, debias):
    """The binned error (squared for l2) by its definition, one bin at a time."""
    w = np.ones(len(Q)) if w is None else np.asarray(w, dtype=float)
    terms, weights = [], []
    for c in np.unique(cells):
        m = cells == c
        W = w[m].sum()
        if W == 0:
            continue
        gap = (w[m] @ T[m] - w[m] @ Q[m]) / W
        if gap.size == 1:
            d = abs(gap[0])
        else:
            d = {"l1": 0.5 * np.abs(gap).sum(), "l2": np.sqrt(gap @ gap),
                 "max": np.abs(gap).max()}[norm]
        if norm == "l2":
            d = d * d
            if debias:
                ybar = (w[m] @ T[m]) / W
                d = d - (ybar * (1 - ybar)).sum() / (W - 1) if W > 1 else 0.0
        terms.append(d)
        weights.append(W)
    terms, weights = np.array(terms), np.array(weights)
    return terms.max() if norm == "max" else float(weights @ terms / weights.sum())


@pytest.mark.parametrize("norm, debias", [("l1", False), ("l2", False), ("l2", True),
                                          ("max", False)])
@pytest.mark.parametrize("weighted", [False, True])
def test_problem_error_is_the_error_of_its_definition(norm, weighted, debias):
    rng = np.random.default_rng(3)
    n = 60
    Q = rng.dirichlet(np.ones(3), size=n)
    T = np.eye(3)[rng.integers(3, size=n)]
    w = rng.integers(1, 4, size=n).astype(float) if weighted else None
    cells = rng.integers(0, 5, size=n)
    for d in (1, 3):
        value, shares = problem_error(Q[:, :d], T[:, :d], cells, norm, debias, w)
        assert value == pytest.approx(_brute_error(Q[:, :d], T[:, :d], cells, w, norm, debias),
                                      rel=1e-12, abs=1e-15)
        assert shares.shape == (n,)


def test_cell_error_combine_and_finalize():
    W = np.array([2.0, 1.0, 0.0])
    ST = np.array([[2.0], [0.0], [0.0]])
    SQ = np.array([[1.0], [0.5], [0.0]])
    value, per_cell = cell_error(W, ST, SQ, "l1", False)
    assert value == pytest.approx((2 * 0.5 + 1 * 0.5) / 3)
    assert_allclose(per_cell[:2], [0.5, 0.5])
    assert cell_error(W, ST, SQ, "max", False)[0] == pytest.approx(0.5)
    assert combine([0.1, 0.3], [None, None], "l1")[0] == pytest.approx(0.2)
    assert combine([0.1, 0.3], [None, None], "max")[0] == 0.3
    assert finalize(0.25, "l2", False) == 0.5
    assert finalize(0.25, "l2", True) == 0.25
    assert finalize(0.25, "l1", False) == 0.25
    with pytest.warns(UserWarning, match="negative"):
        assert finalize(-0.1, "l2", False) == 0.0
    with pytest.raises(ValueError, match="squared=True"):
        check_binned_params("l1", True, 10, "uniform", "auto", False, 1)
    with pytest.raises(ValueError, match="strategy"):
        check_binned_params("l1", False, 10, "nope", "auto", False, 1)


@pytest.mark.parametrize("mode", ["binary", "top_label", "classwise", "canonical"])
@pytest.mark.parametrize("strategy", ["uniform", "quantile", "median_variance"])
def test_binned_errors_and_fixed_predictions_equal_calibration_error(mode, strategy):
    rng = np.random.default_rng(4)
    n, C = 40, 2 if mode == "binary" else 3
    P = rng.dirichlet(np.ones(C), size=n)
    y = rng.integers(C, size=n)
    kwargs = dict(norm="l2", n_bins=4, strategy=strategy, mode=mode)
    data = check_labels_and_probabilities(y, P)
    problems = make_problems(data, mode)
    binnings = [make_binning(strategy, 4).fit(Q) for Q, _ in problems]
    value, _ = binned_errors(problems, binnings, "l2", False, None)
    assert finalize(value, "l2", False) == pytest.approx(
        calibration_error(y, P, **kwargs), rel=1e-12)
    codes = rng.integers(C, size=(3, n))
    fixed = FixedPredictionErrors(data, **kwargs).values(codes)
    assert_allclose(fixed, [calibration_error(c, P, labels=np.arange(C), **kwargs)
                            for c in codes], rtol=1e-12)


# --------------------------------------------------------------------------------------------
# reliability bins and binomial intervals


def test_binomial_intervals_are_the_textbook_ones():
    freq = np.array([0.0, 0.25, 0.5, 1.0])
    n = np.array([8.0, 8.0, 10.0, 5.0])
    x = freq * n
    lo, hi = binomial_interval(freq, n, 0.9, "clopper-pearson")
    with np.errstate(invalid="ignore"):
        ref_lo = np.where(x > 0, stats.beta.ppf(0.05, x, n - x + 1), 0.0)
        ref_hi = np.where(x < n, stats.beta.ppf(0.95, x + 1, n - x), 1.0)
    assert_allclose(lo, ref_lo, rtol=1e-10)
    assert_allclose(hi, ref_hi, rtol=1e-10)
    lo, hi = binomial_interval(freq, n, 0.9, "jeffreys")
    with np.errstate(invalid="ignore"):
        assert_allclose(lo, np.where(x > 0, stats.beta.ppf(0.05, x + .5, n - x + .5), 0.0),
                        rtol=1e-10)
        assert_allclose(hi, np.where(x < n, stats.beta.ppf(0.95, x + .5, n - x + .5), 1.0),
                        rtol=1e-10)
    lo, hi = binomial_interval(freq, n, 0.9, "wilson")
    z = stats.norm.ppf(0.95)
    centre = (freq + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * np.sqrt(freq * (1 - freq) / n + z * z / (4 * n * n))
    assert_allclose(lo, np.minimum(centre - half, freq), rtol=1e-10, atol=1e-15)
    assert_allclose(hi, np.maximum(centre + half, freq), rtol=1e-10)


def test_reliability_set_up_and_cells_are_the_binned_problems():
    rng = np.random.default_rng(5)
    p = rng.random(30)
    y = (rng.random(30) < p).astype(int)
    parts, mode, w, w_freq, n_bins, min_bin_size, level = curve_setup(
        y, p, "auto", "uniform", 6, 1, 0.9, None, None, None)
    assert (mode, w, w_freq, n_bins, min_bin_size, level) == ("binary", None, None, 6, 1, 0.9)
    ((Q, T, binning, label),) = parts
    assert label == 1
    assert_array_equal(Q[:, 0], p)
    cells, ids = bin_cells(Q[:, 0], binning)
    assert ids is None
    assert_array_equal(cells, [_uniform_bin(v, 6) for v in p])
