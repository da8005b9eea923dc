"""Kernel calibration errors of predictive distributions (Widmann et al. 2021): the pair term.

For a tensor-product kernel ``k((p, y), (p', y')) = k_P(p, p') k_Y(y, y')`` the SKCE kernel is

    h((p, y), (p', y')) = k_P(p, p') [k_Y(y, y') - e1(p, y') - e1(p', y) + e2(p, p')],

with ``e1(p, y) = E_{Z ~ p} k_Y(Z, y)`` and ``e2(p, p') = E k_Y(Z, Z')``. The family-specific
expectations (closed forms and the Monte-Carlo fallback, held by *target-ops* objects) live in
:mod:`skcalib._expectations`, below :mod:`skcalib.distributions` in the layering; this module
holds the pair term :class:`DistributionTerm` of the engine (:mod:`skcalib._pairwise`), the
default kernels and their median heuristics, and the plumbing of ``skce``/``ucme``.
"""

import math
import warnings

import numpy as np

from .._expectations import check_targets, target_ops
from .._validation import check_rng, check_scalar_param
from ..distributions import Laplace, Mixture, MultivariateNormal, Normal, moment_unit
from ..kernels import (
    ExponentialKernel,
    GaussianKernel,
    TensorProductKernel,
    WassersteinKernel,
    subsample_indices,
)


class DistributionTerm:
    """Pair term ``h_ij`` of the SKCE for predictive distributions (see the module docstring),
    optionally weighted: ``w_i w_j h_ij`` (``w_i^2 h_ii`` on the diagonal).

    Parameters
    ----------
    pred : prepared :class:`~skcalib.kernels.WassersteinKernel`
        The prediction kernel prepared on the predictions (``k_P(p_i, p_i) = 1``).
    ops : target ops
        The targets and the family's kernel expectations (:func:`skcalib._expectations.target_ops`).
    weights : ndarray of shape (n_samples,), default=None
        Non-negative sample weights, already validated; None for the unweighted term. Prefer
        :meth:`with_weights` (or :func:`skcalib._pairwise.weighted`).

    Attributes
    ----------
    n_samples : int
    weights : ndarray of shape (n_samples,) or None
        The weights the engine takes its denominators from.
    """

    def __init__(self, pred, ops, weights=None):
        self.pred = pred
        self.ops = ops
        self.n_samples = ops.n_samples
        self.weights = None if weights is None else np.asarray(weights, dtype=np.float64)
        # Normal predictions with the Gaussian target kernel: W2 computed inside the fused sum.
        self._fused = None
        if hasattr(ops, "fused") and isinstance(pred.dist, Normal):
            self._fused = ops.fused(pred.length_scale, pred.exponent)

    def with_weights(self, w):
        """The weighted term ``w_i w_j h_ij`` (same fused evaluation, weights in its sums).

        Parameters
        ----------
        w : array-like of shape (n_samples,)
            Non-negative finite weights (validated by the caller).

        Returns
        -------
        DistributionTerm
        """
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (self.n_samples,):
            raise ValueError(f"sample_weight has shape {w.shape}; expected ({self.n_samples},).")
        return DistributionTerm(self.pred, self.ops, w)

    def block(self, a, b):
        H = self.ops.tile(self.pred.log_block(a, b), a, b)
        if self.weights is not None:
            H *= self.weights[a][:, None]
            H *= self.weights[b][None, :]
        return H

    def block_sum(self, a, b, diagonal_tile):
        if self._fused is not None:
            return self._fused.tile_sum(a, b, diagonal_tile, self.weights)
        H = self.block(a, b)
        if diagonal_tile:
            return 0.5 * (float(H.sum()) - float(np.trace(H)))
        return float(H.sum())

    def pairs(self, i, j):
        h = self.ops.pairs(self.pred.log_pairs(i, j), i, j)
        if self.weights is not None:
            h = h * (self.weights[i] * self.weights[j])
        return h

    def diag(self, a):
        # k_P(p, p) = 1 for every Wasserstein kernel.
        d = self.ops.diag(a)
        if self.weights is not None:
            w = self.weights[a]
            d = d * (w * w)
        return d


# --------------------------------------------------------------------------------------------
# kernels


def default_target_kernel(dist):
    """``GaussianKernel("median")``, or ``ExponentialKernel("median")`` for Laplace predictions
    (and mixtures of them), the target kernels with closed-form expectations for the family."""
    comp = dist.components[0] if isinstance(dist, Mixture) else dist
    if isinstance(comp, Laplace):
        return ExponentialKernel("median")
    return GaussianKernel("median")


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


def prepare_term(y_true, y_pred, kernel, *, random_state=None, n_mc_samples=100):
    """Validate ``(y_true, y_pred)`` for distribution predictions and build the pair term.

    Returns
    -------
    term : DistributionTerm
    chunk_size : int or None
        Preferred tile side (bounded memory for full covariances).
    """
    rng = check_rng(random_state)
    y = check_targets(y_true, y_pred)
    k = resolve_regression_kernel(kernel, y_pred, rng if random_state is not None else None)
    term = distribution_term(y_pred, y, k, n_mc_samples=n_mc_samples, random_state=rng)
    return term, preferred_chunk_size(y_pred)


def distribution_term(dist, y, kernel, *, n_mc_samples=100, random_state=None):
    """Pair term for validated targets ``y`` and a resolved tensor kernel."""
    ops = target_ops(dist, y, kernel.target_kernel, n_mc_samples=n_mc_samples,
                     random_state=random_state)
    return DistributionTerm(kernel.pred_kernel._prepare(dist), ops)


def preferred_chunk_size(dist):
    """Tile side bounding the memory of per-pair covariance factors (full covariances)."""
    comps = dist.components if isinstance(dist, Mixture) else (dist,)
    d2 = max((c.dim or 1) ** 2 if isinstance(c, MultivariateNormal) and not c.commuting() else 1
             for c in comps)
    if d2 == 1:
        return None
    return max(16, int(math.sqrt(4_000_000 / d2)))


def draw_distribution_test_locations(dist, n_locations, random_state=None):
    """Test locations for the UCME of distribution predictions: ``J`` predictions chosen at random
    among the data's (without replacement when possible) and one target drawn from each."""
    rng = check_rng(random_state)
    n = dist.n_samples
    idx = rng.choice(n, n_locations, replace=n_locations > n)
    tP = dist[idx]
    return tP, tP.sample(random_state=rng)


def ucme_distribution(y_true, y_pred, kernel, test_predictions, test_targets, n_test_locations,
                      *, random_state=None, n_mc_samples=100, chunk_size=None):
    """Validate, resolve the kernel and the test locations, and return ``(chunks, J)``: the row
    chunks of the ``n x J`` witness matrix (see :func:`ucme_distribution_witness`), which
    :func:`skcalib.ucme` reduces to the value and :func:`skcalib.stats.ucme_test` to the
    Hotelling statistic."""
    rng = check_rng(random_state)
    y = check_targets(y_true, y_pred)
    k = resolve_regression_kernel(kernel, y_pred, rng if random_state is not None else None)
    test_P, test_y = resolve_distribution_test_locations(y_pred, test_predictions, test_targets,
                                                         n_test_locations, rng)
    chunks = ucme_distribution_witness(y_pred, y, k, test_P, test_y, n_mc_samples=n_mc_samples,
                                       random_state=rng, chunk_size=chunk_size)
    return chunks, test_P.n_samples


def resolve_distribution_test_locations(y_pred, test_predictions, test_targets,
                                        n_test_locations, rng, name="y_pred"):
    """The UCME's test locations for distribution predictions: drawn with ``rng`` if both
    ``test_predictions`` and ``test_targets`` are None, else the validated given ones (copies, so
    that nothing keeps a view of the caller's arrays)."""
    if test_predictions is None and test_targets is None:
        check_scalar_param(n_test_locations, "n_test_locations", min_val=1)
        return draw_distribution_test_locations(y_pred, n_test_locations, rng)
    if test_predictions is None or test_targets is None:
        raise ValueError("test_predictions and test_targets must be given together.")
    if type(test_predictions) is not type(y_pred) or test_predictions.dim != y_pred.dim:
        raise TypeError(
            "test_predictions must be a distribution of the same family and dimension as "
            f"{name} ({type(y_pred).__name__}); got {test_predictions!r}."
        )
    test_P = test_predictions[np.arange(test_predictions.n_samples)]
    test_y = check_targets(test_targets, test_P, name="test_targets")
    return test_P, np.array(test_y, copy=True)


def ucme_distribution_witness(dist, y, kernel, test_P, test_y, *, n_mc_samples=100,
                              random_state=None, chunk_size=None):
    """Row chunks ``(rows, W[rows])`` of the witness matrix
    ``W[i, j] = k_P(p_i, t_j) [k_Y(t^Y_j, y_i) - e1(p_i, t^Y_j)]`` of distribution predictions, as
    a generator (memory ``O(chunk J)``); the target ops (and the Monte-Carlo fallback's draws) are
    made before it is returned."""
    from .._pairwise import _chunk_size

    ops = target_ops(dist, y, kernel.target_kernel, n_mc_samples=n_mc_samples,
                     random_state=random_state)
    prep = kernel.pred_kernel._prepare(dist)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prep_t = prep.like(test_P)
    tY = ops.targets(test_y)
    n, J = dist.n_samples, test_P.n_samples
    T = _chunk_size(chunk_size or preferred_chunk_size(dist))
    return ((a, ops.witness(prep.log_block(a, slice(0, J), prep_t), a, tY))
            for a in (slice(s, min(s + T, n)) for s in range(0, n, T)))


def ucme_distribution_value(dist, y, kernel, test_P, test_y, *, n_mc_samples=100,
                            random_state=None, chunk_size=None, sample_weight=None,
                            contributions=True):
    """``UCME^2`` and per-sample contributions for distribution predictions (None, streaming in
    memory ``O(chunk J)``, if ``contributions=False``).

    With ``sample_weight`` the mean witness is ``sum_i w_i W_ij / sum_i w_i`` and the
    contributions' weighted mean is the value."""
    from .._pairwise import witness_statistic

    chunks = ucme_distribution_witness(dist, y, kernel, test_P, test_y, n_mc_samples=n_mc_samples,
                                       random_state=random_state, chunk_size=chunk_size)
    return witness_statistic(chunks, dist.n_samples, test_P.n_samples, weights=sample_weight,
                             contributions=contributions)
