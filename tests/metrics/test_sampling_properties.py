"""Statistical properties of the estimators, seeded (reference-values.md §1, §7.2)."""

import numpy as np
import pytest

from skcalib import calibration_error, mmce, skce
from skcalib.kernels import ExponentialKernel, GaussianKernel


def _calibrated(rng, n, C, alpha=1.0):
    P = rng.dirichlet(np.full(C, alpha), size=n)
    y = (rng.random(n)[:, None] > np.cumsum(P, axis=1)).sum(axis=1)
    return np.minimum(y, C - 1), P


@pytest.mark.parametrize("C", [2, 10, 100])
def test_unbiased_and_block_mean_zero_biased_positive(C):
    # CalibrationErrors.jl property test: (Exp ∘ Scale(0.1)) ⊗ White = exp(-10 d), n = 20.
    rng = np.random.default_rng(C)
    k = ExponentialKernel(length_scale=10.0)
    reps = 1000
    u = np.empty(reps)
    b = np.empty(reps)
    v = np.empty(reps)
    for r in range(reps):
        y, P = _calibrated(rng, 20, C)
        labels = np.arange(C)
        u[r] = skce(y, P, kernel=k, labels=labels)
        b[r] = skce(y, P, kernel=k, labels=labels, estimator="block", block_size=2)
        v[r] = skce(y, P, kernel=k, labels=labels, estimator="biased")
    # means within 4 standard errors of 0 (and the Julia tolerances)
    assert abs(u.mean()) < max(4 * u.std() / np.sqrt(reps), 1e-3)
    assert abs(b.mean()) < max(4 * b.std() / np.sqrt(reps), 5e-3)
    assert abs(u.mean()) < 1e-3 and abs(b.mean()) < 5e-3
    assert (u < 0).any() and (u > 0).any()
    assert (v > 0).all()


def test_unbiased_mean_zero_with_median_heuristic():
    # The bandwidth depends on predictions only, so unbiasedness holds conditionally (§3.2).
    rng = np.random.default_rng(7)
    vals = [skce(*_calibrated(rng, 50, 4), labels=np.arange(4)) for _ in range(400)]
    vals = np.asarray(vals)
    assert abs(vals.mean()) < 4 * vals.std() / np.sqrt(vals.size)


def test_biased_expectation_dirichlet_m1():
    # M1 (m=10, a=0.1, calibrated), kernel with k(p,p)=1: E[SKCE_b] = (1 - (a+1)/(ma+1)) / n.
    rng = np.random.default_rng(11)
    n, m, a = 250, 10, 0.1
    expected = (1 - (a + 1) / (m * a + 1)) / n  # = 0.0018
    k = ExponentialKernel(length_scale="median", metric="tv")
    vals = np.array([skce(*_calibrated(rng, n, m, a), kernel=k, estimator="biased",
                          labels=np.arange(m)) for _ in range(200)])
    se = vals.std() / np.sqrt(vals.size)
    assert abs(vals.mean() - expected) < 4 * se


def test_miscalibrated_model_is_detected():
    rng = np.random.default_rng(3)
    y, P = _calibrated(rng, 500, 3)
    Q = P ** 3
    Q /= Q.sum(axis=1, keepdims=True)  # overconfident
    k = GaussianKernel(0.5)
    assert skce(y, Q, kernel=k, labels=[0, 1, 2]) > 10 * abs(skce(y, P, kernel=k, labels=[0, 1, 2]))
    assert calibration_error(y, Q) > calibration_error(y, P)
    assert mmce(y, Q) > mmce(y, P)


def test_debiased_l2_is_less_biased():
    # Calibrated binary data: the plug-in squared L2 error is biased upwards, the debiased one ~ 0.
    rng = np.random.default_rng(5)
    plug, deb = [], []
    for _ in range(300):
        p = rng.uniform(size=200)
        y = (rng.uniform(size=200) < p).astype(int)
        plug.append(calibration_error(y, p, norm="l2", squared=True, n_bins=10))
        deb.append(calibration_error(y, p, norm="l2", squared=True, n_bins=10, debias=True))
    plug, deb = np.array(plug), np.array(deb)
    assert plug.mean() > 5 * abs(deb.mean())
    assert abs(deb.mean()) < 4 * deb.std() / np.sqrt(deb.size) + 2e-4
    assert (deb < 0).any()
