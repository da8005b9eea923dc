"""Calibration-error functions and their estimator counterparts."""

from ._binned import calibration_error
from ._estimators import MMCE, SKCE, UCME, CalibrationError
from ._kernel import mmce, skce, ucme
from ._intervals import interval_bounds_coverage, interval_score, interval_width
from ._pinball import pinball_loss
from ._local import klce, local_calibration_bias
from ._regression import (
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
from ._reliability import ReliabilityCurve, reliability_curve
from ._scores import (
    CORPCurve,
    CORPDecomposition,
    MurphyDecomposition,
    brier_score,
    corp_decomposition,
    log_score,
    murphy_decomposition,
)
from ._smooth import (
    ICIResult,
    SmoothReliabilityCurve,
    integrated_calibration_index,
    smooth_ece,
    smooth_reliability_curve,
)

__all__ = [
    # binned and kernel calibration errors
    "calibration_error", "skce", "mmce", "ucme",
    # local calibration on audit features
    "klce", "local_calibration_bias",
    # reliability curves, smooth and lowess-based errors
    "reliability_curve", "ReliabilityCurve", "smooth_ece", "smooth_reliability_curve",
    "SmoothReliabilityCurve", "integrated_calibration_index", "ICIResult",
    # proper scores and their decompositions
    "brier_score", "log_score", "murphy_decomposition", "corp_decomposition",
    "MurphyDecomposition", "CORPDecomposition", "CORPCurve",
    # regression: predictive distributions
    "pit", "crps", "interval_coverage", "interval_coverage_error", "quantile_calibration_curve",
    "quantile_calibration_error", "miscalibration_area", "ence", "uce", "nll",
    # regression: prediction intervals given by their bounds
    "interval_score", "interval_width", "interval_bounds_coverage",
    # regression: predicted quantiles
    "pinball_loss",
    # estimators
    "CalibrationError", "SKCE", "MMCE", "UCME",
]
