"""adjust_pvalues: Holm's and Bonferroni's adjustments, checked against the procedures they
stand for (the adjusted p-values below alpha are exactly the hypotheses the procedure rejects at
alpha) and against the family-wise error rate they promise."""

import numpy as np
import pytest
from scipy.stats import binomtest

from skcalib.stats import adjust_pvalues


def _holm_rejects(p, alpha):
    """Holm's step-down procedure, run by hand: reject the k-th smallest p-value while it is
    below alpha / (m - k + 1), and stop at the first that is not."""
    m = len(p)
    rejected = np.zeros(m, dtype=bool)
    for k, i in enumerate(np.argsort(p, kind="stable")):
        if p[i] < alpha / (m - k):
            rejected[i] = True
        else:
            break
    return rejected


@pytest.mark.parametrize("seed", range(5))
def test_holm_adjusted_pvalues_reject_what_the_step_down_procedure_rejects(seed):
    rng = np.random.default_rng(seed)
    p = np.concatenate([rng.uniform(0, 0.05, 4), rng.uniform(size=6)])
    rng.shuffle(p)
    adjusted = adjust_pvalues(p)
    assert np.all(adjusted >= p) and np.all(adjusted <= 1)
    for alpha in (0.001, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5):
        np.testing.assert_array_equal(adjusted < alpha, _holm_rejects(p, alpha))


def test_bonferroni_rejects_below_alpha_over_m():
    p = np.array([0.004, 0.03, 0.2, 0.011])
    for alpha in (0.01, 0.05, 0.1):
        np.testing.assert_array_equal(adjust_pvalues(p, method="bonferroni") < alpha,
                                      p < alpha / 4)
    assert adjust_pvalues([0.5, 0.9], method="bonferroni").tolist() == [1.0, 1.0]


def test_family_wise_error_rate_at_most_alpha():
    """5 true null hypotheses with uniform p-values, 1000 families: the rate of families with a
    rejection at 0.05 is at most 0.05 up to a 99.9 % binomial allowance (Holm and Bonferroni),
    while unadjusted p-values reject in about 1 - 0.95**5 = 23 % of them."""
    rng = np.random.default_rng(0)
    p = rng.uniform(size=(1000, 5))
    for method in ("holm", "bonferroni"):
        errors = sum(bool(np.any(adjust_pvalues(row, method=method) < 0.05)) for row in p)
        assert binomtest(errors, 1000).proportion_ci(0.999).low <= 0.05
    assert np.mean(np.any(p < 0.05, axis=1)) > 0.2


def test_one_pvalue_is_left_as_it_is():
    assert adjust_pvalues([0.03]).tolist() == [0.03]
    assert adjust_pvalues([0.03], method="bonferroni").tolist() == [0.03]


def test_adjust_pvalues_is_holm_and_bonferroni():
    p = np.array([0.01, 0.04, 0.03, 0.2])
    order = np.argsort(p)
    holm = np.maximum.accumulate(np.minimum(1, (4 - np.arange(4)) * p[order]))
    expected = np.empty(4)
    expected[order] = holm
    np.testing.assert_allclose(adjust_pvalues(p), expected)
    np.testing.assert_allclose(adjust_pvalues(p, method="bonferroni"), np.minimum(1, 4 * p))
    with pytest.raises(ValueError, match="method must be one of .* Did you mean 'holm'"):
        adjust_pvalues(p, method="hlom")
    for bad in ([0.1, float("nan")], [1.5], [], [[0.1]]):
        with pytest.raises(ValueError, match="pvalues"):
            adjust_pvalues(bad)
    with pytest.raises(TypeError, match="pvalues"):
        adjust_pvalues(["a", "b"])
