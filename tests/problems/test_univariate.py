"""The univariate floor (``skcalib._problems.univariate``) against direct computations."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skcalib._problems.univariate import (check_grid, check_levels, check_univariate_predictions,
                                          exact_area, is_univariate)
from skcalib.distributions import Categorical, Laplace, Mixture, MultivariateNormal, Normal


def _area_on_a_grid(values, w, m=200_001):
    """``int_0^1 |G(p) - p| dp`` by the trapezoid rule on ``m`` points, ``G`` the weighted
    empirical distribution function evaluated directly."""
    w = np.ones_like(values) if w is None else w
    p = np.linspace(0.0, 1.0, m)
    G = np.array([w[values <= t].sum() for t in p]) / w.sum()
    return np.trapezoid(np.abs(G - p), p) if hasattr(np, "trapezoid") else np.trapz(
        np.abs(G - p), p)


@pytest.mark.parametrize("weighted", [False, True])
def test_exact_area_is_the_integral_of_the_gap(weighted):
    rng = np.random.default_rng(0)
    u = rng.random(12)
    w = rng.random(12) if weighted else None
    assert exact_area(u, w) == pytest.approx(_area_on_a_grid(u, w), abs=2e-5)
    assert exact_area(np.array([0.5]), None) == pytest.approx(0.25)


def test_is_univariate():
    n = Normal([0.0, 1.0], [1.0, 2.0])
    assert is_univariate(n) and is_univariate(Laplace([0.0], [1.0]))
    assert is_univariate(Mixture([[0.5, 0.5]], [Normal([0.0], [1.0]), Normal([1.0], [1.0])]))
    assert not is_univariate(MultivariateNormal(np.zeros((1, 2)), np.eye(2)[None]))
    assert not is_univariate(Categorical([[0.5, 0.5]]))


def test_check_univariate_predictions():
    dist, y, w = check_univariate_predictions([0.5, 1], [[0.0, 1.0], [1.0, 2.0]], [1.0, 4.0])
    assert isinstance(dist, Normal)
    assert_array_equal(dist.scale, [1.0, 2.0])
    assert_array_equal(y, [0.5, 1.0])
    assert_array_equal(w, [0.25, 1.0])
    with pytest.raises(TypeError, match="y_pred must be a univariate predictive distribution"):
        check_univariate_predictions([0.0], Categorical([[0.5, 0.5]]))


def test_check_levels_and_grid():
    assert_array_equal(check_levels([0.5, 0.9], "levels"), [0.5, 0.9])
    assert check_levels(0.8, "levels").ndim == 0
    for bad in ([0.0, 0.5], [1.0], [], "a"):
        with pytest.raises(ValueError, match="^levels"):
            check_levels(bad, "levels")
    assert_allclose(check_grid(3), [0.01, 0.5, 0.99])
    assert_array_equal(check_grid([0.0, 0.5, 1.0]), [0.0, 0.5, 1.0])
    assert check_grid(None, allow_none=True) is None
    for bad in ([0.5, 0.2], [0.5], [0.0, 1.5]):
        with pytest.raises(ValueError, match="^quantiles"):
            check_grid(bad)
    with pytest.raises(ValueError, match="grid"):
        check_grid(1, name="grid")
