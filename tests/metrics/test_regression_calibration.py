"""Calibration of regressors: PIT, CRPS, coverage, quantile calibration, miscalibration area,
ENCE, UCE, NLL and the PIT uniformity tests, against independent computations."""

import numpy as np
import pytest
from scipy import integrate, stats

import skcalib
from skcalib import (
    crps,
    ence,
    interval_coverage,
    interval_coverage_error,
    miscalibration_area,
    nll,
    pit,
    quantile_calibration_curve,
    quantile_calibration_error,
    uce,
)
from skcalib.distributions import Categorical, Laplace, Mixture, MultivariateNormal, Normal
from skcalib.stats import CalibrationTestResult, pit_test
from skcalib.stats._pit import anderson_darling_sf, anderson_darling_statistic

# Fixed inputs of the peer reference values below.
Y = np.array([0.3, -1.2, 2.5, 0.0, 1.7, -0.4, 3.1, -2.2, 0.9, -0.05])
MU = np.array([0.0, -1.0, 1.5, 0.5, 1.0, 0.2, 2.0, -1.5, 1.4, 0.3])
SD = np.array([1.0, 0.5, 2.0, 0.3, 1.5, 0.8, 0.7, 1.1, 0.25, 0.6])
P = np.column_stack([MU, SD])

# properscoring 0.1: crps_gaussian(Y, MU, SD), and crps_quadrature(Y[i], scipy.stats.laplace(MU[i],
# SD[i])) (numerical integration of the Laplace cdf).
PROPERSCORING_CRPS_NORMAL = [0.2693329006866634, 0.14834404517357486, 0.6628070625097116,
                             0.34263905593850763, 0.47854904492049394, 0.3585154017572403,
                             0.7398623742125295, 0.4290123513556674, 0.3631979554214757,
                             0.21943431264549598]
PROPERSCORING_CRPS_LAPLACE = [0.29081822048100064, 0.16016002302277355, 0.713061319072629,
                              0.33166268083808814, 0.515633627913287, 0.3778932424051771,
                              0.7204237309283555, 0.4571346753825731, 0.34633382078942515,
                              0.23482108750757344]
# uncertainty-toolbox 0.1.1 (num_bins=100, vectorized=True): grid np.linspace(0, 1, 100).
UT = {
    "interval": {"miscalibration_area": 0.08897400976052665, "mace": 0.0886969696969697,
                 "rmsce": 0.10751399564363359},
    "quantile": {"miscalibration_area": 0.09089887640449441, "mace": 0.09071717171717175,
                 "rmsce": 0.11327835862152373},
}
UT_NLL = 1.164558921855512
UT_CRPS = 0.40116945046213603
UT_GRID = np.linspace(0, 1, 100)


def crps_quadrature(cdf, y, lo, hi, atoms=()):
    """``int (F(x) - 1{x >= y})^2 dx`` by adaptive quadrature, split at ``y`` and at atoms."""
    pts = sorted({lo, hi, y, *atoms})
    tot = 0.0
    for a, b in zip(pts[:-1], pts[1:]):
        tot += integrate.quad(lambda x: (cdf(x) - (x >= y)) ** 2, a, b, limit=400,
                              epsabs=1e-13, epsrel=1e-12)[0]
    return tot


def _normal_mixture(n=6, K=3, seed=0, equal_scales=False):
    rng = np.random.default_rng(seed)
    W = rng.dirichlet(np.ones(K), size=n)
    locs = rng.normal(size=(K, n)) * 2
    scales = np.full((K, n), 0.7) if equal_scales else rng.uniform(0.2, 2.0, size=(K, n))
    return W, locs, scales


# --------------------------------------------------------------------------------------------
# CRPS


def test_crps_normal_and_laplace_match_properscoring():
    np.testing.assert_allclose(crps(Y, P, reduction="none"), PROPERSCORING_CRPS_NORMAL,
                               rtol=1e-12)
    np.testing.assert_allclose(crps(Y, Laplace(MU, SD), reduction="none"),
                               PROPERSCORING_CRPS_LAPLACE, rtol=1e-7)
    assert crps(Y, P) == pytest.approx(UT_CRPS, rel=1e-12)


@pytest.mark.parametrize("family, ref", [(Normal, stats.norm), (Laplace, stats.laplace)])
def test_crps_location_scale_against_quadrature(family, ref):
    got = crps(Y, family(MU, SD), reduction="none")
    for i in range(Y.size):
        want = crps_quadrature(lambda x: ref.cdf(x, MU[i], SD[i]), Y[i], MU[i] - 60 * SD[i],
                               MU[i] + 60 * SD[i], atoms=(MU[i],))
        assert got[i] == pytest.approx(want, rel=1e-8, abs=1e-12)


@pytest.mark.parametrize("family, ref", [(Normal, stats.norm), (Laplace, stats.laplace)])
@pytest.mark.parametrize("scales", ["random", "equal", "nearly_equal"])
def test_crps_mixtures_against_quadrature(family, ref, scales):
    W, locs, sc = _normal_mixture(equal_scales=scales != "random")
    if scales == "nearly_equal":  # the Laplace pair formula switches to its limit here
        sc = sc * (1 + 1e-5 * np.arange(sc.shape[0]))[:, None]
    y = np.array([0.1, -2.0, 3.0, 0.5, -0.7, 1.2])
    m = Mixture(W, [family(locs[k], sc[k]) for k in range(3)])
    got = crps(y, m, reduction="none")
    for i in range(y.size):
        cdf = lambda x: sum(W[i, k] * ref.cdf(x, locs[k, i], sc[k, i]) for k in range(3))  # noqa
        want = crps_quadrature(cdf, y[i], -80.0, 80.0, atoms=tuple(locs[:, i]))
        assert got[i] == pytest.approx(want, rel=1e-8, abs=1e-12)


def test_crps_point_predictions_are_absolute_errors():
    np.testing.assert_allclose(crps(Y, Normal(MU, 0.0), reduction="none"), np.abs(Y - MU))
    # a mixture with a point-mass component: quadrature with the step cdf
    m = Mixture([[0.4, 0.6]], [Normal([1.0], [0.0]), Normal([-1.0], [2.0])])
    cdf = lambda x: 0.4 * (x >= 1.0) + 0.6 * stats.norm.cdf(x, -1.0, 2.0)  # noqa: E731
    assert crps([0.3], m) == pytest.approx(crps_quadrature(cdf, 0.3, -60, 60, atoms=(1.0,)),
                                           rel=1e-8)


def test_crps_mixture_of_one_component_equals_the_component():
    m = Mixture(np.ones((Y.size, 1)), [Laplace(MU, SD)])
    np.testing.assert_allclose(crps(Y, m, reduction="none"),
                               crps(Y, Laplace(MU, SD), reduction="none"), rtol=1e-12)


def test_crps_sample_weight_is_repetition():
    w = np.array([1, 0, 3, 1, 2, 1, 1, 4, 1, 2])
    rep = np.repeat(np.arange(Y.size), w)
    assert crps(Y, P, sample_weight=w) == pytest.approx(crps(Y[rep], P[rep]), rel=1e-13)
    assert crps(Y, P, sample_weight=w * 1e300) == pytest.approx(crps(Y[rep], P[rep]), rel=1e-13)


# --------------------------------------------------------------------------------------------
# PIT and NLL


def test_pit_matches_scipy_cdfs():
    np.testing.assert_allclose(pit(Y, P), stats.norm.cdf(Y, MU, SD), rtol=1e-13)
    np.testing.assert_allclose(pit(Y, Laplace(MU, SD)), stats.laplace.cdf(Y, MU, SD), rtol=1e-13)
    W, locs, sc = _normal_mixture(n=Y.size)
    m = Mixture(W, [Normal(locs[k], sc[k]) for k in range(3)])
    want = sum(W[:, k] * stats.norm.cdf(Y, locs[k], sc[k]) for k in range(3))
    np.testing.assert_allclose(pit(Y, m), want, rtol=1e-13)


def test_nll_matches_scipy_and_uncertainty_toolbox():
    assert nll(Y, P) == pytest.approx(UT_NLL, rel=1e-12)
    assert nll(Y, Laplace(MU, SD)) == pytest.approx(-stats.laplace.logpdf(Y, MU, SD).mean(),
                                                    rel=1e-12)
    w = np.arange(1.0, 11.0)
    assert nll(Y, P, sample_weight=w) == pytest.approx(
        -np.average(stats.norm.logpdf(Y, MU, SD), weights=w), rel=1e-12)
    mean = np.column_stack([MU, -MU])
    yy = np.column_stack([Y, Y])
    mv = MultivariateNormal(mean, np.column_stack([SD, SD]) ** 2)
    want = -(stats.norm.logpdf(Y, MU, SD) + stats.norm.logpdf(Y, -MU, SD)).mean()
    assert nll(yy, mv) == pytest.approx(want, rel=1e-12)
    with pytest.raises(TypeError, match="log_loss"):
        nll([0, 1], Categorical([[0.5, 0.5], [0.2, 0.8]]))


# --------------------------------------------------------------------------------------------
# coverage, quantile calibration, miscalibration area


def _fraction(mask, w=None):
    return np.average(mask, weights=w)


@pytest.mark.parametrize("family, ref", [(Normal, stats.norm), (Laplace, stats.laplace)])
def test_interval_coverage_against_brute_force(family, ref):
    rng = np.random.default_rng(1)
    mu, sd = rng.normal(size=500), rng.uniform(0.5, 2.0, size=500)
    y = mu + rng.standard_t(3, size=500)
    w = rng.uniform(size=500)
    levels = np.array([0.1, 0.5, 0.8, 0.9, 0.95, 0.99])
    lo = ref.ppf((1 - levels[:, None]) / 2, mu, sd)
    hi = ref.ppf((1 + levels[:, None]) / 2, mu, sd)
    inside = (y >= lo) & (y <= hi)
    got = interval_coverage(y, family(mu, sd), levels=levels, sample_weight=w)
    np.testing.assert_allclose(got, [_fraction(r, w) for r in inside], rtol=1e-12)
    assert interval_coverage_error(y, family(mu, sd), levels=levels, sample_weight=w) == \
        pytest.approx(np.mean(np.abs(got - levels)), rel=1e-12)
    assert isinstance(interval_coverage(y, family(mu, sd), levels=0.9), float)


def test_interval_coverage_of_mixtures_via_their_quantiles():
    W, locs, sc = _normal_mixture(n=300, seed=4)
    m = Mixture(W, [Laplace(locs[k], sc[k]) for k in range(3)])
    y = m.sample(random_state=0) * 1.3
    for level in (0.5, 0.9):
        lo, hi = m.ppf((1 - level) / 2), m.ppf((1 + level) / 2)
        assert interval_coverage(y, m, levels=level) == pytest.approx(
            np.mean((y >= lo) & (y <= hi)), abs=1e-12)


def test_quantile_calibration_curve_against_brute_force():
    rng = np.random.default_rng(2)
    mu, sd = rng.normal(size=400), rng.uniform(0.5, 2.0, size=400)
    y = mu + 1.5 + rng.normal(size=400)  # biased
    grid = np.linspace(0.05, 0.95, 19)
    exp, obs = quantile_calibration_curve(y, np.column_stack([mu, sd]), quantiles=grid)
    np.testing.assert_array_equal(exp, grid)
    want = [np.mean(y <= stats.norm.ppf(p, mu, sd)) for p in grid]
    np.testing.assert_allclose(obs, want)
    # the default grid: 0.01, 0.02, ..., 0.99
    exp, _ = quantile_calibration_curve(y, np.column_stack([mu, sd]))
    np.testing.assert_allclose(exp, np.arange(1, 100) / 100)
    e = np.abs(np.asarray(want) - grid)
    P2 = np.column_stack([mu, sd])
    assert quantile_calibration_error(y, P2, quantiles=grid) == pytest.approx(e.mean())
    assert quantile_calibration_error(y, P2, quantiles=grid, norm="l2") == pytest.approx(
        np.sqrt(np.mean(e ** 2)))
    assert quantile_calibration_error(y, P2, quantiles=grid, norm="max") == pytest.approx(e.max())


@pytest.mark.parametrize("proportion", ["interval", "quantile"])
def test_values_of_uncertainty_toolbox(proportion):
    ref = UT[proportion]
    assert miscalibration_area(Y, P, proportion=proportion, quantiles=UT_GRID) == pytest.approx(
        ref["miscalibration_area"], rel=1e-12)
    assert quantile_calibration_error(Y, P, proportion=proportion, quantiles=UT_GRID) == \
        pytest.approx(ref["mace"], rel=1e-12)
    assert quantile_calibration_error(Y, P, proportion=proportion, quantiles=UT_GRID,
                                      norm="l2") == pytest.approx(ref["rmsce"], rel=1e-12)


@pytest.mark.parametrize("proportion", ["interval", "quantile"])
def test_exact_miscalibration_area_against_fine_grid(proportion):
    rng = np.random.default_rng(3)
    mu, sd = rng.normal(size=300), rng.uniform(0.5, 2.0, size=300)
    y = mu + rng.normal(size=300) * 0.6 + 0.3
    w = rng.uniform(size=300)
    u = stats.norm.cdf(y, mu, sd)
    v = u if proportion == "quantile" else np.abs(2 * u - 1)
    p = np.linspace(0, 1, 400001)
    order = np.argsort(v)
    G = np.concatenate(([0.0], np.cumsum(w[order]) / w.sum()))[np.searchsorted(v[order], p,
                                                                                 side="right")]
    want = integrate.trapezoid(np.abs(G - p), p)
    got = miscalibration_area(y, np.column_stack([mu, sd]), proportion=proportion,
                              sample_weight=w)
    assert got == pytest.approx(want, abs=2e-5)
    # a grid version converges to it
    fine = miscalibration_area(y, np.column_stack([mu, sd]), proportion=proportion,
                               sample_weight=w, quantiles=np.linspace(0, 1, 20001))
    assert fine == pytest.approx(got, abs=1e-3)


def test_miscalibration_area_extremes():
    # every PIT value at 1/2: the area between a unit step at 1/2 and the diagonal
    assert miscalibration_area(MU, P) == pytest.approx(0.25)
    # every PIT value near 1 (far too narrow, biased): the area under the diagonal
    assert miscalibration_area(MU + 100, P) == pytest.approx(0.5)
    assert miscalibration_area(MU + 100, P, proportion="interval") == pytest.approx(0.5)


def test_area_handles_crossings_exactly():
    from skcalib.metrics._regression import _area_between

    # d goes from 1 to -1 linearly on [0, 1]: two triangles of area 1/4
    assert _area_between(np.array([0.0, 1.0]), np.array([1.0, -1.0])) == pytest.approx(0.5)
    assert _area_between(np.array([0.0, 1.0]), np.array([1.0, -3.0])) == pytest.approx(
        0.5 * 0.25 * 1 + 0.5 * 0.75 * 3)


# --------------------------------------------------------------------------------------------
# ENCE and UCE


def _brute_bins(y, mu, var, n_bins):
    order = np.argsort(np.sqrt(var))
    return [(y[g], mu[g], var[g]) for g in np.array_split(order, n_bins)]


def test_ence_uce_against_brute_force_equal_count():
    rng = np.random.default_rng(5)
    n = 103
    mu, sd = rng.normal(size=n), rng.uniform(0.2, 3.0, size=n)
    y = mu + rng.normal(size=n) * sd * rng.uniform(0.5, 1.5, size=n)
    P2 = np.column_stack([mu, sd])
    bins = _brute_bins(y, mu, sd ** 2, 1)
    (t, m, v), = bins
    assert ence(y, P2, n_bins=1) == pytest.approx(
        abs(np.sqrt(v.mean()) - np.sqrt(((t - m) ** 2).mean())) / np.sqrt(v.mean()), rel=1e-12)
    assert uce(y, P2, n_bins=1) == pytest.approx(abs(v.mean() - ((t - m) ** 2).mean()), rel=1e-12)
    # n divisible by n_bins with distinct stds: the bins are exactly the equal-count ones
    y, P2 = y[:100], P2[:100]
    bins = _brute_bins(y, P2[:, 0], P2[:, 1] ** 2, 5)
    want_ence = np.mean([abs(np.sqrt(v.mean()) - np.sqrt(((t - m) ** 2).mean())) / np.sqrt(v.mean())
                         for t, m, v in bins])
    want_uce = sum(len(t) / 100 * abs(v.mean() - ((t - m) ** 2).mean()) for t, m, v in bins)
    assert ence(y, P2, n_bins=5) == pytest.approx(want_ence, rel=1e-12)
    assert uce(y, P2, n_bins=5) == pytest.approx(want_uce, rel=1e-12)


def test_ence_uniform_bins_and_distribution_variances():
    rng = np.random.default_rng(6)
    n = 200
    mu, b = rng.normal(size=n), rng.uniform(0.2, 2.0, size=n)
    y = mu + rng.laplace(size=n) * b
    var = 2 * b ** 2
    std = np.sqrt(var)
    edges = np.linspace(std.min(), std.max(), 5)
    idx = np.clip(np.searchsorted(edges, std, side="right") - 1, 0, 3)
    terms, uterms = [], 0.0
    for j in range(4):
        g = idx == j
        if g.any():
            rmv, rmse = np.sqrt(var[g].mean()), np.sqrt(((y[g] - mu[g]) ** 2).mean())
            terms.append(abs(rmv - rmse) / rmv)
            uterms += g.mean() * abs(var[g].mean() - ((y[g] - mu[g]) ** 2).mean())
    assert ence(y, Laplace(mu, b), n_bins=4, strategy="uniform") == pytest.approx(np.mean(terms))
    assert uce(y, Laplace(mu, b), n_bins=4, strategy="uniform") == pytest.approx(uterms)


def test_ence_ties_share_a_bin_and_weights_repeat():
    # homoscedastic predictions: one bin whatever n_bins
    y = np.array([1.0, -1.0, 2.0, 0.0])
    P2 = np.column_stack([np.zeros(4), np.ones(4)])
    assert ence(y, P2, n_bins=3) == pytest.approx(abs(1 - np.sqrt(1.5)))
    w = np.array([1, 2, 0, 3])
    rep = np.repeat(np.arange(4), w)
    assert uce(y, P2, sample_weight=w, n_bins=1) == pytest.approx(uce(y[rep], P2[rep], n_bins=1))
    # a bin of point predictions with errors: infinite ENCE, no warning
    assert ence([1.0, 0.0], [[0.0, 0.0], [0.0, 1.0]], n_bins=2) == np.inf


# --------------------------------------------------------------------------------------------
# inputs


def test_array_input_equals_normal_input():
    d = Normal(MU, SD)
    for f in (crps, nll, miscalibration_area, quantile_calibration_error, ence, uce,
              interval_coverage_error):
        assert f(Y, P) == f(Y, d)
    np.testing.assert_array_equal(pit(Y, P), pit(Y, d))
    np.testing.assert_array_equal(interval_coverage(Y, P), interval_coverage(Y, d))
    assert pit_test(Y, P).pvalue == pit_test(Y, d).pvalue


def test_public_names():
    for name in ("pit", "crps", "interval_coverage", "interval_coverage_error",
                 "quantile_calibration_curve", "quantile_calibration_error",
                 "miscalibration_area", "ence", "uce", "nll"):
        assert name in skcalib.__all__ and name in skcalib.metrics.__all__
    assert "pit_test" in skcalib.stats.__all__


def test_inputs_not_mutated():
    y, p, w = Y.copy(), P.copy(), np.ones(Y.size)
    for f in (crps, miscalibration_area, ence, uce):
        f(y, p, sample_weight=w)
    pit(y, p)
    np.testing.assert_array_equal(y, Y)
    np.testing.assert_array_equal(p, P)
    np.testing.assert_array_equal(w, np.ones(Y.size))


@pytest.mark.parametrize("f", [pit, crps, miscalibration_area, quantile_calibration_error, ence,
                               uce, interval_coverage, interval_coverage_error, pit_test])
def test_errors(f):
    with pytest.raises(TypeError, match="y_pred must be a univariate"):
        f(np.zeros((2, 2)), MultivariateNormal(np.zeros((2, 2)), 1.0))
    with pytest.raises(TypeError, match="y_pred must be a univariate"):
        f([0, 1], Categorical([[0.5, 0.5], [0.2, 0.8]]))
    with pytest.raises(ValueError, match="y_pred"):
        f(Y, np.zeros((Y.size, 3)))
    with pytest.raises(ValueError, match="y_pred"):
        f(Y, np.column_stack([MU, -SD]))
    with pytest.raises(ValueError, match="y_true"):
        f(Y[:-1], P)
    with pytest.raises(ValueError, match="y_true"):
        f(np.where(Y > 0, np.nan, Y), P)


def test_parameter_errors():
    with pytest.raises(ValueError, match="sample_weight"):
        crps(Y, P, sample_weight=np.ones(3))
    with pytest.raises(ValueError, match="reduction"):
        crps(Y, P, reduction="sum")
    with pytest.raises(ValueError, match="levels"):
        interval_coverage(Y, P, levels=1.0)
    with pytest.raises(ValueError, match="levels"):
        interval_coverage_error(Y, P, levels=[])
    with pytest.raises(ValueError, match="quantiles"):
        quantile_calibration_curve(Y, P, quantiles=[0.5, 0.2])
    with pytest.raises(ValueError, match="quantiles"):
        miscalibration_area(Y, P, quantiles=1)
    with pytest.raises(ValueError, match="proportion"):
        miscalibration_area(Y, P, proportion="both")
    with pytest.raises(ValueError, match="norm"):
        quantile_calibration_error(Y, P, norm="l3")
    with pytest.raises(ValueError, match="n_bins"):
        ence(Y, P, n_bins=0)
    with pytest.raises(ValueError, match="strategy"):
        uce(Y, P, strategy="kmeans")
    with pytest.raises(ValueError, match="method"):
        pit_test(Y, P, method="chi2")


# --------------------------------------------------------------------------------------------
# PIT tests


def test_anderson_darling_statistic_and_asymptotic_tail():
    u = np.random.default_rng(7).uniform(size=50) ** 1.2
    ref = stats.goodness_of_fit(stats.uniform, u, known_params={"loc": 0, "scale": 1},
                                statistic="ad", n_mc_samples=99, rng=0)
    assert anderson_darling_statistic(u) == pytest.approx(ref.statistic, rel=1e-12)
    # Anderson and Darling's (1954) asymptotic critical values
    for crit, alpha in ((1.933, 0.10), (2.492, 0.05), (3.857, 0.01)):
        assert anderson_darling_sf(crit) == pytest.approx(alpha, abs=5e-4)
    assert anderson_darling_sf(0.0) == 1.0
    assert anderson_darling_sf(np.inf) == 0.0


def test_pit_test_statistics_match_scipy():
    rng = np.random.default_rng(8)
    mu = rng.normal(size=300)
    y = mu + rng.normal(size=300)
    u = stats.norm.cdf(y, mu, 1.0)
    ks, cvm = stats.kstest(u, "uniform"), stats.cramervonmises(u, "uniform")
    r = pit_test(y, Normal(mu, 1.0))
    assert isinstance(r, CalibrationTestResult) and r.method == "ks" and r.n_samples == 300
    assert (r.statistic, r.pvalue) == pytest.approx((ks.statistic, ks.pvalue), rel=1e-12)
    r = pit_test(y, Normal(mu, 1.0), method="cvm")
    assert (r.statistic, r.pvalue) == pytest.approx((cvm.statistic, cvm.pvalue), rel=1e-12)
    assert r.estimate == pytest.approx(miscalibration_area(y, Normal(mu, 1.0)), rel=1e-12)


def _band(alpha, reps):
    lo, hi = stats.binom.interval(0.999, reps, alpha)
    return lo / reps, hi / reps


@pytest.mark.parametrize("method", ["ks", "cvm", "ad"])
def test_pit_test_size_and_power(method):
    rng = np.random.default_rng({"ks": 10, "cvm": 11, "ad": 12}[method])
    reps, n = 400, 100
    rej = {"calibrated": 0, "narrow": 0, "wide": 0}
    for _ in range(reps):
        mu = rng.normal(size=n)
        y = mu + rng.normal(size=n)
        rej["calibrated"] += pit_test(y, Normal(mu, 1.0), method=method).pvalue <= 0.05
        rej["narrow"] += pit_test(y, Normal(mu, 0.6), method=method).pvalue <= 0.05
        rej["wide"] += pit_test(y, Normal(mu, 1.7), method=method).pvalue <= 0.05
    lo, hi = _band(0.05, reps)
    assert lo <= rej["calibrated"] / reps <= hi
    assert rej["narrow"] / reps > 0.5
    assert rej["wide"] / reps > 0.5


def test_pit_test_point_predictions_reject():
    r = pit_test([0.0, 1.0, 2.0], Normal([0.0, 0.0, 0.0], 0.0), method="ad")
    assert r.statistic == np.inf and r.pvalue == 0.0


def test_grid_insertion_equals_searchsorted():
    """The arithmetic insertion into an equally spaced grid (used by the coverage and quantile
    curves) gives exactly ``np.searchsorted(side="left")``, points and their neighbours
    included; unequal grids fall back to it."""
    from skcalib.metrics._regression import _sorted_insertion

    rng = np.random.default_rng(0)
    for _ in range(200):
        m = int(rng.integers(3, 300))
        a, b = sorted(rng.uniform(-1, 2, 2))
        pts = np.linspace(a, b, m)
        v = np.concatenate([rng.uniform(a - 0.5, b + 0.5, 500), pts,
                            np.nextafter(pts, -np.inf), np.nextafter(pts, np.inf)])
        np.testing.assert_array_equal(_sorted_insertion(pts, v),
                                      np.searchsorted(pts, v, side="left"))
        uneven = np.sort(rng.random(m))
        np.testing.assert_array_equal(_sorted_insertion(uneven, v),
                                      np.searchsorted(uneven, v, side="left"))
