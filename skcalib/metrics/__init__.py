"""Calibration-error functions and their estimator counterparts."""

from ._binned import calibration_error
from ._estimators import MMCE, SKCE, UCME, CalibrationError
from ._kernel import mmce, skce, ucme

__all__ = ["calibration_error", "skce", "mmce", "ucme", "CalibrationError", "SKCE", "MMCE", "UCME"]
