"""Predictive distributions (skcalib.distributions) and the kernel expectations of the SKCE pair
term (skcalib._problems.terms).

Every number is checked against something computed independently of the library:

* scipy.integrate.quad (1-D densities, split at every kink) and nested quad for E k(Z, Z')
  (sped up where exact: Z - Z' is normal for two normals; the inner expectation over a Laplace law
  is integrated piece by piece -- both shortcuts are themselves checked against nested quad);
* for multivariate normals and the Gaussian kernel, products of 1-D quadratures in the eigenbasis
  of the covariance (|z - y|^2 is rotation invariant);
* seeded Monte Carlo with a tolerance of 4 standard errors;
* exact algebra (W2 formulas, scipy.linalg.sqrtm for Bures, scipy.optimize.linprog / enumeration
  for the mixture Wasserstein distance);
* the numbers of the specification (seed-000 §3.9, reference-values §3).

Conventions: GaussianKernel(l) = exp(-|d|^2 / (2 l^2)); ExponentialKernel(l) = exp(-|d| / l)
(Euclidean) or exp(-0.5 sum|d_k| / l) (metric="tv"); Normal(loc, scale) takes standard deviations.
"""

import itertools
import math
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import integrate, linalg, optimize, special

from skcalib import calibration_error, skce
from skcalib._pairwise import dense_matrix
from skcalib.distributions import (
    Categorical,
    Laplace,
    Mixture,
    MultivariateNormal,
    Normal,
    pairwise_wasserstein,
    wasserstein_distance,
)
from skcalib.kernels import (
    ExponentialKernel,
    GaussianKernel,
    KernelValidityWarning,
    WassersteinKernel,
    tensor,
)
from skcalib._expectations import check_targets, has_closed_form, target_ops
from skcalib.distributions._laplace import laplace_e1, laplace_e2
from skcalib.distributions._normal import _gauss_abs_mgf, normal_gauss_log_e1
from skcalib._problems.terms import DistributionTerm, distribution_term

SQRT2PI = math.sqrt(2.0 * math.pi)
PAPER_KERNEL = tensor(WassersteinKernel(1.0), GaussianKernel(1.0))


# ============================================================================================
# independent reference machinery (no library code)


def normal_pdf(m, s):
    return lambda z: math.exp(-0.5 * ((z - m) / s) ** 2) / (s * SQRT2PI)


def laplace_pdf(m, b):
    return lambda z: math.exp(-abs(z - m) / b) / (2.0 * b)


def kernel_1d(kernel):
    """k(d) for a 1-D difference d, written from the documented conventions; and whether it has a
    kink at d = 0."""
    ls = float(kernel.length_scale)
    if isinstance(kernel, GaussianKernel):
        return (lambda d: math.exp(-d * d / (2.0 * ls * ls))), False
    rate = (0.5 if kernel.metric == "tv" else 1.0) / ls
    return (lambda d: math.exp(-rate * abs(d))), True


def kernel_nd(kernel):
    """Vectorised k(D) for differences D of shape (..., d)."""
    ls = float(kernel.length_scale)
    if isinstance(kernel, GaussianKernel):
        return lambda D: np.exp(-(D ** 2).sum(-1) / (2.0 * ls * ls))
    if kernel.metric == "tv":
        return lambda D: np.exp(-0.5 * np.abs(D).sum(-1) / ls)
    return lambda D: np.exp(-np.sqrt((D ** 2).sum(-1)) / ls)


def quad_line(f, breaks, epsrel=1e-12):
    """integral of f over R, split at the breakpoints (kinks) so that quad sees smooth pieces."""
    pts = sorted({float(b) for b in breaks})
    edges = [-np.inf] + pts + [np.inf]
    parts = []
    for a, b in zip(edges[:-1], edges[1:]):
        if b > a:
            parts.append(integrate.quad(f, a, b, epsabs=1e-15, epsrel=epsrel, limit=400)[0])
    return math.fsum(parts)


class Ref1D:
    """A 1-D law for the references: density (None for a point mass), location and kinks."""

    def __init__(self, kind, m, s):
        self.kind, self.m, self.s = kind, float(m), float(s)
        if kind == "normal":
            self.pdf = normal_pdf(m, s) if s > 0 else None
            self.kinks = []
        else:
            self.pdf = laplace_pdf(m, s)
            self.kinks = [m]


def ref_e1(law, y, kernel, epsrel=1e-12):
    """E_{Z ~ law} k(Z, y) by quadrature."""
    k, kink = kernel_1d(kernel)
    if law.pdf is None:
        return k(law.m - y)
    return quad_line(lambda z: law.pdf(z) * k(z - y), law.kinks + ([y] if kink else []) + [law.m],
                     epsrel)


def expm1rel(x):
    return 1.0 if x == 0 else math.expm1(x) / x


def laplace_exp_inner(m, b, z, rate):
    """E exp(-rate |X - z|) for X ~ Laplace(m, b), integrating the exponential pieces exactly
    (the middle piece through expm1, so it stays accurate when 1/b ~ rate)."""
    lo, hi = min(m, z), max(m, z)
    L = hi - lo
    a1 = 1.0 / b + rate
    left = math.exp((lo - m) / b + rate * (lo - z)) / a1
    right = math.exp(-(hi - m) / b - rate * (hi - z)) / a1
    # middle piece (between m and z): int_0^L exp(-rate u - (L - u)/b) du, written so that the
    # argument of expm1 is never positive (no overflow) and no cancellation when 1/b ~ rate
    c = 1.0 / b - rate
    if c <= 0:
        mid = math.exp(-L / b) * L * expm1rel(c * L)
    else:
        mid = math.exp(-rate * L) * L * expm1rel(-c * L)
    return (left + mid + right) / (2.0 * b)


def laplace_gauss_inner(m, b, z, ls):
    """E exp(-(X - z)^2 / (2 ls^2)) for X ~ Laplace(m, b): completing the square on each half-line,
    int_0^inf exp(-x/b - (x - c)^2 / (2 ls^2)) dx = ls sqrt(pi/2) exp(ls^2/(2b^2) - c/b) erfc(u),
    u = (ls^2/b - c) / (ls sqrt 2), summed over c = z - m and c = m - z (erfcx form for u >= 0)."""
    total = 0.0
    for c in (z - m, m - z):
        u = (ls * ls / b - c) / (ls * math.sqrt(2.0))
        if u < 0:
            total += math.exp(ls * ls / (2 * b * b) - c / b) * special.erfc(u)
        else:
            total += math.exp(-c * c / (2 * ls * ls)) * special.erfcx(u)
    return ls * math.sqrt(math.pi / 2.0) * total / (2.0 * b)


def ref_e2(law1, law2, kernel, nested=False, epsrel=1e-11):
    """E k(Z, Z') for independent Z ~ law1, Z' ~ law2.

    Point masses reduce to ref_e1. Two normals: Z - Z' ~ N(m - m', s^2 + s'^2) and k depends on
    Z - Z' only, so one quadrature suffices. Otherwise quad over Z of the inner expectation, which
    is another quad (nested=True), or for a Laplace Z' the exact inner expectation
    (laplace_exp_inner, laplace_gauss_inner; both checked against nested quad below)."""
    if law1.pdf is None:
        return ref_e1(law2, law1.m, kernel)
    if law2.pdf is None:
        return ref_e1(law1, law2.m, kernel)
    if not nested and law1.kind == law2.kind == "normal":
        return ref_e1(Ref1D("normal", law1.m - law2.m, math.hypot(law1.s, law2.s)), 0.0, kernel)
    if not nested and law2.kind == "laplace" and isinstance(kernel, ExponentialKernel):
        rate = (0.5 if kernel.metric == "tv" else 1.0) / float(kernel.length_scale)
        inner = lambda z: laplace_exp_inner(law2.m, law2.s, z, rate)  # noqa: E731
    elif not nested and law2.kind == "laplace":
        ls = float(kernel.length_scale)
        inner = lambda z: laplace_gauss_inner(law2.m, law2.s, z, ls)  # noqa: E731
    else:
        inner = lambda z: ref_e1(law2, z, kernel, min(1e-12, epsrel / 10))  # noqa: E731
    return quad_line(lambda z: law1.pdf(z) * inner(z), law1.kinks + law2.kinks + [law1.m, law2.m],
                     epsrel)


def rot_e1_gauss(mean, S, y, kernel):
    """E exp(-|Z - y|^2 / (2 l^2)), Z ~ N(mean, S) on R^d: |z - y|^2 is rotation invariant, so in
    the eigenbasis of S it is a product of independent 1-D expectations (each by quad)."""
    w, U = np.linalg.eigh(np.atleast_2d(S))
    c = U.T @ (np.atleast_1d(mean) - y)
    return math.prod(ref_e1(Ref1D("normal", c[k], math.sqrt(max(w[k], 0.0))), 0.0, kernel)
                     for k in range(c.size))


def rot_e2_gauss(m1, S1, m2, S2, kernel):
    """E k(Z, Z') for independent normals: Z - Z' ~ N(m1 - m2, S1 + S2)."""
    return rot_e1_gauss(np.asarray(m1) - m2, np.asarray(S1) + S2, 0.0, kernel)


def full_cov(dist):
    """(n, d, d) covariances of a MultivariateNormal, from its public attributes."""
    c = np.asarray(dist.cov)
    if dist.covariance_type == "spherical":
        return c[:, None, None] * np.eye(dist.dim)
    if dist.covariance_type == "diag":
        return c[:, :, None] * np.eye(dist.dim)
    return c


def random_spd(rng, d, scale=1.0):
    A = rng.normal(size=(d, d))
    return scale * (A @ A.T / d + 0.2 * np.eye(d))


def rotation(rng, d):
    Q, R = np.linalg.qr(rng.normal(size=(d, d)))
    return Q * np.sign(np.diag(R))


def mc_tol(sd, m):
    return 4.0 * sd / math.sqrt(m)


# ============================================================================================
# 1. validation, immutability, no mutation of inputs

A2 = np.zeros((2, 2))
SPD = np.array([[2.0, 0.3], [0.3, 1.0]])

INVALID = [
    # Normal
    ("normal nan loc", lambda: Normal([0.0, np.nan], 1.0), ValueError, "loc"),
    ("normal inf loc", lambda: Normal([np.inf], 1.0), ValueError, "loc"),
    ("normal nan scale", lambda: Normal([0.0], [np.nan]), ValueError, "scale"),
    ("normal inf scale", lambda: Normal([0.0], [np.inf]), ValueError, "scale"),
    ("normal negative scale", lambda: Normal([0.0, 1.0], [1.0, -0.5]), ValueError, "scale"),
    ("normal 2-D loc", lambda: Normal(np.zeros((2, 2)), 1.0), ValueError, "loc"),
    ("normal rows", lambda: Normal([0.0, 1.0], [1.0, 1.0, 1.0]), ValueError, "loc.*scale|scale.*loc"),
    ("normal text loc", lambda: Normal(["a"], 1.0), TypeError, "loc"),
    # Laplace
    ("laplace zero scale", lambda: Laplace([0.0], [0.0]), ValueError, "scale"),
    ("laplace negative scale", lambda: Laplace([0.0], [-1.0]), ValueError, "scale"),
    ("laplace nan loc", lambda: Laplace([np.nan], [1.0]), ValueError, "loc"),
    ("laplace inf scale", lambda: Laplace([0.0], [np.inf]), ValueError, "scale"),
    ("laplace rows", lambda: Laplace([0.0, 1.0, 2.0], [1.0, 2.0]), ValueError, "loc.*scale|scale.*loc"),
    # MultivariateNormal
    ("mvn nan mean", lambda: MultivariateNormal([[0.0, np.nan]], [1.0]), ValueError, "mean"),
    ("mvn 1-D mean", lambda: MultivariateNormal([0.0, 1.0], [1.0, 1.0]), ValueError, "mean"),
    ("mvn inf spherical", lambda: MultivariateNormal(A2, [1.0, np.inf]), ValueError, "cov"),
    ("mvn nan full", lambda: MultivariateNormal(A2[:1], [[[1.0, np.nan], [np.nan, 1.0]]]), ValueError,
     "cov"),
    ("mvn negative spherical", lambda: MultivariateNormal(A2, [1.0, -1.0]), ValueError, "cov"),
    ("mvn negative diag", lambda: MultivariateNormal(A2, [[1.0, 1.0], [-1.0, 1.0]]), ValueError, "cov"),
    ("mvn non-symmetric", lambda: MultivariateNormal(A2[:1], [[[1.0, 0.5], [0.0, 1.0]]]), ValueError,
     "cov"),
    ("mvn non-psd", lambda: MultivariateNormal(A2[:1], [[[1.0, 2.0], [2.0, 1.0]]]), ValueError, "cov"),
    ("mvn diag shape", lambda: MultivariateNormal(A2, np.ones((2, 3))), ValueError, "cov"),
    ("mvn full shape", lambda: MultivariateNormal(A2, np.ones((2, 2, 3))), ValueError, "cov"),
    ("mvn full wrong d", lambda: MultivariateNormal(A2, np.stack([np.eye(3)] * 2)), ValueError, "cov"),
    ("mvn cov rows", lambda: MultivariateNormal(A2, [1.0, 1.0, 1.0]), ValueError, "cov"),
    ("mvn cov 4-D", lambda: MultivariateNormal(A2, np.ones((2, 2, 2, 2))), ValueError, "cov"),
    # Mixture
    ("mixture negative weight", lambda: Mixture([1.2, -0.2], [Normal([0.0], 1.0)] * 2), ValueError,
     "weights"),
    ("mixture weights sum", lambda: Mixture([0.5, 0.6], [Normal([0.0], 1.0)] * 2), ValueError,
     "weights"),
    ("mixture weights rows sum", lambda: Mixture([[0.5, 0.5], [0.5, 0.4]], [Normal([0.0, 1.0], 1.0)] * 2),
     ValueError, "weights"),
    ("mixture weights shape", lambda: Mixture([0.2, 0.3, 0.5], [Normal([0.0], 1.0)] * 2), ValueError,
     "weights"),
    ("mixture weights rows", lambda: Mixture(np.full((3, 2), 0.5), [Normal([0.0, 1.0], 1.0)] * 2),
     ValueError, "weights"),
    ("mixture nan weights", lambda: Mixture([np.nan, 1.0], [Normal([0.0], 1.0)] * 2), ValueError,
     "weights"),
    ("mixture families", lambda: Mixture([0.5, 0.5], [Normal([0.0], 1.0), Laplace([0.0], 1.0)]),
     TypeError, "famil|component"),
    ("mixture lengths", lambda: Mixture([0.5, 0.5], [Normal([0.0], 1.0), Normal([0.0, 1.0], 1.0)]),
     ValueError, "component"),
    ("mixture dims", lambda: Mixture([0.5, 0.5], [MultivariateNormal([[0.0]], [1.0]),
                                                  MultivariateNormal([[0.0, 0.0]], [1.0])]),
     ValueError, "component|dimension"),
    ("mixture of categoricals", lambda: Mixture([1.0], [Categorical([[0.5, 0.5]])]), TypeError,
     "component"),
    ("mixture empty", lambda: Mixture([], []), ValueError, "component"),
    ("mixture not a list", lambda: Mixture([1.0], Normal([0.0], 1.0)), TypeError, "component"),
    # Categorical
    ("categorical rows sum", lambda: Categorical([[0.5, 0.4], [0.5, 0.5]]), ValueError, "probs"),
    ("categorical nan", lambda: Categorical([[np.nan, 1.0]]), ValueError, "probs"),
    ("categorical negative", lambda: Categorical([[1.5, -0.5]]), ValueError, "probs"),
    ("categorical 1-D", lambda: Categorical([0.5, 0.5]), ValueError, "probs"),
    ("categorical one column", lambda: Categorical([[1.0], [1.0]]), ValueError, "probs"),
    ("categorical duplicate classes", lambda: Categorical([[0.5, 0.5]], classes=["a", "a"]),
     ValueError, "classes"),
    ("categorical classes length", lambda: Categorical([[0.5, 0.5]], classes=["a", "b", "c"]),
     ValueError, "classes"),
]


@pytest.mark.parametrize("make, exc, name", [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_invalid_parameters_raise_naming_the_parameter(make, exc, name):
    with pytest.raises(exc, match=name):
        make()


def test_boundary_values_are_accepted():
    # Normal allows a point prediction; PSD (singular) covariances are allowed.
    assert Normal([0.0, 1.0], [0.0, 1.0]).scale[0] == 0.0
    MultivariateNormal([[0.0, 0.0]], [0.0])
    MultivariateNormal([[0.0, 0.0]], [[0.0, 2.0]])
    v = np.array([1.0, 2.0]) / math.sqrt(5.0)
    p = MultivariateNormal([[1.0, -1.0]], (3.0 * np.outer(v, v))[None])  # rank one
    Z = p.sample(random_state=0, size=2000)[:, 0, :] - [1.0, -1.0]
    # the draws lie on the line spanned by v
    assert np.abs(Z @ np.array([v[1], -v[0]])).max() < 1e-6
    # rows summing to 1 within rounding, a zero weight, a zero probability
    Categorical([[0.1 + 0.2, 0.7]])
    Mixture([1.0, 0.0], [Normal([0.0], 1.0), Normal([5.0], 1.0)])
    Categorical([[0.0, 1.0]])


def _families():
    rng = np.random.default_rng(1)
    return {
        "normal": lambda: Normal([0.0, 1.0, -2.0], [1.0, 0.5, 0.0]),
        "laplace": lambda: Laplace([0.0, 1.0, -2.0], [1.0, 0.5, 2.0]),
        "mvn spherical": lambda: MultivariateNormal(rng.normal(size=(3, 2)), [1.0, 2.0, 0.5]),
        "mvn diag": lambda: MultivariateNormal(rng.normal(size=(3, 2)), [[1.0, 2.0], [0.3, 0.4], [1, 1]]),
        "mvn full": lambda: MultivariateNormal(rng.normal(size=(3, 2)),
                                               np.stack([random_spd(rng, 2) for _ in range(3)])),
        "mixture": lambda: Mixture([[0.3, 0.7], [0.5, 0.5], [1.0, 0.0]],
                                   [Normal([0.0, 1.0, 2.0], 1.0), Normal([3.0, 1.0, 0.0], 2.0)]),
        "categorical": lambda: Categorical([[0.2, 0.8], [0.5, 0.5], [1.0, 0.0]], classes=["a", "b"]),
    }


ARRAYS = {"normal": ["loc", "scale"], "laplace": ["loc", "scale"], "mvn spherical": ["mean", "cov"],
          "mvn diag": ["mean", "cov"], "mvn full": ["mean", "cov"], "mixture": ["weights"],
          "categorical": ["probs", "classes"]}


@pytest.mark.parametrize("family", list(ARRAYS))
def test_objects_are_immutable(family):
    dist = _families()[family]()
    with pytest.raises(AttributeError):
        dist.n_samples = 7
    with pytest.raises(AttributeError):
        dist.something_new = 1
    for name in ARRAYS[family]:
        arr = getattr(dist, name)
        assert not arr.flags.writeable
        with pytest.raises(ValueError):
            arr[0] = arr[0]
        with pytest.raises(AttributeError):
            setattr(dist, name, arr)
    if family == "mixture":
        assert isinstance(dist.components, tuple)


def test_inputs_are_not_mutated_and_are_copied():
    rng = np.random.default_rng(2)
    loc, scale = rng.normal(size=4), rng.uniform(0.5, 2.0, size=4)
    mean = rng.normal(size=(4, 2))
    cov = np.stack([random_spd(rng, 2) for _ in range(4)])
    cov[0, 0, 1] += 1e-13  # symmetric within tolerance; the library symmetrises its own copy
    W = np.array([0.25, 0.75])
    P = np.array([[0.2, 0.8], [0.6, 0.4], [0.5, 0.5], [0.1, 0.9]])
    y = rng.normal(size=4)
    Y = rng.normal(size=(4, 2))
    saved = [a.copy() for a in (loc, scale, mean, cov, W, P, y, Y)]
    n = Normal(loc, scale)
    la = Laplace(loc, scale)
    mv = MultivariateNormal(mean, cov)
    mx = Mixture(W, [Normal(loc, scale), Normal(loc + 1, scale)])
    ca = Categorical(P)
    for d, t in [(n, y), (la, y), (mx, y)]:
        d.sample(random_state=0, size=3)
        d.expected_kernel(GaussianKernel(1.0), t, random_state=0)
        d.expected_kernel_pair(GaussianKernel(1.0), random_state=0)
        pairwise_wasserstein(d)
    mv.expected_kernel(GaussianKernel(1.0), Y)
    pairwise_wasserstein(mv)
    ca.sample(random_state=0)
    skce(y, n, kernel=PAPER_KERNEL, estimator="biased")
    for a, b in zip((loc, scale, mean, cov, W, P, y, Y), saved):
        assert_array_equal(a, b)
    # the objects hold copies: changing the caller's arrays afterwards changes nothing
    loc[:] = 100.0
    scale[:] = 100.0
    mean[:] = 100.0
    cov[:] = 100.0
    W[:] = 0.5
    P[:] = 0.5
    assert_array_equal(n.loc, saved[0])
    assert_array_equal(la.scale, saved[1])
    assert_array_equal(mv.mean, saved[2])
    assert_allclose(mv.cov[1:], saved[3][1:], rtol=0, atol=0)
    assert_array_equal(mx.weights[0], saved[4])
    assert_array_equal(ca.probs, saved[5])


# ============================================================================================
# 2. sampling


@pytest.mark.parametrize("family", list(ARRAYS))
def test_sampling_is_reproducible(family):
    dist = _families()[family]()
    a = dist.sample(random_state=3, size=50)
    b = dist.sample(random_state=3, size=50)
    c = dist.sample(random_state=np.random.default_rng(3), size=50)
    d = dist.sample(random_state=4, size=50)
    assert_array_equal(a, b)
    assert_array_equal(a, c)
    assert not np.array_equal(a, d)


@pytest.mark.parametrize("family, one, many", [
    ("normal", (3,), (5, 3)), ("laplace", (3,), (5, 3)), ("mvn spherical", (3, 2), (5, 3, 2)),
    ("mvn diag", (3, 2), (5, 3, 2)), ("mvn full", (3, 2), (5, 3, 2)), ("mixture", (3,), (5, 3)),
    ("categorical", (3,), (5, 3)),
])
def test_sample_shapes(family, one, many):
    dist = _families()[family]()
    assert dist.sample(random_state=0).shape == one
    assert dist.sample(random_state=0, size=5).shape == many
    assert dist.sample(random_state=0, size=1).shape == (1,) + one


def test_mvn_mixture_sample_shape():
    mx = Mixture([0.5, 0.5], [MultivariateNormal(np.zeros((3, 2)), 1.0),
                              MultivariateNormal(np.ones((3, 2)), [[1.0, 2.0]] * 3)])
    assert mx.sample(random_state=0).shape == (3, 2)
    assert mx.sample(random_state=0, size=4).shape == (4, 3, 2)


N_DRAWS = 200_000


def test_normal_sample_moments():
    loc, scale = np.array([0.0, -3.0, 10.0]), np.array([1.0, 0.2, 4.0])
    Z = Normal(loc, scale).sample(random_state=10, size=N_DRAWS)
    assert np.all(np.abs(Z.mean(0) - loc) < mc_tol(scale, N_DRAWS))
    # Var of the sample variance of a normal: 2 s^4 / N
    assert np.all(np.abs(Z.var(0) - scale ** 2) < mc_tol(scale ** 2 * math.sqrt(2.0), N_DRAWS))


def test_normal_zero_scale_samples_are_the_location():
    Z = Normal([1.5, -2.0], [0.0, 0.0]).sample(random_state=0, size=10)
    assert_array_equal(Z, np.tile([1.5, -2.0], (10, 1)))


def test_laplace_sample_moments():
    loc, b = np.array([0.0, 2.0, -1.0]), np.array([1.0, 0.3, 2.5])
    Z = Laplace(loc, b).sample(random_state=11, size=N_DRAWS)
    assert np.all(np.abs(Z.mean(0) - loc) < mc_tol(math.sqrt(2.0) * b, N_DRAWS))
    # variance 2 b^2; fourth central moment 24 b^4, so Var(sample variance) = 20 b^4 / N
    assert np.all(np.abs(Z.var(0) - 2.0 * b ** 2) < mc_tol(math.sqrt(20.0) * b ** 2, N_DRAWS))
    # median absolute deviation from the location of a Laplace law is b log 2
    mad = np.median(np.abs(Z - loc), axis=0)
    assert_allclose(mad, b * math.log(2.0), rtol=0.02)


@pytest.mark.parametrize("kind", ["spherical", "diag", "full"])
def test_mvn_sample_mean_and_covariance(kind):
    rng = np.random.default_rng(12)
    n, d = 2, 3
    mean = rng.normal(size=(n, d))
    if kind == "spherical":
        cov = np.array([0.5, 2.0])
    elif kind == "diag":
        cov = rng.uniform(0.2, 2.0, size=(n, d))
    else:
        cov = np.stack([random_spd(rng, d) for _ in range(n)])
    p = MultivariateNormal(mean, cov)
    S = full_cov(p)
    Z = p.sample(random_state=13, size=N_DRAWS)
    for i in range(n):
        sd_mean = np.sqrt(np.diag(S[i]))
        assert np.all(np.abs(Z[:, i].mean(0) - mean[i]) < mc_tol(sd_mean, N_DRAWS))
        C = np.cov(Z[:, i].T)
        # Var of a sample covariance entry of a normal: (S_kk S_ll + S_kl^2) / N
        se = np.sqrt(np.outer(np.diag(S[i]), np.diag(S[i])) + S[i] ** 2)
        assert np.all(np.abs(C - S[i]) < mc_tol(se, N_DRAWS)), (C, S[i])


def test_mixture_sampling_frequencies_and_moments():
    W = np.array([[0.2, 0.5, 0.3], [0.6, 0.0, 0.4]])
    comps = [Normal([0.0, 0.0], [1.0, 0.5]), Normal([50.0, 50.0], 1.0), Normal([-50.0, -50.0], 2.0)]
    mx = Mixture(W, comps)
    Z = mx.sample(random_state=14, size=N_DRAWS)
    centres = np.array([0.0, 50.0, -50.0])
    which = np.abs(Z[..., None] - centres).argmin(-1)  # components are 25+ sd apart
    for i in range(2):
        freq = np.bincount(which[:, i], minlength=3) / N_DRAWS
        se = np.sqrt(W[i] * (1 - W[i]) / N_DRAWS)
        assert np.all(np.abs(freq - W[i]) <= 4 * se + 1e-12), (freq, W[i])
    assert np.all(which[:, 1] != 1)  # zero weight never drawn
    # mean and variance by the laws of total expectation / variance
    m = W @ centres
    sd = np.array([[1.0, 1.0, 2.0], [0.5, 1.0, 2.0]])
    v = (W * (sd ** 2 + centres ** 2)).sum(1) - m ** 2
    assert np.all(np.abs(Z.mean(0) - m) < mc_tol(np.sqrt(v), N_DRAWS))
    assert_allclose(mx.mean, m, rtol=1e-12)


def test_categorical_sampling_frequencies_and_labels():
    P = np.array([[0.1, 0.6, 0.3, 0.0], [0.25, 0.25, 0.25, 0.25]])
    classes = np.array(["cat", "dog", "emu", "fox"])
    Z = Categorical(P, classes=classes).sample(random_state=15, size=N_DRAWS)
    assert Z.dtype.kind == "U"
    assert set(np.unique(Z)) <= set(classes)
    for i in range(2):
        freq = np.array([(Z[:, i] == c).mean() for c in classes])
        se = np.sqrt(P[i] * (1 - P[i]) / N_DRAWS)
        assert np.all(np.abs(freq - P[i]) <= 4 * se + 1e-12), (freq, P[i])
    assert not np.any(Z[:, 0] == "fox")
    # default classes are the column indices
    Zi = Categorical(P).sample(random_state=15, size=100)
    assert set(np.unique(Zi)) <= {0, 1, 2, 3}


# ============================================================================================
# 3. 2-Wasserstein distances


def test_w2_normal_exact():
    m1, s1 = np.array([0.0, 1.0, -2.0, 3.0]), np.array([1.0, 0.0, 2.0, 0.5])
    m2, s2 = np.array([3.0, 1.0, 0.5, 3.0]), np.array([5.0, 1.0, 0.0, 0.5])
    got = wasserstein_distance(Normal(m1, s1), Normal(m2, s2))
    assert_allclose(got, np.sqrt((m1 - m2) ** 2 + (s1 - s2) ** 2), rtol=1e-15, atol=0)
    assert got[-1] == 0.0


def test_w2_laplace_exact():
    m1, b1 = np.array([0.0, 1.0, -2.0]), np.array([1.0, 0.2, 2.0])
    m2, b2 = np.array([3.0, 1.0, 0.5]), np.array([5.0, 1.0, 2.0])
    assert_allclose(wasserstein_distance(Laplace(m1, b1), Laplace(m2, b2)),
                    np.sqrt((m1 - m2) ** 2 + 2 * (b1 - b2) ** 2), rtol=1e-15)


@pytest.mark.parametrize("kind", ["spherical", "diag", "full"])
def test_w2_mvn_fill_is_ten_times_the_univariate_value(kind):
    m1, v1, m2, v2 = 0.3, 2.0, -1.2, 0.5
    d = 10

    def make(m, v):
        if kind == "spherical":
            return MultivariateNormal(np.full((1, d), m), [v])
        if kind == "diag":
            return MultivariateNormal(np.full((1, d), m), np.full((1, d), v))
        return MultivariateNormal(np.full((1, d), m), (v * np.eye(d))[None])

    one_d = (m1 - m2) ** 2 + (math.sqrt(v1) - math.sqrt(v2)) ** 2
    assert_allclose(wasserstein_distance(make(m1, v1), make(m2, v2)) ** 2, 10 * one_d, rtol=1e-12)


def bures_reference(m1, S1, m2, S2):
    r = linalg.sqrtm(S2)
    cross = linalg.sqrtm(r @ S1 @ r)
    return float(np.sum((m1 - m2) ** 2) + np.trace(S1) + np.trace(S2) - 2 * np.trace(cross).real)


def test_w2_mvn_bures_noncommuting_against_sqrtm():
    rng = np.random.default_rng(20)
    n, d = 5, 3
    mean1, mean2 = rng.normal(size=(n, d)), rng.normal(size=(n, d))
    S1 = np.stack([random_spd(rng, d) for _ in range(n)])
    S2 = np.stack([random_spd(rng, d, 2.0) for _ in range(n)])
    p, q = MultivariateNormal(mean1, S1), MultivariateNormal(mean2, S2)
    assert not p.commuting()
    ref = np.sqrt([bures_reference(mean1[i], S1[i], mean2[i], S2[i]) for i in range(n)])
    assert_allclose(wasserstein_distance(p, q), ref, rtol=1e-9)
    # the Frobenius formula is not the Bures distance here (guards a silent "commuting" path)
    frob = np.sqrt([np.sum((mean1[i] - mean2[i]) ** 2)
                    + np.sum((linalg.sqrtm(S1[i]).real - linalg.sqrtm(S2[i]).real) ** 2)
                    for i in range(n)])
    assert np.max(np.abs(frob - ref)) > 1e-3
    # pairwise: against sqrtm for every pair, and symmetric
    D = pairwise_wasserstein(p, q)
    for i in range(n):
        for j in range(n):
            assert_allclose(D[i, j], math.sqrt(bures_reference(mean1[i], S1[i], mean2[j], S2[j])),
                            rtol=1e-9)
    assert_allclose(pairwise_wasserstein(q, p), D.T, rtol=1e-10)


def test_w2_mvn_commuting_full_equals_frobenius_formula():
    rng = np.random.default_rng(21)
    n, d = 4, 3
    U = rotation(rng, d)
    eig = rng.uniform(0.1, 3.0, size=(n, d))
    S = np.einsum("ij,nj,kj->nik", U, eig, U)
    mean = rng.normal(size=(n, d))
    p = MultivariateNormal(mean, S)
    assert p.commuting()
    D2 = pairwise_wasserstein(p) ** 2
    for i in range(n):
        for j in range(n):
            frob = np.sum((mean[i] - mean[j]) ** 2) + np.sum((np.sqrt(eig[i]) - np.sqrt(eig[j])) ** 2)
            assert_allclose(D2[i, j], frob, rtol=1e-9, atol=1e-12)
            assert_allclose(D2[i, j], bures_reference(mean[i], S[i], mean[j], S[j]), rtol=1e-8,
                            atol=1e-10)


def test_w2_between_covariance_types():
    # spherical, diagonal and full representations of the same laws
    rng = np.random.default_rng(22)
    mean = rng.normal(size=(3, 3))
    var = rng.uniform(0.5, 2.0, size=3)
    sph = MultivariateNormal(mean, var)
    diag = MultivariateNormal(mean, np.repeat(var[:, None], 3, axis=1))
    full = MultivariateNormal(mean, var[:, None, None] * np.eye(3))
    other = MultivariateNormal(rng.normal(size=(3, 3)), rng.uniform(0.5, 2.0, size=(3, 3)))
    ref = np.array([[bures_reference(mean[i], full_cov(sph)[i], other.mean[j], full_cov(other)[j])
                     for j in range(3)] for i in range(3)])
    other_full = MultivariateNormal(other.mean, full_cov(other))
    # (spherical x diagonal is covered by test_w2_mvn_spherical_vs_diagonal)
    for p, q in [(diag, other), (full, other), (sph, other_full), (diag, other_full),
                 (full, other_full)]:
        assert_allclose(pairwise_wasserstein(p, q) ** 2, ref, rtol=1e-9)
        assert_allclose(pairwise_wasserstein(q, p) ** 2, ref.T, rtol=1e-9)
    assert_allclose(wasserstein_distance(full, diag), 0.0, atol=1e-7)
    assert_allclose(wasserstein_distance(sph, full), 0.0, atol=1e-7)


def test_w2_mvn_spherical_vs_diagonal():
    # Distances between a spherical and a diagonal batch (same law family, d = 3).
    sph = MultivariateNormal(np.zeros((2, 3)), [1.0, 2.0])
    diag = MultivariateNormal(np.ones((2, 3)), [[1.0, 2.0, 3.0], [0.5, 0.5, 0.5]])
    ref = np.array([[bures_reference(np.zeros(3), full_cov(sph)[i], np.ones(3), full_cov(diag)[j])
                     for j in range(2)] for i in range(2)])
    assert_allclose(pairwise_wasserstein(sph, diag) ** 2, ref, rtol=1e-9)
    assert_allclose(pairwise_wasserstein(diag, sph) ** 2, ref.T, rtol=1e-9)


def test_w2_single_component_mixture_equals_component():
    rng = np.random.default_rng(23)
    for comp_p, comp_q in [
        (Normal(rng.normal(size=4), rng.uniform(0.1, 2, 4)), Normal(rng.normal(size=4), rng.uniform(0.1, 2, 4))),
        (Laplace(rng.normal(size=4), rng.uniform(0.1, 2, 4)), Laplace(rng.normal(size=4), rng.uniform(0.1, 2, 4))),
        (MultivariateNormal(rng.normal(size=(4, 2)), np.stack([random_spd(rng, 2) for _ in range(4)])),
         MultivariateNormal(rng.normal(size=(4, 2)), np.stack([random_spd(rng, 2) for _ in range(4)]))),
    ]:
        mp, mq = Mixture([1.0], [comp_p]), Mixture([1.0], [comp_q])
        assert_allclose(wasserstein_distance(mp, mq), wasserstein_distance(comp_p, comp_q), rtol=1e-12)
        assert_allclose(pairwise_wasserstein(mp, mq), pairwise_wasserstein(comp_p, comp_q), rtol=1e-12)


def _component_w2sq(a, b):
    """Squared W2 between two 1-D normals (m, s), independent formula."""
    return (a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2


def _mw2_linprog(wa, A, wb, B):
    """MW2 by an independent LP: all marginal constraints, HiGHS."""
    M, K = len(wa), len(wb)
    C = np.array([[_component_w2sq(A[k], B[l]) for l in range(K)] for k in range(M)])
    A_eq = np.zeros((M + K, M * K))
    for k in range(M):
        A_eq[k, k * K:(k + 1) * K] = 1.0
    for l in range(K):
        A_eq[M + l, l::K] = 1.0
    res = optimize.linprog(C.ravel(), A_eq=A_eq, b_eq=np.concatenate([wa, wb]), bounds=(0, None),
                           method="highs")
    assert res.status == 0
    return math.sqrt(max(res.fun, 0.0))


def _mixture_of_normals(weights, params):
    """Mixture with rows given by weights (n, M) and params (n, M, 2) = (loc, scale)."""
    params = np.asarray(params)
    return Mixture(weights, [Normal(params[:, k, 0], params[:, k, 1]) for k in range(params.shape[1])])


@pytest.mark.parametrize("M, K", [(2, 3), (3, 3), (4, 2)])
def test_mixture_w2_unequal_weights_against_linprog(M, K):
    rng = np.random.default_rng(30 + M + K)
    n = 4
    Wa, Wb = rng.dirichlet(np.ones(M), size=n), rng.dirichlet(np.ones(K), size=n)
    Pa = np.stack([rng.normal(size=(n, M)) * 2, rng.uniform(0.1, 2, size=(n, M))], axis=-1)
    Pb = np.stack([rng.normal(size=(n, K)) * 2, rng.uniform(0.1, 2, size=(n, K))], axis=-1)
    a, b = _mixture_of_normals(Wa, Pa), _mixture_of_normals(Wb, Pb)
    ref = [_mw2_linprog(Wa[i], Pa[i], Wb[i], Pb[i]) for i in range(n)]
    assert_allclose(wasserstein_distance(a, b), ref, rtol=1e-7, atol=1e-9)
    assert_allclose(wasserstein_distance(b, a), ref, rtol=1e-7, atol=1e-9)
    D = pairwise_wasserstein(a, b)
    for i, j in [(0, 3), (2, 1)]:
        assert_allclose(D[i, j], _mw2_linprog(Wa[i], Pa[i], Wb[j], Pb[j]), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("M", [3, 7])
def test_mixture_w2_equal_weights_against_enumeration(M):
    rng = np.random.default_rng(40 + M)
    n = 3
    Pa = np.stack([rng.normal(size=(n, M)) * 2, rng.uniform(0.1, 2, size=(n, M))], axis=-1)
    Pb = np.stack([rng.normal(size=(n, M)) * 2, rng.uniform(0.1, 2, size=(n, M))], axis=-1)
    W = np.full(M, 1.0 / M)
    a, b = _mixture_of_normals(W, Pa), _mixture_of_normals(W, Pb)
    ref = []
    for i in range(n):
        C = np.array([[_component_w2sq(Pa[i, k], Pb[i, l]) for l in range(M)] for k in range(M)])
        best = min(sum(C[k, perm[k]] for k in range(M)) for perm in itertools.permutations(range(M)))
        ref.append(math.sqrt(best / M))
    assert_allclose(wasserstein_distance(a, b), ref, rtol=1e-10)
    # the optimum is not the identity coupling (the test would not see a naive pairing otherwise)
    naive = [math.sqrt(np.mean([_component_w2sq(Pa[i, k], Pb[i, k]) for k in range(M)]))
             for i in range(n)]
    assert np.max(np.array(naive) - np.array(ref)) > 1e-3


def test_mixture_w2_is_invariant_to_component_order():
    a = Mixture([0.2, 0.8], [Normal([0.0], [1.0]), Normal([3.0], [0.5])])
    a_swapped = Mixture([0.8, 0.2], [Normal([3.0], [0.5]), Normal([0.0], [1.0])])
    b = Mixture([0.5, 0.5], [Normal([1.0], [2.0]), Normal([-1.0], [1.0])])
    assert_allclose(wasserstein_distance(a, b), wasserstein_distance(a_swapped, b), rtol=1e-9)
    assert_allclose(wasserstein_distance(a, a_swapped), 0.0, atol=1e-7)


def test_categorical_w2_is_sqrt_tv():
    rng = np.random.default_rng(50)
    P, Q = rng.dirichlet(np.ones(4), size=6), rng.dirichlet(np.ones(4), size=6)
    tv = 0.5 * np.abs(P - Q).sum(1)
    assert_allclose(wasserstein_distance(Categorical(P), Categorical(Q)), np.sqrt(tv), rtol=1e-12)
    assert_allclose(wasserstein_distance(Categorical([[1.0, 0.0]]), Categorical([[0.0, 1.0]])), [1.0])


@pytest.mark.parametrize("family", ["normal", "laplace", "mvn spherical", "mvn diag", "mvn full",
                                    "mixture", "categorical"])
def test_pairwise_equals_rowwise_and_symmetric(family):
    p = _families()[family]()
    D = pairwise_wasserstein(p)
    assert D.shape == (3, 3)
    assert_allclose(D, D.T, rtol=1e-9, atol=1e-12)
    assert_allclose(np.diag(D), 0.0, atol=1e-7)
    for i in range(3):
        for j in range(3):
            assert_allclose(wasserstein_distance(p[i], p[j]), [D[i, j]], rtol=1e-9, atol=1e-12)
    # one-row broadcasting
    assert_allclose(wasserstein_distance(p, p[1]), D[:, 1], rtol=1e-9, atol=1e-12)
    assert_allclose(wasserstein_distance(p[1], p), D[1, :], rtol=1e-9, atol=1e-12)


def test_w2_errors():
    with pytest.raises(TypeError):
        wasserstein_distance(Normal([0.0], 1.0), Laplace([0.0], 1.0))
    with pytest.raises(ValueError):
        wasserstein_distance(MultivariateNormal([[0.0]], 1.0), MultivariateNormal([[0.0, 0.0]], 1.0))
    with pytest.raises(ValueError):
        wasserstein_distance(Normal([0.0, 1.0], 1.0), Normal([0.0, 1.0, 2.0], 1.0))
    with pytest.raises(ValueError):
        wasserstein_distance(Categorical([[0.5, 0.5]]), Categorical([[0.5, 0.5]], classes=[1, 2]))
    with pytest.raises(TypeError):
        wasserstein_distance(Mixture([1.0], [Normal([0.0], 1.0)]), Mixture([1.0], [Laplace([0.0], 1.0)]))


# ============================================================================================
# 4. closed-form expectations against quadrature / Monte Carlo

NORMAL_CASES = [  # (loc, scale, y)
    (0.0, 1.0, 0.0), (0.3, 0.5, 1.7), (-1.0, 2.0, 0.4), (2.0, 0.0, 1.0), (0.5, 1e-3, 0.5),
]
NORMAL_PAIRS = [  # (loc, scale, loc', scale')
    (0.0, 1.0, 0.0, 1.0), (0.3, 0.5, -1.1, 1.5), (1.0, 0.0, -0.5, 0.8), (1.0, 0.0, -0.5, 0.0),
]
TARGET_KERNELS = [GaussianKernel(1.0), GaussianKernel(0.6), ExponentialKernel(1.0),
                  ExponentialKernel(0.7), ExponentialKernel(1.3, metric="tv")]
KIDS = ["gauss1", "gauss0.6", "exp1", "exp0.7", "tv1.3"]


@pytest.mark.parametrize("kernel", TARGET_KERNELS, ids=KIDS)
def test_normal_e1_against_quadrature(kernel):
    loc, scale, y = map(np.array, zip(*NORMAL_CASES))
    got = Normal(loc, scale).expected_kernel(kernel, y)
    ref = [ref_e1(Ref1D("normal", m, s), t, kernel) for m, s, t in NORMAL_CASES]
    assert_allclose(got, ref, rtol=1e-9, atol=1e-13)


@pytest.mark.parametrize("kernel", TARGET_KERNELS, ids=KIDS)
def test_normal_e2_against_quadrature(kernel):
    m1, s1, m2, s2 = map(np.array, zip(*NORMAL_PAIRS))
    got = Normal(m1, s1).expected_kernel_pair(kernel, Normal(m2, s2))
    ref = [ref_e2(Ref1D("normal", a, b), Ref1D("normal", c, d), kernel) for a, b, c, d in NORMAL_PAIRS]
    assert_allclose(got, ref, rtol=1e-9, atol=1e-13)
    # other=None: two independent draws from the same row
    got_self = Normal(m1, s1).expected_kernel_pair(kernel)
    ref_self = [ref_e2(Ref1D("normal", a, b), Ref1D("normal", a, b), kernel) for a, b, _, _ in NORMAL_PAIRS]
    assert_allclose(got_self, ref_self, rtol=1e-9, atol=1e-13)


@pytest.mark.parametrize("kernel", [GaussianKernel(0.6), ExponentialKernel(0.7)], ids=["gauss", "exp"])
def test_normal_e2_against_nested_quadrature(kernel):
    # fully independent of the sum-of-normals shortcut of ref_e2
    m1, s1, m2, s2 = 0.3, 0.5, -1.1, 1.5
    ref = ref_e2(Ref1D("normal", m1, s1), Ref1D("normal", m2, s2), kernel, nested=True)
    assert_allclose(Normal([m1], [s1]).expected_kernel_pair(kernel, Normal([m2], [s2])), [ref],
                    rtol=1e-9)


def test_normal_log_pdf():
    from scipy.stats import norm

    loc, scale, y = np.array([0.0, 1.0, -2.0]), np.array([1.0, 2.0, 0.1]), np.array([0.5, -3.0, -2.05])
    assert_allclose(Normal(loc, scale).log_pdf(y), norm.logpdf(y, loc, scale), rtol=1e-13)


def test_normal_log_pdf_of_a_point_prediction():
    # scale = 0: the limit of the log-density is -inf off the atom and +inf on it (never NaN, and
    # no numpy RuntimeWarning)
    got = Normal([0.0, 1.0], [0.0, 0.0]).log_pdf([1.0, 1.0])
    assert got[0] == -np.inf
    assert got[1] == np.inf


def test_normal_docstring_values_exact():
    # E exp(-Z^2/2) = 1/sqrt(2), E exp(-(Z-Z')^2/2) = 1/sqrt(3) for standard normals
    assert_allclose(Normal([0.0], [1.0]).expected_kernel(GaussianKernel(1.0), [0.0]), [2 ** -0.5],
                    rtol=1e-14)
    assert_allclose(Normal([0.0], [1.0]).expected_kernel_pair(GaussianKernel(1.0)), [3 ** -0.5],
                    rtol=1e-14)


@pytest.mark.parametrize("metric", ["euclidean", "tv"])
def test_normal_exponential_kernel_zero_scale_limit(metric):
    k = ExponentialKernel(0.8, metric=metric)
    rate = (0.5 if metric == "tv" else 1.0) / 0.8
    y = np.array([0.3, -1.0, 2.0])
    loc = np.array([0.0, 0.5, 2.0])
    exact = np.exp(-rate * np.abs(loc - y))
    assert_allclose(Normal(loc, 0.0).expected_kernel(k, y), exact, rtol=1e-14)
    assert_allclose(Normal(loc, 1e-9).expected_kernel(k, y), exact, rtol=1e-7)
    # continuity in the scale: E k is within O(scale) (kink at y) of the point value
    for s in [1e-6, 1e-4]:
        got = Normal(loc, s).expected_kernel(k, y)
        assert np.all(np.abs(got - exact) < 2 * rate * s)
    assert_allclose(Normal(loc, 0.0).expected_kernel_pair(k, Normal(y, 0.0)), exact, rtol=1e-14)


@pytest.mark.parametrize("delta, s, gamma", [
    (0.0, 1.0, 1.0), (0.7, 0.3, 2.0), (-2.0, 1.5, 0.5), (3.0, 0.05, 4.0), (0.0, 5.0, 3.0),
    (-10.0, 2.0, 1.5), (1e-3, 1e-6, 1.0),
])
def test_gauss_abs_mgf_against_quadrature(delta, s, gamma):
    got = _gauss_abs_mgf(np.array([delta]), np.array([s]), gamma)[0]
    ref = quad_line(lambda w: normal_pdf(delta, s)(w) * math.exp(-gamma * abs(w)), [0.0, delta]) \
        if s > 1e-4 else math.exp(-gamma * abs(delta))
    assert_allclose(got, ref, rtol=1e-9 if s > 1e-4 else 1e-5)


def test_gauss_abs_mgf_accepts_scalars():
    # a broadcasting formula (like normal_gauss_log_e1 and laplace_e1) must accept 0-d input
    assert_allclose(_gauss_abs_mgf(0.0, 1.0, 1.0), _gauss_abs_mgf(np.zeros(1), np.ones(1), 1.0)[0],
                    rtol=1e-15)
    assert_allclose(_gauss_abs_mgf(np.float64(0.5), np.float64(0.0), 2.0), math.exp(-1.0), rtol=1e-15)


def test_gauss_abs_mgf_broadcasts_and_has_zero_scale_limit():
    delta = np.array([[-1.0], [0.0], [2.0]])
    s = np.array([0.0, 0.5, 1.0])
    got = _gauss_abs_mgf(delta, s, 1.3)
    assert got.shape == (3, 3)
    assert_allclose(got[:, 0], np.exp(-1.3 * np.abs(delta[:, 0])), rtol=1e-15)
    for i in range(3):
        for j in range(1, 3):
            assert_allclose(got[i, j], _gauss_abs_mgf(delta[i], s[j:j + 1], 1.3), rtol=1e-15)


@pytest.mark.parametrize("loc, var, y, gamma", [(0.0, 1.0, 0.0, 0.5), (1.0, 0.25, -0.5, 2.0),
                                                (-3.0, 4.0, 1.0, 0.1), (2.0, 0.0, 1.0, 0.7)])
def test_normal_gauss_log_e1_against_quadrature(loc, var, y, gamma):
    got = normal_gauss_log_e1(loc, var, y, gamma)
    if var == 0:
        ref = -gamma * (loc - y) ** 2
    else:
        ref = math.log(quad_line(lambda z: normal_pdf(loc, math.sqrt(var))(z)
                                 * math.exp(-gamma * (z - y) ** 2), [loc, y]))
    assert_allclose(got, ref, rtol=1e-10, atol=1e-13)


# -- multivariate normals, Gaussian target kernel


def _mvn_case(kind, d, rng):
    n = 3
    mean = rng.normal(size=(n, d))
    if kind == "spherical":
        cov = rng.uniform(0.2, 1.5, size=n)
    elif kind == "diag":
        cov = rng.uniform(0.1, 1.5, size=(n, d))
    elif kind == "commuting":
        U = rotation(rng, d)
        cov = np.einsum("ij,nj,kj->nik", U, rng.uniform(0.1, 1.5, size=(n, d)), U)
    else:
        cov = np.stack([random_spd(rng, d, 0.8) for _ in range(n)])
    return MultivariateNormal(mean, cov)


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("kind", ["spherical", "diag", "commuting", "full"])
@pytest.mark.parametrize("ls", [1.0, 0.7])
def test_mvn_gauss_e1_e2_against_quadrature(kind, d, ls):
    rng = np.random.default_rng(60 + d)
    k = GaussianKernel(ls)
    p, q = _mvn_case(kind, d, rng), _mvn_case(kind, d, rng)
    if kind == "commuting":
        assert p.commuting()
    if kind == "full":
        assert not p.commuting()
    y = rng.normal(size=(3, d))
    Sp, Sq = full_cov(p), full_cov(q)
    got = p.expected_kernel(k, y)
    ref = [rot_e1_gauss(p.mean[i], Sp[i], y[i], k) for i in range(3)]
    assert_allclose(got, ref, rtol=1e-9)
    got2 = p.expected_kernel_pair(k, q)
    got_self = p.expected_kernel_pair(k)
    ref2 = [rot_e2_gauss(p.mean[i], Sp[i], q.mean[i], Sq[i], k) for i in range(3)]
    ref_self = [rot_e2_gauss(p.mean[i], Sp[i], p.mean[i], Sp[i], k) for i in range(3)]
    assert_allclose(got2, ref2, rtol=1e-9)
    assert_allclose(got_self, ref_self, rtol=1e-9)


def test_mvn_gauss_e2_between_covariance_types():
    rng = np.random.default_rng(64)
    k = GaussianKernel(0.9)
    kinds = ["spherical", "diag", "commuting", "full"]
    dists = {kd: _mvn_case(kd, 2, rng) for kd in kinds}
    for a, b in itertools.permutations(kinds, 2):
        p, q = dists[a], dists[b]
        ref = [rot_e2_gauss(p.mean[i], full_cov(p)[i], q.mean[i], full_cov(q)[i], k) for i in range(3)]
        assert_allclose(p.expected_kernel_pair(k, q), ref, rtol=1e-9, err_msg=f"{a} x {b}")


def test_mvn_gauss_d3_full_matches_monte_carlo():
    # an independent brute-force Monte Carlo (the spec's §3.9 style check)
    rng = np.random.default_rng(65)
    d, m = 3, 400_000
    S = random_spd(rng, d)
    mean, y = rng.normal(size=d), rng.normal(size=d)
    k = GaussianKernel(1.0 / math.sqrt(1.4))  # gamma = 0.7
    p = MultivariateNormal(mean[None], S[None])
    Z = rng.multivariate_normal(mean, S, size=m)
    vals = np.exp(-0.7 * ((Z - y) ** 2).sum(1))
    assert abs(p.expected_kernel(k, y[None])[0] - vals.mean()) < mc_tol(vals.std(), m)
    Z2 = rng.multivariate_normal(mean, S, size=m)
    vals2 = np.exp(-0.7 * ((Z - Z2) ** 2).sum(1))
    assert abs(p.expected_kernel_pair(k)[0] - vals2.mean()) < mc_tol(vals2.std(), m)


# -- diagonal multivariate normals, exponential kernel with the TV metric


@pytest.mark.parametrize("cov_kind", ["spherical", "diag"])
def test_mvn_diag_exponential_tv_against_coordinatewise_quadrature(cov_kind):
    rng = np.random.default_rng(66)
    k = ExponentialKernel(0.9, metric="tv")
    k1 = ExponentialKernel(0.9, metric="tv")  # 1-D: exp(-0.5 |d| / 0.9)
    n, d = 2, 3
    mean, y = rng.normal(size=(n, d)), rng.normal(size=(n, d))
    cov = rng.uniform(0.1, 2.0, size=n) if cov_kind == "spherical" else rng.uniform(0.1, 2.0, size=(n, d))
    p = MultivariateNormal(mean, cov)
    var = p.variance
    q = MultivariateNormal(rng.normal(size=(n, d)), rng.uniform(0.1, 2.0, size=(n, d)))
    # independent coordinates and a product kernel: the expectation is the product of 1-D ones
    ref1 = [np.prod([ref_e1(Ref1D("normal", mean[i, c], math.sqrt(var[i, c])), y[i, c], k1)
                     for c in range(d)]) for i in range(n)]
    assert_allclose(p.expected_kernel(k, y), ref1, rtol=1e-9)
    ref2 = [np.prod([ref_e2(Ref1D("normal", mean[i, c], math.sqrt(var[i, c])),
                            Ref1D("normal", q.mean[i, c], math.sqrt(q.cov[i, c])), k1)
                     for c in range(d)]) for i in range(n)]
    assert_allclose(p.expected_kernel_pair(k, q), ref2, rtol=1e-9)


def test_mvn_diag_vs_full_exponential_tv_pair():
    # A full covariance that happens to be diagonal describes the same law as the diagonal one, so
    # E k(Z, Z') must not depend on the representation (TV-exponential kernel).
    k = ExponentialKernel(1.0, metric="tv")
    p = MultivariateNormal([[0.0, 0.0]], [[1.0, 2.0]])
    q_diag = MultivariateNormal([[1.0, 0.5]], [[0.5, 1.5]])
    q_full = MultivariateNormal([[1.0, 0.5]], [[[0.5, 0.0], [0.0, 1.5]]])
    k1 = ExponentialKernel(1.0, metric="tv")
    ref = ref_e2(Ref1D("normal", 0.0, 1.0), Ref1D("normal", 1.0, math.sqrt(0.5)), k1) * \
        ref_e2(Ref1D("normal", 0.0, math.sqrt(2.0)), Ref1D("normal", 0.5, math.sqrt(1.5)), k1)
    assert_allclose(p.expected_kernel_pair(k, q_diag), [ref], rtol=1e-9)
    # closed form or Monte Carlo (20 000 draws, kernel values in [0, 1]: sd <= 1/2)
    assert_allclose(p.expected_kernel_pair(k, q_full, n_mc_samples=20000,
                                           random_state=np.random.default_rng(0)), [ref],
                    rtol=0, atol=mc_tol(0.5, 20000))
    assert_allclose(q_full.expected_kernel_pair(k, p, n_mc_samples=20000,
                                                random_state=np.random.default_rng(0)), [ref],
                    rtol=0, atol=mc_tol(0.5, 20000))


# -- Laplace predictions, exponential target kernel

G = 1.3
LAPLACE_TABLE = [  # seed-000 §3.9 (gamma = 1.3); the distances z were recovered from the values
    ("e1", 0.5, None, 0.8, 0.38479991),
    ("e1", 1 / G, None, 0.7, 0.38441063),
    ("e2", 0.5, 0.9, 0.8, 0.32831514),
    ("e2", 1 / G, 1 / G, 0.8, 0.31817990),
    ("e2", 0.6, 0.6, 0.8, 0.35157676),
    ("e2", 1 / G, 0.4, 0.7, 0.36831017),
    ("e2", 0.4, 1 / G, 0.7, 0.36831017),  # mirrored
]


@pytest.mark.parametrize("kind, b1, b2, z, value", LAPLACE_TABLE)
def test_laplace_spec_table(kind, b1, b2, z, value):
    k = ExponentialKernel(1.0 / G)
    if kind == "e1":
        got = Laplace([0.0], [b1]).expected_kernel(k, [z])[0]
        direct = laplace_e1(0.0, b1, z, G)
        ref = ref_e1(Ref1D("laplace", 0.0, b1), z, k)
    else:
        got = Laplace([0.0], [b1]).expected_kernel_pair(k, Laplace([z], [b2]))[0]
        direct = laplace_e2(0.0, b1, z, b2, G)
        ref = ref_e2(Ref1D("laplace", 0.0, b1), Ref1D("laplace", z, b2), k)
        # the piecewise-exact inner expectation against plain nested quadrature
        assert_allclose(ref_e2(Ref1D("laplace", 0.0, b1), Ref1D("laplace", z, b2), k, nested=True),
                        ref, rtol=1e-10)
    assert abs(ref - value) < 1.5e-8  # the table itself (8 decimals) against our quadrature
    assert_allclose(got, ref, rtol=1e-9)
    assert_allclose(direct, ref, rtol=1e-9)


@pytest.mark.parametrize("gamma", [1.3, 0.7, 2.5])
@pytest.mark.parametrize("case", ["generic", "both 1/gamma", "equal", "first 1/gamma", "second 1/gamma"])
def test_laplace_e2_five_cases_against_quadrature(case, gamma):
    g = gamma
    b1, b2 = {"generic": (0.5, 0.9), "both 1/gamma": (1 / g, 1 / g), "equal": (0.6, 0.6),
              "first 1/gamma": (1 / g, 0.4), "second 1/gamma": (0.4, 1 / g)}[case]
    k = ExponentialKernel(1.0 / g)
    for m1, m2 in [(0.0, 0.8), (1.0, -0.5), (0.3, 0.3)]:
        ref = ref_e2(Ref1D("laplace", m1, b1), Ref1D("laplace", m2, b2), k)
        assert_allclose(laplace_e2(m1, b1, m2, b2, g), ref, rtol=1e-8)
        assert_allclose(Laplace([m1], [b1]).expected_kernel_pair(k, Laplace([m2], [b2])), [ref],
                        rtol=1e-8)


@pytest.mark.parametrize("gamma", [1.3, 0.7])
@pytest.mark.parametrize("b", [0.2, 1.0, "1/gamma", 3.0])
def test_laplace_e1_against_quadrature(b, gamma):
    b = 1.0 / gamma if b == "1/gamma" else b
    k = ExponentialKernel(1.0 / gamma)
    locs = np.array([0.0, 0.0, 1.0, -2.0])
    ys = np.array([0.0, 0.8, -0.3, 5.0])
    got = Laplace(locs, b).expected_kernel(k, ys)
    ref = [ref_e1(Ref1D("laplace", m, b), y, k) for m, y in zip(locs, ys)]
    assert_allclose(got, ref, rtol=1e-9)
    assert_allclose(laplace_e1(locs, b, ys, gamma), ref, rtol=1e-9)


def test_laplace_helpers_broadcast_parameter_arrays():
    # The helpers are documented as broadcasting formulas: scalar scales with vector locations.
    locs1, locs2 = np.array([0.0, 1.0]), np.array([0.5, 0.5])
    got1 = laplace_e1(locs1, 0.7, locs2, 1.3)
    assert_allclose(got1, [laplace_e1(a, 0.7, c, 1.3) for a, c in zip(locs1, locs2)], rtol=1e-15)
    got2 = laplace_e2(locs1, 0.7, locs2, 0.9, 1.3)
    assert_allclose(got2, [laplace_e2(a, 0.7, c, 0.9, 1.3) for a, c in zip(locs1, locs2)],
                    rtol=1e-15)


def test_laplace_e2_tile_broadcasting():
    rng = np.random.default_rng(70)
    m, b = rng.normal(size=4), rng.uniform(0.3, 2, size=4)
    T = laplace_e2(m[:, None], b[:, None], m[None, :], b[None, :], 1.1)
    assert T.shape == (4, 4)
    for i in range(4):
        for j in range(4):
            assert_allclose(T[i, j], laplace_e2(m[i], b[i], m[j], b[j], 1.1), rtol=1e-14)
    assert_allclose(T, T.T, rtol=1e-13)


def _near(delta, sign):
    return 1.0 + sign * delta


SINGULAR_DELTAS = [1e-9, 1e-7, 1e-5]


@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("delta", SINGULAR_DELTAS)
@pytest.mark.parametrize("where", [
    "e1: beta gamma ~ 1",
    "e2: beta gamma ~ 1, beta' generic",
    "e2: beta' gamma ~ 1, beta generic",
    "e2: beta ~ beta' generic",
    "e2: beta gamma ~ 1, beta' gamma = 1",
    "e2: beta = beta', gamma beta ~ 1",
])
def test_laplace_continuity_near_singular_set(where, delta, sign):
    g = G
    k = ExponentialKernel(1.0 / g)
    e = _near(delta, sign)
    z = 0.8
    if where.startswith("e1"):
        b = e / g
        ref = ref_e1(Ref1D("laplace", 0.0, b), z, k)
        got = laplace_e1(0.0, b, z, g)
    else:
        b1, b2 = {
            "e2: beta gamma ~ 1, beta' generic": (e / g, 0.5),
            "e2: beta' gamma ~ 1, beta generic": (0.5, e / g),
            "e2: beta ~ beta' generic": (0.6, 0.6 * e),
            "e2: beta gamma ~ 1, beta' gamma = 1": (e / g, 1 / g),
            "e2: beta = beta', gamma beta ~ 1": (e / g, e / g),
        }[where]
        ref = ref_e2(Ref1D("laplace", 0.0, b1), Ref1D("laplace", z, b2), k)
        got = laplace_e2(0.0, b1, z, b2, g)
    assert_allclose(got, ref, rtol=1e-7)


# -- mixtures: the full bilinear sum


def _mix_rows():
    W1 = np.array([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]])
    W2 = np.array([[0.7, 0.3], [0.25, 0.75]])
    P1 = [(0.0, 1.0), (1.5, 0.4), (-1.0, 2.0)]  # the same for both rows, shifted per row
    P2 = [(0.5, 0.7), (-2.0, 1.2)]
    return W1, W2, P1, P2


@pytest.mark.parametrize("family, kernel", [
    ("normal", GaussianKernel(1.0)), ("normal", ExponentialKernel(0.8)), ("laplace", ExponentialKernel(0.8)),
])
def test_mixture_expectations_are_the_full_bilinear_sum(family, kernel):
    W1, W2, P1, P2 = _mix_rows()
    shift = np.array([0.0, 0.7])
    Dist = Normal if family == "normal" else Laplace
    mx1 = Mixture(W1, [Dist(m + shift, s) for m, s in P1])
    mx2 = Mixture(W2, [Dist(m - shift, s) for m, s in P2])
    y = np.array([0.3, -0.4])

    def law(m, s):
        return Ref1D(family, m, s)

    for i in range(2):
        c1 = [law(m + shift[i], s) for m, s in P1]
        c2 = [law(m - shift[i], s) for m, s in P2]
        e1 = sum(W1[i, k] * ref_e1(c1[k], y[i], kernel) for k in range(3))
        E22 = np.array([[ref_e2(a, b, kernel) for b in c2] for a in c1])
        E11 = np.array([[ref_e2(a, b, kernel) for b in c1] for a in c1])
        e2 = W1[i] @ E22 @ W2[i]
        e2_self = W1[i] @ E11 @ W1[i]
        # the reference Julia code sums (k=1, all l) + (k>=2, l>=2), dropping (k>=2, l=1)
        julia = W1[i, 0] * (E22[0] @ W2[i]) + W1[i, 1:] @ E22[1:, 1:] @ W2[i, 1:]
        assert abs(julia - e2) > 1e-3  # the data can tell the two apart
        assert_allclose(mx1.expected_kernel(kernel, y)[i], e1, rtol=1e-8)
        assert_allclose(mx1.expected_kernel_pair(kernel, mx2)[i], e2, rtol=1e-8)
        assert_allclose(mx2.expected_kernel_pair(kernel, mx1)[i], e2, rtol=1e-8)
        assert_allclose(mx1.expected_kernel_pair(kernel)[i], e2_self, rtol=1e-8)


def test_mvn_mixture_with_mixed_covariance_types():
    rng = np.random.default_rng(71)
    k = GaussianKernel(0.8)
    comps = [_mvn_case("diag", 2, rng), _mvn_case("full", 2, rng), _mvn_case("spherical", 2, rng)]
    W = np.array([[0.5, 0.3, 0.2], [0.1, 0.1, 0.8], [0.3, 0.3, 0.4]])
    mx = Mixture(W, comps)
    y = rng.normal(size=(3, 2))
    S = [full_cov(c) for c in comps]
    for i in range(3):
        e1 = sum(W[i, a] * rot_e1_gauss(comps[a].mean[i], S[a][i], y[i], k) for a in range(3))
        e2 = sum(W[i, a] * W[i, b] * rot_e2_gauss(comps[a].mean[i], S[a][i], comps[b].mean[i], S[b][i], k)
                 for a in range(3) for b in range(3))
        assert_allclose(mx.expected_kernel(k, y)[i], e1, rtol=1e-9)
        assert_allclose(mx.expected_kernel_pair(k)[i], e2, rtol=1e-9)


def test_single_component_mvn_mixtures_of_different_covariance_types():
    # E k(Z, Z') between one-component mixtures equals that between the components.
    k = GaussianKernel(1.0)
    p = MultivariateNormal([[0.0, 0.0]], [[1.0, 2.0]])
    q = MultivariateNormal([[1.0, 0.5]], [[[0.5, 0.2], [0.2, 1.5]]])
    ref = rot_e2_gauss(p.mean[0], full_cov(p)[0], q.mean[0], full_cov(q)[0], k)
    assert_allclose(p.expected_kernel_pair(k, q), [ref], rtol=1e-9)
    assert_allclose(Mixture([1.0], [p]).expected_kernel_pair(k, Mixture([1.0], [q])), [ref], rtol=1e-9)
    assert_allclose(Mixture([1.0], [q]).expected_kernel_pair(k, Mixture([1.0], [p])), [ref], rtol=1e-9)


# -- the Monte-Carlo fallback


@pytest.mark.parametrize("kernel", [GaussianKernel(0.9), GaussianKernel(3.0), ExponentialKernel(0.8)],
                         ids=["gauss0.9", "gauss3", "exp"])
def test_reference_inner_expectations_against_nested_quadrature(kernel):
    # the test's own shortcut for E k(Z, Z') with a Laplace Z' (no library code involved)
    for (m1, b1), (m2, b2) in [((0.0, 1.0), (0.5, 0.7)), ((1.0, 0.4), (-1.0, 1.5))]:
        a, b = Ref1D("laplace", m1, b1), Ref1D("laplace", m2, b2)
        assert_allclose(ref_e2(a, b, kernel), ref_e2(a, b, kernel, nested=True, epsrel=1e-10),
                        rtol=1e-9)
    for z in [-3.0, 0.1, 0.5, 2.0, 6.0]:
        assert_allclose(laplace_gauss_inner(0.5, 0.7, z, 0.9),
                        ref_e1(Ref1D("laplace", 0.5, 0.7), z, GaussianKernel(0.9)), rtol=1e-9)
    # far tail: the Laplace tail convolved with the Gaussian kernel,
    # ls sqrt(2 pi) / (2 b) exp(ls^2 / (2 b^2) - |z - m| / b)
    tail = 0.9 * SQRT2PI / 1.4 * math.exp(0.81 / 0.98 - 40.5 / 0.7)
    assert_allclose(laplace_gauss_inner(0.5, 0.7, -40.0, 0.9), tail, rtol=1e-12)


def test_laplace_gaussian_kernel_monte_carlo_fallback():
    k = GaussianKernel(0.9)
    kf, _ = kernel_1d(k)
    p = Laplace([0.0, 1.0], [1.0, 0.4])
    q = Laplace([0.5, -1.0], [0.7, 1.5])
    y = np.array([0.3, 0.0])
    assert not has_closed_form(p, k)
    m = 20_000
    rng = np.random.default_rng(80)
    e1 = p.expected_kernel(k, y, n_mc_samples=m, random_state=rng)
    e2 = p.expected_kernel_pair(k, q, n_mc_samples=m, random_state=rng)
    e2s = p.expected_kernel_pair(k, n_mc_samples=m, random_state=rng)
    k2 = GaussianKernel(0.9 / math.sqrt(2.0))  # k^2
    for i in range(2):
        a, b = Ref1D("laplace", p.loc[i], p.scale[i]), Ref1D("laplace", q.loc[i], q.scale[i])
        r1, r1sq = ref_e1(a, y[i], k), ref_e1(a, y[i], k2)
        assert abs(e1[i] - r1) < mc_tol(math.sqrt(r1sq - r1 ** 2), m)
        r2, r2sq = ref_e2(a, b, k, epsrel=1e-8), ref_e2(a, b, k2, epsrel=1e-8)
        assert abs(e2[i] - r2) < mc_tol(math.sqrt(r2sq - r2 ** 2), m)
        r2s, r2ssq = ref_e2(a, a, k, epsrel=1e-8), ref_e2(a, a, k2, epsrel=1e-8)
        assert abs(e2s[i] - r2s) < mc_tol(math.sqrt(r2ssq - r2s ** 2), m)


@pytest.mark.parametrize("other", [None, "separate object"])
@pytest.mark.parametrize("seed", [0, 12345])
def test_monte_carlo_pair_with_integer_seed_uses_independent_draws(seed, other):
    # E k(Z, Z') for independent Z ~ p_i, Z' ~ q_i (q = p when other=None), whatever random_state
    # is -- an int seed included (common random numbers would give Z = Z' and E k = 1).
    k = GaussianKernel(1.0)
    p = Laplace([0.0], [1.0])
    q = None if other is None else Laplace([0.0], [1.0])
    a = Ref1D("laplace", 0.0, 1.0)
    ref = ref_e2(a, a, k, epsrel=1e-8)
    ref_sq = ref_e2(a, a, GaussianKernel(1.0 / math.sqrt(2.0)), epsrel=1e-8)
    m = 20_000
    got = p.expected_kernel_pair(k, q, n_mc_samples=m, random_state=seed)[0]
    assert abs(got - ref) < mc_tol(math.sqrt(ref_sq - ref ** 2), m), (got, ref)


def test_skce_monte_carlo_fallback_biased_with_integer_seed():
    # V-statistic with the MC fallback against a quadrature V-statistic (int random_state)
    loc, b = np.array([0.0, 1.0, -0.5]), np.array([1.0, 0.5, 0.8])
    y = np.array([0.3, 1.2, 0.4])
    k = GaussianKernel(1.0)
    laws = [Ref1D("laplace", m, s) for m, s in zip(loc, b)]
    E1 = np.array([[ref_e1(laws[i], y[j], k) for j in range(3)] for i in range(3)])
    E2 = np.array([[ref_e2(laws[i], laws[j], k, epsrel=1e-8) for j in range(3)] for i in range(3)])
    KY = np.exp(-(y[:, None] - y[None, :]) ** 2 / 2)
    KP = np.exp(-np.sqrt((loc[:, None] - loc) ** 2 + 2 * (b[:, None] - b) ** 2))
    ref = np.mean(KP * (KY - E1 - E1.T + E2))
    got = skce(y, Laplace(loc, b), kernel=PAPER_KERNEL, estimator="biased", random_state=0,
               n_mc_samples=20_000)
    assert abs(got - ref) < 0.01, (got, ref)


def test_target_ops_diagonal_uses_independent_draws_with_integer_seed():
    k = GaussianKernel(1.0)
    p = Laplace([0.0, 2.0], [1.0, 0.5])
    y = check_targets([0.0, 2.0], p)
    ops = target_ops(p, y, k, n_mc_samples=20_000, random_state=7)
    h = ops.diag(slice(None))
    for i in range(2):
        a = Ref1D("laplace", p.loc[i], p.scale[i])
        ref = 1.0 - 2 * ref_e1(a, y[i], k) + ref_e2(a, a, k, epsrel=1e-8)
        assert abs(h[i] - ref) < 0.02, (h[i], ref)


def test_mvn_euclidean_exponential_monte_carlo_fallback():
    # d = 2, exp(-|z - y| / l): reference by quadrature in polar coordinates around y
    k = ExponentialKernel(0.8)
    mean = np.array([[0.3, -0.2]])
    S = np.array([[[1.0, 0.4], [0.4, 0.6]]])
    y = np.array([[0.0, 0.5]])
    p = MultivariateNormal(mean, S)
    assert not has_closed_form(p, k)
    Si = np.linalg.inv(S[0])
    c = 1.0 / (2 * math.pi * math.sqrt(np.linalg.det(S[0])))

    def polar(rate):
        def f(theta, r):
            z = y[0] + r * np.array([math.cos(theta), math.sin(theta)]) - mean[0]
            return c * math.exp(-0.5 * z @ Si @ z) * math.exp(-rate * r) * r
        return integrate.dblquad(f, 0, 30, 0, 2 * math.pi, epsabs=1e-12, epsrel=1e-10)[0]

    ref, ref_sq = polar(1 / 0.8), polar(2 / 0.8)
    m = 20_000
    got = p.expected_kernel(k, y, n_mc_samples=m, random_state=np.random.default_rng(81))
    assert abs(got[0] - ref) < mc_tol(math.sqrt(ref_sq - ref ** 2), m)
    # and a large independent Monte Carlo agrees with the quadrature
    Z = np.random.default_rng(82).multivariate_normal(mean[0], S[0], size=400_000)
    vals = np.exp(-np.sqrt(((Z - y[0]) ** 2).sum(1)) / 0.8)
    assert abs(vals.mean() - ref) < mc_tol(vals.std(), Z.shape[0])


@pytest.mark.parametrize("dist, kernel, expected", [
    (Normal([0.0], 1.0), GaussianKernel(1.0), True),
    (Normal([0.0], 1.0), ExponentialKernel(1.0), True),
    (Normal([0.0], 1.0), ExponentialKernel(1.0, metric="tv"), True),
    (Laplace([0.0], 1.0), ExponentialKernel(1.0), True),
    (Laplace([0.0], 1.0), GaussianKernel(1.0), False),
    (MultivariateNormal([[0.0, 0.0]], [[1.0, 2.0]]), GaussianKernel(1.0), True),
    (MultivariateNormal([[0.0, 0.0]], [[1.0, 2.0]]), ExponentialKernel(1.0, metric="tv"), True),
    (MultivariateNormal([[0.0, 0.0]], [[1.0, 2.0]]), ExponentialKernel(1.0), False),
    (MultivariateNormal([[0.0, 0.0]], [SPD]), GaussianKernel(1.0), True),
    (MultivariateNormal([[0.0]], [1.0]), ExponentialKernel(1.0), True),
    (Mixture([0.5, 0.5], [Normal([0.0], 1.0), Normal([1.0], 2.0)]), GaussianKernel(1.0), True),
    (Mixture([0.5, 0.5], [Laplace([0.0], 1.0), Laplace([1.0], 2.0)]), GaussianKernel(1.0), False),
    (Mixture([0.5, 0.5], [Laplace([0.0], 1.0), Laplace([1.0], 2.0)]), ExponentialKernel(1.0), True),
])
def test_has_closed_form(dist, kernel, expected):
    assert has_closed_form(dist, kernel) is expected


def test_expected_kernel_argument_errors():
    p = Normal([0.0, 1.0], 1.0)
    with pytest.raises(TypeError):
        p.expected_kernel(WassersteinKernel(1.0), [0.0, 0.0])
    with pytest.raises(ValueError, match="length_scale"):
        p.expected_kernel(GaussianKernel("median"), [0.0, 0.0])
    with pytest.raises(ValueError, match="y"):
        p.expected_kernel(GaussianKernel(1.0), [0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="y"):
        p.expected_kernel(GaussianKernel(1.0), [0.0, np.nan])
    with pytest.raises(ValueError, match="y"):
        MultivariateNormal(np.zeros((2, 2)), 1.0).expected_kernel(GaussianKernel(1.0), np.zeros((2, 3)))
    with pytest.raises(ValueError):
        p.expected_kernel_pair(GaussianKernel(1.0), Normal([0.0, 1.0, 2.0], 1.0))
    with pytest.raises(TypeError):
        p.expected_kernel_pair(GaussianKernel(1.0), Laplace([0.0, 1.0], 1.0))


# ============================================================================================
# 5. consistency between families


def _as_mvn(loc, scale, kind):
    loc, scale = np.asarray(loc, float), np.asarray(scale, float)
    if kind == "spherical":
        return MultivariateNormal(loc[:, None], scale ** 2)
    if kind == "diag":
        return MultivariateNormal(loc[:, None], (scale ** 2)[:, None])
    return MultivariateNormal(loc[:, None], (scale ** 2)[:, None, None])


def _calibrated_normals(n, seed, zero_scale=False):
    rng = np.random.default_rng(seed)
    loc = rng.normal(size=n)
    scale = rng.uniform(0.2, 1.5, size=n)
    if zero_scale:
        scale[::4] = 0.0
    y = loc + scale * rng.normal(size=n) + 0.3 * rng.normal(size=n)
    return loc, scale, y


@pytest.mark.parametrize("kind", ["spherical", "diag", "full"])
@pytest.mark.parametrize("kernel", [GaussianKernel(1.0), GaussianKernel(0.5), ExponentialKernel(0.7),
                                    ExponentialKernel(0.7, metric="tv")],
                         ids=["gauss1", "gauss0.5", "exp", "tv"])
def test_mvn_d1_expectations_and_w2_equal_normal(kind, kernel):
    loc, scale, y = _calibrated_normals(6, 90, zero_scale=True)
    nrm, mvn = Normal(loc, scale), _as_mvn(loc, scale, kind)
    loc2, scale2, _ = _calibrated_normals(6, 91)
    nrm2, mvn2 = Normal(loc2, scale2), _as_mvn(loc2, scale2, kind)
    assert_allclose(mvn.expected_kernel(kernel, y[:, None]), nrm.expected_kernel(kernel, y), rtol=1e-12)
    assert_allclose(mvn.expected_kernel_pair(kernel), nrm.expected_kernel_pair(kernel), rtol=1e-12)
    assert_allclose(mvn.expected_kernel_pair(kernel, mvn2), nrm.expected_kernel_pair(kernel, nrm2),
                    rtol=1e-12)
    assert_allclose(pairwise_wasserstein(mvn, mvn2), pairwise_wasserstein(nrm, nrm2), rtol=1e-10,
                    atol=1e-12)


ESTIMATORS = [("unbiased", 2), ("biased", 2), ("block", 2), ("block", 3)]


@pytest.mark.parametrize("kind", ["spherical", "diag", "full"])
@pytest.mark.parametrize("estimator, block_size", ESTIMATORS)
def test_mvn_d1_skce_equals_normal(kind, estimator, block_size):
    loc, scale, y = _calibrated_normals(11, 92, zero_scale=True)
    nrm, mvn = Normal(loc, scale), _as_mvn(loc, scale, kind)
    for kernel in [PAPER_KERNEL, tensor(WassersteinKernel(0.7, exponent=2.0), GaussianKernel(0.5)), None]:
        a = skce(y, nrm, kernel=kernel, estimator=estimator, block_size=block_size)
        b = skce(y[:, None], mvn, kernel=kernel, estimator=estimator, block_size=block_size)
        assert_allclose(b, a, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("kind", ["spherical", "diag"])
@pytest.mark.parametrize("estimator, block_size", ESTIMATORS)
def test_mvn_d1_skce_equals_normal_exponential_target(kind, estimator, block_size):
    loc, scale, y = _calibrated_normals(11, 93)
    nrm, mvn = Normal(loc, scale), _as_mvn(loc, scale, kind)
    for tk in [ExponentialKernel(0.8), ExponentialKernel(0.8, metric="tv")]:
        kernel = tensor(WassersteinKernel(1.0), tk)
        a = skce(y, nrm, kernel=kernel, estimator=estimator, block_size=block_size)
        b = skce(y[:, None], mvn, kernel=kernel, estimator=estimator, block_size=block_size)
        assert_allclose(b, a, rtol=1e-10, atol=1e-14)


REFERENCE_SKCE = [  # reference-values §3 (CalibrationErrors.jl test/distributions/normal.jl)
    ([0.0, 0.0], [1.0, 1.0], [0.0, 0.0], 1.0, 0.16313670681653092),
    ([0.0, 1.0], [1.0, 2.0], [1.0, 0.0], 1.0, -0.04186060698827978),
    ([0.0, 1.0], [1.0, 2.0], [0.0, 1.0], 1.0, 0.00651220001294024),
    ([0.0, 0.0], [1.0, 1.0], [0.0, 0.0], 2.0, 0.027642198927894435),
    ([0.0, 1.0], [1.0, 2.0], [1.0, 0.0], 2.0, -0.021490892973595306),
    ([0.0, 1.0], [1.0, 2.0], [0.0, 1.0], 2.0, 0.00961770077268961),
]


@pytest.mark.parametrize("loc, scale, y, ls, value", REFERENCE_SKCE)
def test_reference_values_normal_and_mvn_d1(loc, scale, y, ls, value):
    kernel = tensor(WassersteinKernel(1.0), GaussianKernel(ls))
    assert_allclose(skce(y, Normal(loc, scale), kernel=kernel), value, rtol=1e-12)
    for kind in ["spherical", "diag", "full"]:
        assert_allclose(skce(np.array(y)[:, None], _as_mvn(loc, scale, kind), kernel=kernel), value,
                        rtol=1e-12)
    assert_allclose(skce(y, Mixture([1.0], [Normal(loc, scale)]), kernel=kernel), value, rtol=1e-12)


@pytest.mark.parametrize("family", ["normal", "laplace", "mvn"])
@pytest.mark.parametrize("estimator, block_size", ESTIMATORS)
def test_single_component_mixture_skce_equals_component(family, estimator, block_size):
    rng = np.random.default_rng(94)
    n = 10
    if family == "normal":
        comp, y = Normal(rng.normal(size=n), rng.uniform(0.2, 1.5, n)), rng.normal(size=n)
        tk = GaussianKernel(1.0)
    elif family == "laplace":
        comp, y = Laplace(rng.normal(size=n), rng.uniform(0.2, 1.5, n)), rng.normal(size=n)
        tk = ExponentialKernel(0.9)
    else:
        comp = MultivariateNormal(rng.normal(size=(n, 2)), rng.uniform(0.2, 1.5, (n, 2)))
        y = rng.normal(size=(n, 2))
        tk = GaussianKernel(1.0)
    kernel = tensor(WassersteinKernel(1.0), tk)
    a = skce(y, comp, kernel=kernel, estimator=estimator, block_size=block_size)
    b = skce(y, Mixture([1.0], [comp]), kernel=kernel, estimator=estimator, block_size=block_size)
    assert_allclose(b, a, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("estimator", ["unbiased", "biased", "block"])
def test_categorical_equals_probability_matrix(estimator):
    rng = np.random.default_rng(95)
    classes = np.array(["a", "b", "c"])
    P = rng.dirichlet(np.ones(3), size=20)
    y = classes[rng.integers(0, 3, size=20)]
    cat = Categorical(P, classes=classes)
    for kernel in [GaussianKernel(1.0), None]:
        assert_allclose(skce(y, cat, kernel=kernel, estimator=estimator),
                        skce(y, P, kernel=kernel, estimator=estimator, labels=classes), rtol=1e-12)
    assert_allclose(calibration_error(y, cat), calibration_error(y, P, labels=classes), rtol=1e-12)
    # a class that never occurs in y still counts (its column is in the matrix)
    y2 = np.where(y == "c", "a", y)
    assert_allclose(skce(y2, cat, kernel=GaussianKernel(1.0)),
                    skce(y2, P, kernel=GaussianKernel(1.0), labels=classes), rtol=1e-12)


def test_categorical_with_unsorted_classes_keeps_its_column_labels():
    # Column j of a Categorical belongs to classes[j]; the metrics must respect that pairing even
    # when the classes are not sorted, i.e. equal the matrix with its columns in sorted-label order.
    rng = np.random.default_rng(96)
    classes = np.array(["b", "a", "c"])
    P = rng.dirichlet(np.ones(3), size=20)
    y = classes[rng.integers(0, 3, size=20)]
    order = np.argsort(classes)
    cat = Categorical(P, classes=classes)
    k = GaussianKernel(1.0)
    assert_allclose(skce(y, cat, kernel=k), skce(y, P[:, order], kernel=k), rtol=1e-12)
    assert_allclose(calibration_error(y, cat), calibration_error(y, P[:, order]), rtol=1e-12)


# ============================================================================================
# 6. the pair term h_ij


def _term(dist, y, target_kernel=GaussianKernel(1.0), pred=WassersteinKernel(1.0), **kw):
    return distribution_term(dist, check_targets(y, dist), tensor(pred, target_kernel), **kw)


def _w2_normal_matrix(loc, scale):
    return np.sqrt((loc[:, None] - loc[None, :]) ** 2 + (scale[:, None] - scale[None, :]) ** 2)


@pytest.mark.parametrize("kernel", [GaussianKernel(1.0), GaussianKernel(0.4), ExponentialKernel(0.9)],
                         ids=["gauss1", "gauss0.4", "exp"])
@pytest.mark.parametrize("hetero", [False, True])
def test_normal_pair_matrix_against_quadrature(kernel, hetero):
    rng = np.random.default_rng(100)
    n = 5
    loc = rng.normal(size=n)
    scale = rng.uniform(0.3, 1.5, size=n) if hetero else np.full(n, 0.8)
    y = loc + rng.normal(size=n)
    term = _term(Normal(loc, scale), y, kernel)
    assert isinstance(term, DistributionTerm)
    H = dense_matrix(term)
    kf, _ = kernel_1d(kernel)
    laws = [Ref1D("normal", m, s) for m, s in zip(loc, scale)]
    E1 = np.array([[ref_e1(laws[i], y[j], kernel) for j in range(n)] for i in range(n)])  # e1(p_i, y_j)
    E2 = np.array([[ref_e2(laws[i], laws[j], kernel) if j >= i else np.nan for j in range(n)]
                   for i in range(n)])
    E2 = np.where(np.isnan(E2), E2.T, E2)
    KY = np.array([[kf(a - b) for b in y] for a in y])
    KP = np.exp(-_w2_normal_matrix(loc, scale))
    ref = KP * (KY - E1 - E1.T + E2)  # h_ij = kP [kY(y_i,y_j) - e1(p_i,y_j) - e1(p_j,y_i) + e2]
    assert_allclose(H, ref, rtol=1e-9, atol=1e-13)
    # the diagonal uses independent Z, Z' ~ p_i and is strictly positive
    assert np.all(np.diag(H) > 1e-3)
    assert_allclose(np.diag(H), 1.0 - 2 * np.diag(E1) + np.diag(E2), rtol=1e-9)
    # the wrong pairing e1(p_i, y_i), e1(p_j, y_j) would be symmetric too, but different
    wrong = KP * (KY - np.diag(E1)[:, None] - np.diag(E1)[None, :] + E2)
    off = ~np.eye(n, dtype=bool)
    assert np.max(np.abs(wrong - ref)[off]) > 1e-3
    # the blocks, pairs and diagonal of the engine agree with the dense matrix
    i, j = np.array([0, 1, 3, 4]), np.array([2, 0, 3, 1])
    assert_allclose(term.pairs(i, j), ref[i, j], rtol=1e-9, atol=1e-13)
    assert_allclose(term.block(slice(1, 4), slice(0, 2)), ref[1:4, 0:2], rtol=1e-9, atol=1e-13)


@pytest.mark.parametrize("family", ["normal-gauss", "normal-exp", "laplace-exp", "mvn-gauss",
                                    "mixture-gauss"])
def test_pair_matrix_symmetric_psd(family):
    rng = np.random.default_rng(101)
    n = 30
    if family.startswith("normal"):
        dist, y = Normal(rng.normal(size=n), rng.uniform(0.0, 1.5, size=n)), rng.normal(size=n) * 1.5
    elif family.startswith("laplace"):
        dist, y = Laplace(rng.normal(size=n), rng.uniform(0.1, 1.5, size=n)), rng.normal(size=n) * 1.5
    elif family.startswith("mvn"):
        dist = MultivariateNormal(rng.normal(size=(n, 2)), rng.uniform(0.1, 1.5, size=(n, 2)))
        y = rng.normal(size=(n, 2)) * 1.5
    else:
        n = 12  # exact optimal transport per pair
        dist = Mixture(rng.dirichlet(np.ones(2), size=n),
                       [Normal(rng.normal(size=n), rng.uniform(0.1, 1.5, n)) for _ in range(2)])
        y = rng.normal(size=n) * 1.5
    kernel = ExponentialKernel(0.9) if family.endswith("exp") else GaussianKernel(1.0)
    H = dense_matrix(_term(dist, y, kernel))
    assert_allclose(H, H.T, rtol=1e-12, atol=1e-15)
    if not family.startswith("mixture"):  # exp(-MW2) is not known to be PSD
        ev = np.linalg.eigvalsh(H)
        assert ev.min() >= -1e-10 * max(ev.max(), 1.0)
    assert np.all(np.diag(H) > 0)


@pytest.mark.parametrize("family", ["normal-gauss", "laplace-exp", "laplace-gauss-mc"])
def test_pair_term_against_brute_force_monte_carlo(family):
    # h_ij = kP(p_i,p_j) E[kY(y_i,y_j) - kY(Z_i,y_j) - kY(y_i,Z_j) + kY(Z_i,Z_j)], Z_i ~ p_i indep.
    loc, scale = np.array([0.0, 1.0, -0.5]), np.array([0.7, 0.4, 1.2])
    y = np.array([0.4, 0.2, -1.5])
    if family == "normal-gauss":
        dist, kernel = Normal(loc, scale), GaussianKernel(1.0)
        w2 = _w2_normal_matrix(loc, scale)
    else:
        dist = Laplace(loc, scale)
        kernel = ExponentialKernel(0.9) if family == "laplace-exp" else GaussianKernel(1.0)
        w2 = np.sqrt((loc[:, None] - loc[None, :]) ** 2 + 2 * (scale[:, None] - scale[None, :]) ** 2)
    H = dense_matrix(_term(dist, y, kernel, n_mc_samples=20_000, random_state=np.random.default_rng(5)))
    kf = kernel_nd(kernel)
    rng = np.random.default_rng(102)
    m = 400_000

    def draw(i):
        if family == "normal-gauss":
            return rng.normal(loc[i], scale[i], size=m)
        return rng.laplace(loc[i], scale[i], size=m)

    for i, j in [(0, 1), (2, 0), (1, 1)]:
        Zi, Zj = draw(i), draw(j)  # independent, also for i == j
        terms = np.exp(-w2[i, j]) * (kf(np.array([[y[i] - y[j]]]))[0] - kf((Zi - y[j])[:, None])
                                     - kf((y[i] - Zj)[:, None]) + kf((Zi - Zj)[:, None]))
        tol = mc_tol(terms.std(), m)
        if family == "laplace-gauss-mc":  # the library's own MC error (20 000 draws, 4 terms)
            tol += 4 * 4 * terms.std() / math.sqrt(20_000)
        assert abs(H[i, j] - terms.mean()) < tol, (i, j, H[i, j], terms.mean())


@pytest.mark.parametrize("family", ["normal-gauss", "normal-exp", "laplace-exp"])
def test_pair_term_has_mean_zero_under_calibration(family):
    # E_{y_j ~ p_j} h((p_i, y_i), (p_j, y_j)) = 0 for every (p_i, y_i): integrate the library's h
    # over y_j with quadrature. The mis-paired kernel would not integrate to zero.
    Dist = Laplace if family.startswith("laplace") else Normal
    kernel = GaussianKernel(1.0) if family.endswith("gauss") else ExponentialKernel(0.8)
    p = Dist([0.3, -0.6], [0.9, 0.5])
    yi = 1.1
    law = Ref1D("laplace" if Dist is Laplace else "normal", -0.6, 0.5)

    def h(yj):
        return dense_matrix(_term(p, np.array([yi, yj]), kernel))[0, 1]

    total = quad_line(lambda t: law.pdf(t) * h(t), [-0.6, yi], epsrel=1e-10)
    assert abs(total) < 1e-9
    # h itself is not identically zero (the integral is a cancellation)
    assert abs(h(-0.6)) > 1e-3


def test_skce_estimators_from_the_pair_matrix():
    loc, scale, y = _calibrated_normals(9, 103)
    dist = Normal(loc, scale)
    H = dense_matrix(_term(dist, y))
    n = 9
    off = H.sum() - np.trace(H)
    assert_allclose(skce(y, dist, kernel=PAPER_KERNEL, estimator="biased"), H.sum() / n ** 2, rtol=1e-12)
    assert_allclose(skce(y, dist, kernel=PAPER_KERNEL), off / (n * (n - 1)), rtol=1e-12)
    for B in [2, 3, 4]:
        blocks = [H[b * B:(b + 1) * B, b * B:(b + 1) * B] for b in range(n // B)]
        val = np.mean([(blk.sum() - np.trace(blk)) / (B * (B - 1)) for blk in blocks])
        assert_allclose(skce(y, dist, kernel=PAPER_KERNEL, estimator="block", block_size=B), val,
                        rtol=1e-12)


def test_monte_carlo_pair_matrix_diagonal_uses_independent_draws():
    # biased SKCE with the MC fallback: h_ii = kY(y,y) - 2 e1(p,y) + e2(p,p) with independent draws
    p = Laplace([0.0, 1.0], [1.0, 0.5])
    y = np.array([0.2, 1.4])
    k = GaussianKernel(1.0)
    H = dense_matrix(_term(p, y, k, n_mc_samples=20_000, random_state=np.random.default_rng(6)))
    for i in range(2):
        a = Ref1D("laplace", p.loc[i], p.scale[i])
        ref = 1.0 - 2 * ref_e1(a, y[i], k) + ref_e2(a, a, k, epsrel=1e-8)
        assert abs(H[i, i] - ref) < 0.01
        assert ref > 0.05


# ============================================================================================
# 7. WassersteinKernel


@pytest.mark.parametrize("params, exc, name", [
    (dict(length_scale=0.0), ValueError, "length_scale"),
    (dict(length_scale=-1.0), ValueError, "length_scale"),
    (dict(length_scale=np.nan), ValueError, "length_scale"),
    (dict(length_scale="mean"), ValueError, "length_scale"),
    (dict(length_scale=True), TypeError, "length_scale"),
    (dict(exponent=0.0), ValueError, "exponent"),
    (dict(exponent=-1.0), ValueError, "exponent"),
    (dict(exponent=np.inf), ValueError, "exponent"),
    (dict(exponent="1"), TypeError, "exponent"),
    (dict(max_samples=1), ValueError, "max_samples"),
    (dict(max_samples=2.5), TypeError, "max_samples"),
])
def test_wasserstein_kernel_validation(params, exc, name):
    with pytest.raises(exc, match=name):
        WassersteinKernel(**params)(Normal([0.0, 1.0], 1.0))


@pytest.mark.parametrize("exponent", [0.5, 1.0, 1.7, 2.0])
@pytest.mark.parametrize("ls", [1.0, 0.3])
def test_wasserstein_kernel_gram(exponent, ls):
    loc, scale = np.array([0.0, 1.0, -2.0, 0.5]), np.array([1.0, 0.0, 2.0, 0.5])
    K = WassersteinKernel(ls, exponent=exponent)(Normal(loc, scale))
    assert_allclose(K, np.exp(-(_w2_normal_matrix(loc, scale) / ls) ** exponent), rtol=1e-12)
    b = np.array([1.0, 0.2, 2.0, 0.5])
    K = WassersteinKernel(ls, exponent=exponent)(Laplace(loc, b))
    W = np.sqrt((loc[:, None] - loc) ** 2 + 2 * (b[:, None] - b) ** 2)
    assert_allclose(K, np.exp(-(W / ls) ** exponent), rtol=1e-12)


def test_wasserstein_kernel_median_length_scale():
    rng = np.random.default_rng(110)
    loc, scale = rng.normal(size=7), rng.uniform(0.1, 2, 7)
    D = _w2_normal_matrix(loc, scale)
    med = np.median(D[np.triu_indices(7, 1)])
    assert_allclose(WassersteinKernel("median").resolve(Normal(loc, scale)).length_scale, med, rtol=1e-12)
    K = WassersteinKernel("median")(Normal(loc, scale))
    assert_allclose(K, np.exp(-D / med), rtol=1e-12)
    # more predictions than max_samples: an evenly spaced deterministic subsample
    idx = np.linspace(0, 6, 4).round().astype(int)
    Ds = D[np.ix_(idx, idx)]
    assert_allclose(WassersteinKernel("median", max_samples=4).resolve(Normal(loc, scale)).length_scale,
                    np.median(Ds[np.triu_indices(4, 1)]), rtol=1e-12)
    # mixtures and multivariate normals use their own W2
    mx = Mixture([0.3, 0.7], [Normal(loc, scale), Normal(loc[::-1], scale)])
    Dm = pairwise_wasserstein(mx)
    assert_allclose(WassersteinKernel("median").resolve(mx).length_scale,
                    np.median(Dm[np.triu_indices(7, 1)]), rtol=1e-12)


def _no_validity_warning(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("error", KernelValidityWarning)
        return fn()


def _noncommuting():
    rng = np.random.default_rng(111)
    return MultivariateNormal(rng.normal(size=(3, 2)), np.stack([random_spd(rng, 2) for _ in range(3)]))


def _commuting_full():
    rng = np.random.default_rng(112)
    U = rotation(rng, 2)
    return MultivariateNormal(rng.normal(size=(3, 2)),
                              np.einsum("ij,nj,kj->nik", U, rng.uniform(0.2, 2, (3, 2)), U))


def _mix():
    return Mixture([0.4, 0.6], [Normal([0.0, 1.0, 2.0], 1.0), Normal([1.0, -1.0, 0.0], 0.5)])


@pytest.mark.parametrize("make, exponent", [
    (lambda: Normal([0.0, 1.0], 1.0), 2.5),
    (lambda: Laplace([0.0, 1.0], 1.0), 3.0),
    (_mix, 1.5),
    (_mix, 2.0),
    (_noncommuting, 1.0),
    (lambda: Mixture([0.5, 0.5], [_noncommuting(), _noncommuting()]), 1.0),
])
def test_kernel_validity_warning(make, exponent):
    with pytest.warns(KernelValidityWarning):
        WassersteinKernel(1.0, exponent=exponent)(make())


@pytest.mark.parametrize("make, exponent", [
    (lambda: Normal([0.0, 1.0], 1.0), 2.0),
    (lambda: Normal([0.0, 1.0], 1.0), 0.5),
    (lambda: Laplace([0.0, 1.0], 1.0), 1.0),
    (_mix, 1.0),
    (_mix, 0.5),
    (_commuting_full, 2.0),
    (lambda: MultivariateNormal(np.zeros((3, 2)), [[1.0, 2.0], [3.0, 4.0], [1.0, 1.0]]), 1.0),
])
def test_no_kernel_validity_warning(make, exponent):
    _no_validity_warning(lambda: WassersteinKernel(1.0, exponent=exponent)(make()))


def test_skce_warns_for_noncommuting_covariances():
    p = _noncommuting()
    with pytest.warns(KernelValidityWarning):
        skce(np.zeros((3, 2)), p, kernel=PAPER_KERNEL)
    _no_validity_warning(lambda: skce(np.zeros((3, 2)), _commuting_full(), kernel=PAPER_KERNEL))


def test_wasserstein_kernel_between_two_batches_of_different_covariance_types():
    # The cross Gram matrix k(X_i, Y_j) (used for test locations) must be exp(-W2(X_i, Y_j)).
    sph = MultivariateNormal(np.zeros((2, 3)), [1.0, 2.0])
    diag = MultivariateNormal(np.ones((2, 3)), [[1.0, 2.0, 3.0], [0.5, 0.5, 0.5]])
    ref = np.array([[bures_reference(np.zeros(3), full_cov(sph)[i], np.ones(3), full_cov(diag)[j])
                     for j in range(2)] for i in range(2)])
    assert_allclose(WassersteinKernel(1.0)(sph, diag), np.exp(-np.sqrt(ref)), rtol=1e-9)
    assert_allclose(WassersteinKernel(1.0)(diag, sph), np.exp(-np.sqrt(ref.T)), rtol=1e-9)


def test_wasserstein_kernel_between_commuting_batches_with_different_eigenbases():
    rng = np.random.default_rng(113)
    U, V = rotation(rng, 2), rotation(rng, 2)
    X = MultivariateNormal(np.zeros((2, 2)), np.stack([U @ np.diag([1.0, 4.0]) @ U.T,
                                                       U @ np.diag([2.0, 0.5]) @ U.T]))
    Y = MultivariateNormal(np.ones((1, 2)), (V @ np.diag([1.0, 3.0]) @ V.T)[None])
    assert X.commuting() and Y.commuting()
    ref = np.array([[bures_reference(X.mean[i], X.cov[i], Y.mean[0], Y.cov[0])] for i in range(2)])
    assert_allclose(pairwise_wasserstein(X, Y), np.sqrt(ref), rtol=1e-8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", KernelValidityWarning)
        assert_allclose(WassersteinKernel(1.0)(X, Y), np.exp(-np.sqrt(ref)), rtol=1e-8)


def test_bures_distance_of_identical_full_covariances_is_zero():
    """The Bures term is >= 0 exactly; its rounding noise (~1e-16 relative) must not make a
    prediction differ from its copy in another batch (k_P = 1 even at tiny length scales)."""
    rng = np.random.default_rng(0)
    A = rng.normal(size=(4, 3, 3))
    cov = A @ np.swapaxes(A, 1, 2) + 0.1 * np.eye(3)
    mean = rng.normal(size=(4, 3))
    p = MultivariateNormal(mean, cov)
    q = MultivariateNormal(mean[[2, 0]], cov[[2, 0]])  # copies of rows 2 and 0
    D = pairwise_wasserstein(p, q)
    assert D[2, 0] == 0.0 and D[0, 1] == 0.0
    assert np.all(D[[0, 1, 3], 0] > 0.1)  # distinct predictions stay apart
    # a tiny covariance difference above the rounding floor is kept
    q2 = MultivariateNormal(mean[[2]], cov[[2]] + 1e-6 * np.eye(3))
    assert pairwise_wasserstein(p, q2)[2, 0] > 0.0
