"""Reliability diagrams of classifiers: binned (:class:`ReliabilityDisplay`) and smooth
(:class:`SmoothReliabilityDisplay`).

Both draw the data of a metric function -- :func:`skcalib.reliability_curve` (with
:func:`skcalib._problems.reliability.consistency_bands` for consistency bars) and
:func:`skcalib.smooth_reliability_curve` -- against the diagonal of perfect calibration, with
the number of samples (bin counts, or the density of the predictions) on a twin axis whose
histogram fills the lower quarter of the plot.
"""

import warnings

import numpy as np

from .._validation import (
    check_confidence_level,
    check_bool,
    check_labels_and_probabilities,
    check_n_resamples,
    check_option,
    check_random_state_param,
    check_rng,
    check_work_memory,
    pos_index,
)
from .._problems.modes import binary_problem, resolve_mode
from .._problems.reliability import consistency_bands
from ..metrics import ReliabilityCurve, reliability_curve
from ..metrics import SmoothReliabilityCurve, smooth_ece, smooth_reliability_curve
from ._base import (check_display_array, check_display_number, check_display_option,
                    check_kwargs, check_name, check_rows, diagonal, draw_with, estimator_name,
                    get_axes, merge_style, predict_proba_of, unused_kwargs, user_names, check_ax)

__all__ = ["ReliabilityDisplay", "SmoothReliabilityDisplay"]

_BANDS = ("clopper-pearson", "consistency")
_SMOOTH_BANDS = ("bootstrap", "consistency")
_BAND_GID = "skcalib-band"
_COUNTS_LABEL = "skcalib-counts"
_DENSITY_LABEL = "skcalib-density"
_HISTOGRAM_SHARE = 0.25  # the count histogram fills the lower quarter of the plot
#: from_estimator passes its ``y`` and the model's probabilities on ``X`` to the metrics
_ESTIMATOR_NAMES = {"y_true": "y", "y_proba": "the estimator's predict_proba(X)"}


# --------------------------------------------------------------------------------------------
# Shared drawing helpers.


def _find_twin(ax, label):
    """The twin axes of ``ax`` named ``label`` (shared x, the same place), or None."""
    here = ax.get_position().bounds
    for other in ax.figure.axes:
        # the twin of this axes: same label, shared x and the same place (the axes of a grid
        # with sharex=True share x too, but sit elsewhere)
        if other is not ax and other.get_label() == label and \
                ax.get_shared_x_axes().joined(ax, other) and \
                np.allclose(other.get_position().bounds, here):
            return other
    return None


def _twin(ax, label, ylabel):
    """The twin axes (shared x, own y on the right) holding the histograms of ``ax``, created
    on first use; ``ax`` is put in front of it so that curves are drawn over the bars.

    The twin's axis label sits beside its ticks, in the lower ``_HISTOGRAM_SHARE`` of the
    plot where the histogram is (centred on the axis, it floated far above its ticks and, in
    a row of plots, next to the neighbouring plot's own label)."""
    twin = _find_twin(ax, label)
    if twin is not None:
        return twin
    twin = ax.twinx()
    twin.set_label(label)
    twin.set_ylabel(ylabel)
    twin.yaxis.label.set_y(_HISTOGRAM_SHARE / 2.0)  # axes fraction; x follows the tick labels
    twin.set_zorder(ax.get_zorder() - 1)
    if ax.patch.get_visible():  # the first twin takes over the background of ax
        twin.patch.set_visible(True)
        twin.patch.set_facecolor(ax.get_facecolor())
        ax.patch.set_visible(False)
    return twin


def _scale_twin(twin, heights):
    """Let the tallest histogram take the lower ``_HISTOGRAM_SHARE`` of the plot."""
    top = max((float(np.nanmax(h)) for h in heights if np.size(h)), default=0.0)
    twin.set_ylim(0.0, top / _HISTOGRAM_SHARE if top > 0 else 1.0)
    if top > 0:
        # ticks only where the histogram is (up to its tallest bar), not up the whole axis
        from matplotlib.ticker import MaxNLocator

        ticks = MaxNLocator(nbins=3).tick_values(0.0, top)
        twin.set_yticks([t for t in ticks if 0.0 <= t <= top * (1 + 1e-9)])


def _legend(ax):
    """A legend with one entry per label: a band label shared by several models (or classes)
    is shown once, in grey."""
    handles, labels = ax.get_legend_handles_labels()
    seen = {}
    for h, lab in zip(handles, labels):
        seen.setdefault(lab, []).append(h)
    shown = []
    for lab, hs in seen.items():
        h = hs[0]
        if len(hs) > 1 and h.get_gid() == _BAND_GID:
            from matplotlib.collections import LineCollection
            from matplotlib.lines import Line2D
            from matplotlib.patches import Patch

            if isinstance(h, LineCollection):
                h = Line2D([], [], color="grey", linewidth=float(h.get_linewidths()[0]),
                           alpha=h.get_alpha())
            else:
                h = Patch(facecolor="grey", alpha=h.get_alpha(), linewidth=0)
        shown.append(h)
    kw = {}
    if any(_find_twin(ax, lab) is not None for lab in (_COUNTS_LABEL, _DENSITY_LABEL)):
        # "best" only avoids the artists of ax, not the histogram on its twin: the legend is
        # placed in the part of the plot above the histogram
        kw = {"bbox_to_anchor": (0.0, _HISTOGRAM_SHARE, 1.0, 1.0 - _HISTOGRAM_SHARE),
              "bbox_transform": ax.transAxes}
    ax.legend(shown, list(seen), loc="best", fontsize="small", **kw)


def _finish(ax, xlabel, ylabel):
    ax.set_xlim(-0.01, 1.01)
    ax.set_ylim(-0.01, 1.01)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    _legend(ax)


def _axis_labels(mode, label):
    if mode == "binary":
        suffix = f" (positive class: {label})"
        return "Mean predicted probability" + suffix, "Fraction of positives" + suffix
    if mode == "top_label":
        return "Confidence (top-label probability)", "Accuracy"
    return "Mean predicted probability of the class", "Observed frequency of the class"


def _percent(level):
    return f"{100.0 * level:g}%"


# --------------------------------------------------------------------------------------------
# The binned reliability diagram.


class ReliabilityDisplay:
    """Reliability diagram: per bin, the observed frequency against the mean prediction.

    Draws the data of :func:`skcalib.reliability_curve` -- one curve for a binary or top-label
    problem, one per class for a class-wise one -- against the diagonal of perfect calibration,
    with

    * the **bin counts** as a histogram on a twin axis (right-hand scale; the tallest bar fills
      the lower quarter of the plot), one translucent bar per bin spanning its edges, so that a
      point backed by a handful of samples is seen as such;
    * a **band** per bin: ``"clopper-pearson"`` draws the curve's binomial interval of the
      observed frequency (``ci_low`` to ``ci_high``) as a thin vertical bar through each point;
      ``"consistency"`` draws Broecker and Smith's consistency bar -- the range of frequencies a
      *calibrated* model with the bin's own predictions would show
      (:func:`skcalib._problems.reliability.consistency_bands`) -- as a wide translucent bar
      around the diagonal: a point outside its bar is a bin where the model is miscalibrated.

    Build it with :meth:`from_predictions` or :meth:`from_estimator`; several models go on one
    axis by passing the same ``ax`` (each adds its curve, bars and legend entry).
    The constructor only stores its arguments (as scikit-learn's Displays do); :meth:`plot`
    checks them before drawing and refuses bad data (lengths that disagree, NaN, unsorted
    edges, levels outside (0, 1), ...) with a ``ValueError`` naming the parameter.

    Parameters
    ----------
    curve : ReliabilityCurve or list of ReliabilityCurve
        The data: one curve, or one per class (``mode="classwise"``).
    band : {"clopper-pearson", "consistency"} or None, default=None
        The kind of band in ``band_low`` and ``band_high``.
    band_low, band_high : ndarray of shape (n_kept,) or list of them, default=None
        The band's ends per bin (a list, one pair per curve, for a list of curves).
    confidence_level : float, default=0.95
        Level of the band (for the legend).
    estimator_name : str, default=None
        Name of the model in the legend.

    Attributes
    ----------
    curves : list of ReliabilityCurve
        The curves (one entry unless class-wise).
    prob_pred, prob_true, counts : ndarray or list of ndarray
        The curve's mean predictions, observed frequencies and bin counts (lists for a list of
        curves).
    ax_ : matplotlib Axes
        The axes of the diagram.
    figure_ : matplotlib Figure
    line_ : matplotlib Line2D
        The (first) reliability curve.
    lines_ : list of Line2D
        One per curve.
    band_ : matplotlib LineCollection or None
        The (first) curve's band: one vertical segment per bin, from its low to its high end.
    bands_ : list of LineCollection or None
    bars_ : matplotlib BarContainer or None
        The (first) curve's count histogram: one bar per bin, from ``bin_lower`` to
        ``bin_upper``, of height ``counts``.
    count_bars_ : list of BarContainer or None
    counts_ax_ : matplotlib Axes or None
        The twin axes of the count histograms.
    diagonal_ : Line2D or None
        The line of perfect calibration.

    See Also
    --------
    skcalib.reliability_curve : the data of the diagram.
    SmoothReliabilityDisplay : the smooth reliability curve, without bins.
    sklearn.calibration.CalibrationDisplay : the binary diagram without counts or bands.

    References
    ----------
    J. Broecker and L. A. Smith. Increasing the reliability of reliability diagrams. Weather
    and Forecasting, 22(3):651-661, 2007.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from skcalib import reliability_curve
    >>> from skcalib.plotting import ReliabilityDisplay
    >>> rng = np.random.default_rng(0)
    >>> p = rng.random(1000)
    >>> y = (rng.random(1000) < p ** 1.5).astype(int)
    >>> display = ReliabilityDisplay.from_predictions(y, p, n_bins=5, name="model")
    >>> display.line_.get_ydata().round(2)
    array([0.05, 0.18, 0.41, 0.59, 0.88])
    >>> curve = reliability_curve(y, p, n_bins=5)
    >>> bool(np.array_equal(display.line_.get_ydata(), curve.prob_true))
    True
    >>> display.counts, [int(bar.get_height()) for bar in display.bars_]
    (array([193, 180, 208, 207, 212]), [193, 180, 208, 207, 212])
    >>> display = ReliabilityDisplay.from_predictions(
    ...     y, p ** 1.5, n_bins=5, name="recalibrated", band="consistency", random_state=0,
    ...     ax=display.ax_)
    >>> [t.get_text() for t in display.ax_.get_legend().get_texts()]
    ['Perfectly calibrated', 'model', '95% Clopper-Pearson interval', 'recalibrated', \
'95% consistency band']
    """

    def __init__(self, curve, *, band=None, band_low=None, band_high=None,
                 confidence_level=0.95, estimator_name=None):
        self.curve = curve
        self.band = band
        self.band_low = band_low
        self.band_high = band_high
        self.confidence_level = confidence_level
        self.estimator_name = estimator_name

    @property
    def curves(self):
        """The curves as a list (one entry unless class-wise)."""
        return list(self.curve) if isinstance(self.curve, (list, tuple)) else [self.curve]

    def _per_curve(self, attr):
        values = [getattr(c, attr) for c in self.curves]
        return values if isinstance(self.curve, (list, tuple)) else values[0]

    @property
    def prob_pred(self):
        """Mean prediction of each bin (a list of arrays for several curves)."""
        return self._per_curve("prob_pred")

    @property
    def prob_true(self):
        """Observed frequency of each bin (a list of arrays for several curves)."""
        return self._per_curve("prob_true")

    @property
    def counts(self):
        """Number of samples of each bin (a list of arrays for several curves)."""
        return self._per_curve("counts")

    def _bands(self):
        curves = self.curves
        if self.band is None:
            return [None] * len(curves)
        low, high = self.band_low, self.band_high
        if low is None or high is None:
            raise ValueError(f"band={self.band!r} needs band_low and band_high.")
        if not isinstance(self.curve, (list, tuple)):
            low, high = [low], [high]
        if len(low) != len(curves) or len(high) != len(curves):
            raise ValueError("band_low and band_high must hold one array per curve.")
        pairs = []
        for c, lo, hi in zip(curves, low, high):
            for value, name in ((lo, "band_low"), (hi, "band_high")):
                if np.ndim(value) == 1 and np.shape(value)[0] != c.prob_pred.shape[0]:
                    raise ValueError(f"{name} must have one entry per bin of the curve "
                                     f"({c.prob_pred.shape[0]}); got {np.shape(value)[0]}.")
            # NaN (an interval a bin's weights could not give) is not drawn
            pairs.append(tuple(check_display_array(v, name, size=c.prob_pred.shape[0],
                                                   size_of="one per bin of the curve",
                                                   low=0.0, high=1.0, allow_nan=True)
                               for v, name in ((lo, "band_low"), (hi, "band_high"))))
        return pairs

    def plot(self, ax=None, *, name=None, show_counts=True, ref_line=True, band_kwargs=None,
             bar_kwargs=None, **kwargs):
        """Draw the diagram on ``ax``.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure if None. Pass the axes of another Display to put
            several models on one diagram.
        name : str, default=None
            Name of the model in the legend (default: ``estimator_name``). A class-wise curve
            is named ``"name (class k)"``, or ``"class k"`` without a name.
        show_counts : bool, default=True
            Draw the bin counts on the twin axis.
        ref_line : bool, default=True
            Draw the diagonal of perfect calibration (once per axes).
        band_kwargs, bar_kwargs : dict, default=None
            Passed to ``ax.vlines`` for the bands and to ``Axes.bar`` for the counts.
        **kwargs
            Passed to ``ax.plot`` for the curve (e.g. ``color``, ``marker``).

        Returns
        -------
        ReliabilityDisplay
            ``self``, with ``ax_``, ``figure_``, ``line_``, ``band_``, ``bars_`` and the
            per-curve lists.
        """
        show_counts = check_bool(show_counts, "show_counts")
        ref_line = check_bool(ref_line, "ref_line")
        name = check_name(name) if name is not None else self.estimator_name
        band_kwargs = check_kwargs(band_kwargs, "band_kwargs")
        bar_kwargs = check_kwargs(bar_kwargs, "bar_kwargs")
        check_display_option(self.band, "band", _BANDS, allow_none=True)
        if self.band is None:
            unused_kwargs(band_kwargs, "band_kwargs", "no band is drawn (band=None)")
        if not show_counts:
            unused_kwargs(bar_kwargs, "bar_kwargs", "no counts are drawn (show_counts=False)")
        curves = self.curves
        if not curves or not all(isinstance(c, ReliabilityCurve) for c in curves):
            raise TypeError("curve must be a ReliabilityCurve or a list of them.")
        check_display_number(self.confidence_level, "confidence_level", low=0.0, high=1.0,
                             low_open=True, high_open=True)
        if self.estimator_name is not None:
            check_name(self.estimator_name, "estimator_name")
        bands = self._bands()
        _, ax = get_axes(ax)
        self.diagonal_ = diagonal(ax) if ref_line else None
        classwise = isinstance(self.curve, (list, tuple))
        twin = _twin(ax, _COUNTS_LABEL, "Count") if show_counts else None
        self.lines_, self.bands_, self.count_bars_ = [], [], []
        for curve, band in zip(curves, bands):
            if classwise:
                label = f"class {curve.label}" if name is None else f"{name} (class {curve.label})"
            else:
                label = name
            line_kw = {"marker": "s", "markersize": 4, "linewidth": 1.5, "zorder": 3,
                       "label": label}
            (line,) = draw_with(ax.plot, (curve.prob_pred, curve.prob_true), line_kw, kwargs,
                                "kwargs")
            color = line.get_color()
            self.lines_.append(line)
            if band is None:
                self.bands_.append(None)
            else:
                kind = ("Clopper-Pearson interval" if self.band == "clopper-pearson"
                        else "consistency band")
                kw = ({"linewidth": 1.5, "alpha": 0.8} if self.band == "clopper-pearson"
                      else {"linewidth": 7, "alpha": 0.3})
                kw.update({"colors": color, "zorder": 2, "gid": _BAND_GID,
                           "label": f"{_percent(self.confidence_level)} {kind}"})
                self.bands_.append(draw_with(ax.vlines, (curve.prob_pred, band[0], band[1]),
                                             kw, band_kwargs, "band_kwargs"))
            if twin is None:
                self.count_bars_.append(None)
            else:
                kw = {"color": color, "alpha": 0.25, "edgecolor": color, "linewidth": 0.5,
                      "width": curve.bin_upper - curve.bin_lower, "align": "edge"}
                self.count_bars_.append(draw_with(twin.bar, (curve.bin_lower, curve.counts),
                                                  kw, bar_kwargs, "bar_kwargs"))
        if twin is not None:
            _scale_twin(twin, [[p.get_height() for p in twin.patches]])
        first = curves[0]
        _finish(ax, *_axis_labels(first.mode, first.label))
        self.line_ = self.lines_[0]
        self.band_ = self.bands_[0]
        self.bars_ = self.count_bars_[0]
        self.counts_ax_ = twin
        self.ax_ = ax
        self.figure_ = ax.figure
        return self

    @classmethod
    def from_predictions(cls, y_true, y_proba, *, labels=None, pos_label=None, mode="auto",
                         classes=None, n_bins=15, strategy="uniform", min_bin_size=1,
                         band="clopper-pearson", confidence_level=0.95, n_resamples=1000,
                         random_state=None, sample_weight=None, name=None, ax=None,
                         show_counts=True, ref_line=True, band_kwargs=None, bar_kwargs=None,
                         **kwargs):
        """Compute the reliability curve of predictions and draw it.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            True labels.
        y_proba : array-like of shape (n_samples,) or (n_samples, n_classes)
            Predicted probabilities: P(``pos_label``) for a binary problem, or one column per
            class (columns in the order of the sorted ``labels``).
        labels : array-like, default=None
            All class labels (default: those present in ``y_true``).
        pos_label : label, default=None
            Positive class of a binary problem (default: the greater label).
        mode : {"auto", "binary", "top_label", "classwise"}, default="auto"
            As in :func:`skcalib.reliability_curve`: ``"binary"`` (P(``pos_label``) against its
            indicator), ``"top_label"`` (confidence against accuracy), ``"classwise"`` (one
            curve per class on the same axes), ``"auto"`` (binary for two classes, top-label
            otherwise).
        classes : label or list of labels, default=None
            With ``mode="classwise"``, the classes whose curves are drawn (default: all).
        n_bins : int, default=15
            Number of bins (15, as in :func:`skcalib.calibration_error` and the report, so
            that the diagram shows the bins of the error it is read with).
        strategy : {"uniform", "quantile"}, default="uniform"
            Equal-width or equal-mass bins.
        min_bin_size : int, default=1
            Bins with fewer samples are left out.
        band : {"clopper-pearson", "consistency"} or None, default="clopper-pearson"
            ``"clopper-pearson"``: the binomial interval of each bin's observed frequency;
            ``"consistency"``: the range of frequencies of a calibrated model with the bin's
            predictions (resampled labels); None: no band.
        confidence_level : float, default=0.95
            Level of the band, in (0, 1).
        n_resamples : int, default=1000
            Label draws of the consistency band (unused otherwise).
        random_state : None, int, numpy Generator or RandomState, default=None
            Seed of the consistency band's draws.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights.
        name : str, default=None
            Name of the model in the legend.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure if None.
        show_counts, ref_line, band_kwargs, bar_kwargs, **kwargs
            As in :meth:`plot`.

        Returns
        -------
        ReliabilityDisplay
        """
        check_ax(ax)
        check_name(name)
        if band is not None:
            check_option(band, "band", _BANDS)
        check_bool(show_counts, "show_counts")
        check_bool(ref_line, "ref_line")
        check_kwargs(band_kwargs, "band_kwargs")
        check_kwargs(bar_kwargs, "bar_kwargs")
        check_n_resamples(n_resamples)
        check_random_state_param(random_state)
        common = dict(mode=mode, strategy=strategy, n_bins=n_bins, min_bin_size=min_bin_size,
                      confidence_level=confidence_level, labels=labels, pos_label=pos_label,
                      sample_weight=sample_weight)
        curve = reliability_curve(y_true, y_proba, **common)
        classwise = isinstance(curve, list)
        if classes is not None:
            if not classwise:
                raise ValueError("classes selects curves of mode='classwise'; got "
                                 f"mode={mode!r} giving a {curve.mode} curve.")
            wanted = list(classes) if isinstance(classes, (list, tuple, np.ndarray)) \
                else [classes]
            known = [c.label for c in curve]
            missing = [c for c in wanted if c not in known]
            if missing or not wanted:
                raise ValueError(f"classes must be labels among {known}; got {classes!r}.")
            keep = [known.index(c) for c in wanted]
        else:
            keep = list(range(len(curve))) if classwise else None
        low = high = None
        if band == "clopper-pearson":
            low = [c.ci_low for c in curve] if classwise else curve.ci_low
            high = [c.ci_high for c in curve] if classwise else curve.ci_high
        elif band == "consistency":
            bands = consistency_bands(y_true, y_proba, n_resamples=n_resamples,
                                      random_state=random_state, **common)
            if classwise:
                low, high = [b[0] for b in bands], [b[1] for b in bands]
            else:
                low, high = bands
        if classwise:
            curve = [curve[i] for i in keep]
            if band is not None:
                low, high = [low[i] for i in keep], [high[i] for i in keep]
        display = cls(curve, band=band, band_low=low, band_high=high,
                      confidence_level=float(confidence_level), estimator_name=name)
        return display.plot(ax=ax, name=name, show_counts=show_counts, ref_line=ref_line,
                            band_kwargs=band_kwargs, bar_kwargs=bar_kwargs, **kwargs)

    @classmethod
    def from_estimator(cls, estimator, X, y, *, pos_label=None, mode="auto", classes=None,
                       n_bins=15, strategy="uniform", min_bin_size=1, band="clopper-pearson",
                       confidence_level=0.95, n_resamples=1000, random_state=None,
                       sample_weight=None, name=None, ax=None, show_counts=True, ref_line=True,
                       band_kwargs=None, bar_kwargs=None, **kwargs):
        """Draw the reliability diagram of a fitted classifier on ``(X, y)``.

        Parameters
        ----------
        estimator : classifier
            Fitted classifier with ``predict_proba`` and ``classes_``.
        X : array-like of shape (n_samples, n_features)
            Inputs.
        y : array-like of shape (n_samples,)
            True labels.
        pos_label, mode, classes, n_bins, strategy, min_bin_size, band, confidence_level, \
n_resamples, random_state, sample_weight
            As in :meth:`from_predictions` (the labels are the estimator's ``classes_``).
        name : str, default=None
            Name in the legend (default: the estimator's class name).
        ax, show_counts, ref_line, band_kwargs, bar_kwargs, **kwargs
            As in :meth:`from_predictions`.

        Returns
        -------
        ReliabilityDisplay
        """
        check_ax(ax)
        name = estimator_name(estimator, name)
        y_proba, labels = predict_proba_of(estimator, X)
        check_rows(y, y_proba.shape[0])
        with user_names(_ESTIMATOR_NAMES):
            return cls.from_predictions(
                y, y_proba, labels=labels, pos_label=pos_label, mode=mode, classes=classes,
                n_bins=n_bins, strategy=strategy, min_bin_size=min_bin_size, band=band,
                confidence_level=confidence_level, n_resamples=n_resamples,
                random_state=random_state, sample_weight=sample_weight, name=name, ax=ax,
                show_counts=show_counts, ref_line=ref_line, band_kwargs=band_kwargs,
                bar_kwargs=bar_kwargs, **kwargs)


# --------------------------------------------------------------------------------------------
# The smooth reliability diagram.


def _smooth_band(y_true, y_proba, curve, band, *, mode, labels, pos_label, sample_weight,
                 confidence_level, n_resamples, random_state):
    """Pointwise band of the smooth curve's frequency at the curve's bandwidth and grid."""
    rng = check_rng(random_state)
    n_points = curve.grid.size
    sigma = curve.bandwidth
    check_work_memory(2.0 * n_resamples * n_points, "n_resamples", n_resamples,
                      "the band's simulated curves")
    freqs = np.empty((n_resamples, n_points))
    if band == "bootstrap":
        n = np.asarray(y_true).shape[0]
        base = np.ones(n) if sample_weight is None else np.asarray(sample_weight, float)
        for b in range(n_resamples):  # one resample at a time (each is O(n) + one FFT)
            mult = rng.multinomial(n, np.full(n, 1.0 / n)) if n else np.zeros(0)
            w = base * mult
            if not np.any(w > 0):
                freqs[b] = np.nan
                continue
            freqs[b] = smooth_reliability_curve(
                y_true, y_proba, bandwidth=sigma, n_points=n_points, mode=mode,
                labels=labels, pos_label=pos_label, sample_weight=w).frequency
    else:  # consistency: outcomes of a calibrated model with these predictions
        p, _, w = binary_problem(y_true, y_proba, mode=mode, labels=labels,
                                 pos_label=pos_label, sample_weight=sample_weight)
        for b in range(n_resamples):
            y_star = (rng.random(p.size) < p).astype(np.int64)
            freqs[b] = smooth_reliability_curve(
                y_star, p, bandwidth=sigma, n_points=n_points, mode="binary", labels=[0, 1],
                pos_label=1, sample_weight=w).frequency
    alpha = 1.0 - confidence_level
    seen = np.isfinite(curve.frequency)
    low = np.full(n_points, np.nan)
    high = np.full(n_points, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns give NaN
        q = np.nanquantile(freqs[:, seen], [alpha / 2.0, 1.0 - alpha / 2.0], axis=0)
    low[seen], high[seen] = q[0], q[1]
    return low, high


class SmoothReliabilityDisplay:
    """Smooth reliability diagram (Blasiok and Nakkiran 2023): the kernel-smoothed observed
    frequency against the prediction, with the density of the predictions and the smooth ECE.

    Draws the data of :func:`skcalib.smooth_reliability_curve` -- ``frequency`` against
    ``grid`` -- against the diagonal, the smoothed density of the predictions on a twin axis
    (lower quarter of the plot) and the smooth ECE (:func:`skcalib.smooth_ece` at the curve's
    bandwidth) in the legend. No bins are involved.

    The curve's data carry no uncertainty, so a band is optional and computed by resampling
    (``n_resamples`` smooth curves at the curve's bandwidth, each ``O(n)`` plus one FFT):
    ``"bootstrap"`` resamples the samples (a pointwise percentile band of the observed curve),
    ``"consistency"`` draws the outcomes of a calibrated model with the same predictions
    (``y* ~ Bernoulli(p)``, the smooth analogue of Broecker and Smith's consistency bars: where
    the curve leaves this band, it is not explained by chance). Both are pointwise, not
    simultaneous, bands.

    The constructor only stores its arguments (as scikit-learn's Displays do); :meth:`plot`
    checks them before drawing and refuses bad data (lengths that disagree, NaN, unsorted
    edges, levels outside (0, 1), ...) with a ``ValueError`` naming the parameter.

    Parameters
    ----------
    curve : SmoothReliabilityCurve
        The data.
    smece : float, default=None
        The smooth ECE shown in the legend.
    band : {"bootstrap", "consistency"} or None, default=None
        The kind of band in ``band_low`` and ``band_high``.
    band_low, band_high : ndarray of shape (n_points,), default=None
        The band's ends at every grid point (NaN where the curve is undefined).
    confidence_level : float, default=0.95
        Level of the band (for the legend).
    mode : {"binary", "top_label"}, default="binary"
        The problem drawn (for the axis labels).
    pos_label : label, default=None
        The positive class of a binary problem (for the axis labels).
    estimator_name : str, default=None
        Name of the model in the legend.
    n_samples : float, default=None
        The (effective) number of predictions. When given, the prediction ranges with fewer
        than ``min_support`` predictions within one bandwidth (``n * density * 2 * bandwidth``)
        are shaded and the curve is drawn only faintly there: it rests on a handful of
        samples and swings freely.
    min_support : float, default=5
        The support below which a range is shaded.

    Attributes
    ----------
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure
    line_ : matplotlib Line2D
        The smooth curve (``grid``, ``frequency``), NaN (not drawn) over the shaded ranges
        where fewer than ``min_support`` predictions support it.
    unsupported_ : matplotlib Line2D or None
        The curve over those ranges, drawn as a faint thin line (None if there are none).
    band_ : matplotlib PolyCollection or None
        The band (``fill_between`` of ``band_low`` and ``band_high`` over ``grid``).
    sparse_ : matplotlib PolyCollection or None
        The shading of the sparse prediction ranges (with ``n_samples``).
    density_ : matplotlib Line2D or None
        The density of the predictions (``grid``, ``density``) on the twin axis.
    density_ax_ : matplotlib Axes or None
        The twin axes of the density.
    diagonal_ : Line2D or None

    See Also
    --------
    skcalib.smooth_reliability_curve : the data of the diagram.
    skcalib.smooth_ece : the error in the legend.
    ReliabilityDisplay : the binned diagram.

    References
    ----------
    J. Blasiok and P. Nakkiran, "Smooth ECE: Principled reliability diagrams via kernel
    smoothing", ICLR 2024.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from skcalib.plotting import SmoothReliabilityDisplay
    >>> rng = np.random.default_rng(0)
    >>> p = rng.random(2000)
    >>> y = (rng.random(2000) < p ** 2).astype(int)
    >>> display = SmoothReliabilityDisplay.from_predictions(y, p, name="model")
    >>> display.line_.get_label()
    'model (smECE = 0.168)'
    >>> bool(np.array_equal(display.line_.get_ydata(), display.curve.frequency,
    ...                     equal_nan=True))
    True
    """

    def __init__(self, curve, *, smece=None, band=None, band_low=None, band_high=None,
                 confidence_level=0.95, mode="binary", pos_label=None, estimator_name=None,
                 n_samples=None, min_support=5):
        self.curve = curve
        self.n_samples = n_samples
        self.min_support = min_support
        self.smece = smece
        self.band = band
        self.band_low = band_low
        self.band_high = band_high
        self.confidence_level = confidence_level
        self.mode = mode
        self.pos_label = pos_label
        self.estimator_name = estimator_name

    def plot(self, ax=None, *, name=None, show_density=True, ref_line=True, band_kwargs=None,
             **kwargs):
        """Draw the smooth diagram on ``ax``.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure if None (pass the same axes for several models).
        name : str, default=None
            Name of the model in the legend (default: ``estimator_name``); the smooth ECE is
            appended.
        show_density : bool, default=True
            Draw the density of the predictions on the twin axis.
        ref_line : bool, default=True
            Draw the diagonal of perfect calibration (once per axes).
        band_kwargs : dict, default=None
            Passed to ``ax.fill_between`` for the band.
        **kwargs
            Passed to ``ax.plot`` for the curve.

        Returns
        -------
        SmoothReliabilityDisplay
            ``self``, with ``ax_``, ``figure_``, ``line_``, ``unsupported_``, ``band_``,
            ``sparse_`` and ``density_``.
        """
        show_density = check_bool(show_density, "show_density")
        ref_line = check_bool(ref_line, "ref_line")
        name = check_name(name) if name is not None else self.estimator_name
        band_kwargs = check_kwargs(band_kwargs, "band_kwargs")
        check_display_option(self.band, "band", _SMOOTH_BANDS, allow_none=True)
        if self.band is None:
            unused_kwargs(band_kwargs, "band_kwargs", "no band is drawn (band=None)")
        elif self.band_low is None or self.band_high is None:
            raise ValueError("band_low and band_high are needed to draw a band.")
        c = self.curve
        if not isinstance(c, SmoothReliabilityCurve):
            raise TypeError("curve must be a SmoothReliabilityCurve (from "
                            f"skcalib.smooth_reliability_curve); got {type(c).__name__}.")
        grid = check_display_array(c.grid, "curve.grid", min_size=1, increasing=True)
        n_grid = grid.size
        size_of = "one per grid point of the curve"
        # (a smoothed frequency may pass 1 by a rounding error: no bounds)
        check_display_array(c.frequency, "curve.frequency", size=n_grid, size_of=size_of,
                            allow_nan=True)
        check_display_array(c.density, "curve.density", size=n_grid, size_of=size_of, low=0.0)
        band_low = band_high = None
        if self.band is not None:
            band_low, band_high = (
                check_display_array(v, n, size=n_grid, size_of=size_of, allow_nan=True)
                for v, n in ((self.band_low, "band_low"), (self.band_high, "band_high")))
        check_display_number(self.smece, "smece", low=0.0, allow_none=True)
        check_display_number(self.confidence_level, "confidence_level", low=0.0, high=1.0,
                             low_open=True, high_open=True)
        check_display_option(self.mode, "mode", ("binary", "top_label"))
        check_display_number(self.n_samples, "n_samples", low=0.0, low_open=True,
                             allow_none=True)
        check_display_number(self.min_support, "min_support", low=0.0)
        if self.estimator_name is not None:
            check_name(self.estimator_name, "estimator_name")
        _, ax = get_axes(ax)
        self.diagonal_ = diagonal(ax) if ref_line else None
        label = name
        if self.smece is not None:
            text = f"smECE = {self.smece:.3f}"
            label = text if name is None else f"{name} ({text})"
        frequency = np.asarray(c.frequency, dtype=np.float64)
        sparse = np.zeros(frequency.shape, dtype=bool)
        if self.n_samples is not None:
            support = float(self.n_samples) * np.asarray(c.density) * 2.0 * c.bandwidth
            sparse = support < float(self.min_support)
        line_kw = {"linewidth": 2, "zorder": 3, "label": label}
        # the curve is drawn where it is supported; where fewer than min_support predictions
        # lie within one bandwidth it swings freely (from 0 to 1 on a handful of samples), and
        # only a faint line is drawn there
        (self.line_,) = draw_with(ax.plot, (c.grid, np.where(sparse, np.nan, frequency)),
                                  line_kw, kwargs, "kwargs")
        color = self.line_.get_color()
        self.unsupported_ = None
        if sparse.any():
            # the faint part joins the supported one at the boundary points; it keeps the
            # curve's style (a user's linestyle, marker, ...) but is thin, faint and unlabelled
            near = sparse | np.r_[sparse[1:], False] | np.r_[False, sparse[:-1]]
            style = {k: v for k, v in merge_style(line_kw, kwargs).items()
                     if k not in ("label", "alpha")}
            faint_kw = merge_style(style, {"color": color, "linewidth": 1, "alpha": 0.3,
                                           "zorder": 2.5})
            (self.unsupported_,) = ax.plot(c.grid, np.where(near, frequency, np.nan),
                                           **faint_kw)
        self.band_ = None
        if self.band is not None:
            kind = "bootstrap band" if self.band == "bootstrap" else "consistency band"
            kw = {"color": color, "alpha": 0.2, "linewidth": 0, "zorder": 2, "gid": _BAND_GID,
                  "label": f"{_percent(self.confidence_level)} {kind}"}
            low, high = band_low, band_high
            kw["where"] = np.isfinite(low) & np.isfinite(high)
            self.band_ = draw_with(ax.fill_between, (c.grid, low, high), kw, band_kwargs,
                                   "band_kwargs")
        self.sparse_ = None
        if sparse.any():
            self.sparse_ = ax.fill_between(
                c.grid, 0.0, 1.0, where=sparse, transform=ax.get_xaxis_transform(),
                color="grey", alpha=0.12, linewidth=0, zorder=0,
                label=f"< {self.min_support:g} predictions within one bandwidth")
        self.density_ = None
        self.density_ax_ = None
        if show_density:
            twin = _twin(ax, _DENSITY_LABEL, "Density")
            (self.density_,) = twin.plot(c.grid, c.density, color=color, linewidth=1,
                                         alpha=0.6)
            twin.fill_between(c.grid, 0.0, c.density, color=color, alpha=0.15, linewidth=0)
            _scale_twin(twin, [line.get_ydata() for line in twin.get_lines()])
            self.density_ax_ = twin
        _finish(ax, *_axis_labels(self.mode, self.pos_label))
        self.ax_ = ax
        self.figure_ = ax.figure
        return self

    @classmethod
    def from_predictions(cls, y_true, y_proba, *, labels=None, pos_label=None, mode="auto",
                         bandwidth="auto", n_points=None, band=None, confidence_level=0.95,
                         n_resamples=200, random_state=None, sample_weight=None, name=None,
                         ax=None, show_density=True, ref_line=True, band_kwargs=None,
                         **kwargs):
        """Compute the smooth reliability curve of predictions and draw it.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            True labels.
        y_proba : array-like of shape (n_samples,) or (n_samples, n_classes)
            Predicted probabilities.
        labels, pos_label : default=None
            As in :func:`skcalib.smooth_reliability_curve`.
        mode : {"auto", "binary", "top_label"}, default="auto"
            Binary (P(``pos_label``)) or top-label (confidence) curve; ``"auto"``: binary for
            two classes, top-label otherwise.
        bandwidth : "auto" or float, default="auto"
            Kernel bandwidth (``"auto"``: the smooth ECE's fixed point).
        n_points : int, default=None
            Evaluation points of the curve (default: the internal grid).
        band : {"bootstrap", "consistency"} or None, default=None
            Optional pointwise band (see the class description); costs ``n_resamples``
            smooth curves.
        confidence_level : float, default=0.95
            Level of the band, in (0, 1).
        n_resamples : int, default=200
            Resamples of the band.
        random_state : None, int, numpy Generator or RandomState, default=None
            Seed of the band's resampling.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights.
        name : str, default=None
            Name of the model in the legend.
        ax : matplotlib Axes, default=None
            Axes to draw on.
        show_density, ref_line, band_kwargs, **kwargs
            As in :meth:`plot`.

        Returns
        -------
        SmoothReliabilityDisplay
        """
        check_ax(ax)
        check_name(name)
        if band is not None:
            check_option(band, "band", _SMOOTH_BANDS)
        check_bool(show_density, "show_density")
        check_bool(ref_line, "ref_line")
        check_kwargs(band_kwargs, "band_kwargs")
        check_n_resamples(n_resamples)
        check_random_state_param(random_state)
        check_confidence_level(confidence_level)
        common = dict(mode=mode, labels=labels, pos_label=pos_label,
                      sample_weight=sample_weight)
        curve = smooth_reliability_curve(y_true, y_proba, bandwidth=bandwidth,
                                         n_points=n_points, **common)
        smece = smooth_ece(y_true, y_proba, bandwidth=curve.bandwidth, **common)
        low = high = None
        if band is not None:
            low, high = _smooth_band(y_true, y_proba, curve, band,
                                     confidence_level=float(confidence_level),
                                     n_resamples=int(n_resamples), random_state=random_state,
                                     **common)
        # the problem drawn, for the axis labels (the inputs were validated above)
        classes = check_labels_and_probabilities(y_true, y_proba, labels=labels,
                                                 pos_label=pos_label).classes
        resolved = resolve_mode(mode, len(classes))
        shown_label = None
        if resolved == "binary":
            shown_label = classes[pos_index(classes, pos_label)]
            shown_label = shown_label.item() if isinstance(shown_label, np.generic) \
                else shown_label
        w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        # the effective number of predictions (Kish's, with weights) for the sparse shading
        n_eff = float(np.shape(y_true)[0]) if w is None else float(w.sum() ** 2 / np.sum(w * w))
        display = cls(curve, smece=smece, band=band, band_low=low, band_high=high,
                      confidence_level=float(confidence_level), mode=resolved,
                      pos_label=shown_label, estimator_name=name, n_samples=n_eff)
        return display.plot(ax=ax, name=name, show_density=show_density, ref_line=ref_line,
                            band_kwargs=band_kwargs, **kwargs)

    @classmethod
    def from_estimator(cls, estimator, X, y, *, pos_label=None, mode="auto",
                       bandwidth="auto", n_points=None, band=None, confidence_level=0.95,
                       n_resamples=200, random_state=None, sample_weight=None, name=None,
                       ax=None, show_density=True, ref_line=True, band_kwargs=None, **kwargs):
        """Draw the smooth reliability diagram of a fitted classifier on ``(X, y)``.

        Parameters
        ----------
        estimator : classifier
            Fitted classifier with ``predict_proba`` and ``classes_``.
        X : array-like of shape (n_samples, n_features)
            Inputs.
        y : array-like of shape (n_samples,)
            True labels.
        pos_label, mode, bandwidth, n_points, band, confidence_level, n_resamples, \
random_state, sample_weight
            As in :meth:`from_predictions` (the labels are the estimator's ``classes_``).
        name : str, default=None
            Name in the legend (default: the estimator's class name).
        ax, show_density, ref_line, band_kwargs, **kwargs
            As in :meth:`from_predictions`.

        Returns
        -------
        SmoothReliabilityDisplay
        """
        check_ax(ax)
        name = estimator_name(estimator, name)
        y_proba, labels = predict_proba_of(estimator, X)
        check_rows(y, y_proba.shape[0])
        with user_names(_ESTIMATOR_NAMES):
            return cls.from_predictions(
                y, y_proba, labels=labels, pos_label=pos_label, mode=mode, bandwidth=bandwidth,
                n_points=n_points, band=band, confidence_level=confidence_level,
                n_resamples=n_resamples, random_state=random_state, sample_weight=sample_weight,
                name=name, ax=ax, show_density=show_density, ref_line=ref_line,
                band_kwargs=band_kwargs, **kwargs)
