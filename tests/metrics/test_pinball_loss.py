"""pinball_loss: agreement with scikit-learn per level, every form of y_pred, weights against
repeated rows, the limit 2 x mean pinball -> CRPS, and the error paths."""

import numpy as np
import pytest
from scipy import stats as sps
from sklearn.metrics import mean_pinball_loss

import skcalib
from skcalib import crps, pinball_loss
from skcalib.distributions import Empirical, Laplace, Normal, Quantiles

LEVELS = [0.05, 0.25, 0.5, 0.8, 0.95]


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    n = 200
    y = rng.normal(size=n)
    Q = np.sort(rng.normal(scale=1.5, size=(n, len(LEVELS))), axis=1)
    w = rng.random(n)
    return y, Q, w


@pytest.mark.parametrize("weighted", [False, True])
def test_agrees_with_sklearn_per_level(data, weighted):
    y, Q, w = data
    sw = w if weighted else None
    per_level = pinball_loss(y, Q, levels=LEVELS, sample_weight=sw, reduction="levels")
    ref = [mean_pinball_loss(y, Q[:, j], alpha=a, sample_weight=sw) for j, a in enumerate(LEVELS)]
    np.testing.assert_allclose(per_level, ref, rtol=1e-13)
    assert pinball_loss(y, Q, levels=LEVELS, sample_weight=sw) == pytest.approx(np.mean(ref),
                                                                                 rel=1e-13)


def test_none_reduction_is_per_sample_mean_over_levels(data):
    y, Q, _ = data
    per_sample = pinball_loss(y, Q, levels=LEVELS, reduction="none")
    brute = np.mean([[max(t * (yi - q), (t - 1) * (yi - q)) for q, t in zip(row, LEVELS)]
                     for yi, row in zip(y, Q)], axis=1)
    np.testing.assert_allclose(per_sample, brute, rtol=1e-13)
    assert per_sample.mean() == pytest.approx(pinball_loss(y, Q, levels=LEVELS), rel=1e-13)


def test_one_level_one_dimensional_array(data):
    y, Q, _ = data
    assert pinball_loss(y, Q[:, 2], levels=0.5) == pytest.approx(
        mean_pinball_loss(y, Q[:, 2], alpha=0.5), rel=1e-13)
    # the median's pinball loss is half the absolute error
    assert pinball_loss(y, Q[:, 2], levels=0.5) == pytest.approx(
        0.5 * np.mean(np.abs(y - Q[:, 2])), rel=1e-13)


def test_weights_equal_repeated_rows(data):
    y, Q, _ = data
    k = np.arange(len(y)) % 3 + 1
    weighted = pinball_loss(y, Q, levels=LEVELS, sample_weight=k)
    repeated = pinball_loss(np.repeat(y, k), np.repeat(Q, k, axis=0), levels=LEVELS)
    assert weighted == pytest.approx(repeated, rel=1e-12)


def test_quantiles_uses_its_own_levels(data):
    y, Q, w = data
    d = Quantiles(Q, LEVELS)
    assert pinball_loss(y, d, sample_weight=w) == pytest.approx(
        pinball_loss(y, Q, levels=LEVELS, sample_weight=w), rel=1e-13)
    # at other levels: the interpolated quantile function
    other = [0.1, 0.5, 0.9]
    expected = pinball_loss(y, np.column_stack([d.ppf(t) for t in other]), levels=other)
    assert pinball_loss(y, d, levels=other) == pytest.approx(expected, rel=1e-13)


def test_quantiles_rearranged_never_worse():
    rng = np.random.default_rng(1)
    y = rng.normal(size=300)
    crossed = rng.normal(size=(300, 3))  # crossing quantiles
    lv = [0.1, 0.5, 0.9]
    assert pinball_loss(y, Quantiles(crossed, lv)) <= pinball_loss(y, crossed, levels=lv)


@pytest.mark.parametrize("dist", [Normal(0.3, 1.2), Laplace(-0.2, 0.7)])
def test_distribution_is_its_ppf_at_the_levels(data, dist):
    y, _, w = data
    n = len(y)
    d = type(dist)(np.full(n, float(np.ravel(dist.loc)[0])), float(np.ravel(dist.scale)[0]))
    Q = np.column_stack([d.ppf(t) for t in LEVELS])
    assert pinball_loss(y, d, levels=LEVELS, sample_weight=w) == pytest.approx(
        pinball_loss(y, Q, levels=LEVELS, sample_weight=w), rel=1e-13)
    deciles = np.round(np.arange(1, 10) / 10, 1)
    assert pinball_loss(y, d) == pytest.approx(
        pinball_loss(y, np.column_stack([d.ppf(t) for t in deciles]), levels=deciles), rel=1e-13)


def test_empirical_uses_its_step_quantiles():
    y = np.array([0.0, 2.0])
    d = Empirical([[0.0, 1.0, 2.0, 3.0], [0.0, 1.0, 2.0, 3.0]])
    # ppf(0.5) = 1 (the smallest draw with CDF >= 1/2): losses 0.5 * |y - 1| = 0.5 each
    assert pinball_loss(y, d, levels=0.5) == pytest.approx(0.5)


def test_twice_mean_over_fine_grid_tends_to_crps():
    rng = np.random.default_rng(2)
    n = 300
    mu, s = rng.normal(size=n), rng.uniform(0.5, 2.0, size=n)
    y = mu + s * rng.normal(size=n)
    grid = (np.arange(2000) + 0.5) / 2000  # midpoint rule over the levels
    approx = 2.0 * pinball_loss(y, Normal(mu, s), levels=grid)
    assert approx == pytest.approx(crps(y, Normal(mu, s)), rel=2e-4)


def test_proper_minimised_by_true_quantile():
    rng = np.random.default_rng(3)
    y = rng.normal(size=20000)
    tau = 0.8
    true_q = sps.norm.ppf(tau)
    losses = [pinball_loss(y, np.full(y.size, true_q + d), levels=tau)
              for d in (-0.3, -0.1, 0.0, 0.1, 0.3)]
    assert int(np.argmin(losses)) == 2


def test_exported():
    assert skcalib.pinball_loss is pinball_loss
    assert skcalib.metrics.pinball_loss is pinball_loss
    assert "pinball_loss" in skcalib.__all__ and "pinball_loss" in skcalib.metrics.__all__


def test_inputs_not_mutated(data):
    y, Q, w = data
    copies = y.copy(), Q.copy(), w.copy()
    pinball_loss(y, Q, levels=LEVELS, sample_weight=w)
    for a, b in zip((y, Q, w), copies):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("kwargs, err, match", [
    ({}, TypeError, "levels is required"),
    ({"levels": [0.1, 0.9]}, ValueError, r"shape \(n_samples, 2\)"),
    ({"levels": [0.0, 0.5, 0.9]}, ValueError, "levels must lie in"),
    ({"levels": [0.1, 0.5, 0.9], "reduction": "sum"}, ValueError, "reduction"),
    ({"levels": [0.1, 0.5, 0.9], "sample_weight": [1.0]}, ValueError, "sample_weight"),
])
def test_errors(kwargs, err, match):
    y = np.zeros(4)
    Q = np.zeros((4, 3))
    with pytest.raises(err, match=match):
        pinball_loss(y, Q, **kwargs)


def test_errors_of_values():
    with pytest.raises(ValueError, match="finite"):
        pinball_loss([0.0, 1.0], [[0.0], [np.nan]], levels=0.5)
    with pytest.raises(ValueError, match="y_true has 3"):
        pinball_loss([0.0, 1.0, 2.0], [[0.0], [1.0]], levels=0.5)
    with pytest.raises(TypeError, match="y_pred"):
        pinball_loss([0.0, 1.0], [[True], [False]], levels=0.5)
    with pytest.raises(ValueError, match="float range"):
        pinball_loss([1e308, -1e308], [[-1e308], [1e308]], levels=0.5)
    with pytest.raises(TypeError, match="y_pred"):
        from skcalib.distributions import MultivariateNormal
        pinball_loss(np.zeros((2, 2)), MultivariateNormal(np.zeros((2, 2)), 1.0), levels=0.5)
