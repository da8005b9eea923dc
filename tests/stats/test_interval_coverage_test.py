"""interval_coverage_test: the binomial test of the coverage of intervals given by their bounds
(conformal, quantile-regression), one level or a dict of levels, and its separation from
coverage_test (which reads an (n, 2) array as [mean, std])."""

import numpy as np
import pytest
from scipy.stats import binomtest, norm

from skcalib import interval_bounds_coverage
from skcalib.distributions import Normal
from skcalib.stats import (ProportionTestResult, adjust_pvalues, coverage_test,
                           interval_coverage_test)


def _bounds(mu, level, scale=1.0):
    half = norm.ppf((1 + level) / 2) * scale
    return np.column_stack([mu - half, mu + half])


def _data(n, seed):
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=n)
    return mu + rng.normal(size=n), mu


@pytest.mark.parametrize("level", [0.5, 0.8, 0.9])
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_equals_scipy_binomtest_of_the_covered_targets(level, alternative):
    y, mu = _data(200, 0)
    B = _bounds(mu, level, scale=0.8)
    k = int(np.sum((B[:, 0] <= y) & (y <= B[:, 1])))  # brute force, closed intervals
    res = interval_coverage_test(y, B, level=level, alternative=alternative)
    ref = binomtest(k, 200, p=level, alternative=alternative)
    assert isinstance(res, ProportionTestResult)
    assert res.k == k and res.n_samples == 200 and res.expected == level
    assert res.statistic == interval_bounds_coverage(y, B)
    assert res.pvalue == ref.pvalue and res.alternative == alternative
    assert tuple(res.proportion_ci(0.95)) == pytest.approx(tuple(ref.proportion_ci(0.95)),
                                                           abs=1e-15)


def test_agrees_with_coverage_test_on_the_central_intervals():
    """The bounds of a Normal's central intervals give coverage_test's result."""
    y, mu = _data(300, 1)
    for level in (0.5, 0.9):
        a = interval_coverage_test(y, _bounds(mu, level), level=level)
        b = coverage_test(y, Normal(mu, 1.0), level=level)
        assert (a.k, a.pvalue) == (b.k, b.pvalue)


def test_dict_of_levels_gives_a_dict_of_results_and_holm_combines_them():
    y, mu = _data(400, 2)
    res = interval_coverage_test(y, {0.9: _bounds(mu, 0.9), 0.5: _bounds(mu, 0.5, scale=0.5)})
    assert list(res) == [0.5, 0.9]
    for lv, r in res.items():
        single = interval_coverage_test(y, _bounds(mu, lv, scale=0.5 if lv == 0.5 else 1.0),
                                        level=lv)
        assert (r.k, r.pvalue, r.expected) == (single.k, single.pvalue, lv)
    assert res[0.5].pvalue < 1e-6  # too narrow at 0.5
    adjusted = adjust_pvalues([r.pvalue for r in res.values()], method="holm")
    assert adjusted[0] < 1e-5 and np.all(adjusted >= [r.pvalue for r in res.values()])


def test_size_is_the_level_on_calibrated_intervals():
    """Monte-Carlo size at 0.05 of calibrated 80 % intervals: within a 99.9 % binomial interval
    of 0.05 or below it (the exact binomial test is conservative)."""
    rng = np.random.default_rng(3)
    reps, n = 500, 100
    rejections = 0
    for _ in range(reps):
        mu = rng.normal(size=n)
        y = mu + rng.normal(size=n)
        rejections += interval_coverage_test(y, _bounds(mu, 0.8), level=0.8).pvalue < 0.05
    assert binomtest(int(rejections), reps).proportion_ci(0.999).low <= 0.05
    assert rejections > 0


def test_power_and_direction():
    y, mu = _data(500, 4)
    narrow = interval_coverage_test(y, _bounds(mu, 0.9, scale=0.6), level=0.9, alternative="less")
    assert narrow.estimate < 0 and narrow.pvalue < 1e-6
    wide = interval_coverage_test(y, _bounds(mu, 0.5, scale=2.0), level=0.5,
                                  alternative="greater")
    assert wide.estimate > 0 and wide.pvalue < 1e-6


def test_distribution_refused_with_a_pointer_to_coverage_test():
    with pytest.raises(TypeError, match=r"coverage_test\(y_true, y_pred"):
        interval_coverage_test([0.0, 1.0], Normal([0.0, 0.0], 1.0), level=0.9)


def test_coverage_test_points_to_interval_coverage_test():
    y = [0.0, 1.0]
    with pytest.raises(TypeError, match="interval_coverage_test"):
        coverage_test(y, {0.9: [[-1.0, 1.0], [-1.0, 1.0]]})
    # bounds with a negative upper bound cannot be [mean, std]: the hint names the bounds test
    with pytest.raises(ValueError, match="non-negative.*interval_coverage_test"):
        coverage_test(y, [[-3.0, -1.0], [-1.0, 1.0]], level=0.9)


@pytest.mark.parametrize("kwargs, err, match", [
    ({}, TypeError, "level is required"),
    ({"level": 1.0}, ValueError, "level must lie in"),
    ({"level": 0.0}, ValueError, "level"),
    ({"level": "0.9"}, TypeError, "level"),
    ({"level": 0.9, "alternative": "both"}, ValueError, "alternative"),
])
def test_errors_of_arrays(kwargs, err, match):
    with pytest.raises(err, match=match):
        interval_coverage_test([0.0, 1.0], [[-1.0, 1.0], [-1.0, 1.0]], **kwargs)


def test_errors_of_bounds_and_dicts():
    with pytest.raises(TypeError, match="level must be None"):
        interval_coverage_test([0.0], {0.9: [[-1.0, 1.0]]}, level=0.9)
    with pytest.raises(ValueError, match="lower <= upper"):
        interval_coverage_test([0.0], [[1.0, -1.0]], level=0.9)
    with pytest.raises(ValueError, match="y_true has 2"):
        interval_coverage_test([0.0, 1.0], [[-1.0, 1.0]], level=0.9)
    with pytest.raises(ValueError, match="levels of y_interval"):
        interval_coverage_test([0.0], {1.5: [[-1.0, 1.0]]})
