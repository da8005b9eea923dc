"""Calibration of regressors and predictive distributions: PIT, CRPS, coverage, quantile
calibration, miscalibration area, ENCE, UCE and the negative log-likelihood.

Every function takes ``y_true`` (real targets) and ``y_pred``: a univariate
:mod:`skcalib.distributions` object (:class:`~skcalib.distributions.Normal`,
:class:`~skcalib.distributions.Laplace`, or a :class:`~skcalib.distributions.Mixture` of either)
or an array of shape ``(n_samples, 2)`` holding predicted means and standard deviations (read as
normal predictions). :func:`nll` also takes multivariate normals and their mixtures.

``y_true`` must hold real numbers: strings, complex numbers, booleans (usually class labels given
to a regression metric; pass ``y.astype(float)`` if 0/1 targets are meant), dates and durations
(numpy would read them as nanoseconds) are refused with a ``TypeError``/``ValueError`` naming
``y_true``. Results are finite: huge-but-finite targets or predictions (1e300) are standardised
without overflow, and a value that itself leaves the float range (an NLL of 1e600) is a
``ValueError`` naming ``y_true`` and ``y_pred``, never ``inf`` with an overflow warning.

Conventions (where practitioner packages disagree; landscape section 6):

* **Proportions.** The quantile-calibration curve, its error and the miscalibration area use
  *quantile* proportions by default (Kuleshov, Fenner and Ermon 2018): the observed fraction of
  ``PIT <= p`` against ``p``. ``proportion="interval"`` uses central intervals instead (the
  fraction of targets inside the central ``p``-interval against ``p``; uncertainty-toolbox's
  default). The two differ: a biased mean shows in the quantile proportions but can cancel in
  the interval ones, and vice versa for a too narrow or too wide spread.
* **Miscalibration area.** By default the exact area ``int_0^1 |G(p) - p| dp`` between the
  empirical distribution function ``G`` of the proportions and the diagonal (no grid); with a grid
  of ``quantiles`` the area between the piecewise-linear curve through the grid and the diagonal,
  crossings included (uncertainty-toolbox 0.1.1: ``quantiles=np.linspace(0, 1, 100)``,
  ``proportion="interval"``, its default; its ``mean_absolute_calibration_error`` and
  ``root_mean_squared_calibration_error`` are :func:`quantile_calibration_error` with that grid
  and ``norm="l1"`` or ``"l2"``, equal to ours to rounding, tested). Its quantile proportions use
  the residual ``mean - y`` and so trace the curve of ``1 - PIT``; the errors and areas are the
  same on a grid symmetric about 1/2, the curve is mirrored.
* **ENCE/UCE bins.** Equal-count bins of the predicted standard deviation by default (Levi et al.
  2022), ``strategy="uniform"`` for equal-width bins.
"""

import math

import numpy as np

from .._expectations import check_targets
from .._problems.univariate import (check_grid, check_levels, check_univariate_predictions,
                                    exact_area, outside_support)
from .._validation import (MAX_STORED_BINS, check_bool, check_n_bins, check_option,
                           check_random_state_param, check_sample_weight)
from ..distributions import Categorical, Mixture, Normal, Recalibrated, as_distribution, moment_unit

__all__ = [
    "pit",
    "crps",
    "interval_coverage",
    "interval_coverage_error",
    "quantile_calibration_curve",
    "quantile_calibration_error",
    "miscalibration_area",
    "ence",
    "uce",
    "nll",
]

_DEFAULT_LEVELS = (0.5, 0.8, 0.9, 0.95)


def _mean(values, w):
    """(Weighted) mean, taken in units of a power of two near the largest magnitude, so that
    the sum of huge-but-finite values (1e308 each) does not overflow."""
    values = np.asarray(values, dtype=np.float64)
    top = float(np.max(np.abs(values))) if values.size else 0.0
    # 2**(e - 1) <= top < 2**e: the unit 2**(e - 1) itself is finite even for top near 1.8e308
    unit = math.ldexp(1.0, math.frexp(top)[1] - 1) if 1e300 < top < np.inf else 1.0
    m = np.mean(values / unit) if w is None else np.average(values / unit, weights=w)
    return float(m * unit)


def _check_finite_score(value, what, unit_hint=""):
    """``value``, or a ``ValueError`` naming ``y_true``/``y_pred`` if it is beyond the float
    range (never an infinite score with an overflow warning)."""
    if not math.isfinite(value):
        raise ValueError(f"the {what} of y_true under y_pred exceeds the float range{unit_hint}; "
                         "rescale y_true and y_pred (e.g. divide both by the magnitude of the "
                         "targets' distance to the predictions).")
    return value


# --------------------------------------------------------------------------------------------
# PIT and CRPS


def pit(y_true, y_pred, *, random_state=None, ranks=False):
    """Probability integral transform ``F_i(y_i)`` of each target under its prediction.

    For a calibrated model with continuous predictive distributions the PIT values are uniform on
    ``[0, 1]`` (Dawid 1984); a U-shaped histogram means too narrow predictions, a hump too wide
    ones, a slope a biased mean. Test their uniformity with :func:`skcalib.stats.pit_test`.

    Where a prediction has an atom at its target (an
    :class:`~skcalib.distributions.Empirical` prediction whose draws include ``y_i``, or a point
    mass), ``F_i(y_i)`` alone is not uniform under calibration: with ``m`` equal-weight draws it
    takes only the values ``k / m``. There the *randomised* PIT of Czado, Gneiting and Held (2009)
    is returned, ``F_i(y_i-) + V_i (F_i(y_i) - F_i(y_i-))`` with ``V_i ~ U(0, 1)`` independent,
    which is uniform on ``[0, 1]`` under calibration for any predictive law. Uniforms are drawn
    from ``random_state`` only when some prediction has an atom at its target, so continuous
    predictions give exactly ``F_i(y_i)`` and ignore ``random_state``. (A point prediction of the
    Normal family, ``scale = 0``, keeps its PIT of 0 or 1.)

    ``ranks=True`` asks a different question of draws and ensembles: not "is the empirical law
    of the ``m`` draws the law of the target?" but "are the target and the draws exchangeable?"
    -- the question of the rank histogram (Talagrand diagram) of ensemble forecasting, whose
    answer is yes for ``m`` members drawn from a calibrated predictive law. It returns the
    randomised verification rank ``(r_i + V_i (t_i + 1)) / (m + 1)``, ``r_i`` draws below
    ``y_i`` and ``t_i`` equal to it, uniform on ``[0, 1]`` under exchangeability. The plain PIT
    of such an ensemble takes only the values ``k / m`` and is not uniform: the empirical law of
    ``m`` draws is narrower and coarser than the law they come from.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Real targets.
    y_pred : Distribution or array-like of shape (n_samples, 2)
        Univariate predictive distributions (Normal, Laplace, Empirical, or a Mixture of the
        first two), or predicted means and standard deviations (column 0 and 1), read as normal
        predictions.
    random_state : None, int, Generator or RandomState, default=None
        Seed of the uniforms of the randomised PIT (used only where a prediction has an atom at
        its target; with ``ranks=True`` for every sample).
    ranks : bool, default=False
        Return the randomised verification ranks of the targets among equal-weight draws
        (:class:`~skcalib.distributions.Empirical` only; a ``ValueError`` otherwise).

    Returns
    -------
    ndarray of shape (n_samples,)
        PIT values in ``[0, 1]``. A point prediction (a normal with ``scale = 0``) gives 0 or 1.

    Examples
    --------
    >>> from skcalib import pit
    >>> pit([0.0, 1.0], [[0.0, 1.0], [0.0, 1.0]]).round(4)
    array([0.5   , 0.8413])

    With draws, a target equal to a draw gets a uniform value inside that draw's step of the CDF
    (here between 0.25 and 0.5):

    >>> from skcalib.distributions import Empirical
    >>> u = pit([1.0], Empirical([[0.0, 1.0, 2.0, 3.0]]), random_state=0)
    >>> bool(0.25 <= u[0] <= 0.5)
    True
    """
    check_random_state_param(random_state)
    check_bool(ranks, "ranks")
    dist, y, _ = check_univariate_predictions(y_true, y_pred)
    return dist._rank_pit(y, random_state) if ranks else dist._pit(y, random_state)


#: The estimators ``crps(..., estimator=)`` knows, besides None (the family's default); each family
#: says which it supports (``Distribution._crps_estimators``).
_CRPS_ESTIMATORS = ("fair", "quantile_score")


def crps(y_true, y_pred, *, sample_weight=None, reduction="mean", estimator=None):
    """Continuous ranked probability score ``int (F_i(x) - 1{x >= y_i})^2 dx`` (lower is better).

    Closed forms for every univariate family, so no sampling or quadrature is needed:

    * Normal ``N(m, s^2)``: ``s [z (2 Phi(z) - 1) + 2 phi(z) - 1 / sqrt(pi)]``, ``z = (y - m) / s``
      (Gneiting et al. 2005); ``|y - m|`` for a point prediction (``s = 0``);
    * Laplace ``L(m, b)``: ``|y - m| + b exp(-|y - m| / b) - 3 b / 4``;
    * mixtures: the kernel form ``E|X - y| - E|X - X'| / 2`` summed over all pairs of components
      (Grimit et al. 2006 for normal mixtures, with ``E|d + s Z| = 2 s phi(d / s) + d (2 Phi(d / s)
      - 1)``); for Laplace mixtures ``E|c + L1 - L2|`` follows from the partial fractions of the
      characteristic function of ``L1 - L2`` (exact; the equal-scale limit near ties).
    * :class:`~skcalib.distributions.Recalibrated` (quantile recalibration): exact for a Normal
      base, a 256-node quadrature over the quantile level otherwise (see that class), also for
      mixtures of them (whose quantiles are found by a safeguarded Newton method: about 2 s per
      1,000 rows of a five-component mixture).
    * :class:`~skcalib.distributions.Empirical` (draws or ensemble members ``x_k`` with weights
      ``w_k``): by default the *plug-in* CRPS, the exact CRPS of the empirical law,
      ``sum_k w_k |x_k - y| - sum_{k,l} w_k w_l |x_k - x_l| / 2``, in ``O(m log m)`` per row
      (sorting). As an estimate of the CRPS of the law the draws come from it is biased upwards,
      by ``E|X - X'| / (2 m)`` in expectation for ``m`` independent equal-weight draws: it scores
      the ``m``-member ensemble itself, which is what a forecaster with those draws issues.

    ``estimator="fair"`` (Empirical predictions) gives the *fair* ensemble CRPS (Ferro 2014;
    Zamo and Naveau 2018), ``mean_k |x_k - y| - sum_{k != l} |x_k - x_l| / (2 m (m - 1))``, the
    unbiased estimate of the CRPS of the law the draws come from when they are independent draws
    of it (an ensemble judged as a sample, not as the forecast itself; it favours no ensemble
    size). With weights it is ``sum_k w_k |x_k - y| - sum_{k != l} w_k w_l |x_k - x_l| /
    (2 (1 - sum_k w_k^2))`` (normalised weights), unbiased for independent draws with *fixed*
    weights (not, exactly, for self-normalised importance weights, which depend on the draws);
    it needs two draws of positive weight per row, and it is not clipped at 0 (it can be slightly
    negative for a target among the draws). ``estimator="quantile_score"`` (Quantiles
    predictions) approximates the CRPS by the mean pinball loss of the predicted quantiles (see
    that family for its bias).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Real targets.
    y_pred : Distribution or array-like of shape (n_samples, 2)
        Univariate predictive distributions (Normal, Laplace, Empirical, or a Mixture of the
        first two), or predicted means and standard deviations, read as normal predictions.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the mean.
    reduction : {"mean", "none"}, default="mean"
        ``"mean"``: the (weighted) mean CRPS; ``"none"``: the CRPS of every sample.
    estimator : {None, "fair", "quantile_score"}, default=None
        None: the family's own CRPS (the closed forms above; the plug-in CRPS of Empirical
        predictions). ``"fair"``: the fair (unbiased) ensemble CRPS of Empirical predictions;
        ``"quantile_score"``: the quantile-score approximation of Quantiles predictions. A family
        without the estimator raises a ``ValueError`` naming the ones it has.

    Returns
    -------
    float or ndarray of shape (n_samples,)
        In the units of ``y``; for a point prediction the absolute error.

    Examples
    --------
    >>> from skcalib import crps
    >>> round(crps([0.0], [[0.0, 1.0]]), 4)
    0.2337
    >>> from skcalib.distributions import Empirical
    >>> d = Empirical([[-1.0, 0.0, 1.0]])
    >>> round(crps([0.5], d), 4), round(crps([0.5], d, estimator="fair"), 4)
    (0.3889, 0.1667)
    """
    dist, y, w = check_univariate_predictions(y_true, y_pred, sample_weight)
    check_option(reduction, "reduction", ("mean", "none"))
    if estimator is not None and (not isinstance(estimator, str)
                                  or estimator not in _CRPS_ESTIMATORS):
        raise ValueError("estimator must be None or one of "
                         f"{', '.join(repr(e) for e in _CRPS_ESTIMATORS)}; got {estimator!r}.")
    with np.errstate(over="ignore", invalid="ignore"):  # checked below
        values = dist._crps(y) if estimator is None else dist._crps_estimate(y, estimator)
    if not np.all(np.isfinite(values)):
        _check_finite_score(np.inf, "CRPS")
    if reduction == "none":
        return values
    return _mean(values, w)


def nll(y_true, y_pred, *, sample_weight=None):
    """Negative log-likelihood ``-mean_i log p_i(y_i)`` of the targets (lower is better).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or (n_samples, d)
        Real targets (vectors for multivariate predictions).
    y_pred : Distribution or array-like of shape (n_samples, 2)
        Predictive distributions with a density (Normal, Laplace, MultivariateNormal, or a
        Mixture of them), or predicted means and standard deviations (normal predictions).
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the mean.

    Returns
    -------
    float
        In nats; always finite. A point prediction (a normal with ``scale = 0``, also as a
        mixture component or a recalibrated base) has no density and is refused with a
        ``ValueError`` naming ``y_pred``, as a singular multivariate normal is; so is a target
        whose log-density is ``-inf`` (where the density is 0, or beyond the float range).

    Examples
    --------
    >>> from skcalib import nll
    >>> round(nll([0.0], [[0.0, 1.0]]), 4)
    0.9189
    """
    dist, _ = as_distribution(y_pred, "y_pred")
    if isinstance(dist, Categorical):
        raise TypeError("y_pred must be a predictive distribution with a density; for "
                        "Categorical predictions use sklearn.metrics.log_loss.")
    if not callable(getattr(dist, "log_pdf", None)):
        raise TypeError(f"y_pred must be a predictive distribution with a density; "
                        f"{type(dist).__name__} predictions have no log_pdf, so their NLL is not "
                        "defined: score them with crps, pinball_loss or the kernel calibration "
                        "errors (skce, ucme).")
    y = check_targets(y_true, dist)
    w = check_sample_weight(sample_weight, dist.n_samples, rescale=True)
    point = _point_prediction_rows(dist)
    if point.any():
        i = int(np.flatnonzero(point)[0])
        raise ValueError(f"y_pred has point predictions (scale 0, e.g. row {i}), which have no "
                         "density, so their NLL is not defined; score them with crps (the "
                         "absolute error for a point prediction) or give them a positive scale.")
    lp = dist.log_pdf(y)
    bad = ~np.isfinite(lp)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        yi = np.ravel(y[i])[0]
        outside = outside_support(y, dist) if lp[i] == -np.inf else None
        if outside is not None and outside[i]:
            raise ValueError(
                f"the NLL of y_true under y_pred is infinite: at row {i} y_true = "
                f"{float(yi):.6g} lies outside the support of its prediction "
                f"({type(dist).__name__}; Quantiles end where their linear tails end, beyond "
                "the outermost levels), where the predicted density is 0. Score bounded predictions "
                "with crps, pinball_loss or the interval score instead.")
        raise ValueError(
            f"the NLL of y_true under y_pred is not a finite number: at row {i} (y_true = "
            f"{float(np.ravel(y[i])[0]):.6g}) the predicted density is 0, or the target lies so "
            "many scales from the prediction (about 1e154 or more) that its log-density is below "
            "the float range; check y_true and y_pred for misscaled values.")
    return _check_finite_score(-_mean(lp, w), "NLL")


def _point_prediction_rows(dist):
    """Rows of ``dist`` with a normal (component) of scale 0: a point mass, with no density."""
    if isinstance(dist, Normal):
        return dist.scale == 0
    if isinstance(dist, Recalibrated):
        return _point_prediction_rows(dist.base)
    if isinstance(dist, Mixture):
        out = np.zeros(dist.n_samples, dtype=bool)
        for k, c in enumerate(dist.components):
            out |= _point_prediction_rows(c) & (dist.weights[:, k] > 0)
        return out
    return np.zeros(dist.n_samples, dtype=bool)


# --------------------------------------------------------------------------------------------
# coverage and quantile calibration


def _sorted_insertion(points, values):
    """``np.searchsorted(points, values, side="left")`` for sorted ``points``; for an equally
    spaced grid (the usual ``linspace``) by arithmetic plus an exact correction against the grid
    points, which avoids a binary search per value (3-4x faster at n = 10^6)."""
    m = points.size
    if m < 3 or not np.all(np.isfinite(values)):
        return np.searchsorted(points, values, side="left")
    step = (points[-1] - points[0]) / (m - 1)
    if not step > 0 or not np.allclose(np.diff(points), step, rtol=1e-9, atol=0.0):
        return np.searchsorted(points, values, side="left")
    idx = np.ceil((values - points[0]) / step)
    np.clip(idx, 0, m, out=idx)
    idx = idx.astype(np.intp)
    padded = np.concatenate(([-np.inf], points, [np.inf]))
    for _ in range(2):  # rounding moves the guess by at most one position
        idx -= values <= padded[idx]        # points[idx - 1] >= value: move left
        idx += values > padded[idx + 1]     # points[idx] < value: move right
    return idx


def _weighted_ecdf(values, w, points):
    """Weighted fraction of ``values <= p`` for each ``p`` in ``points``: each value is placed
    at the first sorted point it does not exceed (``O(n log m)``, no sort of the values)."""
    points = np.asarray(points, dtype=np.float64)
    flat = points.ravel()
    order = np.argsort(flat, kind="stable")
    # a few ulps of slack: a proportion that equals p in exact arithmetic (the PIT of a target
    # on a predicted quantile, |2 PIT - 1| at the level's bound) may round just above it
    idx = _sorted_insertion(flat[order] + 4 * np.finfo(np.float64).eps, values)
    counts = np.bincount(idx, weights=w, minlength=flat.size + 1)[:flat.size]
    total = values.size if w is None else np.sum(w)
    out = np.empty(flat.size)
    out[order] = np.cumsum(counts) / total
    return out.reshape(points.shape)


def _proportion_values(dist, y, proportion):
    """PIT values (``"quantile"``) or the smallest central level covering ``y`` (``"interval"``:
    ``|2 PIT - 1|``; ``y`` lies in the central ``p``-interval iff this is ``<= p``)."""
    u = dist.cdf(y)
    return u if proportion == "quantile" else np.abs(2.0 * u - 1.0)


def interval_coverage(y_true, y_pred, *, levels=_DEFAULT_LEVELS, sample_weight=None):
    """Observed coverage of the central prediction intervals at the given levels.

    The central interval at level ``p`` runs from the ``(1 - p) / 2`` to the ``(1 + p) / 2``
    quantile of each prediction; a calibrated model covers a fraction ``p`` of the targets.
    Computed from the PIT: ``y`` is covered iff ``|2 F(y) - 1| <= p`` (exact for continuous
    predictive distributions).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Real targets.
    y_pred : Distribution or array-like of shape (n_samples, 2)
        Univariate predictive distributions (Normal, Laplace, or a Mixture of them), or predicted
        means and standard deviations, read as normal predictions.
    levels : float or array-like of shape (n_levels,), default=(0.5, 0.8, 0.9, 0.95)
        Nominal coverages in (0, 1).
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the fractions.

    Returns
    -------
    float or ndarray of shape (n_levels,)
        Observed coverage per level (a float for a scalar ``levels``).

    Examples
    --------
    >>> from skcalib import interval_coverage
    >>> interval_coverage([0.0, 0.5, 3.0], [[0.0, 1.0]] * 3, levels=0.9)
    0.6666666666666666
    """
    dist, y, w = check_univariate_predictions(y_true, y_pred, sample_weight)
    lv = check_levels(levels, "levels")
    cov = _weighted_ecdf(_proportion_values(dist, y, "interval"), w, lv)
    return float(cov) if lv.ndim == 0 else cov


def interval_coverage_error(y_true, y_pred, *, levels=_DEFAULT_LEVELS, sample_weight=None):
    """Mean absolute difference between observed and nominal coverage of central intervals.

    ``mean_j |coverage(p_j) - p_j|`` over the ``levels`` (see :func:`interval_coverage`); 0 for a
    calibrated model (lower is better).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Real targets.
    y_pred : Distribution or array-like of shape (n_samples, 2)
        Univariate predictive distributions (Normal, Laplace, or a Mixture of them), or predicted
        means and standard deviations, read as normal predictions.
    levels : float or array-like of shape (n_levels,), default=(0.5, 0.8, 0.9, 0.95)
        Nominal coverages in (0, 1).
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the fractions.

    Returns
    -------
    float

    Examples
    --------
    >>> from skcalib import interval_coverage_error
    >>> round(interval_coverage_error([0.0, 0.5, 3.0], [[0.0, 1.0]] * 3, levels=0.9), 4)
    0.2333
    """
    lv = check_levels(levels, "levels")
    cov = interval_coverage(y_true, y_pred, levels=lv, sample_weight=sample_weight)
    return float(np.mean(np.abs(np.asarray(cov) - lv)))


def quantile_calibration_curve(y_true, y_pred, *, quantiles=99, proportion="quantile",
                               sample_weight=None):
    """The quantile-calibration curve (Kuleshov, Fenner and Ermon 2018): observed against expected
    proportions.

    With ``proportion="quantile"`` the observed proportion at ``p`` is the fraction of targets
    below their predicted ``p``-quantile (the fraction of PIT values ``<= p``); with
    ``"interval"`` the fraction inside the central ``p``-interval. A calibrated model lies on
    the diagonal.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Real targets.
    y_pred : Distribution or array-like of shape (n_samples, 2)
        Univariate predictive distributions (Normal, Laplace, or a Mixture of them), or predicted
        means and standard deviations, read as normal predictions.
    quantiles : int or array-like of shape (n_quantiles,), default=99
        The expected proportions: an integer ``m`` (at most ``10**6``) for
        ``np.linspace(0.01, 0.99, m)``, or strictly increasing probabilities in ``[0, 1]``.
    proportion : {"quantile", "interval"}, default="quantile"
        Quantile (one-sided) or central-interval proportions; see the module notes.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the fractions.

    Returns
    -------
    expected : ndarray of shape (n_quantiles,)
        The expected proportions (x-axis).
    observed : ndarray of shape (n_quantiles,)
        The observed proportions (y-axis).

    Examples
    --------
    >>> from skcalib import quantile_calibration_curve
    >>> exp, obs = quantile_calibration_curve([0.0, 0.5, 3.0], [[0.0, 1.0]] * 3,
    ...                                       quantiles=[0.25, 0.5, 0.75])
    >>> obs
    array([0.        , 0.33333333, 0.66666667])
    """
    dist, y, w = check_univariate_predictions(y_true, y_pred, sample_weight)
    grid = check_grid(quantiles)
    check_option(proportion, "proportion", ("quantile", "interval"))
    return grid, _weighted_ecdf(_proportion_values(dist, y, proportion), w, grid)


def quantile_calibration_error(y_true, y_pred, *, quantiles=99, proportion="quantile",
                               norm="l1", sample_weight=None):
    """Distance of the quantile-calibration curve from the diagonal (lower is better).

    ``"l1"``: ``mean_j |observed_j - p_j|`` (the mean absolute calibration error of
    uncertainty-toolbox); ``"l2"``: ``sqrt(mean_j (observed_j - p_j)^2)`` (its root mean squared
    calibration error; Kuleshov et al.'s ``cal`` with equal weights is ``n_quantiles`` times
    its square); ``"max"``: ``max_j |observed_j - p_j|``. See :func:`quantile_calibration_curve`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Real targets.
    y_pred : Distribution or array-like of shape (n_samples, 2)
        Univariate predictive distributions (Normal, Laplace, or a Mixture of them), or predicted
        means and standard deviations, read as normal predictions.
    quantiles : int or array-like of shape (n_quantiles,), default=99
        The expected proportions: an integer ``m`` (at most ``10**6``) for
        ``np.linspace(0.01, 0.99, m)``, or strictly increasing probabilities in ``[0, 1]``.
    proportion : {"quantile", "interval"}, default="quantile"
        Quantile (one-sided) or central-interval proportions.
    norm : {"l1", "l2", "max"}, default="l1"
        How the differences are summarised.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the fractions.

    Returns
    -------
    float

    Examples
    --------
    >>> from skcalib import quantile_calibration_error
    >>> round(quantile_calibration_error([0.0, 0.5, 3.0], [[0.0, 1.0]] * 3,
    ...                                  quantiles=[0.25, 0.5, 0.75]), 4)
    0.1667
    """
    check_option(norm, "norm", ("l1", "l2", "max"))
    exp, obs = quantile_calibration_curve(y_true, y_pred, quantiles=quantiles,
                                          proportion=proportion, sample_weight=sample_weight)
    d = np.abs(obs - exp)
    if norm == "l1":
        return float(d.mean())
    if norm == "l2":
        return float(np.sqrt(np.mean(d * d)))
    return float(d.max())


def _area_between(x, d):
    """Exact area ``int |d|`` of the piecewise-linear ``d`` through ``(x, d)``, sign changes
    included."""
    h = np.diff(x)
    d0, d1 = d[:-1], d[1:]
    a0, a1 = np.abs(d0), np.abs(d1)
    same = d0 * d1 >= 0
    tot = a0 + a1
    cross = np.divide(d0 * d0 + d1 * d1, tot, out=np.zeros_like(tot), where=tot > 0)
    return float(np.sum(h * np.where(same, 0.5 * tot, 0.5 * cross)))


def miscalibration_area(y_true, y_pred, *, proportion="quantile", quantiles=None,
                        sample_weight=None):
    """Area between the quantile-calibration curve and the diagonal (lower is better).

    With ``quantiles=None`` (default) the exact area ``int_0^1 |G(p) - p| dp``, where ``G`` is the
    (weighted) empirical distribution function of the PIT values (``proportion="quantile"``) or
    of the central levels ``|2 PIT - 1|`` (``"interval"``): one sort, no grid (with quantile
    proportions it is the 1-Wasserstein distance between the PIT values and the uniform
    distribution). With a grid of ``quantiles``, the area between the piecewise-linear curve
    through the grid points and the diagonal, crossings included, over the grid's range
    (uncertainty-toolbox's ``miscalibration_area`` is ``quantiles=np.linspace(0, 1, 100),
    proportion="interval"``).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Real targets.
    y_pred : Distribution or array-like of shape (n_samples, 2)
        Univariate predictive distributions (Normal, Laplace, or a Mixture of them), or predicted
        means and standard deviations, read as normal predictions.
    proportion : {"quantile", "interval"}, default="quantile"
        Quantile (one-sided) or central-interval proportions.
    quantiles : None, int or array-like of shape (n_quantiles,), default=None
        None for the exact area; an integer ``m`` (at most ``10**6``) for the grid
        ``np.linspace(0.01, 0.99, m)``, or strictly increasing probabilities in ``[0, 1]``.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the proportions.

    Returns
    -------
    float
        In ``[0, 1/2]``.

    Examples
    --------
    >>> from skcalib import miscalibration_area
    >>> round(miscalibration_area([0.0], [[0.0, 1.0]]), 4)
    0.25
    """
    dist, y, w = check_univariate_predictions(y_true, y_pred, sample_weight)
    check_option(proportion, "proportion", ("quantile", "interval"))
    grid = check_grid(quantiles, allow_none=True)
    values = _proportion_values(dist, y, proportion)
    if grid is None:
        return exact_area(values, w)
    obs = _weighted_ecdf(values, w, grid)
    return _area_between(grid, obs - grid)


# --------------------------------------------------------------------------------------------
# variance-based calibration: ENCE and UCE


def _variance_bins(y_true, y_pred, n_bins, strategy, sample_weight):
    """Per non-empty bin of the predicted standard deviation: weight ``W``, mean variance
    ``MV``, the bin's largest absolute error ``T`` and mean squared error relative to it ``A``
    (``MSE = T**2 * A``), and the unit (a power of two, see
    :func:`~skcalib.distributions.moment_unit`) in which variances and errors are given.

    Huge-but-finite predictions (standard deviations of 1e300) have variances beyond the float
    range in their own units; a huge error (a target 1e300 from its prediction) has a square
    beyond it, so errors are kept relative to their bin's largest (no overflow, no underflow of
    the variances next to them)."""
    dist, y, w = check_univariate_predictions(y_true, y_pred, sample_weight)
    n_bins = check_n_bins(n_bins, "n_bins", max_val=MAX_STORED_BINS)
    check_option(strategy, "strategy", ("quantile", "uniform"))
    if not callable(getattr(dist, "_moments", None)):
        raise TypeError(f"y_pred: {type(dist).__name__} predictions do not give their means and "
                        "variances to ence and uce (no _moments); use the quantile metrics "
                        "(quantile_calibration_error, miscalibration_area, pinball_loss).")
    unit = moment_unit(dist)
    mean, var = dist._moments(unit)
    var = np.asarray(var, dtype=np.float64)
    std = np.sqrt(var) * unit
    low = var < 1e-290  # underflowed next to huge locations: the variance in unit 1
    if low.any() and unit > 1.0:
        with np.errstate(over="ignore", invalid="ignore"):
            std = np.where(low, np.sqrt(np.asarray(dist._moments(1.0)[1], dtype=np.float64)), std)
    with np.errstate(over="ignore"):  # halves: exact, and opposite huge values do not overflow
        r = np.abs(2.0 * (0.5 * y - 0.5 * (mean[:, 0] * unit)))
    if not (np.all(np.isfinite(r)) and np.all(np.isfinite(std))):
        raise ValueError("y_true: an error y_true - mean(y_pred) or a standard deviation of "
                         "y_pred exceeds the float range; rescale y_true and y_pred (e.g. divide "
                         "both by their magnitude).")
    if strategy == "quantile":
        edges = np.quantile(std, np.linspace(0.0, 1.0, n_bins + 1)[1:-1])
    else:
        edges = np.linspace(std.min(), std.max(), n_bins + 1)[1:-1]
    idx = np.searchsorted(edges, std, side="right")
    ww = np.ones_like(std) if w is None else w
    W = np.bincount(idx, weights=ww, minlength=n_bins)

    def relative(v):  # per bin: largest value and mean square relative to it
        top = np.zeros(n_bins)
        np.maximum.at(top, idx, v)
        rel = np.divide(v, top[idx], out=np.zeros_like(v), where=top[idx] > 0)
        return top, np.bincount(idx, weights=ww * rel * rel, minlength=n_bins)

    S, B = relative(std)
    T, A = relative(r)
    keep = W > 0
    return W[keep], S[keep], B[keep] / W[keep], T[keep], A[keep] / W[keep]


_BIN_DOC = """    n_bins : int, default=15
        Number of bins of the predicted standard deviation (at most ``10**6``).
    strategy : {"quantile", "uniform"}, default="quantile"
        ``"quantile"``: equal-count bins (edges at quantiles of the predicted standard deviation;
        Levi et al. 2022; tied values share a bin, so bins can be fewer); ``"uniform"``:
        equal-width bins between the smallest and the largest. Empty bins are left out."""


def ence(y_true, y_pred, *, n_bins=15, strategy="quantile", sample_weight=None):
    """Expected normalized calibration error (Levi et al. 2022) (lower is better).

    The predictions are binned by their standard deviation; in each bin the root mean variance
    ``RMV = sqrt(mean sigma_i^2)`` is compared with the root mean squared error
    ``RMSE = sqrt(mean (y_i - mu_i)^2)``: ``ENCE = mean_bins |RMV - RMSE| / RMV``. For any
    predictive distribution ``mu`` and ``sigma^2`` are its mean and variance.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Real targets.
    y_pred : Distribution or array-like of shape (n_samples, 2)
        Univariate predictive distributions (Normal, Laplace, or a Mixture of them), or predicted
        means and standard deviations, read as normal predictions.
{bins}
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the within-bin means (the bins themselves count equally).

    Returns
    -------
    float
        Unitless; ``inf`` if a bin of point predictions (variance 0) has errors.

    Examples
    --------
    >>> from skcalib import ence
    >>> round(ence([1.0, -1.0, 4.0, -4.0], [[0, 1], [0, 1], [0, 2], [0, 2]], n_bins=2), 4)
    0.5
    """
    W, S, B, T, A = _variance_bins(y_true, y_pred, n_bins, strategy, sample_weight)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        # RMSE / RMV = (T sqrt(A)) / (S sqrt(B)), without squaring T or S
        q = np.where(T > 0, (T / S) * (np.sqrt(A) / np.sqrt(B)), 0.0)
        ratio = np.where(S > 0, np.abs(1.0 - q), np.where(T > 0, np.inf, 0.0))
    if np.any(np.isinf(ratio) & (S > 0)):
        raise ValueError("ence: an error of y_true exceeds its predicted standard deviation "
                         "(y_pred) by more than the float range; check y_true and y_pred for "
                         "misscaled values.")
    return float(np.mean(ratio))


def uce(y_true, y_pred, *, n_bins=15, strategy="quantile", sample_weight=None):
    """Uncertainty calibration error (Laves et al. 2020; used by Levi et al. 2022) (lower is
    better).

    The predictions are binned by their standard deviation; ``UCE = sum_bins (n_b / n)
    |MV_b - MSE_b|`` with the mean predicted variance ``MV_b`` and the mean squared error
    ``MSE_b`` of bin ``b`` (weights: ``n_b / n`` becomes the bin's share of the total weight).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Real targets.
    y_pred : Distribution or array-like of shape (n_samples, 2)
        Univariate predictive distributions (Normal, Laplace, or a Mixture of them), or predicted
        means and standard deviations, read as normal predictions.
{bins}
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the bin shares and the within-bin means.

    Returns
    -------
    float
        In squared units of ``y``.

    Examples
    --------
    >>> from skcalib import uce
    >>> round(uce([1.0, -1.0, 4.0, -4.0], [[0, 1], [0, 1], [0, 2], [0, 2]], n_bins=2), 4)
    6.0
    """
    W, S, B, T, A = _variance_bins(y_true, y_pred, n_bins, strategy, sample_weight)
    with np.errstate(over="ignore", invalid="ignore"):
        # in units of the largest scale or error, then back (powers of two: exact)
        top = max(float(np.max(S)), float(np.max(T)), 1.0)
        unit = math.ldexp(1.0, math.frexp(top)[1])
        MV, MSE = (S / unit) ** 2 * B, (T / unit) ** 2 * A
        value = float(np.sum(W * np.abs(MV - MSE)) / np.sum(W))
        value = value * unit * unit
    if not math.isfinite(value):
        raise ValueError(f"uce: the value, in squared units of y_true, exceeds the float range "
                         f"(y_pred has standard deviations or errors of about {unit:.3g}); "
                         "rescale y_true and y_pred (e.g. divide both by that magnitude).")
    return value


ence.__doc__ = ence.__doc__.replace("{bins}", _BIN_DOC)
uce.__doc__ = uce.__doc__.replace("{bins}", _BIN_DOC)
