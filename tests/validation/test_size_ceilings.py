"""Size arguments have ceilings, refused before any work is done: the quantiles, variance bins and
sample sizes of the regression metrics and displays, ``robust_iters`` of the ICI, ``n_bins`` of
the binned estimator."""

import numpy as np
import pytest

import skcalib
from skcalib import metrics
from skcalib.distributions import (
    Laplace,
    Mixture,
    MultivariateNormal,
    Normal,
    Recalibrated,
    concatenate,
)


N4 = Normal(np.arange(4.0), np.ones(4))


def _recal(base):
    return Recalibrated(base, np.linspace(0, 1, 5), np.linspace(0, 1, 5) ** 1.2)


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


def test_size_arguments_of_the_sweep_have_ceilings():
    from skcalib.estimation import BinnedCalibrationEstimator
    rng = np.random.default_rng(0)
    p = rng.random(100)
    y = (rng.random(100) < p).astype(int)
    with pytest.raises(ValueError, match="robust_iters must be <= 100"):
        skcalib.integrated_calibration_index(y, p, robust_iters=10**9)  # hung
    with pytest.raises(ValueError, match=r"n_bins must be .*1000000"):
        BinnedCalibrationEstimator(n_bins=10**12).fit(np.c_[1 - p, p], y)  # 7 TiB
