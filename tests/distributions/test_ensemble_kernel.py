"""The ensemble (mixture) kernel of the SKCE against the seed's formula, without the reference
implementation's bug (issue 23, item 5; ``../shared/specs/seed-000-kce-beyond-classification.md``,
section 3.5 / Appendix D.3).

For ensembles ``P = sum_i pi_i p_i`` and ``Q = sum_j rho_j q_j`` the target-kernel expectation is
the full double sum over all member pairs,

    e2(P, Q) = sum_{i, j} pi_i rho_j e2(p_i, q_j),

which is symmetric in ``P`` and ``Q``, and so is the SKCE kernel ``h``. The reference Julia code
(CalibrationErrorsDistributions.jl v0.1.6, CalibrationErrors.jl ``mixturemodel.jl``) sums the
pairs ``(i = 1, all j)`` and ``(i >= 2, j >= 2)`` only: it omits ``(i >= 2, j = 1)``, so its
``h`` is neither symmetric nor the SKCE kernel. Here that buggy sum is implemented in the test
(:func:`buggy_double_sum`) to show that skcalib does *not* compute it.

Two kinds of ensembles: point members (:class:`~skcalib.distributions.Empirical`, whose members
are Dirac laws, ``e2(d_a, d_b) = k(a, b)``) and members that are normal predictions (deep
ensembles, :class:`~skcalib.distributions.Mixture` of :class:`~skcalib.distributions.Normal`).
The brute-force member terms are the textbook Gaussian integrals, checked once against
quadrature.
"""

import itertools
import math

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import integrate

import skcalib
from skcalib.distributions import Empirical, Mixture, Normal, pairwise_wasserstein
from skcalib.kernels import ExponentialKernel, GaussianKernel, WassersteinKernel, tensor

LS = 0.8          # target-kernel length scale


def k_gauss(a, b, ls=LS):
    return math.exp(-0.5 * ((a - b) / ls) ** 2)


def k_exp(a, b, ls=LS):
    return math.exp(-abs(a - b) / ls)


def e1_normal(m, s, y, ls=LS):
    """``E exp(-(Z - y)^2 / (2 ls^2))`` for ``Z ~ N(m, s^2)``."""
    v = ls * ls + s * s
    return ls / math.sqrt(v) * math.exp(-0.5 * (m - y) ** 2 / v)


def e2_normal(m1, s1, m2, s2, ls=LS):
    """``E exp(-(Z - Z')^2 / (2 ls^2))`` for independent ``Z ~ N(m1, s1^2)``,
    ``Z' ~ N(m2, s2^2)`` (``Z - Z'`` is ``N(m1 - m2, s1^2 + s2^2)``)."""
    return e1_normal(m1 - m2, math.sqrt(s1 * s1 + s2 * s2), 0.0, ls)


def full_double_sum(pi, rho, term):
    """``sum_{i, j} pi_i rho_j term(i, j)``: the seed's formula, every pair of members."""
    return sum(pi[i] * rho[j] * term(i, j) for i in range(len(pi)) for j in range(len(rho)))


def buggy_double_sum(pi, rho, term):
    """The reference implementation's sum: ``(i = 1, all j) + (i >= 2, j >= 2)``; the pairs
    ``(i >= 2, j = 1)`` are missing."""
    first = sum(pi[0] * rho[j] * term(0, j) for j in range(len(rho)))
    rest = sum(pi[i] * rho[j] * term(i, j)
               for i in range(1, len(pi)) for j in range(1, len(rho)))
    return first + rest


def test_member_terms_against_quadrature():
    # the brute force's building blocks are independent of the library: Gaussian integrals
    m, s, y = 0.3, 1.4, -0.5
    dens = lambda z: math.exp(-0.5 * ((z - m) / s) ** 2) / (s * math.sqrt(2 * math.pi))  # noqa
    quad = integrate.quad(lambda z: dens(z) * k_gauss(z, y), -np.inf, np.inf)[0]
    assert e1_normal(m, s, y) == pytest.approx(quad, rel=1e-10)
    m2, s2 = 1.1, 0.6
    dens2 = lambda z: math.exp(-0.5 * ((z - m2) / s2) ** 2) / (s2 * math.sqrt(2 * math.pi))  # noqa
    quad2 = integrate.dblquad(lambda z2, z: dens(z) * dens2(z2) * k_gauss(z, z2),
                              -12, 12, -12, 12, epsabs=1e-12)[0]
    assert e2_normal(m, s, m2, s2) == pytest.approx(quad2, rel=1e-8)


# --------------------------------------------------------------------------------------------
# e2 between two ensembles


@pytest.mark.parametrize("kernel, k", [(GaussianKernel(LS), k_gauss),
                                       (ExponentialKernel(LS), k_exp)], ids=["gauss", "exp"])
def test_point_member_ensembles_e2_symmetric_full_sum_not_buggy(kernel, k):
    # P: 4 weighted members, Q: 3 weighted members (unequal sizes, unequal weights)
    xp, pi = np.array([-1.3, 0.2, 0.9, 2.4]), np.array([0.4, 0.1, 0.3, 0.2])
    xq, rho = np.array([1.7, -0.4, 0.5]), np.array([0.5, 0.2, 0.3])
    P, Q = Empirical(xp[None], pi[None]), Empirical(xq[None], rho[None])
    e2_pq = P.expected_kernel_pair(kernel, Q)[0]
    e2_qp = Q.expected_kernel_pair(kernel, P)[0]
    # symmetric kernel between ensembles
    assert_allclose(e2_pq, e2_qp, rtol=1e-14)
    # the full double sum over all member pairs, by brute force
    full = full_double_sum(pi, rho, lambda i, j: k(xp[i], xq[j]))
    assert_allclose(e2_pq, full, rtol=1e-13)
    # the buggy sum is a different number, and not symmetric
    bug_pq = buggy_double_sum(pi, rho, lambda i, j: k(xp[i], xq[j]))
    bug_qp = buggy_double_sum(rho, pi, lambda j, i: k(xq[j], xp[i]))
    missing = sum(pi[i] * rho[0] * k(xp[i], xq[0]) for i in range(1, 4))
    assert_allclose(full - bug_pq, missing, rtol=1e-12)
    assert missing > 0.05
    assert abs(e2_pq - bug_pq) > 0.05 and abs(e2_pq - bug_qp) > 0.01
    assert abs(bug_pq - bug_qp) > 0.01


def test_deep_ensembles_e2_symmetric_full_sum_not_buggy():
    # rows 0 and 1 are two deep ensembles of three normal members each, with their own weights
    mu = np.array([[-1.0, 0.5], [0.4, 1.9], [1.5, -0.7]])      # member k, row i
    sd = np.array([[0.6, 1.2], [1.1, 0.5], [0.3, 0.9]])
    W = np.array([[0.5, 0.3, 0.2], [0.1, 0.6, 0.3]])
    ens = Mixture(W, [Normal(mu[c], sd[c]) for c in range(3)])
    P, Q = ens[[0]], ens[[1]]
    kernel = GaussianKernel(LS)
    e2_pq = P.expected_kernel_pair(kernel, Q)[0]
    e2_qp = Q.expected_kernel_pair(kernel, P)[0]
    assert_allclose(e2_pq, e2_qp, rtol=1e-14)
    term = lambda i, j: e2_normal(mu[i, 0], sd[i, 0], mu[j, 1], sd[j, 1])  # noqa: E731
    full = full_double_sum(W[0], W[1], term)
    assert_allclose(e2_pq, full, rtol=1e-12)
    bug = buggy_double_sum(W[0], W[1], term)
    missing = sum(W[0, i] * W[1, 0] * term(i, 0) for i in range(1, 3))
    assert_allclose(e2_pq - bug, missing, rtol=1e-10)
    assert abs(e2_pq - bug) > 0.01
    # e2(P, P) with independent draws: also every pair, the diagonal included
    self_full = full_double_sum(W[0], W[0],
                                lambda i, j: e2_normal(mu[i, 0], sd[i, 0], mu[j, 0], sd[j, 0]))
    assert_allclose(P.expected_kernel_pair(kernel)[0], self_full, rtol=1e-12)


# --------------------------------------------------------------------------------------------
# the SKCE kernel h between two (prediction, target) pairs


def _h_target(e1, e2, k, pi, rho, y, y2, summation):
    """Target part of ``h((P, y), (Q, y'))``: ``k(y, y') - e1(P, y') - e1(Q, y) + e2(P, Q)``
    with the member sums of ``summation`` (the seed writes ``h^mix`` as the double sum of the
    members' ``h``, which the weights summing to one make equal to this)."""
    return summation(pi, rho, lambda i, j: (k(y, y2) - e1(0, i, y2) - e1(1, j, y)
                                            + e2(i, j)))


def test_skce_kernel_of_deep_ensembles_is_symmetric_and_not_buggy():
    # With two samples the unbiased SKCE is h(z_1, z_2) itself.
    mu = np.array([[-1.0, 0.5], [0.4, 1.9], [1.5, -0.7]])
    sd = np.array([[0.6, 1.2], [1.1, 0.5], [0.3, 0.9]])
    W = np.array([[0.5, 0.3, 0.2], [0.1, 0.6, 0.3]])
    ens = Mixture(W, [Normal(mu[c], sd[c]) for c in range(3)])
    swapped = ens[[1, 0]]
    y = np.array([0.3, 1.2])
    kernel = tensor(WassersteinKernel(1.0), GaussianKernel(LS))
    h12 = skcalib.skce(y, ens, kernel=kernel)
    h21 = skcalib.skce(y[::-1], swapped, kernel=kernel)
    assert_allclose(h12, h21, rtol=1e-13)
    # the prediction kernel is exp(-MW2), taken from the library (the ensemble formula is about
    # the target part)
    kp = math.exp(-pairwise_wasserstein(ens)[0, 1])
    e1 = lambda r, i, t: e1_normal(mu[i, r], sd[i, r], t)  # noqa: E731
    e2 = lambda i, j: e2_normal(mu[i, 0], sd[i, 0], mu[j, 1], sd[j, 1])  # noqa: E731
    full = kp * _h_target(e1, e2, k_gauss, W[0], W[1], y[0], y[1], full_double_sum)
    assert_allclose(h12, full, rtol=1e-12)
    # the buggy h: asymmetric, and not what skcalib computes
    bug12 = kp * _h_target(e1, e2, k_gauss, W[0], W[1], y[0], y[1], buggy_double_sum)
    e1s = lambda r, i, t: e1_normal(mu[i, 1 - r], sd[i, 1 - r], t)  # noqa: E731
    e2s = lambda j, i: e2(i, j)  # noqa: E731
    bug21 = kp * _h_target(e1s, e2s, k_gauss, W[1], W[0], y[1], y[0], buggy_double_sum)
    assert abs(bug12 - bug21) > 1e-3
    assert min(abs(h12 - bug12), abs(h12 - bug21)) > 1e-3


def test_skce_of_point_member_ensembles_against_full_double_sums():
    # a U-statistic over 8 weighted ensembles of unequal member counts, brute force with the
    # full double sums; the buggy sums give a different estimate
    rng = np.random.default_rng(23)
    n, sizes = 8, [2, 5, 3, 4, 5, 2, 3, 4]
    rows = [rng.normal(rng.normal(), rng.uniform(0.5, 1.5), size=m) for m in sizes]
    wts = [rng.uniform(0.2, 1.0, size=m) for m in sizes]
    wts = [w / w.sum() for w in wts]
    y = rng.normal(size=n)
    m = max(sizes)
    # zero-weight padding keeps each law (Empirical needs a rectangular array)
    X = np.array([np.concatenate([r, np.full(m - r.size, r[0])]) for r in rows])
    Wt = np.array([np.concatenate([w, np.zeros(m - w.size)]) for w in wts])
    pred = Empirical(X, Wt)
    kernel = tensor(WassersteinKernel(1.0), GaussianKernel(LS))
    got = skcalib.skce(y, pred, kernel=kernel)
    D = pairwise_wasserstein(pred)

    def estimate(summation):
        total = 0.0
        for a, b in itertools.combinations(range(n), 2):
            e1 = lambda r, i, t: k_gauss((rows[a], rows[b])[r][i], t)  # noqa: E731
            e2 = lambda i, j: k_gauss(rows[a][i], rows[b][j])  # noqa: E731
            total += math.exp(-D[a, b]) * _h_target(e1, e2, k_gauss, wts[a], wts[b], y[a],
                                                     y[b], summation)
        return total / (n * (n - 1) / 2)

    assert_allclose(got, estimate(full_double_sum), rtol=1e-11, atol=1e-15)
    # (about 3% apart here: the buggy sums lose weight and symmetry in every pair)
    assert abs(got - estimate(buggy_double_sum)) > 0.01 * abs(got)
