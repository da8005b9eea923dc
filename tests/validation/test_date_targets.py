"""Dates, durations and booleans are not regression targets (nor distribution parameters)."""

import numpy as np
import pandas as pd
import pytest

from skcalib import metrics, stats
from skcalib.distributions import Laplace, Normal
from skcalib.reporting import calibration_report


N4 = Normal(np.arange(4.0), np.ones(4))
ARR4 = np.array([[0, 1], [1, 1], [2, 1], [3, 1.0]])


# --------------------------------------------------------------------------------------------
# B3: dates, durations and booleans as targets

TARGET_FUNCS = [
    lambda y, p: metrics.crps(y, p),
    lambda y, p: metrics.nll(y, p),
    lambda y, p: metrics.pit(y, p),
    lambda y, p: metrics.ence(y, p, n_bins=2),
    lambda y, p: metrics.uce(y, p, n_bins=2),
    lambda y, p: metrics.interval_coverage(y, p),
    lambda y, p: metrics.quantile_calibration_error(y, p),
    lambda y, p: metrics.miscalibration_area(y, p),
    lambda y, p: stats.pit_test(y, p),
]

BAD_TARGETS = {
    "dates": pd.Series(pd.date_range("2020", periods=4)),
    "date array": np.array(pd.date_range("2020", periods=4)),
    "durations": pd.Series(pd.timedelta_range("1D", periods=4)),
    "booleans": np.array([True, False, True, True]),
}


@pytest.mark.parametrize("kind", list(BAD_TARGETS))
@pytest.mark.parametrize("func", TARGET_FUNCS)
@pytest.mark.parametrize("pred", ["array", "dist"])
def test_dates_durations_booleans_are_not_targets(kind, func, pred):
    p = ARR4 if pred == "array" else N4
    with pytest.raises(TypeError, match="y_true must contain real numbers"):
        func(BAD_TARGETS[kind], p)


def test_dates_refused_by_report_and_skce():
    with pytest.raises(TypeError, match="^y must contain real numbers.*dates"):
        calibration_report(N4, y=BAD_TARGETS["dates"])
    with pytest.raises(TypeError, match="y_true must contain real numbers.*dates"):
        stats.skce_test(BAD_TARGETS["dates"], N4)


@pytest.mark.parametrize("family", [Normal, Laplace])
@pytest.mark.parametrize("arg", ["loc", "scale"])
def test_dates_refused_as_parameters(family, arg):
    dates = pd.date_range("2020", periods=3) if arg == "loc" else pd.timedelta_range("1s", periods=3)
    kwargs = {"loc": np.zeros(3), "scale": np.ones(3), arg: dates}
    with pytest.raises(TypeError, match=f"^{arg} must contain real numbers.*dates or durations"):
        family(**kwargs)
