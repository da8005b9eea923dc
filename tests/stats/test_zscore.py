"""The standardised statistic (zscore) of the SKCE tests: estimate over standard error, ranks
models where the p-values saturate."""

import numpy as np
import pytest

from skcalib.stats import (
    consistency_test,
    klce_test,
    skce_ci,
    skce_test,
    ucme_test,
)


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
