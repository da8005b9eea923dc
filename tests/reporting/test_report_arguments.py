"""Bad arguments of :func:`skcalib.calibration_report` are refused up front, naming them."""

import numpy as np
import pytest

import skcalib
from skcalib import calibration_report


# -- 1. every argument checked up front --------------------------------------------------------

BAD = {
    "confidence_level": [float("nan"), float("inf"), -float("inf"), "0.9", "abc", 0, 1, -0.5,
                         1.5, None, True, [0.9]],
    "n_bins": [float("nan"), float("inf"), "15", 0, -3, 2.5, None, True],
    "n_resamples": [float("nan"), float("inf"), "100", 0, 19, -5, 2.5, None, True],
    "random_state": [float("nan"), float("inf"), "0", -1, 2.5, True, [0]],
    "n_jobs": [float("nan"), float("inf"), "2", 0, 2.5, True],
    "task": [float("nan"), "classify", "", None, 1],
    "name": [float("nan"), 1, ["a"]],
    "labels": [float("nan"), "ab", [0], 3],
    "sample_weight": [float("nan"), np.ones(60)],
}


@pytest.mark.parametrize("argument,value",
                         [(a, v) for a, values in BAD.items() for v in values],
                         ids=lambda x: repr(x)[:20])
def test_bad_arguments_are_refused_naming_them(binary, argument, value):
    p, y = binary
    kwargs = {"n_resamples": 20, argument: value}
    with pytest.raises((ValueError, TypeError), match=argument):
        calibration_report(p, y=y, **kwargs)


def test_nan_confidence_level_is_refused_like_everywhere_else(binary):
    """It crashed while formatting ('cannot convert float NaN to integer')."""
    p, y = binary
    with pytest.raises(ValueError, match="confidence_level must be finite"):
        calibration_report(p, y=y, confidence_level=float("nan"), n_resamples=20)
    with pytest.raises(ValueError, match="confidence_level must be finite"):
        skcalib.reliability_curve(y, p, confidence_level=float("nan"))
