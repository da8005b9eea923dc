"""Issue 21, helper "stats": bounded resampling sizes, a UCME default that works on near-0/1
predictions, and the standardised statistic a ranking scorer needs."""

import time

import numpy as np
import pytest

from skcalib import calibration_report, skce, ucme
from skcalib._validation import (
    MAX_MC_SAMPLES,
    MAX_RESAMPLES,
    MAX_TEST_LOCATIONS,
    check_n_resamples,
    check_work_memory,
)
from skcalib.distributions import Laplace
from skcalib.kernels import GaussianKernel, WassersteinKernel, tensor
from skcalib.stats import (
    consistency_test,
    klce_test,
    skce_ci,
    skce_test,
    ucme_test,
)

# --------------------------------------------------------------------------------------------
# 1. Resampling sizes are bounded, and refused before any work.

HUGE = 10**12


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    p = rng.dirichlet([1, 1, 1], size=200)
    y = (rng.random(200)[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
    x = rng.normal(size=200)
    return y, p, x


def _refuses(call, name, limit=2.0):
    """``call`` raises a ValueError naming ``name`` within ``limit`` seconds (no work done)."""
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=name):
        call()
    assert time.perf_counter() - t0 < limit


@pytest.mark.parametrize("value", [HUGE, 1e12, float("inf"), float("nan"), MAX_RESAMPLES + 1])
def test_check_n_resamples_refuses_huge(value):
    with pytest.raises(ValueError, match="n_resamples must be an integer in"):
        check_n_resamples(value)


@pytest.mark.parametrize("value, exc", [(0, ValueError), (-3, ValueError), (2.5, TypeError),
                                        (True, TypeError), ("10", TypeError)])
def test_check_n_resamples_ordinary_errors(value, exc):
    with pytest.raises(exc, match="n_resamples"):
        check_n_resamples(value)


def test_check_n_resamples_accepts_the_ceiling():
    assert check_n_resamples(MAX_RESAMPLES) == MAX_RESAMPLES
    assert check_n_resamples(np.int64(7)) == 7
    assert check_n_resamples(5, "n_mc_samples", max_val=5) == 5


def test_check_work_memory_names_the_parameter():
    with pytest.raises(ValueError, match=r"n_landmarks=20000 would need .* GiB"):
        check_work_memory(3.0 * 20000**2, "n_landmarks", 20000, "m x m matrices")
    check_work_memory(1000, "n_landmarks", 10, "m x m matrices")  # small: nothing raised


@pytest.mark.parametrize("method", ["bootstrap", "spectral", "auto"])
def test_skce_test_refuses_huge_n_resamples(data, method):
    y, p, _ = data
    _refuses(lambda: skce_test(y, p, method=method, n_resamples=HUGE), "n_resamples")


@pytest.mark.parametrize("method", ["bootstrap", "normal"])
def test_skce_ci_refuses_huge_n_resamples(data, method):
    y, p, _ = data
    _refuses(lambda: skce_ci(y, p, method=method, n_resamples=HUGE), "n_resamples")


@pytest.mark.parametrize("method", ["conditional", "consistency"])
def test_consistency_test_refuses_huge_n_resamples(data, method):
    y, p, _ = data
    _refuses(lambda: consistency_test("ece", y, p, method=method, n_resamples=HUGE),
             "n_resamples")


def test_consistency_test_refuses_huge_test_locations(data):
    y, p, _ = data
    _refuses(lambda: consistency_test("ucme", y, p, n_resamples=10,
                                      metric_kwargs={"n_test_locations": HUGE}),
             r"metric_kwargs\['n_test_locations'\]")


@pytest.mark.parametrize("method", ["conditional", "bootstrap", "permutation"])
def test_klce_test_refuses_huge_n_resamples(data, method):
    y, p, x = data
    _refuses(lambda: klce_test(y, p, x, method=method, n_resamples=HUGE), "n_resamples")


def test_calibration_report_refuses_huge_n_resamples(data):
    # The report forwards n_resamples to the tests, which refuse it before resampling.
    y, p, _ = data
    _refuses(lambda: calibration_report(p, y=y, n_resamples=HUGE), "n_resamples", limit=30.0)


def test_regression_report_refuses_huge_n_resamples():
    from skcalib.datasets import make_gaussian_predictions
    pred, y = make_gaussian_predictions(100, random_state=0)
    _refuses(lambda: calibration_report(pred, y=y, n_resamples=HUGE), "n_resamples",
             limit=30.0)


def test_consistency_bands_and_display_refuse_huge_n_resamples(data):
    from skcalib._problems.reliability import consistency_bands
    y, p, _ = data
    _refuses(lambda: consistency_bands(y, p, n_resamples=HUGE), "n_resamples")


def test_reliability_display_refuses_huge_n_resamples(data):
    pytest.importorskip("matplotlib")
    from skcalib.plotting import ReliabilityDisplay
    y, p, _ = data
    _refuses(lambda: ReliabilityDisplay.from_predictions(y, p, band="consistency",
                                                         n_resamples=HUGE), "n_resamples")


@pytest.mark.parametrize("call", [
    lambda y, p: ucme_test(y, p, n_test_locations=HUGE),
    lambda y, p: ucme(y, p, n_test_locations=HUGE),
    lambda y, p: ucme(y, p, n_test_locations=MAX_TEST_LOCATIONS + 1),
])
def test_test_locations_bounded(data, call):
    y, p, _ = data
    _refuses(lambda: call(y, p), "n_test_locations")


@pytest.mark.parametrize("call", [
    lambda y, p: skce_test(y, p, method="block", n_mc_samples=HUGE),
    lambda y, p: skce_ci(y, p, n_mc_samples=HUGE),
    lambda y, p: skce(y, p, n_mc_samples=HUGE),
    lambda y, p: ucme(y, p, n_mc_samples=HUGE),
    lambda y, p: ucme_test(y, p, n_mc_samples=MAX_MC_SAMPLES + 1),
])
def test_n_mc_samples_bounded(data, call):
    y, p, _ = data
    _refuses(lambda: call(y, p), "n_mc_samples")


def test_monte_carlo_draws_bounded_by_memory():
    # Laplace predictions with a Gaussian target kernel use the Monte-Carlo fallback: 10**6
    # draws of 3000 predictions (twice) would be 45 GiB.
    rng = np.random.default_rng(1)
    loc = rng.normal(size=3000)
    dist = Laplace(loc, np.ones(3000))
    y = loc + rng.laplace(size=3000)
    k = tensor(WassersteinKernel(1.0), GaussianKernel(1.0))
    _refuses(lambda: skce(y, dist, kernel=k, n_mc_samples=MAX_MC_SAMPLES), "n_mc_samples")
    _refuses(lambda: skce_test(y, dist, kernel=k, method="block", n_mc_samples=MAX_MC_SAMPLES),
             "n_mc_samples")


def test_nystrom_landmarks_bounded_by_memory():
    rng = np.random.default_rng(2)
    n = 14000
    p = rng.uniform(size=n)
    y = (rng.random(n) < p).astype(int)
    _refuses(lambda: skce_test(y, p, method="spectral", n_landmarks=13999, n_resamples=10),
             "n_landmarks", limit=20.0)


def test_block_bootstrap_interval_batches_its_indices(data, monkeypatch):
    # The block bootstrap drew one (n_resamples x n_blocks) index matrix; it now draws batches
    # of bounded size, with the same replicates as before for a seed.
    from skcalib.stats import _skce
    y, p, _ = data
    ref = skce_ci(y, p, estimator="block", method="bootstrap", n_resamples=300, random_state=5)
    monkeypatch.setattr(_skce, "_COUNTS_BUDGET", 1000)  # batches of 10 resamples
    got = skce_ci(y, p, estimator="block", method="bootstrap", n_resamples=300, random_state=5)
    np.testing.assert_allclose(got.bootstrap_distribution, ref.bootstrap_distribution)
    assert got.bootstrap_distribution.shape == (300,)


# --------------------------------------------------------------------------------------------
# 3. The standardised statistic (zscore) ranks models where p-values saturate.


def _tempered(n, power, seed):
    """Binary predictions p**power of a model calibrated at p: miscalibration grows with
    ``|power - 1|``."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.05, 0.95, size=n)
    y = (rng.random(n) < p).astype(int)
    return y, p ** power


def test_zscore_ranks_where_pvalues_saturate():
    n, B = 1500, 99
    results = [skce_test(*_tempered(n, power, 0), method="bootstrap", n_resamples=B,
                         random_state=0) for power in (1.6, 2.2, 3.0)]
    floor = 1.0 / (B + 1)
    assert all(r.pvalue == floor for r in results)  # the p-values cannot tell them apart
    z = [r.zscore for r in results]
    assert z[0] < z[1] < z[2]  # the z-score orders them by miscalibration
    for r in results:
        assert r.zscore == pytest.approx(r.estimate / r.standard_error)


@pytest.mark.parametrize("method", ["bootstrap", "spectral", "gamma", "block"])
def test_zscore_is_estimate_over_standard_error(data, method):
    y, p, _ = data
    r = skce_test(y, p, method=method, n_resamples=50, random_state=0, labels=[0, 1, 2])
    assert isinstance(r.zscore, float)
    assert r.zscore == r.estimate / r.standard_error
    if method == "block":
        assert r.zscore == r.statistic


def test_zscore_none_without_standard_error(data):
    y, p, x = data
    assert skce_test(y, p, method="distribution_free").zscore is None
    assert ucme_test(y, p, n_test_locations=3, random_state=0).zscore is None
    assert consistency_test("ece", y, p, n_resamples=20, random_state=0).zscore is None
    assert klce_test(y, p, x, n_resamples=20, random_state=0).zscore is None


def test_zscore_of_interval(data):
    y, p, _ = data
    ci = skce_ci(y, p)
    assert ci.zscore == ci.estimate / ci.standard_error


def test_standardise_edge_cases():
    from skcalib.stats._result import standardise
    assert standardise(1.0, None) is None
    assert standardise(0.0, 0.0) == 0.0
    assert standardise(2.0, 0.0) == np.inf
    assert standardise(-2.0, 0.0) == -np.inf
    assert np.isnan(standardise(1.0, float("nan")))
    assert standardise(1.0, 4.0) == 0.25


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
