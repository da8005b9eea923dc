"""Point predictions have no density: NLL refuses them, the report shows n/a."""

import math

import numpy as np
import pytest

from skcalib import metrics
from skcalib.distributions import Mixture, Normal, Recalibrated
from skcalib.reporting import calibration_report


def _recal(base):
    return Recalibrated(base, np.linspace(0, 1, 5), np.linspace(0, 1, 5) ** 1.2)


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
