"""The one pairwise engine: sums of pair terms in bounded memory.

Every kernel quantity in skcalib is a sum over pairs of ``h_ij = k(p_i, p_j) * g_ij``. A *pair
term* object knows how to evaluate ``h`` on a rectangular tile of pairs, on matching index pairs
and on the diagonal; this module turns it into

* the U-statistic ``1/(n(n-1)) * sum_{i != j} h_ij`` (unbiased),
* the V-statistic ``1/n**2 * sum_{i, j} h_ij`` (biased, with the diagonal),
* block statistics: the per-block U-statistics of consecutive blocks of size ``B`` (the
  incomplete last block dropped; ``B = 2`` is the linear estimator, ``B = n`` the U-statistic),
* row sums ``sum_{j != i} h_ij`` (each sample's share of the U-statistic).

Sample weights ``w_i >= 0`` enter through one mechanism: :func:`weighted` turns a pair term into
the term ``w_i w_j h_ij`` (exposing ``.weights``), and every statistic divides by the matching sum
of weight products instead of a count:

* weighted U-statistic ``sum_{i != j} w_i w_j h_ij / sum_{i != j} w_i w_j``, the denominator being
  ``(sum w)**2 - sum w**2`` (computed without cancellation, see :func:`pair_weight_sum`);
* weighted V-statistic ``sum_{i, j} w_i w_j h_ij / (sum w)**2`` (integer weights equal repeated
  rows);
* weighted block statistics: each block's weighted U-statistic, with the block's weight
  ``sum_{i != j in block} w_i w_j`` (see :func:`block_statistics`).

Unit weights give the unweighted statistics.

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
    with_weights(w) -> term                   # optional: the term w_i w_j h_ij (see weighted)
    weights : ndarray or None                 # set on weighted terms only
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
    "weighted",
    "WeightedTerm",
    "pair_weight_sum",
    "block_pair_weights",
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


def weighted(term, w):
    """The pair term ``w_i w_j h_ij`` of ``term`` for sample weights ``w`` (``term`` if None).

    Uses ``term.with_weights(w)`` when the term has it (an exact, fused path: e.g. the residual
    term folds ``w`` into its residual vectors), else the generic :class:`WeightedTerm`. Either
    way the result exposes ``.weights``, from which the statistics take their denominators.

    Parameters
    ----------
    term : pair term
        An unweighted pair term.
    w : array-like of shape (n_samples,) or None
        Non-negative finite weights (validated by the caller, e.g. with
        ``check_sample_weight(..., rescale=True)``).

    Returns
    -------
    pair term
    """
    if w is None:
        return term
    if getattr(term, "weights", None) is not None:
        raise ValueError("the pair term is already weighted.")
    w = np.asarray(w, dtype=np.float64)
    if w.shape != (term.n_samples,):
        raise ValueError(
            f"sample_weight has shape {w.shape}; expected ({term.n_samples},)."
        )
    with_weights = getattr(term, "with_weights", None)
    if with_weights is not None:
        return with_weights(w)
    return WeightedTerm(term, w)


class WeightedTerm:
    """Generic weighted pair term ``w_i w_j h_ij`` around any pair term (no fused ``block_sum``).

    Parameters
    ----------
    term : pair term
        The unweighted term.
    weights : ndarray of shape (n_samples,)
        Non-negative weights.
    """

    def __init__(self, term, weights):
        self.term = term
        self.weights = np.asarray(weights, dtype=np.float64)
        self.n_samples = term.n_samples

    def block(self, a, b):
        H = self.term.block(a, b) * self.weights[a][:, None]
        H *= self.weights[b][None, :]
        return H

    def pairs(self, i, j):
        return self.term.pairs(i, j) * (self.weights[i] * self.weights[j])

    def diag(self, a):
        w = self.weights[a]
        return self.term.diag(a) * (w * w)


def pair_weight_sum(w):
    """``sum_{i != j} w_i w_j`` for non-negative weights, as ``2 sum_j w_j sum_{i < j} w_i``.

    Equal to ``(sum w)**2 - sum w**2`` but without its cancellation (one dominant weight).
    """
    w = np.asarray(w, dtype=np.float64)
    if w.size < 2:
        return 0.0
    prefix = np.cumsum(w[:-1])
    return 2.0 * float(np.dot(w[1:], prefix))


def block_pair_weights(w, block_size):
    """``sum_{i != j in block b} w_i w_j`` for the consecutive blocks of ``block_size`` samples
    (the incomplete last block dropped), by prefix sums as :func:`pair_weight_sum`."""
    B = int(block_size)
    w = np.asarray(w, dtype=np.float64)
    nb = w.shape[0] // B
    W = w[:nb * B].reshape(nb, B)
    prefix = np.cumsum(W, axis=1)[:, :-1]
    return 2.0 * np.einsum("ij,ij->i", W[:, 1:], prefix)


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


def _upper_row_block_sum(term, start, stop, hi, T):
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
        (lambda s=s: _upper_row_block_sum(term, s, min(s + T, hi), hi, T)) for s in starts
    ]
    parts = _run(tasks, n_jobs)
    total = 2.0 * math.fsum(parts)
    if include_diagonal:
        diag_parts = [float(term.diag(slice(s, min(s + T, hi))).sum()) for s in starts]
        total += math.fsum(diag_parts)
    return total


def u_statistic(term, *, chunk_size=None, n_jobs=None):
    """Unbiased U-statistic ``1/(n(n-1)) * sum_{i != j} h_ij`` (needs ``n >= 2``).

    For a weighted term (``term.weights``, see :func:`weighted`) the weighted U-statistic
    ``sum_{i != j} w_i w_j h_ij / sum_{i != j} w_i w_j`` (needs two positive weights).
    """
    n = term.n_samples
    w = getattr(term, "weights", None)
    if w is None:
        if n < 2:
            raise ValueError(f"the unbiased estimator needs at least 2 samples; got {n}.")
        return pair_sum(term, chunk_size=chunk_size, n_jobs=n_jobs) / (n * (n - 1.0))
    denom = pair_weight_sum(w)
    if not denom > 0:
        raise ValueError(
            "the unbiased estimator needs at least 2 samples with positive sample_weight; got "
            f"{int(np.count_nonzero(w))}."
        )
    return pair_sum(term, chunk_size=chunk_size, n_jobs=n_jobs) / denom


def v_statistic(term, *, chunk_size=None, n_jobs=None):
    """Biased V-statistic ``1/n**2 * sum_{i, j} h_ij`` (with the diagonal).

    For a weighted term: ``sum_{i, j} w_i w_j h_ij / (sum w)**2``.
    """
    n = term.n_samples
    w = getattr(term, "weights", None)
    total = pair_sum(term, include_diagonal=True, chunk_size=chunk_size, n_jobs=n_jobs)
    if w is None:
        return total / float(n * n)
    sw = math.fsum(w)
    return total / (sw * sw)


def block_statistics(term, block_size, *, chunk_size=None, n_jobs=None, return_weights=False):
    """Per-block U-statistics of the consecutive blocks of size ``block_size``.

    Block ``b`` covers samples ``b*B, ..., b*B + B - 1``; the last ``n mod B`` samples are dropped.
    For a weighted term each block's value is its weighted U-statistic
    ``sum_{i != j in b} w_i w_j h_ij / sum_{i != j in b} w_i w_j`` (0 for a block with fewer than
    two positive weights, whose weight is 0), and its weight is the denominator.

    Parameters
    ----------
    term : pair term
    block_size : int
    chunk_size : int, default=None
    n_jobs : int, default=None
    return_weights : bool, default=False
        Also return each block's weight ``sum_{i != j in b} w_i w_j`` (``B (B - 1)`` unweighted):
        the weighted block estimate is ``sum_b W_b U_b / sum_b W_b``.

    Returns
    -------
    values : ndarray of shape (n // block_size,)
    weights : ndarray of shape (n // block_size,)
        Only if ``return_weights``.
    """
    n = term.n_samples
    B = int(block_size)
    if B < 2:
        raise ValueError(f"block_size must be at least 2; got {block_size!r}.")
    if B > n:
        raise ValueError(f"block_size={B} exceeds the number of samples {n}.")
    nb = n // B
    T = _chunk_size(chunk_size)
    w = getattr(term, "weights", None)
    if w is None:
        values = _block_pair_sums(term, B, nb, T, n_jobs) / (B * (B - 1.0))
        if return_weights:
            return values, np.full(nb, B * (B - 1.0))
        return values
    sums = _block_pair_sums(term, B, nb, T, n_jobs)
    weights = block_pair_weights(w, B)
    values = np.zeros(nb)
    np.divide(sums, weights, out=values, where=weights > 0)
    return (values, weights) if return_weights else values


def _block_pair_sums(term, B, nb, T, n_jobs):
    """``sum_{i != j in b} h_ij`` per block: consecutive pairs as strided slices for ``B = 2``
    (the linear estimator, no index gathers), vectorised lists of index pairs for small blocks,
    the tiled pair sum for large ones."""
    if B == 2:
        return 2.0 * term.pairs(slice(0, 2 * nb, 2), slice(1, 2 * nb, 2))
    if B < _SMALL_BLOCK:
        iu, ju = np.triu_indices(B, 1)
        per_block = iu.size
        blocks_per_chunk = max(1, (T * T) // (per_block * 8))
        out = np.empty(nb)
        for b0 in range(0, nb, blocks_per_chunk):
            b1 = min(b0 + blocks_per_chunk, nb)
            offs = (np.arange(b0, b1) * B)[:, None]
            vals = term.pairs((offs + iu).ravel(), (offs + ju).ravel())
            out[b0:b1] = 2.0 * vals.reshape(b1 - b0, per_block).sum(axis=1)
        return out
    tasks = [(lambda b=b: pair_sum(term, lo=b * B, hi=(b + 1) * B, chunk_size=T))
             for b in range(nb)]
    return np.asarray(_run(tasks, n_jobs), dtype=np.float64)


def _row_block_sums(term, start, stop, n, T, cw=None):
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
        out += tile.sum(axis=1) if cw is None else tile @ cw[b]
    return out


def row_sums(term, *, lo=0, hi=None, column_weights=None, chunk_size=None, n_jobs=None):
    """``s_i = sum_{j != i, lo <= j < hi} h_ij`` for ``lo <= i < hi``.

    With ``column_weights`` ``c``: ``s_i = sum_{j != i} c_j h_ij`` (the weighted shares, from
    which each sample's contribution to a weighted statistic follows even for zero-weight
    samples). For a weighted term ``h_ij`` is already ``w_i w_j h_ij``.

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
    cw = None
    if column_weights is not None:
        cw = np.asarray(column_weights, dtype=np.float64)[lo:hi]
    tasks = [
        (lambda s=s: _row_block_sums(shifted, s, min(s + T, m), m, T, cw))
        for s in range(0, m, T)
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


def witness_statistic(chunks, n, J, weights=None, contributions=True):
    """UCME-type statistic ``1/J sum_j (1/n sum_i W_ij)^2`` from row chunks ``(rows, W[rows])`` of
    an ``n x J`` witness matrix, with each sample's share ``W_i . mean / J``.

    With ``weights`` the mean witness is the weighted mean ``sum_i w_i W_ij / sum_i w_i`` (integer
    weights equal repeated rows). The shares need the chunks kept (memory ``O(n J)``);
    ``contributions=False`` streams over them (memory ``O(chunk J)``) and returns the value only.

    Returns
    -------
    value : float
    contributions : ndarray of shape (n,) or None
        Their (weighted) mean is ``value``; None if ``contributions=False``.
    """
    sums = np.zeros(J)
    kept = []
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    for a, W in chunks:
        sums += W.sum(axis=0) if w is None else w[a] @ W
        if contributions:
            kept.append((a, W))
    means = sums / (n if w is None else math.fsum(w))
    value = float(np.dot(means, means) / J)
    if not contributions:
        return value, None
    contrib = np.empty(n)
    for a, W in kept:
        contrib[a] = W @ means / J
    return value, contrib


__all__ += ["diagonal", "witness_statistic"]


# --------------------------------------------------------------------------------------------
# Passes for the hypothesis tests (skcalib.stats): several sums of one pass over the tiles.


def _full_tile(term, a, b, diagonal_tile):
    """``h`` on the tile ``a x b``; on a diagonal tile with the exact ``h_ii`` on its diagonal."""
    tile = term.block(a, b)
    if diagonal_tile:
        tile[np.diag_indices(tile.shape[0])] = term.diag(a)
    return tile


def _ordered_results(tasks, n_jobs):
    """Results of zero-argument callables, yielded in task order (memory bounded by joblib's
    pre-dispatch when parallel), with BLAS limited to one thread as in :func:`_run`."""
    with _blas_single_thread():
        if n_jobs is None or n_jobs == 1 or len(tasks) <= 1:
            for t in tasks:
                yield t()
            return
        yield from Parallel(n_jobs=n_jobs, prefer="threads", return_as="generator")(
            delayed(t)() for t in tasks
        )


def _summary_task(term, start, stop, n, T, squares):
    a = slice(start, stop)
    rows = np.zeros(n - start)
    total = 0.0
    sq = 0.0
    for b0 in range(start, n, T):
        b = slice(b0, min(b0 + T, n))
        tile = term.block(a, b)
        if b0 == start:
            tile = np.triu(tile, 1)
        rows[:stop - start] += tile.sum(axis=1)
        rows[b0 - start:b.stop - start] += tile.sum(axis=0)
        total += float(tile.sum())
        if squares:
            sq += float(np.vdot(tile, tile))
    return start, rows, total, sq


def pair_summary(term, *, squares=True, chunk_size=None, n_jobs=None):
    """One pass over the tiles on and above the diagonal (``h`` symmetric) giving

    * ``total = sum_{i != j} h_ij``,
    * ``row_sums[i] = sum_{j != i} h_ij``,
    * ``squares = sum_{i != j} h_ij**2`` (if ``squares``, else 0.0),
    * ``diagonal[i] = h_ii``,

    what the U-statistic's Hoeffding variance, the Gamma approximation and the spectral
    statistics need, in memory ``O(n * chunk_size)``. Partial row sums are combined in task
    order, so the result does not depend on ``n_jobs``.

    Returns
    -------
    total : float
    row_sums : ndarray of shape (n_samples,)
    squares : float
    diagonal : ndarray of shape (n_samples,)
    """
    T = _chunk_size(chunk_size)
    n = term.n_samples
    tasks = [(lambda s=s: _summary_task(term, s, min(s + T, n), n, T, squares))
             for s in range(0, n, T)]
    row_sums = np.zeros(n)
    totals, sqs = [], []
    for start, rows, total, sq in _ordered_results(tasks, n_jobs):
        row_sums[start:] += rows
        totals.append(total)
        sqs.append(sq)
    return (2.0 * math.fsum(totals), row_sums, 2.0 * math.fsum(sqs),
            diagonal(term, chunk_size=T))


def _quadratic_task(term, start, stop, n, T, Ct):
    a = slice(start, stop)
    q = np.zeros(Ct.shape[1])
    rows = np.zeros(n - start)
    for b0 in range(start, n, T):
        b = slice(b0, min(b0 + T, n))
        diagonal_tile = b0 == start
        tile = _full_tile(term, a, b, diagonal_tile)
        # sum_ij C[i, m] h_ij C[j, m] over the tile: one matrix product for all resamples.
        q += (1.0 if diagonal_tile else 2.0) * np.einsum("im,im->m", Ct[a], tile @ Ct[b])
        rows[:stop - start] += tile.sum(axis=1)
        if not diagonal_tile:
            rows[b0 - start:b.stop - start] += tile.sum(axis=0)
    return start, q, rows


def quadratic_forms(term, counts, *, chunk_size=None, n_jobs=None):
    """``q_m = sum_{i, j} C_mi h_ij C_mj`` (diagonal included) for each row ``C_m`` of
    ``counts``, and the full row sums ``sum_j h_ij``, in one pass over the tiles on and above the
    diagonal.

    Each tile costs one ``(tile x tile) @ (tile x M)`` product for all ``M`` resamples (BLAS), so
    ``M`` resamples cost ``M n^2`` flops and memory ``O(n (M + chunk_size))``: the ``n x n``
    matrix is never formed.

    Parameters
    ----------
    term : pair term
    counts : ndarray of shape (M, n_samples)
        Resampling weights (multinomial counts for the bootstrap).
    chunk_size, n_jobs : see :func:`pair_sum`

    Returns
    -------
    q : ndarray of shape (M,)
    row_sums : ndarray of shape (n_samples,)
        ``sum_j h_ij``, the diagonal included.
    """
    T = _chunk_size(chunk_size)
    n = term.n_samples
    Ct = np.ascontiguousarray(np.asarray(counts, dtype=np.float64).T)
    if Ct.shape[0] != n:
        raise ValueError(f"counts has {Ct.shape[0]} columns; expected {n}.")
    tasks = [(lambda s=s: _quadratic_task(term, s, min(s + T, n), n, T, Ct))
             for s in range(0, n, T)]
    q = np.zeros(Ct.shape[1])
    row_sums = np.zeros(n)
    for start, qs, rows in _ordered_results(tasks, n_jobs):
        q += qs
        row_sums[start:] += rows
    return q, row_sums


def _landmark_task(term, start, stop, m):
    a = slice(start, stop)
    Hm = term.block(a, slice(0, m))
    k = min(stop, m) - start
    if k > 0:
        idx = np.arange(k)
        Hm[idx, start + idx] = term.diag(slice(start, start + k))
    return Hm.T @ Hm, Hm.sum(axis=0), (Hm[:k] if k > 0 else None)


def landmark_moments(term, n_landmarks, *, chunk_size=None, n_jobs=None):
    """Moments of the ``n x m`` block ``H[:, :m]`` (the first ``m`` samples are the landmarks)
    for a Nyström approximation, streamed over row chunks (memory ``O(m^2 + chunk_size m)``):

    Returns
    -------
    gram : ndarray of shape (m, m)
        ``H[:, :m]^T H[:, :m]``.
    column_sums : ndarray of shape (m,)
        ``sum_i H[i, :m]``.
    landmarks : ndarray of shape (m, m)
        ``H[:m, :m]`` (diagonal included).
    """
    T = _chunk_size(chunk_size)
    n = term.n_samples
    m = int(n_landmarks)
    tasks = [(lambda s=s: _landmark_task(term, s, min(s + T, n), m)) for s in range(0, n, T)]
    gram = np.zeros((m, m))
    sums = np.zeros(m)
    top = []
    for G, s, Hm in _ordered_results(tasks, n_jobs):
        gram += G
        sums += s
        if Hm is not None:
            top.append(Hm)
    return gram, sums, np.vstack(top)


__all__ += ["pair_summary", "quadratic_forms", "landmark_moments"]
