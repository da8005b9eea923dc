"""A ragged label list or sample weight is refused naming the argument."""

import numpy as np
import pytest

import skcalib


@pytest.mark.parametrize("func", [skcalib.calibration_error, skcalib.skce, skcalib.mmce,
                                  skcalib.brier_score])
def test_ragged_labels_name_the_argument(func):
    with pytest.raises(ValueError, match=r"y_true must be one-dimensional.*ragged sequence"):
        func([[1, 2], [3]], np.array([0.2, 0.4]))


def test_ragged_sample_weight_names_the_argument():
    with pytest.raises(ValueError, match=r"sample_weight must be one-dimensional.*ragged"):
        skcalib.calibration_error([0, 1], np.array([0.2, 0.4]), sample_weight=[[1, 2], [3]])
