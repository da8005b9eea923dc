"""The Quantiles family (predicted quantiles, linear interpolation, linear tails) against
independent computations: quadrature of the CDF and of the quantile function (scipy.integrate),
brute-force loops, Monte Carlo, and the Normal family as the levels fill (0, 1)."""

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import integrate, stats

import skcalib
from skcalib._expectations import has_closed_form, target_ops
from skcalib.distributions import (Empirical, Normal, Quantiles, concatenate,
                                   pairwise_wasserstein, wasserstein_distance)
from skcalib.kernels import ExponentialKernel, GaussianKernel, WassersteinKernel, tensor
from skcalib.stats import consistency_test, skce_test

TAU = np.array([0.1, 0.25, 0.5, 0.75, 0.9])


def _random(n=6, tau=TAU, seed=0, atoms=False):
    rng = np.random.default_rng(seed)
    v = np.sort(rng.normal(size=(n, tau.size)) * rng.uniform(0.5, 2, (n, 1)), axis=1)
    v += rng.normal(size=(n, 1))
    if atoms:
        v[0, 1] = v[0, 2]                     # an inner atom
        v[1, 0] = v[1, 1]                     # a flat lower tail: an atom at the minimum
    return v


def _knots(d, i):
    return d._u, d._q[i]


def _Q(d, i):
    u, q = _knots(d, i)
    return lambda p: np.interp(p, u, q)


def _kernel(kind, ls):
    if kind == "gauss":
        return GaussianKernel(ls), lambda t: math.exp(-0.5 * (t / ls) ** 2)
    return ExponentialKernel(ls), lambda t: math.exp(-abs(t) / ls)


# --------------------------------------------------------------------------------------------
# the interpolated law: cdf, left limit, density, sampling


def test_cdf_left_differs_only_by_the_atoms():
    d = Quantiles(_random(n=4, seed=1, atoms=True), TAU)
    for i in range(4):
        u, q = _knots(d, i)
        for y in np.concatenate([q, q + 1e-3, [q[0] - 1, q[-1] + 1]]):
            left = d[i]._cdf_left(y)[0]
            below = d[i].cdf(np.nextafter(y, -np.inf))[0]     # P(Y < y) = F(y-)
            assert_allclose(left, below, atol=1e-9)
            atom = sum(u[k + 1] - u[k] for k in range(q.size - 1) if q[k] == q[k + 1] == y)
            assert_allclose(d[i].cdf(y)[0] - left, atom, atol=1e-12)


def test_log_pdf_is_the_derivative_of_the_cdf_and_nll_works():
    v = _random(n=5, seed=2)
    d = Quantiles(v, TAU)
    rng = np.random.default_rng(3)
    y = d.sample(random_state=rng)
    eps = 1e-6
    num = (d.cdf(y + eps) - d.cdf(y - eps)) / (2 * eps)
    assert_allclose(np.exp(d.log_pdf(y)), num, rtol=1e-6)
    outside = d._q[:, -1] + 0.5
    assert np.all(d.log_pdf(outside) == -np.inf)
    # the density integrates to 1 over the support
    for i in range(5):
        u, q = _knots(d, i)
        mass = integrate.quad(lambda t: np.exp(d[i].log_pdf(t)[0]), q[0], q[-1],
                              points=q[1:-1], limit=200)[0]
        assert_allclose(mass, 1.0, rtol=1e-9)
    assert_allclose(skcalib.nll(y, d), -np.mean(d.log_pdf(y)), rtol=1e-13)


def test_log_pdf_refuses_rows_with_atoms():
    d = Quantiles(_random(n=3, seed=4, atoms=True), TAU)
    with pytest.raises(ValueError, match="row 0 has repeated quantiles"):
        d.log_pdf(0.0)
    with pytest.raises(ValueError, match="no density"):
        skcalib.nll(np.zeros(3), d)


def test_sampling_is_vectorised_and_follows_the_cdf():
    d = Quantiles(_random(n=3, seed=5, atoms=True), TAU)
    Z = d.sample(random_state=0, size=100_000)
    assert Z.shape == (100_000, 3)
    # the draws are Q(U) for the uniforms the generator gives, row by row
    U = np.random.default_rng(0).uniform(size=(100_000, 3))
    for i in range(3):
        assert_allclose(Z[:, i], _Q(d, i)(U[:, i]), rtol=1e-13, atol=1e-13)
        grid = np.linspace(d._q[i, 0], d._q[i, -1], 13)
        emp = (Z[:, i][:, None] <= grid).mean(axis=0)
        cdf = d[np.full(13, i)].cdf(grid)
        assert np.max(np.abs(emp - cdf)) < 5 * math.sqrt(0.25 / 100_000)


# --------------------------------------------------------------------------------------------
# CRPS


def _crps_quad(d, i, y):
    """``int (F(x) - 1{x >= y})^2 dx`` by quadrature of the CDF."""
    u, q = _knots(d, i)
    lo, hi = min(q[0], y), max(q[-1], y)
    pts = np.unique(np.concatenate([q, [y]]))
    f = lambda x: (d[i].cdf(x)[0] - (x >= y)) ** 2   # noqa: E731
    total = 0.0
    for a, b in zip(pts[:-1], pts[1:]):
        if lo <= a < b <= hi:
            total += integrate.quad(f, a, b, epsabs=1e-13, epsrel=1e-12)[0]
    return total


def test_crps_against_quadrature_of_the_cdf():
    v = _random(n=6, seed=6, atoms=True)
    d = Quantiles(v, TAU)
    y = np.array([v[0, 2], v[1, 0], -5.0, 5.0, v[4, 3] + 0.1, 0.0])
    got = skcalib.crps(y, d, reduction="none")
    assert_allclose(got, [_crps_quad(d, i, y[i]) for i in range(6)], rtol=1e-10, atol=1e-13)
    # large offsets: centred computation
    assert_allclose(Quantiles(v + 1e8, TAU)._crps(y + 1e8), got, rtol=1e-7)


def test_crps_is_the_normal_crps_as_levels_fill_the_unit_interval():
    rng = np.random.default_rng(7)
    loc, scale, y = rng.normal(size=8), rng.uniform(0.5, 2, 8), rng.normal(size=8)
    exact = skcalib.crps(y, Normal(loc, scale), reduction="none")
    errs = []
    for q in (50, 400):
        tau = (np.arange(q) + 0.5) / q
        d = Quantiles(loc[:, None] + scale[:, None] * stats.norm.ppf(tau), tau)
        errs.append(np.max(np.abs(d._crps(y) - exact)))
    assert errs[1] < errs[0] / 4 and errs[1] < 2e-3


def test_quantile_score_estimator_against_a_loop_and_its_bias():
    v = _random(n=5, seed=8)
    d = Quantiles(v, TAU)
    y = np.random.default_rng(9).normal(size=5)
    expect = [2 / TAU.size * sum((float(y[i] < v[i, j]) - TAU[j]) * (v[i, j] - y[i])
                                 for j in range(TAU.size)) for i in range(5)]
    assert_allclose(d._crps_estimate(y, "quantile_score"), expect, rtol=1e-13)
    # a Riemann sum of the CRPS integral: close for many evenly spread levels, off for few
    rng = np.random.default_rng(10)
    loc, y = rng.normal(size=200), rng.normal(size=200)
    exact = skcalib.crps(y, Normal(loc, 1.0))
    for q, tol in ((400, 1e-3), (9, None)):
        tau = (np.arange(q) + 0.5) / q
        qs = Quantiles(loc[:, None] + stats.norm.ppf(tau), tau)
        est = np.mean(qs._crps_estimate(y, "quantile_score"))
        if tol:
            assert abs(est - exact) < tol
        else:      # nine levels: a biased Riemann sum (about 1% of the CRPS here)
            assert abs(exact - est) > 5e-3
    with pytest.raises(ValueError, match="estimator='fair' is not available for Quantiles"):
        d._crps_estimate(y, "fair")
    assert Quantiles._crps_estimators == ("quantile_score",)


# --------------------------------------------------------------------------------------------
# kernel expectations


def _e1_quad(d, i, y, k):
    u, q = _knots(d, i)
    total = 0.0
    for s in range(q.size - 1):
        a, b, w = q[s], q[s + 1], u[s + 1] - u[s]
        if b == a:
            total += w * k(a - y)
        else:
            pts = [y] if a < y < b else None
            total += w * integrate.quad(lambda x: k(x - y), a, b, points=pts,
                                        epsabs=1e-15, epsrel=1e-12, limit=200)[0] / (b - a)
    return total


def _e2_quad(d1, i, d2, j, k, ls):
    (u1, q1), (u2, q2) = _knots(d1, i), _knots(d2, j)
    total = 0.0
    for s in range(q1.size - 1):
        a, b, w = q1[s], q1[s + 1], u1[s + 1] - u1[s]
        for t in range(q2.size - 1):
            c, e, v = q2[t], q2[t + 1], u2[t + 1] - u2[t]
            if b == a and e == c:
                val = k(a - c)
            elif b == a or e == c:
                p, lo, hi = (a, c, e) if b == a else (c, a, b)
                val = integrate.quad(lambda x: k(x - p), lo, hi, epsabs=1e-15, epsrel=1e-12,
                                     points=[p] if lo < p < hi else None,
                                     limit=200)[0] / (hi - lo)
            else:       # nested quadrature, split where the kernel's bump is
                def inner(x):
                    pts = [p for p in (x - 8 * ls, x, x + 8 * ls) if c < p < e]
                    return integrate.quad(lambda z: k(x - z), c, e, epsabs=1e-15,
                                          epsrel=1e-12, points=pts or None, limit=200)[0]
                pts = [p for p in (c - 8 * ls, c, c + 8 * ls, e - 8 * ls, e, e + 8 * ls)
                       if a < p < b]
                val = integrate.quad(inner, a, b, epsabs=1e-15, epsrel=1e-12,
                                     points=pts or None, limit=200)[0] / ((b - a) * (e - c))
            total += w * v * val
    return total


@pytest.mark.parametrize("kind", ["gauss", "exp"])
@pytest.mark.parametrize("rel", [1e-12, 1e-3, 0.09, 0.11, 1.0, 1e3])
def test_e1_e2_against_quadrature_for_widths_relative_to_the_length_scale(kind, rel):
    # rows whose segments are about ``rel`` length scales wide, with atoms, near-atoms,
    # overlapping and disjoint segments
    ls = 0.7
    w = rel * ls
    v = np.array([[0.0, w, 2 * w, 2 * w, 3.5 * w],
                  [0.3 * w, 0.3 * w + 1e-9 * ls, 1.2 * w, 4 * w, 4.1 * w],
                  [-2 * ls, -2 * ls + w, 5 * w, 5 * w + 0.5 * ls, 6 * w + ls]])
    tau = np.array([0.1, 0.3, 0.5, 0.7, 0.95])
    d = Quantiles(v, tau)
    kernel, k = _kernel(kind, ls)
    y = np.array([0.5 * w, 0.3 * w, -ls])
    assert_allclose(d.expected_kernel(kernel, y), [_e1_quad(d, i, y[i], k) for i in range(3)],
                    rtol=1e-10, atol=1e-12)
    other = Quantiles(v[::-1] + 0.2 * w, [0.2, 0.4, 0.5, 0.6, 0.8])     # different levels
    assert_allclose(d.expected_kernel_pair(kernel, other),
                    [_e2_quad(d, i, other, i, k, ls) for i in range(3)], rtol=1e-10, atol=1e-12)
    assert_allclose(d.expected_kernel_pair(kernel),
                    [_e2_quad(d, i, d, i, k, ls) for i in range(3)], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind", ["gauss", "exp"])
def test_e1_e2_against_monte_carlo_and_closed_form_flag(kind):
    d = Quantiles(_random(n=4, seed=11, atoms=True), TAU)
    kernel, _ = _kernel(kind, 0.8)
    assert has_closed_form(d, kernel)
    Z, Z2 = d.sample(random_state=1, size=200_000), d.sample(random_state=2, size=200_000)
    y = np.array([0.0, 0.5, -1.0, 2.0])
    kf = np.vectorize(_kernel(kind, 0.8)[1])
    mc1 = np.mean(kf(Z - y), axis=0)
    mc2 = np.mean(kf(Z - Z2[:, ::-1]), axis=0)
    assert_allclose(d.expected_kernel(kernel, y), mc1, atol=5 * 0.5 / math.sqrt(200_000))
    assert_allclose(d.expected_kernel_pair(kernel, d[::-1]), mc2,
                    atol=5 * 0.5 / math.sqrt(200_000))


@pytest.mark.parametrize("ls, limit", [(1e-200, 0.0), (1e200, 1.0)])
def test_extreme_length_scales_give_the_limits(ls, limit):
    d = Quantiles(_random(n=3, seed=12), TAU)
    for kernel in (GaussianKernel(ls), ExponentialKernel(ls)):
        assert_allclose(d.expected_kernel(kernel, [0.0, 0.1, 0.2]), limit, atol=1e-12)
        assert_allclose(d.expected_kernel_pair(kernel, d[::-1]), limit, atol=1e-12)


def test_blocks_bound_memory_and_do_not_change_results(monkeypatch):
    import skcalib.distributions._quantiles as mod
    d = Quantiles(_random(n=40, seed=13, atoms=True), TAU)
    y = np.linspace(-1, 1, 40)
    for kernel in (GaussianKernel(0.5), ExponentialKernel(0.5)):
        ops = target_ops(d, y, kernel)
        a, b = np.arange(40), np.arange(40)
        full = (ops.e1(ops.P(a, "row"), ops.Y(b, "col")), ops.e2(ops.P(a, "row"), ops.P(b, "col")))
        monkeypatch.setattr(mod, "_BLOCK_ITEMS", 1)
        small = (ops.e1(ops.P(a, "row"), ops.Y(b, "col")), ops.e2(ops.P(a, "row"), ops.P(b, "col")))
        monkeypatch.undo()
        assert_allclose(small[0], full[0], rtol=1e-14)
        assert_allclose(small[1], full[1], rtol=1e-14)
        assert_allclose(full[1], full[1].T, rtol=1e-12, atol=1e-15)   # symmetric
    assert d._pair_cost() == (TAU.size + 2) ** 2


def _skce_brute(d, y, kernel, ls_pred):
    n = len(d)
    total, count = 0.0, 0
    for i in range(n):
        for j in range(i + 1, n):
            kp = math.exp(-float(wasserstein_distance(d[i], d[j])[0]) / ls_pred)
            e1ij = d[i].expected_kernel(kernel, [y[j]])[0]
            e1ji = d[j].expected_kernel(kernel, [y[i]])[0]
            e2 = d[i].expected_kernel_pair(kernel, d[j])[0]
            ky = float(kernel(np.array([[y[i]]]), np.array([[y[j]]]))[0, 0])
            total += kp * (ky - e1ij - e1ji + e2)
            count += 1
    return total / count


@pytest.mark.parametrize("kind", ["gauss", "exp"])
def test_skce_against_brute_force_u_statistic(kind):
    v = _random(n=12, seed=14, atoms=True)
    d = Quantiles(v, TAU)
    y = d.mean + np.random.default_rng(15).normal(size=12)
    kernel, _ = _kernel(kind, 0.9)
    got = skcalib.skce(y, d, kernel=tensor(WassersteinKernel(1.3), kernel))
    assert_allclose(got, _skce_brute(d, y, kernel, 1.3), rtol=1e-10, atol=1e-14)


def test_skce_agrees_with_monte_carlo_from_large_empirical_samples():
    rng = np.random.default_rng(16)
    n = 15
    d = Quantiles(_random(n=n, seed=17), TAU)
    y = d.mean + 1.5 * rng.normal(size=n)
    kernel = tensor(WassersteinKernel(5.0), GaussianKernel(1.0))
    exact = skcalib.skce(y, d, kernel=kernel)
    est = [skcalib.skce(y, Empirical(d.sample(random_state=s, size=400).T), kernel=kernel)
           for s in range(6)]
    se = np.std(est, ddof=1) / math.sqrt(len(est))
    assert abs(np.mean(est) - exact) < 4 * se + 2e-3 * abs(exact)
    assert abs(exact) > 10 * se       # the check can fail


def test_skce_test_ucme_and_consistency_test_run_without_monte_carlo(monkeypatch):
    import skcalib._expectations as ex

    def refuse(*args, **kwargs):
        raise AssertionError("the Monte-Carlo fallback was used")

    monkeypatch.setattr(ex, "_MonteCarloOps", refuse)
    rng = np.random.default_rng(18)
    n = 40
    d = Quantiles(_random(n=n, seed=19), TAU)
    y = d.sample(random_state=rng)
    for kernel in (None, tensor(WassersteinKernel(1.0), ExponentialKernel(1.0))):
        assert np.isfinite(skcalib.skce(y, d, kernel=kernel))
        assert np.isfinite(skcalib.ucme(y, d, kernel=kernel, random_state=0))
        res = skce_test(y, d, kernel=kernel, method="block", random_state=0)
        assert 0.0 <= res.pvalue <= 1.0
    res = consistency_test("skce", y, d, n_resamples=20, random_state=0)
    assert 0.0 <= res.pvalue <= 1.0


# --------------------------------------------------------------------------------------------
# 2-Wasserstein


def _w2_quad(d1, i, d2, j):
    pts = np.union1d(d1._u, d2._u)
    f = lambda p: (_Q(d1, i)(p) - _Q(d2, j)(p)) ** 2     # noqa: E731
    return math.sqrt(sum(integrate.quad(f, a, b, epsabs=1e-14, epsrel=1e-13)[0]
                         for a, b in zip(pts[:-1], pts[1:])))


def test_w2_same_and_different_levels_against_quantile_quadrature():
    d = Quantiles(_random(n=4, seed=20, atoms=True), TAU)
    e = Quantiles(_random(n=4, seed=21), TAU)
    f = Quantiles(_random(n=4, tau=np.array([0.05, 0.5, 0.6, 0.99]), seed=22),
                  [0.05, 0.5, 0.6, 0.99])
    assert_allclose(wasserstein_distance(d, e), [_w2_quad(d, i, e, i) for i in range(4)],
                    rtol=1e-10)
    assert_allclose(wasserstein_distance(d, f), [_w2_quad(d, i, f, i) for i in range(4)],
                    rtol=1e-10)
    P = pairwise_wasserstein(d, f)
    assert_allclose(P, [[_w2_quad(d, i, f, j) for j in range(4)] for i in range(4)], rtol=1e-10)
    # same levels: differences of the embedding are the distances
    E = d._embedding()
    D = np.sqrt(((E[:, None] - E[None]) ** 2).sum(-1))
    assert_allclose(D, [[_w2_quad(d, i, d, j) for j in range(4)] for i in range(4)],
                    rtol=1e-10, atol=1e-12)
    # concatenation over the union of levels leaves every law (so every distance) unchanged
    c = concatenate([d, f])
    assert_allclose(wasserstein_distance(c[:4], d), 0.0, atol=1e-7)
    assert_allclose(wasserstein_distance(c[4:], f), 0.0, atol=1e-7)


def test_large_offsets_and_moments_in_units():
    v = _random(n=4, seed=23, atoms=True)
    d, far = Quantiles(v, TAU), Quantiles(v + 1e6, TAU)
    y = np.array([0.1, -0.3, 0.7, 2.0])
    for kernel in (GaussianKernel(0.6), ExponentialKernel(0.6)):
        assert_allclose(far.expected_kernel(kernel, y + 1e6), d.expected_kernel(kernel, y),
                        atol=1e-9)
        assert_allclose(far.expected_kernel_pair(kernel, far[::-1]),
                        d.expected_kernel_pair(kernel, d[::-1]), atol=1e-9)
    m, var = d._moments(2.0)
    assert_allclose(m[:, 0] * 2.0, d.mean, rtol=1e-13)
    assert_allclose(var * 4.0, d.variance, rtol=1e-12)
    # against quadrature of the quantile function
    for i in range(4):
        pts = d._u
        mean = sum(integrate.quad(_Q(d, i), a, b)[0] for a, b in zip(pts[:-1], pts[1:]))
        sq = sum(integrate.quad(lambda p: (_Q(d, i)(p) - mean) ** 2, a, b)[0]
                 for a, b in zip(pts[:-1], pts[1:]))
        assert_allclose([d.mean[i], d.variance[i]], [mean, sq], rtol=1e-10)
