"""Spread scaling of ensembles (issue 23, item 3): the exact CRPS optimum and the closed-form
Gaussian-NLL optimum, each against a brute-force search of its objective."""

import pickle

import numpy as np
import pytest
from scipy import stats
from sklearn.base import clone

import skcalib
from skcalib.distributions import Empirical, Normal
from skcalib.recalibration import SpreadScaling


def _ensembles(n, m, seed, spread=0.5, weighted=False):
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=n)
    y = mu + rng.standard_normal(n)
    x = mu[:, None] + 0.2 + spread * rng.standard_normal((n, m))
    w = rng.uniform(0.2, 2.0, size=(n, m)) if weighted else None
    return Empirical(x, w), y


def _scaled(dist, s):
    mu = dist.mean[:, None]
    return Empirical(mu + s * (dist.samples - mu), dist.weights)


def _mean_crps(dist, y, s, sw=None):
    return skcalib.crps(y, _scaled(dist, s), sample_weight=sw)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("m", [2, 5, 40])
def test_crps_optimum_against_a_grid(m, weighted):
    """No point of a fine grid (nor the grid's refinement by a bounded search) beats the fitted
    factor, and the fitted factor lies where the grid's minimum is."""
    dist, y = _ensembles(300, m, seed=m, weighted=weighted)
    s = SpreadScaling().fit(dist, y).scale_
    grid = np.linspace(0.0, 6.0, 1201)
    f = np.array([_mean_crps(dist, y, g) for g in grid])
    best = _mean_crps(dist, y, s)
    assert best <= f.min() + 1e-12
    assert abs(s - grid[np.argmin(f)]) <= 0.01 + 1e-9 or np.isclose(f.min(), best, atol=1e-12)
    from scipy.optimize import minimize_scalar
    res = minimize_scalar(lambda g: _mean_crps(dist, y, g), bounds=(0.0, 6.0), method="bounded",
                          options={"xatol": 1e-10})
    assert best <= res.fun + 1e-12


def test_crps_optimum_with_sample_weights_against_a_grid():
    dist, y = _ensembles(200, 10, seed=3)
    sw = np.random.default_rng(0).uniform(0.0, 3.0, size=200)
    s = SpreadScaling().fit(dist, y, sample_weight=sw).scale_
    grid = np.linspace(0.0, 6.0, 601)
    f = np.array([_mean_crps(dist, y, g, sw) for g in grid])
    assert _mean_crps(dist, y, s, sw) <= f.min() + 1e-12


def test_nll_optimum_against_a_grid():
    dist, y = _ensembles(400, 15, seed=4, weighted=True)
    s = SpreadScaling(objective="nll").fit(dist, y).scale_
    mu, sd = dist.mean, np.sqrt(dist.variance)

    def nll(g):
        return -np.mean(stats.norm.logpdf(y, mu, g * sd))

    grid = np.linspace(0.5, 6.0, 5501)
    f = np.array([nll(g) for g in grid])
    assert nll(s) <= f.min() + 1e-12
    assert abs(s - grid[np.argmin(f)]) <= 1e-3
    np.testing.assert_allclose(s, np.sqrt(np.mean((y - mu) ** 2 / sd ** 2)), rtol=1e-12)


@pytest.mark.parametrize("objective", ["crps", "nll"])
def test_integer_weights_are_repetitions(objective):
    dist, y = _ensembles(150, 8, seed=5)
    w = np.random.default_rng(1).integers(0, 4, size=150)
    rows = np.repeat(np.arange(150), w)
    a = SpreadScaling(objective=objective).fit(dist, y, sample_weight=w).scale_
    b = SpreadScaling(objective=objective).fit(dist[rows], y[rows]).scale_
    np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("objective", ["crps", "nll"])
def test_recovers_the_true_spread(objective):
    """Members drawn with half the true spread: the factor is close to 2, the scaled ensembles
    are calibrated (their CRPS is that of the true spread, their mean unchanged)."""
    rng = np.random.default_rng(6)
    n, m = 4000, 100
    mu = rng.normal(size=n)
    y = mu + rng.standard_normal(n)
    dist = Empirical(mu[:, None] + 0.5 * rng.standard_normal((n, m)))
    est = SpreadScaling(objective=objective).fit(dist, y)
    assert abs(est.scale_ - 2.0) < 0.1
    out = est.transform(dist)
    np.testing.assert_allclose(out.mean, dist.mean, atol=1e-12)
    np.testing.assert_allclose(np.sqrt(out.variance), est.scale_ * np.sqrt(dist.variance),
                               rtol=1e-10)
    assert skcalib.crps(y, out) < skcalib.crps(y, dist)
    assert skcalib.crps(y, out) < 1.02 * skcalib.crps(y, Normal(mu, 1.0))


def test_transform_keeps_the_weights_and_the_family():
    dist, y = _ensembles(100, 6, seed=7, weighted=True)
    est = SpreadScaling().fit(dist, y)
    out = est.transform(dist)
    assert type(out) is Empirical
    np.testing.assert_allclose(out.weights, dist.weights, rtol=1e-14)   # (renormalised)
    assert est.predict_distribution(dist).samples.tobytes() == out.samples.tobytes()
    mean, std = est.predict(dist, return_std=True)
    np.testing.assert_allclose(mean, dist.mean)
    np.testing.assert_allclose(std, est.scale_ * np.sqrt(dist.variance))


def test_bad_input():
    dist, y = _ensembles(50, 4, seed=8)
    with pytest.raises(ValueError, match="objective must be one of"):
        SpreadScaling(objective="mse").fit(dist, y)
    with pytest.raises(TypeError, match="Normal predictions; SpreadScaling scales ensembles"):
        SpreadScaling().fit(Normal(y, 1.0), y)
    with pytest.raises(TypeError, match="an array predictions; SpreadScaling scales ensembles"):
        SpreadScaling().fit(np.column_stack([y, np.ones(50)]), y)
    flat = Empirical(np.tile(y[:, None], (1, 3)))
    with pytest.raises(ValueError, match="no spread"):
        SpreadScaling().fit(flat, y + 1.0)
    with pytest.raises(ValueError, match="row 0 has all its members at one value"):
        SpreadScaling(objective="nll").fit(flat, y + 1.0)
    with pytest.raises(ValueError, match="y has 49 samples"):
        SpreadScaling().fit(dist, y[:49])
    est = SpreadScaling().fit(dist, y)
    with pytest.raises(ValueError, match="Normal predictions but the spread factor was fitted on "
                                         "Empirical"):
        est.transform(Normal(y, 1.0))


def test_zero_weight_rows_do_not_count_for_nll():
    dist, y = _ensembles(60, 4, seed=9)
    x = np.array(dist.samples)
    x[0] = 0.0               # a row without spread, weighted 0
    d2 = Empirical(x)
    w = np.r_[0.0, np.ones(59)]
    a = SpreadScaling(objective="nll").fit(d2, y, sample_weight=w).scale_
    b = SpreadScaling(objective="nll").fit(d2[1:], y[1:]).scale_
    np.testing.assert_allclose(a, b, rtol=1e-12)


def test_pickle_clone_idempotent():
    dist, y = _ensembles(80, 5, seed=10)
    est = SpreadScaling().fit(dist, y)
    again = pickle.loads(pickle.dumps(est))
    assert again.scale_ == est.scale_ == SpreadScaling().fit(dist, y).scale_
    assert clone(est).get_params() == {"objective": "crps"}
