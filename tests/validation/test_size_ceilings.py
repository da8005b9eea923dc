"""Size arguments have ceilings (refused before any work is done)."""

import numpy as np
import pytest

import skcalib


def test_size_arguments_of_the_sweep_have_ceilings():
    from skcalib.estimation import BinnedCalibrationEstimator
    rng = np.random.default_rng(0)
    p = rng.random(100)
    y = (rng.random(100) < p).astype(int)
    with pytest.raises(ValueError, match="robust_iters must be <= 100"):
        skcalib.integrated_calibration_index(y, p, robust_iters=10**9)  # hung
    with pytest.raises(ValueError, match=r"n_bins must be .*1000000"):
        BinnedCalibrationEstimator(n_bins=10**12).fit(np.c_[1 - p, p], y)  # 7 TiB
