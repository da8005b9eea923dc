"""Classical calibration tests of clinical prediction: Spiegelhalter's Z test, the
Hosmer--Lemeshow test and logistic recalibration (Cox 1958).

All three are binary. A multiclass problem is tested one-vs-rest (class ``k`` against the rest,
with the probabilities of column ``k``), one test per class, and the per-class p-values are
adjusted for multiple testing (Holm by default, or Bonferroni): see :class:`OneVsRestResult`.

``sample_weight`` are *frequency* weights throughout: an integer weight ``k`` is the same as
``k`` copies of the row. Unlike a metric, a test's p-value depends on the scale of the weights
(they are counts): weights summing to ``n`` keep the effective sample size.

Every function works in a few vectorised passes over the data (a sort for the quantile groups of
Hosmer--Lemeshow, a handful of Newton iterations for logistic calibration).
"""

import warnings

import numpy as np
from scipy import special as _special
from scipy import stats as _sps

from .._validation import (
    check_frequency_weights,
    check_labels_and_probabilities,
    check_n_bins,
    check_option,
    check_scalar_param,
    pos_index,
    user_stacklevel,
)
from ._multiple import adjust as _adjust
from ._result import (
    CalibrationTestResult,
    StatisticPvalueTuple,
    ConfidenceInterval,
    check_confidence_level,
    normal_interval,
    normal_pvalue,
)

__all__ = ["spiegelhalter_test", "hosmer_lemeshow_test", "logistic_calibration",
           "LogisticCalibrationResult", "HosmerLemeshowResult", "OneVsRestResult"]

_CORRECTIONS = ("holm", "bonferroni")
_STRATEGIES = ("quantile", "uniform")
_OE_INTERVALS = ("lognormal", "exact")
_MAX_GROUPS = 10**6


# ------------------------------------------------------------------------------------------------
# Input handling and the one-vs-rest wrapper
# ------------------------------------------------------------------------------------------------

def _binary_problems(y_true, y_proba, labels, pos_label, sample_weight, min_samples=1):
    """``(classes_tested, [(y, p), ...], w, n)``: one binary problem (the positive class) for a
    binary input, one per class (one-vs-rest) for a multiclass input. ``y`` and ``p`` are new
    float64 arrays; ``w`` is None or the validated frequency weights."""
    data = check_labels_and_probabilities(y_true, y_proba, labels=labels, pos_label=pos_label,
                                          sample_weight=sample_weight, min_samples=min_samples)
    P = data.probs
    if data.n_classes == 2:
        columns = [pos_index(data.classes, pos_label)]
    else:
        columns = range(data.n_classes)
    problems = [((data.y == k).astype(np.float64), np.array(P[:, k], dtype=np.float64))
                for k in columns]
    w = check_frequency_weights(data.sample_weight)
    return data.classes[list(columns)], problems, w, data.n_samples


def _sum(a, w):
    """``sum_i w_i a_i`` (plain sum without weights)."""
    return float(a.sum()) if w is None else float(np.dot(w, a))


def _ovr(classes, results, correction, n_samples):
    """The result of a one-vs-rest family: the binary result itself for one class."""
    if len(results) == 1:
        return results[0]
    return OneVsRestResult(classes=classes, per_class=results, correction=correction,
                           n_samples=n_samples)


class OneVsRestResult(StatisticPvalueTuple):
    """Result of a binary calibration test run one-vs-rest on a multiclass problem.

    Class ``k`` is tested as the binary problem "label is ``k``" with the probabilities of
    column ``k``. The global null hypothesis "every class is calibrated" is rejected when some
    adjusted per-class p-value is small; ``pvalue`` is the smallest adjusted p-value, which for
    both corrections equals ``min(1, K * min_k p_k)`` (Bonferroni's global test; it controls the
    family-wise error rate at any dependence between the classes).

    Parameters
    ----------
    classes : ndarray of shape (n_classes,)
        The class labels, in the order of ``per_class``.
    per_class : list
        One binary result per class (:class:`skcalib.stats.CalibrationTestResult`,
        :class:`HosmerLemeshowResult` or :class:`LogisticCalibrationResult`).
    correction : {"holm", "bonferroni"}
        The multiple-testing correction of ``pvalues_adjusted``.
    n_samples : int
        Number of samples tested.

    Attributes
    ----------
    pvalues : ndarray of shape (n_classes,)
        The unadjusted per-class p-values.
    pvalues_adjusted : ndarray of shape (n_classes,)
        Holm's step-down adjusted p-values (``max_{j <= i} min(1, (K - j + 1) p_(j))`` in the
        sorted order), or Bonferroni's ``min(1, K p_k)``. Rejecting the classes whose adjusted
        p-value is at most ``alpha`` controls the family-wise error rate at ``alpha``.
    pvalue : float
        ``min(pvalues_adjusted)``, the p-value of the global null.
    statistic : float
        The statistic of the class with the smallest p-value (a convenience: the statistics of
        the classes are not pooled).
    method : str
        The binary test's method, e.g. ``"spiegelhalter"``.

    Notes
    -----
    The object unpacks as ``statistic, pvalue = result``, as SciPy's results do.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.stats import spiegelhalter_test
    >>> rng = np.random.default_rng(0)
    >>> P = rng.dirichlet([1, 1, 1], size=500)
    >>> y = (rng.random((500, 1)) > P.cumsum(axis=1)).sum(axis=1)  # calibrated labels
    >>> res = spiegelhalter_test(y, P)
    >>> res.per_class[0].method, res.pvalues_adjusted.shape
    ('spiegelhalter', (3,))
    """

    def __init__(self, *, classes, per_class, correction, n_samples):
        self.classes = np.asarray(classes)
        self.per_class = list(per_class)
        self.correction = correction
        self.n_samples = int(n_samples)
        self.pvalues = np.array([r.pvalue for r in self.per_class], dtype=np.float64)
        self.pvalues_adjusted = _adjust(self.pvalues, correction)
        best = int(np.argmin(self.pvalues))
        self.pvalue = float(self.pvalues_adjusted[best])
        self.statistic = float(self.per_class[best].statistic)
        self.method = self.per_class[0].method

    def __repr__(self):
        return (f"OneVsRestResult(statistic={self.statistic!r}, pvalue={self.pvalue!r}, "
                f"method={self.method!r}, correction={self.correction!r}, "
                f"classes={self.classes.tolist()!r}, n_samples={self.n_samples})")


# ------------------------------------------------------------------------------------------------
# Spiegelhalter's Z test
# ------------------------------------------------------------------------------------------------

def _spiegelhalter_binary(y, p, w, alternative, n):
    a = 1.0 - 2.0 * p
    num = _sum((y - p) * a, w)
    var = _sum(a * a * p * (1.0 - p), w)
    total = float(n) if w is None else float(w.sum())
    if var > 0.0:
        z = num / np.sqrt(var)
    elif num == 0.0:  # p in {0, 1/2, 1} everywhere and nothing impossible happened
        z = 0.0
    else:  # an event of probability 0 happened
        z = np.copysign(np.inf, num)
    estimate = num / total
    se = np.sqrt(var) / total

    def interval(level, alt):
        return normal_interval(estimate, se, level, alt, lower_bound=None)

    return CalibrationTestResult(statistic=z, pvalue=normal_pvalue(z, alternative),
                                 estimate=estimate,
                                 method="spiegelhalter", n_samples=n, standard_error=se,
                                 interval=interval, alternative=alternative)


def spiegelhalter_test(y_true, y_proba, *, alternative="two-sided", correction="holm",
                       labels=None, pos_label=None, sample_weight=None):
    """Spiegelhalter's Z test of calibration (Spiegelhalter 1986).

    The Brier score ``B = sum_i (y_i - p_i)^2`` of a calibrated model has mean
    ``sum_i p_i (1 - p_i)`` and variance ``sum_i (1 - 2 p_i)^2 p_i (1 - p_i)``; the test
    standardises it::

        Z = sum_i (y_i - p_i) (1 - 2 p_i) / sqrt(sum_i (1 - 2 p_i)^2 p_i (1 - p_i))

    (``(y - p)^2 - p (1 - p) = (y - p)(1 - 2 p)`` for ``y`` in ``{0, 1}``) and compares it with
    the standard normal distribution.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_proba : array-like of shape (n_samples,) or (n_samples, n_classes)
        Predicted probabilities: P(``pos_label``) or two columns for a binary problem; a
        multiclass problem is tested one-vs-rest (see :class:`OneVsRestResult`).
    alternative : {"two-sided", "greater", "less"}, default="two-sided"
        ``"two-sided"`` (the classical test) rejects for large ``|Z|``; ``"greater"`` only for a
        Brier score larger than expected (``Z > 0``), ``"less"`` only for a smaller one.
    correction : {"holm", "bonferroni"}, default="holm"
        Multiple-testing correction over the classes of a multiclass problem (ignored for
        binary problems).
    labels : array-like, default=None
        All class labels (default: those in ``y_true``).
    pos_label : label, default=None
        Positive class of a binary problem (default: the greater label).
    sample_weight : array-like of shape (n_samples,), default=None
        Frequency weights (a weight ``k`` counts as ``k`` copies of the row): the numerator sums
        ``w_i (y_i - p_i)(1 - 2 p_i)``, the variance ``w_i (1 - 2 p_i)^2 p_i (1 - p_i)``.

    Returns
    -------
    CalibrationTestResult or OneVsRestResult
        For a binary problem: ``statistic`` is ``Z``, ``pvalue`` its normal p-value,
        ``estimate`` the excess Brier score per sample
        ``sum_i w_i (y_i - p_i)(1 - 2 p_i) / sum_i w_i`` (observed minus expected Brier score;
        0 in expectation under calibration), ``standard_error`` its standard error under the
        null, and ``confidence_interval()`` the normal interval for it (not clipped at 0: the
        excess can be negative). For a multiclass problem a :class:`OneVsRestResult`.

    See Also
    --------
    hosmer_lemeshow_test : The grouped chi-squared test.
    logistic_calibration : Calibration slope and intercept with their likelihood-ratio test.

    Notes
    -----
    The test looks at one direction of miscalibration only: that of the Brier score. A model can
    be miscalibrated and have ``Z`` near 0 (errors that raise and lower the Brier score cancel);
    it has no power at all where ``p = 1/2``, which carries weight ``1 - 2 p = 0``. If every
    prediction is 0, 1/2 or 1 the variance is zero: ``Z`` is then 0 (``pvalue`` 1) if no
    prediction of 0 or 1 was contradicted, and ``+/-inf`` (``pvalue`` 0) if one was.

    Some packages report the one-sided p-value ``1 - Phi(Z)`` by default (1 for a hugely
    significant negative ``Z``); the classical test, and the default here, is two-sided. Pass
    ``alternative="greater"`` for the one-sided version.

    References
    ----------
    D. J. Spiegelhalter, "Probabilistic prediction in patient management and clinical trials",
    Statistics in Medicine 5 (1986) 421-433.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.stats import spiegelhalter_test
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(0.05, 0.95, size=2000)
    >>> y = (rng.random(2000) < p).astype(int)
    >>> bool(spiegelhalter_test(y, p).pvalue > 0.01)
    True
    >>> y_over = (rng.random(2000) < 0.5 + (p - 0.5) / 3).astype(int)  # overconfident model
    >>> bool(spiegelhalter_test(y_over, p).pvalue < 1e-6)
    True
    """
    check_option(alternative, "alternative", ("two-sided", "greater", "less"))
    check_option(correction, "correction", _CORRECTIONS)
    classes, problems, w, n = _binary_problems(y_true, y_proba, labels, pos_label, sample_weight)
    results = [_spiegelhalter_binary(y, p, w, alternative, n) for y, p in problems]
    return _ovr(classes, results, correction, n)


# ------------------------------------------------------------------------------------------------
# Hosmer--Lemeshow
# ------------------------------------------------------------------------------------------------

class HosmerLemeshowResult(CalibrationTestResult):
    """Result of the Hosmer--Lemeshow test: a :class:`CalibrationTestResult` with the table of
    groups.

    Parameters
    ----------
    statistic : float
        The Hosmer--Lemeshow statistic ``sum_g (O_g - E_g)^2 / (E_g (1 - E_g / n_g))``.
    pvalue : float
        ``P(chi2_df > statistic)``.
    estimate : float
        The binned squared calibration error of the groups,
        ``sum_g (n_g / n) (O_g / n_g - E_g / n_g)^2``.
    n_samples : int
        Number of samples tested.
    df : int
        Degrees of freedom of the chi-squared reference distribution.
    observed : ndarray of shape (n_groups,)
        Observed events ``O_g`` per non-empty group (weighted).
    expected : ndarray of shape (n_groups,)
        Expected events ``E_g = sum_{i in g} p_i`` per group (weighted).
    counts : ndarray of shape (n_groups,)
        Group sizes ``n_g`` (sums of weights).
    bounds : ndarray of shape (n_groups, 2)
        Per group, the lowest and highest prediction in it (``strategy="quantile"``) or the
        edges of its bin (``"uniform"``).

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.stats import hosmer_lemeshow_test
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(0.1, 0.9, size=1000)
    >>> y = (rng.random(1000) < p).astype(int)
    >>> res = hosmer_lemeshow_test(y, p)
    >>> res.df, float(res.counts.sum())
    (8, 1000.0)
    """

    def __init__(self, *, statistic, pvalue, estimate, n_samples, df, observed, expected, counts,
                 bounds):
        super().__init__(statistic=statistic, pvalue=pvalue, estimate=estimate,
                         method="hosmer_lemeshow", n_samples=n_samples, df=df)
        self.observed = observed
        self.expected = expected
        self.counts = counts
        self.bounds = bounds


def _hl_groups(p, w, n_groups, strategy):
    """Group index of each sample, the inner edges, and ``(ps, gs)``: the predictions sorted and
    their groups (non-decreasing).

    Groups are right-closed intervals ``(e_k, e_{k+1}]`` (the first one closed). For
    ``"quantile"`` the inner edges are the inverted-CDF weighted quantiles at levels ``k/g``,
    ``q_k = min{x : F(x) >= k/g}`` (R's ``quantile(type=1)``; a weight ``k`` acts as ``k``
    copies of the row); for ``"uniform"`` they are ``k/g``.
    """
    order = np.argsort(p, kind="stable")
    ps = p[order]
    if strategy == "uniform":
        inner = np.arange(1, n_groups) / n_groups
    else:
        cw = np.cumsum(np.ones_like(ps) if w is None else w[order])
        levels = np.arange(1, n_groups) / n_groups * cw[-1]
        # first sorted index whose cumulative weight reaches the level; the relative tolerance
        # keeps exact multiples of total/g from being lost to rounding
        idx = np.minimum(np.searchsorted(cw, levels * (1.0 - 1e-12), side="left"), ps.size - 1)
        inner = ps[idx]
    gs = np.searchsorted(inner, ps, side="left")
    group = np.empty_like(gs)
    group[order] = gs
    return group, inner, ps, gs


def _hl_binary(y, p, w, n_groups, strategy, df, n):
    wts = np.ones_like(p) if w is None else w
    group, inner, ps, gs = _hl_groups(p, w, n_groups, strategy)
    counts = np.bincount(group, weights=wts, minlength=n_groups)
    observed = np.bincount(group, weights=wts * y, minlength=n_groups)
    expected = np.bincount(group, weights=wts * p, minlength=n_groups)
    keep = counts > 0
    if strategy == "uniform":
        all_edges = np.concatenate(([0.0], inner, [1.0]))
        bounds = np.column_stack((all_edges[:-1], all_edges[1:]))[keep]
    else:  # lowest and highest prediction of each group (gs is sorted)
        ids = np.flatnonzero(keep)
        first = np.searchsorted(gs, ids, side="left")
        last = np.searchsorted(gs, ids, side="right") - 1
        bounds = np.column_stack((ps[first], ps[last]))
    counts, observed, expected = counts[keep], observed[keep], expected[keep]
    G = int(counts.size)
    if df is None:
        df_used = G - 2
        if df_used < 1:
            raise ValueError(
                f"the Hosmer-Lemeshow test needs at least 3 non-empty groups for df = groups - 2; "
                f"got {G} (too few distinct predictions for n_groups={n_groups}). Pass df= "
                "explicitly or use more distinct predictions."
            )
    else:
        df_used = int(df)
    var = expected * (1.0 - expected / counts)
    diff = observed - expected
    terms = np.zeros(G)
    degenerate = var <= 0.0
    np.divide(diff * diff, var, out=terms, where=~degenerate)
    terms[degenerate & (np.abs(diff) > 1e-12 * counts)] = np.inf
    statistic = float(terms.sum())
    small = np.minimum(expected, counts - expected)
    if np.any(small < 1.0):
        k = int(np.argmin(small))
        warnings.warn(
            f"Hosmer-Lemeshow group {k} (predictions in [{bounds[k, 0]:.3g}, {bounds[k, 1]:.3g}]) "
            f"expects {small[k]:.3g} events or non-events (fewer than 1): the chi-squared "
            "approximation is unreliable. Use fewer groups (n_groups=) or more data.",
            UserWarning, stacklevel=user_stacklevel(),
        )
    total = float(counts.sum())
    estimate = float(np.sum(diff * diff / counts) / total)
    pvalue = float(_sps.chi2.sf(statistic, df_used))
    return HosmerLemeshowResult(statistic=statistic, pvalue=pvalue, estimate=estimate,
                                n_samples=n, df=df_used, observed=observed, expected=expected,
                                counts=counts, bounds=bounds)


def hosmer_lemeshow_test(y_true, y_proba, *, n_groups=10, strategy="quantile", df=None,
                         correction="holm", labels=None, pos_label=None, sample_weight=None):
    """The Hosmer--Lemeshow goodness-of-fit test of calibration (Hosmer and Lemeshow 1980).

    The samples are put in ``n_groups`` groups by their predicted probability ("deciles of
    risk" by default); within group ``g`` of size ``n_g`` the observed events ``O_g`` are
    compared with the expected ones ``E_g = sum_{i in g} p_i``::

        HL = sum_g (O_g - E_g)^2 / (E_g (1 - E_g / n_g))

    (the Pearson chi-squared of the ``g x 2`` table of events and non-events), and ``HL`` is
    compared with a chi-squared distribution with ``df`` degrees of freedom.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_proba : array-like of shape (n_samples,) or (n_samples, n_classes)
        Predicted probabilities: P(``pos_label``) or two columns for a binary problem; a
        multiclass problem is tested one-vs-rest (see :class:`OneVsRestResult`).
    n_groups : int, default=10
        Number of groups ``g`` (at least 3 for the default ``df``).
    strategy : {"quantile", "uniform"}, default="quantile"
        * ``"quantile"``: groups of (about) equal size between the weighted quantiles of the
          predictions at levels ``k / g`` (inverted CDF, i.e. R's ``quantile(type=1)``); the
          groups are right-closed intervals ``(q_k, q_{k+1}]``, so tied predictions always share
          a group and the groups never depend on the order of the rows. Quantiles that
          coincide (many tied predictions) leave groups empty.
        * ``"uniform"``: fixed bins ``[0, 1/g], (1/g, 2/g], ..., ((g-1)/g, 1]``.

        Empty groups are dropped: the statistic sums over the non-empty ones, and the default
        ``df`` counts only them.
    df : int, default=None
        Degrees of freedom. ``None``: ``G - 2`` for the ``G`` non-empty groups, Hosmer and
        Lemeshow's reference distribution when the model was fitted on the same data
        (development data). For a model tested on *external validation* data, whose parameters
        were not estimated on them, use ``df=n_groups`` (``G``): the statistic is then compared
        with ``chi2_G``.
    correction : {"holm", "bonferroni"}, default="holm"
        Multiple-testing correction over the classes of a multiclass problem (ignored for
        binary problems).
    labels : array-like, default=None
        All class labels (default: those in ``y_true``).
    pos_label : label, default=None
        Positive class of a binary problem (default: the greater label).
    sample_weight : array-like of shape (n_samples,), default=None
        Frequency weights (a weight ``k`` counts as ``k`` copies of the row): they enter the
        quantiles, ``n_g``, ``O_g`` and ``E_g``.

    Returns
    -------
    HosmerLemeshowResult or OneVsRestResult
        ``statistic`` (``HL``), ``pvalue``, ``df``, the group table (``observed``, ``expected``,
        ``counts``, ``bounds``) and as ``estimate`` the binned squared calibration error of the
        groups; a :class:`OneVsRestResult` of those for a multiclass problem.

    Warns
    -----
    UserWarning
        If a group expects fewer than one event or one non-event (``min(E_g, n_g - E_g) < 1``):
        the chi-squared approximation is then unreliable.

    See Also
    --------
    spiegelhalter_test : A test without groups.
    logistic_calibration : Calibration slope and intercept.
    skcalib.reliability_curve : The observed frequencies per bin, with intervals.

    Notes
    -----
    **The result depends on the groups.** The same predictions and outcomes can give a small
    p-value with 10 groups and a large one with 8 or 12, and deciles of risk and fixed bins give
    different statistics (Hosmer, Hosmer, le Cessie and Lemeshow 1997; Bertolini et al. 2000).
    Choose ``n_groups`` and ``strategy`` before looking at the data, report them with the
    p-value, and do not search over them for a convenient p-value. The usual rule of thumb
    asks for at least about 5 expected events and non-events per group.

    The choice of ``df`` changes the p-value substantially: ``G - 2`` (the default) is for the
    data the model was fitted on, ``G`` for external validation. Measured rejection rates at
    ``alpha = 0.05`` over 300 data sets of ``n = 400`` (deciles, calibrated predictions): a
    logistic model fitted on the same data, ``df = G - 2``: 5.7%; fixed (external) calibrated
    predictions, ``df = G - 2``: 11.7% (anti-conservative), ``df = G``: 4.3%.

    A group whose predictions are all 0 or all 1 has ``E_g (1 - E_g / n_g) = 0``: it adds 0 if
    its outcomes agree with them and makes the statistic infinite (``pvalue`` 0) otherwise.
    With large samples the test rejects for miscalibration of no practical importance; with
    small ones it has little power. Report it with a calibration curve.

    References
    ----------
    D. W. Hosmer and S. Lemeshow, "Goodness of fit tests for the multiple logistic regression
    model", Communications in Statistics -- Theory and Methods 9 (1980) 1043-1069.

    D. W. Hosmer, T. Hosmer, S. le Cessie and S. Lemeshow, "A comparison of goodness-of-fit
    tests for the logistic regression model", Statistics in Medicine 16 (1997) 965-980.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.stats import hosmer_lemeshow_test
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(0.05, 0.95, size=2000)
    >>> y = (rng.random(2000) < p).astype(int)
    >>> res = hosmer_lemeshow_test(y, p)
    >>> res.df, bool(res.pvalue > 0.01)
    (8, True)
    >>> hosmer_lemeshow_test(y, p, df=10).df  # external validation
    10
    """
    n_groups = check_n_bins(n_groups, "n_groups", max_val=_MAX_GROUPS)
    if n_groups < 2:
        raise ValueError(f"n_groups must be >= 2; got {n_groups!r}.")
    check_option(strategy, "strategy", _STRATEGIES)
    check_scalar_param(df, "df", min_val=1, allow_none=True)
    check_option(correction, "correction", _CORRECTIONS)
    classes, problems, w, n = _binary_problems(y_true, y_proba, labels, pos_label, sample_weight)
    results = [_hl_binary(y, p, w, int(n_groups), strategy, df, n) for y, p in problems]
    return _ovr(classes, results, correction, n)


# ------------------------------------------------------------------------------------------------
# Logistic calibration (Cox 1958)
# ------------------------------------------------------------------------------------------------

def _mean_and_softplus(eta):
    """``(expit(eta), log(1 + exp(eta)))`` from one exponential, without overflow."""
    e = np.exp(-np.abs(eta))
    r = 1.0 / (1.0 + e)
    mu = r.copy()
    np.multiply(e, r, out=mu, where=eta < 0)
    softplus = np.log1p(e)
    softplus += np.maximum(eta, 0.0)
    return mu, softplus


def _loglik(eta, softplus, y, w):
    """Bernoulli log-likelihood ``sum_i w_i (y_i eta_i - log(1 + exp(eta_i)))``."""
    return _sum(y * eta - softplus, w)


def _information(mu, x, wts):
    v = mu * (1.0 - mu)
    if wts is not None:
        v *= wts
    vx = v * x
    s1 = vx.sum()
    return np.array([[v.sum(), s1], [s1, np.dot(vx, x)]])


def _fit_joint(x, y, w, max_iter=100, tol=1e-10):
    """Newton--Raphson for ``logit P(y=1) = a + b x`` (weighted), from ``(0, 1)`` (the
    calibrated model), with step halving.

    Returns ``(a, b, loglik, loglik_at_(0, 1), information, n_iter)``: one exponential per
    iteration gives the means for the next step and the log-likelihood for the step halving."""
    theta = np.array([0.0, 1.0])
    eta = x
    mu, sp = _mean_and_softplus(eta)
    ll0 = ll = _loglik(eta, sp, y, w)
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        r = y - mu
        if w is not None:
            r *= w
        grad = np.array([r.sum(), np.dot(r, x)])
        H = _information(mu, x, w)
        try:
            step = np.linalg.solve(H, grad)
        except np.linalg.LinAlgError:
            raise ValueError("logistic_calibration: the information matrix is singular (too "
                             "few distinct predictions with positive weight).") from None
        if not np.all(np.isfinite(step)):
            raise ValueError("logistic_calibration: the information matrix is singular (too "
                             "few distinct predictions with positive weight).")
        t = 1.0
        while True:
            new = theta + t * step
            eta_new = new[0] + new[1] * x
            mu_new, sp_new = _mean_and_softplus(eta_new)
            ll_new = _loglik(eta_new, sp_new, y, w)
            if ll_new >= ll - 1e-12 * abs(ll) or t < 1e-10:
                break
            t /= 2.0
        converged = np.max(np.abs(t * step) / (1.0 + np.abs(theta))) < tol
        theta, eta, mu, ll = new, eta_new, mu_new, ll_new
        if converged:
            break
    else:
        warnings.warn(f"logistic_calibration: Newton-Raphson did not converge in {max_iter} "
                      "iterations; the estimates may be inaccurate.", UserWarning,
                      stacklevel=user_stacklevel())
    return float(theta[0]), float(theta[1]), ll, ll0, _information(mu, x, w), n_iter


def _fit_offset(x, y, w, max_iter=100, tol=1e-10):
    """Intercept ``a`` of ``logit P(y=1) = a + x`` (``x`` an offset) by Newton on its concave
    1-D log-likelihood (steps capped at 5 on the logit scale); returns ``(a, information)``."""
    events = _sum(y, w)
    a = 0.0
    for _ in range(max_iter):
        mu = _special.expit(a + x)
        v = mu * (1.0 - mu)
        info = _sum(v, w)
        step = float(np.clip((events - _sum(mu, w)) / info, -5.0, 5.0))
        a += step
        if abs(step) < tol * (1.0 + abs(a)):
            break
    mu = _special.expit(a + x)
    return a, _sum(mu * (1.0 - mu), w)


def _wald(est, se, level):
    z = _sps.norm.ppf(0.5 + level / 2.0)
    return ConfidenceInterval(float(est - z * se), float(est + z * se))


def _oe_interval(O, E, level, method):
    """Interval for ``O / E``: log-normal (``SE(log O/E) = 1/sqrt(O)``, Poisson ``O``) or the
    exact (Garwood) Poisson interval for ``O``, divided by ``E``."""
    alpha = 1.0 - level
    if method == "exact":
        low = 0.0 if O <= 0 else _sps.chi2.ppf(alpha / 2.0, 2.0 * O) / 2.0
        high = _sps.chi2.ppf(1.0 - alpha / 2.0, 2.0 * O + 2.0) / 2.0
        return ConfidenceInterval(float(low / E), float(high / E))
    if O <= 0:
        return ConfidenceInterval(np.nan, np.nan)
    z = _sps.norm.ppf(0.5 + level / 2.0)
    f = np.exp(z / np.sqrt(O))
    return ConfidenceInterval(float(O / E / f), float(O / E * f))


class LogisticCalibrationResult(StatisticPvalueTuple):
    """Result of :func:`logistic_calibration`: calibration slope and intercepts with their
    intervals, the likelihood-ratio test and the observed/expected ratio.

    Parameters
    ----------
    slope : float
        Calibration slope ``b`` of the joint model ``logit P(y=1) = a + b logit(p)``.
    intercept : float
        Intercept ``a`` of the joint model (with the slope estimated; not the
        calibration-in-the-large).
    calibration_in_the_large : float
        Calibration intercept with the slope fixed at 1: ``a0`` in
        ``logit P(y=1) = a0 + logit(p)`` (``logit(p)`` as an offset).
    slope_se, intercept_se, calibration_in_the_large_se : float
        Standard errors from the observed information at the maximum-likelihood estimates.
    covariance : ndarray of shape (2, 2)
        Covariance matrix of ``(intercept, slope)`` (the inverse observed information).
    statistic : float
        Likelihood-ratio statistic ``2 (l(a, b) - l(0, 1))`` of the null ``(a, b) = (0, 1)``.
    pvalue : float
        ``P(chi2_2 > statistic)``.
    observed, expected : float
        Observed events ``O = sum_i w_i y_i`` and expected events ``E = sum_i w_i p_i``.
    confidence_level : float
        Level of the intervals ``slope_ci``, ``intercept_ci``,
        ``calibration_in_the_large_ci`` and ``oe_ratio_ci``.
    oe_interval : {"lognormal", "exact"}
        Method of ``oe_ratio_ci`` (see :func:`logistic_calibration`).
    n_samples : int
        Number of samples.
    n_iter : int, default=None
        Newton iterations of the joint fit.

    Attributes
    ----------
    oe_ratio : float
        ``O / E``; above 1 the model under-predicts the events on average.
    slope_ci, intercept_ci, calibration_in_the_large_ci, oe_ratio_ci : ConfidenceInterval
        Wald intervals ``estimate -/+ z SE`` at ``confidence_level`` for the slope and the
        intercepts; the ``oe_interval`` interval for ``O / E``.
    df : int
        2, the degrees of freedom of the likelihood-ratio test.
    method : str
        ``"logistic_calibration"``.

    Notes
    -----
    The object unpacks as ``statistic, pvalue = result``, as SciPy's results do.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.stats import logistic_calibration
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(0.05, 0.95, size=3000)
    >>> y = (rng.random(3000) < p).astype(int)
    >>> res = logistic_calibration(y, p)
    >>> bool(res.slope_ci.low < 1 < res.slope_ci.high)
    True
    >>> res.confidence_interval("slope", confidence_level=0.99).low < res.slope_ci.low
    True
    """

    def __init__(self, *, slope, intercept, calibration_in_the_large, slope_se, intercept_se,
                 calibration_in_the_large_se, covariance, statistic, pvalue, observed, expected,
                 confidence_level, oe_interval, n_samples, n_iter=None):
        self.slope = float(slope)
        self.intercept = float(intercept)
        self.calibration_in_the_large = float(calibration_in_the_large)
        self.slope_se = float(slope_se)
        self.intercept_se = float(intercept_se)
        self.calibration_in_the_large_se = float(calibration_in_the_large_se)
        self.covariance = covariance
        self.statistic = float(statistic)
        self.pvalue = float(pvalue)
        self.observed = float(observed)
        self.expected = float(expected)
        self.oe_ratio = self.observed / self.expected
        self.confidence_level = float(confidence_level)
        self.oe_interval = oe_interval
        self.n_samples = int(n_samples)
        self.n_iter = n_iter
        self.df = 2
        self.method = "logistic_calibration"
        self.slope_ci = self.confidence_interval("slope")
        self.intercept_ci = self.confidence_interval("intercept")
        self.calibration_in_the_large_ci = self.confidence_interval("calibration_in_the_large")
        self.oe_ratio_ci = self.confidence_interval("oe_ratio")

    def confidence_interval(self, parameter="slope", confidence_level=None):
        """Confidence interval for one of the parameters.

        Parameters
        ----------
        parameter : {"slope", "intercept", "calibration_in_the_large", "oe_ratio"}, \
default="slope"
            The parameter.
        confidence_level : float, default=None
            In (0, 1); default: the ``confidence_level`` the result was computed with.

        Returns
        -------
        ConfidenceInterval
            Named tuple ``(low, high)``: the Wald interval for the slope and the intercepts,
            the ``oe_interval`` interval for ``O / E``.
        """
        check_option(parameter, "parameter",
                     ("slope", "intercept", "calibration_in_the_large", "oe_ratio"))
        level = (self.confidence_level if confidence_level is None
                 else check_confidence_level(confidence_level))
        if parameter == "oe_ratio":
            return _oe_interval(self.observed, self.expected, level, self.oe_interval)
        return _wald(getattr(self, parameter), getattr(self, parameter + "_se"), level)

    def __repr__(self):
        return (f"LogisticCalibrationResult(slope={self.slope!r}, intercept={self.intercept!r}, "
                f"calibration_in_the_large={self.calibration_in_the_large!r}, "
                f"oe_ratio={self.oe_ratio!r}, statistic={self.statistic!r}, "
                f"pvalue={self.pvalue!r}, n_samples={self.n_samples})")


def _check_identifiable(x, y, w):
    """Clear errors for data on which the calibration model has no finite estimate."""
    events = y > 0.5
    others = ~events
    if w is not None:
        used = w > 0
        events &= used
        others &= used
    if not events.any() or not others.any():
        raise ValueError(
            "logistic_calibration needs both classes in y_true (with positive weight); got only "
            f"{'non-events' if not events.any() else 'events'}: the intercepts would be "
            "infinite."
        )
    lo1 = np.min(x, where=events, initial=np.inf)
    hi1 = np.max(x, where=events, initial=-np.inf)
    lo0 = np.min(x, where=others, initial=np.inf)
    hi0 = np.max(x, where=others, initial=-np.inf)
    if min(lo0, lo1) == max(hi0, hi1):
        raise ValueError("logistic_calibration: all predictions are equal, so the calibration "
                         "slope is not identifiable.")
    if hi0 <= lo1 or hi1 <= lo0:
        raise ValueError(
            "logistic_calibration: the outcomes are (quasi-)completely separated by the "
            "predictions (every event has a prediction at least as high as every non-event, or "
            "the reverse), so the maximum-likelihood calibration slope is infinite. Report the "
            "separation instead (e.g. with a reliability curve or the AUC)."
        )


def _logistic_binary(y, p, w, level, oe_interval, eps, n):
    pc = np.clip(p, eps, 1.0 - eps)
    x = _special.logit(pc)
    _check_identifiable(x, y, w)
    a, b, ll, ll0, H, n_iter = _fit_joint(x, y, w)
    cov = np.linalg.inv(H)
    stat = max(0.0, 2.0 * (ll - ll0))
    a0, info0 = _fit_offset(x, y, w)
    return LogisticCalibrationResult(
        slope=b, intercept=a, calibration_in_the_large=a0, slope_se=np.sqrt(cov[1, 1]),
        intercept_se=np.sqrt(cov[0, 0]), calibration_in_the_large_se=1.0 / np.sqrt(info0),
        covariance=cov, statistic=stat, pvalue=_sps.chi2.sf(stat, 2), observed=_sum(y, w),
        expected=_sum(p, w), confidence_level=level, oe_interval=oe_interval, n_samples=n,
        n_iter=n_iter)


def logistic_calibration(y_true, y_proba, *, confidence_level=0.95, oe_interval="lognormal",
                         eps=1e-12, correction="holm", labels=None, pos_label=None,
                         sample_weight=None):
    """Logistic calibration (Cox 1958): calibration slope and intercepts, their confidence
    intervals, the likelihood-ratio test of perfect calibration and the observed/expected ratio.

    The outcomes are regressed on the log-odds of the predictions::

        logit P(y = 1) = a + b logit(p)

    by maximum likelihood (Newton--Raphson). A calibrated model has ``(a, b) = (0, 1)``; a slope
    below 1 means predictions that are too extreme (overfitting), above 1 too moderate. The
    calibration intercept with the slope fixed at 1, ``a0`` in ``logit P(y=1) = a0 + logit(p)``
    (``logit(p)`` as an offset), measures calibration-in-the-large: ``a0 > 0`` means the model
    under-predicts the events on average.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_proba : array-like of shape (n_samples,) or (n_samples, n_classes)
        Predicted probabilities: P(``pos_label``) or two columns for a binary problem; a
        multiclass problem is analysed one-vs-rest (see :class:`OneVsRestResult`).
    confidence_level : float, default=0.95
        Level of the intervals stored in the result (others via
        :meth:`LogisticCalibrationResult.confidence_interval`).
    oe_interval : {"lognormal", "exact"}, default="lognormal"
        Interval for the observed/expected ratio ``O / E``, with ``E`` treated as fixed and
        ``O`` as Poisson: ``"lognormal"`` is ``(O / E) exp(-/+ z / sqrt(O))`` (the delta method
        on ``log O``, ``SE = 1/sqrt(O)``; the usual choice in clinical prediction), ``"exact"``
        the Garwood (exact Poisson) interval for ``O`` divided by ``E``. Both are slightly
        conservative for binary outcomes, whose variance ``sum p (1 - p)`` is below the Poisson
        ``sum p``.
    eps : float, default=1e-12
        Predictions are clipped to ``[eps, 1 - eps]`` before taking logits (``logit`` of 0 and
        1 is infinite); with the default, ``|logit(p)| <= 27.6``.
    correction : {"holm", "bonferroni"}, default="holm"
        Multiple-testing correction of the likelihood-ratio p-values over the classes of a
        multiclass problem (ignored for binary problems).
    labels : array-like, default=None
        All class labels (default: those in ``y_true``).
    pos_label : label, default=None
        Positive class of a binary problem (default: the greater label).
    sample_weight : array-like of shape (n_samples,), default=None
        Frequency weights of the likelihood (a weight ``k`` counts as ``k`` copies of the row).

    Returns
    -------
    LogisticCalibrationResult or OneVsRestResult
        ``slope``, ``intercept`` (joint model), ``calibration_in_the_large`` (slope fixed at
        1), their standard errors and intervals (``slope_ci``, ...), ``statistic`` and
        ``pvalue`` of the likelihood-ratio test of ``(a, b) = (0, 1)`` (chi-squared, 2 degrees of
        freedom), ``oe_ratio`` with ``oe_ratio_ci``; a :class:`OneVsRestResult` of those for a
        multiclass problem.

    Raises
    ------
    ValueError
        If the model has no finite maximum-likelihood estimate: only one class in ``y_true``,
        all predictions equal, or outcomes completely or quasi-completely separated by the
        predictions (the slope would be infinite).

    See Also
    --------
    spiegelhalter_test : Spiegelhalter's Z test.
    hosmer_lemeshow_test : The grouped chi-squared test.
    skcalib.recalibration.PlattScaling : The same model as a recalibration map.

    Notes
    -----
    Two different "calibration intercepts" are in use: the intercept ``a`` of the joint model
    (which depends on the slope) and the intercept ``a0`` with the slope fixed at 1
    (calibration-in-the-large, the usual meaning of "calibration intercept" in clinical
    prediction; Van Calster et al. 2016). Both are returned, named ``intercept`` and
    ``calibration_in_the_large``.

    The standard errors are the square roots of the diagonal of the inverse observed
    information ``(X^T W V X)^{-1}``, ``V = diag(mu (1 - mu))``, at the estimate (for the
    canonical logistic link observed and expected information coincide); the intervals are
    Wald intervals. The likelihood-ratio statistic is ``2 (l(a, b) - l(0, 1))`` with
    ``l(0, 1)`` the log-likelihood of the predictions themselves.

    References
    ----------
    D. R. Cox, "Two further applications of a model for binary regression", Biometrika 45 (1958)
    562-565.

    B. Van Calster, D. Nieboer, Y. Vergouwe, B. De Cock, M. J. Pencina and E. W. Steyerberg, "A
    calibration hierarchy for risk models was defined: from utopia to empirical data", Journal of
    Clinical Epidemiology 74 (2016) 167-176.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.stats import logistic_calibration
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=5000)
    >>> y = (rng.random(5000) < 1 / (1 + np.exp(-z))).astype(int)
    >>> p_over = 1 / (1 + np.exp(-2 * z))  # overconfident: true slope 1/2
    >>> res = logistic_calibration(y, p_over)
    >>> round(res.slope, 1), bool(res.pvalue < 1e-6)
    (0.5, True)
    """
    level = check_confidence_level(confidence_level)
    check_option(oe_interval, "oe_interval", _OE_INTERVALS)
    check_scalar_param(eps, "eps", kind="real", min_val=0.0, max_val=0.5, include_min=False)
    if not eps < 0.5:
        raise ValueError(f"eps must be < 0.5; got {eps!r}.")
    check_option(correction, "correction", _CORRECTIONS)
    classes, problems, w, n = _binary_problems(y_true, y_proba, labels, pos_label, sample_weight)
    results = [_logistic_binary(y, p, w, level, oe_interval, float(eps), n) for y, p in problems]
    return _ovr(classes, results, correction, n)
