"""Hypothesis tests of calibration, with p-values and confidence intervals.

Null hypothesis everywhere: *the model is calibrated*. A small p-value is evidence of
miscalibration; a large one says the data do not show it.

* :func:`skce_test` -- tests on the squared kernel calibration error (block, bootstrap, spectral,
  Gamma and distribution-free), for classifiers and predictive distributions;
* :func:`skce_ci` -- confidence intervals for the SKCE;
* :func:`ucme_test` -- the calibration-mean-embedding (Hotelling) test;
* :func:`klce_test` -- local calibration on audit features (the KLCE test);
* :func:`spiegelhalter_test`, :func:`hosmer_lemeshow_test`, :func:`logistic_calibration` -- the
  classical tests of clinical prediction (binary; multiclass one-vs-rest with Holm's correction);
* :func:`pit_test` -- uniformity of the PIT values of predictive distributions (KS, CvM, AD);
* :func:`consistency_test` -- consistency resampling and the conditional Monte-Carlo test for any
  metric (ECE included);
* :func:`accuracy_test`, :func:`coverage_test` -- binomial tests of the accuracy against the mean
  confidence and of the coverage of central prediction intervals against their level;
* :func:`interval_coverage_test` -- the binomial test of the coverage of intervals given by their
  bounds (conformal or quantile-regression intervals), one level or a dict of levels;
* :func:`pit_mean_test` -- the z test of the mean PIT (1/2 under calibration);
* :func:`mean_score_ci` -- the normal interval of a mean score (the mean CRPS, say);
* :func:`adjust_pvalues` -- Holm's and Bonferroni's adjustments of several tests' p-values.

Results are :class:`CalibrationTestResult` objects, in the style of SciPy's. Where the method has a
standard error they carry ``zscore = estimate / standard_error``, which keeps ranking models once
their p-values reach the smallest value a test can give. Resampling sizes are bounded
(``n_resamples`` at most ``10**7``) and refused before any work.
"""

from ._clinical import (
    HosmerLemeshowResult,
    LogisticCalibrationResult,
    OneVsRestResult,
    hosmer_lemeshow_test,
    logistic_calibration,
    spiegelhalter_test,
)
from ._consistency import consistency_test
from ._ecce import ECCETestResult, ecce_test
from ._elementary import (
    ProportionTestResult,
    ScoreInterval,
    accuracy_test,
    coverage_test,
    interval_coverage_test,
    mean_score_ci,
    pit_mean_test,
)
from ._multiple import adjust_pvalues
from ._klce import klce_test
from ._pit import pit_test
from ._result import CalibrationTestResult, ConfidenceInterval
from ._skce import SKCEInterval, skce_ci, skce_test
from ._ucme import ucme_test

__all__ = [
    "skce_test",
    "skce_ci",
    "ucme_test",
    "consistency_test",
    "klce_test",
    "ecce_test",
    "ECCETestResult",
    "pit_test",
    "pit_mean_test",
    "accuracy_test",
    "coverage_test",
    "mean_score_ci",
    "adjust_pvalues",
    "spiegelhalter_test",
    "hosmer_lemeshow_test",
    "logistic_calibration",
    "LogisticCalibrationResult",
    "HosmerLemeshowResult",
    "OneVsRestResult",
    "CalibrationTestResult",
    "ConfidenceInterval",
    "SKCEInterval",
    "ProportionTestResult",
    "ScoreInterval",
    "interval_coverage_test",
]
