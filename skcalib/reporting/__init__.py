"""One call for the main calibration numbers of a model, with their uncertainty and a verdict.

:func:`calibration_report` takes a fitted model and its inputs, or its predictions, and the
targets, and returns a :class:`CalibrationReport`: sections of numbers (each with its interval
and p-value where one exists), each computed by the function of :mod:`skcalib.metrics` or
:mod:`skcalib.stats` that defines it, and a verdict sentence per section written from the tests.
The report prints as an aligned table (``str``), renders in notebooks (``_repr_html_``), converts
to a dictionary or a pandas DataFrame and draws its figures (``plot``) with the Displays of
:mod:`skcalib.plotting`.

Null hypothesis of every test: *the model is calibrated*. A small p-value is evidence of
miscalibration; a large one means that the data do not show it, which is not proof of
calibration.

The package, one module per part (private modules; the public names are those below):

* ``_build`` -- :func:`calibration_report`: the arguments checked, the estimator or predictions
  resolved into predictions and a task;
* ``_classification`` -- the sections of a classifier's report (accuracy, binned and smooth
  errors, proper scores, logistic calibration);
* ``_regression`` -- the sections of a regressor's report (proper scores, PIT, coverage, quantile
  calibration);
* ``_kernel_section`` -- the SKCE section of both (and the block estimator above
  :data:`LARGE_N` samples);
* ``_verdicts`` -- the prose: each section's verdict and the overall one (Holm);
* ``_report`` -- :class:`CalibrationReport`, :class:`ReportSection`, :class:`ReportRow` and their
  renderings (text, HTML, dict, DataFrame);
* ``_figures`` -- the figures of :meth:`CalibrationReport.plot`;
* ``_format`` -- how numbers, p-values and percentages are written.

Every statistic comes from a public function of :mod:`skcalib.metrics` or :mod:`skcalib.stats`;
the package computes none of its own.
"""

from ._build import calibration_report
from ._report import CalibrationReport, ReportRow, ReportSection

# the report's settings, readable as ``skcalib.reporting.LARGE_N`` etc. as before the package
# (to change one in a test, patch the module that reads it: ``_kernel_section.LARGE_N``)
from ._classification import SMALL_BIN  # noqa: F401
from ._kernel_section import LARGE_N, MIN_SAMPLES  # noqa: F401
from ._regression import COVERAGE_LEVELS  # noqa: F401
from ._report import FOOTER, GLOSSARY  # noqa: F401

__all__ = ["calibration_report", "CalibrationReport", "ReportSection", "ReportRow"]
