"""reliability_curve: agreement with scikit-learn, with the ECE, brute force, SciPy's binomial
intervals, Monte-Carlo coverage, weights, top-label ties, class-wise curves and error paths."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats
from sklearn.calibration import calibration_curve

import skcalib
from skcalib import calibration_error, reliability_curve
from skcalib.metrics import ReliabilityCurve

FIELDS = ("prob_pred", "prob_true", "counts", "weight_sums", "ci_low", "ci_high", "bin_lower",
          "bin_upper", "bin_index")


def _binary_data(n, seed, ties=False):
    rng = np.random.default_rng(seed)
    p = rng.beta(0.7, 0.9, size=n)
    if ties:
        p = np.round(p, 1)  # many predictions on the uniform edges k / 10, and 0 and 1
    y = (rng.random(n) < p**1.3).astype(int)
    return y, p


def _assert_curves_equal(a, b, exclude=()):
    for f in FIELDS:
        if f not in exclude:
            assert_allclose(getattr(a, f), getattr(b, f), rtol=1e-12, atol=1e-15, err_msg=f)


# ------------------------------------------------------------------------------------------
# scikit-learn's calibration_curve


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@pytest.mark.parametrize("n, n_bins, seed", [(50, 5, 0), (1000, 10, 1), (997, 7, 2),
                                             (3000, 25, 3), (20, 40, 4)])
def test_agrees_with_sklearn_calibration_curve(strategy, n, n_bins, seed):
    y, p = _binary_data(n, seed)
    prob_true, prob_pred = calibration_curve(y, p, n_bins=n_bins, strategy=strategy)
    c = reliability_curve(y, p, n_bins=n_bins, strategy=strategy)
    assert_allclose(c.prob_true, prob_true, rtol=1e-14)
    assert_allclose(c.prob_pred, prob_pred, rtol=1e-14)


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_agrees_with_sklearn_on_edges_zeros_ones_and_string_labels(strategy):
    # Predictions rounded to 0.1: many values on the edges k / 10 (and 0, 1), where the
    # right-closed convention decides; 0.1, 0.2, 0.4, 0.5 equal linspace's edges bit for bit.
    y, p = _binary_data(600, 5, ties=True)
    assert np.any(p == 0.0) and np.any(p == 1.0)
    names = np.array(["no", "yes"])[y]
    prob_true, prob_pred = calibration_curve(names, p, n_bins=10, strategy=strategy,
                                             pos_label="yes")
    c = reliability_curve(names, p, n_bins=10, strategy=strategy, pos_label="yes")
    assert c.label == "yes"
    assert_allclose(c.prob_true, prob_true, rtol=1e-14)
    assert_allclose(c.prob_pred, prob_pred, rtol=1e-14)
    # pos_label="no": the curve of P(no) = 1 - p (rounded again: 1 - 0.7 is the float
    # 0.30000000000000004 of test_documented_difference_from_sklearn_uniform_edges)
    q = np.round(1 - p, 1)
    prob_true, prob_pred = calibration_curve(names, q, n_bins=10, strategy=strategy,
                                             pos_label="no")
    c = reliability_curve(names, q, n_bins=10, strategy=strategy, pos_label="no")
    assert_allclose(c.prob_true, prob_true, rtol=1e-14)
    assert_allclose(c.prob_pred, prob_pred, rtol=1e-14)


def test_documented_difference_from_sklearn_uniform_edges():
    # sklearn's edges are np.linspace(0, 1, 11): the fourth is 3 * 0.1 = 0.30000000000000004,
    # skcalib's is exactly 3 / 10 = 0.3. A prediction between the two lies in bin (0.3, 0.4]
    # here and in bin (0.2, 0.30000000000000004] in scikit-learn.
    edge = np.linspace(0.0, 1.0, 11)[3]
    assert edge > 0.3 and edge == 1 - 0.7  # arises in practice, e.g. from 1 - p
    p = np.array([0.25, edge, 0.35])
    y = np.array([0, 1, 0])
    c = reliability_curve(y, p, n_bins=10)
    assert_array_equal(c.bin_index, [2, 3])
    assert_array_equal(c.counts, [1, 2])
    assert_allclose(c.prob_pred, [0.25, (edge + 0.35) / 2])
    prob_true, prob_pred = calibration_curve(y, p, n_bins=10)
    assert_allclose(prob_pred, [(0.25 + edge) / 2, 0.35])  # sklearn groups it the other way
    assert_allclose(prob_true, [0.5, 0.0])
    # skcalib's bins are the ECE's bins
    assert 0.3 < edge <= c.bin_upper[1] and c.bin_lower[1] == 0.3


def test_documented_difference_from_sklearn_quantile_levels():
    # skcalib's quantile edges are np.quantile(p, k / n_bins); scikit-learn's are
    # np.percentile(p, linspace(0, 1, n_bins + 1) * 100), whose level 4/6 comes out as
    # 0.6666666666666665 after the division by 100. With n = 400 the exact edge of level 2/3 has
    # the virtual index 399 * 2 / 3 = 266: the data point s[266] itself, which belongs to the
    # lower bin (right-closed). skcalib's level gives the index 266.0; scikit-learn's gives
    # 265.99999999999994, an edge just below s[266], which moves to the upper bin there.
    p = np.r_[np.linspace(0.01, 0.1, 266), np.linspace(0.9, 0.99, 134)]  # s[266] = 0.9
    y = np.zeros(400, dtype=int)
    y[266] = 1
    c = reliability_curve(y, p, n_bins=6, strategy="quantile")
    assert c.bin_upper[3] == p[266] == np.quantile(p, 4 / 6)
    assert c.prob_true[3] == 1 / c.counts[3] and c.prob_true[4] == 0.0
    prob_true, _ = calibration_curve(y, p, n_bins=6, strategy="quantile")
    assert prob_true[3] == 0.0 and prob_true[4] > 0.0
    assert np.percentile(p, np.linspace(0, 1, 7)[4] * 100) < p[266]


# ------------------------------------------------------------------------------------------
# Brute force and the ECE


def _brute_curve(q, t, w, n_bins):
    """Right-closed uniform bins by exact comparison with k / n_bins, loops over bins."""
    w = np.ones_like(q) if w is None else w
    idx = np.zeros(q.shape[0], dtype=int)
    for k in range(1, n_bins):
        idx += q > k / n_bins
    rows = []
    for b in range(n_bins):
        m = (idx == b) & (w > 0)
        if m.any():
            rows.append((np.average(q[m], weights=w[m]), np.average(t[m], weights=w[m]),
                         m.sum(), w[m].sum(), b))
    return [np.array(col) for col in zip(*rows)]


@pytest.mark.parametrize("weighted", [False, True])
def test_against_brute_force_and_scipy_intervals(weighted):
    y, p = _binary_data(300, 6, ties=True)
    rng = np.random.default_rng(7)
    w = rng.integers(0, 4, size=y.size).astype(float) if weighted else None
    c = reliability_curve(y, p, n_bins=10, sample_weight=w, interval="clopper-pearson",
                          confidence_level=0.9)
    pred, freq, cnt, wsum, b = _brute_curve(p, y.astype(float), w, 10)
    assert_allclose(c.prob_pred, pred, rtol=1e-12)
    assert_allclose(c.prob_true, freq, rtol=1e-12)
    assert_array_equal(c.counts, cnt)
    assert_allclose(c.weight_sums, wsum)
    assert_array_equal(c.bin_index, b)
    assert_allclose(c.bin_lower, b / 10)
    assert_allclose(c.bin_upper, (b + 1) / 10)
    for i in range(len(c)):
        k = int(round(freq[i] * wsum[i]))
        ci = stats.binomtest(k, int(wsum[i])).proportion_ci(0.9, method="exact")
        assert_allclose([c.ci_low[i], c.ci_high[i]], [ci.low, ci.high], rtol=1e-9, atol=1e-14)


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@pytest.mark.parametrize("mode", ["binary", "top_label", "classwise"])
@pytest.mark.parametrize("weighted", [False, True])
def test_weighted_mean_gap_is_the_ece(strategy, mode, weighted):
    rng = np.random.default_rng(8)
    n, C = 500, 2 if mode == "binary" else 4
    P = rng.dirichlet(np.ones(C), size=n)
    P[:40] = np.round(P[:40] * 4) / 4  # some ties and edge values
    P[:40] /= P[:40].sum(1, keepdims=True)
    y = rng.integers(0, C, size=n)
    w = rng.uniform(0.0, 3.0, size=n) if weighted else None
    curves = reliability_curve(y, P, mode=mode, strategy=strategy, n_bins=12, sample_weight=w)
    curves = curves if isinstance(curves, list) else [curves]
    per_curve = [np.average(np.abs(c.prob_true - c.prob_pred), weights=c.weight_sums)
                 for c in curves]
    ece = calibration_error(y, P, mode=mode, strategy=strategy, n_bins=12, sample_weight=w)
    assert_allclose(np.mean(per_curve), ece, rtol=1e-12)
    mce = calibration_error(y, P, mode=mode, strategy=strategy, n_bins=12, sample_weight=w,
                            norm="max")
    assert_allclose(max(np.max(np.abs(c.prob_true - c.prob_pred)) for c in curves), mce,
                    rtol=1e-12)


def test_quantile_edges_are_numpy_quantiles():
    y, p = _binary_data(1001, 9)
    c = reliability_curve(y, p, n_bins=8, strategy="quantile")
    edges = np.quantile(p, np.arange(9) / 8)
    assert_allclose(c.bin_lower[1:], edges[1:-1], rtol=1e-15)
    assert_allclose(c.bin_upper[:-1], edges[1:-1], rtol=1e-15)
    assert c.bin_lower[0] == 0.0 and c.bin_upper[-1] == 1.0
    assert_array_equal(c.counts, np.bincount(np.searchsorted(edges[1:-1], p)))
    # every prediction lies in its bin (right-closed)
    assert np.all((c.prob_pred > c.bin_lower) & (c.prob_pred <= c.bin_upper))


def test_quantile_repeated_edges_are_merged():
    p = np.r_[np.zeros(60), np.linspace(0.1, 0.9, 40)]
    y = (np.arange(100) % 3 == 0).astype(int)
    c = reliability_curve(y, p, n_bins=10, strategy="quantile")
    assert c.counts[0] == 60 and c.bin_lower[0] == 0.0 and c.bin_upper[0] == 0.0
    assert c.counts.sum() == 100
    # edges: 0 (levels 0.1 .. 0.5, merged), then 0.04 (level 0.6, between 0 and 0.1): the bin
    # (0, 0.04] is empty and dropped
    assert_array_equal(c.bin_index[:2], [0, 2])
    assert_allclose(c.bin_lower[1], 0.04)
    assert np.all(c.bin_upper[:-1] <= c.bin_lower[1:])
    prob_true, prob_pred = calibration_curve(y, p, n_bins=10, strategy="quantile")
    assert_allclose(c.prob_true, prob_true)
    assert_allclose(c.prob_pred, prob_pred)


def test_zero_and_one_land_in_first_and_last_bin():
    c = reliability_curve([0, 1, 1, 0], [0.0, 1.0, 1.0, 0.5], n_bins=4)
    assert_array_equal(c.bin_index, [0, 1, 3])
    assert_array_equal(c.counts, [1, 1, 2])
    assert_allclose(c.bin_lower, [0.0, 0.25, 0.75])
    assert_allclose(c.bin_upper, [0.25, 0.5, 1.0])


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_huge_n_bins_sparse_ids(strategy):
    y, p = _binary_data(200, 10)
    c = reliability_curve(y, p, n_bins=10**12, strategy=strategy)
    assert c.counts.sum() == 200
    assert np.all(np.diff(c.bin_index) > 0)
    assert np.all((c.prob_pred >= c.bin_lower) & (c.prob_pred <= c.bin_upper))
    assert_allclose(np.average(np.abs(c.prob_true - c.prob_pred), weights=c.counts),
                    calibration_error(y, p, n_bins=10**12, strategy=strategy), rtol=1e-12)


# ------------------------------------------------------------------------------------------
# Intervals


@pytest.mark.parametrize("level", [0.5, 0.9, 0.95, 0.999])
def test_interval_formulas_against_scipy(level):
    n = np.repeat(np.arange(1, 41), 3)
    x = np.concatenate([[0, k // 2, k] for k in range(1, 41)])
    freq = x / n
    from skcalib._problems.reliability import binomial_interval as _binomial_interval

    for method, scipy_method in [("clopper-pearson", "exact"), ("wilson", "wilson")]:
        lo, hi = _binomial_interval(freq, n.astype(float), level, method)
        for i in range(n.size):
            ci = stats.binomtest(int(x[i]), int(n[i])).proportion_ci(level, method=scipy_method)
            assert_allclose([lo[i], hi[i]], [ci.low, ci.high], rtol=1e-9, atol=1e-14)
    lo, hi = _binomial_interval(freq, n.astype(float), level, "jeffreys")
    a = (1 - level) / 2
    exp_lo = np.where(x == 0, 0.0, stats.beta.ppf(a, x + 0.5, n - x + 0.5))
    exp_hi = np.where(x == n, 1.0, stats.beta.ppf(1 - a, x + 0.5, n - x + 0.5))
    assert_allclose(lo, exp_lo, rtol=1e-9, atol=1e-14)
    assert_allclose(hi, exp_hi, rtol=1e-9, atol=1e-14)


@pytest.mark.parametrize("interval", ["clopper-pearson", "wilson", "jeffreys"])
def test_interval_through_public_function_and_level(interval):
    # 7 positives in a bin of 20
    p = np.full(20, 0.3)
    y = np.r_[np.ones(7), np.zeros(13)].astype(int)
    c95 = reliability_curve(y, p, n_bins=1, interval=interval)
    c80 = reliability_curve(y, p, n_bins=1, interval=interval, confidence_level=0.8)
    assert c95.ci_low[0] < c80.ci_low[0] < 0.35 < c80.ci_high[0] < c95.ci_high[0]
    if interval != "jeffreys":
        ci = stats.binomtest(7, 20).proportion_ci(
            0.95, method="exact" if interval == "clopper-pearson" else "wilson")
        assert_allclose([c95.ci_low[0], c95.ci_high[0]], [ci.low, ci.high], rtol=1e-9)


def _coverage(interval, m, seed, reps=4, n_bins=500):
    """Covered bins and bins in ``reps`` curves of ``n_bins`` bins with ``m`` samples each; bin b
    holds the calibrated prediction p_b = (b + 1/2) / n_bins for all its samples."""
    rng = np.random.default_rng(seed)
    p_bin = (np.arange(n_bins) + 0.5) / n_bins
    p = np.repeat(p_bin, m)
    covered = total = 0
    for _ in range(reps):
        y = (rng.random(p.size) < p).astype(int)
        c = reliability_curve(y, p, n_bins=n_bins, interval=interval)
        assert len(c) == n_bins
        covered += np.count_nonzero((c.ci_low <= p_bin) & (p_bin <= c.ci_high))
        total += n_bins
    return covered, total


@pytest.mark.parametrize("m", [8, 40])
def test_clopper_pearson_coverage_at_least_nominal(m):
    # Clopper-Pearson covers with probability >= 0.95 for every p, so the number of covered bins
    # dominates Binomial(N, 0.95) stochastically: a one-sided binomial check at 1e-3.
    covered, total = _coverage("clopper-pearson", m, seed=11 + m)
    assert covered >= stats.binom.ppf(1e-3, total, 0.95)


@pytest.mark.parametrize("interval", ["wilson", "jeffreys"])
def test_wilson_jeffreys_average_coverage_near_nominal(interval):
    # Averaged over p uniform on (0, 1) their coverage is close to 0.95 (Brown, Cai and
    # DasGupta 2001) but not guaranteed for each p; a two-sided band of 2 points.
    covered, total = _coverage(interval, 40, seed=12)
    assert 0.93 <= covered / total <= 0.97


def test_interval_conservative_for_varying_predictions_within_a_bin():
    # Predictions spread across each bin (Poisson-binomial outcomes): the interval of the bin's
    # frequency still covers its mean prediction at least at the nominal rate.
    rng = np.random.default_rng(13)
    n_bins, m = 200, 30
    covered = total = 0
    for _ in range(4):
        p = (np.repeat(np.arange(n_bins), m) + rng.random(n_bins * m)) / n_bins
        y = (rng.random(p.size) < p).astype(int)
        c = reliability_curve(y, p, n_bins=n_bins)
        covered += np.count_nonzero((c.ci_low <= c.prob_pred) & (c.prob_pred <= c.ci_high))
        total += len(c)
    assert covered >= stats.binom.ppf(1e-3, total, 0.95)


def test_intervals_contain_estimate_and_are_ordered():
    y, p = _binary_data(2000, 14)
    for interval in ["clopper-pearson", "wilson", "jeffreys"]:
        c = reliability_curve(y, p, n_bins=30, interval=interval)
        assert np.all((c.ci_low <= c.prob_true) & (c.prob_true <= c.ci_high))
        assert np.all((c.ci_low >= 0) & (c.ci_high <= 1))
    cp = reliability_curve(y, p, n_bins=30, interval="clopper-pearson")
    wi = reliability_curve(y, p, n_bins=30, interval="wilson")
    assert np.all(cp.ci_high - cp.ci_low >= wi.ci_high - wi.ci_low)  # CP is the wider


# ------------------------------------------------------------------------------------------
# Weights


@pytest.mark.parametrize("interval", ["clopper-pearson", "wilson", "jeffreys"])
def test_integer_weights_equal_repeated_rows(interval):
    y, p = _binary_data(200, 15, ties=True)
    w = np.random.default_rng(16).integers(0, 4, size=200)
    rep = np.repeat(np.arange(200), w)
    a = reliability_curve(y, p, n_bins=10, sample_weight=w, interval=interval)
    b = reliability_curve(y[rep], p[rep], n_bins=10, interval=interval)
    _assert_curves_equal(a, b, exclude=("counts",))
    # counts are rows with a positive weight
    keep = w > 0
    assert_array_equal(a.counts, reliability_curve(y[keep], p[keep], n_bins=10).counts)
    assert_allclose(a.weight_sums, b.counts)


def test_weight_ratios_decide_the_curve_and_huge_weights():
    y, p = _binary_data(300, 17)
    w = np.random.default_rng(18).uniform(0.5, 2.0, size=300)
    a = reliability_curve(y, p, sample_weight=w)
    b = reliability_curve(y, p, sample_weight=w * 1e300)
    assert_allclose(a.prob_pred, b.prob_pred, rtol=1e-12)
    assert_allclose(a.prob_true, b.prob_true, rtol=1e-12)
    # 1e308 weights: the curve is the unweighted one; the weight sums overflow and the
    # intervals collapse onto the frequency (infinitely many frequency-weighted samples)
    c = reliability_curve(y, p, sample_weight=np.full(300, 1e308))
    u = reliability_curve(y, p)
    assert_allclose(c.prob_pred, u.prob_pred, rtol=1e-12)
    assert_allclose(c.prob_true, u.prob_true, rtol=1e-12)
    assert np.all(np.isinf(c.weight_sums))
    assert_array_equal(c.ci_low, c.prob_true)
    assert_array_equal(c.ci_high, c.prob_true)


# ------------------------------------------------------------------------------------------
# Modes


def test_top_label_with_ties_brute_force():
    P = np.array([[0.5, 0.5, 0.0],    # tie between 0 and 1; label 0 -> correctness 1/2
                  [0.4, 0.4, 0.2],    # tie; label 2 -> 0
                  [0.1, 0.45, 0.45],  # tie; label 2 -> 1/2
                  [0.7, 0.2, 0.1],    # label 0 -> 1
                  [0.2, 0.75, 0.05],  # label 2 -> 0
                  [1 / 3, 1 / 3, 1 / 3]])  # three-way tie; label 1 -> 1/3
    y = np.array([0, 2, 2, 0, 2, 1])
    c = reliability_curve(y, P, n_bins=2)  # auto -> top_label
    assert c.mode == "top_label" and c.label is None
    # bin (0, 0.5]: rows 0, 1, 2, 5; bin (0.5, 1]: rows 3, 4
    assert_array_equal(c.counts, [4, 2])
    assert_allclose(c.prob_pred, [(0.5 + 0.4 + 0.45 + 1 / 3) / 4, (0.7 + 0.75) / 2])
    assert_allclose(c.prob_true, [(0.5 + 0 + 0.5 + 1 / 3) / 4, 0.5])
    # the tie rule makes the curve invariant under relabelling the classes
    perm = np.array([2, 0, 1])
    d = reliability_curve(perm[y], P[:, np.argsort(perm)], n_bins=2)
    _assert_curves_equal(c, d)
    # fractional outcome counts enter the interval as a real x (continuous in x)
    x = c.prob_true[0] * 4
    ci_lo = stats.beta.ppf(0.025, x, 4 - x + 1)
    ci_hi = stats.beta.ppf(0.975, x + 1, 4 - x)
    assert_allclose([c.ci_low[0], c.ci_high[0]], [ci_lo, ci_hi], rtol=1e-9)


def test_top_label_without_ties_is_binary_curve_of_correctness():
    # n = 398: (n - 1) k / 6 is never an integer for 0 < k < 6, so no edge sits on a data point
    # (where the rounding of scikit-learn's levels can differ, see
    # test_documented_difference_from_sklearn_quantile_levels)
    rng = np.random.default_rng(19)
    P = rng.dirichlet(np.ones(5), size=398)
    y = rng.integers(0, 5, size=398)
    correct = (P.argmax(1) == y).astype(int)
    for strategy in ["uniform", "quantile"]:
        c = reliability_curve(y, P, mode="top_label", strategy=strategy, n_bins=6)
        prob_true, prob_pred = calibration_curve(correct, P.max(1), n_bins=6, strategy=strategy)
        assert_allclose(c.prob_true, prob_true, rtol=1e-14)
        assert_allclose(c.prob_pred, prob_pred, rtol=1e-14)


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_classwise_is_one_binary_curve_per_class(strategy):
    rng = np.random.default_rng(20)
    P = rng.dirichlet(np.ones(3), size=300)
    names = np.array(["cat", "dog", "emu"])
    y = names[rng.integers(0, 3, size=300)]
    w = rng.uniform(0.1, 2.0, size=300)
    curves = reliability_curve(y, P, mode="classwise", strategy=strategy, n_bins=7,
                               sample_weight=w)
    assert isinstance(curves, list) and len(curves) == 3
    for k, c in enumerate(curves):
        assert c.label == names[k] and c.mode == "classwise"
        ref = reliability_curve((y == names[k]).astype(int), P[:, k], strategy=strategy,
                                n_bins=7, sample_weight=w)
        _assert_curves_equal(c, ref)
        prob_true, prob_pred = calibration_curve(y == names[k], P[:, k], n_bins=7,
                                                 strategy=strategy)
        u = reliability_curve(y, P, mode="classwise", strategy=strategy, n_bins=7)[k]
        assert_allclose(u.prob_true, prob_true, rtol=1e-14)
        assert_allclose(u.prob_pred, prob_pred, rtol=1e-14)


def test_single_bin_and_categorical_input():
    y, p = _binary_data(50, 26)
    for strategy in ["uniform", "quantile"]:
        c = reliability_curve(y, p, n_bins=1, strategy=strategy)
        assert_array_equal(c.counts, [50])
        assert (c.bin_lower[0], c.bin_upper[0]) == (0.0, 1.0)
        assert_allclose(c.prob_true, [y.mean()])
        assert_allclose(c.prob_pred, [p.mean()])
    cat = skcalib.distributions.Categorical(np.c_[1 - p, p], classes=["a", "b"])
    names = np.array(["a", "b"])[y]
    curves = reliability_curve(names, cat, mode="classwise")
    assert [c.label for c in curves] == ["a", "b"]
    _assert_curves_equal(curves[1], reliability_curve(y, p))


def test_auto_mode_and_two_column_binary():
    y, p = _binary_data(100, 21)
    a = reliability_curve(y, p)
    b = reliability_curve(y, np.c_[1 - p, p], mode="binary")
    assert a.mode == "binary" and a.label == 1
    _assert_curves_equal(a, b)
    c = reliability_curve(y, np.c_[1 - p, p], mode="binary", pos_label=0)
    ref = reliability_curve(1 - y, 1 - p)
    _assert_curves_equal(c, ref)


def test_min_bin_size_drops_small_bins_only():
    y, p = _binary_data(150, 22)
    full = reliability_curve(y, p, n_bins=20)
    assert full.counts.min() < 8 < full.counts.max()
    kept = reliability_curve(y, p, n_bins=20, min_bin_size=8)
    sel = full.counts >= 8
    for f in FIELDS:
        assert_array_equal(getattr(kept, f), getattr(full, f)[sel], err_msg=f)
    # weighted: a bin's size is its number of rows with a positive weight
    w = np.ones(150)
    w[p <= 0.05] = 0.0
    assert np.count_nonzero(p <= 0.05) >= 2
    c = reliability_curve(y, p, n_bins=20, sample_weight=w)
    assert 0 not in c.bin_index


def test_result_object():
    y, p = _binary_data(100, 23)
    c = reliability_curve(y, p, n_bins=5, interval="wilson", confidence_level=0.9)
    assert isinstance(c, ReliabilityCurve)
    assert len(c) == c.n_kept == c.prob_pred.shape[0]
    assert c.frequency is c.prob_true and c.mean_predicted is c.prob_pred
    assert (c.strategy, c.n_bins, c.interval, c.confidence_level) == ("uniform", 5, "wilson", 0.9)
    assert c.counts.dtype == np.int64 and c.bin_index.dtype == np.int64
    assert "ReliabilityCurve(mode='binary'" in repr(c)
    assert skcalib.reliability_curve is reliability_curve
    assert "reliability_curve" in skcalib.__all__
    assert "reliability_curve" in skcalib.metrics.__all__
    assert "ReliabilityCurve" in skcalib.metrics.__all__


# ------------------------------------------------------------------------------------------
# Errors and mutation


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"mode": "canonical"}, ValueError, "mode"),
    ({"mode": "top-label"}, ValueError, "mode"),
    ({"strategy": "median_variance"}, ValueError, "strategy"),
    ({"interval": "wald"}, ValueError, "interval"),
    ({"n_bins": 0}, ValueError, "n_bins"),
    ({"n_bins": 2.5}, TypeError, "n_bins"),
    ({"min_bin_size": 0}, ValueError, "min_bin_size"),
    ({"min_bin_size": 1.5}, TypeError, "min_bin_size"),
    ({"confidence_level": 0.0}, ValueError, "confidence_level"),
    ({"confidence_level": 1.0}, ValueError, "confidence_level"),
    ({"confidence_level": np.nan}, ValueError, "confidence_level"),
    ({"confidence_level": "0.9"}, TypeError, "confidence_level"),
    ({"sample_weight": [1.0, -1.0, 1.0, 1.0]}, ValueError, "sample_weight"),
    ({"sample_weight": [1.0, 1.0]}, ValueError, "sample_weight"),
    ({"pos_label": 3}, ValueError, "pos_label"),
])
def test_invalid_parameters(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        reliability_curve([0, 1, 1, 0], [0.1, 0.8, 0.6, 0.3], **kwargs)


def test_invalid_data():
    with pytest.raises(ValueError, match="y_proba"):
        reliability_curve([0, 1], [0.1, 1.2])
    with pytest.raises(ValueError, match="inconsistent lengths"):
        reliability_curve([0, 1, 1], [0.1, 0.2])
    P = np.full((4, 3), 1 / 3)
    with pytest.raises(ValueError, match="mode='binary'"):
        reliability_curve([0, 1, 2, 0], P, mode="binary")
    with pytest.raises(ValueError, match="mode"):
        reliability_curve([0, 1], [0.1, 0.2], mode=None)


def test_inputs_not_mutated():
    rng = np.random.default_rng(24)
    P = rng.dirichlet(np.ones(3), size=50)
    P[0] = [0.5, 0.5, 0.0]
    y = rng.integers(0, 3, size=50)
    w = rng.uniform(0.0, 2.0, size=50)
    copies = [P.copy(), y.copy(), w.copy()]
    for mode in ["top_label", "classwise"]:
        for strategy in ["uniform", "quantile"]:
            reliability_curve(y, P, mode=mode, strategy=strategy, sample_weight=w)
    p = P[:, 0].copy()
    p_copy = p.copy()
    reliability_curve((y == 0).astype(int), p, strategy="quantile", sample_weight=w)
    for a, b in zip([P, y, w, p], copies + [p_copy]):
        assert_array_equal(a, b)
