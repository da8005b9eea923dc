"""Wasserstein distances of Recalibrated predictive distributions against quadrature and Monte Carlo."""

import math
import warnings

import numpy as np
import pytest
from scipy import integrate

from skcalib.distributions import (
    Laplace,
    Mixture,
    Normal,
    Recalibrated,
    pairwise_wasserstein,
    wasserstein_distance,
)
from skcalib.kernels import WassersteinKernel


def _map(rng, k):
    a = np.r_[0.0, np.sort(rng.uniform(size=k)), 1.0]
    r = np.r_[0.0, np.sort(rng.uniform(size=k)), 1.0]
    return a, r


def _brute_w2(p, q):
    """``sqrt(int_0^1 (G_p^{-1} - G_q^{-1})^2)`` of two one-row distributions by adaptive
    quadrature, with the kinks of the maps as break points."""
    pts = []
    for d in (p, q):
        maps = []
        while isinstance(d, Recalibrated):
            maps.append((d.knots, d.values))
            d = d.base
        levels = np.array([0.5])     # kinks in tau: the values of the composed map
        for a, r in maps[::-1]:
            levels = np.r_[np.interp(levels, a, r), r]
        pts.append(levels)
    pts = np.unique(np.concatenate(pts))

    def f(t):
        return (p.ppf(t)[0] - q.ppf(t)[0]) ** 2

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        val = integrate.quad(f, 0.0, 1.0, points=pts[(pts > 0) & (pts < 1)], limit=5000,
                             epsabs=1e-14, epsrel=1e-12)[0]
    return math.sqrt(val)


# --------------------------------------------------------------------------------------------
# 1. Recalibrated: Wasserstein distances, and every metric / test / scorer / report


@pytest.mark.parametrize("family", [Normal, Laplace])
def test_recalibrated_identity_map_has_the_base_w2(family):
    base = family([0.0, 1.0, 3.0, -2.0], [1.0, 2.0, 0.5, 4.0])
    d = Recalibrated(base, [0.0, 1.0], [0.0, 1.0])
    np.testing.assert_allclose(pairwise_wasserstein(d), pairwise_wasserstein(base),
                               rtol=1e-12, atol=1e-12)


def test_recalibrated_normal_rows_are_location_scale_w2_of_their_exact_moments():
    """One map: rows are m + s Q, so W2^2 = (mean - mean')^2 + (sd - sd')^2 with the exact
    (closed-form) mean and variance of the Normal-base Recalibrated."""
    rng = np.random.default_rng(0)
    a, r = _map(rng, 60)
    d = Recalibrated(Normal(rng.normal(size=6), rng.uniform(0.2, 3.0, size=6)), a, r)
    m, sd = d.mean, np.sqrt(d.variance)
    expected = np.hypot(m[:, None] - m[None, :], sd[:, None] - sd[None, :])
    np.testing.assert_allclose(pairwise_wasserstein(d), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("family", [Normal, Laplace])
def test_recalibrated_w2_between_different_maps_matches_quadrature(family):
    rng = np.random.default_rng(1)
    a1, r1 = _map(rng, 40)
    a2, r2 = _map(rng, 30)
    p = Recalibrated(family([0.0, 1.0], [1.0, 2.0]), a1, r1)
    q = Recalibrated(family([0.5, 2.0], [1.5, 0.3]), a2, r2)
    got = wasserstein_distance(p, q)
    ref = [_brute_w2(p[k], q[k]) for k in range(2)]
    np.testing.assert_allclose(got, ref, rtol=1e-9)
    # symmetric, and the kernel between the two batches uses the same distances
    np.testing.assert_allclose(wasserstein_distance(q, p), got, rtol=1e-13)
    np.testing.assert_allclose(WassersteinKernel(1.0)(p, q), np.exp(-pairwise_wasserstein(p, q)),
                               rtol=1e-13)
    np.testing.assert_allclose(np.diag(pairwise_wasserstein(p, q)), got, rtol=1e-13)


def test_nested_and_mixture_bases_match_quadrature():
    rng = np.random.default_rng(2)
    a1, r1 = _map(rng, 20)
    a2, r2 = _map(rng, 25)
    base = Normal([0.0, 1.0, 3.0], [1.0, 2.0, 0.5])
    nested = Recalibrated(Recalibrated(base, a1, r1), a2, r2)
    D = pairwise_wasserstein(nested)
    np.testing.assert_allclose(D[0, 1:], [_brute_w2(nested[0], nested[k]) for k in (1, 2)],
                               rtol=1e-9)
    mix = Mixture([0.3, 0.7], [Normal([0.0, 1.0], [1.0, 0.5]), Normal([2.0, -1.0], [0.5, 2.0])])
    p, q = Recalibrated(mix, a1, r1), Recalibrated(mix, a2, r2)
    np.testing.assert_allclose(wasserstein_distance(p, q),
                               [_brute_w2(p[k], q[k]) for k in range(2)], rtol=1e-6)
    np.testing.assert_allclose(pairwise_wasserstein(p)[0, 1], _brute_w2(p[0], p[1]), rtol=1e-6)


def test_recalibrated_mixture_w2_agrees_with_monte_carlo():
    """The comonotone coupling by sorting large samples (Monte Carlo) agrees with the rule."""
    rng = np.random.default_rng(3)
    a, r = _map(rng, 200)   # more pieces than the mixture rule's panels
    mix = Mixture([0.5, 0.5], [Laplace([0.0, 2.0], [1.0, 0.5]), Laplace([3.0, -1.0], 1.0)])
    d = Recalibrated(mix, a, r)
    x = np.sort(d[[0] * 400_000].sample(random_state=0))
    y = np.sort(d[[1] * 400_000].sample(random_state=1))
    mc = math.sqrt(np.mean((x - y) ** 2))
    assert pairwise_wasserstein(d)[0, 1] == pytest.approx(mc, rel=5e-3)


@pytest.mark.parametrize("family", [Normal, Laplace])
def test_recalibrated_pairwise_is_symmetric_nonnegative_zero_diagonal(family):
    rng = np.random.default_rng(4)
    a, r = _map(rng, 50)
    d = Recalibrated(family(rng.normal(size=7), rng.uniform(0.5, 2.0, size=7)), a, r)
    ens = Mixture([0.4, 0.6], [d, Recalibrated(d.base, *_map(rng, 10))])
    for D in (pairwise_wasserstein(d), pairwise_wasserstein(ens)):
        assert np.all(np.diag(D) == 0.0)
        assert np.array_equal(D, D.T)
        assert np.all(D >= 0.0)
