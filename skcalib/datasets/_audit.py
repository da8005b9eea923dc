"""An audit data set for local calibration (Vashistha and Farahi)."""

import numpy as np

from .._validation import check_rng, check_scalar_param

#: Logit shifts of :func:`make_audit_data` per unit ``local_bias``: ages 30-40 at higher risk,
#: group 1 aged 55 or more at lower risk, both centred so that the mean shift is zero.
_AUDIT_COEF = np.array([1.0, -0.8, 0.6, -0.4, 0.3, -0.2])


def _audit_shift(age, group):
    """``s(age, group) = 1{30 <= age < 40} - 1{group = 1, age >= 55}``, minus its mean 0.05 under
    ``age ~ U(20, 70)``, ``group ~ Bernoulli(1/2)`` (0.2 - 0.5 * 0.3)."""
    return (((age >= 30) & (age < 40)).astype(np.float64)
            - ((group == 1) & (age >= 55)).astype(np.float64) - 0.05)


def make_audit_data(n_samples=2000, *, n_features=4, local_bias=1.0, random_state=None):
    """A binary risk model's inputs, labels and audit features with a known local bias.

    The model inputs are ``Z ~ N(0, I)`` (``n_features`` columns); the audit features are an age
    ``~ U(20, 70)`` and a group ``~ Bernoulli(1/2)``, independent of ``Z`` and *not* model inputs.
    The true risk is

        P(Y = 1 | Z, age, group) = sigmoid(Z beta + local_bias * s(age, group)),

    ``s = 1{30 <= age < 40} - 1{group = 1 and age >= 55} - 0.05``: people aged 30-40 are at higher
    risk, and group-1 people aged 55 or more at lower risk, than their inputs say; ``s`` has mean
    zero. A model fitted on ``Z`` alone (the situation of an audit) can be well calibrated on
    average and still systematically wrong in these groups: the local calibration bias is
    positive (risk underestimated) for ages 30-40 and negative for group 1 above 55.

    Parameters
    ----------
    n_samples : int, default=2000
        Number of samples, ``>= 1``.
    n_features : int, default=4
        Number of model inputs, between 1 and 6 (coefficients ``beta = (1, -0.8, 0.6, -0.4, 0.3,
        -0.2)[:n_features]``).
    local_bias : float, default=1.0
        Size of the local shift on the logit scale (``0`` gives a model that is locally
        calibrated given ``Z``).
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState, default=None
        Seed or generator of the draws.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Model inputs ``Z``.
    y : ndarray of shape (n_samples,)
        Labels in {0, 1}.
    audit : ndarray of shape (n_samples, 2)
        Audit features: age (years) and group (0 or 1).
    proba : ndarray of shape (n_samples,)
        The true ``P(Y = 1 | Z, age, group)``.

    See Also
    --------
    skcalib.klce : The local calibration error on audit features.
    skcalib.local_calibration_bias : The bias near each sample.

    Examples
    --------
    >>> from skcalib.datasets import make_audit_data
    >>> X, y, audit, proba = make_audit_data(1000, random_state=0)
    >>> X.shape, y.shape, audit.shape
    ((1000, 4), (1000,), (1000, 2))
    >>> bool(20 <= audit[:, 0].min() and audit[:, 0].max() <= 70)
    True
    """
    check_scalar_param(n_samples, "n_samples", min_val=1)
    check_scalar_param(n_features, "n_features", min_val=1, max_val=_AUDIT_COEF.size)
    check_scalar_param(local_bias, "local_bias", kind="real")
    rng = check_rng(random_state)
    n, p = int(n_samples), int(n_features)
    Z = rng.standard_normal((n, p))
    age = rng.uniform(20.0, 70.0, size=n)
    group = (rng.random(n) < 0.5).astype(np.int64)
    logit = Z @ _AUDIT_COEF[:p] + float(local_bias) * _audit_shift(age, group)
    proba = 1.0 / (1.0 + np.exp(-logit))
    y = (rng.random(n) < proba).astype(np.int64)
    return Z, y, np.column_stack([age, group.astype(np.float64)]), proba
