"""Kernels on predictions and targets, tensor products and the median heuristic.

Conventions
-----------
* :class:`GaussianKernel` is ``exp(-d(x, y)**2 / (2 * length_scale**2))`` with the Euclidean
  distance ``d``. scikit-learn's ``rbf_kernel(X, Y, gamma)`` is ``exp(-gamma * d**2)``, so
  ``gamma = 1 / (2 * length_scale**2)``; KernelFunctions.jl's ``SqExponentialKernel()`` is
  ``length_scale=1``.
* :class:`ExponentialKernel` (also called Laplacian) is ``exp(-d(x, y) / length_scale)`` with
  ``d`` the Euclidean distance (``metric="euclidean"``, KernelFunctions.jl's ``ExponentialKernel()``)
  or the total-variation distance ``d = 0.5 * ||x - y||_1`` (``metric="tv"``, the kernel of
  Widmann et al. 2019). scikit-learn's ``laplacian_kernel`` uses the L1 distance, i.e. ``metric="tv"``
  with ``length_scale = 1 / (2 * gamma)``.
* :class:`DeltaKernel` is the white (Kronecker delta) kernel ``1{y == y'}`` on labels.
* :class:`WassersteinKernel` is ``exp(-(W2(p, p') / length_scale)**exponent)`` on predictive
  distributions (:mod:`skcalib.distributions`), Widmann et al. (2021, Eq. 4) with
  ``lambda = length_scale**-exponent`` and ``nu = exponent``.
* :class:`TensorProductKernel` is ``k((p, y), (p', y')) = k_pred(p, p') * k_target(y, y')``.
* ``length_scale="median"`` is resolved by :func:`median_heuristic` on the predictions only (never
  on labels, so that unbiased estimators stay conditionally unbiased) when a metric or estimator is
  fitted. The median is over pairs ``i < j`` of a bounded subsample (``max_samples``, default 1000):
  a deterministic evenly spaced subsample when ``random_state`` is None, a random one otherwise.
* Any positive finite length scale works: ``GaussianKernel(1e-300)`` gives the identity Gram matrix
  on distinct rows and ``GaussianKernel(1e300)`` a Gram matrix of ones (no NaN, no overflow), and
  :func:`pairwise_distances` is exact from 1e-300 to 1e300 (a power-of-two rescaling).
* :class:`WassersteinKernel` acts on any object with the distribution hooks (``n_samples``,
  ``_w2_squared``, ``_embedding``, ``_check_comparable``): this module never imports
  :mod:`skcalib.distributions`.
"""

import math
import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state

from ._validation import (
    _check_no_missing,
    check_2d_features,
    check_bool,
    check_numeric,
    check_option,
    check_random_state_param,
    check_scalar_param,
    user_stacklevel,
)

__all__ = [
    "GaussianKernel",
    "ExponentialKernel",
    "DeltaKernel",
    "TensorProductKernel",
    "WassersteinKernel",
    "KernelValidityWarning",
    "tensor",
    "median_heuristic",
    "pairwise_distances",
]

_METRICS = ("euclidean", "tv")


def pairwise_distances(X, Y=None, *, metric="euclidean"):
    """Distances between the rows of ``X`` and ``Y``.

    Parameters
    ----------
    X : array-like of shape (n_x, n_features)
        Finite real rows.
    Y : array-like of shape (n_y, n_features), default=None
        Defaults to ``X``.
    metric : {"euclidean", "tv"}, default="euclidean"
        ``"tv"`` is the total-variation distance ``0.5 * ||x - y||_1``.

    Returns
    -------
    ndarray of shape (n_x, n_y)

    Examples
    --------
    >>> from skcalib.kernels import pairwise_distances
    >>> pairwise_distances([[1.0, 0.0]], [[0.0, 1.0]], metric="tv")
    array([[1.]])
    """
    check_option(metric, "metric", _METRICS)
    X, Y = _features_pair(X, Y)
    return _distances(X, Y, metric)


def _not_an_array(X, name, what):
    """``TypeError`` naming ``name`` for a scalar, a string, a dict or a set where an array-like
    belongs (scikit-learn's ``_num_samples`` and numpy's ``float()`` errors named nothing)."""
    if isinstance(X, (str, bytes, dict, set, frozenset)) or (
            not hasattr(X, "__len__") and not hasattr(X, "shape")) or (
            getattr(X, "ndim", 1) == 0):
        raise TypeError(f"{name} must be an array-like of {what}; got {type(X).__name__} "
                        f"{X!r:.60}.")


def _features(X, name):
    """Finite float64 features of shape (n, d) (1-D input is one feature), through the shared
    :func:`~skcalib._validation.check_2d_features`. Scalars, dicts, sets and empty arrays are
    refused naming ``name``; strings and complex numbers are refused rather than converted
    (``"1"`` would silently become 1.0)."""
    check_numeric(X, name)  # first: a model passed as X is named as such
    _not_an_array(X, name, "real numbers of shape (n_samples, n_features)")
    if not hasattr(X, "columns"):  # DataFrames: check_array converts column by column
        try:
            raw = np.asarray(X)
        except (TypeError, ValueError):
            raw = None  # ragged: check_2d_features reports it
        if raw is not None and (raw.dtype.kind in "USc" or (raw.dtype.kind == "O" and any(
                isinstance(v, (str, bytes, complex, np.complexfloating)) for v in raw.ravel()))):
            raise TypeError(f"{name} must contain real numbers; got {raw.dtype} values (strings "
                            "and complex numbers are not converted).")
    return check_2d_features(X, name)


def _features_pair(X, Y):
    """``_features`` of ``X`` and ``Y`` (default ``X``) with the same number of columns."""
    X = _features(X, "X")
    Y = X if Y is None else _features(Y, "Y")
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"X and Y have different numbers of features: {X.shape[1]} and "
                         f"{Y.shape[1]}.")
    return X, Y


def _distances(X, Y, metric):
    """Distance matrix, free of overflow and underflow.

    Inputs whose magnitudes leave ``[1e-100, 1e100]`` are first scaled by a power of two (exact)
    that brings the largest to ``[2, 4)``, and the distances scaled back: squares of 1e300 would
    overflow and those of 1e-300 underflow. Euclidean distances use the BLAS expansion
    ``|x|^2 + |y|^2 - 2 x.y``; its cancellation error (~eps * |x|^2) would become ~sqrt(eps) after
    the square root for nearly equal rows, so those entries are recomputed from the differences.
    """
    shift = _binary_shift(X, Y)
    if shift:
        X, Y = np.ldexp(X, -shift), np.ldexp(Y, -shift)
    if metric == "tv":
        D = np.zeros((X.shape[0], Y.shape[0]))
        for c in range(X.shape[1]):
            diff = X[:, c, None] - Y[None, :, c]
            D += np.abs(diff, out=diff)
        D *= 0.5
    else:
        sx = np.einsum("ij,ij->i", X, X)
        sy = np.einsum("ij,ij->i", Y, Y)
        G = X @ Y.T
        G *= -2.0
        G += sx[:, None]
        G += sy[None, :]
        # Where cancellation dominates (d^2 tiny relative to the norms), recompute exactly.
        ii, jj = np.nonzero(G < 1e-6 * (sx[:, None] + sy[None, :]))
        if ii.size:
            diff = X[ii] - Y[jj]
            G[ii, jj] = np.einsum("ij,ij->i", diff, diff)
        np.maximum(G, 0.0, out=G)
        D = np.sqrt(G, out=G)
    if shift:
        with np.errstate(over="ignore"):  # a distance beyond the float range is inf
            D = np.ldexp(D, shift, out=D)
    return D


def _binary_shift(*arrays):
    """0 if every magnitude is 0 or within ``[1e-100, 1e100]`` (squares and sums of squares are
    then safely in range); otherwise the exponent ``e`` with ``max|a| * 2**-e`` in ``[2, 4)``.
    Scaling by ``2**-e`` with ``np.ldexp`` is exact (but for subnormal results)."""
    top = max((float(np.max(np.abs(a))) if a.size else 0.0) for a in arrays)
    if top == 0.0 or 1e-100 <= top <= 1e100:
        return 0
    return math.frexp(top)[1] - 2


def subsample_indices(n, max_samples, random_state=None):
    """Rows of the bounded subsample of the median heuristics, or None if ``n <= max_samples``:
    evenly spaced when ``random_state`` is None, else drawn without replacement."""
    if n <= max_samples:
        return None
    if random_state is None:
        return np.linspace(0, n - 1, max_samples).round().astype(np.intp)
    # A numpy Generator draws itself (scikit-learn's check_random_state only takes a seed or a
    # RandomState); ints and RandomStates keep their RandomState stream.
    rng = (random_state if isinstance(random_state, np.random.Generator)
           else check_random_state(random_state))
    return np.sort(rng.choice(n, max_samples, replace=False))


def _check_length_scale(ls):
    if isinstance(ls, str):
        if ls != "median":
            raise ValueError(f"length_scale must be a positive number or 'median'; got {ls!r}.")
    else:
        check_scalar_param(ls, "length_scale", kind="real", min_val=0.0, include_min=False)


def median_heuristic(X, *, metric="euclidean", max_samples=1000, include_diagonal=False,
                     random_state=None):
    """Median of the pairwise distances of the rows of ``X``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Predictions (never labels).
    metric : {"euclidean", "tv"}, default="euclidean"
    max_samples : int, default=1000
        At most this many rows are used (cost ``O(max_samples**2)``).
    include_diagonal : bool, default=False
        If True, the median is over the full ``m x m`` distance matrix including its zero diagonal
        (the convention of Widmann et al. 2019); otherwise over the pairs ``i < j``.
    random_state : None, int or Generator, default=None
        None takes an evenly spaced deterministic subsample when ``n_samples > max_samples``;
        otherwise a random subsample without replacement is drawn.

    Returns
    -------
    float
        The median. If it is zero (more than half of the pairs coincide), the mean of the positive
        distances is returned instead, and 1.0 if all rows are identical.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.kernels import median_heuristic
    >>> P = np.array([[.7, .2, .1], [.1, .8, .1], [.3, .3, .4],
    ...               [.5, .25, .25], [.05, .15, .8], [.2, .6, .2]])
    >>> round(median_heuristic(P, metric="tv", include_diagonal=True), 12)
    0.4
    """
    check_option(metric, "metric", _METRICS)
    check_scalar_param(max_samples, "max_samples", min_val=2)
    check_bool(include_diagonal, "include_diagonal")
    check_random_state_param(random_state)
    X = _features(X, "X")
    idx = subsample_indices(X.shape[0], max_samples, random_state)
    if idx is not None:
        X = X[idx]
    n = X.shape[0]
    D = _distances(X, X, metric)
    if include_diagonal:
        vals = D.ravel()
    else:
        vals = D[np.triu_indices(n, 1)]
    return _median_scale(vals)


def _median_scale(vals):
    """Median of the distances ``vals``; if it is zero, the mean of the positive ones; 1.0 if
    there are none."""
    med = float(np.median(vals)) if vals.size else 0.0
    if med > 0:
        return med
    pos = vals[vals > 0]
    return float(pos.mean()) if pos.size else 1.0


class Kernel(BaseEstimator):
    """Base class of skcalib's kernels (parameters only; ``get_params``/``clone`` work)."""

    def __call__(self, X, Y=None):
        """Gram matrix ``k(X[i], Y[j])`` (small inputs; the engine works in tiles).

        Parameters
        ----------
        X : array-like of shape (n_x, n_features)
            Finite real features (1-D input is one feature).
        Y : array-like of shape (n_y, n_features), default=None
            Defaults to ``X``; must have as many features as ``X``.

        Returns
        -------
        ndarray of shape (n_x, n_y)
        """
        X, Y = _features_pair(X, Y)
        prep = self.resolve(X)._prepare(X)
        prepY = prep if Y is X else prep.like(Y)
        return prep.block(slice(None), slice(None), prepY)

    def resolve(self, X, random_state=None):  # pragma: no cover - overridden
        """Return a copy with data-dependent parameters (``"median"``) computed on ``X``."""
        return self

    def __mul__(self, other):
        raise TypeError("use skcalib.kernels.tensor(k_pred, k_target) for tensor products")


class _StationaryKernel(Kernel):
    """exp(-f(d / length_scale)) kernels with an optional median-heuristic length scale."""

    _default_metric = "euclidean"

    def _check(self):
        check_option(self.metric, "metric", self._metrics)
        _check_length_scale(self.length_scale)
        check_scalar_param(self.max_samples, "max_samples", min_val=2)

    def resolve(self, X, random_state=None):
        """Return a copy whose ``length_scale`` is a number, computing the median heuristic on ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Predictions.
        random_state : None, int or Generator
            Subsampling for the median heuristic (see :func:`median_heuristic`).

        Returns
        -------
        Kernel
        """
        self._check()
        check_random_state_param(random_state)
        if self.length_scale != "median":
            return self
        ls = median_heuristic(X, metric=self.metric, max_samples=self.max_samples,
                              random_state=random_state)
        params = self.get_params()
        params["length_scale"] = ls
        return type(self)(**params)

    def _prepare(self, X):
        self._check()
        if isinstance(self.length_scale, str):
            raise ValueError("length_scale='median' must be resolved with .resolve(X) first.")
        return _PreparedStationary(X, float(self.length_scale), self.metric, self._profile)

    def diag(self, X):
        """Diagonal ``k(x, x)`` of the Gram matrix: 1 for every row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Finite real features.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return np.ones(_features(X, "X").shape[0])


class GaussianKernel(_StationaryKernel):
    """Gaussian (squared-exponential) kernel ``exp(-||x - y||**2 / (2 * length_scale**2))``.

    Parameters
    ----------
    length_scale : float or "median", default="median"
        Positive length scale, or the median heuristic (computed on the predictions when the
        metric/estimator is fitted). scikit-learn's ``gamma`` is ``1 / (2 * length_scale**2)``.
    max_samples : int, default=1000
        Subsample size for the median heuristic.

    Examples
    --------
    >>> from skcalib.kernels import GaussianKernel
    >>> GaussianKernel(length_scale=1.0)([[1.0, 0.0]], [[0.0, 1.0]])
    array([[0.36787944]])
    """

    _metrics = ("euclidean",)
    _profile = "gaussian"

    def __init__(self, length_scale="median", *, max_samples=1000):
        self.length_scale = length_scale
        self.max_samples = max_samples

    @property
    def metric(self):
        return "euclidean"


class ExponentialKernel(_StationaryKernel):
    """Exponential (Laplacian) kernel ``exp(-d(x, y) / length_scale)``.

    Parameters
    ----------
    length_scale : float or "median", default="median"
        Positive length scale ``nu`` (``exp(-d / nu)``), or the median heuristic.
    metric : {"euclidean", "tv"}, default="euclidean"
        Euclidean distance, or total variation ``0.5 * ||x - y||_1`` (Widmann et al. 2019).
    max_samples : int, default=1000
        Subsample size for the median heuristic.

    Examples
    --------
    >>> from skcalib.kernels import ExponentialKernel
    >>> ExponentialKernel(length_scale=0.5, metric="tv")([[1.0, 0.0]], [[0.5, 0.5]])
    array([[0.36787944]])
    """

    _metrics = _METRICS
    _profile = "exponential"

    def __init__(self, length_scale="median", *, metric="euclidean", max_samples=1000):
        self.length_scale = length_scale
        self.metric = metric
        self.max_samples = max_samples


class DeltaKernel(Kernel):
    """White (Kronecker delta) kernel on labels: ``k(y, y') = 1 if y == y' else 0``.

    On class indices its Gram matrix is the identity, which turns the tensor product
    ``k_pred ⊗ DeltaKernel()`` into the matrix-valued kernel ``k_pred * I`` of Widmann et al. (2019).

    Examples
    --------
    >>> from skcalib.kernels import DeltaKernel
    >>> DeltaKernel()([[0], [1]], [[1]])
    array([[0.],
           [1.]])
    """

    def __init__(self):
        pass

    def __call__(self, X, Y=None):
        """Gram matrix ``1{X[i] == Y[j]}`` (rows compared as wholes).

        Parameters
        ----------
        X : array-like of shape (n_x,) or (n_x, n_features)
            Labels (any values of one type; no missing values).
        Y : array-like of shape (n_y,) or (n_y, n_features), default=None
            Defaults to ``X``; must have as many features as ``X``.

        Returns
        -------
        ndarray of shape (n_x, n_y)
        """
        X = _labels(X, "X")
        Y = X if Y is None else _labels(Y, "Y")
        if X.shape[1] != Y.shape[1]:
            raise ValueError(f"X and Y have different numbers of features: {X.shape[1]} and "
                             f"{Y.shape[1]} (rows are compared as wholes).")
        return np.all(X[:, None, :] == Y[None, :, :], axis=2).astype(np.float64)

    def class_gram(self, n_classes):
        """Gram matrix over ``n_classes`` class indices (the identity).

        Parameters
        ----------
        n_classes : int
            Number of classes (at least 1).

        Returns
        -------
        ndarray of shape (n_classes, n_classes)
        """
        check_scalar_param(n_classes, "n_classes", min_val=1)
        return np.eye(n_classes)

    def resolve(self, X, random_state=None):
        """The delta kernel has no data-dependent parameters: return ``self``.

        Parameters
        ----------
        X : array-like
            Ignored.
        random_state : None, int or Generator, default=None
            Ignored.

        Returns
        -------
        DeltaKernel
            ``self``.
        """
        return self


def _labels(X, name):
    """Labels as an ``(n, n_features)`` array: 1-D or 2-D, no missing values (None, NaN), and not
    a list mixing strings with numbers (numpy would turn ``[0, "1"]`` into strings)."""
    if isinstance(X, (str, bytes)):
        raise TypeError(f"{name} must be an array-like of labels; got a {type(X).__name__}.")
    try:
        arr = np.asarray(X)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a rectangular array-like of labels.") from None
    if arr.ndim not in (1, 2):
        raise ValueError(f"{name} must be 1-D or 2-D; got shape {arr.shape}.")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} is empty: the Gram matrix needs at least one label.")
    if arr.dtype.kind in "US" and not isinstance(X, np.ndarray):
        if not all(isinstance(v, (str, bytes)) for v in np.asarray(X, dtype=object).ravel()):
            raise ValueError(f"{name} mixes strings with other types (e.g. numbers); use one "
                             "type of label.")
    _check_no_missing(arr.ravel(), name)
    return arr.reshape(arr.shape[0], -1)


class TensorProductKernel(Kernel):
    """Tensor product ``k((p, y), (p', y')) = pred_kernel(p, p') * target_kernel(y, y')``.

    Parameters
    ----------
    pred_kernel : Kernel
        Kernel on predictions (probability vectors).
    target_kernel : Kernel, default=DeltaKernel()
        Kernel on targets; for classification a kernel on labels.

    Examples
    --------
    >>> from skcalib.kernels import GaussianKernel, DeltaKernel, TensorProductKernel
    >>> k = TensorProductKernel(GaussianKernel(1.0), DeltaKernel())
    >>> k.pred_kernel.length_scale
    1.0
    """

    def __init__(self, pred_kernel, target_kernel=None):
        self.pred_kernel = pred_kernel
        self.target_kernel = target_kernel

    def _target(self):
        return DeltaKernel() if self.target_kernel is None else self.target_kernel

    def resolve(self, X, random_state=None):
        """Return a copy whose prediction kernel has numeric parameters (median heuristic on ``X``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Predictions.
        random_state : None, int or Generator
            Subsampling of the median heuristic.

        Returns
        -------
        TensorProductKernel
        """
        if not isinstance(self.pred_kernel, Kernel):
            raise TypeError(f"pred_kernel must be a skcalib kernel; got {self.pred_kernel!r}.")
        if self.target_kernel is not None and not isinstance(self.target_kernel, Kernel):
            raise TypeError(f"target_kernel must be None or a skcalib kernel; got "
                            f"{self.target_kernel!r}.")
        pk = self.pred_kernel.resolve(X, random_state=random_state)
        if pk is self.pred_kernel:
            return self
        return TensorProductKernel(pk, self.target_kernel)

    def __call__(self, X, Y=None):
        """Not available: a tensor product acts on (prediction, target) pairs.

        Raises
        ------
        TypeError
            Always; evaluate ``pred_kernel`` and ``target_kernel`` separately.
        """
        raise TypeError(
            "a TensorProductKernel acts on (prediction, target) pairs; call its pred_kernel and "
            "target_kernel separately."
        )


def tensor(pred_kernel, target_kernel=None):
    """Tensor product ``pred_kernel ⊗ target_kernel`` (the target kernel defaults to the delta kernel).

    Parameters
    ----------
    pred_kernel : Kernel
        Kernel on predictions.
    target_kernel : Kernel, default=None
        Kernel on targets; None is :class:`DeltaKernel` (classification).

    Returns
    -------
    TensorProductKernel

    Examples
    --------
    >>> from skcalib.kernels import tensor, ExponentialKernel
    >>> k = tensor(ExponentialKernel(0.4, metric="tv"))
    >>> type(k).__name__
    'TensorProductKernel'
    """
    return TensorProductKernel(pred_kernel, target_kernel)


# The one-product Gaussian tile -d^2/2 = x.y - |x|^2/2 - |y|^2/2 (rows in length scales) has an
# absolute rounding error of a few eps * (|x|^2 + |y|^2) / 2. Below _FAST_GAUSSIAN_LIMIT for that
# sum it is accurate to ~1e-11 and used as is; up to _CHECKED_GAUSSIAN_LIMIT (error < 0.01) it
# still tells which entries are negligible (exp underflows to 0 below -745) and only the others
# are recomputed from differences; beyond (tiny length scales, far-out rows) or when most entries
# matter, the whole tile is computed from differences.
_FAST_GAUSSIAN_LIMIT = 2.0 ** 14
_CHECKED_GAUSSIAN_LIMIT = 2.0 ** 40
_NEGLIGIBLE_LOG_KERNEL = -760.0


class _PreparedStationary:
    """Kernel data prepared once (scaled rows, squared norms) for tile evaluation.

    Every path is free of overflow and NaN at any length scale: careful paths form the scaled
    differences as ``(x - y) / l`` from the raw rows (exact subtraction, one rounding), or as
    ``x / l - y / l`` when ``l >= 1`` and the rows are near the top of the float range, so that
    no step exceeds the float range unless the true scaled distance does (and then k = 0).
    Underflow only loses terms below 1e-300 of ``d / l``, which leave ``exp`` unchanged.
    """

    def __init__(self, X, length_scale, metric, profile):
        self.metric = metric
        self.profile = profile
        self.length_scale = length_scale
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        with np.errstate(over="ignore"):
            self.Xs = self.X / length_scale
            half_sq = 0.5 * np.einsum("ij,ij->i", self.Xs, self.Xs)
        self._half_sq = half_sq
        self._xs_finite = bool(np.all(np.isfinite(self.Xs)))
        self._finite = bool(np.all(np.isfinite(half_sq)))
        self._top = float(half_sq.max()) if half_sq.size else 0.0
        self._huge = bool(self.X.size) and float(np.max(np.abs(self.X))) > 1e307
        self._augmented = None

    def augmented(self):
        """Rows that fold the norms into one matrix product (built on first use; the linear
        estimator never needs them): ``[x, -|x|^2/2, -1] . [y, 1, |y|^2/2] = -d^2/2``."""
        if self._augmented is None:
            half_sq = self._half_sq
            ones = np.ones_like(half_sq)
            self._augmented = (np.column_stack([self.Xs, -half_sq, -ones]),
                               np.column_stack([self.Xs, ones, half_sq]))
        return self._augmented

    def like(self, Y):
        return _PreparedStationary(Y, self.length_scale, self.metric, self.profile)

    def _diff(self, A, B, other, out=None):
        """Scaled differences ``(A - B) / l`` of raw rows (see the class docstring)."""
        ls = self.length_scale
        with np.errstate(over="ignore"):
            if ls >= 1.0 and (self._huge or other._huge):
                return np.subtract(A / ls, B / ls, out=out)
            diff = np.subtract(A, B, out=out)
            if ls != 1.0:
                diff /= ls
        return diff

    def _log_kernel_of_sq(self, D):
        """``log k`` in place from the accumulated ``|diff|^2`` (or ``0.5 |diff|_1`` for TV)."""
        if self.profile == "gaussian":
            D *= -0.5
        else:
            if self.metric != "tv":
                np.sqrt(D, out=D)
            D *= -1.0
        return D

    def _direct(self, a, b, other):
        """``log k`` of a tile from the differences, feature by feature (the careful path)."""
        A, B = self.X[a], other.X[b]
        D = np.zeros((A.shape[0], B.shape[0]))
        buf = np.empty_like(D)
        with np.errstate(over="ignore"):
            for c in range(A.shape[1]):
                self._diff(A[:, c, None], B[None, :, c], other, out=buf)
                if self.metric == "tv":
                    np.abs(buf, out=buf)
                    buf *= 0.5
                else:
                    np.multiply(buf, buf, out=buf)
                D += buf
            return self._log_kernel_of_sq(D)

    def _gaussian_log_block(self, a, b, other):
        top = self._top + other._top
        if not (self._finite and other._finite) or top > _CHECKED_GAUSSIAN_LIMIT:
            return self._direct(a, b, other)
        # -d^2/2 in one BLAS product of the augmented rows (divided by the length scale).
        # Rounding can leave it a hair above 0; exp then exceeds 1 by ~1e-16 at most.
        G = self.augmented()[0][a] @ other.augmented()[1][b].T
        if top <= _FAST_GAUSSIAN_LIMIT:
            return G
        ii, jj = np.nonzero(G > _NEGLIGIBLE_LOG_KERNEL)
        if 8 * ii.size > G.size:
            return self._direct(a, b, other)
        diff = self._diff(self.X[a][ii], other.X[b][jj], other)
        with np.errstate(over="ignore"):
            G[ii, jj] = -0.5 * np.einsum("ij,ij->i", diff, diff)
        return G

    def block(self, a, b, other=None):
        """Kernel values between rows ``a`` of self and rows ``b`` of ``other`` (default self)."""
        other = self if other is None else other
        if self.metric == "euclidean" and self.profile == "gaussian":
            G = self._gaussian_log_block(a, b, other)
            return np.exp(G, out=G)
        if self._xs_finite and other._xs_finite:
            D = _distances(self.Xs[a], other.Xs[b], self.metric)
            D *= -1.0
        else:
            D = self._direct(a, b, other)
        return np.exp(D, out=D)

    def pairs(self, i, j):
        """Kernel values ``k(x_i[k], x_j[k])`` for matching index arrays or slices."""
        diff = self._diff(self.X[i], self.X[j], self)
        with np.errstate(over="ignore"):
            if self.metric == "tv":
                D = 0.5 * np.abs(diff).sum(axis=1)
            else:
                D = np.einsum("ij,ij->i", diff, diff)
            return np.exp(self._log_kernel_of_sq(D))

    def diag(self, a):
        n = np.arange(self.Xs.shape[0])[a].size
        return np.ones(n)


class KernelValidityWarning(UserWarning):
    """A kernel that is not known to be positive definite on the given predictions."""


class WassersteinKernel(Kernel):
    """Kernel ``exp(-(W2(p, p') / length_scale)**exponent)`` on predictive distributions.

    ``W2`` is the 2-Wasserstein distance between distributions of one family
    (:func:`skcalib.distributions.wasserstein_distance`; the mixture Wasserstein distance for
    mixtures). This is Widmann et al.'s (2021) kernel ``exp(-lambda W2**nu)`` with
    ``lambda = length_scale**-exponent`` and ``nu = exponent``; their experiments use
    ``length_scale=1, exponent=1``.

    Validity: for normal (commuting covariances) and Laplace predictions ``W2`` is a Hilbertian
    metric, and the kernel is positive definite for ``0 < exponent <= 2``. A
    :class:`KernelValidityWarning` is issued when that is not guaranteed: ``exponent > 2``;
    mixtures with ``exponent > 1`` (Theorem D.1 of the paper does not hold in general; a
    counterexample exists for ``exponent = 2``); multivariate normals whose covariances do not
    commute (Bures distance).

    Parameters
    ----------
    length_scale : float or "median", default=1.0
        Positive length scale, or the median of the pairwise W2 distances of (a subsample of) the
        predictions.
    exponent : float, default=1.0
        Exponent ``nu > 0`` of the distance.
    max_samples : int, default=1000
        Subsample size of the median heuristic.

    Examples
    --------
    >>> from skcalib.distributions import Normal
    >>> from skcalib.kernels import WassersteinKernel
    >>> WassersteinKernel()(Normal([0.0, 3.0], [1.0, 5.0]))
    array([[1.        , 0.00673795],
           [0.00673795, 1.        ]])
    """

    def __init__(self, length_scale=1.0, *, exponent=1.0, max_samples=1000):
        self.length_scale = length_scale
        self.exponent = exponent
        self.max_samples = max_samples

    def _check(self):
        _check_length_scale(self.length_scale)
        check_scalar_param(self.exponent, "exponent", kind="real", min_val=0.0, include_min=False)
        check_scalar_param(self.max_samples, "max_samples", min_val=2)

    def __call__(self, X, Y=None):
        """Gram matrix between the rows of distributions ``X`` and ``Y`` (default ``X``).

        Parameters
        ----------
        X : Distribution
            Predictive distributions (:mod:`skcalib.distributions`).
        Y : Distribution, default=None
            Distributions of the same family and dimension as ``X``; defaults to ``X``.

        Returns
        -------
        ndarray of shape (len(X), len(Y))
        """
        _check_distribution(X, "X")
        if Y is not None:
            _check_distribution(Y, "Y")
            X._check_comparable(Y, "Y")
        prep = self.resolve(X)._prepare(X)
        prepY = prep if Y is None else prep.like(Y)
        n, m = X.n_samples, (X if Y is None else Y).n_samples
        return np.exp(prep.log_block(slice(0, n), slice(0, m), prepY))

    def resolve(self, X, random_state=None):
        """Return a copy whose ``length_scale`` is a number (median of the pairwise W2 on ``X``).

        Parameters
        ----------
        X : Distribution
            Predictive distributions.
        random_state : None, int or Generator, default=None
            Subsampling of the median heuristic (see :func:`median_heuristic`).

        Returns
        -------
        WassersteinKernel
        """
        self._check()
        check_random_state_param(random_state)
        if self.length_scale != "median":
            return self
        _check_distribution(X, "X")
        idx = subsample_indices(X.n_samples, self.max_samples, random_state)
        if idx is not None:
            X = X[idx]
        n = X.n_samples
        # W2 through the distribution's own hooks (kernels never import distributions); an
        # embedding gives the distances without squaring huge values (power-of-two rescaling).
        prep = _PreparedWasserstein(X, 1.0, 2.0)
        if prep.E_raw is not None:
            D = _distances(prep.E_raw, prep.E_raw, "euclidean")
        else:
            with np.errstate(over="ignore", invalid="ignore"):
                D = np.sqrt(np.maximum(prep.squared_block(slice(0, n), slice(0, n)), 0.0))
        med = _median_scale(D[np.triu_indices(n, 1)])
        if not math.isfinite(med):
            raise ValueError(
                "the median heuristic of the WassersteinKernel's length_scale overflows: the "
                "2-Wasserstein distances between the predictions (y_pred) exceed the float "
                "range; pass a numeric length_scale, or rescale y_true and y_pred.")
        return type(self)(med, exponent=self.exponent, max_samples=self.max_samples)

    def _prepare(self, X):
        self._check()
        if isinstance(self.length_scale, str):
            raise ValueError("length_scale='median' must be resolved with .resolve(X) first.")
        _check_distribution(X, "X")
        _warn_validity(X, float(self.exponent))
        return _PreparedWasserstein(X, float(self.length_scale), float(self.exponent))


def _check_distribution(X, name):
    """``TypeError`` naming ``name`` unless ``X`` is a predictive distribution (duck-typed on the
    hooks the Wasserstein kernel calls, so that this module never imports distributions)."""
    if not all(hasattr(X, a) for a in ("n_samples", "_w2_squared", "_embedding",
                                       "_check_comparable")):
        raise TypeError(f"{name} must be a skcalib distribution (skcalib.distributions); got "
                        f"{type(X).__name__}.")


def _warn_validity(X, exponent):
    # Duck typing: a mixture has ``components``; a multivariate normal has ``commuting()``.
    components = getattr(X, "components", None)
    reason = None
    if exponent > 2:
        reason = f"exponent={exponent} > 2"
    elif components is not None and exponent > 1:
        reason = (f"exponent={exponent} > 1 with mixture predictions (the mixture Wasserstein "
                  "kernel is not positive definite in general for exponent 2)")
    else:
        comps = components if components is not None else (X,)
        if any(hasattr(c, "commuting") and not c.commuting() for c in comps):
            reason = "covariances that do not commute (Bures-Wasserstein distance)"
    if reason is not None:
        warnings.warn(
            f"WassersteinKernel is not guaranteed to be positive definite for {reason}; the "
            "SKCE and its tests lose their guarantees (a biased estimate may even be negative).",
            KernelValidityWarning, stacklevel=user_stacklevel(),
        )


def _rotated(dist):
    """True if the W2 embedding of ``dist`` lives in a basis of its own (commuting full
    covariances): two such batches cannot be compared through their embeddings."""
    return getattr(dist, "covariance_type", None) == "full"


def _same_embedding_space(d1, d2):
    """Whether differences of the embeddings of two batches are their W2 distances: the same
    batch, or batches whose embeddings do not depend on the batch (not rotated, equal
    ``_embedding_key``, e.g. recalibrated predictions through one map)."""
    if d1 is d2:
        return True
    if _rotated(d1) or _rotated(d2):
        return False
    key1, key2 = getattr(d1, "_embedding_key", None), getattr(d2, "_embedding_key", None)
    return (key1() if key1 else None) == (key2() if key2 else None)


class _PreparedWasserstein:
    """``log k = -(W2 / length_scale)**exponent`` on tiles and matching pairs of a distribution.

    ``E`` holds the embedding divided by the length scale when that stays safely in range
    (``|E| <= 1e150``); otherwise (extreme length scales) the raw embedding ``E_raw`` is used and
    differences are scaled as in :class:`_PreparedStationary`, so that nothing overflows unless
    the scaled distance itself does (and then the kernel is 0).
    """

    def __init__(self, dist, length_scale, exponent):
        self.dist = dist
        self.length_scale = length_scale
        self.exponent = exponent
        E = dist._embedding()
        self.E_raw = None if E is None else np.ascontiguousarray(E, dtype=np.float64)
        self.E = None
        if E is not None:
            with np.errstate(over="ignore"):
                Es = self.E_raw / length_scale
            self._safe = bool(Es.size == 0 or np.max(np.abs(Es)) <= 1e150)
            self.E = np.ascontiguousarray(Es)

    def like(self, other):
        return _PreparedWasserstein(other, self.length_scale, self.exponent)

    def _finish(self, D2):
        """``-(D2)**(exponent/2)`` in place, skipping the square root where possible."""
        np.maximum(D2, 0.0, out=D2)
        if self.exponent == 2.0:
            pass
        elif self.exponent == 1.0:
            np.sqrt(D2, out=D2)
        else:
            np.power(D2, 0.5 * self.exponent, out=D2)
        D2 *= -1.0
        return D2

    def _scale_squared(self, D2):
        """``D2 / length_scale**2`` (``length_scale**2`` itself may under- or overflow)."""
        with np.errstate(over="ignore"):
            return np.asarray(D2, dtype=np.float64) / self.length_scale / self.length_scale

    def _scaled_diff(self, A, B):
        with np.errstate(over="ignore"):
            if self.length_scale >= 1.0:
                return A / self.length_scale - B / self.length_scale
            diff = A - B
            diff /= self.length_scale
            return diff

    def squared_block(self, a, b, other=None):
        """Squared scaled distances between rows ``a`` of self and rows ``b`` of ``other``."""
        other = self if other is None else other
        if self.E is not None and other.E is not None and _same_embedding_space(self.dist,
                                                                               other.dist):
            safe = self._safe and other._safe
            Ea, Eb = (self.E[a], other.E[b]) if safe else (self.E_raw[a], other.E_raw[b])
            if Ea.shape[1] <= 8 or not safe:
                # Direct differences: exact (no cancellation), cheap for low dimensions.
                D2 = np.zeros((Ea.shape[0], Eb.shape[0]))
                with np.errstate(over="ignore"):
                    for c in range(Ea.shape[1]):
                        if safe:
                            diff = Ea[:, c, None] - Eb[None, :, c]
                        else:
                            diff = self._scaled_diff(Ea[:, c, None], Eb[None, :, c])
                        diff *= diff
                        D2 += diff
                return D2
            D = _distances(Ea, Eb, "euclidean")
            return np.multiply(D, D, out=D)
        ia = np.arange(self.dist.n_samples)[a]
        ib = np.arange(other.dist.n_samples)[b]
        return self._scale_squared(self.dist._w2_squared(ia[:, None], other.dist, ib[None, :]))

    def log_block(self, a, b, other=None):
        return self._finish(self.squared_block(a, b, other))

    def log_pairs(self, i, j):
        if self.E is not None:
            if self._safe:
                d = self.E[i] - self.E[j]
            else:
                d = self._scaled_diff(self.E_raw[i], self.E_raw[j])
            with np.errstate(over="ignore"):
                D2 = np.einsum("ij,ij->i", d, d)
        else:
            n = self.dist.n_samples
            ii, jj = np.arange(n)[i], np.arange(n)[j]
            D2 = self._scale_squared(self.dist._w2_squared(ii, self.dist, jj))
        return self._finish(np.asarray(D2, dtype=np.float64))
