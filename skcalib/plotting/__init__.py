"""Displays in scikit-learn's style: ``from_predictions``, ``from_estimator``, ``plot(ax=...)``.

Every Display stores the data of its plot (computed by :mod:`skcalib.metrics`), draws them with
``plot`` and keeps the artists it made, so that several models can share one axis (pass the same
``ax``) and tests can check what was drawn. Matplotlib is an optional dependency
(``pip install 'skcalib[plot]'``), imported only when a Display draws.

* :class:`LocalCalibrationBiasDisplay` -- local calibration bias against an audit feature.
"""

from ._local import LocalCalibrationBiasDisplay

__all__ = ["LocalCalibrationBiasDisplay"]
