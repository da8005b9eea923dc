"""Kernel calibration errors for classification: SKCE, MMCE and UCME.

All three are thin users of the kernel floor (:mod:`skcalib._problems.kernel`: validated
predictions, resolved kernel, pair term; :mod:`skcalib._problems.estimates`;
:mod:`skcalib._problems.ucme`) on the pairwise engine (:mod:`skcalib._pairwise`):

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

import numpy as np

from .. import _dask, _pairwise
from .._problems.estimates import (
    check_estimator_option,
    check_kernel_params,
    check_weights,
    chunked_block_sums,
    estimate,
    min_samples,
)
from .._problems.kernel import KernelProblem
from .._problems.kernel_resolution import check_mmce_kernel
from .._problems.terms import mmce_term
from .._problems.ucme import check_ucme_params, ucme_witness_chunks
from .._validation import check_bool


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
    problem = KernelProblem(y_true, y_pred, labels=labels, pos_label=pos_label,
                            min_samples=min_samples(estimator), random_state=random_state,
                            n_mc_samples=n_mc_samples)
    check_estimator_option(estimator, block_size, problem.n_samples)
    w = check_weights(sample_weight, problem.n_samples, estimator, block_size)
    problem.resolve(kernel)
    return estimate(problem.term(), estimator, block_size, sample_weight=w,
                    chunk_size=chunk_size or problem.preferred_chunk_size, n_jobs=n_jobs)


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
    data = KernelProblem(y_true, y_pred, labels=labels, pos_label=pos_label,
                         min_samples=min_samples(estimator), accept_distributions=False).data
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
