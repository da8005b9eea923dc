"""The adapters of other forms of predictive distributions: :func:`as_distribution`.

``(n, 2)`` arrays of means and standard deviations (``predict(X, return_std=True)`` stacked as
columns) become a :class:`~skcalib.distributions.Normal`; frozen continuous ``scipy.stats``
laws with vectorised parameters become a :class:`~skcalib.distributions.Normal` (``norm``), a
:class:`~skcalib.distributions.Laplace` (``laplace``) or a
:class:`~skcalib.distributions.ScipyDistribution` (any other); distribution objects pass
through.
"""

from numbers import Real

import numpy as np
from scipy import stats

from .._expectations import check_not_empty
from .._validation import check_numeric, check_scores
from ._base import is_distribution
from ._laplace import Laplace
from ._normal import Normal
from ._scipy import ScipyDistribution, frozen_scipy_kind, validated_parameters

#: scipy families with an exact skcalib family (closed forms everywhere): name -> class.
_EXACT_SCIPY_FAMILIES = {"norm": Normal, "laplace": Laplace}


def as_distribution(y_pred, name="y_pred"):
    """A distribution object, ``(n, 2)`` predictions ``[mean, std]`` as a :class:`Normal`, or
    a frozen ``scipy.stats`` law as a skcalib distribution.

    The points-plus-standard-deviation form of regressors (``predict(X, return_std=True)``
    stacked as columns) and frozen continuous ``scipy.stats`` distributions with vectorised
    parameters are accepted wherever a predictive distribution is (every function that takes
    ``y_pred`` of a regressor comes through here). Every form must hold at least one sample (a
    ``ValueError`` naming ``name`` otherwise).

    Parameters
    ----------
    y_pred : Distribution, frozen scipy.stats distribution or array-like of shape (n_samples, 2)
        A :mod:`skcalib.distributions` object (returned as it is); a frozen continuous
        ``scipy.stats`` distribution whose parameters are arrays of shape ``(n_samples,)``
        (scalars broadcast against them): ``scipy.stats.norm(loc, scale)`` becomes a
        :class:`Normal`, ``scipy.stats.laplace(loc, scale)`` a :class:`Laplace` (the exact
        families, with closed forms), any other a :class:`ScipyDistribution`; or predicted
        means (column 0) and non-negative standard deviations (column 1).
    name : str, default="y_pred"
        Name of the argument in error messages.

    Returns
    -------
    dist : Distribution
        The distribution.
    from_array : bool
        Whether ``y_pred`` was an array (so that outputs can keep that form).

    Raises
    ------
    TypeError
        For discrete, multivariate or unfrozen ``scipy.stats`` objects (and anything else that
        is not a predictive distribution).
    ValueError
        For a frozen law whose parameters are all scalars (it does not say how many samples it
        predicts: give one parameter value per sample), or are outside its family's domain.

    Examples
    --------
    >>> from skcalib.distributions import as_distribution
    >>> dist, from_array = as_distribution([[0.0, 1.0], [2.0, 0.5]])
    >>> type(dist).__name__, dist.scale, from_array
    ('Normal', array([1. , 0.5]), True)
    >>> from scipy import stats
    >>> type(as_distribution(stats.norm([0.0, 2.0], 1.0))[0]).__name__
    'Normal'
    >>> type(as_distribution(stats.gamma([1.0, 2.0]))[0]).__name__
    'ScipyDistribution'
    """
    if is_distribution(y_pred):
        check_not_empty(y_pred, name)
        return y_pred, False
    if frozen_scipy_kind(y_pred) is not None:
        return _from_scipy(y_pred, name), False
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


def _from_scipy(frozen, name):
    """The skcalib distribution of a frozen scipy law (the exact family where there is one)."""
    rv, params = validated_parameters(frozen, name)
    exact = _EXACT_SCIPY_FAMILIES.get(rv.name)
    if exact is not None and type(rv) is type(getattr(stats, rv.name)):
        return exact(params["loc"], params["scale"])
    return ScipyDistribution._from_parameters(rv, params)
