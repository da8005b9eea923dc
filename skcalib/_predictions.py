"""A fitted model's predictions as a predictive distribution.

:func:`predict_distribution` sits just above :mod:`skcalib.distributions`, so that everything
that needs a model's predictive distribution -- the scorers and the recalibration
meta-estimators -- imports it from below. It is public as :func:`skcalib.scorers.predict_distribution`.

Internal API: :func:`predict_distribution`, :func:`check_distribution_capable` (its
``TypeError`` before any fit); the forms it reads besides a model's own hook, ``return_std``
and ``predict_proba``: averaging ensembles (``estimators_`` whose mean is ``predict``) as an
:class:`~skcalib.distributions.Empirical`, and lists or dicts of quantile regressors as
:class:`~skcalib.distributions.Quantiles` (:func:`quantile_level` reads a model's level);
:class:`MultiQuantileRegressor` (public as ``skcalib.MultiQuantileRegressor``), one clone of a
quantile regressor per level.
"""

import inspect
from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, clone, is_classifier, is_regressor
from sklearn.utils import check_array, get_tags
from sklearn.utils.validation import check_is_fitted

from ._validation import check_option
from .distributions import (Categorical, Empirical, MultivariateNormal, Normal, Quantiles,
                            is_distribution)

__all__ = ["predict_distribution", "check_distribution_capable", "quantile_level",
           "MultiQuantileRegressor"]


def predict_distribution(estimator, X):
    """A fitted model's predictions as a :mod:`skcalib.distributions` object.

    Tried in this order:

    0. a list (or tuple) of fitted quantile regressors, or a dict ``{level: model}``: their
       predictions as :class:`~skcalib.distributions.Quantiles` at their levels. A list's
       levels are read from each model (:func:`quantile_level`:
       ``HistGradientBoostingRegressor(loss="quantile", quantile=q)``,
       ``GradientBoostingRegressor(loss="quantile", alpha=q)``, ``QuantileRegressor(quantile=q)``,
       LightGBM's ``objective="quantile", alpha=q``, XGBoost's
       ``objective="reg:quantileerror", quantile_alpha=q``, and pipelines ending in one); a
       dict's keys are the levels (checked against the models' own where readable);
    1. ``estimator.predict_distribution(X)``, which must return a distribution object (the hook
       for models with Laplace, mixture, quantile or recalibrated predictive distributions,
       such as :class:`~skcalib.MultiQuantileRegressor`);
    2. for regressors and models without ``predict_proba``: ``predict(X, return_std=True)`` as a
       :class:`~skcalib.distributions.Normal` (a diagonal
       :class:`~skcalib.distributions.MultivariateNormal` for several outputs), when ``predict``
       names ``return_std``;
    3. for regressors whose ``predict`` averages the members of ``estimators_``
       (``RandomForestRegressor``, ``ExtraTreesRegressor``, ``BaggingRegressor`` with its
       feature subsets ``estimators_features_``, ``VotingRegressor`` with its ``weights``): the
       members' predictions as an :class:`~skcalib.distributions.Empirical` (one draw per
       member, weighted like the average). The mean of the members must equal
       ``estimator.predict(X)`` (to ``1e-6`` relative), which tells an averaging ensemble from
       boosting, whose ``estimators_`` are additive stages (``GradientBoostingRegressor``,
       and ``AdaBoostRegressor`` are refused by name, others by the check; a stacking's
       ``predict`` is its final estimator's, read as in 4). This costs one ``predict`` of the ensemble besides the members';
    4. regressors whose ``predict`` takes ``**kwargs``: ``predict(X, return_std=True)`` as in 2;
    5. for classifiers: ``predict_proba(X)`` as a :class:`~skcalib.distributions.Categorical`
       whose ``classes`` are ``estimator.classes_``.

    A pipeline whose final step has ``predict_distribution`` or is an averaging ensemble is
    read through that step on the transformed ``X``. A model's own statement of its
    uncertainty (``predict_distribution``, ``return_std``) comes before the spread of its
    members: a Gaussian process has no ``estimators_``, a random
    forest no ``return_std``, and a model with both has said which it means.

    Parameters
    ----------
    estimator : fitted estimator, or list or dict of fitted quantile regressors
        A fitted classifier, probabilistic regressor, averaging ensemble, or any model with
        ``predict_distribution``; or quantile regressors of one target at two or more levels.
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
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> forest = RandomForestRegressor(n_estimators=10, random_state=0).fit(X, y)
    >>> pred = predict_distribution(forest, X[:5])
    >>> type(pred).__name__, pred.n_draws
    ('Empirical', 10)
    >>> from sklearn.ensemble import GradientBoostingRegressor
    >>> models = [GradientBoostingRegressor(loss="quantile", alpha=a, n_estimators=20,
    ...                                     random_state=0).fit(X, y) for a in (0.1, 0.5, 0.9)]
    >>> pred = predict_distribution(models, X[:5])
    >>> type(pred).__name__, pred.levels
    ('Quantiles', array([0.1, 0.5, 0.9]))
    """
    check_distribution_capable(estimator)
    if _is_model_collection(estimator):
        return _predict_quantile_models(estimator, X)
    final = _final_step_to_read(estimator)
    if final is not None:
        return predict_distribution(final, estimator[:-1].transform(X))
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
        if not _accepts_return_std(estimator, explicit=True) and _is_ensemble(estimator):
            return _predict_ensemble(estimator, X)
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


def _final_step_to_read(estimator):
    """The final step of a pipeline when it has a ``predict_distribution`` hook or is an
    averaging ensemble (read on the transformed ``X``; a pipeline's own ``predict`` would pass
    ``return_std`` to it); None otherwise."""
    from sklearn.pipeline import Pipeline
    if not isinstance(estimator, Pipeline) or hasattr(estimator, "predict_distribution"):
        return None
    final = estimator.steps[-1][1]
    if hasattr(final, "predict_distribution") or (
            _is_ensemble(final) and not is_classifier(final)
            and not _accepts_return_std(final, explicit=True)):
        return final
    return None


def _is_regressor(estimator):
    """scikit-learn's ``is_regressor``, False for objects without estimator tags (it raises on
    them since scikit-learn 1.6)."""
    try:
        return is_regressor(estimator)
    except (AttributeError, TypeError):
        return False


def check_distribution_capable(estimator, name="estimator"):
    """``TypeError`` naming ``name`` and the forms accepted unless :func:`predict_distribution`
    can get a predictive distribution from ``estimator``: a ``predict_distribution(X)`` method,
    ``predict(X, return_std=True)``, an averaging ensemble (``estimators_``; boosting is
    refused), a list or dict of quantile regressors (their levels are checked here), or
    ``predict_proba(X)`` (not for regressors). Works on unfitted models (scikit-learn's
    ensembles are recognised by their class), so that meta-estimators can call it in ``fit``."""
    if _is_model_collection(estimator):
        _collection_levels(estimator, name)
        return estimator
    if (hasattr(estimator, "predict_distribution") or _accepts_return_std(estimator)
            or (not _is_regressor(estimator) and hasattr(estimator, "predict_proba"))):
        return estimator
    if _is_known_non_averaging(estimator):
        raise TypeError(_not_an_ensemble(estimator, name))
    if _is_ensemble(estimator) and not is_classifier(estimator):
        return estimator
    if hasattr(estimator, "dtype") or isinstance(estimator, (list, tuple)):
        got = f"an array ({type(estimator).__name__}); the model comes first, then X"
    else:
        got = f"{type(estimator).__name__}, which provides no predictive distribution"
        level = quantile_level(estimator) if hasattr(estimator, "get_params") else None
        if level is not None:
            got += (f" (it predicts the single quantile at level {level!r}: pass several such "
                    "models as a list or a dict {level: model}, or fit "
                    "skcalib.MultiQuantileRegressor)")
    raise TypeError(
        f"{name} must be a fitted model with a predict_distribution(X) method, "
        "predict(X, return_std=True) (e.g. GaussianProcessRegressor, BayesianRidge), an "
        "averaging ensemble with estimators_ (RandomForestRegressor, ExtraTreesRegressor, "
        "BaggingRegressor, VotingRegressor), a list of fitted quantile regressors (or a dict "
        "{level: model}), or "
        f"predict_proba(X) (a classifier); got {got}."
    )


def _accepts_return_std(estimator, explicit=False):
    """Whether ``predict`` takes ``return_std`` (by name, or through ``**kwargs`` unless
    ``explicit``)."""
    predict = getattr(estimator, "predict", None)
    if predict is None:
        return False
    try:
        params = inspect.signature(predict).parameters
    except (TypeError, ValueError):
        return not explicit  # no introspectable signature: let the call decide
    return "return_std" in params or (not explicit and any(
        p.kind is p.VAR_KEYWORD for p in params.values()))


# --------------------------------------------------------------------------------------------
# averaging ensembles


def _is_ensemble(estimator):
    """An ensemble by its fitted members (``estimators_``) or, unfitted, by its class; not a
    stacking (a ``final_estimator``), whose prediction and ``return_std`` are its final
    estimator's."""
    if hasattr(estimator, "final_estimator") or hasattr(estimator, "final_estimator_"):
        return False
    if hasattr(estimator, "estimators_"):
        return True
    from sklearn.ensemble import BaseEnsemble  # (not at import: sklearn.ensemble is large)
    return isinstance(estimator, BaseEnsemble)


def _is_known_non_averaging(estimator):
    """scikit-learn's boosting ensembles, whose ``estimators_`` are not averaged (stacking
    passes ``return_std`` to its final estimator instead)."""
    from sklearn.ensemble import AdaBoostRegressor, GradientBoostingRegressor
    return isinstance(estimator, (GradientBoostingRegressor, AdaBoostRegressor))


def _not_an_ensemble(estimator, name):
    return (f"{name} ({type(estimator).__name__}) has estimators_ that are not members whose "
            "predictions average to its prediction (gradient boosting adds stages, AdaBoost "
            "takes a weighted median), so their spread is no predictive distribution. For "
            "the uncertainty of gradient boosting, fit quantile models: "
            "skcalib.MultiQuantileRegressor(GradientBoostingRegressor(loss='quantile')) or "
            "HistGradientBoostingRegressor(loss='quantile').")


def _as_plain_array(X):
    """``X`` as an array or sparse matrix (the members of forests and bagging were fitted on
    the validated array, without column names)."""
    return check_array(X, accept_sparse=["csr", "csc"], dtype=None, ensure_all_finite=False)


def _member_weights(estimator, n_members):
    """The weights of the members in the ensemble's average (``VotingRegressor.weights``, for
    the estimators that are not ``"drop"``), or None for equal weights."""
    weights = getattr(estimator, "weights", None)
    if weights is None or isinstance(weights, str):
        return None
    weights = list(np.ravel(np.asarray(weights, dtype=object)))
    named = getattr(estimator, "estimators", None)
    if len(weights) != n_members and isinstance(named, (list, tuple)) and (
            len(named) == len(weights)):
        weights = [w for (_, e), w in zip(named, weights) if not (isinstance(e, str)
                                                                 and e == "drop")]
    if len(weights) != n_members:
        raise ValueError(f"{type(estimator).__name__} has {len(weights)} weights for "
                         f"{n_members} fitted members; cannot weight them.")
    w = np.asarray(weights, dtype=np.float64)
    if np.any(~np.isfinite(w)) or np.any(w < 0) or not np.any(w > 0):
        raise ValueError(f"the weights of {type(estimator).__name__} must be finite, "
                         f"non-negative and not all 0 to weight its members; got {weights}.")
    return w


def _predict_ensemble(estimator, X):
    """The members' predictions of an averaging ensemble as an Empirical (checked against the
    ensemble's ``predict``)."""
    check_is_fitted(estimator)
    kind = type(estimator).__name__
    members = getattr(estimator, "estimators_", None)
    if members is None:
        raise TypeError(f"{kind} has no fitted members (estimators_).")
    members = list(np.ravel(np.asarray(members, dtype=object)))
    if not members or not all(hasattr(m, "predict") for m in members):
        raise TypeError(f"the estimators_ of {kind} must be fitted models with predict; got "
                        f"{[type(m).__name__ for m in members][:3]}.")
    pred = np.asarray(estimator.predict(X), dtype=np.float64)   # validates X
    if pred.ndim == 2 and pred.shape[1] == 1:
        pred = pred[:, 0]
    if pred.ndim != 1:
        raise ValueError(f"{kind} predicts {pred.shape[1]} outputs; the members of an "
                         "ensemble are read as an Empirical of one real target (fit one "
                         "ensemble per output).")
    features = getattr(estimator, "estimators_features_", None)
    plain = None
    draws = np.empty((pred.shape[0], len(members)))
    for k, member in enumerate(members):
        Xk = X
        if features is not None or not hasattr(member, "feature_names_in_"):
            plain = _as_plain_array(X) if plain is None else plain
            Xk = plain if features is None else plain[:, np.asarray(features[k])]
        p = np.asarray(member.predict(Xk), dtype=np.float64)
        if p.ndim == 2 and p.shape[1] == 1:
            p = p[:, 0]
        if p.shape != pred.shape:
            raise ValueError(f"member {k} of {kind} ({type(member).__name__}) predicts an "
                             f"array of shape {p.shape}; the ensemble predicts {pred.shape}, "
                             "so the members are not one ensemble of point predictions.")
        draws[:, k] = p
    bad = ~np.isfinite(draws)
    if bad.any():
        raise ValueError(f"the members of {kind} predict NaN or infinite values on X "
                         f"({int(bad.sum())} of {bad.size}); rescale X and y, or check the fit.")
    w = _member_weights(estimator, len(members))
    mean = draws.mean(axis=1) if w is None else draws @ (w / w.sum())
    tol = 1e-6 * max(1.0, float(np.max(np.abs(pred))) if pred.size else 1.0)
    gap = float(np.max(np.abs(mean - pred))) if pred.size else 0.0
    if not gap <= tol:
        raise ValueError(
            f"the mean of the {len(members)} members of {kind} differs from its predict(X) by "
            f"up to {gap:.3g}: its estimators_ are not an averaging ensemble (boosting stages, "
            "a median or stacked combination?), so their spread is no predictive "
            "distribution. Give the model a predict_distribution(X) method instead.")
    return Empirical(draws, None if w is None else np.broadcast_to(w, draws.shape))


# --------------------------------------------------------------------------------------------
# quantile regressors


def _is_model_collection(obj):
    """A list, tuple or dict whose items (values) include a model (something with predict)."""
    if isinstance(obj, dict):
        items = obj.values()
    elif isinstance(obj, (list, tuple)):
        items = obj
    else:
        return False
    return any(hasattr(m, "predict") for m in items)


def _level_key(params):
    """The name of the parameter holding a quantile level in ``params`` (a model's
    ``get_params(deep=False)``), or None for models that are not quantile regressors."""
    loss = params.get("loss", params.get("objective"))
    if isinstance(loss, str) and loss in ("quantile", "reg:quantileerror"):
        keys = ("quantile_alpha",) if loss == "reg:quantileerror" else ("quantile", "alpha")
        for key in keys:
            if key in params:
                return key
        return None
    if "loss" not in params and "objective" not in params and "quantile" in params:
        return "quantile"           # QuantileRegressor: its alpha is a penalty
    return None


def _level_path(model):
    """The (nested, for pipelines) parameter name of ``model``'s quantile level, or None."""
    steps = getattr(model, "steps", None)
    if isinstance(steps, list) and steps and isinstance(steps[-1], tuple):
        inner = _level_path(steps[-1][1])
        return None if inner is None else f"{steps[-1][0]}__{inner}"
    get_params = getattr(model, "get_params", None)
    if get_params is None:
        return None
    try:
        params = get_params(deep=False)
    except TypeError:
        return None
    return _level_key(params)


def quantile_level(model):
    """The quantile level a regressor is fitted for, read from its parameters, or None.

    ``loss="quantile"`` with ``quantile`` (``HistGradientBoostingRegressor``) or ``alpha``
    (``GradientBoostingRegressor``, LightGBM's ``objective="quantile"``), XGBoost's
    ``objective="reg:quantileerror"`` with ``quantile_alpha``, ``QuantileRegressor(quantile)``,
    and pipelines ending in one of them.

    Parameters
    ----------
    model : estimator

    Returns
    -------
    float or None
    """
    path = _level_path(model)
    if path is None:
        return None
    level = model.get_params(deep=True)[path]
    if isinstance(level, (Real, np.number)) and not isinstance(level, (bool, np.bool_)):
        return float(level)
    return None


def _describe(model):
    return type(model).__name__


def _collection_levels(models, name):
    """``(levels, models)`` of a list or dict of quantile regressors, sorted by level; a
    ``TypeError`` or ``ValueError`` naming ``name`` for items that are not models, models with
    no level, levels outside (0, 1), duplicate levels, or fewer than two models."""
    if isinstance(models, dict):
        pairs = []
        for key, model in models.items():
            if not hasattr(model, "predict"):
                raise TypeError(f"{name}[{key!r}] must be a fitted quantile regressor; got "
                                f"{_describe(model)}.")
            if isinstance(key, (bool, np.bool_)) or not isinstance(key, (Real, np.number)):
                raise TypeError(f"the keys of {name} must be quantile levels (numbers in "
                                f"(0, 1)); got {key!r}.")
            own = quantile_level(model)
            if own is not None and not np.isclose(own, float(key), rtol=0.0, atol=1e-12):
                raise ValueError(f"{name}[{key!r}] is a {_describe(model)} fitted for the "
                                 f"level {own!r}, not {key!r}.")
            pairs.append((float(key), model))
    else:
        pairs = []
        for k, model in enumerate(models):
            if not hasattr(model, "predict"):
                raise TypeError(
                    f"{name}[{k}] must be a fitted quantile regressor; got {_describe(model)} "
                    f"{model!r:.40} (for explicit levels pass a dict {{level: model}}).")
            level = quantile_level(model)
            if level is None:
                raise TypeError(
                    f"{name}[{k}] ({_describe(model)}) is not a quantile regressor: it has no "
                    "quantile level (loss='quantile' with quantile= or alpha=, or "
                    "QuantileRegressor(quantile=)); pass a dict {level: model} to give the "
                    "levels yourself.")
            pairs.append((level, model))
    if len(pairs) < 2:
        raise ValueError(f"{name} must hold quantile regressors of at least two levels; got "
                         f"{len(pairs)}.")
    levels = np.array([lv for lv, _ in pairs])
    bad = (levels <= 0) | (levels >= 1) | ~np.isfinite(levels)
    if bad.any():
        raise ValueError(f"the quantile levels of {name} must lie strictly between 0 and 1; "
                         f"got {float(levels[bad][0])!r}.")
    order = np.argsort(levels, kind="stable")
    levels = levels[order]
    dup = levels[1:][np.diff(levels) == 0]
    if dup.size:
        raise ValueError(f"{name} holds two models of the level {float(dup[0])!r}; give each level "
                         "once.")
    return levels, [pairs[i][1] for i in order]


def _stack_quantile_predictions(models, X, owner):
    """The models' predictions at ``X`` as columns, shape ``(n, len(models))``."""
    cols = []
    for k, model in enumerate(models):
        p = np.asarray(model.predict(X), dtype=np.float64)
        if p.ndim == 2 and p.shape[1] == 1:
            p = p[:, 0]
        if p.ndim != 1 or (cols and p.shape != cols[0].shape):
            raise ValueError(f"the quantile models of {owner} must each predict one value per "
                             f"sample; model {k} ({_describe(model)}) predicts shape {p.shape}"
                             + (f", model 0 shape {cols[0].shape}" if cols else "") + ".")
        bad = ~np.isfinite(p)
        if bad.any():
            raise ValueError(f"model {k} ({_describe(model)}) of {owner} predicts NaN or "
                             f"infinite quantiles for {int(bad.sum())} of {p.size} samples.")
        cols.append(p)
    return np.column_stack(cols)


def _predict_quantile_models(models, X):
    levels, ordered = _collection_levels(models, "estimator")
    return Quantiles(_stack_quantile_predictions(ordered, X, "estimator"), levels)


# --------------------------------------------------------------------------------------------
# the meta-estimator


class MultiQuantileRegressor(RegressorMixin, BaseEstimator):
    """One clone of a quantile regressor per level; predicts :class:`~skcalib.distributions.Quantiles`.

    Quantile gradient boosting (and every other quantile loss) fits one model per level; this
    meta-estimator fits them together, so that the set is one scikit-learn regressor: its
    :meth:`predict_distribution` is what skcalib's scorers, ``RecalibratedRegressor`` and the
    report read, and it clones, pickles and tunes in ``GridSearchCV`` (``estimator__<param>``)
    like any other.

    Parameters
    ----------
    estimator : regressor
        A quantile regressor (``HistGradientBoostingRegressor(loss="quantile")``,
        ``GradientBoostingRegressor(loss="quantile")``, ``QuantileRegressor()``, LightGBM's
        ``LGBMRegressor(objective="quantile")``, or a pipeline ending in one); each clone gets
        one level in the parameter that holds it (see ``level_param``).
    levels : array-like of float, default=(0.05, 0.25, 0.5, 0.75, 0.95)
        Two or more distinct quantile levels in ``(0, 1)``.
    level_param : str, default=None
        The parameter of ``estimator`` set to each level (``"quantile"``, ``"alpha"``, or a
        nested name such as ``"model__quantile"``); None reads it from the estimator's
        parameters (see :func:`skcalib.scorers.predict_distribution`).
    crossing : {"sort", "raise"}, default="sort"
        What :class:`~skcalib.distributions.Quantiles` does with crossing predicted quantiles.

    Attributes
    ----------
    estimators_ : list of fitted estimators
        One per level, in the order of ``levels_``.
    levels_ : ndarray of shape (n_levels,)
        The levels, increasing.
    n_features_in_ : int
        Number of features seen in ``fit`` (when the estimator records it).
    feature_names_in_ : ndarray of str
        Names of the features seen in ``fit`` (when the estimator records them).

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import HistGradientBoostingRegressor
    >>> from skcalib import MultiQuantileRegressor, crps
    >>> X, y = load_diabetes(return_X_y=True)
    >>> model = MultiQuantileRegressor(
    ...     HistGradientBoostingRegressor(loss="quantile", max_iter=20, random_state=0),
    ...     levels=[0.1, 0.5, 0.9]).fit(X, y)
    >>> pred = model.predict_distribution(X[:3])
    >>> type(pred).__name__, pred.values.shape
    ('Quantiles', (3, 3))
    """

    def __init__(self, estimator, levels=(0.05, 0.25, 0.5, 0.75, 0.95), *, level_param=None,
                 crossing="sort"):
        self.estimator = estimator
        self.levels = levels
        self.level_param = level_param
        self.crossing = crossing

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = get_tags(self.estimator).input_tags
        tags.input_tags.sparse = inner.sparse
        tags.input_tags.allow_nan = inner.allow_nan
        return tags

    def _checked_levels(self):
        try:
            levels = np.asarray(self.levels, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"levels must be numbers in (0, 1); got {self.levels!r}.") from None
        if np.asarray(self.levels).dtype.kind in "bOSU" or levels.ndim != 1:
            raise TypeError(f"levels must be a 1-D sequence of numbers in (0, 1); got "
                            f"{self.levels!r}.")
        if levels.size < 2:
            raise ValueError(f"levels must hold at least two quantile levels; got "
                             f"{levels.size}.")
        bad = ~np.isfinite(levels) | (levels <= 0) | (levels >= 1)
        if bad.any():
            raise ValueError(f"levels must lie strictly between 0 and 1; got "
                             f"{float(levels[bad][0])!r}.")
        levels = np.sort(levels)
        dup = levels[1:][np.diff(levels) == 0]
        if dup.size:
            raise ValueError(f"levels must be distinct; {float(dup[0])!r} is given twice.")
        return levels

    def _checked_level_param(self):
        if not hasattr(self.estimator, "get_params") or not hasattr(self.estimator, "fit"):
            raise TypeError("estimator must be a scikit-learn regressor (with fit and "
                            f"get_params); got {type(self.estimator).__name__}.")
        if self.level_param is None:
            path = _level_path(self.estimator)
            if path is None:
                raise ValueError(
                    f"cannot tell which parameter of {type(self.estimator).__name__} sets the "
                    "quantile level: give it a quantile loss (loss='quantile' for "
                    "HistGradientBoostingRegressor and GradientBoostingRegressor, "
                    "objective='quantile' for LightGBM) or pass level_param.")
            return path
        if not isinstance(self.level_param, str):
            raise TypeError(f"level_param must be None or a parameter name; got "
                            f"{self.level_param!r}.")
        if self.level_param not in self.estimator.get_params(deep=True):
            raise ValueError(f"level_param={self.level_param!r} is not a parameter of "
                             f"{type(self.estimator).__name__}.")
        return self.level_param

    def fit(self, X, y, sample_weight=None, **fit_params):
        """Fit one clone of ``estimator`` per level.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features, as the estimator takes them.
        y : array-like of shape (n_samples,)
            Real targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Passed to every clone's ``fit`` (when given).
        **fit_params : dict
            Passed to every clone's ``fit``.

        Returns
        -------
        self : MultiQuantileRegressor
        """
        levels = self._checked_levels()
        path = self._checked_level_param()
        check_option(self.crossing, "crossing", ("sort", "raise"))
        if sample_weight is not None:
            fit_params = dict(fit_params, sample_weight=sample_weight)
        fitted = []
        for level in levels:
            model = clone(self.estimator).set_params(**{path: float(level)})
            fitted.append(model.fit(X, y, **fit_params))
        self.estimators_ = fitted
        self.levels_ = levels
        for attr in ("n_features_in_", "feature_names_in_"):
            if hasattr(fitted[0], attr):
                setattr(self, attr, getattr(fitted[0], attr))
        return self

    def predict_distribution(self, X):
        """The predicted quantiles at ``levels_`` as a :class:`~skcalib.distributions.Quantiles`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features, as the estimator takes them.

        Returns
        -------
        Quantiles
        """
        check_is_fitted(self)
        values = _stack_quantile_predictions(self.estimators_, X, type(self).__name__)
        return Quantiles(values, self.levels_, crossing=self.crossing)

    def predict(self, X):
        """The predicted medians: ``predict_distribution(X).ppf(0.5)`` (the level-0.5 model's
        prediction when 0.5 is a level and the quantiles do not cross; else interpolated).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features, as the estimator takes them.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return self.predict_distribution(X).ppf(0.5)


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
