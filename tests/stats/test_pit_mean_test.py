"""pit_mean_test: the z test of the mean PIT (1/2 under calibration)."""

import math

import numpy as np
import pytest
from scipy.stats import binomtest, norm

from skcalib import pit
from skcalib.distributions import Normal
from skcalib.stats import CalibrationTestResult, pit_mean_test


def _data(n, seed, shift=0.0):
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=n)
    return mu + rng.normal(size=n), Normal(mu - shift, np.ones(n))


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_equals_the_brute_force_z_test(alternative):
    y, dist = _data(300, 0, shift=0.1)
    u = norm.cdf(y - dist.loc)  # PIT values by hand
    z = (u.mean() - 0.5) / math.sqrt(1 / (12 * 300))
    p = {"two-sided": 2 * norm.sf(abs(z)), "greater": norm.sf(z), "less": norm.cdf(z)}
    res = pit_mean_test(y, dist, alternative=alternative)
    assert isinstance(res, CalibrationTestResult) and res.method == "z"
    assert res.statistic == pytest.approx(z, rel=1e-12)
    assert res.pvalue == pytest.approx(p[alternative], rel=1e-10)
    assert res.estimate == pytest.approx(u.mean() - 0.5, rel=1e-12)
    assert res.standard_error == pytest.approx(math.sqrt(1 / 3600), rel=1e-15)
    assert res.zscore == pytest.approx(res.statistic, rel=1e-15)
    low, high = res.confidence_interval(0.9)
    half = norm.ppf(0.95) * res.standard_error
    assert (low, high) == pytest.approx((res.estimate - half, res.estimate + half), rel=1e-12)


def test_frequency_weights_are_copies_of_the_rows():
    y, dist = _data(40, 1, shift=0.2)
    w = np.random.default_rng(1).integers(1, 4, size=40)
    idx = np.repeat(np.arange(40), w)
    weighted = pit_mean_test(y, dist, sample_weight=w)
    repeated = pit_mean_test(y[idx], Normal(dist.loc[idx], np.ones(idx.size)))
    assert weighted.statistic == pytest.approx(repeated.statistic, rel=1e-12)
    assert weighted.pvalue == pytest.approx(repeated.pvalue, rel=1e-10)


def test_size_is_the_level_on_calibrated_predictions():
    """Monte-Carlo size at 0.05: 0.05 lies in the 99.9 % binomial interval of the rejection rate
    over calibrated normal predictions (the normal limit of a mean of uniforms is close)."""
    rng = np.random.default_rng(2)
    reps, n = 1000, 50
    rejections = 0
    for _ in range(reps):
        mu = rng.normal(size=n)
        rejections += pit_mean_test(mu + rng.normal(size=n), Normal(mu, np.ones(n))).pvalue < 0.05
    ci = binomtest(rejections, reps).proportion_ci(0.999)
    assert ci.low <= 0.05 <= ci.high


def test_bias_is_detected_in_its_direction():
    y, dist = _data(1000, 3, shift=0.3)  # predictions biased low: targets above the medians
    assert pit(y, dist).mean() > 0.5
    assert pit_mean_test(y, dist, alternative="greater").pvalue < 1e-6
    assert pit_mean_test(y, dist, alternative="less").pvalue > 0.99


def test_errors_name_the_argument():
    y, dist = _data(10, 4)
    with pytest.raises(ValueError, match="alternative"):
        pit_mean_test(y, dist, alternative="both")
    with pytest.raises(ValueError, match="sample_weight"):
        pit_mean_test(y, dist, sample_weight=np.ones(9))
    with pytest.raises(ValueError, match="sample_weight"):
        pit_mean_test(y, dist, sample_weight=-np.ones(10))
    with pytest.raises(ValueError):
        pit_mean_test(y[:3], dist)
