"""Input and parameter checks shared by the recalibrators and meta-estimators.

Every public method (``fit``, ``transform``, ``predict*``, ``score``) of the recalibration
estimators passes its ``X`` through :func:`check_X_container` first, so that ``None``, scalars,
strings, dicts, sets and ragged lists get the same message, naming ``X``, whichever method
receives them.
"""

from numbers import Number

import numpy as np

from .._validation import check_not_model, check_scores
from ..distributions import as_distribution

#: What the ``X`` of a classifier recalibrator is, and what to do when a model is passed as ``X``.
CLASSIFIER_PREDICTIONS = ("a classifier's predictions: probabilities or logits of shape "
                          "(n_samples,) or (n_samples, n_classes)")
CLASSIFIER_HINT = ("pass model.predict_proba(X) (or decision_function(X)) instead, or let "
                   "RecalibratedClassifier(model, recalibrator=...) fit the model and the "
                   "recalibrator together")
#: The same for the recalibrators of predictive distributions.
DISTRIBUTION_PREDICTIONS = ("predictive distributions: a skcalib distribution (Normal, ...) or an "
                            "array of shape (n_samples, 2) of predicted means and standard "
                            "deviations")
DISTRIBUTION_HINT = ("pass skcalib.scorers.predict_distribution(model, X) instead, or let "
                     "RecalibratedRegressor(model, recalibrator=...) fit the model and the "
                     "recalibrator together")


def _is_ragged(X):
    """A list or tuple whose rows have different lengths (numpy cannot make it rectangular)."""
    if not isinstance(X, (list, tuple)):
        return False
    try:
        np.shape(X)
    except ValueError:
        return True
    return False


def check_X_container(X, name="X", *, ragged=True):
    """Reject what can never be a sample matrix, with a message naming ``name``.

    ``None`` and ragged lists (unless ``ragged=False``) raise a ``ValueError``; scalars,
    strings, bytes, dicts and sets a ``TypeError``. Anything else is returned unchanged for the
    caller's own checks (the meta-estimators leave the rest to their estimator, which may accept
    lists of strings, say).
    """
    if X is None:
        raise ValueError(f"{name} must be an array-like of shape (n_samples, ...); got None.")
    check_not_model(X, name, "an array-like of shape (n_samples, ...)",
                    hint="the model goes in the estimator parameter, X holds its input features")
    if isinstance(X, (str, bytes, dict, set, frozenset, Number, np.generic)) or (
            isinstance(X, np.ndarray) and X.ndim == 0):
        raise TypeError(f"{name} must be an array-like of shape (n_samples, ...); got "
                        f"{type(X).__name__} {X!r:.60}.")
    if ragged and _is_ragged(X):
        raise ValueError(f"{name} must be a rectangular array-like of shape (n_samples, ...); "
                         "got a ragged sequence (rows of different lengths).")
    return X


def check_score_matrix(X, name="X", *, n_columns=None):
    """:func:`check_X_container`, then finite float64 scores (see ``check_scores``).

    A model passed as ``X`` gets the advice to pass its predictions.
    """
    check_not_model(X, name, CLASSIFIER_PREDICTIONS, hint=CLASSIFIER_HINT)
    check_X_container(X, name)
    return check_scores(X, name, n_columns=n_columns)


def check_distribution_predictions(X, name="X"):
    """``as_distribution(X, name)`` for the recalibrators of predictive distributions, with the
    advice to pass the predictions when ``X`` is a model."""
    check_not_model(X, name, DISTRIBUTION_PREDICTIONS, hint=DISTRIBUTION_HINT)
    return as_distribution(X, name)


def check_y_given(y, name="y"):
    """The message of ``check_class_labels`` for a missing target, for every estimator."""
    if y is None:
        raise ValueError(f"this estimator requires y to be passed, but the target {name} is None.")
    return y
