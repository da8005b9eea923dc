"""The estimators of the SKCE-type errors on a pair term: options, weights, estimate, shares.

* :func:`check_kernel_params` -- the common options of the kernel errors, validated before any
  work; :func:`check_estimator_option` -- ``estimator``/``block_size`` against ``n_samples``;
  :func:`min_samples` -- the fewest samples an estimator needs;
* :func:`check_weights` -- ``sample_weight`` rescaled, with enough positive weight for the
  estimator;
* :func:`estimate` -- the unbiased U-, biased V- or block statistic of a pair term (weighted with
  ``sample_weight``: the weighted statistics of :mod:`skcalib.metrics._kernel`);
* :func:`contributions` -- each sample's share of :func:`estimate`;
* :func:`chunked_block_sums` -- the block statistic of class probabilities held as Dask chunks
  (:class:`skcalib._dask.BlockSums`, blocks inside every chunk).
"""

import math

import numpy as np

from .. import _dask, _pairwise
from .._validation import (
    check_n_jobs,
    check_n_resamples,
    check_option,
    check_random_state_param,
    check_sample_weight,
    check_scalar_param,
    MAX_MC_SAMPLES,
)
from .kernel_resolution import resolve_chunked_kernel
from .terms import classification_term

__all__ = ["ESTIMATORS", "check_estimator_option", "check_kernel_params", "check_weights",
           "chunked_block_sums", "contributions", "estimate", "min_samples"]

#: The ``estimator`` options of the kernel errors.
ESTIMATORS = ("unbiased", "biased", "block")


def min_samples(estimator):
    """The fewest samples ``estimator`` needs: 1 for the biased one, else 2."""
    return 1 if estimator == "biased" else 2


def check_estimator_option(estimator, block_size, n_samples):
    """Validate ``estimator``/``block_size`` against the number of samples."""
    check_option(estimator, "estimator", ESTIMATORS)
    check_scalar_param(block_size, "block_size", min_val=2)
    if estimator == "block" and block_size > n_samples:
        raise ValueError(
            f"block_size={block_size} exceeds the number of samples ({n_samples})."
        )
    if estimator != "biased" and n_samples < 2:
        raise ValueError(
            f"the {estimator} estimator needs at least 2 samples; got {n_samples}."
        )


def check_kernel_params(*, estimator="unbiased", block_size=2, random_state=None,
                        n_mc_samples=100, chunk_size=None, n_jobs=None):
    """Validate the common options of the kernel errors before any work (whether or not the code
    path uses them): ``estimator``, ``block_size``, ``random_state``, ``n_mc_samples``,
    ``chunk_size`` and ``n_jobs``."""
    check_option(estimator, "estimator", ESTIMATORS)
    check_scalar_param(block_size, "block_size", min_val=2)
    check_random_state_param(random_state)
    check_n_resamples(n_mc_samples, "n_mc_samples", max_val=MAX_MC_SAMPLES)
    check_scalar_param(chunk_size, "chunk_size", min_val=1, allow_none=True)
    check_n_jobs(n_jobs)


def check_weights(sample_weight, n_samples, estimator="biased", block_size=2):
    """``check_sample_weight(..., rescale=True)``, and enough positive weight for ``estimator``:
    two positive weights (unbiased), or one block with two (block)."""
    w = check_sample_weight(sample_weight, n_samples, rescale=True)
    if w is None:
        return None
    if estimator == "unbiased" and np.count_nonzero(w) < 2:
        raise ValueError(
            "sample_weight must have at least 2 positive entries for the unbiased estimator; got "
            f"{int(np.count_nonzero(w))}."
        )
    if estimator == "block" and not np.any(_pairwise.block_pair_weights(w, block_size) > 0):
        raise ValueError(
            "sample_weight must give some block of the block estimator at least 2 positive "
            "entries; no block has."
        )
    return w


def estimate(term, estimator, block_size=2, *, sample_weight=None, chunk_size=None,
             n_jobs=None):
    """SKCE-type estimate of a pair term: unbiased U-, biased V- or block statistic.

    With ``sample_weight`` (validated) the weighted statistic of the module docstring.
    """
    term = _pairwise.weighted(term, sample_weight)
    if estimator == "unbiased":
        return _pairwise.u_statistic(term, chunk_size=chunk_size, n_jobs=n_jobs)
    if estimator == "biased":
        return _pairwise.v_statistic(term, chunk_size=chunk_size, n_jobs=n_jobs)
    if sample_weight is None:
        return float(np.mean(_pairwise.block_statistics(term, block_size, chunk_size=chunk_size,
                                                        n_jobs=n_jobs)))
    values, weights = _pairwise.block_statistics(term, block_size, chunk_size=chunk_size,
                                                 n_jobs=n_jobs, return_weights=True)
    total = float(weights.sum())
    if not total > 0:
        raise ValueError("sample_weight gives no block of the block estimator two positive "
                         "entries.")
    return float(np.dot(weights, values) / total)


def contributions(term, estimator, block_size=2, *, sample_weight=None, chunk_size=None,
                  n_jobs=None):
    """Each sample's share of the estimate; their mean equals :func:`estimate`.

    ``term`` is the unweighted pair term. Unweighted:

    * unbiased: ``sum_{j != i} h_ij / (n - 1)``;
    * biased: ``sum_j h_ij / n``;
    * block: ``n / (n_blocks * B * (B - 1)) * sum_{j in block(i), j != i} h_ij``, and 0 for the
      samples of the dropped incomplete block.

    With weights ``w`` (``S = sum w``) the shares' *weighted* mean ``sum_i w_i c_i / S`` equals
    the weighted estimate, and every share is defined (also for zero weights):

    * unbiased: ``S / D * sum_{j != i} w_j h_ij`` with ``D = sum_{i != j} w_i w_j``;
    * biased: ``(sum_j w_j h_ij) / S``;
    * block: ``S / sum_b D_b * sum_{j in block(i), j != i} w_j h_ij``, with the blocks' weights
      ``D_b = sum_{i != j in b} w_i w_j``.
    """
    n = term.n_samples
    w = sample_weight
    if w is not None:
        w = np.asarray(w, dtype=np.float64)
    if estimator == "unbiased":
        s = _pairwise.row_sums(term, column_weights=w, chunk_size=chunk_size, n_jobs=n_jobs)
        if w is None:
            return s / (n - 1.0)
        return s * (math.fsum(w) / _pairwise.pair_weight_sum(w))
    if estimator == "biased":
        s = _pairwise.row_sums(term, column_weights=w, chunk_size=chunk_size, n_jobs=n_jobs)
        d = _pairwise.diagonal(term, chunk_size=chunk_size)
        if w is None:
            s += d
            return s / n
        s += w * d
        return s / math.fsum(w)
    B = int(block_size)
    nb = n // B
    out = np.zeros(n)
    if w is None:
        scale = n / (nb * B * (B - 1.0))
    else:
        scale = math.fsum(w) / float(_pairwise.block_pair_weights(w, B).sum())
    for b in range(nb):
        out[b * B:(b + 1) * B] = _pairwise.row_sums(
            term, lo=b * B, hi=(b + 1) * B, column_weights=w, chunk_size=chunk_size
        )
    out *= scale
    return out


def chunked_block_sums(chunks, kernel, B, random_state=None, chunk_size=None):
    """:class:`skcalib._dask.BlockSums` of the blocks of ``B`` rows inside every chunk of
    :class:`skcalib._dask.ClassificationChunks` (the kernel resolved as in memory)."""
    k = resolve_chunked_kernel(kernel, chunks, random_state)

    def per_chunk(data, w):
        nb = data.n_samples // B
        if nb == 0:
            return _dask.BlockSums(0.0, 0.0, 0)
        term = classification_term(data, k)
        wn, scale = _dask.scaled_weights(w)
        if wn is None:
            values = _pairwise.block_statistics(term, B, chunk_size=chunk_size)
            return _dask.BlockSums.from_values(values, np.full(nb, B * (B - 1.0)))
        if scale == 0.0:
            return _dask.BlockSums(0.0, 0.0, nb, 0.0)
        values, weights = _pairwise.block_statistics(_pairwise.weighted(term, wn), B,
                                                     chunk_size=chunk_size, return_weights=True)
        return _dask.BlockSums.from_values(values, weights, scale)

    sums = chunks.reduce(per_chunk, _dask.BlockSums.merge)
    if sums.n_blocks == 0:
        raise ValueError(f"block_size={B} exceeds the length of every chunk; no block of the "
                         "block estimator fits in a chunk (rechunk the arrays).")
    return sums
