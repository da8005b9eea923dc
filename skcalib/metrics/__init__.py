"""Calibration-error functions and their estimator counterparts."""

from ._binned import calibration_error
from ._estimators import MMCE, SKCE, UCME, CalibrationError
from ._kernel import mmce, skce, ucme
from ._local import klce, local_calibration_bias

__all__ = ["calibration_error", "skce", "mmce", "ucme", "klce", "local_calibration_bias",
           "CalibrationError", "SKCE", "MMCE", "UCME"]
