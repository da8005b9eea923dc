"""What the three Displays of a regressor's predictive distributions share: the checks of their
arguments, the data they draw and the bands of a calibrated model.

:class:`~skcalib.plotting.PITHistogramDisplay` (``_pit.py``),
:class:`~skcalib.plotting.QuantileCalibrationDisplay` (``_quantile.py``) and
:class:`~skcalib.plotting.IntervalCoverageDisplay` (``_coverage.py``) draw; this module computes.
Every number drawn comes from :mod:`skcalib.metrics` (:func:`~skcalib.pit`,
:func:`~skcalib.quantile_calibration_curve`, :func:`~skcalib.miscalibration_area`,
:func:`~skcalib.interval_coverage`) through :func:`pit_histogram_data`,
:func:`quantile_curve_data` and :func:`coverage_data` (:func:`bounds_coverage_data` for
intervals given by their bounds, :func:`~skcalib.interval_bounds_coverage`); this module adds
the reference bands
(:func:`pit_histogram_band`, :func:`quantile_curve_band`).

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
from .._problems.univariate import check_bounds_level, check_grid, check_levels, is_univariate
from .._problems.reliability import binomial_interval
from ..metrics import (interval_bounds_coverage, interval_coverage, miscalibration_area, pit,
                       quantile_calibration_curve)
from ._base import (check_ax, check_display_array, check_display_number, check_display_option,
                    check_kwargs, check_name, check_rows, distribution_of)

__all__ = ["BANDS", "DEFAULT_COVERAGE_LEVELS", "ESTIMATOR_NAMES", "check_pit_params",
           "check_quantile_params", "check_coverage_params", "regression_prediction",
           "check_band_arrays", "shared_band", "finish_legend", "pit_histogram_band",
           "pit_histogram_data", "quantile_curve_band", "quantile_curve_data", "coverage_data",
           "check_bounds_params", "bounds_coverage_data"]

BANDS = ("pointwise", "simultaneous")
#: The default nominal levels of :class:`~skcalib.plotting.IntervalCoverageDisplay`.
DEFAULT_COVERAGE_LEVELS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99)


# --------------------------------------------------------------------------------------------
# argument checks shared by the three Displays (before any work)


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


def check_pit_params(bins, band, confidence_level, name, ax, histtype, hist_kwargs):
    """Every argument of the PIT histogram but the data, checked before any work:
    ``(edges, confidence_level)``."""
    edges = _check_edges(bins)
    if band is not None:
        check_option(band, "band", BANDS)
    confidence_level = check_confidence_level(confidence_level)
    check_name(name)
    check_ax(ax)
    check_option(histtype, "histtype", ("bar", "step"))
    check_kwargs(hist_kwargs, "hist_kwargs")
    return edges, confidence_level


def check_quantile_params(quantiles, proportion, band, confidence_level, name, ax, fill,
                           line_kwargs):
    """The same for the quantile-calibration curve: ``(grid of expected proportions,
    confidence_level)``."""
    grid = np.linspace(0.0, 1.0, 101) if quantiles is None else check_grid(quantiles)
    check_option(proportion, "proportion", ("quantile", "interval"))
    if band is not None:
        check_option(band, "band", BANDS)
    confidence_level = check_confidence_level(confidence_level)
    check_name(name)
    check_ax(ax)
    check_bool(fill, "fill")
    check_kwargs(line_kwargs, "line_kwargs")
    return grid, confidence_level


def check_coverage_params(levels, confidence_level, name, ax, errorbar_kwargs):
    """The same for the interval coverage: ``(levels as a 1-D array, confidence_level)``."""
    lv = np.atleast_1d(check_levels(levels, "levels"))
    confidence_level = check_confidence_level(confidence_level)
    check_name(name)
    check_ax(ax)
    check_kwargs(errorbar_kwargs, "errorbar_kwargs")
    return lv, confidence_level


def regression_prediction(estimator, X, y):
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
ESTIMATOR_NAMES = {"y_true": "y", "y_pred": "the estimator's predictions on X"}


def check_band_arrays(display, size, size_of, low=0.0, high=None):
    """``(band_low, band_high)`` of a Display (both None, or both arrays of ``size`` finite
    entries in ``[low, high]``) and its ``band`` and ``confidence_level``."""
    check_display_option(display.band, "band", BANDS, allow_none=True)
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


def shared_band(ax, gid, key, draw):
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


def finish_legend(ax, **kwargs):
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.legend(**kwargs)


# --------------------------------------------------------------------------------------------
# the PIT histogram's data and band


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


def pit_histogram_data(y_true, y_pred, edges, *, band, confidence_level, sample_weight,
                       random_state=None, ranks=False):
    """The data of a PIT histogram: ``(heights, n_trials, band_low, band_high, pit_values)``.

    ``heights`` are the (weighted) fractions of the PIT values (:func:`skcalib.pit`) in each
    bin of ``edges`` divided by its width; ``n_trials`` the number of PIT values or their total
    frequency weight; the band (None, None without ``band``) is :func:`pit_histogram_band`.
    """
    u = pit(y_true, y_pred, random_state=random_state, ranks=ranks)
    w, n_trials = _weights_and_trials(sample_weight, u.size)
    counts, _ = np.histogram(u, bins=edges, weights=w)
    total = float(u.size) if w is None else float(np.sum(w))
    heights = counts / (total * np.diff(edges))
    low = high = None
    if band is not None:
        low, high = pit_histogram_band(edges, n_trials, confidence_level, band)
    return heights, n_trials, low, high, u


# --------------------------------------------------------------------------------------------
# the quantile-calibration curve's data and band


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


def quantile_curve_data(y_true, y_pred, grid, *, proportion, band, confidence_level,
                        sample_weight):
    """The data of a quantile-calibration curve: ``(expected, observed, area, band_low,
    band_high)``, from :func:`skcalib.quantile_calibration_curve` on ``grid``,
    :func:`skcalib.miscalibration_area` and :func:`quantile_curve_band` (None, None without
    ``band``)."""
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
    return expected, observed, area, low, high


# --------------------------------------------------------------------------------------------
# the interval coverage's data


def coverage_data(y_true, y_pred, levels, *, confidence_level, sample_weight):
    """The data of the interval coverage: ``(coverage, ci_low, ci_high, n_trials)``, the
    observed coverage of the central intervals at ``levels`` (:func:`skcalib.interval_coverage`)
    and its Clopper--Pearson interval with ``n_trials`` trials (the number of samples or the
    total frequency weight)."""
    coverage = np.atleast_1d(interval_coverage(y_true, y_pred, levels=levels,
                                               sample_weight=sample_weight))
    dist, _ = as_distribution(y_pred, "y_pred")
    n_trials = float(_weights_and_trials(sample_weight, dist.n_samples)[1])
    low, high = binomial_interval(coverage, np.full(coverage.shape, n_trials),
                                   confidence_level, "clopper-pearson")
    return coverage, low, high, n_trials


def check_bounds_params(y_interval, level, confidence_level, name, ax, errorbar_kwargs):
    """Every argument of the coverage of interval bounds but the data, checked before any work:
    ``level`` is required for an array ``y_interval`` and must be None for a dict (whose keys
    are the levels). Returns ``(level as a float or None, confidence_level)``."""
    level = check_bounds_level(y_interval, level)
    _, confidence_level = check_coverage_params(0.5, confidence_level, name, ax, errorbar_kwargs)
    return level, confidence_level


def bounds_coverage_data(y_true, y_interval, level, *, confidence_level, sample_weight):
    """The data of the coverage of intervals given by their bounds: ``(levels, coverage,
    ci_low, ci_high, n_trials)``, from :func:`skcalib.interval_bounds_coverage` (an
    ``(n_samples, 2)`` array at ``level``, or a dict ``{level: bounds}``) and the
    Clopper--Pearson interval of each coverage with ``n_trials`` trials."""
    cov = interval_bounds_coverage(y_true, y_interval, sample_weight=sample_weight)
    if isinstance(cov, dict):
        levels = np.array(list(cov), dtype=np.float64)
        coverage = np.array(list(cov.values()), dtype=np.float64)
    else:
        levels, coverage = np.array([level]), np.array([cov])
    n_trials = float(_weights_and_trials(sample_weight, np.shape(y_true)[0])[1])
    low, high = binomial_interval(coverage, np.full(coverage.shape, n_trials),
                                  confidence_level, "clopper-pearson")
    return levels, coverage, low, high, n_trials
