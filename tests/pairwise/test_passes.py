"""The engine passes of the hypothesis tests (``pair_summary``, ``quadratic_forms``,
``landmark_moments``) equal dense numpy on the explicit ``n x n`` matrix of ``h``, for the
classification term and the distribution terms, with tiles that split unevenly and in parallel."""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skcalib import _pairwise
from skcalib._validation import check_labels_and_probabilities
from skcalib.distributions import Laplace, Mixture, MultivariateNormal, Normal
from skcalib.kernels import (
    ExponentialKernel,
    GaussianKernel,
    KernelValidityWarning,
    TensorProductKernel,
    WassersteinKernel,
    tensor,
)
from skcalib._problems.kernel import prepare_term
from skcalib._problems.terms import classification_term

N = 23  # not a multiple of the chunk sizes below


def _classification(n, seed):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet([0.7, 0.7, 0.7, 0.7], size=n)
    y = rng.integers(0, 4, size=n)
    data = check_labels_and_probabilities(y, P, labels=np.arange(4))
    return classification_term(data, TensorProductKernel(ExponentialKernel(0.4, metric="tv")))


def _dist_term(dist, y, target_kernel):
    with warnings.catch_warnings():
        # non-commuting full covariances: the kernel's validity warning (expected here)
        warnings.simplefilter("ignore", KernelValidityWarning)
        term, _ = prepare_term(
            y, dist, tensor(WassersteinKernel(1.0), target_kernel), random_state=0,
            n_mc_samples=20)
    return term


def _families(n, seed):
    rng = np.random.default_rng(seed)
    loc = rng.uniform(-1, 1, n)
    sd = rng.uniform(0.3, 1.0, n)
    y = loc + 0.5 * rng.standard_normal(n)
    mean2 = rng.uniform(-1, 1, (n, 2))
    y2 = mean2 + 0.5 * rng.standard_normal((n, 2))
    A = rng.standard_normal((n, 2, 2)) * 0.4
    full = A @ A.transpose(0, 2, 1) + 0.2 * np.eye(2)
    mix = Mixture(rng.dirichlet([1.0, 1.0], size=n),
                  [Normal(loc, sd), Normal(loc + 0.5, 0.5 * sd)])
    return {
        "normal-gauss": (Normal(loc, sd), y, GaussianKernel(0.8)),
        "normal-exp": (Normal(loc, sd), y, ExponentialKernel(0.8)),
        "laplace-exp": (Laplace(loc, sd), y, ExponentialKernel(0.8)),
        "laplace-gauss-mc": (Laplace(loc, sd), y, GaussianKernel(0.8)),
        "mvn-diag": (MultivariateNormal(mean2, sd[:, None] * np.ones((n, 2))), y2,
                     GaussianKernel(1.0)),
        "mvn-full": (MultivariateNormal(mean2, full), y2, GaussianKernel(1.0)),
        "mixture": (mix, y, GaussianKernel(0.8)),
    }


def _terms():
    out = {"classification": _classification(N, 0)}
    for name, (dist, y, k) in _families(N, 1).items():
        out[name] = _dist_term(dist, y, k)
    return out


TERMS = _terms()


@pytest.fixture(params=sorted(TERMS))
def term(request):
    return TERMS[request.param]


@pytest.mark.parametrize("chunk_size", [3, 7, 100])
def test_pair_summary_equals_dense(term, chunk_size):
    H = _pairwise.dense_matrix(term)
    off = H - np.diag(np.diag(H))
    scale = np.abs(H).sum()
    total, rows, squares, diag = _pairwise.pair_summary(term, chunk_size=chunk_size)
    assert_allclose(total, off.sum(), rtol=1e-12, atol=1e-14 * scale)
    assert_allclose(rows, off.sum(axis=1), rtol=1e-12, atol=1e-14 * scale)
    assert_allclose(squares, (off ** 2).sum(), rtol=1e-12)
    assert_allclose(diag, np.diag(H), rtol=1e-13, atol=0)
    # squares=False skips the squares only
    t2, r2, s2, d2 = _pairwise.pair_summary(term, squares=False, chunk_size=chunk_size)
    assert s2 == 0.0
    assert t2 == total
    assert_array_equal(r2, rows)
    assert_array_equal(d2, diag)


def test_pair_summary_n_jobs_identical(term):
    one = _pairwise.pair_summary(term, chunk_size=7)
    two = _pairwise.pair_summary(term, chunk_size=7, n_jobs=2)
    assert one[0] == two[0] and one[2] == two[2]
    assert_array_equal(one[1], two[1])
    assert_array_equal(one[3], two[3])


@pytest.mark.parametrize("chunk_size", [3, 7, 100])
def test_quadratic_forms_equal_dense(term, chunk_size):
    H = _pairwise.dense_matrix(term)
    rng = np.random.default_rng(5)
    C = rng.multinomial(N, np.full(N, 1.0 / N), size=9).astype(float)
    C[3] = rng.uniform(-1, 2, N)  # any real weights, not only counts
    q, rows = _pairwise.quadratic_forms(term, C, chunk_size=chunk_size)
    expected = np.array([c @ H @ c for c in C])
    assert_allclose(q, expected, rtol=1e-11, atol=1e-13 * np.abs(H).sum() * N)
    assert_allclose(rows, H.sum(axis=1), rtol=1e-12, atol=1e-14 * np.abs(H).sum())
    q2, rows2 = _pairwise.quadratic_forms(term, C, chunk_size=chunk_size, n_jobs=2)
    assert_array_equal(q2, q)
    assert_array_equal(rows2, rows)


def test_quadratic_forms_do_not_mutate_and_check_shape():
    term = TERMS["classification"]
    C = np.ones((2, N))
    before = C.copy()
    _pairwise.quadratic_forms(term, C, chunk_size=4)
    assert_array_equal(C, before)
    with pytest.raises(ValueError, match="counts has 5 columns; expected 23"):
        _pairwise.quadratic_forms(term, np.ones((2, 5)))


@pytest.mark.parametrize("m", [1, 5, 8, 22])
@pytest.mark.parametrize("chunk_size", [3, 7, 100])
def test_landmark_moments_equal_dense(term, m, chunk_size):
    H = _pairwise.dense_matrix(term)
    gram, sums, Hmm = _pairwise.landmark_moments(term, m, chunk_size=chunk_size)
    Hm = H[:, :m]
    assert gram.shape == (m, m) and sums.shape == (m,) and Hmm.shape == (m, m)
    assert_allclose(gram, Hm.T @ Hm, rtol=1e-11, atol=1e-13 * (Hm ** 2).sum())
    assert_allclose(sums, Hm.sum(axis=0), rtol=1e-12, atol=1e-14 * np.abs(Hm).sum())
    # the landmark block with its exact diagonal h_ii
    assert_allclose(Hmm, H[:m, :m], rtol=1e-13, atol=1e-15)


def test_landmark_moments_n_jobs_identical(term):
    one = _pairwise.landmark_moments(term, 8, chunk_size=3)
    two = _pairwise.landmark_moments(term, 8, chunk_size=3, n_jobs=2)
    for a, b in zip(one, two):
        assert_array_equal(a, b)


def test_dense_reference_is_the_pair_term():
    # The dense matrix used above is h itself: for two samples the unbiased SKCE is h_12, and
    # h_ii = 1 - 2 p_i[y_i] + |p_i|^2 for classification (k(p, p) = 1).
    rng = np.random.default_rng(3)
    P = rng.dirichlet([1, 1, 1], size=6)
    y = rng.integers(0, 3, size=6)
    data = check_labels_and_probabilities(y, P, labels=np.arange(3))
    k = ExponentialKernel(0.4, metric="tv")
    H = _pairwise.dense_matrix(classification_term(data, TensorProductKernel(k)))
    K = np.exp(-0.5 * np.abs(P[:, None, :] - P[None, :, :]).sum(-1) / 0.4)
    E = np.eye(3)[y] - P
    assert_allclose(H, K * (E @ E.T), rtol=1e-12, atol=1e-15)
