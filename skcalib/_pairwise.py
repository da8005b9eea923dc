"""The one pairwise engine: sums of pair terms in bounded memory.

Every kernel quantity in skcalib is a sum over pairs of ``h_ij = k(p_i, p_j) * g_ij``. A *pair
term* object knows how to evaluate ``h`` on a rectangular tile of pairs, on matching index pairs
and on the diagonal; this module turns it into

* the U-statistic ``1/(n(n-1)) * sum_{i != j} h_ij`` (unbiased),
* the V-statistic ``1/n**2 * sum_{i, j} h_ij`` (biased, with the diagonal),
* block statistics: the per-block U-statistics of consecutive blocks of size ``B`` (the
  incomplete last block dropped; ``B = 2`` is the linear estimator, ``B = n`` the U-statistic),
* row sums ``sum_{j != i} h_ij`` (each sample's share of the U-statistic).

Tiles have at most ``chunk_size x chunk_size`` entries, so memory is ``O(n * chunk_size)`` at worst
and never ``n x n``. Only tiles on or above the diagonal are evaluated (``h`` is symmetric). Work is
split into tasks of one row-block each and run through joblib (``n_jobs``; threads by default,
since numpy releases the GIL in BLAS and ufunc loops -- any joblib backend can be chosen with
``joblib.parallel_config``). Task results are combined in a fixed order, so results do not depend
on ``n_jobs``.

A pair term implements::

    n_samples : int
    block(a, b) -> ndarray (len(a), len(b))   # h on rows a x columns b (slices)
    block_sum(a, b, diagonal_tile) -> float   # optional fused sum of block(a, b); on a diagonal
                                              # tile (a == b) the sum over its strict upper triangle
    pairs(i, j) -> ndarray (k,)               # h on matching index arrays / slices
    diag(a) -> ndarray                        # h_ii for rows a (slice)
"""

import math

import numpy as np
from joblib import Parallel, delayed
from threadpoolctl import ThreadpoolController

__all__ = [
    "DEFAULT_CHUNK_SIZE",
    "pair_sum",
    "u_statistic",
    "v_statistic",
    "block_statistics",
    "row_sums",
    "dense_matrix",
]

#: Tile side. 512 x 512 float64 tiles (2 MiB) stay in cache and keep BLAS efficient.
DEFAULT_CHUNK_SIZE = 512

# Below this block size, blocks are evaluated as vectorised lists of index pairs.
_SMALL_BLOCK = 64


def _chunk_size(chunk_size):
    if chunk_size is None:
        return DEFAULT_CHUNK_SIZE
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer; got {chunk_size!r}.")
    return int(chunk_size)


_CONTROLLER = None


def _blas_single_thread():
    """Context limiting BLAS to one thread. The controller is created once: discovering the
    loaded libraries costs ~2 ms, which dominated small problems."""
    global _CONTROLLER
    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api="blas")


def _run(tasks, n_jobs):
    """Run zero-argument callables in order; sequential unless ``n_jobs`` asks for more.

    BLAS is limited to one thread meanwhile: the tiles' matrix products are small (inner
    dimension = number of classes), so BLAS threads only compete with each other and with the
    ``n_jobs`` workers (measured: 2-4x slower on a loaded 2-core machine). Parallelism comes from
    ``n_jobs``.
    """
    with _blas_single_thread():
        if n_jobs is None or n_jobs == 1 or len(tasks) <= 1:
            return [t() for t in tasks]
        return Parallel(n_jobs=n_jobs, prefer="threads")(delayed(t)() for t in tasks)


def _upper_row_block_sum(term, start, stop, lo, hi, T):
    """Sum of h_ij over i in [start, stop), j in [start, hi) with j > i (tile by tile)."""
    total = 0.0
    a = slice(start, stop)
    fused = getattr(term, "block_sum", None)
    for b0 in range(start, hi, T):
        b = slice(b0, min(b0 + T, hi))
        if fused is not None:
            total += fused(a, b, b0 == start)
            continue
        tile = term.block(a, b)
        if b0 == start:
            # Diagonal tile: keep the strict upper triangle only.
            total += float(np.triu(tile, 1).sum())
        else:
            total += float(tile.sum())
    return total


def pair_sum(term, *, lo=0, hi=None, include_diagonal=False, chunk_size=None, n_jobs=None):
    """``sum_{i != j} h_ij`` (plus ``sum_i h_ii`` if ``include_diagonal``) over rows ``lo:hi``.

    Both orders ``(i, j)`` and ``(j, i)`` are counted, as in ``sum_{i != j}``.
    """
    T = _chunk_size(chunk_size)
    hi = term.n_samples if hi is None else hi
    starts = range(lo, hi, T)
    tasks = [
        (lambda s=s: _upper_row_block_sum(term, s, min(s + T, hi), lo, hi, T)) for s in starts
    ]
    parts = _run(tasks, n_jobs)
    total = 2.0 * math.fsum(parts)
    if include_diagonal:
        diag_parts = [float(term.diag(slice(s, min(s + T, hi))).sum()) for s in starts]
        total += math.fsum(diag_parts)
    return total


def u_statistic(term, *, chunk_size=None, n_jobs=None):
    """Unbiased U-statistic ``1/(n(n-1)) * sum_{i != j} h_ij`` (needs ``n >= 2``)."""
    n = term.n_samples
    if n < 2:
        raise ValueError(f"the unbiased estimator needs at least 2 samples; got {n}.")
    return pair_sum(term, chunk_size=chunk_size, n_jobs=n_jobs) / (n * (n - 1.0))


def v_statistic(term, *, chunk_size=None, n_jobs=None):
    """Biased V-statistic ``1/n**2 * sum_{i, j} h_ij`` (with the diagonal)."""
    n = term.n_samples
    return pair_sum(term, include_diagonal=True, chunk_size=chunk_size, n_jobs=n_jobs) / float(n * n)


def block_statistics(term, block_size, *, chunk_size=None, n_jobs=None):
    """Per-block U-statistics of the consecutive blocks of size ``block_size``.

    Block ``b`` covers samples ``b*B, ..., b*B + B - 1``; the last ``n mod B`` samples are dropped.

    Returns
    -------
    ndarray of shape (n // block_size,)
    """
    n = term.n_samples
    B = int(block_size)
    if B < 2:
        raise ValueError(f"block_size must be at least 2; got {block_size!r}.")
    if B > n:
        raise ValueError(f"block_size={B} exceeds the number of samples {n}.")
    nb = n // B
    T = _chunk_size(chunk_size)
    if B == 2:
        # The linear estimator: consecutive pairs, as strided slices (no index gathers).
        return term.pairs(slice(0, 2 * nb, 2), slice(1, 2 * nb, 2))
    if B < _SMALL_BLOCK:
        iu, ju = np.triu_indices(B, 1)
        per_block = iu.size
        blocks_per_chunk = max(1, (T * T) // (per_block * 8))
        out = np.empty(nb)
        for b0 in range(0, nb, blocks_per_chunk):
            b1 = min(b0 + blocks_per_chunk, nb)
            offs = (np.arange(b0, b1) * B)[:, None]
            vals = term.pairs((offs + iu).ravel(), (offs + ju).ravel())
            out[b0:b1] = vals.reshape(b1 - b0, per_block).mean(axis=1)
        return out
    norm = B * (B - 1.0)
    tasks = [
        (lambda b=b: pair_sum(term, lo=b * B, hi=(b + 1) * B, chunk_size=T) / norm)
        for b in range(nb)
    ]
    return np.asarray(_run(tasks, n_jobs), dtype=np.float64)


def _row_block_sums(term, start, stop, n, T):
    a = slice(start, stop)
    out = np.zeros(stop - start)
    for b0 in range(0, n, T):
        b = slice(b0, min(b0 + T, n))
        tile = term.block(a, b)
        if b0 <= start < b0 + T or start <= b0 < stop:
            # Remove the diagonal entries that fall inside this tile.
            rows = np.arange(start, stop)
            mask = (rows >= b.start) & (rows < b.stop)
            tile[np.flatnonzero(mask), rows[mask] - b.start] = 0.0
        out += tile.sum(axis=1)
    return out


def row_sums(term, *, lo=0, hi=None, chunk_size=None, n_jobs=None):
    """``s_i = sum_{j != i, lo <= j < hi} h_ij`` for ``lo <= i < hi``.

    Every tile is evaluated (no symmetry), so each row's sum is formed in the same order whatever
    ``n_jobs`` is.
    """
    T = _chunk_size(chunk_size)
    hi = term.n_samples if hi is None else hi

    class _Shifted:
        def block(self, a, b):
            return term.block(slice(a.start + lo, a.stop + lo), slice(b.start + lo, b.stop + lo))

    shifted = _Shifted() if lo else term
    m = hi - lo
    tasks = [
        (lambda s=s: _row_block_sums(shifted, s, min(s + T, m), m, T)) for s in range(0, m, T)
    ]
    parts = _run(tasks, n_jobs)
    return np.concatenate(parts) if parts else np.zeros(0)


def diagonal(term, *, chunk_size=None):
    """``h_ii`` for every sample."""
    T = _chunk_size(chunk_size)
    n = term.n_samples
    return np.concatenate([term.diag(slice(s, min(s + T, n))) for s in range(0, n, T)])


def dense_matrix(term):
    """The full ``n x n`` matrix of ``h`` (small inputs and tests only)."""
    n = term.n_samples
    H = term.block(slice(0, n), slice(0, n))
    H[np.diag_indices(n)] = term.diag(slice(0, n))
    return H


def witness_statistic(chunks, n, J):
    """UCME-type statistic ``1/J sum_j (1/n sum_i W_ij)^2`` from row chunks ``(rows, W[rows])`` of
    an ``n x J`` witness matrix, with each sample's share ``W_i . mean / J`` (memory ``O(n J)``).

    Returns
    -------
    value : float
    contributions : ndarray of shape (n,)
        Their mean is ``value``.
    """
    sums = np.zeros(J)
    kept = []
    for a, W in chunks:
        sums += W.sum(axis=0)
        kept.append((a, W))
    means = sums / n
    value = float(np.dot(means, means) / J)
    contrib = np.empty(n)
    for a, W in kept:
        contrib[a] = W @ means / J
    return value, contrib


__all__ += ["diagonal", "witness_statistic"]
