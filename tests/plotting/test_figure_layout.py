"""The figures' layout: the count axis label beside its ticks, legends clear of the count
histograms, the smooth curve faint where fewer than five predictions support it."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
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


def _extent(artist, renderer):
    return artist.get_window_extent(renderer)


def _overlap(a, b):
    """True if two display-space boxes share an area (touching edges do not count)."""
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


# --------------------------------------------------------------------------------------------
# Figures


def _row_of_two(draw_left, draw_right):
    fig, axes = plt.subplots(1, 2, figsize=(11, 5))
    left = draw_left(axes[0])
    right = draw_right(axes[1])
    fig.tight_layout()
    fig.canvas.draw()
    return fig, axes, left, right


def _twin_label_checks(fig, twin, neighbour, renderer):
    label = _extent(twin.yaxis.label, renderer)
    # inside the figure
    fig_box = fig.bbox
    assert fig_box.x0 <= label.x0 and label.x1 <= fig_box.x1
    assert fig_box.y0 <= label.y0 and label.y1 <= fig_box.y1
    # beside its ticks: the label's middle lies within the height spanned by the tick labels
    ticks = [_extent(t, renderer) for t in twin.get_yticklabels() if t.get_text()]
    assert ticks
    low, high = min(t.y0 for t in ticks), max(t.y1 for t in ticks)
    middle = 0.5 * (label.y0 + label.y1)
    assert low - 1 <= middle <= high + 1, (label, low, high)
    # and right of its tick labels, close to them (not half a panel away)
    assert label.x0 >= max(t.x1 for t in ticks) - 1
    assert label.x0 - max(t.x1 for t in ticks) < 30
    if neighbour is not None:
        # not on the neighbouring panel's own axis label or tick labels
        assert not _overlap(label, _extent(neighbour.yaxis.label, renderer))
        for t in neighbour.get_yticklabels():
            if t.get_text():
                assert not _overlap(label, _extent(t, renderer))


def test_count_label_sits_by_its_ticks_and_clear_of_the_next_panel():
    y, P = _multiclass(n=1500)
    fig, axes, left, right = _row_of_two(
        lambda ax: ReliabilityDisplay.from_predictions(y, P, n_bins=10, name="a", ax=ax),
        lambda ax: SmoothReliabilityDisplay.from_predictions(y, P, name="a", ax=ax))
    renderer = fig.canvas.get_renderer()
    assert left.counts_ax_.get_ylabel() == "Count"
    _twin_label_checks(fig, left.counts_ax_, axes[1], renderer)
    _twin_label_checks(fig, right.density_ax_, None, renderer)


def test_twin_label_of_a_single_default_figure_is_inside_it():
    y, p = _binary(n=2000)
    for d, twin in [(ReliabilityDisplay.from_predictions(y, p), "counts_ax_"),
                    (SmoothReliabilityDisplay.from_predictions(y, p), "density_ax_")]:
        d.figure_.canvas.draw()
        _twin_label_checks(d.figure_, getattr(d, twin), None, d.figure_.canvas.get_renderer())


def _bar_extents(bars, renderer):
    return [_extent(b, renderer) for b in bars if b.get_height() > 0]


@pytest.mark.parametrize("power", [0.3, 0.5, 1.0, 2.0, 4.0])
def test_legend_does_not_cover_the_count_histogram(power):
    # an under-confident model (curve above the diagonal) left "best" the lower right corner,
    # over the bars of the twin axis, which "best" does not see
    y, p = _binary(n=3000, power=power, seed=3)
    d = ReliabilityDisplay.from_predictions(y, p, name="a model with a long name", n_bins=10)
    ReliabilityDisplay.from_predictions(y, p ** 1.3, name="another model", n_bins=10,
                                        ax=d.ax_, band="consistency", random_state=0,
                                        n_resamples=50)
    d.figure_.canvas.draw()
    renderer = d.figure_.canvas.get_renderer()
    legend = _extent(d.ax_.get_legend(), renderer)
    for bars in d.count_bars_:
        for bar in _bar_extents(bars, renderer):
            assert not _overlap(legend, bar), (legend, bar)
    # the same for the density of the smooth diagram
    s = SmoothReliabilityDisplay.from_predictions(y, p, name="a model with a long name")
    s.figure_.canvas.draw()
    renderer = s.figure_.canvas.get_renderer()
    legend = _extent(s.ax_.get_legend(), renderer)
    top = s.density_ax_.transData.transform((0.0, float(np.max(s.curve.density))))[1]
    assert legend.y0 >= top - 1


def test_legend_placed_above_the_histogram_still_avoids_the_curve():
    y, p = _binary(n=3000, power=0.4, seed=1)
    d = ReliabilityDisplay.from_predictions(y, p, name="m", band=None)
    d.figure_.canvas.draw()
    renderer = d.figure_.canvas.get_renderer()
    legend = _extent(d.ax_.get_legend(), renderer)
    xy = d.ax_.transData.transform(np.column_stack([d.line_.get_xdata(), d.line_.get_ydata()]))
    inside = ((xy[:, 0] > legend.x0) & (xy[:, 0] < legend.x1) & (xy[:, 1] > legend.y0)
              & (xy[:, 1] < legend.y1))
    assert not inside.any()


def test_without_counts_the_legend_may_use_the_whole_plot():
    y, p = _binary(n=500)
    d = ReliabilityDisplay.from_predictions(y, p, show_counts=False)
    assert d.ax_.get_legend().get_bbox_to_anchor().bounds == pytest.approx(d.ax_.bbox.bounds)


def test_smooth_curve_is_faint_where_fewer_than_five_predictions_support_it():
    """Where fewer than 5 predictions lie within one bandwidth the curve swings from 0 to 1 on a
    handful of samples: the curve (line_) is not drawn there, only a faint thin line."""
    rng = np.random.default_rng(7)
    p = np.concatenate([rng.uniform(0.6, 1.0, 400), [0.05, 0.1, 0.3]])
    y = (rng.random(p.size) < p).astype(int)
    y[-3:] = [1, 0, 1]      # the isolated points pull the curve up and down
    d = SmoothReliabilityDisplay.from_predictions(y, p, bandwidth=0.03, n_points=201,
                                                  name="m")
    c = d.curve
    sparse = p.size * c.density * 2 * c.bandwidth < 5
    assert sparse.any() and (~sparse).any()
    drawn = np.asarray(d.line_.get_ydata(), dtype=float)
    assert np.isnan(drawn[sparse]).all()
    np.testing.assert_array_equal(drawn[~sparse], c.frequency[~sparse])
    faint = np.asarray(d.unsupported_.get_ydata(), dtype=float)
    np.testing.assert_array_equal(faint[sparse], c.frequency[sparse])
    assert d.unsupported_.get_alpha() <= 0.3
    assert d.unsupported_.get_linewidth() < d.line_.get_linewidth()
    assert d.unsupported_.get_color() == d.line_.get_color()
    # the faint part is not in the legend; the curve's entry is
    texts = [t.get_text() for t in d.ax_.get_legend().get_texts()]
    assert sum(t.startswith("m (smECE") for t in texts) == 1
    # the two parts meet: every supported point next to a sparse one is on both lines
    edge = ~sparse & (np.r_[sparse[1:], False] | np.r_[False, sparse[:-1]])
    np.testing.assert_array_equal(faint[edge], c.frequency[edge])


def test_smooth_curve_fully_supported_has_no_faint_part():
    y, p = _binary(n=4000, seed=2)
    d = SmoothReliabilityDisplay.from_predictions(y, p, bandwidth=0.05)
    assert d.unsupported_ is None and d.sparse_ is None
    np.testing.assert_array_equal(d.line_.get_ydata(), d.curve.frequency)
    # a Display built without n_samples does not mask anything
    bare = SmoothReliabilityDisplay(d.curve).plot()
    assert bare.unsupported_ is None
    np.testing.assert_array_equal(bare.line_.get_ydata(), d.curve.frequency)
