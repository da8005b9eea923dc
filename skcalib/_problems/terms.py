"""Pair terms of the pairwise engine (:mod:`skcalib._pairwise`) for the kernel errors.

A pair term has ``n_samples``, ``block(a, b)``, ``block_sum(a, b, diagonal_tile)``,
``pairs(i, j)``, ``diag(a)`` and ``with_weights(w)`` (see :func:`skcalib._pairwise.weighted`):

* :class:`ResidualTerm` -- ``h_ij = k(x_i, x_j) * <R_i, (R K_Y)_j>`` (class probabilities: the
  SKCE with residuals ``e_y - p``; the MMCE; the local calibration error with a
  :class:`ProductPrepared` kernel); built by :func:`classification_term` and :func:`mmce_term`,
  with :func:`class_residuals` the factors ``(R, R K_Y)`` (shared with the UCME's witness);
* :class:`DistributionTerm` -- the SKCE of predictive distributions (Widmann et al. 2021),

      h((p, y), (p', y')) = k_P(p, p') [k_Y(y, y') - e1(p, y') - e1(p', y) + e2(p, p')],

  with ``e1(p, y) = E_{Z ~ p} k_Y(Z, y)`` and ``e2(p, p') = E k_Y(Z, Z')``, the family-specific
  expectations held by the target ops of :mod:`skcalib._expectations`; built by
  :func:`distribution_term`, with tiles bounded by :func:`preferred_chunk_size`;
* :class:`ProductPrepared` -- the product of two prepared kernels on the same rows.

Callers normally get their term from :class:`skcalib._problems.kernel.KernelProblem`.
"""

import math

import numpy as np

from .._expectations import target_ops
from .._validation import top_label
from ..distributions import Normal
from .kernel_resolution import class_gram

__all__ = ["DistributionTerm", "ProductPrepared", "ResidualTerm", "class_residuals",
           "classification_term", "distribution_term", "mmce_term", "preferred_chunk_size"]


class ResidualTerm:
    """Pair term ``h_ij = k(x_i, x_j) * <R_i, (R K_Y)_j>`` for the pairwise engine.

    Parameters
    ----------
    prepared : prepared kernel on the rows of ``X`` (see :mod:`skcalib.kernels`)
    R : ndarray of shape (n, m)
        Residuals, e.g. ``e_y - p``.
    RK : ndarray of shape (n, m), default=None
        ``R @ K_Y``; defaults to ``R`` (``K_Y`` the identity).
    """

    #: Sample weights of a weighted term (see :meth:`with_weights`); None if unweighted.
    weights = None

    def __init__(self, prepared, R, RK=None):
        self.prepared = prepared
        self.R = np.ascontiguousarray(R, dtype=np.float64)
        self.RK = self.R if RK is None else np.ascontiguousarray(RK, dtype=np.float64)
        self.n_samples = self.R.shape[0]

    def with_weights(self, w):
        """The weighted term ``w_i w_j h_ij``: ``w`` folded into both residual factors, so that
        it is exact and as fast as the unweighted term (fused ``block_sum`` included)."""
        w = np.asarray(w, dtype=np.float64)
        R = self.R * w[:, None]
        RK = None if self.RK is self.R else self.RK * w[:, None]
        term = ResidualTerm(self.prepared, R, RK)
        term.weights = w
        return term

    def block(self, a, b):
        K = self.prepared.block(a, b)
        K *= self.R[a] @ self.RK[b].T
        return K

    def block_sum(self, a, b, diagonal_tile):
        """Sum of ``block(a, b)`` in one pass (``vdot``); strict upper triangle on the diagonal."""
        K = self.prepared.block(a, b)
        # sum_ij K_ij <R_i, RK_j> = <R[a], K @ RK[b]>: no second tile is formed.
        s = float(np.vdot(self.R[a], K @ self.RK[b]))
        if diagonal_tile:
            diag = np.einsum("ij,ij->i", self.R[a], self.RK[a])
            s = 0.5 * (s - float(np.dot(np.diagonal(K), diag)))
        return s

    def pairs(self, i, j):
        return self.prepared.pairs(i, j) * np.einsum("ij,ij->i", self.R[i], self.RK[j])

    def diag(self, a):
        return self.prepared.diag(a) * np.einsum("ij,ij->i", self.R[a], self.RK[a])


def class_residuals(data, kernel):
    """``(R, R K_Y)`` of validated class data: residuals ``e_y - p`` and their product with the
    target kernel's Gram matrix over the classes (``R`` itself for the identity)."""
    R = data.residuals()
    KY = class_gram(kernel._target(), data.n_classes)
    return R, (R if _is_identity(KY) else R @ KY)


def classification_term(data, kernel):
    """Pair term of the classification SKCE for validated data and a resolved tensor kernel."""
    R, RK = class_residuals(data, kernel)
    return ResidualTerm(kernel.pred_kernel._prepare(data.probs), R, RK)


def _is_identity(M):
    return M.shape[0] == M.shape[1] and np.array_equal(M, np.eye(M.shape[0]))


def mmce_term(data, kernel):
    """Pair term of the MMCE: kernel on top-label confidences, residual correctness - confidence."""
    P = data.probs
    conf, shares = top_label(P)
    correct = shares[np.arange(P.shape[0]), data.y]
    R = (correct - conf)[:, None]
    return ResidualTerm(kernel._prepare(conf[:, None]), R)


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


def distribution_term(dist, y, kernel, *, n_mc_samples=100, random_state=None):
    """Pair term for validated targets ``y`` and a resolved tensor kernel."""
    ops = target_ops(dist, y, kernel.target_kernel, n_mc_samples=n_mc_samples,
                     random_state=random_state)
    return DistributionTerm(kernel.pred_kernel._prepare(dist), ops)


def preferred_chunk_size(dist):
    """Tile side bounding the memory of the family's per-pair factors (full covariances): the
    family says how many numbers a pair holds (``_pair_cost``); None where it is one."""
    cost = dist._pair_cost()
    if cost <= 1:
        return None
    return max(16, int(math.sqrt(4_000_000 / cost)))


class ProductPrepared:
    """Product ``k1(u_i, u_j) * k2(v_i, v_j)`` of two prepared kernels on the same samples (e.g. a
    kernel on predictions times a kernel on audit features, for the local calibration error).

    Parameters
    ----------
    first, second : prepared kernels
        Prepared on the same number of rows (``Kernel._prepare``).
    """

    def __init__(self, first, second):
        self.first = first
        self.second = second

    def like(self, first_rows, second_rows):
        """The product kernel prepared on other rows (for evaluation points)."""
        return ProductPrepared(self.first.like(first_rows), self.second.like(second_rows))

    def block(self, a, b, other=None):
        """Kernel values between rows ``a`` of self and rows ``b`` of ``other`` (default self)."""
        if other is None:
            K = self.first.block(a, b)
            K *= self.second.block(a, b)
            return K
        K = self.first.block(a, b, other.first)
        K *= self.second.block(a, b, other.second)
        return K

    def pairs(self, i, j):
        """Kernel values for matching index arrays or slices."""
        return self.first.pairs(i, j) * self.second.pairs(i, j)

    def diag(self, a):
        """``k(x_i, x_i)`` for rows ``a``."""
        return self.first.diag(a) * self.second.diag(a)
