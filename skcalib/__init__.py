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
    MMCE,
    SKCE,
    UCME,
    CalibrationError,
    calibration_error,
    klce,
    local_calibration_bias,
    mmce,
    skce,
    ucme,
)
from .scorers import get_scorer, get_scorer_names, make_calibration_scorer

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
    "CalibrationError",
    "SKCE",
    "MMCE",
    "UCME",
    "make_calibration_scorer",
    "get_scorer",
    "get_scorer_names",
    *_SUBMODULES,
]


def __getattr__(name):
    if name in _SUBMODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module  # later accesses skip this function
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
