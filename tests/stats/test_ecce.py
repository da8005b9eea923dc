"""The ECCE test (Arrieta-Ibarra, Gujral, Tannen, Tygert and Xu 2022)."""

import numpy as np
import pytest
from scipy import integrate, stats

import skcalib.stats
from skcalib.stats import CalibrationTestResult, ecce_test
from skcalib.stats._ecce import brownian_range_sf, sup_abs_brownian_sf


def _walk_brute(p, y, w=None):
    """The walk with an explicit loop, from C_0 = 0, in sorted order (distinct p)."""
    w = np.ones_like(p) if w is None else w
    order = np.argsort(p)
    c, out = 0.0, [0.0]
    for i in order:
        c += w[i] * (y[i] - p[i]) / w.sum()
        out.append(c)
    sigma = np.sqrt(sum(w[i] * p[i] * (1 - p[i]) for i in range(len(p)))) / w.sum()
    return np.array(out), sigma


def test_statistics_match_a_loop():
    rng = np.random.default_rng(0)
    p = rng.random(40)
    y = (rng.random(40) < p).astype(float)
    walk, sigma = _walk_brute(p, y)
    ks = ecce_test(y, p)
    kuiper = ecce_test(y, p, statistic="kuiper")
    assert isinstance(ks, CalibrationTestResult)
    np.testing.assert_allclose(ks.cumulative, walk, atol=1e-15)
    np.testing.assert_allclose(ks.abscissa, np.arange(41) / 40)
    assert ks.scale == pytest.approx(sigma, rel=1e-12)
    assert ks.estimate == pytest.approx(np.abs(walk).max(), rel=1e-12)
    assert ks.statistic == pytest.approx(np.abs(walk).max() / sigma, rel=1e-12)
    assert kuiper.statistic == pytest.approx((walk.max() - walk.min()) / sigma, rel=1e-12)
    assert ks.pvalue == pytest.approx(sup_abs_brownian_sf(ks.statistic))
    assert kuiper.pvalue == pytest.approx(brownian_range_sf(kuiper.statistic))
    statistic, pvalue = ks
    assert (statistic, pvalue) == (ks.statistic, ks.pvalue)
    assert ks.method == "ks" and kuiper.method == "kuiper" and ks.n_samples == 40


def test_kuiper_range_includes_the_starting_zero():
    p = np.array([0.1, 0.2, 0.3, 0.4])
    y = np.array([1, 1, 1, 0])  # walk 0, .225, .425, .6, .5: its minimum is the start
    res = ecce_test(y, p, statistic="kuiper")
    assert res.estimate == pytest.approx(0.6)
    assert ecce_test(y, p).estimate == pytest.approx(0.6)


def test_ties_are_one_step_and_order_free():
    p = np.array([0.3, 0.3, 0.3, 0.7, 0.7])
    y1 = np.array([1, 0, 0, 1, 0])
    y2 = np.array([0, 0, 1, 0, 1])
    r1, r2 = ecce_test(y1, p, statistic="kuiper"), ecce_test(y2, p, statistic="kuiper")
    assert r1.statistic == r2.statistic
    np.testing.assert_allclose(r1.abscissa, [0, 0.6, 1.0])
    np.testing.assert_allclose(r1.proba[1:], [0.3, 0.7])


def test_frequency_weights_equal_replication():
    rng = np.random.default_rng(1)
    p = rng.random(30)
    y = (rng.random(30) < p).astype(int)
    w = rng.integers(1, 4, size=30)
    rep = np.repeat(np.arange(30), w)
    for s in ("ks", "kuiper"):
        a = ecce_test(y, p, statistic=s, sample_weight=w)
        b = ecce_test(y[rep], p[rep], statistic=s)
        assert a.statistic == pytest.approx(b.statistic, rel=1e-12)
        assert a.pvalue == pytest.approx(b.pvalue, rel=1e-12)


def test_null_laws_by_quadrature_and_limits():
    # E sup_[0,1] |B| = sqrt(pi / 2); E range = 2 sqrt(2 / pi) (Feller 1951)
    mean_sup = integrate.quad(sup_abs_brownian_sf, 0, 12, points=[1.0], limit=200)[0]
    mean_range = integrate.quad(brownian_range_sf, 0, 12, limit=200)[0]
    assert mean_sup == pytest.approx(np.sqrt(np.pi / 2), rel=1e-8)
    assert mean_range == pytest.approx(2 * np.sqrt(2 / np.pi), rel=1e-8)
    # tails: sup|B| >= x is dominated by 4 Phi_bar(x); the range by 8 Phi_bar(x) - 16 Phi_bar(2x)
    for x in (3.0, 4.0, 5.0):
        assert sup_abs_brownian_sf(x) == pytest.approx(4 * stats.norm.sf(x), rel=1e-6)
        assert brownian_range_sf(x) == pytest.approx(
            8 * stats.norm.sf(x) - 16 * stats.norm.sf(2 * x), rel=1e-6)
    # the two series of sup|B| join continuously at 1
    assert sup_abs_brownian_sf(1 - 1e-9) == pytest.approx(sup_abs_brownian_sf(1.0), abs=1e-8)
    assert sup_abs_brownian_sf(0.0) == 1.0 and brownian_range_sf(0.01) == 1.0


def test_null_laws_match_simulated_brownian_motion():
    rng = np.random.default_rng(2)
    steps = rng.standard_normal((4000, 2000)) / np.sqrt(2000)
    walk = np.concatenate([np.zeros((4000, 1)), np.cumsum(steps, axis=1)], axis=1)
    sup = np.abs(walk).max(axis=1)
    rng_ = walk.max(axis=1) - walk.min(axis=1)
    for x in (1.0, 1.5, 2.0):
        assert np.mean(sup >= x) == pytest.approx(sup_abs_brownian_sf(x), abs=0.03)
    for x in (1.5, 2.0, 2.5):
        assert np.mean(rng_ >= x) == pytest.approx(brownian_range_sf(x), abs=0.03)


@pytest.mark.parametrize("statistic", ["ks", "kuiper"])
def test_size_and_power(statistic):
    rng = np.random.default_rng(3)
    reps, n = 600, 300
    pv_null, pv_alt = [], []
    for _ in range(reps):
        p = rng.random(n)
        y = (rng.random(n) < p).astype(int)
        pv_null.append(ecce_test(y, p, statistic=statistic).pvalue)
        y_alt = (rng.random(n) < p ** 1.5).astype(int)
        pv_alt.append(ecce_test(y_alt, p, statistic=statistic).pvalue)
    size = np.mean(np.array(pv_null) < 0.05)
    lo, hi = stats.binom.ppf([0.001, 0.999], reps, 0.05) / reps
    assert lo <= size <= hi
    assert np.mean(np.array(pv_alt) < 0.05) > 0.9


def test_multiclass_top_label_and_degenerate_predictions():
    rng = np.random.default_rng(4)
    P = rng.dirichlet([1, 1, 1], size=200)
    y = rng.integers(0, 3, size=200)
    conf, correct = P.max(axis=1), (P.argmax(axis=1) == y).astype(int)
    assert ecce_test(y, P).statistic == pytest.approx(
        ecce_test(correct, conf, labels=[0, 1]).statistic, rel=1e-12)
    ok = ecce_test([0, 1, 1], [0.0, 1.0, 1.0])
    assert (ok.statistic, ok.pvalue) == (0.0, 1.0)
    bad = ecce_test([1, 1, 0], [0.0, 1.0, 1.0])
    assert bad.statistic == np.inf and bad.pvalue == 0.0


def test_invalid_input_and_no_mutation():
    y, p = np.array([0, 1, 1, 0]), np.array([0.2, 0.7, 0.6, 0.1])
    p0 = p.copy()
    with pytest.raises(ValueError, match="statistic"):
        ecce_test(y, p, statistic="cvm")
    with pytest.raises(ValueError, match="mode"):
        ecce_test(y, p, mode="classwise")
    with pytest.raises(ValueError, match="sample_weight"):
        ecce_test(y, p, sample_weight=[1, 1, -1, 1])
    with pytest.raises(ValueError, match="y_pred"):
        ecce_test(y, p + 1)
    ecce_test(y, p)
    np.testing.assert_array_equal(p, p0)
    assert "ecce_test" in skcalib.stats.__all__
