"""Proper scores of class probabilities and their decompositions.

* :func:`brier_score` and :func:`log_score`: the (multiclass) Brier score and the logarithmic
  score, as losses (smaller is better), with scikit-learn's conventions (they agree with
  :func:`sklearn.metrics.brier_score_loss` and :func:`sklearn.metrics.log_loss`).
* :func:`murphy_decomposition`: Murphy's (1973) binned decomposition into reliability, resolution
  and uncertainty, completed by the within-bin term (Stephenson, Coelho and Jolliffe 2008) so
  that the identity ``score = rel - res + unc + within_bin`` holds exactly.
* :func:`corp_decomposition`: the CORP decomposition (Dimitriadis, Gneiting and Jordan 2021) into
  miscalibration, discrimination and uncertainty, from the isotonic (PAV) recalibration of the
  forecast; ``mcb - dsc + unc = score`` holds exactly, without bins.

Both decompositions are defined for a binary problem (the forecast of the positive class). A
multiclass Brier score is the sum over the classes of the one-vs-rest binary Brier scores of the
columns, so the decompositions of the multiclass Brier score are the sums of the one-vs-rest
decompositions (per-class terms are returned too). The multiclass log score has no such
one-vs-rest split; multiclass problems with ``score="log"`` are refused.
"""

import numpy as np
from scipy.special import rel_entr, xlogy
from sklearn.isotonic import isotonic_regression

from .._validation import (
    _input_dtype,
    check_bool,
    check_labels_and_probabilities,
    check_n_bins,
    check_option,
    pos_index,
)
from .._problems.binning import make_binning, occupied_cells

__all__ = ["brier_score", "log_score", "murphy_decomposition", "corp_decomposition",
           "MurphyDecomposition", "CORPDecomposition", "CORPCurve"]

SCORES = ("brier", "log")
MURPHY_STRATEGIES = ("uniform", "quantile", "unique")


# --------------------------------------------------------------------------------------------
# Shared pieces


def _validated(y_true, y_proba, labels, pos_label, sample_weight):
    """Validated data and weights rescaled to a maximum of 1 (only weight ratios matter)."""
    data = check_labels_and_probabilities(y_true, y_proba, labels=labels, pos_label=pos_label,
                                          sample_weight=sample_weight)
    w = data.sample_weight
    if w is not None:
        w = w / w.max()
    return data, w


def _caller_units(W, data):
    """Totals of rescaled weights back in the caller's units (for the reported bin weights)."""
    if data.sample_weight is None:
        return W
    with np.errstate(over="ignore"):  # weights near 1e308: an inf total, reported as such
        return W * data.sample_weight.max()


def _mean(values, w):
    """Weighted mean (plain mean without weights)."""
    if w is None:
        return float(np.mean(values))
    return float(np.dot(w, values) / w.sum())


def _clip_eps(y_proba):
    """Machine epsilon of the caller's floating dtype (float64 for other inputs), as in
    :func:`sklearn.metrics.log_loss`."""
    # scikit-learn keeps float32 and converts everything else to float64.
    dtype = np.float32 if _input_dtype(y_proba) == np.float32 else np.float64
    return float(np.finfo(dtype).eps)


def _binary_problems(data, score, pos_label):
    """``[(class, q, t)]``: forecast and 0/1 outcome of each binary problem to decompose.

    Binary: the positive class only (the one-column Brier score). Multiclass: every class
    (one-vs-rest), whose Brier scores add up to the multiclass Brier score.
    """
    P, y, classes = data.probs, data.y, data.classes
    if P.shape[1] == 2:
        k = pos_index(classes, pos_label)
        return [(classes[k], P[:, k], (y == k).astype(np.float64))]
    if score == "log":
        raise ValueError(
            f"score='log' decompositions are defined for binary problems only; y_proba has "
            f"{P.shape[1]} classes (the multiclass log score is not a sum of one-vs-rest scores). "
            "Use score='brier' (decomposed one-vs-rest) or decompose each class yourself."
        )
    return [(classes[k], P[:, k], (y == k).astype(np.float64)) for k in range(P.shape[1])]


def _binary_loss(q, t, score, eps):
    """Per-sample loss of the binary forecast ``q`` for the outcome ``t`` (log: ``q`` clipped to
    ``[eps, 1 - eps]``)."""
    if score == "brier":
        d = q - t
        return d * d
    qc = np.clip(q, eps, 1.0 - eps)
    return -(xlogy(t, qc) + xlogy(1.0 - t, 1.0 - qc))


def _expected_loss(r, m, score):
    """Loss of the constant forecast ``r`` averaged over outcomes with mean ``m`` (vectorised):
    ``(r - m)^2 + m (1 - m)`` for Brier, ``-m log r - (1 - m) log(1 - r)`` for log."""
    if score == "brier":
        return (r - m) ** 2 + m * (1.0 - m)
    return -(xlogy(m, r) + xlogy(1.0 - m, 1.0 - r))


def _divergence(m, r, score):
    """Score divergence ``d(m, r) = S(r, m) - S(m, m)`` (>= 0, zero iff ``r == m``)."""
    if score == "brier":
        return (r - m) ** 2
    return rel_entr(m, r) + rel_entr(1.0 - m, 1.0 - r)


def _check_score(score):
    return check_option(score, "score", SCORES)


# --------------------------------------------------------------------------------------------
# Scores


def brier_score(y_true, y_proba, *, labels=None, pos_label=None, sample_weight=None,
                scale_by_half="auto"):
    r"""Brier score (mean squared error of the probability vector), a strictly proper loss.

    For ``C`` classes the Brier (1950) score of one prediction is
    :math:`\sum_{k=1}^C (p_k - 1\{y = k\})^2`, in ``[0, 2]``; the function returns its (weighted)
    mean over the samples. Smaller is better.

    Binary convention (scikit-learn's): with the default ``scale_by_half="auto"``, a binary
    problem is scored by the one-column Brier score :math:`(p - 1\{y = 1\})^2`, in ``[0, 1]``,
    which is half the two-column sum (both columns make the same error); problems with three or
    more classes get the full sum. This equals :func:`sklearn.metrics.brier_score_loss` (default
    ``scale_by_half="auto"``) for every input both accept. ``scale_by_half=False`` gives Brier's
    original sum for binary problems too, ``scale_by_half=True`` halves it for every problem.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_proba : array-like of shape (n_samples,) or (n_samples, n_classes)
        Predicted probabilities; one column (or 1-D) is P(``pos_label``) of a binary problem.
        Columns follow the sorted labels. A :class:`skcalib.distributions.Categorical` is
        accepted.
    labels : array-like, default=None
        All class labels (default: those in ``y_true``).
    pos_label : label, default=None
        Positive class of a one-column binary ``y_proba`` (default: the greater label).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights; the result is the weighted mean.
    scale_by_half : bool or "auto", default="auto"
        Halve the sum over the classes: ``"auto"`` for binary problems only (see above).

    Returns
    -------
    score : float
        The mean Brier score.

    See Also
    --------
    murphy_decomposition, corp_decomposition : Decompositions of the Brier score.
    log_score : The logarithmic score.

    Examples
    --------
    >>> from skcalib.metrics import brier_score
    >>> round(brier_score([0, 1, 1, 0], [0.1, 0.9, 0.8, 0.3]), 6)
    0.0375
    >>> round(brier_score([0, 1, 1, 0], [0.1, 0.9, 0.8, 0.3], scale_by_half=False), 6)
    0.075
    >>> round(brier_score(["a", "b", "c"], [[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.2, 0.2, 0.6]]), 6)
    0.146667
    """
    if isinstance(scale_by_half, str):
        check_option(scale_by_half, "scale_by_half", ("auto",))
    else:
        check_bool(scale_by_half, "scale_by_half")
    data, w = _validated(y_true, y_proba, labels, pos_label, sample_weight)
    P, y = data.probs, data.y
    half = (P.shape[1] == 2) if scale_by_half == "auto" else scale_by_half
    # Residuals of both (all) columns, as scikit-learn computes them (a one-column binary input
    # is completed by 1 - p in both), so that the results agree to the last bit.
    R = P.copy()
    R[np.arange(P.shape[0]), y] -= 1.0
    loss = np.einsum("ij,ij->i", R, R)
    return _mean(loss, w) * (0.5 if half else 1.0)


def log_score(y_true, y_proba, *, labels=None, pos_label=None, sample_weight=None,
              normalize=True):
    r"""Logarithmic score (log loss, cross-entropy, negative log-likelihood), a strictly proper
    loss.

    The mean of :math:`-\log p_{y}` over the samples (natural logarithm). Smaller is better.

    Clipping (scikit-learn's): the probabilities are clipped to ``[eps, 1 - eps]`` with ``eps``
    the machine epsilon of the input's floating dtype (``2.2e-16`` for float64, ``1.2e-7`` for
    float32; float64 for integer input), so that a zero probability on the observed class costs
    ``-log(eps)`` (36.04 for float64) instead of infinity. The result equals
    :func:`sklearn.metrics.log_loss` for every input both accept (float32 input is computed in
    float64 here, in float32 there: they agree to float32 precision).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_proba : array-like of shape (n_samples,) or (n_samples, n_classes)
        Predicted probabilities; one column (or 1-D) is P(``pos_label``) of a binary problem.
        Columns follow the sorted labels. A :class:`skcalib.distributions.Categorical` is
        accepted.
    labels : array-like, default=None
        All class labels (default: those in ``y_true``).
    pos_label : label, default=None
        Positive class of a one-column binary ``y_proba`` (default: the greater label).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights; the result is the weighted mean.
    normalize : bool, default=True
        Return the (weighted) mean; ``False`` returns the (weighted) sum, as
        :func:`sklearn.metrics.log_loss` does.

    Returns
    -------
    score : float
        The mean (or summed) log score.

    See Also
    --------
    brier_score : The Brier score.
    corp_decomposition : Its decomposition with ``score="log"``.

    Examples
    --------
    >>> from skcalib.metrics import log_score
    >>> round(log_score([0, 1, 1, 0], [0.1, 0.9, 0.8, 0.3]), 6)
    0.197635
    >>> round(log_score([0, 1], [0.0, 0.0]), 4)  # clipped, not infinite
    18.0218
    """
    normalize = check_bool(normalize, "normalize")
    eps = _clip_eps(y_proba)
    data, w = _validated(y_true, y_proba, labels, pos_label, sample_weight)
    P, y = data.probs, data.y
    p = P[np.arange(P.shape[0]), y]
    loss = -np.log(np.clip(p, eps, 1.0 - eps))
    if normalize:
        return _mean(loss, w)
    if sample_weight is None:
        return float(loss.sum())
    # The sum uses the caller's weights (not the rescaled ones).
    return float(np.dot(np.asarray(data.sample_weight, dtype=np.float64), loss))


# --------------------------------------------------------------------------------------------
# Murphy decomposition


class MurphyDecomposition:
    """Result of :func:`murphy_decomposition`.

    Parameters
    ----------
    per_class : list of dict
        Terms and bins of each decomposed binary problem (keys as in ``per_class`` below).
    classes : ndarray
        The class of each problem.
    score_name : {"brier", "log"}
        The decomposed score.

    Attributes
    ----------
    rel, res, unc : float
        Reliability (>= 0, smaller is better), resolution (>= 0, larger is better) and
        uncertainty of the binned forecast; also available as ``reliability``, ``resolution``
        and ``uncertainty``.
    within_bin : float
        ``score - (rel - res + unc)``: the score of the forecasts minus the score of their bin
        means, computed directly. For the Brier score it equals
        ``within_bin_variance - 2 * within_bin_covariance``; it is 0 when every bin holds one
        forecast value (``strategy="unique"``).
    within_bin_variance, within_bin_covariance : float or None
        Brier score only (None for the log score): weighted within-bin variance of the forecasts
        and within-bin covariance of forecasts and outcomes (Stephenson et al. 2008).
    score : float
        The score itself (:func:`brier_score` or :func:`log_score`).
    score_name : str
        ``"brier"`` or ``"log"``.
    classes : ndarray
        The class of each decomposed problem (the positive class for binary problems, every class
        one-vs-rest for multiclass Brier scores).
    per_class : list of dict
        The terms of each problem (their sums are the attributes above) and its bins:
        ``"forecast"`` (mean forecast per occupied bin), ``"observed"`` (observed frequency),
        ``"weight"`` (number of samples, or total weight).
    """

    _FIELDS = ("rel", "res", "unc", "within_bin", "within_bin_variance",
               "within_bin_covariance", "score")

    def __init__(self, per_class, classes, score_name):
        self.per_class = per_class
        self.classes = classes
        self.score_name = score_name
        for f in self._FIELDS:
            vals = [pc[f] for pc in per_class]
            setattr(self, f, None if vals[0] is None else float(np.sum(vals)))

    @property
    def reliability(self):
        """Alias of ``rel``."""
        return self.rel

    @property
    def resolution(self):
        """Alias of ``res``."""
        return self.res

    @property
    def uncertainty(self):
        """Alias of ``unc``."""
        return self.unc

    def __repr__(self):
        parts = [f"{f}={getattr(self, f)!r}" for f in ("rel", "res", "unc", "within_bin",
                                                       "score")]
        return f"MurphyDecomposition({', '.join(parts)}, score_name={self.score_name!r})"


def _murphy_one(q, t, w, score, eps, strategy, n_bins):
    """Murphy terms of one binary problem (forecast ``q``, outcome ``t``, weights ``w``)."""
    if score == "log":
        q = np.clip(q, eps, 1.0 - eps)
    if strategy == "unique":
        order, _, starts = _group_equal_values(q)
        ids = np.zeros(q.shape[0], dtype=np.intp)
        ids[starts[1:]] = 1
        cells = np.empty(q.shape[0], dtype=np.intp)
        cells[order] = np.cumsum(ids)
    else:
        cells = make_binning(strategy, n_bins).fit(q[:, None]).assign(q[:, None])
        cells = occupied_cells(cells)
    ww = np.ones_like(q) if w is None else w
    W = np.bincount(cells, weights=ww)
    total = W.sum()
    occ = W > 0
    Wsafe = np.where(occ, W, 1.0)  # empty (zero-weight) bins: no sample contributes
    F = np.bincount(cells, weights=ww * q) / Wsafe
    O = np.bincount(cells, weights=ww * t) / Wsafe
    O = np.clip(O, 0.0, 1.0)  # rounding of the weighted mean
    F[~occ] = O[~occ] = 0.5  # placeholders (finite logs) for bins of zero-weight samples only
    if score == "log":
        # A mean of values in [eps, 1 - eps] can round outside; the identity holds for any F.
        np.clip(F, eps, 1.0 - eps, out=F)
    obar = min(max(float(np.dot(ww, t) / total), 0.0), 1.0)
    Wn = W[occ] / total
    Fo, Oo = F[occ], O[occ]
    rel = float(np.dot(Wn, _divergence(Oo, Fo, score)))
    res = float(np.dot(Wn, _divergence(Oo, np.full_like(Oo, obar), score)))
    unc = float(_expected_loss(np.float64(obar), np.float64(obar), score))
    dq = q - F[cells]
    if score == "brier":
        wbv = float(np.dot(ww, dq * dq) / total)
        wbc = float(np.dot(ww, dq * (t - O[cells])) / total)
        within = wbv - 2.0 * wbc
        d = q - t
        value = float(np.dot(ww, d * d) / total)
    else:
        wbv = wbc = None
        Fc = F[cells]
        # log(q / F) and log((1 - q) / (1 - F)) per sample: S(q) - S(F) without cancellation.
        diff = -(t * np.log(q / Fc) + (1.0 - t) * np.log((1.0 - q) / (1.0 - Fc)))
        within = float(np.dot(ww, diff) / total)
        value = float(np.dot(ww, _binary_loss(q, t, "log", eps)) / total)
    return {"rel": rel, "res": res, "unc": unc, "within_bin": within,
            "within_bin_variance": wbv, "within_bin_covariance": wbc, "score": value,
            "forecast": Fo, "observed": Oo, "weight": W[occ]}


def murphy_decomposition(y_true, y_proba, *, score="brier", n_bins=15, strategy="uniform",
                         labels=None, pos_label=None, sample_weight=None):
    r"""Murphy's binned decomposition of the Brier (or log) score: reliability, resolution,
    uncertainty.

    The forecasts are grouped into bins; with :math:`\bar f_k` the mean forecast and
    :math:`\bar o_k` the observed frequency in bin ``k``, :math:`w_k` its share of the samples
    and :math:`\bar o` the overall frequency (Murphy 1973):

    * ``rel`` :math:`= \sum_k w_k\, d(\bar o_k, \bar f_k)` (miscalibration of the bin means),
    * ``res`` :math:`= \sum_k w_k\, d(\bar o_k, \bar o)` (how far the bins' frequencies move
      away from the base rate),
    * ``unc`` :math:`= S(\bar o, \bar o)`: :math:`\bar o(1 - \bar o)` for Brier, the binary
      entropy for log,

    with :math:`d(o, f) = (o - f)^2` (Brier) or the Kullback--Leibler divergence of
    Bernoulli(o) from Bernoulli(f) (log). Murphy's identity ``score = rel - res + unc`` holds
    only when every bin holds a single forecast value; in general it misses the *within-bin*
    term ``within_bin`` (the score of the forecasts minus the score of their bin means), which
    for the Brier score is ``within_bin_variance - 2 * within_bin_covariance`` (Stephenson,
    Coelho and Jolliffe 2008). All four are returned, so that
    ``score == rel - res + unc + within_bin`` holds exactly (up to rounding).

    Binary problems decompose the forecast of the positive class (the one-column Brier score,
    :func:`brier_score`'s default for binary problems). Multiclass problems decompose the Brier
    score one-vs-rest: the terms are the sums over the classes of the terms of the columns, and
    ``score`` is the multiclass Brier score (``brier_score(..., scale_by_half="auto")``).
    Multiclass log scores are refused.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_proba : array-like of shape (n_samples,) or (n_samples, n_classes)
        Predicted probabilities; one column (or 1-D) is P(``pos_label``) of a binary problem.
    score : {"brier", "log"}, default="brier"
        The proper score to decompose. ``"log"`` clips forecasts as :func:`log_score` does
        (the bins and their means are those of the clipped forecasts).
    n_bins : int, default=15
        Number of bins (ignored for ``strategy="unique"``).
    strategy : {"uniform", "quantile", "unique"}, default="uniform"
        Equal-width bins on [0, 1], equal-count bins (unweighted quantiles), or one bin per
        distinct forecast value (Murphy's original setting: the within-bin terms vanish). Bins
        follow :func:`skcalib.calibration_error`'s edge conventions (right-closed).
    labels : array-like, default=None
        All class labels (default: those in ``y_true``).
    pos_label : label, default=None
        Positive class (default: the greater label).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights: every mean and share is weighted.

    Returns
    -------
    MurphyDecomposition
        With ``rel``, ``res``, ``unc``, ``within_bin``, ``score`` (and their long names
        ``reliability``, ``resolution``, ``uncertainty``), the Brier within-bin variance and
        covariance, and per-class terms with the bins' mean forecasts and frequencies.

    See Also
    --------
    corp_decomposition : The bin-free decomposition from isotonic regression.

    References
    ----------
    A. H. Murphy (1973), "A new vector partition of the probability score", J. Appl. Meteor.
    D. B. Stephenson, C. A. S. Coelho and I. T. Jolliffe (2008), "Two extra components in the
    Brier score decomposition", Weather and Forecasting.

    Examples
    --------
    >>> from skcalib.metrics import murphy_decomposition
    >>> d = murphy_decomposition([0, 0, 1, 1, 1], [0.1, 0.1, 0.1, 0.8, 0.8], strategy="unique")
    >>> round(d.rel, 4), round(d.res, 4), round(d.unc, 2), round(d.within_bin, 12)
    (0.0487, 0.1067, 0.24, 0.0)
    >>> round(d.rel - d.res + d.unc + d.within_bin, 12) == round(d.score, 12)
    True
    """
    score = _check_score(score)
    strategy = check_option(strategy, "strategy", MURPHY_STRATEGIES)
    n_bins = check_n_bins(n_bins)
    eps = _clip_eps(y_proba)
    data, w = _validated(y_true, y_proba, labels, pos_label, sample_weight)
    problems = _binary_problems(data, score, pos_label)
    per_class = [_murphy_one(q, t, w, score, eps, strategy, n_bins) for _, q, t in problems]
    for pc in per_class:
        pc["weight"] = _caller_units(pc["weight"], data)
    return MurphyDecomposition(per_class, np.array([c for c, _, _ in problems]), score)


# --------------------------------------------------------------------------------------------
# CORP decomposition


class CORPCurve:
    """The CORP reliability diagram of one binary problem: the PAV-recalibrated forecast.

    Parameters
    ----------
    forecast : ndarray of shape (n_values,)
        The distinct forecast values, increasing.
    recalibrated : ndarray of shape (n_values,)
        The PAV fit at each of them.
    weight : ndarray of shape (n_values,)
        Total weight of each forecast value.

    Attributes
    ----------
    forecast : ndarray of shape (n_values,)
        The distinct forecast values, increasing.
    recalibrated : ndarray of shape (n_values,)
        The isotonic (PAV) conditional event probability at each of them (non-decreasing): the
        CORP reliability curve (draw it as a step function or join the points).
    weight : ndarray of shape (n_values,)
        Number of samples (or total weight) with each forecast value.
    """

    def __init__(self, forecast, recalibrated, weight):
        self.forecast = forecast
        self.recalibrated = recalibrated
        self.weight = weight

    def __repr__(self):
        return f"CORPCurve(n_values={self.forecast.size})"


class CORPDecomposition:
    """Result of :func:`corp_decomposition`.

    Unpacks as ``mcb, dsc, unc, score = result``.

    Parameters
    ----------
    per_class : list of dict
        ``mcb``, ``dsc``, ``unc`` and ``score`` of each decomposed binary problem.
    curves : list of CORPCurve
        The reliability diagram of each problem.
    classes : ndarray
        The class of each problem.
    score_name : {"brier", "log"}
        The decomposed score.

    Attributes
    ----------
    mcb : float
        Miscalibration ``S(forecast) - S(recalibrated)`` (>= 0; 0 for a forecast that is its own
        isotonic recalibration).
    dsc : float
        Discrimination ``S(climatology) - S(recalibrated)`` (>= 0).
    unc : float
        Uncertainty ``S(climatology)``, the score of the base rate.
    score : float
        ``S(forecast)``; ``mcb - dsc + unc == score``.
    score_name : str
        ``"brier"`` or ``"log"``.
    classes : ndarray
        The class of each decomposed problem (the positive class for binary problems, every class
        one-vs-rest for multiclass Brier scores).
    per_class : list of dict
        ``mcb``, ``dsc``, ``unc``, ``score`` of each problem (they add up to the attributes).
    curves : list of CORPCurve
        The CORP reliability diagram of each problem.
    curve : CORPCurve
        The reliability diagram of a binary problem (``curves[0]``).
    """

    def __init__(self, per_class, curves, classes, score_name):
        self.per_class = per_class
        self.curves = curves
        self.classes = classes
        self.score_name = score_name
        for f in ("mcb", "dsc", "unc", "score"):
            setattr(self, f, float(np.sum([pc[f] for pc in per_class])))

    @property
    def curve(self):
        """The reliability diagram of a binary problem (multiclass: use ``curves``)."""
        if len(self.curves) != 1:
            raise AttributeError("a multiclass decomposition has one curve per class; use "
                                 "curves (in the order of classes).")
        return self.curves[0]

    def __iter__(self):
        return iter((self.mcb, self.dsc, self.unc, self.score))

    def __len__(self):
        return 4

    def __getitem__(self, index):
        return (self.mcb, self.dsc, self.unc, self.score)[index]

    def __repr__(self):
        return (f"CORPDecomposition(mcb={self.mcb!r}, dsc={self.dsc!r}, unc={self.unc!r}, "
                f"score={self.score!r}, score_name={self.score_name!r})")


def _group_equal_values(q):
    """Sort ``q`` once: ``(order, starts)`` with ``starts`` the first sorted position of each run
    of equal values (one ``argsort``, cheaper than ``np.unique(..., return_inverse=True)``)."""
    order = np.argsort(q)
    qs = q[order]
    new = np.empty(qs.shape[0], dtype=bool)
    new[:1] = True
    np.not_equal(qs[1:], qs[:-1], out=new[1:])
    return order, qs, np.flatnonzero(new)


def _pav_by_value(q, t, w):
    """Distinct forecast values, their total weight and the PAV fit of the outcomes on them.

    Samples with the same forecast value are pooled before the fit (CORP's treatment of ties):
    the fit is a function of the forecast value. Values whose total weight is 0 are dropped.
    """
    order, qs, starts = _group_equal_values(q)
    values = qs[starts]
    ts = t[order]
    if w is None:
        W = np.diff(np.append(starts, qs.shape[0])).astype(np.float64)
        T = np.add.reduceat(ts, starts)
    else:
        ws = w[order]
        W = np.add.reduceat(ws, starts)
        T = np.add.reduceat(ws * ts, starts)
    keep = W > 0
    if not keep.all():
        values, W, T = values[keep], W[keep], T[keep]
    m = np.clip(T / W, 0.0, 1.0)
    r = np.asarray(isotonic_regression(m, sample_weight=W, increasing=True), dtype=np.float64)
    np.clip(r, 0.0, 1.0, out=r)
    return values, W, m, r


def _corp_one(q, t, w, score, eps):
    values, W, m, r = _pav_by_value(q, t, w)
    total = W.sum()
    Wn = W / total
    obar = min(max(float(np.dot(Wn, m)), 0.0), 1.0)
    f = values if score == "brier" else np.clip(values, eps, 1.0 - eps)
    s_fc = float(np.dot(Wn, _expected_loss(f, m, score)))
    s_rc = float(np.dot(Wn, _expected_loss(r, m, score)))
    s_cl = float(_expected_loss(np.float64(obar), np.float64(obar), score))
    part = {"mcb": s_fc - s_rc, "dsc": s_cl - s_rc, "unc": s_cl, "score": s_fc}
    return part, CORPCurve(values, r, W)


def corp_decomposition(y_true, y_proba, *, score="brier", labels=None, pos_label=None,
                       sample_weight=None):
    r"""CORP decomposition of the Brier or log score: miscalibration, discrimination,
    uncertainty.

    The CORP approach (Dimitriadis, Gneiting and Jordan 2021: *Consistent*, *Optimally binned*,
    *Reproducible*, *PAV*-based) recalibrates the forecast ``p`` by isotonic regression of the
    outcomes on it (the pool-adjacent-violators algorithm; samples with the same forecast value
    are pooled first, so the recalibrated forecast is a function of the forecast value) and
    splits the mean score ``S`` as

    * ``mcb = S(p) - S(p_pav)`` (miscalibration, >= 0),
    * ``dsc = S(climatology) - S(p_pav)`` (discrimination, >= 0),
    * ``unc = S(climatology)`` (uncertainty; the climatology is the base rate),

    so that ``score = mcb - dsc + unc`` exactly (no bins, no within-bin term). The isotonic fit
    minimises every proper score among non-decreasing functions of the forecast, which gives
    both inequalities. The recalibrated values, against the forecast values, are the CORP
    reliability diagram (attribute ``curve``).

    Binary problems decompose the forecast of the positive class (the one-column Brier score,
    :func:`brier_score`'s default for binary problems; the decomposition is the same for the
    other class). Multiclass Brier scores are decomposed one-vs-rest: each class's column is
    recalibrated by its own isotonic fit, the terms are sums over the classes, and ``score`` is
    the multiclass Brier score. (The one-vs-rest recalibrated columns need not sum to one.)
    Multiclass log scores are refused: the multiclass log score is not a sum of one-vs-rest
    binary scores.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_proba : array-like of shape (n_samples,) or (n_samples, n_classes)
        Predicted probabilities; one column (or 1-D) is P(``pos_label``) of a binary problem.
    score : {"brier", "log"}, default="brier"
        The proper score to decompose. ``"log"`` clips the forecast as :func:`log_score` does
        (the recalibrated and climatological forecasts need no clipping: a recalibrated 0 or 1
        only occurs where every outcome agrees with it).
    labels : array-like, default=None
        All class labels (default: those in ``y_true``).
    pos_label : label, default=None
        Positive class (default: the greater label).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights: a weighted isotonic fit and weighted means (integer weights
        give the same result as repeated rows).

    Returns
    -------
    CORPDecomposition
        With ``mcb``, ``dsc``, ``unc``, ``score`` (it unpacks as ``mcb, dsc, unc, score``),
        per-class terms and the reliability diagram(s) ``curve`` / ``curves``.

    See Also
    --------
    murphy_decomposition : The binned decomposition.
    brier_score, log_score : The scores.

    References
    ----------
    T. Dimitriadis, T. Gneiting and A. I. Jordan (2021), "Stable reliability diagrams for
    probabilistic classifiers", PNAS 118(8), e2016191118.

    Examples
    --------
    >>> from skcalib.metrics import corp_decomposition
    >>> mcb, dsc, unc, score = corp_decomposition([0, 1, 0, 1], [0.2, 0.4, 0.6, 0.8])
    >>> round(mcb, 4), round(dsc, 4), unc, round(score, 4)
    (0.075, 0.125, 0.25, 0.2)
    >>> d = corp_decomposition([0, 1, 0, 1], [0.2, 0.4, 0.6, 0.8])
    >>> d.curve.recalibrated.tolist()
    [0.0, 0.5, 0.5, 1.0]
    """
    score = _check_score(score)
    eps = _clip_eps(y_proba)
    data, w = _validated(y_true, y_proba, labels, pos_label, sample_weight)
    problems = _binary_problems(data, score, pos_label)
    parts, curves = [], []
    for _, q, t in problems:
        part, curve = _corp_one(q, t, w, score, eps)
        curve.weight = _caller_units(curve.weight, data)
        parts.append(part)
        curves.append(curve)
    return CORPDecomposition(parts, curves, np.array([c for c, _, _ in problems]), score)
