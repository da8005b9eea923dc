"""Kernel calibration errors for classification: SKCE, MMCE and UCME.

All three are thin definitions on the pairwise engine (:mod:`skcalib._pairwise`):

* SKCE (Widmann et al. 2019, 2021) with ``k = k_pred ⊗ k_target``:
  ``h_ij = k_pred(p_i, p_j) * (e_{y_i} - p_i)^T K_Y (e_{y_j} - p_j)``, where ``K_Y`` is the Gram
  matrix of the target kernel over the classes (the identity for the delta kernel).
* MMCE (Kumar et al. 2018), in the form of Widmann et al. (2019, Example I.1):
  ``h_ij = k(r_i, r_j) * (c_i - r_i) * (c_j - r_j)`` with top-label confidence ``r`` and
  correctness ``c``.
* UCME (Widmann et al. 2021, Appendix C): the squared mean witness at ``J`` test locations.

Sample weights (``sample_weight``) go through the engine's one mechanism
(:func:`skcalib._pairwise.weighted`): the unbiased estimator becomes the weighted U-statistic
``sum_{i != j} w_i w_j h_ij / sum_{i != j} w_i w_j``, the biased one the weighted V-statistic
``sum_{i, j} w_i w_j h_ij / (sum_i w_i)**2``, the block estimator the weight-combined block
U-statistics ``sum_b sum_{i != j in b} w_i w_j h_ij / sum_b sum_{i != j in b} w_i w_j``, and the
UCME's mean witness the weighted mean ``sum_i w_i W_ij / sum_i w_i``. Only weight ratios matter
(weights are rescaled by their maximum); unit weights give the unweighted estimates, and integer
weights equal repeated rows for the biased estimator and the UCME (not for the U-statistics,
which leave out the pairs of a row with its copies).
"""

import math

import numpy as np

from .. import _dask, _pairwise
from .._validation import (
    check_bool,
    check_labels_and_probabilities,
    check_n_jobs,
    check_n_resamples,
    check_option,
    check_random_state_param,
    check_rng,
    check_sample_weight,
    check_scalar_param,
    MAX_MC_SAMPLES,
    MAX_TEST_LOCATIONS,
    top_label,
)
from ..distributions import Categorical, is_distribution
from ..kernels import (ExponentialKernel, GaussianKernel, TensorProductKernel,
                       as_tensor_kernel, class_gram, subsample_indices)
from . import _distribution

_ESTIMATORS = ("unbiased", "biased", "block")


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


def check_estimator_option(estimator, block_size, n_samples):
    """Validate ``estimator``/``block_size`` against the number of samples."""
    check_option(estimator, "estimator", _ESTIMATORS)
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
    check_option(estimator, "estimator", _ESTIMATORS)
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


def check_no_class_options(labels, pos_label, y_pred_name, y_pred):
    """``labels``/``pos_label`` mean nothing for predictive distributions: refuse them."""
    for name, value in (("labels", labels), ("pos_label", pos_label)):
        if value is not None:
            raise ValueError(
                f"{name} is only meaningful for class probabilities; {y_pred_name} is a "
                f"{type(y_pred).__name__} distribution (leave {name}=None)."
            )


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


def classification_term(data, kernel):
    """Pair term of the classification SKCE for validated data and a resolved tensor kernel."""
    R = data.residuals()
    KY = class_gram(kernel._target(), data.n_classes)
    RK = R if _is_identity(KY) else R @ KY
    return ResidualTerm(kernel.pred_kernel._prepare(data.probs), R, RK)


def _is_identity(M):
    return M.shape[0] == M.shape[1] and np.array_equal(M, np.eye(M.shape[0]))


def _min_samples(estimator):
    return 1 if estimator == "biased" else 2


def is_regression_prediction(y_pred):
    """True for predictive distributions of real targets (not :class:`Categorical`)."""
    return is_distribution(y_pred) and not isinstance(y_pred, Categorical)


def skce(y_true, y_pred, *, kernel=None, estimator="unbiased", block_size=2, labels=None,
         pos_label=None, sample_weight=None, random_state=None, n_mc_samples=100,
         chunk_size=None, n_jobs=None):
    """Squared kernel calibration error (SKCE) of a classifier or of predictive distributions.

    ``SKCE = ||E k(., (P_X, Y)) - E k(., (P_X, Z_X))||^2`` with ``Z_X ~ P_X``: the squared MMD
    between the laws of (prediction, target) and (prediction, target drawn from the prediction),
    for a tensor-product kernel ``k = k_pred ⊗ k_target`` (Widmann et al. 2019, 2021). It is zero
    if the model is calibrated, and only then for a characteristic kernel. For classification it
    is ``E[(e_Y - p(X))^T k_pred(p(X), p(X')) K_Y (e_Y' - p(X'))]``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or (n_samples, d)
        True labels (any hashable, sortable values) for classification; real targets (vectors
        for :class:`~skcalib.distributions.MultivariateNormal` predictions) for distributions.
    y_pred : array-like of shape (n_samples,) or (n_samples, n_classes), or a distribution
        Predicted probabilities: P(``pos_label``) for a binary problem, or one column per class in
        the order of ``labels`` (sorted); or a :mod:`skcalib.distributions` object
        (``Normal``, ``MultivariateNormal``, ``Laplace``, ``Mixture``; ``Categorical`` is
        classification).
    kernel : Kernel or TensorProductKernel, default=None
        Classification: ``None`` is ``GaussianKernel("median") ⊗ DeltaKernel()``; a kernel on
        predictions is combined with :class:`~skcalib.kernels.DeltaKernel` on labels; the median
        heuristic is computed on ``y_pred`` (as two columns for binary input, so that both binary
        encodings give identical results).
        Distributions: ``None`` is ``WassersteinKernel("median") ⊗ GaussianKernel("median")``
        (``ExponentialKernel("median")`` on targets for Laplace predictions, the pairs with closed
        forms);
        the prediction kernel must be a :class:`~skcalib.kernels.WassersteinKernel` and the
        target kernel a ``GaussianKernel`` or ``ExponentialKernel``. Both medians are computed on
        the predictions only: the median W2 distance, and the median of
        ``sqrt(E||Z_i - Z_j||^2)`` over pairs of predictions. The paper's experiments use
        ``tensor(WassersteinKernel(1.0), GaussianKernel(1.0))``.
    estimator : {"unbiased", "biased", "block"}, default="unbiased"
        * ``"unbiased"``: the U-statistic over pairs ``i != j`` (can be negative);
        * ``"biased"``: the V-statistic over all pairs, always ``>= 0``;
        * ``"block"``: the mean of the U-statistics of consecutive blocks of ``block_size``
          samples, in data order, with the incomplete last block dropped (unbiased, linear time for
          fixed ``block_size``; ``block_size=2`` is the linear estimator). The only estimator
          for class probabilities held as Dask arrays, reduced chunk by chunk with the blocks
          formed inside every chunk (see :ref:`scaling`).
    block_size : int, default=2
        Block size of the block estimator (an integer ``>= 2``, validated for every estimator).
    labels : array-like, default=None
        All class labels (default: those present in ``y_true``). Class probabilities only: a
        ``ValueError`` for predictive distributions.
    pos_label : label, default=None
        Positive class of a one-column binary ``y_pred`` (default: the greater label). Class
        probabilities only: a ``ValueError`` for predictive distributions.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights; only their ratios matter. The unbiased estimate becomes the weighted
        U-statistic ``sum_{i != j} w_i w_j h_ij / sum_{i != j} w_i w_j`` (which needs two positive
        weights), the biased one ``sum_{i, j} w_i w_j h_ij / (sum_i w_i)**2`` (integer weights
        equal repeated rows), the block one
        ``sum_b sum_{i != j in b} w_i w_j h_ij / sum_b sum_{i != j in b} w_i w_j`` over the blocks
        ``b`` (each block's weighted U-statistic, weighted by its pair weight; equal weights give
        the unweighted mean over blocks). The median heuristic is unweighted.
    random_state : None, int or Generator, default=None
        Subsampling of the median heuristic when there are more than ``max_samples`` predictions;
        the Monte-Carlo draws of distributions without closed-form kernel expectations.
    n_mc_samples : int, default=100
        Draws per prediction of the Monte-Carlo fallback (used only for a distribution family and
        target kernel without closed form, e.g. Laplace predictions with a Gaussian target
        kernel). The estimators stay unbiased. At most ``10**6``, and the draws
        (``2 * n_mc_samples * n_samples`` numbers per target dimension) at most 4 GiB.
    chunk_size : int, default=None
        Tile side of the pairwise engine (memory ``O(n * chunk_size)``).
    n_jobs : int, default=None
        Parallel jobs (joblib). Results do not depend on it.

    Returns
    -------
    float
        The estimate of the *squared* KCE; unbiased estimates can be negative and are never clipped.

    See Also
    --------
    SKCE : the same error as an estimator.
    calibration_error : binned calibration errors.

    References
    ----------
    D. Widmann, F. Lindsten, D. Zachariah. Calibration tests in multi-class classification: a
    unifying framework. NeurIPS 2019. -- Calibration tests beyond classification. ICLR 2021.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib import skce
    >>> from skcalib.kernels import GaussianKernel
    >>> skce([1, 0], [[1.0, 0.0], [0.0, 1.0]], kernel=GaussianKernel(1.0), estimator="biased")
    0.6321205588285577

    Normal predictions of a regressor, with the kernel of the paper's experiments:

    >>> from skcalib.distributions import Normal
    >>> from skcalib.kernels import WassersteinKernel, tensor
    >>> k = tensor(WassersteinKernel(1.0), GaussianKernel(1.0))
    >>> round(skce([0.0, 0.0], Normal([0.0, 0.0], [1.0, 1.0]), kernel=k), 12)
    0.163136706817
    """
    check_kernel_params(estimator=estimator, block_size=block_size, random_state=random_state,
                        n_mc_samples=n_mc_samples, chunk_size=chunk_size, n_jobs=n_jobs)
    if _dask.any_dask(y_true, y_pred, sample_weight):
        return chunked_block_skce(y_true, y_pred, kernel, estimator, block_size, labels,
                                  pos_label, sample_weight, random_state, chunk_size)
    if is_regression_prediction(y_pred):
        check_no_class_options(labels, pos_label, "y_pred", y_pred)
        if y_pred.n_samples < 1:
            raise ValueError("y_pred is empty.")
        check_estimator_option(estimator, block_size, y_pred.n_samples)
        w = check_weights(sample_weight, y_pred.n_samples, estimator, block_size)
        term, chunk = _distribution.prepare_term(y_true, y_pred, kernel, random_state=random_state,
                                                 n_mc_samples=n_mc_samples)
        return estimate(term, estimator, block_size, sample_weight=w,
                        chunk_size=chunk_size or chunk, n_jobs=n_jobs)
    data = check_labels_and_probabilities(y_true, y_pred, labels=labels, pos_label=pos_label,
                                          min_samples=_min_samples(estimator), prob_name="y_pred")
    check_estimator_option(estimator, block_size, data.n_samples)
    w = check_weights(sample_weight, data.n_samples, estimator, block_size)
    k = resolve_kernel(kernel, data.probs, random_state)
    term = classification_term(data, k)
    return estimate(term, estimator, block_size, sample_weight=w, chunk_size=chunk_size,
                    n_jobs=n_jobs)


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


def chunked_block_skce(y_true, y_pred, kernel, estimator, block_size, labels, pos_label,
                       sample_weight, random_state, chunk_size):
    """The block SKCE of class probabilities held as Dask arrays, block sums merged over the
    chunks (:mod:`skcalib._dask`).

    Blocks are formed inside every chunk (the last ``len(chunk) mod block_size`` rows of each
    chunk are dropped), so the estimate equals the in-memory one when every chunk but the last
    has a length divisible by ``block_size``.
    """
    if estimator != "block":
        raise ValueError(
            f"estimator={estimator!r} sums over all pairs of samples; Dask arrays are reduced "
            "chunk by chunk with estimator='block' only (blocks inside every chunk).")
    chunks = _dask.ClassificationChunks(y_true, y_pred, sample_weight, labels=labels,
                                        pos_label=pos_label, prob_name="y_pred", min_samples=2)
    check_estimator_option(estimator, block_size, chunks.n_samples)
    sums = chunked_block_sums(chunks, kernel, int(block_size), random_state, chunk_size)
    if sample_weight is None:
        return sums.mean
    if not sums.weight > 0:
        raise ValueError("sample_weight must give some block of the block estimator at least 2 "
                         "positive entries; no block has.")
    return sums.total / sums.weight


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


def _default_mmce_kernel():
    return ExponentialKernel(length_scale=0.4)


def mmce_term(data, kernel):
    """Pair term of the MMCE: kernel on top-label confidences, residual correctness - confidence."""
    P = data.probs
    conf, shares = top_label(P)
    correct = shares[np.arange(P.shape[0]), data.y]
    R = (correct - conf)[:, None]
    return ResidualTerm(kernel._prepare(conf[:, None]), R)


def check_mmce_kernel(kernel):
    if kernel is None:
        return _default_mmce_kernel()
    if not isinstance(kernel, (GaussianKernel, ExponentialKernel)):
        raise TypeError(
            f"kernel must be None or a kernel on confidences (GaussianKernel, ExponentialKernel); "
            f"got {kernel!r}."
        )
    return kernel


def check_squared(squared, estimator, name):
    """``squared`` must be a bool; refuse ``squared=False`` for estimators whose estimates may be
    negative."""
    squared = check_bool(squared, "squared")
    if not squared and estimator != "biased":
        raise ValueError(
            f"squared=False is only available with estimator='biased': {name} estimates of the "
            f"{estimator} estimator can be negative and are never square-rooted silently."
        )


def finish_squared(value, squared, estimator, name):
    """Return ``value`` or its square root (biased estimates only, which are >= 0)."""
    check_squared(squared, estimator, name)
    return value if squared else float(np.sqrt(max(value, 0.0)))


def mmce(y_true, y_pred, *, kernel=None, estimator="biased", squared=False, block_size=2,
         labels=None, pos_label=None, sample_weight=None, random_state=None, chunk_size=None,
         n_jobs=None):
    """Maximum mean calibration error (MMCE) of Kumar et al. (2018).

    ``MMCE^2 = E[(c - r)(c' - r') k(r, r')]`` with the top-label confidence ``r = max_k p_k`` and
    the correctness ``c = 1{y in A} / |A|``, ``A`` the classes attaining ``max_k p_k`` (a tied
    maximum is a uniform draw among the tied classes; ``c = 1{y = argmax_k p_k}`` when the maximum
    is unique). It equals the SKCE of the top-label lens model
    ``(r, 1 - r)`` with the kernel ``k/2 ⊗ delta`` (Widmann et al. 2019, Example I.1).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_pred : array-like of shape (n_samples,) or (n_samples, n_classes)
        Predicted probabilities (see :func:`skce`); class probabilities only.
    kernel : GaussianKernel or ExponentialKernel, default=None
        Kernel on confidences; ``None`` is ``ExponentialKernel(length_scale=0.4)``, the Laplacian
        kernel ``exp(-|r - r'| / 0.4)`` of Kumar et al.
    estimator : {"biased", "unbiased", "block"}, default="biased"
        ``"biased"`` is Kumar et al.'s V-statistic.
    squared : bool, default=False
        Return ``MMCE^2``. ``squared=False`` (the MMCE itself) requires ``estimator="biased"``.
        Must be a bool (``"False"`` is a ``TypeError``, not a true value).
    block_size : int, default=2
        Block size of the block estimator, as in :func:`skce`.
    labels : array-like, default=None
        All class labels (default: those present in ``y_true``).
    pos_label : label, default=None
        Positive class of a one-column binary ``y_pred``.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights: the weighted V-, U- or block statistics of :func:`skce` (the
        unbiased one is ``sum_{i != j} w_i w_j h_ij / sum_{i != j} w_i w_j``).
    random_state : None, int or Generator, default=None
        Subsampling of the median heuristic (a ``"median"`` length scale only).
    chunk_size : int, default=None
        Tile side of the pairwise engine.
    n_jobs : int, default=None
        Parallel jobs (joblib). Results do not depend on it.

    Returns
    -------
    float

    Examples
    --------
    >>> from skcalib import mmce
    >>> round(mmce([0, 1, 1, 0], [0.1, 0.8, 0.6, 0.3]), 6)
    0.221182
    """
    check_kernel_params(estimator=estimator, block_size=block_size, random_state=random_state,
                        chunk_size=chunk_size, n_jobs=n_jobs)
    check_squared(squared, estimator, "MMCE")
    k = check_mmce_kernel(kernel)
    data = check_labels_and_probabilities(y_true, y_pred, labels=labels, pos_label=pos_label,
                                          min_samples=_min_samples(estimator), prob_name="y_pred")
    check_estimator_option(estimator, block_size, data.n_samples)
    w = check_weights(sample_weight, data.n_samples, estimator, block_size)
    conf = data.probs.max(axis=1)[:, None]
    k = k.resolve(conf, random_state=random_state)
    term = mmce_term(data, k)
    value = estimate(term, estimator, block_size, sample_weight=w, chunk_size=chunk_size,
                     n_jobs=n_jobs)
    return finish_squared(value, squared, estimator, "MMCE")


# --------------------------------------------------------------------------------------------
# UCME


def draw_test_locations(n_locations, n_classes, random_state=None):
    """Random test locations: predictions from Dirichlet(1, ..., 1), class indices uniform."""
    rng = check_rng(random_state)
    P = rng.dirichlet(np.ones(n_classes), size=n_locations)
    y = rng.integers(n_classes, size=n_locations)
    return P, y


def check_test_locations(test_predictions, test_targets, data, pos_label=None):
    """Validate given test locations against the classes of ``data``; targets -> class indices."""
    if test_predictions is None or test_targets is None:
        raise ValueError("test_predictions and test_targets must be given together.")
    tdata = check_labels_and_probabilities(
        test_targets, test_predictions, labels=data.classes, pos_label=pos_label,
        prob_name="test_predictions", label_name="test_targets",
    )
    return tdata.probs, tdata.y


def ucme_witness(data, kernel, test_P, test_y, *, chunk_size=None):
    """Per-sample witness values ``W[i, j] = k_pred(p_i, t_j) * ((e_{y_i} - p_i)^T K_Y)[t^Y_j]``.

    Returned as a generator of row chunks (memory ``O(chunk_size * J)``).
    """
    T = _pairwise._chunk_size(chunk_size)
    R = data.residuals()
    KY = class_gram(kernel._target(), data.n_classes)
    RK = R if _is_identity(KY) else R @ KY
    prep = kernel.pred_kernel._prepare(data.probs)
    prep_t = prep.like(test_P)
    n = data.n_samples
    J = test_P.shape[0]
    for s in range(0, n, T):
        a = slice(s, min(s + T, n))
        Kt = prep.block(a, slice(0, J), prep_t)
        Kt *= RK[a][:, test_y]
        yield a, Kt


def ucme_values(data, kernel, test_P, test_y, *, chunk_size=None, sample_weight=None):
    """``(UCME^2, per-sample contributions)`` at the given test locations (the contributions'
    weighted mean is the value)."""
    chunks = ucme_witness(data, kernel, test_P, test_y, chunk_size=chunk_size)
    return _pairwise.witness_statistic(chunks, data.n_samples, test_P.shape[0],
                                       weights=sample_weight)


def ucme_value(data, kernel, test_P, test_y, *, chunk_size=None, sample_weight=None):
    """``UCME^2`` only, streaming over row chunks; the mean witness is weighted by
    ``sample_weight`` (``sum_i w_i W_ij / sum_i w_i``)."""
    chunks = ucme_witness(data, kernel, test_P, test_y, chunk_size=chunk_size)
    return _pairwise.witness_statistic(chunks, data.n_samples, test_P.shape[0],
                                       weights=sample_weight, contributions=False)[0]


def ucme(y_true, y_pred, *, kernel=None, test_predictions=None, test_targets=None,
         n_test_locations=10, labels=None, pos_label=None, sample_weight=None, random_state=None,
         n_mc_samples=100, chunk_size=None):
    """Squared unnormalised calibration mean embedding (UCME) of a classifier.

    ``UCME^2 = 1/J sum_j (1/n sum_i k_pred(t_j, p_i) [k_Y(t^Y_j, y_i) - E_{Z ~ p_i} k_Y(t^Y_j, Z)])^2``
    at test locations ``T_j = (t_j, t^Y_j)`` (Widmann et al. 2021, Appendix C). The plug-in
    estimate is always ``>= 0``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or (n_samples, d)
        Labels, or real targets for distribution predictions (see :func:`skce`).
    y_pred : array-like of shape (n_samples,) or (n_samples, n_classes), or a distribution
        Predicted probabilities or predictive distributions (see :func:`skce`).
    kernel : Kernel or TensorProductKernel, default=None
        As in :func:`skce`, with one difference for class probabilities: a ``"median"`` length
        scale of the kernel on predictions is at least 0.2 (in that kernel's distance). The test
        locations are drawn all over the simplex, and when most predictions are (almost) 0 or 1
        (naive Bayes, boosted trees) the median heuristic is tiny (0.0056 for naive Bayes on
        scikit-learn's breast-cancer data): no test location would then be near any prediction
        and the witness would vanish. A numeric length scale is used as given.
    test_predictions : array-like of shape (J,) or (J, n_classes), or a distribution, default=None
        Predictions of the test locations (same encoding or family as ``y_pred``).
    test_targets : array-like of shape (J,) or (J, d), default=None
        Labels (targets) of the test locations. If both are None, ``n_test_locations`` locations
        are drawn with ``random_state``: for classification, predictions from the uniform
        Dirichlet distribution on the simplex and labels uniformly from the classes; for
        distributions, ``J`` of the predictions chosen at random and one target drawn from each.
    n_test_locations : int, default=10
        Number of drawn test locations (an integer in ``[1, 10**4]``, validated even when test
        locations are given).
    labels : array-like, default=None
        All class labels (see :func:`skce`); a ``ValueError`` for predictive distributions.
    pos_label : label, default=None
        Positive class of a one-column binary ``y_pred``; a ``ValueError`` for predictive
        distributions.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights: the mean witness becomes the weighted mean
        ``sum_i w_i W_ij / sum_i w_i`` (integer weights equal repeated rows). Test locations and
        the median heuristic are unweighted.
    random_state : None, int or Generator, default=None
        Draws the test locations, subsamples the median heuristic, and draws the Monte-Carlo
        samples of the fallback.
    n_mc_samples : int, default=100
        See :func:`skce`.
    chunk_size : int, default=None
        Rows per chunk (memory ``O(chunk_size * J)``).

    Returns
    -------
    float

    Examples
    --------
    >>> from skcalib import ucme
    >>> from skcalib.kernels import GaussianKernel
    >>> v = ucme([1, 0], [[1.0, 0.0], [0.0, 1.0]], kernel=GaussianKernel(1.0),
    ...          test_predictions=[[1, 0], [.5, .5], [0, 1]], test_targets=[0, 0, 1])
    >>> round(v, 12)
    0.066596066816
    """
    check_ucme_params(n_test_locations=n_test_locations, random_state=random_state,
                      n_mc_samples=n_mc_samples, chunk_size=chunk_size)
    chunks, n, J, w = ucme_witness_chunks(
        y_true, y_pred, kernel=kernel, test_predictions=test_predictions,
        test_targets=test_targets, n_test_locations=n_test_locations, labels=labels,
        pos_label=pos_label, random_state=random_state, n_mc_samples=n_mc_samples,
        chunk_size=chunk_size, sample_weight=sample_weight,
    )
    return _pairwise.witness_statistic(chunks, n, J, weights=w, contributions=False)[0]


def ucme_witness_chunks(y_true, y_pred, *, kernel=None, test_predictions=None,
                        test_targets=None, n_test_locations=10, labels=None, pos_label=None,
                        random_state=None, n_mc_samples=100, chunk_size=None,
                        sample_weight=None):
    """Validate the data of :func:`ucme` (its options are checked by :func:`check_ucme_params`),
    resolve the test locations and the kernel, and return ``(chunks, n_samples, J, weights)``:
    a generator of row chunks ``(rows, W[rows])`` of the ``n x J`` witness matrix (class
    probabilities: :func:`ucme_witness`; distributions: ``ucme_distribution_witness``) and the
    validated ``sample_weight``. Shared by :func:`ucme` and :func:`skcalib.stats.ucme_test`, so
    that both see the same witness for the same ``random_state``."""
    if is_regression_prediction(y_pred):
        check_no_class_options(labels, pos_label, "y_pred", y_pred)
        w = check_weights(sample_weight, y_pred.n_samples)
        chunks, J = _distribution.ucme_distribution(
            y_true, y_pred, kernel, test_predictions, test_targets, n_test_locations,
            random_state=random_state, n_mc_samples=n_mc_samples, chunk_size=chunk_size,
        )
        return chunks, y_pred.n_samples, J, w
    data = check_labels_and_probabilities(y_true, y_pred, labels=labels, pos_label=pos_label,
                                          prob_name="y_pred")
    w = check_weights(sample_weight, data.n_samples)
    test_P, test_y = resolve_test_locations(data, test_predictions, test_targets,
                                            n_test_locations, pos_label, random_state)
    k = resolve_ucme_kernel(kernel, data.probs, random_state)
    chunks = ucme_witness(data, k, test_P, test_y, chunk_size=chunk_size)
    return chunks, data.n_samples, test_P.shape[0], w


def check_ucme_params(*, n_test_locations=10, random_state=None, n_mc_samples=100,
                      chunk_size=None):
    """Validate the UCME's options before any work (whether or not the code path uses them)."""
    check_n_resamples(n_test_locations, "n_test_locations", max_val=MAX_TEST_LOCATIONS)
    check_random_state_param(random_state)
    check_n_resamples(n_mc_samples, "n_mc_samples", max_val=MAX_MC_SAMPLES)
    check_scalar_param(chunk_size, "chunk_size", min_val=1, allow_none=True)


def resolve_test_locations(data, test_predictions, test_targets, n_test_locations, pos_label,
                           random_state):
    if test_predictions is None and test_targets is None:
        check_n_resamples(n_test_locations, "n_test_locations", max_val=MAX_TEST_LOCATIONS)
        return draw_test_locations(n_test_locations, data.n_classes, random_state)
    return check_test_locations(test_predictions, test_targets, data, pos_label)

