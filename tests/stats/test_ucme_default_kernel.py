"""The UCME's default kernel works on predictions that are almost all 0 or 1 (a floor under the
median heuristic), keeping the test's size."""

import numpy as np
import pytest

from skcalib import ucme
from skcalib.kernels import GaussianKernel
from skcalib.stats import consistency_test, ucme_test


# --------------------------------------------------------------------------------------------
# 2. The UCME's default kernel works on predictions that are almost all 0 or 1.


def _naive_bayes(split=0):
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split
    from sklearn.naive_bayes import GaussianNB
    X, y = load_breast_cancer(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.5, random_state=split)
    return yte, GaussianNB().fit(Xtr, ytr).predict_proba(Xte)


def test_naive_bayes_median_heuristic_is_tiny():
    # The situation of the issue: most predictions within 1e-12 of 0 or 1, median 0.0056.
    from skcalib.kernels import median_heuristic
    y, P = _naive_bayes()
    assert np.mean(np.minimum(P[:, 1], 1 - P[:, 1]) < 1e-12) > 0.5
    assert median_heuristic(P) < 0.01


@pytest.mark.parametrize("seed", range(5))
def test_ucme_test_defaults_work_on_naive_bayes(seed):
    # Before: "the witness is identically zero at test location(s) ..." for every seed.
    y, P = _naive_bayes()
    res = ucme_test(y, P, random_state=seed)
    assert np.isfinite(res.statistic) and res.pvalue < 0.05  # the model is miscalibrated


def test_ucme_and_estimator_use_the_floor():
    from skcalib.metrics import UCME
    from skcalib._problems.kernel_resolution import UCME_MIN_LENGTH_SCALE
    y, P = _naive_bayes()
    est = UCME(random_state=0).fit(P, y)
    assert est.kernel_.pred_kernel.length_scale == UCME_MIN_LENGTH_SCALE == 0.2
    assert ucme(y, P, random_state=0) == pytest.approx(est.error(P, y), rel=1e-12)
    assert ucme(y, P, random_state=0) == ucme(y, P, kernel=GaussianKernel(0.2), random_state=0)
    assert ucme(y, P, random_state=0) > 0


def test_floor_keeps_a_numeric_length_scale():
    y, P = _naive_bayes()
    tP, ty = np.array([[0.5, 0.5], [0.2, 0.8]]), np.array([0, 1])
    k = GaussianKernel(0.01)
    a = ucme(y, P, kernel=k, test_predictions=tP, test_targets=ty)
    b = ucme(y, P, kernel=GaussianKernel(0.2), test_predictions=tP, test_targets=ty)
    assert a != b  # 0.01 was used as given


def test_floor_does_not_change_ordinary_predictions(data):
    # Where the median heuristic is above the floor, the default is unchanged.
    from skcalib.kernels import median_heuristic
    y, p, _ = data
    med = median_heuristic(p, random_state=4)
    assert med > 0.2
    a = ucme_test(y, p, random_state=4)
    b = ucme_test(y, p, kernel=GaussianKernel(med), random_state=4)
    assert a.statistic == b.statistic and a.pvalue == b.pvalue


def test_consistency_test_ucme_uses_the_floor():
    y, P = _naive_bayes()
    res = consistency_test("ucme", y, P, n_resamples=99, random_state=0)
    assert res.pvalue == 0.01  # exact conditional test: rejects naive Bayes


def _concentrated(rng, n):
    """Calibrated binary predictions in [0.45, 0.55]: the median heuristic (0.04) is below the
    floor."""
    p = rng.uniform(0.45, 0.55, size=n)
    return (rng.random(n) < p).astype(int), p


def _size(gen, n, reps, seed=0, **kwargs):
    """Rejections at 0.05 and the number of runs, out of ``reps`` seeded calibrated data sets.
    A draw of nearly collinear test locations (a ValueError, documented) is not a run; it must
    be rare."""
    rng = np.random.default_rng(seed)
    rejections = runs = 0
    for r in range(reps):
        y, p = gen(rng, n)
        try:
            rejections += ucme_test(y, p, random_state=r, **kwargs).pvalue < 0.05
        except ValueError as exc:
            assert "ill-conditioned" in str(exc)
            continue
        runs += 1
    assert runs >= 0.99 * reps
    return rejections, runs


def _within_binomial(k, reps, level=0.05, alpha=0.001):
    from scipy import stats
    lo, hi = stats.binom.ppf([alpha / 2, 1 - alpha / 2], reps, level)
    return lo <= k <= hi


def test_floor_keeps_size_on_concentrated_calibrated_predictions():
    from skcalib.kernels import median_heuristic
    rng = np.random.default_rng(9)
    y, p = _concentrated(rng, 500)
    assert median_heuristic(np.c_[1 - p, p]) < 0.2  # the floor binds here
    k, runs = _size(_concentrated, 500, 150)
    assert _within_binomial(k, runs), k / runs


@pytest.mark.slow
def test_floor_keeps_size_slow():
    def concentrated3(rng, n):
        P = rng.dirichlet([60, 60, 60], size=n)
        return (rng.random(n)[:, None] > np.cumsum(P, axis=1)).sum(axis=1), P
    for gen in (_concentrated, concentrated3):
        k, runs = _size(gen, 1000, 500, seed=1)
        assert _within_binomial(k, runs), (gen, k / runs)


@pytest.mark.slow
def test_naive_bayes_power_slow():
    for split in range(10):
        y, P = _naive_bayes(split)
        ucme_test(y, P, random_state=split)  # runs (it raised before)
        assert consistency_test("ucme", y, P, n_resamples=199,
                                random_state=split).pvalue < 0.05
