"""Parametric calibration estimation functions: a recalibration map as a plug-in, and ``h = 0``."""

import numpy as np
from scipy.special import softmax

from .._problems.temperature import (LOG_T_GRID, minimize_log_temperature,
                                    nll_inverse_temperature, scores_to_logits)
from .._validation import check_option, check_scalar_param, top_label
from .._problems.modes import make_problems
from ._base import _CalibrationEstimatorBase, _Data, _risk_sum


def _plugin_problem_residuals(P, G, classes, mode):
    """Per-problem residuals ``q - g`` where ``g`` is a recalibrated probability matrix ``G``.

    The inputs ``q`` are those of ``mode`` on ``P``; ``g`` takes the matching entries of ``G``
    (the recalibrated probability of the predicted class for ``top_label``).
    """
    n = P.shape[0]
    out = []
    if mode == "top_label":
        Q, shares = top_label(P)
        return [(Q - np.einsum("ij,ij->i", shares, G))[:, None]]
    for Q, _ in make_problems(_Data(P, np.zeros(n, dtype=np.intp), classes), mode):
        if mode == "binary":
            out.append(Q - G[:, 1:2])
        elif mode == "classwise":
            k = len(out)
            out.append(Q - G[:, k:k + 1])
        else:
            out.append(Q - G)
    return out


class TemperatureCalibrationEstimator(_CalibrationEstimatorBase):
    """Plug-in estimation function of temperature scaling, ``g_T(p) = softmax(log p / T)``.

    ``h_T(p, p') = <p - g_T(p), p' - g_T(p')>`` (in the inputs of the notion ``mode``; Gruber &
    Bach, Remark in Sec. 3.1 and Sec. 5.1): the calibration error is estimated as the distance
    between the model and its temperature-scaled version. With ``temperature=None`` the
    temperature is fitted on the training data, by the NLL (exactly, with the solver of
    :class:`skcalib.recalibration.TemperatureScaling`) or by the empirical calibration
    estimation risk; a number fixes it (no fitting).

    The paper's simulation family ``h_sim(theta)`` uses ``softmax((10/3) theta log p)``: it is
    ``temperature = 0.3 / theta``.

    Parameters
    ----------
    temperature : float, default=None
        Fixed temperature, or None to fit it.
    fit_method : {"nll", "risk"}, default="nll"
        How ``temperature=None`` is fitted: the NLL of the training labels, or the U-statistic
        risk on the training data (a search over ``log T``).
    mode : {"auto", "binary", "top_label", "classwise", "canonical"}, default="auto"
    eps : float, default=1e-12
        Probabilities are clipped to ``[eps, 1]`` before the logarithm.
    labels : array-like, default=None
        All class labels, one per column of ``X`` (default: the labels present in ``y``); needed
        when a training set lacks a class.

    Attributes
    ----------
    temperature_ : float
    classes_ : ndarray
    mode_ : str
    n_train_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.estimation import TemperatureCalibrationEstimator
    >>> P = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1]])
    >>> est = TemperatureCalibrationEstimator(temperature=1.0, labels=[0, 1, 2]).fit(P, [0, 1])
    >>> bool(est.calibration_error(P) < 1e-30)          # T = 1 maps p to itself
    True
    """

    def __init__(self, temperature=None, *, fit_method="nll", mode="auto", eps=1e-12, labels=None):
        self.temperature = temperature
        self.fit_method = fit_method
        self.mode = mode
        self.labels = labels
        self.eps = eps

    def _check_params(self):
        super()._check_params()
        check_scalar_param(self.temperature, "temperature", kind="real", min_val=0,
                           include_min=False, allow_none=True)
        check_option(self.fit_method, "fit_method", ("nll", "risk"))
        check_scalar_param(self.eps, "eps", kind="real", min_val=0, include_min=False,
                           max_val=0.5)

    def _fit(self, P, y_idx, problems):
        L = self._logits(P)
        if self.temperature is not None:
            T = float(self.temperature)
        elif self.fit_method == "nll":
            T = 1.0 / nll_inverse_temperature(L, y_idx, np.ones(P.shape[0]))[0]
        else:
            residuals = [R for _, R in problems]

            def risk(T):
                G = softmax(L / T, axis=1)
                return sum(_risk_sum(R, None, plugin=Rh) for R, Rh in zip(
                    residuals, _plugin_problem_residuals(P, G, self.classes_, self.mode_)))

            T = minimize_log_temperature(risk, LOG_T_GRID, what="training risk")[0]
        self.temperature_ = T
        self.problems_ = [None] * len(problems)

    def _logits(self, P):
        """``log(clip(p, eps, 1))``: the logits TemperatureScaling uses for probabilities."""
        return scores_to_logits(P, "proba", self.eps)

    def _problem_inputs(self, P):
        G = softmax(self._logits(P) / self.temperature_, axis=1)
        return _plugin_problem_residuals(P, G, self.classes_, self.mode_)

    def _residual_problem(self, k, residuals):
        return residuals


class ZeroCalibrationEstimator(_CalibrationEstimatorBase):
    """The estimation function ``h = 0`` ("the model is calibrated"): a baseline for the risk.

    Its risk is the mean squared pair target; an estimation function that does not beat it has
    learnt nothing about the calibration of the model.

    Parameters
    ----------
    mode : {"auto", "binary", "top_label", "classwise", "canonical"}, default="auto"
    labels : array-like, default=None
        All class labels, one per column of ``X`` (default: the labels present in ``y``); needed
        when a training set lacks a class.

    Examples
    --------
    >>> from skcalib.estimation import ZeroCalibrationEstimator
    >>> ZeroCalibrationEstimator().fit([[0.9, 0.1], [0.2, 0.8]], [0, 0]).calibration_error(
    ...     [[0.5, 0.5]])
    0.0
    """

    def __init__(self, *, mode="auto", labels=None):
        self.mode = mode
        self.labels = labels

    def _fit_problems(self, problems):
        self.problems_ = [R.shape[1] for _, R in problems]

    def _residual_problem(self, k, Q):
        return np.zeros((Q.shape[0], self.problems_[k]))


__all__ = ["TemperatureCalibrationEstimator", "ZeroCalibrationEstimator"]
