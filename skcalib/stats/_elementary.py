"""Elementary tests and intervals of calibration: a binomial test of the accuracy against the
mean confidence, binomial tests of the coverage of prediction intervals (central intervals of
predictive distributions, or intervals given by their bounds), the z test of the mean PIT and the
normal interval of a mean score.

Each is a one-number summary that :func:`skcalib.calibration_report` prints beside the kernel,
consistency and PIT tests; here they are public so that the report computes no statistics of its
own. The binomial tests return a :class:`ProportionTestResult` (the observed proportion, its
Clopper--Pearson interval and the binomial p-value, as :func:`scipy.stats.binomtest` gives them),
the z test a :class:`CalibrationTestResult`, the interval a :class:`ScoreInterval`.
"""

import math

import numpy as np
from scipy import stats as _sps

from .._validation import (
    check_frequency_weights,
    check_labels_and_probabilities,
    check_option,
    check_sample_weight,
    check_scalar_param,
    check_scores,
)
from .._problems.univariate import check_bounds_level
from ..distributions import is_distribution
from ..metrics import interval_bounds_coverage, pit
from ._result import (
    CalibrationTestResult,
    ConfidenceInterval,
    IntervalEnds,
    check_confidence_level,
    normal_interval,
    normal_pvalue,
)

__all__ = ["accuracy_test", "coverage_test", "interval_coverage_test", "pit_mean_test",
           "mean_score_ci", "ProportionTestResult", "ScoreInterval"]

_ALTERNATIVES = ("two-sided", "greater", "less")
_PROPORTION_CI_METHODS = ("exact", "wilson", "wilsoncc")


class ProportionTestResult(CalibrationTestResult):
    """Result of a binomial test of calibration (:func:`accuracy_test`, :func:`coverage_test`).

    A proportion of ``k`` successes in ``n_samples`` trials (correct predictions, covered
    targets) is compared with the proportion ``expected`` under calibration by the exact
    binomial test (:func:`scipy.stats.binomtest`). Its parameters are also its attributes.

    Parameters
    ----------
    k : int
        Number of successes.
    n_samples : int
        Number of trials.
    expected : float
        The proportion under the null hypothesis, in [0, 1].
    pvalue : float
        The p-value of the binomial test.
    alternative : {"two-sided", "greater", "less"}
        The alternative of the test: ``"greater"`` rejects for an observed proportion above
        ``expected``, ``"less"`` for one below.

    Attributes
    ----------
    statistic : float
        The observed proportion ``k / n_samples`` (as in SciPy's ``BinomTestResult``).
    estimate : float
        ``statistic - expected``: 0 in expectation under calibration.
    method : str
        ``"binomial"``.

    See Also
    --------
    scipy.stats.binomtest : The test, and the intervals of :meth:`proportion_ci`.

    Examples
    --------
    >>> from skcalib.stats import coverage_test
    >>> res = coverage_test([0.1, -0.4, 2.5, 0.3], [[0.0, 1.0]] * 4, level=0.9)
    >>> res.k, res.statistic, res.expected
    (3, 0.75, 0.9)
    >>> statistic, pvalue = res
    """

    def __init__(self, *, k, n_samples, expected, pvalue, alternative):
        proportion = k / n_samples
        super().__init__(statistic=proportion, pvalue=pvalue, estimate=proportion - expected,
                         method="binomial", n_samples=n_samples, interval=self._gap_interval,
                         alternative=alternative)
        self.k = int(k)
        self.expected = float(expected)

    def proportion_ci(self, confidence_level=0.95, *, method="exact"):
        """Confidence interval for the proportion of successes.

        Parameters
        ----------
        confidence_level : float, default=0.95
            In (0, 1).
        method : {"exact", "wilson", "wilsoncc"}, default="exact"
            ``"exact"``: Clopper--Pearson; ``"wilson"``: Wilson's score interval, without or
            with (``"wilsoncc"``) continuity correction (:meth:`scipy.stats.binomtest`'s
            ``proportion_ci``).

        Returns
        -------
        ConfidenceInterval
            ``(low, high)`` within [0, 1]; one-sided (``high = 1`` or ``low = 0``) for the
            one-sided alternatives.

        Examples
        --------
        >>> from skcalib.stats import coverage_test
        >>> res = coverage_test([0.1, -0.4, 2.5, 0.3], [[0.0, 1.0]] * 4, level=0.9)
        >>> [round(v, 3) for v in res.proportion_ci(0.95)]
        [0.194, 0.994]
        """
        level = check_confidence_level(confidence_level)
        check_option(method, "method", _PROPORTION_CI_METHODS)
        ci = _sps.binomtest(self.k, self.n_samples, alternative=self.alternative).proportion_ci(
            level, method=method)
        return ConfidenceInterval(float(ci.low), float(ci.high))

    def _gap_interval(self, confidence_level, alternative):
        ci = _sps.binomtest(self.k, self.n_samples, alternative=alternative).proportion_ci(
            confidence_level, method="exact")
        return ConfidenceInterval(float(ci.low) - self.expected, float(ci.high) - self.expected)

    def __repr__(self):
        return (f"ProportionTestResult(statistic={self.statistic!r}, pvalue={self.pvalue!r}, "
                f"k={self.k}, n_samples={self.n_samples}, expected={self.expected!r})")


def _check_alternative(alternative):
    return check_option(alternative, "alternative", _ALTERNATIVES)


def accuracy_test(y_true, y_proba, *, alternative="two-sided", labels=None):
    """Binomial test of calibration in the mean: is the accuracy the mean confidence?

    The number ``k`` of correct predictions (the predicted class is the most probable one, the
    first of equal ones) of a top-label calibrated model has mean ``n c`` with ``c`` the mean
    confidence (mean largest probability). The test compares ``k`` with the binomial
    distribution ``B(n, c)`` by :func:`scipy.stats.binomtest`. Under calibration ``k`` is a sum of
    independent Bernoulli variables with the probabilities ``c_i``, whose tails are no heavier
    than those of ``B(n, c)`` (Hoeffding 1956): the test is exact for equal confidences and
    conservative otherwise.

    A small p-value says that the model is over-confident (accuracy below the confidence) or
    under-confident (above it) on average; a large one says nothing about the calibration of
    single predictions (an over- and an under-confident half cancel). There is no
    ``sample_weight``: the binomial law is that of unweighted counts.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_proba : array-like of shape (n_samples,) or (n_samples, n_classes)
        Predicted probabilities: P(positive class) or two columns for a binary problem, one
        column per class (in the order of ``labels``) otherwise.
    alternative : {"two-sided", "greater", "less"}, default="two-sided"
        ``"greater"`` rejects only for an accuracy above the mean confidence (under-confidence),
        ``"less"`` only for one below (over-confidence).
    labels : array-like, default=None
        All class labels (default: those in ``y_true``).

    Returns
    -------
    ProportionTestResult
        ``statistic`` is the accuracy ``k / n``, ``expected`` the mean confidence, ``estimate``
        their difference (negative for an over-confident model), ``pvalue`` the binomial
        p-value; :meth:`ProportionTestResult.proportion_ci` gives the (Clopper--Pearson)
        interval of the accuracy.

    Raises
    ------
    ValueError
        If the labels or probabilities are invalid, or ``alternative`` is unknown.

    See Also
    --------
    skcalib.calibration_error : The binned calibration error, which looks at every bin.
    coverage_test : The same test for the coverage of prediction intervals.

    References
    ----------
    W. Hoeffding, "On the distribution of the number of successes in independent trials",
    Annals of Mathematical Statistics 27 (1956) 713-721.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.stats import accuracy_test
    >>> rng = np.random.default_rng(0)
    >>> P = rng.dirichlet([1, 1, 1], size=500)
    >>> y = (P.cumsum(axis=1) > rng.random((500, 1))).argmax(axis=1)  # drawn from P
    >>> bool(accuracy_test(y, P).pvalue > 0.01)
    True
    >>> sharp = P ** 4 / (P ** 4).sum(axis=1, keepdims=True)  # over-confident
    >>> res = accuracy_test(y, sharp)
    >>> bool(res.statistic < res.expected), bool(res.pvalue < 1e-6)
    (True, True)
    """
    _check_alternative(alternative)
    data = check_labels_and_probabilities(y_true, y_proba, labels=labels, min_samples=1)
    P = np.asarray(data.probs)
    k = int(np.count_nonzero(np.asarray(data.y) == np.argmax(P, axis=1)))
    n = P.shape[0]
    confidence = float(np.mean(np.max(P, axis=1)))
    pvalue = _sps.binomtest(k, n, p=min(confidence, 1.0), alternative=alternative).pvalue
    return ProportionTestResult(k=k, n_samples=n, expected=confidence, pvalue=float(pvalue),
                                alternative=alternative)


def coverage_test(y_true, y_pred, *, level=0.9, alternative="two-sided"):
    """Binomial test of the coverage of central prediction intervals.

    The central interval at level ``level`` of each predictive distribution (from its
    ``(1 - level) / 2`` to its ``(1 + level) / 2`` quantile) covers the target with probability
    ``level`` under calibration, so the number ``k`` of covered targets of ``n`` independent
    samples is binomial ``B(n, level)``; the test compares ``k`` with it by
    :func:`scipy.stats.binomtest` (exact). Coverage is read from the PIT as in
    :func:`skcalib.interval_coverage`. A coverage below ``level`` means too narrow intervals
    (over-confidence), above it too wide ones. There is no ``sample_weight``: the binomial law is
    that of unweighted counts.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Real targets.
    y_pred : Distribution or array-like of shape (n_samples, 2)
        Univariate predictive distributions (Normal, Laplace, Empirical, Quantiles, or a Mixture
        of them), or predicted means and standard deviations, read as normal predictions. An
        array is never read as interval bounds ``[lower, upper]``: test those with
        :func:`interval_coverage_test`.
    level : float, default=0.9
        Nominal coverage of the central intervals, in (0, 1).
    alternative : {"two-sided", "greater", "less"}, default="two-sided"
        ``"greater"`` rejects only for a coverage above ``level`` (too wide intervals),
        ``"less"`` only for one below (too narrow ones).

    Returns
    -------
    ProportionTestResult
        ``statistic`` is the observed coverage ``k / n``, ``expected`` the nominal ``level``,
        ``pvalue`` the binomial p-value; :meth:`ProportionTestResult.proportion_ci` gives the
        (Clopper--Pearson) interval of the coverage.

    Raises
    ------
    ValueError
        If the predictions or targets are invalid, ``level`` is not in (0, 1) or
        ``alternative`` is unknown.
    TypeError
        If ``level`` is not a real number.

    See Also
    --------
    skcalib.interval_coverage : The observed coverages.
    interval_coverage_test : The same test for intervals given by their bounds.
    pit_test : Uniformity of the PIT values, which looks at every level at once.
    adjust_pvalues : To test several levels together (Bonferroni or Holm).

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.distributions import Normal
    >>> from skcalib.stats import coverage_test
    >>> rng = np.random.default_rng(0)
    >>> mu = rng.normal(size=1000)
    >>> y = mu + rng.normal(size=1000)
    >>> bool(coverage_test(y, Normal(mu, 1.0), level=0.9).pvalue > 0.01)
    True
    >>> res = coverage_test(y, Normal(mu, 0.5), level=0.9)  # too narrow
    >>> round(res.statistic, 2), bool(res.pvalue < 1e-6)
    (0.57, True)
    """
    _check_coverage_level(level)
    _check_alternative(alternative)
    if isinstance(y_pred, dict):
        raise TypeError("y_pred must be a predictive distribution or an (n_samples, 2) array "
                        "[mean, std]; got a dict. For intervals given by their bounds "
                        "({level: [lower, upper] rows}) use interval_coverage_test.")
    try:
        u = pit(y_true, y_pred)
    except (TypeError, ValueError) as exc:
        if is_distribution(y_pred):
            raise
        raise type(exc)(f"{exc} (coverage_test reads an (n_samples, 2) array as [mean, std] "
                        "of normal predictions; for interval bounds [lower, upper] use "
                        "interval_coverage_test.)") from None
    # covered iff |2 u - 1| <= level, as interval_coverage counts them
    k = int(np.count_nonzero(np.abs(2.0 * u - 1.0) <= level))
    return _binomial_coverage(k, u.shape[0], level, alternative)


def _check_coverage_level(level):
    """A nominal coverage in (0, 1)."""
    check_scalar_param(level, "level", kind="real", min_val=0.0, include_min=False)
    if not level < 1.0:
        raise ValueError(f"level must be < 1; got {level!r}.")


def _binomial_coverage(k, n, level, alternative):
    """The exact binomial test of ``k`` covered targets out of ``n`` against ``B(n, level)``."""
    pvalue = _sps.binomtest(k, n, p=float(level), alternative=alternative).pvalue
    return ProportionTestResult(k=k, n_samples=n, expected=float(level), pvalue=float(pvalue),
                                alternative=alternative)


def interval_coverage_test(y_true, y_interval, *, level=None, alternative="two-sided"):
    """Binomial test of the coverage of prediction intervals given by their bounds.

    The intervals ``[lower, upper]`` (closed) at nominal level ``level`` -- conformal intervals,
    quantile-regression intervals -- cover each target with probability ``level`` under
    calibration, so the number ``k`` of covered targets of ``n`` independent samples is binomial
    ``B(n, level)``; the test compares ``k`` with it by :func:`scipy.stats.binomtest` (exact), as
    :func:`coverage_test` does for the central intervals of predictive distributions. Coverage is
    counted by :func:`skcalib.interval_bounds_coverage`. A coverage below ``level`` means too
    narrow intervals, above it too wide ones. There is no ``sample_weight``: the binomial law is
    that of unweighted counts.

    An ``(n_samples, 2)`` array here always holds bounds ``[lower, upper]``;
    :func:`coverage_test` reads the same shape as ``[mean, std]`` of normal predictions (so
    bounds given to it are silently misread whenever their upper bounds are non-negative). Give
    bounds to this function, distributions to :func:`coverage_test`: each refuses the other's
    input with a message naming the other.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Real targets.
    y_interval : array-like of shape (n_samples, 2) or dict
        Lower and upper bounds ``[lower, upper]`` of the intervals (``lower <= upper``), or a dict
        ``{level: (n_samples, 2) array}`` of intervals at several nominal levels.
    level : float, default=None
        Nominal coverage in (0, 1) of the intervals of an array ``y_interval``; required for an
        array, and must be left ``None`` for a dict (whose keys are the levels).
    alternative : {"two-sided", "greater", "less"}, default="two-sided"
        ``"greater"`` rejects only for a coverage above the level (too wide intervals),
        ``"less"`` only for one below (too narrow ones).

    Returns
    -------
    ProportionTestResult or dict
        For an array: ``statistic`` is the observed coverage ``k / n``, ``expected`` the nominal
        ``level``, ``pvalue`` the binomial p-value; :meth:`ProportionTestResult.proportion_ci`
        gives the (Clopper--Pearson) interval of the coverage. For a dict: a dict
        ``{level: ProportionTestResult}`` in increasing order of level, one test per level and
        no correction for their multiplicity: to test all levels together, adjust their p-values,
        e.g. ``adjust_pvalues([r.pvalue for r in res.values()], method="holm")`` (Holm's
        adjustment holds whatever the dependence between the levels, which share the targets).

    Raises
    ------
    TypeError
        If ``y_interval`` is a predictive distribution (use :func:`coverage_test`), or ``level``
        is missing for an array, given with a dict, or not a real number.
    ValueError
        If the bounds or targets are not finite real numbers of matching lengths, a lower bound
        exceeds its upper bound, a level is not in (0, 1), or ``alternative`` is unknown.

    See Also
    --------
    coverage_test : The same test for central intervals of predictive distributions.
    skcalib.interval_bounds_coverage : The observed coverages.
    skcalib.interval_score : The interval (Winkler) score of the same bounds.
    adjust_pvalues : To combine the tests of several levels (Holm or Bonferroni).

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.stats import adjust_pvalues, interval_coverage_test
    >>> rng = np.random.default_rng(0)
    >>> y = rng.normal(size=1000)
    >>> bounds = np.column_stack([np.full(1000, -1.645), np.full(1000, 1.645)])  # 90 % of N(0, 1)
    >>> res = interval_coverage_test(y, bounds, level=0.9)
    >>> res.expected, bool(res.pvalue > 0.01)
    (0.9, True)
    >>> tests = interval_coverage_test(y, {0.5: 0.5 * bounds, 0.9: bounds})  # 0.5: too wide
    >>> [round(r.statistic, 2) for r in tests.values()]
    [0.61, 0.91]
    >>> adjusted = adjust_pvalues([r.pvalue for r in tests.values()], method="holm")
    """
    if is_distribution(y_interval):
        raise TypeError(f"y_interval must be interval bounds (an (n_samples, 2) array [lower, "
                        f"upper] or a dict of them by level); got a {type(y_interval).__name__} "
                        "distribution. Test the central intervals of predictive distributions "
                        "with coverage_test(y_true, y_pred, level=...).")
    _check_alternative(alternative)
    check_bounds_level(y_interval, level)
    coverage = interval_bounds_coverage(y_true, y_interval)
    n = int(np.shape(y_true)[0])
    # the coverage is the mean of n booleans: k / n, from which round() recovers k exactly
    if isinstance(coverage, dict):
        return {lv: _binomial_coverage(int(round(c * n)), n, lv, alternative)
                for lv, c in coverage.items()}
    return _binomial_coverage(int(round(coverage * n)), n, level, alternative)


def pit_mean_test(y_true, y_pred, *, alternative="two-sided", sample_weight=None):
    """z test of the mean PIT: do the targets fall above or below the predicted medians?

    The PIT values ``u_i = F_i(y_i)`` (:func:`skcalib.pit`) of a calibrated model with continuous
    predictive distributions are uniform on ``[0, 1]``: mean ``1/2`` and variance ``1/12``. The
    test standardises their mean by its standard error under that null::

        Z = (mean(u) - 1/2) / sqrt(1 / (12 n))

    and compares ``Z`` with the standard normal distribution (the central limit theorem; the
    mean of uniform variables is close to normal already at ``n = 12``). A mean PIT above 1/2
    means targets above the predicted medians: predictions biased low. The test sees bias only;
    too narrow or too wide predictions keep the mean at 1/2 (use :func:`pit_test`).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Real targets.
    y_pred : Distribution or array-like of shape (n_samples, 2)
        Univariate predictive distributions (Normal, Laplace, or a Mixture of them), or predicted
        means and standard deviations, read as normal predictions.
    alternative : {"two-sided", "greater", "less"}, default="two-sided"
        ``"greater"`` rejects only for a mean PIT above 1/2 (predictions biased low),
        ``"less"`` only for one below (biased high).
    sample_weight : array-like of shape (n_samples,), default=None
        Frequency weights (a weight ``k`` counts as ``k`` copies of the row): the weighted mean
        of the PIT values, with ``n`` the sum of the weights.

    Returns
    -------
    CalibrationTestResult
        ``statistic`` is ``Z``, ``pvalue`` its normal p-value, ``estimate`` the mean PIT minus
        1/2 (0 in expectation under calibration), ``standard_error`` its standard error under
        the null ``sqrt(1 / (12 n))``, and ``confidence_interval()`` the normal interval for it
        (not clipped at 0: the difference can be negative); ``method`` is ``"z"``.

    Raises
    ------
    ValueError
        If the predictions, targets or weights are invalid, or ``alternative`` is unknown.

    See Also
    --------
    skcalib.pit : The PIT values.
    pit_test : Their uniformity (Kolmogorov--Smirnov, Cramér--von Mises, Anderson--Darling).

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.distributions import Normal
    >>> from skcalib.stats import pit_mean_test
    >>> rng = np.random.default_rng(0)
    >>> mu = rng.normal(size=1000)
    >>> y = mu + rng.normal(size=1000)
    >>> bool(pit_mean_test(y, Normal(mu, 1.0)).pvalue > 0.01)
    True
    >>> res = pit_mean_test(y, Normal(mu - 0.3, 1.0))  # predictions biased low
    >>> bool(res.estimate > 0), bool(res.pvalue < 1e-6)
    (True, True)
    """
    _check_alternative(alternative)
    u = pit(y_true, y_pred)
    n = u.shape[0]
    w = check_frequency_weights(check_sample_weight(sample_weight, n))
    if w is None:
        mean, total = float(np.mean(u)), float(n)
    else:
        total = float(np.sum(w))
        mean = float(np.dot(w, u) / total)
    estimate = mean - 0.5
    se = math.sqrt(1.0 / (12.0 * total))
    z = estimate / se

    def interval(level, alt):
        return normal_interval(estimate, se, level, alt, lower_bound=None)

    return CalibrationTestResult(statistic=z, pvalue=normal_pvalue(z, alternative),
                                 estimate=estimate, method="z", n_samples=n, standard_error=se,
                                 interval=interval, alternative=alternative)


class ScoreInterval(IntervalEnds):
    """A confidence interval for the mean of per-sample scores (returned by
    :func:`mean_score_ci`).

    Its parameters are also its attributes; it unpacks as ``low, high``.

    Parameters
    ----------
    confidence_interval : ConfidenceInterval
        ``(low, high)``; ``(nan, nan)`` where the standard error is not finite.
    estimate : float
        The (weighted) mean score.
    standard_error : float
        Its standard error.
    confidence_level : float
        The level of the interval, in (0, 1).
    alternative : str
        ``"two-sided"``, ``"greater"`` (lower bound, ``high = inf``) or ``"less"`` (upper
        bound, ``low = -inf``).
    n_samples : int
        Number of scores.

    Examples
    --------
    >>> from skcalib.stats import mean_score_ci
    >>> low, high = mean_score_ci([0.2, 0.4, 0.3, 0.5])
    >>> round(low, 3), round(high, 3)
    (0.223, 0.477)
    """

    method = "normal"

    def __init__(self, confidence_interval, estimate, standard_error, confidence_level,
                 alternative, n_samples):
        self.confidence_interval = confidence_interval
        self.estimate = float(estimate)
        self.standard_error = float(standard_error)
        self.confidence_level = confidence_level
        self.alternative = alternative
        self.n_samples = int(n_samples)

    def __repr__(self):
        return (f"ScoreInterval(low={self.low!r}, high={self.high!r}, estimate={self.estimate!r}, "
                f"standard_error={self.standard_error!r}, "
                f"confidence_level={self.confidence_level!r})")


def mean_score_ci(scores, *, confidence_level=0.95, alternative="two-sided",
                  sample_weight=None):
    """Normal confidence interval for the mean of per-sample scores (e.g. the mean CRPS).

    The mean ``s`` of ``n`` independent scores with sample standard deviation ``sd`` (``n - 1``
    in its denominator) is close to normal with standard error ``sd / sqrt(n)``; the interval
    is ``s -/+ z sd / sqrt(n)`` with ``z`` the normal quantile of the level (the Wald interval;
    a Student ``t`` quantile would widen it by less than 1 % from ``n = 100`` on). It is how the
    uncertainty of a proper score is usually reported: the per-sample scores come from the
    metric with ``reduction="none"`` (:func:`skcalib.crps`), or from a scoring rule computed by
    hand. The scores are divided by their largest absolute value before the sums (and the result
    multiplied back), so that scores near the float range do not overflow.

    Parameters
    ----------
    scores : array-like of shape (n_samples,)
        Finite per-sample scores (at least 2).
    confidence_level : float, default=0.95
        In (0, 1).
    alternative : {"two-sided", "greater", "less"}, default="two-sided"
        ``"greater"`` gives the one-sided interval ``(low, inf)`` (a lower confidence bound),
        ``"less"`` the interval ``(-inf, high)``.
    sample_weight : array-like of shape (n_samples,), default=None
        Frequency weights (a weight ``k`` counts as ``k`` copies of the score): weighted mean,
        ``sd^2 = sum_i w_i (s_i - s)^2 / (W - 1)`` and ``n = W``, the sum of the weights (at
        least 2).

    Returns
    -------
    ScoreInterval
        ``confidence_interval`` (also ``low``, ``high``), ``estimate`` (the mean score) and
        ``standard_error``.

    Raises
    ------
    ValueError
        If ``scores`` is not one-dimensional, has fewer than 2 values or a non-finite one, the
        weights are invalid or sum to less than 2, or ``confidence_level`` or ``alternative`` is
        invalid.

    See Also
    --------
    skcalib.crps : Per-sample CRPS with ``reduction="none"``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib import crps
    >>> from skcalib.distributions import Normal
    >>> from skcalib.stats import mean_score_ci
    >>> rng = np.random.default_rng(0)
    >>> mu = rng.normal(size=1000)
    >>> y = mu + rng.normal(size=1000)
    >>> ci = mean_score_ci(crps(y, Normal(mu, 1.0), reduction="none"))
    >>> bool(ci.low < 1 / np.sqrt(np.pi) < ci.high)  # the expected CRPS of a calibrated N(mu, 1)
    True
    """
    level = check_confidence_level(confidence_level, alternative)
    s = check_scores(scores, "scores")
    if s.ndim != 1:
        raise ValueError(f"scores must be one-dimensional; got shape {s.shape}.")
    n = s.shape[0]
    if n < 2:
        raise ValueError(f"scores must hold at least 2 values for a standard error; got {n}.")
    w = check_frequency_weights(check_sample_weight(sample_weight, n), min_total=2.0)
    top = float(np.max(np.abs(s))) or 1.0
    scaled = s / top
    if w is None:
        total = n
        mean = float(np.mean(scaled))
        sd = float(np.std(scaled, ddof=1))
    else:
        total = float(np.sum(w))
        mean = float(np.dot(w, scaled) / total)
        sd = math.sqrt(float(np.dot(w, (scaled - mean) ** 2)) / (total - 1.0))
    estimate = mean * top
    se = sd / math.sqrt(total) * top
    if alternative == "two-sided":
        z = float(_sps.norm.ppf(1 - (1.0 - level) / 2))
    else:
        z = float(_sps.norm.ppf(level))
    half = z * sd / math.sqrt(total) * top
    if not math.isfinite(half):
        ci = ConfidenceInterval(np.nan, np.nan)
    elif alternative == "two-sided":
        ci = ConfidenceInterval(estimate - half, estimate + half)
    elif alternative == "greater":
        ci = ConfidenceInterval(estimate - half, np.inf)
    else:
        ci = ConfidenceInterval(-np.inf, estimate + half)
    return ScoreInterval(ci, estimate, se, level, alternative, n)
