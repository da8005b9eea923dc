"""The regression Displays on the new forms of predictions: draws and ensembles (``Empirical``),
predicted quantiles (``Quantiles``) and interval bounds (``IntervalCoverageDisplay.from_bounds``).

What is drawn is checked against the metric functions (``pit``, ``quantile_calibration_curve``,
``miscalibration_area``, ``interval_coverage``, ``interval_bounds_coverage``) and against
independent computations (explicit comparisons, beta quantiles), not only that it runs.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import stats

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from skcalib import (  # noqa: E402
    interval_bounds_coverage,
    interval_coverage,
    miscalibration_area,
    pit,
    quantile_calibration_curve,
)
from skcalib.distributions import Empirical, Quantiles  # noqa: E402
from skcalib.plotting import (  # noqa: E402
    IntervalCoverageDisplay,
    PITHistogramDisplay,
    QuantileCalibrationDisplay,
)

TAU = np.array([0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95])


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _targets(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, n)
    return x, x + rng.normal(size=n), rng


def _ensemble(n=400, m=25, seed=0, spread=1.0):
    """Targets N(x, 1); ``m`` members drawn from N(x, spread^2)."""
    x, y, rng = _targets(n, seed)
    return y, Empirical(x[:, None] + spread * rng.normal(size=(n, m)))


def _quantiles(n=400, seed=0, spread=1.0):
    """Targets N(x, 1); the quantiles of N(x, spread^2) at TAU."""
    x, y, _ = _targets(n, seed)
    return y, Quantiles(x[:, None] + spread * stats.norm.ppf(TAU), TAU)


FORMS = {"empirical": _ensemble, "quantiles": _quantiles}


class StubRegressor:
    """A fitted regressor whose predictive distribution is a given batch (rows picked by X)."""

    def __init__(self, dist):
        self.dist = dist

    def predict(self, X):
        return self.dist.mean[np.asarray(X, dtype=int)[:, 0]]

    def predict_distribution(self, X):
        return self.dist[np.asarray(X, dtype=int)[:, 0]]


@pytest.mark.parametrize("form", sorted(FORMS))
def test_pit_histogram_heights_are_the_histogram_of_pit(form):
    y, pred = FORMS[form]()
    disp = PITHistogramDisplay.from_predictions(y, pred, bins=8, name=form)
    u = pit(y, pred)
    assert_allclose(disp.pit_values, u)
    edges = np.linspace(0, 1, 9)
    # brute force: half-open bins, the last closed
    expected = [np.mean((u >= a) & ((u < b) if k < 7 else (u <= b))) / (b - a)
                for k, (a, b) in enumerate(zip(edges[:-1], edges[1:]))]
    assert_allclose(disp.heights, expected)
    assert_allclose(disp.bars_.get_data().values, expected)
    assert disp.n_trials == y.size


def test_pit_of_an_ensemble_is_the_fraction_of_members_below():
    y, pred = _ensemble(n=50, m=7, seed=1)
    disp = PITHistogramDisplay.from_predictions(y, pred, bins=7)
    assert_allclose(disp.pit_values, (pred.samples <= y[:, None]).mean(axis=1))


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("proportion", ["quantile", "interval"])
def test_quantile_curve_is_the_metric(form, proportion):
    y, pred = FORMS[form]()
    disp = QuantileCalibrationDisplay.from_predictions(y, pred, quantiles=21,
                                                       proportion=proportion, band="pointwise")
    expected, observed = quantile_calibration_curve(y, pred, quantiles=21, proportion=proportion)
    assert_allclose(disp.expected, expected)
    assert_allclose(disp.observed, observed)
    assert_allclose(disp.line_.get_xydata(), np.column_stack([expected, observed]))
    assert disp.miscalibration_area == pytest.approx(
        miscalibration_area(y, pred, proportion=proportion))
    # independent: the fraction of targets at or below the predicted p-quantile... from the PIT
    u = pit(y, pred)
    v = u if proportion == "quantile" else np.abs(2 * u - 1)
    assert_allclose(observed, [np.mean(v <= p) for p in expected])


@pytest.mark.parametrize("form", sorted(FORMS))
def test_coverage_points_are_the_metric_with_clopper_pearson_bars(form):
    y, pred = FORMS[form](n=300, seed=3)
    levels = [0.5, 0.8]
    disp = IntervalCoverageDisplay.from_predictions(y, pred, levels=levels,
                                                    confidence_level=0.9)
    cov = interval_coverage(y, pred, levels=levels)
    assert_allclose(disp.coverage, cov)
    assert_allclose(disp.line_.get_xydata(), np.column_stack([levels, cov]))
    x = np.round(cov * 300)
    assert_allclose(disp.ci_low, stats.beta.ppf(0.05, x, 300 - x + 1), rtol=1e-9)
    assert_allclose(disp.ci_high, stats.beta.ppf(0.95, x + 1, 300 - x), rtol=1e-9)
    # the central intervals' own bounds (ppf) give the same coverage at these levels
    for lv, c in zip(levels, cov):
        lo, hi = pred.ppf((1 - lv) / 2), pred.ppf((1 + lv) / 2)
        assert c == pytest.approx(np.mean((lo <= y) & (y <= hi)))


def test_too_narrow_forms_look_over_confident():
    for y, pred in (_ensemble(spread=0.5, m=40), _quantiles(spread=0.5)):
        disp = IntervalCoverageDisplay.from_predictions(y, pred, levels=[0.5, 0.8])
        assert np.all(disp.ci_high < [0.5, 0.8])
        hist = PITHistogramDisplay.from_predictions(y, pred, bins=5)
        assert hist.heights[0] > hist.band_high[0] and hist.heights[-1] > hist.band_high[-1]


@pytest.mark.parametrize("form", sorted(FORMS))
def test_from_estimator_equals_from_predictions(form):
    y, pred = FORMS[form](n=200, seed=4)
    X = np.arange(200)[:, None]
    model = StubRegressor(pred)
    # (7 bins: an ensemble's PIT values k/25 fall on no inner edge, where a last-bit
    # difference between two equal batches could move a value across)
    for cls, kw in ((PITHistogramDisplay, {"bins": 7}),
                    (QuantileCalibrationDisplay, {"quantiles": 11}),
                    (IntervalCoverageDisplay, {"levels": [0.5, 0.9]})):
        a = cls.from_estimator(model, X, y, **kw)
        b = cls.from_predictions(y, pred, **kw)
        assert any(t.get_text().startswith("StubRegressor") for t in a.ax_.get_legend().get_texts())
        attr = {PITHistogramDisplay: "heights", QuantileCalibrationDisplay: "observed",
                IntervalCoverageDisplay: "coverage"}[cls]
        assert_allclose(getattr(a, attr), getattr(b, attr))


# --------------------------------------------------------------------------------------------
# interval bounds


def _bounds(n=300, seed=5, half_widths=(0.674, 1.645)):
    """Targets N(0, 1) and the intervals [-h, h] (central normal intervals for h = z)."""
    y = np.random.default_rng(seed).normal(size=n)
    return y, {lv: np.tile([-h, h], (n, 1)) for lv, h in zip((0.5, 0.9), half_widths)}


def test_from_bounds_dict_draws_the_bounds_coverage():
    y, bounds = _bounds()
    disp = IntervalCoverageDisplay.from_bounds(y, bounds, confidence_level=0.9, name="conformal")
    cov = interval_bounds_coverage(y, bounds)
    assert_allclose(disp.levels, [0.5, 0.9])
    assert_allclose(disp.coverage, list(cov.values()))
    # independent: explicit comparisons, and Clopper--Pearson from beta quantiles
    assert_allclose(disp.coverage, [np.mean(np.abs(y) <= 0.674), np.mean(np.abs(y) <= 1.645)])
    x = np.round(disp.coverage * 300)
    assert_allclose(disp.ci_low, stats.beta.ppf(0.05, x, 300 - x + 1), rtol=1e-9)
    assert_allclose(disp.ci_high, stats.beta.ppf(0.95, x + 1, 300 - x), rtol=1e-9)
    assert_allclose(disp.line_.get_xydata(), np.column_stack([[0.5, 0.9], disp.coverage]))
    assert disp.n_trials == 300
    assert "conformal" in [t.get_text() for t in disp.ax_.get_legend().get_texts()]


def test_from_bounds_array_with_a_level_and_weights():
    y, bounds = _bounds(n=120, seed=6)
    w = np.random.default_rng(6).integers(0, 3, 120)
    disp = IntervalCoverageDisplay.from_bounds(y, bounds[0.9], level=0.9, sample_weight=w)
    assert_allclose(disp.levels, [0.9])
    assert disp.coverage[0] == pytest.approx(
        interval_bounds_coverage(y, bounds[0.9], sample_weight=w))
    # frequency weights: the same as the rows repeated
    rep = np.repeat(np.arange(120), w)
    again = IntervalCoverageDisplay.from_bounds(y[rep], bounds[0.9][rep], level=0.9)
    assert_allclose([disp.coverage, disp.ci_low, disp.ci_high],
                    [again.coverage, again.ci_low, again.ci_high])
    assert disp.n_trials == w.sum()


def test_from_bounds_too_narrow_intervals_lie_below_the_diagonal():
    y, bounds = _bounds(n=400, seed=7, half_widths=(0.3, 0.8))
    disp = IntervalCoverageDisplay.from_bounds(y, bounds)
    assert np.all(disp.ci_high < disp.levels)


def test_from_bounds_and_from_predictions_on_one_axis():
    y, pred = _quantiles(n=200, seed=8)
    bounds = {lv: np.column_stack([pred.ppf((1 - lv) / 2), pred.ppf((1 + lv) / 2)])
              for lv in (0.5, 0.8)}
    a = IntervalCoverageDisplay.from_predictions(y, pred, levels=[0.5, 0.8], name="quantiles")
    b = IntervalCoverageDisplay.from_bounds(y, bounds, ax=a.ax_, name="their bounds")
    # the central intervals of the quantiles, as bounds, cover the same targets
    assert_allclose(a.coverage, b.coverage)
    assert len(a.ax_.containers) == 2


@pytest.mark.parametrize("kwargs, exc, match", [
    ({}, TypeError, "level is required for an array y_interval"),
    ({"level": 1.5}, ValueError, "level must lie in"),
    ({"level": True}, TypeError, "level must be a real number"),
    ({"level": [0.5, 0.9]}, TypeError, "level must be a real number"),
    ({"level": 0.9, "confidence_level": 2.0}, ValueError, "confidence_level"),
    ({"level": 0.9, "errorbar_kwargs": 3}, TypeError, "errorbar_kwargs"),
    ({"level": 0.9, "name": 3}, TypeError, "name must be a str"),
])
def test_from_bounds_bad_arguments(kwargs, exc, match):
    y, bounds = _bounds(n=20)
    with pytest.raises(exc, match=match):
        IntervalCoverageDisplay.from_bounds(y, bounds[0.9], **kwargs)


def test_from_bounds_dict_refuses_a_level_and_bad_bounds():
    y, bounds = _bounds(n=20)
    with pytest.raises(TypeError, match="level must be None when y_interval is a dict"):
        IntervalCoverageDisplay.from_bounds(y, bounds, level=0.9)
    bad = bounds[0.9][:, ::-1]
    with pytest.raises(ValueError, match="lower <= upper"):
        IntervalCoverageDisplay.from_bounds(y, bad, level=0.9)
    with pytest.raises(ValueError, match="rows"):
        IntervalCoverageDisplay.from_bounds(y[:10], bounds[0.9], level=0.9)


def test_pit_histogram_random_state_draws_the_randomised_pit_of_atoms():
    """Targets on a draw of an Empirical get the randomised PIT; the seed fixes the histogram,
    and its heights are those of ``skcalib.pit`` with the same seed."""
    import skcalib
    from skcalib.distributions import Empirical
    from skcalib.plotting import PITHistogramDisplay

    rng = np.random.default_rng(0)
    d = Empirical(rng.normal(size=(200, 4)))
    y = d.samples[np.arange(200), rng.integers(0, 4, 200)]     # every target on an atom
    a = PITHistogramDisplay.from_predictions(y, d, bins=10, random_state=3)
    b = PITHistogramDisplay.from_predictions(y, d, bins=10, random_state=3)
    np.testing.assert_array_equal(a.pit_values, b.pit_values)
    np.testing.assert_array_equal(a.pit_values, skcalib.pit(y, d, random_state=3))
    c = PITHistogramDisplay.from_predictions(y, d, bins=10, random_state=4)
    assert not np.array_equal(a.pit_values, c.pit_values)


def test_pit_histogram_of_ranks_is_the_rank_histogram():
    import skcalib
    from skcalib.plotting import PITHistogramDisplay

    rng = np.random.default_rng(1)
    mu = rng.normal(size=300)
    d = Empirical(mu[:, None] + rng.normal(size=(300, 9)))
    y = mu + rng.normal(size=300)
    disp = PITHistogramDisplay.from_predictions(y, d, bins=10, ranks=True, random_state=0)
    np.testing.assert_array_equal(disp.pit_values, skcalib.pit(y, d, ranks=True, random_state=0))
    # the plain PIT of the same ensemble takes only the 10 values k / 9; the ranks spread
    plain = PITHistogramDisplay.from_predictions(y, d, bins=10)
    assert np.unique(plain.pit_values).size <= 10 < np.unique(disp.pit_values).size
