"""Prediction intervals given by their bounds: the interval (Winkler) score, the mean width and
the observed coverage, for conformal or quantile-regression intervals without a predictive
distribution.

Every function takes ``y_interval``: an array of shape ``(n_samples, 2)`` holding the lower and
upper bound of one interval per sample, or a dict ``{level: (n_samples, 2) array}`` of intervals
at several nominal levels. A single array gives a float; a dict gives a dict ``{level: value}``
(levels as floats, in increasing order), never a silent average over the levels: average with
``np.mean(list(result.values()))`` if one number is wanted.

:func:`interval_score` and :func:`interval_width` also take a univariate predictive distribution
with a ``level``: its central interval, from the ``(1 - level) / 2`` to the ``(1 + level) / 2``
quantile (so that every family -- Normal, Laplace, mixtures, Empirical, Quantiles -- gets an
interval score, and a scorer).

An ``(n_samples, 2)`` array means ``[lower, upper]`` here only; the distribution metrics
(:func:`~skcalib.metrics.interval_coverage` and the others of ``_regression``) keep reading an
``(n_samples, 2)`` array as ``[mean, std]`` of normal predictions, which is why the coverage of
bounds is its own function, :func:`interval_bounds_coverage`.
"""


import numpy as np

from .._expectations import check_targets
from .._problems.univariate import check_bounds_level, check_level, is_univariate
from .._validation import check_2d_features, check_sample_weight, check_scores, not_real_kind
from ..distributions import as_distribution, is_distribution
from ._regression import _mean

__all__ = ["interval_score", "interval_width", "interval_bounds_coverage"]


def _is_array_like(obj):
    """Arrays, lists, tuples, dicts and what converts to an array (DataFrames); a distribution
    (of skcalib, or one that ``as_distribution`` adapts) is not."""
    if is_distribution(obj):
        return False
    return isinstance(obj, (np.ndarray, list, tuple, dict)) or hasattr(obj, "__array__")


def _central_bounds(y_interval, level, name="y_interval"):
    """``(dist, bounds)``: the central intervals at ``level`` of a univariate distribution."""
    dist, _ = as_distribution(y_interval, name)
    if not is_univariate(dist):
        raise TypeError(f"{name} must be interval bounds, or a univariate predictive "
                        f"distribution whose central intervals are meant; got "
                        f"{type(dist).__name__}.")
    if level is None:
        raise TypeError(f"level is required for a predictive distribution {name}: the central "
                        "interval at level p runs from its (1 - p) / 2 to its (1 + p) / 2 "
                        "quantile.")
    p = check_level(level)
    bounds = np.column_stack([dist.ppf(0.5 * (1.0 - p)), dist.ppf(0.5 * (1.0 + p))])
    return dist, bounds


def _check_real_dtype(x, name):
    """Booleans, dates and durations are refused rather than read as 0/1 or nanoseconds."""
    try:
        what = not_real_kind(np.asarray(x) if isinstance(x, (list, tuple)) else x)
    except (TypeError, ValueError):
        return  # ragged: the array check names the argument
    if what is not None:
        raise TypeError(f"{name} must contain real numbers; got {what}, which are not converted.")


def _check_bounds(y_interval, name, n_samples=None, n_name="y_true"):
    """``(n, 2)`` float64 bounds ``[lower, upper]`` with ``lower <= upper`` (a copy)."""
    if isinstance(y_interval, dict):
        raise TypeError(f"{name} must be an array-like of shape (n_samples, 2); got a dict.")
    _check_real_dtype(y_interval, name)
    B = check_2d_features(y_interval, name)
    if B.shape[1] != 2:
        raise ValueError(f"{name} must have shape (n_samples, 2) holding [lower, upper]; got "
                         f"shape {np.shape(y_interval)}.")
    if n_samples is not None and B.shape[0] != n_samples:
        raise ValueError(f"{name} has {B.shape[0]} rows but {n_name} has {n_samples} samples.")
    bad = np.flatnonzero(B[:, 0] > B[:, 1])
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{name} must hold [lower, upper] with lower <= upper; row {i} has "
                         f"lower {B[i, 0]!r} > upper {B[i, 1]!r} ({bad.size} such row(s)).")
    return B


def _levels_and_bounds(y_interval, n_samples=None):
    """``[(level, bounds)]``: ``[(None, bounds)]`` for an array, the validated levels (floats,
    increasing) and bounds of a dict. Without ``n_samples`` the first bounds fix the length."""
    if not isinstance(y_interval, dict):
        return [(None, _check_bounds(y_interval, "y_interval", n_samples))]
    if not y_interval:
        raise ValueError("y_interval must not be an empty dict; give at least one level.")
    what = "the levels of y_interval"
    out, n_name = [], "y_true"
    for key in sorted(y_interval, key=lambda k: check_level(k, what)):
        name = f"y_interval[{key!r}]"
        B = _check_bounds(y_interval[key], name, n_samples, n_name)
        if n_samples is None:
            n_samples, n_name = B.shape[0], name
        out.append((check_level(key, what), B))
    return out


def _per_level(pairs, fn, what):
    """``fn(bounds, level)`` for an array, ``{level: fn(bounds, level)}`` for a dict; a
    ``ValueError`` if a value leaves the float range (bounds near 1e308), never ``inf``."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = {lv: fn(B, lv) for lv, B in pairs}
    if not all(np.isfinite(v) for v in out.values()):
        raise ValueError(f"the {what} of y_interval exceeds the float range; rescale the bounds "
                         "(and y_true) to a smaller unit.")
    return out[None] if pairs[0][0] is None else out


def _check_y(y_true):
    _check_real_dtype(y_true, "y_true")
    y = check_scores(y_true, "y_true")
    if y.ndim != 1:
        raise ValueError(f"y_true must have shape (n_samples,); got shape {y.shape}.")
    return y


def interval_score(y_true, y_interval, *, level=None, sample_weight=None):
    """Interval (Winkler) score of prediction intervals given by their bounds.

    For the interval ``[l, u]`` at nominal level ``1 - alpha`` and the target ``y``, the score of
    Gneiting and Raftery (2007, eq. 43) is
    ``(u - l) + (2 / alpha) (l - y) 1{y < l} + (2 / alpha) (y - u) 1{y > u}``: the width plus a
    penalty for each miss, proportional to its distance. It is proper for the central interval:
    its expectation is minimised by the ``alpha / 2`` and ``1 - alpha / 2`` quantiles of the
    target's distribution. Lower is better; the value is in the unit of the targets. It equals
    ``(2 / alpha)`` times the sum of the pinball losses of the two bounds at the quantile
    levels ``alpha / 2`` and ``1 - alpha / 2``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Real targets.
    y_interval : array-like of shape (n_samples, 2), dict or Distribution
        Lower and upper bounds ``[lower, upper]`` of the intervals (``lower <= upper``), or a dict
        ``{level: (n_samples, 2) array}`` of intervals at several nominal levels. An array here
        always holds bounds (never ``[mean, std]``). A univariate predictive distribution
        (Normal, Laplace, Empirical, Quantiles, mixtures) stands for its central intervals at
        ``level``: from its ``(1 - level) / 2`` to its ``(1 + level) / 2`` quantile.
    level : float, default=None
        Nominal coverage ``1 - alpha`` in (0, 1) of the intervals of an array or distribution
        ``y_interval``; required for them, and must be left ``None`` for a dict (whose keys are
        the levels).
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the average.

    Returns
    -------
    float or dict
        The (weighted) mean interval score; for a dict ``y_interval``, a dict ``{level: score}``
        in increasing order of level.

    Raises
    ------
    ValueError
        If the bounds or targets are not finite real numbers of matching lengths, a lower bound
        exceeds its upper bound, a level is not in (0, 1), or the score leaves the float range.
    TypeError
        If ``level`` is missing for an array or a distribution or given with a dict, or is not
        a real number, or ``y_interval`` is a multivariate distribution.

    See Also
    --------
    interval_width : The mean width alone.
    interval_bounds_coverage : The fraction of targets inside the intervals.

    References
    ----------
    T. Gneiting and A. E. Raftery, "Strictly proper scoring rules, prediction, and estimation",
    Journal of the American Statistical Association 102(477), 2007, section 6.2.

    Examples
    --------
    >>> from skcalib import interval_score
    >>> y = [0.0, 1.5, -2.0]
    >>> bounds = [[-1.0, 1.0], [-1.0, 1.0], [-1.0, 1.0]]
    >>> round(interval_score(y, bounds, level=0.8), 4)  # widths 2, misses 0.5 and 1 (x 2/0.2)
    7.0
    >>> scores = interval_score(y, {0.5: [[-0.5, 0.5]] * 3, 0.8: bounds})
    >>> {level: round(s, 4) for level, s in scores.items()}
    {0.5: 4.3333, 0.8: 7.0}
    >>> from skcalib.distributions import Normal
    >>> round(interval_score(y, Normal([0.0, 0.0, 0.0], 1.0), level=0.8), 4)  # [-1.28, 1.28]
    5.6861
    """
    if not _is_array_like(y_interval):
        dist, B = _central_bounds(y_interval, level)
        y_interval, level = B, float(level)
        y = check_targets(y_true, dist)
    else:
        y = _check_y(y_true)
    w = check_sample_weight(sample_weight, y.shape[0], rescale=True)
    level = check_bounds_level(y_interval, level)

    def score(B, lv):
        alpha = 1.0 - (level if lv is None else lv)
        lo, hi = B[:, 0], B[:, 1]
        miss = np.maximum(lo - y, 0.0) + np.maximum(y - hi, 0.0)
        return _mean((hi - lo) + (2.0 / alpha) * miss, w)

    return _per_level(_levels_and_bounds(y_interval, y.shape[0]), score, "interval score")


def interval_width(y_interval, *, level=None, sample_weight=None):
    """Mean width ``upper - lower`` of prediction intervals given by their bounds.

    The sharpness of the intervals, in the unit of the targets; read it together with their
    coverage (:func:`interval_bounds_coverage`): narrow intervals are only useful if they cover.

    Parameters
    ----------
    y_interval : array-like of shape (n_samples, 2), dict or Distribution
        Lower and upper bounds ``[lower, upper]`` of the intervals (``lower <= upper``), or a dict
        ``{level: (n_samples, 2) array}`` of intervals at several nominal levels, or a
        univariate predictive distribution: its central intervals at ``level``.
    level : float, default=None
        For a distribution ``y_interval`` (required): the level of its central intervals. The
        width of given bounds does not depend on it (it is not used for an array, and must be
        None for a dict).
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the average.

    Returns
    -------
    float or dict
        The (weighted) mean width; for a dict ``y_interval``, a dict ``{level: width}`` in
        increasing order of level.

    Raises
    ------
    ValueError
        If the bounds are not finite real numbers, a lower bound exceeds its upper bound, a
        level is not in (0, 1), ``sample_weight`` does not match, or the width leaves the float
        range.

    See Also
    --------
    interval_score : Width and misses in one proper score.

    Examples
    --------
    >>> from skcalib import interval_width
    >>> interval_width([[0.0, 1.0], [2.0, 5.0]])
    2.0
    >>> interval_width({0.5: [[0.0, 1.0]], 0.9: [[-1.0, 2.0]]})
    {0.5: 1.0, 0.9: 3.0}
    >>> from skcalib.distributions import Normal
    >>> round(interval_width(Normal([0.0], 1.0), level=0.9), 4)  # 2 x 1.6449
    3.2897
    """
    if not _is_array_like(y_interval):
        y_interval = _central_bounds(y_interval, level)[1]
    elif isinstance(y_interval, dict) and level is not None:
        raise TypeError("level must be None when y_interval is a dict: its keys are the "
                        f"levels; got level={level!r}.")
    pairs = _levels_and_bounds(y_interval)
    w = check_sample_weight(sample_weight, pairs[0][1].shape[0], rescale=True)
    return _per_level(pairs, lambda B, lv: _mean(B[:, 1] - B[:, 0], w), "width")


def interval_bounds_coverage(y_true, y_interval, *, sample_weight=None):
    """Observed coverage of prediction intervals given by their bounds.

    The (weighted) fraction of targets with ``lower <= y <= upper`` (closed intervals). For
    intervals at nominal level ``p``, a calibrated model covers a fraction ``p``. This is the
    bounds form of :func:`interval_coverage`, which takes predictive distributions (and reads an
    ``(n_samples, 2)`` array as ``[mean, std]`` of normal predictions, unchanged); here an
    ``(n_samples, 2)`` array always holds ``[lower, upper]``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Real targets.
    y_interval : array-like of shape (n_samples, 2) or dict
        Lower and upper bounds ``[lower, upper]`` of the intervals (``lower <= upper``), or a dict
        ``{level: (n_samples, 2) array}`` of intervals at several nominal levels.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the fraction.

    Returns
    -------
    float or dict
        The observed coverage; for a dict ``y_interval``, a dict ``{level: coverage}`` in
        increasing order of level (compare each value with its key).

    Raises
    ------
    ValueError
        If the bounds or targets are not finite real numbers of matching lengths, a lower bound
        exceeds its upper bound, or a level is not in (0, 1).

    See Also
    --------
    interval_coverage : The coverage of central intervals of predictive distributions.

    Examples
    --------
    >>> from skcalib import interval_bounds_coverage
    >>> interval_bounds_coverage([0.0, 0.5, 3.0], [[-1.0, 1.0]] * 3)
    0.6666666666666666
    >>> interval_bounds_coverage([0.0, 0.5, 3.0], {0.5: [[-0.2, 0.2]] * 3, 0.9: [[-1.0, 1.0]] * 3})
    {0.5: 0.3333333333333333, 0.9: 0.6666666666666666}
    """
    if not _is_array_like(y_interval):
        raise TypeError(f"y_interval must be interval bounds; got {type(y_interval).__name__}. "
                        "The coverage of the central intervals of predictive distributions is "
                        "interval_coverage(y_true, y_pred, levels=...).")
    y = _check_y(y_true)
    w = check_sample_weight(sample_weight, y.shape[0], rescale=True)

    def coverage(B, lv):
        inside = (B[:, 0] <= y) & (y <= B[:, 1])
        return float(np.mean(inside)) if w is None else float(np.average(inside, weights=w))

    return _per_level(_levels_and_bounds(y_interval, y.shape[0]), coverage, "coverage")
