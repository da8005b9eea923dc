"""Invariances and defining properties of the calibration errors, checked with hypothesis.

Data are drawn from seeded numpy generators (hypothesis draws sizes, seeds and options), so every
example is reproducible from the falsifying example hypothesis prints.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from skcalib import CalibrationError, calibration_error, mmce, skce, ucme
from skcalib.kernels import ExponentialKernel, GaussianKernel, median_heuristic
from skcalib._problems.binning import UniformBinning

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FEW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

REL, ABS = 1e-9, 1e-12  # same computation, different summation order


def close(a, b, rel=REL, abs_=ABS):
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


# --------------------------------------------------------------------------------------------
# Data


@st.composite
def classification(draw, n_min=2, n_max=40, c_min=2, c_max=4, ties=True):
    """(P, y): probabilities (n, c) and labels 0..c-1 (not every class need occur).

    Kinds: ``flat`` (uniform Dirichlet), ``peaked`` (Dirichlet(0.3): near the vertices) and, with
    ``ties``, ``grid`` (multiples of 0.1: ties in the argmax and values exactly on bin edges).
    Labels are either drawn from P (calibrated) or uniformly (miscalibrated).
    """
    n = draw(st.integers(n_min, n_max))
    c = draw(st.integers(c_min, c_max))
    seed = draw(st.integers(0, 2**32 - 1))
    kind = draw(st.sampled_from(["flat", "peaked", "grid"] if ties else ["flat", "peaked"]))
    calibrated = draw(st.booleans())
    rng = np.random.default_rng(seed)
    if kind == "flat":
        P = rng.dirichlet(np.ones(c), size=n)
    elif kind == "peaked":
        P = rng.dirichlet(np.full(c, 0.3), size=n)
    else:
        P = rng.multinomial(10, np.full(c, 1.0 / c), size=n) / 10.0
    if calibrated:
        u = rng.uniform(size=n)[:, None]
        y = np.minimum((u > np.cumsum(P, axis=1)).sum(axis=1), c - 1)
    else:
        y = rng.integers(0, c, size=n)
    return P, y


@st.composite
def binary(draw, n_min=2, n_max=40, ties=True):
    """(p, y): P(1) of shape (n,) and labels in {0, 1}."""
    P, y = draw(classification(n_min=n_min, n_max=n_max, c_min=2, c_max=2, ties=ties))
    return P[:, 1].copy(), y


seeds = st.integers(0, 2**32 - 1)

# Kernels with a fixed length scale or the median heuristic.
KERNELS = [
    None,
    GaussianKernel(0.3),
    ExponentialKernel(0.5),
    ExponentialKernel(0.4, metric="tv"),
    ExponentialKernel("median", metric="tv"),
]
kernels = st.sampled_from(KERNELS)


def modes_for(c):
    return ["auto", "top_label", "classwise", "canonical"] + (["binary"] if c == 2 else [])


# --------------------------------------------------------------------------------------------
# Row permutations


@FAST
@given(data=classification(), seed=seeds, norm=st.sampled_from(["l1", "l2", "max"]),
       strategy=st.sampled_from(["uniform", "quantile"]), n_bins=st.integers(1, 12),
       weighted=st.booleans(), choice=st.data())
def test_calibration_error_row_permutation_invariant(data, seed, norm, strategy, n_bins,
                                                     weighted, choice):
    P, y = data
    n, c = P.shape
    mode = choice.draw(st.sampled_from(modes_for(c)), label="mode")
    debias = norm == "l2" and choice.draw(st.booleans(), label="debias")
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.1, 3.0, size=n) if weighted else None
    perm = rng.permutation(n)
    kw = dict(norm=norm, strategy=strategy, n_bins=n_bins, mode=mode, debias=debias,
              squared=(norm == "l2"), labels=np.arange(c))
    a = calibration_error(y, P, sample_weight=w, **kw)
    b = calibration_error(y[perm], P[perm], sample_weight=None if w is None else w[perm], **kw)
    assert close(a, b)


@FAST
@given(data=classification(), seed=seeds, kernel=kernels,
       estimator=st.sampled_from(["unbiased", "biased"]))
def test_skce_row_permutation_invariant(data, seed, kernel, estimator):
    P, y = data
    n, c = P.shape
    perm = np.random.default_rng(seed).permutation(n)
    kw = dict(kernel=kernel, estimator=estimator, labels=np.arange(c))
    assert close(skce(y, P, **kw), skce(y[perm], P[perm], **kw))


@FAST
@given(data=classification(), seed=seeds,
       kernel=st.sampled_from([None, GaussianKernel(0.2), ExponentialKernel("median")]),
       estimator=st.sampled_from(["unbiased", "biased"]))
def test_mmce_row_permutation_invariant(data, seed, kernel, estimator):
    P, y = data
    n, c = P.shape
    perm = np.random.default_rng(seed).permutation(n)
    kw = dict(kernel=kernel, estimator=estimator, squared=True, labels=np.arange(c))
    assert close(mmce(y, P, **kw), mmce(y[perm], P[perm], **kw))


@FAST
@given(data=classification(), seed=seeds, kernel=kernels, n_locations=st.integers(1, 6))
def test_ucme_row_permutation_invariant(data, seed, kernel, n_locations):
    P, y = data
    n, c = P.shape
    perm = np.random.default_rng(seed).permutation(n)
    # Drawn test locations depend on random_state and the number of classes only.
    kw = dict(kernel=kernel, n_test_locations=n_locations, random_state=seed % 1000,
              labels=np.arange(c))
    assert close(ucme(y, P, **kw), ucme(y[perm], P[perm], **kw))


# --------------------------------------------------------------------------------------------
# The block estimator


def _blocks(n, B):
    return [slice(b * B, (b + 1) * B) for b in range(n // B)]


@FAST
@given(data=classification(n_min=2, n_max=40), choice=st.data(),
       kernel=st.sampled_from([GaussianKernel(0.3), ExponentialKernel(0.5, metric="tv"), None]))
def test_skce_block_is_mean_of_blockwise_unbiased(data, choice, kernel):
    P, y = data
    n, c = P.shape
    B = choice.draw(st.integers(2, n), label="block_size")
    labels = np.arange(c)
    block = skce(y, P, kernel=kernel, estimator="block", block_size=B, labels=labels)
    # The median heuristic of the block estimator is computed on all the data, not per block.
    k = GaussianKernel(median_heuristic(P)) if kernel is None else kernel
    per_block = [skce(y[s], P[s], kernel=k, estimator="unbiased", labels=labels)
                 for s in _blocks(n, B)]
    assert close(block, float(np.mean(per_block)))


@FAST
@given(data=classification(n_min=2, n_max=40), kernel=kernels)
def test_skce_block_of_size_n_is_unbiased(data, kernel):
    P, y = data
    n, c = P.shape
    labels = np.arange(c)
    assert close(skce(y, P, kernel=kernel, estimator="block", block_size=n, labels=labels),
                 skce(y, P, kernel=kernel, estimator="unbiased", labels=labels))


@FEW
@given(data=classification(n_min=2, n_max=40), choice=st.data(),
       kernel=st.sampled_from([None, GaussianKernel(0.25)]))
def test_mmce_block_is_mean_of_blockwise_unbiased(data, choice, kernel):
    P, y = data
    n, c = P.shape
    B = choice.draw(st.integers(2, n), label="block_size")
    kw = dict(kernel=kernel, squared=True, labels=np.arange(c))
    block = mmce(y, P, estimator="block", block_size=B, **kw)
    per_block = [mmce(y[s], P[s], estimator="unbiased", **kw) for s in _blocks(n, B)]
    assert close(block, float(np.mean(per_block)))
    assert close(mmce(y, P, estimator="block", block_size=n, **kw),
                 mmce(y, P, estimator="unbiased", **kw))


# --------------------------------------------------------------------------------------------
# Label renaming

POOL = ["ant", "bee", "cat", "dog", "elk", "fox", "gnu", "hen"]


@st.composite
def renaming(draw, c):
    """New names for the classes 0..c-1 (strings or integers, in any sorted order)."""
    if draw(st.booleans()):
        names = draw(st.permutations(POOL))[:c]
        return np.array(names)
    return np.array(draw(st.lists(st.integers(-50, 50), min_size=c, max_size=c, unique=True)))


def rename(P, y, names):
    """Labels ``names[y]``; columns reordered so that column j belongs to sorted(names)[j]."""
    order = np.argsort(names, kind="stable")  # sorted position -> old class index
    return P[:, order], names[y], np.sort(names)


@FAST
@given(data=classification(ties=False), choice=st.data(),
       norm=st.sampled_from(["l1", "l2", "max"]), strategy=st.sampled_from(["uniform", "quantile"]),
       n_bins=st.integers(1, 10))
def test_calibration_error_label_renaming_invariant(data, choice, norm, strategy, n_bins):
    P, y = data
    c = P.shape[1]
    names = choice.draw(renaming(c), label="names")
    mode = choice.draw(st.sampled_from(["top_label", "classwise", "canonical"]
                                       + (["binary"] if c == 2 else [])), label="mode")
    P2, y2, labels2 = rename(P, y, names)
    kw = dict(norm=norm, strategy=strategy, n_bins=n_bins, mode=mode)
    pos = {"pos_label": 1} if mode == "binary" else {}
    pos2 = {"pos_label": names[1]} if mode == "binary" else {}
    a = calibration_error(y, P, labels=np.arange(c), **pos, **kw)
    b = calibration_error(y2, P2, labels=labels2, **pos2, **kw)
    assert close(a, b)


@FAST
@given(data=classification(ties=False), choice=st.data(), kernel=kernels,
       estimator=st.sampled_from(["unbiased", "biased", "block"]))
def test_kernel_errors_label_renaming_invariant(data, choice, kernel, estimator):
    P, y = data
    n, c = P.shape
    names = choice.draw(renaming(c), label="names")
    P2, y2, labels2 = rename(P, y, names)
    labels = np.arange(c)
    assert close(skce(y, P, kernel=kernel, estimator=estimator, labels=labels),
                 skce(y2, P2, kernel=kernel, estimator=estimator, labels=labels2))
    assert close(mmce(y, P, estimator=estimator, squared=True, labels=labels),
                 mmce(y2, P2, estimator=estimator, squared=True, labels=labels2))
    # UCME at explicit test locations, renamed the same way.
    rng = np.random.default_rng(n)
    TP = rng.dirichlet(np.ones(c), size=5)
    Ty = rng.integers(0, c, size=5)
    TP2, Ty2, _ = rename(TP, Ty, names)
    assert close(ucme(y, P, kernel=kernel, test_predictions=TP, test_targets=Ty, labels=labels),
                 ucme(y2, P2, kernel=kernel, test_predictions=TP2, test_targets=Ty2,
                      labels=labels2))


# --------------------------------------------------------------------------------------------
# Binary encodings and pos_label


@FAST
@given(data=binary(), kernel=kernels, estimator=st.sampled_from(["unbiased", "biased", "block"]),
       choice=st.data())
def test_binary_encodings_agree_kernel(data, kernel, estimator, choice):
    p, y = data
    n = p.size
    B = choice.draw(st.integers(2, n), label="block_size")
    P2 = np.column_stack([1.0 - p, p])
    kw = dict(kernel=kernel, estimator=estimator, block_size=B, labels=[0, 1])
    ref = skce(y, P2, **kw)
    assert close(skce(y, p, **kw), ref, rel=1e-12, abs_=1e-15)
    assert close(skce(y, p[:, None], **kw), ref, rel=1e-12, abs_=1e-15)
    ref = mmce(y, P2, estimator=estimator, block_size=B, squared=True, labels=[0, 1])
    assert close(mmce(y, p, estimator=estimator, block_size=B, squared=True, labels=[0, 1]), ref,
                 rel=1e-12, abs_=1e-15)
    ref = ucme(y, P2, kernel=kernel, random_state=3, labels=[0, 1])
    assert close(ucme(y, p, kernel=kernel, random_state=3, labels=[0, 1]), ref,
                 rel=1e-12, abs_=1e-15)
    assert close(ucme(y, p[:, None], kernel=kernel, random_state=3, labels=[0, 1]), ref,
                 rel=1e-12, abs_=1e-15)


@FAST
@given(data=binary(), norm=st.sampled_from(["l1", "l2", "max"]),
       strategy=st.sampled_from(["uniform", "quantile", "median_variance"]),
       mode=st.sampled_from(["binary", "auto", "top_label", "classwise", "canonical"]),
       n_bins=st.integers(1, 12))
def test_binary_encodings_agree_binned(data, norm, strategy, mode, n_bins):
    p, y = data
    P2 = np.column_stack([1.0 - p, p])
    kw = dict(norm=norm, strategy=strategy, mode=mode, n_bins=n_bins, labels=[0, 1])
    ref = calibration_error(y, P2, **kw)
    assert close(calibration_error(y, p, **kw), ref, rel=1e-12, abs_=1e-15)
    assert close(calibration_error(y, p[:, None], **kw), ref, rel=1e-12, abs_=1e-15)
    # Named labels: P(greater label) is P("yes").
    names = np.array(["no", "yes"])
    assert close(calibration_error(names[y], p, **dict(kw, labels=names)), ref,
                 rel=1e-12, abs_=1e-15)


@FAST
@given(data=binary(), norm=st.sampled_from(["l1", "l2", "max"]),
       strategy=st.sampled_from(["uniform", "quantile"]), n_bins=st.integers(1, 12),
       kernel=kernels)
def test_pos_label_consistency(data, norm, strategy, n_bins, kernel):
    p, y = data
    P2 = np.column_stack([1.0 - p, p])
    kw = dict(norm=norm, strategy=strategy, n_bins=n_bins, labels=[0, 1])
    # One column is P(pos_label): q = P(0) with pos_label=0 is the model (q, 1 - q). (Not the
    # model (1 - p, p): 1 - (1 - p) != p in floating point, which matters on bin edges.)
    q = 1.0 - p
    Q2 = np.column_stack([q, 1.0 - q])
    assert close(skce(y, q, pos_label=0, kernel=kernel),
                 skce(y, Q2, kernel=kernel, labels=[0, 1]), rel=1e-12, abs_=1e-15)
    assert close(ucme(y, q, pos_label=0, kernel=kernel, random_state=1),
                 ucme(y, Q2, kernel=kernel, random_state=1, labels=[0, 1]), rel=1e-12, abs_=1e-15)
    assert close(mmce(y, q, pos_label=0), mmce(y, Q2, labels=[0, 1]), rel=1e-12, abs_=1e-15)
    for mode in ("top_label", "classwise", "canonical"):
        assert close(calibration_error(y, q, pos_label=0, mode=mode, **kw),
                     calibration_error(y, Q2, mode=mode, **kw), rel=1e-12, abs_=1e-15)
    # mode="binary" bins P(pos_label): pos_label=0 is the problem with the labels swapped.
    a = calibration_error(y, P2, mode="binary", pos_label=0, **kw)
    assert close(a, calibration_error(y, 1.0 - p, mode="binary", pos_label=0, **kw),
                 rel=1e-12, abs_=1e-15)
    assert close(a, calibration_error(1 - y, 1.0 - p, mode="binary", **kw), rel=1e-12, abs_=1e-15)
    assert close(calibration_error(y, P2, mode="binary", pos_label=1, **kw),
                 calibration_error(y, p, mode="binary", **kw), rel=1e-12, abs_=1e-15)


@FAST
@given(data=binary(ties=False), norm=st.sampled_from(["l1", "l2", "max"]),
       n_bins=st.integers(1, 12))
def test_binary_error_symmetric_in_pos_label(data, norm, n_bins):
    """Away from bin edges, |mean y - mean p| of class 0 and class 1 are the same per bin."""
    p, y = data
    P2 = np.column_stack([1.0 - p, p])
    kw = dict(norm=norm, n_bins=n_bins, mode="binary", labels=[0, 1])
    assert close(calibration_error(y, P2, pos_label=0, **kw),
                 calibration_error(y, P2, pos_label=1, **kw), rel=1e-9, abs_=1e-12)


# --------------------------------------------------------------------------------------------
# Signs and ranges


@FAST
@given(data=classification(n_min=1), kernel=kernels)
def test_biased_estimates_nonnegative(data, kernel):
    P, y = data
    labels = np.arange(P.shape[1])
    assert skce(y, P, kernel=kernel, estimator="biased", labels=labels) >= -1e-13
    assert mmce(y, P, squared=True, labels=labels) >= -1e-13
    assert mmce(y, P, labels=labels) >= 0.0
    assert ucme(y, P, kernel=kernel, random_state=0, labels=labels) >= 0.0


@FAST
@given(data=classification(n_min=2), kernel=kernels)
def test_unbiased_and_biased_skce_differ_by_the_diagonal(data, kernel):
    """U = (n^2 V - sum_i h_ii) / (n (n - 1)) with h_ii = k(p_i, p_i) ||e_y_i - p_i||^2 = ||.||^2."""
    P, y = data
    n, c = P.shape
    labels = np.arange(c)
    V = skce(y, P, kernel=kernel, estimator="biased", labels=labels)
    U = skce(y, P, kernel=kernel, estimator="unbiased", labels=labels)
    R = np.eye(c)[y] - P
    diag = float(np.einsum("ij,ij->", R, R))
    assert close(U, (n * n * V - diag) / (n * (n - 1)), rel=1e-9, abs_=1e-12)


@FAST
@given(data=classification(n_min=1), choice=st.data(),
       norm=st.sampled_from(["l1", "max", "l2"]),
       strategy=st.sampled_from(["uniform", "quantile", "median_variance"]),
       n_bins=st.integers(1, 15), weighted=st.booleans(), seed=seeds)
def test_calibration_error_in_unit_interval(data, choice, norm, strategy, n_bins, weighted, seed):
    P, y = data
    n, c = P.shape
    mode = choice.draw(st.sampled_from(modes_for(c)), label="mode")
    w = np.random.default_rng(seed).uniform(0, 2, size=n) if weighted else None
    if w is not None:
        w[0] += 0.1  # positive sum
    v = calibration_error(y, P, norm=norm, strategy=strategy, n_bins=n_bins, mode=mode,
                          sample_weight=w, labels=np.arange(c))
    # l1 (total variation) and max distances of probability vectors are <= 1; the Euclidean
    # distance of two points of the simplex is <= sqrt(2) (one coordinate: <= 1).
    bound = math.sqrt(2.0) if (norm == "l2" and mode == "canonical") else 1.0
    assert 0.0 <= v <= bound + 1e-12
    if norm == "l1" and strategy == "uniform" and n_bins == 1 and mode in ("binary", "top_label"):
        # One bin: |mean outcome - mean prediction|.
        Q = P[:, 1] if mode == "binary" else P.max(axis=1)
        T = (y == 1) if mode == "binary" else _tie_correctness(P, y)
        expect = abs(np.average(T, weights=w) - np.average(Q, weights=w))
        assert close(v, expect)


@FAST
@given(data=classification(ties=True), choice=st.data(), norm=st.sampled_from(["l1", "l2", "max"]),
       n_bins=st.integers(1, 10), seed=seeds)
def test_integer_weights_equal_repeated_rows(data, choice, norm, n_bins, seed):
    P, y = data
    n, c = P.shape
    mode = choice.draw(st.sampled_from(modes_for(c)), label="mode")
    reps = np.random.default_rng(seed).integers(0, 4, size=n)
    reps[0] += 1
    kw = dict(norm=norm, n_bins=n_bins, mode=mode, labels=np.arange(c))
    a = calibration_error(y, P, sample_weight=reps, **kw)
    b = calibration_error(np.repeat(y, reps), np.repeat(P, reps, axis=0), **kw)
    assert close(a, b)
    assert close(calibration_error(y, P, sample_weight=np.full(n, 2.5), **kw),
                 calibration_error(y, P, **kw))


# --------------------------------------------------------------------------------------------
# MMCE: its defining formula and the top-label lens model


def _tie_correctness(P, y):
    """Top-label correctness with tied maxima read as a uniform draw among the tied classes:
    ``1{y in A} / |A|`` for the set ``A`` of columns at the row maximum (label-invariant)."""
    out = np.empty(P.shape[0])
    for i in range(P.shape[0]):
        A = [k for k in range(P.shape[1]) if P[i, k] == P[i].max()]
        out[i] = (y[i] in A) / len(A)
    return out


def _mmce_brute(y, P, k_of_distance):
    """(biased, unbiased) MMCE^2 from the definition: r = max prob, c = 1{y = argmax} (ties
    shared, see ``_tie_correctness``)."""
    r = P.max(axis=1)
    c = _tie_correctness(P, y)
    d = c - r
    K = k_of_distance(np.abs(r[:, None] - r[None, :]))
    n = r.size
    total = d @ K @ d
    biased = total / n**2
    unbiased = (total - np.sum(d * d * np.diag(K))) / (n * (n - 1)) if n > 1 else np.nan
    return biased, unbiased


@FAST
@given(data=classification(n_min=2), ls=st.floats(0.05, 2.0),
       family=st.sampled_from(["exponential", "gaussian"]))
def test_mmce_brute_force(data, ls, family):
    P, y = data
    labels = np.arange(P.shape[1])
    if family == "exponential":
        kernel, kfun = ExponentialKernel(ls), (lambda D: np.exp(-D / ls))
    else:
        kernel, kfun = GaussianKernel(ls), (lambda D: np.exp(-D**2 / (2 * ls**2)))
    b, u = _mmce_brute(y, P, kfun)
    assert close(mmce(y, P, kernel=kernel, squared=True, labels=labels), b)
    assert close(mmce(y, P, kernel=kernel, labels=labels), math.sqrt(max(b, 0.0)))
    assert close(mmce(y, P, kernel=kernel, estimator="unbiased", squared=True, labels=labels), u)
    # The default kernel is the Laplacian exp(-|r - r'| / 0.4) of Kumar et al.
    b04, _ = _mmce_brute(y, P, lambda D: np.exp(-D / 0.4))
    assert close(mmce(y, P, labels=labels), math.sqrt(max(b04, 0.0)))


@FAST
@given(data=classification(n_min=2), ls=st.floats(0.05, 2.0),
       estimator=st.sampled_from(["biased", "unbiased", "block"]), choice=st.data())
def test_mmce_is_skce_of_top_label_lens_model(data, ls, estimator, choice):
    """Widmann et al. (2019), Example I.1: MMCE^2 with kernel k on confidences r equals the SKCE of
    the lens model q = (1 - r, r) with correctness c as label and kernel k/2 on q.

    The residual e_c - q is (c - r) * (-1, 1), so with the delta kernel on labels the SKCE term is
    2 (c_i - r_i)(c_j - r_j) k_q(q_i, q_j): SKCE = 2 MMCE^2 if k_q(q_i, q_j) = k(r_i, r_j). Since
    tv(q_i, q_j) = |r_i - r_j| and ||q_i - q_j|| = sqrt(2) |r_i - r_j|:
    exp(-|dr| / l) is ExponentialKernel(l, metric="tv") or ExponentialKernel(sqrt(2) l) on q,
    exp(-dr^2 / (2 l^2)) is GaussianKernel(sqrt(2) l) on q; the median heuristic scales along.
    """
    P, y = data
    n = P.shape[0]
    r = P.max(axis=1)
    # The lens model needs a 0/1 correctness label: rows with tied maxima (shared correctness,
    # see _tie_correctness) have no lens-model counterpart.
    assume(np.all((P == r[:, None]).sum(axis=1) == 1))
    B = choice.draw(st.integers(2, n), label="block_size")
    c = (P.argmax(axis=1) == y).astype(int)
    q = np.column_stack([1.0 - r, r])
    pairs = [
        (ExponentialKernel(ls), ExponentialKernel(ls, metric="tv")),
        (ExponentialKernel(ls), ExponentialKernel(math.sqrt(2) * ls)),
        (GaussianKernel(ls), GaussianKernel(math.sqrt(2) * ls)),
        (GaussianKernel("median"), GaussianKernel("median")),
        (ExponentialKernel("median"), ExponentialKernel("median", metric="tv")),
    ]
    for k_conf, k_lens in pairs:
        m2 = mmce(y, P, kernel=k_conf, estimator=estimator, block_size=B, squared=True,
                  labels=np.arange(P.shape[1]))
        s = skce(c, q, kernel=k_lens, estimator=estimator, block_size=B, labels=[0, 1])
        assert close(s, 2.0 * m2, rel=1e-8, abs_=1e-12), (k_conf, k_lens)


# --------------------------------------------------------------------------------------------
# Uniform binning: edge conventions


def _ece(p, y, n_bins):
    return calibration_error(np.asarray(y), np.asarray(p, dtype=float), n_bins=n_bins,
                             mode="binary", labels=[0, 1])


def test_zero_is_in_the_first_bin():
    # Same bin: gap |0.5 - 0.15| = 0.35. A separate bin for p=0: 0.5 * 1 + 0.5 * 0.3 = 0.65.
    assert _ece([0.0, 0.3], [1, 0], 2) == pytest.approx(0.35, abs=1e-15)
    assert _ece([0.0, 0.3], [1, 0], 3) == pytest.approx(0.35, abs=1e-15)


def test_one_is_in_the_last_bin():
    # Same bin: |0.5 - 0.85| = 0.35; a separate bin for p=1 would give 0.65.
    assert _ece([1.0, 0.7], [0, 1], 2) == pytest.approx(0.35, abs=1e-15)
    assert _ece([1.0, 0.7], [0, 1], 3) == pytest.approx(0.35, abs=1e-15)


def test_bins_are_right_closed():
    # n_bins=2: 0.5 belongs to (0, 0.5] with 0.2: 2/3 * |0.5 - 0.35| + 1/3 * |1 - 0.8| = 1/6
    # (0.3 if 0.5 were in the upper bin).
    assert _ece([0.5, 0.2, 0.8], [1, 0, 1], 2) == pytest.approx(1 / 6, abs=1e-15)
    # ... and with n_bins=4 the edge 0.25 belongs to (0, 0.25].
    assert _ece([0.25, 0.1, 0.4], [1, 0, 0], 4) == pytest.approx(
        2 / 3 * abs(0.5 - 0.175) + 1 / 3 * 0.4, abs=1e-15)


@pytest.mark.parametrize("p, expected_bin", [(0.0, 0), (0.1, 0), (0.45, 4), (1.0, 9)])
def test_bin_index_examples(p, expected_bin):
    """10 bins, 0-based: 0 -> 0, 0.1 -> 0, 0.45 -> 4, 1 -> 9 (CalibrationErrors.jl's binindex)."""
    assert UniformBinning(10).assign(np.array([[p]]))[0] == expected_bin
    # Through the public API: p shares its bin with the centre of bin `expected_bin` and no other.
    for b in range(10):
        centre = (b + 0.5) / 10
        same = abs(0.5 - (p + centre) / 2)  # outcomes 1 (at p) and 0 (at the centre)
        apart = 0.5 * (1.0 - p) + 0.5 * centre
        value = _ece([p, centre], [1, 0], 10)
        assert value == pytest.approx(same if b == expected_bin else apart, abs=1e-12)


@FAST
@given(n_bins=st.integers(1, 200), choice=st.data())
def test_uniform_bin_edges(n_bins, choice):
    """Bin k (0-based) is (k/n, (k+1)/n] with the float edges k/n; the first bin also holds 0."""
    k = choice.draw(st.integers(0, n_bins), label="k")
    edge = k / n_bins
    binning = UniformBinning(n_bins)
    assert binning.assign(np.array([[edge]]))[0] == max(k, 1) - 1
    if k < n_bins:
        assert binning.assign(np.array([[np.nextafter(edge, 2.0)]]))[0] == k
        assert binning.assign(np.array([[edge + 1e-9]]))[0] == k
    if k > 0:
        assert binning.assign(np.array([[np.nextafter(edge, -1.0)]]))[0] == k - 1


@FAST
@given(p=st.floats(0.0, 1.0), n_bins=st.integers(1, 200))
def test_uniform_bin_contains_value(p, n_bins):
    b = int(UniformBinning(n_bins).assign(np.array([[p]]))[0])
    assert 0 <= b < n_bins
    lo, hi = b / n_bins, (b + 1) / n_bins
    assert (lo < p or b == 0) and p <= hi


def test_right_closed_edges_for_many_bins():
    """n_bins * p can round across an edge (25 * 0.28 = 7.000000000000001): the edge still decides.

    (Before the fix p = 7/25 went to bin 7, against the documented right-closed bins.)
    """
    assert UniformBinning(25).assign(np.array([[7 / 25]]))[0] == 6
    # Public API: 0.28 shares (0.24, 0.28] with 0.27 (0.25), not [0.28, 0.32) with 0.30 (0.23).
    assert _ece([0.28, 0.27, 0.30], [1, 0, 0], 25) == pytest.approx(0.25, abs=1e-12)


def test_estimator_uses_the_same_bins():
    rng = np.random.default_rng(5)
    p = np.round(rng.uniform(size=200), 1)  # many values exactly on the edges of 10 bins
    y = (rng.uniform(size=200) < p).astype(int)
    for n_bins in (5, 10):
        est = CalibrationError(n_bins=n_bins).fit(p, y)
        assert est.error(p, y) == pytest.approx(calibration_error(y, p, n_bins=n_bins), abs=1e-15)


# --------------------------------------------------------------------------------------------
# Binned errors against a brute-force reference: any n_bins up to 2**53, extreme weight scales


def _uniform_bin(p, n_bins):
    """0-based bin of p in (b/n, (b+1)/n] with the float edges b / n (first bin holds 0), by
    Python integer arithmetic and correctly rounded int / int divisions."""
    f = Fraction(float(p)) * n_bins
    b = max(-(-f.numerator // f.denominator), 1) - 1  # ceil, then 0-based
    b = min(b, n_bins - 1)
    while b > 0 and p <= b / n_bins:
        b -= 1
    while b < n_bins - 1 and p > (b + 1) / n_bins:
        b += 1
    return b


def _quantile_bins(x, n_bins):
    edges = np.unique(np.quantile(x, np.linspace(0.0, 1.0, n_bins + 1)[1:-1]))
    return np.searchsorted(edges, x, side="left")


def _brute_binned(P, y, mode, norm, strategy, n_bins, w):
    n, c = P.shape
    if mode == "auto":
        mode = "binary" if c == 2 else "top_label"
    if mode == "binary":
        problems = [(P[:, 1:], (y == 1).astype(float)[:, None])]
    elif mode == "top_label":
        problems = [(P.max(1)[:, None], _tie_correctness(P, y)[:, None])]
    elif mode == "classwise":
        problems = [(P[:, k:k + 1], (y == k).astype(float)[:, None]) for k in range(c)]
    else:
        problems = [(P, np.eye(c)[y])]
    values = []
    for Q, T in problems:
        if strategy == "uniform":
            keys = [tuple(_uniform_bin(v, n_bins) for v in row) for row in Q]
        else:
            cols = [_quantile_bins(Q[:, j], n_bins) for j in range(Q.shape[1])]
            keys = list(zip(*cols))
        groups = {}
        for i, k in enumerate(keys):
            groups.setdefault(k, []).append(i)
        gaps, mass = [], []
        for idx in groups.values():
            wi = w[idx]
            if wi.sum() == 0:
                continue
            d = (wi @ T[idx] - wi @ Q[idx]) / wi.sum()
            if d.size == 1:
                gaps.append(abs(d[0]))
            else:
                gaps.append({"l1": 0.5 * np.abs(d).sum(), "l2": math.sqrt(d @ d),
                             "max": np.abs(d).max()}[norm])
            mass.append(wi.sum())
        gaps, mass = np.array(gaps), np.array(mass) / np.sum(mass)
        values.append({"l1": mass @ gaps, "l2": math.sqrt(mass @ gaps**2),
                       "max": gaps.max()}[norm])
    if len(values) == 1:
        return values[0]
    return {"l1": np.mean(values), "max": max(values),
            "l2": math.sqrt(np.mean(np.square(values)))}[norm]


@FAST
@given(data=classification(n_min=1), choice=st.data(), norm=st.sampled_from(["l1", "l2", "max"]),
       strategy=st.sampled_from(["uniform", "quantile"]), seed=seeds,
       weights=st.sampled_from([None, 1.0, 1e-300, 1e308]))
def test_calibration_error_brute_force_any_n_bins(data, choice, norm, strategy, seed, weights):
    """Every mode, norm and strategy against a loop over occupied bins, for n_bins up to 2**53
    (uniform; up to 20000 for quantile bins, whose reference lists every edge), with weights
    rescaled to extreme magnitudes (only their ratios may matter)."""
    P, y = data
    n, c = P.shape
    mode = choice.draw(st.sampled_from(modes_for(c)), label="mode")
    top = 2**53 if strategy == "uniform" else 20000
    n_bins = choice.draw(st.one_of(st.integers(1, 30), st.integers(1, top),
                                   st.sampled_from([min(10**9, top), top])), label="n_bins")
    w = None
    if weights is not None:
        w = np.random.default_rng(seed).uniform(0, 2, size=n)
        w[0] += 0.1
        w = w / w.max() * weights
    ref = _brute_binned(P, y, mode, norm, strategy, n_bins,
                        np.ones(n) if w is None else w / w.max())
    got = calibration_error(y, P, norm=norm, strategy=strategy, n_bins=n_bins, mode=mode,
                            sample_weight=w, labels=np.arange(c))
    assert math.isfinite(got)
    assert close(got, ref, rel=1e-9, abs_=1e-12)
