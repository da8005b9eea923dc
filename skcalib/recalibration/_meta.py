"""Meta-estimators that recalibrate a model, and the transformer that makes a model a pipeline step.

The cross-fitting follows :class:`sklearn.calibration.CalibratedClassifierCV`: with
``ensemble=True`` each fold's model is fitted on the training part and a recalibrator on its
held-out scores, and predictions average the (model, recalibrator) pairs; with
``ensemble=False`` one recalibrator is fitted on the out-of-fold scores of all samples and the
model is refitted on everything. A :class:`~sklearn.frozen.FrozenEstimator` is never refitted:
the recalibrator is fitted on the scores of the data passed to ``fit`` (``cv="prefit"``, removed
from scikit-learn 1.9, is refused with that advice). ``recalibrator="none"`` fits the model once
on all the data and leaves its predictions as they are.
"""

import warnings
from inspect import signature
from numbers import Integral

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import (BaseEstimator, ClassifierMixin, MetaEstimatorMixin, RegressorMixin,
                          TransformerMixin, clone, is_classifier, is_regressor)
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import BayesianRidge, LogisticRegression
from sklearn.model_selection import check_cv
from sklearn.utils import check_array, get_tags, indexable
from sklearn.utils.metadata_routing import MetadataRouter, MethodMapping, process_routing
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .._sklearn_compat import check_method_params, num_samples, routing_enabled, safe_indexing
from .._predictions import check_distribution_capable, predict_distribution
from .._validation import (check_bool, check_class_labels, check_n_jobs, check_numeric,
                           check_option, check_sample_weight, length_mismatch_message,
                           user_stacklevel)
from ..distributions import Empirical, Mixture, Quantiles, concatenate
from ._base import ClassifierRecalibrator, check_input_features
from ._checks import check_X_container
from ._distribution import DistributionTemperatureScaling, pass_distributions_through_set_output
from ._identity import IdentityRecalibration
from ._quantile import QuantileRecalibration
from ._registry import (CLASSIFIER_RECALIBRATORS, DISTRIBUTION_RECALIBRATORS, IDENTITIES,
                        REGRESSOR_RECALIBRATORS, recalibrator_class)
from ._temperature import TemperatureScaling

_METHODS = ("auto", "decision_function", "predict_proba")
_TRANSFORM_METHODS = _METHODS + ("predict_distribution",)


def _resolve_method(estimator, method):
    """The response method: ``decision_function`` (logits) when available, else probabilities.

    A ``ValueError`` naming ``method`` when the estimator lacks it (checked at ``fit``, before
    any fold is fitted, instead of an ``AttributeError`` from inside a fold).
    """
    name = type(estimator).__name__
    if method != "auto":
        if not hasattr(estimator, method):
            raise ValueError(f"method={method!r}, but the estimator {name} has no {method} "
                             "method; use method='auto' or another response method.")
        return method
    for candidate in ("decision_function", "predict_proba"):
        if hasattr(estimator, candidate):
            return candidate
    raise ValueError(f"method='auto' needs decision_function or predict_proba, and the estimator "
                     f"{name} has neither.")


def _check_distribution_capable(estimator):
    """The ``TypeError`` of :func:`skcalib.scorers.predict_distribution`, at ``fit`` already."""
    check_distribution_capable(estimator)


def _check_estimator_param(estimator, name="estimator"):
    if estimator is not None and not hasattr(estimator, "fit"):
        raise TypeError(f"{name} must be a scikit-learn estimator (with a fit method); got "
                        f"{estimator!r:.80} of type {type(estimator).__name__}.")


def _shape(X):
    """The shape of the samples ``X`` for messages (None when it has none, e.g. a list of
    strings that numpy cannot make rectangular)."""
    shape = getattr(X, "shape", None)
    if shape is None:
        try:
            shape = np.shape(X)
        except (TypeError, ValueError):  # ragged, or an array-like that refuses numpy
            return None
    try:
        return tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        return None


def _check_fold_weights(sw, splits, ensemble, fit_kwargs):
    """A ``ValueError`` naming ``sample_weight`` and the fold when a fold's model would be fitted
    on weights that are all zero (the estimator's own error names no fold), or, with
    ``ensemble=True``, its recalibrator on held-out weights that are all zero."""
    if sw is None:
        return
    parts = []
    if "sample_weight" in fit_kwargs:
        parts.append(("training", 0))
    if ensemble:
        parts.append(("held-out", 1))
    for k, split in enumerate(splits):
        for what, j in parts:
            idx = np.asarray(split[j])
            if idx.size and not np.any(sw[idx] > 0):
                raise ValueError(
                    f"sample_weight is zero for every {what} sample of cv fold {k} "
                    f"({idx.size} samples), so that fold's "
                    f"{'model' if j == 0 else 'recalibrator'} has nothing to fit; use fewer "
                    "folds or a shuffled cv (e.g. KFold(shuffle=True))"
                    + (", or ensemble=False." if j == 1 else "."))


#: Folds of the default ``cv=None`` (fewer for a classifier whose smallest class is smaller).
DEFAULT_N_FOLDS = 5


def _check_cv_option(cv):
    if isinstance(cv, str) and cv == "prefit":
        # scikit-learn 1.9 removed it from CalibratedClassifierCV, for the same reason: a fitted
        # model is said to be fitted by wrapping it, which every meta-estimator understands
        raise ValueError(
            "cv='prefit' is not supported (scikit-learn 1.9 removed it from "
            "CalibratedClassifierCV too): wrap the fitted model in "
            "sklearn.frozen.FrozenEstimator instead, e.g. "
            "RecalibratedClassifier(FrozenEstimator(model)), which is not refitted and whose "
            "recalibrator is fitted on the data passed to fit.")
    if isinstance(cv, str):
        raise ValueError(f"cv must be None, an int, a splitter or an iterable of splits; "
                         f"got {cv!r}.")
    if isinstance(cv, (bool, np.bool_)):
        raise TypeError(f"cv must be None, an int, a splitter or an iterable of splits; "
                        f"got {cv!r}.")
    if isinstance(cv, Integral) and cv < 2:
        raise ValueError(f"cv must be at least 2 folds; got {cv!r}.")


class _RecalibratedBase(MetaEstimatorMixin, BaseEstimator):
    """Shared cross-fitting: one code path for classifiers and regressors."""

    def __init__(self, estimator=None, recalibrator=None, *, cv=None, ensemble="auto",
                 n_jobs=None):
        self.estimator = estimator
        self.recalibrator = recalibrator
        self.cv = cv
        self.ensemble = ensemble
        self.n_jobs = n_jobs

    def _check_params(self):
        """Every parameter, at the start of ``fit``, whether or not this fit uses it."""
        _check_cv_option(self.cv)
        if not (self.ensemble == "auto" or isinstance(self.ensemble, (bool, np.bool_))):
            raise ValueError(f"ensemble must be 'auto', True or False; got {self.ensemble!r}.")
        check_n_jobs(self.n_jobs)
        _check_estimator_param(self.estimator)
        recal = self._recalibrator_template()
        if isinstance(recal, type):
            raise TypeError(f"recalibrator must be an estimator instance, e.g. {recal.__name__}() "
                            f"(or a name); got the class {recal.__name__}. "
                            f"{type(self).__name__} needs " + self._recalibrator_advice())
        if recal is None:
            return
        if not hasattr(recal, "fit"):
            raise TypeError(f"recalibrator must be an estimator (with a fit method); got "
                            f"{recal!r:.80} of type {type(recal).__name__}. "
                            f"{type(self).__name__} needs " + self._recalibrator_advice())
        needs = self._recalibrator_method
        classifier_side = needs == "predict_proba"
        # the other side's recalibrators (a classifier's scores vs predictive distributions)
        name = type(recal).__name__
        # skcalib's recalibrators of the other kind (a classifier's scores vs predictive
        # distributions): say where they belong
        if isinstance(recal, DISTRIBUTION_RECALIBRATORS if classifier_side
                      else ClassifierRecalibrator):
            other = "RecalibratedRegressor" if classifier_side else "RecalibratedClassifier"
            what = "predictive distributions" if classifier_side else "a classifier's scores"
            raise TypeError(f"recalibrator={name}(): {name} recalibrates {what} (use it with "
                            f"{other}); {type(self).__name__} needs "
                            + self._recalibrator_advice())
        if not hasattr(recal, needs):
            raise TypeError(f"recalibrator must provide {needs} (it is applied to the model's "
                            f"{'scores' if classifier_side else 'predictions'}); "
                            f"{name} does not. {type(self).__name__} needs "
                            + self._recalibrator_advice())
        if is_regressor(recal) if classifier_side else is_classifier(recal):
            raise TypeError(f"recalibrator={name}(): {name} is a "
                            f"{'regressor' if classifier_side else 'classifier'}; "
                            f"{type(self).__name__} needs " + self._recalibrator_advice())

    def _recalibrator_advice(self):
        """Which recalibrators this meta-estimator takes (for the messages about
        ``recalibrator``)."""
        registry = self._recalibrator_registry
        names = ", ".join(f"{name!r} ({cls.__name__})" for name, cls in registry.items())
        if self._recalibrator_method == "predict_proba":
            return ("a recalibrator of a classifier's scores (fit(scores, y) and predict_proba): "
                    f"one of the names {names}, an instance of these classes, or None.")
        return ("a recalibrator of predictive distributions (fit(distributions, y) and a "
                f"transform that returns distributions): one of the names {names}, an instance "
                "of these classes, or None.")

    def _recalibrator_template(self):
        """``recalibrator`` as an (unfitted) estimator: a name is resolved in the registry."""
        if isinstance(self.recalibrator, str):
            classifier_side = self._recalibrator_method == "predict_proba"
            kind = "classifier" if classifier_side else "regressor"
            other = REGRESSOR_RECALIBRATORS if classifier_side else CLASSIFIER_RECALIBRATORS
            if self.recalibrator not in self._recalibrator_registry and self.recalibrator in other:
                cls = other[self.recalibrator]
                what, meta = (("predictive distributions", "RecalibratedRegressor")
                              if classifier_side else
                              ("a classifier's scores", "RecalibratedClassifier"))
                raise ValueError(
                    f"recalibrator={self.recalibrator!r} is not a {kind} recalibrator name: it "
                    f"names {cls.__name__}, which recalibrates {what} (use it with {meta}); "
                    f"{type(self).__name__} needs " + self._recalibrator_advice())
            recal = recalibrator_class(self.recalibrator, self._recalibrator_registry, kind)()
            if "random_state" in recal.get_params(deep=False):
                # a name must mean one fitted model (reproducible in GridSearchCV), as the
                # p-value scorers do: a randomised method is seeded with 0
                recal.set_params(random_state=0)
            return recal
        return self.recalibrator

    def _get_estimator(self):
        if self.estimator is not None:
            return self.estimator
        est = self._default_estimator()
        if routing_enabled():
            est.set_fit_request(sample_weight=True)
        return est

    def get_metadata_routing(self):
        """Routing of ``fit`` metadata: to the estimator's ``fit`` and the splitter's ``split``.

        ``sample_weight`` is also always used by the recalibrator (this estimator consumes it).

        Returns
        -------
        routing : MetadataRouter
        """
        return MetadataRouter(owner=self).add_self_request(self).add(
            estimator=self._get_estimator(),
            method_mapping=MethodMapping().add(caller="fit", callee="fit")).add(
            splitter=check_cv(self.cv),
            method_mapping=MethodMapping().add(caller="fit", callee="split"))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = get_tags(self._get_estimator()).input_tags.sparse
        return tags

    def _routed_params(self, estimator, sample_weight, fit_params):
        if routing_enabled():
            routed = process_routing(self, "fit", sample_weight=sample_weight, **fit_params)
            return (routed.estimator.fit,
                    routed.splitter.split if "splitter" in routed else {})
        kwargs = dict(fit_params)
        if sample_weight is not None and not isinstance(estimator, FrozenEstimator):
            # (a fitted model is not refitted: the weights only serve the recalibrator)
            if "sample_weight" in signature(estimator.fit).parameters:
                kwargs["sample_weight"] = sample_weight
            else:
                warnings.warn(
                    f"{type(estimator).__name__}.fit does not accept sample_weight; the weights "
                    "are used by the recalibrator only.", UserWarning,
                    stacklevel=user_stacklevel())
        return kwargs, {}

    def _fit(self, X, y, sample_weight, fit_params):
        """Fit ``estimators_`` and ``recalibrators_`` (the subclass validated the parameters and
        ``y``)."""
        X, y = indexable(X, y)
        sw = check_sample_weight(sample_weight, len(y))
        estimator = self._get_estimator()
        fit_kwargs, split_kwargs = self._routed_params(estimator, sw, fit_params)
        frozen = isinstance(estimator, FrozenEstimator)
        ensemble = (not frozen) if self.ensemble == "auto" else bool(self.ensemble)
        if isinstance(self._recalibrator_template(), IDENTITIES):
            # No recalibration: the model itself, fitted once on all the data (cv and ensemble
            # would only make it an average of models fitted on parts of it).
            if frozen:
                check_is_fitted(estimator)
            else:
                estimator = clone(estimator).fit(X, y, **fit_kwargs)
            self.estimators_ = [estimator]
            self.recalibrators_ = [self._fit_recalibrator(estimator, X, y, sw)]
            return self._finish()
        if frozen and not ensemble:
            # A fitted model is not refitted: its scores on all of X train one recalibrator.
            check_is_fitted(estimator)
            self.estimators_ = [estimator]
            self.recalibrators_ = [self._fit_recalibrator(estimator, X, y, sw)]
            return self._finish()
        cv = check_cv(self._default_cv(y) if self.cv is None else self.cv, y,
                      classifier=is_classifier(self))
        self._check_folds(cv, y)
        splits = list(cv.split(X, y, **split_kwargs))
        _check_fold_weights(sw, splits, ensemble, fit_kwargs)
        if ensemble:
            pairs = Parallel(n_jobs=self.n_jobs)(
                delayed(self._fit_pair)(clone(estimator), X, y, sw, fit_kwargs, train, test)
                for train, test in splits)
            self.estimators_ = [p[0] for p in pairs]
            self.recalibrators_ = [p[1] for p in pairs]
        else:
            oof = Parallel(n_jobs=self.n_jobs)(
                delayed(self._fold_predictions)(clone(estimator), X, y, fit_kwargs, train, test)
                for train, test in splits)
            test_idx = np.concatenate([test for _, test in splits])
            if np.unique(test_idx).size != len(y) or test_idx.size != len(y):
                raise ValueError("ensemble=False needs a cv whose test folds partition the "
                                 "samples (e.g. KFold).")
            order = np.argsort(test_idx, kind="stable")
            scores = self._stack(oof)[order]
            final = clone(estimator).fit(X, y, **fit_kwargs)
            self.estimators_ = [final]
            self.recalibrators_ = [self._new_recalibrator().fit(scores, y, sample_weight=sw)]
        return self._finish()

    def _check_folds(self, cv, y):
        pass

    def _default_cv(self, y):
        return DEFAULT_N_FOLDS

    def _finish(self):
        first = self.estimators_[0]
        for attr in ("n_features_in_", "feature_names_in_"):
            if hasattr(first, attr):
                setattr(self, attr, getattr(first, attr))
        return self

    def _fit_pair(self, estimator, X, y, sw, fit_kwargs, train, test):
        params = check_method_params(X, fit_kwargs, indices=train)
        estimator.fit(safe_indexing(X, train), safe_indexing(y, train), **params)
        recal = self._fit_recalibrator(estimator, safe_indexing(X, test), safe_indexing(y, test),
                                       None if sw is None else sw[test])
        return estimator, recal

    def _fold_predictions(self, estimator, X, y, fit_kwargs, train, test):
        params = check_method_params(X, fit_kwargs, indices=train)
        estimator.fit(safe_indexing(X, train), safe_indexing(y, train), **params)
        self._check_fitted_fold(estimator)
        return self._scores(estimator, safe_indexing(X, test))

    def _fit_recalibrator(self, estimator, X, y, sw):
        self._check_fitted_fold(estimator)
        recal = self._new_recalibrator()
        return recal.fit(self._scores(estimator, X), y, sample_weight=sw)

    def _check_fitted_fold(self, estimator):
        pass


class RecalibratedClassifier(ClassifierMixin, _RecalibratedBase):
    """A classifier whose probabilities are recalibrated by a cross-fitted recalibrator.

    Like :class:`sklearn.calibration.CalibratedClassifierCV`, with any recalibrator (default:
    :class:`TemperatureScaling`, fitted exactly) and logits passed to it whenever the classifier
    has a ``decision_function``.

    Parameters
    ----------
    estimator : classifier, default=None
        The model to recalibrate (default: ``LogisticRegression()``). Wrap a fitted model in
        :class:`~sklearn.frozen.FrozenEstimator` to recalibrate it without refitting
        (``cv="prefit"``, removed from scikit-learn 1.9, is refused with this advice).
    recalibrator : estimator or str, default=None
        Fitted on ``(scores, y)`` of held-out data, it must provide ``predict_proba(scores)``;
        default ``TemperatureScaling()``. A name selects a method with its defaults:
        ``"temperature"``, ``"platt"`` (also scikit-learn's ``"sigmoid"``), ``"beta"``,
        ``"vector"``, ``"matrix"``, ``"dirichlet"``, ``"isotonic"``, ``"histogram"``,
        ``"scaling_binning"``, ``"venn_abers"`` or ``"none"`` (so that ``GridSearchCV`` can
        search over methods; a randomised method, ``"scaling_binning"``, is built with
        ``random_state=0``). ``"none"`` (:class:`IdentityRecalibration`) is no recalibration,
        the baseline of such a grid: the model is fitted once on all the data (``cv`` and
        ``ensemble`` are not used; a ``FrozenEstimator`` is not refitted) and, with
        ``method="auto"``, its own ``predict_proba`` is returned exactly. A recalibrator with
        ``input="auto"`` is told which kind of scores it receives, and one with a ``labels``
        parameter gets ``classes_``. The names are the keys of
        ``skcalib.recalibration.CLASSIFIER_RECALIBRATORS``.
    cv : int, cross-validation splitter or iterable, default=None
        Folds for cross-fitting. ``None``: 5-fold stratified, or as many folds as the smallest
        class has samples when that is fewer (at least 2), so that every fold holds every
        class. ``"prefit"`` is refused: wrap a fitted model in ``FrozenEstimator``.
    ensemble : bool or "auto", default="auto"
        ``True``: one (model, recalibrator) pair per fold, probabilities averaged.
        ``False``: one recalibrator on the out-of-fold scores of all samples, and the model
        refitted on all data. ``"auto"``: ``False`` for a ``FrozenEstimator``, else ``True``.
    method : {"auto", "decision_function", "predict_proba"}, default="auto"
        Scores fed to the recalibrator; ``"auto"`` prefers ``decision_function`` (logits). A
        method the estimator lacks is a ``ValueError`` at ``fit``, before any fold is fitted.
    n_jobs : int, default=None
        Folds fitted in parallel (joblib; -1 for every CPU, at most 2**15 in magnitude).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    estimators_ : list of fitted classifiers
    recalibrators_ : list of fitted recalibrators
        ``estimators_[k]`` and ``recalibrators_[k]`` form one pair.
    method_ : str
        The response method used.
    n_features_in_ : int
        Copied from the estimator when it has it.

    See Also
    --------
    TemperatureScaling : the default recalibrator.
    RecalibratedRegressor : the same for predictive distributions.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skcalib.recalibration import RecalibratedClassifier
    >>> X, y = make_classification(n_samples=600, random_state=0)
    >>> clf = RecalibratedClassifier(GaussianNB(), cv=3).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape, len(clf.recalibrators_)
    ((2, 2), 3)
    """

    def __init__(self, estimator=None, recalibrator=None, *, cv=None, ensemble="auto",
                 method="auto", n_jobs=None):
        super().__init__(estimator, recalibrator, cv=cv, ensemble=ensemble, n_jobs=n_jobs)
        self.method = method

    _recalibrator_method = "predict_proba"
    _recalibrator_registry = CLASSIFIER_RECALIBRATORS

    def _default_estimator(self):
        return LogisticRegression()

    def fit(self, X, y, sample_weight=None, **fit_params):
        """Fit the model(s) and the recalibrator(s).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features, as the estimator takes them.
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Used by the recalibrator, and passed to the estimator's ``fit`` when it accepts it
            (or as routed, with metadata routing enabled).
        **fit_params : dict
            Passed to the estimator's ``fit``.

        Returns
        -------
        self : RecalibratedClassifier
        """
        check_option(self.method, "method", _METHODS)
        self._check_params()
        estimator = self._get_estimator()
        method = self.method
        if (method == "auto" and isinstance(self._recalibrator_template(), IdentityRecalibration)
                and hasattr(estimator, "predict_proba")):
            method = "predict_proba"  # no recalibration: the model's own probabilities
        method = _resolve_method(estimator, method)
        check_X_container(X, ragged=False)
        self.classes_, _ = check_class_labels(y, num_samples(X), name="y", X_shape=_shape(X))
        y_arr = np.asarray(y) if not hasattr(y, "iloc") else y.to_numpy()
        check_classification_targets(y_arr)
        self.method_ = method
        return self._fit(X, y_arr, sample_weight, fit_params)

    def _default_cv(self, y):
        # 5 folds, or as many as the smallest class has samples (each fold needs every class)
        smallest = np.unique(y, return_counts=True)[1].min()
        return int(max(2, min(DEFAULT_N_FOLDS, smallest)))

    def _check_folds(self, cv, y):
        n_splits = cv.get_n_splits() if hasattr(cv, "get_n_splits") else None
        counts = np.unique(y, return_counts=True)[1]
        if n_splits and counts.min() < n_splits:
            raise ValueError(f"cv has {n_splits} folds but a class of y has only "
                             f"{counts.min()} sample(s); every fold needs every class.")

    def _check_fitted_fold(self, estimator):
        classes = getattr(estimator, "classes_", None)
        if classes is None or not np.array_equal(np.asarray(classes), self.classes_):
            raise ValueError(
                f"the fitted estimator's classes_ {None if classes is None else list(classes)} "
                f"differ from the classes of y {self.classes_.tolist()}; every training fold "
                "must contain every class (use a stratified cv or fewer folds).")

    def _new_recalibrator(self):
        recal = self._recalibrator_template()
        recal = clone(recal if recal is not None else TemperatureScaling())
        params = recal.get_params(deep=False)
        if params.get("input") == "auto":
            recal.set_params(input="proba" if self.method_ == "predict_proba" else "logits")
        if "labels" in params and params["labels"] is None:
            recal.set_params(labels=self.classes_)
        return recal

    def _scores(self, estimator, X):
        return getattr(estimator, self.method_)(X)

    @staticmethod
    def _stack(parts):
        return np.concatenate(parts)

    def predict_proba(self, X):
        """Recalibrated probabilities, averaged over the (model, recalibrator) pairs.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features, as the estimator takes them.

        Returns
        -------
        P : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        check_X_container(X, ragged=False)
        P = 0.0
        for est, recal in zip(self.estimators_, self.recalibrators_):
            P = P + recal.predict_proba(self._scores(est, X))
        return P / len(self.estimators_)

    def predict(self, X):
        """The class with the largest recalibrated probability.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features, as the estimator takes them.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        P = self.predict_proba(X)
        return self.classes_[np.argmax(P, axis=1)]


def _pool_folds(dists):
    """The folds' predictions combined with equal weights: one :class:`Empirical` holding every
    fold's draws (the exact mixture), the level-by-level average of :class:`Quantiles` (quantile
    averaging: a mixture of such laws is not one), else a :class:`Mixture`."""
    K = len(dists)
    if all(isinstance(d, Empirical) for d in dists):
        return Empirical(np.hstack([d.samples for d in dists]),
                         np.hstack([d.weights for d in dists]) / K)
    if all(isinstance(d, Quantiles) for d in dists):
        both = concatenate(dists)   # every fold's rows at the union of the levels (exact)
        n = dists[0].n_samples
        return Quantiles(both.values.reshape(K, n, -1).mean(axis=0), both.levels)
    weights, comps = [], []
    for d in dists:
        if isinstance(d, Mixture):
            weights.append(d.weights / K)
            comps.extend(d.components)
        else:
            weights.append(np.full((d.n_samples, 1), 1.0 / K))
            comps.append(d)
    return Mixture(np.hstack(weights), comps)


class RecalibratedRegressor(RegressorMixin, _RecalibratedBase):
    """A probabilistic regressor whose predictive distributions are recalibrated.

    The model's predictions (``predict(X, return_std=True)`` as Normal distributions, or a
    ``predict_distribution`` method, see :func:`skcalib.scorers.predict_distribution`) on
    held-out folds train the recalibrator (default :class:`DistributionTemperatureScaling`,
    whose NLL optimum is closed-form). The means are never changed by temperature scaling.

    Parameters
    ----------
    estimator : regressor, default=None
        The model (default ``BayesianRidge()``); a
        :class:`~sklearn.frozen.FrozenEstimator` is not refitted. A
        classifier, or a regressor without predictive distributions, is a ``TypeError`` at
        ``fit``.
    recalibrator : estimator or str, default=None
        Fitted on ``(distributions, y)``; its ``transform`` must return distributions
        (default ``DistributionTemperatureScaling()``). A name selects a method with its
        defaults: ``"temperature"`` (:class:`DistributionTemperatureScaling`), ``"quantile"``
        (:class:`QuantileRecalibration`), ``"cqr"`` (:class:`ConformalQuantileRecalibration`,
        for ``Quantiles`` predictions), ``"spread"`` (:class:`SpreadScaling`, for ``Empirical``
        ensembles) or ``"none"``
        (:class:`DistributionIdentityRecalibration`: no recalibration, the model fitted once on
        all the data, its predictive distributions returned exactly; ``cv`` and ``ensemble``
        are then not used).
    cv : int, cross-validation splitter or iterable, default=None
        Folds for cross-fitting (``None``: 5-fold). ``"prefit"`` is refused: wrap a fitted
        model in ``FrozenEstimator``.
    ensemble : bool or "auto", default="auto"
        ``True``: one (model, recalibrator) pair per fold; the prediction is their equally
        weighted mixture (for ``Empirical`` predictions one ``Empirical`` holding every fold's
        draws, which is that mixture; for ``Quantiles`` the folds' quantiles averaged level by
        level, as a mixture of quantile predictions is not one). ``False``: one recalibrator on the out-of-fold predictions of all
        samples and the model refitted on all data. ``"auto"``: ``False`` for a
        ``FrozenEstimator``, else ``True``.
    n_jobs : int, default=None
        Folds fitted in parallel (joblib; -1 for every CPU, at most 2**15 in magnitude).

    Attributes
    ----------
    estimators_ : list of fitted regressors
    recalibrators_ : list of fitted recalibrators
    n_features_in_ : int

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from skcalib.recalibration import RecalibratedRegressor
    >>> X, y = load_diabetes(return_X_y=True)
    >>> reg = RecalibratedRegressor(cv=3, ensemble=False).fit(X, y)
    >>> mean, std = reg.predict(X[:2], return_std=True)
    >>> mean.shape, std.shape
    ((2,), (2,))
    """

    _recalibrator_method = "transform"
    _recalibrator_registry = REGRESSOR_RECALIBRATORS

    def _default_estimator(self):
        return BayesianRidge()

    def fit(self, X, y, sample_weight=None, **fit_params):
        """Fit the model(s) and the recalibrator(s).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features, as the estimator takes them.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Real targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Used by the recalibrator, and passed to the estimator's ``fit`` when it accepts it.
        **fit_params : dict
            Passed to the estimator's ``fit``.

        Returns
        -------
        self : RecalibratedRegressor
        """
        self._check_params()
        estimator = self._get_estimator()
        if is_classifier(estimator):
            raise TypeError(f"estimator must be a probabilistic regressor; "
                            f"{type(estimator).__name__} is a classifier (recalibrate it with "
                            "RecalibratedClassifier).")
        _check_distribution_capable(estimator)
        check_X_container(X, ragged=False)
        if y is None:
            raise ValueError("RecalibratedRegressor requires y to be passed, but the target y is "
                             "None.")
        check_numeric(y, "y")
        try:
            y_arr = check_array(y, ensure_2d=False, dtype=np.float64, input_name="y")
        except ValueError as exc:
            msg = str(exc).strip().split("\n")[0]
            raise ValueError(msg if "y" in msg.split() else
                             f"y must hold real targets: {msg}") from None
        n = num_samples(X)
        if y_arr.shape[0] != n:
            raise ValueError(length_mismatch_message(y_arr.shape, n, "y", _shape(X)))
        recal = self._recalibrator_template()
        if y_arr.ndim == 2 and y_arr.shape[1] > 1 and isinstance(recal, QuantileRecalibration):
            # (its own message would speak of X: here that is the model's predictions)
            raise ValueError(
                f"y has {y_arr.shape[1]} outputs, so the model's predictive distributions are "
                "multivariate, but recalibrator=QuantileRecalibration ('quantile') recalibrates "
                "univariate ones; use recalibrator='temperature', or one RecalibratedRegressor "
                "per output.")
        return self._fit(X, y_arr, sample_weight, fit_params)

    def _new_recalibrator(self):
        recal = self._recalibrator_template()
        return clone(recal if recal is not None else DistributionTemperatureScaling())

    def _scores(self, estimator, X):
        return predict_distribution(estimator, X)

    @staticmethod
    def _stack(parts):
        return concatenate(parts)

    def predict_distribution(self, X):
        """Recalibrated predictive distributions (a mixture over the pairs when ensembling).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features, as the estimator takes them.

        Returns
        -------
        Distribution
        """
        check_is_fitted(self)
        check_X_container(X, ragged=False)
        dists = [recal.transform(predict_distribution(est, X))
                 for est, recal in zip(self.estimators_, self.recalibrators_)]
        if len(dists) == 1:
            return dists[0]
        return _pool_folds(dists)

    def predict(self, X, return_std=False):
        """Predicted means and, with ``return_std=True``, recalibrated standard deviations.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features, as the estimator takes them.
        return_std : bool, default=False
            Also return the standard deviations of the recalibrated distributions.

        Returns
        -------
        mean : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        std : ndarray of shape (n_samples,) or (n_samples, n_outputs)
            Only with ``return_std=True``.
        """
        check_bool(return_std, "return_std")
        dist = self.predict_distribution(X)
        mean = np.array(dist.mean)
        if not return_std:
            return mean
        return mean, np.sqrt(dist.variance)


class PredictionTransformer(TransformerMixin, MetaEstimatorMixin, BaseEstimator):
    """Expose a model's scores or predictive distributions as the output of a pipeline step.

    Place it before a recalibrator::

        Pipeline([("model", PredictionTransformer(FrozenEstimator(clf))),
                  ("ts", TemperatureScaling())])

    Fitting the pipeline then fits only the temperature (on the data passed to ``fit``); the
    frozen model is not refitted. With an unfrozen model the pipeline would fit the model and its
    recalibrator on the same data, which recalibrates the model's *training* scores -- use
    :class:`RecalibratedClassifier` for cross-fitting instead.

    Parameters
    ----------
    estimator : estimator
        A classifier or a probabilistic regressor (typically a ``FrozenEstimator``).
    method : {"auto", "decision_function", "predict_proba", "predict_distribution"}, \
default="auto"
        Output of :meth:`transform`. ``"auto"``: ``decision_function`` (logits) for classifiers
        that have one, else ``predict_proba``; for regressors the predictive distributions (see
        :func:`skcalib.scorers.predict_distribution`), which
        :class:`DistributionTemperatureScaling` accepts.

    Attributes
    ----------
    estimator_ : estimator
        The fitted (or frozen) model.
    method_ : str

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.frozen import FrozenEstimator
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from skcalib.recalibration import PredictionTransformer, TemperatureScaling
    >>> X, y = make_classification(n_samples=400, random_state=0)
    >>> clf = LogisticRegression().fit(X[:200], y[:200])
    >>> pipe = make_pipeline(PredictionTransformer(FrozenEstimator(clf)), TemperatureScaling())
    >>> pipe.fit(X[200:], y[200:]).predict_proba(X[:1]).shape
    (1, 2)
    """

    def __init__(self, estimator, *, method="auto"):
        self.estimator = estimator
        self.method = method

    def fit(self, X, y=None, **fit_params):
        """Fit the model (a no-op for a ``FrozenEstimator``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features, as the estimator takes them.
        y : array-like of shape (n_samples,), default=None
            Targets of the estimator.
        **fit_params : dict
            Passed to the estimator's ``fit``.

        Returns
        -------
        self : PredictionTransformer
        """
        check_option(self.method, "method", _TRANSFORM_METHODS)
        if self.estimator is None:
            raise TypeError("estimator must be a scikit-learn estimator (with a fit method); got "
                            "None.")
        _check_estimator_param(self.estimator)
        if self.method == "predict_distribution" or (self.method == "auto"
                                                     and not is_classifier(self.estimator)):
            _check_distribution_capable(self.estimator)
            method = "predict_distribution"
        else:
            method = _resolve_method(self.estimator, self.method)
        check_X_container(X, ragged=False)
        est = clone(self.estimator)
        est.fit(X, y, **fit_params)
        self.estimator_ = est
        self.method_ = method
        for attr in ("n_features_in_", "feature_names_in_"):
            if hasattr(est, attr):
                setattr(self, attr, getattr(est, attr))
        return self

    def transform(self, X):
        """The model's scores (or distributions) for ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features, as the estimator takes them.

        Returns
        -------
        ndarray of shape (n_samples, n_classes) or (n_samples,), or Distribution
            The output of ``method_`` (a DataFrame with the columns
            :meth:`get_feature_names_out` after ``set_output(transform="pandas")``, except for
            distributions, which are returned as they are).
        """
        check_is_fitted(self)
        check_X_container(X, ragged=False)
        if self.method_ == "predict_distribution":
            return predict_distribution(self.estimator_, X)
        return getattr(self.estimator_, self.method_)(X)

    def fit_transform(self, X, y=None, **fit_params):
        """:meth:`fit`, then :meth:`transform` of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features, as the estimator takes them.
        y : array-like of shape (n_samples,), default=None
            Targets of the estimator.
        **fit_params : dict
            Passed to the estimator's ``fit``.

        Returns
        -------
        ndarray or Distribution
        """
        return self.fit(X, y, **fit_params).transform(X)

    def get_feature_names_out(self, input_features=None):
        """Names of the columns of :meth:`transform`, after the classes of the estimator.

        ``"proba_<label>"`` for ``predict_proba``, ``"decision_<label>"`` for a multiclass
        ``decision_function`` and ``["decision_<classes_[1]>"]`` for a binary one (the log-odds of
        the positive class). Distributions have no columns (``ValueError``).

        Parameters
        ----------
        input_features : array-like of str, default=None
            Names of the estimator's input features; only their number is checked.

        Returns
        -------
        feature_names_out : ndarray of str objects
        """
        check_is_fitted(self)
        if self.method_ == "predict_distribution":
            raise ValueError("transform returns predictive distributions (method_="
                             "'predict_distribution'), which have no column names.")
        if input_features is not None and hasattr(self, "n_features_in_"):
            check_input_features(input_features, self.n_features_in_)
        classes = getattr(self.estimator_, "classes_", None)
        if classes is None:
            raise ValueError(f"the estimator {type(self.estimator_).__name__} has no classes_ "
                             "to name the columns of its scores after.")
        prefix = "proba" if self.method_ == "predict_proba" else "decision"
        if prefix == "decision" and len(classes) == 2:
            classes = classes[1:]
        return np.asarray([f"{prefix}_{c}" for c in classes], dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = get_tags(self.estimator).input_tags.sparse
        return tags


def _transforms_to_distributions(transformer, X):
    # from the parameters, which decide method_ at fit (so that fit_transform can ask first)
    return transformer.method == "predict_distribution" or (
        transformer.method == "auto" and not is_classifier(transformer.estimator))


pass_distributions_through_set_output(PredictionTransformer, _transforms_to_distributions)
