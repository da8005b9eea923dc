"""Prediction intervals given by their bounds: interval_score, interval_width and
interval_bounds_coverage against brute force, hand values, the pinball loss, the propriety of the
score, weights against repeated rows, and every error path."""

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import mean_pinball_loss

import skcalib
from skcalib import interval_bounds_coverage, interval_coverage, interval_score, interval_width
from skcalib import metrics


def _bounds(rng, n):
    lo = rng.normal(size=n)
    return np.column_stack([lo, lo + rng.exponential(size=n)])


def _brute_score(y, B, level, w=None):
    alpha = 1 - level
    w = np.ones(len(y)) if w is None else np.asarray(w, float)
    total = 0.0
    for yi, (lo, hi), wi in zip(y, B, w):
        s = hi - lo
        if yi < lo:
            s += 2 / alpha * (lo - yi)
        if yi > hi:
            s += 2 / alpha * (yi - hi)
        total += wi * s
    return total / w.sum()


# --------------------------------------------------------------------------------------------
# values


def test_exported():
    for name in ("interval_score", "interval_width", "interval_bounds_coverage"):
        assert name in skcalib.__all__ and name in metrics.__all__
        assert getattr(skcalib, name) is getattr(metrics, name)


def test_hand_computed_score():
    # alpha = 0.2: widths 2, 2, 2; misses 0, 0.5 (above), 1 (below) -> 6 + 10 * 1.5 = 21 over 3
    y = [0.0, 1.5, -2.0]
    assert interval_score(y, [[-1.0, 1.0]] * 3, level=0.8) == pytest.approx(7.0)
    # at level 0.5 (alpha 0.5, factor 4), bounds [-0.5, 0.5]: 3 * 1 + 4 * (1 + 1.5) = 13
    assert interval_score(y, [[-0.5, 0.5]] * 3, level=0.5) == pytest.approx(13 / 3)


@pytest.mark.parametrize("weighted", [False, True])
def test_score_against_brute_force(weighted):
    rng = np.random.default_rng(0)
    y = rng.normal(scale=2, size=40)
    B = _bounds(rng, 40)
    w = rng.uniform(0, 3, size=40) if weighted else None
    got = interval_score(y, B, level=0.9, sample_weight=w)
    assert got == pytest.approx(_brute_score(y, B, 0.9, w), rel=1e-12)


@pytest.mark.parametrize("level", [0.5, 0.8, 0.9, 0.95])
def test_score_is_scaled_pinball_losses(level):
    # IS_{1-alpha} = (2 / alpha) (pinball_{alpha/2}(l) + pinball_{1-alpha/2}(u))
    rng = np.random.default_rng(1)
    y = rng.normal(size=200)
    B = _bounds(rng, 200)
    alpha = 1 - level
    pinball = (mean_pinball_loss(y, B[:, 0], alpha=alpha / 2)
               + mean_pinball_loss(y, B[:, 1], alpha=1 - alpha / 2))
    assert interval_score(y, B, level=level) == pytest.approx(2 / alpha * pinball, rel=1e-12)


def test_true_central_interval_minimises_the_score():
    # Normal targets N(mu_i, 1): the true 90% interval mu_i +- z scores below shifted, narrowed
    # and widened intervals (seeded Monte Carlo; the margins are many standard errors wide).
    rng = np.random.default_rng(2)
    n = 200_000
    mu = rng.normal(size=n)
    y = mu + rng.normal(size=n)
    z = stats.norm.ppf(0.95)
    true = interval_score(y, np.column_stack([mu - z, mu + z]), level=0.9)
    # its expectation: 2z + (2 / alpha) * 2 E(Z - z)+, with E(Z - z)+ = phi(z) - z (1 - Phi(z))
    expected = 2 * z + 2 / 0.1 * 2 * (stats.norm.pdf(z) - z * 0.05)
    assert true == pytest.approx(expected, rel=0.02)
    for lo, hi in [(-z + 0.3, z + 0.3), (-z - 0.3, z - 0.3), (-0.8 * z, 0.8 * z),
                   (-1.2 * z, 1.2 * z), (-z, z + 0.3), (-z + 0.3, z)]:
        other = interval_score(y, np.column_stack([mu + lo, mu + hi]), level=0.9)
        assert other > true + 0.01


def test_width():
    B = np.array([[0.0, 1.0], [2.0, 5.0], [-1.0, -1.0]])
    assert interval_width(B) == pytest.approx(4 / 3)
    assert interval_width(B, sample_weight=[1, 0, 1]) == pytest.approx(0.5)
    # the width is the score of intervals that cover every target
    assert interval_width(B) == pytest.approx(interval_score([0.5, 3.0, -1.0], B, level=0.9))


@pytest.mark.parametrize("weighted", [False, True])
def test_coverage_against_direct_count(weighted):
    rng = np.random.default_rng(3)
    y = rng.normal(size=101)
    B = _bounds(rng, 101)
    B[0] = [y[0], y[0] + 1]  # closed intervals: a target on a bound is covered
    B[1] = [y[1] - 1, y[1]]
    w = rng.uniform(0, 2, size=101) if weighted else np.ones(101)
    inside = [lo <= yi <= hi for yi, (lo, hi) in zip(y, B)]
    expected = sum(wi for wi, c in zip(w, inside) if c) / w.sum()
    got = interval_bounds_coverage(y, B, sample_weight=w if weighted else None)
    assert got == pytest.approx(expected, rel=1e-12)


def test_bounds_coverage_agrees_with_distribution_coverage():
    # the central 80% interval of N(m, s) as bounds covers what interval_coverage counts
    rng = np.random.default_rng(4)
    m, s = rng.normal(size=300), rng.uniform(0.5, 2, size=300)
    y = m + s * rng.normal(size=300)
    z = stats.norm.ppf(0.9)
    B = np.column_stack([m - z * s, m + z * s])
    assert interval_bounds_coverage(y, B) == pytest.approx(
        interval_coverage(y, np.column_stack([m, s]), levels=0.8))


@pytest.mark.parametrize("fn", ["score", "width", "coverage"])
def test_weights_equal_repeated_rows(fn):
    rng = np.random.default_rng(5)
    y = rng.normal(size=30)
    B = _bounds(rng, 30)
    k = rng.integers(0, 4, size=30)
    k[0] = 1
    call = {"score": lambda y, B, w=None: interval_score(y, B, level=0.8, sample_weight=w),
            "width": lambda y, B, w=None: interval_width(B, sample_weight=w),
            "coverage": lambda y, B, w=None: interval_bounds_coverage(y, B, sample_weight=w)}[fn]
    assert call(y, B, k) == pytest.approx(call(np.repeat(y, k), np.repeat(B, k, axis=0)),
                                          rel=1e-12)


def test_dict_of_levels():
    rng = np.random.default_rng(6)
    y = rng.normal(size=50)
    B9, B5 = _bounds(rng, 50), _bounds(rng, 50)
    d = {0.9: B9, 0.5: B5}
    got = interval_score(y, d)
    assert list(got) == [0.5, 0.9]  # increasing order of level
    assert got[0.9] == pytest.approx(interval_score(y, B9, level=0.9))
    assert got[0.5] == pytest.approx(interval_score(y, B5, level=0.5))
    assert interval_width(d) == {0.5: interval_width(B5), 0.9: interval_width(B9)}
    assert interval_bounds_coverage(y, d) == {0.5: interval_bounds_coverage(y, B5),
                                              0.9: interval_bounds_coverage(y, B9)}
    # numpy levels become floats
    assert list(interval_width({np.float64(0.9): B9})) == [0.9]


def test_inputs_not_mutated_and_lists_accepted():
    y = np.array([0.0, 2.0])
    B = np.array([[-1.0, 1.0], [0.0, 1.0]])
    y0, B0 = y.copy(), B.copy()
    a = interval_score(y, B, level=0.9)
    np.testing.assert_array_equal(y, y0)
    np.testing.assert_array_equal(B, B0)
    assert interval_score(y.tolist(), B.tolist(), level=0.9) == a
    assert isinstance(a, float)


# --------------------------------------------------------------------------------------------
# error paths


Y = [0.0, 1.0, 2.0]
B = [[-1.0, 1.0], [0.0, 2.0], [1.0, 3.0]]


def _level(b):
    return None if isinstance(b, dict) else 0.9


@pytest.mark.parametrize("call", [
    lambda b: interval_score(Y, b, level=_level(b)),
    lambda b: interval_width(b),
    lambda b: interval_bounds_coverage(Y, b),
])
@pytest.mark.parametrize("bad, exc, match", [
    ([[1.0, 0.0], [0.0, 2.0], [1.0, 3.0]], ValueError, r"y_interval.*lower <= upper.*row 0"),
    ([[-1.0, np.nan], [0.0, 2.0], [1.0, 3.0]], ValueError, "y_interval.*NaN"),
    ([[-1.0, np.inf], [0.0, 2.0], [1.0, 3.0]], ValueError, "y_interval.*infinity"),
    ([["-1", "1"], ["0", "2"], ["1", "3"]], ValueError, "y_interval must contain numbers"),
    ([[-1.0, 0.0, 1.0]] * 3, ValueError, r"y_interval must have shape \(n_samples, 2\)"),
    ([-1.0, 0.0, 1.0], ValueError, r"y_interval must have shape \(n_samples, 2\)"),
    (np.zeros((3, 2), dtype=bool), TypeError, "y_interval must contain real numbers"),
    ({0.9: [[1.0, 0.0]] * 3}, ValueError, r"y_interval\[0.9\].*lower <= upper"),
    ({1.5: B}, ValueError, "levels of y_interval must lie in"),
    ({"0.9": B}, TypeError, "levels of y_interval must be a real number"),
    ({}, ValueError, "y_interval must not be an empty dict"),
    ([[-1.0, 1.0], [0.0]], ValueError, "y_interval"),
])
def test_bad_bounds(call, bad, exc, match):
    with pytest.raises(exc, match=match):
        call(bad)


@pytest.mark.parametrize("call", [
    lambda y, b: interval_score(y, b, level=_level(b)),
    lambda y, b: interval_bounds_coverage(y, b),
])
@pytest.mark.parametrize("y, b, exc, match", [
    ([0.0, 1.0], B, ValueError, "y_interval has 3 rows but y_true has 2"),
    (Y, {0.9: B[:2]}, ValueError, r"y_interval\[0.9\] has 2 rows but y_true has 3"),
    ([0.0, np.nan, 1.0], B, ValueError, "y_true.*NaN"),
    (["0", "1", "2"], B, ValueError, "y_true must contain numbers"),
    ([True, False, True], B, TypeError, "y_true must contain real numbers"),
    ([[0.0, 1.0]] * 3, B, ValueError, r"y_true must have shape \(n_samples,\)"),
    ([[0.0, 1.0], [2.0]], B, ValueError, "y_true"),
])
def test_bad_targets(call, y, b, exc, match):
    with pytest.raises(exc, match=match):
        call(y, b)


@pytest.mark.parametrize("level, exc, match", [
    (None, TypeError, "level is required for an array y_interval"),
    (0.0, ValueError, "level must lie in"),
    (1.0, ValueError, "level must lie in"),
    (True, TypeError, "level must be a real number"),
    ("0.9", TypeError, "level must be a real number"),
    ([0.9], TypeError, "level must be a real number"),
])
def test_bad_level(level, exc, match):
    with pytest.raises(exc, match=match):
        interval_score(Y, B, level=level)


def test_dict_lengths_must_agree_for_width():
    with pytest.raises(ValueError, match=r"y_interval\[0.9\] has 2 rows but y_interval\[0.5\] has 3"):
        interval_width({0.5: B, 0.9: B[:2]})


def test_beyond_the_float_range_is_an_error_not_inf():
    huge = [[-1e308, 1e308]]
    with pytest.raises(ValueError, match="width of y_interval exceeds the float range"):
        interval_width(huge)
    with pytest.raises(ValueError, match="interval score of y_interval exceeds the float range"):
        interval_score([-1e308], [[1e307, 1e308]], level=0.5)
    with pytest.raises(ValueError, match="interval score"):
        interval_score([0.0], {0.9: huge})
    # huge but representable values average without overflow (a mean near the float maximum)
    assert interval_width([[0.0, 1e308]] * 2) == 1e308
    assert interval_score([0.0, 0.0], [[1e307, 1e308]] * 2, level=0.5) == pytest.approx(1.3e308)


def test_level_with_dict_refused():
    with pytest.raises(TypeError, match="level must be None when y_interval is a dict"):
        interval_score(Y, {0.9: B}, level=0.9)


@pytest.mark.parametrize("call", [
    lambda w: interval_score(Y, B, level=0.9, sample_weight=w),
    lambda w: interval_width(B, sample_weight=w),
    lambda w: interval_bounds_coverage(Y, B, sample_weight=w),
])
@pytest.mark.parametrize("w, match", [
    ([1.0, 1.0], "sample_weight has 2 entries"),
    ([1.0, -1.0, 1.0], "sample_weight must be non-negative"),
    ([1.0, np.nan, 1.0], "sample_weight contains NaN"),
    ([0.0, 0.0, 0.0], "sample_weight must have a positive sum"),
])
def test_bad_weights(call, w, match):
    with pytest.raises(ValueError, match=match):
        call(w)


def test_interval_coverage_still_reads_mean_std():
    # adding the bounds form changed nothing: an (n, 2) array is [mean, std] there
    y = [0.0, 0.5, 3.0]
    assert interval_coverage(y, [[0.0, 1.0]] * 3, levels=0.9) == pytest.approx(2 / 3)
    assert interval_bounds_coverage(y, [[0.0, 1.0]] * 3) == pytest.approx(2 / 3)
    assert interval_coverage([0.0, 1.5], [[0.0, 1.0]] * 2, levels=0.9) == pytest.approx(1.0)
    assert interval_bounds_coverage([0.0, 1.5], [[0.0, 1.0]] * 2) == pytest.approx(0.5)
