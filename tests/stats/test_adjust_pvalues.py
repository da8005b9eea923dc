""":func:`skcalib.stats.adjust_pvalues`: Holm and Bonferroni against the formulas; bad input named."""

import numpy as np
import pytest

from skcalib.stats import adjust_pvalues


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
