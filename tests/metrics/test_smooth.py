"""Smooth ECE (Blasiok and Nakkiran 2023) and the ICI family (Austin and Steyerberg 2019)."""

import numpy as np
import pytest
from scipy import optimize

import skcalib
from skcalib import integrated_calibration_index, smooth_ece, smooth_reliability_curve
from skcalib.metrics import ICIResult


def _data(seed, n, a):
    """Fixed seeded inputs shared with the reference computations: ``p ~ U(0, 1)``,
    ``y ~ Bernoulli(p ** a)`` (``a = 1`` is calibrated)."""
    rng = np.random.default_rng(seed)
    p = rng.random(n)
    y = (rng.random(n) < p ** a).astype(float)
    return p, y


# ------------------------------------------------------------------------------------------
# Brute force of the definitions.


def _reflected_kernel(t, s, sigma):
    out = np.zeros((t.size, s.size))
    c = 1.0 / (np.sqrt(2 * np.pi) * sigma)
    for m in range(-4, 5):  # images beyond 2 * 4 - 1 = 7 sigma-units away are below 1e-11
        for d in (t[:, None] - s[None, :] - 2 * m, t[:, None] + s[None, :] - 2 * m):
            out += c * np.exp(-0.5 * (d / sigma) ** 2)
    return out


def _smece_brute(p, y, sigma, w=None):
    """``int_0^1 |sum_i w_i K(t, p_i) (y_i - p_i)| / W dt`` with every image of the reflected
    kernel, by the trapezoid rule on 20001 points (O(n * 20001))."""
    w = np.ones_like(p) if w is None else np.asarray(w, dtype=float)
    t = np.linspace(0.0, 1.0, 20001)
    g = np.abs(_reflected_kernel(t, p, sigma) @ (w * (y - p))) / w.sum()
    return np.trapezoid(g, t)


@pytest.mark.parametrize("sigma", [0.02, 0.05, 0.1, 0.3, 1.0])
def test_smooth_ece_fixed_bandwidth_matches_brute_force(sigma):
    p, y = _data(1, 60, 1.5)
    assert smooth_ece(y, p, bandwidth=sigma) == pytest.approx(_smece_brute(p, y, sigma),
                                                              rel=1e-4)


def test_smooth_ece_auto_bandwidth_is_the_brute_force_fixed_point():
    p, y = _data(1, 60, 1.5)
    sigma_bf = optimize.brentq(lambda s: _smece_brute(p, y, s) - s, 1e-3, 1.0, xtol=1e-10)
    value, sigma = smooth_ece(y, p, return_bandwidth=True)
    assert sigma == pytest.approx(sigma_bf, rel=1e-4)
    assert value == pytest.approx(sigma, rel=1e-8)
    assert smooth_ece(y, p) == value


def test_smooth_ece_weights_match_brute_force_and_replication():
    p, y = _data(4, 50, 2.0)
    w = np.random.default_rng(0).integers(0, 4, size=50).astype(float)
    assert smooth_ece(y, p, bandwidth=0.07, sample_weight=w) == pytest.approx(
        _smece_brute(p, y, 0.07, w), rel=1e-4)
    rep = np.repeat(np.arange(50), w.astype(int))
    assert smooth_ece(y, p, sample_weight=w) == pytest.approx(smooth_ece(y[rep], p[rep]),
                                                              rel=1e-10)
    assert smooth_ece(y, p, sample_weight=1e300 * w) == pytest.approx(
        smooth_ece(y, p, sample_weight=w), rel=1e-12)


# Reference values computed with the published package relplot 1.0.3 (apple/ml-calibration,
# pip install relplot, numpy 2.4.6) on _data(seed, n, a):
#   relplot.smECE(p, y, return_width=True) -> (value, width); relplot.smECE_sigma(p, y, 0.05).
RELPLOT = [
    # seed, n, a, smECE, width, smECE_sigma(0.05)
    (0, 500, 1.0, 0.03377243937737425, 0.03515625, 0.026457943463494966),
    (1, 2000, 1.5, 0.09557063226560988, 0.095703125, 0.09545496332667132),
    (2, 10000, 0.7, 0.08573602223375701, 0.0859375, 0.08567508365839048),
    (3, 300, 2.0, 0.1893950481449626, 0.189453125, 0.18913385171877947),
]


@pytest.mark.parametrize("seed, n, a, value, width, at05", RELPLOT)
def test_smooth_ece_agrees_with_relplot(seed, n, a, value, width, at05):
    p, y = _data(seed, n, a)
    # relplot keeps one reflection and normalises a discretised kernel: a few 1e-3 relative
    assert smooth_ece(y, p, bandwidth=width) == pytest.approx(value, rel=3e-3)
    assert smooth_ece(y, p, bandwidth=0.05) == pytest.approx(at05, rel=4e-3)
    # relplot's bisection stops at a bandwidth resolution of 2**-10 (its width is the upper end)
    ours, sigma = smooth_ece(y, p, return_bandwidth=True)
    assert sigma == pytest.approx(width, abs=2.0**-10)
    assert ours == pytest.approx(value, abs=2.0**-10)


def test_smooth_ece_is_symmetric_under_relabelling_and_handles_labels():
    p, y = _data(5, 400, 1.3)
    v = smooth_ece(y, p)
    assert smooth_ece(1 - y, 1 - p) == pytest.approx(v, rel=1e-9)
    labels = np.where(y == 1, "yes", "no")
    assert smooth_ece(labels, p, pos_label="yes") == pytest.approx(v, rel=1e-12)
    assert smooth_ece(labels, np.column_stack([1 - p, p])) == pytest.approx(v, rel=1e-12)


def test_smooth_ece_top_label_is_binary_on_confidence_and_correctness():
    rng = np.random.default_rng(2)
    P = rng.dirichlet([1, 1, 1], size=120)
    y = rng.integers(0, 3, size=120)
    conf = P.max(axis=1)
    correct = (P.argmax(axis=1) == y).astype(int)
    assert smooth_ece(y, P) == pytest.approx(smooth_ece(correct, conf, labels=[0, 1]), rel=1e-12)
    assert smooth_ece(y, P, mode="top_label", bandwidth=0.1) == pytest.approx(
        _smece_brute(conf, correct.astype(float), 0.1), rel=1e-4)
    with pytest.raises(ValueError, match="mode"):
        smooth_ece(y, P, mode="binary")


def test_smooth_ece_calibrated_small_and_miscalibrated_large():
    p, y = _data(7, 20000, 1.0)
    assert smooth_ece(y, p) < 0.02
    p, y = _data(7, 20000, 3.0)
    assert smooth_ece(y, p) > 0.15


def test_smooth_ece_perfect_predictions_give_floor_bandwidth():
    y = np.array([0, 1, 1, 0, 1])
    value, sigma = smooth_ece(y, y.astype(float), return_bandwidth=True)
    assert value == 0.0 and sigma == 1e-4


def test_smooth_reliability_curve_integrates_to_the_smooth_ece():
    p, y = _data(3, 800, 2.0)
    curve = smooth_reliability_curve(y, p)
    value, sigma = smooth_ece(y, p, return_bandwidth=True)
    assert curve.bandwidth == sigma
    t = curve.grid
    assert np.trapezoid(curve.density, t) == pytest.approx(1.0, rel=1e-9)
    gap = np.abs(curve.frequency - curve.mean_predicted) * curve.density
    assert np.trapezoid(gap, t) == pytest.approx(value, rel=1e-9)
    # brute-force kernel regression at a few points
    at = np.array([0.1, 0.5, 0.9])
    K = _reflected_kernel(at, p, sigma)
    curve11 = smooth_reliability_curve(y, p, n_points=11)
    idx = [1, 5, 9]
    assert curve11.frequency[idx] == pytest.approx(K @ y / K.sum(axis=1), rel=1e-3)
    assert curve11.density[idx] == pytest.approx(K.mean(axis=1), rel=1e-3)


def test_smooth_reliability_curve_is_nan_far_from_the_data():
    rng = np.random.default_rng(0)
    p = 0.4 + 0.2 * rng.random(5000)
    y = (rng.random(5000) < p).astype(int)
    curve = smooth_reliability_curve(y, p, bandwidth=0.01)
    t = curve.grid
    far = (t < 0.3) | (t > 0.7)
    assert np.all(np.isnan(curve.frequency[far])) and np.all(curve.density[far] == 0)
    near = (t > 0.42) & (t < 0.58)
    assert np.all(np.abs(curve.frequency[near] - t[near]) < 0.1)
    assert np.all(np.abs(curve.mean_predicted[near] - t[near]) < 0.01)
    assert np.all(curve.density >= 0)


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"bandwidth": "silverman"}, ValueError, "bandwidth"),
    ({"bandwidth": 0.0}, ValueError, "bandwidth"),
    ({"bandwidth": 2.0}, ValueError, "bandwidth"),
    ({"bandwidth": np.nan}, ValueError, "bandwidth"),
    ({"bandwidth": True}, TypeError, "bandwidth"),
    ({"return_bandwidth": "yes"}, TypeError, "return_bandwidth"),
    ({"mode": "classwise"}, ValueError, "mode"),
    ({"sample_weight": [1.0, -1.0, 1.0, 1.0]}, ValueError, "sample_weight"),
])
def test_smooth_ece_invalid_input(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        smooth_ece([0, 1, 1, 0], [0.2, 0.7, 0.6, 0.1], **kwargs)


def test_smooth_curve_invalid_n_points_and_no_mutation():
    p, y = _data(0, 50, 1.0)
    p0, y0 = p.copy(), y.copy()
    with pytest.raises(ValueError, match="n_points"):
        smooth_reliability_curve(y, p, n_points=1)
    smooth_reliability_curve(y, p)
    integrated_calibration_index(y, p, statistic="all")
    np.testing.assert_array_equal(p, p0)
    np.testing.assert_array_equal(y, y0)


def test_public_names():
    assert skcalib.smooth_ece is smooth_ece
    assert skcalib.integrated_calibration_index is integrated_calibration_index
    assert skcalib.smooth_reliability_curve is smooth_reliability_curve
    assert {"smooth_ece", "integrated_calibration_index"} <= set(skcalib.__all__)


# ------------------------------------------------------------------------------------------
# ICI.


def _lowess_brute(x, y, frac, degree, w=None):
    """Local polynomial fit at every x_i: tricube weights on the q nearest, weighted lstsq."""
    n = len(x)
    w = np.ones(n) if w is None else w
    q = int(np.floor(frac * n + 1e-10))
    out = []
    for x0 in x:
        d = np.abs(x - x0)
        h = np.sort(d)[q - 1]
        k = w * np.clip(1 - (d / h) ** 3, 0, None) ** 3
        X = np.vander(x - x0, degree + 1, increasing=True)
        out.append(np.linalg.lstsq(X * np.sqrt(k)[:, None], y * np.sqrt(k), rcond=None)[0][0])
    return np.array(out)


@pytest.mark.parametrize("degree", [1, 2])
@pytest.mark.parametrize("frac", [0.3, 0.75])
def test_ici_matches_brute_force_lowess(degree, frac):
    p, y = _data(3, 300, 2.0)
    a = np.abs(_lowess_brute(p, y, frac, degree) - p)
    res = integrated_calibration_index(y, p, statistic="all", frac=frac, degree=degree,
                                       n_grid=300)
    assert isinstance(res, ICIResult)
    assert res.ici == pytest.approx(a.mean(), rel=1e-10)
    assert res.e50 == pytest.approx(np.median(a), rel=1e-10)
    assert res.e90 == pytest.approx(np.quantile(a, 0.9), rel=1e-10)
    assert res.emax == pytest.approx(a.max(), rel=1e-10)
    for name in ("ici", "e50", "e90", "emax"):
        assert integrated_calibration_index(y, p, statistic=name, frac=frac, degree=degree,
                                            n_grid=300) == getattr(res, name)


def test_ici_weights_multiply_the_tricube_weights():
    p, y = _data(8, 120, 1.5)
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=120)
    a = np.abs(_lowess_brute(p, y, 0.75, 2, w) - p)
    assert integrated_calibration_index(y, p, sample_weight=w, n_grid=120) == pytest.approx(
        np.sum(w * a) / w.sum(), rel=1e-9)
    assert integrated_calibration_index(y, p, sample_weight=np.ones(120)) == \
        integrated_calibration_index(y, p)


# Reference values computed with statsmodels 0.15.0 (pip install statsmodels, numpy 2.4.6):
#   f = statsmodels.nonparametric.smoothers_lowess.lowess(y, p, frac=0.75, it=it, delta=0.0,
#                                                         return_sorted=False)
#   d = |f - p|; (mean, median, quantile 0.9, max) on _data(seed, n, a).
STATSMODELS = [
    (5, 400, 1.5, 0, (0.0739955784726909, 0.066895965617357, 0.1348676570791685,
                      0.14473402231638885)),
    (5, 400, 1.5, 3, (0.14769468242904218, 0.1444349952836621, 0.28293940604017137,
                      0.3153360550322076)),
    (6, 1000, 0.6, 0, (0.12191418233427918, 0.14836699645159296, 0.16304889902734213,
                       0.16331346274816738)),
    (6, 1000, 0.6, 3, (0.13469850640077669, 0.1370950540480545, 0.20668600134389545,
                       0.21068028954077367)),
]


@pytest.mark.parametrize("seed, n, a, it, ref", STATSMODELS)
def test_ici_agrees_with_statsmodels_lowess(seed, n, a, it, ref):
    p, y = _data(seed, n, a)
    res = integrated_calibration_index(y, p, statistic="all", degree=1, robust_iters=it,
                                       n_grid=n)
    np.testing.assert_allclose(res, ref, rtol=1e-9)


# Reference values computed with R 4.2.2 (Debian r-base-core), the smoother of Austin and
# Steyerberg (2019): fit <- loess(Y ~ P, control = loess.control(surface = surface)) (degree 2,
# span 0.75, family "gaussian"); a <- abs(predict(fit, newdata = P) - P);
# c(mean(a), median(a), quantile(a, 0.9), max(a)) on _data(seed, n, a) written with 17 digits.
R_LOESS = [
    (5, 400, 1.5, "direct", (0.086865959129314413, 0.074060030820463252, 0.17817785561220703,
                             0.18552016106267541)),
    (5, 400, 1.5, "interpolate", (0.086095129505373569, 0.074114471510263569,
                                  0.17795906718685531, 0.18408323504611623)),
    (6, 1000, 0.6, "direct", (0.12395440570094621, 0.12813647207981532, 0.18406836335531901,
                              0.18682754496961118)),
    (6, 1000, 0.6, "interpolate", (0.12389637170371505, 0.13152335833207712,
                                   0.18459043614436563, 0.18733913882144648)),
]


@pytest.mark.parametrize("seed, n, a, surface, ref", R_LOESS)
def test_ici_default_is_r_loess(seed, n, a, surface, ref):
    p, y = _data(seed, n, a)
    exact = integrated_calibration_index(y, p, statistic="all", n_grid=n)
    if surface == "direct":  # the exact local fit: equal to rounding
        np.testing.assert_allclose(exact, ref, rtol=1e-10)
    else:  # R's default k-d tree interpolation of the surface: within a few per cent
        np.testing.assert_allclose(exact, ref, rtol=3e-2)
    np.testing.assert_allclose(integrated_calibration_index(y, p, statistic="all"), ref,
                               rtol=3e-2)


def test_ici_robustness_iterations_change_the_value():
    # landscape section 6: the smoother's settings move the indices by a factor 2 or more
    p, y = _data(5, 400, 1.5)
    plain = integrated_calibration_index(y, p, degree=1)
    robust = integrated_calibration_index(y, p, degree=1, robust_iters=3)
    assert robust > 1.5 * plain


@pytest.mark.parametrize("kwargs", [{}, {"degree": 1, "robust_iters": 2}, {"frac": 0.2}])
def test_ici_grid_interpolation_is_close_to_exact(kwargs):
    p, y = _data(9, 6000, 1.2)
    exact = integrated_calibration_index(y, p, statistic="all", n_grid=6000, **kwargs)
    fast = integrated_calibration_index(y, p, statistic="all", **kwargs)
    np.testing.assert_allclose(fast, exact, rtol=5e-3)


def test_ici_calibrated_small_and_ties():
    p, y = _data(10, 20000, 1.0)
    assert integrated_calibration_index(y, p) < 0.01
    # few distinct predictions: fitted at each (group means when q covers a single value)
    p = np.repeat([0.2, 0.5, 0.8], 50)
    y = np.tile(np.r_[np.ones(20), np.zeros(30)], 3)
    assert integrated_calibration_index(y, p, degree=1, frac=0.2) == pytest.approx(
        np.mean(np.abs(0.4 - p)), rel=1e-12)


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"statistic": "e95"}, ValueError, "statistic"),
    ({"frac": 0.0}, ValueError, "frac"),
    ({"frac": 1.5}, ValueError, "frac"),
    ({"degree": 3}, ValueError, "degree"),
    ({"degree": 1.0}, TypeError, "degree"),
    ({"robust_iters": -1}, ValueError, "robust_iters"),
    ({"n_grid": 1}, ValueError, "n_grid"),
    ({"n_grid": "fine"}, ValueError, "n_grid"),
])
def test_ici_invalid_input(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        integrated_calibration_index([0, 1, 1, 0], [0.2, 0.7, 0.6, 0.1], **kwargs)
