"""Every regression metric and test on every form of prediction (issue 23): Normal (the
reference), Empirical (draws of the same Normal) and Quantiles (the same Normal at 200 levels),
and interval bounds.

Each value on a new form is checked against something independent: the Normal it approximates,
within the Monte-Carlo error of ``m`` draws (Empirical) or the interpolation error between the
levels (Quantiles); the pinball loss of a Quantiles at its own levels equals the Normal's exactly.
Weights are checked against repeated rows. Where a family lacks a hook on this branch (Quantiles'
``log_pdf``, ``_moments``, Wasserstein distance), the test asserts the clear refusal and says so
in its skip reason, so that it runs once the hook exists.
"""

import numpy as np
import pytest
from scipy import stats as sps

import skcalib
from skcalib import stats
from skcalib.distributions import Distribution, Empirical, Normal, Quantiles
from skcalib.kernels import GaussianKernel, WassersteinKernel, tensor

N = 400
M = 4000                                     # draws of the Empirical
LEVELS = np.linspace(0.0025, 0.9975, 200)    # levels of the Quantiles (step 0.005)
DECILES = np.round(np.arange(1, 10) / 10, 1)


def _make(n, m, seed, spread=1.0, levels=LEVELS):
    """Targets from N(mu, s^2); the predictions N(mu, (spread s)^2) in three forms."""
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=n)
    s = rng.uniform(0.5, 2.0, size=n)
    y = mu + s * rng.normal(size=n)
    sp = spread * s
    forms = {
        "normal": Normal(mu, sp),
        "empirical": Empirical(mu[:, None] + sp[:, None] * rng.standard_normal((n, m))),
        "quantiles": Quantiles(mu[:, None] + sp[:, None] * sps.norm.ppf(levels)[None, :], levels),
    }
    return y, forms, rng.random(n)


@pytest.fixture(scope="module")
def calibrated():
    return _make(N, M, 0)


@pytest.fixture(scope="module")
def narrow():
    return _make(N, M, 1, spread=0.6)


def _has(cls, hook):
    return getattr(cls, hook, None) is not getattr(Distribution, hook, None) and hasattr(cls, hook)


# metric name -> (function of (y, dist, w), abs tolerance Empirical, abs tolerance Quantiles)
# Empirical: M = 4000 draws; a PIT value is off by at most 0.03 (DKW, probability 1 - 2e-3 per
# row), so a proportion of N = 400 rows by a few rows at most near the curves' steps; quantiles by
# O(s / sqrt(M)). Quantiles: the CDF is off by at most 0.0025 (the tails beyond the outer
# levels; between levels the error of the linear interpolation is smaller).
METRICS = {
    "crps": (lambda y, d, w: skcalib.crps(y, d, sample_weight=w), 0.005, 1e-3),
    "interval_coverage": (lambda y, d, w: skcalib.interval_coverage(y, d, sample_weight=w),
                          0.02, 0.005),
    "interval_coverage_error": (lambda y, d, w: skcalib.interval_coverage_error(
        y, d, sample_weight=w), 0.02, 0.005),
    "quantile_calibration_error": (lambda y, d, w: skcalib.quantile_calibration_error(
        y, d, sample_weight=w), 0.02, 0.005),
    "miscalibration_area": (lambda y, d, w: skcalib.miscalibration_area(y, d, sample_weight=w),
                            0.02, 0.005),
    "pinball_loss": (lambda y, d, w: skcalib.pinball_loss(y, d, levels=DECILES,
                                                          sample_weight=w), 0.003, 1e-3),
    "interval_score": (lambda y, d, w: skcalib.interval_score(y, d, level=0.9, sample_weight=w),
                       0.04, 5e-3),
    "ence": (lambda y, d, w: skcalib.ence(y, d, sample_weight=w), 0.04, 0.01),
    "uce": (lambda y, d, w: skcalib.uce(y, d, sample_weight=w), 0.05, 0.02),
}
HOOKS = {"ence": "_moments", "uce": "_moments"}


def _skip_without(form, name):
    hook = HOOKS.get(name)
    if form == "quantiles" and hook and not _has(Quantiles, hook):
        pytest.skip(f"Quantiles has no {hook} on this branch: {name} refuses it (tested below)")


@pytest.mark.parametrize("form", ["empirical", "quantiles"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("name", sorted(METRICS))
def test_metric_agrees_with_the_normal_it_approximates(calibrated, narrow, form, weighted, name):
    _skip_without(form, name)
    fn, tol_e, tol_q = METRICS[name]
    tol = tol_e if form == "empirical" else tol_q
    for y, forms, w in (calibrated, narrow):
        w = w if weighted else None
        ref = np.asarray(fn(y, forms["normal"], w))
        got = np.asarray(fn(y, forms[form], w))
        assert got.shape == ref.shape
        np.testing.assert_allclose(got, ref, atol=tol, rtol=0)
    # and it sees the miscalibration the Normal sees: the too narrow predictions score worse
    if name != "interval_coverage":
        assert fn(narrow[0], narrow[1][form], None) > fn(calibrated[0], calibrated[1][form], None)


def test_pit_agrees_with_the_normal(calibrated):
    y, forms, _ = calibrated
    u = skcalib.pit(y, forms["normal"])
    assert np.max(np.abs(skcalib.pit(y, forms["empirical"]) - u)) < 0.04
    assert np.max(np.abs(skcalib.pit(y, forms["quantiles"]) - u)) < 0.003


def test_pinball_loss_of_quantiles_at_its_levels_is_the_normal_exactly(calibrated):
    y, forms, w = calibrated
    assert skcalib.pinball_loss(y, forms["quantiles"], sample_weight=w) == pytest.approx(
        skcalib.pinball_loss(y, forms["normal"], levels=LEVELS, sample_weight=w), rel=1e-12)


@pytest.mark.parametrize("form", ["empirical", "quantiles"])
@pytest.mark.parametrize("name", sorted(METRICS))
def test_weights_equal_repeated_rows(form, name):
    """Integer weights give the value of the repeated rows (ENCE/UCE: the weighted bins are
    those of the repeated rows only with uniform bins, so strategy="uniform" there)."""
    _skip_without(form, name)
    y, forms, _ = _make(60, 50, 5)
    d = forms[form]
    k = np.arange(60) % 3 + 1
    rows = np.repeat(np.arange(60), k)
    repeated = d[rows]
    fn = METRICS[name][0]
    if name in ("ence", "uce"):
        f = getattr(skcalib, name)
        fn = lambda y, d, w: f(y, d, sample_weight=w, strategy="uniform", n_bins=5)  # noqa: E731
    np.testing.assert_allclose(np.asarray(fn(y, d, k)), np.asarray(fn(y[rows], repeated, None)),
                               rtol=1e-10, atol=1e-12)


def test_nll_refuses_empirical_naming_the_family_and_the_alternatives(calibrated):
    y, forms, _ = calibrated
    with pytest.raises(TypeError, match=r"Empirical.*crps.*kernel calibration errors"):
        skcalib.nll(y, forms["empirical"])


def test_nll_of_quantiles(calibrated):
    y, forms, _ = calibrated
    if not _has(Quantiles, "log_pdf"):
        with pytest.raises(TypeError, match=r"Quantiles.*no log_pdf.*crps"):
            skcalib.nll(y, forms["quantiles"])
        pytest.skip("Quantiles has no log_pdf on this branch: nll refuses it clearly (asserted)")
    # linear tails end the support: a target beyond them has density 0, and nll says so
    q = forms["quantiles"]
    inside = (q.cdf(y) > 0) & (q.cdf(y) < 1)
    assert not inside.all()
    with pytest.raises(ValueError, match=r"outside the support.*Quantiles.*crps"):
        skcalib.nll(y, q)
    # within the support the piecewise-constant density of 200 levels is close to the Normal's
    assert skcalib.nll(y[inside], q[inside]) == pytest.approx(
        skcalib.nll(y[inside], forms["normal"][inside]), abs=0.01)


def test_ence_uce_refuse_quantiles_without_moments(calibrated):
    if _has(Quantiles, "_moments"):
        pytest.skip("Quantiles has _moments: ENCE/UCE are in the agreement matrix")
    y, forms, _ = calibrated
    for f in (skcalib.ence, skcalib.uce):
        with pytest.raises(TypeError, match="Quantiles.*_moments"):
            f(y, forms["quantiles"])


def test_interval_metrics_of_bounds_equal_those_of_the_distribution(calibrated):
    """The central 80 % bounds of each form, as an (n, 2) array, give that form's interval
    score, width and coverage (the bounds path and the distribution path agree)."""
    y, forms, w = calibrated
    for d in forms.values():
        B = np.column_stack([d.ppf(0.1), d.ppf(0.9)])
        assert skcalib.interval_score(y, B, level=0.8, sample_weight=w) == pytest.approx(
            skcalib.interval_score(y, d, level=0.8, sample_weight=w), rel=1e-14)
        assert skcalib.interval_width(B, sample_weight=w) == pytest.approx(
            skcalib.interval_width(d, level=0.8, sample_weight=w), rel=1e-14)
        if not isinstance(d, Empirical):  # (atoms: the closed interval counts a draw at y)
            assert skcalib.interval_bounds_coverage(y, B) == pytest.approx(
                skcalib.interval_coverage(y, d, levels=0.8), abs=1.5 / len(y))


def test_interval_metric_errors_on_distributions(calibrated):
    y, forms, _ = calibrated
    with pytest.raises(TypeError, match="level is required"):
        skcalib.interval_score(y, forms["quantiles"])
    with pytest.raises(TypeError, match="level is required"):
        skcalib.interval_width(forms["empirical"])
    with pytest.raises(TypeError, match="interval_coverage"):
        skcalib.interval_bounds_coverage(y, forms["normal"])
    from skcalib.distributions import MultivariateNormal
    with pytest.raises(TypeError, match="univariate"):
        skcalib.interval_score(np.zeros((2, 2)), MultivariateNormal(np.zeros((2, 2)), 1.0),
                               level=0.9)


# ------------------------------------------------------------------------------------------
# the tests on every form


@pytest.mark.parametrize("form", ["normal", "empirical", "quantiles"])
def test_pit_and_coverage_tests_on_every_form(calibrated, narrow, form):
    y, forms, _ = calibrated
    yn, fn_, _ = narrow
    assert stats.pit_test(y, forms[form]).pvalue > 1e-3
    assert stats.pit_test(yn, fn_[form]).pvalue < 1e-6
    assert stats.coverage_test(y, forms[form], level=0.8).pvalue > 1e-3
    assert stats.coverage_test(yn, fn_[form], level=0.8, alternative="less").pvalue < 1e-6
    # the statistics agree with the Normal's (a few rows flip near the bounds)
    ref = stats.coverage_test(y, forms["normal"], level=0.8)
    assert abs(stats.coverage_test(y, forms[form], level=0.8).k - ref.k) <= 8
    assert stats.pit_test(y, forms[form]).statistic == pytest.approx(
        stats.pit_test(y, forms["normal"]).statistic, abs=0.02)


def test_interval_coverage_test_on_the_bounds_of_every_form(calibrated):
    y, forms, _ = calibrated
    for d in forms.values():
        bounds = {lv: np.column_stack([d.ppf((1 - lv) / 2), d.ppf((1 + lv) / 2)])
                  for lv in (0.5, 0.9)}
        res = stats.interval_coverage_test(y, bounds)
        assert list(res) == [0.5, 0.9] and all(r.pvalue > 1e-3 for r in res.values())


KERNEL = tensor(WassersteinKernel(1.0), GaussianKernel(1.0))


def _kernel_forms(spread):
    """Small batches for the exact double sums over draws (n^2 m^2 kernel values), and 39
    levels for the Quantiles (its exact sums hold (q + 2)^2 numbers per pair)."""
    return _make(80, 100, 7, spread=spread, levels=np.linspace(0.025, 0.975, 39))


@pytest.mark.parametrize("name", ["skce", "ucme"])
@pytest.mark.parametrize("form", ["empirical", "quantiles"])
def test_kernel_errors_agree_with_the_normal(name, form):
    if form == "quantiles" and not (_has(Quantiles, "_embedding") or _has(Quantiles,
                                                                            "_w2_squared")):
        pytest.skip("Quantiles has no Wasserstein distance on this branch, so no kernel on its "
                    "predictions: skce/ucme/skce_test not run on it")
    f = getattr(skcalib, name)
    y, forms, _ = _kernel_forms(0.4)  # clearly miscalibrated: values well above the noise

    def kw(d):  # the UCME's test locations: the same rows and targets in each form
        if name == "skce":
            return {"kernel": KERNEL}
        return {"kernel": KERNEL, "test_predictions": d[:10], "test_targets": y[:10] + 0.1}

    ref = f(y, forms["normal"], **kw(forms["normal"]))
    got = f(y, forms[form], **kw(forms[form]))
    assert ref > 0
    assert got == pytest.approx(ref, rel=0.15)


@pytest.mark.parametrize("form", ["empirical", "quantiles"])
def test_skce_test_on_every_form(form):
    if form == "quantiles" and not (_has(Quantiles, "_embedding") or _has(Quantiles,
                                                                            "_w2_squared")):
        pytest.skip("Quantiles has no Wasserstein distance on this branch")
    y, forms, _ = _kernel_forms(1.0)
    assert stats.skce_test(y, forms[form], kernel=KERNEL, random_state=0).pvalue > 1e-3
    y, forms, _ = _kernel_forms(0.4)
    assert stats.skce_test(y, forms[form], kernel=KERNEL, random_state=0).pvalue < 0.01
