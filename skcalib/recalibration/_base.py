"""The one base of skcalib's classifier recalibrators.

Every recalibrator of a classifier's scores -- temperature, Platt, vector, matrix and Dirichlet
scaling, beta calibration, isotonic regression, histogram and scaling-binning, Venn--Abers -- is
a :class:`ClassifierRecalibrator`: it takes one score column per class of ``classes_`` (or one
column for a binary problem), logits or probabilities (``input``), labels in ``y`` (any sortable
values; ``labels`` for classes absent from ``y``) and ``sample_weight``, and offers
``predict_proba``, ``predict_log_proba``, ``predict``, ``transform`` (for pipelines) and
``get_feature_names_out``. A method implements two hooks on validated arrays:

* ``_fit_scores(S, L, y_idx, n_classes, w)`` -- learn from the scores ``S`` as given (1-D or 2-D,
  of kind ``self.input_``), their logits ``L`` of shape ``(n, C)`` (see
  :func:`skcalib._problems.temperature.scores_to_logits`), class indices ``y_idx`` and weights
  ``w`` (None or validated non-negative weights);
* ``_proba(S, L)`` -- the recalibrated probabilities, shape ``(n, C)``.

The maps whose output is again logits (temperature, vector, matrix and Dirichlet scaling) derive
from :class:`LogitMapRecalibrator` instead and implement ``_logits(L)``: their probabilities are
its softmax, ``predict_log_proba`` its stable log-softmax, and ``decision_function`` returns it.

The method's own hyper-parameters are checked by ``_check_own_params`` (called by ``fit`` before
anything else; not to be confused with scikit-learn's private ``_check_method_params``, which
indexes the ``fit`` parameters and which skcalib reaches through
``skcalib._sklearn_compat.check_method_params``).
"""

import warnings

import numpy as np
from scipy.special import log_softmax, softmax
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._problems.temperature import scores_to_logits
from .._sklearn_compat import check_feature_names
from .._validation import (_check_no_missing, _input_dtype, _to_1d, check_class_labels,
                           check_option, check_sample_weight, check_scalar_param,
                           row_sum_tolerance, user_stacklevel)
from ._checks import check_score_matrix

__all__ = ["ClassifierRecalibrator", "looks_like_probabilities", "check_labels_param",
           "check_input_features", "check_logit_range"]

INPUTS = ("auto", "logits", "proba")


def looks_like_probabilities(S, dtype=None):
    """Scores that are probabilities: values in [0, 1] and (2-D) rows summing to one.

    ``dtype`` is the dtype the caller's scores came in (default ``S.dtype``): rows must sum to
    one within ``sqrt(eps)`` of it, as the metrics require (float32 and float16 probabilities
    are converted to float64 before this check, but keep their rounding).
    """
    if S.size == 0 or S.min() < 0 or S.max() > 1:
        return False
    tol = row_sum_tolerance(S.dtype if dtype is None else dtype)
    return S.ndim == 1 or bool(np.all(np.abs(S.sum(axis=1) - 1.0) <= tol))


def check_logit_range(S, name="X"):
    """Logits whose differences are finite: every method works with differences of logits (the
    softmax is shift-invariant), and ``1.8e308 - (-1.8e308)`` overflows. Logits of any finite
    magnitude with a finite range are accepted (the methods scale them as needed)."""
    if S.size == 0:
        return
    lo, hi = float(S.min()), float(S.max())
    if not np.isfinite(hi - lo):
        raise ValueError(
            f"{name} holds logits from {lo:.3g} to {hi:.3g}, whose differences overflow float64; "
            "logits are only defined up to a common shift, so rescale them (e.g. divide by "
            f"{max(abs(lo), abs(hi)):.0e}), or pass probabilities with input='proba'.")


#: With ``input="auto"``, scores read as logits although at least this share of their rows
#: (values, for 1-D scores) are probabilities get a warning: a few corrupted probabilities would
#: otherwise silently turn the whole matrix into logits.
ALMOST_PROBABILITIES = 0.9


def warn_almost_probabilities(S, dtype, name="X"):
    """Warn when ``S``, about to be read as logits by ``input="auto"``, is mostly probabilities."""
    if S.size == 0:
        return
    tol = row_sum_tolerance(dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        in_range = (S >= 0) & (S <= 1)
        if S.ndim == 2:
            ok = in_range.all(axis=1) & (np.abs(S.sum(axis=1) - 1.0) <= tol)
        else:
            ok = in_range
    n_bad = int(ok.size - np.count_nonzero(ok))
    if n_bad == 0 or n_bad > (1.0 - ALMOST_PROBABILITIES) * ok.size:
        return
    i = int(np.flatnonzero(~ok)[0])
    what = "rows" if S.ndim == 2 else "values"
    if S.ndim == 2:
        example = (f"row {i} = {np.array2string(S[i][:6], precision=4)} sums to "
                   f"{float(S[i].sum()):.6g}")
    else:
        example = f"value {i} is {float(S[i]):.6g}"
    warnings.warn(
        f"{name}: {n_bad} of {ok.size} {what} {'is' if n_bad == 1 else 'are'} not probabilities "
        f"({example}) while the others "
        "are; with input='auto' that makes every score of X a logit. If X holds probabilities, "
        "correct those entries (input='proba' refuses them with the reason); if it holds logits, "
        "pass input='logits'.", UserWarning, stacklevel=user_stacklevel())


def row_sum_problem(S, dtype):
    """Why ``S`` is not a probability matrix (for the error message of ``input="proba"``)."""
    if S.min() < 0 or S.max() > 1:
        return f"values range over [{float(S.min())!r}, {float(S.max())!r}]"
    dev = np.abs(S.sum(axis=1) - 1.0)
    i = int(np.argmax(dev))
    shown = np.dtype(dtype) if np.issubdtype(dtype, np.floating) else np.dtype(np.float64)
    return (f"row {i} sums to {float(S[i].sum())!r} (tolerance {row_sum_tolerance(dtype):.2g} "
            f"for {shown} input)")


def check_labels_param(labels):
    """The ``labels`` parameter: None, or distinct class labels without missing values."""
    if labels is None:
        return None
    lab = _to_1d(labels, "labels")
    _check_no_missing(lab, "labels")
    try:
        n_unique = np.unique(lab).size
    except TypeError:
        raise ValueError("labels contains values of mixed types that cannot be sorted.") from None
    if n_unique != lab.size:
        raise ValueError("labels contains duplicate values.")
    if n_unique < 2:
        raise ValueError(f"labels must contain at least 2 classes; got {lab.tolist()}.")
    return lab


def check_input_features(input_features, n_features_in):
    """``input_features`` of ``get_feature_names_out``: None or ``n_features_in`` names."""
    if input_features is None:
        return None
    if isinstance(input_features, (str, bytes)):
        raise TypeError("input_features must be an array-like of strings; got a string.")
    names = np.asarray(input_features, dtype=object)
    if names.ndim != 1 or names.size != n_features_in:
        raise ValueError(f"input_features should have length equal to the number of features "
                         f"seen in fit ({n_features_in}); got {names.size}.")
    return names


class ClassifierRecalibrator(ClassifierMixin, TransformerMixin, BaseEstimator):
    """Base class of the recalibrators of a classifier's scores (see the module docstring).

    Subclasses define ``__init__`` with at least ``input``, ``labels`` and ``eps`` (as
    :class:`~skcalib.recalibration.TemperatureScaling` does) and the hooks ``_fit_scores`` and
    ``_proba``; ``_check_own_params`` checks their other parameters.
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.one_d_array = True
        return tags

    # -- hooks -----------------------------------------------------------------------------

    def _check_own_params(self):
        """Check the method's own parameters (every one, whether or not used)."""

    def _fit_scores(self, S, L, y_idx, n_classes, w):  # pragma: no cover - abstract
        raise NotImplementedError

    def _proba(self, S, L):  # pragma: no cover - abstract
        raise NotImplementedError

    # -- validation ------------------------------------------------------------------------

    def _check_base_params(self):
        check_option(self.input, "input", INPUTS)
        check_scalar_param(self.eps, "eps", kind="real", min_val=0, include_min=False, max_val=0.5)
        self._check_own_params()
        return check_labels_param(self.labels)

    def _scores(self, X, *, fitting):
        """``(S, kind, L)``: the validated scores, their kind and their ``(n, C)`` logits."""
        check_feature_names(self, X, reset=fitting)
        # (scikit-learn's finiteness check sums X first: logits of +-1.8e308 give inf - inf, a
        # RuntimeWarning before the check itself -- or check_logit_range -- says what is wrong)
        with np.errstate(invalid="ignore", over="ignore"):
            S = check_score_matrix(X, "X", n_columns=None if fitting else self.n_features_in_)
        dtype = _input_dtype(X)
        if fitting:
            kind = self.input
            if kind == "auto":
                kind = "proba" if looks_like_probabilities(S, dtype) else "logits"
                if kind == "logits":
                    warn_almost_probabilities(S, dtype)
        else:
            kind = self.input_
        if kind == "proba" and not looks_like_probabilities(S, dtype):
            raise ValueError(
                "X must hold probabilities (values in [0, 1], rows summing to 1) for "
                "input='proba'" + ("" if fitting else " (the kind of scores seen in fit)")
                + f"; {row_sum_problem(S, dtype)}.")
        if kind == "logits":
            check_logit_range(S)
        return S, kind, scores_to_logits(S, kind, self.eps)

    def _validate_fit(self, X, y, sample_weight):
        """Validated ``(S, kind, L, classes, y_idx, w)`` for ``fit``."""
        labels = self._check_base_params()
        S, kind, L = self._scores(X, fitting=True)
        n = S.shape[0]
        classes, y_idx = check_class_labels(y, n, classes=labels, name="y", X_shape=S.shape)
        if L.shape[1] != classes.size:
            raise ValueError(
                f"X has {S.shape[1] if S.ndim == 2 else 1} column(s) but there are {classes.size} "
                f"classes {classes.tolist()[:10]}; pass one column per class (or one column for a "
                "binary problem), and `labels` if some are absent from y.")
        w = check_sample_weight(sample_weight, n)
        return S, kind, L, classes, y_idx, w

    def _set_fitted(self, S, kind, classes):
        self.classes_ = classes
        self.input_ = kind
        self.n_features_in_ = 1 if S.ndim == 1 else S.shape[1]

    # -- the estimator API -----------------------------------------------------------------

    def fit(self, X, y, sample_weight=None):
        """Fit the recalibration map on scores ``X`` and labels ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Logits or probabilities of a fitted classifier (see ``input``).
        y : array-like of shape (n_samples,)
            True labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the fitting objective.

        Returns
        -------
        self : object
        """
        S, kind, L, classes, y_idx, w = self._validate_fit(X, y, sample_weight)
        self._set_fitted(S, kind, classes)
        self._fit_scores(S, L, y_idx, classes.size, w)
        return self

    def predict_proba(self, X):
        """Recalibrated probabilities, one column per class of ``classes_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Scores of the kind seen in ``fit``.

        Returns
        -------
        P : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        S, _, L = self._scores(X, fitting=False)
        return self._proba(S, L)

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba` (``-inf`` for probability 0).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Scores of the kind seen in ``fit``.

        Returns
        -------
        log_P : ndarray of shape (n_samples, n_classes)
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X):
        """The most probable class under the recalibrated probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Scores of the kind seen in ``fit``.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        P = self.predict_proba(X)  # first: NotFittedError before classes_ is read
        return self.classes_[np.argmax(P, axis=1)]

    def transform(self, X):
        """Recalibrated probabilities (as :meth:`predict_proba`), for use as a pipeline step.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Scores of the kind seen in ``fit``.

        Returns
        -------
        P : ndarray of shape (n_samples, n_classes)
            A DataFrame with columns :meth:`get_feature_names_out` after
            ``set_output(transform="pandas")``.
        """
        return self.predict_proba(X)

    def get_feature_names_out(self, input_features=None):
        """Names of the columns of :meth:`transform`: ``"proba_<label>"`` per class of ``classes_``.

        Parameters
        ----------
        input_features : array-like of str, default=None
            Names of the score columns; only checked for their number (``n_features_in_``).

        Returns
        -------
        feature_names_out : ndarray of str objects
        """
        check_is_fitted(self)
        check_input_features(input_features, self.n_features_in_)
        return np.asarray([f"proba_{c}" for c in self.classes_], dtype=object)
class LogitMapRecalibrator(ClassifierRecalibrator):
    """Base of the recalibrators that map logits to logits (temperature, vector, matrix and
    Dirichlet scaling): a subclass implements ``_logits(L)``, the recalibrated logits of the
    scores' logits ``L`` (shape ``(n, C)``)."""

    def _logits(self, L):  # pragma: no cover - abstract
        raise NotImplementedError

    def _proba(self, S, L):
        return softmax(self._logits(L), axis=1)

    def decision_function(self, X):
        """Recalibrated logits (binary: the 1-D log-odds of ``classes_[1]``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Scores of the kind seen in ``fit``.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes) or (n_samples,)
        """
        check_is_fitted(self)
        _, _, L = self._scores(X, fitting=False)
        Z = self._logits(L)
        return Z[:, 1] - Z[:, 0] if Z.shape[1] == 2 else Z

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`, computed stably (log-softmax of the logits).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Scores of the kind seen in ``fit``.

        Returns
        -------
        log_P : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        _, _, L = self._scores(X, fitting=False)
        return log_softmax(self._logits(L), axis=1)


