"""Displays in scikit-learn's style: ``from_predictions``, ``from_estimator``, ``plot(ax=...)``.

Every Display stores the data of its plot (computed by :mod:`skcalib.metrics`), draws them with
``plot`` and keeps the artists it made, so that several models can share one axis (pass the same
``ax``) and tests can check what was drawn. Matplotlib is an optional dependency
(``pip install 'skcalib[plot]'``), imported only when a Display draws.

* :class:`ReliabilityDisplay`, :class:`SmoothReliabilityDisplay` -- a classifier's binned
  (binary, top-label, class-wise; bin counts; Clopper-Pearson or consistency bands) and smooth
  reliability diagrams.
* :class:`LocalCalibrationBiasDisplay` -- local calibration bias against an audit feature.
* :class:`PITHistogramDisplay`, :class:`QuantileCalibrationDisplay`,
  :class:`IntervalCoverageDisplay` -- a regressor's PIT histogram, quantile-calibration curve and
  interval coverage.

The keyword arguments a Display passes to matplotlib (``**kwargs``, ``line_kwargs``,
``hist_kwargs``, ...) take matplotlib's aliases: ``lw=2``, ``ls="--"`` or ``c="red"`` replace
the Display's default ``linewidth``, ``linestyle`` or ``color``; an alias given together with its
long name is a ``TypeError`` naming both.
"""

from ._classification import ReliabilityDisplay, SmoothReliabilityDisplay
from ._local import LocalCalibrationBiasDisplay
from ._coverage import IntervalCoverageDisplay
from ._pit import PITHistogramDisplay
from ._quantile import QuantileCalibrationDisplay

__all__ = ["LocalCalibrationBiasDisplay"]
__all__ += ["PITHistogramDisplay", "QuantileCalibrationDisplay", "IntervalCoverageDisplay"]
__all__ += ["ReliabilityDisplay", "SmoothReliabilityDisplay"]
