"""The forms of regression uncertainty agree with each other (issue 23, item 5): quantile
predictions (:class:`~skcalib.distributions.Quantiles`) against the interval definitions and
against the Normal predictions they were read from.

* **Coverage from the PIT equals coverage from the bounds.** :func:`skcalib.interval_coverage`
  counts ``y`` as covered by the central ``p``-interval iff ``|2 F(y) - 1| <= p``. For
  ``Quantiles`` with symmetric levels ``(0.05, 0.25, 0.5, 0.75, 0.95)`` the CDF is continuous and
  strictly increasing between the knots, so at ``p = 0.9`` (``p = 0.5``) this is
  ``values[:, 0] <= y <= values[:, 4]`` (``values[:, 1] <= y <= values[:, 3]``): the **closed**
  interval, as :func:`skcalib.interval_bounds_coverage` counts it (``lower <= y <= upper``).
  Targets exactly at the bounds are covered by both.
  The comparison has a few ulps of slack, so that this holds at every pair of levels
  ``(t, 1 - t)``, whatever the rounding of ``1 - 2 t``.
* **The PIT of a knot is its level** (``F(values[:, j]) = levels[j]``, to one rounding).
* **99 levels of a Normal** (``0.01, ..., 0.99``): the interpolated law's PIT is within
  ``8e-4`` of the Normal's where the Normal's PIT is in ``[0.01, 0.99]`` and within ``5e-3`` in
  the linear tails (measured sup over a grid: ``7.41e-4`` and ``4.67e-3``); the coverage of
  central intervals whose ends are knots, and the quantile calibration error on the knots, are
  *equal* to the Normal's (a target lies between two knots for both or for neither).
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats

import skcalib
from skcalib.distributions import Normal, Quantiles

LEVELS = np.array([0.05, 0.25, 0.5, 0.75, 0.95])


def _quantile_predictions(n=400, seed=23):
    """Symmetric-level quantile predictions of varying location and spread (skewed rows
    included), and targets drawn around them (some outside every interval)."""
    rng = np.random.default_rng(seed)
    mu, s = rng.normal(size=n), rng.uniform(0.5, 2.0, size=n)
    skew = rng.uniform(0.5, 2.0, size=(n, 1))
    z = stats.norm.ppf(LEVELS)
    values = mu[:, None] + s[:, None] * np.where(z > 0, z * skew, z)
    y = mu + 1.2 * s * rng.normal(size=n)
    return values, y, rng


@pytest.mark.parametrize("level, lo, hi", [(0.9, 0, 4), (0.5, 1, 3)])
def test_interval_coverage_is_closed_bounds_coverage(level, lo, hi):
    values, y, rng = _quantile_predictions()
    d = Quantiles(values, LEVELS)
    # a quarter of the targets exactly on a bound: the closed interval covers them
    on = rng.permutation(y.size)[: y.size // 4]
    y = y.copy()
    y[on[::2]] = values[on[::2], lo]
    y[on[1::2]] = values[on[1::2], hi]
    bounds = values[:, [lo, hi]]
    inside = (bounds[:, 0] <= y) & (y <= bounds[:, 1])
    assert 0.3 < inside.mean() < 0.95 and not inside.all()
    got = skcalib.interval_coverage(y, d, levels=level)
    assert got == inside.mean()
    assert got == skcalib.interval_bounds_coverage(y, bounds)
    # open ends would give a different number here: the bound targets count
    strictly = (bounds[:, 0] < y) & (y < bounds[:, 1])
    assert strictly.mean() < got - 0.2
    # the same with weights, and both levels at once through the dict form
    w = rng.uniform(0.0, 2.0, size=y.size)
    assert skcalib.interval_coverage(y, d, levels=level, sample_weight=w) == pytest.approx(
        np.average(inside, weights=w), rel=1e-14)
    assert skcalib.interval_bounds_coverage(y, bounds, sample_weight=w) == pytest.approx(
        np.average(inside, weights=w), rel=1e-14)
    both = skcalib.interval_bounds_coverage(y, {0.9: values[:, [0, 4]], 0.5: values[:, [1, 3]]})
    assert both[level] == got
    assert_allclose(skcalib.interval_coverage(y, d, levels=[0.5, 0.9]),
                    [both[0.5], both[0.9]], rtol=0, atol=0)


def test_pit_of_a_knot_is_its_level():
    values, y, _ = _quantile_predictions(n=50)
    d = Quantiles(values, LEVELS)
    for j, tau in enumerate(LEVELS):
        assert_allclose(skcalib.pit(values[:, j], d), tau, rtol=0, atol=2.3e-16)
    # other level sets (up to one rounding: F sums the level increments)
    rng = np.random.default_rng(1)
    for _ in range(20):
        lv = np.sort(rng.choice(np.arange(1, 100), rng.integers(2, 12), replace=False)) / 100
        v = np.sort(rng.normal(size=(5, lv.size)), axis=1)
        dv = Quantiles(v, lv)
        for j, tau in enumerate(lv):
            assert_allclose(dv.cdf(v[:, j]), tau, rtol=0, atol=2.3e-16)
            assert_allclose(dv.ppf(np.full(5, tau)), v[:, j], rtol=1e-14, atol=1e-14)


def test_pit_between_knots_is_linear_interpolation():
    # independent of the class: between two knots the CDF interpolates the levels linearly
    values, _, rng = _quantile_predictions(n=50)
    d = Quantiles(values, LEVELS)
    j = rng.integers(0, 4, size=50)
    t = rng.uniform(size=50)
    rows = np.arange(50)
    y = values[rows, j] + t * (values[rows, j + 1] - values[rows, j])
    assert_allclose(skcalib.pit(y, d), LEVELS[j] + t * (LEVELS[j + 1] - LEVELS[j]),
                    rtol=1e-12, atol=1e-15)


def test_interval_coverage_closed_at_every_symmetric_level_pair():
    # Coverage is read as |2 F(y) - 1| <= p. At levels such as (0.09, 0.91) and p = 0.82,
    # 1 - 2 * 0.09 rounds to 0.8200000000000001 > 0.82: without a few ulps of slack in the
    # comparison, targets exactly on a predicted bound were counted outside the closed interval
    # (16 of these 49 level pairs), and inside for the other 33.
    rng = np.random.default_rng(4)
    for t in np.arange(1, 50) / 100:
        v = np.sort(rng.normal(size=(20, 3)), axis=1)
        d = Quantiles(v, [t, 0.5, 1 - t])
        p = round(1 - 2 * t, 2)
        assert skcalib.interval_coverage(v[:, 0], d, levels=p) == 1.0, t
        assert skcalib.interval_coverage(v[:, 2], d, levels=p) == 1.0, t
        # and a target on the t-quantile has PIT <= t (one-sided proportions)
        _, observed = skcalib.quantile_calibration_curve(v[:, 0], d, quantiles=[t, 1 - t])
        assert_array_equal(observed, 1.0)


# --------------------------------------------------------------------------------------------
# a Quantiles read from a Normal's quantiles at 99 levels


def _normal_and_quantiles(n=2000, seed=3):
    rng = np.random.default_rng(seed)
    mu, s = rng.normal(size=n), rng.uniform(0.5, 2.0, size=n)
    lv = np.arange(1, 100) / 100
    normal = Normal(mu, s)
    quant = Quantiles(mu[:, None] + s[:, None] * stats.norm.ppf(lv)[None, :], lv)
    y = mu + 1.3 * s * rng.normal(size=n)        # over-dispersed targets: curves off-diagonal
    return normal, quant, y


def test_quantiles_of_a_normal_pit_sup_error():
    lv = np.arange(1, 100) / 100
    z = np.linspace(-6.0, 6.0, 12001)
    Fq = Quantiles(np.tile(stats.norm.ppf(lv), (z.size, 1)), lv).cdf(z)
    Fn = stats.norm.cdf(z)
    interior = (Fn >= 0.01) & (Fn <= 0.99)
    err_in, err_tail = np.abs(Fq - Fn)[interior].max(), np.abs(Fq - Fn)[~interior].max()
    print(f"\nsup |F_Q - F_N|: interior {err_in:.3g}, tails {err_tail:.3g}")
    assert 5e-4 < err_in < 8e-4           # linear interpolation of a curved quantile function
    assert 3e-3 < err_tail < 5e-3         # linear tails: the support ends at Q(0), Q(1)
    # and on the batch, through the public PIT
    normal, quant, y = _normal_and_quantiles()
    pn, pq = skcalib.pit(y, normal), skcalib.pit(y, quant)
    inside = (pn >= 0.01) & (pn <= 0.99)
    assert np.abs(pq - pn)[inside].max() < 8e-4
    assert np.abs(pq - pn).max() < 5e-3


def test_quantiles_of_a_normal_coverage_and_quantile_calibration_error():
    normal, quant, y = _normal_and_quantiles()
    # central intervals whose ends are knots: identical coverage
    for p in (0.5, 0.8, 0.9, 0.98):
        assert (skcalib.interval_coverage(y, quant, levels=p)
                == skcalib.interval_coverage(y, normal, levels=p)), p
    # p = 0.95 has ends 0.025, 0.975 between knots: within the interpolation error
    assert abs(skcalib.interval_coverage(y, quant, levels=0.95)
               - skcalib.interval_coverage(y, normal, levels=0.95)) <= 2.5 / y.size
    # the quantile calibration error on the default grid (the 99 knots): identical
    for norm in ("l1", "l2", "max"):
        q = skcalib.quantile_calibration_error(y, quant, norm=norm)
        assert q == skcalib.quantile_calibration_error(y, normal, norm=norm)
        assert q > 0.02                       # the targets are over-dispersed: visible error
    # central-interval proportions: most ends are not knots, so within a stated tolerance
    for norm in ("l1", "l2", "max"):
        assert skcalib.quantile_calibration_error(
            y, quant, proportion="interval", norm=norm) == pytest.approx(
            skcalib.quantile_calibration_error(y, normal, proportion="interval", norm=norm),
            abs=2.5 / y.size)
    # and the coverage from the bounds of the knots agrees with both
    lv = quant.levels
    j_lo, j_hi = np.searchsorted(lv, 0.05), np.searchsorted(lv, 0.95)
    assert (skcalib.interval_bounds_coverage(y, quant.values[:, [j_lo, j_hi]])
            == skcalib.interval_coverage(y, normal, levels=0.9))
