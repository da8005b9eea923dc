"""Classification: the Dirichlet models of Widmann et al. (2019)."""

import math

import numpy as np

from .._validation import check_rng, check_scalar_param
from ._common import _categorical, _check_real_positive, _dirichlet_log_probabilities

_DIRICHLET_TARGETS = ("first", "uniform")


def _check_dirichlet_target(target, m):
    """``target`` ("first", "uniform" or a probability vector of length ``m``) -> ``beta``."""
    if isinstance(target, str):
        if target not in _DIRICHLET_TARGETS:
            raise ValueError(f"target must be 'first', 'uniform' or an array of {m} "
                             f"probabilities; got {target!r}.")
        if target == "first":
            beta = np.zeros(m)
            beta[0] = 1.0
            return beta
        return np.full(m, 1.0 / m)
    try:
        beta = np.array(target, dtype=np.float64)  # a copy: the input is never modified
    except (TypeError, ValueError):
        raise TypeError(f"target must be 'first', 'uniform' or an array of {m} probabilities; "
                        f"got {target!r}.") from None
    if beta.shape != (m,):
        raise ValueError(f"target must have shape ({m},) (n_classes); got shape {beta.shape}.")
    if not np.all(np.isfinite(beta)) or np.any(beta < 0):
        raise ValueError("target must contain finite, non-negative probabilities.")
    if abs(math.fsum(beta) - 1.0) > 1e-8:
        raise ValueError(f"target must sum to 1; its entries sum to {math.fsum(beta)!r}.")
    return beta / math.fsum(beta)


def make_dirichlet_predictions(n_samples=250, n_classes=10, *, concentration=0.1,
                               miscalibration=0.0, target="first", random_state=None):
    """Dirichlet predictions and labels of the generative models of Widmann et al. (2019).

    Each prediction is ``g ~ Dir(concentration * 1_m)``. With probability ``pi =
    miscalibration`` the label is drawn from ``Categorical(beta)``, otherwise from
    ``Categorical(g)``: ``P(Y = y | g) = pi * beta_y + (1 - pi) * g_y``, so the model is
    calibrated if and only if ``pi = 0`` (or ``g = beta``). The paper's three models, with
    ``n_samples=250``, ``n_classes=10`` and ``concentration=0.1``, are

    * **M1** (calibrated): ``miscalibration=0``;
    * **M2**: ``miscalibration=0.5``, ``target="first"`` (``beta = e_1``);
    * **M3**: ``miscalibration=1``, ``target="uniform"`` (``beta = 1/m``).

    Parameters
    ----------
    n_samples : int, default=250
        Number of samples, ``>= 1`` (the paper's 250).
    n_classes : int, default=10
        Number of classes ``m >= 2`` (the paper's 10).
    concentration : float, default=0.1
        Concentration ``alpha > 0`` of the symmetric Dirichlet distribution of the predictions
        (the paper's 0.1; ``1`` gives uniform predictions).
    miscalibration : float, default=0.0
        Probability ``pi`` in ``[0, 1]`` that a label is drawn from ``Categorical(beta)`` instead
        of from the prediction.
    target : {"first", "uniform"} or array-like of shape (n_classes,), default="first"
        The label distribution ``beta`` of the miscalibrated part: ``e_1`` (always class 0),
        uniform, or given probabilities (non-negative, summing to 1).
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState, default=None
        Seed or generator of the draws.

    Returns
    -------
    y_proba : ndarray of shape (n_samples, n_classes)
        The predictions ``g``; rows sum to one.
    y : ndarray of shape (n_samples,)
        Labels in ``0, ..., n_classes - 1``.

    See Also
    --------
    make_dirichlet_calibration : The simulation of Gruber & Bach (known calibration function).
    make_gaussian_predictions : The Gaussian regression models of Widmann et al. (2021).

    Notes
    -----
    The label is drawn in one step from ``Categorical(pi * beta + (1 - pi) * g)`` (inverse CDF of
    one uniform per sample), which has the law of the paper's two-step draw.

    The predictions are sampled in log space as in :func:`make_dirichlet_calibration`, so that
    small concentrations do not give rows of exact zeros (which
    ``numpy.random.Generator.dirichlet`` can return). The draws are, in this order, the
    ``n_samples x n_classes`` gamma variables, the ``n_samples x n_classes`` uniforms of the
    predictions and one uniform per sample for the label.

    The paper's analytic ECE (total variation) of the model is ``pi (m - 1) / m`` for
    ``beta = e_1`` (M2: 0.45) and 0.7106418012 for M3; its squared kernel calibration errors
    (exponential kernel on the TV distance with the median heuristic) are about 0.0963 (M2) and
    0.0151 (M3).

    References
    ----------
    D. Widmann, F. Lindsten, D. Zachariah. Calibration tests in multi-class classification: a
    unifying framework. NeurIPS 2019, Section 7 and Appendix J.2.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.datasets import make_dirichlet_predictions
    >>> y_proba, y = make_dirichlet_predictions(random_state=0)  # M1: calibrated
    >>> y_proba.shape, y.shape
    ((250, 10), (250,))
    >>> bool(np.allclose(y_proba.sum(axis=1), 1.0))
    True
    >>> _, y = make_dirichlet_predictions(100_000, miscalibration=0.5, random_state=0)  # M2
    >>> round(float(np.mean(y == 0)), 2)  # 0.5 * 1 + 0.5 * 1/10
    0.55
    """
    check_scalar_param(n_samples, "n_samples", min_val=1)
    check_scalar_param(n_classes, "n_classes", min_val=2)
    concentration = _check_real_positive(concentration, "concentration")
    check_scalar_param(miscalibration, "miscalibration", kind="real", min_val=0.0, max_val=1.0)
    pi = float(miscalibration)
    n, m = int(n_samples), int(n_classes)
    beta = _check_dirichlet_target(target, m)
    rng = check_rng(random_state)
    g = np.exp(_dirichlet_log_probabilities(rng, n, m, concentration))
    g /= g.sum(axis=1, keepdims=True)
    y = _categorical(rng, pi * beta[None, :] + (1.0 - pi) * g)
    return g, y
