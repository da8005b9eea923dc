"""The Displays' stored data and names are checked at ``plot`` naming the parameter, before
anything is drawn; valid data draw and are kept as given."""

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from skcalib import reliability_curve, smooth_reliability_curve  # noqa: E402
from skcalib.plotting import (  # noqa: E402
    IntervalCoverageDisplay,
    LocalCalibrationBiasDisplay,
    PITHistogramDisplay,
    QuantileCalibrationDisplay,
    ReliabilityDisplay,
    SmoothReliabilityDisplay,
)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _binary(n=200, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.random(n)
    return (rng.random(n) < p).astype(int), p


# --------------------------------------------------------------------------------------------
# A11: the stored data are checked before anything is drawn


def _reliability():
    y, p = _binary()
    return reliability_curve(y, p, n_bins=5)


BAD_DATA = [
    (lambda: PITHistogramDisplay(np.linspace(0, 1, 6), np.ones(7), 30),
     r"^heights must have 5 entries"),
    (lambda: PITHistogramDisplay(np.array([0, .5, .2, .7, .9, 1]), np.ones(5), 30),
     r"^edges must be strictly increasing"),
    (lambda: PITHistogramDisplay(np.linspace(0, 1, 6), -np.ones(5), 30), r"^heights .* >= 0"),
    (lambda: PITHistogramDisplay(np.linspace(0, 2, 6), np.ones(5), 30), r"^edges .*\[0, 1\]"),
    (lambda: PITHistogramDisplay(np.linspace(0, 1, 6), np.ones(5), -3), r"^n_trials"),
    (lambda: PITHistogramDisplay(np.linspace(0, 1, 3), np.ones(2), 30, band_low=np.ones(3),
                                 band_high=np.ones(3)), r"^band_low must have 2 entries"),
    (lambda: PITHistogramDisplay(np.linspace(0, 1, 3), np.ones(2), 30, band_low=np.ones(2)),
     r"band_low and band_high must be given together"),
    (lambda: PITHistogramDisplay(np.linspace(0, 1, 3), ["1", "1"], 30), r"^heights must contain"),
    (lambda: IntervalCoverageDisplay(np.array([.5, .9]), np.ones(5), np.array([.3, .7]),
                                     np.array([.5, .9])), r"^coverage must have 2 entries"),
    (lambda: IntervalCoverageDisplay(np.array([.5]), np.array([.5, .6]), np.array([.3, .7]),
                                     np.array([.5, .9])), r"^coverage must have 1 entry "),
    (lambda: IntervalCoverageDisplay(np.array([.5, 1.5]), np.array([.5, .8]),
                                     np.array([.3, .7]), np.array([.5, .9])),
     r"^levels .* in \(0, 1\)"),
    (lambda: IntervalCoverageDisplay(np.array([.5, .9]), np.array([np.nan, .8]),
                                     np.array([.3, .7]), np.array([.5, .9])),
     r"^coverage must be finite"),
    (lambda: IntervalCoverageDisplay(np.array([.5, .9]), np.array([.5, .8]),
                                     np.array([.6, .7]), np.array([.5, .9])),
     r"^ci_low must not exceed ci_high"),
    (lambda: IntervalCoverageDisplay([.5], [.5], [.4], [.6], confidence_level=1.5),
     r"^confidence_level"),
    (lambda: QuantileCalibrationDisplay([0, .5, 1], [0, .5], 0.1),
     r"^observed must have 3 entries"),
    (lambda: QuantileCalibrationDisplay([0, .5, 1], [0, .5, 1], float("nan")),
     r"^miscalibration_area must be finite"),
    (lambda: QuantileCalibrationDisplay([0, 1, .5], [0, .5, 1], 0.1),
     r"^expected must be strictly increasing"),
    (lambda: QuantileCalibrationDisplay([0, .5, 1], [0, .5, 1], 0.1, proportion="quantil"),
     r"^proportion .*Did you mean 'quantile'"),
    (lambda: LocalCalibrationBiasDisplay(np.arange(5.0), np.zeros(4)),
     r"^bias must have 5 entries"),
    (lambda: LocalCalibrationBiasDisplay(np.arange(5.0), np.r_[np.nan, np.zeros(4)]),
     r"^bias must be finite"),
    (lambda: LocalCalibrationBiasDisplay(np.arange(5.0), np.zeros(5), np.zeros(3)),
     r"^groups must have shape \(5,\)"),
    (lambda: ReliabilityDisplay(_reliability(), confidence_level=1.5), r"^confidence_level"),
    (lambda: ReliabilityDisplay(_reliability(), band="clopper-pearson",
                                band_low=_reliability().ci_low + 2,
                                band_high=_reliability().ci_high), r"^band_low .*\[0, 1\]"),
    (lambda: SmoothReliabilityDisplay(smooth_reliability_curve(*_binary()), smece=np.nan),
     r"^smece must be finite"),
    (lambda: SmoothReliabilityDisplay(smooth_reliability_curve(*_binary()), band="bootstrap",
                                      band_low=np.zeros(3), band_high=np.ones(3)),
     r"^band_low must have \d+ entries \(one per grid point"),
    (lambda: SmoothReliabilityDisplay(smooth_reliability_curve(*_binary()), mode="top-label"),
     r"^mode .*Did you mean 'top_label'"),
    (lambda: SmoothReliabilityDisplay(_reliability()), r"^curve must be a SmoothReliabilityCurve"),
]


@pytest.mark.parametrize("index", range(len(BAD_DATA)))
def test_display_data_are_checked_at_plot_naming_the_parameter(index):
    make, match = BAD_DATA[index]
    display = make()  # the constructor stores only, as scikit-learn's Displays do
    plt.close("all")
    with pytest.raises((ValueError, TypeError), match=match):
        display.plot()
    assert not plt.get_fignums(), "nothing may be drawn before the data are checked"


def test_valid_stored_data_still_draw_and_keep_what_was_given():
    d = PITHistogramDisplay([0.0, 0.5, 1.0], [0.8, 1.2], 10).plot()
    np.testing.assert_allclose(d.bars_.get_data().values, [0.8, 1.2])
    c = IntervalCoverageDisplay([0.5, 0.9], [0.4, 0.95], [0.3, 0.9], [0.5, 0.99]).plot()
    np.testing.assert_allclose(c.line_.get_ydata(), [0.4, 0.95])
    q = QuantileCalibrationDisplay([0.0, 0.5, 1.0], [0.0, 0.7, 1.0], 0.1).plot()
    np.testing.assert_allclose(q.line_.get_ydata(), [0.0, 0.7, 1.0])


def test_stored_names_are_checked_naming_their_parameter():
    with pytest.raises(TypeError, match="^feature_name must be a str"):
        LocalCalibrationBiasDisplay(np.arange(3.0), np.zeros(3), feature_name=3).plot()
    y, p = _binary()
    with pytest.raises(TypeError, match="^estimator_name must be a str"):
        ReliabilityDisplay(reliability_curve(y, p), estimator_name=1).plot()


def test_a_hand_made_smooth_curve_is_checked():
    c = smooth_reliability_curve(*_binary())
    bad = c._replace(frequency=c.frequency[:-1])
    with pytest.raises(ValueError, match=r"^curve.frequency must have \d+ entries"):
        SmoothReliabilityDisplay(bad).plot()
    with pytest.raises(ValueError, match=r"^curve.grid must be strictly increasing"):
        SmoothReliabilityDisplay(c._replace(grid=c.grid[::-1])).plot()


def test_rounding_errors_at_a_closed_bound_are_not_refused():
    one = 1.0 + 2.2e-16 * 4
    IntervalCoverageDisplay([0.5, 0.9], [0.5, one], [0.4, 0.8], [0.6, one]).plot()
    with pytest.raises(ValueError, match=r"^levels .* in \(0, 1\)"):
        IntervalCoverageDisplay([0.5, 1.0], [0.5, 1.0], [0.4, 0.8], [0.6, 1.0]).plot()
