"""Resampling sizes, Monte-Carlo draws, test locations and landmarks are bounded, and refused
before any work."""

import tracemalloc

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


def _refuses(call, name, limit_mb=64):
    """``call`` raises a ValueError naming ``name`` before any work: its peak memory (numpy's
    allocations included) stays under ``limit_mb`` MB, far below what the refused work would take
    (an index matrix of ``10**12`` resamples, 45 GiB of Monte-Carlo draws, a 1.5 GB landmark
    matrix). The work is measured, not the time: timings of a shared machine are noise."""
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=name):
            call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < limit_mb * 2**20, f"{peak / 2**20:.0f} MB"


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
    _refuses(lambda: calibration_report(p, y=y, n_resamples=HUGE), "n_resamples")


def test_regression_report_refuses_huge_n_resamples():
    from skcalib.datasets import make_gaussian_predictions
    pred, y = make_gaussian_predictions(100, random_state=0)
    _refuses(lambda: calibration_report(pred, y=y, n_resamples=HUGE), "n_resamples")


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
             "n_landmarks")


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
