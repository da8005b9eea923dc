"""The kernel-density estimation function ``h_kde`` (Popordanoska et al. 2022; Gruber & Bach Eq. 25)."""

import numpy as np
from scipy.special import gammaln

from .._validation import check_scalar_param
from ._base import _CalibrationEstimatorBase

_TINY = np.finfo(np.float64).tiny
#: Pair entries per tile of the query x training log-kernel matrix.
_TILE_ENTRIES = 2 ** 21


def _simplex_points(Q):
    """Scalar inputs ``c`` as the Beta-kernel points ``(c, 1 - c)``; vectors unchanged."""
    return np.column_stack([Q[:, 0], 1.0 - Q[:, 0]]) if Q.shape[1] == 1 else Q


class KDECalibrationEstimator(_CalibrationEstimatorBase):
    """Kernel-density (Nadaraya-Watson) calibration estimation function.

    ``pi(p)`` is estimated by a kernel-weighted mean of the training labels,
    ``pi_hat(p) = sum_i w_i(p) t_i`` with ``w_i(p)`` proportional to the Dirichlet density with
    concentration ``alpha_i = p_i / bandwidth + 1`` (centred on training point ``i``) evaluated at
    ``p`` -- a Beta density for scalar problems (top-label, binary, each class of class-wise) and a
    Dirichlet density for the canonical notion (Popordanoska et al. 2022; the orientation of their
    reference code, which Gruber & Bach used). The estimation function is the plug-in
    ``h_kde(p, p') = <p - pi_hat(p), p' - pi_hat(p')>`` (Gruber & Bach, Eq. 25); its diagonal is
    ``>= 0``.

    The kernel weights are computed in log space (``log w_i(p) = sum_k (alpha_ik - 1) log p_k -
    log B(alpha_i)``, normalised with a log-sum-exp), with probabilities floored at the smallest
    positive double, so that exact zeros and ones give finite weights: the estimator never returns
    NaN. The training points are not excluded from their own estimate: evaluate on held-out data.

    Parameters
    ----------
    bandwidth : float, default=0.1
        Kernel bandwidth ``b > 0``. The paper's grid is ``logspace(-5, -1, 15)`` and
        ``0.2, 0.4, ..., 1.0``.
    mode : {"auto", "binary", "top_label", "classwise", "canonical"}, default="auto"
    labels : array-like, default=None
        All class labels, one per column of ``X`` (default: the labels present in ``y``); needed
        when a training set lacks a class.

    Attributes
    ----------
    classes_ : ndarray
    mode_ : str
    n_train_ : int
    problems_ : list
        Per problem: the training points, their log normalisers and label targets.

    References
    ----------
    T. Popordanoska, R. Sayer, M. Blaschko. A consistent and differentiable Lp canonical
    calibration error estimator. NeurIPS 2022.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.estimation import KDECalibrationEstimator
    >>> rng = np.random.default_rng(0)
    >>> P = rng.dirichlet(np.ones(3), size=400)
    >>> y = (rng.random((400, 1)) > P.cumsum(axis=1)).sum(axis=1)   # calibrated labels
    >>> est = KDECalibrationEstimator(bandwidth=0.1, mode="canonical").fit(P[:200], y[:200])
    >>> est.transform(P[200:]).shape
    (200, 1)
    """

    def __init__(self, bandwidth=0.1, *, mode="auto", labels=None):
        self.bandwidth = bandwidth
        self.mode = mode
        self.labels = labels

    def _check_params(self):
        super()._check_params()
        check_scalar_param(self.bandwidth, "bandwidth", kind="real", min_val=0,
                           include_min=False)

    def _fit_problems(self, problems):
        b = float(self.bandwidth)
        states = []
        for Q, R in problems:
            X = _simplex_points(Q)
            A = X / b + 1.0
            log_norm = gammaln(A).sum(axis=1) - gammaln(A.sum(axis=1))
            states.append({"coef": (X / b).T.copy(), "log_norm": log_norm, "targets": Q - R})
        self.problems_ = states

    def _residual_problem(self, k, Q):
        return self._smooth(k, Q)[0]

    def _residual_terms(self, k, Q):
        return self._smooth(k, Q, square=True)

    def _smooth(self, k, Q, square=False):
        """``(g_hat, sq)`` at the inputs ``Q``; ``sq`` (only with ``square``) is the U-statistic
        square ``sum_{a != b} w_a w_b x_a . x_b / sum_{a != b} w_a w_b`` of
        ``g_hat(q) = sum_a w_a x_a``, ``x_a = q - t_a`` (Nadaraya-Watson weights ``w``)."""
        st = self.problems_[k]
        logX = np.log(np.maximum(_simplex_points(Q), _TINY))
        T = st["targets"]
        n_train = st["log_norm"].shape[0]
        out = np.empty((Q.shape[0], T.shape[1]))
        sq = np.empty(Q.shape[0]) if square else None
        t2 = np.einsum("ij,ij->i", T, T) if square else None
        step = max(1, _TILE_ENTRIES // max(n_train, 1))
        for lo in range(0, Q.shape[0], step):
            hi = min(Q.shape[0], lo + step)
            L = logX[lo:hi] @ st["coef"]
            L -= st["log_norm"]
            L -= L.max(axis=1, keepdims=True)
            np.exp(L, out=L)
            L /= L.sum(axis=1, keepdims=True)
            G = Q[lo:hi] - L @ T
            out[lo:hi] = G
            if square:
                q = Q[lo:hi]
                L *= L
                w2 = L.sum(axis=1)
                # sum_a w_a^2 ||q - t_a||^2
                own = (np.einsum("ij,ij->i", q, q) * w2 - 2.0 * np.einsum("ij,ij->i", q, L @ T)
                       + L @ t2)
                with np.errstate(divide="ignore", invalid="ignore"):
                    s = (np.einsum("ij,ij->i", G, G) - own) / (1.0 - w2)
                # all the weight on one training sample: no pair of distinct samples, 0 as the
                # binning's one-sample bins
                sq[lo:hi] = np.where(w2 < 1.0 - 1e-8, s, 0.0)
        return out, sq
