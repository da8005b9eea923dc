"""Calibration errors as scikit-learn scorers.

A scorer is a callable ``scorer(estimator, X, y_true, sample_weight=None)``, as scikit-learn's
``scoring=`` expects. skcalib's scorers obtain the predictions with :func:`predict_distribution`:

* classifiers: ``estimator.predict_proba(X)``, passed to the metric with
  ``labels=estimator.classes_``, so that a cross-validation fold missing a class, string labels, or
  a ``pos_label`` other than the greater label are all handled correctly;
* regressors: ``estimator.predict(X, return_std=True)`` as :class:`~skcalib.distributions.Normal`
  predictions (GaussianProcessRegressor, BayesianRidge, ARDRegression, and pipelines ending in
  one); multi-output means and standard deviations become diagonal
  :class:`~skcalib.distributions.MultivariateNormal` predictions;
* any model: a method ``predict_distribution(X)`` returning a :mod:`skcalib.distributions` object
  takes precedence (the hook for models with other predictive distributions: Laplace, mixtures
  of ensemble members, ...).

Lower-is-better metrics are negated (names ``neg_<metric>``), as scikit-learn does, so that
greater is always better.

**Negative errors, positive scores.** The unbiased SKCE (``neg_skce``, the default) and the
unbiased MMCE are unbiased estimates of a squared error that is zero for a calibrated model, so
on a (nearly) calibrated model about half of them come out *negative* -- by design, not a bug --
and the negated score is then positive. Read the size against the noise: an estimate within a
few of its standard errors of zero does not show miscalibration (the SKCE tests of
``skcalib.stats`` turn it into a p-value). Model selection is unaffected: greater is still better.

**Several scorers at once.** ``scoring=`` of :func:`~sklearn.model_selection.cross_validate` and
:class:`~sklearn.model_selection.GridSearchCV` accepts a dict of names to scorers; mix skcalib's
(through :func:`get_scorer`) and scikit-learn's (by name, or through :func:`get_scorer`, which
falls back to scikit-learn's names)::

    scoring = {"ece": skcalib.get_scorer("neg_ece"),
               "skce": skcalib.get_scorer("neg_skce"),
               "brier": "neg_brier_score", "log_loss": "neg_log_loss"}
"""

import copy
import inspect
import warnings
from collections.abc import Mapping
from numbers import Integral

import numpy as np

from sklearn.metrics import get_scorer as _sk_get_scorer
from sklearn.metrics import get_scorer_names as _sk_get_scorer_names

from ._sklearn_compat import ScoreRequestMixin
from ._validation import check_bool, did_you_mean
from ._predictions import predict_distribution
from .distributions import Categorical
from .metrics import calibration_error, klce, mmce, skce, ucme
from .metrics import (brier_score, crps, ence, integrated_calibration_index,
                      interval_coverage_error, log_score, miscalibration_area, nll,
                      quantile_calibration_error, smooth_ece, uce)
from .metrics import interval_score, pinball_loss

__all__ = ["CalibrationScorer", "make_calibration_scorer", "get_scorer", "get_scorer_names",
           "predict_distribution", "skce_pvalue", "skce_zscore", "KLCEScorer", "make_klce_scorer",
           "spiegelhalter_pvalue", "hosmer_lemeshow_pvalue", "logistic_calibration_pvalue",
           "ecce_pvalue", "pit_pvalue"]


def skce_pvalue(y_true, y_pred, *, labels=None, random_state=0, **test_kwargs):
    """p-value of the SKCE test of "the model is calibrated" (:func:`skcalib.stats.skce_test`).

    Greater is better (a model whose miscalibration the data cannot show scores near 1, a clearly
    miscalibrated one near 0). The default ``random_state=0`` makes it deterministic, so that a
    model search is reproducible.

    **A test, not a ranking.** Use it to ask of a model "can these data show that it is
    miscalibrated?" -- e.g. to keep only candidates with a p-value above 0.05. Do not rank
    candidates by it: a simulated p-value is at least ``1 / (n_resamples + 1)`` (0.000999 with the
    default 1,000 draws), and once the data are large enough (a few thousand samples) to show
    every candidate's miscalibration, all of them score exactly that, so a model search picks
    among them arbitrarily. :func:`skce_zscore` (scorer ``neg_skce_zscore``) measures the same
    evidence on a scale that does not saturate, and keeps ranking.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or (n_samples, d)
        Labels, or real targets for distribution predictions.
    y_pred : array-like of shape (n_samples,) or (n_samples, n_classes), or a distribution
        Predicted probabilities or predictive distributions.
    labels : array-like, default=None
        All class labels (class probabilities only).
    random_state : None, int or Generator, default=0
        Seed of the test's resampling and of the median heuristic's subsampling.
    **test_kwargs
        Further options of :func:`skcalib.stats.skce_test` (``method``, ``kernel``, ...).

    Returns
    -------
    float
        The p-value, in (0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.scorers import skce_pvalue
    >>> rng = np.random.default_rng(0)
    >>> p = rng.dirichlet([1, 1], size=200)
    >>> y = (rng.random(200) < p[:, 1]).astype(int)
    >>> skce_pvalue(y, p) == skce_pvalue(y, p)  # deterministic
    True
    """
    from .stats import skce_test

    return skce_test(y_true, y_pred, labels=labels, random_state=random_state,
                     **test_kwargs).pvalue


def skce_zscore(y_true, y_pred, *, labels=None, block_size="sqrt", random_state=0,
                **test_kwargs):
    """Standardised SKCE: the block estimate of the SKCE divided by its standard error.

    The statistic ``z`` of the block test :func:`skcalib.stats.skce_test` with
    ``method="block"``: about standard normal for a calibrated model, and growing with the
    miscalibration and with the number of samples. Lower is better (the scorer
    ``neg_skce_zscore`` negates it). Unlike :func:`skce_pvalue`, whose simulated p-values all
    reach their floor ``1 / (n_resamples + 1)`` once the data show every candidate's
    miscalibration, ``z`` keeps ranking candidates at any sample size: a model search prefers the
    model whose miscalibration the data show least strongly. (``1 - Phi(z)`` is the block test's
    p-value.)

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or (n_samples, d)
        Labels, or real targets for distribution predictions.
    y_pred : array-like of shape (n_samples,) or (n_samples, n_classes), or a distribution
        Predicted probabilities or predictive distributions.
    labels : array-like, default=None
        All class labels (class probabilities only).
    block_size : int or "sqrt", default="sqrt"
        Block size of the block estimator (``"sqrt"``: ``floor(sqrt(n_samples))``; ``O(n^1.5)``
        pair terms). Blocks are taken in data order.
    random_state : None, int or Generator, default=0
        Seed of the median heuristic's subsampling (deterministic by default).
    **test_kwargs
        Further options of :func:`skcalib.stats.skce_test` (``kernel``, ``pos_label``,
        ``chunk_size``, ...); ``method`` is always ``"block"``.

    Returns
    -------
    float
        The standardised statistic ``z``; 0 when the block estimates are all zero to rounding
        (e.g. every prediction certain and right), ``+inf`` when they all equal one positive
        value.

    See Also
    --------
    skce_pvalue : The p-value of the SKCE test (a test, not a ranking).

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.scorers import skce_zscore
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(0.05, 0.95, size=2000)
    >>> y = (rng.random(2000) < p).astype(int)
    >>> P = np.column_stack([1 - p, p])
    >>> P_over = np.column_stack([1 - p, p]) ** 3
    >>> P_over /= P_over.sum(axis=1, keepdims=True)  # overconfident: clearly miscalibrated
    >>> bool(skce_zscore(y, P) < skce_zscore(y, P_over))
    True
    """
    from .stats import skce_test

    if "method" in test_kwargs:
        raise TypeError("skce_zscore() got an unexpected keyword argument 'method': the "
                        "standardised statistic is that of the block test (method='block').")
    with warnings.catch_warnings():
        # equal block estimates (e.g. every prediction certain and right): handled below
        warnings.filterwarnings("ignore", message=r".*block estimates are all equal",
                                category=RuntimeWarning)
        res = skce_test(y_true, y_pred, method="block", block_size=block_size, labels=labels,
                        random_state=random_state, **test_kwargs)
    # The pair terms are differences of kernel values (at most 1): a standard error below
    # _ZSCORE_TOL is rounding noise, and so is an estimate below it. Then z is 0 (no evidence
    # of miscalibration: an exactly calibrated model) or +-inf (every block shows the same
    # nonzero error), instead of nan or a ratio of rounding errors.
    se = res.standard_error
    if se is None or not np.isfinite(se) or se <= _ZSCORE_TOL:
        return 0.0 if abs(res.estimate) <= _ZSCORE_TOL else float(np.copysign(np.inf,
                                                                              res.estimate))
    return res.statistic


_ZSCORE_TOL = 1e-12


def _test_pvalue(test_name, y_true, y_pred, kwargs, labels=None):
    """p-value of ``skcalib.stats.<test_name>(y_true, y_pred, **kwargs)`` (``labels`` passed on
    when given)."""
    from . import stats

    if labels is not None:
        kwargs = dict(kwargs, labels=labels)
    return getattr(stats, test_name)(y_true, y_pred, **kwargs).pvalue


def spiegelhalter_pvalue(y_true, y_proba, *, labels=None, **test_kwargs):
    """p-value of Spiegelhalter's Z test (:func:`skcalib.stats.spiegelhalter_test`).

    A metric for model selection: greater is better (a model whose miscalibration the data cannot
    show scores near 1, a clearly miscalibrated one near 0). Two-sided by default.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_proba : array-like of shape (n_samples,) or (n_samples, n_classes)
        Predicted probabilities.
    labels : array-like, default=None
        All class labels, sorted as the columns of ``y_proba``.
    **test_kwargs
        Further options of :func:`skcalib.stats.spiegelhalter_test` (``alternative``, ...).

    Returns
    -------
    float
        The p-value, in [0, 1]; for more than two classes the overall p-value of the
        one-vs-rest tests, corrected for multiple testing (the test's ``correction``).

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.scorers import spiegelhalter_pvalue
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(0.05, 0.95, size=500)
    >>> y = (rng.random(500) < p).astype(int)
    >>> 0 <= spiegelhalter_pvalue(y, p) <= 1
    True
    """
    return _test_pvalue("spiegelhalter_test", y_true, y_proba, test_kwargs, labels)


def hosmer_lemeshow_pvalue(y_true, y_proba, *, labels=None, **test_kwargs):
    """p-value of the Hosmer--Lemeshow test (:func:`skcalib.stats.hosmer_lemeshow_test`).

    A metric for model selection: greater is better. The p-value depends on the number and kind
    of groups (see the test's Notes); fix them with ``test_kwargs`` when comparing models.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_proba : array-like of shape (n_samples,) or (n_samples, n_classes)
        Predicted probabilities.
    labels : array-like, default=None
        All class labels, sorted as the columns of ``y_proba``.
    **test_kwargs
        Further options of :func:`skcalib.stats.hosmer_lemeshow_test` (``n_groups``,
        ``strategy``, ``df``, ...).

    Returns
    -------
    float
        The p-value, in [0, 1]; for more than two classes the overall p-value of the
        one-vs-rest tests, corrected for multiple testing (the test's ``correction``).

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.scorers import hosmer_lemeshow_pvalue
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(0.05, 0.95, size=500)
    >>> y = (rng.random(500) < p).astype(int)
    >>> 0 <= hosmer_lemeshow_pvalue(y, p) <= 1
    True
    """
    return _test_pvalue("hosmer_lemeshow_test", y_true, y_proba,
                        test_kwargs, labels)


def logistic_calibration_pvalue(y_true, y_proba, *, labels=None, **test_kwargs):
    """p-value of the likelihood-ratio test of calibration intercept 0 and slope 1
    (:func:`skcalib.stats.logistic_calibration`, Cox 1958).

    A metric for model selection: greater is better.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_proba : array-like of shape (n_samples,) or (n_samples, n_classes)
        Predicted probabilities.
    labels : array-like, default=None
        All class labels, sorted as the columns of ``y_proba``.
    **test_kwargs
        Further options of :func:`skcalib.stats.logistic_calibration`.

    Returns
    -------
    float
        The p-value, in [0, 1]; for more than two classes the overall p-value of the
        one-vs-rest tests, corrected for multiple testing (the test's ``correction``).

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.scorers import logistic_calibration_pvalue
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(0.05, 0.95, size=500)
    >>> y = (rng.random(500) < p).astype(int)
    >>> 0 <= logistic_calibration_pvalue(y, p) <= 1
    True
    """
    return _test_pvalue("logistic_calibration", y_true, y_proba,
                        test_kwargs, labels)


def ecce_pvalue(y_true, y_proba, *, labels=None, **test_kwargs):
    """p-value of the cumulative-differences (ECCE) test (:func:`skcalib.stats.ecce_test`).

    A metric for model selection: greater is better.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_proba : array-like of shape (n_samples,) or (n_samples, n_classes)
        Predicted probabilities.
    labels : array-like, default=None
        All class labels, sorted as the columns of ``y_proba``.
    **test_kwargs
        Further options of :func:`skcalib.stats.ecce_test` (``statistic="ks"|"kuiper"``, ...).

    Returns
    -------
    float
        The p-value, in [0, 1] (top-label for more than two classes).

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.scorers import ecce_pvalue
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(0.05, 0.95, size=500)
    >>> y = (rng.random(500) < p).astype(int)
    >>> 0 <= ecce_pvalue(y, p) <= 1
    True
    """
    return _test_pvalue("ecce_test", y_true, y_proba, test_kwargs, labels)


def pit_pvalue(y_true, y_pred, **test_kwargs):
    """p-value of the uniformity test of the PIT values (:func:`skcalib.stats.pit_test`).

    A metric for model selection of probabilistic regressors: greater is better.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Real targets.
    y_pred : distribution or array-like of shape (n_samples, 2)
        Univariate predictive distributions, or ``[mean, std]`` rows (normal predictions).
    **test_kwargs
        Further options of :func:`skcalib.stats.pit_test` (``method="ks"|"cvm"|"ad"``, ...).

    Returns
    -------
    float
        The p-value, in [0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.scorers import pit_pvalue
    >>> rng = np.random.default_rng(0)
    >>> mu = rng.normal(size=500)
    >>> y = mu + rng.normal(size=500)
    >>> 0 <= pit_pvalue(y, np.column_stack([mu, np.ones(500)])) <= 1
    True
    """
    return _test_pvalue("pit_test", y_true, y_pred, test_kwargs)


_METRICS = {
    "calibration_error": calibration_error,
    "skce": skce,
    "mmce": mmce,
    "ucme": ucme,
    "skce_pvalue": skce_pvalue,
    "skce_zscore": skce_zscore,
}

#: The practitioner's toolbox (issue 14): metrics of :mod:`skcalib.metrics` by name, the p-value
#: scorers of the tests of :mod:`skcalib.stats`, and the test behind each p-value scorer (whose
#: options ``make_calibration_scorer`` accepts).
_METRICS.update({func.__name__: func for func in (
    smooth_ece, integrated_calibration_index, brier_score, log_score, crps, nll, ence, uce,
    miscalibration_area, interval_coverage_error, quantile_calibration_error)})
_METRICS.update({func.__name__: func for func in (pinball_loss, interval_score)})
_PVALUE_TESTS = {skce_pvalue: "skce_test", skce_zscore: "skce_test",
                 spiegelhalter_pvalue: "spiegelhalter_test",
                 hosmer_lemeshow_pvalue: "hosmer_lemeshow_test",
                 logistic_calibration_pvalue: "logistic_calibration", ecce_pvalue: "ecce_test",
                 pit_pvalue: "pit_test"}
_METRICS.update({func.__name__: func for func in _PVALUE_TESTS})


def _check_sign_and_kwargs(sign, kwargs):
    """``sign`` (1 or -1) and ``kwargs`` (None or a dict with string keys) of a scorer."""
    if isinstance(sign, (bool, np.bool_)) or not isinstance(sign, Integral) or sign not in (1, -1):
        raise ValueError(f"sign must be 1 (greater is better) or -1 (a lower-is-better metric, "
                         f"negated); got {sign!r}.")
    if kwargs is None:
        return {}
    if not isinstance(kwargs, Mapping):
        raise TypeError(f"kwargs must be a dict of keyword arguments of the metric (or None); "
                        f"got {kwargs!r:.60} of type {type(kwargs).__name__}.")
    bad = [k for k in kwargs if not isinstance(k, str)]
    if bad:
        raise TypeError(f"kwargs must have argument names (strings) as keys; got {bad[:3]!r}.")
    return dict(kwargs)


class CalibrationScorer(ScoreRequestMixin):
    """Scorer that evaluates a calibration metric on a model's predictions (see
    :func:`predict_distribution`).

    With scikit-learn's metadata routing enabled, ``set_score_request(sample_weight=True)``
    makes :func:`~sklearn.model_selection.cross_validate`, :class:`~sklearn.model_selection.
    GridSearchCV` and the like pass their ``sample_weight`` to the metric (test fold by test
    fold); without it the score is unweighted, as scikit-learn's scorers are.

    Parameters
    ----------
    metric : callable
        ``metric(y_true, y_proba, *, labels=..., **kwargs) -> float``. (A metric's name goes to
        :func:`make_calibration_scorer`.)
    sign : {1, -1}, default=-1
        ``-1`` negates the metric (lower-is-better metrics).
    kwargs : dict, default=None
        Fixed keyword arguments of the metric.
    name : str, default=None
        Name used in the repr.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import cross_val_score
    >>> from skcalib import make_calibration_scorer
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> scorer = make_calibration_scorer("calibration_error", n_bins=10)
    >>> scores = cross_val_score(LogisticRegression(max_iter=5000), X, y, cv=3, scoring=scorer)
    >>> bool(all(scores <= 0))
    True
    """

    def __init__(self, metric, sign=-1, kwargs=None, name=None):
        if not callable(metric):
            raise TypeError(
                f"metric must be a callable metric(y_true, y_pred, **kwargs); got {metric!r:.60} "
                f"of type {type(metric).__name__}"
                + (" (make_calibration_scorer takes metric names)." if isinstance(metric, str)
                   else "."))
        self._sign = sign
        self._kwargs = _check_sign_and_kwargs(sign, kwargs)
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a string or None; got {name!r:.60}.")
        self._score_func = metric
        self._name = name or getattr(metric, "__name__", repr(metric))
        try:
            params = inspect.signature(metric).parameters
        except (TypeError, ValueError):  # pragma: no cover - builtins
            params = {}
        self._accepts_labels = "labels" in params
        self._accepts_weight = "sample_weight" in params

    def _routable_params(self):
        return {"sample_weight"} if self._accepts_weight else set()

    def __call__(self, estimator, X, y_true, sample_weight=None):
        """Score ``estimator`` on ``(X, y_true)``; greater is better."""
        pred = predict_distribution(estimator, X)
        classes = None
        if isinstance(pred, Categorical):
            # Metrics (also user callables) get the probability matrix and the labels.
            pred, classes = pred.probs, pred.classes
        kwargs = dict(self._kwargs)
        if classes is not None and self._accepts_labels and "labels" not in kwargs:
            kwargs["labels"] = classes
        if sample_weight is not None:
            if not self._accepts_weight:
                raise ValueError(f"the metric {self._name} does not support sample_weight.")
            kwargs["sample_weight"] = sample_weight
        return self._sign * self._score_func(y_true, pred, **kwargs)

    def __repr__(self):
        args = "".join(f", {k}={v!r}" for k, v in self._kwargs.items())
        sign = "" if self._sign > 0 else ", greater_is_better=False"
        return f"make_calibration_scorer({self._name}{sign}{args})"


def make_calibration_scorer(metric, *, greater_is_better=False, **metric_kwargs):
    """Make a scikit-learn scorer from a calibration metric.

    Parameters
    ----------
    metric : {"calibration_error", "skce", "mmce", "ucme", "skce_pvalue", ...} or callable
        A metric of :mod:`skcalib.metrics` by name, or any function
        ``metric(y_true, y_proba, **kwargs)``. The names also include the practitioner's
        metrics (``"smooth_ece"``, ``"integrated_calibration_index"``, ``"brier_score"``,
        ``"log_score"``, ``"crps"``, ``"nll"``, ``"ence"``, ``"uce"``, ``"miscalibration_area"``,
        ``"interval_coverage_error"``, ``"quantile_calibration_error"``, ``"pinball_loss"``,
        ``"interval_score"`` (pass its ``level``)) and the p-values of
        tests (``"spiegelhalter_pvalue"``, ``"hosmer_lemeshow_pvalue"``,
        ``"logistic_calibration_pvalue"``, ``"ecce_pvalue"``, ``"pit_pvalue"``; pass
        ``greater_is_better=True``), whose options are those of the test.
    greater_is_better : bool, default=False
        Calibration errors are lower-is-better, so the scorer negates them by default.
    **metric_kwargs
        Fixed keyword arguments of the metric, e.g. ``norm="l2"`` or ``kernel=...``.

    Returns
    -------
    CalibrationScorer
        ``scorer(estimator, X, y)`` evaluates the metric on :func:`predict_distribution`:
        ``estimator.predict_proba(X)`` with ``labels=estimator.classes_`` for classifiers, Normal
        predictive distributions from ``predict(X, return_std=True)`` for regressors (only the
        kernel metrics ``"skce"`` and ``"ucme"`` accept distributions).

    Notes
    -----
    With the default ``greater_is_better=False`` the score is the negated error. Unbiased kernel
    estimates (``"skce"``, and ``"mmce"`` with ``estimator="unbiased"``) are negative about half
    of the time on a calibrated model, so their scores can be positive: compare a score with its
    sampling noise, not with zero (the SKCE tests of ``skcalib.stats`` give a p-value).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import GridSearchCV
    >>> from skcalib import make_calibration_scorer
    >>> X, y = load_iris(return_X_y=True)
    >>> search = GridSearchCV(LogisticRegression(max_iter=1000), {"C": [0.1, 1.0]},
    ...                       scoring=make_calibration_scorer("skce"), cv=3).fit(X, y)
    >>> search.best_params_["C"] in (0.1, 1.0)
    True
    """
    check_bool(greater_is_better, "greater_is_better")
    if isinstance(metric, str):
        if metric not in _METRICS:
            raise ValueError(
                f"metric must be one of {sorted(_METRICS)} or a callable; got {metric!r}."
                + did_you_mean(metric, _METRICS)
            )
        name, func = metric, _METRICS[metric]
    elif callable(metric):
        name, func = getattr(metric, "__name__", repr(metric)), metric
    else:
        raise TypeError(f"metric must be a string or a callable; got {metric!r}.")
    if func in _METRICS.values():
        if func in _PVALUE_TESTS:
            from . import stats

            func_params = inspect.signature(getattr(stats, _PVALUE_TESTS[func])).parameters
        else:
            func_params = inspect.signature(func).parameters
        params = func_params
        unknown = sorted(set(metric_kwargs) - set(params))
        if unknown:
            raise TypeError(f"{name}() got unexpected keyword argument(s) {unknown}.")
    return CalibrationScorer(func, sign=1 if greater_is_better else -1, kwargs=metric_kwargs,
                             name=name)


# name -> (metric, fixed keyword arguments). Every error has a long name and a short alias.
_SCORERS = {
    "neg_expected_calibration_error": ("calibration_error", {"norm": "l1"}),
    "neg_ece": ("calibration_error", {"norm": "l1"}),
    "neg_l1_calibration_error": ("calibration_error", {"norm": "l1"}),
    "neg_l2_calibration_error": ("calibration_error", {"norm": "l2"}),
    "neg_rmsce": ("calibration_error", {"norm": "l2"}),
    "neg_l2_squared_calibration_error": ("calibration_error", {"norm": "l2", "squared": True}),
    "neg_msce": ("calibration_error", {"norm": "l2", "squared": True}),
    "neg_max_calibration_error": ("calibration_error", {"norm": "max"}),
    "neg_mce": ("calibration_error", {"norm": "max"}),
    "neg_squared_kernel_calibration_error": ("skce", {}),
    "neg_skce": ("skce", {}),
    "neg_skce_biased": ("skce", {"estimator": "biased"}),
    # the standardised statistic of the SKCE block test: keeps ranking where p-values saturate
    "neg_skce_zscore": ("skce_zscore", {}),
    "neg_maximum_mean_calibration_error": ("mmce", {}),
    "neg_mmce": ("mmce", {}),
    "neg_unnormalized_calibration_mean_embedding": ("ucme", {"random_state": 0}),
    "neg_ucme": ("ucme", {"random_state": 0}),
    # the practitioner's toolbox (issue 14): smooth errors, proper scores, regression
    "neg_smooth_ece": ("smooth_ece", {}),
    "neg_integrated_calibration_index": ("integrated_calibration_index", {"statistic": "ici"}),
    "neg_ici": ("integrated_calibration_index", {"statistic": "ici"}),
    "neg_e50": ("integrated_calibration_index", {"statistic": "e50"}),
    "neg_e90": ("integrated_calibration_index", {"statistic": "e90"}),
    "neg_emax": ("integrated_calibration_index", {"statistic": "emax"}),
    "neg_brier_score": ("brier_score", {}),
    "neg_log_score": ("log_score", {}),
    "neg_crps": ("crps", {}),
    "neg_nll": ("nll", {}),
    "neg_ence": ("ence", {}),
    "neg_uce": ("uce", {}),
    "neg_miscalibration_area": ("miscalibration_area", {}),
    "neg_interval_coverage_error": ("interval_coverage_error", {}),
    "neg_quantile_calibration_error": ("quantile_calibration_error", {}),
    "neg_pinball_loss": ("pinball_loss", {}),
    "neg_interval_score": ("interval_score", {"level": 0.9}),
}

#: Scores from tests, greater is better (not negated): name -> (metric, fixed keyword arguments).
_PVALUE_SCORERS = {
    "skce_pvalue": ("skce_pvalue", {}),
    "spiegelhalter_pvalue": ("spiegelhalter_pvalue", {}),
    "hosmer_lemeshow_pvalue": ("hosmer_lemeshow_pvalue", {}),
    "logistic_calibration_pvalue": ("logistic_calibration_pvalue", {}),
    "ecce_pvalue": ("ecce_pvalue", {}),
    "pit_pvalue": ("pit_pvalue", {}),
}

#: Scorers that only apply to skcalib's calibration estimation functions.
_ESTIMATION_SCORERS = ("neg_calibration_risk",)


def get_scorer_names():
    """Names of skcalib's scorers, accepted by :func:`get_scorer`.

    Only skcalib's own names are listed; scikit-learn's stay available through
    :func:`sklearn.metrics.get_scorer_names`, and :func:`get_scorer` accepts them too.

    ===============================================  =============================================
    long name                                        short alias
    ===============================================  =============================================
    ``neg_expected_calibration_error``               ``neg_ece`` (also ``neg_l1_calibration_error``)
    ``neg_l2_calibration_error``                     ``neg_rmsce``
    ``neg_l2_squared_calibration_error``             ``neg_msce``
    ``neg_max_calibration_error``                    ``neg_mce``
    ``neg_squared_kernel_calibration_error``         ``neg_skce`` (``neg_skce_biased``: biased)
    ``neg_maximum_mean_calibration_error``           ``neg_mmce``
    ``neg_unnormalized_calibration_mean_embedding``  ``neg_ucme``
    ``neg_calibration_risk``                         (estimation functions only)
    ``skce_pvalue``                                  p-value of the SKCE test (greater is better;
                                                     a test, not a ranking: see
                                                     :func:`skce_pvalue`)
    ``neg_skce_zscore``                              minus the standardised SKCE (block estimate
                                                     over its standard error): ranks models
                                                     where the p-values saturate
    ``neg_smooth_ece``                               smooth ECE (Blasiok and Nakkiran)
    ``neg_integrated_calibration_index``             ``neg_ici`` (``neg_e50``, ``neg_e90``,
                                                     ``neg_emax``: the other lowess indices)
    ``neg_brier_score``                              multiclass Brier score (= scikit-learn's)
    ``neg_log_score``                                log loss (= scikit-learn's ``neg_log_loss``)
    ``neg_crps``                                     CRPS of predictive distributions
    ``neg_nll``                                      negative log-likelihood (mean)
    ``neg_ence``                                     ENCE (binned by predicted std)
    ``neg_uce``                                      UCE (binned by predicted variance)
    ``neg_miscalibration_area``                      miscalibration area
    ``neg_interval_coverage_error``                  coverage error of central intervals
    ``neg_quantile_calibration_error``               quantile calibration error (Kuleshov)
    ``neg_pinball_loss``                             pinball loss (Quantiles: their levels;
                                                     other distributions: the deciles)
    ``neg_interval_score``                           interval (Winkler) score of the central
                                                     90 % intervals
    ``spiegelhalter_pvalue``                         p-value, Spiegelhalter's Z (greater is better)
    ``hosmer_lemeshow_pvalue``                       p-value, Hosmer--Lemeshow (greater is better)
    ``logistic_calibration_pvalue``                  p-value, likelihood-ratio test of intercept 0
                                                     and slope 1 (greater is better)
    ``ecce_pvalue``                                  p-value, cumulative-differences (ECCE) test,
                                                     Kolmogorov--Smirnov (greater is better)
    ``pit_pvalue``                                   p-value, uniformity of the PIT values,
                                                     Kolmogorov--Smirnov (greater is better)
    ===============================================  =============================================

    Every ``neg_`` score is a negated lower-is-better metric; the ``_pvalue`` scores are not
    negated. The classification scorers score ``predict_proba``, the regression ones (CRPS, NLL,
    ENCE, UCE, miscalibration area, coverage and quantile errors, pinball loss, interval score,
    PIT) Normal predictions from
    ``predict(X, return_std=True)`` or a model's ``predict_distribution`` (see
    :func:`predict_distribution`). :doc:`/metrics` places each of them next to its metric and test.

    Returns
    -------
    list of str
        Sorted.

    Examples
    --------
    >>> from skcalib import get_scorer_names
    >>> "neg_skce" in get_scorer_names(), "neg_ece" in get_scorer_names()
    (True, True)
    >>> "accuracy" in get_scorer_names()  # scikit-learn's names are not listed
    False
    """
    return sorted(set(_SCORERS) | set(_PVALUE_SCORERS) | set(_ESTIMATION_SCORERS)
                  | {"neg_klce", "neg_kernel_local_calibration_error"})


def get_scorer(scoring):
    """Scorer by name: skcalib's calibration scorers, or any scikit-learn scorer.

    Parameters
    ----------
    scoring : str or callable
        A name of :func:`get_scorer_names` -- the binned errors ``neg_ece``, ``neg_rmsce``,
        ``neg_msce``, ``neg_mce``, the kernel errors ``neg_skce``, ``neg_skce_biased``,
        ``neg_mmce``, ``neg_ucme``, each also under its long name -- or
        ``neg_calibration_risk``, or ``skce_pvalue`` (the p-value of
        :func:`skcalib.stats.skce_test` with ``random_state=0``, deterministic; greater is better:
        a test of each candidate, which saturates at ``1 / (n_resamples + 1)`` for every clearly
        miscalibrated one), or ``neg_skce_zscore`` (minus the standardised SKCE of the block
        test, :func:`skce_zscore`: the calibration-test scorer that keeps ranking at any sample
        size), or a scikit-learn scorer name (a mistyped name gets a "Did you mean ...?"). Callables are returned unchanged. The practitioner's metrics and tests have
        scorers too (``neg_smooth_ece``, ``neg_ici``, ``neg_brier_score``, ``neg_crps``,
        ``neg_ence``, ``neg_miscalibration_area``, ``neg_interval_coverage_error``, the p-values
        ``spiegelhalter_pvalue``, ``pit_pvalue``, ...; the table of :func:`get_scorer_names`).
        ``neg_brier_score`` is also a scikit-learn name: skcalib's gives the same values (with
        ``labels=estimator.classes_``, so string labels need no ``pos_label``). A lower-is-better
        metric's name without ``neg_`` raises a ``ValueError`` that names its scorer.

        ``neg_calibration_risk`` only scores the calibration estimation functions of
        :mod:`skcalib.estimation` (or a pipeline ending in one): the negated held-out risk of the
        fitted estimation function on ``(probabilities, labels)``. Given any other model it
        raises a ``TypeError`` saying so.

    Returns
    -------
    callable
        ``scorer(estimator, X, y, sample_weight=None)``; greater is better.

    Notes
    -----
    Calibration errors are lower-is-better, so the scorers return their negation. The unbiased
    kernel estimates (``neg_skce``, the default, and ``neg_mmce`` with ``estimator="unbiased"``)
    are negative on a calibrated model about half of the time, so their scores are then
    positive: a score within a few standard errors of zero does not show miscalibration (the
    SKCE tests of ``skcalib.stats`` give a p-value).

    Several scorers, skcalib's and scikit-learn's, go in one ``scoring=`` dict::

        cross_validate(model, X, y, scoring={"ece": get_scorer("neg_ece"),
                                             "skce": get_scorer("neg_skce"),
                                             "log_loss": "neg_log_loss"})

    Examples
    --------
    >>> from skcalib import get_scorer
    >>> get_scorer("neg_l2_calibration_error")
    make_calibration_scorer(calibration_error, greater_is_better=False, norm='l2')
    >>> get_scorer("neg_ece")
    make_calibration_scorer(calibration_error, greater_is_better=False, norm='l1')
    """
    if callable(scoring):
        return scoring
    if not isinstance(scoring, str):
        raise TypeError(f"scoring must be a string or a callable; got {scoring!r}.")
    if scoring == "neg_calibration_risk":
        from .estimation import RISK_SCORER

        return copy.copy(RISK_SCORER)  # (its metadata requests are the caller's own)
    if scoring in _SCORERS:
        metric, kwargs = _SCORERS[scoring]
        return make_calibration_scorer(metric, **kwargs)
    if scoring in ("neg_klce", "neg_kernel_local_calibration_error"):
        return make_klce_scorer()
    if scoring in _PVALUE_SCORERS:
        metric, kwargs = _PVALUE_SCORERS[scoring]
        return make_calibration_scorer(metric, greater_is_better=True, **kwargs)
    try:
        return _sk_get_scorer(scoring)
    except ValueError:
        if f"neg_{scoring}" in _SCORERS:  # a lower-is-better metric's name without the sign
            raise ValueError(
                f"scoring={scoring!r}: {scoring} is lower-is-better, its scorer is negated; use "
                f"scoring='neg_{scoring}' (see skcalib.get_scorer_names())."
            ) from None
        raise ValueError(
            f"scoring={scoring!r} is neither a skcalib scorer (skcalib.get_scorer_names()) nor a "
            "scikit-learn one (sklearn.metrics.get_scorer_names())."
            + did_you_mean(scoring, get_scorer_names() + list(_sk_get_scorer_names()))
        ) from None


# --------------------------------------------------------------------------------------------
# KLCE: a scorer with audit features


class KLCEScorer(ScoreRequestMixin):
    """Scorer of the local calibration error :func:`skcalib.klce` on audit features.

    The audit features come from, in this order: the ``audit_features`` argument of the call
    (routed by scikit-learn's metadata routing from ``fit(..., audit_features=A)`` of
    :class:`~sklearn.model_selection.GridSearchCV` or :func:`~sklearn.model_selection.
    cross_validate` when ``sklearn.set_config(enable_metadata_routing=True)``; the scorer
    requests it), or the columns ``audit_columns`` of ``X`` (names of a DataFrame's columns or
    integer positions; None is every column of ``X``). Build it with :func:`make_klce_scorer`.
    ``set_score_request(sample_weight=True)`` also routes ``sample_weight`` to the KLCE.

    Parameters
    ----------
    audit_columns : list of str or int, default=None
        Columns of ``X`` used as audit features when none are routed.
    sign : {1, -1}, default=-1
        ``-1`` negates the error (greater is better).
    kwargs : dict, default=None
        Fixed keyword arguments of :func:`skcalib.klce`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skcalib.scorers import make_klce_scorer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3))
    >>> y = (rng.random(300) < 1 / (1 + np.exp(-X[:, 0]))).astype(int)
    >>> model = LogisticRegression().fit(X, y)
    >>> scorer = make_klce_scorer(audit_columns=[2])  # audit on the third column
    >>> isinstance(scorer(model, X, y), float)
    True
    """

    #: the audit features are requested by default (routed from ``fit(..., audit_features=A)``)
    _default_score_requests = {"audit_features": True}

    def __init__(self, audit_columns=None, sign=-1, kwargs=None):
        self.audit_columns = audit_columns
        self._kwargs = _check_sign_and_kwargs(sign, kwargs)
        self._sign = sign

    def _audit(self, X):
        cols = self.audit_columns
        if hasattr(X, "iloc"):  # DataFrame
            if cols is None:
                return X.to_numpy()
            if all(isinstance(c, str) for c in cols):
                missing = [c for c in cols if c not in X.columns]
                if missing:
                    raise ValueError(f"audit_columns {missing} are not columns of X.")
                return X[list(cols)].to_numpy()
            return X.iloc[:, list(cols)].to_numpy()
        A = np.asarray(X)
        if A.ndim == 1:
            A = A[:, None]
        if cols is None:
            return A
        if not all(isinstance(c, (int, np.integer)) and not isinstance(c, bool) for c in cols):
            raise ValueError("audit_columns must be integer positions when X is not a DataFrame; "
                             f"got {list(cols)!r}.")
        bad = [c for c in cols if not -A.shape[1] <= c < A.shape[1]]
        if bad:
            raise ValueError(f"audit_columns {bad} are out of range for X with {A.shape[1]} "
                             "columns.")
        return A[:, list(cols)]

    def __call__(self, estimator, X, y_true, sample_weight=None, audit_features=None):
        """Score ``estimator`` on ``(X, y_true)``; greater is better.

        Parameters
        ----------
        estimator : classifier
            Fitted classifier with ``predict_proba``.
        X : array-like or DataFrame of shape (n_samples, n_features)
            Model inputs (and the audit columns, if none are routed).
        y_true : array-like of shape (n_samples,)
            True labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights of the KLCE.
        audit_features : array-like of shape (n_samples, n_audit), default=None
            Routed audit features; take precedence over ``audit_columns``.

        Returns
        -------
        float
        """
        pred = predict_distribution(estimator, X)
        if not isinstance(pred, Categorical):
            raise TypeError("the KLCE scores classifiers (predict_proba); got "
                            f"{type(estimator).__name__}.")
        A = self._audit(X) if audit_features is None else audit_features
        kwargs = dict(self._kwargs)
        kwargs.setdefault("labels", pred.classes)
        return self._sign * klce(y_true, pred.probs, A, sample_weight=sample_weight, **kwargs)

    def __repr__(self):
        args = [f"audit_columns={self.audit_columns!r}"] if self.audit_columns is not None else []
        args += [f"{k}={v!r}" for k, v in self._kwargs.items()]
        return f"make_klce_scorer({', '.join(args)})"


def make_klce_scorer(audit_columns=None, **klce_kwargs):
    """Scorer of the negated local calibration error :func:`skcalib.klce` (greater is better).

    Parameters
    ----------
    audit_columns : list of str or int, default=None
        Columns of ``X`` that are the audit features when none are routed (DataFrame column names
        or integer positions; None is all of ``X``). Audit features the model must not see go in
        ``X`` next to the model's inputs, with a column selector (e.g. a ``ColumnTransformer``)
        in front of the model -- or through metadata routing as ``audit_features`` (see
        :class:`KLCEScorer`).
    **klce_kwargs
        Fixed keyword arguments of :func:`skcalib.klce` (``kernel``, ``feature_kernel``, ...).

    Returns
    -------
    KLCEScorer

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.compose import make_column_transformer
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import cross_val_score
    >>> from sklearn.pipeline import make_pipeline
    >>> from skcalib.scorers import make_klce_scorer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3))  # columns 0, 1: model inputs; column 2: audit feature
    >>> y = (rng.random(300) < 1 / (1 + np.exp(-X[:, 0]))).astype(int)
    >>> model = make_pipeline(make_column_transformer(("passthrough", [0, 1])),
    ...                       LogisticRegression())
    >>> scores = cross_val_score(model, X, y, cv=3, scoring=make_klce_scorer(audit_columns=[2]))
    >>> scores.shape
    (3,)
    """
    if audit_columns is not None:
        if isinstance(audit_columns, (str, int, np.integer)):
            audit_columns = [audit_columns]
        audit_columns = list(audit_columns)
        if not audit_columns:
            raise ValueError("audit_columns must name at least one column (or be None).")
    params = inspect.signature(klce).parameters
    unknown = sorted(set(klce_kwargs) - set(params) | ({"y_true", "y_proba", "X"}
                                                       & set(klce_kwargs)))
    if unknown:
        raise TypeError(f"klce() got unexpected keyword argument(s) {unknown}.")
    return KLCEScorer(audit_columns, sign=-1, kwargs=klce_kwargs)
