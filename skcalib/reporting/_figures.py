"""The report's figures (:meth:`CalibrationReport.plot`): the Displays of :mod:`skcalib.plotting`
drawn side by side -- reliability and smooth reliability diagrams for a classifier; PIT
histogram, quantile calibration and interval coverage for a regressor.

``plot_classification(figure, data, name)`` and ``plot_regression(figure, data, name)`` draw into
``figure`` from the report's stored data and return the Displays. :mod:`skcalib.plotting` is
imported on the first figure (``import skcalib`` does not import it).
"""

__all__ = ["plot_classification", "plot_regression"]


def plot_classification(figure, data, name):
    """Reliability diagram and smooth reliability diagram, on two axes of ``figure``."""
    from ..plotting import ReliabilityDisplay, SmoothReliabilityDisplay

    y, P, classes = data["y"], data["probs"], data["classes"]
    ax1, ax2 = figure.subplots(1, 2)
    reliability = ReliabilityDisplay.from_predictions(
        y, P, labels=classes, n_bins=data["n_bins"], band="clopper-pearson",
        confidence_level=data["confidence_level"], name=name, ax=ax1)
    mode = reliability.curves[0].mode  # (spelled as mode= accepts it)
    ax1.set_title(f'Reliability diagram (mode="{mode}", {data["n_bins"]} bins)')
    smooth = SmoothReliabilityDisplay.from_predictions(y, P, labels=classes, name=name, ax=ax2)
    ax2.set_title("Smooth reliability diagram")
    return [reliability, smooth]


def plot_regression(figure, data, name):
    """PIT histogram, quantile calibration and interval coverage on three axes of ``figure``
    (a note instead for multivariate predictions)."""
    y, dist = data["y"], data["y_pred"]
    if not data["univariate"]:
        ax = figure.subplots(1, 1)
        ax.text(0.5, 0.5, "PIT, quantile and coverage plots need univariate predictions",
                ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return []
    from ..plotting import IntervalCoverageDisplay, PITHistogramDisplay, QuantileCalibrationDisplay

    ax1, ax2, ax3 = figure.subplots(1, 3)
    bins = int(min(20, max(5, len(y) // 10)))
    pit_display = PITHistogramDisplay.from_predictions(
        y, dist, bins=bins, confidence_level=data["confidence_level"], name=name, ax=ax1,
        random_state=data.get("random_state"))
    ax1.set_title("PIT histogram")
    quantile = QuantileCalibrationDisplay.from_predictions(y, dist, name=name, ax=ax2)
    ax2.set_title("Quantile calibration")
    coverage = IntervalCoverageDisplay.from_predictions(
        y, dist, confidence_level=data["confidence_level"], name=name, ax=ax3)
    ax3.set_title("Interval coverage")
    return [pit_display, quantile, coverage]
