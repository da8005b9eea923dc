"""The pinball (quantile) loss of predicted quantiles: of a :class:`~skcalib.distributions.
Quantiles` batch at its own levels, of any univariate predictive distribution through its
quantile function, or of an ``(n_samples, n_levels)`` array of quantiles at given levels.

An array here always holds quantiles (one column per level), never ``[mean, std]`` of normal
predictions as in the metrics of ``_regression``: the levels say what the columns are.
"""

import numpy as np

from .._problems.univariate import check_levels, check_univariate_predictions
from .._validation import check_option, check_sample_weight
from ..distributions import Quantiles, is_distribution
from ._intervals import _check_real_dtype, _check_y, _is_array_like
from ._regression import _mean

__all__ = ["pinball_loss"]

#: Levels of the pinball loss of a predictive distribution other than ``Quantiles`` when none
#: are given: the nine deciles.
_DEFAULT_LEVELS = tuple(round(0.1 * k, 1) for k in range(1, 10))


def _array_quantiles(y_pred, levels, n_samples):
    """``(Q, tau)``: an ``(n, q)`` float array of quantiles and its ``q`` levels."""
    if levels is None:
        raise TypeError("levels is required when y_pred is an array of quantiles: the quantile "
                        "level of each column, in (0, 1) (a Quantiles distribution carries its "
                        "own levels).")
    tau = np.atleast_1d(check_levels(levels, "levels"))
    _check_real_dtype(y_pred, "y_pred")
    try:
        Q = np.asarray(y_pred, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("y_pred must be a rectangular array-like of real numbers of shape "
                         "(n_samples, n_levels), a Quantiles or a univariate skcalib "
                         "distribution.") from None
    if Q.ndim == 1 and tau.size == 1:
        Q = Q[:, None]
    if Q.ndim != 2 or Q.shape[1] != tau.size:
        raise ValueError(f"y_pred must have shape (n_samples, {tau.size}): one column per level "
                         f"of levels; got shape {Q.shape}.")
    if Q.shape[0] != n_samples:
        raise ValueError(f"y_pred has {Q.shape[0]} rows but y_true has {n_samples} samples.")
    if not np.all(np.isfinite(Q)):
        raise ValueError("y_pred must hold finite quantiles; got NaN or infinity.")
    return Q, tau


def _distribution_quantiles(dist, levels):
    """``(Q, tau)`` of a univariate distribution: a Quantiles batch's own values without
    ``levels``, otherwise the quantile function at ``levels`` (the deciles by default)."""
    if levels is None:
        if isinstance(dist, Quantiles):
            return np.asarray(dist.values), np.asarray(dist.levels)
        levels = _DEFAULT_LEVELS
    tau = np.atleast_1d(check_levels(levels, "levels"))
    Q = np.column_stack([dist.ppf(float(t)) for t in tau])
    return Q, tau


def pinball_loss(y_true, y_pred, *, levels=None, sample_weight=None, reduction="mean"):
    """Mean pinball (quantile) loss of predicted quantiles, averaged over the levels.

    The pinball loss of the quantile ``q`` at level ``tau`` for the target ``y`` is
    ``rho_tau(y - q) = max(tau (y - q), (tau - 1) (y - q))``: ``tau`` times the distance of a
    target above the quantile, ``1 - tau`` times that of one below. It is a proper scoring rule
    for the ``tau``-quantile (its expectation is minimised by the true quantile), lower is
    better, in the unit of the targets. Per level the value equals
    :func:`sklearn.metrics.mean_pinball_loss` with ``alpha=tau``; the default ``"mean"``
    reduction averages the levels equally. Twice the average over a fine uniform grid of levels
    tends to the CRPS (:func:`skcalib.crps`), of which it is the quantile decomposition.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Real targets.
    y_pred : Quantiles, Distribution or array-like of shape (n_samples, n_levels)
        The predicted quantiles:

        * a :class:`~skcalib.distributions.Quantiles` batch: its own ``values`` at its own
          ``levels`` (after its monotone rearrangement, which never increases the loss), or
          its interpolated quantile function at ``levels`` if they are given;
        * any other univariate predictive distribution (Normal, Laplace, Empirical, mixtures,
          ...): its quantile function ``ppf`` at ``levels`` (default: the nine deciles
          0.1, ..., 0.9);
        * an array: column ``j`` holds the quantiles at ``levels[j]`` (``levels`` required; a
          1-D array with one level is one column). An array is always read as quantiles here,
          never as ``[mean, std]`` rows.
    levels : float or array-like of shape (n_levels,), default=None
        Quantile levels in (0, 1), see ``y_pred``.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the mean over the samples.
    reduction : {"mean", "levels", "none"}, default="mean"
        ``"mean"``: one number, the mean over the samples and the levels; ``"levels"``: the
        mean loss of each level, shape ``(n_levels,)`` (``sklearn.metrics.mean_pinball_loss``
        per level); ``"none"``: the loss of every sample averaged over the levels, shape
        ``(n_samples,)`` (e.g. for :func:`skcalib.stats.mean_score_ci`).

    Returns
    -------
    float or ndarray
        See ``reduction``.

    Raises
    ------
    TypeError
        If ``levels`` is missing for an array, or ``y_pred`` is a multivariate distribution or
        class probabilities.
    ValueError
        If the targets or quantiles are not finite real numbers of matching shapes, a level is
        not in (0, 1), or the loss leaves the float range.

    See Also
    --------
    interval_score : The score of central intervals, a sum of two pinball losses.
    crps : The integral of the pinball loss over all levels (times 2).
    sklearn.metrics.mean_pinball_loss : One level.

    Examples
    --------
    >>> from skcalib import pinball_loss
    >>> y = [1.0, 2.0, 3.0]
    >>> q = [[0.0, 1.0], [1.0, 2.5], [2.0, 4.0]]   # quantiles at levels 0.1 and 0.9
    >>> round(pinball_loss(y, q, levels=[0.1, 0.9]), 4)
    0.075
    >>> pinball_loss(y, q, levels=[0.1, 0.9], reduction="levels").round(4)
    array([0.1 , 0.05])
    >>> from skcalib.distributions import Quantiles
    >>> round(pinball_loss(y, Quantiles(q, levels=[0.1, 0.9])), 4)
    0.075
    """
    check_option(reduction, "reduction", ("mean", "levels", "none"))
    if is_distribution(y_pred) or not _is_array_like(y_pred):
        dist, y, w = check_univariate_predictions(y_true, y_pred, sample_weight)
        Q, tau = _distribution_quantiles(dist, levels)
    else:
        y = _check_y(y_true)
        Q, tau = _array_quantiles(y_pred, levels, y.shape[0])
        w = check_sample_weight(sample_weight, y.shape[0], rescale=True)
    with np.errstate(over="ignore", invalid="ignore"):
        d = y[:, None] - Q
        loss = np.maximum(tau * d, (tau - 1.0) * d)
    if not np.all(np.isfinite(loss)):
        raise ValueError("the pinball loss of y_true under y_pred exceeds the float range; "
                         "rescale y_true and y_pred (e.g. divide both by their magnitude).")
    if reduction == "none":
        out = np.sum(loss / tau.size, axis=1)  # divided first: no overflow of the sum
    else:
        out = np.array([_mean(loss[:, j], w) for j in range(tau.size)])
        if reduction == "mean":
            out = _mean(out, None)
    if not np.all(np.isfinite(out)):
        raise ValueError("the pinball loss of y_true under y_pred exceeds the float range; "
                         "rescale y_true and y_pred (e.g. divide both by their magnitude).")
    return out
