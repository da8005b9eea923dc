"""Debiased, cross-fitted estimates of a squared calibration error (docs/estimation.rst).

A plug-in ``mean h(p, p)`` of a smoothed estimation function is biased at first order: down by
the smoothing, up by the variance. The debiased estimates correct it with the labels of samples
the estimation function never saw, and cross-fitting lets every sample be such a sample once:

* ``"one_step"``: the mean of ``2 g_hat(q) . r - sq`` (the influence-function correction of the
  plug-in, with the square of ``g_hat`` taken as a U-statistic over distinct training samples),
  bias ``-E||gbar - g||^2``: second order, the squared smoothing bias;
* ``"product"``: the mean of ``g_hat(q) . r``, bias ``E[(gbar - g) . g]``: first order in the
  smoothing bias, none from the variance of ``g_hat``.

Both have the influence function ``2 g . r - ||g||^2 - psi`` to first order, so both take the
standard error of the per-sample one-step terms.
"""

import math
import numpy as np
from joblib import Parallel, delayed
from scipy import stats as sps
from sklearn.base import clone

from .._validation import (check_confidence_level, check_labels_and_probabilities, check_n_jobs,
                           check_option, check_random_state_param)
from ..stats import ConfidenceInterval
from ._base import ESTIMATES, CalibrationEstimatorMixin, terms_of
from ._folds import check_cv_param, seed_of, splitter

__all__ = ["CalibrationErrorResult", "cross_fit_calibration_error"]


class CalibrationErrorResult:
    """A cross-fitted estimate of a squared calibration error with its standard error.

    Returned by :func:`cross_fit_calibration_error`; the parameters are stored as the
    attributes of the same names.

    Parameters
    ----------
    estimate : float
        The estimate.
    standard_error : float
        Its standard error.
    method : str
        The estimate's name.
    terms : ndarray of shape (n_samples,)
        Per-sample terms.
    fold_estimates : ndarray of shape (n_folds,)
        Per-fold means of the terms.

    Attributes
    ----------
    estimate : float
        The estimate of the **squared** calibration error (can be negative).
    standard_error : float
        Standard error (the sd of the per-sample one-step terms over ``sqrt(n_samples)``; for
        ``method="plugin"`` the sd of the plug-in terms, which ignores the randomness of the
        fitted ``h`` and understates the error).
    method : str
        ``"one_step"``, ``"product"`` or ``"plugin"``.
    n_samples : int
    terms : ndarray of shape (n_samples,)
        Per-sample terms (each from the fold model that did not see the sample); their mean is
        ``estimate``.
    fold_estimates : ndarray of shape (n_folds,)
        The mean of the terms of each evaluation fold.
    """

    def __init__(self, estimate, standard_error, method, terms, fold_estimates):
        self.estimate = float(estimate)
        self.standard_error = float(standard_error)
        self.method = method
        self.terms = terms
        self.n_samples = int(terms.shape[0])
        self.fold_estimates = fold_estimates

    def confidence_interval(self, confidence_level=0.95):
        """Normal (Wald) interval ``estimate -/+ z * standard_error``.

        Parameters
        ----------
        confidence_level : float, default=0.95
            Coverage of the two-sided interval, in (0, 1).

        Returns
        -------
        ConfidenceInterval
            ``(low, high)``; not clipped at 0, so that it can be compared with the estimate.
        """
        return wald_interval(self.estimate, self.standard_error, confidence_level)

    def __repr__(self):
        return (f"CalibrationErrorResult(estimate={self.estimate:.6g}, "
                f"standard_error={self.standard_error:.3g}, method={self.method!r}, "
                f"n_samples={self.n_samples})")


def wald_interval(estimate, standard_error, confidence_level=0.95):
    """``ConfidenceInterval(estimate -/+ z standard_error)`` of a two-sided normal interval."""
    level = check_confidence_level(confidence_level)
    z = float(sps.norm.ppf(0.5 + level / 2.0))
    return ConfidenceInterval(float(estimate - z * standard_error),
                              float(estimate + z * standard_error))


def fold_parts(model, P, y_idx):
    """``(plugin, gR, sq)`` per sample of ``P`` for a fitted estimation function ``model``."""
    inputs = model._problem_inputs(P)
    plugin = sum(model._diag_problem(k, inputs[k]) for k in range(len(inputs)))
    gR, sq = model._estimate_parts(P, y_idx, inputs)
    return plugin, gR, sq


def summarise(parts, method):
    """``(estimate, standard_error)`` of ``method`` from per-sample ``(plugin, gR, sq)``.

    The debiased estimates share the standard error of the one-step terms (their common
    first-order influence function); the plug-in takes the sd of its own terms.
    """
    n = parts[0].shape[0]
    spread = terms_of(parts, "plugin" if method == "plugin" else "one_step")
    return float(terms_of(parts, method).mean()), float(spread.std(ddof=1) / math.sqrt(n))


def _fit_fold(estimator, P, y_idx, classes, train, test):
    model = clone(estimator).set_params(labels=classes).fit(P[train], classes[y_idx[train]])
    return test, fold_parts(model, P[test], y_idx[test])


def cross_fit_calibration_error(estimator, X, y, *, estimate="one_step", cv=5,
                                random_state=None, n_jobs=None):
    """Cross-fitted estimate of a squared calibration error with its standard error.

    The samples are split into ``cv`` folds; for each fold a clone of ``estimator`` is fitted
    on the other folds and evaluated, with the labels, on that fold, so that every sample is
    evaluated once by a model that never saw it. ``estimate="one_step"`` and ``"product"``
    are the debiased estimates (see :meth:`KDECalibrationEstimator.calibration_error
    <skcalib.estimation.KDECalibrationEstimator.calibration_error>` and docs/estimation.rst);
    ``"plugin"`` is the cross-fitted mean of ``h(p, p)``.

    Parameters
    ----------
    estimator : calibration estimation function
        An (unfitted) estimator of :mod:`skcalib.estimation` with its hyperparameters; its
        ``mode`` is the notion.
    X : array-like of shape (n_samples, n_classes) or (n_samples,)
        Predicted probabilities.
    y : array-like of shape (n_samples,)
        True labels.
    estimate : {"one_step", "product", "plugin"}, default="one_step"
    cv : int or cross-validation splitter, default=5
        An int means shuffled ``KFold`` seeded by ``random_state``. The splits must be a
        partition: every sample in exactly one evaluation fold.
    random_state : None, int or Generator, default=None
        Seed of the folds.
    n_jobs : int, default=None
        Folds fitted in parallel (joblib).

    Returns
    -------
    CalibrationErrorResult

    Examples
    --------
    >>> from skcalib.datasets import make_binary_squared_calibration
    >>> from skcalib.estimation import KDECalibrationEstimator, cross_fit_calibration_error
    >>> c, y = make_binary_squared_calibration(4000, random_state=0)   # truth 1/30 = 0.0333
    >>> res = cross_fit_calibration_error(KDECalibrationEstimator(0.05, mode="binary"), c, y,
    ...                                   random_state=0)
    >>> low, high = res.confidence_interval()
    >>> bool(low < 1 / 30 < high)
    True
    """
    if not isinstance(estimator, CalibrationEstimatorMixin) or not hasattr(estimator, "fit"):
        raise TypeError(f"estimator must be a calibration estimation function of "
                        f"skcalib.estimation; got {type(estimator).__name__}.")
    check_option(estimate, "estimate", ESTIMATES)
    check_n_jobs(n_jobs)
    seed = seed_of(check_random_state_param(random_state))
    check_cv_param(cv)
    data = check_labels_and_probabilities(y, X, labels=estimator.get_params().get("labels"),
                                          prob_name="X", label_name="y", min_samples=4)
    splits = list(splitter(cv, seed).split(data.probs, data.y))
    seen = np.concatenate([test for _, test in splits])
    if seen.size != data.n_samples or np.unique(seen).size != data.n_samples:
        raise ValueError("cv must partition the samples: every sample in exactly one "
                         "evaluation fold.")
    for train, test in splits:
        if np.intersect1d(train, test).size:
            raise ValueError("cv: a fold evaluates samples it was fitted on.")
    results = Parallel(n_jobs=n_jobs)(
        delayed(_fit_fold)(estimator, data.probs, data.y, data.classes, train, test)
        for train, test in splits)
    n = data.n_samples
    parts = tuple(np.empty(n) for _ in range(3))
    folds = []
    for test, fold in results:
        for whole, piece in zip(parts, fold):
            whole[test] = piece
        folds.append(float(terms_of(fold, estimate).mean()))
    value, se = summarise(parts, estimate)
    return CalibrationErrorResult(value, se, estimate, terms_of(parts, estimate),
                                  np.array(folds))
