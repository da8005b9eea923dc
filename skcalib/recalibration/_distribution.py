"""Temperature scaling of predictive distributions (Widmann et al. 2021, Appendix F)."""

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._validation import (check_option, check_rng, check_sample_weight, check_scalar_param,
                           check_scores)
from ..distributions import Categorical, Mixture, Normal, is_distribution
from ._classifier import _OBJECTIVES, _SKCE_ESTIMATORS
from ._solvers import minimize_log_temperature, window_around

def as_distribution(X, name="X"):
    """A distribution object, or ``(n, 2)`` scores ``[mean, std]`` as a :class:`Normal`.

    Returns the distribution and whether ``X`` was an array (so that outputs keep that form).
    """
    if is_distribution(X):
        return X, False
    A = check_scores(X, name)
    if A.ndim != 2 or A.shape[1] != 2:
        raise ValueError(
            f"{name} must be a skcalib distribution or an array of shape (n_samples, 2) holding "
            f"the predicted means and standard deviations; got shape {np.shape(X)}.")
    if np.any(A[:, 1] < 0):
        raise ValueError(f"{name}: the standard deviations (column 1) must be non-negative.")
    return Normal(A[:, 0], A[:, 1]), True


class DistributionTemperatureScaling(TransformerMixin, BaseEstimator):
    """Temperature scaling of predictive distributions (Widmann et al. 2021, Definition F.1).

    A predictive density ``p`` becomes ``q proportional to p**(1/T)``; for the families of
    :mod:`skcalib.distributions` this stays in the family and keeps the mean (so the MSE, the MAE
    and the predicted class never change):

    ==================================  ====================================================
    family                              temperature ``T``
    ==================================  ====================================================
    Normal ``N(m, s^2)``                ``N(m, T s^2)`` (standard deviation times ``sqrt(T)``)
    MultivariateNormal ``N(m, S)``      ``N(m, T S)``
    Laplace ``L(m, b)``                 ``L(m, T b)``
    Mixture                             every component scaled as above, weights kept
    Categorical                         ``softmax(log p / T)`` (as :class:`TemperatureScaling`)
    ==================================  ====================================================

    The NLL optimum has a closed form for Normal, MultivariateNormal and Laplace predictions:
    ``T = mean_i (y_i - m_i)^2 / s_i^2``, ``T = mean_i (y_i - m_i)^T S_i^{-1} (y_i - m_i) / d``
    and ``T = mean_i |y_i - m_i| / b_i`` (weighted means with ``sample_weight``). Mixtures have
    none (their tempered family is not ``p**(1/T)`` either): their NLL is minimised over
    ``log T`` numerically; categorical predictions use the exact Newton solver of
    :class:`TemperatureScaling`.

    Parameters
    ----------
    objective : {"nll", "skce"}, default="nll"
        ``"nll"``: the negative log-likelihood of the fitting targets.
        ``"skce"``: the squared kernel calibration error of the tempered predictions on the
        fitting data (an extension suggested by Widmann et al. 2021, Sec. 6; not an evaluated
        method), searched over ``log T`` within a factor 10 of the NLL temperature (calibration
        alone can have trivial optima far from it). The kernel's median length scales are
        computed once on the input predictions and held fixed.
    kernel : TensorProductKernel, default=None
        Kernel of the ``"skce"`` objective (see :func:`~skcalib.skce`).
    skce_estimator : {"unbiased", "block"}, default="unbiased"
        Estimator of the ``"skce"`` objective.
    block_size : int, default=2
        Block size of ``skce_estimator="block"``.
    n_mc_samples : int, default=100
        Monte-Carlo draws for families without closed-form kernel expectations (``"skce"``).
    random_state : None, int or Generator, default=None
        Seeds the Monte-Carlo draws and median subsampling of the ``"skce"`` objective; the same
        draws are used at every temperature.

    Attributes
    ----------
    temperature_ : float
    family_ : str
        Name of the distribution family seen in ``fit``.

    See Also
    --------
    TemperatureScaling : for a classifier's logits or probabilities.
    RecalibratedRegressor : cross-fitted recalibration of a regressor.

    Notes
    -----
    ``X`` is a :mod:`skcalib.distributions` object, or an array of shape ``(n_samples, 2)`` with
    the predicted means and standard deviations of a univariate Normal model (e.g.
    ``np.column_stack(gpr.predict(X, return_std=True))``); :meth:`transform` returns the same
    kind as it is given. Scales of zero (point predictions) cannot be temperature-scaled by the
    NLL: they raise a ``ValueError``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.distributions import Normal
    >>> from skcalib.recalibration import DistributionTemperatureScaling
    >>> rng = np.random.default_rng(0)
    >>> mean = rng.normal(size=5000)
    >>> y = mean + 2.0 * rng.normal(size=5000)        # the model's std 1 is half the truth
    >>> ts = DistributionTemperatureScaling().fit(Normal(mean, 1.0), y)
    >>> round(ts.temperature_, 2)                     # variance x T: T close to 4
    4.01
    >>> ts.transform(Normal(mean[:2], 1.0)).scale.round(3)
    array([2.002, 2.002])
    """

    def __init__(self, *, objective="nll", kernel=None, skce_estimator="unbiased", block_size=2,
                 n_mc_samples=100, random_state=None):
        self.objective = objective
        self.kernel = kernel
        self.skce_estimator = skce_estimator
        self.block_size = block_size
        self.n_mc_samples = n_mc_samples
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None):
        """Fit the temperature on predictions ``X`` and targets ``y``.

        Parameters
        ----------
        X : Distribution or array-like of shape (n_samples, 2)
            Predictive distributions, or Normal means and standard deviations.
        y : array-like of shape (n_samples,) or (n_samples, d)
            True targets (class labels for :class:`~skcalib.distributions.Categorical`).
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the NLL objective (not supported by ``objective="skce"``).

        Returns
        -------
        self : DistributionTemperatureScaling
        """
        from ..metrics._distribution import check_targets

        check_option(self.objective, "objective", _OBJECTIVES)
        check_option(self.skce_estimator, "skce_estimator", _SKCE_ESTIMATORS)
        check_scalar_param(self.block_size, "block_size", min_val=2)
        check_scalar_param(self.n_mc_samples, "n_mc_samples", min_val=1)
        dist, from_array = as_distribution(X)
        n = dist.n_samples
        w = check_sample_weight(sample_weight, n)
        if w is not None and self.objective == "skce":
            raise ValueError("sample_weight is not supported with objective='skce' (the SKCE "
                             "estimators are unweighted).")
        if isinstance(dist, Categorical):
            T = self._fit_categorical(dist, y, w)
        else:
            y = check_targets(y, dist, name="y")
            T = _nll_temperature(dist, y, w)
            if self.objective == "skce":
                T = self._fit_skce(dist, y, T)
        self.temperature_ = float(T)
        self.family_ = type(dist).__name__
        if not isinstance(dist, Categorical):
            self._categorical = None
        self._from_array = from_array
        if from_array:
            self.n_features_in_ = 2
        return self

    def _fit_categorical(self, dist, y, w):
        from ._classifier import TemperatureScaling

        ts = TemperatureScaling(input="proba", objective=self.objective, labels=dist.classes,
                                kernel=self.kernel, skce_estimator=self.skce_estimator,
                                block_size=self.block_size)
        self._categorical = ts.fit(dist.probs, y, sample_weight=w)
        return ts.temperature_

    def _fit_skce(self, dist, y, T_nll):
        from ..metrics._distribution import resolve_regression_kernel
        from ..metrics._kernel import skce

        rng = check_rng(self.random_state)
        k = resolve_regression_kernel(self.kernel, dist,
                                      rng if self.random_state is not None else None)
        seed = int(rng.integers(2 ** 32))

        def objective(T):
            return skce(y, dist.tempered(T), kernel=k, estimator=self.skce_estimator,
                        block_size=self.block_size, n_mc_samples=self.n_mc_samples,
                        random_state=seed)

        return minimize_log_temperature(objective, window_around(T_nll), what="SKCE")[0]

    def transform(self, X):
        """The tempered predictions, of the same kind as ``X`` (distribution or ``[mean, std]``)."""
        check_is_fitted(self)
        dist, from_array = as_distribution(X)
        out = self._temper(dist)
        return np.column_stack([out.loc, out.scale]) if from_array else out

    def predict_distribution(self, X):
        """The tempered predictions as a distribution object."""
        check_is_fitted(self)
        return self._temper(as_distribution(X)[0])

    def _temper(self, dist):
        if isinstance(dist, Categorical) and getattr(self, "_categorical", None) is not None:
            # exactly the model that was fitted (probabilities clipped at eps, as in fit)
            return Categorical(self._categorical.predict_proba(dist.probs), dist.classes)
        return dist.tempered(self.temperature_)

    def predict(self, X, return_std=False):
        """Predicted means (unchanged by the temperature) and, optionally, tempered std."""
        dist = self.predict_distribution(X)
        if isinstance(dist, Categorical):
            raise TypeError("predict is defined for real-valued predictions; use "
                            "predict_distribution (or TemperatureScaling) for class "
                            "probabilities.")
        mean = np.array(dist.mean)
        return (mean, np.sqrt(dist.variance)) if return_std else mean

    def score(self, X, y, sample_weight=None):
        """Mean log predictive density of ``y`` under the tempered predictions."""
        from ..metrics._distribution import check_targets

        dist = self.predict_distribution(X)
        if isinstance(dist, Categorical):
            raise TypeError("score is defined for real-valued predictions.")
        y = check_targets(y, dist, name="y")
        w = check_sample_weight(sample_weight, dist.n_samples)
        return float(np.average(dist.log_pdf(y), weights=w))


def _nll_temperature(dist, y, w):
    """NLL-optimal temperature: closed form, or a search over log T for mixtures."""
    if isinstance(dist, Mixture):
        return _mixture_nll_temperature(dist, y, w)
    s, k = dist._temperature_statistic(y)
    T = float(np.average(s, weights=w)) / k
    if not T > 0:
        raise ValueError("every fitting target equals its predicted mean, so the NLL has no "
                         "minimiser (the temperature would be 0).")
    return T


def _mixture_nll_temperature(dist, y, w):
    """NLL-optimal temperature of a mixture (components tempered), by a search over log T."""

    def nll(T):
        return -float(np.average(dist.tempered(T).log_pdf(y), weights=w))

    return minimize_log_temperature(nll, what="mixture NLL")[0]

