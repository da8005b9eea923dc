"""Heavier statistical checks (``make test-slow``): the Dirichlet models of the NeurIPS 2019 paper
against the exact expectations of reference-values.md §7.2."""

import numpy as np
import pytest

from skcalib import calibration_error, skce
from skcalib.kernels import ExponentialKernel, median_heuristic

pytestmark = pytest.mark.slow

M, A, N = 10, 0.1, 250


def _model(rng, pi, beta):
    G = rng.dirichlet(np.full(M, A), size=N)
    y_model = (rng.random(N)[:, None] > np.cumsum(G, axis=1)).sum(axis=1).clip(max=M - 1)
    y_beta = rng.choice(M, size=N, p=beta)
    y = np.where(rng.random(N) < pi, y_beta, y_model)
    return y, G


def _paper_kernel(G):
    return ExponentialKernel(median_heuristic(G, metric="tv", include_diagonal=True), metric="tv")


@pytest.mark.parametrize(
    "pi, beta, expected_uq, tol",
    [
        (0.0, None, 0.0, None),  # M1
        (0.5, "e1", 0.09633, 5e-5),  # M2
        (1.0, "uniform", 0.015143, 5e-6),  # M3
    ],
)
def test_dirichlet_models_skce_expectations(pi, beta, expected_uq, tol):
    rng = np.random.default_rng(2019)
    b = np.eye(M)[0] if beta == "e1" else np.full(M, 1 / M)
    reps = 1000
    uq = np.empty(reps)
    bb = np.empty(reps)
    labels = np.arange(M)
    for r in range(reps):
        y, G = _model(rng, pi, b)
        k = _paper_kernel(G)
        uq[r] = skce(y, G, kernel=k, labels=labels)
        bb[r] = skce(y, G, kernel=k, labels=labels, estimator="biased")
    se = uq.std() / np.sqrt(reps)
    assert abs(uq.mean() - expected_uq) < 4 * se + (tol or 0.0)
    if pi == 0.0:
        expected_b = (1 - (A + 1) / (M * A + 1)) / N  # 0.0018
        assert abs(bb.mean() - expected_b) < 4 * bb.std() / np.sqrt(reps)
    if beta == "e1":
        # E[SKCE_b] = 0.9/n + (1 - 1/n) E[SKCE_uq] for M2
        expected_b = 0.9 / N + (1 - 1 / N) * expected_uq
        assert abs(bb.mean() - expected_b) < 4 * bb.std() / np.sqrt(reps) + tol


def test_analytic_ece_of_m3_and_bias_of_uniform_binning():
    # True ECE (TV) of M3 is 0.7106418012; uniform binning with m = 10 puts almost every sample in
    # its own cell, so its estimate is ~ mean(1 - p[y]) -- heavily biased (the paper's point).
    rng = np.random.default_rng(7)
    est = [calibration_error(*_model(rng, 1.0, np.full(M, 1 / M)), mode="canonical",
                             n_bins=10, labels=np.arange(M)) for _ in range(200)]
    mean = float(np.mean(est))
    assert 0.8 < mean < 0.95
    # with data-dependent bins of at least 25 samples the bias direction flips (below the truth)
    est = [calibration_error(*_model(rng, 1.0, np.full(M, 1 / M)), mode="canonical",
                             strategy="median_variance", n_bins=1000, min_bin_size=25,
                             labels=np.arange(M)) for _ in range(200)]
    assert np.mean(est) < 0.7106418012
