"""A fitted model's predictions as a predictive distribution.

:func:`predict_distribution` sits just above :mod:`skcalib.distributions`, so that everything
that needs a model's predictive distribution -- the scorers and the recalibration
meta-estimators -- imports it from below. It is public as :func:`skcalib.scorers.predict_distribution`.
"""

import inspect

import numpy as np
from sklearn.base import is_regressor

from .distributions import Categorical, MultivariateNormal, Normal, is_distribution

__all__ = ["predict_distribution", "check_distribution_capable"]


def predict_distribution(estimator, X):
    """A fitted model's predictions as a :mod:`skcalib.distributions` object.

    Tried in this order:

    1. ``estimator.predict_distribution(X)``, which must return a distribution object (the hook
       for models with Laplace, mixture or recalibrated predictive distributions);
    2. for regressors and models without ``predict_proba``: ``predict(X, return_std=True)`` as a
       :class:`~skcalib.distributions.Normal` (a diagonal
       :class:`~skcalib.distributions.MultivariateNormal` for several outputs);
    3. for classifiers: ``predict_proba(X)`` as a :class:`~skcalib.distributions.Categorical`
       whose ``classes`` are ``estimator.classes_``.

    Parameters
    ----------
    estimator : fitted estimator
        A fitted classifier, probabilistic regressor, or any model with ``predict_distribution``.
    X : array-like
        Features.

    Returns
    -------
    Distribution

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.linear_model import BayesianRidge
    >>> from skcalib.scorers import predict_distribution
    >>> X, y = load_diabetes(return_X_y=True)
    >>> pred = predict_distribution(BayesianRidge().fit(X, y), X[:5])
    >>> type(pred).__name__, len(pred)
    ('Normal', 5)
    """
    check_distribution_capable(estimator)
    hook = getattr(estimator, "predict_distribution", None)
    if hook is not None:
        pred = hook(X)
        if not is_distribution(pred):
            raise TypeError(
                f"{type(estimator).__name__}.predict_distribution must return a skcalib "
                f"distribution; got {type(pred).__name__}."
            )
        return pred
    if _is_regressor(estimator) or not hasattr(estimator, "predict_proba"):
        out = estimator.predict(X, return_std=True)
        mean, std = (np.asarray(o, dtype=np.float64) for o in out[:2])
        if mean.ndim == 2 and mean.shape[1] == 1:
            mean = mean[:, 0]
        _check_finite_predictions(estimator, mean, std)
        if mean.ndim == 1:
            return Normal(mean, std.reshape(mean.shape))
        std = np.broadcast_to(std if std.ndim == 2 else std[:, None], mean.shape)
        return MultivariateNormal(mean, std ** 2)
    proba = np.asarray(estimator.predict_proba(X))
    classes = getattr(estimator, "classes_", None)
    if proba.ndim == 2 and proba.shape[1] == 1:
        proba = np.column_stack([1.0 - proba[:, 0], proba[:, 0]])
    return Categorical(proba, classes=classes)


def _is_regressor(estimator):
    """scikit-learn's ``is_regressor``, False for objects without estimator tags (it raises on
    them since scikit-learn 1.6)."""
    try:
        return is_regressor(estimator)
    except (AttributeError, TypeError):
        return False


def check_distribution_capable(estimator, name="estimator"):
    """``TypeError`` naming ``name`` and the methods needed unless :func:`predict_distribution`
    can get a predictive distribution from ``estimator``: a ``predict_distribution(X)`` method,
    ``predict(X, return_std=True)``, or ``predict_proba(X)`` (not for regressors)."""
    if (hasattr(estimator, "predict_distribution") or _accepts_return_std(estimator)
            or (not _is_regressor(estimator) and hasattr(estimator, "predict_proba"))):
        return estimator
    if hasattr(estimator, "dtype") or isinstance(estimator, (list, tuple)):
        got = f"an array ({type(estimator).__name__}); the model comes first, then X"
    else:
        got = f"{type(estimator).__name__}, which provides no predictive distribution"
    raise TypeError(
        f"{name} must be a fitted model with a predict_distribution(X) method, "
        "predict(X, return_std=True) (e.g. GaussianProcessRegressor, BayesianRidge) or "
        f"predict_proba(X) (a classifier); got {got}."
    )


def _accepts_return_std(estimator):
    predict = getattr(estimator, "predict", None)
    if predict is None:
        return False
    try:
        params = inspect.signature(predict).parameters
    except (TypeError, ValueError):
        return True  # no introspectable signature: let the call decide
    return "return_std" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _check_finite_predictions(estimator, mean, std):
    """A ``ValueError`` saying which of the model's predictions are not finite (instead of the
    distribution's "loc must be finite", about an argument the user never passed)."""
    for what, a in (("means", mean), ("standard deviations", std)):
        bad = ~np.isfinite(a)
        if bad.any():
            raise ValueError(
                f"the predictions of {type(estimator).__name__} on X are not finite: its "
                f"predicted {what} are NaN or infinite for {int(bad.sum())} of {a.size} values "
                "(its arithmetic overflowed, e.g. on features or targets of magnitude 1e300). "
                "Rescale X and y (e.g. StandardScaler), or check the model's fit.")
