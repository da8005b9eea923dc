"""``squared_calibration_errors`` checks its probabilities as the metrics do."""

import re

import numpy as np
import pytest
from numpy.testing import assert_allclose
from skcalib.datasets import squared_calibration_errors


# --------------------------------------------------------------------------------------------
# 2. squared_calibration_errors


@pytest.mark.parametrize("arg", ["y_proba", "true_prob"])
@pytest.mark.parametrize("bad, match", [
    (np.array([[0.5, 0.5], [1.2, -0.2]]), r"must contain probabilities in \[0, 1\]; found 1.2"),
    (np.array([[0.5, 0.6], [0.2, 0.8]]), r"rows of {arg} must sum to 1"),
    (np.array([0.5, 1.5]), r"must contain probabilities in \[0, 1\]; found 1.5"),
    (np.array([0.5, np.nan]), "contains NaN"),
    (np.zeros((2, 2, 1)), r"must be 1-D or 2-D; got an array of shape \(2, 2, 1\)"),
    (np.zeros((0, 2)), "is empty"),
])
def test_squared_calibration_errors_checks_probabilities_like_the_metrics(arg, bad, match):
    good = np.full(bad.shape if bad.ndim < 3 and bad.size else (2, 2), 0.5)
    args = {"y_proba": good, "true_prob": good}
    args[arg] = bad
    with pytest.raises(ValueError) as err:
        squared_calibration_errors(args["y_proba"], args["true_prob"])
    assert re.match(rf"(rows of )?{arg}\b", str(err.value))
    assert re.search(match.format(arg=arg), str(err.value))


def test_squared_calibration_errors_values_unchanged():
    assert_allclose(squared_calibration_errors([[0.5, 0.5]], [[1.0, 0.0]]), [0.5])
    assert_allclose(squared_calibration_errors([0.2, 0.7], [0.3, 0.3]), [0.01, 0.16])
    assert_allclose(squared_calibration_errors([[0.2], [0.7]], [[0.3], [0.3]]), [0.01, 0.16])
    with pytest.raises(ValueError, match="must have the same shape"):
        squared_calibration_errors([0.2, 0.7], [[0.3, 0.7], [0.3, 0.7]])
