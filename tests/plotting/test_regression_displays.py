"""Regression Displays (PIT histogram, quantile-calibration curve, interval coverage): what is
drawn (artists and their data) equals the metrics' numbers and independent computations;
rendered headless to PNG."""

import io

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats

matplotlib = pytest.importorskip("matplotlib")  # the ``plot`` extra; installed by ``make test``
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from sklearn.datasets import load_diabetes  # noqa: E402
from sklearn.linear_model import BayesianRidge, LinearRegression, LogisticRegression  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from skcalib import (  # noqa: E402
    interval_coverage,
    miscalibration_area,
    pit,
    quantile_calibration_curve,
)
from skcalib.distributions import Laplace, Mixture, MultivariateNormal, Normal  # noqa: E402
from skcalib.plotting import (  # noqa: E402
    IntervalCoverageDisplay,
    PITHistogramDisplay,
    QuantileCalibrationDisplay,
)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _data(n=600, seed=0, spread=1.0):
    """Targets N(x, 1) and Normal predictions N(x, spread^2) (calibrated for spread = 1)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, n)
    y = x + rng.normal(size=n)
    return y, Normal(x, np.full(n, spread))


def _brute_force_heights(u, edges, w=None):
    """Density of each half-open bin [a, b) (the last closed), by explicit comparisons."""
    w = np.ones_like(u) if w is None else np.asarray(w, dtype=float)
    out = []
    for k in range(edges.size - 1):
        a, b = edges[k], edges[k + 1]
        inside = (u >= a) & ((u < b) if k < edges.size - 2 else (u <= b))
        out.append(w[inside].sum() / w.sum() / (b - a))
    return np.array(out)


def _png(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=40)
    data = buf.getvalue()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000
    return data


def _legend_texts(ax):
    legend = ax.get_legend()
    return [t.get_text() for t in legend.get_texts()] if legend is not None else []


# --------------------------------------------------------------------------------------------
# PIT histogram


@pytest.mark.parametrize("bins", [10, np.array([0.0, 0.1, 0.25, 0.5, 0.9, 1.0])])
def test_pit_bar_heights_equal_the_histogram_of_the_pit_values(bins):
    rng = np.random.default_rng(1)
    n = 400
    y = rng.standard_t(4, size=n)
    pred = Laplace(rng.normal(0, 0.3, n), rng.uniform(0.5, 1.5, n))
    disp = PITHistogramDisplay.from_predictions(y, pred, bins=bins, name="Laplace")
    edges = np.linspace(0, 1, 11) if np.ndim(bins) == 0 else bins
    expected = _brute_force_heights(pit(y, pred), edges)
    assert_allclose(disp.heights, expected, rtol=1e-12)
    drawn = disp.bars_.get_data()
    assert_allclose(drawn.values, expected, rtol=1e-12)
    assert_allclose(drawn.edges, edges)
    assert_allclose(disp.pit_values, pit(y, pred))
    assert disp.bars_.get_label() == "Laplace"
    assert disp.ax_.get_xlabel() == "PIT value" and disp.ax_.get_ylabel() == "Density"
    # the uniform reference line at density 1
    assert_allclose(disp.line_.get_ydata(), [1.0, 1.0])
    _png(disp.figure_)


@pytest.mark.parametrize("band", ["pointwise", "simultaneous"])
def test_pit_band_limits_are_binomial_quantiles_of_the_bin_counts(band):
    y, pred = _data(n=300)
    edges = np.array([0.0, 0.2, 0.5, 0.6, 1.0])
    disp = PITHistogramDisplay.from_predictions(y, pred, bins=edges, band=band,
                                                confidence_level=0.9)
    widths = np.diff(edges)
    alpha = 0.1 / (widths.size if band == "simultaneous" else 1)
    lo_count = stats.binom.ppf(alpha / 2, 300, widths)
    hi_count = stats.binom.ppf(1 - alpha / 2, 300, widths)
    assert_allclose(disp.band_low, lo_count / (300 * widths))
    assert_allclose(disp.band_high, hi_count / (300 * widths))
    # the defining property of the quantiles: each tail outside the band has mass <= alpha / 2
    assert np.all(stats.binom.cdf(lo_count - 1, 300, widths) <= alpha / 2)
    assert np.all(stats.binom.sf(hi_count, 300, widths) <= alpha / 2)
    # the drawn band: a step polygon whose heights are exactly the limits, over [0, 1]
    verts = disp.band_.get_paths()[0].vertices
    assert set(np.round(verts[:, 1], 12)) == set(np.round(np.r_[disp.band_low, disp.band_high],
                                                           12))
    assert verts[:, 0].min() == 0.0 and verts[:, 0].max() == 1.0
    kind = "simultaneous" if band == "simultaneous" else "pointwise"
    assert f"90% {kind} band if uniform" in _legend_texts(disp.ax_)


def test_pit_simultaneous_band_is_wider_and_band_none_draws_none():
    y, pred = _data(n=500)
    point = PITHistogramDisplay.from_predictions(y, pred, bins=10)
    simul = PITHistogramDisplay.from_predictions(y, pred, bins=10, band="simultaneous")
    assert np.all(simul.band_low < point.band_low) and np.all(simul.band_high > point.band_high)
    none = PITHistogramDisplay.from_predictions(y, pred, bins=10, band=None)
    assert none.band_ is None and none.band_low is None
    assert len(none.ax_.collections) == 0


def test_calibrated_model_pit_near_uniform_and_curve_near_diagonal():
    y, pred = _data(n=2000, seed=3)
    disp = PITHistogramDisplay.from_predictions(y, pred, bins=10, band="simultaneous")
    assert np.all((disp.band_low <= disp.heights) & (disp.heights <= disp.band_high))
    curve = QuantileCalibrationDisplay.from_predictions(y, pred)
    # DKW: P(sup |G - p| > 0.05) <= 2 exp(-2 * 2000 * 0.05^2) = 9e-5 for a calibrated model
    assert np.max(np.abs(curve.observed - curve.expected)) < 0.05
    assert curve.miscalibration_area < 0.02


def test_over_dispersed_model_shows_a_hump_and_under_dispersed_a_u():
    y, wide = _data(n=1000, seed=4, spread=3.0)
    disp = PITHistogramDisplay.from_predictions(y, wide, bins=10, band="simultaneous")
    h = disp.heights
    # hump: the middle bins above the band, the outer bins below it, rising towards the middle
    assert np.all(h[4:6] > disp.band_high[4:6])
    assert np.all(h[[0, -1]] < disp.band_low[[0, -1]])
    assert np.all(np.diff(h[:5]) > 0) and np.all(np.diff(h[5:]) < 0)
    _, narrow = _data(n=1000, seed=4, spread=0.3)
    u = PITHistogramDisplay.from_predictions(y, narrow, bins=10, band="simultaneous")
    assert np.all(u.heights[[0, -1]] > u.band_high[[0, -1]])
    assert np.all(u.heights[4:6] < u.band_low[4:6])


def test_pit_sample_weight_is_a_frequency_weight():
    y, pred = _data(n=200, seed=5)
    w = np.random.default_rng(5).integers(0, 4, 200)
    w_copy = w.copy()
    weighted = PITHistogramDisplay.from_predictions(y, pred, bins=8, sample_weight=w)
    rep = np.repeat(np.arange(200), w)
    repeated = PITHistogramDisplay.from_predictions(y[rep], pred[rep], bins=8)
    assert_allclose(weighted.heights, repeated.heights)
    assert_allclose(weighted.band_low, repeated.band_low)
    assert_allclose(weighted.band_high, repeated.band_high)
    assert weighted.n_trials == w.sum()
    assert_allclose(weighted.heights, _brute_force_heights(pit(y, pred), np.linspace(0, 1, 9),
                                                           w))
    assert_array_equal(w, w_copy)


def test_mixtures_and_mean_std_rows_are_accepted():
    y, pred = _data(n=300, seed=6)
    rows = np.column_stack([pred.loc, pred.scale])
    a = PITHistogramDisplay.from_predictions(y, pred, bins=5)
    b = PITHistogramDisplay.from_predictions(y, rows, bins=5)
    assert_allclose(a.heights, b.heights)
    mix = Mixture(np.full((300, 2), 0.5), [Normal(pred.loc - 0.5, pred.scale),
                                           Normal(pred.loc + 0.5, pred.scale)])
    m = QuantileCalibrationDisplay.from_predictions(y, mix, quantiles=[0.1, 0.5, 0.9])
    assert_allclose(m.observed, quantile_calibration_curve(y, mix, quantiles=[0.1, 0.5, 0.9])[1])


# --------------------------------------------------------------------------------------------
# quantile-calibration curve


@pytest.mark.parametrize("proportion", ["quantile", "interval"])
def test_quantile_curve_equals_the_metric_and_the_area_is_shown(proportion):
    rng = np.random.default_rng(7)
    y, pred = _data(n=500, seed=7, spread=0.7)
    y = y + 0.3  # a biased mean as well
    w = rng.uniform(0.5, 2.0, 500)
    disp = QuantileCalibrationDisplay.from_predictions(y, pred, proportion=proportion,
                                                       sample_weight=w, name="model")
    exp, obs = quantile_calibration_curve(y, pred, quantiles=np.linspace(0, 1, 101),
                                          proportion=proportion, sample_weight=w)
    assert_allclose(disp.expected, exp)
    assert_allclose(disp.observed, obs)
    assert_allclose(disp.line_.get_xydata(), np.column_stack([exp, obs]))
    area = miscalibration_area(y, pred, proportion=proportion, sample_weight=w)
    assert disp.miscalibration_area == pytest.approx(area, rel=1e-12)
    assert disp.line_.get_label() == f"model (miscalibration area {area:.3f})"
    assert disp.line_.get_label() in _legend_texts(disp.ax_)
    # the shaded region spans the curve and the diagonal: its polygon's vertices are on them
    verts = disp.fill_.get_paths()[0].vertices
    on_curve = np.isclose(verts[:, 1], np.interp(verts[:, 0], exp, obs))
    on_diag = np.isclose(verts[:, 1], verts[:, 0])
    assert np.all(on_curve | on_diag) and on_curve.sum() > 50 and on_diag.sum() > 50
    assert_allclose(disp.diagonal_.get_xydata(), [[0, 0], [1, 1]])
    assert "p-interval" in disp.ax_.get_ylabel() if proportion == "interval" else \
        "p-quantile" in disp.ax_.get_ylabel()
    _png(disp.figure_)


def test_quantile_curve_grid_options_and_no_fill():
    y, pred = _data(n=200, seed=8)
    disp = QuantileCalibrationDisplay.from_predictions(y, pred, quantiles=9, fill=False)
    assert_allclose(disp.expected, np.linspace(0.01, 0.99, 9))
    assert disp.fill_ is None and disp.band_ is None and len(disp.ax_.collections) == 0
    assert disp.line_.get_label().startswith("miscalibration area ")


@pytest.mark.parametrize("proportion", ["quantile", "interval"])
def test_quantile_curve_band_pointwise_binomial_and_simultaneous_dkw(proportion):
    y, good = _data(n=800, seed=12)
    _, wide = _data(n=800, seed=12, spread=1.6)
    grid = np.linspace(0.05, 0.95, 19)
    fig, ax = plt.subplots()
    point = QuantileCalibrationDisplay.from_predictions(y, good, quantiles=grid, band="pointwise",
                                                        confidence_level=0.9,
                                                        proportion=proportion, ax=ax)
    assert_allclose(point.band_low, stats.binom.ppf(0.05, 800, grid) / 800)
    assert_allclose(point.band_high, stats.binom.ppf(0.95, 800, grid) / 800)
    simul = QuantileCalibrationDisplay.from_predictions(y, good, quantiles=grid,
                                                        band="simultaneous",
                                                        proportion=proportion)
    eps = np.sqrt(np.log(2 / 0.05) / (2 * 800))  # DKW with Massart's constant
    assert_allclose(simul.band_low, np.clip(grid - eps, 0, 1))
    assert_allclose(simul.band_high, np.clip(grid + eps, 0, 1))
    # a calibrated model's curve stays in the simultaneous band; a too wide one leaves it
    assert np.all((simul.band_low <= simul.observed) & (simul.observed <= simul.band_high))
    out = QuantileCalibrationDisplay.from_predictions(y, wide, quantiles=grid,
                                                      band="simultaneous", proportion=proportion)
    assert np.any((out.observed < out.band_low) | (out.observed > out.band_high))
    # the drawn band: its polygon runs along the limits; a second model with the same n shares it
    verts = point.band_.get_paths()[0].vertices
    on_low = np.isclose(verts[:, 1], np.interp(verts[:, 0], grid, point.band_low))
    on_high = np.isclose(verts[:, 1], np.interp(verts[:, 0], grid, point.band_high))
    assert np.all(on_low | on_high)
    again = QuantileCalibrationDisplay.from_predictions(y, wide, quantiles=grid, band="pointwise",
                                                        confidence_level=0.9,
                                                        proportion=proportion, ax=ax)
    assert again.band_ is point.band_ and len(ax.collections) == 3  # one band, two fills
    assert "90% pointwise band if calibrated" in _legend_texts(ax)
    # frequency weights: the band of the data with rows repeated
    w = np.random.default_rng(12).integers(0, 3, 800)
    rep = np.repeat(np.arange(800), w)
    a = QuantileCalibrationDisplay.from_predictions(y, good, quantiles=grid, band="pointwise",
                                                    sample_weight=w, proportion=proportion)
    b = QuantileCalibrationDisplay.from_predictions(y[rep], good[rep], quantiles=grid,
                                                    band="pointwise", proportion=proportion)
    assert_allclose(a.observed, b.observed)
    assert_allclose(a.band_low, b.band_low)
    assert_allclose(a.band_high, b.band_high)
    _png(fig)


# --------------------------------------------------------------------------------------------
# interval coverage


def test_coverage_points_equal_the_metric_with_clopper_pearson_bars():
    y, pred = _data(n=250, seed=9, spread=0.6)
    levels = [0.2, 0.5, 0.8, 0.95]
    disp = IntervalCoverageDisplay.from_predictions(y, pred, levels=levels,
                                                    confidence_level=0.9, name="narrow")
    cov = interval_coverage(y, pred, levels=levels)
    assert_allclose(disp.coverage, cov)
    assert_allclose(disp.line_.get_xydata(), np.column_stack([levels, cov]))
    # Clopper--Pearson from beta quantiles, computed here independently
    x = np.round(cov * 250)
    lo = np.where(x > 0, stats.beta.ppf(0.05, x, 250 - x + 1), 0.0)
    hi = np.where(x < 250, stats.beta.ppf(0.95, x + 1, 250 - x), 1.0)
    assert_allclose(disp.ci_low, lo, rtol=1e-9)
    assert_allclose(disp.ci_high, hi, rtol=1e-9)
    segments = disp.errorbar_.lines[2][0].get_segments()
    assert len(segments) == 4
    assert_allclose([s[0, 0] for s in segments], levels)
    assert_allclose(np.sort([s[:, 1] for s in segments], axis=1), np.column_stack([lo, hi]),
                    rtol=1e-9)
    # over-confident: every interval lies below the diagonal at this size
    assert np.all(disp.ci_high < np.asarray(levels))
    assert "narrow" in _legend_texts(disp.ax_)
    _png(disp.figure_)


def test_coverage_sample_weight_is_a_frequency_weight():
    y, pred = _data(n=150, seed=10)
    w = np.random.default_rng(10).integers(0, 3, 150)
    rep = np.repeat(np.arange(150), w)
    a = IntervalCoverageDisplay.from_predictions(y, pred, sample_weight=w)
    b = IntervalCoverageDisplay.from_predictions(y[rep], pred[rep])
    assert_allclose(a.coverage, b.coverage)
    assert_allclose(a.ci_low, b.ci_low)
    assert_allclose(a.ci_high, b.ci_high)
    assert_allclose(a.levels, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99])
    one = IntervalCoverageDisplay.from_predictions(y, pred, levels=0.9)  # a scalar level
    assert_allclose(one.coverage, [interval_coverage(y, pred, levels=0.9)])


# --------------------------------------------------------------------------------------------
# several models, from_estimator, plot()


def test_several_models_on_one_axis():
    y, good = _data(n=400, seed=11)
    _, wide = _data(n=400, seed=11, spread=2.0)
    fig, axes = plt.subplots(1, 3)
    p1 = PITHistogramDisplay.from_predictions(y, good, bins=10, name="good", ax=axes[0])
    p2 = PITHistogramDisplay.from_predictions(y, wide, bins=10, name="wide", ax=axes[0],
                                              histtype="step")
    assert p1.ax_ is p2.ax_ is axes[0]
    assert len(axes[0].patches) == 2 and p1.line_ is p2.line_
    assert p1.band_ is p2.band_ and len(axes[0].collections) == 1  # same n, bins: one band
    assert p1.bars_.get_edgecolor() != p2.bars_.get_edgecolor()
    assert p2.bars_.get_fill() is False
    # the y-axis autoscales to every model's bars, from 0
    bottom, top = axes[0].get_ylim()
    assert bottom == 0.0 and top >= max(p1.heights.max(), p2.heights.max())
    texts = _legend_texts(axes[0])
    assert texts.count("good") == 1 and texts.count("wide") == 1 and texts.count("Uniform") == 1
    q1 = QuantileCalibrationDisplay.from_predictions(y, good, name="good", ax=axes[1])
    q2 = QuantileCalibrationDisplay.from_predictions(y, wide, name="wide", ax=axes[1])
    assert q1.diagonal_ is q2.diagonal_ and len(axes[1].lines) == 3
    assert q1.line_.get_color() != q2.line_.get_color()
    assert len(_legend_texts(axes[1])) == 3
    c1 = IntervalCoverageDisplay.from_predictions(y, good, name="good", ax=axes[2])
    c2 = IntervalCoverageDisplay.from_predictions(y, wide, name="wide", ax=axes[2])
    assert c1.diagonal_ is c2.diagonal_ and len(axes[2].containers) == 2
    assert _legend_texts(axes[2]) == ["Perfectly calibrated", "good", "wide"]
    # a different sample size gets its own band
    PITHistogramDisplay.from_predictions(y[:100], good[:100], bins=10, ax=axes[0])
    assert len(axes[0].collections) == 2
    _png(fig)


def test_from_estimator_equals_from_predictions():
    X, y = load_diabetes(return_X_y=True)
    X, y = X[:200], (y[:200] - y.mean()) / y.std()
    model = BayesianRidge().fit(X, y)
    mean, std = model.predict(X, return_std=True)
    rows = np.column_stack([mean, std])
    cases = [(PITHistogramDisplay, "heights"), (QuantileCalibrationDisplay, "observed"),
             (IntervalCoverageDisplay, "coverage")]
    for cls, attr in cases:
        est = cls.from_estimator(model, X, y)
        pred = cls.from_predictions(y, rows)
        assert_allclose(getattr(est, attr), getattr(pred, attr), rtol=1e-12)
        assert est.name == "BayesianRidge"
    pipe = make_pipeline(StandardScaler(), BayesianRidge()).fit(X, y)
    assert PITHistogramDisplay.from_estimator(pipe, X, y).name == "BayesianRidge"
    assert IntervalCoverageDisplay.from_estimator(pipe, X, y, name="ridge").name == "ridge"


def test_plot_from_stored_data_with_a_new_name():
    disp = QuantileCalibrationDisplay([0.0, 0.5, 1.0], [0.0, 0.7, 1.0], 0.1, name="a")
    disp.plot(name="b")
    assert disp.line_.get_label() == "b (miscalibration area 0.100)"
    cov = IntervalCoverageDisplay([0.5, 0.9], [0.4, 0.95], [0.3, 0.9], [0.5, 0.99]).plot()
    assert_allclose(cov.line_.get_ydata(), [0.4, 0.95])
    hist = PITHistogramDisplay([0.0, 0.5, 1.0], [0.8, 1.2], 10).plot(name="c")
    assert hist.band_ is None and hist.bars_.get_label() == "c"


# --------------------------------------------------------------------------------------------
# errors: a message naming the argument, and no figure made


def _no_figure_after(exc, match, func, *args, **kwargs):
    plt.close("all")
    with pytest.raises(exc, match=match):
        func(*args, **kwargs)
    assert plt.get_fignums() == []


@pytest.mark.parametrize("levels", [[0.0, 0.5], [0.5, 1.2], [], [[0.5]], ["a"]])
def test_bad_levels(levels):
    y, pred = _data(n=50)
    _no_figure_after(ValueError, "levels", IntervalCoverageDisplay.from_predictions, y, pred,
                     levels=levels)


@pytest.mark.parametrize("bins, exc", [(0, ValueError), (2.5, TypeError), ("3", TypeError),
                                       (True, TypeError), ([0.0, 0.5], ValueError),
                                       ([0.0, 0.6, 0.4, 1.0], ValueError),
                                       ([[0.0, 1.0]], ValueError)])
def test_bad_bins(bins, exc):
    y, pred = _data(n=50)
    _no_figure_after(exc, "bins", PITHistogramDisplay.from_predictions, y, pred, bins=bins)


@pytest.mark.parametrize("cls", [PITHistogramDisplay, QuantileCalibrationDisplay,
                                 IntervalCoverageDisplay])
def test_bad_ax_name_and_estimator(cls):
    y, pred = _data(n=50)
    _no_figure_after(TypeError, "ax", cls.from_predictions, y, pred, ax="axes")
    _no_figure_after(TypeError, "name", cls.from_predictions, y, pred, name=3)
    X = np.random.default_rng(0).normal(size=(50, 2))
    _no_figure_after(TypeError, "LinearRegression", cls.from_estimator,
                     LinearRegression().fit(X, y), X, y)
    labels = (y > 0).astype(int)
    _no_figure_after(TypeError, "LogisticRegression.*univariate", cls.from_estimator,
                     LogisticRegression().fit(X, labels), X, y)
    _no_figure_after(ValueError, "y_pred", cls.from_predictions, y, np.full((50, 3), 1 / 3))
    _no_figure_after(TypeError, "y_pred.*univariate", cls.from_predictions, y,
                     MultivariateNormal(np.zeros((50, 2)), np.ones((50, 2))))
    _no_figure_after(ValueError, "sample_weight", cls.from_predictions, y, pred,
                     sample_weight=-np.ones(50))


def test_bad_options():
    y, pred = _data(n=50)
    _no_figure_after(ValueError, "band", PITHistogramDisplay.from_predictions, y, pred,
                     band="bonferroni")
    _no_figure_after(ValueError, "histtype", PITHistogramDisplay.from_predictions, y, pred,
                     histtype="line")
    _no_figure_after(TypeError, "hist_kwargs", PITHistogramDisplay.from_predictions, y, pred,
                     hist_kwargs="red")
    for level in (0.0, 1.0, 1.5):
        _no_figure_after(ValueError, "confidence_level", PITHistogramDisplay.from_predictions,
                         y, pred, confidence_level=level)
        _no_figure_after(ValueError, "confidence_level",
                         IntervalCoverageDisplay.from_predictions, y, pred,
                         confidence_level=level)
    _no_figure_after(ValueError, "proportion", QuantileCalibrationDisplay.from_predictions, y,
                     pred, proportion="two-sided")
    _no_figure_after(TypeError, "fill", QuantileCalibrationDisplay.from_predictions, y, pred,
                     fill="yes")
    _no_figure_after(ValueError, "quantiles", QuantileCalibrationDisplay.from_predictions, y,
                     pred, quantiles=[0.5, 0.2])
    _no_figure_after(ValueError, "y_true", PITHistogramDisplay.from_predictions, y[:10], pred)


class _CountingRegressor:
    """A fitted 'regressor' with a predict_distribution hook that counts its calls."""

    def __init__(self):
        self.calls = 0

    def predict_distribution(self, X):
        self.calls += 1
        return Normal(np.zeros(len(X)), np.ones(len(X)))


@pytest.mark.parametrize("cls, kwargs, match", [
    (PITHistogramDisplay, {"bins": 0}, "bins"),
    (PITHistogramDisplay, {"band": "none"}, "band"),
    (QuantileCalibrationDisplay, {"quantiles": [0.2, 0.1]}, "quantiles"),
    (QuantileCalibrationDisplay, {"proportion": "upper"}, "proportion"),
    (QuantileCalibrationDisplay, {"band": "dkw"}, "band"),
    (QuantileCalibrationDisplay, {"confidence_level": 0.0}, "confidence_level"),
    (IntervalCoverageDisplay, {"levels": [1.0]}, "levels"),
    (IntervalCoverageDisplay, {"confidence_level": 2.0}, "confidence_level"),
])
def test_from_estimator_checks_its_arguments_before_predicting(cls, kwargs, match):
    model = _CountingRegressor()
    X, y = np.zeros((20, 1)), np.zeros(20)
    _no_figure_after(ValueError, match, cls.from_estimator, model, X, y, **kwargs)
    assert model.calls == 0
    disp = cls.from_estimator(model, X, y)
    assert model.calls == 1 and disp.name == "_CountingRegressor"


def test_huge_weights_give_the_unweighted_numbers_and_limit_bands():
    # RuntimeWarnings are errors in this suite: nothing may overflow on the way
    y, pred = _data(n=60, seed=13)
    w = np.full(60, 1e308)
    plain = PITHistogramDisplay.from_predictions(y, pred, bins=5)
    huge = PITHistogramDisplay.from_predictions(y, pred, bins=5, sample_weight=w)
    assert_allclose(huge.heights, plain.heights)
    assert huge.n_trials == np.inf and np.all(huge.band_low == 1) and np.all(huge.band_high == 1)
    cov = IntervalCoverageDisplay.from_predictions(y, pred, sample_weight=w)
    assert_allclose(cov.coverage, interval_coverage(y, pred, levels=cov.levels))
    assert_allclose(cov.ci_low, cov.coverage)
    assert_allclose(cov.ci_high, cov.coverage)
    for band in ("pointwise", "simultaneous"):
        q = QuantileCalibrationDisplay.from_predictions(y, pred, sample_weight=w, band=band)
        assert_allclose(q.band_low, q.expected)
        assert_allclose(q.band_high, q.expected)


def test_long_model_names_put_the_area_on_a_second_line():
    rng = np.random.default_rng(0)
    y = rng.normal(size=200)
    pred = Normal(np.zeros(200), np.ones(200))
    long = QuantileCalibrationDisplay.from_predictions(y, pred,
                                                       name="Gaussian process (noise set by hand)")
    assert long.line_.get_label().startswith("Gaussian process (noise set by hand)\n(")
    short = QuantileCalibrationDisplay.from_predictions(y, pred, name="m", ax=long.ax_)
    assert "\n" not in short.line_.get_label()
    plt.close(long.figure_)
