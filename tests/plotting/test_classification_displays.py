"""ReliabilityDisplay and SmoothReliabilityDisplay: what is drawn equals the metrics' data, the
consistency band is statistically sound (brute force on a tiny bin, coverage over seeds), several
models share an axis, and bad input is refused before anything is drawn."""

import io
import itertools

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from sklearn.linear_model import LinearRegression, LogisticRegression  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from skcalib import reliability_curve, smooth_ece, smooth_reliability_curve  # noqa: E402
from skcalib._problems.reliability import consistency_bands  # noqa: E402
from skcalib.plotting import ReliabilityDisplay, SmoothReliabilityDisplay  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _binary(n=600, seed=0, power=1.0):
    rng = np.random.default_rng(seed)
    p = rng.random(n)
    y = (rng.random(n) < p ** power).astype(int)
    return y, p


def _multiclass(n=900, k=3, seed=0):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.full(k, 0.7), n)
    y = (rng.random(n)[:, None] > np.cumsum(P, axis=1)).sum(axis=1)
    return y, P


def _png(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=40)
    data = buf.getvalue()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000
    return data


def _segments(collection):
    """(x, low, high) of the vertical segments of a LineCollection."""
    seg = np.array(collection.get_segments())
    np.testing.assert_array_equal(seg[:, 0, 0], seg[:, 1, 0])  # vertical
    return seg[:, 0, 0], seg[:, 0, 1], seg[:, 1, 1]


def _check_bars(bars, curve):
    x = np.array([b.get_x() for b in bars])
    width = np.array([b.get_width() for b in bars])
    height = np.array([b.get_height() for b in bars])
    np.testing.assert_allclose(x, curve.bin_lower, rtol=0, atol=1e-15)
    np.testing.assert_allclose(x + width, curve.bin_upper, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(height, curve.counts)


def _legend_texts(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


# --------------------------------------------------------------------------------------------
# ReliabilityDisplay: what is drawn


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_binary_curve_band_and_counts_are_the_metric_data(strategy):
    y, p = _binary(power=1.6)
    w = np.random.default_rng(1).integers(1, 4, y.size).astype(float)
    y0, p0, w0 = y.copy(), p.copy(), w.copy()
    d = ReliabilityDisplay.from_predictions(y, p, n_bins=8, strategy=strategy, sample_weight=w,
                                            confidence_level=0.9, name="m")
    c = reliability_curve(y, p, n_bins=8, strategy=strategy, sample_weight=w,
                          confidence_level=0.9)
    # inputs untouched
    np.testing.assert_array_equal(y, y0)
    np.testing.assert_array_equal(p, p0)
    np.testing.assert_array_equal(w, w0)
    # the curve
    np.testing.assert_array_equal(d.line_.get_xdata(), c.prob_pred)
    np.testing.assert_array_equal(d.line_.get_ydata(), c.prob_true)
    np.testing.assert_array_equal(d.prob_pred, c.prob_pred)
    np.testing.assert_array_equal(d.counts, c.counts)
    # the Clopper-Pearson band: one vertical segment per bin, at the curve's intervals
    x, lo, hi = _segments(d.band_)
    np.testing.assert_array_equal(x, c.prob_pred)
    np.testing.assert_array_equal(lo, c.ci_low)
    np.testing.assert_array_equal(hi, c.ci_high)
    # the counts: one bar per bin spanning its edges, on the twin axis, tallest at a quarter
    assert d.counts_ax_ is not None and d.bars_.patches[0].axes is d.counts_ax_
    _check_bars(d.bars_, c)
    assert d.counts_ax_.get_ylim()[1] == pytest.approx(4 * c.counts.max())
    assert d.counts_ax_.get_ylabel() == "Count"
    # the diagonal, labels, legend
    np.testing.assert_array_equal(d.diagonal_.get_xydata(), [[0, 0], [1, 1]])
    assert d.ax_.get_xlabel() == "Mean predicted probability (positive class: 1)"
    assert d.ax_.get_ylabel() == "Fraction of positives (positive class: 1)"
    assert _legend_texts(d.ax_) == ["Perfectly calibrated", "m", "90% Clopper-Pearson interval"]
    assert d.figure_ is d.ax_.figure
    _png(d.figure_)


def test_string_labels_and_pos_label():
    y, p = _binary(power=1.3)
    names = np.where(y == 1, "yes", "no")
    d = ReliabilityDisplay.from_predictions(names, 1 - p, pos_label="no", n_bins=5)
    c = reliability_curve(names, 1 - p, pos_label="no", n_bins=5)
    np.testing.assert_array_equal(d.line_.get_ydata(), c.prob_true)
    assert "positive class: no" in d.ax_.get_xlabel()


def test_top_label_curve():
    y, P = _multiclass()
    d = ReliabilityDisplay.from_predictions(y, P, n_bins=6, band=None)
    c = reliability_curve(y, P, n_bins=6, mode="top_label")
    assert c.mode == "top_label"
    np.testing.assert_array_equal(d.line_.get_xdata(), c.prob_pred)
    np.testing.assert_array_equal(d.line_.get_ydata(), c.prob_true)
    _check_bars(d.bars_, c)
    assert d.band_ is None and d.bands_ == [None]
    assert d.ax_.get_xlabel().startswith("Confidence") and d.ax_.get_ylabel() == "Accuracy"
    # no band and no name: only the diagonal in the legend, no band artist on the axes
    assert _legend_texts(d.ax_) == ["Perfectly calibrated"]
    assert len(d.ax_.collections) == 0
    _png(d.figure_)


def test_classwise_one_curve_per_class_and_selection():
    y, P = _multiclass(k=4)
    d = ReliabilityDisplay.from_predictions(y, P, mode="classwise", n_bins=5, name="m",
                                            band="consistency", random_state=3,
                                            n_resamples=200)
    curves = reliability_curve(y, P, mode="classwise", n_bins=5)
    bands = consistency_bands(y, P, mode="classwise", n_bins=5, random_state=3, n_resamples=200)
    assert len(d.lines_) == len(d.bands_) == len(d.count_bars_) == 4 == len(d.curves)
    for line, band, bars, c, (lo, hi) in zip(d.lines_, d.bands_, d.count_bars_, curves, bands):
        np.testing.assert_array_equal(line.get_xdata(), c.prob_pred)
        np.testing.assert_array_equal(line.get_ydata(), c.prob_true)
        x, blo, bhi = _segments(band)
        np.testing.assert_array_equal(x, c.prob_pred)
        np.testing.assert_array_equal(blo, lo)
        np.testing.assert_array_equal(bhi, hi)
        _check_bars(bars, c)
    colors = {matplotlib.colors.to_hex(line.get_color()) for line in d.lines_}
    assert len(colors) == 4
    texts = _legend_texts(d.ax_)
    assert texts == ["Perfectly calibrated", "m (class 0)", "95% consistency band",
                     "m (class 1)", "m (class 2)", "m (class 3)"]
    _png(d.figure_)

    # one chosen class (and the consistency band of that class only)
    one = ReliabilityDisplay.from_predictions(y, P, mode="classwise", classes=2, n_bins=5,
                                              band="consistency", random_state=3,
                                              n_resamples=200)
    assert len(one.lines_) == 1 and one.line_.get_label() == "class 2"
    np.testing.assert_array_equal(one.line_.get_ydata(), curves[2].prob_true)
    np.testing.assert_array_equal(_segments(one.band_)[2], bands[2][1])
    two = ReliabilityDisplay.from_predictions(y, P, mode="classwise", classes=[3, 0], n_bins=5)
    assert [ln.get_label() for ln in two.lines_] == ["class 3", "class 0"]


def test_consistency_band_is_drawn_from_consistency_bands():
    y, p = _binary(power=2.0)
    d = ReliabilityDisplay.from_predictions(y, p, n_bins=6, band="consistency",
                                            n_resamples=300, random_state=7)
    lo, hi = consistency_bands(y, p, n_bins=6, n_resamples=300, random_state=7)
    x, blo, bhi = _segments(d.band_)
    np.testing.assert_array_equal(x, d.prob_pred)
    np.testing.assert_array_equal(blo, lo)
    np.testing.assert_array_equal(bhi, hi)
    np.testing.assert_array_equal(d.band_low, lo)
    assert d.band == "consistency"
    # the band is around the diagonal: it holds the bin's mean prediction
    assert np.all((lo <= d.prob_pred) & (d.prob_pred <= hi))
    # the same seed gives the same band, another seed a different one
    lo2, _ = consistency_bands(y, p, n_bins=6, n_resamples=300, random_state=7)
    lo3, _ = consistency_bands(y, p, n_bins=6, n_resamples=300, random_state=8)
    np.testing.assert_array_equal(lo, lo2)
    assert not np.array_equal(lo, lo3)


# --------------------------------------------------------------------------------------------
# The consistency band: brute force and coverage


def _exact_quantiles(q, w, level):
    """Inverted-CDF quantiles of the weighted frequency sum w y / sum w, y_i ~ Bernoulli(q_i),
    by enumerating all 2**n outcomes; also the CDF at the support points."""
    freqs, probs = [], []
    for ys in itertools.product((0, 1), repeat=q.size):
        ys = np.array(ys)
        freqs.append(np.dot(w, ys) / w.sum())
        probs.append(np.prod(np.where(ys == 1, q, 1 - q)))
    freqs, probs = np.array(freqs), np.array(probs)
    support = np.unique(freqs)
    cdf = np.array([probs[freqs <= s + 1e-12].sum() for s in support])
    alpha = 1 - level
    lo = support[np.argmax(cdf >= alpha / 2 - 1e-12)]
    hi = support[np.argmax(cdf >= 1 - alpha / 2 - 1e-12)]
    mass = probs[(freqs >= lo - 1e-12) & (freqs <= hi + 1e-12)].sum()
    return lo, hi, support, cdf, mass


@pytest.mark.parametrize("weights", [None, [1.0, 2.0, 1.0, 3.0, 0.5]])
def test_consistency_band_of_a_tiny_bin_matches_enumeration(weights):
    # one bin of five predictions: the band is the exact 95% range of the Poisson-binomial
    # (or weighted) frequency, checked against all 32 outcomes
    q = np.array([0.15, 0.3, 0.45, 0.6, 0.8])
    w = np.ones(5) if weights is None else np.asarray(weights)
    y = np.array([0, 1, 0, 1, 1])
    level = 0.9
    lo, hi, support, cdf, mass = _exact_quantiles(q, w, level)
    # precondition: no CDF value is within Monte Carlo reach of the thresholds
    for t in (0.05, 0.95):
        assert np.min(np.abs(cdf - t)) > 0.01
    blo, bhi = consistency_bands(y, q, n_bins=1, confidence_level=level, n_resamples=40000,
                                 random_state=0, sample_weight=weights)
    assert blo.shape == bhi.shape == (1,)
    assert blo[0] == pytest.approx(lo, abs=1e-12)
    assert bhi[0] == pytest.approx(hi, abs=1e-12)
    assert mass >= level
    # both ends are attainable frequencies
    assert np.min(np.abs(support - blo[0])) < 1e-12 and np.min(np.abs(support - bhi[0])) < 1e-12


def _coverage(n_seeds, n=500, power=1.0, n_resamples=400):
    inside = total = 0
    for seed in range(n_seeds):
        y, p = _binary(n=n, seed=seed, power=power)
        lo, hi = consistency_bands(y, p, n_bins=10, n_resamples=n_resamples,
                                   random_state=seed + 10_000)
        c = reliability_curve(y, p, n_bins=10)
        inside += int(np.sum((lo <= c.prob_true) & (c.prob_true <= hi)))
        total += lo.size
    return inside / total


def test_consistency_band_covers_a_calibrated_model_about_95_percent():
    # 200 bins of calibrated models: about 95% (a little more: the ends are attainable values)
    # of their frequencies fall in their band; a miscalibrated model's mostly do not
    frac = _coverage(20)
    assert 0.92 <= frac <= 0.995
    assert _coverage(5, power=2.0) < 0.5


@pytest.mark.slow
def test_consistency_band_coverage_many_seeds():
    frac = _coverage(300, n_resamples=1000)
    assert 0.945 <= frac <= 0.985


def test_consistency_band_large_bins_match_the_normal_approximation():
    # with many samples per bin the frequency of a calibrated model is nearly normal with
    # variance sum q(1-q) / n^2 per bin: the band's half-width is 1.96 of its sd
    rng = np.random.default_rng(5)
    p = rng.random(12000)
    y = (rng.random(12000) < p).astype(int)
    lo, hi = consistency_bands(y, p, n_bins=4, n_resamples=1500, random_state=1)
    c = reliability_curve(y, p, n_bins=4)
    cells = np.minimum((p * 4).astype(int), 3)
    sd = np.array([np.sqrt(np.sum(p[cells == k] * (1 - p[cells == k]))) / np.sum(cells == k)
                   for k in range(4)])
    np.testing.assert_allclose((hi - lo) / 2, 1.959964 * sd, rtol=0.12)
    np.testing.assert_allclose((hi + lo) / 2, c.prob_pred, atol=0.5 * sd.max())


def test_consistency_bands_top_label_and_min_bin_size_align_with_the_curve():
    y, P = _multiclass(n=400)
    c = reliability_curve(y, P, n_bins=12, min_bin_size=10)
    lo, hi = consistency_bands(y, P, n_bins=12, min_bin_size=10, random_state=0,
                               n_resamples=200)
    assert lo.shape == hi.shape == c.prob_pred.shape
    assert np.all(lo <= hi)
    assert np.all((lo <= c.prob_pred + 1e-12) & (c.prob_pred - 1e-12 <= hi))
    with pytest.raises(ValueError, match="n_resamples"):
        consistency_bands(y, P, n_resamples=0)
    with pytest.raises(ValueError, match="random_state"):
        consistency_bands(y, P, random_state="x")


# --------------------------------------------------------------------------------------------
# Several models, estimators


def test_several_models_share_one_axis():
    y, p = _binary(power=1.8)
    q = p ** 1.8
    a = ReliabilityDisplay.from_predictions(y, p, n_bins=5, name="raw")
    b = ReliabilityDisplay.from_predictions(y, q, n_bins=5, name="recalibrated", ax=a.ax_,
                                            band="consistency", random_state=0,
                                            n_resamples=200)
    ax = a.ax_
    assert b.ax_ is ax
    assert len(ax.get_lines()) == 3  # one diagonal, two curves
    assert a.line_.get_color() != b.line_.get_color()
    assert _legend_texts(ax) == ["Perfectly calibrated", "raw", "95% Clopper-Pearson interval",
                                 "recalibrated", "95% consistency band"]
    # one shared twin axis holds both histograms, scaled to the larger one
    assert b.counts_ax_ is a.counts_ax_
    assert len(ax.figure.axes) == 2
    assert len(a.counts_ax_.patches) == len(a.counts) + len(b.counts)
    top = max(a.counts.max(), b.counts.max())
    assert a.counts_ax_.get_ylim()[1] == pytest.approx(4 * top)
    _png(ax.figure)


def test_shared_band_label_gets_one_grey_legend_entry():
    y, P = _multiclass()
    d = ReliabilityDisplay.from_predictions(y, P, mode="classwise", n_bins=5)
    texts = _legend_texts(d.ax_)
    assert texts.count("95% Clopper-Pearson interval") == 1
    handle = d.ax_.get_legend().legend_handles[texts.index("95% Clopper-Pearson interval")]
    assert matplotlib.colors.to_hex(handle.get_color()) == matplotlib.colors.to_hex("grey")


def test_from_estimator_equals_from_predictions():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = np.where(X[:, 0] + rng.normal(size=300) > 0, "b", "a")
    model = make_pipeline(StandardScaler(), LogisticRegression()).fit(X, y)
    d1 = ReliabilityDisplay.from_estimator(model, X, y, n_bins=6)
    d2 = ReliabilityDisplay.from_predictions(y, model.predict_proba(X), n_bins=6)
    np.testing.assert_array_equal(d1.line_.get_xydata(), d2.line_.get_xydata())
    np.testing.assert_array_equal(d1.counts, d2.counts)
    assert d1.line_.get_label() == "LogisticRegression"
    assert "positive class: b" in d1.ax_.get_xlabel()
    s1 = SmoothReliabilityDisplay.from_estimator(model, X, y, name="lr", n_points=51)
    s2 = SmoothReliabilityDisplay.from_predictions(y, model.predict_proba(X), n_points=51)
    np.testing.assert_array_equal(s1.line_.get_ydata(), s2.line_.get_ydata())
    assert s1.line_.get_label().startswith("lr (smECE = ")


def test_multiclass_estimator_classwise():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(450, 2))
    y = np.digitize(X[:, 0] + 0.5 * rng.normal(size=450), [-0.5, 0.5])
    model = LogisticRegression().fit(X, y)
    d = ReliabilityDisplay.from_estimator(model, X, y, mode="classwise", n_bins=5)
    curves = reliability_curve(y, model.predict_proba(X), mode="classwise", n_bins=5)
    assert len(d.lines_) == 3
    for line, c in zip(d.lines_, curves):
        np.testing.assert_array_equal(line.get_ydata(), c.prob_true)
    assert [ln.get_label() for ln in d.lines_] == [
        "LogisticRegression (class 0)", "LogisticRegression (class 1)",
        "LogisticRegression (class 2)"]


def test_plot_of_a_constructed_display_and_options():
    y, p = _binary()
    c = reliability_curve(y, p, n_bins=5)
    d = ReliabilityDisplay(c, estimator_name="m").plot(show_counts=False, ref_line=False,
                                                       color="red", marker="o")
    assert d.bars_ is None and d.counts_ax_ is None and d.band_ is None
    assert d.diagonal_ is None and len(d.ax_.get_lines()) == 1
    assert d.line_.get_color() == "red" and d.line_.get_marker() == "o"
    assert len(d.figure_.axes) == 1
    # the same display drawn again on a given axes, with a new name
    fig, ax = plt.subplots()
    d.plot(ax=ax, name="again")
    assert d.ax_ is ax and d.line_.get_label() == "again"
    # a band needs its data
    with pytest.raises(ValueError, match="band_low"):
        ReliabilityDisplay(c, band="clopper-pearson").plot()


# --------------------------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"mode": "bogus"}, ValueError, "mode"),
    ({"band": "wilson"}, ValueError, "band"),
    ({"band": "bootstrap"}, ValueError, "band"),
    ({"ax": "not an axes"}, TypeError, "ax"),
    ({"name": 3}, TypeError, "name"),
    ({"show_counts": "yes"}, TypeError, "show_counts"),
    ({"n_resamples": 0}, ValueError, "n_resamples"),
    ({"random_state": -1}, ValueError, "random_state"),
    ({"confidence_level": 1.0}, ValueError, "confidence_level"),
    ({"classes": 1}, ValueError, "classes"),
    ({"mode": "classwise", "classes": 7}, ValueError, "classes"),
    ({"n_bins": 0}, ValueError, "n_bins"),
])
def test_reliability_display_errors_draw_nothing(kwargs, exc, match):
    y, p = _binary(n=50)
    before = plt.get_fignums()
    with pytest.raises(exc, match=match):
        ReliabilityDisplay.from_predictions(y, p, **kwargs)
    assert plt.get_fignums() == before


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"mode": "classwise"}, ValueError, "mode"),
    ({"band": "clopper-pearson"}, ValueError, "band"),
    ({"ax": 1}, TypeError, "ax"),
    ({"name": ["a"]}, TypeError, "name"),
    ({"show_density": 1}, TypeError, "show_density"),
    ({"bandwidth": 2.0}, ValueError, "bandwidth"),
    ({"confidence_level": 0.0}, ValueError, "confidence_level"),
])
def test_smooth_display_errors_draw_nothing(kwargs, exc, match):
    y, p = _binary(n=50)
    before = plt.get_fignums()
    with pytest.raises(exc, match=match):
        SmoothReliabilityDisplay.from_predictions(y, p, **kwargs)
    assert plt.get_fignums() == before


def test_estimator_without_predict_proba():
    X = np.arange(20.0)[:, None]
    y = (X[:, 0] > 10).astype(int)
    reg = LinearRegression().fit(X, y)
    with pytest.raises(TypeError, match="predict_proba"):
        ReliabilityDisplay.from_estimator(reg, X, y)
    with pytest.raises(TypeError, match="predict_proba"):
        SmoothReliabilityDisplay.from_estimator(reg, X, y)
    with pytest.raises(ValueError, match="not fitted"):
        ReliabilityDisplay.from_estimator(LogisticRegression(), X, y)


# --------------------------------------------------------------------------------------------
# SmoothReliabilityDisplay


def test_smooth_curve_density_and_smece_are_the_metric_data():
    y, p = _binary(n=800, power=1.7)
    d = SmoothReliabilityDisplay.from_predictions(y, p, name="m", bandwidth=0.05)
    c = smooth_reliability_curve(y, p, bandwidth=0.05)
    np.testing.assert_array_equal(d.line_.get_xdata(), c.grid)
    np.testing.assert_array_equal(d.line_.get_ydata(), c.frequency)
    np.testing.assert_array_equal(d.density_.get_xdata(), c.grid)
    np.testing.assert_array_equal(d.density_.get_ydata(), c.density)
    assert d.density_.axes is d.density_ax_ is not d.ax_
    assert d.density_ax_.get_ylim()[1] == pytest.approx(4 * c.density.max())
    value = smooth_ece(y, p, bandwidth=0.05)
    assert d.smece == pytest.approx(value, rel=1e-12)
    assert d.line_.get_label() == f"m (smECE = {value:.3f})"
    assert d.band_ is None
    assert d.ax_.get_ylabel() == "Fraction of positives (positive class: 1)"
    # the automatic bandwidth: the legend's smECE is the fixed point
    auto = SmoothReliabilityDisplay.from_predictions(y, p, ax=d.ax_, name="auto")
    assert auto.smece == pytest.approx(auto.curve.bandwidth, rel=1e-6)
    assert len(d.ax_.get_lines()) == 3 and auto.density_ax_ is d.density_ax_
    _png(d.figure_)


def _band_vertices(band, n):
    v = band.get_paths()[0].vertices
    return v[1:n + 1], v[n + 2:2 * n + 2][::-1]


@pytest.mark.parametrize("band", ["consistency", "bootstrap"])
def test_smooth_bands(band):
    y, p = _binary(n=600, seed=2)
    d = SmoothReliabilityDisplay.from_predictions(y, p, bandwidth=0.08, n_points=41, band=band,
                                                  n_resamples=200, random_state=0)
    c = d.curve
    assert np.all(np.isfinite(c.frequency))
    low_v, high_v = _band_vertices(d.band_, c.grid.size)
    np.testing.assert_array_equal(low_v, np.column_stack([c.grid, d.band_low]))
    np.testing.assert_array_equal(high_v, np.column_stack([c.grid, d.band_high]))
    assert np.all(d.band_low <= d.band_high)
    centre = c.mean_predicted if band == "consistency" else c.frequency
    # a calibrated model: the band holds the centre (calibrated frequency or observed curve)
    inside = np.mean((d.band_low <= centre) & (centre <= d.band_high))
    assert inside >= 0.9
    assert _legend_texts(d.ax_)[-1] == f"95% {band} band"
    # a band's width shrinks like 1 / sqrt(n)
    y4, p4 = _binary(n=2400, seed=3)
    d4 = SmoothReliabilityDisplay.from_predictions(y4, p4, bandwidth=0.08, n_points=41,
                                                   band=band, n_resamples=200, random_state=0,
                                                   show_density=False)
    ratio = np.median(d4.band_high - d4.band_low) / np.median(d.band_high - d.band_low)
    assert 0.4 < ratio < 0.6
    _png(d.figure_)


def test_smooth_consistency_band_flags_a_miscalibrated_model():
    y, p = _binary(n=1500, power=2.0, seed=4)
    d = SmoothReliabilityDisplay.from_predictions(y, p, bandwidth=0.08, n_points=41,
                                                  band="consistency", n_resamples=60,
                                                  random_state=0)
    outside = (d.curve.frequency < d.band_low) | (d.curve.frequency > d.band_high)
    assert outside.mean() > 0.5


def test_smooth_top_label_and_string_labels():
    y, P = _multiclass()
    names = np.array(["a", "b", "c"])[y]
    d = SmoothReliabilityDisplay.from_predictions(names, P, n_points=31)
    c = smooth_reliability_curve(names, P, n_points=31, mode="top_label")
    # drawn where at least 5 predictions support it (confidences below 1/3 cannot occur)
    supported = names.size * c.density * 2 * c.bandwidth >= 5
    np.testing.assert_array_equal(d.line_.get_ydata(), np.where(supported, c.frequency, np.nan))
    assert supported[c.grid > 0.5].all()
    assert d.mode == "top_label" and d.ax_.get_ylabel() == "Accuracy"
    assert d.line_.get_label() == f"smECE = {smooth_ece(names, P):.3f}"
    d2 = SmoothReliabilityDisplay.from_predictions(names[:300] == "a", P[:300, 0], n_points=31,
                                                   show_density=False, ref_line=False)
    assert d2.density_ is None and d2.density_ax_ is None and d2.diagonal_ is None
    assert "positive class: True" in d2.ax_.get_xlabel()


def test_constructed_display_band_shape_is_checked():
    y, p = _binary()
    c = reliability_curve(y, p, n_bins=5)
    with pytest.raises(ValueError, match="one entry per bin"):
        ReliabilityDisplay(c, band="consistency", band_low=c.ci_low[:2],
                           band_high=c.ci_high[:2]).plot()
    with pytest.raises(ValueError, match="band"):
        ReliabilityDisplay(c, band="other", band_low=c.ci_low, band_high=c.ci_high).plot()
    with pytest.raises(TypeError, match="curve"):
        ReliabilityDisplay([1, 2]).plot()


def test_panels_sharing_x_keep_their_own_count_axes():
    y, p = _binary()
    fig, axes = plt.subplots(1, 2, sharex=True, sharey=True)
    a = ReliabilityDisplay.from_predictions(y, p, n_bins=5, ax=axes[0])
    b = ReliabilityDisplay.from_predictions(y, p ** 2, n_bins=4, ax=axes[1])
    assert a.counts_ax_ is not b.counts_ax_
    assert len(a.counts_ax_.patches) == 5 and len(b.counts_ax_.patches) == 4
    assert len(fig.axes) == 4
    # drawing again on the first panel reuses its twin
    c = ReliabilityDisplay.from_predictions(y, p, n_bins=3, ax=axes[0])
    assert c.counts_ax_ is a.counts_ax_ and len(a.counts_ax_.patches) == 8
    _png(fig)


def test_binned_and_smooth_diagrams_on_one_axis_both_show_their_histograms():
    y, p = _binary()
    a = ReliabilityDisplay.from_predictions(y, p, n_bins=5, name="binned")
    s = SmoothReliabilityDisplay.from_predictions(y, p, name="smooth", ax=a.ax_)
    assert a.counts_ax_ is not s.density_ax_
    # the curves' axes is drawn in front of both twins; only the first twin paints a
    # background, so the second does not hide the first one's bars
    assert a.ax_.get_zorder() > a.counts_ax_.get_zorder()
    assert a.ax_.get_zorder() > s.density_ax_.get_zorder()
    assert not a.ax_.patch.get_visible()
    assert a.counts_ax_.patch.get_visible() and not s.density_ax_.patch.get_visible()
    assert _legend_texts(a.ax_)[:2] == ["Perfectly calibrated", "binned"]
    _png(a.figure_)


def test_smooth_display_shades_where_few_predictions_support_the_curve():
    """Where fewer than 5 predictions lie within one bandwidth (n * density * 2 * sigma < 5) the
    curve swings freely: that range is shaded, and nowhere else."""
    rng = np.random.default_rng(7)
    p = np.concatenate([rng.uniform(0.6, 1.0, 400), [0.1, 0.3]])   # almost nothing below 0.5
    y = (rng.random(p.size) < p).astype(int)
    d = SmoothReliabilityDisplay.from_predictions(y, p, bandwidth=0.03, n_points=201)
    c = d.curve
    sparse = p.size * c.density * 2 * c.bandwidth < 5
    assert sparse[c.grid < 0.45].all() and not sparse[(c.grid > 0.65) & (c.grid < 0.95)].any()
    shaded_x = np.unique(np.concatenate([path.vertices[:, 0]
                                         for path in d.sparse_.get_paths()]))
    assert shaded_x.min() == pytest.approx(c.grid[sparse].min())
    assert shaded_x.max() <= c.grid[sparse].max() + 1e-12
    assert not ((shaded_x > 0.65) & (shaded_x < 0.95)).any()
    assert "predictions within one bandwidth" in d.sparse_.get_label()
    # the curve is drawn only where supported, faintly elsewhere
    # (tests/plotting/test_figure_layout.py)
    np.testing.assert_array_equal(d.line_.get_ydata(), np.where(sparse, np.nan, c.frequency))
    np.testing.assert_array_equal(d.unsupported_.get_ydata()[sparse], c.frequency[sparse])
    plt.close(d.figure_)


def test_count_axis_ticks_stop_at_the_tallest_bar():
    rng = np.random.default_rng(8)
    p = rng.uniform(0, 1, 450)
    y = (rng.random(450) < p).astype(int)
    d = ReliabilityDisplay.from_predictions(y, p, n_bins=10)
    ticks = d.counts_ax_.get_yticks()
    assert ticks.size >= 2 and ticks.max() <= d.counts.max()
    assert d.counts_ax_.get_ylim()[1] > 3 * d.counts.max()     # bars still in the lower quarter
    plt.close(d.figure_)
