"""The one place where skcalib touches scikit-learn beyond its public API.

Private helpers of scikit-learn (names starting with ``_``, or anything in a private module
``sklearn.*._x``) change without deprecation between releases; imports of them are what broke
other calibration packages on a scikit-learn upgrade. skcalib therefore imports them here and
nowhere else (``tests/house/test_sklearn_compat.py`` checks that no other module does), each
wrapped in
a function with a fallback of its own for a release that no longer has it, and with a test that
the wrapper behaves as expected on the installed scikit-learn (scikit-learn >= 1.6 is supported).

* :func:`routing_enabled` -- whether metadata routing is on (public: ``sklearn.get_config()``).
* :func:`num_samples` -- the number of samples of an array-like, DataFrame or sparse matrix.
* :func:`safe_indexing` -- rows of an array-like, DataFrame, sparse matrix or list.
* :func:`check_method_params` -- the rows of fit parameters that are per-sample (the others
  passed through), as a cross-validation fold needs them.
* :func:`check_feature_names` -- ``feature_names_in_`` (public ``validate_data``).
* :class:`ScoreRequestMixin` -- ``set_score_request`` and ``get_metadata_routing`` for a scorer
  callable, on the public :class:`~sklearn.utils.metadata_routing.MetadataRequest`.

This module sits at the bottom of skcalib's layers: it imports nothing from skcalib.
"""

import numbers

import numpy as np
import scipy.sparse as sp
import sklearn
from sklearn.utils.metadata_routing import MetadataRequest
from sklearn.utils.validation import validate_data

try:  # scikit-learn's own implementations, where this release has them
    from sklearn.utils import _safe_indexing as _sk_safe_indexing
except ImportError:  # pragma: no cover - a future scikit-learn
    _sk_safe_indexing = None
try:
    from sklearn.utils.validation import _num_samples as _sk_num_samples
except ImportError:  # pragma: no cover - a future scikit-learn
    _sk_num_samples = None
try:
    from sklearn.utils.validation import _check_method_params as _sk_check_method_params
except ImportError:  # pragma: no cover - a future scikit-learn
    _sk_check_method_params = None

__all__ = ["routing_enabled", "num_samples", "safe_indexing", "check_method_params",
           "check_feature_names", "ScoreRequestMixin"]


def routing_enabled():
    """Whether metadata routing is enabled (``sklearn.set_config(enable_metadata_routing=True)``).

    Returns
    -------
    bool
    """
    return bool(sklearn.get_config().get("enable_metadata_routing", False))


def _num_samples_fallback(x):
    """``num_samples`` without scikit-learn's private helper."""
    message = f"Expected sequence or array-like, got {type(x)}"
    if hasattr(x, "fit") and callable(x.fit):  # an estimator, not data
        raise TypeError(message)
    shape = getattr(x, "shape", None)
    if shape is not None:
        if len(shape) == 0:
            raise TypeError(f"Input should have at least 1 dimension; got scalar {x!r}.")
        if isinstance(shape[0], numbers.Integral):
            return int(shape[0])
    if not hasattr(x, "__len__"):
        if hasattr(x, "__array__"):
            return _num_samples_fallback(np.asarray(x))
        raise TypeError(message)
    try:
        return len(x)
    except TypeError as exc:
        raise TypeError(message) from exc


def num_samples(x):
    """Number of samples (rows) of an array-like, DataFrame, sparse matrix or list.

    Parameters
    ----------
    x : array-like, DataFrame or sparse matrix

    Returns
    -------
    int

    Raises
    ------
    TypeError
        For scalars, estimators and objects without a length.
    """
    if _sk_num_samples is not None:
        return _sk_num_samples(x)
    return _num_samples_fallback(x)  # pragma: no cover - a future scikit-learn


def _safe_indexing_fallback(X, indices):
    """``safe_indexing`` (rows only) without scikit-learn's private helper."""
    if indices is None:
        return X
    if hasattr(X, "iloc"):  # pandas
        idx = np.asarray(indices)
        return X.iloc[np.flatnonzero(idx) if idx.dtype == bool else idx]
    if hasattr(X, "shape") and not isinstance(X, (list, tuple)):
        if sp.issparse(X) and X.format not in ("csr", "csc", "lil"):
            X = X.tocsr()
        return X[np.asarray(indices)]
    idx = np.asarray(indices)
    if idx.dtype == bool:
        idx = np.flatnonzero(idx)
    return [X[int(i)] for i in idx]


def safe_indexing(X, indices):
    """Rows ``indices`` of ``X`` (array, DataFrame, Series, sparse matrix or list).

    Parameters
    ----------
    X : array-like, DataFrame, Series, sparse matrix or list
    indices : array-like of int or bool, or None
        Row positions (or a boolean mask); None returns ``X``.

    Returns
    -------
    Rows of ``X``, of ``X``'s type.
    """
    if _sk_safe_indexing is not None:
        return _sk_safe_indexing(X, indices)
    return _safe_indexing_fallback(X, indices)  # pragma: no cover - a future scikit-learn


def _is_arraylike(x):
    return (hasattr(x, "__len__") or hasattr(x, "shape") or hasattr(x, "__array__")) and not (
        isinstance(x, (str, bytes)))


def _check_method_params_fallback(X, params, indices=None):
    """``check_method_params`` without scikit-learn's private helper."""
    n = num_samples(X)
    out = {}
    for key, value in params.items():
        per_sample = (_is_arraylike(value) or sp.issparse(value)) and not isinstance(value, dict)
        if per_sample:
            try:
                per_sample = num_samples(value) == n
            except TypeError:
                per_sample = False
        if not per_sample:
            out[key] = value  # passed through unchanged (as scikit-learn does)
            continue
        if sp.issparse(value):
            value = value.tocsr()
        elif not (hasattr(value, "__getitem__") or hasattr(value, "iloc")):
            value = np.asarray(value)
        out[key] = safe_indexing(value, indices)
    return out


def check_method_params(X, params, indices=None):
    """The fit parameters for rows ``indices`` of ``X``: per-sample ones indexed, others as given.

    A parameter is per-sample when it is array-like with as many entries as ``X`` has rows.

    Parameters
    ----------
    X : array-like
        The data the parameters belong to.
    params : dict
        Parameter name to value.
    indices : array-like of int, default=None
        Rows to keep; None keeps all.

    Returns
    -------
    dict
    """
    if _sk_check_method_params is not None:
        return _sk_check_method_params(X, params=params, indices=indices)
    return _check_method_params_fallback(X, params, indices)  # pragma: no cover


def check_feature_names(estimator, X, *, reset):
    """Set (``reset=True``, at ``fit``) or check (at predict time) ``feature_names_in_``.

    At ``fit``, an ``X`` with string column names (a DataFrame) sets ``feature_names_in_`` and
    any other ``X`` deletes it; later, scikit-learn's checks apply (an error for other column
    names, a warning for names missing on one side). ``X`` is not converted and
    ``n_features_in_`` is left to the estimator (whose ``X`` may be 1-D scores or a
    distribution object).

    Parameters
    ----------
    estimator : estimator
    X : object
        The estimator's input, as the user passed it.
    reset : bool
        True in ``fit``.
    """
    validate_data(estimator, X, reset=reset, skip_check_array=True, ensure_2d=False)


_ROUTING_OFF = ("This method is only available when metadata routing is enabled. You can enable "
                "it using sklearn.set_config(enable_metadata_routing=True).")


class ScoreRequestMixin:
    """``set_score_request`` and ``get_metadata_routing`` for a scorer callable.

    As scikit-learn's scorers: with metadata routing enabled,
    ``scorer.set_score_request(sample_weight=True)`` asks :func:`~sklearn.model_selection.
    cross_validate`, :class:`~sklearn.model_selection.GridSearchCV` and the like to pass the
    ``sample_weight`` they are given to the scorer. A subclass lists the parameters its
    ``__call__`` accepts in ``_routable_params()`` and those it requests without being asked in
    ``_default_score_requests``.
    """

    #: ``{param: alias}`` requested by default (e.g. the KLCE scorer's audit features).
    _default_score_requests = {}

    def _routable_params(self):
        return set(self._default_score_requests) | {"sample_weight"}

    def set_score_request(self, **kwargs):
        """Request metadata passed to the scorer (metadata routing only).

        Parameters
        ----------
        **kwargs : {True, False, None, str}
            ``param=alias`` for each parameter of the scorer, e.g. ``sample_weight=True``
            (requested), ``False`` (not requested), ``None`` (an error if passed) or a string
            (requested under another name).

        Returns
        -------
        self
        """
        if not routing_enabled():
            raise RuntimeError(_ROUTING_OFF)
        accepted = self._routable_params()
        unknown = sorted(set(kwargs) - accepted)
        if unknown:
            raise TypeError(f"set_score_request got unexpected argument(s) {unknown}; this "
                            f"scorer accepts {sorted(accepted)}.")
        requests = {**getattr(self, "_requests", {}), **kwargs}
        self._build_request(requests)  # scikit-learn validates each alias
        self._requests = requests
        return self

    def _build_request(self, requests):
        request = MetadataRequest(owner=type(self).__name__)
        for param, alias in {**self._default_score_requests, **requests}.items():
            request.score.add_request(param=param, alias=alias)
        return request

    def get_metadata_routing(self):
        """The metadata the scorer requests (see :meth:`set_score_request`).

        Returns
        -------
        sklearn.utils.metadata_routing.MetadataRequest
        """
        return self._build_request(getattr(self, "_requests", {}))
