"""Which kernel for these predictions? The one home of kernel resolution.

The ``kernel`` argument of the kernel errors, tests and estimators becomes a kernel with numeric
length scales here, for class probabilities and for predictive distributions alike:

* :func:`as_tensor_kernel` / :func:`as_regression_kernel` -- normalise the argument to a
  :class:`~skcalib.kernels.TensorProductKernel` (class probabilities: a kernel on probabilities
  times :class:`~skcalib.kernels.DeltaKernel`; distributions: a
  :class:`~skcalib.kernels.WassersteinKernel` times a Gaussian or exponential target kernel,
  :func:`default_target_kernel` by default);
* :func:`resolve_prediction_kernel` -- the one entry point: ``"median"`` length scales computed
  on the predictions (never on the targets), dispatching to :func:`resolve_kernel` (class
  probabilities), :func:`resolve_ucme_kernel` (the UCME's floor ``UCME_MIN_LENGTH_SCALE`` on the
  median heuristic) or :func:`resolve_regression_kernel` (distributions, whose target kernel's
  median is :func:`target_scale`);
* :func:`resolve_chunked_kernel` -- the same length scale for class probabilities held as Dask
  chunks (:class:`skcalib._dask.ClassificationChunks`);
* :func:`check_mmce_kernel` -- the MMCE's kernel on top-label confidences;
* :func:`class_gram` -- a target kernel's Gram matrix over class indices (``K_Y``).

The public kernel classes and :func:`~skcalib.kernels.median_heuristic` stay in
:mod:`skcalib.kernels`; this module only decides which of them a prediction gets.
"""

import math

import numpy as np

from ..distributions import Mixture, moment_unit
from ..kernels import (
    DeltaKernel,
    ExponentialKernel,
    GaussianKernel,
    TensorProductKernel,
    WassersteinKernel,
    subsample_indices,
)

__all__ = [
    "UCME_MIN_LENGTH_SCALE", "as_regression_kernel", "as_tensor_kernel", "check_mmce_kernel",
    "class_gram", "default_target_kernel", "resolve_chunked_kernel", "resolve_kernel",
    "resolve_prediction_kernel", "resolve_regression_kernel", "resolve_ucme_kernel",
    "target_scale",
]


def resolve_prediction_kernel(kernel, predictions, random_state=None, *, ucme=False):
    """``kernel`` argument -> kernel with numeric length scales for validated ``predictions``.

    Parameters
    ----------
    kernel : None, Kernel or TensorProductKernel
        The user's argument.
    predictions : ndarray of shape (n_samples, n_classes) or a distribution
        Validated class probabilities or a predictive distribution (not ``Categorical``).
    random_state : None, int, Generator or RandomState
        Passed as is to the median heuristics' subsampling.
    ucme : bool, default=False
        Class probabilities: apply the UCME's floor on a median length scale.

    Returns
    -------
    TensorProductKernel
    """
    if not isinstance(predictions, np.ndarray):
        return resolve_regression_kernel(kernel, predictions, random_state)
    if ucme:
        return resolve_ucme_kernel(kernel, predictions, random_state)
    return resolve_kernel(kernel, predictions, random_state)


def as_tensor_kernel(kernel, name="kernel"):
    """Normalise the ``kernel`` argument of the metrics to a :class:`TensorProductKernel`.

    ``None`` gives ``GaussianKernel("median") ⊗ DeltaKernel()``; a kernel on predictions is combined
    with the delta kernel on labels.
    """
    if kernel is None:
        return TensorProductKernel(GaussianKernel("median"), DeltaKernel())
    pred = kernel.pred_kernel if isinstance(kernel, TensorProductKernel) else kernel
    if isinstance(pred, WassersteinKernel):
        raise TypeError(
            f"{name}: a WassersteinKernel acts on predictive distributions, but y_pred holds class "
            "probabilities; use a GaussianKernel or ExponentialKernel on the probabilities (the "
            "default), or pass y_pred as a skcalib distribution (e.g. Normal(mean, std)) for "
            "real-valued targets.")
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


def resolve_kernel(kernel, X, random_state=None):
    """``kernel`` argument -> tensor kernel with numeric length scales (median on ``X``)."""
    tk = as_tensor_kernel(kernel)
    return tk.resolve(X, random_state=random_state)


#: Smallest length scale that the median heuristic gives the UCME's kernel on class
#: probabilities (in that kernel's distance: Euclidean distances between probability vectors
#: are at most ``sqrt(2)``, total-variation ones at most 1).
UCME_MIN_LENGTH_SCALE = 0.2


def resolve_ucme_kernel(kernel, probs, random_state=None):
    """The UCME's kernel on class probabilities: :func:`resolve_kernel`, with a ``"median"``
    length scale of the prediction kernel raised to at least ``UCME_MIN_LENGTH_SCALE``.

    The UCME looks at the data only through bumps at its test locations, drawn uniformly on the
    simplex. When most predictions are (almost) 0 or 1 -- naive Bayes, boosted trees -- more than
    half of the pairs of predictions nearly coincide and the median heuristic is tiny (0.0056 for
    naive Bayes on breast cancer): no bump then reaches a prediction, the witness vanishes and the
    CME test's covariance is singular. A numeric length scale chosen by the user is kept.
    """
    tk = as_tensor_kernel(kernel)
    resolved = tk.resolve(probs, random_state=random_state)
    if (isinstance(getattr(tk.pred_kernel, "length_scale", None), str)
            and resolved.pred_kernel.length_scale < UCME_MIN_LENGTH_SCALE):
        params = resolved.pred_kernel.get_params()
        params["length_scale"] = UCME_MIN_LENGTH_SCALE
        resolved = TensorProductKernel(type(resolved.pred_kernel)(**params), tk.target_kernel)
    return resolved


def resolve_chunked_kernel(kernel, chunks, random_state=None):
    """The kernel of :func:`resolve_kernel` for class probabilities held in Dask chunks
    (:class:`skcalib._dask.ClassificationChunks`).

    A numeric length scale needs no data. The median heuristic reads the rows that the
    in-memory median would read (:func:`skcalib.kernels.subsample_indices` with the kernel's
    ``max_samples`` and ``random_state``), gathered from the chunks in one pass, so both paths
    resolve the same length scale.
    """
    tk = as_tensor_kernel(kernel)
    pk = tk.pred_kernel
    C = chunks.n_classes
    if getattr(pk, "length_scale", None) != "median":
        return tk.resolve(np.full((1, C), 1.0 / C), random_state)
    n = chunks.n_samples
    idx = subsample_indices(n, int(pk.max_samples), random_state)
    rows = chunks.gather(np.arange(n) if idx is None else idx)
    return tk.resolve(rows.probs, random_state)


def _default_mmce_kernel():
    return ExponentialKernel(length_scale=0.4)


def check_mmce_kernel(kernel):
    """The MMCE's kernel on top-label confidences: ``None`` is ``ExponentialKernel(0.4)``."""
    if kernel is None:
        return _default_mmce_kernel()
    if not isinstance(kernel, (GaussianKernel, ExponentialKernel)):
        raise TypeError(
            f"kernel must be None or a kernel on confidences (GaussianKernel, ExponentialKernel); "
            f"got {kernel!r}."
        )
    return kernel




def default_target_kernel(dist):
    """The family's default target kernel (its ``_default_target_kernel``, else
    ``GaussianKernel``) with the ``"median"`` length scale: ``ExponentialKernel`` for Laplace
    predictions (and mixtures of them), the target kernels with closed-form expectations."""
    comp = dist.components[0] if isinstance(dist, Mixture) else dist
    kernel_class = type(comp)._default_target_kernel or GaussianKernel
    return kernel_class("median")


def as_regression_kernel(kernel, dist, name="kernel"):
    """Normalise the ``kernel`` argument for distribution predictions.

    ``None`` is ``WassersteinKernel("median") ⊗ default_target_kernel(dist)``; a
    :class:`~skcalib.kernels.WassersteinKernel` alone is combined with the default target kernel.
    """
    if kernel is None:
        return TensorProductKernel(WassersteinKernel("median"), default_target_kernel(dist))
    if isinstance(kernel, WassersteinKernel):
        return TensorProductKernel(kernel, default_target_kernel(dist))
    if isinstance(kernel, TensorProductKernel):
        if not isinstance(kernel.pred_kernel, WassersteinKernel):
            raise TypeError(
                f"{name}: for distribution predictions the prediction kernel must be a "
                f"WassersteinKernel; got {kernel.pred_kernel!r}."
            )
        tk = kernel.target_kernel
        if tk is None or not isinstance(tk, (GaussianKernel, ExponentialKernel)):
            raise TypeError(
                f"{name}: for real-valued targets the target kernel must be a GaussianKernel or "
                f"an ExponentialKernel; got {tk!r}."
            )
        return kernel
    raise TypeError(
        f"{name} must be None, a WassersteinKernel or a TensorProductKernel for distribution "
        f"predictions; got {kernel!r}."
    )


def target_scale(dist, max_samples=1000, random_state=None):
    """Median heuristic for the target kernel, computed on the predictions only (never on the
    targets): the median over pairs ``i < j`` of ``sqrt(E ||Z_i - Z_j||^2)`` with ``Z_i ~ p_i``
    independent, i.e. ``sqrt(||m_i - m_j||^2 + tr V_i + tr V_j)``. Huge-but-finite predictions
    (standard deviations of 1e300, whose variances overflow) are handled in units of their
    magnitude (:func:`~skcalib.distributions.moment_unit`)."""
    unit = moment_unit(dist)
    m, v = dist._moments(unit)
    idx = subsample_indices(m.shape[0], max_samples, random_state)
    if idx is not None:
        m, v = m[idx], v[idx]
    k = m.shape[0]
    if k < 2:
        return 1.0
    # Squared values row by row over the strict upper triangle (no k(k-1)/2 index arrays).
    sq = np.empty(k * (k - 1) // 2)
    pos = 0
    m1 = m[:, 0] if m.shape[1] == 1 else None
    for i in range(k - 1):
        seg = sq[pos:pos + k - 1 - i]
        if m1 is not None:
            np.subtract(m1[i + 1:], m1[i], out=seg)
            np.multiply(seg, seg, out=seg)
        else:
            d = m[i + 1:] - m[i]
            np.einsum("ij,ij->i", d, d, out=seg)
        seg += v[i]
        seg += v[i + 1:]
        pos += k - 1 - i
    # The median of the square roots: sqrt is increasing, so take the middle order statistics
    # of the squares (as np.median would of the roots: the mean of the two middle ones).
    half = (sq.size - 1) // 2
    kth = [half] if sq.size % 2 else [half, half + 1]
    mid = np.sqrt(np.partition(sq, kth)[kth])
    med = float(mid[0]) if mid.size == 1 else float(np.mean(mid))
    with np.errstate(over="ignore"):
        med *= unit
    if not math.isfinite(med):
        raise ValueError("y_pred: the median heuristic of the target kernel's length scale "
                         "overflows (the predictions' means or standard deviations differ by "
                         "more than the float range); pass a target kernel with a numeric "
                         "length_scale, or rescale y_true and y_pred.")
    return med if med > 0 else unit


def resolve_regression_kernel(kernel, dist, random_state=None):
    """Tensor kernel with numeric length scales for distribution predictions."""
    tk = as_regression_kernel(kernel, dist)
    pk = tk.pred_kernel.resolve(dist, random_state=random_state)
    yk = tk.target_kernel
    yk._check()
    if isinstance(yk.length_scale, str):
        params = yk.get_params()
        params["length_scale"] = target_scale(dist, yk.max_samples, random_state)
        yk = type(yk)(**params)
    if pk is tk.pred_kernel and yk is tk.target_kernel:
        return tk
    return TensorProductKernel(pk, yk)


