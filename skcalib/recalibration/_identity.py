"""No recalibration: the identity maps behind ``recalibrator="none"``.

A grid over ``recalibrator`` should be able to include "leave the model as it is": these
estimators return a classifier's probabilities, or a regressor's predictive distributions,
unchanged (and :class:`~skcalib.recalibration.RecalibratedClassifier` /
:class:`~skcalib.recalibration.RecalibratedRegressor` then fit the model once, on all the data,
so that the candidate is exactly the model itself).
"""

import numpy as np
from scipy.special import softmax
from sklearn.base import BaseEstimator, TransformerMixin

from .._expectations import check_targets
from .._sklearn_compat import check_feature_names
from .._validation import check_sample_weight
from ..distributions import Categorical, is_distribution
from ._base import ClassifierRecalibrator
from ._checks import check_distribution_predictions, check_y_given
from ._distribution import (DistributionRecalibratorMixin, DistributionTemperatureScaling,
                            pass_distributions_through_set_output)

__all__ = ["IdentityRecalibration", "DistributionIdentityRecalibration"]


class IdentityRecalibration(ClassifierRecalibrator):
    """No recalibration of a classifier's scores: probabilities pass through unchanged.

    Probabilities are returned as given (as float64), logits as their softmax (for the 1-D
    log-odds of a binary classifier, their sigmoid). ``recalibrator="none"`` of
    :class:`RecalibratedClassifier` selects it, so that a grid over recalibrators can include
    "no recalibration".

    Parameters
    ----------
    input : {"auto", "logits", "proba"}, default="auto"
        Kind of scores; ``"auto"`` reads rows of values in [0, 1] summing to one as
        probabilities.
    labels : array-like, default=None
        All class labels (for classes absent from ``y``), sorted as the score columns.
    eps : float, default=1e-12
        Probabilities are clipped at ``eps`` when turned into logits (not used for the output).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    input_ : str
        The kind of scores seen in ``fit``.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when fitted on a DataFrame with string column names.

    See Also
    --------
    RecalibratedClassifier : ``recalibrator="none"``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.recalibration import IdentityRecalibration
    >>> P = np.array([[0.9, 0.1], [0.3, 0.7], [0.6, 0.4]])
    >>> IdentityRecalibration().fit(P, [0, 1, 1]).predict_proba(P)
    array([[0.9, 0.1],
           [0.3, 0.7],
           [0.6, 0.4]])
    """

    def __init__(self, input="auto", *, labels=None, eps=1e-12):
        self.input = input
        self.labels = labels
        self.eps = eps

    def _fit_scores(self, S, L, y_idx, n_classes, w):
        pass

    def _proba(self, S, L):
        if self.input_ == "proba":
            return np.column_stack([1.0 - S, S]) if S.ndim == 1 else S.copy()
        return softmax(L, axis=1)


class DistributionIdentityRecalibration(DistributionRecalibratorMixin, TransformerMixin,
                                        BaseEstimator):
    """No recalibration of predictive distributions: they pass through unchanged.

    ``recalibrator="none"`` of :class:`RecalibratedRegressor` selects it, so that a grid over
    recalibrators can include "no recalibration". Like the other distribution recalibrators it
    takes distribution objects or ``[mean, std]`` arrays (Normal predictions), and checks that
    what it transforms is of the family seen in ``fit``.

    Attributes
    ----------
    family_ : str
        The family of the predictions seen in ``fit``.
    n_features_in_ : int
        2, when fitted on a ``[mean, std]`` array.
    feature_names_in_ : ndarray of str
        Only when fitted on a DataFrame with string column names.

    See Also
    --------
    RecalibratedRegressor : ``recalibrator="none"``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.distributions import Normal
    >>> from skcalib.recalibration import DistributionIdentityRecalibration
    >>> dist = Normal(np.array([0.0, 1.0]), np.array([1.0, 2.0]))
    >>> out = DistributionIdentityRecalibration().fit(dist, [0.1, 0.5]).transform(dist)
    >>> out is dist
    True
    """

    def fit(self, X, y, sample_weight=None):
        """Record the family of the predictions ``X`` (nothing is learned).

        Parameters
        ----------
        X : Distribution or array-like of shape (n_samples, 2)
            Predictive distributions, or Normal means and standard deviations.
        y : array-like of shape (n_samples,) or (n_samples, d)
            True targets (checked only).
        sample_weight : array-like of shape (n_samples,), default=None
            Checked only.

        Returns
        -------
        self : DistributionIdentityRecalibration
        """
        dist, from_array = check_distribution_predictions(X, "X")
        check_feature_names(self, X, reset=True)
        check_sample_weight(sample_weight, dist.n_samples)
        y = check_y_given(y)
        if isinstance(dist, Categorical):
            if len(np.asarray(y)) != dist.n_samples:
                raise ValueError(f"y has {len(np.asarray(y))} entries but X has "
                                 f"{dist.n_samples} predictions.")
        else:
            check_targets(y, dist, name="y")
        self._record_family(dist, from_array)
        return self

    def transform(self, X):
        """The predictions, unchanged (an array for an array, a distribution for a distribution).

        Parameters
        ----------
        X : Distribution or array-like of shape (n_samples, 2)
            Predictions of the family seen in ``fit``.

        Returns
        -------
        Distribution or ndarray of shape (n_samples, 2)
        """
        dist, from_array = self._fitted_predictions(X)
        return np.column_stack([dist.loc, dist.scale]) if from_array else dist

    def predict_distribution(self, X):
        """The predictions as a distribution object, unchanged.

        Parameters
        ----------
        X : Distribution or array-like of shape (n_samples, 2)
            Predictions of the family seen in ``fit``.

        Returns
        -------
        Distribution
        """
        return self._fitted_predictions(X)[0]

    # the same columns as temperature scaling's array output: ["mean", "std"]
    get_feature_names_out = DistributionTemperatureScaling.get_feature_names_out


pass_distributions_through_set_output(DistributionIdentityRecalibration,
                                      lambda self, X: is_distribution(X))
