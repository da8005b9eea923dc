"""Huge-but-finite parameters of the distribution families give finite metrics and methods."""

import math

import numpy as np
import pytest

from skcalib import metrics
from skcalib.distributions import Laplace, Mixture, MultivariateNormal, Normal, Recalibrated


# --------------------------------------------------------------------------------------------
# 4. Huge-but-finite parameters


def test_ence_is_finite_and_scale_invariant_for_huge_standard_deviations():
    rng = np.random.default_rng(0)
    n = 40
    loc, s, y = rng.normal(size=n), rng.uniform(1.0, 3.0, size=n), rng.normal(size=n) * 2.0
    c = 1e300
    for family in (Normal, Laplace):
        huge = metrics.ence(y * c, family(loc * c, s * c))
        assert math.isfinite(huge)
        assert huge == pytest.approx(metrics.ence(y, family(loc, s)), rel=1e-12)
    with pytest.raises(ValueError, match="y_pred"):
        metrics.uce(y * c, Normal(loc * c, s * c))


@pytest.mark.parametrize("cov", ["diag", "full", "ones", "non-commuting", "1e308"])
def test_skce_and_ucme_are_finite_for_huge_covariances(cov):
    rng = np.random.default_rng(0)
    n = 16
    covs = {"diag": np.full((n, 2), 1e300),
            "full": np.tile([[1e300, 0.0], [0.0, 1e300]], (n, 1, 1)),
            "ones": np.full((n, 2, 2), 1e300),
            "non-commuting": np.stack([[[1e300, 3e299 * (i % 3)], [3e299 * (i % 3), 1e300]]
                                       for i in range(n)]),
            "1e308": np.full((n, 2), 1e308)}
    d = MultivariateNormal(rng.normal(size=(n, 2)), covs[cov])
    y = rng.normal(size=(n, 2))
    assert math.isfinite(metrics.skce(y, d, random_state=0))
    assert math.isfinite(metrics.ucme(y, d, random_state=0))


@pytest.mark.parametrize("family", [Normal, Laplace])
def test_huge_scales_in_every_family_method(family):
    n = 6
    rng = np.random.default_rng(1)
    s = np.full(n, 1e300)
    base = family(rng.normal(size=n), s)
    dists = [base, Mixture([0.5, 0.5], [base, family(np.ones(n), s)]),
             Recalibrated(base, [0.0, 0.5, 1.0], [0.0, 0.3, 1.0])]
    y = rng.normal(size=n)
    for d in dists:
        for value in (d.ppf(0.3), d.mean, d.sample(random_state=0), metrics.crps(y, d),
                      metrics.ence(y, d), metrics.skce(y, d, random_state=0)):
            assert np.all(np.isfinite(value))
        assert np.all(d.variance == np.inf)   # the true value, beyond the float range


def test_laplace_difference_in_relative_scales_matches_the_old_formula():
    from skcalib.distributions._laplace import _abs_laplace, _abs_laplace_difference

    c = np.array([0.3, -1.0, 4.0, 0.0])
    b1 = np.array([1.0, 2.0, 0.5, 3.0])
    b2 = np.array([2.0, 0.7, 0.5000001, 1.0])
    s1, s2 = b1 * b1, b2 * b2
    old = (s1 * _abs_laplace(c, b1) - s2 * _abs_laplace(c, b2)) / np.where(s1 == s2, 1, s1 - s2)
    far = np.abs(s1 - s2) > 1e-3 * (s1 + s2)
    np.testing.assert_allclose(_abs_laplace_difference(c, b1, b2)[far], old[far], rtol=1e-13)
