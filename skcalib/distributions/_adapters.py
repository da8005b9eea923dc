"""The adapters of other forms of predictive distributions: :func:`as_distribution`.

``(n, 2)`` arrays of means and standard deviations (``predict(X, return_std=True)`` stacked as
columns) become a :class:`~skcalib.distributions.Normal`; distribution objects pass through.
"""

from numbers import Real

import numpy as np

from .._expectations import check_not_empty
from .._validation import check_numeric, check_scores
from ._base import is_distribution
from ._normal import Normal


def as_distribution(y_pred, name="y_pred"):
    """A distribution object, or ``(n, 2)`` predictions ``[mean, std]`` as a :class:`Normal`.

    The points-plus-standard-deviation form of regressors (``predict(X, return_std=True)``
    stacked as columns) is accepted wherever a predictive distribution is. Both forms must hold
    at least one sample (a ``ValueError`` naming ``name`` otherwise).

    Parameters
    ----------
    y_pred : Distribution or array-like of shape (n_samples, 2)
        A :mod:`skcalib.distributions` object (returned as it is), or predicted means (column 0)
        and non-negative standard deviations (column 1).
    name : str, default="y_pred"
        Name of the argument in error messages.

    Returns
    -------
    dist : Distribution
        The distribution.
    from_array : bool
        Whether ``y_pred`` was an array (so that outputs can keep that form).

    Examples
    --------
    >>> from skcalib.distributions import as_distribution
    >>> dist, from_array = as_distribution([[0.0, 1.0], [2.0, 0.5]])
    >>> type(dist).__name__, dist.scale, from_array
    ('Normal', array([1. , 0.5]), True)
    """
    if is_distribution(y_pred):
        check_not_empty(y_pred, name)
        return y_pred, False
    if y_pred is None:
        raise ValueError(f"{name} must be an array-like of shape (n_samples, 2) or a skcalib "
                         "distribution; got None.")
    if isinstance(y_pred, (str, bytes, dict, set, frozenset, Real, np.generic)) or (
            isinstance(y_pred, np.ndarray) and y_pred.ndim == 0):
        raise TypeError(f"{name} must be an array-like of shape (n_samples, 2) or a skcalib "
                        f"distribution; got {type(y_pred).__name__} {y_pred!r:.60}.")
    if isinstance(y_pred, (list, tuple)):
        try:
            np.shape(y_pred)
        except ValueError:
            raise ValueError(f"{name} must be a rectangular array-like of shape (n_samples, 2); "
                             "got a ragged sequence (rows of different lengths).") from None
    check_numeric(y_pred, name, what="means and standard deviations", expected="a skcalib "
                  "distribution or an array of shape (n_samples, 2) of means and standard deviations")
    A = check_scores(y_pred, name)
    if A.ndim != 2 or A.shape[1] != 2:
        raise ValueError(
            f"{name} must be a skcalib distribution or an array of shape (n_samples, 2) holding "
            f"the predicted means and standard deviations; got shape {A.shape}.")
    if np.any(A[:, 1] < 0):
        raise ValueError(f"{name}: the standard deviations (column 1) must be non-negative.")
    return Normal(A[:, 0], A[:, 1]), True
