"""CalibrationTestResult.null_interval: the central interval of a simulated null distribution."""

import numpy as np
import pytest

from skcalib import calibration_error
from skcalib.stats import consistency_test, pit_test


def test_is_the_central_quantiles_of_the_null_distribution():
    rng = np.random.default_rng(0)
    p = rng.uniform(size=100)
    y = (rng.random(100) < p).astype(int)
    res = consistency_test(calibration_error, y, p, n_resamples=100, random_state=0)
    low, high = res.null_interval(0.8)
    assert (low, high) == tuple(np.quantile(res.null_distribution, [0.1, 0.9]))


def test_analytic_nulls_have_none():
    y = np.array([0.1, -0.3, 0.8, 1.2])
    res = pit_test(y, np.column_stack([np.zeros(4), np.ones(4)]))
    with pytest.raises(ValueError, match="no simulated null"):
        res.null_interval()


def test_confidence_level_is_checked():
    rng = np.random.default_rng(1)
    p = rng.uniform(size=30)
    res = consistency_test(calibration_error, (rng.random(30) < p).astype(int), p,
                           n_resamples=20, random_state=0)
    with pytest.raises(ValueError, match="confidence_level"):
        res.null_interval(0.0)
