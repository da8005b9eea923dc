"""Result objects of skcalib's hypothesis tests, in the style of SciPy's.

A test returns a :class:`CalibrationTestResult`: ``statistic`` and ``pvalue`` (it unpacks as
``statistic, pvalue = result``, as SciPy's results do), the ``estimate`` of the calibration error
the test is built on, the ``method``, the number of resamples and the simulated null distribution
where there is one, and :meth:`CalibrationTestResult.confidence_interval` where the method has an
interval.
"""

from typing import NamedTuple

import numpy as np
from scipy import stats as _sps

from .._validation import check_confidence_level

__all__ = ["CalibrationTestResult", "ConfidenceInterval", "StatisticPvalueTuple",
           "resampling_pvalue", "check_confidence_level", "normal_interval", "normal_pvalue",
           "standardise", "IntervalEnds"]

class ConfidenceInterval(NamedTuple):
    """A confidence interval ``(low, high)`` (SciPy's convention: a named tuple).

    Parameters
    ----------
    low : float
        Lower end (0 or more for a squared error).
    high : float
        Upper end (``inf`` for a one-sided lower bound).
    """

    low: float
    high: float


class IntervalEnds:
    """The ends of an interval result that holds a :class:`ConfidenceInterval` as
    ``confidence_interval`` (:class:`~skcalib.stats.SKCEInterval`,
    :class:`~skcalib.stats.ScoreInterval`): ``low``, ``high``, and unpacking as ``low, high``."""

    @property
    def low(self):
        """Lower end of the interval."""
        return self.confidence_interval.low

    @property
    def high(self):
        """Upper end of the interval."""
        return self.confidence_interval.high

    def __iter__(self):
        return iter(self.confidence_interval)


def normal_interval(estimate, standard_error, confidence_level=0.95, alternative="two-sided",
                    lower_bound=0.0):
    """Wald interval ``estimate -/+ z * standard_error``, intersected with ``[lower_bound, inf)``
    (a squared error is never negative): two-sided, or one-sided ``(low, inf)`` for
    ``alternative="greater"`` and ``(lower_bound, high)`` for ``"less"``."""
    level = check_confidence_level(confidence_level, alternative)
    if not np.isfinite(standard_error):
        return ConfidenceInterval(np.nan, np.nan)
    if alternative == "two-sided":
        z = _sps.norm.ppf(0.5 + level / 2.0)
        low, high = estimate - z * standard_error, estimate + z * standard_error
    elif alternative == "greater":
        low, high = estimate - _sps.norm.ppf(level) * standard_error, np.inf
    else:
        low, high = -np.inf, estimate + _sps.norm.ppf(level) * standard_error
    if lower_bound is not None:
        low, high = max(low, lower_bound), max(high, lower_bound)
    return ConfidenceInterval(float(low), float(high))


def normal_pvalue(z, alternative="two-sided"):
    """P-value of a standard normal statistic ``z``: ``2 (1 - Phi(|z|))`` two-sided, the upper
    tail for ``"greater"``, the lower one for ``"less"``."""
    if alternative == "two-sided":
        return float(2.0 * _sps.norm.sf(abs(z)))
    if alternative == "greater":
        return float(_sps.norm.sf(z))
    return float(_sps.norm.cdf(z))


def standardise(estimate, standard_error):
    """``estimate / standard_error`` as a float (``+-inf`` or 0 for a zero standard error, NaN
    for a NaN one), or None if ``standard_error`` is None."""
    if standard_error is None:
        return None
    est, se = float(estimate), float(standard_error)
    if se > 0:
        return est / se
    if se == 0:
        return 0.0 if est == 0 else float(np.copysign(np.inf, est))
    return float("nan")


def resampling_pvalue(null, statistic, add_one=True):
    """Right-tailed Monte-Carlo p-value ``(1 + #{T* >= T}) / (1 + B)`` (never exactly 0; Phipson
    and Smyth 2010), or the papers' ``#{T* >= T} / B`` if ``add_one=False``.

    A tiny relative tolerance makes ties that differ only by rounding count as ties (SciPy's
    ``monte_carlo_test`` does the same)."""
    null = np.asarray(null, dtype=np.float64)
    tol = 1e-14 * max(1.0, abs(float(statistic)))
    count = int(np.count_nonzero(null >= statistic - tol))
    if add_one:
        return (1.0 + count) / (1.0 + null.size)
    return count / null.size


class StatisticPvalueTuple:
    """Unpacking of a test result as ``statistic, pvalue = result`` (SciPy's convention), shared
    by every result object of :mod:`skcalib.stats`; the class sets ``statistic`` and ``pvalue``."""

    def __iter__(self):
        return iter((self.statistic, self.pvalue))

    def __len__(self):
        return 2

    def __getitem__(self, index):
        return (self.statistic, self.pvalue)[index]


class CalibrationTestResult(StatisticPvalueTuple):
    """Result of a calibration test (null hypothesis: the model is calibrated).

    Built by the tests of :mod:`skcalib.stats`; its parameters are also its attributes.

    Parameters
    ----------
    statistic : float
        The test statistic (its definition depends on ``method``; see the test's docstring).
    pvalue : float
        The p-value: small values are evidence of miscalibration. For the distribution-free
        methods an upper bound on the p-value.
    estimate : float
        The estimate of the calibration error the test is built on (e.g. the unbiased SKCE).
    method : str
        The test that was run, e.g. ``"bootstrap"``.
    n_samples : int
        Number of samples tested.
    n_resamples : int, default=None
        Number of simulated draws of the null distribution (None for analytic nulls).
    null_distribution : ndarray, default=None
        The simulated null distribution of ``statistic`` (None for analytic nulls).
    standard_error : float or callable, default=None
        Standard error of ``estimate`` (the block estimators' empirical one, the U-statistic's
        from its Hoeffding decomposition), or a callable computing it on first access; None if
        the method has none. The attribute ``zscore`` is ``estimate / standard_error``, the
        standardised estimate that ranks models where p-values saturate.
    df : int, default=None
        Degrees of freedom of a chi-squared null (the UCME test).
    interval : callable, default=None
        ``interval(confidence_level, alternative) -> ConfidenceInterval`` for methods whose
        interval is not the normal one (the distribution-free bounds).
    alternative : str, default="greater"
        The alternative of the test: every calibration test is right-tailed (large errors
        reject).

    Notes
    -----
    The object unpacks as ``statistic, pvalue = result``, as SciPy's results do.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.stats import skce_test
    >>> rng = np.random.default_rng(0)
    >>> p = rng.dirichlet([1, 1], size=100)
    >>> y = (rng.random(100) < p[:, 1]).astype(int)
    >>> res = skce_test(y, p, method="block", block_size="sqrt")
    >>> statistic, pvalue = res
    >>> bool(0 < pvalue < 1)
    True

    ``zscore`` is ``estimate / standard_error``, for ranking models (here the block test's
    statistic):

    >>> bool(res.zscore == res.statistic)
    True
    """

    def __init__(self, *, statistic, pvalue, estimate, method, n_samples, n_resamples=None,
                 null_distribution=None, standard_error=None, df=None, interval=None,
                 alternative="greater"):
        self.statistic = float(statistic)
        self.pvalue = float(pvalue)
        self.estimate = float(estimate)
        self.method = method
        self.n_samples = int(n_samples)
        self.n_resamples = None if n_resamples is None else int(n_resamples)
        self.null_distribution = null_distribution
        self._standard_error = standard_error
        self.df = df
        self.alternative = alternative
        self._interval = interval

    @property
    def standard_error(self):
        """Standard error of ``estimate`` (computed on first access where it needs another pass
        over the data), or None if the method has none."""
        se = self._standard_error
        if callable(se):
            se = self._standard_error = float(se())
        return se

    @property
    def zscore(self):
        """The standardised estimate ``estimate / standard_error`` (None if the method has no
        standard error: ``"distribution_free"``, ``"hotelling"`` and the resampling tests of
        :func:`consistency_test` and :func:`klce_test`).

        A measure of the evidence of miscalibration that keeps growing with it, for ranking
        models: Monte-Carlo p-values stop at ``1 / (n_resamples + 1)`` and analytic ones
        underflow to 0 once the data are large, so that every clearly miscalibrated candidate
        ties, while the z-score still orders them (larger: more evidence of miscalibration).
        For ``method="block"`` it equals ``statistic``. It is ``+-inf`` for a zero standard
        error and a nonzero estimate (0 if both are 0), NaN where the standard error is (fewer
        than 3 samples). For the unbiased SKCE the standard error is the Hoeffding one (see
        :meth:`confidence_interval`), which near calibration is conservative: there the
        z-score is a ranking, not a normal deviate -- use ``pvalue`` for the test itself.
        """
        return standardise(self.estimate, self.standard_error)

    def confidence_interval(self, confidence_level=0.95, *, alternative="two-sided"):
        """Confidence interval for the calibration error the test estimates.

        The asymptotic normal interval ``estimate -/+ z * standard_error``, intersected with
        ``[0, inf)`` (the squared error is non-negative). For the unbiased U-statistic it relies
        on the non-degenerate normal limit and so is meant for miscalibrated models; near
        calibration it is conservative-to-unreliable, prefer :func:`skce_ci` with
        ``method="bootstrap"`` or a block estimator there.

        Parameters
        ----------
        confidence_level : float, default=0.95
            In (0, 1).
        alternative : {"two-sided", "greater", "less"}, default="two-sided"
            ``"greater"`` gives the one-sided interval ``(low, inf)`` (a lower confidence bound),
            ``"less"`` the interval ``(0, high)``.

        Returns
        -------
        ConfidenceInterval
            Named tuple ``(low, high)``.

        Raises
        ------
        ValueError
            If the method has no interval (e.g. the distribution-free bounds).
        """
        check_confidence_level(confidence_level, alternative)
        if self._interval is not None:
            return self._interval(confidence_level, alternative)
        se = self.standard_error
        if se is None:
            hint = (" (skcalib.stats.skce_ci gives intervals for the SKCE)"
                    if self.method in ("distribution_free", "hotelling") else "")
            raise ValueError(f"the {self.method!r} test has no confidence interval{hint}.")
        return normal_interval(self.estimate, se, confidence_level, alternative)

    def null_interval(self, confidence_level=0.95):
        """Central interval of the simulated null distribution of ``statistic``: the range in
        which a calibrated model's statistic falls with probability ``confidence_level``.

        The ``(1 - confidence_level) / 2`` and ``(1 + confidence_level) / 2`` quantiles of
        ``null_distribution`` (:func:`numpy.quantile`, linear interpolation). For
        :func:`consistency_test` it says which values of the metric (an ECE, say) a calibrated
        model gives on the tested predictions.

        Parameters
        ----------
        confidence_level : float, default=0.95
            In (0, 1).

        Returns
        -------
        ConfidenceInterval
            Named tuple ``(low, high)``.

        Raises
        ------
        ValueError
            If the test has no simulated null distribution (analytic nulls).

        Examples
        --------
        >>> import numpy as np
        >>> from skcalib import calibration_error
        >>> from skcalib.stats import consistency_test
        >>> rng = np.random.default_rng(0)
        >>> p = rng.uniform(size=200)
        >>> y = (rng.random(200) < p).astype(int)
        >>> res = consistency_test(calibration_error, y, p, n_resamples=200, random_state=0)
        >>> low, high = res.null_interval(0.9)
        >>> bool(low < res.null_distribution.mean() < high)
        True
        """
        level = check_confidence_level(confidence_level)
        if self.null_distribution is None:
            raise ValueError(f"the {self.method!r} test has no simulated null distribution, so "
                             f"no null interval.")
        alpha = 1.0 - level
        low, high = np.quantile(self.null_distribution, [alpha / 2, 1 - alpha / 2])
        return ConfidenceInterval(float(low), float(high))

    def __repr__(self):
        parts = [f"statistic={self.statistic!r}", f"pvalue={self.pvalue!r}",
                 f"estimate={self.estimate!r}", f"method={self.method!r}",
                 f"n_samples={self.n_samples}"]
        if self.n_resamples is not None:
            parts.append(f"n_resamples={self.n_resamples}")
        if self.df is not None:
            parts.append(f"df={self.df}")
        return f"CalibrationTestResult({', '.join(parts)})"
