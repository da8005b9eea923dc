"""skcalib: measure, test and repair the calibration of probabilistic models, the scikit-learn way.

The calibration errors and scorers are imported with the package. The submodules (listed in
``skcalib.__all__``) load on first attribute access, so that ``import skcalib`` stays fast and
``skcalib.recalibration.TemperatureScaling`` still works without a separate import::

    >>> import skcalib
    >>> skcalib.recalibration.TemperatureScaling()
    TemperatureScaling()
    >>> "estimation" in dir(skcalib)
    True
"""

import importlib

from .metrics import (
    CalibrationError,
    MMCE,
    SKCE,
    UCME,
    brier_score,
    calibration_error,
    corp_decomposition,
    crps,
    ence,
    integrated_calibration_index,
    interval_bounds_coverage,
    interval_coverage,
    interval_coverage_error,
    interval_score,
    interval_width,
    klce,
    local_calibration_bias,
    log_score,
    miscalibration_area,
    mmce,
    murphy_decomposition,
    nll,
    pit,
    quantile_calibration_curve,
    quantile_calibration_error,
    reliability_curve,
    skce,
    smooth_ece,
    smooth_reliability_curve,
    uce,
    ucme,
    pinball_loss,
)
from .scorers import get_scorer, get_scorer_names, make_calibration_scorer
from ._predictions import MultiQuantileRegressor

__version__ = "0.1.0.dev0"

#: Public submodules, imported on first access (module-level ``__getattr__``, PEP 562).
_SUBMODULES = (
    "datasets",
    "distributions",
    "estimation",
    "kernels",
    "metrics",
    "plotting",
    "recalibration",
    "reporting",
    "scorers",
    "stats",
)

__all__ = [
    "calibration_error",
    "skce",
    "mmce",
    "ucme",
    "klce",
    "local_calibration_bias",
    "pit",
    "crps",
    "interval_coverage",
    "interval_coverage_error",
    "interval_score",
    "interval_width",
    "interval_bounds_coverage",
    "quantile_calibration_curve",
    "quantile_calibration_error",
    "miscalibration_area",
    "ence",
    "uce",
    "nll",
    "brier_score",
    "log_score",
    "murphy_decomposition",
    "corp_decomposition",
    "reliability_curve",
    "smooth_ece",
    "smooth_reliability_curve",
    "integrated_calibration_index",
    "CalibrationError",
    "SKCE",
    "MMCE",
    "UCME",
    "make_calibration_scorer",
    "get_scorer",
    "get_scorer_names",
    "calibration_report",
    "CalibrationReport",
    "pinball_loss",
    "MultiQuantileRegressor",
    *_SUBMODULES,
]


#: Public functions of higher layers, imported on first access like the submodules.
_LAZY_ATTRIBUTES = {"calibration_report": "reporting", "CalibrationReport": "reporting"}


def __getattr__(name):
    if name in _LAZY_ATTRIBUTES:
        module = importlib.import_module(f"{__name__}.{_LAZY_ATTRIBUTES[name]}")
        value = getattr(module, name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module  # later accesses skip this function
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
