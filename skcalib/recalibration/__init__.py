"""Recalibration: temperature scaling of classifiers and of predictive distributions.

* :class:`TemperatureScaling` -- ``softmax(logits / T)`` for a classifier's logits or
  probabilities; the exact NLL optimum by a safeguarded Newton method on the inverse temperature
  (the NLL is convex in it), or the SKCE as objective.
* :class:`DistributionTemperatureScaling` -- Definition F.1 of Widmann et al. (2021) for the
  families of :mod:`skcalib.distributions` (Normal and MultivariateNormal: covariance times ``T``;
  Laplace: scale times ``T``; mixtures component-wise), with closed-form NLL optima.
* :class:`RecalibratedClassifier`, :class:`RecalibratedRegressor` -- cross-fitted
  meta-estimators (like :class:`sklearn.calibration.CalibratedClassifierCV`), also for
  :class:`~sklearn.frozen.FrozenEstimator` and ``cv="prefit"``.
* :class:`PredictionTransformer` -- a model's logits, probabilities or distributions as a
  pipeline step, so that a recalibrator can follow it in a :class:`~sklearn.pipeline.Pipeline`.
"""

from ._classifier import TemperatureScaling
from ._distribution import DistributionTemperatureScaling
from ._meta import PredictionTransformer, RecalibratedClassifier, RecalibratedRegressor

__all__ = [
    "TemperatureScaling",
    "DistributionTemperatureScaling",
    "RecalibratedClassifier",
    "RecalibratedRegressor",
    "PredictionTransformer",
]
