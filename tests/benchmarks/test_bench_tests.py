"""The helpers of ``benchmarks/bench_tests.py`` (the benchmark itself is not run here).

The benchmark's dense baseline (``H`` as an ``n x n`` matrix, one quadratic form per resample) is a
brute-force form of the Arcones--Giné bootstrap; run on skcalib's own resampling counts it must
reproduce ``skce_test(method="bootstrap")`` exactly, and the data generators must be calibrated
models of the stated shapes.
"""

import importlib.util
import pathlib

import numpy as np
import pytest

from skcalib.stats import skce_test

_PATH = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "bench_tests.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_tests", _PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("family", ["cls", "reg"])
def test_dense_baseline_reproduces_bootstrap(bench, family, monkeypatch):
    monkeypatch.setattr(bench, "BOOT_M", 40)
    y, pred = bench.make(family, 90)
    diff, res = bench.check_bootstrap_agreement(family, y, pred, 3)
    assert res.n_resamples == 40
    assert diff < 1e-12


def test_dense_baseline_by_hand(bench):
    # T and T* from their definitions on a 7-sample problem, with explicit counts.
    y, pred = bench.make("reg", 7)
    term = bench.pair_term(y, pred, 0)
    H = bench._pairwise.dense_matrix(term)
    n = 7
    counts = np.array([[1, 1, 1, 1, 1, 1, 1], [7, 0, 0, 0, 0, 0, 0], [0, 2, 0, 3, 0, 1, 1]],
                      dtype=float)
    T, null = bench.dense_bootstrap(term, 3, counts=counts)
    U = (H.sum() - np.trace(H)) / (n * (n - 1))
    V = H.sum() / n ** 2
    assert T == pytest.approx(n / (n - 1) * U - V, rel=1e-12, abs=1e-15)
    for c, t in zip(counts, null):
        expected = (n / (n - 1) * (c @ H @ c - c @ np.diag(H)) - 2 * c @ H.sum(axis=1)) / n ** 2
        assert t == pytest.approx(expected, rel=1e-12, abs=1e-15)
    # The identity resample (all counts 1): T* = U - 2 V.
    assert null[0] == pytest.approx(U - 2 * V, rel=1e-12, abs=1e-15)


def test_dense_baseline_draws_with_rng(bench):
    y, pred = bench.make("reg", 30)
    term = bench.pair_term(y, pred, 0)
    T1, null1 = bench.dense_bootstrap(term, 25, rng=np.random.default_rng(5))
    T2, null2 = bench.dense_bootstrap(term, 25, rng=np.random.default_rng(5))
    assert T1 == T2
    np.testing.assert_array_equal(null1, null2)
    assert np.unique(null1).size > 20  # distinct resamples
    res = skce_test(y, pred, method="bootstrap", n_resamples=10, random_state=0)
    assert T1 == pytest.approx(res.statistic, rel=1e-10, abs=1e-14)


def test_data_generators(bench):
    y, P = bench.make("cls", 500)
    assert P.shape == (500, bench.N_CLASSES)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert y.min() >= 0 and y.max() < bench.N_CLASSES
    # Calibrated: the mean prediction of each class matches its frequency (5 standard errors).
    freq = np.bincount(y, minlength=bench.N_CLASSES) / 500
    assert np.all(np.abs(freq - P.mean(axis=0)) < 5 * np.sqrt(0.25 / 500))
    y_r, dist = bench.make("reg", 400)
    assert y_r.shape == (400,) and dist.n_samples == 400
