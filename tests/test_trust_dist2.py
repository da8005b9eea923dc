"""Issue 21 sweep findings on regression inputs, distributions and kernels: dates, durations and
booleans are no targets (B3); huge-but-finite targets give finite scores or a ValueError naming
y_true/y_pred, never inf with an overflow warning (B1); point predictions have no NLL (B2); size
hyper-parameters have ceilings (A4); kernels called directly name X/Y (A5); concatenate names
distributions (A6)."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from skcalib import metrics, stats
from skcalib.distributions import (
    Laplace,
    Mixture,
    MultivariateNormal,
    Normal,
    Recalibrated,
    as_distribution,
    concatenate,
)
from skcalib.kernels import (
    DeltaKernel,
    ExponentialKernel,
    GaussianKernel,
    median_heuristic,
    pairwise_distances,
)
from skcalib.reporting import calibration_report

N4 = Normal(np.arange(4.0), np.ones(4))
ARR4 = np.array([[0, 1], [1, 1], [2, 1], [3, 1.0]])


def _recal(base):
    return Recalibrated(base, np.linspace(0, 1, 5), np.linspace(0, 1, 5) ** 1.2)


# --------------------------------------------------------------------------------------------
# B3: dates, durations and booleans as targets

TARGET_FUNCS = [
    lambda y, p: metrics.crps(y, p),
    lambda y, p: metrics.nll(y, p),
    lambda y, p: metrics.pit(y, p),
    lambda y, p: metrics.ence(y, p, n_bins=2),
    lambda y, p: metrics.uce(y, p, n_bins=2),
    lambda y, p: metrics.interval_coverage(y, p),
    lambda y, p: metrics.quantile_calibration_error(y, p),
    lambda y, p: metrics.miscalibration_area(y, p),
    lambda y, p: stats.pit_test(y, p),
]

BAD_TARGETS = {
    "dates": pd.Series(pd.date_range("2020", periods=4)),
    "date array": np.array(pd.date_range("2020", periods=4)),
    "durations": pd.Series(pd.timedelta_range("1D", periods=4)),
    "booleans": np.array([True, False, True, True]),
}


@pytest.mark.parametrize("kind", list(BAD_TARGETS))
@pytest.mark.parametrize("func", TARGET_FUNCS)
@pytest.mark.parametrize("pred", ["array", "dist"])
def test_dates_durations_booleans_are_not_targets(kind, func, pred):
    p = ARR4 if pred == "array" else N4
    with pytest.raises(TypeError, match="y_true must contain real numbers"):
        func(BAD_TARGETS[kind], p)


def test_dates_refused_by_report_and_skce():
    with pytest.raises(TypeError, match="^y must contain real numbers.*dates"):
        calibration_report(N4, y=BAD_TARGETS["dates"])
    with pytest.raises(TypeError, match="y_true must contain real numbers.*dates"):
        stats.skce_test(BAD_TARGETS["dates"], N4)


@pytest.mark.parametrize("family", [Normal, Laplace])
@pytest.mark.parametrize("arg", ["loc", "scale"])
def test_dates_refused_as_parameters(family, arg):
    dates = pd.date_range("2020", periods=3) if arg == "loc" else pd.timedelta_range("1s", periods=3)
    kwargs = {"loc": np.zeros(3), "scale": np.ones(3), arg: dates}
    with pytest.raises(TypeError, match=f"^{arg} must contain real numbers.*dates or durations"):
        family(**kwargs)


# --------------------------------------------------------------------------------------------
# B1: huge-but-finite targets and locations


def _no_warnings(f):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return f()


def test_log_pdf_of_far_targets_is_minus_inf_without_warnings():
    y = np.full(4, 1e300)
    for dist in (N4, Laplace(np.arange(4.0), np.ones(4)), _recal(N4),
                 Mixture(np.full((4, 2), 0.5), [N4, Normal(np.zeros(4), np.ones(4))])):
        lp = _no_warnings(lambda: dist.log_pdf(y))
        assert np.all(lp < -1e299)
    mvn = MultivariateNormal(np.zeros((4, 2)), np.tile(np.eye(2), (4, 1, 1)))
    assert np.all(_no_warnings(lambda: mvn.log_pdf(np.full((4, 2), 1e300))) == -np.inf)
    assert np.all(_no_warnings(lambda: mvn.log_pdf(np.full((4, 2), 3.0))) > -11)


def test_opposite_huge_target_and_location_do_not_overflow():
    # y - loc = 2e308 overflows, but the standardised residual is 2
    d = Normal(np.full(3, -1e308), np.full(3, 1e308))
    lp = _no_warnings(lambda: d.log_pdf(np.full(3, 1e308)))
    np.testing.assert_allclose(lp, -2.0 - math.log(1e308) - 0.5 * math.log(2 * math.pi))
    np.testing.assert_allclose(_no_warnings(lambda: d.cdf(np.full(3, 1e308))), 0.97725, atol=1e-5)
    lap = Laplace(np.full(3, -1e308), np.full(3, 1e308))
    np.testing.assert_allclose(_no_warnings(lambda: lap.cdf(np.full(3, 1e308))),
                               1 - 0.5 * math.exp(-2.0))
    np.testing.assert_allclose(_no_warnings(lambda: lap.log_pdf(np.full(3, 1e308))),
                               -2.0 - math.log(2e308))
    mvn = MultivariateNormal(np.full((3, 2), -1e200), np.tile(np.eye(2) * 1e300, (3, 1, 1)))
    lp = _no_warnings(lambda: mvn.log_pdf(np.full((3, 2), 1e200)))
    np.testing.assert_allclose(lp, -0.5 * (2 * 4e100 + 2 * math.log(1e300) + 2 * math.log(2 * math.pi)))


def test_nll_beyond_float_range_names_arguments():
    y = np.array([0.0, 1, 2, 1e300])
    for pred in (N4, ARR4, _recal(N4), Mixture(np.full((4, 2), 0.5), [N4, N4])):
        with pytest.raises(ValueError, match="NLL of y_true under y_pred is not a finite number: at row 3"):
            _no_warnings(lambda: metrics.nll(y, pred))
    # an ordinary far target is fine
    assert math.isfinite(metrics.nll(np.array([0.0, 1, 2, 1e10]), N4))


def test_nll_laplace_far_target_is_finite():
    # |z| = 1e300 is representable for the Laplace (no square): NLL about 2.5e299
    v = _no_warnings(lambda: metrics.nll(np.array([0.0, 1, 2, 1e300]),
                                         Laplace(np.arange(4.0), np.ones(4))))
    assert v == pytest.approx(2.5e299, rel=1e-6)


def test_crps_of_far_targets_finite_without_warnings():
    y = np.array([0.0, 1, 2, 1e300])
    for pred in (N4, ARR4, Mixture(np.full((4, 2), 0.5), [N4, N4])):
        v = _no_warnings(lambda: metrics.crps(y, pred))
        assert v == pytest.approx(2.5e299, rel=1e-6)
    # genuinely beyond the float range: 2e308 from the prediction
    with pytest.raises(ValueError, match="CRPS of y_true under y_pred exceeds the float range"):
        _no_warnings(lambda: metrics.crps(np.full(2, 1e308), Normal(np.full(2, -1e308), [1.0, 1])))


def test_ence_uce_far_targets_and_locations():
    y = np.array([0.0, 1, 2, 1e300])
    # one bin (equal scales): RMSE = 1e300 / 2, RMV = 1
    v = _no_warnings(lambda: metrics.ence(y, N4, n_bins=2))
    assert v == pytest.approx(5e299, rel=1e-6)
    # two bins by scale: the far target's bin has RMSE 1e300 / sqrt(2), RMV 2
    d = Normal(np.arange(4.0), [1.0, 1.0, 2.0, 2.0])
    v = _no_warnings(lambda: metrics.ence(y, d, n_bins=2))
    assert v == pytest.approx((1e300 / math.sqrt(2) / 2 + 1.0) / 2, rel=1e-6)
    v = _no_warnings(lambda: metrics.ence(np.arange(4.0), Normal(np.full(4, 1e300), np.ones(4)),
                                          n_bins=2))
    assert v == pytest.approx(1e300, rel=1e-6)
    assert _no_warnings(lambda: metrics.ence(np.zeros(4), Normal(np.zeros(4), np.full(4, 1e300)),
                                             n_bins=2)) == pytest.approx(1.0)
    for pred in (N4, Normal(np.full(4, 1e300), np.ones(4))):
        with pytest.raises(ValueError, match="uce: the value.*exceeds the float range"):
            _no_warnings(lambda: metrics.uce(y if pred is N4 else np.arange(4.0), pred, n_bins=2))
    # ordinary values unchanged
    assert metrics.ence([1.0, -1.0, 4.0, -4.0], [[0, 1], [0, 1], [0, 2], [0, 2]],
                        n_bins=2) == pytest.approx(0.5)
    assert metrics.uce([1.0, -1.0, 4.0, -4.0], [[0, 1], [0, 1], [0, 2], [0, 2]],
                       n_bins=2) == pytest.approx(6.0)


def test_report_never_prints_inf():
    y = np.random.default_rng(0).normal(size=30)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = calibration_report(Normal(np.full(30, 1e300), np.ones(30)), y=y, n_resamples=50)
    text = str(r)
    assert "inf" not in text.replace("information", "")
    assert "n/a: the NLL of y_true under y_pred is not a finite number" in text
    crps_row = r.sections[1]["CRPS"]
    assert math.isfinite(crps_row.value) and math.isfinite(crps_row.lower)


# --------------------------------------------------------------------------------------------
# B2: point predictions have no density


@pytest.mark.parametrize("pred", [
    Normal([0.0, 1.0], [0.0, 1.0]),
    np.array([[0.0, 0.0], [1.0, 1.0]]),
    Mixture(np.full((2, 2), 0.5), [Normal([0.0, 1.0], [0.0, 1.0]), Normal([0.0, 1.0], 1.0)]),
    _recal(Normal([0.0, 1.0], [0.0, 1.0])),
])
def test_nll_refuses_point_predictions(pred):
    with pytest.raises(ValueError, match="y_pred has point predictions.*row 0"):
        metrics.nll(np.array([0.0, 1.0]), pred)
    # the other scores take them
    assert np.all(np.isfinite(metrics.crps(np.array([0.5, 1.0]), pred, reduction="none")))


def test_nll_mixture_with_zero_weight_point_component_is_fine():
    mix = Mixture(np.array([[1.0, 0.0], [1.0, 0.0]]),
                  [Normal([0.0, 1.0], 1.0), Normal([0.0, 1.0], 0.0)])
    assert math.isfinite(metrics.nll(np.array([0.0, 1.0]), mix))


def test_report_shows_nll_of_point_predictions_as_na():
    y = np.random.default_rng(1).normal(size=30)
    r = calibration_report(Normal(y, np.r_[0.0, np.ones(29)]), y=y, n_resamples=50)
    row = r.sections[1]["NLL"]
    assert row.value is None and row.note.startswith("n/a: y_pred has point predictions")


# --------------------------------------------------------------------------------------------
# A4: size ceilings


@pytest.mark.parametrize("value", [2**63, 10**12, 10**6 + 1])
@pytest.mark.parametrize("func", [
    lambda q: metrics.quantile_calibration_curve(np.zeros(4), N4, quantiles=q),
    lambda q: metrics.quantile_calibration_error(np.zeros(4), N4, quantiles=q),
    lambda q: metrics.miscalibration_area(np.zeros(4), N4, quantiles=q),
])
def test_quantiles_ceiling(func, value):
    with pytest.raises(ValueError, match=r"^quantiles must be <= 1000000"):
        func(value)


def test_quantiles_ceiling_display():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from skcalib.plotting import QuantileCalibrationDisplay

    with pytest.raises(ValueError, match=r"^quantiles must be <= 1000000"):
        QuantileCalibrationDisplay.from_predictions(np.zeros(4), N4, quantiles=2**63)


@pytest.mark.parametrize("value", [2**63, 10**12, 1e12])
@pytest.mark.parametrize("func", [metrics.ence, metrics.uce])
def test_variance_bins_ceiling(func, value):
    with pytest.raises(ValueError, match=r"^n_bins must be"):
        func(np.zeros(4), N4, n_bins=value)


@pytest.mark.parametrize("dist", [
    N4, Laplace(np.zeros(4), np.ones(4)), MultivariateNormal(np.zeros((4, 2)), np.tile(np.eye(2), (4, 1, 1))),
    Mixture(np.full((4, 2), 0.5), [N4, N4]), _recal(N4),
])
def test_sample_size_ceiling(dist):
    for size in (10**9, 2**63, 1e12):
        with pytest.raises(ValueError, match=r"^size must be an integer in \[1, 10000000\]"):
            dist.sample(size=size)
    big = concatenate([dist] * 250)  # 1000 rows: 10**6 draws each would need > 4 GiB
    with pytest.raises(ValueError, match=r"^size=1000000 would need .* GiB for the draws"):
        big.sample(size=10**6)
    with pytest.raises(TypeError, match="size must be an integer"):
        dist.sample(size=2.5)
    assert dist.sample(size=3, random_state=0).shape[:2] == (3, 4)


# --------------------------------------------------------------------------------------------
# A5: kernels called directly

X = np.random.default_rng(0).normal(size=(6, 2))


@pytest.mark.parametrize("bad", [0.5, np.float64(0.5), np.array(0.5), {"a": 1}, {1, 2}, "abc"])
@pytest.mark.parametrize("call", [
    lambda a: GaussianKernel(1.0)(a),
    lambda a: ExponentialKernel()(a),
    lambda a: GaussianKernel()(a),
    lambda a: median_heuristic(a),
    lambda a: pairwise_distances(a),
])
def test_kernels_refuse_non_arrays_naming_x(call, bad):
    with pytest.raises(TypeError, match="^X must"):
        call(bad)


def test_kernels_name_y():
    for bad in (0.5, {"a": 1}):
        with pytest.raises(TypeError, match="^Y must"):
            GaussianKernel(1.0)(X, bad)
        with pytest.raises(TypeError, match="^Y must"):
            pairwise_distances(X, bad)
        with pytest.raises((TypeError, ValueError), match="^Y must"):
            DeltaKernel()(np.arange(3), bad)


@pytest.mark.parametrize("call", [
    lambda a: GaussianKernel(1.0)(a),
    lambda a: median_heuristic(a),
    lambda a: pairwise_distances(a),
])
def test_kernels_refuse_numeric_strings_and_empty(call):
    with pytest.raises((TypeError, ValueError), match="X"):
        call(X.astype(str))
    with pytest.raises(ValueError, match="X"):
        call(np.empty((0, 2)))


def test_delta_kernel_empty_and_scalar():
    with pytest.raises(ValueError, match="^X is empty"):
        DeltaKernel()(np.array([]))
    with pytest.raises(ValueError, match=r"^X must be 1-D or 2-D; got shape \(\)"):
        DeltaKernel()(3)
    with pytest.raises(ValueError, match=r"^X must be 1-D or 2-D; got shape \(\)"):
        DeltaKernel()({"a": 1})
    np.testing.assert_array_equal(DeltaKernel()(np.array([0, 1, 0])),
                                  [[1, 0, 1], [0, 1, 0], [1, 0, 1]])


# --------------------------------------------------------------------------------------------
# A6: concatenate


@pytest.mark.parametrize("bad, what", [
    (None, "got NoneType"), (5, "got int"), ("ab", "got str"), ({"a": N4}, "got dict"),
    ([], "empty sequence"), ([N4, 3], "item 1 is int"), (N4, "a single Normal"),
])
def test_concatenate_names_distributions(bad, what):
    with pytest.raises(TypeError, match=f"^distributions .*{what}"):
        concatenate(bad)


def test_concatenate_mixed_families_and_generators():
    with pytest.raises(TypeError, match="^distributions must all be of one family; got Normal "
                                        "and Laplace"):
        concatenate([N4, Laplace(np.zeros(4), np.ones(4))])
    assert len(concatenate(d for d in (N4, N4))) == 8


def test_as_distribution_still_accepts_arrays():
    d, from_array = as_distribution(ARR4)
    assert from_array and isinstance(d, Normal)
