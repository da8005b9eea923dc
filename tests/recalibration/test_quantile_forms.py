"""Quantile recalibration (Kuleshov et al. 2018) of ensembles (Empirical) and of quantile
predictions (Quantiles): the recalibrated forms stay in their families, are exactly ``R`` of the
base CDF, and are calibrated on held-out data (issue 23, item 3)."""

import numpy as np
import pytest
from scipy import stats

import skcalib
from skcalib.distributions import Distribution, Empirical, Quantiles
from skcalib.recalibration import QuantileRecalibration
from skcalib.stats import pit_test

LEVELS = np.array([0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99])


def _quantile_model(n, seed, bias=0.3, spread=2.0):
    """Quantiles of ``N(mu + bias, spread^2)`` while ``y ~ N(mu, 1)``: biased and too wide, so
    that the targets stay inside the support of the linear tails (quantile recalibration maps
    within the support; it cannot move mass beyond it)."""
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=n)
    y = mu + rng.standard_normal(n)
    q = mu[:, None] + bias + spread * stats.norm.ppf(LEVELS)
    return Quantiles(q, LEVELS), y


def _ensemble_model(n, seed, m=20, bias=0.4, spread=0.6):
    """Equal-weight ensembles of ``m`` members drawn from ``N(mu + bias, spread^2)`` while
    ``y ~ N(mu, 1)``: biased and under-dispersed."""
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=n)
    y = mu + rng.standard_normal(n)
    return Empirical(mu[:, None] + bias + spread * rng.standard_normal((n, m))), y


def test_quantiles_stay_quantiles_and_are_exactly_r_of_the_cdf():
    pred, y = _quantile_model(800, seed=0)
    qr = QuantileRecalibration().fit(pred[:400], y[:400])
    test = pred[400:]
    out = qr.transform(test)
    assert type(out) is Quantiles
    assert out.n_samples == 400
    # inside the support (and beyond it: 0 and 1)
    rng = np.random.default_rng(1)
    for t in (test.ppf(rng.uniform(size=400)), test.ppf(0.0) - 1.0, test.ppf(1.0) + 1.0):
        np.testing.assert_allclose(out.cdf(t), np.interp(test.cdf(t), qr.knots_, qr.values_),
                                   atol=1e-12)
    # and the quantile function is F^{-1}(R^{-1}(p)) at any level, tails included
    for p in (1e-4, 0.003, 0.2, 0.5, 0.77, 0.999, 0.99999):
        u = np.interp(p, qr.values_, qr.knots_)
        np.testing.assert_allclose(out.ppf(p), test.ppf(u), rtol=1e-12, atol=1e-12)


def test_empirical_stays_empirical_reweighted_exactly():
    pred, y = _ensemble_model(600, seed=2)
    qr = QuantileRecalibration().fit(pred[:300], y[:300])
    test = pred[300:]
    out = qr.transform(test)
    assert type(out) is Empirical
    np.testing.assert_array_equal(out.samples, test.samples)   # the members are kept
    np.testing.assert_allclose(out.weights.sum(axis=1), 1.0)
    # the step CDF at every member is R of the old one
    for k in range(test.n_draws):
        t = test.samples[:, k]
        np.testing.assert_allclose(out.cdf(t), np.interp(test.cdf(t), qr.knots_, qr.values_),
                                   atol=1e-12)
    # weighted and tied members too
    rng = np.random.default_rng(3)
    x = np.round(rng.normal(size=(50, 7)), 1)
    w = rng.uniform(0.1, 2.0, size=(50, 7))
    ens = Empirical(x, w)
    out = qr.transform(ens)
    for k in range(7):
        np.testing.assert_allclose(out.cdf(x[:, k]),
                                   np.interp(ens.cdf(x[:, k]), qr.knots_, qr.values_), atol=1e-12)


def _held_out_ks_pvalue(u, n_cal):
    """Kolmogorov-Smirnov p-value of held-out PIT values ``u`` against the uniform law, for a
    map fitted on ``n_cal`` other samples: ``R`` is an empirical CDF, so the held-out PIT
    deviates from uniform by the noise of both samples, and the effective size is that of the
    two-sample test, ``1 / (1 / n_test + 1 / n_cal)`` (asymptotic p-value)."""
    D = stats.kstest(u, "uniform").statistic
    n_eff = 1.0 / (1.0 / u.size + 1.0 / n_cal)
    return float(stats.kstwobign.sf(D * np.sqrt(n_eff)))


def test_quantiles_pit_uniform_after_recalibration():
    """Held-out PIT values are uniform after recalibration (and far from it before)."""
    pred, y = _quantile_model(6000, seed=4)
    qr = QuantileRecalibration().fit(pred[:3000], y[:3000])
    test, yt = pred[3000:], y[3000:]
    assert pit_test(yt, test).pvalue < 1e-10
    u = skcalib.pit(yt, qr.transform(test))
    assert _held_out_ks_pvalue(u, 3000) > 0.01
    # and the same test can fail: a map fitted on other (shifted) targets
    wrong = QuantileRecalibration().fit(pred[:3000], y[:3000] + 0.3)
    assert _held_out_ks_pvalue(skcalib.pit(yt, wrong.transform(test)), 3000) < 1e-6


def _atom_cell_test(dist, y, n_cal=np.inf):
    """Chi-square test that targets fall between the atoms of equal-weight ensembles with the
    probabilities the step CDF gives: below the k-th smallest draw with probability ``G(x_(k))``
    (for k < m; the top atom also holds the mass above it). Rows share the recalibrated levels,
    so the cells have common probabilities. The levels of a map fitted on ``n_cal`` other
    samples are multinomial frequencies themselves: the statistic is divided by
    ``1 + n / n_cal`` (the covariance of the count differences is ``n (1 + n / n_cal)`` times
    the multinomial one)."""
    xs = np.sort(dist.samples, axis=1)
    m = xs.shape[1]
    levels = np.array([dist.cdf(xs[:, k]) for k in range(m - 1)])        # (m - 1, n)
    assert np.ptp(levels, axis=1).max() < 1e-9            # common to every row
    p = np.diff(np.r_[0.0, levels[:, 0], 1.0])
    cell = (y[:, None] > xs[:, :m - 1]).sum(axis=1)         # targets below x_(k+1): cell k
    counts = np.bincount(cell, minlength=m)
    keep = p > 0
    assert counts[~keep].sum() == 0
    expected = p[keep] / p[keep].sum() * counts.sum()
    chi2 = np.sum((counts[keep] - expected) ** 2 / expected) / (1.0 + y.size / n_cal)
    return float(stats.chi2.sf(chi2, keep.sum() - 1))


def test_empirical_calibrated_at_its_atoms_after_recalibration():
    """The recalibrated step CDF gives every cell between consecutive members its held-out
    frequency: a chi-square test of the cells passes after recalibration and fails before (and
    for a map fitted on shifted targets)."""
    pred, y = _ensemble_model(8000, seed=5)
    qr = QuantileRecalibration().fit(pred[:4000], y[:4000])
    test, yt = pred[4000:], y[4000:]
    assert _atom_cell_test(test, yt) < 1e-10
    assert _atom_cell_test(qr.transform(test), yt, n_cal=4000) > 0.01
    wrong = QuantileRecalibration().fit(pred[:4000], y[:4000] + 0.2)
    assert _atom_cell_test(wrong.transform(test), yt, n_cal=4000) < 1e-6


def test_empirical_calibrated_ensemble_levels():
    """Exchangeable members and target (a calibrated ensemble): the target is below the k-th of
    m members with probability k / (m + 1), which the recalibrated CDF reproduces."""
    rng = np.random.default_rng(6)
    n, m = 20000, 9
    mu = rng.normal(size=n)
    pred = Empirical(mu[:, None] + rng.standard_normal((n, m)))
    y = mu + rng.standard_normal(n)
    out = QuantileRecalibration().fit(pred, y).transform(pred[:1])
    G = np.cumsum(out.weights[0][np.argsort(out.samples[0])])
    se = np.sqrt(0.25 / n)
    np.testing.assert_allclose(G[:-1], np.arange(1, m) / (m + 1), atol=5 * se)


def test_metrics_run_on_the_recalibrated_forms():
    pred, y = _ensemble_model(600, seed=7)
    qr = QuantileRecalibration().fit(pred[:300], y[:300])
    out, yt = qr.transform(pred[300:]), y[300:]
    assert skcalib.crps(yt, out) < skcalib.crps(yt, pred[300:])
    assert np.isfinite(skcalib.skce(yt[:100], out[:100]))   # (unequal weights: W2 by merging)
    assert skcalib.quantile_calibration_error(yt, out) < skcalib.quantile_calibration_error(
        yt, pred[300:])
    qpred, qy = _quantile_model(1000, seed=8)
    qout = QuantileRecalibration().fit(qpred[:800], qy[:800]).transform(qpred[800:])
    assert skcalib.crps(qy[800:], qout) < skcalib.crps(qy[800:], qpred[800:])
    assert skcalib.quantile_calibration_error(qy[800:], qout) < \
        skcalib.quantile_calibration_error(qy[800:], qpred[800:])


def test_skce_runs_on_recalibrated_quantiles():
    if (Quantiles._embedding is Distribution._embedding
            and Quantiles._w2_squared is Distribution._w2_squared):
        pytest.skip("Quantiles has no Wasserstein distance yet (the quantiles family's work), "
                    "so no default SKCE kernel")
    # n_knots bounds the levels of the result (the exact SKCE holds (q + 2)^2 numbers per pair)
    qpred, qy = _quantile_model(300, seed=9)
    qout = QuantileRecalibration(n_knots=12).fit(qpred[:150], qy[:150]).transform(qpred[150:])
    assert qout.n_levels < 40
    before, after = skcalib.skce(qy[150:], qpred[150:]), skcalib.skce(qy[150:], qout)
    assert np.isfinite(after) and after < before


def test_n_knots_thins_the_quantile_levels():
    pred, y = _quantile_model(700, seed=10)
    full = QuantileRecalibration().fit(pred[:600], y[:600])
    thin = QuantileRecalibration(n_knots=20).fit(pred[:600], y[:600])
    a, b = full.transform(pred[600:]), thin.transform(pred[600:])
    assert b.n_levels < 40 < a.n_levels
    assert abs(skcalib.crps(y[600:], a) - skcalib.crps(y[600:], b)) < 0.01


def test_weights_as_repetitions():
    pred, y = _ensemble_model(200, seed=11)
    w = np.random.default_rng(0).integers(0, 3, size=200)
    a = QuantileRecalibration().fit(pred, y, sample_weight=w)
    rows = np.repeat(np.arange(200), w)
    b = QuantileRecalibration().fit(pred[rows], y[rows])
    np.testing.assert_allclose(a.values_, b.values_, atol=1e-12)
    np.testing.assert_allclose(a.knots_, b.knots_, atol=1e-15)


def test_family_is_checked_at_transform():
    pred, y = _ensemble_model(100, seed=12)
    qr = QuantileRecalibration().fit(pred, y)
    qpred, _ = _quantile_model(100, seed=12)
    with pytest.raises(ValueError, match="Quantiles predictions but the map was fitted on "
                                         "Empirical"):
        qr.transform(qpred)


def test_quantile_recalibration_of_frozen_scipy_laws():
    """A frozen scipy.stats law (a ScipyDistribution) is a continuous base of Recalibrated:
    the held-out PIT of a wrong gamma becomes uniform, and the metrics run on the result."""
    from scipy import stats as sps

    import skcalib
    from skcalib.distributions import Recalibrated, as_distribution
    from skcalib.recalibration import QuantileRecalibration

    rng = np.random.default_rng(0)
    y = 1.5 * rng.gamma(3.0, size=2000)                  # the model forgets the scale 1.5
    d, _ = as_distribution(sps.gamma(np.full(2000, 3.0)))
    r = QuantileRecalibration().fit(d[:1000], y[:1000]).transform(d[1000:])
    assert isinstance(r, Recalibrated)
    assert skcalib.stats.pit_test(y[1000:], d[1000:]).pvalue < 1e-10
    assert skcalib.stats.pit_test(y[1000:], r).pvalue > 0.01
    assert skcalib.crps(y[1000:], r) < skcalib.crps(y[1000:], d[1000:])
    assert np.isfinite(skcalib.nll(y[1000:], r))
