"""Hypothesis tests and confidence intervals for the SKCE (Widmann et al. 2019, 2021).

Null hypothesis: the model is calibrated, ``SKCE = 0``. Every method runs on the pairwise engine
(:mod:`skcalib._pairwise`) with the pair term of :func:`skcalib.skce`, for class probabilities and
for every family of predictive distributions:

* ``"block"``: the asymptotically normal test of the block estimator (Remark B.1 of the 2021
  paper); ``block_size=2`` is the linear test, ``"sqrt"`` the ``B = floor(sqrt(n))`` test;
* ``"bootstrap"``: the U-statistic test with the Arcones--Giné degenerate bootstrap, as the
  reference implementation computes it (statistic ``n/(n-1) U - V``, multinomial resampling
  counts), all resamples of a tile in one matrix product and never an ``n x n`` matrix;
* ``"spectral"``: the null ``sum_i lambda_i (chi2_1 - 1)`` of ``n U`` with the eigenvalues of the
  double-centred Gram matrix ``H / n`` (exact), or of its Nyström approximation on ``m`` landmarks
  (``n_landmarks``: ``O(n m)`` kernel evaluations and ``O(n m^2)`` flops, no ``n x n`` matrix);
* ``"gamma"``: a Gamma distribution matched to the mean and variance of ``n V`` under the null;
* ``"distribution_free"``: the Hoeffding/McDiarmid bounds (a p-value bound valid for every ``n``).

``"spectral"`` and ``"gamma"`` follow Gretton et al. (2009, 2012); the papers list them as options
but do not evaluate them (extensions, labelled as such in the documentation).
"""

import math
import warnings

import numpy as np
from scipy import stats as _sps

from .. import _dask, _pairwise
from .._problems.estimates import chunked_block_sums
from .._problems.kernel import KernelProblem
from .._validation import (
    check_bool,
    check_n_jobs,
    check_n_resamples,
    check_option,
    check_random_state_param,
    check_scalar_param,
    check_work_memory,
    MAX_MC_SAMPLES,
)
from ._result import (
    CalibrationTestResult,
    ConfidenceInterval,
    IntervalEnds,
    check_confidence_level,
    normal_interval,
    resampling_pvalue,
    standardise,
)

__all__ = ["skce_test", "skce_ci", "SKCEInterval"]

_METHODS = ("auto", "block", "bootstrap", "spectral", "gamma", "distribution_free")
_ESTIMATORS = ("unbiased", "biased", "block")

#: ``method="auto"``: the bootstrap up to this many samples, the Nyström spectral test beyond.
AUTO_BOOTSTRAP_MAX = 5000
#: Landmarks of the Nyström spectral test chosen by ``method="auto"``.
AUTO_LANDMARKS = 500
#: Largest ``n`` of the exact spectral test (it holds the ``n x n`` matrix).
EXACT_SPECTRAL_MAX = 10000
#: Resamples per pass of the bootstrap are capped so that the counts take about this many floats.
_COUNTS_BUDGET = 1 << 22


# --------------------------------------------------------------------------------------------
# The problem: validated data, the resolved kernel, and the pair term (optionally reordered).


def _kernel_problem(y_true, y_pred, kernel, labels, pos_label, random_state, n_mc_samples):
    """The :class:`~skcalib._problems.kernel.KernelProblem` of the tests, with the kernel
    resolved once on all samples and the generator of ``random_state`` made right after it (a
    given ``RandomState`` is advanced here, whatever the method)."""
    problem = KernelProblem(y_true, y_pred, labels=labels, pos_label=pos_label,
                            random_state=random_state, n_mc_samples=n_mc_samples)
    problem.resolve(kernel)
    problem.rng  # noqa: B018 - made now, as every method's draws expect
    return problem


def _check_block_size(block_size, n, min_blocks=2):
    """``block_size`` (an int >= 2 or ``"sqrt"``) -> int, with at least ``min_blocks`` blocks
    (two for the block test's standard error, one for the distribution-free bound)."""
    if isinstance(block_size, str):
        check_option(block_size, "block_size", ("sqrt",))
        B = max(2, math.isqrt(n))
    else:
        B = int(check_scalar_param(block_size, "block_size", min_val=2))
    if n // B < min_blocks:
        what = "the block test needs at least 2 blocks" if min_blocks == 2 else \
            "the block estimator needs a full block"
        raise ValueError(
            f"{what}: n_samples={n} and block_size={B} give {n // B}; use a smaller block_size "
            "or more samples."
        )
    return B


def _hoeffding_se(U, off_rows, squares, n):
    """Standard error of the U-statistic from its Hoeffding decomposition,
    ``Var U = (4 (n - 2) zeta_1 + 2 zeta_2) / (n (n - 1))`` with plug-in ``zeta_1`` (the variance
    of the rows' means) and ``zeta_2`` (the variance of ``h``)."""
    if n < 3:
        return float("nan")
    g = off_rows / (n - 1.0)
    zeta1 = float(np.mean((g - U) ** 2))
    zeta2 = max(squares / (n * (n - 1.0)) - U * U, 0.0)
    var = (4.0 * (n - 2.0) * zeta1 + 2.0 * zeta2) / (n * (n - 1.0))
    return math.sqrt(max(var, 0.0))


def _u_moments(term, chunk_size, n_jobs):
    """``(U, standard error, V, mean h_ii, mean_{i != j} h_ij^2)`` in one pass."""
    n = term.n_samples
    total, rows, squares, diag = _pairwise.pair_summary(term, chunk_size=chunk_size,
                                                        n_jobs=n_jobs)
    U = total / (n * (n - 1.0))
    V = (total + math.fsum(diag)) / (n * float(n))
    return U, _hoeffding_se(U, rows, squares, n), V, float(np.mean(diag)), \
        squares / (n * (n - 1.0))


def _lazy_se(term, chunk_size, n_jobs):
    return lambda: _u_moments(term, chunk_size, n_jobs)[1]


# --------------------------------------------------------------------------------------------
# The methods


def _block_test(term, B, chunk_size, n_jobs):
    values = _pairwise.block_statistics(term, B, chunk_size=chunk_size, n_jobs=n_jobs)
    nb = values.size
    est = float(np.mean(values))
    se = float(np.std(values, ddof=1) / math.sqrt(nb))
    return _block_result(est, se, nb, term.n_samples)


def _chunked_block_test(y_true, y_pred, kernel, method, block_size, labels, pos_label,
                        random_state, chunk_size):
    """The block test of class probabilities held as Dask arrays: blocks inside every chunk,
    their mean and spread merged over the chunks (:mod:`skcalib._dask`)."""
    if method != "block":
        raise ValueError(f"method={method!r} needs all pairs or resamples of the whole data set; "
                         "Dask arrays are tested chunk by chunk with method='block' only.")
    chunks = _dask.ClassificationChunks(y_true, y_pred, labels=labels, pos_label=pos_label,
                                        prob_name="y_pred", min_samples=2)
    n = chunks.n_samples
    B = _check_block_size(block_size, n)
    sums = chunked_block_sums(chunks, kernel, B, random_state, chunk_size)
    nb = sums.n_blocks
    if nb < 2:
        raise ValueError(f"the block test needs at least 2 blocks; the chunks hold {nb} blocks "
                         f"of block_size={B}.")
    se = math.sqrt(sums.m2 / (nb - 1)) / math.sqrt(nb)
    return _block_result(sums.mean, se, nb, n)


def _block_result(est, se, nb, n):
    """The block test's result from the mean and standard error of ``nb`` block values."""
    if se > 0:
        z = est / se
        p = float(_sps.norm.sf(z))
    else:
        warnings.warn(
            f"the {nb} block estimates are all equal ({est!r}): their standard deviation is 0 "
            "and the block test is undefined (pvalue=nan).", RuntimeWarning, stacklevel=4)
        z, p = float("nan"), float("nan")
    return CalibrationTestResult(statistic=z, pvalue=p, estimate=est, method="block",
                                 n_samples=n, standard_error=se)


def _draw_counts(rng, M, n):
    """Multinomial(n; 1/n, ..., 1/n) counts of ``M`` resamples (indices drawn with replacement)."""
    idx = rng.integers(n, size=(M, n))
    idx += (np.arange(M) * n)[:, None]
    return np.bincount(idx.ravel(), minlength=M * n).reshape(M, n).astype(np.float64)


def _bootstrap_passes(term, n_resamples, rng, chunk_size, n_jobs):
    """Yield ``(counts, q, row_sums)`` for batches of resamples (``q_m = C_m^T H C_m``)."""
    n = term.n_samples
    batch = max(64, _COUNTS_BUDGET // max(n, 1))
    done = 0
    while done < n_resamples:
        M = min(batch, n_resamples - done)
        C = _draw_counts(rng, M, n)
        q, rows = _pairwise.quadratic_forms(term, C, chunk_size=chunk_size, n_jobs=n_jobs)
        yield C, q, rows
        done += M


def _bootstrap_test(term, n_resamples, rng, add_one, chunk_size, n_jobs):
    n = term.n_samples
    diag = _pairwise.diagonal(term, chunk_size=chunk_size)
    null = []
    rows = None
    for C, q, r in _bootstrap_passes(term, n_resamples, rng, chunk_size, n_jobs):
        if rows is None:
            rows = r
        # T* = (n/(n-1) (C^T H C - sum_i C_i h_ii) - 2 C^T H 1) / n^2 (Arcones and Gine).
        null.append((n / (n - 1.0) * (q - C @ diag) - 2.0 * (C @ rows)) / (n * float(n)))
    null = np.concatenate(null)
    total_all = math.fsum(rows)
    sum_diag = math.fsum(diag)
    U = (total_all - sum_diag) / (n * (n - 1.0))
    V = total_all / (n * float(n))
    T = n / (n - 1.0) * U - V
    # Row sums are known: the Hoeffding standard error needs only the squares (one more pass),
    # so it is computed on demand.
    return CalibrationTestResult(statistic=T, pvalue=resampling_pvalue(null, T, add_one),
                                 estimate=U, method="bootstrap", n_samples=n,
                                 n_resamples=n_resamples, null_distribution=null,
                                 standard_error=_lazy_se(term, chunk_size, n_jobs))


def _simulate_chaos(lam, n_resamples, rng):
    """Draws of ``sum_i lambda_i (Z_i - 1)``, ``Z_i ~ chi2_1`` (in batches of bounded memory)."""
    lam = np.asarray(lam, dtype=np.float64)
    out = np.empty(n_resamples)
    batch = max(1, _COUNTS_BUDGET // max(lam.size, 1))
    for s in range(0, n_resamples, batch):
        e = min(s + batch, n_resamples)
        Z = rng.standard_normal((e - s, lam.size))
        Z *= Z
        Z -= 1.0
        out[s:e] = Z @ lam
    return out


def _positive(lam):
    lam = np.asarray(lam, dtype=np.float64)
    if lam.size == 0:
        return lam
    top = float(lam.max())
    return lam[lam > max(top, 0.0) * 1e-12] if top > 0 else lam[:0]


def _dense(term, chunk_size):
    """The ``n x n`` matrix of ``h`` built tile by tile (tiles on and above the diagonal, mirrored),
    so that terms with large per-pair work (full covariances) stay within their tile budget."""
    n = term.n_samples
    T = _pairwise._chunk_size(chunk_size)
    H = np.empty((n, n))
    for a0 in range(0, n, T):
        a = slice(a0, min(a0 + T, n))
        for b0 in range(a0, n, T):
            b = slice(b0, min(b0 + T, n))
            tile = term.block(a, b)
            H[a, b] = tile
            if b0 != a0:
                H[b, a] = tile.T
        H[a, a] = 0.5 * (H[a, a] + H[a, a].T)
    H[np.diag_indices(n)] = _pairwise.diagonal(term, chunk_size=T)
    return H


def _spectral_exact(term, n_resamples, rng, add_one, chunk_size):
    n = term.n_samples
    if n > EXACT_SPECTRAL_MAX:
        raise ValueError(
            f"the exact spectral test holds the n x n matrix; n_samples={n} exceeds "
            f"{EXACT_SPECTRAL_MAX}. Pass n_landmarks (e.g. 500) for the Nyström spectral test, "
            "which needs no n x n matrix."
        )
    H = _dense(term, chunk_size)
    diag = H.diagonal().copy()
    rows_all = H.sum(axis=1)
    total = float(rows_all.sum() - diag.sum())
    U = total / (n * (n - 1.0))
    squares = float(np.vdot(H, H) - np.dot(diag, diag))
    se = _hoeffding_se(U, rows_all - diag, squares, n)
    # Double centring C H C with C = I - 11^T/n, in place.
    H -= H.mean(axis=0)[None, :]
    H -= H.mean(axis=1)[:, None]
    lam = _positive(np.linalg.eigvalsh(H) / n)
    return _spectral_result(n * U, U, se, lam, n, n_resamples, rng, add_one, None)


def _spectral_nystrom(problem, m, n_resamples, rng, add_one, chunk_size, n_jobs):
    n = problem.n_samples
    # Three m x m matrices (the Gram, the landmarks' block, the eigenvectors) at once.
    check_work_memory(3.0 * m * m, "n_landmarks", m, "the Nyström test's m x m matrices")
    order = rng.permutation(n)
    term = problem.term(order)  # the landmarks are the first m samples of a random order
    gram, sums, Hmm = _pairwise.landmark_moments(term, m, chunk_size=chunk_size, n_jobs=n_jobs)
    # m x m linear algebra with one BLAS thread, as the engine's tiles: on a loaded machine
    # threaded eigensolvers stalled for seconds (measured: 3.8 s for eigh at m = 500).
    with _pairwise._blas_single_thread():
        w, V = np.linalg.eigh(0.5 * (Hmm + Hmm.T))
        keep = w > max(float(w.max()), 0.0) * 1e-10 if w.size else w > 0
        W = V[:, keep] / np.sqrt(w[keep])[None, :]
        mu = sums / n
        phi_bar = mu @ W
        A = (W.T @ gram @ W - n * np.outer(phi_bar, phi_bar)) / n
        lam = _positive(np.linalg.eigvalsh(0.5 * (A + A.T)))
    U = _pairwise.u_statistic(term, chunk_size=chunk_size, n_jobs=n_jobs)
    # The m landmarks capture the top of the spectrum only. The rest of the chaos has mean 0 and
    # variance 2 sum_rest lambda_i^2 = 2 (||H / n||_F^2 - sum_kept lambda_i^2), with
    # ||H / n||_F^2 ~ E h(z, z')^2 estimated on random pairs (O(n) pair terms); it enters the null
    # as a centred normal (without it, 25-50 landmarks made the test liberal: 0.09 at 0.05).
    K = int(min(n * (n - 1) // 2, max(_REST_PAIRS_MIN, _REST_PAIRS_PER_SAMPLE * n)))
    i = rng.integers(n, size=K)
    j = (i + 1 + rng.integers(n - 1, size=K)) % n
    sq = [float(np.sum(term.pairs(i[s:s + 65536], j[s:s + 65536]) ** 2))
          for s in range(0, K, 65536)]
    mean_sq = math.fsum(sq) / K
    rest_sd = math.sqrt(2.0 * max(mean_sq - float(np.dot(lam, lam)), 0.0))
    return _spectral_result(n * U, U, _lazy_se(term, chunk_size, n_jobs), lam, n,
                            n_resamples, rng, add_one, m, rest_sd)


#: Random pairs estimating ``E h^2`` for the Nyström null's missing spectrum.
_REST_PAIRS_MIN = 50_000
_REST_PAIRS_PER_SAMPLE = 10


def _spectral_result(stat, U, se, lam, n, n_resamples, rng, add_one, m, rest_sd=0.0):
    null = _simulate_chaos(lam, n_resamples, rng)
    if rest_sd > 0:
        null += rest_sd * rng.standard_normal(n_resamples)
    result = CalibrationTestResult(statistic=stat, pvalue=resampling_pvalue(null, stat, add_one),
                                   estimate=U, method="spectral", n_samples=n,
                                   n_resamples=n_resamples, null_distribution=null,
                                   standard_error=se)
    result.eigenvalues = lam
    result.n_landmarks = m
    return result


def _gamma_test(term, chunk_size, n_jobs):
    n = term.n_samples
    U, se, V, mean_diag, mean_sq = _u_moments(term, chunk_size, n_jobs)
    stat = n * V
    mean = mean_diag
    var = 2.0 * (n - 1.0) / n * mean_sq
    if mean > 0 and var > 0:
        p = float(_sps.gamma.sf(stat, mean * mean / var, scale=var / mean))
    elif stat <= mean:
        # h = 0 off the diagonal (e.g. a perfect classifier): the null is a point mass at the
        # mean and the statistic does not exceed it.
        p = 1.0
    else:
        warnings.warn("the pair terms have no variance: the Gamma approximation is undefined "
                      "(pvalue=nan).", RuntimeWarning, stacklevel=3)
        p = float("nan")
    return CalibrationTestResult(statistic=stat, pvalue=p, estimate=U, method="gamma",
                                 n_samples=n, standard_error=se)


#: ``|h| <= 2 sup k_pred * sup k_target``, and every kernel of :mod:`skcalib.kernels` is at most 1.
UNIFORM_BOUND = 2.0


def _distribution_free(term, estimator, B, chunk_size, n_jobs):
    n = term.n_samples
    bound = UNIFORM_BOUND
    if estimator == "biased":
        t = _pairwise.v_statistic(term, chunk_size=chunk_size, n_jobs=n_jobs)
        s = max(0.0, math.sqrt(max(n * t / bound, 0.0)) - 1.0)
        p = math.exp(-0.5 * s * s)
        interval = None
    else:
        if estimator == "unbiased":
            t = _pairwise.u_statistic(term, chunk_size=chunk_size, n_jobs=n_jobs)
            m = n // 2
        else:
            t = float(np.mean(_pairwise.block_statistics(term, B, chunk_size=chunk_size,
                                                         n_jobs=n_jobs)))
            m = (n // B) * (B // 2)
        p = 1.0 if t <= 0 else math.exp(-m * (t / bound) ** 2 / 2.0)
        interval = _hoeffding_interval(t, m, bound)
    result = CalibrationTestResult(statistic=t, pvalue=min(1.0, p), estimate=t,
                                   method="distribution_free", n_samples=n, interval=interval)
    result.estimator = estimator
    result.bound = bound
    return result


def _hoeffding_interval(t, m, bound):
    """Finite-sample interval from Hoeffding's inequality for a U-statistic with range
    ``[-bound, bound]``: ``P(|t - SKCE| >= eps) <= 2 exp(-m eps^2 / (2 bound^2))``."""

    def interval(confidence_level, alternative):
        a = 1.0 - confidence_level
        if alternative == "two-sided":
            eps = bound * math.sqrt(2.0 * math.log(2.0 / a) / m)
            low, high = t - eps, t + eps
        else:
            eps = bound * math.sqrt(2.0 * math.log(1.0 / a) / m)
            low, high = (t - eps, math.inf) if alternative == "greater" else (-math.inf, t + eps)
        return ConfidenceInterval(max(low, 0.0), max(high, 0.0))

    return interval


# --------------------------------------------------------------------------------------------
# Public API


def _check_common(method, estimator, n_resamples, n_landmarks, add_one, random_state,
                  n_mc_samples, chunk_size, n_jobs):
    check_option(method, "method", _METHODS)
    check_option(estimator, "estimator", _ESTIMATORS)
    check_n_resamples(n_resamples)
    check_scalar_param(n_landmarks, "n_landmarks", min_val=1, allow_none=True)
    check_bool(add_one, "add_one")
    check_random_state_param(random_state)
    check_n_resamples(n_mc_samples, "n_mc_samples", max_val=MAX_MC_SAMPLES)
    check_scalar_param(chunk_size, "chunk_size", min_val=1, allow_none=True)
    check_n_jobs(n_jobs)


def _check_block_size_param(block_size):
    if isinstance(block_size, str):
        check_option(block_size, "block_size", ("sqrt",))
    else:
        check_scalar_param(block_size, "block_size", min_val=2)


def skce_test(y_true, y_pred, *, kernel=None, method="auto", block_size=2, estimator="unbiased",
              n_resamples=1000, n_landmarks=None, add_one=True, labels=None, pos_label=None,
              random_state=None, n_mc_samples=100, chunk_size=None, n_jobs=None):
    """Test the null hypothesis that a model is calibrated, with the SKCE as test statistic.

    The squared kernel calibration error is zero for a calibrated model; its estimates are not
    (the unbiased one is about as often negative as positive), so the question "is 0.002 large?"
    needs its null distribution. This function returns the p-value of the observed SKCE under
    "the model is calibrated" (Widmann, Lindsten and Zachariah 2019, 2021), for class probabilities
    and for every family of predictive distributions of :mod:`skcalib.distributions`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or (n_samples, d)
        Labels, or real targets for distribution predictions (see :func:`skcalib.skce`).
    y_pred : array-like of shape (n_samples,) or (n_samples, n_classes), or a distribution
        Predicted probabilities or predictive distributions (see :func:`skcalib.skce`).
    kernel : Kernel or TensorProductKernel, default=None
        As in :func:`skcalib.skce` (median heuristics computed once, on all samples).
    method : {"auto", "block", "bootstrap", "spectral", "gamma", "distribution_free"}, \
default="auto"
        * ``"block"``: asymptotic normal test of the block estimator with blocks of
          ``block_size`` consecutive samples (needs at least two blocks). ``statistic`` is
          ``z = estimate / standard_error`` with the blocks' empirical standard error, and
          ``pvalue = 1 - Phi(z)``. ``O(n B)`` pair terms: linear time for a fixed block size,
          ``O(n^1.5)`` for ``"sqrt"``; memory ``O(n)``. The only method for class
          probabilities held as Dask arrays (blocks inside every chunk, see :ref:`scaling`).
        * ``"bootstrap"``: the U-statistic test with the Arcones--Giné degenerate bootstrap:
          ``statistic`` is ``T = n/(n-1) U - V`` (unbiased ``U``, biased ``V``) and each of the
          ``n_resamples`` null draws is
          ``T* = (n/(n-1) (C^T H C - sum_i C_i h_ii) - 2 C^T H 1) / n^2`` for multinomial counts
          ``C`` (equivalently ``n U`` is compared with ``(n - 1)(V + T*)``). ``O(n^2)`` pair
          terms plus ``n_resamples * n^2`` flops in matrix products; memory
          ``O(n (n_resamples + chunk))``.
        * ``"spectral"`` (an extension; Gretton et al. 2009): ``statistic`` is ``n U`` and the
          null is ``sum_i lambda_i (Z_i - 1)``, ``Z_i ~ chi2_1``, simulated ``n_resamples`` times
          with the eigenvalues of the double-centred matrix ``H / n``; exact (``n_landmarks=None``,
          holds ``n x n``) or from a Nyström approximation on ``n_landmarks`` random samples
          (``O(n m)`` pair terms and ``O(n m^2)`` flops, no ``n x n`` matrix: the test then costs
          about one evaluation of ``U``). The spectrum beyond the landmarks enters the Nyström
          null as a centred normal with the missing variance
          ``2 (E h^2 - sum_kept lambda_i^2)`` (``E h^2`` from random pairs), which keeps the size
          nominal down to a few dozen landmarks.
        * ``"gamma"`` (an extension; Gretton et al. 2012): ``statistic`` is ``n V``, compared with
          the Gamma distribution of mean ``mean_i h_ii`` and variance
          ``2 (n - 1)/n mean_{i != j} h_ij^2`` (slightly liberal at small ``n``).
        * ``"distribution_free"``: a p-value *bound* from Hoeffding's (unbiased, block) or
          McDiarmid's (biased) inequality, valid for every ``n`` but very conservative:
          ``exp(-m (t / 2)^2 / 2)`` for an unbiased estimate ``t > 0`` (1 if ``t <= 0``) with
          ``m = floor(n/2)`` (U-statistic) or ``floor(n/B) floor(B/2)`` (blocks of size ``B``),
          and ``exp(-max(0, sqrt(n t / 2) - 1)^2 / 2)`` for the biased estimate; ``2`` bounds
          ``|h|`` for skcalib's kernels (all at most 1). ``estimator`` chooses the estimate.
        * ``"auto"``: ``"bootstrap"`` up to 5,000 samples, else ``"spectral"`` with
          ``n_landmarks`` (default 500) landmarks.
    block_size : int or "sqrt", default=2
        Block size ``B >= 2`` of the ``"block"`` method and of the block estimator of
        ``"distribution_free"``; ``"sqrt"`` is ``floor(sqrt(n_samples))``. Blocks are taken in data
        order (shuffle ordered data first); the last ``n mod B`` samples are dropped.
    estimator : {"unbiased", "biased", "block"}, default="unbiased"
        The estimate of the ``"distribution_free"`` method (the other methods fix it).
    n_resamples : int, default=1000
        Draws of the simulated null (``"bootstrap"``, ``"spectral"``), at most ``10**7`` (a
        ``ValueError`` beyond, before any work: the null distribution alone would take more than
        80 MB, and its p-value resolution of ``1e-7`` is more than any level needs).
    n_landmarks : int, default=None
        Landmarks of the Nyström spectral test; None is the exact spectral test (or 500 for
        ``method="auto"``). Values ``>= n_samples`` give the exact test. The test holds three
        ``m x m`` matrices: an ``m`` for which they exceed 4 GiB (``m > 13,377``) is refused.
    add_one : bool, default=True
        Monte-Carlo p-values ``(1 + #{T* >= T}) / (1 + B)``, never exactly 0 (Phipson and Smyth
        2010); ``False`` gives the papers' ``#{T* >= T} / B``.
    labels : array-like, default=None
        All class labels (class probabilities only; see :func:`skcalib.skce`).
    pos_label : label, default=None
        Positive class of a one-column binary ``y_pred``.
    random_state : None, int or Generator, default=None
        Seeds the median heuristic's subsampling, the resampling and the simulated null draws,
        the landmarks and the Monte-Carlo fallback: equal seeds give equal p-values.
    n_mc_samples : int, default=100
        Draws per prediction of the Monte-Carlo fallback (see :func:`skcalib.skce`).
    chunk_size : int, default=None
        Tile side of the pairwise engine.
    n_jobs : int, default=None
        Parallel jobs (joblib threads). Results do not depend on it.

    Returns
    -------
    CalibrationTestResult
        ``statistic``, ``pvalue``, ``estimate`` (the unbiased SKCE; the block estimate for
        ``"block"``; the chosen estimator's for ``"distribution_free"``), ``method``,
        ``n_resamples`` and ``null_distribution`` (simulated methods), ``standard_error``,
        ``zscore`` (``estimate / standard_error``: it keeps ranking models when the p-values of
        clearly miscalibrated ones all reach ``1 / (n_resamples + 1)``; None for
        ``"distribution_free"``) and ``confidence_interval(confidence_level)``. The spectral result also has
        ``eigenvalues`` and ``n_landmarks``.

    See Also
    --------
    skce_ci : Confidence intervals for the SKCE.
    skcalib.skce : The SKCE estimates.

    Notes
    -----
    How to read the p-value: it is the probability that a *calibrated* model gives an SKCE
    estimate at least as large as the observed one. A small p-value (say below 0.05) is evidence
    of miscalibration; a large one means the data do not show miscalibration (not that the model
    is calibrated).

    The unbiased SKCE of a calibrated model is negative about half of the time; the tests take
    this into account (a negative estimate simply gives a large p-value).

    There is no ``sample_weight``: every null distribution here assumes independent, identically
    distributed samples (repeat rows to express frequency weights). Blocks (``"block"``) are
    consecutive samples in data order, so shuffle data sorted by anything related to the
    predictions first.

    References
    ----------
    D. Widmann, F. Lindsten, D. Zachariah. Calibration tests in multi-class classification: a
    unifying framework. NeurIPS 2019. -- Calibration tests beyond classification. ICLR 2021.
    M. A. Arcones, E. Giné. On the bootstrap of U and V statistics. Ann. Statist. 1992.
    A. Gretton, K. Fukumizu, Z. Harchaoui, B. Sriperumbudur. A fast, consistent kernel
    two-sample test. NeurIPS 2009.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.stats import skce_test
    >>> rng = np.random.default_rng(0)
    >>> p = rng.dirichlet([1, 1, 1], size=300)
    >>> y = np.array([rng.choice(3, p=row) for row in p])  # calibrated: y drawn from p
    >>> res = skce_test(y, p, method="bootstrap", random_state=0)
    >>> res.pvalue > 0.05
    True
    >>> y_bad = np.zeros(300, dtype=int)  # always class 0: miscalibrated
    >>> skce_test(y_bad, p, method="block", block_size="sqrt", labels=[0, 1, 2]).pvalue < 1e-6
    True
    """
    _check_common(method, estimator, n_resamples, n_landmarks, add_one, random_state,
                  n_mc_samples, chunk_size, n_jobs)
    _check_block_size_param(block_size)
    if _dask.any_dask(y_true, y_pred):
        return _chunked_block_test(y_true, y_pred, kernel, method, block_size, labels,
                                   pos_label, random_state, chunk_size)
    problem = _kernel_problem(y_true, y_pred, kernel, labels, pos_label, random_state,
                              n_mc_samples)
    n = problem.n_samples
    if n < 2:
        raise ValueError(f"the SKCE tests need at least 2 samples; got {n}.")
    chunk = chunk_size or problem.preferred_chunk_size
    rng = problem.rng
    if method == "auto":
        if n <= AUTO_BOOTSTRAP_MAX:
            method = "bootstrap"
        else:
            method = "spectral"
            n_landmarks = AUTO_LANDMARKS if n_landmarks is None else n_landmarks
    if method == "block":
        B = _check_block_size(block_size, n)
        return _block_test(problem.term(), B, chunk, n_jobs)
    if method == "distribution_free":
        B = _check_block_size(block_size, n, min_blocks=1) if estimator == "block" else None
        return _distribution_free(problem.term(), estimator, B, chunk, n_jobs)
    if method == "gamma":
        return _gamma_test(problem.term(), chunk, n_jobs)
    if method == "bootstrap":
        return _bootstrap_test(problem.term(), n_resamples, rng, add_one, chunk, n_jobs)
    if n_landmarks is None or n_landmarks >= n:
        return _spectral_exact(problem.term(), n_resamples, rng, add_one, chunk)
    return _spectral_nystrom(problem, int(n_landmarks), n_resamples, rng, add_one, chunk,
                             n_jobs)


class SKCEInterval(IntervalEnds):
    """A confidence interval for the SKCE (returned by :func:`skce_ci`).

    Its parameters are also its attributes; it unpacks as ``low, high``.

    Parameters
    ----------
    confidence_interval : ConfidenceInterval
        ``(low, high)``, within ``[0, inf)``.
    estimate : float
        The SKCE estimate (unbiased U-statistic or block estimate).
    standard_error : float
        Its standard error (Hoeffding decomposition or the blocks' empirical one; for
        ``method="bootstrap"`` the bootstrap standard deviation).
    method : str
        ``"normal"`` or ``"bootstrap"``.
    estimator : str
        ``"unbiased"`` or ``"block"``.
    confidence_level : float
        The level of the interval, in (0, 1).
    alternative : str
        ``"two-sided"``, ``"greater"`` (lower bound) or ``"less"`` (upper bound).
    bootstrap_distribution : ndarray, default=None
        The bootstrap replicates of the estimate (``method="bootstrap"``).
    """

    def __init__(self, confidence_interval, estimate, standard_error, method, estimator,
                 confidence_level, alternative, bootstrap_distribution=None):
        self.confidence_interval = confidence_interval
        self.estimate = float(estimate)
        self.standard_error = float(standard_error)
        self.method = method
        self.estimator = estimator
        self.confidence_level = confidence_level
        self.alternative = alternative
        self.bootstrap_distribution = bootstrap_distribution

    @property
    def zscore(self):
        """``estimate / standard_error`` (see :attr:`CalibrationTestResult.zscore`)."""
        return standardise(self.estimate, self.standard_error)

    def __repr__(self):
        return (f"SKCEInterval(low={self.low!r}, high={self.high!r}, estimate={self.estimate!r}, "
                f"standard_error={self.standard_error!r}, method={self.method!r}, "
                f"estimator={self.estimator!r}, confidence_level={self.confidence_level!r})")


def _percentile_interval(values, confidence_level, alternative):
    a = 1.0 - confidence_level
    if alternative == "two-sided":
        low, high = np.quantile(values, [a / 2.0, 1.0 - a / 2.0])
    elif alternative == "greater":
        low, high = float(np.quantile(values, a)), math.inf
    else:
        low, high = -math.inf, float(np.quantile(values, 1.0 - a))
    return ConfidenceInterval(max(float(low), 0.0), max(float(high), 0.0))


def _block_bootstrap(values, n_resamples, rng):
    """Means of ``n_resamples`` resamples of the block values, drawn in batches whose indices
    take about ``_COUNTS_BUDGET`` numbers (one ``n_resamples x n_blocks`` index matrix would
    not fit in memory for many blocks and resamples)."""
    nb = values.size
    batch = max(1, _COUNTS_BUDGET // nb)
    out = np.empty(n_resamples)
    for s in range(0, n_resamples, batch):
        e = min(s + batch, n_resamples)
        out[s:e] = values[rng.integers(nb, size=(e - s, nb))].mean(axis=1)
    return out


def skce_ci(y_true, y_pred, *, kernel=None, estimator="unbiased", block_size=2, method="normal",
            confidence_level=0.95, alternative="two-sided", n_resamples=1000, labels=None,
            pos_label=None, random_state=None, n_mc_samples=100, chunk_size=None, n_jobs=None):
    """Confidence interval for the SKCE of a model.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or (n_samples, d)
        Labels, or real targets for distribution predictions (see :func:`skcalib.skce`).
    y_pred : array-like of shape (n_samples,) or (n_samples, n_classes), or a distribution
        Predicted probabilities or predictive distributions.
    kernel : Kernel or TensorProductKernel, default=None
        As in :func:`skcalib.skce`.
    estimator : {"unbiased", "block"}, default="unbiased"
        The U-statistic (minimum variance) or the block estimator.
    block_size : int or "sqrt", default=2
        Block size of the block estimator.
    method : {"normal", "bootstrap"}, default="normal"
        * ``"normal"``: the asymptotic normal interval ``estimate -/+ z * standard_error``. For the
          U-statistic the variance comes from the Hoeffding decomposition,
          ``(4 (n - 2) zeta_1 + 2 zeta_2) / (n (n - 1))`` with plug-in ``zeta_1`` and ``zeta_2``;
          it is valid for a miscalibrated model (``zeta_1 > 0``) and conservative near
          calibration, where the U-statistic's limit is not normal. For blocks the variance is
          the blocks' empirical one (valid under the null too).
        * ``"bootstrap"``: percentile interval of ``n_resamples`` bootstrap replicates (resampled
          samples for the U-statistic, resampled blocks for the block estimator).
    confidence_level : float, default=0.95
        In (0, 1).
    alternative : {"two-sided", "greater", "less"}, default="two-sided"
        ``"greater"`` gives a one-sided interval ``(low, inf)``, ``"less"`` ``(0, high)``.
    n_resamples : int, default=1000
        Bootstrap replicates (``method="bootstrap"``), at most ``10**7`` (a ``ValueError``
        beyond, before any work).
    labels : array-like, default=None
        All class labels (class probabilities only).
    pos_label : label, default=None
        Positive class of a one-column binary ``y_pred``.
    random_state : None, int or Generator, default=None
        Median-heuristic subsampling and bootstrap draws.
    n_mc_samples : int, default=100
        Draws per prediction of the Monte-Carlo fallback.
    chunk_size : int, default=None
        Tile side of the pairwise engine.
    n_jobs : int, default=None
        Parallel jobs (joblib threads). Results do not depend on it.

    Returns
    -------
    SKCEInterval
        ``confidence_interval`` (named tuple ``low``, ``high``; intersected with ``[0, inf)``,
        the SKCE being non-negative), ``estimate``, ``standard_error`` and, for the bootstrap, the
        replicates. Unpacks as ``low, high``.

    See Also
    --------
    skce_test : Tests of "the model is calibrated".

    Examples
    --------
    >>> from skcalib.datasets import make_gaussian_predictions, gaussian_predictions_skce
    >>> from skcalib.kernels import GaussianKernel, WassersteinKernel, tensor
    >>> from skcalib.stats import skce_ci
    >>> pred, y = make_gaussian_predictions(500, calibrated=False, random_state=1)
    >>> k = tensor(WassersteinKernel(1.0), GaussianKernel(1.0))
    >>> low, high = skce_ci(y, pred, kernel=k)  # 95% interval; the exact SKCE is 0.1108
    >>> round(low, 3), round(high, 3)
    (0.094, 0.122)
    >>> round(gaussian_predictions_skce(1), 4)
    0.1108
    """
    check_option(estimator, "estimator", ("unbiased", "block"))
    check_option(method, "method", ("normal", "bootstrap"))
    level = check_confidence_level(confidence_level, alternative)
    _check_common("bootstrap", "unbiased", n_resamples, None, True, random_state, n_mc_samples,
                  chunk_size, n_jobs)
    _check_block_size_param(block_size)
    problem = _kernel_problem(y_true, y_pred, kernel, labels, pos_label, random_state,
                              n_mc_samples)
    n = problem.n_samples
    if n < 3:
        raise ValueError(f"an SKCE interval needs at least 3 samples; got {n}.")
    chunk = chunk_size or problem.preferred_chunk_size
    term = problem.term()
    replicates = None
    if estimator == "block":
        B = _check_block_size(block_size, n)
        values = _pairwise.block_statistics(term, B, chunk_size=chunk, n_jobs=n_jobs)
        est = float(np.mean(values))
        se = float(np.std(values, ddof=1) / math.sqrt(values.size))
        if method == "bootstrap":
            replicates = _block_bootstrap(values, n_resamples, problem.rng)
    elif method == "normal":
        est, se = _u_moments(term, chunk, n_jobs)[:2]
    else:
        diag = _pairwise.diagonal(term, chunk_size=chunk)
        reps, rows = [], None
        for C, q, r in _bootstrap_passes(term, n_resamples, problem.rng, chunk, n_jobs):
            rows = r if rows is None else rows
            reps.append((q - C @ diag) / (n * (n - 1.0)))
        replicates = np.concatenate(reps)
        est = (math.fsum(rows) - math.fsum(diag)) / (n * (n - 1.0))
        se = float("nan")
    if replicates is not None:
        se = float(np.std(replicates, ddof=1))
        ci = _percentile_interval(replicates, level, alternative)
    else:
        ci = normal_interval(est, se, level, alternative)
    return SKCEInterval(ci, est, se, method, estimator, level, alternative, replicates)
