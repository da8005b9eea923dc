"""The recalibrators by name: ``recalibrator="dirichlet"`` is :class:`DirichletCalibration`.

:data:`CLASSIFIER_RECALIBRATORS` and :data:`REGRESSOR_RECALIBRATORS` map each name that
:class:`~skcalib.recalibration.RecalibratedClassifier` and
:class:`~skcalib.recalibration.RecalibratedRegressor` accept to its class (plain dicts: the class
that a name means is read here). :func:`recalibrator_class` resolves a name (with a
suggestion for a mistyped one); :func:`method_names` lists the recalibration methods of a registry
(each class once, without ``"none"``), as the command-line demo tries them. A new recalibrator
is registered by adding its name here.
"""

from .._validation import did_you_mean
from ._binary_maps import BetaCalibration, PlattScaling
from ._conformal import ConformalQuantileRecalibration
from ._binning_maps import HistogramBinning, IsotonicCalibration, ScalingBinning
from ._distribution import DistributionTemperatureScaling
from ._identity import DistributionIdentityRecalibration, IdentityRecalibration
from ._linear_maps import DirichletCalibration, MatrixScaling, VectorScaling
from ._quantile import QuantileRecalibration
from ._spread import SpreadScaling
from ._temperature import TemperatureScaling
from ._venn_abers import VennAbers

__all__ = ["CLASSIFIER_RECALIBRATORS", "REGRESSOR_RECALIBRATORS", "IDENTITIES",
           "DISTRIBUTION_RECALIBRATORS", "method_names", "recalibrator_class"]

#: ``recalibrator=`` of ``RecalibratedClassifier`` by name: name -> class. ``"sigmoid"``
#: and ``"isotonic"`` are scikit-learn's names (``CalibratedClassifierCV(method=...)``);
#: ``"none"`` is no recalibration (the model's own probabilities, for a grid's baseline).
CLASSIFIER_RECALIBRATORS = {
    "temperature": TemperatureScaling,
    "platt": PlattScaling,
    "sigmoid": PlattScaling,
    "beta": BetaCalibration,
    "vector": VectorScaling,
    "matrix": MatrixScaling,
    "dirichlet": DirichletCalibration,
    "isotonic": IsotonicCalibration,
    "histogram": HistogramBinning,
    "scaling_binning": ScalingBinning,
    "venn_abers": VennAbers,
    "none": IdentityRecalibration,
}
#: ``recalibrator=`` of ``RecalibratedRegressor`` by name: name -> class.
REGRESSOR_RECALIBRATORS = {
    "temperature": DistributionTemperatureScaling,
    "quantile": QuantileRecalibration,
    "cqr": ConformalQuantileRecalibration,
    "spread": SpreadScaling,
    "none": DistributionIdentityRecalibration,
}

#: The recalibrators that change nothing: the meta-estimators then fit the model once, on all
#: the data, so that ``recalibrator="none"`` gives exactly the model's own predictions.
IDENTITIES = (IdentityRecalibration, DistributionIdentityRecalibration)

#: skcalib's recalibrators of predictive distributions (refused by RecalibratedClassifier).
DISTRIBUTION_RECALIBRATORS = tuple(dict.fromkeys(REGRESSOR_RECALIBRATORS.values()))


def method_names(registry, family=None):
    """The names of ``registry`` that are recalibration methods: each class once, under its first
    name (so without scikit-learn's alias ``"sigmoid"``), and without ``"none"``.

    A method that recalibrates one form of predictions only says so in its class attribute
    ``_families`` (``SpreadScaling``: ``("Empirical",)``; ``ConformalQuantileRecalibration``:
    ``("Quantiles",)``); it is listed only when ``family`` names one of them. The default list
    is thus the methods for parametric predictions such as the Normal ones on which the
    command-line demo tries them (not every method of the list takes every family:
    temperature scaling has no form for ``Empirical`` or ``Quantiles``).

    Parameters
    ----------
    registry : dict
        :data:`CLASSIFIER_RECALIBRATORS` or :data:`REGRESSOR_RECALIBRATORS`.
    family : str, default=None
        The class name of the predictions' family (``"Empirical"``, ``"Quantiles"``, ...), to
        include the methods restricted to it.

    Returns
    -------
    list of str
    """
    seen, names = set(), []
    for name, cls in registry.items():
        only = getattr(cls, "_families", None)
        if only is not None and family not in only:
            continue
        if cls not in seen and cls not in IDENTITIES:
            seen.add(cls)
            names.append(name)
    return names


def recalibrator_class(name, registry, kind="classifier"):
    """The recalibrator class registered under ``name`` (a ``ValueError`` listing the names, with
    the closest one for a mistyped name)."""
    if name not in registry:
        raise ValueError(f"recalibrator={name!r} is not a {kind} recalibrator name; use one of "
                         f"{sorted(registry)} or an estimator instance."
                         + did_you_mean(name, registry))
    return registry[name]
