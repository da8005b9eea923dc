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
  families and grids by held-out risk, fold-ensemble estimate on the test split.

Notions (``mode``) are those of :func:`skcalib.calibration_error`; see :mod:`._base`.
"""

import numpy as np

from .._validation import check_option, check_scalar_param
from ._base import MODES, calibration_risk
from ._binning import BinnedCalibrationEstimator
from ._cv import (DEFAULT_GAMMAS, CalibrationErrorCV, GridBoundaryWarning, default_candidates,
                  default_ridge_grids)
from ._kde import KDECalibrationEstimator
from ._kernel_ridge import KernelRidgeCalibrationEstimator
from ._parametric import TemperatureCalibrationEstimator, ZeroCalibrationEstimator


def paper_grids(n_train, mode="top_label"):
    """The hyperparameter grids of Gruber & Bach (App. B) for ``n_train`` training samples.

    The kernel-ridge grids include the paper's factor ``sqrt(n_train)``; the estimators then
    scale ``alpha`` by ``n^2`` (Kronecker) or ``n`` (two-step) internally. They go with the
    paper's fixed RBF width ``gamma = 1/2``; :class:`CalibrationErrorCV` searches the width by
    default (:func:`default_candidates`) and uses these grids with ``estimators_and_grids="paper"``.

    Parameters
    ----------
    n_train : int
        Training samples per fold (``>= 1``).
    mode : {"top_label", "canonical", "binary", "classwise", "auto"}, default="top_label"
        ``"canonical"`` has its own kernel-ridge grids; the scalar notions (every other mode)
        share the top-label ones.

    Returns
    -------
    dict
        ``{"binning": {"n_bins": [...]}, "kde": {"bandwidth": [...]},
        "kronecker": {"alpha": [...]}, "two_step": {"alpha": [...]}}``.
    """
    check_scalar_param(n_train, "n_train", min_val=1)
    check_option(mode, "mode", MODES)
    r = np.sqrt(n_train)
    if mode == "canonical":
        kron = r * 10.0 ** (9 - np.arange(1, 19))
        two = r * 10.0 ** (4.5 - 0.5 * np.arange(1, 19))
    else:
        kron = r * 10.0 ** (1 - 2 * np.arange(1, 10))
        two = r * 10.0 ** (-np.arange(1, 10, dtype=float))
    return {
        "binning": {"n_bins": [5 * i for i in range(1, 21)]},
        "kde": {"bandwidth": np.concatenate([np.logspace(-5, -1, 15),
                                             np.linspace(0.2, 1.0, 5)]).tolist()},
        "kronecker": {"alpha": kron.tolist()},
        "two_step": {"alpha": two.tolist()},
    }


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
]
