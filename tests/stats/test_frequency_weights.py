"""Frequency weights of the classical tests: absurd totals are refused, rescaled samples work."""

import warnings

import numpy as np
import pytest

from skcalib import stats


_FREQUENCY_TESTS = [stats.spiegelhalter_test, stats.hosmer_lemeshow_test,
                    stats.logistic_calibration, stats.ecce_test]


@pytest.mark.parametrize("test", _FREQUENCY_TESTS)
@pytest.mark.parametrize("weight", [1e-300, 1e300])
def test_frequency_weights_of_absurd_total_are_refused(test, weight):
    rng = np.random.default_rng(0)
    p = rng.random(30)
    y = (rng.random(30) < p).astype(int)
    with pytest.raises(ValueError, match=r"sample_weight are frequency weights.*sum to"):
        test(y, p, sample_weight=np.full(30, weight))


@pytest.mark.parametrize("test", _FREQUENCY_TESTS)
def test_frequency_weights_that_rescale_the_sample_keep_working(test):
    rng = np.random.default_rng(0)
    p = rng.random(300)
    y = (rng.random(300) < p).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # few expected events per HL group
        res = test(y, p, sample_weight=np.full(300, 0.5))
    assert np.isfinite(res.pvalue) and 0.0 <= res.pvalue <= 1.0
