"""Tests of skcalib.stats.ucme_test (the CME Hotelling test).

The statistic is checked against ``n * mean^T inv(cov) mean`` of a witness matrix built here
from scratch (closed forms, quadrature and brute-force optimal transport; not skcalib's witness
code), for class probabilities and every family of predictive distributions.
"""

import itertools

import numpy as np
import pytest
from scipy import integrate, linalg
from scipy import stats as sps

import skcalib
from skcalib import ucme
from skcalib.distributions import Laplace, Mixture, MultivariateNormal, Normal
from skcalib.kernels import (
    DeltaKernel,
    ExponentialKernel,
    GaussianKernel,
    WassersteinKernel,
    tensor,
)
from skcalib.stats import CalibrationTestResult, ucme_test
from skcalib.stats import _ucme


def _hotelling(W):
    """Brute force: ``n * mean^T inv(cov) mean`` of an explicit ``n x J`` matrix."""
    n = W.shape[0]
    m = W.mean(axis=0)
    S = np.cov(W, rowvar=False, ddof=1)
    return n * m @ np.linalg.inv(np.atleast_2d(S)) @ m


def _check(res, W, *, rtol=1e-10):
    J = W.shape[1]
    Q = _hotelling(W)
    assert isinstance(res, CalibrationTestResult)
    np.testing.assert_allclose(res.statistic, Q, rtol=rtol)
    np.testing.assert_allclose(res.estimate, np.mean(W.mean(axis=0) ** 2), rtol=1e-12)
    assert res.pvalue == sps.chi2.sf(res.statistic, J)
    assert res.df == J and res.method == "hotelling" and res.n_samples == W.shape[0]
    assert res.n_resamples is None and res.null_distribution is None
    statistic, pvalue = res
    assert (statistic, pvalue) == (res.statistic, res.pvalue)


def _dirichlet_data(rng, n, C, *, calibrated=True):
    P = rng.dirichlet(np.ones(C), size=n)
    if calibrated:
        y = (rng.random(n)[:, None] > np.cumsum(P, axis=1)).sum(axis=1)
    else:
        y = np.zeros(n, dtype=int)
    return P, np.minimum(y, C - 1)


# --------------------------------------------------------------------------------------------
# The statistic against brute force


def _class_witness(P, y, tP, ty, length_scale):
    d2 = ((P[:, None, :] - tP[None, :, :]) ** 2).sum(axis=2)
    k = np.exp(-d2 / (2 * length_scale ** 2))
    resid = (y[:, None] == ty[None, :]).astype(float) - P[:, ty]
    return k * resid


def test_classification_statistic_equals_brute_force():
    rng = np.random.default_rng(1)
    n, C, J = 80, 3, 4
    P, y = _dirichlet_data(rng, n, C)
    y[:10] = 0  # some miscalibration, so the statistic is not tiny
    tP = rng.dirichlet(np.ones(C), size=J)
    ty = np.array([0, 1, 2, 0])
    res = ucme_test(y, P, kernel=GaussianKernel(0.6), test_predictions=tP, test_targets=ty)
    _check(res, _class_witness(P, y, tP, ty, 0.6))
    # The same with an explicit tensor kernel and string labels.
    names = np.array(["a", "b", "c"])
    res2 = ucme_test(names[y], P, kernel=tensor(GaussianKernel(0.6), DeltaKernel()),
                     test_predictions=tP, test_targets=names[ty], labels=names)
    np.testing.assert_allclose(res2.statistic, res.statistic, rtol=1e-13)


def test_binary_one_column_equals_brute_force_and_two_columns():
    rng = np.random.default_rng(2)
    n, J = 70, 3
    p = rng.random(n)
    y = (rng.random(n) < p ** 1.5).astype(int)
    tp = np.array([0.9, 0.5, 0.2])
    ty = np.array([1, 1, 0])
    res = ucme_test(y, p, kernel=GaussianKernel(0.5), test_predictions=tp, test_targets=ty)
    P2 = np.column_stack([1 - p, p])
    tP2 = np.column_stack([1 - tp, tp])
    _check(res, _class_witness(P2, y, tP2, ty, 0.5))
    res2 = ucme_test(y, P2, kernel=GaussianKernel(0.5), test_predictions=tP2, test_targets=ty)
    np.testing.assert_allclose(res.statistic, res2.statistic, rtol=1e-12)


def _normal_e1(mu, sigma, t, ls):
    """E exp(-(Z - t)^2 / (2 ls^2)) for Z ~ N(mu, sigma^2)."""
    s2 = ls ** 2 + sigma ** 2
    return ls / np.sqrt(s2) * np.exp(-((mu - t) ** 2) / (2 * s2))


def test_normal_statistic_equals_brute_force():
    rng = np.random.default_rng(3)
    n, J, ls = 90, 4, 0.7
    mu, sig = rng.normal(size=n), rng.uniform(0.3, 1.5, size=n)
    y = mu + 1.3 * sig * rng.normal(size=n)  # overconfident
    tmu, tsig = rng.normal(size=J), rng.uniform(0.3, 1.5, size=J)
    ty = rng.normal(size=J)
    res = ucme_test(y, Normal(mu, sig), kernel=tensor(WassersteinKernel(1.0), GaussianKernel(ls)),
                    test_predictions=Normal(tmu, tsig), test_targets=ty)
    w2 = np.sqrt((mu[:, None] - tmu) ** 2 + (sig[:, None] - tsig) ** 2)
    W = np.exp(-w2) * (np.exp(-((y[:, None] - ty) ** 2) / (2 * ls ** 2))
                       - _normal_e1(mu[:, None], sig[:, None], ty, ls))
    _check(res, W)


def _bures(m1, S1, m2, S2):
    r2 = linalg.sqrtm(S2)
    cross = np.real(linalg.sqrtm(r2 @ S1 @ r2))
    return np.sqrt(max(np.sum((m1 - m2) ** 2) + np.trace(S1 + S2 - 2 * cross), 0.0))


def test_multivariate_normal_statistic_equals_brute_force():
    rng = np.random.default_rng(4)
    n, J, d, ls = 50, 3, 2, 1.2
    mean = rng.normal(size=(n, d))
    A = rng.normal(size=(n, d, d)) * 0.5
    cov = A @ A.transpose(0, 2, 1) + 0.2 * np.eye(d)
    y = mean + rng.normal(size=(n, d)) * 1.2
    tA = rng.normal(size=(J, d, d)) * 0.5
    tmean, tcov = rng.normal(size=(J, d)), tA @ tA.transpose(0, 2, 1) + 0.2 * np.eye(d)
    ty = rng.normal(size=(J, d))
    with pytest.warns(UserWarning):  # non-commuting covariances: KernelValidityWarning
        res = ucme_test(y, MultivariateNormal(mean, cov),
                        kernel=tensor(WassersteinKernel(2.0), GaussianKernel(ls)),
                        test_predictions=MultivariateNormal(tmean, tcov), test_targets=ty)
    W = np.empty((n, J))
    for i, j in itertools.product(range(n), range(J)):
        kp = np.exp(-_bures(mean[i], cov[i], tmean[j], tcov[j]) / 2.0)
        diff = mean[i] - ty[j]
        M = ls ** 2 * np.eye(d) + cov[i]
        e1 = ls ** d / np.sqrt(np.linalg.det(M)) * np.exp(-0.5 * diff @ np.linalg.solve(M, diff))
        ky = np.exp(-np.sum((y[i] - ty[j]) ** 2) / (2 * ls ** 2))
        W[i, j] = kp * (ky - e1)
    _check(res, W)


def _laplace_e1(mu, b, t, ls):
    """E exp(-|Z - t| / ls) for Z ~ Laplace(mu, b), by quadrature."""
    f = lambda z: np.exp(-abs(z - t) / ls) * np.exp(-abs(z - mu) / b) / (2 * b)  # noqa: E731
    lo, hi = sorted((mu, t))
    parts = [integrate.quad(f, -np.inf, lo, epsabs=0, epsrel=1e-13, limit=200)[0],
             integrate.quad(f, lo, hi, epsabs=0, epsrel=1e-13, limit=200)[0],
             integrate.quad(f, hi, np.inf, epsabs=0, epsrel=1e-13, limit=200)[0]]
    return sum(parts)


def test_laplace_statistic_equals_brute_force():
    rng = np.random.default_rng(5)
    n, J, ls = 40, 3, 0.8
    mu, b = rng.normal(size=n), rng.uniform(0.3, 1.2, size=n)
    y = mu + rng.laplace(size=n) * b * 0.6  # underconfident
    tmu, tb, ty = rng.normal(size=J), rng.uniform(0.3, 1.2, size=J), rng.normal(size=J)
    res = ucme_test(y, Laplace(mu, b), kernel=tensor(WassersteinKernel(1.0), ExponentialKernel(ls)),
                    test_predictions=Laplace(tmu, tb), test_targets=ty)
    # W2 between Laplace laws: same shape, so W2^2 = dmu^2 + Var(standard Laplace) db^2.
    w2 = np.sqrt((mu[:, None] - tmu) ** 2 + 2 * (b[:, None] - tb) ** 2)
    e1 = np.array([[_laplace_e1(mu[i], b[i], ty[j], ls) for j in range(J)] for i in range(n)])
    W = np.exp(-w2) * (np.exp(-np.abs(y[:, None] - ty) / ls) - e1)
    # Quadrature is accurate to ~1e-13 relative; Q amplifies that by the condition of S.
    _check(res, W, rtol=1e-9)


def _mixture_w2(wa, ma, sa, wb, mb, sb):
    """Mixture Wasserstein distance of two 2-component normal mixtures: the optimal coupling of
    the component weights for costs W2^2(a_k, b_l); the LP's optimum is at a vertex."""
    c = (ma[:, None] - mb[None, :]) ** 2 + (sa[:, None] - sb[None, :]) ** 2
    lo, hi = max(0.0, wa[0] + wb[0] - 1.0), min(wa[0], wb[0])
    costs = []
    for t in (lo, hi):
        pi = np.array([[t, wa[0] - t], [wb[0] - t, 1.0 - wa[0] - wb[0] + t]])
        costs.append(np.sum(pi * c))
    return np.sqrt(max(min(costs), 0.0))


def test_mixture_statistic_equals_brute_force():
    rng = np.random.default_rng(6)
    n, J, ls = 50, 3, 0.9
    wts = rng.dirichlet([2, 2], size=n)
    m, s = rng.normal(size=(n, 2)), rng.uniform(0.3, 1.0, size=(n, 2))
    comp = (rng.random(n) > wts[:, 0]).astype(int)
    y = m[np.arange(n), comp] + s[np.arange(n), comp] * rng.normal(size=n) + 0.5  # biased
    pred = Mixture(wts, [Normal(m[:, 0], s[:, 0]), Normal(m[:, 1], s[:, 1])])
    tw = rng.dirichlet([2, 2], size=J)
    tm, ts = rng.normal(size=(J, 2)), rng.uniform(0.3, 1.0, size=(J, 2))
    ty = rng.normal(size=J)
    tpred = Mixture(tw, [Normal(tm[:, 0], ts[:, 0]), Normal(tm[:, 1], ts[:, 1])])
    res = ucme_test(y, pred, kernel=tensor(WassersteinKernel(1.0), GaussianKernel(ls)),
                    test_predictions=tpred, test_targets=ty)
    W = np.empty((n, J))
    for i, j in itertools.product(range(n), range(J)):
        kp = np.exp(-_mixture_w2(wts[i], m[i], s[i], tw[j], tm[j], ts[j]))
        e1 = sum(wts[i, k] * _normal_e1(m[i, k], s[i, k], ty[j], ls) for k in range(2))
        W[i, j] = kp * (np.exp(-((y[i] - ty[j]) ** 2) / (2 * ls ** 2)) - e1)
    _check(res, W)


# --------------------------------------------------------------------------------------------
# Agreement with skcalib.ucme, determinism, chunking


def _normal_data(rng, n):
    mu, sig = rng.normal(size=n), rng.uniform(0.5, 1.5, size=n)
    return mu + sig * rng.normal(size=n), Normal(mu, sig)


def _cases():
    rng = np.random.default_rng(7)
    P, y = _dirichlet_data(rng, 120, 4)
    yield "classification", y, P, {}
    p = rng.random(120)
    yield "binary", (rng.random(120) < p).astype(int), p, {}
    yn, dn = _normal_data(rng, 120)
    yield "normal", yn, dn, {}
    mu, b = rng.normal(size=120), rng.uniform(0.5, 1.0, size=120)
    # Laplace predictions with a Gaussian target kernel: the Monte-Carlo fallback.
    yield "laplace-mc", mu + rng.laplace(size=120) * b, Laplace(mu, b), {
        "kernel": tensor(WassersteinKernel(1.0), GaussianKernel("median")), "n_mc_samples": 30}
    yield "laplace", mu + rng.laplace(size=120) * b, Laplace(mu, b), {}
    mean = rng.normal(size=(120, 2))
    yield "mvn", mean + rng.normal(size=(120, 2)), MultivariateNormal(mean, np.ones((120, 2))), {}
    mix = Mixture([0.3, 0.7], [Normal(mu, b), Normal(mu + 1, b)])
    yield "mixture", mu + rng.normal(size=120), mix, {}


CASES = list(_cases())


@pytest.mark.parametrize("name, y, pred, kw", CASES, ids=[c[0] for c in CASES])
def test_estimate_equals_ucme_and_is_deterministic(name, y, pred, kw):
    res = ucme_test(y, pred, n_test_locations=5, random_state=11, **kw)
    assert res.estimate == ucme(y, pred, n_test_locations=5, random_state=11, **kw)
    again = ucme_test(y, pred, n_test_locations=5, random_state=11, **kw)
    assert (again.statistic, again.pvalue, again.estimate) == (res.statistic, res.pvalue,
                                                               res.estimate)
    # A Generator consumed in the same order as ucme consumes it.
    g1, g2 = np.random.default_rng(5), np.random.default_rng(5)
    assert ucme_test(y, pred, n_test_locations=5, random_state=g1, **kw).estimate == \
        ucme(y, pred, n_test_locations=5, random_state=g2, **kw)
    # Another seed draws other test locations.
    other = ucme_test(y, pred, n_test_locations=5, random_state=12, **kw)
    assert other.statistic != res.statistic
    assert 0.0 <= res.pvalue <= 1.0 and res.df == 5


@pytest.mark.parametrize("name, y, pred, kw", CASES, ids=[c[0] for c in CASES])
def test_chunk_size_invariance(name, y, pred, kw):
    ref = ucme_test(y, pred, n_test_locations=4, random_state=3, **kw)
    for chunk in (1, 7, 64, 1000):
        res = ucme_test(y, pred, n_test_locations=4, random_state=3, chunk_size=chunk, **kw)
        np.testing.assert_allclose(res.statistic, ref.statistic, rtol=1e-10)
        np.testing.assert_allclose(res.estimate, ref.estimate, rtol=1e-12)


def _fold(W, chunk):
    qr = _ucme._WitnessQR(W.shape[1])
    for s in range(0, W.shape[0], chunk):
        qr.update(W[s:s + chunk])
    return qr


def test_streaming_qr_holds_mean_and_covariance():
    rng = np.random.default_rng(8)
    # A large common offset: E[x^2] - E[x]^2 would lose every digit of the first column here.
    E = rng.normal(size=(1000, 3)) * np.array([1e-3, 1.0, 5.0])
    X = 1e6 + E  # X - 1e6 == E up to the rounding of X itself
    exact_cov = np.cov(X - 1e6, rowvar=False)
    naive = (X * X).mean(axis=0) - X.mean(axis=0) ** 2
    assert abs(naive[0] * 1000 / 999 - exact_cov[0, 0]) > 0.5 * exact_cov[0, 0]
    for chunk in (1, 13, 1000):
        qr = _fold(X, chunk)
        assert qr.n == 1000 and qr.R.shape == (4, 4)
        L = np.triu(qr.R[1:, 1:])
        np.testing.assert_allclose(L.T @ L / 999, exact_cov, rtol=1e-8, atol=1e-12)
        np.testing.assert_allclose(qr.mean(), X.mean(axis=0), rtol=1e-14)


def _exact_hotelling(W):
    """``n z^T S^-1 z`` in exact rational arithmetic on the float entries of ``W``."""
    from fractions import Fraction

    n, J = W.shape
    F = [[Fraction(float(v)) for v in row] for row in W]
    z = [sum(F[i][j] for i in range(n)) / n for j in range(J)]
    S = [[sum((F[i][a] - z[a]) * (F[i][b] - z[b]) for i in range(n)) / (n - 1)
          for b in range(J)] for a in range(J)]
    A = [S[a][:] + [z[a]] for a in range(J)]  # solve S x = z by Gauss-Jordan elimination
    for c in range(J):
        piv = next(r for r in range(c, J) if A[r][c] != 0)
        A[c], A[piv] = A[piv], A[c]
        for r in range(J):
            if r != c and A[r][c] != 0:
                f = A[r][c] / A[c][c]
                A[r] = [x - f * y for x, y in zip(A[r], A[c])]
    x = [A[c][J] / A[c][c] for c in range(J)]
    return float(n * sum(zi * xi for zi, xi in zip(z, x)))


def test_statistic_is_accurate_for_ill_conditioned_witnesses():
    """Nearly collinear witnesses (correlation matrix condition ~1e13): the QR gives the exact
    statistic to ~1e-9; forming and inverting S loses about five more digits."""
    rng = np.random.default_rng(17)
    n = 60
    x = rng.normal(size=n) + 0.3
    W = np.column_stack([x, x + 1e-6 * rng.normal(size=n), rng.normal(size=n) + 0.1])
    exact = _exact_hotelling(W)
    for chunk in (1, 7, 60):
        qr = _fold(W, chunk)
        np.testing.assert_allclose(qr.statistic(), exact, rtol=1e-8)


def test_statistic_of_well_conditioned_witnesses_is_exact():
    rng = np.random.default_rng(18)
    W = rng.normal(size=(30, 4)) + 0.2
    np.testing.assert_allclose(_fold(W, 4).statistic(), _exact_hotelling(W), rtol=1e-13)


def test_given_test_locations_are_used_and_not_drawn():
    rng = np.random.default_rng(9)
    P, y = _dirichlet_data(rng, 100, 3)
    tP, ty = rng.dirichlet(np.ones(3), size=4), np.array([0, 1, 2, 1])
    a = ucme_test(y, P, kernel=GaussianKernel(0.5), test_predictions=tP, test_targets=ty,
                  random_state=0)
    b = ucme_test(y, P, kernel=GaussianKernel(0.5), test_predictions=tP, test_targets=ty,
                  random_state=1, n_test_locations=2)
    assert a.statistic == b.statistic and a.df == b.df == 4
    _check(a, _class_witness(P, y, tP, ty, 0.5))


def test_inputs_are_not_mutated():
    rng = np.random.default_rng(10)
    P, y = _dirichlet_data(rng, 60, 3)
    tP, ty = rng.dirichlet(np.ones(3), size=3), np.array([0, 1, 2])
    copies = [a.copy() for a in (P, y, tP, ty)]
    ucme_test(y, P, test_predictions=tP, test_targets=ty, random_state=0)
    for a, c in zip((P, y, tP, ty), copies):
        np.testing.assert_array_equal(a, c)
    yn, dn = _normal_data(rng, 60)
    tn, tyn = Normal([0.0, 1.0], [1.0, 2.0]), np.array([0.5, -0.5])
    before = (dn.loc.copy(), dn.scale.copy(), yn.copy(), tn.loc.copy(), tyn.copy())
    ucme_test(yn, dn, test_predictions=tn, test_targets=tyn, random_state=0)
    for a, c in zip((dn.loc, dn.scale, yn, tn.loc, tyn), before):
        np.testing.assert_array_equal(a, c)


def test_reachable_from_skcalib_stats():
    assert skcalib.stats.ucme_test is ucme_test
    assert "ucme_test" in skcalib.stats.__all__


# --------------------------------------------------------------------------------------------
# Errors


def test_n_not_above_J_raises():
    rng = np.random.default_rng(11)
    P, y = _dirichlet_data(rng, 10, 3)
    with pytest.raises(ValueError, match=r"singular.*n_samples=10 and J=10 \(n_test_locations\)"):
        ucme_test(y, P, n_test_locations=10, random_state=0)
    with pytest.raises(ValueError, match=r"n_samples=4 and J=10"):
        ucme_test(y[:4], P[:4], n_test_locations=10, labels=[0, 1, 2], random_state=0)
    tP, ty = rng.dirichlet(np.ones(3), size=12), rng.integers(3, size=12)
    with pytest.raises(ValueError, match=r"J=12 \(the number of test_predictions\)"):
        ucme_test(y, P, test_predictions=tP, test_targets=ty)
    yn, dn = _normal_data(rng, 5)
    with pytest.raises(ValueError, match=r"n_samples=5 and J=5"):
        ucme_test(yn, dn, n_test_locations=5, random_state=0)
    # n = J + 1 is enough.
    assert np.isfinite(ucme_test(y, P, n_test_locations=9, random_state=0).statistic)


def test_identically_zero_witness_raises():
    # No prediction puts mass on class 2 and no label is 2: the witness at a test location with
    # target 2 is 0 for every sample.
    rng = np.random.default_rng(12)
    p = rng.random(50)
    P = np.column_stack([p, 1 - p, np.zeros(50)])
    y = (rng.random(50) > p).astype(int)
    tP = np.array([[0.5, 0.5, 0.0], [0.2, 0.8, 0.0], [0.3, 0.3, 0.4]])
    msg = r"J=3 witnesses is singular.*identically zero at test location\(s\) \[2\]"
    with pytest.raises(ValueError, match=msg):
        ucme_test(y, P, kernel=GaussianKernel(0.5), test_predictions=tP,
                  test_targets=[0, 1, 2], labels=[0, 1, 2])
    # Without that location the test runs.
    res = ucme_test(y, P, kernel=GaussianKernel(0.5), test_predictions=tP[:2],
                    test_targets=[0, 1], labels=[0, 1, 2])
    assert np.isfinite(res.statistic)


def test_constant_nonzero_witness_raises():
    # One-hot predictions that are always class 0 while the labels are always 1: every sample
    # has the same prediction and residual, so every witness column is a nonzero constant.
    P = np.tile([1.0, 0.0], (20, 1))
    y = np.ones(20, dtype=int)
    with pytest.raises(ValueError, match=r"singular.*constant at test location"):
        ucme_test(y, P, kernel=GaussianKernel(0.5), test_predictions=[[0.5, 0.5], [1, 0]],
                  test_targets=[0, 1])


def test_repeated_test_locations_raise():
    rng = np.random.default_rng(13)
    P, y = _dirichlet_data(rng, 100, 3)
    tP = rng.dirichlet(np.ones(3), size=3)
    tP = np.vstack([tP, tP[:1]])
    with pytest.raises(ValueError, match=r"singular or ill-conditioned.*repeated"):
        ucme_test(y, P, kernel=GaussianKernel(0.5), test_predictions=tP,
                  test_targets=[0, 1, 2, 0])
    # Two classes: the witnesses at targets 0 and 1 of one test prediction are exact negatives.
    p = rng.random(100)
    yb = (rng.random(100) < p).astype(int)
    with pytest.raises(ValueError, match=r"ill-conditioned"):
        ucme_test(yb, p, kernel=GaussianKernel(0.5), test_predictions=[0.3, 0.3, 0.8],
                  test_targets=[0, 1, 1])


def test_rank_deficient_predictions_raise():
    # Only two distinct predictions but three test locations of one target: the witnesses span
    # at most a two-dimensional space per target, so S has rank 2 < J = 3.
    rng = np.random.default_rng(14)
    P = np.array([[0.2, 0.8], [0.7, 0.3]])[rng.integers(2, size=200)]
    y = (rng.random(200) < P[:, 1]).astype(int)
    with pytest.raises(ValueError, match=r"J=3 witnesses is singular or ill-conditioned"):
        ucme_test(y, P, kernel=GaussianKernel(0.5), test_predictions=[[0.5, 0.5], [0.1, 0.9],
                                                                      [0.9, 0.1]],
                  test_targets=[1, 1, 1])


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"n_test_locations": 0}, ValueError, "n_test_locations"),
    ({"n_test_locations": 2.5}, TypeError, "n_test_locations"),
    ({"n_test_locations": True}, TypeError, "n_test_locations"),
    ({"random_state": "seed"}, (TypeError, ValueError), "random_state"),
    ({"n_mc_samples": 0}, ValueError, "n_mc_samples"),
    ({"chunk_size": 0}, ValueError, "chunk_size"),
    ({"chunk_size": 1.5}, TypeError, "chunk_size"),
    ({"test_predictions": [[0.5, 0.5, 0.0]]}, ValueError, "test_predictions and test_targets"),
    ({"test_targets": [0]}, ValueError, "test_predictions and test_targets"),
    ({"test_predictions": [[0.5, 0.6, 0.0]], "test_targets": [0]}, ValueError,
     "test_predictions"),
    ({"test_predictions": [[0.5, 0.5, 0.0]], "test_targets": [7]}, ValueError, "7"),
    ({"kernel": "gaussian"}, TypeError, "kernel"),
    ({"pos_label": 5}, ValueError, "pos_label"),
])
def test_bad_parameters(kwargs, exc, match):
    rng = np.random.default_rng(15)
    P, y = _dirichlet_data(rng, 30, 3)
    with pytest.raises(exc, match=match):
        ucme_test(y, P, **kwargs)


def test_bad_parameters_are_checked_before_work(monkeypatch):
    calls = []
    monkeypatch.setattr(_ucme, "ucme_witness_chunks",
                        lambda *a, **k: calls.append(1))  # would be the first work
    P, y = _dirichlet_data(np.random.default_rng(0), 30, 3)
    for kw in ({"n_test_locations": 0}, {"random_state": -1}, {"n_mc_samples": 0},
               {"chunk_size": 0}):
        with pytest.raises((TypeError, ValueError)):
            ucme_test(y, P, **kw)
    assert not calls


def test_distribution_errors():
    rng = np.random.default_rng(16)
    yn, dn = _normal_data(rng, 30)
    with pytest.raises(ValueError, match="labels"):
        ucme_test(yn, dn, labels=[0, 1])
    with pytest.raises(TypeError, match="test_predictions"):
        ucme_test(yn, dn, test_predictions=Laplace([0.0], [1.0]), test_targets=[0.0])
    with pytest.raises(ValueError, match="y"):
        ucme_test(yn[:-1], dn)


# --------------------------------------------------------------------------------------------
# Statistical behaviour (fast)


def test_size_under_calibration_and_power():
    """Calibrated Dirichlet model, n=500, J=5, 200 replications: the rejection rate at 0.05 lies
    in the binomial 99.9% interval; an always-class-0 model is rejected. (A fixed kernel: the
    median heuristic would take most of the time.)"""
    rng = np.random.default_rng(2024)
    reps, n, alpha = 200, 500, 0.05
    kernel = GaussianKernel(0.5)
    pvals = np.empty(reps)
    for r in range(reps):
        P, y = _dirichlet_data(rng, n, 3)
        pvals[r] = ucme_test(y, P, kernel=kernel, n_test_locations=5, labels=[0, 1, 2],
                             random_state=rng).pvalue
    rate = np.mean(pvals < alpha)
    lo, hi = sps.binom.interval(0.999, reps, alpha)
    assert lo / reps <= rate <= hi / reps, rate
    # Uniform p-values under the null (loose: a KS test at 0.001).
    assert sps.kstest(pvals, "uniform").pvalue > 1e-3
    P, _ = _dirichlet_data(rng, n, 3)
    y_bad = np.zeros(n, dtype=int)
    assert ucme_test(y_bad, P, n_test_locations=5, labels=[0, 1, 2], random_state=0).pvalue < 0.05


def test_memory_does_not_grow_with_an_n_by_J_matrix():
    """The test streams: its peak memory is that of the value-only ``ucme`` (which streams),
    not that plus an ``n x J`` witness matrix (6.4 MB here)."""
    import tracemalloc

    rng = np.random.default_rng(19)
    n, J = 100_000, 8
    P, y = _dirichlet_data(rng, n, 3)
    kw = dict(kernel=GaussianKernel(0.5), n_test_locations=J, labels=[0, 1, 2], random_state=0,
              chunk_size=256)
    peaks = []
    for f in (ucme, ucme_test):
        tracemalloc.start()
        f(y, P, **kw)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert peaks[1] < peaks[0] + n * J * 8 / 4, peaks


def test_default_number_of_test_locations_binary_is_five():
    """Binary witnesses are functions of one probability: 10 drawn locations are almost always
    collinear, so the default is 5 for binary class probabilities (and the test runs)."""
    from skcalib.distributions import Categorical
    from skcalib.stats._ucme import _default_locations

    rng = np.random.default_rng(11)
    p = rng.random(300)
    y = (rng.random(300) < p).astype(int)
    for seed in range(10):
        assert ucme_test(y, p, random_state=seed).df == 5
    assert ucme_test(y, np.column_stack([1 - p, p]), random_state=0).df == 5
    P3 = rng.dirichlet([1, 1, 1], size=300)
    assert _default_locations(P3, None) == 10
    assert _default_locations(p, [0, 1, 2]) == 10
    assert _default_locations(Categorical(np.column_stack([1 - p, p])), None) == 5
