"""accuracy_test: the binomial test of the accuracy against the mean confidence."""

import numpy as np
import pytest
from scipy.stats import binomtest

from skcalib.stats import ProportionTestResult, accuracy_test


def _calibrated(n, n_classes, rng):
    P = rng.dirichlet(np.ones(n_classes), size=n)
    y = (P.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
    return P, y


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_equals_scipy_binomtest_of_the_correct_predictions(alternative):
    rng = np.random.default_rng(0)
    P, y = _calibrated(150, 3, rng)
    k = int(np.sum(P.argmax(axis=1) == y))
    c = float(P.max(axis=1).mean())
    ref = binomtest(k, 150, p=c, alternative=alternative)
    res = accuracy_test(y, P, alternative=alternative)
    assert isinstance(res, ProportionTestResult)
    assert res.k == k and res.n_samples == 150 and res.method == "binomial"
    assert res.statistic == k / 150 and res.expected == c
    assert res.estimate == pytest.approx(k / 150 - c, abs=1e-15)
    assert res.pvalue == ref.pvalue
    for method in ("exact", "wilson"):
        assert tuple(res.proportion_ci(0.9, method=method)) == pytest.approx(
            tuple(ref.proportion_ci(0.9, method=method)), abs=1e-15)
    statistic, pvalue = res
    assert (statistic, pvalue) == (res.statistic, res.pvalue)


def test_the_interval_of_the_gap_is_the_accuracys_shifted_by_the_confidence():
    rng = np.random.default_rng(1)
    P, y = _calibrated(80, 2, rng)
    res = accuracy_test(y, P)
    low, high = res.proportion_ci(0.95)
    gap = res.confidence_interval(0.95)
    assert gap == pytest.approx((low - res.expected, high - res.expected), abs=1e-15)


def test_binary_probabilities_labels_and_string_labels():
    p = np.array([0.9, 0.8, 0.3, 0.2, 0.6, 0.4])
    y = np.array(["b", "b", "a", "b", "a", "a"])
    res = accuracy_test(y, p)  # P(greater label "b")
    assert res.k == 4 and res.expected == pytest.approx(np.mean([0.9, 0.8, 0.7, 0.8, 0.6, 0.6]))
    assert accuracy_test(y, np.column_stack([1 - p, p]), labels=["a", "b"]).k == 4


def test_size_at_most_the_level_on_calibrated_models():
    """Monte-Carlo size at 0.05 on calibrated 3-class models with unequal confidences: at most
    0.05 up to a 99.9 % binomial allowance (the test is conservative: Hoeffding 1956)."""
    rng = np.random.default_rng(2)
    reps = 800
    rejections = sum(accuracy_test(*_calibrated(100, 3, rng)[::-1]).pvalue < 0.05
                     for _ in range(reps))
    upper = binomtest(rejections, reps).proportion_ci(0.999).low
    assert upper <= 0.05


def test_power_against_over_confidence():
    rng = np.random.default_rng(3)
    P, y = _calibrated(400, 3, rng)
    sharp = P ** 4 / (P ** 4).sum(axis=1, keepdims=True)
    res = accuracy_test(y, sharp, alternative="less")
    assert res.estimate < 0 and res.pvalue < 1e-6
    assert accuracy_test(y, sharp, alternative="greater").pvalue > 0.5


def test_errors_name_the_argument():
    with pytest.raises(ValueError, match="alternative"):
        accuracy_test([0, 1], [0.2, 0.7], alternative="bigger")
    with pytest.raises(ValueError, match="y_proba|probabilit"):
        accuracy_test([0, 1], [0.2, 1.7])
    res = accuracy_test([0, 1], [0.2, 0.7])
    with pytest.raises(ValueError, match="confidence_level"):
        res.proportion_ci(1.5)
    with pytest.raises(ValueError, match="method"):
        res.proportion_ci(0.9, method="wald")
