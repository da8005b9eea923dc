"""mean_score_ci: the normal interval of a mean score."""

import math

import numpy as np
import pytest
from scipy.stats import binomtest, norm

from skcalib import crps
from skcalib.distributions import Normal
from skcalib.stats import ScoreInterval, mean_score_ci


def test_equals_the_brute_force_wald_interval():
    s = np.random.default_rng(0).gamma(2.0, size=120)
    z = norm.ppf(0.95)
    half = z * s.std(ddof=1) / math.sqrt(120)
    ci = mean_score_ci(s, confidence_level=0.9)
    assert isinstance(ci, ScoreInterval)
    assert (ci.low, ci.high) == pytest.approx((s.mean() - half, s.mean() + half), rel=1e-12)
    assert ci.estimate == pytest.approx(s.mean(), rel=1e-12)
    assert ci.standard_error == pytest.approx(s.std(ddof=1) / math.sqrt(120), rel=1e-12)
    low, high = ci
    assert (low, high) == tuple(ci.confidence_interval)


def test_one_sided_intervals():
    s = np.random.default_rng(1).normal(size=50)
    se = s.std(ddof=1) / math.sqrt(50)
    low, high = mean_score_ci(s, alternative="greater")
    assert high == np.inf and low == pytest.approx(s.mean() - norm.ppf(0.95) * se, rel=1e-12)
    low, high = mean_score_ci(s, alternative="less")
    assert low == -np.inf and high == pytest.approx(s.mean() + norm.ppf(0.95) * se, rel=1e-12)


def test_frequency_weights_are_copies_of_the_scores():
    rng = np.random.default_rng(2)
    s, w = rng.normal(size=30), rng.integers(1, 5, size=30)
    weighted = mean_score_ci(s, sample_weight=w)
    repeated = mean_score_ci(np.repeat(s, w))
    assert tuple(weighted) == pytest.approx(tuple(repeated), rel=1e-12)


def test_scores_near_the_float_range_do_not_overflow():
    s = np.array([1e308, 1.5e308, 1.2e308, 0.9e308])
    ci = mean_score_ci(s)
    assert np.isfinite(ci.estimate) and np.isfinite(ci.low) and np.isfinite(ci.high)
    assert ci.estimate == pytest.approx(1.15e308, rel=1e-12)


def test_coverage_of_the_expected_crps_is_the_level():
    """Monte-Carlo coverage of E[CRPS] = 1/sqrt(pi) by the 95 % interval of the mean CRPS of a
    calibrated N(mu, 1): 0.95 lies in the 99.9 % binomial interval of the coverage."""
    rng = np.random.default_rng(3)
    reps, n = 600, 200
    covered = 0
    for _ in range(reps):
        mu = rng.normal(size=n)
        ci = mean_score_ci(crps(mu + rng.normal(size=n), Normal(mu, np.ones(n)),
                                reduction="none"))
        covered += ci.low <= 1 / math.sqrt(math.pi) <= ci.high
    ci = binomtest(covered, reps).proportion_ci(0.999)
    assert ci.low <= 0.95 <= ci.high


@pytest.mark.parametrize("scores, match", [([1.0], "at least 2"), ([[1.0, 2.0], [3.0, 4.0]],
                                           "one-dimensional|scores"),
                                           ([1.0, np.nan, 2.0], "scores|NaN|infinity")])
def test_invalid_scores(scores, match):
    with pytest.raises(ValueError, match=match):
        mean_score_ci(scores)


def test_errors_name_the_argument():
    with pytest.raises(ValueError, match="confidence_level"):
        mean_score_ci([1.0, 2.0], confidence_level=1.0)
    with pytest.raises(ValueError, match="alternative"):
        mean_score_ci([1.0, 2.0], alternative="upper")
    with pytest.raises(ValueError, match="sample_weight"):
        mean_score_ci([1.0, 2.0, 3.0], sample_weight=[0.5, 0.5, 0.5])
    with pytest.raises(TypeError, match="scores"):
        mean_score_ci(["a", "b"])
