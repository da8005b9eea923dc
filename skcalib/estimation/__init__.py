"""Estimating squared calibration errors as supervised learning (Gruber & Bach).

A *calibration estimation function* ``h(p, p')`` estimates ``<p - pi(p), p' - pi(p')>``, with
``pi(p) = P(Y | f(X) = p)``; the squared calibration error is the mean of ``h(p, p)``. Every
estimator here is a scikit-learn estimator whose ``X`` is the predicted probabilities and ``y``
the labels: ``fit`` learns ``h`` on training data, :func:`calibration_risk` (and ``score``, its
negation) measures it on held-out data by the unbiased U-statistic of the pair targets, and
``calibration_error`` (the mean of ``transform``) is the estimate on test data.

* :class:`BinnedCalibrationEstimator` -- ``h_bin`` (and Kumar et al.'s debiased variant);
* :class:`KDECalibrationEstimator` -- ``h_kde`` with Beta/Dirichlet kernels;
* :class:`KernelRidgeCalibrationEstimator` -- ``h_kkr`` and ``h_ukkr``, exact or Nystrom;
* :class:`TemperatureCalibrationEstimator` -- the plug-in of temperature scaling (the paper's
  simulation family), and :class:`ZeroCalibrationEstimator` (``h = 0``);
* :class:`CalibrationErrorCV` -- the paper's pipeline: split, cross-validated choice among
  families and grids by held-out risk, then a debiased cross-fitted estimate (one-step by
  default) with a standard error whose interval covers the truth (or the paper's plug-in);
* :func:`cross_fit_calibration_error` -- the debiased estimates of one estimation function,
  cross-fitted, as a :class:`CalibrationErrorResult`.

Notions (``mode``) are those of :func:`skcalib.calibration_error`; see :mod:`._base`.
"""

from ._base import ESTIMATES, MODES, calibration_risk
from ._binning import BinnedCalibrationEstimator
from ._cv import (DEFAULT_GAMMAS, CalibrationErrorCV, GridBoundaryWarning, default_candidates,
                  default_ridge_grids)
from ._debiased import CalibrationErrorResult, cross_fit_calibration_error
from ._grids import paper_grids
from ._kde import KDECalibrationEstimator
from ._kernel_ridge import KernelRidgeCalibrationEstimator
from ._parametric import TemperatureCalibrationEstimator, ZeroCalibrationEstimator

# The scorer of skcalib.get_scorer("neg_calibration_risk") (not public API: not in __all__).
from ._base import RISK_SCORER


__all__ = [
    "calibration_risk",
    "BinnedCalibrationEstimator",
    "KDECalibrationEstimator",
    "KernelRidgeCalibrationEstimator",
    "TemperatureCalibrationEstimator",
    "ZeroCalibrationEstimator",
    "CalibrationErrorCV",
    "GridBoundaryWarning",
    "default_candidates",
    "default_ridge_grids",
    "DEFAULT_GAMMAS",
    "paper_grids",
    "MODES",
    "ESTIMATES",
    "CalibrationErrorResult",
    "cross_fit_calibration_error",
]
