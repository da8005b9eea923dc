"""interval_score and interval_width of a predictive distribution at a level: its central
interval, against scipy's quantiles and against the bounds path."""

import numpy as np
import pytest
from scipy import stats as sps

from skcalib import interval_bounds_coverage, interval_score, interval_width
from skcalib.distributions import Empirical, Laplace, Mixture, Normal, Quantiles


def _brute_score(y, lo, hi, level, w=None):
    alpha = 1 - level
    s = (hi - lo) + (2 / alpha) * ((lo - y) * (y < lo) + (y - hi) * (y > hi))
    return np.average(s, weights=w)


@pytest.mark.parametrize("level", [0.5, 0.9])
def test_normal_and_laplace_against_scipy_quantiles(level):
    rng = np.random.default_rng(0)
    n = 300
    mu, s = rng.normal(size=n), rng.uniform(0.5, 2, size=n)
    y = mu + rng.standard_t(4, size=n)
    w = rng.random(n)
    for dist, law in ((Normal(mu, s), sps.norm(mu, s)), (Laplace(mu, s), sps.laplace(mu, s))):
        lo, hi = law.ppf((1 - level) / 2), law.ppf((1 + level) / 2)
        assert interval_score(y, dist, level=level, sample_weight=w) == pytest.approx(
            _brute_score(y, lo, hi, level, w), rel=1e-12)
        assert interval_width(dist, level=level) == pytest.approx(np.mean(hi - lo), rel=1e-12)


def test_quantiles_at_knot_levels_equal_its_columns():
    rng = np.random.default_rng(1)
    V = np.sort(rng.normal(size=(50, 3)), axis=1)
    d = Quantiles(V, [0.05, 0.5, 0.95])
    y = rng.normal(size=50)
    assert interval_score(y, d, level=0.9) == pytest.approx(
        interval_score(y, V[:, [0, 2]], level=0.9), rel=1e-13)
    assert interval_width(d, level=0.9) == pytest.approx(np.mean(V[:, 2] - V[:, 0]), rel=1e-13)


def test_empirical_and_mixture():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 20))
    y = rng.normal(size=40)
    d = Empirical(X)
    B = np.column_stack([d.ppf(0.1), d.ppf(0.9)])
    assert interval_score(y, d, level=0.8) == pytest.approx(_brute_score(y, *B.T, 0.8), rel=1e-13)
    mix = Mixture(np.tile([0.3, 0.7], (40, 1)), [Normal(np.zeros(40), 1.0), Normal(np.ones(40), 2.0)])
    B = np.column_stack([mix.ppf(0.25), mix.ppf(0.75)])
    assert np.all(np.abs(mix.cdf(B[:, 1]) - mix.cdf(B[:, 0]) - 0.5) < 1e-8)
    assert interval_score(y, mix, level=0.5) == pytest.approx(_brute_score(y, *B.T, 0.5),
                                                              rel=1e-12)


def test_width_of_bounds_does_not_depend_on_level():
    B = [[0.0, 1.0], [2.0, 5.0]]
    assert interval_width(B, level=0.9) == interval_width(B) == 2.0
    with pytest.raises(TypeError, match="level must be None"):
        interval_width({0.5: B}, level=0.5)


def test_mean_std_rows_are_bounds_here_never_normals():
    """(n, 2) stays [lower, upper] in the interval functions: no change for arrays."""
    y = np.array([0.0, 0.5])
    B = np.array([[-1.0, 1.0], [0.0, 2.0]])
    assert interval_score(y, B, level=0.9) == pytest.approx(_brute_score(y, *B.T, 0.9))
    assert interval_bounds_coverage(y, B) == 1.0


def test_level_checks_for_distributions():
    d = Normal([0.0, 1.0], 1.0)
    for bad, err in ((1.0, ValueError), (0.0, ValueError), ("0.9", TypeError), (True, TypeError)):
        with pytest.raises(err, match="level"):
            interval_score([0.0, 1.0], d, level=bad)
    with pytest.raises(ValueError, match="y_true"):
        interval_score([0.0, 1.0, 2.0], d, level=0.9)
