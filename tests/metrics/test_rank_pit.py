"""The randomised verification rank of ensembles (``pit(..., ranks=True)``): uniform when the
target and the members are exchangeable -- members drawn from the target's law -- where the plain
PIT of the empirical law is not."""

import numpy as np
import pytest
from scipy import stats

import skcalib
from skcalib.distributions import Empirical, Normal
from skcalib.stats import pit_test


def _ensemble(n, m, seed, spread=1.0):
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=n)
    y = mu + rng.normal(size=n)
    members = mu[:, None] + spread * rng.normal(size=(n, m))
    return y, Empirical(members)


def test_ranks_against_a_brute_force_count():
    rng = np.random.default_rng(0)
    draws = np.round(rng.normal(size=(50, 6)), 1)         # ties between draws and targets
    y = np.round(rng.normal(size=50), 1)
    u = skcalib.pit(y, Empirical(draws), ranks=True, random_state=1)
    v = np.random.default_rng(1).uniform(size=50)
    for i in range(50):
        r, t = np.sum(draws[i] < y[i]), np.sum(draws[i] == y[i])
        assert u[i] == pytest.approx((r + v[i] * (t + 1)) / 7, rel=1e-15)


def test_exchangeable_members_give_uniform_ranks_not_uniform_pit():
    y, ens = _ensemble(4000, 10, 0)
    assert pit_test(y, ens, random_state=0).pvalue < 1e-6        # the plain PIT: k / m only
    assert pit_test(y, ens, ranks=True, random_state=0).pvalue > 0.01
    # the ranks of each sample take the m + 1 values equally often
    counts = np.bincount(np.floor(skcalib.pit(y, ens, ranks=True, random_state=0) * 11)
                         .astype(int), minlength=11)
    assert stats.chisquare(counts).pvalue > 0.001


def test_size_over_seeds_and_power():
    p = np.array([pit_test(*_ensemble(300, 5, s), ranks=True, random_state=s).pvalue
                  for s in range(200)])
    rejections = int(np.sum(p < 0.05))
    lo, hi = stats.binomtest(rejections, 200).proportion_ci(0.999)
    assert lo <= 0.05 <= hi, rejections
    # members at half the spread: the target falls outside the ensemble too often
    assert pit_test(*_ensemble(300, 5, 0, spread=0.5), ranks=True, random_state=0).pvalue < 1e-3


def test_ranks_refuse_what_has_no_equal_weight_draws():
    with pytest.raises(ValueError, match="ranks=True needs predictions given as equal-weight "
                                         "draws.*Normal"):
        skcalib.pit([0.0], Normal([0.0], 1.0), ranks=True)
    with pytest.raises(ValueError, match="ranks=True needs equal-weight draws"):
        skcalib.pit([0.0], Empirical([[0.0, 1.0]], [[1.0, 3.0]]), ranks=True)
    with pytest.raises((TypeError, ValueError), match="ranks"):
        skcalib.pit([0.0], Empirical([[0.0, 1.0]]), ranks="yes")
    # explicit equal weights are equal weights
    u = skcalib.pit([0.5], Empirical([[0.0, 1.0]], [[2.0, 2.0]]), ranks=True, random_state=0)
    assert 1 / 3 <= u[0] <= 2 / 3
