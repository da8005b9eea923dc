"""The temperature problems of the floor (``skcalib._problems.temperature``): one solver for
recalibration and estimation."""

import numpy as np
import pytest
from scipy.special import softmax

from skcalib._problems import temperature
from skcalib.estimation import TemperatureCalibrationEstimator
from skcalib.recalibration import TemperatureScaling


def _data(n=500, C=3, seed=0):
    rng = np.random.default_rng(seed)
    logits = 2.0 * rng.normal(size=(n, C))
    P = softmax(logits / 2.0, axis=1)
    y = (rng.random((n, 1)) > P.cumsum(axis=1)).sum(axis=1)
    return logits, softmax(logits, axis=1), y


def test_scores_to_logits():
    S = np.array([0.2, 0.9])
    np.testing.assert_allclose(temperature.scores_to_logits(S, "proba", 1e-12),
                               np.log([[0.8, 0.2], [0.1, 0.9]]))
    np.testing.assert_array_equal(temperature.scores_to_logits(S, "logits", 1e-12),
                                  [[0.0, 0.2], [0.0, 0.9]])
    P = np.array([[1.0, 0.0]])
    np.testing.assert_array_equal(temperature.scores_to_logits(P, "proba", 1e-12),
                                  np.log([[1.0, 1e-12]]))


def test_recalibration_and_estimation_share_the_nll_solver():
    logits, P, y = _data()
    L = temperature.scores_to_logits(P, "proba", 1e-12)
    beta, _ = temperature.nll_inverse_temperature(L, y, np.ones(len(y)))
    ts = TemperatureScaling(input="proba").fit(P, y)
    est = TemperatureCalibrationEstimator(labels=[0, 1, 2]).fit(P, y)
    assert ts.temperature_ == pytest.approx(1.0 / beta, rel=1e-12)
    assert est.temperature_ == pytest.approx(1.0 / beta, rel=1e-12)


def test_log_temperature_search_finds_a_quadratic_minimum():
    T, value = temperature.minimize_log_temperature(lambda T: (np.log(T) - np.log(2.5)) ** 2)
    assert T == pytest.approx(2.5, rel=1e-6)
    assert value == pytest.approx(0.0, abs=1e-12)
    grid = temperature.window_around(2.0, factor=10.0, n_points=21)
    assert np.exp(grid[[0, 10, -1]]) == pytest.approx([0.2, 2.0, 20.0])


def test_the_floor_module_is_documented():
    import skcalib._problems as problems

    assert "``temperature``" in problems.__doc__
    for name in ("scores_to_logits", "nll_inverse_temperature", "minimize_log_temperature"):
        assert name in temperature.__doc__
