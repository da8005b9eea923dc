"""coverage_test: the binomial test of the coverage of central prediction intervals."""

import numpy as np
import pytest
from scipy.stats import binomtest, norm

from skcalib import interval_coverage
from skcalib.distributions import Laplace, Normal
from skcalib.stats import coverage_test


def _data(n, seed, scale=1.0):
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=n)
    return mu + rng.normal(size=n), Normal(mu, np.full(n, scale))


@pytest.mark.parametrize("level", [0.5, 0.8, 0.9, 0.95])
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_equals_scipy_binomtest_of_the_covered_targets(level, alternative):
    y, dist = _data(200, 0, scale=0.8)
    # brute force: the central interval from the (1 - level)/2 to the (1 + level)/2 quantile
    half = norm.ppf((1 + level) / 2) * 0.8
    k = int(np.sum(np.abs(y - dist.loc) <= half))
    res = coverage_test(y, dist, level=level, alternative=alternative)
    ref = binomtest(k, 200, p=level, alternative=alternative)
    assert res.k == k and res.statistic == k / 200 and res.expected == level
    assert res.statistic == interval_coverage(y, dist, levels=level)
    assert res.pvalue == ref.pvalue
    assert tuple(res.proportion_ci(0.95)) == pytest.approx(tuple(ref.proportion_ci(0.95)),
                                                           abs=1e-15)


def test_mean_std_columns_and_laplace_predictions():
    y, dist = _data(50, 1)
    assert coverage_test(y, np.column_stack([dist.loc, dist.scale])).k == coverage_test(
        y, dist).k
    lap = Laplace(dist.loc, np.ones(50))
    assert coverage_test(y, lap, level=0.8).statistic == interval_coverage(y, lap, levels=0.8)


def test_size_is_the_level_on_calibrated_predictions():
    """Monte-Carlo size at 0.05 of the 90 % coverage of calibrated normal predictions: within a
    99.9 % binomial interval of 0.05 or below it (the exact binomial test is conservative)."""
    rng = np.random.default_rng(2)
    reps, n = 600, 100
    rejections = 0
    for _ in range(reps):
        mu = rng.normal(size=n)
        rejections += coverage_test(mu + rng.normal(size=n), Normal(mu, np.ones(n))).pvalue < 0.05
    assert binomtest(rejections, reps).proportion_ci(0.999).low <= 0.05


def test_direction_of_too_narrow_and_too_wide_intervals():
    y, narrow = _data(500, 3, scale=0.5)
    res = coverage_test(y, narrow, alternative="less")
    assert res.statistic < 0.9 and res.estimate < 0 and res.pvalue < 1e-6
    y, wide = _data(500, 3, scale=2.0)
    assert coverage_test(y, wide, level=0.5, alternative="greater").pvalue < 1e-6


@pytest.mark.parametrize("level", [0.0, 1.0, -0.2, float("nan")])
def test_level_must_be_in_the_open_unit_interval(level):
    y, dist = _data(10, 4)
    with pytest.raises(ValueError, match="level"):
        coverage_test(y, dist, level=level)


def test_errors_name_the_argument():
    y, dist = _data(10, 4)
    with pytest.raises(TypeError, match="level"):
        coverage_test(y, dist, level="0.9")
    with pytest.raises(ValueError, match="alternative"):
        coverage_test(y, dist, alternative="two_sided")
    with pytest.raises(ValueError):
        coverage_test(y[:5], dist)
