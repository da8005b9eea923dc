"""reliability_curve's intervals under huge frequency weights."""

import numpy as np

import skcalib


def test_reliability_interval_of_huge_frequency_weights_is_the_limit_not_nan():
    y = np.array([0, 0, 1, 1, 1])
    curve = skcalib.reliability_curve(y, np.full(5, 0.55), sample_weight=np.full(5, 1e300))
    np.testing.assert_array_equal(curve.ci_low, curve.prob_true)  # was NaN
    np.testing.assert_array_equal(curve.ci_high, curve.prob_true)
    below = skcalib.reliability_curve(y, np.full(5, 0.55), sample_weight=np.full(5, 1e14))
    assert np.all(below.ci_low < below.prob_true) and np.all(below.prob_true < below.ci_high)
    assert np.all(below.ci_high - below.ci_low < 1e-5)
