"""Dask arrays: recognise them without importing dask, and reduce them chunk by chunk.

The binned errors (:func:`skcalib.calibration_error`), the reliability-curve data
(:func:`skcalib.reliability_curve`), the block SKCE (:func:`skcalib.skce` with
``estimator="block"``) and its test (:func:`skcalib.stats.skce_test` with ``method="block"``)
accept Dask arrays. They never hold the whole data set: every row chunk
is validated and reduced on its own to a small *mergeable* summary -- per-bin sums
(:class:`CellSums`) or per-block sums (:class:`BlockSums`) --, the summaries are merged pairwise
in a tree (``split_every`` at a time) as :mod:`dask.delayed` tasks, and only the final summary is
returned by one ``dask.compute`` call, on whatever scheduler is active (the threaded scheduler,
or a ``distributed`` cluster when a client exists). The metric modules say *what* a chunk
contributes (they pass the functions); this module does the chunking, the validation shared by
all chunks, the weight scaling and the merging.

Rules, the same for every metric:

* **Row chunks.** The chunks of the first Dask argument among ``y_proba``, ``y_true`` and
  ``sample_weight`` define the row chunks; the other arguments are rechunked to them (NumPy
  arguments are wrapped), and the columns of a 2-D ``y_proba`` form one chunk. Chunk sizes must
  be known: a frame read with ``dask.dataframe.read_parquet`` is converted with
  ``to_dask_array(lengths=True)`` (a Dask ``Series``/``DataFrame`` argument is converted so).
* **Classes.** Without ``labels``, the classes are the sorted labels present in ``y_true``,
  found by one reduction over the chunks, so every chunk maps labels to the same columns; every
  chunk is then validated by ``check_labels_and_probabilities`` with these classes.
* **Weights.** Only weight ratios matter (weights are divided by their maximum in memory). A
  chunk divides its weights by *its own* maximum and reports that maximum as its ``scale``;
  merging rescales the sums to the larger scale, so the merged sums are those of the weights
  divided by the global maximum (up to rounding) without a separate pass to find it.
* **Blocks** (block SKCE): blocks of ``block_size`` consecutive rows are formed *inside* every
  chunk, starting at its first row; the last ``len(chunk) mod block_size`` rows of every chunk
  are dropped. When every chunk but the last has a length divisible by ``block_size``, these are
  the blocks of the in-memory estimator and the results agree (up to rounding).

Dask stays optional: :func:`is_dask_collection` looks at the type's module (``dask...``) and
only then imports dask, so ``skcalib`` imports and works without dask installed.
"""

import math
import sys

import numpy as np

from ._pairwise import _blas_single_thread
from ._validation import (
    _binary_classes_from_one_label,
    _unique_labels,
    check_labels_and_probabilities,
    check_numeric,
)

__all__ = [
    "is_dask_collection",
    "any_dask",
    "ClassificationChunks",
    "CellSums",
    "BlockSums",
    "tree_reduce",
]

#: Number of summaries merged by one task of the reduction tree.
SPLIT_EVERY = 8


def is_dask_collection(x):
    """True for a Dask array, series or data frame, without importing dask.

    A Dask object's type is defined in a ``dask`` module (``dask.array.core.Array``,
    ``dask.dataframe...``, formerly ``dask_expr``); if dask was never imported, no object can be
    one, so the check costs nothing when dask is absent.

    Parameters
    ----------
    x : object

    Returns
    -------
    bool

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib._dask import is_dask_collection
    >>> is_dask_collection(np.zeros(3)), is_dask_collection([0.5, 0.5])
    (False, False)
    """
    if "dask" not in sys.modules:
        return False
    module = type(x).__module__ or ""
    root = module.split(".", 1)[0]
    return root in ("dask", "dask_expr") and hasattr(x, "__dask_graph__")


def any_dask(*xs):
    """True if any of ``xs`` is a Dask collection (see :func:`is_dask_collection`)."""
    return any(is_dask_collection(x) for x in xs)


def _as_dask_array(x, name):
    """A Dask array of a Dask array, series or data frame (frames with known partition
    lengths)."""
    if hasattr(x, "to_dask_array"):
        # Optimise first: the optimiser may fuse partitions (a projected column of a Parquet
        # frame), and lengths computed after fusing must describe the fused partitions.
        if hasattr(x, "optimize"):
            x = x.optimize()
        return x.to_dask_array(lengths=True)
    if not hasattr(x, "chunks") or not hasattr(x, "to_delayed"):
        raise TypeError(f"{name} is a Dask {type(x).__name__}; expected a Dask array, series "
                        "or data frame.")
    return x


def _aligned(arrays, names):
    """Dask arrays of ``arrays`` (None kept) with the row chunks of the first Dask one; 2-D
    arrays get their columns in one chunk."""
    import dask.array as da

    ref = None
    out = []
    for x, name in zip(arrays, names):
        if x is not None and is_dask_collection(x):
            x = _as_dask_array(x, name)
            if ref is None:
                ref = (x, name)
        out.append(x)
    rx, rname = ref
    if rx.ndim not in (1, 2):
        raise ValueError(f"{rname} must be 1-D or 2-D; got a Dask array of shape {rx.shape}.")
    rows = rx.chunks[0]
    if any(math.isnan(c) for c in rows):
        raise ValueError(
            f"{rname} has unknown chunk sizes; convert Dask data frames with "
            "to_dask_array(lengths=True) or call compute_chunk_sizes() first.")
    n = int(sum(rows))
    for k, (x, name) in enumerate(zip(out, names)):
        if x is None:
            continue
        if not is_dask_collection(x):
            x = np.asarray(x)
            if x.ndim == 0 or x.shape[0] != n:
                raise ValueError(f"{name} and {rname} have inconsistent lengths: "
                                 f"{x.shape[0] if x.ndim else 'a scalar'} and {n}.")
            x = da.from_array(x, chunks=(rows,) + x.shape[1:])
        else:
            if x.ndim not in (1, 2):
                raise ValueError(f"{name} must be 1-D or 2-D; got a Dask array of shape "
                                 f"{x.shape}.")
            if any(math.isnan(c) for c in x.chunks[0]):
                raise ValueError(
                    f"{name} has unknown chunk sizes; convert Dask data frames with "
                    "to_dask_array(lengths=True) or call compute_chunk_sizes() first.")
            if int(sum(x.chunks[0])) != n:
                raise ValueError(f"{name} and {rname} have inconsistent lengths: "
                                 f"{int(sum(x.chunks[0]))} and {n}.")
            if x.chunks[0] != rows or (x.ndim == 2 and len(x.chunks[1]) > 1):
                x = x.rechunk((rows,) + ((-1,) if x.ndim == 2 else ()))
        out[k] = x
    return out, rows


def _blocks(x, n_chunks):
    """The row chunks of an aligned Dask array as delayed objects (None: ``n_chunks`` Nones)."""
    if x is None:
        return [None] * n_chunks
    # Unoptimised graphs: the chunks of y_true, y_proba and sample_weight that come from the same
    # source (columns of one Parquet frame) share its read tasks, so every file is read once.
    return list(x.to_delayed(optimize_graph=False).ravel())


def tree_reduce(parts, merge, split_every=SPLIT_EVERY):
    """Merge delayed summaries ``split_every`` at a time until one is left (still delayed)."""
    from dask import delayed

    merge_task = delayed(merge, pure=False)
    parts = list(parts)
    while len(parts) > 1:
        parts = [parts[i] if i + 1 == len(parts) else merge_task(*parts[i:i + split_every])
                 for i in range(0, len(parts), split_every)]
    return parts[0]


def _merge_labels(*parts):
    return _sorted_union(np.concatenate(parts))


def _sorted_union(values):
    try:
        return np.unique(values)
    except TypeError:
        raise ValueError("y_true contains labels of mixed types that cannot be sorted.") from None


def _chunk_labels(y):
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y_true must be 1-D; got a chunk of shape {y.shape}.")
    return _unique_labels(y)


def check_weight_chunk(w, n):
    """Float64 weights of one chunk: finite and non-negative (a chunk may have only zeros; the
    positive total is checked on the merged sums). None stays None."""
    if w is None:
        return None
    w = np.asarray(check_numeric(w, "sample_weight"))
    if w.dtype.kind not in "biuf":
        raise ValueError("sample_weight must be numeric.")
    w = w.astype(np.float64, copy=False)
    if w.shape != (n,):
        raise ValueError(f"sample_weight must be 1-D with one entry per sample; got a chunk of "
                         f"shape {w.shape} for {n} samples.")
    if not np.all(np.isfinite(w)):
        raise ValueError("sample_weight contains NaN or infinity.")
    if np.any(w < 0):
        raise ValueError("sample_weight must be non-negative.")
    return w


def scaled_weights(w):
    """``(w / max(w), max(w))`` of a chunk's weights; ``(zeros, 0.0)`` if all are zero and
    ``(None, 1.0)`` without weights."""
    if w is None:
        return None, 1.0
    scale = float(w.max()) if w.size else 0.0
    if scale == 0.0:
        return np.zeros_like(w), 0.0
    return w / scale, scale


class ClassificationChunks:
    """Labels and class probabilities held as Dask arrays, validated and reduced chunk by chunk.

    Parameters
    ----------
    y_true, y_proba, sample_weight : Dask or NumPy array-likes
        At least one of them a Dask collection (see the module docstring for the chunking).
    labels, pos_label
        As in :func:`skcalib._validation.check_labels_and_probabilities`.
    prob_name : str, default="y_proba"
        Name of the probability argument in error messages.
    min_samples : int, default=1

    Attributes
    ----------
    classes : ndarray
        The sorted classes (``labels``, else those present in ``y_true``).
    n_classes : int
    n_samples : int
    chunks : tuple of int
        The row chunks.
    """

    def __init__(self, y_true, y_proba, sample_weight=None, *, labels=None, pos_label=None,
                 prob_name="y_proba", min_samples=1):
        if y_true is None:
            raise ValueError("y_true must be given; got None.")
        (P, y, w), rows = _aligned([y_proba, y_true, sample_weight],
                                   (prob_name, "y_true", "sample_weight"))
        if y.ndim != 1:
            raise ValueError(f"y_true must be 1-D; got a Dask array of shape {y.shape}.")
        self.y, self.P, self.w = y, P, w
        self.chunks = tuple(int(c) for c in rows)
        self.n_samples = int(sum(self.chunks))
        self.pos_label = pos_label
        self.prob_name = prob_name
        if self.n_samples == 0:
            raise ValueError(f"y_true and {prob_name} are empty; at least {min_samples} "
                             "sample(s) needed.")
        if self.n_samples < min_samples:
            raise ValueError(f"this estimator needs at least {min_samples} samples; got "
                             f"{self.n_samples} in y_true and {prob_name}.")
        one_column = P.ndim == 1 or P.shape[1] == 1
        if labels is None:
            import dask

            present = dask.compute(tree_reduce(
                [_delayed(_chunk_labels)(b) for b in _blocks(y, len(rows))], _merge_labels))[0]
            if present.size == 1 and (one_column or P.shape[1] == 2):
                present = _binary_classes_from_one_label(present[0], present, pos_label,
                                                         prob_name, "y_true")
            labels = present
        # Validate the classes (and pos_label) as the in-memory path does, on a one-row
        # stand-in: one of the labels with uniform probabilities of the right shape.
        lab = np.asarray(labels)
        if lab.ndim != 1:
            raise ValueError(f"labels must be 1-D; got shape {lab.shape}.")
        stand_in = np.full(1, 0.5) if one_column else np.full((1, P.shape[1]), 1.0 / P.shape[1])
        self.classes = check_labels_and_probabilities(
            lab[:1], stand_in, labels=lab, pos_label=pos_label, prob_name=prob_name).classes
        self.n_classes = int(self.classes.size)

    def validate(self, y, P, w=None):
        """``(ClassificationData, weights)`` of one chunk (weights unscaled float64 or None)."""
        data = check_labels_and_probabilities(y, P, labels=self.classes,
                                              pos_label=self.pos_label,
                                              prob_name=self.prob_name)
        return data, check_weight_chunk(w, data.n_samples)

    def reduce(self, chunk_fn, merge, split_every=SPLIT_EVERY):
        """``merge`` of ``chunk_fn(data, weights)`` over all chunks, computed by one
        ``dask.compute`` call (``data`` the validated chunk, ``weights`` its float64 weights or
        None)."""
        import dask

        validate = self.validate

        def task(y, P, w):
            data, weights = validate(y, P, w)
            return chunk_fn(data, weights)

        n = len(self.chunks)
        parts = [_delayed(task)(a, b, c) for a, b, c in zip(_blocks(self.y, n),
                                                          _blocks(self.P, n),
                                                          _blocks(self.w, n))]
        # Parallelism comes from the chunks; BLAS on one thread, set once around the whole
        # computation (the engine's own per-call limits inside concurrent chunk tasks then
        # save and restore that same value instead of racing on the process-wide setting).
        with _blas_single_thread():
            return dask.compute(tree_reduce(parts, merge, split_every))[0]

    def gather(self, idx):
        """The validated rows ``idx`` (sorted indices) as one in-memory ``ClassificationData``
        (for the median heuristic's bounded subsample)."""
        import dask

        y, P = dask.compute(self.y[idx], self.P[idx])
        return check_labels_and_probabilities(y, P, labels=self.classes,
                                              pos_label=self.pos_label,
                                              prob_name=self.prob_name)


def _delayed(fn):
    from dask import delayed

    return delayed(fn, pure=False)


class CellSums:
    """Mergeable per-cell sums of one binned problem.

    ``keys`` are the occupied cells (the cells of at least one row) in increasing order, the
    order of the in-memory cell ids: the bins themselves for one coordinate, else the tuples of
    per-coordinate bins encoded as one integer ``((b_1 n_bins + b_2) n_bins + ...)`` while that
    fits in 62 bits, else the tuples as rows (m, d) sorted lexicographically. ``counts`` are the
    rows with a positive weight, ``weight`` the weight sums and ``sums[name]`` (m, k) the
    weighted column sums, all relative to the weights divided by ``scale``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib._dask import CellSums
    >>> a = CellSums.from_bins(np.array([[0], [2], [0]]), 3, None, q=np.array([.1, .9, .2]))
    >>> b = CellSums.from_bins(np.array([[1]]), 3, None, q=np.array([.5]))
    >>> m = CellSums.merge(a, b)
    >>> m.keys.tolist(), m.counts.tolist(), m.sums["q"].ravel().round(2).tolist()
    ([0, 1, 2], [2, 1, 1], [0.3, 0.5, 0.9])
    """

    def __init__(self, keys, counts, weight, sums, scale):
        self.keys = keys
        self.counts = counts
        self.weight = weight
        self.sums = sums
        self.scale = scale

    @classmethod
    def from_bins(cls, idx, n_bins, w, scale=1.0, **columns):
        """Sums of one chunk: ``idx`` (n, d) per-coordinate bins in ``[0, n_bins)``, ``w`` the
        chunk's weights divided by ``scale`` (None: unit weights), ``columns`` arrays (n,) or
        (n, k)."""
        idx = np.asarray(idx, dtype=np.int64)
        n, d = idx.shape
        if d == 1:
            codes = idx[:, 0]
        elif d * math.log2(max(n_bins, 2)) < 62:
            codes = np.zeros(n, dtype=np.int64)
            for c in range(d):
                codes *= n_bins
                codes += idx[:, c]
        else:
            codes = None
        if codes is not None and n and int(codes.max()) < 4 * n + 1024:
            # Few possible cells: count them directly, keep the occupied ones.
            rows = np.bincount(codes)
            keys = np.flatnonzero(rows)
            lookup = np.zeros(rows.size, dtype=np.intp)
            lookup[keys] = np.arange(keys.size)
            inv = lookup[codes]
        elif codes is not None:
            keys, inv = np.unique(codes, return_inverse=True)
        else:
            keys, inv = np.unique(idx, axis=0, return_inverse=True)
        inv = inv.ravel()
        m = keys.shape[0]
        if w is None:
            counts = np.bincount(inv, minlength=m).astype(np.int64)
            weight = counts.astype(np.float64)
        else:
            counts = np.bincount(inv, weights=(w > 0), minlength=m).astype(np.int64)
            weight = np.bincount(inv, weights=w, minlength=m)
        sums = {}
        for name, col in columns.items():
            col = np.asarray(col, dtype=np.float64)
            col2 = col[:, None] if col.ndim == 1 else col
            out = np.empty((m, col2.shape[1]))
            for c in range(col2.shape[1]):
                v = col2[:, c] if w is None else col2[:, c] * w
                out[:, c] = np.bincount(inv, weights=v, minlength=m)
            sums[name] = out
        return cls(keys, counts, weight, sums, float(scale))

    @staticmethod
    def merge(*parts):
        """One ``CellSums`` of several (cells united, sums rescaled to the largest scale)."""
        scale = max(p.scale for p in parts)
        factors = [p.scale / scale if scale > 0 else 0.0 for p in parts]
        keys = np.concatenate([p.keys for p in parts])
        if keys.ndim == 1:
            ukeys, inv = np.unique(keys, return_inverse=True)
        else:
            ukeys, inv = np.unique(keys, axis=0, return_inverse=True)
        inv = inv.ravel()
        m = ukeys.shape[0]
        counts = np.bincount(inv, weights=np.concatenate([p.counts for p in parts]),
                             minlength=m).astype(np.int64)

        def merged(arrays):
            stacked = np.concatenate([a * f for a, f in zip(arrays, factors)])
            if stacked.ndim == 1:
                return np.bincount(inv, weights=stacked, minlength=m)
            return np.stack([np.bincount(inv, weights=stacked[:, c], minlength=m)
                             for c in range(stacked.shape[1])], axis=1).reshape(m, -1)

        weight = merged([p.weight for p in parts])
        sums = {name: merged([p.sums[name] for p in parts]) for name in parts[0].sums}
        return CellSums(ukeys, counts, weight, sums, scale)


def merge_lists(*parts):
    """Merge lists of :class:`CellSums` element-wise (one list per chunk, one entry per
    problem)."""
    return [CellSums.merge(*group) for group in zip(*parts)]


class BlockSums:
    """Mergeable sums of the block estimator.

    ``total`` is the sum over blocks of their pair sums (weighted: of ``w_i w_j h_ij``),
    ``weight`` the sum of the blocks' pair weights (``B (B - 1)`` per block unweighted), both
    relative to the weights divided by ``scale`` (they scale with its square); ``n_blocks``,
    ``mean`` and ``m2`` are the number, mean and sum of squared deviations of the block values
    (merged by Chan's formula, without the cancellation of a sum of squares).
    """

    def __init__(self, total, weight, n_blocks, scale=1.0, mean=0.0, m2=0.0):
        self.total = float(total)
        self.weight = float(weight)
        self.n_blocks = int(n_blocks)
        self.scale = float(scale)
        self.mean = float(mean)
        self.m2 = float(m2)

    @classmethod
    def from_values(cls, values, weights, scale=1.0):
        """Sums of one chunk's block values and pair weights (both arrays of n_blocks)."""
        values = np.asarray(values, dtype=np.float64)
        weights = np.asarray(weights, dtype=np.float64)
        nb = values.size
        if nb == 0:
            return cls(0.0, 0.0, 0, scale)
        mean = float(np.mean(values))
        return cls(float(np.dot(weights, values)), math.fsum(weights), nb, scale, mean,
                   float(np.sum((values - mean) ** 2)))

    @staticmethod
    def merge(*parts):
        """One ``BlockSums`` of several (weighted sums rescaled to the largest scale)."""
        scale = max(p.scale for p in parts)
        f = [(p.scale / scale) ** 2 if scale > 0 else 0.0 for p in parts]
        n, mean, m2 = 0, 0.0, 0.0
        for p in parts:
            if p.n_blocks == 0:
                continue
            n_new = n + p.n_blocks
            delta = p.mean - mean
            mean += delta * p.n_blocks / n_new
            m2 += p.m2 + delta * delta * n * p.n_blocks / n_new
            n = n_new
        return BlockSums(math.fsum(p.total * g for p, g in zip(parts, f)),
                         math.fsum(p.weight * g for p, g in zip(parts, f)), n, scale, mean, m2)
