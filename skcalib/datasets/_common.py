"""Checks and draws shared by the generators of :mod:`skcalib.datasets`.

``_check_bool`` and ``_check_real_positive`` (parameter checks), ``_dirichlet_log_probabilities``
(Dirichlet draws in log space) and ``_categorical`` (one label per row of a probability matrix).
"""

import numpy as np

from .._validation import check_scalar_param


def _check_bool(value, name):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool; got {value!r} of type {type(value).__name__}.")
    return bool(value)


def _check_real_positive(value, name):
    check_scalar_param(value, name, kind="real", min_val=0.0, include_min=False)
    return float(value)


def _dirichlet_log_probabilities(rng, n, d, concentration):
    """``log P`` for ``n`` draws of ``Dir(concentration * 1_d)``, sampled in log space.

    ``log G = log Gamma(a + 1) + log(U) / a`` is the logarithm of a ``Gamma(a)`` variable
    (Marsaglia & Tsang's boosting), with ``U ~ U(0, 1]``; ``log P = log G - logsumexp(log G)``.
    """
    with np.errstate(all="ignore"):
        log_g = np.log(rng.standard_gamma(concentration + 1.0, size=(n, d)))
        log_g += np.log(1.0 - rng.random((n, d))) / concentration  # 1 - U in (0, 1]
        top = log_g.max(axis=1, keepdims=True)
        log_p = log_g - (top + np.log(np.exp(log_g - top).sum(axis=1, keepdims=True)))
    if not np.all(np.isfinite(log_p)):
        raise ValueError(f"concentration={concentration!r} is too small: the log-probabilities "
                         "overflow in float64.")
    return log_p


def _categorical(rng, P):
    """One label per row of the probability matrix ``P`` (inverse CDF of one uniform per row)."""
    u = rng.random(P.shape[0])
    y = (np.cumsum(P, axis=1) <= u[:, None]).sum(axis=1)
    return np.minimum(y, P.shape[1] - 1)
