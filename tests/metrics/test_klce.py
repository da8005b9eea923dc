"""KLCE, the local calibration bias and the KLCE test (Vashistha and Farahi), against the
reference values of reference-values.md section 6 and brute force."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from skcalib import klce, local_calibration_bias, skce
from skcalib.kernels import ExponentialKernel, GaussianKernel
from skcalib.stats import klce_test, skce_test

# Oracle of reference-values.md 6.3 (RBF widths w: exp(-d^2 / w^2), length scale w / sqrt(2)).
Y = [1, 0, 1, 0, 1]
P = [0.8, 0.3, 0.6, 0.1, 0.4]
X = [0, 1, 0, 1, 0.5]
K_P = GaussianKernel(0.5 / np.sqrt(2))
L_X = GaussianKernel(1.0 / np.sqrt(2))
ORACLE = dict(kernel=K_P, feature_kernel=L_X, standardize=False)


def test_oracle_values():
    assert_allclose(klce(Y, P, X, **ORACLE), 0.0089633, atol=5e-8)
    assert_allclose(klce(Y, P, X, normalization="kite", **ORACLE), 0.0156715, atol=5e-8)
    assert_allclose(klce(Y, P, X, estimator="biased", **ORACLE), 0.0335706, atol=5e-8)
    # off-diagonal raw sum = U * n (n - 1)
    assert_allclose(klce(Y, P, X, **ORACLE) * 20, 0.1792657, atol=5e-7)
    # KCE^2 with a constant feature kernel (a constant audit feature)
    assert_allclose(klce(Y, P, np.zeros(5), **ORACLE), 0.0023396, atol=5e-8)


def test_kite_normalisation_example_6_1():
    """reference-values 6.1: the two normalisations pin down which one is implemented."""
    x, p, y = [[0], [1], [2], [3]], [.2, .5, .9, .4], [0, 1, 1, 1]
    kw = dict(kernel=GaussianKernel(0.5 / np.sqrt(2)), feature_kernel=GaussianKernel(1 / np.sqrt(2)),
              standardize=False)
    assert_allclose(klce(y, p, x, **kw), -0.00043865577485562485, rtol=1e-12)
    assert_allclose(klce(y, p, x, normalization="kite", **kw), -0.0013464688929316544,
                    rtol=1e-12)


def _brute(y, P, X, ls_p, ls_x, vector):
    y = np.asarray(y)
    P = np.asarray(P, dtype=float)
    X = np.asarray(X, dtype=float).reshape(len(y), -1)
    if vector:
        E = np.eye(P.shape[1])[y] - P
        Q = P
    else:
        E = (y == 1).astype(float)[:, None] - P[:, None]
        Q = P[:, None]
    dq = ((Q[:, None, :] - Q[None, :, :]) ** 2).sum(-1)
    dx = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    H = np.exp(-dq / (2 * ls_p ** 2)) * np.exp(-dx / (2 * ls_x ** 2)) * (E @ E.T)
    n = len(y)
    return (H.sum() - np.trace(H)) / (n * (n - 1)), H.sum() / n ** 2


@pytest.mark.parametrize("vector", [False, True])
def test_brute_force_and_invariances(vector):
    rng = np.random.default_rng(0)
    n = 37
    if vector:
        P = rng.dirichlet([1, 1, 1], size=n)
        y = np.array([rng.choice(3, p=r) for r in P])
    else:
        P = rng.random(n)
        y = (rng.random(n) < P).astype(int)
    X = rng.normal(size=(n, 2))
    kw = dict(kernel=GaussianKernel(0.3), feature_kernel=GaussianKernel(0.8), standardize=False)
    U, V = _brute(y, P, X, 0.3, 0.8, vector)
    assert_allclose(klce(y, P, X, **kw), U, rtol=1e-12)
    assert_allclose(klce(y, P, X, estimator="biased", **kw), V, rtol=1e-12)
    perm = rng.permutation(n)
    assert_allclose(klce(y[perm], P[perm], X[perm], **kw), U, rtol=1e-12)
    assert_allclose(klce(y, P, X, chunk_size=5, n_jobs=2, **kw), U, rtol=1e-12)
    # standardisation = dividing the features by their standard deviations
    Xs = (X - X.mean(0)) / X.std(0)
    assert_allclose(klce(y, P, X, kernel=kw["kernel"], feature_kernel=kw["feature_kernel"]),
                    _brute(y, P, Xs, 0.3, 0.8, vector)[0], rtol=1e-12)


def test_skce_is_the_special_case_of_a_constant_feature_kernel():
    rng = np.random.default_rng(1)
    n = 50
    P3 = rng.dirichlet([1, 1, 1], size=n)
    y3 = np.array([rng.choice(3, p=r) for r in P3])
    const = np.zeros((n, 1))
    k = GaussianKernel(0.4)
    assert_allclose(klce(y3, P3, const, kernel=k), skce(y3, P3, kernel=k), rtol=1e-12)
    # binary: the scalar residual form is half the one-hot SKCE; skce's kernel acts on the two
    # columns (1 - p, p), at distance sqrt(2) |p - p'|.
    p = rng.random(n)
    y = (rng.random(n) < p).astype(int)
    assert_allclose(klce(y, p, const, kernel=k),
                    0.5 * skce(y, p, kernel=GaussianKernel(0.4 * np.sqrt(2))), rtol=1e-12)


def test_one_vs_rest_is_the_binary_klce_per_class():
    rng = np.random.default_rng(2)
    n = 40
    P = rng.dirichlet([1, 1, 1], size=n)
    y = np.array([rng.choice(3, p=r) for r in P])
    X = rng.normal(size=n)
    kw = dict(kernel=GaussianKernel(0.3), feature_kernel=ExponentialKernel(1.0))
    ovr = klce(y, P, X, multiclass="one_vs_rest", **kw)
    assert ovr.shape == (3,)
    for c in range(3):
        assert_allclose(ovr[c], klce((y == c).astype(int), P[:, c], X, **kw), rtol=1e-12)


def test_local_calibration_bias_oracle_and_evaluation_points():
    lcb = local_calibration_bias(Y, P, X, **ORACLE)
    assert_allclose(lcb, [.30265, .06466, .30198, .01350, .19869], atol=5e-6)
    loo = local_calibration_bias(Y, P, X, leave_one_out=True, **ORACLE)
    assert_allclose(loo, [.37344, .24768, .25060, .08521, .02907], atol=5e-6)
    at_points = local_calibration_bias(Y, P, X, X_eval=X, y_proba_eval=P, **ORACLE)
    assert_allclose(at_points, lcb, rtol=1e-12)
    # a point far from all data in feature space gets no weight: bias 0 by convention
    far = local_calibration_bias(Y, P, X, X_eval=[1e6], y_proba_eval=[0.5], **ORACLE)
    assert_allclose(far, [0.0])


def test_local_calibration_bias_multiclass_is_per_class():
    rng = np.random.default_rng(3)
    Pm = rng.dirichlet([1, 1, 1], size=30)
    y = np.array([rng.choice(3, p=r) for r in Pm])
    x = rng.normal(size=30)
    out = local_calibration_bias(y, Pm, x)
    assert out.shape == (30, 3)
    for c in range(3):
        assert_allclose(out[:, c], local_calibration_bias((y == c).astype(int), Pm[:, c], x),
                        rtol=1e-12)


def test_errors_and_no_mutation():
    y, p, x = np.array(Y), np.array(P), np.array(X, dtype=float)
    copies = (y.copy(), p.copy(), x.copy())
    with pytest.raises(ValueError, match="X has 4 rows"):
        klce(y, p, x[:4])
    with pytest.raises(ValueError, match="normalization"):
        klce(y, p, x, normalization="nope")
    with pytest.raises(ValueError, match="normalization='kite'.*estimator='unbiased'"):
        klce(y, p, x, normalization="kite", estimator="biased")
    with pytest.raises(ValueError, match="sample_weight"):
        klce(y, p, x, normalization="kite", sample_weight=np.ones(5))
    with pytest.raises(TypeError, match="feature_kernel must be"):
        klce(y, p, x, feature_kernel="rbf")
    with pytest.raises(ValueError, match="multiclass"):
        klce(y, p, x, multiclass="ovr")
    with pytest.raises(TypeError, match="standardize must be True or False"):
        klce(y, p, x, standardize="yes")
    with pytest.raises(ValueError, match="X_eval needs y_proba_eval"):
        local_calibration_bias(y, p, x, X_eval=x)
    with pytest.raises(ValueError, match="leave_one_out"):
        local_calibration_bias(y, p, x, X_eval=x, y_proba_eval=p, leave_one_out=True)
    with pytest.raises(ValueError, match="X_eval has 2 features"):
        local_calibration_bias(y, p, x, X_eval=np.zeros((2, 2)), y_proba_eval=[.1, .2])
    with pytest.raises(ValueError, match="method"):
        klce_test(y, p, x, method="nope")
    with pytest.raises(ValueError, match="n_resamples"):
        klce_test(y, p, x, n_resamples=0)
    for a, b in zip((y, p, x), copies):
        assert_allclose(a, b)


# --------------------------------------------------------------------------------------------
# klce_test


def _locally_biased(n, rng):
    """Globally calibrated, locally biased: P(y = 1 | p, x) = p + 0.2 sign(x), x independent of
    p and symmetric, so that P(y = 1 | p) = p."""
    x = rng.normal(size=n)
    p = rng.uniform(0.25, 0.75, size=n)
    y = (rng.random(n) < p + 0.2 * np.sign(x)).astype(int)
    return y, p, x


def test_statistic_and_null_draws_by_brute_force(monkeypatch):
    from skcalib.stats import _klce

    rng = np.random.default_rng(4)
    n = 23
    p = rng.random(n)
    y = (rng.random(n) < p).astype(int)
    x = rng.normal(size=(n, 2))
    kw = dict(kernel=GaussianKernel(0.3), feature_kernel=GaussianKernel(0.8), standardize=False)
    drawn = []
    original = _klce._null_residuals

    def spy(method, g, R, Pk, M):
        E = original(method, g, R, Pk, M)
        drawn.append(E.copy())
        return E

    monkeypatch.setattr(_klce, "_null_residuals", spy)
    for method in ("conditional", "bootstrap", "permutation"):
        drawn.clear()
        res = klce_test(y, p, x, method=method, n_resamples=7, random_state=0, **kw)
        assert_allclose(res.statistic, klce(y, p, x, **kw), rtol=1e-12)
        E = np.concatenate(drawn)[:, :, 0]
        dq = (p[:, None] - p[None, :]) ** 2
        dx = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
        K = np.exp(-dq / (2 * 0.3 ** 2)) * np.exp(-dx / (2 * 0.8 ** 2))
        expected = [(e @ K @ e - e @ e) / (n * (n - 1)) for e in E]
        assert_allclose(res.null_distribution, expected, rtol=1e-10, atol=1e-15)
        count = np.sum(res.null_distribution >= res.statistic)
        assert res.pvalue == pytest.approx((1 + count) / 8)
    # the permutation null permutes the observed residuals
    assert_allclose(np.sort(drawn[0][0, :, 0]), np.sort(y - p))


def test_globally_calibrated_locally_biased_model():
    """Rejected by the KLCE test, not by the global SKCE test (the paper's central point)."""
    rng = np.random.default_rng(5)
    y, p, x = _locally_biased(1000, rng)
    assert klce_test(y, p, x, random_state=0).pvalue < 0.01
    assert klce_test(y, p, x, method="permutation", random_state=0).pvalue < 0.01
    assert skce_test(y, p, random_state=0).pvalue > 0.05


def test_conditional_klce_test_size_fast():
    """Calibrated model (labels drawn from p): rejection rate at 0.05 within the binomial 99.9%
    interval over 200 data sets (the conditional null is exact)."""
    from scipy.stats import binom

    rng = np.random.default_rng(6)
    reps, rejections = 200, 0
    for _ in range(reps):
        x = rng.normal(size=(60, 2))
        p = 1 / (1 + np.exp(-x[:, 0]))
        y = (rng.random(60) < p).astype(int)
        rejections += klce_test(y, p, x, n_resamples=99, random_state=rng).pvalue <= 0.05
    lo, hi = binom.ppf([0.0005, 0.9995], reps, 0.05)
    assert lo <= rejections <= hi, rejections


def test_n_jobs_chunks_and_seed_do_not_change_the_result():
    rng = np.random.default_rng(7)
    y, p, x = _locally_biased(150, rng)
    a = klce_test(y, p, x, n_resamples=50, random_state=3)
    b = klce_test(y, p, x, n_resamples=50, random_state=3, n_jobs=2, chunk_size=17)
    assert_allclose(a.null_distribution, b.null_distribution, rtol=1e-12)
    assert a.pvalue == b.pvalue


def test_distribution_free_bound():
    rng = np.random.default_rng(8)
    y, p, x = _locally_biased(400, rng)
    res = klce_test(y, p, x, method="distribution_free")
    t = res.statistic
    assert res.pvalue == pytest.approx(np.exp(-(400 // 2) * t ** 2 / 2) if t > 0 else 1.0)
    # a negative estimate gives 1
    assert klce_test(Y, P, X, method="distribution_free", **ORACLE).pvalue <= 1.0
