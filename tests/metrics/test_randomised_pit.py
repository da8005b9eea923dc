"""The randomised PIT (Czado, Gneiting and Held 2009) of predictive laws with atoms: uniform under
calibration where the plain PIT ``F(y)`` is not, and exactly today's PIT for continuous families
(no random numbers consumed)."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats as sps

import skcalib
from skcalib.distributions import Empirical, Laplace, Mixture, Normal
from skcalib.stats import pit_test


def _calibrated_empirical(n=3000, m=5, seed=0, weighted=False, tie=False):
    """Rows of ``m`` draws and a target drawn from each row's empirical law itself (``tie``:
    draws 0 and 1 equal, one atom of their summed weight)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, m)) + rng.normal(size=(n, 1))
    if tie:
        x[:, 1] = x[:, 0]
    w = rng.uniform(0.1, 1.0, size=(n, m)) if weighted else None
    p = np.full((n, m), 1.0 / m) if w is None else w / w.sum(1, keepdims=True)
    pick = (rng.uniform(size=n)[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
    y = x[np.arange(n), np.minimum(pick, m - 1)]
    return x, w, y


def test_plain_pit_of_draws_is_not_uniform_but_randomised_is():
    x, _, y = _calibrated_empirical()
    d = Empirical(x)
    plain = d.cdf(y)
    assert set(np.unique(plain)) <= {0.2, 0.4, 0.6, 0.8, 1.0}
    assert sps.kstest(plain, "uniform").pvalue < 1e-20
    u = skcalib.pit(y, d, random_state=0)
    assert np.all((u >= plain - 0.2 - 1e-15) & (u <= plain))      # inside the draw's step
    assert sps.kstest(u, "uniform").pvalue > 0.01
    # exact law: given the step, the position inside it is uniform, and the steps are equally likely
    pos = (u - (plain - 0.2)) / 0.2
    assert sps.kstest(pos, "uniform").pvalue > 0.01
    assert sps.chisquare(np.bincount(np.rint(plain * 5).astype(int))[1:]).pvalue > 0.01


def test_randomised_pit_uniform_over_seeds():
    # the KS p-values of the randomised PIT of calibrated draws are themselves uniform
    pvals = []
    for seed in range(40):
        x, _, y = _calibrated_empirical(n=400, seed=seed)
        pvals.append(sps.kstest(skcalib.pit(y, Empirical(x), random_state=seed),
                                "uniform").pvalue)
    assert sps.kstest(pvals, "uniform").pvalue > 0.01
    assert np.mean(np.array(pvals) < 0.05) < 0.2


def test_weighted_draws_and_ties():
    x, w, y = _calibrated_empirical(n=3000, m=4, seed=3, weighted=True, tie=True)
    d = Empirical(x, w)
    u = skcalib.pit(y, d, random_state=1)
    assert sps.kstest(u, "uniform").pvalue > 0.01
    assert sps.kstest(d.cdf(y), "uniform").pvalue < 1e-10
    assert np.all(d._cdf_left(y) <= d.cdf(y))


def test_cdf_left_contract():
    d = Empirical([[0.0, 1.0, 1.0, 3.0]], [[1.0, 1.0, 2.0, 4.0]])
    assert_allclose(d._cdf_left(1.0), [0.125])
    assert_allclose(d.cdf(1.0), [0.5])
    for y in (-1.0, 0.5, 2.0, 4.0):          # no atom: left limit = cdf
        assert d._cdf_left(y) == d.cdf(y)
    n = Normal([0.0, 1.0], [1.0, 2.0])
    assert_array_equal(n._cdf_left([0.3, -0.2]), n.cdf([0.3, -0.2]))


@pytest.mark.parametrize("dist", [
    Normal(np.linspace(-1, 1, 50), 1.3),
    Laplace(np.linspace(-1, 1, 50), 0.7),
    Mixture([0.3, 0.7], [Normal(np.zeros(50), 1.0), Normal(np.ones(50), 0.5)]),
])
def test_continuous_families_unchanged_and_draw_nothing(dist):
    y = np.random.default_rng(4).normal(size=50)
    rs = np.random.RandomState(7)
    before = rs.get_state()[1].copy()
    gen = np.random.default_rng(8)
    gen_before = gen.bit_generator.state
    for rstate in (None, 0, rs, gen):
        assert_array_equal(skcalib.pit(y, dist, random_state=rstate), dist.cdf(y))
    assert_array_equal(rs.get_state()[1], before)
    assert gen.bit_generator.state == gen_before
    u = np.sort(dist.cdf(y))
    res = pit_test(y, dist, random_state=0)
    ks = sps.kstest(u, "uniform")
    assert res.statistic == float(ks.statistic) and res.pvalue == float(ks.pvalue)


def test_pit_test_randomised_on_calibrated_and_miscalibrated_draws():
    x, _, y = _calibrated_empirical(n=2000, seed=5)
    d = Empirical(x)
    for method in ("ks", "cvm", "ad"):
        assert pit_test(y, d, method=method, random_state=0).pvalue > 0.01
    # the same targets against draws that are too narrow reject
    narrow = Empirical(0.5 * (x - x.mean(1, keepdims=True)) + x.mean(1, keepdims=True))
    assert pit_test(y, narrow, random_state=0).pvalue < 1e-6
    # reproducible with a seed
    assert_array_equal(skcalib.pit(y, d, random_state=3), skcalib.pit(y, d, random_state=3))
    assert not np.array_equal(skcalib.pit(y, d, random_state=3),
                              skcalib.pit(y, d, random_state=4))


def test_random_state_validated_by_name():
    with pytest.raises(ValueError, match="random_state"):
        skcalib.pit([0.0], [[0.0, 1.0]], random_state="seed")
    with pytest.raises(ValueError, match="random_state"):
        pit_test([0.0, 1.0], [[0.0, 1.0]] * 2, random_state=1.5)
