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
"""

import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state

from ._validation import check_2d_features, check_option, check_scalar_param, user_stacklevel

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
    X = check_2d_features(X, "X")
    Y = X if Y is None else check_2d_features(Y, "Y")
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"X and Y have different numbers of features: {X.shape[1]} and {Y.shape[1]}.")
    return _distances(X, Y, metric)


def _distances(X, Y, metric):
    """Distance matrix. Euclidean distances use the BLAS expansion ``|x|^2 + |y|^2 - 2 x.y``; its
    cancellation error (~eps * |x|^2) would become ~sqrt(eps) after the square root for nearly equal
    rows, so those entries are recomputed from the differences."""
    if metric == "tv":
        D = np.zeros((X.shape[0], Y.shape[0]))
        for c in range(X.shape[1]):
            diff = X[:, c, None] - Y[None, :, c]
            D += np.abs(diff, out=diff)
        D *= 0.5
        return D
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
    return np.sqrt(G, out=G)


def _pair_distances(X, Y, metric):
    """Distances between matching rows ``X[k]`` and ``Y[k]``."""
    diff = X - Y
    if metric == "tv":
        return 0.5 * np.abs(diff).sum(axis=1)
    return np.sqrt(np.einsum("ij,ij->i", diff, diff))


def subsample_indices(n, max_samples, random_state=None):
    """Rows of the bounded subsample of the median heuristics, or None if ``n <= max_samples``:
    evenly spaced when ``random_state`` is None, else drawn without replacement."""
    if n <= max_samples:
        return None
    if random_state is None:
        return np.linspace(0, n - 1, max_samples).round().astype(np.intp)
    return np.sort(check_random_state(random_state).choice(n, max_samples, replace=False))


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
    X = check_2d_features(X, "X")
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
        """Gram matrix ``k(X[i], Y[j])`` (small inputs; the engine works in tiles)."""
        X = check_2d_features(X, "X")
        Y = X if Y is None else check_2d_features(Y, "Y")
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
        """``k(x, x) = 1`` for every row."""
        return np.ones(check_2d_features(X, "X").shape[0])


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
        Y : array-like of shape (n_y,) or (n_y, n_features), default=None
            Defaults to ``X``.

        Returns
        -------
        ndarray of shape (n_x, n_y)
        """
        X = np.asarray(X)
        Y = X if Y is None else np.asarray(Y)
        X = X.reshape(X.shape[0], -1)
        Y = Y.reshape(Y.shape[0], -1)
        return np.all(X[:, None, :] == Y[None, :, :], axis=2).astype(np.float64)

    def class_gram(self, n_classes):
        """Gram matrix over ``n_classes`` class indices (the identity)."""
        return np.eye(n_classes)

    def resolve(self, X, random_state=None):
        """The delta kernel has no data-dependent parameters: return ``self``."""
        return self


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

    Examples
    --------
    >>> from skcalib.kernels import tensor, ExponentialKernel
    >>> k = tensor(ExponentialKernel(0.4, metric="tv"))
    >>> type(k).__name__
    'TensorProductKernel'
    """
    return TensorProductKernel(pred_kernel, target_kernel)


def as_tensor_kernel(kernel, name="kernel"):
    """Normalise the ``kernel`` argument of the metrics to a :class:`TensorProductKernel`.

    ``None`` gives ``GaussianKernel("median") ⊗ DeltaKernel()``; a kernel on predictions is combined
    with the delta kernel on labels.
    """
    if kernel is None:
        return TensorProductKernel(GaussianKernel("median"), DeltaKernel())
    if isinstance(kernel, TensorProductKernel):
        return kernel
    if isinstance(kernel, (GaussianKernel, ExponentialKernel)):
        return TensorProductKernel(kernel, DeltaKernel())
    raise TypeError(
        f"{name} must be None, a kernel on predictions or a TensorProductKernel; got {kernel!r}."
    )


def class_gram(target_kernel, n_classes):
    """Gram matrix of a target kernel over class indices, as the classification metrics need it."""
    if hasattr(target_kernel, "class_gram"):
        return target_kernel.class_gram(n_classes)
    raise TypeError(
        f"target kernel {target_kernel!r} cannot act on class labels; use DeltaKernel() for "
        "classification."
    )


class _PreparedStationary:
    """Kernel data prepared once (scaled rows, squared norms) for tile evaluation."""

    def __init__(self, X, length_scale, metric, profile):
        self.metric = metric
        self.profile = profile
        self.length_scale = length_scale
        self.Xs = np.ascontiguousarray(X / length_scale, dtype=np.float64)
        self._augmented = None

    def augmented(self):
        """Rows that fold the norms into one matrix product (built on first use; the linear
        estimator never needs them): ``[x, -|x|^2/2, -1] . [y, 1, |y|^2/2] = -d^2/2``."""
        if self._augmented is None:
            half_sq = 0.5 * np.einsum("ij,ij->i", self.Xs, self.Xs)
            ones = np.ones_like(half_sq)
            self._augmented = (np.column_stack([self.Xs, -half_sq, -ones]),
                               np.column_stack([self.Xs, ones, half_sq]))
        return self._augmented

    def like(self, Y):
        return _PreparedStationary(Y, self.length_scale, self.metric, self.profile)

    def block(self, a, b, other=None):
        """Kernel values between rows ``a`` of self and rows ``b`` of ``other`` (default self)."""
        other = self if other is None else other
        if self.metric == "euclidean" and self.profile == "gaussian":
            # -d^2/2 in one BLAS product of the augmented rows (divided by the length scale).
            # Rounding can leave it a hair above 0; exp then exceeds 1 by ~1e-16 at most.
            G = self.augmented()[0][a] @ other.augmented()[1][b].T
            return np.exp(G, out=G)
        D = _distances(self.Xs[a], other.Xs[b], self.metric)
        D *= -1.0
        return np.exp(D, out=D)

    def pairs(self, i, j):
        """Kernel values ``k(x_i[k], x_j[k])`` for matching index arrays or slices."""
        d = _pair_distances(self.Xs[i], self.Xs[j], self.metric)
        if self.profile == "gaussian":
            return np.exp(-0.5 * d * d)
        return np.exp(-d)

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
        """Gram matrix between the rows of distributions ``X`` and ``Y`` (default ``X``)."""
        prep = self.resolve(X)._prepare(X)
        prepY = prep if Y is None else prep.like(Y)
        n, m = X.n_samples, (X if Y is None else Y).n_samples
        return np.exp(prep.log_block(slice(0, n), slice(0, m), prepY))

    def resolve(self, X, random_state=None):
        """Return a copy whose ``length_scale`` is a number (median of the pairwise W2 on ``X``)."""
        self._check()
        if self.length_scale != "median":
            return self
        from .distributions import pairwise_wasserstein

        idx = subsample_indices(X.n_samples, self.max_samples, random_state)
        if idx is not None:
            X = X[idx]
        D = pairwise_wasserstein(X)
        med = _median_scale(D[np.triu_indices(D.shape[0], 1)])
        return type(self)(med, exponent=self.exponent, max_samples=self.max_samples)

    def _prepare(self, X):
        self._check()
        if isinstance(self.length_scale, str):
            raise ValueError("length_scale='median' must be resolved with .resolve(X) first.")
        _warn_validity(X, float(self.exponent))
        return _PreparedWasserstein(X, float(self.length_scale), float(self.exponent))


def _warn_validity(X, exponent):
    from .distributions import Mixture, MultivariateNormal

    reason = None
    if exponent > 2:
        reason = f"exponent={exponent} > 2"
    elif isinstance(X, Mixture) and exponent > 1:
        reason = (f"exponent={exponent} > 1 with mixture predictions (the mixture Wasserstein "
                  "kernel is not positive definite in general for exponent 2)")
    else:
        comps = X.components if isinstance(X, Mixture) else (X,)
        if any(isinstance(c, MultivariateNormal) and not c.commuting() for c in comps):
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


class _PreparedWasserstein:
    """``log k = -(W2 / length_scale)**exponent`` on tiles and matching pairs of a distribution."""

    def __init__(self, dist, length_scale, exponent):
        self.dist = dist
        self.length_scale = length_scale
        self.exponent = exponent
        E = dist._embedding()
        self.E = None if E is None else np.ascontiguousarray(E / length_scale)

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

    def squared_block(self, a, b, other=None):
        """Squared scaled distances between rows ``a`` of self and rows ``b`` of ``other``."""
        other = self if other is None else other
        if self.E is not None and other.E is not None and (
                other.dist is self.dist or not (_rotated(self.dist) or _rotated(other.dist))):
            Ea, Eb = self.E[a], other.E[b]
            if Ea.shape[1] <= 8:
                # Direct differences: exact (no cancellation), cheap for low dimensions.
                D2 = None
                for c in range(Ea.shape[1]):
                    diff = Ea[:, c, None] - Eb[None, :, c]
                    diff *= diff
                    D2 = diff if D2 is None else np.add(D2, diff, out=D2)
                return D2
            D = _distances(Ea, Eb, "euclidean")
            return np.multiply(D, D, out=D)
        ia = np.arange(self.dist.n_samples)[a]
        ib = np.arange(other.dist.n_samples)[b]
        D2 = self.dist._w2_squared(ia[:, None], other.dist, ib[None, :])
        return D2 / self.length_scale ** 2

    def log_block(self, a, b, other=None):
        return self._finish(self.squared_block(a, b, other))

    def log_pairs(self, i, j):
        if self.E is not None:
            d = self.E[i] - self.E[j]
            D2 = np.einsum("ij,ij->i", d, d)
        else:
            n = self.dist.n_samples
            ii, jj = np.arange(n)[i], np.arange(n)[j]
            D2 = self.dist._w2_squared(ii, self.dist, jj) / self.length_scale ** 2
        return self._finish(np.asarray(D2, dtype=np.float64))
