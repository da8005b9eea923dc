"""The bins of a reliability diagram, their binomial intervals and consistency bands.

Internal API (used by ``metrics`` and ``plotting``):

* :func:`binomial_interval` -- Clopper-Pearson, Wilson or Jeffreys interval of a binomial
  proportion with real (weighted, fractional) counts;
* :func:`check_curve_params` -- the options of a reliability curve, checked
  (:data:`CURVE_MODES`, :data:`CURVE_STRATEGIES`);
* :func:`curve_labels` -- the label of each curve of a mode;
* :func:`curve_setup` -- validated inputs of the curves: one ``(Q, T, fitted binning, label)``
  per curve (the problems of :mod:`skcalib._problems.modes`, the bins of
  :mod:`skcalib._problems.binning`, those of :func:`skcalib.calibration_error`);
* :func:`bin_cells` -- the cell of every prediction under a fitted binning (compacted ids for a
  huge ``n_bins``);
* :func:`consistency_bands` -- the consistency bars of a reliability diagram (Broecker and Smith
  2007), drawn by :class:`skcalib.plotting.ReliabilityDisplay`.
"""

import numpy as np
from scipy import special as _special

from .._validation import (
    check_confidence_level,
    check_labels_and_probabilities,
    check_n_bins,
    check_n_resamples,
    check_option,
    check_random_state_param,
    check_rng,
    check_scalar_param,
    check_work_memory,
    pos_index,
)
from .binning import make_binning
from .modes import make_problems, resolve_mode

__all__ = ["CURVE_MODES", "CURVE_STRATEGIES", "bin_cells", "binomial_interval",
           "check_curve_params", "consistency_bands", "curve_labels", "curve_setup"]

#: The ``mode`` options of a reliability curve.
CURVE_MODES = ("auto", "binary", "top_label", "classwise")
#: The ``strategy`` options of a reliability curve.
CURVE_STRATEGIES = ("uniform", "quantile")


def binomial_interval(freq, n, confidence_level, method):
    """Two-sided interval of a binomial proportion ``freq = x / n`` for arrays ``freq`` and ``n``.

    ``x`` and ``n`` may be non-integer (weighted counts, top-label ties); the formulas are the
    usual ones with the beta quantile function, which is defined for real parameters. ``x = 0``
    gives a lower end 0 and ``x = n`` an upper end 1 (for all three methods); a bin whose ``n``
    exceeds ``2**53`` or overflowed to infinity gets the degenerate interval ``[freq, freq]``
    (the limit: the half-width is below ``1e-7`` there, and the beta quantiles of such
    parameters are NaN).
    """
    alpha = 1.0 - confidence_level
    finite = n <= 2.0**53
    nn = np.where(finite, n, 1.0)
    p = np.clip(freq, 0.0, 1.0)
    xx = np.minimum(p * nn, nn)
    zero = p <= 0.0
    full = p >= 1.0
    if method == "wilson":
        z = _special.ndtri(0.5 + 0.5 * confidence_level)
        denom = 2.0 * (nn + z * z)
        center = (2.0 * nn * p + z * z) / denom
        delta = z / denom * np.sqrt(4.0 * nn * p * (1.0 - p) + z * z)
        lo, hi = center - delta, center + delta
    else:
        shift = 0.5 if method == "jeffreys" else 0.0
        # Clopper-Pearson: Beta(x, n - x + 1) and Beta(x + 1, n - x) quantiles; Jeffreys:
        # Beta(x + 1/2, n - x + 1/2). Safe parameters where the end is set to 0 or 1 below.
        a_lo = np.where(zero, 1.0, xx + shift)
        b_lo = nn - xx + (0.5 if method == "jeffreys" else 1.0)
        a_hi = xx + (0.5 if method == "jeffreys" else 1.0)
        b_hi = np.where(full, 1.0, nn - xx + shift)
        lo = _special.betaincinv(a_lo, b_lo, alpha / 2.0)
        hi = _special.betaincinv(a_hi, b_hi, 1.0 - alpha / 2.0)
    lo = np.where(zero, 0.0, np.clip(lo, 0.0, 1.0))
    hi = np.where(full, 1.0, np.clip(hi, 0.0, 1.0))
    # The interval always contains the point estimate (guards the last-ulp rounding).
    lo = np.minimum(lo, p)
    hi = np.maximum(hi, p)
    lo = np.where(finite, lo, p)
    hi = np.where(finite, hi, p)
    return lo, hi


def bin_cells(Q, binning):
    """Cell of every prediction of ``Q`` (1-D) under a fitted binning, and the bin ids of the
    cells (None when cells are bin ids; compacted ids for the sparse cells of a huge n_bins)."""
    cells = binning.assign(Q[:, None])
    n = cells.shape[0]
    ids = None
    if n and int(cells.max()) >= 2 * n + 1024:  # sparse bin ids of a huge n_bins
        ids, cells = np.unique(cells, return_inverse=True)
        cells = cells.ravel()
    return cells, ids


def check_curve_params(mode, strategy, n_bins, min_bin_size, confidence_level):
    """The curve's options, checked: ``(n_bins, min_bin_size, confidence_level)``."""
    check_option(mode, "mode", CURVE_MODES)
    check_option(strategy, "strategy", CURVE_STRATEGIES)
    n_bins = check_n_bins(n_bins)
    min_bin_size = int(check_scalar_param(min_bin_size, "min_bin_size", min_val=1))
    return n_bins, min_bin_size, check_confidence_level(confidence_level)


def curve_labels(classes, mode, pos_label):
    """The label of each curve of a mode (None for the top-label curve), as Python scalars."""
    if mode == "binary":
        labels = [classes[pos_index(classes, pos_label)]]
    elif mode == "classwise":
        labels = list(classes)
    else:
        labels = [None]
    return [lab.item() if isinstance(lab, np.generic) else lab for lab in labels]


def curve_setup(y_true, y_proba, mode, strategy, n_bins, min_bin_size, confidence_level, labels,
                pos_label, sample_weight):
    """Validated inputs of a reliability curve: ``([(Q, T, fitted binning, label), ...], mode,
    w, w_freq, n_bins, min_bin_size, confidence_level)``, one tuple per curve."""
    n_bins, min_bin_size, confidence_level = check_curve_params(
        mode, strategy, n_bins, min_bin_size, confidence_level)
    data = check_labels_and_probabilities(y_true, y_proba, labels=labels, pos_label=pos_label,
                                          sample_weight=sample_weight)
    m = resolve_mode(mode, data.n_classes)
    w_freq = data.sample_weight
    w = None
    if w_freq is not None:
        w = w_freq / w_freq.max()  # only ratios matter for the means
    problems = make_problems(data, m, pos_label)
    parts = [(Q, T, make_binning(strategy, n_bins).fit(Q), lab)
             for (Q, T), lab in zip(problems, curve_labels(data.classes, m, pos_label))]
    return parts, m, w, w_freq, n_bins, min_bin_size, confidence_level


_CHUNK = 2**22  # draws per resampling chunk (32 MB of float64)


def _consistency(Q, w, binning, min_bin_size, confidence_level, n_resamples, rng):
    """Per kept bin, the ``confidence_level`` range of the outcome frequency of a calibrated
    model with the predictions ``Q`` (1-D): ``n_resamples`` draws of ``y* ~ Bernoulli(Q)``."""
    cells, _ = bin_cells(Q, binning)
    n = cells.shape[0]
    n_cells = int(cells.max()) + 1 if n else 0
    ww = np.ones(n) if w is None else w
    counts = np.bincount(cells, weights=(ww > 0), minlength=n_cells)
    W = np.bincount(cells, weights=ww, minlength=n_cells)
    keep = (counts >= min_bin_size) & (W > 0)
    # the samples of the kept bins, ordered by bin, so that a bin is a contiguous slice
    rows = np.flatnonzero(keep[cells])
    rows = rows[np.argsort(cells[rows], kind="stable")]
    q, wr = Q[rows], ww[rows]
    starts = np.flatnonzero(np.r_[True, np.diff(cells[rows]) != 0]) if rows.size else rows
    Wk = W[keep]
    # the frequencies and np.quantile's sorted copy of them
    check_work_memory(2.0 * n_resamples * Wk.size, "n_resamples", n_resamples,
                      "the bands' simulated frequencies")
    freq = np.empty((n_resamples, Wk.size))
    step = max(1, _CHUNK // max(1, rows.size))
    for b0 in range(0, n_resamples, step):  # loop over chunks of resamples, not samples
        b1 = min(n_resamples, b0 + step)
        draws = rng.random((b1 - b0, rows.size)) < q
        freq[b0:b1] = np.add.reduceat(draws * wr, starts, axis=1) / Wk if rows.size else 0.0
    alpha = 1.0 - confidence_level
    low, high = np.quantile(freq, [alpha / 2.0, 1.0 - alpha / 2.0], axis=0,
                            method="inverted_cdf")
    return low, high


def consistency_bands(y_true, y_proba, *, mode="auto", strategy="uniform", n_bins=15,
                      min_bin_size=1, confidence_level=0.95, n_resamples=1000,
                      random_state=None, labels=None, pos_label=None, sample_weight=None):
    """Consistency bars of a reliability diagram (Broecker and Smith 2007), per bin.

    For every bin of :func:`reliability_curve` (same arguments, same bins): the range of outcome
    frequencies that a *calibrated* model with these very predictions would show. Labels are
    drawn as ``y*_i ~ Bernoulli(p_i)`` for the bin's own predictions ``p_i`` (``n_resamples``
    times, independently), the bin's (weighted) frequency of ``y* = 1`` is computed for every
    draw, and the band is the central ``confidence_level`` range of these frequencies. An
    observed frequency outside its band is evidence of miscalibration in that bin at level
    ``1 - confidence_level`` (one bin at a time, not a test of the whole diagram: with ten bins
    at the 95% level, a calibrated model has some bin outside its band in about 30% of
    its diagrams).

    Unlike a binomial interval (``reliability_curve``'s ``ci_low`` and ``ci_high``), which is
    centred on the *observed* frequency, the band is centred on the bin's mean prediction (the
    diagonal) and accounts for the spread of the predictions inside the bin: the number of
    outcomes of a calibrated model is Poisson-binomial, not binomial.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels (only their classes and number matter: the outcomes are resampled).
    y_proba : array-like of shape (n_samples,) or (n_samples, n_classes)
        Predicted probabilities, as in :func:`reliability_curve`.
    mode, strategy, n_bins, min_bin_size, labels, pos_label
        As in :func:`reliability_curve`; the bands belong to the bins of that curve.
    confidence_level : float, default=0.95
        Probability content of each band, in (0, 1).
    n_resamples : int, default=1000
        Number of label draws, in ``[1, 10**7]``. The cost is ``O(n_resamples * n_samples)``, in
        chunks of about ``4 * 10**6`` draws.
    random_state : None, int, numpy Generator or RandomState, default=None
        Seed of the draws.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the samples in the bin frequencies (as in the curve's ``prob_true``); each
        row's label is drawn once (weights are not read as repetitions here).

    Returns
    -------
    low, high : ndarray of shape (n_kept,)
        Ends of the band of each kept bin of the curve; for ``mode="classwise"``, a list with one
        ``(low, high)`` pair per class, in the order of the curves.

    Notes
    -----
    The ends are quantiles of the resampled frequencies by the inverse of their empirical
    distribution function (numpy's ``"inverted_cdf"``): ``low`` is the smallest resampled
    frequency ``f`` with ``F(f) >= (1 - confidence_level) / 2`` and ``high`` the smallest with
    ``F(f) >= (1 + confidence_level) / 2``, so both are attainable frequencies and the band holds
    at least ``confidence_level`` of the resampling distribution. The predictions are kept
    fixed (the band is conditional on them); Broecker and Smith also resample the predictions,
    which widens the bands mainly for bins with few samples. The draws ``y*`` follow the prediction of
    the curve: ``P(pos_label)`` (binary), the confidence (top-label; a calibrated model is right
    with probability equal to its confidence) or ``p_k`` (class-wise).

    References
    ----------
    J. Broecker and L. A. Smith. Increasing the reliability of reliability diagrams. Weather
    and Forecasting, 22(3):651-661, 2007.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib._problems.reliability import consistency_bands
    >>> from skcalib import reliability_curve
    >>> rng = np.random.default_rng(0)
    >>> p = rng.random(2000)
    >>> y = (rng.random(2000) < p).astype(int)
    >>> low, high = consistency_bands(y, p, n_bins=5, random_state=0)
    >>> curve = reliability_curve(y, p, n_bins=5)
    >>> bool(np.all((low <= curve.prob_pred) & (curve.prob_pred <= high)))
    True
    """
    check_n_resamples(n_resamples)
    check_random_state_param(random_state)
    setup = curve_setup(y_true, y_proba, mode, strategy, n_bins, min_bin_size, confidence_level,
                        labels, pos_label, sample_weight)
    m, w, _, _, min_bin_size, confidence_level = setup[1:]
    rng = check_rng(random_state)
    bands = [_consistency(Q[:, 0], w, binning, min_bin_size, confidence_level,
                          int(n_resamples), rng) for Q, _, binning, _ in setup[0]]
    return bands if m == "classwise" else bands[0]

