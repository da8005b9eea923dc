"""Reliability curves: the data of a reliability diagram, with binomial intervals per bin.

The bins are those of :func:`skcalib.calibration_error` (the binnings of
:mod:`skcalib._problems.binning`: right-closed bins, ``p = 0`` in the first and ``p = 1`` in the
last bin, quantile edges deduplicated), so that the count-weighted mean of
``|prob_true - prob_pred|`` over the bins of a curve is the ECE with the same ``n_bins``,
``strategy`` and ``mode``. The curves' set-up, the binomial intervals and the consistency bands
are in :mod:`skcalib._problems.reliability`.
"""

import numpy as np

from .. import _dask
from .._problems.binning import edge_levels, quantiles_of_sorted
from .._problems.reliability import (
    bin_cells,
    binomial_interval,
    check_curve_params,
    curve_labels,
    curve_setup,
)
from .._validation import check_option
from ._binned import chunked_problem_sums

__all__ = ["ReliabilityCurve", "reliability_curve"]

_INTERVALS = ("clopper-pearson", "wilson", "jeffreys")


class ReliabilityCurve:
    """Per-bin data of one reliability curve (non-empty bins only, in increasing order).

    Every array attribute has one entry per kept bin (bins with at least ``min_bin_size``
    samples), ordered by the bin's position on ``[0, 1]``.

    Parameters
    ----------
    prob_pred : ndarray of shape (n_kept,)
        Mean predicted probability of each bin (sample-weighted): the x coordinate of the
        diagram.
    prob_true : ndarray of shape (n_kept,)
        Observed frequency of the outcome in each bin (sample-weighted): the y coordinate.
    counts : ndarray of shape (n_kept,), dtype int64
        Number of samples (rows with a positive weight) in each bin.
    weight_sums : ndarray of shape (n_kept,)
        Total sample weight of each bin (equal to ``counts`` without ``sample_weight``).
    ci_low, ci_high : ndarray of shape (n_kept,)
        Ends of the binomial confidence interval of each bin's outcome frequency.
    bin_lower, bin_upper : ndarray of shape (n_kept,)
        Edges of each bin: it holds the predictions ``p`` with ``bin_lower < p <= bin_upper``
        (the first bin also ``p = bin_lower``).
    bin_index : ndarray of shape (n_kept,), dtype int64
        Position of each bin among all bins, empty and dropped ones included (0-based; for
        ``strategy="quantile"`` the numbering skips the bins of repeated edges, except with more
        than ``max(4 n_samples, 4096)`` bins, where repeated edges keep their numbers).
    label : label or None
        The class whose probability is drawn (``pos_label`` for ``"binary"``, the class for a
        ``"classwise"`` curve) or ``None`` for ``"top_label"`` (the confidence against the
        accuracy).
    mode, strategy, n_bins, interval, confidence_level
        The settings that made the curve.

    Attributes
    ----------
    frequency, mean_predicted : ndarray of shape (n_kept,)
        Aliases of ``prob_true`` and ``prob_pred`` (the names of
        :class:`SmoothReliabilityCurve`, so that a plot can draw either curve).
    n_kept : int
        Number of bins on the curve (also ``len(curve)``).

    See Also
    --------
    reliability_curve : computes this object.
    """

    _ARRAYS = ("prob_pred", "prob_true", "counts", "weight_sums", "ci_low", "ci_high",
               "bin_lower", "bin_upper", "bin_index")

    def __init__(self, prob_pred, prob_true, counts, weight_sums, ci_low, ci_high, bin_lower,
                 bin_upper, bin_index, *, label=None, mode="binary", strategy="uniform",
                 n_bins=15, interval="clopper-pearson", confidence_level=0.95):
        self.prob_pred = prob_pred
        self.prob_true = prob_true
        self.counts = counts
        self.weight_sums = weight_sums
        self.ci_low = ci_low
        self.ci_high = ci_high
        self.bin_lower = bin_lower
        self.bin_upper = bin_upper
        self.bin_index = bin_index
        self.label = label
        self.mode = mode
        self.strategy = strategy
        self.n_bins = n_bins
        self.interval = interval
        self.confidence_level = confidence_level

    @property
    def frequency(self):
        """Alias of ``prob_true`` (the name used by :class:`SmoothReliabilityCurve`)."""
        return self.prob_true

    @property
    def mean_predicted(self):
        """Alias of ``prob_pred`` (the name used by :class:`SmoothReliabilityCurve`)."""
        return self.prob_pred

    @property
    def n_kept(self):
        """Number of bins on the curve."""
        return int(self.prob_pred.shape[0])

    def __len__(self):
        return self.n_kept

    def __repr__(self):
        lab = "" if self.label is None else f", label={self.label!r}"
        return (f"ReliabilityCurve(mode={self.mode!r}{lab}, strategy={self.strategy!r}, "
                f"n_bins={self.n_bins}, bins_kept={self.n_kept}, interval={self.interval!r}, "
                f"confidence_level={self.confidence_level})")


# --------------------------------------------------------------------------------------------


def _bin_edges(binning, strategy, n_bins, ids):
    """Lower and upper edges of the bins ``ids`` of a fitted 1-D binning."""
    if strategy == "uniform":
        k = ids.astype(np.float64)
        return k / n_bins, (k + 1.0) / n_bins
    if binning.edges_ is not None:
        full = np.concatenate(([0.0], binning.edges_[0], [1.0]))
        return full[ids], full[ids + 1]
    # Implicit edges (huge n_bins): bin k lies between the quantiles at levels k / n_bins and
    # (k + 1) / n_bins of the fitted values.
    s = binning.sorted_[0]
    lower = np.where(ids > 0, quantiles_of_sorted(s, edge_levels(ids, n_bins)), 0.0)
    upper = np.where(ids + 1 < n_bins,
                     quantiles_of_sorted(s, edge_levels(np.minimum(ids + 1, n_bins - 1),
                                                          n_bins)), 1.0)
    return lower, upper


def _curve(Q, T, w, w_freq, binning, strategy, n_bins, min_bin_size, confidence_level,
           interval, label, mode):
    """One reliability curve of the problem ``(Q, T)`` (1-D arrays) with a fitted binning."""
    cells, ids = bin_cells(Q, binning)
    n = cells.shape[0]
    n_cells = int(cells.max()) + 1 if n else 0
    if w is None:
        counts = np.bincount(cells, minlength=n_cells)
        W = counts.astype(np.float64)
        sum_q = np.bincount(cells, weights=Q, minlength=n_cells)
        sum_t = np.bincount(cells, weights=T, minlength=n_cells)
        n_trials = W
    else:
        counts = np.bincount(cells, weights=(w > 0), minlength=n_cells).astype(np.int64)
        W = np.bincount(cells, weights=w, minlength=n_cells)
        sum_q = np.bincount(cells, weights=Q * w, minlength=n_cells)
        sum_t = np.bincount(cells, weights=T * w, minlength=n_cells)
        with np.errstate(over="ignore"):
            n_trials = np.bincount(cells, weights=w_freq, minlength=n_cells)
    return _curve_from_sums(counts, W, sum_q, sum_t, n_trials, ids, binning, strategy, n_bins,
                            min_bin_size, confidence_level, interval, label, mode)


def _curve_from_sums(counts, W, sum_q, sum_t, n_trials, ids, binning, strategy, n_bins,
                     min_bin_size, confidence_level, interval, label, mode):
    """The curve of per-bin sums (bins ``ids``, or ``0 .. len(W) - 1`` if None): also the end
    of the chunked path, whose merged sums come from :mod:`skcalib._dask`."""
    keep = (counts >= min_bin_size) & (W > 0)
    k = np.flatnonzero(keep)
    Wk = W[k]
    prob_pred = sum_q[k] / Wk
    prob_true = sum_t[k] / Wk
    ntr = n_trials[k]
    lo, hi = binomial_interval(prob_true, ntr, confidence_level, interval)
    bin_index = (ids[k] if ids is not None else k).astype(np.int64)
    bin_lower, bin_upper = _bin_edges(binning, strategy, n_bins, bin_index)
    return ReliabilityCurve(
        prob_pred, prob_true, counts[k].astype(np.int64), ntr, lo, hi, bin_lower, bin_upper,
        bin_index, label=label, mode=mode, strategy=strategy, n_bins=n_bins, interval=interval,
        confidence_level=confidence_level,
    )


def reliability_curve(y_true, y_proba, *, mode="auto", strategy="uniform", n_bins=15,
                      min_bin_size=1, confidence_level=0.95, interval="clopper-pearson",
                      labels=None, pos_label=None, sample_weight=None):
    """Reliability-curve data: per bin, mean prediction, outcome frequency, count and interval.

    The predictions are grouped into bins; each bin gives a point of a reliability diagram (its
    mean predicted probability against the observed frequency of the outcome) and a binomial
    confidence interval of that frequency. The bins are those of
    :func:`skcalib.calibration_error`, so that ``np.average(abs(c.prob_true - c.prob_pred),
    weights=c.weight_sums)`` is the ECE with the same ``n_bins``, ``strategy`` and ``mode`` (with
    the default ``min_bin_size=1``).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels (any hashable, sortable values).
    y_proba : array-like of shape (n_samples,) or (n_samples, n_classes)
        Predicted probabilities: P(``pos_label``) for a binary problem, or one column per class
        (columns in the order of the sorted ``labels``). Dask arrays (also for ``y_true`` and
        ``sample_weight``) are reduced chunk by chunk without loading them, with
        ``strategy="uniform"`` only (see :ref:`scaling`).
    mode : {"auto", "binary", "top_label", "classwise"}, default="auto"
        * ``"binary"``: P(``pos_label``) against the indicator of ``pos_label`` (scikit-learn's
          ``calibration_curve``); two classes only;
        * ``"top_label"``: the confidence ``max_k p_k`` against the accuracy (Guo et al. 2017). A
          row whose maximum is attained by several classes is read as a uniform draw among
          them: its correctness is ``1/|ties|`` if the label is one of them (the package-wide tie
          rule), so the outcome frequency of a bin may be fractional;
        * ``"classwise"``: one curve per class ``k``, ``p_k`` against ``1{y = k}``, each binned on
          its own (quantile edges per class); a list of curves is returned;
        * ``"auto"``: ``"binary"`` for two classes, ``"top_label"`` otherwise.
    strategy : {"uniform", "quantile"}, default="uniform"
        * ``"uniform"``: ``n_bins`` equal-width bins on ``[0, 1]``, right-closed
          (``(k - 1) / n_bins < p <= k / n_bins``), ``p = 0`` in the first bin;
        * ``"quantile"``: equal-mass bins, edges at the ``k / n_bins`` quantiles of the
          predictions (numpy's linear interpolation; repeated edges merged), right-closed. Edges
          are computed without sample weights.
    n_bins : int, default=15
        Number of bins (before empty and small bins are dropped), at least 1.
    min_bin_size : int, default=1
        Bins with fewer samples (rows with a positive weight) are **dropped** from the curve; the
        other bins are left as they are (no merging), so every kept bin is a bin of
        :func:`skcalib.calibration_error`. Empty bins are always dropped, as scikit-learn's
        ``calibration_curve`` does.
    confidence_level : float, default=0.95
        Level of the two-sided interval of each bin's outcome frequency, in (0, 1).
    interval : {"clopper-pearson", "wilson", "jeffreys"}, default="clopper-pearson"
        Binomial interval of the frequency ``x / n`` (``x`` outcomes in ``n`` samples):

        * ``"clopper-pearson"`` (the default): the "exact" interval from beta quantiles. Its
          coverage is at least the nominal level for every true frequency and bin size; it is the
          conservative choice for small bins, where reading a reliability diagram is most
          error-prone, and the interval clinical papers report;
        * ``"wilson"``: the score interval; shorter, coverage close to nominal on average but below
          it for some frequencies;
        * ``"jeffreys"``: equal-tailed Beta(x + 1/2, n - x + 1/2) quantiles, with the lower end set
          to 0 when ``x = 0`` and the upper end to 1 when ``x = n`` (Brown, Cai and DasGupta 2001).

        All three agree for large bins and differ strongly in small ones. Inside a bin the
        predictions vary, so the number of outcomes is Poisson-binomial rather than binomial; its
        variance is at most the binomial one, so the intervals are, if anything, conservative for
        the mean outcome probability of the bin. Fractional outcomes (top-label ties) and weights
        enter the formulas as real ``x`` and ``n``.
    labels : array-like, default=None
        All class labels (default: those present in ``y_true``).
    pos_label : label, default=None
        Positive class for a one-column ``y_proba`` and for ``mode="binary"``; default: the greater
        label.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the samples. ``prob_pred`` and ``prob_true`` are weighted means and only depend
        on weight ratios; for the intervals the weights are **frequency weights** (``n`` of a bin
        is its total weight, ``weight_sums``), as for ``calibration_error(debias=True)``: integer
        weights give the curve and intervals of the data with rows repeated (``counts`` still
        counts rows). Normalise weights that are not frequencies to the effective sample size
        you intend before calling.

    Returns
    -------
    curve : ReliabilityCurve or list of ReliabilityCurve
        One :class:`ReliabilityCurve` (``"binary"``, ``"top_label"``), or for ``"classwise"`` a
        list with one curve per class, in the order of the sorted labels (each curve's ``label``
        names its class; the curves may have different numbers of bins).

    See Also
    --------
    calibration_error : the ECE and MCE of the same bins.
    sklearn.calibration.calibration_curve : the binary curve without counts or intervals.

    Notes
    -----
    With ``mode="binary"`` the curve equals scikit-learn's ``calibration_curve(y_true, y_proba,
    n_bins=n_bins, strategy=strategy)`` (``prob_true``, ``prob_pred``) with two differences at
    the level of the last bit: scikit-learn's uniform edges are ``np.linspace(0, 1, n_bins + 1)``
    (``k * (1 / n_bins)``, e.g. ``0.30000000000000004`` for 3/10) where skcalib's are exactly
    ``k / n_bins`` (a prediction equal to ``0.30000000000000004``, which is ``1 - 0.7``, is in
    the fourth of ten bins here, in the third there); its quantile edges are
    ``np.percentile(p, 100 * linspace(0, 1, n_bins + 1))``, skcalib's numpy's linear quantiles
    at the levels ``k * (1 / n_bins)`` (those of :func:`calibration_error`), and the percentage
    levels can round further below ``k / n_bins`` (``4/6`` becomes ``0.6666666666666665``). When
    an edge falls on a data point (``(n - 1) k / n_bins`` an integer), that point can then be in
    the upper bin in scikit-learn and in the lower one here, as the right-closed convention says
    (n = 400, ``n_bins=6``: the point of index 266).

    References
    ----------
    C. J. Clopper, E. S. Pearson. The use of confidence or fiducial limits illustrated in the case
    of the binomial. Biometrika, 1934.
    E. B. Wilson. Probable inference, the law of succession, and statistical inference. JASA, 1927.
    L. D. Brown, T. T. Cai, A. DasGupta. Interval estimation for a binomial proportion.
    Statistical Science, 2001.
    A. Niculescu-Mizil, R. Caruana. Predicting good probabilities with supervised learning.
    ICML 2005.

    Examples
    --------
    >>> from skcalib import reliability_curve
    >>> y_true = [0, 0, 1, 1, 1, 0]
    >>> y_proba = [0.1, 0.3, 0.45, 0.8, 0.9, 0.7]
    >>> curve = reliability_curve(y_true, y_proba, n_bins=2)
    >>> curve.prob_pred
    array([0.28333333, 0.8       ])
    >>> curve.prob_true
    array([0.33333333, 0.66666667])
    >>> curve.counts
    array([3, 3])
    >>> curve.ci_low.round(4), curve.ci_high.round(4)
    (array([0.0084, 0.0943]), array([0.9057, 0.9916]))
    >>> curve
    ReliabilityCurve(mode='binary', label=1, strategy='uniform', n_bins=2, bins_kept=2, \
interval='clopper-pearson', confidence_level=0.95)
    """
    check_option(interval, "interval", _INTERVALS)
    if _dask.any_dask(y_true, y_proba, sample_weight):
        return _chunked_curves(y_true, y_proba, mode, strategy, n_bins, min_bin_size,
                               confidence_level, interval, labels, pos_label, sample_weight)
    setup = curve_setup(y_true, y_proba, mode, strategy, n_bins, min_bin_size, confidence_level,
                        labels, pos_label, sample_weight)
    m, w, w_freq, n_bins, min_bin_size, confidence_level = setup[1:]
    curves = [_curve(Q[:, 0], T[:, 0], w, w_freq, binning, strategy, n_bins, min_bin_size,
                     confidence_level, interval, lab, m) for Q, T, binning, lab in setup[0]]
    return curves if m == "classwise" else curves[0]


def _chunked_curves(y_true, y_proba, mode, strategy, n_bins, min_bin_size, confidence_level,
                    interval, labels, pos_label, sample_weight):
    """Reliability curves of Dask arrays from per-bin sums merged over the chunks (see
    :mod:`skcalib._dask`); equal to the in-memory curves up to rounding."""
    n_bins, min_bin_size, confidence_level = check_curve_params(
        mode, strategy, n_bins, min_bin_size, confidence_level)
    sums, m, classes, binning = chunked_problem_sums(y_true, y_proba, sample_weight, mode,
                                                     strategy, n_bins, labels, pos_label)
    curves = []
    for cs, lab in zip(sums, curve_labels(classes, m, pos_label)):
        W = cs.weight
        if not W.sum() > 0:
            raise ValueError("sample_weight must have a positive sum (all weights are zero).")
        with np.errstate(over="ignore"):
            n_trials = W if sample_weight is None else W * cs.scale
        curves.append(_curve_from_sums(
            cs.counts, W, cs.sums["q"][:, 0], cs.sums["t"][:, 0], n_trials, cs.keys,
            binning, strategy, n_bins, min_bin_size, confidence_level, interval, lab, m))
    return curves if m == "classwise" else curves[0]
