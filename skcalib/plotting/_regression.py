"""Displays of a regressor's predictive distributions: the PIT histogram, the quantile-calibration
curve and the coverage of central prediction intervals.

Every number drawn comes from :mod:`skcalib.metrics` (:func:`~skcalib.pit`,
:func:`~skcalib.quantile_calibration_curve`, :func:`~skcalib.miscalibration_area`,
:func:`~skcalib.interval_coverage`); this module only adds the reference bands and draws.

Sample weights are **frequency weights** wherever a band or an interval is computed, as in
:func:`skcalib.reliability_curve`: the number of trials is the total weight, so integer weights
give the band of the data with rows repeated. Normalise weights that are not frequencies to the
effective sample size you intend before calling.
"""

import numpy as np
from scipy import stats as _stats

from .._validation import (
    check_confidence_level,
    check_bool,
    check_n_bins,
    check_option,
    check_sample_weight,
)
from ..distributions import as_distribution
from .._problems.univariate import check_grid, check_levels, is_univariate
from .._problems.reliability import binomial_interval
from ..metrics import interval_coverage, miscalibration_area, pit, quantile_calibration_curve
from ._base import (check_display_array, check_display_number, check_display_option,
                    check_kwargs, check_name, check_rows, diagonal, distribution_of, draw_once,
                    draw_with, estimator_name, get_axes, user_names)

__all__ = ["PITHistogramDisplay", "QuantileCalibrationDisplay", "IntervalCoverageDisplay"]

_BANDS = ("pointwise", "simultaneous")
_UNIFORM_GID = "skcalib-uniform-reference"
_BAND_GID = "skcalib-pit-band"
#: The default nominal levels of :class:`IntervalCoverageDisplay`.
DEFAULT_COVERAGE_LEVELS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99)


# --------------------------------------------------------------------------------------------
# argument checks shared by the three Displays


def _check_ax(ax):
    """Refuse a bad ``ax`` before any work (``get_axes`` creates nothing when ``ax`` is given)."""
    if ax is not None:
        get_axes(ax)
    return ax


def _check_edges(bins):
    """Bin edges on ``[0, 1]``: ``bins`` equal-width bins, or the given edges (strictly
    increasing, from 0 to 1)."""
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, (bool, np.bool_)):
        n = check_n_bins(bins, "bins", max_val=10**6)
        return np.linspace(0.0, 1.0, n + 1)
    if isinstance(bins, (bool, np.bool_, str)) or np.ndim(bins) == 0:
        # a float, a bool or a string: let check_n_bins word the error
        check_n_bins(bins, "bins", max_val=10**6)
    edges = np.asarray(bins)
    if edges.dtype.kind not in "iuf" or edges.ndim != 1 or edges.size < 2:
        raise ValueError(f"bins must be a positive integer or a 1-D array of at least two edges; "
                         f"got {bins!r:.80}.")
    edges = edges.astype(np.float64)
    if not np.all(np.isfinite(edges)) or np.any(np.diff(edges) <= 0):
        raise ValueError("bins must be strictly increasing edges.")
    if edges[0] != 0.0 or edges[-1] != 1.0:
        raise ValueError(f"bins must run from 0 to 1 (PIT values lie in [0, 1]); got edges from "
                         f"{edges[0]!r} to {edges[-1]!r}.")
    return edges


def _check_pit_params(bins, band, confidence_level, name, ax, histtype, hist_kwargs):
    """Every argument of the PIT histogram but the data, checked before any work:
    ``(edges, confidence_level)``."""
    edges = _check_edges(bins)
    if band is not None:
        check_option(band, "band", _BANDS)
    confidence_level = check_confidence_level(confidence_level)
    check_name(name)
    _check_ax(ax)
    check_option(histtype, "histtype", ("bar", "step"))
    check_kwargs(hist_kwargs, "hist_kwargs")
    return edges, confidence_level


def _check_quantile_params(quantiles, proportion, band, confidence_level, name, ax, fill,
                           line_kwargs):
    """The same for the quantile-calibration curve: ``(grid of expected proportions,
    confidence_level)``."""
    grid = np.linspace(0.0, 1.0, 101) if quantiles is None else check_grid(quantiles)
    check_option(proportion, "proportion", ("quantile", "interval"))
    if band is not None:
        check_option(band, "band", _BANDS)
    confidence_level = check_confidence_level(confidence_level)
    check_name(name)
    _check_ax(ax)
    check_bool(fill, "fill")
    check_kwargs(line_kwargs, "line_kwargs")
    return grid, confidence_level


def _check_coverage_params(levels, confidence_level, name, ax, errorbar_kwargs):
    """The same for the interval coverage: ``(levels as a 1-D array, confidence_level)``."""
    lv = np.atleast_1d(check_levels(levels, "levels"))
    confidence_level = check_confidence_level(confidence_level)
    check_name(name)
    _check_ax(ax)
    check_kwargs(errorbar_kwargs, "errorbar_kwargs")
    return lv, confidence_level


def _regression_prediction(estimator, X, y):
    """A fitted regressor's univariate predictive distribution, or a TypeError naming it; ``y``
    must have one target per row of ``X``."""
    dist = distribution_of(estimator, X)
    if not is_univariate(dist):
        raise TypeError(f"{type(estimator).__name__} predicts a {type(dist).__name__}; these "
                        "Displays need a regressor with a univariate predictive distribution "
                        "(predict(X, return_std=True) or predict_distribution(X)).")
    check_rows(y, dist.n_samples)
    return dist


#: from_estimator passes its ``y`` and the model's predictions on ``X`` to the metrics
_ESTIMATOR_NAMES = {"y_true": "y", "y_pred": "the estimator's predictions on X"}


def _check_band_arrays(display, size, size_of, low=0.0, high=None):
    """``(band_low, band_high)`` of a Display (both None, or both arrays of ``size`` finite
    entries in ``[low, high]``) and its ``band`` and ``confidence_level``."""
    check_display_option(display.band, "band", _BANDS, allow_none=True)
    check_display_number(display.confidence_level, "confidence_level", low=0.0, high=1.0,
                         low_open=True, high_open=True)
    if (display.band_low is None) != (display.band_high is None):
        raise ValueError("band_low and band_high must be given together (or both None).")
    if display.band_low is None:
        return None, None
    lo, hi = (check_display_array(v, n, size=size, size_of=size_of, low=low, high=high)
              for v, n in ((display.band_low, "band_low"), (display.band_high, "band_high")))
    if np.any(lo > hi):
        raise ValueError("band_low must not exceed band_high.")
    return lo, hi


def _weights_and_trials(sample_weight, n_samples):
    """``(weights, n_trials)``: the checked weights divided by their maximum (None without
    weights; fractions only depend on ratios, and 1e308 cannot overflow) and the number of
    binomial trials -- ``n_samples``, or the total frequency weight (``inf`` if it overflows)."""
    w = check_sample_weight(sample_weight, n_samples)
    if w is None:
        return None, n_samples
    top = float(np.max(w))
    w = w / top
    return w, float(np.sum(w)) * top  # a Python product: inf instead of a RuntimeWarning


def _integer_trials(n_trials):
    """``n_trials`` rounded to an integer >= 1 for the binomial quantiles, or None when it is
    too large to matter (beyond 2**53, or infinite): the band then shrinks to its limit."""
    if not np.isfinite(n_trials) or n_trials >= 2.0 ** 53:
        return None
    return max(1, int(round(n_trials)))


def _shared_band(ax, gid, key, draw):
    """The band with ``gid`` and the same data ``key`` already on ``ax`` (models with the same
    band share it), else the one that ``draw()`` makes."""
    for coll in ax.collections:
        other = getattr(coll, "_skcalib_band", None)
        if (coll.get_gid() == gid and other is not None and len(other) == len(key)
                and all(np.array_equal(a, b) for a, b in zip(other, key))):
            return coll
    coll = draw()
    coll.set_gid(gid)
    coll._skcalib_band = key
    return coll


def _finish_legend(ax, **kwargs):
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.legend(**kwargs)


# --------------------------------------------------------------------------------------------
# PIT histogram


def pit_histogram_band(edges, n_trials, confidence_level=0.95, band="pointwise"):
    """Limits of the PIT histogram's bin heights (densities) under uniform PIT values.

    Under calibration the count of bin ``k`` (width ``w_k``) is binomial with ``n_trials``
    trials and success probability ``w_k``; its ``alpha / 2`` and ``1 - alpha / 2`` quantiles,
    divided by ``n_trials * w_k``, bound the height. ``band="pointwise"`` uses ``alpha = 1 -
    confidence_level`` for each bin (each height leaves its band with probability at most
    ``alpha``); ``"simultaneous"`` uses ``alpha / n_bins`` (Bonferroni), so that *any* bin
    leaves its band with probability at most ``alpha`` (conservative: the counts are
    multinomial, and the bound needs no independence).

    Parameters
    ----------
    edges : ndarray of shape (n_bins + 1,)
        Bin edges, strictly increasing from 0 to 1.
    n_trials : float
        Number of PIT values (the total frequency weight), rounded to an integer (at least 1);
        beyond ``2**53`` or infinite, the band is its limit, the line at 1.
    confidence_level : float, default=0.95
        Coverage of the band.
    band : {"pointwise", "simultaneous"}, default="pointwise"
        Per-bin or Bonferroni-simultaneous coverage.

    Returns
    -------
    low, high : ndarray of shape (n_bins,)
        The band's limits, as densities (the histogram's units).

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.plotting._regression import pit_histogram_band
    >>> low, high = pit_histogram_band(np.linspace(0, 1, 5), 100)
    >>> low.round(2), high.round(2)
    (array([0.68, 0.68, 0.68, 0.68]), array([1.36, 1.36, 1.36, 1.36]))
    """
    edges = np.asarray(edges, dtype=np.float64)
    widths = np.diff(edges)
    n = _integer_trials(n_trials)
    if n is None:
        return np.ones_like(widths), np.ones_like(widths)
    alpha = 1.0 - confidence_level
    if band == "simultaneous":
        alpha /= widths.size
    low = _stats.binom.ppf(alpha / 2.0, n, widths)
    high = _stats.binom.ppf(1.0 - alpha / 2.0, n, widths)
    scale = n * widths
    return low / scale, high / scale


class PITHistogramDisplay:
    """Histogram of the probability integral transform (PIT) of a regressor's predictions.

    The PIT values ``F_i(y_i)`` (:func:`skcalib.pit`) of a calibrated model are uniform on
    ``[0, 1]`` (Dawid 1984): the histogram (as a density) is flat at 1, drawn as a dashed line.
    A hump in the middle means too wide predictive distributions, a U too narrow ones, a slope
    a biased mean. The grey band holds the bin heights that uniform PIT values produce with the
    given probability (binomial quantiles of the bin counts; see :func:`pit_histogram_band`), so
    a bar outside it is more than sampling noise. Test the uniformity formally with
    :func:`skcalib.stats.pit_test`.

    Build it with :meth:`from_predictions` or :meth:`from_estimator`.
    The constructor only stores its arguments (as scikit-learn's Displays do); :meth:`plot`
    checks them before drawing and refuses bad data (lengths that disagree, NaN, unsorted
    edges, levels outside (0, 1), ...) with a ``ValueError`` naming the parameter.

    Parameters
    ----------
    edges : ndarray of shape (n_bins + 1,)
        Bin edges on ``[0, 1]``.
    heights : ndarray of shape (n_bins,)
        Density of each bin: its (weighted) fraction of the PIT values divided by its width.
    n_trials : int or float
        Number of PIT values (the total weight with ``sample_weight``).
    band_low, band_high : ndarray of shape (n_bins,), default=None
        The band under uniformity (None: no band).
    band : {"pointwise", "simultaneous"} or None, default=None
        How the band was made.
    confidence_level : float, default=0.95
        Its coverage.
    pit_values : ndarray of shape (n_samples,), default=None
        The PIT values themselves (kept for inspection).
    name : str, default=None
        Legend name of the model.

    Attributes
    ----------
    ax_ : matplotlib Axes
        The axes drawn on.
    figure_ : matplotlib Figure
        Its figure.
    bars_ : matplotlib StepPatch
        The histogram (``bars_.get_data().values`` are the heights, ``.edges`` the edges).
    band_ : matplotlib PolyCollection or None
        The band (shared by models with the same band on one axis).
    line_ : matplotlib Line2D
        The uniform reference line at density 1 (one per axis).

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.distributions import Normal
    >>> from skcalib.plotting import PITHistogramDisplay
    >>> rng = np.random.default_rng(0)
    >>> y = rng.normal(size=500)
    >>> display = PITHistogramDisplay.from_predictions(y, Normal(np.zeros(500), np.ones(500)),
    ...                                                bins=10, name="N(0, 1)")
    >>> display.heights.shape, round(float(display.heights @ np.diff(display.edges)), 12)
    ((10,), 1.0)
    >>> bool(np.all((display.band_low <= display.heights) & (display.heights <= display.band_high)))
    True
    """

    def __init__(self, edges, heights, n_trials, *, band_low=None, band_high=None, band=None,
                 confidence_level=0.95, pit_values=None, name=None):
        self.edges = edges
        self.heights = heights
        self.n_trials = n_trials
        self.band_low = band_low
        self.band_high = band_high
        self.band = band
        self.confidence_level = confidence_level
        self.pit_values = pit_values
        self.name = name

    def plot(self, ax=None, *, name=None, histtype="bar", hist_kwargs=None):
        """Draw the histogram, the uniform reference line and the band on ``ax``.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure if None. Pass the same axes for several models.
        name : str, default=None
            Legend name; ``self.name`` if None.
        histtype : {"bar", "step"}, default="bar"
            Filled, translucent bars or an outline only (clearer for several models).
        hist_kwargs : dict, default=None
            Passed to ``ax.stairs`` (e.g. ``color``).

        Returns
        -------
        PITHistogramDisplay
            ``self``, with ``ax_``, ``figure_``, ``bars_``, ``band_`` and ``line_``.
        """
        name = check_name(name)
        check_option(histtype, "histtype", ("bar", "step"))
        hist_kwargs = check_kwargs(hist_kwargs, "hist_kwargs")
        edges = check_display_array(self.edges, "edges", min_size=2, low=0.0, high=1.0,
                                    increasing=True)
        n_bins = edges.size - 1
        heights = check_display_array(self.heights, "heights", size=n_bins,
                                      size_of="one per bin, one fewer than edges", low=0.0)
        check_display_number(self.n_trials, "n_trials", low=0.0, low_open=True, allow_inf=True)
        band_low, band_high = _check_band_arrays(self, n_bins, "one per bin")
        check_name(self.name)
        _, ax = get_axes(ax)
        from matplotlib.colors import to_rgba

        label = name if name is not None else self.name
        if band_low is not None:
            lo = np.append(band_low, band_low[-1])
            hi = np.append(band_high, band_high[-1])
            kind = "simultaneous" if self.band == "simultaneous" else "pointwise"

            def draw():
                # hatched, not filled, and above the bars: a filled band under translucent
                # bars mixes into two shades per bar
                return ax.fill_between(
                    edges, lo, hi, step="post", facecolor="none", edgecolor="0.45",
                    hatch="////", linewidth=0, zorder=2.5,
                    label=f"{self.confidence_level:.0%} {kind} band if uniform")

            self.band_ = _shared_band(ax, _BAND_GID, (edges, lo, hi), draw)
        else:
            self.band_ = None
        def uniform():
            return ax.axhline(1.0, color="black", linestyle="--", linewidth=1, label="Uniform")

        self.line_ = draw_once(ax, _UNIFORM_GID, uniform)
        fill = histtype == "bar"
        self.bars_ = draw_with(ax.stairs, (heights, edges),
                               {"linewidth": 1.5, "label": label, "fill": fill}, hist_kwargs,
                               "hist_kwargs")
        if fill:
            # the colour the cycle (or ``color``) gave: translucent inside, opaque outline
            color = self.bars_.get_facecolor()
            if "facecolor" not in hist_kwargs and "alpha" not in hist_kwargs:
                self.bars_.set_facecolor(to_rgba(color, 0.35))
            if "edgecolor" not in hist_kwargs:
                self.bars_.set_edgecolor(to_rgba(color, 1.0))
        ax.set_xlim(0.0, 1.0)  # the y-axis autoscales (the bars' baseline keeps it at 0)
        ax.set_xlabel("PIT value")
        ax.set_ylabel("Density")
        _finish_legend(ax, loc="best", fontsize="small")
        self.ax_ = ax
        self.figure_ = ax.figure
        return self

    @classmethod
    def from_predictions(cls, y_true, y_pred, *, bins=20, band="pointwise",
                         confidence_level=0.95, sample_weight=None, name=None, ax=None,
                         histtype="bar", hist_kwargs=None):
        """Histogram of the PIT values of predictions, with a band under uniformity.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            Real targets.
        y_pred : Distribution or array-like of shape (n_samples, 2)
            Univariate predictive distributions (Normal, Laplace, a Mixture of them,
            Recalibrated, ...), or predicted means and standard deviations (read as Normal).
        bins : int or array-like of shape (n_bins + 1,), default=20
            Number of equal-width bins on ``[0, 1]``, or edges strictly increasing from 0 to 1.
            Bins are half-open ``[a, b)``, the last one closed.
        band : {"pointwise", "simultaneous"} or None, default="pointwise"
            The band of the bin heights under uniform PIT values: binomial quantiles per bin, or
            with a Bonferroni correction over the bins (see :func:`pit_histogram_band`); None
            draws none.
        confidence_level : float, default=0.95
            Coverage of the band, in (0, 1).
        sample_weight : array-like of shape (n_samples,), default=None
            Frequency weights: the heights are weighted fractions, and the band uses the total
            weight (rounded, at least 1) as the number of trials.
        name : str, default=None
            Legend name of the model.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure if None.
        histtype : {"bar", "step"}, default="bar"
            Filled bars or an outline.
        hist_kwargs : dict, default=None
            Passed to ``ax.stairs``.

        Returns
        -------
        PITHistogramDisplay
        """
        edges, confidence_level = _check_pit_params(bins, band, confidence_level, name, ax,
                                                    histtype, hist_kwargs)
        u = pit(y_true, y_pred)
        w, n_trials = _weights_and_trials(sample_weight, u.size)
        counts, _ = np.histogram(u, bins=edges, weights=w)
        total = float(u.size) if w is None else float(np.sum(w))
        heights = counts / (total * np.diff(edges))
        low = high = None
        if band is not None:
            low, high = pit_histogram_band(edges, n_trials, confidence_level, band)
        display = cls(edges, heights, n_trials, band_low=low, band_high=high, band=band,
                      confidence_level=confidence_level, pit_values=u, name=name)
        return display.plot(ax=ax, histtype=histtype, hist_kwargs=hist_kwargs)

    @classmethod
    def from_estimator(cls, estimator, X, y, *, bins=20, band="pointwise",
                       confidence_level=0.95, sample_weight=None, name=None, ax=None,
                       histtype="bar", hist_kwargs=None):
        """PIT histogram of a fitted regressor's predictive distributions on ``(X, y)``.

        Parameters
        ----------
        estimator : fitted regressor
            With ``predict(X, return_std=True)`` (e.g. ``BayesianRidge``,
            ``GaussianProcessRegressor``) or ``predict_distribution(X)``.
        X : array-like of shape (n_samples, n_features)
            Features.
        y : array-like of shape (n_samples,)
            Real targets.
        bins, band, confidence_level, sample_weight
            As in :meth:`from_predictions`.
        name : str, default=None
            Legend name; the estimator's class name if None.
        ax, histtype, hist_kwargs
            As in :meth:`from_predictions`.

        Returns
        -------
        PITHistogramDisplay

        Examples
        --------
        >>> from sklearn.datasets import load_diabetes
        >>> from sklearn.linear_model import BayesianRidge
        >>> from skcalib.plotting import PITHistogramDisplay
        >>> X, y = load_diabetes(return_X_y=True)
        >>> model = BayesianRidge().fit(X[:300], y[:300])
        >>> display = PITHistogramDisplay.from_estimator(model, X[300:], y[300:], bins=10)
        >>> display.bars_.get_label(), display.n_trials
        ('BayesianRidge', 142)
        """
        name = estimator_name(estimator, name)
        _check_pit_params(bins, band, confidence_level, name, ax, histtype, hist_kwargs)
        dist = _regression_prediction(estimator, X, y)
        with user_names(_ESTIMATOR_NAMES):
            return cls.from_predictions(y, dist, bins=bins, band=band,
                                        confidence_level=confidence_level,
                                        sample_weight=sample_weight, name=name, ax=ax,
                                        histtype=histtype, hist_kwargs=hist_kwargs)


# --------------------------------------------------------------------------------------------
# quantile-calibration curve


_CURVE_BAND_GID = "skcalib-quantile-band"


def quantile_curve_band(expected, n_trials, confidence_level=0.95, band="pointwise"):
    """Limits of the quantile-calibration curve of a calibrated model.

    Under calibration the PIT values, and so the central levels ``|2 PIT - 1|``, are uniform,
    and the observed proportion at ``p`` is a binomial fraction with ``n_trials`` trials and
    success probability ``p``. ``band="pointwise"``: its ``alpha / 2`` and ``1 - alpha / 2``
    quantiles divided by ``n_trials`` (``alpha = 1 - confidence_level``), so each point leaves
    the band with probability at most ``alpha``. ``"simultaneous"``: the
    Dvoretzky--Kiefer--Wolfowitz band ``p +- sqrt(log(2 / alpha) / (2 n_trials))`` (Massart's
    constant), clipped to ``[0, 1]``, which the *whole* curve leaves with probability at most
    ``alpha`` (for continuous predictive distributions).

    Parameters
    ----------
    expected : ndarray of shape (n_quantiles,)
        Expected proportions.
    n_trials : float
        Number of samples (the total frequency weight); rounded for the binomial quantiles
        (beyond ``2**53`` or infinite, the band is the diagonal itself).
    confidence_level : float, default=0.95
        Coverage of the band.
    band : {"pointwise", "simultaneous"}, default="pointwise"
        Per-point binomial or simultaneous (DKW) coverage.

    Returns
    -------
    low, high : ndarray of shape (n_quantiles,)
        The band's limits.

    Examples
    --------
    >>> from skcalib.plotting._regression import quantile_curve_band
    >>> low, high = quantile_curve_band([0.1, 0.5, 0.9], 100)
    >>> low, high
    (array([0.05, 0.4 , 0.84]), array([0.16, 0.6 , 0.95]))
    >>> [b.round(3) for b in quantile_curve_band([0.1, 0.5, 0.9], 100, band="simultaneous")]
    [array([0.   , 0.364, 0.764]), array([0.236, 0.636, 1.   ])]
    """
    p = np.asarray(expected, dtype=np.float64)
    alpha = 1.0 - confidence_level
    if band == "simultaneous":
        eps = np.sqrt(np.log(2.0 / alpha) / (2.0 * n_trials))
        return np.clip(p - eps, 0.0, 1.0), np.clip(p + eps, 0.0, 1.0)
    n = _integer_trials(n_trials)
    if n is None:
        return p.copy(), p.copy()
    return (_stats.binom.ppf(alpha / 2.0, n, p) / n,
            _stats.binom.ppf(1.0 - alpha / 2.0, n, p) / n)


_PROPORTION_LABELS = {
    "quantile": ("Expected proportion p (quantile level)",
                 "Observed proportion of targets below the p-quantile"),
    "interval": ("Expected proportion p (central interval level)",
                 "Observed proportion of targets inside the p-interval"),
}


class QuantileCalibrationDisplay:
    """The quantile-calibration curve of a regressor: observed against expected proportions.

    With ``proportion="quantile"`` (Kuleshov, Fenner and Ermon 2018) the observed proportion at
    ``p`` is the fraction of targets below their predicted ``p``-quantile; with ``"interval"``
    the fraction inside the central ``p``-interval (see
    :func:`skcalib.quantile_calibration_curve`). A calibrated model lies on the diagonal
    (dashed). The region between the curve and the diagonal is shaded, and the legend gives the
    miscalibration area (:func:`skcalib.miscalibration_area`, exact: computed from the sorted
    proportions, not from the drawn grid, with which it agrees to the grid's resolution). With
    ``band=`` a grey band shows where a calibrated model's curve falls with the given
    probability (see :func:`quantile_curve_band`).

    Build it with :meth:`from_predictions` or :meth:`from_estimator`.
    The constructor only stores its arguments (as scikit-learn's Displays do); :meth:`plot`
    checks them before drawing and refuses bad data (lengths that disagree, NaN, unsorted
    edges, levels outside (0, 1), ...) with a ``ValueError`` naming the parameter.

    Parameters
    ----------
    expected : ndarray of shape (n_quantiles,)
        Expected proportions (x-axis).
    observed : ndarray of shape (n_quantiles,)
        Observed proportions (y-axis).
    miscalibration_area : float
        The area between the curve and the diagonal.
    proportion : {"quantile", "interval"}, default="quantile"
        Which proportions the curve shows.
    band_low, band_high : ndarray of shape (n_quantiles,), default=None
        The band of a calibrated model's curve (None: no band).
    band : {"pointwise", "simultaneous"} or None, default=None
        How the band was made.
    confidence_level : float, default=0.95
        Its coverage.
    name : str, default=None
        Legend name of the model.

    Attributes
    ----------
    ax_ : matplotlib Axes
        The axes drawn on.
    figure_ : matplotlib Figure
        Its figure.
    line_ : matplotlib Line2D
        The curve.
    fill_ : matplotlib PolyCollection or None
        The shaded area (None with ``fill=False``).
    band_ : matplotlib PolyCollection or None
        The band (shared by models with the same band on one axis).
    diagonal_ : matplotlib Line2D
        The diagonal (one per axis).

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.distributions import Normal
    >>> from skcalib.plotting import QuantileCalibrationDisplay
    >>> rng = np.random.default_rng(0)
    >>> y = rng.normal(size=500)
    >>> display = QuantileCalibrationDisplay.from_predictions(
    ...     y, Normal(np.zeros(500), np.full(500, 2.0)), name="too wide")
    >>> display.line_.get_label()
    'too wide (miscalibration area 0.101)'
    """

    def __init__(self, expected, observed, miscalibration_area, *, proportion="quantile",
                 band_low=None, band_high=None, band=None, confidence_level=0.95, name=None):
        self.expected = expected
        self.observed = observed
        self.miscalibration_area = miscalibration_area
        self.proportion = proportion
        self.band_low = band_low
        self.band_high = band_high
        self.band = band
        self.confidence_level = confidence_level
        self.name = name

    def plot(self, ax=None, *, name=None, fill=True, line_kwargs=None):
        """Draw the curve, the diagonal and the shaded area on ``ax``.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure if None. Pass the same axes for several models.
        name : str, default=None
            Legend name; ``self.name`` if None.
        fill : bool, default=True
            Shade the region between the curve and the diagonal.
        line_kwargs : dict, default=None
            Passed to ``ax.plot`` for the curve.

        Returns
        -------
        QuantileCalibrationDisplay
            ``self``, with ``ax_``, ``figure_``, ``line_``, ``fill_``, ``band_`` and
            ``diagonal_``.
        """
        name = check_name(name)
        check_bool(fill, "fill")
        line_kwargs = check_kwargs(line_kwargs, "line_kwargs")
        expected = check_display_array(self.expected, "expected", min_size=1, low=0.0,
                                       high=1.0, increasing=True)
        size_of = "one per entry of expected"
        observed = check_display_array(self.observed, "observed", size=expected.size,
                                       size_of=size_of, low=0.0, high=1.0)
        area = check_display_number(self.miscalibration_area, "miscalibration_area", low=0.0)
        check_display_option(self.proportion, "proportion", ("quantile", "interval"))
        band_low, band_high = _check_band_arrays(self, expected.size, size_of, high=1.0)
        check_name(self.name)
        _, ax = get_axes(ax)
        name = name if name is not None else self.name
        area = f"miscalibration area {area:.3f}"
        # a long name gets the area on a second line (one line would spill out of the axes)
        sep = "\n" if name is not None and len(name) + len(area) > 45 else " "
        kwargs = {"label": area if name is None else f"{name}{sep}({area})", "linewidth": 1.5}
        self.diagonal_ = diagonal(ax)
        self.band_ = None
        if band_low is not None:
            kind = "simultaneous" if self.band == "simultaneous" else "pointwise"

            def draw():
                return ax.fill_between(
                    expected, band_low, band_high, color="grey", alpha=0.2,
                    linewidth=0, label=f"{self.confidence_level:.0%} {kind} band if calibrated")

            self.band_ = _shared_band(ax, _CURVE_BAND_GID, (expected, band_low, band_high),
                                      draw)
        (self.line_,) = draw_with(ax.plot, (expected, observed), kwargs, line_kwargs,
                                  "line_kwargs")
        self.fill_ = None
        if fill:
            self.fill_ = ax.fill_between(expected, expected, observed,
                                         color=self.line_.get_color(), alpha=0.2, linewidth=0)
        xlabel, ylabel = _PROPORTION_LABELS.get(self.proportion, _PROPORTION_LABELS["quantile"])
        ax.set_xlim(0.0, 1.0)
        ax.set_ylim(0.0, 1.0)
        ax.set_aspect("equal", adjustable="box")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        _finish_legend(ax, loc="best", fontsize="small")
        self.ax_ = ax
        self.figure_ = ax.figure
        return self

    @classmethod
    def from_predictions(cls, y_true, y_pred, *, quantiles=None, proportion="quantile",
                         band=None, confidence_level=0.95, sample_weight=None, name=None,
                         ax=None, fill=True, line_kwargs=None):
        """The quantile-calibration curve of predictions, with its miscalibration area.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            Real targets.
        y_pred : Distribution or array-like of shape (n_samples, 2)
            Univariate predictive distributions (Normal, Laplace, a Mixture of them,
            Recalibrated, ...), or predicted means and standard deviations (read as Normal).
        quantiles : None, int or array-like of shape (n_quantiles,), default=None
            The expected proportions drawn: None for ``np.linspace(0, 1, 101)``, else as in
            :func:`skcalib.quantile_calibration_curve` (an integer ``m`` for
            ``np.linspace(0.01, 0.99, m)``, or increasing probabilities in ``[0, 1]``).
        proportion : {"quantile", "interval"}, default="quantile"
            Quantile (one-sided) or central-interval proportions, for the curve and the area.
        band : {"pointwise", "simultaneous"} or None, default=None
            Draw where a calibrated model's curve falls: binomial quantiles per point, or the
            Dvoretzky--Kiefer--Wolfowitz band for the whole curve (see
            :func:`quantile_curve_band`); None draws none.
        confidence_level : float, default=0.95
            Coverage of the band, in (0, 1).
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the proportions; for the band, frequency weights (the total weight is
            the number of trials).
        name : str, default=None
            Legend name of the model.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure if None.
        fill : bool, default=True
            Shade the region between the curve and the diagonal.
        line_kwargs : dict, default=None
            Passed to ``ax.plot`` for the curve.

        Returns
        -------
        QuantileCalibrationDisplay
        """
        grid, confidence_level = _check_quantile_params(quantiles, proportion, band,
                                                        confidence_level, name, ax, fill,
                                                        line_kwargs)
        expected, observed = quantile_calibration_curve(y_true, y_pred, quantiles=grid,
                                                        proportion=proportion,
                                                        sample_weight=sample_weight)
        area = miscalibration_area(y_true, y_pred, proportion=proportion,
                                   sample_weight=sample_weight)
        low = high = None
        if band is not None:
            n_samples = as_distribution(y_pred, "y_pred")[0].n_samples
            n_trials = float(_weights_and_trials(sample_weight, n_samples)[1])
            low, high = quantile_curve_band(expected, n_trials, confidence_level, band)
        display = cls(expected, observed, area, proportion=proportion, band_low=low,
                      band_high=high, band=band, confidence_level=confidence_level, name=name)
        return display.plot(ax=ax, fill=fill, line_kwargs=line_kwargs)

    @classmethod
    def from_estimator(cls, estimator, X, y, *, quantiles=None, proportion="quantile",
                       band=None, confidence_level=0.95, sample_weight=None, name=None, ax=None,
                       fill=True, line_kwargs=None):
        """The quantile-calibration curve of a fitted regressor on ``(X, y)``.

        Parameters
        ----------
        estimator : fitted regressor
            With ``predict(X, return_std=True)`` or ``predict_distribution(X)``.
        X : array-like of shape (n_samples, n_features)
            Features.
        y : array-like of shape (n_samples,)
            Real targets.
        quantiles, proportion, band, confidence_level, sample_weight
            As in :meth:`from_predictions`.
        name : str, default=None
            Legend name; the estimator's class name if None.
        ax, fill, line_kwargs
            As in :meth:`from_predictions`.

        Returns
        -------
        QuantileCalibrationDisplay

        Examples
        --------
        >>> from sklearn.datasets import load_diabetes
        >>> from sklearn.linear_model import BayesianRidge
        >>> from skcalib.plotting import QuantileCalibrationDisplay
        >>> X, y = load_diabetes(return_X_y=True)
        >>> model = BayesianRidge().fit(X[:300], y[:300])
        >>> display = QuantileCalibrationDisplay.from_estimator(model, X[300:], y[300:],
        ...                                                     proportion="interval")
        >>> display.line_.get_label()
        'BayesianRidge (miscalibration area 0.034)'
        """
        name = estimator_name(estimator, name)
        _check_quantile_params(quantiles, proportion, band, confidence_level, name, ax, fill,
                               line_kwargs)
        dist = _regression_prediction(estimator, X, y)
        with user_names(_ESTIMATOR_NAMES):
            return cls.from_predictions(y, dist, quantiles=quantiles, proportion=proportion,
                                        band=band, confidence_level=confidence_level,
                                        sample_weight=sample_weight, name=name, ax=ax, fill=fill,
                                        line_kwargs=line_kwargs)


# --------------------------------------------------------------------------------------------
# interval coverage


class IntervalCoverageDisplay:
    """Observed coverage of a regressor's central prediction intervals against their nominal
    levels, with a Clopper--Pearson interval per level.

    The central interval at level ``p`` runs from the predicted ``(1 - p) / 2``- to the
    ``(1 + p) / 2``-quantile; the observed coverage is the fraction of targets inside it
    (:func:`skcalib.interval_coverage`). A calibrated model lies on the diagonal; below it the
    intervals are too narrow (over-confident), above it too wide. The error bars are the
    Clopper--Pearson intervals of each observed fraction (the number of trials is the number of
    samples, or the total frequency weight), so a diagonal outside a bar is more than sampling
    noise at that level. The coverages at several levels come from the same samples and are
    dependent.

    Build it with :meth:`from_predictions` or :meth:`from_estimator`.
    The constructor only stores its arguments (as scikit-learn's Displays do); :meth:`plot`
    checks them before drawing and refuses bad data (lengths that disagree, NaN, unsorted
    edges, levels outside (0, 1), ...) with a ``ValueError`` naming the parameter.

    Parameters
    ----------
    levels : ndarray of shape (n_levels,)
        Nominal levels (x-axis).
    coverage : ndarray of shape (n_levels,)
        Observed coverage (y-axis).
    ci_low, ci_high : ndarray of shape (n_levels,)
        Ends of the Clopper--Pearson interval of each coverage.
    confidence_level : float, default=0.95
        Their coverage.
    n_trials : float, default=None
        Number of samples (or total frequency weight) behind each coverage.
    name : str, default=None
        Legend name of the model.

    Attributes
    ----------
    ax_ : matplotlib Axes
        The axes drawn on.
    figure_ : matplotlib Figure
        Its figure.
    errorbar_ : matplotlib ErrorbarContainer
        Points, connecting line and error bars.
    line_ : matplotlib Line2D
        The points and their connecting line (``errorbar_.lines[0]``).
    diagonal_ : matplotlib Line2D
        The diagonal (one per axis).

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.distributions import Normal
    >>> from skcalib.plotting import IntervalCoverageDisplay
    >>> rng = np.random.default_rng(0)
    >>> y = rng.normal(size=400)
    >>> display = IntervalCoverageDisplay.from_predictions(
    ...     y, Normal(np.zeros(400), np.full(400, 0.5)), levels=[0.5, 0.9], name="too narrow")
    >>> display.coverage.round(3), bool(np.all(display.ci_high < display.levels))
    (array([0.24 , 0.592]), True)
    """

    def __init__(self, levels, coverage, ci_low, ci_high, *, confidence_level=0.95,
                 n_trials=None, name=None):
        self.levels = levels
        self.coverage = coverage
        self.ci_low = ci_low
        self.ci_high = ci_high
        self.confidence_level = confidence_level
        self.n_trials = n_trials
        self.name = name

    def plot(self, ax=None, *, name=None, errorbar_kwargs=None):
        """Draw the coverages with their intervals, and the diagonal, on ``ax``.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure if None. Pass the same axes for several models.
        name : str, default=None
            Legend name; ``self.name`` if None.
        errorbar_kwargs : dict, default=None
            Passed to ``ax.errorbar``.

        Returns
        -------
        IntervalCoverageDisplay
            ``self``, with ``ax_``, ``figure_``, ``errorbar_``, ``line_`` and ``diagonal_``.
        """
        name = check_name(name)
        errorbar_kwargs = check_kwargs(errorbar_kwargs, "errorbar_kwargs")
        levels = check_display_array(self.levels, "levels", min_size=1, low=0.0, high=1.0,
                                     low_open=True, high_open=True)
        size_of = "one per level"
        coverage, ci_low, ci_high = (
            check_display_array(v, n, size=levels.size, size_of=size_of, low=0.0, high=1.0)
            for v, n in ((self.coverage, "coverage"), (self.ci_low, "ci_low"),
                         (self.ci_high, "ci_high")))
        if np.any(ci_low > ci_high):
            raise ValueError("ci_low must not exceed ci_high.")
        check_display_number(self.confidence_level, "confidence_level", low=0.0, high=1.0,
                             low_open=True, high_open=True)
        check_display_number(self.n_trials, "n_trials", low=0.0, low_open=True,
                             allow_inf=True, allow_none=True)
        check_name(self.name)
        _, ax = get_axes(ax)
        name = name if name is not None else self.name
        kwargs = {"marker": "o", "markersize": 4, "capsize": 3, "linewidth": 1.5, "label": name}
        self.diagonal_ = diagonal(ax)
        yerr = np.vstack([coverage - ci_low, ci_high - coverage])
        kwargs["yerr"] = np.maximum(yerr, 0.0)
        self.errorbar_ = draw_with(ax.errorbar, (levels, coverage), kwargs, errorbar_kwargs,
                                   "errorbar_kwargs")
        self.line_ = self.errorbar_.lines[0]
        ax.set_xlim(0.0, 1.0)
        ax.set_ylim(0.0, 1.0)
        ax.set_aspect("equal", adjustable="box")
        ax.set_xlabel("Nominal level of the central prediction interval")
        ax.set_ylabel("Observed coverage")
        _finish_legend(ax, loc="best", fontsize="small")
        self.ax_ = ax
        self.figure_ = ax.figure
        return self

    @classmethod
    def from_predictions(cls, y_true, y_pred, *, levels=DEFAULT_COVERAGE_LEVELS,
                         confidence_level=0.95, sample_weight=None, name=None, ax=None,
                         errorbar_kwargs=None):
        """Observed coverage of the central prediction intervals of predictions.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            Real targets.
        y_pred : Distribution or array-like of shape (n_samples, 2)
            Univariate predictive distributions (Normal, Laplace, a Mixture of them,
            Recalibrated, ...), or predicted means and standard deviations (read as Normal).
        levels : array-like of shape (n_levels,), default=(0.1, 0.2, ..., 0.9, 0.95, 0.99)
            Nominal levels in (0, 1).
        confidence_level : float, default=0.95
            Coverage of the Clopper--Pearson intervals, in (0, 1).
        sample_weight : array-like of shape (n_samples,), default=None
            Frequency weights: weighted coverages, and the total weight as the number of trials
            of the intervals.
        name : str, default=None
            Legend name of the model.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure if None.
        errorbar_kwargs : dict, default=None
            Passed to ``ax.errorbar``.

        Returns
        -------
        IntervalCoverageDisplay
        """
        lv, confidence_level = _check_coverage_params(levels, confidence_level, name, ax,
                                                      errorbar_kwargs)
        coverage = np.atleast_1d(interval_coverage(y_true, y_pred, levels=lv,
                                                   sample_weight=sample_weight))
        dist, _ = as_distribution(y_pred, "y_pred")
        n_trials = float(_weights_and_trials(sample_weight, dist.n_samples)[1])
        low, high = binomial_interval(coverage, np.full(coverage.shape, n_trials),
                                      confidence_level, "clopper-pearson")
        display = cls(lv.astype(np.float64), coverage, low, high,
                      confidence_level=confidence_level, n_trials=n_trials, name=name)
        return display.plot(ax=ax, errorbar_kwargs=errorbar_kwargs)

    @classmethod
    def from_estimator(cls, estimator, X, y, *, levels=DEFAULT_COVERAGE_LEVELS,
                       confidence_level=0.95, sample_weight=None, name=None, ax=None,
                       errorbar_kwargs=None):
        """Observed coverage of a fitted regressor's central prediction intervals on ``(X, y)``.

        Parameters
        ----------
        estimator : fitted regressor
            With ``predict(X, return_std=True)`` or ``predict_distribution(X)``.
        X : array-like of shape (n_samples, n_features)
            Features.
        y : array-like of shape (n_samples,)
            Real targets.
        levels, confidence_level, sample_weight
            As in :meth:`from_predictions`.
        name : str, default=None
            Legend name; the estimator's class name if None.
        ax, errorbar_kwargs
            As in :meth:`from_predictions`.

        Returns
        -------
        IntervalCoverageDisplay

        Examples
        --------
        >>> from sklearn.datasets import load_diabetes
        >>> from sklearn.linear_model import BayesianRidge
        >>> from skcalib.plotting import IntervalCoverageDisplay
        >>> X, y = load_diabetes(return_X_y=True)
        >>> model = BayesianRidge().fit(X[:300], y[:300])
        >>> display = IntervalCoverageDisplay.from_estimator(model, X[300:], y[300:],
        ...                                                  levels=[0.5, 0.9])
        >>> display.coverage.round(3)
        array([0.549, 0.908])
        """
        name = estimator_name(estimator, name)
        _check_coverage_params(levels, confidence_level, name, ax, errorbar_kwargs)
        dist = _regression_prediction(estimator, X, y)
        with user_names(_ESTIMATOR_NAMES):
            return cls.from_predictions(y, dist, levels=levels, confidence_level=confidence_level,
                                        sample_weight=sample_weight, name=name, ax=ax,
                                        errorbar_kwargs=errorbar_kwargs)
