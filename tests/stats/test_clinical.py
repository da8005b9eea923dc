"""Spiegelhalter's Z test, the Hosmer--Lemeshow test and logistic calibration (Cox 1958).

Every number is checked against an independent computation: the hand formulas with Python loops,
brute-force grouping with explicit masks, SciPy's chi-squared and normal distributions,
scikit-learn's unpenalised ``LogisticRegression``, finite differences of the log-likelihood, and
statsmodels (``GLM`` with a Binomial family, stored as constants: statsmodels 0.15.0, numpy 2.4.6).
"""

import math
import warnings

import numpy as np
import pytest
from scipy import optimize, stats
from scipy.special import expit, logit
from sklearn.linear_model import LogisticRegression

from skcalib.stats import (
    CalibrationTestResult,
    HosmerLemeshowResult,
    LogisticCalibrationResult,
    OneVsRestResult,
    hosmer_lemeshow_test,
    logistic_calibration,
    spiegelhalter_test,
)


def _binary(n, seed, a=0.0, b=1.0):
    """Predictions ``p = expit(z)`` and outcomes from ``expit(a + b z)`` (calibrated for
    ``(a, b) = (0, 1)``)."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    y = (rng.random(n) < expit(a + b * z)).astype(int)
    return y, expit(z)


def _multiclass(n, seed, k=3):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(k), size=n)
    y = (rng.random((n, 1)) > P.cumsum(axis=1)).sum(axis=1)
    return np.minimum(y, k - 1), P


# ------------------------------------------------------------------------------------------------
# Spiegelhalter
# ------------------------------------------------------------------------------------------------

def _z_by_hand(y, p, w=None):
    w = [1.0] * len(y) if w is None else w
    num = sum(wi * (yi - pi) * (1 - 2 * pi) for yi, pi, wi in zip(y, p, w))
    var = sum(wi * (1 - 2 * pi) ** 2 * pi * (1 - pi) for pi, wi in zip(p, w))
    return num / math.sqrt(var)


def test_spiegelhalter_matches_the_hand_formula():
    y, p = _binary(60, 0, b=0.6)
    res = spiegelhalter_test(y, p)
    z = _z_by_hand(y.tolist(), p.tolist())
    assert isinstance(res, CalibrationTestResult)
    assert res.statistic == pytest.approx(z, rel=1e-12)
    assert res.pvalue == pytest.approx(2 * stats.norm.sf(abs(z)), rel=1e-12)
    assert spiegelhalter_test(y, p, alternative="greater").pvalue == pytest.approx(
        stats.norm.sf(z), rel=1e-12)
    assert spiegelhalter_test(y, p, alternative="less").pvalue == pytest.approx(
        stats.norm.cdf(z), rel=1e-12)
    statistic, pvalue = res
    assert (statistic, pvalue) == (res.statistic, res.pvalue)


def test_spiegelhalter_estimate_is_the_excess_brier_score():
    y, p = _binary(80, 1)
    res = spiegelhalter_test(y, p)
    excess = np.mean((y - p) ** 2) - np.mean(p * (1 - p))
    assert res.estimate == pytest.approx(excess, rel=1e-12)
    se = math.sqrt(np.sum((1 - 2 * p) ** 2 * p * (1 - p))) / 80
    assert res.standard_error == pytest.approx(se, rel=1e-12)
    assert res.statistic == pytest.approx(res.estimate / res.standard_error, rel=1e-12)
    # the interval is not clipped at 0: the excess can be negative
    lo, hi = res.confidence_interval(0.9)
    z = stats.norm.ppf(0.95)
    assert (lo, hi) == pytest.approx((excess - z * se, excess + z * se), rel=1e-12)


def test_spiegelhalter_two_sided_by_default_for_a_large_negative_z():
    # underconfident predictions: the Brier score is much smaller than expected, Z << 0; a
    # one-sided test (as one peer package reports) would give p close to 1.
    rng = np.random.default_rng(2)
    z = rng.normal(size=3000) * 2
    y = (rng.random(3000) < expit(z)).astype(int)
    p = expit(z / 3)
    res = spiegelhalter_test(y, p)
    assert res.statistic < -5 and res.pvalue < 1e-6
    assert spiegelhalter_test(y, p, alternative="greater").pvalue > 0.999


def test_spiegelhalter_weights_are_frequency_weights():
    y, p = _binary(50, 3)
    w = np.random.default_rng(3).integers(0, 4, size=50)
    rep = np.repeat(np.arange(50), w)
    res = spiegelhalter_test(y, p, sample_weight=w)
    ref = spiegelhalter_test(y[rep], p[rep])
    assert res.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert res.estimate == pytest.approx(ref.estimate, rel=1e-12)
    assert res.statistic == pytest.approx(_z_by_hand(y, p, w.astype(float)), rel=1e-12)


def test_spiegelhalter_label_conventions():
    y, p = _binary(40, 4)
    ref = spiegelhalter_test(y, p)
    two = spiegelhalter_test(y, np.column_stack([1 - p, p]))
    flipped = spiegelhalter_test(1 - y, 1 - p)  # the other class is symmetric
    named = spiegelhalter_test(np.where(y == 1, "yes", "no"), p, pos_label="yes")
    for r in (two, flipped, named):
        assert r.statistic == pytest.approx(ref.statistic, rel=1e-12)


def test_spiegelhalter_degenerate_variance():
    y = np.array([0, 1, 1, 0])
    res = spiegelhalter_test(y, np.full(4, 0.5))  # p = 1/2 carries no weight
    assert (res.statistic, res.pvalue) == (0.0, 1.0)
    res = spiegelhalter_test(np.array([0, 1, 1, 0]), np.array([0.0, 1.0, 0.5, 0.5]))
    assert (res.statistic, res.pvalue) == (0.0, 1.0)
    # an event of probability 0 happened
    res = spiegelhalter_test(np.array([1, 1, 0, 0]), np.array([0.0, 1.0, 0.5, 0.5]))
    assert res.statistic == np.inf and res.pvalue == 0.0


def test_spiegelhalter_multiclass_one_vs_rest_with_holm():
    y, P = _multiclass(300, 5)
    P = P.copy()
    P[:, 0], P[:, 1] = 0.5 * P[:, 0] + 0.5 * P[:, 1], 0.5 * P[:, 0] + 0.5 * P[:, 1]
    res = spiegelhalter_test(y, P)
    assert isinstance(res, OneVsRestResult)
    raw = []
    for k in range(3):
        z = _z_by_hand((y == k).astype(float), P[:, k])
        assert res.per_class[k].statistic == pytest.approx(z, rel=1e-12)
        raw.append(2 * stats.norm.sf(abs(z)))
    np.testing.assert_allclose(res.pvalues, raw, rtol=1e-12)
    # Holm by hand
    order = np.argsort(raw)
    adj, running = np.empty(3), 0.0
    for rank, k in enumerate(order):
        running = max(running, min(1.0, (3 - rank) * raw[k]))
        adj[k] = running
    np.testing.assert_allclose(res.pvalues_adjusted, adj, rtol=1e-12)
    assert res.pvalue == pytest.approx(min(1.0, 3 * min(raw)), rel=1e-12)
    bonf = spiegelhalter_test(y, P, correction="bonferroni")
    np.testing.assert_allclose(bonf.pvalues_adjusted, np.minimum(1, 3 * np.array(raw)))
    assert res.statistic == res.per_class[int(np.argmin(raw))].statistic
    assert list(res.classes) == [0, 1, 2]


@pytest.mark.filterwarnings("ignore:Hosmer-Lemeshow group:UserWarning")
@pytest.mark.parametrize("test", [spiegelhalter_test, hosmer_lemeshow_test, logistic_calibration])
def test_read_only_inputs_are_not_modified(test):
    y, P = _multiclass(300, 22)
    w = np.random.default_rng(22).random(300)
    copies = [a.copy() for a in (y, P, w)]
    for a in (y, P, w):
        a.setflags(write=False)
    test(y, P, sample_weight=w)
    test((y == 1).astype(int), P[:, 1], sample_weight=w)
    for a, c in zip((y, P, w), copies):
        np.testing.assert_array_equal(a, c)


def test_spiegelhalter_input_errors_and_no_mutation():
    y, p = _binary(20, 6)
    p_copy, y_copy = p.copy(), y.copy()
    spiegelhalter_test(y, p, sample_weight=np.ones(20))
    np.testing.assert_array_equal(p, p_copy)
    np.testing.assert_array_equal(y, y_copy)
    with pytest.raises(ValueError, match="alternative"):
        spiegelhalter_test(y, p, alternative="both")
    with pytest.raises(ValueError, match="correction"):
        spiegelhalter_test(y, p, correction="fdr")
    with pytest.raises(ValueError, match="y_proba"):
        spiegelhalter_test(y, p + 1)
    with pytest.raises(ValueError, match="sample_weight"):
        spiegelhalter_test(y, p, sample_weight=-np.ones(20))


# ------------------------------------------------------------------------------------------------
# Hosmer--Lemeshow
# ------------------------------------------------------------------------------------------------

def _hl_brute(y, p, g, strategy, w=None):
    """Groups with explicit masks; edges from ``np.quantile(method="inverted_cdf")``."""
    w = np.ones_like(p) if w is None else w
    if strategy == "uniform":
        edges = np.linspace(0, 1, g + 1)
    else:
        rep = np.repeat(p, w.astype(int))  # integer weights: repeat the rows
        edges = np.concatenate(([0.0], np.quantile(rep, np.arange(1, g) / g,
                                                   method="inverted_cdf"), [1.0]))
    chi2, rows = 0.0, []
    for k in range(g):
        mask = (p > edges[k]) & (p <= edges[k + 1]) if k else (p <= edges[1])
        n_g = w[mask].sum()
        if n_g == 0:
            continue
        O, E = (w * y)[mask].sum(), (w * p)[mask].sum()
        # Pearson chi-squared of the 2 columns (events, non-events) as in R's hoslem.test
        chi2 += (O - E) ** 2 / E + ((n_g - O) - (n_g - E)) ** 2 / (n_g - E)
        rows.append((n_g, O, E))
    return chi2, np.array(rows)


@pytest.mark.filterwarnings("ignore:Hosmer-Lemeshow group:UserWarning")
@pytest.mark.parametrize("strategy", ["quantile", "uniform"])
@pytest.mark.parametrize("g", [5, 10])
def test_hosmer_lemeshow_matches_brute_force_and_scipy(strategy, g):
    y, p = _binary(437, 7, a=0.2, b=0.8)
    res = hosmer_lemeshow_test(y, p, n_groups=g, strategy=strategy)
    chi2, rows = _hl_brute(y, p, g, strategy)
    assert isinstance(res, HosmerLemeshowResult)
    assert res.statistic == pytest.approx(chi2, rel=1e-10)
    G = len(rows)
    assert res.df == G - 2
    assert res.pvalue == pytest.approx(stats.chi2.sf(chi2, G - 2), rel=1e-10)
    np.testing.assert_allclose(res.counts, rows[:, 0])
    np.testing.assert_allclose(res.observed, rows[:, 1])
    np.testing.assert_allclose(res.expected, rows[:, 2], rtol=1e-12)
    est = np.sum((rows[:, 1] - rows[:, 2]) ** 2 / rows[:, 0]) / 437
    assert res.estimate == pytest.approx(est, rel=1e-10)
    ext = hosmer_lemeshow_test(y, p, n_groups=g, strategy=strategy, df=G)
    assert ext.statistic == res.statistic
    assert ext.pvalue == pytest.approx(stats.chi2.sf(chi2, G), rel=1e-10)
    assert ext.pvalue > res.pvalue  # the df convention matters


def test_hosmer_lemeshow_quantile_groups_are_deciles_and_keep_ties_together():
    y, p = _binary(1000, 8)
    res = hosmer_lemeshow_test(y, p)
    np.testing.assert_array_equal(res.counts, np.full(10, 100.0))
    assert np.all(res.bounds[1:, 0] > res.bounds[:-1, 1])
    # heavy ties: a tie block never straddles two groups and the row order does not matter
    p_t = np.round(p, 1)
    res_t = hosmer_lemeshow_test(y, p_t)
    perm = np.random.default_rng(8).permutation(1000)
    res_p = hosmer_lemeshow_test(y[perm], p_t[perm])
    assert res_p.statistic == pytest.approx(res_t.statistic, rel=1e-12)
    assert np.all(res_t.bounds[1:, 0] > res_t.bounds[:-1, 1])
    chi2, rows = _hl_brute(y, p_t, 10, "quantile")
    assert res_t.statistic == pytest.approx(chi2, rel=1e-10)
    assert res_t.df == len(rows) - 2 < 8  # coinciding quantiles leave groups empty


@pytest.mark.filterwarnings("ignore:Hosmer-Lemeshow group:UserWarning")
def test_hosmer_lemeshow_weights_are_frequency_weights():
    y, p = _binary(200, 9)
    w = np.random.default_rng(9).integers(0, 4, size=200)
    rep = np.repeat(np.arange(200), w)
    for strategy in ("quantile", "uniform"):
        res = hosmer_lemeshow_test(y, p, strategy=strategy, sample_weight=w)
        ref = hosmer_lemeshow_test(y[rep], p[rep], strategy=strategy)
        assert res.statistic == pytest.approx(ref.statistic, rel=1e-10)
        assert res.df == ref.df
        chi2, _ = _hl_brute(y, p, 10, strategy, w=w.astype(float))
        assert res.statistic == pytest.approx(chi2, rel=1e-10)


@pytest.mark.filterwarnings("ignore:Hosmer-Lemeshow group:UserWarning")
def test_hosmer_lemeshow_uniform_bins_are_right_closed():
    p = np.array([0.0, 0.1, 0.2, 0.25, 0.5, 0.7, 0.9, 1.0])
    y = np.array([0, 0, 1, 0, 1, 1, 1, 1])
    res = hosmer_lemeshow_test(y, p, n_groups=5, strategy="uniform", df=3)
    # [0, .2], (.2, .4], (.4, .6], (.6, .8], (.8, 1]
    np.testing.assert_allclose(res.counts, [3, 1, 1, 1, 2])
    np.testing.assert_allclose(res.bounds[0], [0.0, 0.2])


def test_hosmer_lemeshow_warns_on_tiny_groups_and_handles_degenerate_ones():
    y, p = _binary(60, 10)
    with pytest.warns(UserWarning, match="chi-squared approximation"):
        hosmer_lemeshow_test(y, 0.05 * p, strategy="quantile")
    # a group of predictions 0 whose outcomes contradict them: infinite statistic
    p = np.r_[np.zeros(20), np.linspace(0.2, 0.8, 60)]
    y = np.r_[np.zeros(19, int), 1, (np.random.default_rng(10).random(60) < 0.5).astype(int)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        res = hosmer_lemeshow_test(y, p, n_groups=4)
        assert res.statistic == np.inf and res.pvalue == 0.0
        y[19] = 0
        assert np.isfinite(hosmer_lemeshow_test(y, p, n_groups=4).statistic)


def test_hosmer_lemeshow_errors():
    y, p = _binary(50, 11)
    with pytest.raises(ValueError, match="n_groups"):
        hosmer_lemeshow_test(y, p, n_groups=1)
    with pytest.raises(TypeError, match="n_groups"):
        hosmer_lemeshow_test(y, p, n_groups=2.5)
    with pytest.raises(ValueError, match="strategy"):
        hosmer_lemeshow_test(y, p, strategy="kmeans")
    with pytest.raises(ValueError, match="df"):
        hosmer_lemeshow_test(y, p, df=0)
    with pytest.raises(ValueError, match="non-empty groups"):
        hosmer_lemeshow_test(y, np.where(p > 0.5, 0.8, 0.2))


def test_hosmer_lemeshow_multiclass():
    y, P = _multiclass(600, 12)
    res = hosmer_lemeshow_test(y, P)
    assert isinstance(res, OneVsRestResult) and res.method == "hosmer_lemeshow"
    for k in range(3):
        chi2, _ = _hl_brute((y == k).astype(float), P[:, k], 10, "quantile")
        assert res.per_class[k].statistic == pytest.approx(chi2, rel=1e-10)


# ------------------------------------------------------------------------------------------------
# Logistic calibration
# ------------------------------------------------------------------------------------------------

def _loglik(a, b, x, y, w=None):
    mu = expit(a + b * x)
    terms = y * np.log(mu) + (1 - y) * np.log1p(-mu)
    return float(np.sum(terms if w is None else w * terms))


def test_logistic_calibration_matches_sklearn():
    y, p = _binary(500, 13, a=0.3, b=0.7)
    res = logistic_calibration(y, p)
    assert isinstance(res, LogisticCalibrationResult)
    lr = LogisticRegression(C=np.inf, solver="newton-cholesky", tol=1e-14, max_iter=1000)
    lr.fit(logit(p)[:, None], y)
    assert res.slope == pytest.approx(lr.coef_[0, 0], abs=1e-6)
    assert res.intercept == pytest.approx(lr.intercept_[0], abs=1e-6)
    w = np.random.default_rng(13).integers(1, 5, size=500).astype(float)
    res_w = logistic_calibration(y, p, sample_weight=w)
    lr.fit(logit(p)[:, None], y, sample_weight=w)
    assert res_w.slope == pytest.approx(lr.coef_[0, 0], abs=1e-6)
    assert res_w.intercept == pytest.approx(lr.intercept_[0], abs=1e-6)
    # extreme predictions (logits up to about +/-35) and a small true slope
    y, p = _binary(500, 13, a=-1.0, b=1.0)
    p_far = expit(8 * logit(p))
    res = logistic_calibration(y, p_far)
    lr.fit(logit(np.clip(p_far, 1e-12, 1 - 1e-12))[:, None], y)
    assert res.slope == pytest.approx(lr.coef_[0, 0], abs=1e-6)
    assert res.intercept == pytest.approx(lr.intercept_[0], abs=1e-6)


def _statsmodels_data():
    rng = np.random.default_rng(20261125)
    n = 400
    z = rng.normal(size=n)
    y = (rng.random(n) < expit(0.3 + 0.7 * z)).astype(int)
    w = rng.integers(1, 4, size=n).astype(float)
    return y, expit(z), w


# statsmodels 0.15.0: GLM(y, [1, logit p], Binomial).fit(tol=1e-14) -> params, bse;
# GLM(y, 1, Binomial, offset=logit p) -> params, bse; 2 (llf - loglik(0, 1)); unweighted and
# with freq_weights=w (scripts in the P4 report).
STATSMODELS = {
    "unweighted": dict(intercept=0.13166327193448396, slope=0.7915973693696581,
                       intercept_se=0.10709925453346501, slope_se=0.11976505945629298,
                       citl=0.1354346132055767, citl_se=0.11045583837892865,
                       lr=4.3702587446956045),
    "weighted": dict(intercept=0.09069819093805084, slope=0.75766907045052,
                     intercept_se=0.07714334953557049, slope_se=0.08462450067407636,
                     citl=0.08849349282062999, citl_se=0.07999232475110628,
                     lr=8.899866438770687),
}


@pytest.mark.parametrize("case", ["unweighted", "weighted"])
def test_logistic_calibration_matches_statsmodels(case):
    y, p, w = _statsmodels_data()
    ref = STATSMODELS[case]
    res = logistic_calibration(y, p, sample_weight=None if case == "unweighted" else w)
    assert res.intercept == pytest.approx(ref["intercept"], abs=1e-9)
    assert res.slope == pytest.approx(ref["slope"], abs=1e-9)
    assert res.intercept_se == pytest.approx(ref["intercept_se"], rel=1e-7)
    assert res.slope_se == pytest.approx(ref["slope_se"], rel=1e-7)
    assert res.calibration_in_the_large == pytest.approx(ref["citl"], abs=1e-9)
    assert res.calibration_in_the_large_se == pytest.approx(ref["citl_se"], rel=1e-7)
    assert res.statistic == pytest.approx(ref["lr"], rel=1e-7)


def test_logistic_calibration_se_from_observed_information_by_finite_differences():
    y, p = _binary(300, 14, a=-0.2, b=1.3)
    x = logit(p)
    res = logistic_calibration(y, p, confidence_level=0.9)
    h = 1e-4
    th = np.array([res.intercept, res.slope])

    def ll(t):
        return _loglik(t[0], t[1], x, y)

    H = np.empty((2, 2))
    E = np.eye(2) * h
    for i in range(2):
        for j in range(2):
            H[i, j] = (ll(th + E[i] + E[j]) - ll(th + E[i] - E[j]) - ll(th - E[i] + E[j])
                       + ll(th - E[i] - E[j])) / (4 * h * h)
    cov = np.linalg.inv(-H)
    np.testing.assert_allclose(res.covariance, cov, rtol=1e-5)
    assert res.slope_se == pytest.approx(math.sqrt(cov[1, 1]), rel=1e-5)
    z = stats.norm.ppf(0.95)
    assert res.slope_ci == pytest.approx((res.slope - z * res.slope_se,
                                          res.slope + z * res.slope_se), rel=1e-12)
    assert res.intercept_ci == pytest.approx((res.intercept - z * res.intercept_se,
                                              res.intercept + z * res.intercept_se), rel=1e-12)
    # the maximum: the score vanishes
    grad = [(ll(th + E[i]) - ll(th - E[i])) / (2 * h) for i in range(2)]
    np.testing.assert_allclose(grad, 0, atol=1e-5)


def test_logistic_calibration_likelihood_ratio_by_explicit_log_likelihoods():
    y, p = _binary(400, 15, a=0.0, b=0.6)
    x = logit(p)
    res = logistic_calibration(y, p)
    ll_hat = _loglik(res.intercept, res.slope, x, y)
    ll_0 = float(np.sum(y * np.log(p) + (1 - y) * np.log1p(-p)))
    assert res.statistic == pytest.approx(2 * (ll_hat - ll_0), rel=1e-9)
    assert res.pvalue == pytest.approx(stats.chi2.sf(2 * (ll_hat - ll_0), 2), rel=1e-8)
    assert res.df == 2
    statistic, pvalue = res
    assert (statistic, pvalue) == (res.statistic, res.pvalue)


def test_calibration_in_the_large_and_oe_ratio():
    y, p = _binary(300, 16, a=0.5, b=1.0)
    x = logit(p)
    res = logistic_calibration(y, p, confidence_level=0.9)
    a0 = optimize.brentq(lambda a: np.sum(y - expit(a + x)), -5, 5, xtol=1e-14)
    assert res.calibration_in_the_large == pytest.approx(a0, abs=1e-9)
    info = np.sum(expit(a0 + x) * (1 - expit(a0 + x)))
    assert res.calibration_in_the_large_se == pytest.approx(1 / math.sqrt(info), rel=1e-8)
    assert res.calibration_in_the_large != pytest.approx(res.intercept, abs=1e-3)
    O, E = y.sum(), p.sum()
    assert res.oe_ratio == pytest.approx(O / E, rel=1e-12)
    z = stats.norm.ppf(0.95)
    assert res.oe_ratio_ci == pytest.approx((O / E * math.exp(-z / math.sqrt(O)),
                                             O / E * math.exp(z / math.sqrt(O))), rel=1e-12)
    exact = logistic_calibration(y, p, oe_interval="exact").oe_ratio_ci
    # Garwood: P(X >= O | low) = P(X <= O | high) = alpha / 2 for X ~ Poisson
    assert stats.poisson.sf(O - 1, exact.low * E) == pytest.approx(0.025, rel=1e-9)
    assert stats.poisson.cdf(O, exact.high * E) == pytest.approx(0.025, rel=1e-9)
    # confidence_interval recomputes at another level
    wide = res.confidence_interval("oe_ratio", confidence_level=0.99)
    assert wide.low < res.oe_ratio_ci.low and wide.high > res.oe_ratio_ci.high
    assert res.confidence_interval("calibration_in_the_large") == res.calibration_in_the_large_ci


def test_logistic_calibration_weights_are_frequency_weights():
    y, p = _binary(150, 17, b=0.8)
    w = np.random.default_rng(17).integers(0, 4, size=150)
    rep = np.repeat(np.arange(150), w)
    res = logistic_calibration(y, p, sample_weight=w)
    ref = logistic_calibration(y[rep], p[rep])
    for name in ("slope", "intercept", "calibration_in_the_large", "slope_se", "statistic",
                 "oe_ratio"):
        assert getattr(res, name) == pytest.approx(getattr(ref, name), rel=1e-8), name


def test_logistic_calibration_clips_predictions_of_zero_and_one():
    y, p = _binary(200, 18)
    p = p.copy()
    p[:3] = [0.0, 1.0, 0.0]
    y[:3] = [0, 1, 1]  # one prediction of 0 was wrong
    res = logistic_calibration(y, p)
    assert np.isfinite([res.slope, res.intercept, res.statistic]).all()
    ref = logistic_calibration(y, np.clip(p, 1e-12, 1 - 1e-12))
    assert res.slope == ref.slope
    coarse = logistic_calibration(y, p, eps=1e-6)
    assert coarse.slope != pytest.approx(res.slope, rel=1e-3)  # eps matters and is documented


def test_logistic_calibration_errors():
    y, p = _binary(50, 19)
    with pytest.raises(ValueError, match="both classes"):
        logistic_calibration(np.zeros(50, int), p, labels=[0, 1])
    with pytest.raises(ValueError, match="both classes"):
        logistic_calibration(y, p, sample_weight=(y == 1).astype(float))
    with pytest.raises(ValueError, match="all predictions are equal"):
        logistic_calibration(y, np.full(50, 0.3))
    with pytest.raises(ValueError, match="separated"):
        logistic_calibration(np.array([0, 0, 1, 1]), np.array([0.1, 0.2, 0.7, 0.9]))
    with pytest.raises(ValueError, match="separated"):  # quasi-complete: a tie at the border
        logistic_calibration(np.array([0, 0, 1, 1, 0]), np.array([0.1, 0.5, 0.5, 0.9, 0.2]))
    with pytest.raises(ValueError, match="separated"):  # reversed
        logistic_calibration(np.array([1, 1, 0, 0]), np.array([0.1, 0.2, 0.7, 0.9]))
    with pytest.raises(ValueError, match="confidence_level"):
        logistic_calibration(y, p, confidence_level=1.0)
    with pytest.raises(ValueError, match="oe_interval"):
        logistic_calibration(y, p, oe_interval="wald")
    with pytest.raises(ValueError, match="eps"):
        logistic_calibration(y, p, eps=0.5)
    with pytest.raises(ValueError, match="parameter"):
        logistic_calibration(y, p).confidence_interval("auc")
    # the smallest identifiable data set works
    res = logistic_calibration(np.array([0, 1, 0, 1]), np.array([0.2, 0.3, 0.6, 0.7]))
    assert np.isfinite(res.slope)


def test_logistic_calibration_multiclass():
    y, P = _multiclass(600, 20)
    res = logistic_calibration(y, P, correction="bonferroni")
    assert isinstance(res, OneVsRestResult) and res.correction == "bonferroni"
    lr = LogisticRegression(C=np.inf, solver="newton-cholesky", tol=1e-14, max_iter=1000)
    for k in range(3):
        lr.fit(logit(P[:, k])[:, None], (y == k).astype(int))
        assert res.per_class[k].slope == pytest.approx(lr.coef_[0, 0], abs=1e-6)
    np.testing.assert_allclose(res.pvalues_adjusted, np.minimum(1, 3 * res.pvalues))


def test_logistic_calibration_recovers_a_known_slope():
    y, p = _binary(20000, 21, a=0.4, b=0.5)
    res = logistic_calibration(y, p)
    assert res.slope_ci.low < 0.5 < res.slope_ci.high
    assert res.intercept_ci.low < 0.4 < res.intercept_ci.high
    assert res.pvalue < 1e-10


# ------------------------------------------------------------------------------------------------
# Size and power
# ------------------------------------------------------------------------------------------------

N_SETS, N = 300, 400
LOW, HIGH = stats.binom.ppf([0.0005, 0.9995], N_SETS, 0.05)


def _rejections(a=0.0, b=1.0):
    counts = dict(spiegelhalter=0, hl_external=0, logistic=0)
    for s in range(N_SETS):
        y, p = _binary(N, 1000 + s, a=a, b=b)
        counts["spiegelhalter"] += spiegelhalter_test(y, p).pvalue <= 0.05
        counts["hl_external"] += hosmer_lemeshow_test(y, p, df=10).pvalue <= 0.05
        counts["logistic"] += logistic_calibration(y, p).pvalue <= 0.05
    return counts


def test_size_of_the_tests_on_calibrated_predictions():
    counts = _rejections()
    for name in ("spiegelhalter", "logistic"):
        assert LOW <= counts[name] <= HIGH, (name, counts[name])
    # fixed (external) predictions: HL ~ chi2_g, slightly conservative (E (1 - E/n) >= sum
    # p (1 - p)); df = g - 2 would be anti-conservative here (documented).
    assert counts["hl_external"] <= HIGH, counts


def test_hosmer_lemeshow_df_conventions():
    """df = g - 2 is the reference on the development data (a model fitted on the same data);
    on fixed predictions (external validation) it rejects too often and df = g is right."""
    dev = ext_g2 = 0
    for s in range(N_SETS):
        rng = np.random.default_rng(5000 + s)
        x = rng.normal(size=N)
        y = (rng.random(N) < expit(-0.5 + x)).astype(int)
        # a logistic model fitted on these data (the maximum-likelihood fit of logistic
        # calibration on logit(p) = x, checked against scikit-learn above)
        fit = logistic_calibration(y, expit(x))
        p = expit(fit.intercept + fit.slope * x)
        dev += hosmer_lemeshow_test(y, p).pvalue <= 0.05
        ext_g2 += hosmer_lemeshow_test(y, expit(-0.5 + x)).pvalue <= 0.05
    assert LOW <= dev <= HIGH, dev
    assert ext_g2 > dev  # g - 2 on external predictions is anti-conservative


def test_power_against_a_wrong_slope():
    counts = _rejections(b=0.5)  # overconfident predictions (true slope 1/2)
    for name in ("spiegelhalter", "hl_external", "logistic"):
        assert counts[name] >= 0.8 * N_SETS, (name, counts[name])
