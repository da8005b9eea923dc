"""Recalibration: temperature scaling of classifiers and of predictive distributions.

* :class:`TemperatureScaling` -- ``softmax(logits / T)`` for a classifier's logits or
  probabilities; the exact NLL optimum by a safeguarded Newton method on the inverse temperature
  (the NLL is convex in it), or the SKCE as objective.
* :class:`PlattScaling`, :class:`BetaCalibration` -- logistic regression on each class's
  log-odds (Platt 1999, optionally with his smoothed targets) or on ``[ln s, -ln(1 - s)]`` (Kull,
  Silva Filho and Flach 2017), one-vs-rest and renormalised for more than two classes.
* :class:`VectorScaling`, :class:`MatrixScaling`, :class:`DirichletCalibration` -- multinomial
  logistic maps of the logits (diagonal or full ``W``) or log-probabilities (Kull et al. 2019),
  with L2 or ODIR regularisation, fitted by Newton's method.
* :class:`IsotonicCalibration`, :class:`HistogramBinning`, :class:`ScalingBinning` -- isotonic
  regression (scikit-learn's ties and interpolation) and histogram binning (Zadrozny and Elkan)
  of each class's probability, one-vs-rest and renormalised; scaling-binning (Kumar, Liang and
  Ma 2019) with the debiased estimate of its L2 calibration error.
* :class:`VennAbers` -- inductive Venn--Abers predictors (Vovk and Petej 2014): the
  multiprobability interval ``(p0, p1)`` and the merged probability, exact and fast (tabulated
  at fit, binary search at predict); one-vs-rest with normalisation for multiclass.
* :class:`DistributionTemperatureScaling` -- Definition F.1 of Widmann et al. (2021) for the
  families of :mod:`skcalib.distributions` (Normal and MultivariateNormal: covariance times ``T``;
  Laplace: scale times ``T``; mixtures component-wise), with closed-form NLL optima.
* :class:`QuantileRecalibration` -- Kuleshov et al. (2018): a monotone map of the PIT (isotonic
  regression of its empirical CDF) for univariate predictive distributions.
* :class:`ConformalQuantileRecalibration` -- conformalized quantile regression (Romano,
  Patterson and Candes 2019): the central intervals of ``Quantiles`` predictions, or given
  interval bounds, corrected to a finite-sample marginal coverage guarantee.
* :class:`SpreadScaling` -- the members of an ``Empirical`` ensemble moved away from (or
  toward) their mean by one factor, fitted by the exact CRPS optimum or the Gaussian NLL.
* :class:`RecalibratedClassifier`, :class:`RecalibratedRegressor` -- cross-fitted
  meta-estimators (like :class:`sklearn.calibration.CalibratedClassifierCV`), also for
  :class:`~sklearn.frozen.FrozenEstimator`.
* :class:`IdentityRecalibration`, :class:`DistributionIdentityRecalibration` -- no
  recalibration (``recalibrator="none"``), the baseline of a grid over recalibrators.
* :class:`PredictionTransformer` -- a model's logits, probabilities or distributions as a
  pipeline step, so that a recalibrator can follow it in a :class:`~sklearn.pipeline.Pipeline`.
"""

from ._binary_maps import BetaCalibration, PlattScaling
from ._binning_maps import HistogramBinning, IsotonicCalibration, ScalingBinning
from ._temperature import TemperatureScaling
from ._distribution import DistributionTemperatureScaling
from ._identity import DistributionIdentityRecalibration, IdentityRecalibration
from ._linear_maps import DirichletCalibration, MatrixScaling, VectorScaling
from ._meta import PredictionTransformer, RecalibratedClassifier, RecalibratedRegressor
from ._quantile import QuantileRecalibration
from ._venn_abers import VennAbers
from ._conformal import ConformalQuantileRecalibration
from ._spread import SpreadScaling

# The recalibrators by name, for the command line (not public API: not in __all__).
from ._registry import CLASSIFIER_RECALIBRATORS, REGRESSOR_RECALIBRATORS, method_names

__all__ = [
    "TemperatureScaling",
    "VennAbers",
    "IsotonicCalibration",
    "HistogramBinning",
    "ScalingBinning",
    "PlattScaling",
    "BetaCalibration",
    "DistributionTemperatureScaling",
    "RecalibratedClassifier",
    "RecalibratedRegressor",
    "PredictionTransformer",
    "QuantileRecalibration",
    "VectorScaling",
    "MatrixScaling",
    "DirichletCalibration",
    "IdentityRecalibration",
    "DistributionIdentityRecalibration",
    "ConformalQuantileRecalibration",
    "SpreadScaling",
]
