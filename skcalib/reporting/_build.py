"""``calibration_report``: checks every argument before any work, turns a fitted model and its
inputs (or the predictions themselves) into predictions and a task, and hands them to the
report of the task (:mod:`._classification` or :mod:`._regression`).
"""

import numpy as np
from sklearn.exceptions import NotFittedError

from .._predictions import predict_distribution
from .._validation import (
    check_confidence_level,
    check_n_bins,
    check_n_jobs,
    check_n_resamples,
    check_option,
    check_random_state_param,
)
from ..distributions import Categorical, is_distribution
from ._classification import classification_report
from ._regression import regression_report

__all__ = ["calibration_report"]

_TASKS = ("auto", "classification", "regression")


def calibration_report(estimator_or_predictions, X=None, y=None, *, task="auto", labels=None,
                       n_bins=15, confidence_level=0.95, n_resamples=1000, random_state=0,
                       n_jobs=None, sample_weight=None, name=None):
    """The main calibration numbers of a model, with their uncertainty and a verdict per section.

    Classifiers (class probabilities) get: accuracy and mean confidence; the binned errors (ECE
    with the p-value of the consistency test and the ECE a calibrated model would show on the
    same predictions, MCE with the size of its bin, class-wise ECE); the smooth errors (smECE,
    ICI); the SKCE with its test and interval; the Brier score and log loss with their CORP
    decompositions; the calibration slope and intercept. Probabilistic regressors (predictive
    distributions) get: the SKCE with its test and interval; NLL and CRPS; the PIT test; the
    coverage of central intervals; the quantile calibration error and miscalibration area.
    Sample-based predictions (draws, ensemble members:
    :class:`~skcalib.distributions.Empirical`) and predicted quantiles
    (:class:`~skcalib.distributions.Quantiles`) get every section their family supports; a
    number a family cannot give (the NLL of draws, which have no density) is left empty with
    the reason in its note.

    Parameters
    ----------
    estimator_or_predictions : fitted estimator, array-like or distribution
        A fitted classifier (``predict_proba(X)``) or probabilistic regressor (its predictive
        distribution by :func:`skcalib.scorers.predict_distribution`), with its inputs ``X``; or
        the predictions themselves: class probabilities (``(n,)`` P(positive) or ``(n, 2)`` for
        a binary problem, ``(n, n_classes)``) or a :mod:`skcalib.distributions` object
        (``Normal``, ``Empirical``, ``Quantiles``, ...). An
        ``(n, 2)`` array is read as binary probabilities unless ``task="regression"``, which
        reads it as ``[mean, std]`` of normal predictions.
    X : array-like, default=None
        The model's inputs, when an estimator is given (must be None for predictions).
    y : array-like of shape (n_samples,)
        The true labels or targets (required; pass it by keyword with predictions).
    task : {"auto", "classification", "regression"}, default="auto"
        ``"auto"``: classification for class probabilities, a ``Categorical`` or a model with
        ``predict_proba``; regression for other distributions and models.
    labels : array-like, default=None
        All class labels (default: the model's ``classes_``, else those present in ``y``).
    n_bins : int, default=15
        Equal-width bins of the binned errors and the reliability diagram.
    confidence_level : float, default=0.95
        Level of every interval; the verdicts test at ``1 - confidence_level``.
    n_resamples : int, default=1000
        Resamples of the SKCE bootstrap test and of the ECE consistency test (at least 20).
        Above ``reporting.LARGE_N`` (20,000) samples the SKCE section uses the block estimator
        with blocks of about ``sqrt(n)`` samples and its asymptotic block test and interval
        (``O(n^1.5)`` work instead of ``O(n^2)``); a 4-class report on 300,000 predictions takes
        about 12 s, most of it drawing the consistency test's labels.
    random_state : None, int, Generator or RandomState, default=0
        Seeds the resampling tests and the kernels' median heuristics: equal seeds give equal
        reports.
    n_jobs : int, default=None
        Parallel jobs of the resampling tests (results do not depend on it).
    sample_weight : None
        Not supported: the SKCE test and interval, the consistency test and the PIT test assume
        unweighted independent samples, so a weighted report would mix weighted and unweighted
        numbers. Anything but None raises a ``ValueError``; repeat rows to express frequency
        weights, or call the metric functions, which take ``sample_weight``.
    name : str, default=None
        Name of the model in the report (default: the estimator's class name, or
        ``"predictions"``).

    Returns
    -------
    CalibrationReport
        Its ``sections`` (``report["kernel"]["SKCE"].pvalue``), ``verdict``, ``str()``,
        ``to_html()``, ``to_dict()``, ``to_frame()`` and ``plot()``.

    Raises
    ------
    ValueError
        If ``y`` is missing, ``X`` is missing for an estimator (or given with predictions), the
        shapes disagree, the inputs have missing values or probabilities are invalid.
    TypeError
        If ``estimator_or_predictions`` is neither an estimator nor predictions.

    See Also
    --------
    skcalib.stats.skce_test, skcalib.stats.consistency_test, skcalib.stats.logistic_calibration,
    skcalib.stats.pit_test, skcalib.stats.coverage_test : The tests behind the verdicts.
    skcalib.stats.accuracy_test, skcalib.stats.pit_mean_test, skcalib.stats.mean_score_ci : The
        other tests and intervals of the report.

    Notes
    -----
    Every number is the value of a public function called on the same data with the report's
    settings (:func:`skcalib.calibration_error`, :func:`skcalib.stats.skce_test`, ...; the
    accuracy's and the coverages' intervals and tests are :func:`skcalib.stats.accuracy_test`
    and :func:`skcalib.stats.coverage_test`, the mean PIT's test
    :func:`skcalib.stats.pit_mean_test` and the mean CRPS's interval
    :func:`skcalib.stats.mean_score_ci`). The verdicts test at level
    ``alpha = 1 - confidence_level``: the one-vs-rest logistic fits of a multiclass problem are
    combined by Holm's correction and the four coverage levels by Bonferroni's
    (:func:`skcalib.stats.adjust_pvalues`). The section verdicts test each at ``alpha``; the
    overall verdict combines the report's tests by Holm's step-down adjustment (so a calibrated
    model is flagged with probability at most ``alpha``) and lists every test that rejects after
    it.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib import calibration_report
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=1000)
    >>> y = (rng.random(1000) < 1 / (1 + np.exp(-z))).astype(int)
    >>> overconfident = 1 / (1 + np.exp(-2 * z))  # logits twice too large
    >>> report = calibration_report(overconfident, y=y, n_resamples=200)
    >>> report.verdict.startswith("Evidence of miscalibration")
    True
    >>> print(report["logistic"].verdict)  # doctest: +ELLIPSIS
    Miscalibrated: the model is over-confident (calibration slope 0.418 [0.34, 0.496]); ...
    """
    # parameters first, before any work
    task = check_option(task, "task", _TASKS)
    n_bins = check_n_bins(n_bins)
    confidence_level = check_confidence_level(confidence_level)
    n_resamples = check_n_resamples(n_resamples, "n_resamples", min_val=20)
    random_state = check_random_state_param(random_state)
    n_jobs = check_n_jobs(n_jobs)
    if sample_weight is not None:
        raise ValueError(
            "sample_weight is not supported by calibration_report: the SKCE test and interval, "
            "the consistency test and the PIT test assume unweighted independent samples. Repeat "
            "rows to express frequency weights, or call the metric functions (which take "
            "sample_weight) directly.")
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be a str or None; got {type(name).__name__}.")
    predictions, task, labels, name = _resolve(estimator_or_predictions, X, y, task, labels,
                                               name)

    settings = dict(n_bins=n_bins, confidence_level=confidence_level, n_resamples=n_resamples,
                    random_state=random_state, n_jobs=n_jobs)
    if task == "classification":
        return classification_report(predictions, y, labels, name, **settings)
    if labels is not None:
        raise ValueError("labels is for classification; regression reports take no labels.")
    return regression_report(predictions, y, name, **settings)


def _resolve(obj, X, y, task, labels, name):
    """``(predictions, task, labels, name)`` of a fitted estimator with its inputs ``X`` (its
    predictions on ``X``) or of predictions, with the checks of the arguments that go together
    (``X`` only with an estimator, ``y`` always)."""
    is_estimator = _is_estimator(obj)
    if not is_estimator and X is not None:
        raise ValueError("X must be None when estimator_or_predictions holds predictions "
                         "(X is the model's inputs, for an estimator); pass the targets as "
                         "y=..., e.g. calibration_report(y_proba, y=y_true).")
    if y is None:
        raise ValueError("y (the true labels or targets) is required: calibration_report("
                         "estimator, X, y) or calibration_report(predictions, y=y).")
    if not is_estimator:
        if obj is None:
            raise ValueError("estimator_or_predictions must be a fitted estimator, class "
                             "probabilities or a skcalib distribution; got None.")
        if task == "auto":
            task = ("regression" if is_distribution(obj) and not isinstance(obj, Categorical)
                    else "classification")
        return obj, task, labels, name if name is not None else "predictions"
    if X is None:
        raise ValueError(f"X is required when estimator_or_predictions is an estimator "
                         f"({type(obj).__name__}): the report predicts on X.")
    name = name if name is not None else _estimator_name(obj)
    if task == "auto":
        task = "classification" if hasattr(obj, "predict_proba") else "regression"
    if task != "classification":
        return predict_distribution(obj, X), task, labels, name
    if not hasattr(obj, "predict_proba"):
        raise TypeError(f"task='classification' needs a classifier with predict_proba; "
                        f"{type(obj).__name__} has none.")
    classes = getattr(obj, "classes_", None)
    if classes is None:
        raise NotFittedError(f"{type(obj).__name__} is not fitted (it has no classes_).")
    predictions = np.asarray(obj.predict_proba(X))
    if labels is not None and not np.array_equal(np.sort(np.asarray(labels)),
                                                 np.sort(np.asarray(classes))):
        raise ValueError(f"labels must be the classes of the estimator "
                         f"({list(classes)}) or None; got {list(labels)}.")
    return predictions, task, np.asarray(classes), name


def _is_estimator(obj):
    if obj is None or is_distribution(obj) or isinstance(obj, (np.ndarray, list, tuple)):
        return False
    if hasattr(obj, "__array__") or hasattr(obj, "iloc"):  # DataFrame, Series, array-likes
        return False
    if hasattr(obj, "predict_proba") or hasattr(obj, "predict") or hasattr(
            obj, "predict_distribution"):
        return True
    raise TypeError("estimator_or_predictions must be a fitted estimator (with predict_proba or "
                    "predict), class probabilities or a skcalib distribution; got "
                    f"{type(obj).__name__}.")


def _estimator_name(estimator):
    steps = getattr(estimator, "steps", None)
    if steps:
        estimator = steps[-1][1]
    return type(estimator).__name__
