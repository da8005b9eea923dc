"""Spread scaling of ensembles and sample-based predictions (the members' deviations from the
mean times one fitted factor)."""

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from .._expectations import check_targets
from .._validation import check_option
from .._sklearn_compat import check_feature_names
from .._validation import check_sample_weight
from ..distributions import Empirical, is_distribution
from ._checks import check_distribution_predictions, check_y_given
from ._distribution import DistributionRecalibratorMixin, family_signature

_OBJECTIVES = ("crps", "nll")


def crps_optimal_spread(dist, y, v=None):
    """The factor ``s >= 0`` minimising the mean plug-in CRPS of the ensembles
    ``mean_i + s (x_ik - mean_i)`` at ``y``, exactly.

    Row ``i`` (weights ``w_ik``, deviations ``d_ik``, residual ``r_i = y_i - mean_i``) has
    ``CRPS_i(s) = sum_k w_ik |s d_ik - r_i| - s B_i`` with ``B_i = E|X - X'| / 2`` of the
    unscaled row, so the (weighted) mean is ``sum_ik a_ik |s - t_ik| - s B + const`` with
    ``a_ik = v_i w_ik |d_ik|``, ``t_ik = r_i / d_ik`` and ``B = sum_i v_i B_i``: convex and
    piecewise linear in ``s``. Its slope ``sum_{t < s} a - sum_{t > s} a - B`` changes sign at the
    weighted quantile of the ``t_ik`` at level ``(A + B) / (2 A)`` (``A = sum a``; ``B < A``
    unless every deviation is 0), which is therefore a minimiser (clipped at 0).
    """
    x, w = dist.samples, dist.weights
    mu = dist.mean
    d = np.where(_flat_rows(dist)[:, None], 0.0, x - mu[:, None])   # (no rounding residue)
    r = y - mu
    v = np.full(dist.n_samples, 1.0 / dist.n_samples) if v is None else v / v.sum()
    B_i = half_mean_difference(d, w)
    a = (v[:, None] * w * np.abs(d)).ravel()
    keep = a > 0
    if not np.any(keep):
        raise ValueError("X: every ensemble has all its members at its mean (no spread), so "
                         "there is no spread to scale.")
    t = (np.broadcast_to(r[:, None], d.shape).ravel()[keep] / d.ravel()[keep])
    a = a[keep]
    order = np.argsort(t, kind="stable")
    t, cum = t[order], np.cumsum(a[order])
    A, B = cum[-1], float(v @ B_i)
    j = min(int(np.searchsorted(cum, 0.5 * (A + B) * (1.0 - 1e-15))), t.size - 1)
    return max(float(t[j]), 0.0)


def half_mean_difference(d, w):
    """``E|X - X'| / 2`` of every row (values ``d``, weights ``w``), by sorting:
    ``sum_k w_(k) d_(k) (2 C_(k) - w_(k) - 1)`` with ``C_(k)`` the cumulative weight (the plug-in
    CRPS's spread term; computed here so that it does not depend on the estimator that
    :func:`skcalib.crps` uses for ensembles)."""
    order = np.argsort(d, axis=1, kind="stable")
    ds = np.take_along_axis(d, order, axis=1)
    ws = np.take_along_axis(w, order, axis=1)
    C = np.cumsum(ws, axis=1)
    return np.einsum("ij,ij->i", ws * ds, 2.0 * C - ws - 1.0)


def _flat_rows(dist):
    """Rows whose members of positive weight all coincide (no spread, whatever the rounding
    of their mean)."""
    x = np.where(dist.weights > 0, dist.samples, np.nan)
    return np.nanmax(x, axis=1) == np.nanmin(x, axis=1)


def nll_optimal_spread(dist, y, v=None):
    """``s = sqrt(mean_i (y_i - mean_i)^2 / var_i)``: the factor minimising the Gaussian NLL of
    ``N(mean_i, s^2 var_i)`` (weighted mean with ``v``)."""
    mu, var = dist.mean, np.where(_flat_rows(dist), 0.0, dist.variance)
    if v is not None:   # zero-weight rows do not count
        keep = v > 0
        mu, var, y, v = mu[keep], var[keep], y[keep], v[keep]
    if np.any(var <= 0):
        i = int(np.flatnonzero(var <= 0)[0])
        raise ValueError(f"X: objective='nll' needs a positive spread in every row; row {i} has "
                         "all its members at one value (variance 0), where the Gaussian NLL is "
                         "not defined. Use objective='crps', or drop such rows.")
    s2 = float(np.average((y - mu) ** 2 / var, weights=v))
    if not np.isfinite(s2):
        raise ValueError("X and y: the NLL-optimal spread factor overflows float64 (residuals "
                         "and spreads in different units?).")
    return float(np.sqrt(s2))


def scaled_ensemble(dist, s):
    """Every member moved to ``mean + s (x - mean)`` (weights kept)."""
    mu = dist.mean[:, None]
    return Empirical(mu + s * (dist.samples - mu), dist.weights)


class SpreadScaling(DistributionRecalibratorMixin, TransformerMixin, BaseEstimator):
    """Spread scaling of ensembles and sample-based predictions.

    Every member (draw) ``x_ik`` of an :class:`~skcalib.distributions.Empirical` prediction is
    moved to ``mean_i + s (x_ik - mean_i)`` (``mean_i`` the weighted mean of row ``i``; weights
    kept), with one factor ``s`` fitted on held-out data: the mean stays, the standard deviation
    is multiplied by ``s``. It is the ensemble's counterpart of variance (temperature) scaling,
    the usual repair of under-dispersed ensembles (random forests, deep ensembles, MC dropout).

    Parameters
    ----------
    objective : {"crps", "nll"}, default="crps"
        ``"crps"``: the mean plug-in CRPS of the scaled ensembles (their exact CRPS, as
        :func:`skcalib.crps` computes it), minimised exactly: it is convex and piecewise linear
        in ``s``, and its minimiser is a weighted quantile of the ratios ``(y_i - mean_i) /
        (x_ik - mean_i)`` (see Notes). ``"nll"``: the negative log-likelihood of the Gaussian
        ``N(mean_i, s^2 var_i)`` (an ensemble has no density of its own), with the closed form
        ``s^2 = mean_i (y_i - mean_i)^2 / var_i``.

    Attributes
    ----------
    scale_ : float
        The fitted factor ``s`` (> 1 widens the ensembles).
    family_ : str
        ``"Empirical"``.

    See Also
    --------
    DistributionTemperatureScaling : the same for Normal, Laplace and their mixtures.
    QuantileRecalibration : reweights the members instead (any monotone distortion of the PIT).

    Notes
    -----
    With ``v_i`` the sample weights (normalised), the members' weights ``w_ik`` and deviations
    ``d_ik``, ``r_i = y_i - mean_i`` and ``B_i`` half the mean absolute difference of row ``i``'s
    members, the mean CRPS is ``sum_ik v_i w_ik |d_ik| |s - r_i / d_ik| - s sum_i v_i B_i`` plus
    a constant: its slope crosses 0 at the weighted quantile of the ``r_i / d_ik`` (weights
    ``v_i w_ik |d_ik|``, sum ``A``) at level ``(A + B) / (2 A)``, which is the fitted ``s``
    (0 if that quantile is negative). ``O(n m log(n m))``, no iterations. ``objective="nll"``
    refuses rows whose members all coincide (variance 0).

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.distributions import Empirical
    >>> from skcalib.recalibration import SpreadScaling
    >>> rng = np.random.default_rng(0)
    >>> mean = rng.normal(size=3000)
    >>> y = mean + rng.standard_normal(3000)
    >>> ens = Empirical(mean[:, None] + 0.5 * rng.standard_normal((3000, 50)))  # half the spread
    >>> round(SpreadScaling().fit(ens, y).scale_, 2)                # CRPS optimum
    1.98
    >>> round(SpreadScaling(objective="nll").fit(ens, y).scale_, 2)  # Gaussian NLL optimum
    2.06
    """

    def __init__(self, *, objective="crps"):
        self.objective = objective

    #: The only family it recalibrates (see ``_registry.method_names``).
    _families = ("Empirical",)
    _fitted_what = "the spread factor"

    def fit(self, X, y, sample_weight=None):
        """Fit the spread factor on held-out ensembles ``X`` and targets ``y``.

        Parameters
        ----------
        X : Empirical
            Ensemble (sample-based) predictions.
        y : array-like of shape (n_samples,)
            Real targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the mean CRPS or NLL.

        Returns
        -------
        self : SpreadScaling
        """
        check_option(self.objective, "objective", _OBJECTIVES)
        dist = self._check_ensembles(X)
        check_feature_names(self, X, reset=True)
        y = check_targets(check_y_given(y), dist, name="y", pred_name="X")
        w = check_sample_weight(sample_weight, dist.n_samples, rescale=True)
        fit = crps_optimal_spread if self.objective == "crps" else nll_optimal_spread
        self.scale_ = fit(dist, y, w)
        self._record_family(dist, False)
        return self

    @staticmethod
    def _check_ensembles(X):
        dist, _ = check_distribution_predictions(X, "X")
        if not (is_distribution(X) and isinstance(dist, Empirical)):
            raise TypeError(
                f"X holds {family_signature(dist) if is_distribution(X) else 'an array'} "
                "predictions; SpreadScaling scales ensembles: skcalib.distributions.Empirical "
                "(members or draws, optionally weighted). For Normal, Laplace or mixture "
                "predictions use DistributionTemperatureScaling.")
        return dist

    def transform(self, X):
        """The scaled ensembles ``mean + scale_ (x - mean)``.

        Parameters
        ----------
        X : Empirical
            Ensemble predictions.

        Returns
        -------
        Empirical
        """
        return self.predict_distribution(X)

    def predict_distribution(self, X):
        """The scaled ensembles (as :meth:`transform`).

        Parameters
        ----------
        X : Empirical
            Ensemble predictions.

        Returns
        -------
        Empirical
        """
        dist, _ = self._fitted_predictions(X)
        return scaled_ensemble(dist, self.scale_)
