"""The Empirical family against references that share none of its code (issue 23, item 5).

* **The Normal family as m grows.** Rows of ``m`` quantile-spaced points
  ``mu_i + s_i Phi^{-1}((k + 1/2) / m)`` are the midpoint discretisation of ``N(mu_i, s_i^2)``:
  their SKCE and UCME, with the same numeric kernel (``exp(-W2)`` times a Gaussian or exponential
  target kernel), converge to the values of the :class:`~skcalib.distributions.Normal`
  predictions (closed forms), which a wrong weight, a missed cross term or a wrong W2 would
  prevent. The errors at ``m = 10, 100, 1000`` are printed with ``pytest -s``.
* **W2 by quadrature.** ``W2^2 = int_0^1 (Q1(u) - Q2(u))^2 du`` with the step quantile functions
  built here from the raw draws and weights, integrated by ``scipy.integrate.quad`` with the
  breakpoints given (exact up to rounding: the integrand is piecewise constant), for unequal
  sizes, unequal and zero weights and tied draws. ``tests/distributions/test_empirical.py``
  compares the same integral on a midpoint grid (``rtol=1e-4``); here it is quadrature at
  ``rtol=1e-10``, and the step quantile functions are themselves checked against
  ``scipy.stats.wasserstein_distance`` (``W1 = int |Q1 - Q2|``).
"""

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import integrate, stats

import skcalib
from skcalib.distributions import Empirical, Normal, pairwise_wasserstein, wasserstein_distance
from skcalib.kernels import ExponentialKernel, GaussianKernel, WassersteinKernel, tensor

# --------------------------------------------------------------------------------------------
# SKCE and UCME of quantile-spaced ensembles -> Normal predictions


def _normal_problem(n=8, n_test=4, seed=23):
    rng = np.random.default_rng(seed)
    mu, s = rng.normal(size=n), rng.uniform(0.5, 2.0, size=n)
    y = mu + 1.5 * s * rng.normal(size=n)          # miscalibrated: SKCE and UCME well above 0
    mt, st = rng.normal(size=n_test), rng.uniform(0.5, 2.0, size=n_test)
    yt = mt + st * rng.normal(size=n_test)
    return mu, s, y, mt, st, yt


def _midpoints(mu, s, m):
    z = stats.norm.ppf((np.arange(m) + 0.5) / m)
    return Empirical(mu[:, None] + s[:, None] * z[None, :])


@pytest.mark.parametrize("target_kernel, ms", [
    (GaussianKernel(1.0), (10, 100, 1000)),
    (ExponentialKernel(1.0), (10, 100)),
    pytest.param(ExponentialKernel(1.0), (10, 100, 1000), marks=pytest.mark.slow),
], ids=["gauss", "exp", "exp-1000"])
def test_skce_ucme_of_quantile_ensembles_converge_to_normal(target_kernel, ms):
    mu, s, y, mt, st, yt = _normal_problem()
    kernel = tensor(WassersteinKernel(1.0), target_kernel)
    normal = Normal(mu, s)
    ref = {"skce": skcalib.skce(y, normal, kernel=kernel),
           "ucme": skcalib.ucme(y, normal, kernel=kernel, test_predictions=Normal(mt, st),
                                test_targets=yt)}
    assert ref["skce"] > 5e-3 and ref["ucme"] > 5e-4   # far from 0: relative errors mean something
    # the kernel expectations row by row: e1 at the targets, e2 against the next row
    shifted = np.roll(np.arange(mu.size), 1)
    ref["e1"] = normal.expected_kernel(target_kernel, y)
    ref["e2"] = normal.expected_kernel_pair(target_kernel, normal[shifted])
    errors = {"skce": [], "ucme": [], "e1": [], "e2": []}
    for m in ms:
        ens = _midpoints(mu, s, m)
        got = {"skce": skcalib.skce(y, ens, kernel=kernel),
               "ucme": skcalib.ucme(y, ens, kernel=kernel,
                                    test_predictions=_midpoints(mt, st, m), test_targets=yt),
               "e1": ens.expected_kernel(target_kernel, y),
               "e2": ens.expected_kernel_pair(target_kernel, ens[shifted])}
        for name in errors:
            errors[name].append(float(np.max(np.abs(got[name] - ref[name]) / np.abs(ref[name]))))
    print(f"\n{type(target_kernel).__name__}, m = {ms}: relative errors {errors}")
    for name, err in errors.items():
        assert err[0] > 1e-4, (name, err)       # the discretisation error is visible at m = 10
        assert err[-1] < (5e-3 if ms[-1] == 100 else 1e-3), (name, err)
        # the m-th error is at most 3^-k of the first (measured: 5x to 200x per tenfold m; the
        # SKCE and UCME sum errors of both signs over pairs, so they need not shrink at every
        # step: the exponential kernel's SKCE error is 2.9e-4 at m = 100, 1.8e-4 at m = 1000)
        assert all(e < err[0] / 3 ** k for k, e in enumerate(err) if k), (name, err)
        if name in ("e1", "e2"):               # row by row: no cancellation, every step shrinks
            assert all(b < a / 3 for a, b in zip(err, err[1:])), (name, err)


def test_empirical_w2_converges_to_normal_w2():
    # the prediction side of the kernel above: W2 of two midpoint ensembles -> W2 of the normals
    mu, s = np.array([0.0, 1.0, -2.0]), np.array([1.0, 0.5, 2.0])
    mu2, s2 = np.array([0.5, 1.0, 1.0]), np.array([2.0, 0.5, 1.5])
    exact = np.sqrt((mu - mu2) ** 2 + (s - s2) ** 2)
    err = [np.max(np.abs(wasserstein_distance(_midpoints(mu, s, m), _midpoints(mu2, s2, m))
                         - exact)) for m in (10, 100, 1000)]
    assert err[0] > err[1] > err[2] and err[2] < 2e-3, err


# --------------------------------------------------------------------------------------------
# W2 of weighted empirical laws against scipy quadrature of the quantile integral


def step_quantile(x, w):
    """The quantile function ``Q(u) = min{x : F(x) >= u}`` of the law putting mass
    ``w / sum(w)`` on ``x``, and its breakpoints (the cumulative weights)."""
    x, w = np.asarray(x, float), np.asarray(w, float)
    keep = w > 0                                     # zero weights carry no mass
    o = np.argsort(x[keep], kind="stable")
    xs, cw = x[keep][o], np.cumsum(w[keep][o]) / w.sum()

    def Q(u):
        return xs[min(int(np.searchsorted(cw, u, side="left")), xs.size - 1)]

    return Q, cw


def quad_wasserstein(x1, w1, x2, w2, power=2):
    """``(int_0^1 |Q1(u) - Q2(u)|^power du)^(1 / power)`` by ``scipy.integrate.quad``."""
    Q1, c1 = step_quantile(x1, w1)
    Q2, c2 = step_quantile(x2, w2)
    brk = np.unique(np.concatenate([c1, c2]))
    brk = brk[(brk > 0) & (brk < 1)]
    val, abserr = integrate.quad(lambda u: abs(Q1(u) - Q2(u)) ** power, 0.0, 1.0,
                                 points=brk, limit=4 * brk.size + 50, epsabs=1e-14)
    assert abserr < 1e-10 * max(val, 1.0)
    return val ** (1.0 / power)


CASES = {
    # name: (x1, w1, x2, w2)
    "3 vs 8 draws, random weights": (
        [0.3, -1.2, 2.5], [0.2, 0.5, 0.3],
        [-0.7, 0.1, 1.9, 3.0, -2.2, 0.6, 1.1, 0.0],
        [0.05, 0.2, 0.1, 0.15, 0.1, 0.2, 0.1, 0.1]),
    "1 vs 5 draws": ([0.4], [1.0], [-1.0, 0.0, 2.0, 3.5, 1.0], [1.0, 2.0, 3.0, 1.0, 3.0]),
    "zero weights and ties": (
        [1.0, 1.0, -0.5, 7.0, 2.0], [0.25, 0.25, 0.3, 0.0, 0.2],
        [0.0, 5.0, 0.0, -3.0], [1.0, 0.0, 2.0, 1.0]),
    "thirds vs tenths": ([0.0, 1.0, 2.0], [1.0, 1.0, 1.0],
                         np.linspace(-1.0, 3.0, 10), [0.1] * 10),
    "far apart": ([1e3, 1e3 + 1.0], [0.3, 0.7], [-2.0, -1.0, 0.5], [0.6, 0.3, 0.1]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_step_quantile_reference_is_scipy_w1(case):
    # the reference's quantile functions are right: their W1 is scipy's
    x1, w1, x2, w2 = CASES[case]
    expect = stats.wasserstein_distance(x1, x2, w1, w2)
    assert quad_wasserstein(x1, w1, x2, w2, power=1) == pytest.approx(expect, rel=1e-10)


@pytest.mark.parametrize("case", list(CASES))
def test_w2_against_quantile_quadrature(case):
    x1, w1, x2, w2 = CASES[case]
    expect = quad_wasserstein(x1, w1, x2, w2)
    got = wasserstein_distance(Empirical([x1], [w1]), Empirical([x2], [w2]))
    assert_allclose(got, expect, rtol=1e-10)
    back = wasserstein_distance(Empirical([x2], [w2]), Empirical([x1], [w1]))
    assert_allclose(back, got, rtol=1e-12)


def test_w2_of_a_point_mass_is_the_root_mean_square_distance():
    # W2(delta_c, P) = sqrt(E (X - c)^2): a closed form for one side of size 1
    x, w = np.array([-1.0, 0.0, 2.0, 3.5, 1.0]), np.array([1.0, 2.0, 3.0, 1.0, 3.0])
    c = 0.4
    expect = math.sqrt(np.sum(w * (x - c) ** 2) / w.sum())
    got = wasserstein_distance(Empirical([[c]]), Empirical([x], [w]))
    assert_allclose(got, expect, rtol=1e-12)


def test_pairwise_w2_weighted_rows_against_quadrature():
    # a batch with zero-padded rows of different effective sizes: the pairwise matrix through
    # the kernels' path agrees with quadrature entry by entry
    rng = np.random.default_rng(5)
    n, m = 5, 6
    x = rng.normal(size=(n, m)) * rng.uniform(0.5, 2, size=(n, 1))
    w = rng.uniform(0.1, 1.0, size=(n, m))
    w[1, 3:] = 0.0
    w[3, :5] = 0.0
    D = pairwise_wasserstein(Empirical(x, w))
    expect = np.array([[quad_wasserstein(x[i], w[i], x[j], w[j]) for j in range(n)]
                       for i in range(n)])
    assert_allclose(D, expect, rtol=1e-9, atol=1e-7)
