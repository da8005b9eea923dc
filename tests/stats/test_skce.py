"""skcalib.stats.skce_test / skce_ci and the result object, against independent computations:
brute force on the explicit n x n matrix of h (written out here for class probabilities),
closed forms, and the reference values of ../shared/specs/reference-values.md (sections 5, 7.1)."""

import math
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats as sps

from skcalib import _pairwise, skce
from skcalib.distributions import Categorical, Laplace, Mixture, MultivariateNormal, Normal
from skcalib.kernels import (
    ExponentialKernel,
    GaussianKernel,
    KernelValidityWarning,
    WassersteinKernel,
    tensor,
)
from skcalib._problems.kernel import prepare_term
from skcalib.stats import CalibrationTestResult, ConfidenceInterval, skce_ci, skce_test
from skcalib.stats import _skce

# ---------------------------------------------------------------------------------------------
# Independent references

P6 = np.array([[0.70, 0.20, 0.10], [0.10, 0.80, 0.10], [0.30, 0.30, 0.40],
               [0.50, 0.25, 0.25], [0.05, 0.15, 0.80], [0.20, 0.60, 0.20]])
Y6 = np.array([0, 1, 2, 1, 2, 0])
LS = 0.4
K_TV = ExponentialKernel(length_scale=LS, metric="tv")  # exp(-TV(p, q) / 0.4), TV = |p - q|_1 / 2


def dense_h(y, P, length_scale=LS):
    """h_ij = exp(-TV(p_i, p_j)/l) <e_{y_i} - p_i, e_{y_j} - p_j>, written out (with the
    diagonal)."""
    P = np.asarray(P, dtype=float)
    K = np.exp(-0.5 * np.abs(P[:, None, :] - P[None, :, :]).sum(-1) / length_scale)
    E = np.eye(P.shape[1])[np.asarray(y)] - P
    return K * (E @ E.T)


def u_stat(H):
    n = H.shape[0]
    return (H.sum() - np.trace(H)) / (n * (n - 1))


def v_stat(H):
    return H.sum() / H.shape[0] ** 2


def block_values(H, B):
    nb = H.shape[0] // B
    return np.array([u_stat(H[b * B:(b + 1) * B, b * B:(b + 1) * B]) for b in range(nb)])


def hoeffding_se(H):
    """sqrt((4 (n-2) zeta1 + 2 zeta2) / (n (n-1))) with plug-in zeta1, zeta2, by loops."""
    n = H.shape[0]
    U = u_stat(H)
    g = np.array([sum(H[i, j] for j in range(n) if j != i) / (n - 1) for i in range(n)])
    zeta1 = np.mean((g - U) ** 2)
    sq = [H[i, j] ** 2 for i in range(n) for j in range(n) if i != j]
    zeta2 = np.mean(sq) - U ** 2
    return math.sqrt((4 * (n - 2) * zeta1 + 2 * zeta2) / (n * (n - 1)))


def classification_data(n, seed, calibrated=True, C=3):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(C), size=n)
    if calibrated:
        y = (rng.random(n)[:, None] > np.cumsum(P, axis=1)).sum(axis=1)
        y = np.minimum(y, C - 1)
    else:
        # mostly the least likely class: strongly miscalibrated
        y = np.where(rng.random(n) < 0.8, np.argmin(P, axis=1), np.argmax(P, axis=1))
    y[:C] = np.arange(C)  # every class present (no labels= needed)
    return y, P


def recorded_counts(monkeypatch):
    """Record the multinomial counts the bootstrap draws (the code's own generator calls)."""
    drawn = []
    original = _skce._draw_counts

    def record(rng, M, n):
        C = original(rng, M, n)
        drawn.append(C.copy())
        return C

    monkeypatch.setattr(_skce, "_draw_counts", record)
    return drawn


# ---------------------------------------------------------------------------------------------
# Reference values (reference-values.md §7.1 and §5)


def test_dense_reference_reproduces_tiny_example():
    H = dense_h(Y6, P6)
    assert_allclose(np.diag(H), [0.14, 0.06, 0.54, 0.875, 0.065, 1.04], rtol=1e-12)
    assert_allclose(v_stat(H), 0.0359731864670598, rtol=1e-12)
    assert_allclose(u_stat(H), -0.047498842906194896, rtol=1e-12)
    assert_allclose(block_values(H, 2).mean(), -0.04920863548092133, rtol=1e-12)


def test_tiny_example_block_test():
    res = skce_test(Y6, P6, kernel=K_TV, method="block", block_size=2)
    assert_allclose(res.pvalue, 0.869042808756791, rtol=1e-12)  # A_l, ddof=1
    assert_allclose(res.estimate, -0.04920863548092133, rtol=1e-12)
    assert res.method == "block" and res.n_samples == 6
    assert res.n_resamples is None and res.null_distribution is None


def test_tiny_example_distribution_free():
    # "t <= 0 -> p = 1": D_uq = D_ul = 1; D_b = 1 since n SKCE_b / 2 = 0.108 < 1
    for estimator, t in [("unbiased", -0.047498842906194896), ("block", -0.04920863548092133),
                         ("biased", 0.0359731864670598)]:
        res = skce_test(Y6, P6, kernel=K_TV, method="distribution_free", estimator=estimator)
        assert res.pvalue == 1.0
        assert_allclose(res.statistic, t, rtol=1e-12)
        assert_allclose(res.estimate, t, rtol=1e-12)
        assert res.method == "distribution_free"


def test_distribution_free_derived_reference(monkeypatch):
    # reference-values §5 (derived): unbiased estimate 0.05, n = 100, bound 2 ->
    # exp(-50 * 0.025**2 / 2) = 0.9844964370054085, through the public API.
    y, P = classification_data(100, 0)
    monkeypatch.setattr(_pairwise, "u_statistic", lambda term, **kw: 0.05)
    res = skce_test(y, P, kernel=K_TV, method="distribution_free")
    assert res.statistic == 0.05
    assert_allclose(res.pvalue, 0.9844964370054085, rtol=1e-14)


def test_distribution_free_formulas():
    y, P = classification_data(41, 1, calibrated=False)
    H = dense_h(y, P)
    n = 41
    U, V = u_stat(H), v_stat(H)
    assert U > 0 and n * V / 2 > 1  # the informative branches
    res = skce_test(y, P, kernel=K_TV, method="distribution_free")
    assert_allclose(res.pvalue, math.exp(-(n // 2) * (U / 2) ** 2 / 2), rtol=1e-10)
    res = skce_test(y, P, kernel=K_TV, method="distribution_free", estimator="biased")
    assert_allclose(res.statistic, V, rtol=1e-12)
    assert_allclose(res.pvalue, math.exp(-(math.sqrt(n * V / 2) - 1) ** 2 / 2), rtol=1e-10)
    # block estimator of size B: Hoeffding with m = floor(n/B) floor(B/2)
    for B, m in [(2, 20), (5, 16), (6, 18), (20, 20)]:
        t = block_values(H, B).mean()
        assert t > 0
        res = skce_test(y, P, kernel=K_TV, method="distribution_free", estimator="block",
                        block_size=B)
        assert_allclose(res.statistic, t, rtol=1e-12)
        assert_allclose(res.pvalue, math.exp(-m * (t / 2) ** 2 / 2), rtol=1e-10)


def test_distribution_free_intervals():
    y, P = classification_data(41, 1, calibrated=False)
    H = dense_h(y, P)
    U = u_stat(H)
    res = skce_test(y, P, kernel=K_TV, method="distribution_free")
    m = 20
    eps = 2 * math.sqrt(2 * math.log(2 / 0.1) / m)  # P(|t - SKCE| >= eps) <= 0.1
    assert_allclose(res.confidence_interval(0.9), (max(U - eps, 0), U + eps), rtol=1e-12)
    eps1 = 2 * math.sqrt(2 * math.log(1 / 0.1) / m)
    low, high = res.confidence_interval(0.9, alternative="greater")
    assert_allclose(low, max(U - eps1, 0.0), rtol=1e-12)
    assert high == math.inf
    low, high = res.confidence_interval(0.9, alternative="less")
    assert low == 0.0
    assert_allclose(high, U + eps1, rtol=1e-12)
    biased = skce_test(y, P, kernel=K_TV, method="distribution_free", estimator="biased")
    with pytest.raises(ValueError, match="'distribution_free' test has no confidence interval"):
        biased.confidence_interval()
    assert biased.standard_error is None


# ---------------------------------------------------------------------------------------------
# Block test


@pytest.mark.parametrize("block_size, B", [(2, 2), (3, 3), (5, 5), ("sqrt", 6), (20, 20)])
def test_block_test_formula(block_size, B):
    y, P = classification_data(41, 2)
    H = dense_h(y, P)
    vals = block_values(H, B)  # blocks in data order, the incomplete last block dropped
    est = vals.mean()
    se = np.std(vals, ddof=1) / math.sqrt(vals.size)
    res = skce_test(y, P, kernel=K_TV, method="block", block_size=block_size)
    assert_allclose(res.estimate, est, rtol=1e-12, atol=1e-15)
    assert_allclose(res.standard_error, se, rtol=1e-12)
    assert_allclose(res.statistic, est / se, rtol=1e-10, atol=1e-12)
    assert_allclose(res.pvalue, sps.norm.sf(est / se), rtol=1e-10)
    # reference-values §5: the one-sided interval (max(0, est - z_level se), inf)
    low, high = res.confidence_interval(0.9, alternative="greater")
    assert_allclose(low, max(0.0, est - sps.norm.ppf(0.9) * se), rtol=1e-12, atol=1e-15)
    assert high == math.inf
    low, high = res.confidence_interval(0.8)
    z = sps.norm.ppf(0.9)
    assert_allclose([low, high], [max(est - z * se, 0), max(est + z * se, 0)], rtol=1e-12,
                    atol=1e-15)


def test_block_test_drops_incomplete_block_and_uses_data_order():
    y, P = classification_data(41, 3)
    res = skce_test(y, P, kernel=K_TV, method="block", block_size=4)
    y2, P2 = y.copy(), P.copy()
    y2[-1] = (y2[-1] + 1) % 3  # sample 40 is in no block of size 4 (41 = 10 * 4 + 1)
    P2[-1] = P2[-1][::-1]
    res2 = skce_test(y2, P2, kernel=K_TV, method="block", block_size=4)
    assert res2.pvalue == res.pvalue and res2.statistic == res.statistic
    order = np.random.default_rng(0).permutation(41)
    res3 = skce_test(y[order], P[order], kernel=K_TV, method="block", block_size=4)
    H = dense_h(y[order], P[order])
    assert_allclose(res3.estimate, block_values(H, 4).mean(), rtol=1e-12)
    assert res3.estimate != pytest.approx(res.estimate, rel=1e-6)


def test_block_test_needs_two_blocks():
    y, P = classification_data(7, 4)
    with pytest.raises(ValueError, match=r"at least 2 blocks: n_samples=7 and block_size=4 give 1"):
        skce_test(y, P, kernel=K_TV, method="block", block_size=4)
    with pytest.raises(ValueError, match="at least 2 blocks"):
        skce_test(y, P, kernel=K_TV, method="block", block_size=8)
    with pytest.raises(ValueError, match=r"n_samples=3 and block_size=2 give 1"):
        skce_test(y[:3], P[:3], kernel=K_TV, method="block", block_size="sqrt", labels=[0, 1, 2])
    # Hoeffding's bound needs one full block only (m = floor(n/B) floor(B/2) = 2 here)
    one = skce_test(y, P, kernel=K_TV, method="distribution_free", estimator="block", block_size=4)
    t = block_values(dense_h(y, P), 4).mean()
    assert_allclose(one.estimate, t, rtol=1e-12)
    assert one.pvalue == pytest.approx(1.0 if t <= 0 else np.exp(-2 * (t / 2) ** 2 / 2))
    with pytest.raises(ValueError, match=r"needs a full block: n_samples=7 and block_size=8"):
        skce_test(y, P, kernel=K_TV, method="distribution_free", estimator="block", block_size=8)
    with pytest.raises(ValueError, match="at least 2 blocks"):
        skce_ci(y, P, kernel=K_TV, estimator="block", block_size=4)
    # exactly two blocks is fine
    res = skce_test(y[:4], P[:4], kernel=K_TV, method="block", block_size=2, labels=[0, 1, 2])
    assert np.isfinite(res.pvalue)


def test_block_test_constant_blocks_warns():
    P = np.tile([[0.2, 0.3, 0.5]], (6, 1))
    y = np.zeros(6, dtype=int)
    with pytest.warns(RuntimeWarning, match="all equal"):
        res = skce_test(y, P, kernel=K_TV, method="block", block_size=2, labels=[0, 1, 2])
    assert math.isnan(res.pvalue) and math.isnan(res.statistic)


# ---------------------------------------------------------------------------------------------
# Bootstrap (Arcones--Giné)


def test_bootstrap_statistic_and_null_brute_force(monkeypatch):
    n, M = 30, 40
    y, P = classification_data(n, 5)
    H = dense_h(y, P)
    drawn = recorded_counts(monkeypatch)
    res = skce_test(y, P, kernel=K_TV, method="bootstrap", n_resamples=M, random_state=3)
    U = skce(y, P, kernel=K_TV)
    V = skce(y, P, kernel=K_TV, estimator="biased")
    assert_allclose(res.statistic, n / (n - 1) * U - V, rtol=1e-10)
    assert_allclose(res.estimate, U, rtol=1e-12)
    C = np.concatenate(drawn)
    assert C.shape == (M, n)
    assert_array_equal(C.sum(axis=1), n)
    assert_array_equal(C, np.round(C))
    # T* against the Arcones--Giné statistic on explicit resample indices:
    # (n - 1)(V + T*) = 2/n sum_{a<b} h~(z*_a, z*_b), h~ empirically centred.
    r = H.mean(axis=1)
    g = H.mean()
    null = res.null_distribution
    assert null.shape == (M,)
    iu = np.triu_indices(n, 1)
    for m in range(M):
        idx = np.repeat(np.arange(n), C[m].astype(int))
        Ht = H[np.ix_(idx, idx)] - r[idx][:, None] - r[idx][None, :] + g
        assert_allclose((n - 1) * (V + null[m]), 2 / n * Ht[iu].sum(), rtol=1e-10, atol=1e-13)
    count = np.sum(null >= res.statistic)
    assert res.pvalue == (1 + count) / (1 + M)
    assert res.n_resamples == M and res.method == "bootstrap"


def test_bootstrap_several_batches(monkeypatch):
    # resamples drawn in batches (budget of counts): every batch's null is still exact
    n, M = 12, 150
    y, P = classification_data(n, 6)
    H = dense_h(y, P)
    monkeypatch.setattr(_skce, "_COUNTS_BUDGET", 1)  # batches of 64 resamples
    drawn = recorded_counts(monkeypatch)
    res = skce_test(y, P, kernel=K_TV, method="bootstrap", n_resamples=M, random_state=0)
    assert [c.shape[0] for c in drawn] == [64, 64, 22]
    C = np.concatenate(drawn)
    expected = (n / (n - 1) * (np.einsum("mi,ij,mj->m", C, H, C) - C @ np.diag(H))
                - 2 * C @ H.sum(axis=1)) / n ** 2
    assert_allclose(res.null_distribution, expected, rtol=1e-10, atol=1e-14)


def test_bootstrap_pvalue_rule_and_determinism():
    y, P = classification_data(25, 7)
    kw = dict(kernel=K_TV, method="bootstrap", n_resamples=99, random_state=11)
    a = skce_test(y, P, **kw)
    b = skce_test(y, P, **kw)
    assert a.pvalue == b.pvalue
    assert_array_equal(a.null_distribution, b.null_distribution)
    c = skce_test(y, P, **dict(kw, add_one=False))
    assert_array_equal(c.null_distribution, a.null_distribution)
    count = np.sum(a.null_distribution >= a.statistic)
    assert c.pvalue == count / 99 and a.pvalue == (count + 1) / 100
    d = skce_test(y, P, **dict(kw, random_state=12))
    assert not np.array_equal(d.null_distribution, a.null_distribution)
    # a Generator is used as given (advanced), so two calls with it differ
    rng = np.random.default_rng(11)
    e = skce_test(y, P, **dict(kw, random_state=rng))
    f = skce_test(y, P, **dict(kw, random_state=rng))
    assert_array_equal(e.null_distribution, a.null_distribution)
    assert not np.array_equal(f.null_distribution, e.null_distribution)


def test_bootstrap_never_zero_pvalue():
    y, P = classification_data(60, 8, calibrated=False)
    a = skce_test(y, P, kernel=K_TV, method="bootstrap", n_resamples=50, random_state=0)
    assert a.pvalue == 1 / 51
    b = skce_test(y, P, kernel=K_TV, method="bootstrap", n_resamples=50, random_state=0,
                  add_one=False)
    assert b.pvalue == 0.0


def test_bootstrap_n_jobs_and_chunk_size_invariance():
    y, P = classification_data(40, 9)
    kw = dict(kernel=K_TV, method="bootstrap", n_resamples=60, random_state=2)
    a = skce_test(y, P, **kw)
    b = skce_test(y, P, n_jobs=2, chunk_size=7, **kw)
    c = skce_test(y, P, chunk_size=7, **kw)
    assert_array_equal(b.null_distribution, c.null_distribution)  # n_jobs: identical
    assert b.statistic == c.statistic and b.pvalue == c.pvalue
    assert_allclose(c.null_distribution, a.null_distribution, rtol=1e-10, atol=1e-15)
    assert_allclose(c.statistic, a.statistic, rtol=1e-10)


def test_bootstrap_standard_error_is_hoeffding():
    y, P = classification_data(20, 10, calibrated=False)
    res = skce_test(y, P, kernel=K_TV, method="bootstrap", n_resamples=10, random_state=0)
    se = hoeffding_se(dense_h(y, P))
    assert_allclose(res.standard_error, se, rtol=1e-10)
    z = sps.norm.ppf(0.975)
    U = res.estimate
    assert_allclose(res.confidence_interval(), (max(U - z * se, 0), U + z * se), rtol=1e-10)


# ---------------------------------------------------------------------------------------------
# Spectral and Gamma


def centred_eigenvalues(H):
    n = H.shape[0]
    J = np.eye(n) - 1.0 / n
    lam = np.linalg.eigvalsh(J @ H @ J / n)
    return np.sort(lam[lam > lam.max() * 1e-10])


def test_spectral_exact_eigenvalues_and_null():
    n = 40
    y, P = classification_data(n, 11)
    H = dense_h(y, P)
    res = skce_test(y, P, kernel=K_TV, method="spectral", n_resamples=4000, random_state=0)
    lam = centred_eigenvalues(H)
    got = np.sort(res.eigenvalues)
    big = got > got.max() * 1e-10
    assert_allclose(got[big], lam, rtol=1e-8, atol=1e-12 * lam.max())
    assert res.n_landmarks is None
    assert_allclose(res.statistic, n * u_stat(H), rtol=1e-10)
    assert_allclose(res.estimate, u_stat(H), rtol=1e-10)
    assert_allclose(res.standard_error, hoeffding_se(H), rtol=1e-10)
    null = res.null_distribution
    assert null.shape == (4000,)
    # sum lambda_i (chi2_1 - 1): mean 0, variance 2 sum lambda^2
    sd = math.sqrt(2 * np.sum(lam ** 2))
    assert abs(null.mean()) < 4 * sd / math.sqrt(4000)
    assert_allclose(null.var(), sd ** 2, rtol=0.15)
    assert res.pvalue == (1 + np.sum(null >= res.statistic)) / 4001


def test_spectral_landmarks_at_least_n_is_exact():
    y, P = classification_data(20, 12)
    a = skce_test(y, P, kernel=K_TV, method="spectral", n_resamples=200, random_state=4)
    for m in (20, 50):
        b = skce_test(y, P, kernel=K_TV, method="spectral", n_resamples=200, random_state=4,
                      n_landmarks=m)
        assert_array_equal(b.eigenvalues, a.eigenvalues)
        assert b.pvalue == a.pvalue and b.n_landmarks is None


def nystrom_eigenvalues(H, landmarks):
    n = H.shape[0]
    L = np.asarray(landmarks)
    Hn = H[:, L] @ np.linalg.pinv(H[np.ix_(L, L)]) @ H[L, :]
    J = np.eye(n) - 1.0 / n
    lam = np.linalg.eigvalsh(J @ Hn @ J / n)
    return np.sort(lam[lam > lam.max() * 1e-8])


@pytest.mark.parametrize("m", [6, 15])
def test_spectral_nystrom_brute_force(m):
    n, seed = 30, 13
    y, P = classification_data(n, seed)
    H = dense_h(y, P)
    res = skce_test(y, P, kernel=K_TV, method="spectral", n_landmarks=m, n_resamples=500,
                    random_state=seed)
    assert res.n_landmarks == m
    # the landmarks are the first m samples of the generator's first permutation
    landmarks = np.random.default_rng(seed).permutation(n)[:m]
    lam = nystrom_eigenvalues(H, landmarks)
    got = np.sort(res.eigenvalues)
    got = got[got > got.max() * 1e-8]
    assert_allclose(got, lam, rtol=1e-7, atol=1e-10 * lam.max())
    assert_allclose(res.statistic, n * u_stat(H), rtol=1e-10)
    assert_allclose(res.standard_error, hoeffding_se(H), rtol=1e-10)


def test_spectral_nystrom_n_minus_one_close_to_exact():
    n = 40
    y, P = classification_data(n, 14)
    exact = skce_test(y, P, kernel=K_TV, method="spectral", n_resamples=3000, random_state=1)
    nys = skce_test(y, P, kernel=K_TV, method="spectral", n_landmarks=n - 1, n_resamples=3000,
                    random_state=1)
    lam_e = np.sort(exact.eigenvalues)[::-1]
    lam_n = np.sort(nys.eigenvalues)[::-1]
    assert_allclose(lam_n[:10], lam_e[:10], rtol=0.05)
    assert_allclose(lam_n.sum(), lam_e.sum(), rtol=0.05)
    assert nys.statistic == pytest.approx(exact.statistic, rel=1e-10)
    assert abs(nys.pvalue - exact.pvalue) < 0.05


def test_spectral_n_jobs_invariance():
    y, P = classification_data(30, 15)
    kw = dict(kernel=K_TV, method="spectral", n_resamples=200, random_state=2)
    for m in (None, 9):
        a = skce_test(y, P, n_landmarks=m, chunk_size=7, **kw)
        b = skce_test(y, P, n_landmarks=m, chunk_size=7, n_jobs=2, **kw)
        assert_array_equal(a.eigenvalues, b.eigenvalues)
        assert_array_equal(a.null_distribution, b.null_distribution)


def test_exact_spectral_size_limit(monkeypatch):
    y, P = classification_data(12, 16)
    monkeypatch.setattr(_skce, "EXACT_SPECTRAL_MAX", 10)
    with pytest.raises(ValueError, match=r"n_samples=12 exceeds 10.*n_landmarks"):
        skce_test(y, P, kernel=K_TV, method="spectral")
    with pytest.raises(ValueError, match="exceeds 10"):
        skce_test(y, P, kernel=K_TV, method="spectral", n_landmarks=12)
    res = skce_test(y, P, kernel=K_TV, method="spectral", n_landmarks=5, n_resamples=20)
    assert res.n_landmarks == 5


def test_gamma_test_formula():
    n = 35
    for calibrated in (True, False):
        y, P = classification_data(n, 17, calibrated=calibrated)
        H = dense_h(y, P)
        res = skce_test(y, P, kernel=K_TV, method="gamma")
        stat = n * v_stat(H)
        mean = np.mean(np.diag(H))
        off = H[~np.eye(n, dtype=bool)]
        var = 2 * (n - 1) / n * np.mean(off ** 2)
        assert_allclose(res.statistic, stat, rtol=1e-12)
        assert_allclose(res.pvalue, sps.gamma.sf(stat, a=mean ** 2 / var, scale=var / mean),
                        rtol=1e-9)
        assert_allclose(res.estimate, u_stat(H), rtol=1e-10)
        assert_allclose(res.standard_error, hoeffding_se(H), rtol=1e-10)
        assert res.null_distribution is None and res.n_resamples is None


def test_gamma_and_block_n_jobs_identical():
    y, P = classification_data(30, 33)
    for kw in [dict(method="gamma"), dict(method="block", block_size=3),
               dict(method="distribution_free", estimator="biased")]:
        a = skce_test(y, P, kernel=K_TV, chunk_size=7, **kw)
        b = skce_test(y, P, kernel=K_TV, chunk_size=7, n_jobs=2, **kw)
        assert (a.statistic, a.pvalue, a.estimate) == (b.statistic, b.pvalue, b.estimate)


def test_gamma_degenerate_null():
    # A perfect classifier (one-hot predictions, correct labels): h == 0, every estimate is 0.
    # The Gamma null degenerates to the point mass at 0 and P(n V >= 0) = 1, as the simulated
    # nulls give; a NaN p-value without warning breaks p < alpha decisions silently.
    P = np.eye(3)[[0, 1, 2, 0, 1, 2]]
    y = np.array([0, 1, 2, 0, 1, 2])
    for method in ("bootstrap", "spectral"):
        assert skce_test(y, P, kernel=K_TV, method=method, n_resamples=20).pvalue == 1.0
    assert skce_test(y, P, kernel=K_TV, method="gamma").pvalue == 1.0


def test_auto_method(monkeypatch):
    y, P = classification_data(20, 18)
    res = skce_test(y, P, kernel=K_TV, n_resamples=30, random_state=0)
    ref = skce_test(y, P, kernel=K_TV, method="bootstrap", n_resamples=30, random_state=0)
    assert res.method == "bootstrap" and res.pvalue == ref.pvalue
    monkeypatch.setattr(_skce, "AUTO_BOOTSTRAP_MAX", 10)
    monkeypatch.setattr(_skce, "AUTO_LANDMARKS", 5)
    res = skce_test(y, P, kernel=K_TV, n_resamples=30, random_state=0)
    assert res.method == "spectral" and res.n_landmarks == 5
    res = skce_test(y, P, kernel=K_TV, n_resamples=30, random_state=0, n_landmarks=7)
    assert res.n_landmarks == 7


# ---------------------------------------------------------------------------------------------
# skce_ci


@pytest.mark.parametrize("level", [0.9, 0.95])
def test_ci_normal_unbiased(level):
    y, P = classification_data(80, 19, calibrated=False)
    H = dense_h(y, P)
    U, se = u_stat(H), hoeffding_se(H)
    ci = skce_ci(y, P, kernel=K_TV, confidence_level=level)
    z = sps.norm.ppf(0.5 + level / 2)
    assert U - z * se > 0  # no clipping here
    assert_allclose(tuple(ci), (U - z * se, U + z * se), rtol=1e-10)
    assert_allclose(ci.estimate, U, rtol=1e-12)
    assert_allclose(ci.standard_error, se, rtol=1e-10)
    assert ci.method == "normal" and ci.estimator == "unbiased" and ci.confidence_level == level
    assert ci.bootstrap_distribution is None
    assert isinstance(ci.confidence_interval, ConfidenceInterval)
    assert (ci.low, ci.high) == tuple(ci.confidence_interval)
    low, high = ci
    assert (low, high) == (ci.low, ci.high)
    r = repr(ci)
    assert r.startswith("SKCEInterval(") and f"low={ci.low!r}" in r and "method='normal'" in r
    g = skce_ci(y, P, kernel=K_TV, confidence_level=level, alternative="greater")
    assert_allclose(g.low, U - sps.norm.ppf(level) * se, rtol=1e-10) and g.high == math.inf
    s = skce_ci(y, P, kernel=K_TV, confidence_level=level, alternative="less")
    assert s.low == 0.0
    assert_allclose(s.high, U + sps.norm.ppf(level) * se, rtol=1e-10)


def test_ci_clipped_at_zero():
    ci = skce_ci(Y6, P6, kernel=K_TV)
    H = dense_h(Y6, P6)
    U, se = u_stat(H), hoeffding_se(H)
    z = sps.norm.ppf(0.975)
    assert ci.low == 0.0
    assert_allclose(ci.high, U + z * se, rtol=1e-10)
    # entirely below zero -> (0, 0)
    ci = skce_ci(Y6, P6, kernel=K_TV, confidence_level=0.2)
    assert U + sps.norm.ppf(0.6) * se < 0
    assert tuple(ci) == (0.0, 0.0)


def test_ci_bootstrap_unbiased(monkeypatch):
    n, M = 25, 80
    y, P = classification_data(n, 20, calibrated=False)
    drawn = recorded_counts(monkeypatch)
    ci = skce_ci(y, P, kernel=K_TV, method="bootstrap", n_resamples=M, random_state=0,
                 confidence_level=0.9)
    reps = ci.bootstrap_distribution
    assert reps.shape == (M,)
    C = np.concatenate(drawn)
    # a replicate is the U-statistic of the resampled data set (duplicates included)
    for m in (0, 1, M - 1):
        idx = np.repeat(np.arange(n), C[m].astype(int))
        assert_allclose(reps[m], skce(y[idx], P[idx], kernel=K_TV, labels=[0, 1, 2]),
                        rtol=1e-10, atol=1e-14)
        assert_allclose(reps[m], u_stat(dense_h(y[idx], P[idx])), rtol=1e-10, atol=1e-14)
    lo, hi = np.quantile(reps, [0.05, 0.95])
    assert_allclose(tuple(ci), (max(lo, 0), max(hi, 0)), rtol=1e-12)
    assert_allclose(ci.standard_error, np.std(reps, ddof=1), rtol=1e-12)
    assert_allclose(ci.estimate, skce(y, P, kernel=K_TV), rtol=1e-12)
    g = skce_ci(y, P, kernel=K_TV, method="bootstrap", n_resamples=M, random_state=0,
                confidence_level=0.9, alternative="greater")
    assert_array_equal(g.bootstrap_distribution, reps)
    assert_allclose(g.low, max(np.quantile(reps, 0.1), 0), rtol=1e-12) and g.high == math.inf


def test_ci_bootstrap_n_jobs_and_determinism():
    y, P = classification_data(25, 21, calibrated=False)
    kw = dict(kernel=K_TV, method="bootstrap", n_resamples=50, random_state=5)
    a = skce_ci(y, P, **kw)
    b = skce_ci(y, P, n_jobs=2, **kw)
    assert_array_equal(a.bootstrap_distribution, b.bootstrap_distribution)
    assert tuple(a) == tuple(b)


def test_ci_block():
    n, B = 41, 3
    y, P = classification_data(n, 22, calibrated=False)
    vals = block_values(dense_h(y, P), B)
    est, se = vals.mean(), np.std(vals, ddof=1) / math.sqrt(vals.size)
    ci = skce_ci(y, P, kernel=K_TV, estimator="block", block_size=B)
    z = sps.norm.ppf(0.975)
    assert_allclose(tuple(ci), (max(est - z * se, 0), est + z * se), rtol=1e-10)
    assert_allclose(ci.standard_error, se, rtol=1e-10)
    assert ci.estimator == "block"
    # bootstrap of the blocks: resampled block means (the generator's first draw)
    bt = skce_ci(y, P, kernel=K_TV, estimator="block", block_size=B, method="bootstrap",
                 n_resamples=200, random_state=3)
    idx = np.random.default_rng(3).integers(vals.size, size=(200, vals.size))
    reps = vals[idx].mean(axis=1)
    assert_allclose(bt.bootstrap_distribution, reps, rtol=1e-10)
    lo, hi = np.quantile(reps, [0.025, 0.975])
    assert_allclose(tuple(bt), (max(lo, 0), max(hi, 0)), rtol=1e-10)
    # the block test's own interval is the same normal interval
    res = skce_test(y, P, kernel=K_TV, method="block", block_size=B)
    assert_allclose(tuple(res.confidence_interval()), tuple(ci), rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# The result object


def test_result_object():
    y, P = classification_data(20, 23)
    res = skce_test(y, P, kernel=K_TV, method="bootstrap", n_resamples=30, random_state=0)
    stat, p = res
    assert (stat, p) == (res.statistic, res.pvalue)
    assert len(res) == 2 and res[0] == res.statistic and res[1] == res.pvalue and res[-1] == p
    r = repr(res)
    assert r.startswith("CalibrationTestResult(") and "method='bootstrap'" in r
    assert f"pvalue={res.pvalue!r}" in r and "n_resamples=30" in r and "n_samples=20" in r
    assert isinstance(res.statistic, float) and isinstance(res.pvalue, float)
    assert "n_resamples" not in repr(skce_test(y, P, kernel=K_TV, method="gamma"))
    lo, hi = res.confidence_interval(0.9)
    assert isinstance(res.confidence_interval(), ConfidenceInterval) and 0 <= lo <= hi
    direct = CalibrationTestResult(statistic=1, pvalue=0.5, estimate=0.1, method="x",
                                   n_samples=3, df=4)
    assert "df=4" in repr(direct)
    with pytest.raises(ValueError, match="'x' test has no confidence interval"):
        direct.confidence_interval()


@pytest.mark.parametrize("bad, exc, match", [
    (0.0, ValueError, "confidence_level must be > 0"),
    (-0.5, ValueError, "confidence_level must be > 0"),
    (1.0, ValueError, "confidence_level must be < 1"),
    (1.5, ValueError, "confidence_level must be < 1"),
    (float("nan"), ValueError, "confidence_level must be finite"),
    ("0.9", TypeError, "confidence_level must be a real number"),
    (True, TypeError, "confidence_level must be a real number"),
])
def test_confidence_level_validation(bad, exc, match):
    y, P = classification_data(12, 24)
    res = skce_test(y, P, kernel=K_TV, method="block")
    with pytest.raises(exc, match=match):
        res.confidence_interval(bad)
    with pytest.raises(exc, match=match):
        skce_ci(y, P, kernel=K_TV, confidence_level=bad)
    df = skce_test(y, P, kernel=K_TV, method="distribution_free")
    with pytest.raises(exc, match=match):
        df.confidence_interval(bad)


def test_alternative_validation():
    y, P = classification_data(12, 24)
    res = skce_test(y, P, kernel=K_TV, method="block")
    with pytest.raises(ValueError, match="^alternative must be one of"):
        res.confidence_interval(0.9, alternative="both")
    with pytest.raises(ValueError, match="^alternative must be one of"):
        skce_ci(y, P, kernel=K_TV, alternative="two_sided")


# ---------------------------------------------------------------------------------------------
# Errors and input handling


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(method="permutation"), ValueError, "^method must be one of"),
    (dict(method="block", block_size=1), ValueError, "block_size must be >= 2"),
    (dict(method="block", block_size=2.0), TypeError, "block_size must be an integer"),
    (dict(method="block", block_size="log"), ValueError, "^block_size must be one of 'sqrt'"),
    (dict(method="bootstrap", block_size=1), ValueError, "^block_size must be >= 2"),
    (dict(method="bootstrap", n_resamples=0), ValueError, "n_resamples must be >= 1"),
    (dict(method="bootstrap", n_resamples=10.0), TypeError, "n_resamples must be an integer"),
    (dict(method="spectral", n_landmarks=0), ValueError, "n_landmarks must be >= 1"),
    (dict(method="spectral", n_landmarks=2.5), TypeError, "n_landmarks must be an integer"),
    (dict(method="bootstrap", add_one=1), TypeError, "^add_one must be True or False"),
    (dict(method="bootstrap", add_one="yes"), TypeError, "^add_one must be True or False"),
    (dict(method="distribution_free", estimator="median"), ValueError, "^estimator must be one of"),
    (dict(method="bootstrap", random_state="seed"), ValueError, "^random_state must be"),
    (dict(method="bootstrap", n_jobs=0), ValueError, "^n_jobs must not be 0"),
    (dict(method="bootstrap", chunk_size=0), ValueError, "^chunk_size must be >= 1"),
    (dict(method="bootstrap", n_mc_samples=0), ValueError, "^n_mc_samples must be >= 1"),
])
def test_skce_test_parameter_errors(kwargs, exc, match):
    y, P = classification_data(10, 25)
    with pytest.raises(exc, match=match):
        skce_test(y, P, kernel=K_TV, **kwargs)


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(method="percentile"), ValueError, "^method must be one of 'normal', 'bootstrap'"),
    (dict(estimator="biased"), ValueError, "^estimator must be one of 'unbiased', 'block'"),
    (dict(n_resamples=0), ValueError, "^n_resamples must be >= 1"),
    (dict(block_size=1, estimator="block"), ValueError, "^block_size must be >= 2"),
    (dict(alternative="greater-than"), ValueError, "^alternative must be one of"),
    (dict(random_state=1.5), ValueError, "^random_state must be"),
])
def test_skce_ci_parameter_errors(kwargs, exc, match):
    y, P = classification_data(10, 25)
    with pytest.raises(exc, match=match):
        skce_ci(y, P, kernel=K_TV, **kwargs)


def test_too_few_samples():
    with pytest.raises(ValueError, match="at least 2 samples; got 1"):
        skce_test([0], [[0.5, 0.5]], kernel=K_TV, method="bootstrap", labels=[0, 1])
    with pytest.raises(ValueError, match="at least 3 samples; got 2"):
        skce_ci([0, 1], [[0.5, 0.5], [0.2, 0.8]], kernel=K_TV)
    with pytest.raises(ValueError, match="at least 2 samples; got 1"):
        skce_test([0.0], Normal([0.0], [1.0]), method="gamma")
    # n = 2 works where the method is defined
    res = skce_test([0, 1], [[0.5, 0.5], [0.2, 0.8]], kernel=K_TV, method="bootstrap",
                    n_resamples=10, random_state=0)
    assert 0 < res.pvalue <= 1


def test_class_options_refused_for_distributions():
    dist = Normal([0.0, 1.0, 2.0], [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="labels is only meaningful for class probabilities"):
        skce_test([0.0, 1.0, 2.0], dist, labels=[0, 1], method="gamma")
    with pytest.raises(ValueError, match="pos_label is only meaningful"):
        skce_ci([0.0, 1.0, 2.0], dist, pos_label=1)


METHODS = [
    dict(method="block"),
    dict(method="block", block_size="sqrt"),
    dict(method="bootstrap", n_resamples=20),
    dict(method="spectral", n_resamples=20),
    dict(method="spectral", n_resamples=20, n_landmarks=4),
    dict(method="gamma"),
    dict(method="distribution_free"),
    dict(method="distribution_free", estimator="biased"),
    dict(method="distribution_free", estimator="block", block_size=3),
    dict(method="auto", n_resamples=20),
]


def test_inputs_not_mutated():
    y, P = classification_data(15, 26)
    y0, P0 = y.copy(), P.copy()
    for kw in METHODS:
        skce_test(y, P, kernel=K_TV, random_state=0, **kw)
    skce_ci(y, P, kernel=K_TV, method="bootstrap", n_resamples=10, random_state=0)
    skce_ci(y, P, kernel=K_TV, estimator="block", method="bootstrap", n_resamples=10)
    assert_array_equal(y, y0)
    assert_array_equal(P, P0)
    rng = np.random.default_rng(0)
    loc, y_r = rng.normal(size=15), rng.normal(size=15)
    loc0, yr0 = loc.copy(), y_r.copy()
    dist = Normal(loc, 1.0)
    for kw in METHODS:
        skce_test(y_r, dist, random_state=0, **kw)
    assert_array_equal(loc, loc0)
    assert_array_equal(y_r, yr0)
    assert_array_equal(dist.loc, loc0)


def test_categorical_predictions_equal_probabilities():
    y, P = classification_data(20, 30)
    cat = Categorical(P)
    for kw in METHODS:
        a = skce_test(y, cat, kernel=K_TV, random_state=0, **kw)
        b = skce_test(y, P, kernel=K_TV, random_state=0, **kw)
        assert_allclose([a.statistic, a.pvalue, a.estimate], [b.statistic, b.pvalue, b.estimate],
                        rtol=1e-12, atol=1e-15, err_msg=str(kw))
    assert_allclose(tuple(skce_ci(y, cat, kernel=K_TV)), tuple(skce_ci(y, P, kernel=K_TV)),
                    rtol=1e-12)


def test_default_kernel_is_skce_default():
    # kernel=None resolves the median heuristic once, on all samples, as skcalib.skce does
    y, P = classification_data(30, 31)
    res = skce_test(y, P, method="gamma", random_state=0)
    assert_allclose(res.estimate, skce(y, P, random_state=0), rtol=1e-12)
    assert_allclose(skce_ci(y, P).estimate, skce(y, P), rtol=1e-12)
    dist, yr, _ = FAMILIES["normal-gauss"]
    res = skce_test(yr, dist, method="block", random_state=0)
    assert_allclose(res.estimate, skce(yr, dist, estimator="block", random_state=0), rtol=1e-12)


def test_data_validation_messages():
    y, P = classification_data(20, 32)
    with pytest.raises(ValueError, match="inconsistent lengths: 5 and 20"):
        skce_test(y[:5], P, kernel=K_TV, method="gamma")
    dist = Normal(np.zeros(20), 1.0)
    with pytest.raises(ValueError, match="y_true has 5 samples"):
        skce_test(np.zeros(5), dist, method="gamma")
    with pytest.raises(ValueError, match=r"y_true must have shape \(20,\)"):
        skce_ci(np.zeros((20, 2)), dist)
    P2 = P.copy()
    P2[0, 0] = np.nan
    with pytest.raises(ValueError, match="y_pred contains NaN"):
        skce_test(y, P2, kernel=K_TV, method="block")


def test_binary_one_column_and_labels():
    # one-column binary probabilities with labels/pos_label go through the same term
    rng = np.random.default_rng(27)
    p = rng.uniform(size=20)
    y = (rng.uniform(size=20) < p).astype(int)
    P = np.column_stack([1 - p, p])
    a = skce_test(y, p, kernel=K_TV, method="bootstrap", n_resamples=30, random_state=0)
    b = skce_test(y, P, kernel=K_TV, method="bootstrap", n_resamples=30, random_state=0)
    assert_allclose(a.null_distribution, b.null_distribution, rtol=1e-12, atol=1e-15)
    assert_allclose(a.estimate, u_stat(dense_h(y, P)), rtol=1e-12)
    s = np.where(y == 1, "yes", "no")
    c = skce_test(s, p, kernel=K_TV, method="block", pos_label="yes")
    d = skce_test(y, P, kernel=K_TV, method="block")
    assert_allclose(c.pvalue, d.pvalue, rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# Predictive distributions: every family through every method


def _families(n, seed):
    rng = np.random.default_rng(seed)
    loc = rng.uniform(-1, 1, n)
    sd = rng.uniform(0.3, 1.0, n)
    y = loc + sd * rng.standard_normal(n)
    mean2 = rng.uniform(-1, 1, (n, 2))
    y2 = mean2 + 0.6 * rng.standard_normal((n, 2))
    A = rng.standard_normal((n, 2, 2)) * 0.4
    full = A @ A.transpose(0, 2, 1) + 0.2 * np.eye(2)
    mix = Mixture(rng.dirichlet([1.0, 1.0], size=n),
                  [Normal(loc, sd), Normal(loc + 0.5, 0.5 * sd)])
    lmix = Mixture([0.3, 0.7], [Laplace(loc, sd), Laplace(loc - 0.2, sd)])
    W = WassersteinKernel(1.0)
    return {
        "normal-gauss": (Normal(loc, sd), y, tensor(W, GaussianKernel(0.8))),
        "normal-exp": (Normal(loc, sd), y, tensor(W, ExponentialKernel(0.8))),
        "laplace-exp": (Laplace(loc, sd), y, tensor(W, ExponentialKernel(0.8))),
        "laplace-gauss-mc": (Laplace(loc, sd), y, tensor(W, GaussianKernel(0.8))),
        "mvn-diag": (MultivariateNormal(mean2, np.column_stack([sd, sd ** 2])), y2,
                     tensor(W, GaussianKernel(1.0))),
        "mvn-full": (MultivariateNormal(mean2, full), y2, tensor(W, GaussianKernel(1.0))),
        "mixture-normal": (mix, y, tensor(W, GaussianKernel(0.8))),
        "mixture-laplace": (lmix, y, tensor(W, ExponentialKernel(0.8))),
        "default-kernel": (Normal(loc, sd), y, None),
    }


FAMILIES = _families(24, 28)
MC = "laplace-gauss-mc"


@pytest.fixture(params=sorted(FAMILIES))
def family(request):
    with warnings.catch_warnings():
        # non-commuting full covariances: the kernel's validity warning (expected)
        warnings.simplefilter("ignore", KernelValidityWarning)
        yield request.param, FAMILIES[request.param]


def _dense_family(dist, y, kernel, seed):
    term, _ = prepare_term(y, dist, kernel, random_state=seed, n_mc_samples=30)
    return _pairwise.dense_matrix(term)


def test_distribution_families_every_method(family, monkeypatch):
    name, (dist, y, kernel) = family
    n = dist.n_samples
    seed = 3
    kw = dict(kernel=kernel, random_state=seed, n_mc_samples=30)
    H = _dense_family(dist, y, kernel, seed)
    U, V = u_stat(H), v_stat(H)
    assert_allclose(U, skce(y, dist, **kw), rtol=1e-9, atol=1e-14)

    res = skce_test(y, dist, method="block", **kw)
    vals = block_values(H, 2)
    assert_allclose(res.estimate, vals.mean(), rtol=1e-9, atol=1e-14)
    assert_allclose(res.pvalue, sps.norm.sf(vals.mean() * math.sqrt(12) / np.std(vals, ddof=1)),
                    rtol=1e-8)
    res = skce_test(y, dist, method="block", block_size="sqrt", **kw)
    assert_allclose(res.estimate, block_values(H, 4).mean(), rtol=1e-9, atol=1e-14)

    drawn = recorded_counts(monkeypatch)
    res = skce_test(y, dist, method="bootstrap", n_resamples=30, **kw)
    assert_allclose(res.statistic, n / (n - 1) * U - V, rtol=1e-9, atol=1e-14)
    assert_allclose(res.estimate, U, rtol=1e-9, atol=1e-14)
    C = np.concatenate(drawn)
    null = (n / (n - 1) * (np.einsum("mi,ij,mj->m", C, H, C) - C @ np.diag(H))
            - 2 * C @ H.sum(axis=1)) / n ** 2
    assert_allclose(res.null_distribution, null, rtol=1e-9, atol=1e-14)
    assert res.pvalue == (1 + np.sum(res.null_distribution >= res.statistic)) / 31
    monkeypatch.undo()

    res = skce_test(y, dist, method="spectral", n_resamples=30, **kw)
    assert_allclose(res.statistic, n * U, rtol=1e-9, atol=1e-13)
    lam = centred_eigenvalues(H)
    got = np.sort(res.eigenvalues)
    assert_allclose(got[got > got.max() * 1e-10], lam, rtol=1e-7, atol=1e-10 * lam.max())

    res = skce_test(y, dist, method="spectral", n_landmarks=6, n_resamples=30, **kw)
    assert res.n_landmarks == 6 and 0 < res.pvalue <= 1 and res.eigenvalues.size >= 1
    if name != MC:  # the Monte-Carlo term is redrawn on the permuted samples
        assert_allclose(res.statistic, n * U, rtol=1e-9, atol=1e-13)

    res = skce_test(y, dist, method="gamma", **kw)
    mean = np.mean(np.diag(H))
    var = 2 * (n - 1) / n * np.mean(H[~np.eye(n, dtype=bool)] ** 2)
    assert_allclose(res.statistic, n * V, rtol=1e-9)
    assert_allclose(res.pvalue, sps.gamma.sf(n * V, mean ** 2 / var, scale=var / mean),
                    rtol=1e-7)

    for estimator, t in [("unbiased", U), ("biased", V), ("block", vals.mean())]:
        res = skce_test(y, dist, method="distribution_free", estimator=estimator, **kw)
        assert_allclose(res.statistic, t, rtol=1e-9, atol=1e-14)
        assert 0 < res.pvalue <= 1

    res = skce_test(y, dist, method="auto", n_resamples=30, **kw)
    assert res.method == "bootstrap"

    ci = skce_ci(y, dist, **kw)
    assert_allclose(ci.standard_error, hoeffding_se(H), rtol=1e-8)
    ci = skce_ci(y, dist, method="bootstrap", n_resamples=30, **kw)
    assert ci.bootstrap_distribution.shape == (30,) and 0 <= ci.low <= ci.high


def test_distribution_tests_detect_miscalibration():
    # shifted normal predictions: every SKCE test rejects at n = 150
    rng = np.random.default_rng(29)
    loc = rng.uniform(-1, 1, 150)
    y = loc + 0.8 + 0.3 * rng.standard_normal(150)
    dist = Normal(loc, 0.3)
    kernel = tensor(WassersteinKernel(1.0), GaussianKernel(1.0))
    for kw in [dict(method="block", block_size="sqrt"), dict(method="bootstrap"),
               dict(method="spectral"), dict(method="spectral", n_landmarks=30),
               dict(method="gamma")]:
        res = skce_test(y, dist, kernel=kernel, n_resamples=200, random_state=0, **kw)
        assert res.pvalue < 0.01, kw
