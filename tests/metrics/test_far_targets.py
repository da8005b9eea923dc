"""Huge-but-finite targets and locations: densities, NLL, CRPS, ENCE/UCE and the report stay finite
or name the argument, without warnings."""

import math
import warnings

import numpy as np
import pytest

from skcalib import metrics
from skcalib.distributions import Laplace, Mixture, MultivariateNormal, Normal, Recalibrated
from skcalib.reporting import calibration_report


N4 = Normal(np.arange(4.0), np.ones(4))
ARR4 = np.array([[0, 1], [1, 1], [2, 1], [3, 1.0]])


def _recal(base):
    return Recalibrated(base, np.linspace(0, 1, 5), np.linspace(0, 1, 5) ** 1.2)


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
