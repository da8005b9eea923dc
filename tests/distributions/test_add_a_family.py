"""A distribution family added through the documented path ("How to add a distribution family"
in docs/architecture.rst), touching no module of skcalib: ``Uniform(low, high)`` is defined in
this file, registers its closed-form Gaussian-kernel expectations with
:mod:`skcalib._expectations`, and works with the SKCE, its test, the CRPS and PIT metrics,
row slicing, concatenation and the Wasserstein distances. Every value is checked against an
independent computation (quadrature, closed forms written here, brute force), and the kernel it
registers nothing for (the exponential kernel) falls back to Monte Carlo.
"""

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import integrate, special

import skcalib
from skcalib._expectations import TargetOps, has_closed_form, place, register_expectations
from skcalib.distributions import Normal, concatenate, pairwise_wasserstein, wasserstein_distance
from skcalib.distributions._base import (Distribution, _broadcast_rows, _float_array,
                                         _read_only_float_copy)
from skcalib.kernels import ExponentialKernel, GaussianKernel, WassersteinKernel, tensor
from skcalib.stats import skce_test

# ---------------------------------------------------------------------------------------------
# the family: what a module skcalib/distributions/_uniform.py would hold


class Uniform(Distribution):
    """Batch of uniform distributions on ``[low, high]`` (``low < high``)."""

    _family = "uniform"   # the marker that the validation layer recognises distributions by
    dim = None            # real targets
    _univariate = True    # cdf and ppf: the PIT and CRPS metrics accept it

    def __init__(self, low, high):
        low = _float_array(low, "low", ndim=(0, 1))
        high = _float_array(high, "high", ndim=(0, 1))
        low, high = _broadcast_rows([low, high], ["low", "high"])
        if np.any(high <= low):
            raise ValueError("high must exceed low in every row.")
        self.low = _read_only_float_copy(low)
        self.high = _read_only_float_copy(high)
        self.n_samples = low.shape[0]
        self._freeze()

    @property
    def mean(self):
        return 0.5 * (self.low + self.high)

    def _moments(self, unit=1.0):
        w = (self.high - self.low) / unit
        return self.mean / unit, w * w / 12.0

    def _take(self, rows):
        return Uniform(self.low[rows], self.high[rows])

    @classmethod
    def _concatenate(cls, dists):
        return cls(np.concatenate([d.low for d in dists]), np.concatenate([d.high for d in dists]))

    def _draw(self, rng, m):
        return self.low + (self.high - self.low) * rng.uniform(size=(m, self.n_samples))

    def cdf(self, y):
        return np.clip((np.asarray(y, dtype=float) - self.low) / (self.high - self.low), 0.0, 1.0)

    def ppf(self, q):
        return self.low + (self.high - self.low) * np.asarray(q, dtype=float)

    def log_pdf(self, y):
        y = np.asarray(y, dtype=float)
        inside = (y >= self.low) & (y <= self.high)
        with np.errstate(divide="ignore"):
            return np.where(inside, -np.log(self.high - self.low), -np.inf)

    def _embedding(self):
        # quantiles low + (high - low) u: W2^2 = (mean - mean')^2 + (width - width')^2 / 12
        return np.column_stack([self.mean, (self.high - self.low) / math.sqrt(12.0)])


def _erf_integral(x):
    """An antiderivative of erf."""
    return x * special.erf(x) + np.exp(-x * x) / math.sqrt(math.pi)


class _UniformGaussOps(TargetOps):
    """``E k(Z, y)`` and ``E k(Z, Z')`` for ``k(y, y') = exp(-(y - y')^2 / (2 l^2))``."""

    def __init__(self, dist, y, ky):
        super().__init__(y, ky)
        self.low, self.high = dist.low, dist.high
        self.s = math.sqrt(2.0) * ky.length_scale

    def P(self, idx, axis):
        return place(self.low, idx, axis), place(self.high, idx, axis)

    def e1(self, P, Y):
        (a, b), s = P, self.s
        return (s * math.sqrt(math.pi) / 2 * (special.erf((b - Y) / s) - special.erf((a - Y) / s))
                / (b - a))

    def e2(self, P, Q):
        (a, b), (c, d), s = P, Q, self.s
        F = _erf_integral
        return (s * s * math.sqrt(math.pi) / 2 * (F((b - c) / s) - F((b - d) / s) - F((a - c) / s)
                                                  + F((a - d) / s)) / ((b - a) * (d - c)))


register_expectations(Uniform, GaussianKernel, _UniformGaussOps)


# ---------------------------------------------------------------------------------------------
# independent references


def _gauss(d, ls):
    return np.exp(-0.5 * (d / ls) ** 2)


def _e1_quad(a, b, y, kernel):
    return integrate.quad(lambda z: kernel(z - y) / (b - a), a, b, epsabs=1e-13, epsrel=1e-12)[0]


def _e2_quad(a, b, c, d, kernel):
    return integrate.dblquad(lambda z, w: kernel(z - w) / ((b - a) * (d - c)), a, b, c, d,
                             epsabs=1e-12, epsrel=1e-11)[0]


def _w2_quad(a, b, c, d):
    return math.sqrt(integrate.quad(lambda u: ((a + (b - a) * u) - (c + (d - c) * u)) ** 2,
                                    0.0, 1.0)[0])


def _crps_reference(a, b, y):
    """``E|X - y| - E|X - X'| / 2`` for ``X ~ U(a, b)``, written out by cases."""
    if y < a:
        first = 0.5 * (a + b) - y
    elif y > b:
        first = y - 0.5 * (a + b)
    else:
        first = ((y - a) ** 2 + (b - y) ** 2) / (2.0 * (b - a))
    return first - (b - a) / 6.0


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    n = 12
    low = rng.normal(size=n)
    high = low + rng.uniform(0.5, 2.0, n)
    y = low + (high - low) * rng.uniform(size=n) + rng.normal(scale=0.3, size=n)
    return Uniform(low, high), y


# ---------------------------------------------------------------------------------------------
# tests


def test_registered_closed_forms_match_quadrature(data):
    dist, y = data
    ls = 0.8
    kernel = GaussianKernel(ls)
    assert has_closed_form(dist, kernel)
    e1 = dist.expected_kernel(kernel, y)
    ref = [_e1_quad(a, b, t, lambda d: _gauss(d, ls)) for a, b, t in zip(dist.low, dist.high, y)]
    assert_allclose(e1, ref, rtol=1e-10)
    other = dist[::-1]
    e2 = dist.expected_kernel_pair(kernel, other)
    ref2 = [_e2_quad(a, b, c, d, lambda t: _gauss(t, ls))
            for a, b, c, d in zip(dist.low, dist.high, other.low, other.high)]
    assert_allclose(e2, ref2, rtol=1e-8)
    # the closed form is deterministic: no random state involved
    assert_array_equal(dist.expected_kernel(kernel, y, random_state=1), e1)


def test_unregistered_kernel_falls_back_to_monte_carlo(data):
    dist, y = data
    kernel = ExponentialKernel(0.7)
    assert not has_closed_form(dist, kernel)
    ref = [_e1_quad(a, b, t, lambda d: np.exp(-np.abs(d) / 0.7))
           for a, b, t in zip(dist.low, dist.high, y)]
    draws = dist.expected_kernel(kernel, y, n_mc_samples=5000, random_state=0)
    # Monte Carlo: close to the expectation (the kernel is in [0, 1]: sd <= 0.5 / sqrt(m)),
    # reproducible with a seed, and different draws with another seed
    assert_allclose(draws, ref, atol=5 * 0.5 / math.sqrt(5000))
    assert_array_equal(draws, dist.expected_kernel(kernel, y, n_mc_samples=5000, random_state=0))
    assert not np.array_equal(draws, dist.expected_kernel(kernel, y, n_mc_samples=5000,
                                                          random_state=1))


def _h(dist, y, i, j, ls_p, ls_y):
    """The SKCE's kernel ``h_ij`` from its definition, every term by quadrature."""
    ky = lambda d: _gauss(d, ls_y)  # noqa: E731
    a, b, c, d = dist.low[i], dist.high[i], dist.low[j], dist.high[j]
    k_p = math.exp(-_w2_quad(a, b, c, d) / ls_p)
    return k_p * (ky(y[i] - y[j]) - _e1_quad(a, b, y[j], ky) - _e1_quad(c, d, y[i], ky)
                  + _e2_quad(a, b, c, d, ky))


def test_skce_and_skce_test_on_the_new_family(data):
    dist, y = data
    n = dist.n_samples
    kernel = tensor(WassersteinKernel(1.5), GaussianKernel(0.8))
    H = {(i, j): _h(dist, y, i, j, 1.5, 0.8) for i in range(n) for j in range(i + 1, n)}
    assert_allclose(skcalib.skce(y, dist, kernel=kernel), np.mean(list(H.values())),
                    rtol=1e-7, atol=1e-12)
    # the block test (blocks of two): its statistic is the mean of h over the blocks
    result = skce_test(y, dist, kernel=kernel, method="block", random_state=0)
    blocks = np.array([H[(i, i + 1)] for i in range(0, n - 1, 2)])
    z = blocks.mean() / (blocks.std(ddof=1) / math.sqrt(blocks.size))
    assert_allclose(result.statistic, z, rtol=1e-6)
    assert_allclose(result.pvalue, special.ndtr(-z), rtol=1e-6)
    # targets far to the right of every prediction: clearly miscalibrated
    far = skce_test(dist.high + 3.0, dist, kernel=kernel, random_state=0)
    assert far.pvalue < 0.05


def test_crps_and_pit_on_the_new_family(data):
    dist, y = data
    # no closed form given: the CRPS comes from the quantile function by the 256-node
    # Gauss-Legendre rule (about 1e-5 relative where the loss has its kink inside (0, 1))
    ref = [_crps_reference(a, b, t) for a, b, t in zip(dist.low, dist.high, y)]
    assert_allclose(skcalib.crps(y, dist, reduction="none"), ref, rtol=1e-4)
    assert_allclose(skcalib.crps(y, dist), np.mean(ref), rtol=1e-4)
    # a closed form of the family's own (a ``_crps`` method) is used where it exists
    exact = type("ExactUniform", (Uniform,), {"_crps": lambda self, t: np.array(
        [_crps_reference(a, b, v) for a, b, v in zip(self.low, self.high, t)])})
    assert_allclose(skcalib.crps(y, exact(dist.low, dist.high), reduction="none"), ref,
                    rtol=1e-14)
    pit = skcalib.pit(y, dist)
    assert_allclose(pit, np.clip((y - dist.low) / (dist.high - dist.low), 0, 1), rtol=1e-14)
    assert_allclose(skcalib.nll(np.clip(y, dist.low, dist.high), dist),
                    np.mean(np.log(dist.high - dist.low)), rtol=1e-14)


def test_slicing_concatenation_and_wasserstein(data):
    dist, _ = data
    part = dist[2:5]
    assert isinstance(part, Uniform) and len(part) == 3
    assert_array_equal(part.low, dist.low[2:5])
    assert_array_equal(dist[[0, 3]].high, dist.high[[0, 3]])
    mask = dist.low > 0
    assert_array_equal(dist[mask].low, dist.low[mask])
    assert_array_equal(dist[1].high, dist.high[1:2])
    both = concatenate([dist[:4], dist[4:]])
    assert isinstance(both, Uniform)
    assert_array_equal(both.low, dist.low)
    assert_array_equal(both.high, dist.high)
    with pytest.raises(TypeError, match="one family"):
        concatenate([dist, Normal([0.0], [1.0])])
    with pytest.raises(TypeError, match="one family"):
        wasserstein_distance(dist, Normal(dist.mean, 1.0))
    other = dist[::-1]
    ref = [_w2_quad(a, b, c, d) for a, b, c, d in zip(dist.low, dist.high, other.low, other.high)]
    assert_allclose(wasserstein_distance(dist, other), ref, rtol=1e-10)
    D = pairwise_wasserstein(dist)
    assert_allclose(D[0, 5], _w2_quad(dist.low[0], dist.high[0], dist.low[5], dist.high[5]),
                    rtol=1e-10)
    assert_array_equal(np.diag(D), 0.0)


def test_sampling_follows_the_family(data):
    dist, _ = data
    Z = dist.sample(random_state=0, size=4000)
    assert Z.shape == (4000, dist.n_samples)
    assert np.all((Z >= dist.low) & (Z <= dist.high))
    sd = np.max(dist.high - dist.low) / math.sqrt(12.0)
    assert_allclose(Z.mean(axis=0), dist.mean, atol=5 * sd / math.sqrt(4000))
