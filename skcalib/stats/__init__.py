"""Hypothesis tests of calibration, with p-values and confidence intervals.

Null hypothesis everywhere: *the model is calibrated*. A small p-value is evidence of
miscalibration; a large one says the data do not show it.

* :func:`skce_test` -- tests on the squared kernel calibration error (block, bootstrap, spectral,
  Gamma and distribution-free), for classifiers and predictive distributions;
* :func:`skce_ci` -- confidence intervals for the SKCE;
* :func:`ucme_test` -- the calibration-mean-embedding (Hotelling) test;
* :func:`consistency_test` -- consistency resampling and the conditional Monte-Carlo test for any
  metric (ECE included).

Results are :class:`CalibrationTestResult` objects, in the style of SciPy's.
"""

from ._result import CalibrationTestResult, ConfidenceInterval
from ._skce import SKCEInterval, skce_ci, skce_test

__all__ = [
    "skce_test",
    "skce_ci",
    "CalibrationTestResult",
    "ConfidenceInterval",
    "SKCEInterval",
]
