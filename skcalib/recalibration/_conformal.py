"""Conformalized quantile regression (Romano, Patterson and Candes 2019) as a recalibrator of
quantile predictions and prediction intervals."""

import math
from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._sklearn_compat import check_feature_names
from .._validation import check_bool, check_numeric, check_sample_weight, check_scores
from ..distributions import Quantiles, is_distribution
from .._expectations import check_targets
from ._checks import check_X_container, check_y_given
from ._distribution import DistributionRecalibratorMixin, family_signature

#: Two levels ``tau`` and ``tau'`` form a symmetric pair when ``|tau + tau' - 1|`` is below this.
_PAIR_TOLERANCE = 1e-9


def _check_level(level, name):
    if isinstance(level, (bool, np.bool_)) or not isinstance(level, Real):
        raise TypeError(f"{name} must be a real number in (0, 1); got {level!r} of type "
                        f"{type(level).__name__}.")
    if not 0.0 < float(level) < 1.0:
        raise ValueError(f"{name} must lie strictly between 0 and 1; got {level!r}.")
    return float(level)


def symmetric_pairs(levels):
    """``(lower index, upper index)`` of every pair of levels ``(tau, 1 - tau)``, ``tau < 1/2``,
    outermost first; levels without a partner (the median, say) belong to no pair."""
    pairs = []
    for i, t in enumerate(levels):
        if t >= 0.5:
            break
        j = np.flatnonzero(np.abs(levels + t - 1.0) <= _PAIR_TOLERANCE)
        if j.size:
            pairs.append((i, int(j[0])))
    return pairs


def conformal_quantile(scores, alpha, w=None, what="the interval"):
    """The ``ceil((n + 1)(1 - alpha))``-th smallest of the ``n`` scores (the empirical quantile
    at the finite-sample level ``ceil((n + 1)(1 - alpha)) / n``).

    With weights ``w``: the smallest score whose cumulative weight reaches ``(1 - alpha)(W +
    W / n)`` (``W`` the total weight, the test point counted with the mean weight of the
    positive ones), the unweighted rule for equal weights. A ``ValueError`` when the level
    exceeds 1 (too few calibration samples: the interval would be infinite)."""
    if w is not None:
        keep = w > 0
        scores, w = scores[keep], w[keep]
    n = scores.size
    order = np.argsort(scores, kind="stable")
    s = scores[order]
    if w is None:
        k = math.ceil((n + 1) * (1.0 - alpha) - 1e-12)  # (rounding of (n + 1)(1 - alpha))
        if k > n:
            raise ValueError(
                f"{n} calibration samples are too few for the coverage 1 - alpha = "
                f"{1 - alpha:.6g} of {what}: the conformal quantile ceil((n + 1)(1 - alpha)) / n "
                f"exceeds 1, so the interval would be infinite; it needs n >= "
                f"{math.ceil(1.0 / alpha - 1.0 - 1e-12)} samples.")
        return float(s[max(k, 1) - 1])
    cw = np.cumsum(w[order])
    target = (1.0 - alpha) * cw[-1] * (n + 1) / n
    if target > cw[-1] * (1.0 + 1e-12):
        raise ValueError(
            f"the calibration weights are too few for the coverage 1 - alpha = {1 - alpha:.6g} "
            f"of {what}: (1 - alpha)(W + W / n) exceeds the total weight W of the {n} "
            "samples, so the interval would be infinite.")
    return float(s[min(int(np.searchsorted(cw, target * (1.0 - 1e-12))), n - 1)])


class ConformalQuantileRecalibration(DistributionRecalibratorMixin, TransformerMixin,
                                     BaseEstimator):
    """Conformalized quantile regression (CQR; Romano, Patterson and Candes 2019).

    Each central prediction interval ``[q_lo, q_hi]`` of a quantile model -- a symmetric pair of
    levels ``(tau, 1 - tau)`` of :class:`~skcalib.distributions.Quantiles` predictions, or given
    bounds at a nominal coverage ``1 - alpha`` -- is widened (or narrowed) on held-out data so
    that its coverage is right in finite samples. With the conformity scores
    ``E_i = max(q_lo(x_i) - y_i, y_i - q_hi(x_i))`` of ``n`` calibration samples, the correction
    ``Q`` is their ``ceil((n + 1)(1 - alpha))``-th smallest value (the empirical quantile at
    level ``ceil((n + 1)(1 - alpha)) / n``), and the recalibrated interval is
    ``[q_lo - Q, q_hi + Q]``; ``alpha = 2 tau`` for a pair of levels.

    **Guarantee** (Romano et al. 2019, Theorem 1): if the calibration samples and the test
    sample are exchangeable, the recalibrated interval covers the test target with probability
    at least ``1 - alpha``; if moreover the scores have no ties (almost surely for continuous
    targets), at most ``1 - alpha + 1 / (n + 1)``. The coverage is *marginal* (over the
    calibration set and the test point), not conditional on ``x``. ``symmetric=False`` uses the
    asymmetric scores ``q_lo - y`` and ``y - q_hi``, each corrected at level ``1 - alpha / 2``
    (their Theorem 2): coverage at least ``1 - alpha`` and at most
    ``1 - alpha + 2 / (n + 1)``, with each tail's miss rate at most ``alpha / 2``.

    Parameters
    ----------
    level : float in (0, 1), default=None
        Nominal coverage ``1 - alpha`` of interval bounds given as an array of shape
        ``(n_samples, 2)``; required for that form (the levels of ``Quantiles`` and the keys of
        a dict of intervals are their own).
    symmetric : bool, default=True
        One correction for both ends (the scores ``max(q_lo - y, y - q_hi)``), or one per end
        (``False``).

    Attributes
    ----------
    form_ : {"quantiles", "interval", "intervals"}
        What ``fit`` was given: ``Quantiles``, an ``(n_samples, 2)`` array, or a dict of them.
    coverage_levels_ : ndarray of shape (n_intervals,)
        Nominal coverage ``1 - alpha`` of each corrected interval (for ``Quantiles``: ``1 - 2
        tau`` of each pair, outermost first).
    corrections_ : ndarray of shape (n_intervals, 2)
        What is subtracted from each lower bound and added to each upper bound (equal columns
        when ``symmetric``); negative values narrow an interval that was too wide.
    pairs_ : list of tuple of int
        For ``Quantiles``: the column indices ``(lower, upper)`` of each pair of levels.
    levels_ : ndarray
        For ``Quantiles``: the levels seen in ``fit``; for a dict: its keys, sorted.
    n_calibration_ : int
        Number of calibration samples (of positive weight).
    family_ : str
        ``"Quantiles"``, ``"interval"`` or ``"intervals"``.

    See Also
    --------
    QuantileRecalibration : recalibrates the whole quantile function (every level, not only the
        central intervals), without a finite-sample guarantee.

    Notes
    -----
    Accepted forms (:meth:`transform` returns the same form):

    * :class:`~skcalib.distributions.Quantiles`: every symmetric pair of levels ``(tau, 1 -
      tau)`` is corrected with its own ``alpha = 2 tau``; levels without a partner (the median,
      an unpaired 0.8) are kept. If a correction makes quantiles cross (a narrowed outer pair
      inside an inner one), each row is sorted again (the ``Quantiles`` rearrangement): the
      values then no longer belong to their pairs, and the guarantee holds for the outermost
      pair only. ``fit`` and ``transform`` need the same levels.
    * an array ``[lower, upper]`` of shape ``(n_samples, 2)``, with ``level``;
    * a dict ``{coverage level: (n_samples, 2) bounds}``, each interval corrected at its key.

    In :class:`RecalibratedRegressor`, the guarantee is that of split conformal prediction with
    a model fitted elsewhere, ``RecalibratedRegressor(FrozenEstimator(model),
    recalibrator="cqr")`` fitted on calibration data; cross-fitted folds (``cv``) average the
    folds' corrected quantiles, an ensemble the theorem does not cover.

    The correction depends on the calibration data only through one order statistic per
    interval: it is exact (no quadrature, no random numbers). With ``sample_weight`` the
    quantile is the weighted one, the test point counted with the mean weight (the unweighted
    rule for equal weights); the guarantee above is for unweighted exchangeable data.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.distributions import Quantiles
    >>> from skcalib.recalibration import ConformalQuantileRecalibration
    >>> rng = np.random.default_rng(0)
    >>> mean = rng.normal(size=4000)
    >>> y = mean + 2.0 * rng.standard_normal(4000)          # the model's spread is 1
    >>> pred = Quantiles(mean[:, None] + np.array([-1.645, 0.0, 1.645]), [0.05, 0.5, 0.95])
    >>> cqr = ConformalQuantileRecalibration().fit(pred[:2000], y[:2000])
    >>> out = cqr.transform(pred[2000:])
    >>> lo, hi = out.values[:, 0], out.values[:, 2]
    >>> round(float(np.mean((lo <= y[2000:]) & (y[2000:] <= hi))), 2)   # 90% interval
    0.9
    """

    def __init__(self, *, level=None, symmetric=True):
        self.level = level
        self.symmetric = symmetric

    #: The only family it recalibrates (see ``_registry.method_names``).
    _families = ("Quantiles",)
    _fitted_what = "the corrections"

    # -- input ---------------------------------------------------------------------------------

    def _read(self, X, fitting):
        """``(form, intervals, dist)``: the form of ``X``, its intervals as a list of
        ``(lower, upper)`` arrays, and the ``Quantiles`` object (or None)."""
        if is_distribution(X):
            if not isinstance(X, Quantiles):
                raise TypeError(
                    f"X holds {family_signature(X)} predictions; ConformalQuantileRecalibration "
                    "takes Quantiles predictions, interval bounds of shape (n_samples, 2) (with "
                    "level) or a dict {level: bounds}. For other predictive distributions use "
                    "QuantileRecalibration.")
            if not fitting and self.form_ == "quantiles":
                if not np.array_equal(X.levels, self.levels_):
                    raise ValueError(f"X has the levels {X.levels.tolist()} but the corrections "
                                     f"were fitted on the levels {self.levels_.tolist()}.")
                pairs = self.pairs_
            else:
                pairs = symmetric_pairs(X.levels)
            if fitting and not pairs:
                raise ValueError(f"X: the levels {X.levels.tolist()} hold no symmetric pair "
                                 "(tau, 1 - tau), so there is no interval to conformalize.")
            V = X.values
            return "quantiles", [(V[:, i], V[:, j]) for i, j in pairs], X
        if isinstance(X, dict):
            if not X:
                raise ValueError("X is an empty dict; give {coverage level: bounds}.")
            keys = sorted(X)
            for k in keys:
                _check_level(k, f"X: the key {k!r}")
            return "intervals", [self._bounds(X[k], f"X[{k!r}]") for k in keys], None
        check_X_container(X)
        check_feature_names(self, X, reset=fitting)
        return "interval", [self._bounds(X, "X")], None

    @staticmethod
    def _bounds(B, name):
        check_X_container(B, name)
        check_numeric(B, name, what="interval bounds",
                      expected="an array of shape (n_samples, 2) of lower and upper bounds")
        A = check_scores(B, name)
        if A.ndim != 2 or A.shape[1] != 2:
            raise ValueError(f"{name} must hold interval bounds: an array of shape (n_samples, 2) "
                             f"[lower, upper]; got shape {A.shape}.")
        if A.shape[0] == 0:
            raise ValueError(f"{name} holds no samples.")
        return A[:, 0], A[:, 1]

    # -- fit / transform -----------------------------------------------------------------------

    def fit(self, X, y, sample_weight=None):
        """Fit the corrections on held-out predictions ``X`` and targets ``y``.

        Parameters
        ----------
        X : Quantiles, array-like of shape (n_samples, 2) or dict
            Quantile predictions, interval bounds ``[lower, upper]`` (with ``level``), or a dict
            ``{coverage level: bounds}``.
        y : array-like of shape (n_samples,)
            Real targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the empirical distribution of the scores.

        Returns
        -------
        self : ConformalQuantileRecalibration
        """
        check_bool(self.symmetric, "symmetric")
        if self.level is not None:
            _check_level(self.level, "level")
        form, intervals, dist = self._read(X, fitting=True)
        if form == "interval" and self.level is None:
            raise ValueError("X is an array of interval bounds, so level (their nominal coverage "
                             "1 - alpha) must be given, e.g. level=0.9.")
        n = intervals[0][0].shape[0]
        if any(lo.shape[0] != n for lo, _ in intervals):
            raise ValueError("X: every interval of the dict must have the same number of rows.")
        y = check_targets(check_y_given(y), _RowCount(n), name="y", pred_name=None)
        w = check_sample_weight(sample_weight, n, rescale=True)
        if form == "quantiles":
            self.pairs_ = symmetric_pairs(dist.levels)
            self.levels_ = dist.levels.copy()
            cover = np.array([1.0 - 2.0 * dist.levels[i] for i, _ in self.pairs_])
        elif form == "intervals":
            self.levels_ = np.array(sorted(X), dtype=np.float64)
            cover = self.levels_.copy()
        else:
            cover = np.array([float(self.level)])
        C = np.empty((len(intervals), 2))
        for k, ((lo, hi), c) in enumerate(zip(intervals, cover)):
            alpha = 1.0 - c
            what = f"the {c:.6g} interval"
            if self.symmetric:
                C[k] = conformal_quantile(np.maximum(lo - y, y - hi), alpha, w, what)
            else:
                C[k, 0] = conformal_quantile(lo - y, alpha / 2.0, w, what + " (lower end)")
                C[k, 1] = conformal_quantile(y - hi, alpha / 2.0, w, what + " (upper end)")
        self.form_ = form
        self.coverage_levels_ = cover
        self.corrections_ = C
        self.n_calibration_ = int(n if w is None else np.count_nonzero(w))
        self.family_ = {"quantiles": "Quantiles"}.get(form, form)
        self._signature = self.family_
        if form == "interval":
            self.n_features_in_ = 2
        elif hasattr(self, "n_features_in_"):
            del self.n_features_in_
        return self

    def _fitted(self, X):
        check_is_fitted(self)
        form, intervals, dist = self._read(X, fitting=False)
        if form != self.form_:
            raise ValueError(f"X is of the form {form!r} but the corrections were fitted on "
                             f"{self.form_!r}; transform predictions of the form seen in fit.")
        if form == "intervals" and not np.array_equal(np.array(sorted(X), float), self.levels_):
            raise ValueError(f"X has the levels {sorted(X)} but the corrections were fitted on "
                             f"the levels {self.levels_.tolist()}.")
        return intervals, dist

    def transform(self, X):
        """The recalibrated predictions, in the form of ``X``.

        Parameters
        ----------
        X : Quantiles, array-like of shape (n_samples, 2) or dict
            Predictions of the form (and levels) seen in ``fit``.

        Returns
        -------
        Quantiles, ndarray of shape (n_samples, 2) or dict
        """
        intervals, dist = self._fitted(X)
        C = self.corrections_
        if self.form_ == "quantiles":
            V = np.array(dist.values)
            for (i, j), (c_lo, c_hi) in zip(self.pairs_, C):
                V[:, i] -= c_lo
                V[:, j] += c_hi
            return Quantiles(V, dist.levels, crossing="sort")
        out = [np.column_stack([lo - c_lo, hi + c_hi])
               for (lo, hi), (c_lo, c_hi) in zip(intervals, C)]
        if self.form_ == "interval":
            return out[0]
        return dict(zip(sorted(X), out))

    def predict_distribution(self, X):
        """The recalibrated ``Quantiles`` predictions (as :meth:`transform`).

        Parameters
        ----------
        X : Quantiles
            Quantile predictions with the levels seen in ``fit``.

        Returns
        -------
        Quantiles
        """
        check_is_fitted(self)
        if self.form_ != "quantiles":
            raise TypeError("predict_distribution needs Quantiles predictions; interval bounds "
                            "are not a distribution (use transform).")
        return self.transform(X)


class _RowCount:
    """A stand-in with ``n_samples`` and a univariate ``dim`` for ``check_targets`` (which
    checks targets against a distribution's rows)."""

    dim = None

    def __init__(self, n):
        self.n_samples = n
