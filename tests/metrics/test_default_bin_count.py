"""One default bin count (15) for the binned error, the report and the reliability diagrams."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from skcalib import calibration_error  # noqa: E402

from skcalib.plotting import ReliabilityDisplay  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _binary(n=600, seed=0, power=1.0):
    rng = np.random.default_rng(seed)
    p = rng.random(n)
    y = (rng.random(n) < p ** power).astype(int)
    return y, p


# --------------------------------------------------------------------------------------------
# One default bin count


def _default(func, name):
    import inspect

    return inspect.signature(func).parameters[name].default


def test_one_default_bin_count_for_the_error_the_report_and_the_diagrams():
    from skcalib.reporting import calibration_report

    n_bins = _default(calibration_error, "n_bins")
    assert n_bins == 15
    assert _default(calibration_report, "n_bins") == n_bins
    assert _default(ReliabilityDisplay.from_predictions, "n_bins") == n_bins
    assert _default(ReliabilityDisplay.from_estimator, "n_bins") == n_bins
    y, p = _binary(n=3000)
    d = ReliabilityDisplay.from_predictions(y, p, band=None)
    assert len(d.counts) == n_bins
    # the diagram's count-weighted gap is the default binned error
    gap = np.average(np.abs(d.prob_true - d.prob_pred), weights=d.counts)
    assert gap == pytest.approx(calibration_error(y, p), rel=1e-12)
