"""Univariate predictive distributions of regressors: the checks and helpers shared by the
regression metrics, the PIT test, quantile recalibration and the regression displays.

Internal API:

* :func:`is_univariate` -- is a distribution univariate (Normal, Laplace, Recalibrated, or a
  Mixture of them)?
* :func:`check_univariate_predictions` -- ``(dist, y, w)``: a univariate distribution, matching
  real targets and rescaled weights, with the ``TypeError`` naming ``y_pred`` otherwise;
* :func:`check_levels` -- central-interval levels in (0, 1) as a float64 array;
* :func:`check_level` -- one nominal level in (0, 1) as a float (``TypeError`` for anything but
  a real number); :func:`check_bounds_level` -- the ``level`` that goes with interval bounds
  (required for an ``(n, 2)`` array, ``None`` for a dict of levels): the interval metrics, the
  interval coverage test and the coverage Display of bounds share it;
* :func:`outside_support` -- which targets lie outside the bounded supports of their
  predictions (``ppf(0)`` and ``ppf(1)`` finite, as Quantiles' linear tails end), where the
  density is 0: ``nll``'s message and the report's NLL note;
* :func:`check_grid` -- the grid of expected proportions of a quantile-calibration curve (an
  integer number of points or strictly increasing probabilities);
* :func:`exact_area` -- the exact area ``int_0^1 |G(p) - p| dp`` of a weighted empirical
  distribution function ``G`` (the miscalibration area and the PIT test's estimate).
"""

import numbers

import numpy as np

from .._expectations import check_targets
from .._validation import (MAX_STORED_BINS, check_n_bins, check_sample_weight,
                           check_scalar_param)
from ..distributions import Mixture, as_distribution

__all__ = ["check_bounds_level", "check_grid", "check_level", "check_levels", "outside_support", "check_univariate_predictions", "exact_area",
           "is_univariate"]


def is_univariate(dist):
    """Whether the family of ``dist`` is univariate (Normal, Laplace, Recalibrated, mixtures of
    them: each distribution class says so through ``_univariate``)."""
    return bool(getattr(dist, "_univariate", False))



def check_univariate_predictions(y_true, y_pred, sample_weight=None):
    """``(dist, y, w)``: a univariate distribution, matching real targets, rescaled weights."""
    dist, _ = as_distribution(y_pred, "y_pred")
    if not is_univariate(dist):
        what = type(dist).__name__
        if isinstance(dist, Mixture):
            what += f" of {type(dist.components[0]).__name__} components"
        raise TypeError("y_pred must be a univariate predictive distribution (Normal, Laplace, a "
                        f"Mixture of them, or an (n_samples, 2) array [mean, std]); got {what}.")
    y = check_targets(y_true, dist)
    w = check_sample_weight(sample_weight, dist.n_samples, rescale=True)
    return dist, y, w



def check_levels(levels, name):
    """``levels`` (a number or a 1-D array in (0, 1)) as float64; a ``ValueError`` naming
    ``name`` otherwise."""
    arr = np.asarray(levels)
    if arr.dtype.kind not in "iuf" or arr.ndim > 1 or arr.size == 0:
        raise ValueError(f"{name} must be a real number or a non-empty 1-D array of them in "
                         f"(0, 1); got {levels!r}.")
    arr = arr.astype(np.float64)
    if not np.all((arr > 0) & (arr < 1)):
        raise ValueError(f"{name} must lie in (0, 1); got {levels!r}.")
    return arr


def check_level(level, name="level"):
    """One nominal level in (0, 1) as a float; a ``TypeError`` for booleans, strings and arrays,
    a ``ValueError`` outside (0, 1), each naming ``name``."""
    if isinstance(level, (bool, np.bool_)) or not isinstance(level, numbers.Real):
        raise TypeError(f"{name} must be a real number in (0, 1); got {level!r:.60}.")
    return float(check_levels(level, name))


def check_bounds_level(y_interval, level):
    """The ``level`` of interval bounds ``y_interval``: required (a float in (0, 1)) for an
    ``(n, 2)`` array, ``None`` for a dict, whose keys are the levels (returns None)."""
    if isinstance(y_interval, dict):
        if level is not None:
            raise TypeError("level must be None when y_interval is a dict: its keys are the "
                            f"levels; got level={level!r:.60}.")
        return None
    if level is None:
        raise TypeError("level is required for an array y_interval: the nominal coverage of "
                        "its intervals, in (0, 1).")
    return check_level(level)

def outside_support(y, dist):
    """Boolean mask of the targets ``y`` outside the supports ``[ppf(0), ppf(1)]`` of the
    univariate predictions ``dist``, or None when a support is unbounded (Normal, Laplace) or
    a point (a point prediction has no density anywhere)."""
    if not is_univariate(dist):
        return None
    with np.errstate(invalid="ignore"):
        low, high = dist.ppf(0.0), dist.ppf(1.0)
    if not (np.all(np.isfinite(low)) and np.all(np.isfinite(high)) and np.all(high > low)):
        return None
    return (y < low) | (y > high)


def check_grid(quantiles, name="quantiles", allow_none=False):
    """The grid of expected proportions: ``linspace(0.01, 0.99, quantiles)`` for an integer,
    else strictly increasing probabilities in [0, 1] (None passes with ``allow_none``)."""
    if quantiles is None and allow_none:
        return None
    if isinstance(quantiles, (int, np.integer)) and not isinstance(quantiles, (bool, np.bool_)):
        # a ceiling, as for every stored binning (2**63 reached numpy's linspace IndexError,
        # 10**12 asked for 7 TiB)
        check_scalar_param(quantiles, name, kind="int", min_val=2)
        return np.linspace(0.01, 0.99, check_n_bins(quantiles, name, max_val=MAX_STORED_BINS))
    arr = np.asarray(quantiles)
    if arr.dtype.kind not in "iuf" or arr.ndim != 1 or arr.size < 2:
        raise ValueError(f"{name} must be an integer >= 2 or a 1-D array of at least two "
                         f"probabilities; got {quantiles!r:.80}.")
    arr = arr.astype(np.float64)
    if not np.all((arr >= 0) & (arr <= 1)) or np.any(np.diff(arr) <= 0):
        raise ValueError(f"{name} must be strictly increasing probabilities in [0, 1].")
    return arr



def exact_area(values, w):
    """``int_0^1 |G(p) - p| dp`` for the weighted empirical distribution function ``G``."""
    order = np.argsort(values, kind="stable")
    v = values[order]
    cw = np.cumsum(np.ones_like(v) if w is None else w[order])
    c = cw / cw[-1]
    t = np.concatenate(([0.0], v, [1.0]))
    g = np.concatenate(([0.0], c))  # G on [t_j, t_{j+1})

    def H(x):
        return 0.5 * x * np.abs(x)

    return float(np.sum(H(t[1:] - g) - H(t[:-1] - g)))

