"""Temperature scaling of a classifier's scores (Guo et al. 2017), as an estimator."""

import numpy as np
from scipy.special import softmax
from sklearn.utils.validation import check_is_fitted

from .._problems.kernel_resolution import as_tensor_kernel, resolve_kernel
from .._problems.temperature import (minimize_log_temperature, nll_inverse_temperature,
                                    window_around)
from .._validation import check_option, check_scalar_param
from ..kernels import Kernel
from ..metrics import skce
from ._base import LogitMapRecalibrator

_OBJECTIVES = ("nll", "skce")
_SKCE_ESTIMATORS = ("unbiased", "block")

#: Logits whose range (largest minus smallest) is outside this interval are rescaled to range 1
#: for the temperature search (the fitted temperature is scaled back).
_SPREAD_RANGE = (1e-8, 1e8)


def check_kernel_param(kernel, name="kernel"):
    """``kernel`` is None or a skcalib kernel (checked at ``fit`` whatever the objective)."""
    if kernel is not None and not isinstance(kernel, Kernel):
        raise TypeError(f"{name} must be None or a skcalib kernel (skcalib.kernels); got "
                        f"{kernel!r} of type {type(kernel).__name__}.")
    return kernel


class TemperatureScaling(LogitMapRecalibrator):
    """Temperature scaling of a classifier's logits or probabilities: ``softmax(logits / T)``.

    ``X`` holds the scores of a fitted classifier, one column per class of ``classes_`` (in
    sorted order, as ``predict_proba`` and ``decision_function`` return them), or one column for
    a binary problem (the log-odds or the probability of the positive class, ``classes_[1]``).
    ``fit`` learns one temperature ``T``; ``predict_proba`` returns ``softmax(logits / T)``.
    Dividing every logit by the same positive number keeps their order, so the arg-max -- the
    predicted class and the accuracy -- never changes.

    The default objective is the (sample-weighted) negative log-likelihood of the fitting labels.
    It is convex in the inverse temperature ``beta = 1 / T``, with derivative
    ``sum_i w_i (E_i[l] - l_{i,y_i})`` and second derivative ``sum_i w_i Var_i[l]`` (moments of the
    logits under the recalibrated probabilities). ``fit`` solves it as the one-dimensional convex
    problem it is -- Newton's method inside a bracket of the root of the derivative, started from
    the optimum on a subsample for large ``n`` -- to the exact optimum (1e-10 relative or better),
    in three or four passes over the data.

    **Separated fitting data.** When every fitting sample's label has the largest score, the NLL
    has no minimiser: it keeps falling as ``T -> 0``, and the maximum-likelihood model would be
    certain of every prediction (one error on new data then costs ``margin / T``, unbounded).
    ``fit`` then sets ``T`` so that the mean top-label confidence on the fitting data equals
    Laplace's estimate of the accuracy after ``n`` correct predictions out of ``n``,
    ``(n + 1) / (n + 2)`` (``n``: the sum of ``sample_weight``, so that integer weights count as
    repetitions), and
    issues a ``ConvergenceWarning`` saying so. This calibrates the model in the mean and depends
    only on the fitting data (not on the scale of the logits); fitting on more held-out data
    (e.g. cross-fitted by :class:`RecalibratedClassifier`) is the remedy the warning suggests.
    Scores that carry no information about the labels (the NLL is smallest for uniform
    probabilities) give ``T = 1e10`` with a ``ConvergenceWarning``.

    **Extreme logits.** Logits whose range (largest minus smallest) exceeds 1e8 or is below 1e-8
    (logits of 1e300 or 1e-300) are divided by that range for the search, which gives the same
    optimum (``T`` is scaled back); the bounds of the search scale with them. Logits whose
    differences overflow float64 are refused, naming ``X``.

    Parameters
    ----------
    input : {"auto", "logits", "proba"}, default="auto"
        What ``X`` holds. ``"logits"``: real scores (``decision_function`` output; a binary 1-D
        score is the log-odds of ``classes_[1]``). ``"proba"``: probabilities, turned into logits
        ``log(clip(p, eps, 1))``. ``"auto"``: probabilities if every value is in ``[0, 1]`` and
        (for several columns) every row sums to one, logits otherwise; the decision is stored in
        ``input_``. Pass the kind explicitly when you know it: ``"auto"`` warns when at most
        10% of the rows (values, for 1-D scores) keep ``X`` from being probabilities, since a few
        corrupted probabilities would otherwise turn every score into a logit. Rows must sum to
        one within ``sqrt(eps)`` of the input dtype (1.5e-8 for float64, 3.5e-4 for float32,
        3.1e-2 for float16), as for the metrics.
    objective : {"nll", "skce"}, default="nll"
        ``"nll"``: the negative log-likelihood (Guo et al. 2017), solved exactly.
        ``"skce"``: the squared kernel calibration error of the recalibrated probabilities on the
        fitting data (an extension suggested by Widmann et al. 2021, Sec. 6, not an evaluated
        method). Calibration alone has a trivial optimum -- as ``T`` grows the predictions tend to
        the uniform distribution, which is calibrated when the classes are balanced -- so
        ``log T`` is searched on a grid within a factor 10 of the NLL temperature and refined by
        bounded Brent. The kernel's median length scale is computed once, on the input
        probabilities, and held fixed during the search.
    labels : array-like, default=None
        All class labels, one per column of ``X``, when some are absent from the fitting ``y``
        (the ``labels`` of the metrics and of :func:`sklearn.metrics.log_loss`). Default: the
        labels present in ``y``.
    eps : float, default=1e-12
        Probabilities are clipped to ``[eps, 1]`` before taking logarithms (an exact 0 would make
        the NLL infinite). Only used for probability input.
    kernel : Kernel or TensorProductKernel, default=None
        Kernel of the ``"skce"`` objective (see :func:`~skcalib.skce`).
    skce_estimator : {"unbiased", "block"}, default="unbiased"
        Estimator of the ``"skce"`` objective: the quadratic-time U-statistic, or the block
        estimator with ``block_size`` (linear time; for large fitting sets).
    block_size : int, default=2
        Block size of ``skce_estimator="block"``.

    Attributes
    ----------
    temperature_ : float
        The fitted temperature ``T``.
    inverse_temperature_ : float
        ``1 / T`` (scikit-learn's ``beta_``).
    classes_ : ndarray of shape (n_classes,)
    input_ : str
        ``"logits"`` or ``"proba"``: the kind of ``X`` seen in ``fit``.
    n_features_in_ : int
        Number of score columns (1 for 1-D binary scores).
    n_iter_ : int
        Newton iterations on all samples (0 for the ``"skce"`` objective).

    See Also
    --------
    DistributionTemperatureScaling : the same for predictive distributions of regressors.
    RecalibratedClassifier : cross-fitted recalibration of a classifier.
    sklearn.calibration.CalibratedClassifierCV : ``method="temperature"`` (scikit-learn >= 1.8).

    Notes
    -----
    scikit-learn turns a binary 1-D decision function ``z`` into the logits ``(-z, z)``, so that its
    ``beta_`` is half of ``inverse_temperature_`` here (``sigmoid(2 beta z)`` there,
    ``sigmoid(beta z)`` here); the recalibrated probabilities agree.

    References
    ----------
    C. Guo, G. Pleiss, Y. Sun, K. Q. Weinberger. On calibration of modern neural networks.
    ICML 2017.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.recalibration import TemperatureScaling
    >>> rng = np.random.default_rng(0)
    >>> logits = 3.0 * rng.normal(size=(2000, 4))
    >>> P = np.exp(logits / 3.0)                       # the truth is softmax(logits / 3)
    >>> P /= P.sum(axis=1, keepdims=True)
    >>> y = (rng.random((2000, 1)) > P.cumsum(axis=1)).sum(axis=1)
    >>> ts = TemperatureScaling().fit(logits, y)
    >>> round(ts.temperature_, 1)
    2.9
    >>> bool(np.all(ts.predict(logits) == logits.argmax(axis=1)))
    True
    """

    def __init__(self, input="auto", *, objective="nll", labels=None, eps=1e-12, kernel=None,
                 skce_estimator="unbiased", block_size=2):
        self.input = input
        self.objective = objective
        self.labels = labels
        self.eps = eps
        self.kernel = kernel
        self.skce_estimator = skce_estimator
        self.block_size = block_size

    # -- validation ------------------------------------------------------------------------

    def _check_own_params(self):
        """Every parameter, whether or not the objective uses it."""
        check_option(self.objective, "objective", _OBJECTIVES)
        check_option(self.skce_estimator, "skce_estimator", _SKCE_ESTIMATORS)
        check_scalar_param(self.block_size, "block_size", min_val=2)
        as_tensor_kernel(check_kernel_param(self.kernel))  # a kernel on probabilities

    # -- fitting ---------------------------------------------------------------------------

    def fit(self, X, y, sample_weight=None):
        """Fit the temperature on scores ``X`` and labels ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Logits or probabilities of a fitted classifier (see ``input``).
        y : array-like of shape (n_samples,)
            True labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the objective: weighted NLL, or the weighted SKCE estimate (see
            :func:`~skcalib.skce`) searched around the weighted NLL temperature.

        Returns
        -------
        self : TemperatureScaling
        """
        S, kind, L, classes, y_idx, w = self._validate_fit(X, y, sample_weight)
        n = S.shape[0]
        # logits whose range is far from 1 (1e300 or 1e-300) are solved for on L / s: the NLL of
        # softmax(beta L) is that of softmax((beta s) (L / s)), and the bracketed Newton search
        # and its bounds are made for inverse temperatures of moderate size
        spread = float(L.max() - L.min())
        s = spread if (spread > _SPREAD_RANGE[1] or 0 < spread < _SPREAD_RANGE[0]) else 1.0
        L_fit = L / s if s != 1.0 else L
        if self.objective == "nll":
            if w is None:
                weights, n_samples = np.ones(n), float(n)
            else:
                # The optimum depends on weight ratios only (rescaled: no overflow for 1e308);
                # separated data also use their sum, the number of samples they stand for.
                top = float(w.max())
                weights = w / top
                n_samples = top * float(weights.sum())  # a Python float: inf, not a warning
            beta, self.n_iter_ = nll_inverse_temperature(L_fit, y_idx, weights,
                                                         n_samples=n_samples)
            beta = float(beta) / s
        else:
            # the weighted SKCE (weighted U- or block statistic) within a window of the weighted
            # NLL temperature; only weight ratios matter
            weights = np.ones(n) if w is None else w / w.max()
            beta_nll, _ = nll_inverse_temperature(L_fit, y_idx, weights)
            T, _ = _fit_skce_temperature(L, y_idx, classes.size, self.kernel,
                                         self.skce_estimator, self.block_size, s / beta_nll,
                                         sample_weight=None if w is None else weights)
            beta, self.n_iter_ = 1.0 / T, 0
        if s != 1.0:
            # a bound of the search (no information: BETA_MIN; separated data: BETA_MAX) scaled
            # by 1e300 can leave float64: keep T and 1 / T finite (the probabilities are then
            # uniform or certain, as at the bound)
            info = np.finfo(np.float64)
            beta = min(max(float(beta), float(info.tiny)), float(info.max))
        self._set_fitted(S, kind, classes)
        self.inverse_temperature_ = float(beta)
        self.temperature_ = float(1.0 / beta)
        return self

    # -- prediction ------------------------------------------------------------------------

    def _logits(self, L):
        """The recalibrated logits ``L / T``."""
        return L * self.inverse_temperature_

    def predict(self, X):
        """The arg-max class of the scores, which temperature scaling never changes.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Scores of the kind seen in ``fit``.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        _, _, L = self._scores(X, fitting=False)
        return self.classes_[L.argmax(axis=1)]


def _fit_skce_temperature(L, y_idx, n_classes, kernel, estimator, block_size, T_nll,
                          sample_weight=None):
    """Temperature minimising the SKCE of ``softmax(L / T)`` within a factor 10 of ``T_nll``.

    The kernel is resolved (median heuristic) once, on the probabilities at ``T = 1``.
    """
    labels = np.arange(n_classes)
    P1 = softmax(L, axis=1)
    k = resolve_kernel(kernel, P1)

    def objective(T):
        return skce(y_idx, softmax(L / T, axis=1), kernel=k, estimator=estimator,
                    block_size=block_size, labels=labels, sample_weight=sample_weight)

    return minimize_log_temperature(objective, window_around(T_nll), what="SKCE")
