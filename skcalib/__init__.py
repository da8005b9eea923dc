"""skcalib: measure, test and repair the calibration of probabilistic models, the scikit-learn way."""

from . import datasets, distributions, kernels
from .metrics import MMCE, SKCE, UCME, CalibrationError, calibration_error, mmce, skce, ucme
from .scorers import get_scorer, get_scorer_names, make_calibration_scorer

__version__ = "0.1.0.dev0"

__all__ = [
    "calibration_error",
    "skce",
    "mmce",
    "ucme",
    "CalibrationError",
    "SKCE",
    "MMCE",
    "UCME",
    "make_calibration_scorer",
    "get_scorer",
    "get_scorer_names",
]
