"""Temperature scaling of predictive distributions (Widmann et al. 2021, Appendix F)."""

import functools

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._expectations import check_targets
from .._problems.kernel import KernelProblem
from .._problems.kernel_resolution import as_regression_kernel
from .._problems.temperature import minimize_log_temperature, window_around
from .._sklearn_compat import check_feature_names
from .._validation import (check_bool, check_option, check_random_state_param,
                           check_sample_weight, check_scalar_param)
from ..distributions import Categorical, Mixture, MultivariateNormal, is_distribution
from ..metrics import skce
from ._checks import check_distribution_predictions, check_y_given
from ._base import check_input_features
from ._temperature import _OBJECTIVES, _SKCE_ESTIMATORS, TemperatureScaling, check_kernel_param


def family_signature(dist):
    """What must agree between the predictions of ``fit`` and of ``transform``, as a string.

    The family (``"Normal"``, ...), the dimension of a ``MultivariateNormal``, the component
    families of a ``Mixture``; the classes of a ``Categorical`` are compared separately.
    """
    name = type(dist).__name__
    if isinstance(dist, MultivariateNormal):
        return f"{name}(dim={dist.dim})"
    if isinstance(dist, Mixture):
        return f"{name}[{', '.join(family_signature(c) for c in dist.components)}]"
    return name


def pass_distributions_through_set_output(cls, returns_distribution):
    """Let ``transform`` and ``fit_transform`` return distribution objects as they are.

    scikit-learn wraps the ``transform`` of a class with ``get_feature_names_out`` so that
    ``set_output(transform="pandas")`` turns its arrays into DataFrames; a distribution object
    cannot become one. ``returns_distribution(self, X)`` says, before the call, whether the output
    will be a distribution: then the unwrapped method runs (``__wrapped__``, set by the
    ``functools.wraps`` of scikit-learn's wrapper), otherwise the wrapped one.
    """
    for method in ("transform", "fit_transform"):
        wrapped = getattr(cls, method)  # the class's own, or TransformerMixin's fit_transform
        raw = getattr(wrapped, "__wrapped__", wrapped)

        def dispatch(self, X, *args, _wrapped=wrapped, _raw=raw, **kwargs):
            f = _raw if returns_distribution(self, X) else _wrapped
            return f(self, X, *args, **kwargs)

        setattr(cls, method, functools.wraps(raw)(dispatch))
    return cls


class DistributionRecalibratorMixin:
    """What every recalibrator of predictive distributions does alike, given its
    ``predict_distribution(X)``: ``predict`` (means and standard deviations) and ``score`` (the
    mean log predictive density); ``fit_transform`` is scikit-learn's ``TransformerMixin``'s. Used by
    :class:`DistributionTemperatureScaling`, :class:`QuantileRecalibration` and
    :class:`DistributionIdentityRecalibration`."""

    #: What was fitted, for the message when ``X`` changes family ("the temperature", ...).
    _fitted_what = "the recalibrator"

    def _record_family(self, dist, from_array):
        """At fit: remember the family of the predictions (and ``n_features_in_ = 2`` for a
        ``[mean, std]`` array; a refit on distribution objects drops it)."""
        self.family_ = type(dist).__name__
        self._signature = family_signature(dist)
        if from_array:
            self.n_features_in_ = 2
        elif hasattr(self, "n_features_in_"):
            del self.n_features_in_

    def _fitted_predictions(self, X):
        """``(dist, from_array)`` of ``X`` after fit, of the family seen in ``fit``."""
        check_is_fitted(self)
        check_feature_names(self, X, reset=False)
        dist, from_array = check_distribution_predictions(X, "X")
        sig = family_signature(dist)
        if sig != self._signature:
            raise ValueError(
                f"X holds {sig} predictions but {self._fitted_what} was fitted on "
                f"{self._signature} predictions; it does not apply to another family. Fit on "
                "predictions of the family you transform.")
        return dist, from_array

    def _real_valued(self, X, what):
        dist = self.predict_distribution(X)
        if isinstance(dist, Categorical):
            raise TypeError(f"{what} is defined for real-valued predictions; use "
                            "predict_distribution for class probabilities.")
        return dist

    def predict(self, X, return_std=False):
        """Means and, optionally, standard deviations of the recalibrated predictions.

        Parameters
        ----------
        X : Distribution or array-like of shape (n_samples, 2)
            Real-valued predictions of the family seen in ``fit``.
        return_std : bool, default=False
            Also return the standard deviations.

        Returns
        -------
        mean : ndarray of shape (n_samples,) or (n_samples, d)
        std : ndarray of shape (n_samples,) or (n_samples, d)
            Only with ``return_std=True``.
        """
        check_bool(return_std, "return_std")
        dist = self._real_valued(X, "predict")
        mean = np.array(dist.mean)
        return (mean, np.sqrt(dist.variance)) if return_std else mean

    def score(self, X, y, sample_weight=None):
        """Mean log predictive density of ``y`` under the recalibrated predictions.

        Parameters
        ----------
        X : Distribution or array-like of shape (n_samples, 2)
            Real-valued predictions of the family seen in ``fit``.
        y : array-like of shape (n_samples,) or (n_samples, d)
            True targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the mean.

        Returns
        -------
        score : float
        """
        dist = self._real_valued(X, "score")
        y = check_targets(check_y_given(y), dist, name="y", pred_name="X")
        w = check_sample_weight(sample_weight, dist.n_samples, rescale=True)
        return float(np.average(dist.log_pdf(y), weights=w))


class DistributionTemperatureScaling(DistributionRecalibratorMixin, TransformerMixin,
                                     BaseEstimator):
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
    n_features_in_ : int
        2, when ``fit`` was given an array ``[mean, std]``.

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

    A temperature belongs to the family it was fitted on: :meth:`transform` (and every other
    method) raises a ``ValueError`` naming both families when given another one (a Laplace after
    fitting on Normals, a MultivariateNormal of another dimension, a Mixture of other component
    families, a Categorical with other classes).

    With ``set_output(transform="pandas")``, array input gives a DataFrame with the columns
    ``["mean", "std"]``; distribution objects are returned as they are.

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

    _fitted_what = "the temperature"

    def fit(self, X, y, sample_weight=None):
        """Fit the temperature on predictions ``X`` and targets ``y``.

        Parameters
        ----------
        X : Distribution or array-like of shape (n_samples, 2)
            Predictive distributions, or Normal means and standard deviations.
        y : array-like of shape (n_samples,) or (n_samples, d)
            True targets (class labels for :class:`~skcalib.distributions.Categorical`).
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the objective: weighted NLL, or the weighted SKCE estimate (see
            :func:`~skcalib.skce`) searched around the weighted NLL temperature.

        Returns
        -------
        self : DistributionTemperatureScaling
        """
        self._check_params()
        dist, from_array = check_distribution_predictions(X, "X")
        check_feature_names(self, X, reset=True)
        n = dist.n_samples
        w = check_sample_weight(sample_weight, n)
        if isinstance(dist, Categorical):
            T = self._fit_categorical(dist, y, w)
        else:
            as_regression_kernel(self.kernel, dist)  # a kernel of the right kind, objective or not
            y = check_targets(check_y_given(y), dist, name="y")
            # only weight ratios matter here: rescaled, 1e308 weights do not overflow
            T = _nll_temperature(dist, y, None if w is None else w / w.max())
            if self.objective == "skce":
                T = self._fit_skce(dist, y, T, w)
            self._categorical = None
        self.temperature_ = float(T)
        self._record_family(dist, from_array)
        self._from_array = from_array
        return self

    def _check_params(self):
        """Every parameter, whether or not the objective uses it."""
        check_option(self.objective, "objective", _OBJECTIVES)
        check_option(self.skce_estimator, "skce_estimator", _SKCE_ESTIMATORS)
        check_scalar_param(self.block_size, "block_size", min_val=2)
        check_scalar_param(self.n_mc_samples, "n_mc_samples", min_val=1)
        check_random_state_param(self.random_state)
        check_kernel_param(self.kernel)

    def _fit_categorical(self, dist, y, w):
        # TemperatureScaling's columns follow the sorted labels: reorder the categorical's.
        order = np.argsort(dist.classes, kind="stable")
        ts = TemperatureScaling(input="proba", objective=self.objective,
                                labels=dist.classes[order], kernel=self.kernel,
                                skce_estimator=self.skce_estimator, block_size=self.block_size)
        self._categorical = ts.fit(dist.probs[:, order], y, sample_weight=w)
        return ts.temperature_

    def _fit_skce(self, dist, y, T_nll, w=None):
        # The kernel is resolved once, on the untempered predictions; then the seed of every
        # evaluation's Monte-Carlo fallback is drawn from the same generator.
        problem = KernelProblem(y, dist, random_state=self.random_state)
        k = problem.resolve(self.kernel)
        seed = int(problem.rng.integers(2 ** 32))

        def objective(T):
            return skce(y, dist.tempered(T), kernel=k, estimator=self.skce_estimator,
                        block_size=self.block_size, n_mc_samples=self.n_mc_samples,
                        random_state=seed, sample_weight=w)

        return minimize_log_temperature(objective, window_around(T_nll), what="SKCE")[0]

    def transform(self, X):
        """The tempered predictions, of the same kind as ``X``.

        Parameters
        ----------
        X : Distribution or array-like of shape (n_samples, 2)
            Predictions of the family seen in ``fit``.

        Returns
        -------
        Distribution or ndarray of shape (n_samples, 2)
            A distribution for a distribution; ``[mean, tempered std]`` for an array (a DataFrame
            with the columns :meth:`get_feature_names_out` after
            ``set_output(transform="pandas")``).
        """
        dist, from_array = self._fitted_predictions(X)
        out = self._temper(dist)
        return np.column_stack([out.loc, out.scale]) if from_array else out

    def get_feature_names_out(self, input_features=None):
        """Columns of :meth:`transform` for array input: ``["mean", "std"]``.

        Parameters
        ----------
        input_features : array-like of str, default=None
            Names of the two input columns; only their number is checked.

        Returns
        -------
        feature_names_out : ndarray of str objects
        """
        check_is_fitted(self)
        if self._signature != "Normal":
            raise ValueError(f"transform returns {self.family_} distributions (the family seen "
                             "in fit), which have no column names; only Normal predictions "
                             "given as [mean, std] arrays do.")
        check_input_features(input_features, 2)
        return np.asarray(["mean", "std"], dtype=object)

    def predict_distribution(self, X):
        """The tempered predictions as a distribution object.

        Parameters
        ----------
        X : Distribution or array-like of shape (n_samples, 2)
            Predictions of the family seen in ``fit``.

        Returns
        -------
        Distribution
        """
        return self._temper(self._fitted_predictions(X)[0])

    def _check_family(self, dist):
        if isinstance(dist, Categorical):
            fitted = self._categorical.classes_
            if not np.array_equal(np.sort(dist.classes), fitted):
                raise ValueError(
                    f"X is a Categorical with classes {dist.classes.tolist()[:10]} but the "
                    f"temperature was fitted on the classes {fitted.tolist()[:10]}.")

    def _temper(self, dist):
        self._check_family(dist)
        if isinstance(dist, Categorical):
            # exactly the model that was fitted (probabilities clipped at eps, as in fit), on
            # columns in sorted label order, returned in the order of X's classes
            order = np.argsort(dist.classes, kind="stable")
            P = np.empty(dist.probs.shape)
            P[:, order] = self._categorical.predict_proba(dist.probs[:, order])
            return Categorical(P, dist.classes)
        return dist.tempered(self.temperature_)

def _has_tempered_form(d):
    """Whether temperature scaling maps the family of ``d`` into itself with a closed-form NLL
    optimum (a family with ``tempered`` and ``_temperature_statistic``: Normal, Laplace,
    MultivariateNormal; ``Categorical`` is fitted by :class:`TemperatureScaling`)."""
    return callable(getattr(type(d), "_temperature_statistic", None))


def _check_temperable(dist):
    """A ``TypeError`` naming ``X`` for a family without a tempered form (a ``Recalibrated``
    from :class:`QuantileRecalibration`, or a mixture holding one)."""
    families = [dist]
    while families:
        d = families.pop()
        if isinstance(d, Mixture):
            families.extend(d.components)
        elif not _has_tempered_form(d):
            raise TypeError(
                f"X holds {family_signature(dist)} predictions, which temperature scaling does "
                f"not support ({type(d).__name__} has no tempered form); "
                "DistributionTemperatureScaling takes Normal, Laplace and MultivariateNormal "
                "predictions, Mixtures of them, Categorical probabilities, or an (n_samples, 2) "
                "array [mean, std]. To combine it with QuantileRecalibration, temper first and "
                "quantile-recalibrate the tempered predictions.")


def _nll_temperature(dist, y, w):
    """NLL-optimal temperature: closed form, or a search over log T for mixtures.

    A temperature that overflows or underflows float64 (predicted scales of 1e-300 or 1e300
    against residuals of order 1, say) is a ``ValueError`` about the data, raised here rather
    than by ``tempered`` at prediction time.
    """
    _check_temperable(dist)
    if isinstance(dist, Mixture):
        return _mixture_nll_temperature(dist, y, w)
    scale = getattr(dist, "scale", None)
    if scale is not None and np.any(np.asarray(scale) <= 0):
        i = int(np.flatnonzero(np.broadcast_to(scale, (dist.n_samples,)) <= 0)[0])
        raise ValueError(
            f"X: temperature scaling needs scale > 0 (a positive standard deviation) in every "
            f"row; row {i} has scale 0, a point prediction, whose density (and so the NLL) is not "
            "defined. Drop such rows, or give them a positive scale.")
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        s, k = dist._temperature_statistic(y)
        resid = np.abs(y - dist.mean)
        if w is not None:  # zero-weight rows (with a possibly infinite statistic) do not count
            s, resid, w = s[w > 0], resid[w > 0], w[w > 0]
        T = float(np.average(s, weights=w)) / k
    if np.isfinite(T) and T >= np.finfo(np.float64).tiny:
        return T
    if not np.any(resid > 0):
        raise ValueError("every fitting target equals its predicted mean, so the NLL has no "
                         "minimiser (the temperature would be 0).")
    if isinstance(dist, MultivariateNormal):
        scale = np.sqrt(np.diagonal(dist.cov, axis1=1, axis2=2))
    else:
        scale = np.asarray(dist.scale, dtype=np.float64)
    statistic = ("the mean squared standardised residual ((y - mean) / scale)**2"
                 if type(dist).__name__ != "Laplace" else
                 "the mean standardised residual |y - mean| / scale")
    if np.isfinite(T):
        raise ValueError(
            f"X and y: the NLL-optimal temperature, {statistic}, underflows float64: the "
            f"targets lie at most {float(resid.max()):.3g} from the predicted means while the "
            f"predicted scales are as large as {float(scale.max()):.3g}. The predictions' "
            "scales and y are in different units (or the model's uncertainties are off by a "
            "factor beyond 1e150): rescale them.")
    raise ValueError(
        f"X and y: the NLL-optimal temperature, {statistic}, overflows float64: the targets "
        f"lie up to {float(resid.max()):.3g} from the predicted means while the predicted "
        f"scales are as small as {float(scale.min()):.3g}. The predictions' scales and y are "
        "in different units (or the model's uncertainties are off by a factor beyond 1e150): "
        "rescale them.")


def _mixture_nll_temperature(dist, y, w):
    """NLL-optimal temperature of a mixture (components tempered), by a search over log T."""

    def nll(T):
        # non-finite values (densities that overflow at extreme scales) are skipped by the search
        with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
            return -float(np.average(dist.tempered(T).log_pdf(y), weights=w))

    return minimize_log_temperature(
        nll, what="NLL of the Mixture predictions X at the targets y")[0]



pass_distributions_through_set_output(
    DistributionTemperatureScaling, lambda self, X: is_distribution(X))
